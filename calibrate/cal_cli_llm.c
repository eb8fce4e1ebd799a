/* cal_cli_llm — servesim-calibrate's decoder commands: the decoders' table of `nets`, `check`
 * of a decoder (the runtime's logits against the reference), `llm-measure` (operator tables,
 * the iteration-time profile, whole iterations against it) and `llm-validate` (a real
 * continuous-batching server against the simulator). docs/calibrate.md, "Decoders". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#include "cal_dec.h"
#include "cal_profile.h"
#include "cal_dec_cal.h"
#include "cal_dec_serve.h"
#include "cal_ref.h"
#include "sim_err.h"
#include "sim_json.h"
#include "sim_out.h"
#include "wl_llm.h"
#include "trace.h"
#include "cal_cli_int.h"

bool cli_is_decoder(const char *ref)
{
    char file[1024];
    cal_net_resolve(ref, file, sizeof file);
    return cal_dec_is_file(file);
}

/* The decoder and, where `weights`, its fp32 weights on the host (refused where they would not
 * fit this machine's memory). */
static int load_decoder(const struct opts *o, bool weights, struct cal_dec **d)
{
    char file[1024];
    cal_net_resolve(o->nets[0], file, sizeof file);
    int rc = cal_dec_load(file, d);
    if (rc || !weights)
        return rc;
    double gb = cal_dec_weight_bytes(*d) / 1e9;
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGE_SIZE);
    double have = pages > 0 && psize > 0 ? (double)pages * (double)psize / 1e9 : 0;
    if (have > 0 && gb > 0.8 * have) {
        rc = strcmp(o->backend, "onednn") == 0
                 ? sim_err_set(SIM_EUNAVAIL, "%s: %.1f GB of fp32 weights do not fit this "
                               "machine's %.1f GB: the CPU runtime runs the tiny decoders "
                               "(tiny_llama, tiny_qwen); a 7-8B decoder is a GPU's work "
                               "(--backend cudnn)", (*d)->name, gb, have)
                 : sim_err_set(SIM_EUNAVAIL, "%s: check computes its reference on the host "
                               "from fp32 weights, and %.1f GB of them do not fit this "
                               "machine's %.1f GB: check the tiny decoders (tiny_llama, "
                               "tiny_qwen), which run the same kernels", (*d)->name, gb, have);
        cal_dec_destroy(*d);
        *d = NULL;
        return rc;
    }
    if ((rc = cal_dec_init_weights(*d, o->seed))) {
        cal_dec_destroy(*d);
        *d = NULL;
    }
    return rc;
}

/* Which runtime --backend names: onednn the CPU's (fp32), cudnn the GPU's (fp16: cuBLASLt and
 * the project's CUDA kernels, cal_dec_gpu.h), where this build has it. */
static int runtime_of(const struct opts *o, bool *gpu)
{
    *gpu = strcmp(o->backend, "cudnn") == 0;
    if (!*gpu && strcmp(o->backend, "onednn") != 0)
        return sim_err_set(SIM_EUSAGE, "--backend: expected onednn or cudnn, got %s", o->backend);
#ifndef SERVESIM_HAVE_CUDNN
    if (*gpu)
        return sim_err_set(SIM_EUNAVAIL, "--backend cudnn: this build has no GPU runtime (the "
                           "CUDA toolkit, cuBLAS and cuDNN were not found when it was configured)");
#endif
    return 0;
}

