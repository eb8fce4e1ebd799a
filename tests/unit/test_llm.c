/* test_llm — LLM replicas (sim_llm.h) against cases worked by hand: a lone request's TTFT
 * and end-to-end time to the nanosecond, two requests whose KV cannot both fit (exactly one
 * preemption, at the iteration predicted, both finishing with all their tokens), chunked
 * prefill in ceil(P / budget) chunks, the budget and max_num_seqs held in every iteration of
 * a random token trace with every token emitted once, the roofline's arithmetic, and the KV
 * pool's. Models are given a linear iteration profile (base + per token) so that every time
 * is a sum a reader can check. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "sim.h"
#include "sim_config.h"
#include "sim_err.h"
#include "sim_goodput.h"
#include "sim_metrics.h"
#include "test.h"
#include "test_src.h"
#include "wl_llm.h"

/* Arrivals at fixed times with their prompt and output tokens. */
struct tok_src {
    struct fixed_src f;
    const int32_t *prompt, *output;
    const struct sim_prefix *prefix;   /* [n] or NULL */
};
static void tok_tokens(void *ctx, struct sim_tokens *out)
{
    struct tok_src *ts = ctx;
    out->prompt = ts->prompt[ts->f.i - 1];
    out->output = ts->output[ts->f.i - 1];
    out->prefix = ts->prefix ? &ts->prefix[ts->f.i - 1] : NULL;
}
static int tok_next(void *ctx, int64_t *t, int *model, double *size)
{
    return fixed_next(&((struct tok_src *)ctx)->f, t, model, size);
}

/* Per iteration: the most tokens and sequences seen, and any iteration over the limits. */
struct iter_seen {
    int n, max_tokens, max_seqs, over;
    int first_preempt;           /* the iteration formed with the first preemption (1-based) */
    int budget, seqs_limit;
    long tokens;
};
static void iter_fn(void *ctx, const struct sim *s, int e, const struct sim_llm_seq *q, int n)
{
    struct iter_seen *v = ctx;
    const struct sim_llm_state *st = sim_llm_state(s, e);
    int t = 0;
    for (int i = 0; i < n; i++)
        t += q[i].new_tokens;
    v->n++;
    v->tokens += t;
    if (st->preemptions > 0 && v->first_preempt == 0)
        v->first_preempt = v->n;
    if (t > v->max_tokens)
        v->max_tokens = t;
    if (n > v->max_seqs)
        v->max_seqs = n;
    if (sim_llm_check(s, e)) {      /* every block's accounting, every iteration */
        fprintf(stderr, "iteration %d: %s\n", v->n, sim_err_msg());
        v->over++;
    }
    if (t > st->max_tokens || st->running > st->max_seqs || st->blocks_used > st->blocks_total ||
        (st->role != SIM_LLM_DECODE && st->max_tokens != v->budget) ||
        (st->role != SIM_LLM_PREFILL && st->max_seqs != v->seqs_limit))
        v->over++;                  /* over its limits, or limits not those configured */
}

/* The config `text` (relative files from `dir`), its arrivals replaced by t[i] with prompt[i],
 * output[i] (and prefix[i]), run to its end; iv (optional) sees every iteration. */
static struct sim *llm_run_text(const char *text, const char *dir, const int64_t *t,
                                const int32_t *prompt, const int32_t *output,
                                const struct sim_prefix *prefix, int n, struct iter_seen *iv,
                                struct sim_config **cfgp)
{
    struct sim_config *cfg;
    REQUIRE_OK(sim_config_from_text(text, "llm", dir, &cfg));
    static struct tok_src ts;
    ts = (struct tok_src){{t, n, 0, NULL, NULL}, prompt, output, prefix};
    struct sim_source src = {tok_next, fixed_close, &ts, 0, NULL, NULL, tok_tokens};
    struct sim *s;
    REQUIRE_OK(sim_create(&cfg->world, 1.0, cfg->world.policy, &src, 1, &s));
    if (iv) {
        static struct sim_observer obs;
        obs = (struct sim_observer){.ctx = iv, .llm_iteration = iter_fn};
        sim_set_observer(s, &obs);
    }
    REQUIRE_OK(sim_run(s));
    *cfgp = cfg;
    return s;
}

/* `gpus` H100s serving the `tiny` LLM model with the linear profile base 1000 us + 10 us per
 * token, host 100 us per iteration, blocks of 16 tokens, `blocks` of them, no network delays;
 * `policy` (a config's policy object; VLLM(params): vllm with these params); read from a
 * config as a user writes it. Arrivals t[i] with
 * prompt[i], output[i] replace the config's synthetic ones. */
static struct sim *llm_run_px(int gpus, long blocks, const char *policy, const int64_t *t,
                              const int32_t *prompt, const int32_t *output,
                              const struct sim_prefix *prefix, int n, struct iter_seen *iv,
                              struct sim_config **cfgp)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"duration_s\":100,\"cluster\":{\"gpus\":%d,\"gpu_kind\":\"h100\"},"
             "\"models\":[{\"name\":\"llm\",\"llm\":{\"model\":\"tiny\",\"profile\":"
             "{\"base_us\":1000,\"token_us\":10},\"host_us\":100,\"kv_blocks\":%ld}}],"
             "\"workload\":{\"rate_rps\":1,\"tokens\":{\"llm\":{\"prompt\":{\"mean\":10},"
             "\"output\":{\"mean\":10}}}},"
             "\"network\":{\"ctrl_us\":0,\"data_us_per_request\":0,\"resp_us\":0},"
             "\"policy\":%s,\"metrics\":{\"sample_period_s\":0}}",
             gpus, blocks, policy);
    return llm_run_text(text, ".", t, prompt, output, prefix, n, iv, cfgp);
}

static struct sim *llm_run(int gpus, long blocks, const char *policy, const int64_t *t,
                           const int32_t *prompt, const int32_t *output, int n,
                           struct iter_seen *iv, struct sim_config **cfgp)
{
    return llm_run_px(gpus, blocks, policy, t, prompt, output, NULL, n, iv, cfgp);
}

#define US 1000LL
#define VLLM(params) "{\"name\":\"vllm\",\"params\":" params "}"

