/* sim — the event loop, the world, and the policy-facing API (see sim.h for the contract). */
#include "sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>

#include "sim_err.h"
#include "sim_int.h"
#include "sim_rng.h"

enum { EV_ARRIVAL, EV_DELIVER, EV_BATCH_DONE, EV_TIMER, EV_TICK };

/* ---------------------------------------------------------------- pools */

static void pool_init(struct sim_pool *p, size_t obj_size, size_t per_chunk)
{
    memset(p, 0, sizeof *p);
    p->obj_size = obj_size;
    p->per_chunk = per_chunk;
}

static void *pool_get(struct sim_pool *p)
{
#ifdef SERVESIM_POOL_DEBUG
    /* every object its own allocation, so ASan/valgrind see overruns and use-after-free */
    void *o = calloc(1, p->obj_size);
    if (!o)
        SIM_BUG("out of memory allocating a %zu-byte object", p->obj_size);
    p->live++;
    return o;
#else
    if (!p->free) {
        if (p->nchunks == p->cap_chunks) {
            size_t cap = p->cap_chunks ? 2 * p->cap_chunks : 16;
            void **c = realloc(p->chunks, cap * sizeof *c);
            if (!c)
                SIM_BUG("out of memory growing a pool");
            p->chunks = c;
            p->cap_chunks = cap;
        }
        char *chunk = malloc(p->obj_size * p->per_chunk);
        if (!chunk)
            SIM_BUG("out of memory growing a pool");
        p->chunks[p->nchunks++] = chunk;
        for (size_t i = p->per_chunk; i-- > 0;) {
            void *o = chunk + i * p->obj_size;
            *(void **)o = p->free;
            p->free = o;
        }
    }
    void *o = p->free;
    p->free = *(void **)o;
    memset(o, 0, p->obj_size);
    if (++p->live > p->high_water)
        p->high_water = p->live;
    return o;
#endif
}

static void pool_put(struct sim_pool *p, void *o)
{
    p->live--;
#ifdef SERVESIM_POOL_DEBUG
    free(o);
#else
    *(void **)o = p->free;
    p->free = o;
#endif
}

static void pool_free(struct sim_pool *p)
{
    for (size_t i = 0; i < p->nchunks; i++)
        free(p->chunks[i]);
    free(p->chunks);
    memset(p, 0, sizeof *p);
}

/* ---------------------------------------------------------------- queues */

static void mq_push(struct sim_mqueue *q, struct sim_request *r)
{
    if (q->len == q->cap) {
        int cap = q->cap ? 2 * q->cap : 64;
        struct sim_request **b = malloc((size_t)cap * sizeof *b);
        if (!b)
            SIM_BUG("out of memory growing a queue");
        for (int i = 0; i < q->len; i++)
            b[i] = q->buf[(q->head + i) % q->cap];
        free(q->buf);
        q->buf = b;
        q->head = 0;
        q->cap = cap;
    }
    /* insert from the back: arrivals are almost always in deadline order already */
    int i = q->len;
    while (i > 0) {
        struct sim_request *prev = q->buf[(q->head + i - 1) % q->cap];
        if (prev->deadline <= r->deadline)
            break;
        q->buf[(q->head + i) % q->cap] = prev;
        i--;
    }
    q->buf[(q->head + i) % q->cap] = r;
    q->len++;
}

static inline struct sim_request *mq_at(const struct sim_mqueue *q, int i)
{
    return q->buf[(q->head + i) % q->cap];
}

static struct sim_request *mq_pop(struct sim_mqueue *q)
{
    struct sim_request *r = q->buf[q->head];
    q->head = (q->head + 1) % q->cap;
    q->len--;
    return r;
}

/* ---------------------------------------------------------------- events */

static void push(struct sim *s, int64_t t, uint32_t type, uint32_t idx, uint64_t gen)
{
    if (t < s->now)
        SIM_BUG("event type %u scheduled in the past: %lld < now %lld", type, (long long)t,
                (long long)s->now);
    if (sim_heap_push(&s->heap, (struct sim_event){.time = t, .type = type, .idx = idx, .gen = gen}))
        SIM_BUG("out of memory growing the event queue");
}