int cli_decoders_table(const char *const *names, int n)
{
    struct cal_dec **d = calloc((size_t)n, sizeof *d);
    char (*file)[1024] = calloc((size_t)n, sizeof *file);
    int rc = d && file ? 0 : SIM_ENOMEM, w = 7, off = 0;
    for (int i = 0; i < n && !rc; i++) {
        cal_net_resolve(names[i], file[i], sizeof file[i]);
        rc = cal_dec_load(file[i], &d[i]);
        if (!rc && (int)strlen(d[i]->name) > w)
            w = (int)strlen(d[i]->name);
    }
    if (!rc)
        printf("%-*s  %-11s %6s %6s %9s %8s %6s %14s %16s  %s\n", w, "decoder", "arch", "layers",
               "hidden", "heads/kv", "ffn", "vocab", "params", "published", "file");
    for (int i = 0; i < n && !rc; i++) {
        const struct cal_dec *x = d[i];
        char hk[24], pub[32] = "-";
        snprintf(hk, sizeof hk, "%d/%d", x->heads, x->kv_heads);
        bool bad = x->pub_params > 0 && cal_dec_params(x) != x->pub_params;
        off += bad;
        if (x->pub_params > 0)
            snprintf(pub, sizeof pub, "%lld%s", (long long)x->pub_params, bad ? " *" : "  ");
        printf("%-*s  %-11s %6d %6d %9s %8d %6d %14lld %16s  %s\n", w, x->name, x->arch,
               x->layers, x->hidden, hk, x->inter, x->vocab, (long long)cal_dec_params(x), pub,
               file[i]);
    }
    if (!rc && off)
        printf("* the count from the shapes is not the published one\n");
    for (int i = 0; d && i < n; i++)
        cal_dec_destroy(d[i]);
    free(d), free(file);
    return rc;
}

/* Three requests through mixed iterations (chunked prefills beside decodes, blocks scattered),
 * every step's logits against the reference from scratch. */
int cmd_llm_check(const struct opts *o)
{
    struct cal_dec *d = NULL;
    struct cal_dec_rt *rt = NULL;
    int rc;
    bool gpu;
    if ((rc = runtime_of(o, &gpu)) || (rc = load_decoder(o, true, &d)))
        return rc;
    /* fp32 against the double reference; fp16 (the GPU's) as the CNNs' fp16 check */
    double tol = o->tol_check > 0 ? o->tol_check : gpu ? 2e-2 : 1e-4, worst = 0;
    enum { NS = 3, BS = 16 };
    int prompt[NS] = {37, 5, 70}, steps = 10, maxlen = 70 + steps + 1;
    int nb = (maxlen / BS + 1) * NS + 4;
    struct cal_dec_rt_opts ro = {.threads = o->threads[0], .block_size = BS, .kv_blocks = nb,
                                 .max_tokens = 128, .max_seqs = NS, .gpu = gpu,
                                 .eager = o->eager, .device = o->device, .seed = o->seed};
    int32_t *tok[NS] = {0}, *blocks[NS] = {0};
    int len[NS], done[NS], compared = 0;
    float *lg = malloc((size_t)NS * (size_t)d->vocab * sizeof *lg);
    float *ref = malloc((size_t)d->vocab * sizeof *ref);
    if (!lg || !ref)
        rc = SIM_ENOMEM;
    for (int i = 0; i < NS && !rc; i++) {
        tok[i] = calloc((size_t)maxlen, sizeof *tok[i]);
        blocks[i] = calloc((size_t)(maxlen / BS + 1), sizeof *blocks[i]);
        int32_t *t = cal_dec_tokens(d, prompt[i], (uint64_t)o->seed + (uint64_t)i);
        if (!tok[i] || !blocks[i] || !t) {
            free(t);
            rc = SIM_ENOMEM;
            break;
        }
        memcpy(tok[i], t, (size_t)prompt[i] * sizeof *t);
        free(t);
        len[i] = prompt[i], done[i] = 0;
        for (int b = 0; b < maxlen / BS + 1; b++)
            blocks[i][b] = (int32_t)(nb - 1 - (b * NS + i));
    }
    if (!rc)
        rc = cal_dec_rt_create(d, &ro, &rt);
    if (!rc)
        printf("%s (%s): %s\n%-5s %-30s %12s\n", d->name, d->file, cal_dec_rt_describe(rt),
               "step", "iteration (q@c per sequence)", "rel. error");
    for (int step = 0; step < steps && !rc; step++) {
        struct cal_dec_seq s[NS];
        int who[NS], n = 0, at = 0;
        char shape[96] = "";
        for (int i = 0; i < NS; i++) {
            if (step < i)
                continue;
            int q = len[i] - done[i] > 24 ? 24 : len[i] - done[i];
            s[n] = (struct cal_dec_seq){q, done[i], tok[i] + done[i], blocks[i]};
            at += snprintf(shape + at, sizeof shape - (size_t)at, "%s%d@%d", n ? " " : "", q,
                           done[i]);
            who[n++] = i;
        }
        int32_t next[NS];
        if ((rc = cal_dec_rt_step(rt, s, n, lg, next)))
            break;
        double e = 0;
        int cmp = 0;                                 /* sequences whose prompt is in */
        for (int k = 0; k < n && !rc; k++) {
            int i = who[k];
            done[i] += s[k].q;
            if (done[i] < len[i])
                continue;
            if ((rc = cal_dec_ref_logits(d, tok[i], done[i], ref)))
                break;
            double ek = cal_ref_rel_err(lg + (size_t)k * (size_t)d->vocab, ref, d->vocab);
            e = ek > e ? ek : e;
            compared++, cmp++;
            tok[i][len[i]++] = next[k];
        }
        worst = e > worst ? e : worst;
        if (!rc && cmp)
            printf("%-5d %-30s %12.3e\n", step, shape, e);
        else if (!rc)                                /* every prompt still partly computed */
            printf("%-5d %-30s %12s\n", step, shape, "-");
    }
    if (!rc) {
        printf("%d logits compared, worst relative error %.3e, tolerance %.1e: %s\n", compared,
               worst, tol, worst <= tol ? "ok" : "FAILED");
        if (worst > tol)
            rc = sim_err_set(SIM_EINVAL, "check: %s's logits differ from the reference by %.3e "
                             "(tolerance %.1e)", d->name, worst, tol);
    }
    for (int i = 0; i < NS; i++)
        free(tok[i]), free(blocks[i]);
    free(lg), free(ref);
    cal_dec_rt_destroy(rt);
    cal_dec_destroy(d);
    return rc;
}

