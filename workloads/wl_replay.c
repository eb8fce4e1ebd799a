/* wl_replay — trace records to arrivals: intervals, window, gaps, scaling, arrival process,
 * models (see wl_replay.h for the pipeline). Everything streams: the state is a few
 * intervals' worth of per-stream counts, whatever the trace's length. */
#include "wl_replay.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rstat.h>

#include "sim_err.h"
#include "sim_rng.h"
#include "wl_arrival.h"

struct iv {                      /* an interval (dt > 0) or a request (dt == 0), trace time */
    double t, dt, tot, cv, size;
    int32_t prompt, output;      /* a request's tokens (0: none; intervals have none) */
    const struct sim_prefix *prefix;   /* its prompt's block ids (Mooncake), or NULL */
    double *c;                   /* [nstreams] */
};

struct wl_replay {
    const struct wl_trace_cfg *tc;
    struct trace_reader *rd;
    int ns, nm;
    int *stream_model;
    bool single;
    double scale;                /* rate_scale x load scale */
    /* layer A: raw intervals */
    struct trace_rec peek;
    bool have_peek, eof;
    double data_lo, data_hi;     /* the trace's own extent read so far (trace seconds) */
    bool have_data;
    gsl_rstat_workspace *rstat;
    /* layer B: window and gaps */
    double lo, hi;               /* window, trace seconds */
    double prev_end, prev_t, prev_dt;
    bool have_prev, seen, hole_open, hole_missing;
    double hole_lo;
    double *prev_rate, *next_rate;   /* [ns] per trace second */
    struct iv held;
    bool have_held;
    int fill_n, fill_i;
    double fill_t0, fill_dt, fill_end;
    double *fill_a;              /* [ns] rates before the gap (next_rate: after) */
    double win_next;             /* cv windows: end of the last one emitted */
    bool done;
    double offset;               /* trace seconds skipped */
    int ngaps;
    double gap_s, end_t;
    char first_gap[160];
    /* layer C: counts and arrivals */
    struct iv cur, ahead;
    bool have_ahead;
    double *cum, *mcount;        /* [ns] cumulative counts; [nm] remaining per model */
    double rem, total_c, pos, k, phase, t0_ns, len_ns, idx;
    double req_t, req_step, req_size;
    int req_copies;
    struct sim_tokens req_tok, last_tok;   /* the request's, the last arrival's */
    gsl_rng *rng;
    gsl_ran_discrete_t *pop;
    struct wl_sizer *sizers;     /* [nm]: workload.sizes for a trace without sizes, or NULL */
};

/* ---------------------------------------------------------------- config */

void wl_trace_cfg_free(struct wl_trace_cfg *tc)
{
    if (!tc)
        return;
    for (int i = 0; i < tc->spec.nfiles; i++)
        free(tc->files[i]);
    for (int i = 0; i < tc->spec.nhashes; i++)
        free(tc->hashes[i]);
    for (int i = 0; i < tc->nexplicit; i++)
        free(tc->ex_hash[i]);
    free(tc->files);
    free(tc->hashes);
    free(tc->ex_hash);
    free(tc->ex_model);
    free(tc);
}

/* ---------------------------------------------------------------- layer A: raw intervals */

/* The next record of the trace, its extent noted (data_lo, data_hi). */
static int read_rec(struct wl_replay *rp, struct trace_rec *r)
{
    int rc = trace_next(rp->rd, r);
    if (rc == 1) {
        if (!rp->have_data || r->t < rp->data_lo)
            rp->data_lo = r->t;
        if (!rp->have_data || r->t + r->dt > rp->data_hi)
            rp->data_hi = r->t + r->dt;
        rp->have_data = true;
    }
    return rc;
}

