/* cal_cli_int — what the two files of servesim-calibrate share: its options and the helpers
 * and commands that cross between cal_cli.c (options, nets, check, validate, the command
 * table) and cal_cli_time.c (the commands that time kernels: measure, concurrency, host). */
#ifndef CAL_CLI_INT_H
#define CAL_CLI_INT_H

#include <stdbool.h>
#include <cjson/cJSON.h>

#include "cal_backend.h"
#include "cal_measure.h"
#include "cal_net.h"
#include "cal_validate.h"

struct opts {
    const char *backend, *out, *db, *kind, *zoo_name, *zoo, *model;
    enum cal_precision precision;
    int threads[16], nthreads, batches[CAL_MAX_POINTS], nbatches, warmup, reps, device;
    int ks[16], nks, ps[16], nps;
    double seconds, serving;
    const char *table_out, *tsv;
    int batch, requests, max_batch;
    double tol, tol_check, loads[CAL_VALIDATE_MAX_LOADS];
    int nloads;
    bool fold, fit_p99, batch_set, eager, unfused;
    unsigned long long seed;
    const char *nets[64];
    int nnets;
    /* decoders (cal_cli_llm.c) */
    int tokens[32], ntokens, chunks[32], nchunks, contexts[32], ncontexts, seqs[32], nseqs;
    int kvs[32], nkvs, max_num_seqs, max_batched, prompt[2], output[2];
    long kv_blocks;
    const char *profile, *trace, *trace_format;
    bool virtual_clock, no_check;
};

/* The backend options every command shares (threads: the CPU executor's). */
struct cal_opts cli_backend_opts(const struct opts *o, int threads);
/* The backend --backend names, built into this binary (SIM_EUNAVAIL: cudnn asked for where
 * it is not; cudnn-only options refused with the CPU one). */
int cli_find_backend(const struct opts *o, const struct cal_backend_ops **be);
/* A network by file or shipped name (NET), its weights drawn from --seed. */
int cli_load_net(const char *ref, const struct opts *o, struct cal_net **net);
/* Writes JSON to file whole or not at all (sim_out). */
int cli_write_json(const char *file, const cJSON *j);
/* measure NET...: forward passes timed per batch size (back to back, or as a server runs
 * them with --serving), fitted, written as a zoo and database rows. */
int cmd_measure(const struct opts *o);
/* concurrency NET: lat(k, p, t) and cores busy for every k x p x t, the interference table
 * relative to (1, 1, 1), and (oneDNN) the parametric model fitted to the points. */
int cmd_concurrency(const struct opts *o);
/* host NET...: the device's idle time between back-to-back served batches (the host's share
 * of a batch: launch and wait, and with the input/output copies), per batch size; the evidence
 * for the simulator's cluster.host_us_per_batch. GPU backends only. */
int cmd_host(const struct opts *o);

/* Is NET (a file or shipped name) a decoder (servesim-decoder/1)? */
bool cli_is_decoder(const char *ref);
/* nets: the decoders' table (names: shipped names or files). */
int cli_decoders_table(const char *const *names, int n);
/* check DECODER: the runtime's logits against the reference through mixed iterations. */
int cmd_llm_check(const struct opts *o);
/* llm-measure DECODER --out FILE: the operator tables, the profile, the iteration check. */
int cmd_llm_measure(const struct opts *o);
/* llm-validate DECODER --profile FILE: the real continuous-batching server against servesim. */
int cmd_llm_validate(const struct opts *o);

#endif
