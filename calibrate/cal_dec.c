/* cal_dec — decoder files (servesim-decoder/1): loading with JSON-path errors, parameter
 * counts, seeded weights, and the reference forward pass (plain loops, double accumulation, a
 * whole sequence from scratch) that `check` holds the runtime to. cal_dec.h has the model. */
#include "cal_dec.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>

#include "sim_err.h"
#include "sim_json.h"

static const char *const op_names[] = {
#define CAL_DEC_OP_NAME(e, s) s,
    CAL_DEC_OPS(CAL_DEC_OP_NAME)
#undef CAL_DEC_OP_NAME
};

const char *cal_dec_op_name(enum cal_dec_op op)
{
    return op >= 0 && op < CAL_DEC_NOPS ? op_names[op] : "?";
}

bool cal_dec_is_file(const char *file)
{
    cJSON *root = NULL;
    if (sim_json_load_file(file, &root)) {
        sim_err_clear();
        return false;
    }
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "format");
    bool yes = cJSON_IsString(f) && strcmp(f->valuestring, CAL_DEC_FORMAT) == 0;
    cJSON_Delete(root);
    return yes;
}

static int parse(struct cal_dec *d, const cJSON *root)
{
    static const char *const keys[] = {
        "format", "name", "arch", "source", "generated_by", "published", "hidden_size",
        "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim",
        "intermediate_size", "vocab_size", "max_position_embeddings", "rope_theta",
        "rms_norm_eps", "tie_word_embeddings", "attention_bias", NULL};
    static const char *const pub_keys[] = {"params", "ref", NULL};
    const char *format = NULL, *name = NULL, *arch = NULL, *src = "";
    const cJSON *pub = NULL;
    long v[8];
    int rc;
    if (!cJSON_IsObject(root))
        return sim_err_set(SIM_EINVAL, "expected a decoder object at the top level");
    if ((rc = sim_json_keys(root, "", keys)) || (rc = sim_json_str(root, "", "format", true, &format)))
        return rc;
    if (strcmp(format, CAL_DEC_FORMAT) != 0)
        return sim_err_set(SIM_EINVAL, "format: expected \"%s\", got \"%.60s\"", CAL_DEC_FORMAT,
                           format);
    if ((rc = sim_json_str(root, "", "name", true, &name)) ||
        (rc = sim_json_str(root, "", "arch", true, &arch)) ||
        (rc = sim_json_str(root, "", "source", false, &src)) ||
        (rc = sim_json_obj(root, "", "published", false, &pub)) ||
        (rc = sim_json_int(root, "", "hidden_size", true, 8, 1 << 16, &v[0])) ||
        (rc = sim_json_int(root, "", "num_hidden_layers", true, 1, 1024, &v[1])) ||
        (rc = sim_json_int(root, "", "num_attention_heads", true, 1, 1024, &v[2])) ||
        (rc = sim_json_int(root, "", "num_key_value_heads", true, 1, 1024, &v[3])) ||
        (rc = sim_json_int(root, "", "head_dim", true, 2, 1024, &v[4])) ||
        (rc = sim_json_int(root, "", "intermediate_size", true, 1, 1 << 20, &v[5])) ||
        (rc = sim_json_int(root, "", "vocab_size", true, 2, 1 << 22, &v[6])) ||
        (rc = sim_json_int(root, "", "max_position_embeddings", true, 1, 1 << 22, &v[7])) ||
        (rc = sim_json_num(root, "", "rope_theta", true, SIM_J_POS, &d->rope_theta)) ||
        (rc = sim_json_num(root, "", "rms_norm_eps", true, SIM_J_POS, &d->eps)) ||
        (rc = sim_json_bool(root, "", "tie_word_embeddings", true, &d->tied)) ||
        (rc = sim_json_bool(root, "", "attention_bias", true, &d->qkv_bias)))
        return rc;
    d->hidden = (int)v[0], d->layers = (int)v[1], d->heads = (int)v[2];
    d->kv_heads = (int)v[3], d->head_dim = (int)v[4], d->inter = (int)v[5];
    d->vocab = (int)v[6], d->max_pos = (int)v[7];
    if (d->heads % d->kv_heads)
        return sim_err_set(SIM_EINVAL, "num_key_value_heads: expected a divisor of "
                           "num_attention_heads (%d), got %d", d->heads, d->kv_heads);
    if (d->head_dim % 2)
        return sim_err_set(SIM_EINVAL, "head_dim: expected an even number (rotary pairs), got "
                           "%d", d->head_dim);
    snprintf(d->name, sizeof d->name, "%s", name);
    snprintf(d->arch, sizeof d->arch, "%s", arch);
    snprintf(d->source, sizeof d->source, "%s", src);
    if (pub) {
        double params = 0;
        const char *ref = "";
        if ((rc = sim_json_keys(pub, "published", pub_keys)) ||
            (rc = sim_json_num(pub, "published", "params", false, SIM_J_POS, &params)) ||
            (rc = sim_json_str(pub, "published", "ref", false, &ref)))
            return rc;
        d->pub_params = (int64_t)params;
        snprintf(d->pub_ref, sizeof d->pub_ref, "%s", ref);
    }
    return 0;
}

