# batch_hist.gp — batch-size distribution: the fraction of batches of each size, clustered per
# policy (and setting). servesim plot sets the terminal and output, then defines: datafile,
# plottitle, nser. datafile: a header row, then one row per batch size with a fraction per
# series.
set datafile separator tab
set title plottitle
set xlabel "batch size (requests)"
set ylabel "fraction of batches"
set yrange [0:*]
set grid ytics
set key below
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
plot for [i=2:nser+1] datafile using i:xtic(1) title columnhead(i)
