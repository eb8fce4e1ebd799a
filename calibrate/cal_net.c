/* cal_net — loading, shape inference, parameter/MAC counts, weights, bn folding and the arena
 * planner of network definitions. See cal_net.h for the format and layouts. */
#include "cal_net.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_data.h"
#include "sim_err.h"
#include "sim_json.h"

static const char *const op_names[] = {
#define CAL_OP_NAME(e, s) s,
    CAL_OPS(CAL_OP_NAME)
#undef CAL_OP_NAME
    NULL};

const char *cal_op_name(enum cal_op op)
{
    return op < CAL_NOPS ? op_names[op] : "?";
}

bool cal_op_is_eltwise(enum cal_op op)
{
    return op == CAL_RELU || op == CAL_RELU6 || op == CAL_SIGMOID || op == CAL_TANH ||
           op == CAL_GELU;
}

int64_t cal_shape_count(const struct cal_shape *s)
{
    int64_t c = 1;
    for (int i = 0; i < s->nd; i++)
        c *= s->d[i];
    return c;
}

static void shape_str(const struct cal_shape *s, char *buf, size_t size)
{
    switch (s->nd) {
    case 1: snprintf(buf, size, "[%lld]", (long long)s->d[0]); break;
    case 2: snprintf(buf, size, "[%lld,%lld]", (long long)s->d[0], (long long)s->d[1]); break;
    default:
        snprintf(buf, size, "[%lld,%lld,%lld]", (long long)s->d[0], (long long)s->d[1],
                 (long long)s->d[2]);
    }
}

const struct cal_shape *cal_net_tensor_shape(const struct cal_net *net, int t)
{
    return t == CAL_INPUT ? &net->input : &net->layers[t].shape;
}

void cal_net_resolve(const char *ref, char *out, size_t size)
{
    size_t n = strlen(ref);
    if (strchr(ref, '/') || (n > 5 && strcmp(ref + n - 5, ".json") == 0)) {
        snprintf(out, size, "%s", ref);
        return;
    }
    const char *dir = getenv("SERVESIM_NET_DIR");
    char data[4096];
    if (!dir || !dir[0])
        dir = sim_data_dir("networks", SERVESIM_NET_DIR, data, sizeof data);
    snprintf(out, size, "%s/%s.json", dir, ref);
}

/* Per-op attribute keys (besides name, op, in). */
static const char *const *op_keys(enum cal_op op)
{
    static const char *const conv[] = {"name", "op", "in", "out", "k", "kh", "kw", "s", "p",
                                       "ph", "pw", "d", "g", "bias", NULL};
    static const char *const pool[] = {"name", "op", "in", "k", "s", "p", NULL};
    static const char *const norm[] = {"name", "op", "in", "eps", NULL};
    static const char *const dense[] = {"name", "op", "in", "out", "bias", NULL};
    static const char *const bmm[] = {"name", "op", "in", "heads", "transpose_b", "scale", NULL};
    static const char *const embed[] = {"name", "op", "in", "vocab", "positions", "types",
                                        "dim", NULL};
    static const char *const token[] = {"name", "op", "in", "index", NULL};
    static const char *const plain[] = {"name", "op", "in", NULL};
    switch (op) {
    case CAL_CONV: return conv;
    case CAL_MAXPOOL: case CAL_AVGPOOL: return pool;
    case CAL_BN: case CAL_LAYERNORM: return norm;
    case CAL_FC: case CAL_LINEAR: return dense;
    case CAL_BMM: return bmm;
    case CAL_EMBED: return embed;
    case CAL_TOKEN: return token;
    default: return plain;
    }
}

static int get_int(const cJSON *o, const char *path, const char *key, bool req, long min,
                   long max, long dflt, int *out)
{
    long v = dflt;
    int rc = sim_json_int(o, path, key, req, min, max, &v);
    *out = (int)v;
    return rc;
}

