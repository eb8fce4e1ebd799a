/* wl_llm_profile — the measured iteration-time profile of an LLM model (format
 * servesim-llm-profile/1, docs/llm.md "Iteration time"): read from a model's `llm.profile`,
 * inline or from a file, checked against the model it times (architecture, GPU, tensor
 * parallelism), into the engine's struct sim_llm_table. Every error names the file (where
 * there is one) and the JSON path, what was expected and what was found. */
#include "wl_llm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "sim_json.h"

#define FORMAT "servesim-llm-profile/1"

/* The numbers of array `key` of o (at `path`): at least 1, finite, each >= 0, and strictly
 * increasing where `axis`. *out owned. */
static int numbers(const cJSON *o, const char *path, const char *key, bool axis, double **out,
                   int *n)
{
    char p[SIM_JPATH_MAX];
    sim_jpath(p, sizeof p, path, key);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
    int k = cJSON_GetArraySize(a);
    if (!cJSON_IsArray(a) || k < 1)
        return sim_json_expected(p, "a non-empty array of numbers", a);
    double *v = malloc((size_t)k * sizeof *v);
    if (!v)
        return SIM_ENOMEM;
    int i = 0;
    for (const cJSON *e = a->child; e; e = e->next, i++) {
        char ip[SIM_JPATH_MAX];
        sim_jpath_idx(ip, sizeof ip, p, i);
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || e->valuedouble < 0) {
            free(v);
            return sim_json_expected(ip, "a finite number >= 0", e);
        }
        v[i] = e->valuedouble;
        if (axis && i > 0 && !(v[i] > v[i - 1])) {
            double before = v[i - 1], here = v[i];
            free(v);
            return sim_err_set(SIM_EINVAL, "%s: expected above the point before it (%.15g): "
                               "an axis increases strictly, found %.15g", ip, before, here);
        }
    }
    *out = v;
    *n = k;
    return 0;
}

/* {"<axis>": [...], "us": [...]} at o.key into c (times in ns); absent: c->n 0 unless
 * required. */
static int curve(const cJSON *o, const char *path, const char *key, const char *axis,
                 bool required, struct sim_llm_curve *c)
{
    char p[SIM_JPATH_MAX];
    sim_jpath(p, sizeof p, path, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v && !required)
        return 0;
    const char *allowed[] = {axis, "us", NULL};
    if (!cJSON_IsObject(v))
        return sim_json_expected(p, "an object of an axis and its times in us", v);
    int rc, ny = 0;
    if ((rc = sim_json_keys(v, p, allowed)) || (rc = numbers(v, p, axis, true, &c->x, &c->n)) ||
        (rc = numbers(v, p, "us", false, &c->y, &ny)))
        return rc;
    if (ny != c->n)
        return sim_err_set(SIM_EINVAL, "%s.us: expected %d times, one per point of %s, found "
                           "%d", p, c->n, axis, ny);
    for (int i = 0; i < c->n; i++)
        c->y[i] *= 1e3;
    return 0;
}

/* {"<x>": [...], "<y>": [...], "us": [[...] per x]} at o.key into g (ns). */
static int grid(const cJSON *o, const char *path, const char *key, const char *xa,
                const char *ya, struct sim_llm_grid *g)
{
    char p[SIM_JPATH_MAX], up[SIM_JPATH_MAX];
    sim_jpath(p, sizeof p, path, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    const char *allowed[] = {xa, ya, "us", NULL};
    if (!cJSON_IsObject(v))
        return sim_json_expected(p, "an object of two axes and a table of times in us", v);
    int rc;
    if ((rc = sim_json_keys(v, p, allowed)) || (rc = numbers(v, p, xa, true, &g->x, &g->nx)) ||
        (rc = numbers(v, p, ya, true, &g->y, &g->ny)))
        return rc;
    sim_jpath(up, sizeof up, p, "us");
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(v, "us");
    if (!cJSON_IsArray(rows) || cJSON_GetArraySize(rows) != g->nx)
        return sim_err_set(SIM_EINVAL, "%s: expected %d rows (one per point of %s) of %d times "
                           "(one per point of %s), found %s", up, g->nx, xa, g->ny, ya,
                           cJSON_IsArray(rows) ? "another count of rows" : "no array");
    if (!(g->z = malloc((size_t)g->nx * (size_t)g->ny * sizeof *g->z)))
        return SIM_ENOMEM;
    int i = 0;
    for (const cJSON *r = rows->child; r; r = r->next, i++) {
        char rp[SIM_JPATH_MAX];
        sim_jpath_idx(rp, sizeof rp, up, i);
        if (!cJSON_IsArray(r) || cJSON_GetArraySize(r) != g->ny)
            return sim_err_set(SIM_EINVAL, "%s: expected a row of %d times (one per point of "
                               "%s), found %s", rp, g->ny, ya,
                               cJSON_IsArray(r) ? "another length" : "no array");
        int j = 0;
        for (const cJSON *e = r->child; e; e = e->next, j++) {
            if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || e->valuedouble < 0) {
                char ep[SIM_JPATH_MAX];
                sim_jpath_idx(ep, sizeof ep, rp, j);
                return sim_json_expected(ep, "a finite number >= 0", e);
            }
            g->z[i * g->ny + j] = e->valuedouble * 1e3;
        }
    }
    return 0;
}

