/* plot_cluster — figures of shared clusters in `servesim plot` (training jobs, notebooks,
 * closed-loop clients: DynamoML): GPUs by use over time, jobs' running time by workers,
 * jobs' execution-time CDF and SLA violations against active clients. */
#include <cjson/cJSON.h>
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot_int.h"
#include "sim_err.h"
#include "sim_readback.h"

/* ---- shared clusters (training jobs, notebooks, closed-loop clients: DynamoML) ---- */

/* The selected runs grouped by configuration (policy and settings, seeds together):
 * *group_out (malloc'd, p->n entries; the caller frees it, also on error) gives run i's
 * group, titles the groups' line titles. */
static int config_groups(struct plot *p, struct names *titles, int **group_out)
{
    int *group = *group_out = calloc((size_t)(p->n ? p->n : 1), sizeof *group);
    char **t = calloc((size_t)(p->n ? p->n : 1), sizeof *t);
    char (*key)[17] = calloc((size_t)(p->n ? p->n : 1), sizeof *key);
    bool *mixed = calloc((size_t)(p->n ? p->n : 1), sizeof *mixed);
    int rc = group && t && key && mixed ? 0 : SIM_ENOMEM;
    for (int i = 0; i < p->n && !rc; i++) {
        if (!(t[i] = plot_series_title(&p->r[i], NULL, NULL)))
            rc = SIM_ENOMEM;
        else
            rc = sim_results_config_key(p->r[i].config, key[i]);
    }
    /* runs of one title but different configurations (plain runs differing outside any
     * sweep's settings) are configurations apart, labelled with their config key */
    if (!rc)
        rc = plot_mixed_units(p->n, t, key, mixed);
    const char **cfgs = calloc(p->n > 0 ? (size_t)p->n : 1, sizeof *cfgs);
    for (int i = 0; cfgs && i < p->n; i++)
        cfgs[i] = p->r[i].config;
    if (!cfgs && !rc)
        rc = SIM_ENOMEM;
    for (int i = 0; i < p->n && !rc; i++) {
        char g[1300], what[200] = "";
        if (mixed[i])
            plot_config_label(p->n, t, key, cfgs, i, what, sizeof what);
        snprintf(g, sizeof g, "%.1000s%s%s", plot_line_label(p, t[i]), what[0] ? " " : "", what);
        int k = plot_names_index(titles, g);
        if (k < 0)
            rc = k;
        else
            group[i] = k;
    }
    for (int i = 0; t && i < p->n; i++)
        free(t[i]);
    free(t), free(key), free(mixed), free(cfgs);
    return rc;
}

/* A kind whose data the selected runs lack: with `all`, nothing drawn (0: runs without jobs,
 * notebooks or clients are the common case, as runs without paths for path-cdf); asked for
 * by name, an error. */
static int no_data(struct plot *p, const char *kind, const char *what)
{
    if (p->o->all)
        return 0;
    return sim_err_set(SIM_EINVAL, "%s: plot %s: %s", p->o->db, kind, what);
}

#define MAX_PANELS 6

/* GPUs by use over time (inference executors, training workers, notebooks' shares, idle)
 * stacked, a panel per configuration: its run of the lowest seed (a run's timeline; seeds
 * are not averaged, --run picks others). */
