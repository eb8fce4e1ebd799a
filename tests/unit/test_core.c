/* test_core — unit tests of the engine's building blocks: event order, timers, histogram
 * accuracy, random streams, arrival processes, --set paths, and the M/D/1 queueing oracle. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "policy.h"
#include "sim_bits.h"
#include "sim.h"
#include "sim_config.h"
#include "sim_err.h"
#include "sim_goodput.h"
#include "sim_heap.h"
#include "sim_json.h"
#include "sim_param.h"
#include "sim_result.h"
#include "sim_store.h"
#include "sim_sweep.h"
#include "test_run.h"
#include "test_src.h"
#include "sim_rng.h"
#include "sim_rng.h"
#include "test.h"
#include "wl_arrival.h"
#include "wl_source.h"
#include "wl_zoo.h"

static void heap_ties_fire_in_insertion_order(void)
{
    struct sim_heap h;
    sim_heap_init(&h);
    for (uint32_t i = 0; i < 1000; i++)
        sim_heap_push(&h, (struct sim_event){.time = (i % 3) * 10, .idx = i});
    int64_t last_t = -1;
    uint32_t last_idx[3] = {0, 0, 0};
    bool first[3] = {true, true, true};
    struct sim_event e;
    int n = 0;
    while (sim_heap_pop(&h, &e) == 0) {
        CHECK(e.time >= last_t, "time %lld after %lld", (long long)e.time, (long long)last_t);
        int k = (int)(e.time / 10);
        CHECK(first[k] || e.idx > last_idx[k], "tie order: idx %u after %u", e.idx, last_idx[k]);
        first[k] = false;
        last_idx[k] = e.idx;
        last_t = e.time;
        n++;
    }
    CHECK(n == 1000, "popped %d", n);
    sim_heap_free(&h);
}

static void heap_random_times_sorted(void)
{
    struct sim_heap h;
    sim_heap_init(&h);
    gsl_rng *r = sim_rng_stream(7, "test");
    int64_t last = -1;
    int n = 0;
    for (int round = 0; round < 50; round++) {
        for (int i = 0; i < 200; i++)
            sim_heap_push(&h, (struct sim_event){.time = last + 1 + (int64_t)gsl_rng_uniform_int(r, 100000)});
        struct sim_event e;
        for (int i = 0; i < 150 && sim_heap_pop(&h, &e) == 0; i++, n++) {
            CHECK(e.time >= last, "popped %lld after %lld", (long long)e.time, (long long)last);
            last = e.time;
        }
    }
    gsl_rng_free(r);
    sim_heap_free(&h);
    CHECK(n == 50 * 150, "popped %d", n);
}

/* sim_bits_next and sim_bits_next_and against a scan of plain arrays: sets of different
 * sizes and densities (sparse ones leave whole second-level words empty), members added and
 * removed, every start. */
static void bits_next_and_match_a_scan(void)
{
    gsl_rng *r = sim_rng_stream(11, "bits");
    static const int sizes[][2] = {{1, 1}, {64, 70}, {4096, 4100}, {9000, 20000}, {20000, 9000}};
    static const double dens[] = {0.0005, 0.01, 0.3, 0.9};
    int checked = 0;
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
        for (size_t d = 0; d < sizeof dens / sizeof *dens; d++) {
            int na = sizes[z][0], nb = sizes[z][1], n = na > nb ? na : nb;
            bool *ia = calloc((size_t)n, 1), *ib = calloc((size_t)n, 1);
            struct sim_bits a = {0}, b = {0};
            REQUIRE_OK(sim_bits_reserve(&a, na));
            REQUIRE_OK(sim_bits_reserve(&b, nb));
            for (int round = 0; round < 2; round++) {   /* fill, then take some out */
                for (int i = 0; i < na; i++)
                    if (gsl_rng_uniform(r) < dens[d]) {
                        ia[i] = round == 0;
                        sim_bits_put(&a, i, round == 0);
                    }
                for (int i = 0; i < nb; i++)
                    if (gsl_rng_uniform(r) < dens[d]) {
                        ib[i] = round == 0;
                        sim_bits_put(&b, i, round == 0);
                    }
                int want = -1, want_a = -1;
                for (int from = n + 64; from >= -1; from--) {   /* the next member, by scan */
                    if (from >= 0 && from < n && ia[from]) {
                        want_a = from;
                        if (ib[from])
                            want = from;
                    }
                    int got = sim_bits_next_and(&a, &b, from), got_a = sim_bits_next(&a, from);
                    CHECK(got == want && got_a == want_a,
                          "sizes %d/%d density %g from %d: and %d (want %d), next %d (want %d)",
                          na, nb, dens[d], from, got, want, got_a, want_a);
                    if (got != want || got_a != want_a)
                        break;
                    checked++;
                }
            }
            sim_bits_free(&a);
            sim_bits_free(&b);
            free(ia);
            free(ib);
        }
    gsl_rng_free(r);
    CHECK(checked > 60000, "%d starts checked", checked);
}

/* The engine of a config text under `pol` (NULL: the config's), its arrivals from `fixed`
 * (NULL: the config's own sources). */
static struct sim *engine_for(const char *text, const struct policy_ops *pol,
                              struct sim_source *fixed, struct sim_config **cfgp)
{
    struct sim_source *src = NULL;
    int n = 1;
    struct sim *s;
    REQUIRE_OK(sim_config_from_text(text, "engine", ".", cfgp));
    if (!fixed)
        REQUIRE_OK(wl_sources_open(&(*cfgp)->workload, &(*cfgp)->world, 1.0, &src, &n, NULL));
    REQUIRE_OK(sim_create(&(*cfgp)->world, 1.0, pol ? pol : (*cfgp)->world.policy,
                          fixed ? fixed : src, n, &s));
    free(src);
    return s;
}

/* The queue heads the engine keeps (sim_track_heads) against a search. A policy routes the
 * requests in turn to three executors' queues and the central one, and drops heads: the
 * oldest at the centre, the highest-numbered model's at an executor (not the oldest, so a
 * key below the top changes). Before and after each step, sim_xqueue_oldest at every place
 * must equal what a scan of sim_xqueue_sched_at picks (least t_sched, the lower model on a
 * tie). Network jitter delivers requests out of arrival order, so a request often lands
 * ahead of others in its queue (deadline order) and becomes its head. */
struct hd_pol {
    unsigned n;
    long checks, ahead, dropped, ties;
    int xlen;                           /* the longest executor queue seen */
};

/* The scan's pick at e; *tie: another model's head reached the scheduler at the same time. */
static int hd_scan(const struct sim *s, int e, bool *tie)
{
    int best = -1;
    *tie = false;
    for (int m = 0; m < sim_model_count(s); m++) {
        if (sim_xqueue_len(s, e, m) == 0)
            continue;
        int64_t t = sim_xqueue_sched_at(s, e, m, 0);
        if (best >= 0 && t == sim_xqueue_sched_at(s, e, best, 0))
            *tie = true;
        else if (best < 0 || t < sim_xqueue_sched_at(s, e, best, 0))
            best = m, *tie = false;
    }
    return best;
}

static void hd_check(const struct sim *s, struct hd_pol *st)
{
    for (int e = SIM_CENTRAL; e < 3; e++) {
        bool tie;
        int got = sim_xqueue_oldest(s, e), want = hd_scan(s, e, &tie);
        CHECK(got == want, "place %d after %u requests: oldest head %d, the scan finds %d%s", e,
              st->n, got, want, tie ? " (a tie)" : "");
        st->checks++;
        st->ties += tie;
    }
}

static struct hd_pol *hd_last;          /* the run's policy state, read after it */

static int hd_init(struct sim *s, const cJSON *p, void *state)
{
    (void)p;
    hd_last = state;
    return sim_track_heads(s);
}

static int hd_route(struct sim *s, void *state, const struct sim_request *r)
{
    (void)s, (void)r;
    struct hd_pol *st = state;
    return (int)(st->n++ % 4) - 1;      /* SIM_CENTRAL, 0, 1, 2 */
}

static void hd_on_request(struct sim *s, void *state, int m, struct sim_request *r)
{
    struct hd_pol *st = state;
    int e = r->exec, len = sim_xqueue_len(s, e, m);
    st->ahead += sim_xqueue_at(s, e, m, len - 1) != r;
    if (e >= 0 && len > st->xlen)
        st->xlen = len;
    hd_check(s, st);
    int c = sim_xqueue_oldest(s, SIM_CENTRAL);
    if (st->n % 3 == 0 && c >= 0) {
        sim_queue_drop_head(s, c);
        st->dropped++;
    }
    int x = (int)(st->n % 3), last = -1;
    for (int k = sim_xqueue_next(s, x, 0); k >= 0; k = sim_xqueue_next(s, x, k + 1))
        last = k;
    if (st->n % 2 == 0 && last >= 0) {
        sim_xqueue_drop_head(s, x, last);
        st->dropped++;
    }
    hd_check(s, st);
}

static const struct policy_ops hd_policy = {
    .name = "heads-test", .summary = "test", .state_size = sizeof(struct hd_pol),
    .init = hd_init, .route = hd_route, .on_request = hd_on_request};

static void heads_match_a_scan(void)
{
    const char *text =
        "{\"seed\":9,\"duration_s\":3,\"cluster\":{\"gpus\":3},\"models\":["
        "{\"name\":\"a\",\"alpha_ms\":1,\"beta_ms\":1,\"slo_ms\":5},"
        "{\"name\":\"b\",\"alpha_ms\":1,\"beta_ms\":1,\"slo_ms\":50},"
        "{\"name\":\"c\",\"alpha_ms\":1,\"beta_ms\":1,\"slo_ms\":20},"
        "{\"name\":\"d\",\"alpha_ms\":1,\"beta_ms\":1,\"slo_ms\":500},"
        "{\"name\":\"e\",\"alpha_ms\":1,\"beta_ms\":1,\"slo_ms\":8}],"
        "\"workload\":{\"rate_rps\":2000},\"network\":{\"jitter\":{\"kind\":\"exponential\","
        "\"mean_us\":3000}},\"policy\":{\"name\":\"fifo\"},\"metrics\":{\"sample_period_s\":0}}";
    struct sim_config *cfg;
    struct sim *s = engine_for(text, &hd_policy, NULL, &cfg);
    REQUIRE_OK(sim_run(s));
    const struct hd_pol *st = hd_last;
    CHECK(st->n > 5000 && st->checks == 8L * st->n, "%u requests, %ld checks", st->n,
          st->checks);
    CHECK(st->ahead > 100 && st->dropped > 2000,
          "%ld requests queued ahead of others, %ld heads dropped: the test covers too little",
          st->ahead, st->dropped);
    /* an executor's queue grows out of its first entry, from the engine's shared chunks,
     * through buffers of its own (sim_base.c, queue_first and sim_mq_push) */
    CHECK(st->xlen >= 8, "the longest executor queue held %d: the test covers too little",
          st->xlen);
    printf("heads, jittered: %u requests, %ld checks, %ld queued ahead of others, %ld dropped, "
           "executor queues up to %d\n", st->n, st->checks, st->ahead, st->dropped, st->xlen);
    sim_destroy(s);
    sim_config_destroy(cfg);

    /* Ties: without jitter, five requests arrive at each millisecond, models 4, 3, ..., 0 in
     * that order, so at a place the later-pushed lower model must win a tie. */
    enum { NT = 2000 };
    static int64_t t[NT];
    static int model[NT];
    for (int k = 0; k < NT; k++) {
        t[k] = (int64_t)(k / 5 + 1) * 1000000;
        model[k] = 4 - k % 5;
    }
    struct fixed_src f = {t, NT, 0, NULL, model};
    struct sim_source src = {fixed_next, fixed_close, &f, 0, NULL, NULL, NULL};
    const char *still = strstr(text, "\"network\"");
    char text2[1024];
    snprintf(text2, sizeof text2, "%.*s\"policy\":{\"name\":\"fifo\"},"
             "\"metrics\":{\"sample_period_s\":0}}", (int)(still - text), text);
    s = engine_for(text2, &hd_policy, &src, &cfg);
    REQUIRE_OK(sim_run(s));
    st = hd_last;
    CHECK(st->n == NT && st->ties > 500, "%u requests, %ld checks found a tie", st->n, st->ties);
    printf("heads, simultaneous: %u requests, %ld checks, %ld of them on a tie\n", st->n,
           st->checks, st->ties);
    sim_destroy(s);
    sim_config_destroy(cfg);
}

/* The running index's dense brief (sim_exec_running_brief) against the executors' own
 * batches: after every event of a Shepherd run (which asks for the index) on 6 GPUs, each
 * executor's brief is its running batch's model and size where it is UP and runs one, else
 * none. The load is high enough that batches are preempted and replaced. */
struct rb_seen {
    long checks, busy;
};

static void rb_event(void *ctx, const struct sim *s, int64_t t)
{
    (void)t;
    struct rb_seen *v = ctx;
    for (int e = 0; e < sim_exec_count(s); e++) {
        const struct sim_exec *x = sim_exec(s, e);
        struct sim_run_brief rb = sim_exec_running_brief(s, e);
        bool runs = x->state == SIM_EXEC_UP && x->running;
        CHECK(runs ? rb.model == x->running->model && rb.size == x->running->size
                   : rb.model == -1 && rb.size == 0,
              "executor %d: brief (%d, %d), running %s (%d, %d)", e, rb.model, rb.size,
              runs ? "a batch" : "nothing", runs ? x->running->model : -1,
              runs ? x->running->size : 0);
        v->checks++;
        v->busy += runs;
    }
    /* the index by model (sim_exec_next_running_of), walked from the start, against the
     * executors' batches: size 1 (an exact class), and any size */
    for (int m = 0; m < sim_model_count(s); m++)
        for (int k = 0; k < 2; k++) {
            int b = k ? 1 << 20 : 1, e = -1;
            for (int want = 0; want < sim_exec_count(s); want++) {
                const struct sim_exec *x = sim_exec(s, want);
                if (x->state != SIM_EXEC_UP || !x->running || x->running->model != m ||
                    x->running->size > b)
                    continue;
                e = sim_exec_next_running_of(s, m, b, e + 1);
                CHECK(e == want, "model %d, size <= %d: the index gave executor %d, expected %d",
                      m, b, e, want);
            }
            e = sim_exec_next_running_of(s, m, b, e + 1);
            CHECK(e == -1, "model %d, size <= %d: the index gave executor %d past the last", m,
                  b, e);
        }
}

/* fifo filling two lanes, with the running index asked for: an executor's first running
 * batch changes without the executor going idle in between */
static int rb_fifo_init(struct sim *s, const cJSON *p, void *state)
{
    int rc = policy_find("fifo")->init(s, p, state);
    return rc ? rc : sim_exec_index_running(s);
}

static void running_brief_run(const char *text, const struct policy_ops *pol, bool preempts)
{
    struct sim_config *cfg;
    struct sim *s = engine_for(text, pol, NULL, &cfg);
    struct rb_seen v = {0, 0};
    struct sim_observer obs = {.ctx = &v, .event = rb_event};
    sim_set_observer(s, &obs);
    REQUIRE_OK(sim_run(s));
    struct sim_result *r;
    REQUIRE_OK(sim_result_collect(s, &r));
    unsigned long long pre = 0;
    for (int m = 0; m < r->nmodels; m++)
        pre += r->models[m].preempted;
    CHECK(v.checks > 10000 && v.busy > v.checks / 4 && (pre > 0) == preempts,
          "%ld checks, %ld of them on a busy executor, %llu preempted: too little covered",
          v.checks, v.busy, pre);
    printf("running brief: %ld checks (%ld busy), %llu preempted\n", v.checks, v.busy, pre);
    sim_result_destroy(r);
    sim_destroy(s);
    sim_config_destroy(cfg);
}

