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
if (logx) set logscale x
set autoscale xfix
set yrange [0:1.02]
set grid
set key below height 1
if (slo > 0) set arrow 1 from slo, graph 0 to slo, graph 1 nohead dt 2 lc "black"; set label 1 sprintf("SLO %g ms", slo) at slo, graph 0.04 rotate by 90 left offset -0.6, 0 front
plot for [i=0:nser-1] datafile index i using 1:2 with steps lw 2 title columnhead(1)
