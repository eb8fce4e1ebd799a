/* nexus_plan — the Nexus scheduler's planner (specs/nexus.md): profile math (B_max, residual
 * batches, calc_cycle), the backends' placement state (squishy bin packing: PrepareLoadModel,
 * FindBestBackend, allocation) and the epoch schedule (shrink and grow sessions, spill
 * overloaded backends, place what is unassigned, elastic executors), following nexuslb line
 * for line. Times are seconds (double), like the code's. The data path is nexus.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nexus_int.h"
#include "sim_err.h"

/* ---------------------------------------------------------------- profile math */

/* The profiler's l(b) in seconds: mean + one standard deviation of a batch's duration (the
 * table's value times 1 + its cv, which is 0 without a service distribution), times
 * profile_multiplier (pre/post are 0 for our profiles); lat_ns the same in ns. */
static double prof_s(const struct sim *s, int kind, double mult, int m, int b)
{
    double ns = (double)sim_latency_ns(s, m, kind, b) * (1 + sim_service_cv(s, m, kind, b));
    return ns * 1e-9 * mult;            /* (this order: the same doubles as before the sd) */
}

double nexus_lat_s(const struct sim *s, const struct nexus *st, int m, int b)
{
    return prof_s(s, st->kind, st->mult, m, b);
}

int64_t nexus_lat_ns(const struct sim *s, const struct nexus *st, int m, int b)
{
    double ns = (double)sim_latency_ns(s, m, st->kind, b) * (1 + sim_service_cv(s, m, st->kind, b));
    return sim_ns(ns * st->mult);
}

double nexus_slo_s(const struct sim *s, int m)
{
    return (double)sim_model(s, m)->slo_ns * 1e-9;
}

/* B_max = largest b with l(b) <= (SLO - NET) / 2 (at least 1), capped at the model's max. */
int nexus_bmax_of(const struct sim *s, double mult, int kind, int m)
{
    double budget = (nexus_slo_s(s, m) - NET_S) / 2;
    int b = 1, cap = sim_model(s, m)->max_batch;
    while (b < cap && prof_s(s, kind, mult, m, b + 1) <= budget)
        b++;
    return b;
}

static int ceil_eps(double x)
{
    double f = floor(x);
    if (x - f < CEIL_EPS && f > 0)
        return (int)f;
    return (int)ceil(x);
}

/* The instance of session m for rate w (saturated when w == 0 or w >= T_max); false if no
 * batch fits the SLO. */
bool nexus_inst_for(const struct sim *s, const struct nexus *st, int m, double w, struct inst *o)
{
    const struct session *se = &st->ss[m];
    memset(o, 0, sizeof *o);
    o->on = true;
    o->max_batch = se->bmax;
    if (w <= 0 || w >= se->bmax_tp) {
        o->batch = se->bmax;
        o->lat = nexus_lat_s(s, st, m, se->bmax);
        o->duty_max = o->lat;
        o->tp = se->bmax_tp;
        o->workload = se->bmax_tp;
        return true;
    }
    int b = 0;
    for (int c = 1; c <= se->bmax; c++)
        if ((c - 1) / w + nexus_lat_s(s, st, m, c) <= nexus_slo_s(s, m))
            b = c;
    if (b == 0)
        return false;
    o->batch = b;
    o->lat = nexus_lat_s(s, st, m, b);
    double d = nexus_slo_s(s, m) - o->lat;
    o->duty_max = d < b / w ? d : b / w;
    if (o->duty_max < o->lat) {
        /* the batch takes longer than the cycle the SLO leaves (lat(b) > SLO - lat(b): a
         * session whose smallest batch exceeds half its SLO, bmax_of's floor of 1): no cycle
         * holds it at this rate, so it gets the saturated instance, as at start-up, rather
         * than no backend at all */
        return nexus_inst_for(s, st, m, 0, o);
    }
    o->tp = b / o->duty_max;
    o->workload = w;
    return true;
}

/* calc_cycle over a set of instances: shrinks batches to ceil_eps(duty * w); returns the
 * occupancy and sets duty/exec/overload. */
static double calc_cycle(const struct sim *s, const struct nexus *st, struct inst *in, double *duty,
                         double *exec, bool *overload)
{
    double d = INFINITY;
    for (int m = 0; m < st->nm; m++)
        if (in[m].on && in[m].duty_max < d)
            d = in[m].duty_max;
    double ex = 0;
    bool ov = false;
    for (int m = 0; m < st->nm; m++) {
        if (!in[m].on)
            continue;
        int b = ceil_eps(d * in[m].workload);
        if (b < 1)
            b = 1;
        if (b > in[m].max_batch) {
            ov = true;
            b = in[m].max_batch;
        }
        in[m].batch = b;
        in[m].lat = nexus_lat_s(s, st, m, b);
        ex += in[m].lat;
    }
    if (ex > d)
        ov = true;
    *duty = d;
    *exec = ex;
    *overload = ov;
    return d > 0 && isfinite(d) ? ex / d : 0;
}

