/* wl_replay — trace records to arrivals: intervals, window, gaps, scaling, arrival process,
 * models (see wl_replay.h for the pipeline). Everything streams: the state is a few
 * intervals' worth of per-stream counts, whatever the trace's length. */
#include "wl_replay.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rstat.h>

#include "sim_config.h"
#include "sim_err.h"
#include "sim_json.h"
#include "sim_rng.h"
#include "wl_arrival.h"

struct iv {                      /* an interval (dt > 0) or a request (dt == 0), trace time */
    double t, dt, tot, cv, size;
    double *c;                   /* [nstreams] */
};

struct wl_replay {
    const struct sim_config *cfg;
    const struct wl_trace_cfg *tc;
    struct trace_reader *rd;
    int ns, nm;
    int *stream_model;
    bool single;
    double scale;                /* rate_scale x load scale */
    /* layer A: raw intervals */
    struct trace_rec peek;
    bool have_peek, eof;
    gsl_rstat_workspace *rstat;
    /* layer B: window and gaps */
    double lo, hi;               /* window, trace seconds */
    double prev_end, prev_t, prev_dt;
    bool have_prev, seen, hole_open, hole_missing;
    double hole_lo;
    double *prev_rate, *next_rate;   /* [ns] per trace second */
    struct iv held;
    bool have_held;
    int fill_n, fill_i;
    double fill_t0, fill_dt, fill_end;
    double *fill_a;              /* [ns] rates before the gap (next_rate: after) */
    double win_next;             /* cv windows: end of the last one emitted */
    bool done;
    double offset;               /* trace seconds skipped */
    int ngaps;
    double gap_s, end_t;
    char first_gap[160];
    /* layer C: counts and arrivals */
    struct iv cur, ahead;
    bool have_ahead;
    double *cum, *mcount;        /* [ns] cumulative counts; [nm] remaining per model */
    double rem, total_c, pos, k, phase, t0_ns, len_ns, idx;
    double req_t, req_step, req_size;
    int req_copies;
    gsl_rng *rng;
    gsl_ran_discrete_t *pop;
};

static const char *const FORMATS_KEYS[] = {"format", "dir", "files", "start_s", "window_s",
    "rate_scale", "time_scale", "process", "cv", "cv_scale", "cv_window_s", "gaps",
    "zero_run_s", "map", "select", "size", "csv", "project", NULL};
static const char *const GAPS[] = {"error", "zero", "skip", "hold", "interpolate", NULL};
static const char *const PROCS[] = {"poisson", "gamma", "uniform", NULL};
static const char *const SIZES[] = {"none", "context_tokens", "generated_tokens", NULL};

/* ---------------------------------------------------------------- config */

void wl_trace_cfg_free(struct wl_trace_cfg *tc)
{
    if (!tc)
        return;
    for (int i = 0; i < tc->spec.nfiles; i++)
        free(tc->files[i]);
    for (int i = 0; i < tc->spec.nhashes; i++)
        free(tc->hashes[i]);
    for (int i = 0; i < tc->nexplicit; i++)
        free(tc->ex_hash[i]);
    free(tc->files);
    free(tc->hashes);
    free(tc->ex_hash);
    free(tc->ex_model);
    free(tc);
}

/* The folder trace files are relative to: the trace root ($SERVESIM_TRACE_DIR, which
 * servesim --trace-dir sets; else the config's folder), joined with workload.trace.dir when
 * that is relative (an absolute dir stands alone). */
static void trace_dir(const struct sim_config *cfg, const char *dir, char *out, size_t n)
{
    const char *env = getenv("SERVESIM_TRACE_DIR");
    const char *root = env && *env ? env : cfg->dir;
    if (dir && dir[0] == '/')
        snprintf(out, n, "%s", dir);
    else if (dir)
        snprintf(out, n, "%s/%s", root, dir);
    else
        snprintf(out, n, "%s", root);
}

static int parse_strings(const cJSON *arr, const char *path, char ***out, int *n)
{
    int k = cJSON_GetArraySize(arr);
    if (k < 1)
        return sim_json_expected(path, "a non-empty array of strings", arr);
    *out = calloc((size_t)k, sizeof **out);
    if (!*out)
        return SIM_ENOMEM;
    for (int i = 0; i < k; i++) {
        const cJSON *v = cJSON_GetArrayItem(arr, i);
        char p[SIM_JPATH_MAX];
        sim_jpath_idx(p, sizeof p, path, i);
        if (!cJSON_IsString(v) || !v->valuestring[0])
            return sim_json_expected(p, "a non-empty string", v);
        if (!((*out)[i] = strdup(v->valuestring)))
            return SIM_ENOMEM;
        *n = i + 1;
    }
    return 0;
}

static int model_index(const struct sim_config *cfg, const char *name)
{
    for (int m = 0; m < cfg->nmodels; m++)
        if (strcmp(cfg->models[m].name, name) == 0)
            return m;
    return -1;
}