/* cluster.exec_cv jitters an iteration as it does a batch: a lone request of 200 decodes of
 * 1110 us each under a cv of 0.25 has a TPOT near 1110 us (the mean of 200 lognormal factors of
 * mean 1: within 8%, four standard errors; the run is a function of its seed) but not exactly,
 * and with the cv at 0 exactly (lone_request). */
static void iterations_jitter(void)
{
    static const int64_t t[] = {0};
    static const int32_t p[] = {100}, o[] = {201};
    const char *text =
        "{\"duration_s\":100,\"cluster\":{\"gpus\":1,\"gpu_kind\":\"h100\",\"exec_cv\":0.25},"
        "\"models\":[{\"name\":\"llm\",\"llm\":{\"model\":\"tiny\",\"profile\":"
        "{\"base_us\":1000,\"token_us\":10},\"host_us\":100,\"kv_blocks\":1000}}],"
        "\"workload\":{\"rate_rps\":1,\"tokens\":{\"llm\":{\"prompt\":{\"mean\":10},"
        "\"output\":{\"mean\":10}}}},"
        "\"network\":{\"ctrl_us\":0,\"data_us_per_request\":0,\"resp_us\":0},"
        "\"policy\":{\"name\":\"vllm\"},\"metrics\":{\"sample_period_s\":0}}";
    struct sim_config *cfg;
    struct sim *s = llm_run_text(text, ".", t, p, o, NULL, 1, NULL, &cfg);
    const struct sim_llm_stats *ls = sim_model_llm_stats(s, 0);
    double tpot = (double)ls->tpot.min / 1e3;
    CHECK(ls->tpot.n == 1 && tpot != 1110 && fabs(tpot / 1110 - 1) < 0.08,
          "TPOT %.3f us: want near 1110 us but jittered", tpot);
    sim_destroy(s);
    sim_config_destroy(cfg);
}

/* P = 100, O = 5 on an idle replica: the prefill iteration is 1000 + 10 x 100 + 100 host =
 * 2100 us, and it emits the first token (TTFT); each of the 4 decodes is 1000 + 10 + 100 =
 * 1110 us. E2E = 2100 + 4 x 1110 = 6540 us; TPOT 1110 us. */
static void lone_request(void)
{
    static const int64_t t[] = {0};
    static const int32_t p[] = {100}, o[] = {5};
    struct iter_seen iv = {.budget = 8192, .seqs_limit = 1024};
    struct sim_config *cfg;
    struct sim *s = llm_run(1, 1000, VLLM("{}"), t, p, o, 1, &iv, &cfg);
    const struct sim_llm_stats *ls = sim_model_llm_stats(s, 0);
    CHECK(ls->ttft.n == 1 && ls->ttft.min == 2100 * US, "TTFT %lld ns, want 2100 us",
          (long long)ls->ttft.min);
    CHECK(ls->tpot.n == 1 && ls->tpot.min == 1110 * US, "TPOT %lld ns, want 1110 us",
          (long long)ls->tpot.min);
    CHECK(ls->tokens_out == 5 && iv.n == 5, "%llu tokens in %d iterations, want 5 in 5",
          (unsigned long long)ls->tokens_out, iv.n);
    CHECK(ls->itl.n == 4 && ls->itl.min == 1110 * US && ls->itl.max == 1110 * US,
          "inter-token gaps: %llu, %lld..%lld ns", (unsigned long long)ls->itl.n,
          (long long)ls->itl.min, (long long)ls->itl.max);
    struct sim_result *r;
    REQUIRE_OK(sim_result_collect(s, &r));
    CHECK(r->models[0].on_time == 1 && r->models[0].p50_ms == 6.54,
          "on time %llu, E2E p50 %.6f ms, want 6.54", (unsigned long long)r->models[0].on_time,
          r->models[0].p50_ms);
    sim_result_destroy(r);
    CHECK(sim_llm_state(s, 0)->blocks_used == 0, "blocks left held: %ld",
          sim_llm_state(s, 0)->blocks_used);
    sim_destroy(s);
    sim_config_destroy(cfg);
}

/* A pool of 4 blocks of 16 tokens; A and B both P = 16, O = 40, arriving at t = 0, A first.
 * An idle replica starts at once: iteration 1 is A's prefill alone (T = 16), after which A has
 * its first token. Iteration 2: A decodes (17 tokens: a second block) and B is admitted with
 * its prefill (T = 17; 3 blocks used); B's first token. Iteration 3: B takes its second block
 * (all 4 used). At iteration k A has 15 + k tokens in the cache and B 14 + k, so A needs a
 * third block first, at k = 18: none is free, B (the tail) is preempted (its 2 blocks freed,
 * 16 tokens out) and A alone runs iterations 18..40, finishing with its 40th token. B's
 * recompute (16 + 16 = 32 tokens, 2 blocks) cannot fit beside A's 3-4 blocks; it runs at
 * iteration 41 (emitting its 17th token) and decodes alone at 42..64.
 * Times (base 1000 + 10 per token + host 100 us): it. 1: 1260; 2: 1270; 3..17 (T = 2): 1120
 * each; 18..40 (T = 1): 1110 each; A ends at 1260 + 1270 + 15 x 1120 + 23 x 1110 = 44860 us.
 * 41 (T = 32): 1420; 42..64: 1110 each; B ends at 44860 + 1420 + 23 x 1110 = 71810 us.
 * TTFT: A 1260, B 1260 + 1270 = 2530 us; TPOT (last - first) / 39; B's longest gap from the
 * end of it. 17 (19330 us) to the end of it. 41 (46280 us). */