static void recycle(const struct sim *s, const struct nexus *st, struct backend *b)
{
    if (b->is_static)
        return;
    if (b->n == 0) {
        b->duty = b->exec = 0;
        b->overload = false;
        return;
    }
    calc_cycle(s, st, b->in, &b->duty, &b->exec, &b->overload);
}

double nexus_occupancy(const struct backend *b)
{
    return b->n && b->duty > 0 ? b->exec / b->duty : 0;
}

bool nexus_usable(const struct sim *s, int g)
{
    return sim_exec(s, g)->state == SIM_EXEC_UP;
}

/* PrepareLoadModel: the occupancy of g with session m at rate w added (and the instance it
 * would get), or a negative value when it does not fit. */
double nexus_prepare(const struct sim *s, struct nexus *st, int g, int m, double w, struct inst *out,
                      struct inst *scratch)
{
    struct backend *b = &st->bk[g];
    if (b->is_static || !nexus_usable(s, g) || nexus_occupancy(b) >= 1 || b->in[m].on)
        return -1;
    struct inst ni;
    if (!nexus_inst_for(s, st, m, w, &ni))
        return -1;
    memcpy(scratch, b->in, (size_t)st->nm * sizeof *scratch);
    if (b->n > 0 && ni.duty_max >= b->duty) {
        ni.batch = ceil_eps(b->duty * w);
        if (ni.batch < 1 || ni.batch > ni.max_batch)
            return -1;
        ni.lat = nexus_lat_s(s, st, m, ni.batch);
        ni.tp = ni.batch / b->duty;
    }
    scratch[m] = ni;
    double duty, exec;
    bool ov;
    double occ = calc_cycle(s, st, scratch, &duty, &exec, &ov);
    if (exec > duty)
        return -1;
    /* the new instance keeps the throughput computed above; its batch follows the cycle */
    ni.batch = scratch[m].batch;
    ni.lat = scratch[m].lat;
    *out = ni;
    return occ;
}

void nexus_place(const struct sim *s, struct nexus *st, int g, int m, const struct inst *ni)
{
    struct backend *b = &st->bk[g];
    b->in[m] = *ni;
    b->n++;
    recycle(s, st, b);
    st->ss[m].weights[g] = ni->tp;
}

void nexus_unload(const struct sim *s, struct nexus *st, int g, int m)
{
    struct backend *b = &st->bk[g];
    if (!b->in[m].on)
        return;
    b->in[m].on = false;
    b->n--;
    st->ss[m].weights[g] = 0;
    if (b->n == 0)
        b->idle_since = sim_now(s);
    recycle(s, st, b);
}

/* FindBestBackend: highest tp, or (for a residual that some GPU can absorb) best fit. */
int nexus_find_best(const struct sim *s, struct nexus *st, int m, double w, struct inst *out)
{
    int best_tp = -1, best_occ = -1;
    double btp = -1, bocc = -1;
    struct inst tp_i = {0}, occ_i = {0}, ni;
    struct inst *scratch = calloc((size_t)st->nm, sizeof *scratch);
    if (!scratch) {
        st->nomem = true;
        return -1;
    }
    for (int g = 0; g < st->nx; g++) {
        if (w == 0 && st->bk[g].n > 0)
            continue;
        double occ = nexus_prepare(s, st, g, m, w, &ni, scratch);
        if (occ < 0)
            continue;
        if (ni.tp > btp) {
            btp = ni.tp;
            best_tp = g;
            tp_i = ni;
        }
        if (occ > bocc) {
            bocc = occ;
            best_occ = g;
            occ_i = ni;
        }
    }
    free(scratch);
    if (best_tp < 0)
        return -1;
    if (w == 0 || btp < w) {
        *out = tp_i;
        return best_tp;
    }
    *out = occ_i;
    return best_occ;
}

/* Allocates rate `rem` of session m on new backends until covered or none fits. */
double nexus_allocate(const struct sim *s, struct nexus *st, int m, double rem)
{
    struct inst ni;
    while (rem > 1e-3) {
        int g = nexus_find_best(s, st, m, rem, &ni);
        if (g < 0)
            break;
        nexus_place(s, st, g, m, &ni);
        rem -= ni.tp;
    }
    return rem > 1e-3 ? rem : 0;
}

/* ---------------------------------------------------------------- epoch schedule */

double nexus_session_tp(const struct nexus *st, int m)
{
    double tp = 0;
    for (int g = 0; g < st->nx; g++)
        tp += st->ss[m].weights[g];
    return tp;
}

static double last_rps(const struct session *se)
{
    return se->hist[(se->hpos + HIST - 1) % HIST];
}

