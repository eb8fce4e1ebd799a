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
 * repartition_s the partition follows the measured load (repartition(): models move make
 * before break, then GPUs follow the work; docs/policies.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "sim_err.h"
#include "sim_iheap.h"
#include "sim_json.h"
#include "sim_param.h"
#include "symphony_part.h"

enum { TAG_MODEL = 1, TAG_RANK = 2, TAG_REPART = 3 };

struct cand {
    bool valid, parked;
    int bs;
    int64_t exec_at, invalid_after, drop_at;
    uint64_t timer;
    int64_t timer_at;
    double rate_c;               /* exponentially decayed arrival count */
    int64_t rate_t;
    int64_t beta_ns;             /* fixed cost of a batch: 2 l(1) - l(2) */
    const int64_t *lat;          /* l(b) for b in 1..max_batch + 1 (sim_latency_table) */
};

struct group {                   /* a sub-cluster: its GPUs and what waits for them */
    int ng;                      /* GPUs up in it */
    struct sim_iheap gpus;       /* GPU -> free_at */
    int *parked;
    int nparked;
    uint64_t rank_timer;
    int64_t rank_at;
    double work;                 /* GPU-seconds per second at the configured rates */
};

/* policy.params as given (the table below); init turns them into struct symphony's fields */
struct sym_params {
    bool work_conserving, overload_drop;
    double rate_window_ms, bad_rate_threshold;
    int sub_clusters;
    double partition_time_limit_s;
    int partition_node_limit;
    double dispatcher_max_rps;
    int partitioner;                            /* 0 milp, 1 random */
    double repartition_s, repartition_threshold, repartition_gain;
    int repartition_max_moves;
};

struct symphony {
    struct sym_params par;
    bool wc, overload_drop;
    double tau_ns;
    double bad_threshold;
    int nm, kind, k;
    struct cand *c;
    struct group *grp;           /* [k] */
    int *gof;                    /* [nm] sub-cluster of each model */
    int *gpu_grp, *loading;      /* [gcap] sub-cluster of each GPU (-1: none), loads pending */
    int gcap;
    /* re-partitioning at run time (repartition_s > 0): a model moves to next[m] once it is
     * loaded on every GPU serving there (mload[m] loads to go, pend marks them), then leaves
     * its old GPUs as their batches of it finish; then GPUs move between sub-clusters (out of
     * service until idle, re-loaded, joined). One re-partition at a time. */
    int64_t rep_ns;
    double rep_threshold, rep_gain, rmax, limit_s;
    int node_limit;
    int rep_moves;
    bool random_part;
    int *next, *mload;           /* [nm] */
    double *mwork;               /* [nm] GPU-seconds per second at the last measured rates */
    int *inflight;               /* [gcap * nm] batches dispatched and not done */
    int *busy;                   /* [gcap] batches in flight on the GPU */
    unsigned char *pend;         /* [gcap * nm] a load for a model's move */
    bool *moving;                /* [gcap] between sub-clusters: joins gpu_grp[g] when loaded */
    int models_moving, gpus_moving;
    int repartitions, models_moved, gpus_moved;  /* re-partitions that moved something */
};

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

static inline int *inflight_at(struct symphony *st, int g, int m)
{
    return &st->inflight[(size_t)g * (size_t)st->nm + (size_t)m];
}

static inline unsigned char *pend_at(struct symphony *st, int g, int m)
{
    return &st->pend[(size_t)g * (size_t)st->nm + (size_t)m];
}

static void repartition(struct sim *s, struct symphony *st);

static inline int64_t lat(const struct sim *s, const struct symphony *st, int m, int b)
{
    (void)s;
    return st->c[m].lat[b];      /* every caller asks for 1 <= b <= max_batch + 1 */
}

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

static void unpark(struct symphony *st, int m)
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
        unpark(st, m);
        sim_timer_cancel(s, c->timer);
        c->timer = 0;
        return;
    }
    int64_t t_send = c->exec_at - sim_dispatch_delay_ns(s, c->bs);
    if (c->parked && t_send > sim_now(s))
        unpark(st, m);
    arm(s, c, m, c->parked ? c->drop_at : t_send);
}

static void rank_rearm(struct sim *s, struct symphony *st, int gi)
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

static void refresh(struct sim *s, struct symphony *st, int m)
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
    unpark(st, m);
    update(s, st, m, sim_iheap_key(&G->gpus, g));
    if (c->valid) {
        sim_dispatch(s, g, m, c->bs, c->exec_at);
        sim_iheap_set(&G->gpus, g, c->exec_at + lat(s, st, m, c->bs));
        (*inflight_at(st, g, m))++;
        st->busy[g]++;
    }
    refresh(s, st, m);
    rank_rearm(s, st, st->gof[m]);
}