static int64_t jitter(struct sim *s)
{
    const struct sim_config *c = s->cfg;
    double us = 0;
    switch (c->jitter) {
    case SIM_JIT_NONE:
        return 0;
    case SIM_JIT_EXPONENTIAL:
        us = gsl_ran_exponential(s->jrng, c->jitter_mean_us);
        break;
    case SIM_JIT_LOGNORMAL: {
        double sg = c->jitter_sigma;
        us = gsl_ran_lognormal(s->jrng, log(c->jitter_mean_us) - sg * sg / 2, sg);
        break;
    }
    }
    return (int64_t)llround(us * 1e3);
}

/* ---------------------------------------------------------------- requests */

static void end_request(struct sim *s, struct sim_request *r, enum sim_outcome o, int64_t t_done)
{
    if (r->outcome != SIM_REQ_PENDING)
        SIM_BUG("request %llu ended twice (outcome %d, then %d)", (unsigned long long)r->id,
                r->outcome, o);
    r->outcome = (uint8_t)o;
    s->ended++;
    struct sim_model_stats *ms = &s->ms[r->model];
    if (o == SIM_REQ_DROPPED) {
        ms->c_bad++;
    } else {
        ms->c_completed++;
        if (o == SIM_REQ_ON_TIME)
            ms->c_ontime++;
        else
            ms->c_bad++;
    }
    if (r->counted) {
        switch (o) {
        case SIM_REQ_ON_TIME: ms->on_time++; break;
        case SIM_REQ_LATE: ms->late++; break;
        case SIM_REQ_DROPPED: ms->dropped++; break;
        default: break;
        }
        if (o != SIM_REQ_DROPPED) {
            sim_hist_add(&ms->latency, t_done - r->t_arrival);
            sim_hist_add(&ms->queueing, r->t_start - r->t_arrival);
        }
    }
    if (s->obs.request_end)
        s->obs.request_end(s->obs.ctx, s, r);
    pool_put(&s->req_pool, r);
}

static void deliver(struct sim *s, struct sim_request *r)
{
    r->t_sched = s->now;
    if (s->stopping) {
        end_request(s, r, SIM_REQ_DROPPED, s->now);
        return;
    }
    mq_push(&s->queues[r->model], r);
    s->pol->on_request(s, s->pstate, r->model, r);
}

static void on_arrival(struct sim *s, int m)
{
    const struct sim_model *md = &s->models[m];
    struct sim_request *r = pool_get(&s->req_pool);
    r->id = s->next_req_id++;
    r->model = m;
    r->frontend = s->rr_frontend[m];
    s->rr_frontend[m] = (s->rr_frontend[m] + 1) % s->cfg->frontends;
    r->t_arrival = s->now;
    r->deadline = s->now + md->slo_ns;
    r->counted = s->now >= s->warmup;
    s->arrived++;
    if (s->obs.request_arrive)
        s->obs.request_arrive(s->obs.ctx, s, r);
    s->ms[m].c_offered++;
    if (r->counted)
        s->ms[m].offered++;

    int64_t next = wl_stream_next(&s->streams[m]);
    if (next < s->duration)
        push(s, next, EV_ARRIVAL, (uint32_t)m, 0);

    int64_t d = s->ctrl_ns + jitter(s);
    if (d == 0)
        deliver(s, r);
    else
        push(s, s->now + d, EV_DELIVER, 0, (uint64_t)(uintptr_t)r);
}

/* ---------------------------------------------------------------- executors */

static void batch_start(struct sim *s, struct sim_batch *b)
{
    struct sim_exec *x = &s->execs[b->exec];
    int64_t t = b->start_at;
    if (b->t_ready > t)
        t = b->t_ready;
    if (x->last_finish > t)
        t = x->last_finish;
    if (s->now > t)
        t = s->now;
    b->t_start = t;
    b->t_finish = t + sim_latency_ns(s, b->model, x->kind, b->size);
    if (b->t_start < x->last_finish)
        SIM_BUG("executor %d would run two batches at once: start %lld < last finish %lld",
                x->id, (long long)b->t_start, (long long)x->last_finish);
    x->last_finish = b->t_finish;
    x->running = b;
    s->xi[b->exec].running = b;
    for (struct sim_request *r = b->reqs; r; r = r->next) {
        r->t_start = b->t_start;
        r->t_finish = b->t_finish;
    }
    if (s->obs.batch_start)
        s->obs.batch_start(s->obs.ctx, s, b);
    push(s, b->t_finish, EV_BATCH_DONE, (uint32_t)b->exec, 0);
}

