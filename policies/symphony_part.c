/* symphony_part — the partitioner's MILP, random-restart baseline and enumeration (see
 * symphony_part.h). */
#include "symphony_part.h"

#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"

static bool problem_ok(const struct sym_part_problem *p)
{
    return p->n >= 1 && p->n <= SYM_PART_MAX_MODELS && p->k >= 1 && p->k <= SYM_PART_MAX_GROUPS;
}

static double weight(const struct sym_part_problem *p)
{
    if (p->w > 0)
        return p->w;
    double r = 0, s = 0;
    for (int i = 0; i < p->n; i++)
        r += p->r[i], s += p->s[i];
    return s > 0 ? r / s : 1;
}

bool sym_part_eval(const struct sym_part_problem *p, const int *assign,
                   struct sym_part_result *res)
{
    double R[SYM_PART_MAX_GROUPS] = {0}, S[SYM_PART_MAX_GROUPS] = {0};
    double D[SYM_PART_MAX_GROUPS] = {0}, rsum = 0, ssum = 0, move = 0;
    double TS[SYM_PART_MAX_GROUPS] = {0}, TD[SYM_PART_MAX_GROUPS] = {0};  /* old and new */
    bool trans = p->prev && p->transition;
    for (int i = 0; i < p->n; i++) {
        int j = assign[i];
        res->assign[i] = j;
        R[j] += p->r[i];
        S[j] += p->s[i];
        D[j] = fmax(D[j], p->d[i]);
        if (trans) {
            TS[j] += p->s[i];
            TD[j] = fmax(TD[j], p->d[i]);
            if (p->prev[i] != j) {
                TS[p->prev[i]] += p->s[i];
                TD[p->prev[i]] = fmax(TD[p->prev[i]], p->d[i]);
            }
        }
        rsum += p->r[i];
        ssum += p->s[i];
        if (p->prev && p->prev[i] != j)
            move += p->c[i];
    }
    double ravg = rsum / p->k, savg = ssum / p->k, dr = 0, ds = 0;
    double rlo = INFINITY, rhi = -INFINITY, mlo = INFINITY, mhi = -INFINITY, mavg = 0;
    bool ok = !p->prev || move <= p->c_max + 1e-9;
    for (int j = 0; j < p->k; j++) {
        dr = fmax(dr, fabs(R[j] - ravg));
        ds = fmax(ds, fabs(S[j] - savg));
        ok &= p->r_max <= 0 || R[j] <= p->r_max + 1e-9;
        ok &= p->s_max <= 0 || S[j] + D[j] <= p->s_max + 1e-9;
        ok &= !trans || p->s_max <= 0 || TS[j] + TD[j] <= p->s_max + 1e-9;
        rlo = fmin(rlo, R[j]), rhi = fmax(rhi, R[j]);
        mlo = fmin(mlo, S[j] + D[j]), mhi = fmax(mhi, S[j] + D[j]);
        mavg += (S[j] + D[j]) / p->k;
    }
    res->feasible = ok;
    res->objective = dr + weight(p) * ds;
    res->load_imbalance = ravg > 0 ? (rhi - rlo) / ravg : 0;
    res->mem_imbalance = mavg > 0 ? (mhi - mlo) / mavg : 0;
    res->move_cost = move;
    return ok;
}

/* Keeps `cand` in *best when it is feasible and better (ties: the earlier). */
static void keep(struct sym_part_result *best, const struct sym_part_result *cand)
{
    if (cand->feasible && (!best->feasible || cand->objective < best->objective - 1e-12))
        *best = *cand;
}

