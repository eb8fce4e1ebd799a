/* sim_config_workload — the config's workload section (arrivals, popularity, segments,
 * rate schedules, request sizes, closed-loop clients, traces), for sim_config.c
 * (docs/config.md has the keys). */
#include "sim_config_int.h"

static const char *const ARRIVALS[] = {"poisson", "gamma", "uniform", NULL};
static const char *const POPULARITY[] = {"uniform", "zipf", "explicit", NULL};

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>

#include "sim_err.h"
#include "sim_json.h"
#include "sim_param.h"
#include "sim_rng.h"
#include "wl_clients.h"

/* workload.random_segments {"sd_rps", "period_s", "min_rps"}: the rate is redrawn every
 * period from normal(rate_rps, sd_rps), truncated below at min_rps (FA2's normal(15, 5)
 * workload); expanded here into segments from the stream "workload.random_segments", so a
 * run stays a function of config and seed. */
struct random_in {
    double sd_rps, period_s, min_rps;
};
#define RI(f) SIM_P_AT(struct random_in, f, double)
static const struct sim_param RANDOM_SEGMENTS[] = {
    {"sd_rps", SIM_P_NUM, RI(sd_rps), .cons = SIM_J_NONNEG, .flags = SIM_P_REQUIRED,
     .doc = "the rate's standard deviation"},
    {"period_s", SIM_P_NUM, RI(period_s), .cons = SIM_J_POS, .flags = SIM_P_REQUIRED,
     .doc = "the rate is redrawn this often (at most 1e6 periods in the run)"},
    {"min_rps", SIM_P_NUM, RI(min_rps), .cons = SIM_J_POS, .def = 0.1,
     .doc = "the draw is truncated below here"},
    {NULL}};
#undef RI

static int parse_random_segments(struct sim_config *c, const cJSON *w, const cJSON *segs)
{
    const char *p = "workload.random_segments";
    const cJSON *o;
    struct random_in in;
    int rc;
    if ((rc = sim_json_obj(w, "workload", "random_segments", false, &o)) || !o)
        return rc;
    if (segs)
        return sim_err_set(SIM_EINVAL, "%s: give either segments or random_segments, not both", p);
    if ((rc = sim_params_read(RANDOM_SEGMENTS, o, p, &in)))
        return rc;
    double sd = in.sd_rps, period = in.period_s, lo = in.min_rps;
    if (!(c->world.rate_rps > 0))
        return sim_err_set(SIM_EINVAL, "%s: needs workload.rate_rps (the mean)", p);
    double n = ceil(c->world.duration_s / period);
    if (n > 1e6)
        return sim_err_set(SIM_EINVAL, "%s.period_s: expected at most 1e6 periods in duration_s, "
                           "got %.15g", p, n);
    gsl_rng *r = sim_rng_stream(c->world.seed, "workload.random_segments");
    if (!r || !(c->workload.segments = calloc((size_t)n, sizeof *c->workload.segments))) {
        gsl_rng_free(r);
        return SIM_ENOMEM;
    }
    c->workload.nsegments = (int)n;
    for (int i = 0; i < c->workload.nsegments; i++) {
        double rate = c->world.rate_rps + gsl_ran_gaussian_ziggurat(r, sd);
        c->workload.segments[i].duration_s = i + 1 < c->workload.nsegments ? period : 0;
        c->workload.segments[i].scale = fmax(rate, lo) / c->world.rate_rps;
    }
    gsl_rng_free(r);
    return 0;
}

/* workload.segments[i].models {"model name": factor, ...}: those models' rates are further
 * multiplied by their factor during the segment (a shift in popularity); others by 1. */
static int parse_segment_models(struct sim_config *c, const cJSON *ms, const char *sp,
                                struct wl_segment *seg)
{
    char mp[SIM_JPATH_MAX];
    snprintf(mp, sizeof mp, "%s.models", sp);
    if (c->app)
        return sim_err_set(SIM_EINVAL, "%s: with an application, requests are the "
                           "application's; per-model factors do not apply", mp);
    if (!(seg->model_scale = malloc((size_t)c->world.nmodels * sizeof *seg->model_scale)))
        return SIM_ENOMEM;
    for (int m = 0; m < c->world.nmodels; m++)
        seg->model_scale[m] = 1;
    const cJSON *it;
    cJSON_ArrayForEach(it, ms) {
        int m = 0;
        while (m < c->world.nmodels && strcmp(c->world.models[m].name, it->string) != 0)
            m++;
        if (m == c->world.nmodels)
            return sim_err_set(SIM_EINVAL, "%s: no model named \"%s\" in the config's models",
                               mp, it->string);
        if (!cJSON_IsNumber(it) || it->valuedouble < 0) {
            char kp[SIM_JPATH_MAX + 64];
            snprintf(kp, sizeof kp, "%s.%s", mp, it->string);
            return sim_json_expected(kp, "a factor >= 0", it);
        }
        seg->model_scale[m] = it->valuedouble;
    }
    return 0;
}

/* A per-model workload key (`section`.<model name>): the model's index into *m and the key's
 * JSON path into path; an error naming the path when no model has that name. */
static int model_key(const struct sim_config *c, const char *section, const cJSON *it,
                     char *path, size_t size, int *m)
{
    snprintf(path, size, "%s.%s", section, it->string);
    for (*m = 0; *m < c->world.nmodels; (*m)++)
        if (strcmp(c->world.models[*m].name, it->string) == 0)
            return 0;
    return sim_err_set(SIM_EINVAL, "%s: no model named \"%s\" in the config's models", path,
                       it->string);
}

