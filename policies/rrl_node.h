/* rrl_node — the serving node that RRL's policies drive (specs/rrl.md, "Setting"): routing to
 * the node with the shortest queue, TF Serving's batcher on the executors' lanes, and what one
 * control slot showed (load, latency of the requests that ended in it, utilisation).
 *
 * A node is a TF-Serving-like server: requests wait at their node in FIFO order; a batcher
 * fills up to c lanes:
 *  - GPU (configuration [B, T_ms, m]): while fewer than m batches hold lanes and the queue
 *    holds B requests or its head has waited T, a lane takes the first min(B, queue); a timer
 *    at head + T otherwise;
 *  - CPU ([k, p, t]): one CPU executor per node with all of the node's cores; while fewer
 *    than k requests are in service it starts the head with p inter-op and t intra-op threads.
 * rrl-static (rrl_static.c) keeps one configuration; rrl (rrl.c) changes it every slot. */
#ifndef RRL_NODE_H
#define RRL_NODE_H

#include <stdint.h>

#include "policy.h"

enum { RRL_GPU, RRL_CPU };

struct rrl_node {
    int dev;                          /* RRL_GPU or RRL_CPU */
    int cores;                        /* CPU: cores of the smallest node (C) */
    int lanes;                        /* cluster.lanes (at least 1) */
    int c[3];                         /* CPU: k, p, t; GPU: B, T (ms), m */
    int64_t timeout_ns;               /* GPU: T */
    int n;                            /* serving executors */
    int *exec;                        /* [n] their ids (consecutive) */
    uint64_t *timer;                  /* [n] batch-timeout timers (GPU) */
    /* the slot being observed */
    int64_t slot_t0;
    uint64_t slot_arrived0;           /* sim_arrived at its start */
    double slot_busy0;                /* GPU: busy ns; CPU: busy core-seconds, all executors */
    double *lat_ms;                   /* latencies of the requests that ended in it */
    int nlat, caplat, ndropped;
    bool nomem;                 /* keeping a latency failed: said at the slot's end */
};

/* What one slot showed (rrl_node_slot). */
struct rrl_obs {
    double secs;                      /* its length */
    double load_rps;                  /* arrivals in it / secs */
    int ended, dropped;               /* requests that ended in it (completed or dropped) */
    double mean_ms, tail_ms;          /* their latency (a dropped one: its wait) */
    double oldest_ms;                 /* age of the oldest request waiting at its end, or 0 */
    double util;                      /* CPU: mean cores busy / cores; GPU: busy fraction */
};

/* For nd->dev (params.device, RRL_GPU or RRL_CPU, read by rrl_ctl_init), checks the world
 * and sets up the executors: the GPUs, or one CPU executor per node with all of its cores
 * (one model). Errors via sim_err_set. */
int rrl_node_init(struct sim *s, struct rrl_node *nd);
void rrl_node_free(struct rrl_node *nd);
/* Runs configuration c from now on: batches already running keep theirs. */
void rrl_node_apply(struct sim *s, struct rrl_node *nd, const int c[3]);

/* The policy hooks of a node (rrl_node_on_timer takes the tags rrl_node's timers carry: the
 * executor's index, below RRL_NODE_TAGS). */
#define RRL_NODE_TAGS (1u << 30)
int rrl_node_route(struct sim *s, struct rrl_node *nd, const struct sim_request *r);
void rrl_node_on_request(struct sim *s, struct rrl_node *nd, struct sim_request *r);
void rrl_node_on_batch_done(struct sim *s, struct rrl_node *nd, const struct sim_batch *b);
void rrl_node_on_timer(struct sim *s, struct rrl_node *nd, uint64_t tag);
/* Records a request that ended (for the slot's statistics). */
void rrl_node_on_request_end(struct rrl_node *nd, const struct sim_request *r, int64_t t_end);

/* Closes the slot that began at the last call (or at the start): first drops every waiting
 * request older than max_wait_ns (its wait counts as its latency), then fills *o (tail_pct:
 * the percentile for tail_ms) and starts the next slot. */
void rrl_node_slot(struct sim *s, struct rrl_node *nd, int64_t max_wait_ns, double tail_pct,
                   struct rrl_obs *o);

#endif
