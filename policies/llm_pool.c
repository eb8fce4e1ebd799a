/* llm_pool — the LLM policies' shared parts (see llm_pool.h). */
#include "llm_pool.h"

#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "sim_grow.h"

const char *const llm_routers[] = {"round_robin", "least_tokens", "kv_util", "prefix", NULL};

void llm_pools_free(struct llm_pools *lp)
{
    free(lp->gpus);
    free(lp->first);
    free(lp->reps);
    free(lp->first_rep);
    free(lp->nrep);
    lp->gpus = lp->first = lp->reps = lp->first_rep = lp->nrep = NULL;
}

int llm_pools_assign(struct sim *s, const char *policy, int least, struct llm_pools *lp)
{
    int nm = sim_model_count(s), ng = 0, need = 0;
    for (int m = 0; m < nm; m++) {
        if (!sim_mine_model(s, m))
            continue;                  /* another part's (pools) */
        if (!sim_model_llm(s, m))
            return sim_err_set(SIM_EINVAL, "policy %s serves LLM models only: model %s is a "
                               "DNN model (an LLM model's entry has an `llm` section: "
                               "docs/llm.md)", policy, sim_model(s, m)->cfg->name);
        need += least * sim_model_llm(s, m)->tp;
    }
    for (int e = 0; e < sim_exec_count(s); e++)
        ng += !sim_exec(s, e)->cpu && sim_mine_exec(s, e);
    if (nm < 1 || ng < need)
        return sim_err_set(SIM_EINVAL, "policy %s: %d GPUs for %d LLM models: every model needs "
                           "%d replicas of its tensor-parallel degree, %d GPUs in all (servesim "
                           "plan: --min %d)", policy, ng, nm, least, need, need);
    lp->nmodels = nm;
    lp->gpus = malloc((size_t)ng * sizeof *lp->gpus);
    lp->first = malloc((size_t)(nm + 1) * sizeof *lp->first);
    lp->first_rep = malloc((size_t)(nm + 1) * sizeof *lp->first_rep);
    lp->nrep = calloc((size_t)nm, sizeof *lp->nrep);
    lp->reps = malloc((size_t)ng * sizeof *lp->reps);
    if (!lp->gpus || !lp->first || !lp->first_rep || !lp->nrep || !lp->reps)
        return SIM_ENOMEM;
    double total = 0;
    for (int m = 0; m < nm; m++)
        if (sim_mine_model(s, m))
            total += sim_model(s, m)->rate_rps > 0 ? sim_model(s, m)->rate_rps : 1;
    int used = 0;
    for (int m = 0; m < nm; m++) {     /* whole replicas by rate, at least `least` */
        if (!sim_mine_model(s, m))
            continue;
        int tp = sim_model_llm(s, m)->tp;
        double w = sim_model(s, m)->rate_rps > 0 ? sim_model(s, m)->rate_rps : 1;
        lp->nrep[m] = least + (int)((double)(ng - need) * w / total) / tp;
        used += lp->nrep[m] * tp;
    }
    for (bool more = true; more;) {    /* the rest a replica each, models in order */
        more = false;
        for (int m = 0; m < nm; m++) {
            if (!sim_mine_model(s, m))
                continue;
            int tp = sim_model_llm(s, m)->tp;
            if (used + tp <= ng) {
                lp->nrep[m]++;
                used += tp;
                more = true;
            }
        }
    }
    lp->first[0] = lp->first_rep[0] = 0;
    for (int m = 0; m < nm; m++) {
        lp->first[m + 1] = lp->first[m] + (lp->nrep[m] ? lp->nrep[m] * sim_model_llm(s, m)->tp : 0);
        lp->first_rep[m + 1] = lp->first_rep[m] + lp->nrep[m];
    }
    for (int e = 0, k = 0; e < sim_exec_count(s); e++)
        if (!sim_exec(s, e)->cpu && sim_mine_exec(s, e))
            lp->gpus[k++] = e;
    for (int m = 0; m < nm; m++)
        for (int r = 0; r < lp->nrep[m]; r++)
            lp->reps[lp->first_rep[m] + r] = lp->gpus[lp->first[m] + r * sim_model_llm(s, m)->tp];
    return 0;
}

int llm_pools_replica(struct sim *s, const struct llm_pools *lp, int m, int r,
                      const struct sim_llm_sched *sc)
{
    int tp = sim_model_llm(s, m)->tp;
    return sim_llm_replica_tp(s, lp->gpus + lp->first[m] + r * tp, tp, m, sc);
}

struct sim_llm_sched llm_sched_defaults(const struct sim *s, int m, int max_tokens,
                                        int max_seqs)
{
    const struct sim_llm_gpu *g = &sim_model_llm(s, m)->gpu;
    bool big = g->mem_gib >= 70 && !(g->name && strcmp(g->name, "a100") == 0);
    struct sim_llm_sched sc;
    memset(&sc, 0, sizeof sc);
    sc.max_tokens = max_tokens > 0 ? max_tokens : big ? 8192 : 2048;
    sc.max_seqs = max_seqs > 0 ? max_seqs : big ? 1024 : 256;
    sc.chunked = true;
    sc.role = SIM_LLM_BOTH;
    return sc;
}

