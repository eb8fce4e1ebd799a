/* sim_cluster — the GPU ledger: every GPU of every node, the claims on it (GPU executors'
 * whole GPUs, a policy's training workers and fractional shares) and the executors pending
 * for a GPU, which take GPUs as they free, in the order they were added. The semantics are in
 * sim.h ("the GPU ledger"); executors themselves are sim.c's. */
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "sim_grow.h"
#include "sim_int.h"

int sim_ledger_init(struct sim *s)
{
    const struct sim_world *w = s->cfg;
    int total = 0, nn = w->nnodes > 0 ? w->nnodes : 1;
    for (int n = 0; n < w->nnodes; n++)
        total += w->nodes[n].gpus;
    /* a world built without a ledger's worth of GPUs on its nodes (a program's, not a
     * config's: the config checks this) keeps its executors: the rest on the last node */
    int need = w->max_gpus > w->gpus ? w->max_gpus : w->gpus, extra = need > total ? need - total : 0;
    s->ngpus = total + extra;
    s->gpus = calloc((size_t)(s->ngpus > 0 ? s->ngpus : 1), sizeof *s->gpus);
    s->pend_execs = calloc((size_t)(need > 0 ? need : 1), sizeof *s->pend_execs);
    s->node_free = calloc((size_t)nn, sizeof *s->node_free);
    if (!s->gpus || !s->pend_execs || !s->node_free)
        return SIM_ENOMEM;
    int g = 0;
    for (int n = 0; n < w->nnodes; n++)
        for (int k = 0; k < w->nodes[n].gpus; k++)
            s->gpus[g++].pub.node = n;
    while (g < s->ngpus)
        s->gpus[g++].pub.node = nn - 1;
    for (g = 0; g < s->ngpus; g++)
        s->node_free[s->gpus[g].pub.node]++;
    s->free_hint = 0;
    return 0;
}

void sim_ledger_free(struct sim *s)
{
    for (int g = 0; s->gpus && g < s->ngpus; g++)
        free(s->gpus[g].claims);
    free(s->gpus);
    free(s->pend_execs);
    free(s->node_free);
    s->gpus = NULL;
    s->pend_execs = NULL;
    s->node_free = NULL;
}

int sim_gpu_count(const struct sim *s)
{
    return s->ngpus;
}

const struct sim_gpu *sim_gpu(const struct sim *s, int g)
{
    if (g < 0 || g >= s->ngpus)
        SIM_BUG("GPU %d out of range (%d GPUs)", g, s->ngpus);
    struct sim_gpu_int *gi = &s->gpus[g];
    gi->pub.claims = gi->claims;
    return &gi->pub;
}

int sim_node_gpus_free(const struct sim *s, int n)
{
    int nn = s->cfg->nnodes > 0 ? s->cfg->nnodes : 1;
    return n >= 0 && n < nn ? s->node_free[n] : 0;
}

int sim_ledger_first_free(struct sim *s)
{
    for (int g = s->free_hint; g < s->ngpus; g++)   /* amortised: the hint only moves up */
        if (s->gpus[g].pub.milli == 0) {            /* here or back down on a release */
            s->free_hint = g;
            return g;
        }
    s->free_hint = s->ngpus;
    return -1;
}

static int find_claim(const struct sim_gpu_int *gi, enum sim_holder kind, int id)
{
    for (int c = 0; c < gi->pub.nclaims; c++)
        if (gi->claims[c].kind == kind && gi->claims[c].id == id)
            return c;
    return -1;
}

int sim_gpu_claim(struct sim *s, int g, enum sim_holder kind, int id, int milli)
{
    if (g < 0 || g >= s->ngpus)
        return sim_err_set(SIM_EINVAL, "GPU %d: no such GPU (%d in the ledger)", g, s->ngpus), -1;
    struct sim_gpu_int *gi = &s->gpus[g];
    if (milli < 1 || milli > 1000)
        return sim_err_set(SIM_EINVAL, "GPU %d: a claim of %d thousandths (expected 1 to 1000)",
                           g, milli), -1;
    if (find_claim(gi, kind, id) >= 0)
        return sim_err_set(SIM_EINVAL, "GPU %d: holder %d of kind %d claims it already", g, id,
                           (int)kind), -1;
    if (gi->pub.milli + milli > 1000)
        return sim_err_set(SIM_EINVAL, "GPU %d: %d thousandths do not fit (%d claimed)", g,
                           milli, gi->pub.milli), -1;
    if (sim_grow(&gi->claims, &gi->cap, gi->pub.nclaims + 1, sizeof *gi->claims, 2))
        return sim_fail_nomem(s, "for a GPU's claims"), -1;
    gi->claims[gi->pub.nclaims++] = (struct sim_gpu_claim){kind, id, milli};
    if (gi->pub.milli == 0)
        s->node_free[gi->pub.node]--;
    gi->pub.milli += milli;
    return 0;
}

/* GPU g is wholly free: the policy hears of it first (it may claim it for its own pending
 * work, e.g. pods created before the first pending executor); if it is still wholly free
 * after, the first pending executor takes it. */
static void gpu_freed(struct sim *s, int g)
{
    if (!s->stopping && s->pol->on_gpu_free)
        SIM_POLICY_CALL(s, on_gpu_free, g);
    if (s->npend > 0 && s->gpus[g].pub.milli == 0) {
        int e = s->pend_execs[0];
        memmove(s->pend_execs, s->pend_execs + 1, (size_t)(--s->npend) * sizeof *s->pend_execs);
        s->up.exec_bind(s, e, g);
    }
}

int sim_exec_first_pending(const struct sim *s)
{
    return s->npend > 0 ? s->pend_execs[0] : -1;
}

void sim_gpu_release(struct sim *s, int g, enum sim_holder kind, int id)
{
    if (g < 0 || g >= s->ngpus)
        SIM_BUG("release of GPU %d out of range (%d GPUs)", g, s->ngpus);
    struct sim_gpu_int *gi = &s->gpus[g];
    int c = find_claim(gi, kind, id);
    if (c < 0)
        return;
    gi->pub.milli -= gi->claims[c].milli;
    memmove(gi->claims + c, gi->claims + c + 1,
            (size_t)(gi->pub.nclaims - c - 1) * sizeof *gi->claims);
    gi->pub.nclaims--;
    if (gi->pub.milli == 0) {
        s->node_free[gi->pub.node]++;
        if (g < s->free_hint)
            s->free_hint = g;
        gpu_freed(s, g);
    }
}

/* Removes a pending executor from the queue (when it is removed before it got a GPU). */
void sim_ledger_unpend(struct sim *s, int e)
{
    for (int i = 0; i < s->npend; i++)
        if (s->pend_execs[i] == e) {
            memmove(s->pend_execs + i, s->pend_execs + i + 1,
                    (size_t)(s->npend - i - 1) * sizeof *s->pend_execs);
            s->npend--;
            return;
        }
}
