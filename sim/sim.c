/* sim — the engine's top: building an engine from a world (sim_create, sim_destroy), the
 * event loop and its clock (sim_run), and the policy-facing read access. The loop calls down
 * into each part: requests (sim_request.c), executors (sim_exec.c), batches (sim_batch.c),
 * the periodic sample (sim_sample.c), training jobs (sim_jobs.c), notebooks (sim_shares.c)
 * and policy timers (sim_timer.c); see sim.h for the contract. */
#include "sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>

#include "sim_err.h"
#include "sim_int.h"
#include "sim_rng.h"

/* ---------------------------------------------------------------- building */

static int prepare_service(struct sim *s, int m, int k, int pk);
static int plan_host(struct sim *s, int m, int k);

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

/* sim_create's phases, in order; each returns 0 or the error (SIM_ENOMEM where memory ran
 * out), leaving what it allocated to sim_destroy. */

/* The clock's and the network's constants, the host time and the controller's threads. */
static int create_times(struct sim *s, const struct sim_world *cfg)
{
    s->duration = sim_s_to_ns(cfg->duration_s);
    s->warmup = sim_s_to_ns(cfg->warmup_s);
    s->stop_at = s->duration + sim_s_to_ns(cfg->drain_s);
    s->tick_ns = sim_s_to_ns(cfg->sample_period_s);
    s->ctrl_ns = sim_ns(cfg->ctrl_us * 1e3);
    s->host_ns = sim_ns(cfg->host_us_per_batch * 1e3);
    if (cfg->host_us_p99 > cfg->host_us_per_batch && cfg->host_us_per_batch > 0) {
        /* lognormal through the median and the p99 (z = 2.3263); its mean is what policies
         * plan with (plan_host) */
        if (!(s->host_rng = sim_rng_stream(cfg->seed, "cluster.host")))
            return SIM_ENOMEM;
        s->host_mu = log(cfg->host_us_per_batch * 1e3);
        s->host_sigma = log(cfg->host_us_p99 / cfg->host_us_per_batch) / 2.3263478740408408;
        s->host_ns = sim_ns(exp(s->host_mu + s->host_sigma * s->host_sigma / 2));
    }
    s->ctrl_threads = cfg->ctrl.threads;
    s->ctrl_req_ns = sim_ns(cfg->ctrl.us_per_request * 1e3);
    s->ctrl_cand_ns = sim_ns(cfg->ctrl.us_per_candidate * 1e3);
    s->ctrl_batch_ns = sim_ns(cfg->ctrl.us_per_batch * 1e3);
    if (s->ctrl_threads > 0 && !(s->ctrl_free = calloc((size_t)s->ctrl_threads, sizeof *s->ctrl_free)))
        return SIM_ENOMEM;
    s->data_ns = sim_ns(cfg->data_us_per_request * 1e3);
    s->resp_ns = sim_ns(cfg->resp_us * 1e3);
    return 0;
}

/* The models: their queues, pages, load times, statistics, and a latency table per executor
 * kind in use (the GPUs', then the nodes' CPU kinds) with its service-time draws. */
