#!/usr/bin/env bash
# experiments/paper/run.sh — the Symphony paper's evaluation in one command: runs every sweep
# of this folder (one per figure or table of its sections 3 and 5) into a results database,
# the Table 2 statistical simulation, checks every claim of shared/specs/symphony-evaluation.md
# (claims.py) into README.md's claim table, and draws the figures into figures/.
#
#   experiments/paper/run.sh [--db FILE] [-j N] [--servesim BIN] [--no-readme] [--no-plots]
#
# --db FILE     results database (default paper.db in the current folder; an interrupted run
#               resumes: finished points are kept)
# -j N          worker processes per sweep (default: the number of cores)
# --servesim    the binary (default build/release/servesim, else build/dev/servesim)
# --no-readme   print the claim table instead of writing it into README.md
# --no-plots    skip the figures
# About 7 minutes on the 2-core development machine (release build).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
db=paper.db bin="" jobs=$(nproc 2>/dev/null || echo 2) readme=1 plots=1
while [ $# -gt 0 ]; do
  case $1 in
    --db) db=$2; shift ;;
    -j) jobs=$2; shift ;;
    --servesim) bin=$2; shift ;;
    --no-readme) readme=0 ;;
    --no-plots) plots=0 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
# shellcheck source=../../scripts/find-servesim.sh
. "$root/scripts/find-servesim.sh"
bin=$(find_servesim "$root" "$bin") || exit 1

sweeps=(single_model nexus_frontends mixed_zoo_1080ti mixed_zoo_a100 resnet20_slo
        resnet10_load resnet10_controller gpus_scaling network_latency)
for s in "${sweeps[@]}"; do
  t0=$(date +%s)
  "$bin" sweep "$here/$s.sweep.json" --db "$db" -j "$jobs" --quiet
  echo "run.sh: $s done in $(( $(date +%s) - t0 )) s" >&2
done
t2=$(mktemp)
trap 'rm -f "$t2"' EXIT
python3 "$here/table2.py" --windows 1000 > "$t2"
if [ $readme = 1 ]; then
  python3 "$here/claims.py" --db "$db" --table2 "$t2" --readme "$here/README.md"
  echo "run.sh: claim table written into $here/README.md" >&2
else
  python3 "$here/claims.py" --db "$db" --table2 "$t2"
fi
if [ $plots = 1 ]; then
  out="$here/figures"
  mkdir -p "$out"
  p() { "$bin" plot "$@" --db "$db" --out "$out" > /dev/null; }
  p goodput --name fig1_nexus_frontends --prefix fig1-nexus-frontends
  p goodput --name fig6_mixed_zoo_1080ti --prefix fig6-1080ti --ratio
  p goodput --name fig6_mixed_zoo_a100 --prefix fig6-a100 --ratio
  p goodput-slo --name fig7_resnet20_slo --prefix fig7
  p goodput --name table4_single_model --prefix table4
  p batch-hist --name table4_single_model --prefix fig8
  p queue-cdf --name table4_single_model --prefix fig9
  p goodput-vs --x workload.rate_rps --name fig10_resnet10_load --prefix fig10
  p goodput-gpus --name fig11_gpus_scaling --prefix fig11
  p goodput-slo --name fig13_network_latency --prefix fig13
  # only the PNGs are kept in the repository; the .svg and .dat sit beside them
  echo "run.sh: figures in $out" >&2
fi
