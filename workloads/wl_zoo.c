/* wl_zoo — model entry parsing and zoo expansion. Every error names its JSON path; errors
 * inside a zoo file are prefixed with the zoo's file name. */
#include "wl_zoo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_data.h"
#include "sim_err.h"
#include "sim_json.h"
#include "sim_param.h"
#include "wl_llm.h"

/* o[key]: a number, or an array of them (one per batch size from 1), each in [0, max) (max
 * exclusive when `open`, else inclusive); into a new array *out of *n values (0: absent). */
static int num_or_list(const cJSON *o, const char *path, const char *key, double max, bool open,
                       double **out, int *n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    char kp[SIM_JPATH_MAX];
    sim_jpath(kp, sizeof kp, path, key);
    *out = NULL;
    *n = 0;
    if (!v)
        return 0;
    int len = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 1;
    if (!cJSON_IsNumber(v) && !(cJSON_IsArray(v) && len > 0))
        return sim_json_expected(kp, "a number or a non-empty array of numbers (per batch size)",
                                 v);
    if (!(*out = malloc((size_t)len * sizeof **out)))
        return SIM_ENOMEM;
    const cJSON *e = cJSON_IsArray(v) ? v->child : v;
    char what[96];
    snprintf(what, sizeof what, "a number in [0, %g%s", max, open ? ")" : "]");
    for (int i = 0; i < len; i++, e = e->next) {
        char ip[SIM_JPATH_MAX];
        if (cJSON_IsArray(v))
            sim_jpath_idx(ip, sizeof ip, kp, i);
        else
            snprintf(ip, sizeof ip, "%s", kp);
        if (!cJSON_IsNumber(e) || !(e->valuedouble >= 0) ||
            (open ? e->valuedouble >= max : e->valuedouble > max)) {
            free(*out);
            *out = NULL;
            return sim_json_expected(ip, what, e);
        }
        (*out)[i] = e->valuedouble;
    }
    *n = len;
    return 0;
}

/* A profile's "service": how a batch's duration varies around l(b) (sim_world.h). */
static const char *const DISTS[] = {"none", "lognormal", "gamma", NULL};
static const struct sim_param SERVICE[] = {
    {"dist", SIM_P_ENUM, SIM_P_AT_ENUM(struct sim_service, dist), .choices = DISTS,
     .flags = SIM_P_REQUIRED, .doc = "X's distribution: a batch of b lasts l(b) (f + X), X of "
                                     "mean 1 - f and standard deviation `cv`"},
    {"cv", SIM_P_HAND, .type_doc = "a number in [0, 10] or a list per batch size from 1",
     .def_doc = "required unless `none`",
     .doc = "the duration's coefficient of variation (the last value holds for larger "
            "batches; 0 leaves that size exact)"},
    {"shift", SIM_P_HAND, .type_doc = "a number in [0, 1) or a list per batch size", .def_doc = "0",
     .doc = "f, the share that never varies"},
    {NULL}};

static int parse_service(const cJSON *o, const char *path, struct sim_service *v)
{
    int rc;
    if (!cJSON_IsObject(o))
        return sim_json_expected(path, "a service object {dist, cv, shift}", o);
    if ((rc = sim_params_read(SERVICE, o, path, v)))
        return rc;
    int dist = (int)v->dist;
    if ((rc = num_or_list(o, path, "cv", 10, false, &v->cv, &v->ncv)) ||
        (rc = num_or_list(o, path, "shift", 1, true, &v->shift, &v->nshift)))
        return rc;
    if (v->dist != SIM_SVC_NONE && v->ncv == 0)
        return sim_err_set(SIM_EINVAL, "%s.cv: required with dist \"%s\" (the duration's "
                           "coefficient of variation)", path, DISTS[dist]);
    return 0;
}

static const char *const FORMS[] = {"linear", "quadratic", "table", NULL};
/* A profile's keys: its form by the table, the form's coefficients below (which are
 * required depends on the form) */
