# goodput_vs.gp — goodput against one config value (GPUs, SLO, ...): a line per policy and
# setting, error bars = sd over seeds; with many lines of a few settings, a panel per setting
# and a line per policy. servesim plot sets the terminal and output, then defines: datafile,
# plottitle, xlab, ylab, keyfont, nser, sercolour[i] and serdash[i] (block i's policy colour
# and dash type), ymax, xlo, xhi (the data's range), npanel; with npanel > 1 also prow, pcol,
# hpx (the image's height), ptitle[k], pstart[k] and pcount[k] (panel k's blocks), npol,
# polname[j], polcolour[j] (the legend).
# datafile: one block per series (two blank lines between; by panel, then policy), its first
# row the series' title, then rows "x mean sd used_mean used_sd" (used: the GPUs the policy ran
# batches on, "?" where unknown); goodput-gpus labels a point whose policy left GPUs idle with
# how many it used.
set datafile missing "?"
set datafile separator tab
set xlabel xlab
set grid
keyfontspec = sprintf(",%d", keyfont)
usedlabel(i) = (xlab eq "GPUs" && valid(4) && $4 < $1) ? sprintf("%g used", $4) : ""
if (npanel == 1) {
    # the key below the plot, in the tick labels' size (keyfont: smaller only where its
    # longest title would not fit the width); a series in its policy's colour, each its own
    # dash type: identical data stays visible
    set title plottitle
    set ylabel ylab
    set yrange [0:*]
    set key below height 1 font keyfontspec
    plot for [i=0:nser-1] datafile index i using 1:2:3 with yerrorlines lw 2 pt 7 ps 0.8 \
             lc rgb sercolour[i + 1] dt serdash[i + 1] title columnhead(1), \
         for [i=0:nser-1] datafile index i using 1:2:(usedlabel(i)) \
             with labels offset 0,1 font ",8" notitle
} else {
    # small multiples: one x and y scale for all, the y axis titled on the left column, the
    # x axis on the bottom row, the legend (a policy each) once under the title
    set yrange [0:ymax]
    set xrange [xlo:xhi]
    set offsets graph 0.03, graph 0.03, 0, 0
    pleft = 0.14; pright = 0.97; pbottom = 70.0 / hpx
    ptop = 1 - (100.0 + 20 * ptlines + 22 * (keyrows - 1)) / hpx
    pgapx = 0.11; pgapy = (70.0 + 20 * ptlines) / hpx
    set multiplot title plottitle
    do for [k = 1:npanel] {
        eval panel(k)
        set title ptitle[k]
        if ((k - 1) % pcol == 0) { set ylabel ylab } else { unset ylabel }
        if (k > npanel - pcol) { set xlabel xlab } else { unset xlabel }
        plot for [i=pstart[k]:pstart[k]+pcount[k]-1] datafile index i using 1:2:3 \
                 with yerrorlines lw 2 pt 7 ps 0.8 lc rgb sercolour[i + 1] dt serdash[i + 1] notitle, \
             for [i=pstart[k]:pstart[k]+pcount[k]-1] datafile index i using 1:2:(usedlabel(i)) \
                 with labels offset 0,1 font ",8" notitle
    }
    eval panelkey(0)
    plot for [j=1:npol] -1 with lines lw 2 lc rgb polcolour[j] dt int(1 + (j - 1) % 5) title polname[j]
    unset multiplot
}