static int raw_next(struct wl_replay *rp, struct iv *iv)
{
    const struct wl_trace_cfg *tc = rp->tc;
    struct trace_rec r;
    int rc;
    if (rp->have_peek) {
        r = rp->peek;
        rp->have_peek = false;
    } else {
        if (rp->eof)
            return 0;
        if ((rc = read_rec(rp, &r)) <= 0) {
            rp->eof = true;
            return rc;
        }
    }
    memset(iv->c, 0, (size_t)rp->ns * sizeof *iv->c);
    iv->cv = 0;
    iv->size = r.size;
    iv->prompt = r.prompt;
    iv->output = r.output;
    iv->prefix = r.prefix;
    if (tc->timestamps && tc->cv_scale == 0) {
        iv->t = r.t;
        iv->dt = 0;
        iv->c[0] = iv->tot = 1;
        return 1;
    }
    if (tc->timestamps) {                 /* a window of requests with its fitted CV */
        double W = tc->cv_window_s;
        double w = floor(r.t / W), last = r.t;
        if (w * W > rp->win_next + 1e-9) {    /* empty windows before it: zero counts */
            rp->peek = r;
            rp->have_peek = true;
            iv->t = rp->win_next;
            iv->dt = w * W - rp->win_next;
            iv->tot = 0;
            rp->win_next = w * W;
            return 1;
        }
        rp->win_next = (w + 1) * W;
        gsl_rstat_reset(rp->rstat);
        iv->t = w * W;
        iv->dt = W;
        iv->tot = 1;
        iv->size = 0;
        iv->prompt = iv->output = 0;
        iv->prefix = NULL;
        while ((rc = read_rec(rp, &r)) == 1) {
            if (floor(r.t / W) != w) {
                rp->peek = r;
                rp->have_peek = true;
                break;
            }
            gsl_rstat_add(r.t - last, rp->rstat);
            last = r.t;
            iv->tot++;
        }
        if (rc < 0)
            return rc;
        if (rc == 0)
            rp->eof = true;
        double mean = gsl_rstat_mean(rp->rstat);
        if (gsl_rstat_n(rp->rstat) >= 2 && mean > 0)
            iv->cv = gsl_rstat_sd(rp->rstat) / mean * tc->cv_scale;
        iv->c[0] = iv->tot;
        return 1;
    }
    iv->t = r.t;
    iv->dt = r.dt;
    iv->c[r.stream] = r.count;
    iv->tot = r.count;
    while ((rc = read_rec(rp, &r)) == 1) {
        if (r.t != iv->t) {
            rp->peek = r;
            rp->have_peek = true;
            break;
        }
        iv->c[r.stream] += r.count;
        iv->tot += r.count;
    }
    if (rc < 0)
        return rc;
    if (rc == 0)
        rp->eof = true;
    return 1;
}

/* ---------------------------------------------------------------- layer B: window, gaps */

static void copy_iv(const struct wl_replay *rp, struct iv *dst, const struct iv *src)
{
    double *c = dst->c;
    *dst = *src;
    dst->c = c;
    memcpy(c, src->c, (size_t)rp->ns * sizeof *c);
}

static void set_rates(const struct wl_replay *rp, double *rate, const struct iv *iv)
{
    for (int i = 0; i < rp->ns; i++)
        rate[i] = iv->dt > 0 ? iv->c[i] / iv->dt : 0;
}

