/* sim_request — a request's life in the engine: arrivals from the sources, the frontend
 * and its path through the application, delivery to a queue after the network's delays,
 * counting outcomes (on time, late, dropped) per model and path, the next stage of a path,
 * and the policy-facing queue reads and drops. Calls down to sim_base.c only. */
#include <stdlib.h>
#include <gsl/gsl_randist.h>

#include "sim_err.h"
#include "sim_grow.h"
#include "sim_int.h"

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
enum sim_outcome sim_req_by_deadline(const struct sim_request *r, int64_t t)
{
    return t <= r->deadline ? SIM_REQ_ON_TIME : SIM_REQ_LATE;
}


void sim_req_end(struct sim *s, struct sim_request *r, enum sim_outcome o, int64_t t_done)
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
        SIM_POLICY_CALL(s, on_request_end, r, t_done);
    int src = ((struct sim_req_int *)r)->src;
    sim_pool_put(&s->req_pool, r);
    if (src >= 0 && s->src[src].src.on_end) {   /* a closed-loop source: its next request */
        struct sim_src *q = &s->src[src];
        q->src.on_end(q->src.ctx, t_done);
        if (!q->pending && !q->ended)
            sim_source_push(s, src);
    }
}

void sim_req_deliver(struct sim *s, struct sim_request *r)
{
    r->t_sched = s->now;
    if (s->stopping || (r->exec >= 0 && s->execs[r->exec].state != SIM_EXEC_UP)) {
        sim_req_end(s, r, SIM_REQ_DROPPED, s->now);
        return;
    }
    if (sim_q_push(s, r->exec, r)) {
        sim_req_end(s, r, SIM_REQ_DROPPED, s->now);
        return;
    }
    sim_ctrl_begin(s);                  /* admission to a central queue is the controller's */
    if (r->exec < 0)
        sim_ctrl_charge(s, s->ctrl_req_ns);
    s->pol->on_request(s, s->pstate, r->model, r);
    sim_ctrl_end(s);
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
    a->tok = (struct sim_tokens){0, 0, NULL};
    if (rc == 1 && q->src.tokens)
        q->src.tokens(q->src.ctx, &a->tok);
    q->ended = rc != 1 || a->t >= s->duration;
    return !q->ended;
}

void sim_source_push(struct sim *s, int i)
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
    sim_push(s, s->fold ? q->cur.t + s->ctrl_ns : q->cur.t, EV_ARRIVAL, (uint32_t)i, 0);
}

/* Folded arrivals: before tick `now` closes its window, every arrival before it is counted as
 * offered in it, also those whose (delivery) events come later: the pending one and any the
 * source yields before `now`, which wait in `ahead`. */
void sim_count_in_flight(struct sim *s)
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
            if (sim_grow(&q->ahead, &q->cap, q->nahead + 1, sizeof *q->ahead, 8)) {
                sim_fail_nomem(s, "holding a source's arrivals");
                break;
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
        sim_req_end(s, r, SIM_REQ_DROPPED, s->now);
        return;
    }
    if (to != SIM_CENTRAL && (to < 0 || to >= s->nexecs))
        SIM_BUG("policy %s routed a request to executor %d (%d executors)", s->pol->name, to,
                s->nexecs);
    r->exec = to;
    /* to the scheduler: a control message; straight to an executor: the input too */
    int64_t d = at - s->now + s->ctrl_ns + (to >= 0 ? s->data_ns : 0) + sim_jitter_draw(s);
    if (d == 0)
        sim_req_deliver(s, r);
    else
        sim_push(s, s->now + d, EV_DELIVER, 0, (uint64_t)(uintptr_t)r);
}

void sim_req_arrival(struct sim *s, int src)
{
    long cap = s->cfg->max_live_requests > 0 ? s->cfg->max_live_requests : SIM_MAX_LIVE_REQUESTS;
    if ((long)s->req_pool.live >= cap) {        /* the run stops here (sim_run) */
        sim_err_set(SIM_EINVAL, "more than %ld requests in the system at once at t = %.3f s: "
                    "the offered load is far above what the cluster serves (lower %s); the "
                    "run is stopped and not written", cap, (double)s->now / 1e9,
                    s->cfg->load_key ? s->cfg->load_key : "the offered load");
        s->src_err = SIM_EINVAL;
        return;
    }
    if (s->src[src].cur.t >= s->duration) {     /* after a run cut short (end_when_done) */
        s->src[src].pending = false;
        s->src[src].ended = true;
        return;
    }
    struct sim_req_int *ri = sim_pool_get(&s->req_pool);
    if (!ri) {
        sim_fail_nomem(s, "for a request");
        return;
    }
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
    r->prompt_tokens = s->src[src].cur.tok.prompt;
    r->output_tokens = s->src[src].cur.tok.output;
    r->prefix = s->src[src].cur.tok.prefix;
    r->counted = t >= s->warmup;
    s->arrived++;

    sim_source_push(s, src);
    enter_model(s, r, t, counted);
}

/* A stage of r's application path is done and its response leaves at t_done: the next stage
 * is revealed now, and r enters that model's queue with its arrival time and deadline. */
bool sim_req_next_stage(struct sim *s, struct sim_request *r, int64_t t_done)
{
    int p = req_path(r);
    if (p < 0 || r->stage + 1 >= s->app->paths[p].nstages)
        return false;
    stage_outcome(s, r, sim_req_by_deadline(r, t_done), t_done);
    r->stage++;
    r->model = s->app->paths[p].stages[r->stage];
    enter_model(s, r, t_done, false);
    return true;
}


void sim_queue_drop_head(struct sim *s, int m)
{
    if (s->queues[m].len == 0)
        SIM_BUG("drop from the empty queue of model %d", m);
    sim_req_end(s, sim_q_pop(s, SIM_CENTRAL, m), SIM_REQ_DROPPED, s->now);
}

void sim_xqueue_drop_head(struct sim *s, int e, int m)
{
    if (sim_queue_peek(s, e, m)->len == 0)
        SIM_BUG("drop from the empty queue of model %d at executor %d", m, e);
    sim_req_end(s, sim_q_pop(s, e, m), SIM_REQ_DROPPED, s->now);
}

int sim_queue_len(const struct sim *s, int m) { return s->queues[m].len; }

int sim_xqueue_len(const struct sim *s, int e, int m) { return sim_queue_peek(s, e, m)->len; }

int sim_xqueue_next(const struct sim *s, int e, int m)
{
    return sim_bits_next(e == SIM_CENTRAL ? &s->central_bits : &s->xi[e].qbits, m);
}

static const struct sim_qent *xqueue_ent(const struct sim *s, int e, int m, int i)
{
    const struct sim_mqueue *q = sim_queue_peek(s, e, m);
    if (i < 0 || i >= q->len)
        SIM_BUG("queue index %d out of range (model %d at %d, length %d)", i, m, e, q->len);
    return sim_mq_at(q, i);
}

struct sim_request *sim_xqueue_at(const struct sim *s, int e, int m, int i)
{
    return xqueue_ent(s, e, m, i)->r;
}

int64_t sim_xqueue_sched_at(const struct sim *s, int e, int m, int i)
{
    return xqueue_ent(s, e, m, i)->t_sched;
}

struct sim_request *sim_queue_at(const struct sim *s, int m, int i)
{
    return xqueue_ent(s, SIM_CENTRAL, m, i)->r;
}

int64_t sim_queue_arrival_at(const struct sim *s, int m, int i)
{
    return xqueue_ent(s, SIM_CENTRAL, m, i)->t_arrival;
}