static const struct sim_param PROFILE[] = {
    {"form", SIM_P_ENUM, SIM_P_AT_ENUM(struct sim_profile, form), .choices = FORMS,
     .flags = SIM_P_REQUIRED, .doc = "`linear`: l(b) = alpha b + beta; `quadratic`: a b^2 + "
                                     "b b + c; `table`: l(1), l(2), ..., extended linearly"},
    {"alpha_ms", SIM_P_HAND, .type_doc = ">= 0", .def_doc = "required with `linear`",
     .doc = "`linear`: alpha"},
    {"beta_ms", SIM_P_HAND, .type_doc = ">= 0", .def_doc = "required with `linear`",
     .doc = "`linear`: beta (alpha + beta > 0)"},
    {"a_ms", SIM_P_HAND, .type_doc = ">= 0", .def_doc = "required with `quadratic`",
     .doc = "`quadratic`: a"},
    {"b_ms", SIM_P_HAND, .type_doc = ">= 0", .def_doc = "required with `quadratic`",
     .doc = "`quadratic`: b"},
    {"c_ms", SIM_P_HAND, .type_doc = ">= 0", .def_doc = "required with `quadratic`",
     .doc = "`quadratic`: c (a + b + c > 0)"},
    {"latency_ms", SIM_P_HAND, .type_doc = "array of latencies > 0, non-decreasing",
     .def_doc = "required with `table`", .doc = "`table`: l(1), l(2), ..."},
    {"measured", SIM_P_HAND, .type_doc = "object", .def_doc = "",
     .doc = "`servesim-calibrate`'s table and fits (zoo format /2): kept, not read"},
    {"service", SIM_P_SECTION, .rows = SERVICE, .def_doc = "none: a batch lasts exactly l(b)",
     .doc = "how a batch's duration varies around l(b), drawn per executor from its own "
            "stream (`executors.service.<id>`); policies plan with l(b) unless "
            "`policy.plan_quantile` says otherwise"},
    {NULL}};

static int parse_profile(const cJSON *o, const char *path, struct sim_profile *p)
{
    int rc;
    memset(p, 0, sizeof *p);
    if (!cJSON_IsObject(o))
        return sim_json_expected(path, "a profile object", o);
    const cJSON *measured = NULL; /* servesim-calibrate's table and fits: kept, not used */
    if ((rc = sim_params_read(PROFILE, o, path, p)) ||
        (rc = sim_json_obj(o, path, "measured", false, &measured)))
        return rc;
    const cJSON *svc = cJSON_GetObjectItemCaseSensitive(o, "service");
    if (svc) {
        char sp[SIM_JPATH_MAX];
        sim_jpath(sp, sizeof sp, path, "service");
        if ((rc = parse_service(svc, sp, &p->svc)))
            return rc;
    }
    switch (p->form) {
    case SIM_PROF_LINEAR:
        if ((rc = sim_json_num(o, path, "alpha_ms", true, SIM_J_NONNEG, &p->alpha_ms)) ||
            (rc = sim_json_num(o, path, "beta_ms", true, SIM_J_NONNEG, &p->beta_ms)))
            return rc;
        if (p->alpha_ms + p->beta_ms <= 0)
            return sim_err_set(SIM_EINVAL, "%s: expected alpha_ms + beta_ms > 0, got 0", path);
        break;
    case SIM_PROF_QUADRATIC:
        if ((rc = sim_json_num(o, path, "a_ms", true, SIM_J_NONNEG, &p->a_ms)) ||
            (rc = sim_json_num(o, path, "b_ms", true, SIM_J_NONNEG, &p->b_ms)) ||
            (rc = sim_json_num(o, path, "c_ms", true, SIM_J_NONNEG, &p->c_ms)))
            return rc;
        if (p->a_ms + p->b_ms + p->c_ms <= 0)
            return sim_err_set(SIM_EINVAL, "%s: expected a_ms + b_ms + c_ms > 0, got 0", path);
        break;
    case SIM_PROF_TABLE: {
        const cJSON *t;
        char tp[SIM_JPATH_MAX];
        if ((rc = sim_json_arr(o, path, "latency_ms", true, &t)))
            return rc;
        int n = cJSON_GetArraySize(t);
        sim_jpath(tp, sizeof tp, path, "latency_ms");
        if (n < 1)
            return sim_err_set(SIM_EINVAL, "%s: expected at least one latency, got []", tp);
        p->table_ms = malloc((size_t)n * sizeof *p->table_ms);
        if (!p->table_ms)
            return SIM_ENOMEM;
        p->table_n = n;
        const cJSON *v = t->child;      /* walked once: cJSON's indexed lookup is linear */
        for (int i = 0; i < n; i++, v = v->next) {
            char ip[SIM_JPATH_MAX];
            sim_jpath_idx(ip, sizeof ip, tp, i);
            if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) ||
                (i > 0 && v->valuedouble < p->table_ms[i - 1]))
                return sim_json_expected(
                    ip, "a positive latency not below the previous batch size's", v);
            p->table_ms[i] = v->valuedouble;
        }
        break;
    }
    }
    return 0;
}