static void copy_axis(int *dst, int *nd, const int *src, int ns)
{
    memcpy(dst, src, (size_t)ns * sizeof *src);
    *nd = ns;
}

/* The device's name, its library versions and its kind (the profile's "gpu": "cpu", or the
 * GPU's model, e.g. "h100"), from the backend that describes it. */
static int device_of(const struct opts *o, bool gpu, char *dev, size_t ndev, char *ver,
                     size_t nver, char *kind, size_t nkind)
{
    struct cal_device_info di;
    void *st = NULL;
    const struct cal_backend_ops *be = &cal_backend_onednn;
    struct cal_opts bo = {.threads = 1, .device = o->device};
#ifdef SERVESIM_HAVE_CUDNN
    if (gpu)
        be = &cal_backend_cudnn, bo.precision = CAL_FP16;
#endif
    snprintf(dev, ndev, "%s", gpu ? "GPU" : "CPU");
    snprintf(kind, nkind, "%s", gpu ? "gpu" : "cpu");
    ver[0] = 0;
    int rc = be->create(&bo, &st);
    if (!rc && !(rc = be->info(st, &di))) {
        snprintf(dev, ndev, "%s", di.device);
        snprintf(ver, nver, "%s", di.versions);
        if (gpu && di.kind[0])
            snprintf(kind, nkind, "%s", di.kind);
    }
    if (st)
        be->destroy(st);
    return gpu ? rc : 0;           /* a CPU always is; a GPU that is not: the runtime says why */
}

static void print_check(const struct cal_dec_check_row *r, int n)
{
    printf("\nwhole iterations against the profile (timed in the same rounds: median, p10-p90):\n");
    printf("%-48s %6s %5s %12s %21s %12s %8s %18s\n", "iteration", "T", "seqs", "measured us",
           "p10-p90 us", "profile us", "error", "dense us: it/prof");
    double worst = 0;
    for (int i = 0; i < n; i++) {
        char spread[40];
        snprintf(spread, sizeof spread, "%.1f-%.1f", r[i].p10_us, r[i].p90_us);
        char dn[40];
        snprintf(dn, sizeof dn, "%.0f/%.0f", r[i].dense_us, r[i].dense_pred_us);
        printf("%-48s %6d %5d %12.1f %21s %12.1f %+7.1f%% %18s\n", r[i].what, r[i].tokens,
               r[i].seqs, r[i].measured_us, spread, r[i].predicted_us, 100 * r[i].err, dn);
        worst = fabs(r[i].err) > worst ? fabs(r[i].err) : worst;
    }
    printf("worst |error| %.1f%% (issue 55's bound: 5%%)\n", 100 * worst);
}

