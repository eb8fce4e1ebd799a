/* plot — `servesim plot` (see plot.h): its options, the runs it selects from the results
 * database, and the dispatch to each figure family (plot_int.h names the files; each
 * aggregates the runs into one figure's data, writes it as .dat and renders it with gnuplot
 * as PNG and SVG through plot_gnuplot.c). */
#include "plot.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plot_int.h"
#include "sim_err.h"
#include "sim_grow.h"
#include "sim_readback.h"

static const char usage[] =
    "usage: servesim plot KIND... [options]\n"
    "\n"
    "kinds:\n"
    "  goodput        goodput by policy: bars grouped by experiment setting (sweep settings)\n"
    "  goodput-gpus   goodput against cluster.gpus, a line per policy and setting\n"
    "  goodput-slo    goodput against models[0].slo_ms\n"
    "  goodput-vs     goodput against the config value at --x PATH\n"
    "  latency-cdf    latency CDF per model and policy (seeds merged)\n"
    "  queue-cdf      queueing delay (arrival to batch start) CDF per model and policy\n"
    "  ttft-cdf       an LLM model's time to first token: CDF per model and policy\n"
    "  tpot-cdf       an LLM model's time per output token: CDF per model and policy\n"
    "  path-cdf       end-to-end latency CDF per execution path of an application: a\n"
    "                  figure per path (its SLA as a line), a line per run\n"
    "  batch-hist     batch-size distribution per policy\n"
    "  timeline       one run over time: offered vs served rate, GPUs, bad rate, autoscaler\n"
    "  series         one time series of every selected run against time (--series)\n"
    "  plan           capacity plans (servesim plan): GPUs over time of the static plan and\n"
    "                  of the autoscaler, the offered load, each one's GPU-hours (--name:\n"
    "                  plans of matching experiment names)\n"
    "  gpu-alloc      GPUs by use over time (inference, training, notebooks, idle) stacked,\n"
    "                  a panel per configuration (its lowest seed's run)\n"
    "  job-workers    training jobs' running time at 1, 2, ... workers per configuration\n"
    "  job-cdf        training jobs' execution time (arrival to end) CDF per configuration\n"
    "  sla-clients    SLA violations against active closed-loop clients per configuration\n"
    "  all            every kind above but goodput-vs and series (ttft-cdf and tpot-cdf\n"
    "                  where the runs have LLM models, path-cdf where they have paths; the\n"
    "                  last four where they have jobs, notebooks, clients)\n"
    "Goodput is the goodput search's result for `servesim goodput` runs, else the on-time\n"
    "throughput (the y label says which). Runs differing only in seed are averaged (error\n"
    "bars: standard deviation); runs of one setting and policy from different\n"
    "configurations are not: each keeps its own bar or line, labelled with what differs in\n"
    "words, \"(work-conserving)\", or \"(configuration KEY)\" (the config's hash without its\n"
    "seed, and without the x value on an x axis) where nothing short does. Labels, legends\n"
    "and axis titles say settings in words (\"8 frontends\", \"offered load (req/s)\"): the\n"
    "sweep file's \"labels\" where it gives them, else servesim's table of known keys.\n"
    "Many settings are drawn as small multiples: a panel per setting, a bar or line per\n"
    "policy in its colour (the same in every figure), the legend once at the top; a\n"
    "figure of one policy's runs names it in its title. Gallery: docs/figures.md.\n"
    "\n"
    "options:\n"
    "  --db FILE       results database (default servesim.db; env SERVESIM_DB)\n"
    "  --run ID        plot this run (repeatable; timeline: the run shown, default the latest)\n"
    "  --name GLOB     runs whose experiment name matches\n"
    "  --model NAME    latency-cdf, queue-cdf, batch-hist: only this model (default: each\n"
    "                  model; with several policies or settings and more than 12 lines,\n"
    "                  models merged; CDF lines beyond 10, batch-hist series beyond 6,\n"
    "                  folded into one \"others\" series)\n"
    "  --x PATH        goodput-vs: the config path on the x axis, e.g. workload.rate_rps\n"
    "  --y METRIC      goodput-vs (and -gpus, -slo): draw goodput (default), bad_rate,\n"
    "                  gpu_s (executor-seconds) or gpus_max against x\n"
    "  --ratio         goodput: write each bar's ratio to the first policy's above it\n"
    "  --path NAME     path-cdf: only this execution path\n"
    "  --series NAME   series: the time series (default executors; e.g. bad_rate,\n"
    "                  offered_rps, fa2.instances, path_bad_rate)\n"
    "  --key KEY       series: the key of a keyed series (a model or path name)\n"
    "  --window S      series: mean over S-second bins (default: every sample)\n"
    "  --out DIR       where the files go (default plots-out; created)\n"
    "  --prefix P      file names P-KIND.png/.svg/.dat (default: the experiment's name)\n"
    "  --size WxH      image size in pixels (default 900x560)\n"
    "  --scripts DIR   read KIND scripts from DIR (e.g. plots/) instead of the built-in copies\n"
    "\n"
    "Exit status: 0 success, 2 bad input, 1 gnuplot or I/O error.\n";

