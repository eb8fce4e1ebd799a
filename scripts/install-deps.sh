#!/usr/bin/env bash
# Installs the Debian 12 packages that servesim needs to build, test and plot.
# Idempotent: packages already present are skipped, so the README commands stay fast.
# Runs apt-get as root (or through sudo when not root).
set -euo pipefail

pkgs=(build-essential cmake ninja-build pkg-config
      libgsl-dev libsqlite3-dev libcjson-dev libglpk-dev libdnnl-dev gnuplot-nox sqlite3 bc
      libopenmpi-dev openmpi-bin   # sweeps over MPI ranks (optional at build time)
      python3 procps      # the tests: python3 writes generated inputs, pgrep checks for orphans
      clang libclang-rt-14-dev)   # scripts/fuzz.sh: libFuzzer

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
