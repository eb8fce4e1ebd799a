/* shepherd — Shepherd's online scheduler Flex (specs/shepherd.md): central, work-conserving,
 * largest batch first across models, with preemption of a running batch by a candidate
 * lambda times larger. Herd (the periodic group planner) is not modelled: one group, every
 * model resident on every GPU, as in the nexuslb re-implementation the Symphony paper used.
 *
 * The dispatch cost dctrl + ddata*bs is the engine's network (network.ctrl_us and
 * network.data_us_per_request; the re-implementation's defaults are 25 and 75 us): a batch
 * decided at t starts at t + delay(bs) and the GPU counts as taken from the decision on.
 * Deadlines are the requests' SLO deadlines less the nominal response delay, as in every
 * central policy here. drop_scan "head" (default) drops expired requests from the head;
 * "nexuslb_tail" reproduces the re-implementation, which tests only the newest request and
 * so leaves an expired head blocking the model until everything queued has expired. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "sim_err.h"
#include "sim_param.h"

struct shepherd {
    double lambda;
    int *preempts;               /* [b]: the least batch k with k >= lambda b, b <= maxb */
    int maxb;
    int drop_scan;                  /* SCANS: 1 (nexuslb_tail) tests only the newest request */
    int scan;                       /* PASSES: 1 (every_gpu), the arrival pass as Flex is written */
    bool tail_scan;
    bool every_gpu;
    int kind;
    /* arrivals' work list: models whose queues changed and must be offered to every GPU */
    int *changed;
    bool *in_changed;
    /* drop_expired's memo: qver[m] counts the changes to m's queue (all go through this
     * policy: arrivals, drops, dispatches, preemptions); while lim_ver[m] == qver[m], the
     * request drop_expired tests stays feasible up to time lim[m], so a call before then
     * drops nothing and returns at once (the arrival pass makes one per GPU) */
    uint64_t *qver, *lim_ver;
    int64_t *lim;
};

static const char *const SCANS[] = {"head", "nexuslb_tail", NULL};
static const char *const PASSES[] = {"indexed", "every_gpu", NULL};
static const struct sim_param params[] = {
    {"lambda", SIM_P_NUM, SIM_P_AT(struct shepherd, lambda, double), .cons = SIM_J_POS,
     .def = 3.03, .type_doc = "> 1",
     .doc = "a running batch is preempted by one at least this many times larger"},
    {"drop_scan", SIM_P_ENUM, SIM_P_AT_ENUM(struct shepherd, drop_scan), .choices = SCANS,
     .doc = "the expiry check: drop from the head while the oldest request cannot finish "
            "alone (Flex as written), or test only the newest and drop the whole queue when "
            "it cannot (the nexuslb harness's timeout scan)"},
    {"scan", SIM_P_ENUM, SIM_P_AT_ENUM(struct shepherd, scan), .choices = PASSES,
     .doc = "the GPUs an arrival is offered to: those where the offer can change something "
            "(the engine's indexes) or every GPU in index order; the results are identical"},
    {NULL}};

static inline int64_t eff_dl(const struct sim *s, const struct sim_request *r)
{
    return r->deadline - sim_resp_delay_ns(s, r->model);
}

/* The last time r can start alone and meet its deadline. */
static int64_t feasible_until(const struct sim *s, const struct shepherd *st, int m,
                              const struct sim_request *r)
{
    return eff_dl(s, r) - sim_dispatch_delay_ns(s, 1) - sim_latency_ns(s, m, st->kind, 1);
}

static bool feasible_alone(const struct sim *s, const struct shepherd *st, int m,
                           const struct sim_request *r, int64_t t)
{
    return t <= feasible_until(s, st, m, r);
}

/* BatchGen step 1 (drop_expired below when the memo does not answer). */
static void sweep(struct sim *s, const struct shepherd *st, int m, int64_t t)
{
    int n = sim_queue_len(s, m);
    if (n == 0)
        return;
    if (st->tail_scan) {
        /* only the newest is tested; if it is infeasible, so is everything queued */
        if (!feasible_alone(s, st, m, sim_queue_at(s, m, n - 1), t))
            while (sim_queue_len(s, m))
                sim_queue_drop_head(s, m);
    } else {
        while (sim_queue_len(s, m) && !feasible_alone(s, st, m, sim_queue_at(s, m, 0), t))
            sim_queue_drop_head(s, m);
    }
    int left = sim_queue_len(s, m);
    if (left != n)
        st->qver[m]++;
    if (left) {
        st->lim[m] = feasible_until(s, st, m, sim_queue_at(s, m, st->tail_scan ? left - 1 : 0));
        st->lim_ver[m] = st->qver[m];
    }
}