static const char *const kind_names[K_N] = {"goodput", "goodput-gpus", "goodput-slo",
                                            "goodput-vs", "latency-cdf", "queue-cdf",
                                            "ttft-cdf", "tpot-cdf", "path-cdf", "batch-hist", "timeline", "series",
                                            "plan", "gpu-alloc", "job-workers", "job-cdf",
                                            "sla-clients"};

const char *const plot_y_names[Y_N] = {"goodput", "bad_rate", "gpu_s", "gpus_max"};

/* ---- runs, options, main ---- */

static void runs_free(struct plot *p)
{
    for (int i = 0; i < p->n; i++) {
        free(p->r[i].name);
        free(p->r[i].group);
        free(p->r[i].kind);
        free(p->r[i].policy);
        free(p->r[i].settings);
        free(p->r[i].labels);
        free(p->r[i].config);
    }
    free(p->r);
    p->r = NULL;
    p->n = 0;
}

/* Does the database hold capacity plans (schema 3 on)? */
static bool has_plans(struct plot *p)
{
    sqlite3_stmt *q;
    bool any = false;
    if (p->version >= 3 &&
        sqlite3_prepare_v2(p->db, "SELECT 1 FROM plans LIMIT 1", -1, &q, NULL) == SQLITE_OK) {
        any = sqlite3_step(q) == SQLITE_ROW;
        sqlite3_finalize(q);
    }
    return any;
}

