#!/usr/bin/env bash
# figures.sh DB OUTDIR — the RRL experiments' figures (README.md here) with gnuplot:
#  e2_convergence.png: the slot cost's 20-slot moving mean against the slot, averaged over
#      seeds, one line per region radius (E2), with the best static configuration of E1;
#  e1_landscape.png: mean latency over (k, p) at t = 1 and over (k, t) at p = 1 (E1);
#  e2_compare.png: E2 against the comparators and the oracle: the slot cost's 100-slot moving
#      mean, averaged over seeds, one line per policy;
#  e3_e6_cost.png: E3 (WiKi), E4 (Dynamic), E5 (tail) and E6 (resource), seed 1: the slot
#      cost (20-slot moving mean) of the oracle, rrl (both forms) and the deep-RL comparators
#      over the run, with the load on the right axis (Q-learning and tf_default, above 1 s most
#      of the run, are left to the tables); gpu_cost.png and ds_cost.png: the same for the GPU
#      node's and the DeepSpeech-like CPU node's sweeps;
#  e5_ccdf.png: E5's latency CCDF per policy (all seeds' requests), with the strict SLO.
# Each figure is drawn when the database holds its sweep.
set -euo pipefail
db=${1:?usage: figures.sh DB OUTDIR}
out=${2:?usage: figures.sh DB OUTDIR}
mkdir -p "$out"
sqlite3 -separator ' ' "$db" > "$out/e2_convergence.dat" <<'SQL'
WITH c AS (
  SELECT t.run_id, ROW_NUMBER() OVER (PARTITION BY t.run_id ORDER BY t.t_s) AS slot, t.value AS r,
         json_extract(p.settings_json, '$."policy.params.radius"') AS radius
  FROM timeseries t JOIN sweep_points p ON p.run_id = t.run_id
  WHERE t.series = 'rrl.cost' AND p.sweep LIKE 'rrl_e2_radius@%'),
ma AS (
  SELECT radius, slot, AVG(r) OVER (PARTITION BY run_id ORDER BY slot ROWS BETWEEN 19 PRECEDING AND CURRENT ROW) AS ma
  FROM c)
SELECT printf('%.3g', radius), slot, AVG(ma) FROM ma GROUP BY radius, slot ORDER BY radius, slot;
SQL
best=$(sqlite3 "$db" "SELECT MIN(m.mean_ms) FROM sweep_points p JOIN model_stats m ON m.run_id = p.run_id WHERE p.sweep LIKE 'rrl_e1_landscape@%'")
sqlite3 -separator ' ' "$db" > "$out/e1_landscape.dat" <<'SQL'
SELECT json_extract(p.settings_json, '$."policy.params.config[0]"'),
       json_extract(p.settings_json, '$."policy.params.config[1]"'),
       json_extract(p.settings_json, '$."policy.params.config[2]"'), m.mean_ms
FROM sweep_points p JOIN model_stats m ON m.run_id = p.run_id
WHERE p.sweep LIKE 'rrl_e1_landscape@%' ORDER BY 1, 2, 3;
SQL
drawn=""
if [ -s "$out/e2_convergence.dat" ]; then
drawn="$drawn $out/e2_convergence.png"
gnuplot <<EOF2
set terminal pngcairo size 900,560 font ",11"
set output "$out/e2_convergence.png"
set title "E2: convergence against region radius (CPU Inception-V3, 10 cores, 0.6 capacity; mean of 5 seeds)"
set xlabel "slot (100 requests each)"
set ylabel "slot mean latency, 20-slot moving mean (ms)"
set logscale y
set key top right
set grid
$( [ -n "$best" ] && echo "set arrow from graph 0, first $best to graph 1, first $best nohead dt 2 lc rgb 'black'" )
$( [ -n "$best" ] && echo "set label 'best static (E1)' at graph 0.02, first $best offset 0,0.7" )
set xrange [0:*]
plot for [r in "0 1 1.41 2 3"] "< awk '\$1 == \"" . r . "\"' $out/e2_convergence.dat" using 2:3 with lines lw 2 title "radius " . r
EOF2
fi
if [ -s "$out/e1_landscape.dat" ]; then
drawn="$drawn $out/e1_landscape.png"
gnuplot <<EOF2
set terminal pngcairo size 1100,480 font ",11"
set output "$out/e1_landscape.png"
set multiplot layout 1,2 title "E1: mean latency of every static configuration (CPU Inception-V3, 10 cores, 46 req/s)"
set logscale cb
set cbrange [50:200000]
set xrange [0.5:10.5]; set yrange [0.5:10.5]
set xtics 1; set ytics 1
set style fill solid noborder
set xlabel "k (requests in service)"
set ylabel "p (inter-op threads)"
set title "t = 1"
unset colorbox
plot "< awk '\$3 == 1' $out/e1_landscape.dat" using 1:2:(0.5):(0.5):4 with boxxyerror lc palette notitle
set colorbox
set cblabel "mean latency (ms), log scale"
set ylabel "t (intra-op threads)"
set title "p = 1"
plot "< awk '\$2 == 1' $out/e1_landscape.dat" using 1:3:(0.5):(0.5):4 with boxxyerror lc palette notitle
unset multiplot
EOF2
fi