static inline void drop_expired(struct sim *s, const struct shepherd *st, int m, int64_t t)
{
    if (sim_queue_len(s, m) && (st->lim_ver[m] != st->qver[m] || t > st->lim[m]))
        sweep(s, st, m, t);             /* else empty, or what it tests is still feasible */
}

/* BatchGen steps 2-3 for one model: the size of the batch GPU n would run now, over the
 * requests of its current batch `bc` (when it runs model m) followed by m's queue. */
static int candidate(struct sim *s, const struct shepherd *st, int m, const struct sim_batch *bc,
                     int64_t t)
{
    drop_expired(s, st, m, t);
    const struct sim_request *r = bc && bc->model == m ? bc->reqs : NULL;
    int qi = 0, qn = sim_queue_len(s, m), k = 0, maxb = sim_model(s, m)->max_batch;
    int64_t dl = INT64_MAX;
    while (k < maxb) {
        const struct sim_request *x;
        if (r) {
            x = r;
            r = r->next;
        } else if (qi < qn) {
            x = sim_queue_at(s, m, qi++);
        } else {
            break;
        }
        int64_t d = eff_dl(s, x) < dl ? eff_dl(s, x) : dl;
        if (d < t + sim_dispatch_delay_ns(s, k + 1) + sim_latency_ns(s, m, st->kind, k + 1))
            break;
        dl = d;
        k++;
    }
    return k;
}

/* The least batch k with (double)k >= lambda * b, the size that preempts a running batch of b
 * (a table for the sizes models allow, so the arrival pass compares integers). */
static int least_preempting(double lambda, int b)
{
    double x = lambda * b;
    if (x > INT_MAX / 2)
        return INT_MAX;                 /* no batch gets there (lambda = 1e9: never) */
    int k = (int)ceil(x);
    while (k > 0 && (double)(k - 1) >= x)
        k--;
    while ((double)k < x)
        k++;
    return k;
}

static inline int preempt_size(const struct shepherd *st, int b)
{
    return st->preempts[b];             /* a running batch is at most its model's max_batch */
}

/* Whether the batch a GPU running `old_bs` requests of m could form from them and m's queue
 * (candidate) can reach lambda * old_bs, the size that preempts: it holds at most old_bs +
 * the queue's length. When it cannot, that batch changes no decision — a preemption then
 * needs another model's batch of lambda * old_bs, larger than it anyway — so the arrival
 * pass skips computing it (after candidate's early drops, which it still does). */
static inline bool reaches(struct sim *s, const struct shepherd *st, int m, int old_bs, int64_t t)
{
    drop_expired(s, st, m, t);
    return old_bs + sim_queue_len(s, m) >= preempt_size(st, old_bs);
}

/* Runs a batch of `bs` of model m on GPU n, preempting what n runs (its requests return to
 * their queue in deadline order, ahead of the later arrivals the new batch extends to). */
static void assign(struct sim *s, const struct shepherd *st, int n, int m, int bs)
{
    const struct sim_batch *bc = sim_exec(s, n)->running;
    if (bc) {
        st->qver[bc->model]++;          /* its requests return to their queue */
        sim_preempt(s, n);
    }
    st->qver[m]++;
    sim_dispatch(s, n, m, bs, sim_now(s));
}

static void mark_changed(struct shepherd *st, int *nchanged, int m)
{
    if (!st->in_changed[m]) {
        st->in_changed[m] = true;
        st->changed[(*nchanged)++] = m;
    }
}

/* The arrival pass visits, in index order, only the GPUs where it can change something: one
 * with a free lane while x's queue forms a batch (fq > 0); one running a batch small enough
 * that x's batch (fq) reaches the size that preempts it (the running sizes 1..bx); and one
 * running model y's batch small enough that it, grown by y's whole queue, reaches that size
 * (sizes 1..by[y], from y's queue alone). Each bound grows with the running batch's size,
 * so these are size ranges of the engine's running indexes: by size (any model), and by
 * model and size for the few models whose queues are long enough to count (hot ones; past
 * HOT of them, one range of every model up to the largest bound). Flex as written visits
 * every GPU (scan "every_gpu" does too); the others change nothing: the same decisions
 * (cli.shepherd_scan). */
enum { HOT = 4 };
struct pass {
    bool all;                           /* every GPU (a range reaches every running size) */
    int bx;                             /* running sizes 1..bx, any model (fq preempts them) */
    int nhot;                           /* HOT + 1: too many; one range 1..wide, any model */
    int wide;
    int hot[HOT], by[HOT];              /* running sizes 1..by[i] of model hot[i] */
};

