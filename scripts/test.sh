#!/usr/bin/env bash
# Installs what is missing, builds with ASan+UBSan and warnings as errors (the dev preset),
# and runs the whole test suite with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --workflow --preset dev