static int load_runs(struct plot *p)
{
    const struct opts *o = p->o;
    sqlite3_stmt *q;
    int rc = sim_results_open(o->db, &p->db, &p->version);
    if (rc)
        return rc;
    char sql[2048], ids[1024] = "";
    for (int i = 0; i < o->nruns; i++) {
        size_t len = strlen(ids);
        snprintf(ids + len, sizeof ids - len, "%s%lld", i ? "," : "", (long long)o->runs[i]);
    }
    snprintf(sql, sizeof sql,
             "SELECT r.id, r.name, r.kind, r.policy, r.seed, r.config_json, r.goodput_rps, "
             "r.ontime_rps, %s, r.bad_rate, r.gpu_s, r.gpus_max, %s, %s FROM runs r %s "
             "WHERE r.status = 'ok' %s%s%s %s %s ORDER BY %s r.id",
             p->version >= 2 ? "sp.settings_json" : "NULL",
             p->version >= 2 ? "sp.sweep" : "NULL",
             p->version >= 12 ? "sp.labels_json" : "NULL",
             p->version >= 2 ? "LEFT JOIN sweep_points sp ON sp.run_id = r.id" : "",
             o->nruns ? "AND r.id IN (" : "", ids, o->nruns ? ")" : "",
             o->name_glob ? "AND r.name GLOB ?1" : "",
             o->nruns ? "" : "AND r.kind IN ('run', 'goodput')",
             /* a sweep's runs in its grid's order, whatever order its workers finished in:
              * groups, panels and series follow the sweep file */
             p->version >= 2 ? "COALESCE(sp.sweep, ''), sp.point," : "");
    if (sqlite3_prepare_v2(p->db, sql, -1, &q, NULL) != SQLITE_OK)
        return plot_db_fail(p, "reading runs");
    if (o->name_glob)
        sqlite3_bind_text(q, 1, o->name_glob, -1, SQLITE_STATIC);
    int cap = 0;
    while (!rc && sqlite3_step(q) == SQLITE_ROW) {
        if ((rc = sim_grow(&p->r, &cap, p->n + 1, sizeof *p->r, 64)))
            break;
        struct prun *r = &p->r[p->n++];
        r->id = sqlite3_column_int64(q, 0);
        r->name = plot_strdup((const char *)sqlite3_column_text(q, 1));
        r->kind = plot_strdup((const char *)sqlite3_column_text(q, 2));
        r->policy = plot_strdup((const char *)sqlite3_column_text(q, 3));
        const char *seed = (const char *)sqlite3_column_text(q, 4);
        r->seed = seed ? strtoull(seed, NULL, 10) : 0;
        r->config = plot_strdup((const char *)sqlite3_column_text(q, 5));
        r->goodput = strcmp(r->kind, "goodput") == 0 && sqlite3_column_type(q, 6) != SQLITE_NULL;
        r->value = sqlite3_column_double(q, r->goodput ? 6 : 7);
        for (int k = 0; k < 3; k++)
            r->metric[k] = sqlite3_column_type(q, 9 + k) == SQLITE_NULL
                               ? NAN : sqlite3_column_double(q, 9 + k);
        r->settings = sqlite3_column_type(q, 8) == SQLITE_NULL
                          ? NULL : plot_strdup((const char *)sqlite3_column_text(q, 8));
        r->labels = sqlite3_column_type(q, 13) == SQLITE_NULL
                        ? NULL : plot_strdup((const char *)sqlite3_column_text(q, 13));
        const char *sw = (const char *)sqlite3_column_text(q, 12);   /* NAME@HASH */
        r->group = plot_strdup(sw ? sw : r->name ? r->name : "");
        if (r->group && strchr(r->group, '@'))
            *strchr(r->group, '@') = '\0';
        if (!r->name || !r->kind || !r->policy || !r->config || !r->group) {
            rc = SIM_ENOMEM;
            break;
        }
        cJSON *cj = cJSON_Parse(r->config);  /* bad input, as export and compare say */
        if (!cJSON_IsObject(cj))
            rc = sim_err_set(SIM_EINVAL, "%s: run %lld: config_json is not valid JSON", o->db,
                             (long long)r->id);
        cJSON_Delete(cj);
    }
    sqlite3_finalize(q);
    /* the GPUs each run's policy used (ran a batch on): goodput-gpus says where it left some
     * idle, so that more GPUs could not change its goodput there */
    sqlite3_stmt *qu = NULL;
    bool with_class = p->version >= 7;
    if (!rc && sqlite3_prepare_v2(p->db, with_class
            ? "SELECT count(*) FROM executor_stats WHERE run_id = ? AND batches > 0 AND "
              "class = 'gpu'"
            : "SELECT count(*) FROM executor_stats WHERE run_id = ? AND batches > 0",
            -1, &qu, NULL) != SQLITE_OK)
        qu = NULL;
    for (int i = 0; i < p->n; i++) {
        p->r[i].gpus_used = NAN;
        if (!qu)
            continue;
        sqlite3_reset(qu);
        sqlite3_bind_int64(qu, 1, p->r[i].id);
        if (sqlite3_step(qu) == SQLITE_ROW)
            p->r[i].gpus_used = sqlite3_column_double(qu, 0);
    }
    sqlite3_finalize(qu);
    for (int i = 0; !rc && i < o->nruns; i++) {
        bool found = false;
        for (int k = 0; k < p->n; k++)
            found |= p->r[k].id == o->runs[i];
        if (!found)
            rc = sim_err_set(SIM_EINVAL, "%s: --run %lld: no such finished run", o->db,
                             (long long)o->runs[i]);
    }
    bool plans_only = true;             /* `plot plan` reads plans, not these runs */
    for (int k = 0; k < K_N; k++)
        plans_only &= k == K_PLAN || !o->kinds[k];
    if (!rc && p->n == 0 && !plans_only && !(o->all && has_plans(p)))
        rc = sim_err_set(SIM_EINVAL, "%s: no finished runs match the selection", o->db);
    return rc;
}

