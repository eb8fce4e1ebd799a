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
 * free-time heap holds the GPUs up, and every candidate is recomputed when the set changes. */
#include <math.h>
#include <stdlib.h>

#include "policy.h"
#include "sim_err.h"
#include "sim_iheap.h"
#include "sim_json.h"

enum { TAG_MODEL = 1, TAG_RANK = 2 };

struct cand {
    bool valid, parked;
    int bs;
    int64_t exec_at, invalid_after, drop_at;
    uint64_t timer;
    int64_t timer_at;
    double rate_c;               /* exponentially decayed arrival count */
    int64_t rate_t;
    int64_t beta_ns;             /* fixed cost of a batch: 2 l(1) - l(2) */
};

struct symphony {
    bool wc, overload_drop;
    double tau_ns;
    double bad_threshold;
    int nm, ng, kind;
    int64_t resp_ns;
    struct cand *c;
    struct sim_iheap gpus;       /* GPU -> free_at */
    int *parked;
    int nparked;
    uint64_t rank_timer;
    int64_t rank_at;
};

static const char *const params[] = {"work_conserving", "rate_window_ms", "bad_rate_threshold",
                                     "overload_drop", NULL};

static inline int64_t lat(const struct sim *s, const struct symphony *st, int m, int b)
{
    return sim_latency_ns(s, m, st->kind, b);
}

static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static inline int64_t eff_dl(const struct symphony *st, const struct sim_request *r)
{
    return r->deadline - st->resp_ns;
}

/* Can the b requests first..first+b-1, started at max(now + delay(b), gfree), finish by the
 * deadline of request `first` (the earliest of them)? Monotone in b. */
static bool fits(const struct sim *s, const struct symphony *st, int m, int first, int b,
                 int64_t gfree)
{
    int64_t dl = eff_dl(st, sim_queue_at(s, m, first));
    return max64(sim_now(s) + sim_dispatch_delay_ns(s, b), gfree) + lat(s, st, m, b) <= dl;
}

/* Step 2: the largest batch starting at request `first` that fits (0 if none). */
static int prefix_batch(const struct sim *s, const struct symphony *st, int m, int first,
                        int64_t gfree)
{
    int maxb = sim_model(s, m)->max_batch, len = sim_queue_len(s, m) - first;
    int lo = 0, hi = len < maxb ? len : maxb;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (fits(s, st, m, first, mid, gfree))
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
    bool behind = (double)st->ng * bs < lambda * (double)lat(s, st, m, bs);
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
    int64_t dl = eff_dl(st, sim_queue_at(s, m, 0));
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
    sim_timer_cancel(s, c->timer);
    c->timer = sim_timer_set(s, at, TAG_MODEL, (void *)(intptr_t)m);
    c->timer_at = at;
}