static void running_brief_follows_batches(void)
{
    running_brief_run(
        "{\"seed\":4,\"duration_s\":3,\"cluster\":{\"gpus\":6},\"models\":["
        "{\"name\":\"a\",\"alpha_ms\":2,\"beta_ms\":1,\"slo_ms\":60,\"max_batch\":16},"
        "{\"name\":\"b\",\"alpha_ms\":3,\"beta_ms\":0.5,\"slo_ms\":40,\"max_batch\":16},"
        "{\"name\":\"c\",\"alpha_ms\":1,\"beta_ms\":2,\"slo_ms\":100,\"max_batch\":8}],"
        "\"workload\":{\"rate_rps\":3000},\"policy\":{\"name\":\"shepherd\"},"
        "\"metrics\":{\"sample_period_s\":0}}",
        NULL, true);
    struct policy_ops fifo2 = *policy_find("fifo");
    fifo2.name = "fifo-indexed";
    fifo2.init = rb_fifo_init;
    running_brief_run(
        "{\"seed\":5,\"duration_s\":3,\"cluster\":{\"gpus\":3,\"lanes\":2},\"models\":["
        "{\"name\":\"a\",\"alpha_ms\":2,\"beta_ms\":1,\"slo_ms\":60,\"max_batch\":4},"
        "{\"name\":\"b\",\"alpha_ms\":3,\"beta_ms\":0.5,\"slo_ms\":40,\"max_batch\":8}],"
        "\"workload\":{\"rate_rps\":900},\"policy\":{\"name\":\"fifo\"},"
        "\"metrics\":{\"sample_period_s\":0}}",
        &fifo2, false);
}

/* A test policy: sets timers at init, cancels some, records what fires. */
struct tp {
    int fired[16];
    int64_t fired_at[16];
    uint64_t h[16];
    int nfired;
};

static int tp_init(struct sim *s, const cJSON *p, void *state)
{
    struct tp *t = state;
    (void)p;
    for (int i = 0; i < 10; i++)
        t->h[i] = sim_timer_set(s, (int64_t)(10 - i) * 1000, (uint64_t)i, NULL);
    t->h[10] = sim_timer_set(s, 5000, 10, NULL);      /* same time as timer 5: fires after it */
    sim_timer_cancel(s, t->h[3]);
    sim_timer_cancel(s, t->h[7]);
    sim_timer_cancel(s, t->h[7]);                      /* twice: no-op */
    return 0;
}

static void tp_on_request(struct sim *s, void *state, int m, struct sim_request *r)
{
    (void)state;
    (void)r;
    sim_queue_drop_head(s, m);
}

static void tp_on_timer(struct sim *s, void *state, uint64_t tag, void *arg)
{
    struct tp *t = state;
    (void)arg;
    t->fired[t->nfired] = (int)tag;
    t->fired_at[t->nfired++] = sim_now(s);
    if (tag == 9) {                                    /* fires first; re-arm and cancel */
        uint64_t h = sim_timer_set(s, 2500, 11, NULL);
        sim_timer_cancel(s, h);
        sim_timer_cancel(s, t->h[9]);                  /* stale handle: harmless */
    }
}

static const char tiny_cfg[] =
    "{\"name\":\"t\",\"duration_s\":0.001,\"cluster\":{\"gpus\":1},"
    "\"models\":[{\"name\":\"m\",\"alpha_ms\":1,\"beta_ms\":1,\"slo_ms\":100}],"
    "\"workload\":{\"rate_rps\":1},\"metrics\":{\"sample_period_s\":0}}";

/* The test policy copies its record out after every timer, so the test can read it. */
static struct tp observed;
static void tp2_on_timer(struct sim *s, void *state, uint64_t tag, void *arg)
{
    tp_on_timer(s, state, tag, arg);
    observed = *(struct tp *)state;
}

static void timers_cancelled_never_fire(void)
{
    static const struct policy_ops ops = {
        .name = "timer-test", .state_size = sizeof(struct tp), .init = tp_init,
        .on_request = tp_on_request, .on_timer = tp2_on_timer};
    struct sim_config *cfg;
    struct sim *s;
    memset(&observed, 0, sizeof observed);
    REQUIRE_OK(sim_config_from_text(tiny_cfg, "tiny", ".", &cfg));
    REQUIRE_OK(sim_config_engine(cfg, 1.0, &ops, &s, NULL));
    REQUIRE_OK(sim_run(s));
    /* expected firing order: tags 9,8,6,5,10,4,2,1,0 (3 and 7 cancelled, 11 cancelled) */
    static const int want[] = {9, 8, 6, 5, 10, 4, 2, 1, 0};
    CHECK(observed.nfired == 9, "fired %d timers", observed.nfired);
    for (int i = 0; i < 9 && i < observed.nfired; i++) {
        CHECK(observed.fired[i] == want[i], "timer %d: fired tag %d, want %d", i,
              observed.fired[i], want[i]);
        if (i)
            CHECK(observed.fired_at[i] >= observed.fired_at[i - 1], "time went backwards");
    }
    sim_destroy(s);
    sim_config_destroy(cfg);
}

/* Timers armed for the current instant skip the heap (a FIFO in sim_timer.c) and keep the
 * one (time, seq) order: at t = 1 us, timer 1 arms 3, 4 (cancelled), 5, 6, then re-arms 5 for
 * now again (it moves behind 6), arms 7 and moves it to 2 us, and moves 8 from 3 us to now.
 * Timer 2, due at 1 us since init, fires before them all. */
static struct { int tag[16]; int64_t at[16]; int n; } now_seen;
static uint64_t now_h8;

static int now_init(struct sim *s, const cJSON *p, void *state)
{
    (void)p;
    (void)state;
    sim_timer_set(s, 1000, 1, NULL);
    sim_timer_set(s, 1000, 2, NULL);
    now_h8 = sim_timer_set(s, 3000, 8, NULL);
    return 0;
}

static void now_on_timer(struct sim *s, void *state, uint64_t tag, void *arg)
{
    (void)state;
    (void)arg;
    now_seen.tag[now_seen.n] = (int)tag;
    now_seen.at[now_seen.n++] = sim_now(s);
    if (tag != 1)
        return;
    sim_timer_set(s, sim_now(s), 3, NULL);
    sim_timer_cancel(s, sim_timer_set(s, sim_now(s), 4, NULL));
    uint64_t h5 = sim_timer_set(s, sim_now(s), 5, NULL);
    sim_timer_set(s, 0, 6, NULL);                      /* in the past: now */
    sim_timer_rearm(s, h5, sim_now(s), 5, NULL);
    uint64_t h7 = sim_timer_set(s, sim_now(s), 7, NULL);
    sim_timer_rearm(s, h7, 2000, 7, NULL);
    sim_timer_rearm(s, now_h8, sim_now(s), 8, NULL);
}

static void timers_due_now_keep_the_order(void)
{
    static const struct policy_ops ops = {
        .name = "timer-now-test", .state_size = sizeof(int), .init = now_init,
        .on_request = tp_on_request, .on_timer = now_on_timer};
    struct sim_config *cfg;
    struct sim *s;
    struct sim_result *r = NULL;
    memset(&now_seen, 0, sizeof now_seen);
    REQUIRE_OK(sim_config_from_text(tiny_cfg, "tiny", ".", &cfg));
    REQUIRE_OK(sim_config_engine(cfg, 1.0, &ops, &s, NULL));
    REQUIRE_OK(sim_run(s));
    static const int want[] = {1, 2, 3, 6, 5, 8, 7};
    static const int64_t want_at[] = {1000, 1000, 1000, 1000, 1000, 1000, 2000};
    CHECK(now_seen.n == 7, "fired %d timers, want 7", now_seen.n);
    for (int i = 0; i < 7 && i < now_seen.n; i++)
        CHECK(now_seen.tag[i] == want[i] && now_seen.at[i] == want_at[i],
              "timer %d: tag %d at %lld ns, want tag %d at %lld", i, now_seen.tag[i],
              (long long)now_seen.at[i], want[i], (long long)want_at[i]);
    REQUIRE_OK(sim_result_collect(s, &r));
    CHECK(r->same_instant == 4, "%llu timers fired from the due-now FIFO, want 4 (3, 6, 5, 8)",
          (unsigned long long)r->same_instant);
    sim_result_destroy(r);
    sim_destroy(s);
    sim_config_destroy(cfg);
}

static void hist_quantiles_within_one_percent(void)
{
    gsl_rng *r = sim_rng_stream(11, "hist");
    enum { N = 200000 };
    double *x = malloc(N * sizeof *x);
    struct sim_hist *h = malloc(sizeof *h);
    sim_hist_reset(h);
    for (int i = 0; i < N; i++) {
        /* latencies from 0.2 ms to seconds: lognormal around 5 ms, in ns */
        x[i] = floor(gsl_ran_lognormal(r, log(5e6), 1.2));
        sim_hist_add(h, (int64_t)x[i]);
    }
    gsl_sort(x, 1, N);
    static const double qs[] = {0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999};
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        /* nearest-rank exact quantile: the ceil(q N)-th smallest */
        size_t rank = (size_t)ceil(qs[i] * N);
        double exact = x[rank - 1];
        double got = (double)sim_hist_quantile(h, qs[i]);
        CHECK(fabs(got - exact) <= 0.01 * exact, "q=%g: hist %.0f exact %.0f (%.3f%%)", qs[i],
              got, exact, 100 * (got - exact) / exact);
    }
    CHECK(fabs(sim_hist_mean(h) - gsl_stats_mean(x, 1, N)) < 1e-6 * gsl_stats_mean(x, 1, N),
          "mean %g vs %g", sim_hist_mean(h), gsl_stats_mean(x, 1, N));
    /* exact below 256, bounded width above */
    for (int64_t v = 0; v < 256; v++) {
        int64_t lo, hi;
        sim_hist_bucket_range(sim_hist_bucket_of(v), &lo, &hi);
        CHECK(lo == v && hi == v, "value %lld in [%lld, %lld]", (long long)v, (long long)lo, (long long)hi);
    }
    for (int64_t v = 256; v < ((int64_t)1 << 39); v = v * 3 + 7) {
        int64_t lo, hi;
        sim_hist_bucket_range(sim_hist_bucket_of(v), &lo, &hi);
        CHECK(lo <= v && v <= hi && (double)(hi - lo + 1) <= (double)lo / 127.0,
              "value %lld in [%lld, %lld]", (long long)v, (long long)lo, (long long)hi);
    }
    free(x);
    free(h);
    gsl_rng_free(r);
}

static void rng_streams_depend_on_name_and_seed_only(void)
{
    gsl_rng *a = sim_rng_stream(1, "arrivals.ResNet50"), *b = sim_rng_stream(1, "arrivals.ResNet50");
    gsl_rng *c = sim_rng_stream(1, "arrivals.VGG16"), *d = sim_rng_stream(2, "arrivals.ResNet50");
    unsigned long xa = gsl_rng_get(a), xb = gsl_rng_get(b), xc = gsl_rng_get(c), xd = gsl_rng_get(d);
    CHECK(xa == xb, "same stream differs: %lu %lu", xa, xb);
    CHECK(xa != xc && xa != xd, "streams collide: %lu %lu %lu", xa, xc, xd);
    gsl_rng_free(a);
    gsl_rng_free(b);
    gsl_rng_free(c);
    gsl_rng_free(d);
}

static void arrival_rates_and_burstiness(void)
{
    static const char *const kinds[] = {"poisson", "gamma", "uniform"};
    static const double want_cv2[] = {1.0, 1.0 / 0.2, 0.0};
    for (int k = 0; k < 3; k++) {
        char text[512];
        snprintf(text, sizeof text,
                 "{\"duration_s\":1,\"cluster\":{\"gpus\":1},\"models\":[{\"name\":\"m\","
                 "\"alpha_ms\":1,\"beta_ms\":1,\"slo_ms\":10}],\"workload\":{\"rate_rps\":100,"
                 "\"arrival\":{\"kind\":\"%s\"%s}}}", kinds[k], k == 1 ? ",\"shape\":0.2" : "");
        struct sim_config *cfg;
        REQUIRE_OK(sim_config_from_text(text, "arr", ".", &cfg));
        struct wl_stream st;
        REQUIRE_OK(wl_stream_init(&st, &cfg->workload, cfg->world.seed, "arrivals.m", 100.0));
        enum { N = 200000 };
        double *g = malloc(N * sizeof *g);
        int64_t prev = wl_stream_next(&st);
        for (int i = 0; i < N; i++) {
            int64_t t = wl_stream_next(&st);
            g[i] = (double)(t - prev) / 1e9;
            prev = t;
        }
        double mean = gsl_stats_mean(g, 1, N), var = gsl_stats_variance(g, 1, N);
        CHECK_NEAR(mean, 0.01, 0.02);
        double cv2 = var / (mean * mean);
        CHECK(fabs(cv2 - want_cv2[k]) <= 0.05 * want_cv2[k] + 1e-6, "%s: cv^2 %g want %g",
              kinds[k], cv2, want_cv2[k]);
        free(g);
        wl_stream_free(&st);
        sim_config_destroy(cfg);
    }
}

static void segments_scale_the_rate(void)
{
    const char *text =
        "{\"duration_s\":30,\"cluster\":{\"gpus\":1},\"models\":[{\"name\":\"m\",\"alpha_ms\":1,"
        "\"beta_ms\":1,\"slo_ms\":10}],\"workload\":{\"rate_rps\":1000,\"segments\":["
        "{\"duration_s\":10,\"scale\":1},{\"duration_s\":10,\"scale\":0},{\"scale\":3}]}}";
    struct sim_config *cfg;
    REQUIRE_OK(sim_config_from_text(text, "seg", ".", &cfg));
    struct wl_stream st;
    REQUIRE_OK(wl_stream_init(&st, &cfg->workload, cfg->world.seed, "arrivals.m", 1000.0));
    int count[3] = {0, 0, 0};
    for (;;) {
        int64_t t = wl_stream_next(&st);
        if (t >= 30 * SIM_NS_PER_S)
            break;
        count[t / (10 * SIM_NS_PER_S)]++;
    }
    CHECK_NEAR(count[0], 10000, 0.03);
    CHECK(count[1] == 0, "zero-rate segment had %d arrivals", count[1]);
    CHECK_NEAR(count[2], 30000, 0.03);
    wl_stream_free(&st);
    sim_config_destroy(cfg);
}

/* Model m's arrivals in 30 s from its engine source (wl_stream_source), per 10-s third;
 * every arrival must be of model m. */
static void count_arrivals(const struct sim_config *cfg, int m, int count[3])
{
    struct sim_source src;
    char name[SIM_NAME_MAX + 16];
    snprintf(name, sizeof name, "arrivals.%s", cfg->world.models[m].name);
    REQUIRE_OK(wl_stream_source(&cfg->workload, cfg->world.seed, name, cfg->world.model_rps[m], m,
                                &src));
    for (;;) {
        int64_t t;
        int model;
        double size;
        src.next(src.ctx, &t, &model, &size);
        if (t >= 30 * SIM_NS_PER_S)
            break;
        CHECK(model == m, "source of model %d gave model %d", m, model);
        count[t / (10 * SIM_NS_PER_S)]++;
    }
    src.close(src.ctx);
}

/* Per-model factors in a segment shift the popularity: model a at 3x in the first 10 s, b at
 * 0 in the last 10 s, the others (and the other segments) at the segment's scale; the sources
 * the engine runs (wl_stream_source) count 3x and 0 there. An unknown model is an error with
 * its JSON path. */