static void one_preemption(void)
{
    static const int64_t t[] = {0, 0};
    static const int32_t p[] = {16, 16}, o[] = {40, 40};
    struct iter_seen iv = {.budget = 8192, .seqs_limit = 1024};
    struct sim_config *cfg;
    struct sim *s = llm_run(1, 4, VLLM("{}"), t, p, o, 2, &iv, &cfg);
    const struct sim_llm_stats *ls = sim_model_llm_stats(s, 0);
    const struct sim_llm_state *st = sim_llm_state(s, 0);
    CHECK(ls->preemptions == 1 && st->preemptions == 1 && iv.first_preempt == 18,
          "%llu preemptions, the first in iteration %d; want 1, in 18",
          (unsigned long long)ls->preemptions, iv.first_preempt);
    CHECK(iv.n == 64, "%d iterations, want 64", iv.n);
    CHECK(ls->tokens_out == 80, "%llu tokens, want 80 (40 each)",
          (unsigned long long)ls->tokens_out);
    CHECK(ls->ttft.n == 2 && ls->ttft.min == 1260 * US && ls->ttft.max == 2530 * US,
          "TTFT %lld..%lld ns, want 1260 and 2530 us", (long long)ls->ttft.min,
          (long long)ls->ttft.max);
    int64_t tpot_a = (44860 - 1260) * US / 39, tpot_b = (71810 - 2530) * US / 39;
    CHECK(ls->tpot.n == 2 && ls->tpot.min == tpot_a && ls->tpot.max == tpot_b,
          "TPOT %lld..%lld ns, want %lld and %lld", (long long)ls->tpot.min,
          (long long)ls->tpot.max, (long long)tpot_a, (long long)tpot_b);
    CHECK(ls->itl.max == (46280 - 19330) * US, "longest gap %lld ns, want %lld",
          (long long)ls->itl.max, (long long)(46280 - 19330) * US);
    CHECK(iv.tokens == 16 + 17 + 15 * 2 + 23 + 32 + 23, "tokens computed %ld, want %d",
          iv.tokens, 16 + 17 + 15 * 2 + 23 + 32 + 23);
    CHECK(st->blocks_used == 0 && iv.over == 0, "blocks held %ld, iterations over a limit %d",
          st->blocks_used, iv.over);
    struct sim_result *r;
    REQUIRE_OK(sim_result_collect(s, &r));
    CHECK(r->models[0].on_time == 2 && r->models[0].latency->max == 71810 * US,
          "on time %llu of 2, last E2E %lld ns, want 71810 us",
          (unsigned long long)r->models[0].on_time, (long long)r->models[0].latency->max);
    sim_result_destroy(r);
    sim_destroy(s);
    sim_config_destroy(cfg);
}

/* P = 1000, O = 2 with a budget of 256 and chunked prefill: ceil(1000 / 256) = 4 chunks
 * (256, 256, 256, 232), the first token at the end of the 4th: 3 x (1000 + 2560 + 100) +
 * (1000 + 2320 + 100) = 14400 us; then one decode, 1110 us. Without chunking the request could
 * never run (1002 tokens over a budget of 256): it is refused, as vLLM refuses the config. */
static void chunked_prefill(void)
{
    static const int64_t t[] = {0};
    static const int32_t p[] = {1000}, o[] = {2};
    struct iter_seen iv = {.budget = 256, .seqs_limit = 1024};
    struct sim_config *cfg;
    struct sim *s = llm_run(1, 1000, VLLM("{\"max_num_batched_tokens\":256}"), t, p, o, 1, &iv,
                           &cfg);
    const struct sim_llm_stats *ls = sim_model_llm_stats(s, 0);
    CHECK(iv.n == 5 && iv.max_tokens == 256 && iv.tokens == 1001,
          "%d iterations, most tokens %d, all %ld; want 5, 256, 1001", iv.n, iv.max_tokens,
          iv.tokens);
    CHECK(ls->ttft.min == 14400 * US && ls->tpot.min == 1110 * US, "TTFT %lld, TPOT %lld ns",
          (long long)ls->ttft.min, (long long)ls->tpot.min);
    sim_destroy(s);
    sim_config_destroy(cfg);

    struct iter_seen iv2 = {.budget = 256, .seqs_limit = 1024};
    s = llm_run(1, 1000, VLLM("{\"max_num_batched_tokens\":256,\"enable_chunked_prefill\":false}"),
                t, p, o, 1, &iv2, &cfg);
    CHECK(iv2.n == 0 && sim_llm_state(s, 0)->refused == 1, "%d iterations, %llu refused", iv2.n,
          (unsigned long long)sim_llm_state(s, 0)->refused);
    sim_destroy(s);
    sim_config_destroy(cfg);
}

/* 400 requests of random prompts (1..600) and outputs (1..300), gaps uniform in 0-20 ms, on two
 * replicas with a small pool (preemptions happen) and tight limits: no iteration over the
 * budget or max_num_seqs or the pool, every block's accounting consistent at every iteration
 * (sim_llm_check), every token emitted exactly once (tokens out = the sum of outputs), every
 * request finished, none dropped. The prompts share prefixes as a Mooncake trace's do (ids of
 * 32 tokens: one of 4 first blocks, one of 3 second blocks under it, then their own), so that
 * prefix caching (on: vLLM's default) finds hits. Under each router, and disaggregated. */
