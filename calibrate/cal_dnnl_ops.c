/* cal_dnnl_ops — the oneDNN backend's builders, one per op family (convolution, batch norm,
 * eltwise, pooling, add, concat, inner product, matmul, batched matmul, softmax, layer norm,
 * embedding, token slice): each makes layer i's primitive, loads its weights and binds its
 * arguments as one step of the pass (cal_dnnl_int.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cal_dnnl_int.h"
#include "sim_err.h"

/* The layer being built: its index, first input and the batch. */
struct step_in {
    const struct cal_layer *l;
    const struct cal_shape *xs;     /* the first input's shape */
    int64_t N;                      /* the batch */
    int i, t0, last;                /* the layer, its first input tensor, the last layer */
};

/* The common case: one primitive from the op descriptor `desc`, the layer's first input its
 * source. */
static int src_step(struct dn *d, const struct step_in *in, const void *desc)
{
    dnnl_primitive_desc_t pd = NULL;
    int rc = dn_chk(dnnl_primitive_desc_create(&pd, desc, d->attr, d->eng, NULL), in->l, "primitive");
    if (rc)
        return rc;
    dnnl_exec_arg_t a[2] = {{DNNL_ARG_SRC, d->tmem[in->t0 + 1]}};
    return dn_finish(d, in->i, in->l, pd, in->last, 2, a, 1);
}

static int build_conv(struct dn *d, const struct step_in *in)
{
    const struct cal_layer *l = in->l;
    const struct cal_shape *xs = in->xs;
    int64_t N = in->N;
    int i = in->i, last = in->last, rc = 0;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_convolution_desc_t cd;
    dnnl_dims_t sd = {N, xs->d[0], xs->d[1], xs->d[2]};
    dnnl_dims_t dd = {N, l->out, l->shape.d[1], l->shape.d[2]};
    dnnl_dims_t wd5 = {l->groups, l->out / l->groups, xs->d[0] / l->groups, l->kh, l->kw};
    dnnl_dims_t wd4 = {l->out, xs->d[0], l->kh, l->kw};
    dnnl_dims_t bd = {l->out}, strides = {l->sh, l->sw}, dil = {l->dh - 1, l->dw - 1};
    dnnl_dims_t pl = {l->ph, l->pw}, pr;
    pr[0] = (l->shape.d[1] - 1) * l->sh + (int64_t)(l->kh - 1) * l->dh + 1 - xs->d[1] - l->ph;
    pr[1] = (l->shape.d[2] - 1) * l->sw + (int64_t)(l->kw - 1) * l->dw + 1 - xs->d[2] - l->pw;
    pr[0] = pr[0] < 0 ? 0 : pr[0], pr[1] = pr[1] < 0 ? 0 : pr[1];
    bool g = l->groups > 1;
    dnnl_memory_desc_t smd, wmd, bmd, dmd, uw, ub;
    dnnl_memory_desc_init_by_tag(&smd, 4, sd, dnnl_f32, dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&wmd, g ? 5 : 4, g ? wd5 : wd4, dnnl_f32, dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&bmd, 1, bd, dnnl_f32, dnnl_a);
    dnnl_memory_desc_init_by_tag(&dmd, 4, dd, dnnl_f32, dnnl_format_tag_any);
    if ((rc = dn_chk(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                      dnnl_convolution_auto, &smd, &wmd, l->b ? &bmd : NULL, &dmd, strides,
                      dil, pl, pr), l, "descriptor")) ||
        (rc = dn_chk(dnnl_primitive_desc_create(&pd, &cd, d->attr, d->eng, NULL), l, "primitive")))
        return rc;
    dnnl_memory_desc_init_by_tag(&uw, g ? 5 : 4, g ? wd5 : wd4, dnnl_f32, g ? dnnl_goihw : dnnl_oihw);
    dnnl_memory_desc_init_by_tag(&ub, 1, bd, dnnl_f32, dnnl_a);
    return dn_weighted_step(d, i, l, pd, last, &uw, &ub);
}

