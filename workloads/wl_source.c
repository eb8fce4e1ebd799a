/* wl_source — synthetic streams and trace replays behind the engine's source table. */
#include "wl_source.h"

#include <stdio.h>
#include <stdlib.h>

#include "sim_err.h"
#include "wl_clients.h"

static int replay_next(void *ctx, int64_t *t, int *model, double *size)
{
    return wl_replay_next(ctx, t, model, size);
}

static void replay_tokens(void *ctx, struct sim_tokens *out)
{
    wl_replay_tokens(ctx, out);
}

static void replay_close(void *ctx)
{
    wl_replay_close(ctx);
}

static void close_all(struct sim_source *src, int n)
{
    for (int i = 0; i < n; i++)
        src[i].close(src[i].ctx);
}

int wl_sources_open(const struct wl_workload *w, const struct sim_world *world, double scale,
                    struct sim_source **out, int *n, struct wl_replay **replay)
{
    int nf = world->frontends, rc;
    if (replay)
        *replay = NULL;
    if (w->clients)                     /* closed loop: a source per client */
        return wl_clients_open(w->clients, world->seed, scale, out, n);
    bool indep = world->frontend_split == SIM_SPLIT_INDEPENDENT && nf > 1 && !w->trace;
    int per = world->app ? 1 : world->nmodels;   /* an application is one source */
    int ns = w->trace ? 1 : indep ? per * nf : per;
    struct sim_source *src = calloc((size_t)ns, sizeof *src);
    *out = NULL;
    *n = 0;
    if (replay)
        *replay = NULL;
    if (!src)
        return SIM_ENOMEM;
    if (w->trace) {                     /* frontends: round robin unless random */
        struct wl_replay *rp;
        if ((rc = wl_replay_open(w, world, scale, &rp))) {
            free(src);
            return rc;
        }
        src[0] = (struct sim_source){replay_next, replay_close, rp, nf == 1 ? 0 : -1, NULL, NULL,
                                     replay_tokens};
        if (replay)
            *replay = rp;
        *out = src;
        *n = 1;
        return 0;
    }
    for (int i = 0; i < ns; i++) {
        int m = indep ? i / nf : i;
        const char *name = world->app ? world->app->name : world->models[m].name;
        char sname[SIM_NAME_MAX + 32];
        if (indep)
            snprintf(sname, sizeof sname, "arrivals.%s.f%d", name, i % nf);
        else
            snprintf(sname, sizeof sname, "arrivals.%s", name);
        double rate = (world->app ? world->rate_rps : world->model_rps[m]) * scale /
                      (indep ? nf : 1);
        if (wl_stream_source(w, world->seed, sname, rate, world->app ? -1 : m, &src[i])) {
            close_all(src, i);
            free(src);
            return SIM_ENOMEM;
        }
        src[i].frontend = indep ? i % nf : nf == 1 ? 0 : -1;
    }
    *out = src;
    *n = ns;
    return 0;
}
