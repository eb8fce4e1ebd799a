/* wl_jobs — the `jobs` and `notebooks` sections of a config: training-job kinds and arrivals,
 * notebooks (wl_jobs.h). */
#include "wl_jobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "sim_grow.h"
#include "sim_json.h"
#include "sim_param.h"

#define MAX_JOBS 100000

/* jobs.kinds[] */
struct kind_in {
    const char *name;
    double iterations, iter_ms, cross_node, start_s, reconfig_s, shrink_s;
    const cJSON *speedup;
};
#define KI(f) SIM_P_AT(struct kind_in, f, double)
static const struct sim_param KIND[] = {
    {"name", SIM_P_STR, SIM_P_AT(struct kind_in, name, const char *), .flags = SIM_P_REQUIRED,
     .doc = "unique; what `jobs.arrivals[].kind` names"},
    {"iterations", SIM_P_NUM, KI(iterations), .cons = SIM_J_POS, .flags = SIM_P_REQUIRED,
     .doc = "the job's work"},
    {"iter_ms", SIM_P_NUM, KI(iter_ms), .cons = SIM_J_POS, .flags = SIM_P_REQUIRED,
     .doc = "an iteration's time on one worker"},
    {"speedup", SIM_P_ARR, SIM_P_AT(struct kind_in, speedup, const cJSON *),
     .flags = SIM_P_REQUIRED, .type_doc = "`[S(1), S(2), ...]`, 1 to 16 numbers > 0",
     .doc = "the speed-up with 1, 2, ... workers: n workers progress at S(n) / iter_ms "
            "iterations per ms"},
    {"cross_node", SIM_P_NUM, KI(cross_node), .cons = SIM_J_POS, .def = 1, .type_doc = ">= 1",
     .doc = "the slow-down when its workers and parameter server are not all on one node"},
    {"start_s", SIM_P_NUM, KI(start_s), .cons = SIM_J_NONNEG, .def = 0,
     .doc = "no progress for this long after it is placed"},
    {"reconfig_s", SIM_P_NUM, KI(reconfig_s), .cons = SIM_J_NONNEG, .def = 0,
     .doc = "no progress for this long after workers are added"},
    {"shrink_s", SIM_P_NUM, KI(shrink_s), .cons = SIM_J_NONNEG, .def = 0,
     .doc = "no progress for this long after one is removed"},
    {NULL}};
#undef KI

static int parse_kind(const cJSON *it, const char *p, struct sim_job_kind *k)
{
    struct kind_in in;
    int rc;
    if (!cJSON_IsObject(it))
        return sim_json_expected(p, "{name, iterations, iter_ms, speedup, ...}", it);
    if ((rc = sim_params_read(KIND, it, p, &in)))
        return rc;
    const char *name = in.name;
    const cJSON *sp = in.speedup;
    double iter_ms = in.iter_ms;
    k->iterations = in.iterations;
    k->cross_node = in.cross_node;
    k->start_s = in.start_s;
    k->reconfig_s = in.reconfig_s;
    k->shrink_s = in.shrink_s;
    if (strlen(name) >= SIM_NAME_MAX)
        return sim_err_set(SIM_EINVAL, "%s.name: expected at most %d characters", p,
                           SIM_NAME_MAX - 1);
    snprintf(k->name, sizeof k->name, "%s", name);
    k->iter_s = iter_ms / 1e3;
    if (k->cross_node < 1)
        return sim_err_set(SIM_EINVAL, "%s.cross_node: expected a slowdown >= 1, got %.15g", p,
                           k->cross_node);
    int n = cJSON_GetArraySize(sp);
    if (n < 1 || n > SIM_JOB_MAX_WORKERS)
        return sim_err_set(SIM_EINVAL, "%s.speedup: expected 1 to %d numbers (the speed-up with "
                           "1, 2, ... workers), got %d", p, SIM_JOB_MAX_WORKERS, n);
    const cJSON *v = sim_json_first(sp);
    for (int i = 0; i < n; i++, v = v->next) {
        char q[SIM_JPATH_MAX + 16];
        snprintf(q, sizeof q, "%s.speedup[%d]", p, i);
        if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || v->valuedouble > 1e6)
            return sim_json_expected(q, "a positive number", v);
        k->speedup[i] = v->valuedouble;
    }
    k->nspeedup = n;
    return 0;
}

