/* cal_measure — warm-up, repetitions and summary statistics of forward passes; serving-like
 * timing and the service-time distributions fitted to it. */
#include "cal_measure.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cal_ref.h"
#include "sim_err.h"

void cal_point_stats(double *ms, int n, struct cal_point *out)
{
    gsl_sort(ms, 1, (size_t)n);
    out->reps = n;
    out->median_ms = gsl_stats_median_from_sorted_data(ms, 1, (size_t)n);
    out->p99_ms = gsl_stats_quantile_from_sorted_data(ms, 1, (size_t)n, 0.99);
    out->mean_ms = gsl_stats_mean(ms, 1, (size_t)n);
    out->sd_ms = n > 1 ? gsl_stats_sd_m(ms, 1, (size_t)n, out->mean_ms) : 0;
    out->min_ms = ms[0];
    out->max_ms = ms[n - 1];
    out->p90_ms = gsl_stats_quantile_from_sorted_data(ms, 1, (size_t)n, 0.9);
}

/* The fitted CDF of duration / mean at y: shift f + X, X of mean 1 - f and sd cv. */
static double svc_cdf(int dist, double f, double cv, double y)
{
    double m = 1 - f, x = y - f;
    if (x <= 0)
        return 0;
    double c = cv / m;
    if (dist == CAL_SVC_LOGNORMAL) {
        double sg = sqrt(log1p(c * c));
        return gsl_cdf_lognormal_P(x, log(m) - sg * sg / 2, sg);
    }
    double k = 1 / (c * c);
    return gsl_cdf_gamma_P(x, k, m / k);
}

/* Kolmogorov-Smirnov distance between the n sorted samples / mean and the fitted CDF. */
static double ks_distance(const double *ms, int n, double mean, int dist, double f, double cv)
{
    double d = 0;
    for (int i = 0; i < n; i++) {
        double F = svc_cdf(dist, f, cv, ms[i] / mean);
        d = fmax(d, fmax(fabs(F - (double)i / n), fabs((double)(i + 1) / n - F)));
    }
    return d;
}

void cal_svc_fit(const double *ms, int n, struct cal_point *out)
{
    double mean = gsl_stats_mean(ms, 1, (size_t)n);
    double sd = n > 1 ? gsl_stats_sd_m(ms, 1, (size_t)n, mean) : 0;
    out->cv = mean > 0 ? sd / mean : 0;
    out->ks_crit = 1.36 / sqrt((double)n);
    for (int d = 0; d < CAL_SVC_NDIST; d++) {
        out->svc[d] = (struct cal_svc_fit){0, out->cv > 0 ? 1 : 0};
        if (out->cv <= 0)
            continue;
        /* the constant share: a grid up to just below the fastest pass (all of X > 0) */
        double top = ms[0] / mean;
        for (int g = 0; g <= 40; g++) {
            double f = top * g / 40.0 * 0.999;
            if (f >= 1)
                break;
            double ks = ks_distance(ms, n, mean, d, f, out->cv);
            if (ks < out->svc[d].ks)
                out->svc[d] = (struct cal_svc_fit){f, ks};
        }
    }
}

static void sleep_s(double s)
{
    if (s <= 0)
        return;
    struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    nanosleep(&ts, NULL);
}

