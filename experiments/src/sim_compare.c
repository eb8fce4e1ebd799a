/* sim_compare — `servesim compare BASE NEW` (see sim_compare.h): match experiments, summarise
 * the seeds on each side, Welch's t-test per metric, verdicts, and the report as a table,
 * JSON or Markdown. */
#include "sim_compare.h"

#include <cjson/cJSON.h>
#include <fnmatch.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "sim_readback.h"

static const char usage[] =
    "usage: servesim compare BASE NEW [options]\n"
    "\n"
    "BASE and NEW are results databases or their text export (servesim export). Runs are\n"
    "matched by experiment: name, kind and config hash without the seed. For each experiment\n"
    "and model: goodput, p99, bad rate and GPU-seconds (and, for runs with training jobs,\n"
    "the makespan and the jobs' mean execution time), the mean over seeds with a 95%\n"
    "confidence interval, the difference and Welch's t-test.\n"
    "\n"
    "options:\n"
    "  --tol R           relative change that counts (default 0.05)\n"
    "  --bad-tol A       absolute change of the bad rate that counts (default 0.005)\n"
    "  --alpha A         significance level of the t-test (default 0.05)\n"
    "  --metrics LIST    metrics that can regress (default all: goodput_rps,p99_ms,\n"
    "                    bad_rate,gpu_s,makespan_s,job_exec_s)\n"
    "  --match hash|label  match on the config hash (default), or on policy and sweep\n"
    "                    settings, to compare runs whose configs differ on purpose\n"
    "  --name GLOB       only experiments whose name matches (both sides)\n"
    "  --allow-missing   experiments of BASE absent from NEW are not a regression\n"
    "  --all             list every row (default: whole runs, and models that changed)\n"
    "  --json            the report as JSON\n"
    "  --markdown        the report as Markdown (for a CI summary)\n"
    "\n"
    "Exit status: 0 no regression, 3 regression (experiments of BASE missing from NEW\n"
    "included), 4 nothing compared with --allow-missing, 2 bad input, 1 internal error.\n";

enum verdict { V_NA, V_SAME, V_REGRESSION, V_IMPROVED };
static const char *const verdict_names[] = {"n/a", "same", "REGRESSION", "improved"};

struct opts {
    const char *base, *new_;
    double tol, bad_tol, alpha;
    bool gate[SIM_MET_N];
    bool by_label, allow_missing, all, json, markdown;
    const char *name_glob;
};

struct side_stat {
    int n;
    double mean, sd, ci;                /* ci: half-width of the 95% interval (0 for n < 2) */
};

struct metric_cmp {
    struct side_stat b, n;
    double diff, rel, p, ci_lo, ci_hi;
    enum verdict v;
};

/* One (experiment, model) present on at least one side. */
struct row {
    const struct sim_sample *first;     /* names and labels */
    int nb, nn;                         /* runs (seeds) on each side */
    bool run_row;                       /* model "*" */
    struct metric_cmp m[SIM_MET_N];
};

/* An entry of the merged, sorted list of samples of both sides. */
struct entry {
    const struct sim_sample *s;
    int side;                           /* 0 base, 1 new */
    char *group;                        /* the match key */
};

static int cmp_entry(const void *pa, const void *pb)
{
    const struct entry *a = pa, *b = pb;
    int c = strcmp(a->group, b->group);
    if (c)
        return c;
    bool sa = strcmp(a->s->model, "*") == 0, sb = strcmp(b->s->model, "*") == 0;
    if (sa != sb)
        return sa ? -1 : 1;
    if ((c = strcmp(a->s->model, b->s->model)))
        return c;
    return a->side - b->side;
}

static char *group_key(const struct sim_sample *s, bool by_label)
{
    const char *parts[] = {s->name, s->kind, by_label ? s->policy : s->key,
                           by_label ? s->label : ""};
    size_t len = 4;
    for (int i = 0; i < 4; i++)
        len += strlen(parts[i]) + 1;
    char *k = malloc(len);
    if (k)
        snprintf(k, len, "%s\x1f%s\x1f%s\x1f%s", parts[0], parts[1], parts[2], parts[3]);
    return k;
}