/* workload.sizes {"model name": {"mean": m, "cv": c, "batch": "mean"|"max"}}: that model's
 * requests carry a lognormal size factor that multiplies their batch's standalone time (the
 * batch's mean size, or its largest: padded). Synthetic arrivals only: a trace's sizes are
 * its own (tokens). */
static const char *const HOW[] = {"mean", "max", NULL};
struct size_in {
    double mean, cv;
    int batch;
};
static const struct sim_param SIZES[] = {
    {"mean", SIM_P_NUM, SIM_P_AT(struct size_in, mean, double), .cons = SIM_J_POS,
     .flags = SIM_P_REQUIRED, .doc = "the size factor's mean"},
    {"cv", SIM_P_NUM, SIM_P_AT(struct size_in, cv, double), .cons = SIM_J_NONNEG,
     .flags = SIM_P_REQUIRED, .doc = "its coefficient of variation (0: exactly `mean`)"},
    {"batch", SIM_P_ENUM, SIM_P_AT_ENUM(struct size_in, batch), .choices = HOW,
     .doc = "a batch's time is the profile's l(b) times its requests' mean size, or their "
            "largest (padded to the longest)"},
    {NULL}};

static int parse_sizes(struct sim_config *c, const cJSON *o, bool trace)
{
    if (!o)
        return 0;
    if (trace)
        return sim_err_set(SIM_EINVAL, "workload.sizes: the trace's requests carry the trace's "
                           "sizes (workload.trace.size); give one or the other");
    if (c->app)
        return sim_err_set(SIM_EINVAL, "workload.sizes: with an application, requests are the "
                           "application's; per-model sizes do not apply");
    if (!(c->workload.sizes = calloc((size_t)c->world.nmodels, sizeof *c->workload.sizes)))
        return SIM_ENOMEM;
    const cJSON *it;
    cJSON_ArrayForEach(it, o) {
        char p[SIM_JPATH_MAX + SIM_NAME_MAX];
        int m, rc;
        if ((rc = model_key(c, "workload.sizes", it, p, sizeof p, &m)))
            return rc;
        struct wl_size *z = &c->workload.sizes[m];
        struct size_in in;
        if (!cJSON_IsObject(it))
            return sim_json_expected(p, "{mean, cv, batch}", it);
        if ((rc = sim_params_read(SIZES, it, p, &in)))
            return rc;
        z->mean = in.mean;
        z->cv = in.cv;
        c->world.models[m].sized = in.batch == 0 ? SIM_SIZE_MEAN : SIM_SIZE_MAX;
    }
    return 0;
}

/* workload.tokens {"model name": {"prompt": {mean, cv, max}, "output": {mean, cv, max}}}: an
 * LLM model's token lengths for synthetic arrivals (wl_arrival.h, struct wl_tokens). Every LLM
 * model needs them; a DNN model takes none. */
static const struct sim_param TOK_LEN[] = {
    {"mean", SIM_P_NUM, SIM_P_AT(struct wl_tok_len, mean, double), .cons = SIM_J_POS,
     .flags = SIM_P_REQUIRED, .type_doc = ">= 1", .doc = "mean tokens"},
    {"cv", SIM_P_NUM, SIM_P_AT(struct wl_tok_len, cv, double), .cons = SIM_J_NONNEG, .def = 0,
     .doc = "coefficient of variation of the lognormal (0: exactly `mean`)"},
    {"max", SIM_P_INT, SIM_P_AT(struct wl_tok_len, max, int), .lo = 1, .hi = 10000000,
     .def = 32768, .doc = "the longest (a draw above it is cut to it)"},
    {NULL}};
static const struct sim_param TOK_PREFIX[] = {
    {"groups", SIM_P_INT, SIM_P_AT(struct wl_tokens, prefix_groups, int), .lo = 1,
     .hi = 1000000, .flags = SIM_P_REQUIRED,
     .doc = "how many distinct prefixes; each request draws one uniformly (stream "
            "`prefix.<model>`)"},
    {"tokens", SIM_P_INT, SIM_P_AT(struct wl_tokens, prefix_tokens, int), .lo = 1,
     .hi = 10000000, .flags = SIM_P_REQUIRED, .doc = "each prefix's length"},
    {NULL}};
/* workload.tokens.<model>.empirical: a token trace whose rows' lengths are drawn */
struct emp_in {
    int format;
    const char *dir;
    const cJSON *files;
};
static const struct sim_param TOK_EMP[] = {
    {"format", SIM_P_ENUM, SIM_P_AT_ENUM(struct emp_in, format), .choices = trace_format_names,
     .flags = SIM_P_REQUIRED, .doc = "a token trace's format: `azure_llm`, `burstgpt` or "
     "`mooncake` (traces/README.md)"},
    {"dir", SIM_P_STR, SIM_P_AT(struct emp_in, dir, const char *),
     .doc = "as `workload.trace.dir`: relative to the trace root (`--trace-dir`), or absolute"},
    {"files", SIM_P_ARR, SIM_P_AT(struct emp_in, files, const cJSON *), .flags = SIM_P_REQUIRED,
     .type_doc = "array of strings", .doc = "the trace's files"},
    {NULL}};
static const struct sim_param TOKENS[] = {
    {"prompt", SIM_P_SECTION, .rows = TOK_LEN, .def_doc = "required without `empirical`",
     .doc = "prompt tokens of each request"},
    {"output", SIM_P_SECTION, .rows = TOK_LEN, .def_doc = "required without `empirical`",
     .doc = "output tokens it generates"},
    {"empirical", SIM_P_SECTION, .rows = TOK_EMP, .def_doc = "none",
     .doc = "instead of `prompt` and `output`: each request takes the prompt and output of a "
            "row of this token trace drawn at random (rows of 0 tokens, failed requests, left "
            "out), so lengths keep the trace's joint distribution; the rows are read when the "
            "config is, 8 bytes each"},
    {"prefix", SIM_P_SECTION, .rows = TOK_PREFIX, .def_doc = "none",
     .doc = "a shared prompt prefix (a system prompt): each prompt is one of `groups` prefixes "
            "of `tokens` tokens followed by its own `prompt` tokens; with prefix caching a "
            "group's requests share its KV blocks"},
    {NULL}};

