# batch_hist.gp — batch-size distribution: the fraction of batches of each size, a bar per
# policy in its own colour, a panel per setting (model or case) where there are several (above
# 6 series the smaller are folded into "others"). servesim plot sets the terminal and output,
# then defines: datafile, plottitle, nser (bars per size: the policies), xstep (label every
# xstep-th batch size), npanel, prow, pcol, ptitle[k], polcolour[i], hpx (image height).
# datafile: a block per panel (two blank lines between): a header row (the policies), then one
# row per batch size with a fraction per policy.
set datafile separator tab
set datafile columnheaders
set xlabel "batch size (requests)"
set yrange [0:*]
set grid ytics
set xtics nomirror scale 0.5
set key at screen 0.5, screen 1 - 34.0 / hpx center top horizontal samplen 2
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.9 noborder
set boxwidth 0.9
top = 1 - (npanel > 1 ? 130.0 : 84.0) / hpx
set multiplot layout prow, pcol title plottitle margins 0.1, 0.97, 70.0 / hpx, top spacing 0.09, 0.13
do for [k = 1:npanel] {
    if (npanel > 1) { set title ptitle[k] }
    if (k > 1) { unset key }
    if ((k - 1) % pcol == 0) { set ylabel "fraction of batches" } else { unset ylabel }
    plot for [i=2:nser+1] datafile index (k - 1) using i:xtic(int(column(1)) % xstep == 0 || column(1) == 1 ? stringcolumn(1) : "") \
         lc rgb polcolour[i - 1] dt 1 title columnhead(i)
}
unset multiplot