static int create_models(struct sim *s, const struct sim_world *cfg)
{
    int nm = s->nmodels = cfg->nmodels, rc;
    s->models = calloc((size_t)nm, sizeof *s->models);
    s->queues = calloc((size_t)nm, sizeof *s->queues);
    s->rr_frontend = calloc((size_t)nm, sizeof *s->rr_frontend);
    s->prof_of_kind = calloc((size_t)nm, sizeof *s->prof_of_kind);
    s->dyn_mb_per_req = calloc((size_t)nm, sizeof *s->dyn_mb_per_req);
    s->pages = calloc((size_t)nm, sizeof *s->pages);
    s->load_ns = calloc((size_t)nm, sizeof *s->load_ns);
    s->ms = calloc((size_t)nm, sizeof *s->ms);
    if (!s->models || !s->queues || sim_bits_reserve(&s->central_bits, nm) || !s->rr_frontend ||
        !s->prof_of_kind || !s->dyn_mb_per_req || !s->pages || !s->load_ns || !s->ms)
        return SIM_ENOMEM;

    /* executor kinds in use: the GPUs' (cluster.gpu_kind), then the nodes' CPU kinds */
    kind_index(s, cfg->gpu_kind);
    int nn = cfg->nnodes > 0 ? cfg->nnodes : 1;
    s->node_milli = calloc((size_t)nn, sizeof *s->node_milli);
    s->node_cpu_kind = calloc((size_t)nn, sizeof *s->node_cpu_kind);
    if (!s->node_milli || !s->node_cpu_kind)
        return SIM_ENOMEM;
    for (int n = 0; n < nn; n++)
        s->node_cpu_kind[n] = n < cfg->nnodes && cfg->nodes[n].cores > 0
                                  ? kind_index(s, cfg->nodes[n].cpu_kind) : -1;
    s->lat = calloc((size_t)nm * SIM_MAX_KINDS, sizeof *s->lat);
    s->plat = calloc((size_t)nm * SIM_MAX_KINDS, sizeof *s->plat);
    s->svc = calloc((size_t)nm * SIM_MAX_KINDS, sizeof *s->svc);
    if (!s->lat || !s->plat || !s->svc)
        return SIM_ENOMEM;
    for (int m = 0; m < nm; m++) {
        const struct sim_model_cfg *mc = &cfg->models[m];
        struct sim_model *md = &s->models[m];
        md->id = m;
        md->cfg = mc;
        md->slo_ns = sim_ms_to_ns(mc->slo_ms);
        md->stack_ns = sim_ms_to_ns(mc->stack_ms);
        md->max_batch = mc->max_batch;
        md->rate_rps = cfg->model_rps[m];
        s->dyn_mb_per_req[m] = mc->dynamic_mb / mc->max_batch;
        s->pages[m] = (int)ceil((mc->weights_mb + mc->static_mb) / cfg->page_mb - 1e-9);
        if (mc->dynamic_mb > s->max_dynamic_mb)
            s->max_dynamic_mb = mc->dynamic_mb;
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
                return SIM_ENOMEM;
            s->lat[m * SIM_MAX_KINDS + k] = s->plat[m * SIM_MAX_KINDS + k] = t;
            for (int b = 1; b <= mc->max_batch + 1; b++)
                t[b] = sim_ms_to_ns(sim_profile_ms(&mc->prof[pk], b));
            if (prepare_service(s, m, k, pk) || plan_host(s, m, k))
                return SIM_ENOMEM;
        }
        if ((rc = sim_model_stats_init(&s->ms[m], mc->max_batch)))
            return rc;
        if (mc->llm_on) {
            if (!(s->ms[m].llm = malloc(sizeof *s->ms[m].llm)))
                return SIM_ENOMEM;
            memset(s->ms[m].llm, 0, sizeof *s->ms[m].llm);
            sim_hist_reset(&s->ms[m].llm->ttft);
            sim_hist_reset(&s->ms[m].llm->tpot);
            sim_hist_reset(&s->ms[m].llm->itl);
        }
    }
    return 0;
}

/* The application's paths and the run's other random streams. */
static int create_streams(struct sim *s, const struct sim_world *cfg)
{
    if ((s->app = cfg->app)) {
        int np = s->app->npaths;
        double prob[SIM_APP_MAX_PATHS];
        if (!(s->ps = calloc((size_t)np, sizeof *s->ps)))
            return SIM_ENOMEM;
        for (int p = 0; p < np; p++) {
            prob[p] = s->app->paths[p].prob;
            sim_hist_reset(&s->ps[p].latency);
        }
        if (!(s->path_rng = sim_rng_stream(cfg->seed, "application.paths")) ||
            !(s->path_table = gsl_ran_discrete_preproc((size_t)np, prob)))
            return SIM_ENOMEM;
    }
    s->jrng = sim_rng_stream(cfg->seed, "network.jitter");
    s->split_rng = sim_rng_stream(cfg->seed, "frontends.split");
    if (!s->jrng || !s->split_rng || !s->pol)
        return SIM_ENOMEM;
    if (cfg->exec_cv > 0) {
        if (!(s->xrng = sim_rng_stream(cfg->seed, "executors.jitter")))
            return SIM_ENOMEM;
        s->x_sigma = sqrt(log1p(cfg->exec_cv * cfg->exec_cv));
        s->x_mu = -s->x_sigma * s->x_sigma / 2;
    }
    return 0;
}

/* The executors (capacity for the largest pool; the first cluster.gpus up at time 0, on the
 * nodes' GPUs in order), the ledger, jobs and notebooks. */
