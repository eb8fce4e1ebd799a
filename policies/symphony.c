/* symphony — centralized, non-work-conserving batch scheduling (specs/symphony.md).
 *
 * One event-driven state machine replaces the paper's per-model threads and rank thread,
 * with the same decisions:
 *  - per model, a candidate batch (bs, exec_at, invalid_after), recomputed on every arrival,
 *    grant and timer: drop requests that cannot finish even alone; bs = largest deadline-
 *    ordered prefix that meets the earliest deadline when started at
 *    earliest = max(now + delay(bs), gpu_free_at); exec_at = earliest when the batch already
 *    holds beta*lambda requests (or cannot grow), else max(earliest, dl - l(bs+1)).
 *  - a model timer at exec_at - delay(bs) asks for the GPU with the earliest free_at; if it is
 *    free by exec_at the model gets it, else the candidate is parked;
 *  - a rank timer at free_at - (largest parked delay) discards parked candidates that the GPU
 *    frees too late for (they are recomputed) and grants the GPU to the parked candidate with
 *    the earliest exec_at.
 * Deadlines are the requests' SLO deadlines less the nominal response delay, so a batch that
 * meets the planned deadline is on time end to end.
 * work_conserving=true uses exec_at = earliest always (the paper's baseline).
 * overload_drop (default true; our addition, see docs/policies.md): when more requests wait
 * than fit the head's deadline and that batch b cannot keep up with the arrival rate even on
 * all N GPUs (N b < lambda l(b)), drop the oldest if that lets a strictly larger batch meet its
 * deadline. Without it, overload shrinks batches toward 1 (each batch is limited by an
 * almost-expired head) and throughput collapses instead of showing the spec's flat top.
 * Autoscaling signals (bad rate, idle fraction, and the GPUs the spec's rules would add or
 * release) are recorded in the time series every sampling period; the autoscaler that acts
 * on them is a separate component (policies/autoscale.c). GPUs may join and leave: the
 * free-time heap holds the GPUs up, and every candidate is recomputed when the set changes.
 *
 * Sub-clusters (param sub_clusters > 1, or 0 for the fewest that fit): the partitioner
 * (symphony_part.h) splits the models so each sub-cluster's models fit one GPU's memory (and
 * one dispatcher's rate), and the GPUs are split in proportion to each sub-cluster's work at
 * the configured rates; every GPU holds its sub-cluster's models, and each sub-cluster is
 * scheduled as above with its own heap, parked list and rank timer. A GPU added at run time
 * joins the sub-cluster with the most work per GPU once its models are loaded. With
 * repartition_s the partition follows the measured load (sym_repartition(): models move make
 * before break, then GPUs follow the work; docs/policies.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "sim_err.h"
#include "sim_iheap.h"
#include "sim_json.h"
#include "sim_param.h"
#include "symphony_int.h"
#include "symphony_part.h"

static const char *const PARTITIONERS[] = {"milp", "random", NULL};
#define SP(f, type) SIM_P_AT(struct sym_params, f, type)
static const struct sim_param params[] = {
    {"work_conserving", SIM_P_BOOL, SP(work_conserving, bool), .def = 0,
     .doc = "true: every candidate runs as soon as it can (the paper's baseline), same code "
            "otherwise"},
    {"rate_window_ms", SIM_P_NUM, SP(rate_window_ms, double), .cons = SIM_J_POS, .def = 1000,
     .doc = "time constant of the exponentially decayed arrival-rate estimate (lambda)"},
    {"bad_rate_threshold", SIM_P_NUM, SP(bad_rate_threshold, double), .cons = SIM_J_UNIT,
     .def = 0.01, .doc = "above it, the autoscaling signal asks for N r/(1-r) more GPUs"},
    {"overload_drop", SIM_P_BOOL, SP(overload_drop, bool), .def = 1,
     .doc = "early drop under overload (below); false = the spec's candidate rule to the "
            "letter"},
    {"sub_clusters", SIM_P_INT, SP(sub_clusters, int), .lo = 0, .hi = SYM_PART_MAX_GROUPS,
     .def = 1, .doc = "1: none; k > 1: k sub-clusters; 0: the fewest that fit (below)"},
    {"partitioner", SIM_P_ENUM, SIM_P_AT_ENUM(struct sym_params, partitioner),
     .choices = PARTITIONERS,
     .doc = "`milp`: the spec's GLPK MILP (`policies/symphony_part.h`); `random`: the best "
            "of 1,000 random assignments"},
    {"partition_node_limit", SIM_P_INT, SP(partition_node_limit, int), .lo = 0,
     .hi = 100000000, .def = 20000,
     .doc = "branch-and-bound nodes (0: none); past it the best partition found stands, a "
            "limit that binds alike on every machine"},
    {"partition_time_limit_s", SIM_P_NUM, SP(partition_time_limit_s, double),
     .cons = SIM_J_POS, .def = 60,
     .doc = "a backstop; where it binds, the partition depends on the machine's speed"},
    {"dispatcher_max_rps", SIM_P_NUM, SP(dispatcher_max_rps, double), .cons = SIM_J_NONNEG,
     .def = 0, .doc = "the most a sub-cluster's dispatcher takes (0: no limit)"},
    {"repartition_s", SIM_P_NUM, SP(repartition_s, double), .cons = SIM_J_NONNEG, .def = 0,
     .doc = "re-partition at run time this often (0: never; needs sub-clusters)"},
    {"repartition_threshold", SIM_P_NUM, SP(repartition_threshold, double),
     .cons = SIM_J_NONNEG, .def = 0.25,
     .doc = "re-partition when the work per GPU is more uneven than this, (max - min) / mean"},
    {"repartition_max_moves", SIM_P_INT, SP(repartition_max_moves, int), .lo = 0,
     .hi = SYM_PART_MAX_MODELS, .def = 2, .doc = "the most models one re-partition moves"},
    {"repartition_gain", SIM_P_NUM, SP(repartition_gain, double), .cons = SIM_J_UNIT,
     .def = 0.2, .doc = "take a new partition only if it lowers the objective by this much"},
    {NULL}};
#undef SP

static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static inline int64_t eff_dl(const struct sim *s, const struct sim_request *r)
{
    return r->deadline - sim_resp_delay_ns(s, r->model);
}

/* Can a batch of b, started at max(now + delay(b), gfree), finish by deadline dl? */
static inline bool fits_by(const struct sim *s, const struct symphony *st, int m, int b,
                           int64_t gfree, int64_t dl)
{
    return max64(sim_now(s) + sim_dispatch_delay_ns(s, b), gfree) + lat(s, st, m, b) <= dl;
}

