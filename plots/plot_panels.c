/* plot_panels — small multiples for `servesim plot`: series titled "Policy, setting"
 * (plot_series_title) split into a panel per setting with a line or bar per policy in the
 * policy's colour, the panels' grid and the figure's height, and the gnuplot variables that
 * the scripts of such figures read (batch_hist.gp, goodput_vs.gp, cdf.gp). */
#include <stdlib.h>
#include <string.h>

#include "plot_int.h"
#include "sim_err.h"

size_t plot_policy_len(const char *title)
{
    return strcspn(title, ",");
}

int plot_panels_make(const struct plot *p, char *const *titles, int nser, struct panels *pn)
{
    memset(pn, 0, sizeof *pn);
    pn->sp = calloc((size_t)nser + 1, sizeof *pn->sp);
    pn->spol = calloc((size_t)nser + 1, sizeof *pn->spol);
    pn->praw = calloc((size_t)nser + 1, sizeof *pn->praw);
    if (!pn->sp || !pn->spol || !pn->praw)
        return SIM_ENOMEM;
    const char *one = plot_one_policy(p);
    for (int s = 0; s < nser; s++) {
        /* the series' policy: the longest display name of a drawn run's policy its title
         * starts with ("Symphony (work-conserving)" too), else, where one policy drew them
         * all, that one ("others (3 series folded)"); its setting, the rest */
        const char *t = titles[s], *pol = NULL;
        size_t pl = 0;
        for (int i = 0; i < p->n; i++) {
            const char *d = plot_display_name(p->r[i].policy);
            size_t l = strlen(d);
            if (l > pl && strncmp(t, d, l) == 0 && (t[l] == '\0' || t[l] == ',' || t[l] == ' ')) {
                pol = d;
                pl = l;
            }
        }
        const char *set = t + pl;
        set += set[0] == ',' ? 1 : 0;
        set += set[0] == ' ' ? 1 : 0;
        if (!pol) {
            size_t cl = plot_policy_len(t);
            char own[256];
            snprintf(own, sizeof own, "%.*s", (int)cl, t);
            pn->spol[s] = plot_names_index(&pn->pol, one ? one : own);
            set = one ? t : t[cl] ? t + cl + 2 : "";
        } else
            pn->spol[s] = plot_names_index(&pn->pol, pol);
        pn->sp[s] = plot_names_index(&pn->set, set);
        if (pn->sp[s] < 0 || pn->spol[s] < 0)
            return SIM_ENOMEM;
    }
    for (int j = 0; j < pn->pol.n; j++)     /* each policy's own name, for its colour */
        for (int i = 0; i < p->n && !pn->praw[j]; i++)
            if (strcmp(plot_display_name(p->r[i].policy), pn->pol.v[j]) == 0)
                pn->praw[j] = p->r[i].policy;
    int n = pn->set.n;
    pn->cols = n <= 1 ? 1 : n <= 4 ? 2 : n <= 9 ? 3 : 4;
    pn->rows = (n + pn->cols - 1) / pn->cols;
    return 0;
}

int plot_panels_height(const struct plot *p, const struct panels *pn)
{
    return p->o->h + (pn->rows - 1) * p->o->h / 2;
}

/* Where panel k lies, and a strip at the top for the legend, as gnuplot commands to eval:
 * the script sets the grid's box (pleft, pright, ptop, pbottom: screen fractions) and its
 * gaps (pgapx, pgapy) first. The legend is a plot of its own across the whole width (a key
 * drawn by the first panel is laid out within that panel's width: it wraps, and runs into
 * the panels' titles). */
void plot_panels_layout(char *vars, size_t size)
{
    plot_gp_append(vars, size,
                   "; pw(x) = (pright - pleft - (pcol - 1) * pgapx) / pcol"
                   "; ph(x) = (ptop - pbottom - (prow - 1) * pgapy) / prow"
                   "; px(k) = pleft + ((k - 1) %% pcol) * (pw(0) + pgapx)"
                   "; py(k) = ptop - int((k - 1) / pcol) * (ph(0) + pgapy)"
                   "; panel(k) = sprintf('set lmargin at screen %%.4f; set rmargin at screen "
                   "%%.4f; set tmargin at screen %%.4f; set bmargin at screen %%.4f', px(k), "
                   "px(k) + pw(0), py(k), py(k) - ph(0))"
                   "; panelkey(x) = sprintf('set lmargin at screen 0.02; set rmargin at screen "
                   "0.98; set tmargin at screen %%.4f; set bmargin at screen %%.4f; unset "
                   "border; unset tics; unset xlabel; unset ylabel; unset title; unset grid; "
                   "unset arrow; unset label; unset logscale; set offsets 0, 0, 0, 0; set "
                   "xrange [0:1]; set yrange [0:1]; set key at screen 0.5, screen %%.4f "
                   "center top horizontal samplen 3', 1 - 40.0 / hpx, 1 - (70.0 + 22 * "
                   "(keyrows - 1)) / hpx, 1 - 36.0 / hpx)");
}

int plot_key_rows(int w, char *const *names, int n)
{
    /* gnuplot's horizontal key: columns as wide as its widest entry (about 0.62 pt a
     * character at the figure's font, and the sample and gaps), as many as the width holds */
    size_t wide = 1;
    for (int i = 0; i < n; i++)
        wide = strlen(names[i]) > wide ? strlen(names[i]) : wide;
    double col = (double)wide * 0.62 * plot_font_pt(w) + 80;
    int per = (int)(0.96 * w / col);
    per = per < 1 ? 1 : per;
    return n > 0 ? (n + per - 1) / per : 1;
}

