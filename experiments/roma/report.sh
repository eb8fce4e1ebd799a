#!/usr/bin/env bash
# report.sh DB — ROMA's Table 2 from a results database of the roma sweeps (README.md here):
# per test and system, averaged over seeds: the mean, max and standard deviation of the apps'
# mean response times over 1-s windows (windows with completions; apps pooled), the SLA
# violations V (windows in which an app's mean response time exceeds its SLA) for 1-s and 10-s
# windows (10-s means weighted by each second's completions), and CPU core-seconds.
# Requests in flight at the end (drain) are not in any window past 300 s.
set -euo pipefail
db=${1:?usage: report.sh DB}
sqlite3 -header -column "$db" <<'SQL'
WITH resp AS (
  SELECT t.run_id, t.t_s, t.key AS app, t.value AS r
  FROM timeseries t WHERE t.series = 'roma.response_s' AND t.t_s <= 300),
cnt AS (
  SELECT run_id, t_s, key AS app, SUM(value) AS n
  FROM timeseries WHERE series IN ('roma.gpu_rps', 'roma.cpu_rps') AND t_s <= 300
  GROUP BY run_id, t_s, key),
win AS (                                  -- 1-s windows with completions
  SELECT resp.run_id, resp.t_s, resp.app, resp.r, cnt.n, m.slo_ms / 1000.0 AS sla
  FROM resp JOIN cnt USING (run_id, t_s, app)
  JOIN model_stats m ON m.run_id = resp.run_id AND m.model = resp.app
  WHERE cnt.n > 0),
w10 AS (
  SELECT run_id, app, CAST((t_s - 0.5) / 10 AS INT) AS blk, SUM(r * n) / SUM(n) AS r, MAX(sla) AS sla
  FROM win GROUP BY run_id, app, blk),
per_run AS (
  SELECT u.id, u.name, u.policy, u.seed, u.core_s,
         (SELECT AVG(r) FROM win WHERE win.run_id = u.id) AS mean_s,
         (SELECT MAX(r) FROM win WHERE win.run_id = u.id) AS max_s,
         (SELECT SQRT(AVG(r * r) - AVG(r) * AVG(r)) FROM win WHERE win.run_id = u.id) AS sd_s,
         (SELECT COUNT(*) FROM win WHERE win.run_id = u.id AND r > sla) AS v1,
         (SELECT COUNT(*) FROM w10 WHERE w10.run_id = u.id AND r > sla) AS v10
  FROM runs u WHERE u.policy IN ('roma', 'rr-ct', 'rr-rules', 'rr-max', 'rr-min'))
SELECT name AS test, policy AS system, COUNT(*) AS seeds,
       printf('%.3f', AVG(mean_s)) AS mean_s, printf('%.3f', AVG(max_s)) AS max_s,
       printf('%.3f', AVG(sd_s)) AS sd_s, printf('%.1f', AVG(v1)) AS V_1s,
       printf('%.1f', AVG(v10)) AS V_10s, SUM(v10) AS V_10s_sum, printf('%.0f', AVG(core_s)) AS core_s
FROM per_run GROUP BY name, policy
ORDER BY name, CASE policy WHEN 'roma' THEN 0 WHEN 'rr-ct' THEN 1 WHEN 'rr-rules' THEN 2
                           WHEN 'rr-max' THEN 3 ELSE 4 END;
SQL