static int parse_tok_len(const cJSON *o, const char *path, const char *key,
                         struct wl_tok_len *d)
{
    char p[SIM_JPATH_MAX + SIM_NAME_MAX + 16];
    snprintf(p, sizeof p, "%s.%s", path, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsObject(v))
        return sim_json_expected(p, "{mean, cv, max}", v);
    int rc = sim_params_read(TOK_LEN, v, p, d);
    if (!rc && (d->mean < 1 || d->mean > d->max))
        rc = sim_err_set(SIM_EINVAL, "%s.mean: expected within [1, max = %d], got %.15g", p,
                         d->max, d->mean);
    return rc;
}

/* The (prompt, output) pairs of a token trace's rows with both above 0, into t->emp. */
static int parse_empirical(struct sim_config *c, const cJSON *o, const char *path,
                           struct wl_tokens *t)
{
    struct emp_in in;
    char **files = NULL;
    int nfiles = 0, rc;
    char fp[SIM_JPATH_MAX + SIM_NAME_MAX + 32];
    snprintf(fp, sizeof fp, "%s.files", path);
    if ((rc = sim_params_read(TOK_EMP, o, path, &in)))
        return rc;
    if (!trace_format_has_tokens((enum trace_format)in.format))
        return sim_err_set(SIM_EINVAL, "%s.format: expected a format with tokens (azure_llm, "
                           "burstgpt, mooncake), got \"%s\"", path,
                           trace_format_name((enum trace_format)in.format));
    struct trace_reader *rd = NULL;
    struct trace_spec sp = {.format = (enum trace_format)in.format};
    long cap = 0;
    if (!(rc = sim_config_trace_files(c, in.files, fp, in.dir, &files, &nfiles))) {
        sp.nfiles = nfiles;
        sp.files = (const char *const *)files;
        rc = trace_open(&sp, &rd);
    }
    struct trace_rec r;
    while (!rc && (rc = trace_next(rd, &r)) == 1) {
        rc = 0;
        if (r.prompt < 1 || r.output < 1)
            continue;
        if (t->nemp == cap) {
            long nc = cap ? 2 * cap : 4096;
            int32_t *e = realloc(t->emp, (size_t)nc * 2 * sizeof *e);
            if (!e) {
                rc = SIM_ENOMEM;
                break;
            }
            t->emp = e;
            cap = nc;
        }
        t->emp[2 * t->nemp] = r.prompt;
        t->emp[2 * t->nemp + 1] = r.output;
        t->nemp++;
    }
    trace_close(rd);
    for (int i = 0; i < nfiles; i++)
        free(files[i]);
    free(files);
    if (rc < 0)
        return rc;
    if (t->nemp == 0)
        return sim_err_set(SIM_EINVAL, "%s: the trace has no row with prompt and output tokens "
                           "above 0", path);
    return 0;
}

static int parse_tokens(struct sim_config *c, const cJSON *o, bool trace)
{
    if (o && trace)
        return sim_err_set(SIM_EINVAL, "workload.tokens: with a trace, requests carry the "
                           "trace's tokens; give one or the other");
    if (o) {
        if (!(c->workload.tokens = calloc((size_t)c->world.nmodels, sizeof *c->workload.tokens)))
            return SIM_ENOMEM;
        const cJSON *it;
        cJSON_ArrayForEach(it, o) {
            char p[SIM_JPATH_MAX + SIM_NAME_MAX];
            int m, rc;
            if ((rc = model_key(c, "workload.tokens", it, p, sizeof p, &m)))
                return rc;
            if (!c->world.models[m].llm_on)
                return sim_err_set(SIM_EINVAL, "%s: model \"%s\" is not an LLM model (no "
                                   "`llm` section): its requests have no tokens", p,
                                   c->world.models[m].name);
            if (!cJSON_IsObject(it))
                return sim_json_expected(p, "{prompt, output}", it);
            if ((rc = sim_params_keys(TOKENS, it, p)))
                return rc;
            const cJSON *emp = cJSON_GetObjectItemCaseSensitive(it, "empirical");
            bool lens = cJSON_GetObjectItemCaseSensitive(it, "prompt") ||
                        cJSON_GetObjectItemCaseSensitive(it, "output");
            if (emp) {
                char ep[SIM_JPATH_MAX + SIM_NAME_MAX + 16];
                snprintf(ep, sizeof ep, "%s.empirical", p);
                if (lens)
                    return sim_err_set(SIM_EINVAL, "%s: either prompt and output, or "
                                       "empirical; not both", p);
                if (!cJSON_IsObject(emp))
                    return sim_json_expected(ep, "{format, dir, files}", emp);
                if ((rc = parse_empirical(c, emp, ep, &c->workload.tokens[m])))
                    return rc;
            } else if ((rc = parse_tok_len(it, p, "prompt", &c->workload.tokens[m].prompt)) ||
                       (rc = parse_tok_len(it, p, "output", &c->workload.tokens[m].output)))
                return rc;
            const cJSON *px = cJSON_GetObjectItemCaseSensitive(it, "prefix");
            if (px) {
                char pp[SIM_JPATH_MAX + SIM_NAME_MAX + 16];
                snprintf(pp, sizeof pp, "%s.prefix", p);
                if (!cJSON_IsObject(px))
                    return sim_json_expected(pp, "{groups, tokens}", px);
                if ((rc = sim_params_read(TOK_PREFIX, px, pp, &c->workload.tokens[m])))
                    return rc;
            }
        }
    }
    return 0;
}

