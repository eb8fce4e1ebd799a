#!/usr/bin/env bash
# test_cli — the servesim command end to end: broken configs (message + exit 2 + nothing
# written), determinism of results in the database and --json, transactional writes.
# usage: test_cli.sh CASE SERVESIM_BINARY
set -u
case_name=$1
bin=$2
src=${3:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

base='"name":"t","duration_s":2,"cluster":{"gpus":2},"workload":{"rate_rps":100}'
model='{"name":"m","alpha_ms":1,"beta_ms":2,"slo_ms":20}'

# expect_error NAME EXPECTED-FRAGMENT CONFIG-TEXT [extra args...]
expect_error() {
  local name=$1 frag=$2 text=$3
  shift 3
  printf '%s' "$text" > "$tmp/$name.json"
  "$bin" run "$tmp/$name.json" --db "$tmp/$name.db" "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  [ $rc -eq 2 ] || fail "$name: exit $rc, expected 2 ($(cat "$tmp/err"))"
  grep -qF -- "$frag" "$tmp/err" || fail "$name: message '$(cat "$tmp/err")' lacks '$frag'"
  grep -qF -- "$name.json" "$tmp/err" || fail "$name: message does not name the file"
  [ ! -s "$tmp/$name.db" ] || fail "$name: a database was written"
}

config_errors() {
  expect_error syntax "invalid JSON" "{\"name\": \"x\", $base,"
  expect_error syntax_line "syntax_line.json:3:" $'{\n "name": "x",\n "seed": ]\n}'
  expect_error unknown_key "colour: unknown key" "{$base,\"models\":[$model],\"colour\":1}"
  expect_error slo_type 'models[0].slo_ms: expected a positive number, got "fast"' \
    "{$base,\"models\":[{\"name\":\"m\",\"alpha_ms\":1,\"beta_ms\":2,\"slo_ms\":\"fast\"}]}"
  expect_error gpus_zero "cluster.gpus: expected an integer in [1, 100000], got 0" \
    '{"duration_s":2,"cluster":{"gpus":0},"workload":{"rate_rps":1},"models":['"$model"']}'
  expect_error arrival_kind 'workload.arrival.kind: expected one of "poisson", "gamma", "uniform", got "weibull"' \
    '{"duration_s":2,"cluster":{"gpus":1},"models":['"$model"'],"workload":{"rate_rps":1,"arrival":{"kind":"weibull"}}}'
  expect_error gamma_shape "workload.arrival.shape: missing" \
    '{"duration_s":2,"cluster":{"gpus":1},"models":['"$model"'],"workload":{"rate_rps":1,"arrival":{"kind":"gamma"}}}'
  expect_error policy_name 'policy.name: expected one of "symphony", "nexus", "clockwork", "shepherd", "fifo"' \
    "{$base,\"models\":[$model],\"policy\":{\"name\":\"nexus9\"}}"
  expect_error policy_param "policy.params.bogus: unknown key" \
    "{$base,\"models\":[$model],\"policy\":{\"name\":\"symphony\",\"params\":{\"bogus\":1}}}"
  expect_error param_type "policy.params.work_conserving: expected true or false, got \"yes\"" \
    "{$base,\"models\":[$model],\"policy\":{\"params\":{\"work_conserving\":\"yes\"}}}"
  expect_error zoo_missing "models[0].zoo: " "{$base,\"models\":[{\"zoo\":\"no_such_zoo\"}]}"
  expect_error zoo_select 'model "Nope" is not in zoo' \
    "{$base,\"models\":[{\"zoo\":\"symphony_1080ti\",\"select\":[\"ResNet50V2\",\"Nope\"]}]}"
  expect_error slo_tiny "is below its batch-1 latency" \
    "{$base,\"models\":[{\"name\":\"m\",\"alpha_ms\":1,\"beta_ms\":20,\"slo_ms\":10}]}"
  expect_error memory "cluster.gpu_memory_mb: expected at least" \
    '{"duration_s":2,"cluster":{"gpus":1,"gpu_memory_mb":1000},"workload":{"rate_rps":1},"models":[{"zoo":"symphony_table1_1080ti"}]}'
  expect_error duplicate 'model "m" appears twice' "{$base,\"models\":[$model,$model]}"
  expect_error share 'missing share' \
    '{"duration_s":2,"cluster":{"gpus":1},"models":['"$model"'],"workload":{"rate_rps":1,"popularity":{"kind":"explicit"}}}'
  expect_error warmup "warmup_s: expected less than duration_s" "{$base,\"warmup_s\":5,\"models\":[$model]}"
  expect_error profile_two "expected exactly one of alpha_ms+beta_ms, profile or profiles" \
    "{$base,\"models\":[{\"name\":\"m\",\"alpha_ms\":1,\"beta_ms\":2,\"slo_ms\":20,\"profile\":{\"form\":\"linear\",\"alpha_ms\":1,\"beta_ms\":1}}]}"
  expect_error table_order "models[0].profile.latency_ms[2]: expected a positive latency" \
    "{$base,\"models\":[{\"name\":\"m\",\"slo_ms\":20,\"profile\":{\"form\":\"table\",\"latency_ms\":[1,2,1.5]}}]}"
  expect_error set_range "out of range" "{$base,\"models\":[$model]}" --set 'models[3].slo_ms=5'
  expect_error set_type "cluster.gpus: expected an integer" "{$base,\"models\":[$model]}" --set 'cluster.gpus=many'
  # a file that does not exist, and a bad option
  "$bin" run "$tmp/nope.json" --no-db 2> "$tmp/err"; rc=$?
  [ $rc -eq 2 ] && grep -q "cannot open" "$tmp/err" || fail "missing file: exit $rc, $(cat "$tmp/err")"
  "$bin" run --frobnicate 2> "$tmp/err"; rc=$?
  [ $rc -eq 2 ] && grep -q "unknown option" "$tmp/err" || fail "bad option: exit $rc"
  "$bin" bench --gpus 2.5 2> "$tmp/err"; rc=$?
  [ $rc -eq 2 ] && grep -q "expected an integer" "$tmp/err" || fail "--gpus 2.5: exit $rc"
}

# rows of every results table for one run, without ids and wall-clock fields
dump_run() {
  sqlite3 "$1" "
    SELECT name, kind, policy, seed, config_json, config_hash, version, status, duration_s,
           warmup_s, load_scale, offered_rps, ontime_rps, bad_rate, slo_met, events
      FROM runs WHERE id = $2;
    SELECT * FROM model_stats WHERE run_id = $2 ORDER BY model;
    SELECT * FROM executor_stats WHERE run_id = $2 ORDER BY executor;
    SELECT t_s, series, key, value FROM timeseries WHERE run_id = $2 ORDER BY rowid;
    SELECT model, batch_size, count FROM batch_hist WHERE run_id = $2 ORDER BY model, batch_size;
    SELECT model, lo_ms, hi_ms, count FROM latency_hist WHERE run_id = $2 ORDER BY rowid;
    SELECT probe, scale, offered_rps, pass, worst_model, worst_bad_frac FROM goodput_search WHERE run_id = $2;" |
    sed "s/^$2|//"
}

determinism() {
  local db="$tmp/det.db"
  for i in 1 2; do
    "$bin" run --db "$db" --set duration_s=6 --set network.jitter.kind=exponential \
      --set network.jitter.mean_us=40 --json > "$tmp/run$i.json" || fail "run $i failed"
  done
  dump_run "$db" 1 > "$tmp/r1"
  dump_run "$db" 2 > "$tmp/r2"
  [ "$(wc -l < "$tmp/r1")" -gt 100 ] || fail "run dump is too small: $(wc -l < "$tmp/r1") rows"
  cmp -s "$tmp/r1" "$tmp/r2" || fail "two identical runs differ in the database: $(diff "$tmp/r1" "$tmp/r2" | head -5)"
  sed 's/"wall_s":[^,}]*//' "$tmp/run1.json" > "$tmp/j1"
  sed 's/"wall_s":[^,}]*//' "$tmp/run2.json" > "$tmp/j2"
  cmp -s "$tmp/j1" "$tmp/j2" || fail "--json output differs beyond wall_s"
  for k in policy offered_rps bad_rate models p50_ms p99_ms mean_batch on_time dropped; do
    grep -q "\"$k\"" "$tmp/run1.json" || fail "--json lacks $k"
  done
  "$bin" run --db "$db" --set duration_s=6 --seed 7 --set network.jitter.kind=exponential \
    --set network.jitter.mean_us=40 --json > "$tmp/run3.json"
  dump_run "$db" 3 > "$tmp/r3"
  cmp -s "$tmp/r1" "$tmp/r3" && fail "a different seed gave identical results"
  # the goodput search is deterministic too, probes included
  "$bin" goodput --no-db --set duration_s=4 --json | sed 's/"wall_s":[^,}]*//' > "$tmp/g1"
  "$bin" goodput --no-db --set duration_s=4 --json | sed 's/"wall_s":[^,}]*//' > "$tmp/g2"
  cmp -s "$tmp/g1" "$tmp/g2" || fail "goodput searches differ"
  grep -q '"goodput_rps"' "$tmp/g1" || fail "goodput --json lacks goodput_rps"
}

db_atomic() {
  local db="$tmp/atomic.db"
  "$bin" run --db "$db" --set duration_s=4 --quiet || fail "first run failed"
  # make the last table of a run refuse rows: the whole run must roll back
  sqlite3 "$db" "CREATE TRIGGER refuse BEFORE INSERT ON timeseries BEGIN SELECT RAISE(ABORT, 'disk full (simulated)'); END;"
  "$bin" run --db "$db" --set duration_s=4 --quiet 2> "$tmp/err"; rc=$?
  [ $rc -eq 1 ] || fail "failed write: exit $rc, expected 1"
  grep -q "disk full (simulated)" "$tmp/err" || fail "failed write: message $(cat "$tmp/err")"
  n=$(sqlite3 "$db" "SELECT count(*) FROM runs; SELECT count(DISTINCT run_id) FROM model_stats; SELECT count(DISTINCT run_id) FROM latency_hist;" | tr '\n' ' ')
  [ "$n" = "1 1 1 " ] || fail "half-written run left behind: runs/model_stats/latency_hist = $n"
  v=$(sqlite3 "$db" "PRAGMA user_version")
  [ "$v" = "5" ] || fail "schema version $v"
  sqlite3 "$db" "PRAGMA user_version = 99"
  "$bin" run --db "$db" --set duration_s=4 --quiet 2> "$tmp/err"; rc=$?
  [ $rc -ne 0 ] && grep -q "newer than this servesim" "$tmp/err" || fail "newer schema accepted (exit $rc)"
}

db_migrate_v1() {
  # a version-1 database (with one old row) is migrated in place and takes new runs
  local db="$tmp/v1.db"
  sqlite3 "$db" < "$src/tests/cli/schema_v1.sql" || fail "cannot build the v1 fixture"
  sqlite3 "$db" "INSERT INTO runs VALUES(7,'old','run','symphony',1,'{}','h','0.0.1','t',0,'ok',1,0,1,1,1,0,1,99,NULL,1);"
  "$bin" run --db "$db" --set duration_s=4 --quiet || fail "run on a v1 database failed"
  [ "$(sqlite3 "$db" "PRAGMA user_version")" = "5" ] || fail "not migrated to version 5"
  # 3 -> 4: calibration provenance on profiles, profile_points
  sqlite3 "$db" "SELECT backend, precision, fits_json FROM profiles; SELECT count(*) FROM profile_points" \
    > /dev/null || fail "profiles provenance columns or profile_points missing"
  # 4 -> 5: queue_hist, written for the new run only
  [ "$(sqlite3 "$db" "SELECT count(DISTINCT run_id) FROM queue_hist")" = "1" ] || fail "queue_hist missing or empty"
  [ "$(sqlite3 "$db" "SELECT count(*) FROM runs")" = "2" ] || fail "old run lost or new run missing"
  sqlite3 "$db" "SELECT pred_n, preempted FROM model_stats LIMIT 1" > /dev/null || fail "new model_stats columns missing"
  sqlite3 "$db" "SELECT count(*) FROM sweep_points" > /dev/null || fail "sweep_points missing"
  # 2 -> 3: cost and gap columns (the old row gets NULL / 0), plan tables
  [ "$(sqlite3 "$db" "SELECT count(*) FROM runs WHERE gpu_s IS NULL AND trace_gaps = 0")" = "1" ] ||
    fail "runs.gpu_s/trace_gaps not added as expected"
  [ "$(sqlite3 "$db" "SELECT count(*) FROM runs WHERE gpu_s > 0")" = "1" ] || fail "new run has no gpu_s"
  sqlite3 "$db" "SELECT count(*) FROM plans, plan_probes" > /dev/null || fail "plan tables missing"
}

sweep_resume_and_jobs() {
  # a 2x3 grid; -j 1 and -j 2 give the same results; a killed sweep resumes without duplicates
  printf '%s' "{$base,\"models\":[$model]}" > "$tmp/base.json"
  printf '%s' '{"name":"t","base":"base.json","mode":"run","set":{"duration_s":3},
    "grid":{"policy.name":["symphony","fifo"],"seed":[1,2,3]}}' > "$tmp/s.json"
  "$bin" sweep "$tmp/s.json" -j 1 --db "$tmp/j1.db" --quiet || fail "sweep -j 1 failed"
  "$bin" sweep "$tmp/s.json" -j 2 --db "$tmp/j2.db" --quiet || fail "sweep -j 2 failed"
  q="SELECT p.point_key, r.ontime_rps, r.bad_rate, r.events FROM sweep_points p JOIN runs r ON r.id = p.run_id ORDER BY p.point_key"
  [ "$(sqlite3 "$tmp/j1.db" "$q")" = "$(sqlite3 "$tmp/j2.db" "$q")" ] || fail "-j 2 results differ from -j 1"
  [ "$(sqlite3 "$tmp/j1.db" "SELECT count(*) FROM runs")" = "6" ] || fail "-j 1: not 6 runs"
  # resume: kill a slower sweep part-way, then run it again
  printf '%s' '{"name":"k","base":"base.json","mode":"run","set":{"duration_s":3000},
    "grid":{"seed":[1,2,3,4,5,6,7,8]}}' > "$tmp/k.json"
  setsid "$bin" sweep "$tmp/k.json" -j 2 --db "$tmp/k.db" --quiet & pid=$!
  for _ in $(seq 1 200); do
    n=$(sqlite3 "$tmp/k.db" "SELECT count(*) FROM sweep_points" 2>/dev/null || echo 0)
    [ "${n:-0}" -ge 2 ] && break
    sleep 0.1
  done
  kill -9 -- -$pid 2>/dev/null; wait $pid 2>/dev/null
  before=$(sqlite3 "$tmp/k.db" "SELECT count(*) FROM sweep_points WHERE status='ok'")
  [ "$before" -ge 1 ] && [ "$before" -lt 8 ] || fail "kill came at the wrong time ($before points done)"
  "$bin" sweep "$tmp/k.json" -j 2 --db "$tmp/k.db" 2> "$tmp/resume.err" > /dev/null || fail "resume failed"
  grep -q "$before already in" "$tmp/resume.err" || fail "resume did not skip done points: $(head -1 "$tmp/resume.err")"
  [ "$(sqlite3 "$tmp/k.db" "SELECT count(*) FROM sweep_points WHERE status='ok'")" = "8" ] || fail "not 8 points after resume"
  [ "$(sqlite3 "$tmp/k.db" "SELECT count(*) FROM runs")" = "8" ] || fail "duplicate or orphan runs after resume"
}