/* The i-th number of array `key` of object o (0 where absent). */
static double num_at(const cJSON *o, const char *key, int i)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key), *v = cJSON_GetArrayItem(a, i);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* Where the datasheet of the profile's device is known (workloads/wl_llm.c): the GEMMs'
 * throughput at each dense point against the tensor peak, and each decode iteration's bytes
 * (fp16 weights but the embedding table, whose rows alone are read, and the K and V of its
 * context) over its GPU time (dense and attention per layer, and the LM head) against the
 * memory bandwidth. */
static void print_peaks(const struct cal_dec *d, const cJSON *prof, const char *kind)
{
    const struct wl_llm_gpu_entry *ge = wl_llm_gpu_find(kind);
    if (!ge || ge->gpu.peak_tflops <= 0)
        return;
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(prof, "operators");
    const cJSON *tk = cJSON_GetObjectItemCaseSensitive(ops, "tokens");
    double L = d->layers, h = d->hidden, hd = d->head_dim, nq = d->heads, nkv = d->kv_heads;
    double I = d->inter, qr = (nq + 2 * nkv) * hd;
    double per_tok = 2 * L * (h * qr + nq * hd * h + h * 2 * I + I * h);   /* GEMM FLOP a token */
    printf("\nGEMMs (QKV, output, gate-up, down; all layers) against %s's tensor peak, %.1f "
           "TFLOP/s:\n%8s %12s %10s %8s\n", kind, ge->gpu.peak_tflops, "T", "GEMM us", "TFLOP/s",
           "of peak");
    for (int i = 0; i < cJSON_GetArraySize(tk); i++) {
        double T = num_at(ops, "tokens", i);
        double us = num_at(ops, "qkv_gemm", i) + num_at(ops, "out_gemm", i) +
                    num_at(ops, "gate_up_gemm", i) + num_at(ops, "down_gemm", i);
        if (us <= 0 || T < 64)
            continue;
        double tf = per_tok * T / (us * 1e-6) / 1e12;
        printf("%8.0f %12.1f %10.1f %7.1f%%\n", T, us, tf, 100 * tf / ge->gpu.peak_tflops);
    }
    const cJSON *pl = cJSON_GetObjectItemCaseSensitive(prof, "per_layer");
    const cJSON *dn = cJSON_GetObjectItemCaseSensitive(pl, "dense");
    const cJSON *dg = cJSON_GetObjectItemCaseSensitive(pl, "decode_attention");
    const cJSON *hdc = cJSON_GetObjectItemCaseSensitive(prof, "lm_head");
    const cJSON *sq = cJSON_GetObjectItemCaseSensitive(dg, "seqs");
    const cJSON *kv = cJSON_GetObjectItemCaseSensitive(dg, "kv_tokens");
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(dg, "us");
    /* bytes an element: the profile's dtype (fp32 where it is the CPU runtime's) */
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(prof, "dtype");
    double esz = cJSON_IsString(dt) && !strcmp(dt->valuestring, "fp32") ? 4 : 2;
    double wbytes = esz * (double)(cal_dec_params(d) - (d->tied ? 0 : (int64_t)d->vocab * d->hidden));
    printf("\ndecode iterations (one token each of B sequences, K context tokens in all): their "
           "bytes (%.2f GB of weights, %.0f KB of K and V a context token) over their GPU time, "
           "against %s's %.0f GB/s (-: a cell not measured, the model's %d positions or K < B; "
           "the profile extends it):\n%6s", wbytes / 1e9, esz * 2 * L * nkv * hd / 1e3, kind,
           ge->gpu.mem_bw_gbs, d->max_pos, "B \\ K");
    for (int j = 0; j < cJSON_GetArraySize(kv); j++)
        printf(" %7.0f", cJSON_GetArrayItem(kv, j)->valuedouble);
    printf("\n");
    for (int i = 0; i < cJSON_GetArraySize(sq); i++) {
        double B = cJSON_GetArrayItem(sq, i)->valuedouble, dense = -1, head = -1;
        for (int k = 0; k < cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(dn, "tokens")); k++)
            if (num_at(dn, "tokens", k) == B)
                dense = num_at(dn, "us", k);
        for (int k = 0; k < cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(hdc, "seqs")); k++)
            if (num_at(hdc, "seqs", k) == B)
                head = num_at(hdc, "us", k);
        if (dense < 0 || head < 0)
            continue;                 /* B is not a dense point: no time of its own */
        printf("%6.0f", B);
        const cJSON *r = cJSON_GetArrayItem(rows, i);
        for (int j = 0; j < cJSON_GetArraySize(kv); j++) {
            double K = cJSON_GetArrayItem(kv, j)->valuedouble;
            double us = L * (dense + cJSON_GetArrayItem(r, j)->valuedouble) + head;
            double bytes = wbytes + esz * 2 * L * nkv * hd * K;
            if (K < B || ceil(K / B) > d->max_pos)      /* as cal_dec_cal's plan measures */
                printf(" %7s", "-");
            else
                printf(" %6.0f%%", 100 * bytes / (us * 1e-6) / (ge->gpu.mem_bw_gbs * 1e9));
        }
        printf("\n");
    }
}

