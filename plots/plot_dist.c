/* plot_dist — distribution figures of `servesim plot`: latency and queueing CDFs per model
 * and policy (seeds merged, folded beyond FOLD_ABOVE lines), end-to-end CDFs per execution
 * path, and batch-size histograms. */
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot_int.h"
#include "sim_err.h"

#define MAX_LINES 12

/* ---- distributions: CDFs and batch sizes ---- */

static int dist_add(struct dist *d, const char *title, double edge, double count, double lo)
{
    int s = plot_names_index(&d->ser, title);
    if (s < 0)
        return s;
    if (s >= d->cap) {
        int cap = d->cap ? 2 * d->cap : 16;
        struct vec *e = realloc(d->edge, (size_t)cap * sizeof *e);
        if (e)
            d->edge = e;
        struct vec *c = e ? realloc(d->count, (size_t)cap * sizeof *c) : NULL;
        if (c)
            d->count = c;
        double *l = c ? realloc(d->lo, (size_t)cap * sizeof *l) : NULL;
        if (!e || !c || !l)
            return SIM_ENOMEM;
        d->lo = l;
        for (int k = d->cap; k < cap; k++)
            l[k] = INFINITY;
        memset(d->edge + d->cap, 0, (size_t)(cap - d->cap) * sizeof *e);
        memset(d->count + d->cap, 0, (size_t)(cap - d->cap) * sizeof *c);
        d->cap = cap;
    }
    if (lo < d->lo[s])
        d->lo[s] = lo;
    for (size_t k = 0; k < d->edge[s].n; k++)
        if (d->edge[s].v[k] == edge) {
            d->count[s].v[k] += count;
            return 0;
        }
    int rc = plot_vec_push(&d->edge[s], edge);
    return rc ? rc : plot_vec_push(&d->count[s], count);
}

void plot_dist_free(struct dist *d)
{
    for (int s = 0; s < d->cap; s++) {
        free(d->edge[s].v);
        free(d->count[s].v);
    }
    free(d->edge);
    free(d->count);
    free(d->lo);
    plot_names_free(&d->ser);
}

/* Sorts series s by edge (insertion sort: a few hundred buckets). */
static void dist_sort(struct dist *d, int s)
{
    double *e = d->edge[s].v, *c = d->count[s].v;
    for (size_t i = 1; i < d->edge[s].n; i++)
        for (size_t j = i; j > 0 && e[j - 1] > e[j]; j--) {
            double t = e[j];
            e[j] = e[j - 1];
            e[j - 1] = t;
            t = c[j];
            c[j] = c[j - 1];
            c[j - 1] = t;
        }
}

/* Reads `sql` (run_id bound as ?1, `only` as ?2 when not NULL) rows (model or path, edge,
 * count, lo) for every selected run into d; a line per model or path unless merge. */
int plot_dist_load(struct plot *p, const char *sql, const char *only, bool merge,
                     struct dist *d)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(p->db, sql, -1, &q, NULL) != SQLITE_OK)
        return plot_db_fail(p, "reading histograms");
    int rc = 0;
    for (int i = 0; i < p->n && !rc; i++) {
        sqlite3_reset(q);
        sqlite3_bind_int64(q, 1, p->r[i].id);
        if (only)
            sqlite3_bind_text(q, 2, only, -1, SQLITE_STATIC);
        while (!rc && sqlite3_step(q) == SQLITE_ROW) {
            const char *model = (const char *)sqlite3_column_text(q, 0);
            char *t = plot_series_title(&p->r[i], NULL, merge ? NULL : model);
            if (!t) {
                rc = SIM_ENOMEM;
                break;
            }
            rc = dist_add(d, t, sqlite3_column_double(q, 1), sqlite3_column_double(q, 2),
                          sqlite3_column_double(q, 3));
            free(t);
        }
    }
    sqlite3_finalize(q);
    return rc;
}

/* The value `sql` (min and max of one column; run_id as ?1, `only` as ?2 when not NULL)
 * finds in every selected run when they all agree (an SLO shown as a line), else 0. */
static double common_value(struct plot *p, const char *sql, const char *only)
{
    sqlite3_stmt *q;
    double lo = INFINITY, hi = -INFINITY;
    if (sqlite3_prepare_v2(p->db, sql, -1, &q, NULL) != SQLITE_OK)
        return 0;
    for (int i = 0; i < p->n; i++) {
        sqlite3_reset(q);
        sqlite3_bind_int64(q, 1, p->r[i].id);
        if (only)
            sqlite3_bind_text(q, 2, only, -1, SQLITE_STATIC);
        if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL) {
            lo = fmin(lo, sqlite3_column_double(q, 0));
            hi = fmax(hi, sqlite3_column_double(q, 1));
        }
    }
    sqlite3_finalize(q);
    return lo == hi ? lo : 0;
}

