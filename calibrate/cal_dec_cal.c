/* cal_dec_cal — operator tables of a decoder measured on the runtime, the iteration-time
 * profile built from them (servesim-llm-profile/1), and its check against whole iterations
 * (cal_dec_cal.h says what each table times and how). */
#include "cal_dec_cal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "sim_err.h"
#include "sim_llm_cost.h"
#include "sim_wall.h"
#include "wl_llm.h"

static int set_axis(int *a, int *n, const int *v, int k, int below)
{
    *n = 0;
    for (int i = 0; i < k && *n < CAL_DEC_MAX_AXIS; i++)
        if (v[i] <= below)
            a[(*n)++] = v[i];
    return *n;
}

void cal_dec_default_axes(struct cal_dec_cal_opts *o)
{
    int maxp = o->d->max_pos;
    static const int tok[] = {1, 2, 4, 8, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64, 65, 96,
                              127, 128, 129, 192, 255, 256, 257, 384, 512};
    static const int chunk[] = {2, 16, 64, 128, 256, 512};
    static const int ctx[] = {0, 256, 1024, 2048};
    static const int seq[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
    static const int kv[] = {64, 256, 1024, 2048, 4096, 8192, 16384, 32768};
    if (!o->ntokens)
        set_axis(o->tokens, &o->ntokens, tok, (int)(sizeof tok / sizeof *tok), maxp);
    if (!o->nchunks)
        set_axis(o->chunks, &o->nchunks, chunk, (int)(sizeof chunk / sizeof *chunk), maxp / 2);
    if (!o->ncontexts)
        set_axis(o->contexts, &o->ncontexts, ctx, (int)(sizeof ctx / sizeof *ctx), maxp / 2);
    if (!o->nseqs)
        set_axis(o->seqs, &o->nseqs, seq, (int)(sizeof seq / sizeof *seq), 256);
    if (!o->nkv)
        set_axis(o->kv, &o->nkv, kv, (int)(sizeof kv / sizeof *kv), 1 << 20);
}

double cal_dec_quantile(double *v, int n, double q)
{
    if (n < 1)
        return 0;
    gsl_sort(v, 1, (size_t)n);
    return gsl_stats_quantile_from_sorted_data(v, 1, (size_t)n, q);
}

/* y(x) piecewise linear through (xs, ys), extended along the end segments. */
static double interp(const int *xs, const double *ys, int n, double x)
{
    if (n == 1)
        return ys[0];
    int i = 0;
    while (i < n - 2 && x > xs[i + 1])
        i++;
    return ys[i] + (x - xs[i]) * (ys[i + 1] - ys[i]) / (xs[i + 1] - xs[i]);
}

/* One iteration shape the rounds time: a table point or a check row. */
enum pt_kind { PT_DENSE, PT_PRE, PT_DEC, PT_HEAD, PT_CHECK };
struct point {
    enum pt_kind kind;
    int i, j;                         /* its cell: the axes' indices (PT_CHECK: the row) */
    int n, at;                        /* sequences, the first in the flat q/c arrays */
};

/* What a measurement holds while it runs. */
struct bench {
    const struct cal_dec_cal_opts *o;
    struct cal_dec_rt *rt;
    int32_t *tok, *blk;               /* token ids; block ids 0..kv_blocks-1 */
    int32_t *next;                    /* the sampler's tokens (max_seqs): it runs, as served */
    long kv_blocks;
    int max_tokens, max_seqs, reps;
    struct point *pt;
    int npt, cappt;
    int *q, *c;                       /* the points' sequences, flat */
    int nseq, capseq;
    double *ns;                       /* [point][rep][op] */
    double *whole;                    /* [point][rep] */
    struct cal_dec_seq *s;            /* max_seqs */
};

static int add_point(struct bench *b, enum pt_kind k, int i, int j, const int *q, const int *c,
                     int n)
{
    if (b->npt == b->cappt) {
        int cap = b->cappt ? 2 * b->cappt : 128;
        struct point *p = realloc(b->pt, (size_t)cap * sizeof *p);
        if (!p)
            return SIM_ENOMEM;
        b->pt = p, b->cappt = cap;
    }
    if (b->nseq + n > b->capseq) {
        int cap = b->capseq ? 2 * b->capseq : 4096;
        while (cap < b->nseq + n)
            cap *= 2;
        int *nq = realloc(b->q, (size_t)cap * sizeof *nq);
        if (!nq)
            return SIM_ENOMEM;
        b->q = nq;
        int *nc = realloc(b->c, (size_t)cap * sizeof *nc);
        if (!nc)
            return SIM_ENOMEM;
        b->c = nc, b->capseq = cap;
    }
    memcpy(b->q + b->nseq, q, (size_t)n * sizeof *q);
    memcpy(b->c + b->nseq, c, (size_t)n * sizeof *c);
    b->pt[b->npt++] = (struct point){k, i, j, n, b->nseq};
    b->nseq += n;
    int T = 0;
    for (int k2 = 0; k2 < n; k2++)
        T += q[k2];
    b->max_tokens = T > b->max_tokens ? T : b->max_tokens;
    b->max_seqs = n > b->max_seqs ? n : b->max_seqs;
    return 0;
}

/* Point p's sequences, their blocks laid one after another through the pool. */
static int shape(struct bench *b, const struct point *p)
{
    long at = 0;
    for (int i = 0; i < p->n; i++) {
        int q = b->q[p->at + i], c = b->c[p->at + i];
        long need = (c + q + 15) / 16;
        if (at + need > b->kv_blocks)
            return sim_err_set(SIM_EINTERNAL, "decoder measure: %ld blocks are not enough",
                               b->kv_blocks);
        b->s[i] = (struct cal_dec_seq){q, c, b->tok, b->blk + at};
        at += need;
    }
    return 0;
}

static long blocks_of(const struct bench *b, const struct point *p)
{
    long need = 0;
    for (int i = 0; i < p->n; i++)
        need += (b->c[p->at + i] + b->q[p->at + i] + 15) / 16;
    return need;
}

/* The sum over operators in mask of point p's rep r. */
static double opsum(const struct bench *b, int p, int r, unsigned mask)
{
    const double *ns = b->ns + ((size_t)p * (size_t)b->reps + (size_t)r) * CAL_DEC_NOPS;
    double a = 0;
    for (int k = 0; k < CAL_DEC_NOPS; k++)
        if (mask & (1u << k))
            a += ns[k];
    return a;
}

/* The median over reps (and p10, p90) of point p's operators in mask, scaled. */
static double ops_median(const struct bench *b, int p, unsigned mask, double scale, double *p10,
                         double *p90)
{
    double *x = malloc((size_t)b->reps * sizeof *x);
    if (!x)
        return NAN;
    for (int r = 0; r < b->reps; r++)
        x[r] = mask ? opsum(b, p, r, mask) * scale : b->whole[(size_t)p * (size_t)b->reps + (size_t)r] * scale;
    double m = cal_dec_quantile(x, b->reps, 0.5);
    if (p10)
        *p10 = cal_dec_quantile(x, b->reps, 0.1);
    if (p90)
        *p90 = cal_dec_quantile(x, b->reps, 0.9);
    free(x);
    return m;
}

#define BIT(op) (1u << (op))
static const unsigned DENSE = BIT(CAL_DEC_EMBED) | BIT(CAL_DEC_NORM) | BIT(CAL_DEC_QKV) |
                              BIT(CAL_DEC_ROPE) | BIT(CAL_DEC_KVW) | BIT(CAL_DEC_OUT) |
                              BIT(CAL_DEC_GU) | BIT(CAL_DEC_SILU) | BIT(CAL_DEC_DOWN);

static cJSON *nums(const double *v, int n, double scale)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < n; i++) {
        double x = round(v[i] * scale * 1000) / 1000;
        cJSON_AddItemToArray(a, cJSON_CreateNumber(x));
    }
    return a;
}

