#!/usr/bin/env bash
# report.sh DB — the RRL experiments' tables from a results database of the sweeps here
# (README.md):
#  E1: the landscape at 0.6 of capacity — the best, sequential and framework-default static
#      configurations, and the median |latency difference| against configuration distance;
#  E2: per sweep point (radius, est_steps), over seeds: slots; the convergence slot — the
#      first slot after which the greedy configuration (the best visited) of the centre load
#      bin stays within 10% of the best static configuration's latency in E1's table (slots in
#      other load bins are not judged: E1 measured only the centre load) — its range, how many
#      seeds never got there (converged only in the last 100 slots), the last greedy's regret,
#      the mean slot cost over the last 200 slots and the run's mean latency;
#  E2 comparators (e2_compare and e2_oracle sweeps): per policy over seeds, the run's mean
#      latency and bad rate (requests dropped after max_wait_slots, or at a restart:
#      policy.params.restart), the mean slot cost over the last 200 slots and its gap to the
#      oracle's, the spec's convergence slot without a table (the first slot after which the
#      20-slot moving mean cost stays within 10% of the run's last-200 mean) and the first
#      slot after which it stays within 1.5x the oracle's last-200 mean ('-': never).
#  the oracle's tables (oracle_table*.json beside this script): the best configuration at each
#      load bin's centre (the optimum moves with load), how many lie within 10%, and the first
#      and last configurations of the grid (CPU: sequential [1,1,1]; GPU: [1, 0, 1]);
#  E2-E6 against the oracle (one table each, per policy over seeds): the run's mean and p99
#      latency, bad rate, mean slot cost and its ratio to the oracle's, improvement of rrl's
#      run mean latency over the policy's ((L_x - L_rrl) / L_x), the share of slots within 10%
#      of the oracle (rrl.regret <= 0.10: the table's cost of what ran, at the load the policy
#      had seen, over the best) over the run and over its last 500 slots; where the load
#      changes (E4-E6: every 100 slots) that share in the 20 slots after a change and in the 80
#      after those; E5: the share of slots whose p95 exceeds the strict SLO
#      (policy.params.slo_ms); E6: the share of slots within the SLO (cost < 1) and the mean
#      busy: cores (rrl.util x 10) on the CPU node, the busy fraction on the GPU node.
set -euo pipefail
db=${1:?usage: report.sh DB}
here=$(cd "$(dirname "$0")" && pwd)
sqlite3 -header -column "$db" <<'SQL'
DROP VIEW IF EXISTS temp.land;
CREATE TEMP VIEW land AS
  SELECT json_extract(p.settings_json, '$."policy.params.config[0]"') AS k,
         json_extract(p.settings_json, '$."policy.params.config[1]"') AS p,
         json_extract(p.settings_json, '$."policy.params.config[2]"') AS t,
         m.mean_ms, m.p99_ms, m.dropped, m.offered
  FROM sweep_points p JOIN model_stats m ON m.run_id = p.run_id
  WHERE p.sweep LIKE 'rrl_e1_landscape@%';
SELECT 'E1 landscape' AS "", COUNT(*) AS configs,
       (SELECT printf('[%d,%d,%d] %.1f ms', k, p, t, mean_ms) FROM land ORDER BY mean_ms LIMIT 1) AS best,
       (SELECT printf('%.1f ms', mean_ms) FROM land WHERE k = 1 AND p = 1 AND t = 1) AS sequential,
       (SELECT printf('%.1f ms', mean_ms) FROM land WHERE k = 10 AND p = 10 AND t = 10) AS tf_default,
       (SELECT COUNT(*) FROM land l WHERE l.mean_ms <= 1.1 * (SELECT MIN(mean_ms) FROM land)) AS within_10pct
FROM land;
WITH pairs AS (
  SELECT CAST(ROUND(SQRT((a.k - b.k) * (a.k - b.k) + (a.p - b.p) * (a.p - b.p) + (a.t - b.t) * (a.t - b.t))) AS INT) AS d,
         ABS(LN(a.mean_ms) - LN(b.mean_ms)) AS dl
  FROM land a JOIN land b ON (a.k, a.p, a.t) < (b.k, b.p, b.t)),
