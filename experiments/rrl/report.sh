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
#      latency and bad rate (requests dropped after max_wait_slots), the mean slot cost over the
#      last 200 slots and its gap to the oracle's, the spec's convergence slot without a table
#      (the first slot after which the 20-slot moving mean cost stays within 10% of the run's
#      last-200 mean) and the first slot after which it stays within 1.5x the oracle's
#      last-200 mean ('-': never).
set -euo pipefail
db=${1:?usage: report.sh DB}
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
-- the greedy configuration of the state the slot ran in (rrl.state at the previous slot's end;
-- the first slot's is the mean load's bin, 5), priced by E1's table
st AS (
  SELECT run_id, t_s, COALESCE(LAG(value) OVER (PARTITION BY run_id ORDER BY t_s), 5) AS s
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
  FROM c JOIN st ON st.run_id = c.run_id AND st.t_s = c.t_s AND st.s = 5
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

WITH pr AS (
  SELECT p.run_id, COALESCE(json_extract(p.settings_json, '$.case'), 'oracle') AS policy
  FROM sweep_points p WHERE p.sweep LIKE 'rrl_e2_compare@%' OR p.sweep LIKE 'rrl_e2_oracle@%'),
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
SELECT policy AS "E2 vs comparators", COUNT(*) AS seeds, CAST(AVG(nslots) AS INT) AS slots,
       printf('%.1f', AVG(mean_ms)) AS run_mean_ms, printf('%.3f', AVG(bad_rate)) AS bad_rate,
       printf('%.1f', AVG(final)) AS last200_ms,
       printf('%+.0f%%', 100 * (AVG(final) / (SELECT o FROM oracle) - 1)) AS vs_oracle,
       CAST(AVG(COALESCE(last_off + 1, 1)) AS INT) AS conv_slot,
       printf('%d of %d', SUM(COALESCE(last_far, 0) < nslots), COUNT(*)) AS within_1_5x,
       COALESCE(CAST(AVG(CASE WHEN COALESCE(last_far, 0) < nslots THEN COALESCE(last_far + 1, 1) END) AS INT), '-') AS from_slot
FROM per GROUP BY policy
ORDER BY CASE policy WHEN 'oracle' THEN 0 WHEN 'rrl' THEN 1 WHEN 'q_learning' THEN 2 WHEN 'capes' THEN 3 WHEN 'deeprm' THEN 4 ELSE 5 END;
SQL
