# cdf.gp — a distribution as a CDF (latency or queueing delay per model and policy, on a log
# time axis, from the log-linear histograms in the database; training jobs' execution times,
# linear); with more than a few lines of a few settings, a panel per setting (a model, a case)
# and a line per policy. servesim plot sets the terminal and output, then defines: datafile,
# plottitle, xlab, ylab, nser, sercolour[i] and serdash[i] (block i's colour and dash type),
# slo (0: no SLO line), logx (1: log x axis), xlo, xhi (the data's range), npanel; with npanel > 1 also prow, pcol, hpx,
# ptitle[k], ptlines, pstart[k] and pcount[k] (panel k's blocks), npol, polname[j],
# polcolour[j], panel(k) and panelkey (plot_panels.c).
# datafile: one block per series (two blank lines between; by panel, then policy), its first
# row the series' title, then rows "upper bucket edge, fraction <= it".
set datafile separator tab
set xlabel xlab
set ylabel ylab
# a log axis gets a labelled tick at 1, 2, 3 and 5 of every decade (gnuplot's own: one per
# decade, often a single label over the range of a latency CDF); at 1 and 3 in panels side by
# side, and over a range wider than three and a half decades (TTFT past saturation)
if (logx) {
    set logscale x
    set xtics ()
    wide = (xlo > 0 && xhi / xlo > 3000)      # over three and a half decades: 1-2-3-5 crowds
    do for [e=-3:7] {
        if ((npanel > 1 && pcol > 1) || wide) {
            set xtics add (sprintf("%g", 10.0**e) 10.0**e, sprintf("%g", 3*10.0**e) 3*10.0**e)
        } else {
            set xtics add (sprintf("%g", 10.0**e) 10.0**e, sprintf("%g", 2*10.0**e) 2*10.0**e, sprintf("%g", 3*10.0**e) 3*10.0**e, sprintf("%g", 5*10.0**e) 5*10.0**e)
        }
    }
    set mxtics 10
}
set autoscale xfix
if (!logx) set offsets graph 0.02, graph 0.02, 0, 0    # a rise at an end stays in sight
set yrange [0:1.02]
set grid
if (slo > 0) set arrow 1 from slo, graph 0 to slo, graph 1 nohead dt 2 lc "black"; set label 1 sprintf("SLO %g ms", slo) at slo, graph 0.04 rotate by 90 left offset -0.6, 0 front
if (npanel == 1) {
    # the legend in columns below the plot, so that many lines leave the plot its room
    set title plottitle
    set key below horizontal maxrows 4 height 1
    plot for [i=0:nser-1] datafile index i using 1:2 with steps lw 2 lc rgb sercolour[i + 1] \
             dt serdash[i + 1] title columnhead(1)
} else {
    # small multiples: one x scale for all (the data's), the y axis titled on the left column,
    # the x axis on the bottom row, the legend (a policy each) once under the title
    set xrange [xlo:xhi]
    pleft = 0.12; pright = 0.97; pbottom = 70.0 / hpx
    ptop = 1 - (100.0 + 20 * ptlines + 22 * (keyrows - 1)) / hpx
    pgapx = 0.09; pgapy = (70.0 + 20 * ptlines) / hpx
    set multiplot title plottitle
    do for [k = 1:npanel] {
        eval panel(k)
        set title ptitle[k]
        if ((k - 1) % pcol == 0) { set ylabel ylab } else { unset ylabel }
        if (k > npanel - pcol) { set xlabel xlab } else { unset xlabel }
        plot for [i=pstart[k]:pstart[k]+pcount[k]-1] datafile index i using 1:2 with steps lw 2 \
                 lc rgb sercolour[i + 1] dt serdash[i + 1] notitle
    }
    eval panelkey(0)
    plot for [j=1:npol] -1 with lines lw 2 lc rgb polcolour[j] dt int(1 + (j - 1) % 5) title polname[j]
    unset multiplot
}