/* The largest running size b whose preempting size is reached: preempts[b] - b <= q (the
 * size a running batch grown by a queue of q reaches) or preempts[b] <= fq. */
static int bound_for(const struct shepherd *st, int q, int fq)
{
    int b = 0;
    while (b < st->maxb && (st->preempts[b + 1] <= fq || st->preempts[b + 1] - (b + 1) <= q))
        b++;
    return b;
}

static void pass_plan(const struct sim *s, const struct shepherd *st, int fq, struct pass *p)
{
    *p = (struct pass){.bx = bound_for(st, -1, fq)};
    if (st->every_gpu || p->bx >= st->maxb) {
        p->all = true;
        return;
    }
    int least = st->preempts[1] - 1;    /* a queue shorter than this counts for no size */
    for (int m = 0; m < sim_model_count(s); m++) {
        int q = sim_queue_len(s, m);
        if (q < least)
            continue;
        int b = bound_for(st, q, -1);
        if (b <= p->bx)
            continue;                   /* covered by x's range */
        if (b > p->wide)
            p->wide = b;
        if (p->nhot < HOT) {
            p->hot[p->nhot] = m;
            p->by[p->nhot] = b;
        }
        if (p->nhot <= HOT)
            p->nhot++;
    }
    p->all = p->wide >= st->maxb;
}

/* The next GPU at index >= from the pass visits, or -1 (the running indexes round each bound
 * up to a power of two: the body tests each batch's size itself). */
static int next_gpu(const struct sim *s, const struct pass *p, int fq, int from)
{
    if (p->all)
        return from < sim_exec_count(s) ? from : -1;
    int best = fq > 0 ? sim_exec_next_free(s, from) : -1;
    int bx = p->nhot > HOT && p->wide > p->bx ? p->wide : p->bx;
    int g = bx > 0 ? sim_exec_next_running_le(s, bx, from) : -1;
    if (g >= 0 && (best < 0 || g < best))
        best = g;
    for (int i = 0; p->nhot <= HOT && i < p->nhot; i++) {
        g = sim_exec_next_running_of(s, p->hot[i], p->by[i], from);
        if (g >= 0 && (best < 0 || g < best))
            best = g;
    }
    return best;
}

/* drop_expired(m, t) would drop nothing and change no memo: m's queue is empty, or its memo
 * says what it tests is feasible until after t. */
static inline bool quiet(const struct sim *s, const struct shepherd *st, int m, int64_t t)
{
    return sim_queue_len(s, m) == 0 || (st->lim_ver[m] == st->qver[m] && t <= st->lim[m]);
}

/* Whether the arrival pass's visit of a GPU running rb (a batch of model y, size b) for the
 * changed model x, whose own batch is fq, would do nothing: no drop (drop_expired of y, or of
 * x where y is x, is quiet) and no assignment (neither x's batch nor one formed from the
 * running batch and y's queue, which holds at most b + the queue, reaches the size that
 * preempts b). Decided from the engine's dense brief and the queues' lengths, so most GPUs
 * the running index yields are passed over without reading their records or batches. */
static inline bool visit_is_idle(const struct sim *s, const struct shepherd *st, int x, int fq,
                                 struct sim_run_brief rb, int64_t t)
{
    int y = rb.model, p = preempt_size(st, rb.size);
    if (y < 0 || !quiet(s, st, y, t))
        return false;
    if (y == x)
        return rb.size + sim_queue_len(s, x) < p;
    return fq < p && rb.size + sim_queue_len(s, y) < p;
}

