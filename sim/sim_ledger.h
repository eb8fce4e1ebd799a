/* sim_ledger — the GPU ledger (sim_cluster.c): every GPU of every node and what holds
 * it, whole or in part (sim.h has the overview). */
#ifndef SIM_LEDGER_H
#define SIM_LEDGER_H

#include <stdbool.h>
#include <stdint.h>

#include "sim_types.h"

/* ---- the GPU ledger: every GPU of every node (cluster.nodes[].gpus; with cluster.gpus, one
 * node of max(gpus, max_gpus)) and what holds it. A holder claims thousandths of one GPU;
 * a GPU's claims never add up to more than 1000. GPU executors hold whole GPUs; policies
 * claim for their other work (a training job's workers, a notebook's share). When a GPU
 * becomes wholly free, the policy's on_gpu_free hears of it first and may claim it (for its
 * own work created before the first pending executor, say); if it is still wholly free
 * after, the first pending executor takes it. */
enum sim_holder { SIM_HOLD_EXEC, SIM_HOLD_WORKER, SIM_HOLD_SHARE };

struct sim_gpu_claim {
    enum sim_holder kind;
    int id;                      /* the executor, worker or share, in the holder's numbering */
    int milli;
};

struct sim_gpu {
    int node;
    int milli;                   /* claimed, thousandths (<= 1000) */
    int nclaims;
    const struct sim_gpu_claim *claims;
};

int sim_gpu_count(const struct sim *s);
const struct sim_gpu *sim_gpu(const struct sim *s, int g);
/* GPUs of node n with nothing claimed. */
int sim_node_gpus_free(const struct sim *s, int n);
/* Claims `milli` thousandths of GPU g for (kind, id): 0, or -1 (sim_err set) when it does
 * not fit or (kind, id) holds g already. SIM_HOLD_EXEC is the engine's own (sim_exec_add). */
int sim_gpu_claim(struct sim *s, int g, enum sim_holder kind, int id, int milli);
/* Ends the claim of (kind, id) on g (a no-op when there is none). */
void sim_gpu_release(struct sim *s, int g, enum sim_holder kind, int id);

#endif