static void segments_shift_popularity(void)
{
    const char *text =
        "{\"duration_s\":30,\"cluster\":{\"gpus\":1},\"models\":[{\"name\":\"a\",\"alpha_ms\":1,"
        "\"beta_ms\":1,\"slo_ms\":10},{\"name\":\"b\",\"alpha_ms\":1,\"beta_ms\":1,\"slo_ms\":10}],"
        "\"workload\":{\"rate_rps\":2000,\"segments\":[{\"duration_s\":10,\"scale\":1,"
        "\"models\":{\"a\":3}},{\"duration_s\":10,\"scale\":2},{\"scale\":1,\"models\":{\"b\":0}}]}}";
    struct sim_config *cfg;
    REQUIRE_OK(sim_config_from_text(text, "seg", ".", &cfg));
    int count[2][3] = {{0}};
    for (int m = 0; m < 2; m++)
        count_arrivals(cfg, m, count[m]);
    CHECK_NEAR(count[0][0], 30000, 0.03);   /* 1000 r/s x 3 */
    CHECK_NEAR(count[1][0], 10000, 0.03);
    CHECK_NEAR(count[0][1], 20000, 0.03);   /* x 2 both */
    CHECK_NEAR(count[1][1], 20000, 0.03);
    CHECK_NEAR(count[0][2], 10000, 0.03);
    CHECK(count[1][2] == 0, "model b at factor 0 had %d arrivals", count[1][2]);
    sim_config_destroy(cfg);
    const char *bad =
        "{\"cluster\":{\"gpus\":1},\"models\":[{\"name\":\"a\",\"alpha_ms\":1,\"beta_ms\":1,"
        "\"slo_ms\":10}],\"workload\":{\"rate_rps\":10,\"segments\":[{\"scale\":1,"
        "\"models\":{\"z\":2}}]}}";
    CHECK(sim_config_from_text(bad, "seg", ".", &cfg) == SIM_EINVAL &&
              strstr(sim_err_msg(), "workload.segments[0].models") && strstr(sim_err_msg(), "\"z\""),
          "unknown model: %s", sim_err_msg());
}

/* workload.rate_schedules: model a follows its own steps (100 r/s for 10 s, then 300 held to
 * the end), its configured rate is the steps' mean over the run; the workload's rate_rps
 * splits over the others (b and c: 50 each); every model's arrivals match per step. Bad
 * schedules are errors with their JSON path. */