int llm_list_push(struct llm_list *l, int e)
{
    if (l->n == l->cap && sim_grow(&l->e, &l->cap, l->n + 1, sizeof *l->e, 8))
        return SIM_ENOMEM;
    l->e[l->n++] = e;
    return 0;
}

bool llm_list_remove(struct llm_list *l, int e)
{
    for (int k = 0; k < l->n; k++)
        if (l->e[k] == e) {
            memmove(&l->e[k], &l->e[k + 1], (size_t)(l->n - k - 1) * sizeof *l->e);
            l->n--;
            return true;
        }
    return false;
}

void llm_list_free(struct llm_list *l)
{
    free(l->e);
    l->e = NULL;
    l->n = l->cap = 0;
}

int llm_spare_init(struct sim *s, struct llm_list *spare)
{
    int rc;
    for (int e = 0; e < sim_exec_count(s); e++)
        if (!sim_exec(s, e)->cpu && sim_mine_exec(s, e) && sim_llm_replica_of(s, e) < 0 &&
            (rc = llm_list_push(spare, e)))
            return rc;
    return 0;
}

double llm_model_weight(const struct sim *s, int m)
{
    return sim_model(s, m)->rate_rps > 0 ? sim_model(s, m)->rate_rps : 1;
}

int llm_pick_model(const struct sim *s, int nm, const int *count, const double *weight,
                   int spare)
{
    int best = -1;
    for (int m = 0; m < nm; m++)
        if (sim_mine_model(s, m) && sim_model_llm(s, m)->tp <= spare &&
            (best < 0 || count[m] * weight[best] < count[best] * weight[m]))
            best = m;
    return best;
}

void llm_spare_take(struct llm_list *spare, int tp)
{
    memmove(spare->e, spare->e + tp, (size_t)(spare->n - tp) * sizeof *spare->e);
    spare->n -= tp;
}

int llm_removed(struct sim *s, struct llm_list *spare, int e, int *m)
{
    if (llm_list_remove(spare, e))
        return -1;
    int r = sim_llm_replica_of(s, e);
    const struct sim_llm_state *ls = r >= 0 ? sim_llm_state(s, r) : NULL;
    if (!ls)
        return -1;
    *m = ls->model;
    for (int x = 0; x < sim_exec_count(s); x++)
        if (x != e && sim_llm_replica_of(s, x) == r && sim_exec(s, x)->state == SIM_EXEC_UP)
            sim_exec_remove(s, x);
    return r;
}

static bool better(const struct sim_llm_state *a, const struct sim_llm_state *b, int router)
{
    if (router == LLM_ROUTE_TOKENS)
        return a->tokens_left < b->tokens_left;
    double ua = (double)a->blocks_used / (double)a->blocks_total;
    double ub = (double)b->blocks_used / (double)b->blocks_total;
    return ua < ub || (ua == ub && a->waiting < b->waiting);
}

/* llm-d's default scheduling profile (llm-d-inference-scheduler, EndpointPickerConfig
 * "default": queue-scorer 2, kv-cache-utilization-scorer 2, prefix-cache-scorer 3, a max-score
 * picker): the weighted sum of three scores in [0, 1]. llm-d's prefix scorer estimates what
 * each pod caches from the requests it routed; this one reads the replica's cache itself (as
 * llm-d's precise scorer does from vLLM's KV events). */
static int route_prefix(const struct sim *s, const int *reps, int n, const struct sim_request *r)
{
    int lo = 0, hi = 0;
    for (int k = 0; k < n; k++) {
        int w = sim_llm_state(s, reps[k])->waiting;
        lo = k == 0 || w < lo ? w : lo;
        hi = k == 0 || w > hi ? w : hi;
    }
    const struct sim_llm_cfg *c = sim_model_llm(s, r->model);
    long blocks = ((long)r->prompt_tokens + c->block_size - 1) / c->block_size;
    int best = reps[0];
    double top = -1;
    for (int k = 0; k < n; k++) {
        const struct sim_llm_state *st = sim_llm_state(s, reps[k]);
        double pre = blocks > 0 ? (double)(sim_llm_prefix_match(s, reps[k], r) /
                                           c->block_size) / (double)blocks : 0;
        double kv = 1 - (double)st->blocks_used / (double)st->blocks_total;
        double q = hi > lo ? (double)(hi - st->waiting) / (double)(hi - lo) : 1;
        double score = 3 * pre + 2 * kv + 2 * q;
        if (score > top) {
            top = score;
            best = reps[k];
        }
    }
    return best;
}

int llm_route(const struct sim *s, const int *reps, int n, int *rr, int router,
              const struct sim_request *r)
{
    if (router == LLM_ROUTE_RR) {
        int e = reps[*rr % n];
        *rr = (*rr + 1) % n;
        return e;
    }
    if (router == LLM_ROUTE_PREFIX)
        return route_prefix(s, reps, n, r);
    int e = reps[0];
    for (int k = 1; k < n; k++)
        if (better(sim_llm_state(s, reps[k]), sim_llm_state(s, e), router))
            e = reps[k];
    return e;
}