static void unpark(struct symphony *st, int m)
{
    if (!st->c[m].parked)
        return;
    st->c[m].parked = false;
    for (int i = 0; i < st->nparked; i++)
        if (st->parked[i] == m) {
            st->parked[i] = st->parked[--st->nparked];
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

static void rank_rearm(struct sim *s, struct symphony *st)
{
    if (st->nparked == 0) {
        sim_timer_cancel(s, st->rank_timer);
        st->rank_timer = 0;
        return;
    }
    int64_t maxd = 0;
    for (int i = 0; i < st->nparked; i++) {
        int64_t d = sim_dispatch_delay_ns(s, st->c[st->parked[i]].bs);
        if (d > maxd)
            maxd = d;
    }
    int g = sim_iheap_top(&st->gpus);
    int64_t at = max64(sim_now(s), sim_iheap_key(&st->gpus, g) - maxd);
    if (st->rank_timer && st->rank_at == at)
        return;
    sim_timer_cancel(s, st->rank_timer);
    st->rank_timer = sim_timer_set(s, at, TAG_RANK, NULL);
    st->rank_at = at;
}

static void refresh(struct sim *s, struct symphony *st, int m)
{
    int g = sim_iheap_top(&st->gpus);
    if (g < 0)
        SIM_BUG("symphony: no GPU up (the autoscaler keeps at least min_gpus)");
    update(s, st, m, sim_iheap_key(&st->gpus, g));
    schedule(s, st, m);
}

static void grant(struct sim *s, struct symphony *st, int g, int m)
{
    struct cand *c = &st->c[m];
    unpark(st, m);
    update(s, st, m, sim_iheap_key(&st->gpus, g));
    if (c->valid) {
        sim_dispatch(s, g, m, c->bs, c->exec_at);
        sim_iheap_set(&st->gpus, g, c->exec_at + lat(s, st, m, c->bs));
    }
    refresh(s, st, m);
    rank_rearm(s, st);
}

static void on_model_timer(struct sim *s, struct symphony *st, int m)
{
    struct cand *c = &st->c[m];
    c->timer = 0;
    if (c->parked) {                       /* the earliest deadline passed while waiting */
        refresh(s, st, m);
        rank_rearm(s, st);
        return;
    }
    int g = sim_iheap_top(&st->gpus);
    if (!c->valid)
        return;
    if (sim_iheap_key(&st->gpus, g) <= c->exec_at) {
        grant(s, st, g, m);
        return;
    }
    c->parked = true;
    st->parked[st->nparked++] = m;
    arm(s, c, m, c->drop_at);
    rank_rearm(s, st);
}

static void on_rank_timer(struct sim *s, struct symphony *st)
{
    st->rank_timer = 0;
    int g = sim_iheap_top(&st->gpus);
    int64_t f = sim_iheap_key(&st->gpus, g);
    int best = -1;
    int nstale = 0;
    int *stale = st->parked + st->nparked;    /* scratch space after the parked list */
    for (int i = 0; i < st->nparked; i++) {
        int p = st->parked[i];
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
        rank_rearm(s, st);
}

static int init(struct sim *s, const cJSON *p, void *state)
{
    struct symphony *st = state;
    double window_ms = 1000;
    int rc;
    st->bad_threshold = 0.01;
    st->overload_drop = true;
    if ((rc = sim_json_bool(p, "policy.params", "work_conserving", false, &st->wc)) ||
        (rc = sim_json_bool(p, "policy.params", "overload_drop", false, &st->overload_drop)) ||
        (rc = sim_json_num(p, "policy.params", "rate_window_ms", false, SIM_J_POS, &window_ms)) ||
        (rc = sim_json_num(p, "policy.params", "bad_rate_threshold", false, SIM_J_UNIT, &st->bad_threshold)))
        return rc;
    st->tau_ns = window_ms * 1e6;
    st->nm = sim_model_count(s);
    st->kind = sim_exec(s, 0)->kind;
    int cap = sim_world(s)->max_gpus > sim_exec_count(s) ? sim_world(s)->max_gpus : sim_exec_count(s);
    st->resp_ns = sim_resp_delay_ns(s);
    st->c = calloc((size_t)st->nm, sizeof *st->c);
    st->parked = calloc(2 * (size_t)st->nm, sizeof *st->parked);
    if (!st->c || !st->parked || sim_iheap_init(&st->gpus, cap))
        return SIM_ENOMEM;
    for (int g = 0; g < sim_exec_count(s); g++)
        if (sim_exec(s, g)->state == SIM_EXEC_UP) {
            sim_iheap_set(&st->gpus, g, 0);
            st->ng++;
        }
    for (int m = 0; m < st->nm; m++) {
        int64_t b = 2 * lat(s, st, m, 1) - lat(s, st, m, 2);
        st->c[m].beta_ns = b > 0 ? b : 0;
    }
    return 0;
}

static void destroy(void *state)
{
    struct symphony *st = state;
    free(st->c);
    free(st->parked);
    sim_iheap_free(&st->gpus);
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
        rank_rearm(s, st);
}

static void on_timer(struct sim *s, void *state, uint64_t tag, void *arg)
{
    struct symphony *st = state;
    if (tag == TAG_MODEL)
        on_model_timer(s, st, (int)(intptr_t)arg);
    else
        on_rank_timer(s, st);
}

/* Executors joining and leaving (autoscaling): the GPU set changed, so every candidate's
 * start time may have; recompute them all. */
static void regroup(struct sim *s, struct symphony *st)
{
    for (int m = 0; m < st->nm; m++)
        if (st->c[m].valid || sim_queue_len(s, m) > 0) {
            unpark(st, m);
            refresh(s, st, m);
        }
    rank_rearm(s, st);
}

static void on_exec_up(struct sim *s, void *state, int e)
{
    struct symphony *st = state;
    /* ids are never reused: a long autoscaled run outgrows cluster.max_gpus */
    if (e >= st->gpus.cap && sim_iheap_reserve(&st->gpus, 2 * e + 1))
        SIM_BUG("out of memory growing Symphony's GPU heap to %d", 2 * e + 1);
    sim_iheap_set(&st->gpus, e, sim_now(s));
    st->ng++;
    regroup(s, st);
}

static void on_exec_remove(struct sim *s, void *state, int e)
{
    struct symphony *st = state;
    if (st->gpus.pos[e] < 0)
        return;
    sim_iheap_remove(&st->gpus, e);
    st->ng--;
    regroup(s, st);
}

static void on_tick(struct sim *s, void *state)
{
    struct symphony *st = state;
    const struct sim_window *w = sim_last_window(s);
    double n = w->execs_up, r = w->bad_rate, f = w->idle_frac;
    double add = (r > st->bad_threshold && r < 1) ? n * r / (1 - r) : 0;
    sim_ts_add(s, "symphony.add_gpus", -1, add);
    sim_ts_add(s, "symphony.release_gpus", -1, add > 0 ? 0 : n * f);
}

const struct policy_ops policy_symphony = {
    .name = "symphony",
    .summary = "Symphony: centralized, non-work-conserving deferred batching (arXiv 2023)",
    .state_size = sizeof(struct symphony),
    .param_keys = params,
    .init = init,
    .on_request = on_request,
    .on_timer = on_timer,
    .on_tick = on_tick,
    .on_exec_up = on_exec_up,
    .on_exec_remove = on_exec_remove,
    .dynamic_execs = true,
    .destroy = destroy,
};