int cmd_llm_measure(const struct opts *o)
{
    if (o->nnets != 1)
        return sim_err_set(SIM_EUSAGE, "llm-measure: expected one decoder, got %d", o->nnets);
    if (!cli_is_decoder(o->nets[0]))
        return sim_err_set(SIM_EUSAGE, "llm-measure: %s is not a decoder (servesim-decoder/1; "
                           "`servesim-calibrate nets` lists them)", o->nets[0]);
    struct cal_dec *d = NULL;
    int rc;
    bool gpu;
    char dev[256], ver[512], kind[64];
    /* the GPU runtime draws its own weights on the device: none on the host */
    if ((rc = runtime_of(o, &gpu)) ||
        (rc = device_of(o, gpu, dev, sizeof dev, ver, sizeof ver, kind, sizeof kind)) ||
        (rc = load_decoder(o, !gpu, &d)))
        return rc;
    struct cal_dec_cal_opts co = {.d = d, .threads = o->threads[0], .warmup = o->warmup,
                                  .reps = o->reps, .kind = o->kind ? o->kind : kind,
                                  .device = dev, .versions = ver, .no_check = o->no_check,
                                  .gpu = gpu, .eager = o->eager, .gpu_dev = o->device,
                                  .seed = o->seed};
    copy_axis(co.tokens, &co.ntokens, o->tokens, o->ntokens);
    copy_axis(co.chunks, &co.nchunks, o->chunks, o->nchunks);
    copy_axis(co.contexts, &co.ncontexts, o->contexts, o->ncontexts);
    copy_axis(co.seqs, &co.nseqs, o->seqs, o->nseqs);
    copy_axis(co.kv, &co.nkv, o->kvs, o->nkvs);
    cal_dec_default_axes(&co);
    if (gpu)
        fprintf(stderr, "llm-measure %s on %s (%s), %d warm-up + %d timed rounds\n", d->name, dev,
                co.kind, co.warmup, co.reps);
    else
        fprintf(stderr, "llm-measure %s on %s, %d thread%s, %d warm-up + %d timed rounds\n",
                d->name, dev, co.threads, co.threads == 1 ? "" : "s", co.warmup, co.reps);
    cJSON *prof = NULL;
    struct cal_dec_check_row rows[CAL_DEC_CHECK_ROWS];
    int nrows = 0;
    rc = cal_dec_measure(&co, true, &prof, rows, &nrows);
    if (!rc) {
        const cJSON *pl = cJSON_GetObjectItemCaseSensitive(prof, "per_layer");
        const cJSON *dn = cJSON_GetObjectItemCaseSensitive(pl, "dense");
        const cJSON *tk = cJSON_GetObjectItemCaseSensitive(dn, "tokens");
        const cJSON *us = cJSON_GetObjectItemCaseSensitive(dn, "us");
        printf("%s: dense operators per layer against the iteration's tokens T\n%8s %12s %14s\n",
               d->name, "T", "us", "us per token");
        for (int i = 0; i < cJSON_GetArraySize(tk); i++) {
            double t = cJSON_GetArrayItem(tk, i)->valuedouble, u = cJSON_GetArrayItem(us, i)->valuedouble;
            printf("%8.0f %12.2f %14.3f\n", t, u, u / t);
        }
        print_peaks(d, prof, co.kind);
        if (nrows > 0)
            print_check(rows, nrows);
        if (o->out) {
            rc = cli_write_json(o->out, prof);
            if (!rc)
                printf("\nwrote %s (servesim-llm-profile/1: model %s, gpu %s): use it as a "
                       "model's llm.profile {\"file\": ...}\n", o->out, d->arch, co.kind);
        }
        if (!rc && o->db) {             /* a profiles row: the profile and its check */
            cJSON *chk = cJSON_CreateArray();
            for (int i = 0; chk && i < nrows; i++) {
                cJSON *r = cJSON_CreateObject();
                cJSON_AddStringToObject(r, "what", rows[i].what);
                cJSON_AddNumberToObject(r, "tokens", rows[i].tokens);
                cJSON_AddNumberToObject(r, "seqs", rows[i].seqs);
                cJSON_AddNumberToObject(r, "measured_us", rows[i].measured_us);
                cJSON_AddNumberToObject(r, "profile_us", rows[i].predicted_us);
                cJSON_AddNumberToObject(r, "err", rows[i].err);
                cJSON_AddItemToArray(chk, r);
            }
            char host[128];
            cal_host_name(host, sizeof host);
            double mb = (double)cal_dec_params(d) * (gpu ? 2 : 4) / 1048576.0;
            rc = chk ? cal_profile_write_llm_db(o->db, prof, d->file, o->backend, host,
                                                co.threads, mb, chk)
                     : SIM_ENOMEM;
            cJSON_Delete(chk);
            if (!rc)
                printf("added a profiles row (form llm-iteration) to %s\n", o->db);
        }
    }
    cJSON_Delete(prof);
    cal_dec_destroy(d);
    return rc;
}

