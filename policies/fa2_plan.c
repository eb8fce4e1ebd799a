/* fa2_plan — FA2's graph transformation and dynamic program, the exact optimum (GLPK MILP
 * and enumeration) and the GrandSLAm-, InferLine- and DS2-like baselines (see fa2_plan.h). */
#include "fa2_plan.h"

#include <float.h>
#include <glpk.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SLA_EPS 1e-6                    /* ms: latency sums may round above the SLA */

static int imin(int x, int y)
{
    return x < y ? x : y;
}

double fa2_d(const struct fa2_problem *p, int s, int b)
{
    return p->a[s] * b * b + p->b1[s] * b + p->c[s];
}

void fa2_rates(const struct fa2_problem *p, double lambda[FA2_MAX_DNN])
{
    for (int s = 0; s < p->ndnn; s++)
        lambda[s] = p->extra_rps[s];
    for (int q = 0; q < p->npaths; q++)
        for (int i = 0; i < p->paths[q].nstages; i++)
            lambda[p->paths[q].stages[i]] += p->paths[q].rate_rps;
}

double fa2_latency(const struct fa2_problem *p, int s, int b, double lambda)
{
    if (b > 1 && !(lambda > 0))
        return INFINITY;
    return fa2_d(p, s, b) + (b > 1 ? 1000.0 * (b - 1) / lambda : 0.0);
}

int fa2_instances(const struct fa2_problem *p, int s, int b, double lambda)
{
    double h = 1000.0 * b / fa2_d(p, s, b);          /* requests/s of one instance */
    double n = ceil(lambda / h - 1e-9);
    return n < 1 ? 1 : (int)n;
}

/* DNN s's term of the objective at batch b: its instances + delta * b. */
static double term(const struct fa2_problem *p, int s, int b, double lambda)
{
    return fa2_instances(p, s, b, lambda) + p->delta * b;
}

void fa2_plan_eval(const struct fa2_problem *p, struct fa2_plan *plan)
{
    double lambda[FA2_MAX_DNN];
    fa2_rates(p, lambda);
    plan->instances = 0;
    plan->cost = 0;
    for (int s = 0; s < p->ndnn; s++) {
        plan->n[s] = fa2_instances(p, s, plan->b[s], lambda[s]);
        plan->instances += plan->n[s];
        plan->cost += term(p, s, plan->b[s], lambda[s]);
    }
    plan->feasible = true;
    for (int q = 0; q < p->npaths; q++) {
        double l = 0;
        for (int i = 0; i < p->paths[q].nstages; i++) {
            int s = p->paths[q].stages[i];
            l += fa2_latency(p, s, plan->b[s], lambda[s]);
        }
        if (!(l <= p->paths[q].sla_ms + SLA_EPS))
            plan->feasible = false;
    }
}

static void plan_batch1(const struct fa2_problem *p, struct fa2_plan *out)
{
    memset(out, 0, sizeof *out);
    for (int s = 0; s < p->ndnn; s++)
        out->b[s] = 1;
    fa2_plan_eval(p, out);
}

static bool problem_ok(const struct fa2_problem *p)
{
    if (p->ndnn < 1 || p->ndnn > FA2_MAX_DNN || p->npaths < 1 || p->npaths > FA2_MAX_PATHS ||
        p->bmax < 1 || p->bmax > FA2_MAX_BATCH)
        return false;
    for (int q = 0; q < p->npaths; q++)
        if (p->paths[q].nstages < 1 || p->paths[q].nstages > FA2_MAX_STAGES)
            return false;
    return true;
}

/* ---------------------------------------------------------------- transformation */

/* Segments containing edge u -> v (consecutive stages inside the segment). */
static int edge_uses(const struct fa2_problem *p, const struct fa2_graph *g, int u, int v)
{
    int n = 0;
    for (int k = 0; k < g->nseg; k++) {
        const struct fa2_segment *sg = &g->seg[k];
        const int *st = p->paths[sg->path].stages;
        for (int i = sg->first; i < sg->last; i++)
            n += st[i] == u && st[i + 1] == v;
    }
    return n;
}

