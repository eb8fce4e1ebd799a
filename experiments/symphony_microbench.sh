#!/usr/bin/env bash
# Symphony microbenchmarks (paper Table 3 dimensions): goodput of the non-work-conserving
# scheduler vs its work-conserving variant, one dimension at a time. Prints one table row per
# point: dimension, value, goodput (nwc), goodput (wc), ratio.
# usage: experiments/symphony_microbench.sh [SERVESIM] [DURATION_S]
set -euo pipefail
bin=$(realpath "${1:-$(dirname "$0")/../build/release/servesim}")
cd "$(dirname "$0")"
dur=${2:-10}
goodput() { "$bin" goodput "$@" --no-db --set duration_s="$dur" --json |
            sed 's/.*"goodput_rps":\([0-9.e+-]*\).*/\1/'; }
row() {  # dimension value config sets...
  local dim=$1 val=$2 cfg=$3
  shift 3
  local a b
  a=$(goodput "$cfg" "$@")
  b=$(goodput "$cfg" "$@" --set policy.params.work_conserving=true)
  printf '%-10s %-14s %10.1f %10.1f %6.3f\n' "$dim" "$val" "$a" "$b" "$(echo "$a / $b" | bc -l)"
}
printf '%-10s %-14s %10s %10s %6s\n' dimension value nwc_rps wc_rps ratio
for slo in 20 25 30 40 50; do
  sets=()
  for i in $(seq 0 7); do sets+=(--set "models[$i].slo_ms=$slo"); done
  row slo_ms "$slo" symphony_slo.json "${sets[@]}"
done
for k in 0.1 0.2 0.3 0.5 0.7 1.0; do
  row gamma "$k" symphony_burstiness.json --set workload.arrival.shape="$k"
done
# name alpha beta slo: BERT (beta/alpha 0.02), ResNet50V2 (4.2), DenseNet121 (9.7), NASNetMobile (25)
for spec in "bert 7.008 0.159 56" "resnet50v2 1.409 5.947 23" "densenet121 1.061 10.312 29" "nasnetmobile 0.57 14.348 33"; do
  set -- $spec
  sets=()
  for i in $(seq 0 7); do sets+=(--set "models[$i].alpha_ms=$2" --set "models[$i].beta_ms=$3" --set "models[$i].slo_ms=$4"); done
  row beta/alpha "$1" symphony_beta_alpha.json "${sets[@]}"
done