/* The first `want` requests of --trace (a token trace), their lengths clipped to --prompt and
 * --output (*clipped: how many were); arrays owned by the caller. */
static int read_token_trace(const struct opts *o, int want, double **t, int32_t **pr,
                            int32_t **out, int *n, int *clipped)
{
    const char *files[1] = {o->trace};
    bool mc = o->trace_format && !strcmp(o->trace_format, "mooncake");
    struct trace_spec sp = {.format = mc ? TRACE_MOONCAKE : TRACE_AZURE_LLM, .nfiles = 1,
                            .files = files, .block_tokens = 512};
    struct trace_reader *rd = NULL;
    *n = *clipped = 0;
    *t = malloc((size_t)want * sizeof **t);
    *pr = malloc((size_t)want * sizeof **pr);
    *out = malloc((size_t)want * sizeof **out);
    int rc = *t && *pr && *out ? trace_open(&sp, &rd) : SIM_ENOMEM;
    struct trace_rec rec;
    while (!rc && *n < want && (rc = trace_next(rd, &rec)) == 1) {
        int p = rec.prompt, q = rec.output;
        p = p < o->prompt[0] ? o->prompt[0] : p > o->prompt[1] ? o->prompt[1] : p;
        q = q < o->output[0] ? o->output[0] : q > o->output[1] ? o->output[1] : q;
        *clipped += p != rec.prompt || q != rec.output;
        (*t)[*n] = rec.t, (*pr)[*n] = p, (*out)[*n] = q;
        (*n)++;
        rc = 0;
    }
    trace_close(rd);
    if (rc < 0)
        return rc;
    if (*n < 2)
        return sim_err_set(SIM_EINVAL, "--trace %s: %d request%s; at least 2 are needed for a "
                           "rate", o->trace, *n, *n == 1 ? "" : "s");
    return 0;
}