int cal_measure_serving(const struct cal_backend_ops *be, const struct cal_opts *bo,
                        const struct cal_net *net, const int *batches, int nb, int warmup,
                        int reps, double load, unsigned long seed, struct cal_point *pts)
{
    if (reps < 2)
        return sim_err_set(SIM_EINVAL, "reps: expected at least 2 for a distribution, got %d",
                           reps);
    if (!(load > 0 && load < 1))
        return sim_err_set(SIM_EINVAL, "--serving: expected a load in (0, 1), got %.15g", load);
    int rc = 0, total = nb * reps;
    void **inst = calloc((size_t)nb, sizeof *inst);
    double **ms = calloc((size_t)nb, sizeof *ms);
    int *order = malloc((size_t)total * sizeof *order), *got = calloc((size_t)nb, sizeof *got);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!inst || !ms || !order || !got || !r) {
        rc = SIM_ENOMEM;
        goto out;
    }
    gsl_rng_set(r, seed);
    for (int j = 0; j < nb && !rc; j++) {
        memset(&pts[j], 0, sizeof pts[j]);
        pts[j].batch = batches[j];
        void *in = cal_ref_input(net, batches[j], 12345);
        if (!in || !(ms[j] = malloc((size_t)reps * sizeof **ms)))
            rc = SIM_ENOMEM;
        if (!rc)
            rc = be->create(bo, &inst[j]);
        if (!rc)
            rc = be->prepare(inst[j], net, batches[j], &pts[j].mem);
        if (!rc)
            rc = be->set_input(inst[j], in);
        for (int w = 0; w < warmup && !rc; w++) {
            double t;
            rc = be->run(inst[j], &t);
        }
        free(in);
        for (int i = 0; i < reps; i++)
            order[j * reps + i] = j;
    }
    if (!rc)
        gsl_ran_shuffle(r, order, (size_t)total, sizeof *order);
    double last = 0;
    for (int i = 0; i < total && !rc; i++) {
        int j = order[i];
        sleep_s(gsl_ran_exponential(r, last * (1 - load) / load) / 1e3);
        double t = 0;
        rc = be->run(inst[j], &t);
        ms[j][got[j]++] = t;
        last = t;
    }
    for (int j = 0; j < nb && !rc; j++) {
        cal_point_stats(ms[j], reps, &pts[j]);
        cal_svc_fit(ms[j], reps, &pts[j]);
        pts[j].serving = true;
    }
out:
    for (int j = 0; inst && j < nb; j++)
        if (inst[j])
            be->destroy(inst[j]);
    for (int j = 0; ms && j < nb; j++)
        free(ms[j]);
    free(inst), free(ms), free(order), free(got);
    gsl_rng_free(r);
    return rc;
}

int cal_measure(const struct cal_backend_ops *be, void *st, const struct cal_net *net, int batch,
                int warmup, int reps, struct cal_point *out)
{
    memset(out, 0, sizeof *out);
    out->batch = batch;
    if (reps < 1)
        return sim_err_set(SIM_EINVAL, "reps: expected at least 1, got %d", reps);
    int rc = be->prepare(st, net, batch, &out->mem);
    if (rc)
        return rc;
    void *in = cal_ref_input(net, batch, 12345);
    double *ms = malloc((size_t)reps * sizeof *ms);
    if (!in || !ms) {
        rc = SIM_ENOMEM;
        goto out;
    }
    if ((rc = be->set_input(st, in)))
        goto out;
    for (int i = 0; i < warmup + reps && !rc; i++) {
        double t = 0;
        rc = be->run(st, &t);
        if (i >= warmup)
            ms[i - warmup] = t;
    }
    if (!rc)
        cal_point_stats(ms, reps, out);
out:
    free(in);
    free(ms);
    return rc;
}

int cal_measure_gaps(const struct cal_backend_ops *be, void *st, int passes, bool copies,
                     struct cal_gaps *out)
{
    memset(out, 0, sizeof *out);
    if (!be->serve_gaps)
        return sim_err_set(SIM_EUNAVAIL, "the %s backend has no host/device split (its passes "
                           "are host work): the host's share of a batch is measured on a GPU "
                           "backend", be->name);
    if (passes < 3)
        return sim_err_set(SIM_EINVAL, "passes: expected at least 3, got %d", passes);
    double *ms = malloc((size_t)passes * sizeof *ms), *us = malloc((size_t)passes * sizeof *us);
    int rc = ms && us ? be->serve_gaps(st, passes, copies, ms, us) : SIM_ENOMEM;
    if (!rc) {
        struct cal_point g, t;
        cal_point_stats(us, passes - 1, &g);
        cal_point_stats(ms, passes, &t);
        *out = (struct cal_gaps){passes, t.median_ms, g.median_ms, g.mean_ms, g.p90_ms, g.p99_ms,
                                 g.min_ms, g.max_ms};
    }
    free(ms);
    free(us);
    return rc;
}
