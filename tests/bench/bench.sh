#!/usr/bin/env bash
# Throughput and memory benchmark (not a timed test): Symphony on 64 GPUs x the 35-model
# 1080Ti zoo, Poisson arrivals at about goodput load. Runs each duration REPS times in
# separate processes (peak RSS is per process) and prints the median of each figure, with the
# time series sampled every second and with it off (it is output, and grows with duration).
# usage: tests/bench/bench.sh [SERVESIM] [REPS]      (build the release preset first)
set -euo pipefail
bin=${1:-build/release/servesim}
reps=${2:-3}
printf '%-8s %-7s %12s %14s %14s %12s %9s %9s\n' duration sample requests req_per_s events_per_s peak_rss_kb bad_rate ts_points
for sample in 1 0; do
for dur in 60 600; do
  for i in $(seq "$reps"); do "$bin" bench --duration "$dur" --sample "$sample" --json; done |
    python3 -c '
import json, statistics, sys
rows = [json.loads(l) for l in sys.stdin]
med = lambda k: statistics.median(r[k] for r in rows)
print("%-8s %-7s %12d %14.0f %14.0f %12d %9.4f %9d" % (sys.argv[1], sys.argv[2], med("requests"),
      med("requests_per_s"), med("events_per_s"), med("peak_rss_kb"), med("bad_rate"),
      med("timeseries_points")))' "$dur" "$sample"
done
done