/* Where an LLM model's requests get their tokens: from workload.tokens (synthetic arrivals) or
 * from a trace that has them, request by request (azure_llm, burstgpt, mooncake; without
 * cv_scale). Anything else
 * would give every request one token in and one out: refused. */
static int check_llm_tokens(const struct sim_config *c, bool clients)
{
    const struct wl_trace_cfg *tc = c->workload.trace;
    for (int m = 0; m < c->world.nmodels; m++) {
        const char *name = c->world.models[m].name;
        if (!c->world.models[m].llm_on)
            continue;
        if (clients || c->app)
            return sim_err_set(SIM_EINVAL, "%s: not with LLM model \"%s\": its requests come "
                               "from synthetic arrivals with workload.tokens or a token trace",
                               clients ? "workload.clients" : "application", name);
        if (tc && !trace_format_has_tokens(tc->spec.format))
            return sim_err_set(SIM_EINVAL, "workload.trace.format: expected \"azure_llm\", "
                               "\"burstgpt\" or \"mooncake\" with LLM model \"%s\" (its "
                               "requests take the trace's prompt and output tokens), got "
                               "\"%s\"", name, trace_format_name(tc->spec.format));
        if (tc && tc->cv_scale > 0)
            return sim_err_set(SIM_EINVAL, "workload.trace.cv_scale: not with LLM model \"%s\": "
                               "its requests are replayed one by one with their tokens, not "
                               "refitted per window", name);
        if (!tc && (!c->workload.tokens || !(c->workload.tokens[m].prompt.mean > 0 ||
                                             c->workload.tokens[m].emp)))
            return sim_err_set(SIM_EINVAL, "workload.tokens.%s: required: the LLM model's "
                               "prompt and output lengths ({\"prompt\": {\"mean\": ...}, "
                               "\"output\": {...}})", name);
    }
    return 0;
}

/* workload.rate_schedules {"model name": {"step_s": s, "rps": [r0, r1, ...]}}: that model's
 * rate is r0 for s seconds, then r1, ..., the last held to the end; its mean over the run
 * becomes its configured rate (what policies read), and the steps segments scaled by it.
 * Returns the number of models with a schedule in *n. */
struct schedule_in {
    double step_s;
    const cJSON *rps;
};
static const struct sim_param SCHEDULE[] = {
    {"step_s", SIM_P_NUM, SIM_P_AT(struct schedule_in, step_s, double), .cons = SIM_J_POS,
     .flags = SIM_P_REQUIRED, .doc = "each rate holds this long"},
    {"rps", SIM_P_ARR, SIM_P_AT(struct schedule_in, rps, const cJSON *),
     .flags = SIM_P_REQUIRED, .type_doc = "array of rates >= 0",
     .doc = "the rates in turn, the last held to the end"},
    {NULL}};

static int parse_rate_schedules(struct sim_config *c, const cJSON *o, int *n)
{
    *n = 0;
    if (!o)
        return 0;
    if (c->app)
        return sim_err_set(SIM_EINVAL, "workload.rate_schedules: with an application, requests "
                           "are the application's; per-model schedules do not apply");
    if (!(c->workload.schedules = calloc((size_t)c->world.nmodels, sizeof *c->workload.schedules)))
        return SIM_ENOMEM;
    const cJSON *it;
    cJSON_ArrayForEach(it, o) {
        char p[SIM_JPATH_MAX + SIM_NAME_MAX];
        struct schedule_in in;
        int m, rc;
        if ((rc = model_key(c, "workload.rate_schedules", it, p, sizeof p, &m)))
            return rc;
        if (!cJSON_IsObject(it))
            return sim_json_expected(p, "{step_s, rps}", it);
        if ((rc = sim_params_read(SCHEDULE, it, p, &in)))
            return rc;
        const cJSON *rps = in.rps;
        double step = in.step_s;
        int k = cJSON_GetArraySize(rps);
        if (k == 0)
            return sim_err_set(SIM_EINVAL, "%s.rps: expected at least one rate", p);
        struct wl_schedule *sc = &c->workload.schedules[m];
        if (!(sc->seg = calloc((size_t)k, sizeof *sc->seg)))
            return SIM_ENOMEM;
        sc->n = k;
        double dur = c->world.duration_s, sum = 0;
        const cJSON *r = sim_json_first(rps);
        for (int i = 0; i < k; i++, r = r->next) {
            if (!cJSON_IsNumber(r) || r->valuedouble < 0) {
                char ip[SIM_JPATH_MAX + SIM_NAME_MAX + 16];
                snprintf(ip, sizeof ip, "%s.rps[%d]", p, i);
                return sim_json_expected(ip, "a rate >= 0 (req/s)", r);
            }
            double t0 = i * step, t1 = i == k - 1 ? fmax(dur, t0) : (i + 1) * step;
            sum += r->valuedouble * fmax(0, fmin(t1, dur) - fmin(t0, dur));
            sc->seg[i] = (struct wl_segment){i == k - 1 ? 0 : step, r->valuedouble, NULL};
        }
        double mean = dur > 0 ? sum / dur : 0;
        for (int i = 0; i < k; i++)
            sc->seg[i].scale = mean > 0 ? sc->seg[i].scale / mean : 0;
        c->world.model_rps[m] = mean;
        (*n)++;
    }
    return 0;
}

