/* cal_profile — fits, zoo files and database rows of calibrated profiles. */
#include "cal_profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "sim_err.h"
#include "sim_out.h"
#include "sim_store.h"

/* The statistic of point i that fits and tables use: a serving-like point's mean (its
 * distribution carries the rest), else the median or (fit_p99) the p99. */
static double stat_ms(const struct cal_series *s, int i)
{
    if (s->pts[i].serving)
        return s->pts[i].mean_ms;
    return s->fit_p99 ? s->pts[i].p99_ms : s->pts[i].median_ms;
}

/* Serving-like points: the distribution with the smaller summed KS distance. */
static int svc_dist(const struct cal_series *s)
{
    double sum[CAL_SVC_NDIST] = {0};
    for (int i = 0; i < s->n; i++)
        for (int d = 0; d < CAL_SVC_NDIST; d++)
            sum[d] += s->pts[i].svc[d].ks;
    return sum[CAL_SVC_GAMMA] < sum[CAL_SVC_LOGNORMAL] ? CAL_SVC_GAMMA : CAL_SVC_LOGNORMAL;
}

/* A per-point value at batch b: linear between measured sizes, constant beyond them. */
static double interp_pts(const struct cal_series *s, int b, const double *v)
{
    const struct cal_point *p = s->pts;
    if (b <= p[0].batch || s->n == 1)
        return v[0];
    int i = 1;
    while (i < s->n - 1 && p[i].batch < b)
        i++;
    if (b >= p[i].batch)
        return v[i];
    double f = (double)(b - p[i - 1].batch) / (p[i].batch - p[i - 1].batch);
    return v[i - 1] + f * (v[i] - v[i - 1]);
}

int cal_series_fit(struct cal_series *s, double tol)
{
    double x[CAL_MAX_POINTS], y[CAL_MAX_POINTS];
    for (int i = 0; i < s->n; i++)
        x[i] = s->pts[i].batch, y[i] = stat_ms(s, i);
    memset(&s->robust, 0, sizeof s->robust);
    memset(&s->quad, 0, sizeof s->quad);
    if (s->n < 2) {
        s->chosen = CAL_FIT_LINEAR;
        memset(&s->lin, 0, sizeof s->lin);
        s->lin.c1 = y[0] / x[0], s->lin.n = 1; /* one point: proportional */
        snprintf(s->why, sizeof s->why, "table (one batch size measured)");
        return 0;
    }
    int rc = cal_fit(CAL_FIT_LINEAR, x, y, s->n, &s->lin);
    if (!rc && s->n >= 4)
        rc = cal_fit(CAL_FIT_ROBUST, x, y, s->n, &s->robust);
    if (!rc && s->n >= 3)
        rc = cal_fit(CAL_FIT_QUADRATIC, x, y, s->n, &s->quad);
    if (!rc)
        s->chosen = cal_fit_recommend(&s->lin, &s->quad, tol, s->why, sizeof s->why);
    return rc;
}

static const struct cal_fit *chosen_fit(const struct cal_series *s)
{
    return s->chosen == CAL_FIT_QUADRATIC ? &s->quad : &s->lin;
}

/* A usable closed form: every coefficient non-negative (the zoo's rule). */
static bool form_ok(const struct cal_series *s)
{
    const struct cal_fit *f = chosen_fit(s);
    return s->n >= 2 && s->chosen != CAL_FIT_TABLE && f->c0 >= 0 && f->c1 >= 0 && f->c2 >= 0 && cal_fit_eval(f, 1) > 0;
}

/* Latency at batch b from the measured medians (p99s with fit_p99): linear between measured
 * sizes, kept non-decreasing (the table form's rule). */
static double table_at(const struct cal_series *s, int b)
{
    const struct cal_point *p = s->pts;
    double v;
    if (b <= p[0].batch)
        v = stat_ms(s, 0) * (s->n == 1 ? (double)b / p[0].batch : 1);
    else {
        int i = 1;
        while (i < s->n - 1 && p[i].batch < b)
            i++;
        double f = (double)(b - p[i - 1].batch) / (p[i].batch - p[i - 1].batch);
        v = stat_ms(s, i - 1) + f * (stat_ms(s, i) - stat_ms(s, i - 1));
    }
    return v;
}

