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
#include <gsl/gsl_sort_double.h>
#include <gsl/gsl_statistics_double.h>

#include "clockwork_int.h"
#include "sim_err.h"
#include "sim_grow.h"
#include "sim_json.h"
#include "sim_param.h"

static const char *const SCHEDS[] = {"infer4", "infer5", NULL};
static const char *const INPUTS[] = {"network", "none", NULL};
/* The defaults are the Symphony paper's runs (preset "paper", presets.c). */
static const struct sim_param params[] = {
    {"scheduler", SIM_P_ENUM, SIM_P_AT_ENUM(struct cw_params, scheduler), .choices = SCHEDS,
     .doc = "the released controller's scheduler: INFER4 (its default and recommended one) or "
            "INFER5"},
    {"batch_sizes", SIM_P_HAND, .type_doc = "`\"all\"`, `\"pow2\"` or a list of increasing "
     "integers in [1, 64]", .def_doc = "`\"all\"`",
     .doc = "the batch sizes a model runs: every size up to `max_batch` (the authors added "
            "them for the Symphony paper), powers of two (the released code) or a list"},
    {"max_batch", SIM_P_INT, SIM_P_AT(struct cw_params, max_batch, int), .lo = 1, .hi = MAXB,
     .def = 16, .doc = "the largest batch"},
    {"max_exec_ms", SIM_P_NUM, SIM_P_AT(struct cw_params, max_exec_ms, double),
     .cons = SIM_J_POS, .def = 250,
     .doc = "the longest batch the controller schedules (the code's default; its usage text "
            "says 25)"},
    {"schedule_ahead_ms", SIM_P_NUM, SIM_P_AT(struct cw_params, schedule_ahead_ms, double),
     .cons = SIM_J_POS, .def = 10,
     .doc = "how far ahead of a GPU's predicted free time its next batch is committed"},
    {"default_slo_ms", SIM_P_NUM, SIM_P_AT(struct cw_params, default_slo_ms, double),
     .cons = SIM_J_POS, .def = 100, .doc = "the SLO of a model that gives none"},
    {"preload", SIM_P_BOOL, SIM_P_AT(struct cw_params, preload, bool), .def = 0,
     .doc = "load every model on every GPU before the run (memory permitting) instead of on "
            "demand"},
    {"skip_satisfied_loads", SIM_P_BOOL, SIM_P_AT(struct cw_params, skip_satisfied_loads, bool),
     .def = 0, .doc = "load nothing when the best candidate's load priority is not positive (its "
                "holders already absorb its demand)"},
    {"inputs", SIM_P_ENUM, SIM_P_AT_ENUM(struct cw_params, inputs), .choices = INPUTS,
     .sdef = "none",
     .doc = "`none`: the workers make the inputs, so a batch waits the control delay only; "
            "`network`: the controller sends them, ctrl + b x `data_us_per_request` (the "
            "engine's `sim_dispatch_args.no_input`)"},
    {NULL}};


/* ---------------------------------------------------------------- estimates */

static void est_init(struct est *e, int64_t v)
{
    memset(e, 0, sizeof *e);
    e->value = v;
}

/* The 0.99 quantile of the window. GSL interpolates between the order statistics
 * floor(0.99 (n - 1)) and the next, which for n <= WIN < 101 are the two largest: only those
 * are put in place (gsl_sort_largest), not the whole window sorted. */
_Static_assert(WIN >= 2 && WIN <= 100, "the 0.99 quantile needs the two largest only");
static void est_add(struct est *e, int64_t v)
{
    double sorted[WIN], top[2];
    e->v[e->pos] = (double)v;
    e->pos = (e->pos + 1) % WIN;
    if (e->n < WIN)
        e->n++;
    size_t n = (size_t)e->n;
    if (n == 1)
        sorted[0] = e->v[0];
    else {
        gsl_sort_largest(top, 2, e->v, 1, n);
        sorted[n - 1] = top[0];
        sorted[n - 2] = top[1];
    }
    e->value = (int64_t)llround(gsl_stats_quantile_from_sorted_data(sorted, 1, n, 0.99));
}

/* ---------------------------------------------------------------- WorkerTracker */

int cw_tr_add(struct tracker *t, int64_t now, int64_t size, int64_t begin)
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