/* Sorting by arrival time, the order written breaking ties (qsort is not stable). */
struct order {
    double at;
    int i;
};

static int by_arrival(const void *a, const void *b)
{
    const struct order *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static int sort_jobs(struct sim_world *w)
{
    int n = w->njobs;
    struct order *o = malloc((size_t)(n ? n : 1) * sizeof *o);
    struct sim_job_cfg *sorted = malloc((size_t)(n ? n : 1) * sizeof *sorted);
    if (!o || !sorted) {
        free(o);
        free(sorted);
        return SIM_ENOMEM;
    }
    for (int i = 0; i < n; i++)
        o[i] = (struct order){w->jobs[i].arrival_s, i};
    qsort(o, (size_t)n, sizeof *o, by_arrival);
    for (int i = 0; i < n; i++)
        sorted[i] = w->jobs[o[i].i];
    free(o);
    free(w->jobs);
    w->jobs = sorted;
    return 0;
}

/* jobs.arrivals[] */
struct arrival_in {
    const char *kind;
    double at_s;
    long count, init_workers, max_workers;
};
#define AI(f) SIM_P_AT(struct arrival_in, f, long)
static const struct sim_param ARRIVAL[] = {
    {"kind", SIM_P_STR, SIM_P_AT(struct arrival_in, kind, const char *),
     .flags = SIM_P_REQUIRED, .doc = "a `jobs.kinds[].name`"},
    {"at_s", SIM_P_NUM, SIM_P_AT(struct arrival_in, at_s, double), .cons = SIM_J_NONNEG,
     .def = 0, .type_doc = ">= 0 and <= 1e8", .doc = "when they arrive"},
    {"count", SIM_P_LONG, AI(count), .lo = 1, .hi = MAX_JOBS, .def = 1,
     .doc = "jobs arriving together (at most 100,000 in all)"},
    {"init_workers", SIM_P_LONG, AI(init_workers), .lo = 1, .hi = SIM_JOB_MAX_WORKERS, .def = 1,
     .doc = "workers at the start; at most the cluster's GPUs"},
    {"max_workers", SIM_P_LONG, AI(max_workers), .lo = 1, .hi = SIM_JOB_MAX_WORKERS,
     .def_doc = "`init_workers`", .doc = "the most a scheduler may give it, at most the kind's "
                                          "speed-ups"},
    {NULL}};
#undef AI

const struct sim_param wl_jobs_keys[] = {
    {"kinds", SIM_P_SECTION, .rows = KIND, .flags = SIM_P_EACH, .def_doc = "required",
     .doc = "training jobs (DynamoML's), a second kind of work: a job of n workers (each "
            "holding a whole GPU of the ledger, worker 0 the chief) progresses at S(n) / "
            "iter_ms iterations per ms (rows below); at most 1,000 kinds"},
    {"arrivals", SIM_P_SECTION, .rows = ARRIVAL, .flags = SIM_P_EACH, .def_doc = "required",
     .doc = "`count` jobs of `kind` arriving at `at_s`. Jobs are numbered in arrival order "
            "(ties: as written). A policy places them (the engine's job API, `sim.h`: "
            "`dynamoml`); a policy that does not place jobs is refused"},
    {"end_when_done", SIM_P_BOOL, SIM_P_AT(struct sim_world, end_when_done, bool), .def = 0,
     .doc = "the run ends when the last job ends, but not before the clients' schedule is over "
            "(`workload.clients`: step_s x counts) nor within 1 s of the warm-up, and at the "
            "latest at `duration_s` (then a cap): results (rates, GPU-seconds, "
            "`runs.duration_s`) cover the run as it was; arrivals after the end are not made"},
    {NULL}};

int wl_jobs_parse(const cJSON *root, struct sim_world *w)
{
    const cJSON *o, *kinds, *arrs;
    int rc;
    if ((rc = sim_json_obj(root, "", "jobs", false, &o)) || !o)
        return rc;
    if ((rc = sim_params_read(wl_jobs_keys, o, "jobs", w)) ||
        (rc = sim_json_arr(o, "jobs", "kinds", true, &kinds)) ||
        (rc = sim_json_arr(o, "jobs", "arrivals", true, &arrs)))
        return rc;
    int nk = cJSON_GetArraySize(kinds), total_gpus = 0;
    for (int n = 0; n < w->nnodes; n++)
        total_gpus += w->nodes[n].gpus;
    if (nk == 0 || nk > WL_MAX_JOB_KINDS)
        return sim_err_set(SIM_EINVAL, "jobs.kinds: expected 1 to %d kinds, got %d",
                           WL_MAX_JOB_KINDS, nk);
    if (!(w->job_kinds = calloc((size_t)nk, sizeof *w->job_kinds)))
        return SIM_ENOMEM;
    w->njob_kinds = nk;
    const cJSON *ki = sim_json_first(kinds);
    for (int i = 0; i < nk; i++, ki = ki->next) {
        char p[SIM_JPATH_MAX];
        sim_jpath_idx(p, sizeof p, "jobs.kinds", i);
        if ((rc = parse_kind(ki, p, &w->job_kinds[i])))
            return rc;
        for (int k = 0; k < i; k++)
            if (!strcmp(w->job_kinds[k].name, w->job_kinds[i].name))
                return sim_err_set(SIM_EINVAL, "%s.name: kind \"%s\" appears twice", p,
                                   w->job_kinds[i].name);
    }
    int na = cJSON_GetArraySize(arrs), nj = 0, cap = 0;
    const cJSON *it = sim_json_first(arrs);
    for (int i = 0; i < na; i++, it = it->next) {
        char p[SIM_JPATH_MAX];
        struct arrival_in in;
        sim_jpath_idx(p, sizeof p, "jobs.arrivals", i);
        if (!cJSON_IsObject(it))
            return sim_json_expected(p, "{kind, at_s, count, init_workers, max_workers}", it);
        if ((rc = sim_params_read(ARRIVAL, it, p, &in)))
            return rc;
        const char *kname = in.kind;
        double at = in.at_s;
        long count = in.count, init = in.init_workers, max = in.max_workers;
        int k = 0;
        while (k < nk && strcmp(w->job_kinds[k].name, kname) != 0)
            k++;
        if (k == nk)
            return sim_err_set(SIM_EINVAL, "%s.kind: no job kind \"%s\" in jobs.kinds", p, kname);
        if (!max)
            max = init;
        if (init > max)
            return sim_err_set(SIM_EINVAL, "%s.init_workers: expected at most max_workers (%ld), "
                               "got %ld", p, max, init);
        if (max > w->job_kinds[k].nspeedup)
            return sim_err_set(SIM_EINVAL, "%s.max_workers: kind \"%s\" gives speed-ups for up "
                               "to %d workers, got %ld", p, kname, w->job_kinds[k].nspeedup, max);
        if (init > total_gpus)
            return sim_err_set(SIM_EINVAL, "%s.init_workers: the cluster has %d GPUs, got %ld "
                               "(each worker holds one)", p, total_gpus, init);
        if (at > 1e8)
            return sim_err_set(SIM_EINVAL, "%s.at_s: expected at most 1e8 s, got %.15g", p, at);
        if (nj + count > MAX_JOBS)
            return sim_err_set(SIM_EINVAL, "%s.count: at most %d jobs in all", p, MAX_JOBS);
        if ((rc = sim_grow(&w->jobs, &cap, nj + count, sizeof *w->jobs, 16)))
            return rc;                  /* geometric growth: many entries stay linear */
        for (long c = 0; c < count; c++)
            w->jobs[nj++] = (struct sim_job_cfg){k, at, (int)init, (int)max};
        w->njobs = nj;
    }
    return nj ? sort_jobs(w) : 0;
}

void wl_jobs_free(struct sim_world *w)
{
    free(w->job_kinds);
    free(w->jobs);
    w->job_kinds = NULL;
    w->jobs = NULL;
    w->njob_kinds = w->njobs = 0;
}

/* notebooks; the defaults are DynamoML's experiment (limit, times: ours) */
struct notebooks_in {
    int count;
    double request, limit, idle_s, burst_s, window_s, quota_ms;
    bool fixed;
};
#define NB(f) SIM_P_AT(struct notebooks_in, f, double)
const struct sim_param wl_notebooks_keys[] = {
    {"count", SIM_P_INT, SIM_P_AT(struct notebooks_in, count, int), .lo = 0, .hi = 10000,
     .flags = SIM_P_REQUIRED, .doc = "notebooks, up the whole run"},
    {"request", SIM_P_NUM, NB(request), .cons = SIM_J_UNIT, .def = 0.25,
     .type_doc = "in [0.001, 1], at most `limit`",
     .doc = "`dynamoml` with `sharing`: the share of a GPU each claims (else a whole GPU)"},
    {"limit", SIM_P_NUM, NB(limit), .cons = SIM_J_UNIT, .def = 1,
     .doc = "never above `limit` x window of a GPU's time (1: no cap)"},
    {"idle_s", SIM_P_NUM, NB(idle_s), .cons = SIM_J_POS, .def = 60,
     .doc = "idle periods: exponential, this mean"},
    {"burst_s", SIM_P_NUM, NB(burst_s), .cons = SIM_J_POS, .def = 15,
     .doc = "bursts of GPU work: exponential, this mean of a whole GPU's time"},
    {"window_s", SIM_P_NUM, NB(window_s), .cons = SIM_J_POS, .def = 10,
     .doc = "the window over which a GPU's notebooks' use is compared with their requests"},
    {"quota_ms", SIM_P_NUM, NB(quota_ms), .cons = SIM_J_POS, .def = 250,
     .doc = "how long a notebook holds its GPU's token at a turn"},
    {"fixed", SIM_P_BOOL, SIM_P_AT(struct notebooks_in, fixed, bool), .def = 0,
     .doc = "idle periods and bursts exactly the means"},
    {NULL}};
#undef NB

int wl_notebooks_parse(const cJSON *root, struct sim_world *w)
{
    const char *P = "notebooks";
    const cJSON *o;
    struct notebooks_in in;
    int rc;
    sim_params_defaults(wl_notebooks_keys, &in);     /* absent: these, and no notebook */
    if ((rc = sim_json_obj(root, "", "notebooks", false, &o)) ||
        (o && (rc = sim_params_read(wl_notebooks_keys, o, P, &in))))
        return rc;
    w->nb_request = in.request;
    w->nb_limit = in.limit;
    w->nb_idle_s = in.idle_s;
    w->nb_burst_s = in.burst_s;
    w->nb_window_s = in.window_s;
    w->nb_fixed = in.fixed;
    double quota_ms = in.quota_ms;
    long count = in.count;
    if (!o)
        return 0;
    if (w->nb_request <= 0 || w->nb_request * 1000 < 1)
        return sim_err_set(SIM_EINVAL, "notebooks.request: expected a fraction of a GPU in "
                           "[0.001, 1], got %.15g", w->nb_request);
    if (w->nb_limit < w->nb_request)
        return sim_err_set(SIM_EINVAL, "notebooks.request: expected at most the limit (%g), "
                           "got %.15g", w->nb_limit, w->nb_request);
    if (w->nb_idle_s > 1e8 || w->nb_burst_s > 1e8 || w->nb_window_s > 1e8 || quota_ms > 1e11)
        return sim_err_set(SIM_EINVAL, "notebooks: times at most 1e8 s");
    w->nb_quota_s = quota_ms / 1e3;
    w->nnotebooks = (int)count;
    return 0;
}