/* Reads the op-specific attributes of layer l from o. */
static int parse_attrs(const cJSON *o, const char *p, struct cal_layer *l)
{
    int rc = 0, k = 0, s = 0, pad = 0;
    l->scale = 1;
    l->dh = l->dw = l->groups = 1;
    switch (l->op) {
    case CAL_CONV:
        if ((rc = get_int(o, p, "out", true, 1, 1 << 20, 0, &l->out)) ||
            (rc = get_int(o, p, "k", false, 1, 64, 0, &k)) ||
            (rc = get_int(o, p, "kh", false, 1, 64, k, &l->kh)) ||
            (rc = get_int(o, p, "kw", false, 1, 64, k, &l->kw)) ||
            (rc = get_int(o, p, "s", false, 1, 64, 1, &s)) ||
            (rc = get_int(o, p, "p", false, 0, 64, 0, &pad)) ||
            (rc = get_int(o, p, "ph", false, 0, 64, pad, &l->ph)) ||
            (rc = get_int(o, p, "pw", false, 0, 64, pad, &l->pw)) ||
            (rc = get_int(o, p, "d", false, 1, 64, 1, &l->dh)) ||
            (rc = get_int(o, p, "g", false, 1, 1 << 20, 1, &l->groups)) ||
            (rc = sim_json_bool(o, p, "bias", false, &l->bias)))
            return rc;
        if (!l->kh || !l->kw)
            return sim_err_set(SIM_EINVAL, "%s: expected a kernel size k (or kh and kw), got none", p);
        l->dw = l->dh;
        l->sh = l->sw = s;
        return 0;
    case CAL_MAXPOOL: case CAL_AVGPOOL:
        if ((rc = get_int(o, p, "k", true, 1, 64, 0, &l->kh)) ||
            (rc = get_int(o, p, "s", false, 1, 64, l->kh, &l->sh)) ||
            (rc = get_int(o, p, "p", false, 0, 64, 0, &l->ph)))
            return rc;
        l->kw = l->kh, l->sw = l->sh, l->pw = l->ph;
        if (l->ph * 2 > l->kh)
            return sim_err_set(SIM_EINVAL, "%s.p: expected at most half the window (%d), got %d",
                               p, l->kh / 2, l->ph);
        return 0;
    case CAL_BN: case CAL_LAYERNORM:
        l->eps = l->op == CAL_BN ? 1e-5 : 1e-12;
        if ((rc = sim_json_num(o, p, "eps", false, SIM_J_POS, &l->eps)))
            return rc;
        return 0;
    case CAL_FC: case CAL_LINEAR:
        l->bias = true;
        if ((rc = get_int(o, p, "out", true, 1, 1 << 24, 0, &l->out)) ||
            (rc = sim_json_bool(o, p, "bias", false, &l->bias)))
            return rc;
        return 0;
    case CAL_BMM:
        if ((rc = get_int(o, p, "heads", true, 1, 4096, 0, &l->heads)) ||
            (rc = sim_json_bool(o, p, "transpose_b", false, &l->transpose_b)) ||
            (rc = sim_json_num(o, p, "scale", false, SIM_J_POS, &l->scale)))
            return rc;
        return 0;
    case CAL_EMBED:
        if ((rc = get_int(o, p, "vocab", true, 1, 1 << 24, 0, &l->vocab)) ||
            (rc = get_int(o, p, "positions", true, 1, 1 << 20, 0, &l->positions)) ||
            (rc = get_int(o, p, "types", false, 0, 1024, 0, &l->types)) ||
            (rc = get_int(o, p, "dim", true, 1, 1 << 20, 0, &l->dim)))
            return rc;
        return 0;
    case CAL_TOKEN:
        return get_int(o, p, "index", false, 0, 1 << 20, 0, &l->index);
    default:
        return 0;
    }
}

static int64_t out_dim(int64_t in, int k, int s, int pad, int dil)
{
    int64_t span = (int64_t)dil * (k - 1) + 1;
    return in + 2 * pad < span ? 0 : (in + 2 * pad - span) / s + 1;
}

static int bad_shape(const char *p, const char *want, const struct cal_shape *got)
{
    char g[96];
    shape_str(got, g, sizeof g);
    return sim_err_set(SIM_EINVAL, "%s: expected %s, got %s", p, want, g);
}

