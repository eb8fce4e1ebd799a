/* symphony_int — Symphony's state, shared by symphony.c (candidates, the rank thread, the
 * policy's hooks) and symphony_groups.c (sub-clusters: the partition at the start and
 * re-partitioning at run time). Not for other files. */
#ifndef SYMPHONY_INT_H
#define SYMPHONY_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "policy.h"
#include "sim_iheap.h"

enum { TAG_MODEL = 1, TAG_RANK = 2, TAG_REPART = 3 };

struct cand {
    bool valid, parked;
    int bs;
    int64_t exec_at, invalid_after, drop_at;
    uint64_t timer;
    int64_t timer_at;
    double rate_c;               /* exponentially decayed arrival count */
    int64_t rate_t;
    int64_t beta_ns;             /* fixed cost of a batch: 2 l(1) - l(2) */
    const int64_t *lat;          /* l(b) for b in 1..max_batch + 1 (sim_latency_table) */
};

struct group {                   /* a sub-cluster: its GPUs and what waits for them */
    int ng;                      /* GPUs up in it */
    struct sim_iheap gpus;       /* GPU -> free_at */
    int *parked;
    int nparked;
    uint64_t rank_timer;
    int64_t rank_at;
    double work;                 /* GPU-seconds per second at the configured rates */
};

/* policy.params as given (the table below); init turns them into struct symphony's fields */
struct sym_params {
    bool work_conserving, overload_drop;
    double rate_window_ms, bad_rate_threshold;
    int sub_clusters;
    double partition_time_limit_s;
    int partition_node_limit;
    double dispatcher_max_rps;
    int partitioner;                            /* 0 milp, 1 random */
    double repartition_s, repartition_threshold, repartition_gain;
    int repartition_max_moves;
};

struct symphony {
    struct sym_params par;
    bool wc, overload_drop;
    double tau_ns;
    double bad_threshold;
    int nm, kind, k;
    struct cand *c;
    struct group *grp;           /* [k] */
    int *gof;                    /* [nm] sub-cluster of each model */
    int *gpu_grp, *loading;      /* [gcap] sub-cluster of each GPU (-1: none), loads pending */
    int gcap;
    /* re-partitioning at run time (repartition_s > 0): a model moves to next[m] once it is
     * loaded on every GPU serving there (mload[m] loads to go, pend marks them), then leaves
     * its old GPUs as their batches of it finish; then GPUs move between sub-clusters (out of
     * service until idle, re-loaded, joined). One re-partition at a time. */
    int64_t rep_ns;
    double rep_threshold, rep_gain, rmax, limit_s;
    int node_limit;
    int rep_moves;
    bool random_part;
    int *next, *mload;           /* [nm] */
    double *mwork;               /* [nm] GPU-seconds per second at the last measured rates */
    int *inflight;               /* [gcap * nm] batches dispatched and not done */
    int *busy;                   /* [gcap] batches in flight on the GPU */
    unsigned char *pend;         /* [gcap * nm] a load for a model's move */
    bool *moving;                /* [gcap] between sub-clusters: joins gpu_grp[g] when loaded */
    int models_moving, gpus_moving;
    int repartitions, models_moved, gpus_moved;  /* re-partitions that moved something */
};

static inline int *inflight_at(struct symphony *st, int g, int m)
{
    return &st->inflight[(size_t)g * (size_t)st->nm + (size_t)m];
}

static inline unsigned char *pend_at(struct symphony *st, int g, int m)
{
    return &st->pend[(size_t)g * (size_t)st->nm + (size_t)m];
}

static inline int64_t lat(const struct sim *s, const struct symphony *st, int m, int b)
{
    (void)s;
    return st->c[m].lat[b];      /* every caller asks for 1 <= b <= max_batch + 1 */
}

/* symphony.c: model m's parked candidate leaves its sub-cluster's parked list; its candidate
 * is recomputed now; sub-cluster gi's rank timer is set again. */
void sym_unpark(struct symphony *st, int m);
void sym_refresh(struct sim *s, struct symphony *st, int m);
void sym_rank_rearm(struct sim *s, struct symphony *st, int gi);

/* symphony_groups.c */
/* Room for n GPUs in every per-GPU array and heap. */
int sym_reserve_gpus(struct symphony *st, int n);
/* GPU g joins sub-cluster gi (its models resident), free now. */
void sym_join(struct sim *s, struct symphony *st, int g, int gi);
/* The partition of the models at their configured rates into st->gof, for `want`
 * sub-clusters (0: the fewest that fit); errors name policy.params.sub_clusters. */
int sym_partition(struct sim *s, struct symphony *st, int want, double limit_s, double rmax,
                  bool random);
/* GPUs per sub-cluster in proportion to its work, each at least one, into count[k]. */
void sym_split_gpus(struct symphony *st, int ng, int *count);
/* Sub-cluster gi's GPU set changed: every candidate there is recomputed. */
void sym_regroup(struct sim *s, struct symphony *st, int gi);
/* Every repartition_s (docs/policies.md): models move make before break, then GPUs follow. */
void sym_repartition(struct sim *s, struct symphony *st);
/* Model m is loaded on every GPU of its new sub-cluster: it switches there. */
void sym_switch_model(struct sim *s, struct symphony *st, int m);
/* GPU g, out of service and idle, loads its new sub-cluster's models; joins when loaded. */
void sym_settle(struct sim *s, struct symphony *st, int g);
/* Model m leaves GPU g when it is neither g's sub-cluster's nor moving there, and idle. */
void sym_evict_if_done(struct sim *s, struct symphony *st, int g, int m);

#endif
