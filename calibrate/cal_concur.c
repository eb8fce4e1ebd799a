/* cal_concur — k concurrent inferences on one device, each with p inter-op workers of t
 * intra-op threads on a CPU (cal_concur.h). */
#include "cal_concur.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cal_ref.h"
#include "sim_err.h"
#include "sim_grow.h"

#define MAX_K 64

/* The start gate: workers warm up, report ready and wait until all are (or a thread could
 * not be started: then they stop without timing anything). */
struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ready;
    bool go, cancel;
};

struct worker {
    const struct cal_backend_ops *be;
    void *st;
    int t, warmup, rc;
    double seconds;
    struct gate *g;
    double *ms;                         /* latencies, grown as needed */
    int n, cap;
};

static double now_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *run_worker(void *arg)
{
    struct worker *w = arg;
    omp_set_num_threads(w->t);          /* this thread's own OpenMP team */
    double ms = 0;
    for (int i = 0; i < w->warmup && !w->rc; i++)
        w->rc = w->be->run(w->st, &ms);
    pthread_mutex_lock(&w->g->mu);
    w->g->ready++;
    pthread_cond_broadcast(&w->g->cv);
    while (!w->g->go && !w->g->cancel)
        pthread_cond_wait(&w->g->cv, &w->g->mu);
    bool cancel = w->g->cancel;
    pthread_mutex_unlock(&w->g->mu);
    if (cancel)
        return NULL;
    double end = now_s(CLOCK_MONOTONIC) + w->seconds;
    while (!w->rc && now_s(CLOCK_MONOTONIC) < end) {
        if ((w->rc = w->be->run(w->st, &ms)))
            break;
        if (sim_grow(&w->ms, &w->cap, w->n + 1, sizeof *w->ms, 256)) {
            w->rc = SIM_ENOMEM;
            break;
        }
        w->ms[w->n++] = ms;
    }
    return NULL;
}

int cal_concur_measure(const struct cal_backend_ops *be, const struct cal_opts *base,
                       const struct cal_net *net, int batch, int k, int p, int t, int warmup,
                       double seconds,
                       struct cal_concur_point *out)
{
    memset(out, 0, sizeof *out);
    out->k = k, out->p = p, out->t = t;
    if (k < 1 || k > MAX_K || p < 1 || p > MAX_K || t < 1 || !(seconds > 0))
        return sim_err_set(SIM_EINVAL, "concurrency: expected 1 <= k <= %d, 1 <= p <= %d, t >= 1 "
                           "and a positive duration, got k %d, p %d, t %d, %g s", MAX_K, MAX_K, k,
                           p, t, seconds);
    struct worker w[MAX_K];
    memset(w, 0, sizeof w);
    pthread_t th[MAX_K];
    struct gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false, false};
    void *in = cal_ref_input(net, batch, 12345);
    if (!in)
        return SIM_ENOMEM;
    int rc = 0, made = 0, started = 0;
    /* the instances are created and prepared here, one after another (primitives are built
     * for t threads; each instance starts its p - 1 inter-op helpers), and only run in the
     * workers */
    struct cal_opts bo = *base;
    bo.threads = t, bo.inter_op = p, bo.keep_all = false;
    for (; made < k && !rc; made++) {
        struct cal_mem_info mem;
        w[made] = (struct worker){.be = be, .t = t, .warmup = warmup, .seconds = seconds,
                                  .g = &g};
        if ((rc = be->create(&bo, &w[made].st)))
            break;
        if ((rc = be->prepare(w[made].st, net, batch, &mem)) ||
            (rc = be->set_input(w[made].st, in))) {
            made++;
            break;
        }
    }
    if (!rc) {
        for (; started < k; started++)
            if (pthread_create(&th[started], NULL, run_worker, &w[started]) != 0)
                break;
        pthread_mutex_lock(&g.mu);
        while (g.ready < started)
            pthread_cond_wait(&g.cv, &g.mu);
        g.go = started == k;
        g.cancel = !g.go;
        /* the clocks start before any worker can (a worker's window opens when it wakes) */
        double wall0 = now_s(CLOCK_MONOTONIC), cpu0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
        pthread_cond_broadcast(&g.cv);
        pthread_mutex_unlock(&g.mu);
        for (int i = 0; i < started; i++)
            pthread_join(th[i], NULL);
        out->wall_s = now_s(CLOCK_MONOTONIC) - wall0;
        out->cores = (now_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0) / out->wall_s;
        if (started < k)
            rc = sim_err_set(SIM_EINTERNAL, "concurrency: cannot start thread %d of %d",
                             started + 1, k);
        for (int i = 0; i < k && !rc; i++)
            if (w[i].rc)
                rc = sim_err_set(w[i].rc, "concurrency: a forward pass failed in thread %d of %d "
                                 "(k %d, p %d, t %d): %s", i + 1, k, k, p, t, sim_err_msg());
    }
    int n = 0;
    for (int i = 0; i < k; i++)
        n += w[i].n;
    double *all = !rc && n > 0 ? malloc((size_t)n * sizeof *all) : NULL;
    if (!rc && n == 0)
        rc = sim_err_set(SIM_EINVAL, "concurrency: no inference completed in %g s (k %d, p %d, "
                         "t %d)", seconds, k, p, t);
    else if (!rc && !all)
        rc = SIM_ENOMEM;
    if (!rc) {
        int j = 0;
        for (int i = 0; i < k; i++) {
            memcpy(all + j, w[i].ms, (size_t)w[i].n * sizeof *all);
            j += w[i].n;
        }
        gsl_sort(all, 1, (size_t)n);
        out->n = n;
        out->median_ms = gsl_stats_median_from_sorted_data(all, 1, (size_t)n);
        out->p99_ms = gsl_stats_quantile_from_sorted_data(all, 1, (size_t)n, 0.99);
    }
    free(all);
    for (int i = 0; i < made; i++) {
        if (w[i].st) {
            be->unprepare(w[i].st);
            be->destroy(w[i].st);
        }
        free(w[i].ms);
    }
    free(in);
    return rc;
}