double cal_default_slo_ms(const struct cal_series *s)
{
    /* batch 4, or the largest measured where that is smaller: a zoo measured at 1 and 2
     * gets no SLO from an extrapolated l(4) */
    int ref = s->n > 0 && s->pts[s->n - 1].batch < 4 ? s->pts[s->n - 1].batch : 4;
    double l4 = form_ok(s) ? cal_fit_eval(chosen_fit(s), ref) : table_at(s, ref);
    /* never below a measured batch of at most ref: extrapolating from noisy small batches
     * (l(2) < l(1) on a loaded machine) can reach 0 or below */
    for (int i = 0; i < s->n && s->pts[i].batch <= ref; i++)
        if (stat_ms(s, i) > l4)
            l4 = stat_ms(s, i);
    return ceil(20 * l4) / 10;
}

static cJSON *fit_json(const struct cal_fit *f, const char *form)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "form", form);
    if (!strcmp(form, "quadratic")) {
        cJSON_AddNumberToObject(o, "a_ms", f->c2);
        cJSON_AddNumberToObject(o, "b_ms", f->c1);
        cJSON_AddNumberToObject(o, "c_ms", f->c0);
    } else {
        cJSON_AddNumberToObject(o, "alpha_ms", f->c1);
        cJSON_AddNumberToObject(o, "beta_ms", f->c0);
    }
    cJSON_AddNumberToObject(o, "r2", f->r2);
    cJSON_AddNumberToObject(o, "max_rel_err", f->max_rel_err);
    cJSON_AddNumberToObject(o, "worst_batch", f->worst_batch);
    return o;
}

static cJSON *fits_json(const struct cal_series *s)
{
    cJSON *a = cJSON_CreateArray();
    if (s->lin.n >= 2)
        cJSON_AddItemToArray(a, fit_json(&s->lin, "linear"));
    if (s->robust.n)
        cJSON_AddItemToArray(a, fit_json(&s->robust, "linear_robust"));
    if (s->quad.n)
        cJSON_AddItemToArray(a, fit_json(&s->quad, "quadratic"));
    return a;
}

static double r6(double v)
{
    return round(v * 1e6) / 1e6;
}

/* The zoo profile object of a series: its chosen closed form (or the table when that form has
 * a negative coefficient), the measured table and the fit quality. */
