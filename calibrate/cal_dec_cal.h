/* cal_dec_cal — a decoder's iteration-time profile from measured operators, and the check of
 * that profile against measured whole iterations (docs/calibrate.md, "Decoders").
 *
 * Measure (cal_dec_measure): the runtime (cal_dec.h) runs iterations of chosen shapes with
 * every operator timed, in rounds: `warmup` untimed passes over every shape, then `reps`
 * rounds, each timing every shape once in turn (right after an untimed run of the same shape:
 * a served iteration follows one of nearly its shape and finds its weights and cache warm), so
 * that a slow spell of the machine (a shared host's other tenants) falls on all shapes alike; each table point is the median over the
 * rounds (the 10th and 90th percentiles kept as the dense curve's spread):
 *   dense(T)            one sequence of T new tokens: every per-layer operator but attention
 *                       (norms, the QKV, output, gate-up and down GEMMs, RoPE, the KV write,
 *                       SiLU) and the embedding lookup, per layer;
 *   prefill(q, c)       one chunk of q tokens after c of context: its attention, per layer;
 *   decode(B, K)        B decodes with K context tokens in all, spread evenly: their attention,
 *                       per layer; cells that cannot be measured (K < B, or contexts past the
 *                       model's positions) are extended along the row's measured cells (least
 *                       squares in K);
 *   decode_one(c)       one decode's attention against its context;
 *   lm_head(B)          the final norm and the LM head over B sequences;
 *   host(B)             the iteration's host work around them (its metadata, the sampler).
 * The profile is written in the simulator's measured format (servesim-llm-profile/1) with its
 * provenance and, under "operators", every operator's medians (which the simulator ignores).
 *
 * Check: whole iterations of mixed shapes (a chunk beside decodes, skewed contexts, prefill
 * alone, decodes alone), timed whole in the same rounds, against what the simulator's own cost
 * function (sim_llm_gpu_ns + sim_llm_host_ns) predicts from the profile. */
#ifndef CAL_DEC_CAL_H
#define CAL_DEC_CAL_H

#include <cjson/cJSON.h>

#include "cal_dec.h"

#define CAL_DEC_MAX_AXIS 32

struct cal_dec_cal_opts {
    const struct cal_dec *d;
    int threads, warmup, reps;
    const char *kind;                  /* the profile's "gpu": the executor kind ("cpu") */
    bool no_check;                     /* leave the check's iterations out of the rounds */
    const char *device, *versions;     /* provenance */
    bool gpu, eager;                   /* the GPU runtime (cal_dec_rt_opts), CUDA device gpu_dev */
    int gpu_dev;
    uint64_t seed;                     /* the GPU runtime's weights */
    /* axes (0 entries: the defaults for the model, cal_dec_default_axes) */
    int tokens[CAL_DEC_MAX_AXIS], ntokens;
    int chunks[CAL_DEC_MAX_AXIS], nchunks;
    int contexts[CAL_DEC_MAX_AXIS], ncontexts;
    int seqs[CAL_DEC_MAX_AXIS], nseqs;
    int kv[CAL_DEC_MAX_AXIS], nkv;
};

/* Fills the axes left empty: T dense near the GEMM tile boundaries (n-1, n, n+1 around 16, 32,
 * 64, 128, 256) up to 512; chunks 2..512; contexts 0..min(2048, positions/2); sequences
 * 1..256; K 64..32768. */
void cal_dec_default_axes(struct cal_dec_cal_opts *o);

struct cal_dec_check_row {
    char what[96];
    int tokens, seqs;
    double measured_us, p10_us, p90_us, predicted_us, err; /* err: predicted / measured - 1 */
    double dense_us, dense_pred_us;    /* its dense operators (all layers): timed, and the
                                        * profile's dense curve at its T */
};
#define CAL_DEC_CHECK_ROWS 8

/* Measures (the table points and the check's iterations in the same rounds), builds the
 * profile (*out owned: cJSON_Delete) and checks the iterations against it (rows: up to
 * CAL_DEC_CHECK_ROWS). Progress lines on stderr when `verbose`. */
int cal_dec_measure(const struct cal_dec_cal_opts *o, bool verbose, cJSON **out /* OUT */,
                    struct cal_dec_check_row *rows /* OUT */, int *nrows /* OUT */);

/* Quantile q of n values (sorted in place; GSL's linear interpolation between order
 * statistics); 0 for none. */
double cal_dec_quantile(double *v, int n, double q);

/* The simulator's prediction of one iteration (ns) from a profile object, through the engine's
 * own cost functions. */
int cal_dec_predict(const struct cal_dec *d, const cJSON *profile, const char *kind,
                    const struct cal_dec_seq *s, int n, double *ns /* OUT */);

#endif