ranked AS (SELECT d, dl, ROW_NUMBER() OVER (PARTITION BY d ORDER BY dl) AS i, COUNT(*) OVER (PARTITION BY d) AS n FROM pairs)
SELECT d AS distance, n AS pairs, printf('%.3f', dl) AS median_abs_dln_latency
FROM ranked WHERE i = (n + 1) / 2 AND d <= 8 ORDER BY d;

WITH c AS (
  SELECT run_id, t_s, ROW_NUMBER() OVER (PARTITION BY run_id ORDER BY t_s) AS slot, value AS r
  FROM timeseries WHERE series = 'rrl.cost'),
n AS (SELECT run_id, MAX(slot) AS nslots FROM c GROUP BY run_id),
fin AS (SELECT c.run_id, AVG(r) AS final FROM c JOIN n USING (run_id) WHERE slot > nslots - 200 GROUP BY c.run_id),
ctr AS (
  SELECT run_id, CASE WHEN MAX(value) = 0 THEN 0 ELSE 5 END AS s
  FROM timeseries WHERE series = 'rrl.state' GROUP BY run_id),
-- the greedy configuration of the state the slot ran in (rrl.state at the previous slot's end;
-- the first slot's is the mean load's bin), priced by E1's table; the centre state is the
-- mean load's bin, 5, with per-bin tables (load_bin 0.2) and the only state, 0, with one table
st AS (
  SELECT run_id, t_s, COALESCE(LAG(value) OVER (PARTITION BY run_id ORDER BY t_s),
                               (SELECT ctr.s FROM ctr WHERE ctr.run_id = timeseries.run_id)) AS s
  FROM timeseries WHERE series = 'rrl.state'),
g AS (
  SELECT gk.run_id, gk.t_s, gk.value AS k, gp.value AS p, gt.value AS t
  FROM timeseries gk
  JOIN timeseries gp ON gp.run_id = gk.run_id AND gp.t_s = gk.t_s AND gp.series = 'rrl.greedy_p'
  JOIN timeseries gt ON gt.run_id = gk.run_id AND gt.t_s = gk.t_s AND gt.series = 'rrl.greedy_t'
  WHERE gk.series = 'rrl.greedy_k'),
best AS (SELECT MIN(mean_ms) AS b FROM land),
reg AS (
  SELECT c.run_id, c.slot, land.mean_ms / (SELECT b FROM best) - 1 AS regret
  FROM c JOIN st ON st.run_id = c.run_id AND st.t_s = c.t_s
  JOIN ctr ON ctr.run_id = c.run_id AND st.s = ctr.s
  JOIN g ON g.run_id = c.run_id AND g.t_s = c.t_s
  JOIN land ON land.k = g.k AND land.p = g.p AND land.t = g.t),
conv AS (
  SELECT fin.run_id, (SELECT MAX(slot) FROM reg WHERE reg.run_id = fin.run_id AND regret > 0.10) AS last_bad,
         (SELECT regret FROM reg WHERE reg.run_id = fin.run_id ORDER BY slot DESC LIMIT 1) AS final_regret
  FROM fin),
per AS (
  SELECT p.sweep, json_extract(p.settings_json, '$."policy.params.radius"') AS radius,
         COALESCE(json_extract(p.settings_json, '$."policy.params.est_steps"'), 10) AS est_steps,
         n.nslots, COALESCE(conv.last_bad + 1, 1) AS conv, conv.final_regret, fin.final, m.mean_ms
  FROM sweep_points p JOIN n ON n.run_id = p.run_id JOIN conv ON conv.run_id = p.run_id
  JOIN fin ON fin.run_id = p.run_id JOIN model_stats m ON m.run_id = p.run_id
  WHERE p.sweep LIKE 'rrl_e2_radius@%' OR p.sweep LIKE 'rrl_e2_est_steps@%')