/* Infers l's output shape, parameters and MACs from its inputs. */
/* A convolution's output shape, parameters and multiply-adds. */
static int infer_conv(const char *p, struct cal_layer *l, const struct cal_shape *x,
                      struct cal_shape *y)
{
    if (x->nd != 3)
        return bad_shape(p, "a [C,H,W] input for conv", x);
    if (x->d[0] % l->groups || l->out % l->groups)
        return sim_err_set(SIM_EINVAL, "%s.g: expected a divisor of the input channels (%lld) "
                           "and of out (%d), got %d", p, (long long)x->d[0], l->out, l->groups);
    y->d[0] = l->out;
    y->d[1] = out_dim(x->d[1], l->kh, l->sh, l->ph, l->dh);
    y->d[2] = out_dim(x->d[2], l->kw, l->sw, l->pw, l->dw);
    int64_t per = (x->d[0] / l->groups) * l->kh * l->kw;
    l->params = l->out * per + (l->bias ? l->out : 0);
    l->macs = (double)cal_shape_count(y) * (double)per;
    if (cal_shape_count(y) <= 0)
        return bad_shape(p, "an output of positive size (kernel larger than its padded input?)", y);
    return 0;
}

/* A concatenation over channels: every input of in[0]'s height and width. */
static int infer_concat(const struct cal_net *net, const char *p, const struct cal_layer *l,
                        const struct cal_shape *x, struct cal_shape *y)
{
    if (x->nd != 3)
        return bad_shape(p, "[C,H,W] inputs for concat", x);
    for (int i = 1; i < l->nin; i++) {
        const struct cal_shape *b = cal_net_tensor_shape(net, l->in[i]);
        if (b->nd != 3 || b->d[1] != x->d[1] || b->d[2] != x->d[2]) {
            char want[128], ip[SIM_JPATH_MAX];
            snprintf(ip, sizeof ip, "%s.in[%d]", p, i);
            snprintf(want, sizeof want, "[C,%lld,%lld] (the height and width of in[0])",
                     (long long)x->d[1], (long long)x->d[2]);
            return bad_shape(ip, want, b);
        }
        y->d[0] += b->d[0];
    }
    return 0;
}

/* Attention's batched matmul per head: Q K^T (in[0] [S,D], transpose_b) or P V (in[0]
 * [H,S,S]), in[1] [S,D] with D a multiple of the heads. */
static int infer_bmm(const struct cal_net *net, const char *p, struct cal_layer *l,
                     const struct cal_shape *x, struct cal_shape *y)
{
    const struct cal_shape *b = cal_net_tensor_shape(net, l->in[1]);
    if (b->nd != 2 || b->d[1] % l->heads)
        return bad_shape(p, "in[1] of shape [S,D] with D a multiple of heads", b);
    int64_t s = b->d[0], d = b->d[1];
    if (x->nd == 2 && l->transpose_b && x->d[0] == s && x->d[1] == d) {
        y->nd = 3, y->d[0] = l->heads, y->d[1] = s, y->d[2] = s; /* Q K^T per head */
    } else if (x->nd == 3 && !l->transpose_b && x->d[0] == l->heads && x->d[1] == s &&
               x->d[2] == s) {
        y->nd = 2, y->d[0] = s, y->d[1] = d; /* P V per head */
    } else {
        char want[160];
        snprintf(want, sizeof want, "in[0] [%lld,%lld] with transpose_b, or [%d,%lld,%lld] "
                 "without", (long long)s, (long long)d, l->heads, (long long)s, (long long)s);
        return bad_shape(p, want, x);
    }
    l->macs = (double)s * (double)s * (double)d;
    return 0;
}

