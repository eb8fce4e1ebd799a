/* sim_compare — `servesim compare BASE NEW`: regression check between two sets of results
 * (databases or servesim-results/1 text, see sim_readback.h).
 *
 * Runs are matched by experiment (name, kind and config key, i.e. the config without its seed;
 * or with --match label by name, kind, policy and sweep settings). For every experiment and
 * model and each metric — goodput, p99, bad rate, GPU-seconds — the seeds on each side give a
 * mean, a standard deviation and a 95% confidence interval (Student t); the difference is
 * tested with Welch's t-test (GSL's t distribution). A metric regresses when it moved the
 * wrong way, by more than the tolerance (relative; absolute for the bad rate), and the
 * difference is significant at --alpha. With one seed per side (a run is a pure function of
 * config and seed) any difference beyond the tolerance counts. Experiments of BASE missing in
 * NEW count as regressions unless --allow-missing.
 *
 * Exit status: 0 no regression, 3 regression, 2 bad input (files, options), 1 internal. */
#ifndef SIM_COMPARE_H
#define SIM_COMPARE_H

int sim_compare_main(int argc, char **argv);

#endif