static void random_trace_limits(void)
{
    enum { N = 400, IDS = 19 };
    static int64_t t[N];
    static int32_t p[N], o[N];
    static uint32_t ids[N][IDS];
    static struct sim_prefix px[N];
    uint64_t x = 12345;
    long want = 0;
    int64_t at = 0;
    for (int i = 0; i < N; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        at += (int64_t)((x >> 33) % 20000) * US;
        t[i] = at;
        p[i] = (int32_t)(1 + (x >> 20) % 600);
        o[i] = (int32_t)(1 + (x >> 45) % 300);
        want += o[i];
        uint32_t g = (uint32_t)(x >> 10) % 4, h = (uint32_t)(x >> 14) % 3;
        ids[i][0] = g;
        ids[i][1] = 10 + 3 * g + h;
        for (int j = 2; j < IDS; j++)
            ids[i][j] = 1000 + (uint32_t)(i * IDS + j);
        px[i] = (struct sim_prefix){32, (uint32_t)(p[i] + 31) / 32, ids[i]};
    }
    static const char *const routers[] = {"round_robin", "least_tokens", "kv_util", "prefix",
                                          "disaggregated"};
    for (int k = 0; k < 5; k++) {
        char params[256];
        if (k < 4)
            snprintf(params, sizeof params, VLLM("{\"max_num_batched_tokens\":512,"
                     "\"max_num_seqs\":8,\"router\":\"%s\"}"), routers[k]);
        else    /* one prefill and one decode replica: preemptions on the decode side */
            snprintf(params, sizeof params, "{\"name\":\"distserve\",\"params\":{"
                     "\"prefill_max_num_batched_tokens\":512,\"decode_max_num_seqs\":8,"
                     "\"enable_prefix_caching\":true}}");
        struct iter_seen iv = {.budget = 512, .seqs_limit = 8};
        struct sim_config *cfg;
        struct sim *s = llm_run_px(2, 120, params, t, p, o, px, N, &iv, &cfg);
        const struct sim_llm_stats *ls = sim_model_llm_stats(s, 0);
        struct sim_result *r;
        REQUIRE_OK(sim_result_collect(s, &r));
        uint64_t done = r->models[0].on_time + r->models[0].late;
        CHECK(iv.over == 0 && (k == 4 || (iv.max_tokens <= 512 && iv.max_seqs <= 8)),
              "%s: %d iterations over a limit (most tokens %d, seqs %d)", routers[k], iv.over,
              iv.max_tokens, iv.max_seqs);
        CHECK((long)ls->tokens_out == want && done == N && r->models[0].dropped == 0,
              "%s: %llu tokens (want %ld), %llu finished, %llu dropped", routers[k],
              (unsigned long long)ls->tokens_out, want, (unsigned long long)done,
              (unsigned long long)r->models[0].dropped);
        CHECK(ls->preemptions > 0 && ls->prefix_hit > 0 && ls->prefix_hit < ls->prefix_query,
              "%s: %llu preemptions, %llu of %llu tokens from the prefix cache: the case does "
              "not test them", routers[k], (unsigned long long)ls->preemptions,
              (unsigned long long)ls->prefix_hit, (unsigned long long)ls->prefix_query);
        sim_result_destroy(r);
        sim_destroy(s);
        sim_config_destroy(cfg);
    }
}

/* Prefix caching, worked by hand (blocks of 16 tokens, trace ids of 32: block k is keyed by
 * the id of tokens [0, 16 (k + 1))). A (t = 0) and B (t = 10 ms) both P = 64 with ids [1, 2],
 * C (t = 20 ms) P = 64 with ids [1, 3]; O = 2 each, one replica, so each finds the replica
 * idle. A computes its 64 tokens: TTFT 1000 + 640 + 100 = 1740 us; its 4 full blocks stay
 * cached when it ends. B finds (64 - 1) / 16 = 3 of them (at most: one token is always
 * computed), computes 16: 1260 us. C shares the first 32 tokens (id 1): 2 blocks, computes
 * 32: 1420 us. The cache answered 48 + 32 of 3 x 64 tokens asked. Without prefix caching
 * all three take 1740 us. On two replicas, round robin sends B to the empty one (1740) and C
 * back to A's (1420); the `prefix` router sends both to A's: 1260 and 1420. */
static void prefix_shared_prompt(void)
{
    static const int64_t t[] = {0, 10000 * US, 20000 * US};
    static const int32_t p[] = {64, 64, 64}, o[] = {2, 2, 2};
    static const uint32_t a[] = {1, 2}, c[] = {1, 3};
    static const struct sim_prefix px[] = {{32, 2, a}, {32, 2, a}, {32, 2, c}};
    static const struct {
        int gpus;
        const char *params;
        int64_t ttft[3];
        uint64_t hit;
    } cases[] = {
        {1, VLLM("{}"), {1740, 1260, 1420}, 80},
        {1, VLLM("{\"enable_prefix_caching\":false}"), {1740, 1740, 1740}, 0},
        {2, VLLM("{\"router\":\"round_robin\"}"), {1740, 1740, 1420}, 32},
        {2, VLLM("{\"router\":\"prefix\"}"), {1740, 1260, 1420}, 80},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        struct iter_seen iv = {.budget = 8192, .seqs_limit = 1024};
        struct sim_config *cfg;
        struct sim *s = llm_run_px(cases[k].gpus, 100, cases[k].params, t, p, o, px, 3, &iv,
                                   &cfg);
        const struct sim_llm_stats *ls = sim_model_llm_stats(s, 0);
        int64_t want_min = cases[k].ttft[0], want_max = cases[k].ttft[0];
        long long sum = 0;
        for (int i = 0; i < 3; i++) {
            want_min = cases[k].ttft[i] < want_min ? cases[k].ttft[i] : want_min;
            want_max = cases[k].ttft[i] > want_max ? cases[k].ttft[i] : want_max;
            sum += cases[k].ttft[i];
        }
        CHECK(ls->ttft.n == 3 && ls->ttft.min == want_min * US && ls->ttft.max == want_max * US &&
              ls->ttft.sum == (double)sum * US,
              "case %zu: TTFT min %lld max %lld sum %.0f ns, want %lld, %lld, %lld us", k,
              (long long)ls->ttft.min, (long long)ls->ttft.max, ls->ttft.sum,
              (long long)want_min, (long long)want_max, sum);
        uint64_t query = cases[k].hit || k == 2 ? 192 : 0;
        CHECK(ls->prefix_hit == cases[k].hit && ls->prefix_query == query,
              "case %zu: %llu of %llu tokens from the cache, want %llu of %llu", k,
              (unsigned long long)ls->prefix_hit, (unsigned long long)ls->prefix_query,
              (unsigned long long)cases[k].hit, (unsigned long long)query);
        CHECK(iv.over == 0, "case %zu: %d iterations inconsistent", k, iv.over);
        sim_destroy(s);
        sim_config_destroy(cfg);
    }
}

/* A preempted request finds its own blocks again (vLLM keeps a freed block cached until it
 * is reused). As one_preemption, but A has O = 30: A takes B's freed second block at iteration
 * 18 (its third; freed tail first, B's second block is the oldest free), and never a fourth,
 * so B's first block (its 16 prompt tokens, full, cached) survives. B waits until A ends (it
 * needs 2 blocks, 1 is free) and then computes 32 - 16 = 16 tokens, not 32.
 * Times: it. 1: 1260; 2: 1270; 3..17: 1120 each; 18..30 (A alone): 1110 each; A ends at
 * 33760 us. It. 31 (B, T = 16): 1260, then 23 decodes of 1110: B ends at 60550 us (60710
 * with prefix caching off, its recompute T = 32: 1420). Tokens computed 16 + 17 + 15 x 2 +
 * 13 + 16 + 23 = 115 (131 off). Asked 16 + 16 + 32 tokens, 16 found. */
