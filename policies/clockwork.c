/* clockwork — Clockwork (specs/clockwork.md): a central controller on the data path that
 * plans each GPU's timeline at most schedule_ahead into the future, sends INFER and LOAD
 * actions with windows [earliest, latest] that the worker rejects when it cannot start in
 * time, keeps its own predictions of durations (0.99 quantile of the last 10 measurements)
 * and of when each GPU's executors are free (WorkerTracker), and loads/evicts models on
 * demand in a paged weights cache (GPUs start cold unless preload).
 *
 * INFER4 strategies without a heap of strategy objects: per model the queue is FIFO (one SLO
 * per model), so the strategies of (model m, batch b) on GPU g are tried in queue order, and
 * "discarded on this GPU" is a cursor per (g, m, b) into m's queue (absolute positions:
 * requests removed from the head so far + index). A GPU's most urgent strategy is the
 * minimum of deadline - est_m(b) over the cursors of the models it holds (ties: older
 * request, then smaller b). INFER5 keeps per (m, b) one cursor: the head of the size-b copy
 * of m's queue. The load tracker's demands are per-request constants, so E_m and W_m are
 * counts of m's requests (queued or executing; queued and before their load deadline)
 * times those constants. The tracker works like the released controller's (LoadTracker):
 * a model's events mark it stale, and a load decision first spreads each stale model's E_m
 * over the GPUs that hold it and takes its load priority, so a decision costs the holders
 * of the models that changed, not every GPU times every model. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "policy.h"
#include "sim_bits.h"
#include "sim_err.h"
#include "sim_grow.h"
#include "sim_json.h"

#define MAXB 64                     /* largest supported batch size */
#define WIN 10                      /* estimate window */
#define FUTURE_NS 1000000           /* earliest plan: now + 1 ms */
#define LAG_NS 10000000
#define BUFFER_NS 5000000
#define MAX_WEIGHTS_SLO_NS 25000000
#define LOAD_SPACING_NS 100000

enum { TAG_TIMEOUT = 1, TAG_INFER = 2, TAG_PCIE = 3 };

struct est {                        /* a duration estimate from the last WIN measurements */
    double v[WIN];
    int n, pos;
    int64_t value;
};

struct action { int64_t size, begin; };

struct tracker {                    /* WorkerTracker */
    struct action *a;
    int head, n, cap;
    int64_t sum, work_begin;
};

struct gpu {
    struct tracker exec, pcie;
    int64_t last_load;
    int loads;                      /* outstanding */
    bool pcie_shut;                 /* the PCIe window was found shut and has not changed
                                     * since (no load result, its timer not yet fired) */
    int held;                       /* models loaded or loading */
    uint64_t infer_timer, pcie_timer;
    int64_t infer_at, pcie_at;
    int64_t full_until;             /* the exec window is full before this (0: not known) */
    double O, wt;                   /* load tracker: outstanding work (ms), weight C / O */
};

struct model {                      /* what the strategy loops read first, the estimates last */
    int64_t exec_slo, weights_slo;
    int64_t removed;                /* requests removed from the head of the queue so far */
    int nsizes, sizes[MAXB];        /* supported batch sizes, ascending */
    int64_t ev[MAXB + 1];           /* est[b].value, packed for the strategy loops */
    int inflight;                   /* requests executing */
    int held_by;                    /* GPUs where it is loaded or loading: hold[0..held_by) */
    int *hold, caphold;             /* in the order they took it */
    double *alloc;                  /* E_m's share on hold[i] */
    double absorb;                  /* load tracker: the part of W_m its holders absorb */
    bool stale;                     /* changed since the tracker last spread it */
    bool sorted;                    /* the queue is in arrival order, so deadlines rise along
                                     * it: the engine keeps it in deadline order, which with
                                     * one SLO per model is arrival order; checked anyway (an
                                     * arrival before the last one clears it till it empties) */
    int64_t last_arrival;           /* of the request queued last */
    uint64_t timeout;
    int64_t timeout_at;
    int64_t c5[MAXB + 1];           /* INFER5: head of the size-b copy (absolute position) */
    struct est est[MAXB + 1];
    struct est weights;
};

struct clockwork {
    bool infer5, preload, skip_satisfied;
    bool no_input;                  /* inputs "none": workers make the inputs (the Symphony
                                     * paper's runs), no input transfer with each INFER */
    int64_t ahead, max_exec, default_slo;
    int max_batch, nm, ng, capg, kind;  /* ng: executor ids seen so far; capg: room */
    int sizes_mode;                 /* 0 pow2, 1 all, 2 list */
    int list[MAXB];
    int nlist;
    struct model *ms;
    struct gpu *gs;
    int64_t *cur;                   /* INFER4 cursors [g][coff[m] + slot], slot < nsizes(m):
                                     * ncur a GPU (packed: a GPU's cursors share cache lines) */
    int *coff, ncur;
    uint64_t *last_used;            /* [g][m] */
    uint8_t *on;                    /* [g][m]: 0 no, 1 loading, 2 loaded */
    uint64_t seq;
    int *cap;                       /* scratch [nm]: INFER5 size caps in one pass */
    struct strat *sh;               /* scratch: INFER4 strategies of one GPU, a min-heap */
    int nsh, capsh;
    uint32_t *mver;                 /* [nm] version of each model's entries in sh */
    int *stale, nstale;             /* [nm] the load tracker's stale models, in order */
    struct sim_bits open;           /* GPUs up whose window was open at their last
                                     * schedule_infer (full_until 0): those an offer visits */
    struct sim_bits could;          /* GPUs up that lack a model and may start a load (fewer
                                     * than 2 outstanding, INFER4): those a load check visits */
};

static const char *const params[] = {"scheduler", "batch_sizes", "max_batch", "max_exec_ms",
                                     "schedule_ahead_ms", "preload", "default_slo_ms",
                                     "skip_satisfied_loads", "inputs", NULL};