int plot_gpu_alloc(struct plot *p)
{
    static const char *const cols[] = {"gpus.inference", "gpus.training", "gpus.modeling",
                                       "gpus.idle"};
    if (p->version < 8)
        return no_data(p, "gpu-alloc", "schema version below 8 has no GPU ledger series");
    struct names groups = {0};
    int *group = NULL, *pick = NULL;
    int rc = config_groups(p, &groups, &group);
    if (!rc && !(pick = malloc((size_t)(groups.n ? groups.n : 1) * sizeof *pick)))
        rc = SIM_ENOMEM;
    for (int g = 0; !rc && g < groups.n; g++)
        pick[g] = -1;
    for (int i = 0; !rc && i < p->n; i++) {
        int *k = &pick[group[i]];
        if (*k < 0 || p->r[i].seed < p->r[*k].seed)
            *k = i;
    }
    sqlite3_stmt *q = NULL;
    if (!rc && sqlite3_prepare_v2(p->db, "SELECT t_s, series, value FROM timeseries WHERE "
                                         "run_id = ?1 AND key = '' AND series IN "
                                         "('gpus.inference', 'gpus.training', 'gpus.modeling', "
                                         "'gpus.idle') ORDER BY t_s", -1, &q, NULL) != SQLITE_OK)
        rc = plot_db_fail(p, "reading the time series");
    char base[4096], vars[8192];
    FILE *f = rc ? NULL : plot_dat_open(p, "gpu-alloc", base, sizeof base);
    if (!rc && !f)
        rc = SIM_EIO;
    int npan = 0;
    double xmax = 0;
    char tvars[4096] = "";
    for (int g = 0; !rc && g < groups.n && npan < MAX_PANELS; g++) {
        const struct prun *r = &p->r[pick[g]];
        sqlite3_reset(q);
        sqlite3_bind_int64(q, 1, r->id);
        double t = NAN, row[4];
        int rows = 0, step;
        for (;;) {
            step = sqlite3_step(q);
            double tt = step == SQLITE_ROW ? sqlite3_column_double(q, 0) : NAN;
            if (!isnan(t) && (step != SQLITE_ROW || tt != t)) {
                fprintf(f, "%s%.6g", rows++ == 0 && npan ? "\n\n" : "", t);
                for (int c = 0; c < 4; c++)
                    fprintf(f, "\t%.6g", isnan(row[c]) ? 0 : row[c]);
                fputc('\n', f);
            }
            if (step != SQLITE_ROW)
                break;
            if (tt != t) {
                t = tt;
                row[0] = row[1] = row[2] = row[3] = NAN;
            }
            const char *s = (const char *)sqlite3_column_text(q, 1);
            for (int c = 0; c < 4; c++)
                if (strcmp(s, cols[c]) == 0)
                    row[c] = sqlite3_column_double(q, 2);
        }
        if (step != SQLITE_DONE)
            rc = plot_db_fail(p, "reading the time series");
        else if (rows) {
            char title[600], v[800] = "";
            /* a panel's title fits its panel (and six of them the script's variables) */
            snprintf(title, sizeof title, "%.100s%s, seed %llu", groups.v[g],
                     strlen(groups.v[g]) > 100 ? "..." : "", (unsigned long long)r->seed);
            xmax = fmax(xmax, t);
            snprintf(v, sizeof v, "; ptitle[%d] = ", ++npan);
            plot_gp_quote(v, sizeof v, title);
            size_t len = strlen(tvars);
            snprintf(tvars + len, sizeof tvars - len, "%s", v);
        }
    }
    sqlite3_finalize(q);
    if (f) {
        int rc2 = plot_dat_close(p, f, base);
        if (!rc)
            rc = rc2;
    }
    if (!rc && groups.n > MAX_PANELS)
        fprintf(stderr, "plot: %s gpu-alloc: %d configurations, the first %d drawn (--run or "
                "--name picks others)\n", p->label, groups.n, MAX_PANELS);
    bool skipped = false;
    if (!rc && npan == 0) {
        plot_discard(p, base);
        skipped = true;
        rc = no_data(p, "gpu-alloc", "no run has GPU ledger series (gpus.inference, ...: runs "
                     "with training jobs or notebooks, and a sampling period)");
    }
    if (!rc && !skipped) {
        char title[512];
        snprintf(title, sizeof title, "%s: GPUs by use over time", p->label);
        plot_title_policy(p, title, sizeof title);
        plot_gp_start(vars, sizeof vars, base, title);
        /* time ticks: a round step giving 3 to 6 of them */
        double step = pow(10, floor(log10(fmax(xmax, 1) / 3)));
        step *= xmax / step > 15 ? 5 : xmax / step > 6 ? 2 : 1;
        plot_gp_append(vars, sizeof vars, "; npan = %d; xmax = %g; xstep = %g; "
                 "array ptitle[%d]%s", npan, xmax, step, npan, tvars);
        struct opts tall = *p->o;
        struct plot pt = *p;
        tall.h = npan > 2 ? p->o->h * 3 / 2 : p->o->h;
        pt.o = &tall;
        rc = plot_render(&pt, "gpu_alloc", base, vars);
    }
    plot_names_free(&groups);
    free(group);
    free(pick);
    return rc;
}