static void on_batch_done(struct sim *s, int e)
{
    struct sim_exec *x = &s->execs[e];
    struct sim_exec_int *xi = &s->xi[e];
    struct sim_batch *b = xi->running;
    if (!b || b->t_finish != s->now)
        SIM_BUG("batch completion on executor %d without a running batch ending now", e);
    x->busy_ns += b->t_finish - b->t_start;
    x->batches++;
    x->requests += (uint64_t)b->size;
    s->batches_total++;

    struct sim_model_stats *ms = &s->ms[b->model];
    bool counted = false;
    for (struct sim_request *r = b->reqs, *nx; r; r = nx) {
        nx = r->next;
        counted |= r->counted;
        int64_t t_done = s->now + s->resp_ns + jitter(s);
        end_request(s, r, t_done <= r->deadline ? SIM_REQ_ON_TIME : SIM_REQ_LATE, t_done);
    }
    b->reqs = NULL;
    if (counted) {
        ms->batches++;
        ms->batched += (uint64_t)b->size;
        ms->batch_hist[b->size]++;
    }
    if (s->obs.batch_done)
        s->obs.batch_done(s->obs.ctx, s, b);

    xi->running = NULL;
    x->running = NULL;
    if (xi->pend_head) {
        struct sim_batch *nb = xi->pend_head;
        xi->pend_head = nb->next;
        if (!xi->pend_head)
            xi->pend_tail = NULL;
        nb->next = NULL;
        x->pending--;
        batch_start(s, nb);
    }
    if (!s->stopping && s->pol->on_batch_done)
        s->pol->on_batch_done(s, s->pstate, b);
    pool_put(&s->batch_pool, b);
}

const struct sim_batch *sim_dispatch(struct sim *s, int e, int m, int n, int64_t start_at)
{
    if (e < 0 || e >= s->nexecs || m < 0 || m >= s->nmodels)
        SIM_BUG("dispatch to executor %d / model %d out of range", e, m);
    struct sim_exec *x = &s->execs[e];
    struct sim_mqueue *q = &s->queues[m];
    const struct sim_model *md = &s->models[m];
    if (n < 1 || n > q->len || n > md->max_batch)
        SIM_BUG("dispatch of %d requests of model %s (queue %d, max batch %d)", n,
                md->cfg->name, q->len, md->max_batch);
    if (x->state != SIM_EXEC_UP)
        SIM_BUG("dispatch to executor %d in state %d", e, x->state);
    double need = x->resident_mb + s->dyn_mb_per_req[m] * n;
    if (x->memory_mb > 0 && need > x->memory_mb + 1e-9)
        SIM_BUG("batch of %d %s needs %.1f MB on executor %d with %.1f MB", n, md->cfg->name,
                need, e, x->memory_mb);

    struct sim_batch *b = pool_get(&s->batch_pool);
    b->model = m;
    b->exec = e;
    b->size = n;
    b->t_dispatch = s->now;
    b->t_ready = s->now + sim_dispatch_delay_ns(s, n) + jitter(s);
    b->start_at = start_at;
    struct sim_request **tail = &b->reqs;
    for (int i = 0; i < n; i++) {
        struct sim_request *r = mq_pop(q);
        r->next = NULL;
        *tail = r;
        tail = &r->next;
    }
    struct sim_exec_int *xi = &s->xi[e];
    if (!xi->running && !xi->pend_head) {
        batch_start(s, b);
    } else {
        if (xi->pend_tail)
            xi->pend_tail->next = b;
        else
            xi->pend_head = b;
        xi->pend_tail = b;
        x->pending++;
    }
    return b;
}

void sim_queue_drop_head(struct sim *s, int m)
{
    struct sim_mqueue *q = &s->queues[m];
    if (q->len == 0)
        SIM_BUG("drop from the empty queue of model %d", m);
    end_request(s, mq_pop(q), SIM_REQ_DROPPED, s->now);
}

/* ---------------------------------------------------------------- timers */

