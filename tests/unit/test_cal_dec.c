/* test_cal_dec — servesim-calibrate's decoders: the shipped files' parameter counts against
 * the published ones, precise errors for bad files, and the runtime (paged KV cache, chunked
 * prefill, mixed iterations, oneDNN GEMMs) against the reference, which recomputes every
 * sequence from its tokens with no cache: the logits must agree at every step. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cal_dec.h"
#include "cal_dec_cal.h"
#include "cal_dec_serve.h"
#include "cal_ref.h"
#include "sim_err.h"
#include "sim_json.h"
#include "sim_wall.h"
#include "test.h"

static struct cal_dec *load(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.json", SERVESIM_NET_DIR, name);
    struct cal_dec *d = NULL;
    REQUIRE_OK(cal_dec_load(path, &d));
    return d;
}

static void decoders_match_published(void)
{
    /* the model cards' counts, and by hand for Llama-3-8B: 2 x 128256 x 4096 (embedding and
     * head) + 32 x (4096 x 6144 + 4096 x 4096 + 3 x 4096 x 14336 + 2 x 4096) + 4096 */
    static const struct { const char *file; int64_t want; } m[] = {
        {"llama_3_8b", 8030261248LL}, {"mistral_7b", 7241732096LL}, {"qwen2_5_7b", 7615616512LL}};
    CHECK(2LL * 128256 * 4096 + 32LL * (4096LL * 6144 + 4096LL * 4096 + 3LL * 4096 * 14336 +
                                        2 * 4096) + 4096 == 8030261248LL, "hand count");
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        struct cal_dec *d = load(m[i].file);
        CHECK(cal_dec_params(d) == m[i].want, "%s: %lld parameters, published %lld", m[i].file,
              (long long)cal_dec_params(d), (long long)m[i].want);
        CHECK(d->pub_params == m[i].want, "%s: the file says %lld", m[i].file,
              (long long)d->pub_params);
        cal_dec_destroy(d);
    }
    struct cal_dec *t = load("tiny_llama");
    CHECK(t->layers == 2 && t->hidden == 256 && strcmp(t->arch, "tiny") == 0, "tiny");
    /* tied: one 1000 x 256 table; per layer 256 x 512 (q, k, v) + 256 x 256 + 3 x 256 x 512
     * + 2 x 256; the final norm */
    CHECK(cal_dec_params(t) == 1000 * 256 + 2 * (256 * 512 + 256 * 256 + 3 * 256 * 512 + 512) + 256,
          "tiny: %lld", (long long)cal_dec_params(t));
    cal_dec_destroy(t);
}

static void bad_decoder_files(void)
{
    static const struct { const char *text, *want; } c[] = {
        {"{\"format\": \"servesim-decoder/2\"}", "format: expected \"servesim-decoder/1\""},
        {"{\"format\": \"servesim-decoder/1\", \"name\": \"x\", \"arch\": \"x\", \"hidden_size\": 64,"
         " \"num_hidden_layers\": 1, \"num_attention_heads\": 4, \"num_key_value_heads\": 3,"
         " \"head_dim\": 16, \"intermediate_size\": 8, \"vocab_size\": 10,"
         " \"max_position_embeddings\": 8, \"rope_theta\": 1e4, \"rms_norm_eps\": 1e-5,"
         " \"tie_word_embeddings\": true, \"attention_bias\": false}",
         "num_key_value_heads: expected a divisor of num_attention_heads (4), got 3"},
        {"{\"format\": \"servesim-decoder/1\", \"name\": \"x\", \"arch\": \"x\", \"hidden_size\": 64}",
         "num_hidden_layers"},
        {"{\"format\": \"servesim-decoder/1\", \"name\": \"x\", \"arch\": \"x\", \"hidden\": 64}",
         "hidden"}};
    char path[] = "/tmp/servesim_dec_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    close(fd);
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        FILE *f = fopen(path, "w");
        fputs(c[i].text, f);
        fclose(f);
        struct cal_dec *d = NULL;
        int rc = cal_dec_load(path, &d);
        CHECK(rc == SIM_EINVAL && d == NULL, "case %zu: rc %d", i, rc);
        CHECK(strstr(sim_err_msg(), c[i].want) && strstr(sim_err_msg(), path),
              "case %zu: \"%s\" lacks \"%s\" or the file", i, sim_err_msg(), c[i].want);
    }
    FILE *f = fopen(path, "w");
    fputs("{\"format\": \"servesim-net/1\"}", f);
    fclose(f);
    CHECK(!cal_dec_is_file(path), "a network file is not a decoder");
    unlink(path);
}

