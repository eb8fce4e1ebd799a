/* sim_shares — notebooks on shares of a GPU and the token time-sharing of DynamoML's
 * fractional allocator (specs/dynamoml.md, operator 1): a notebook alternates idle periods and
 * bursts of GPU work; during a burst it progresses only while it holds its GPU's token, which
 * goes, for one quota, to a waiting notebook whose use u of the GPU over the last window W is
 * below limit x W: first those below request x W (largest (request W - u) / (request W)
 * first), then the least u (ties: the lower id); hand-over costs nothing. A notebook with a
 * limit of a whole GPU is never capped. When no waiting notebook may take the token, it is
 * offered again one quota later. Model: sim_world.h; API: sim.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "sim_err.h"
#include "sim_int.h"
#include "sim_rng.h"

/* Events: idx = notebook (or GPU for a retry), gen = serial << 2 | what. */
enum { NEV_BURST, NEV_QUOTA, NEV_RETRY };

int sim_shares_init(struct sim *s)
{
    const struct sim_world *w = s->cfg;
    s->nnb = w->nnotebooks;
    if (!s->nnb)
        return 0;
    s->nb = calloc((size_t)s->nnb, sizeof *s->nb);
    s->token = malloc((size_t)(s->ngpus > 0 ? s->ngpus : 1) * sizeof *s->token);
    s->token_serial = calloc((size_t)(s->ngpus > 0 ? s->ngpus : 1), sizeof *s->token_serial);
    if (!s->nb || !s->token || !s->token_serial || !(s->nb_rng = sim_rng_stream(w->seed, "notebooks")))
        return SIM_ENOMEM;
    for (int g = 0; g < s->ngpus; g++)
        s->token[g] = -1;
    for (int i = 0; i < s->nnb; i++) {
        s->nb[i].pub.id = i;
        s->nb[i].pub.gpu = -1;
    }
    return 0;
}

void sim_shares_free(struct sim *s)
{
    free(s->nb);
    free(s->token);
    free(s->token_serial);
    if (s->nb_rng)
        gsl_rng_free(s->nb_rng);
    s->nb = NULL;
    s->token = NULL;
    s->token_serial = NULL;
    s->nb_rng = NULL;
}

int sim_notebook_count(const struct sim *s)
{
    return s->nnb;
}

const struct sim_notebook *sim_notebook(const struct sim *s, int nb)
{
    if (nb < 0 || nb >= s->nnb)
        SIM_BUG("notebook %d out of range (%d)", nb, s->nnb);
    return &s->nb[nb].pub;
}

static int64_t draw_ns(struct sim *s, double mean_s)
{
    double d = s->cfg->nb_fixed ? mean_s : gsl_ran_exponential(s->nb_rng, mean_s);
    return sim_s_to_ns(d);
}

static void nb_push(struct sim *s, int64_t t, int idx, uint32_t serial, int what)
{
    sim_push_event(s, t, SIM_EV_NB, (uint32_t)idx, ((uint64_t)serial << 2) | (uint64_t)what);
}

/* Its token holdings within the last window, up to now (a holding in progress included). */
static int64_t used_ns(const struct sim *s, const struct sim_nb_int *n)
{
    int64_t from = s->now - sim_s_to_ns(s->cfg->nb_window_s), u = 0;
    for (int i = 0; i < n->nuse; i++) {
        int k = (n->huse - 1 - i + SIM_NB_USES) % SIM_NB_USES;
        if (n->use_t1[k] <= from)
            break;
        u += n->use_t1[k] - (n->use_t0[k] > from ? n->use_t0[k] : from);
    }
    if (n->pub.holding)
        u += s->now - (n->held_since > from ? n->held_since : from);
    return u;
}

/* Gives GPU g's free token to the waiting notebook the rule picks, or offers it again a quota
 * later when none may take it. */
static void grant(struct sim *s, int g)
{
    if (s->token[g] >= 0)
        return;
    const struct sim_world *w = s->cfg;
    double win = w->nb_window_s * 1e9;
    int best = -1;
    bool best_guaranteed = false;
    double best_key = 0;
    bool waiting = false;
    for (int i = 0; i < s->nnb; i++) {
        const struct sim_nb_int *n = &s->nb[i];
        if (n->pub.gpu != g || !n->pub.bursting || n->pub.holding)
            continue;
        waiting = true;
        double u = (double)used_ns(s, n), r = w->nb_request * win;
        if (w->nb_limit < 1 && u >= w->nb_limit * win)
            continue;                   /* at its limit */
        bool guaranteed = u < r;
        double key = guaranteed ? (r - u) / r : -u;     /* larger is better in both groups */
        if (best < 0 || (guaranteed && !best_guaranteed) ||
            (guaranteed == best_guaranteed && key > best_key)) {
            best = i;
            best_guaranteed = guaranteed;
            best_key = key;
        }
    }
    if (best < 0) {
        if (waiting)
            nb_push(s, s->now + sim_s_to_ns(w->nb_quota_s), g, ++s->token_serial[g],
                    NEV_RETRY);
        return;
    }
    struct sim_nb_int *n = &s->nb[best];
    s->token[g] = best;
    n->pub.holding = true;
    n->held_since = s->now;
    int64_t q = sim_s_to_ns(w->nb_quota_s);
    nb_push(s, s->now + (n->work_left < q ? n->work_left : q), best, ++n->serial, NEV_QUOTA);
}

int sim_notebook_place(struct sim *s, int nb, int g, int milli)
{
    if (nb < 0 || nb >= s->nnb || s->nb[nb].pub.gpu >= 0)
        return sim_err_set(SIM_EINVAL, "notebook %d: no such notebook, or placed already", nb), -1;
    if (sim_gpu_claim(s, g, SIM_HOLD_SHARE, nb, milli))
        return -1;
    struct sim_nb_int *n = &s->nb[nb];
    n->pub.gpu = g;
    n->pub.milli = milli;
    nb_push(s, s->now + draw_ns(s, s->cfg->nb_idle_s), nb, ++n->serial, NEV_BURST);
    return 0;
}

void sim_shares_event(struct sim *s, int idx, uint64_t gen)
{
    int what = (int)(gen & 3);
    uint32_t serial = (uint32_t)(gen >> 2);
    if (what == NEV_RETRY) {
        if (serial == s->token_serial[idx])
            grant(s, idx);
        return;
    }
    struct sim_nb_int *n = &s->nb[idx];
    if (serial != n->serial)
        return;
    int g = n->pub.gpu;
    if (what == NEV_BURST) {            /* idle over: a burst waits for the token */
        n->pub.bursting = true;
        n->burst_start = s->now;
        n->burst_work = n->work_left = draw_ns(s, s->cfg->nb_burst_s);
        if (n->work_left <= 0)
            n->work_left = n->burst_work = 1;
        grant(s, g);
        return;
    }
    /* the quota is over, or the burst done: the token goes back */
    n->work_left -= s->now - n->held_since;
    n->use_t0[n->huse] = n->held_since;
    n->use_t1[n->huse] = s->now;
    n->huse = (n->huse + 1) % SIM_NB_USES;
    n->nuse += n->nuse < SIM_NB_USES;
    n->pub.holding = false;
    s->token[g] = -1;
    if (n->work_left <= 0) {
        n->pub.bursting = false;
        n->pub.bursts++;
        n->pub.slowdown_sum += (double)(s->now - n->burst_start) / (double)n->burst_work;
        nb_push(s, s->now + draw_ns(s, s->cfg->nb_idle_s), idx, ++n->serial, NEV_BURST);
    }
    grant(s, g);
}