static int parse(int argc, char **argv, struct opts *o)
{
    memset(o, 0, sizeof *o);
    o->db = getenv("SERVESIM_DB");
    if (!o->db || !o->db[0])
        o->db = "servesim.db";
    o->out = "plots-out";
    o->w = 900;
    o->h = 560;
    int nk = 0, rc;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        bool nx = i + 1 < argc;
        if (strcmp(a, "--db") == 0 && nx)
            o->db = argv[++i];
        else if (strcmp(a, "--name") == 0 && nx)
            o->name_glob = argv[++i];
        else if (strcmp(a, "--model") == 0 && nx)
            o->model = argv[++i];
        else if (strcmp(a, "--x") == 0 && nx)
            o->xpath = argv[++i];
        else if (strcmp(a, "--y") == 0 && nx) {
            const char *v = argv[++i];
            o->y = 0;
            while (o->y < Y_N && strcmp(v, plot_y_names[o->y]) != 0)
                o->y++;
            if (o->y == Y_N)
                return sim_err_set(SIM_EUSAGE, "--y: expected goodput, bad_rate, gpu_s or "
                                   "gpus_max, got \"%s\"", v);
        } else if (strcmp(a, "--path") == 0 && nx)
            o->path = argv[++i];
        else if (strcmp(a, "--series") == 0 && nx)
            o->series = argv[++i];
        else if (strcmp(a, "--key") == 0 && nx)
            o->key = argv[++i];
        else if (strcmp(a, "--window") == 0 && nx) {
            if ((rc = sim_arg_num(a, argv[++i], 0, true, INFINITY, &o->window_s)))
                return rc;
        }
        else if (strcmp(a, "--ratio") == 0)
            o->ratio = true;
        else if (strcmp(a, "--out") == 0 && nx)
            o->out = argv[++i];
        else if (strcmp(a, "--prefix") == 0 && nx)
            o->prefix = argv[++i];
        else if (strcmp(a, "--scripts") == 0 && nx)
            o->scripts = argv[++i];
        else if (strcmp(a, "--run") == 0 && nx) {
            long long id;
            if ((rc = sim_arg_int(a, argv[++i], 1, LLONG_MAX, &id)))
                return rc;
            if (o->nruns == MAX_RUN_IDS)
                return sim_err_set(SIM_EUSAGE, "--run: at most %d", MAX_RUN_IDS);
            o->runs[o->nruns++] = id;
        } else if (strcmp(a, "--size") == 0 && nx) {
            const char *v = argv[++i];
            int w, h;
            char c;
            if (sscanf(v, "%dx%d%c", &w, &h, &c) != 2 || w < 100 || h < 100 || w > 8000 ||
                h > 8000)
                return sim_err_set(SIM_EUSAGE, "--size: expected WxH in pixels, each in "
                                   "[100, 8000], got \"%s\"", v);
            o->w = w;
            o->h = h;
        } else if (a[0] == '-') {
            return sim_err_set(SIM_EUSAGE, "plot: unknown option or missing value: %s", a);
        } else if (strcmp(a, "all") == 0) {
            for (int k = 0; k < K_N; k++)
                o->kinds[k] = k != K_GOODPUT_VS && k != K_SERIES;
            o->all = true;
            nk++;
        } else {
            int k = 0;
            while (k < K_N && strcmp(a, kind_names[k]) != 0)
                k++;
            if (k == K_N)
                return sim_err_set(SIM_EUSAGE, "plot: unknown kind \"%s\" (expected goodput, "
                                   "goodput-gpus, goodput-slo, goodput-vs, latency-cdf, "
                                   "queue-cdf, path-cdf, batch-hist, timeline, series, plan, "
                                   "gpu-alloc, job-workers, job-cdf, sla-clients or all)",
                                   a);
            o->kinds[k] = true;
            nk++;
        }
    }
    if (!nk)
        return sim_err_set(SIM_EUSAGE, "plot: expected a KIND (see servesim plot --help)");
    if (o->kinds[K_GOODPUT_VS] && !o->xpath)
        return sim_err_set(SIM_EUSAGE, "plot goodput-vs: expected --x PATH (a config value)");
    return 0;
}

