/* wl_source — a workload as the engine's arrival sources (struct sim_source, sim.h).
 *
 * Synthetic arrivals: one stream per model (wl_arrival.h), or one per (model, frontend) when
 * several frontends split independently; an application is one source of requests (the
 * engine draws each request's path). A single frontend keeps the stream name, and so the
 * draws, of the unsplit model. A trace: one merged replay (wl_replay.h), whose requests are
 * dealt to frontends by the world's split. Closed-loop clients: one source each
 * (wl_clients.h). */
#ifndef WL_SOURCE_H
#define WL_SOURCE_H

#include "sim.h"
#include "wl_arrival.h"
#include "wl_replay.h"

/* The sources of one run of `world` at load scale `scale` into *out (malloc'd array of *n;
 * the engine takes over what they hold, the caller frees the array). *replay (may be NULL)
 * receives the trace replay among them, or NULL. */
int wl_sources_open(const struct wl_workload *w, const struct sim_world *world, double scale,
                    struct sim_source **out /* OUT */, int *n /* OUT */,
                    struct wl_replay **replay /* OUT */);

#endif