/* Three requests through the runtime as a serving engine would run them (chunked prefills
 * beside decodes, blocks scattered over the pool), each step's logits against the reference
 * run over the sequence's whole prefix from scratch. */
/* Three requests through nine mixed iterations (chunked prefills beside decodes, blocks
 * interleaved), each finished prompt's logits against the reference from scratch: on the CPU
 * in fp32 (1e-4), or on the GPU in fp16 (2e-2, as the CNNs' fp16 check), its decode-only steps
 * as CUDA graphs unless eager. false: no GPU here. */
static bool runtime_matches_reference_on(const char *file, bool gpu, bool eager)
{
    struct cal_dec *d = load(file);
    REQUIRE_OK(cal_dec_init_weights(d, 7));
    enum { NS = 3, BS = 16, NB = 48, MAXLEN = 160 };
    struct cal_dec_rt *rt = NULL;
    struct cal_dec_rt_opts o = {.threads = 2, .block_size = BS, .kv_blocks = NB,
                                .max_tokens = 128, .max_seqs = 8, .gpu = gpu, .eager = eager};
    int rc = cal_dec_rt_create(d, &o, &rt);
    if (gpu && rc == SIM_EUNAVAIL) {
        printf("skipped: %s\n", sim_err_msg());
        cal_dec_destroy(d);
        return false;
    }
    REQUIRE_OK(rc);
    double tol = gpu ? 2e-2 : 1e-4;
    int prompt[NS] = {37, 5, 70};
    int32_t *tok[NS], blocks[NS][MAXLEN / BS + 1];
    int len[NS], done[NS];                      /* tokens known; tokens in the cache */
    for (int i = 0; i < NS; i++) {
        tok[i] = calloc(MAXLEN, sizeof(int32_t));
        int32_t *t = cal_dec_tokens(d, prompt[i], 100 + (uint64_t)i);
        memcpy(tok[i], t, (size_t)prompt[i] * sizeof *t);
        free(t);
        len[i] = prompt[i], done[i] = 0;
        for (int b = 0; b < MAXLEN / BS + 1; b++)   /* interleaved and reversed */
            blocks[i][b] = (int32_t)(NB - 1 - (b * NS + i));
    }
    float *logits = malloc((size_t)NS * (size_t)d->vocab * sizeof(float));
    float *ref = malloc((size_t)d->vocab * sizeof(float));
    double worst = 0;
    int compared = 0;
    for (int step = 0; step < 9; step++) {
        struct cal_dec_seq s[NS];
        int who[NS], n = 0;
        for (int i = 0; i < NS; i++) {
            if (step < i)                           /* arrivals one step apart */
                continue;
            int q = len[i] - done[i];
            if (q > 24)                             /* a chunked prefill */
                q = 24;
            s[n] = (struct cal_dec_seq){q, done[i], tok[i] + done[i], blocks[i]};
            who[n++] = i;
        }
        int32_t next[NS];
        REQUIRE_OK(cal_dec_rt_step(rt, s, n, logits, next));
        for (int k = 0; k < n; k++) {
            int i = who[k];
            done[i] += s[k].q;
            if (done[i] < len[i])
                continue;                           /* the prompt is not in yet */
            REQUIRE_OK(cal_dec_ref_logits(d, tok[i], done[i], ref));
            double e = cal_ref_rel_err(logits + (size_t)k * (size_t)d->vocab, ref, d->vocab);
            worst = e > worst ? e : worst;
            compared++;
            /* the sampler: the argmax of the reference's logits (fp32), of its own (fp16:
             * near-ties may part from the reference's) */
            const float *own = logits + (size_t)k * (size_t)d->vocab, *am = gpu ? own : ref;
            int arg = 0;
            for (int v = 1; v < d->vocab; v++)
                arg = am[v] > am[arg] ? v : arg;
            CHECK(next[k] == arg, "%s step %d seq %d: sampled %d, the argmax %d", file, step, i,
                  next[k], arg);
            tok[i][len[i]++] = next[k];             /* greedy decoding */
        }
    }
    CHECK(compared >= 15, "%s: %d comparisons", file, compared);
    CHECK(worst < tol, "%s: worst relative error of the logits %.3g", file, worst);
    printf("%s%s: %d steps of logits compared, worst relative error %.2e\n", file,
           gpu ? (eager ? " (GPU, eager)" : " (GPU, graphs)") : "", compared, worst);
    for (int i = 0; i < NS; i++)
        free(tok[i]);
    free(logits), free(ref);
    cal_dec_rt_destroy(rt);
    cal_dec_destroy(d);
    return true;
}

