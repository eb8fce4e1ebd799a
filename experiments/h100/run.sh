#!/usr/bin/env bash
# experiments/h100/run.sh — goodput of 8 H100s serving the six calibrated networks (SLO 50 ms,
# Poisson, Zipf 0.9) under Symphony, Nexus and Clockwork, with the profiles a serving engine
# sees (workloads/zoo/h100_fp16_graph.json: each pass one CUDA graph, fused, NHWC) and with
# the profiles of the same GPU issued layer by layer (h100_fp16_eager.json), and the ratio:
# how many times the GPUs an eager-profiled capacity plan would ask for. Prints the README's
# table (Markdown). About 30 s on 2 cores.
#
#   experiments/h100/run.sh [SERVESIM]      (default: the release build's binary)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
S=${1:-$here/../../build/release/servesim}
echo "| policy | goodput, graph profiles (req/s) | goodput, eager profiles (req/s) | graph / eager |"
echo "|---|---|---|---|"
for p in symphony nexus clockwork; do
    row=()
    for z in h100_fp16_graph h100_fp16_eager; do
        row+=("$("$S" goodput "$here/goodput.json" --no-db --json --set policy.name=$p \
                   --set "models[0].zoo=$z" 2>/dev/null |
                 python3 -c 'import json,sys; print(json.load(sys.stdin)["goodput_rps"])')")
    done
    python3 -c "import sys; g, e = map(float, sys.argv[2:]); print(f'| {sys.argv[1]} | {g:,.0f} | {e:,.0f} | {g / e:.1f}x |')" \
        "$p" "${row[0]}" "${row[1]}"
done
