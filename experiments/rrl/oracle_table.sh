#!/usr/bin/env bash
# oracle_table.sh DB [SWEEP] > table.json — the oracle's table (rrl_table/1, docs/policies.md)
# from a results database holding a sweep of rrl-static over a grid and a set of rates
# (oracle.sweep.json, the default SWEEP name rrl_oracle_table): per rate and configuration
# (CPU [k, p, t], GPU [B, T_ms, m]), the mean slot cost (rrl.cost) over the measured slots
# (after the first 5), averaged over seeds; null where a configuration has no measured slot. The grid is the sorted values of
# each knob that the sweep ran, in grid-index order (first knob slowest). The device and the
# objective (and the tail_pct or slo_ms its costs depend on) are the runs' policy.params.
set -euo pipefail
db=${1:?usage: oracle_table.sh DB [SWEEP] > table.json}
sweep=${2:-rrl_oracle_table}
sqlite3 -batch -noheader "$db" <<SQL
WITH pts AS (
  SELECT p.run_id,
         CAST(json_extract(p.settings_json, '\$."workload.rate_rps"') AS REAL) AS rate,
         json_extract(p.settings_json, '\$."policy.params.config[0]"') AS k,
         json_extract(p.settings_json, '\$."policy.params.config[1]"') AS p,
         json_extract(p.settings_json, '\$."policy.params.config[2]"') AS t
  FROM sweep_points p WHERE p.sweep LIKE '${sweep}@%'),
slots AS (
  SELECT run_id, value, ROW_NUMBER() OVER (PARTITION BY run_id ORDER BY t_s) AS i
  FROM timeseries WHERE series = 'rrl.cost' AND run_id IN (SELECT run_id FROM pts)),
per_run AS (SELECT run_id, AVG(value) AS c FROM slots WHERE i > 5 GROUP BY run_id),
cells AS (
  SELECT r.rate, kk.k, pp.p, tt.t,
         (SELECT AVG(c) FROM pts x JOIN per_run USING (run_id)
          WHERE x.rate = r.rate AND x.k = kk.k AND x.p = pp.p AND x.t = tt.t) AS c
  FROM (SELECT DISTINCT rate FROM pts) r, (SELECT DISTINCT k FROM pts) kk,
       (SELECT DISTINCT p FROM pts) pp, (SELECT DISTINCT t FROM pts) tt),
obj AS (
  SELECT COALESCE(json_extract(r.config_json, '\$.policy.params.objective'), 'latency') AS o,
         COALESCE(json_extract(r.config_json, '\$.policy.params.device'), 'gpu') AS dev,
         COALESCE(json_extract(r.config_json, '\$.policy.params.tail_pct'), 95) AS pct,
         COALESCE(json_extract(r.config_json, '\$.policy.params.slo_ms'),
                  json_extract(r.config_json, '\$.models[0].slo_ms')) AS slo
  FROM runs r WHERE r.id = (SELECT MIN(run_id) FROM pts)),
rows AS (
  SELECT rate, json_group_array(c) AS costs
  FROM (SELECT * FROM cells ORDER BY rate, k, p, t) GROUP BY rate)
SELECT json_patch(json_object(
  'format', 'rrl_table/1', 'device', (SELECT dev FROM obj), 'objective', (SELECT o FROM obj),
  'source', 'experiments/rrl, sweep ${sweep}: mean slot cost over slots 6-25, mean of seeds',
  'grid', json_array(
     (SELECT json_group_array(k) FROM (SELECT DISTINCT k FROM pts ORDER BY k)),
     (SELECT json_group_array(p) FROM (SELECT DISTINCT p FROM pts ORDER BY p)),
     (SELECT json_group_array(t) FROM (SELECT DISTINCT t FROM pts ORDER BY t))),
  'rates', (SELECT json_group_array(rate) FROM (SELECT rate FROM rows ORDER BY rate)),
  'cost', (SELECT json_group_array(json(costs)) FROM (SELECT costs FROM rows ORDER BY rate))),
  CASE (SELECT o FROM obj) WHEN 'tail' THEN json_object('tail_pct', (SELECT pct FROM obj))
                           WHEN 'resource' THEN json_object('slo_ms', (SELECT slo FROM obj))
                           ELSE '{}' END)
WHERE (SELECT COUNT(*) FROM pts) > 0;
SQL
