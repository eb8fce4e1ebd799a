/* sim_sample — the periodic sample (every metrics.sample_period_s): windows of outcomes,
 * busy time of executors and cores, in-flight requests, the GPU ledger's series, and the
 * time series a policy adds. Calls down to sim_batch.c and sim_request.c. */

#include "sim_err.h"
#include "sim_int.h"

static void ledger_series(struct sim *s);

/* ---------------------------------------------------------------- sampling */

static int64_t busy_upto(const struct sim *s, int e)
{
    const struct sim_exec *x = &s->execs[e];
    const struct sim_exec_int *xi = &s->xi[e];
    if (xi->multi)
        return x->busy_ns + (xi->nact ? s->now - xi->busy_since : 0);
    const struct sim_batch *b = xi->running;
    int64_t busy = x->busy_ns + sim_llm_busy_now(s, e);   /* an LLM iteration in flight */
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
    return (double)sim_cbusy_upto(s, e) / 1e12;
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

void sim_on_tick(struct sim *s)
{
    struct sim_window *w = &s->win;
    w->t0 = w->t1;
    w->t1 = s->now;
    double secs = (double)(w->t1 - w->t0) / 1e9;
    /* the window's rates: an application's requests (its paths), else the models' */
    struct sim_outcomes models = {0}, paths = {0};
    if (s->fold)
        sim_count_in_flight(s);
    for (int m = 0; m < s->nmodels; m++) {
        struct sim_outcomes d = window_delta(&models, &s->ms[m].n, &s->ms[m].snap);
        sim_ts_add(s, "model_offered_rps", m, (double)d.c_offered / secs);
        sim_ts_add(s, "model_ontime_rps", m, (double)d.c_ontime / secs);
    }
    sim_llm_sample(s);
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
            int64_t cb = sim_cbusy_upto(s, e);
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
        sim_push(s, next, EV_TICK, 0, 0);
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
        sim_fail_nomem(s, "growing the time series");
}

const struct sim_window *sim_last_window(const struct sim *s)
{
    return &s->win;
}