int cal_dec_load(const char *file, struct cal_dec **out)
{
    *out = NULL;
    cJSON *root = NULL;
    int rc = sim_json_load_file(file, &root);
    if (rc)
        return rc;
    struct cal_dec *d = calloc(1, sizeof *d);
    if (!d) {
        cJSON_Delete(root);
        return SIM_ENOMEM;
    }
    snprintf(d->file, sizeof d->file, "%s", file);
    rc = parse(d, root);
    cJSON_Delete(root);
    if (rc) {
        cal_dec_destroy(d);
        return sim_err_prefix(rc, file);
    }
    *out = d;
    return 0;
}

static void free_weights(struct cal_dec *d)
{
    if (d->L)
        for (int l = 0; l < d->layers; l++) {
            struct cal_dec_layer *L = &d->L[l];
            free(L->attn_norm), free(L->wqkv), free(L->bqkv), free(L->wo);
            free(L->mlp_norm), free(L->wgu), free(L->wd);
        }
    free(d->L);
    if (d->lm_head != d->embed)
        free(d->lm_head);
    free(d->embed), free(d->final_norm);
    d->L = NULL, d->embed = d->lm_head = d->final_norm = NULL;
}

void cal_dec_destroy(struct cal_dec *d)
{
    if (!d)
        return;
    free_weights(d);
    free(d);
}

/* Rows of the fused QKV projection. */
static int64_t qkv_rows(const struct cal_dec *d)
{
    return (int64_t)(d->heads + 2 * d->kv_heads) * d->head_dim;
}

int64_t cal_dec_params(const struct cal_dec *d)
{
    int64_t h = d->hidden, emb = (int64_t)d->vocab * h;
    int64_t layer = qkv_rows(d) * h + (d->qkv_bias ? qkv_rows(d) : 0) +
                    (int64_t)d->heads * d->head_dim * h + 3 * (int64_t)d->inter * h + 2 * h;
    return emb * (d->tied ? 1 : 2) + d->layers * layer + h;
}

double cal_dec_weight_bytes(const struct cal_dec *d)
{
    return 4.0 * (double)cal_dec_params(d);
}

static float *fill(gsl_rng *r, int64_t n, double lo, double hi)
{
    float *p = malloc((size_t)n * sizeof *p);
    if (p)
        for (int64_t i = 0; i < n; i++)
            p[i] = (float)(lo + (hi - lo) * gsl_rng_uniform(r));
    return p;
}

