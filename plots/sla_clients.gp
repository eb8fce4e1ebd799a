# sla_clients.gp — SLA violations (late or dropped, of the requests offered) against the
# number of active closed-loop clients, a line per configuration. servesim plot sets the
# terminal and output, then defines: datafile, plottitle, nser, sercolour[i], serdash[i]
# (plot_series_colours). datafile: one block per configuration (two blank lines between),
# its first row the title, then rows "active clients, violation rate".
set datafile separator tab
set title plottitle
set xlabel "active clients"
set ylabel "SLA violations (fraction of requests)"
set yrange [0:1.05]                     # a fraction
set offsets 0, 0, 0.02, 0
set grid
set key below height 1
plot for [i=0:nser-1] datafile index i using 1:2 with linespoints lw 2 pt 7 ps 1 \
         lc rgb sercolour[i + 1] dt serdash[i + 1] title columnhead(1)
