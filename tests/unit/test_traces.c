/* test_traces — trace readers on fixtures this test writes (every format, malformed lines
 * with their line numbers), and the replay: per-interval counts exact, scaling totals,
 * timestamps exact, function-to-model mapping, gaps never silent; plus the real traces of
 * ../shared/traces when present (their READMEs' totals as oracles; skipped otherwise). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>

#include "sim_config.h"
#include "sim_err.h"
#include "sim_rng.h"
#include "test.h"
#include "trace.h"
#include "wl_replay.h"

static const char *dir = "";

static const char *fixture_n(const char *name, const char *text, size_t len);

static const char *fixture(const char *name, const char *text)
{
    return fixture_n(name, text, strlen(text));
}

static const char *fixture_n(const char *name, const char *text, size_t len)
{
    static char path[8][512];
    static int k;
    dir = test_scratch("servesim_traces");
    char *p = path[k++ % 8];
    snprintf(p, 512, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (!f)
        exit(1);
    fwrite(text, 1, len, f);
    fclose(f);
    return p;
}

/* An Azure Functions day file: functions given as (name, count of minute i) rules. */
static const char *azf_day(const char *name, int nfn, const char *const *fns, int day)
{
    size_t cap = 1 << 20;
    char *t = malloc(cap);
    size_t n = (size_t)snprintf(t, cap, "HashOwner,HashApp,HashFunction,Trigger");
    for (int i = 1; i <= 1440; i++)
        n += (size_t)snprintf(t + n, cap - n, ",%d", i);
    n += (size_t)snprintf(t + n, cap - n, "\n");
    for (int k = 0; k < nfn; k++) {
        n += (size_t)snprintf(t + n, cap - n, "own%d,app%d,%s,http", k, k, fns[k]);
        for (int i = 0; i < 1440; i++) {
            int c = k == 0 ? i % 3 + day : k == 1 ? 2 : (i == 10 ? 5 : 0);
            n += (size_t)snprintf(t + n, cap - n, ",%d", c);
        }
        n += (size_t)snprintf(t + n, cap - n, "\n");
    }
    const char *p = fixture(name, t);
    free(t);
    return p;
}

static int count_of(int k, int i, int day)
{
    return k == 0 ? i % 3 + day : k == 1 ? 2 : (i == 10 ? 5 : 0);
}

static void azure_functions_reader(void)
{
    const char *fns[] = {"fa", "fb", "fc"};
    const char *files[] = {azf_day("d01.csv", 3, fns, 0), azf_day("d02.csv", 3, fns, 1)};
    struct trace_spec sp = {.format = TRACE_AZURE_FUNCTIONS, .nfiles = 2, .files = files,
                            .select = TRACE_SEL_TOP, .select_k = 2};
    struct trace_reader *rd;
    REQUIRE_OK(trace_open(&sp, &rd));
    CHECK(trace_stream_count(rd) == 2, "%d streams", trace_stream_count(rd));
    /* volumes: fa = 1440 (day 0: 0,1,2 repeating) + 2880 (day 1) = 4320; fb = 5760; fc = 10 */
    CHECK(strcmp(trace_stream_name(rd, 0), "fb") == 0, "first %s", trace_stream_name(rd, 0));
    CHECK(trace_stream_volume(rd, 0) == 5760, "%g", trace_stream_volume(rd, 0));
    CHECK(trace_stream_volume(rd, 1) == 4320, "%g", trace_stream_volume(rd, 1));
    struct trace_rec r;
    int n = 0, bad = 0;
    while (trace_next(rd, &r) == 1) {
        int day = (int)(r.t / 86400), minute = (int)((r.t - day * 86400) / 60);
        int k = r.stream == 0 ? 1 : 0;     /* stream 0 is fb */
        bad += r.dt != 60 || r.count != count_of(k, minute, day);
        n++;
    }
    CHECK(n == 2 * 1440 * 2 && bad == 0, "%d records, %d wrong", n, bad);
    trace_close(rd);
    /* by hash, and a seeded sample keeps file order */
    const char *hs[] = {"fc"};
    sp.select = TRACE_SEL_HASHES;
    sp.nhashes = 1;
    sp.hashes = hs;
    REQUIRE_OK(trace_open(&sp, &rd));
    CHECK(trace_stream_count(rd) == 1 && trace_stream_volume(rd, 0) == 10, "fc volume %g",
          trace_stream_volume(rd, 0));
    trace_close(rd);
    const char *missing[] = {"nope"};
    sp.hashes = missing;
    CHECK(trace_open(&sp, &rd) == SIM_EINVAL && strstr(sim_err_msg(), "nope"), "%s", sim_err_msg());
}

static void expect_error(const struct trace_spec *sp, const char *want)
{
    struct trace_reader *rd = NULL;
    struct trace_rec r;
    int rc = trace_open(sp, &rd);
    if (!rc)
        while ((rc = trace_next(rd, &r)) == 1)
            ;
    trace_close(rd);
    CHECK(rc < 0 && strstr(sim_err_msg(), want), "want \"%s\" in: %s", want,
          rc < 0 ? sim_err_msg() : "(no error)");
}