static void preemption_hits_own_blocks(void)
{
    static const int64_t t[] = {0, 0};
    static const int32_t p[] = {16, 16}, o[] = {30, 40};
    for (int on = 1; on >= 0; on--) {
        struct iter_seen iv = {.budget = 8192, .seqs_limit = 1024};
        struct sim_config *cfg;
        struct sim *s = llm_run(1, 4, on ? VLLM("{}") : VLLM("{\"enable_prefix_caching\":false}"),
                                t, p, o, 2, &iv, &cfg);
        const struct sim_llm_stats *ls = sim_model_llm_stats(s, 0);
        struct sim_result *r;
        REQUIRE_OK(sim_result_collect(s, &r));
        int64_t end = on ? 60550 : 60710;
        CHECK(ls->preemptions == 1 && iv.first_preempt == 18 && iv.n == 54 &&
              iv.tokens == (on ? 115 : 131) && r->models[0].latency->max == end * US &&
              r->models[0].latency->min == 33760 * US,
              "prefix caching %s: %llu preemptions (first in %d), %d iterations, %ld tokens, "
              "E2E %lld and %lld ns; want 1 (18), 54, %d, 33760 and %lld us", on ? "on" : "off",
              (unsigned long long)ls->preemptions, iv.first_preempt, iv.n, iv.tokens,
              (long long)r->models[0].latency->min, (long long)r->models[0].latency->max,
              on ? 115 : 131, (long long)end);
        CHECK(ls->prefix_hit == (on ? 16u : 0u) && ls->prefix_query == (on ? 64u : 0u),
              "prefix caching %s: %llu of %llu tokens from the cache", on ? "on" : "off",
              (unsigned long long)ls->prefix_hit, (unsigned long long)ls->prefix_query);
        CHECK(iv.over == 0, "%d iterations inconsistent", iv.over);
        sim_result_destroy(r);
        sim_destroy(s);
        sim_config_destroy(cfg);
    }
}

/* Llama-3-8B's published config: 8.03 B parameters; on an 80 GiB GPU at utilisation 0.9 with
 * 2 GiB reserved, its bf16 KV cache (128 KiB a token: 2 x 32 layers x 8 heads x 128 x 2 bytes)
 * holds floor((72 - 14.96 - 2) GiB / 2 MiB) blocks of 16 tokens. A decode of one sequence of
 * context 1000 on the roofline is memory-bound: the weights but the embedding table (15.0 GB)
 * read once, at 3350 GB/s about 4.5 ms. */
static void llama_arithmetic(void)
{
    struct sim_llm_cfg c = {
        .arch = {.layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8, .head_dim = 128,
                 .intermediate = 14336, .vocab = 128256, .dtype_bytes = 2, .kv_dtype_bytes = 2},
        .tp = 1, .gpu = {.peak_tflops = 989.4, .mem_bw_gbs = 3350, .mem_gib = 80, .link_gbs = 450},
        .prof = SIM_LLM_ROOFLINE, .block_size = 16, .mem_util = 0.9, .reserve_gib = 2};
    double params = sim_llm_params(&c.arch);
    CHECK(fabs(params - 8.030261248e9) < 1, "Llama-3-8B params %.0f, want 8030261248", params);
    struct sim_llm_mem m;
    long blocks = sim_llm_memory(&c, &m);
    double weights = 8030261248.0 * 2 / (1024.0 * 1024 * 1024);
    long want = (long)floor((80 * 0.9 - weights - 2) * 1024.0 * 1024 * 1024 / (131072.0 * 16));
    CHECK(m.bytes_per_token == 131072 && blocks == want, "%.0f bytes a token, %ld blocks; want "
          "131072, %ld", m.bytes_per_token, blocks, want);
    struct sim_llm_seq d = {1, 1000};
    double ns = sim_llm_gpu_ns(&c, &d, 1);
    /* every weight read once, but the embedding table (a decode looks up one row) */
    double floor_ns = (8030261248.0 - 128256.0 * 4096) * 2 / 3350;
    CHECK(ns > floor_ns && ns < floor_ns * 1.05, "decode %.0f ns, want just above %.0f", ns,
          floor_ns);
    /* a 4096-token prefill is compute-bound: about 2 x params x T FLOPs */
    struct sim_llm_seq pf = {4096, 0};
    double pns = sim_llm_gpu_ns(&c, &pf, 1);
    double flops_ns = 2 * 8030261248.0 * 4096 / (989.4e3);
    CHECK(pns > flops_ns * 0.95 && pns < flops_ns * 1.3, "prefill %.0f ns, want near %.0f", pns,
          flops_ns);
    /* contexts that average the same cost the same only when memory-bound per pair: a skewed
     * mix of decodes reads the same KV as an even one (attention bytes are linear in context) */
    struct sim_llm_seq even[2] = {{1, 2000}, {1, 2000}}, skew[2] = {{1, 100}, {1, 3900}};
    CHECK(fabs(sim_llm_gpu_ns(&c, even, 2) - sim_llm_gpu_ns(&c, skew, 2)) < 1,
          "decode KV reads: even %.0f ns, skewed %.0f", sim_llm_gpu_ns(&c, even, 2),
          sim_llm_gpu_ns(&c, skew, 2));
    /* a prefill's attention is quadratic: one chunk of 2048 after nothing costs less than two
     * sequences' worth (after a 2048-token prefix it attends to twice the keys) */
    c.prof = SIM_LLM_LINEAR;
    c.lin = (struct sim_llm_linear){.pair_ns = 1};
    struct sim_llm_seq a = {2048, 0}, b = {2048, 2048};
    CHECK(sim_llm_gpu_ns(&c, &a, 1) == 2048.0 * 2049 / 2 &&
          sim_llm_gpu_ns(&c, &b, 1) == 2048.0 * (2048 + 2049.0 / 2),
          "pairs %.0f and %.0f", sim_llm_gpu_ns(&c, &a, 1), sim_llm_gpu_ns(&c, &b, 1));
}