/* The profile object o (at `path`) for the model `arch` on `gpu` with tensor parallelism
 * tp. */
static int table_of(const cJSON *o, const char *path, const char *arch, const char *gpu, int tp,
                     struct sim_llm_table *t)
{
    static const char *const top[] = {"format", "model", "gpu", "tp", "dtype", "provenance",
                                      "per_layer", "lm_head", "host", "operators", NULL};
    static const char *const per[] = {"dense", "prefill_attention", "decode_attention",
                                      "decode_one", "allreduce", NULL};
    const char *format, *model, *g;
    long ptp;
    int rc;
    const cJSON *pl, *prov;
    char p[SIM_JPATH_MAX];
    if ((rc = sim_json_keys(o, path, top)) || (rc = sim_json_str(o, path, "format", true, &format)))
        return rc;
    if (strcmp(format, FORMAT) != 0) {
        sim_jpath(p, sizeof p, path, "format");
        return sim_err_set(SIM_EINVAL, "%s: expected \"" FORMAT "\", found \"%s\"", p, format);
    }
    if ((rc = sim_json_str(o, path, "model", true, &model)) ||
        (rc = sim_json_str(o, path, "gpu", true, &g)) ||
        (rc = sim_json_int(o, path, "tp", true, 1, 8, &ptp)))
        return rc;
    if (strcmp(model, arch) != 0 || strcmp(g, gpu) != 0 || ptp != tp)
        return sim_err_set(SIM_EINVAL, "%s: a profile of %s on %s at tensor parallelism %ld, for "
                           "a model configured as %s on %s at %d: a measured profile times "
                           "only what it measured", path, model, g, ptp, arch, gpu, tp);
    if ((rc = sim_json_obj(o, path, "per_layer", true, &pl)) ||
        (rc = sim_json_obj(o, path, "provenance", false, &prov)))
        return rc;
    sim_jpath(p, sizeof p, path, "per_layer");
    if ((rc = sim_json_keys(pl, p, per)) ||
        (rc = curve(pl, p, "dense", "tokens", true, &t->dense)) ||
        (rc = grid(pl, p, "prefill_attention", "chunk", "context", &t->prefill)) ||
        (rc = grid(pl, p, "decode_attention", "seqs", "kv_tokens", &t->decode)) ||
        (rc = curve(pl, p, "decode_one", "context", false, &t->decode_one)) ||
        (rc = curve(pl, p, "allreduce", "tokens", false, &t->allreduce)) ||
        (rc = curve(o, path, "lm_head", "seqs", true, &t->lm_head)) ||
        (rc = curve(o, path, "host", "seqs", false, &t->host)))
        return rc;
    int n = snprintf(t->source, sizeof t->source, "%s on %s, tp %ld", model, g, ptp);
    const cJSON *dev = prov ? cJSON_GetObjectItemCaseSensitive(prov, "device") : NULL;
    const cJSON *lib = prov ? cJSON_GetObjectItemCaseSensitive(prov, "libraries") : NULL;
    if (cJSON_IsString(dev) && n > 0 && (size_t)n < sizeof t->source)
        n += snprintf(t->source + n, sizeof t->source - (size_t)n, "; %s", dev->valuestring);
    if (cJSON_IsString(lib) && n > 0 && (size_t)n < sizeof t->source)
        snprintf(t->source + n, sizeof t->source - (size_t)n, "; %s", lib->valuestring);
    return 0;
}

int wl_llm_profile_read(const cJSON *o, const char *path, const char *base_dir,
                        const char *arch, const char *gpu, int tp, struct sim_llm_table **out)
{
    struct sim_llm_table *t = calloc(1, sizeof *t);
    if (!t)
        return SIM_ENOMEM;
    int rc;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "file");
    if (f) {                                    /* {"file": NAME}: the table in a file */
        static const char *const only[] = {"file", NULL};
        char p[SIM_JPATH_MAX], file[4096];
        sim_jpath(p, sizeof p, path, "file");
        if ((rc = sim_json_keys(o, path, only)))
            goto fail;
        if (!cJSON_IsString(f) || !f->valuestring[0]) {
            rc = sim_json_expected(p, "a file name", f);
            goto fail;
        }
        if (f->valuestring[0] == '/' || !base_dir || !base_dir[0])
            snprintf(file, sizeof file, "%s", f->valuestring);
        else
            snprintf(file, sizeof file, "%s/%s", base_dir, f->valuestring);
        cJSON *doc = NULL;
        if ((rc = sim_json_load_file(file, &doc)))
            goto fail;
        rc = cJSON_IsObject(doc) ? table_of(doc, "(top)", arch, gpu, tp, t)
                                 : sim_json_expected("(top)", "a profile object", doc);
        cJSON_Delete(doc);
        if (rc) {
            sim_err_prefix(rc, file);
            goto fail;
        }
        char src[sizeof t->source];
        snprintf(src, sizeof src, "%s", t->source);
        snprintf(t->source, sizeof t->source, "%s (%s)", src, f->valuestring);
    } else if ((rc = table_of(o, path, arch, gpu, tp, t))) {
        goto fail;
    }
    *out = t;
    return 0;
fail:
    sim_llm_table_free(t);
    return rc;
}
