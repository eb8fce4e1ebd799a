/* plot_time — figures over time of `servesim plot`: one run's timeline (offered vs served
 * rate, GPUs, bad rate, autoscaler actions), one time series across runs, and capacity plans
 * (the static plan's and the autoscaler's GPUs against the offered load). */
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plot_int.h"
#include "sim_err.h"
#include "sim_out.h"

/* ---- timeline ---- */

int plot_timeline(struct plot *p)
{
    static const char *const cols[] = {"offered_rps", "ontime_rps", "executors", "gpus_billed",
                                       "bad_rate", "idle_frac", "autoscale.add",
                                       "autoscale.remove"};
    enum { NC = 8 };
    const struct prun *r = &p->r[0];            /* the latest selected run: the highest id
                                                 * (runs come in their sweeps' grid order) */
    for (int i = 1; i < p->n; i++)
        r = p->r[i].id > r->id ? &p->r[i] : r;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(p->db, "SELECT t_s, series, value FROM timeseries WHERE run_id = ?1 "
                                  "AND key = '' ORDER BY t_s", -1, &q, NULL) != SQLITE_OK)
        return plot_db_fail(p, "reading the time series");
    sqlite3_bind_int64(q, 1, r->id);
    char name[64], base[4096];
    snprintf(name, sizeof name, "timeline-run%lld", (long long)r->id);
    FILE *f = plot_dat_open(p, name, base, sizeof base);
    if (!f) {
        sqlite3_finalize(q);
        return SIM_EIO;
    }
    fputs("t_s", f);
    for (int c = 0; c < NC; c++) {      /* the series' names, "autoscale.add" as autoscale_add */
        fputc('\t', f);
        for (const char *ch = cols[c]; *ch; ch++)
            fputc(*ch == '.' ? '_' : *ch, f);
    }
    fputc('\n', f);
    double t = NAN, row[NC];
    int rows = 0, rc = 0;
    bool any_as = false;
    for (;;) {
        int step = sqlite3_step(q);
        double tt = step == SQLITE_ROW ? sqlite3_column_double(q, 0) : NAN;
        if (!isnan(t) && (step != SQLITE_ROW || tt != t)) {
            fprintf(f, "%.6g", t);
            for (int c = 0; c < NC; c++)
                isnan(row[c]) ? fputs("\t?", f) : fprintf(f, "\t%.6g", row[c]);
            fputc('\n', f);
            rows++;
        }
        if (step != SQLITE_ROW) {
            if (step != SQLITE_DONE)
                rc = plot_db_fail(p, "reading the time series");
            break;
        }
        if (tt != t) {
            t = tt;
            for (int c = 0; c < NC; c++)
                row[c] = c >= 6 ? 0 : NAN;  /* no autoscaler action in a period: 0 */
        }
        const char *s = (const char *)sqlite3_column_text(q, 1);
        for (int c = 0; c < NC; c++)
            if (strcmp(s, cols[c]) == 0) {
                row[c] = sqlite3_column_double(q, 2);
                any_as |= c >= 6;
            }
    }
    sqlite3_finalize(q);
    int rc2 = plot_dat_close(p, f, base);
    if (!rc)
        rc = rc2;
    if (!rc && rows == 0 && p->o->all) {   /* `plot all` draws what there is, and says so */
        plot_discard(p, base);
        fprintf(stderr, "plot: %s timeline skipped: run %lld has no time series "
                "(metrics.sample_period_s was 0)\n", p->label, (long long)r->id);
        return 0;
    }
    if (!rc && rows == 0)
        rc = sim_err_set(SIM_EINVAL, "run %lld (%s) has no time series (metrics.sample_period_s "
                         "was 0?)", (long long)r->id, r->name);
    if (rc) {
        plot_discard(p, base);
        return rc;
    }
    char vars[2048], title[512];
    struct prun own = *r;                   /* its sweep settings, all of them: what tells */
    own.same = NULL;                        /* it from its sweep's other runs */
    char *set = plot_setting_of(&own, NULL);
    const char *pol = plot_display_name(r->policy);   /* once: a swept policy object says it */
    bool said = set && strncmp(set, pol, strlen(pol)) == 0;
    char what[600];                         /* the title's second line */
    snprintf(what, sizeof what, "%s%s%s", said ? "" : pol, set && set[0] && !said ? ", " : "",
             set ? set : "");
    snprintf(title, sizeof title, "%s: run %lld, seed %llu%s", r->name, (long long)r->id,
             (unsigned long long)r->seed, any_as ? "" : " (no autoscaler)");
    free(set);
    plot_gp_start(vars, sizeof vars, base, title);
    plot_gp_set(vars, sizeof vars, "runwhat", what);
    strcat(vars, any_as ? "; as_any = 1" : "; as_any = 0");
    struct opts tall = *p->o;
    struct plot pt = *p;
    tall.h = p->o->h * 3 / 2;                  /* four panels: taller */
    pt.o = &tall;
    return plot_render(&pt, "timeline", base, vars);
}

