/* clockwork_load — Clockwork's load tracker and its LOAD / EVICT decisions (specs/clockwork.md,
 * "LOAD / EVICT"; malixian/clockwork load_tracker.cpp): a model's events mark it stale, a
 * decision spreads each stale model's exec demand over its holders and takes its load
 * priority, and schedule_load picks what a GPU loads and what it evicts for it. The sets of
 * GPUs a load check visits live here too. Scheduling of INFERs is clockwork.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clockwork_int.h"
#include "sim_err.h"
#include "sim_grow.h"

/* ---------------------------------------------------------------- load tracker */

static double req_exec_demand(const struct clockwork *st, int m)
{
    return (double)est_of(st, m, 1) * (double)st->default_slo / (double)st->ms[m].exec_slo / 1e6;
}

/* W_m: load demand of m's queued requests still before their load deadline. */
static double load_demand(const struct sim *s, const struct clockwork *st, int m)
{
    int n = sim_queue_len(s, m);        /* from the first whose load deadline is after now: */
    int lo = cw_first_after(s, st, m, 0, n, st->ms[m].weights_slo, sim_now(s));
    double w = (double)est_of(st, m, 1) * (double)st->default_slo / (double)st->ms[m].weights_slo / 1e6;
    return w * (n - lo);
}

static double exec_demand(const struct sim *s, const struct clockwork *st, int m)
{
    return req_exec_demand(st, m) * (sim_queue_len(s, m) + st->ms[m].inflight);
}

/* m changed (a request came, left or was sent, a holder came or went): the next load
 * decision spreads it again. */
void cw_touch(struct clockwork *st, int m)
{
    if (!st->ms[m].stale) {
        st->ms[m].stale = true;
        st->stale[st->nstale++] = m;
    }
}

/* E_m spread over the GPUs holding m in proportion to their weights w_g: the previous shares
 * leave O_g, the new ones come in, and each holder's weight becomes C / O_g (the released
 * controller's distributeLoad). */
static void spread(const struct sim *s, struct clockwork *st, int m)
{
    struct model *md = &st->ms[m];
    double C = (double)st->default_slo / 1e6, E = exec_demand(s, st, m), sw = 0;
    for (int i = 0; i < md->held_by; i++) {
        st->gs[md->hold[i]].O -= md->alloc[i];
        md->alloc[i] = 0;
        sw += st->gs[md->hold[i]].wt;
    }
    for (int i = 0; i < md->held_by; i++) {
        struct gpu *h = &st->gs[md->hold[i]];
        md->alloc[i] = E * (h->wt / sw);
        h->O += md->alloc[i];
        h->wt = C / h->O;
    }
}

/* Brings the stale models up to date: spread, then the share of load demand their holders
 * absorb, sum over g' holding m of C * (w_g' / sum w) / O_g' (the released controller's
 * updatePriority, with the weights of this moment). */
static void refresh(const struct sim *s, struct clockwork *st)
{
    double C = (double)st->default_slo / 1e6;
    for (int i = 0; i < st->nstale; i++)
        spread(s, st, st->stale[i]);
    for (int i = 0; i < st->nstale; i++) {
        struct model *md = &st->ms[st->stale[i]];
        double sw = 0, a = 0;
        for (int k = 0; k < md->held_by; k++)
            sw += st->gs[md->hold[k]].wt;
        for (int k = 0; k < md->held_by; k++)
            a += C * (st->gs[md->hold[k]].wt / sw) / st->gs[md->hold[k]].O;
        md->absorb = a;
        md->stale = false;
    }
    st->nstale = 0;
}

/* A candidate of load_choice/evict_choice on g: its priority, whether it is empty (no exec
 * and no load demand) and last_used, each computed once a decision. */
struct cand {
    double p;
    bool empty;
    uint64_t used;
};

/* m as a candidate on g. Its load priority: where m is not on g, the load demand its holders
 * do not absorb, W_m - sum over g' holding m of C * (W_m * w_g' / sum w) / O_g'; where it
 * is, last_used. */
static struct cand cand_of(const struct sim *s, const struct clockwork *st, int m, int g)
{
    double W = load_demand(s, st, m);
    struct cand c = {.empty = exec_demand(s, st, m) == 0 && W == 0, .used = *used_at(st, m, g)};
    c.p = *on_at(st, m, g) ? (double)c.used : W - W * st->ms[m].absorb;   /* load_prio */
    return c;
}

/* Order of load_choice/evict_choice: non-empty before empty, prio desc, last_used desc.
 * Returns true if (a before b). */
static bool before(const struct cand *a, const struct cand *b)
{
    if (a->empty != b->empty)
        return !a->empty;
    if (a->p != b->p)
        return a->p > b->p;
    return a->used > b->used;
}

/* Room for one more holder of m (SIM_ENOMEM: none, nothing changed). */
int cw_hold_reserve(struct clockwork *st, int m)
{
    struct model *md = &st->ms[m];
    int ch = md->caphold, ca = md->caphold;
    if (sim_grow(&md->hold, &ch, md->held_by + 1, sizeof *md->hold, 8) ||
        sim_grow(&md->alloc, &ca, md->held_by + 1, sizeof *md->alloc, 8))
        return SIM_ENOMEM;
    md->caphold = ch;
    return 0;
}

