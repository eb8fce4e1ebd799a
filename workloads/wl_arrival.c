/* wl_arrival — unit-rate gap draws mapped through the inverse cumulative rate. */
#include "wl_arrival.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>

#include "sim_err.h"
#include "sim_rng.h"

int wl_stream_init(struct wl_stream *st, const struct wl_workload *w, uint64_t seed,
                   const char *name, double rate_rps)
{
    st->rng = sim_rng_stream(seed, name);
    if (!st->rng)
        return SIM_ENOMEM;
    st->kind = w->arrival;
    st->shape = w->gamma_shape;
    st->rate_per_ns = rate_rps / 1e9;
    st->u = 0;
    st->seg = w->segments;
    st->nseg = w->nsegments;
    st->cur = 0;
    st->seg_t0 = st->seg_m0 = 0;
    st->started = false;
    st->model = -1;
    return 0;
}

void wl_stream_free(struct wl_stream *st)
{
    gsl_rng_free(st->rng);
    st->rng = NULL;
}

static double gap(struct wl_stream *st)
{
    switch (st->kind) {
    case WL_ARR_POISSON:
        return gsl_ran_exponential(st->rng, 1.0);
    case WL_ARR_GAMMA:
        return gsl_ran_gamma(st->rng, st->shape, 1.0 / st->shape);
    case WL_ARR_UNIFORM:
        if (!st->started)
            return gsl_rng_uniform(st->rng);   /* random phase */
        return 1.0;
    }
    return 1.0;
}

/* ns as int64: times past the representable range (a rate so small that the next arrival
 * lies beyond any run) mean never. */
static int64_t to_ns(double t)
{
    return t < 9.0e18 ? (int64_t)llround(t) : INT64_MAX;
}

int64_t wl_stream_next(struct wl_stream *st)
{
    if (st->rate_per_ns <= 0)
        return INT64_MAX;
    st->u += gap(st);
    st->started = true;
    double m_target = st->u / st->rate_per_ns;     /* M(t) we need, in ns */
    if (st->nseg == 0)
        return to_ns(m_target);
    for (;;) {
        const struct wl_segment *sg = &st->seg[st->cur];
        bool last = (st->cur == st->nseg - 1);
        double scale = sg->scale * (sg->model_scale && st->model >= 0 ? sg->model_scale[st->model] : 1);
        double m_end = st->seg_m0 + scale * sg->duration_s * 1e9;
        if (last || m_target < m_end) {
            if (scale <= 0)
                return INT64_MAX;                  /* zero rate from here on */
            return to_ns(st->seg_t0 + (m_target - st->seg_m0) / scale);
        }
        st->seg_t0 += sg->duration_s * 1e9;
        st->seg_m0 = m_end;
        st->cur++;
    }
}

/* The lognormal (ln X ~ N(mu, sigma^2)) of mean `mean` and coefficient of variation cv. */
static void lognormal_of(double mean, double cv, double *mu, double *sigma)
{
    *sigma = sqrt(log1p(cv * cv));
    *mu = log(mean) - *sigma * *sigma / 2;    /* E[X] = mean */
}

int wl_sizer_init(struct wl_sizer *z, const struct wl_workload *w, uint64_t seed, int model,
                  const char *model_name)
{
    memset(z, 0, sizeof *z);
    if (model < 0 || !w->sizes || !(w->sizes[model].mean > 0))
        return 0;
    const struct wl_size *ws = &w->sizes[model];
    char sname[SIM_NAME_MAX + 64];
    snprintf(sname, sizeof sname, "sizes.%s", model_name);
    z->mean = ws->mean;
    lognormal_of(ws->mean, ws->cv, &z->mu, &z->sigma);
    return (z->rng = sim_rng_stream(seed, sname)) ? 0 : SIM_ENOMEM;
}

double wl_sizer_draw(struct wl_sizer *z)
{
    return !z->rng ? 0 : z->sigma > 0 ? gsl_ran_lognormal(z->rng, z->mu, z->sigma) : z->mean;
}

void wl_sizer_free(struct wl_sizer *z)
{
    gsl_rng_free(z->rng);
    z->rng = NULL;
}

struct stream_src {
    struct wl_stream st;
    int model;                          /* -1: the application's requests */
    struct wl_sizer sizer;
    gsl_rng *trng;                      /* tokens.<model> (NULL: no token lengths) */
    struct tok_drawer { double mean, mu, sigma; int max; } prompt, output;
    const int32_t *emp;                 /* empirical pairs (wl_tokens.emp), or NULL */
    long nemp;
    gsl_rng *prng;                      /* prefix.<model> (NULL: no shared prefixes) */
    struct sim_prefix *px;              /* [groups]: group g's prefix, one id (g) */
    uint32_t *ids;
    int groups, prefix_tokens;
};

static struct tok_drawer tok_drawer_of(const struct wl_tok_len *d)
{
    struct tok_drawer t = {d->mean, 0, 0, d->max};
    if (d->cv > 0)
        lognormal_of(d->mean, d->cv, &t.mu, &t.sigma);
    return t;
}

