/* test_fuse — the GPU backend's transforms, checked on a CPU against the reference
 * (cal_fuse.h, cal_epi.h): which layers form a fused group, the liveness of an arena under the
 * plan, batch norm as an affine map, the epilogue in both layouts, and the channels-last
 * permutations of convolution and fc weights and of a concatenation. The cuDNN backend
 * executes exactly these rules on the GPU; here a CPU emulation of the fused pass (reference
 * layers for the heads, cal_epi_apply for the rest, one arena laid out as the backend lays
 * it) must give the reference's outputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_fuse.h"
#include "cal_net.h"
#include "cal_ref.h"
#include "sim_err.h"
#include "test.h"
#include "test_cal.h"

/* A check whose failure makes the rest of the case meaningless. */
#define REQUIRE(cond, ...)                                                            \
    do {                                                                              \
        if (!(cond)) {                                                                \
            CHECK(cond, __VA_ARGS__);                                                 \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

static int find(const struct cal_net *net, const char *name)
{
    for (int i = 0; i < net->n; i++)
        if (!strcmp(net->layers[i].name, name))
            return i;
    return -1;
}

/* The group whose last layer is `last`, by names: head, add, act (NULL: none). */
static void expect_group(const struct cal_net *net, const struct cal_plan *p, const char *last,
                         const char *head, const char *add, const char *act)
{
    int l = find(net, last);
    REQUIRE(l >= 0 && p->group[l] >= 0, "%s: want a group ending there", last);
    const struct cal_group *g = &p->groups[p->group[l]];
    CHECK(g->head == find(net, head), "%s: head %s, want %s", last, net->layers[g->head].name, head);
    CHECK(add ? g->add == find(net, add) : g->add < 0, "%s: add %d, want %s", last, g->add,
          add ? add : "none");
    CHECK(act ? g->act == find(net, act) : g->act < 0, "%s: act %d, want %s", last, g->act,
          act ? act : "none");
    CHECK(p->into[g->head] == l && (g->add < 0 || p->into[g->add] == l) &&
              (g->act < 0 || p->into[g->act] == l) && p->into[l] == l,
          "%s: members not mapped into it", last);
}

/* tiny_cnn worked by hand. Unfolded: c1 (no bias) stays alone, c1_bn + c1_relu is an affine
 * group, c2 + bias + relu6 a group, the add `res` (two readers) alone, c3a + bias a group,
 * dw_bn + tanh, fc1 + bias + gelu, fc2 + bias. Folded: c1 and dw absorb their bn and head
 * groups with their activations. ResNet-50 folded: 53 conv groups; every add and relu
 * absorbed; the 4 projection shortcuts are groups of their own (the block's add goes to its
 * third conv, which comes first); the fc with its bias; 57 steps (122 layers, 65 absorbed). */
static void fusion_plan_by_hand(void)
{
    struct cal_net *t = load("tiny_cnn");
    struct cal_plan p;
    REQUIRE_OK(cal_plan_build(t, true, &p));
    CHECK(p.ngroups == 6, "tiny_cnn: %d groups, want 6", p.ngroups);
    expect_group(t, &p, "c1_relu", "c1_bn", NULL, "c1_relu");
    expect_group(t, &p, "c2_relu6", "c2", NULL, "c2_relu6");
    expect_group(t, &p, "c3a", "c3a", NULL, NULL);
    expect_group(t, &p, "tanh", "dw_bn", NULL, "tanh");
    expect_group(t, &p, "fc1_gelu", "fc1", NULL, "fc1_gelu");
    expect_group(t, &p, "fc2", "fc2", NULL, NULL);
    CHECK(p.into[find(t, "c1")] == find(t, "c1") && p.group[find(t, "res")] < 0 &&
              p.into[find(t, "res")] == find(t, "res"),
          "c1 (no bias) and res (two readers) run alone");
    /* absorbed: c1_bn, c2, dw_bn and fc1 (c3a and fc2 are groups of one, for their bias) */
    CHECK(cal_plan_steps(&p) == t->n - 4, "tiny_cnn: %d steps of %d layers", cal_plan_steps(&p), t->n);
    cal_plan_free(&p);
    REQUIRE_OK(cal_plan_build(t, false, &p));
    CHECK(p.ngroups == 0 && cal_plan_steps(&p) == t->n, "unfused: %d groups", p.ngroups);
    cal_plan_free(&p);
    REQUIRE_OK(cal_net_init_weights(t, 1));
    CHECK(cal_net_fold_bn(t) == 2, "tiny_cnn folds two bn");
    REQUIRE_OK(cal_plan_build(t, true, &p));
    expect_group(t, &p, "c1_relu", "c1", NULL, "c1_relu");
    expect_group(t, &p, "tanh", "dw", NULL, "tanh");
    CHECK(t->layers[find(t, "c1")].orig == find(t, "c1") + 1, "c1 carries c1_bn's output: orig %d",
          t->layers[find(t, "c1")].orig);
    cal_plan_free(&p);
    cal_net_destroy(t);

    struct cal_net *r = load("resnet50");
    REQUIRE_OK(cal_net_init_weights(r, 1));
    REQUIRE(cal_net_fold_bn(r) == 53, "resnet50 folds 53 bn");
    REQUIRE_OK(cal_plan_build(r, true, &p));
    int adds = 0, relus = 0, downs = 0;
    for (int i = 0; i < r->n; i++) {
        const struct cal_layer *l = &r->layers[i];
        if (l->op == CAL_ADD)
            adds += p.into[i] != i;
        if (l->op == CAL_RELU && p.group[i] >= 0)
            relus += p.groups[p.group[i]].act == i;
        if (strstr(l->name, "_down") && p.group[i] >= 0 && p.groups[p.group[i]].head == i)
            downs++;
    }
    CHECK(p.ngroups == 53 + 1 && adds == 16 && relus == 49 && downs == 4,
          "resnet50: %d groups (53 conv, the fc), %d adds and %d relus absorbed, %d projections "
          "alone", p.ngroups,
          adds, relus, downs);
    expect_group(r, &p, "l1_0_relu", "l1_0_c3", "l1_0_add", "l1_0_relu");
    CHECK(p.groups[p.group[find(r, "l1_0_relu")]].z == find(r, "l1_0_down"),
          "l1_0's residual operand is the projection");
    CHECK(cal_plan_steps(&p) == 122 - 65, "resnet50: %d steps", cal_plan_steps(&p));
    cal_plan_free(&p);
    cal_net_destroy(r);
}

/* Runs a network as the cuDNN backend runs it, on the CPU: the plan's steps in order, a group
 * at its last layer (its head by the reference without the bias, then the epilogue with bias,
 * bn affine, residual and activation, in NCHW or channels-last), every tensor in one arena laid
 * out by cal_plan_last_use and cal_arena_plan (absorbed tensors have no space). Each
 * materialised output is compared with the reference the moment it is written; returns the
 * worst relative error. */
static double emulate(const struct cal_net *net, int batch, bool nhwc, float **ref)
{
    int n = net->n;
    struct cal_plan p;
    REQUIRE_OK(cal_plan_build(net, true, &p));
    int *last = malloc((size_t)(n + 1) * sizeof *last), *first = malloc((size_t)(n + 1) * sizeof *first);
    size_t *size = malloc((size_t)(n + 1) * sizeof *size), *off = malloc((size_t)(n + 1) * sizeof *off), total;
    cal_plan_last_use(net, &p, last);
    for (int t = 0; t <= n; t++) {
        bool absorbed = t > 0 && p.into[t - 1] != t - 1;
        size[t] = absorbed ? 0 : (size_t)(batch * cal_shape_count(cal_net_tensor_shape(net, t - 1))) * sizeof(float);
        first[t] = t == 0 ? 0 : t - 1;
    }
    REQUIRE_OK(cal_arena_plan(n + 1, size, first, last, 64, off, &total));
    char *arena = calloc(total ? total : 1, 1);
    void *in = cal_ref_input(net, batch, 5);
    memcpy(arena + off[0], in, size[0]);
    /* a shallow copy whose heads have no bias: the epilogue adds it */
    struct cal_net nb = *net;
    nb.layers = malloc((size_t)n * sizeof *nb.layers);
    memcpy(nb.layers, net->layers, (size_t)n * sizeof *nb.layers);
    double worst = 0;
    for (int i = 0; i < n; i++) {
        if (p.into[i] != i)
            continue;
        const struct cal_group *g = p.group[i] >= 0 ? &p.groups[p.group[i]] : NULL;
        int h = g ? g->head : i;
        const struct cal_layer *l = &net->layers[h];
        const void *ins[CAL_MAX_IN];
        for (int j = 0; j < l->nin; j++)
            ins[j] = arena + off[l->in[j] + 1];
        float *y = (float *)(arena + off[i + 1]);
        int64_t cnt = batch * cal_shape_count(&l->shape);
        if (!g) {
            cal_ref_layer(net, i, batch, ins, y);
        } else {
            const struct cal_shape *s = &l->shape;
            int c = s->nd == 3 ? (int)s->d[0] : (int)s->d[s->nd - 1];
            long hw = s->nd == 3 ? (long)(s->d[1] * s->d[2]) : 1;
            int lay = s->nd == 3 ? nhwc : 1;
            float *x = malloc((size_t)cnt * sizeof *x), *z = NULL, *scale = NULL, *bias = NULL;
            const float *zsrc = NULL;
            if (l->op == CAL_BN) {
                memcpy(x, ins[0], (size_t)cnt * sizeof *x);
                scale = malloc((size_t)l->nb * sizeof *scale), bias = malloc((size_t)l->nb * sizeof *bias);
                cal_bn_affine(l, scale, bias);
            } else if (l->op == CAL_ADD) {
                memcpy(x, ins[0], (size_t)cnt * sizeof *x);
                zsrc = ins[1];
            } else {
                nb.layers[h].b = NULL, nb.layers[h].bias = false;
                cal_ref_layer(&nb, h, batch, ins, x);
                bias = l->b ? malloc((size_t)l->nb * sizeof *bias) : NULL;
                if (bias)
                    memcpy(bias, l->b, (size_t)l->nb * sizeof *bias);
                if (g->add >= 0)
                    zsrc = (const float *)(arena + off[g->z + 1]);
            }
            if (zsrc) {
                z = malloc((size_t)cnt * sizeof *z);
                memcpy(z, zsrc, (size_t)cnt * sizeof *z);
            }
            if (lay && s->nd == 3) { /* to channels-last, the epilogue there, and back */
                float *t = malloc((size_t)cnt * sizeof *t);
                cal_nhwc_permute(x, t, batch, c, (int)hw, true), memcpy(x, t, (size_t)cnt * sizeof *x);
                if (z)
                    cal_nhwc_permute(z, t, batch, c, (int)hw, true), memcpy(z, t, (size_t)cnt * sizeof *z);
                free(t);
            }
            for (long e = 0; e < cnt; e++)
                x[e] = cal_epi_apply(x[e], cal_epi_channel(e, c, hw, lay), scale, bias, z ? z[e] : 0.0f,
                                     g->kind);
            if (lay && s->nd == 3)
                cal_nhwc_permute(x, y, batch, c, (int)hw, false);
            else
                memcpy(y, x, (size_t)cnt * sizeof *y);
            free(x), free(z), free(scale), free(bias);
        }
        double e = cal_ref_rel_err(y, ref[i], cnt);
        if (e > worst)
            worst = e;
    }
    free(nb.layers), free(arena), free(in), free(last), free(first), free(size), free(off);
    cal_plan_free(&p);
    return worst;
}

/* A bottleneck block whose projection shortcut comes after the block's last conv (so the
 * group holding that conv's residual add runs later than its head), then a pre-activation
 * bn + relu into a concatenation (DenseNet's pattern) and an fc. */
static const char block_json[] =
    "{\"format\": \"servesim-net/1\", \"name\": \"block\", \"input\": {\"shape\": [4, 8, 8]},"
    " \"layers\": ["
    "{\"name\": \"c1\", \"op\": \"conv\", \"out\": 8, \"k\": 1}, {\"name\": \"c1_bn\", \"op\": \"bn\"},"
    "{\"name\": \"c1_relu\", \"op\": \"relu\"},"
    "{\"name\": \"c2\", \"op\": \"conv\", \"out\": 8, \"k\": 3, \"p\": 1}, {\"name\": \"c2_bn\", \"op\": \"bn\"},"
    "{\"name\": \"c2_relu\", \"op\": \"relu\"},"
    "{\"name\": \"c3\", \"op\": \"conv\", \"out\": 16, \"k\": 1}, {\"name\": \"c3_bn\", \"op\": \"bn\"},"
    "{\"name\": \"down\", \"op\": \"conv\", \"in\": [\"input\"], \"out\": 16, \"k\": 1},"
    "{\"name\": \"down_bn\", \"op\": \"bn\"},"
    "{\"name\": \"add\", \"op\": \"add\", \"in\": [\"c3_bn\", \"down_bn\"]}, {\"name\": \"relu\", \"op\": \"relu\"},"
    "{\"name\": \"pre_bn\", \"op\": \"bn\"}, {\"name\": \"pre_relu\", \"op\": \"relu\"},"
    "{\"name\": \"grow\", \"op\": \"conv\", \"out\": 8, \"k\": 3, \"p\": 1},"
    "{\"name\": \"cat\", \"op\": \"concat\", \"in\": [\"relu\", \"grow\"]},"
    "{\"name\": \"gap\", \"op\": \"gap\"}, {\"name\": \"fc\", \"op\": \"fc\", \"out\": 3}]}";

static void emulated_fused_pass_matches_reference(void)
{
    char block[512];
    snprintf(block, sizeof block, "%s/block.json", test_scratch("servesim_fuse"));
    FILE *f = fopen(block, "w");
    REQUIRE(f && fputs(block_json, f) >= 0 && fclose(f) == 0, "cannot write %s", block);
    const char *const nets[] = {block, "tiny_cnn", "tiny_bert", "mobilenetv2"};
    for (size_t k = 0; k < sizeof nets / sizeof nets[0]; k++)
        for (int fold = 0; fold < 2; fold++) {
            struct cal_net *net = load(nets[k]);
            REQUIRE_OK(cal_net_init_weights(net, 3));
            if (fold)
                cal_net_fold_bn(net);
            if (k == 0 && fold) { /* the projection's group runs before the block's: as planned */
                struct cal_plan p;
                REQUIRE_OK(cal_plan_build(net, true, &p));
                int c3 = find(net, "c3"), down = find(net, "down");
                CHECK(p.into[c3] == find(net, "relu") && p.group[p.into[down]] >= 0 &&
                          p.into[down] == down,
                      "block: c3 into %d, down into %d", p.into[c3], p.into[down]);
                cal_plan_free(&p);
            }
            void *in = cal_ref_input(net, 2, 5);
            float **ref;
            REQUIRE_OK(cal_ref_forward(net, 2, in, &ref));
            for (int nhwc = 0; nhwc < 2; nhwc++) {
                double e = emulate(net, 2, nhwc, ref);
                CHECK(e < 1e-5, "%s (fold %d, nhwc %d): worst %.2e", net->name, fold, nhwc, e);
            }
            for (int i = 0; i < net->n; i++)
                free(ref[i]);
            free(ref), free(in);
            cal_net_destroy(net);
        }
}

/* Batch norm as y = x * scale + shift matches the reference's bn on a hand-worked channel:
 * gamma 2, beta 1, mean 3, var 4 - eps gives scale 1 and shift -2. */
static void bn_affine_by_hand(void)
{
    float w = 2, b = 1, mean = 3, var = 4 - 1e-3f, scale, shift;
    struct cal_layer bn = {.op = CAL_BN, .w = &w, .b = &b, .mean = &mean, .var = &var, .nb = 1,
                           .eps = 1e-3};
    cal_bn_affine(&bn, &scale, &shift);
    CHECK(fabsf(scale - 1) < 1e-6f && fabsf(shift + 2) < 1e-6f, "scale %g shift %g", scale, shift);
    CHECK(cal_epi_apply(5, 0, &scale, &shift, 0, CAL_ACT_RELU) == 3.0f &&
              cal_epi_apply(1, 0, &scale, &shift, 0, CAL_ACT_RELU) == 0.0f &&
              cal_epi_apply(9, 0, &scale, &shift, 0, CAL_ACT_RELU6) == 6.0f,
          "affine + activation");
    CHECK(cal_epi_channel(13, 4, 6, 1) == 1 && cal_epi_channel(13, 4, 6, 0) == 2,
          "element 13 of 4 channels x 6 pixels: channel 1 (NHWC), 2 (NCHW)");
}

/* A direct channels-last convolution with the permuted weights gives the reference's output
 * (groups, dilation, strides, asymmetric kernels: tiny_cnn's convolutions). */
static void nhwc_conv_weights_match_reference(void)
{
    struct cal_net *net = load("tiny_cnn");
    REQUIRE_OK(cal_net_init_weights(net, 7));
    void *in = cal_ref_input(net, 2, 3);
    float **ref;
    REQUIRE_OK(cal_ref_forward(net, 2, in, &ref));
    int convs = 0;
    for (int i = 0; i < net->n; i++) {
        const struct cal_layer *l = &net->layers[i];
        if (l->op != CAL_CONV)
            continue;
        const struct cal_shape *xs = cal_net_tensor_shape(net, l->in[0]);
        int C = (int)xs->d[0], H = (int)xs->d[1], W = (int)xs->d[2], K = l->out;
        int OH = (int)l->shape.d[1], OW = (int)l->shape.d[2], cg = C / l->groups, kg = K / l->groups;
        const float *x = l->in[0] < 0 ? in : ref[l->in[0]];
        float *xn = malloc((size_t)(2 * C * H * W) * sizeof *xn), *wn = malloc((size_t)l->nw * sizeof *wn);
        float *yn = calloc((size_t)(2 * K * OH * OW), sizeof *yn), *y = malloc((size_t)(2 * K * OH * OW) * sizeof *y);
        cal_nhwc_permute(x, xn, 2, C, H * W, true);
        cal_nhwc_conv_weights(l->w, wn, K, cg, l->kh, l->kw);
        for (int q = 0; q < 2; q++)
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++)
                    for (int k = 0; k < K; k++) {
                        double acc = l->b ? l->b[k] : 0;
                        int g = k / kg;
                        for (int r = 0; r < l->kh; r++)
                            for (int s = 0; s < l->kw; s++) {
                                int ih = oh * l->sh - l->ph + r * l->dh, iw = ow * l->sw - l->pw + s * l->dw;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                                    continue;
                                for (int c = 0; c < cg; c++)
                                    acc += (double)xn[((q * H + ih) * W + iw) * C + g * cg + c] *
                                           wn[((k * l->kh + r) * l->kw + s) * cg + c];
                            }
                        yn[((q * OH + oh) * OW + ow) * K + k] = (float)acc;
                    }
        cal_nhwc_permute(yn, y, 2, K, OH * OW, false);
        double e = cal_ref_rel_err(y, ref[i], 2 * K * OH * OW);
        CHECK(e < 1e-5, "conv %s in NHWC: %.2e", l->name, e);
        convs++;
        free(xn), free(wn), free(yn), free(y);
    }
    CHECK(convs == 5, "tiny_cnn has 5 convolutions, %d checked", convs);
    /* the concatenation: channels-last inputs copied by cal_epi_concat_src give the permuted
     * reference concat */
    int cat = find(net, "cat");
    const struct cal_layer *l = &net->layers[cat];
    int ct = (int)l->shape.d[0], hw = (int)(l->shape.d[1] * l->shape.d[2]), co = 0;
    float *got = malloc((size_t)(2 * ct * hw) * sizeof *got), *back = malloc((size_t)(2 * ct * hw) * sizeof *back);
    for (int j = 0; j < l->nin; j++) {
        int cj = (int)cal_net_tensor_shape(net, l->in[j])->d[0];
        float *xn = malloc((size_t)(2 * cj * hw) * sizeof *xn);
        cal_nhwc_permute(ref[l->in[j]], xn, 2, cj, hw, true);
        for (long p = 0; p < 2L * hw; p++)
            for (int k = co; k < co + cj; k++)
                got[p * ct + k] = xn[cal_epi_concat_src(p, k, co, cj)];
        co += cj;
        free(xn);
    }
    cal_nhwc_permute(got, back, 2, ct, hw, false);
    CHECK(cal_ref_rel_err(back, ref[cat], 2 * ct * hw) == 0, "channels-last concat");
    free(got), free(back);
    for (int i = 0; i < net->n; i++)
        free(ref[i]);
    free(ref), free(in);
    cal_net_destroy(net);
}

/* The fc after a flatten: its weights permuted to H,W,C order applied to the channels-last
 * activation give the reference's output (a [4,3,3] activation into 5 features). */
static void nhwc_fc_flatten_matches_reference(void)
{
    char file[512];
    snprintf(file, sizeof file, "%s/flat.json", test_scratch("servesim_fuse"));
    FILE *f = fopen(file, "w");
    REQUIRE(f != NULL, "cannot write %s", file);
    fputs("{\"format\": \"servesim-net/1\", \"name\": \"flat\", \"input\": {\"shape\": [3, 3, 3]},"
          " \"layers\": [{\"name\": \"c\", \"op\": \"conv\", \"out\": 4, \"k\": 3, \"p\": 1},"
          "{\"name\": \"fc\", \"op\": \"fc\", \"out\": 5}]}", f);
    fclose(f);
    struct cal_net *net = NULL;
    REQUIRE_OK(cal_net_load(file, &net));
    REQUIRE_OK(cal_net_init_weights(net, 2));
    void *in = cal_ref_input(net, 2, 9);
    float **ref;
    REQUIRE_OK(cal_ref_forward(net, 2, in, &ref));
    const struct cal_layer *fc = &net->layers[1];
    float xn[2 * 36], wn[5 * 36], y[2 * 5];
    cal_nhwc_permute(ref[0], xn, 2, 4, 9, true);
    cal_nhwc_fc_weights(fc->w, wn, 5, 4, 9);
    for (int q = 0; q < 2; q++)
        for (int o = 0; o < 5; o++) {
            double acc = fc->b ? fc->b[o] : 0;
            for (int k = 0; k < 36; k++)
                acc += (double)wn[o * 36 + k] * xn[q * 36 + k];
            y[q * 5 + o] = (float)acc;
        }
    CHECK(cal_ref_rel_err(y, ref[1], 10) < 1e-6, "fc after an NHWC flatten: %.2e",
          cal_ref_rel_err(y, ref[1], 10));
    /* and without the permutation the answer is wrong (the test can fail) */
    for (int q = 0; q < 2; q++)
        for (int o = 0; o < 5; o++) {
            double acc = fc->b ? fc->b[o] : 0;
            for (int k = 0; k < 36; k++)
                acc += (double)fc->w[o * 36 + k] * xn[q * 36 + k];
            y[q * 5 + o] = (float)acc;
        }
    CHECK(cal_ref_rel_err(y, ref[1], 10) > 1e-2, "unpermuted weights should not match");
    for (int i = 0; i < net->n; i++)
        free(ref[i]);
    free(ref), free(in);
    cal_net_destroy(net);
}

TEST_MAIN_SCRATCH({"fusion_plan_by_hand", fusion_plan_by_hand},
                  {"emulated_fused_pass_matches_reference", emulated_fused_pass_matches_reference},
                  {"bn_affine_by_hand", bn_affine_by_hand},
                  {"nhwc_conv_weights_match_reference", nhwc_conv_weights_match_reference},
                  {"nhwc_fc_flatten_matches_reference", nhwc_fc_flatten_matches_reference})
