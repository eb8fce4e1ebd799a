#!/usr/bin/env bash
# fuzz.sh [SECONDS] — runs every fuzz target (tests/fuzz: config, set, trace, results, zoo, sweep,
# numbers: the shipped configs with numbers pushed to extremes) under
# libFuzzer with ASan and UBSan for SECONDS each (default 60), from seed corpora of the
# project's own inputs plus the regression inputs. Needs clang and its libFuzzer runtime
# (Debian: clang, libclang-rt-14-dev). A crash stops with the input saved in
# build/fuzz/crashes/TARGET/: fix the defect, then add the input to tests/fuzz/regress/TARGET,
# where the test suite replays it (ctest -R fuzz.). Exit status: 0 no crash, 1 a crash.
set -euo pipefail
secs=${1:-60}
src=$(cd "$(dirname "$0")/.." && pwd)
build="$src/build/fuzz"
cc=$(command -v clang || command -v clang-14 || true)
[ -n "$cc" ] || { echo "fuzz.sh: clang not found (apt-get install clang libclang-rt-14-dev)" >&2; exit 2; }
flags="-O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DSERVESIM_FUZZ=ON -DSERVESIM_WERROR=OFF -DBUILD_TESTING=OFF > "$build.log" 2>&1 ||
  { tail -20 "$build.log" >&2; exit 2; }
cmake --build "$build" > "$build.log" 2>&1 || { tail -20 "$build.log" >&2; exit 2; }
corpus="$build/corpus"
rm -rf "$corpus"
mkdir -p "$corpus"/{config,set,trace,results,zoo,sweep,numbers}
cp "$src"/tests/fuzz/regress/numbers/* "$corpus/numbers/"
for i in $(seq 0 31); do printf "\\x$(printf %02x "$i")" > "$corpus/numbers/config_$i"; done
cp "$src"/tests/fuzz/regress/config/* "$src"/experiments/*.json "$corpus/config/"
for f in "$src"/experiments/fa2/*.json; do cp "$f" "$corpus/config/fa2_$(basename "$f")"; done   # applications
cp "$src"/tests/fuzz/regress/zoo/* "$src"/workloads/zoo/*.json "$corpus/zoo/"
cp "$src"/tests/fuzz/regress/sweep/* "$corpus/sweep/"
cp "$src"/tests/fuzz/regress/set/* "$corpus/set/"
printf '%s' 'cluster.gpus=16' > "$corpus/set/gpus"
printf '%s' 'policy={"name":"nexus","preset":"published"}' > "$corpus/set/policy"
cp "$src"/tests/fuzz/regress/trace/* "$corpus/trace/"
printf '\x05second,requests\n0,5\n1,7\n2,0\n' > "$corpus/trace/counts"
printf '\x00HashOwner,HashApp,HashFunction,Trigger,1,2,3\na,b,f1,http,1,0,2\n' > "$corpus/trace/azure_functions"
cp "$src"/tests/fuzz/regress/results/* "$corpus/results/"
for b in "$src/build/release/servesim" "$src/build/dev/servesim"; do   # a real database
  [ -x "$b" ] || continue                                             # and its export as seeds
  "$b" run --db "$corpus/results/run.db" --set duration_s=3 --quiet || true
  "$b" export "$corpus/results/run.db" -o "$corpus/results/run.tsv" || true
  break
done
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export SERVESIM_ZOO_DIR="$src/workloads/zoo"
status=0
for t in config set trace results zoo sweep numbers; do
  mkdir -p "$build/crashes/$t"
  echo "fuzz.sh: $t for ${secs} s" >&2
  extra=()                       # numbers: up to 8 mutations (3 bytes each) from the start
  [ "$t" = numbers ] && extra=(-max_len=25 -len_control=0)
  if ! (cd "$build" && "$build/tests/fuzz/fuzzer_$t" -max_total_time="$secs" -timeout=20 "${extra[@]}" \
          -rss_limit_mb=4096 -artifact_prefix="$build/crashes/$t/" "$corpus/$t" \
          > "$build/fuzz-$t.log" 2>&1); then
    echo "fuzz.sh: $t crashed: $(ls "$build/crashes/$t")" >&2
    grep -m5 -E "ERROR|SUMMARY|runtime error" "$build/fuzz-$t.log" >&2 || true
    status=1
  else
    grep -E "^Done|#[0-9]+.*DONE" "$build/fuzz-$t.log" | tail -1 >&2 || true
  fi
done
exit $status
