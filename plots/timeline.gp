# timeline.gp — one run over time, panels sharing the time axis: offered vs on-time rate;
# GPUs in use and billed; bad rate and idle fraction; autoscaler actions (GPUs added up,
# removed down; only for runs with an autoscaler). servesim plot sets the terminal and
# output, then defines: datafile, plottitle, runwhat (the run's policy and settings, the
# title's second line), as_any (1: the run has autoscaler series).
# datafile columns: t_s offered_rps ontime_rps executors gpus_billed bad_rate idle_frac
# autoscale_add autoscale_remove ("?" where the run has no such series).
set datafile missing "?"
set datafile separator tab
set multiplot layout (as_any ? 4 : 3),1 title plottitle . "\n" . runwhat
set grid
# each panel's key on one line above it, so that the panels keep the figure's width
set key outside top center horizontal samplen 3
set lmargin 12
set rmargin 4
set xlabel ""
set ylabel "rate (req/s)"
set yrange [0:*]
plot datafile using 1:2 with lines lw 2 title "offered", \
     datafile using 1:3 with lines lw 2 title "served on time"
set ylabel "GPUs"
set offsets 0, 0, 0.5, 0
plot datafile using 1:5 with steps lw 4 lc rgb "#bab0ac" title "billed", \
     datafile using 1:4 with steps lw 2 lc rgb "#4e79a7" title "in use"
set offsets 0, 0, 0, 0
set ylabel "fraction"
set yrange [0:1]
if (!as_any) set xlabel "time (s)"
plot datafile using 1:6 with lines lw 2 title "late or dropped", \
     datafile using 1:7 with lines lw 2 dt 2 title "GPU time idle"
if (as_any) {
  set xlabel "time (s)"
  set ylabel "GPUs"
  set autoscale y
  plot datafile using 1:8 with impulses lw 3 title "autoscaler: added", \
       datafile using 1:(-column(9)) with impulses lw 3 title "autoscaler: removed", \
       0 with lines lc "black" notitle
}
unset multiplot
