/* test_mlp — the small perceptrons of the learning policies (policies/mlp.h): a forward and a
 * backward pass and one FTRL and one RMSProp step against values computed by hand, the
 * gradient against finite differences on a larger random network, and the initialisation. */
#include <math.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "mlp.h"
#include "sim_err.h"
#include "sim_rng.h"
#include "test.h"

/* 2 -> 2 (ReLU) -> 1 with W0 = [[1, -1], [0.5, 2]], b0 = [0, -1], W1 = [2, -3], b1 = 0.5.
 * At x = (1, 2): hidden pre-activations (1 - 2, 0.5 + 4 - 1) = (-1, 3.5) -> ReLU (0, 3.5);
 * y = 2 * 0 - 3 * 3.5 + 0.5 = -10. With loss (y - t)^2 / 2 and t = -9, dL/dy = -1:
 * dW1 = -1 * (0, 3.5) = (0, -3.5), db1 = -1; back through W1: (-2, 3), the ReLU masks the
 * first: (0, 3); dW0 = (0, 3)^T (1, 2) = [[0, 0], [3, 6]], db0 = (0, 3). */
static const double HAND_THETA[] = {1, -1, 0.5, 2, 0, -1, 2, -3, 0.5};
static const double HAND_GRAD[] = {0, 0, 3, 6, 0, 3, 0, -3.5, -1};

static void hand_net(struct mlp *n)
{
    gsl_rng *r = sim_rng_stream(1, "test.mlp");
    REQUIRE_OK(mlp_init(n, 2, (const int[]){2, 2, 1}, r));
    gsl_rng_free(r);
    CHECK(n->np == 9, "%d parameters, want 9", n->np);
    memcpy(n->theta, HAND_THETA, sizeof HAND_THETA);
}

static void forward_backward_by_hand(void)
{
    struct mlp n;
    hand_net(&n);
    const double *y = mlp_forward(&n, (const double[]){1, 2});
    CHECK(y[0] == -10, "y = %g, want -10", y[0]);
    CHECK(n.act[1][0] == 0 && n.act[1][1] == 3.5, "hidden (%g, %g), want (0, 3.5)", n.act[1][0],
          n.act[1][1]);
    mlp_zero_grad(&n);
    mlp_backward(&n, (const double[]){y[0] - -9.0});
    for (int i = 0; i < 9; i++)
        CHECK(n.grad[i] == HAND_GRAD[i], "grad[%d] = %g, want %g", i, n.grad[i], HAND_GRAD[i]);
    /* gradients accumulate until zeroed */
    mlp_forward(&n, (const double[]){1, 2});
    mlp_backward(&n, (const double[]){-1});
    CHECK(n.grad[8] == -2 && n.grad[3] == 12, "accumulated %g %g, want -2 12", n.grad[8],
          n.grad[3]);
    mlp_free(&n);
}

/* One FTRL step from the initial weights w (n0 0.1, lr 0.1, no regularisation): with
 * z0 = -w sqrt(n0)/lr the update works out to w - lr g / sqrt(n0 + g^2) (so -3 with g -3.5
 * becomes -3 + 0.35 / sqrt(12.35) = -2.900406); coordinates with g = 0 keep their weight.
 * With l1 a coordinate whose |z| stays <= l1 is set to 0. One RMSProp step (lr 0.001,
 * rho 0.9, eps 1e-7): w - lr g / (sqrt(0.1 g^2) + eps), about w -+ 0.0031623. */