static void rate_schedules_drive_each_model(void)
{
    const char *text =
        "{\"duration_s\":30,\"cluster\":{\"gpus\":1},\"models\":["
        "{\"name\":\"a\",\"alpha_ms\":1,\"beta_ms\":1,\"slo_ms\":10},"
        "{\"name\":\"b\",\"alpha_ms\":1,\"beta_ms\":1,\"slo_ms\":10},"
        "{\"name\":\"c\",\"alpha_ms\":1,\"beta_ms\":1,\"slo_ms\":10}],"
        "\"workload\":{\"rate_rps\":100,\"rate_schedules\":{\"a\":{\"step_s\":10,"
        "\"rps\":[100,300]}}}}";
    struct sim_config *cfg;
    REQUIRE_OK(sim_config_from_text(text, "sched", ".", &cfg));
    CHECK_NEAR(cfg->world.model_rps[0], (100.0 * 10 + 300.0 * 20) / 30, 1e-9);
    CHECK_NEAR(cfg->world.model_rps[1], 50, 1e-9);
    CHECK_NEAR(cfg->world.model_rps[2], 50, 1e-9);
    CHECK_NEAR(cfg->world.rate_rps, 100 + (100.0 * 10 + 300.0 * 20) / 30, 1e-9);
    int count[3][3] = {{0}};
    for (int m = 0; m < 3; m++)
        count_arrivals(cfg, m, count[m]);
    CHECK_NEAR(count[0][0], 1000, 0.08);
    CHECK_NEAR(count[0][1], 3000, 0.05);
    CHECK_NEAR(count[0][2], 3000, 0.05);
    for (int k = 0; k < 3; k++)
        CHECK_NEAR(count[1][k], 500, 0.12);
    sim_config_destroy(cfg);
    static const struct { const char *work, *want; } bad[] = {
        {"\"rate_rps\":10,\"rate_schedules\":{\"a\":{\"step_s\":10,\"rps\":[5,-1]}}",
         "workload.rate_schedules.a.rps[1]"},
        {"\"rate_rps\":10,\"rate_schedules\":{\"z\":{\"step_s\":10,\"rps\":[5]}}",
         "no model named \"z\""},
        {"\"rate_rps\":10,\"rate_schedules\":{\"a\":{\"step_s\":0,\"rps\":[5]}}",
         "workload.rate_schedules.a"},
        {"\"rate_rps\":10,\"rate_schedules\":{\"a\":{\"step_s\":1,\"rps\":[5]}},"
         "\"segments\":[{\"scale\":1}]", "not both"},
        {"\"rate_rps\":10,\"rate_schedules\":{\"a\":{\"step_s\":1,\"rps\":[5]},"
         "\"b\":{\"step_s\":1,\"rps\":[5]},\"c\":{\"step_s\":1,\"rps\":[5]}}",
         "remove rate_rps"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char t[1024];
        snprintf(t, sizeof t,
                 "{\"duration_s\":30,\"cluster\":{\"gpus\":1},\"models\":["
                 "{\"name\":\"a\",\"alpha_ms\":1,\"beta_ms\":1,\"slo_ms\":10},"
                 "{\"name\":\"b\",\"alpha_ms\":1,\"beta_ms\":1,\"slo_ms\":10},"
                 "{\"name\":\"c\",\"alpha_ms\":1,\"beta_ms\":1,\"slo_ms\":10}],"
                 "\"workload\":{%s}}", bad[i].work);
        CHECK(sim_config_from_text(t, "sched", ".", &cfg) == SIM_EINVAL &&
                  strstr(sim_err_msg(), bad[i].want),
              "case %zu: expected \"%s\" in: %s", i, bad[i].want, sim_err_msg());
    }
}

static void json_set_paths(void)
{
    cJSON *root = cJSON_Parse("{\"cluster\":{\"gpus\":4},\"models\":[{\"slo_ms\":20},{\"slo_ms\":30}]}");
    REQUIRE_OK(sim_json_set(root, "cluster.gpus=16"));
    REQUIRE_OK(sim_json_set(root, "models[1].slo_ms=45.5"));
    REQUIRE_OK(sim_json_set(root, "policy.name=fifo"));
    REQUIRE_OK(sim_json_set(root, "policy.params.work_conserving=true"));
    char *t = cJSON_PrintUnformatted(root);
    CHECK(strcmp(t, "{\"cluster\":{\"gpus\":16},\"models\":[{\"slo_ms\":20},{\"slo_ms\":45.5}],"
                    "\"policy\":{\"name\":\"fifo\",\"params\":{\"work_conserving\":true}}}") == 0,
          "got %s", t);
    free(t);
    CHECK(sim_json_set(root, "models[5].slo_ms=1") == SIM_EINVAL, "index out of range accepted");
    CHECK(strstr(sim_err_msg(), "out of range") != NULL, "message: %s", sim_err_msg());
    CHECK(sim_json_set(root, "cluster.gpus[0]=1") == SIM_EINVAL, "non-array indexed");
    CHECK(sim_json_set(root, "novalue") == SIM_EUSAGE, "missing '=' accepted");
    cJSON_Delete(root);
}

/* A table of settings (sim/util/sim_param.h): defaults, values of every type, an included
 * table's rows at its offset, the messages sim_json gives, the docs' rows. */
struct pt_inner { double x; };
struct pt {
    double num;
    int i, e;
    long l;
    bool b;
    const char *str;
    const cJSON *obj;
    struct pt_inner in;
};
static const char *const PT_CHOICES[] = {"one", "two", "three", NULL};
static const struct sim_param PT_INNER[] = {
    {"x", SIM_P_NUM, SIM_P_AT(struct pt_inner, x, double), .cons = SIM_J_UNIT, .def = 0.5,
     .doc = "shared"},
    {NULL}};
static const struct sim_param PT[] = {
    {"num_ms", SIM_P_NUM, SIM_P_AT(struct pt, num, double), .cons = SIM_J_POS, .def = 20,
     .doc = "a duration"},
    {"i", SIM_P_INT, SIM_P_AT(struct pt, i, int), .lo = 1, .hi = 8, .def = 4, .doc = "an int"},
    {"e", SIM_P_ENUM, SIM_P_AT_ENUM(struct pt, e), .choices = PT_CHOICES, .sdef = "two",
     .doc = "a choice"},
    {"l", SIM_P_LONG, SIM_P_AT(struct pt, l, long), .lo = 0, .hi = 1L << 40,
     .flags = SIM_P_REQUIRED, .doc = "required"},
    {"b", SIM_P_BOOL, SIM_P_AT(struct pt, b, bool), .def = 1, .doc = "a flag"},
    {"str", SIM_P_STR, SIM_P_AT(struct pt, str, const char *), .sdef = "dflt", .doc = "text"},
    {"obj", SIM_P_OBJ, SIM_P_AT(struct pt, obj, const cJSON *), .doc = "an object"},
    {"hand", SIM_P_HAND, .type_doc = "`[a, b]`", .def_doc = "none", .doc = "by hand"},
    {"inner", SIM_P_INCLUDE, SIM_P_AT(struct pt, in, struct pt_inner), .rows = PT_INNER},
    {NULL}};

static void params_table_reads_checks_and_documents(void)
{
    struct pt v;
    memset(&v, 0xff, sizeof v);
    cJSON *j = cJSON_Parse("{\"l\": 7, \"hand\": [1, 2]}");
    REQUIRE_OK(sim_params_read(PT, j, "sec", &v));
    CHECK(v.num == 20 && v.i == 4 && v.e == 1 && v.l == 7 && v.b && strcmp(v.str, "dflt") == 0 &&
              v.obj == NULL && v.in.x == 0.5,
          "defaults: %g %d %d %ld %d %s %g", v.num, v.i, v.e, v.l, v.b, v.str, v.in.x);
    cJSON_Delete(j);
    j = cJSON_Parse("{\"num_ms\": 2.5, \"i\": 8, \"e\": \"three\", \"l\": 1099511627776,"
                    " \"b\": false, \"str\": \"s\", \"obj\": {}, \"x\": 1}");
    REQUIRE_OK(sim_params_read(PT, j, "sec", &v));
    CHECK(v.num == 2.5 && v.i == 8 && v.e == 2 && v.l == (1L << 40) && !v.b &&
              strcmp(v.str, "s") == 0 && cJSON_IsObject(v.obj) && v.in.x == 1,
          "values: %g %d %d %ld %d %s %g", v.num, v.i, v.e, v.l, v.b, v.str, v.in.x);
    cJSON_Delete(j);
    static const struct { const char *json, *want; } bad[] = {
        {"{\"l\": 1, \"y\": 1}",
         "sec.y: unknown key (expected one of: num_ms, i, e, l, b, str, obj, hand, x)"},
        {"{\"l\": 1, \"i\": 9}", "sec.i: expected an integer in [1, 8], got 9"},
        {"{\"l\": 1, \"num_ms\": 0}", "sec.num_ms: expected a positive number, got 0"},
        {"{\"l\": 1, \"num_ms\": 1e12}", "sec.num_ms: expected a duration of at most 1e+08 s"},
        {"{\"l\": 1, \"e\": \"four\"}", "sec.e: expected one of"},
        {"{\"l\": 1, \"x\": 2}", "sec.x: expected a number in [0, 1], got 2"},
        {"{\"l\": 1, \"obj\": 3}", "sec.obj: expected an object"},
        {"{}", "sec.l: missing"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        j = cJSON_Parse(bad[k].json);
        CHECK(sim_params_read(PT, j, "sec", &v) == SIM_EINVAL &&
                  strstr(sim_err_msg(), bad[k].want) != NULL,
              "%s: expected \"%s\" in: %s", bad[k].json, bad[k].want, sim_err_msg());
        cJSON_Delete(j);
    }
    /* an absent section: the defaults, and a required key missing */
    CHECK(sim_params_read(PT, NULL, "sec", &v) == SIM_EINVAL && strstr(sim_err_msg(), "sec.l"),
          "absent section: %s", sim_err_msg());
    /* values without the check of keys: the rows another table includes */
    j = cJSON_Parse("{\"x\": 0.25, \"other\": 1}");
    REQUIRE_OK(sim_params_values(PT_INNER, j, "sec", &v.in));
    CHECK(v.in.x == 0.25, "included value %g", v.in.x);
    cJSON_Delete(j);
    CHECK(sim_params_count(PT) == 9 && sim_params_find(PT, "x") == &PT_INNER[0] &&
              sim_params_find(PT, "inner") == NULL && sim_params_find(PT, "nope") == NULL,
          "count %d, find", sim_params_count(PT));
    /* the docs' rows */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    REQUIRE_OK(f == NULL);
    sim_params_markdown(PT, "sec", f);
    fclose(f);
    static const char *const rows[] = {
        "| `sec.num_ms` | > 0, 20 | a duration |\n",
        "| `sec.i` | integer in [1, 8], 4 | an int |\n",
        "| `sec.e` | `one`, `two` (default), `three` | a choice |\n",
        "| `sec.l` | integer in [0, 1099511627776], required | required |\n",
        "| `sec.b` | bool, true | a flag |\n",
        "| `sec.str` | string, `\"dflt\"` | text |\n",
        "| `sec.obj` | object | an object |\n",
        "| `sec.hand` | `[a, b]`, none | by hand |\n",
        "| `sec.x` | in [0, 1], 0.5 | shared |\n"};
    size_t at = 0;
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        CHECK(strncmp(buf + at, rows[k], strlen(rows[k])) == 0, "row %zu: want %s got %s", k,
              rows[k], buf + at);
        at += strlen(rows[k]);
    }
    CHECK(at == len, "%zu bytes of rows, %zu written", at, len);
    free(buf);
    /* every table the project declares is well formed, and a malformed one is caught */
    char why[256];
    const struct { const struct sim_param *t; const char *name; } all[] = {
        {sim_config_keys(), "config"}, {sim_sweep_keys, "sweep"}, {wl_zoo_keys, "zoo"},
        {wl_zoo_ref_keys, "zoo reference"}, {wl_model_keys, "model"}, {PT, "test"}};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        CHECK(sim_params_check(all[k].t, why, sizeof why) == 0, "%s: %s", all[k].name, why);
    static const struct sim_param BAD_DEFAULT[] = {
        {"e", SIM_P_ENUM, SIM_P_AT_ENUM(struct pt, e), .choices = PT_CHOICES, .sdef = "four",
         .doc = "x"},
        {NULL}};
    static const struct sim_param NO_DOC[] = {
        {"b", SIM_P_BOOL, SIM_P_AT(struct pt, b, bool)}, {NULL}};
    static const struct sim_param TWICE[] = {
        {"b", SIM_P_BOOL, SIM_P_AT(struct pt, b, bool), .doc = "x"},
        {"inner", SIM_P_INCLUDE, .rows = TWICE + 2},
        {"b", SIM_P_BOOL, SIM_P_AT(struct pt, b, bool), .doc = "y"},
        {NULL}};
    CHECK(sim_params_check(BAD_DEFAULT, why, sizeof why) < 0 && strstr(why, "\"four\""),
          "a default outside the choices passed: %s", why);
    CHECK(sim_params_check(NO_DOC, why, sizeof why) < 0 && strstr(why, "no doc"),
          "a row without doc passed: %s", why);
    CHECK(sim_params_check(TWICE, why, sizeof why) < 0 && strstr(why, "twice"),
          "a key twice (via an include) passed: %s", why);
}

/* M/D/1: batch size 1, deterministic service D, Poisson arrivals, one GPU, FIFO.
 * Mean wait in queue W = rho / (2 mu (1 - rho)). */
static void md1_mean_wait(void)
{
    const double D_ms = 10, rho = 0.6, mu = 1000.0 / D_ms, lambda = rho * mu;
    char text[1024];
    snprintf(text, sizeof text,
             "{\"name\":\"md1\",\"seed\":3,\"duration_s\":3000,\"warmup_s\":20,"
             "\"cluster\":{\"gpus\":1},\"models\":[{\"name\":\"m\",\"alpha_ms\":0,\"beta_ms\":%g,"
             "\"slo_ms\":1e6,\"max_batch\":1}],\"workload\":{\"rate_rps\":%g},"
             "\"network\":{\"ctrl_us\":0,\"data_us_per_request\":0,\"resp_us\":0},"
             "\"policy\":{\"name\":\"fifo\",\"params\":{\"drop_late\":false}},"
             "\"metrics\":{\"sample_period_s\":0}}", D_ms, lambda);
    struct sim_result *r = test_run_text(text, "md1");
    double want_ms = rho / (2 * mu * (1 - rho)) * 1000;
    CHECK_NEAR(r->models[0].mean_queue_ms, want_ms, 0.03);
    CHECK(r->models[0].mean_batch == 1.0, "mean batch %g", r->models[0].mean_batch);
    CHECK(r->dropped == 0 && r->late == 0, "dropped %llu late %llu",
          (unsigned long long)r->dropped, (unsigned long long)r->late);
    printf("M/D/1 rho=%.2f: mean wait %.4f ms, analytic %.4f ms (%d requests)\n", rho,
           r->models[0].mean_queue_ms, want_ms, (int)r->offered);
    sim_result_destroy(r);
}

/* Overload: an M/D/1 queue at rho 5 (fifo that never drops) gains about 400 requests a
 * second; with the world's cap of live requests at 1,000 the run stops with the error near
 * t = 2.5 s (1,000 / 400) instead of growing without bound, and no result is produced; the
 * same run at rho 0.6 is unaffected by the cap. */
#define OVL_CFG(rate)                                                                       \
    "{\"name\":\"ovl\",\"duration_s\":60,\"cluster\":{\"gpus\":1},\"models\":[{\"name\":"   \
    "\"m\",\"alpha_ms\":0,\"beta_ms\":10,\"slo_ms\":1e6,\"max_batch\":1}],\"workload\":"      \
    "{\"rate_rps\":" rate "},\"network\":{\"ctrl_us\":0,\"data_us_per_request\":0,\"resp_us\":"  \
    "0},\"policy\":{\"name\":\"fifo\",\"params\":{\"drop_late\":false}},\"metrics\":"         \
    "{\"sample_period_s\":0}}"

/* The engine built at load (to check the policy's params) serves the first run only while
 * the world is what it was built from: a field set after load (here the duration, as tests
 * and the fuzzers do) gets an engine built anew, not a run of the loaded world. */
static void config_engine_follows_the_world(void)
{
    struct sim_config *cfg;
    struct sim_result *r = NULL;
    REQUIRE_OK(sim_config_from_text(OVL_CFG("50"), "ovl", ".", &cfg));
    cfg->world.duration_s = 5;
    REQUIRE_OK(sim_run_once(cfg, 1.0, NULL, &r));
    CHECK(r->duration_s == 5 && r->models[0].offered < 50 * 5 * 1.5,
          "duration %g s, %llu offered", r->duration_s, (unsigned long long)r->models[0].offered);
    sim_result_destroy(r);
    sim_config_destroy(cfg);
}

static void overload_stops_the_run(void)
{
    struct sim_config *cfg;
    struct sim_result *r = NULL;
    REQUIRE_OK(sim_config_from_text(OVL_CFG("500"), "ovl", ".", &cfg));
    cfg->world.max_live_requests = 1000;
    int rc = sim_run_once(cfg, 1.0, NULL, &r);
    const char *msg = sim_err_msg(), *at = strstr(msg, "at t = ");
    double t = at ? atof(at + 7) : -1;
    CHECK(rc == SIM_EINVAL && strstr(msg, "more than 1000 requests in the system") && t > 2.2 &&
          t < 2.8 && !r, "rc %d, t %.3f, result %p: %s", rc, t, (void *)r, msg);
    sim_result_destroy(r);
    sim_config_destroy(cfg);
    REQUIRE_OK(sim_config_from_text(OVL_CFG("60"), "ovl", ".", &cfg));
    cfg->world.max_live_requests = 1000;
    REQUIRE_OK(sim_run_once(cfg, 1.0, NULL, &r));
    CHECK(r->offered > 3000 && r->dropped == 0, "offered %llu dropped %llu",
          (unsigned long long)r->offered, (unsigned long long)r->dropped);
    sim_result_destroy(r);
    sim_config_destroy(cfg);
}

/* A results store travels as an image: runs written into ":memory:" and merged into a
 * database that already holds a run keep every row, renumbered after its largest id; a sweep
 * point follows its run; an image that is not a database changes nothing. */
static int64_t q1(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *q = NULL;
    int64_t v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
        v = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return v;
}

/* Claims of sweep points (issue 51, item 24), by hand: a live process's claim is TAKEN (its
 * pid said); one by a pid that started after the claim (reused) or that is gone is taken
 * over; another host's is trusted for a day; a stored point is DONE; a release removes this
 * process's claim only. */
static void sweep_claims_by_hand(void)
{
    char path[] = "/tmp/servesim_claims_XXXXXX";
    int fd = mkstemp(path);
    REQUIRE_OK(fd < 0 ? -1 : 0);
    close(fd);
    unlink(path);
    struct sim_store *st = NULL;
    REQUIRE_OK(sim_store_open(path, &st));
    char me[256] = "", sql[1024];
    gethostname(me, sizeof me - 1);
    time_t now = time(NULL);
    snprintf(sql, sizeof sql,
             "INSERT INTO sweep_claims VALUES('s', 'live', %d, '%s', %lld);"
             "INSERT INTO sweep_claims VALUES('s', 'reused', %d, '%s', 1000);"
             "INSERT INTO sweep_claims VALUES('s', 'gone', 2147483000, '%s', %lld);"
             "INSERT INTO sweep_claims VALUES('s', 'remote', 1, 'elsewhere', %lld);"
             "INSERT INTO sweep_claims VALUES('s', 'old-remote', 1, 'elsewhere', %lld);"
             "INSERT INTO sweep_points VALUES('s', 0, 'stored', '{}', NULL, 'ok', NULL, NULL);",
             (int)getppid(), me, (long long)now, (int)getppid(), me, me, (long long)now,
             (long long)now, (long long)now - 2 * 86400);
    sqlite3 *db;
    REQUIRE_OK(sqlite3_open(path, &db) == SQLITE_OK ? 0 : -1);
    REQUIRE_OK(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1);
    static const struct { const char *key; enum sim_claim want; } c[] = {
        {"live", SIM_CLAIM_TAKEN}, {"reused", SIM_CLAIM_OURS}, {"gone", SIM_CLAIM_OURS},
        {"remote", SIM_CLAIM_TAKEN}, {"old-remote", SIM_CLAIM_OURS}, {"stored", SIM_CLAIM_DONE},
        {"new", SIM_CLAIM_OURS}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        enum sim_claim got;
        int64_t holder = 0;
        REQUIRE_OK(sim_store_point_claim(st, "s", c[i].key, &got, &holder));
        CHECK(got == c[i].want && (got != SIM_CLAIM_TAKEN || holder > 0), "%s: claim %d, want %d",
              c[i].key, (int)got, (int)c[i].want);
    }
    REQUIRE_OK(sim_store_point_release(st, "s", "new"));
    REQUIRE_OK(sim_store_point_release(st, "s", "live"));   /* not ours: kept */
    CHECK(q1(db, "SELECT count(*) FROM sweep_claims WHERE point_key = 'new'") == 0 &&
              q1(db, "SELECT count(*) FROM sweep_claims WHERE point_key = 'live'") == 1,
          "release: new %lld, live %lld",
          (long long)q1(db, "SELECT count(*) FROM sweep_claims WHERE point_key = 'new'"),
          (long long)q1(db, "SELECT count(*) FROM sweep_claims WHERE point_key = 'live'"));
    sqlite3_close(db);
    sim_store_close(st);
    unlink(path);
}

/* The column of `name` in a SELECT * row (issue 53: results written by column name). */
static int col_of(sqlite3_stmt *q, const char *name)
{
    for (int i = 0; i < sqlite3_column_count(q); i++)
        if (!strcmp(sqlite3_column_name(q, i), name))
            return i;
    fprintf(stderr, "no column %s\n", name);
    exit(1);
}

#define RB_CFG                                                                                \
    "{\"name\":\"rb\",\"seed\":3,\"duration_s\":20,\"warmup_s\":2,\"cluster\":{\"gpus\":2},"  \
    "\"models\":[{\"name\":\"a\",\"alpha_ms\":1,\"beta_ms\":4,\"slo_ms\":30,\"max_batch\":4},"\
    "{\"name\":\"b\",\"alpha_ms\":2,\"beta_ms\":7,\"slo_ms\":50,\"max_batch\":8}],"           \
    "\"workload\":{\"rate_rps\":300},\"policy\":{\"name\":\"fifo\"},"                          \
    "\"metrics\":{\"sample_period_s\":1}}"

/* A run's rows read back column by column equal the result they were written from: the
 * run, each model and each executor (the writers bind by name, so a value one column over,
 * as goodput_search's worst_model and worst_bad_frac once were, shows here); and a table
 * with a column the writer does not give refuses the run, naming the column, with nothing
 * half-written. */
static void store_rows_read_back(void)
{
    char path[] = "/tmp/servesim_rows_XXXXXX";
    int fd = mkstemp(path);
    REQUIRE_OK(fd < 0 ? -1 : 0);
    close(fd);
    unlink(path);
    struct sim_config *cfg;
    struct sim_result *r = NULL;
    struct sim_store *st = NULL;
    REQUIRE_OK(sim_config_from_text(RB_CFG, "rb", ".", &cfg));
    REQUIRE_OK(sim_run_once(cfg, 1.0, NULL, &r));
    REQUIRE_OK(sim_store_open(path, &st));
    REQUIRE_OK(sim_config_store(st, cfg, "run", r, NULL, NULL, NULL));
    sqlite3 *db;
    sqlite3_stmt *q = NULL;
    REQUIRE_OK(sqlite3_open(path, &db) == SQLITE_OK ? 0 : -1);
    REQUIRE_OK(sqlite3_prepare_v2(db, "SELECT * FROM runs", -1, &q, NULL) == SQLITE_OK ? 0 : -1);
    REQUIRE_OK(sqlite3_step(q) == SQLITE_ROW ? 0 : -1);
    CHECK(!strcmp((const char *)sqlite3_column_text(q, col_of(q, "name")), "rb") &&
              !strcmp((const char *)sqlite3_column_text(q, col_of(q, "policy")), "fifo") &&
              !strcmp((const char *)sqlite3_column_text(q, col_of(q, "seed")), "3") &&
              !strcmp((const char *)sqlite3_column_text(q, col_of(q, "kind")), "run"),
          "runs: name, policy, seed or kind");
    CHECK(sqlite3_column_double(q, col_of(q, "offered_rps")) == r->offered_rps &&
              sqlite3_column_double(q, col_of(q, "ontime_rps")) == r->ontime_rps &&
              sqlite3_column_double(q, col_of(q, "bad_rate")) == r->bad_rate &&
              sqlite3_column_double(q, col_of(q, "duration_s")) == r->duration_s &&
              sqlite3_column_double(q, col_of(q, "warmup_s")) == r->warmup_s &&
              sqlite3_column_double(q, col_of(q, "gpu_s")) == r->gpu_s &&
              sqlite3_column_int64(q, col_of(q, "events")) == (int64_t)r->events &&
              sqlite3_column_int64(q, col_of(q, "gpus_max")) == r->gpus_max &&
              sqlite3_column_int64(q, col_of(q, "slo_met")) == (int64_t)r->pass &&
              sqlite3_column_type(q, col_of(q, "goodput_rps")) == SQLITE_NULL,
          "runs: offered %g / %g, events %lld / %llu", sqlite3_column_double(q, col_of(q, "offered_rps")),
          r->offered_rps, (long long)sqlite3_column_int64(q, col_of(q, "events")),
          (unsigned long long)r->events);
    sqlite3_finalize(q);
    REQUIRE_OK(sqlite3_prepare_v2(db, "SELECT * FROM model_stats ORDER BY rowid", -1, &q, NULL) ==
                       SQLITE_OK ? 0 : -1);
    for (int m = 0; m < r->nmodels; m++) {
        const struct sim_model_result *x = &r->models[m];
        REQUIRE_OK(sqlite3_step(q) == SQLITE_ROW ? 0 : -1);
        CHECK(!strcmp((const char *)sqlite3_column_text(q, col_of(q, "model")), x->name) &&
                  sqlite3_column_double(q, col_of(q, "slo_ms")) == x->slo_ms &&
                  sqlite3_column_int64(q, col_of(q, "max_batch")) == x->max_batch &&
                  sqlite3_column_int64(q, col_of(q, "offered")) == (int64_t)x->offered &&
                  sqlite3_column_int64(q, col_of(q, "on_time")) == (int64_t)x->on_time &&
                  sqlite3_column_int64(q, col_of(q, "late")) == (int64_t)x->late &&
                  sqlite3_column_int64(q, col_of(q, "dropped")) == (int64_t)x->dropped &&
                  sqlite3_column_double(q, col_of(q, "p50_ms")) == x->p50_ms &&
                  sqlite3_column_double(q, col_of(q, "p99_ms")) == x->p99_ms &&
                  sqlite3_column_double(q, col_of(q, "mean_queue_ms")) == x->mean_queue_ms &&
                  sqlite3_column_double(q, col_of(q, "mean_batch")) == x->mean_batch &&
                  sqlite3_column_int64(q, col_of(q, "batches")) == (int64_t)x->batches &&
                  x->offered > 0 && x->mean_batch > 1,
              "model_stats row %d (%s): offered %lld / %llu, p99 %g / %g, batch %g / %g", m,
              x->name, (long long)sqlite3_column_int64(q, col_of(q, "offered")),
              (unsigned long long)x->offered, sqlite3_column_double(q, col_of(q, "p99_ms")),
              x->p99_ms, sqlite3_column_double(q, col_of(q, "mean_batch")), x->mean_batch);
    }
    sqlite3_finalize(q);
    REQUIRE_OK(sqlite3_prepare_v2(db, "SELECT * FROM executor_stats ORDER BY executor", -1, &q,
                                  NULL) == SQLITE_OK ? 0 : -1);
    for (int e = 0; e < r->nexecs; e++) {
        const struct sim_exec_result *x = &r->execs[e];
        REQUIRE_OK(sqlite3_step(q) == SQLITE_ROW ? 0 : -1);
        CHECK(sqlite3_column_int64(q, col_of(q, "executor")) == x->id &&
                  sqlite3_column_double(q, col_of(q, "busy_frac")) == x->busy_frac &&
                  sqlite3_column_int64(q, col_of(q, "batches")) == (int64_t)x->batches &&
                  sqlite3_column_int64(q, col_of(q, "requests")) == (int64_t)x->requests &&
                  !strcmp((const char *)sqlite3_column_text(q, col_of(q, "class")), "gpu") &&
                  sqlite3_column_type(q, col_of(q, "cores")) == SQLITE_NULL && x->batches > 0,
              "executor_stats row %d: batches %lld / %llu", e,
              (long long)sqlite3_column_int64(q, col_of(q, "batches")),
              (unsigned long long)x->batches);
    }
    sqlite3_finalize(q);
    int64_t series = q1(db, "SELECT count(*) FROM timeseries");
    CHECK(series == (int64_t)r->ts.n && series > 0, "timeseries: %lld rows, %zu points",
          (long long)series, r->ts.n);
    /* a column the writers do not know: the run is refused whole, the column named */
    REQUIRE_OK(sqlite3_exec(db, "ALTER TABLE model_stats ADD COLUMN extra REAL", NULL, NULL,
                            NULL) == SQLITE_OK ? 0 : -1);
    int rc = sim_config_store(st, cfg, "run", r, NULL, NULL, NULL);
    CHECK(rc == SIM_EDB && strstr(sim_err_msg(), "model_stats") && strstr(sim_err_msg(), "extra"),
          "an unknown column: rc %d, %s", rc, sim_err_msg());
    CHECK(q1(db, "SELECT count(*) FROM runs") == 1 && q1(db, "SELECT count(*) FROM model_stats") ==
              r->nmodels, "after the refused write: %lld runs, %lld model rows",
          (long long)q1(db, "SELECT count(*) FROM runs"),
          (long long)q1(db, "SELECT count(*) FROM model_stats"));
    sqlite3_close(db);
    sim_store_close(st);
    sim_result_destroy(r);
    sim_config_destroy(cfg);
    unlink(path);
}

static void store_image_merges(void)
{
    char path[] = "/tmp/servesim_merge_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("mkstemp");
        exit(1);
    }
    close(fd);
    unlink(path);
    struct sim_config *cfg;
    struct sim_result *r = NULL;
    struct sim_store *dst = NULL, *mem = NULL;
    REQUIRE_OK(sim_config_from_text(OVL_CFG("60"), "ovl", ".", &cfg));
    cfg->world.duration_s = 5;
    REQUIRE_OK(sim_run_once(cfg, 1.0, NULL, &r));
    REQUIRE_OK(sim_store_open(path, &dst));
    REQUIRE_OK(sim_config_store(dst, cfg, "run", r, NULL, NULL, NULL));     /* run 1 */
    REQUIRE_OK(sim_store_open(":memory:", &mem));
    struct sim_store_point sp = {.sweep = "s@1", .key = "seed=1", .settings_json = "{}", .point = 0};
    REQUIRE_OK(sim_config_store(mem, cfg, "run", r, NULL, NULL, NULL));      /* run 1 there */
    REQUIRE_OK(sim_config_store(mem, cfg, "run", r, NULL, &sp, NULL));       /* run 2 there */
    unsigned char *img = NULL;
    size_t n = 0;
    REQUIRE_OK(sim_store_image(mem, &img, &n));
    CHECK(n > 4096, "image of %zu bytes", n);
    REQUIRE_OK(sim_store_merge(dst, img, n, "test"));
    /* garbage and a truncated image are refused, with nothing written */
    unsigned char junk[512];
    memset(junk, 'x', sizeof junk);
    CHECK(sim_store_merge(dst, junk, sizeof junk, "junk") != 0, "junk merged");
    CHECK(sim_store_merge(dst, img, n / 2, "half") != 0, "a truncated image merged");
    sim_store_close(dst);
    sim_store_close(mem);
    free(img);
    sqlite3 *db;
    REQUIRE_OK(sqlite3_open(path, &db));
    CHECK(q1(db, "SELECT count(*) FROM runs") == 3 && q1(db, "SELECT max(id) FROM runs") == 3,
          "runs %lld, max id %lld", (long long)q1(db, "SELECT count(*) FROM runs"),
          (long long)q1(db, "SELECT max(id) FROM runs"));
    CHECK(q1(db, "SELECT count(DISTINCT run_id) FROM model_stats") == 3 &&
          q1(db, "SELECT count(*) FROM model_stats WHERE run_id NOT IN (SELECT id FROM runs)") == 0,
          "model_stats run ids");
    CHECK(q1(db, "SELECT run_id FROM sweep_points WHERE sweep = 's@1'") == 3, "sweep point run %lld",
          (long long)q1(db, "SELECT run_id FROM sweep_points"));
    CHECK(q1(db, "SELECT count(*) FROM latency_hist WHERE run_id = 3") ==
          q1(db, "SELECT count(*) FROM latency_hist WHERE run_id = 1") &&
          q1(db, "SELECT count(*) FROM latency_hist WHERE run_id = 1") > 0, "latency_hist rows");
    CHECK(q1(db, "SELECT count(*) FROM executor_stats WHERE run_id = 2") == 1, "executor_stats");
    sqlite3_close(db);
    unlink(path);
    sim_result_destroy(r);
    sim_config_destroy(cfg);
}