/* A hole [lo, hi): missing data, or zero counts. Whether it is a gap, and what it becomes. */
static int resolve_hole(struct wl_replay *rp, double lo, double hi, bool missing, bool at_end)
{
    const struct wl_trace_cfg *tc = rp->tc;
    double len = hi - lo;
    if (len <= 0)
        return 0;
    bool gap = missing || (tc->zero_run_s > 0 && len >= tc->zero_run_s);
    if (!gap)
        return 0;                             /* real idle time: nothing arrives */
    if (rp->ngaps++ == 0)
        snprintf(rp->first_gap, sizeof rp->first_gap, "%.0f s of %s from t=%.0f s", len,
                 missing ? "missing data" : "zero counts", lo);
    rp->gap_s += len;
    switch (tc->gaps) {
    case WL_GAP_ERROR:
        return sim_err_set(SIM_EINVAL, "%s: the trace has a gap (%s); choose how to treat "
                           "gaps with workload.trace.gaps: zero (no traffic), skip (cut the "
                           "time out), hold (previous rate) or interpolate",
                           tc->spec.files[0], rp->first_gap);
    case WL_GAP_ZERO:
        return 0;
    case WL_GAP_SKIP:
        rp->offset += len;
        return 0;
    case WL_GAP_HOLD:
    case WL_GAP_INTERPOLATE:
        if (!rp->have_prev)
            return 0;                         /* nothing before it to hold */
        memcpy(rp->fill_a, rp->prev_rate, (size_t)rp->ns * sizeof *rp->fill_a);
        if (at_end || tc->gaps == WL_GAP_HOLD)
            memcpy(rp->next_rate, rp->prev_rate, (size_t)rp->ns * sizeof *rp->next_rate);
        rp->fill_dt = tc->gaps == WL_GAP_HOLD || rp->prev_dt <= 0 ? len : rp->prev_dt;
        rp->fill_n = (int)ceil(len / rp->fill_dt - 1e-9);
        rp->fill_i = 0;
        rp->fill_t0 = lo;
        rp->fill_end = hi;
        return 0;
    }
    return 0;
}

/* The next interval, windowed, with gaps resolved; t is shifted by the skipped time and the
 * window start. */
/* The next piece of a filler (hold, interpolate): rates from fill_a to next_rate. */
static void fill_piece(struct wl_replay *rp, struct iv *out)
{
    int i = rp->fill_i++;
    double t = rp->fill_t0 + i * rp->fill_dt;
    double dt = fmin(rp->fill_dt, rp->fill_end - t);
    double f = (i + 0.5) / rp->fill_n;
    out->t = t - rp->offset - rp->lo;
    out->dt = dt;
    out->tot = 0;
    out->cv = 0;
    out->size = 0;
    out->prompt = out->output = 0;
    for (int s = 0; s < rp->ns; s++) {
        double r = rp->fill_a[s] + (rp->next_rate[s] - rp->fill_a[s]) * f;
        out->c[s] = r * dt;
        out->tot += out->c[s];
    }
}

/* The end of the trace (raw 0) or of the window: a silence or a hole open up to it is
 * resolved as workload.trace.gaps says. */
static int window_end(struct wl_replay *rp, int raw, double tol)
{
    const struct wl_trace_cfg *tc = rp->tc;
    double stop = raw == 0 ? fmin(rp->hi, rp->prev_end) : rp->hi;
    int rc;
    rp->done = true;
    rp->end_t = stop;
    if (tc->timestamps && tc->cv_scale == 0) {
        if (rp->have_prev && tc->zero_run_s > 0 && stop - rp->prev_t >= tc->zero_run_s &&
            (rc = resolve_hole(rp, rp->prev_t, stop, false, true)))
            return rc;
        return 0;
    }
    bool miss = raw != 0 && rp->have_prev && rp->prev_end + tol < stop;
    double from = rp->hole_open ? rp->hole_lo : rp->prev_end;
    if ((rp->hole_open || miss) &&
        (rc = resolve_hole(rp, from, stop, rp->hole_missing || miss, true)))
        return rc;
    rp->hole_open = false;
    return 0;
}

/* An interval clipped to the window, its counts prorated. */
static void clip(const struct wl_replay *rp, struct iv *r)
{
    if (r->dt <= 0)
        return;
    double a = fmax(r->t, rp->lo), b = fmin(r->t + r->dt, rp->hi);
    double f = (b - a) / r->dt;
    if (f < 1) {
        for (int s = 0; s < rp->ns; s++)
            r->c[s] *= f;
        r->tot *= f;
        r->t = a;
        r->dt = b - a;
    }
}

