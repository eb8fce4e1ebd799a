/* wl_clients — closed-loop clients as the engine's sources (wl_clients.h). */
#include "wl_clients.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>

#include "sim_err.h"
#include "sim_rng.h"

struct shared {                         /* what the clients of a run share */
    const struct wl_clients_cfg *cfg;
    int *count;                         /* counts x scale */
    gsl_rng *rng;
    int refs;
};

struct client {
    struct shared *sh;
    int k;                              /* its index: active in a step when k < count */
    bool waiting, started;
    int64_t last_end;
};

double wl_clients_rate(const struct wl_clients_cfg *c)
{
    double sum = 0;
    for (int i = 0; i < c->nsteps; i++)
        sum += c->counts[i];
    return c->nsteps ? sum / c->nsteps / c->think_s : 0;
}

/* Clients active in the step holding time t (ns); after the schedule, the last count or 0. */
static int active(const struct shared *sh, int64_t t)
{
    const struct wl_clients_cfg *c = sh->cfg;
    double st = (double)t / 1e9 / c->step_s;
    if (st >= c->nsteps)
        return c->hold ? sh->count[c->nsteps - 1] : 0;
    return sh->count[(int)st];
}

static int64_t think_ns(struct shared *sh)
{
    return (int64_t)llround(gsl_ran_exponential(sh->rng, sh->cfg->think_s) * 1e9);
}

static int client_next(void *ctx, int64_t *t, int *model, double *size)
{
    struct client *cl = ctx;
    struct shared *sh = cl->sh;
    const struct wl_clients_cfg *c = sh->cfg;
    if (cl->waiting)
        return 2;                       /* until its response */
    int64_t step = (int64_t)llround(c->step_s * 1e9);
    int64_t at = cl->started ? cl->last_end + think_ns(sh) : think_ns(sh);
    for (;;) {                          /* retired: it starts at the next step counting it */
        if (cl->k < active(sh, at))
            break;
        int64_t next = (at / step + 1) * step;
        if (next / step >= c->nsteps && !(c->hold && cl->k < sh->count[c->nsteps - 1]))
            return 0;                   /* never active again */
        at = next + think_ns(sh);
    }
    cl->waiting = true;
    *t = at;
    *model = c->model;
    *size = 0;
    return 1;
}

static int client_active(void *ctx, int64_t t)
{
    struct client *cl = ctx;
    return cl->k < active(cl->sh, t);
}

static void client_end(void *ctx, int64_t t_end)
{
    struct client *cl = ctx;
    cl->waiting = false;
    cl->started = true;
    cl->last_end = t_end;
}

static void client_close(void *ctx)
{
    struct client *cl = ctx;
    if (--cl->sh->refs == 0) {
        gsl_rng_free(cl->sh->rng);
        free(cl->sh->count);
        free(cl->sh);
    }
    free(cl);
}

int wl_clients_open(const struct wl_clients_cfg *c, uint64_t seed, double scale,
                    struct sim_source **out, int *n)
{
    struct shared *sh = calloc(1, sizeof *sh);
    int most = 1;
    *out = NULL;
    *n = 0;
    if (!sh || !(sh->count = calloc((size_t)c->nsteps, sizeof *sh->count)) ||
        !(sh->rng = sim_rng_stream(seed, "workload.clients"))) {
        if (sh)
            free(sh->count);
        free(sh);
        return SIM_ENOMEM;
    }
    sh->cfg = c;
    for (int i = 0; i < c->nsteps; i++) {
        double v = c->counts[i] * scale;
        sh->count[i] = v > 1e6 ? 1000000 : (int)lround(v);
        most = sh->count[i] > most ? sh->count[i] : most;
    }
    struct sim_source *src = calloc((size_t)most, sizeof *src);
    if (!src) {
        gsl_rng_free(sh->rng);
        free(sh->count);
        free(sh);
        return SIM_ENOMEM;
    }
    for (int k = 0; k < most; k++) {
        struct client *cl = calloc(1, sizeof *cl);
        if (!cl) {
            for (int i = 0; i < k; i++)
                client_close(src[i].ctx);
            free(src);
            return SIM_ENOMEM;
        }
        cl->sh = sh;
        cl->k = k;
        sh->refs++;
        src[k] = (struct sim_source){client_next, client_close, cl, -1, client_end, client_active, NULL};
    }
    *out = src;
    *n = most;
    return 0;
}

void wl_clients_cfg_free(struct wl_clients_cfg *c)
{
    if (c)
        free(c->counts);
    free(c);
}
