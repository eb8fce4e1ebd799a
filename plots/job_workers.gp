# job_workers.gp — training jobs' running time by number of workers: the fraction of all
# jobs' running time spent at 1, 2, ... workers, clustered per configuration. servesim plot
# sets the terminal and output, then defines: datafile, plottitle, nser, sercolour[i],
# serdash[i] (plot_series_colours). datafile: a header row (workers, then the
# configurations), then one row per worker count with a fraction per configuration.
set datafile separator tab
set title plottitle
set xlabel "workers"
set ylabel "fraction of the jobs' running time"
set yrange [0:*]
set grid ytics
set xtics nomirror scale 0.5
set key below height 1
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.9 noborder
set boxwidth 0.9
plot for [i=2:nser+1] datafile using i:xtic(1) lc rgb sercolour[i - 1] dt 1 title columnhead(i)