static int plot_kind(struct plot *p, int k);

int plot_main(int argc, char **argv)
{
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        }
    struct opts o;
    struct names constant = {0};
    struct plot p = {.o = &o, .same = &constant};
    int rc = parse(argc, argv, &o);
    for (const char *c = rc ? "" : o.out; *c && !rc; c++)  /* gnuplot takes a path in quotes */
        if ((unsigned char)*c < 0x20 || *c == '"' || *c == 0x7f)
            rc = sim_err_set(SIM_EUSAGE, "--out: the folder's name holds byte 0x%02x at "
                             "position %d, which gnuplot cannot take in a file name: choose "
                             "another", (unsigned)(unsigned char)*c, (int)(c - o.out));
    if (!rc)
        rc = load_runs(&p);
    if (!rc && mkdir(o.out, 0777) && errno != EEXIST)
        rc = sim_err_set(SIM_EIO, "%s: cannot create: %s", o.out, strerror(errno));
    if (!rc) {
        bool same = true, same_group = true;
        for (int i = 1; i < p.n; i++) {
            same &= strcmp(p.r[i].name, p.r[0].name) == 0;
            same_group &= strcmp(p.r[i].group, p.r[0].group) == 0;
        }
        snprintf(p.prefix, sizeof p.prefix, "%s", o.prefix ? o.prefix
                                                  : p.n == 0 ? "plans"
                                                  : same ? p.r[0].name
                                                  : same_group ? p.r[0].group : "runs");
        snprintf(p.label, sizeof p.label, "%s", p.prefix);
        plot_file_safe(p.prefix);
    }
    /* `all` over runs of several experiments (no --name, --run or --prefix): each experiment's
     * figures apart, named after it, rather than every experiment in one crowded figure; the
     * runs of one sweep are one experiment, its cases compared in its figures */
    int ngroups = 0;
    char **groups = NULL;
    if (!rc && o.all && !o.name_glob && !o.nruns && !o.prefix && p.n > 0) {
        groups = calloc((size_t)p.n, sizeof *groups);
        if (!groups)
            rc = SIM_ENOMEM;
        for (int i = 0; i < p.n && !rc; i++) {
            int g = 0;
            while (g < ngroups && strcmp(groups[g], p.r[i].group) != 0)
                g++;
            if (g == ngroups)
                groups[ngroups++] = p.r[i].group;
        }
        if (ngroups > 1)
            fprintf(stderr, "plot: %d experiments in %s: the figures of each are drawn apart "
                    "(--name GLOB picks some)\n", ngroups, o.db);
    }
    if (ngroups > 1) {
        struct prun *all = p.r;
        int nall = p.n;
        struct prun *sub = calloc((size_t)nall, sizeof *sub);
        if (!sub)
            rc = SIM_ENOMEM;
        for (int g = 0; g < ngroups && !rc; g++) {
            p.n = 0;
            for (int i = 0; i < nall; i++)
                if (strcmp(all[i].group, groups[g]) == 0)
                    sub[p.n++] = all[i];
            p.r = sub;
            snprintf(p.prefix, sizeof p.prefix, "%s", groups[g]);
            snprintf(p.label, sizeof p.label, "%s", groups[g]);
            plot_file_safe(p.prefix);
            for (int k = 0; k < K_N && !rc; k++)
                if (o.kinds[k] && k != K_PLAN)
                    rc = plot_kind(&p, k);
        }
        free(sub);
        p.r = all;
        p.n = nall;
        if (!rc && o.kinds[K_PLAN])         /* plans are their own experiments already */
            rc = plot_kind(&p, K_PLAN);
    }
    for (int k = 0; k < K_N && !rc && ngroups <= 1; k++) {
        if (!o.kinds[k] || (p.n == 0 && k != K_PLAN))   /* (a database of plans only) */
            continue;
        rc = plot_kind(&p, k);
    }
    free(groups);
    runs_free(&p);
    plot_names_free(&constant);
    sqlite3_close(p.db);
    if (rc) {
        fprintf(stderr, "servesim plot: %s\n", sim_err_msg());
        return sim_err_is_input(rc) ? 2 : 1;
    }
    return 0;
}