static int clean_next(struct wl_replay *rp, struct iv *out)
{
    const struct wl_trace_cfg *tc = rp->tc;
    int rc;
    for (;;) {
        if (rp->fill_i < rp->fill_n) {        /* a filler piece (hold, interpolate) */
            fill_piece(rp, out);
            return 1;
        }
        if (rp->have_held) {
            rp->have_held = false;
            copy_iv(rp, out, &rp->held);
            return 1;
        }
        if (rp->done)
            return 0;
        struct iv *r = &rp->held;             /* read into held's storage */
        rc = raw_next(rp, r);
        if (rc < 0)
            return rc;
        double end = rc == 0 ? rp->prev_end : r->t + r->dt;
        if (rc == 1 && end <= rp->lo && !(r->dt == 0 && r->t >= rp->lo)) {
            rp->prev_end = end;               /* before the window */
            rp->prev_t = r->t;
            continue;
        }
        bool past = rc == 0 || r->t >= rp->hi;
        double tol = 1e-6 * (r->dt > 1 ? r->dt : 1);
        bool missing = !past && rp->have_prev && r->dt > 0 && r->t > rp->prev_end + tol;
        if (past) {                           /* end of the trace or of the window */
            if ((rc = window_end(rp, rc, tol)))
                return rc;
            continue;
        }
        clip(rp, r);
        if (!rp->seen && r->t > rp->lo + tol && r->dt > 0) {
            missing = true;                   /* the window starts before the data */
            rp->prev_end = rp->lo;
        }
        rp->seen = true;
        if (r->dt == 0) {                     /* a request: a long silence is a hole */
            double from = rp->have_prev ? rp->prev_t : rp->lo;
            if (tc->zero_run_s > 0 && r->t - from >= tc->zero_run_s &&
                (rc = resolve_hole(rp, from, r->t, false, false)))
                return rc;
            rp->have_prev = true;
            rp->prev_t = rp->prev_end = r->t;
            copy_iv(rp, out, r);
            out->t = r->t - rp->offset - rp->lo;
            return 1;
        }
        if (missing && !rp->hole_open) {
            rp->hole_open = true;
            rp->hole_lo = rp->prev_end;
            rp->hole_missing = true;
        } else if (missing) {
            rp->hole_missing = true;
        }
        if (r->tot <= 0) {                    /* zero counts: the hole goes on */
            if (!rp->hole_open) {
                rp->hole_open = true;
                rp->hole_lo = r->t;
                rp->hole_missing = false;
            }
            rp->prev_end = r->t + r->dt;
            continue;
        }
        if (rp->hole_open) {
            rp->hole_open = false;
            set_rates(rp, rp->next_rate, r);
            if ((rc = resolve_hole(rp, rp->hole_lo, r->t, rp->hole_missing, false)))
                return rc;
        }
        r->t -= rp->offset + rp->lo;
        set_rates(rp, rp->prev_rate, r);
        rp->prev_dt = r->dt;
        rp->have_prev = true;
        rp->prev_end = r->t + rp->offset + rp->lo + r->dt;
        rp->prev_t = rp->prev_end - r->dt;
        rp->have_held = true;                 /* emit after any filler */
    }
}

/* ---------------------------------------------------------------- open / close */

static int stream_models(struct wl_replay *rp)
{
    const struct wl_trace_cfg *tc = rp->tc;
    rp->stream_model = calloc((size_t)rp->ns, sizeof *rp->stream_model);
    if (!rp->stream_model)
        return SIM_ENOMEM;
    if (rp->single)
        return 0;
    for (int i = 0; i < rp->ns; i++) {
        switch (tc->map) {
        case WL_MAP_ROUND_ROBIN:
            rp->stream_model[i] = trace_stream_file_order(rp->rd, i) % rp->nm;
            break;
        case WL_MAP_VOLUME:
            rp->stream_model[i] = trace_stream_volume_rank(rp->rd, i) % rp->nm;
            break;
        default: {
            const char *h = trace_stream_name(rp->rd, i);
            int k = 0;
            while (k < tc->nexplicit && strcmp(tc->ex_hash[k], h) != 0)
                k++;
            if (k == tc->nexplicit)
                return sim_err_set(SIM_EINVAL, "workload.trace.map.explicit: the selected "
                                   "function %s has no model (select it away with "
                                   "workload.trace.select.hashes, or map it)", h);
            rp->stream_model[i] = tc->ex_model[k];
        }
        }
    }
    return 0;
}

