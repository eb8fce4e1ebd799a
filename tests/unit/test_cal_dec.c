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
#include "cal_ref.h"
#include "sim_err.h"
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
        {"llama_3_8b", 8030261248}, {"mistral_7b", 7241732096}, {"qwen2_5_7b", 7615616512}};
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
static void runtime_matches_reference_on(const char *file)
{
    struct cal_dec *d = load(file);
    REQUIRE_OK(cal_dec_init_weights(d, 7));
    enum { NS = 3, BS = 16, NB = 48, MAXLEN = 160 };
    struct cal_dec_rt *rt = NULL;
    struct cal_dec_rt_opts o = {.threads = 2, .block_size = BS, .kv_blocks = NB,
                                .max_tokens = 128, .max_seqs = 8};
    REQUIRE_OK(cal_dec_rt_create(d, &o, &rt));
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
            int arg = 0;
            for (int v = 1; v < d->vocab; v++)
                arg = ref[v] > ref[arg] ? v : arg;
            CHECK(next[k] == arg, "%s step %d seq %d: sampled %d, the reference's argmax %d",
                  file, step, i, next[k], arg);
            tok[i][len[i]++] = next[k];             /* greedy decoding */
        }
    }
    CHECK(compared >= 15, "%s: %d comparisons", file, compared);
    CHECK(worst < 1e-4, "%s: worst relative error of the logits %.3g", file, worst);
    printf("%s: %d steps of logits compared, worst relative error %.2e\n", file, compared, worst);
    for (int i = 0; i < NS; i++)
        free(tok[i]);
    free(logits), free(ref);
    cal_dec_rt_destroy(rt);
    cal_dec_destroy(d);
}

static void runtime_matches_reference(void)
{
    runtime_matches_reference_on("tiny_llama");
    runtime_matches_reference_on("tiny_qwen");       /* q, k, v biases; one KV head */
}

/* Operator timing adds up: with every operator timed, their sum is the iteration's wall time
 * but for the timer's own cost, and each operator that ran has a time. */
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
    REQUIRE_OK(cal_dec_rt_step(rt, s, 2, NULL, NULL));
    for (int k = 0; k < CAL_DEC_NOPS; k++)
        CHECK(ns[k] > 0, "%s: no time", cal_dec_op_name((enum cal_dec_op)k));
    free(t);
    cal_dec_rt_destroy(rt);
    cal_dec_destroy(d);
}

int main(int argc, char **argv)
{
    static const struct test_case cases[] = {
        {"decoders_match_published", decoders_match_published},
        {"bad_decoder_files", bad_decoder_files},
        {"runtime_matches_reference", runtime_matches_reference},
        {"operator_times_cover_the_iteration", operator_times_cover_the_iteration},
    };
    return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
