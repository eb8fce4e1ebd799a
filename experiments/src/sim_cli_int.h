/* sim_cli_int — what the `servesim` command's files share (sim_cli.c: the command table,
 * option parsing, run/goodput/sweep/plan, main; sim_cli_list.c: keys and policies;
 * sim_cli_bench.c: bench). Not for other files. */
#ifndef SIM_CLI_INT_H
#define SIM_CLI_INT_H

#include <stdbool.h>
#include <stdint.h>

#define MAX_SETS 128

/* The options the common parser (parse_opts) fills; each command reads those it takes. */
struct opts {
    const char *config, *db;
    const char *sets[MAX_SETS];
    char *owned[MAX_SETS];              /* the PATH=@FILE overrides, with the file's JSON */
    int nsets;
    bool seed_given, json, quiet, no_db, no_reference, force, markdown, policy_given, own;
    bool steady;                        /* bench --gpus --steady: the second half's cost */
    const char *policy;
    const char *format;                 /* keys --format: config, sweep, zoo */
    uint64_t seed;
    double duration, rate, sample;
    int gpus, jobs, min_gpus, max_gpus, rounds;
    int gpus_list[16], ngpus;           /* bench --gpus A,B,...: scaling runs */
};

/* Prints "servesim: MESSAGE" for rc on stderr; returns the exit status for rc. */
int cli_fail(int rc);

int cmd_keys(const struct opts *o);
int cmd_policies(const struct opts *o);
int cmd_bench(const struct opts *o);

#endif
