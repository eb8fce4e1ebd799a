# series.gp — one time series of several runs against time (e.g. instances, SLA violation
# rate), a line per run. servesim plot sets the terminal and output, then defines: datafile,
# plottitle, ylab, nser, sercolour[i] and serdash[i] (line i's: its policy's colour, or shades
# of it in a figure of one policy's runs).
# datafile: one block per run (two blank lines between), its first row the run's title, then
# rows "time (s), value".
set datafile separator tab
set title plottitle
set xlabel "time (s)"
set ylabel ylab
set grid
set yrange [0:*]
# headroom above the highest value: a series that sits at its maximum (a full KV cache at
# 1.0) is drawn inside the frame, not hidden under its top edge
set offsets 0, 0, graph 0.05, 0
set autoscale xfix
set key below height 1
plot for [i=0:nser-1] datafile index i using 1:2 with lines lw 2 lc rgb sercolour[i + 1] \
         dt serdash[i + 1] title columnhead(1)
