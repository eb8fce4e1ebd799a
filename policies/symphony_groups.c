/* symphony_groups — Symphony's sub-clusters (symphony.c has the scheduling): the partition
 * of the models at the start (symphony_part.h: the spec's MILP, or random assignments), the
 * GPUs split by work, and re-partitioning at run time (repartition_s: models move make
 * before break, then GPUs follow the work; docs/policies.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "symphony_int.h"
#include "symphony_part.h"

int sym_reserve_gpus(struct symphony *st, int n)
{
    if (n <= st->gcap)
        return 0;
    int cap = st->gcap ? 2 * n - 1 : n;
    int *gg = realloc(st->gpu_grp, (size_t)cap * sizeof *gg);
    if (gg)
        st->gpu_grp = gg;
    int *ld = realloc(st->loading, (size_t)cap * sizeof *ld);
    if (ld)
        st->loading = ld;
    size_t nm = (size_t)st->nm, old = (size_t)st->gcap, nc = (size_t)cap;
    int *in = realloc(st->inflight, nc * nm * sizeof *in);
    if (in)
        st->inflight = in;
    int *bz = realloc(st->busy, nc * sizeof *bz);
    if (bz)
        st->busy = bz;
    unsigned char *pd = realloc(st->pend, nc * nm);
    if (pd)
        st->pend = pd;
    bool *mv = realloc(st->moving, nc * sizeof *mv);
    if (mv)
        st->moving = mv;
    if (!gg || !ld || !in || !bz || !pd || !mv)
        return SIM_ENOMEM;
    memset(in + old * nm, 0, (nc - old) * nm * sizeof *in);
    memset(pd + old * nm, 0, (nc - old) * nm);
    for (int g = st->gcap; g < cap; g++)
        gg[g] = -1, ld[g] = 0, bz[g] = 0, mv[g] = false;
    for (int i = 0; i < st->k; i++)
        if (sim_iheap_reserve(&st->grp[i].gpus, cap))
            return SIM_ENOMEM;
    st->gcap = cap;
    return 0;
}

/* GPU g joins sub-cluster gi (its models resident), free now. */
void sym_join(struct sim *s, struct symphony *st, int g, int gi)
{
    st->gpu_grp[g] = gi;
    sim_iheap_set(&st->grp[gi].gpus, g, sim_now(s));
    st->grp[gi].ng++;
}

/* The partition of the models at their configured rates into st->gof and the GPUs split by
 * work (each sub-cluster at least one), for `want` sub-clusters (0: the fewest that fit). */
int sym_partition(struct sim *s, struct symphony *st, int want, double limit_s, double rmax,
                     bool random)
{
    const struct sim_world *w = sim_world(s);
    int ng = sim_exec_count(s);
    if (st->nm > SYM_PART_MAX_MODELS)
        return sim_err_set(SIM_EINVAL, "policy.params.sub_clusters: at most %d models can be "
                           "partitioned, got %d", SYM_PART_MAX_MODELS, st->nm);
    struct sym_part_problem *p = calloc(1, sizeof *p);
    struct sym_part_result *r = calloc(1, sizeof *r);
    double work[SYM_PART_MAX_MODELS];
    int rc = SIM_ENOMEM;
    if (!p || !r)
        goto out;
    p->n = st->nm;
    p->r_max = rmax;
    p->s_max = w->gpu_memory_mb;
    p->time_limit_s = limit_s;
    p->node_limit = st->node_limit;
    for (int m = 0; m < st->nm; m++) {
        const struct sim_model_cfg *mc = sim_model(s, m)->cfg;
        int b = sim_model(s, m)->max_batch;
        p->r[m] = sim_model(s, m)->rate_rps * sim_load_scale(s);
        p->s[m] = mc->weights_mb + mc->static_mb;
        p->d[m] = mc->dynamic_mb;
        work[m] = p->r[m] * (double)lat(s, st, m, b) / 1e9 / b;
    }
    int lo = want ? want : 1, hi = want ? want : (ng < st->nm ? ng : st->nm);
    r->feasible = false;
    for (p->k = lo; p->k <= hi; p->k++)
        if ((rc = random ? sym_part_random(p, 1000, sim_policy_rng(s), r) : sym_part_milp(p, r)) ||
            r->feasible)
            break;
    if (rc)
        goto out;
    rc = SIM_EINVAL;
    if (!r->feasible) {
        sim_err_set(rc, "policy.params.sub_clusters: no partition into %d%s sub-clusters puts "
                    "each one's models (weights, static memory and the largest dynamic memory) "
                    "within cluster.gpu_memory_mb %g%s", hi, want ? "" : " or fewer",
                    w->gpu_memory_mb, rmax > 0 ? " and its rate within dispatcher_max_rps" : "");
        goto out;
    }
    st->k = p->k;
    if (ng < st->k) {
        sim_err_set(rc, "policy.params.sub_clusters: %d sub-clusters need at least as many GPUs, "
                    "the cluster starts with %d", st->k, ng);
        goto out;
    }
    rc = 0;
    for (int m = 0; m < st->nm; m++) {
        st->gof[m] = r->assign[m];
        st->grp[r->assign[m]].work += work[m];
    }
out:
    free(p);
    free(r);
    return rc;
}