int sym_part_random(const struct sym_part_problem *p, int restarts, gsl_rng *rng,
                    struct sym_part_result *res)
{
    if (!problem_ok(p) || restarts < 1)
        return sim_err_set(SIM_EINVAL, "partition: %d models in %d sub-clusters, %d restarts",
                           p->n, p->k, restarts);
    int a[SYM_PART_MAX_MODELS];
    struct sym_part_result cand;
    memset(res, 0, sizeof *res);
    for (int t = 0; t < restarts; t++) {
        for (int i = 0; i < p->n; i++)
            a[i] = (int)gsl_rng_uniform_int(rng, (unsigned long)p->k);
        sym_part_eval(p, a, &cand);
        keep(res, &cand);
    }
    if (!res->feasible)
        sym_part_eval(p, a, res);       /* the last one, to report what was tried */
    res->optimal = false;
    return 0;
}

int sym_part_enumerate(const struct sym_part_problem *p, struct sym_part_result *res)
{
    double count = pow(p->k, p->n);
    if (!problem_ok(p) || count > 2e6)
        return sim_err_set(SIM_EINVAL, "partition: %d^%d assignments are too many to enumerate",
                           p->k, p->n);
    int a[SYM_PART_MAX_MODELS] = {0};
    struct sym_part_result cand;
    memset(res, 0, sizeof *res);
    for (;;) {
        sym_part_eval(p, a, &cand);
        keep(res, &cand);
        int i = 0;                      /* the next assignment, odometer order */
        while (i < p->n && ++a[i] == p->k)
            a[i++] = 0;
        if (i == p->n)
            break;
    }
    res->optimal = res->feasible;
    if (!res->feasible)
        sym_part_eval(p, a, res);
    return 0;
}

/* A row over ind/val[1..len] with GLPK bounds (type, lo, hi). */
static void add_row(glp_prob *lp, int len, const int *ind, const double *val, int type, double lo,
                    double hi)
{
    int row = glp_add_rows(lp, 1);
    glp_set_mat_row(lp, row, len, ind, val);
    glp_set_row_bnds(lp, row, type, lo, hi);
}

/* |sum over ind/val[1..n] - avg| <= column dev, as two rows (uses slot n + 1). */
static void deviation(glp_prob *lp, int n, int *ind, double *val, int dev, double avg)
{
    ind[n + 1] = dev, val[n + 1] = -1;
    add_row(lp, n + 1, ind, val, GLP_UP, 0, avg);
    val[n + 1] = 1;
    add_row(lp, n + 1, ind, val, GLP_LO, avg, 0);
}

/* Branch-and-bound nodes the MILP may select: past the budget GLPK stops and the best
 * assignment found so far stands (not proven optimal). */
struct node_budget {
    int nodes, max;
};

static void node_budget_cb(glp_tree *tree, void *info)
{
    struct node_budget *b = info;
    if (glp_ios_reason(tree) == GLP_ISELECT && ++b->nodes > b->max)
        glp_ios_terminate(tree);
}

