#!/usr/bin/env bash
# gen-config-doc.sh SERVESIM [--check] — the reference tables of docs/config.md,
# docs/policies.md and docs/sweeps.md, generated from the code's tables of settings (sim/util/sim_param.h).
#
# Each block between a line `<!-- generated: servesim ARGS -->` and the next
# `<!-- end generated -->` is replaced by what `SERVESIM ARGS` prints (`keys --markdown`,
# `keys --markdown --policy NAME`); the prose around the blocks is the docs' own. With --check
# nothing is written: the exit status is 1 and the difference is shown where a file is not
# what the code generates (the test cli.docs_current runs it so).
set -euo pipefail
bin=${1:?usage: gen-config-doc.sh SERVESIM [--check]}
check=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
status=0
for doc in docs/config.md docs/policies.md docs/sweeps.md; do
  in="$root/$doc"
  out=$(mktemp)
  inblock=0
  while IFS= read -r line || [ -n "$line" ]; do
    if [[ $inblock == 1 ]]; then
      [[ $line == '<!-- end generated -->' ]] || continue
      inblock=0
    fi
    printf '%s\n' "$line" >> "$out"
    if [[ $line =~ ^'<!-- generated: servesim '(.*)' -->'$ ]]; then
      read -r -a args <<< "${BASH_REMATCH[1]}"
      "$bin" "${args[@]}" >> "$out" || { echo "gen-config-doc.sh: $doc: servesim ${BASH_REMATCH[1]} failed" >&2; exit 2; }
      inblock=1
    fi
  done < "$in"
  if [[ $inblock == 1 ]]; then
    echo "gen-config-doc.sh: $doc: a generated block has no '<!-- end generated -->'" >&2
    exit 2
  fi
  if [[ $check == --check ]]; then
    if ! diff -u "$in" "$out" > "$out.diff"; then
      echo "$doc is stale (scripts/gen-config-doc.sh BIN rewrites it):" >&2
      head -40 "$out.diff" >&2
      status=1
    fi
    rm -f "$out.diff" "$out"
  else
    cmp -s "$in" "$out" || cp "$out" "$in"
    rm -f "$out"
  fi
done
exit $status
