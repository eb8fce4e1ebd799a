/* autoscale — the autoscalers: components that add and remove executors during a run, with
 * any policy that supports dynamic executors (policy_ops.dynamic_execs).
 *
 * Config `autoscale` (docs/config.md; parsed by the experiment layer into struct
 * policy_autoscale). Every sampling period (metrics.sample_period_s), after the policy's
 * on_tick, the engine calls the autoscaler's step, which reads the last window (bad rate r,
 * idle fraction f, executors up N) and acts through sim_exec_add / sim_exec_remove; added
 * executors serve after cluster.provision_s. Two autoscalers:
 *   - "symphony" (specs/symphony.md, "Autoscaling signals"): if r > bad_rate_threshold, ask
 *     for N r / (1 - r) more (less those still starting); else release N (f - keep_idle)
 *     (the spec's N f, less a margin so the cluster does not sit exactly at saturation);
 *   - "target_util" (the Kubernetes HPA rule, a common baseline): u = 1 - f, desired =
 *     ceil(N u / target_util), acted on when |u / target_util - 1| > tolerance.
 * Releases wait for cooldown_s after the last action and for no executor to be starting;
 * the newest executors go first. Counts stay within [min_gpus, cluster.max_gpus]. Time series:
 * autoscale.add, autoscale.remove (the engine adds gpus_billed). */
#include <math.h>
#include <string.h>

#include "policy.h"

struct state {
    int64_t last;                       /* time of the last add or release (ns) */
};

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

/* The executors up and starting, and whether a release may happen now. */
struct census {
    int up, starting;
    bool may_release;
};

static struct census census(struct sim *s, const struct policy_autoscale *a, int64_t last)
{
    struct census c = {0, 0, false};
    for (int e = 0; e < sim_exec_count(s); e++) {
        enum sim_exec_state st = sim_exec(s, e)->state;
        c.up += st == SIM_EXEC_UP;
        c.starting += st == SIM_EXEC_STARTING;
    }
    c.may_release = c.starting == 0 && (double)(sim_now(s) - last) >= a->cooldown_s * 1e9;
    return c;
}

/* Grows by `grow` or shrinks by `shrink` within [min_gpus, cluster.max_gpus]. */
static void act(struct sim *s, const struct policy_autoscale *a, const struct census *c,
                int grow, int shrink, int64_t *last)
{
    int room = sim_world(s)->max_gpus - (c->up + c->starting);
    if (grow > room)
        grow = room;
    if (c->up - shrink < a->min_gpus)
        shrink = c->up - a->min_gpus;
    if (grow > 0)
        add(s, grow, last);
    else if (shrink > 0)
        release(s, shrink, last);
}

static void symphony_step(struct sim *s, const void *params, void *state)
{
    const struct policy_autoscale *a = params;
    struct state *st = state;
    struct census c = census(s, a, st->last);
    const struct sim_window *w = sim_last_window(s);
    double r = w->bad_rate, f = w->idle_frac, n = c.up;
    int grow = 0, shrink = 0;
    if (r > a->bad_rate_threshold)
        grow = (int)ceil(r < 1 ? n * r / (1 - r) : n) - c.starting;
    else if (c.may_release)
        shrink = (int)floor(n * (f - a->keep_idle));
    act(s, a, &c, grow, shrink, &st->last);
}

static void target_util_step(struct sim *s, const void *params, void *state)
{
    const struct policy_autoscale *a = params;
    struct state *st = state;
    struct census c = census(s, a, st->last);
    double u = 1 - sim_last_window(s)->idle_frac, n = c.up;
    int grow = 0, shrink = 0;
    if (fabs(u / a->target_util - 1) > a->tolerance) {
        int desired = (int)ceil(n * u / a->target_util - 1e-9);
        if (desired > c.up + c.starting)
            grow = desired - (c.up + c.starting);
        else if (desired < c.up && c.may_release)
            shrink = c.up - desired;
    }
    act(s, a, &c, grow, shrink, &st->last);
}

const struct sim_autoscaler_ops autoscaler_symphony = {
    .name = "symphony",
    .summary = "Symphony's signals: add N r/(1-r) above a bad rate, release idle executors",
    .state_size = sizeof(struct state),
    .step = symphony_step,
};

const struct sim_autoscaler_ops autoscaler_target_util = {
    .name = "target_util",
    .summary = "the Kubernetes HPA rule on utilisation: desired = ceil(N u / target)",
    .state_size = sizeof(struct state),
    .step = target_util_step,
};
