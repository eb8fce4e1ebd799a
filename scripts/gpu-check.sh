#!/usr/bin/env bash
# gpu-check — one command that shows, on a machine with an NVIDIA GPU, whether
# servesim-calibrate measures what a GPU serving engine sees (docs/calibrate.md, "GPU check"):
#
#  1. every layer of the six networks (ResNet-50, Inception-V3, DenseNet-121, MobileNetV2,
#     VGG-16, BERT-base) against the reference at PRECISION, fused as measure runs them
#     (run in parallel on the host's cores: the reference is plain loops);
#  2. per network and batch size 1-32, the back-to-back median of a pass as one CUDA graph
#     (the default) and, where ANCHOR is given, PyTorch's CUDA-graph replay of the same network
#     on the same kind of GPU, with the ratio and each network's l(32)/l(1);
#  3. ResNet-50 measured serving-like into a zoo, and `validate` against a real FIFO server on
#     the GPU (max batch 8, loads 0.2-0.9, REQUESTS requests each): the profile's mean error;
#  4. the table again with each pass issued eagerly (--exec eager) beside it;
#  5. decoders (docs/calibrate.md, "Decoders"; at most about 4 minutes on one H100): the fp16
#     GPU runtime's logits against the reference (tiny_llama, tiny_qwen); DECODER (llama_3_8b)
#     measured (operators, the profile, GEMMs against the datasheet's tensor peak, decode
#     iterations against its memory bandwidth, whole mixed iterations against the profile);
#     and llm-validate: the real continuous-batching server against the simulator at three loads.
#
#   scripts/gpu-check.sh [OUTDIR]      (default: gpu-check.out; everything is also written there)
#
# Environment: CALIBRATE (the binary; default: the release build's, built if missing),
# ANCHOR (pytorch_anchor.json: {"nets": {NET: {BATCH: {"graph": {"median": MS}}}}}; default
# experiments/h100/pytorch_anchor.json, measured on an H100), PRECISION (fp16),
# NETS, BATCHES (1,2,4,8,16,32), REPS (50), REQUESTS (5000), DEVICE (0), TOL (0.02: the fit
# tolerance of the validated zoo; the measured table past it), SKIP_CHECK=1, ZOO (a
# zoo holding resnet50 to validate instead of measuring one here), PARTS ("cnn llm": the
# networks' steps 1-4 and the decoders' step 5; either alone), DECODER (llama_3_8b),
# LLM_REPS (5 timed rounds), LLM_LOADS (0.3,0.5,0.7), LLM_REQUESTS (200 a load).
# Exit codes: 0 every check ran (read the verdicts), 77 no usable GPU or no cuDNN backend,
# 1 a step failed (its output says which).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-gpu-check.out}
PRECISION=${PRECISION:-fp16}
PARTS=${PARTS:-"cnn llm"}
DECODER=${DECODER:-llama_3_8b}
LLM_REPS=${LLM_REPS:-5}
LLM_LOADS=${LLM_LOADS:-0.3,0.5,0.7}
LLM_REQUESTS=${LLM_REQUESTS:-200}
NETS=${NETS:-"resnet50 inceptionv3 densenet121 mobilenetv2 vgg16 bert_base"}
BATCHES=${BATCHES:-1,2,4,8,16,32}
REPS=${REPS:-50}
REQUESTS=${REQUESTS:-5000}
TOL=${TOL:-0.02}   # the zoo's fit tolerance: graph passes bend; past it the measured table
DEVICE=${DEVICE:-0}
C=${CALIBRATE:-$here/build/release/calibrate/servesim-calibrate}
ANCHOR=${ANCHOR:-$here/experiments/h100/pytorch_anchor.json}
[ -f "$ANCHOR" ] || ANCHOR=""
mkdir -p "$OUT"
if [ ! -x "$C" ]; then
    (cd "$here" && cmake --preset release > /dev/null && cmake --build --preset release) || exit 1
fi
if ! "$C" backends | grep -qw cudnn; then
    echo "gpu-check: this build has no cuDNN backend (install the CUDA toolkit and cuDNN, rebuild)" >&2
    exit 77