/* The shipped architectures' parameter counts against their model cards (within 0.5%), and
 * every GPU datasheet complete. */
static void wl_llm_tables(void)
{
    int n = 0;
    for (const struct wl_llm_arch_entry *a = wl_llm_archs; a->name; a++) {
        if (a->published_params <= 0)
            continue;
        double p = sim_llm_params(&a->arch);
        CHECK(fabs(p / a->published_params - 1) < 0.005, "%s: %.4g parameters, published %.4g",
              a->name, p, a->published_params);
        n++;
    }
    CHECK(n == 4, "%d architectures with a published count, want 4", n);
    for (const struct wl_llm_gpu_entry *g = wl_llm_gpus; g->name; g++)
        if (strcmp(g->name, "cpu") == 0)           /* no datasheet: measured profiles only */
            CHECK(g->gpu.peak_tflops == 0 && g->gpu.mem_gib == 0 && g->gpu.name &&
                  strcmp(g->gpu.name, "cpu") == 0, "cpu must have no datasheet");
        else
            CHECK(g->gpu.peak_tflops > 0 && g->gpu.mem_bw_gbs > 0 && g->gpu.mem_gib > 0 &&
                  g->gpu.link_gbs > 0 && g->gpu.name && strcmp(g->gpu.name, g->name) == 0,
                  "GPU %s incomplete", g->name);
}

/* A pool of 4 blocks (64 tokens): P = 60, O = 5 ends holding 64 tokens and runs; P = 60,
 * O = 10 would need 69 (5 blocks) and is refused at once, as vLLM refuses a max_model_len
 * the cache cannot hold, instead of stalling the replica. */
static void kv_too_small_refused(void)
{
    static const int64_t t[] = {0, 1000};
    static const int32_t p[] = {60, 60}, o[] = {5, 10};
    struct iter_seen iv = {.budget = 8192, .seqs_limit = 1024};
    struct sim_config *cfg;
    struct sim *s = llm_run(1, 4, VLLM("{}"), t, p, o, 2, &iv, &cfg);
    const struct sim_llm_state *st = sim_llm_state(s, 0);
    CHECK(st->refused == 1 && st->tokens_out == 5, "refused %llu, tokens %llu; want 1, 5",
          (unsigned long long)st->refused, (unsigned long long)st->tokens_out);
    sim_destroy(s);
    sim_config_destroy(cfg);
}

/* Disaggregated (distserve): 1 prefill and 1 decode GPU, P = 100, O = 5. The prefill replica's
 * iteration (1000 + 10 x 100 + 100 host = 2100 us) emits the first token: TTFT 2100 us. The
 * prompt's KV (100 tokens x 1024 bytes: 2 x 2 layers x 2 KV heads x 64 x 2 bytes) crosses a
 * 50 GB/s link in 2048 ns after 10 us of latency: in at 2112.048 us. The idle decode replica
 * admits it (blocks for its 101 tokens) and runs 4 decodes of 1110 us: E2E 6552.048 us, TPOT
 * (6552048 - 2100000) / 4 = 1113012 ns, the longest gap 1122.048 us (the transfer's). */
static void disaggregated_lone_request(void)
{
    static const int64_t t[] = {0};
    static const int32_t p[] = {100}, o[] = {5};
    struct iter_seen iv = {.budget = 8192, .seqs_limit = 1024};
    struct sim_config *cfg;
    struct sim *s = llm_run(2, 1000, "{\"name\":\"distserve\"}", t, p, o, 1, &iv, &cfg);
    const struct sim_llm_stats *ls = sim_model_llm_stats(s, 0);
    CHECK(ls->ttft.min == 2100 * US && ls->tpot.min == 1113012 && ls->itl.max == 1122048,
          "TTFT %lld, TPOT %lld, longest gap %lld ns; want 2100000, 1113012, 1122048",
          (long long)ls->ttft.min, (long long)ls->tpot.min, (long long)ls->itl.max);
    struct sim_result *r;
    REQUIRE_OK(sim_result_collect(s, &r));
    CHECK(r->models[0].latency->max == 6552048 && ls->tokens_out == 5 && iv.n == 5,
          "E2E %lld ns, %llu tokens, %d iterations; want 6552048, 5, 5",
          (long long)r->models[0].latency->max, (unsigned long long)ls->tokens_out, iv.n);
    sim_result_destroy(r);
    const struct sim_llm_state *pre = sim_llm_state(s, 0), *dec = sim_llm_state(s, 1);
    CHECK(pre->role == SIM_LLM_PREFILL && pre->handed_off == 1 && dec->role == SIM_LLM_DECODE &&
          dec->received == 1 && pre->blocks_used == 0 && dec->blocks_used == 0,
          "roles %d/%d, handed off %llu, received %llu, blocks held %ld/%ld", pre->role,
          dec->role, (unsigned long long)pre->handed_off, (unsigned long long)dec->received,
          pre->blocks_used, dec->blocks_used);
    sim_destroy(s);
    sim_config_destroy(cfg);
}

/* Tensor parallel 2 on 4 GPUs: 2 replicas (executors 0 and 2), their ranks 1 and 3 no replicas
 * of their own. The lone request of lone_request goes to replica 0 and takes the same 6540 us
 * (the linear profile does not depend on tp); both its GPUs are busy all that time and the
 * other two not at all. */
