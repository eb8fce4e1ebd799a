/* roma.h — ROMA's decision rules as plain functions (specs/roma.md), shared by the policy
 * (roma.c) and its unit tests: the PI controller's update and clamp, the per-worker
 * supervisor, the pole-placement gains, and the GPU heuristic's choice. */
#ifndef ROMA_H
#define ROMA_H

/* One PI step: u(k) = u'(k-1) + K e(k) - K a e(k-1), clamped to [u_min, u_max]. */
double roma_pi(double u_prev, double e, double e_prev, double K, double a, double u_min,
               double u_max);

/* The supervisor of a worker with `ac` cores available: eta = ac / sum(u); eta < 1 scales every
 * demand by eta, eta = 1 keeps them, eta > 1 adds gamma (eta - 1) u to each. Writes the grants
 * into out[n] and returns eta (0 demands: eta is +inf and the grants are the demands). */
double roma_supervise(const double *u, int n, double ac, double gamma, double *out);

/* Pole placement (both closed-loop poles at q): K = 4 (a - 1)(b - 1) / (k (b - a)^2),
 * a = ((2 - b) q - b) / (q - 2b + 1), from the plant's gain k and zero b. Returns 0, or -1 if
 * the formulas are undefined for these values. */
int roma_pole_gains(double k, double b, double q, double *K, double *a);

/* The GPU heuristic over n models: W = beta E + (1 - beta) R (W = E when has_r is 0), eps =
 * 0 below the set point, else (W - set) / set; the model with the largest eps among those with
 * a queue (qlen > 0), ties by the longer queue, then the earlier head; -1 if every queue is
 * empty. E[m]: mean queueing-plus-GPU estimate of m's queued requests; R[m]: mean response
 * time over the window; head[m]: the head's arrival time. */
int roma_pick(int n, const int *qlen, const double *E, const double *R, const int *has_r,
              const double *set, const double *head, double beta);

#endif