static double seg_intensity(const struct fa2_problem *p, const struct fa2_graph *g, int path,
                            int first, int last)
{
    double x = 0;
    for (int i = first; i <= last; i++)
        x += g->intensity[p->paths[path].stages[i]];
    return x;
}

int fa2_transform(const struct fa2_problem *p, struct fa2_graph *g)
{
    memset(g, 0, sizeof *g);
    if (!problem_ok(p))
        return -1;
    for (int s = 0; s < p->ndnn; s++) {
        for (int b = 1; b <= 16; b++)
            g->intensity[s] += fa2_d(p, s, b) / 16.0;
    }
    for (int q = 0; q < p->npaths; q++)
        g->seg[g->nseg++] = (struct fa2_segment){q, 0, p->paths[q].nstages - 1, p->paths[q].sla_ms};
    for (;;) {
        /* an ingress aggregator: a DNN with incoming edges from two or more DNNs */
        int v_cut = -1, u_cut = -1, best = 0;
        for (int v = 0; v < p->ndnn && v_cut < 0; v++) {
            int preds = 0;
            for (int u = 0; u < p->ndnn; u++)
                preds += edge_uses(p, g, u, v) > 0;
            if (preds < 2)
                continue;
            for (int u = 0; u < p->ndnn; u++) {     /* its edge of lowest sharing degree */
                int d = edge_uses(p, g, u, v);
                if (d > 0 && (u_cut < 0 || d < best))
                    u_cut = u, best = d;
            }
            v_cut = v;
        }
        if (v_cut < 0)
            break;
        /* split every segment through u_cut -> v_cut; SLAs in proportion to intensity */
        int nseg = g->nseg;
        for (int k = 0; k < nseg; k++) {
            struct fa2_segment *sg = &g->seg[k];
            const int *st = p->paths[sg->path].stages;
            for (int i = sg->first; i < sg->last; i++) {
                if (st[i] != u_cut || st[i + 1] != v_cut)
                    continue;
                if (g->nseg == (int)(sizeof g->seg / sizeof g->seg[0]))
                    return -1;
                double whole = seg_intensity(p, g, sg->path, sg->first, sg->last);
                double head = seg_intensity(p, g, sg->path, sg->first, i);
                double sla1 = whole > 0 ? sg->sla_ms * head / whole : sg->sla_ms / 2;
                g->seg[g->nseg++] = (struct fa2_segment){sg->path, i + 1, sg->last,
                                                         sg->sla_ms - sla1};
                sg->last = i;
                sg->sla_ms = sla1;
                break;
            }
        }
        g->cuts++;
    }
    for (int v = 0; v < p->ndnn; v++) {
        g->parent[v] = -1;
        for (int u = 0; u < p->ndnn; u++)
            if (edge_uses(p, g, u, v) > 0)
                g->parent[v] = u;
    }
    /* a cycle leaves some DNN without a path to a root */
    for (int v = 0; v < p->ndnn; v++) {
        int x = v, steps = 0;
        while (x >= 0 && steps <= p->ndnn)
            x = g->parent[x], steps++;
        if (x >= 0)
            return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- FA2's DP */

int fa2_plan_dp(const struct fa2_problem *p, struct fa2_plan *out)
{
    struct fa2_graph g;
    if (fa2_transform(p, &g))
        return -1;
    int n = p->ndnn;
    double lambda[FA2_MAX_DNN], tmax = 0;
    fa2_rates(p, lambda);
    for (int q = 0; q < p->npaths; q++)
        tmax = fmax(tmax, p->paths[q].sla_ms);
    int T = (int)floor(tmax + SLA_EPS);
    /* Budgets. Segments that started at the same DNN have spent the same time when they reach
     * s (the forest has one route between two DNNs), so what they have left differs by their
     * SLAs alone. The DP's state at s is t, the least time left to the segments through s that
     * started at an ancestor of s; those starting at s have their SLA left, a constant. Child
     * m of s gets, from the ancestors' segments going on to m, t - l_s(b) + off[m]: off[m] =
     * least SLA through the edge s->m minus least SLA through s, per start (exact when one
     * ancestor's segments are live at s; the least over starts otherwise, which never
     * overstates a budget), and from s's own segments going on to m, own[m] - l_s(b). So a
     * segment that ends at s, or turns to another child, does not limit m. cap[s]: the least
     * SLA of the segments starting at s. Slots are whole ms rounded down; NONE: no such
     * segment. */
    enum { NONE = INT32_MAX };
    double sla_at[FA2_MAX_DNN][FA2_MAX_DNN], sla_in[FA2_MAX_DNN][FA2_MAX_DNN];  /* [s][start] */
    int cap[FA2_MAX_DNN], own[FA2_MAX_DNN], off[FA2_MAX_DNN];
    for (int s = 0; s < n; s++)
        for (int a = 0; a < n; a++)
            sla_at[s][a] = sla_in[s][a] = INFINITY;
    for (int k = 0; k < g.nseg; k++) {
        const struct fa2_segment *sg = &g.seg[k];
        const int *st = p->paths[sg->path].stages;
        int a = st[sg->first];
        for (int i = sg->first; i <= sg->last; i++) {
            sla_at[st[i]][a] = fmin(sla_at[st[i]][a], sg->sla_ms);
            if (i > sg->first)      /* through the edge st[i-1] -> st[i] */
                sla_in[st[i]][a] = fmin(sla_in[st[i]][a], sg->sla_ms);
        }
    }
#define SLOTS(ms) (isfinite(ms) ? (int)floor((ms) + SLA_EPS) : NONE)
    for (int m = 0; m < n; m++) {
        int s = g.parent[m];
        double o = INFINITY;
        for (int a = 0; s >= 0 && a < n; a++)
            if (a != s && isfinite(sla_in[m][a]))
                o = fmin(o, sla_in[m][a] - sla_at[s][a]);
        cap[m] = SLOTS(sla_at[m][m]);
        own[m] = s >= 0 ? SLOTS(sla_in[m][s]) : NONE;
        off[m] = SLOTS(o);
    }
#undef SLOTS
    /* per (s, b): the latency in slots (rounded up, so DP plans keep their SLAs) and cost */
    int slots[FA2_MAX_DNN][FA2_MAX_BATCH + 1];
    double cost[FA2_MAX_DNN][FA2_MAX_BATCH + 1];
    for (int s = 0; s < n; s++)
        for (int b = 1; b <= p->bmax; b++) {
            double l = fa2_latency(p, s, b, lambda[s]);
            slots[s][b] = isfinite(l) && l <= T ? (int)ceil(l - 1e-9) : INT32_MAX;
            cost[s][b] = term(p, s, b, lambda[s]);
        }
    /* the forest's children, and parents before children: depth order */
    int kids[FA2_MAX_DNN][FA2_MAX_DNN], nkids[FA2_MAX_DNN] = {0};
    int order[FA2_MAX_DNN], depth[FA2_MAX_DNN], no = 0;
    for (int s = 0; s < n; s++) {
        depth[s] = 0;
        for (int x = g.parent[s]; x >= 0; x = g.parent[x])
            depth[s]++;
        if (g.parent[s] >= 0)
            kids[g.parent[s]][nkids[g.parent[s]]++] = s;
    }
    for (int d = 0; no < n; d++)
        for (int s = 0; s < n; s++)
            if (depth[s] == d)
                order[no++] = s;
    size_t cells = (size_t)n * (size_t)(T + 1);
    double *opt = malloc(cells * sizeof *opt);
    unsigned char *pick = malloc(cells);
    if (!opt || !pick) {
        free(opt);
        free(pick);
        return -1;
    }
#define OPT(s, t) opt[(size_t)(s) * (size_t)(T + 1) + (size_t)(t)]
#define PICK(s, t) pick[(size_t)(s) * (size_t)(T + 1) + (size_t)(t)]
/* the budget of child m when its parent had t and took l slots */
#define BUDGET(m, t, l) imin(T, imin(off[m] == NONE ? T : (t) - (l) + off[m], \
                                     own[m] == NONE ? T : own[m] - (l)))
    for (int k = n - 1; k >= 0; k--) {          /* children before parents */
        int s = order[k];
        for (int t = 0; t <= T; t++) {
            double best = INFINITY;
            int bb = 0;
            for (int b = 1; b <= p->bmax; b++) {
                /* a DNN on no path keeps batch 1 whatever its latency */
                if (!(lambda[s] > 0) ? b > 1 : slots[s][b] > t || slots[s][b] > cap[s])
                    continue;
                double v = cost[s][b];
                for (int i = 0; i < nkids[s] && isfinite(v); i++) {
                    int m = kids[s][i], tm = BUDGET(m, t, slots[s][b]);
                    v += tm < 0 ? INFINITY : OPT(m, tm);
                }
                if (v < best - 1e-12)
                    best = v, bb = b;
            }
            OPT(s, t) = best;
            PICK(s, t) = (unsigned char)bb;
        }
    }
    /* the artificial root: every root DNN with no ancestor's segment to serve */
    memset(out, 0, sizeof *out);
    bool ok = true;
    int stack_s[FA2_MAX_DNN], stack_t[FA2_MAX_DNN], sp = 0;
    for (int s = 0; s < n; s++)
        if (g.parent[s] < 0) {
            ok &= isfinite(OPT(s, T));
            stack_s[sp] = s, stack_t[sp++] = T;
        }
    while (ok && sp > 0) {                      /* backtrack (n, b) from the picks */
        int s = stack_s[--sp], t = stack_t[sp];
        int b = PICK(s, t);
        out->b[s] = b;
        for (int i = 0; i < nkids[s]; i++) {
            int m = kids[s][i];
            stack_s[sp] = m, stack_t[sp++] = BUDGET(m, t, slots[s][b]);
        }
    }
#undef OPT
#undef PICK
#undef BUDGET
    free(opt);
    free(pick);
    if (!ok) {
        plan_batch1(p, out);
        out->feasible = false;
        return 0;
    }
    fa2_plan_eval(p, out);
    return 0;
}

