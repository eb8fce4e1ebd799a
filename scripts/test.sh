#!/usr/bin/env bash
# Installs what is missing, builds with ASan+UBSan and warnings as errors (the dev preset),
# runs the whole test suite with ctest, then every fuzz target under libFuzzer for a short,
# bounded time (scripts/fuzz.sh; SERVESIM_FUZZ_SECONDS, default 15 s each; 0 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --workflow --preset dev
secs=${SERVESIM_FUZZ_SECONDS:-15}
if [ "$secs" != 0 ]; then
  bash scripts/fuzz.sh "$secs"
fi