/* A window the trace's rows do not cover is an error (the answer would be for a shorter or
 * emptier window than asked); with workload.trace.partial_window a warning every answer
 * carries. A per-request trace's window may run 1 trace second past its last request. */
static int trace_coverage(struct sim_config *c, const struct wl_trace_info *in)
{
    const struct wl_trace_cfg *tc = c->workload.trace;
    double tol = tc->timestamps ? 1 : 1e-6 * fmax(1, in->window_hi - in->window_lo);
    if (in->uncovered_s <= tol)
        return 0;
    char win[96], rows[96];
    if (isfinite(in->window_hi))
        snprintf(win, sizeof win, "[%.9g, %.9g) s", in->window_lo, in->window_hi);
    else
        snprintf(win, sizeof win, "from %.9g s to the trace's end", in->window_lo);
    if (in->have_data)
        snprintf(rows, sizeof rows, "[%.9g, %.9g) s", in->data_lo, in->data_hi);
    else
        snprintf(rows, sizeof rows, "nothing (no rows)");
    if (!tc->partial_window)
        return sim_err_set(SIM_EINVAL, "workload.trace: the window %s (start_s, window_s) is "
                           "not covered by the trace, whose rows span %s (%s%s): %.9g s of the "
                           "window have no data. Choose a window inside the rows, or set "
                           "workload.trace.partial_window to true to answer for the part "
                           "covered (with a warning)", win, rows, tc->spec.files[0],
                           tc->spec.nfiles > 1 ? " and the other files" : "",
                           in->uncovered_s);
    snprintf(c->trace_warning, sizeof c->trace_warning, "warning: workload.trace: the trace "
             "covers only part of the window %s: its rows span %s; %.9g trace seconds have no "
             "data (partial_window)", win, rows, in->uncovered_s);
    return 0;
}

/* workload.clients: closed-loop clients instead of an arrival rate (wl_clients.h). */
static const char *const AFTER[] = {"hold", "end", NULL};
struct clients_in {
    const char *model;
    double step_s, think_s;
    const cJSON *counts;
    int after;
};
#define CI(f, type) SIM_P_AT(struct clients_in, f, type)
static const struct sim_param CLIENTS[] = {
    {"model", SIM_P_STR, CI(model, const char *), .def_doc = "the only model",
     .doc = "the model the clients send to"},
    {"step_s", SIM_P_NUM, CI(step_s, double), .cons = SIM_J_POS, .def = 60,
     .type_doc = "> 0 and <= 1e8", .doc = "each count holds this long"},
    {"counts", SIM_P_ARR, CI(counts, const cJSON *), .flags = SIM_P_REQUIRED,
     .type_doc = "array of 1 to 100000 whole numbers in [0, 1000000]",
     .doc = "`counts[i]` clients are active during step i"},
    {"think_s", SIM_P_NUM, CI(think_s, double), .cons = SIM_J_POS, .def = 1,
     .type_doc = "> 0 and <= 1e6", .doc = "a client's mean think time between a response and "
                                          "its next request"},
    {"after", SIM_P_ENUM, SIM_P_AT_ENUM(struct clients_in, after), .choices = AFTER,
     .doc = "after the last step: its count holds, or the clients stop"},
    {NULL}};
#undef CI

static int parse_clients(struct sim_config *c, const cJSON *w)
{
    const char *P = "workload.clients", *mname = NULL;
    const cJSON *o, *counts;
    struct clients_in in;
    int rc;
    for (const struct sim_param *r = sim_config_workload_keys; r->key; r++)   /* the others */
        if (strcmp(r->key, "clients") != 0 && cJSON_GetObjectItemCaseSensitive(w, r->key))
            return sim_err_set(SIM_EINVAL, "workload.%s: with workload.clients the clients make "
                               "the requests; give no rate, arrival process or trace", r->key);
    if (c->app)
        return sim_err_set(SIM_EINVAL, "workload.clients: not with an application");
    struct wl_clients_cfg *cl = calloc(1, sizeof *cl);
    if (!cl)
        return SIM_ENOMEM;
    c->workload.clients = cl;           /* freed with the config from here on */
    if ((rc = sim_json_obj(w, "workload", "clients", true, &o)) ||
        (rc = sim_params_read(CLIENTS, o, P, &in)))
        return rc;
    mname = in.model;
    counts = in.counts;
    cl->step_s = in.step_s;
    cl->think_s = in.think_s;
    cl->hold = in.after == 0;
    if (mname) {
        cl->model = -1;
        for (int m = 0; m < c->world.nmodels && cl->model < 0; m++)
            if (!strcmp(c->world.models[m].name, mname))
                cl->model = m;
        if (cl->model < 0)
            return sim_err_set(SIM_EINVAL, "%s.model: no model \"%s\" in models", P, mname);
    } else if (c->world.nmodels != 1) {
        return sim_err_set(SIM_EINVAL, "%s.model: missing (the config has %d models: name the "
                           "one the clients use)", P, c->world.nmodels);
    }
    int n = cJSON_GetArraySize(counts);
    if (n < 1 || n > 100000)
        return sim_err_set(SIM_EINVAL, "%s.counts: expected 1 to 100000 counts, got %d", P, n);
    if (!(cl->counts = calloc((size_t)n, sizeof *cl->counts)))
        return SIM_ENOMEM;
    cl->nsteps = n;
    int most = 0;
    const cJSON *v = sim_json_first(counts);
    for (int i = 0; i < n; i++, v = v->next) {
        char q[SIM_JPATH_MAX];
        sim_jpath_idx(q, sizeof q, "workload.clients.counts", i);
        if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 1e6 ||
            v->valuedouble != floor(v->valuedouble))
            return sim_json_expected(q, "a whole number of clients in [0, 1000000]", v);
        cl->counts[i] = (int)v->valuedouble;
        most = cl->counts[i] > most ? cl->counts[i] : most;
    }
    if (most == 0)
        return sim_err_set(SIM_EINVAL, "%s.counts: every step has 0 clients", P);
    if (cl->think_s > 1e6 || cl->step_s > 1e8)
        return sim_err_set(SIM_EINVAL, "%s: think_s at most 1e6 s, step_s at most 1e8 s", P);
    c->world.rate_rps = wl_clients_rate(cl);   /* what policies read: an upper bound */
    c->world.model_rps[cl->model] = c->world.rate_rps;
    c->workload.arrival = WL_ARR_POISSON;
    return 0;
}

