/* cal_ref — plain-loop reference layers over canonical layouts (see cal_net.h). */
#include "cal_ref.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"

static void conv(const struct cal_layer *l, const struct cal_shape *xs, int batch,
                 const float *x, float *y)
{
    int64_t C = xs->d[0], H = xs->d[1], W = xs->d[2];
    int64_t O = l->shape.d[0], Ho = l->shape.d[1], Wo = l->shape.d[2];
    int64_t cg = C / l->groups, og = O / l->groups;
    for (int n = 0; n < batch; n++)
        for (int64_t o = 0; o < O; o++) {
            int64_t g = o / og;
            for (int64_t i = 0; i < Ho; i++)
                for (int64_t j = 0; j < Wo; j++) {
                    double acc = l->b ? l->b[o] : 0;
                    for (int64_t c = 0; c < cg; c++)
                        for (int a = 0; a < l->kh; a++) {
                            int64_t hi = i * l->sh - l->ph + (int64_t)a * l->dh;
                            if (hi < 0 || hi >= H)
                                continue;
                            for (int b = 0; b < l->kw; b++) {
                                int64_t wi = j * l->sw - l->pw + (int64_t)b * l->dw;
                                if (wi < 0 || wi >= W)
                                    continue;
                                acc += (double)x[((n * C + g * cg + c) * H + hi) * W + wi] *
                                       l->w[((o * cg + c) * l->kh + a) * l->kw + b];
                            }
                        }
                    y[((n * O + o) * Ho + i) * Wo + j] = (float)acc;
                }
        }
}

static void pool(const struct cal_layer *l, const struct cal_shape *xs, int batch,
                 const float *x, float *y)
{
    int64_t C = xs->d[0], H = xs->d[1], W = xs->d[2], Ho = l->shape.d[1], Wo = l->shape.d[2];
    int kh = l->op == CAL_GAP ? (int)H : l->kh, kw = l->op == CAL_GAP ? (int)W : l->kw;
    int sh = l->op == CAL_GAP ? 1 : l->sh, sw = l->op == CAL_GAP ? 1 : l->sw;
    int ph = l->op == CAL_GAP ? 0 : l->ph, pw = l->op == CAL_GAP ? 0 : l->pw;
    for (int64_t nc = 0; nc < batch * C; nc++)
        for (int64_t i = 0; i < Ho; i++)
            for (int64_t j = 0; j < Wo; j++) {
                double acc = l->op == CAL_MAXPOOL ? -INFINITY : 0;
                for (int a = 0; a < kh; a++)
                    for (int b = 0; b < kw; b++) {
                        int64_t hi = i * sh - ph + a, wi = j * sw - pw + b;
                        if (hi < 0 || hi >= H || wi < 0 || wi >= W)
                            continue; /* padding: ignored by max, zero for average */
                        double v = x[(nc * H + hi) * W + wi];
                        acc = l->op == CAL_MAXPOOL ? fmax(acc, v) : acc + v;
                    }
                /* average over the whole window, padding included (PyTorch's default) */
                y[(nc * Ho + i) * Wo + j] = (float)(l->op == CAL_MAXPOOL ? acc : acc / (kh * kw));
            }
}

static double act(enum cal_op op, double v)
{
    switch (op) {
    case CAL_RELU: return v > 0 ? v : 0;
    case CAL_RELU6: return v < 0 ? 0 : v > 6 ? 6 : v;
    case CAL_SIGMOID: return 1 / (1 + exp(-v));
    case CAL_TANH: return tanh(v);
    default: return 0.5 * v * (1 + erf(v / sqrt(2.0))); /* gelu */
    }
}

static void norm_rows(const float *x, float *y, int64_t rows, int64_t d, const float *g,
                      const float *b, double eps)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * d;
        double m = 0, v = 0;
        for (int64_t k = 0; k < d; k++)
            m += xr[k];
        m /= (double)d;
        for (int64_t k = 0; k < d; k++)
            v += (xr[k] - m) * (xr[k] - m);
        v /= (double)d;
        for (int64_t k = 0; k < d; k++)
            y[r * d + k] = (float)((xr[k] - m) / sqrt(v + eps) * g[k] + b[k]);
    }
}

