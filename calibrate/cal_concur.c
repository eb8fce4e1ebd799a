/* cal_concur — k concurrent inferences of t intra-op threads each on one CPU (cal_concur.h). */
#include "cal_concur.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <omp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cal_ref.h"
#include "sim_err.h"

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
        if (w->n == w->cap) {
            int cap = w->cap ? 2 * w->cap : 256;
            double *m = realloc(w->ms, (size_t)cap * sizeof *m);
            if (!m) {
                w->rc = SIM_ENOMEM;
                break;
            }
            w->ms = m, w->cap = cap;
        }
        w->ms[w->n++] = ms;
    }
    return NULL;
}

int cal_concur_measure(const struct cal_backend_ops *be, const struct cal_net *net, int batch,
                       int k, int t, int warmup, double seconds, struct cal_concur_point *out)
{
    memset(out, 0, sizeof *out);
    out->k = k, out->p = 1, out->t = t;
    if (k < 1 || k > MAX_K || t < 1 || !(seconds > 0))
        return sim_err_set(SIM_EINVAL, "concurrency: expected 1 <= k <= %d, t >= 1 and a "
                           "positive duration, got k %d, t %d, %g s", MAX_K, k, t, seconds);
    struct worker w[MAX_K];
    memset(w, 0, sizeof w);
    pthread_t th[MAX_K];
    struct gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false, false};
    void *in = cal_ref_input(net, batch, 12345);
    if (!in)
        return SIM_ENOMEM;
    int rc = 0, made = 0, started = 0;
    /* the instances are created and prepared here, one after another (primitives are built
     * for t threads), and only run in the workers */
    struct cal_opts bo = {.threads = t};
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
        pthread_cond_broadcast(&g.cv);
        pthread_mutex_unlock(&g.mu);
        double wall0 = now_s(CLOCK_MONOTONIC), cpu0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
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
                                 "(k %d, t %d)", i + 1, k, k, t);
    }
    int n = 0;
    for (int i = 0; i < k; i++)
        n += w[i].n;
    double *all = !rc && n > 0 ? malloc((size_t)n * sizeof *all) : NULL;
    if (!rc && n == 0)
        rc = sim_err_set(SIM_EINVAL, "concurrency: no inference completed in %g s (k %d, t %d)",
                         seconds, k, t);
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