/* The ideal batch columns for a table profile (5, 6, 7, 9, 11, 13, 15, 17 ms for batches 1..8)
 * on 2 GPUs, SLO 20 ms: staggered budget 20 / 1.5 = 13.3 ms -> 6 (13 ms), uncoordinated
 * 20 / 2 = 10 ms -> 4 (9 ms); SLO 6 ms: budgets 4 and 3 ms, not even one request -> 0. */
static void ideal_batch_table_profile(void)
{
    static const char *const slo[] = {"20", "6"};
    static const double want[2][2] = {{6, 4}, {0, 0}};
    for (int i = 0; i < 2; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"name\":\"ib\",\"duration_s\":2,\"cluster\":{\"gpus\":2},\"models\":[{"
                 "\"name\":\"m\",\"slo_ms\":%s,\"max_batch\":8,\"profiles\":{\"1080ti\":{"
                 "\"form\":\"table\",\"latency_ms\":[5,6,7,9,11,13,15,17]}}}],\"workload\":{"
                 "\"rate_rps\":50},\"policy\":{\"name\":\"fifo\"}}", slo[i]);
        struct sim_result *r = test_run_text(text, "ib");
        CHECK(r->models[0].ideal_batch_staggered == want[i][0] &&
              r->models[0].ideal_batch_uncoord == want[i][1], "SLO %s: ideal %g / %g, want %g / %g",
              slo[i], r->models[0].ideal_batch_staggered, r->models[0].ideal_batch_uncoord,
              want[i][0], want[i][1]);
        sim_result_destroy(r);
    }
}

/* A linear profile's ideal batch stops at the model's max_batch (issue 51, item 22: 6 was
 * shown for max_batch 2): l(b) = b + 2 ms, SLO 30 ms on 2 GPUs allows 18 staggered and 13
 * uncoordinated, but the model batches at most 2. */
static void ideal_batch_capped_at_max(void)
{
    struct sim_result *r = test_run_text(
        "{\"name\":\"ic\",\"duration_s\":2,\"cluster\":{\"gpus\":2},\"models\":[{"
        "\"name\":\"m\",\"slo_ms\":30,\"max_batch\":2,\"alpha_ms\":1,\"beta_ms\":2}],"
        "\"workload\":{\"rate_rps\":50},\"policy\":{\"name\":\"fifo\"}}", "ic");
    CHECK(r->models[0].ideal_batch_staggered == 2 && r->models[0].ideal_batch_uncoord == 2,
          "ideal %g / %g, want 2 / 2 (max_batch)", r->models[0].ideal_batch_staggered,
          r->models[0].ideal_batch_uncoord);
    sim_result_destroy(r);
}

/* A profile's service-time distribution (profile.service) against M/G/1: a duration of mean
 * D and coefficient of variation c has E[S^2] = D^2 (1 + c^2) whatever its shape or constant
 * share, so Pollaczek-Khinchine gives the mean wait lambda E[S^2] / (2 (1 - rho)). Durations
 * come from the executor's own stream: the arrivals are the same with and without them, and a
 * run is the same twice. At a load of 1% nothing waits, so the response time's p99 is the
 * duration's: D (shift + the p99 of X), X lognormal with mean 1 - shift and sd c; and with
 * policy.plan_quantile 0.99 the table the policy plans with (sim_latency_ns) holds the same. */
static void service_time_distributions(void)
{
    const double D_ms = 10, rho = 0.6, lambda = rho * 1000.0 / D_ms;
    static const struct { const char *svc; double cv; } cases[] = {
        {"", 0},
        {",\"service\":{\"dist\":\"lognormal\",\"cv\":0.6}", 0.6},
        {",\"service\":{\"dist\":\"gamma\",\"cv\":[0.8],\"shift\":0.5}", 0.8},
    };
    uint64_t offered[3] = {0};
    double mean2 = 0;
    for (int i = 0; i < 3; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"name\":\"mg1s\",\"seed\":5,\"duration_s\":3000,\"warmup_s\":20,"
                 "\"cluster\":{\"gpus\":1},\"models\":[{\"name\":\"m\",\"profile\":{\"form\":"
                 "\"linear\",\"alpha_ms\":0,\"beta_ms\":%g%s},\"slo_ms\":1e6,\"max_batch\":1}],"
                 "\"workload\":{\"rate_rps\":%g},\"network\":{\"ctrl_us\":0,"
                 "\"data_us_per_request\":0,\"resp_us\":0},\"policy\":{\"name\":\"fifo\","
                 "\"params\":{\"drop_late\":false}},\"metrics\":{\"sample_period_s\":0}}",
                 D_ms, cases[i].svc, lambda);
        for (int run = 0; run < 2; run++) {
            struct sim_result *r = test_run_text(text, "mg1s");
            double cv = cases[i].cv, es2 = D_ms * D_ms * (1 + cv * cv);
            double want = lambda / 1000 * es2 / (2 * (1 - rho));
            if (run == 0) {
                CHECK_NEAR(r->models[0].mean_queue_ms, want, 0.05);
                CHECK_NEAR(r->models[0].mean_ms - r->models[0].mean_queue_ms, D_ms, 0.01);
                printf("service cv %g: mean wait %.3f ms, M/G/1 %.3f ms; service %.3f ms\n", cv,
                       r->models[0].mean_queue_ms, want,
                       r->models[0].mean_ms - r->models[0].mean_queue_ms);
                offered[i] = r->offered;
                mean2 = r->models[0].mean_ms;
            } else {
                CHECK(r->models[0].mean_ms == mean2, "the same config twice: %.9g then %.9g ms",
                      mean2, r->models[0].mean_ms);
            }
            sim_result_destroy(r);
        }
    }
    CHECK(offered[0] == offered[1] && offered[1] == offered[2],
          "service times moved the arrivals: %llu, %llu, %llu offered",
          (unsigned long long)offered[0], (unsigned long long)offered[1],
          (unsigned long long)offered[2]);

    /* the p99: lognormal, cv 0.5, shift 0.2 -> X of mean 0.8, cv 0.625 */
    const double cv = 0.5, f = 0.2, c = cv / (1 - f), sg = sqrt(log1p(c * c));
    const double q99 = f + (1 - f) * exp(-sg * sg / 2 + 2.3263478740408408 * sg);
    const char *text =
        "{\"seed\":2,\"duration_s\":20000,\"cluster\":{\"gpus\":1},\"models\":[{\"name\":"
        "\"m\",\"profile\":{\"form\":\"linear\",\"alpha_ms\":0,\"beta_ms\":10,\"service\":{"
        "\"dist\":\"lognormal\",\"cv\":0.5,\"shift\":0.2}},\"slo_ms\":1e6,\"max_batch\":1}],"
        "\"workload\":{\"rate_rps\":1},\"network\":{\"ctrl_us\":0,\"data_us_per_request\":0,"
        "\"resp_us\":0},\"policy\":{\"name\":\"fifo\",\"plan_quantile\":0.99,\"params\":"
        "{\"drop_late\":false}},\"metrics\":{\"sample_period_s\":0}}";
    struct sim_result *r = test_run_text(text, "p99");
    CHECK_NEAR(r->models[0].p99_ms, 10 * q99, 0.02);
    printf("service p99 %.3f ms, want %.3f ms\n", r->models[0].p99_ms, 10 * q99);
    sim_result_destroy(r);
    struct sim_config *cfg;
    struct sim *s;
    REQUIRE_OK(sim_config_from_text(text, "p99", ".", &cfg));
    static struct fixed_src fx;
    fx = (struct fixed_src){NULL, 0, 0, NULL, NULL};
    struct sim_source none = {fixed_next, fixed_close, &fx, 0, NULL, NULL, NULL};
    REQUIRE_OK(sim_create(&cfg->world, 1.0, cfg->world.policy, &none, 1, &s));
    CHECK(sim_latency_ns(s, 0, 0, 1) == llround(10e6 * q99),
          "planned with the p99: %lld ns, want %lld", (long long)sim_latency_ns(s, 0, 0, 1),
          (long long)llround(10e6 * q99));
    sim_destroy(s);
    sim_config_destroy(cfg);

    static const struct { const char *prof, *pol, *want; } bad[] = {
        {"\"service\":{\"dist\":\"weibull\",\"cv\":1}", "", "models[0].profile.service.dist"},
        {"\"service\":{\"dist\":\"gamma\",\"cv\":-1}", "", "models[0].profile.service.cv"},
        {"\"service\":{\"dist\":\"gamma\",\"cv\":[0.1,\"x\"]}", "",
         "models[0].profile.service.cv[1]"},
        {"\"service\":{\"dist\":\"gamma\",\"cv\":1,\"shift\":1}", "",
         "models[0].profile.service.shift"},
        {"\"service\":{\"dist\":\"lognormal\"}", "", "models[0].profile.service.cv: required"},
        {"\"service\":{\"dist\":\"lognormal\",\"cv\":1,\"sd\":2}", "", "sd"},
        {"\"service\":{\"dist\":\"lognormal\",\"cv\":1}", ",\"plan_quantile\":1",
         "policy.plan_quantile"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char t[1024];
        snprintf(t, sizeof t,
                 "{\"duration_s\":30,\"cluster\":{\"gpus\":1},\"models\":[{\"name\":\"m\","
                 "\"profile\":{\"form\":\"linear\",\"alpha_ms\":1,\"beta_ms\":1,%s},"
                 "\"slo_ms\":10}],\"workload\":{\"rate_rps\":1},\"policy\":{\"name\":\"fifo\"%s}}",
                 bad[i].prof, bad[i].pol);
        struct sim_config *bc = NULL;
        CHECK(sim_config_from_text(t, "svc", ".", &bc) == SIM_EINVAL &&
                  strstr(sim_err_msg(), bad[i].want),
              "bad service %zu: %s (want %s)", i, sim_err_msg(), bad[i].want);
        sim_config_destroy(bc);
    }
}

/* Request sizes (workload.sizes) against M/G/1: service D times a lognormal size (mean 1,
 * cv c) has E[S^2] = D^2 (1 + c^2), so Pollaczek-Khinchine gives the mean wait
 * lambda E[S^2] / (2 (1 - rho)); with cv 0 and mean k every service is exactly k D (M/D/1).
 * Sizes come from their own stream: the arrivals are the same with and without them. */