static int parse_select(struct wl_trace_cfg *tc, const cJSON *sel)
{
    static const char *const keys[] = {"top", "hashes", "sample", "seed", NULL};
    const char *P = "workload.trace.select";
    int rc;
    long k = 0, seed = 1;
    const cJSON *h;
    if (!cJSON_IsObject(sel))
        return sim_json_expected(P, "{\"top\": K} | {\"hashes\": [...]} | {\"sample\": K, "
                                 "\"seed\": N}", sel);
    if ((rc = sim_json_keys(sel, P, keys)) || (rc = sim_json_arr(sel, P, "hashes", false, &h)))
        return rc;
    int given = !!cJSON_GetObjectItem(sel, "top") + !!h + !!cJSON_GetObjectItem(sel, "sample");
    if (given != 1)
        return sim_err_set(SIM_EINVAL, "%s: expected exactly one of top, hashes, sample; got %d",
                           P, given);
    if (cJSON_GetObjectItem(sel, "top")) {
        if ((rc = sim_json_int(sel, P, "top", true, 1, 1000000, &k)))
            return rc;
        tc->spec.select = TRACE_SEL_TOP;
    } else if (h) {
        int n = 0;
        rc = parse_strings(h, "workload.trace.select.hashes", &tc->hashes, &n);
        tc->spec.nhashes = n;
        if (rc)
            return rc;
        tc->spec.select = TRACE_SEL_HASHES;
    } else {
        if ((rc = sim_json_int(sel, P, "sample", true, 1, 1000000, &k)) ||
            (rc = sim_json_int(sel, P, "seed", false, 0, 1L << 53, &seed)))
            return rc;
        tc->spec.select = TRACE_SEL_SAMPLE;
    }
    if (cJSON_GetObjectItem(sel, "seed") && tc->spec.select != TRACE_SEL_SAMPLE)
        return sim_err_set(SIM_EINVAL, "%s.seed: only with \"sample\"", P);
    tc->spec.select_k = (int)k;
    tc->spec.sample_seed = (uint64_t)seed;
    return 0;
}

static int parse_map(const struct sim_config *cfg, struct wl_trace_cfg *tc, const cJSON *map)
{
    const char *P = "workload.trace.map";
    if (cJSON_IsString(map)) {
        if (strcmp(map->valuestring, "round_robin") == 0)
            tc->map = WL_MAP_ROUND_ROBIN;
        else if (strcmp(map->valuestring, "volume") == 0)
            tc->map = WL_MAP_VOLUME;
        else if (strcmp(map->valuestring, "popularity") == 0)
            tc->map = WL_MAP_POPULARITY;
        else
            return sim_json_expected(P, "\"round_robin\", \"volume\", \"popularity\" or "
                                     "{\"explicit\": {HASH: MODEL}}", map);
        return 0;
    }
    const cJSON *ex = cJSON_IsObject(map) ? cJSON_GetObjectItem(map, "explicit") : NULL;
    if (!cJSON_IsObject(ex) || cJSON_GetArraySize(map) != 1 || cJSON_GetArraySize(ex) < 1)
        return sim_json_expected(P, "\"round_robin\", \"volume\", \"popularity\" or "
                                 "{\"explicit\": {HASH: MODEL, ...}}", map);
    int n = cJSON_GetArraySize(ex);
    tc->ex_hash = calloc((size_t)n, sizeof *tc->ex_hash);
    tc->ex_model = calloc((size_t)n, sizeof *tc->ex_model);
    if (!tc->ex_hash || !tc->ex_model)
        return SIM_ENOMEM;
    const cJSON *e;
    cJSON_ArrayForEach(e, ex) {
        char p[SIM_JPATH_MAX];
        sim_jpath(p, sizeof p, "workload.trace.map.explicit", e->string);
        int m = cJSON_IsString(e) ? model_index(cfg, e->valuestring) : -1;
        if (m < 0)
            return sim_json_expected(p, "the name of a model in models[]", e);
        if (!(tc->ex_hash[tc->nexplicit] = strdup(e->string)))
            return SIM_ENOMEM;
        tc->ex_model[tc->nexplicit++] = m;
    }
    tc->map = WL_MAP_EXPLICIT;
    return 0;
}

