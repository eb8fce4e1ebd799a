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
 *   - "hpa" (Kubernetes' HPA on request rate, as DynamoML runs it: specs/dynamoml.md,
 *     operator 3): every sync_s, R = requests/s offered over the last window_s; desired =
 *     ceil(R / target_rps), unchanged while |R / (target_rps ready) - 1| <= tolerance (ready:
 *     executors up), within [min_gpus, max_gpus]; up at once by at most max(4, 100 %) of the
 *     current count (up, starting and pending); down to the largest desired of the last
 *     stabilization_s, removing pending executors first, then starting, then the newest.
 *     Executors added with no GPU free wait for one (pending; the policy may preempt).
 * Releases of the first two wait for cooldown_s after the last action and for no executor to
 * be starting; the newest executors go first. Counts stay within [min_gpus, cluster.max_gpus].
 * Time series: autoscale.add, autoscale.remove, hpa.desired (the engine adds gpus_billed). */
#include <math.h>
#include <string.h>

#include "policy.h"

#define HPA_HISTORY 1024               /* windows and recommendations kept: 1,024 periods */

struct state {
    int64_t last;                       /* time of the last add or release (ns) */
    /* hpa: the windows seen (end time, offered), a ring; desired recommendations with their
     * times, a ring; the last sync */
    int64_t win_t[HPA_HISTORY];
    uint64_t win_n[HPA_HISTORY];
    int64_t rec_t[HPA_HISTORY];
    int rec[HPA_HISTORY];
    int nwin, nrec, hwin, hrec;
    int64_t next_sync;
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

/* Executors by state: up (ready), starting, pending. */
static void hpa_count(struct sim *s, int *up, int *starting, int *pending)
{
    *up = *starting = *pending = 0;
    for (int e = 0; e < sim_exec_count(s); e++) {
        const struct sim_exec *x = sim_exec(s, e);
        if (x->cpu)
            continue;
        *up += x->state == SIM_EXEC_UP;
        *starting += x->state == SIM_EXEC_STARTING;
        *pending += x->state == SIM_EXEC_PENDING;
    }
}

/* Removes n executors: pending first, then starting, then the newest up. */
static int hpa_remove(struct sim *s, int n)
{
    static const enum sim_exec_state order[] = {SIM_EXEC_PENDING, SIM_EXEC_STARTING, SIM_EXEC_UP};
    int done = 0;
    for (int k = 0; k < 3 && done < n; k++)
        for (int e = sim_exec_count(s) - 1; e >= 0 && done < n; e--)
            if (!sim_exec(s, e)->cpu && sim_exec(s, e)->state == order[k]) {
                sim_exec_remove(s, e);
                done++;
            }
    return done;
}

static void hpa_step(struct sim *s, const void *params, void *state)
{
    const struct policy_autoscale *a = params;
    struct state *st = state;
    const struct sim_window *w = sim_last_window(s);
    int64_t now = sim_now(s);
    st->win_t[st->hwin] = w->t1;        /* every window, synced or not */
    st->win_n[st->hwin] = w->offered;
    st->hwin = (st->hwin + 1) % HPA_HISTORY;
    st->nwin += st->nwin < HPA_HISTORY;
    if (now < st->next_sync)
        return;
    st->next_sync = now + sim_s_to_ns(a->sync_s);
    /* R: offered over the windows ending in (now - window_s, now] */
    int64_t from = now - sim_s_to_ns(a->window_s);
    uint64_t n = 0;
    int used = 0;
    for (int i = 0; i < st->nwin; i++, used++) {
        int k = (st->hwin - 1 - i + HPA_HISTORY) % HPA_HISTORY;
        if (st->win_t[k] <= from)
            break;
        n += st->win_n[k];
    }
    double span = used * (double)(w->t1 - w->t0) / 1e9;   /* windows are one period each */
    double r = span > 0 ? (double)n / span : 0;
    int up, starting, pending;
    hpa_count(s, &up, &starting, &pending);
    int current = up + starting + pending;
    int desired = current;
    if (!(up > 0 && fabs(r / (a->target_rps * up) - 1) <= a->tolerance))
        desired = (int)ceil(r / a->target_rps - 1e-9);
    int lo = a->min_gpus, hi = sim_world(s)->max_gpus;
    desired = desired < lo ? lo : desired > hi ? hi : desired;
    int cap = current < 4 ? 4 : 2 * current;   /* scale-up limit: max(4 pods, 100 %) */
    if (desired > cap)
        desired = cap;
    st->rec_t[st->hrec] = now;          /* stabilization: the largest of the window */
    st->rec[st->hrec] = desired;
    st->hrec = (st->hrec + 1) % HPA_HISTORY;
    st->nrec += st->nrec < HPA_HISTORY;
    int stable = desired;
    int64_t since = now - sim_s_to_ns(a->stabilization_s);
    for (int i = 0; i < st->nrec; i++) {
        int k = (st->hrec - 1 - i + HPA_HISTORY) % HPA_HISTORY;
        if (st->rec_t[k] < since)
            break;
        stable = st->rec[k] > stable ? st->rec[k] : stable;
    }
    sim_ts_add(s, "hpa.desired", -1, desired);
    int added = 0, removed = 0;
    if (desired > current)
        for (int i = current; i < desired && sim_exec_add(s) >= 0; i++)
            added++;
    else if (stable < current)
        removed = hpa_remove(s, current - stable);
    sim_ts_add(s, "autoscale.add", -1, added);
    sim_ts_add(s, "autoscale.remove", -1, removed);
}

const struct sim_autoscaler_ops autoscaler_hpa = {
    .name = "hpa",
    .summary = "Kubernetes' HPA on request rate: desired = ceil(R / target_rps), tolerance, "
               "stabilization of scale-down (DynamoML)",
    .state_size = sizeof(struct state),
    .step = hpa_step,
};

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
