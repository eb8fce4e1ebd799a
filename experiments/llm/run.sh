#!/usr/bin/env bash
# experiments/llm/run.sh [SERVESIM] — the tables of experiments/llm/README.md: Llama-3-8B on
# 4 H100s (roofline estimate), chat-like lengths, under vLLM v1's scheduler (a) as the load
# rises, with the default budget, chunked and not; (b) Sarathi-Serve's small chunks against
# whole prompts; (d) goodput colocated against disaggregated. About 10 s on one core.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
S=${1:-$here/../../build/release/servesim}
cfg=$here/llama8b_h100.json
row() { # LABEL SETS...
  local label=$1; shift
  "$S" run "$cfg" --no-db --json "$@" 2>/dev/null | python3 -c "
import json, sys
d = json.load(sys.stdin); m = d['models'][0]
print('| %s | %.1f / %.1f | %.2f / %.2f | %.1f | %d | %.2f | %.1f |' % ('$label',
      m['ttft_p50_ms'], m['ttft_p99_ms'], m['tpot_p50_ms'], m['tpot_p99_ms'], m['itl_p99_ms'],
      m['preemptions'], m['kv_util_mean'], d['ontime_rps']))"
}
head='| setting | TTFT p50 / p99 ms | TPOT p50 / p99 ms | ITL p99 ms | preemptions | KV use | on time req/s |
|---|---|---|---|---|---|---|'
echo "(a) load, default budget (8192 tokens, 1024 sequences)"
echo "$head"
for chunk in true false; do
  for r in 40 80 120 160 200; do
    row "$r req/s, chunked $chunk" --set workload.rate_rps=$r \
        --set policy.params.enable_chunked_prefill=$chunk
  done
done
echo
echo "(b) chunked prefill with a small budget (Sarathi-Serve) against whole prompts"
echo "$head"
for r in 40 80 120; do
  row "$r req/s, chunks of 512" --set workload.rate_rps=$r --set policy.params.max_num_batched_tokens=512
  row "$r req/s, chunks of 2048" --set workload.rate_rps=$r --set policy.params.max_num_batched_tokens=2048
  row "$r req/s, whole prompts" --set workload.rate_rps=$r --set policy.params.enable_chunked_prefill=false
done
echo
echo "(d) goodput at 90% attainment: colocated (vllm) against disaggregated (distserve, 2 + 2)"
echo "| TPOT SLO | vllm, chunked | vllm, whole prompts | distserve |"
echo "|---|---|---|---|"
gp() { "$S" goodput "$cfg" --no-db --set metrics.percentile=90 "$@" 2>/dev/null |
       awk '/^goodput:/{print $2}'; }
for tpot in 15 25 50; do
  echo "| $tpot ms | $(gp --set models[0].llm.tpot_slo_ms=$tpot) | $(gp --set models[0].llm.tpot_slo_ms=$tpot --set policy.params.enable_chunked_prefill=false) | $(gp --set models[0].llm.tpot_slo_ms=$tpot --set policy.name=distserve) |"
done