int wl_replay_open(const struct wl_workload *w, const struct sim_world *world, double load_scale,
                   struct wl_replay **out)
{
    struct wl_replay *rp = calloc(1, sizeof *rp);
    int rc = SIM_ENOMEM;
    *out = NULL;
    if (!rp)
        return SIM_ENOMEM;
    const struct wl_trace_cfg *tc = w->trace;
    rp->tc = tc;
    rp->nm = world->nmodels;
    rp->scale = tc->rate_scale * load_scale;
    rp->lo = tc->start_s;
    rp->hi = tc->window_s > 0 ? tc->start_s + tc->window_s : INFINITY;
    if ((rc = trace_open(&tc->spec, &rp->rd)))
        goto fail;
    rc = SIM_ENOMEM;
    rp->ns = trace_stream_count(rp->rd);
    rp->single = tc->spec.format != TRACE_AZURE_FUNCTIONS;
    size_t ns = (size_t)rp->ns;
    rp->prev_rate = calloc(ns, sizeof(double));
    rp->next_rate = calloc(ns, sizeof(double));
    rp->fill_a = calloc(ns, sizeof(double));
    rp->held.c = calloc(ns, sizeof(double));
    rp->cur.c = calloc(ns, sizeof(double));
    rp->ahead.c = calloc(ns, sizeof(double));
    rp->cum = calloc(ns, sizeof(double));
    rp->mcount = calloc((size_t)rp->nm, sizeof(double));
    rp->rstat = gsl_rstat_alloc();
    rp->rng = sim_rng_stream(world->seed, "trace.arrivals");
    if (w->sizes) {                     /* counts without sizes: drawn as for synthetic arrivals */
        if (!(rp->sizers = calloc((size_t)rp->nm, sizeof *rp->sizers)))
            goto fail;
        for (int m = 0; m < rp->nm; m++)
            if (wl_sizer_init(&rp->sizers[m], w, world->seed, m, world->models[m].name))
                goto fail;
    }
    double *shares = calloc((size_t)rp->nm, sizeof *shares);
    if (!rp->prev_rate || !rp->next_rate || !rp->fill_a || !rp->held.c || !rp->cur.c || !rp->ahead.c ||
        !rp->cum || !rp->mcount || !rp->rstat || !rp->rng || !shares) {
        free(shares);
        goto fail;
    }
    wl_popularity_shares(w, world, shares);
    rp->pop = gsl_ran_discrete_preproc((size_t)rp->nm, shares);
    free(shares);
    if (!rp->pop || (rc = stream_models(rp)))
        goto fail;
    *out = rp;
    return 0;
fail:
    wl_replay_close(rp);
    return rc ? rc : SIM_ENOMEM;
}

void wl_replay_close(struct wl_replay *rp)
{
    if (!rp)
        return;
    trace_close(rp->rd);
    free(rp->stream_model);
    free(rp->prev_rate);
    free(rp->next_rate);
    free(rp->fill_a);
    free(rp->held.c);
    free(rp->cur.c);
    free(rp->ahead.c);
    free(rp->cum);
    free(rp->mcount);
    if (rp->rstat)
        gsl_rstat_free(rp->rstat);
    gsl_rng_free(rp->rng);
    if (rp->pop)
        gsl_ran_discrete_free(rp->pop);
    for (int m = 0; rp->sizers && m < rp->nm; m++)
        wl_sizer_free(&rp->sizers[m]);
    free(rp->sizers);
    free(rp);
}

int wl_replay_gaps(const struct wl_replay *rp, double *gap_s)
{
    *gap_s = rp->gap_s;
    return rp->ngaps;
}

/* ---------------------------------------------------------------- layer C: arrivals */

static int next_clean(struct wl_replay *rp, struct iv *iv)
{
    if (rp->have_ahead) {
        rp->have_ahead = false;
        copy_iv(rp, iv, &rp->ahead);
        return 1;
    }
    return clean_next(rp, iv);
}

