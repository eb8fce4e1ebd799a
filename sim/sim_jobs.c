/* sim_jobs — training jobs, the engine's second kind of work beside requests (DynamoML):
 * arrival, placement of workers on the ledger's GPUs by the policy, piecewise-constant
 * progress re-timed at every change with one completion event, pauses for start-up and
 * reconfiguration, the end (GPUs freed). Model and API: sim_world.h and sim.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "sim_int.h"

enum { JEV_ARRIVE, JEV_RESUME, JEV_DONE };

/* A job event (none after the run's end: the job then stays as it is, unfinished). */
static void job_push(struct sim *s, int64_t t, int j, uint64_t gen)
{
    sim_push_event(s, t, SIM_EV_JOB, (uint32_t)j, gen);
}

int sim_jobs_init(struct sim *s)
{
    const struct sim_world *w = s->cfg;
    s->njobs = w->njobs;
    if (!w->njobs)
        return 0;
    if (!(s->jobs = calloc((size_t)w->njobs, sizeof *s->jobs)))
        return SIM_ENOMEM;
    for (int j = 0; j < w->njobs; j++) {
        const struct sim_job_cfg *c = &w->jobs[j];
        struct sim_job *p = &s->jobs[j].pub;
        p->id = j;
        p->kind = c->kind;
        p->state = SIM_JOB_FUTURE;
        p->init_workers = c->init_workers;
        p->max_workers = c->max_workers;
        p->iterations = w->job_kinds[c->kind].iterations;
        p->arrival = sim_s_to_ns(c->arrival_s);
        p->started = p->ended = -1;
        p->ps_node = -1;
        job_push(s, p->arrival, j, JEV_ARRIVE);
    }
    return 0;
}

void sim_jobs_free(struct sim *s)
{
    free(s->jobs);
    s->jobs = NULL;
}

int sim_job_count(const struct sim *s)
{
    return s->njobs;
}

const struct sim_job *sim_job(const struct sim *s, int j)
{
    if (j < 0 || j >= s->njobs)
        SIM_BUG("job %d out of range (%d jobs)", j, s->njobs);
    return &s->jobs[j].pub;
}

static double done_at(const struct sim_job_int *ji, int64_t now)
{
    double d = ji->done + ji->rate * (double)(now - ji->since) / 1e9;
    return d < ji->pub.iterations ? d : ji->pub.iterations;
}

double sim_job_done(const struct sim *s, int j)
{
    return done_at(&s->jobs[sim_job(s, j)->id], s->now);
}

int64_t sim_job_workers_ns(const struct sim *s, int j, int n)
{
    const struct sim_job_int *ji = &s->jobs[sim_job(s, j)->id];
    if (n < 1 || n > SIM_JOB_MAX_WORKERS)
        return 0;
    int64_t t = ji->pub.workers_ns[n - 1];
    if (ji->pub.nworkers == n && ji->pub.state != SIM_JOB_DONE)
        t += s->now - ji->since;
    return t;
}

/* Brings the job's progress, split time and time at its worker count up to now. */
static void accrue(struct sim *s, struct sim_job_int *ji)
{
    if (ji->rate > 0 && ji->split)
        ji->pub.cross_ns += s->now - ji->since;
    if (ji->pub.nworkers > 0)
        ji->pub.workers_ns[ji->pub.nworkers - 1] += s->now - ji->since;
    ji->done = done_at(ji, s->now);
    ji->since = s->now;
}

static bool is_split(const struct sim *s, const struct sim_job *p)
{
    for (int w = 0; w < p->nworkers; w++)
        if (s->gpus[p->gpu[w]].pub.node != p->ps_node)
            return true;
    return false;
}

/* Sets the job's rate from its state and workers and arms its one event: the end of a pause,
 * or its completion. Call after accrue(). */
static void retime(struct sim *s, struct sim_job_int *ji)
{
    struct sim_job *p = &ji->pub;
    const struct sim_job_kind *k = &s->cfg->job_kinds[p->kind];
    ji->serial++;
    ji->split = is_split(s, p);
    ji->rate = 0;
    if (p->state == SIM_JOB_STARTING || p->state == SIM_JOB_RECONFIGURING) {
        job_push(s, ji->pause_until, p->id, ((uint64_t)ji->serial << 2) | JEV_RESUME);
        return;
    }
    if (p->state != SIM_JOB_RUNNING)
        return;
    ji->rate = k->speedup[p->nworkers - 1] / k->iter_s / (ji->split ? k->cross_node : 1);
    double left = p->iterations - ji->done;
    int64_t t = s->now + (left > 0 ? sim_ns(ceil(left / ji->rate * 1e9)) : 0);
    job_push(s, t, p->id, ((uint64_t)ji->serial << 2) | JEV_DONE);
}