SELECT substr(sweep, 1, instr(sweep, '@') - 1) AS sweep, printf('%.3g', radius) AS radius,
       est_steps, COUNT(*) AS seeds, CAST(AVG(nslots) AS INT) AS slots,
       CASE WHEN (SELECT b FROM best) IS NULL THEN '-' ELSE CAST(AVG(conv) AS INT) END AS conv_slot,
       CASE WHEN (SELECT b FROM best) IS NULL THEN '-' ELSE printf('%d-%d', MIN(conv), MAX(conv)) END AS conv_range,
       SUM(conv > nslots - 100) AS not_converged,
       CASE WHEN (SELECT b FROM best) IS NULL THEN '-' ELSE printf('%.1f%%', 100 * AVG(final_regret)) END AS final_regret,
       printf('%.1f', AVG(final)) AS last200_ms,
       printf('%.1f', AVG(mean_ms)) AS run_mean_ms
FROM per GROUP BY sweep, radius, est_steps ORDER BY sweep, radius, est_steps;

SQL

# comparators WHERE TITLE: the E2 comparator table of the sweep points WHERE selects
comparators() {
  local where=$1 title=$2
  [ "$(sqlite3 "$db" "SELECT COUNT(*) FROM sweep_points p WHERE ${where}")" -gt 0 ] || return 0
  echo
  sqlite3 -header -column "$db" <<SQL
WITH pr AS (
  SELECT p.run_id, COALESCE(json_extract(p.settings_json, '\$.case'), 'oracle') AS policy
  FROM sweep_points p WHERE ${where}),
c AS (
  SELECT run_id, ROW_NUMBER() OVER (PARTITION BY run_id ORDER BY t_s) AS slot, value AS r
  FROM timeseries WHERE series = 'rrl.cost' AND run_id IN (SELECT run_id FROM pr)),
mv AS (SELECT run_id, slot, AVG(r) OVER (PARTITION BY run_id ORDER BY slot ROWS BETWEEN 99 PRECEDING AND CURRENT ROW) AS m FROM c WHERE slot >= 1),
n AS (SELECT run_id, MAX(slot) AS nslots FROM c GROUP BY run_id),
fin AS (SELECT c.run_id, AVG(r) AS final FROM c JOIN n USING (run_id) WHERE slot > nslots - 200 GROUP BY c.run_id),
oracle AS (SELECT AVG(final) AS o FROM fin JOIN pr USING (run_id) WHERE policy = 'oracle'),
per AS (
  SELECT pr.policy, pr.run_id, n.nslots, fin.final, m.mean_ms, r.bad_rate,
         (SELECT MAX(slot) FROM mv WHERE mv.run_id = pr.run_id AND ABS(m / fin.final - 1) > 0.10) AS last_off,
         (SELECT MAX(slot) FROM mv WHERE mv.run_id = pr.run_id AND m > 1.5 * (SELECT o FROM oracle)) AS last_far
  FROM pr JOIN n USING (run_id) JOIN fin USING (run_id)
  JOIN model_stats m ON m.run_id = pr.run_id JOIN runs r ON r.id = pr.run_id)
SELECT policy AS "${title}", COUNT(*) AS seeds, CAST(AVG(nslots) AS INT) AS slots,
       printf('%.1f', AVG(mean_ms)) AS run_mean_ms, printf('%.3f', AVG(bad_rate)) AS bad_rate,
       printf('%.1f', AVG(final)) AS last200_ms,
       printf('%+.0f%%', 100 * (AVG(final) / (SELECT o FROM oracle) - 1)) AS vs_oracle,
       CAST(AVG(COALESCE(last_off + 1, 1)) AS INT) AS conv_slot,
       printf('%d of %d', SUM(COALESCE(last_far, 0) < nslots), COUNT(*)) AS within_1_5x,
       COALESCE(CAST(AVG(CASE WHEN COALESCE(last_far, 0) < nslots THEN COALESCE(last_far + 1, 1) END) AS INT), '-') AS from_slot
FROM per GROUP BY policy
ORDER BY CASE policy WHEN 'oracle' THEN 0 WHEN 'rrl' THEN 1 WHEN 'q_learning' THEN 2 WHEN 'capes' THEN 3 WHEN 'deeprm' THEN 4 ELSE 5 END;
SQL
}
comparators "p.sweep LIKE 'rrl_e2_compare@%' OR p.sweep LIKE 'rrl_e2_oracle@%'" "E2 vs comparators"
comparators "p.sweep LIKE 'rrl_e2_rough@%'" "E2 vs comparators, rough landscape"

