/* rrl_learn — RRL's grid, regions, Q tables, Boltzmann draw and latency estimator
 * (rrl_learn.h). */
#include "rrl_learn.h"

#include <math.h>
#include <stdlib.h>

#include "sim_err.h"

/* ---------------------------------------------------------------- grid */

void rrl_grid_index(const struct rrl_grid *g, int c, int idx[3])
{
    idx[2] = c % g->nv[2];
    idx[1] = c / g->nv[2] % g->nv[1];
    idx[0] = c / (g->nv[2] * g->nv[1]);
}

void rrl_grid_config(const struct rrl_grid *g, int c, int v[3])
{
    int idx[3];
    rrl_grid_index(g, c, idx);
    for (int j = 0; j < 3; j++)
        v[j] = g->val[j][idx[j]];
}

int rrl_grid_step(const struct rrl_grid *g, int c, const int steps[3])
{
    int idx[3];
    rrl_grid_index(g, c, idx);
    for (int j = 0; j < 3; j++) {
        idx[j] += steps[j];
        if (idx[j] < 0 || idx[j] >= g->nv[j])
            return -1;
    }
    return (idx[0] * g->nv[1] + idx[1]) * g->nv[2] + idx[2];
}

/* ---------------------------------------------------------------- Q tables */

static double *qrow(const struct rrl_q *q, int s)
{
    return q->q + (size_t)s * (size_t)q->grid.ncfg;
}

const struct rrl_q_params RRL_Q_DEFAULTS = {.beta = RRL_Q_BETA, .gamma = RRL_Q_GAMMA,
                                            .omega = RRL_Q_OMEGA, .q_init = RRL_Q_OPTIMISTIC};

int rrl_q_init(struct rrl_q *q, const struct rrl_grid *g, int nstates, double radius,
               const struct rrl_q_params *p)
{
    *q = (struct rrl_q){.grid = *g, .nstates = nstates, .p = *p};
    q->grid.ncfg = g->nv[0] * g->nv[1] * g->nv[2];
    int R = (int)floor(radius + 1e-9), side = 2 * R + 1;
    size_t cells = (size_t)nstates * (size_t)q->grid.ncfg;
    q->off = malloc((size_t)(side * side * side) * sizeof *q->off);
    q->q = malloc(cells * sizeof *q->q);
    q->visits = calloc(cells, sizeof *q->visits);
    q->seen = calloc((size_t)nstates, sizeof *q->seen);
    q->weight = malloc((size_t)q->grid.ncfg * sizeof *q->weight);
    if (!q->off || !q->q || !q->visits || !q->seen || !q->weight) {
        rrl_q_free(q);
        return SIM_ENOMEM;
    }
    for (size_t i = 0; i < cells; i++)
        q->q[i] = 1.0 / q->grid.ncfg;
    q->off[0][0] = q->off[0][1] = q->off[0][2] = 0;
    q->noff = 1;
    double r2 = radius * radius + 1e-9;
    for (int a = -R; a <= R; a++)
        for (int b = -R; b <= R; b++)
            for (int c = -R; c <= R; c++)
                if ((a || b || c) && a * a + b * b + c * c <= r2) {
                    q->off[q->noff][0] = a;
                    q->off[q->noff][1] = b;
                    q->off[q->noff][2] = c;
                    q->noff++;
                }
    return 0;
}

void rrl_q_free(struct rrl_q *q)
{
    free(q->off);
    free(q->q);
    free(q->visits);
    free(q->seen);
    free(q->weight);
    q->off = NULL;
    q->q = q->weight = NULL;
    q->visits = NULL;
    q->seen = NULL;
}

int rrl_q_region(const struct rrl_q *q, int c, int *out)
{
    int n = 0;
    for (int k = 0; k < q->noff; k++) {
        int d = rrl_grid_step(&q->grid, c, q->off[k]);
        if (d >= 0)
            out[n++] = d;
    }
    return n;
}

double rrl_q_min(const struct rrl_q *q, int s)
{
    const double *row = qrow(q, s);
    double m = row[0];
    for (int c = 1; c < q->grid.ncfg; c++)
        if (row[c] < m)
            m = row[c];
    return m;
}

int rrl_q_greedy(const struct rrl_q *q, int s)
{
    const double *row = qrow(q, s);
    const uint32_t *n = q->visits + (size_t)s * (size_t)q->grid.ncfg;
    int best = -1;
    for (int c = 0; c < q->grid.ncfg; c++)
        if (n[c] > 0 && (best < 0 || row[c] < row[best]))
            best = c;
    return best;
}