/* A pause of d_s seconds from now (start-up, reconfiguration, shrink): a job already paused
 * keeps its state and pauses until the later end; a running one enters state st (or stays
 * running when d_s is 0). Call before retime(). */
static void pause_for(struct sim *s, struct sim_job_int *ji, enum sim_job_state st, double d_s)
{
    int64_t until = s->now + sim_s_to_ns(d_s);
    if (ji->pub.state == SIM_JOB_STARTING || ji->pub.state == SIM_JOB_RECONFIGURING) {
        if (until > ji->pause_until)
            ji->pause_until = until;
    } else if (until > s->now) {
        ji->pub.state = st;
        ji->pause_until = until;
    } else {
        ji->pub.state = SIM_JOB_RUNNING;
    }
}

/* Whether GPU g is wholly held by job j already (a policy gathering a job's workers one at a
 * time claims them as (SIM_HOLD_WORKER, j) first; starting the job adopts those claims). */
static bool held_by(const struct sim *s, int g, int j)
{
    const struct sim_gpu_int *gi = &s->gpus[g];
    return gi->pub.nclaims == 1 && gi->claims[0].kind == SIM_HOLD_WORKER &&
           gi->claims[0].id == j && gi->claims[0].milli == 1000;
}

static int claim_workers(struct sim *s, int j, const int *gpus, int n)
{
    bool mine[SIM_JOB_MAX_WORKERS] = {false};
    for (int i = 0; i < n; i++) {
        int g = gpus[i];
        bool dup = false;
        for (int k = 0; k < i; k++)
            dup |= gpus[k] == g;
        if (!dup && g >= 0 && g < s->ngpus && held_by(s, g, j))
            continue;                   /* adopted */
        if (dup || g < 0 || g >= s->ngpus || s->gpus[g].pub.milli != 0 ||
            sim_gpu_claim(s, g, SIM_HOLD_WORKER, j, 1000)) {
            for (int k = 0; k < i; k++)
                if (mine[k])
                    sim_gpu_release(s, gpus[k], SIM_HOLD_WORKER, j);
            if (sim_out_of_memory(s))
                return -1;              /* said already (sim_fail_nomem) */
            return sim_err_set(SIM_EINVAL, "job %d: GPU %d is not a free GPU of the ledger%s", j,
                               g, dup ? " (named twice)" : ""), -1;
        }
        mine[i] = true;
    }
    return 0;
}

int sim_job_start(struct sim *s, int j, const int *gpus, int n, int ps_node)
{
    struct sim_job_int *ji = &s->jobs[sim_job(s, j)->id];
    struct sim_job *p = &ji->pub;
    int nn = s->cfg->nnodes > 0 ? s->cfg->nnodes : 1;
    if (p->state != SIM_JOB_QUEUED)
        return sim_err_set(SIM_EINVAL, "job %d: start: not queued (state %d)", j, p->state), -1;
    if (n < 1 || n > p->max_workers)
        return sim_err_set(SIM_EINVAL, "job %d: start with %d workers (1 to %d)", j, n,
                           p->max_workers), -1;
    if (ps_node < 0 || ps_node >= nn)
        return sim_err_set(SIM_EINVAL, "job %d: no node %d for its parameter server", j,
                           ps_node), -1;
    if (claim_workers(s, j, gpus, n))
        return -1;
    memcpy(p->gpu, gpus, (size_t)n * sizeof *gpus);
    p->nworkers = n;
    p->ps_node = ps_node;
    p->started = s->now;
    ji->since = s->now;
    p->state = SIM_JOB_RUNNING;
    pause_for(s, ji, SIM_JOB_STARTING, s->cfg->job_kinds[p->kind].start_s);
    retime(s, ji);
    return 0;
}