static int infer(const struct cal_net *net, const char *p, struct cal_layer *l)
{
    const struct cal_shape *x = cal_net_tensor_shape(net, l->in[0]);
    struct cal_shape *y = &l->shape;
    int rc;
    int want_in = l->op == CAL_ADD || l->op == CAL_BMM ? 2 : l->op == CAL_CONCAT ? -2 : 1;
    if ((want_in > 0 && l->nin != want_in) || (want_in < 0 && l->nin < -want_in))
        return sim_err_set(SIM_EINVAL, "%s.in: expected %s%d input(s) for %s, got %d", p,
                           want_in < 0 ? "at least " : "", abs(want_in), cal_op_name(l->op), l->nin);
    if (l->op != CAL_EMBED && net->tokens && l->in[0] == CAL_INPUT)
        return sim_err_set(SIM_EINVAL, "%s: expected an embed layer to read the token input, got %s",
                           p, cal_op_name(l->op));
    *y = *x;
    switch (l->op) {
    case CAL_CONV:
        return infer_conv(p, l, x, y);
    case CAL_MAXPOOL: case CAL_AVGPOOL:
        if (x->nd != 3)
            return bad_shape(p, "a [C,H,W] input for pooling", x);
        y->d[1] = out_dim(x->d[1], l->kh, l->sh, l->ph, 1);
        y->d[2] = out_dim(x->d[2], l->kw, l->sw, l->pw, 1);
        break;
    case CAL_GAP:
        if (x->nd != 3)
            return bad_shape(p, "a [C,H,W] input for gap", x);
        y->d[1] = y->d[2] = 1;
        break;
    case CAL_BN:
        if (x->nd != 3)
            return bad_shape(p, "a [C,H,W] input for bn", x);
        l->params = 2 * x->d[0];
        break;
    case CAL_LAYERNORM:
        if (x->nd > 2)
            return bad_shape(p, "a [S,D] or [D] input for layernorm", x);
        l->params = 2 * x->d[x->nd - 1];
        break;
    case CAL_ADD: {
        const struct cal_shape *b = cal_net_tensor_shape(net, l->in[1]);
        char a_s[96];
        shape_str(x, a_s, sizeof a_s);
        if (b->nd != x->nd || memcmp(b->d, x->d, sizeof(int64_t) * (size_t)x->nd) != 0) {
            char want[128];
            snprintf(want, sizeof want, "in[1] of the same shape as in[0] %s", a_s);
            return bad_shape(p, want, b);
        }
        break;
    }
    case CAL_CONCAT:
        if ((rc = infer_concat(net, p, l, x, y)))
            return rc;
        break;
    case CAL_FC: {
        int64_t k = cal_shape_count(x);
        y->nd = 1, y->d[0] = l->out, y->d[1] = y->d[2] = 0;
        l->params = k * l->out + (l->bias ? l->out : 0);
        l->macs = (double)k * l->out;
        break;
    }
    case CAL_LINEAR:
        if (x->nd != 2)
            return bad_shape(p, "a [S,D] input for linear", x);
        y->d[1] = l->out;
        l->params = x->d[1] * l->out + (l->bias ? l->out : 0);
        l->macs = (double)x->d[0] * (double)x->d[1] * l->out;
        break;
    case CAL_BMM:
        if ((rc = infer_bmm(net, p, l, x, y)))
            return rc;
        break;
    case CAL_SOFTMAX:
        if (x->nd == 3 && (x->d[1] != 1 || x->d[2] != 1) && net->layers[l->in[0]].op != CAL_BMM)
            return bad_shape(p, "attention scores [H,S,S], a [S,D] or a vector for softmax", x);
        break;
    case CAL_EMBED:
        if (!net->tokens || l->in[0] != CAL_INPUT)
            return sim_err_set(SIM_EINVAL, "%s: expected embed to read the token input", p);
        if (l->positions < x->d[0])
            return sim_err_set(SIM_EINVAL, "%s.positions: expected at least the %lld input "
                               "tokens, got %d", p, (long long)x->d[0], l->positions);
        y->nd = 2, y->d[1] = l->dim;
        l->params = (int64_t)(l->vocab + l->positions + l->types) * l->dim;
        break;
    case CAL_TOKEN:
        if (x->nd != 2 || l->index >= x->d[0])
            return bad_shape(p, "a [S,D] input with S above index", x);
        y->nd = 1, y->d[0] = x->d[1], y->d[1] = 0;
        break;
    default: /* eltwise */
        break;
    }
    if (cal_shape_count(y) <= 0)
        return bad_shape(p, "an output of positive size (kernel larger than its padded input?)", y);
    return 0;
}