/* GPUs per sub-cluster in proportion to its work: each one first, then largest remainders
 * (ties: the lower index). */
void sym_split_gpus(struct symphony *st, int ng, int *count)
{
    double total = 0, rem[SYM_PART_MAX_GROUPS];
    int left = ng - st->k;
    for (int i = 0; i < st->k; i++)
        total += st->grp[i].work;
    for (int i = 0; i < st->k; i++) {
        double share = total > 0 ? left * st->grp[i].work / total : (double)left / st->k;
        count[i] = 1 + (int)floor(share);
        rem[i] = share - floor(share);
    }
    int given = 0;
    for (int i = 0; i < st->k; i++)
        given += count[i];
    for (; given < ng; given++) {
        int best = 0;
        for (int i = 1; i < st->k; i++)
            if (rem[i] > rem[best])
                best = i;
        count[best]++;
        rem[best] = -1;
    }
}

/* Executors joining and leaving (autoscaling): sub-cluster gi's GPU set changed, so every
 * candidate's start time there may have; recompute them all. */
void sym_regroup(struct sim *s, struct symphony *st, int gi)
{
    for (int m = 0; m < st->nm; m++)
        if (st->gof[m] == gi && (st->c[m].valid || sim_queue_len(s, m) > 0)) {
            sym_unpark(st, m);
            sym_refresh(s, st, m);
        }
    sym_rank_rearm(s, st, gi);
}

/* ---------------------------------------------------------------- re-partitioning */


/* Whether GPU g is serving in its sub-cluster (in its heap), not moving or loading to join. */
static bool sym_serving(const struct symphony *st, int g)
{
    int gi = st->gpu_grp[g];
    return gi >= 0 && sim_iheap_has(&st->grp[gi].gpus, g);
}

/* Model m is resident on g but belongs neither to g's sub-cluster nor is moving there, and no
 * batch of it is in flight on g: its pages go. */
void sym_evict_if_done(struct sim *s, struct symphony *st, int g, int m)
{
    int gi = st->gpu_grp[g];
    if (sim_resident(s, g, m) == SIM_RES_LOADED && st->gof[m] != gi && st->next[m] != gi &&
        *inflight_at(st, g, m) == 0)
        sim_evict(s, g, m);
}

static void sym_move_gpus(struct sim *s, struct symphony *st);

/* Model m is loaded on every GPU serving its new sub-cluster: it is scheduled there from now
 * on (its candidate recomputed against those GPUs) and leaves the old ones. */
void sym_switch_model(struct sim *s, struct symphony *st, int m)
{
    int from = st->gof[m], to = st->next[m];
    sym_unpark(st, m);
    st->gof[m] = to;
    st->models_moving--;
    if (st->c[m].valid || sim_queue_len(s, m) > 0)
        sym_refresh(s, st, m);
    sym_rank_rearm(s, st, from);
    sym_rank_rearm(s, st, to);
    for (int g = 0; g < st->gcap && g < sim_exec_count(s); g++)
        if (st->gpu_grp[g] == from)
            sym_evict_if_done(s, st, g, m);
    if (st->models_moving == 0)
        sym_move_gpus(s, st);
}

/* GPU g, out of service and idle, sheds the models its new sub-cluster does not have and
 * loads those it lacks (the sub-cluster's own and those moving in); it joins when loaded. */
void sym_settle(struct sim *s, struct symphony *st, int g)
{
    int gi = st->gpu_grp[g];
    for (int m = 0; m < st->nm; m++)
        sym_evict_if_done(s, st, g, m);
    for (int m = 0; m < st->nm; m++)
        if ((st->gof[m] == gi || st->next[m] == gi) && sim_resident(s, g, m) == SIM_RES_NONE) {
            if (sim_load(s, g, m, 0) != 0)
                SIM_BUG("symphony: GPU %d cannot hold the models of sub-cluster %d", g, gi);
            st->loading[g]++;
        }
    if (st->loading[g] == 0) {
        st->moving[g] = false;
        st->gpus_moving--;
        sym_join(s, st, g, gi);
        sym_regroup(s, st, gi);
    }
}

/* The second step of a re-partition: GPUs per sub-cluster in proportion to its work; each
 * sub-cluster with more gives its highest-numbered serving GPUs to those with fewer. */