static void side_stats(const double *x, int n, struct side_stat *st)
{
    st->n = n;
    st->mean = n ? gsl_stats_mean(x, 1, (size_t)n) : NAN;
    st->sd = n >= 2 ? gsl_stats_sd(x, 1, (size_t)n) : 0;
    st->ci = n >= 2 ? gsl_cdf_tdist_Qinv(0.025, n - 1) * st->sd / sqrt(n) : 0;
}

/* Welch's test of new - base, and the verdict for metric m. */
static void judge(const struct opts *o, int m, struct metric_cmp *c)
{
    c->v = V_NA;
    c->diff = c->rel = c->p = c->ci_lo = c->ci_hi = NAN;
    if (!c->b.n || !c->n.n)
        return;
    c->diff = c->n.mean - c->b.mean;
    c->rel = c->b.mean != 0 ? c->diff / fabs(c->b.mean) : c->diff == 0 ? 0 : copysign(INFINITY, c->diff);
    double vb = c->b.n >= 2 ? c->b.sd * c->b.sd / c->b.n : 0;
    double vn = c->n.n >= 2 ? c->n.sd * c->n.sd / c->n.n : 0;
    double se = sqrt(vb + vn);
    if (se > 0) {
        double den = (c->b.n >= 2 ? vb * vb / (c->b.n - 1) : 0) +
                     (c->n.n >= 2 ? vn * vn / (c->n.n - 1) : 0);
        double df = (vb + vn) * (vb + vn) / den;
        c->p = 2 * gsl_cdf_tdist_Q(fabs(c->diff) / se, df);
        double h = gsl_cdf_tdist_Qinv(0.025, df) * se;
        c->ci_lo = c->diff - h;
        c->ci_hi = c->diff + h;
    } else {
        /* no spread on either side: results are exact (same config and seeds) */
        c->p = c->diff != 0 ? 0 : 1;
        c->ci_lo = c->ci_hi = c->diff;
    }
    bool big = m == SIM_MET_BAD ? fabs(c->diff) > o->bad_tol
                                : fabs(c->diff) > o->tol * fabs(c->b.mean);
    bool worse = sim_metric_higher_is_better[m] ? c->diff < 0 : c->diff > 0;
    if (!big || !(c->p < o->alpha))
        c->v = V_SAME;
    else if (!worse)
        c->v = V_IMPROVED;
    else
        c->v = o->gate[m] ? V_REGRESSION : V_SAME;   /* --metrics: this one cannot regress */
}

/* Builds the rows from both sides; rows are left in match order. */
static int build_rows(const struct opts *o, const struct sim_samples *sb,
                      const struct sim_samples *sn, struct row **out, size_t *nrows)
{
    size_t ne = 0, total = sb->n + sn->n;
    struct entry *e = calloc(total ? total : 1, sizeof *e);
    struct row *rows = calloc(total ? total : 1, sizeof *rows);
    double *vals[2] = {malloc((total + 1) * sizeof(double)), malloc((total + 1) * sizeof(double))};
    int rc = 0;
    if (!e || !rows || !vals[0] || !vals[1]) {
        rc = SIM_ENOMEM;
        goto out;
    }
    for (int side = 0; side < 2; side++) {
        const struct sim_samples *ss = side ? sn : sb;
        for (size_t i = 0; i < ss->n; i++) {
            if (o->name_glob && fnmatch(o->name_glob, ss->s[i].name, 0) != 0)
                continue;
            e[ne].s = &ss->s[i];
            e[ne].side = side;
            if (!(e[ne++].group = group_key(&ss->s[i], o->by_label))) {
                rc = SIM_ENOMEM;
                goto out;
            }
        }
    }
    qsort(e, ne, sizeof *e, cmp_entry);
    size_t nr = 0;
    for (size_t i = 0; i < ne;) {
        size_t j = i;
        while (j < ne && strcmp(e[j].group, e[i].group) == 0 &&
               strcmp(e[j].s->model, e[i].s->model) == 0)
            j++;
        struct row *r = &rows[nr++];
        r->first = e[i].s;
        r->run_row = strcmp(e[i].s->model, "*") == 0;
        for (size_t k = i; k < j; k++) {
            if (e[k].side)
                r->nn++;
            else
                r->nb++;
        }
        for (int m = 0; m < SIM_MET_N; m++) {
            int cnt[2] = {0, 0};
            for (size_t k = i; k < j; k++)
                if (!isnan(e[k].s->v[m]))
                    vals[e[k].side][cnt[e[k].side]++] = e[k].s->v[m];
            side_stats(vals[0], cnt[0], &r->m[m].b);
            side_stats(vals[1], cnt[1], &r->m[m].n);
            judge(o, m, &r->m[m]);
        }
        i = j;
    }
    *out = rows;
    *nrows = nr;
    rows = NULL;
out:
    for (size_t i = 0; i < ne; i++)
        free(e[i].group);
    free(e);
    free(rows);
    free(vals[0]);
    free(vals[1]);
    return rc;
}

