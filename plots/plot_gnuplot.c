/* plot_gnuplot — the shared driver of `servesim plot`'s figures: small helpers (strings,
 * growable lists, file-safe names, run labels and series titles), the .dat files a figure's
 * data goes to, and gnuplot itself: the compiled-in or --scripts script, its variables, the
 * line types and fonts, one run per terminal (PNG through cairo, SVG). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <gsl/gsl_statistics_double.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plot_int.h"
#include "sim_err.h"
#include "sim_grow.h"
#include "sim_out.h"
#include "sim_readback.h"

/* ---- small helpers ---- */

char *plot_strdup(const char *s)
{
    return strdup(s ? s : "");
}

int plot_names_index(struct names *ns, const char *s)
{
    for (int i = 0; i < ns->n; i++)
        if (strcmp(ns->v[i], s) == 0)
            return i;
    if (sim_grow(&ns->v, &ns->cap, ns->n + 1, sizeof *ns->v, 16))
        return SIM_ENOMEM;
    if (!(ns->v[ns->n] = strdup(s)))
        return SIM_ENOMEM;
    return ns->n++;
}

int plot_names_find(const struct names *ns, const char *s)
{
    for (int i = 0; ns && i < ns->n; i++)
        if (strcmp(ns->v[i], s) == 0)
            return i;
    return -1;
}

void plot_names_free(struct names *ns)
{
    for (int i = 0; i < ns->n; i++)
        free(ns->v[i]);
    free(ns->v);
    memset(ns, 0, sizeof *ns);
}

int plot_vec_push(struct vec *x, double d)
{
    if (x->n == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 8;
        double *v = realloc(x->v, cap * sizeof *v);
        if (!v)
            return SIM_ENOMEM;
        x->v = v;
        x->cap = cap;
    }
    x->v[x->n++] = d;
    return 0;
}

/* A name from the database (a path, a series, a key) made fit for a file name: letters,
 * digits, '-', '_' and '.' stay, anything else becomes '_'. */
void plot_file_safe(char *name)
{
    for (char *c = name; *c; c++)
        if (!(*c == '-' || *c == '_' || *c == '.' || (*c >= '0' && *c <= '9') ||
              ((*c | 32) >= 'a' && (*c | 32) <= 'z')))
            *c = '_';
}

int plot_db_fail(struct plot *p, const char *what)
{
    return sim_err_set(SIM_EINVAL, "%s: %s: %s", p->o->db, what, sqlite3_errmsg(p->db));
}

/* Whether key k is one of `list` (keys separated by newlines). */
static bool key_in(const char *list, const char *k)
{
    size_t kl = strlen(k);
    for (const char *c = list; c && *c;) {
        size_t l = strcspn(c, "\n");
        if (l == kl && strncmp(c, k, l) == 0)
            return true;
        c += l;
        c += *c ? 1 : 0;
    }
    return false;
}

/* The settings of r in words, ", "-separated: every one but those of `drop`, or only those
 * of `only` (each a list of keys separated by newlines; NULL: none, any). */
static char *setting_words(const struct prun *r, const char *drop, const char *only)
{
    /* labels say what differs between the runs drawn: settings of one value in all of them
     * (a sweep's only case, an axis held fixed) are left out; each setting in words: the
     * sweep file's label for it where it gave one, else plot_word_setting's */
    cJSON *j = r->settings ? cJSON_Parse(r->settings) : NULL;
    cJSON *lab = r->labels ? cJSON_Parse(r->labels) : NULL;
    size_t cap = 64, n = 0;
    char *out = malloc(cap);
    if (!out)
        goto done;
    out[0] = '\0';
    for (const cJSON *it = j ? j->child : NULL; it; it = it->next) {
        const char *k = it->string;
        if (strcmp(k, "seed") == 0 || strcmp(k, "policy.name") == 0 || key_in(drop, k) ||
            (only && !key_in(only, k)) || (r->same && plot_names_find(r->same, k) >= 0))
            continue;
        char w[400];
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(lab, k);
        if (cJSON_IsString(l))
            snprintf(w, sizeof w, "%s", l->valuestring);
        else
            plot_word_setting(k, it, w, sizeof w);
        size_t need = n + strlen(w) + 3;
        if (need > cap) {
            char *o = realloc(out, cap = 2 * need);
            if (!o) {
                free(out);
                out = NULL;
                goto done;
            }
            out = o;
        }
        n += (size_t)sprintf(out + n, "%s%s", n ? ", " : "", w);
    }
done:
    cJSON_Delete(j);
    cJSON_Delete(lab);
    return out;
}

