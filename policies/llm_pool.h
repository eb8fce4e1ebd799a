/* llm_pool — what the LLM policies (vllm, distserve) share: the GPUs shared among the LLM
 * models by their rates, vLLM's scheduler defaults by GPU, and the routers that pick one of a
 * model's replicas for a request (as llm-d's scorers weigh endpoints). */
#ifndef LLM_POOL_H
#define LLM_POOL_H

#include <stdbool.h>

#include "sim.h"

enum llm_router { LLM_ROUTE_RR, LLM_ROUTE_TOKENS, LLM_ROUTE_KV, LLM_ROUTE_PREFIX };
extern const char *const llm_routers[];   /* "round_robin", "least_tokens", "kv_util",
                                           * "prefix", NULL */
#define LLM_ROUTERS_DOC                                                                     \
    "how a request picks its replica: `round_robin`; `least_tokens` (the fewest tokens held: "\
    "each request's prompt and output less what it emitted); `kv_util` (the lowest KV-cache "  \
    "use, then the fewest waiting); `prefix` (llm-d's default scorers: 3 x the share of the "   \
    "prompt's blocks cached there + 2 x (1 - KV use) + 2 x the queue score, (most waiting - "  \
    "its waiting) / (most - fewest), 1 where all wait alike); ties to the lowest replica"

/* Model m's replicas: nrep[m] of them, replica r on the GPU executors gpus[first[m] + r tp ..
 * first[m] + (r + 1) tp) (tp: the model's tensor-parallel degree), in executor order;
 * reps[first_rep[m] + r] is replica r's own executor (its first), what policies submit to. */
struct llm_pools {
    int *gpus, *first, *reps, *first_rep, *nrep;
    int nmodels;                 /* GPUs no whole replica takes are left idle */
};
/* Every model an LLM model (else SIM_EINVAL naming `policy`), each with at least `least`
 * replicas: the GPU executors shared in proportion to the models' rates, in whole replicas
 * (rounded down, at least `least` each), the replicas left one each to the models in order. */
int llm_pools_assign(struct sim *s, const char *policy, int least, struct llm_pools *lp);
/* Makes replica r of model m under sc (sim_llm_replica_tp). */
int llm_pools_replica(struct sim *s, const struct llm_pools *lp, int m, int r,
                      const struct sim_llm_sched *sc);
void llm_pools_free(struct llm_pools *lp);

/* vLLM's defaults for a model's GPU (vllm/engine/arg_utils.py, EngineArgs.get_batch_defaults,
 * an OpenAI API server): 8192 batched tokens and 1024 sequences on a GPU of 70 GiB or more
 * that is not an A100, else 2048 and 256; a limit > 0 given stands. */
struct sim_llm_sched llm_sched_defaults(const struct sim *s, int m, int max_tokens,
                                        int max_seqs);

/* A list of executors (the replicas a router uses, by their first GPU; GPUs spare) that
 * grows and shrinks as an autoscaler adds and removes GPUs. */
struct llm_list {
    int *e;
    int n, cap;
};
int llm_list_push(struct llm_list *l, int e);
/* e out of l, the others' order kept; false where it was not there. */
bool llm_list_remove(struct llm_list *l, int e);
void llm_list_free(struct llm_list *l);
/* What the LLM policies do alike as an autoscaler adds and removes GPUs:
 * llm_spare_init: the policy's GPUs no whole replica took, into `spare` (at init);
 * llm_model_weight: model m's rate, 1 where it has none (replicas are shared by it);
 * llm_pick_model: of the policy's models whose tp GPUs are spare, the one with the fewest
 *   replicas (count[m]) for its weight, or -1;
 * llm_spare_take: the first tp spare GPUs out of the list once a replica holds them;
 * llm_removed: e (removed) out of the spares (-1), or the replica it is a GPU of (its first
 *   GPU; its model in *m), the replica's other GPUs that are up removed too (it drains as a
 *   whole, sim_llm.h); -1 where e is neither. The caller takes the replica out of its lists. */
int llm_spare_init(struct sim *s, struct llm_list *spare);
double llm_model_weight(const struct sim *s, int m);
int llm_pick_model(const struct sim *s, int nm, const int *count, const double *weight,
                   int spare);
void llm_spare_take(struct llm_list *spare, int tp);
int llm_removed(struct sim *s, struct llm_list *spare, int e, int *m /* OUT */);

/* One of the n replicas reps[] for request r by `router` (rr: the round-robin position,
 * advanced). */
int llm_route(const struct sim *s, const int *reps, int n, int *rr, int router,
              const struct sim_request *r);

#endif