static cJSON *ints(const int *v, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}

static cJSON *curve(const char *axis, const int *x, const double *ns, int n)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddItemToObject(c, axis, ints(x, n));
    cJSON_AddItemToObject(c, "us", nums(ns, n, 1e-3));
    return c;
}

static cJSON *grid(const char *xa, const int *x, int nx, const char *ya, const int *y, int ny,
                   const double *ns)
{
    cJSON *g = cJSON_CreateObject(), *rows = cJSON_CreateArray();
    cJSON_AddItemToObject(g, xa, ints(x, nx));
    cJSON_AddItemToObject(g, ya, ints(y, ny));
    for (int i = 0; i < nx; i++)
        cJSON_AddItemToArray(rows, nums(ns + (size_t)i * (size_t)ny, ny, 1e-3));
    cJSON_AddItemToObject(g, "us", rows);
    return g;
}

static void bench_close(struct bench *b)
{
    cal_dec_rt_destroy(b->rt);
    free(b->tok), free(b->blk), free(b->ns), free(b->whole), free(b->pt), free(b->q), free(b->c);
    free(b->s), free(b->next);
}

/* Row i of the decode grid: cells the model's positions allow are measured; the others follow
 * the least-squares line through them in K. */
static void fill_row(double *row, const bool *meas, const int *kv, int n)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int m = 0;
    for (int j = 0; j < n; j++)
        if (meas[j]) {
            sx += kv[j], sy += row[j], sxx += (double)kv[j] * kv[j], sxy += kv[j] * row[j];
            m++;
        }
    double slope = 0, icpt = m ? sy / m : 0;
    if (m >= 2 && m * sxx - sx * sx > 0) {
        slope = (m * sxy - sx * sy) / (m * sxx - sx * sx);
        icpt = (sy - slope * sx) / m;
    } else if (m == 1) {
        slope = sy / sx, icpt = 0;
    }
    for (int j = 0; j < n; j++)
        if (!meas[j])
            row[j] = fmax(0, icpt + slope * kv[j]);
}