static void reader_errors_name_lines(void)
{
    struct trace_spec sp = {.format = TRACE_AZURE_LLM, .nfiles = 1};
    const char *f;
    f = fixture("llm1.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                "2023-11-16 18:17:03.9799600,10,2\n2023-11-16 18:17:04.0,10,2\n"
                "2023-11-16 18:17:0x,10,2\n");
    sp.files = &f;
    expect_error(&sp, "llm1.csv:4: column 1 (TIMESTAMP): expected a date-time");
    f = fixture("llm2.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                "2023-11-16 18:17:05,10,2\n2023-11-16 18:17:04,10,2\n");
    expect_error(&sp, "llm2.csv:3: time");
    f = fixture("llm3.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:05,-1,2\n");
    expect_error(&sp, "llm3.csv:2: column 2 (ContextTokens): expected a non-negative integer, found \"-1\"");
    f = fixture("llm4.csv", "time,a,b\n");
    expect_error(&sp, "llm4.csv:1: expected the header \"TIMESTAMP,ContextTokens,GeneratedTokens\"");
    sp.format = TRACE_WIKIPEDIA;
    f = fixture("w1.csv", "hour_end_utc,requests\n2014-03-03 01:00:00,5\n2014-03-03 02:00:00,abc\n");
    expect_error(&sp, "w1.csv:3: column 2 (requests)");
    f = fixture("w2.csv", "hour_end_utc,requests\n2014-03-03 01:00:00\n");
    expect_error(&sp, "w2.csv:2: expected 2 fields (hour_end_utc, requests), found 1");
    f = fixture("w3.csv", "hour_end_utc,requests\n2014-03-03 02:00:00,5\n2014-03-03 01:30:00,5\n");
    expect_error(&sp, "w3.csv:3: time");
    /* a day the month does not have is an invalid date, not a day of the next month */
    f = fixture("w4.csv", "hour_end_utc,requests\n2014-02-28 23:00:00,5\n2014-02-30 01:00:00,5\n");
    expect_error(&sp, "w4.csv:3: column 1 (hour_end_utc): invalid date \"2014-02-30 01:00:00\"");
    f = fixture("w5.csv", "hour_end_utc,requests\n2016-02-29 01:00:00,5\n2016-02-29 02:00:00,a\n");
    expect_error(&sp, "w5.csv:3: column 2 (requests)");    /* 2016 is a leap year */
    sp.format = TRACE_CSV_COUNTS;
    sp.count_col = 1;
    sp.interval_s = 1;
    sp.header = true;
    f = fixture("c1.csv", "second,events\n0,5\n1\n");
    expect_error(&sp, "c1.csv:3: expected 2 fields");
    f = fixture_n("c2.csv", "second,events\n0,5\n1,4\0x\n", 24);
    expect_error(&sp, "c2.csv:3:");
    /* out of order: the file's own times, and where they fall (issue 47, item 7) */
    sp.format = TRACE_CSV_TIMESTAMPS;
    sp.time_col = 0;
    sp.header = false;
    f = fixture("t1.csv", "1000.5\n1002.0\n1001.0\n");
    expect_error(&sp, "t1.csv:3: time 1001.000 s (0.500 s after the first row) is before the "
                      "previous record's time, 1002.000 s");
    sp.header = true;
    sp.format = TRACE_PROJECTCOUNTS;
    sp.project = "en";
    f = fixture("projectcounts-20140303-010000", "de - 5 6\nfr - 7 8\n");
    expect_error(&sp, "expected a line for project \"en\"");
    f = fixture("badname", "en - 5 6\n");
    expect_error(&sp, "projectcounts-YYYYMMDD-HHMMSS");
    f = "/nonexistent/trace.csv";
    sp.format = TRACE_WIKIPEDIA;
    expect_error(&sp, "/nonexistent/trace.csv: cannot open");
    sp.format = TRACE_AZURE_FUNCTIONS;
    const char *fns[] = {"fa"};
    char *t = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&t, &n);
    const char *good = azf_day("a1.csv", 1, fns, 0);
    FILE *g = fopen(good, "r");
    char line[16384];
    for (int i = 0; fgets(line, sizeof line, g); i++)
        fputs(line, m);
    fclose(g);
    fputs("o,a,fx,http,1,2,3\n", m);
    fclose(m);
    f = fixture("a2.csv", t);
    free(t);
    expect_error(&sp, "a2.csv:3: expected 1444 fields");
}

static void llm_and_projectcounts_readers(void)
{
    const char *f = fixture("llm.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                            "2023-11-16 18:17:03.9799600,4808,10\r\n"
                            "2023-11-16 18:17:04.0319600,3180,8\n"
                            "2023-11-16 18:18:04.5,100,7");          /* no final newline */
    struct trace_spec sp = {.format = TRACE_AZURE_LLM, .nfiles = 1, .files = &f,
                            .size = TRACE_SIZE_CONTEXT};
    struct trace_reader *rd;
    struct trace_rec r;
    double want_t[] = {0, 0.052, 60.52004}, want_size[] = {4808, 3180, 100};
    REQUIRE_OK(trace_open(&sp, &rd));
    int n = 0;
    while (trace_next(rd, &r) == 1 && n < 3) {
        CHECK(fabs(r.t - want_t[n]) < 1e-6 && r.size == want_size[n] && r.dt == 0,
              "row %d: t %.7f size %g", n, r.t, r.size);
        n++;
    }
    CHECK(n == 3, "%d rows", n);
    CHECK(fabs(trace_origin_unix(rd) - 1700158623.97996) < 1e-4, "origin %.5f",
          trace_origin_unix(rd));
    trace_close(rd);

    const char *pc[] = {fixture("projectcounts-20140303-010000", "de - 5 6\nen - 123 456\n"),
                        fixture("projectcounts-20140303-020000", "en - 77 8\nen.b - 1 2\n")};
    struct trace_spec sp2 = {.format = TRACE_PROJECTCOUNTS, .nfiles = 2, .files = pc,
                             .project = "en"};
    REQUIRE_OK(trace_open(&sp2, &rd));
    CHECK(trace_next(rd, &r) == 1 && r.t == 0 && r.dt == 3600 && r.count == 123, "%g %g", r.t, r.count);
    CHECK(trace_next(rd, &r) == 1 && r.t == 3600 && r.count == 77, "%g %g", r.t, r.count);
    CHECK(trace_next(rd, &r) == 0, "end");
    trace_close(rd);
}