static int add_profile(struct sim_model_cfg *m, const char *kind, const char *path)
{
    if (m->nprof == SIM_MAX_KINDS)
        return sim_err_set(SIM_EINVAL, "%s: more than %d executor kinds", path, SIM_MAX_KINDS);
    for (int k = 0; k < m->nprof; k++)
        if (strcmp(m->prof_kind[k], kind) == 0)
            return sim_err_set(SIM_EINVAL, "%s: executor kind \"%s\" given twice", path, kind);
    snprintf(m->prof_kind[m->nprof], SIM_NAME_MAX, "%s", kind);
    return m->nprof++;
}

/* A model entry's keys: the numbers by the table, the name and the profile (one of three
 * forms) by wl_model_parse. */
#define MD(f) SIM_P_AT(struct sim_model_cfg, f, double)
const struct sim_param wl_model_keys[] = {
    {"name", SIM_P_HAND, .type_doc = "string", .def_doc = "required",
     .doc = "unique, non-empty, at most 63 characters, without control characters"},
    {"slo_ms", SIM_P_NUM, MD(slo_ms), .cons = SIM_J_POS, .flags = SIM_P_NODEF,
     .def_doc = "required; an LLM model: one hour",
     .doc = "the model's SLO: a request is on time when its response arrives by arrival + SLO; "
            "below the batch-1 latency it is an error. An LLM model's requests are judged by "
            "`llm.ttft_slo_ms` and `llm.tpot_slo_ms`; its `slo_ms` only orders its queue"},
    {"max_batch", SIM_P_INT, SIM_P_AT(struct sim_model_cfg, max_batch, int), .lo = 1, .hi = 4096,
     .def_doc = "the largest b with l(b) <= SLO (at most 1,024)", .doc = "the largest batch"},
    {"share", SIM_P_NUM, MD(share), .cons = SIM_J_NONNEG, .flags = SIM_P_NODEF,
     .def_doc = "none", .doc = "its share of the rate with `workload.popularity.kind: "
                               "\"explicit\"` (and only then)"},
    {"alpha_ms", SIM_P_HAND, .type_doc = ">= 0", .def_doc = "",
     .doc = "with `beta_ms`: the linear profile `l(b) = alpha b + beta` for `cluster.gpu_kind`"},
    {"beta_ms", SIM_P_HAND, .type_doc = ">= 0", .def_doc = "", .doc = "(`alpha_ms`)"},
    {"profile", SIM_P_SECTION, .rows = PROFILE, .def_doc = "",
     .doc = "instead of `alpha_ms` and `beta_ms`: one profile for `cluster.gpu_kind`"},
    {"profiles", SIM_P_HAND, .type_doc = "`{\"KIND\": profile, ...}`", .def_doc = "",
     .doc = "instead: a profile per executor kind (`\"1080ti\"`, `\"a100\"`, `\"cpu\"`, ...), "
            "each as `profile`"},
    {"weights_mb", SIM_P_NUM, MD(weights_mb), .cons = SIM_J_NONNEG, .def = 0,
     .doc = "its weights' memory"},
    {"static_mb", SIM_P_NUM, MD(static_mb), .cons = SIM_J_NONNEG, .def = 0,
     .doc = "memory it holds whatever the batch"},
    {"dynamic_mb", SIM_P_NUM, MD(dynamic_mb), .cons = SIM_J_NONNEG, .def = 0,
     .doc = "activation memory at `max_batch` (scaled linearly with the batch)"},
    {"load_ms", SIM_P_NUM, MD(load_ms), .cons = SIM_J_NONNEG, .def = 0,
     .def_doc = "0: the weights at `cluster.load_gb_s`", .doc = "time to load it onto an executor"},
    {"stack_ms", SIM_P_NUM, MD(stack_ms), .cons = SIM_J_NONNEG, .def = 0,
     .type_doc = ">= 0 and at most an hour",
     .doc = "the serving stack's latency per request in front of the model (below)"},
    {"llm", SIM_P_SECTION, .rows = wl_llm_keys, .def_doc = "none",
     .doc = "an LLM model, served by iterations (docs/llm.md): its architecture, GPU, iteration "
            "profile, KV cache and SLOs; then no latency profile"},
    {"notes", SIM_P_HAND, .type_doc = "any", .def_doc = "", .doc = "free text, not read"},
    {NULL}};