int cmd_llm_validate(const struct opts *o)
{
    if (o->nnets != 1)
        return sim_err_set(SIM_EUSAGE, "llm-validate: expected one decoder, got %d", o->nnets);
    if (!cli_is_decoder(o->nets[0]))
        return sim_err_set(SIM_EUSAGE, "llm-validate: %s is not a decoder", o->nets[0]);
    if (!o->profile)
        return sim_err_set(SIM_EUSAGE, "llm-validate: expected --profile FILE (llm-measure --out "
                           "writes one)");
    struct cal_dec *d = NULL;
    cJSON *prof = NULL;
    int rc;
    bool gpu;
    if ((rc = runtime_of(o, &gpu)) || (rc = sim_json_load_file(o->profile, &prof)))
        return rc;
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(prof, "gpu");
    const char *kind = cJSON_IsString(g) ? g->valuestring : "cpu";
    /* the profile must time what this runtime runs: its dtype, and on a GPU its kind */
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(prof, "dtype");
    const char *want = gpu ? "fp16" : "fp32";
    char dev[256], ver[512], dkind[64];
    if (!cJSON_IsString(dt) || strcmp(dt->valuestring, want) != 0)
        rc = sim_err_set(SIM_EINVAL, "%s: dtype: a profile of %s, but --backend %s runs %s: "
                         "measure one with llm-measure --backend %s", o->profile,
                         cJSON_IsString(dt) ? dt->valuestring : "(none)", o->backend, want,
                         o->backend);
    else if (gpu && !(rc = device_of(o, gpu, dev, sizeof dev, ver, sizeof ver, dkind,
                                     sizeof dkind)) && strcmp(kind, dkind) != 0)
        rc = sim_err_set(SIM_EINVAL, "%s: gpu: a profile of %s, but this GPU is %s (%s)",
                         o->profile, kind, dkind, dev);
    if (rc || (rc = load_decoder(o, !gpu, &d))) {
        cJSON_Delete(prof);
        return rc;
    }
    char scratch[] = "/tmp/servesim_llm_validate_XXXXXX";
    if (!mkdtemp(scratch)) {
        cJSON_Delete(prof);
        cal_dec_destroy(d);
        return sim_err_set(SIM_EIO, "cannot make a scratch folder in /tmp");
    }
    struct cal_llm_validate_opts vo = {
        .d = d, .threads = o->threads[0], .gpu = gpu, .eager = o->eager,
        .gpu_dev = o->device, .profile = prof, .kind = kind,
        .max_num_seqs = o->max_num_seqs, .max_tokens = o->max_batched, .kv_blocks = o->kv_blocks,
        .nloads = o->nloads, .requests = o->requests, .prompt_lo = o->prompt[0],
        .prompt_hi = o->prompt[1], .out_lo = o->output[0], .out_hi = o->output[1],
        .seed = o->seed, .scratch = scratch, .iterations_out = o->table_out,
        .virtual_clock = o->virtual_clock};
    memcpy(vo.loads, o->loads, sizeof vo.loads);
    double *tr_t = NULL;
    int32_t *tr_p = NULL, *tr_o = NULL;
    int clipped = 0;
    if (o->trace && !(rc = read_token_trace(o, o->requests, &tr_t, &tr_p, &tr_o, &vo.tr_n,
                                            &clipped))) {
        vo.tr_t = tr_t, vo.tr_prompt = tr_p, vo.tr_output = tr_o;
        printf("trace %s: its first %d requests, %d with a length clipped to prompts %d-%d and "
               "outputs %d-%d; their own rate %.2f req/s, scaled to each load's\n", o->trace,
               vo.tr_n, clipped, o->prompt[0], o->prompt[1], o->output[0], o->output[1],
               vo.tr_n > 1 && tr_t[vo.tr_n - 1] > tr_t[0]
                   ? (vo.tr_n - 1) / (tr_t[vo.tr_n - 1] - tr_t[0]) : 0);
    }
    /* the profile must be of this decoder on that device: read it as the simulator does */
    struct cal_dec_seq one = {1, 1, NULL, NULL};
    double ns = 0, cap = 0;
    if (!rc && !(rc = cal_dec_predict(d, prof, kind, &one, 1, &ns)))
        rc = cal_llm_capacity(&vo, &cap);
    struct cal_llm_validate_row rows[CAL_LLM_MAX_LOADS];
    if (!rc) {
        printf("%s on %s: a real continuous-batching server (max_num_seqs %d, "
               "max_num_batched_tokens %d, %ld KV blocks of 16) against servesim's vllm policy "
               "with %s; %d requests a load, prompts %d-%d, outputs %d-%d tokens; capacity by "
               "the profile %.2f req/s\n", d->name, kind, vo.max_num_seqs, vo.max_tokens,
               vo.kv_blocks, o->profile, vo.tr_n > 0 ? vo.tr_n : vo.requests, vo.prompt_lo,
               vo.prompt_hi, vo.out_lo, vo.out_hi, cap);
        fflush(stdout);
        rc = cal_llm_validate(&vo, rows);
    }
    FILE *tsv = NULL;
    if (!rc && o->tsv && !(tsv = fopen(o->tsv, "a")))
        rc = sim_err_set(SIM_EIO, "%s: cannot append", o->tsv);
    if (tsv && fseek(tsv, 0, SEEK_END) == 0 && ftell(tsv) == 0)   /* a new file: its header */
        fprintf(tsv, "decoder\tload\trate_rps\tttft_mean_real\tttft_mean_sim\tttft_mean_obs\t"
                "ttft_p99_real\tttft_p99_sim\tttft_p99_obs\ttpot_mean_real\ttpot_mean_sim\t"
                "tpot_mean_obs\ttpot_p99_real\ttpot_p99_sim\ttpot_p99_obs\titer_over_profile\t"
                "noise_ttft\tpreemptions_real\tpreemptions_sim\titer_cv\n");
    if (!rc) {
        printf("\n%5s %7s | %-26s | %-26s | %-26s | %-26s | %6s %6s %6s %5s | %5s %5s\n", "load",
               "req/s", "TTFT mean ms real/sim/obs", "TTFT p99 ms real/sim/obs",
               "TPOT mean ms real/sim/obs", "TPOT p99 ms real/sim/obs", "it/pro", "|e|p50",
               "|e|p90", "cv", "nTTFT", "nTPOT");
        for (int i = 0; i < vo.nloads; i++) {
            const struct cal_llm_validate_row *r = &rows[i];
            char c[4][48];
            const double v[4][3] = {
                {r->real.ttft_mean_ms, r->sim.ttft_mean_ms, r->obs.ttft_mean_ms},
                {r->real.ttft_p99_ms, r->sim.ttft_p99_ms, r->obs.ttft_p99_ms},
                {r->real.tpot_mean_ms, r->sim.tpot_mean_ms, r->obs.tpot_mean_ms},
                {r->real.tpot_p99_ms, r->sim.tpot_p99_ms, r->obs.tpot_p99_ms}};
            for (int k = 0; k < 4; k++)
                snprintf(c[k], sizeof c[k], "%.2f/%.2f/%.2f (%+.1f%%)", v[k][0], v[k][1], v[k][2],
                         100 * (v[k][1] / v[k][0] - 1));
            printf("%5.2f %7.2f | %-26s | %-26s | %-26s | %-26s | %6.3f %5.1f%% %5.1f%% %5.3f | "
                   "%4.1f%% %4.1f%%\n", r->load, r->rate_rps, c[0], c[1], c[2], c[3], r->ratio,
                   100 * r->it_err_p50, 100 * r->it_err_p90, r->it_cv, 100 * r->noise_ttft,
                   100 * r->noise_tpot);
            if (tsv)
                fprintf(tsv, "%s\t%.3f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t"
                        "%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%ld\t%ld\t%.4f\n", d->name, r->load,
                        r->rate_rps, v[0][0], v[0][1], v[0][2], v[1][0], v[1][1], v[1][2],
                        v[2][0], v[2][1], v[2][2], v[3][0], v[3][1], v[3][2], r->ratio,
                        r->noise_ttft, r->real.preemptions, r->sim.preemptions, r->it_cv);
        }
        printf("(error in brackets: sim over real. obs: the simulator with the profile scaled by "
               "it/pro, the real iterations' time over the profile's for the same shapes, and "
               "their spread cv as the iterations' jitter (cluster.exec_cv): sim - obs is the "
               "profile's error under serving, obs - real the simulator's. |e|: per iteration "
               "|real/profile - 1|. nTTFT, nTPOT: the simulator's own spread of the means over 10 "
               "other arrival sequences)\n");
        if (o->tsv)
            printf("appended %d rows to %s\n", vo.nloads, o->tsv);
    }
    if (tsv && fclose(tsv) != 0 && !rc)
        rc = sim_err_set(SIM_EIO, "%s: cannot write", o->tsv);
    rmdir(scratch);
    free(tr_t), free(tr_p), free(tr_o);
    cJSON_Delete(prof);
    cal_dec_destroy(d);
    return rc;
}
