#!/usr/bin/env bash
# figures.sh DB OUTDIR — the RRL experiments' figures (README.md here) with gnuplot:
#  e2_convergence.png: the slot cost's 20-slot moving mean against the slot, averaged over
#      seeds, one line per region radius (E2), with the best static configuration of E1;
#  e1_landscape.png: mean latency over (k, p) at t = 1 and over (k, t) at p = 1 (E1).
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
if [ -s "$out/e1_landscape.dat" ]; then
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
echo "figures: $out/e2_convergence.png${best:+ $out/e1_landscape.png}"
