/* rrl_node — RRL's serving node: routing, TF Serving's batcher on lanes, and the per-slot
 * observation the learning policies feed on (rrl_node.h). */
#include "rrl_node.h"

#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "sim_err.h"
#include "sim_grow.h"

static int lanes_in_use(const struct sim_exec *x)
{
    return x->nrunning + x->pending;
}

static int queued(const struct sim *s, int e)
{
    int q = 0;
    for (int m = 0; m < sim_model_count(s); m++)
        q += sim_xqueue_len(s, e, m);
    return q;
}

/* The batcher of serving executor i (executor e): fill lanes while the rule allows. */
static void fill(struct sim *s, struct rrl_node *nd, int i)
{
    int e = nd->exec[i];
    const struct sim_exec *x = sim_exec(s, e);
    int limit = nd->dev == RRL_CPU ? nd->c[0] : nd->c[2];
    while (x->state == SIM_EXEC_UP && lanes_in_use(x) < limit) {
        int best = sim_xqueue_oldest(s, e);     /* the model whose head has waited longest */
        if (best < 0)
            return;
        int len = sim_xqueue_len(s, e, best);
        struct sim_dispatch_args a = {.exec = e, .model = best, .from = e,
                                      .start_at = sim_now(s)};
        if (nd->dev == RRL_CPU) {
            a.n = 1;
            a.k = nd->c[0];
            a.p = nd->c[1];
            a.t = nd->c[2];
        } else {
            int B = nd->c[0] < sim_model(s, best)->max_batch ? nd->c[0]
                                                             : sim_model(s, best)->max_batch;
            int64_t due = sim_xqueue_at(s, e, best, 0)->t_sched + nd->timeout_ns;
            if (len < B && sim_now(s) < due) {
                nd->timer[i] = sim_timer_rearm(s, nd->timer[i], due, (uint64_t)i, NULL);
                return;
            }
            a.n = len < B ? len : B;
        }
        sim_dispatch_ex(s, &a);
    }
}

static double busy_now(const struct sim *s, const struct rrl_node *nd)
{
    double busy = 0;
    for (int i = 0; i < nd->n; i++)
        busy += nd->dev == RRL_CPU ? sim_exec_busy_core_s(s, nd->exec[i])
                                   : (double)sim_exec_busy_ns(s, nd->exec[i]);
    return busy;
}

int rrl_node_init(struct sim *s, struct rrl_node *nd)
{
    int dev = nd->dev;
    const struct sim_world *w = sim_world(s);
    nd->lanes = w->lanes > 1 ? w->lanes : 1;
    if (sim_track_heads(s))             /* fill serves the oldest head */
        return SIM_ENOMEM;
    if (dev == RRL_CPU) {
        if (sim_model_count(s) != 1)
            return sim_err_set(SIM_EINVAL, "policy.params.device: \"cpu\" serves one model "
                               "(a CPU executor is bound to it), got %d models",
                               sim_model_count(s));
        for (int k = 0; k < w->nnodes; k++)
            if (w->nodes[k].cores > 0 && (nd->cores == 0 || w->nodes[k].cores < nd->cores))
                nd->cores = w->nodes[k].cores;
        if (nd->cores == 0)
            return sim_err_set(SIM_EINVAL, "policy.params.device: \"cpu\" needs nodes with "
                               "cores (cluster.nodes[].cores)");
    } else if (sim_exec_count(s) == 0) {
        return sim_err_set(SIM_EINVAL, "policy.params.device: \"gpu\" needs GPUs (cluster.gpus "
                           "or cluster.nodes[].gpus)");
    }
    int n = dev == RRL_CPU ? w->nnodes : sim_exec_count(s);
    nd->exec = calloc((size_t)n, sizeof *nd->exec);
    nd->timer = calloc((size_t)n, sizeof *nd->timer);
    if (!nd->exec || !nd->timer)
        return SIM_ENOMEM;
    if (dev == RRL_GPU) {
        for (int e = 0; e < n; e++)
            nd->exec[nd->n++] = e;
    } else {
        for (int k = 0; k < w->nnodes; k++) {
            if (w->nodes[k].cores == 0)
                continue;
            int e = sim_exec_add_cpu(s, k, 0, w->nodes[k].cores * 1000);
            if (e < 0)
                return sim_out_of_memory(s) ? SIM_ENOMEM : SIM_EINVAL;
            nd->exec[nd->n++] = e;
        }
    }
    nd->slot_t0 = sim_now(s);
    nd->slot_arrived0 = sim_arrived(s);
    nd->slot_busy0 = busy_now(s, nd);
    return 0;
}