for f in "$here"/oracle_table*.json; do
  python3 - "$f" <<'PY'
import json, os, sys
t = json.load(open(sys.argv[1]))
g = t["grid"]
n2, n3 = len(g[1]), len(g[2])
print("\n%s (%s, %s): the best configuration per load" % (os.path.basename(sys.argv[1]), t["device"], t["objective"]))
print("%8s  %-12s %10s %8s %14s %14s" % ("req/s", "best", "cost", "<=+10%", "grid first", "grid last"))
for r, row in zip(t["rates"], t["cost"]):
    ok = [(c, x) for c, x in enumerate(row) if x is not None]
    b, x = min(ok, key=lambda cx: cx[1])
    cfg = [g[0][b // (n2 * n3)], g[1][b // n3 % n2], g[2][b % n3]]
    near = sum(1 for _, y in ok if y <= 1.1 * x)
    print("%8.1f  %-12s %10.4g %8d %14.4g %14.4g" % (r, cfg, x, near, row[0], row[-1]))
PY
done

# summary SWEEP TITLE: E2-E6 per policy against the oracle (the header above says what)
summary() {
  local sweep=$1 title=$2
  sqlite3 -header -column "$db" <<SQL
WITH pr AS (
  SELECT p.run_id, json_extract(p.settings_json, '\$.case') AS policy,
         json_extract(r.config_json, '\$.policy.params.slo_ms') AS slo,
         json_extract(r.config_json, '\$.workload.random_segments.period_s') AS period,
         json_extract(r.config_json, '\$.policy.params.slot_s') AS slot_cfg,
         100.0 / json_extract(r.config_json, '\$.workload.rate_rps') AS slot_dflt
  FROM sweep_points p JOIN runs r ON r.id = p.run_id WHERE p.sweep LIKE '${sweep}@%'),
reg AS (
  SELECT t.run_id, ROW_NUMBER() OVER (PARTITION BY t.run_id ORDER BY t.t_s) AS slot, t.t_s, t.value AS g
  FROM timeseries t WHERE t.series = 'rrl.regret' AND t.run_id IN (SELECT run_id FROM pr)),
cost AS (
  SELECT t.run_id, t.t_s, t.value AS c FROM timeseries t
  WHERE t.series = 'rrl.cost' AND t.run_id IN (SELECT run_id FROM pr)),
util AS (
  SELECT t.run_id, AVG(t.value) AS u FROM timeseries t
  WHERE t.series = 'rrl.util' AND t.run_id IN (SELECT run_id FROM pr) GROUP BY t.run_id),
n AS (SELECT run_id, MAX(slot) AS ns FROM reg GROUP BY run_id),
-- the slot's position in its load period (E4-E6: periods of period_s; slots of slot_s, else 100 / rate)
ph AS (
  SELECT reg.run_id, reg.g,
         CAST((reg.t_s - 1e-9) / COALESCE(pr.slot_cfg, pr.slot_dflt) AS INT) % CAST(ROUND(pr.period / COALESCE(pr.slot_cfg, pr.slot_dflt)) AS INT) AS pos
  FROM reg JOIN pr USING (run_id) WHERE pr.period IS NOT NULL),
per AS (
  SELECT pr.policy, pr.run_id, m.mean_ms, m.p99_ms, r.bad_rate,
         (SELECT AVG(c) FROM cost WHERE cost.run_id = pr.run_id) AS mc,
         (SELECT AVG(g <= 0.10) FROM reg WHERE reg.run_id = pr.run_id) AS near,
         (SELECT AVG(g <= 0.10) FROM reg JOIN n USING (run_id) WHERE reg.run_id = pr.run_id AND slot > ns - 500) AS near_late,
         (SELECT AVG(g <= 0.10) FROM ph WHERE ph.run_id = pr.run_id AND pos < 20) AS g_after,
         (SELECT AVG(g <= 0.10) FROM ph WHERE ph.run_id = pr.run_id AND pos >= 20) AS g_settled,
         (SELECT AVG(c > pr.slo) FROM cost WHERE cost.run_id = pr.run_id) AS viol,
         (SELECT AVG(c < 1) FROM cost WHERE cost.run_id = pr.run_id) AS met,
         util.u
  FROM pr JOIN model_stats m ON m.run_id = pr.run_id JOIN runs r ON r.id = pr.run_id
  LEFT JOIN util ON util.run_id = pr.run_id),
agg AS (
  SELECT policy, COUNT(*) AS seeds, AVG(mean_ms) AS mean_ms, AVG(p99_ms) AS p99, AVG(bad_rate) AS bad,
         AVG(mc) AS mc, AVG(near) AS near, AVG(near_late) AS near_late,
         AVG(g_after) AS g_after, AVG(g_settled) AS g_settled, AVG(viol) AS viol, AVG(met) AS met,
         AVG(u) AS u
  FROM per GROUP BY policy)
SELECT policy AS "${title}", seeds, printf('%.1f', mean_ms) AS run_mean_ms, printf('%.0f', p99) AS p99_ms,
       printf('%.3f', bad) AS bad_rate, printf('%.4g', mc) AS slot_cost,
       printf('%.2f', mc / (SELECT mc FROM agg WHERE policy = 'oracle')) AS vs_oracle,
       printf('%+.0f%%', 100 * (mean_ms - (SELECT mean_ms FROM agg WHERE policy = 'rrl')) / mean_ms) AS rrl_impr,
       printf('%.0f%%', 100 * near) AS near_oracle,
       printf('%.0f%%', 100 * near_late) AS near_last500,
       CASE WHEN g_after IS NULL THEN '-' ELSE printf('%.0f%%', 100 * g_after) END AS near_after_change,
       CASE WHEN g_settled IS NULL THEN '-' ELSE printf('%.0f%%', 100 * g_settled) END AS near_settled,
       CASE WHEN '${sweep}' LIKE '%tail%' THEN printf('%.0f%%', 100 * viol) ELSE '-' END AS p95_over_slo,
       CASE WHEN '${sweep}' LIKE '%resource%' THEN printf('%.0f%%', 100 * met) ELSE '-' END AS slo_met,
       CASE WHEN '${sweep}' NOT LIKE '%resource%' THEN '-' WHEN '${sweep}' LIKE '%gpu%'
            THEN printf('%.2f', u) ELSE printf('%.2f', 10 * u) END AS busy
FROM agg
ORDER BY CASE policy WHEN 'oracle' THEN 0 WHEN 'rrl' THEN 1 WHEN 'rrl_per_bin' THEN 2 WHEN 'q_learning' THEN 3 WHEN 'capes' THEN 4 WHEN 'deeprm' THEN 5 ELSE 6 END;
SQL
}
for e in "rrl_e2_compare:E2 stationary" "rrl_e2_rough:E2 stationary, rough landscape" "rrl_e3_wiki:E3 WiKi" "rrl_e4_dynamic:E4 Dynamic" \
         "rrl_e5_tail:E5 strict SLO" "rrl_e6_resource:E6 resource" "rrl_e3_wiki_gpu:E3 WiKi, GPU" \
         "rrl_e4_dynamic_gpu:E4 Dynamic, GPU" "rrl_e5_tail_gpu:E5 strict SLO, GPU" \
         "rrl_e6_resource_gpu:E6 resource, GPU" "rrl_e3_wiki_ds:E3 WiKi, DeepSpeech-like" \
         "rrl_e4_dynamic_ds:E4 Dynamic, DeepSpeech-like" "rrl_e6_resource_ds:E6 resource, DeepSpeech-like"; do
  if [ "$(sqlite3 "$db" "SELECT COUNT(*) FROM sweep_points WHERE sweep LIKE '${e%%:*}@%'")" -gt 0 ]; then
    echo
    summary "${e%%:*}" "${e#*:}"
  fi
done
