/* sim_config_trace — the config's `workload.trace` section, parsed and checked into the
 * inputs' wl_trace_cfg (wl_replay.h has the pipeline, docs/config.md the keys). Trace file
 * paths resolve against the trace root ($SERVESIM_TRACE_DIR, else the config's folder). */
#include "sim_config_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "sim_json.h"
#include "sim_param.h"

static const char *const GAPS[] = {"error", "zero", "skip", "hold", "interpolate", NULL};
static const char *const PROCS[] = {"poisson", "gamma", "uniform", NULL};
static const char *const SIZES[] = {"none", "context_tokens", "generated_tokens", NULL};

/* workload.trace.select: exactly one of top, hashes, sample (with its seed) */
struct select_in {
    const cJSON *hashes;
    long top, sample, seed;
};
static const struct sim_param SELECT[] = {
    {"top", SIM_P_HAND, .type_doc = "integer in [1, 1000000]", .def_doc = "",
     .doc = "the K largest functions by volume over all files"},
    {"hashes", SIM_P_ARR, SIM_P_AT(struct select_in, hashes, const cJSON *),
     .type_doc = "array of strings", .doc = "those functions (HashFunction)"},
    {"sample", SIM_P_HAND, .type_doc = "integer in [1, 1000000]", .def_doc = "",
     .doc = "K functions drawn at random"},
    {"seed", SIM_P_HAND, .type_doc = "integer in [0, 2^53]", .def_doc = "1",
     .doc = "`sample`'s draw"},
    {NULL}};

/* workload.trace.csv */
static const char *const TIME_FORMATS[] = {"seconds", "datetime", NULL};
struct csv_in {
    int time_column, count_column, time_format;
    double interval_s;
    bool header;
};
#define CV(f, type) SIM_P_AT(struct csv_in, f, type)
static const struct sim_param CSV[] = {
    {"time_column", SIM_P_INT, CV(time_column, int), .lo = 0, .hi = 10000, .def = 0,
     .doc = "the column of the time"},
    {"count_column", SIM_P_INT, CV(count_column, int), .lo = 0, .hi = 10000, .def = 1,
     .doc = "`csv_counts`: the column of the count"},
    {"interval_s", SIM_P_NUM, CV(interval_s, double), .cons = SIM_J_POS,
     .def_doc = "required with `csv_counts`", .doc = "`csv_counts`: the interval a count covers"},
    {"header", SIM_P_BOOL, CV(header, bool), .def = 1, .doc = "the first line names columns"},
    {"time_format", SIM_P_ENUM, SIM_P_AT_ENUM(struct csv_in, time_format),
     .choices = TIME_FORMATS, .doc = "seconds, or \"YYYY-MM-DD hh:mm:ss[.f]\""},
    {NULL}};
#undef CV