/* Can the b requests first..first+b-1 finish by the deadline of request `first` (the
 * earliest of them)? Monotone in b. */
static bool fits(const struct sim *s, const struct symphony *st, int m, int first, int b,
                 int64_t gfree)
{
    return fits_by(s, st, m, b, gfree, eff_dl(s, sim_queue_at(s, m, first)));
}

/* Step 2: the largest batch starting at request `first` that fits (0 if none), by binary
 * search with the deadline read once. */
static int prefix_batch(const struct sim *s, const struct symphony *st, int m, int first,
                        int64_t gfree)
{
    int maxb = sim_model(s, m)->max_batch, len = sim_queue_len(s, m) - first;
    int lo = 0, hi = len < maxb ? len : maxb;
    if (hi <= 0)
        return 0;
    int64_t dl = eff_dl(s, sim_queue_at(s, m, first));
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (fits_by(s, st, m, mid, gfree, dl))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Steps 1-5 of the candidate update against a GPU free at gfree. */
static void update(struct sim *s, struct symphony *st, int m, int64_t gfree)
{
    struct cand *c = &st->c[m];
    int64_t now = sim_now(s);
    /* step 1: drop what cannot finish even alone */
    while (sim_queue_len(s, m) > 0 && !fits(s, st, m, 0, 1, gfree))
        sim_queue_drop_head(s, m);
    int len = sim_queue_len(s, m);
    if (len == 0) {
        c->valid = false;
        return;
    }
    int maxb = sim_model(s, m)->max_batch;
    int bs = prefix_batch(s, st, m, 0, gfree);
    double lambda = c->rate_c / st->tau_ns;                 /* requests per ns */
    /* N GPUs keep up with rate lambda at batch b only if N b >= lambda l(b) */
    bool behind = (double)st->grp[st->gof[m]].ng * bs < lambda * (double)lat(s, st, m, bs);
    if (st->overload_drop && behind && bs < len && bs < maxb) {
        /* Overload: the oldest requests limit the batch. Drop them when that lets a strictly
         * larger batch meet its deadline (Nexus-style early drop); otherwise batches shrink
         * toward 1 and throughput collapses instead of staying flat. */
        int best_i = 0, best = bs;
        for (int i = 1; i < len && len - i > best && i <= maxb; i++) {
            int b = prefix_batch(s, st, m, i, gfree);
            if (b > best) {
                best = b;
                best_i = i;
            }
        }
        for (int i = 0; i < best_i; i++)
            sim_queue_drop_head(s, m);
        bs = best;
        len = sim_queue_len(s, m);
    }
    int64_t dl = eff_dl(s, sim_queue_at(s, m, 0));
    int64_t earliest = max64(now + sim_dispatch_delay_ns(s, bs), gfree);
    int64_t frontrun = dl - lat(s, st, m, bs + 1);
    bool ready = st->wc || bs >= maxb || bs < len || (double)bs >= (double)c->beta_ns * lambda;
    c->valid = true;
    c->bs = bs;
    c->exec_at = ready ? earliest : max64(earliest, frontrun);
    c->invalid_after = dl - lat(s, st, m, bs);
    c->drop_at = dl - lat(s, st, m, 1) - sim_dispatch_delay_ns(s, 1) + 1;
}

static void arm(struct sim *s, struct cand *c, int m, int64_t at)
{
    if (c->timer && c->timer_at == at)
        return;
    c->timer = sim_timer_rearm(s, c->timer, at, TAG_MODEL, (void *)(intptr_t)m);
    c->timer_at = at;
}

void sym_unpark(struct symphony *st, int m)
{
    if (!st->c[m].parked)
        return;
    st->c[m].parked = false;
    struct group *G = &st->grp[st->gof[m]];
    for (int i = 0; i < G->nparked; i++)
        if (G->parked[i] == m) {
            G->parked[i] = G->parked[--G->nparked];
            return;
        }
}

/* Step 6 and the model timer: when to look at this model next. */
static void schedule(struct sim *s, struct symphony *st, int m)
{
    struct cand *c = &st->c[m];
    if (!c->valid) {
        sym_unpark(st, m);
        sim_timer_cancel(s, c->timer);
        c->timer = 0;
        return;
    }
    int64_t t_send = c->exec_at - sim_dispatch_delay_ns(s, c->bs);
    if (c->parked && t_send > sim_now(s))
        sym_unpark(st, m);
    arm(s, c, m, c->parked ? c->drop_at : t_send);
}

void sym_rank_rearm(struct sim *s, struct symphony *st, int gi)
{
    struct group *G = &st->grp[gi];
    if (G->nparked == 0) {
        sim_timer_cancel(s, G->rank_timer);
        G->rank_timer = 0;
        return;
    }
    int64_t maxd = 0;
    for (int i = 0; i < G->nparked; i++) {
        int64_t d = sim_dispatch_delay_ns(s, st->c[G->parked[i]].bs);
        if (d > maxd)
            maxd = d;
    }
    int g = sim_iheap_top(&G->gpus);
    int64_t at = max64(sim_now(s), sim_iheap_key(&G->gpus, g) - maxd);
    if (G->rank_timer && G->rank_at == at)
        return;
    G->rank_timer = sim_timer_rearm(s, G->rank_timer, at, TAG_RANK, (void *)(intptr_t)gi);
    G->rank_at = at;
}

void sym_refresh(struct sim *s, struct symphony *st, int m)
{
    struct group *G = &st->grp[st->gof[m]];
    int g = sim_iheap_top(&G->gpus);
    if (g < 0)
        SIM_BUG("symphony: no GPU up in the sub-cluster of model %d (the autoscaler keeps at "
                "least min_gpus)", m);
    update(s, st, m, sim_iheap_key(&G->gpus, g));
    schedule(s, st, m);
}

static void grant(struct sim *s, struct symphony *st, int g, int m)
{
    struct cand *c = &st->c[m];
    struct group *G = &st->grp[st->gof[m]];
    sym_unpark(st, m);
    update(s, st, m, sim_iheap_key(&G->gpus, g));
    if (c->valid) {
        sim_dispatch(s, g, m, c->bs, c->exec_at);
        sim_iheap_set(&G->gpus, g, c->exec_at + lat(s, st, m, c->bs));
        (*inflight_at(st, g, m))++;
        st->busy[g]++;
    }
    sym_refresh(s, st, m);
    sym_rank_rearm(s, st, st->gof[m]);
}

static void on_model_timer(struct sim *s, struct symphony *st, int m)
{
    struct cand *c = &st->c[m];
    struct group *G = &st->grp[st->gof[m]];
    c->timer = 0;
    if (c->parked) {                       /* the earliest deadline passed while waiting */
        sym_refresh(s, st, m);
        sym_rank_rearm(s, st, st->gof[m]);
        return;
    }
    int g = sim_iheap_top(&G->gpus);
    if (!c->valid)
        return;
    if (sim_iheap_key(&G->gpus, g) <= c->exec_at) {
        grant(s, st, g, m);
        return;
    }
    c->parked = true;
    G->parked[G->nparked++] = m;
    arm(s, c, m, c->drop_at);
    sym_rank_rearm(s, st, st->gof[m]);
}

static void on_rank_timer(struct sim *s, struct symphony *st, int gi)
{
    struct group *G = &st->grp[gi];
    G->rank_timer = 0;
    int g = sim_iheap_top(&G->gpus);
    int64_t f = sim_iheap_key(&G->gpus, g);
    int best = -1;
    int nstale = 0;
    int *stale = G->parked + G->nparked;      /* scratch space after the parked list */
    for (int i = 0; i < G->nparked; i++) {
        int p = G->parked[i];
        if (f > st->c[p].invalid_after)
            stale[nstale++] = p;
        else if (best < 0 || st->c[p].exec_at < st->c[best].exec_at ||
                 (st->c[p].exec_at == st->c[best].exec_at && p < best))
            best = p;
    }
    for (int i = 0; i < nstale; i++) {
        int p = stale[i];
        sym_unpark(st, p);
        sym_refresh(s, st, p);
    }
    if (best >= 0)
        grant(s, st, g, best);
    else
        sym_rank_rearm(s, st, gi);
}

/* Room for GPU ids 0..n-1 in the per-GPU tables and every sub-cluster's heap (ids are never
 * reused: a long autoscaled run outgrows cluster.max_gpus). */
static int init(struct sim *s, const cJSON *p, void *state)
{
    struct symphony *st = state;
    const struct sym_params *pp = &st->par;
    int rc;
    if ((rc = sim_params_read(params, p, "policy.params", &st->par)))
        return rc;
    double limit_s = pp->partition_time_limit_s, rmax = pp->dispatcher_max_rps;
    double rep_s = pp->repartition_s;
    int want = pp->sub_clusters, partitioner = pp->partitioner;
    st->wc = pp->work_conserving;
    st->overload_drop = pp->overload_drop;
    st->bad_threshold = pp->bad_rate_threshold;
    st->rep_threshold = pp->repartition_threshold;
    st->rep_gain = pp->repartition_gain;
    if (rep_s > 0 && (rc = sim_check_period(s, "policy.params.repartition_s", rep_s, SIM_MAX_PLANS)))
        return rc;
    if (want != 1 && sim_view_current(s) >= 0)
        return sim_err_set(SIM_EINVAL, "policy.params.sub_clusters: 1 as a part of pools (the "
                           "partitioner would weigh the other parts' models)");
    if (rep_s > 0 && want == 1)
        return sim_err_set(SIM_EINVAL, "policy.params.repartition_s: re-partitioning needs "
                           "sub-clusters (sub_clusters 0 for the fewest that fit, or > 1)");
    st->rep_ns = sim_s_to_ns(rep_s);
    st->rep_moves = pp->repartition_max_moves;
    st->rmax = rmax;
    st->limit_s = limit_s;
    st->node_limit = pp->partition_node_limit;
    st->random_part = partitioner == 1;
    st->tau_ns = pp->rate_window_ms * 1e6;
    st->nm = sim_model_count(s);
    st->kind = sim_exec(s, 0)->kind;
    st->c = calloc((size_t)st->nm, sizeof *st->c);
    if (st->c)
        for (int m = 0; m < st->nm; m++)
            st->c[m].lat = sim_latency_table(s, m, st->kind);
    st->gof = calloc((size_t)st->nm, sizeof *st->gof);
    st->grp = calloc(SYM_PART_MAX_GROUPS, sizeof *st->grp);
    st->next = calloc((size_t)st->nm, sizeof *st->next);
    st->mload = calloc((size_t)st->nm, sizeof *st->mload);
    st->mwork = calloc((size_t)st->nm, sizeof *st->mwork);
    if (!st->c || !st->gof || !st->grp || !st->next || !st->mload || !st->mwork)
        return SIM_ENOMEM;
    st->k = 1;
    if (want != 1 && (rc = sym_partition(s, st, want, limit_s, rmax, partitioner == 1)))
        return rc;
    int ng = sim_exec_count(s);
    int cap = sim_world(s)->max_gpus > ng ? sim_world(s)->max_gpus : ng;
    for (int i = 0; i < st->k; i++)
        if (!(st->grp[i].parked = calloc(2 * (size_t)st->nm, sizeof *st->grp[i].parked)) ||
            sim_iheap_init(&st->grp[i].gpus, cap))
            return SIM_ENOMEM;
    if ((rc = sym_reserve_gpus(st, cap)))
        return rc;
    int count[SYM_PART_MAX_GROUPS] = {ng};
    if (st->k > 1)
        sym_split_gpus(st, ng, count);
    for (int g = 0, gi = 0, in = 0; g < ng; g++) {
        if (sim_exec(s, g)->state != SIM_EXEC_UP)
            continue;
        while (in == count[gi])
            gi++, in = 0;
        in++;
        if (st->k > 1)                  /* cold start: each GPU holds its sub-cluster's models */
            for (int m = 0; m < st->nm; m++)
                if (st->gof[m] == gi && sim_preload(s, g, m))
                    return sim_err_set(SIM_EINVAL, "policy.params.sub_clusters: the models of "
                                       "sub-cluster %d do not fit GPU %d", gi, g);
        sym_join(s, st, g, gi);
    }
    for (int m = 0; m < st->nm; m++) {
        int64_t b = 2 * lat(s, st, m, 1) - lat(s, st, m, 2);
        st->c[m].beta_ns = b > 0 ? b : 0;
        st->next[m] = st->gof[m];
    }
    if (st->rep_ns > 0)
        sim_timer_set(s, st->rep_ns, TAG_REPART, NULL);
    return 0;
}

static void destroy(void *state)
{
    struct symphony *st = state;
    for (int i = 0; st->grp && i < st->k; i++) {
        free(st->grp[i].parked);
        sim_iheap_free(&st->grp[i].gpus);
    }
    free(st->grp);
    free(st->c);
    free(st->gof);
    free(st->gpu_grp);
    free(st->loading);
    free(st->next);
    free(st->mload);
    free(st->mwork);
    free(st->inflight);
    free(st->busy);
    free(st->pend);
    free(st->moving);
}

static void on_request(struct sim *s, void *state, int m, struct sim_request *r)
{
    struct symphony *st = state;
    struct cand *c = &st->c[m];
    int64_t now = sim_now(s);
    (void)r;
    c->rate_c = c->rate_c * exp(-(double)(now - c->rate_t) / st->tau_ns) + 1.0;
    c->rate_t = now;
    sym_refresh(s, st, m);
    if (c->parked)
        sym_rank_rearm(s, st, st->gof[m]);
}

static void on_timer(struct sim *s, void *state, uint64_t tag, void *arg)
{
    struct symphony *st = state;
    if (tag == TAG_MODEL)
        on_model_timer(s, st, (int)(intptr_t)arg);
    else if (tag == TAG_RANK)
        on_rank_timer(s, st, (int)(intptr_t)arg);
    else {
        sym_repartition(s, st);
        sim_timer_set(s, sim_now(s) + st->rep_ns, TAG_REPART, NULL);
    }
}

/* A GPU added during the run joins the sub-cluster with the most work per GPU up (ties:
 * the lower index) once that sub-cluster's models are loaded on it. */
static void on_exec_up(struct sim *s, void *state, int e)
{
    struct symphony *st = state;
    if (sym_reserve_gpus(st, e + 1)) {
        sim_fail_nomem(s, "growing Symphony's GPU tables");
        return;
    }
    if (st->k == 1) {
        sym_join(s, st, e, 0);
        sym_regroup(s, st, 0);
        return;
    }
    int gi = 0;
    for (int i = 1; i < st->k; i++)
        if (st->grp[i].work * (st->grp[gi].ng + 1) > st->grp[gi].work * (st->grp[i].ng + 1))
            gi = i;
    st->gpu_grp[e] = gi;
    for (int m = 0; m < st->nm; m++)   /* its models, and those moving in (re-partition) */
        if ((st->gof[m] == gi || st->next[m] == gi) && sim_load(s, e, m, 0) == 0)
            st->loading[e]++;
    if (st->loading[e] == 0) {
        sym_join(s, st, e, gi);
        sym_regroup(s, st, gi);
    }
}

static void on_load_done(struct sim *s, void *state, int e, int m, bool ok)
{
    struct symphony *st = state;
    int gi = st->gpu_grp[e];
    if (*pend_at(st, e, m)) { /* a load for a model's move */
        *pend_at(st, e, m) = 0;
        if (!ok && sim_exec(s, e)->state == SIM_EXEC_UP)
            SIM_BUG("symphony: loading model %d onto GPU %d for its move failed", m, e);
        if (--st->mload[m] == 0)
            sym_switch_model(s, st, m);
        return;
    }
    if (gi < 0 || st->loading[e] == 0 || sim_exec(s, e)->state != SIM_EXEC_UP)
        return;
    if (!ok)
        SIM_BUG("symphony: loading model %d onto GPU %d of sub-cluster %d failed", m, e, gi);
    if (--st->loading[e] == 0) {
        if (st->moving[e]) {
            st->moving[e] = false;
            st->gpus_moving--;
        }
        sym_join(s, st, e, gi);
        sym_regroup(s, st, gi);
    }
}

/* A batch is done: the GPU's in-flight counts fall; a model that has left the GPU's
 * sub-cluster goes when its last batch there is done, and a GPU moving between sub-clusters
 * settles when it has nothing in flight. */
static void on_batch_done(struct sim *s, void *state, const struct sim_batch *b)
{
    struct symphony *st = state;
    int g = b->exec, m = b->model;
    if (g >= st->gcap)
        return;
    (*inflight_at(st, g, m))--;
    st->busy[g]--;
    if (st->rep_ns == 0 || sim_exec(s, g)->state != SIM_EXEC_UP)
        return;
    sym_evict_if_done(s, st, g, m);
    if (st->moving[g] && st->busy[g] == 0 && st->loading[g] == 0)
        sym_settle(s, st, g);
}

static void on_exec_remove(struct sim *s, void *state, int e)
{
    struct symphony *st = state;
    if (e >= st->gcap)
        return;
    int gi = st->gpu_grp[e];
    st->loading[e] = 0;                 /* loads still running: it never joins */
    if (st->moving[e]) {
        st->moving[e] = false;
        st->gpus_moving--;
    }
    if (gi < 0 || !sim_iheap_has(&st->grp[gi].gpus, e))
        return;
    sim_iheap_remove(&st->grp[gi].gpus, e);
    st->grp[gi].ng--;
    sym_regroup(s, st, gi);
}

/* With sub-clusters a GPU holds only its own models: executors start empty and the policy
 * preloads them. */
static bool cold_start(const cJSON *p)
{
    struct sym_params pp;
    if (sim_params_read(params, p, "policy.params", &pp)) {
        sim_err_clear();                /* init reports bad params */
        return false;
    }
    return pp.sub_clusters != 1;
}

static void on_tick(struct sim *s, void *state)
{
    struct symphony *st = state;
    const struct sim_window *w = sim_last_window(s);
    double n = w->execs_up, r = w->bad_rate, f = w->idle_frac;
    double add = (r > st->bad_threshold && r < 1) ? n * r / (1 - r) : 0;
    sim_ts_add(s, "symphony.add_gpus", -1, add);
    sim_ts_add(s, "symphony.release_gpus", -1, add > 0 ? 0 : n * f);
    if (st->rep_ns > 0) {
        sim_ts_add(s, "symphony.repartitions", -1, st->repartitions);
        sim_ts_add(s, "symphony.models_moved", -1, st->models_moved);
        sim_ts_add(s, "symphony.gpus_moved", -1, st->gpus_moved);
        for (int m = 0; m < st->nm; m++)
            sim_ts_add(s, "symphony.sub_cluster", m, st->gof[m]);
    }
}

const struct policy_ops policy_symphony = {
    .name = "symphony",
    .summary = "Symphony: centralized, non-work-conserving deferred batching (arXiv 2023)",
    .state_size = sizeof(struct symphony),
    .params = params,
    .cold_start = cold_start,
    .init = init,
    .on_request = on_request,
    .on_timer = on_timer,
    .on_load_done = on_load_done,
    .on_batch_done = on_batch_done,
    .on_tick = on_tick,
    .on_exec_up = on_exec_up,
    .on_exec_remove = on_exec_remove,
    .dynamic_execs = true,
    .in_pools = true,             /* reads only executors up (another part's read as down) */
    .destroy = destroy,
};