static cJSON *profile_json(const struct cal_series *s, const char **form_out)
{
    cJSON *p = cJSON_CreateObject();
    const struct cal_fit *f = chosen_fit(s);
    int bmax = s->pts[s->n - 1].batch;
    if (form_ok(s) && s->chosen == CAL_FIT_QUADRATIC) {
        *form_out = "quadratic";
        cJSON_AddStringToObject(p, "form", "quadratic");
        cJSON_AddNumberToObject(p, "a_ms", r6(f->c2));
        cJSON_AddNumberToObject(p, "b_ms", r6(f->c1));
        cJSON_AddNumberToObject(p, "c_ms", r6(f->c0));
    } else if (form_ok(s)) {
        *form_out = "linear";
        cJSON_AddStringToObject(p, "form", "linear");
        cJSON_AddNumberToObject(p, "alpha_ms", r6(f->c1));
        cJSON_AddNumberToObject(p, "beta_ms", r6(f->c0));
    } else {
        *form_out = "table";
        cJSON_AddStringToObject(p, "form", "table");
        cJSON *t = cJSON_AddArrayToObject(p, "latency_ms");
        double prev = 0;
        for (int b = 1; b <= bmax; b++) {
            double v = fmax(prev, table_at(s, b));
            cJSON_AddItemToArray(t, cJSON_CreateNumber(r6(v)));
            prev = v;
        }
    }
    cJSON *m = cJSON_AddObjectToObject(p, "measured");
    cJSON *bs = cJSON_AddArrayToObject(m, "batch"), *med = cJSON_AddArrayToObject(m, "median_ms");
    cJSON *p99 = cJSON_AddArrayToObject(m, "p99_ms"), *sd = cJSON_AddArrayToObject(m, "sd_ms");
    for (int i = 0; i < s->n; i++) {
        cJSON_AddItemToArray(bs, cJSON_CreateNumber(s->pts[i].batch));
        cJSON_AddItemToArray(med, cJSON_CreateNumber(r6(s->pts[i].median_ms)));
        cJSON_AddItemToArray(p99, cJSON_CreateNumber(r6(s->pts[i].p99_ms)));
        cJSON_AddItemToArray(sd, cJSON_CreateNumber(r6(s->pts[i].sd_ms)));
    }
    cJSON_AddItemToObject(m, "fits", fits_json(s));
    cJSON_AddStringToObject(m, "recommendation", s->why);
    if (s->n > 0 && s->pts[0].serving) {
        static const char *const names[CAL_SVC_NDIST] = {"lognormal", "gamma"};
        int d = svc_dist(s);
        double cv[CAL_MAX_POINTS], sh[CAL_MAX_POINTS];
        for (int i = 0; i < s->n; i++)
            cv[i] = s->pts[i].cv, sh[i] = s->pts[i].svc[d].shift;
        cJSON *sv = cJSON_AddObjectToObject(p, "service");
        cJSON_AddStringToObject(sv, "dist", names[d]);
        cJSON *cva = cJSON_AddArrayToObject(sv, "cv"), *sha = cJSON_AddArrayToObject(sv, "shift");
        for (int b = 1; b <= bmax; b++) {
            cJSON_AddItemToArray(cva, cJSON_CreateNumber(r6(interp_pts(s, b, cv))));
            cJSON_AddItemToArray(sha, cJSON_CreateNumber(r6(fmin(0.999, interp_pts(s, b, sh)))));
        }
        cJSON *se = cJSON_AddObjectToObject(m, "serving");
        const char *cols[] = {"mean_ms", "p90_ms", "cv", "min_ms", "max_ms", "ks_crit"};
        for (int c = 0; c < 6; c++) {
            cJSON *a = cJSON_AddArrayToObject(se, cols[c]);
            for (int i = 0; i < s->n; i++) {
                const struct cal_point *q = &s->pts[i];
                double v[] = {q->mean_ms, q->p90_ms, q->cv, q->min_ms, q->max_ms, q->ks_crit};
                cJSON_AddItemToArray(a, cJSON_CreateNumber(r6(v[c])));
            }
        }
        for (int e = 0; e < CAL_SVC_NDIST; e++) {
            char key[40];
            snprintf(key, sizeof key, "%s_shift", names[e]);
            cJSON *a = cJSON_AddArrayToObject(se, key);
            snprintf(key, sizeof key, "%s_ks", names[e]);
            cJSON *k = cJSON_AddArrayToObject(se, key);
            for (int i = 0; i < s->n; i++) {
                cJSON_AddItemToArray(a, cJSON_CreateNumber(r6(s->pts[i].svc[e].shift)));
                cJSON_AddItemToArray(k, cJSON_CreateNumber(r6(s->pts[i].svc[e].ks)));
            }
        }
    }
    return p;
}

const char *cal_exec_text(const struct cal_opts *o, char *buf, size_t size)
{
    snprintf(buf, size, "%s, %s, %s", cal_exec_name(o), o->unfused ? "unfused" : "fused",
             o->precision == CAL_FP32 ? "nchw" : "nhwc");
    return buf;
}