uint64_t sim_timer_set(struct sim *s, int64_t at, uint64_t tag, void *arg)
{
    uint32_t slot;
    if (s->free_timer) {
        slot = s->free_timer - 1;
        s->free_timer = s->timers[slot].next_free;
    } else {
        if (s->ntimers == s->cap_timers) {
            uint32_t cap = s->cap_timers ? 2 * s->cap_timers : 64;
            struct sim_timer_slot *t = realloc(s->timers, cap * sizeof *t);
            if (!t)
                SIM_BUG("out of memory growing timers");
            s->timers = t;
            s->cap_timers = cap;
        }
        slot = s->ntimers++;
        s->timers[slot].gen = 1;
    }
    struct sim_timer_slot *ts = &s->timers[slot];
    ts->live = true;
    ts->tag = tag;
    ts->arg = arg;
    if (at < s->now)
        at = s->now;
    push(s, at, EV_TIMER, slot, ts->gen);
    return ((uint64_t)ts->gen << 32) | (uint64_t)(slot + 1);
}

void sim_timer_cancel(struct sim *s, uint64_t h)
{
    if (!h)
        return;
    uint32_t slot = (uint32_t)(h & 0xffffffffu) - 1;
    uint32_t gen = (uint32_t)(h >> 32);
    if (slot < s->ntimers && s->timers[slot].gen == gen)
        s->timers[slot].live = false;
}

static void on_timer(struct sim *s, uint32_t slot, uint64_t gen)
{
    struct sim_timer_slot *ts = &s->timers[slot];
    if (ts->gen != (uint32_t)gen)
        SIM_BUG("timer slot %u reused before its event fired", slot);
    bool live = ts->live && !s->stopping;
    uint64_t tag = ts->tag;
    void *arg = ts->arg;
    ts->live = false;
    ts->gen++;                          /* stale handles no longer match */
    ts->next_free = s->free_timer;
    s->free_timer = slot + 1;
    if (live)
        s->pol->on_timer(s, s->pstate, tag, arg);
}

/* ---------------------------------------------------------------- sampling */

static int64_t busy_upto(const struct sim *s, int e)
{
    const struct sim_exec *x = &s->execs[e];
    const struct sim_batch *b = s->xi[e].running;
    int64_t busy = x->busy_ns;
    if (b && b->t_start < s->now)
        busy += (s->now < b->t_finish ? s->now : b->t_finish) - b->t_start;
    return busy;
}

static void on_tick(struct sim *s)
{
    struct sim_window *w = &s->win;
    w->t0 = w->t1;
    w->t1 = s->now;
    double secs = (double)(w->t1 - w->t0) / 1e9;
    uint64_t off = 0, comp = 0, bad = 0, ontime = 0;
    for (int m = 0; m < s->nmodels; m++) {
        struct sim_model_stats *ms = &s->ms[m];
        uint64_t o = ms->c_offered - s->snap_offered[m];
        uint64_t c = ms->c_completed - s->snap_completed[m];
        uint64_t g = ms->c_ontime - s->snap_ontime[m];
        uint64_t b = ms->c_bad - s->snap_bad[m];
        off += o;
        comp += c;
        ontime += g;
        bad += b;
        sim_ts_add(s, "model_offered_rps", m, (double)o / secs);
        sim_ts_add(s, "model_ontime_rps", m, (double)g / secs);
        s->snap_offered[m] = ms->c_offered;
        s->snap_completed[m] = ms->c_completed;
        s->snap_ontime[m] = ms->c_ontime;
        s->snap_bad[m] = ms->c_bad;
    }
    int64_t busy = 0;
    int up = 0;
    for (int e = 0; e < s->nexecs; e++) {
        if (s->execs[e].state != SIM_EXEC_UP)
            continue;
        up++;
        int64_t bu = busy_upto(s, e);
        busy += bu - s->xi[e].busy_snap;
        s->xi[e].busy_snap = bu;
    }
    w->offered = off;
    w->completed = comp;
    w->bad = bad;
    uint64_t ended = ontime + bad;
    w->bad_rate = ended ? (double)bad / (double)ended : 0.0;
    w->execs_up = up;
    double cap = (double)up * (double)(w->t1 - w->t0);
    w->idle_frac = cap > 0 ? 1.0 - (double)busy / cap : 0.0;
    sim_ts_add(s, "offered_rps", -1, (double)off / secs);
    sim_ts_add(s, "ontime_rps", -1, (double)ontime / secs);
    sim_ts_add(s, "bad_rate", -1, w->bad_rate);
    sim_ts_add(s, "idle_frac", -1, w->idle_frac);
    sim_ts_add(s, "executors", -1, up);
    if (s->pol->on_tick)
        s->pol->on_tick(s, s->pstate);
    int64_t next = s->now + s->tick_ns;
    if (next <= s->duration)
        push(s, next, EV_TICK, 0, 0);
}

