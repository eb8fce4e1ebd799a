/* fifo — the work-conserving baseline: whenever an executor is idle it takes the oldest
 * waiting request's model and runs as many of that model's queued requests as fit in a batch
 * (up to max_batch). With drop_late (default true), requests that can no longer meet their
 * deadline even alone are dropped instead of run late. No timers, no look-ahead. With
 * cluster.lanes > 1 it fills every free lane (TF Serving's batcher with no timeout). */
#include <stdlib.h>

#include "policy.h"
#include "sim_err.h"
#include "sim_param.h"

struct fifo {
    bool drop_late;
};

static const struct sim_param params[] = {
    {"drop_late", SIM_P_BOOL, SIM_P_AT(struct fifo, drop_late, bool), .def = 1,
     .doc = "drop requests that can no longer meet their deadline even alone, instead of "
            "running them late"},
    {NULL}};

static void drop_infeasible(struct sim *s, struct fifo *st, int m, int kind)
{
    if (!st->drop_late)
        return;
    int64_t now = sim_now(s);
    while (sim_queue_len(s, m) > 0 &&
           now + sim_dispatch_delay_ns(s, 1) + sim_latency_ns(s, m, kind, 1) >
               sim_queue_at(s, m, 0)->deadline - sim_resp_delay_ns(s, m))
        sim_queue_drop_head(s, m);
}

/* Fills every free lane of every executor from the model whose head request arrived
 * first (one lane per executor unless cluster.lanes says more), executors in index order:
 * only those with a free lane are visited (sim_exec_next_free), not every busy one. */
static void fill(struct sim *s, struct fifo *st)
{
    for (int e = sim_exec_next_free(s, 0); e >= 0; e = sim_exec_next_free(s, e + 1)) {
        const struct sim_exec *x = sim_exec(s, e);
        while (x->state == SIM_EXEC_UP && x->nrunning + x->pending < x->lanes) {
            int best = -1;
            for (int m = 0; m < sim_model_count(s); m++) {
                drop_infeasible(s, st, m, x->kind);
                if (sim_queue_len(s, m) == 0)
                    continue;
                if (best < 0 ||
                    sim_xqueue_sched_at(s, SIM_CENTRAL, m, 0) <
                        sim_xqueue_sched_at(s, SIM_CENTRAL, best, 0))
                    best = m;
            }
            if (best < 0)
                return;
            int n = sim_queue_len(s, best);
            if (n > sim_model(s, best)->max_batch)
                n = sim_model(s, best)->max_batch;
            sim_dispatch(s, e, best, n, sim_now(s));
        }
    }
}

static int init(struct sim *s, const cJSON *p, void *state)
{
    (void)s;
    return sim_params_read(params, p, "policy.params", state);
}

static void on_request(struct sim *s, void *state, int m, struct sim_request *r)
{
    (void)m;
    (void)r;
    fill(s, state);
}

static void on_batch_done(struct sim *s, void *state, const struct sim_batch *b)
{
    (void)b;
    fill(s, state);
}

static void on_exec_up(struct sim *s, void *state, int e)
{
    (void)e;
    fill(s, state);
}

const struct policy_ops policy_fifo = {
    .name = "fifo",
    .summary = "Baseline: work-conserving FIFO across models, greedy batches, drops hopeless requests",
    .state_size = sizeof(struct fifo),
    .params = params,
    .init = init,
    .on_request = on_request,
    .on_batch_done = on_batch_done,
    .on_exec_up = on_exec_up,
    .dynamic_execs = true,      /* scans executors by state on every decision */
    .in_pools = true,
    .shared_devices = true,     /* fills free lanes */
};
