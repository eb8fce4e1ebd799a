/* plot — `servesim plot KIND...`: figures from a results database through the gnuplot
 * scripts of plots/ (compiled in; --scripts DIR reads them from a folder instead).
 *
 * For each figure it queries the database (opened read-only), writes the data as a
 * tab-separated OUT/PREFIX-KIND.dat, and runs gnuplot twice on it: PNG (cairo) and SVG, both of
 * --size. Kinds: goodput (bars by policy, grouped by setting), goodput-gpus, goodput-slo (and
 * goodput-vs with --x PATH: goodput against a config value), latency-cdf, queue-cdf,
 * batch-hist, timeline (one run), and all. Runs of one experiment under several seeds are
 * averaged (error bars: sd) or, for distributions, merged. docs/plots.md has the details.
 *
 * Exit status: 0 figures written, 2 bad input (options, database, nothing to plot), 1 gnuplot
 * or I/O failure. */
#ifndef PLOT_H
#define PLOT_H

int plot_main(int argc, char **argv);

#endif
