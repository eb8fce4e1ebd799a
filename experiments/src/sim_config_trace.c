/* sim_config_trace — the config's `workload.trace` section, parsed and checked into the
 * inputs' wl_trace_cfg (wl_replay.h has the pipeline, docs/config.md the keys). Trace file
 * paths resolve against the trace root ($SERVESIM_TRACE_DIR, else the config's folder). */
#include "sim_config_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "sim_json.h"

static const char *const FORMATS_KEYS[] = {"format", "dir", "files", "start_s", "window_s",
    "rate_scale", "time_scale", "process", "cv", "cv_scale", "cv_window_s", "gaps",
    "zero_run_s", "map", "select", "size", "csv", "project", "partial_window", NULL};
static const char *const GAPS[] = {"error", "zero", "skip", "hold", "interpolate", NULL};
static const char *const PROCS[] = {"poisson", "gamma", "uniform", NULL};
static const char *const SIZES[] = {"none", "context_tokens", "generated_tokens", NULL};

/* ---------------------------------------------------------------- config */

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
    const cJSON *v = sim_json_first(arr);
    for (int i = 0; i < k; i++, v = v->next) {
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
    for (int m = 0; m < cfg->world.nmodels; m++)
        if (strcmp(cfg->world.models[m].name, name) == 0)
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
        (rc = sim_json_bool(t, P, "partial_window", false, &tc->partial_window)) ||
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

int sim_config_parse_trace(const struct sim_config *cfg, const cJSON *t,
                           struct wl_trace_cfg **out)
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

