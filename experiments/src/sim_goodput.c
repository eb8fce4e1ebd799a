/* sim_goodput — bracketing and bisection over the load scale. */
#include "sim_goodput.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sim_err.h"
#include "sim_progress.h"
#include "sim_wall.h"

int sim_run_once(const struct sim_config *cfg, double scale, const struct sim_observer *obs,
                 struct sim_result **out)
{
    struct sim *s = NULL;
    struct wl_replay *rp;
    double t0 = sim_wall_seconds();
    int rc = sim_config_engine(cfg, scale, NULL, &s, &rp);
    if (rc)
        return rc;
    if (obs)
        sim_set_observer(s, obs);
    if (!(rc = sim_run(s)) && !(rc = sim_result_collect(s, out)) && rp)
        (*out)->trace_gaps = wl_replay_gaps(rp, &(*out)->trace_gap_s);
    sim_destroy(s);
    if (!rc)
        (*out)->wall_s = sim_wall_seconds() - t0;
    return rc;
}

int sim_run_shown(const struct sim_config *cfg, double scale, bool progress, const char *what,
                  struct sim_result **out)
{
    struct sim_progress pg;
    int rc = sim_run_once(cfg, scale, sim_progress_start(&pg, progress, cfg->world.duration_s +
                                                         cfg->world.drain_s, what), out);
    sim_progress_end(&pg);
    return rc;
}

static int probe(const struct sim_config *cfg, struct sim_goodput *g, double scale,
                 bool progress, struct sim_result **res)
{
    if (g->nprobes == (int)(sizeof g->probes / sizeof g->probes[0]))
        return sim_err_set(SIM_EINTERNAL, "goodput search: too many probes");
    char what[96];
    snprintf(what, sizeof what, "goodput probe %d (load x%.5g)", g->nprobes + 1, scale);
    int rc = sim_run_shown(cfg, scale, progress, what, res);
    if (rc)
        return rc;
    struct sim_probe *p = &g->probes[g->nprobes++];
    const struct sim_result *r = *res;
    p->scale = scale;
    p->offered_rps = r->offered_rps;
    /* a probe that offered no request shows nothing: it never passes (a load too small to
     * offer one is no goodput) */
    p->pass = r->offered > 0 && sim_rule_pass(cfg->search_rule, r);
    p->worst_bad_frac = r->worst_bad_frac;
    p->all_bad_frac = r->bad_rate;
    p->worst_p99_ms = r->nmodels ? r->models[r->worst_model].p99_ms : 0;
    snprintf(p->worst_model, sizeof p->worst_model, "%s",
             r->nmodels ? r->models[r->worst_model].name : "");
    if (progress)   /* in place on a terminal, a line per probe otherwise */
        fprintf(stderr, "%sgoodput probe %2d: load x%-9.5g %10.1f req/s %s (all %.2f%% bad, worst "
                "%s %.2f%%)%s", isatty(STDERR_FILENO) ? "\r" : "", g->nprobes, scale,
                p->offered_rps, p->pass ? "pass" : "FAIL", 100 * p->all_bad_frac, p->worst_model,
                100 * p->worst_bad_frac, isatty(STDERR_FILENO) ? "   " : "\n");
    return 0;
}

/* Keeps the result of the best passing probe in g->best, frees the rest. */
static void keep(struct sim_goodput *g, struct sim_result *r, bool better)
{
    if (better) {
        sim_result_destroy(g->best);
        g->best = r;
    } else {
        sim_result_destroy(r);
    }
}