/* Scaled counts of iv: per model into mcount (multi-stream), the total returned. */
static double scaled_counts(struct wl_replay *rp, const struct iv *iv)
{
    double total = 0;
    if (!rp->single)
        memset(rp->mcount, 0, (size_t)rp->nm * sizeof *rp->mcount);
    for (int s = 0; s < rp->ns; s++) {
        if (iv->c[s] == 0)
            continue;
        double before = floor(rp->cum[s] * rp->scale + 1e-9);
        rp->cum[s] += iv->c[s];
        double n = floor(rp->cum[s] * rp->scale + 1e-9) - before;
        total += n;
        if (!rp->single)
            rp->mcount[rp->stream_model[s]] += n;
    }
    return total;
}

/* Sets up the next interval (or request) with arrivals; 1, 0 at the end, < 0 error. */
static int load_next(struct wl_replay *rp)
{
    const struct wl_trace_cfg *tc = rp->tc;
    int rc;
    for (;;) {
        if ((rc = next_clean(rp, &rp->cur)) <= 0)
            return rc;
        struct iv *c = &rp->cur;
        double n = scaled_counts(rp, c);
        if (n <= 0)
            continue;
        double ts = tc->time_scale;
        if (c->dt == 0) {                      /* a request, n copies up to the next one */
            rp->req_t = c->t / ts * 1e9;
            rp->req_copies = (int)n;
            rp->req_size = c->size;
            rp->req_tok = (struct sim_tokens){c->prompt, c->output, c->prefix};
            rp->req_step = 0;
            if (n > 1) {
                rc = clean_next(rp, &rp->ahead);
                if (rc < 0)
                    return rc;
                rp->have_ahead = rc == 1;
                double span = rc == 1 ? (rp->ahead.t - c->t) / ts * 1e9 : 0;
                rp->req_step = span / n;
            }
            rp->rem = n;
            return 1;
        }
        rp->rem = rp->total_c = n;
        rp->pos = 0;
        rp->idx = 0;
        rp->t0_ns = c->t / ts * 1e9;
        rp->len_ns = c->dt / ts * 1e9;
        double cv = c->cv > 0 ? c->cv : tc->process == WL_PROC_GAMMA ? tc->cv : 1;
        rp->k = tc->process == WL_PROC_UNIFORM && c->cv == 0 ? 0 : 1 / (cv * cv);
        rp->phase = gsl_rng_uniform(rp->rng);
        return 1;
    }
}

static int pick_model(struct wl_replay *rp)
{
    if (rp->single)
        return (int)gsl_ran_discrete(rp->rng, rp->pop);
    double u = gsl_rng_uniform(rp->rng) * rp->rem;   /* rem counts this arrival */
    int m = 0;
    for (; m < rp->nm - 1; m++) {
        if (u < rp->mcount[m])
            break;
        u -= rp->mcount[m];
    }
    while (rp->mcount[m] <= 0 && m > 0)
        m--;
    rp->mcount[m] -= 1;
    return m;
}

int wl_replay_next(struct wl_replay *rp, int64_t *t_ns, int *model, double *size)
{
    int rc;
    if (rp->rem <= 0 && (rc = load_next(rp)) <= 0)
        return rc;
    const struct iv *c = &rp->cur;
    double t;
    if (c->dt == 0) {
        int j = rp->req_copies - (int)rp->rem;
        t = rp->req_t + j * rp->req_step;
        *size = rp->req_size;
        rp->last_tok = rp->req_tok;
    } else {
        rp->last_tok = (struct sim_tokens){0, 0, NULL};
        double left = 1 - rp->pos;
        if (rp->k == 0)                        /* uniform: evenly spaced, random phase */
            rp->pos = (rp->idx + rp->phase) / rp->total_c;
        else if (rp->k == 1)                   /* Poisson: the next of n sorted uniforms */
            rp->pos += left * (1 - pow(gsl_rng_uniform_pos(rp->rng), 1 / rp->rem));
        else                                   /* Dirichlet(k) gaps, stick-breaking */
            rp->pos += left * gsl_ran_beta(rp->rng, rp->k, rp->k * rp->rem);
        rp->idx++;
        t = rp->t0_ns + floor(rp->pos * rp->len_ns);
        double last = rp->t0_ns + ceil(rp->len_ns) - 1;
        if (t > last)
            t = last;
        *size = 0;
    }
    *model = pick_model(rp);
    if (rp->sizers && *model >= 0)
        *size = wl_sizer_draw(&rp->sizers[*model]);
    rp->rem -= 1;
    *t_ns = (int64_t)t;
    return 1;
}