/* A CDF figure shows at most FOLD_ABOVE lines: above, the FOLD_ABOVE - 1 series with the most
 * requests stay and the rest are folded into one "others" line (their histograms summed),
 * whose title says how many it holds. */
#define FOLD_ABOVE 10
#define CDF_ONE_PANEL 4                 /* more lines than this: a panel per setting */
#define MAX_CDF_PANELS 9

static double dist_total(const struct dist *d, int s)
{
    double t = 0;
    for (size_t k = 0; k < d->count[s].n; k++)
        t += d->count[s].v[k];
    return t;
}

/* d folded to at most `limit` series (into *out; d unchanged), never a policy away: the
 * slots are shared among the policies (at least one each), and within a policy its series
 * with the most requests stay and the rest become one "POLICY others (N folded)" series
 * (their histograms summed); with one policy, "others (N series folded)". */
static int dist_fold(const struct dist *d, int limit, struct dist *out)
{
    int n = d->ser.n, rc = 0;
    int *order = malloc((size_t)n * sizeof *order), *group = malloc((size_t)n * sizeof *group);
    int *gsize = calloc((size_t)n, sizeof *gsize), *gkept = calloc((size_t)n, sizeof *gkept);
    bool *kept = calloc((size_t)n, sizeof *kept);
    if (!order || !group || !gsize || !gkept || !kept) {
        free(order), free(group), free(gsize), free(gkept), free(kept);
        return SIM_ENOMEM;
    }
    int ng = 0;
    for (int i = 0; i < n; i++) {       /* the policies, in order of first appearance */
        int g = 0;
        size_t len = plot_policy_len(d->ser.v[i]);
        while (g < i && !(group[g] >= 0 && plot_policy_len(d->ser.v[g]) == len &&
                          strncmp(d->ser.v[g], d->ser.v[i], len) == 0))
            g++;
        group[i] = g < i ? group[g] : ng++;
        gsize[group[i]]++;
        order[i] = i;
    }
    for (int i = 1; i < n; i++)         /* by total requests, descending; ties: first seen */
        for (int j = i; j > 0 && dist_total(d, order[j - 1]) < dist_total(d, order[j]); j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    int slots = limit / ng > 1 ? limit / ng : 1;    /* each policy's share of the lines */
    for (int i = 0; i < n; i++) {
        int s = order[i], g = group[s];
        int keep = gsize[g] <= slots ? slots : slots - 1;   /* one slot for its others */
        if (gkept[g] < keep) {
            kept[s] = true;
            gkept[g]++;
        }
    }
    memset(out, 0, sizeof *out);
    for (int s = 0; s < n && !rc; s++)  /* the kept ones in their order, then each others */
        for (size_t k = 0; kept[s] && k < d->edge[s].n && !rc; k++)
            rc = dist_add(out, d->ser.v[s], d->edge[s].v[k], d->count[s].v[k], d->lo[s]);
    for (int g = 0; g < ng && !rc; g++) {
        char others[160];
        int folded = gsize[g] - gkept[g];
        for (int s = 0; s < n && !rc; s++) {
            if (kept[s] || group[s] != g)
                continue;
            if (ng == 1)
                snprintf(others, sizeof others, "others (%d series folded)", folded);
            else
                snprintf(others, sizeof others, "%.*s, %s (%d folded)", (int)plot_policy_len(d->ser.v[s]),
                         d->ser.v[s], gkept[g] ? "others" : "all", folded);
            for (size_t k = 0; k < d->edge[s].n && !rc; k++)
                rc = dist_add(out, others, d->edge[s].v[k], d->count[s].v[k], d->lo[s]);
        }
    }
    free(order), free(group), free(gsize), free(gkept), free(kept);
    if (rc)
        plot_dist_free(out);
    return rc;
}

/* Writes the distributions of d as CDFs to FILE.dat and renders them (cdf.gp); more than
 * FOLD_ABOVE series are folded first. */
int plot_cdf_render(struct plot *p, struct dist *d, const char *file, const char *title,
                      const char *xlab, const char *ylab, bool logx, double slo)
{
    if (d->ser.n > FOLD_ABOVE) {
        struct dist folded;
        int rc = dist_fold(d, FOLD_ABOVE, &folded);
        if (!rc)
            rc = plot_cdf_render(p, &folded, file, title, xlab, ylab, logx, slo);
        plot_dist_free(&folded);
        return rc;
    }
    /* more lines than a few, of several policies and a few settings: a panel per setting (a
     * model, a case), a line per policy (plot_panels); one policy's lines stay together */
    struct panels pn;
    int *order = malloc(((size_t)d->ser.n + 1) * sizeof *order);
    int rc = plot_panels_make(p, d->ser.v, d->ser.n, &pn);
    if (!rc && !order)
        rc = SIM_ENOMEM;
    bool panels = d->ser.n > CDF_ONE_PANEL && pn.pol.n >= 2 && pn.set.n >= 2 &&
                  pn.set.n <= MAX_CDF_PANELS;
    char vars[12288];
    if (!rc) {
        vars[0] = '\0';
        plot_panels_series(p, &pn, panels, d->ser.n, order, vars, sizeof vars);
    }
    char base[4096];
    FILE *f = rc ? NULL : plot_dat_open(p, file, base, sizeof base);
    if (!rc && !f)
        rc = SIM_EIO;
    double xlo = INFINITY, xhi = -INFINITY;     /* panels: one x scale for all */
    for (int b = 0; !rc && b < d->ser.n; b++) {
        int s = order[b];
        dist_sort(d, s);
        double total = 0, run = 0;
        for (size_t k = 0; k < d->count[s].n; k++)
            total += d->count[s].v[k];
        fputs(b ? "\n\n" : "", f), plot_put_label(f, plot_line_label(p, d->ser.v[s]));
        fputc('\n', f);
        /* the CDF starts from 0 at the lowest bucket's lower edge (log axis: > 0) */
        double x = d->lo[s] > 0 || !logx ? d->lo[s] : 1e-3;
        fprintf(f, "%.6g\t0\n", x);
        xlo = x < xlo ? x : xlo;
        for (size_t k = 0; k < d->edge[s].n; k++) {
            run += d->count[s].v[k];
            x = d->edge[s].v[k] > 0 || !logx ? d->edge[s].v[k] : 1e-3;
            fprintf(f, "%.6g\t%.6g\n", x, total > 0 ? run / total : 0);
            xhi = x > xhi ? x : xhi;
        }
    }
    if (!rc)
        rc = plot_dat_close(p, f, base);
    if (!rc) {
        char head[16384], full[600];
        snprintf(full, sizeof full, "%s", title);
        plot_title_policy(p, full, sizeof full);
        plot_gp_start(head, sizeof head, base, full);
        plot_gp_set(head, sizeof head, "xlab", xlab);
        plot_gp_set(head, sizeof head, "ylab", ylab);
        plot_gp_append(head, sizeof head, "; slo = %g; logx = %d; xlo = %.6g; xhi = %.6g%s",
                       slo, logx, xlo, xhi > xlo ? xhi : xlo + 1, vars);
        struct opts tall = *p->o;
        struct plot pt = *p;
        tall.h = panels ? plot_panels_height(p, &pn) : p->o->h;
        pt.o = &tall;
        rc = plot_render(&pt, "cdf", base, head);
    }
    free(order);
    plot_panels_free(&pn);
    return rc;
}

int plot_cdf(struct plot *p, enum kind which)
{
    static const struct {
        const char *table, *file, *what, *axis;
        int since;                      /* the schema version that has the table */
    } kinds[] = {
        {"latency_hist", "latency-cdf", "latency", "latency (ms, log scale)", 1},
        {"queue_hist", "queue-cdf", "queueing delay (arrival to batch start)",
         "queueing delay (ms, log scale)", 5},
        {"ttft_hist", "ttft-cdf", "time to first token", "time to first token (ms, log scale)",
         13},
        {"tpot_hist", "tpot-cdf", "time per output token",
         "time per output token (ms, log scale)", 13},
    };
    int ki = which == K_QUEUE_CDF ? 1 : which == K_TTFT_CDF ? 2 : which == K_TPOT_CDF ? 3 : 0;
    bool queue = ki == 1, llm = ki >= 2;
    const char *table = kinds[ki].table;
    if (p->version < kinds[ki].since) {
        if (p->o->all)
            return 0;                   /* `all` draws what the runs have */
        return sim_err_set(SIM_EINVAL, "%s: schema version %d has no %s (version %d); runs "
                           "written by this servesim have them", p->o->db, p->version, table,
                           kinds[ki].since);
    }
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT model, hi_ms, count, lo_ms FROM %s WHERE run_id = ?1 %s",
             table, p->o->model ? "AND model = ?2" : "");
    struct dist d = {0};
    int rc = plot_dist_load(p, sql, p->o->model, false, &d);
    bool merged = false;
    if (!rc && d.ser.n > MAX_LINES && !p->o->model) {
        /* several policies or settings: a line each, models merged; one: a line per model,
         * the smallest folded into "others" (plot_cdf_render) */
        struct dist m = {0};
        rc = plot_dist_load(p, sql, p->o->model, true, &m);
        if (!rc && m.ser.n > 1) {
            plot_dist_free(&d);
            d = m;
            merged = true;
        } else {
            plot_dist_free(&m);
        }
    }
    if (!rc && d.ser.n == 0 && llm && p->o->all) {
        plot_dist_free(&d);
        return 0;                       /* no LLM model among the runs: nothing to draw */
    }
    if (!rc && d.ser.n == 0)
        rc = sim_err_set(SIM_EINVAL, "%s: no %s rows for the selected runs%s%s%s", p->o->db,
                         table, p->o->model ? " and model " : "", p->o->model ? p->o->model : "",
                         llm ? " (only LLM models have them)" : "");
    if (!rc) {
        char title[512], slo_sql[256];
        snprintf(title, sizeof title, "%s: %s CDF%s", p->label, kinds[ki].what,
                 merged ? " (models merged)" : "");
        snprintf(slo_sql, sizeof slo_sql, "SELECT min(slo_ms), max(slo_ms) FROM model_stats "
                 "WHERE run_id = ?1 %s", p->o->model ? "AND model = ?2" : "");
        rc = plot_cdf_render(p, &d, kinds[ki].file, title, kinds[ki].axis,
                             "fraction of requests", true,
                             queue || llm ? 0.0 : common_value(p, slo_sql, p->o->model));
    }
    plot_dist_free(&d);
    return rc;
}