void sim_ts_add(struct sim *s, const char *series, int key, double value)
{
    if (sim_ts_push(&s->ts, s->now, series, key, value))
        SIM_BUG("out of memory growing the time series");
}

const struct sim_window *sim_last_window(const struct sim *s)
{
    return &s->win;
}

/* ---------------------------------------------------------------- building */

static int kind_index(struct sim *s, const char *kind)
{
    for (int k = 0; k < s->nkinds; k++)
        if (strcmp(s->kinds[k], kind) == 0)
            return k;
    if (s->nkinds == SIM_MAX_KINDS)
        return -1;
    s->kinds[s->nkinds] = kind;
    return s->nkinds++;
}

int sim_create(const struct sim_config *cfg, double scale, struct sim **out)
{
    return sim_create_with_policy(cfg, scale, policy_find(cfg->policy), out);
}

int sim_create_with_policy(const struct sim_config *cfg, double scale,
                           const struct policy_ops *pol, struct sim **out)
{
    int rc = SIM_ENOMEM;
    struct sim *s = calloc(1, sizeof *s);
    *out = NULL;
    if (!s)
        return SIM_ENOMEM;
    s->cfg = cfg;
    s->scale = scale;
    s->duration = (int64_t)llround(cfg->duration_s * 1e9);
    s->warmup = (int64_t)llround(cfg->warmup_s * 1e9);
    s->stop_at = s->duration + (int64_t)llround(cfg->drain_s * 1e9);
    s->tick_ns = (int64_t)llround(cfg->sample_period_s * 1e9);
    s->ctrl_ns = (int64_t)llround(cfg->ctrl_us * 1e3);
    s->data_ns = (int64_t)llround(cfg->data_us_per_request * 1e3);
    s->resp_ns = (int64_t)llround(cfg->resp_us * 1e3);
    sim_heap_init(&s->heap);
    pool_init(&s->req_pool, sizeof(struct sim_request), 4096);
    pool_init(&s->batch_pool, sizeof(struct sim_batch), 256);
    sim_ts_init(&s->ts);

    int nm = s->nmodels = cfg->nmodels;
    s->models = calloc((size_t)nm, sizeof *s->models);
    s->queues = calloc((size_t)nm, sizeof *s->queues);
    s->streams = calloc((size_t)nm, sizeof *s->streams);
    s->rr_frontend = calloc((size_t)nm, sizeof *s->rr_frontend);
    s->prof_of_kind = calloc((size_t)nm, sizeof *s->prof_of_kind);
    s->dyn_mb_per_req = calloc((size_t)nm, sizeof *s->dyn_mb_per_req);
    s->ms = calloc((size_t)nm, sizeof *s->ms);
    s->snap_offered = calloc((size_t)nm, sizeof(uint64_t));
    s->snap_completed = calloc((size_t)nm, sizeof(uint64_t));
    s->snap_ontime = calloc((size_t)nm, sizeof(uint64_t));
    s->snap_bad = calloc((size_t)nm, sizeof(uint64_t));
    double *shares = calloc((size_t)nm, sizeof *shares);
    if (!s->models || !s->queues || !s->streams || !s->rr_frontend || !s->prof_of_kind ||
        !s->dyn_mb_per_req || !s->ms || !s->snap_offered || !s->snap_completed ||
        !s->snap_ontime || !s->snap_bad || !shares)
        goto fail;

    /* executor kinds in use (one today: cluster.gpu_kind) */
    int k0 = kind_index(s, cfg->gpu_kind);
    s->lat = calloc((size_t)nm * SIM_MAX_KINDS, sizeof *s->lat);
    if (!s->lat)
        goto fail;
    wl_popularity_shares(cfg, shares);
    for (int m = 0; m < nm; m++) {
        const struct sim_model_cfg *mc = &cfg->models[m];
        struct sim_model *md = &s->models[m];
        md->id = m;
        md->cfg = mc;
        md->slo_ns = sim_ms_to_ns(mc->slo_ms);
        md->max_batch = mc->max_batch;
        md->rate_rps = cfg->rate_rps * shares[m];
        s->dyn_mb_per_req[m] = mc->dynamic_mb / mc->max_batch;
        for (int k = 0; k < s->nkinds; k++) {
            int pk = sim_model_cfg_kind(mc, s->kinds[k]);
            s->prof_of_kind[m][k] = pk;
            if (pk < 0)
                continue;
            int64_t *t = calloc((size_t)mc->max_batch + 2, sizeof *t);
            if (!t)
                goto fail;
            s->lat[m * SIM_MAX_KINDS + k] = t;
            for (int b = 1; b <= mc->max_batch + 1; b++)
                t[b] = sim_ms_to_ns(sim_profile_ms(&mc->prof[pk], b));
        }
        if ((rc = sim_model_stats_init(&s->ms[m], mc->max_batch)))
            goto fail;
        char name[SIM_NAME_MAX + 16];
        snprintf(name, sizeof name, "arrivals.%s", mc->name);
        rc = SIM_ENOMEM;
        if (wl_stream_init(&s->streams[m], cfg, name, md->rate_rps * scale))
            goto fail;
    }

    /* executors: every GPU loads every model before the run */
    s->nexecs = cfg->gpus;
    s->execs = calloc((size_t)s->nexecs, sizeof *s->execs);
    s->xi = calloc((size_t)s->nexecs, sizeof *s->xi);
    if (!s->execs || !s->xi)
        goto fail;
    double resident = 0;
    for (int m = 0; m < nm; m++)
        resident += cfg->models[m].weights_mb + cfg->models[m].static_mb;
    for (int e = 0; e < s->nexecs; e++) {
        struct sim_exec *x = &s->execs[e];
        x->id = e;
        x->kind = k0;
        x->state = SIM_EXEC_UP;
        x->memory_mb = cfg->gpu_memory_mb;
        x->resident_mb = resident;
        x->models_loaded = nm;
    }

    s->jrng = sim_rng_stream(cfg->seed, "network.jitter");
    s->pol = pol;
    if (!s->jrng || !s->pol)
        goto fail;
    char pname[SIM_NAME_MAX + 16];
    snprintf(pname, sizeof pname, "policy.%s", s->pol->name);
    s->prng = sim_rng_stream(cfg->seed, pname);
    s->pstate = calloc(1, s->pol->state_size ? s->pol->state_size : 1);
    if (!s->prng || !s->pstate)
        goto fail;
    if ((rc = s->pol->init(s, cfg->policy_params, s->pstate))) {
        s->pol->destroy ? s->pol->destroy(s->pstate) : (void)0;
        free(s->pstate);
        s->pstate = NULL;
        goto fail;
    }

    /* first arrivals and the first sampling tick */
    for (int m = 0; m < nm; m++) {
        int64_t t = wl_stream_next(&s->streams[m]);
        if (t < s->duration)
            push(s, t, EV_ARRIVAL, (uint32_t)m, 0);
    }
    if (s->tick_ns > 0 && s->tick_ns <= s->duration)
        push(s, s->tick_ns, EV_TICK, 0, 0);
    free(shares);
    *out = s;
    return 0;
fail:
    free(shares);
    sim_destroy(s);
    return rc ? rc : SIM_ENOMEM;
}

