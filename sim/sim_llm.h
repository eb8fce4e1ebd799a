/* sim_llm — LLM replicas, the engine's iteration-level serving (policy-facing part of sim.h).
 *
 * A replica is an executor that serves one LLM model (the world's model with `llm` set) by
 * iterations, as vLLM v1's engine core does. Its requests carry prompt and output tokens.
 * Each iteration the replica's scheduler forms one batch (vllm/v1/core/sched/scheduler.py,
 * Scheduler.schedule, vLLM 0.10):
 *   * running requests first, in admission order, each with its next prefill chunk or one
 *     decode token, while the token budget lasts;
 *   * where a KV block cannot be had, the most recently admitted running request is preempted
 *     (recompute: its blocks freed, back to the head of the waiting queue), until the request
 *     fits or is itself the one preempted;
 *   * then, if nothing was preempted, waiting requests in order while the budget lasts and
 *     fewer than max_seqs run: a prompt is split to the budget with chunked prefill, and
 *     without it one that does not fit is passed over for this iteration; the first that
 *     cannot get its blocks stops the admission. With prefix caching (an option, as vLLM's
 *     enable_prefix_caching) a request admitted holding no KV first takes its leading blocks
 *     found cached and computes only the rest (sim_llm_kv.h has the pool's rules).
 * The iteration lasts the model's iteration time for exactly those sequences (prefill chunks
 * with their prefixes, decodes with each context) plus the host's time. At its end every
 * sequence whose tokens (prompt and output so far) are all computed emits one token; a
 * request with all its output tokens finishes, its blocks freed. A request that could never
 * finish (P + O - 1 tokens over the budget without chunking, or over the KV pool) is
 * refused when submitted, as vLLM refuses such a max_model_len. A request is on time if its TTFT and TPOT meet the model's SLOs.
 * A policy makes replicas at init and hands them requests from the central queue; the rest
 * is the engine's. */
#ifndef SIM_LLM_H
#define SIM_LLM_H

#include <stdbool.h>
#include <stdint.h>

#include "sim_llm_cost.h"

struct sim;

/* What a replica runs: both phases, or one side of prefill/decode disaggregation (DistServe,
 * Splitwise). A PREFILL replica's request leaves it once its prompt is computed and its first
 * token out: its KV cache goes over the link (latency + bytes / bandwidth, the bytes of every
 * prompt token's K and V in all layers) to the DECODE replica the policy names
 * (policy_ops.llm_decode_target), which admits it when it has blocks for its whole context,
 * then decodes its other tokens. A decode replica that preempts it recomputes its context
 * itself. */
enum sim_llm_role { SIM_LLM_BOTH, SIM_LLM_PREFILL, SIM_LLM_DECODE };

/* vLLM's scheduler limits (SchedulerConfig), and a prefill replica's link. */
struct sim_llm_sched {
    int max_tokens;                    /* max_num_batched_tokens: tokens per iteration */
    int max_seqs;                      /* max_num_seqs: requests running at once */
    bool chunked;                      /* enable_chunked_prefill */
    int long_prefill;                  /* long_prefill_token_threshold (0: none) */
    enum sim_llm_role role;
    double kv_link_gbs, kv_link_us;    /* PREFILL: the KV transfer's bandwidth and latency */
    bool prefix_caching;               /* enable_prefix_caching (sim_llm_kv.h); not on a DECODE
                                        * replica, whose requests bring their KV */
};

/* What a replica shows a router. */
struct sim_llm_state {
    int model;
    int waiting, running;              /* requests */
    long blocks_total, blocks_used;    /* the KV pool */
    long tokens_left;                  /* its requests' prompt and output tokens, less the
                                        * tokens they emitted (llm-d's outstanding work) */
    bool busy;                         /* an iteration is in flight */
    uint64_t iterations, preemptions, tokens_out;
    uint64_t refused;                  /* dropped at submit: could never finish, or without
                                        * prompt or output tokens (sim_llm_submit) */
    enum sim_llm_role role;
    int max_tokens, max_seqs;          /* its scheduler's limits */
    int incoming;                      /* DECODE: requests whose KV is on its way here */
    long incoming_blocks;              /* the blocks they will need on arrival */
    uint64_t handed_off, received;     /* requests sent to decode replicas; received from
                                        * prefill replicas */
};

/* The model's LLM deployment (NULL: a DNN model). */
const struct sim_llm_cfg *sim_model_llm(const struct sim *s, int m);
/* GPU executors execs[0..k) (up, k = the model's tensor-parallel degree tp) become one
 * replica of LLM model m under scheduler sc, its KV pool sized by sim_llm_memory (per GPU:
 * each rank holds its share of every token's heads). The replica is execs[0], the one a
 * policy submits to and reads; the others are its ranks: they serve nothing else and are
 * busy whenever it is. 0, or SIM_EINVAL (with the message) when the model is not an LLM, k is
 * not its tp, an executor is already in a replica, or the pool holds no block; SIM_ENOMEM. */
int sim_llm_replica_tp(struct sim *s, const int *execs, int k, int m,
                       const struct sim_llm_sched *sc);
/* A replica of one GPU: sim_llm_replica_tp(s, &e, 1, m, sc). */
int sim_llm_replica(struct sim *s, int e, int m, const struct sim_llm_sched *sc);
/* The head of model m's central queue to replica e's waiting queue; an idle replica starts an
 * iteration at once. */
void sim_llm_submit(struct sim *s, int e, int m);
/* Replica e serves both phases from now on (role BOTH: a prefill replica's requests decode
 * where they are, a decode replica takes submissions), or one again (PREFILL, DECODE) from
 * BOTH; what it holds carries on. A disaggregating policy falls back so when an autoscaler
 * leaves a model without one of its pools. 0, or SIM_EINVAL for another change or a prefill
 * replica without a KV link. */
int sim_llm_set_role(struct sim *s, int e, enum sim_llm_role role);
/* The replica executor e is a rank of (its first executor, what sim_llm_state takes), or -1.
 * Removing any rank (sim_exec_remove) drains the replica: it takes no more requests
 * (sim_llm_submit drops them), finishes those it holds, and then its removed ranks go down;
 * a policy removes the others itself. */
int sim_llm_replica_of(const struct sim *s, int e);
/* Replica e's state, or NULL where e is none. */
const struct sim_llm_state *sim_llm_state(const struct sim *s, int e);
/* Model m's token-level statistics (sim_metrics.h), or NULL for a DNN model. */
const struct sim_llm_stats *sim_model_llm_stats(const struct sim *s, int m);
/* Replica e's KV utilisation averaged over time since it was made, up to now. */
double sim_llm_kv_util(const struct sim *s, int e);
/* The tokens of request r's prompt whose KV replica e holds in its prefix cache now (0
 * without prefix caching): what an admission there would not compute (llm-d's prefix scorer). */
long sim_llm_prefix_match(const struct sim *s, int e, const struct sim_request *r);
/* Replica e's KV pool checked in full, every block (O(blocks): tests and fuzzers): 0, or
 * SIM_EINVAL with the inconsistency in sim_err_msg. */
int sim_llm_check(const struct sim *s, int e);

#endif