int plot_panel_title(const struct plot *p, int cols, const char *title, char *q, size_t size)
{
    /* wider than its panel (about 0.66 pt a character): broken at the ", " nearest its
     * middle, as 'first' . "\n" . 'second' */
    double room = 0.8 * p->o->w / cols, ch = 0.66 * plot_font_pt(p->o->w);
    char t[512];
    snprintf(t, sizeof t, "%s", title);
    size_t len = strlen(t);
    int lines = 1;
    q[0] = '\0';
    if ((double)len * ch > room) {
        char *best = NULL;
        for (char *c = strstr(t, ", "); c; c = strstr(c + 1, ", "))
            if (!best || labs((long)(c - t) - (long)len / 2) < labs((long)(best - t) - (long)len / 2))
                best = c;
        if (best) {
            *best = '\0';
            plot_gp_quote(q, size, t);
            snprintf(q + strlen(q), size - strlen(q), " . \"\\n\" . ");
            memmove(t, best + 2, strlen(best + 2) + 1);
            lines = 2;
        }
    }
    plot_gp_quote(q, size, t);
    return lines;
}

void plot_panels_vars(const struct plot *p, const struct panels *pn, char *vars, size_t size)
{
    plot_gp_append(vars, size, "; npanel = %d; prow = %d; pcol = %d; hpx = %d; npol = %d; "
                   "array ptitle[%d]; array polname[%d]; array polcolour[%d]", pn->set.n,
                   pn->rows, pn->cols, plot_panels_height(p, pn), pn->pol.n, pn->set.n,
                   pn->pol.n, pn->pol.n);
    for (int j = 0; j < pn->pol.n; j++) {
        char q[600] = "";
        plot_gp_quote(q, sizeof q, pn->pol.v[j]);
        plot_gp_append(vars, size, "; polname[%d] = %s; polcolour[%d] = '%s'", j + 1, q, j + 1,
                       plot_policy_colour(pn->praw[j] ? pn->praw[j] : pn->pol.v[j]));
    }
    int lines = 1;
    for (int k = 0; k < pn->set.n; k++) {
        char q[1100] = "";
        int l = plot_panel_title(p, pn->cols, pn->set.v[k], q, sizeof q);
        lines = l > lines ? l : lines;
        plot_gp_append(vars, size, "; ptitle[%d] = %s", k + 1, q);
    }
    plot_gp_append(vars, size, "; ptlines = %d; keyrows = %d", lines,
                   plot_key_rows(p->o->w, pn->pol.v, pn->pol.n));
    plot_panels_layout(vars, size);
}

void plot_panels_series(const struct plot *p, const struct panels *pn, bool panels, int nser,
                        int *order, char *vars, size_t size)
{
    int nb = 0;
    for (int k = 0; k < (panels ? pn->set.n : 1); k++)
        for (int j = 0; j < (panels ? pn->pol.n : 1); j++)
            for (int s = 0; s < nser; s++)
                if (!panels || (pn->sp[s] == k && pn->spol[s] == j))
                    order[nb++] = s;
    plot_gp_append(vars, size, "; nser = %d; array sercolour[%d]; array serdash[%d]", nser,
                   nser, nser);
    for (int b = 0; b < nser; b++) {
        int s = order[b], j = pn->spol[s];
        const char *pol = pn->praw[j] ? pn->praw[j] : pn->pol.v[j];
        char c[8];
        if (!panels && pn->pol.n == 1)
            plot_policy_shade(pol, b, nser, c);
        else
            snprintf(c, sizeof c, "%s", plot_policy_colour(pol));
        plot_gp_append(vars, size, "; sercolour[%d] = '%s'; serdash[%d] = %d", b + 1, c, b + 1,
                       1 + (panels ? j : b) % 5);
    }
    if (!panels) {
        plot_gp_append(vars, size, "; npanel = 1");
        return;
    }
    plot_panels_vars(p, pn, vars, size);
    plot_gp_append(vars, size, "; array pstart[%d]; array pcount[%d]", pn->set.n, pn->set.n);
    for (int k = 0, b = 0; k < pn->set.n; k++) {
        int c = 0;
        for (int s = 0; s < nser; s++)
            c += pn->sp[s] == k;
        plot_gp_append(vars, size, "; pstart[%d] = %d; pcount[%d] = %d", k + 1, b, k + 1, c);
        b += c;
    }
}

int plot_series_colours(const struct plot *p, char *const *titles, int n, char *vars,
                        size_t size)
{
    struct panels pn;
    int *order = malloc(((size_t)n + 1) * sizeof *order);
    int rc = plot_panels_make(p, titles, n, &pn);
    if (!rc && !order)
        rc = SIM_ENOMEM;
    if (!rc)
        plot_panels_series(p, &pn, false, n, order, vars, size);
    free(order);
    plot_panels_free(&pn);
    return rc;
}

void plot_panels_free(struct panels *pn)
{
    free(pn->sp);
    free(pn->spol);
    free(pn->praw);
    plot_names_free(&pn->set);
    plot_names_free(&pn->pol);
    memset(pn, 0, sizeof *pn);
}