void sim_destroy(struct sim *s)
{
    if (!s)
        return;
    if (s->pstate) {
        if (s->pol && s->pol->destroy)
            s->pol->destroy(s->pstate);
        free(s->pstate);
    }
    for (int m = 0; m < s->nmodels; m++) {
        if (s->queues)
            free(s->queues[m].buf);
        if (s->streams)
            wl_stream_free(&s->streams[m]);
        if (s->ms)
            sim_model_stats_free(&s->ms[m]);
        if (s->lat)
            for (int k = 0; k < SIM_MAX_KINDS; k++)
                free(s->lat[m * SIM_MAX_KINDS + k]);
    }
    free(s->lat);
    free(s->models);
    free(s->queues);
    free(s->streams);
    free(s->rr_frontend);
    free(s->prof_of_kind);
    free(s->dyn_mb_per_req);
    free(s->ms);
    free(s->snap_offered);
    free(s->snap_completed);
    free(s->snap_ontime);
    free(s->snap_bad);
    free(s->execs);
    free(s->xi);
    free(s->timers);
    gsl_rng_free(s->prng);
    gsl_rng_free(s->jrng);
    pool_free(&s->req_pool);
    pool_free(&s->batch_pool);
    sim_heap_free(&s->heap);
    sim_ts_free(&s->ts);
    free(s);
}