static void runtime_matches_reference(void)
{
    runtime_matches_reference_on("tiny_llama", false, false);
    runtime_matches_reference_on("tiny_qwen", false, false);  /* q, k, v biases; one KV head */
}

/* The same on the GPU runtime, with CUDA graphs and eager; exits 77 (skipped) without a GPU or
 * a build without CUDA. */
static void gpu_runtime_matches_reference(void)
{
    if (!runtime_matches_reference_on("tiny_llama", true, false))
        exit(77);
    runtime_matches_reference_on("tiny_llama", true, true);
    runtime_matches_reference_on("tiny_qwen", true, false);
}

/* Operator timing: every operator of a mixed iteration (a prefill chunk beside a decode) has
 * a time, and their sum is at most the iteration's wall time around the step (the operators'
 * intervals are disjoint parts of it), whatever the machine's load. */
static void operator_times_cover_the_iteration(void)
{
    struct cal_dec *d = load("tiny_llama");
    REQUIRE_OK(cal_dec_init_weights(d, 1));
    struct cal_dec_rt *rt = NULL;
    struct cal_dec_rt_opts o = {.threads = 1, .block_size = 16, .kv_blocks = 64,
                                .max_tokens = 256, .max_seqs = 8};
    REQUIRE_OK(cal_dec_rt_create(d, &o, &rt));
    int32_t *t = cal_dec_tokens(d, 300, 3), blk[2][32];
    for (int b = 0; b < 32; b++)
        blk[0][b] = (int32_t)b, blk[1][b] = (int32_t)(32 + b);
    struct cal_dec_seq s[2] = {{64, 0, t, blk[0]}, {1, 200, t + 200, blk[1]}};
    double ns[CAL_DEC_NOPS] = {0};
    cal_dec_rt_timing(rt, ns);
    int32_t next[2];
    double t0 = sim_wall_seconds();
    REQUIRE_OK(cal_dec_rt_step(rt, s, 2, NULL, next));
    double wall = (sim_wall_seconds() - t0) * 1e9, sum = 0;
    for (int k = 0; k < CAL_DEC_NOPS; k++) {
        CHECK(ns[k] > 0, "%s: no time", cal_dec_op_name((enum cal_dec_op)k));
        sum += ns[k];
    }
    CHECK(sum <= wall, "the operators' %.0f ns exceed the iteration's %.0f ns", sum, wall);
    free(t);
    cal_dec_rt_destroy(rt);
    cal_dec_destroy(d);
}

/* llm-measure's tables on the tiny decoder (small axes, no check rows): a profile the
 * simulator reads, of the axes asked for, every time at least 0, decode rows non-decreasing
 * in their context, and its prediction of an iteration the sum of its parts. */