static const char *const SCHEDS[] = {"infer4", "infer5", NULL};
static const char *const INPUTS[] = {"network", "none", NULL};

static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline uint8_t *on_at(const struct clockwork *st, int m, int g)
{
    return &st->on[(size_t)g * (size_t)st->nm + (size_t)m];
}
static inline uint64_t *used_at(const struct clockwork *st, int m, int g)
{
    return &st->last_used[(size_t)g * (size_t)st->nm + (size_t)m];
}
static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* ---------------------------------------------------------------- estimates */

static void est_init(struct est *e, int64_t v)
{
    memset(e, 0, sizeof *e);
    e->value = v;
}

static void est_add(struct est *e, int64_t v)
{
    double sorted[WIN];
    e->v[e->pos] = (double)v;
    e->pos = (e->pos + 1) % WIN;
    if (e->n < WIN)
        e->n++;
    memcpy(sorted, e->v, (size_t)e->n * sizeof *sorted);
    gsl_sort(sorted, 1, (size_t)e->n);
    e->value = (int64_t)llround(gsl_stats_quantile_from_sorted_data(sorted, 1, (size_t)e->n, 0.99));
}

/* ---------------------------------------------------------------- WorkerTracker */

static int tr_add(struct tracker *t, int64_t now, int64_t size, int64_t begin)
{
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 8;
        struct action *a = malloc((size_t)cap * sizeof *a);
        if (!a)
            return SIM_ENOMEM;
        for (int i = 0; i < t->n; i++)
            a[i] = t->a[(t->head + i) % t->cap];
        free(t->a);
        t->a = a;
        t->head = 0;
        t->cap = cap;
    }
    if (t->n == 0)
        t->work_begin = now;
    t->a[(t->head + t->n) % t->cap] = (struct action){size, begin};
    t->n++;
    t->sum += size;
    return 0;
}

static int64_t tr_available(struct tracker *t, int64_t now)
{
    if (t->n > 0) {
        int64_t s0 = t->a[t->head].size;
        if (t->work_begin + s0 + LAG_NS < now)
            t->work_begin = now - LAG_NS - s0;
    }
    return max64(t->work_begin + t->sum, now + FUTURE_NS);
}

/* A result: actions finish in send order on one executor, so it is the oldest. */
static void tr_result(struct tracker *t, int64_t now)
{
    if (t->n == 0)
        return;
    t->sum -= t->a[t->head].size;
    t->head = (t->head + 1) % t->cap;
    t->n--;
    t->work_begin = now;
    if (t->n > 0)
        t->work_begin = max64(t->work_begin, t->a[t->head].begin);
}

/* ---------------------------------------------------------------- helpers */

static inline int64_t est_of(const struct clockwork *st, int m, int b)
{
    return st->ms[m].ev[b];
}

/* Largest supported size <= n (at least the smallest). */
static int lookup(const struct model *md, int n)
{
    int b = md->sizes[0];
    for (int i = 0; i < md->nsizes && md->sizes[i] <= n; i++)
        b = md->sizes[i];
    return b;
}

static inline int64_t sched_dl(const struct clockwork *st, const struct sim_request *r)
{
    return r->t_arrival + st->ms[r->model].exec_slo;
}

static void touch(struct clockwork *st, int m);

/* The first position in [lo, q) of m's queue whose t_arrival + off is after key (q if none):
 * a binary search while the queue is in arrival order, else a scan. */