int sim_config_feasible(const struct sim_config *cfg)
{
    const struct sim_world *w = &cfg->world;
    if (w->app)
        return 0;
    for (int n = 0; n < w->nnodes; n++)
        if (w->nodes[n].cores > 0)
            return 0;
    double net_ms = (w->ctrl_us + w->data_us_per_request + w->resp_us) / 1e3;
    /* on top of the network, what every request surely waits for: its executor's host time
     * around the batch, and, where the policy routes every request to the central
     * controller (no route callback) and the controller's time is charged, its admission
     * and its batch's dispatch there */
    /* (drawn per batch, half the batches take at least its median: counted for p >= 50) */
    double host_ms = w->host_us_p99 > 0 && w->percentile < 50 ? 0 : w->host_us_per_batch / 1e3;
    double ctrl_ms = w->ctrl.threads > 0 && w->policy && !w->policy->route
                         ? (w->ctrl.us_per_request + w->ctrl.us_per_batch) / 1e3 : 0;
    char msg[1024] = "";
    size_t len = 0;
    int bad = 0;
    for (int m = 0; m < w->nmodels; m++) {
        const struct sim_model_cfg *md = &w->models[m];
        if (md->sized)
            continue;
        double best = -1;
        for (int n = 0; n < w->nnodes || n == 0; n++) {
            const char *kind = w->nnodes ? w->nodes[n].gpu_kind : w->gpu_kind;
            int k = sim_model_cfg_kind(md, kind[0] ? kind : w->gpu_kind);
            if (k >= 0) {
                double l = sim_profile_ms(&md->prof[k], 1);
                best = best < 0 || l < best ? l : best;
            }
        }
        double fixed = net_ms + md->stack_ms + host_ms + ctrl_ms;   /* and its serving stack */
        if (best < 0 || best + fixed <= md->slo_ms)
            continue;
        char stack[192] = "";
        size_t sl = 0;
        if (md->stack_ms > 0)
            sl += (size_t)snprintf(stack + sl, sizeof stack - sl, " + %.2f ms serving stack",
                                   md->stack_ms);
        if (host_ms > 0 && sl < sizeof stack)
            sl += (size_t)snprintf(stack + sl, sizeof stack - sl, " + %.2f ms host "
                                   "(cluster.host_us_per_batch)", host_ms);
        if (ctrl_ms > 0 && sl < sizeof stack)
            snprintf(stack + sl, sizeof stack - sl, " + %.2f ms controller (controller."
                     "us_per_request + us_per_batch)", ctrl_ms);
        if (bad++ < 4 && len < sizeof msg)
            len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s: the smallest batch needs "
                                    "%.2f ms + %.2f ms network%s = %.2f ms > SLO %g ms",
                                    bad > 1 ? "; " : "", md->name, best, net_ms, stack,
                                    best + fixed, md->slo_ms);
    }
    if (!bad)
        return 0;
    return sim_err_set(SIM_EINFEASIBLE, "no load meets every SLO: %s%s", msg,
                       bad > 4 ? " (and more models)" : "");
}

int sim_goodput_search(const struct sim_config *cfg, bool progress, struct sim_goodput *g)
{
    memset(g, 0, sizeof *g);
    g->rule = cfg->search_rule;
    /* a model no batch can serve fails every probe under the worst-model rule; under the
     * aggregate rule its requests are only part of the bad fraction */
    int frc = cfg->search_rule == SIM_RULE_WORST ? sim_config_feasible(cfg) : 0;
    if (frc)
        return frc;
    struct sim_result *r = NULL;
    double s = cfg->search_start_scale, lo = -1, hi = -1;
    int rc, maxp = cfg->search_max_probes;

    if ((rc = probe(cfg, g, s, progress, &r)))
        goto out;
    if (g->probes[g->nprobes - 1].pass) {
        lo = s;
        keep(g, r, true);
    } else {
        hi = s;
        keep(g, r, true);            /* the lowest probe's result stands in until one passes */
    }
    while (g->nprobes < maxp && (lo < 0 || hi < 0)) {
        s = (lo < 0) ? s / 2 : s * 2;
        if (s < 1e-6)
            break;
        if ((rc = probe(cfg, g, s, progress, &r)))
            goto out;
        bool none = r->offered == 0;
        if (g->probes[g->nprobes - 1].pass) {
            lo = s;
            keep(g, r, true);
        } else {
            hi = s;
            keep(g, r, lo < 0);
        }
        if (none && lo < 0)
            break;                      /* lower loads offer nothing either */
    }
    while (lo > 0 && hi > 0 && g->nprobes < maxp && (hi - lo) / lo > cfg->search_tol) {
        s = (lo + hi) / 2;
        if ((rc = probe(cfg, g, s, progress, &r)))
            goto out;
        if (g->probes[g->nprobes - 1].pass) {
            lo = s;
            keep(g, r, true);
        } else {
            hi = s;
            keep(g, r, false);
        }
    }
    g->found = lo > 0;
    g->lo_scale = lo;
    g->hi_scale = hi;
    g->max_probes = maxp;
    g->tol = cfg->search_tol;
    g->status = !g->found ? SIM_SEARCH_NO_PASS : hi < 0 ? SIM_SEARCH_NO_FAIL
                : (hi - lo) / lo > cfg->search_tol ? SIM_SEARCH_WIDE : SIM_SEARCH_CONVERGED;
    if (g->status == SIM_SEARCH_CONVERGED) {
        g->goodput_scale = lo;
        g->goodput_rps = g->best->offered_rps;
    }
    g->monotone = true;
    for (int i = 0; i < g->nprobes; i++)
        for (int j = 0; j < g->nprobes; j++)
            if (g->probes[i].pass && !g->probes[j].pass && g->probes[i].scale > g->probes[j].scale)
                g->monotone = false;
out:
    if (progress && isatty(STDERR_FILENO))
        fputc('\n', stderr);
    return rc;
}

void sim_goodput_free(struct sim_goodput *g)
{
    sim_result_destroy(g->best);
    g->best = NULL;
}
