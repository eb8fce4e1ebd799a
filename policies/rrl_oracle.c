/* rrl-oracle — RRL's node run by a table of measured costs (specs/rrl.md, "Baselines"): each
 * slot it applies the configuration with the least cost at the table's rate nearest the load
 * of the slot that just ended (at the start: nearest the configured mean rate). The table,
 * format rrl_table/1 (docs/policies.md), comes from a sweep of rrl-static over the grid and a
 * set of rates (experiments/rrl/oracle_table.sh writes it from the results database); its
 * grid is the policy's grid and its objective must be the policy's. */
#include "rrl_ctl.h"
#include "sim_err.h"

struct oracle {
    struct rrl_ctl ctl;               /* (first: the shared hooks take the state as one) */
    struct rrl_table table;
};

static const char *const params[] = {RRL_CTL_PARAMS, "table", NULL};

static int next(struct sim *s, struct rrl_ctl *ctl, const struct rrl_slot *o)
{
    (void)s;
    const struct rrl_table *t = &((struct oracle *)ctl)->table;
    return t->best[rrl_table_row(t, o->load_rps)];
}

static int init(struct sim *s, const cJSON *p, void *state)
{
    struct oracle *st = state;
    int rc;
    if ((rc = rrl_ctl_init(s, &st->ctl, p, false, 2)))
        return rc;
    const cJSON *tj = p ? cJSON_GetObjectItemCaseSensitive(p, "table") : NULL;
    if (!tj)
        return sim_err_set(SIM_EINVAL, "policy.params.table: rrl-oracle needs its table "
                           "(rrl_table/1; experiments/rrl/oracle_table.sh writes one)");
    if ((rc = rrl_table_parse(&st->table, tj, "policy.params.table", &st->ctl)))
        return rc;
    st->ctl.grid = st->table.grid;
    rrl_ctl_start(s, &st->ctl, st->table.best[rrl_table_row(&st->table, st->ctl.lam_bar)], next);
    return 0;
}

static void destroy(void *state)
{
    struct oracle *st = state;
    rrl_ctl_free(&st->ctl);
    rrl_table_free(&st->table);
}

const struct policy_ops policy_rrl_oracle = {
    .name = "rrl-oracle",
    .summary = "RRL's node at the best configuration of a measured table (rrl_table/1) for "
               "each slot's load",
    .state_size = sizeof(struct oracle),
    .param_keys = params,
    .init = init,
    RRL_CTL_HOOKS,
    .destroy = destroy,
};