#undef MD

int wl_model_parse(const cJSON *o, const char *path, const char *default_kind,
                   const char *base_dir,
                   struct sim_model_cfg *m)
{
    int rc;
    const char *name = NULL;
    memset(m, 0, sizeof *m);
    m->share = -1;
    if (!cJSON_IsObject(o))
        return sim_json_expected(path, "a model object", o);
    if ((rc = sim_params_read(wl_model_keys, o, path, m)) ||
        (rc = sim_json_str(o, path, "name", true, &name)))
        return rc;
    if (m->stack_ms > WL_STACK_MS_MAX)
        return sim_err_set(SIM_EINVAL, "%s.stack_ms: expected at most %g ms, got %.15g", path,
                           WL_STACK_MS_MAX, m->stack_ms);
    if (strlen(name) >= SIM_NAME_MAX)
        return sim_err_set(SIM_EINVAL, "%s.name: expected at most %d characters, got %zu", path,
                           SIM_NAME_MAX - 1, strlen(name));
    snprintf(m->name, sizeof m->name, "%s", name);

    char p[SIM_JPATH_MAX];
    const cJSON *llm = cJSON_GetObjectItemCaseSensitive(o, "llm");
    if (llm) {
        static const char *const profile_keys[] = {"alpha_ms", "beta_ms", "profile", "profiles",
                                                   "max_batch", NULL};
        for (int i = 0; profile_keys[i]; i++)
            if (cJSON_GetObjectItemCaseSensitive(o, profile_keys[i]))
                return sim_err_set(SIM_EINVAL, "%s.%s: an LLM model (with `llm`) takes no "
                                   "latency profile or max_batch: its iterations are timed by "
                                   "llm.profile", path, profile_keys[i]);
        sim_jpath(p, sizeof p, path, "llm");
        if ((rc = wl_llm_parse(llm, p, default_kind, base_dir, &m->llm)))
            return rc;
        m->llm_on = true;
        if (m->slo_ms <= 0)
            m->slo_ms = 3600e3;
        /* the engine's per-kind tables want a profile: one that no LLM replica reads */
        int k = add_profile(m, default_kind, path);
        if (k < 0)
            return k;
        m->prof[k].form = SIM_PROF_LINEAR;
        m->prof[k].beta_ms = 1e-3;
        m->max_batch = 1;
        return 0;
    }
    if (m->slo_ms <= 0)
        return sim_err_set(SIM_EINVAL, "%s.slo_ms: required (a number > 0)", path);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "alpha_ms");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "beta_ms");
    const cJSON *prof = cJSON_GetObjectItemCaseSensitive(o, "profile");
    const cJSON *profs = cJSON_GetObjectItemCaseSensitive(o, "profiles");
    int forms = (a || b) + (prof != NULL) + (profs != NULL);
    if (forms != 1) {
        rc = sim_err_set(SIM_EINVAL, "%s: expected exactly one of alpha_ms+beta_ms, profile or "
                                     "profiles, got %d", path, forms);
        goto fail;
    }
    if (a || b) {
        int k = add_profile(m, default_kind, path);
        if (k < 0)
            return k;
        m->prof[k].form = SIM_PROF_LINEAR;
        if ((rc = sim_json_num(o, path, "alpha_ms", true, SIM_J_NONNEG, &m->prof[k].alpha_ms)) ||
            (rc = sim_json_num(o, path, "beta_ms", true, SIM_J_NONNEG, &m->prof[k].beta_ms)))
            goto fail;
        if (m->prof[k].alpha_ms + m->prof[k].beta_ms <= 0) {
            rc = sim_err_set(SIM_EINVAL, "%s: expected alpha_ms + beta_ms > 0, got 0", path);
            goto fail;
        }
    } else if (prof) {
        int k = add_profile(m, default_kind, path);
        if (k < 0)
            return k;
        sim_jpath(p, sizeof p, path, "profile");
        if ((rc = parse_profile(prof, p, &m->prof[k])))
            goto fail;
    } else {
        sim_jpath(p, sizeof p, path, "profiles");
        if (!cJSON_IsObject(profs) || !profs->child) {
            rc = sim_json_expected(p, "an object {kind: profile}", profs);
            goto fail;
        }
        const cJSON *it;
        cJSON_ArrayForEach(it, profs) {
            char kp[SIM_JPATH_MAX];
            sim_jpath(kp, sizeof kp, p, it->string);
            int k = add_profile(m, it->string, kp);
            if (k < 0) {
                rc = k;
                goto fail;
            }
            if ((rc = parse_profile(it, kp, &m->prof[k])))
                goto fail;
        }
    }
    return 0;