char *plot_setting_of(const struct prun *r, const char *drop)
{
    return setting_words(r, drop, NULL);
}

char *plot_setting_only(const struct prun *r, const char *key)
{
    return setting_words(r, NULL, key);
}

/* "Policy, setting" as a line title ("Symphony, 8 frontends"): the policy's display name
 * first, up to the first comma (plot_dist.c folds by it). */
char *plot_series_title(const struct prun *r, const char *drop, const char *model)
{
    char *set = plot_setting_of(r, drop);
    if (!set)
        return NULL;
    if (model) {                        /* a setting that names the model names it already */
        model = plot_display_name(model);
        size_t ml = strlen(model);
        for (const char *q = strstr(set, model); q; q = strstr(q + 1, model))
            if ((q == set || q[-1] == ' ') && (q[ml] == '\0' || q[ml] == ',')) {
                model = NULL;
                break;
            }
    }
    const char *pol = plot_display_name(r->policy);
    size_t len = strlen(pol) + strlen(set) + (model ? strlen(model) : 0) + 6;
    char *t = malloc(len);
    if (t)
        snprintf(t, len, "%s%s%s%s%s", pol, set[0] ? ", " : "", set, model ? ", " : "",
                 model ? model : "");
    free(set);
    return t;
}

const char *plot_one_policy(const struct plot *p)
{
    for (int i = 1; i < p->n; i++)
        if (strcmp(p->r[i].policy, p->r[0].policy) != 0)
            return NULL;
    return p->n > 0 ? plot_display_name(p->r[0].policy) : NULL;
}

const char *plot_line_label(const struct plot *p, const char *title)
{
    const char *pol = plot_one_policy(p);  /* "Policy, setting" -> "setting" */
    size_t l = pol ? strlen(pol) : 0;
    return pol && strncmp(title, pol, l) == 0 && title[l] == ',' && title[l + 1] == ' '
               ? title + l + 2 : title;
}

void plot_title_policy(const struct plot *p, char *title, size_t size)
{
    const char *pol = plot_one_policy(p);
    size_t n = strlen(title), l = strlen(p->label);
    char rest[600];
    if (!pol)
        return;
    if (strncmp(title, p->label, l) == 0 && title[l] == ':') {  /* "NAME (Policy): what" */
        snprintf(rest, sizeof rest, "%s", title + l);
        snprintf(title + l, size - l, " (%s)%s", pol, rest);
    } else
        snprintf(title + n, size - n, " (%s)", pol);
}

/* ---- gnuplot ---- */

static const char *script_text(const struct plot *p, const char *name, char **owned)
{
    *owned = NULL;
    if (p->o->scripts) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.gp", p->o->scripts, name);
        FILE *f = fopen(path, "rb");
        if (!f) {
            sim_err_set(SIM_EINVAL, "--scripts: %s: cannot open: %s", path, strerror(errno));
            return NULL;
        }
        size_t cap = 1 << 16;
        *owned = malloc(cap);
        size_t n = *owned ? fread(*owned, 1, cap - 1, f) : 0;
        fclose(f);
        if (!*owned) {
            sim_err_set(SIM_ENOMEM, "reading %s", path);
            return NULL;
        }
        (*owned)[n] = '\0';
        return *owned;
    }
    for (const struct plot_script *s = plot_scripts; s->name; s++)
        if (strcmp(s->name, name) == 0)
            return s->text;
    sim_err_set(SIM_EINTERNAL, "no built-in script %s.gp", name);
    return NULL;
}

/* Appends `s` to buf as a gnuplot single-quoted string ('' stands for a quote). */
/* Set when a figure's gnuplot variables did not fit their buffer: plot_render refuses to
 * draw from them (a cut assignment could still parse, and draw something wrong). */
static bool gp_cut;

void plot_gp_begin(void)
{
    gp_cut = false;
}

void plot_gp_quote(char *buf, size_t size, const char *s)
{
    size_t n = strlen(buf);
    if (n + 3 > size) {
        gp_cut = true;
        return;
    }
    buf[n++] = '\'';
    for (; *s && n + 4 <= size; s++) {   /* room for a doubled quote, the closing one, NUL */
        if (*s == '\'')
            buf[n++] = '\'';
        buf[n++] = *s == '\n' ? ' ' : *s;
    }
    gp_cut |= *s != '\0';
    buf[n++] = '\'';
    buf[n] = '\0';
}

/* Appends "; name = 'value'" (or the first "name = 'value'") to the gnuplot variables. */
void plot_gp_set(char *vars, size_t size, const char *name, const char *value)
{
    size_t len = strlen(vars);
    int w = snprintf(vars + len, size - len, "%s%s = ", len ? "; " : "", name);
    gp_cut |= w < 0 || (size_t)w >= size - len;
    plot_gp_quote(vars, size, value);
}