struct segment_in {
    double duration_s, scale;
    const cJSON *models;
};
static const struct sim_param SEGMENT[] = {
    {"duration_s", SIM_P_NUM, SIM_P_AT(struct segment_in, duration_s, double),
     .cons = SIM_J_POS, .def_doc = "required but for the last", .doc = "how long it lasts"},
    {"scale", SIM_P_NUM, SIM_P_AT(struct segment_in, scale, double), .cons = SIM_J_NONNEG,
     .flags = SIM_P_REQUIRED, .doc = "every model's rate times this"},
    {"models", SIM_P_OBJ, SIM_P_AT(struct segment_in, models, const cJSON *),
     .type_doc = "`{\"model name\": factor}`", .def_doc = "none",
     .doc = "those models' rates times their factor too: a shift in popularity (the "
            "configured mean rates, which policies read as `rate_rps`, stay those of factor 1)"},
    {NULL}};

static const struct sim_param ARRIVAL[] = {
    {"kind", SIM_P_ENUM, SIM_P_AT_ENUM(struct wl_workload, arrival), .choices = ARRIVALS,
     .flags = SIM_P_REQUIRED, .type_doc = "`poisson` (default), `gamma` (+ `shape`), `uniform` "
     "(evenly spaced, random phase)", .def_doc = "",
     .doc = "inter-arrival process per model (required in `arrival`; no `arrival`: `poisson`)"},
    {"shape", SIM_P_NUM, SIM_P_AT(struct wl_workload, gamma_shape, double), .cons = SIM_J_POS,
     .type_doc = ">= 0.01", .def_doc = "required with `gamma`",
     .doc = "`gamma`: its shape; smaller is burstier, 1 = Poisson (the gaps' cv is "
            "1/sqrt(shape), at most 10)"},
    {NULL}};
static const struct sim_param POPULARITY_KEYS[] = {
    {"kind", SIM_P_ENUM, SIM_P_AT_ENUM(struct wl_workload, popularity), .choices = POPULARITY,
     .flags = SIM_P_REQUIRED, .type_doc = "`uniform` (default), `zipf` (+ `s`, by position in "
     "`models`), `explicit` (every model has `share`)", .def_doc = "",
     .doc = "relative rates (required in `popularity`; no `popularity`: `uniform`)"},
    {"s", SIM_P_NUM, SIM_P_AT(struct wl_workload, zipf_s, double), .cons = SIM_J_NONNEG,
     .def_doc = "required with `zipf`", .doc = "`zipf`: its exponent"},
    {NULL}};

/* The keys of `workload`: arrival and popularity by their tables, the others by hand below
 * (which of them a workload needs depends on the rest). */
const struct sim_param sim_config_workload_keys[] = {
    {"rate_rps", SIM_P_HAND, .type_doc = "> 0", .def_doc = "required without a trace",
     .doc = "total offered rate, split by popularity"},
    {"trace", SIM_P_SECTION, .rows = sim_config_trace_keys, .def_doc = "none",
     .doc = "replay a real trace instead (its keys below; docs/config.md, \"Traces\"); then no "
            "`rate_rps`, `arrival` or `segments`, and `duration_s` defaults to the trace "
            "window's length"},
    {"arrival", SIM_P_SECTION, .rows = ARRIVAL},
    {"popularity", SIM_P_SECTION, .rows = POPULARITY_KEYS},
    {"segments", SIM_P_SECTION, .rows = SEGMENT, .flags = SIM_P_EACH, .def_doc = "none",
     .doc = "piecewise-constant rate multiplier over time; the last segment needs no "
            "duration and holds to the end"},
    {"rate_schedules", SIM_P_SECTION, .rows = SCHEDULE, .flags = SIM_P_MAP, .sdef = "MODEL",
     .def_doc = "none",
     .doc = "that model's own rate over time: `rps[0]` for `step_s` seconds, then `rps[1]`, "
            "..., the last held to the end (ROMA's tests); its mean over the run is its "
            "configured rate (what policies read as `rate_rps`), the load scale multiplies it, "
            "and `rate_rps` splits over the models without a schedule (leave `rate_rps` out "
            "when every model has one). Not with `segments`, `random_segments`, a trace or an "
            "application"},
    {"sizes", SIM_P_SECTION, .rows = SIZES, .flags = SIM_P_MAP, .sdef = "MODEL", .def_doc = "none",
     .doc = "that model's requests carry a size factor, lognormal with this mean and "
            "coefficient of variation, drawn from the stream `sizes.<model>` (so the arrival "
            "times are the same with and without sizes); a batch's standalone time is the "
            "profile's l(b) times the batch's mean size (`batch`: `\"mean\"`: work adds up, so "
            "at `mean` 1 the profile stays the mean) or its largest (`\"max\"`: padded to the "
            "longest request, as sequence models batch). Policies still plan with the profile. "
            "Synthetic arrivals, and traces of counts or times without sizes; not with "
            "`workload.trace.size` (the trace's own sizes, tokens) or an application"},
    {"tokens", SIM_P_SECTION, .rows = TOKENS, .flags = SIM_P_MAP, .sdef = "MODEL",
     .def_doc = "required for an LLM model",
     .doc = "an LLM model's prompt and output lengths, each lognormal (mean, cv) within [1, "
            "max], drawn from the stream `tokens.<model>` (docs/llm.md); synthetic arrivals "
            "only"},
    {"clients", SIM_P_SECTION, .rows = CLIENTS, .def_doc = "none",
     .doc = "closed-loop clients (DynamoML's) instead of a rate: each sends one request to "
            "`model`, waits for its response, thinks (exponential, mean `think_s`) and sends "
            "again; clients that become active at a step start after a think time, those "
            "beyond the count retire after their response. One source per client (the most "
            "any step has); think times from the stream `workload.clients`; `load_scale` "
            "multiplies the counts. The model's configured rate (what policies read) is the "
            "mean count / `think_s`, an upper bound. Not with `rate_rps`, `arrival`, "
            "`popularity`, `segments`, schedules, sizes, a trace or an application"},
    {"random_segments", SIM_P_SECTION, .rows = RANDOM_SEGMENTS, .def_doc = "none",
     .doc = "the rate redrawn every `period_s` from normal(`rate_rps`, `sd_rps`), truncated "
            "below at `min_rps` (stream `workload.random_segments`; instead of `segments`)"},
    {NULL}};

