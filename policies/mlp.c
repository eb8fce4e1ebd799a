/* mlp — small multilayer perceptrons on GSL's CBLAS (mlp.h). */
#include "mlp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

int mlp_init(struct mlp *n, int nl, const int *size, gsl_rng *r)
{
    memset(n, 0, sizeof *n);
    if (nl < 1 || nl > MLP_MAX_LAYERS)
        return -1;
    n->nl = nl;
    int np = 0, maxw = 0, nact = 0;
    for (int l = 0; l <= nl; l++) {
        if (size[l] < 1 || size[l] > 1 << 16)
            return -1;
        n->size[l] = size[l];
        maxw = size[l] > maxw ? size[l] : maxw;
        nact += size[l];
        if (l < nl)
            np += size[l + 1] * size[l] + size[l + 1];
    }
    n->np = np;
    n->maxw = maxw;
    n->theta = calloc((size_t)np, sizeof *n->theta);
    n->grad = calloc((size_t)np, sizeof *n->grad);
    n->act[0] = calloc((size_t)nact, sizeof *n->act[0]);
    n->delta = calloc(2 * (size_t)maxw, sizeof *n->delta);
    if (!n->theta || !n->grad || !n->act[0] || !n->delta) {
        mlp_free(n);
        return -1;
    }
    for (int l = 0, off = 0; l < nl; l++) {
        int in = size[l], out = size[l + 1];
        n->w[l] = n->theta + off;
        n->gw[l] = n->grad + off;
        off += in * out;
        n->b[l] = n->theta + off;
        n->gb[l] = n->grad + off;
        off += out;
        n->act[l + 1] = n->act[l] + in;
        double lim = sqrt(6.0 / (in + out));
        for (int i = 0; i < in * out; i++)
            n->w[l][i] = (2 * gsl_rng_uniform(r) - 1) * lim;
    }
    return 0;
}

void mlp_free(struct mlp *n)
{
    free(n->theta);
    free(n->grad);
    free(n->act[0]);
    free(n->delta);
    memset(n, 0, sizeof *n);
}

const double *mlp_forward(struct mlp *n, const double *x)
{
    memcpy(n->act[0], x, (size_t)n->size[0] * sizeof *x);
    for (int l = 0; l < n->nl; l++) {
        int in = n->size[l], out = n->size[l + 1];
        double *y = n->act[l + 1];
        memcpy(y, n->b[l], (size_t)out * sizeof *y);
        cblas_dgemv(CblasRowMajor, CblasNoTrans, out, in, 1.0, n->w[l], in, n->act[l], 1, 1.0,
                    y, 1);
        if (l + 1 < n->nl)
            for (int i = 0; i < out; i++)
                y[i] = y[i] > 0 ? y[i] : 0;          /* ReLU */
    }
    return n->act[n->nl];
}

void mlp_backward(struct mlp *n, const double *dout)
{
    double *d = n->delta, *dprev = n->delta + n->maxw;  /* dL/d(pre-activation) of layer l+1 */
    memcpy(d, dout, (size_t)n->size[n->nl] * sizeof *d);
    for (int l = n->nl - 1; l >= 0; l--) {
        int in = n->size[l], out = n->size[l + 1];
        /* gw += d act[l]^T, gb += d */
        cblas_dger(CblasRowMajor, out, in, 1.0, d, 1, n->act[l], 1, n->gw[l], in);
        cblas_daxpy(out, 1.0, d, 1, n->gb[l], 1);
        if (l == 0)
            break;
        /* through the weights, then the ReLU of layer l */
        cblas_dgemv(CblasRowMajor, CblasTrans, out, in, 1.0, n->w[l], in, d, 1, 0.0, dprev, 1);
        for (int i = 0; i < in; i++)
            if (!(n->act[l][i] > 0))
                dprev[i] = 0;
        double *t = d;
        d = dprev;
        dprev = t;
    }
}

void mlp_zero_grad(struct mlp *n)
{
    memset(n->grad, 0, (size_t)n->np * sizeof *n->grad);
}

int ftrl_init(struct ftrl *o, const struct mlp *n, double lr, double n0, double l1, double l2)
{
    o->lr = lr;
    o->l1 = l1;
    o->l2 = l2;
    o->z = malloc((size_t)n->np * sizeof *o->z);
    o->nacc = malloc((size_t)n->np * sizeof *o->nacc);
    if (!o->z || !o->nacc || !(lr > 0) || n0 < 0) {
        ftrl_free(o);
        return -1;
    }
    for (int i = 0; i < n->np; i++) {
        o->nacc[i] = n0;
        o->z[i] = -n->theta[i] * sqrt(n0) / lr;
    }
    return 0;
}

void ftrl_step(struct ftrl *o, struct mlp *n)
{
    for (int i = 0; i < n->np; i++) {
        double g = n->grad[i], w = n->theta[i];
        double n1 = o->nacc[i] + g * g;
        double sigma = (sqrt(n1) - sqrt(o->nacc[i])) / o->lr;
        o->z[i] += g - sigma * w;
        o->nacc[i] = n1;
        double z = o->z[i];
        n->theta[i] = fabs(z) <= o->l1 ? 0
                      : -(z - (z > 0 ? o->l1 : -o->l1)) / (sqrt(n1) / o->lr + 2 * o->l2);
    }
}

void ftrl_free(struct ftrl *o)
{
    free(o->z);
    free(o->nacc);
    o->z = o->nacc = NULL;
}

int rmsprop_init(struct rmsprop *o, const struct mlp *n, double lr, double rho, double eps)
{
    o->lr = lr;
    o->rho = rho;
    o->eps = eps;
    o->ms = calloc((size_t)n->np, sizeof *o->ms);
    return o->ms && lr > 0 && rho >= 0 && rho < 1 && eps >= 0 ? 0 : (rmsprop_free(o), -1);
}

void rmsprop_step(struct rmsprop *o, struct mlp *n)
{
    for (int i = 0; i < n->np; i++) {
        double g = n->grad[i];
        o->ms[i] = o->rho * o->ms[i] + (1 - o->rho) * g * g;
        n->theta[i] -= o->lr * g / (sqrt(o->ms[i]) + o->eps);
    }
}

void rmsprop_free(struct rmsprop *o)
{
    free(o->ms);
    o->ms = NULL;
}