void rrl_q_update(struct rrl_q *q, int s0, double r, const int *region, const double *rhat,
                  int n, int s1)
{
    double *row = qrow(q, s0);
    uint32_t *visits = q->visits + (size_t)s0 * (size_t)q->grid.ncfg;
    if (q->p.q_init == RRL_Q_FIRST && !q->seen[s0])
        for (int c = 0; c < q->grid.ncfg; c++)
            row[c] = r;
    q->seen[s0] = true;
    double y = q->p.gamma * rrl_q_min(q, s1);
    for (int i = 0; i < n; i++) {
        int c = region[i];
        visits[c]++;
        double a = q->p.alpha_const > 0 ? q->p.alpha_const : pow((double)visits[c], -q->p.omega);
        if (a < q->p.alpha_min)
            a = q->p.alpha_min;
        row[c] = (1 - a) * row[c] + a * (rhat[i] + y);
    }
}

int rrl_q_draw(struct rrl_q *q, int s, double u)
{
    const double *row = qrow(q, s);
    double qs = rrl_q_min(q, s), den = (1 - q->p.gamma) * qs, sum = 0;
    if (!(den > 0))
        den = 1e-300;                 /* (Q* = 0: only the configurations at Q* remain) */
    for (int c = 0; c < q->grid.ncfg; c++)
        sum += q->weight[c] = exp(-q->p.beta * (row[c] - qs) / den);
    double at = u * sum, cum = 0;
    int last = 0;
    for (int c = 0; c < q->grid.ncfg; c++) {
        if (!(q->weight[c] > 0))
            continue;
        cum += q->weight[c];
        last = c;
        if (at < cum)
            return c;
    }
    return last;                      /* (u * sum rounded up to the sum) */
}

/* ---------------------------------------------------------------- estimator */

int rrl_est_init(struct rrl_est *e, gsl_rng *r, double lr, int steps, int batch)
{
    static const int SIZE[] = {4, 256, 64, 1};
    *e = (struct rrl_est){.r = r, .steps = steps, .batch = batch};
    if (mlp_init(&e->net, 3, SIZE, r))
        return SIM_ENOMEM;
    if (ftrl_init(&e->opt, &e->net, lr, 0.1, 0, 0)) {
        mlp_free(&e->net);
        return SIM_ENOMEM;
    }
    return 0;
}

void rrl_est_free(struct rrl_est *e)
{
    mlp_free(&e->net);
    ftrl_free(&e->opt);
    free(e->x);
    free(e->y);
    e->x = NULL;
    e->y = NULL;
}

void rrl_est_features(const struct rrl_grid *g, double load, int c, double x[4])
{
    int idx[3];
    rrl_grid_index(g, c, idx);
    x[0] = load;
    for (int j = 0; j < 3; j++)
        x[j + 1] = g->nv[j] > 1 ? (double)idx[j] / (g->nv[j] - 1) : 0.0;
}

double rrl_est_predict(struct rrl_est *e, const struct rrl_grid *g, double load, int c)
{
    double x[4];
    rrl_est_features(g, load, c, x);
    return mlp_forward(&e->net, x)[0];
}

int rrl_est_train(struct rrl_est *e, const struct rrl_grid *g, double load, int c, double y)
{
    if (e->n == e->cap) {
        int cap = e->cap ? 2 * e->cap : 256;
        double (*x)[4] = realloc(e->x, (size_t)cap * sizeof *x);
        if (!x)
            return SIM_ENOMEM;
        e->x = x;
        double *yy = realloc(e->y, (size_t)cap * sizeof *yy);
        if (!yy)
            return SIM_ENOMEM;
        e->y = yy;
        e->cap = cap;
    }
    rrl_est_features(g, load, c, e->x[e->n]);
    e->y[e->n++] = y;
    for (int k = 0; k < e->steps; k++) {
        mlp_zero_grad(&e->net);
        double loss = 0;
        for (int i = 0; i < e->batch; i++) {
            int j = (int)gsl_rng_uniform_int(e->r, (unsigned long)e->n);
            double d = mlp_forward(&e->net, e->x[j])[0] - e->y[j];
            loss += 0.5 * d * d;
            d /= e->batch;
            mlp_backward(&e->net, &d);
        }
        ftrl_step(&e->opt, &e->net);
        e->loss = loss / e->batch;
    }
    return 0;
}