/* ---- one time series across runs ---- */

/* The time series --series (default executors; --key for a keyed one, e.g. a path's or a
 * model's) of every selected run against time, a line per run; --window S averages it over
 * S-second bins. */
int plot_series(struct plot *p)
{
    const char *name = p->o->series ? p->o->series : "executors";
    const char *key = p->o->key ? p->o->key : "";
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(p->db, "SELECT t_s, value FROM timeseries WHERE run_id = ?1 AND "
                                  "series = ?2 AND key = ?3 ORDER BY t_s", -1, &q, NULL) != SQLITE_OK)
        return plot_db_fail(p, "reading the time series");
    char file[200], base[4096];
    snprintf(file, sizeof file, "series-%s%s%s", name, key[0] ? "-" : "", key);
    plot_file_safe(file);
    FILE *f = plot_dat_open(p, file, base, sizeof base);
    if (!f) {
        sqlite3_finalize(q);
        return SIM_EIO;
    }
    int rc = 0, lines = 0;
    double w = p->o->window_s;
    char **drawn = calloc((size_t)p->n + 1, sizeof *drawn);   /* the lines' titles */
    if (!drawn)
        rc = SIM_ENOMEM;
    for (int i = 0; i < p->n && !rc; i++) {
        sqlite3_reset(q);
        sqlite3_bind_int64(q, 1, p->r[i].id);
        sqlite3_bind_text(q, 2, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 3, key, -1, SQLITE_STATIC);
        char *t = plot_series_title(&p->r[i], NULL, NULL);
        if (!t) {
            rc = SIM_ENOMEM;
            break;
        }
        double bin = NAN, sum = 0;
        int n = 0, step;
        while ((step = sqlite3_step(q)) == SQLITE_ROW) {
            double ts = sqlite3_column_double(q, 0), v = sqlite3_column_double(q, 1);
            double b = w > 0 ? floor(ts / w) : ts;
            if (n && b != bin) {
                fprintf(f, "%.6g\t%.6g\n", w > 0 ? (bin + 0.5) * w : bin, sum / n);
                sum = 0, n = 0;
            }
            if (!n && isnan(bin)) {    /* the run's first row: its block and title */
                fputs(lines ? "\n\n" : "", f), plot_put_label(f, plot_line_label(p, t));
                fputc('\n', f);
                drawn[lines++] = t;
                t = NULL;
            }
            bin = b, sum += v, n++;
        }
        if (n)
            fprintf(f, "%.6g\t%.6g\n", w > 0 ? (bin + 0.5) * w : bin, sum / n);
        if (step != SQLITE_DONE)
            rc = plot_db_fail(p, "reading the time series");
        free(t);
    }
    sqlite3_finalize(q);
    int rc2 = plot_dat_close(p, f, base);
    if (!rc)
        rc = rc2;
    if (!rc && lines == 0)
        rc = sim_err_set(SIM_EINVAL, "%s: no time series \"%s\"%s%s%s in the selected runs",
                         p->o->db, name, key[0] ? " with key \"" : "", key, key[0] ? "\"" : "");
    if (rc) {
        for (int i = 0; drawn && i < lines; i++)
            free(drawn[i]);
        free(drawn);
        plot_discard(p, base);
        return rc;
    }
    char vars[8192], title[512], ylab[256], words[160];
    plot_word_series(name, words, sizeof words);
    const char *kw = plot_display_name(key);
    snprintf(title, sizeof title, "%s: %s%s%s", p->label, words, key[0] ? " of " : "", kw);
    plot_title_policy(p, title, sizeof title);
    if (w > 0)
        snprintf(ylab, sizeof ylab, "%s (mean over %g s)", words, w);
    else
        snprintf(ylab, sizeof ylab, "%s", words);
    plot_gp_start(vars, sizeof vars, base, title);
    plot_gp_set(vars, sizeof vars, "ylab", ylab);
    plot_gp_append(vars, sizeof vars, "; nser = %d", lines);
    rc = plot_series_colours(p, drawn, lines, vars, sizeof vars);
    for (int i = 0; i < lines; i++)
        free(drawn[i]);
    free(drawn);
    return rc ? rc : plot_render(p, "series", base, vars);
}