int cal_profile_write_zoo(const char *file, const char *zoo_name,
                          const struct cal_provenance *pv, const struct cal_model_prof *m, int nm)
{
    cJSON *z = cJSON_CreateObject();
    char src[600];
    char how[80];
    if (pv->serving_load > 0)
        snprintf(how, sizeof how, "mean and distribution of %d serving-like passes (load %g)",
                 pv->reps, pv->serving_load);
    else
        snprintf(how, sizeof how, "%s of %d passes", pv->fit_p99 ? "p99" : "median", pv->reps);
    snprintf(src, sizeof src, "servesim-calibrate: %s on %s, %s, %s after %d warm-up, bn %s%s%s",
             pv->backend, pv->dev.device, cal_precision_name(pv->precision), how, pv->warmup,
             pv->folded_bn ? "folded into conv" : "explicit", pv->exec ? ", passes: " : "",
             pv->exec ? pv->exec : "");
    cJSON_AddStringToObject(z, "format", "servesim-zoo/2");
    cJSON_AddStringToObject(z, "name", zoo_name);
    cJSON_AddStringToObject(z, "source", src);
    cJSON_AddStringToObject(z, "notes", "slo_ms = 2 x l(4), or 2 x l(the largest batch measured) where that is "
                            "below 4 (room for a batch of 4); max_batch = "
                            "the largest batch measured; dynamic_mb = activation arena at that "
                            "batch; load_ms = copying the weights in");
    cJSON_AddStringToObject(z, "executor_kind", m[0].series[0].kind);
    cJSON *pvj = cJSON_AddObjectToObject(z, "provenance");
    cJSON_AddStringToObject(pvj, "tool", "servesim-calibrate " SERVESIM_VERSION);
    cJSON_AddStringToObject(pvj, "backend", pv->backend);
    cJSON_AddStringToObject(pvj, "device", pv->dev.device);
    cJSON_AddStringToObject(pvj, "versions", pv->dev.versions);
    cJSON_AddStringToObject(pvj, "precision", cal_precision_name(pv->precision));
    if (pv->exec)
        cJSON_AddStringToObject(pvj, "exec", pv->exec);
    cJSON_AddStringToObject(pvj, "host", pv->host);
    cJSON_AddStringToObject(pvj, "date", pv->date);
    cJSON_AddNumberToObject(pvj, "warmup", pv->warmup);
    cJSON_AddNumberToObject(pvj, "reps", pv->reps);
    cJSON_AddStringToObject(pvj, "fit_on", pv->serving_load > 0 ? "mean" : pv->fit_p99 ? "p99"
                                                                                 : "median");
    if (pv->serving_load > 0)
        cJSON_AddNumberToObject(pvj, "serving_load", pv->serving_load);
    cJSON *models = cJSON_AddArrayToObject(z, "models");
    for (int i = 0; i < nm; i++) {
        const struct cal_model_prof *mp = &m[i];
        const struct cal_series *s0 = &mp->series[0];
        const struct cal_point *big = &s0->pts[s0->n - 1];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", mp->name);
        cJSON_AddNumberToObject(o, "slo_ms", cal_default_slo_ms(s0));
        cJSON_AddNumberToObject(o, "max_batch", big->batch);
        cJSON *profs = cJSON_AddObjectToObject(o, "profiles");
        for (int k = 0; k < mp->nseries; k++) {
            const char *form;
            cJSON_AddItemToObject(profs, mp->series[k].kind, profile_json(&mp->series[k], &form));
        }
        cJSON_AddNumberToObject(o, "weights_mb", r6((double)big->mem.weights_bytes / 1048576.0));
        cJSON_AddNumberToObject(o, "dynamic_mb", r6((double)(big->mem.arena_bytes + big->mem.workspace_bytes) / 1048576.0));
        cJSON_AddNumberToObject(o, "load_ms", r6(big->mem.load_ms));
        cJSON_AddItemToArray(models, o);
    }
    char *text = cJSON_Print(z);
    cJSON_Delete(z);
    if (!text)
        return SIM_ENOMEM;
    int rc = sim_out_write(file, text);
    cJSON_free(text);
    return rc;
}