fail:
    sim_model_cfg_free(m);
    return rc;
}

const char *wl_zoo_dir(char *out, size_t size)
{
    const char *env = getenv("SERVESIM_ZOO_DIR");
    if (env && env[0]) {
        snprintf(out, size, "%s", env);
        return out;
    }
    return sim_data_dir("zoo", SERVESIM_ZOO_DIR, out, size);
}

void wl_zoo_resolve(const char *ref, const char *base_dir, char *out, size_t size)
{
    size_t n = strlen(ref);
    bool bare = !strchr(ref, '/') && !(n > 5 && strcmp(ref + n - 5, ".json") == 0);
    if (bare) {
        char dir[4096];
        snprintf(out, size, "%s/%s.json", wl_zoo_dir(dir, sizeof dir), ref);
    } else if (ref[0] == '/' || !base_dir || !base_dir[0]) {
        snprintf(out, size, "%s", ref);
    } else {
        snprintf(out, size, "%s/%s", base_dir, ref);
    }
}

/* A zoo file's keys (format servesim-zoo/1 or /2) */
struct zoo_in {
    const char *format, *executor_kind;
    double executor_memory_mb;
    const cJSON *models, *provenance;
};
#define ZI(f, type) SIM_P_AT(struct zoo_in, f, type)
const struct sim_param wl_zoo_keys[] = {
    {"format", SIM_P_STR, ZI(format, const char *), .flags = SIM_P_REQUIRED,
     .type_doc = "`\"servesim-zoo/1\"` or `\"servesim-zoo/2\"`",
     .doc = "/2 (written by `servesim-calibrate`) adds `provenance` and profiles' `measured` "
            "tables; any other version is refused"},
    {"name", SIM_P_HAND, .type_doc = "string", .def_doc = "", .doc = "its name, not read"},
    {"source", SIM_P_HAND, .type_doc = "string", .def_doc = "",
     .doc = "where its numbers come from, not read"},
    {"notes", SIM_P_HAND, .type_doc = "any", .def_doc = "", .doc = "free text, not read"},
    {"executor_kind", SIM_P_STR, ZI(executor_kind, const char *), .flags = SIM_P_REQUIRED,
     .doc = "the kind its `alpha_ms`/`beta_ms` and `profile` entries are for"},
    {"executor_memory_mb", SIM_P_NUM, ZI(executor_memory_mb, double), .cons = SIM_J_POS,
     .def_doc = "", .doc = "the memory of that executor, for the reader"},
    {"models", SIM_P_ARR, ZI(models, const cJSON *), .flags = SIM_P_REQUIRED,
     .type_doc = "array of model entries", .doc = "`models[]` in the config's form"},
    {"provenance", SIM_P_OBJ, ZI(provenance, const cJSON *), .def_doc = "",
     .doc = "/2: the device, driver, libraries and options that measured it"},
    {NULL}};
#undef ZI