static void on_request(struct sim *s, void *state, int x0, struct sim_request *req)
{
    (void)req;
    struct shepherd *st = state;
    int64_t now = sim_now(s);
    int nchanged = 0;
    st->qver[x0]++;                     /* it may even be the new head (network jitter) */
    mark_changed(st, &nchanged, x0);
    while (nchanged > 0) {
        int x = st->changed[--nchanged];
        st->in_changed[x] = false;
        /* x's batch from its queue alone is the same for every GPU that does not run x,
         * until an assignment changes the queues: computed once (candidate's early drops
         * are done by the first call at this instant) */
        int from_queue = -1;
        struct pass pl;
        for (int n = 0;; n++) {
            if (from_queue < 0) {       /* at the start, and after each assignment */
                from_queue = sim_queue_len(s, x) ? candidate(s, st, x, NULL, now) : 0;
                pass_plan(s, st, from_queue, &pl);
            }
            if ((n = next_gpu(s, &pl, from_queue, n)) < 0)
                break;
            if (!st->every_gpu &&
                visit_is_idle(s, st, x, from_queue, sim_exec_running_brief(s, n), now))
                continue;
            const struct sim_exec *ex = sim_exec(s, n);
            if (ex->state != SIM_EXEC_UP)
                continue;
            const struct sim_batch *bc = ex->running;
            int old_bs = bc ? bc->size : 0;
            if (sim_queue_len(s, x) == 0 && (!bc || sim_queue_len(s, bc->model) == 0))
                continue;               /* nothing queued that could form a batch */
            int best_m = x, best;
            if (bc && bc->model == x)
                best = reaches(s, st, x, old_bs, now) ? candidate(s, st, x, bc, now) : 0;
            else
                best = from_queue >= 0 ? from_queue : (from_queue = candidate(s, st, x, NULL, now));
            if (bc && bc->model != x && reaches(s, st, bc->model, old_bs, now)) {
                int c = candidate(s, st, bc->model, bc, now);
                if (c > best) {
                    best = c;
                    best_m = bc->model;
                }
            }
            if (best == 0)
                continue;
            if (!bc) {
                assign(s, st, n, best_m, best);
                from_queue = -1;
            } else if (best >= preempt_size(st, old_bs)) {
                assign(s, st, n, best_m, best);
                from_queue = -1;
                if (best_m != x)
                    mark_changed(st, &nchanged, best_m);
            }
        }
    }
}

static void on_batch_done(struct sim *s, void *state, const struct sim_batch *b)
{
    struct shepherd *st = state;
    int n = b->exec;
    if (sim_exec(s, n)->state != SIM_EXEC_UP || sim_exec(s, n)->running)
        return;
    int64_t now = sim_now(s);
    int best_m = -1, best = 0;
    for (int m = 0; m < sim_model_count(s); m++) {
        if (sim_queue_len(s, m) == 0)
            continue;
        /* candidate's one side effect first; then a batch that cannot beat the best (it
         * holds at most the queue, at most max_batch) need not be formed */
        drop_expired(s, st, m, now);
        int q = sim_queue_len(s, m), maxb = sim_model(s, m)->max_batch;
        if ((q < maxb ? q : maxb) <= best)
            continue;
        int c = candidate(s, st, m, NULL, now);
        if (c > best) {
            best = c;
            best_m = m;
        }
    }
    if (best > 0)
        assign(s, st, n, best_m, best);
}

static int init(struct sim *s, const cJSON *p, void *state)
{
    struct shepherd *st = state;
    int rc;
    st->kind = sim_exec(s, 0)->kind;
    if ((rc = sim_params_read(params, p, "policy.params", st)))
        return rc;
    st->every_gpu = st->scan == 1;
    if (st->lambda <= 1)
        return sim_err_set(SIM_EINVAL, "policy.params.lambda: expected a number > 1 (a batch "
                           "is preempted only by a larger one), got %.15g", st->lambda);
    st->tail_scan = st->drop_scan == 1;
    int nm = sim_model_count(s);
    st->changed = calloc((size_t)nm, sizeof *st->changed);
    st->in_changed = calloc((size_t)nm, sizeof *st->in_changed);
    st->qver = calloc((size_t)nm, sizeof *st->qver);
    st->lim_ver = malloc((size_t)nm * sizeof *st->lim_ver);
    st->lim = calloc((size_t)nm, sizeof *st->lim);
    if (!st->changed || !st->in_changed || !st->qver || !st->lim_ver || !st->lim)
        return SIM_ENOMEM;
    for (int m = 0; m < nm; m++) {
        st->lim_ver[m] = UINT64_MAX;    /* no memo yet */
        if (sim_model(s, m)->max_batch > st->maxb)
            st->maxb = sim_model(s, m)->max_batch;
    }
    if (!(st->preempts = malloc(((size_t)st->maxb + 1) * sizeof *st->preempts)))
        return SIM_ENOMEM;
    for (int b = 0; b <= st->maxb; b++)
        st->preempts[b] = least_preempting(st->lambda, b);
    return sim_exec_index_running(s);
}

static void destroy(void *state)
{
    struct shepherd *st = state;
    free(st->changed);
    free(st->in_changed);
    free(st->qver);
    free(st->lim_ver);
    free(st->lim);
    free(st->preempts);
}

const struct policy_ops policy_shepherd = {
    .name = "shepherd",
    .summary = "Shepherd Flex: central, work-conserving, largest batch first, preemption (NSDI'23)",
    .state_size = sizeof(struct shepherd),
    .params = params,
    .init = init,
    .on_request = on_request,
    .on_batch_done = on_batch_done,
    .dynamic_execs = true,   /* reads executors' states and the engine's indexes */
    .destroy = destroy,
};