static void softmax_rows(const float *x, float *y, int64_t rows, int64_t d)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * d;
        double mx = -INFINITY, s = 0;
        for (int64_t k = 0; k < d; k++)
            mx = fmax(mx, xr[k]);
        for (int64_t k = 0; k < d; k++)
            s += exp(xr[k] - mx);
        for (int64_t k = 0; k < d; k++)
            y[r * d + k] = (float)(exp(xr[k] - mx) / s);
    }
}

/* fc (the whole input a row) and linear (each of S rows): y = x W^T + b, in double. */
static void dense(const struct cal_layer *l, const struct cal_shape *xs, int batch,
                  const float *x, float *y)
{
    int64_t nx = cal_shape_count(xs);
    int64_t k = l->op == CAL_FC ? nx : xs->d[1], rows = batch * (l->op == CAL_FC ? 1 : xs->d[0]);
    for (int64_t r = 0; r < rows; r++)
        for (int o = 0; o < l->out; o++) {
            double acc = l->b ? l->b[o] : 0;
            for (int64_t q = 0; q < k; q++)
                acc += (double)x[r * k + q] * l->w[o * k + q];
            y[r * l->out + o] = (float)acc;
        }
}

/* Attention's batched matmul per head: scores Q K^T (transpose_b) or the context P V; bs is
 * in[1]'s shape [S,D]. */
static void bmm(const struct cal_layer *l, const struct cal_shape *bs, int batch,
                const float *x, const float *b, float *y)
{
    int64_t S = bs->d[0], D = bs->d[1], H = l->heads, dh = D / H;
    for (int n = 0; n < batch; n++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t i = 0; i < S; i++) {
                if (l->transpose_b) { /* scores[n][h][i][j] = q_i . k_j */
                    for (int64_t j = 0; j < S; j++) {
                        double acc = 0;
                        for (int64_t q = 0; q < dh; q++)
                            acc += (double)x[(n * S + i) * D + h * dh + q] *
                                   b[(n * S + j) * D + h * dh + q];
                        y[((n * H + h) * S + i) * S + j] = (float)(acc * l->scale);
                    }
                } else { /* ctx[n][i][h*dh+q] = sum_j p[n][h][i][j] v[n][j][h*dh+q] */
                    for (int64_t q = 0; q < dh; q++) {
                        double acc = 0;
                        for (int64_t j = 0; j < S; j++)
                            acc += (double)x[((n * H + h) * S + i) * S + j] *
                                   b[(n * S + j) * D + h * dh + q];
                        y[(n * S + i) * D + h * dh + q] = (float)(acc * l->scale);
                    }
                }
            }
}

