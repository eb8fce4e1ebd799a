#!/usr/bin/env bash
# gpu-calibrate — from a checkout to a calibrated GPU zoo in one command, on a machine with an
# NVIDIA GPU, the CUDA toolkit and cuDNN: builds servesim (release), checks every cuDNN layer
# of the shipped networks against the reference implementation, measures them serving-like
# (batch sizes interleaved, idle gaps; profiles fitted on the means, with each batch size's
# service-time distribution), writes the zoo and a results database, and validates one network
# against a real serving loop on the GPU (docs/calibrate.md).
#
#   scripts/gpu-calibrate.sh [OUT.json]        (default: calibrated_gpu.json)
#
# Environment: PRECISION (fp16; fp32, tf32), NETS (the shipped CNNs and BERT-base), BATCHES
# (1,2,4,8,16,32), REPS (100 serving-like passes per batch size), LOAD (0.5), DEVICE (0),
# VALIDATE_NET (resnet50), TOL (0.02: the fits' tolerance; past it the zoo holds the measured
# table), SKIP_BUILD=1 (use the existing build), CALIBRATE (the
# servesim-calibrate binary, an absolute path; default: the release build's), PARTS ("cnn llm":
# the networks' zoo, the decoders' zoo, or either alone), DECODERS (llama_3_8b mistral_7b
# qwen2_5_7b), LLM_OUT (the decoder zoo: ${OUT%.json}_llm.json, servesim-zoo/2 with each
# decoder's measured profile inline in its `llm` section; their profiles rows in
# ${LLM_OUT%.json}.db), LLM_REPS (3 timed rounds).
# Exit codes: 0 done, 77 no usable GPU or a build without the cuDNN backend (nothing written),
# anything else a failure (a layer off the reference, a measurement error).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-calibrated_gpu.json}
PRECISION=${PRECISION:-fp16}
NETS=${NETS:-"resnet50 mobilenetv2 inceptionv3 densenet121 vgg16 bert_base"}
BATCHES=${BATCHES:-1,2,4,8,16,32}
REPS=${REPS:-100}
LOAD=${LOAD:-0.5}
DEVICE=${DEVICE:-0}
VALIDATE_NET=${VALIDATE_NET:-resnet50}
TOL=${TOL:-0.02}   # fit tolerance: passes as CUDA graphs bend, past it the measured table
C=${CALIBRATE:-build/release/calibrate/servesim-calibrate}
PARTS=${PARTS:-"cnn llm"}
DECODERS=${DECODERS:-"llama_3_8b mistral_7b qwen2_5_7b"}
LLM_OUT=${LLM_OUT:-${OUT%.json}_llm.json}
LLM_REPS=${LLM_REPS:-3}

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    cmake --preset release > /dev/null
    cmake --build --preset release
fi
if ! "$C" backends | grep -qw cudnn; then
    echo "gpu-calibrate: this build has no cuDNN backend: install the CUDA toolkit (nvcc, cuBLAS)" \
         "and cuDNN, then re-run (cmake finds them when configuring)" >&2
    exit 77
fi
rc=0
"$C" check tiny_cnn --backend cudnn --device "$DEVICE" > /dev/null || rc=$?
if [ "$rc" = 77 ]; then
    echo "gpu-calibrate: no usable GPU here (the line above says why); nothing written" >&2
    exit 77
elif [ "$rc" != 0 ]; then
    exit "$rc"
fi

cnn_part() {
echo "== checking every layer against the reference (fp32, and $PRECISION)"
for net in $NETS; do
    "$C" check "$net" --backend cudnn --device "$DEVICE" --precision fp32
    if [ "$PRECISION" != fp32 ]; then
        "$C" check "$net" --backend cudnn --device "$DEVICE" --precision "$PRECISION"
    fi
done

echo "== measuring serving-like: $NETS at batches $BATCHES, $PRECISION, load $LOAD"
# shellcheck disable=SC2086  # NETS is a list of names
"$C" measure $NETS --backend cudnn --device "$DEVICE" --precision "$PRECISION" \
    --batches "$BATCHES" --serving "$LOAD" --reps "$REPS" --warmup 5 --tol "$TOL" \
    --out "$OUT" --db "${OUT%.json}.db" --zoo-name "$(basename "${OUT%.json}")"

echo "== validating $VALIDATE_NET against a real serving loop on the GPU"
"$C" validate "$VALIDATE_NET" --backend cudnn --device "$DEVICE" --precision "$PRECISION" \
    --zoo "$OUT" --max-batch 8 --loads 0.2,0.4,0.6,0.8,0.9 --requests 5000 \
    --tsv "${OUT%.json}.validate.tsv"
echo "gpu-calibrate: wrote $OUT (zoo), ${OUT%.json}.db (profiles), ${OUT%.json}.validate.tsv"
}

# The decoders: the GPU runtime's logits against the reference (the tiny ones: the reference is
# plain loops), then each of DECODERS measured into a profile, the profiles into one zoo.
llm_part() {
    echo "== decoders: the fp16 GPU runtime's logits against the reference"
    "$C" check tiny_llama --backend cudnn --device "$DEVICE" | tail -1
    "$C" check tiny_qwen --backend cudnn --device "$DEVICE" | tail -1
    local tmp
    tmp=$(mktemp -d)
    for dec in $DECODERS; do
        echo "== measuring $dec (fp16, $LLM_REPS rounds)"
        "$C" llm-measure "$dec" --backend cudnn --device "$DEVICE" --warmup 1 --reps "$LLM_REPS" \
            --tokens 1,2,4,8,15,16,17,24,31,32,33,48,63,64,65,96,127,128,129,192,255,256,257,384,512,768,1024,1536,2048 \
            --chunks 2,16,64,128,256,512,1024 --contexts 0,256,1024,2048,4096 \
            --kv-tokens 64,256,1024,2048,4096,8192,16384,32768,65536,131072 \
            --out "$tmp/$dec.json" --db "${LLM_OUT%.json}.db"
    done
    local profs=()
    for dec in $DECODERS; do profs+=("$tmp/$dec.json"); done
    python3 scripts/llm-zoo.py --out "$LLM_OUT" "${profs[@]}"
    rm -rf "$tmp"
}

case " $PARTS " in *" cnn "*) cnn_part ;; esac
case " $PARTS " in *" llm "*) llm_part ;; esac