/* Each model's mean rate (what policies read): the popularity shares of rate_rps (with an
 * application, its paths'), the schedules' means, or the trace's counts (scanned here, with
 * its totals, peak and gaps); p is workload.popularity, tr workload.trace. */
static int model_rates(struct sim_config *c, const cJSON *root, const cJSON *p, const cJSON *tr,
                       int nsched)
{
    int rc;
    /* popularity shares */
    for (int m = 0; m < c->world.nmodels; m++) {
        bool has = c->world.models[m].share >= 0;
        if (c->workload.popularity == WL_POP_EXPLICIT && !has)
            return sim_err_set(SIM_EINVAL, "models: model \"%s\": missing share (expected a "
                               "non-negative number with workload.popularity.kind \"explicit\")",
                               c->world.models[m].name);
        if (c->workload.popularity != WL_POP_EXPLICIT && has)
            return sim_err_set(SIM_EINVAL, "models: model \"%s\": share is only used with "
                               "workload.popularity.kind \"explicit\"", c->world.models[m].name);
    }
    if (c->app && p)
        return sim_err_set(SIM_EINVAL, "workload.popularity: with an application, requests "
                           "are the application's (its paths' weights split them)");
    if (!tr && nsched) {                /* rate_rps splits over the models without schedules */
        double *share = calloc((size_t)c->world.nmodels, sizeof *share), sum = 0, total = 0;
        if (!share)
            return SIM_ENOMEM;
        wl_popularity_shares(&c->workload, &c->world, share);
        for (int m = 0; m < c->world.nmodels; m++)
            sum += c->workload.schedules[m].n ? 0 : share[m];
        for (int m = 0; m < c->world.nmodels; m++) {
            if (!c->workload.schedules[m].n)
                c->world.model_rps[m] = sum > 0 ? share[m] / sum * c->world.rate_rps : 0;
            total += c->world.model_rps[m];
        }
        free(share);
        c->world.rate_rps = total;      /* the mean total, as without schedules */
    } else if (!tr) {
        wl_popularity_shares(&c->workload, &c->world, c->world.model_rps);
        for (int m = 0; m < c->world.nmodels; m++)
            c->world.model_rps[m] = c->app ? sim_app_model_rate(c->app, m, c->world.rate_rps)
                                     : c->world.model_rps[m] * c->world.rate_rps;
    } else {
        struct wl_trace_info info;
        bool dur_given = cJSON_GetObjectItem(root, "duration_s") != NULL;
        c->world.load_key = "workload.trace.rate_scale";
        if ((rc = sim_config_parse_trace(c, tr, &c->workload.trace)) ||
            (rc = wl_trace_scan(&c->workload, &c->world, &info)))
            return rc;
        c->trace_total = info.total;
        c->trace_peak_rps = info.peak_rps;
        c->trace_gaps = info.ngaps;
        c->trace_gap_s = info.gap_s;
        c->world.rate_rps = info.mean_rps;
        if (!dur_given)
            c->world.duration_s = info.span_s;
        for (int m = 0; m < c->world.nmodels; m++)   /* multi-stream traces: by the mapping */
            c->world.model_rps[m] = c->app ? sim_app_model_rate(c->app, m, c->world.rate_rps)
                              : info.span_s > 0 ? info.model_total[m] / info.span_s : 0;
        wl_trace_info_free(&info);
        if ((rc = trace_coverage(c, &info)))
            return rc;
        if (info.total <= 0)
            return sim_err_set(SIM_EINVAL, "workload.trace: no requests in the window (check "
                               "start_s, window_s and the files)");
    }
    return 0;
}

