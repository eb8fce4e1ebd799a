/* sim_sweep_core — a sweep's points, shared by the local runner (sim_sweep.c, worker
 * processes) and the MPI runner (sim_sweep_mpi.c, ranks): reading the sweep file and its
 * identity, each point's overrides and key, preparing the points a database does not hold
 * yet, running one point into a results store, progress lines, the summary and what an
 * interrupted sweep kept. Neither runner is called from here (sim_sweep_int.h). */
#include "sim_sweep.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "sim_err.h"
#include "sim_wall.h"
#include "sim_goodput.h"
#include "sim_json.h"
#include "sim_param.h"
#include "sim_rng.h"
#include "sim_store.h"
#include "sim_sweep_int.h"

void sweep_point_free(struct point *p)
{
    for (int i = 0; i < p->nsets; i++)
        free(p->sets[i]);
    free(p->sets);
    free(p->key);
    free(p->settings);
    free(p->labels);
    memset(p, 0, sizeof *p);
}

static char *assignment(const char *path, const cJSON *v)
{
    char *val = cJSON_PrintUnformatted(v);
    char *a = val ? malloc(strlen(path) + strlen(val) + 2) : NULL;
    if (a)
        sprintf(a, "%s=%s", path, val);
    free(val);
    return a;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* An axis whose values (or cases whose names, `names`) repeat would run one point twice and
 * store it once: an error naming the repeated value. Sorted, so linear-logarithmic in size. */
static int distinct_values(const cJSON *arr, const char *path, bool names)
{
    int n = cJSON_GetArraySize(arr), k = 0, rc = 0;
    char **v = calloc((size_t)n + 1, sizeof *v);
    if (!v)
        return SIM_ENOMEM;
    const cJSON *it;
    cJSON_ArrayForEach(it, arr) {
        const cJSON *x = names ? cJSON_GetObjectItemCaseSensitive(it, "name") : it;
        if (!(v[k++] = names ? strdup(x->valuestring) : cJSON_PrintUnformatted(x))) {
            rc = SIM_ENOMEM;
            goto out;
        }
    }
    qsort(v, (size_t)n, sizeof *v, cmp_str);
    for (int i = 1; i < n; i++)
        if (strcmp(v[i - 1], v[i]) == 0) {
            rc = sim_err_set(SIM_EINVAL, "%s: %s %.200s appears twice (a point would run twice "
                             "and be stored once)", path, names ? "the case name" : "the value",
                             v[i]);
            break;
        }
out:
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
    return rc;
}

/* A sweep file's keys (docs/sweeps.md's table is this one, generated) */
static const char *const MODES[] = {"run", "goodput", NULL};
struct sweep_in {
    const char *name, *base;
    int mode;
    const cJSON *grid, *set, *cases, *labels;
};
#define SI(f, type) SIM_P_AT(struct sweep_in, f, type)
const struct sim_param sim_sweep_keys[] = {
    {"name", SIM_P_STR, SI(name, const char *), .flags = SIM_P_REQUIRED,
     .doc = "the sweep's name in the database (`sweep_points.sweep` is `NAME@HASH`) and in "
            "progress lines"},
    {"description", SIM_P_HAND, .type_doc = "string", .def_doc = "", .doc = "free text, ignored"},
    {"base", SIM_P_STR, SI(base, const char *), .flags = SIM_P_REQUIRED,
     .doc = "the config every point starts from, relative to the sweep file"},
    {"mode", SIM_P_ENUM, SIM_P_AT_ENUM(struct sweep_in, mode), .choices = MODES,
     .doc = "`run`: one run per point; `goodput`: one goodput search per point (its best probe "
            "is the point's run, the probes are in `goodput_search`)"},
    {"set", SIM_P_OBJ, SI(set, const cJSON *), .type_doc = "object `{PATH: value}`",
     .def_doc = "none", .doc = "overrides applied to every point, like `--set PATH=VALUE` (paths as in `--set`). "
            "Prefer a path per key (`\"metrics.sample_period_s\": 0`). An object value replaces "
            "the whole section it names, and one that would drop a key set earlier in `set` or "
            "by the command line's `--set` is refused, naming the key (it would be lost silently)"},
    {"cases", SIM_P_ARR, SI(cases, const cJSON *), .type_doc = "array of objects",
     .def_doc = "none", .doc = "a list of named override sets; every member but `label` is applied like `--set`, "
            "`name` included: the case's name is its runs' experiment name (`runs.name`, what "
            "`plot --name` selects) and labels the point (`case=NAME`); `label` (a string) is "
            "how figures name the case (else its name)"},
    {"labels", SIM_P_OBJ, SI(labels, const cJSON *), .type_doc = "object `{PATH: [strings]}`",
     .def_doc = "none", .doc = "how figures name a grid axis's values, one string per value in the "
            "axis's order (`\"frontends\": [\"1 frontend\", \"8 frontends\"]`); kept with each point "
            "(`sweep_points.labels_json`). An axis without labels is named by `servesim plot`'s "
            "table of known keys (docs/plots.md)"},
    {"grid", SIM_P_OBJ, SI(grid, const cJSON *), .type_doc = "object `{PATH: [values]}`",
     .def_doc = "required without `cases`", .doc = "axes: `PATH: [values]`; a value may be any JSON (an object replaces the whole "
            "subtree, as `models[0]` in `single_model.sweep.json`); at most 16 axes and a "
            "million points; a value repeated on an axis (or a case name repeated) is an error, "
            "since its point would run twice and be stored once"},
    {NULL}};
#undef SI

/* The sweep's axes: its cases first (named sets of overrides), then the grid's; their points'
 * count, at most a million, and each axis's values by index. */
static int sweep_axes(struct sweep *w, const char *file, const cJSON *cases, const cJSON *grid,
                      const cJSON *labels)
{
    int rc;
    w->npoints = 1;
    if (cases) {                        /* the first axis: named sets of overrides */
        int n = cJSON_GetArraySize(cases), k = 0;
        if (n == 0)
            return sim_err_set(SIM_EINVAL, "%s: cases: expected at least one case, got []", file);
        const cJSON *c;
        cJSON_ArrayForEach(c, cases) {
            char p[SIM_JPATH_MAX];
            const char *cn;
            sim_jpath_idx(p, sizeof p, "cases", k++);
            if (!cJSON_IsObject(c))
                return sim_err_prefix(sim_json_expected(p, "an object of overrides with a \"name\"", c), file);
            if ((rc = sim_json_str(c, p, "name", true, &cn)) ||
                (rc = sim_json_str(c, p, "label", false, &cn)))
                return sim_err_prefix(rc, file);
        }
        if ((rc = distinct_values(cases, "cases", true)))
            return sim_err_prefix(rc, file);
        w->path[0] = NULL;
        w->values[0] = cases;
        w->size[0] = n;
        w->npoints = n;
        w->naxes = 1;
    }
    const cJSON *ax;
    cJSON_ArrayForEach(ax, grid) {
        char p[SIM_JPATH_MAX];
        snprintf(p, sizeof p, "grid.%s", ax->string);
        if (w->naxes == MAX_AXES)
            return sim_err_set(SIM_EINVAL, "%s: %s: at most %d grid axes", file, p, MAX_AXES);
        if (!cJSON_IsArray(ax) || cJSON_GetArraySize(ax) == 0) {
            rc = sim_json_expected(p, "a non-empty array of values", ax);
            return sim_err_prefix(rc, file);
        }
        if ((rc = distinct_values(ax, p, false)))
            return sim_err_prefix(rc, file);
        w->path[w->naxes] = ax->string;
        w->values[w->naxes] = ax;
        w->size[w->naxes] = cJSON_GetArraySize(ax);
        w->npoints *= w->size[w->naxes];
        w->naxes++;
        if (w->npoints > 1000000)
            return sim_err_set(SIM_EINVAL, "%s: grid: more than a million points", file);
    }
    const cJSON *lb;
    cJSON_ArrayForEach(lb, labels) {    /* each a grid axis's, a string per value */
        char p[SIM_JPATH_MAX];
        snprintf(p, sizeof p, "labels.%s", lb->string);
        int a = cases ? 1 : 0;
        while (a < w->naxes && strcmp(w->path[a], lb->string) != 0)
            a++;
        if (a == w->naxes)
            return sim_err_set(SIM_EINVAL, "%s: %s: expected the path of a grid axis, found "
                               "none named \"%s\"", file, p, lb->string);
        bool strings = cJSON_IsArray(lb) && cJSON_GetArraySize(lb) == w->size[a];
        for (const cJSON *x = strings ? lb->child : NULL; x; x = x->next)
            strings = strings && cJSON_IsString(x) && x->valuestring[0];
        if (!strings) {
            char want[96];
            snprintf(want, sizeof want, "an array of %d non-empty strings (one per value of "
                     "the axis)", w->size[a]);
            return sim_err_prefix(sim_json_expected(p, want, lb), file);
        }
        w->labels[a] = lb;
    }
    for (int a = 0; a < w->naxes; a++) {
        if (!(w->item[a] = malloc((size_t)w->size[a] * sizeof *w->item[a])))
            return SIM_ENOMEM;
        int i = 0;
        for (const cJSON *v = w->values[a]->child; v; v = v->next)
            w->item[a][i++] = v;
    }
    return 0;
}

/* The sweep's identity, NAME@HASH: a hash of its file, its base config and the command
 * line's overrides. */
static int sweep_identity(struct sweep *w, const char *file, const char *const *sets, int nsets)
{
    int rc;
    /* the sweep's identity: its file, its base config and the extra overrides */
    char *text = cJSON_PrintUnformatted(w->json);
    cJSON *bj = NULL;
    if ((rc = sim_json_load_file(w->base, &bj))) {
        free(text);
        return sim_err_prefix(rc, file);
    }
    char *btext = cJSON_PrintUnformatted(bj);
    cJSON_Delete(bj);
    uint64_t h = SIM_FNV_OFFSET;
    if (text)
        h = sim_fnv1a(h, text, strlen(text));
    if (btext)
        h = sim_fnv1a(h, btext, strlen(btext));
    for (int i = 0; i < nsets; i++)
        h = sim_fnv1a(h, sets[i], strlen(sets[i]));
    free(text);
    free(btext);
    snprintf(w->id, sizeof w->id, "%s@%016llx", w->name, (unsigned long long)h);
    return 0;
}

int sweep_parse(struct sweep *w, const char *file, const char *const *sets, int nsets)
{
    struct sweep_in in;
    int rc;
    if ((rc = sim_json_load_file(file, &w->json)))
        return rc;
    const cJSON *j = w->json;
    if (!cJSON_IsObject(j))
        return sim_err_set(SIM_EINVAL, "%s: expected a JSON object at the top level", file);
    if ((rc = sim_params_read(sim_sweep_keys, j, "", &in)) ||
        (rc = sim_json_obj(j, "", "grid", !in.cases, &in.grid)))
        return sim_err_prefix(rc, file);
    const char *name = in.name, *base = in.base;
    const cJSON *grid = in.grid, *set = in.set, *cases = in.cases;
    int mode = in.mode;
    snprintf(w->name, sizeof w->name, "%s", name);
    w->goodput = mode == 1;
    char *tmp = strdup(file);
    if (!tmp)
        return SIM_ENOMEM;
    if (base[0] == '/')
        snprintf(w->base, sizeof w->base, "%s", base);
    else
        snprintf(w->base, sizeof w->base, "%s/%s", dirname(tmp), base);
    free(tmp);
    if ((rc = sweep_axes(w, file, cases, grid, in.labels)))
        return rc;
    int nset = set ? cJSON_GetArraySize(set) : 0;
    w->fixed = calloc((size_t)(nset + nsets + 1), sizeof *w->fixed);
    if (!w->fixed)
        return SIM_ENOMEM;
    const cJSON *it;
    if (set)
        cJSON_ArrayForEach(it, set)
            if (!(w->fixed[w->nfixed++] = assignment(it->string, it)))
                return SIM_ENOMEM;
    for (int i = 0; i < nsets; i++)
        if (!(w->fixed[w->nfixed++] = strdup(sets[i])))
            return SIM_ENOMEM;
    return sweep_identity(w, file, sets, nsets);
}

int sweep_make_point(const struct sweep *w, long idx, struct point *p)
{
    memset(p, 0, sizeof *p);
    int nmax = w->nfixed + w->naxes;
    if (w->naxes && !w->path[0])
        for (const cJSON *c = w->values[0]->child; c; c = c->next)
            nmax += cJSON_GetArraySize(c);
    p->sets = calloc((size_t)nmax, sizeof *p->sets);
    cJSON *settings = cJSON_CreateObject(), *words = cJSON_CreateObject();
    char *label[MAX_AXES] = {0};
    size_t klen = 1;
    if (!p->sets || !settings || !words)
        goto oom;
    for (int i = 0; i < w->nfixed; i++)
        if (!(p->sets[p->nsets++] = strdup(w->fixed[i])))
            goto oom;
    long rest = idx;
    int pick[MAX_AXES];
    for (int a = w->naxes - 1; a >= 0; a--) {   /* the last axis varies fastest */
        pick[a] = (int)(rest % w->size[a]);
        rest /= w->size[a];
    }
    for (int a = 0; a < w->naxes; a++) {
        const cJSON *v = w->item[a][pick[a]];
        if (!w->path[a]) {              /* a case: each member is an override */
            for (const cJSON *m = v->child; m; m = m->next)
                if (strcmp(m->string, "label") != 0 &&
                    !(p->sets[p->nsets++] = assignment(m->string, m)))
                    goto oom;
            const cJSON *cl = cJSON_GetObjectItemCaseSensitive(v, "label");
            if (cl && !cJSON_AddStringToObject(words, "case", cl->valuestring))
                goto oom;
            const char *cn = cJSON_GetObjectItemCaseSensitive(v, "name")->valuestring;
            if (!cJSON_AddStringToObject(settings, "case", cn))
                goto oom;
            if (!(label[a] = malloc(strlen(cn) + 6)))
                goto oom;
            sprintf(label[a], "case=%s", cn);
        } else {
            if (!(p->sets[p->nsets++] = assignment(w->path[a], v)) ||
                !(label[a] = strdup(p->sets[p->nsets - 1])))
                goto oom;
            cJSON *d = cJSON_Duplicate(v, true);
            if (!d || !cJSON_AddItemToObject(settings, w->path[a], d)) {
                cJSON_Delete(d);
                goto oom;
            }
            if (w->labels[a] &&
                !cJSON_AddStringToObject(words, w->path[a],
                                         cJSON_GetArrayItem(w->labels[a], pick[a])->valuestring))
                goto oom;
        }
        klen += strlen(label[a]) + 1;
    }
    p->key = calloc(klen, 1);
    p->settings = cJSON_PrintUnformatted(settings);
    p->labels = words->child ? cJSON_PrintUnformatted(words) : NULL;
    if (!p->key || !p->settings || (words->child && !p->labels))
        goto oom;
    for (int a = 0; a < w->naxes; a++) {
        if (a)
            strcat(p->key, ";");
        strcat(p->key, label[a]);
        free(label[a]);
    }
    cJSON_Delete(settings);
    cJSON_Delete(words);
    return 0;
oom:
    for (int a = 0; a < w->naxes; a++)
        free(label[a]);
    cJSON_Delete(settings);
    cJSON_Delete(words);
    sweep_point_free(p);
    return SIM_ENOMEM;
}

int sweep_point_into(const struct sweep *w, struct sim_store *st, long idx)
{
    struct point p;
    struct sim_config *cfg = NULL;
    struct sim_result *r = NULL;
    struct sim_goodput g;
    bool have_g = false;
    int rc = sweep_make_point(w, idx, &p);
    if (rc)
        return 1;
    bool before = false;
    struct sim_store_point sp = {.sweep = w->id, .key = p.key, .settings_json = p.settings,
                                 .labels_json = p.labels,
                                 .point = (int)idx, .stored_before = &before};
    /* another process running the same sweep on this database may have stored it meanwhile:
     * not run again (and were it stored while this one ran, it is not written twice) */
    if (sim_store_point_done(st, w->id, p.key, &before) == 0 && before) {
        sweep_point_free(&p);
        return 0;
    }
    rc = sim_config_load_n(w->base, (const char *const *)p.sets, p.nsets, w->nfixed, false, 0,
                           &cfg);
    if (!rc) {
        double t0 = sim_wall_seconds();
        if (w->goodput) {
            rc = sim_goodput_search(cfg, false, &g);
            have_g = true;
            if (!rc)
                g.best->wall_s = sim_wall_seconds() - t0;
        } else {
            rc = sim_run_once(cfg, 1.0, NULL, &r);
        }
    }
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", rc ? sim_err_msg() : "");
    int src;
    if (rc)
        src = sim_store_point_failed(st, &sp, msg);
    else
        src = sim_config_store(st, cfg, w->goodput ? "goodput" : "run", w->goodput ? g.best : r,
                               w->goodput ? &g : NULL, &sp, NULL);
    if (rc)
        fprintf(stderr, "servesim sweep: point %ld (%s) failed: %s\n", idx, p.key, msg);
    char why[512];
    if (!rc && have_g && sim_goodput_problem(&g, why, sizeof why))
        fprintf(stderr, "servesim sweep: point %ld (%s): no goodput: %s (kept with runs.status "
                "\"%s\")\n", idx, p.key, why, sim_search_status_names[g.status]);
    if (src)
        fprintf(stderr, "servesim sweep: point %ld: %s\n", idx, sim_err_msg_for(src));
    if (src == SIM_ENOMEM) {            /* not the database's refusal: a failed point */
        sim_store_point_failed(st, &sp, "out of memory writing the point");
        rc = SIM_ENOMEM;
        src = 0;
    }
    if (have_g)
        sim_goodput_free(&g);
    sim_result_destroy(r);
    sim_config_destroy(cfg);
    sweep_point_free(&p);
    return src ? SWEEP_DB_REFUSED : rc ? 1 : 0;
}

static void fmt_time(char *buf, size_t n, double s)
{
    if (s < 0 || s > 1e7)
        snprintf(buf, n, "?");
    else if (s >= 3600)
        snprintf(buf, n, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
    else if (s >= 60)
        snprintf(buf, n, "%dm%02ds", (int)(s / 60), (int)s % 60);
    else
        snprintf(buf, n, "%.0fs", s);
}

void sweep_progress(const struct sweep *w, bool tty, long done, long total, long failed,
                     double t0, const char *last, bool ok)
{
    double el = sim_wall_seconds() - t0;
    char eta[32];
    fmt_time(eta, sizeof eta, done ? el / (double)done * (double)(total - done) : -1);
    if (tty) {
        int width = 30, fill = total ? (int)(width * done / total) : width;
        fprintf(stderr, "\r%s [", w->name);
        for (int i = 0; i < width; i++)
            fputc(i < fill ? '#' : '.', stderr);
        fprintf(stderr, "] %ld/%ld%s%ld failed  ETA %s   ", done, total, failed ? "  " : "  ",
                failed, eta);
        if (done == total)
            fputc('\n', stderr);
    } else {
        fprintf(stderr, "sweep %s: %ld/%ld done (%s: %s), %ld failed, ETA %s\n", w->name, done,
                total, last, ok ? "ok" : "FAILED", failed, eta);
    }
}

void sweep_summary(const struct sweep *w, const char *db)
{
    sqlite3 *h;
    sqlite3_stmt *q;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(h);
        return;
    }
    sqlite3_busy_handler(h, sim_store_busy, sim_store_busy_ctx(db));
    if (sqlite3_prepare_v2(h,
                           "SELECT p.point, p.point_key, p.status, r.id, r.goodput_rps, "
                           "r.ontime_rps, r.bad_rate, r.offered_rps, r.status FROM sweep_points p "
                           "LEFT JOIN runs r ON "
                           "r.id = p.run_id WHERE p.sweep = ? ORDER BY p.point",
                           -1, &q, NULL) == SQLITE_OK) {
        sqlite3_bind_text(q, 1, w->id, -1, SQLITE_TRANSIENT);
        printf("sweep %s (%s): %s\n", w->name, w->id, w->goodput ? "goodput per point" : "runs");
        printf("%5s %7s %12s %12s %9s  %s\n", "point", "run", w->goodput ? "goodput_rps" : "offered",
               "ontime_rps", "bad_rate", "settings");
        while (sqlite3_step(q) == SQLITE_ROW) {
            if (strcmp((const char *)sqlite3_column_text(q, 2), "ok") != 0) {
                printf("%5d %7s %12s %12s %9s  %s\n", sqlite3_column_int(q, 0), "-", "failed", "",
                       "", sqlite3_column_text(q, 1));
                continue;
            }
            const char *rs = (const char *)sqlite3_column_text(q, 8);
            if (rs && strcmp(rs, "ok") != 0) {  /* a search that gave no goodput: why */
                printf("%5d %7lld %12s %12.1f %9.4f  %s  [%s]\n", sqlite3_column_int(q, 0),
                       (long long)sqlite3_column_int64(q, 3), "none", sqlite3_column_double(q, 5),
                       sqlite3_column_double(q, 6), sqlite3_column_text(q, 1), rs);
                continue;
            }
            printf("%5d %7lld %12.1f %12.1f %9.4f  %s\n", sqlite3_column_int(q, 0),
                   (long long)sqlite3_column_int64(q, 3),
                   sqlite3_column_double(q, w->goodput ? 4 : 7),   /* offered, for runs */
                   sqlite3_column_double(q, 5), sqlite3_column_double(q, 6),
                   sqlite3_column_text(q, 1));
        }
    }
    sqlite3_finalize(q);
    sqlite3_close(h);
}

volatile sig_atomic_t sweep_signal;

int sim_sweep_signal(void)
{
    return (int)sweep_signal;
}

int sweep_prepare(struct sweep *w, const char *file, const char *db, const char *const *sets,
                  int nsets, bool force, bool quiet, long **todo_out, long *ntodo_out)
{
    long *todo = NULL, ntodo = 0;
    *todo_out = NULL;
    *ntodo_out = 0;
    int rc = sweep_parse(w, file, sets, nsets);
    if (rc)
        return rc;
    /* every point's config must be valid before anything runs */
    long transient = 0, extended = 0;
    char note[512];
    for (long i = 0; i < w->npoints; i++) {
        struct point p;
        struct sim_config *cfg = NULL;
        if ((rc = sweep_make_point(w, i, &p)))
            return rc;
        rc = sim_config_load_n(w->base, (const char *const *)p.sets, p.nsets, w->nfixed, false, 0,
                           &cfg);
        /* (the first point's own note or warning; under quiet only a warning) */
        if (!rc && sim_config_transient(cfg, note, sizeof note) && transient++ == 0 &&
            (!quiet || !cfg->world.warmup_extended))
            fprintf(stderr, "%s (point %ld: %s)\n", note, i, p.key);
        if (!rc && cfg->world.warmup_extended)
            extended++;
        if (rc) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", sim_err_msg());
            sim_err_set(rc, "%s: point %ld (%s): %s", file, i, p.key, msg);
        }
        sim_config_destroy(cfg);
        sweep_point_free(&p);
        if (rc)
            return rc;
    }
    if (transient > 1 && extended && !quiet)
        fprintf(stderr, "note: %ld of %ld points of %s had their warm-up extended to the time "
                "their policy needs to converge\n", extended, w->npoints, file);
    if (transient > extended && transient > 1)
        fprintf(stderr, "warning: %ld of %ld points of %s warm up for less than their policy "
                "needs to converge (keep_warmup)\n", transient - extended, w->npoints, file);
    struct sim_store *st = NULL;
    if ((rc = sim_store_open(db, &st)))
        return rc;
    {   /* the same sweep under another configuration: resuming would silently start anew */
        char other[256];
        long nother = 0, mine = 0;
        bool done = false;
        if ((rc = sim_store_sweep_namesake(st, w->name, w->id, other, sizeof other, &nother)))
            goto out_store;
        for (long i = 0; nother && !force && i < w->npoints && !mine; i++) {
            struct point p;
            if ((rc = sweep_make_point(w, i, &p)) == 0)
                rc = sim_store_point_done(st, w->id, p.key, &done);
            sweep_point_free(&p);
            if (rc)
                goto out_store;
            mine += done;
        }
        if (nother && !force && !mine) {
            rc = sim_err_set(SIM_EUSAGE, "sweep %s: %s holds this sweep under another "
                             "configuration (%s, %ld point%s) and none of this one (%s): its "
                             "file, its base config or the --set options differ, so this would "
                             "start a new sweep beside it. --force runs it anyway; or use "
                             "another --db", w->name, db, other, nother, nother == 1 ? "" : "s",
                             w->id);
            goto out_store;
        }
    }
    if (!(todo = calloc((size_t)w->npoints, sizeof *todo))) {
        rc = SIM_ENOMEM;
        goto out_store;
    }
    for (long i = 0; rc == 0 && i < w->npoints; i++) {
        struct point p;
        bool done = false;
        if ((rc = sweep_make_point(w, i, &p)) == 0)
            rc = sim_store_point_done(st, w->id, p.key, &done);
        sweep_point_free(&p);
        if (!done)
            todo[ntodo++] = i;
    }
out_store:
    sim_store_close(st);
    if (rc) {
        free(todo);
        return rc;
    }
    *todo_out = todo;
    *ntodo_out = ntodo;
    return 0;
}

