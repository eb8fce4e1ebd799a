/* cal_fit — fitting latency profiles to per-batch measurements with GSL.
 *
 * Forms: linear l(b) = alpha*b + beta by ordinary least squares (gsl_fit_linear) and by a
 * robust bisquare fit (gsl_multifit_robust), and quadratic l(b) = a*b^2 + b1*b + c (FA2's
 * form, gsl_multifit_linear; coefficients constrained non-negative, as zoo profiles need). Each fit reports R^2 and the relative error at every measured
 * batch size; the recommendation picks linear unless its worst relative error exceeds the
 * tolerance while the quadratic's does not. */
#ifndef CAL_FIT_H
#define CAL_FIT_H

#include <stdbool.h>

#define CAL_FIT_MAX 64

/* CAL_FIT_TABLE is no fit: the measured points themselves (linear between them), what a
 * profile uses when no closed form is within the tolerance. */
enum cal_form { CAL_FIT_LINEAR, CAL_FIT_ROBUST, CAL_FIT_QUADRATIC, CAL_FIT_TABLE };

struct cal_fit {
    enum cal_form form;
    double c0, c1, c2;        /* l(b) = c2*b^2 + c1*b + c0 (c2 = 0 for linear forms) */
    double r2;
    double max_rel_err;       /* over the points */
    int worst_batch;
    double rel_err[CAL_FIT_MAX];
    int n;
};

double cal_fit_eval(const struct cal_fit *f, double b);
/* x: batch sizes, y: latencies (ms), n points (n <= CAL_FIT_MAX; >= 2, >= 3 for quadratic). */
int cal_fit(enum cal_form form, const double *x, const double *y, int n,
            struct cal_fit *out /* OUT */);

/* Which form to use: CAL_FIT_LINEAR when linear's worst relative error <= tol, else
 * CAL_FIT_QUADRATIC when the quadratic's is, else CAL_FIT_TABLE (the measured points). why
 * gets a one-line reason. */
enum cal_form cal_fit_recommend(const struct cal_fit *lin, const struct cal_fit *quad, double tol,
                                char *why, int size);

#endif