/* End-to-end latency per execution path of an application: a figure per path (its SLA as
 * the line), a line per run. */
int plot_path_cdf(struct plot *p)
{
    if (p->version < 6)
        return sim_err_set(SIM_EINVAL, "%s: schema version %d has no paths (path_hist: "
                           "version 6)", p->o->db, p->version);
    struct names paths = {0};
    sqlite3_stmt *q;
    int rc = 0;
    if (p->o->path) {
        rc = plot_names_index(&paths, p->o->path) < 0 ? SIM_ENOMEM : 0;
    } else if (sqlite3_prepare_v2(p->db, "SELECT path FROM path_stats WHERE run_id = ?1 "
                                         "ORDER BY rowid", -1, &q, NULL) != SQLITE_OK) {
        rc = plot_db_fail(p, "reading paths");
    } else {
        for (int i = 0; i < p->n && !rc; i++) {
            sqlite3_reset(q);
            sqlite3_bind_int64(q, 1, p->r[i].id);
            while (!rc && sqlite3_step(q) == SQLITE_ROW)
                rc = plot_names_index(&paths, (const char *)sqlite3_column_text(q, 0)) < 0
                         ? SIM_ENOMEM : 0;
        }
        sqlite3_finalize(q);
    }
    if (!rc && paths.n == 0 && !p->o->all)    /* `all` draws it where there are paths */
        rc = sim_err_set(SIM_EINVAL, "%s: the selected runs have no application paths", p->o->db);
    for (int k = 0; k < paths.n && !rc; k++) {
        struct dist d = {0};
        rc = plot_dist_load(p, "SELECT path, hi_ms, count, lo_ms FROM path_hist WHERE run_id = ?1 "
                          "AND path = ?2", paths.v[k], true, &d);
        if (!rc && d.ser.n == 0)
            rc = sim_err_set(SIM_EINVAL, "%s: no path_hist rows for path %s in the selected "
                             "runs", p->o->db, paths.v[k]);
        if (!rc) {
            char file[200], title[512];
            snprintf(file, sizeof file, "path-cdf-%s", paths.v[k]);
            plot_file_safe(file);
            snprintf(title, sizeof title, "%s: end-to-end latency CDF of path %s", p->label,
                     paths.v[k]);
            double sla = common_value(p, "SELECT min(sla_ms), max(sla_ms) FROM path_stats "
                                         "WHERE run_id = ?1 AND path = ?2", paths.v[k]);
            rc = plot_cdf_render(p, &d, file, title, "end-to-end latency (ms, log scale)",
                                 "fraction of requests", true, sla);
        }
        plot_dist_free(&d);
    }
    plot_names_free(&paths);
    return rc;
}

