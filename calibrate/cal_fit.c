/* cal_fit — GSL least-squares, robust and quadratic fits of latency profiles. */
#include "cal_fit.h"

#include <gsl/gsl_fit.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim_err.h"

double cal_fit_eval(const struct cal_fit *f, double b)
{
    return (f->c2 * b + f->c1) * b + f->c0;
}

static void residuals(struct cal_fit *f, const double *x, const double *y, int n)
{
    double mean = gsl_stats_mean(y, 1, (size_t)n), ss_tot = 0, ss_res = 0;
    f->max_rel_err = 0;
    f->worst_batch = (int)x[0];
    f->n = n;
    for (int i = 0; i < n; i++) {
        double p = cal_fit_eval(f, x[i]);
        ss_res += (y[i] - p) * (y[i] - p);
        ss_tot += (y[i] - mean) * (y[i] - mean);
        f->rel_err[i] = fabs(p - y[i]) / y[i];
        if (f->rel_err[i] > f->max_rel_err)
            f->max_rel_err = f->rel_err[i], f->worst_batch = (int)x[i];
    }
    f->r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
}

/* Design matrix with the columns of `mask` among 1, b, b^2 (bit k: b^k). */
static int multifit(enum cal_form form, unsigned mask, const double *x, const double *y, int n,
                    double *c)
{
    size_t p = 0, at[3];
    for (size_t k = 0; k < 3; k++)
        if (mask & (1u << k))
            at[p++] = k;
    gsl_matrix *X = gsl_matrix_alloc((size_t)n, p), *cov = gsl_matrix_alloc(p, p);
    gsl_vector *yv = gsl_vector_alloc((size_t)n), *cv = gsl_vector_alloc(p);
    int rc = 0;
    if (!X || !cov || !yv || !cv) {
        rc = SIM_ENOMEM;
        goto out;
    }
    for (int i = 0; i < n; i++) {
        for (size_t j = 0; j < p; j++)
            gsl_matrix_set(X, (size_t)i, j, pow(x[i], (double)at[j]));
        gsl_vector_set(yv, (size_t)i, y[i]);
    }
    if (form == CAL_FIT_ROBUST) {
        gsl_multifit_robust_workspace *w = gsl_multifit_robust_alloc(gsl_multifit_robust_bisquare,
                                                                     (size_t)n, p);
        if (!w) {
            rc = SIM_ENOMEM;
            goto out;
        }
        gsl_set_error_handler_off();
        int s = gsl_multifit_robust(X, yv, cv, cov, w);
        gsl_multifit_robust_free(w);
        /* GSL_EMAXITER still leaves the last iterate; only a hard failure is an error */
        if (s && s != GSL_EMAXITER) {
            rc = sim_err_set(SIM_EINVAL, "robust fit failed: %s", gsl_strerror(s));
            goto out;
        }
    } else {
        double chisq;
        gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc((size_t)n, p);
        if (!w) {
            rc = SIM_ENOMEM;
            goto out;
        }
        gsl_multifit_linear(X, yv, cv, cov, &chisq, w);
        gsl_multifit_linear_free(w);
    }
    c[0] = c[1] = c[2] = 0;
    for (size_t j = 0; j < p; j++)
        c[at[j]] = gsl_vector_get(cv, j);
out:
    gsl_matrix_free(X), gsl_matrix_free(cov), gsl_vector_free(yv), gsl_vector_free(cv);
    return rc;
}

int cal_fit(enum cal_form form, const double *x, const double *y, int n, struct cal_fit *out)
{
    memset(out, 0, sizeof *out);
    out->form = form;
    int need = form == CAL_FIT_QUADRATIC ? 3 : form == CAL_FIT_ROBUST ? 4 : 2;
    if (n < need || n > CAL_FIT_MAX)
        return sim_err_set(SIM_EINVAL, "fit: expected %d to %d batch sizes for this form, got %d",
                           need, CAL_FIT_MAX, n);
    for (int i = 0; i < n; i++)
        if (!(y[i] > 0) || !(x[i] >= 1))
            return sim_err_set(SIM_EINVAL, "fit: point %d: expected batch >= 1 and latency > 0, "
                               "got (%g, %g)", i, x[i], y[i]);
    int rc = 0;
    if (form == CAL_FIT_LINEAR) {
        double c0, c1, cov00, cov01, cov11, sumsq;
        gsl_fit_linear(x, 1, y, 1, (size_t)n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
        out->c0 = c0, out->c1 = c1;
    } else if (form == CAL_FIT_ROBUST) {
        double c[3];
        if ((rc = multifit(form, 3u, x, y, n, c)))
            return rc;
        out->c0 = c[0], out->c1 = c[1], out->c2 = c[2];
    } else {
        /* quadratic with non-negative coefficients (a zoo profile's rule): the exact
         * non-negative least squares of three terms is the best of the least-squares fits on
         * each support whose coefficients come out non-negative */
        double best = INFINITY;
        for (unsigned mask = 7; mask >= 1; mask--) {
            double c[3], sse = 0;
            if ((rc = multifit(form, mask, x, y, n, c)))
                return rc;
            if (c[0] < 0 || c[1] < 0 || c[2] < 0)
                continue;
            for (int i = 0; i < n; i++) {
                double e = (c[2] * x[i] + c[1]) * x[i] + c[0] - y[i];
                sse += e * e;
            }
            if (sse < best - 1e-12)
                best = sse, out->c0 = c[0], out->c1 = c[1], out->c2 = c[2];
        }
    }
    residuals(out, x, y, n);
    return 0;
}

enum cal_form cal_fit_recommend(const struct cal_fit *lin, const struct cal_fit *quad, double tol,
                                char *why, int size)
{
    if (lin->max_rel_err <= tol) {
        snprintf(why, (size_t)size, "linear: worst error %.1f%% <= %.1f%%", 100 * lin->max_rel_err,
                 100 * tol);
        return CAL_FIT_LINEAR;
    }
    if (quad && quad->n && quad->max_rel_err <= tol) {
        snprintf(why, (size_t)size, "quadratic: linear's worst error %.1f%% (batch %d) > %.1f%%, "
                 "quadratic's %.1f%%", 100 * lin->max_rel_err, lin->worst_batch, 100 * tol,
                 100 * quad->max_rel_err);
        return CAL_FIT_QUADRATIC;
    }
    snprintf(why, (size_t)size, "table: neither form within %.1f%% (linear %.1f%%, quadratic "
             "%.1f%%), so the measured points themselves", 100 * tol, 100 * lin->max_rel_err,
             quad && quad->n ? 100 * quad->max_rel_err : NAN);
    return CAL_FIT_TABLE;
}