/* Mooncake's JSON Lines: times in ms from the start, tokens, the prompt's block ids (kept
 * for the run: each record's ids are still intact after the trace is read to its end), a row
 * without hash_ids; and its errors, each naming the file and line. */
static void mooncake_reader(void)
{
    const char *f = fixture("mc.jsonl",
                            "{\"timestamp\": 0, \"input_length\": 6755, \"output_length\": 500, "
                            "\"hash_ids\": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]}\n"
                            "{\"timestamp\": 0, \"input_length\": 655, \"output_length\": 52, "
                            "\"hash_ids\": [0, 14]}\r\n\n"
                            "{\"timestamp\": 3052.5, \"input_length\": 20, \"output_length\": 3, "
                            "\"session\": 9}");
    struct trace_spec sp = {.format = TRACE_MOONCAKE, .nfiles = 1, .files = &f,
                            .block_tokens = 512};
    struct trace_reader *rd;
    struct trace_rec r[3];
    REQUIRE_OK(trace_open(&sp, &rd));
    int n = 0;
    while (n < 3 && trace_next(rd, &r[n]) == 1)
        n++;
    CHECK(n == 3 && trace_next(rd, &(struct trace_rec){0}) == 0, "%d rows, want 3", n);
    CHECK(r[0].t == 0 && r[0].prompt == 6755 && r[0].output == 500 && r[0].prefix &&
          r[0].prefix->n == 14 && r[0].prefix->unit == 512 && r[0].prefix->ids[13] == 13,
          "row 1: t %g, %d and %d tokens, %u ids", r[0].t, r[0].prompt, r[0].output,
          r[0].prefix ? r[0].prefix->n : 0);
    CHECK(r[1].prefix && r[1].prefix->n == 2 && r[1].prefix->ids[0] == 0 &&
          r[1].prefix->ids[1] == 14 && r[1].line == 2, "row 2: ids, line %ld", r[1].line);
    CHECK(fabs(r[2].t - 3.0525) < 1e-12 && r[2].prefix == NULL && r[2].prompt == 20 &&
          r[2].line == 4, "row 3: t %.6f, ids %p, line %ld", r[2].t, (const void *)r[2].prefix,
          r[2].line);
    trace_close(rd);
    CHECK(trace_format_has_tokens(TRACE_MOONCAKE) && trace_format_per_request(TRACE_MOONCAKE),
          "mooncake: a per-request format with tokens");
    static const struct {
        const char *file, *text, *want;
    } bad[] = {
        {"mc1.jsonl", "{\"timestamp\": 5, \"input_length\": 1, \"output_length\": 1}\n"
                      "{\"timestamp\": 4, \"input_length\": 1, \"output_length\": 1}\n",
         "mc1.jsonl:2: time"},
        {"mc2.jsonl", "{\"timestamp\": 5, \"input_length\": 1.5, \"output_length\": 1}\n",
         "mc2.jsonl:1: \"input_length\": expected a non-negative whole number"},
        {"mc3.jsonl", "{\"timestamp\": 5, \"output_length\": 1}\n",
         "mc3.jsonl:1: expected a key \"input_length\""},
        {"mc4.jsonl", "{\"timestamp\": 5, \"input_length\": 1, \"output_length\": 1, "
                      "\"hash_ids\": [1, -2]}\n",
         "mc4.jsonl:1: \"hash_ids\"[1]: expected a whole number in 0..4294967295"},
        {"mc5.jsonl", "{\"timestamp\": 5, \"input_length\": 1, \"output_length\": 1}\n"
                      "{\"timestamp\": 6, \"input_length\": 1,\n",
         "mc5.jsonl:2: column"},
        {"mc6.jsonl", "TIMESTAMP,ContextTokens,GeneratedTokens\n",
         "mc6.jsonl:1: column 1: expected one JSON object a line"},
        {"mc7.jsonl", "[1, 2]\n", "mc7.jsonl:1: expected a JSON object (a request)"},
        {"mc8.jsonl", "{\"timestamp\": \"5\", \"input_length\": 1, \"output_length\": 1}\n",
         "mc8.jsonl:1: \"timestamp\": expected a non-negative number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        f = fixture(bad[i].file, bad[i].text);
        expect_error(&sp, bad[i].want);
    }
}

/* workload.tokens.<model>.empirical: a BurstGPT fixture's rows (a failed one, 0 response
 * tokens, left out) become the pairs each synthetic request draws from, prompt and output
 * together: 3000 draws are all rows, each row near a third; with a shared prefix the prompt
 * grows by its tokens and names one of the groups. Bad configs name their JSON path. */
static void empirical_token_lengths(void)
{
    fixture("bg.csv", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
                      "1,ChatGPT,100,7,107,Conversation log\n2,ChatGPT,200,9,209,Conversation log\n"
                      "3,GPT-4,50,0,50,Conversation log\n4,ChatGPT,300,11,311,Conversation log\n");
    char text[2048];
    const char *head =
        "{\"duration_s\":10,\"cluster\":{\"gpus\":1,\"gpu_kind\":\"h100\"},"
        "\"models\":[{\"name\":\"llm\",\"llm\":{\"model\":\"tiny\"}}],"
        "\"workload\":{\"rate_rps\":100,\"tokens\":{\"llm\":",
               *tail = "}},\"policy\":{\"name\":\"vllm\"}}";
    snprintf(text, sizeof text, "%s%s%s", head, "{\"empirical\":{\"format\":\"burstgpt\",\"files\":"
             "[\"bg.csv\"]},\"prefix\":{\"groups\":2,\"tokens\":64}}", tail);
    struct sim_config *cfg;
    REQUIRE_OK(sim_config_from_text(text, "emp", dir, &cfg));
    const struct wl_tokens *t = &cfg->workload.tokens[0];
    CHECK(t->nemp == 3 && t->emp[0] == 100 && t->emp[1] == 7 && t->emp[4] == 300 &&
          t->emp[5] == 11, "%ld pairs", t->nemp);
    struct sim_source src;
    REQUIRE_OK(wl_stream_source(&cfg->workload, cfg->world.seed, "arrivals.llm",
                                cfg->world.model_rps[0], 0, &src));
    int seen[3] = {0}, other = 0, groups[2] = {0};
    for (int i = 0; i < 3000; i++) {
        int64_t at;
        int m;
        double size;
        struct sim_tokens tok;
        src.next(src.ctx, &at, &m, &size);
        src.tokens(src.ctx, &tok);
        int k = tok.prompt == 164 && tok.output == 7 ? 0 : tok.prompt == 264 && tok.output == 9
                ? 1 : tok.prompt == 364 && tok.output == 11 ? 2 : -1;
        if (k < 0 || !tok.prefix || tok.prefix->unit != 64 || tok.prefix->n != 1 ||
            tok.prefix->ids[0] > 1)
            other++;
        else {
            seen[k]++;
            groups[tok.prefix->ids[0]]++;
        }
    }
    src.close(src.ctx);
    CHECK(other == 0 && abs(seen[0] - 1000) < 150 && abs(seen[1] - 1000) < 150 &&
          abs(seen[2] - 1000) < 150 && abs(groups[0] - 1500) < 200,
          "%d draws not a row, rows %d %d %d, groups %d %d", other, seen[0], seen[1], seen[2],
          groups[0], groups[1]);
    sim_config_destroy(cfg);
    static const struct {
        const char *tokens, *want;
    } bad[] = {
        {"{\"empirical\":{\"format\":\"wikipedia\",\"files\":[\"bg.csv\"]}}",
         "workload.tokens.llm.empirical.format: expected a format with tokens"},
        {"{\"empirical\":{\"format\":\"burstgpt\",\"files\":[\"nope.csv\"]}}", "nope.csv"},
        {"{\"empirical\":{\"format\":\"burstgpt\",\"files\":[\"bg.csv\"]},\"prompt\":"
         "{\"mean\":5}}", "workload.tokens.llm: either prompt and output, or empirical"},
        {"{\"empirical\":{\"format\":\"azure_llm\",\"files\":[\"bg.csv\"]}}",
         "bg.csv:1: expected the header"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(text, sizeof text, "%s%s%s", head, bad[i].tokens, tail);
        cfg = NULL;
        CHECK(sim_config_from_text(text, "emp", dir, &cfg) < 0 &&
              strstr(sim_err_msg(), bad[i].want), "case %zu: want \"%s\" in: %s", i,
              bad[i].want, sim_err_msg());
        sim_config_destroy(cfg);
    }
}

/* ---------------------------------------------------------------- replay */

static struct sim_config *config(const char *models, const char *trace, const char *extra)
{
    char text[8192];
    snprintf(text, sizeof text,
             "{\"name\": \"t\", \"seed\": 7, \"cluster\": {\"gpus\": 4}, \"models\": [%s],"
             " \"workload\": {\"trace\": %s}%s%s, \"policy\": {\"name\": \"fifo\"}}",
             models, trace, extra ? ", " : "", extra ? extra : "");
    struct sim_config *c = NULL;
    if (sim_config_from_text(text, "test", dir, &c))
        return NULL;
    return c;
}

static const char *const TWO_MODELS =
    "{\"name\": \"A\", \"slo_ms\": 100, \"alpha_ms\": 1, \"beta_ms\": 2},"
    "{\"name\": \"B\", \"slo_ms\": 100, \"alpha_ms\": 1, \"beta_ms\": 2}";

/* Arrivals of a replay binned per `bin_ns`, per model ([model][bin]); returns the total. */
static long replay_bins(const struct sim_config *c, double scale, int64_t bin_ns, int nbins,
                        long *bins /* [2][nbins] */, int64_t *last)
{
    struct wl_replay *rp;
    int64_t t, prev = -1;
    int m;
    double size;
    long n = 0;
    memset(bins, 0, 2 * (size_t)nbins * sizeof *bins);
    REQUIRE_OK(wl_replay_open(&c->workload, &c->world, scale, &rp));
    while (wl_replay_next(rp, &t, &m, &size) == 1) {
        CHECK(t >= prev, "arrivals out of order: %lld after %lld", (long long)t, (long long)prev);
        prev = t;
        int64_t b = t / bin_ns;
        if (b < nbins)
            bins[m * nbins + b]++;
        n++;
    }
    wl_replay_close(rp);
    *last = prev;
    return n;
}

static void replay_counts_exact_per_interval(void)
{
    char text[4096];
    size_t n = (size_t)snprintf(text, sizeof text, "second,events\n");
    long want[60], total = 0;
    for (int i = 0; i < 60; i++) {
        want[i] = (i * 37) % 50 + (i == 20 ? 400 : 0);
        total += want[i];
        n += (size_t)snprintf(text + n, sizeof text - n, "%d,%ld\n", i, want[i]);
    }
    fixture("counts.csv", text);
    const char *procs[] = {"\"process\": \"poisson\"", "\"process\": \"gamma\", \"cv\": 4",
                           "\"process\": \"uniform\""};
    for (int p = 0; p < 3; p++) {
        char tr[512];
        snprintf(tr, sizeof tr, "{\"format\": \"csv_counts\", \"files\": [\"counts.csv\"], "
                 "\"csv\": {\"interval_s\": 1}, %s}", procs[p]);
        struct sim_config *c = config(TWO_MODELS, tr, NULL);
        CHECK(c != NULL, "config: %s", sim_err_msg());
        if (!c)
            return;
        CHECK(fabs(c->world.duration_s - 60) < 1e-9, "duration %g (from the trace)", c->world.duration_s);
        long bins[2 * 60];
        int64_t last;
        long got = replay_bins(c, 1.0, 1000000000, 60, bins, &last);
        int wrong = 0;
        for (int i = 0; i < 60; i++)
            wrong += bins[i] + bins[60 + i] != want[i];
        CHECK(got == total && wrong == 0, "%s: %ld arrivals (want %ld), %d seconds wrong",
              procs[p], got, total, wrong);
        /* popularity uniform: both models get about half */
        long a = 0;
        for (int i = 0; i < 60; i++)
            a += bins[i];
        CHECK(fabs((double)a / (double)total - 0.5) < 0.05, "model A share %.3f", (double)a / (double)total);
        sim_config_destroy(c);
    }
}

/* workload.sizes on a trace of counts: model A's requests carry lognormal sizes drawn from
 * the stream "sizes.A" (the first one exactly that stream's first draw; mean 2 and cv 0.5
 * within sampling error over ~1,400 requests), model B's none; the arrival times and models
 * are those of the same replay without sizes. */
static void replay_sizes_on_counts(void)
{
    char text[4096];
    size_t n = (size_t)snprintf(text, sizeof text, "second,events\n");
    for (int i = 0; i < 60; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%d,%d\n", i, 40 + i % 20);
    fixture("sized.csv", text);
    const char *tr = "{\"format\": \"csv_counts\", \"files\": [\"sized.csv\"], "
                     "\"csv\": {\"interval_s\": 1}}";
    char with[1024];
    snprintf(with, sizeof with, "%s, \"sizes\": {\"A\": {\"mean\": 2, \"cv\": 0.5}}", tr);
    struct sim_config *c[2] = {config(TWO_MODELS, tr, NULL), config(TWO_MODELS, with, NULL)};
    CHECK(c[0] && c[1], "config: %s", sim_err_msg());
    if (!c[0] || !c[1])
        return;
    struct wl_replay *rp[2];
    REQUIRE_OK(wl_replay_open(&c[0]->workload, &c[0]->world, 1.0, &rp[0]));
    REQUIRE_OK(wl_replay_open(&c[1]->workload, &c[1]->world, 1.0, &rp[1]));
    double sigma = sqrt(log1p(0.25)), mu = log(2) - sigma * sigma / 2;
    gsl_rng *ref = sim_rng_stream(7, "sizes.A");
    double first = gsl_ran_lognormal(ref, mu, sigma), got_first = -1, sum = 0, sum2 = 0;
    long na = 0, same = 0, total = 0, b_sized = 0;
    int64_t t[2];
    int m[2];
    double z[2];
    while (wl_replay_next(rp[0], &t[0], &m[0], &z[0]) == 1 &&
           wl_replay_next(rp[1], &t[1], &m[1], &z[1]) == 1) {
        total++;
        same += t[0] == t[1] && m[0] == m[1] && z[0] == 0;
        if (m[1] == 0) {
            if (na++ == 0)
                got_first = z[1];
            sum += z[1];
            sum2 += z[1] * z[1];
        } else {
            b_sized += z[1] != 0;
        }
    }
    double mean = sum / (double)na, cv = sqrt(sum2 / (double)na - mean * mean) / mean;
    CHECK(same == total && total > 2500, "%ld of %ld arrivals the same with sizes", same, total);
    CHECK(got_first == first, "A's first size %.17g, the stream's first draw %.17g", got_first,
          first);
    CHECK(fabs(mean - 2) < 0.1 && fabs(cv - 0.5) < 0.06 && b_sized == 0,
          "A: %ld sizes, mean %.3f, cv %.3f; B: %ld sized", na, mean, cv, b_sized);
    gsl_rng_free(ref);
    wl_replay_close(rp[0]);
    wl_replay_close(rp[1]);
    sim_config_destroy(c[0]);
    sim_config_destroy(c[1]);
}

static void replay_scaling_preserves_totals(void)
{
    char text[4096];
    size_t n = (size_t)snprintf(text, sizeof text, "t,c\n");
    long total = 0;
    for (int i = 0; i < 100; i++) {
        n += (size_t)snprintf(text + n, sizeof text - n, "%d,%d\n", i * 10, 7 + i % 5);
        total += 7 + i % 5;
    }
    fixture("tens.csv", text);
    long bins[2 * 100];
    int64_t last;
    /* rate_scale: floor(s * total) exactly, with the load scale multiplying it */
    struct sim_config *c = config(TWO_MODELS, "{\"format\": \"csv_counts\", \"files\": "
                                  "[\"tens.csv\"], \"csv\": {\"interval_s\": 10}, "
                                  "\"rate_scale\": 0.37}", NULL);
    CHECK(c != NULL, "%s", sim_err_msg());
    long got = replay_bins(c, 1.0, 10000000000, 100, bins, &last);
    CHECK(got == (long)floor(0.37 * (double)total + 1e-9), "rate_scale 0.37: %ld of %ld", got, total);
    got = replay_bins(c, 2.0, 10000000000, 100, bins, &last);
    CHECK(got == (long)floor(0.74 * (double)total + 1e-9), "x load 2: %ld", got);
    CHECK(fabs(c->world.rate_rps - 0.37 * (double)total / 1000) < 1e-9, "mean rate %g", c->world.rate_rps);
    sim_config_destroy(c);
    /* time_scale 10: the same requests in a tenth of the time, interval by interval */
    c = config(TWO_MODELS, "{\"format\": \"csv_counts\", \"files\": [\"tens.csv\"], "
               "\"csv\": {\"interval_s\": 10}, \"time_scale\": 10}", NULL);
    CHECK(c && fabs(c->world.duration_s - 100) < 1e-9, "duration %g", c ? c->world.duration_s : -1);
    got = replay_bins(c, 1.0, 1000000000, 100, bins, &last);
    int wrong = 0;
    for (int i = 0; i < 100; i++)
        wrong += bins[i] + bins[100 + i] != 7 + i % 5;
    CHECK(got == total && wrong == 0 && last < 100 * 1000000000LL, "%ld of %ld, %d wrong", got,
          total, wrong);
    sim_config_destroy(c);
    /* a window of trace time: [200, 500) s holds intervals 20..49 */
    c = config(TWO_MODELS, "{\"format\": \"csv_counts\", \"files\": [\"tens.csv\"], "
               "\"csv\": {\"interval_s\": 10}, \"start_s\": 200, \"window_s\": 300}", NULL);
    long wtot = 0;
    for (int i = 20; i < 50; i++)
        wtot += 7 + i % 5;
    got = replay_bins(c, 1.0, 10000000000, 100, bins, &last);
    CHECK(c && got == wtot && fabs(c->world.duration_s - 300) < 1e-9, "window: %ld of %ld, %g s",
          got, wtot, c ? c->world.duration_s : -1);
    sim_config_destroy(c);
}

static void replay_timestamps_exact(void)
{
    fixture("ts.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
            "2023-11-16 18:00:00.0000000,1,1\n2023-11-16 18:00:00.2500000,2,1\n"
            "2023-11-16 18:00:01.1000000,3,1\n2023-11-16 18:00:01.1000000,4,1\n"
            "2023-11-16 18:00:07.0000001,5,1\n");
    const int64_t want[] = {0, 250000000, 1100000000, 1100000000, 7000000100};
    struct sim_config *c = config(TWO_MODELS, "{\"format\": \"azure_llm\", \"files\": "
                                  "[\"ts.csv\"], \"size\": \"context_tokens\"}", NULL);
    CHECK(c != NULL, "%s", sim_err_msg());
    if (!c)
        return;
    struct wl_replay *rp;
    int64_t t;
    int m, i = 0;
    double size;
    REQUIRE_OK(wl_replay_open(&c->workload, &c->world, 1.0, &rp));
    while (wl_replay_next(rp, &t, &m, &size) == 1 && i < 5) {
        CHECK(llabs(t - want[i]) <= 1 && size == i + 1, "request %d at %lld size %g", i,
              (long long)t, size);
        i++;
    }
    CHECK(i == 5, "%d requests", i);
    wl_replay_close(rp);
    long bins[2 * 10];
    int64_t last;
    CHECK(replay_bins(c, 2.0, 1000000000, 10, bins, &last) == 10, "x2: copies");
    CHECK(replay_bins(c, 0.5, 1000000000, 10, bins, &last) == 2, "x0.5: floor(2.5)");
    CHECK(c->world.duration_s > 7.0000001, "duration %.9f covers the last request", c->world.duration_s);
    sim_config_destroy(c);
}

static void replay_functions_onto_models(void)
{
    const char *fns[] = {"fa", "fb", "fc"};
    azf_day("m01.csv", 3, fns, 0);
    azf_day("m02.csv", 3, fns, 1);
    /* volume: fb (rank 0) -> A, fa (rank 1) -> B, fc (rank 2) -> A */
    struct sim_config *c = config(TWO_MODELS, "{\"format\": \"azure_functions\", \"files\": "
                                  "[\"m01.csv\", \"m02.csv\"], \"map\": \"volume\", "
                                  "\"zero_run_s\": 0}", NULL);
    CHECK(c != NULL, "%s", sim_err_msg());
    if (!c)
        return;
    CHECK(fabs(c->world.duration_s - 2 * 86400) < 1e-6, "duration %g", c->world.duration_s);
    static long bins[2 * 2880];
    int64_t last;
    replay_bins(c, 1.0, 60000000000, 2880, bins, &last);
    int wrong = 0;
    for (int i = 0; i < 2880; i++) {
        int day = i / 1440, mi = i % 1440;
        wrong += bins[i] != count_of(1, mi, day) + count_of(2, mi, day);
        wrong += bins[2880 + i] != count_of(0, mi, day);
    }
    CHECK(wrong == 0, "%d (model, minute) counts differ from the mapped functions'", wrong);
    sim_config_destroy(c);
    /* explicit: an unmapped selected function is an error that names it */
    c = config(TWO_MODELS, "{\"format\": \"azure_functions\", \"files\": [\"m01.csv\"], "
               "\"map\": {\"explicit\": {\"fa\": \"B\", \"fb\": \"A\"}}}", NULL);
    CHECK(!c && strstr(sim_err_msg(), "fc has no model"), "%s", sim_err_msg());
    c = config(TWO_MODELS, "{\"format\": \"azure_functions\", \"files\": [\"m01.csv\"], "
               "\"select\": {\"hashes\": [\"fa\"]}, \"map\": {\"explicit\": {\"fa\": \"C\"}}}", NULL);
    CHECK(!c && strstr(sim_err_msg(), "workload.trace.map.explicit.fa: expected the name of a model"),
          "%s", sim_err_msg());
}

static void gaps_are_explicit(void)
{
    /* hours 0, 1, then 3 (hour 2 missing) */
    fixture("gap.csv", "hour_end_utc,requests\n2014-03-03 01:00:00,3600\n"
            "2014-03-03 02:00:00,7200\n2014-03-03 04:00:00,3600\n");
#define GAPTR(how) "{\"format\": \"wikipedia\", \"files\": [\"gap.csv\"], \"gaps\": \"" how "\"}"
    struct sim_config *c = config(TWO_MODELS, "{\"format\": \"wikipedia\", \"files\": [\"gap.csv\"]}", NULL);
    CHECK(!c && strstr(sim_err_msg(), "3600 s of missing data from t=7200 s") &&
          strstr(sim_err_msg(), "workload.trace.gaps"), "default: %s", sim_err_msg());
    char t[256];
    long bins[2 * 4];
    int64_t last;
    snprintf(t, sizeof t, "%s", GAPTR("zero"));
    c = config(TWO_MODELS, t, NULL);
    CHECK(c && c->world.duration_s == 4 * 3600 && c->trace_gaps == 1 && c->trace_gap_s == 3600,
          "zero: %g s, %d gaps", c ? c->world.duration_s : -1, c ? c->trace_gaps : -1);
    replay_bins(c, 1.0, 3600000000000, 4, bins, &last);
    CHECK(bins[2] + bins[6] == 0 && bins[3] + bins[7] == 3600, "zero: hour 2 %ld, hour 3 %ld",
          bins[2] + bins[6], bins[3] + bins[7]);
    sim_config_destroy(c);
    snprintf(t, sizeof t, "%s", GAPTR("skip"));
    c = config(TWO_MODELS, t, NULL);
    CHECK(c && c->world.duration_s == 3 * 3600, "skip: %g s", c ? c->world.duration_s : -1);
    replay_bins(c, 1.0, 3600000000000, 4, bins, &last);
    CHECK(bins[2] + bins[6] == 3600 && bins[3] + bins[7] == 0, "skip: hour 2 %ld", bins[2] + bins[6]);
    sim_config_destroy(c);
    snprintf(t, sizeof t, "%s", GAPTR("hold"));
    c = config(TWO_MODELS, t, NULL);
    replay_bins(c, 1.0, 3600000000000, 4, bins, &last);
    CHECK(c && bins[2] + bins[6] == 7200, "hold: hour 2 %ld", bins[2] + bins[6]);
    sim_config_destroy(c);
    snprintf(t, sizeof t, "%s", GAPTR("interpolate"));
    c = config(TWO_MODELS, t, NULL);
    replay_bins(c, 1.0, 3600000000000, 4, bins, &last);
    CHECK(c && bins[2] + bins[6] == 5400, "interpolate: hour 2 %ld (midway 7200 -> 3600)",
          bins[2] + bins[6]);
    sim_config_destroy(c);
    /* zero runs: 5 zero seconds are idle time at zero_run_s 10, a gap at 5 */
    fixture("zeros.csv", "s,n\n0,4\n1,0\n2,0\n3,0\n4,0\n5,0\n6,4\n");
    c = config(TWO_MODELS, "{\"format\": \"csv_counts\", \"files\": [\"zeros.csv\"], "
               "\"csv\": {\"interval_s\": 1}, \"zero_run_s\": 10}", NULL);
    CHECK(c && c->trace_gaps == 0 && c->world.duration_s == 7, "short zero run: %s", c ? "" : sim_err_msg());
    sim_config_destroy(c);
    c = config(TWO_MODELS, "{\"format\": \"csv_counts\", \"files\": [\"zeros.csv\"], "
               "\"csv\": {\"interval_s\": 1}, \"zero_run_s\": 5, \"gaps\": \"skip\"}", NULL);
    CHECK(c && c->trace_gaps == 1 && c->world.duration_s == 2, "long zero run skipped: %g s",
          c ? c->world.duration_s : -1);
    sim_config_destroy(c);
}

static void config_errors(void)
{
    const char *cases[][2] = {
        {"{\"format\": \"tsv\", \"files\": [\"x\"]}", "workload.trace.format: expected"},
        {"{\"format\": \"wikipedia\", \"files\": []}", "workload.trace.files: expected a non-empty array"},
        {"{\"format\": \"wikipedia\", \"files\": [\"gap.csv\"], \"select\": {\"top\": 2}}",
         "select: only for format \"azure_functions\""},
        {"{\"format\": \"azure_llm\", \"files\": [\"ts.csv\"], \"gaps\": \"hold\"}",
         "per-request traces take error, zero or skip"},
        {"{\"format\": \"wikipedia\", \"files\": [\"gap.csv\"], \"process\": \"gamma\"}",
         "cv: required with process \"gamma\""},
        {"{\"format\": \"csv_counts\", \"files\": [\"counts.csv\"]}", "workload.trace.csv: required"},
        {"{\"format\": \"wikipedia\", \"files\": [\"missing.csv\"]}", "missing.csv: cannot open"},
    };
    fixture("gap.csv", "hour_end_utc,requests\n2014-03-03 01:00:00,3600\n");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sim_config *c = config(TWO_MODELS, cases[i][0], NULL);
        CHECK(!c && strstr(sim_err_msg(), cases[i][1]), "case %zu: want \"%s\" in: %s", i,
              cases[i][1], c ? "(accepted)" : sim_err_msg());
        sim_config_destroy(c);
    }
}

/* ---------------------------------------------------------------- real traces */

static const char *shared_traces(void)
{
    const char *e = getenv("SERVESIM_TRACE_DIR");
    static char p[1024];
    snprintf(p, sizeof p, "%s", e && *e ? e : SERVESIM_SHARED_TRACES);
    char probe[1100];
    snprintf(probe, sizeof probe, "%s/wikipedia_en_hourly", p);
    return access(probe, R_OK) == 0 ? p : NULL;
}

static void real_traces_match_their_readmes(void)
{
    const char *base = shared_traces();
    if (!base) {
        printf("SKIP: the shared traces are not here (set SERVESIM_TRACE_DIR)\n");
        exit(77);
    }
    char text[2048];
    struct sim_config *c;
    snprintf(text, sizeof text, "{\"format\": \"wikipedia\", \"dir\": \"%s/wikipedia_en_hourly\", "
             "\"files\": [\"en_wikipedia_hourly_2014-03-03_to_2014-03-16.csv\"]}", base);
    c = config(TWO_MODELS, text, NULL);
    CHECK(c && c->trace_total == 3373804377.0 && c->world.duration_s == 336 * 3600 && c->trace_gaps == 0,
          "wikipedia: total %.0f (README 3,373,804,377), %g s", c ? c->trace_total : -1,
          c ? c->world.duration_s : -1);
    CHECK(c && fabs(c->trace_peak_rps - 13497074.0 / 3600) < 1e-6, "peak %g", c ? c->trace_peak_rps : -1);
    sim_config_destroy(c);
    snprintf(text, sizeof text, "{\"format\": \"azure_llm\", \"dir\": \"%s/azure_llm_inference_2023\", "
             "\"files\": [\"AzureLLMInferenceTrace_conv.csv\"]}", base);
    c = config(TWO_MODELS, text, NULL);
    /* the README says 19,365 rows: it counted newlines, and the file has none after its
     * last row (CRLF lines); Python's csv module also reads 19,366 */
    CHECK(c && c->trace_total == 19366 && fabs(c->world.duration_s - 3501.7) < 0.1,
          "llm conv: %.0f requests (19,366 rows), %.1f s (README 3,501.7)",
          c ? c->trace_total : -1, c ? c->world.duration_s : -1);
    sim_config_destroy(c);
    /* Twitter: three 1,739-s zero runs are gaps at zero_run_s 300; the short ones are not */
    snprintf(text, sizeof text, "{\"format\": \"csv_counts\", \"dir\": "
             "\"%s/twitter_stream_2021_08_per_second\", \"files\": "
             "[\"twitter_stream_2021_08_first3days_per_second.csv\"], \"csv\": {\"interval_s\": 1}, "
             "\"gaps\": \"skip\"}", base);
    c = config(TWO_MODELS, text, NULL);
    CHECK(c && c->trace_gaps == 3 && c->trace_gap_s == 3 * 1739 &&
          c->world.duration_s == 259200 - 3 * 1739, "twitter: %d gaps, %g s, duration %g",
          c ? c->trace_gaps : -1, c ? c->trace_gap_s : -1, c ? c->world.duration_s : -1);
    CHECK(c && fabs(c->trace_total - 63.73 * 259200) < 0.005 * 63.73 * 259200, "total %.0f",
          c ? c->trace_total : -1);
    sim_config_destroy(c);
}

TEST_MAIN_SCRATCH({"azure_functions_reader", azure_functions_reader},
                  {"mooncake_reader", mooncake_reader},
                  {"empirical_token_lengths", empirical_token_lengths},
                  {"reader_errors_name_lines", reader_errors_name_lines},
                  {"llm_and_projectcounts_readers", llm_and_projectcounts_readers},
                  {"replay_counts_exact_per_interval", replay_counts_exact_per_interval},
                  {"replay_scaling_preserves_totals", replay_scaling_preserves_totals},
                  {"replay_sizes_on_counts", replay_sizes_on_counts},
                  {"replay_timestamps_exact", replay_timestamps_exact},
                  {"replay_functions_onto_models", replay_functions_onto_models},
                  {"gaps_are_explicit", gaps_are_explicit},
                  {"config_errors", config_errors},
                  {"real_traces_match_their_readmes", real_traces_match_their_readmes})