static bool row_changed(const struct row *r)
{
    for (int m = 0; m < SIM_MET_N; m++)
        if (r->m[m].v == V_REGRESSION || r->m[m].v == V_IMPROVED)
            return true;
    return false;
}

static bool row_shown(const struct opts *o, const struct row *r)
{
    return o->all || r->run_row || row_changed(r) || !r->nb || !r->nn;
}

static void experiment_text(const struct row *r, char *buf, size_t size)
{
    const struct sim_sample *s = r->first;
    if (s->label[0])
        snprintf(buf, size, "%s %s [%s]", s->name, s->kind, s->label);
    else
        snprintf(buf, size, "%s %s [%s]", s->name, s->kind, s->policy);
}

static void fmt_stat(char *buf, size_t size, const struct side_stat *st)
{
    if (!st->n)
        snprintf(buf, size, "-");
    else if (st->n >= 2)
        snprintf(buf, size, "%.4g ±%.2g (%d)", st->mean, st->ci, st->n);
    else
        snprintf(buf, size, "%.4g (1)", st->mean);
}

static void fmt_change(char *buf, size_t size, const struct metric_cmp *c)
{
    if (isnan(c->diff))
        snprintf(buf, size, "-");
    else if (isinf(c->rel))
        snprintf(buf, size, "%+.3g", c->diff);
    else
        snprintf(buf, size, "%+.3g (%+.1f%%)", c->diff, 100 * c->rel);
}

struct summary {
    int regressions, improvements, only_base, only_new, experiments;
};

static struct summary summarise(const struct row *rows, size_t n)
{
    struct summary s = {0};
    for (size_t i = 0; i < n; i++) {
        const struct row *r = &rows[i];
        if (r->run_row) {
            s.experiments++;
            s.only_base += !r->nn;
            s.only_new += !r->nb;
        }
        for (int m = 0; m < SIM_MET_N; m++) {
            s.regressions += r->m[m].v == V_REGRESSION;
            s.improvements += r->m[m].v == V_IMPROVED;
        }
    }
    return s;
}

static const char *presence(const struct row *r)
{
    return !r->nn ? "only in BASE" : !r->nb ? "only in NEW" : NULL;
}

/* The text table's column widths: each as wide as its widest cell (header included), in
 * columns on a terminal ("±" is two bytes, one column). */
struct widths {
    int exp, model, metric, base, new_, change;
};

static int cols(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;   /* UTF-8: continuation bytes take none */
    return n;
}

/* A cell of the text table: s, then spaces to w columns and one between columns. */
static void cell(const char *s, int w)
{
    printf("%s%*s ", s, w - cols(s), "");
}

/* The rows shown, as a fixed-width table (w: the widths, or NULL to measure them into *fit)
 * or as Markdown table rows (md). */
static void print_rows(const struct opts *o, const struct row *rows, size_t n, bool md,
                       const struct widths *w, struct widths *fit)
{
#define FIT(field, text) (fit->field = fit->field > cols(text) ? fit->field : cols(text))
    for (size_t i = 0; i < n; i++) {
        const struct row *r = &rows[i];
        if (!row_shown(o, r))
            continue;
        char exp[512];
        experiment_text(r, exp, sizeof exp);
        if (presence(r)) {
            if (fit)
                FIT(exp, exp), FIT(model, r->first->model);
            else if (md)
                printf("| %s | %s | | | | | | **%s** |\n", exp, r->first->model, presence(r));
            else
                cell(exp, w->exp), cell(r->first->model, w->model), printf("%s\n", presence(r));
            continue;
        }
        for (int m = 0; m < SIM_MET_N; m++) {
            const struct metric_cmp *c = &r->m[m];
            if (c->v == V_NA || (!o->all && !r->run_row && c->v == V_SAME))
                continue;
            char b[64], nw[64], ch[64], p[16];
            fmt_stat(b, sizeof b, &c->b);
            fmt_stat(nw, sizeof nw, &c->n);
            fmt_change(ch, sizeof ch, c);
            snprintf(p, sizeof p, "%.3g", c->p);
            if (fit) {
                FIT(exp, exp), FIT(model, r->first->model), FIT(metric, sim_metric_names[m]);
                FIT(base, b), FIT(new_, nw), FIT(change, ch);
            } else if (md) {
                printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", exp, r->first->model,
                       sim_metric_names[m], b, nw, ch, p,
                       c->v == V_REGRESSION ? "**REGRESSION**" : verdict_names[c->v]);
            } else {
                cell(exp, w->exp), cell(r->first->model, w->model);
                cell(sim_metric_names[m], w->metric), cell(b, w->base), cell(nw, w->new_);
                cell(ch, w->change), cell(p, 8), printf("%s\n", verdict_names[c->v]);
            }
        }
    }