/* ---------------------------------------------------------------- exact optimum */

int fa2_plan_milp(const struct fa2_problem *p, struct fa2_plan *out)
{
    if (!problem_ok(p))
        return -1;
    double lambda[FA2_MAX_DNN];
    fa2_rates(p, lambda);
    int n = p->ndnn, B = p->bmax, ncols = 0;
    int col[FA2_MAX_DNN][FA2_MAX_BATCH + 1];
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MIN);
    glp_add_rows(lp, n + p->npaths);
    for (int s = 0; s < n; s++)
        glp_set_row_bnds(lp, s + 1, GLP_FX, 1.0, 1.0);          /* one batch size each */
    for (int q = 0; q < p->npaths; q++)
        glp_set_row_bnds(lp, n + q + 1, GLP_UP, 0.0, p->paths[q].sla_ms);
    for (int s = 0; s < n; s++)
        for (int b = 1; b <= B; b++) {
            col[s][b] = 0;
            if (!isfinite(fa2_latency(p, s, b, lambda[s])))
                continue;
            col[s][b] = ++ncols;
            glp_add_cols(lp, 1);
            glp_set_col_kind(lp, ncols, GLP_BV);
            glp_set_obj_coef(lp, ncols, term(p, s, b, lambda[s]));
        }
    size_t cap = (size_t)ncols * (size_t)(1 + p->npaths) + 1;
    int *ia = malloc(cap * sizeof *ia), *ja = malloc(cap * sizeof *ja);
    double *ar = malloc(cap * sizeof *ar);
    int nz = 0, rc = -1;
    if (!ia || !ja || !ar)
        goto out;
    for (int s = 0; s < n; s++)
        for (int b = 1; b <= B; b++) {
            if (!col[s][b])
                continue;
            ++nz, ia[nz] = s + 1, ja[nz] = col[s][b], ar[nz] = 1.0;
            double l = fa2_latency(p, s, b, lambda[s]);
            for (int q = 0; q < p->npaths; q++) {
                int on = 0;
                for (int i = 0; i < p->paths[q].nstages; i++)
                    on += p->paths[q].stages[i] == s;
                if (on)
                    ++nz, ia[nz] = n + q + 1, ja[nz] = col[s][b], ar[nz] = l * on;
            }
        }
    glp_load_matrix(lp, nz, ia, ja, ar);
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.presolve = GLP_ON;
    parm.msg_lev = GLP_MSG_OFF;
    int ret = glp_intopt(lp, &parm);
    int st = ret == 0 ? glp_mip_status(lp) : GLP_UNDEF;
    if (ret == 0 && st == GLP_OPT) {
        memset(out, 0, sizeof *out);
        for (int s = 0; s < n; s++)
            for (int b = 1; b <= B; b++)
                if (col[s][b] && glp_mip_col_val(lp, col[s][b]) > 0.5)
                    out->b[s] = b;
        fa2_plan_eval(p, out);
        rc = 0;
    } else if (ret == GLP_ENOPFS || st == GLP_NOFEAS) {
        plan_batch1(p, out);
        out->feasible = false;
        rc = 0;
    }
