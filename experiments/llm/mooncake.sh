#!/usr/bin/env bash
# experiments/llm/mooncake.sh TRACE_DIR [SERVESIM] — table (f) of experiments/llm/README.md:
# Mooncake's conversation trace (TRACE_DIR/mooncake/conversation_trace.jsonl, fetched by
# scripts/download-traces.sh) on 8 H100s, under each router with prefix caching on and off, at
# the trace's rate and twice it; and the share of prompt tokens an unbounded cache on one
# replica would find (the most any router can reach), computed from the trace alone. About 20 s.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: mooncake.sh TRACE_DIR [SERVESIM]}
S=${2:-$here/../../build/release/servesim}
trace=$dir/mooncake/conversation_trace.jsonl
[ -s "$trace" ] || { echo "mooncake.sh: $trace not found (scripts/download-traces.sh $dir)" >&2; exit 2; }
python3 - "$trace" <<'PY'
import json, sys
# block k of 16 tokens is cached if an earlier request had the id of the 512-token block
# holding its last token (servesim's key, docs/llm.md); at most (P - 1) / 16 blocks a request
seen, asked, found = set(), 0, 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    p, ids = r["input_length"], r["hash_ids"]
    k = 0
    while k < (p - 1) // 16 and (k + 1) * 16 <= len(ids) * 512 and ids[k * 16 // 512] in seen:
        k += 1
    asked, found = asked + p, found + 16 * k
    seen.update(ids)
print("an unbounded cache on one replica would find %.1f%% of the prompt tokens" % (100 * found / asked))
PY
echo "| trace rate | router | prefix caching | tokens found cached | TTFT p50 / p99 ms | TPOT p50 / p99 ms | on time |"
echo "|---|---|---|---|---|---|---|"
for ts in 1 2; do
  for router in round_robin least_tokens kv_util prefix; do
    for pc in true false; do
      "$S" run "$here/mooncake_conv_h100.json" --trace-dir "$dir" --no-db --json \
        --set workload.trace.time_scale=$ts --set duration_s=$((3600 / ts)) \
        --set policy.params.router=$router --set policy.params.enable_prefix_caching=$pc 2>/dev/null |
        python3 -c "
import json, sys
m = json.load(sys.stdin)['models'][0]
hit = '%.1f%%' % (100 * m['prefix_hit_rate']) if m['prefix_hit_rate'] is not None else 'off'
print('| %dx | %s | %s | %s | %.0f / %.0f | %.1f / %.1f | %.1f%% |' % ($ts, '$router', '$pc', hit,
      m['ttft_p50_ms'], m['ttft_p99_ms'], m['tpot_p50_ms'], m['tpot_p99_ms'],
      100 * m['on_time'] / m['offered']))"
    done
  done
done