fi
rc=0
"$C" check tiny_cnn --backend cudnn --device "$DEVICE" > "$OUT/check_tiny_cnn.txt" 2>&1 || rc=$?
if [ "$rc" = 77 ]; then
    tail -1 "$OUT/check_tiny_cnn.txt" >&2
    echo "gpu-check: no usable GPU here; nothing measured" >&2
    exit 77
fi
fail=0
[ "$rc" = 0 ] || { echo "gpu-check: check tiny_cnn (fp32) failed:"; tail -3 "$OUT/check_tiny_cnn.txt"; fail=1; }
"$C" backends | tail -1
echo "precision $PRECISION, batches $BATCHES, $REPS passes each; output in $OUT"

# the networks' steps, 1-4 (PARTS cnn)
cnn_section() {
# 1. layers against the reference, in the background (CPU-bound reference)
pids=()
if [ "${SKIP_CHECK:-0}" != 1 ]; then
    for net in $NETS; do
        "$C" check "$net" --backend cudnn --device "$DEVICE" --precision "$PRECISION" --batch 1 \
            > "$OUT/check_$net.txt" 2>&1 &
        pids+=($!)
    done
fi

# 2. each network as one CUDA graph, against PyTorch's replay
measure_all() { # EXEC
    for net in $NETS; do
        "$C" measure "$net" --backend cudnn --device "$DEVICE" --precision "$PRECISION" \
            --batches "$BATCHES" --reps "$REPS" --warmup 5 --exec "$1" \
            > "$OUT/measure_${net}_$1.txt" 2>&1 ||
            { echo "gpu-check: measure $net --exec $1 failed:"; tail -3 "$OUT/measure_${net}_$1.txt"; fail=1; }
    done
}
table() {
    python3 - "$OUT" "$ANCHOR" $NETS <<'EOF'
import json, re, sys
out, anchor, nets = sys.argv[1], sys.argv[2], sys.argv[3:]
anc = json.load(open(anchor))["nets"] if anchor else {}
def medians(path):
    got, on = {}, False
    try:
        for line in open(path):
            if "median ms" in line:
                on = True
                continue
            m = re.match(r"\s+(\d+)\s+([\d.]+)\s", line)
            if on and m:
                got[int(m.group(1))] = float(m.group(2))
            elif on and line.strip() and not m:
                on = False
    except OSError:
        pass
    return got
print("\nmedian ms per pass, back to back (graph: servesim-calibrate's default; eager: --exec eager;"
      "\npytorch: CUDA-graph replay from %s)" % (anchor or "no ANCHOR given"))
print("%-12s %5s %9s %9s %9s %12s" % ("network", "batch", "graph", "eager", "pytorch", "graph/pytorch"))
worst, rows = 0.0, []
for net in nets:
    g, e = medians(f"{out}/measure_{net}_graph.txt"), medians(f"{out}/measure_{net}_eager.txt")
    for b in sorted(g):
        p = anc.get(net, {}).get(str(b), {}).get("graph", {}).get("median")
        r = g[b] / p if p else None
        worst = max(worst, r or 0)
        print("%-12s %5d %9.3f %9s %9s %12s" % (net, b, g[b], "%.3f" % e[b] if b in e else "-",
              "%.3f" % p if p else "-", "%.2fx" % r if r else "-"))
    if 1 in g and 32 in g:
        pa = anc.get(net, {})
        pr = (pa["32"]["graph"]["median"] / pa["1"]["graph"]["median"]) if "1" in pa and "32" in pa else None
        rows.append((net, g[32] / g[1], pr))
print("\nl(32)/l(1): " + "; ".join("%s %.2f (pytorch %s)" % (n, a, "%.2f" % p if p else "-") for n, a, p in rows))
if anc:
    print("worst graph/pytorch: %.2fx (the aim: at or under 1.0x; the bar: 1.25x)" % worst)
EOF
}
measure_all graph
table

# 3. serving-like zoo for ResNet-50 (or ZOO) and the real server against the simulator
zoo=${ZOO:-$OUT/zoo_resnet50.json}
if [ -z "${ZOO:-}" ]; then
    "$C" measure resnet50 --backend cudnn --device "$DEVICE" --precision "$PRECISION" \
        --batches "$BATCHES" --serving 0.5 --reps 100 --warmup 5 --tol "$TOL" --out "$zoo" \
        --zoo-name gpu-check > "$OUT/serving_resnet50.txt" 2>&1 ||
        { echo "gpu-check: serving measure failed:"; tail -3 "$OUT/serving_resnet50.txt"; fail=1; }
fi
if [ -f "$zoo" ]; then
    rm -f "$OUT/validate_resnet50.tsv"
    "$C" validate resnet50 --backend cudnn --device "$DEVICE" --precision "$PRECISION" \
        --zoo "$zoo" --max-batch 8 --loads 0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9 \
        --requests "$REQUESTS" --tsv "$OUT/validate_resnet50.tsv" > "$OUT/validate_resnet50.txt" 2>&1 ||
        { echo "gpu-check: validate failed:"; tail -3 "$OUT/validate_resnet50.txt"; fail=1; }
    echo; echo "validate resnet50 (max batch 8, $REQUESTS requests per load):"
    cat "$OUT/validate_resnet50.txt"
fi

# 4. the same passes issued eagerly, for comparison
measure_all eager
table

if [ ${#pids[@]} -gt 0 ]; then
    echo; echo "check, $PRECISION, batch 1 (every materialised layer against the reference):"
    for i in "${!pids[@]}"; do
        wait "${pids[$i]}" || fail=1
    done
    for net in $NETS; do
        tail -1 "$OUT/check_$net.txt"
    done
fi
}

# 5. decoders: the GPU runtime's logits, DECODER's operators and profile, the real server
llm_section() {
    echo; echo "== decoders: the fp16 GPU runtime's logits against the reference"
    for dec in tiny_llama tiny_qwen; do
        "$C" check "$dec" --backend cudnn --device "$DEVICE" > "$OUT/llm_check_$dec.txt" 2>&1 ||
            { echo "gpu-check: check $dec failed:"; fail=1; }
        tail -1 "$OUT/llm_check_$dec.txt"
    done
    local prof="$OUT/llm_profile_$DECODER.json"
    rm -f "$prof"                       # never validate an earlier run's profile
    echo; echo "== $DECODER: operators, the profile, GEMMs and decode iterations against the datasheet, whole iterations"
    if ! "$C" llm-measure "$DECODER" --backend cudnn --device "$DEVICE" --warmup 1 --reps "$LLM_REPS" \
        --tokens 1,2,4,8,15,16,17,32,63,64,65,128,129,256,257,384,512,1024,2048 \
        --out "$prof" > "$OUT/llm_measure_$DECODER.txt" 2> "$OUT/llm_measure_$DECODER.err"; then
        echo "gpu-check: llm-measure $DECODER failed:"; tail -3 "$OUT/llm_measure_$DECODER.err"
        fail=1
        return 0
    fi
    cat "$OUT/llm_measure_$DECODER.txt"
    echo; echo "== $DECODER: the real continuous-batching server against the simulator"
    rm -f "$OUT/llm_validate_$DECODER.tsv"
    "$C" llm-validate "$DECODER" --backend cudnn --device "$DEVICE" --profile "$prof" \
        --loads "$LLM_LOADS" --requests "$LLM_REQUESTS" --tsv "$OUT/llm_validate_$DECODER.tsv" \
        --table-out "$OUT/llm_iterations_$DECODER.tsv" > "$OUT/llm_validate_$DECODER.txt" 2>&1 ||
        { echo "gpu-check: llm-validate $DECODER failed:"; fail=1; }
    cat "$OUT/llm_validate_$DECODER.txt"
}

case " $PARTS " in *" cnn "*) cnn_section ;; esac
case " $PARTS " in *" llm "*) llm_section ;; esac
exit $fail