/* The share of the jobs' running time at 1, 2, ... workers, clustered bars per
 * configuration (seeds summed): job_workers. */
int plot_job_workers(struct plot *p)
{
    enum { MW = 64, ROW = MW + 1 };        /* per configuration: seconds at 1..MW, total */
    if (p->version < 8)
        return no_data(p, "job-workers", "schema version below 8 has no training jobs");
    struct names groups = {0};
    int *group = NULL;
    int rc = config_groups(p, &groups, &group);
    double *sec = rc ? NULL : calloc((size_t)(groups.n ? groups.n : 1) * ROW, sizeof *sec);
    if (!rc && !sec)
        rc = SIM_ENOMEM;
    sqlite3_stmt *q = NULL;
    if (!rc && sqlite3_prepare_v2(p->db, "SELECT workers, sum(seconds) FROM job_workers WHERE "
                                         "run_id = ?1 GROUP BY workers", -1, &q, NULL) != SQLITE_OK)
        rc = plot_db_fail(p, "reading job_workers");
    int most = 0;
    for (int i = 0; !rc && i < p->n; i++) {
        sqlite3_reset(q);
        sqlite3_bind_int64(q, 1, p->r[i].id);
        while (sqlite3_step(q) == SQLITE_ROW) {
            int w = sqlite3_column_int(q, 0);
            double v = sqlite3_column_double(q, 1);
            if (w >= 1 && w <= MW) {
                sec[(size_t)group[i] * ROW + (size_t)(w - 1)] += v;
                sec[(size_t)group[i] * ROW + MW] += v;
                most = w > most && v > 0 ? w : most;
            }
        }
    }
    sqlite3_finalize(q);
    if (!rc && most == 0)
        rc = no_data(p, "job-workers", "no run has training jobs that ran (job_workers)");
    else if (!rc) {
        char base[4096];
        FILE *f = plot_dat_open(p, "job-workers", base, sizeof base);
        if (!f)
            rc = SIM_EIO;
        int nser = 0;
        if (f) {                                    /* configurations whose jobs ran */
            fputs("workers", f);
            for (int g = 0; g < groups.n; g++)
                if (sec[(size_t)g * ROW + MW] > 0)
                    fputc('\t', f), plot_put_label(f, groups.v[g]), nser++;
            fputc('\n', f);
            for (int w = 0; w < most; w++) {
                fprintf(f, "%d", w + 1);
                for (int g = 0; g < groups.n; g++) {
                    double tot = sec[(size_t)g * ROW + MW];
                    if (tot > 0)
                        fprintf(f, "\t%.6g", sec[(size_t)g * ROW + (size_t)w] / tot);
                }
                fputc('\n', f);
            }
            rc = plot_dat_close(p, f, base);
        }
        if (!rc) {
            char vars[8192], title[512];
            snprintf(title, sizeof title, "%s: jobs' running time by workers (seeds summed)",
                     p->label);
            plot_title_policy(p, title, sizeof title);
            plot_gp_start(vars, sizeof vars, base, title);
            plot_gp_append(vars, sizeof vars, "; nser = %d", nser);
            char **ts = calloc((size_t)groups.n + 1, sizeof *ts);   /* the columns' titles */
            int k = 0;
            for (int g = 0; ts && g < groups.n; g++)
                if (sec[(size_t)g * ROW + MW] > 0)
                    ts[k++] = groups.v[g];
            rc = ts ? plot_series_colours(p, ts, k, vars, sizeof vars) : SIM_ENOMEM;
            free(ts);
            if (!rc)
                rc = plot_render(p, "job_workers", base, vars);
        }
    }
    plot_names_free(&groups);
    free(group);
    free(sec);
    return rc;
}

