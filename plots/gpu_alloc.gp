# gpu_alloc.gp — GPUs by use over time, stacked: inference executors (pods, starting ones
# included), training workers, notebooks' shares, idle; a panel per configuration. servesim
# plot sets the terminal and output, then defines: datafile, plottitle, npan, ptitle[1..npan]
# (the panels' titles), xmax (the longest run's end, s), xstep (time tick step). datafile: one block per panel (two blank lines between), rows
# "time (s), inference, training, modeling, idle" (GPUs).
set datafile separator tab
cols = (npan > 1) ? 2 : 1
rows = int((npan + cols - 1) / cols)
# panels placed by hand: they share the time axis (xmax: the longest run) and leave a strip at
# the bottom to one key for all
keyh = 0.06
top = 0.95
ph = (top - keyh) / rows
pw = 1.0 / cols
set multiplot title plottitle
set style fill solid 0.9 noborder
set grid front
set xrange [0:xmax]
set xtics xstep
set yrange [0:*]
set ylabel "GPUs"
unset key
do for [i=1:npan] {
  set origin ((i - 1) % cols) * pw, top - (int((i - 1) / cols) + 1) * ph
  set size pw, ph
  set title ptitle[i]
  if (i <= npan - cols) { set xlabel "" } else { set xlabel "time (s)" }
  plot datafile index (i - 1) using 1:($2 + $3 + $4 + $5) with filledcurves x1 lc rgb "#d9d9d9", \
       '' index (i - 1) using 1:($2 + $3 + $4) with filledcurves x1 lc rgb "#59a14f", \
       '' index (i - 1) using 1:($2 + $3) with filledcurves x1 lc rgb "#f28e2b", \
       '' index (i - 1) using 1:2 with filledcurves x1 lc rgb "#4e79a7"
}
# the key: an empty plot across the bottom strip
set origin 0, 0
set size 1, keyh
unset border
unset tics
unset grid
unset title
set xlabel ""
set ylabel ""
set xrange [0:1]
set yrange [1:2]
set key center center horizontal samplen 2
plot -1 with filledcurves x1 lc rgb "#4e79a7" title "inference", \
     -1 with filledcurves x1 lc rgb "#f28e2b" title "training", \
     -1 with filledcurves x1 lc rgb "#59a14f" title "notebooks", \
     -1 with filledcurves x1 lc rgb "#d9d9d9" title "idle"
unset multiplot