/* Appends formatted text to the gnuplot variables ("; nser = %d", numbers: plot_gp_set quotes
 * strings). */
__attribute__((format(printf, 3, 4)))
void plot_gp_append(char *vars, size_t size, const char *fmt, ...)
{
    size_t len = strlen(vars);
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(vars + len, size - len, fmt, ap);
    va_end(ap);
    gp_cut |= w < 0 || (size_t)w >= size - len;
}

/* Starts the variables every script takes: datafile (BASE.dat) and plottitle. */
void plot_gp_start(char *vars, size_t size, const char *base, const char *title)
{
    char dat[4200];
    snprintf(dat, sizeof dat, "%s.dat", base);
    vars[0] = '\0';
    plot_gp_set(vars, size, "datafile", dat);
    plot_gp_set(vars, size, "plottitle", title);
}

/* Removes what a failed figure left: BASE.dat, .png, .svg (never the database read, where
 * one of those names is it: the figure was refused for that). */
void plot_discard(const struct plot *p, const char *base)
{
    static const char *const ext[] = {"dat", "png", "svg"};
    for (int i = 0; i < 3; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s.%s", base, ext[i]);
        if (!sim_out_same_file(path, p->o->db))
            remove(path);
    }
}

/* 40 distinct line types for every figure: the 10 colours of a qualitative palette (Tableau
 * 10, told apart in print and by most colour-blind readers) times 4 dash types, every
 * (colour, dash) pair once (series i: colour i mod 10, dash (3 (i div 10) + i) mod 4), so
 * neighbouring series differ in both, and two series with the same data stay visible (the
 * dashes of one show the other's colour); gnuplot's default cycles 8 colours. Figures with
 * more series fold the smallest (FOLD_ABOVE). */
#define LINETYPES                                                                             \
    "set linetype cycle 40\n"                                                                 \
    "do for [i=1:40] { dash = 1 + (3 * int((i - 1) / 10) + (i - 1) % 10) % 4; "                \
    "set linetype i lw 2 dt dash "                                                             \
    "lc rgb word('#4e79a7 "                                                                     \
    "#f28e2b #e15759 #76b7b2 #59a14f #edc948 #b07aa1 #ff9da7 #9c755f #bab0ac', 1 + (i - 1) % 10) }\n"

/* The font size for an image w pixels wide: 14 pt at the default 900 (text about 7 pt when
 * the figure is printed one paper column, 3.3 in, wide), in proportion, at least 8. */
int plot_font_pt(int w)
{
    int pt = (w * 14 + 450) / 900;
    return pt < 8 ? 8 : pt;
}

/* Runs gnuplot with `vars` (assignments) on the script, once per format; on failure nothing
 * of the figure is left. */
/* Runs gnuplot on the preamble and the script's text, writing tmp; its stderr shown only
 * when it fails; on success tmp becomes out. */
static int run_gnuplot(const char *pre, const char *text, const char *script, const char *out,
                       const char *tmp)
{
    int fd[2];
    if (pipe(fd)) {
        return sim_err_set(SIM_EIO, "pipe: %s", strerror(errno));
    }
    /* gnuplot's stderr is kept aside: shown when it fails, dropped when it succeeds (its
     * warnings there, "empty x range", "difficulty making room for xtic labels", are
     * about its own layout and said nothing to a user) */
    FILE *errf = tmpfile();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        if (errf)
            fclose(errf);
        return sim_err_set(SIM_EIO, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        dup2(fd[0], 0);
        if (errf)
            dup2(fileno(errf), 2);
        close(fd[0]);
        close(fd[1]);
        execlp("gnuplot", "gnuplot", "-", (char *)NULL);
        _exit(127);
    }
    close(fd[0]);
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    FILE *w = fdopen(fd[1], "w");
    if (w) {
        fputs(pre, w);
        fputs(text, w);
        fputs("\nunset output\n", w);
        fclose(w);
    } else {
        close(fd[1]);
    }
    signal(SIGPIPE, old);
    int st = 0;
    waitpid(pid, &st, 0);
    if (errf && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        rewind(errf);
        char buf[4096];
        size_t got;
        while ((got = fread(buf, 1, sizeof buf, errf)) > 0)
            fwrite(buf, 1, got, stderr);
    }
    if (errf)
        fclose(errf);
    if (!WIFEXITED(st) || WEXITSTATUS(st) == 127)
        return sim_err_set(SIM_EIO, "gnuplot could not be run: install gnuplot "
                           "(scripts/install-deps.sh installs gnuplot-nox)");
    if (WEXITSTATUS(st) != 0)
        return sim_err_set(SIM_EIO, "gnuplot failed on %s.gp for %s (its message is "
                           "above)", script, out);
    struct stat sb;
    if (stat(tmp, &sb) || sb.st_size == 0)
        return sim_err_set(SIM_EIO, "gnuplot wrote no %s", out);
    return sim_out_commit(tmp, out);
}

