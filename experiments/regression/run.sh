#!/usr/bin/env bash
# The CI regression gate: runs the regression suite (one sweep per policy in this folder, each
# at two loads and three seeds) into a fresh database and compares it with the committed
# baseline (baseline.tsv, servesim-results text) by `servesim compare`.
#
#   experiments/regression/run.sh              run and compare; exit 3 on a regression
#   experiments/regression/run.sh --update     run and rewrite baseline.tsv (a deliberate change)
#
# options: --servesim BIN (default build/release/servesim, else build/dev/servesim),
#          --db FILE (the suite's database; default build/regression/regression.db, kept
#          after the run so that the report's NEW names a file that exists),
#          --markdown FILE (also write the comparison as Markdown; CI appends it to
#          $GITHUB_STEP_SUMMARY when that is set), -j N (worker processes, default nproc).
# Exit status: that of servesim compare (0 no regression, 3 regression, 2 bad input), or 1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin="" db="" md="" update=0 jobs=$(nproc 2>/dev/null || echo 2)
while [ $# -gt 0 ]; do
  case $1 in
    --update) update=1 ;;
    --servesim) bin=$2; shift ;;
    --db) db=$2; shift ;;
    --markdown) md=$2; shift ;;
    -j) jobs=$2; shift ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
# shellcheck source=../../scripts/find-servesim.sh
. "$root/scripts/find-servesim.sh"
bin=$(find_servesim "$root" "$bin") || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -n "$db" ] || { mkdir -p "$root/build/regression"; db="$root/build/regression/regression.db"; }
rm -f "$db"
for sweep in "$here"/*.sweep.json; do
  "$bin" sweep "$sweep" --db "$db" -j "$jobs" --quiet
done
if [ $update = 1 ]; then
  "$bin" export "$db" -o "$here/baseline.tsv"
  echo "baseline rewritten: $here/baseline.tsv ($(($(wc -l < "$here/baseline.tsv") - 2)) rows); review it with git diff and commit it"
  exit 0
fi
rc=0
"$bin" compare "$here/baseline.tsv" "$db" || rc=$?
if [ -n "$md" ] || [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  "$bin" compare "$here/baseline.tsv" "$db" --markdown > "$tmp/summary.md" || true
  [ -z "$md" ] || cp "$tmp/summary.md" "$md"
  [ -z "${GITHUB_STEP_SUMMARY:-}" ] || cat "$tmp/summary.md" >> "$GITHUB_STEP_SUMMARY"
fi
echo "regression gate: the suite's runs are in $db"
case $rc in
  0) echo "regression gate: passed" ;;
  3) echo "regression gate: REGRESSION against experiments/regression/baseline.tsv (if the change is deliberate: experiments/regression/run.sh --update, and commit the baseline)" >&2 ;;
  *) echo "regression gate: compare failed (exit $rc)" >&2 ;;
esac
exit $rc