static int first_after(const struct sim *s, const struct clockwork *st, int m, int lo, int q,
                       int64_t off, int64_t key)
{
    if (!st->ms[m].sorted) {
        while (lo < q && sim_queue_at(s, m, lo)->t_arrival + off <= key)
            lo++;
        return lo;
    }
    int hi = q;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (sim_queue_at(s, m, mid)->t_arrival + off > key)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static void drop_head(struct sim *s, struct clockwork *st, int m)
{
    sim_queue_drop_head(s, m);
    st->ms[m].removed++;
    touch(st, m);
}

static void arm_timeout(struct sim *s, struct clockwork *st, int m)
{
    struct model *md = &st->ms[m];
    if (sim_queue_len(s, m) == 0) {
        sim_timer_cancel(s, md->timeout);
        md->timeout = 0;
        return;
    }
    int64_t at = sched_dl(st, sim_queue_at(s, m, 0));
    if (md->timeout && md->timeout_at == at)
        return;
    md->timeout = sim_timer_rearm(s, md->timeout, at, TAG_TIMEOUT, (void *)(intptr_t)m);
    md->timeout_at = at;
}

/* ---------------------------------------------------------------- load tracker */

static double req_exec_demand(const struct clockwork *st, int m)
{
    return (double)est_of(st, m, 1) * (double)st->default_slo / (double)st->ms[m].exec_slo / 1e6;
}

/* W_m: load demand of m's queued requests still before their load deadline. */
static double load_demand(const struct sim *s, const struct clockwork *st, int m)
{
    int n = sim_queue_len(s, m);        /* from the first whose load deadline is after now: */
    int lo = first_after(s, st, m, 0, n, st->ms[m].weights_slo, sim_now(s));
    double w = (double)est_of(st, m, 1) * (double)st->default_slo / (double)st->ms[m].weights_slo / 1e6;
    return w * (n - lo);
}

static double exec_demand(const struct sim *s, const struct clockwork *st, int m)
{
    return req_exec_demand(st, m) * (sim_queue_len(s, m) + st->ms[m].inflight);
}

/* m changed (a request came, left or was sent, a holder came or went): the next load
 * decision spreads it again. */
static void touch(struct clockwork *st, int m)
{
    if (!st->ms[m].stale) {
        st->ms[m].stale = true;
        st->stale[st->nstale++] = m;
    }
}

/* E_m spread over the GPUs holding m in proportion to their weights w_g: the previous shares
 * leave O_g, the new ones come in, and each holder's weight becomes C / O_g (the released
 * controller's distributeLoad). */
static void spread(const struct sim *s, struct clockwork *st, int m)
{
    struct model *md = &st->ms[m];
    double C = (double)st->default_slo / 1e6, E = exec_demand(s, st, m), sw = 0;
    for (int i = 0; i < md->held_by; i++) {
        st->gs[md->hold[i]].O -= md->alloc[i];
        md->alloc[i] = 0;
        sw += st->gs[md->hold[i]].wt;
    }
    for (int i = 0; i < md->held_by; i++) {
        struct gpu *h = &st->gs[md->hold[i]];
        md->alloc[i] = E * (h->wt / sw);
        h->O += md->alloc[i];
        h->wt = C / h->O;
    }
}

/* Brings the stale models up to date: spread, then the share of load demand their holders
 * absorb, sum over g' holding m of C * (w_g' / sum w) / O_g' (the released controller's
 * updatePriority, with the weights of this moment). */
static void refresh(const struct sim *s, struct clockwork *st)
{
    double C = (double)st->default_slo / 1e6;
    for (int i = 0; i < st->nstale; i++)
        spread(s, st, st->stale[i]);
    for (int i = 0; i < st->nstale; i++) {
        struct model *md = &st->ms[st->stale[i]];
        double sw = 0, a = 0;
        for (int k = 0; k < md->held_by; k++)
            sw += st->gs[md->hold[k]].wt;
        for (int k = 0; k < md->held_by; k++)
            a += C * (st->gs[md->hold[k]].wt / sw) / st->gs[md->hold[k]].O;
        md->absorb = a;
        md->stale = false;
    }
    st->nstale = 0;
}

/* Load priority of m on g: where m is not on g, the load demand its holders do not absorb,
 * W_m - sum over g' holding m of C * (W_m * w_g' / sum w) / O_g'; where it is, last_used. */
static double load_prio(const struct sim *s, const struct clockwork *st, int m, int g)
{
    if (*on_at(st, m, g))
        return (double)*used_at(st, m, g);
    double W = load_demand(s, st, m);
    return W - W * st->ms[m].absorb;
}

/* g takes m (loading): it joins m's holders with no share yet. SIM_ENOMEM: nothing done. */
static int hold_add(struct clockwork *st, int m, int g)
{
    struct model *md = &st->ms[m];
    int ch = md->caphold, ca = md->caphold;
    if (sim_grow(&md->hold, &ch, md->held_by + 1, sizeof *md->hold, 8) ||
        sim_grow(&md->alloc, &ca, md->held_by + 1, sizeof *md->alloc, 8))
        return SIM_ENOMEM;
    md->caphold = ch;
    md->hold[md->held_by] = g;
    md->alloc[md->held_by++] = 0;
    st->gs[g].held++;
    *on_at(st, m, g) = 1;
    return 0;
}

/* g lets go of m (evicted, failed load, removed GPU): its share leaves O_g. */
static void hold_del(struct clockwork *st, int m, int g)
{
    struct model *md = &st->ms[m];
    int i = 0;
    while (md->hold[i] != g)
        i++;
    st->gs[g].O -= md->alloc[i];
    md->held_by--;
    memmove(md->hold + i, md->hold + i + 1, (size_t)(md->held_by - i) * sizeof *md->hold);
    memmove(md->alloc + i, md->alloc + i + 1, (size_t)(md->held_by - i) * sizeof *md->alloc);
    st->gs[g].held--;
    *on_at(st, m, g) = 0;
    touch(st, m);
}

/* Order of load_choice/evict_choice: non-empty before empty, prio desc, last_used desc.
 * Returns true if (a before b). */
static bool before(const struct sim *s, const struct clockwork *st, int g, int a, double pa, int b,
                   double pb)
{
    bool ea = exec_demand(s, st, a) == 0 && load_demand(s, st, a) == 0;
    bool eb = exec_demand(s, st, b) == 0 && load_demand(s, st, b) == 0;
    if (ea != eb)
        return !ea;
    if (pa != pb)
        return pa > pb;
    return *used_at(st, a, g) > *used_at(st, b, g);
}

static void schedule_infer(struct sim *s, struct clockwork *st, int g);

/* g's membership of the load check's set, after its state, models, loads or PCIe window
 * changed. A shut window stays shut until its timer or a load result: with a fixed tracker
 * it opens at the timer's instant, and once the lag rule holds its state no longer moves
 * with time (a visit would only push the timer back). */
static void could(const struct sim *s, struct clockwork *st, int g)
{
    const struct gpu *gp = &st->gs[g];
    sim_bits_put(&st->could, g, sim_exec(s, g)->state == SIM_EXEC_UP && gp->held < st->nm &&
                                    (st->infer5 || gp->loads < 2) && !gp->pcie_shut);
}

static void schedule_load(struct sim *s, struct clockwork *st, int g)
{
    struct gpu *gp = &st->gs[g];
    int64_t now = sim_now(s);
    if (sim_exec(s, g)->state != SIM_EXEC_UP || gp->held == st->nm ||
        now < gp->last_load + LOAD_SPACING_NS || (!st->infer5 && gp->loads >= 2))
        return;
    int64_t pcie_at = tr_available(&gp->pcie, now);
    if (pcie_at >= now + st->ahead) {
        if (!gp->pcie_timer || gp->pcie_at != pcie_at - st->ahead + 1) {
            gp->pcie_at = pcie_at - st->ahead + 1;
            gp->pcie_timer = sim_timer_rearm(s, gp->pcie_timer, gp->pcie_at, TAG_PCIE,
                                             (void *)(intptr_t)g);
        }
        gp->pcie_shut = true;
        could(s, st, g);
        return;
    }
    if (gp->pcie_shut) {
        gp->pcie_shut = false;
        could(s, st, g);
    }
    gp->last_load = now;
    bool any = false;                   /* a model not on g with pending demand? */
    for (int m = 0; m < st->nm && !any; m++)
        any = !*on_at(st, m, g) && sim_queue_len(s, m) + st->ms[m].inflight > 0;
    if (!any)
        return;
    refresh(s, st);
    int best = -1;
    double bp = 0;
    for (int m = 0; m < st->nm; m++) {
        if (*on_at(st, m, g))
            continue;
        double p = load_prio(s, st, m, g);
        if (best < 0 || before(s, st, g, m, p, best, bp)) {
            best = m;
            bp = p;
        }
    }
    if (best < 0 || (exec_demand(s, st, best) == 0 && load_demand(s, st, best) == 0) ||
        (st->skip_satisfied && bp <= 0))
        return;
    int m = best;
    /* evict least recently used models (without demand first) until m fits */
    const struct sim_exec *x = sim_exec(s, g);
    while (x->pages_total - x->pages_used < sim_model_pages(s, m)) {
        int v = -1;
        double vp = 0;
        for (int k = 0; k < st->nm; k++) {
            if (*on_at(st, k, g) != 2)
                continue;
            double p = load_prio(s, st, k, g);
            if (v < 0 || before(s, st, g, v, vp, k, p)) {
                v = k;
                vp = p;
            }
        }
        if (v < 0)
            return;                     /* nothing evictable: the load fails */
        sim_evict(s, g, v);
        hold_del(st, v, g);
        could(s, st, g);
    }
    int64_t latest = max64(now + FUTURE_NS + st->ahead, pcie_at + st->ahead);
    if (sim_load(s, g, m, latest) != 0)
        return;
    if (hold_add(st, m, g)) {
        sim_fail_nomem(s, "growing Clockwork's holders of a model");
        return;
    }
    *used_at(st, m, g) = ++st->seq;
    gp->loads++;
    could(s, st, g);
    if (tr_add(&gp->pcie, now, st->ms[m].weights.value, pcie_at))
        sim_fail_nomem(s, "growing a Clockwork tracker");
}

/* The load check after an arrival of m: only a model some GPU lacks can start a load, and
 * only on a GPU of the set `could` (schedule_load returns at once on the others). */
static void load_check(struct sim *s, struct clockwork *st, int m)
{
    if (st->ms[m].held_by == st->ng)
        return;
    for (int g = sim_bits_next(&st->could, 0); g >= 0; g = sim_bits_next(&st->could, g + 1))
        schedule_load(s, st, g);
}

/* ---------------------------------------------------------------- INFER4 */

static inline int64_t *cursor(struct clockwork *st, int g, int m, int slot)
{
    return &st->cur[(size_t)g * (size_t)st->ncur + (size_t)st->coff[m] + (size_t)slot];
}

/* Sends a batch of the first b queued requests of m to g. */
static void send(struct sim *s, struct clockwork *st, int g, int m, int b, int64_t free_at)
{
    int64_t now = sim_now(s), e = est_of(st, m, b);
    struct sim_dispatch_args a = {
        .exec = g, .model = m, .n = b, .from = SIM_CENTRAL, .start_at = now,
        .latest = max64(now + FUTURE_NS + st->ahead, free_at + st->ahead), .expected_ns = e,
        .no_input = st->no_input};
    sim_dispatch_ex(s, &a);
    st->ms[m].removed += b;
    st->ms[m].inflight += b;
    if (tr_add(&st->gs[g].exec, now, e, free_at))
        sim_fail_nomem(s, "growing a Clockwork tracker");
    arm_timeout(s, st, m);
}

/* try_dequeue for the strategy (anchor at absolute position pos, size b) of model m. */
static bool try_dequeue4(struct sim *s, struct clockwork *st, int g, int m, int64_t pos, int b,
                         int64_t free_at)
{
    struct model *md = &st->ms[m];
    const struct sim_request *anchor = sim_queue_at(s, m, (int)(pos - md->removed));
    int64_t dl = sched_dl(st, anchor);
    int64_t completion = free_at + est_of(st, m, b);
    if (dl <= completion)
        return false;
    while (sim_queue_len(s, m) && sched_dl(st, sim_queue_at(s, m, 0)) < free_at) {
        if (md->removed == pos)
            return false;               /* the anchor itself cannot start in time */
        drop_head(s, st, m);            /* "could not start in time" */
    }
    int qlen = sim_queue_len(s, m);
    if (qlen < b)
        return false;
    int available = qlen - (int)(pos - md->removed);
    if (available < b)
        return false;
    int c = lookup(md, available);
    if (c > b) {
        if (free_at + est_of(st, m, c) > dl)
            return false;
        b = c;
        completion = free_at + est_of(st, m, c);
    }
    while (md->removed < pos && sched_dl(st, sim_queue_at(s, m, 0)) < completion)
        drop_head(s, st, m);            /* "skipped" */
    if (sim_queue_len(s, m) < b)
        return false;
    send(s, st, g, m, b, free_at);
    return true;
}

/* The INFER4 strategies of one GPU during one schedule_infer call: a min-heap by priority
 * (deadline - est(b)), then anchor position, then b, then model (the order of a scan over
 * models and sizes). A try changes only its own model's queue and cursors, so only that
 * model's entries are pushed again (the old ones go stale by version), instead of rescanning
 * every model and size for the next most urgent strategy. */
struct strat {
    int64_t p, pos;
    int b, m, slot;
    uint32_t ver;
};

static bool strat_before(const struct strat *a, const struct strat *b)
{
    if (a->p != b->p)
        return a->p < b->p;
    if (a->pos != b->pos)
        return a->pos < b->pos;
    if (a->b != b->b)
        return a->b < b->b;
    return a->m < b->m;
}

static int strat_push(struct clockwork *st, struct strat e)
{
    if (sim_grow(&st->sh, &st->capsh, st->nsh + 1, sizeof *st->sh, 64))
        return SIM_ENOMEM;
    int i = st->nsh++;
    while (i > 0 && strat_before(&e, &st->sh[(i - 1) / 2])) {
        st->sh[i] = st->sh[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    st->sh[i] = e;
    return 0;
}

static struct strat strat_pop(struct clockwork *st)
{
    struct strat top = st->sh[0], last = st->sh[--st->nsh];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= st->nsh)
            break;
        if (c + 1 < st->nsh && strat_before(&st->sh[c + 1], &st->sh[c]))
            c++;
        if (!strat_before(&st->sh[c], &last))
            break;
        st->sh[i] = st->sh[c];
        i = c;
    }
    st->sh[i] = last;
    return top;
}

/* (Re)enters model m's most urgent strategy on GPU g: over its supported sizes, the entry
 * at each size's cursor, least by strat_before (the heap holds one entry per model, so the
 * global order is that of all strategies). Strategies whose priority is <= skip are
 * discarded first (their cursors advance): try_dequeue4 would fail them on its first test
 * (deadline <= free_at + est(b)) with no other effect. Callers pass skip = the GPU's
 * current free time only while its window is open, when the heap would pop every such
 * strategy before any other (INT64_MIN otherwise). */
static void strat_model(struct sim *s, struct clockwork *st, int g, int m, int64_t skip)
{
    struct model *md = &st->ms[m];
    uint32_t ver = ++st->mver[m];
    int q = sim_queue_len(s, m);
    if (q == 0 || *on_at(st, m, g) != 2)
        return;
    int64_t head_dl = sched_dl(st, sim_queue_at(s, m, 0));  /* most cursors are there */
    struct strat best = {0};
    bool any = false;
    for (int i = 0; i < md->nsizes; i++) {
        int64_t *c = cursor(st, g, m, i);
        if (*c < md->removed)
            *c = md->removed;
        int idx = (int)(*c - md->removed);
        int b = md->sizes[i];
        int64_t est = est_of(st, m, b);
        if (idx >= q)
            continue;
        int64_t dl = idx == 0 ? head_dl : sched_dl(st, sim_queue_at(s, m, idx));
        if (dl - est <= skip) {         /* skip to the first with dl - est > skip */
            int to = first_after(s, st, m, idx + 1, q, md->exec_slo, skip + est);
            *c += to - idx;
            idx = to;
            if (idx >= q)
                continue;
            dl = sched_dl(st, sim_queue_at(s, m, idx));
        }
        struct strat e = {dl - est, *c, b, m, i, ver};
        if (!any || strat_before(&e, &best)) {
            best = e;
            any = true;
        }
    }
    if (any)
        if (strat_push(st, best))
            sim_fail_nomem(s, "growing Clockwork's strategy heap");
}

/* The most urgent live strategy (INFER4), if any. */
static bool strat_top(struct clockwork *st, struct strat *out)
{
    while (st->nsh > 0) {
        struct strat e = strat_pop(st);
        if (e.ver == st->mver[e.m]) {
            *out = e;
            return true;
        }
    }
    return false;
}

/* ---------------------------------------------------------------- INFER5 */

/* Advances the size-b copies of m past requests that cannot meet deadline with est(b) from
 * free_at; requests gone from every copy are cancelled. */
static void trim5(struct sim *s, struct clockwork *st, int m, int64_t free_at)
{
    struct model *md = &st->ms[m];
    int q = sim_queue_len(s, m);
    int64_t lowest = INT64_MAX;
    for (int i = 0; i < md->nsizes; i++) {
        int b = md->sizes[i];
        int64_t *c = &md->c5[b];
        if (*c < md->removed)
            *c = md->removed;
        while (*c - md->removed < q &&
               sched_dl(st, sim_queue_at(s, m, (int)(*c - md->removed))) < free_at + est_of(st, m, b))
            (*c)++;
        lowest = min64(lowest, *c);
    }
    while (md->removed < lowest && sim_queue_len(s, m))
        drop_head(s, st, m);
}

static bool try_dequeue5(struct sim *s, struct clockwork *st, int g, int m, int bs, int64_t free_at,
                         int *cap)
{
    struct model *md = &st->ms[m];
    trim5(s, st, m, free_at);
    int q = sim_queue_len(s, m), pick = 0;
    for (int i = 0; i < md->nsizes; i++) {
        int b = md->sizes[i];
        if (q - (int)(md->c5[b] - md->removed) >= b)
            pick = b;
    }
    if (pick < bs) {
        *cap = pick;                    /* re-offer m's strategies capped below bs */
        return false;
    }
    while (md->removed < md->c5[pick])  /* earlier requests leave every copy */
        drop_head(s, st, m);
    send(s, st, g, m, pick, free_at);
    return true;
}

static bool top5(struct sim *s, struct clockwork *st, int g, const int *cap, int *om, int *ob)
{
    bool found = false;
    int64_t bp = 0;
    for (int m = 0; m < st->nm; m++) {
        int q = sim_queue_len(s, m);
        if (q == 0 || *on_at(st, m, g) != 2)
            continue;
        struct model *md = &st->ms[m];
        for (int i = 0; i < md->nsizes && md->sizes[i] <= cap[m]; i++) {
            int b = md->sizes[i];
            int64_t c = max64(md->c5[b], md->removed);
            if (c - md->removed >= q)
                continue;
            int64_t p = sched_dl(st, sim_queue_at(s, m, (int)(c - md->removed))) - est_of(st, m, b);
            if (!found || p < bp) {     /* ties: smaller b, then lower model id */
                found = true;
                bp = p;
                *om = m;
                *ob = b;
            }
        }
    }
    return found;
}

/* ---------------------------------------------------------------- schedule_infer */

static void schedule_infer(struct sim *s, struct clockwork *st, int g)
{
    struct gpu *gp = &st->gs[g];
    int64_t now = sim_now(s);
    int *cap = st->cap;
    if (sim_exec(s, g)->state != SIM_EXEC_UP)
        return;                         /* removed: it finishes what it has */
    gp->full_until = 0;
    sim_bits_put(&st->open, g, true);
    for (int m = 0; st->infer5 && m < st->nm; m++)
        cap[m] = MAXB;
    bool built = false;                 /* INFER4: the strategy heap of this call */
    st->nsh = 0;
    for (;;) {
        int64_t exec_at = tr_available(&gp->exec, now);
        if (exec_at >= now + st->ahead) {
            int64_t at = exec_at - st->ahead + 1;   /* the first instant with room */
            gp->full_until = at;
            sim_bits_put(&st->open, g, false);
            if (!gp->infer_timer || gp->infer_at != at) {
                gp->infer_at = at;
                gp->infer_timer = sim_timer_rearm(s, gp->infer_timer, at, TAG_INFER,
                                                  (void *)(intptr_t)g);
            }
            break;
        }
        int m, b;
        sim_ctrl_examine(s, 1);         /* each strategy the loop takes up */
        if (!st->infer5) {
            struct strat e;
            for (int k = 0; !built && k < st->nm; k++)
                if (sim_queue_len(s, k) > 0 && *on_at(st, k, g) == 2)  /* else it has none */
                    strat_model(s, st, g, k, exec_at);
            built = true;
            if (!strat_top(st, &e))
                break;
            m = e.m;
            if (e.p <= exec_at)         /* entered after a send moved exec_at: discard */
                strat_model(s, st, g, m, exec_at);
            else if (!try_dequeue4(s, st, g, m, e.pos, e.b, exec_at)) {
                (*cursor(st, g, m, e.slot))++;  /* discarded on this GPU */
                strat_model(s, st, g, m, exec_at);
            } else
                strat_model(s, st, g, m, INT64_MIN);
        } else {
            if (!top5(s, st, g, cap, &m, &b))
                break;
            int c = 0;
            if (!try_dequeue5(s, st, g, m, b, exec_at, &c))
                cap[m] = c < b ? c : b - 1;
        }
        arm_timeout(s, st, m);
    }
}

/* Offers model m's work to every GPU that holds it and has room in its window. A GPU whose
 * window was full at its last schedule_infer stays full until the timer that call armed:
 * its tracker changes only through send and results, both of which call schedule_infer,
 * and between them its available time never decreases; so the offer visits the open set
 * (a GPU whose window reopens at this very instant is served by its timer, at the same
 * instant). Once m's queue is empty the GPUs left have nothing new: every strategy they
 * held was m's (a GPU with room has tried all the others at its last call), so where
 * examining costs nothing (no controller) the offer stops there. */
static void schedule_all(struct sim *s, struct clockwork *st, int m)
{
    bool stop_empty = !sim_ctrl_on(s);
    for (int g = sim_bits_next(&st->open, 0); g >= 0 && !(stop_empty && sim_queue_len(s, m) == 0);
         g = sim_bits_next(&st->open, g + 1))
        if (*on_at(st, m, g) == 2 && sim_exec(s, g)->state == SIM_EXEC_UP)
            schedule_infer(s, st, g);
}

/* ---------------------------------------------------------------- events */

static void on_request(struct sim *s, void *state, int m, struct sim_request *r)
{
    struct clockwork *st = state;
    /* the controller's work per request in the released code: one strategy per supported
     * batch size pushed to every GPU that holds the model (INFER4's add_request; 16 x 24 on
     * Figure 10's cluster): candidates for controller.us_per_candidate */
    sim_ctrl_examine(s, st->ms[m].nsizes * st->ms[m].held_by);
    struct model *md = &st->ms[m];
    md->sorted = sim_queue_len(s, m) == 1 || (md->sorted && r->t_arrival >= md->last_arrival);
    md->last_arrival = r->t_arrival;
    touch(st, m);
    arm_timeout(s, st, m);
    schedule_all(s, st, m);
    load_check(s, st, m);
}

static void on_batch_done(struct sim *s, void *state, const struct sim_batch *b)
{
    struct clockwork *st = state;
    int g = b->exec, m = b->model;
    tr_result(&st->gs[g].exec, sim_now(s));
    st->ms[m].inflight -= b->size;
    touch(st, m);
    if (b->status == SIM_BATCH_OK) {
        est_add(&st->ms[m].est[b->size], b->t_finish - b->t_start);
        st->ms[m].ev[b->size] = st->ms[m].est[b->size].value;
        *used_at(st, m, g) = ++st->seq;
    }
    schedule_infer(s, st, g);
    schedule_load(s, st, g);
}

static void on_load_done(struct sim *s, void *state, int g, int m, bool ok)
{
    struct clockwork *st = state;
    struct gpu *gp = &st->gs[g];
    gp->loads--;
    tr_result(&gp->pcie, sim_now(s));
    gp->pcie_shut = false;
    could(s, st, g);
    if (sim_exec(s, g)->state != SIM_EXEC_UP)
        return;                         /* removed meanwhile: on_exec_remove let go of m */
    if (ok) {
        *on_at(st, m, g) = 2;
        est_add(&st->ms[m].weights, sim_load_ns(s, m));
        for (int i = 0; i < st->ms[m].nsizes; i++)
            *cursor(st, g, m, i) = st->ms[m].removed;   /* strategies of queued requests */
        schedule_infer(s, st, g);
    } else {
        hold_del(st, m, g);
        could(s, st, g);
    }
    schedule_load(s, st, g);
}

static void on_timer(struct sim *s, void *state, uint64_t tag, void *arg)
{
    struct clockwork *st = state;
    int i = (int)(intptr_t)arg;
    if (tag == TAG_TIMEOUT) {
        st->ms[i].timeout = 0;
        while (sim_queue_len(s, i) && sched_dl(st, sim_queue_at(s, i, 0)) <= sim_now(s))
            drop_head(s, st, i);        /* "timeout": cancelled */
        arm_timeout(s, st, i);
    } else if (tag == TAG_INFER) {
        st->gs[i].infer_timer = 0;
        schedule_infer(s, st, i);
    } else {
        st->gs[i].pcie_timer = 0;
        st->gs[i].pcie_shut = false;
        could(s, st, i);
        schedule_load(s, st, i);
    }
}

/* ---------------------------------------------------------------- setup */

/* Room for executors 0..n-1 in the per-GPU arrays (g-major, so they grow at the end); new
 * GPUs start with an empty timeline and nothing loaded. */
static int grow(struct clockwork *st, int n)
{
    if (n <= st->capg)
        return 0;
    int cap = st->capg ? st->capg : 1;
    while (cap < n)
        cap *= 2;
    size_t old = (size_t)st->capg, cg = (size_t)cap, nm = (size_t)st->nm;
    struct gpu *gs = realloc(st->gs, cg * sizeof *gs);
    if (gs)
        st->gs = gs;
    size_t nc = (size_t)st->ncur;
    int64_t *cur = realloc(st->cur, cg * nc * sizeof *cur);
    if (cur)
        st->cur = cur;
    uint64_t *used = realloc(st->last_used, cg * nm * sizeof *used);
    if (used)
        st->last_used = used;
    uint8_t *on = realloc(st->on, cg * nm * sizeof *on);
    if (on)
        st->on = on;
    if (!gs || !cur || !used || !on || sim_bits_reserve(&st->open, cap) ||
        sim_bits_reserve(&st->could, cap))
        return SIM_ENOMEM;
    memset(gs + old, 0, (cg - old) * sizeof *gs);
    memset(cur + old * nc, 0, (cg - old) * nc * sizeof *cur);
    memset(used + old * nm, 0, (cg - old) * nm * sizeof *used);
    memset(on + old * nm, 0, (cg - old) * nm * sizeof *on);
    for (size_t g = old; g < cg; g++) {
        gs[g].O = 1;                    /* 1 ms: the released tracker's start */
        gs[g].wt = 0.01;
        gs[g].last_load = -LOAD_SPACING_NS;
    }
    st->capg = cap;
    return 0;
}

/* An executor added during the run (autoscaling) is up: it is a cold worker, and loads
 * start on it where there is demand (Clockwork loads on demand). */
static void on_exec_up(struct sim *s, void *state, int e)
{
    struct clockwork *st = state;
    if (grow(st, e + 1)) {
        sim_fail_nomem(s, "growing Clockwork's GPU tables");
        return;
    }
    if (e >= st->ng)
        st->ng = e + 1;
    sim_bits_put(&st->open, e, true);
    could(s, st, e);
    schedule_load(s, st, e);
}

/* Executor e drains: nothing more goes to it, and the models it held count no more. */
static void on_exec_remove(struct sim *s, void *state, int e)
{
    struct clockwork *st = state;
    struct gpu *gp = &st->gs[e];
    for (int m = 0; m < st->nm; m++)
        if (*on_at(st, m, e))
            hold_del(st, m, e);
    sim_timer_cancel(s, gp->infer_timer);
    sim_timer_cancel(s, gp->pcie_timer);
    gp->infer_timer = gp->pcie_timer = 0;
    sim_bits_put(&st->open, e, false);
    sim_bits_put(&st->could, e, false);
}

static int parse_sizes(struct clockwork *st, const cJSON *p)
{
    const cJSON *v = p ? cJSON_GetObjectItemCaseSensitive(p, "batch_sizes") : NULL;
    st->sizes_mode = 1;                 /* default "all": the Symphony paper's runs */
    if (!v)
        return 0;
    if (cJSON_IsString(v) && strcmp(v->valuestring, "pow2") == 0) {
        st->sizes_mode = 0;
        return 0;
    }
    if (cJSON_IsString(v) && strcmp(v->valuestring, "all") == 0) {
        st->sizes_mode = 1;
        return 0;
    }
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0 || cJSON_GetArraySize(v) > MAXB)
        return sim_json_expected("policy.params.batch_sizes",
                                 "\"pow2\", \"all\" or a list of increasing batch sizes", v);
    st->sizes_mode = 2;
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
        if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) || it->valuedouble < 1 ||
            it->valuedouble > MAXB || (st->nlist && it->valuedouble <= st->list[st->nlist - 1]))
            return sim_json_expected("policy.params.batch_sizes", "increasing integers in [1, 64]", it);
        st->list[st->nlist++] = (int)it->valuedouble;
    }
    return 0;
}