static void on_model_timer(struct sim *s, struct symphony *st, int m)
{
    struct cand *c = &st->c[m];
    struct group *G = &st->grp[st->gof[m]];
    c->timer = 0;
    if (c->parked) {                       /* the earliest deadline passed while waiting */
        refresh(s, st, m);
        rank_rearm(s, st, st->gof[m]);
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
    rank_rearm(s, st, st->gof[m]);
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
        unpark(st, p);
        refresh(s, st, p);
    }
    if (best >= 0)
        grant(s, st, g, best);
    else
        rank_rearm(s, st, gi);
}

/* Room for GPU ids 0..n-1 in the per-GPU tables and every sub-cluster's heap (ids are never
 * reused: a long autoscaled run outgrows cluster.max_gpus). */
static int reserve_gpus(struct symphony *st, int n)
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
static void join(struct sim *s, struct symphony *st, int g, int gi)
{
    st->gpu_grp[g] = gi;
    sim_iheap_set(&st->grp[gi].gpus, g, sim_now(s));
    st->grp[gi].ng++;
}

/* The partition of the models at their configured rates into st->gof and the GPUs split by
 * work (each sub-cluster at least one), for `want` sub-clusters (0: the fewest that fit). */
static int partition(struct sim *s, struct symphony *st, int want, double limit_s, double rmax,
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
static void split_gpus(struct symphony *st, int ng, int *count)
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
    if (want != 1 && (rc = partition(s, st, want, limit_s, rmax, partitioner == 1)))
        return rc;
    int ng = sim_exec_count(s);
    int cap = sim_world(s)->max_gpus > ng ? sim_world(s)->max_gpus : ng;
    for (int i = 0; i < st->k; i++)
        if (!(st->grp[i].parked = calloc(2 * (size_t)st->nm, sizeof *st->grp[i].parked)) ||
            sim_iheap_init(&st->grp[i].gpus, cap))
            return SIM_ENOMEM;
    if ((rc = reserve_gpus(st, cap)))
        return rc;
    int count[SYM_PART_MAX_GROUPS] = {ng};
    if (st->k > 1)
        split_gpus(st, ng, count);
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
        join(s, st, g, gi);
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
    refresh(s, st, m);
    if (c->parked)
        rank_rearm(s, st, st->gof[m]);
}

static void on_timer(struct sim *s, void *state, uint64_t tag, void *arg)
{
    struct symphony *st = state;
    if (tag == TAG_MODEL)
        on_model_timer(s, st, (int)(intptr_t)arg);
    else if (tag == TAG_RANK)
        on_rank_timer(s, st, (int)(intptr_t)arg);
    else {
        repartition(s, st);
        sim_timer_set(s, sim_now(s) + st->rep_ns, TAG_REPART, NULL);
    }
}

/* Executors joining and leaving (autoscaling): sub-cluster gi's GPU set changed, so every
 * candidate's start time there may have; recompute them all. */
static void regroup(struct sim *s, struct symphony *st, int gi)
{
    for (int m = 0; m < st->nm; m++)
        if (st->gof[m] == gi && (st->c[m].valid || sim_queue_len(s, m) > 0)) {
            unpark(st, m);
            refresh(s, st, m);
        }
    rank_rearm(s, st, gi);
}

/* ---------------------------------------------------------------- re-partitioning */


/* Whether GPU g is serving in its sub-cluster (in its heap), not moving or loading to join. */
static bool serving(const struct symphony *st, int g)
{
    int gi = st->gpu_grp[g];
    return gi >= 0 && st->grp[gi].gpus.pos[g] >= 0;
}

/* Model m is resident on g but belongs neither to g's sub-cluster nor is moving there, and no
 * batch of it is in flight on g: its pages go. */
static void evict_if_done(struct sim *s, struct symphony *st, int g, int m)
{
    int gi = st->gpu_grp[g];
    if (sim_resident(s, g, m) == SIM_RES_LOADED && st->gof[m] != gi && st->next[m] != gi &&
        *inflight_at(st, g, m) == 0)
        sim_evict(s, g, m);
}

static void move_gpus(struct sim *s, struct symphony *st);

/* Model m is loaded on every GPU serving its new sub-cluster: it is scheduled there from now
 * on (its candidate recomputed against those GPUs) and leaves the old ones. */