static int zoo_models(const char *file, const cJSON *zoo, const cJSON **models,
                      const char **kind)
{
    struct zoo_in in;
    int rc;
    if (!cJSON_IsObject(zoo))
        return sim_err_set(SIM_EINVAL, "%s: expected a zoo object at the top level", file);
    if ((rc = sim_params_read(wl_zoo_keys, zoo, "", &in)))
        return sim_err_prefix(rc, file);
    const char *format = in.format;
    *kind = in.executor_kind;
    *models = in.models;
    /* /2 (servesim-calibrate) adds "provenance" and profiles' "measured" tables */
    if (strcmp(format, "servesim-zoo/1") != 0 && strcmp(format, "servesim-zoo/2") != 0)
        return sim_err_set(SIM_EINVAL, "%s: format: expected \"servesim-zoo/1\" or "
                           "\"servesim-zoo/2\", got \"%s\" (a newer servesim may read it)",
                           file, format);
    return 0;
}

static size_t pow2_at_least(size_t n)
{
    size_t c = 1;
    while (c < n)
        c *= 2;
    return n ? c : 0;
}

int wl_models_reserve(struct sim_model_cfg **models, int n, int more)
{
    size_t have = pow2_at_least((size_t)n), need = pow2_at_least((size_t)n + (size_t)more);
    if (need <= have && *models)
        return 0;
    struct sim_model_cfg *nm = realloc(*models, need * sizeof *nm);
    if (!nm)
        return SIM_ENOMEM;
    *models = nm;
    return 0;
}

/* latency_scale {"kind": factor}: every factor a number in [1e-3, 1e3]. */
static int check_latency_scale(const cJSON *ls, const char *path)
{
    char lp[SIM_JPATH_MAX];
    sim_jpath(lp, sizeof lp, path, "latency_scale");
    for (const cJSON *k = ls->child; k; k = k->next) {
        double f;
        int rc = sim_json_num(ls, lp, k->string, true, SIM_J_POS, &f);
        if (rc)
            return rc;
        if (f < 1e-3 || f > 1e3) {
            char kp[SIM_JPATH_MAX];
            sim_jpath(kp, sizeof kp, lp, k->string);
            return sim_err_set(SIM_EINVAL, "%s: expected a factor in [0.001, 1000], got %.15g", kp, f);
        }
    }
    return 0;
}

/* Multiplies every latency of the profiles of the kinds latency_scale names (a "what if this
 * device were x times slower" without a second zoo); kinds the model lacks are skipped (a kind
 * no selected model has is refused after the expansion). */
static void scale_latencies(struct sim_model_cfg *m, const cJSON *ls)
{
    for (const cJSON *k = ls->child; k; k = k->next) {
        int i = sim_model_cfg_kind(m, k->string);
        if (i < 0)
            continue;
        struct sim_profile *p = &m->prof[i];
        double f = k->valuedouble;
        p->alpha_ms *= f;
        p->beta_ms *= f;
        p->a_ms *= f;
        p->b_ms *= f;
        p->c_ms *= f;
        for (int j = 0; j < p->table_n; j++)
            p->table_ms[j] *= f;
    }
}

/* A zoo reference's keys (an entry of the config's models[] with `zoo`) */
struct zref_in {
    const char *zoo;
    double slo_ms, stack_scale;
    int max_batch;
    const cJSON *latency_scale;
};
#define ZR(f, type) SIM_P_AT(struct zref_in, f, type)
const struct sim_param wl_zoo_ref_keys[] = {
    {"zoo", SIM_P_STR, ZR(zoo, const char *), .flags = SIM_P_REQUIRED,
     .doc = "a shipped zoo's name (`workloads/zoo/`, or `$SERVESIM_ZOO_DIR`) or a file's path, "
            "relative to the config's folder"},
    {"select", SIM_P_HAND, .type_doc = "`\"all\"`, `[\"name\", ...]`, `{\"beta_alpha_gt\": x}` "
     "or `{\"beta_alpha_lt\": x}`", .def_doc = "`\"all\"`",
     .doc = "which of its models: all, those named, or those whose linear profile on the zoo's "
            "kind has beta/alpha above or below x (the Symphony paper's mixed-zoo subsets)"},
    {"slo_ms", SIM_P_NUM, ZR(slo_ms, double), .cons = SIM_J_POS, .def_doc = "the zoo's",
     .doc = "every selected model's SLO"},
    {"max_batch", SIM_P_INT, ZR(max_batch, int), .lo = 1, .hi = 4096, .def_doc = "the zoo's",
     .doc = "every selected model's largest batch"},
    {"latency_scale", SIM_P_OBJ, ZR(latency_scale, const cJSON *),
     .type_doc = "`{\"KIND\": factor}`, factors in [0.001, 1000]", .def_doc = "none",
     .doc = "every latency of the named kinds' profiles times the factor, before `max_batch` "
            "is derived; a kind no selected model has is an error"},
    {"stack_scale", SIM_P_NUM, ZR(stack_scale, double), .cons = SIM_J_NONNEG, .def = 1,
     .type_doc = "in [0, 1000]", .doc = "every selected model's `stack_ms` times this (0 "
                                         "removes the serving stack)"},
    {NULL}};