static int init(struct sim *s, const cJSON *p, void *state)
{
    struct clockwork *st = state;
    int rc, sched = 0, inputs = 1;     /* defaults: the Symphony paper's runs (presets.c) */
    long max_batch = 16;
    double ahead_ms = 10, max_exec_ms = 250, slo_ms = 100;
    if ((rc = sim_json_enum(p, "policy.params", "scheduler", false, SCHEDS, &sched)) ||
        (rc = sim_json_int(p, "policy.params", "max_batch", false, 1, MAXB, &max_batch)) ||
        (rc = sim_json_num(p, "policy.params", "max_exec_ms", false, SIM_J_POS, &max_exec_ms)) ||
        (rc = sim_json_num(p, "policy.params", "schedule_ahead_ms", false, SIM_J_POS, &ahead_ms)) ||
        (rc = sim_json_num(p, "policy.params", "default_slo_ms", false, SIM_J_POS, &slo_ms)) ||
        (rc = sim_json_bool(p, "policy.params", "preload", false, &st->preload)) ||
        (rc = sim_json_bool(p, "policy.params", "skip_satisfied_loads", false, &st->skip_satisfied)) ||
        (rc = sim_json_enum(p, "policy.params", "inputs", false, INPUTS, &inputs)) ||
        (rc = parse_sizes(st, p)))
        return rc;
    st->no_input = inputs == 1;
    st->infer5 = sched == 1;
    st->max_batch = (int)max_batch;
    st->ahead = sim_ms_to_ns(ahead_ms);
    st->max_exec = sim_ms_to_ns(max_exec_ms);
    st->default_slo = sim_ms_to_ns(slo_ms);
    st->nm = sim_model_count(s);
    st->kind = sim_exec(s, 0)->kind;
    st->ms = calloc((size_t)st->nm, sizeof *st->ms);
    st->cap = calloc((size_t)st->nm, sizeof *st->cap);
    st->mver = calloc((size_t)st->nm, sizeof *st->mver);
    st->coff = calloc((size_t)st->nm, sizeof *st->coff);
    st->stale = calloc((size_t)st->nm, sizeof *st->stale);
    if (!st->ms || !st->cap || !st->mver || !st->coff || !st->stale)
        return SIM_ENOMEM;
    for (int m = 0; m < st->nm; m++) {
        struct model *md = &st->ms[m];
        int mb = sim_model(s, m)->max_batch;
        for (int b = 1; b <= MAXB; b++) {
            bool want = st->sizes_mode == 1 ? true : false;
            if (st->sizes_mode == 0)
                want = (b & (b - 1)) == 0 && b <= 16;
            for (int i = 0; st->sizes_mode == 2 && i < st->nlist; i++)
                want |= st->list[i] == b;
            if (!want || b > mb)
                continue;
            int64_t l = sim_latency_ns(s, m, st->kind, b);
            est_init(&md->est[b], l);
            if (b == 1 || (l <= st->max_exec && b <= st->max_batch))
                md->sizes[md->nsizes++] = b;
        }
        if (md->nsizes == 0 || md->sizes[0] != 1) {   /* b = 1 is always supported */
            memmove(md->sizes + 1, md->sizes, (size_t)md->nsizes * sizeof *md->sizes);
            md->sizes[0] = 1;
            md->nsizes++;
            est_init(&md->est[1], sim_latency_ns(s, m, st->kind, 1));
        }
        for (int b = 1; b <= MAXB; b++)
            if (md->est[b].value == 0)
                md->est[b] = md->est[lookup(md, b)];
        for (int b = 1; b <= MAXB; b++)
            md->ev[b] = md->est[b].value;
        est_init(&md->weights, sim_load_ns(s, m));
        /* the spec's slo is the model's: the buffer is what covers the response's trip */
        int64_t slo = sim_model(s, m)->slo_ns;
        md->exec_slo = min64(slo, max64(slo - BUFFER_NS, st->ahead + BUFFER_NS));
        int64_t rest = slo - (md->weights.value + md->est[1].value + BUFFER_NS + st->ahead);
        int64_t ws = rest < 0 ? min64(MAX_WEIGHTS_SLO_NS, slo)     /* the code's unsigned wrap */
                              : min64(min64(MAX_WEIGHTS_SLO_NS, slo), rest);
        md->weights_slo = max64(ws, st->ahead + BUFFER_NS);
        st->coff[m] = st->ncur;
        st->ncur += md->nsizes;
    }
    if (grow(st, sim_exec_count(s)))
        return SIM_ENOMEM;
    st->ng = sim_exec_count(s);
    for (int g = 0; g < st->ng; g++)
        sim_bits_put(&st->open, g, true);
    /* GPUs start cold; with preload, fill them round-robin until memory is full */
    for (int g = 0; st->preload && g < st->ng; g++)
        for (int i = 0; i < st->nm; i++) {
            int m = (g + i) % st->nm;
            if (sim_preload(s, g, m) == 0) {
                if (hold_add(st, m, g))
                    return SIM_ENOMEM;
                *on_at(st, m, g) = 2;
            }
        }
    for (int g = 0; g < st->ng; g++)
        could(s, st, g);
    return 0;
}