POLICIES="oracle rrl rrl_per_bin q_learning capes deeprm tf_default"
PANEL_POLICIES="oracle rrl rrl_per_bin capes deeprm"   # (Q-learning and tf_default: the tables)
# slot_cost SWEEP SEED-CONDITION WINDOW: "case slot cost" rows, the slot cost's moving mean
# over WINDOW slots (slot = t / slot length), averaged over the runs the condition selects
slot_cost() {
  sqlite3 -separator ' ' "$db" <<SQL
WITH pr AS (
  SELECT p.run_id, json_extract(p.settings_json, '\$.case') AS policy,
         COALESCE(json_extract(r.config_json, '\$.policy.params.slot_s'),
                  100.0 / json_extract(r.config_json, '\$.workload.rate_rps'),
                  100.0 / r.offered_rps) AS slot_s
  FROM sweep_points p JOIN runs r ON r.id = p.run_id
  WHERE p.sweep LIKE '$1@%' AND $2),
c AS (
  SELECT pr.policy, t.run_id, CAST(ROUND(t.t_s / pr.slot_s) AS INT) AS slot,
         AVG(t.value) OVER (PARTITION BY t.run_id ORDER BY t.t_s ROWS BETWEEN $(($3 - 1)) PRECEDING AND CURRENT ROW) AS ma
  FROM timeseries t JOIN pr USING (run_id) WHERE t.series = 'rrl.cost')
SELECT policy, slot, AVG(ma) FROM c GROUP BY policy, slot ORDER BY policy, slot;
SQL
}
# load SWEEP: "slot req/s" of the oracle's seed-1 run (20-slot moving mean)
load() {
  sqlite3 -separator ' ' "$db" <<SQL
WITH pr AS (
  SELECT p.run_id, COALESCE(json_extract(r.config_json, '\$.policy.params.slot_s'),
                            100.0 / json_extract(r.config_json, '\$.workload.rate_rps'),
                            100.0 / r.offered_rps) AS slot_s
  FROM sweep_points p JOIN runs r ON r.id = p.run_id
  WHERE p.sweep LIKE '$1@%' AND json_extract(p.settings_json, '\$.case') = 'oracle' AND r.seed = 1)
SELECT CAST(ROUND(t.t_s / pr.slot_s) AS INT),
       AVG(t.value) OVER (ORDER BY t.t_s ROWS BETWEEN 19 PRECEDING AND CURRENT ROW)
FROM timeseries t JOIN pr USING (run_id) WHERE t.series = 'rrl.load_rps' ORDER BY t.t_s;
SQL
}
slot_cost rrl_e2_compare 1 100 > "$out/e2_compare.dat"
if [ -s "$out/e2_compare.dat" ]; then
drawn="$drawn $out/e2_compare.png"
gnuplot <<EOF2
set terminal pngcairo size 900,560 font ",11" noenhanced
set output "$out/e2_compare.png"
set title "E2: RRL against its comparators and the oracle (CPU Inception-V3, 10 cores, 46 req/s; mean of 5 seeds)"
set xlabel "slot (100 requests each)"
set ylabel "slot mean latency, 100-slot moving mean (ms)"
set logscale y
set key top right
set grid
set xrange [0:2030]
plot for [p in "$POLICIES"] "< awk '\$1 == \"" . p . "\"' $out/e2_compare.dat" using 2:3 with lines lw 2 title p
EOF2
fi
# panels NAME TITLE "SWEEP:panel title"...: a 2 x 2 figure NAME.png of the seed-1 slot cost
# of PANEL_POLICIES in each sweep the database holds, with the load on the right axis
panels() {
  local name=$1 title=$2 gp="$out/$1.gp" e sw ylab yr plot p ymax
  shift 2
  : > "$gp"
  for e in "$@"; do
    sw=${e%%:*}
    slot_cost "$sw" "r.seed = 1" 20 > "$out/$sw.dat"
    load "$sw" > "$out/$sw.load.dat"
    [ -s "$out/$sw.dat" ] || continue
    ylab="slot mean latency (ms)"
    case $sw in
      *tail*) ylab="slot p95 latency (ms)";;
      *resource_gpu*) ylab="slot cost (GPU busy fraction within the SLO, else 1 + latency / SLO)";;
      *resource*) ylab="slot cost (cores busy / 10 within the SLO, else 1 + latency / SLO)";;
    esac
    ymax=$(awk 'BEGIN {m = 0} $2 > m {m = $2} END {print 2 * m}' "$out/$sw.load.dat")
    plot="plot"
    for p in $PANEL_POLICIES; do
      awk -v p="$p" '$1 == p {print $2, $3}' "$out/$sw.dat" > "$out/$sw.$p.dat"
      plot="$plot '$out/$sw.$p.dat' using 1:2 with lines lw 1.5 title '$p',"
    done
    # (y: log scale from a power of 10 below the least to 20x the most, room for the key)
    yr=$(for p in $PANEL_POLICIES; do cat "$out/$sw.$p.dat"; done |
         awk 'NR == 1 {lo = $2; hi = $2} {lo = $2 < lo ? $2 : lo; hi = $2 > hi ? $2 : hi}
              END {e = int(log(lo) / log(10) + 10) - 10; printf "[%g:%g]", 10 ^ e, 20 * hi}')
    plot="set yrange $yr; set y2range [0:$ymax]; $plot"
    printf "set title '%s'\nset ylabel '%s'\n%s '%s' using 1:2 axes x1y2 with lines lc rgb '#888888' dt 2 title 'load (req/s, right)'\n" \
      "${e#*:}" "$ylab" "$plot" "$out/$sw.load.dat" >> "$gp"
  done
  [ -s "$gp" ] || return 0
  drawn="$drawn $out/$name.png"
  gnuplot <<EOF2
set terminal pngcairo size 1400,950 font ",10" noenhanced
set output "$out/$name.png"
set multiplot layout 2,2 title "$title"
set xlabel "slot (100 requests at the mean rate)"
set logscale y
set y2tics
set ytics nomirror
set key top left font ",9" maxrows 2 samplen 2 width -4
set grid
set xrange [0:2030]
load "$gp"
unset multiplot
EOF2
}
panels e3_e6_cost "RRL, its deep-RL comparators and the oracle under moving load (CPU Inception-V3, 10 cores, mean 46 req/s; seed 1, 20-slot moving means)" \
  "rrl_e3_wiki:E3 WiKi (mean latency)" "rrl_e4_dynamic:E4 Dynamic (mean latency)" \
  "rrl_e5_tail:E5 Dynamic, tail objective (slot p95)" "rrl_e6_resource:E6 Dynamic, resource objective"
