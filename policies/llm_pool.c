/* llm_pool — the LLM policies' shared parts (see llm_pool.h). */
#include "llm_pool.h"

#include <stdlib.h>
#include <string.h>

#include "sim_err.h"

const char *const llm_routers[] = {"round_robin", "least_tokens", "kv_util", NULL};

void llm_pools_free(struct llm_pools *lp)
{
    free(lp->gpus);
    free(lp->first);
    lp->gpus = lp->first = NULL;
}

int llm_pools_assign(struct sim *s, const char *policy, int least, struct llm_pools *lp)
{
    int nm = sim_model_count(s), ng = 0;
    for (int m = 0; m < nm; m++)
        if (!sim_model_llm(s, m))
            return sim_err_set(SIM_EINVAL, "policy %s serves LLM models only: model %s is a "
                               "DNN model (an LLM model's entry has an `llm` section: "
                               "docs/llm.md)", policy, sim_model(s, m)->cfg->name);
    for (int e = 0; e < sim_exec_count(s); e++)
        ng += !sim_exec(s, e)->cpu;
    if (nm < 1 || ng < least * nm)
        return sim_err_set(SIM_EINVAL, "policy %s: %d GPUs for %d LLM models: every model needs "
                           "%d of its own (servesim plan: --min %d)", policy, ng, nm, least,
                           least * nm);
    lp->nmodels = nm;
    lp->gpus = malloc((size_t)ng * sizeof *lp->gpus);
    lp->first = malloc((size_t)(nm + 1) * sizeof *lp->first);
    int *n = calloc((size_t)nm, sizeof *n);
    if (!lp->gpus || !lp->first || !n) {
        free(n);
        return SIM_ENOMEM;
    }
    double total = 0;
    for (int m = 0; m < nm; m++)
        total += sim_model(s, m)->rate_rps > 0 ? sim_model(s, m)->rate_rps : 1;
    int given = 0;
    for (int m = 0; m < nm; m++) {
        double w = sim_model(s, m)->rate_rps > 0 ? sim_model(s, m)->rate_rps : 1;
        n[m] = least + (int)((double)(ng - least * nm) * w / total);
        given += n[m];
    }
    for (int m = 0; given < ng; m = (m + 1) % nm, given++)
        n[m]++;
    lp->first[0] = 0;
    for (int m = 0; m < nm; m++)
        lp->first[m + 1] = lp->first[m] + n[m];
    free(n);
    for (int e = 0, k = 0; e < sim_exec_count(s); e++)
        if (!sim_exec(s, e)->cpu)
            lp->gpus[k++] = e;
    return 0;
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

static bool better(const struct sim_llm_state *a, const struct sim_llm_state *b, int router)
{
    if (router == LLM_ROUTE_TOKENS)
        return a->tokens_left < b->tokens_left;
    double ua = (double)a->blocks_used / (double)a->blocks_total;
    double ub = (double)b->blocks_used / (double)b->blocks_total;
    return ua < ub || (ua == ub && a->waiting < b->waiting);
}

int llm_route(const struct sim *s, const int *reps, int n, int *rr, int router)
{
    if (router == LLM_ROUTE_RR) {
        int e = reps[*rr % n];
        *rr = (*rr + 1) % n;
        return e;
    }
    int e = reps[0];
    for (int k = 1; k < n; k++)
        if (better(sim_llm_state(s, reps[k]), sim_llm_state(s, e), router))
            e = reps[k];
    return e;
}