int sim_config_parse_workload(struct sim_config *c, const cJSON *root)
{
    const cJSON *w, *a, *p, *segs, *sched, *sizes, *tokens;
    int rc, nsched = 0;
    const cJSON *tr = NULL;
    if (!(c->world.model_rps = calloc((size_t)c->world.nmodels, sizeof *c->world.model_rps)))
        return SIM_ENOMEM;
    if ((rc = sim_json_obj(root, "", "workload", true, &w)) ||
        (rc = sim_params_keys(sim_config_workload_keys, w, "workload")))
        return rc;
    if (cJSON_GetObjectItemCaseSensitive(w, "clients")) {
        if (cJSON_GetObjectItemCaseSensitive(w, "tokens"))
            return sim_err_set(SIM_EINVAL, "workload.tokens: not with workload.clients (token "
                               "lengths are for LLM models' synthetic arrivals)");
        return (rc = check_llm_tokens(c, true)) ? rc : parse_clients(c, w);
    }
    if ((rc = sim_json_obj(w, "workload", "trace", false, &tr)) ||
        (rc = sim_json_obj(w, "workload", "rate_schedules", false, &sched)) ||
        (rc = parse_rate_schedules(c, sched, &nsched)) ||
        (rc = sim_json_obj(w, "workload", "sizes", false, &sizes)) ||
        (rc = parse_sizes(c, sizes, tr && cJSON_GetObjectItemCaseSensitive(tr, "size"))) ||
        (rc = sim_json_obj(w, "workload", "tokens", false, &tokens)) ||
        (rc = parse_tokens(c, tokens, tr != NULL)))
        return rc;
    bool all_sched = nsched == c->world.nmodels;
    if (sched && (tr || cJSON_GetObjectItem(w, "segments") || cJSON_GetObjectItem(w, "random_segments")))
        return sim_err_set(SIM_EINVAL, "workload.rate_schedules: give the models' rates either by "
                           "schedules or by %s, not both", tr ? "a trace" : "segments");
    if (all_sched && cJSON_GetObjectItem(w, "rate_rps"))
        return sim_err_set(SIM_EINVAL, "workload.rate_rps: every model has a rate schedule, so "
                           "there is no rate left to split; remove rate_rps");
    c->world.load_key = "workload.rate_rps";        /* a trace sets its own below */
    if ((rc = sim_json_num(w, "workload", "rate_rps", !tr && !all_sched, SIM_J_POS, &c->world.rate_rps)) ||
        (rc = sim_json_obj(w, "workload", "arrival", false, &a)) ||
        (rc = sim_json_obj(w, "workload", "popularity", false, &p)) ||
        (rc = sim_json_arr(w, "workload", "segments", false, &segs)))
        return rc;
    if (c->world.rate_rps > 1e9)         /* (the engine also stops a run that overflows) */
        return sim_err_set(SIM_EINVAL, "workload.rate_rps: expected at most 1e9 requests/s, got "
                           "%g", c->world.rate_rps);
    if ((rc = parse_random_segments(c, w, segs)))
        return rc;
    if (tr && (cJSON_GetObjectItem(w, "rate_rps") || a || segs || c->workload.nsegments))
        return sim_err_set(SIM_EINVAL, "workload: rate_rps, arrival and segments describe a "
                           "synthetic workload; with workload.trace the trace gives the rates "
                           "(use workload.trace.rate_scale, process, cv)");
    c->workload.arrival = WL_ARR_POISSON;
    if (a) {
        if ((rc = sim_params_read(ARRIVAL, a, "workload.arrival", &c->workload)))
            return rc;
        if (c->workload.arrival == WL_ARR_GAMMA) {
            if ((rc = sim_json_num(a, "workload.arrival", "shape", true, SIM_J_POS, &c->workload.gamma_shape)))
                return rc;
            if (c->workload.gamma_shape < 0.01)    /* the gaps' cv, 1/sqrt(shape), at most 10 */
                return sim_err_set(SIM_EINVAL, "workload.arrival.shape: expected at least 0.01 "
                                   "(gaps with a coefficient of variation of at most 10), got %.15g",
                                   c->workload.gamma_shape);
        } else if (cJSON_GetObjectItemCaseSensitive(a, "shape")) {
            return sim_err_set(SIM_EINVAL, "workload.arrival.shape: only for kind \"gamma\"");
        }
    }
    c->workload.popularity = WL_POP_UNIFORM;
    if (p) {
        if ((rc = sim_params_read(POPULARITY_KEYS, p, "workload.popularity", &c->workload)))
            return rc;
        if (c->workload.popularity == WL_POP_ZIPF) {
            if ((rc = sim_json_num(p, "workload.popularity", "s", true, SIM_J_NONNEG, &c->workload.zipf_s)))
                return rc;
        } else if (cJSON_GetObjectItemCaseSensitive(p, "s")) {
            return sim_err_set(SIM_EINVAL, "workload.popularity.s: only for kind \"zipf\"");
        }
    }
    if (segs) {
        int n = cJSON_GetArraySize(segs);
        c->workload.segments = calloc((size_t)(n ? n : 1), sizeof *c->workload.segments);
        if (!c->workload.segments)
            return SIM_ENOMEM;
        const cJSON *s = sim_json_first(segs);
        for (int i = 0; i < n; i++, s = s->next) {
            char sp[SIM_JPATH_MAX];
            sim_jpath_idx(sp, sizeof sp, "workload.segments", i);
            if (!cJSON_IsObject(s))
                return sim_json_expected(sp, "{duration_s, scale, models}", s);
            bool last = (i == n - 1);
            struct segment_in in;
            c->workload.nsegments = i + 1;      /* freed with the config from here on */
            if ((rc = sim_params_read(SEGMENT, s, sp, &in)) ||
                (!last && (rc = sim_json_num(s, sp, "duration_s", true, SIM_J_POS,
                                             &in.duration_s))) ||
                (in.models && (rc = parse_segment_models(c, in.models, sp,
                                                         &c->workload.segments[i]))))
                return rc;
            c->workload.segments[i].duration_s = in.duration_s;
            c->workload.segments[i].scale = in.scale;
        }
        c->workload.nsegments = n;
    }
    if ((rc = model_rates(c, root, p, tr, nsched)))
        return rc;
    return check_llm_tokens(c, false);
}