static void tensor_parallel_ranks(void)
{
    static const int64_t t[] = {0};
    static const int32_t p[] = {100}, o[] = {5};
    struct iter_seen iv = {.budget = 8192, .seqs_limit = 1024};
    char text[4096];
    struct sim_config *cfg;
    snprintf(text, sizeof text,
             "{\"duration_s\":100,\"cluster\":{\"gpus\":4,\"gpu_kind\":\"h100\"},"
             "\"models\":[{\"name\":\"llm\",\"llm\":{\"model\":\"tiny\",\"tp\":2,\"profile\":"
             "{\"base_us\":1000,\"token_us\":10},\"host_us\":100}}],"
             "\"workload\":{\"rate_rps\":1,\"tokens\":{\"llm\":{\"prompt\":{\"mean\":10},"
             "\"output\":{\"mean\":10}}}},"
             "\"network\":{\"ctrl_us\":0,\"data_us_per_request\":0,\"resp_us\":0},"
             "\"policy\":{\"name\":\"vllm\"},\"metrics\":{\"sample_period_s\":0}}");
    REQUIRE_OK(sim_config_from_text(text, "tp", ".", &cfg));
    static struct tok_src ts;
    ts = (struct tok_src){{t, 1, 0, NULL, NULL}, p, o, NULL};
    struct sim_source src = {tok_next, fixed_close, &ts, 0, NULL, NULL, tok_tokens};
    struct sim *s;
    REQUIRE_OK(sim_create(&cfg->world, 1.0, cfg->world.policy, &src, 1, &s));
    struct sim_observer obs = {.ctx = &iv, .llm_iteration = iter_fn};
    sim_set_observer(s, &obs);
    REQUIRE_OK(sim_run(s));
    CHECK(sim_llm_state(s, 0) && !sim_llm_state(s, 1) && sim_llm_state(s, 2) &&
          !sim_llm_state(s, 3), "replicas at executors 0 and 2 only");
    int64_t b[4];
    for (int e = 0; e < 4; e++)
        b[e] = sim_exec_busy_ns(s, e);
    CHECK(b[0] == 6540 * US && b[1] == 6540 * US && b[2] == 0 && b[3] == 0,
          "busy %lld %lld %lld %lld ns; want 6540 us on GPUs 0 and 1", (long long)b[0],
          (long long)b[1], (long long)b[2], (long long)b[3]);
    struct sim_llm_mem m;
    sim_llm_memory(sim_model_llm(s, 0), &m);
    CHECK(m.bytes_per_token == 2.0 * 2 * 1 * 64 * 2, "%.0f KV bytes a token per GPU, want 512",
          m.bytes_per_token);
    sim_destroy(s);
    sim_config_destroy(cfg);
}

/* A measured profile (servesim-llm-profile/1) of the tiny model (2 layers), written to a file
 * and read as a config names it, its times chosen so that every iteration is a sum a reader
 * checks: per layer dense(T) = 9 + T us, prefill attention z(q, c) = q - 1 + c / 100 us
 * (bilinear on a 2 x 2 grid), decode attention 1 + (B - 1) + K / 1000 us but at least the
 * longest decode's c / 10 us; LM head 4 + n us; host 90 + 10 n us.
 * P = 100, O = 3 alone: the prefill is 2 x (109 + 99) + 5 + 100 host = 521 us (TTFT); decode
 * 1 (context 100): max(1.1, 10) = 10, so 2 x (10 + 10) + 5 + 100 = 145 us; decode 2 (context
 * 101): 2 x (10 + 10.1) + 5 + 100 = 145.2 us. E2E 811.2 us, TPOT 145.1 us. Then profiles that
 * cannot stand: of another model, an axis that falls back, a grid short of a row. */
