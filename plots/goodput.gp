# goodput.gp — goodput by policy: bars grouped by experiment setting (a bar per policy in its
# own colour), error bars = sd over seeds, in panels where the settings are many.
# servesim plot sets the terminal and output, then defines: datafile, plottitle, ylab, npol,
# hpx (the image's height in pixels), nline (lines of the longest group label), ymax (one y
# scale for every panel), npanel, prow, pcol (the panels' grid), ptitle[k] (panel k's
# setting in words), ptlines (a panel title's most lines), polcolour[i] and polname[i]
# (policy i's colour, the same in every figure, and name), keyrows (the legend's rows),
# onebar (1 when every setting has runs of one policy only: one bar per setting, centred),
# ratio (1: each bar's ratio to the first policy's written above it), xrot (1: tick labels
# too long to lie flat stand upright, on one line, and servesim plot makes the figure taller
# by their length, labpx pixels), xticfont (their font size: smaller than the figure's where
# that makes them fit flat), wrapn (the characters of a label's line lying flat), panel(k)
# and panelkey (plot_panels.c).
# datafile: a block per panel (two blank lines between), its first row a header (the panel's
# setting, then the policies' names), then one row per setting: the setting in words, then
# mean and sd per policy; "?" where a policy has no run at that setting.
set datafile missing "?"
set datafile separator tab
set datafile columnheaders
set yrange [0:ymax]
set grid ytics
set style fill solid 0.85 border -1
set xtics nomirror scale 0
# a group's label, one item per line ("1 frontend, worst rule" on two lines), each broken at
# the last space that leaves at most wrapn characters on a line (plot_goodput.c's label_fold
# counts the same lines)
lastsp(s, i) = i < 1 ? 0 : (s[i:i] eq " " ? i : lastsp(s, i - 1))
fold(s) = strlen(s) <= wrapn ? s : (lastsp(s, wrapn + 1) > 1 ? \
          s[1:lastsp(s, wrapn + 1) - 1] . "\n" . fold(s[lastsp(s, wrapn + 1) + 1:*]) : s)
wrap(s) = strstrt(s, ", ") > 0 ? fold(substr(s, 1, strstrt(s, ", ") - 1)) . "\n" . \
          wrap(substr(s, strstrt(s, ", ") + 2, strlen(s))) : fold(s)
xticfontspec = sprintf(",%d", xticfont)
ratiofontspec = sprintf(",%d", xticfont > 12 ? xticfont - 3 : 9)  # the ratios, a little smaller
set xtics font xticfontspec
if (xrot) set xtics rotate by 90 right
ticlabel(s) = xrot ? s : wrap(s)        # turned labels stand on one line
bw = onebar ? 0.7 : 0.8 / npol
xoff(i) = onebar ? 0 : (i - 1 - (npol - 1) / 2.0) * bw
# the panels in their grid, the y axis titled on the left column; the legend once, in a
# strip across the top under the title (panel(k), panelkey: plot_panels.c)
# under each panel: its group labels (nline lines, or turned: labpx long), with the panel
# titles' line between rows
labroom = xrot ? labpx + 16.0 : 36.0 + 22.0 * nline
pleft = npanel > 1 ? 0.14 : 0.12; pright = 0.97; pgapx = 0.1
ptop = 1 - ((npanel > 1 ? 110.0 + 20 * ptlines : 84.0) + 22 * (keyrows - 1)) / hpx
pbottom = labroom / hpx; pgapy = (labroom + 20.0 + 20 * ptlines) / hpx
set multiplot title plottitle
do for [k = 1:npanel] {
    eval panel(k)
    if (npanel > 1) { set title ptitle[k] }
    if ((k - 1) % pcol == 0) { set ylabel ylab } else { unset ylabel }
    stats datafile index (k - 1) using 0 nooutput
    set xrange [-0.6:STATS_max + 0.6]
    plot for [i=1:npol] datafile index (k - 1) using (column(0) + xoff(i)):(column(2*i)):(column(2*i+1)):(bw) \
             with boxerrorbars lc rgb polcolour[i] lw 1 dt 1 notitle, \
         datafile index (k - 1) using 0:(NaN):xtic(ticlabel(stringcolumn(1))) with points notitle, \
         for [i=2:(ratio ? npol : 1)] datafile index (k - 1) \
             using (column(0) + xoff(i)):(column(2*i)):((valid(2) && valid(2*i) && column(2) > 0) ? sprintf("%.2f×", column(2*i) / column(2)) : "") \
             with labels rotate by 90 left offset 0,0.4 font ratiofontspec notitle
}
eval panelkey(0)
plot for [i=1:npol] -1 with boxes lc rgb polcolour[i] lw 1 dt 1 title polname[i]
unset multiplot