/* A token length: lognormal of the given mean and cv (exactly the mean at cv 0), rounded,
 * within [1, max]. */
static int32_t tok_draw(gsl_rng *r, const struct tok_drawer *d)
{
    double v = d->sigma > 0 ? gsl_ran_lognormal(r, d->mu, d->sigma) : d->mean;
    v = floor(v + 0.5);
    return (int32_t)(v < 1 ? 1 : v > d->max ? d->max : v);
}

static void stream_src_tokens(void *ctx, struct sim_tokens *out)
{
    struct stream_src *q = ctx;
    if (q->emp) {
        long i = (long)gsl_rng_uniform_int(q->trng, (unsigned long)q->nemp);
        out->prompt = q->emp[2 * i];
        out->output = q->emp[2 * i + 1];
    } else {
        out->prompt = tok_draw(q->trng, &q->prompt);
        out->output = tok_draw(q->trng, &q->output);
    }
    out->prefix = NULL;
    if (q->prng) {
        out->prefix = &q->px[gsl_rng_uniform_int(q->prng, (unsigned long)q->groups)];
        out->prompt += q->prefix_tokens;
    }
}

static int stream_src_next(void *ctx, int64_t *t, int *model, double *size)
{
    struct stream_src *q = ctx;
    *t = wl_stream_next(&q->st);
    *model = q->model;
    *size = wl_sizer_draw(&q->sizer);
    return 1;
}

static void stream_src_close(void *ctx)
{
    struct stream_src *q = ctx;
    wl_stream_free(&q->st);
    wl_sizer_free(&q->sizer);
    gsl_rng_free(q->trng);
    gsl_rng_free(q->prng);
    free(q->px);
    free(q->ids);
    free(q);
}

int wl_stream_source(const struct wl_workload *w, uint64_t seed, const char *name,
                     double rate_rps, int model, struct sim_source *out)
{
    struct stream_src *q = calloc(1, sizeof *q);
    if (!q || wl_stream_init(&q->st, w, seed, name, rate_rps)) {
        free(q);
        return SIM_ENOMEM;
    }
    q->model = model;
    if (wl_sizer_init(&q->sizer, w, seed, model,
                      name + (strncmp(name, "arrivals.", 9) ? 0 : 9))) {
        wl_stream_free(&q->st);
        free(q);
        return SIM_ENOMEM;
    }
    q->st.model = model;
    if (model >= 0 && w->schedules && w->schedules[model].n > 0) {
        q->st.seg = w->schedules[model].seg;    /* its own steps instead of the workload's */
        q->st.nseg = w->schedules[model].n;
    }
    *out = (struct sim_source){stream_src_next, stream_src_close, q, -1, NULL, NULL, NULL};
    if (model >= 0 && w->tokens && (w->tokens[model].prompt.mean > 0 || w->tokens[model].emp)) {
        char tname[SIM_NAME_MAX + 64];
        snprintf(tname, sizeof tname, "tokens.%s", name + (strncmp(name, "arrivals.", 9) ? 0 : 9));
        q->prompt = tok_drawer_of(&w->tokens[model].prompt);
        q->output = tok_drawer_of(&w->tokens[model].output);
        q->emp = w->tokens[model].emp;
        q->nemp = w->tokens[model].nemp;
        if (!(q->trng = sim_rng_stream(seed, tname))) {
            stream_src_close(q);
            return SIM_ENOMEM;
        }
        out->tokens = stream_src_tokens;
        int g = w->tokens[model].prefix_groups;
        if (g > 0) {                    /* its own stream: the lengths stay those without */
            snprintf(tname, sizeof tname, "prefix.%s",
                     name + (strncmp(name, "arrivals.", 9) ? 0 : 9));
            q->groups = g;
            q->prefix_tokens = w->tokens[model].prefix_tokens;
            q->px = malloc((size_t)g * sizeof *q->px);
            q->ids = malloc((size_t)g * sizeof *q->ids);
            if (!q->px || !q->ids || !(q->prng = sim_rng_stream(seed, tname))) {
                stream_src_close(q);
                return SIM_ENOMEM;
            }
            for (int i = 0; i < g; i++) {
                q->ids[i] = (uint32_t)i;
                q->px[i] = (struct sim_prefix){(uint32_t)q->prefix_tokens, 1, &q->ids[i]};
            }
        }
    }
    return 0;
}

void wl_popularity_shares(const struct wl_workload *w, const struct sim_world *world,
                          double *shares)
{
    double sum = 0;
    for (int i = 0; i < world->nmodels; i++) {
        switch (w->popularity) {
        case WL_POP_UNIFORM:
            shares[i] = 1.0;
            break;
        case WL_POP_ZIPF:
            shares[i] = 1.0 / pow((double)(i + 1), w->zipf_s);
            break;
        case WL_POP_EXPLICIT:
            shares[i] = world->models[i].share;
            break;
        }
        sum += shares[i];
    }
    for (int i = 0; i < world->nmodels; i++)
        shares[i] = sum > 0 ? shares[i] / sum : 0;
}
