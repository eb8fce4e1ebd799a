/* rrl-oracle — RRL's node run by a table of measured costs (specs/rrl.md, "Baselines"): each
 * slot it applies the configuration with the least cost at the table's rate nearest the load
 * of the slot that just ended (at the start: nearest the configured mean rate). The table,
 * format rrl_table/1 (docs/policies.md), comes from a sweep of rrl-static over the grid and a
 * set of rates (experiments/rrl/oracle_table.sh writes it from the results database), given
 * as policy.params.oracle_table; its grid is the policy's grid and its objective must be the
 * policy's. */
#include "rrl_ctl.h"
#include "sim_err.h"

static const struct sim_param params[] = {RRL_CTL_INCLUDE, {NULL}};

static int next(struct sim *s, struct rrl_ctl *ctl, const struct rrl_slot *o)
{
    (void)s;
    return ctl->table->best[rrl_table_row(ctl->table, o->load_rps)];
}

static int init(struct sim *s, const cJSON *p, void *state)
{
    struct rrl_ctl *ctl = state;
    int rc;
    if ((rc = rrl_ctl_init(s, ctl, p, false, 2)) || (rc = rrl_ctl_read_table(ctl, p, true)))
        return rc;
    const struct rrl_table *t = ctl->table;
    return rrl_ctl_start(s, ctl, p, t->best[rrl_table_row(t, ctl->lam_bar)], next);
}

static void destroy(void *state)
{
    rrl_ctl_free(state);
}

const struct policy_ops policy_rrl_oracle = {
    .name = "rrl-oracle",
    .summary = "RRL's node at the best configuration of a measured table (rrl_table/1) for "
               "each slot's load",
    .state_size = sizeof(struct rrl_ctl),
    .params = params,
    .init = init,
    RRL_CTL_HOOKS,
    .destroy = destroy,
};