#undef ZR

/* The index of the zoo's model named `name` among its entries, or -1. */
static int entry_named(const cJSON *const *entries, int nz, const char *name)
{
    for (int j = 0; j < nz; j++) {
        const cJSON *nmj = cJSON_GetObjectItemCaseSensitive(entries[j], "name");
        if (cJSON_IsString(nmj) && strcmp(nmj->valuestring, name) == 0)
            return j;
    }
    return -1;
}

/* Whether model m passes select's beta/alpha filter (gt, lt; < 0: none) on the zoo's kind. */
static bool passes(const struct sim_model_cfg *m, const char *kind, double gt, double lt)
{
    if (gt < 0 && lt < 0)
        return true;
    int k = kind ? sim_model_cfg_kind(m, kind) : -1;
    double ratio = k >= 0 && m->prof[k].form == SIM_PROF_LINEAR && m->prof[k].alpha_ms > 0
                       ? m->prof[k].beta_ms / m->prof[k].alpha_ms : -1;
    return !(ratio < 0 || (gt >= 0 && !(ratio > gt)) || (lt >= 0 && !(ratio < lt)));
}

/* The reference's overrides on a selected model: latency_scale, stack_scale, slo_ms,
 * max_batch. On an error the model is freed. */
static int apply_ref(struct sim_model_cfg *m, const struct zref_in *in, const char *path)
{
    if (in->latency_scale)
        scale_latencies(m, in->latency_scale);
    m->stack_ms *= in->stack_scale;
    if (m->stack_ms > WL_STACK_MS_MAX) {
        int rc = sim_err_set(SIM_EINVAL, "%s.stack_scale: model %s's stack_ms x %g is %g ms, "
                             "expected at most %g", path, m->name, in->stack_scale, m->stack_ms,
                             WL_STACK_MS_MAX);
        sim_model_cfg_free(m);
        return rc;
    }
    if (in->slo_ms > 0)
        m->slo_ms = in->slo_ms;
    if (in->max_batch > 0)
        m->max_batch = in->max_batch;
    return 0;
}

int wl_zoo_expand(const cJSON *ref, const char *path, const char *base_dir,
                  struct sim_model_cfg **models, int *n)
{
    struct zref_in in;
    int rc;
    if ((rc = sim_params_read(wl_zoo_ref_keys, ref, path, &in)) ||
        (in.latency_scale && (rc = check_latency_scale(in.latency_scale, path))))
        return rc;
    const char *zref = in.zoo;
    const cJSON *lscale = in.latency_scale;
    if (in.stack_scale > 1e3)
        return sim_err_set(SIM_EINVAL, "%s.stack_scale: expected at most 1000, got %.15g", path,
                           in.stack_scale);