/* The check's iterations (cal_dec_cal.h): mixed shapes a serving loop runs. */
static const struct check_shape {
    const char *what;
    int nq, q[2], c[2], nd[2], dc[2];    /* chunks q@c; decodes: count x context */
} CHECKS[] = {
    {"prefill of 256 alone", 1, {256}, {0}, {0}, {0}},
    {"32 decodes at 300", 0, {0}, {0}, {32}, {300}},
    {"chunk of 128 beside 16 decodes at 200", 1, {128}, {0}, {16}, {200}},
    {"skewed: 15 decodes at 50, one at 3000", 0, {0}, {0}, {15, 1}, {50, 3000}},
    {"chunks 64@512 and 96@0 beside 8 decodes at 1000", 2, {64, 96}, {512, 0}, {8}, {1000}},
    {"chunk of 448@1024 beside 64 decodes at 100", 1, {448}, {1024}, {64}, {100}},
};
#define NCHECKS ((int)(sizeof CHECKS / sizeof *CHECKS))

/* Every point of the tables and the check, the model's positions permitting. */
static int plan(struct bench *b, const struct cal_dec_cal_opts *o, bool *meas)
{
    const struct cal_dec *d = o->d;
    int P = d->max_pos, rc = 0;
    int q[256], c[256];
    for (int i = 0; !rc && i < o->ntokens; i++) {
        q[0] = o->tokens[i], c[0] = 0;
        rc = add_point(b, PT_DENSE, i, 0, q, c, 1);
    }
    for (int i = 0; !rc && i < o->nchunks; i++)
        for (int j = 0; !rc && j < o->ncontexts; j++) {
            q[0] = o->chunks[i], c[0] = o->contexts[j];
            if (c[0] + q[0] > P)
                c[0] = P - q[0] > 0 ? P - q[0] : 0;
            rc = add_point(b, PT_PRE, i, j, q, c, 1);
        }
    for (int i = 0; !rc && i < o->nseqs; i++) {
        int B = o->seqs[i] > 256 ? 256 : o->seqs[i];
        for (int j = 0; !rc && j < o->nkv; j++) {
            int K = o->kv[j];
            /* contexts of K / B, the last position at most the model's last (a context of
             * P counts as P - 1) */
            meas[i * o->nkv + j] = K >= B && K / B + (K % B ? 1 : 0) <= P;
            if (!meas[i * o->nkv + j])
                continue;
            for (int k = 0; k < B; k++) {
                q[k] = 1, c[k] = K / B + (k < K % B);
                c[k] = c[k] > P - 1 ? P - 1 : c[k];
            }
            rc = add_point(b, PT_DEC, i, j, q, c, B);
        }
        for (int k = 0; k < B; k++)            /* the LM head and host: small contexts */
            q[k] = 1, c[k] = 16;
        if (!rc)
            rc = add_point(b, PT_HEAD, i, 0, q, c, B);
    }
    for (int k = 0; !rc && !o->no_check && k < NCHECKS; k++) {
        const struct check_shape *x = &CHECKS[k];
        int m = 0;
        for (int i = 0; i < x->nq; i++, m++) {
            q[m] = x->q[i] < P ? x->q[i] : P / 2;
            c[m] = x->c[i] + q[m] > P ? P - q[m] : x->c[i];
        }
        for (int g = 0; g < 2; g++)
            for (int i = 0; i < x->nd[g]; i++, m++)
                q[m] = 1, c[m] = x->dc[g] < P ? x->dc[g] : P - 1;
        rc = add_point(b, PT_CHECK, k, 0, q, c, m);
    }
    return rc;
}

