#!/usr/bin/env bash
# gpu-bundle — packs servesim-calibrate (and the calibration test binary) with the Debian
# libraries they link, for a GPU machine that has the NVIDIA driver, CUDA and cuDNN but none of
# servesim's Debian dependencies (how ../shared/gpu/ ran). CUDA, cuBLAS and cuDNN are not
# packed: the GPU machine's own are used.
#
#   scripts/gpu-bundle.sh DIR       writes DIR/bin, DIR/lib, DIR/networks and DIR/env.sh
#
# On the GPU machine: `. DIR/env.sh` (finds libcudnn.so.9 and the CUDA libraries under
# /usr/local and /opt, sets LD_LIBRARY_PATH and SERVESIM_NET_DIR), then run DIR/bin/*.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
D=${1:?usage: scripts/gpu-bundle.sh DIR}
B=$here/build/release
bins=("$B/calibrate/servesim-calibrate" "$B/tests/test_calibrate")
for b in "${bins[@]}"; do
    [ -x "$b" ] || { echo "gpu-bundle: $b missing: build the release preset first" >&2; exit 1; }
done
rm -rf "$D"
mkdir -p "$D/bin" "$D/lib"
cp "${bins[@]}" "$D/bin/"
cp -r "$here/calibrate/networks" "$D/networks"
# every linked library but the C runtime and the GPU stack
ldd "${bins[@]}" | awk '$3 ~ /^\// {print $3}' | sort -u |
    grep -Ev '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*)\.so|libcud|libcublas' |
    while read -r lib; do cp -L "$lib" "$D/lib/"; done
cat > "$D/env.sh" <<'EOF'
# sourced on the GPU machine: the bundle's libraries, then the machine's cuDNN and CUDA
_d=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_gpu=$(for n in libcudnn.so.9 libcublasLt.so.13 libcudart.so.13; do
           find /usr/local /opt /usr/lib -name "$n" 2>/dev/null | head -1; done |
       xargs -r -n1 dirname | sort -u | tr '\n' ':')
export LD_LIBRARY_PATH="$_d/lib:${_gpu}${LD_LIBRARY_PATH:-}"
export SERVESIM_NET_DIR="$_d/networks"
EOF
echo "gpu-bundle: $D ($(du -sh "$D" | cut -f1))"