void wl_replay_tokens(const struct wl_replay *rp, struct sim_tokens *out)
{
    *out = rp->last_tok;
}

/* ---------------------------------------------------------------- scan */

void wl_trace_info_free(struct wl_trace_info *info)
{
    free(info->model_total);
    info->model_total = NULL;
}

int wl_trace_scan(const struct wl_workload *w, const struct sim_world *world,
                  struct wl_trace_info *info)
{
    struct wl_replay *rp;
    memset(info, 0, sizeof *info);
    int rc = wl_replay_open(w, world, 1.0, &rp);
    if (rc)
        return rc;
    info->model_total = calloc((size_t)world->nmodels, sizeof *info->model_total);
    double *shares = calloc((size_t)world->nmodels, sizeof *shares);
    if (!info->model_total || !shares) {
        free(shares);
        wl_replay_close(rp);
        return SIM_ENOMEM;
    }
    wl_popularity_shares(w, world, shares);
    double ts = w->trace->time_scale, bin = -1, bin_n = 0, last_end = 0;
    while ((rc = next_clean(rp, &rp->cur)) == 1) {
        const struct iv *c = &rp->cur;
        double n = scaled_counts(rp, c);
        info->total += n;
        for (int m = 0; m < world->nmodels; m++)
            info->model_total[m] += rp->single ? n * shares[m] : rp->mcount[m];
        double sim_t = c->t / ts, sim_dt = c->dt / ts;
        if (c->dt > 0) {
            if (sim_dt > 0 && n / sim_dt > info->peak_rps)
                info->peak_rps = n / sim_dt;
        } else {
            double b = floor(sim_t);
            if (b != bin) {
                bin = b;
                bin_n = 0;
            }
            bin_n += n;
            if (bin_n > info->peak_rps)
                info->peak_rps = bin_n;
        }
        if (sim_t + sim_dt > last_end)
            last_end = sim_t + sim_dt;
    }
    free(shares);
    if (rc == 0) {
        /* the span: to the window's end (or the trace's), less what was skipped */
        double end = (rp->end_t - rp->lo - rp->offset) / ts;
        info->span_s = end > last_end ? end : last_end;
        if (rp->tc->timestamps && rp->tc->cv_scale == 0)
            info->span_s = last_end + 1e-9;   /* past the last request */
        info->mean_rps = info->span_s > 0 ? info->total / info->span_s : 0;
        info->ngaps = rp->ngaps;
        info->gap_s = rp->gap_s;
        snprintf(info->first_gap, sizeof info->first_gap, "%s", rp->first_gap);
        info->nstreams = rp->ns;
        /* how much of the window the trace's rows do not reach (read to the end only where
         * the window runs past the last row: else a row at or past its end was seen) */
        info->data_lo = rp->data_lo;
        info->data_hi = rp->data_hi;
        info->have_data = rp->have_data;
        info->window_lo = rp->lo;
        info->window_hi = rp->hi;
        if (rp->have_data) {
            double before = fmax(0, fmin(rp->data_lo, rp->hi) - rp->lo);
            double after = rp->eof && isfinite(rp->hi) ? fmax(0, rp->hi - fmax(rp->data_hi, rp->lo))
                                                       : 0;
            info->uncovered_s = before + after;
        } else {
            info->uncovered_s = isfinite(rp->hi) ? rp->hi - rp->lo : INFINITY;
        }
    }
    wl_replay_close(rp);
    if (rc)
        wl_trace_info_free(info);
    return rc;
}