static int bench_open(const struct cal_dec_cal_opts *o, struct bench *b, bool *meas)
{
    const struct cal_dec *d = o->d;
    memset(b, 0, sizeof *b);
    b->o = o;
    b->reps = o->reps < 1 ? 1 : o->reps;
    int rc = plan(b, o, meas);
    if (rc)
        return rc;
    for (int p = 0; p < b->npt; p++) {
        long need = blocks_of(b, &b->pt[p]);
        b->kv_blocks = need > b->kv_blocks ? need : b->kv_blocks;
    }
    b->kv_blocks += 1;
    struct cal_dec_rt_opts ro = {.threads = o->threads, .block_size = 16,
                                 .kv_blocks = b->kv_blocks, .max_tokens = b->max_tokens,
                                 .max_seqs = b->max_seqs, .gpu = o->gpu, .eager = o->eager,
                                 .device = o->gpu_dev, .seed = o->seed};
    b->tok = cal_dec_tokens(d, b->max_tokens, 11);
    b->blk = malloc((size_t)b->kv_blocks * sizeof *b->blk);
    b->ns = calloc((size_t)b->npt * (size_t)b->reps * CAL_DEC_NOPS, sizeof *b->ns);
    b->whole = calloc((size_t)b->npt * (size_t)b->reps, sizeof *b->whole);
    b->s = calloc((size_t)b->max_seqs, sizeof *b->s);
    b->next = calloc((size_t)b->max_seqs, sizeof *b->next);
    if (!b->tok || !b->blk || !b->ns || !b->whole || !b->s || !b->next)
        return SIM_ENOMEM;
    for (long i = 0; i < b->kv_blocks; i++)
        b->blk[i] = (int32_t)i;
    if ((rc = cal_dec_rt_create(d, &ro, &b->rt)))
        return rc;
    /* real keys and values in every block, as a serving engine's cache holds: attention's
     * time depends on them (its exponentials), and a cache of zeros runs faster than any
     * served request's */
    int chunk = b->max_tokens < d->max_pos ? b->max_tokens : d->max_pos;
    for (long at = 0; at < b->kv_blocks && !rc;) {
        long left = (b->kv_blocks - at) * 16;
        struct cal_dec_seq f = {(int)(left < chunk ? left : chunk), 0, b->tok, b->blk + at};
        rc = cal_dec_rt_step(b->rt, &f, 1, NULL, NULL);
        at += (f.q + 15) / 16;                       /* at least one block a step */
    }
    return rc;
}

/* The rounds: `warmup` untimed passes over every point, then `reps` rounds, each timing every
 * point once in an order shuffled anew each round (GSL, a fixed seed: no point always follows
 * the heaviest), right after untimed runs of the same shape (the warm state a serving loop's
 * iteration finds), so that a slow spell of the machine falls on all points
 * alike. */
