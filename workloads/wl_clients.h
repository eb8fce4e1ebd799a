/* wl_clients — closed-loop clients (DynamoML's web clients) as engine sources: a schedule of
 * how many clients are active in each step; each active client sends one request to its
 * model, waits for the response, thinks (exponential, mean think_s) and sends again. At a
 * step, clients that become active start after a think time; clients beyond the step's count
 * retire after their response (and start again when a later step counts them). After the
 * schedule the last count holds ("hold") or the clients stop ("end"). Nothing is dropped for
 * being late: the SLO only classifies. Config (workload.clients; docs/config.md):
 *   {"model": "resnet50", "step_s": 60, "counts": [10, 40, 100], "think_s": 1, "after": "hold"}
 * Client k is one source of the engine (a closed-loop source: sim_source.on_end); their
 * think times come from one stream, "workload.clients". */
#ifndef WL_CLIENTS_H
#define WL_CLIENTS_H

#include <stdbool.h>

#include "sim.h"

struct wl_clients_cfg {
    int model;
    double step_s, think_s;
    int nsteps;
    int *counts;                       /* [nsteps], owned */
    bool hold;
};

/* Mean request rate the schedule would offer with instant responses: mean count / think_s
 * (an upper bound; what policies read as the model's rate). */
double wl_clients_rate(const struct wl_clients_cfg *c);
/* The clients of one run (counts times `scale`, rounded) as sources into *out (malloc'd, *n
 * of them: the most clients any step has, at least one). */
int wl_clients_open(const struct wl_clients_cfg *c, uint64_t seed, double scale,
                    struct sim_source **out /* OUT */, int *n /* OUT */);
void wl_clients_cfg_free(struct wl_clients_cfg *c);

#endif