void sim_set_observer(struct sim *s, const struct sim_observer *obs)
{
    s->obs = *obs;
}

/* ---------------------------------------------------------------- the loop */

static void begin_stop(struct sim *s)
{
    s->stopping = true;
    for (int m = 0; m < s->nmodels; m++)
        while (s->queues[m].len)
            sim_queue_drop_head(s, m);
}

int sim_run(struct sim *s)
{
    struct sim_event ev;
    while (sim_heap_pop(&s->heap, &ev) == 0) {
        if (ev.time < s->now)
            SIM_BUG("time went backwards: event at %lld, now %lld", (long long)ev.time,
                    (long long)s->now);
        if (!s->stopping && ev.time > s->stop_at) {
            s->now = s->stop_at;
            begin_stop(s);
        }
        s->now = ev.time;
        s->events++;
        if (s->obs.event)
            s->obs.event(s->obs.ctx, s, s->now);
        switch (ev.type) {
        case EV_ARRIVAL: on_arrival(s, (int)ev.idx); break;
        case EV_DELIVER: deliver(s, (struct sim_request *)(uintptr_t)ev.gen); break;
        case EV_BATCH_DONE: on_batch_done(s, (int)ev.idx); break;
        case EV_TIMER: on_timer(s, ev.idx, ev.gen); break;
        case EV_TICK: if (!s->stopping) on_tick(s); break;
        default: SIM_BUG("unknown event type %u", ev.type);
        }
    }
    if (!s->stopping)
        begin_stop(s);                  /* queued requests nobody will serve are dropped */
    if (s->arrived != s->ended || s->req_pool.live != 0)
        SIM_BUG("requests lost: arrived %llu, ended %llu, live %zu",
                (unsigned long long)s->arrived, (unsigned long long)s->ended, s->req_pool.live);
    return 0;
}

/* ---------------------------------------------------------------- read access */

int64_t sim_now(const struct sim *s) { return s->now; }
const struct sim_config *sim_cfg(const struct sim *s) { return s->cfg; }
double sim_load_scale(const struct sim *s) { return s->scale; }
int sim_model_count(const struct sim *s) { return s->nmodels; }
const struct sim_model *sim_model(const struct sim *s, int m) { return &s->models[m]; }
int sim_exec_count(const struct sim *s) { return s->nexecs; }
const struct sim_exec *sim_exec(const struct sim *s, int e) { return &s->execs[e]; }
int64_t sim_duration_ns(const struct sim *s) { return s->duration; }
gsl_rng *sim_policy_rng(struct sim *s) { return s->prng; }
int64_t sim_resp_delay_ns(const struct sim *s) { return s->resp_ns; }

int64_t sim_dispatch_delay_ns(const struct sim *s, int n)
{
    return s->ctrl_ns + s->data_ns * n;
}

int64_t sim_latency_ns(const struct sim *s, int m, int kind, int b)
{
    const struct sim_model *md = &s->models[m];
    const int64_t *t = s->lat[m * SIM_MAX_KINDS + kind];
    if (!t)
        SIM_BUG("model %s has no profile for executor kind %d", md->cfg->name, kind);
    if (b >= 1 && b <= md->max_batch + 1)
        return t[b];
    int pk = s->prof_of_kind[m][kind];
    return sim_ms_to_ns(sim_profile_ms(&md->cfg->prof[pk], b < 1 ? 1 : b));
}

int sim_queue_len(const struct sim *s, int m) { return s->queues[m].len; }

struct sim_request *sim_queue_at(const struct sim *s, int m, int i)
{
    const struct sim_mqueue *q = &s->queues[m];
    if (i < 0 || i >= q->len)
        SIM_BUG("queue index %d out of range (model %d, length %d)", i, m, q->len);
    return mq_at(q, i);
}