int plot_render(struct plot *p, const char *script, const char *base, const char *vars)
{
    char *owned;
    const char *text = script_text(p, script, &owned);
    if (!text)
        return p->o->scripts ? SIM_EINVAL : SIM_EINTERNAL;   /* message set */
    static const char *const fmts[] = {"png", "svg"};
    int rc = 0;
    if (gp_cut) {
        gp_cut = false;
        free(owned);
        plot_discard(p, base);
        return sim_err_set(SIM_EINTERNAL, "%s: the figure's gnuplot variables did not fit their "
                           "buffer (too many series or too long names): nothing drawn", base);
    }
    size_t prelen = strlen(vars) + 17000;   /* the terminal, the output's path, the types */
    char *pre = malloc(prelen);
    for (int f = 0; f < 2 && !rc && pre; f++) {
        char out[4200] = "", tmp[4300];
        snprintf(out, sizeof out, "%s.%s", base, fmts[f]);
        /* gnuplot writes a new file beside the figure, renamed over it when it succeeds: a
         * link planted at the figure's name is replaced, never written through */
        int tfd = (rc = sim_out_not_input(out, p->o->db, "the database")) ? rc
                  : sim_out_tmp(out, tmp, sizeof tmp);
        if (tfd < 0) {
            rc = tfd;
            break;
        }
        close(tfd);
        char qout[8600] = "";
        plot_gp_quote(qout, sizeof qout, tmp);
        snprintf(pre, prelen,
                 f == 0 ? "set terminal pngcairo size %d,%d noenhanced font 'sans,%d'\n"
                        : "set terminal svg size %d,%d noenhanced dynamic font 'sans,%d' "
                          "background '#ffffff'\n",
                 p->o->w, p->o->h, plot_font_pt(p->o->w));
        size_t len = strlen(pre);
        /* text is UTF-8: gnuplot's strlen and substrings count its characters */
        snprintf(pre + len, prelen - len, "set output %s\nset encoding utf8\n%s%s\n", qout,
                 LINETYPES, vars);
        rc = run_gnuplot(pre, text, script, out, tmp);
        remove(tmp);                    /* left only where gnuplot failed */
    }
    if (!pre)
        rc = sim_err_set(SIM_ENOMEM, "%s: the figure's gnuplot preamble", base);
    free(pre);
    free(owned);
    if (rc)
        plot_discard(p, base);
    else
        fprintf(stderr, "plot: %s.png, .svg, .dat\n", base);
    return rc;
}

/* Opens OUT/PREFIX-NAME.dat for writing; base receives OUT/PREFIX-NAME. */
/* Writes a label into a .dat file as gnuplot reads it back (columnhead, xtic): a double quote
 * would start a quoted field and a tab or newline end it, so they become ' and spaces. */
void plot_put_label(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(*s == '"' ? '\'' : (*s == '\t' || *s == '\n') ? ' ' : *s, f);
}

