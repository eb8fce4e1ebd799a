#!/usr/bin/env bash
# Capacity plans of the trace experiments: each trace with Symphony and with Shepherd (the
# baseline), each plan = the static GPU-count search plus one autoscaled run (the config's
# `autoscale`). Results go to the database given (default traces.db), a summary to stdout.
# usage: experiments/traces/run.sh [DB]   (SERVESIM_TRACE_DIR: a folder from scripts/download-traces.sh;
#                                            default ../shared/traces beside the checkout)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${SERVESIM:-$root/build/release/servesim}
db=${1:-traces.db}
traces=${SERVESIM_TRACE_DIR:-$root/../shared/traces}
[ -x "$bin" ] || { echo "build first: cmake --workflow --preset release" >&2; exit 2; }
for exp in wikipedia_day azure_llm_conv; do
  for policy in symphony shepherd; do
    echo "== $exp / $policy"
    "$bin" plan "$here/$exp.json" --trace-dir "$traces" --db "$db" \
      --set policy.name=$policy --set name=$exp-$policy --quiet --json
  done
done