out:
    free(ia);
    free(ja);
    free(ar);
    glp_delete_prob(lp);
    return rc;
}

struct enum_ctx {
    const struct fa2_problem *p;
    double lambda[FA2_MAX_DNN];
    double lat[FA2_MAX_DNN][FA2_MAX_BATCH + 1], cost[FA2_MAX_DNN][FA2_MAX_BATCH + 1];
    double min_rest[FA2_MAX_DNN + 1];          /* lowest cost of DNNs s.. */
    double used[FA2_MAX_PATHS];                /* latency so far on each path */
    int mult[FA2_MAX_PATHS][FA2_MAX_DNN];      /* times DNN s is on path q */
    int b[FA2_MAX_DNN];
    double best;
    int best_b[FA2_MAX_DNN];
};

static void enum_rec(struct enum_ctx *x, int s, double cost)
{
    const struct fa2_problem *p = x->p;
    if (cost + x->min_rest[s] >= x->best - 1e-12)
        return;
    if (s == p->ndnn) {
        x->best = cost;
        memcpy(x->best_b, x->b, sizeof x->b);
        return;
    }
    for (int b = 1; b <= p->bmax; b++) {
        double l = x->lat[s][b];
        if (!isfinite(l))
            continue;
        bool ok = true;
        for (int q = 0; q < p->npaths && ok; q++)
            ok = x->used[q] + x->mult[q][s] * l <= p->paths[q].sla_ms + SLA_EPS;
        if (!ok)
            continue;
        for (int q = 0; q < p->npaths; q++)
            x->used[q] += x->mult[q][s] * l;
        x->b[s] = b;
        enum_rec(x, s + 1, cost + x->cost[s][b]);
        for (int q = 0; q < p->npaths; q++)
            x->used[q] -= x->mult[q][s] * l;
    }
}

