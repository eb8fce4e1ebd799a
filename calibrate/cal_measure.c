/* cal_measure — warm-up, repetitions and summary statistics of forward passes. */
#include "cal_measure.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <stdlib.h>
#include <string.h>

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