void cal_ref_layer(const struct cal_net *net, int li, int batch, const void *const *in,
                   float *y)
{
    const struct cal_layer *l = &net->layers[li];
    const struct cal_shape *xs = cal_net_tensor_shape(net, l->in[0]);
    const float *x = in[0];
    int64_t nx = cal_shape_count(xs), ny = cal_shape_count(&l->shape);
    switch (l->op) {
    case CAL_CONV:
        conv(l, xs, batch, x, y);
        break;
    case CAL_MAXPOOL: case CAL_AVGPOOL: case CAL_GAP:
        pool(l, xs, batch, x, y);
        break;
    case CAL_BN: {
        int64_t C = xs->d[0], hw = xs->d[1] * xs->d[2];
        for (int64_t nc = 0; nc < batch * C; nc++) {
            int64_t c = nc % C;
            double g = l->w[c] / sqrt((double)l->var[c] + l->eps);
            for (int64_t k = 0; k < hw; k++)
                y[nc * hw + k] = (float)((x[nc * hw + k] - l->mean[c]) * g + l->b[c]);
        }
        break;
    }
    case CAL_LAYERNORM: {
        int64_t d = xs->d[xs->nd - 1];
        norm_rows(x, y, batch * nx / d, d, l->w, l->b, l->eps);
        break;
    }
    case CAL_SOFTMAX: {
        int64_t d = xs->d[xs->nd - 1];
        if (xs->nd == 3 && xs->d[1] == 1 && xs->d[2] == 1)
            d = xs->d[0];
        softmax_rows(x, y, batch * nx / d, d);
        break;
    }
    case CAL_ADD: {
        const float *b = in[1];
        for (int64_t k = 0; k < batch * nx; k++)
            y[k] = x[k] + b[k];
        break;
    }
    case CAL_CONCAT: {
        int64_t hw = xs->d[1] * xs->d[2], co = 0, C = l->shape.d[0];
        for (int j = 0; j < l->nin; j++) {
            int64_t cj = cal_net_tensor_shape(net, l->in[j])->d[0];
            const float *xj = in[j];
            for (int n = 0; n < batch; n++)
                memcpy(y + (n * C + co) * hw, xj + n * cj * hw, (size_t)(cj * hw) * sizeof *y);
            co += cj;
        }
        break;
    }
    case CAL_FC: case CAL_LINEAR:
        dense(l, xs, batch, x, y);
        break;
    case CAL_BMM:
        bmm(l, cal_net_tensor_shape(net, l->in[1]), batch, x, in[1], y);
        break;
    case CAL_EMBED: {
        const int32_t *ids = in[0];
        int64_t S = xs->d[0], D = l->dim;
        const float *pos = l->w + (int64_t)l->vocab * D, *typ = pos + (int64_t)l->positions * D;
        for (int n = 0; n < batch; n++)
            for (int64_t s = 0; s < S; s++)
                for (int64_t d = 0; d < D; d++)
                    y[(n * S + s) * D + d] = l->w[(int64_t)ids[n * S + s] * D + d] +
                                             pos[s * D + d] + (l->types ? typ[d] : 0.0f);
        break;
    }
    case CAL_TOKEN: {
        int64_t S = xs->d[0], D = xs->d[1];
        for (int n = 0; n < batch; n++)
            memcpy(y + n * D, x + (n * S + l->index) * D, (size_t)D * sizeof *y);
        break;
    }
    default:
        for (int64_t k = 0; k < batch * ny; k++)
            y[k] = (float)act(l->op, x[k]);
        break;
    }
}

void *cal_ref_input(const struct cal_net *net, int batch, uint64_t seed)
{
    int64_t n = batch * cal_shape_count(&net->input);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    void *buf = malloc((size_t)n * 4);
    if (!r || !buf) {
        gsl_rng_free(r);
        free(buf);
        return NULL;
    }
    gsl_rng_set(r, (unsigned long)seed);
    int vocab = net->n && net->layers[0].op == CAL_EMBED ? net->layers[0].vocab : 1;
    for (int64_t i = 0; i < n; i++) {
        if (net->tokens)
            ((int32_t *)buf)[i] = (int32_t)gsl_rng_uniform_int(r, (unsigned long)vocab);
        else
            ((float *)buf)[i] = (float)(2 * gsl_rng_uniform(r) - 1);
    }
    gsl_rng_free(r);
    return buf;
}

int cal_ref_forward(const struct cal_net *net, int batch, const void *input, float ***outs)
{
    float **o = calloc((size_t)net->n, sizeof *o);
    if (!o)
        return SIM_ENOMEM;
    for (int i = 0; i < net->n; i++) {
        const struct cal_layer *l = &net->layers[i];
        const void *in[CAL_MAX_IN];
        if (!(o[i] = malloc((size_t)(batch * cal_shape_count(&l->shape)) * sizeof(float)))) {
            for (int j = 0; j < i; j++)
                free(o[j]);
            free(o);
            return SIM_ENOMEM;
        }
        for (int j = 0; j < l->nin; j++)
            in[j] = l->in[j] == CAL_INPUT ? input : o[l->in[j]];
        cal_ref_layer(net, i, batch, in, o[i]);
    }
    *outs = o;
    return 0;
}

double cal_ref_rel_err(const float *a, const float *b, int64_t n)
{
    double num = 0, den = 1e-6;
    for (int64_t i = 0; i < n; i++) {
        num = fmax(num, fabs((double)a[i] - b[i]));
        den = fmax(den, fabs((double)b[i]));
    }
    return num / den;
}