/* workload.trace as given; parse_all turns it into the inputs' wl_trace_cfg */
struct trace_in {
    int format, process, gaps, size;
    const char *dir, *project;
    const cJSON *files;
    double start_s, window_s, rate_scale, time_scale, cv, cv_scale, cv_window_s, zero_run_s;
    bool partial_window;
    int block_tokens;
};
#define TI(f, type) SIM_P_AT(struct trace_in, f, type)
#define TE(f) SIM_P_AT_ENUM(struct trace_in, f)
const struct sim_param sim_config_trace_keys[] = {
    {"format", SIM_P_ENUM, TE(format), .choices = trace_format_names, .flags = SIM_P_REQUIRED,
     .doc = "the trace's format (`traces/README.md`)"},
    {"files", SIM_P_ARR, TI(files, const cJSON *), .flags = SIM_P_REQUIRED,
     .type_doc = "array of strings", .doc = "in replay order (day files, hourly files); relative to the trace folder"},
    {"dir", SIM_P_STR, TI(dir, const char *), .doc = "trace folder: relative to the trace root (`--trace-dir` / `$SERVESIM_TRACE_DIR`, "
            "else the config's folder), or absolute"},
    {"start_s", SIM_P_NUM, TI(start_s, double), .cons = SIM_J_NONNEG, .def = 0,
     .doc = "window of trace time (seconds from its first record; Azure Functions: from minute 0 "
            "of the first day); partial intervals are prorated. A window the rows do not cover "
            "(it starts before the first or ends after the last, by more than 1 s for "
            "per-request traces) is an error that says what they cover"},
    {"window_s", SIM_P_NUM, TI(window_s, double), .cons = SIM_J_NONNEG, .def = 0,
     .def_doc = "0 = to the end", .doc = "the window's length (`start_s`)"},
    {"partial_window", SIM_P_BOOL, TI(partial_window, bool), .def = 0,
     .doc = "true: a window the rows cover only in part is answered for the part covered, with a "
            "warning in the answer (`run`/`goodput` on stderr, `plan` in its text and `warning` "
            "in its JSON)"},
    {"rate_scale", SIM_P_NUM, TI(rate_scale, double), .cons = SIM_J_POS, .def = 1,
     .doc = "multiplies counts: per stream, `floor(s x cumulative)` differences, so a total "
            "becomes `floor(s x total)` exactly; per-request traces thin by the same rule or (s "
            "> 1) spread the copies evenly up to the next request. The goodput search's load "
            "scale multiplies it"},
    {"time_scale", SIM_P_NUM, TI(time_scale, double), .cons = SIM_J_POS, .def = 1,
     .doc = "trace seconds per simulated second: 48 replays a day in 30 minutes (and multiplies "
            "every rate by 48)"},
    {"process", SIM_P_ENUM, TE(process), .choices = PROCS, .doc = "count traces: arrivals inside each interval conditioned on its count: `poisson` "
            "(sorted uniforms), `gamma` (+ `cv`: Dirichlet gaps with that CV), `uniform` (evenly "
            "spaced, random phase). Counts per interval are always exact"},
    {"cv", SIM_P_NUM, TI(cv, double), .cons = SIM_J_POS, .def_doc = "required with `gamma`",
     .doc = "`process: \"gamma\"`: the gaps' coefficient of variation"},
    {"cv_scale", SIM_P_NUM, TI(cv_scale, double), .cons = SIM_J_POS, .def_doc = "off",
     .doc = "per-request traces: refit each window's count and inter-arrival CV and regenerate "
            "it as a Gamma process with CV x `cv_scale` (AlpaServe's rescaling); without it "
            "timestamps replay exactly"},
    {"cv_window_s", SIM_P_NUM, TI(cv_window_s, double), .cons = SIM_J_POS, .def = 60,
     .doc = "the window `cv_scale` refits"},
    {"gaps", SIM_P_ENUM, TE(gaps), .choices = GAPS, .doc = "missing rows (time jumps) and zero-count runs of at least `zero_run_s` are gaps, "
            "never silent idle time: `error` (the config is refused, naming the first gap), "
            "`zero` (no traffic), `skip` (cut the time out), `hold` (the rate before it), "
            "`interpolate` (linear between the rates around it; count traces). Gaps met are "
            "counted in the results (`runs.trace_gaps`, `trace_gap_s`)"},
    {"zero_run_s", SIM_P_NUM, TI(zero_run_s, double), .cons = SIM_J_NONNEG, .def = 300,
     .doc = "shorter zero runs are real idle time; 0 turns zero-run detection off"},
    {"select", SIM_P_SECTION, .rows = SELECT, .def_doc = "all",
     .doc = "`azure_functions`: the functions replayed, by exactly one of `top`, `hashes`, "
            "`sample`"},
    {"map", SIM_P_HAND, .type_doc = "`volume`, `round_robin`, `popularity` or "
     "`{\"explicit\": {HASH: MODEL}}`", .def_doc = "`volume` (`azure_functions`), else "
     "`popularity`", .doc = "`azure_functions`: functions onto models by `volume` rank, `round_robin` (file "
            "order), or `{\"explicit\": {HASH: MODEL}}`; each arrival's model is drawn without "
            "replacement from the interval's per-model counts, so they are exact too. "
            "Single-stream traces split by `workload.popularity`"},
    {"size", SIM_P_ENUM, TE(size), .choices = SIZES, .doc = "`azure_llm`: `context_tokens` or `generated_tokens` as the request's size"},
    {"csv", SIM_P_SECTION, .rows = CSV, .def_doc = "required with `csv_counts`",
     .doc = "`csv_counts` and `csv_timestamps`: the columns and their form"},
    {"project", SIM_P_STR, TI(project, const char *), .sdef = "en", .doc = "`projectcounts`: which project line"},
    {"block_tokens", SIM_P_INT, TI(block_tokens, int), .lo = 1, .hi = 1 << 20, .def = 512,
     .doc = "`mooncake`: the prompt tokens each of a row's `hash_ids` stands for (the block size "
            "the trace was hashed with; Mooncake's releases: 512)"},
    {NULL}};