static int parse_csv(struct wl_trace_cfg *tc, const cJSON *csv)
{
    static const char *const keys[] = {"time_column", "count_column", "interval_s", "header",
                                       "time_format", NULL};
    static const char *const TF[] = {"seconds", "datetime", NULL};
    const char *P = "workload.trace.csv";
    bool counts = tc->spec.format == TRACE_CSV_COUNTS;
    long tcol = 0, ccol = 1;
    int tf = 0, rc;
    tc->spec.header = true;
    tc->spec.interval_s = 0;
    if (csv && ((rc = sim_json_keys(csv, P, keys)) ||
                (rc = sim_json_int(csv, P, "time_column", false, 0, 10000, &tcol)) ||
                (rc = sim_json_int(csv, P, "count_column", false, 0, 10000, &ccol)) ||
                (rc = sim_json_num(csv, P, "interval_s", counts, SIM_J_POS, &tc->spec.interval_s)) ||
                (rc = sim_json_bool(csv, P, "header", false, &tc->spec.header)) ||
                (rc = sim_json_enum(csv, P, "time_format", false, TF, &tf))))
        return rc;
    if (counts && !csv)
        return sim_err_set(SIM_EINVAL, "%s: required for format \"csv_counts\" (at least "
                           "interval_s)", P);
    if (!counts && csv && (cJSON_GetObjectItem(csv, "count_column") ||
                           cJSON_GetObjectItem(csv, "interval_s")))
        return sim_err_set(SIM_EINVAL, "%s: count_column and interval_s are only for format "
                           "\"csv_counts\"", P);
    if (counts && tcol == ccol)
        return sim_err_set(SIM_EINVAL, "%s: time_column and count_column are both %ld", P, tcol);
    tc->spec.time_col = (int)tcol;
    tc->spec.count_col = (int)ccol;
    tc->spec.datetime = tf == 1;
    return 0;
}