/* The CDF of the training jobs' execution times (arrival to end, jobs that finished), a line
 * per configuration (seeds merged): job_stats. */
int plot_job_cdf(struct plot *p)
{
    if (p->version < 8)
        return no_data(p, "job-cdf", "schema version below 8 has no training jobs");
    struct dist d = {0};
    int rc = plot_dist_load(p, "SELECT '', exec_s, 1, exec_s FROM job_stats WHERE run_id = ?1 AND "
                          "exec_s IS NOT NULL", NULL, true, &d);
    if (!rc && d.ser.n == 0)
        rc = no_data(p, "job-cdf", "no run has training jobs that finished (job_stats)");
    else if (!rc) {
        char title[512];
        snprintf(title, sizeof title, "%s: training jobs' execution time CDF (seeds merged)",
                 p->label);
        rc = plot_cdf_render(p, &d, "job-cdf", title, "execution time, arrival to end (s)",
                             "fraction of jobs", false, 0);
    }
    plot_dist_free(&d);
    return rc;
}

/* The schedule of a run's closed-loop clients: its end in seconds (steps x step_s), or 0
 * when the run has none. */
static double clients_schedule_end(const struct prun *r)
{
    cJSON *j = cJSON_Parse(r->config);
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(j, "workload"), "clients");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(c, "step_s");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(c, "counts");
    double end = cJSON_IsArray(n) ? (cJSON_IsNumber(st) ? st->valuedouble : 60) *
                                        cJSON_GetArraySize(n) : 0;
    cJSON_Delete(j);
    return end;
}

/* SLA violations (late or dropped requests, of those offered) against the number of active
 * closed-loop clients, over the client schedule, a line per configuration (seeds merged):
 * each sample window of the time series counts at the clients active at its start (the
 * `clients` sample before it), weighted by the requests offered in it. */
