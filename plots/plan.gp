# plan.gp — a capacity plan (servesim plan): GPUs over time of the static plan's run and of the
# autoscaled run, with the offered load on the right axis; the legend gives each one's
# GPU-hours. servesim plot sets the terminal and output, then defines: datafile, plottitle,
# stat_title, as_title, has_as (1: the plan has an autoscaled run), polcolour (the plan's
# policy's colour: the static plan dashed, the autoscaled run solid).
# datafile columns: t_s, static GPUs, autoscaled GPUs, offered req/s ("?" where absent).
set datafile missing "?"
set datafile separator tab
set title plottitle
set xlabel "time (s)"
set ylabel "GPUs"
set y2label "offered load (req/s)"
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
set offsets 0, 0, 1, 0
set grid
set key below height 1
set autoscale xfix
if (has_as) {
  plot datafile using 1:4 axes x1y2 with lines lw 2 dt 1 lc rgb "#bab0ac" title "offered load (right axis)", \
       datafile using 1:2 with steps lw 2 dt 2 lc rgb polcolour title stat_title, \
       datafile using 1:3 with steps lw 2 dt 1 lc rgb polcolour title as_title
} else {
  plot datafile using 1:4 axes x1y2 with lines lw 2 dt 1 lc rgb "#bab0ac" title "offered load (right axis)", \
       datafile using 1:2 with steps lw 2 dt 2 lc rgb polcolour title stat_title
}