/* g takes m (loading): it joins m's holders with no share yet. SIM_ENOMEM: nothing done. */
int cw_hold_add(struct clockwork *st, int m, int g)
{
    struct model *md = &st->ms[m];
    if (cw_hold_reserve(st, m))
        return SIM_ENOMEM;
    md->hold[md->held_by] = g;
    md->alloc[md->held_by++] = 0;
    st->gs[g].held++;
    cw_set_on(st, m, g, 1);
    return 0;
}

/* g lets go of m (evicted, failed load, removed GPU): its share leaves O_g. */
void cw_hold_del(struct clockwork *st, int m, int g)
{
    struct model *md = &st->ms[m];
    int i = 0;
    while (md->hold[i] != g)
        i++;
    st->gs[g].O -= md->alloc[i];
    md->held_by--;
    memmove(md->hold + i, md->hold + i + 1, (size_t)(md->held_by - i) * sizeof *md->hold);
    memmove(md->alloc + i, md->alloc + i + 1, (size_t)(md->held_by - i) * sizeof *md->alloc);
    st->gs[g].held--;
    cw_set_on(st, m, g, 0);
    cw_touch(st, m);
}

/* g's membership of the load check's set, after its state, models, loads or PCIe window
 * changed. A shut window stays shut until its timer or a load result: with a fixed tracker
 * it opens at the timer's instant, and once the lag rule holds its state no longer moves
 * with time (a visit would only push the timer back). */
void cw_could(const struct sim *s, struct clockwork *st, int g)
{
    const struct gpu *gp = &st->gs[g];
    sim_bits_put(&st->could, g, sim_exec(s, g)->state == SIM_EXEC_UP && gp->held < st->nm &&
                                    (st->infer5 || gp->loads < 2) && !gp->pcie_shut);
}

void cw_schedule_load(struct sim *s, struct clockwork *st, int g)
{
    struct gpu *gp = &st->gs[g];
    int64_t now = sim_now(s);
    if (sim_exec(s, g)->state != SIM_EXEC_UP || gp->held == st->nm ||
        now < gp->last_load + LOAD_SPACING_NS || (!st->infer5 && gp->loads >= 2))
        return;
    int64_t pcie_at = cw_tr_available(&gp->pcie, now);
    if (pcie_at >= now + st->ahead) {
        if (!gp->pcie_timer || gp->pcie_at != pcie_at - st->ahead + 1) {
            gp->pcie_at = pcie_at - st->ahead + 1;
            gp->pcie_timer = sim_timer_rearm(s, gp->pcie_timer, gp->pcie_at, TAG_PCIE,
                                             (void *)(intptr_t)g);
        }
        gp->pcie_shut = true;
        cw_could(s, st, g);
        return;
    }
    if (gp->pcie_shut) {
        gp->pcie_shut = false;
        cw_could(s, st, g);
    }
    gp->last_load = now;
    bool any = false;                   /* a model not on g with pending demand? */
    for (int m = 0; m < st->nm && !any; m++)
        any = !*on_at(st, m, g) && sim_queue_len(s, m) + st->ms[m].inflight > 0;
    if (!any)
        return;
    refresh(s, st);
    int best = -1;
    struct cand bc = {0};
    for (int m = 0; m < st->nm; m++) {
        if (*on_at(st, m, g))
            continue;
        struct cand c = cand_of(s, st, m, g);
        if (best < 0 || before(&c, &bc)) {
            best = m;
            bc = c;
        }
    }
    if (best < 0 || bc.empty || (st->skip_satisfied && bc.p <= 0))
        return;
    int m = best;
    /* evict least recently used models (without demand first) until m fits */
    const struct sim_exec *x = sim_exec(s, g);
    while (x->pages_total - x->pages_used < sim_model_pages(s, m)) {
        int v = -1;
        struct cand vc = {0};
        for (int k = 0; k < st->nm; k++) {
            if (*on_at(st, k, g) != 2)
                continue;
            struct cand c = cand_of(s, st, k, g);
            if (v < 0 || before(&vc, &c)) {
                v = k;
                vc = c;
            }
        }
        if (v < 0)
            return;                     /* nothing evictable: the load fails */
        sim_evict(s, g, v);
        cw_hold_del(st, v, g);
        cw_could(s, st, g);
    }
    int64_t latest = max64(now + FUTURE_NS + st->ahead, pcie_at + st->ahead);
    if (cw_hold_reserve(st, m)) {       /* before the load, so that taking it cannot fail */
        sim_fail_nomem(s, "growing Clockwork's holders of a model");
        return;
    }
    if (sim_load(s, g, m, latest) != 0)
        return;
    cw_hold_add(st, m, g);
    *used_at(st, m, g) = ++st->seq;
    gp->loads++;
    cw_could(s, st, g);
    if (cw_tr_add(&gp->pcie, now, st->ms[m].weights.value, pcie_at))
        sim_fail_nomem(s, "growing a Clockwork tracker");
}

/* The load check after an arrival of m: only a model some GPU lacks can start a load, and
 * only on a GPU of the set `could` (schedule_load returns at once on the others). */
void cw_load_check(struct sim *s, struct clockwork *st, int m)
{
    if (st->ms[m].held_by == st->ng)
        return;
    for (int g = sim_bits_next(&st->could, 0); g >= 0; g = sim_bits_next(&st->could, g + 1))
        cw_schedule_load(s, st, g);
}