static void sizes_mg1_mean_wait(void)
{
    const double D_ms = 10, rho = 0.6, lambda = rho * 1000.0 / D_ms;
    static const struct { double mean, cv; } cases[] = {{0, 0}, {1, 0.6}, {2, 0}};
    uint64_t offered[3] = {0};
    for (int i = 0; i < 3; i++) {
        double mean = cases[i].mean, cv = cases[i].cv;
        double rate = mean > 0 ? lambda / mean : lambda;   /* the same utilisation */
        char text[1024], sizes[128] = "";
        if (mean > 0)
            snprintf(sizes, sizeof sizes, ",\"sizes\":{\"m\":{\"mean\":%g,\"cv\":%g}}", mean, cv);
        snprintf(text, sizeof text,
                 "{\"name\":\"mg1\",\"seed\":3,\"duration_s\":3000,\"warmup_s\":20,"
                 "\"cluster\":{\"gpus\":1},\"models\":[{\"name\":\"m\",\"alpha_ms\":0,\"beta_ms\":%g,"
                 "\"slo_ms\":1e6,\"max_batch\":1}],\"workload\":{\"rate_rps\":%g%s},"
                 "\"network\":{\"ctrl_us\":0,\"data_us_per_request\":0,\"resp_us\":0},"
                 "\"policy\":{\"name\":\"fifo\",\"params\":{\"drop_late\":false}},"
                 "\"metrics\":{\"sample_period_s\":0}}", D_ms, rate, sizes);
        struct sim_result *r = test_run_text(text, "mg1");
        double k = mean > 0 ? mean : 1, es2 = D_ms * D_ms * k * k * (1 + cv * cv);
        double want = rate / 1000 * es2 / (2 * (1 - rho));
        CHECK_NEAR(r->models[0].mean_queue_ms, want, 0.05);
        CHECK_NEAR(r->models[0].mean_ms - r->models[0].mean_queue_ms, k * D_ms, 0.02);
        printf("sizes mean %g cv %g: mean wait %.3f ms, M/G/1 %.3f ms; service %.3f ms\n", mean,
               cv, r->models[0].mean_queue_ms, want, r->models[0].mean_ms - r->models[0].mean_queue_ms);
        offered[i] = r->offered;
        sim_result_destroy(r);
    }
    CHECK(offered[0] == offered[1], "sizes moved the arrivals: %llu vs %llu offered",
          (unsigned long long)offered[0], (unsigned long long)offered[1]);
    static const struct { const char *work, *want; } bad[] = {
        {"\"rate_rps\":10,\"sizes\":{\"z\":{\"mean\":1,\"cv\":0}}", "no model named \"z\""},
        {"\"rate_rps\":10,\"sizes\":{\"m\":{\"mean\":0,\"cv\":0}}", "workload.sizes.m.mean"},
        {"\"rate_rps\":10,\"sizes\":{\"m\":{\"mean\":1,\"cv\":-1}}", "workload.sizes.m.cv"},
        {"\"rate_rps\":10,\"sizes\":{\"m\":{\"mean\":1}}", "workload.sizes.m"},
        {"\"rate_rps\":10,\"sizes\":{\"m\":{\"mean\":1,\"cv\":0,\"sd\":1}}", "sd"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char t[1024];
        struct sim_config *cfg;
        snprintf(t, sizeof t,
                 "{\"duration_s\":30,\"cluster\":{\"gpus\":1},\"models\":["
                 "{\"name\":\"m\",\"alpha_ms\":1,\"beta_ms\":1,\"slo_ms\":10}],"
                 "\"workload\":{%s}}", bad[i].work);
        CHECK(sim_config_from_text(t, "sizes", ".", &cfg) == SIM_EINVAL &&
                  strstr(sim_err_msg(), bad[i].want),
              "case %zu: expected \"%s\" in: %s", i, bad[i].want, sim_err_msg());
    }
}

/* ------------------------------------------------------------ nodes and CPU executors */


/* A batch's time with sizes, by hand: l(b) = 5 b + 10 ms under fifo; arrivals at 0 (size 1)
 * and two at 1 ms (sizes 1 and 3), which wait for the first (15 ms) and run as one batch of
 * 2, l(2) = 20 ms times the batch's mean size 2 (done at 55 ms) or its largest 3 (75 ms). */
static void sizes_batch_mean_or_max(void)
{
    static const int64_t t[] = {0, 1000000, 1000000};
    static const double size[] = {1, 1, 3};
    static const char *const how[] = {"mean", "max"};
    static const int64_t want[] = {55000000, 75000000};
    for (int i = 0; i < 2; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"duration_s\":1,\"cluster\":{\"gpus\":1},\"models\":[{\"name\":\"m\","
                 "\"alpha_ms\":5,\"beta_ms\":10,\"slo_ms\":1000,\"max_batch\":4}],"
                 "\"workload\":{\"rate_rps\":1,\"sizes\":{\"m\":{\"mean\":1,\"cv\":0.5,"
                 "\"batch\":\"%s\"}}},\"network\":{\"ctrl_us\":0,\"data_us_per_request\":0,"
                 "\"resp_us\":0},\"policy\":{\"name\":\"fifo\"},"
                 "\"metrics\":{\"sample_period_s\":0}}", how[i]);
        struct sim_config *cfg;
        struct sim *s;
        REQUIRE_OK(sim_config_from_text(text, "sizes", ".", &cfg));
        static struct fixed_src f;
        f = (struct fixed_src){t, 3, 0, size, NULL};
        struct sim_source src = {fixed_next, fixed_close, &f, 0, NULL, NULL, NULL};
        REQUIRE_OK(sim_create(&cfg->world, 1.0, cfg->world.policy, &src, 1, &s));
        struct end_seen v = {{0}, 0};
        struct sim_observer obs = {.ctx = &v, .request_end = end_seen_fn};
        sim_set_observer(s, &obs);
        REQUIRE_OK(sim_run(s));
        CHECK(v.n == 3 && v.finish[0] == 15000000 && v.finish[1] == want[i] &&
                  v.finish[2] == want[i], "batch %s: %d ends at %lld, %lld, %lld ns; want 15 ms, "
              "then %lld twice", how[i], v.n, (long long)v.finish[0], (long long)v.finish[1],
              (long long)v.finish[2], (long long)want[i]);
        sim_destroy(s);
        sim_config_destroy(cfg);
    }
}

/* A test policy: one CPU executor of model 0 on node 0 with 1 core; it serves the queue one
 * request at a time; a timer at `at` sets its cores to `milli`. */
struct cpu_pol { int e; int64_t at; int milli; int set_rc; };
static struct cpu_pol cpu_cfg;
static void cpu_serve(struct sim *s, struct cpu_pol *c)
{
    const struct sim_exec *x = sim_exec(s, c->e);
    if (!x->running && x->pending == 0 && sim_queue_len(s, 0) > 0)
        sim_dispatch(s, c->e, 0, 1, sim_now(s));
}
static int cpu_init(struct sim *s, const cJSON *p, void *state)
{
    (void)p;
    struct cpu_pol *c = state;
    *c = cpu_cfg;
    if ((c->e = sim_exec_add_cpu(s, 0, 0, 1000)) < 0)
        return SIM_EINVAL;
    if (c->at > 0)
        sim_timer_set(s, c->at, 1, NULL);
    return 0;
}
static void cpu_on_request(struct sim *s, void *state, int m, struct sim_request *r)
{
    (void)m, (void)r;
    cpu_serve(s, state);
}
static void cpu_on_done(struct sim *s, void *state, const struct sim_batch *b)
{
    (void)b;
    cpu_serve(s, state);
}
static void cpu_on_timer(struct sim *s, void *state, uint64_t tag, void *arg)
{
    (void)tag, (void)arg;
    struct cpu_pol *c = state;
    c->set_rc = sim_exec_set_cores(s, c->e, c->milli);
}
static const struct policy_ops cpu_test_policy = {
    .name = "cpu-test", .summary = "test", .state_size = sizeof(struct cpu_pol),
    .init = cpu_init, .on_request = cpu_on_request, .on_batch_done = cpu_on_done,
    .on_timer = cpu_on_timer,
};

struct cpu_seen { int64_t finish[4]; int n; };
static void seen_end(void *ctx, const struct sim *s, const struct sim_request *r)
{
    (void)s;
    struct cpu_seen *v = ctx;
    if (v->n < 4)
        v->finish[v->n++] = r->t_finish;
}

/* Named policy streams: "policy.<name>.<sub>" seeded from the run's seed and the name only;
 * the same name gives the same stream; drawing from one (or making another first) does not
 * shift another; past SIM_POLICY_STREAMS names the call fails with a message. */
static struct { bool other_first; double a[3]; bool same, distinct; gsl_rng *over; } streams_seen;
static int streams_init(struct sim *s, const cJSON *p, void *state)
{
    (void)p, (void)state;
    if (streams_seen.other_first) {
        gsl_rng *b = sim_policy_rng_named(s, "estimator");
        for (int i = 0; i < 100; i++)
            gsl_rng_uniform(b);
    }
    gsl_rng *a = sim_policy_rng_named(s, "explore");
    for (int i = 0; i < 3; i++)
        streams_seen.a[i] = gsl_rng_uniform(a);
    streams_seen.same = sim_policy_rng_named(s, "explore") == a;
    streams_seen.distinct = a != sim_policy_rng(s) && a != sim_policy_rng_named(s, "estimator");
    char name[16];
    for (int i = 0; i < SIM_POLICY_STREAMS; i++) {
        snprintf(name, sizeof name, "s%d", i);
        streams_seen.over = sim_policy_rng_named(s, name);
    }
    return 0;
}
static const struct policy_ops streams_test_policy = {
    .name = "streams-test", .summary = "test", .state_size = 1, .init = streams_init,
};

static void policy_named_streams(void)
{
    const char *text = "{\"seed\":7,\"duration_s\":1,\"cluster\":{\"gpus\":1},\"models\":["
                       "{\"name\":\"m\",\"alpha_ms\":1,\"beta_ms\":1,\"slo_ms\":10}],"
                       "\"workload\":{\"rate_rps\":1},\"metrics\":{\"sample_period_s\":0}}";
    double first[3];
    for (int run = 0; run < 2; run++) {
        struct sim_config *cfg;
        struct sim *s;
        REQUIRE_OK(sim_config_from_text(text, "streams", ".", &cfg));
        static struct fixed_src f;
        f = (struct fixed_src){NULL, 0, 0, NULL, NULL};
        struct sim_source src = {fixed_next, fixed_close, &f, 0, NULL, NULL, NULL};
        streams_seen.other_first = run == 1;
        REQUIRE_OK(sim_create(&cfg->world, 1.0, &streams_test_policy, &src, 1, &s));
        CHECK(streams_seen.same, "the same name gave another stream");
        CHECK(streams_seen.distinct, "a named stream is the policy's stream or another name's");
        CHECK(streams_seen.over == NULL && strstr(sim_err_msg(), "at most 16 named streams"),
              "stream 17 of a policy: %p, %s", (void *)streams_seen.over, sim_err_msg());
        if (run == 0) {
            gsl_rng *ref = sim_rng_stream(7, "policy.streams-test.explore");
            for (int i = 0; i < 3; i++) {
                first[i] = streams_seen.a[i];
                CHECK(first[i] == gsl_rng_uniform(ref), "draw %d is not the named stream's", i);
            }
            gsl_rng_free(ref);
        } else {
            for (int i = 0; i < 3; i++)
                CHECK(streams_seen.a[i] == first[i], "draw %d shifted by another stream: %g vs %g",
                      i, streams_seen.a[i], first[i]);
        }
        sim_destroy(s);
        sim_config_destroy(cfg);
    }
}

/* One run of the test policy on a node of 4 cores (the model takes 100 ms on one core):
 * arrivals at `t`, cores set to `milli` at `at`; returns the engine (run) and the finish
 * times seen. */
static struct sim *cpu_run(const int64_t *t, int n, int64_t at, int milli, struct cpu_seen *v,
                           struct sim_config **cfgp)
{
    const char *text =
        "{\"duration_s\":2,\"cluster\":{\"nodes\":[{\"name\":\"w0\",\"cores\":4,\"gpus\":1,"
        "\"cpu_kind\":\"xeon\"}]},\"models\":[{\"name\":\"m\",\"slo_ms\":1000,\"profiles\":{"
        "\"1080ti\":{\"form\":\"linear\",\"alpha_ms\":1,\"beta_ms\":1},"
        "\"xeon\":{\"form\":\"linear\",\"alpha_ms\":40,\"beta_ms\":60}}}],"
        "\"workload\":{\"rate_rps\":1},\"network\":{\"ctrl_us\":0,\"data_us_per_request\":0,"
        "\"resp_us\":0},\"metrics\":{\"sample_period_s\":0}}";
    struct sim_config *cfg;
    struct sim *s;
    REQUIRE_OK(sim_config_from_text(text, "cpu", ".", &cfg));
    static struct fixed_src f;
    f = (struct fixed_src){t, n, 0, NULL, NULL};
    struct sim_source src = {fixed_next, fixed_close, &f, 0, NULL, NULL, NULL};
    cpu_cfg = (struct cpu_pol){.at = at, .milli = milli};
    REQUIRE_OK(sim_create(&cfg->world, 1.0, &cpu_test_policy, &src, 1, &s));
    struct sim_observer obs = {.ctx = v, .request_end = seen_end};
    sim_set_observer(s, &obs);
    REQUIRE_OK(sim_run(s));
    *cfgp = cfg;
    return s;
}

/* A CPU executor runs a request for its profile's one-core latency divided by its cores; a
 * change of cores mid-request keeps the work done and re-times the rest exactly (100 ms of
 * work at 1 core: 40 ms done by t = 40 ms, the other 60 ms at 2 cores take 30 ms: done at 70
 * ms; at 0.3 cores from 40 ms, 200 ms: done at 240 ms); the node refuses more cores than it
 * has; core-seconds are the allocation's integral (1 core to 40 ms, then 2 cores to 2 s:
 * 0.04 + 3.92 = 3.96); the CPU executor is not billed or counted as a GPU. */
static void cpu_executor_retimes_exactly(void)
{
    static const int64_t one[] = {0}, two[] = {0, 10000000};
    struct cpu_seen v = {{0}, 0};
    struct sim_config *cfg;
    struct sim *s = cpu_run(one, 1, 0, 0, &v, &cfg);
    CHECK(v.n == 1 && v.finish[0] == 100000000, "finish %lld, expected 100 ms",
          (long long)v.finish[0]);
    sim_destroy(s);
    sim_config_destroy(cfg);

    v = (struct cpu_seen){{0}, 0};
    s = cpu_run(one, 1, 40000000, 2000, &v, &cfg);
    CHECK(v.n == 1 && v.finish[0] == 70000000, "2 cores at 40 ms: finish %lld, expected 70 ms",
          (long long)v.finish[0]);
    struct sim_result *r;
    REQUIRE_OK(sim_result_collect(s, &r));
    int cpu = -1, gpus = 0;
    for (int e = 0; e < r->nexecs; e++) {
        if (r->execs[e].cpu)
            cpu = e;
        gpus += !r->execs[e].cpu;
    }
    CHECK(cpu >= 0 && gpus == 1 && r->execs[cpu].model == 0 && r->execs[cpu].node == 0,
          "executors: cpu %d, %d GPUs", cpu, gpus);
    CHECK(cpu >= 0 && fabs(r->execs[cpu].core_s - 3.96) < 1e-9 && fabs(r->core_s - 3.96) < 1e-9,
          "core-seconds %.9f (run %.9f), expected 3.96", cpu >= 0 ? r->execs[cpu].core_s : -1,
          r->core_s);
    CHECK(fabs(r->gpu_s - 2.0) < 1e-9 && r->gpus_max == 1, "GPU billing %.3f s, max %d",
          r->gpu_s, r->gpus_max);
    sim_result_destroy(r);
    sim_destroy(s);
    sim_config_destroy(cfg);

    v = (struct cpu_seen){{0}, 0};
    s = cpu_run(two, 2, 40000000, 300, &v, &cfg);
    CHECK(v.n == 2 && v.finish[0] == 240000000 && v.finish[1] == 240000000 + 333333334,
          "0.3 cores at 40 ms: finishes %lld, %lld; expected 240 ms and 573.333334 ms",
          (long long)v.finish[0], (long long)v.finish[1]);
    sim_destroy(s);
    sim_config_destroy(cfg);

    v = (struct cpu_seen){{0}, 0};
    s = cpu_run(one, 1, 40000000, 4001, &v, &cfg);
    CHECK(v.n == 1 && v.finish[0] == 100000000, "a refused change re-timed the request: %lld",
          (long long)v.finish[0]);
    sim_destroy(s);
    sim_config_destroy(cfg);
}

/* cpu_scaling "measured": a model measured at 1, 2 and 4 threads (100, 60 and 40 ms) runs at
 * u cores in the time interpolated in rate between them: 3 cores -> 1/((1/60 + 1/40) / 2) =
 * 48 ms, 0.5 cores -> 200 ms (l(1)/u below one core), 6 cores -> 40 ms (the largest measured
 * count above it), 2 cores -> 60 ms. */