static void sym_move_gpus(struct sim *s, struct symphony *st)
{
    int ng = 0, count[SYM_PART_MAX_GROUPS], need[SYM_PART_MAX_GROUPS];
    for (int i = 0; i < st->k; i++)
        ng += st->grp[i].ng;
    if (ng < st->k)
        return;
    sym_split_gpus(st, ng, count);
    for (int i = 0; i < st->k; i++)
        need[i] = count[i] - st->grp[i].ng;
    int to = 0;
    for (int from = 0; from < st->k; from++)
        for (int g = sim_exec_count(s) - 1; g >= 0 && need[from] < 0; g--) {
            if (g >= st->gcap || st->gpu_grp[g] != from || !sym_serving(st, g))
                continue;
            while (to < st->k && need[to] <= 0)
                to++;
            if (to == st->k)
                return;
            sim_iheap_remove(&st->grp[from].gpus, g);
            st->grp[from].ng--;
            need[from]++;
            need[to]--;
            st->gpu_grp[g] = to;
            st->moving[g] = true;
            st->gpus_moving++;
            st->gpus_moved++;
            sym_regroup(s, st, from);
            if (st->busy[g] == 0)
                sym_settle(s, st, g);
        }
}

/* Every repartition_s: the models' work at their measured rates; when the work per GPU of
 * the sub-clusters is more uneven than repartition_threshold ((max - min) / mean), the
 * partitioner runs again from the current partition, moving at most repartition_max_moves
 * models, with old and new models fitting together (transition); its answer is taken only
 * if it lowers the partitioner's objective by repartition_gain (else models stay: measured
 * rates are noisy), and the GPUs follow the work either way. */
void sym_repartition(struct sim *s, struct symphony *st)
{
    if (st->models_moving > 0 || st->gpus_moving > 0)
        return;
    int64_t now = sim_now(s);
    struct sym_part_problem *p = calloc(1, sizeof *p);
    struct sym_part_result *r = calloc(1, sizeof *r);
    if (!p || !r) {
        free(p);
        free(r);
        sim_fail_nomem(s, "re-partitioning");
        return;
    }
    double W[SYM_PART_MAX_GROUPS] = {0};
    for (int m = 0; m < st->nm; m++) {
        struct cand *c = &st->c[m];
        double per_ns = c->rate_c * exp(-(double)(now - c->rate_t) / st->tau_ns) / st->tau_ns;
        int b = sim_model(s, m)->max_batch;
        p->r[m] = per_ns * 1e9;
        st->mwork[m] = p->r[m] * (double)lat(s, st, m, b) / 1e9 / b;
        W[st->gof[m]] += st->mwork[m];
    }
    double lo = INFINITY, hi = 0, sum = 0;
    int groups = 0;
    for (int i = 0; i < st->k; i++)
        if (st->grp[i].ng > 0) {
            double x = W[i] / st->grp[i].ng;
            lo = fmin(lo, x), hi = fmax(hi, x), sum += x, groups++;
        }
    if (groups < st->k || sum <= 0 || (hi - lo) / (sum / groups) <= st->rep_threshold)
        goto out;
    /* memory in the engine's pages: the weights cache of a GPU (memory less room for the
     * largest activations), so what the partitioner allows always loads */
    p->n = st->nm;
    p->k = st->k;
    p->r_max = st->rmax;
    p->s_max = sim_exec(s, 0)->pages_total;
    p->time_limit_s = st->limit_s;
    p->node_limit = st->node_limit;
    p->prev = st->gof;
    p->c_max = st->rep_moves;
    p->transition = true;
    for (int m = 0; m < st->nm; m++) {
        p->s[m] = sim_model_pages(s, m);
        p->c[m] = 1;
    }
    struct sym_part_result cur;
    sym_part_eval(p, st->gof, &cur);
    if ((st->random_part ? sym_part_random(p, 1000, sim_policy_rng(s), r) : sym_part_milp(p, r)) ||
        !r->feasible || r->objective > (1 - st->rep_gain) * cur.objective)
        sym_part_eval(p, st->gof, r);   /* not worth moving models: the GPUs may still move */
    sim_err_clear();
    int mm0 = st->models_moved, gm0 = st->gpus_moved;
    for (int i = 0; i < st->k; i++)
        st->grp[i].work = 0;
    for (int m = 0; m < st->nm; m++)
        st->grp[r->assign[m]].work += st->mwork[m];
    for (int m = 0; m < st->nm; m++) {
        int to = r->assign[m];
        if (to == st->gof[m])
            continue;
        st->next[m] = to;
        st->models_moving++;
        st->models_moved++;
        for (int g = 0; g < st->gcap && g < sim_exec_count(s); g++) {
            if (st->gpu_grp[g] != to || !sym_serving(st, g) || sim_resident(s, g, m) != SIM_RES_NONE)
                continue;
            if (sim_load(s, g, m, 0) != 0)
                SIM_BUG("symphony: GPU %d of sub-cluster %d has no room for model %d moving "
                        "in", g, to, m);
            *pend_at(st, g, m) = 1;
            st->mload[m]++;
        }
    }
    for (int m = 0; m < st->nm; m++)    /* already resident wherever it goes */
        if (st->next[m] != st->gof[m] && st->mload[m] == 0)
            sym_switch_model(s, st, m);
    if (st->models_moving == 0)
        sym_move_gpus(s, st);
    st->repartitions += st->models_moved > mm0 || st->gpus_moved > gm0;
out:
    free(p);
    free(r);
}

