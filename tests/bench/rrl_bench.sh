#!/usr/bin/env bash
# RRL benchmark (not a timed test; issue 20): one 2,025-slot run of RRL's CPU node
# (experiments/rrl/base_cpu.json, 4,400 s at 46 req/s, ~202,000 requests) per case, REPS times
# each in separate processes; prints the median wall time, events and requests per second of
# wall time. The reference is the same node and workload under point-based Q-learning
# (radius 0: engine, node and Q table, no estimator) run in the same invocation, so the
# ratio column says what the estimator costs on this machine:
#   q_learning       radius 0 (the reference)
#   rrl_no_training  radius 2, est_steps 0: region estimates by the untrained estimator
#   rrl              radius 2, est_steps 10 (the default)
#   rrl_est50        radius 2, est_steps 50 (the spec's setting)
#   capes, deeprm    the deep-RL comparators
# usage: tests/bench/rrl_bench.sh [SERVESIM] [REPS]      (build the release preset first)
set -euo pipefail
bin=${1:-build/release/servesim}
reps=${2:-3}
cfg=$(dirname "$0")/../../experiments/rrl/base_cpu.json
# one CASE [--set ...]: "wall_s events requests" medians over REPS runs
one() {
  local name=$1
  shift
  for i in $(seq "$reps"); do
    "$bin" run "$cfg" --no-db --json "$@"
  done | python3 -c '
import json, statistics, sys
rows = [json.loads(l) for l in sys.stdin]
m = lambda f: statistics.median(f(r) for r in rows)
print(m(lambda r: r["wall_s"]), m(lambda r: r["events"]), m(lambda r: r["models"][0]["offered"]))'
}
printf '%-16s %9s %11s %10s %12s %9s\n' case wall_s events requests req_per_s vs_ref
ref=""
while read -r name sets; do
  read -r wall ev req < <(one "$name" $sets)
  ref=${ref:-$wall}
  printf '%-16s %9.2f %11.0f %10.0f %12.0f %9.1f\n' "$name" "$wall" "$ev" "$req" \
    "$(python3 -c "print($req / $wall)")" "$(python3 -c "print($wall / $ref)")"
done <<'CASES'
q_learning --set policy.params.radius=0
rrl_no_training --set policy.params.est_steps=0
rrl
rrl_est50 --set policy.params.est_steps=50
capes --set policy.name=rrl-capes
deeprm --set policy.name=rrl-deeprm
CASES