/* ---------------------------------------------------------------- the parametric fit */

static double model(double l1, double f, double o, double mu, double kappa, double C, double pi,
                    int width, int k, int p, int t)
{
    double a = 1 / pi + (1 - 1 / pi) / (p < width ? p : width);
    double D = (double)k * t / a;
    double sigma = (1 + mu * fmin(D, C) / C) * fmax(1, D / C) * (1 + kappa * fmax(0, D / C - 1));
    return l1 * (f + (1 - f) / t + o * (t - 1)) * a * sigma;
}

double cal_concur_model_ms(const struct cal_concur_fit *fit, double cores, int k, int p, int t)
{
    return model(fit->l1_ms, fit->f, fit->overhead, fit->mu, fit->kappa, cores, fit->pi,
                 fit->width, k, p, t);
}

struct fit_data {
    const struct cal_concur_point *pts;
    int n;
    double C, o, pi;
    int width;
};

/* The constants from the free parameters x = (L1, logit f, sqrt mu, sqrt kappa): f in (0, 1),
 * mu and kappa >= 0, as the model means them. */
static void constants(const gsl_vector *x, double c[4])
{
    c[0] = gsl_vector_get(x, 0);
    c[1] = 1 / (1 + exp(-gsl_vector_get(x, 1)));
    c[2] = gsl_vector_get(x, 2) * gsl_vector_get(x, 2);
    c[3] = gsl_vector_get(x, 3) * gsl_vector_get(x, 3);
}

/* residuals: relative errors of the model's medians */
static int resid(const gsl_vector *x, void *arg, gsl_vector *r)
{
    const struct fit_data *d = arg;
    double c[4];
    constants(x, c);
    for (int i = 0; i < d->n; i++) {
        const struct cal_concur_point *p = &d->pts[i];
        double m = model(c[0], c[1], d->o, c[2], c[3], d->C, d->pi, d->width, p->k, p->p, p->t);
        gsl_vector_set(r, (size_t)i, m / p->median_ms - 1);
    }
    return GSL_SUCCESS;
}

int cal_concur_fit(const struct cal_concur_point *pts, int n, double cores,
                   struct cal_concur_fit *out)
{
    double pi = out->pi;
    int width = out->width;
    memset(out, 0, sizeof *out);
    out->pi = pi, out->width = width;
    const struct cal_concur_point *one = NULL;
    for (int i = 0; i < n; i++)
        if (pts[i].k == 1 && pts[i].p == 1 && pts[i].t == 1)
            one = &pts[i];
    if (!(pi >= 1) || width < 1)
        return sim_err_set(SIM_EINVAL, "concurrency fit: expected the graph's pi >= 1 and width "
                           ">= 1, got %.15g and %d", pi, width);
    if (n < 4 || !one || !(cores > 0))
        return sim_err_set(SIM_EINVAL, "concurrency fit: expected at least 4 points including "
                           "k 1, p 1, t 1, and cores > 0; got %d point(s)%s", n,
                           one ? "" : " without (1, 1, 1)");
    struct fit_data d = {pts, n, cores, 0.005, pi, width};
    gsl_multifit_nlinear_fdf fdf = {.f = resid, .df = NULL, .fvv = NULL, .n = (size_t)n,
                                    .p = 4, .params = &d};
    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, (size_t)n, 4);
    if (!w)
        return SIM_ENOMEM;
    /* from the spec's unfitted defaults: f 0.1, mu 0.2, kappa 0.1 */
    double x0[4] = {one->median_ms, log(0.1 / 0.9), sqrt(0.2), sqrt(0.1)};
    gsl_vector_view xv = gsl_vector_view_array(x0, 4);
    gsl_multifit_nlinear_init(&xv.vector, &fdf, w);
    int info = 0;
    int st = gsl_multifit_nlinear_driver(200, 1e-10, 1e-10, 1e-10, NULL, NULL, &info, w);
    double c[4];
    constants(gsl_multifit_nlinear_position(w), c);
    *out = (struct cal_concur_fit){pi, width, c[0], c[1], d.o, c[2], c[3], 0, 0};
    gsl_multifit_nlinear_free(w);
    if (st != GSL_SUCCESS && st != GSL_EMAXITER)
        return sim_err_set(SIM_EINTERNAL, "concurrency fit: GSL status %d (%s)", st,
                           gsl_strerror(st));
    double ss = 0;
    for (int i = 0; i < n; i++) {
        double e = cal_concur_model_ms(out, cores, pts[i].k, pts[i].p, pts[i].t) /
                       pts[i].median_ms - 1;
        ss += e * e;
        out->max_rel = fmax(out->max_rel, fabs(e));
    }
    out->rms_rel = sqrt(ss / n);
    return 0;
}
