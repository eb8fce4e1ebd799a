# cdf.gp — a distribution as a CDF (latency or queueing delay per model and policy, on a log
# time axis, from the log-linear histograms in the database; training jobs' execution times,
# linear). servesim plot sets the terminal and output, then defines: datafile, plottitle,
# xlab, ylab, nser, slo (0: no SLO line), logx (1: log x axis).
# datafile: one block per series (two blank lines between), its first row the series' title,
# then rows "upper bucket edge, fraction <= it".
set datafile separator tab
set title plottitle
set xlabel xlab
set ylabel ylab
# a log axis gets a labelled tick at 1, 2 and 5 of every decade (gnuplot's own: one per decade,
# often a single label over the range of a latency CDF)
if (logx) {
    set logscale x
    set xtics ()
    do for [e=-3:7] {
        set xtics add (sprintf("%g", 10.0**e) 10.0**e, sprintf("%g", 2*10.0**e) 2*10.0**e, sprintf("%g", 5*10.0**e) 5*10.0**e)
    }
    set mxtics 10
}
set autoscale xfix
set yrange [0:1.02]
set grid
# the legend in columns below the plot, small, so that many lines leave the plot its room
set key below horizontal maxrows 4
if (slo > 0) set arrow 1 from slo, graph 0 to slo, graph 1 nohead dt 2 lc "black"; set label 1 sprintf("SLO %g ms", slo) at slo, graph 0.04 rotate by 90 left offset -0.6, 0 front
plot for [i=0:nser-1] datafile index i using 1:2 with steps lw 2 title columnhead(1)