static void switch_model(struct sim *s, struct symphony *st, int m)
{
    int from = st->gof[m], to = st->next[m];
    unpark(st, m);
    st->gof[m] = to;
    st->models_moving--;
    if (st->c[m].valid || sim_queue_len(s, m) > 0)
        refresh(s, st, m);
    rank_rearm(s, st, from);
    rank_rearm(s, st, to);
    for (int g = 0; g < st->gcap && g < sim_exec_count(s); g++)
        if (st->gpu_grp[g] == from)
            evict_if_done(s, st, g, m);
    if (st->models_moving == 0)
        move_gpus(s, st);
}

/* GPU g, out of service and idle, sheds the models its new sub-cluster does not have and
 * loads those it lacks (the sub-cluster's own and those moving in); it joins when loaded. */
static void settle(struct sim *s, struct symphony *st, int g)
{
    int gi = st->gpu_grp[g];
    for (int m = 0; m < st->nm; m++)
        evict_if_done(s, st, g, m);
    for (int m = 0; m < st->nm; m++)
        if ((st->gof[m] == gi || st->next[m] == gi) && sim_resident(s, g, m) == SIM_RES_NONE) {
            if (sim_load(s, g, m, 0) != 0)
                SIM_BUG("symphony: GPU %d cannot hold the models of sub-cluster %d", g, gi);
            st->loading[g]++;
        }
    if (st->loading[g] == 0) {
        st->moving[g] = false;
        st->gpus_moving--;
        join(s, st, g, gi);
        regroup(s, st, gi);
    }
}

/* The second step of a re-partition: GPUs per sub-cluster in proportion to its work; each
 * sub-cluster with more gives its highest-numbered serving GPUs to those with fewer. */
static void move_gpus(struct sim *s, struct symphony *st)
{
    int ng = 0, count[SYM_PART_MAX_GROUPS], need[SYM_PART_MAX_GROUPS];
    for (int i = 0; i < st->k; i++)
        ng += st->grp[i].ng;
    if (ng < st->k)
        return;
    split_gpus(st, ng, count);
    for (int i = 0; i < st->k; i++)
        need[i] = count[i] - st->grp[i].ng;
    int to = 0;
    for (int from = 0; from < st->k; from++)
        for (int g = sim_exec_count(s) - 1; g >= 0 && need[from] < 0; g--) {
            if (g >= st->gcap || st->gpu_grp[g] != from || !serving(st, g))
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
            regroup(s, st, from);
            if (st->busy[g] == 0)
                settle(s, st, g);
        }
}

/* Every repartition_s: the models' work at their measured rates; when the work per GPU of
 * the sub-clusters is more uneven than repartition_threshold ((max - min) / mean), the
 * partitioner runs again from the current partition, moving at most repartition_max_moves
 * models, with old and new models fitting together (transition); its answer is taken only
 * if it lowers the partitioner's objective by repartition_gain (else models stay: measured
 * rates are noisy), and the GPUs follow the work either way. */
static void repartition(struct sim *s, struct symphony *st)
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
            if (st->gpu_grp[g] != to || !serving(st, g) || sim_resident(s, g, m) != SIM_RES_NONE)
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
            switch_model(s, st, m);
    if (st->models_moving == 0)
        move_gpus(s, st);
    st->repartitions += st->models_moved > mm0 || st->gpus_moved > gm0;
out:
    free(p);
    free(r);
}

/* A GPU added during the run joins the sub-cluster with the most work per GPU up (ties:
 * the lower index) once that sub-cluster's models are loaded on it. */
static void on_exec_up(struct sim *s, void *state, int e)
{
    struct symphony *st = state;
    if (reserve_gpus(st, e + 1)) {
        sim_fail_nomem(s, "growing Symphony's GPU tables");
        return;
    }
    if (st->k == 1) {
        join(s, st, e, 0);
        regroup(s, st, 0);
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
        join(s, st, e, gi);
        regroup(s, st, gi);
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
            switch_model(s, st, m);
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
        join(s, st, e, gi);
        regroup(s, st, gi);
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
    evict_if_done(s, st, g, m);
    if (st->moving[g] && st->busy[g] == 0 && st->loading[g] == 0)
        settle(s, st, g);
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
    if (gi < 0 || st->grp[gi].gpus.pos[e] < 0)
        return;
    sim_iheap_remove(&st->grp[gi].gpus, e);
    st->grp[gi].ng--;
    regroup(s, st, gi);
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
    .destroy = destroy,
};