FILE *plot_dat_open(struct plot *p, const char *name, char *base, size_t size)
{
    snprintf(base, size, "%s/%s-%s", p->o->out, p->prefix, name);
    char path[4200];
    snprintf(path, sizeof path, "%s.dat", base);
    if (sim_out_not_input(path, p->o->db, "the database"))
        return NULL;
    int fd = sim_out_fresh(path);       /* a link planted at the name is replaced */
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        sim_err_set(SIM_EIO, "%s: cannot write: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

int plot_dat_close(const struct plot *p, FILE *f, const char *base)
{
    int bad = ferror(f);
    if ((fclose(f) != 0) | bad) {
        int e = errno;
        plot_discard(p, base);
        return sim_err_set(SIM_EIO, "%s.dat: cannot write: %s", base, strerror(e));
    }
    return 0;
}

const char *plot_goodput_ylabel(const struct plot *p)
{
    int g = 0;
    for (int i = 0; i < p->n; i++)
        g += p->r[i].goodput;
    return g == p->n ? "goodput (req/s within SLO)"
           : g == 0  ? "on-time throughput (req/s)"
                     : "goodput or on-time throughput (req/s)";
}

void plot_put_stat(FILE *f, const struct vec *x)
{
    if (!x->n) {
        fputs("\t?\t?", f);
        return;
    }
    fprintf(f, "\t%.6g\t%.6g", gsl_stats_mean(x->v, 1, x->n),
            x->n > 1 ? gsl_stats_sd(x->v, 1, x->n) : 0.0);
}

/* Runs averaged together must share their configuration. unit[i] names what run i is averaged
 * with (a setting and policy; a line); key[i] its config key. mixed[i]: the unit of run i
 * holds runs of more than one key, so each must be shown apart. */
int plot_mixed_units(int n, char *const *unit, char (*key)[17], bool *mixed)
{
    struct names u = {0};
    int *ui = calloc((size_t)n, sizeof *ui), *first = calloc((size_t)n, sizeof *first), rc = 0;
    bool *um = calloc((size_t)n, sizeof *um);
    if (!ui || !first || !um)
        rc = SIM_ENOMEM;
    for (int i = 0; i < n && !rc; i++) {
        int c = ui[i] = plot_names_index(&u, unit[i]);
        if (c < 0)
            rc = c;
        else if (!first[c])
            first[c] = i + 1;                   /* the unit's first run, 1-based */
        else if (strcmp(key[first[c] - 1], key[i]) != 0)
            um[c] = true;
    }
    for (int i = 0; i < n && !rc; i++)
        mixed[i] = um[ui[i]];
    free(ui), free(first), free(um);
    plot_names_free(&u);
    return rc;
}

/* ---- what tells configurations apart ---- */

/* Appends to `out` (", "-separated, once each) the leaves where a differs from b, as a's
 * setting in words ("work-conserving", "max batch 8"; "no LEAF" where a lacks it). */
static void config_diff(const cJSON *a, const cJSON *b, const char *leaf, char *out, size_t size)
{
    if (cJSON_IsObject(a) && cJSON_IsObject(b)) {
        for (const cJSON *x = a->child; x; x = x->next)
            if (strcmp(x->string, "seed") != 0 || leaf)
                config_diff(x, cJSON_GetObjectItemCaseSensitive(b, x->string), x->string, out,
                            size);
        for (const cJSON *y = b->child; y; y = y->next)
            if (!cJSON_GetObjectItemCaseSensitive(a, y->string) &&
                (strcmp(y->string, "seed") != 0 || leaf))
                config_diff(NULL, y, y->string, out, size);
        return;
    }
    if (cJSON_IsArray(a) && cJSON_IsArray(b) && cJSON_GetArraySize(a) == cJSON_GetArraySize(b)) {
        for (const cJSON *x = a->child, *y = b->child; x && y; x = x->next, y = y->next)
            config_diff(x, y, leaf, out, size);
        return;
    }
    if (a && b && cJSON_Compare(a, b, true))
        return;
    char item[160];
    if (!a) {
        char w[128];
        plot_word_axis(leaf ? leaf : "config", w, sizeof w);
        snprintf(item, sizeof item, "no %s", w);
    } else
        plot_word_setting(leaf ? leaf : "config", a, item, sizeof item);
    /* once each: a whole item between separators */
    size_t il = strlen(item);
    for (const char *h = strstr(out, item); h; h = strstr(h + 1, item))
        if ((h == out || h[-1] == ' ') && (h[il] == ',' || h[il] == '\0'))
            return;
    size_t len = strlen(out);
    snprintf(out + len, size - len, "%s%s", len ? ", " : "", item);
}

void plot_config_label(int n, char *const *unit, char (*key)[17], const char *const *config,
                       int i, char *out, size_t size)
{
    /* one run of each other configuration is compared; past 32 of them the label would be
     * too long to read anyway, and the key stands in */
    char diff[512] = "", seen[32][17];
    int nseen = 0;
    bool many = false;
    cJSON *a = cJSON_Parse(config[i]);
    for (int j = 0; j < n && a && !many; j++) {
        if (j == i || strcmp(unit[j], unit[i]) != 0 || strcmp(key[j], key[i]) == 0)
            continue;
        int k = 0;
        while (k < nseen && strcmp(seen[k], key[j]) != 0)
            k++;
        if (k < nseen)
            continue;
        if (nseen == 32) {
            many = true;
            break;
        }
        memcpy(seen[nseen++], key[j], 17);
        cJSON *b = cJSON_Parse(config[j]);
        if (b)
            config_diff(a, b, NULL, diff, sizeof diff);
        cJSON_Delete(b);
    }
    cJSON_Delete(a);
    if (many || !diff[0] || strlen(diff) > 80)   /* nothing found, or too much: the key */
        snprintf(out, size, "(configuration %.6s)", key[i]);
    else
        snprintf(out, size, "(%s)", diff);
}