static int build_bn(struct dn *d, const struct step_in *in)
{
    const struct cal_layer *l = in->l;
    const struct cal_shape *xs = in->xs;
    int i = in->i, t0 = in->t0, last = in->last, rc = 0;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_exec_arg_t a[MAX_ARGS];
    dnnl_memory_desc_t md;
    dnnl_batch_normalization_desc_t bd;
    dnnl_dims_t cd = {xs->d[0]};
    dnnl_memory_t m_sc, m_sh, m_mean, m_var;
    if ((rc = dn_chk(dnnl_batch_normalization_forward_desc_init(&bd, dnnl_forward_inference,
                      &d->tmd[t0 + 1], (float)l->eps,
                      dnnl_use_global_stats | dnnl_use_scale | dnnl_use_shift), l, "descriptor")) ||
        (rc = dn_chk(dnnl_primitive_desc_create(&pd, &bd, d->attr, d->eng, NULL), l, "primitive")))
        return rc;
    dnnl_memory_desc_init_by_tag(&md, 1, cd, dnnl_f32, dnnl_a);
    if ((rc = dn_load_weights(d, l, &md, l->w, &md, &m_sc)) ||
        (rc = dn_load_weights(d, l, &md, l->b, &md, &m_sh)) ||
        (rc = dn_load_weights(d, l, &md, l->mean, &md, &m_mean)) ||
        (rc = dn_load_weights(d, l, &md, l->var, &md, &m_var))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    a[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, d->tmem[t0 + 1]};
    a[1] = (dnnl_exec_arg_t){DNNL_ARG_SCALE, m_sc};
    a[2] = (dnnl_exec_arg_t){DNNL_ARG_SHIFT, m_sh};
    a[3] = (dnnl_exec_arg_t){DNNL_ARG_MEAN, m_mean};
    a[4] = (dnnl_exec_arg_t){DNNL_ARG_VARIANCE, m_var};
    return dn_finish(d, i, l, pd, last, 6, a, 5);
}

static int build_eltwise(struct dn *d, const struct step_in *in)
{
    const struct cal_layer *l = in->l;
    int t0 = in->t0, rc = 0;
    dnnl_eltwise_desc_t ed;
    dnnl_alg_kind_t alg = l->op == CAL_RELU ? dnnl_eltwise_relu
                          : l->op == CAL_RELU6 ? dnnl_eltwise_clip
                          : l->op == CAL_SIGMOID ? dnnl_eltwise_logistic
                          : l->op == CAL_TANH ? dnnl_eltwise_tanh : dnnl_eltwise_gelu_erf;
    if ((rc = dn_chk(dnnl_eltwise_forward_desc_init(&ed, dnnl_forward_inference, alg,
                      &d->tmd[t0 + 1], 0.0f, l->op == CAL_RELU6 ? 6.0f : 0.0f), l, "descriptor")))
        return rc;
    return src_step(d, in, &ed);
}

static int build_pool(struct dn *d, const struct step_in *in)
{
    const struct cal_layer *l = in->l;
    const struct cal_shape *xs = in->xs;
    int64_t N = in->N;
    int t0 = in->t0, rc = 0;
    dnnl_memory_desc_t md;
    dnnl_pooling_desc_t pdsc;
    bool gap = l->op == CAL_GAP;
    dnnl_dims_t dd = {N, l->shape.d[0], l->shape.d[1], l->shape.d[2]};
    dnnl_dims_t k = {gap ? xs->d[1] : l->kh, gap ? xs->d[2] : l->kw};
    dnnl_dims_t s = {gap ? 1 : l->sh, gap ? 1 : l->sw}, pl = {gap ? 0 : l->ph, gap ? 0 : l->pw}, pr;
    for (int q = 0; q < 2; q++) {
        pr[q] = (l->shape.d[1 + q] - 1) * s[q] + k[q] - xs->d[1 + q] - pl[q];
        pr[q] = pr[q] < 0 ? 0 : pr[q];
    }
    dnnl_memory_desc_init_by_tag(&md, 4, dd, dnnl_f32, dnnl_format_tag_any);
    if ((rc = dn_chk(dnnl_pooling_forward_desc_init(&pdsc, dnnl_forward_inference,
                      l->op == CAL_MAXPOOL ? dnnl_pooling_max : dnnl_pooling_avg_include_padding,
                      &d->tmd[t0 + 1], &md, s, k, pl, pr), l, "descriptor")))
        return rc;
    return src_step(d, in, &pdsc);     /* (max pooling for inference needs no workspace) */

}

static int build_add(struct dn *d, const struct step_in *in)
{
    const struct cal_layer *l = in->l;
    int i = in->i, t0 = in->t0, last = in->last, rc = 0;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_exec_arg_t a[MAX_ARGS];
    dnnl_memory_t mem;
    dnnl_binary_desc_t bd;
    if ((rc = dn_input_as(d, l, i, l->in[1], &d->tmd[t0 + 1], &mem)) ||
        (rc = dn_chk(dnnl_binary_desc_init(&bd, dnnl_binary_add, &d->tmd[t0 + 1], &d->tmd[t0 + 1],
                                        &d->tmd[t0 + 1]), l, "descriptor")) ||
        (rc = dn_chk(dnnl_primitive_desc_create(&pd, &bd, d->attr, d->eng, NULL), l, "primitive")))
        return rc;
    a[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC_0, d->tmem[t0 + 1]};
    a[1] = (dnnl_exec_arg_t){DNNL_ARG_SRC_1, mem};
    return dn_finish(d, i, l, pd, last, 3, a, 2);
}

static int build_concat(struct dn *d, const struct step_in *in)
{
    const struct cal_layer *l = in->l;
    int i = in->i, last = in->last, rc = 0;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_exec_arg_t a[MAX_ARGS];
    dnnl_memory_desc_t mds[CAL_MAX_IN];
    for (int j = 0; j < l->nin; j++) {
        mds[j] = d->tmd[l->in[j] + 1];
        a[j] = (dnnl_exec_arg_t){DNNL_ARG_MULTIPLE_SRC + j, d->tmem[l->in[j] + 1]};
    }
    if ((rc = dn_chk(dnnl_concat_primitive_desc_create(&pd, NULL, l->nin, 1, mds, d->attr, d->eng),
                  l, "primitive")))
        return rc;
    return dn_finish(d, i, l, pd, last, l->nin + 1, a, l->nin);
}

static int build_fc(struct dn *d, const struct step_in *in)
{
    const struct cal_layer *l = in->l;
    const struct cal_shape *xs = in->xs;
    int64_t N = in->N;
    int i = in->i, t0 = in->t0, last = in->last, rc = 0;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_inner_product_desc_t id;
    dnnl_memory_desc_t wmd, bmd, dmd, uw;
    dnnl_dims_t bd = {l->out}, dd = {N, l->out};
    bool img = xs->nd == 3;
    dnnl_dims_t wd = {l->out, xs->d[0], img ? xs->d[1] : 0, img ? xs->d[2] : 0};
    dnnl_memory_desc_init_by_tag(&wmd, img ? 4 : 2, wd, dnnl_f32, dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&uw, img ? 4 : 2, wd, dnnl_f32, img ? dnnl_oihw : dnnl_ab);
    dnnl_memory_desc_init_by_tag(&bmd, 1, bd, dnnl_f32, dnnl_a);
    dnnl_memory_desc_init_by_tag(&dmd, 2, dd, dnnl_f32, dnnl_format_tag_any);
    if ((rc = dn_chk(dnnl_inner_product_forward_desc_init(&id, dnnl_forward_inference,
                      &d->tmd[t0 + 1], &wmd, l->b ? &bmd : NULL, &dmd), l, "descriptor")) ||
        (rc = dn_chk(dnnl_primitive_desc_create(&pd, &id, d->attr, d->eng, NULL), l, "primitive")))
        return rc;
    return dn_weighted_step(d, i, l, pd, last, &uw, &bmd);
}

static int build_linear(struct dn *d, const struct step_in *in)
{
    const struct cal_layer *l = in->l;
    const struct cal_shape *xs = in->xs;
    int64_t N = in->N;
    int i = in->i, t0 = in->t0, last = in->last, rc = 0;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_matmul_desc_t mdsc;
    dnnl_memory_desc_t wmd, bmd, dmd, uw;
    dnnl_dims_t wd = {xs->d[1], l->out}, bd = {1, l->out}, dd = {N * xs->d[0], l->out};
    dnnl_memory_desc_init_by_tag(&wmd, 2, wd, dnnl_f32, dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&uw, 2, wd, dnnl_f32, dnnl_ba); /* canonical [out][D] */
    dnnl_memory_desc_init_by_tag(&bmd, 2, bd, dnnl_f32, dnnl_ab);
    dnnl_memory_desc_init_by_tag(&dmd, 2, dd, dnnl_f32, dnnl_ab);
    if ((rc = dn_chk(dnnl_matmul_desc_init(&mdsc, &d->tmd[t0 + 1], &wmd, l->b ? &bmd : NULL, &dmd),
                  l, "descriptor")) ||
        (rc = dn_chk(dnnl_primitive_desc_create(&pd, &mdsc, d->attr, d->eng, NULL), l, "primitive")))
        return rc;
    return dn_weighted_step(d, i, l, pd, last, &uw, &bmd);
}

static int build_bmm(struct dn *d, const struct step_in *in)
{
    const struct cal_net *net = d->net;
    const struct cal_layer *l = in->l;
    int64_t N = in->N;
    int i = in->i, t0 = in->t0, last = in->last, rc = 0;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_exec_arg_t a[MAX_ARGS];
    dnnl_memory_desc_t md, md2, md3;
    const struct cal_shape *bs = cal_net_tensor_shape(net, l->in[1]);
    int64_t S = bs->d[0], D = bs->d[1], H = l->heads, dh = D / H;
    dnnl_matmul_desc_t mdsc;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_memory_t am, bm;
    if (l->transpose_b) {
        dn_head_view(&md, N, H, S, dh, false);
        dn_head_view(&md2, N, H, S, dh, true);
        dnnl_dims_t od = {N, H, S, S};
        dnnl_memory_desc_init_by_tag(&md3, 4, od, dnnl_f32, dnnl_abcd);
    } else {
        dnnl_dims_t pdims = {N, H, S, S};
        dnnl_memory_desc_init_by_tag(&md, 4, pdims, dnnl_f32, dnnl_abcd);
        dn_head_view(&md2, N, H, S, dh, false);
        dn_head_view(&md3, N, H, S, dh, false);
    }
    /* views of the inputs' buffers in these layouts (same bytes, another descriptor) */
    if ((rc = dn_arena_mem(d, &md, d->tbuf[t0 + 1], &am)) ||
        (rc = dn_arena_mem(d, &md2, d->tbuf[l->in[1] + 1], &bm)))
        return rc;
    if (l->scale != 1) {
        float sc = (float)l->scale;
        if (dnnl_primitive_attr_clone(&attr, d->attr) != dnnl_success ||
            dnnl_primitive_attr_set_output_scales(attr, 1, 0, &sc) != dnnl_success)
            return sim_err_set(SIM_EINTERNAL, "onednn: cannot set the scale of %s", l->name);
    }
    rc = dn_chk(dnnl_matmul_desc_init(&mdsc, &md, &md2, NULL, &md3), l, "descriptor");
    if (!rc)
        rc = dn_chk(dnnl_primitive_desc_create(&pd, &mdsc, attr ? attr : d->attr, d->eng, NULL),
                 l, "primitive");
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    if (rc)
        return rc;
    /* the output: a 4-D scores tensor, or the context as a token tensor {N*S, D} */
    int b = dn_new_buf(d, dnnl_memory_desc_get_size(&md3), i, last);
    if (b < 0) {
        dnnl_primitive_desc_destroy(pd);
        return b;
    }
    dnnl_memory_t om;
    if (l->transpose_b) {
        d->tmd[i + 1] = md3;
    } else {
        dnnl_dims_t td = {N * S, D};
        dnnl_memory_desc_init_by_tag(&d->tmd[i + 1], 2, td, dnnl_f32, dnnl_ab);
    }
    d->tbuf[i + 1] = b;
    if ((rc = dn_arena_mem(d, &d->tmd[i + 1], b, &d->tmem[i + 1])) ||
        (rc = dn_arena_mem(d, &md3, b, &om))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    a[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, am};
    a[1] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, bm};
    a[2] = (dnnl_exec_arg_t){DNNL_ARG_DST, om};
    rc = dn_add_step(d, pd, i, 3, a);
    dnnl_primitive_desc_destroy(pd);
    return rc;
}

static int build_softmax(struct dn *d, const struct step_in *in)
{
    const struct cal_net *net = d->net;
    const struct cal_layer *l = in->l;
    const struct cal_shape *xs = in->xs;
    int t0 = in->t0, rc = 0;
    dnnl_softmax_desc_t sdsc;
    const dnnl_memory_desc_t *x = &d->tmd[t0 + 1];
    int axis = xs->nd == 3 && net->layers[t0].op != CAL_BMM ? 1 : x->ndims - 1;
    if ((rc = dn_chk(dnnl_softmax_forward_desc_init(&sdsc, dnnl_forward_inference, x, axis), l,
                  "descriptor")))
        return rc;
    return src_step(d, in, &sdsc);
}

static int build_layernorm(struct dn *d, const struct step_in *in)
{
    const struct cal_layer *l = in->l;
    const struct cal_shape *xs = in->xs;
    int i = in->i, t0 = in->t0, last = in->last, rc = 0;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_exec_arg_t a[MAX_ARGS];
    dnnl_memory_desc_t md;
    dnnl_layer_normalization_desc_t ld;
    dnnl_dims_t cd = {xs->d[xs->nd - 1]};
    dnnl_memory_t m_sc, m_sh;
    if ((rc = dn_chk(dnnl_layer_normalization_forward_desc_init(&ld, dnnl_forward_inference,
                      &d->tmd[t0 + 1], NULL, (float)l->eps, dnnl_use_scale | dnnl_use_shift),
                  l, "descriptor")) ||
        (rc = dn_chk(dnnl_primitive_desc_create(&pd, &ld, d->attr, d->eng, NULL), l, "primitive")))
        return rc;
    dnnl_memory_desc_init_by_tag(&md, 1, cd, dnnl_f32, dnnl_a);
    if ((rc = dn_load_weights(d, l, &md, l->w, &md, &m_sc)) ||
        (rc = dn_load_weights(d, l, &md, l->b, &md, &m_sh))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    a[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, d->tmem[t0 + 1]};
    a[1] = (dnnl_exec_arg_t){DNNL_ARG_SCALE, m_sc};
    a[2] = (dnnl_exec_arg_t){DNNL_ARG_SHIFT, m_sh};
    return dn_finish(d, i, l, pd, last, 4, a, 3);
}

static int build_embed_step(struct dn *d, const struct step_in *in)
{
    const struct cal_layer *l = in->l;
    int i = in->i, last = in->last, rc = 0, nd;
    dnnl_exec_arg_t a[MAX_ARGS];
    dnnl_memory_desc_t md;
    dnnl_dims_t dims;
    dn_tensor_dims(d, &l->shape, &nd, dims);
    dn_plain_md(&md, nd, dims, dnnl_ab);
    if ((rc = dn_set_output(d, i, &md, last)))
        return rc;
    d->weights_bytes += (size_t)l->nw * sizeof(float);
    return dn_add_step(d, NULL, i, 0, a);
}

static int build_token(struct dn *d, const struct step_in *in)
{
    const struct cal_layer *l = in->l;
    const struct cal_shape *xs = in->xs;
    int64_t N = in->N;
    int i = in->i, t0 = in->t0, last = in->last, rc = 0;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_exec_arg_t a[MAX_ARGS];
    dnnl_memory_t src = NULL, mem;
    dnnl_memory_desc_t md, md2, md3;
    dnnl_dims_t dims2;
    int64_t S = xs->d[0], D = xs->d[1];
    dnnl_dims_t v3 = {N, S, D}, sub = {N, 1, D}, off = {0, l->index, 0};
    dnnl_memory_desc_init_by_tag(&md, 3, v3, dnnl_f32, dnnl_abc);
    dnnl_memory_desc_init_submemory(&md2, &md, sub, off);
    dnnl_memory_desc_init_by_tag(&md3, 3, sub, dnnl_f32, dnnl_abc);
    dims2[0] = N, dims2[1] = D;
    dnnl_memory_desc_t out;
    dn_plain_md(&out, 2, dims2, dnnl_ab);
    if ((rc = dn_set_output(d, i, &out, last)) ||
        (rc = dn_arena_mem(d, &md2, d->tbuf[t0 + 1], &src)) ||
        (rc = dn_arena_mem(d, &md3, d->tbuf[i + 1], &mem)) ||
        (rc = dn_chk(dnnl_reorder_primitive_desc_create(&pd, &md2, d->eng, &md3, d->eng, d->attr),
                  l, "reorder")))
        return rc;
    a[0] = (dnnl_exec_arg_t){DNNL_ARG_FROM, src};
    a[1] = (dnnl_exec_arg_t){DNNL_ARG_TO, mem};
    rc = dn_add_step(d, pd, i, 2, a);
    dnnl_primitive_desc_destroy(pd);
    return rc;
}

/* Each op's builder: its oneDNN primitive (descriptor, weights, arguments) as step i. */
static int (*const BUILD[CAL_NOPS])(struct dn *d, const struct step_in *in) = {
    [CAL_CONV] = build_conv,
    [CAL_BN] = build_bn,
    [CAL_RELU] = build_eltwise,
    [CAL_RELU6] = build_eltwise,
    [CAL_SIGMOID] = build_eltwise,
    [CAL_TANH] = build_eltwise,
    [CAL_GELU] = build_eltwise,
    [CAL_MAXPOOL] = build_pool,
    [CAL_AVGPOOL] = build_pool,
    [CAL_GAP] = build_pool,
    [CAL_ADD] = build_add,
    [CAL_CONCAT] = build_concat,
    [CAL_FC] = build_fc,
    [CAL_LINEAR] = build_linear,
    [CAL_BMM] = build_bmm,
    [CAL_SOFTMAX] = build_softmax,
    [CAL_LAYERNORM] = build_layernorm,
    [CAL_EMBED] = build_embed_step,
    [CAL_TOKEN] = build_token,
};


int dn_build_layer(struct dn *d, int i, int last)
{
    const struct cal_layer *l = &d->net->layers[i];
    if ((int)l->op < 0 || (int)l->op >= CAL_NOPS || !BUILD[l->op])
        return sim_err_set(SIM_EINTERNAL, "onednn: layer %s: op %s has no oneDNN mapping", l->name,
                           cal_op_name(l->op));
    struct step_in in = {l, cal_net_tensor_shape(d->net, l->in[0]), d->batch, i, l->in[0], last};
    return BUILD[l->op](d, &in);
}