void sweep_free(struct sweep *w)
{
    for (int i = 0; i < w->nfixed; i++)
        free(w->fixed[i]);
    free(w->fixed);
    for (int a = 0; a < MAX_AXES; a++)
        free(w->item[a]);
    cJSON_Delete(w->json);
    memset(w, 0, sizeof *w);
}

/* How many of the sweep's points the database holds (-1: it cannot be read). */
static long points_kept(const struct sweep *w, const char *db)
{
    long kept = -1;
    struct sim_store *s3 = NULL;
    if (sim_store_open(db, &s3) == 0 && sim_store_sweep_done(s3, w->id, &kept) != 0)
        kept = -1;
    sim_store_close(s3);
    return kept;
}

int sweep_refused(const struct sweep *w, const char *db)
{
    long kept = points_kept(w, db);
    char k[64] = "";
    if (kept >= 0)
        snprintf(k, sizeof k, "%ld of its %ld points are in it; ", kept, w->npoints);
    return sim_err_set(SIM_EDB, "sweep %s: the database %s refused a write (the reason is "
                       "above): stopped there, %sthe others were not run. Run the same "
                       "command to resume once the database can be written", w->name, db, k);
}

int sweep_interrupted(const struct sweep *w, const char *db, int stopped)
{
    long kept = points_kept(w, db);
    char held[64] = "?";
    if (kept >= 0)
        snprintf(held, sizeof held, "%ld", kept);
    return sim_err_set(SIM_EINTR, "sweep %s interrupted: %s of its %ld points are in %s; "
                       "the %d in flight were stopped and not written. Run the same command "
                       "to resume", w->name, held, w->npoints, db, stopped);
}

const char *sweep_mpi_launcher(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", NULL};
    for (int i = 0; vars[i]; i++)
        if (getenv(vars[i]))
            return vars[i];
    return NULL;
}
