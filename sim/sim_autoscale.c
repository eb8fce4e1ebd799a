/* sim_autoscale — the symphony and target_util autoscalers (see sim_autoscale.h). */
#include "sim_autoscale.h"

#include <math.h>
#include <string.h>

#include "policy.h"
#include "sim.h"
#include "sim_err.h"
#include "sim_json.h"

static const char *const KINDS[] = {"none", "symphony", "target_util", NULL};

int sim_autoscale_parse(struct sim_config *c, const cJSON *root)
{
    static const char *const keys[] = {"kind", "min_gpus", "bad_rate_threshold", "keep_idle",
                                       "target_util", "tolerance", "cooldown_s", NULL};
    const char *P = "autoscale";
    struct sim_autoscale_cfg *a = &c->autoscale;
    const cJSON *o;
    int kind = 0, rc;
    long min_gpus = 1;
    memset(a, 0, sizeof *a);
    a->bad_rate_threshold = 0.01;
    a->keep_idle = 0.1;
    a->target_util = 0.7;
    a->tolerance = 0.1;
    a->cooldown_s = 30;
    if ((rc = sim_json_obj(root, "", "autoscale", false, &o)) || !o)
        return rc;
    if ((rc = sim_json_keys(o, P, keys)) ||
        (rc = sim_json_enum(o, P, "kind", true, KINDS, &kind)) ||
        (rc = sim_json_int(o, P, "min_gpus", false, 1, 1 << 20, &min_gpus)) ||
        (rc = sim_json_num(o, P, "bad_rate_threshold", false, SIM_J_UNIT, &a->bad_rate_threshold)) ||
        (rc = sim_json_num(o, P, "keep_idle", false, SIM_J_UNIT, &a->keep_idle)) ||
        (rc = sim_json_num(o, P, "target_util", false, SIM_J_UNIT, &a->target_util)) ||
        (rc = sim_json_num(o, P, "tolerance", false, SIM_J_UNIT, &a->tolerance)) ||
        (rc = sim_json_num(o, P, "cooldown_s", false, SIM_J_NONNEG, &a->cooldown_s)))
        return rc;
    a->kind = (enum sim_autoscaler)kind;
    a->min_gpus = (int)min_gpus;
    if (a->kind == SIM_AS_NONE)
        return 0;
    if (a->target_util <= 0)
        return sim_err_set(SIM_EINVAL, "autoscale.target_util: expected a number in (0, 1], "
                           "got 0");
    const struct policy_ops *p = policy_find(c->policy);
    if (p && !p->dynamic_execs)
        return sim_err_set(SIM_EINVAL, "autoscale: policy \"%s\" does not support executors "
                           "added or removed during a run (policies that do: see servesim "
                           "policies)", c->policy);
    if (c->sample_period_s <= 0)
        return sim_err_set(SIM_EINVAL, "autoscale: needs metrics.sample_period_s > 0 (its "
                           "control period)");
    if (c->max_gpus <= c->gpus)
        return sim_err_set(SIM_EINVAL, "cluster.max_gpus: expected more than cluster.gpus (%d) "
                           "for the autoscaler to add executors, got %d", c->gpus, c->max_gpus);
    if (a->min_gpus > c->max_gpus)
        return sim_err_set(SIM_EINVAL, "autoscale.min_gpus: expected at most cluster.max_gpus "
                           "(%d), got %d", c->max_gpus, a->min_gpus);
    return 0;
}

static void add(struct sim *s, int n, int64_t *last)
{
    int done = 0;
    for (int i = 0; i < n && sim_exec_add(s) >= 0; i++)
        done++;
    if (done)
        *last = sim_now(s);
    sim_ts_add(s, "autoscale.add", -1, done);
}

static void release(struct sim *s, int n, int64_t *last)
{
    int done = 0;
    for (int e = sim_exec_count(s) - 1; e >= 0 && done < n; e--)
        if (sim_exec(s, e)->state == SIM_EXEC_UP) {
            sim_exec_remove(s, e);
            done++;
        }
    if (done)
        *last = sim_now(s);
    sim_ts_add(s, "autoscale.remove", -1, done);
}

void sim_autoscale_step(struct sim *s, int64_t *last)
{
    const struct sim_config *c = sim_cfg(s);
    const struct sim_autoscale_cfg *a = &c->autoscale;
    int up = 0, starting = 0, draining = 0;
    for (int e = 0; e < sim_exec_count(s); e++) {
        enum sim_exec_state st = sim_exec(s, e)->state;
        up += st == SIM_EXEC_UP;
        starting += st == SIM_EXEC_STARTING;
        draining += st == SIM_EXEC_DRAINING;
    }
    if (a->kind == SIM_AS_NONE) {
        sim_ts_add(s, "gpus_billed", -1, up + starting + draining);
        return;
    }
    (void)draining;
    const struct sim_window *w = sim_last_window(s);
    double r = w->bad_rate, f = w->idle_frac, n = up;
    int room = c->max_gpus - (up + starting);
    int grow = 0, shrink = 0;
    bool may_release = starting == 0 && (double)(sim_now(s) - *last) >= a->cooldown_s * 1e9;
    if (a->kind == SIM_AS_SYMPHONY) {
        if (r > a->bad_rate_threshold)
            grow = (int)ceil(r < 1 ? n * r / (1 - r) : n) - starting;
        else if (may_release)
            shrink = (int)floor(n * (f - a->keep_idle));
    } else {
        double u = 1 - f;
        if (fabs(u / a->target_util - 1) > a->tolerance) {
            int desired = (int)ceil(n * u / a->target_util - 1e-9);
            if (desired > up + starting)
                grow = desired - (up + starting);
            else if (desired < up && may_release)
                shrink = up - desired;
        }
    }
    if (grow > room)
        grow = room;
    if (up - shrink < a->min_gpus)
        shrink = up - a->min_gpus;
    if (grow > 0)
        add(s, grow, last);
    else if (shrink > 0)
        release(s, shrink, last);
    int billed = 0;
    for (int e = 0; e < sim_exec_count(s); e++)
        billed += sim_exec(s, e)->state != SIM_EXEC_DOWN;
    sim_ts_add(s, "gpus_billed", -1, billed);
}
