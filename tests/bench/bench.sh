#!/usr/bin/env bash
# Throughput and memory benchmark (not a timed test): each policy on 64 GPUs x the 35-model
# 1080Ti zoo, Poisson arrivals at about Symphony's goodput load. Runs each case REPS times in
# separate processes (peak RSS is per process) and prints the median of each figure. Speed is
# reported as a ratio to the reference batching simulator run in the same process
# (experiments/src/sim_bench.h), which shared machines' noise moves far less than absolute
# times (each process alternates run and reference 3 times, --rounds, and reports their
# medians); then Symphony's memory over 60 s and 600 s with the time series on and off.
# usage: tests/bench/bench.sh [SERVESIM] [REPS]      (build the release preset first)
set -euo pipefail
bin=${1:-build/release/servesim}
reps=${2:-3}
# median FORMAT KEY... < JSON lines: the format filled with each key's median
median() {
  python3 -c '
import json, statistics, sys
rows = [json.loads(l) for l in sys.stdin]
print(sys.argv[1] % tuple(statistics.median(r[k] for r in rows) for k in sys.argv[2:]))' "$@"
}
printf '%-10s %10s %10s %8s %9s %12s %14s %12s %9s\n' policy requests ev_per_req via_heap due_now \
  req_per_s reference_req_s speed_ratio bad_rate
for policy in symphony nexus clockwork shepherd fifo; do
  printf '%-10s ' "$policy"
  for i in $(seq "$reps"); do
    "$bin" bench --policy "$policy" --duration 60 --sample 0 --rounds 3 --json
  done | median "%10d %10.2f %8.2f %9.2f %12.0f %14.0f %12.3f %9.4f" requests events_per_request \
      heap_events_per_request same_instant_timers_per_request requests_per_s \
      reference_requests_per_s speed_ratio bad_rate
done
echo
printf '%-8s %-7s %12s %14s %12s %9s\n' duration sample requests req_per_s peak_rss_kb ts_points
for sample in 1 0; do
  for dur in 60 600; do
    printf '%-8s %-7s ' "$dur" "$sample"
    for i in $(seq "$reps"); do
      "$bin" bench --duration "$dur" --sample "$sample" --no-reference --json
    done | median "%12d %14.0f %12d %9d" requests requests_per_s peak_rss_kb timeseries_points
  done
done