static int find_tensor(const struct cal_net *net, int upto, const char *name)
{
    if (strcmp(name, "input") == 0)
        return CAL_INPUT;
    for (int i = upto - 1; i >= 0; i--)
        if (strcmp(net->layers[i].name, name) == 0)
            return i;
    return -2;
}

static int parse_layer(struct cal_net *net, int i, const cJSON *o)
{
    struct cal_layer *l = &net->layers[i];
    char p[SIM_JPATH_MAX], ip[SIM_JPATH_MAX];
    const char *name = NULL;
    int op = 0, rc;
    l->orig = i;
    sim_jpath_idx(p, sizeof p, "layers", i);
    if (!cJSON_IsObject(o))
        return sim_json_expected(p, "a layer object", o);
    if ((rc = sim_json_str(o, p, "name", true, &name)) ||
        (rc = sim_json_enum(o, p, "op", true, op_names, &op)))
        return rc;
    l->op = (enum cal_op)op;
    if (strlen(name) >= CAL_NAME_MAX || !name[0] || strcmp(name, "input") == 0 ||
        find_tensor(net, i, name) != -2)
        return sim_err_set(SIM_EINVAL, "%s.name: expected a new name of 1 to %d characters other "
                           "than \"input\", got \"%s\"", p, CAL_NAME_MAX - 1, name);
    snprintf(l->name, sizeof l->name, "%s", name);
    if ((rc = sim_json_keys(o, p, op_keys(l->op))) || (rc = parse_attrs(o, p, l)))
        return rc;
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(o, "in");
    sim_jpath(ip, sizeof ip, p, "in");
    if (!in) {
        l->nin = 1;
        l->in[0] = i - 1; /* the previous layer, or the input for the first */
    } else {
        if (!cJSON_IsArray(in) || cJSON_GetArraySize(in) < 1 || cJSON_GetArraySize(in) > CAL_MAX_IN)
            return sim_json_expected(ip, "an array of 1 to 8 tensor names", in);
        l->nin = cJSON_GetArraySize(in);
        for (int j = 0; j < l->nin; j++) {
            const cJSON *v = cJSON_GetArrayItem(in, j);
            char jp[SIM_JPATH_MAX];
            sim_jpath_idx(jp, sizeof jp, ip, j);
            if (!cJSON_IsString(v))
                return sim_json_expected(jp, "a tensor name", v);
            int t = find_tensor(net, i, v->valuestring);
            if (t == -2)
                return sim_err_set(SIM_EINVAL, "%s: expected \"input\" or an earlier layer's "
                                   "name, got \"%s\"", jp, v->valuestring);
            l->in[j] = t;
        }
    }
    return infer(net, p, l);
}

