/* plot_goodput — goodput figures of `servesim plot`: bars by policy grouped by experiment
 * setting (goodput), and goodput (or --y: bad rate, GPU-seconds, GPUs) against a config value
 * (goodput-gpus, goodput-slo, goodput-vs), seeds averaged with their standard deviation. */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_statistics_double.h>

#include "plot_int.h"
#include "sim_err.h"
#include "sim_json.h"
#include "sim_readback.h"

static const char *const y_labels[Y_N] = {"", "late or dropped (fraction of requests)",
                                          "GPU-seconds (executors up x time)",
                                          "GPUs at most (executors at once)"};

/* ---- goodput: bars ---- */

#define MAX_LABEL_LINES 4               /* a group label's lines, lying flat */

/* How goodput.gp draws a group label flat (wrap): its items (", "-separated) one per line,
 * each broken at the last space that leaves at most n characters on a line (a word longer
 * than n stays whole); characters, not bytes ("β/α > 2" is 7), as gnuplot counts them in
 * UTF-8. Returns the lines it takes; *widest grows to the longest. */
static int label_fold(const char *s, size_t n, size_t *widest)
{
    int lines = 0;
    for (;;) {
        const char *e = strstr(s, ", ");
        size_t bytes = e ? (size_t)(e - s) : strlen(s), len = 0;
        char ch[512];                   /* the item's characters' first bytes */
        for (size_t i = 0; i < bytes && len < sizeof ch; i++)
            if (((unsigned char)s[i] & 0xC0) != 0x80)
                ch[len++] = s[i];
        size_t at = 0, rem = len;
        while (rem > n) {
            size_t k = n;
            while (k > 0 && ch[at + k] != ' ')
                k--;
            if (k == 0)
                break;
            lines++;
            *widest = k > *widest ? k : *widest;
            at += k + 1;
            rem -= k + 1;
        }
        lines++;
        *widest = rem > *widest ? rem : *widest;
        if (!e)
            return lines;
        s = e + 2;
    }
}

/* Panels of a bar figure: with many settings made of several sweep keys, the bars of one
 * key's values (the one with the most, the later on ties) stand in groups, a panel per value
 * of the others ("1 frontend, worst rule": all models, β/α > 2, β/α < 2), as the papers lay
 * out such figures; at most MAX_PANELS: where the others have more combinations, the next
 * key (by the same rule) joins the groups' ("SLO 25 ms, arrivals: Poisson"). Returns the
 * groups' keys (separated by newlines), or NULL: one panel. */
#define MAX_PANELS 6
#define PANEL_FROM 6                    /* groups in one panel at which panels begin */

static char *facet_key(const struct plot *p, int ngroups)
{
    if (ngroups < PANEL_FROM || p->n < 2)
        return NULL;
    struct names keys = {0}, vals[32] = {{0}};   /* a sweep has at most 16 axes */
    int rc = 0;
    for (int i = 0; i < p->n && !rc; i++) {
        cJSON *j = p->r[i].settings ? cJSON_Parse(p->r[i].settings) : NULL;
        for (const cJSON *it = j ? j->child : NULL; it && !rc; it = it->next) {
            if (strcmp(it->string, "seed") == 0 || strcmp(it->string, "policy.name") == 0 ||
                plot_names_find(p->same, it->string) >= 0)
                continue;
            int k = plot_names_index(&keys, it->string);
            char *v = k >= 0 && k < 32 ? cJSON_PrintUnformatted(it) : NULL;
            if (!v || plot_names_index(&vals[k], v) < 0)
                rc = SIM_ENOMEM;
            free(v);
        }
        cJSON_Delete(j);
    }
    char *inner = NULL;
    int panels = 1, nin = 0;
    bool in[32] = {false};
    for (int k = 0; !rc && k < keys.n && k < 32; k++)
        panels *= vals[k].n;
    while (!rc && nin < keys.n - 1 && (nin == 0 || panels > MAX_PANELS)) {
        int best = -1;
        for (int k = 0; k < keys.n && k < 32; k++)
            if (!in[k] && (best < 0 || vals[k].n >= vals[best].n))
                best = k;
        in[best] = true;
        nin++;
        panels /= vals[best].n;
    }
    size_t len = 1;
    for (int k = 0; k < keys.n && k < 32; k++)
        len += in[k] ? strlen(keys.v[k]) + 1 : 0;
    if (!rc && nin > 0 && panels > 1 && panels <= MAX_PANELS && (inner = malloc(len))) {
        inner[0] = '\0';
        for (int k = 0; k < keys.n && k < 32; k++)
            if (in[k])
                snprintf(inner + strlen(inner), len - strlen(inner), "%s%s",
                         inner[0] ? "\n" : "", keys.v[k]);
    }
    for (int k = 0; k < keys.n && k < 32; k++)
        plot_names_free(&vals[k]);
    plot_names_free(&keys);
    return inner;
}

