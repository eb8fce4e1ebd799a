# batch_hist.gp — batch-size distribution: the fraction of batches of each size, a bar per
# policy in its own colour, a panel per setting (model or case) where there are several (above
# 6 series the smaller are folded into "others"). servesim plot sets the terminal and output,
# then defines: datafile, plottitle, npol (bars per size: the policies), xstep (label every
# xstep-th batch size), npanel, prow, pcol, ptitle[k], ptlines, polname[i], polcolour[i], hpx
# (image height), ymax (one scale for every panel), panel(k) and panelkey (plot_panels.c).
# datafile: a block per panel (two blank lines between): a header row (the policies), then one
# row per batch size with a fraction per policy.
set datafile separator tab
set datafile columnheaders
set xlabel "batch size (requests)"
set yrange [0:ymax]
set grid ytics
set xtics nomirror scale 0.5
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.9 noborder
set boxwidth 0.9
# the panels in their grid, the y axis titled on the left column; the legend once, in a
# strip across the top under the title (panel(k), panelkey: plot_panels.c)
pleft = 0.1; pright = 0.97; pgapx = 0.09; pgapy = (90.0 + 20 * ptlines) / hpx
ptop = 1 - ((npanel > 1 ? 110.0 + 20 * ptlines : 84.0) + 22 * (keyrows - 1)) / hpx
pbottom = 70.0 / hpx
set multiplot title plottitle
do for [k = 1:npanel] {
    eval panel(k)
    if (npanel > 1) { set title ptitle[k] }
    if ((k - 1) % pcol == 0) { set ylabel "fraction of batches" } else { unset ylabel }
    plot for [i=2:npol+1] datafile index (k - 1) using i:xtic(int(column(1)) % xstep == 0 || column(1) == 1 ? stringcolumn(1) : "") \
         lc rgb polcolour[i - 1] dt 1 notitle
}
eval panelkey(0)
plot for [i=1:npol] -1 with boxes lc rgb polcolour[i] dt 1 title polname[i]
unset multiplot
