/* rrl_ctl — the control loop that every RRL policy shares (specs/rrl.md, "MDP"): a serving
 * node (rrl_node.h) run at one configuration of a grid per slot; at each slot's end the cost
 * of the requests that ended in it under the objective (latency, tail, resource), the load
 * and its bin; then the policy's agent names the next configuration. The agents: rrl
 * (region-based Q-learning, rrl.c), rrl-static (a fixed configuration), rrl-oracle (the
 * argmin of a table of measured costs, rrl_oracle.c) and the deep-RL comparators rrl-deeprm
 * and rrl-capes (rrl_drl.c).
 *
 * Common policy.params: device, load_bin, slot_s, max_wait_slots, restart, objective,
 * slo_ms, tail_pct (RRL_CTL_PARAMS). restart (false): every slot is a trial on a fresh server,
 * as the authors' scripts ran them — at a slot's end the requests still waiting are dropped
 * (their wait counts in the slot's cost) and the next slot starts with empty queues (batches
 * in service finish). Time series per slot: rrl.cost (when one was observed), rrl.load_rps,
 * rrl.util, rrl.state (the bin of the slot that ended) and the configuration
 * applied (rrl.k, rrl.p, rrl.t or rrl.B, rrl.T_ms, rrl.m). The oracle table (rrl_table/1)
 * (params.oracle_table) is read here too: rrl-oracle runs by it, and every policy given
 * one records its regret against it (rrl.regret). */
#ifndef RRL_CTL_H
#define RRL_CTL_H

#include <stdbool.h>

#include "rrl_learn.h"
#include "rrl_node.h"
#include "sim_param.h"

enum { RRL_OBJ_LATENCY, RRL_OBJ_TAIL, RRL_OBJ_RESOURCE };

/* The params the five policies share (rrl_ctl.c): each policy's table includes them
 * ({"rrl node", SIM_P_INCLUDE, .off = 0, .rows = rrl_ctl_params}: its state begins with the
 * struct rrl_ctl), and rrl_ctl_init reads them. */
extern const struct sim_param rrl_ctl_params[];
#define RRL_CTL_INCLUDE {"rrl node", SIM_P_INCLUDE, .off = 0, .rows = rrl_ctl_params}
/* The row of params.grid (rrl_ctl_parse_grid reads it), in the tables of the learners. */
#define RRL_GRID_ROW                                                                        \
    {"grid", SIM_P_HAND, .type_doc = "`[[k...], [p...], [t...]]` or `[[B...], [T_ms...], "  \
     "[m...]]`, ascending integers", .def_doc = "the paper's (below)",                     \
     .doc = "the configurations the agent chooses from"}

/* What an agent sees at the end of a slot. */
struct rrl_slot {
    bool observed;                    /* a request ended or waited: cost is defined */
    double cost;                      /* r_t under the objective */
    double load;                      /* load / configured mean rate (lambda / lambda-bar) */
    double load_rps, util;
    int state;                        /* the slot's load bin: s_{t+1} */
};

struct rrl_table;
struct rrl_ctl;
/* The agent: the configuration for the next slot, after slot o ran ctl->cfg in ctl->state
 * (ctl->state and ctl->cfg still hold s_t and c_t when it is called). */
typedef int (*rrl_next_fn)(struct sim *s, struct rrl_ctl *ctl, const struct rrl_slot *o);

struct rrl_ctl {
    struct rrl_node node;
    struct rrl_grid grid;             /* set by the policy before rrl_ctl_start */
    double load_bin, slot_s, wait_slots, slo_ms, tail_pct;
    bool restart;                     /* params.restart: each slot a trial on a fresh server */
    int objective;
    double lam_bar;                   /* configured mean rate (req/s), 0 if none */
    int nstates;
    int state, cfg;                   /* s_t, c_t */
    double seen_rps;                  /* the load measured in slot t-1 (at the start: lam_bar) */
    rrl_next_fn next;
    struct rrl_table *table;          /* params.oracle_table, or NULL */
    int *tmap;                        /* [grid.ncfg]: each configuration's index in the table */
};