void nexus_epoch(struct sim *s, struct nexus *st)
{
    st->last_epoch = sim_now(s);
    int *spill = calloc((size_t)st->nx, sizeof *spill);
    struct inst *scratch = calloc((size_t)st->nm, sizeof *scratch);
    if (!spill || !scratch) {
        free(spill);
        free(scratch);
        sim_fail_nomem(s, "in the Nexus epoch");
        return;
    }
    /* 1. shrink or grow each session with a full history */
    for (int m = 0; m < st->nm; m++) {
        struct session *se = &st->ss[m];
        if (se->nhist < HIST || se->bmax == 0)
            continue;
        double est = fmax(last_rps(se), 0.1), tp = nexus_session_tp(st, m);
        se->unassigned = fmax(0, est - tp);
        int n = 0;
        for (int g = 0; g < st->nx; g++) {
            if (se->weights[g] <= 0)
                continue;
            if (st->bk[g].is_static)
                est -= se->weights[g];
            else
                st->idx[n++] = g;
        }
        for (int i = 1; i < n; i++)      /* by weight, descending (stable: ascending id) */
            for (int j = i; j > 0 && se->weights[st->idx[j]] > se->weights[st->idx[j - 1]]; j--) {
                int t = st->idx[j];
                st->idx[j] = st->idx[j - 1];
                st->idx[j - 1] = t;
            }
        bool shrink = est < 0.97 * tp, grow = est > tp;
        if (!shrink && !grow)
            continue;
        for (int i = 0; i < n; i++) {
            int g = st->idx[i];
            double w = se->weights[g];
            if (est < 1e-3) {
                nexus_unload(s, st, g, m);
                continue;
            }
            if (shrink && w <= est) {
                est -= w;
                continue;
            }
            struct inst ni;
            if (!nexus_inst_for(s, st, m, est, &ni)) {
                nexus_unload(s, st, g, m);
                continue;
            }
            st->bk[g].in[m] = ni;
            recycle(s, st, &st->bk[g]);
            se->weights[g] = ni.tp;
            est -= ni.tp;
            if (grow && st->bk[g].overload && nexus_occupancy(&st->bk[g]) > 1.05)
                spill[g] = 1;
        }
        if (grow)
            se->unassigned = est > 1e-3 ? est : 0;
    }
    /* 2. spill overloaded backends: re-place their instances, longest batch first */
    for (int g = 0; g < st->nx; g++) {
        if (!spill[g])
            continue;
        struct backend *b = &st->bk[g];
        int n = 0;
        struct inst *old = malloc((size_t)st->nm * sizeof *old);
        if (!old) {
            sim_fail_nomem(s, "in the Nexus epoch");
            break;
        }
        memcpy(old, b->in, (size_t)st->nm * sizeof *old);
        for (int m = 0; m < st->nm; m++)
            if (old[m].on)
                st->idx[n++] = m;
        for (int i = 1; i < n; i++)      /* insertion sort by l(batch) descending */
            for (int j = i; j > 0 && old[st->idx[j]].lat > old[st->idx[j - 1]].lat; j--) {
                int t = st->idx[j];
                st->idx[j] = st->idx[j - 1];
                st->idx[j - 1] = t;
            }
        for (int i = 0; i < n; i++) {
            b->in[st->idx[i]].on = false;
            st->ss[st->idx[i]].weights[g] = 0;
        }
        b->n = 0;
        recycle(s, st, b);
        for (int i = 0; i < n; i++) {
            int m = st->idx[i];
            struct inst ni;
            if (nexus_prepare(s, st, g, m, old[m].workload, &ni, scratch) >= 0)
                nexus_place(s, st, g, m, &ni);
            else
                st->ss[m].unassigned += old[m].workload;
        }
        if (b->n == 0)
            b->idle_since = sim_now(s);
        free(old);
    }
    /* 4. allocate unassigned work, largest first */
    for (;;) {
        int best = -1;
        for (int m = 0; m < st->nm; m++)
            if (st->ss[m].unassigned > 1e-3 &&
                (best < 0 || st->ss[m].unassigned > st->ss[best].unassigned))
                best = m;
        if (best < 0)
            break;
        double rest = nexus_allocate(s, st, best, st->ss[best].unassigned);
        st->ss[best].unassigned = 0;    /* what is left is not covered this epoch */
        if (rest > 0 && st->elastic && st->ss[best].bmax_tp > 0)
            st->pending_adds += (int)ceil(rest / st->ss[best].bmax_tp);
    }
    /* elastic: grow by what is uncovered; release executors idle for a whole epoch */
    if (st->elastic) {
        for (; st->pending_adds > 0; st->pending_adds--)
            if (sim_exec_add(s) < 0)
                break;
        st->pending_adds = 0;
        for (int g = 0; g < st->nx; g++) {
            const struct backend *b = &st->bk[g];
            if (nexus_usable(s, g) && b->n == 0 && !b->is_static &&
                sim_now(s) - b->idle_since >= st->epoch_ns && !b->busy)
                sim_exec_remove(s, g);
        }
    }
    free(spill);
    free(scratch);
    nexus_publish(s, st);
}
