# batch_hist.gp — batch-size distribution: the fraction of batches of each size, clustered per
# policy (and setting; above 6 series the smaller are folded into "others"). servesim plot
# sets the terminal and output, then defines: datafile, plottitle, nser, xstep (label every
# xstep-th batch size). datafile: a header row, then one row per batch size with a fraction per
# series.
set datafile separator tab
set title plottitle
set xlabel "batch size (requests)"
set ylabel "fraction of batches"
set yrange [0:*]
set grid ytics
set xtics nomirror scale 0.5
set key below height 1
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.9 noborder
set boxwidth 0.9
plot for [i=2:nser+1] datafile using i:xtic(int(column(1)) % xstep == 0 || column(1) == 1 ? stringcolumn(1) : "") \
     lt (i - 1) dt 1 title columnhead(i)