static void measured_profile(void)
{
    const char *dir = test_scratch("servesim_llm");
    char file[512], text[4096];
    snprintf(file, sizeof file, "%s/tiny_h100.json", dir);
    static const char *const profile =
        "{\"format\": \"servesim-llm-profile/1\", \"model\": \"tiny\", \"gpu\": \"h100\", "
        "\"tp\": 1, \"provenance\": {\"device\": \"a test's numbers\"},"
        "\"per_layer\": {\"dense\": {\"tokens\": [1, 1001], \"us\": [10, 1010]},"
        " \"prefill_attention\": {\"chunk\": [1, 101], \"context\": [0, 100],"
        "   \"us\": [[0, 1], [100, 101]]},"
        " \"decode_attention\": {\"seqs\": [1, 2], \"kv_tokens\": [0, 1000],"
        "   \"us\": [[1, 2], [2, 3]]},"
        " \"decode_one\": {\"context\": [0, 1000], \"us\": [0, 100]}},"
        "\"lm_head\": {\"seqs\": [1, 2], \"us\": [5, 6]},"
        "\"host\": {\"seqs\": [1, 2], \"us\": [100, 110]}}";
    FILE *f = fopen(file, "w");
    if (!f) {
        CHECK(f != NULL, "cannot write %s", file);
        return;
    }
    fputs(profile, f);
    fclose(f);
    const char *cfg_fmt_head =
        "{\"duration_s\":10,\"cluster\":{\"gpus\":1,\"gpu_kind\":\"h100\"},"
        "\"models\":[{\"name\":\"llm\",\"llm\":{\"model\":\"tiny\",\"profile\":";
    const char *cfg_tail =
        ",\"kv_blocks\":100}}],\"workload\":{\"rate_rps\":1,\"tokens\":{\"llm\":{\"prompt\":"
        "{\"mean\":10},\"output\":{\"mean\":10}}}},"
        "\"network\":{\"ctrl_us\":0,\"data_us_per_request\":0,\"resp_us\":0},"
        "\"policy\":{\"name\":\"vllm\"},\"metrics\":{\"sample_period_s\":0}}";
    snprintf(text, sizeof text, "%s%s%s", cfg_fmt_head, "{\"file\": \"tiny_h100.json\"}",
             cfg_tail);
    struct sim_config *cfg;
    static const int64_t t[] = {0};
    static const int32_t p[] = {100}, o[] = {3};
    struct sim *s = llm_run_text(text, dir, t, p, o, NULL, 1, NULL, &cfg);
    const struct sim_llm_stats *ls = sim_model_llm_stats(s, 0);
    struct sim_result *r;
    REQUIRE_OK(sim_result_collect(s, &r));
    const struct sim_llm_result *l = r->models[0].llm;
    CHECK(ls->ttft.n == 1 && ls->ttft.min == 521 * US && ls->tpot.min == 145100 &&
          r->models[0].latency->max == 811200,
          "TTFT %lld ns, TPOT %lld ns, E2E %lld ns; want 521 us, 145.1 us, 811.2 us",
          (long long)ls->ttft.min, (long long)ls->tpot.min,
          (long long)r->models[0].latency->max);
    CHECK(!l->estimate && strcmp(l->timing, "measured profile") == 0 &&
          strstr(l->timing_source, "a test's numbers") && strstr(l->timing_source, "tiny_h100"),
          "timing %s (%s)", l->timing, l->timing_source);
    sim_result_destroy(r);
    sim_destroy(s);
    sim_config_destroy(cfg);
    static const struct {
        const char *from, *to, *want;
    } bad[] = {
        {"\"model\": \"tiny\"", "\"model\": \"llama-3-8b\"",
         "a profile of llama-3-8b on h100 at tensor parallelism 1, for a model configured as "
         "tiny on h100 at 1"},
        {"[1, 1001]", "[1, 1]", "per_layer.dense.tokens[1]: expected above the point before it"},
        {"[[0, 1], [100, 101]]", "[[0, 1]]", "per_layer.prefill_attention.us: expected 2 rows"},
        {"\"us\": [5, 6]", "\"us\": [5, -6]", "lm_head.us[1]: expected a finite number >= 0"},
        {"servesim-llm-profile/1", "servesim-llm-profile/9", "format: expected \"servesim-llm"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char prof[2048];
        const char *at = strstr(profile, bad[i].from);
        if (!at) {
            CHECK(at != NULL, "case %zu: no \"%s\" in the profile", i, bad[i].from);
            continue;
        }
        snprintf(prof, sizeof prof, "%.*s%s%s", (int)(at - profile), profile, bad[i].to,
                 at + strlen(bad[i].from));
        snprintf(text, sizeof text, "%s%s%s", cfg_fmt_head, prof, cfg_tail);   /* inline */
        cfg = NULL;
        CHECK(sim_config_from_text(text, "llm", dir, &cfg) == SIM_EINVAL &&
              strstr(sim_err_msg(), bad[i].want) &&
              strstr(sim_err_msg(), "models[0].llm.profile"),
              "case %zu: want \"%s\" in: %s", i, bad[i].want, sim_err_msg());
        sim_config_destroy(cfg);
    }
    snprintf(text, sizeof text, "%s%s%s", cfg_fmt_head, "{\"file\": \"nope.json\"}", cfg_tail);
    cfg = NULL;
    CHECK(sim_config_from_text(text, "llm", dir, &cfg) < 0 && strstr(sim_err_msg(), "nope.json"),
          "a missing profile file: %s", sim_err_msg());
    sim_config_destroy(cfg);
}

/* Replicas under an autoscaler (the HPA): 2 GPUs at first, a burst of 8x the rate between 10
 * and 20 s, the HPA aiming at 40 req/s a GPU. GPUs come up (after 1 s of provisioning) as
 * replicas, and when the burst ends the removed ones drain: every request ends on time or late
 * (none dropped, none lost), the most GPUs billed is above 2, the GPUs removed went down before
 * the run's end (each served until it had nothing left), and at the end 2 are up again. Under
 * vllm, and under distserve, whose model falls back to colocation whenever scaling leaves it
 * one pool (a removal of its only decode replica dropped requests before it did). */
static void autoscaled_replicas(void)
{
    static const char *const policies[] = {"vllm", "distserve"};
    for (int k = 0; k < 2; k++) {
        char text[2048];
        snprintf(text, sizeof text,
            "{\"duration_s\":40,\"warmup_s\":0,\"seed\":3,\"cluster\":{\"gpus\":2,\"max_gpus\":10,"
            "\"provision_s\":1,\"gpu_kind\":\"h100\"},"
            "\"models\":[{\"name\":\"llm\",\"llm\":{\"model\":\"tiny\",\"profile\":"
            "{\"base_us\":1000,\"token_us\":10},\"host_us\":100,\"kv_blocks\":400}}],"
            "\"workload\":{\"rate_rps\":40,\"arrival\":{\"kind\":\"poisson\"},\"segments\":["
            "{\"duration_s\":10,\"scale\":1},{\"duration_s\":10,\"scale\":8},{\"scale\":1}],"
            "\"tokens\":{\"llm\":{\"prompt\":{\"mean\":100},\"output\":{\"mean\":50}}}},"
            "\"autoscale\":{\"kind\":\"hpa\",\"target_rps\":40,\"sync_s\":1,\"window_s\":2,"
            "\"stabilization_s\":3},"
            "\"policy\":{\"name\":\"%s\"},\"metrics\":{\"sample_period_s\":0.5}}", policies[k]);
        struct sim_config *cfg;
        REQUIRE_OK(sim_config_from_text(text, "as", ".", &cfg));
        struct sim_result *r;
        REQUIRE_OK(sim_run_once(cfg, 1.0, NULL, &r));
        const struct sim_model_result *x = &r->models[0];
        int down = 0, up_end = 0;
        for (int e = 0; e < r->nexecs; e++) {
            bool gone = r->execs[e].up_s < r->duration_s - 1e-9 && r->execs[e].batches > 0 &&
                        e >= 2;
            down += gone;
            up_end += !gone && r->execs[e].batches > 0 && e < 2;
        }
        CHECK(x->dropped == 0 && x->on_time + x->late == x->offered && x->offered > 3000,
              "%s: %llu offered, %llu on time, %llu late, %llu dropped", policies[k],
              (unsigned long long)x->offered, (unsigned long long)x->on_time,
              (unsigned long long)x->late, (unsigned long long)x->dropped);
        CHECK(r->gpus_max > 2 && down >= r->gpus_max - 2 && up_end == 2,
              "%s: at most %d GPUs billed, %d added ones down before the end, %d first ones up",
              policies[k], r->gpus_max, down, up_end);
        sim_result_destroy(r);
        sim_config_destroy(cfg);
    }
}

TEST_MAIN_SCRATCH({"lone_request", lone_request},
        {"iterations_jitter", iterations_jitter}, {"one_preemption", one_preemption},
          {"chunked_prefill", chunked_prefill},
          {"random_trace_limits", random_trace_limits}, {"llama_arithmetic", llama_arithmetic},
          {"wl_llm_tables", wl_llm_tables}, {"kv_too_small_refused", kv_too_small_refused},
          {"disaggregated_lone_request", disaggregated_lone_request},
          {"tensor_parallel_ranks", tensor_parallel_ranks},
          {"prefix_shared_prompt", prefix_shared_prompt},
          {"preemption_hits_own_blocks", preemption_hits_own_blocks},
          {"measured_profile", measured_profile},
          {"autoscaled_replicas", autoscaled_replicas})