static int parse_net(struct cal_net *net, const cJSON *root)
{
    static const char *const keys[] = {"format", "name", "source", "generated_by", "published",
                                       "input", "layers", NULL};
    static const char *const in_keys[] = {"shape", "tokens", NULL};
    static const char *const pub_keys[] = {"params", "gmacs", "ref", NULL};
    const char *format = NULL, *name = NULL, *src = "";
    const cJSON *input = NULL, *layers = NULL, *pub = NULL;
    int rc;
    if (!cJSON_IsObject(root))
        return sim_err_set(SIM_EINVAL, "expected a network object at the top level");
    if ((rc = sim_json_keys(root, "", keys)) || (rc = sim_json_str(root, "", "format", true, &format)))
        return rc;
    if (strcmp(format, "servesim-net/1") != 0)
        return sim_err_set(SIM_EINVAL, "format: expected \"servesim-net/1\", got \"%.60s\" (a "
                           "newer servesim may read it)", format);
    if ((rc = sim_json_str(root, "", "name", true, &name)) ||
        (rc = sim_json_str(root, "", "source", false, &src)) ||
        (rc = sim_json_obj(root, "", "input", true, &input)) ||
        (rc = sim_json_obj(root, "", "published", false, &pub)) ||
        (rc = sim_json_arr(root, "", "layers", true, &layers)) ||
        (rc = sim_json_keys(input, "input", in_keys)))
        return rc;
    snprintf(net->name, sizeof net->name, "%s", name);
    snprintf(net->source, sizeof net->source, "%s", src);
    if (pub) {
        double params = 0;
        const char *ref = "";
        if ((rc = sim_json_keys(pub, "published", pub_keys)) ||
            (rc = sim_json_num(pub, "published", "params", false, SIM_J_POS, &params)) ||
            (rc = sim_json_num(pub, "published", "gmacs", false, SIM_J_POS, &net->pub_gmacs)) ||
            (rc = sim_json_str(pub, "published", "ref", false, &ref)))
            return rc;
        net->pub_params = (int64_t)params;
        snprintf(net->pub_ref, sizeof net->pub_ref, "%s", ref);
    }
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(input, "shape");
    const cJSON *tokens = cJSON_GetObjectItemCaseSensitive(input, "tokens");
    if (!shape == !tokens)
        return sim_err_set(SIM_EINVAL, "input: expected exactly one of shape [C,H,W] or tokens S");
    if (tokens) {
        long s = 0;
        if ((rc = sim_json_int(input, "input", "tokens", true, 1, 1 << 20, &s)))
            return rc;
        net->tokens = true;
        net->input.nd = 1, net->input.d[0] = s;
    } else {
        if (!cJSON_IsArray(shape) || cJSON_GetArraySize(shape) != 3)
            return sim_json_expected("input.shape", "[C,H,W]", shape);
        net->input.nd = 3;
        for (int j = 0; j < 3; j++) {
            const cJSON *v = cJSON_GetArrayItem(shape, j);
            char jp[SIM_JPATH_MAX];
            sim_jpath_idx(jp, sizeof jp, "input.shape", j);
            if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 65536 ||
                v->valuedouble != (double)(int64_t)v->valuedouble)
                return sim_json_expected(jp, "a positive integer", v);
            net->input.d[j] = (int64_t)v->valuedouble;
        }
    }
    net->n = cJSON_GetArraySize(layers);
    if (net->n < 1)
        return sim_err_set(SIM_EINVAL, "layers: expected at least one layer, got []");
    net->layers = calloc((size_t)net->n, sizeof *net->layers);
    if (!net->layers)
        return SIM_ENOMEM;
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, layers) {
        if ((rc = parse_layer(net, i, it)))
            return rc;
        i++;
    }
    return 0;
}

int cal_net_load(const char *file, struct cal_net **out)
{
    *out = NULL;
    cJSON *root = NULL;
    int rc = sim_json_load_file(file, &root);
    if (rc)
        return rc;
    struct cal_net *net = calloc(1, sizeof *net);
    if (!net) {
        cJSON_Delete(root);
        return SIM_ENOMEM;
    }
    snprintf(net->file, sizeof net->file, "%s", file);
    rc = parse_net(net, root);
    cJSON_Delete(root);
    if (rc) {
        cal_net_destroy(net);
        return sim_err_prefix(rc, file);
    }
    *out = net;
    return 0;
}

static void free_weights(struct cal_layer *l)
{
    free(l->w), free(l->b), free(l->mean), free(l->var);
    l->w = l->b = l->mean = l->var = NULL;
    l->nw = l->nb = 0;
}

void cal_net_destroy(struct cal_net *net)
{
    if (!net)
        return;
    for (int i = 0; i < net->n && net->layers; i++)
        free_weights(&net->layers[i]);
    free(net->layers);
    free(net);
}

int64_t cal_net_params(const struct cal_net *net)
{
    int64_t s = 0;
    for (int i = 0; i < net->n; i++)
        s += net->layers[i].params;
    return s;
}

