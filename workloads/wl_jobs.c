/* wl_jobs — the `jobs` and `notebooks` sections of a config: training-job kinds and arrivals,
 * notebooks (wl_jobs.h). */
#include "wl_jobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "sim_json.h"
#include "sim_param.h"

#define MAX_JOBS 100000

static int parse_kind(const cJSON *it, const char *p, struct sim_job_kind *k)
{
    static const char *const keys[] = {"name", "iterations", "iter_ms", "speedup", "cross_node",
                                       "start_s", "reconfig_s", "shrink_s", NULL};
    const char *name;
    const cJSON *sp;
    double iter_ms = 0;
    int rc;
    k->cross_node = 1;
    if (!cJSON_IsObject(it))
        return sim_json_expected(p, "{name, iterations, iter_ms, speedup, ...}", it);
    if ((rc = sim_json_keys(it, p, keys)) || (rc = sim_json_str(it, p, "name", true, &name)) ||
        (rc = sim_json_num(it, p, "iterations", true, SIM_J_POS, &k->iterations)) ||
        (rc = sim_json_num(it, p, "iter_ms", true, SIM_J_POS, &iter_ms)) ||
        (rc = sim_json_arr(it, p, "speedup", true, &sp)) ||
        (rc = sim_json_num(it, p, "cross_node", false, SIM_J_POS, &k->cross_node)) ||
        (rc = sim_json_num(it, p, "start_s", false, SIM_J_NONNEG, &k->start_s)) ||
        (rc = sim_json_num(it, p, "reconfig_s", false, SIM_J_NONNEG, &k->reconfig_s)) ||
        (rc = sim_json_num(it, p, "shrink_s", false, SIM_J_NONNEG, &k->shrink_s)))
        return rc;
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

const struct sim_param wl_jobs_keys[] = {
    {"kinds", SIM_P_HAND, .type_doc = "`[{name, iterations, iter_ms, speedup: [S(1), S(2), ...], "
     "cross_node, start_s, reconfig_s, shrink_s}]`", .def_doc = "required",
     .doc = "training jobs (DynamoML's), a second kind of work: a job of n workers (each holding "
            "a whole GPU of the ledger, worker 0 the chief) progresses at S(n) / iter_ms "
            "iterations per ms, divided by `cross_node` (>= 1, default 1) when its workers and "
            "parameter server are not all on one node; no progress for `start_s` after it is "
            "placed, `reconfig_s` after workers are added, `shrink_s` after one is removed "
            "(defaults 0). `iterations` > 0; 1 to 16 speed-ups; at most 1,000 kinds"},
    {"arrivals", SIM_P_HAND, .type_doc = "`[{kind, at_s, count, init_workers, max_workers}]`",
     .def_doc = "required", .doc = "`count` jobs (default 1) of `kind` arriving at `at_s` (default 0); 1 <= "
            "`init_workers` (default 1) <= `max_workers` (default init) <= the kind's speed-ups, "
            "and at most the cluster's GPUs. Jobs are numbered in arrival order (ties: as "
            "written). A policy places them (the engine's job API, `sim.h`: `dynamoml`); a "
            "policy that does not place jobs is refused"},
    {"end_when_done", SIM_P_BOOL, SIM_P_AT(struct sim_world, end_when_done, bool), .def = 0,
     .doc = "the run ends when the last job ends, but not before the clients' schedule is over "
            "(`workload.clients`: step_s x counts) nor within 1 s of the warm-up, and at the "
            "latest at `duration_s` (then a cap): results (rates, GPU-seconds, "
            "`runs.duration_s`) cover the run as it was; arrivals after the end are not made"},
    {NULL}};

int wl_jobs_parse(const cJSON *root, struct sim_world *w)
{
    static const char *const akeys[] = {"kind", "at_s", "count", "init_workers", "max_workers",
                                        NULL};
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
        const char *kname;
        double at = 0;
        long count = 1, init = 1, max = 0;
        sim_jpath_idx(p, sizeof p, "jobs.arrivals", i);
        if (!cJSON_IsObject(it))
            return sim_json_expected(p, "{kind, at_s, count, init_workers, max_workers}", it);
        if ((rc = sim_json_keys(it, p, akeys)) || (rc = sim_json_str(it, p, "kind", true, &kname)) ||
            (rc = sim_json_num(it, p, "at_s", false, SIM_J_NONNEG, &at)) ||
            (rc = sim_json_int(it, p, "count", false, 1, MAX_JOBS, &count)) ||
            (rc = sim_json_int(it, p, "init_workers", false, 1, SIM_JOB_MAX_WORKERS, &init)) ||
            (rc = sim_json_int(it, p, "max_workers", false, 1, SIM_JOB_MAX_WORKERS, &max)))
            return rc;
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
        if (nj + count > cap) {         /* geometric growth: many entries stay linear */
            cap = (int)(nj + count) > 2 * cap ? (int)(nj + count) : 2 * cap;
            struct sim_job_cfg *more = realloc(w->jobs, (size_t)cap * sizeof *more);
            if (!more)
                return SIM_ENOMEM;
            w->jobs = more;
        }
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

int wl_notebooks_parse(const cJSON *root, struct sim_world *w)
{
    static const char *const keys[] = {"count", "request", "limit", "idle_s", "burst_s",
                                       "window_s", "quota_ms", "fixed", NULL};
    const char *P = "notebooks";
    const cJSON *o;
    long count = 0;
    double quota_ms = 250;
    int rc;
    w->nb_request = 0.25;               /* DynamoML's experiment (limit, times: ours) */
    w->nb_limit = 1;
    w->nb_idle_s = 60;
    w->nb_burst_s = 15;
    w->nb_window_s = 10;
    if ((rc = sim_json_obj(root, "", "notebooks", false, &o)) || !o)
        return rc;
    if ((rc = sim_json_keys(o, P, keys)) ||
        (rc = sim_json_int(o, P, "count", true, 0, 10000, &count)) ||
        (rc = sim_json_num(o, P, "request", false, SIM_J_UNIT, &w->nb_request)) ||
        (rc = sim_json_num(o, P, "limit", false, SIM_J_UNIT, &w->nb_limit)) ||
        (rc = sim_json_num(o, P, "idle_s", false, SIM_J_POS, &w->nb_idle_s)) ||
        (rc = sim_json_num(o, P, "burst_s", false, SIM_J_POS, &w->nb_burst_s)) ||
        (rc = sim_json_num(o, P, "window_s", false, SIM_J_POS, &w->nb_window_s)) ||
        (rc = sim_json_num(o, P, "quota_ms", false, SIM_J_POS, &quota_ms)) ||
        (rc = sim_json_bool(o, P, "fixed", false, &w->nb_fixed)))
        return rc;
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