static void cpu_measured_scaling(void)
{
    static const struct { int milli; int64_t want; } cases[] = {
        {3000, 48000000}, {500, 200000000}, {6000, 40000000}, {2000, 60000000}, {1000, 100000000}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *text =
            "{\"duration_s\":2,\"cluster\":{\"nodes\":[{\"cores\":8,\"gpus\":1,"
            "\"cpu_kind\":\"xeon@1core\",\"cpu_scaling\":\"measured\"}]},\"models\":[{\"name\":\"m\","
            "\"slo_ms\":1000,\"profiles\":{\"1080ti\":{\"form\":\"linear\",\"alpha_ms\":1,\"beta_ms\":1},"
            "\"xeon@1core\":{\"form\":\"table\",\"latency_ms\":[100]},"
            "\"xeon@2core\":{\"form\":\"table\",\"latency_ms\":[60]},"
            "\"xeon@4core\":{\"form\":\"table\",\"latency_ms\":[40]}}}],"
            "\"workload\":{\"rate_rps\":1},\"network\":{\"ctrl_us\":0,\"data_us_per_request\":0,"
            "\"resp_us\":0},\"metrics\":{\"sample_period_s\":0}}";
        struct sim_config *cfg;
        struct sim *s;
        REQUIRE_OK(sim_config_from_text(text, "measured", ".", &cfg));
        static const int64_t at0[] = {0};
        static struct fixed_src f;
        f = (struct fixed_src){at0, 1, 0, NULL, NULL};
        struct sim_source src = {fixed_next, fixed_close, &f, 0, NULL, NULL, NULL};
        cpu_cfg = (struct cpu_pol){.at = 0, .milli = 0};
        REQUIRE_OK(sim_create(&cfg->world, 1.0, &cpu_test_policy, &src, 1, &s));
        /* the policy made its executor with 1 core; set the case's before anything runs */
        int e = sim_exec_count(s) - 1;
        REQUIRE_OK(sim_exec_set_cores(s, e, cases[i].milli));
        struct cpu_seen v = {{0}, 0};
        struct sim_observer obs = {.ctx = &v, .request_end = seen_end};
        sim_set_observer(s, &obs);
        REQUIRE_OK(sim_run(s));
        CHECK(v.n == 1 && llabs(v.finish[0] - cases[i].want) <= 1000 && v.finish[0] >= cases[i].want,
              "%d milli-cores: finish %lld, expected %lld (speed in millionths: within 1 us, never early)",
              cases[i].milli, (long long)v.finish[0], (long long)cases[i].want);
        sim_destroy(s);
        sim_config_destroy(cfg);
    }
    struct sim_config *cfg;
    CHECK(sim_config_from_text("{\"duration_s\":1,\"cluster\":{\"nodes\":[{\"cores\":2,\"gpus\":1,"
                               "\"cpu_scaling\":\"measured\"}]},\"models\":[{\"name\":\"m\","
                               "\"alpha_ms\":1,\"beta_ms\":1,\"slo_ms\":50}],"
                               "\"workload\":{\"rate_rps\":1}}", "m", ".", &cfg) == SIM_EINVAL &&
              strstr(sim_err_msg(), "cluster.nodes[0].cpu_kind"), "%s", sim_err_msg());
}

/* A config from JSON text and its engine at load scale 1 (the test stops on an error). */
static struct sim *engine_from_text(const char *text, const char *name, struct sim_config **cfg)
{
    struct sim *s = NULL;
    REQUIRE_OK(sim_config_from_text(text, name, ".", cfg));
    REQUIRE_OK(sim_config_engine(*cfg, 1.0, NULL, &s, NULL));
    return s;
}

/* cluster.nodes: GPUs are spread over the nodes in order; bad nodes are errors with paths. */
static void nodes_config(void)
{
    const char *text =
        "{\"duration_s\":1,\"cluster\":{\"nodes\":[{\"cores\":6,\"gpus\":1},{\"cores\":6,"
        "\"gpus\":2}]},\"models\":[{\"name\":\"m\",\"alpha_ms\":1,\"beta_ms\":1,\"slo_ms\":50}],"
        "\"workload\":{\"rate_rps\":10}}";
    struct sim_config *cfg;
    struct sim *s;
    REQUIRE_OK(sim_config_from_text(text, "nodes", ".", &cfg));
    CHECK(cfg->world.nnodes == 2 && cfg->world.gpus == 3 && !strcmp(cfg->world.nodes[1].name, "node1"),
          "nodes %d, gpus %d", cfg->world.nnodes, cfg->world.gpus);
    REQUIRE_OK(sim_config_engine(cfg, 1.0, NULL, &s, NULL));
    CHECK(sim_exec(s, 0)->node == 0 && sim_exec(s, 1)->node == 1 && sim_exec(s, 2)->node == 1,
          "GPU nodes %d %d %d", sim_exec(s, 0)->node, sim_exec(s, 1)->node, sim_exec(s, 2)->node);
    CHECK(sim_exec_add_cpu(s, 0, 0, 1000) < 0 && strstr(sim_err_msg(), "no profile for CPU kind"),
          "a CPU executor without a profile: %s", sim_err_msg());
    sim_destroy(s);
    sim_config_destroy(cfg);
    static const struct { const char *cluster, *want; } bad[] = {
        {"{\"nodes\":[{\"cores\":0,\"gpus\":1}]}", "cluster.nodes[0].cores"},
        {"{\"nodes\":[{\"cores\":2}]}", "at least one GPU"},
        {"{\"nodes\":[{\"cores\":2,\"gpus\":1}],\"gpus\":2}", "not both"},
        {"{\"nodes\":[{\"cores\":2,\"gpus\":1,\"gpu_kind\":\"a100\"},{\"cores\":2,\"gpus\":1,"
         "\"gpu_kind\":\"1080ti\"}]}",
         "cluster.nodes[1].gpu_kind"},
        {"{\"nodes\":[{\"name\":\"w\",\"cores\":2,\"gpus\":1},{\"name\":\"w\",\"cores\":2}]}",
         "appears twice"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char t[1024];
        snprintf(t, sizeof t, "{\"duration_s\":1,\"cluster\":%s,\"models\":[{\"name\":\"m\","
                 "\"alpha_ms\":1,\"beta_ms\":1,\"slo_ms\":50}],\"workload\":{\"rate_rps\":10}}",
                 bad[i].cluster);
        CHECK(sim_config_from_text(t, "nodes", ".", &cfg) == SIM_EINVAL &&
                  strstr(sim_err_msg(), bad[i].want),
              "case %zu: expected \"%s\" in: %s", i, bad[i].want, sim_err_msg());
    }
}

/* Durations convert saturating (sim_time.h), so work drawn or configured far past the end of
 * the run never wraps into the past: a batch of a size factor 1e15 (l(1) x 1e15 ms, beyond
 * int64 nanoseconds) simply does not finish within the run, and the run ends (it once aborted:
 * "event scheduled in the past"). */
static void durations_saturate_past_the_end(void)
{
    CHECK(sim_ns(1e300) == SIM_NS_MAX && sim_ns(-1e300) == -SIM_NS_MAX && sim_ns(NAN) == SIM_NS_MAX,
          "sim_ns(1e300) %lld, (-1e300) %lld, (NaN) %lld", (long long)sim_ns(1e300),
          (long long)sim_ns(-1e300), (long long)sim_ns(NAN));
    CHECK(sim_ns(1.5) == 2 && sim_s_to_ns(2) == 2 * SIM_NS_PER_S && sim_ms_to_ns(1e20) == SIM_NS_MAX,
          "sim_ns(1.5) %lld, 2 s %lld", (long long)sim_ns(1.5), (long long)sim_s_to_ns(2));
    struct sim_result *r = test_run_text(
        "{\"duration_s\": 2, \"drain_s\": 1, \"cluster\": {\"gpus\": 1, \"exec_cv\": 10},"
        " \"models\": [{\"name\": \"m\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 100}],"
        " \"workload\": {\"rate_rps\": 50, \"sizes\": {\"m\": {\"mean\": 1e15, \"cv\": 0}}},"
        " \"policy\": {\"name\": \"fifo\"}}", "saturate");
    CHECK(r->models[0].offered > 50 && r->models[0].on_time == 0,
          "offered %llu, on time %llu: a batch of 1e15 x 1 ms finished",
          (unsigned long long)r->models[0].offered, (unsigned long long)r->models[0].on_time);
    sim_result_destroy(r);
}

/* search.rule by hand: model a (1 ms a request, SLO 100 ms) takes 99.5% of 1,000 evenly
 * spaced req/s and model b (50 ms a request, SLO 60 ms, behind 20 ms of network: no request
 * of it can be on time) 0.5%. Every b request is bad, no a request is, so all requests' bad fraction is exactly b's
 * share: the aggregate rule passes at p99 (0.5% <= 1%) where the worst-model rule fails (b:
 * 100%). A goodput search under `worst` ends before probing (b is infeasible); under
 * `aggregate` it finds the load where a's two GPUs saturate: a alone needs 1 ms a request,
 * so about 2,000 req/s of a (scale near 2; b's requests are dropped unserved by fifo and
 * take no GPU time). Then b at 10% of the rate: aggregate 10% > 1%, no load passes. */
#define RULES_CONFIG                                                                        \
    "{\"name\":\"rules\",\"seed\":1,\"duration_s\":20,\"warmup_s\":2,\"keep_warmup\":true,"     \
    "\"cluster\":{\"gpus\":2},\"network\":{\"ctrl_us\":0,\"data_us_per_request\":0,"              \
    "\"resp_us\":20000},\"models\":[{\"name\":\"a\",\"alpha_ms\":0,\"beta_ms\":1,\"slo_ms\":100," \
    "\"max_batch\":1,\"share\":0.995},{\"name\":\"b\",\"alpha_ms\":0,\"beta_ms\":50,"            \
    "\"slo_ms\":60,\"max_batch\":1,\"share\":0.005}],\"workload\":{\"rate_rps\":1000,"           \
    "\"arrival\":{\"kind\":\"uniform\"},\"popularity\":{\"kind\":\"explicit\"}},"                \
    "\"policy\":{\"name\":\"fifo\"},\"search\":{\"rule\":\"%s\"}}"

static void search_rules_by_hand(void)
{
    char cfgtext[2048];
    snprintf(cfgtext, sizeof cfgtext, RULES_CONFIG, "aggregate");
    struct sim_config *cfg;
    REQUIRE_OK(sim_config_from_text(cfgtext, "rules", ".", &cfg));
    CHECK(cfg->search_rule == SIM_RULE_AGGREGATE, "search.rule parsed as %d", (int)cfg->search_rule);
    struct sim_result *r = NULL;
    REQUIRE_OK(sim_run_once(cfg, 1.0, NULL, &r));
    const struct sim_model_result *a = &r->models[0], *b = &r->models[1];
    CHECK(a->late + a->dropped == 0 && b->on_time == 0 && b->offered > 50,
          "a: %llu bad; b: %llu on time of %llu", (unsigned long long)(a->late + a->dropped),
          (unsigned long long)b->on_time, (unsigned long long)b->offered);
    CHECK(fabs(r->bad_rate - (double)b->offered / (double)r->offered) < 1e-12 &&
              fabs(r->bad_rate - 0.005) < 0.0005,
          "aggregate bad fraction %.5f, b's share %.5f", r->bad_rate,
          (double)b->offered / (double)r->offered);
    CHECK(!r->pass && r->pass_aggregate && r->worst_bad_frac == 1.0,
          "worst rule %d (worst %.3f), aggregate rule %d", r->pass, r->worst_bad_frac,
          r->pass_aggregate);
    CHECK(!sim_rule_pass(SIM_RULE_WORST, r) && sim_rule_pass(SIM_RULE_AGGREGATE, r), "sim_rule_pass");
    sim_result_destroy(r);
    struct sim_goodput g;
    REQUIRE_OK(sim_goodput_search(cfg, false, &g));
    CHECK(g.rule == SIM_RULE_AGGREGATE && g.status == SIM_SEARCH_CONVERGED &&
              g.goodput_scale > 1.85 && g.goodput_scale < 2.05,
          "aggregate goodput: status %d, scale %.4f", (int)g.status, g.goodput_scale);
    for (int i = 0; i < g.nprobes; i++)   /* the rule's verdict, and never stricter than worst */
        CHECK(g.probes[i].pass == (g.probes[i].all_bad_frac <= 0.01 + 1e-9) &&
                  g.probes[i].worst_bad_frac >= g.probes[i].all_bad_frac,
              "probe %d: pass %d, all %.4f, worst %.4f", i, g.probes[i].pass,
              g.probes[i].all_bad_frac, g.probes[i].worst_bad_frac);
    sim_goodput_free(&g);
    sim_config_destroy(cfg);
    /* the worst-model rule: b can never be on time, so no load is searched */
    snprintf(cfgtext, sizeof cfgtext, RULES_CONFIG, "worst");
    REQUIRE_OK(sim_config_from_text(cfgtext, "rules", ".", &cfg));
    int rc = sim_goodput_search(cfg, false, &g);
    CHECK(rc == SIM_EINFEASIBLE && g.nprobes == 0, "worst rule: rc %d after %d probes", rc, g.nprobes);
    sim_goodput_free(&g);
    sim_config_destroy(cfg);
}

/* The host's time around a batch (cluster.host_us_per_batch) by hand: one GPU, batches of one
 * taking 2 ms, 1,000 evenly spaced req/s (twice what the GPU serves) and 500 us of host time a
 * batch: once the queue holds work, each batch starts exactly 2.5 ms after the one before
 * (2 ms of GPU, 0.5 ms of host), so 1,600 start in the 4 s (2,000 without); a request's latency is at least
 * 2.5 ms; what policies plan with (sim_latency_ns) is 2.5 ms too. Without host time: 2 ms
 * apart. */
struct host_obs {
    int64_t last, min_gap, max_gap;
    int n, within;                      /* batches started; of them before 4 s */
};

static void host_batch_start(void *ctx, const struct sim *s, const struct sim_batch *b)
{
    (void)s;
    struct host_obs *o = ctx;
    if (o->n++ > 10) {                  /* past the first batches (the queue has work) */
        int64_t g = b->t_start - o->last;
        o->min_gap = o->n == 13 || g < o->min_gap ? g : o->min_gap;
        o->max_gap = o->n == 13 || g > o->max_gap ? g : o->max_gap;
    }
    o->last = b->t_start;
    o->within += b->t_start < 4 * SIM_NS_PER_S;
}

static void host_time_spaces_batches(void)
{
    for (int host = 0; host < 2; host++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"name\":\"host\",\"seed\":1,\"duration_s\":4,\"warmup_s\":1,\"keep_warmup\":true,"
                 "\"cluster\":{\"gpus\":1,\"host_us_per_batch\":%d},\"network\":{\"ctrl_us\":0,"
                 "\"data_us_per_request\":0,\"resp_us\":0},\"models\":[{\"name\":\"m\","
                 "\"alpha_ms\":0,\"beta_ms\":2,\"slo_ms\":10000,\"max_batch\":1}],"
                 "\"workload\":{\"rate_rps\":1000,\"arrival\":{\"kind\":\"uniform\"}},"
                 "\"policy\":{\"name\":\"fifo\"}}", host ? 500 : 0);
        struct sim_config *cfg;
        struct sim *s = engine_from_text(text, "host", &cfg);
        struct host_obs o = {0};
        struct sim_observer obs = {.ctx = &o, .batch_start = host_batch_start};
        sim_set_observer(s, &obs);
        int64_t want = host ? 2500000 : 2000000;
        CHECK(sim_latency_ns(s, 0, 0, 1) == want, "host %d: planned l(1) %lld ns", host,
              (long long)sim_latency_ns(s, 0, 0, 1));
        REQUIRE_OK(sim_run(s));
        CHECK(o.n > 1000 && o.min_gap == want && o.max_gap == want,
              "host %d: %d batches, gaps %lld..%lld ns, want %lld", host, o.n,
              (long long)o.min_gap, (long long)o.max_gap, (long long)want);
        struct sim_result *r = NULL;
        REQUIRE_OK(sim_result_collect(s, &r));
        CHECK(abs(o.within - (host ? 1600 : 2000)) <= 1 && r->models[0].p50_ms >= (double)want / 1e6,
              "host %d: %d batches in the 4 s (want %d), p50 %.3f ms", host, o.within,
              host ? 1600 : 2000, r->models[0].p50_ms);
        sim_result_destroy(r);
        sim_destroy(s);
        sim_config_destroy(cfg);
    }
}