int plot_sla_clients(struct plot *p)
{
    enum { ML = 256 };
    if (p->version < 8)
        return no_data(p, "sla-clients", "schema version below 8 has no clients series");
    struct names groups = {0};
    int *group = NULL;
    int rc = config_groups(p, &groups, &group);
    int ng = groups.n ? groups.n : 1;
    double *lev = rc ? NULL : calloc((size_t)ng * ML, sizeof *lev);
    double *bad = rc ? NULL : calloc((size_t)ng * ML, sizeof *bad);
    double *tot = rc ? NULL : calloc((size_t)ng * ML, sizeof *tot);
    int *nlev = rc ? NULL : calloc((size_t)ng, sizeof *nlev);
    if (!rc && (!lev || !bad || !tot || !nlev))
        rc = SIM_ENOMEM;
    sqlite3_stmt *q = NULL;
    if (!rc && sqlite3_prepare_v2(p->db, "SELECT t_s, series, value FROM timeseries WHERE "
                                         "run_id = ?1 AND key = '' AND series IN ('clients', "
                                         "'bad_rate', 'offered_rps') ORDER BY t_s", -1, &q,
                                  NULL) != SQLITE_OK)
        rc = plot_db_fail(p, "reading the time series");
    bool any = false;
    for (int i = 0; !rc && i < p->n; i++) {
        double end = clients_schedule_end(&p->r[i]);
        if (end <= 0)
            continue;
        sqlite3_reset(q);
        sqlite3_bind_int64(q, 1, p->r[i].id);
        int g = group[i], step;
        double t = NAN, t_prev = 0, clients = NAN, prev = NAN, br = NAN, off = NAN;
        for (;;) {
            step = sqlite3_step(q);
            double tt = step == SQLITE_ROW ? sqlite3_column_double(q, 0) : NAN;
            if (!isnan(t) && (step != SQLITE_ROW || tt != t)) {   /* sample t complete */
                if (!isnan(prev) && !isnan(br) && !isnan(off) && t <= end + 1e-9) {
                    double w = off * (t - t_prev);
                    int k = 0;
                    while (k < nlev[g] && lev[(size_t)g * ML + (size_t)k] != prev)
                        k++;
                    if (k == nlev[g] && k < ML)
                        lev[(size_t)g * ML + (size_t)nlev[g]++] = prev;
                    if (k < ML) {
                        bad[(size_t)g * ML + (size_t)k] += br * w;
                        tot[(size_t)g * ML + (size_t)k] += w;
                        any = true;
                    }
                }
                t_prev = t;
                prev = clients;
                clients = br = off = NAN;
            }
            if (step != SQLITE_ROW)
                break;
            t = tt;
            const char *s = (const char *)sqlite3_column_text(q, 1);
            double v = sqlite3_column_double(q, 2);
            if (strcmp(s, "clients") == 0)
                clients = v;
            else if (strcmp(s, "bad_rate") == 0)
                br = v;
            else
                off = v;
        }
        if (step != SQLITE_DONE)
            rc = plot_db_fail(p, "reading the time series");
    }
    sqlite3_finalize(q);
    if (!rc && !any)
        rc = no_data(p, "sla-clients", "no run has closed-loop clients (workload.clients) "
                     "with a clients series");
    else if (!rc) {
        char base[4096];
        FILE *f = plot_dat_open(p, "sla-clients", base, sizeof base);
        int nser = 0;
        if (!f)
            rc = SIM_EIO;
        for (int g = 0; f && g < groups.n; g++) {
            if (!nlev[g])
                continue;
            double *L = lev + (size_t)g * ML, *B = bad + (size_t)g * ML, *T = tot + (size_t)g * ML;
            for (int a = 1; a < nlev[g]; a++)   /* by clients */
                for (int b = a; b > 0 && L[b - 1] > L[b]; b--) {
                    double x = L[b]; L[b] = L[b - 1]; L[b - 1] = x;
                    x = B[b]; B[b] = B[b - 1]; B[b - 1] = x;
                    x = T[b]; T[b] = T[b - 1]; T[b - 1] = x;
                }
            fputs(nser++ ? "\n\n" : "", f), plot_put_label(f, groups.v[g]), fputc('\n', f);
            for (int k = 0; k < nlev[g]; k++)
                if (T[k] > 0)
                    fprintf(f, "%.6g\t%.6g\n", L[k], B[k] / T[k]);
        }
        if (f)
            rc = plot_dat_close(p, f, base);
        if (!rc) {
            char vars[8192], title[512];
            snprintf(title, sizeof title, "%s: SLA violations by active clients (seeds "
                     "merged)", p->label);
            plot_title_policy(p, title, sizeof title);
            plot_gp_start(vars, sizeof vars, base, title);
            plot_gp_append(vars, sizeof vars, "; nser = %d", nser);
            char **ts = calloc((size_t)groups.n + 1, sizeof *ts);   /* the lines' titles */
            int k = 0;
            for (int g = 0; ts && g < groups.n; g++)
                if (nlev[g])
                    ts[k++] = groups.v[g];
            rc = ts ? plot_series_colours(p, ts, k, vars, sizeof vars) : SIM_ENOMEM;
            free(ts);
            if (!rc)
                rc = plot_render(p, "sla_clients", base, vars);
        }
    }
    plot_names_free(&groups);
    free(group), free(lev), free(bad), free(tot), free(nlev);
    return rc;
}