int plot_goodput(struct plot *p)
{
    struct names groups = {0}, pols = {0}, panels = {0};
    struct vec *cell = NULL;
    int *gi = calloc((size_t)p->n, sizeof *gi), *pi = calloc((size_t)p->n, sizeof *pi);
    int *gpanel = calloc((size_t)p->n, sizeof *gpanel);
    int rc = gi && pi && gpanel ? 0 : SIM_ENOMEM;
    char *inner = NULL;
    /* each run's setting (group) and policy, then the cells of the grid. A cell averages
     * runs that differ only in seed: where one setting and policy hold runs of different
     * configurations (the config key: the config without its seed), each keeps its own
     * group, labelled with what differs, instead of being averaged with the others. */
    char (*key)[17] = calloc((size_t)p->n, sizeof *key);
    char **lab = calloc((size_t)p->n, sizeof *lab), **unit = calloc((size_t)p->n, sizeof *unit);
    bool *mixed = calloc((size_t)p->n, sizeof *mixed);
    if (!key || !lab || !unit || !mixed)
        rc = SIM_ENOMEM;
    for (int i = 0; i < p->n && !rc; i++) {
        char *g = plot_setting_of(&p->r[i], NULL);
        if (!g || sim_results_config_key(p->r[i].config, key[i])) {
            free(g);
            rc = SIM_ENOMEM;
            break;
        }
        lab[i] = g[0] ? g : strdup(p->r[i].name);
        if (!g[0])
            free(g);
        size_t len = (lab[i] ? strlen(lab[i]) : 0) + strlen(p->r[i].policy) + 2;
        if (!lab[i] || !(unit[i] = malloc(len))) {
            rc = SIM_ENOMEM;
            break;
        }
        snprintf(unit[i], len, "%s\x1f%s", lab[i], p->r[i].policy);
    }
    if (!rc)
        rc = plot_mixed_units(p->n, unit, key, mixed);
    if (!rc) {                          /* panels where the settings are many */
        struct names distinct = {0};
        for (int i = 0; i < p->n && !rc; i++)
            if (plot_names_index(&distinct, lab[i]) < 0)
                rc = SIM_ENOMEM;
        inner = rc ? NULL : facet_key(p, distinct.n);
        plot_names_free(&distinct);
    }
    /* a run's bar is its on-time rate, a search's its goodput: never one bar of both */
    bool runs = false, searches = false;
    for (int i = 0; i < p->n; i++) {
        searches = searches || p->r[i].goodput;
        runs = runs || !p->r[i].goodput;
    }
    const char **cfgs = calloc(p->n > 0 ? (size_t)p->n : 1, sizeof *cfgs);
    for (int i = 0; cfgs && i < p->n; i++)
        cfgs[i] = p->r[i].config;
    if (!cfgs)
        rc = SIM_ENOMEM;
    for (int i = 0; i < p->n && !rc; i++) {
        char g[1200], what[200];
        const char *k = !(runs && searches) ? "" : p->r[i].goodput ? " (goodput search)"
                                                                   : " (run, on time)";
        char *in = inner ? plot_setting_only(&p->r[i], inner) : NULL;
        char *out = inner ? plot_setting_of(&p->r[i], inner) : NULL;
        if (inner && (!in || !out)) {
            free(in), free(out);
            rc = SIM_ENOMEM;
            break;
        }
        const char *gl = inner ? in : lab[i];
        if (mixed[i]) {
            plot_config_label(p->n, unit, key, cfgs, i, what, sizeof what);
            /* runs of the one experiment the title names: what differs alone, unbracketed
             * ("work-conserving"), not the name again in every label */
            size_t wl = strlen(what);
            if (strcmp(gl, p->label) == 0 && wl > 2 && what[0] == '(' && what[wl - 1] == ')')
                snprintf(g, sizeof g, "%.*s%s", (int)(wl - 2), what + 1, k);
            else
                snprintf(g, sizeof g, "%s %s%s", gl, what, k);
        } else
            snprintf(g, sizeof g, "%s%s", gl, k);
        int pn = plot_names_index(&panels, out ? out : "");
        char pg[1300];                  /* a group is its panel's */
        snprintf(pg, sizeof pg, "%d\x1f%s", pn, g);
        free(in), free(out);
        gi[i] = plot_names_index(&groups, pg);
        pi[i] = plot_names_index(&pols, p->r[i].policy);
        if (pn < 0 || gi[i] < 0 || pi[i] < 0)
            rc = SIM_ENOMEM;
        else
            gpanel[gi[i]] = pn;
    }
    for (int i = 0; lab && unit && i < p->n; i++)
        free(lab[i]), free(unit[i]);
    free(lab), free(unit), free(key), free(mixed), free(cfgs);
    if (!rc && !(cell = calloc((size_t)(groups.n * pols.n), sizeof *cell)))
        rc = SIM_ENOMEM;
    for (int i = 0; i < p->n && !rc; i++)
        rc = plot_vec_push(&cell[gi[i] * pols.n + pi[i]], p->r[i].value);
    if (rc)
        goto out;
    char base[4096];
    FILE *f = plot_dat_open(p, "goodput", base, sizeof base);
    if (!f) {
        rc = SIM_EIO;
        goto out;
    }
    size_t whole = 0;                   /* the longest group label */
    for (int k = 0; k < panels.n; k++) {    /* a block per panel: a header, a row per group */
        fputs(k ? "\n\n" : "", f);      /* the header: the panel's setting, the policies */
        plot_put_label(f, panels.n > 1 && panels.v[k][0] ? panels.v[k] : "setting");
        for (int j = 0; j < pols.n; j++) {
            const char *d = plot_display_name(pols.v[j]);
            fputc('\t', f), plot_put_label(f, d), fputc('\t', f), plot_put_label(f, d);
            fputs(" sd", f);
        }
        fputc('\n', f);
        for (int g = 0; g < groups.n; g++) {
            if (gpanel[g] != k)
                continue;
            const char *gl = strchr(groups.v[g], '\x1f') + 1;
            plot_put_label(f, gl);
            for (int j = 0; j < pols.n; j++)
                plot_put_stat(f, &cell[g * pols.n + j]);
            fputc('\n', f);
            whole = strlen(gl) > whole ? strlen(gl) : whole;
        }
    }
    if ((rc = plot_dat_close(p, f, base)))
        goto out;
    char vars[8192], title[512];
    snprintf(title, sizeof title, "%s: goodput by %s", p->label,
             plot_one_policy(p) ? "setting" : "policy");
    plot_title_policy(p, title, sizeof title);
    plot_gp_start(vars, sizeof vars, base, title);
    plot_gp_set(vars, sizeof vars, "ylab", plot_goodput_ylabel(p));
    /* settings that each name one policy (a sweep over policies and their params): one bar
     * per setting in its policy's colour, not a group with a slot per policy */
    int one = 1, most = 0;
    for (int g = 0; g < groups.n && one; g++) {
        int k = 0;
        for (int j = 0; j < pols.n; j++)
            k += cell[g * pols.n + j].n > 0;
        one = k == 1;
    }
    for (int k = 0; k < panels.n; k++) {
        int n = 0;
        for (int g = 0; g < groups.n; g++)
            n += gpanel[g] == k;
        most = n > most ? n : most;
    }
    /* a group's room: its panel's width (goodput.gp's grid) over the most groups a panel
     * has, with a tenth to spare, at about 0.85 pt a character (sans at its widest, so that
     * neighbouring labels keep a gap). Labels lie flat, folded (label_fold) to at most MAX_LABEL_LINES lines, at the
     * largest font from the figure's down to 10 pt at which they fit; where none does, the
     * panels stand in one column, and only where even that is too narrow do the labels
     * turn, whole, at the figure's font */
    int cols = panels.n <= 1 ? 1 : panels.n <= 4 ? 2 : panels.n <= 6 ? 3 : 4, tpt = 0;
    int nline = 1, wrapn = 0;
    bool turn = false;
    for (;;) {
        double room = 0.9 * (0.97 - (panels.n > 1 ? 0.14 : 0.12) - (cols - 1) * 0.1) *
                      p->o->w / cols / (most > 0 ? most : 1);
        for (tpt = plot_font_pt(p->o->w); tpt >= 10; tpt--) {
            wrapn = (int)(room / (0.85 * tpt));
            size_t widest = 0;
            nline = 1;
            for (int g = 0; g < groups.n && wrapn > 0; g++) {
                int l = label_fold(strchr(groups.v[g], '\x1f') + 1, (size_t)wrapn, &widest);
                nline = l > nline ? l : nline;
            }
            if (wrapn > 0 && widest <= (size_t)wrapn && nline <= MAX_LABEL_LINES)
                break;
        }
        turn = tpt < 10;
        if (!turn || cols == 1)
            break;
        cols = 1;
    }
    int rows = (panels.n + cols - 1) / cols;
    if (turn) {
        tpt = plot_font_pt(p->o->w);
        nline = 1;
    }
    double ymax = 0;                    /* one y scale for all panels: mean + sd, with room */
    for (int c = 0; c < groups.n * pols.n; c++)
        if (cell[c].n) {
            double m = gsl_stats_mean(cell[c].v, 1, cell[c].n);
            double sd = cell[c].n > 1 ? gsl_stats_sd(cell[c].v, 1, cell[c].n) : 0;
            ymax = m + sd > ymax ? m + sd : ymax;
        }
    plot_gp_append(vars, sizeof vars, "; ymax = %.6g", ymax > 0 ? ymax * 1.12 : 1);
    plot_gp_append(vars, sizeof vars, "; npol = %d; onebar = %d; xrot = %d; npanel = %d; "
                   "prow = %d; pcol = %d; ratio = %d", pols.n, one, turn ? 1 : 0,
                   panels.n, rows, cols, p->o->ratio && !one && pols.n > 1 ? 1 : 0);
    plot_gp_append(vars, sizeof vars, "; array polcolour[%d]; array ptitle[%d]",
                   pols.n, panels.n);
    char **pnames = calloc((size_t)pols.n + 1, sizeof *pnames);
    for (int j = 0; pnames && j < pols.n; j++)
        pnames[j] = (char *)(uintptr_t)plot_display_name(pols.v[j]);
    plot_gp_append(vars, sizeof vars, "; keyrows = %d; array polname[%d]",
                   pnames ? plot_key_rows(p->o->w, pnames, pols.n) : 1, pols.n);
    free(pnames);
    for (int j = 0; j < pols.n; j++) {
        char q[600] = "";
        plot_gp_quote(q, sizeof q, plot_display_name(pols.v[j]));
        plot_gp_append(vars, sizeof vars, "; polcolour[%d] = '%s'; polname[%d] = %s", j + 1,
                       plot_policy_colour(pols.v[j]), j + 1, q);
    }
    int ptlines = 1;
    for (int k = 0; k < panels.n; k++) {
        char q[1100] = "";
        int l = plot_panel_title(p, cols, panels.v[k], q, sizeof q);
        ptlines = l > ptlines ? l : ptlines;
        plot_gp_append(vars, sizeof vars, "; ptitle[%d] = %s", k + 1, q);
    }
    plot_gp_append(vars, sizeof vars, "; ptlines = %d", ptlines);
    plot_panels_layout(vars, sizeof vars);
    /* turned labels stand upright below the plot: the figure grows by their length (about 11
     * pixels a character at 900 pixels wide), so that the bars keep their height; panels
     * make it taller by half a figure per row past the first */
    struct opts tall = *p->o;
    struct plot pt = *p;
    tall.h = p->o->h + (rows - 1) * p->o->h / 2;
    int labpx = (int)whole * 11 * p->o->w / 900 + 10;
    if (turn) {                         /* at most three figures' height in all */
        labpx = labpx * rows < 3 * p->o->h ? labpx : 3 * p->o->h / rows;
        tall.h += labpx * rows;
    }
    pt.o = &tall;
    plot_gp_append(vars, sizeof vars, "; hpx = %d; nline = %d; labpx = %d; xticfont = %d; "
                   "wrapn = %d", tall.h, nline, labpx, tpt, wrapn);
    rc = plot_render(&pt, "goodput", base, vars);
out:
    if (cell)
        for (int i = 0; i < groups.n * pols.n; i++)
            free(cell[i].v);
    free(cell);
    free(gi);
    free(pi);
    free(gpanel);
    free(inner);
    plot_names_free(&groups);
    plot_names_free(&pols);
    plot_names_free(&panels);
    return rc;
}