int cal_profile_write_db(const char *db, const struct cal_provenance *pv,
                         const struct cal_model_prof *m, int nm)
{
    int total = 0;
    for (int i = 0; i < nm; i++)
        total += m[i].nseries;
    struct sim_store_profile *rows = calloc((size_t)total, sizeof *rows);
    struct sim_store_profile_point **pts = calloc((size_t)total, sizeof *pts);
    int *npts = calloc((size_t)total, sizeof *npts);
    char **texts = calloc((size_t)total * 2, sizeof *texts);
    struct sim_store *st = NULL;
    int rc = 0, r = 0;
    if (!rows || !pts || !npts || !texts) {
        rc = SIM_ENOMEM;
        goto out;
    }
    for (int i = 0; i < nm; i++)
        for (int k = 0; k < m[i].nseries; k++, r++) {
            const struct cal_series *s = &m[i].series[k];
            const struct cal_point *big = &s->pts[s->n - 1];
            const char *form;
            cJSON *pj = profile_json(s, &form), *fj = fits_json(s);
            const cJSON *svc = cJSON_GetObjectItemCaseSensitive(pj, "service");
            if (svc) {                  /* serving-like: the service distribution as well */
                cJSON *e = cJSON_Duplicate(svc, true);
                cJSON_AddStringToObject(e, "form", "service");
                cJSON_AddItemToArray(fj, e);
            }
            texts[2 * r] = cJSON_PrintUnformatted(fj);
            cJSON *t = cJSON_GetObjectItemCaseSensitive(pj, "latency_ms");
            texts[2 * r + 1] = t ? cJSON_PrintUnformatted(t) : NULL;
            const struct cal_fit *f = chosen_fit(s);
            bool quad = !strcmp(form, "quadratic"), lin = !strcmp(form, "linear");
            rows[r] = (struct sim_store_profile){
                .executor_kind = s->kind, .model = m[i].name, .form = form,
                .source = "servesim-calibrate", .network = m[i].net->file, .backend = pv->backend,
                .device = pv->dev.device, .versions = pv->dev.versions, .host = pv->host,
                .precision = cal_precision_name(pv->precision), .fits_json = texts[2 * r],
                .recommendation = s->why, .table_json = texts[2 * r + 1], .threads = s->threads,
                .alpha_ms = lin ? f->c1 : NAN, .beta_ms = lin ? f->c0 : NAN,
                .a_ms = quad ? f->c2 : NAN, .b_ms = quad ? f->c1 : NAN, .c_ms = quad ? f->c0 : NAN,
                .r2 = s->n >= 2 ? f->r2 : NAN, .max_rel_err = s->n >= 2 ? f->max_rel_err : NAN,
                .weights_mb = (double)big->mem.weights_bytes / 1048576.0,
                .activations_mb = (double)big->mem.arena_bytes / 1048576.0,
                .workspace_mb = (double)big->mem.workspace_bytes / 1048576.0, .load_ms = big->mem.load_ms,
                .exec = pv->exec};
            cJSON_Delete(pj);
            cJSON_Delete(fj);
            if (!(pts[r] = calloc((size_t)s->n, sizeof *pts[r]))) {
                rc = SIM_ENOMEM;
                goto out;
            }
            npts[r] = s->n;
            for (int j = 0; j < s->n; j++) {
                const struct cal_point *p = &s->pts[j];
                pts[r][j] = (struct sim_store_profile_point){
                    p->batch, p->reps, p->median_ms, p->p99_ms, p->mean_ms, p->sd_ms, p->min_ms,
                    p->max_ms, (double)p->mem.arena_bytes / 1048576.0};
            }
        }
    if (!(rc = sim_store_open(db, &st)))
        rc = sim_store_profiles_write(st, rows, total,
                                      (const struct sim_store_profile_point *const *)pts, npts);
out:
    sim_store_close(st);
    for (int i = 0; texts && i < 2 * total; i++)
        cJSON_free(texts[i]);
    for (int i = 0; pts && i < total; i++)
        free(pts[i]);
    free(rows), free(pts), free(npts), free(texts);
    return rc;
}

int cal_profile_write_llm_db(const char *db, const cJSON *prof, const char *network,
                             const char *backend, const char *host, int threads,
                             double weights_mb, const cJSON *check)
{
    const cJSON *pv = cJSON_GetObjectItemCaseSensitive(prof, "provenance");
#define PSTR(o, k) (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, k))                      \
                        ? cJSON_GetObjectItemCaseSensitive(o, k)->valuestring : NULL)
    double worst = NAN;
    const cJSON *r;
    cJSON_ArrayForEach(r, check) {
        double e = fabs(cJSON_GetObjectItemCaseSensitive(r, "err")->valuedouble);
        worst = isnan(worst) || e > worst ? e : worst;
    }
    char *table = cJSON_PrintUnformatted(prof), *fits = cJSON_PrintUnformatted(check);
    bool gpu = backend && strcmp(backend, "onednn") != 0;
    struct sim_store_profile row = {
        .executor_kind = PSTR(prof, "gpu"), .model = PSTR(prof, "model"), .form = "llm-iteration",
        .source = "servesim-calibrate llm-measure", .network = network, .backend = backend,
        .device = PSTR(pv, "device"), .versions = PSTR(pv, "versions"), .host = host,
        .precision = PSTR(prof, "dtype"), .fits_json = fits, .table_json = table,
        .threads = gpu ? 0 : threads, .exec = gpu ? PSTR(pv, "exec_mode") : NULL,
        .alpha_ms = NAN, .beta_ms = NAN, .a_ms = NAN, .b_ms = NAN, .c_ms = NAN, .r2 = NAN,
        .max_rel_err = worst, .weights_mb = weights_mb, .activations_mb = NAN,
        .workspace_mb = NAN, .load_ms = NAN};
#undef PSTR
    struct sim_store *st = NULL;
    int npts = 0, rc = table && fits ? 0 : SIM_ENOMEM;
    const struct sim_store_profile_point *none = NULL;
    if (!rc && !row.executor_kind)
        rc = sim_err_set(SIM_EINVAL, "llm profile: no \"gpu\" (the executor kind)");
    if (!rc && !(rc = sim_store_open(db, &st)))
        rc = sim_store_profiles_write(st, &row, 1, &none, &npts);
    sim_store_close(st);
    cJSON_free(table), cJSON_free(fits);
    return rc;
}
