#!/usr/bin/env bash
# plot.sh — the simulator's error against a real serving loop, by utilisation: from the rows
# `servesim-calibrate validate --tsv` appends (one per load; several runs, networks and thread
# counts in one file). Three panels: the relative error of the mean and of the p99 latency —
# of the calibrated profile (filled points, one colour per network and thread count; each run
# its own points) and of the simulator given the service times the real passes showed
# ("observed", hollow) — and the noise floor: the simulator's own spread over other arrival
# sequences of the same length (relative sd; rows written before validate reported it have
# none).
#   experiments/calibration/plot.sh FILE.tsv OUT.png
set -euo pipefail
tsv=$1 out=$2
command -v gnuplot > /dev/null || { echo "plot.sh: gnuplot is not installed" >&2; exit 2; }
[ -s "$tsv" ] || { echo "plot.sh: $tsv: no rows" >&2; exit 2; }
dat=$(mktemp)
trap 'rm -f "$dat"' EXIT
# one gnuplot data block per network@threads: util, mean err, p99 err, obs mean err, obs p99
# err, noise of the mean, of the p99 (%; NaN where the row has no noise columns)
awk -F'\t' 'NR > 1 { print $1 "@" $2 "\t" $0 }' "$tsv" | sort -t$'\t' -k1,1 -k4,4n |
  awk -F'\t' '
    { g = $1; if (g != last) { if (NR > 1) printf "\n\n"; printf "# %s\n", g; last = g; n++ }
      nm = NF >= 20 ? sprintf("%.3f", 100 * $20) : "NaN"
      np = NF >= 21 ? sprintf("%.3f", 100 * $21) : "NaN"
      printf "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t%s\n", g, $6, 100 * ($9 / $8 - 1),
             100 * ($15 / $14 - 1), 100 * ($10 / $8 - 1), 100 * ($16 / $14 - 1), nm, np }
  ' > "$dat"
groups=$(grep -c '^# ' "$dat")
titles=$(grep '^# ' "$dat" | sed 's/^# //; s/@\([0-9]*\)$/@\1t/' | tr '\n' ' ')
gnuplot <<GP
set terminal pngcairo size 1500,520 font "Sans,11" noenhanced
set output "$out"
set datafile separator "\t"
set datafile missing "NaN"
set multiplot layout 1,3 title "simulator against a real serving loop (servesim-calibrate validate; NET@Nt: N threads)"
set grid
set xlabel "utilisation of the real server"
set xrange [0:1]
set key top left font "Sans,9"
titles = "$titles"
set ylabel "relative error (%)"
set title "mean latency (filled: profile, hollow: observed)"
plot for [i=0:$groups-1] "$dat" index i using 2:3 with points pt 7 ps 1.1 lc i+1 notitle, \
     for [i=0:$groups-1] "$dat" index i using 2:5 with points pt 6 ps 1.1 lc i+1 notitle, \
     5 with lines dt 2 lc "gray" notitle, -5 with lines dt 2 lc "gray" notitle
set title "p99 latency (filled: profile, hollow: observed)"
plot for [i=0:$groups-1] "$dat" index i using 2:4 with points pt 7 ps 1.1 lc i+1 notitle, \
     for [i=0:$groups-1] "$dat" index i using 2:6 with points pt 6 ps 1.1 lc i+1 notitle, \
     5 with lines dt 2 lc "gray" notitle, -5 with lines dt 2 lc "gray" notitle
set title "noise floor: the simulator's spread (filled: mean, hollow: p99)"
set ylabel "relative sd over 10 arrival sequences (%)"
set yrange [0:*]
plot for [i=0:$groups-1] "$dat" index i using 2:7 with points pt 7 ps 1.1 lc i+1 title word(titles, i+1), \
     for [i=0:$groups-1] "$dat" index i using 2:8 with points pt 6 ps 1.1 lc i+1 notitle, \
     5 with lines dt 2 lc "gray" notitle
unset multiplot
GP
echo "plot.sh: $out"