#undef FIT
}

static void print_table(const struct opts *o, const struct row *rows, size_t n,
                        const struct summary *s)
{
    printf("compare %s -> %s: %d experiments; tolerance %.3g relative, bad rate %.3g absolute; "
           "Welch t-test, alpha %.3g\n\n", o->base, o->new_, s->experiments, o->tol, o->bad_tol,
           o->alpha);
    static const char *const head[] = {"experiment", "model", "metric", "base mean ±95% (n)",
                                       "new mean ±95% (n)", "change"};
    struct widths w = {cols(head[0]), cols(head[1]), cols(head[2]), cols(head[3]),
                       cols(head[4]), cols(head[5])};
    print_rows(o, rows, n, false, NULL, &w);
    cell(head[0], w.exp), cell(head[1], w.model), cell(head[2], w.metric);
    cell(head[3], w.base), cell(head[4], w.new_), cell(head[5], w.change), cell("p", 8);
    printf("verdict\n");
    print_rows(o, rows, n, false, &w, NULL);
    printf("\n%d regression%s, %d improvement%s; %d experiment%s only in BASE%s, %d only in NEW\n",
           s->regressions, s->regressions == 1 ? "" : "s", s->improvements,
           s->improvements == 1 ? "" : "s", s->only_base, s->only_base == 1 ? "" : "s",
           s->only_base && !o->allow_missing ? " (missing from NEW: a regression unless "
                                               "--allow-missing)" : "",
           s->only_new);
}

/* The experiments of one side, "a, b and 3 more", for a message. */
static void side_names(const struct row *rows, size_t n, bool base, char *buf, size_t size)
{
    size_t len = 0;
    int shown = 0, more = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n; i++) {
        const struct row *r = &rows[i];
        if (!r->run_row || !(base ? r->nb : r->nn))
            continue;
        if (shown == 3 || len + 80 > size) {
            more++;
            continue;
        }
        char e[128];
        experiment_text(r, e, sizeof e);
        len += (size_t)snprintf(buf + len, size - len, "%s%s", shown ? ", " : "", e);
        shown++;
    }
    if (more && len < size)
        snprintf(buf + len, size - len, " and %d more", more);
}

static void print_markdown(const struct opts *o, const struct row *rows, size_t n,
                           const struct summary *s, bool failed)
{
    printf("### servesim compare: %s\n\n", failed ? "**regression**" : "no regression");
    printf("`%s` → `%s`: %d experiments, %d regression%s, %d improvement%s, %d only in BASE, "
           "%d only in NEW. Tolerance %.3g relative (bad rate %.3g absolute), Welch t-test at "
           "alpha %.3g.\n\n", o->base, o->new_, s->experiments, s->regressions,
           s->regressions == 1 ? "" : "s", s->improvements, s->improvements == 1 ? "" : "s",
           s->only_base, s->only_new, o->tol, o->bad_tol, o->alpha);
    printf("| experiment | model | metric | base (mean ±95%%, n) | new (mean ±95%%, n) | change | p | verdict |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    print_rows(o, rows, n, true, NULL, NULL);
}

static cJSON *num_or_null(double x)
{
    return isfinite(x) ? cJSON_CreateNumber(x) : cJSON_CreateNull();
}

static cJSON *stat_json(const struct side_stat *st)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "n", st->n);
    cJSON_AddItemToObject(j, "mean", num_or_null(st->mean));
    cJSON_AddItemToObject(j, "sd", num_or_null(st->sd));
    cJSON_AddItemToObject(j, "ci95", num_or_null(st->ci));
    return j;
}