static int rounds(struct bench *b, bool verbose)
{
    const struct cal_dec_cal_opts *o = b->o;
    double t0 = sim_wall_seconds(), shown = t0;
    int rc = 0;
    for (int w = 0; w < o->warmup && !rc; w++)
        for (int p = 0; p < b->npt && !rc; p++)
            if (!(rc = shape(b, &b->pt[p])))
                rc = cal_dec_rt_step(b->rt, b->s, b->pt[p].n, NULL, b->next);
    int *order = malloc((size_t)b->npt * sizeof *order);
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    if (!order || !g) {
        free(order);
        gsl_rng_free(g);
        return SIM_ENOMEM;
    }
    gsl_rng_set(g, 20261128);
    for (int p = 0; p < b->npt; p++)
        order[p] = p;
    for (int r = 0; r < b->reps && !rc; r++) {
        gsl_ran_shuffle(g, order, (size_t)b->npt, sizeof *order);
        for (int k = 0; k < b->npt && !rc; k++) {
            int p = order[k];
            const struct point *pt = &b->pt[p];
            size_t at = (size_t)p * (size_t)b->reps + (size_t)r;
            double *ns = b->ns + at * CAL_DEC_NOPS;
            if ((rc = shape(b, pt)))
                break;
            /* its twins first, untimed: a served iteration follows others of nearly its shape
             * (the same batch a token on) and finds the weights and caches as they left them.
             * After another shape the caches take more than one iteration to settle (measured:
             * a one-decode iteration after a 448-token prefill took 190 us after one twin, 114
             * after five, 112 in a run of its own; eight decodes of 256 tokens' context
             * took twice their steady time after 1 ms of twins), so twins run for 5 ms and at
             * least three */
            double tw = sim_wall_seconds();
            for (int w = 0; !rc && (w < 3 || sim_wall_seconds() - tw < 5e-3); w++)
                rc = cal_dec_rt_step(b->rt, b->s, pt->n, NULL, b->next);
            if (rc)
                break;
            cal_dec_rt_timing(b->rt, ns);
            double t = sim_wall_seconds();
            rc = cal_dec_rt_step(b->rt, b->s, pt->n, NULL, b->next);
            b->whole[at] = (sim_wall_seconds() - t) * 1e9;
            cal_dec_rt_timing(b->rt, NULL);
        }
        if (verbose && (sim_wall_seconds() - shown > 2 || r == b->reps - 1)) {
            shown = sim_wall_seconds();
            fprintf(stderr, "  round %d of %d: %d iterations each (%.1f s)\n", r + 1, b->reps,
                    b->npt, shown - t0);
        }
    }
    free(order);
    gsl_rng_free(g);
    return rc;
}