double cal_net_macs(const struct cal_net *net)
{
    double s = 0;
    for (int i = 0; i < net->n; i++)
        s += net->layers[i].macs;
    return s;
}

void cal_net_parallelism(const struct cal_net *net, double *pi, int *width)
{
    double *path = calloc((size_t)(net->n ? net->n : 1), sizeof *path), total = 0, crit = 0;
    *width = 1;
    for (int i = 0; i < net->n; i++) {   /* layers come after their inputs */
        const struct cal_layer *l = &net->layers[i];
        double before = 0;
        for (int j = 0; j < l->nin; j++)
            if (l->in[j] != CAL_INPUT && path && path[l->in[j]] > before)
                before = path[l->in[j]];
        if (path)
            path[i] = before + l->macs;
        total += l->macs;
        crit = path && path[i] > crit ? path[i] : crit;
        if ((l->op == CAL_CONCAT || l->op == CAL_ADD) && l->nin > *width)
            *width = l->nin;
    }
    *pi = crit > 0 ? total / crit : 1;
    free(path);
}

void cal_net_last_use(const struct cal_net *net, int *last)
{
    for (int t = 0; t <= net->n; t++)
        last[t] = t - 1; /* slot t holds tensor t-1: its producer's step */
    for (int i = 0; i < net->n; i++)
        for (int j = 0; j < net->layers[i].nin; j++)
            last[net->layers[i].in[j] + 1] = i;
    last[net->n] = net->n; /* the output lives past the last step */
}

/* --- weights ----------------------------------------------------------------------------- */

static float *fill(gsl_rng *r, int64_t n, double lo, double hi)
{
    float *a = malloc((size_t)(n > 0 ? n : 1) * sizeof *a);
    if (a)
        for (int64_t i = 0; i < n; i++)
            a[i] = (float)(lo + (hi - lo) * gsl_rng_uniform(r));
    return a;
}

int cal_net_init_weights(struct cal_net *net, uint64_t seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r)
        return SIM_ENOMEM;
    int rc = 0;
    for (int i = 0; i < net->n && !rc; i++) {
        struct cal_layer *l = &net->layers[i];
        const struct cal_shape *x = cal_net_tensor_shape(net, l->in[0]);
        free_weights(l);
        gsl_rng_set(r, (unsigned long)(seed * 1000003u + (uint64_t)i + 1));
        int64_t fan_in = 0, nout = 0;
        switch (l->op) {
        case CAL_CONV:
            fan_in = x->d[0] / l->groups * l->kh * l->kw, nout = l->out;
            break;
        case CAL_FC:
            fan_in = cal_shape_count(x), nout = l->out;
            break;
        case CAL_LINEAR:
            fan_in = x->d[1], nout = l->out;
            break;
        case CAL_BN: case CAL_LAYERNORM: {
            int64_t c = l->op == CAL_BN ? x->d[0] : x->d[x->nd - 1];
            l->nw = l->nb = c;
            l->w = fill(r, c, 0.5, 1.5);
            l->b = fill(r, c, -0.1, 0.1);
            if (l->op == CAL_BN) {
                l->mean = fill(r, c, -0.1, 0.1);
                l->var = fill(r, c, 0.5, 1.5);
                if (!l->mean || !l->var)
                    rc = SIM_ENOMEM;
            }
            break;
        }
        case CAL_EMBED:
            l->nw = l->params;
            l->w = fill(r, l->nw, -1, 1);
            break;
        default:
            break;
        }
        if (fan_in) {
            double a = sqrt(3.0 / (double)fan_in);
            l->nw = fan_in * nout;
            l->w = fill(r, l->nw, -a, a);
            l->nb = nout;
            l->b = l->bias ? fill(r, nout, -0.1, 0.1) : NULL;
            if (l->bias && !l->b)
                rc = SIM_ENOMEM;
        }
        if (l->nw && !l->w)
            rc = SIM_ENOMEM;
    }
    gsl_rng_free(r);
    return rc;
}

