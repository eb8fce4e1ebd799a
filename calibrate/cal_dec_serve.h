/* cal_dec_serve — `validate` for a decoder: a real continuous-batching server runs the
 * decoder runtime (cal_dec.h) on a token trace at several loads, and servesim runs the `vllm`
 * policy with the measured profile (cal_dec_cal.h) on the same requests; TTFT and TPOT from
 * both sides, and their errors.
 *
 * The real server is vLLM v1's scheduler, step for step as the simulator's `vllm` policy runs
 * it (sim/sim_llm.c, docs/llm.md): a token budget (max_num_batched_tokens), max_num_seqs,
 * chunked prefill, the running requests first in order, then the waiting ones in arrival order;
 * KV blocks of 16 tokens from a fixed pool, a request that cannot get its blocks preempting the
 * newest running one (its blocks freed, recomputed later from its prompt and the tokens it had
 * generated), no new admission in an iteration that preempted. Every iteration runs for real
 * (the greedy sampler's tokens feed the next); TTFT is the end of the iteration that produced
 * the first token minus the arrival, TPOT (last - first) / (output - 1), on the wall clock.
 *
 * The error is split as the DNN `validate` splits it: a third run of the simulator with the
 * profile rescaled by the ratio of the real iterations' time to what the profile predicts for
 * those same iterations, and their spread as the iterations' jitter (cluster.exec_cv):
 * "observed". sim - observed is the profile's error under serving, observed - real the
 * simulator's own. */
#ifndef CAL_DEC_SERVE_H
#define CAL_DEC_SERVE_H

#include <stdbool.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "cal_dec.h"

#define CAL_LLM_MAX_LOADS 16

struct cal_llm_validate_opts {
    const struct cal_dec *d;
    int threads;
    bool gpu, eager;                /* the GPU runtime (cal_dec_rt_opts) on CUDA device gpu_dev */
    int gpu_dev;
    const cJSON *profile;           /* the measured profile (servesim-llm-profile/1) */
    const char *kind;               /* its "gpu" ("cpu") */
    int max_num_seqs, max_tokens;   /* the scheduler's limits */
    long kv_blocks;                 /* the pool (block size 16) */
    int nloads;
    double loads[CAL_LLM_MAX_LOADS];/* fractions of the profile's capacity (cal_llm_capacity) */
    int requests;                   /* per load */
    int prompt_lo, prompt_hi, out_lo, out_hi; /* lengths drawn uniformly (inclusive); with a
                                                * trace, the range its lengths are clipped to */
    /* A token trace's requests instead of Poisson arrivals with uniform lengths (tr_n > 0): the
     * first `requests` of them, their arrival times (s) scaled so that their mean rate is each
     * load's, their lengths as given (already within the ranges above). */
    const double *tr_t;
    const int32_t *tr_prompt, *tr_output;
    int tr_n;
    uint64_t seed;
    const char *scratch;            /* folder for the trace and profile files (removed at the
                                     * end; the folder is the caller's) */
    const char *iterations_out;     /* NULL, or a TSV file: every real iteration with its
                                     * shape, its time and the profile's */
    bool virtual_clock;             /* the server's iterations still run, but its clock
                                     * advances by the profile's time for each (no waiting):
                                     * the scheduler alone against the simulator's, which must
                                     * then agree to the nanosecond (the tests' oracle) */
};

struct cal_llm_side {
    double ttft_mean_ms, ttft_p99_ms, tpot_mean_ms, tpot_p99_ms, tok_per_s;
    long iterations, preemptions;
};

struct cal_llm_validate_row {
    double load, rate_rps;
    struct cal_llm_side real, sim, obs;
    /* the real iterations against the profile: their time over its prediction for the same
     * shapes (in all; and the median and 90th percentile of |ratio - 1| per iteration) */
    double ratio, it_err_p50, it_err_p90;
    /* the coefficient of variation of that ratio over the iterations: the obs run draws its
     * iterations' times with this jitter (cluster.exec_cv), the real server's spread */
    double it_cv;
    /* the simulator's noise floor: relative standard deviation of its TTFT and TPOT means over
     * other Poisson sequences of the same rate and requests */
    double noise_ttft, noise_tpot;
};

/* Requests a second the profile serves with the mean lengths: the mean request's prefill and
 * its share of decode iterations of B sequences, B = max_num_seqs or as many mean requests as
 * the KV pool holds, whichever is fewer. */
int cal_llm_capacity(const struct cal_llm_validate_opts *o, double *rps /* OUT */);

int cal_llm_validate(const struct cal_llm_validate_opts *o,
                     struct cal_llm_validate_row *rows /* OUT: nloads */);

#endif
