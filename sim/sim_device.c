/* sim_device — speed models of a shared device (sim_device.h; formulas in sim_world.h at
 * enum sim_interference). */
#include "sim_device.h"
#include "sim_time.h"

#include <gsl/gsl_math.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stddef.h>

bool sim_dev_shared(const struct sim_intf_cfg *c)
{
    return c->model != SIM_INTF_NONE;
}

static double amdahl(const struct sim_intf_cfg *c, int p)
{
    double w = p < c->width ? p : c->width;
    return 1 / c->pi + (1 - 1 / c->pi) / (w > 1 ? w : 1);
}

double sim_dev_demand(const struct sim_intf_cfg *c, int p, int t)
{
    return c->model == SIM_INTF_PARAMETRIC ? t / amdahl(c, p) : t;
}

/* factor(n) of the rows for (p, t): linear between measured n, factor(K) n / K past the
 * largest K, the smallest row's below it. */
static double table_factor(const struct sim_intf_cfg *c, int n, int p, int t, bool *missing)
{
    const struct sim_intf_row *lo = NULL, *hi = NULL;
    for (int i = 0; i < c->nrows; i++) {
        const struct sim_intf_row *r = &c->rows[i];
        if (r->p != p || r->t != t)
            continue;
        if (r->n <= n)
            lo = r;
        if (r->n >= n && !hi)
            hi = r;
    }
    if (!lo && !hi) {
        *missing = true;
        return 1;
    }
    if (!hi)
        return lo->factor * n / lo->n;
    if (!lo || lo == hi)
        return hi->factor;
    return lo->factor + (hi->factor - lo->factor) * (n - lo->n) / (hi->n - lo->n);
}

void sim_intf_rough_draw(struct sim_intf_cfg *c)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r) {                           /* (out of memory: a smooth landscape) */
        c->rough_eta = 0;
        return;
    }
    gsl_rng_set(r, (unsigned long)c->rough_seed);
    for (int j = 0; j < SIM_ROUGH_TERMS; j++) {
        c->rough_a[j] = gsl_ran_gaussian(r, 1.0);
        gsl_ran_dir_3d(r, &c->rough_w[j][0], &c->rough_w[j][1], &c->rough_w[j][2]);
        c->rough_phi[j] = gsl_ran_flat(r, 0, 2 * M_PI);
    }
    gsl_rng_free(r);
}

double sim_intf_roughness(const struct sim_intf_cfg *c, int k, int p, int t)
{
    if (c->rough_eta == 0)
        return 1;
    double sum = 0;
    for (int j = 0; j < SIM_ROUGH_TERMS; j++) {
        const double *w = c->rough_w[j];
        double dot = w[0] * k + w[1] * p + w[2] * t;
        sum += c->rough_a[j] * cos(2 * M_PI * dot / c->rough_len + c->rough_phi[j]);
    }
    return exp(c->rough_eta * sum / sqrt((double)SIM_ROUGH_TERMS));
}

double sim_dev_factor(const struct sim_intf_cfg *c, bool cpu, double cores, int n, double D,
                      int p, int t, double rough, bool *missing)
{
    switch (c->model) {
    case SIM_INTF_NONE:
        return 1;
    case SIM_INTF_TABLE:
        return table_factor(c, n, p, t, missing);
    case SIM_INTF_PARAMETRIC:
        break;
    }
    if (!cpu)
        return n * (1 + c->kappa_gpu * (n - 1));
    double C = cores > 0 ? cores : 1;
    double alone = (c->f + (1 - c->f) / t + c->overhead * (t - 1)) * amdahl(c, p);
    double sigma = (1 + c->mu * fmin(D, C) / C) * fmax(1, D / C) * (1 + c->kappa * fmax(0, D / C - 1));
    return alone * sigma * rough;
}

int64_t sim_dev_host_ns(const struct sim_intf_cfg *c, bool cpu, int b)
{
    if (cpu || c->model != SIM_INTF_PARAMETRIC)
        return 0;
    return sim_ms_to_ns(c->host_ms + c->host_ms_per_request * b);
}