static int print_json(const struct opts *o, const struct row *rows, size_t n,
                      const struct summary *s, bool failed)
{
    cJSON *j = cJSON_CreateObject(), *arr = cJSON_CreateArray();
    cJSON_AddStringToObject(j, "base", o->base);
    cJSON_AddStringToObject(j, "new", o->new_);
    cJSON_AddStringToObject(j, "match", o->by_label ? "label" : "hash");
    cJSON_AddNumberToObject(j, "tolerance", o->tol);
    cJSON_AddNumberToObject(j, "bad_rate_tolerance", o->bad_tol);
    cJSON_AddNumberToObject(j, "alpha", o->alpha);
    cJSON_AddNumberToObject(j, "experiments", s->experiments);
    cJSON_AddNumberToObject(j, "regressions", s->regressions);
    cJSON_AddNumberToObject(j, "improvements", s->improvements);
    cJSON_AddNumberToObject(j, "only_in_base", s->only_base);
    cJSON_AddNumberToObject(j, "only_in_new", s->only_new);
    cJSON_AddBoolToObject(j, "regression", failed);
    cJSON_AddItemToObject(j, "rows", arr);
    for (size_t i = 0; i < n; i++) {
        const struct row *r = &rows[i];
        const struct sim_sample *f = r->first;
        cJSON *x = cJSON_CreateObject(), *ms = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "name", f->name);
        cJSON_AddStringToObject(x, "kind", f->kind);
        cJSON_AddStringToObject(x, "policy", f->policy);
        cJSON_AddStringToObject(x, "label", f->label);
        cJSON_AddStringToObject(x, "config_key", f->key);
        cJSON_AddStringToObject(x, "model", f->model);
        cJSON_AddNumberToObject(x, "base_runs", r->nb);
        cJSON_AddNumberToObject(x, "new_runs", r->nn);
        for (int m = 0; m < SIM_MET_N; m++) {
            const struct metric_cmp *c = &r->m[m];
            cJSON *y = cJSON_CreateObject();
            cJSON_AddItemToObject(y, "base", stat_json(&c->b));
            cJSON_AddItemToObject(y, "new", stat_json(&c->n));
            cJSON_AddItemToObject(y, "diff", num_or_null(c->diff));
            cJSON_AddItemToObject(y, "rel", num_or_null(c->rel));
            cJSON_AddItemToObject(y, "diff_ci95_lo", num_or_null(c->ci_lo));
            cJSON_AddItemToObject(y, "diff_ci95_hi", num_or_null(c->ci_hi));
            cJSON_AddItemToObject(y, "p", num_or_null(c->p));
            cJSON_AddStringToObject(y, "verdict", c->v == V_REGRESSION ? "regression"
                                                  : verdict_names[c->v]);
            cJSON_AddItemToObject(ms, sim_metric_names[m], y);
        }
        cJSON_AddItemToObject(x, "metrics", ms);
        cJSON_AddItemToArray(arr, x);
    }
    char *t = cJSON_Print(j);
    cJSON_Delete(j);
    if (!t)
        return SIM_ENOMEM;
    puts(t);
    free(t);
    return 0;
}