    char file[1024], sp[SIM_JPATH_MAX];
    wl_zoo_resolve(zref, base_dir, file, sizeof file);
    cJSON *zoo = NULL;
    if ((rc = sim_json_load_file(file, &zoo))) {
        char zp[SIM_JPATH_MAX];
        sim_jpath(zp, sizeof zp, path, "zoo");
        return sim_err_prefix(rc, zp);
    }
    const cJSON *zm = NULL, *sel = cJSON_GetObjectItemCaseSensitive(ref, "select");
    const cJSON **entries = NULL;
    const char *kind = NULL;
    if ((rc = zoo_models(file, zoo, &zm, &kind)))
        goto out;
    sim_jpath(sp, sizeof sp, path, "select");
    bool all = !sel || (cJSON_IsString(sel) && strcmp(sel->valuestring, "all") == 0);
    /* {"beta_alpha_gt": x} / {"beta_alpha_lt": x}: models whose linear profile on the zoo's
     * kind has beta/alpha above / below x (the Symphony paper's mixed-zoo subsets) */
    double gt = -1, lt = -1;
    if (cJSON_IsObject(sel)) {
        struct bounds {
            double gt, lt;
        } b;
        static const struct sim_param FILTER[] = {
            {"beta_alpha_gt", SIM_P_NUM, SIM_P_AT(struct bounds, gt, double), .cons = SIM_J_NONNEG,
             .def = -1, .doc = "beta/alpha above this"},
            {"beta_alpha_lt", SIM_P_NUM, SIM_P_AT(struct bounds, lt, double), .cons = SIM_J_NONNEG,
             .def = -1, .doc = "beta/alpha below this"},
            {NULL}};
        if ((rc = sim_params_read(FILTER, sel, sp, &b)))
            goto out;
        gt = b.gt;
        lt = b.lt;
        all = true;
    } else if (!all && !cJSON_IsArray(sel)) {
        rc = sim_json_expected(sp, "\"all\", an array of model names or {beta_alpha_gt|lt: x}", sel);
        goto out;
    }
    int want = all ? cJSON_GetArraySize(zm) : cJSON_GetArraySize(sel), n0 = *n;
    int nz = cJSON_GetArraySize(zm);
    if ((rc = wl_models_reserve(models, *n, want)))
        goto out;
    if (!(entries = malloc((size_t)(nz > 0 ? nz : 1) * sizeof *entries))) {
        rc = SIM_ENOMEM;
        goto out;
    }
    nz = 0;                             /* the zoo's models by index, walked once */
    for (const cJSON *e = zm->child; e; e = e->next)
        entries[nz++] = e;
    const cJSON *s = sim_json_first(sel);
    for (int i = 0; i < want; i++, s = s ? s->next : NULL) {
        const cJSON *entry = NULL;
        int zi = i;
        if (!all) {
            char ip[SIM_JPATH_MAX];
            sim_jpath_idx(ip, sizeof ip, sp, i);
            if (!cJSON_IsString(s)) {
                rc = sim_json_expected(ip, "a model name", s);
                goto out;
            }
            if ((zi = entry_named(entries, nz, s->valuestring)) < 0) {
                rc = sim_err_set(SIM_EINVAL, "%s: model \"%s\" is not in zoo %s", ip,
                                 s->valuestring, file);
                goto out;
            }
        }
        entry = entries[zi];
        char mp[SIM_JPATH_MAX];
        sim_jpath_idx(mp, sizeof mp, "models", zi);
        char zdir[1024];                        /* the zoo's folder: its files' base */
        snprintf(zdir, sizeof zdir, "%s", file);
        char *slash = strrchr(zdir, '/');
        if (slash)
            *slash = 0;
        else
            snprintf(zdir, sizeof zdir, ".");
        if ((rc = wl_model_parse(entry, mp, kind, zdir, &(*models)[*n]))) {
            sim_err_prefix(rc, file);
            goto out;
        }
        if (!passes(&(*models)[*n], kind, gt, lt)) {
            sim_model_cfg_free(&(*models)[*n]);
            continue;
        }
        if ((rc = apply_ref(&(*models)[*n], &in, path)))
            goto out;
        (*n)++;
    }
    if (*n == n0)
        rc = sim_err_set(SIM_EINVAL, "%s: no model of zoo %s matches", sp, file);
    for (const cJSON *k = lscale ? lscale->child : NULL; k && !rc; k = k->next) {
        int i = n0;
        while (i < *n && sim_model_cfg_kind(&(*models)[i], k->string) < 0)
            i++;
        if (i == *n) {
            char kp[SIM_JPATH_MAX], lp[SIM_JPATH_MAX];
            sim_jpath(lp, sizeof lp, path, "latency_scale");
            sim_jpath(kp, sizeof kp, lp, k->string);
            rc = sim_err_set(SIM_EINVAL, "%s: no selected model of zoo %s has a profile of "
                             "kind \"%s\"", kp, file, k->string);
        }
    }
out:
    free(entries);
    cJSON_Delete(zoo);
    return rc;
}