static int parse_all(const struct sim_config *cfg, const cJSON *t, struct wl_trace_cfg *tc)
{
    const char *P = "workload.trace";
    const char *dir = NULL, *project = "en";
    const cJSON *files, *sel, *map, *csv;
    int fmt = 0, gaps = 0, proc = 0, size = 0, rc;
    if (!cJSON_IsObject(t))
        return sim_json_expected(P, "an object", t);
    tc->rate_scale = tc->time_scale = 1;
    tc->cv_window_s = 60;
    tc->zero_run_s = 300;
    if ((rc = sim_json_keys(t, P, FORMATS_KEYS)) ||
        (rc = sim_json_enum(t, P, "format", true, trace_format_names, &fmt)) ||
        (rc = sim_json_str(t, P, "dir", false, &dir)) ||
        (rc = sim_json_arr(t, P, "files", true, &files)) ||
        (rc = sim_json_num(t, P, "start_s", false, SIM_J_NONNEG, &tc->start_s)) ||
        (rc = sim_json_num(t, P, "window_s", false, SIM_J_NONNEG, &tc->window_s)) ||
        (rc = sim_json_num(t, P, "rate_scale", false, SIM_J_POS, &tc->rate_scale)) ||
        (rc = sim_json_num(t, P, "time_scale", false, SIM_J_POS, &tc->time_scale)) ||
        (rc = sim_json_enum(t, P, "process", false, PROCS, &proc)) ||
        (rc = sim_json_num(t, P, "cv", false, SIM_J_POS, &tc->cv)) ||
        (rc = sim_json_num(t, P, "cv_scale", false, SIM_J_POS, &tc->cv_scale)) ||
        (rc = sim_json_num(t, P, "cv_window_s", false, SIM_J_POS, &tc->cv_window_s)) ||
        (rc = sim_json_enum(t, P, "gaps", false, GAPS, &gaps)) ||
        (rc = sim_json_num(t, P, "zero_run_s", false, SIM_J_NONNEG, &tc->zero_run_s)) ||
        (rc = sim_json_obj(t, P, "select", false, &sel)) ||
        (rc = sim_json_enum(t, P, "size", false, SIZES, &size)) ||
        (rc = sim_json_obj(t, P, "csv", false, &csv)) ||
        (rc = sim_json_str(t, P, "project", false, &project)))
        return rc;
    map = cJSON_GetObjectItem(t, "map");
    tc->spec.format = (enum trace_format)fmt;
    tc->process = (enum wl_process)proc;
    tc->gaps = (enum wl_gap)gaps;
    tc->spec.size = (enum trace_size)size;
    tc->timestamps = fmt == TRACE_AZURE_LLM || fmt == TRACE_CSV_TIMESTAMPS;
    bool multi = fmt == TRACE_AZURE_FUNCTIONS;
    /* what belongs to which format */
    if (size && fmt != TRACE_AZURE_LLM)
        return sim_err_set(SIM_EINVAL, "%s.size: only for format \"azure_llm\"", P);
    if (sel && !multi)
        return sim_err_set(SIM_EINVAL, "%s.select: only for format \"azure_functions\"", P);
    if (csv && fmt != TRACE_CSV_COUNTS && fmt != TRACE_CSV_TIMESTAMPS)
        return sim_err_set(SIM_EINVAL, "%s.csv: only for formats \"csv_counts\" and "
                           "\"csv_timestamps\"", P);
    if (cJSON_GetObjectItem(t, "project") && fmt != TRACE_PROJECTCOUNTS)
        return sim_err_set(SIM_EINVAL, "%s.project: only for format \"projectcounts\"", P);
    if ((proc == WL_PROC_GAMMA) != (cJSON_GetObjectItem(t, "cv") != NULL))
        return sim_err_set(SIM_EINVAL, "%s.cv: required with process \"gamma\" and only "
                           "there", P);
    if (tc->cv_scale > 0 && !tc->timestamps)
        return sim_err_set(SIM_EINVAL, "%s.cv_scale: only for per-request traces (azure_llm, "
                           "csv_timestamps); count traces set process \"gamma\" and cv", P);
    if (tc->timestamps && tc->cv_scale == 0 &&
        (cJSON_GetObjectItem(t, "process") || cJSON_GetObjectItem(t, "cv")))
        return sim_err_set(SIM_EINVAL, "%s.process: per-request traces replay their times "
                           "exactly; a process applies only with cv_scale (refit per "
                           "cv_window_s)", P);
    if (tc->timestamps && tc->cv_scale == 0 &&
        (tc->gaps == WL_GAP_HOLD || tc->gaps == WL_GAP_INTERPOLATE))
        return sim_err_set(SIM_EINVAL, "%s.gaps: \"%s\" needs rates (a count trace, or "
                           "cv_scale); per-request traces take error, zero or skip", P,
                           GAPS[gaps]);
    if (strlen(project) >= sizeof tc->project)
        return sim_err_set(SIM_EINVAL, "%s.project: too long", P);
    snprintf(tc->project, sizeof tc->project, "%s", project);
    tc->spec.project = tc->project;
    tc->map = multi ? WL_MAP_VOLUME : WL_MAP_POPULARITY;
    if (map && (rc = parse_map(cfg, tc, map)))
        return rc;
    if (!multi && tc->map != WL_MAP_POPULARITY)
        return sim_err_set(SIM_EINVAL, "%s.map: a single-stream trace splits over models by "
                           "workload.popularity; map is for azure_functions", P);
    if (multi && tc->map == WL_MAP_POPULARITY)
        return sim_err_set(SIM_EINVAL, "%s.map: expected round_robin, volume or explicit for "
                           "azure_functions", P);
    tc->spec.select = TRACE_SEL_ALL;
    if (sel && (rc = parse_select(tc, sel)))
        return rc;
    if ((fmt == TRACE_CSV_COUNTS || fmt == TRACE_CSV_TIMESTAMPS) && (rc = parse_csv(tc, csv)))
        return rc;
    /* files, resolved against the trace folder */
    int n = 0;
    char **names = NULL;
    rc = parse_strings(files, "workload.trace.files", &names, &n);
    tc->files = calloc((size_t)(n ? n : 1), sizeof *tc->files);
    if (!rc && !tc->files)
        rc = SIM_ENOMEM;
    char base[4096];
    trace_dir(cfg, dir, base, sizeof base);
    for (int i = 0; !rc && i < n; i++) {
        size_t len = strlen(base) + strlen(names[i]) + 2;
        if (!(tc->files[i] = malloc(len))) {
            rc = SIM_ENOMEM;
            break;
        }
        snprintf(tc->files[i], len, names[i][0] == '/' ? "%.0s%s" : "%s/%s", base, names[i]);
        tc->spec.nfiles = i + 1;
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    tc->spec.files = (const char *const *)tc->files;
    tc->spec.hashes = (const char *const *)tc->hashes;
    return rc;
}

int wl_trace_cfg_parse(const struct sim_config *cfg, const cJSON *t, struct wl_trace_cfg **out)
{
    struct wl_trace_cfg *tc = calloc(1, sizeof *tc);
    *out = NULL;
    if (!tc)
        return SIM_ENOMEM;
    int rc = parse_all(cfg, t, tc);
    if (rc) {
        wl_trace_cfg_free(tc);
        return rc;
    }
    *out = tc;
    return 0;
}

/* ---------------------------------------------------------------- layer A: raw intervals */

static int raw_next(struct wl_replay *rp, struct iv *iv)
{
    const struct wl_trace_cfg *tc = rp->tc;
    struct trace_rec r;
    int rc;
    if (rp->have_peek) {
        r = rp->peek;
        rp->have_peek = false;
    } else {
        if (rp->eof)
            return 0;
        if ((rc = trace_next(rp->rd, &r)) <= 0) {
            rp->eof = true;
            return rc;
        }
    }
    memset(iv->c, 0, (size_t)rp->ns * sizeof *iv->c);
    iv->cv = 0;
    iv->size = r.size;
    if (tc->timestamps && tc->cv_scale == 0) {
        iv->t = r.t;
        iv->dt = 0;
        iv->c[0] = iv->tot = 1;
        return 1;
    }
    if (tc->timestamps) {                 /* a window of requests with its fitted CV */
        double W = tc->cv_window_s;
        double w = floor(r.t / W), last = r.t;
        if (w * W > rp->win_next + 1e-9) {    /* empty windows before it: zero counts */
            rp->peek = r;
            rp->have_peek = true;
            iv->t = rp->win_next;
            iv->dt = w * W - rp->win_next;
            iv->tot = 0;
            rp->win_next = w * W;
            return 1;
        }
        rp->win_next = (w + 1) * W;
        gsl_rstat_reset(rp->rstat);
        iv->t = w * W;
        iv->dt = W;
        iv->tot = 1;
        iv->size = 0;
        while ((rc = trace_next(rp->rd, &r)) == 1) {
            if (floor(r.t / W) != w) {
                rp->peek = r;
                rp->have_peek = true;
                break;
            }
            gsl_rstat_add(r.t - last, rp->rstat);
            last = r.t;
            iv->tot++;
        }
        if (rc < 0)
            return rc;
        if (rc == 0)
            rp->eof = true;
        double mean = gsl_rstat_mean(rp->rstat);
        if (gsl_rstat_n(rp->rstat) >= 2 && mean > 0)
            iv->cv = gsl_rstat_sd(rp->rstat) / mean * tc->cv_scale;
        iv->c[0] = iv->tot;
        return 1;
    }
    iv->t = r.t;
    iv->dt = r.dt;
    iv->c[r.stream] = r.count;
    iv->tot = r.count;
    while ((rc = trace_next(rp->rd, &r)) == 1) {
        if (r.t != iv->t) {
            rp->peek = r;
            rp->have_peek = true;
            break;
        }
        iv->c[r.stream] += r.count;
        iv->tot += r.count;
    }
    if (rc < 0)
        return rc;
    if (rc == 0)
        rp->eof = true;
    return 1;
}

/* ---------------------------------------------------------------- layer B: window, gaps */

static void copy_iv(const struct wl_replay *rp, struct iv *dst, const struct iv *src)
{
    double *c = dst->c;
    *dst = *src;
    dst->c = c;
    memcpy(c, src->c, (size_t)rp->ns * sizeof *c);
}

static void set_rates(const struct wl_replay *rp, double *rate, const struct iv *iv)
{
    for (int i = 0; i < rp->ns; i++)
        rate[i] = iv->dt > 0 ? iv->c[i] / iv->dt : 0;
}

/* A hole [lo, hi): missing data, or zero counts. Whether it is a gap, and what it becomes. */
static int resolve_hole(struct wl_replay *rp, double lo, double hi, bool missing, bool at_end)
{
    const struct wl_trace_cfg *tc = rp->tc;
    double len = hi - lo;
    if (len <= 0)
        return 0;
    bool gap = missing || (tc->zero_run_s > 0 && len >= tc->zero_run_s);
    if (!gap)
        return 0;                             /* real idle time: nothing arrives */
    if (rp->ngaps++ == 0)
        snprintf(rp->first_gap, sizeof rp->first_gap, "%.0f s of %s from t=%.0f s", len,
                 missing ? "missing data" : "zero counts", lo);
    rp->gap_s += len;
    switch (tc->gaps) {
    case WL_GAP_ERROR:
        return sim_err_set(SIM_EINVAL, "%s: the trace has a gap (%s); choose how to treat "
                           "gaps with workload.trace.gaps: zero (no traffic), skip (cut the "
                           "time out), hold (previous rate) or interpolate",
                           tc->spec.files[0], rp->first_gap);
    case WL_GAP_ZERO:
        return 0;
    case WL_GAP_SKIP:
        rp->offset += len;
        return 0;
    case WL_GAP_HOLD:
    case WL_GAP_INTERPOLATE:
        if (!rp->have_prev)
            return 0;                         /* nothing before it to hold */
        memcpy(rp->fill_a, rp->prev_rate, (size_t)rp->ns * sizeof *rp->fill_a);
        if (at_end || tc->gaps == WL_GAP_HOLD)
            memcpy(rp->next_rate, rp->prev_rate, (size_t)rp->ns * sizeof *rp->next_rate);
        rp->fill_dt = tc->gaps == WL_GAP_HOLD || rp->prev_dt <= 0 ? len : rp->prev_dt;
        rp->fill_n = (int)ceil(len / rp->fill_dt - 1e-9);
        rp->fill_i = 0;
        rp->fill_t0 = lo;
        rp->fill_end = hi;
        return 0;
    }
    return 0;
}

/* The next interval, windowed, with gaps resolved; t is shifted by the skipped time and the
 * window start. */
static int clean_next(struct wl_replay *rp, struct iv *out)
{
    const struct wl_trace_cfg *tc = rp->tc;
    int rc;
    for (;;) {
        if (rp->fill_i < rp->fill_n) {        /* a filler piece (hold, interpolate) */
            int i = rp->fill_i++;
            double t = rp->fill_t0 + i * rp->fill_dt;
            double dt = fmin(rp->fill_dt, rp->fill_end - t);
            double f = (i + 0.5) / rp->fill_n;
            out->t = t - rp->offset - rp->lo;
            out->dt = dt;
            out->tot = 0;
            out->cv = 0;
            out->size = 0;
            for (int s = 0; s < rp->ns; s++) {
                double r = rp->fill_a[s] + (rp->next_rate[s] - rp->fill_a[s]) * f;
                out->c[s] = r * dt;
                out->tot += out->c[s];
            }
            return 1;
        }
        if (rp->have_held) {
            rp->have_held = false;
            copy_iv(rp, out, &rp->held);
            return 1;
        }
        if (rp->done)
            return 0;
        struct iv *r = &rp->held;             /* read into held's storage */
        rc = raw_next(rp, r);
        if (rc < 0)
            return rc;
        double end = rc == 0 ? rp->prev_end : r->t + r->dt;
        if (rc == 1 && end <= rp->lo && !(r->dt == 0 && r->t >= rp->lo)) {
            rp->prev_end = end;               /* before the window */
            rp->prev_t = r->t;
            continue;
        }
        bool past = rc == 0 || r->t >= rp->hi;
        double tol = 1e-6 * (r->dt > 1 ? r->dt : 1);
        bool missing = !past && rp->have_prev && r->dt > 0 && r->t > rp->prev_end + tol;
        if (past) {                           /* end of the trace or of the window */
            double stop = rc == 0 ? fmin(rp->hi, rp->prev_end) : rp->hi;
            rp->done = true;
            rp->end_t = stop;
            if (tc->timestamps && tc->cv_scale == 0) {
                if (rp->have_prev && tc->zero_run_s > 0 && stop - rp->prev_t >= tc->zero_run_s &&
                    (rc = resolve_hole(rp, rp->prev_t, stop, false, true)))
                    return rc;
                continue;
            }
            bool miss = rc != 0 && rp->have_prev && rp->prev_end + tol < stop;
            double from = rp->hole_open ? rp->hole_lo : rp->prev_end;
            if ((rp->hole_open || miss) &&
                (rc = resolve_hole(rp, from, stop, rp->hole_missing || miss, true)))
                return rc;
            rp->hole_open = false;
            continue;
        }
        /* clip to the window (prorate counts of partial intervals) */
        if (r->dt > 0) {
            double a = fmax(r->t, rp->lo), b = fmin(r->t + r->dt, rp->hi);
            double f = (b - a) / r->dt;
            if (f < 1) {
                for (int s = 0; s < rp->ns; s++)
                    r->c[s] *= f;
                r->tot *= f;
                r->t = a;
                r->dt = b - a;
            }
        }
        if (!rp->seen && r->t > rp->lo + tol && r->dt > 0) {
            missing = true;                   /* the window starts before the data */
            rp->prev_end = rp->lo;
        }
        rp->seen = true;
        if (r->dt == 0) {                     /* a request: a long silence is a hole */
            double from = rp->have_prev ? rp->prev_t : rp->lo;
            if (tc->zero_run_s > 0 && r->t - from >= tc->zero_run_s &&
                (rc = resolve_hole(rp, from, r->t, false, false)))
                return rc;
            rp->have_prev = true;
            rp->prev_t = rp->prev_end = r->t;
            copy_iv(rp, out, r);
            out->t = r->t - rp->offset - rp->lo;
            return 1;
        }
        if (missing && !rp->hole_open) {
            rp->hole_open = true;
            rp->hole_lo = rp->prev_end;
            rp->hole_missing = true;
        } else if (missing) {
            rp->hole_missing = true;
        }
        if (r->tot <= 0) {                    /* zero counts: the hole goes on */
            if (!rp->hole_open) {
                rp->hole_open = true;
                rp->hole_lo = r->t;
                rp->hole_missing = false;
            }
            rp->prev_end = r->t + r->dt;
            continue;
        }
        if (rp->hole_open) {
            rp->hole_open = false;
            set_rates(rp, rp->next_rate, r);
            if ((rc = resolve_hole(rp, rp->hole_lo, r->t, rp->hole_missing, false)))
                return rc;
        }
        r->t -= rp->offset + rp->lo;
        set_rates(rp, rp->prev_rate, r);
        rp->prev_dt = r->dt;
        rp->have_prev = true;
        rp->prev_end = r->t + rp->offset + rp->lo + r->dt;
        rp->prev_t = rp->prev_end - r->dt;
        rp->have_held = true;                 /* emit after any filler */
    }
}

/* ---------------------------------------------------------------- open / close */

static int stream_models(struct wl_replay *rp)
{
    const struct wl_trace_cfg *tc = rp->tc;
    rp->stream_model = calloc((size_t)rp->ns, sizeof *rp->stream_model);
    if (!rp->stream_model)
        return SIM_ENOMEM;
    if (rp->single)
        return 0;
    for (int i = 0; i < rp->ns; i++) {
        switch (tc->map) {
        case WL_MAP_ROUND_ROBIN:
            rp->stream_model[i] = trace_stream_file_order(rp->rd, i) % rp->nm;
            break;
        case WL_MAP_VOLUME:
            rp->stream_model[i] = trace_stream_volume_rank(rp->rd, i) % rp->nm;
            break;
        default: {
            const char *h = trace_stream_name(rp->rd, i);
            int k = 0;
            while (k < tc->nexplicit && strcmp(tc->ex_hash[k], h) != 0)
                k++;
            if (k == tc->nexplicit)
                return sim_err_set(SIM_EINVAL, "workload.trace.map.explicit: the selected "
                                   "function %s has no model (select it away with "
                                   "workload.trace.select.hashes, or map it)", h);
            rp->stream_model[i] = tc->ex_model[k];
        }
        }
    }
    return 0;
}

int wl_replay_open(const struct sim_config *cfg, double load_scale, struct wl_replay **out)
{
    struct wl_replay *rp = calloc(1, sizeof *rp);
    int rc = SIM_ENOMEM;
    *out = NULL;
    if (!rp)
        return SIM_ENOMEM;
    const struct wl_trace_cfg *tc = cfg->trace;
    rp->cfg = cfg;
    rp->tc = tc;
    rp->nm = cfg->nmodels;
    rp->scale = tc->rate_scale * load_scale;
    rp->lo = tc->start_s;
    rp->hi = tc->window_s > 0 ? tc->start_s + tc->window_s : INFINITY;
    if ((rc = trace_open(&tc->spec, &rp->rd)))
        goto fail;
    rc = SIM_ENOMEM;
    rp->ns = trace_stream_count(rp->rd);
    rp->single = tc->spec.format != TRACE_AZURE_FUNCTIONS;
    size_t ns = (size_t)rp->ns;
    rp->prev_rate = calloc(ns, sizeof(double));
    rp->next_rate = calloc(ns, sizeof(double));
    rp->fill_a = calloc(ns, sizeof(double));
    rp->held.c = calloc(ns, sizeof(double));
    rp->cur.c = calloc(ns, sizeof(double));
    rp->ahead.c = calloc(ns, sizeof(double));
    rp->cum = calloc(ns, sizeof(double));
    rp->mcount = calloc((size_t)rp->nm, sizeof(double));
    rp->rstat = gsl_rstat_alloc();
    rp->rng = sim_rng_stream(cfg->seed, "trace.arrivals");
    double *shares = calloc((size_t)rp->nm, sizeof *shares);
    if (!rp->prev_rate || !rp->next_rate || !rp->fill_a || !rp->held.c || !rp->cur.c || !rp->ahead.c ||
        !rp->cum || !rp->mcount || !rp->rstat || !rp->rng || !shares) {
        free(shares);
        goto fail;
    }
    wl_popularity_shares(cfg, shares);
    rp->pop = gsl_ran_discrete_preproc((size_t)rp->nm, shares);
    free(shares);
    if (!rp->pop || (rc = stream_models(rp)))
        goto fail;
    *out = rp;
    return 0;
fail:
    wl_replay_close(rp);
    return rc ? rc : SIM_ENOMEM;
}

void wl_replay_close(struct wl_replay *rp)
{
    if (!rp)
        return;
    trace_close(rp->rd);
    free(rp->stream_model);
    free(rp->prev_rate);
    free(rp->next_rate);
    free(rp->fill_a);
    free(rp->held.c);
    free(rp->cur.c);
    free(rp->ahead.c);
    free(rp->cum);
    free(rp->mcount);
    if (rp->rstat)
        gsl_rstat_free(rp->rstat);
    gsl_rng_free(rp->rng);
    if (rp->pop)
        gsl_ran_discrete_free(rp->pop);
    free(rp);
}

int wl_replay_gaps(const struct wl_replay *rp, double *gap_s)
{
    *gap_s = rp->gap_s;
    return rp->ngaps;
}

/* ---------------------------------------------------------------- layer C: arrivals */

static int next_clean(struct wl_replay *rp, struct iv *iv)
{
    if (rp->have_ahead) {
        rp->have_ahead = false;
        copy_iv(rp, iv, &rp->ahead);
        return 1;
    }
    return clean_next(rp, iv);
}

/* Scaled counts of iv: per model into mcount (multi-stream), the total returned. */
static double scaled_counts(struct wl_replay *rp, const struct iv *iv)
{
    double total = 0;
    if (!rp->single)
        memset(rp->mcount, 0, (size_t)rp->nm * sizeof *rp->mcount);
    for (int s = 0; s < rp->ns; s++) {
        if (iv->c[s] == 0)
            continue;
        double before = floor(rp->cum[s] * rp->scale + 1e-9);
        rp->cum[s] += iv->c[s];
        double n = floor(rp->cum[s] * rp->scale + 1e-9) - before;
        total += n;
        if (!rp->single)
            rp->mcount[rp->stream_model[s]] += n;
    }
    return total;
}

/* Sets up the next interval (or request) with arrivals; 1, 0 at the end, < 0 error. */
static int load_next(struct wl_replay *rp)
{
    const struct wl_trace_cfg *tc = rp->tc;
    int rc;
    for (;;) {
        if ((rc = next_clean(rp, &rp->cur)) <= 0)
            return rc;
        struct iv *c = &rp->cur;
        double n = scaled_counts(rp, c);
        if (n <= 0)
            continue;
        double ts = tc->time_scale;
        if (c->dt == 0) {                      /* a request, n copies up to the next one */
            rp->req_t = c->t / ts * 1e9;
            rp->req_copies = (int)n;
            rp->req_size = c->size;
            rp->req_step = 0;
            if (n > 1) {
                rc = clean_next(rp, &rp->ahead);
                if (rc < 0)
                    return rc;
                rp->have_ahead = rc == 1;
                double span = rc == 1 ? (rp->ahead.t - c->t) / ts * 1e9 : 0;
                rp->req_step = span / n;
            }
            rp->rem = n;
            return 1;
        }
        rp->rem = rp->total_c = n;
        rp->pos = 0;
        rp->idx = 0;
        rp->t0_ns = c->t / ts * 1e9;
        rp->len_ns = c->dt / ts * 1e9;
        double cv = c->cv > 0 ? c->cv : tc->process == WL_PROC_GAMMA ? tc->cv : 1;
        rp->k = tc->process == WL_PROC_UNIFORM && c->cv == 0 ? 0 : 1 / (cv * cv);
        rp->phase = gsl_rng_uniform(rp->rng);
        return 1;
    }
}

static int pick_model(struct wl_replay *rp)
{
    if (rp->single)
        return (int)gsl_ran_discrete(rp->rng, rp->pop);
    double u = gsl_rng_uniform(rp->rng) * rp->rem;   /* rem counts this arrival */
    int m = 0;
    for (; m < rp->nm - 1; m++) {
        if (u < rp->mcount[m])
            break;
        u -= rp->mcount[m];
    }
    while (rp->mcount[m] <= 0 && m > 0)
        m--;
    rp->mcount[m] -= 1;
    return m;
}

int wl_replay_next(struct wl_replay *rp, int64_t *t_ns, int *model, double *size)
{
    int rc;
    if (rp->rem <= 0 && (rc = load_next(rp)) <= 0)
        return rc;
    const struct iv *c = &rp->cur;
    double t;
    if (c->dt == 0) {
        int j = rp->req_copies - (int)rp->rem;
        t = rp->req_t + j * rp->req_step;
        *size = rp->req_size;
    } else {
        double left = 1 - rp->pos;
        if (rp->k == 0)                        /* uniform: evenly spaced, random phase */
            rp->pos = (rp->idx + rp->phase) / rp->total_c;
        else if (rp->k == 1)                   /* Poisson: the next of n sorted uniforms */
            rp->pos += left * (1 - pow(gsl_rng_uniform_pos(rp->rng), 1 / rp->rem));
        else                                   /* Dirichlet(k) gaps, stick-breaking */
            rp->pos += left * gsl_ran_beta(rp->rng, rp->k, rp->k * rp->rem);
        rp->idx++;
        t = rp->t0_ns + floor(rp->pos * rp->len_ns);
        double last = rp->t0_ns + ceil(rp->len_ns) - 1;
        if (t > last)
            t = last;
        *size = 0;
    }
    *model = pick_model(rp);
    rp->rem -= 1;
    *t_ns = (int64_t)t;
    return 1;
}

/* ---------------------------------------------------------------- scan */

void wl_trace_info_free(struct wl_trace_info *info)
{
    free(info->model_total);
    info->model_total = NULL;
}

int wl_trace_scan(const struct sim_config *cfg, struct wl_trace_info *info)
{
    struct wl_replay *rp;
    memset(info, 0, sizeof *info);
    int rc = wl_replay_open(cfg, 1.0, &rp);
    if (rc)
        return rc;
    info->model_total = calloc((size_t)cfg->nmodels, sizeof *info->model_total);
    double *shares = calloc((size_t)cfg->nmodels, sizeof *shares);
    if (!info->model_total || !shares) {
        free(shares);
        wl_replay_close(rp);
        return SIM_ENOMEM;
    }
    wl_popularity_shares(cfg, shares);
    double ts = cfg->trace->time_scale, bin = -1, bin_n = 0, last_end = 0;
    while ((rc = next_clean(rp, &rp->cur)) == 1) {
        const struct iv *c = &rp->cur;
        double n = scaled_counts(rp, c);
        info->total += n;
        for (int m = 0; m < cfg->nmodels; m++)
            info->model_total[m] += rp->single ? n * shares[m] : rp->mcount[m];
        double sim_t = c->t / ts, sim_dt = c->dt / ts;
        if (c->dt > 0) {
            if (sim_dt > 0 && n / sim_dt > info->peak_rps)
                info->peak_rps = n / sim_dt;
        } else {
            double b = floor(sim_t);
            if (b != bin) {
                bin = b;
                bin_n = 0;
            }
            bin_n += n;
            if (bin_n > info->peak_rps)
                info->peak_rps = bin_n;
        }
        if (sim_t + sim_dt > last_end)
            last_end = sim_t + sim_dt;
    }
    free(shares);
    if (rc == 0) {
        /* the span: to the window's end (or the trace's), less what was skipped */
        double end = (rp->end_t - rp->lo - rp->offset) / ts;
        info->span_s = end > last_end ? end : last_end;
        if (rp->tc->timestamps && rp->tc->cv_scale == 0)
            info->span_s = last_end + 1e-9;   /* past the last request */
        info->mean_rps = info->span_s > 0 ? info->total / info->span_s : 0;
        info->ngaps = rp->ngaps;
        info->gap_s = rp->gap_s;
        snprintf(info->first_gap, sizeof info->first_gap, "%s", rp->first_gap);
        info->nstreams = rp->ns;
    }
    wl_replay_close(rp);
    if (rc)
        wl_trace_info_free(info);
    return rc;
}