int fa2_plan_exhaustive(const struct fa2_problem *p, struct fa2_plan *out)
{
    if (!problem_ok(p))
        return -1;
    struct enum_ctx *x = calloc(1, sizeof *x);
    if (!x)
        return -1;
    x->p = p;
    fa2_rates(p, x->lambda);
    for (int s = 0; s < p->ndnn; s++) {
        double lo = INFINITY;
        for (int b = 1; b <= p->bmax; b++) {
            x->lat[s][b] = fa2_latency(p, s, b, x->lambda[s]);
            x->cost[s][b] = term(p, s, b, x->lambda[s]);
            if (isfinite(x->lat[s][b]))
                lo = fmin(lo, x->cost[s][b]);
        }
        x->min_rest[s] = lo;
    }
    x->min_rest[p->ndnn] = 0;
    for (int s = p->ndnn - 1; s >= 0; s--)
        x->min_rest[s] += x->min_rest[s + 1];
    for (int q = 0; q < p->npaths; q++)
        for (int i = 0; i < p->paths[q].nstages; i++)
            x->mult[q][p->paths[q].stages[i]]++;
    x->best = INFINITY;
    enum_rec(x, 0, 0);
    if (isfinite(x->best)) {
        memset(out, 0, sizeof *out);
        memcpy(out->b, x->best_b, sizeof out->b);
        fa2_plan_eval(p, out);
    } else {
        plan_batch1(p, out);
        out->feasible = false;
    }
    free(x);
    return 0;
}