/* ---- goodput against a config value ---- */

#define LINES_ONE_PANEL 6               /* more lines than this: a panel per setting */
#define MAX_LINE_PANELS 9

struct xpoint {
    double x;
    struct vec y, used;                 /* used: the GPUs the runs' policy ran batches on */
};

static int cmp_xpoint(const void *a, const void *b)
{
    double x = ((const struct xpoint *)a)->x, y = ((const struct xpoint *)b)->x;
    return x < y ? -1 : x > y;
}

/* The sweep key that sets `xpath` ("models[0].slo_ms" is set by "models[*].slo_ms"). */
static void sweep_key_of(const char *xpath, char *out, size_t size)
{
    snprintf(out, size, "%s", xpath);
    char *b = strchr(out, '[');
    if (b && b[1] == '0' && b[2] == ']')
        b[1] = '*';
}

/* The settings key of run r that set x: xpath itself ("models[0].slo_ms" swept as such) or
 * its every-element form skey ("models[*].slo_ms"), so either is left out of the series. */
static const char *swept_key(const struct prun *r, const char *xpath, const char *skey)
{
    char quoted[300];
    snprintf(quoted, sizeof quoted, "\"%s\":", xpath);
    return r->settings && strstr(r->settings, quoted) ? xpath : skey;
}