int sym_part_milp(const struct sym_part_problem *p, struct sym_part_result *res)
{
    if (!problem_ok(p))
        return sim_err_set(SIM_EINVAL, "partition: %d models in %d sub-clusters", p->n, p->k);
    int n = p->n, k = p->k, rc = SIM_ENOMEM;
    double rsum = 0, ssum = 0, w = weight(p);
    for (int i = 0; i < n; i++)
        rsum += p->r[i], ssum += p->s[i];
    /* columns: x_ij at 1 + i*k + j, then D_j, dR, dS */
    int nx = n * k, colD = nx + 1, colR = nx + k + 1, colS = colR + 1, ncols = colS;
    glp_prob *lp = glp_create_prob();
    int *ind = malloc(((size_t)ncols + 1) * sizeof *ind);
    double *val = malloc(((size_t)ncols + 1) * sizeof *val);
    if (!ind || !val)
        goto out;
    glp_set_obj_dir(lp, GLP_MIN);
    glp_add_cols(lp, ncols);
    for (int c = 1; c <= nx; c++)
        glp_set_col_kind(lp, c, GLP_BV);
    for (int c = colD; c <= colS; c++)
        glp_set_col_bnds(lp, c, GLP_LO, 0, 0);
    glp_set_obj_coef(lp, colR, 1);
    glp_set_obj_coef(lp, colS, w);
    if (!p->prev)                       /* sub-clusters are alike: model 0 goes to the first */
        glp_set_col_bnds(lp, 1, GLP_FX, 1, 1);
    for (int i = 0; i < n; i++) {       /* each model in one sub-cluster */
        for (int j = 0; j < k; j++)
            ind[j + 1] = 1 + i * k + j, val[j + 1] = 1;
        add_row(lp, k, ind, val, GLP_FX, 1, 1);
    }
    for (int j = 0; j < k; j++) {
        /* rate: within R_max and within dR of the average */
        for (int i = 0; i < n; i++)
            ind[i + 1] = 1 + i * k + j, val[i + 1] = p->r[i];
        add_row(lp, n, ind, val, p->r_max > 0 ? GLP_UP : GLP_FR, 0, p->r_max);
        deviation(lp, n, ind, val, colR, rsum / k);
        /* static memory: within dS of the average, and with D_j within S_max; in transition
         * the old models count too (constant: their s_i, and d_i as D_j's lower bound) */
        for (int i = 0; i < n; i++)
            val[i + 1] = p->s[i];
        deviation(lp, n, ind, val, colS, ssum / k);
        double old_s = 0, old_d = 0;
        for (int i = 0; p->prev && p->transition && i < n; i++)
            if (p->prev[i] == j) {
                old_s += p->s[i];
                old_d = fmax(old_d, p->d[i]);
                val[i + 1] = 0;         /* in the union whether it stays or not */
            }
        glp_set_col_bnds(lp, colD + j, GLP_LO, old_d, 0);
        ind[n + 1] = colD + j, val[n + 1] = 1;
        add_row(lp, n + 1, ind, val, p->s_max > 0 ? GLP_UP : GLP_FR, 0, p->s_max - old_s);
        for (int i = 0; i < n; i++) {   /* D_j >= d_i x_ij */
            int two[3] = {0, colD + j, 1 + i * k + j};
            double v[3] = {0, 1, -p->d[i]};
            add_row(lp, 2, two, v, GLP_LO, 0, 0);
        }
    }
    if (p->prev) {                      /* moves: sum (c_i / 2) |x_ij - x'_ij| <= C_max */
        double fixed = 0;               /* (a move changes two x's of its row: it costs c_i) */
        for (int i = 0; i < n; i++)
            for (int j = 0; j < k; j++) {
                bool was = p->prev[i] == j;
                ind[i * k + j + 1] = 1 + i * k + j;
                val[i * k + j + 1] = (was ? -p->c[i] : p->c[i]) / 2;
                fixed += was ? p->c[i] / 2 : 0;
            }
        add_row(lp, nx, ind, val, GLP_UP, 0, p->c_max - fixed);
    }
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.presolve = GLP_ON;
    parm.msg_lev = GLP_MSG_OFF;
    if (p->time_limit_s > 0)
        parm.tm_lim = (int)fmin(p->time_limit_s * 1e3, 2e9);
    struct node_budget budget = {0, p->node_limit};
    if (p->node_limit > 0) {
        parm.cb_func = node_budget_cb;
        parm.cb_info = &budget;
    }
    int ret = glp_intopt(lp, &parm);
    int st = ret == 0 || ret == GLP_ETMLIM || ret == GLP_ESTOP ? glp_mip_status(lp) : GLP_UNDEF;
    memset(res, 0, sizeof *res);
    if (st == GLP_OPT || st == GLP_FEAS) {
        int a[SYM_PART_MAX_MODELS];
        for (int i = 0; i < n; i++) {
            a[i] = 0;
            for (int j = 0; j < k; j++)
                if (glp_mip_col_val(lp, 1 + i * k + j) > 0.5)
                    a[i] = j;
        }
        sym_part_eval(p, a, res);
        res->optimal = st == GLP_OPT && ret == 0;
        res->nodes = budget.nodes;
    }
    rc = 0;
out:
    free(ind);
    free(val);
    glp_delete_prob(lp);
    return rc;
}