static void destroy(void *state)
{
    struct clockwork *st = state;
    for (int g = 0; st->gs && g < st->ng; g++) {
        free(st->gs[g].exec.a);
        free(st->gs[g].pcie.a);
    }
    for (int m = 0; st->ms && m < st->nm; m++) {
        free(st->ms[m].hold);
        free(st->ms[m].alloc);
    }
    free(st->ms);
    free(st->gs);
    free(st->cur);
    free(st->coff);
    free(st->last_used);
    free(st->on);
    free(st->cap);
    free(st->stale);
    sim_bits_free(&st->open);
    sim_bits_free(&st->could);
    free(st->sh);
    free(st->mver);
}

static bool cold_start(const cJSON *p)
{
    (void)p;
    return true;
}

const struct policy_ops policy_clockwork = {
    .name = "clockwork",
    .summary = "Clockwork: central planner, schedule-ahead actions with windows, on-demand model loading (OSDI'20)",
    .state_size = sizeof(struct clockwork),
    .param_keys = params,
    .cold_start = cold_start,
    .init = init,
    .on_request = on_request,
    .on_batch_done = on_batch_done,
    .on_timer = on_timer,
    .on_load_done = on_load_done,
    .on_exec_up = on_exec_up,
    .on_exec_remove = on_exec_remove,
    .dynamic_execs = true,
    .destroy = destroy,
};
