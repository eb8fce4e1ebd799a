/* sim_batch — batches: a policy's dispatch (sim_dispatch_ex) and preemption, a batch's
 * duration, start and end (its requests' outcomes, the next stage of their paths), the fluid
 * model of executors with lanes or shared devices (running batches as work re-timed when
 * their speed changes), and the latency tables policies plan with. Calls down to
 * sim_exec.c, sim_request.c and sim_base.c. */
#include <math.h>
#include <string.h>

#include "sim_device.h"
#include "sim_err.h"
#include "sim_int.h"

/* ---------------------------------------------------------------- batches on executors */

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

/* The time batch b runs on executor e at full speed: its work (the profile's mean, scaled by
 * request sizes), its service-time variation, the cluster's execution jitter. */
static int64_t batch_time(struct sim *s, int e, const struct sim_batch *b, int kind)
{
    int64_t w = batch_work(s, b, kind);
    double f = sim_service_factor(s, e, b->model, kind, b->size);
    return sim_exec_time(s, f == 1 ? w : sim_ns((double)w * f));
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

/* The host's time before a batch of `size` reaches executor x's device: the one place it is
 * added, for both paths. Two settings make it, each in its config's unit, converted to ns
 * where they are read: the parametric interference model's host phase
 * (cluster.interference_params.host_ms + host_ms_per_request x size, sim_dev_host_ns; 0
 * without that model) and a GPU executor's host time per batch (cluster.host_us_per_batch,
 * drawn per batch when it has a p99: sim_host_time). CPU executors have neither. */
static int64_t host_phase_ns(struct sim *s, const struct sim_exec *x, int size)
{
    return sim_dev_host_ns(&s->cfg->intf, x->cpu, size) + (x->cpu ? 0 : sim_host_time(s));
}

static void batch_start(struct sim *s, struct sim_batch *b)
{
    struct sim_exec *x = &s->execs[b->exec];
    int64_t t = start_time(s, b, x->last_finish);
    if (b->status == SIM_BATCH_OK) {   /* (a one-lane GPU executor without interference) */
        int64_t host = host_phase_ns(s, x, b->size);
        b->t_finish = t + host + batch_time(s, b->exec, b, x->kind);
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
    sim_exec_mark(s, b->exec);
    s->xi[b->exec].running = b;
    for (struct sim_request *r = b->reqs; r; r = r->next) {
        r->t_start = b->t_start;
        r->t_finish = b->t_finish;
    }
    if (s->obs.batch_start && b->status == SIM_BATCH_OK)
        s->obs.batch_start(s->obs.ctx, s, b);
    sim_push(s, b->t_finish, EV_BATCH_DONE, (uint32_t)b->exec, b->serial);
}

/* ---- fluid executors: batches as work items re-timed when their speed changes
 *
 * CPU executors and executors with several lanes or a shared device (cluster.interference)
 * hold their batches in lanes (xi->run, admission order). A batch admitted to a lane starts at
 * max(start_at, ready, now); it joins the device after its host phase (sim_dev_host_ns), at
 * once when it runs alone on its lane (then `since` may lie ahead), else by an EV_BATCH_START
 * event, so that the co-runners are re-rated at the instant it arrives. sim_batch_retime()
 * gives every batch on the device its speed from the model and re-arms the completions that
 * move: work done is rounded down and time to finish up, in integer ns, so a batch is never
 * early and a run is the same on every machine. The one-lane GPU executor without interference never
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
int64_t sim_cbusy_upto(const struct sim *s, int e)
{
    const struct sim_exec_int *xi = &s->xi[e];
    int64_t t = s->now < s->duration ? s->now : s->duration;
    return xi->cbusy_acc + (t > xi->cbusy_since ? (t - xi->cbusy_since) * xi->cbusy_milli : 0);
}

static void cbusy_accrue(struct sim *s, int e)
{
    struct sim_exec_int *xi = &s->xi[e];
    int64_t t = s->now < s->duration ? s->now : s->duration;
    xi->cbusy_acc = sim_cbusy_upto(s, e);
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
    sim_push(s, fin, EV_BATCH_DONE, (uint32_t)e, b->serial);
}

void sim_batch_retime(struct sim *s, int e)
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
    sim_batch_retime(s, e);
}

static void set_running(struct sim *s, int e)
{
    struct sim_exec_int *xi = &s->xi[e];
    xi->running = xi->nrun ? &xi->run[0]->pub : NULL;
    s->execs[e].running = xi->running;
    s->execs[e].nrunning = xi->nrun;
    sim_exec_mark(s, e);
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
    int64_t dev = t + host_phase_ns(s, x, b->size);
    if (!xi->multi)
        activate(s, e, bi, dev);
    else if (dev > s->now)
        sim_push(s, dev, EV_BATCH_START, (uint32_t)e, b->serial);
    else
        activate(s, e, bi, s->now);
    if (s->obs.batch_start)
        s->obs.batch_start(s->obs.ctx, s, b);
}

void sim_batch_on_start(struct sim *s, int e, uint64_t serial)
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
        sim_batch_retime(s, e);
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
    sim_exec_mark(s, e);
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
    sim_exec_mark(s, e);
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

void sim_batch_on_done(struct sim *s, int e, uint64_t serial)
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
            sim_req_end(s, r, SIM_REQ_DROPPED, s->now);
            continue;
        }
        int64_t t_done = s->now + sim_resp_delay_ns(s, b->model) + sim_jitter_draw(s);
        if (!sim_req_next_stage(s, r, t_done))
            sim_req_end(s, r, sim_req_by_deadline(r, t_done), t_done);
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
        SIM_POLICY_CALL(s, on_batch_done, b);
    sim_pool_put(&s->batch_pool, b);
    sim_exec_maybe_down(s, e);
}

const struct sim_batch *sim_dispatch_ex(struct sim *s, const struct sim_dispatch_args *a)
{
    int e = a->exec, m = a->model, n = a->n;
    if (e < 0 || e >= s->nexecs || m < 0 || m >= s->nmodels)
        SIM_BUG("dispatch to executor %d / model %d out of range", e, m);
    if (a->from != SIM_CENTRAL && a->from != e)
        SIM_BUG("dispatch to executor %d of requests queued at executor %d", e, a->from);
    struct sim_exec *x = &s->execs[e];
    struct sim_mqueue *q = sim_queue_of(s, a->from, m);
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

    struct sim_batch *b = sim_pool_get(&s->batch_pool);
    if (!b) {
        for (int i = 0; i < n; i++)
            sim_req_end(s, sim_q_pop(s, a->from, m), SIM_REQ_DROPPED, s->now);
        sim_fail_nomem(s, "for a batch");
        return NULL;
    }
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
    if (a->from == SIM_CENTRAL) {       /* after the controller's work up to this batch */
        sim_ctrl_charge(s, s->ctrl_batch_ns);
        b->t_ready = sim_ctrl_ready(s) + (a->no_input ? s->ctrl_ns : sim_dispatch_delay_ns(s, n)) +
                     sim_jitter_draw(s);
    }
    else
        b->t_ready = s->now;
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
        struct sim_request *r = sim_q_pop(s, a->from, m);
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
        sim_exec_mark(s, b->exec);
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
        if (sim_q_push(s, b->from, r))
            sim_req_end(s, r, SIM_REQ_DROPPED, s->now);
        n++;
    }
    s->ms[b->model].preempted += (uint64_t)n;
    b->reqs = NULL;
    x->last_finish = s->now;
    sim_pool_put(&s->batch_pool, b);
    start_next(s, e);
    return n;
}


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