int sim_job_add_workers(struct sim *s, int j, const int *gpus, int n)
{
    struct sim_job_int *ji = &s->jobs[sim_job(s, j)->id];
    struct sim_job *p = &ji->pub;
    if (p->state != SIM_JOB_STARTING && p->state != SIM_JOB_RUNNING &&
        p->state != SIM_JOB_RECONFIGURING)
        return sim_err_set(SIM_EINVAL, "job %d: add workers: not started or done", j), -1;
    if (n < 1 || p->nworkers + n > p->max_workers)
        return sim_err_set(SIM_EINVAL, "job %d: %d + %d workers exceed its %d", j, p->nworkers,
                           n, p->max_workers), -1;
    if (claim_workers(s, j, gpus, n))
        return -1;
    accrue(s, ji);
    memcpy(p->gpu + p->nworkers, gpus, (size_t)n * sizeof *gpus);
    p->nworkers += n;
    p->reconfigs++;
    pause_for(s, ji, SIM_JOB_RECONFIGURING, s->cfg->job_kinds[p->kind].reconfig_s);
    retime(s, ji);
    return 0;
}

int sim_job_remove_worker(struct sim *s, int j, int g)
{
    struct sim_job_int *ji = &s->jobs[sim_job(s, j)->id];
    struct sim_job *p = &ji->pub;
    int w = 0;
    while (w < p->nworkers && p->gpu[w] != g)
        w++;
    if (w == p->nworkers || p->state == SIM_JOB_DONE)
        return sim_err_set(SIM_EINVAL, "job %d has no worker on GPU %d", j, g), -1;
    if (w == 0)
        return sim_err_set(SIM_EINVAL, "job %d: the worker on GPU %d is its chief: never "
                           "removed", j, g), -1;
    accrue(s, ji);
    memmove(p->gpu + w, p->gpu + w + 1, (size_t)(p->nworkers - w - 1) * sizeof *p->gpu);
    p->nworkers--;
    p->evictions++;
    pause_for(s, ji, SIM_JOB_RECONFIGURING, s->cfg->job_kinds[p->kind].shrink_s);
    retime(s, ji);
    sim_gpu_release(s, g, SIM_HOLD_WORKER, j);   /* last: a pending executor may take it */
    return 0;
}

static void finish(struct sim *s, struct sim_job_int *ji)
{
    struct sim_job *p = &ji->pub;
    accrue(s, ji);
    ji->done = p->iterations;
    ji->rate = 0;
    ji->serial++;
    p->state = SIM_JOB_DONE;
    p->ended = s->now;
    int n = p->nworkers, gpus[SIM_JOB_MAX_WORKERS];
    memcpy(gpus, p->gpu, (size_t)n * sizeof *gpus);
    p->nworkers = 0;
    for (int w = 0; w < n; w++)
        sim_gpu_release(s, gpus[w], SIM_HOLD_WORKER, p->id);
    if (!s->stopping && s->pol->on_job_done)
        SIM_POLICY_CALL(s, on_job_done, p->id);
    if (s->cfg->end_when_done) {        /* the last job: the run ends here (or later) */
        for (int j = 0; j < s->njobs; j++)
            if (s->jobs[j].pub.state != SIM_JOB_DONE)
                return;
        int64_t end = sim_s_to_ns(s->cfg->end_not_before_s);
        end = end > s->now ? end : s->now;
        if (end < s->warmup + SIM_NS_PER_S)
            end = s->warmup + SIM_NS_PER_S;         /* a measured window of at least 1 s */
        if (end < s->duration) {
            s->stop_at += end - s->duration;        /* the same drain after it */
            s->duration = end;
            s->ended_early = true;
        }
    }
}

void sim_jobs_event(struct sim *s, int j, uint64_t gen)
{
    struct sim_job_int *ji = &s->jobs[j];
    int what = (int)(gen & 3);
    if (what == JEV_ARRIVE) {
        if (s->now > s->duration)
            return;                     /* arrives after the run: never seen */
        ji->pub.state = SIM_JOB_QUEUED;
        ji->since = s->now;
        if (!s->stopping && s->pol->on_job_arrive)
            SIM_POLICY_CALL(s, on_job_arrive, j);
        return;
    }
    if ((uint32_t)(gen >> 2) != ji->serial || s->now > s->duration)
        return;                         /* re-timed since; or past the run's end (unfinished) */
    accrue(s, ji);
    if (what == JEV_RESUME) {
        ji->pub.state = SIM_JOB_RUNNING;
        retime(s, ji);
    } else {
        finish(s, ji);
    }
}