/* ---- capacity plans ---- */

/* One figure per plan in the database (matching --name): the GPUs over time of its static
 * run and of its autoscaled run, and the offered load. With `all`, a database without plans
 * draws none; asked for by name, it is an error. */
int plot_plan(struct plot *p)
{
    const struct opts *o = p->o;
    if (p->version < 3) {
        if (o->all)
            return 0;
        return sim_err_set(SIM_EINVAL, "%s: schema version %d has no capacity plans (version 3)",
                           o->db, p->version);
    }
    sqlite3_stmt *q = NULL, *ts = NULL;
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT plan, name, static_gpus, static_run_id, static_gpu_s, "
             "autoscaler, autoscale_run_id, autoscale_gpu_s, autoscale_slo_met, (SELECT "
             "policy FROM runs WHERE id = COALESCE(static_run_id, autoscale_run_id)) FROM "
             "plans %s ORDER BY created_at, plan", o->name_glob ? "WHERE name GLOB ?1" : "");
    if (sqlite3_prepare_v2(p->db, sql, -1, &q, NULL) != SQLITE_OK)
        return plot_db_fail(p, "reading plans");
    if (o->name_glob)
        sqlite3_bind_text(q, 1, o->name_glob, -1, SQLITE_STATIC);
    if (sqlite3_prepare_v2(p->db, "SELECT a.t_s, a.value, b.value, c.value FROM timeseries a "
                           "LEFT JOIN timeseries b ON b.run_id = ?2 AND b.series = 'executors' "
                           "AND b.t_s = a.t_s LEFT JOIN timeseries c ON c.run_id = a.run_id AND "
                           "c.series = 'offered_rps' AND c.t_s = a.t_s WHERE a.run_id = ?1 AND "
                           "a.series = 'executors' ORDER BY a.t_s", -1, &ts, NULL) != SQLITE_OK) {
        sqlite3_finalize(q);
        return plot_db_fail(p, "reading the plans' time series");
    }
    int rc = 0, nplans = 0;
    while (!rc && sqlite3_step(q) == SQLITE_ROW) {
        nplans++;
        const char *id = (const char *)sqlite3_column_text(q, 0);
        const char *name = (const char *)sqlite3_column_text(q, 1);
        bool has_static = sqlite3_column_type(q, 3) != SQLITE_NULL;
        bool has_as = sqlite3_column_type(q, 6) != SQLITE_NULL;
        if (!has_static && !has_as)
            continue;                   /* a plan that found nothing and ran no autoscaler */
        char stat_title[256], as_title[256], title[512];
        if (has_static)
            snprintf(stat_title, sizeof stat_title, "static plan: %d GPUs, %.2f GPU-hours simulated",
                     sqlite3_column_int(q, 2), sqlite3_column_double(q, 4) / 3600);
        else
            snprintf(stat_title, sizeof stat_title, "static plan: none found");
        snprintf(as_title, sizeof as_title, "autoscaler %s: %.2f GPU-hours, SLO %s",
                 sqlite3_column_type(q, 5) != SQLITE_NULL
                     ? plot_display_name((const char *)sqlite3_column_text(q, 5)) : "-",
                 sqlite3_column_double(q, 7) / 3600, sqlite3_column_int(q, 8) ? "met" : "missed");
        /* the plan's name once, and its configuration's hash to tell plans of one name apart
         * (its id is "NAME@HASH") */
        const char *hash = strchr(id, '@');
        const char *pol = sqlite3_column_type(q, 9) == SQLITE_TEXT
                              ? (const char *)sqlite3_column_text(q, 9) : "";
        snprintf(title, sizeof title, "%s%s%s%s: capacity plan (config %.6s)", name,
                 pol[0] ? " (" : "", plot_display_name(pol), pol[0] ? ")" : "",
                 hash ? hash + 1 : id);
        /* OUT/NAME-plan-N.*: named by the plan's experiment, numbered in creation order */
        char base[4096], safe[256], path[4200];
        snprintf(safe, sizeof safe, "%s", name);
        plot_file_safe(safe);
        snprintf(base, sizeof base, "%s/%s-plan-%d", o->out, safe, nplans);
        snprintf(path, sizeof path, "%s.dat", base);
        int fd = (rc = sim_out_not_input(path, o->db, "the database")) ? rc
                 : sim_out_fresh(path); /* a link planted at the name is replaced */
        FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
        if (!f) {
            if (fd >= 0) {
                close(fd);
                rc = sim_err_set(SIM_EIO, "%s: cannot write: %s", path, strerror(errno));
            } else {
                rc = fd;
            }
            break;
        }
        fputs("t_s\tstatic\tautoscaled\toffered_rps\n", f);
        /* the static run's samples (or the autoscaled run's where there is no static run) */
        sqlite3_reset(ts);
        sqlite3_bind_int64(ts, 1, sqlite3_column_int64(q, has_static ? 3 : 6));
        sqlite3_bind_int64(ts, 2, has_as ? sqlite3_column_int64(q, 6) : -1);
        int rows = 0, st;
        while ((st = sqlite3_step(ts)) == SQLITE_ROW) {
            fprintf(f, "%.6g", sqlite3_column_double(ts, 0));
            for (int c = 1; c <= 3; c++) {
                int col = has_static ? c : c == 1 ? 2 : c;   /* no static run: its column "?" */
                if ((!has_static && c == 1) || sqlite3_column_type(ts, col) == SQLITE_NULL)
                    fputs("\t?", f);
                else
                    fprintf(f, "\t%.6g", sqlite3_column_double(ts, col));
            }
            fputc('\n', f);
            rows++;
        }
        if (st != SQLITE_DONE)
            rc = plot_db_fail(p, "reading the plans' time series");
        int rc2 = plot_dat_close(p, f, base);
        if (!rc)
            rc = rc2;
        if (!rc && rows == 0) {
            plot_discard(p, base);
            if (o->all) {                   /* `plot all`: the other figures still drawn */
                fprintf(stderr, "plot: plan %s skipped: its runs have no time series "
                        "(metrics.sample_period_s was 0)\n", id);
                continue;
            }
            rc = sim_err_set(SIM_EINVAL, "plan %s: its runs have no time series "
                             "(metrics.sample_period_s was 0?)", id);
        }
        if (rc)
            break;
        char vars[2048];
        plot_gp_start(vars, sizeof vars, base, title);
        plot_gp_set(vars, sizeof vars, "stat_title", stat_title);
        plot_gp_set(vars, sizeof vars, "as_title", as_title);
        plot_gp_append(vars, sizeof vars, "; has_as = %d; polcolour = '%s'",
                       has_as && has_static ? 1 : 0, plot_policy_colour(pol));
        rc = plot_render(p, "plan", base, vars);
    }
    sqlite3_finalize(q);
    sqlite3_finalize(ts);
    if (!rc && nplans == 0 && !o->all)
        rc = sim_err_set(SIM_EINVAL, "%s: no capacity plans%s%s (servesim plan writes them)",
                         o->db, o->name_glob ? " named " : "", o->name_glob ? o->name_glob : "");
    return rc;
}