/* A batch-size histogram shows at most BATCH_SERIES clusters' worth of bars: above, each
 * policy's series with the most batches and its "others" (dist_fold: never a policy away). */
#define BATCH_SERIES 6

int plot_batch(struct plot *p)
{
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT model, batch_size, count, batch_size FROM batch_hist WHERE run_id = ?1 %s",
             p->o->model ? "AND model = ?2" : "");
    struct dist d = {0};
    /* per policy and setting, models merged */
    int rc = plot_dist_load(p, sql, p->o->model, true, &d);
    if (!rc && d.ser.n > BATCH_SERIES) {  /* clusters of more bars are unreadable */
        struct dist folded;
        rc = dist_fold(&d, BATCH_SERIES, &folded);
        if (!rc) {
            plot_dist_free(&d);
            d = folded;
        }
    }
    int maxb = 0;
    for (int s = 0; s < d.ser.n; s++)
        for (size_t k = 0; k < d.edge[s].n; k++)
            if (d.edge[s].v[k] > maxb)
                maxb = (int)d.edge[s].v[k];
    if (!rc && maxb == 0)
        rc = sim_err_set(SIM_EINVAL, "%s: no batches in the selected runs", p->o->db);
    /* a panel per setting (the series' title after its policy), a bar per policy in the
     * policy's colour: "Symphony, ResNet50" is Symphony's bar in the ResNet50 panel */
    struct panels pn;
    int prc = plot_panels_make(p, d.ser.v, d.ser.n, &pn);
    rc = rc ? rc : prc;
    char base[4096];
    FILE *f = rc ? NULL : plot_dat_open(p, "batch-hist", base, sizeof base);
    if (!rc && !f)
        rc = SIM_EIO;
    double *tot = rc ? NULL : calloc((size_t)d.ser.n + 1, sizeof *tot), ymax = 0;
    if (!rc && !tot) {
        fclose(f);
        rc = SIM_ENOMEM;
    }
    if (!rc) {
        for (int s = 0; s < d.ser.n; s++)
            for (size_t k = 0; k < d.count[s].n; k++)
                tot[s] += d.count[s].v[k];
        for (int k = 0; k < pn.set.n; k++) {    /* a block per panel */
            fputs(k ? "\n\nbatch" : "batch", f);
            for (int j = 0; j < pn.pol.n; j++)
                fputc('\t', f), plot_put_label(f, pn.pol.v[j]);
            fputc('\n', f);
            for (int b = 1; b <= maxb; b++) {
                fprintf(f, "%d", b);
                for (int j = 0; j < pn.pol.n; j++) {
                    double c = 0, t = 0;
                    for (int s = 0; s < d.ser.n; s++) {
                        if (pn.sp[s] != k || pn.spol[s] != j)
                            continue;
                        t = tot[s];
                        for (size_t e = 0; e < d.edge[s].n; e++)
                            if ((int)d.edge[s].v[e] == b)
                                c = d.count[s].v[e];
                    }
                    fprintf(f, "\t%.6g", t > 0 ? c / t : 0);
                    ymax = t > 0 && c / t > ymax ? c / t : ymax;
                }
                fputc('\n', f);
            }
        }
        rc = plot_dat_close(p, f, base);
    }
    free(tot);
    if (!rc) {
        char vars[16384], title[512];
        /* "(all models)": a setting's models merged, where no panel names a model */
        snprintf(title, sizeof title, "%s: batch sizes%s%s", p->label,
                 p->o->model ? " of " : pn.set.n > 1 ? "" : " (all models)",
                 p->o->model ? plot_display_name(p->o->model) : "");
        plot_title_policy(p, title, sizeof title);
        plot_gp_start(vars, sizeof vars, base, title);
        struct opts tall = *p->o;
        struct plot pt = *p;
        tall.h = plot_panels_height(p, &pn);
        pt.o = &tall;
        plot_gp_append(vars, sizeof vars, "; xstep = %d; ymax = %.6g", maxb > 32 ? 8 : maxb > 16 ? 4 : 1,
                       ymax > 0 ? ymax * 1.05 : 1);
        plot_panels_vars(p, &pn, vars, sizeof vars);
        rc = plot_render(&pt, "batch_hist", base, vars);
    }
    plot_panels_free(&pn);
    plot_dist_free(&d);
    return rc;
}
