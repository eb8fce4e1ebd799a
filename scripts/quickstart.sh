#!/usr/bin/env bash
# Installs what is missing, builds servesim (release) and runs the quickstart experiment:
# Symphony on 16 simulated GTX 1080Ti GPUs, 8 models from the shipped zoo, Poisson arrivals.
# Prints the result table, then what the results database holds.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release > /dev/null
cmake --build --preset release
db=${SERVESIM_DB:-build/quickstart.db}
./build/release/servesim run --db "$db"
echo
echo "results database $db (schema: docs/results.md):"
sqlite3 -header -column "$db" \
  "SELECT id, name, policy, seed, round(offered_rps, 1) AS offered_rps,
          round(bad_rate, 4) AS bad_rate, slo_met, round(wall_s, 3) AS wall_s
     FROM runs ORDER BY id DESC LIMIT 5;"