int cal_dec_measure(const struct cal_dec_cal_opts *oin, bool verbose, cJSON **out,
                    struct cal_dec_check_row *rows, int *nrows)
{
    *out = NULL;
    *nrows = 0;
    struct cal_dec_cal_opts o = *oin;
    cal_dec_default_axes(&o);
    const struct cal_dec *d = o.d;
    for (int i = 0; i < o.nseqs; i++)
        if (o.seqs[i] > 256)
            return sim_err_set(SIM_EINVAL, "llm-measure: --seqs %d: at most 256 sequences a "
                               "point", o.seqs[i]);
    struct bench b;
    memset(&b, 0, sizeof b);
    int nd = o.ntokens, npre = o.nchunks * o.ncontexts, ndec = o.nseqs * o.nkv;
    bool *meas = calloc((size_t)ndec + 1, sizeof *meas);
    double *dense = calloc((size_t)nd, sizeof *dense), *dp10 = calloc((size_t)nd, sizeof *dp10);
    double *dp90 = calloc((size_t)nd, sizeof *dp90), *pre = calloc((size_t)npre, sizeof *pre);
    double *dec = calloc((size_t)ndec, sizeof *dec), *one = calloc(CAL_DEC_MAX_AXIS, sizeof *one);
    double *head = calloc((size_t)o.nseqs, sizeof *head), *host = calloc((size_t)o.nseqs, sizeof *host);
    double *opmed = calloc((size_t)nd * CAL_DEC_NOPS, sizeof *opmed);
    int ones[CAL_DEC_MAX_AXIS], none = 0;
    double t_start = sim_wall_seconds();
    int rc = !meas || !dense || !dp10 || !dp90 || !pre || !dec || !one || !head || !host || !opmed
                 ? SIM_ENOMEM : bench_open(&o, &b, meas);
    if (!rc && verbose)
        fprintf(stderr, "  %d iterations a round: %d dense, %d prefill, %d decode, %d LM head, %d "
                "check\n", b.npt, nd, npre, b.npt - nd - npre - o.nseqs - (o.no_check ? 0 : NCHECKS),
                o.nseqs, o.no_check ? 0 : NCHECKS);
    if (!rc)
        rc = rounds(&b, verbose);
    double L = d->layers;
    for (int p = 0; !rc && p < b.npt; p++) {
        const struct point *pt = &b.pt[p];
        switch (pt->kind) {
        case PT_DENSE:
            dense[pt->i] = ops_median(&b, p, DENSE, 1 / L, &dp10[pt->i], &dp90[pt->i]);
            for (int k = 0; k < CAL_DEC_NOPS; k++)
                opmed[(size_t)pt->i * CAL_DEC_NOPS + (size_t)k] = ops_median(&b, p, BIT(k), 1, NULL, NULL);
            break;
        case PT_PRE:
            pre[pt->i * o.ncontexts + pt->j] = ops_median(&b, p, BIT(CAL_DEC_ATT_PRE), 1 / L, NULL, NULL);
            break;
        case PT_DEC:
            dec[pt->i * o.nkv + pt->j] = ops_median(&b, p, BIT(CAL_DEC_ATT_DEC), 1 / L, NULL, NULL);
            break;
        case PT_HEAD:
            head[pt->i] = ops_median(&b, p, BIT(CAL_DEC_HEAD), 1, NULL, NULL);
            host[pt->i] = ops_median(&b, p, BIT(CAL_DEC_HOST), 1, NULL, NULL);
            break;
        case PT_CHECK:
            break;
        }
    }
    /* a decode batch's attention does not cost less with more context: each row made
     * non-decreasing in K (medians of a shared machine can cross where two cells are close),
     * then its unmeasured cells extended */
    for (int i = 0; !rc && i < o.nseqs; i++) {
        double *row = dec + (size_t)i * (size_t)o.nkv, hi = 0;
        for (int j = 0; j < o.nkv; j++)
            if (meas[i * o.nkv + j])
                hi = row[j] = fmax(row[j], hi);
        fill_row(row, meas + (size_t)i * (size_t)o.nkv, o.kv, o.nkv);
    }
    for (int i = 0; !rc && i < o.nseqs; i++)      /* one decode: the measured row of 1 */
        for (int j = 0; o.seqs[i] == 1 && j < o.nkv && none < CAL_DEC_MAX_AXIS; j++)
            if (meas[i * o.nkv + j])
                one[none] = dec[i * o.nkv + j], ones[none++] = o.kv[j];
    for (int i = 0; !rc && i < o.nchunks; i++)
        for (int j = 1; j < o.ncontexts; j++)
            pre[i * o.ncontexts + j] = fmax(pre[i * o.ncontexts + j], pre[i * o.ncontexts + j - 1]);
    cJSON *p = NULL;
    if (!rc) {
        p = cJSON_CreateObject();
        cJSON *prov = cJSON_CreateObject(), *pl = cJSON_CreateObject();
        char when[32];
        time_t now = time(NULL);
        struct tm tmv;
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tmv));
        cJSON_AddStringToObject(p, "format", "servesim-llm-profile/1");
        cJSON_AddStringToObject(p, "model", d->arch);
        cJSON_AddStringToObject(p, "gpu", o.kind);
        cJSON_AddNumberToObject(p, "tp", 1);
        cJSON_AddStringToObject(p, "dtype", cal_dec_rt_dtype(b.rt));
        cJSON_AddStringToObject(prov, "device", o.device ? o.device : "");
        cJSON_AddStringToObject(prov, "libraries", cal_dec_rt_describe(b.rt));
        cJSON_AddStringToObject(prov, "versions", o.versions ? o.versions : "");
        cJSON_AddStringToObject(prov, "exec_mode", cal_dec_rt_exec_mode(b.rt));
        cJSON_AddStringToObject(prov, "timing", "rounds in a shuffled order, each shape timed "
                                "after 5 ms (at least 3) untimed runs of it; medians over the "
                                "rounds");
        cJSON_AddStringToObject(prov, "network", d->name);
        cJSON_AddStringToObject(prov, "measured", when);
        cJSON_AddNumberToObject(prov, "warmup", o.warmup);
        cJSON_AddNumberToObject(prov, "rounds", b.reps);
        cJSON_AddNumberToObject(prov, "seconds", round(sim_wall_seconds() - t_start));
        cJSON_AddItemToObject(p, "provenance", prov);
        cJSON_AddItemToObject(pl, "dense", curve("tokens", o.tokens, dense, nd));
        cJSON_AddItemToObject(pl, "prefill_attention",
                              grid("chunk", o.chunks, o.nchunks, "context", o.contexts,
                                   o.ncontexts, pre));
        cJSON_AddItemToObject(pl, "decode_attention",
                              grid("seqs", o.seqs, o.nseqs, "kv_tokens", o.kv, o.nkv, dec));
        if (none > 0)
            cJSON_AddItemToObject(pl, "decode_one", curve("context", ones, one, none));
        cJSON_AddItemToObject(p, "per_layer", pl);
        cJSON_AddItemToObject(p, "lm_head", curve("seqs", o.seqs, head, o.nseqs));
        cJSON_AddItemToObject(p, "host", curve("seqs", o.seqs, host, o.nseqs));
        /* every operator of the dense points (all layers, us), and the dense curve's spread */
        cJSON *ops = cJSON_CreateObject();
        cJSON_AddStringToObject(ops, "note", "medians of each operator over all layers at the "
                                "dense points (one prefill of T tokens, c = 0), us; the dense "
                                "curve's 10th and 90th percentiles per layer; not read by the "
                                "simulator");
        cJSON_AddItemToObject(ops, "tokens", ints(o.tokens, nd));
        double *col = calloc((size_t)nd, sizeof *col);
        for (int k = 0; col && k < CAL_DEC_NOPS; k++) {
            for (int i = 0; i < nd; i++)
                col[i] = opmed[(size_t)i * CAL_DEC_NOPS + (size_t)k];
            cJSON_AddItemToObject(ops, cal_dec_op_name((enum cal_dec_op)k), nums(col, nd, 1e-3));
        }
        free(col);
        cJSON_AddItemToObject(ops, "dense_p10_us", nums(dp10, nd, 1e-3));
        cJSON_AddItemToObject(ops, "dense_p90_us", nums(dp90, nd, 1e-3));
        cJSON_AddItemToObject(p, "operators", ops);
    }
    /* the check rows: measured in the same rounds, predicted from the profile just built */
    for (int k = 0; !rc && k < b.npt; k++) {
        const struct point *pt = &b.pt[k];
        if (pt->kind != PT_CHECK || *nrows >= CAL_DEC_CHECK_ROWS)
            continue;
        struct cal_dec_check_row *r = &rows[(*nrows)++];
        double pred = 0;
        if ((rc = shape(&b, pt)) || (rc = cal_dec_predict(d, p, o.kind, b.s, pt->n, &pred)))
            break;
        snprintf(r->what, sizeof r->what, "%s", CHECKS[pt->i].what);
        r->seqs = pt->n;
        r->tokens = 0;
        for (int i = 0; i < pt->n; i++)
            r->tokens += b.q[pt->at + i];
        r->measured_us = ops_median(&b, k, 0, 1e-3, &r->p10_us, &r->p90_us);
        r->predicted_us = pred / 1e3;
        r->err = r->predicted_us / r->measured_us - 1;
        /* where it lies: the dense operators measured in the row against the dense curve */
        r->dense_us = ops_median(&b, k, DENSE, 1e-3, NULL, NULL);
        r->dense_pred_us = L * interp(o.tokens, dense, nd, r->tokens) / 1e3;
    }
    if (rc)
        cJSON_Delete(p);
    else
        *out = p;
    bench_close(&b);
    free(meas), free(dense), free(dp10), free(dp90), free(pre), free(dec);
    free(one), free(head), free(host), free(opmed);
    return rc;
}

int cal_dec_predict(const struct cal_dec *d, const cJSON *profile, const char *kind,
                    const struct cal_dec_seq *s, int n, double *ns)
{
    struct sim_llm_table *t = NULL;
    int rc = wl_llm_profile_read(profile, "profile", ".", d->arch, kind, 1, &t);
    if (rc)
        return rc;
    struct sim_llm_cfg c;
    memset(&c, 0, sizeof c);
    const struct wl_llm_arch_entry *a = wl_llm_arch_find(d->arch);
    if (a)
        c.arch = a->arch;
    c.arch.layers = d->layers;
    c.tp = 1;
    c.prof = SIM_LLM_TABLE;
    c.table = t;
    struct sim_llm_seq *q = calloc((size_t)n, sizeof *q);
    if (!q) {
        sim_llm_table_free(t);
        return SIM_ENOMEM;
    }
    for (int i = 0; i < n; i++)
        q[i] = (struct sim_llm_seq){s[i].q, s[i].c};
    *ns = sim_llm_gpu_ns(&c, q, n) + sim_llm_host_ns(&c, n);
    free(q);
    sim_llm_table_free(t);
    return 0;
}