static void ftrl_and_rmsprop_one_step(void)
{
    struct mlp n;
    hand_net(&n);
    memcpy(n.grad, HAND_GRAD, sizeof HAND_GRAD);
    struct ftrl f;
    REQUIRE_OK(ftrl_init(&f, &n, 0.1, 0.1, 0, 0));
    ftrl_step(&f, &n);
    for (int i = 0; i < 9; i++) {
        double g = HAND_GRAD[i], want = HAND_THETA[i] - 0.1 * g / sqrt(0.1 + g * g);
        CHECK(fabs(n.theta[i] - want) < 1e-12, "FTRL theta[%d] = %.12g, want %.12g", i,
              n.theta[i], want);
    }
    CHECK(fabs(n.theta[7] - -2.900406) < 1e-6, "FTRL w = %.7g, want -2.900406", n.theta[7]);
    ftrl_free(&f);

    /* l1 = 50: after one step z = g - w sqrt(n0 + g^2) / lr, and the weight is 0 where
     * |z| <= 50 (b0[1]: z = 3 + 30.17), else -(z - 50 sgn z) lr / sqrt(n0 + g^2) */
    memcpy(n.theta, HAND_THETA, sizeof HAND_THETA);
    REQUIRE_OK(ftrl_init(&f, &n, 0.1, 0.1, 50, 0));
    ftrl_step(&f, &n);
    int zeros = 0;
    for (int i = 0; i < 9; i++) {
        double g = HAND_GRAD[i], sq = sqrt(0.1 + g * g), z = g - HAND_THETA[i] * sq / 0.1;
        double want = fabs(z) <= 50 ? 0 : -(z - (z > 0 ? 50 : -50)) * 0.1 / sq;
        zeros += want == 0;
        CHECK(fabs(n.theta[i] - want) < 1e-12, "FTRL l1 theta[%d] = %.12g, want %.12g", i,
              n.theta[i], want);
    }
    CHECK(n.theta[5] == 0 && n.theta[7] != 0 && zeros > 0 && zeros < 9, "l1 zeroed %d", zeros);
    ftrl_free(&f);

    memcpy(n.theta, HAND_THETA, sizeof HAND_THETA);
    struct rmsprop o;
    REQUIRE_OK(rmsprop_init(&o, &n, 0.001, 0.9, 1e-7));
    rmsprop_step(&o, &n);
    for (int i = 0; i < 9; i++) {
        double g = HAND_GRAD[i], want = HAND_THETA[i] - 0.001 * g / (sqrt(0.1 * g * g) + 1e-7);
        CHECK(fabs(n.theta[i] - want) < 1e-12, "RMSProp theta[%d] = %.12g, want %.12g", i,
              n.theta[i], want);
    }
    CHECK(fabs(n.theta[7] - (-3 + 0.0031623)) < 1e-6, "RMSProp w = %.7g", n.theta[7]);
    rmsprop_free(&o);
    mlp_free(&n);
}

/* The estimator's shape (4 -> 256 -> 64 -> 1) with random weights: backpropagated gradients
 * of (y - 0.3)^2 / 2 agree with central differences to 1e-6 (relative); Glorot limits hold,
 * biases start at zero, and the same stream gives the same network. */
static void gradient_matches_finite_differences(void)
{
    const int size[] = {4, 256, 64, 1};
    gsl_rng *r = sim_rng_stream(3, "test.mlp.grad");
    struct mlp n, m;
    REQUIRE_OK(mlp_init(&n, 3, size, r));
    gsl_rng_free(r);
    r = sim_rng_stream(3, "test.mlp.grad");
    REQUIRE_OK(mlp_init(&m, 3, size, r));
    gsl_rng_free(r);
    CHECK(n.np == 4 * 256 + 256 + 256 * 64 + 64 + 64 + 1, "np %d", n.np);
    CHECK(memcmp(n.theta, m.theta, (size_t)n.np * sizeof *n.theta) == 0, "same stream, "
          "different weights");
    double lim0 = sqrt(6.0 / 260), maxw = 0;
    for (int i = 0; i < 4 * 256; i++)
        maxw = fmax(maxw, fabs(n.w[0][i]));
    CHECK(maxw <= lim0 && maxw > 0.9 * lim0, "layer 0 weights up to %g, limit %g", maxw, lim0);
    for (int i = 0; i < 256; i++)
        CHECK(n.b[0][i] == 0, "bias %d = %g", i, n.b[0][i]);
    mlp_free(&m);

    const double x[] = {0.6, 0.2, 0.9, 0.4};
    mlp_zero_grad(&n);
    double y = mlp_forward(&n, x)[0];
    mlp_backward(&n, (const double[]){y - 0.3});
    int checked = 0, bad = 0;
    for (int i = 0; i < n.np; i += 37) {
        double keep = n.theta[i], h = 1e-6;
        n.theta[i] = keep + h;
        double yp = mlp_forward(&n, x)[0];
        n.theta[i] = keep - h;
        double ym = mlp_forward(&n, x)[0];
        n.theta[i] = keep;
        double num = ((yp - 0.3) * (yp - 0.3) - (ym - 0.3) * (ym - 0.3)) / (4 * h);
        double err = fabs(num - n.grad[i]) / fmax(1e-4, fabs(num) + fabs(n.grad[i]));
        if (err > 1e-6) {
            fprintf(stderr, "param %d: backprop %.9g, numeric %.9g\n", i, n.grad[i], num);
            bad++;
        }
        checked++;
    }
    CHECK(bad == 0 && checked > 400, "%d of %d gradients disagree", bad, checked);
    mlp_free(&n);
}

TEST_MAIN({"forward_backward_by_hand", forward_backward_by_hand},
          {"ftrl_and_rmsprop_one_step", ftrl_and_rmsprop_one_step},
          {"gradient_matches_finite_differences", gradient_matches_finite_differences})