static int create_execs(struct sim *s, const struct sim_world *cfg)
{
    s->max_execs = cfg->max_gpus > cfg->gpus ? cfg->max_gpus : cfg->gpus;
    s->execs = calloc((size_t)s->max_execs, sizeof *s->execs);
    s->xi = calloc((size_t)s->max_execs, sizeof *s->xi);
    if (!s->execs || !s->xi || sim_exec_free_reserve(s, s->max_execs))
        return SIM_ENOMEM;
    if (sim_exec_res_block(s, 0, s->max_execs))
        return SIM_ENOMEM;
    if (sim_ledger_init(s))
        return SIM_ENOMEM;
    s->nexecs = s->nactive = cfg->gpus;
    for (int e = 0; e < s->nexecs; e++) {   /* on the nodes' GPUs in order */
        sim_exec_init(s, e, SIM_EXEC_UP);
        int g = sim_ledger_first_free(s);
        if (g < 0)
            SIM_BUG("no GPU in the ledger for executor %d", e);
        if (sim_gpu_claim(s, g, SIM_HOLD_EXEC, e, 1000))
            return SIM_ENOMEM;          /* the only failure left: memory (sim_fail_nomem) */
        s->execs[e].gpu = g;
        s->execs[e].node = s->gpus[g].pub.node;
    }
    if (sim_jobs_init(s) || sim_shares_init(s))  /* job arrivals are events from here */
        return SIM_ENOMEM;
    return 0;
}

/* The policy's stream, state and init, and the autoscaler's state; then what the policy must
 * place and did not. */
static int create_policy(struct sim *s, const struct sim_world *cfg)
{
    int rc;
    char pname[SIM_NAME_MAX + 16];
    snprintf(pname, sizeof pname, "policy.%s", s->pol->name);
    s->prng = sim_rng_stream(cfg->seed, pname);
    s->pstate = calloc(1, s->pol->state_size ? s->pol->state_size : 1);
    if (!s->prng || !s->pstate)
        return SIM_ENOMEM;
    if (cfg->autoscaler &&
        !(s->astate = calloc(1, cfg->autoscaler->state_size ? cfg->autoscaler->state_size : 1)))
        return SIM_ENOMEM;
    for (int m = 0; m < s->nmodels && !s->pol->llm_only && !s->pol->mixed_models; m++)
        if (cfg->models[m].llm_on)
            return sim_err_set(SIM_EINVAL, "policy %s serves DNN models: model %s is an LLM "
                               "model (its `llm` section); policy.name: an LLM policy (vllm, "
                               "distserve; docs/llm.md)", s->pol->name, cfg->models[m].name);
    if (s->pol->init && (rc = s->pol->init(s, cfg->policy_params, s->pstate))) {
        s->pol->destroy ? s->pol->destroy(s->pstate) : (void)0;
        free(s->pstate);
        s->pstate = NULL;
        return rc;
    }
    if (s->njobs && !s->pol->on_job_arrive)     /* jobs nobody places would silently queue */
        return sim_err_set(SIM_EINVAL, "jobs: policy \"%s\" does not place training jobs "
                           "(policies that do: dynamoml)", s->pol->name);
    for (int i = 0; i < s->nnb; i++)     /* notebooks nobody places would silently idle */
        if (s->nb[i].pub.gpu < 0)
            return sim_err_set(SIM_EINVAL, "notebooks: policy \"%s\" did not place notebook "
                               "%d (policies that place notebooks: dynamoml)", s->pol->name, i);
    return 0;
}

/* The first arrivals and the first sampling tick. */
static int create_first_events(struct sim *s, const struct sim_world *cfg)
{
    s->fold = !cfg->app && !s->pol->route && cfg->jitter == SIM_JIT_NONE && s->ctrl_ns > 0;
    for (int i = 0; i < s->nsrc; i++) {
        sim_source_push(s, i);
        if (s->src_err)
            return s->src_err;
    }
    if (s->tick_ns > 0 && s->tick_ns <= s->duration)
        sim_push(s, s->tick_ns, EV_TICK, 0, 0);
    return s->src_err;                  /* memory ran out on the way (sim_fail_nomem) */
}