void rrl_node_free(struct rrl_node *nd)
{
    free(nd->exec);
    free(nd->timer);
    free(nd->lat_ms);
}

void rrl_node_apply(struct sim *s, struct rrl_node *nd, const int c[3])
{
    memcpy(nd->c, c, sizeof nd->c);
    nd->timeout_ns = nd->dev == RRL_CPU ? 0 : (int64_t)c[1] * SIM_NS_PER_MS;
    for (int i = 0; i < nd->n; i++)
        fill(s, nd, i);
}

/* The node with the shortest queue (requests waiting there), ties lowest id. */
int rrl_node_route(struct sim *s, struct rrl_node *nd, const struct sim_request *r)
{
    (void)r;
    int best = nd->exec[0], bq = queued(s, best);
    for (int i = 1; i < nd->n; i++) {
        int q = queued(s, nd->exec[i]);
        if (q < bq) {
            best = nd->exec[i];
            bq = q;
        }
    }
    return best;
}

/* The serving executors' ids are consecutive (the GPUs, or the CPU executors added in
 * order): e's index, or -1 for an executor the node does not use. */
static int index_of(const struct rrl_node *nd, int e)
{
    int i = e - nd->exec[0];
    return i >= 0 && i < nd->n ? i : -1;
}

void rrl_node_on_request(struct sim *s, struct rrl_node *nd, struct sim_request *r)
{
    int i = index_of(nd, r->exec);
    if (i >= 0)
        fill(s, nd, i);
}

void rrl_node_on_batch_done(struct sim *s, struct rrl_node *nd, const struct sim_batch *b)
{
    int i = index_of(nd, b->exec);
    if (i >= 0)
        fill(s, nd, i);
}

void rrl_node_on_timer(struct sim *s, struct rrl_node *nd, uint64_t tag)
{
    nd->timer[tag] = 0;
    fill(s, nd, (int)tag);
}

void rrl_node_on_request_end(struct rrl_node *nd, const struct sim_request *r, int64_t t_end)
{
    if (sim_grow(&nd->lat_ms, &nd->caplat, nd->nlat + 1, sizeof *nd->lat_ms, 256)) {
        nd->nomem = true;               /* said at the slot's end (rrl_node_slot) */
        return;
    }
    nd->lat_ms[nd->nlat++] = sim_ns_to_ms(t_end - r->t_arrival);
    nd->ndropped += r->outcome == SIM_REQ_DROPPED;
}

void rrl_node_slot(struct sim *s, struct rrl_node *nd, int64_t max_wait_ns, double tail_pct,
                   struct rrl_obs *o)
{
    int64_t now = sim_now(s), oldest = now;
    if (nd->nomem)
        sim_fail_nomem(s, "keeping a slot's latencies");
    for (int i = 0; i < nd->n; i++)
        for (int m = 0; m < sim_model_count(s); m++) {
            int e = nd->exec[i];
            while (sim_xqueue_len(s, e, m) > 0 &&
                   now - sim_xqueue_at(s, e, m, 0)->t_arrival >= max_wait_ns)
                sim_xqueue_drop_head(s, e, m);          /* recorded by on_request_end */
            if (sim_xqueue_len(s, e, m) > 0 && sim_xqueue_at(s, e, m, 0)->t_arrival < oldest)
                oldest = sim_xqueue_at(s, e, m, 0)->t_arrival;
        }
    *o = (struct rrl_obs){0};
    o->secs = (double)(now - nd->slot_t0) / 1e9;
    uint64_t arrived = sim_arrived(s);
    double busy = busy_now(s, nd);
    if (o->secs > 0) {
        o->load_rps = (double)(arrived - nd->slot_arrived0) / o->secs;
        double cap = o->secs * nd->n * (nd->dev == RRL_CPU ? nd->cores : 1e9);
        o->util = (busy - nd->slot_busy0) / cap;
    }
    o->ended = nd->nlat;
    o->dropped = nd->ndropped;
    o->oldest_ms = sim_ns_to_ms(now - oldest);
    if (nd->nlat > 0) {
        gsl_sort(nd->lat_ms, 1, (size_t)nd->nlat);
        o->mean_ms = gsl_stats_mean(nd->lat_ms, 1, (size_t)nd->nlat);
        o->tail_ms = gsl_stats_quantile_from_sorted_data(nd->lat_ms, 1, (size_t)nd->nlat,
                                                         tail_pct / 100.0);
    }
    nd->nlat = nd->ndropped = 0;
    nd->slot_t0 = now;
    nd->slot_arrived0 = arrived;
    nd->slot_busy0 = busy;
}
