/* cal_fuse — the fusion plan and the channels-last transforms (see cal_fuse.h). */
#include "cal_fuse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"

int cal_act_of(enum cal_op op)
{
    switch (op) {
    case CAL_RELU: return CAL_ACT_RELU;
    case CAL_RELU6: return CAL_ACT_RELU6;
    case CAL_SIGMOID: return CAL_ACT_SIGMOID;
    case CAL_TANH: return CAL_ACT_TANH;
    case CAL_GELU: return CAL_ACT_GELU;
    default: return -1;
    }
}

/* The one layer that reads tensor t, or -1 when t has several readers, none, or is the
 * network's output (which must stay materialised). */
static int sole_reader(const struct cal_net *net, const int *readers, int t)
{
    if (t < 0 || t == net->n - 1 || readers[t] != 1)
        return -1;
    for (int i = t + 1; i < net->n; i++)
        for (int j = 0; j < net->layers[i].nin; j++)
            if (net->layers[i].in[j] == t)
                return i;
    return -1;
}

void cal_plan_free(struct cal_plan *p)
{
    free(p->groups), free(p->into), free(p->group);
    memset(p, 0, sizeof *p);
}

int cal_plan_build(const struct cal_net *net, bool fuse, struct cal_plan *out)
{
    int n = net->n;
    memset(out, 0, sizeof *out);
    out->n = n;
    out->into = malloc((size_t)(n > 0 ? n : 1) * sizeof *out->into);
    out->group = malloc((size_t)(n > 0 ? n : 1) * sizeof *out->group);
    out->groups = calloc((size_t)(n > 0 ? n : 1), sizeof *out->groups);
    int *readers = calloc((size_t)(n > 0 ? n : 1), sizeof *readers);
    if (!out->into || !out->group || !out->groups || !readers) {
        free(readers);
        cal_plan_free(out);
        return SIM_ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        out->into[i] = i, out->group[i] = -1;
        for (int j = 0; j < net->layers[i].nin; j++)
            if (net->layers[i].in[j] >= 0)
                readers[net->layers[i].in[j]]++;
    }
    for (int i = 0; fuse && i < n; i++) {
        const struct cal_layer *l = &net->layers[i];
        if (out->into[i] != i)
            continue;                        /* absorbed by an earlier group */
        bool gemm = l->op == CAL_CONV || l->op == CAL_FC || l->op == CAL_LINEAR;
        bool bn = l->op == CAL_BN, add = l->op == CAL_ADD && l->nin == 2 && l->in[0] != l->in[1];
        if (!gemm && !bn && !add)
            continue;
        struct cal_group g = {.head = i, .add = -1, .z = 0, .act = -1, .last = i,
                              .kind = CAL_ACT_NONE};
        int cur = i, r;
        if (gemm && (r = sole_reader(net, readers, cur)) >= 0 && out->into[r] == r) {
            const struct cal_layer *a = &net->layers[r];
            if (a->op == CAL_ADD && a->nin == 2 && a->in[0] != a->in[1])
                g.add = r, g.z = a->in[0] == cur ? a->in[1] : a->in[0], cur = r;
        }
        if ((r = sole_reader(net, readers, cur)) >= 0 && out->into[r] == r &&
            cal_act_of(net->layers[r].op) >= 0)
            g.act = r, g.kind = cal_act_of(net->layers[r].op), cur = r;
        if (cur == i && !bn && !(gemm && l->bias))
            continue;                        /* nothing to fuse: the layer runs on its own */
        g.last = cur;
        out->into[i] = cur;
        if (g.add >= 0)
            out->into[g.add] = cur;
        if (g.act >= 0)
            out->into[g.act] = cur;
        out->group[cur] = out->ngroups;
        out->groups[out->ngroups++] = g;
    }
    free(readers);
    return 0;
}

int cal_plan_steps(const struct cal_plan *p)
{
    int k = 0;
    for (int i = 0; i < p->n; i++)
        k += p->into[i] == i;
    return k;
}

void cal_plan_last_use(const struct cal_net *net, const struct cal_plan *p, int *last)
{
    int n = net->n;
    last[0] = 0;
    for (int t = 0; t < n; t++)
        last[t + 1] = t;
    for (int i = 0; i < n; i++) {
        if (p->into[i] != i)
            continue;
        const struct cal_group *g = p->group[i] >= 0 ? &p->groups[p->group[i]] : NULL;
        const struct cal_layer *l = &net->layers[g ? g->head : i];
        for (int j = 0; j < l->nin; j++)
            if (last[l->in[j] + 1] < i)
                last[l->in[j] + 1] = i;
        if (g && g->add >= 0 && last[g->z + 1] < i)
            last[g->z + 1] = i;
    }
    if (n > 0)
        last[n] = n - 1;
}

void cal_bn_affine(const struct cal_layer *bn, float *scale, float *shift)
{
    for (int64_t c = 0; c < bn->nb; c++) {
        double s = bn->w[c] / sqrt((double)bn->var[c] + bn->eps);
        scale[c] = (float)s;
        shift[c] = (float)(bn->b[c] - bn->mean[c] * s);
    }
}

void cal_nhwc_conv_weights(const float *w, float *out, int k, int cg, int r, int s)
{
    for (int64_t o = 0; o < k; o++)
        for (int64_t c = 0; c < cg; c++)
            for (int64_t y = 0; y < r; y++)
                for (int64_t x = 0; x < s; x++)
                    out[((o * r + y) * s + x) * cg + c] = w[((o * cg + c) * r + y) * s + x];
}

void cal_nhwc_fc_weights(const float *w, float *out, int out_features, int c, int hw)
{
    int64_t k = (int64_t)c * hw;
    for (int64_t o = 0; o < out_features; o++)
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t p = 0; p < hw; p++)
                out[o * k + p * c + ch] = w[o * k + ch * hw + p];
}

void cal_nhwc_permute(const float *x, float *y, int n, int c, int hw, bool to_nhwc)
{
    int64_t per = (int64_t)c * hw;
    for (int64_t q = 0; q < n; q++)
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t p = 0; p < hw; p++) {
                int64_t a = q * per + ch * hw + p, b = q * per + p * c + ch;
                if (to_nhwc)
                    y[b] = x[a];
                else
                    y[a] = x[b];
            }
}