int cal_dec_init_weights(struct cal_dec *d, uint64_t seed)
{
    free_weights(d);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r)
        return SIM_ENOMEM;
    gsl_rng_set(r, (unsigned long)(seed * 2654435761u + 17));
    int64_t h = d->hidden, qd = (int64_t)d->heads * d->head_dim, I = d->inter;
    /* uniform(-a, a) with a = sqrt(3 / fan_in) keeps a GEMM's output variance its input's */
    double ah = sqrt(3.0 / (double)h), aq = sqrt(3.0 / (double)qd), ai = sqrt(3.0 / (double)I);
    bool ok = (d->L = calloc((size_t)d->layers, sizeof *d->L)) != NULL;
    ok = ok && (d->embed = fill(r, (int64_t)d->vocab * h, -1, 1));
    ok = ok && (d->lm_head = d->tied ? d->embed : fill(r, (int64_t)d->vocab * h, -ah, ah));
    ok = ok && (d->final_norm = fill(r, h, 0.9, 1.1));
    for (int l = 0; ok && l < d->layers; l++) {
        struct cal_dec_layer *L = &d->L[l];
        ok = (L->attn_norm = fill(r, h, 0.9, 1.1)) && (L->wqkv = fill(r, qkv_rows(d) * h, -ah, ah)) &&
             (!d->qkv_bias || (L->bqkv = fill(r, qkv_rows(d), -0.1, 0.1))) &&
             (L->wo = fill(r, h * qd, -aq, aq)) && (L->mlp_norm = fill(r, h, 0.9, 1.1)) &&
             (L->wgu = fill(r, 2 * I * h, -ah, ah)) && (L->wd = fill(r, h * I, -ai, ai));
    }
    gsl_rng_free(r);
    if (!ok) {
        free_weights(d);
        return sim_err_set(SIM_ENOMEM, "%s: no memory for %.1f GB of fp32 weights", d->name,
                           cal_dec_weight_bytes(d) / 1e9);
    }
    return 0;
}

int32_t *cal_dec_tokens(const struct cal_dec *d, int n, uint64_t seed)
{
    int32_t *t = malloc((size_t)(n > 0 ? n : 1) * sizeof *t);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!t || !r) {
        free(t);
        gsl_rng_free(r);
        return NULL;
    }
    gsl_rng_set(r, (unsigned long)(seed * 40503u + 3));
    for (int i = 0; i < n; i++)
        t[i] = (int32_t)gsl_rng_uniform_int(r, (unsigned long)d->vocab);
    gsl_rng_free(r);
    return t;
}

/* ---- the reference ---------------------------------------------------------------------- */

static double *dalloc(int64_t n)
{
    return malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
}

static void ref_rmsnorm(const double *x, const float *w, int h, double eps, double *y)
{
    double ss = 0;
    for (int i = 0; i < h; i++)
        ss += x[i] * x[i];
    double inv = 1.0 / sqrt(ss / h + eps);
    for (int i = 0; i < h; i++)
        y[i] = x[i] * inv * w[i];
}

/* y[rows] = W[rows][k] x[k] (+ b) */
static void ref_gemv(const float *W, const float *b, const double *x, int64_t rows, int64_t k,
                     double *y)
{
    for (int64_t r = 0; r < rows; r++) {
        double acc = b ? b[r] : 0;
        const float *w = W + r * k;
        for (int64_t i = 0; i < k; i++)
            acc += w[i] * x[i];
        y[r] = acc;
    }
}

/* Rotary embedding of one head vector at position pos (Hugging Face's rotate_half: pairs
 * (i, i + d/2), frequency theta^(-2i/d)). */
static void ref_rope(double *v, int d, int pos, double theta)
{
    int half = d / 2;
    for (int i = 0; i < half; i++) {
        double ang = pos * pow(theta, -2.0 * i / d), c = cos(ang), s = sin(ang);
        double a = v[i], b = v[i + half];
        v[i] = a * c - b * s;
        v[i + half] = b * c + a * s;
    }
}