static void measured_profile_reads_back(void)
{
    struct cal_dec *d = load("tiny_llama");
    REQUIRE_OK(cal_dec_init_weights(d, 1));
    struct cal_dec_cal_opts o = {.d = d, .threads = 1, .warmup = 1, .reps = 3, .kind = "cpu",
                                 .device = "test CPU", .versions = "", .no_check = true,
                                 .tokens = {1, 8, 32}, .ntokens = 3, .chunks = {16, 64},
                                 .nchunks = 2, .contexts = {0, 64}, .ncontexts = 2,
                                 .seqs = {1, 4}, .nseqs = 2, .kv = {64, 256, 8192}, .nkv = 3};
    cJSON *p = NULL;
    struct cal_dec_check_row rows[CAL_DEC_CHECK_ROWS];
    int nrows = -1;
    REQUIRE_OK(cal_dec_measure(&o, false, &p, rows, &nrows));
    CHECK(nrows == 0, "no check rows asked for, got %d", nrows);
    const cJSON *pl = cJSON_GetObjectItemCaseSensitive(p, "per_layer");
    const cJSON *dn = cJSON_GetObjectItemCaseSensitive(pl, "dense");
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(dn, "tokens")) == 3, "dense axis");
    const cJSON *da = cJSON_GetObjectItemCaseSensitive(pl, "decode_attention");
    const cJSON *rowsj = cJSON_GetObjectItemCaseSensitive(da, "us"), *r;
    CHECK(cJSON_GetArraySize(rowsj) == 2, "a decode row per --seqs point");
    cJSON_ArrayForEach(r, rowsj) {
        double last = -1;
        const cJSON *v;
        CHECK(cJSON_GetArraySize(r) == 3, "a cell per kv point");
        cJSON_ArrayForEach(v, r) {
            CHECK(v->valuedouble >= last, "a decode row falls: %g after %g", v->valuedouble, last);
            last = v->valuedouble;
        }
    }
    /* 8192 context tokens for one sequence pass tiny's 4096 positions: extended, not measured,
     * and decode_one holds the measured cells of the one-sequence row only */
    const cJSON *one = cJSON_GetObjectItemCaseSensitive(pl, "decode_one");
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(one, "context")) == 2,
          "decode_one: the two measured contexts");
    CHECK(!strcmp(cJSON_GetObjectItemCaseSensitive(p, "model")->valuestring, "tiny") &&
          !strcmp(cJSON_GetObjectItemCaseSensitive(p, "gpu")->valuestring, "cpu"), "model, gpu");
    /* the engine reads it; one decode costs its layers' dense and attention and the head */
    struct cal_dec_seq s = {1, 64, NULL, NULL};
    double ns = 0;
    REQUIRE_OK(cal_dec_predict(d, p, "cpu", &s, 1, &ns));
    const cJSON *du = cJSON_GetObjectItemCaseSensitive(dn, "us");
    double want = 2 * (cJSON_GetArrayItem(du, 0)->valuedouble +
                       cJSON_GetArrayItem(cJSON_GetArrayItem(rowsj, 0), 0)->valuedouble) +
                  cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
                      cJSON_GetObjectItemCaseSensitive(p, "lm_head"), "us"), 0)->valuedouble +
                  cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
                      cJSON_GetObjectItemCaseSensitive(p, "host"), "us"), 0)->valuedouble;
    CHECK(fabs(ns / 1e3 - want) < 1e-6 * want + 1e-6, "one decode: %.6f us, the parts %.6f us",
          ns / 1e3, want);
    /* another device's profile is refused with the reason */
    CHECK(cal_dec_predict(d, p, "h100", &s, 1, &ns) == SIM_EINVAL &&
          strstr(sim_err_msg(), "a measured profile times only what it measured"), "%s",
          sim_err_msg());
    cJSON_Delete(p);
    cal_dec_destroy(d);
}

/* The real server's scheduler against the simulator's vllm policy: on the virtual clock
 * (each iteration as long as the profile says) the two must agree to the nanosecond, TTFT and
 * TPOT means, iterations and preemptions alike, at a load that preempts too. */
