/* sim_progress — progress lines of long simulations (sim_progress.h). */
#include "sim_progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_wall.h"

/* The engine calls this at every event: the wall clock is read every 4096 events, and a line
 * written at most once a second. */
static void on_event(void *ctx, const struct sim *s, int64_t now)
{
    struct sim_progress *p = ctx;
    if (++p->n & 0xfff)
        return;
    double w = sim_wall_seconds();
    p->requests = sim_arrived(s);
    if (!p->tty || w - p->last < p->every_s)
        return;
    p->last = w;
    p->shown = true;
    double el = w - p->t0;
    fprintf(stderr, "\r%s: simulated %.1f of %.0f s (%.0f%%), %.3g M requests, %.3g M req/s, "
            "%.0f s so far   ", p->what, (double)now / 1e9, p->end_s,
            100 * (double)now / 1e9 / p->end_s, (double)p->requests / 1e6,
            el > 0 ? (double)p->requests / el / 1e6 : 0.0, el);
}

const struct sim_observer *sim_progress_start(struct sim_progress *p, bool on, double end_s,
                                              const char *what)
{
    memset(p, 0, sizeof *p);
    snprintf(p->what, sizeof p->what, "%s", what);
    p->on = on;
    p->tty = on && isatty(STDERR_FILENO);
    p->t0 = p->last = sim_wall_seconds();
    p->end_s = end_s;
    const char *e = getenv("SERVESIM_PROGRESS_S");   /* seconds between lines (default 1) */
    char *end = NULL;
    p->every_s = e && *e ? strtod(e, &end) : 1;
    if (!e || !*e || *end || !(p->every_s >= 0))
        p->every_s = 1;
    p->obs.ctx = p;
    p->obs.event = on_event;
    return on ? &p->obs : NULL;
}

void sim_progress_end(struct sim_progress *p)
{
    if (!p->on)
        return;
    double w = sim_wall_seconds() - p->t0;
    if (p->shown)
        fputc('\n', stderr);
    if (!p->tty && w > 10)
        fprintf(stderr, "%s: %.0f simulated s, %.3g M requests in %.1f s\n", p->what, p->end_s,
                (double)p->requests / 1e6, w);
}