int cal_dec_ref_logits(const struct cal_dec *d, const int32_t *tok, int n, float *logits)
{
    if (!d->embed || n < 1 || n > d->max_pos)
        return sim_err_set(SIM_EINTERNAL, "cal_dec_ref_logits: %s, %d tokens (1..%d)",
                           d->embed ? "weights" : "no weights", n, d->max_pos);
    int h = d->hidden, hd = d->head_dim, nq = d->heads, nkv = d->kv_heads, I = d->inter;
    int64_t qr = qkv_rows(d);
    double *x = dalloc((int64_t)n * h), *xn = dalloc((int64_t)h);
    double *qkv = dalloc((int64_t)n * qr), *att = dalloc((int64_t)nq * hd);
    double *tmp = dalloc((int64_t)(2 * I > h ? 2 * I : h));
    double *o = dalloc((int64_t)h), *p = dalloc((int64_t)n);
    double *mid = dalloc((int64_t)I), *ao = dalloc((int64_t)n * h);
    int rc = 0;
    if (!x || !xn || !qkv || !att || !tmp || !o || !p || !mid || !ao) {
        rc = SIM_ENOMEM;
        goto out;
    }
    for (int t = 0; t < n; t++)
        for (int i = 0; i < h; i++)
            x[(int64_t)t * h + i] = d->embed[(int64_t)tok[t] * h + i];
    for (int l = 0; l < d->layers; l++) {
        const struct cal_dec_layer *L = &d->L[l];
        for (int t = 0; t < n; t++) {
            double *q = qkv + (int64_t)t * qr;
            ref_rmsnorm(x + (int64_t)t * h, L->attn_norm, h, d->eps, xn);
            ref_gemv(L->wqkv, L->bqkv, xn, qr, h, q);
            for (int j = 0; j < nq + nkv; j++)        /* q heads, then k heads */
                ref_rope(q + (int64_t)j * hd, hd, t, d->rope_theta);
        }
        for (int t = 0; t < n; t++) {
            const double *q = qkv + (int64_t)t * qr;
            for (int j = 0; j < nq; j++) {
                int kvh = j / (nq / nkv);
                double mx = -INFINITY, sum = 0;
                for (int u = 0; u <= t; u++) {
                    const double *k = qkv + (int64_t)u * qr + (int64_t)(nq + kvh) * hd;
                    double s = 0;
                    for (int i = 0; i < hd; i++)
                        s += q[(int64_t)j * hd + i] * k[i];
                    p[u] = s / sqrt((double)hd);
                    mx = p[u] > mx ? p[u] : mx;
                }
                for (int u = 0; u <= t; u++)
                    sum += (p[u] = exp(p[u] - mx));
                for (int i = 0; i < hd; i++) {
                    double acc = 0;
                    for (int u = 0; u <= t; u++)
                        acc += p[u] * qkv[(int64_t)u * qr + (int64_t)(nq + nkv + kvh) * hd + i];
                    att[(int64_t)j * hd + i] = acc / sum;
                }
            }
            /* the attention's projection, kept aside until every position has read the
             * layer's input */
            ref_gemv(L->wo, NULL, att, h, (int64_t)nq * hd, ao + (int64_t)t * h);
        }
        for (int t = 0; t < n; t++) {
            double *xt = x + (int64_t)t * h;
            for (int i = 0; i < h; i++)
                xt[i] += ao[(int64_t)t * h + i];
            ref_rmsnorm(xt, L->mlp_norm, h, d->eps, xn);
            ref_gemv(L->wgu, NULL, xn, 2 * (int64_t)I, h, tmp);
            for (int i = 0; i < I; i++)
                mid[i] = tmp[i] / (1 + exp(-tmp[i])) * tmp[I + i];
            ref_gemv(L->wd, NULL, mid, h, I, o);
            for (int i = 0; i < h; i++)
                xt[i] += o[i];
        }
    }
    ref_rmsnorm(x + (int64_t)(n - 1) * h, d->final_norm, h, d->eps, xn);
    for (int v = 0; v < d->vocab; v++) {
        double acc = 0;
        const float *w = d->lm_head + (int64_t)v * h;
        for (int i = 0; i < h; i++)
            acc += w[i] * xn[i];
        logits[v] = (float)acc;
    }
out:
    free(x), free(xn), free(qkv), free(att), free(tmp), free(o), free(p), free(mid), free(ao);
    return rc;
}