static void server_matches_simulator_on_virtual_clock(void)
{
    struct cal_dec *d = load("tiny_llama");
    REQUIRE_OK(cal_dec_init_weights(d, 1));
    static const char text[] =
        "{\"format\": \"servesim-llm-profile/1\", \"model\": \"tiny\", \"gpu\": \"cpu\", \"tp\": 1,"
        " \"per_layer\": {\"dense\": {\"tokens\": [1, 64, 512], \"us\": [40, 300, 3000]},"
        "  \"prefill_attention\": {\"chunk\": [2, 512], \"context\": [0, 2048],"
        "   \"us\": [[1, 30], [800, 9000]]},"
        "  \"decode_attention\": {\"seqs\": [1, 64], \"kv_tokens\": [64, 16384],"
        "   \"us\": [[5, 900], [40, 1100]]}},"
        " \"lm_head\": {\"seqs\": [1, 64], \"us\": [14, 200]},"
        " \"host\": {\"seqs\": [1, 64], \"us\": [3, 9]}}";
    cJSON *p = NULL;
    REQUIRE_OK(sim_json_parse(text, "profile", &p));
    char scratch[] = "/tmp/servesim_llm_test_XXXXXX";
    CHECK(mkdtemp(scratch) != NULL, "mkdtemp");
    struct cal_llm_validate_opts o = {
        .d = d, .threads = 1, .profile = p, .kind = "cpu", .max_num_seqs = 12, .max_tokens = 96,
        .kv_blocks = 90, .nloads = 2, .loads = {0.5, 1.6}, .requests = 120, .prompt_lo = 20,
        .prompt_hi = 140, .out_lo = 8, .out_hi = 60, .seed = 3, .scratch = scratch,
        .virtual_clock = true};
    struct cal_llm_validate_row rows[2];
    REQUIRE_OK(cal_llm_validate(&o, rows));
    for (int i = 0; i < 2; i++) {
        const struct cal_llm_side *a = &rows[i].real, *b = &rows[i].sim;
        printf("load %.1f: TTFT %.6f / %.6f ms, TPOT %.6f / %.6f ms, %ld / %ld iterations, "
               "%ld / %ld preemptions\n", rows[i].load, a->ttft_mean_ms, b->ttft_mean_ms,
               a->tpot_mean_ms, b->tpot_mean_ms, a->iterations, b->iterations, a->preemptions,
               b->preemptions);
        CHECK_NEAR(b->ttft_mean_ms, a->ttft_mean_ms, 1e-6);
        /* the simulator keeps a request's TPOT in whole nanoseconds (at most 1 ns a request
         * below; 2e-5 of a 0.2 ms TPOT at most 5e-6) */
        CHECK_NEAR(b->tpot_mean_ms, a->tpot_mean_ms, 2e-5);
        CHECK(a->iterations == b->iterations, "iterations %ld real, %ld simulated", a->iterations,
              b->iterations);
        CHECK(a->preemptions == b->preemptions, "preemptions %ld real, %ld simulated",
              a->preemptions, b->preemptions);
    }
    CHECK(rows[1].real.preemptions > 0, "the high load must preempt (%ld)", rows[1].real.preemptions);
    CHECK(rows[1].real.ttft_mean_ms > 3 * rows[0].real.ttft_mean_ms, "queueing at 1.6: %g vs %g",
          rows[1].real.ttft_mean_ms, rows[0].real.ttft_mean_ms);
    CHECK(rmdir(scratch) == 0, "validate left files in %s", scratch);
    cJSON_Delete(p);
    cal_dec_destroy(d);
}

int main(int argc, char **argv)
{
    static const struct test_case cases[] = {
        {"decoders_match_published", decoders_match_published},
        {"bad_decoder_files", bad_decoder_files},
        {"runtime_matches_reference", runtime_matches_reference},
        {"gpu_runtime_matches_reference", gpu_runtime_matches_reference},
        {"operator_times_cover_the_iteration", operator_times_cover_the_iteration},
        {"measured_profile_reads_back", measured_profile_reads_back},
        {"server_matches_simulator_on_virtual_clock", server_matches_simulator_on_virtual_clock},
    };
    return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