static int parse_metrics(const char *v, bool gate[SIM_MET_N])
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v);
    for (int m = 0; m < SIM_MET_N; m++)
        gate[m] = false;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int m = 0;
        while (m < SIM_MET_N && strcmp(t, sim_metric_names[m]) != 0)
            m++;
        if (m == SIM_MET_N)
            return sim_err_set(SIM_EUSAGE, "--metrics: expected names among goodput_rps, p99_ms, "
                               "bad_rate, gpu_s, makespan_s, job_exec_s, got \"%s\"", t);
        gate[m] = true;
    }
    return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
    memset(o, 0, sizeof *o);
    o->tol = 0.05;
    o->bad_tol = 0.005;
    o->alpha = 0.05;
    for (int m = 0; m < SIM_MET_N; m++)
        o->gate[m] = true;
    int rc = 0;
    for (int i = 2; i < argc && !rc; i++) {
        const char *a = argv[i];
        bool nx = i + 1 < argc;
        if (strcmp(a, "--tol") == 0 && nx)
            rc = sim_arg_num(a, argv[++i], 0, false, 100, &o->tol);
        else if (strcmp(a, "--bad-tol") == 0 && nx)
            rc = sim_arg_num(a, argv[++i], 0, false, 1, &o->bad_tol);
        else if (strcmp(a, "--alpha") == 0 && nx)
            rc = sim_arg_num(a, argv[++i], 0, true, 1, &o->alpha);
        else if (strcmp(a, "--metrics") == 0 && nx)
            rc = parse_metrics(argv[++i], o->gate);
        else if (strcmp(a, "--match") == 0 && nx) {
            const char *v = argv[++i];
            if (strcmp(v, "hash") && strcmp(v, "label"))
                rc = sim_err_set(SIM_EUSAGE, "--match: expected hash or label, got \"%s\"", v);
            o->by_label = strcmp(v, "label") == 0;
        } else if (strcmp(a, "--name") == 0 && nx)
            o->name_glob = argv[++i];
        else if (strcmp(a, "--allow-missing") == 0)
            o->allow_missing = true;
        else if (strcmp(a, "--all") == 0)
            o->all = true;
        else if (strcmp(a, "--json") == 0)
            o->json = true;
        else if (strcmp(a, "--markdown") == 0)
            o->markdown = true;
        else if (a[0] == '-')
            rc = sim_err_set(SIM_EUSAGE, "compare: unknown option or missing value: %s", a);
        else if (!o->base)
            o->base = a;
        else if (!o->new_)
            o->new_ = a;
        else
            rc = sim_err_set(SIM_EUSAGE, "compare: unexpected argument: %s", a);
    }
    if (!rc && (!o->base || !o->new_))
        rc = sim_err_set(SIM_EUSAGE, "compare: expected BASE and NEW (see servesim compare --help)");
    if (!rc && o->json && o->markdown)
        rc = sim_err_set(SIM_EUSAGE, "compare: --json and --markdown exclude each other");
    return rc;
}

int sim_compare_main(int argc, char **argv)
{
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        }
    struct opts o;
    struct sim_samples sb = {0}, sn = {0};
    struct row *rows = NULL;
    size_t nrows = 0;
    int rc = parse(argc, argv, &o);
    if (!rc && !(rc = sim_results_load(o.base, &sb)))
        rc = sim_results_load(o.new_, &sn);
    if (!rc)
        rc = build_rows(&o, &sb, &sn, &rows, &nrows);
    if (!rc && nrows == 0)
        rc = sim_err_set(SIM_EINVAL, "compare: no experiment matches --name %s", o.name_glob);
    int status = 0;
    if (!rc) {
        struct summary s = summarise(rows, nrows);
        bool failed = s.regressions > 0 || (s.only_base > 0 && !o.allow_missing);
        /* nothing on both sides: say so, whatever the counts say. Without --allow-missing
         * the missing experiments fail the comparison (exit 3, a stale baseline); with it,
         * nothing was compared and nothing passes (exit 4). */
        char nothing[1400] = "";
        if (s.experiments == s.only_base + s.only_new && s.only_base && s.only_new) {
            char b[512], n2[512];
            side_names(rows, nrows, true, b, sizeof b);
            side_names(rows, nrows, false, n2, sizeof n2);
            snprintf(nothing, sizeof nothing, "nothing was compared: no experiment of BASE "
                     "matches one of NEW on %s. BASE has %s; NEW has %s.%s",
                     o.by_label ? "name, kind, policy and sweep settings (--match label)"
                                : "name, kind and config hash (seed excluded)",
                     b, n2, o.by_label ? "" : " --match label compares runs whose configs "
                     "differ on purpose.");
        }
        if (o.json)
            rc = print_json(&o, rows, nrows, &s, failed);
        else if (o.markdown)
            print_markdown(&o, rows, nrows, &s, failed);
        else
            print_table(&o, rows, nrows, &s);
        status = failed ? 3 : 0;
        if (nothing[0] && !rc && o.allow_missing)
            rc = sim_err_set(SIM_EINFEASIBLE, "%s", nothing);
        else if (nothing[0] && !rc)
            fprintf(stderr, "servesim compare: %s\n", nothing);
    }
    free(rows);
    sim_results_free(&sb);
    sim_results_free(&sn);
    if (rc) {
        fprintf(stderr, "servesim compare: %s\n", sim_err_msg());
        return rc == SIM_EINFEASIBLE ? 4 : sim_err_is_input(rc) ? 2 : 1;
    }
    return status;
}
