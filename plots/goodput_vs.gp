# goodput_vs.gp — goodput against one config value (GPUs, SLO, ...): a line per policy and
# setting, error bars = sd over seeds. servesim plot sets the terminal and output, then defines:
# datafile, plottitle, xlab, ylab, keyfont, nser, sercolour[i] and serdash[i] (series i's policy colour
# and dash type).
# datafile: one block per series (two blank lines between), its first row the series' title,
# then rows "x mean sd used_mean used_sd" (used: the GPUs the policy ran batches on, "?" where
# unknown); goodput-gpus labels a point whose policy left GPUs idle with how many it used.
set datafile missing "?"
set datafile separator tab
set title plottitle
set xlabel xlab
set ylabel ylab
set yrange [0:*]
set grid
# the key below the plot, in the tick labels' size (keyfont: smaller only where its longest
# title would not fit the width); a series in its policy's colour
# (sercolour[i]), each series its own dash type (serdash[i]): identical data stays visible
keyfontspec = sprintf(",%d", keyfont)
set key below height 1 font keyfontspec
plot for [i=0:nser-1] datafile index i using 1:2:3 with yerrorlines lw 2 pt 7 ps 0.8 \
         lc rgb sercolour[i + 1] dt serdash[i + 1] title columnhead(1), \
     for [i=0:nser-1] datafile index i using 1:2:((xlab eq "GPUs" && valid(4) && $4 < $1) ? sprintf("%g used", $4) : "") \
         with labels offset 0,1 font ",8" notitle
