/* sim — the event loop, the world, and the policy-facing API (see sim.h for the contract). */
#include "sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>

#include "sim_device.h"
#include "sim_err.h"
#include "sim_int.h"
#include "sim_rng.h"

enum { EV_ARRIVAL, EV_DELIVER, EV_BATCH_DONE, EV_TICK, EV_LOAD_DONE, EV_EXEC_UP, EV_BATCH_START };
_Static_assert(SIM_EV_JOB == EV_BATCH_START + 1 && SIM_EV_NB == SIM_EV_JOB + 1,
               "the jobs' and notebooks' event types follow sim.c's");

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

/* The queue of model m at `where` (SIM_CENTRAL or an executor); executors' queues are
 * allocated on first use. */
static struct sim_mqueue *queue_of(struct sim *s, int where, int m)
{
    if (where == SIM_CENTRAL)
        return &s->queues[m];
    if (where < 0 || where >= s->nexecs)
        SIM_BUG("queue of executor %d out of range (%d executors)", where, s->nexecs);
    struct sim_exec_int *xi = &s->xi[where];
    if (!xi->q && !(xi->q = calloc((size_t)s->nmodels, sizeof *xi->q)))
        SIM_BUG("out of memory allocating executor queues");
    return &xi->q[m];
}

static const struct sim_mqueue *queue_peek(const struct sim *s, int where, int m)
{
    static const struct sim_mqueue empty;
    if (where == SIM_CENTRAL)
        return &s->queues[m];
    if (where < 0 || where >= s->nexecs)
        SIM_BUG("queue of executor %d out of range (%d executors)", where, s->nexecs);
    return s->xi[where].q ? &s->xi[where].q[m] : &empty;
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

void sim_push_event(struct sim *s, int64_t t, uint32_t type, uint32_t idx, uint64_t gen)
{
    if (t <= s->duration)               /* later: its work stays unfinished, and the clock never
                                         * runs past the end for it */
        push(s, t, type, idx, gen);
}

static int64_t jitter(struct sim *s)
{
    const struct sim_world *c = s->cfg;
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
    return sim_ns(us * 1e3);
}

/* Execution (and load) time: the nominal time times a lognormal factor of mean 1 and
 * coefficient of variation cluster.exec_cv (no draw when the cv is 0). */
static int64_t exec_time(struct sim *s, int64_t nominal)
{
    if (!s->xrng)
        return nominal;
    return sim_ns((double)nominal * gsl_ran_lognormal(s->xrng, s->x_mu, s->x_sigma));
}

/* A batch of n of model m on executor e (of this kind) lasts its nominal time times this:
 * 1, or shift + X drawn from the executor's own stream "executors.service.<e>" (so a run
 * stays a function of its seed, and one executor's draws never shift another's). */
static double service_factor(struct sim *s, int e, int m, int kind, int n)
{
    const struct sim_svc_b *tab = s->svc[m * SIM_MAX_KINDS + kind];
    if (!tab)
        return 1;
    const struct sim_svc_b *v = &tab[n <= s->models[m].max_batch + 1 ? n : s->models[m].max_batch + 1];
    if (v->dist == SIM_SVC_NONE)
        return 1;
    struct sim_exec_int *xi = &s->xi[e];
    if (!xi->srng) {
        char name[48];
        snprintf(name, sizeof name, "executors.service.%d", e);
        if (!(xi->srng = sim_rng_stream(s->cfg->seed, name)))
            SIM_BUG("out of memory for executor %d's service-time stream", e);
    }
    double x = v->dist == SIM_SVC_LOGNORMAL ? gsl_ran_lognormal(xi->srng, v->p1, v->p2)
                                            : gsl_ran_gamma(xi->srng, v->p1, v->p2);
    return v->shift + x;
}

/* The time batch b runs on executor e at full speed: its work (the profile's mean, scaled by
 * request sizes), its service-time variation, the cluster's execution jitter. */
static int64_t batch_time(struct sim *s, int e, const struct sim_batch *b, int kind);
static int prepare_service(struct sim *s, int m, int k, int pk);

/* ---------------------------------------------------------------- requests */

static inline int req_path(const struct sim_request *r)
{
    return ((const struct sim_req_int *)r)->path;
}

/* Counts one outcome: cumulative always, after warm-up when `counted`. */
static void count_outcome(struct sim_outcomes *n, enum sim_outcome o, bool counted)
{
    n->c_completed += o != SIM_REQ_DROPPED;
    if (o == SIM_REQ_ON_TIME)
        n->c_ontime++;
    else
        n->c_bad++;
    if (counted) {
        switch (o) {
        case SIM_REQ_ON_TIME: n->on_time++; break;
        case SIM_REQ_LATE: n->late++; break;
        case SIM_REQ_DROPPED: n->dropped++; break;
        default: break;
        }
    }
}

static void count_offered(struct sim_outcomes *n, bool counted)
{
    n->c_offered++;
    n->offered += counted;
}

/* The outcome of r's current stage at its model: the request's own outcome, or for a stage
 * of an application that is not the last, whether the stage's response came by the
 * request's (end-to-end) deadline. Latency and queueing count from entering the stage. */
static void stage_outcome(struct sim *s, const struct sim_request *r, enum sim_outcome o,
                          int64_t t_done)
{
    struct sim_model_stats *ms = &s->ms[r->model];
    count_outcome(&ms->n, o, r->counted);
    if (r->counted && o != SIM_REQ_DROPPED) {
        sim_hist_add(&ms->latency, t_done - r->t_stage);
        sim_hist_add(&ms->queueing, r->t_start - r->t_stage);
    }
}

/* On time or late: a response at t against r's end-to-end deadline. */
static enum sim_outcome by_deadline(const struct sim_request *r, int64_t t)
{
    return t <= r->deadline ? SIM_REQ_ON_TIME : SIM_REQ_LATE;
}

static void source_push(struct sim *s, int i);

static void end_request(struct sim *s, struct sim_request *r, enum sim_outcome o, int64_t t_done)
{
    if (r->outcome != SIM_REQ_PENDING)
        SIM_BUG("request %llu ended twice (outcome %d, then %d)", (unsigned long long)r->id,
                r->outcome, o);
    r->outcome = (uint8_t)o;
    s->ended++;
    stage_outcome(s, r, o, t_done);
    int p = req_path(r);
    if (p >= 0) {
        struct sim_path_stats *ps = &s->ps[p];
        count_outcome(&ps->n, o, r->counted);
        if (r->counted && o != SIM_REQ_DROPPED)
            sim_hist_add(&ps->latency, t_done - r->t_arrival);
    }
    if (s->obs.request_end)
        s->obs.request_end(s->obs.ctx, s, r);
    if (s->pol->on_request_end && !s->stopping)
        s->pol->on_request_end(s, s->pstate, r, t_done);
    int src = ((struct sim_req_int *)r)->src;
    pool_put(&s->req_pool, r);
    if (src >= 0 && s->src[src].src.on_end) {   /* a closed-loop source: its next request */
        struct sim_src *q = &s->src[src];
        q->src.on_end(q->src.ctx, t_done);
        if (!q->pending && !q->ended)
            source_push(s, src);
    }
}

static void deliver(struct sim *s, struct sim_request *r)
{
    r->t_sched = s->now;
    if (s->stopping || (r->exec >= 0 && s->execs[r->exec].state != SIM_EXEC_UP)) {
        end_request(s, r, SIM_REQ_DROPPED, s->now);
        return;
    }
    mq_push(queue_of(s, r->exec, r->model), r);
    s->pol->on_request(s, s->pstate, r->model, r);
}

static int pick_frontend(struct sim *s, int src, int m)
{
    if (s->src[src].src.frontend >= 0)
        return s->src[src].src.frontend;
    int f = s->rr_frontend[m];
    if (s->cfg->frontend_split == SIM_SPLIT_RANDOM)
        return (int)gsl_rng_uniform_int(s->split_rng, (unsigned long)s->cfg->frontends);
    s->rr_frontend[m] = (f + 1) % s->cfg->frontends;
    return f;
}

/* Source i's next arrival into the heap, or none at its end (or past the arrivals window)
 * or on an error. */
/* Source i's next arrival into *a; false at its end, past the arrivals window, or on an
 * error (src_err). */
static bool source_next(struct sim *s, int i, struct sim_arrival *a)
{
    struct sim_src *q = &s->src[i];
    if (q->ended)
        return false;
    int rc = q->src.next(q->src.ctx, &a->t, &a->model, &a->size);
    if (rc < 0)
        s->src_err = rc;                /* sim_run reports it; the run is not written */
    if (rc == 2)
        return false;                   /* blocked until one of its requests ends */
    a->counted = false;
    q->ended = rc != 1 || a->t >= s->duration;
    return !q->ended;
}

static void source_push(struct sim *s, int i)
{
    struct sim_src *q = &s->src[i];
    int64_t after = q->pending ? q->cur.t : s->now;
    if (q->head < q->nahead)
        q->cur = q->ahead[q->head++];
    else if (!source_next(s, i, &q->cur)) {
        q->pending = false;
        return;
    }
    if (q->head == q->nahead)
        q->head = q->nahead = 0;
    if (q->cur.t < after)
        SIM_BUG("arrival source %d went backwards: %lld after %lld", i, (long long)q->cur.t,
                (long long)after);
    q->pending = true;                  /* folded: the event is the delivery to the scheduler */
    push(s, s->fold ? q->cur.t + s->ctrl_ns : q->cur.t, EV_ARRIVAL, (uint32_t)i, 0);
}

/* Folded arrivals: before tick `now` closes its window, every arrival before it is counted as
 * offered in it, also those whose (delivery) events come later: the pending one and any the
 * source yields before `now`, which wait in `ahead`. */
static void count_in_flight(struct sim *s)
{
    for (int i = 0; i < s->nsrc; i++) {
        struct sim_src *q = &s->src[i];
        if (!q->pending || q->cur.t >= s->now)
            continue;
        if (!q->cur.counted) {
            count_offered(&s->ms[q->cur.model].n, q->cur.t >= s->warmup);
            q->cur.counted = true;
        }
        for (int k = q->head; k < q->nahead; k++)
            if (!q->ahead[k].counted && q->ahead[k].t < s->now) {
                count_offered(&s->ms[q->ahead[k].model].n, q->ahead[k].t >= s->warmup);
                q->ahead[k].counted = true;
            }
        for (;;) {
            int64_t last = q->nahead > q->head ? q->ahead[q->nahead - 1].t : q->cur.t;
            struct sim_arrival a;
            if (last >= s->now || !source_next(s, i, &a))
                break;
            if (q->nahead == q->cap) {
                int cap = q->cap ? 2 * q->cap : 8;
                struct sim_arrival *b = realloc(q->ahead, (size_t)cap * sizeof *b);
                if (!b)
                    SIM_BUG("out of memory holding arrivals of source %d", i);
                q->ahead = b;
                q->cap = cap;
            }
            if (a.t < s->now) {
                count_offered(&s->ms[a.model].n, a.t >= s->warmup);
                a.counted = true;
            }
            q->ahead[q->nahead++] = a;
        }
    }
}

/* r enters its current model (r->model) at `at`: counted as offered there (unless a tick
 * did already), routed by the policy, and delivered at `at` plus the control delay (the input
 * too, straight to an executor): at once when that time is now (a folded arrival). */
static void enter_model(struct sim *s, struct sim_request *r, int64_t at, bool counted)
{
    int m = r->model;
    r->exec = SIM_CENTRAL;
    r->t_stage = at;
    if (!counted)
        count_offered(&s->ms[m].n, r->counted);
    if (r->stage == 0 && s->obs.request_arrive)
        s->obs.request_arrive(s->obs.ctx, s, r);
    else if (r->stage > 0 && s->obs.request_stage)
        s->obs.request_stage(s->obs.ctx, s, r);
    int to = s->pol->route ? s->pol->route(s, s->pstate, r) : SIM_CENTRAL;
    if (to == SIM_ROUTE_DROP) {
        end_request(s, r, SIM_REQ_DROPPED, s->now);
        return;
    }
    if (to != SIM_CENTRAL && (to < 0 || to >= s->nexecs))
        SIM_BUG("policy %s routed a request to executor %d (%d executors)", s->pol->name, to,
                s->nexecs);
    r->exec = to;
    /* to the scheduler: a control message; straight to an executor: the input too */
    int64_t d = at - s->now + s->ctrl_ns + (to >= 0 ? s->data_ns : 0) + jitter(s);
    if (d == 0)
        deliver(s, r);
    else
        push(s, s->now + d, EV_DELIVER, 0, (uint64_t)(uintptr_t)r);
}

static void on_arrival(struct sim *s, int src)
{
    long cap = s->cfg->max_live_requests > 0 ? s->cfg->max_live_requests : SIM_MAX_LIVE_REQUESTS;
    if ((long)s->req_pool.live >= cap) {        /* the run stops here (sim_run) */
        sim_err_set(SIM_EINVAL, "more than %ld requests in the system at once at t = %.3f s: "
                    "the offered load is far above what the cluster serves (lower "
                    "workload.rate_rps); the run is stopped and not written",
                    cap, (double)s->now / 1e9);
        s->src_err = SIM_EINVAL;
        return;
    }
    if (s->src[src].cur.t >= s->duration) {     /* after a run cut short (end_when_done) */
        s->src[src].pending = false;
        s->src[src].ended = true;
        return;
    }
    struct sim_req_int *ri = pool_get(&s->req_pool);
    struct sim_request *r = &ri->pub;
    int m = s->src[src].cur.model;
    int64_t t = s->src[src].cur.t;      /* now, or a control delay ago when folded */
    bool counted = s->src[src].cur.counted;
    int64_t slo = m >= 0 ? s->models[m].slo_ns : 0;
    ri->path = -1;
    ri->src = src;
    if (s->app) {                       /* the path is drawn now and kept from the policy */
        int p = ri->path = (int)gsl_ran_discrete(s->path_rng, s->path_table);
        m = s->app->paths[p].stages[0];
        slo = sim_ms_to_ns(s->app->paths[p].sla_ms);
        count_offered(&s->ps[p].n, s->now >= s->warmup);
    }
    r->id = s->next_req_id++;
    r->model = m;
    r->stage = 0;
    r->outcome = SIM_REQ_PENDING;
    r->frontend = pick_frontend(s, src, m);
    r->t_arrival = t;
    r->deadline = t + slo;
    r->size = s->src[src].cur.size;
    r->counted = t >= s->warmup;
    s->arrived++;

    source_push(s, src);
    enter_model(s, r, t, counted);
}

/* A stage of r's application path is done and its response leaves at t_done: the next stage
 * is revealed now, and r enters that model's queue with its arrival time and deadline. */
static bool next_stage(struct sim *s, struct sim_request *r, int64_t t_done)
{
    int p = req_path(r);
    if (p < 0 || r->stage + 1 >= s->app->paths[p].nstages)
        return false;
    stage_outcome(s, r, by_deadline(r, t_done), t_done);
    r->stage++;
    r->model = s->app->paths[p].stages[r->stage];
    enter_model(s, r, t_done, false);
    return true;
}

/* ---------------------------------------------------------------- executors */

static void exec_maybe_down(struct sim *s, int e);
static void ledger_series(struct sim *s);

/* Speeds are integers in billionths of full speed (SIM_SPEED_ONE): ns for `work` (ns at full
 * speed) at `speed`, rounded up, so never early; and the work done in `ns` at `speed`,
 * rounded down. */
#define SIM_SPEED_ONE 1000000000LL
static int64_t cpu_time(int64_t work, int64_t speed)
{
    __int128 t = ((__int128)work * SIM_SPEED_ONE + speed - 1) / speed;
    return t > SIM_NS_MAX ? SIM_NS_MAX : (int64_t)t;
}
static int64_t work_done(int64_t ns, int64_t speed)
{
    return (int64_t)((__int128)ns * speed / SIM_SPEED_ONE);
}

/* b's standalone time on executor kind `kind`: the profile's l(size), times the mean or the
 * largest request size in it for a model with sizes (sim_model_cfg.sized). */
static int64_t batch_work(const struct sim *s, const struct sim_batch *b, int kind)
{
    const int64_t *tab = s->lat[b->model * SIM_MAX_KINDS + kind];
    if (!tab)
        SIM_BUG("model %s has no profile for executor kind %d", s->models[b->model].cfg->name,
                kind);
    int64_t l = tab[b->size];
    int how = s->models[b->model].cfg->sized;
    if (how == SIM_SIZE_NONE)
        return l;
    double f = 0;
    for (const struct sim_request *r = b->reqs; r; r = r->next)
        f = how == SIM_SIZE_MAX ? (r->size > f ? r->size : f) : f + r->size;
    if (how == SIM_SIZE_MEAN)
        f /= b->size;
    return sim_ns((double)l * f);
}

static int64_t batch_time(struct sim *s, int e, const struct sim_batch *b, int kind)
{
    int64_t w = batch_work(s, b, kind);
    double f = service_factor(s, e, b->model, kind, b->size);
    return exec_time(s, f == 1 ? w : sim_ns((double)w * f));
}

/* b starts at max(start_at, ready, `after`, now): sets t_start, and rejects b if that is past
 * its window's `latest`. */
static int64_t start_time(const struct sim *s, struct sim_batch *b, int64_t after)
{
    int64_t t = b->start_at;
    if (b->t_ready > t)
        t = b->t_ready;
    if (after > t)
        t = after;
    if (s->now > t)
        t = s->now;
    b->t_start = t;
    if (b->status == SIM_BATCH_OK && b->latest > 0 && t > b->latest)
        b->status = SIM_BATCH_REJECTED_LATE;
    return t;
}

static void batch_start(struct sim *s, struct sim_batch *b)
{
    struct sim_exec *x = &s->execs[b->exec];
    int64_t t = start_time(s, b, x->last_finish);
    if (b->status == SIM_BATCH_OK) {
        b->t_finish = t + batch_time(s, b->exec, b, x->kind);
    } else {
        b->t_finish = t;                /* rejected when it would start */
        x->rejected++;
    }
    if (b->t_start < x->last_finish)
        SIM_BUG("executor %d would run two batches at once: start %lld < last finish %lld",
                x->id, (long long)b->t_start, (long long)x->last_finish);
    x->last_finish = b->t_finish;
    x->running = b;
    x->nrunning = 1;
    s->xi[b->exec].running = b;
    for (struct sim_request *r = b->reqs; r; r = r->next) {
        r->t_start = b->t_start;
        r->t_finish = b->t_finish;
    }
    if (s->obs.batch_start && b->status == SIM_BATCH_OK)
        s->obs.batch_start(s->obs.ctx, s, b);
    push(s, b->t_finish, EV_BATCH_DONE, (uint32_t)b->exec, b->serial);
}

/* ---- fluid executors: batches as work items re-timed when their speed changes
 *
 * CPU executors and executors with several lanes or a shared device (cluster.interference)
 * hold their batches in lanes (xi->run, admission order). A batch admitted to a lane starts at
 * max(start_at, ready, now); it joins the device after its host phase (sim_dev_host_ns), at
 * once when it runs alone on its lane (then `since` may lie ahead), else by an EV_BATCH_START
 * event, so that the co-runners are re-rated at the instant it arrives. retime() gives every
 * batch on the device its speed from the model and re-arms the completions that move: work
 * done is rounded down and time to finish up, in integer ns, so a batch is never early and a
 * run is the same on every machine. The one-lane GPU executor without interference never
 * comes here (batch_start above: its batch runs at full speed from start to finish). */

static void table_missing(struct sim *s, int e, const struct sim_batch *b)
{
    if (s->src_err)
        return;
    sim_err_set(SIM_EINVAL, "cluster.interference_table: no row for p %d, t %d (a batch of %s "
                "on executor %d)", b->p, b->t, s->models[b->model].cfg->name, e);
    s->src_err = SIM_EINVAL;            /* sim_run reports it; the run is not written */
}

/* Cores busy on CPU executor e, integrated (milli-core ns) up to min(now, duration) at the
 * current level; accrue keeps that as the new starting point. */
static int64_t cbusy_upto(const struct sim *s, int e)
{
    const struct sim_exec_int *xi = &s->xi[e];
    int64_t t = s->now < s->duration ? s->now : s->duration;
    return xi->cbusy_acc + (t > xi->cbusy_since ? (t - xi->cbusy_since) * xi->cbusy_milli : 0);
}

static void cbusy_accrue(struct sim *s, int e)
{
    struct sim_exec_int *xi = &s->xi[e];
    int64_t t = s->now < s->duration ? s->now : s->duration;
    xi->cbusy_acc = cbusy_upto(s, e);
    if (t > xi->cbusy_since)
        xi->cbusy_since = t;
}

/* The completion of b moves to fin: a new event, the old one going stale by serial. */
static void arm_done(struct sim *s, int e, struct sim_batch *b, int64_t fin)
{
    struct sim_exec *x = &s->execs[e];
    b->t_finish = fin;
    if (!s->xi[e].multi || fin > x->last_finish)
        x->last_finish = fin;
    for (struct sim_request *r = b->reqs; r; r = r->next)
        r->t_finish = fin;
    b->serial = ++s->batch_serial;
    push(s, fin, EV_BATCH_DONE, (uint32_t)e, b->serial);
}

static void retime(struct sim *s, int e)
{
    const struct sim_exec *x = &s->execs[e];
    struct sim_exec_int *xi = &s->xi[e];
    const struct sim_intf_cfg *ic = &s->cfg->intf;
    double D = 0, cores = x->cpu ? x->milli_cores / 1000.0 : 1;
    for (int i = 0; i < xi->nrun; i++)
        if (xi->run[i]->active)
            D += xi->run[i]->demand;
    if (x->cpu && xi->multi) {
        cbusy_accrue(s, e);
        double busy = ic->model == SIM_INTF_NONE ? (xi->nact ? cores : 0) : fmin(D, cores);
        xi->cbusy_milli = (int)llround(busy * 1000);
    }
    for (int i = 0; i < xi->nrun; i++) {
        struct sim_batch_int *bi = xi->run[i];
        struct sim_batch *b = &bi->pub;
        if (!bi->active || (bi->rate > 0 && b->t_finish <= s->now))
            continue;                   /* not on the device, or its completion is due now */
        bool missing = false;
        double f = sim_dev_factor(ic, x->cpu, cores, xi->nact, D, b->p, b->t, bi->rough,
                                  &missing);
        if (missing)
            table_missing(s, e, b);
        double r = floor((double)xi->speed / f);
        int64_t rate = r < 1 ? 1 : r > 1e15 ? (int64_t)1e15 : (int64_t)r;
        if (rate == bi->rate)
            continue;
        if (bi->rate > 0 && s->now > bi->since) {   /* the work done so far, rounded down */
            int64_t done = work_done(s->now - bi->since, bi->rate);
            bi->left = done < bi->left ? bi->left - done : 0;
            bi->since = s->now;
        }
        bi->rate = rate;
        int64_t fin = bi->since + cpu_time(bi->left, rate);
        if (fin != b->t_finish)
            arm_done(s, e, b, fin);
    }
}

/* b joins the device, progressing from `since` (now, or its start when alone on a lane). */
static void activate(struct sim *s, int e, struct sim_batch_int *bi, int64_t since)
{
    struct sim_exec_int *xi = &s->xi[e];
    bi->active = true;
    bi->since = since;
    if (xi->nact++ == 0)
        xi->busy_since = s->now;
    retime(s, e);
}

static void set_running(struct sim *s, int e)
{
    struct sim_exec_int *xi = &s->xi[e];
    xi->running = xi->nrun ? &xi->run[0]->pub : NULL;
    s->execs[e].running = xi->running;
    s->execs[e].nrunning = xi->nrun;
}

static void fluid_admit(struct sim *s, struct sim_batch *b)
{
    int e = b->exec;
    struct sim_exec *x = &s->execs[e];
    struct sim_exec_int *xi = &s->xi[e];
    struct sim_batch_int *bi = (struct sim_batch_int *)b;
    int64_t t = start_time(s, b, 0);  /* a lane is free: nothing before it on the lane */
    xi->run[xi->nrun++] = bi;
    set_running(s, e);
    bi->active = false;
    bi->rate = 0;
    bi->demand = sim_dev_demand(&s->cfg->intf, b->p, b->t);
    bi->rough = x->cpu ? sim_intf_roughness(&s->cfg->intf, b->k, b->p, b->t) : 1;
    for (struct sim_request *r = b->reqs; r; r = r->next)
        r->t_start = t;
    if (b->status != SIM_BATCH_OK) {
        x->rejected++;
        arm_done(s, e, b, t);           /* rejected when it would start */
        return;
    }
    bi->left = batch_time(s, e, b, x->kind);
    b->t_finish = -1;                   /* not armed yet */
    int64_t dev = t + sim_dev_host_ns(&s->cfg->intf, x->cpu, b->size);
    if (!xi->multi)
        activate(s, e, bi, dev);
    else if (dev > s->now)
        push(s, dev, EV_BATCH_START, (uint32_t)e, b->serial);
    else
        activate(s, e, bi, s->now);
    if (s->obs.batch_start)
        s->obs.batch_start(s->obs.ctx, s, b);
}

static void on_batch_start(struct sim *s, int e, uint64_t serial)
{
    struct sim_exec_int *xi = &s->xi[e];
    for (int i = 0; i < xi->nrun; i++)
        if (xi->run[i]->pub.serial == serial && !xi->run[i]->active) {
            activate(s, e, xi->run[i], s->now);
            return;
        }                               /* else preempted before it reached the device */
}

/* Takes lane i's batch off fluid executor e (done or preempted at now); the co-runners are
 * re-rated. */
static struct sim_batch *fluid_detach(struct sim *s, int e, int i)
{
    struct sim_exec *x = &s->execs[e];
    struct sim_exec_int *xi = &s->xi[e];
    struct sim_batch_int *bi = xi->run[i];
    memmove(xi->run + i, xi->run + i + 1, (size_t)(xi->nrun - i - 1) * sizeof *xi->run);
    xi->nrun--;
    set_running(s, e);
    if (bi->active) {
        bi->active = false;
        if (--xi->nact == 0 && xi->multi)
            x->busy_ns += s->now - xi->busy_since;
    }
    if (xi->multi)
        retime(s, e);
    return &bi->pub;
}

/* The head of executor e's pending FIFO, taken off it. */
static struct sim_batch *pend_pop(struct sim *s, int e)
{
    struct sim_exec_int *xi = &s->xi[e];
    struct sim_batch *nb = xi->pend_head;
    xi->pend_head = nb->next;
    if (!xi->pend_head)
        xi->pend_tail = NULL;
    nb->next = NULL;
    s->execs[e].pending--;
    return nb;
}

/* The executor's next pending batch, if any, starts (on a fluid executor: as many as there
 * are free lanes). */
static void start_next(struct sim *s, int e)
{
    struct sim_exec_int *xi = &s->xi[e];
    if (xi->fluid) {
        while (xi->pend_head && xi->nrun < s->execs[e].lanes)
            fluid_admit(s, pend_pop(s, e));
        return;
    }
    xi->running = NULL;
    s->execs[e].running = NULL;
    s->execs[e].nrunning = 0;
    if (xi->pend_head)
        batch_start(s, pend_pop(s, e));
}

static void record_prediction(struct sim_model_stats *ms, const struct sim_batch *b)
{
    int64_t err = (b->t_finish - b->t_start) - b->expected_ns;
    ms->pred_n++;
    ms->pred_err_sum_ns += (double)err;
    ms->pred_abs_sum_ns += fabs((double)err);
    if (err > 0) {
        ms->pred_over++;
        if (err > ms->pred_max_over_ns)
            ms->pred_max_over_ns = err;
    }
}

static void on_batch_done(struct sim *s, int e, uint64_t serial)
{
    struct sim_exec *x = &s->execs[e];
    struct sim_exec_int *xi = &s->xi[e];
    struct sim_batch *b = xi->running;
    int lane = 0;
    if (xi->fluid)
        for (lane = 0; lane < xi->nrun && xi->run[lane]->pub.serial != serial; lane++)
            ;
    if (xi->fluid ? lane == xi->nrun : !b || b->serial != serial)
        return;                         /* re-timed since, or preempted */
    if (xi->fluid)
        b = &xi->run[lane]->pub;
    if (b->t_finish != s->now)
        SIM_BUG("batch completion on executor %d at %lld, expected %lld", e, (long long)s->now,
                (long long)b->t_finish);
    int64_t ran = b->t_finish - b->t_start;
    if (xi->fluid)
        fluid_detach(s, e, lane);
    const struct sim_resid *rs = &xi->res[b->model];
    if (b->status == SIM_BATCH_OK && rs->version != b->version && rs->changed_at <= b->t_start) {
        b->status = SIM_BATCH_REJECTED_UNLOADED;   /* evicted or reloaded before it started */
        x->rejected++;
        x->wasted_ns += ran;
    }
    if (!xi->multi)                     /* (several lanes: the union, kept by fluid_detach) */
        x->busy_ns += ran;
    struct sim_model_stats *ms = &s->ms[b->model];
    bool ok = b->status == SIM_BATCH_OK, counted = false;
    if (ok) {
        x->batches++;
        x->requests += (uint64_t)b->size;
        s->batches_total++;
    }
    for (struct sim_request *r = b->reqs, *nx; r; r = nx) {
        nx = r->next;
        counted |= r->counted;
        if (!ok) {
            end_request(s, r, SIM_REQ_DROPPED, s->now);
            continue;
        }
        int64_t t_done = s->now + s->resp_ns + jitter(s);
        if (!next_stage(s, r, t_done))
            end_request(s, r, by_deadline(r, t_done), t_done);
    }
    b->reqs = NULL;
    if (counted && ok) {
        ms->batches++;
        ms->batched += (uint64_t)b->size;
        ms->batch_hist[b->size]++;
        if (b->expected_ns > 0)
            record_prediction(ms, b);
    }
    if (s->obs.batch_done)
        s->obs.batch_done(s->obs.ctx, s, b);
    start_next(s, e);
    if (!s->stopping && s->pol->on_batch_done)
        s->pol->on_batch_done(s, s->pstate, b);
    pool_put(&s->batch_pool, b);
    exec_maybe_down(s, e);
}

const struct sim_batch *sim_dispatch_ex(struct sim *s, const struct sim_dispatch_args *a)
{
    int e = a->exec, m = a->model, n = a->n;
    if (e < 0 || e >= s->nexecs || m < 0 || m >= s->nmodels)
        SIM_BUG("dispatch to executor %d / model %d out of range", e, m);
    if (a->from != SIM_CENTRAL && a->from != e)
        SIM_BUG("dispatch to executor %d of requests queued at executor %d", e, a->from);
    struct sim_exec *x = &s->execs[e];
    struct sim_mqueue *q = queue_of(s, a->from, m);
    const struct sim_model *md = &s->models[m];
    if (n < 1 || n > q->len || n > md->max_batch)
        SIM_BUG("dispatch of %d requests of model %s (queue %d, max batch %d)", n,
                md->cfg->name, q->len, md->max_batch);
    if (x->state != SIM_EXEC_UP && !(x->state == SIM_EXEC_DRAINING && a->from == e))
        SIM_BUG("dispatch to executor %d in state %d", e, x->state);
    if (x->cpu && m != x->model)
        SIM_BUG("dispatch of model %s to CPU executor %d, which serves %s", md->cfg->name, e,
                s->models[x->model].cfg->name);
    double need = x->resident_mb + s->dyn_mb_per_req[m] * n;
    if (x->memory_mb > 0 && need > x->memory_mb + 1e-9)
        SIM_BUG("batch of %d %s needs %.1f MB on executor %d with %.1f MB", n, md->cfg->name,
                need, e, x->memory_mb);

    struct sim_batch *b = pool_get(&s->batch_pool);
    const struct sim_resid *rs = &s->xi[e].res[m];
    b->model = m;
    b->exec = e;
    b->size = n;
    b->from = a->from;
    b->serial = ++s->batch_serial;
    b->tag = a->tag;
    b->version = rs->version;
    b->status = rs->state == SIM_RES_LOADED ? SIM_BATCH_OK : SIM_BATCH_REJECTED_UNLOADED;
    b->t_dispatch = s->now;
    b->t_ready = a->from == SIM_CENTRAL
                     ? s->now + (a->no_input ? s->ctrl_ns : sim_dispatch_delay_ns(s, n)) + jitter(s)
                     : s->now;
    b->start_at = a->start_at;
    b->latest = a->latest;
    b->expected_ns = a->expected_ns;
    if (a->p < 0 || a->t < 0 || a->k < 0)
        SIM_BUG("dispatch with %d inter-op and %d intra-op threads, k %d", a->p, a->t, a->k);
    b->p = a->p > 0 ? a->p : 1;
    b->t = a->t > 0 ? a->t : 1;
    b->k = a->k > 0 ? a->k : s->execs[a->exec].lanes;
    struct sim_request **tail = &b->reqs;
    for (int i = 0; i < n; i++) {
        struct sim_request *r = mq_pop(q);
        r->next = NULL;
        *tail = r;
        tail = &r->next;
    }
    struct sim_exec_int *xi = &s->xi[e];
    if (xi->fluid && xi->nrun < x->lanes && !xi->pend_head) {
        fluid_admit(s, b);
    } else if (!xi->fluid && !xi->running && !xi->pend_head) {
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

const struct sim_batch *sim_dispatch(struct sim *s, int e, int m, int n, int64_t start_at)
{
    struct sim_dispatch_args a = {.exec = e, .model = m, .n = n, .from = SIM_CENTRAL,
                                  .start_at = start_at};
    return sim_dispatch_ex(s, &a);
}

int sim_preempt(struct sim *s, int e)
{
    if (e < 0 || e >= s->nexecs)
        SIM_BUG("preempt on executor %d out of range", e);
    struct sim_exec *x = &s->execs[e];
    struct sim_exec_int *xi = &s->xi[e];
    struct sim_batch *b = xi->running;
    if (!b)
        return 0;
    if (s->obs.batch_preempted)
        s->obs.batch_preempted(s->obs.ctx, s, b);
    int64_t ran = b->t_start < s->now ? s->now - b->t_start : 0;
    if (xi->fluid)
        fluid_detach(s, e, 0);
    if (!xi->multi)
        x->busy_ns += ran;
    x->wasted_ns += ran;
    x->preemptions++;
    if (b->status != SIM_BATCH_OK)
        x->rejected--;                  /* it never reached its start: not a rejection */
    int n = 0;
    for (struct sim_request *r = b->reqs, *nx; r; r = nx) {
        nx = r->next;
        r->next = NULL;
        r->t_start = r->t_finish = 0;
        mq_push(queue_of(s, b->from, r->model), r);
        n++;
    }
    s->ms[b->model].preempted += (uint64_t)n;
    b->reqs = NULL;
    x->last_finish = s->now;
    pool_put(&s->batch_pool, b);
    start_next(s, e);
    return n;
}

void sim_queue_drop_head(struct sim *s, int m)
{
    struct sim_mqueue *q = &s->queues[m];
    if (q->len == 0)
        SIM_BUG("drop from the empty queue of model %d", m);
    end_request(s, mq_pop(q), SIM_REQ_DROPPED, s->now);
}

void sim_xqueue_drop_head(struct sim *s, int e, int m)
{
    struct sim_mqueue *q = queue_of(s, e, m);
    if (q->len == 0)
        SIM_BUG("drop from the empty queue of model %d at executor %d", m, e);
    end_request(s, mq_pop(q), SIM_REQ_DROPPED, s->now);
}

/* ---------------------------------------------------------------- residency */

static void set_resident(struct sim *s, int e, int m, enum sim_residency st)
{
    struct sim_resid *rs = &s->xi[e].res[m];
    rs->state = (uint8_t)st;
    rs->version++;
    rs->changed_at = s->now;
}

static int reserve(struct sim *s, int e, int m)
{
    struct sim_exec *x = &s->execs[e];
    if (s->xi[e].res[m].state != SIM_RES_NONE || x->pages_used + s->pages[m] > x->pages_total)
        return -1;
    x->pages_used += s->pages[m];
    x->resident_mb += s->cfg->models[m].weights_mb + s->cfg->models[m].static_mb;
    return 0;
}

static void unreserve(struct sim *s, int e, int m)
{
    struct sim_exec *x = &s->execs[e];
    x->pages_used -= s->pages[m];
    x->resident_mb -= s->cfg->models[m].weights_mb + s->cfg->models[m].static_mb;
}

int sim_preload(struct sim *s, int e, int m)
{
    if (s->events != 0 && s->execs[e].state != SIM_EXEC_STARTING)
        SIM_BUG("sim_preload of model %d on executor %d after the run started", m, e);
    if (reserve(s, e, m))
        return -1;
    set_resident(s, e, m, SIM_RES_LOADED);
    s->execs[e].models_loaded++;
    return 0;
}

int sim_load(struct sim *s, int e, int m, int64_t latest)
{
    if (e < 0 || e >= s->nexecs || m < 0 || m >= s->nmodels)
        SIM_BUG("load of model %d on executor %d out of range", m, e);
    struct sim_exec *x = &s->execs[e];
    if (reserve(s, e, m))
        return -1;
    s->xi[e].res[m].state = SIM_RES_LOADING;
    int64_t start = s->now + s->ctrl_ns;
    if (x->load_free_at > start)
        start = x->load_free_at;
    bool ok = !(latest > 0 && start > latest);
    int64_t end = ok ? start + exec_time(s, s->load_ns[m]) : start;
    x->load_free_at = end;
    x->load_busy_ns += end - start;
    x->loads_in_flight++;
    push(s, end, EV_LOAD_DONE, (uint32_t)e, ((uint64_t)m << 1) | ok);
    return 0;
}

static void on_load_done(struct sim *s, int e, int m, bool ok)
{
    struct sim_exec *x = &s->execs[e];
    x->loads_in_flight--;
    if (ok) {
        set_resident(s, e, m, SIM_RES_LOADED);
        x->load_events++;
        x->models_loaded++;
    } else {
        s->xi[e].res[m].state = SIM_RES_NONE;
        unreserve(s, e, m);
        x->rejected++;
    }
    if (!s->stopping && s->pol->on_load_done)
        s->pol->on_load_done(s, s->pstate, e, m, ok);
}

void sim_evict(struct sim *s, int e, int m)
{
    if (e < 0 || e >= s->nexecs || m < 0 || m >= s->nmodels ||
        s->xi[e].res[m].state != SIM_RES_LOADED)
        SIM_BUG("evict of model %d from executor %d where it is not loaded", m, e);
    set_resident(s, e, m, SIM_RES_NONE);
    unreserve(s, e, m);
    s->execs[e].models_loaded--;
    s->execs[e].evictions++;
}

/* ---------------------------------------------------------------- executor life */

static int cpu_speed(const struct sim *s, int n, int m, int milli);

/* A batch's full speed on e in billionths of its profile's: a GPU's 1; a CPU executor's its
 * cores' scaling, unless threads make the speed (a shared model: the profile is one thread). */
static int64_t exec_speed(const struct sim *s, int e)
{
    const struct sim_exec *x = &s->execs[e];
    if (!x->cpu || sim_dev_shared(&s->cfg->intf))
        return SIM_SPEED_ONE;
    return cpu_speed(s, x->node, x->model, x->milli_cores) * 1000LL;
}

/* Lanes and the fluid path (CPU executors; several lanes or a shared device). */
static void exec_lanes(struct sim *s, int e)
{
    struct sim_exec *x = &s->execs[e];
    struct sim_exec_int *xi = &s->xi[e];
    x->lanes = s->cfg->lanes > 1 ? s->cfg->lanes : 1;
    xi->multi = x->lanes > 1 || sim_dev_shared(&s->cfg->intf);
    xi->fluid = x->cpu || xi->multi;
    xi->speed = exec_speed(s, e);
    if (xi->fluid && !xi->run && !(xi->run = calloc((size_t)x->lanes, sizeof *xi->run)))
        SIM_BUG("out of memory for the lanes of executor %d", e);
}

static void exec_init(struct sim *s, int e, enum sim_exec_state st)
{
    struct sim_exec *x = &s->execs[e];
    x->id = e;
    x->kind = 0;                        /* cluster.gpu_kind; a CPU executor sets its own */
    x->node = 0;
    x->gpu = -1;
    x->cpu = false;
    x->model = -1;
    exec_lanes(s, e);
    x->state = st;
    x->added_at = s->now;
    x->memory_mb = s->cfg->gpu_memory_mb;
    double max_dyn = 0;
    for (int m = 0; m < s->nmodels; m++)
        if (s->cfg->models[m].dynamic_mb > max_dyn)
            max_dyn = s->cfg->models[m].dynamic_mb;
    /* the weights cache: memory less room for the largest batch's activations */
    x->pages_total = x->memory_mb > 0 ? (int)floor((x->memory_mb - max_dyn) / s->cfg->page_mb)
                                      : INT32_MAX / 2;
    if (!sim_policy_cold_start(s->pol, s->cfg->policy_params))
        for (int m = 0; m < s->nmodels; m++)
            if (sim_preload(s, e, m))
                SIM_BUG("model %d does not fit executor %d (config check missed it)", m, e);
}

static void exec_up(struct sim *s, int e)
{
    struct sim_exec *x = &s->execs[e];
    if (x->state != SIM_EXEC_STARTING)
        return;                         /* removed while starting */
    x->state = SIM_EXEC_UP;
    x->up_since = s->now;
    x->last_finish = s->now;
    if (!s->stopping && s->pol->on_exec_up)
        s->pol->on_exec_up(s, s->pstate, e);
}

int sim_exec_active(const struct sim *s)
{
    return s->nactive;
}

/* Room for one more executor slot (ids are never reused, so a long autoscaled run grows). */
static void exec_grow(struct sim *s)
{
    if (s->nexecs < s->max_execs)
        return;
    int cap = s->max_execs > 4 ? s->max_execs * 2 : 8;
    struct sim_exec *x = realloc(s->execs, (size_t)cap * sizeof *x);
    if (x)
        s->execs = x;
    struct sim_exec_int *xi = x ? realloc(s->xi, (size_t)cap * sizeof *xi) : NULL;
    if (!xi)
        SIM_BUG("out of memory growing the executors to %d", cap);
    s->xi = xi;
    memset(s->execs + s->max_execs, 0, (size_t)(cap - s->max_execs) * sizeof *x);
    memset(s->xi + s->max_execs, 0, (size_t)(cap - s->max_execs) * sizeof *xi);
    for (int e = s->max_execs; e < cap; e++)
        if (!(s->xi[e].res = calloc((size_t)s->nmodels, sizeof *s->xi[e].res)))
            SIM_BUG("out of memory growing the executors to %d", cap);
    s->max_execs = cap;
}

void sim_exec_bind(struct sim *s, int e, int g)
{
    struct sim_exec *x = &s->execs[e];
    if (sim_gpu_claim(s, g, SIM_HOLD_EXEC, e, 1000))
        SIM_BUG("executor %d cannot take GPU %d: %s", e, g, sim_err_msg());
    x->gpu = g;
    x->node = s->gpus[g].pub.node;
    x->state = SIM_EXEC_STARTING;
    x->added_at = s->now;               /* billed from here */
    push(s, s->now + s->xi[e].start_delay, EV_EXEC_UP, (uint32_t)e, 0);
}

int sim_exec_add_on(struct sim *s, int g, int64_t delay_ns)
{
    int limit = s->cfg->max_gpus > s->cfg->gpus ? s->cfg->max_gpus : s->cfg->gpus;
    if (sim_exec_active(s) >= limit)
        return -1;
    if (g >= 0 && (g >= s->ngpus || s->gpus[g].pub.milli != 0))
        return sim_err_set(SIM_EINVAL, "GPU %d is not a free GPU of the ledger", g), -1;
    if (g < 0)
        g = sim_ledger_first_free(s);
    exec_grow(s);
    int e = s->nexecs++;
    exec_init(s, e, SIM_EXEC_STARTING);
    s->nactive++;
    s->xi[e].start_delay = delay_ns > 0 ? delay_ns : 0;
    if (g >= 0) {
        sim_exec_bind(s, e, g);
        return e;
    }
    s->execs[e].state = SIM_EXEC_PENDING;   /* not serving, not billed: waits for a GPU */
    s->pend_execs[s->npend++] = e;
    if (!s->stopping && s->pol->on_exec_pending)
        s->pol->on_exec_pending(s, s->pstate, e);
    return e;
}

int sim_exec_add_after(struct sim *s, int64_t delay_ns)
{
    return sim_exec_add_on(s, -1, delay_ns);
}

int sim_exec_add(struct sim *s)
{
    return sim_exec_add_after(s, sim_s_to_ns(s->cfg->provision_s));
}

static void core_accrue(struct sim *s, int e);

/* Millionths of one core's speed for model m on node n at `milli` thousandths of cores. */
static int cpu_speed(const struct sim *s, int n, int m, int milli)
{
    const struct sim_node_cfg *nd = &s->cfg->nodes[n];
    if (nd->cpu_scaling == SIM_CPU_LINEAR)
        return milli * 1000;
    const struct sim_model_cfg *mc = s->models[m].cfg;
    char base[SIM_NAME_MAX], kind[SIM_NAME_MAX + 16];
    snprintf(base, sizeof base, "%s", nd->cpu_kind);
    char *at = strrchr(base, '@');
    if (at)
        *at = '\0';
    double u = milli / 1000.0, l1 = 0, lo_n = 0, lo_r = 0, hi_n = 0, hi_r = 0;
    for (int n2 = 1; n2 <= 256; n2++) {  /* rates 1/l(n) of the measured thread counts */
        snprintf(kind, sizeof kind, "%s@%dcore", base, n2);
        int k = sim_model_cfg_kind(mc, kind);
        if (k < 0)
            continue;
        double r = 1 / sim_profile_ms(&mc->prof[k], 1);
        if (n2 == 1)
            l1 = 1 / r;
        if (n2 <= u)
            lo_n = n2, lo_r = r;
        if (n2 >= u && !hi_n)
            hi_n = n2, hi_r = r;
    }
    double rate;                        /* requests per ms at u cores */
    if (u < 1 || !lo_n)
        rate = u / l1;
    else if (!hi_n || hi_n == lo_n)
        rate = lo_r;
    else
        rate = lo_r + (hi_r - lo_r) * (u - lo_n) / (hi_n - lo_n);
    long sp = (long)floor(1e6 * rate * l1 + 1e-9);   /* down: never faster than measured */
    return sp < 1 ? 1 : (int)sp;
}

static int node_cores(const struct sim *s, int n)
{
    return n < s->cfg->nnodes ? s->cfg->nodes[n].cores : 0;
}

int sim_node_milli_used(const struct sim *s, int n)
{
    if (n < 0 || n >= (s->cfg->nnodes > 0 ? s->cfg->nnodes : 1))
        SIM_BUG("node %d out of range", n);
    return s->node_milli[n];
}

int sim_exec_add_cpu(struct sim *s, int node, int model, int milli_cores)
{
    if (node < 0 || node >= (s->cfg->nnodes > 0 ? s->cfg->nnodes : 1) || model < 0 ||
        model >= s->nmodels)
        SIM_BUG("CPU executor for model %d on node %d out of range", model, node);
    const struct sim_node_cfg *nd = node < s->cfg->nnodes ? &s->cfg->nodes[node] : NULL;
    int kind = s->node_cpu_kind[node];
    if (kind < 0 || !nd)
        return sim_err_set(SIM_EINVAL, "node %d has no CPU cores (cluster.nodes[%d].cores)", node,
                           node), -1;
    if (s->prof_of_kind[model][kind] < 0)
        return sim_err_set(SIM_EINVAL, "model \"%s\" has no profile for CPU kind \"%s\" of "
                           "node \"%s\"", s->models[model].cfg->name, nd->cpu_kind, nd->name), -1;
    if (milli_cores < 1 || s->node_milli[node] + milli_cores > nd->cores * 1000)
        return sim_err_set(SIM_EINVAL, "node \"%s\": %.3f cores asked, %.3f of %d free",
                           nd->name, milli_cores / 1000.0,
                           nd->cores - s->node_milli[node] / 1000.0, nd->cores), -1;
    exec_grow(s);
    int e = s->nexecs++;
    struct sim_exec *x = &s->execs[e];
    x->id = e;
    x->kind = kind;
    x->node = node;
    x->cpu = true;
    x->model = model;
    x->milli_cores = milli_cores;
    exec_lanes(s, e);
    x->state = SIM_EXEC_UP;
    x->added_at = x->up_since = x->last_finish = s->now;
    x->memory_mb = 0;
    x->pages_total = INT32_MAX / 2;
    set_resident(s, e, model, SIM_RES_LOADED);  /* its model, in host memory */
    x->models_loaded = 1;
    s->xi[e].core_since = s->now;
    s->node_milli[node] += milli_cores;
    return e;
}

int sim_exec_set_cores(struct sim *s, int e, int milli_cores)
{
    if (e < 0 || e >= s->nexecs || !s->execs[e].cpu)
        SIM_BUG("set_cores on executor %d, which is not a CPU executor", e);
    struct sim_exec *x = &s->execs[e];
    struct sim_exec_int *xi = &s->xi[e];
    int old = x->milli_cores, cores = node_cores(s, x->node);
    if (x->state != SIM_EXEC_UP && x->state != SIM_EXEC_DRAINING)
        return sim_err_set(SIM_EINVAL, "executor %d is down", e), -1;
    if (milli_cores < 1 || s->node_milli[x->node] - old + milli_cores > cores * 1000)
        return sim_err_set(SIM_EINVAL, "node \"%s\": %.3f cores asked for executor %d, %.3f of "
                           "%d free", s->cfg->nodes[x->node].name, milli_cores / 1000.0, e,
                           cores - (s->node_milli[x->node] - old) / 1000.0, cores), -1;
    core_accrue(s, e);
    s->node_milli[x->node] += milli_cores - old;
    x->milli_cores = milli_cores;
    int64_t sp_old = xi->speed;
    xi->speed = exec_speed(s, e);
    if (xi->multi || xi->speed != sp_old)
        retime(s, e);                   /* running batches keep their work done */
    return 0;
}

/* The allocation's integral of CPU executor e up to min(now, duration), in milli-core ns. */
static void core_accrue(struct sim *s, int e)
{
    struct sim_exec_int *xi = &s->xi[e];
    int64_t t = s->now < s->duration ? s->now : s->duration;
    if (t > xi->core_since)
        xi->core_acc += (t - xi->core_since) * (int64_t)s->execs[e].milli_cores;
    xi->core_since = t > xi->core_since ? t : xi->core_since;
}

/* A CPU executor going DOWN gives its cores back to the node. */
static void cpu_release(struct sim *s, int e)
{
    core_accrue(s, e);
    s->node_milli[s->execs[e].node] -= s->execs[e].milli_cores;
    s->execs[e].milli_cores = 0;
}

/* A GPU executor that went down (or was cancelled while starting) frees its GPU. */
static void exec_release_gpu(struct sim *s, int e)
{
    int g = s->execs[e].gpu;
    if (g >= 0) {
        s->execs[e].gpu = -1;
        sim_gpu_release(s, g, SIM_HOLD_EXEC, e);
    }
}

static void exec_maybe_down(struct sim *s, int e)
{
    struct sim_exec *x = &s->execs[e];
    struct sim_exec_int *xi = &s->xi[e];
    if (x->state != SIM_EXEC_DRAINING || xi->running || xi->pend_head)
        return;
    x->state = SIM_EXEC_DOWN;
    x->down_at = s->now;
    if (x->cpu)
        cpu_release(s, e);
    exec_release_gpu(s, e);
    if (xi->q)
        for (int m = 0; m < s->nmodels; m++)
            while (xi->q[m].len)
                sim_xqueue_drop_head(s, e, m);
}

void sim_exec_remove(struct sim *s, int e)
{
    if (e < 0 || e >= s->nexecs)
        SIM_BUG("remove of executor %d out of range", e);
    struct sim_exec *x = &s->execs[e];
    if (x->state == SIM_EXEC_PENDING) {         /* cancelled before it had a GPU: no cost */
        sim_ledger_unpend(s, e);
        x->state = SIM_EXEC_DOWN;
        x->up_since = x->down_at = x->added_at = s->now;
    } else if (x->state == SIM_EXEC_STARTING) {
        x->state = SIM_EXEC_DOWN;
        x->up_since = x->down_at = s->now;
        exec_release_gpu(s, e);
    } else if (x->state == SIM_EXEC_UP) {
        x->state = SIM_EXEC_DRAINING;
        exec_maybe_down(s, e);
    } else {
        return;
    }
    if (!x->cpu)
        s->nactive--;
    if (s->pol->on_exec_remove)
        s->pol->on_exec_remove(s, s->pstate, e);
}

/* ---------------------------------------------------------------- sampling */

static int64_t busy_upto(const struct sim *s, int e)
{
    const struct sim_exec *x = &s->execs[e];
    const struct sim_exec_int *xi = &s->xi[e];
    if (xi->multi)
        return x->busy_ns + (xi->nact ? s->now - xi->busy_since : 0);
    const struct sim_batch *b = xi->running;
    int64_t busy = x->busy_ns;
    if (b && b->t_start < s->now)
        busy += (s->now < b->t_finish ? s->now : b->t_finish) - b->t_start;
    return busy;
}

int64_t sim_exec_busy_ns(const struct sim *s, int e)
{
    if (e < 0 || e >= s->nexecs)
        SIM_BUG("executor %d out of range", e);
    return busy_upto(s, e);
}

double sim_exec_busy_core_s(const struct sim *s, int e)
{
    if (e < 0 || e >= s->nexecs)
        SIM_BUG("executor %d out of range", e);
    return (double)cbusy_upto(s, e) / 1e12;
}

/* The cumulative counts since the last tick, added into `sum`; snap catches up. */
static struct sim_outcomes window_delta(struct sim_outcomes *sum, const struct sim_outcomes *n,
                                        struct sim_outcomes *snap)
{
    struct sim_outcomes d = {.c_offered = n->c_offered - snap->c_offered,
                             .c_completed = n->c_completed - snap->c_completed,
                             .c_ontime = n->c_ontime - snap->c_ontime,
                             .c_bad = n->c_bad - snap->c_bad};
    sum->c_offered += d.c_offered;
    sum->c_completed += d.c_completed;
    sum->c_ontime += d.c_ontime;
    sum->c_bad += d.c_bad;
    *snap = *n;
    return d;
}

static void on_tick(struct sim *s)
{
    struct sim_window *w = &s->win;
    w->t0 = w->t1;
    w->t1 = s->now;
    double secs = (double)(w->t1 - w->t0) / 1e9;
    /* the window's rates: an application's requests (its paths), else the models' */
    struct sim_outcomes models = {0}, paths = {0};
    if (s->fold)
        count_in_flight(s);
    for (int m = 0; m < s->nmodels; m++) {
        struct sim_outcomes d = window_delta(&models, &s->ms[m].n, &s->ms[m].snap);
        sim_ts_add(s, "model_offered_rps", m, (double)d.c_offered / secs);
        sim_ts_add(s, "model_ontime_rps", m, (double)d.c_ontime / secs);
    }
    for (int p = 0; s->app && p < s->app->npaths; p++) {
        struct sim_outcomes d = window_delta(&paths, &s->ps[p].n, &s->ps[p].snap);
        uint64_t ended = d.c_ontime + d.c_bad;
        sim_ts_add(s, "path_offered_rps", p, (double)d.c_offered / secs);
        sim_ts_add(s, "path_bad_rate", p, ended ? (double)d.c_bad / (double)ended : 0.0);
    }
    const struct sim_outcomes *t = s->app ? &paths : &models;
    uint64_t off = t->c_offered, comp = t->c_completed, ontime = t->c_ontime, bad = t->c_bad;
    int64_t busy = 0, cbusy = 0;
    int up = 0, ncpu = 0;
    for (int e = 0; e < s->nexecs; e++) {     /* GPUs: CPU executors are counted in cores */
        if (s->execs[e].cpu && s->xi[e].multi) {   /* (busy cores are tracked there) */
            int64_t cb = cbusy_upto(s, e);
            cbusy += cb - s->xi[e].cbusy_snap;
            s->xi[e].cbusy_snap = cb;
            ncpu++;
        }
        if (s->execs[e].cpu ||
            (s->execs[e].state != SIM_EXEC_UP && s->execs[e].state != SIM_EXEC_DRAINING))
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
    if (ncpu && w->t1 > w->t0)                /* mean cores busy on those CPU executors */
        sim_ts_add(s, "cores_busy", -1, (double)cbusy / 1000.0 / (double)(w->t1 - w->t0));
    if (s->pol->on_tick)
        s->pol->on_tick(s, s->pstate);
    if (s->cfg->autoscaler)
        s->cfg->autoscaler->step(s, s->cfg->autoscale_params, s->astate);
    int billed = 0;                     /* up, starting or draining */
    for (int e = 0; e < s->nexecs; e++)
        billed += !s->execs[e].cpu && s->execs[e].state != SIM_EXEC_DOWN &&
                  s->execs[e].state != SIM_EXEC_PENDING;
    sim_ts_add(s, "gpus_billed", -1, billed);
    ledger_series(s);
    if (s->clients) {                   /* closed-loop clients active now */
        int n = 0;
        for (int i = 0; i < s->nsrc; i++)
            n += s->src[i].src.active ? s->src[i].src.active(s->src[i].src.ctx, s->now) : 0;
        sim_ts_add(s, "clients", -1, n);
    }
    int64_t next = s->now + s->tick_ns;
    if (next <= s->duration)
        push(s, next, EV_TICK, 0, 0);
}

/* Where the ledger matters (training jobs, or GPUs beyond the executors' limit): the GPUs
 * by use (inference executors, training workers, shares, idle), pending executors, and each
 * placed job's workers (keyed by job). */
static void ledger_series(struct sim *s)
{
    int limit = s->cfg->max_gpus > s->cfg->gpus ? s->cfg->max_gpus : s->cfg->gpus;
    if (s->njobs == 0 && s->ngpus <= limit)
        return;
    int64_t use[3] = {0, 0, 0};
    for (int g = 0; g < s->ngpus; g++)
        for (int c = 0; c < s->gpus[g].pub.nclaims; c++)
            use[s->gpus[g].claims[c].kind] += s->gpus[g].claims[c].milli;
    sim_ts_add(s, "gpus.inference", -1, (double)use[SIM_HOLD_EXEC] / 1000);
    sim_ts_add(s, "gpus.training", -1, (double)use[SIM_HOLD_WORKER] / 1000);
    sim_ts_add(s, "gpus.modeling", -1, (double)use[SIM_HOLD_SHARE] / 1000);
    sim_ts_add(s, "gpus.idle", -1,
               s->ngpus - (double)(use[0] + use[1] + use[2]) / 1000);
    sim_ts_add(s, "gpus.pending", -1, s->npend);
    for (int j = 0; j < s->njobs; j++) {
        const struct sim_job *p = &s->jobs[j].pub;
        if (p->state != SIM_JOB_FUTURE && p->state != SIM_JOB_QUEUED && p->state != SIM_JOB_DONE)
            sim_ts_add(s, "job.workers", j, p->nworkers);
    }
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

static void close_sources(struct sim_source *src, int n)
{
    for (int i = 0; i < n; i++)
        if (src[i].close)
            src[i].close(src[i].ctx);
}

int sim_create(const struct sim_world *cfg, double scale, const struct policy_ops *pol,
               struct sim_source *src, int nsrc, struct sim **out)
{
    int rc = SIM_ENOMEM;
    struct sim *s = calloc(1, sizeof *s);
    *out = NULL;
    if (!s || !(s->src = calloc((size_t)(nsrc ? nsrc : 1), sizeof *s->src))) {
        close_sources(src, nsrc);
        free(s);
        return SIM_ENOMEM;
    }
    for (int i = 0; i < nsrc; i++) {
        s->src[i].src = src[i];
        s->clients |= src[i].active != NULL;
    }
    s->nsrc = nsrc;
    s->cfg = cfg;
    s->scale = scale;
    s->pol = pol ? pol : cfg->policy;
    s->duration = sim_s_to_ns(cfg->duration_s);
    s->warmup = sim_s_to_ns(cfg->warmup_s);
    s->stop_at = s->duration + sim_s_to_ns(cfg->drain_s);
    s->tick_ns = sim_s_to_ns(cfg->sample_period_s);
    s->ctrl_ns = sim_ns(cfg->ctrl_us * 1e3);
    s->data_ns = sim_ns(cfg->data_us_per_request * 1e3);
    s->resp_ns = sim_ns(cfg->resp_us * 1e3);
    sim_heap_init(&s->heap);
    pool_init(&s->req_pool, sizeof(struct sim_req_int), 4096);
    pool_init(&s->batch_pool, sizeof(struct sim_batch_int), 256);
    sim_ts_init(&s->ts);

    int nm = s->nmodels = cfg->nmodels;
    s->models = calloc((size_t)nm, sizeof *s->models);
    s->queues = calloc((size_t)nm, sizeof *s->queues);
    s->rr_frontend = calloc((size_t)nm, sizeof *s->rr_frontend);
    s->prof_of_kind = calloc((size_t)nm, sizeof *s->prof_of_kind);
    s->dyn_mb_per_req = calloc((size_t)nm, sizeof *s->dyn_mb_per_req);
    s->pages = calloc((size_t)nm, sizeof *s->pages);
    s->load_ns = calloc((size_t)nm, sizeof *s->load_ns);
    s->ms = calloc((size_t)nm, sizeof *s->ms);
    if (!s->models || !s->queues || !s->rr_frontend || !s->prof_of_kind || !s->dyn_mb_per_req ||
        !s->pages || !s->load_ns || !s->ms)
        goto fail;

    /* executor kinds in use: the GPUs' (cluster.gpu_kind), then the nodes' CPU kinds */
    kind_index(s, cfg->gpu_kind);
    int nn = cfg->nnodes > 0 ? cfg->nnodes : 1;
    s->node_milli = calloc((size_t)nn, sizeof *s->node_milli);
    s->node_cpu_kind = calloc((size_t)nn, sizeof *s->node_cpu_kind);
    if (!s->node_milli || !s->node_cpu_kind)
        goto fail;
    for (int n = 0; n < nn; n++)
        s->node_cpu_kind[n] = n < cfg->nnodes && cfg->nodes[n].cores > 0
                                  ? kind_index(s, cfg->nodes[n].cpu_kind) : -1;
    s->lat = calloc((size_t)nm * SIM_MAX_KINDS, sizeof *s->lat);
    s->plat = calloc((size_t)nm * SIM_MAX_KINDS, sizeof *s->plat);
    s->svc = calloc((size_t)nm * SIM_MAX_KINDS, sizeof *s->svc);
    if (!s->lat || !s->plat || !s->svc)
        goto fail;
    for (int m = 0; m < nm; m++) {
        const struct sim_model_cfg *mc = &cfg->models[m];
        struct sim_model *md = &s->models[m];
        md->id = m;
        md->cfg = mc;
        md->slo_ns = sim_ms_to_ns(mc->slo_ms);
        md->max_batch = mc->max_batch;
        md->rate_rps = cfg->model_rps[m];
        s->dyn_mb_per_req[m] = mc->dynamic_mb / mc->max_batch;
        s->pages[m] = (int)ceil((mc->weights_mb + mc->static_mb) / cfg->page_mb - 1e-9);
        /* MB / (GB/s) = ms */
        s->load_ns[m] = mc->load_ms > 0 ? sim_ms_to_ns(mc->load_ms)
                                        : sim_ms_to_ns(mc->weights_mb / cfg->load_gb_s);
        for (int k = 0; k < s->nkinds; k++) {
            int pk = sim_model_cfg_kind(mc, s->kinds[k]);
            s->prof_of_kind[m][k] = pk;
            if (pk < 0)
                continue;
            int64_t *t = calloc((size_t)mc->max_batch + 2, sizeof *t);
            if (!t)
                goto fail;
            s->lat[m * SIM_MAX_KINDS + k] = s->plat[m * SIM_MAX_KINDS + k] = t;
            for (int b = 1; b <= mc->max_batch + 1; b++)
                t[b] = sim_ms_to_ns(sim_profile_ms(&mc->prof[pk], b));
            if (prepare_service(s, m, k, pk))
                goto fail;
        }
        if ((rc = sim_model_stats_init(&s->ms[m], mc->max_batch)))
            goto fail;
        rc = SIM_ENOMEM;
    }
    if ((s->app = cfg->app)) {
        int np = s->app->npaths;
        double prob[SIM_APP_MAX_PATHS];
        if (!(s->ps = calloc((size_t)np, sizeof *s->ps)))
            goto fail;
        for (int p = 0; p < np; p++) {
            prob[p] = s->app->paths[p].prob;
            sim_hist_reset(&s->ps[p].latency);
        }
        if (!(s->path_rng = sim_rng_stream(cfg->seed, "application.paths")) ||
            !(s->path_table = gsl_ran_discrete_preproc((size_t)np, prob)))
            goto fail;
    }
    s->jrng = sim_rng_stream(cfg->seed, "network.jitter");
    s->split_rng = sim_rng_stream(cfg->seed, "frontends.split");
    if (!s->jrng || !s->split_rng || !s->pol)
        goto fail;
    if (cfg->exec_cv > 0) {
        if (!(s->xrng = sim_rng_stream(cfg->seed, "executors.jitter")))
            goto fail;
        s->x_sigma = sqrt(log1p(cfg->exec_cv * cfg->exec_cv));
        s->x_mu = -s->x_sigma * s->x_sigma / 2;
    }

    /* executors: capacity for the largest pool; the first cluster.gpus are up at time 0 */
    s->max_execs = cfg->max_gpus > cfg->gpus ? cfg->max_gpus : cfg->gpus;
    s->execs = calloc((size_t)s->max_execs, sizeof *s->execs);
    s->xi = calloc((size_t)s->max_execs, sizeof *s->xi);
    if (!s->execs || !s->xi)
        goto fail;
    for (int e = 0; e < s->max_execs; e++)
        if (!(s->xi[e].res = calloc((size_t)nm, sizeof *s->xi[e].res)))
            goto fail;
    if (sim_ledger_init(s))
        goto fail;
    s->nexecs = s->nactive = cfg->gpus;
    for (int e = 0; e < s->nexecs; e++) {   /* on the nodes' GPUs in order */
        exec_init(s, e, SIM_EXEC_UP);
        int g = sim_ledger_first_free(s);
        if (g < 0 || sim_gpu_claim(s, g, SIM_HOLD_EXEC, e, 1000))
            SIM_BUG("no GPU in the ledger for executor %d", e);
        s->execs[e].gpu = g;
        s->execs[e].node = s->gpus[g].pub.node;
    }
    if (sim_jobs_init(s) || sim_shares_init(s))  /* job arrivals are events from here */
        goto fail;

    char pname[SIM_NAME_MAX + 16];
    snprintf(pname, sizeof pname, "policy.%s", s->pol->name);
    s->prng = sim_rng_stream(cfg->seed, pname);
    s->pstate = calloc(1, s->pol->state_size ? s->pol->state_size : 1);
    if (!s->prng || !s->pstate)
        goto fail;
    if (cfg->autoscaler &&
        !(s->astate = calloc(1, cfg->autoscaler->state_size ? cfg->autoscaler->state_size : 1)))
        goto fail;
    if ((rc = s->pol->init(s, cfg->policy_params, s->pstate))) {
        s->pol->destroy ? s->pol->destroy(s->pstate) : (void)0;
        free(s->pstate);
        s->pstate = NULL;
        goto fail;
    }
    if (s->njobs && !s->pol->on_job_arrive) {   /* jobs nobody places would silently queue */
        rc = sim_err_set(SIM_EINVAL, "jobs: policy \"%s\" does not place training jobs "
                         "(policies that do: dynamoml)", s->pol->name);
        goto fail;
    }
    for (int i = 0; i < s->nnb; i++)     /* notebooks nobody places would silently idle */
        if (s->nb[i].pub.gpu < 0) {
            rc = sim_err_set(SIM_EINVAL, "notebooks: policy \"%s\" did not place notebook %d "
                             "(policies that place notebooks: dynamoml)", s->pol->name, i);
            goto fail;
        }

    s->fold = !cfg->app && !s->pol->route && cfg->jitter == SIM_JIT_NONE && s->ctrl_ns > 0;
    /* first arrivals and the first sampling tick */
    for (int i = 0; i < s->nsrc; i++) {
        source_push(s, i);
        if (s->src_err) {
            rc = s->src_err;
            goto fail;
        }
    }
    if (s->tick_ns > 0 && s->tick_ns <= s->duration)
        push(s, s->tick_ns, EV_TICK, 0, 0);
    *out = s;
    return 0;
fail:
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
        if (s->ms)
            sim_model_stats_free(&s->ms[m]);
        for (int k = 0; k < SIM_MAX_KINDS; k++) {
            size_t i = (size_t)m * SIM_MAX_KINDS + (size_t)k;
            if (s->plat && s->lat && s->plat[i] != s->lat[i])
                free(s->plat[i]);
            if (s->lat)
                free(s->lat[i]);
            if (s->svc)
                free(s->svc[i]);
        }
    }
    for (int i = 0; i < s->nsrc; i++) {
        close_sources(&s->src[i].src, 1);
        free(s->src[i].ahead);
    }
    free(s->src);
    free(s->astate);
    sim_ledger_free(s);
    sim_jobs_free(s);
    sim_shares_free(s);
    for (int e = 0; e < s->max_execs && s->xi; e++) {
        if (s->xi[e].q)
            for (int m = 0; m < s->nmodels; m++)
                free(s->xi[e].q[m].buf);
        free(s->xi[e].q);
        free(s->xi[e].res);
        free(s->xi[e].run);
        gsl_rng_free(s->xi[e].srng);
    }
    free(s->lat);
    free(s->plat);
    free(s->svc);
    free(s->models);
    free(s->queues);
    free(s->rr_frontend);
    free(s->prof_of_kind);
    free(s->node_milli);
    free(s->node_cpu_kind);
    free(s->dyn_mb_per_req);
    free(s->pages);
    free(s->load_ns);
    free(s->ms);
    free(s->execs);
    free(s->xi);
    sim_timer_free(s);
    gsl_rng_free(s->prng);
    for (int i = 0; i < s->npstreams; i++)
        gsl_rng_free(s->pstreams[i].rng);
    gsl_rng_free(s->jrng);
    gsl_rng_free(s->split_rng);
    gsl_rng_free(s->path_rng);
    if (s->path_table)
        gsl_ran_discrete_free(s->path_table);
    free(s->ps);
    gsl_rng_free(s->xrng);
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

/* Model m's service-time variation on executor kind k (its profile pk), prepared per batch
 * size; and, with world.plan_quantile, the table policies plan with (sim_latency_ns). */
static int prepare_service(struct sim *s, int m, int k, int pk)
{
    const struct sim_service *v = &s->cfg->models[m].prof[pk].svc;
    int maxb = s->cfg->models[m].max_batch, i = m * SIM_MAX_KINDS + k;
    if (v->dist == SIM_SVC_NONE)
        return 0;
    struct sim_svc_b *tab = calloc((size_t)maxb + 2, sizeof *tab);
    if (!tab)
        return SIM_ENOMEM;
    s->svc[i] = tab;
    for (int b = 1; b <= maxb + 1; b++) {
        double cv, f;
        sim_service_at(v, b, &cv, &f);
        if (cv <= 0)
            continue;                   /* this batch size does not vary */
        tab[b] = (struct sim_svc_b){v->dist, f, 0, 0};
        sim_service_xparams(v->dist, cv, f, &tab[b].p1, &tab[b].p2);
    }
    double q = s->cfg->plan_quantile;
    if (q > 0) {
        int64_t *p = calloc((size_t)maxb + 2, sizeof *p);
        if (!p)
            return SIM_ENOMEM;
        s->plat[i] = p;
        for (int b = 1; b <= maxb + 1; b++)
            p[b] = sim_ns((double)s->lat[i][b] * sim_service_quantile(v, b, q));
    }
    return 0;
}

/* ---------------------------------------------------------------- the loop */

static void begin_stop(struct sim *s)
{
    s->stopping = true;
    for (int m = 0; m < s->nmodels; m++) {
        while (s->queues[m].len)
            sim_queue_drop_head(s, m);
        for (int e = 0; e < s->nexecs; e++)
            while (s->xi[e].q && s->xi[e].q[m].len)
                sim_xqueue_drop_head(s, e, m);
    }
}

int sim_run(struct sim *s)
{
    struct sim_event ev;
    for (;;) {
        if (s->src_err)                 /* a source failed or the system overflowed: stop */
            break;
        /* the least (time, seq) of the event heap's top and the earliest timer */
        const struct sim_event *top = sim_heap_peek(&s->heap);
        const struct sim_timer_slot *tm = sim_timer_next(s);
        bool timer = tm && (!top || tm->at < top->time || (tm->at == top->time && tm->seq < top->seq));
        if (!timer && !top)
            break;
        int64_t t = timer ? tm->at : top->time;
        if (t < s->now)
            SIM_BUG("time went backwards: event at %lld, now %lld", (long long)t,
                    (long long)s->now);
        if (!s->stopping && t > s->stop_at) {
            s->now = s->stop_at;
            begin_stop(s);
        }
        s->now = t;
        s->events++;
        if (s->cfg->max_events && s->events > s->cfg->max_events) {
            s->src_err = sim_err_set(SIM_EINVAL, "the run exceeded its budget of %llu events "
                                     "at t = %.3f s: stopped and not written",
                                     (unsigned long long)s->cfg->max_events, (double)t / 1e9);
            break;
        }
        if (s->obs.event)
            s->obs.event(s->obs.ctx, s, s->now);
        if (timer) {
            sim_timer_fire(s, tm);      /* begin_stop and observers arm no timers */
            continue;
        }
        sim_heap_pop(&s->heap, &ev);
        switch (ev.type) {
        case EV_ARRIVAL: on_arrival(s, (int)ev.idx); break;
        case EV_DELIVER: deliver(s, (struct sim_request *)(uintptr_t)ev.gen); break;
        case EV_BATCH_DONE: on_batch_done(s, (int)ev.idx, ev.gen); break;
        case EV_TICK: if (!s->stopping && s->now <= s->duration) on_tick(s); break;
        case EV_LOAD_DONE: on_load_done(s, (int)ev.idx, (int)(ev.gen >> 1), ev.gen & 1); break;
        case EV_EXEC_UP: exec_up(s, (int)ev.idx); break;
        case EV_BATCH_START: on_batch_start(s, (int)ev.idx, ev.gen); break;
        case SIM_EV_JOB: sim_jobs_event(s, (int)ev.idx, ev.gen); break;
        case SIM_EV_NB: sim_shares_event(s, (int)ev.idx, ev.gen); break;
        default: SIM_BUG("unknown event type %u", ev.type);
        }
    }
    if (!s->stopping)
        begin_stop(s);                  /* queued requests nobody will serve are dropped */
    if (s->src_err)
        return s->src_err;
    if (s->arrived != s->ended || s->req_pool.live != 0)
        SIM_BUG("requests lost: arrived %llu, ended %llu, live %zu",
                (unsigned long long)s->arrived, (unsigned long long)s->ended, s->req_pool.live);
    return 0;
}

/* ---------------------------------------------------------------- read access */

int64_t sim_now(const struct sim *s) { return s->now; }
const struct sim_world *sim_world(const struct sim *s) { return s->cfg; }
double sim_load_scale(const struct sim *s) { return s->scale; }
int sim_model_count(const struct sim *s) { return s->nmodels; }
const struct sim_model *sim_model(const struct sim *s, int m) { return &s->models[m]; }
int sim_exec_count(const struct sim *s) { return s->nexecs; }
const struct sim_exec *sim_exec(const struct sim *s, int e) { return &s->execs[e]; }
int64_t sim_duration_ns(const struct sim *s) { return s->duration; }

int sim_check_period(const struct sim *s, const char *path, double period_s, double max_firings)
{
    double run_s = (double)s->stop_at / 1e9, least = run_s / max_firings;
    if (least < 1e-9)
        least = 1e-9;
    if (period_s >= least)
        return 0;
    return sim_err_set(SIM_EINVAL, "%s: expected a period of at least %g s (at most %.0e firings "
                       "over the run's %g s, duration and drain), got %g", path, least,
                       max_firings, run_s, period_s);
}
gsl_rng *sim_policy_rng(struct sim *s) { return s->prng; }

gsl_rng *sim_policy_rng_named(struct sim *s, const char *sub)
{
    for (int i = 0; i < s->npstreams; i++)
        if (strcmp(s->pstreams[i].name, sub) == 0)
            return s->pstreams[i].rng;
    if (s->npstreams == SIM_POLICY_STREAMS || strlen(sub) >= SIM_NAME_MAX)
        return sim_err_set(SIM_EINVAL, "policy %s: stream \"%s\": at most %d named streams of "
                           "names under %d characters", s->pol->name, sub, SIM_POLICY_STREAMS,
                           SIM_NAME_MAX), NULL;
    char name[2 * SIM_NAME_MAX + 16];
    snprintf(name, sizeof name, "policy.%s.%s", s->pol->name, sub);
    gsl_rng *r = sim_rng_stream(s->cfg->seed, name);
    if (!r)
        return sim_err_set(SIM_ENOMEM, "out of memory"), NULL;
    snprintf(s->pstreams[s->npstreams].name, SIM_NAME_MAX, "%s", sub);
    s->pstreams[s->npstreams++].rng = r;
    return r;
}
const struct sim_app *sim_app(const struct sim *s) { return s->app; }
uint64_t sim_app_exits(const struct sim *s, int p)
{
    return s->ps[p].n.c_ontime + s->ps[p].n.c_bad;
}
uint64_t sim_arrived(const struct sim *s) { return s->arrived; }
int64_t sim_resp_delay_ns(const struct sim *s) { return s->resp_ns; }

int64_t sim_dispatch_delay_ns(const struct sim *s, int n)
{
    return s->ctrl_ns + s->data_ns * n;
}

int64_t sim_latency_ns(const struct sim *s, int m, int kind, int b)
{
    const struct sim_model *md = &s->models[m];
    const int64_t *t = s->plat[m * SIM_MAX_KINDS + kind];
    if (!t)
        SIM_BUG("model %s has no profile for executor kind %d", md->cfg->name, kind);
    if (b >= 1 && b <= md->max_batch + 1)
        return t[b];
    int pk = s->prof_of_kind[m][kind];
    const struct sim_profile *p = &md->cfg->prof[pk];
    double q = s->cfg->plan_quantile > 0 ? sim_service_quantile(&p->svc, b < 1 ? 1 : b,
                                                                s->cfg->plan_quantile) : 1;
    return sim_ms_to_ns(sim_profile_ms(p, b < 1 ? 1 : b) * q);
}

double sim_service_cv(const struct sim *s, int m, int kind, int b)
{
    int pk = s->prof_of_kind[m][kind];
    if (pk < 0)
        return 0;
    const struct sim_service *v = &s->models[m].cfg->prof[pk].svc;
    double cv = 0, f;
    if (v->dist != SIM_SVC_NONE)
        sim_service_at(v, b < 1 ? 1 : b, &cv, &f);
    return cv;
}

const int64_t *sim_latency_table(const struct sim *s, int m, int kind)
{
    const int64_t *t = s->plat[m * SIM_MAX_KINDS + kind];
    if (!t)
        SIM_BUG("model %s has no profile for executor kind %d", s->models[m].cfg->name, kind);
    return t;
}

int sim_queue_len(const struct sim *s, int m) { return s->queues[m].len; }
int sim_xqueue_len(const struct sim *s, int e, int m) { return queue_peek(s, e, m)->len; }
int sim_frontend_count(const struct sim *s) { return s->cfg->frontends; }
int sim_model_pages(const struct sim *s, int m) { return s->pages[m]; }
int64_t sim_load_ns(const struct sim *s, int m) { return s->load_ns[m]; }

enum sim_residency sim_resident(const struct sim *s, int e, int m)
{
    return (enum sim_residency)s->xi[e].res[m].state;
}

struct sim_request *sim_xqueue_at(const struct sim *s, int e, int m, int i)
{
    const struct sim_mqueue *q = queue_peek(s, e, m);
    if (i < 0 || i >= q->len)
        SIM_BUG("queue index %d out of range (model %d at %d, length %d)", i, m, e, q->len);
    return mq_at(q, i);
}

struct sim_request *sim_queue_at(const struct sim *s, int m, int i)
{
    return sim_xqueue_at(s, SIM_CENTRAL, m, i);
}
