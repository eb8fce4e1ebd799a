/* mlp — small multilayer perceptrons for the learning policies (RRL's latency estimator, the
 * DQN and policy-gradient comparators): fully connected layers on GSL's CBLAS, ReLU hidden
 * layers and a linear output, Glorot-uniform weights from a given stream, backpropagation of
 * a loss gradient, and two optimisers, FTRL-Proximal (per coordinate, as TensorFlow's) and
 * RMSProp. Deterministic: plain loops and reference CBLAS, built without FP contraction. */
#ifndef MLP_H
#define MLP_H

#include <gsl/gsl_rng.h>

#define MLP_MAX_LAYERS 4              /* weight layers (hidden layers + 1) */

struct mlp {
    int nl;                           /* weight layers */
    int size[MLP_MAX_LAYERS + 1];     /* widths: input, hidden..., output */
    int np;                           /* parameters */
    int maxw;                         /* the widest layer */
    double *theta, *grad;             /* [np]: all weights and biases, and their gradients */
    double *w[MLP_MAX_LAYERS], *b[MLP_MAX_LAYERS];    /* views into theta: w[l] is
                                       size[l+1] x size[l], row-major */
    double *gw[MLP_MAX_LAYERS], *gb[MLP_MAX_LAYERS];  /* the same views into grad */
    double *act[MLP_MAX_LAYERS + 1];  /* the last forward pass: act[0] the input, act[nl] out */
    double *delta;                    /* scratch for backpropagation */
};

/* A network of nl weight layers with widths size[0..nl]; weights Glorot-uniform
 * (+-sqrt(6 / (fan_in + fan_out))) drawn from r in layer order, biases zero. 0 or -1 (out of
 * memory, or a bad shape). */
int mlp_init(struct mlp *n, int nl, const int *size, gsl_rng *r);
void mlp_free(struct mlp *n);
/* Forward pass: returns the output (size[nl] values, valid until the next call). */
const double *mlp_forward(struct mlp *n, const double *x);
/* Adds the gradient of the loss to n->grad, given dL/d(output) for the last forward pass. */
void mlp_backward(struct mlp *n, const double *dout);
void mlp_zero_grad(struct mlp *n);

/* FTRL-Proximal per coordinate (McMahan et al. 2013; TensorFlow's FtrlOptimizer with
 * beta 0): with gradient g, n' = n + g^2, sigma = (sqrt(n') - sqrt(n)) / lr, z += g - sigma w,
 * n = n', w = 0 if |z| <= l1 else -(z - sgn(z) l1) / (sqrt(n) / lr + 2 l2). n starts at n0 and
 * z at -w sqrt(n0) / lr, which keeps the initial weights (TensorFlow's z = 0 would zero them). */
struct ftrl {
    double lr, l1, l2;
    double *z, *nacc;                 /* [np] */
};
int ftrl_init(struct ftrl *o, const struct mlp *n, double lr, double n0, double l1, double l2);
void ftrl_step(struct ftrl *o, struct mlp *n);     /* one step with n->grad */
void ftrl_free(struct ftrl *o);

/* RMSProp (Hinton; Keras's form): ms = rho ms + (1 - rho) g^2, w -= lr g / (sqrt(ms) + eps),
 * ms starting at 0. */
struct rmsprop {
    double lr, rho, eps;
    double *ms;                       /* [np] */
};
int rmsprop_init(struct rmsprop *o, const struct mlp *n, double lr, double rho, double eps);
void rmsprop_step(struct rmsprop *o, struct mlp *n);
void rmsprop_free(struct rmsprop *o);

#endif