int64_t cw_tr_available(struct tracker *t, int64_t now)
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


/* Largest supported size <= n (at least the smallest). */
static int lookup(const struct model *md, int n)
{
    int b = md->sizes[0];
    for (int i = 0; i < md->nsizes && md->sizes[i] <= n; i++)
        b = md->sizes[i];
    return b;
}


/* The first position in [lo, q) of m's queue whose t_arrival + off is after key (q if none):
 * a binary search while the queue is in arrival order, else a scan. */
int cw_first_after(const struct sim *s, const struct clockwork *st, int m, int lo, int q,
                       int64_t off, int64_t key)
{
    if (!st->ms[m].sorted) {
        while (lo < q && sim_queue_arrival_at(s, m, lo) + off <= key)
            lo++;
        return lo;
    }
    int hi = q;             /* (strat_model tries the queue's end and lo - 1 before it calls) */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (sim_queue_arrival_at(s, m, mid) + off > key)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The deadline the scheduler works to of the i-th request in m's queue. */
static inline int64_t qdl(const struct sim *s, const struct clockwork *st, int m, int i)
{
    return sim_queue_arrival_at(s, m, i) + st->ms[m].exec_slo;
}

static void drop_head(struct sim *s, struct clockwork *st, int m)
{
    sim_queue_drop_head(s, m);
    st->ms[m].removed++;
    cw_touch(st, m);
}

static void arm_timeout(struct sim *s, struct clockwork *st, int m)
{
    struct model *md = &st->ms[m];
    if (sim_queue_len(s, m) == 0) {
        sim_timer_cancel(s, md->timeout);
        md->timeout = 0;
        return;
    }
    int64_t at = qdl(s, st, m, 0);
    if (md->timeout && md->timeout_at == at)
        return;
    md->timeout = sim_timer_rearm(s, md->timeout, at, TAG_TIMEOUT, (void *)(intptr_t)m);
    md->timeout_at = at;
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
    if (cw_tr_add(&st->gs[g].exec, now, e, free_at))
        sim_fail_nomem(s, "growing a Clockwork tracker");
    arm_timeout(s, st, m);
}

/* try_dequeue for the strategy (anchor at absolute position pos, size b) of model m. */
static bool try_dequeue4(struct sim *s, struct clockwork *st, int g, int m, int64_t pos, int b,
                         int64_t free_at)
{
    struct model *md = &st->ms[m];
    int64_t dl = qdl(s, st, m, (int)(pos - md->removed));   /* the anchor's */
    int64_t completion = free_at + est_of(st, m, b);
    if (dl <= completion)
        return false;
    while (sim_queue_len(s, m) && qdl(s, st, m, 0) < free_at) {
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
    while (md->removed < pos && qdl(s, st, m, 0) < completion)
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

/* Strategies set aside (INFER4 without a controller's cost). A strategy whose batch is larger
 * than the requests from its anchor to the queue's end (b > q - idx) is doomed: the queue
 * cannot grow within a call, and a later anchor of the same size is doomed too. While m's
 * queue is in arrival order and its head is not before the GPU's free time F, trying a
 * doomed strategy has no effect but its own cursor's step: it passes the first test (p > F),
 * drops nothing (no head is before F) and finds too few requests. A doomed strategy with
 * p <= F is discarded on its turn with no effect either, but for its model's re-entry at F.
 * So such a model's heap entry covers only its sizes that are not doomed, and the doomed
 * ones wait aside (dmin, the list lz) until something could tell: the model's own turn in
 * the heap, a send (F moves) or the end of the call. Each then steps its doomed cursors past
 * the strategies the loop would have taken by that point (lz_settle), and the sequence of
 * tries that do anything is that of the loop without the set-aside. What differs is only the
 * count of strategies taken up, which a controller's cost would read, so with one configured
 * nothing is set aside. */

/* The strategy of m's slot i at absolute position pos (INT64_MAX priority past the queue). */
static struct strat strat_at(const struct sim *s, const struct clockwork *st, int m, int i,
                             int64_t pos)
{
    const struct model *md = &st->ms[m];
    int idx = (int)(pos - md->removed);
    int64_t p = idx < sim_queue_len(s, m) ? qdl(s, st, m, idx) - est_of(st, m, md->sizes[i])
                                          : INT64_MAX;
    return (struct strat){p, pos, md->sizes[i], m, i, 0};
}

/* Steps m's set-aside strategies that come before t (all of them where t is NULL), as the
 * loop would have tried them and failed; what is left aside becomes m's dmin. (A set-aside
 * strategy with p <= F, discarded on its turn, comes before any send, whose p is above F; at
 * its model's turn one that does not come before it is discarded by the re-entry at F.) */
static void lz_settle(struct sim *s, struct clockwork *st, int g, int m, const struct strat *t)
{
    struct strat *d = &st->dmin[m];
    if (d->p == INT64_MAX || (t && !strat_before(d, t)))
        return;
    const struct model *md = &st->ms[m];
    int q = sim_queue_len(s, m);
    d->p = INT64_MAX;
    for (int i = 0; i < md->nsizes; i++) {
        int64_t *c = cursor(st, g, m, i);
        if (*c < md->removed)
            *c = md->removed;
        if (md->sizes[i] <= q - (int)(*c - md->removed))
            continue;                   /* not doomed: in the heap */
        struct strat e = strat_at(s, st, m, i, *c);
        while (e.p != INT64_MAX && (!t || strat_before(&e, t)))
            e = strat_at(s, st, m, i, e.pos + 1);
        *c = e.pos;
        if (e.p != INT64_MAX && (d->p == INT64_MAX || strat_before(&e, d)))
            *d = e;
    }
}

/* At a send (the strategy t) or the end of the call (NULL): every model's set-aside
 * strategies before t. The sender's own were settled at its turn, before its queue changed. */
static void lz_settle_all(struct sim *s, struct clockwork *st, int g, const struct strat *t)
{
    for (int k = 0; k < st->nlz; k++)
        lz_settle(s, st, g, st->lz[k], t);
}

/* (Re)enters model m's most urgent strategy on GPU g: over its supported sizes, the entry
 * at each size's cursor, least by strat_before (the heap holds one entry per model, so the
 * global order is that of all strategies). Strategies whose priority is <= skip are
 * discarded first (their cursors advance): try_dequeue4 would fail them on its first test
 * (deadline <= free_at + est(b)) with no other effect. Callers pass skip = the GPU's
 * current free time only while its window is open, when the heap would pop every such
 * strategy before any other (INT64_MIN otherwise). f: the free time of the tries to come
 * (INT64_MIN: set nothing aside); where m allows it at f, its doomed sizes are set aside
 * (above) rather than entered. */
static void strat_model(struct sim *s, struct clockwork *st, int g, int m, int64_t skip,
                        int64_t f)
{
    struct model *md = &st->ms[m];
    uint32_t ver = ++st->mver[m];
    struct strat *d = &st->dmin[m];
    d->p = INT64_MAX;
    int q = sim_queue_len(s, m);
    if (q == 0 || *on_at(st, m, g) != 2)
        return;
    int64_t head_dl = qdl(s, st, m, 0);  /* most cursors are there */
    bool lazy = f != INT64_MIN && md->sorted && head_dl >= f;
    /* the least (priority, position): sizes are tried in rising order, so on a tie of both
     * the smaller size, as strat_before orders them */
    int bi = -1, di = -1;               /* the least entered and set-aside strategies */
    int64_t bp = 0, bpos = 0, dp = 0, dpos = 0, r = md->removed;
    int64_t tail_dl = md->sorted ? qdl(s, st, m, q - 1) : 0;   /* read where sorted only */
    for (int i = 0; i < md->nsizes; i++) {
        int64_t *cp = cursor(st, g, m, i), c = *cp < r ? r : *cp;
        int idx = (int)(c - r);
        if (idx >= q)
            continue;
        int64_t est = est_of(st, m, md->sizes[i]);
        int64_t dl = idx == 0 ? head_dl : qdl(s, st, m, idx);
        if (dl - est <= skip) {         /* skip to the first with dl - est > skip */
            int to = idx + 1;           /* mostly the end (checked first), or the next one */
            if (to < q && md->sorted && tail_dl - est <= skip)
                to = q;
            else if (to < q) {
                dl = qdl(s, st, m, to);
                if (dl - est <= skip) {
                    to = cw_first_after(s, st, m, to + 1, q, md->exec_slo, skip + est);
                    if (to < q)
                        dl = qdl(s, st, m, to);
                }
            }
            c += to - idx;
            *cp = c;
            if (to >= q)
                continue;
            idx = to;
        }
        int64_t p = dl - est;
        if (lazy && md->sizes[i] > q - idx) {   /* doomed: aside */
            if (di < 0 || p < dp || (p == dp && c < dpos)) {
                di = i;
                dp = p;
                dpos = c;
            }
            continue;
        }
        if (bi < 0 || p < bp || (p == bp && c < bpos)) {
            bi = i;
            bp = p;
            bpos = c;
        }
    }
    if (di >= 0)
        *d = (struct strat){dp, dpos, md->sizes[di], m, di, 0};
    if (d->p != INT64_MAX && !md->listed) {
        md->listed = true;
        st->lz[st->nlz++] = m;
    }
    if (bi >= 0) {
        struct strat best = {bp, bpos, md->sizes[bi], m, bi, ver};
        if (strat_push(st, best))
            sim_fail_nomem(s, "growing Clockwork's strategy heap");
    }
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
               qdl(s, st, m, (int)(*c - md->removed)) < free_at + est_of(st, m, b))
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
            int64_t p = qdl(s, st, m, (int)(c - md->removed)) - est_of(st, m, b);
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

void cw_schedule_infer(struct sim *s, struct clockwork *st, int g, int only)
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
    bool aside = !sim_ctrl_on(s);       /* INFER4: set doomed strategies aside (strat_model) */
    int sent = -1;                      /* INFER4: the model of the last send, to enter again */
    st->nsh = 0;
    st->nlz = 0;
    for (;;) {
        int64_t exec_at = cw_tr_available(&gp->exec, now);
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
            int64_t f = aside ? exec_at : INT64_MIN;
            if (!built && only >= 0 && sim_queue_len(s, only) > 0 && *on_at(st, only, g) == 2)
                strat_model(s, st, g, only, exec_at, f);
            else if (!built && only < 0)    /* the models with requests queued, in order */
                for (int k = sim_xqueue_next(s, SIM_CENTRAL, 0); k >= 0;
                     k = sim_xqueue_next(s, SIM_CENTRAL, k + 1))
                    if (*on_at(st, k, g) == 2)  /* else it has none */
                        strat_model(s, st, g, k, exec_at, f);
            if (sent >= 0) {            /* a new free time: the sender's entry, and the models
                                         * whose head is now before it set nothing aside */
                strat_model(s, st, g, sent, INT64_MIN, f);
                for (int i = 0; i < st->nlz; i++) {
                    int k = st->lz[i];
                    if (k != sent && st->dmin[k].p != INT64_MAX && qdl(s, st, k, 0) < exec_at)
                        strat_model(s, st, g, k, INT64_MIN, INT64_MIN);
                }
                sent = -1;
            }
            built = true;
            if (!strat_top(st, &e)) {
                lz_settle_all(s, st, g, NULL);
                break;
            }
            m = e.m;
            lz_settle(s, st, g, m, &e);    /* m's own turn */
            if (e.p <= exec_at)         /* entered after a send moved exec_at: discard */
                strat_model(s, st, g, m, exec_at, f);
            else if (!try_dequeue4(s, st, g, m, e.pos, e.b, exec_at)) {
                *cursor(st, g, m, e.slot) = e.pos + 1;  /* discarded on this GPU (e.pos is
                                                         * its cursor: strat_model's entry) */
                strat_model(s, st, g, m, exec_at, f);
            } else {
                lz_settle_all(s, st, g, &e);
                sent = m;               /* entered at the next free time */
            }
        } else {
            if (!top5(s, st, g, cap, &m, &b))
                break;
            int c = 0;
            if (!try_dequeue5(s, st, g, m, b, exec_at, &c))
                cap[m] = c < b ? c : b - 1;
        }
        arm_timeout(s, st, m);
    }
    for (int i = 0; i < st->nlz; i++)
        st->ms[st->lz[i]].listed = false;
}

/* Offers model m's work to every GPU that holds it and has room in its window, as m's
 * strategies only: an open GPU found every other model's strategies spent at its last call
 * (its heap ran empty: each was sent or discarded for good, and its available time has not
 * gone back since), and only arrivals add strategies, each offered here. A GPU whose
 * window was full at its last schedule_infer stays full until the timer that call armed:
 * its tracker changes only through send and results, both of which call schedule_infer,
 * and between them its available time never decreases; so the offer visits the open GPUs
 * where m is loaded, the two sets intersected word by word (a GPU whose window reopens at
 * this very instant is served by its timer, at the same instant). Once m's queue is empty
 * the GPUs left have nothing new: every strategy they held was m's (a GPU with room has
 * tried all the others at its last call), so where examining costs nothing (no controller)
 * the offer stops there. */
static void schedule_all(struct sim *s, struct clockwork *st, int m)
{
    bool stop_empty = !sim_ctrl_on(s);
    const struct sim_bits *on = &st->loaded[m];
    for (int g = sim_bits_next_and(&st->open, on, 0);
         g >= 0 && !(stop_empty && sim_queue_len(s, m) == 0);
         g = sim_bits_next_and(&st->open, on, g + 1))
        if (sim_exec(s, g)->state == SIM_EXEC_UP)
            cw_schedule_infer(s, st, g, m);
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
    /* the engine queued r by its deadline, which with an application's path SLAs need not be
     * arrival order: still in order if r went to the tail, after an earlier arrival */
    int q = sim_queue_len(s, m);
    md->sorted = q == 1 || (md->sorted && sim_queue_at(s, m, q - 1) == r &&
                            sim_queue_arrival_at(s, m, q - 2) <= r->t_arrival);
    cw_touch(st, m);
    arm_timeout(s, st, m);
    schedule_all(s, st, m);
    cw_load_check(s, st, m);
}

static void on_batch_done(struct sim *s, void *state, const struct sim_batch *b)
{
    struct clockwork *st = state;
    int g = b->exec, m = b->model;
    tr_result(&st->gs[g].exec, sim_now(s));
    st->ms[m].inflight -= b->size;
    cw_touch(st, m);
    if (b->status == SIM_BATCH_OK) {
        est_add(&st->ms[m].est[b->size], b->t_finish - b->t_start);
        st->ms[m].ev[b->size] = st->ms[m].est[b->size].value;
        *used_at(st, m, g) = ++st->seq;
    }
    cw_schedule_infer(s, st, g, -1);
    cw_schedule_load(s, st, g);
}

static void on_load_done(struct sim *s, void *state, int g, int m, bool ok)
{
    struct clockwork *st = state;
    struct gpu *gp = &st->gs[g];
    gp->loads--;
    tr_result(&gp->pcie, sim_now(s));
    gp->pcie_shut = false;
    cw_could(s, st, g);
    if (sim_exec(s, g)->state != SIM_EXEC_UP)
        return;                         /* removed meanwhile: on_exec_remove let go of m */
    if (ok) {
        cw_set_on(st, m, g, 2);
        est_add(&st->ms[m].weights, sim_load_ns(s, m));
        for (int i = 0; i < st->ms[m].nsizes; i++)
            *cursor(st, g, m, i) = st->ms[m].removed;   /* strategies of queued requests */
        cw_schedule_infer(s, st, g, -1);
    } else {
        cw_hold_del(st, m, g);
        cw_could(s, st, g);
    }
    cw_schedule_load(s, st, g);
}

static void on_timer(struct sim *s, void *state, uint64_t tag, void *arg)
{
    struct clockwork *st = state;
    int i = (int)(intptr_t)arg;
    if (tag == TAG_TIMEOUT) {
        st->ms[i].timeout = 0;
        while (sim_queue_len(s, i) && qdl(s, st, i, 0) <= sim_now(s))
            drop_head(s, st, i);        /* "timeout": cancelled */
        arm_timeout(s, st, i);
    } else if (tag == TAG_INFER) {
        st->gs[i].infer_timer = 0;
        cw_schedule_infer(s, st, i, -1);
    } else {
        st->gs[i].pcie_timer = 0;
        st->gs[i].pcie_shut = false;
        cw_could(s, st, i);
        cw_schedule_load(s, st, i);
    }
}

/* ---------------------------------------------------------------- setup */

/* *pp (n elements of `unit` bytes) moved into a zeroed array of `to` elements; unchanged on
 * SIM_ENOMEM. The new array comes from calloc, not realloc and memset: the cursors and
 * last_used of a GPU that never runs a model are never written, so their pages are never
 * touched (at 100,000 GPUs the cursors alone are 180 MB, and a memset faulted every page). */
static int zgrow(void *pp, size_t n, size_t to, size_t unit)
{
    void *old, *p = calloc(to, unit);
    if (!p)
        return SIM_ENOMEM;
    memcpy(&old, pp, sizeof old);
    if (n)
        memcpy(p, old, n * unit);
    free(old);
    memcpy(pp, &p, sizeof p);
    return 0;
}

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
    size_t nc = (size_t)st->ncur;
    if (zgrow(&st->gs, old, cg, sizeof *st->gs) ||
        zgrow(&st->cur, old * nc, cg * nc, sizeof *st->cur) ||
        zgrow(&st->last_used, old * nm, cg * nm, sizeof *st->last_used) ||
        zgrow(&st->on, old * nm, cg * nm, sizeof *st->on))
        return SIM_ENOMEM;
    if (sim_bits_reserve(&st->open, cap) || sim_bits_reserve(&st->could, cap))
        return SIM_ENOMEM;
    for (int m = 0; m < st->nm; m++)
        if (sim_bits_reserve(&st->loaded[m], cap))
            return SIM_ENOMEM;
    for (size_t g = old; g < cg; g++) {
        st->gs[g].O = 1;                /* 1 ms: the released tracker's start */
        st->gs[g].wt = 0.01;
        st->gs[g].last_load = -LOAD_SPACING_NS;
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
    cw_could(s, st, e);
    cw_schedule_load(s, st, e);
}

/* Executor e drains: nothing more goes to it, and the models it held count no more. */
static void on_exec_remove(struct sim *s, void *state, int e)
{
    struct clockwork *st = state;
    struct gpu *gp = &st->gs[e];
    for (int m = 0; m < st->nm; m++)
        if (*on_at(st, m, e))
            cw_hold_del(st, m, e);
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
    const struct cw_params *pp = &st->par;
    int rc;
    if ((rc = sim_params_read(params, p, "policy.params", &st->par)) ||
        (rc = parse_sizes(st, p)))
        return rc;
    st->no_input = pp->inputs == 1;
    st->infer5 = pp->scheduler == 1;
    st->preload = pp->preload;
    st->skip_satisfied = pp->skip_satisfied_loads;
    st->max_batch = pp->max_batch;
    st->ahead = sim_ms_to_ns(pp->schedule_ahead_ms);
    st->max_exec = sim_ms_to_ns(pp->max_exec_ms);
    st->default_slo = sim_ms_to_ns(pp->default_slo_ms);
    st->nm = sim_model_count(s);
    st->kind = sim_exec(s, 0)->kind;
    st->ms = calloc((size_t)st->nm, sizeof *st->ms);
    st->cap = calloc((size_t)st->nm, sizeof *st->cap);
    st->mver = calloc((size_t)st->nm, sizeof *st->mver);
    st->dmin = calloc((size_t)st->nm, sizeof *st->dmin);
    st->lz = calloc((size_t)st->nm, sizeof *st->lz);
    st->loaded = calloc((size_t)st->nm, sizeof *st->loaded);
    st->coff = calloc((size_t)st->nm, sizeof *st->coff);
    st->stale = calloc((size_t)st->nm, sizeof *st->stale);
    if (!st->ms || !st->cap || !st->mver || !st->loaded || !st->coff || !st->stale || !st->dmin ||
        !st->lz)
        return SIM_ENOMEM;
    for (int m = 0; m < st->nm; m++) {
        st->dmin[m].p = INT64_MAX;
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
                if (cw_hold_add(st, m, g))
                    return SIM_ENOMEM;
                cw_set_on(st, m, g, 2);
            }
        }
    for (int g = 0; g < st->ng; g++)
        cw_could(s, st, g);
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
    for (int m = 0; st->loaded && m < st->nm; m++)
        sim_bits_free(&st->loaded[m]);
    free(st->loaded);
    free(st->sh);
    free(st->mver);
    free(st->dmin);
    free(st->lz);
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
    .params = params,
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
