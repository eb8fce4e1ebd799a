# goodput.gp — goodput by policy: bars grouped by experiment setting, error bars = sd over seeds.
# servesim plot sets the terminal and output, then defines: datafile, plottitle, ylab, npol,
# onebar (1 when every setting has runs of one policy only: one bar per setting, coloured by
# its policy, instead of a group of npol slots), xrot (1: tick labels too long to lie flat:
# they stand upright, and servesim plot makes the figure taller by their length).
# datafile: one row per setting; column 1 the setting, then mean and sd per policy (a header
# row names the policies); "?" where a policy has no run at that setting.
set datafile missing "?"
set datafile separator tab
set title plottitle
set ylabel ylab
set xlabel "experiment setting"
set yrange [0:*]
set grid ytics
set key outside right top vertical
set style fill solid 0.8 border -1
if (xrot) set xtics rotate by 90 right
if (onebar) {
    set boxwidth 0.7
    set offsets 0.6, 0.6, 0, 0
    plot for [i=1:npol] datafile using 0:(column(2*i)):(column(2*i+1)):xtic(1) \
         with boxerrorbars lc i dt 1 title columnhead(2*i)
} else {
    set style data histograms
    set style histogram errorbars gap 2 lw 1
    set boxwidth 0.9
    plot for [i=1:npol] datafile using (column(2*i)):(column(2*i+1)):xtic(1) lt i dt 1 title columnhead(2*i)
}