/* When the run's sweep set x for every element of an array (a settings key "a[*].f", as
 * models[*].slo_ms), zeroes f in each element of cfg's a too, so that the configuration key
 * leaves out all of x, not only element 0's copy. */
static void zero_swept(cJSON *cfg, const char *settings, const char *skey)
{
    const char *star = strstr(skey, "[*].");
    cJSON *set = star ? cJSON_Parse(settings) : NULL;
    if (set && cJSON_GetObjectItemCaseSensitive(set, skey)) {
        char arr[256];
        snprintf(arr, sizeof arr, "%.*s", (int)(star - skey), skey);
        cJSON *a = (cJSON *)(uintptr_t)sim_json_get(cfg, arr), *el;
        if (!cJSON_IsArray(a))
            a = NULL;
        cJSON_ArrayForEach(el, a) {
            cJSON *f = (cJSON *)(uintptr_t)sim_json_get(el, star + 4);
            if (cJSON_IsNumber(f))
                cJSON_SetNumberValue(f, 0);
        }
    }
    cJSON_Delete(set);
}

int plot_goodput_vs(struct plot *p, const char *file, const char *xpath, const char *xlab)
{
    struct names ser = {0};
    struct xpoint *pts = NULL;
    int *npts = NULL, rc = 0;
    bool skip = false;
    char skey[256];
    sweep_key_of(xpath, skey, sizeof skey);
    pts = calloc((size_t)p->n * (size_t)p->n, sizeof *pts);
    npts = calloc((size_t)p->n, sizeof *npts);
    if (!pts || !npts) {
        rc = SIM_ENOMEM;
        goto out;
    }
    /* Each run's series (policy and setting), x, and config key without x and seed: runs of
     * one series whose configurations differ otherwise are not averaged together — each such
     * configuration becomes its own series, labelled by what differs (plot_config_label). */
    char (*key)[17] = calloc((size_t)p->n, sizeof *key);
    char **stitle = calloc((size_t)p->n, sizeof *stitle);
    double *xs = calloc((size_t)p->n, sizeof *xs);
    bool *mixed = calloc((size_t)p->n, sizeof *mixed);
    char **cfgtext = calloc((size_t)p->n, sizeof *cfgtext);   /* x and the sweep's keys at 0 */
    if (!key || !stitle || !xs || !mixed || !cfgtext) {
        rc = SIM_ENOMEM;
        goto out_keys;
    }
    for (int i = 0; i < p->n && !rc; i++) {
        const struct prun *r = &p->r[i];
        cJSON *cfg = cJSON_Parse(r->config);
        cJSON *xv = cfg ? (cJSON *)(uintptr_t)sim_json_get(cfg, xpath) : NULL;
        if (!cJSON_IsNumber(xv)) {
            char got[64] = "nothing";
            if (xv)
                sim_json_describe(xv, got, sizeof got);
            cJSON_Delete(cfg);
            if (p->o->all) {            /* `all` draws only the kinds the runs have data for */
                fprintf(stderr, "plot: %s %s skipped: run %lld (%s) has no number at %s (%s)\n",
                        p->label, file, (long long)r->id, r->name, xpath, got);
                skip = true;
                break;
            }
            rc = sim_err_set(SIM_EINVAL, "run %lld (%s): config %s: expected a number, found %s",
                             (long long)r->id, r->name, xpath, got);
            break;
        }
        xs[i] = xv->valuedouble;
        cJSON_SetNumberValue(xv, 0);    /* the key of everything but x (and the seed) */
        zero_swept(cfg, r->settings, skey);
        char *text = cfgtext[i] = cJSON_PrintUnformatted(cfg);
        cJSON_Delete(cfg);
        if (!text || sim_results_config_key(text, key[i]) ||
            !(stitle[i] = plot_series_title(r, swept_key(r, xpath, skey), NULL))) {
            rc = SIM_ENOMEM;
            break;
        }
    }
    if (!rc && !skip && p->o->all) {    /* one x value makes no line: nothing to draw */
        int distinct = 0;
        for (int i = 0; i < p->n && distinct < 2; i++)
            distinct += i == 0 || xs[i] != xs[0];
        if (distinct < 2) {
            fprintf(stderr, "plot: %s %s skipped: every run has %s = %g\n", p->label, file, xpath,
                    xs[0]);
            skip = true;
        }
    }
    if (!rc && !skip)
        rc = plot_mixed_units(p->n, stitle, key, mixed);
    for (int i = 0; i < p->n && !rc && !skip; i++) {
        const struct prun *r = &p->r[i];
        char t[1024], what[200];
        if (mixed[i]) {
            plot_config_label(p->n, stitle, key, (const char *const *)cfgtext, i, what,
                              sizeof what);
            snprintf(t, sizeof t, "%s %s", stitle[i], what);
        } else
            snprintf(t, sizeof t, "%s", stitle[i]);
        int s = plot_names_index(&ser, t);
        if (s < 0) {
            rc = SIM_ENOMEM;
            break;
        }
        struct xpoint *row = &pts[(size_t)s * (size_t)p->n];
        int k = 0;
        while (k < npts[s] && row[k].x != xs[i])
            k++;
        if (k == npts[s])
            row[npts[s]++].x = xs[i];
        rc = plot_vec_push(&row[k].y, p->o->y ? r->metric[p->o->y - 1] : r->value);
        if (!rc && !isnan(r->gpus_used))
            rc = plot_vec_push(&row[k].used, r->gpus_used);
    }
out_keys:
    for (int i = 0; stitle && i < p->n; i++)
        free(stitle[i]);
    for (int i = 0; cfgtext && i < p->n; i++)
        free(cfgtext[i]);
    free(key), free(stitle), free(xs), free(mixed), free(cfgtext);
    if (rc || skip)
        goto out;
    if (p->o->all) {                    /* lines of one point each: not a figure to draw */
        int most = 0;
        for (int k = 0; k < ser.n; k++)
            most = npts[k] > most ? npts[k] : most;
        if (most < 2) {
            fprintf(stderr, "plot: %s %s skipped: no policy or setting has two values of %s\n",
                    p->label, file, xpath);
            goto out;
        }
    }
    /* more lines than a legend under one plot can name legibly, of several policies and a
     * few settings: a panel per setting, a line per policy (plot_panels), the legend once */
    struct panels pn = {0};
    if ((rc = plot_panels_make(p, ser.v, ser.n, &pn)))
        goto out_panels;
    bool panels = ser.n > LINES_ONE_PANEL && pn.pol.n >= 2 && pn.set.n >= 2 &&
                  pn.set.n <= MAX_LINE_PANELS;
    int *order = malloc((size_t)ser.n * sizeof *order);    /* the blocks: by panel, policy */
    if (!order) {
        rc = SIM_ENOMEM;
        goto out_panels;
    }
    char svars[12288] = "";             /* the blocks' order, colours and panels */
    plot_panels_series(p, &pn, panels, ser.n, order, svars, sizeof svars);
    char base[4096];
    char yfile[256];
    if (p->o->y)                          /* goodput-vs -> gpu_s-vs, goodput-gpus -> gpu_s-gpus */
        snprintf(yfile, sizeof yfile, "%s-%s", plot_y_names[p->o->y], file + strlen("goodput-"));
    else
        snprintf(yfile, sizeof yfile, "%s", file);
    FILE *f = plot_dat_open(p, yfile, base, sizeof base);
    if (!f) {
        rc = SIM_EIO;
        goto out_order;
    }
    bool gpus = strcmp(xpath, "cluster.gpus") == 0;
    double ymax = 0, xlo = INFINITY, xhi = -INFINITY;  /* panels: one scale for all */
    for (int b = 0; b < ser.n; b++) {
        int s = order[b];
        struct xpoint *row = &pts[(size_t)s * (size_t)p->n];
        qsort(row, (size_t)npts[s], sizeof *row, cmp_xpoint);
        fputs(b ? "\n\n" : "", f), plot_put_label(f, plot_line_label(p, ser.v[s]));
        fputc('\n', f);
        for (int k = 0; k < npts[s]; k++) {
            fprintf(f, "%.6g", row[k].x);
            plot_put_stat(f, &row[k].y);
            plot_put_stat(f, &row[k].used);     /* columns 4, 5: GPUs used, mean and sd */
            fputc('\n', f);
            double m = gsl_stats_mean(row[k].y.v, 1, row[k].y.n);
            double sd = row[k].y.n > 1 ? gsl_stats_sd(row[k].y.v, 1, row[k].y.n) : 0;
            ymax = m + sd > ymax ? m + sd : ymax;
            xlo = row[k].x < xlo ? row[k].x : xlo;
            xhi = row[k].x > xhi ? row[k].x : xhi;
            double used = row[k].used.n ? gsl_stats_max(row[k].used.v, 1, row[k].used.n) : NAN;
            if (gpus && used < row[k].x)
                fprintf(stderr, "plot: %s %s: %s used at most %g of its %g GPUs: the others "
                        "stayed idle (its own plan or queues limit it there, not the GPUs)\n",
                        p->label, file, ser.v[s], used, row[k].x);
        }
    }
    if ((rc = plot_dat_close(p, f, base)))
        goto out_order;
    char vars[16384], title[512];
    const char *what = p->o->y ? y_labels[p->o->y] : plot_goodput_ylabel(p);
    size_t wl = strcspn(what, "(");     /* the y axis's words without its unit */
    while (wl > 0 && what[wl - 1] == ' ')
        wl--;
    snprintf(title, sizeof title, "%s: %.*s vs %s", p->label, (int)wl, what, xlab);
    plot_title_policy(p, title, sizeof title);
    plot_gp_start(vars, sizeof vars, base, title);
    plot_gp_set(vars, sizeof vars, "ylab", p->o->y ? y_labels[p->o->y] : plot_goodput_ylabel(p));
    plot_gp_set(vars, sizeof vars, "xlab", xlab);
    /* the key in the tick labels' size, smaller only where its longest title would not fit
     * the figure's width (gnuplot drops such a key): about 0.7 pt a character, and the
     * sample line beside it */
    size_t longest = 1;
    for (int s = 0; s < ser.n; s++) {
        size_t l = strlen(plot_line_label(p, ser.v[s]));
        longest = l > longest ? l : longest;
    }
    int kpt = plot_font_pt(p->o->w), fit = (int)((p->o->w - 160) / (0.7 * (double)longest));
    plot_gp_append(vars, sizeof vars, "; keyfont = %d; ymax = %.6g; xlo = %.6g; xhi = %.6g%s",
                   panels || fit >= kpt ? kpt : fit < 7 ? 7 : fit, ymax > 0 ? ymax * 1.08 : 1,
                   xlo, xhi, svars);
    struct opts tall = *p->o;
    struct plot pt = *p;
    tall.h = panels ? plot_panels_height(p, &pn) : p->o->h;
    pt.o = &tall;
    rc = plot_render(&pt, "goodput_vs", base, vars);
out_order:
    free(order);
out_panels:
    plot_panels_free(&pn);
out:
    if (pts)
        for (size_t i = 0; i < (size_t)p->n * (size_t)p->n; i++)
            free(pts[i].y.v), free(pts[i].used.v);
    free(pts);
    free(npts);
    plot_names_free(&ser);
    return rc;
}