int sim_create(const struct sim_world *cfg, double scale, const struct policy_ops *pol,
               struct sim_source *src, int nsrc, struct sim **out)
{
    int rc;
    struct sim *s = calloc(1, sizeof *s);
    *out = NULL;
    if (!s || !(s->src = calloc((size_t)(nsrc ? nsrc : 1), sizeof *s->src))) {
        close_sources(src, nsrc);
        free(s);
        return SIM_ENOMEM;
    }
    s->view = -1;
    for (int i = 0; i < nsrc; i++) {
        s->src[i].src = src[i];
        s->clients |= src[i].active != NULL;
    }
    s->nsrc = nsrc;
    s->cfg = cfg;
    s->scale = scale;
    s->up.retime = sim_batch_retime;
    s->up.exec_bind = sim_exec_bind;
    s->pol = pol ? pol : cfg->policy;
    s->cold_start = sim_policy_cold_start(s->pol, cfg->policy_params);
    sim_heap_init(&s->heap);
    sim_pool_init(&s->req_pool, sizeof(struct sim_req_int), 4096);
    sim_pool_init(&s->batch_pool, sizeof(struct sim_batch_int), 256);
    sim_pool_init(&s->llm_pool, SIM_LLM_RQ_SIZE, 1024);
    sim_ts_init(&s->ts);
    if ((rc = create_times(s, cfg)) || (rc = create_models(s, cfg)) ||
        (rc = create_streams(s, cfg)) || (rc = create_execs(s, cfg)) ||
        (rc = create_policy(s, cfg)) || (rc = create_first_events(s, cfg))) {
        sim_destroy(s);
        return rc;
    }
    *out = s;
    return 0;
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
            free(s->queues[m].buf);     /* NULL or its own */
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
    sim_llm_free(s);
    free(s->exec_view);
    free(s->model_view);
    free(s->shadow);
    sim_jobs_free(s);
    sim_shares_free(s);
    for (int e = 0; e < s->max_execs && s->xi; e++) {
        if (s->xi[e].q)
            for (int m = 0; m < s->nmodels; m++)
                if (s->xi[e].q[m].own)
                    free(s->xi[e].q[m].buf);
        free(s->xi[e].q);
        free(s->xi[e].heads);           /* one block (heads_alloc) */
        sim_bits_free(&s->xi[e].qbits);
        free(s->xi[e].run);
        gsl_rng_free(s->xi[e].srng);
    }
    for (int i = 0; i < s->nqchunks; i++)
        free(s->qchunks[i]);            /* executors' queues' first entries (sim_base.c) */
    free(s->qchunks);
    free(s->lat);
    free(s->plat);
    free(s->ctrl_free);
    free(s->svc);
    free(s->models);
    free(s->queues);
    sim_bits_free(&s->central_bits);
    sim_iheap_free(&s->central_heads);
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
    for (int i = 0; i < s->nres_blocks; i++)
        free(s->res_blocks[i]);
    free(s->res_blocks);
    sim_bits_free(&s->free_set);
    for (int j = 0; s->run_le && j < s->run_classes; j++)
        sim_bits_free(&s->run_le[j]);
    free(s->run_le);
    for (int m = 0; s->run_of && m < s->nmodels; m++)
        sim_bits_free(&s->run_of[m]);
    free(s->run_of);
    free(s->run_brief);
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
    gsl_rng_free(s->host_rng);
    sim_pool_free(&s->req_pool);
    sim_pool_free(&s->batch_pool);
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

/* What policies plan with on a GPU kind includes the host's time around a batch
 * (host_us_per_batch): the planning table gets its own copy where it was the profile's. */
static int plan_host(struct sim *s, int m, int k)
{
    int i = m * SIM_MAX_KINDS + k;
    for (int n = 0; n < (s->cfg->nnodes > 0 ? s->cfg->nnodes : 1); n++)
        if (s->node_cpu_kind[n] == k)
            return 0;                   /* a CPU kind: no GPU launch */
    if (s->host_ns == 0)
        return 0;
    int maxb = s->models[m].max_batch;
    if (s->plat[i] == s->lat[i]) {
        int64_t *p = malloc(((size_t)maxb + 2) * sizeof *p);
        if (!p)
            return SIM_ENOMEM;
        memcpy(p, s->lat[i], ((size_t)maxb + 2) * sizeof *p);
        s->plat[i] = p;
    }
    for (int b = 1; b <= maxb + 1; b++)
        s->plat[i][b] += s->host_ns;   /* both saturate far below overflow (sim_time.h) */
    return 0;
}

/* ---------------------------------------------------------------- the loop */

static void begin_stop(struct sim *s)
{
    s->stopping = true;
    sim_llm_stop(s);
    for (int m = 0; m < s->nmodels; m++) {
        while (s->queues[m].len)
            sim_queue_drop_head(s, m);
        for (int e = 0; e < s->nexecs; e++)
            while (s->xi[e].q && s->xi[e].q[m].len)
                sim_xqueue_drop_head(s, e, m);
    }
}

bool sim_out_of_memory(const struct sim *s)
{
    return s->src_err == SIM_ENOMEM;
}

int sim_fail_nomem(struct sim *s, const char *what)
{
    if (!s->src_err)
        s->src_err = sim_err_set(SIM_ENOMEM, "out of memory %s at t = %.3f s: the run is "
                                 "stopped and not written", what, (double)s->now / 1e9);
    return SIM_ENOMEM;
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
        const struct sim_event *nx = s->nexecs > 1024 ? sim_heap_peek(&s->heap) : NULL;
        if (nx && nx->type == EV_BATCH_DONE) {
            /* the next completion's executor records, read while this event runs: in a large
             * cluster they are rarely in a cache (10,000 GPUs: shepherd 8-12% faster, fifo
             * 5-10%, clockwork 4-5%); in a small one they are, and the peek would only cost */
            __builtin_prefetch(&s->xi[nx->idx]);
            __builtin_prefetch(&s->execs[nx->idx]);
        }
        switch (ev.type) {
        case EV_ARRIVAL: sim_req_arrival(s, (int)ev.idx); break;
        case EV_DELIVER: sim_req_deliver(s, (struct sim_request *)(uintptr_t)ev.gen); break;
        case EV_BATCH_DONE: sim_batch_on_done(s, (int)ev.idx, ev.gen); break;
        case EV_TICK: if (!s->stopping && s->now <= s->duration) sim_on_tick(s); break;
        case EV_LOAD_DONE: sim_load_on_done(s, (int)ev.idx, (int)(ev.gen >> 1), ev.gen & 1); break;
        case EV_EXEC_UP: sim_exec_up(s, (int)ev.idx); break;
        case EV_BATCH_START: sim_batch_on_start(s, (int)ev.idx, ev.gen); break;
        case SIM_EV_JOB: sim_jobs_event(s, (int)ev.idx, ev.gen); break;
        case SIM_EV_NB: sim_shares_event(s, (int)ev.idx, ev.gen); break;
        case SIM_EV_LLM: sim_llm_event(s, (int)ev.idx, ev.gen); break;
        case SIM_EV_LLM_KV: sim_llm_kv_in(s, (int)ev.idx, ev.gen); break;
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
const struct sim_exec *sim_exec(const struct sim *s, int e)
{
    if (s->view < 0 || !s->exec_view || s->exec_view[e] == s->view)
        return &s->execs[e];
    *s->shadow = s->execs[e];              /* another view's: down, as far as this one sees */
    s->shadow->state = SIM_EXEC_DOWN;
    return s->shadow;
}

bool sim_mine_model(const struct sim *s, int m)
{
    return s->view < 0 || !s->model_view || s->model_view[m] == s->view;
}

bool sim_mine_exec(const struct sim *s, int e)
{
    return s->view < 0 || !s->exec_view || s->exec_view[e] == s->view;
}

int sim_view_current(const struct sim *s) { return s->view; }

void sim_view_set(struct sim *s, int v) { s->view = v; }

int sim_view_assign(struct sim *s, int v, const int *models, int nm, const int *execs, int ne)
{
    if (v < 0 || v > INT16_MAX)
        return sim_err_set(SIM_EINVAL, "view %d out of range", v);
    if (!s->exec_view) {
        s->exec_view = malloc((size_t)s->max_execs * sizeof *s->exec_view);
        s->model_view = malloc((size_t)s->nmodels * sizeof *s->model_view);
        s->shadow = malloc(sizeof *s->shadow);
        if (!s->exec_view || !s->model_view || !s->shadow)
            return SIM_ENOMEM;
        memset(s->exec_view, 0xff, (size_t)s->max_execs * sizeof *s->exec_view);
        memset(s->model_view, 0xff, (size_t)s->nmodels * sizeof *s->model_view);
    }
    for (int i = 0; i < nm; i++) {
        if (models[i] < 0 || models[i] >= s->nmodels || s->model_view[models[i]] >= 0)
            return sim_err_set(SIM_EINVAL, "model %d: out of range or in another view",
                               models[i]);
        s->model_view[models[i]] = (int16_t)v;
    }
    for (int i = 0; i < ne; i++) {
        if (execs[i] < 0 || execs[i] >= s->nexecs || s->exec_view[execs[i]] >= 0)
            return sim_err_set(SIM_EINVAL, "executor %d: out of range or in another view",
                               execs[i]);
        s->exec_view[execs[i]] = (int16_t)v;
    }
    return 0;
}
int64_t sim_duration_ns(const struct sim *s) { return s->duration; }

int sim_check_period(const struct sim *s, const char *path, double period_s, double max_firings)
{
    double run_s = (double)s->stop_at / 1e9, least = run_s / max_firings;
    if (least < 1e-9)
        least = 1e-9;
    if (period_s >= least)
        return 0;
    return sim_err_set(SIM_EINVAL, "%s: expected a period of at least %g s (at most %.0e firings "
                       "over the run's %g s, duration and drain), got %.15g", path, least,
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
int64_t sim_resp_delay_ns(const struct sim *s, int m)
{
    return s->resp_ns + s->models[m].stack_ns;
}

int sim_frontend_count(const struct sim *s) { return s->cfg->frontends; }