int cal_net_fold_bn(struct cal_net *net)
{
    int *readers = calloc((size_t)net->n, sizeof *readers);
    int *map = malloc((size_t)net->n * sizeof *map);
    struct cal_layer *orig = malloc((size_t)net->n * sizeof *orig);
    int folded = 0, k = 0, rc = 0;
    if (!readers || !map || !orig) {
        rc = SIM_ENOMEM;
        goto out;
    }
    memcpy(orig, net->layers, (size_t)net->n * sizeof *orig);
    for (int i = 0; i < net->n; i++)
        for (int j = 0; j < orig[i].nin; j++)
            if (orig[i].in[j] >= 0)
                readers[orig[i].in[j]]++;
    for (int i = 0; i < net->n; i++) {
        struct cal_layer *l = &orig[i];
        int src = l->in[0];
        if (l->op == CAL_BN && src >= 0 && orig[src].op == CAL_CONV && readers[src] == 1 &&
            l->w && orig[src].w) {
            struct cal_layer *c = &net->layers[map[src]]; /* the conv, already moved */
            int64_t per = c->nw / c->out;
            if (!c->b) {
                if (!(c->b = calloc((size_t)c->out, sizeof *c->b))) {
                    rc = SIM_ENOMEM;
                    goto out;
                }
                c->nb = c->out, c->bias = true;
                c->params += c->out;
            }
            for (int o = 0; o < c->out; o++) {
                double g = l->w[o] / sqrt((double)l->var[o] + l->eps);
                for (int64_t q = 0; q < per; q++)
                    c->w[o * per + q] = (float)(c->w[o * per + q] * g);
                c->b[o] = (float)((c->b[o] - l->mean[o]) * g + l->b[o]);
            }
            map[i] = map[src];
            c->orig = l->orig; /* the conv's output is now the bn's */
            free_weights(l);
            folded++;
            continue;
        }
        struct cal_layer moved = *l;
        for (int j = 0; j < moved.nin; j++)
            if (moved.in[j] >= 0)
                moved.in[j] = map[moved.in[j]];
        map[i] = k;
        net->layers[k++] = moved;
    }
    net->n = k;
out:
    free(readers), free(map), free(orig);
    return rc ? rc : folded;
}

/* --- arena planning ---------------------------------------------------------------------- */

struct arena_item {
    size_t size;
    int idx;
};

static int by_size_desc(const void *a, const void *b)
{
    const struct arena_item *x = a, *y = b;
    if (x->size != y->size)
        return x->size < y->size ? 1 : -1;
    return x->idx - y->idx;
}

int cal_arena_plan(int n, const size_t *size, const int *first, const int *last, size_t align,
                   size_t *off, size_t *total)
{
    struct arena_item *it = malloc((size_t)(n > 0 ? n : 1) * sizeof *it);
    int *placed = malloc((size_t)(n > 0 ? n : 1) * sizeof *placed);
    if (!it || !placed) {
        free(it), free(placed);
        return SIM_ENOMEM;
    }
    for (int i = 0; i < n; i++)
        it[i] = (struct arena_item){(size[i] + align - 1) / align * align, i};
    qsort(it, (size_t)n, sizeof *it, by_size_desc);
    *total = 0;
    for (int a = 0; a < n; a++) {
        int i = it[a].idx, np = 0;
        for (int b = 0; b < a; b++) {
            int j = it[b].idx;
            if (first[j] <= last[i] && first[i] <= last[j])
                placed[np++] = j; /* lifetimes overlap */
        }
        /* lowest offset that clears every overlapping placed buffer: try 0 and each end */
        size_t best = (size_t)-1;
        for (int c = -1; c < np; c++) {
            size_t o = c < 0 ? 0 : off[placed[c]] + (size[placed[c]] + align - 1) / align * align;
            bool ok = o < best;
            for (int d = 0; d < np && ok; d++) {
                size_t s = off[placed[d]], e = s + size[placed[d]];
                if (o < e && s < o + it[a].size)
                    ok = false;
            }
            if (ok)
                best = o;
        }
        off[i] = best;
        if (best + it[a].size > *total)
            *total = best + it[a].size;
    }
    free(it), free(placed);
    return 0;
}
