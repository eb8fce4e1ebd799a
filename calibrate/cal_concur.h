/* cal_concur — concurrent inferences on one device (RRL's performance model, specs/rrl.md): k
 * inferences in service at once, each in its own thread with its own prepared network — on
 * the CPU with p inter-op workers over the layer graph, each with its own OpenMP team of t
 * intra-op threads; on a GPU each instance has its own CUDA stream (p = t = 1) — run back to
 * back for a fixed time; the median per-inference latency lat(k, p, t) and the cores the
 * process kept busy (its CPU time over the wall time, OpenMP's spin-waits included as they are
 * for a real server; on a GPU, the host threads' share). */
#ifndef CAL_CONCUR_H
#define CAL_CONCUR_H

#include "cal_backend.h"

struct cal_concur_point {
    int k, p, t;
    int n;                      /* inferences completed in the window, all threads */
    double median_ms, p99_ms;   /* per-inference latency */
    double cores;               /* CPU time / wall time over the window */
    double wall_s;
};

/* Measures one point: k threads (1..64) each creating the backend with `base`'s precision and
 * device and p inter-op workers of t threads (cal_opts.inter_op, .threads), preparing `net` at `batch`, `warmup` untimed
 * passes, then passes until `seconds` have gone by after all started together. */
int cal_concur_measure(const struct cal_backend_ops *be, const struct cal_opts *base,
                       const struct cal_net *net, int batch, int k, int p, int t, int warmup, double seconds,
                       struct cal_concur_point *out /* OUT */);

/* RRL's parametric CPU model fitted to measured points (specs/rrl.md, "CPU, parametric"):
 * lat(k, p, t) = L1 (f + (1 - f)/t + o (t - 1)) a(p) sigma(D), a(p) = 1/pi + (1 - 1/pi) /
 * min(p, width) with the graph's pi and width (cal_net_parallelism), D = k t / a(p) threads,
 * C cores, sigma(D) = (1 + mu min(D, C)/C) max(1, D/C) (1 + kappa max(0, D/C - 1)); the
 * overhead o is held at its default 0.005 (with t in {1, 2} it cannot be told from f). GSL's
 * nonlinear least squares on the relative errors of the medians. */
struct cal_concur_fit {
    double pi;                        /* in: the graph's parallelism and widest join */
    int width;
    double l1_ms, f, overhead, mu, kappa;
    double rms_rel, max_rel;          /* of the fitted model against the medians */
};
/* fit->pi and fit->width are read (pi >= 1, width >= 1); the rest is written. */
int cal_concur_fit(const struct cal_concur_point *pts, int n, double cores,
                   struct cal_concur_fit *fit /* IN/OUT */);
/* The model's latency at (k, p, t) on `cores` cores with the fitted constants. */
double cal_concur_model_ms(const struct cal_concur_fit *fit, double cores, int k, int p, int t);

#endif