trace_plan() {
  # a trace replayed through the CLI: --trace-dir, bad rows (file:line, exit 2, no database),
  # and a capacity plan with --json and its rows in the database
  mkdir -p "$tmp/tr"
  { echo "second,requests"; for i in $(seq 0 19); do echo "$i,1500"; done; } > "$tmp/tr/flat.csv"
  local tcfg='"name":"tp","seed":1,"drain_s":1,"cluster":{"gpus":1},"metrics":{"sample_period_s":1},
    "models":[{"name":"M","slo_ms":100,"alpha_ms":1,"beta_ms":4,"max_batch":8}],
    "workload":{"trace":{"format":"csv_counts","files":["flat.csv"],"csv":{"interval_s":1}}}'
  printf '%s' "{$tcfg}" > "$tmp/tp.json"
  "$bin" run "$tmp/tp.json" --trace-dir "$tmp/tr" --no-db --json > "$tmp/run.json" || fail "trace run failed"
  grep -q '"offered":30000' "$tmp/run.json" || fail "trace run did not offer 20 x 1500 requests"
  "$bin" plan "$tmp/tp.json" --trace-dir "$tmp/tr" --db "$tmp/p.db" --json > "$tmp/plan.json" 2> "$tmp/plan.err" ||
    fail "plan failed: $(cat "$tmp/plan.err")"
  # 1500 req/s at 666.7 req/s per GPU: 3 GPUs (2.25 -> 3), and 2 must fail
  grep -q '"static":{"gpus":3' "$tmp/plan.json" || fail "plan: $(cat "$tmp/plan.json")"
  [ "$(sqlite3 "$tmp/p.db" "SELECT static_gpus FROM plans")" = "3" ] || fail "plans row"
  [ "$(sqlite3 "$tmp/p.db" "SELECT pass FROM plan_probes WHERE gpus = 2")" = "0" ] || fail "2 GPUs not probed or passed"
  [ "$(sqlite3 "$tmp/p.db" "SELECT count(*) FROM runs WHERE kind = 'plan'")" = \
    "$(sqlite3 "$tmp/p.db" "SELECT count(*) FROM plan_probes")" ] || fail "a probe without its run"
  printf 'second,requests\n0,5\n1,five\n' > "$tmp/tr/bad.csv"
  printf '%s' "{${tcfg/flat.csv/bad.csv}}" > "$tmp/bad.json"
  "$bin" plan "$tmp/bad.json" --trace-dir "$tmp/tr" --db "$tmp/bad.db" 2> "$tmp/err"; local rc=$?
  [ $rc -eq 2 ] || fail "bad trace: exit $rc"
  grep -qF 'bad.csv:3: column 2 (count): expected a non-negative number, found "five"' "$tmp/err" ||
    fail "bad trace message: $(cat "$tmp/err")"
  [ ! -s "$tmp/bad.db" ] || fail "bad trace: a database was written"
  SERVESIM_TRACE_DIR="$tmp/tr" "$bin" run "$tmp/tp.json" --no-db --quiet || fail "SERVESIM_TRACE_DIR not used"
  "$bin" run "$tmp/tp.json" --no-db --quiet 2> "$tmp/err" && fail "ran without the trace folder"
  grep -q "flat.csv: cannot open" "$tmp/err" || fail "missing trace message: $(cat "$tmp/err")"
}

help_and_policies() {
  "$bin" --help | grep -q "goodput" || fail "--help lacks goodput"
  "$bin" run --help | grep -q -- "--set" || fail "run --help lacks --set"
  "$bin" policies | grep -q "^symphony" || fail "policies lacks symphony"
  "$bin" 2> /dev/null; [ $? -eq 2 ] || fail "no command: exit not 2"
}

"$case_name"
if [ $fails -ne 0 ]; then
  echo "$case_name: $fails failure(s)" >&2
  exit 1
fi
echo "$case_name: ok"