/* ---------------------------------------------------------------- baselines */

/* GrandSLAm-like: each path's SLA split over its DNNs in proportion to their batch-1
 * processing time; a DNN takes the tightest share of the paths through it and the largest
 * batch whose time fits it. */
int fa2_plan_grandslam(const struct fa2_problem *p, struct fa2_plan *out)
{
    if (!problem_ok(p))
        return -1;
    double lambda[FA2_MAX_DNN], budget[FA2_MAX_DNN];
    fa2_rates(p, lambda);
    for (int s = 0; s < p->ndnn; s++)
        budget[s] = INFINITY;
    for (int q = 0; q < p->npaths; q++) {
        double sum = 0;
        for (int i = 0; i < p->paths[q].nstages; i++)
            sum += fa2_d(p, p->paths[q].stages[i], 1);
        for (int i = 0; i < p->paths[q].nstages; i++) {
            int s = p->paths[q].stages[i];
            budget[s] = fmin(budget[s], p->paths[q].sla_ms * fa2_d(p, s, 1) / sum);
        }
    }
    memset(out, 0, sizeof *out);
    for (int s = 0; s < p->ndnn; s++) {
        out->b[s] = 1;
        for (int b = 2; b <= p->bmax; b++)
            if (fa2_latency(p, s, b, lambda[s]) <= budget[s] + SLA_EPS)
                out->b[s] = b;
    }
    fa2_plan_eval(p, out);
    return 0;
}

/* InferLine-like: from batch 1 everywhere, repeatedly raise the batch of the DNN whose
 * throughput per instance gains most, while every path SLA still holds; instances follow
 * the final batches. It looks at one DNN at a time, never at what a path could save. */
int fa2_plan_inferline(const struct fa2_problem *p, struct fa2_plan *out)
{
    if (!problem_ok(p))
        return -1;
    plan_batch1(p, out);
    for (;;) {
        int best = -1;
        double gain = 1.0;
        for (int s = 0; s < p->ndnn; s++) {
            int b = out->b[s];
            if (b >= p->bmax)
                continue;
            struct fa2_plan t = *out;
            t.b[s] = b + 1;
            fa2_plan_eval(p, &t);
            if (!t.feasible)
                continue;
            double g = ((b + 1) / fa2_d(p, s, b + 1)) / (b / fa2_d(p, s, b));
            if (g > gain + 1e-12)
                gain = g, best = s;
        }
        if (best < 0)
            break;
        out->b[best]++;
    }
    fa2_plan_eval(p, out);
    return 0;
}

/* DS2-like: batch 1, instances = ceil(rate x processing time). */
int fa2_plan_ds2(const struct fa2_problem *p, struct fa2_plan *out)
{
    if (!problem_ok(p))
        return -1;
    plan_batch1(p, out);
    return 0;
}