panels gpu_cost "The same on the GPU node (Inception-V3 on a 1080 Ti, mean 276 req/s; seed 1, 20-slot moving means)" \
  "rrl_e3_wiki_gpu:E3 WiKi, GPU (mean latency)" "rrl_e4_dynamic_gpu:E4 Dynamic, GPU (mean latency)" \
  "rrl_e5_tail_gpu:E5 Dynamic, GPU, tail objective (slot p95)" "rrl_e6_resource_gpu:E6 Dynamic, GPU, resource objective"
panels ds_cost "The DeepSpeech-like CPU node (request sizes lognormal, cv 0.6; pi 1; mean 46 req/s; seed 1, 20-slot moving means)" \
  "rrl_e3_wiki_ds:E3 WiKi, DeepSpeech-like (mean latency)" "rrl_e4_dynamic_ds:E4 Dynamic, DeepSpeech-like (mean latency)" \
  "rrl_e6_resource_ds:E6 Dynamic, DeepSpeech-like, resource objective"
sqlite3 -separator ' ' "$db" > "$out/e5_ccdf.dat" <<'SQL'
WITH h AS (
  SELECT json_extract(p.settings_json, '$.case') AS policy, l.hi_ms, SUM(l.count) AS n
  FROM sweep_points p JOIN latency_hist l ON l.run_id = p.run_id
  WHERE p.sweep LIKE 'rrl_e5_tail@%' GROUP BY policy, l.hi_ms),
tot AS (SELECT policy, SUM(n) AS total FROM h GROUP BY policy)
SELECT h.policy, h.hi_ms,
       1.0 - CAST(SUM(h.n) OVER (PARTITION BY h.policy ORDER BY h.hi_ms) AS REAL) / tot.total
FROM h JOIN tot USING (policy) ORDER BY h.policy, h.hi_ms;
SQL
slo=$(sqlite3 "$db" "SELECT json_extract(r.config_json, '\$.policy.params.slo_ms') FROM sweep_points p JOIN runs r ON r.id = p.run_id WHERE p.sweep LIKE 'rrl_e5_tail@%' LIMIT 1")
if [ -s "$out/e5_ccdf.dat" ]; then
drawn="$drawn $out/e5_ccdf.png"
gnuplot <<EOF2
set terminal pngcairo size 900,560 font ",11" noenhanced
set output "$out/e5_ccdf.png"
set title "E5: latency CCDF, tail objective on Dynamic load (CPU Inception-V3; all requests of 5 seeds)"
set xlabel "latency (ms)"
set ylabel "fraction of requests slower"
set logscale xy
set format y "%g"
set yrange [1e-5:1]
set key bottom left
set grid
set arrow from $slo, graph 0 to $slo, graph 1 nohead dt 2 lc rgb 'black'
set label "strict SLO $slo ms" at $slo, graph 0.06 offset 0.5,0
plot for [p in "$POLICIES"] "< awk '\$1 == \"" . p . "\" && \$3 > 0' $out/e5_ccdf.dat" using 2:3 with steps lw 2 title p
EOF2
fi
echo "figures:$drawn"