/* The host's time drawn per batch (issue 51, item 25): {"median": 500, "p99": 2000} us on one
 * overloaded GPU with 2-ms batches of one: the gaps between batch starts less 2 ms are the
 * draws, whose median and p99 come out at 500 and 2000 us over the ~5,000 batches (within 3
 * standard errors of a sample quantile there: 3% for the median, 10% for the p99); policies plan with the lognormal's mean, 500 exp(sigma^2 / 2) with
 * sigma = ln 4 / 2.3263 (597.2 us). The same config draws the same times (its own stream). */
struct gap_obs {
    int64_t last;
    int n;
    double gap_us[8192];
};

static void gap_batch_start(void *ctx, const struct sim *s, const struct sim_batch *b)
{
    (void)s;
    struct gap_obs *o = ctx;
    if (o->last > 0 && o->n < 8192)
        o->gap_us[o->n++] = (double)(b->t_start - o->last - 2000000) / 1e3;
    o->last = b->t_start;
}

static void host_time_drawn_per_batch(void)
{
    const char *text =
        "{\"name\":\"hd\",\"seed\":1,\"duration_s\":5,\"warmup_s\":1,\"keep_warmup\":true,"
        "\"cluster\":{\"gpus\":1,\"host_us_per_batch\":{\"median\":500,\"p99\":2000}},"
        "\"network\":{\"ctrl_us\":0,\"data_us_per_request\":0,\"resp_us\":0},\"models\":[{"
        "\"name\":\"m\",\"alpha_ms\":0,\"beta_ms\":2,\"slo_ms\":10000,\"max_batch\":1}],"
        "\"workload\":{\"rate_rps\":1000,\"arrival\":{\"kind\":\"uniform\"}},"
        "\"policy\":{\"name\":\"fifo\"}}";
    double first[2] = {0, 0};
    for (int rep = 0; rep < 2; rep++) {
        struct sim_config *cfg;
        struct sim *s = engine_from_text(text, "hd", &cfg);
        static struct gap_obs gaps;
        struct gap_obs *o = &gaps;
        memset(o, 0, sizeof *o);
        struct sim_observer obs = {.ctx = o, .batch_start = gap_batch_start};
        sim_set_observer(s, &obs);
        double sigma = log(4.0) / 2.3263478740408408;
        double mean = 500 * exp(sigma * sigma / 2);
        CHECK(fabs((double)sim_latency_ns(s, 0, 0, 1) - (2e6 + mean * 1e3)) < 2,
              "planned l(1) %lld ns, want 2 ms + the mean %.1f us",
              (long long)sim_latency_ns(s, 0, 0, 1), mean);
        REQUIRE_OK(sim_run(s));
        first[rep] = o->gap_us[0] + o->gap_us[1];
        gsl_sort(o->gap_us, 1, (size_t)o->n);
        double med = gsl_stats_quantile_from_sorted_data(o->gap_us, 1, (size_t)o->n, 0.5);
        double p99 = gsl_stats_quantile_from_sorted_data(o->gap_us, 1, (size_t)o->n, 0.99);
        CHECK(o->n > 1500 && fabs(med / 500 - 1) < 0.03 && fabs(p99 / 2000 - 1) < 0.1 &&
                  o->gap_us[0] != o->gap_us[o->n - 1],
              "%d batches: host median %.1f us (want 500), p99 %.1f us (want 2000)", o->n, med, p99);
        sim_destroy(s);
        sim_config_destroy(cfg);
    }
    CHECK(first[0] == first[1], "two runs drew %g and %g us", first[0], first[1]);
}

/* The free-lane index (sim_exec_next_free) against the executors themselves at every event
 * of runs that change them every way: batches starting and ending on 1 or 2 lanes, executors
 * added, drained and removed by an autoscaler, 200 of them (four 64-bit words): every
 * executor with a free lane is visited in index order, and no other. */
struct free_obs {
    long events, bad;
};

static void free_check(void *ctx, const struct sim *s, int64_t now)
{
    (void)now;
    struct free_obs *o = ctx;
    o->events++;
    int want = 0, got = sim_exec_next_free(s, 0);
    for (; want < sim_exec_count(s); want++) {
        const struct sim_exec *x = sim_exec(s, want);
        if (x->state != SIM_EXEC_UP || x->nrunning + x->pending >= x->lanes)
            continue;
        if (got != want)
            o->bad++;
        got = sim_exec_next_free(s, want + 1);
    }
    if (got != -1)
        o->bad++;
}

static void free_lane_index_matches(void)
{
    for (int lanes = 1; lanes <= 2; lanes++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"name\":\"fl\",\"seed\":3,\"duration_s\":6,\"warmup_s\":0,"
                 "\"cluster\":{\"gpus\":130,\"max_gpus\":200,\"lanes\":%d,\"provision_s\":0.2},"
                 "\"models\":[{\"name\":\"a\",\"alpha_ms\":2,\"beta_ms\":5,\"slo_ms\":40},"
                 "{\"name\":\"b\",\"alpha_ms\":1,\"beta_ms\":3,\"slo_ms\":25}],"
                 "\"workload\":{\"rate_rps\":9000,\"segments\":[{\"duration_s\":2,\"scale\":0.3},"
                 "{\"duration_s\":2,\"scale\":1.6},{\"scale\":0.2}]},"
                 "\"autoscale\":{\"kind\":\"target_util\",\"cooldown_s\":0.5},"
                 "\"metrics\":{\"sample_period_s\":0.25},\"policy\":{\"name\":\"fifo\"}}", lanes);
        struct sim_config *cfg;
        struct sim *s = engine_from_text(text, "fl", &cfg);
        struct free_obs o = {0, 0};
        struct sim_observer obs = {.ctx = &o, .event = free_check};
        sim_set_observer(s, &obs);
        REQUIRE_OK(sim_run(s));
        CHECK(o.events > 10000 && o.bad == 0 && sim_exec_count(s) > 130,
              "lanes %d: %ld events, %ld mismatches, %d executors", lanes, o.events, o.bad,
              sim_exec_count(s));
        sim_destroy(s);
        sim_config_destroy(cfg);
    }
}

/* A model's serving stack (models[].stack_ms) by hand: fifo on one GPU, 2-ms batches of one,
 * a request every 2.5 ms (never a queue), no network. With 50 ms of stack every response
 * comes exactly 50 ms later (p50 2 -> 52 ms) while the GPU's busy time is the same (80%):
 * the stack occupies no executor. fifo plans with it: at an SLO of 51 ms no request can
 * leave its GPU 51 - 50 = 1 ms after arriving, so all are dropped; at 53 ms all are on time.
 * The zoo import's stack_scale multiplies it. */
static void stack_delays_responses_only(void)
{
    static const struct { double stack, slo, p50, bad; } c[] = {
        {0, 1000, 2, 0}, {50, 1000, 52, 0}, {50, 51, -1, 1}, {50, 53, 52, 0}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"name\":\"stack\",\"seed\":1,\"duration_s\":4,\"warmup_s\":1,"
                 "\"cluster\":{\"gpus\":1},\"network\":{\"ctrl_us\":0,"
                 "\"data_us_per_request\":0,\"resp_us\":0},\"models\":[{\"name\":\"m\","
                 "\"alpha_ms\":0,\"beta_ms\":2,\"slo_ms\":%g,\"max_batch\":1,\"stack_ms\":%g}],"
                 "\"workload\":{\"rate_rps\":400,\"arrival\":{\"kind\":\"uniform\"}},"
                 "\"policy\":{\"name\":\"fifo\"}}", c[i].slo, c[i].stack);
        struct sim_config *cfg;
        struct sim *s = engine_from_text(text, "stack", &cfg);
        CHECK(sim_resp_delay_ns(s, 0) == (int64_t)(c[i].stack * 1e6), "case %zu: delay %lld ns", i,
              (long long)sim_resp_delay_ns(s, 0));
        REQUIRE_OK(sim_run(s));
        struct sim_result *r = NULL;
        REQUIRE_OK(sim_result_collect(s, &r));
        CHECK_NEAR(r->bad_rate, c[i].bad, 1e-9);
        if (c[i].p50 > 0)
            CHECK(fabs(r->models[0].p50_ms - c[i].p50) <= 0.01 * c[i].p50, "case %zu: p50 %.3f ms, "
                  "want %g", i, r->models[0].p50_ms, c[i].p50);
        if (c[i].bad == 0)
            CHECK(fabs(r->execs[0].busy_frac - 0.8) < 0.01, "case %zu: GPU busy %.3f, want 0.8", i,
                  r->execs[0].busy_frac);
        sim_result_destroy(r);
        sim_destroy(s);
        sim_config_destroy(cfg);
    }
    /* the ROMA zoo's GoogLeNet carries 106.9 ms of stack; the import scales it */
    for (int k = 0; k < 3; k++) {
        char text[512];
        snprintf(text, sizeof text,
                 "{\"name\":\"z\",\"duration_s\":1,\"cluster\":{\"gpus\":1,\"gpu_kind\":\"m60\"},"
                 "\"models\":[{\"zoo\":\"roma\",\"select\":[\"GoogLeNet\"],\"stack_scale\":%g}],"
                 "\"workload\":{\"rate_rps\":10},\"policy\":{\"name\":\"fifo\"}}", k * 0.5);
        struct sim_config *cfg;
        REQUIRE_OK(sim_config_from_text(text, "zoo", ".", &cfg));
        CHECK_NEAR(cfg->world.models[0].stack_ms, 106.9 * k * 0.5, 1e-9);
        sim_config_destroy(cfg);
    }
}

/* The controller's time by hand (controller.*): fifo on 1,024 GPUs (never the bottleneck), 1-ms
 * batches of one, evenly spaced arrivals, no network, 1 ms of controller time per request
 * admitted. One thread at 500 req/s is busy half the time and never queues: every batch
 * starts exactly 1 ms after its request arrived. At 2,000 req/s it is saturated: request k
 * waits for the k admissions before it, so its batch starts (k + 1) ms after the first
 * arrival, k/2 ms after its own (request 500: 251 ms): the delay grows without bound, and
 * the thread is busy the whole run. Two threads at 1,500 req/s
 * (0.67 ms apart, 1 ms each) never queue again. */
struct ctrl_obs {
    int64_t first_arrival, min_lag, max_lag, lag_500;
    int n;
};

static void ctrl_batch_start(void *ctx, const struct sim *s, const struct sim_batch *b)
{
    (void)s;
    struct ctrl_obs *o = ctx;
    const struct sim_request *r = b->reqs;
    int64_t lag = b->t_start - r->t_arrival;
    if (o->n == 0)
        o->first_arrival = r->t_arrival, o->min_lag = o->max_lag = lag;
    o->min_lag = lag < o->min_lag ? lag : o->min_lag;
    o->max_lag = lag > o->max_lag ? lag : o->max_lag;
    if (o->n == 500)
        o->lag_500 = lag;
    o->n++;
}

static void ctrl_decisions_queue(void)
{
    static const struct { int threads, rate; bool saturated; } cases[] = {
        {1, 500, false}, {1, 2000, true}, {2, 1500, false}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"name\":\"ctrl\",\"seed\":1,\"duration_s\":3,\"warmup_s\":1,\"keep_warmup\":true,"
                 "\"cluster\":{\"gpus\":1024},\"network\":{\"ctrl_us\":0,\"data_us_per_request\":0,"
                 "\"resp_us\":0},\"models\":[{\"name\":\"m\",\"alpha_ms\":0,\"beta_ms\":1,"
                 "\"slo_ms\":100000,\"max_batch\":1}],\"workload\":{\"rate_rps\":%d,\"arrival\":"
                 "{\"kind\":\"uniform\"}},\"policy\":{\"name\":\"fifo\"},\"controller\":"
                 "{\"threads\":%d,\"us_per_request\":1000}}", cases[c].rate, cases[c].threads);
        struct sim_config *cfg;
        struct sim *s = engine_from_text(text, "ctrl", &cfg);
        struct ctrl_obs o = {0};
        struct sim_observer obs = {.ctx = &o, .batch_start = ctrl_batch_start};
        sim_set_observer(s, &obs);
        REQUIRE_OK(sim_run(s));
        struct sim_result *r = NULL;
        REQUIRE_OK(sim_result_collect(s, &r));
        if (!cases[c].saturated)
            CHECK(o.n > 1000 && o.min_lag == SIM_NS_PER_MS && o.max_lag == SIM_NS_PER_MS &&
                      r->ctrl_wait_max_ms == 0,
                  "%d thread(s) at %d req/s: lags %lld..%lld ns, longest wait %.3f ms",
                  cases[c].threads, cases[c].rate, (long long)o.min_lag, (long long)o.max_lag,
                  r->ctrl_wait_max_ms);
        else   /* request 500 arrived 250 ms after the first and waited for 500 admissions */
            CHECK(o.n > 1000 && llabs(o.lag_500 - 251 * SIM_NS_PER_MS) <= SIM_NS_PER_MS &&
                      o.max_lag > o.lag_500,
                  "saturated: lag of request 500 %lld ns (want about 251 ms), longest %lld",
                  (long long)o.lag_500, (long long)o.max_lag);
        double want_busy = cases[c].saturated ? 1.0 : cases[c].rate * 1e-3 / cases[c].threads;
        CHECK(fabs(r->ctrl_busy_frac - want_busy) < 0.02, "busy %.3f, want %.3f",
              r->ctrl_busy_frac, want_busy);
        sim_result_destroy(r);
        sim_destroy(s);
        sim_config_destroy(cfg);
    }
}

TEST_MAIN({"heap_ties_fire_in_insertion_order", heap_ties_fire_in_insertion_order},
          {"ctrl_decisions_queue", ctrl_decisions_queue},
          {"host_time_spaces_batches", host_time_spaces_batches},
          {"stack_delays_responses_only", stack_delays_responses_only},
          {"search_rules_by_hand", search_rules_by_hand},
          {"heap_random_times_sorted", heap_random_times_sorted},
          {"bits_next_and_match_a_scan", bits_next_and_match_a_scan},
          {"heads_match_a_scan", heads_match_a_scan},
          {"running_brief_follows_batches", running_brief_follows_batches},
          {"timers_cancelled_never_fire", timers_cancelled_never_fire},
          {"timers_due_now_keep_the_order", timers_due_now_keep_the_order},
          {"hist_quantiles_within_one_percent", hist_quantiles_within_one_percent},
          {"rng_streams_depend_on_name_and_seed_only", rng_streams_depend_on_name_and_seed_only},
          {"arrival_rates_and_burstiness", arrival_rates_and_burstiness},
          {"segments_scale_the_rate", segments_scale_the_rate},
          {"segments_shift_popularity", segments_shift_popularity},
          {"rate_schedules_drive_each_model", rate_schedules_drive_each_model},
          {"cpu_executor_retimes_exactly", cpu_executor_retimes_exactly},
          {"nodes_config", nodes_config},
          {"cpu_measured_scaling", cpu_measured_scaling},
          {"json_set_paths", json_set_paths},
          {"params_table_reads_checks_and_documents", params_table_reads_checks_and_documents},
          {"md1_mean_wait", md1_mean_wait},
          {"overload_stops_the_run", overload_stops_the_run},
          {"store_image_merges", store_image_merges},
          {"store_rows_read_back", store_rows_read_back},
          {"config_engine_follows_the_world", config_engine_follows_the_world},
          {"ideal_batch_table_profile", ideal_batch_table_profile},
        {"ideal_batch_capped_at_max", ideal_batch_capped_at_max},
        {"host_time_drawn_per_batch", host_time_drawn_per_batch},
        {"free_lane_index_matches", free_lane_index_matches},
        {"sweep_claims_by_hand", sweep_claims_by_hand},
          {"sizes_mg1_mean_wait", sizes_mg1_mean_wait},
          {"service_time_distributions", service_time_distributions},
          {"sizes_batch_mean_or_max", sizes_batch_mean_or_max},
          {"policy_named_streams", policy_named_streams},
          {"durations_saturate_past_the_end", durations_saturate_past_the_end})