/* One kind of figure over the runs in p. */
/* The settings keys whose value is the same in every run of p (p->same; none with one run:
 * its label then keeps them), and each run pointed at them. */
static int constant_settings(struct plot *p)
{
    plot_names_free(p->same);
    int rc = 0;
    cJSON **j = p->n > 1 ? calloc((size_t)p->n, sizeof *j) : NULL;   /* each run's, parsed once */
    if (p->n > 1 && !j)
        return SIM_ENOMEM;
    for (int i = 0; j && i < p->n; i++)
        j[i] = p->r[i].settings ? cJSON_Parse(p->r[i].settings) : NULL;
    for (const cJSON *it = j && j[0] ? j[0]->child : NULL; it && !rc; it = it->next) {
        bool same = true;
        for (int i = 1; i < p->n && same; i++)
            same = cJSON_Compare(it, j[i] ? cJSON_GetObjectItemCaseSensitive(j[i], it->string)
                                          : NULL, true);
        if (same && plot_names_index(p->same, it->string) < 0)
            rc = SIM_ENOMEM;
    }
    for (int i = 0; j && i < p->n; i++)
        cJSON_Delete(j[i]);
    free(j);
    for (int i = 0; i < p->n; i++)
        p->r[i].same = p->same;
    return rc;
}

static int plot_kind(struct plot *p, int k)
{
    const struct opts *o = p->o;
    int rc = constant_settings(p);
    if (rc)
        return rc;
    plot_gp_begin();
    {
        switch ((enum kind)k) {
        case K_GOODPUT: rc = plot_goodput(p); break;
        case K_GOODPUT_GPUS: rc = plot_goodput_vs(p, "goodput-gpus", "cluster.gpus", "GPUs"); break;
        case K_GOODPUT_SLO:
            rc = plot_goodput_vs(p, "goodput-slo", "models[0].slo_ms", "SLO (ms)");
            break;
        case K_GOODPUT_VS: {
            char xl[160];
            plot_word_axis(o->xpath, xl, sizeof xl);
            rc = plot_goodput_vs(p, "goodput-vs", o->xpath, xl);
            break;
        }
        case K_LAT_CDF: case K_QUEUE_CDF: case K_TTFT_CDF: case K_TPOT_CDF:
            rc = plot_cdf(p, (enum kind)k);
            break;
        case K_PATH_CDF: rc = plot_path_cdf(p); break;
        case K_BATCH: rc = plot_batch(p); break;
        case K_SERIES: rc = plot_series(p); break;
        case K_TIMELINE: rc = plot_timeline(p); break;
        case K_PLAN: rc = plot_plan(p); break;
        case K_GPU_ALLOC: rc = plot_gpu_alloc(p); break;
        case K_JOB_WORKERS: rc = plot_job_workers(p); break;
        case K_JOB_CDF: rc = plot_job_cdf(p); break;
        case K_SLA_CLIENTS: rc = plot_sla_clients(p); break;
        case K_N: break;
        }
    }
    return rc;
}