#undef TI
#undef TE

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
    const char *P = "workload.trace.select";
    int rc;
    long k = 0, seed = 1;
    struct select_in in;
    if (!cJSON_IsObject(sel))
        return sim_json_expected(P, "{\"top\": K} | {\"hashes\": [...]} | {\"sample\": K, "
                                 "\"seed\": N}", sel);
    if ((rc = sim_params_read(SELECT, sel, P, &in)))
        return rc;
    const cJSON *h = in.hashes;
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
    const char *P = "workload.trace.csv";
    bool counts = tc->spec.format == TRACE_CSV_COUNTS;
    struct csv_in in;
    int rc;
    if ((rc = sim_params_read(CSV, csv, P, &in)) ||
        (csv && counts && (rc = sim_json_num(csv, P, "interval_s", true, SIM_J_POS, &in.interval_s))))
        return rc;
    long tcol = in.time_column, ccol = in.count_column;
    int tf = in.time_format;
    tc->spec.header = in.header;
    tc->spec.interval_s = in.interval_s;
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

/* workload.trace.files, each resolved against the trace folder (trace_dir), into tc. */
int sim_config_trace_files(const struct sim_config *cfg, const cJSON *files, const char *path,
                           const char *dir, char ***out, int *nout)
{
    int rc;
    int n = 0;
    char **names = NULL;
    rc = parse_strings(files, path, &names, &n);
    char **paths = calloc((size_t)(n ? n : 1), sizeof *paths);
    if (!rc && !paths)
        rc = SIM_ENOMEM;
    char base[4096];
    trace_dir(cfg, dir, base, sizeof base);
    *nout = 0;
    for (int i = 0; !rc && i < n; i++) {
        size_t len = strlen(base) + strlen(names[i]) + 2;
        if (!(paths[i] = malloc(len))) {
            rc = SIM_ENOMEM;
            break;
        }
        snprintf(paths[i], len, names[i][0] == '/' ? "%.0s%s" : "%s/%s", base, names[i]);
        *nout = i + 1;
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    *out = paths;
    return rc;
}

static int resolve_files(const struct sim_config *cfg, struct wl_trace_cfg *tc,
                         const cJSON *files, const char *dir)
{
    int rc = sim_config_trace_files(cfg, files, "workload.trace.files", dir, &tc->files,
                                    &tc->spec.nfiles);
    tc->spec.files = (const char *const *)tc->files;
    tc->spec.hashes = (const char *const *)tc->hashes;
    return rc;
}

static int parse_all(const struct sim_config *cfg, const cJSON *t, struct wl_trace_cfg *tc)
{
    const char *P = "workload.trace";
    const cJSON *map;
    struct trace_in in;
    int rc;
    if (!cJSON_IsObject(t))
        return sim_json_expected(P, "an object", t);
    const cJSON *sel, *csv;             /* the sections, read by their parsers below */
    if ((rc = sim_params_read(sim_config_trace_keys, t, P, &in)) ||
        (rc = sim_json_obj(t, P, "select", false, &sel)) ||
        (rc = sim_json_obj(t, P, "csv", false, &csv)))
        return rc;
    const char *dir = in.dir, *project = in.project;
    const cJSON *files = in.files;
    int fmt = in.format, gaps = in.gaps, proc = in.process, size = in.size;
    tc->start_s = in.start_s;
    tc->window_s = in.window_s;
    tc->partial_window = in.partial_window;
    tc->rate_scale = in.rate_scale;
    tc->time_scale = in.time_scale;
    tc->cv = in.cv;
    tc->cv_scale = in.cv_scale;
    tc->cv_window_s = in.cv_window_s;
    tc->zero_run_s = in.zero_run_s;
    map = cJSON_GetObjectItem(t, "map");
    tc->spec.format = (enum trace_format)fmt;
    tc->process = (enum wl_process)proc;
    tc->gaps = (enum wl_gap)gaps;
    tc->spec.size = (enum trace_size)size;
    tc->timestamps = trace_format_per_request(tc->spec.format);
    tc->spec.block_tokens = in.block_tokens;
    bool multi = fmt == TRACE_AZURE_FUNCTIONS;
    /* what belongs to which format */
    if (cJSON_GetObjectItem(t, "block_tokens") && fmt != TRACE_MOONCAKE)
        return sim_err_set(SIM_EINVAL, "%s.block_tokens: only for format \"mooncake\"", P);
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
                           "burstgpt, mooncake, csv_timestamps); count traces set process "
                           "\"gamma\" and cv", P);
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
    return resolve_files(cfg, tc, files, dir);
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