/* Sets up the node and reads the common parameters. need_rate: the policy measures load
 * relative to the configured mean rate (an error without one); max_wait_slots defaults to
 * wait_default (0: requests are never dropped). */
int rrl_ctl_init(struct sim *s, struct rrl_ctl *ctl, const cJSON *p, bool need_rate,
                 double wait_default);
/* params.grid, or the paper's (CPU k, p, t in 1..C; GPU B in 1, 5, ..., 50, T in 0, 5, ...,
 * 50 ms, m in 1..10), k and m at most cluster.lanes, into ctl->grid. */
int rrl_ctl_parse_grid(struct rrl_ctl *ctl, const cJSON *p);
/* Reads params.oracle_table (once; `required`: an error without one) against the policy's
 * grid (ctl->grid, if set: each of its configurations must be in the table's grid; if not
 * set, the table's grid becomes the policy's). */
int rrl_ctl_read_table(struct rrl_ctl *ctl, const cJSON *p, bool required);
/* Reads the oracle table if the policy has not, applies configuration c0 and starts the
 * slots; the agent is called at each slot's end. With a table, every slot records
 * rrl.regret: the table's cost of the configuration that ran, at the rate nearest the load
 * the policy had seen when it chose it (the previous slot's; at the start the mean rate),
 * over the least cost at that rate, minus 1 — 0 where it ran what the oracle would have. */
int rrl_ctl_start(struct sim *s, struct rrl_ctl *ctl, const cJSON *p, int c0, rrl_next_fn next);
void rrl_ctl_free(struct rrl_ctl *ctl);
/* The load bin of a rate in req/s. */
int rrl_ctl_state_of(const struct rrl_ctl *ctl, double load_rps);
/* Records the knobs of configuration c under the series names of `which` (0: the applied
 * configuration rrl.k..., 1: the greedy one rrl.greedy_k... and, with a table,
 * rrl.greedy_regret: c priced at the centre rate of ctl->state). */
void rrl_ctl_record(struct sim *s, const struct rrl_ctl *ctl, int which, int c);

/* The policy hooks (state: a struct whose first member is the struct rrl_ctl). */
int rrl_ctl_route(struct sim *s, void *state, const struct sim_request *r);
void rrl_ctl_on_request(struct sim *s, void *state, int m, struct sim_request *r);
void rrl_ctl_on_request_end(struct sim *s, void *state, const struct sim_request *r,
                            int64_t t_end);
void rrl_ctl_on_batch_done(struct sim *s, void *state, const struct sim_batch *b);
void rrl_ctl_on_timer(struct sim *s, void *state, uint64_t tag, void *arg);

/* The policy_ops fields every RRL policy shares: the hooks above, no GPUs needed, lanes. */
#define RRL_CTL_HOOKS                                                                       \
    .route = rrl_ctl_route, .on_request = rrl_ctl_on_request,                               \
    .on_request_end = rrl_ctl_on_request_end, .on_batch_done = rrl_ctl_on_batch_done,       \
    .on_timer = rrl_ctl_on_timer, .needs_no_gpus = true, .shared_devices = true

/* A table of measured costs, rrl_table/1 (docs/policies.md): the objective, the grid, rates
 * in req/s (ascending) and for each rate the mean slot cost of every configuration (null:
 * not measured). */
struct rrl_table {
    int objective;
    struct rrl_grid grid;
    int nrates;
    double *rates;                    /* [nrates] */
    double *cost;                     /* [nrates][ncfg], NaN where not measured */
    int *best;                        /* [nrates] argmin */
};
/* Reads the table at JSON path `path` and checks it against the controller's device,
 * objective (and tail_pct or slo_ms) and its grid against the node's bounds (k or m at most
 * cluster.lanes). Errors via sim_err_set. */
int rrl_table_parse(struct rrl_table *t, const cJSON *j, const char *path,
                    const struct rrl_ctl *ctl);
void rrl_table_free(struct rrl_table *t);
/* The row of the rate nearest load_rps. */
int rrl_table_row(const struct rrl_table *t, double load_rps);

#endif
