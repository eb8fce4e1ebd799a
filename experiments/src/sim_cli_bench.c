/* sim_cli_bench — `servesim bench`: the throughput benchmark (a policy on 64 GPUs and the
 * 35-model zoo against the in-process reference simulator of sim_bench.c, in the same run)
 * and its scaling runs over GPU counts (--gpus; tests/bench/RESULTS.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "sim_bench.h"
#include "sim_cli_int.h"
#include "sim_config.h"
#include "sim_err.h"
#include "sim_goodput.h"
#include "sim_wall.h"

static long peak_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* The median of x[0..n-1] (sorts x). */
static double median_of(double *x, int n)
{
    gsl_sort(x, 1, (size_t)n);
    return gsl_stats_median_from_sorted_data(x, 1, (size_t)n);
}

/* servesim bench: the run and the reference simulator alternate `rounds` times in this
 * process; speeds are the medians of the rounds (the ratio: of each round's ratio), since a
 * shared machine's speed drifts between runs more than within one pair. Every round must
 * simulate the same events (a run is a pure function of config and seed). */
/* The bench's experiment: the 35-model 1080Ti zoo on `gpus` GPUs at `rate` req/s. */
static int bench_config(const struct opts *o, int gpus, double rate, double duration,
                        struct sim_config **cfg)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"name\": \"bench\", \"seed\": 1, \"duration_s\": %.17g, \"warmup_s\": 0,"
             " \"keep_warmup\": true,"
             " \"cluster\": {\"gpus\": %d, \"gpu_kind\": \"1080ti\"},"
             " \"models\": [{\"zoo\": \"symphony_1080ti\", \"select\": \"all\"}],"
             " \"workload\": {\"rate_rps\": %.17g, \"arrival\": {\"kind\": \"poisson\"}},"
             " \"policy\": {\"name\": \"%s\"}, \"metrics\": {\"sample_period_s\": %.17g}}",
             duration, gpus, rate, o->policy, o->sample);
    return sim_config_from_text(text, "bench", ".", cfg);
}

/* One cell of bench --gpus: g GPUs at `rate` for `duration` simulated seconds, `rounds`
 * times; the median wall time and the requests (the same every round). */
static int bench_cell(const struct opts *o, int g, double rate, double duration, int rounds,
                      double *wall, uint64_t *reqs)
{
    double w[100];
    struct sim_config *cfg = NULL;
    int rc = bench_config(o, g, rate, duration, &cfg);
    for (int k = 0; k < rounds && !rc; k++) {
        struct sim_result *r = NULL;
        if ((rc = sim_run_once(cfg, 1.0, NULL, &r)))
            break;
        w[k] = r->wall_s;
        *reqs = r->offered;
        sim_result_destroy(r);
    }
    sim_config_destroy(cfg);
    if (!rc)
        *wall = median_of(w, rounds);
    return rc;
}

/* bench --gpus A,B,...: for each count, the load scaled with the GPUs and the load fixed;
 * the wall time per simulated request (median of the rounds) against the first count's.
 * With --steady, each cell also runs its first half, and reports the second half: the
 * difference of the two runs' requests and wall times. */
static int bench_scaling(const struct opts *o)
{
    double ns0[2] = {0, 0};
    if (!o->json)
        printf("bench --gpus: %s, 35 models, %g s simulated%s, %d round%s (medians); the load "
               "scaled with the GPUs (%.4g req/s per GPU) and fixed (%g req/s)\n"
               "%8s | %12s %9s %11s %7s | %12s %9s %11s %7s | %10s\n", o->policy, o->duration,
               o->steady ? " (the columns: its second half, less the first's run)" : "",
               o->rounds, o->rounds > 1 ? "s" : "", o->rate / o->gpus_list[0], o->rate, "GPUs",
               "requests", "wall s", "ns/request", "vs", "requests", "wall s", "ns/request",
               "vs", "peak KiB");
    else
        printf("[");
    /* an untimed first run: the process's first one pays its cold start (page faults, the
     * zoo's first reads), which would inflate the row every other is compared with */
    double wu;
    uint64_t ru;
    int rc0 = bench_cell(o, o->gpus_list[0], o->rate, o->duration, 1, &wu, &ru);
    if (rc0)
        return cli_fail(rc0);
    for (int i = 0; i < o->ngpus; i++) {
        int g = o->gpus_list[i];
        double ns[2], wall[2];
        uint64_t reqs[2];
        long rss = 0;
        for (int c = 0; c < 2; c++) {
            double rate = c == 0 ? o->rate * g / o->gpus_list[0] : o->rate, wh = 0;
            uint64_t rh = 0;
            int rc = bench_cell(o, g, rate, o->duration, o->rounds, &wall[c], &reqs[c]);
            if (!rc && o->steady)
                rc = bench_cell(o, g, rate, o->duration / 2, o->rounds, &wh, &rh);
            if (rc)
                return cli_fail(rc);
            if (o->steady) {
                wall[c] -= wh;
                reqs[c] -= rh;
                if (wall[c] <= 0 || reqs[c] == 0)
                    return cli_fail(sim_err_set(
                        SIM_EINVAL, "bench --steady: %d GPUs at %g req/s: the second half "
                        "took %.4f s for %llu requests, which measures nothing (the machine's "
                        "noise is larger than the half); give a longer --duration", g, rate,
                        wall[c], (unsigned long long)reqs[c]));
            } else if (reqs[c] == 0) {
                return cli_fail(sim_err_set(
                    SIM_EINVAL, "bench --gpus: %d GPUs at %g req/s simulated no request in %g s: "
                    "no cost per request to report; give a larger --rate or --duration", g,
                    rate, o->duration));
            }
            long now = peak_rss_kb();
            rss = now > rss ? now : rss;
            ns[c] = wall[c] / (double)reqs[c] * 1e9;
            if (i == 0)
                ns0[c] = ns[c];
        }
        if (o->json)
            printf("%s{\"policy\": \"%s\", \"gpus\": %d, \"duration_s\": %g, \"steady\": %s, "
                   "\"scaled\": {\"requests\": %llu, \"wall_s\": %.4f, \"ns_per_request\": %.1f, "
                   "\"vs_first\": %.3f}, \"fixed\": {\"requests\": %llu, \"wall_s\": %.4f, "
                   "\"ns_per_request\": %.1f, \"vs_first\": %.3f}, \"peak_rss_kb\": %ld}",
                   i ? ", " : "", o->policy, g, o->duration, o->steady ? "true" : "false",
                   (unsigned long long)reqs[0], wall[0], ns[0], ns0[0] > 0 ? ns[0] / ns0[0] : 0,
                   (unsigned long long)reqs[1], wall[1], ns[1], ns0[1] > 0 ? ns[1] / ns0[1] : 0,
                   rss);
        else
            printf("%8d | %12llu %9.3f %11.1f %6.2fx | %12llu %9.3f %11.1f %6.2fx | %10ld\n", g,
                   (unsigned long long)reqs[0], wall[0], ns[0], ns0[0] > 0 ? ns[0] / ns0[0] : 0,
                   (unsigned long long)reqs[1], wall[1], ns[1], ns0[1] > 0 ? ns[1] / ns0[1] : 0,
                   rss);
        fflush(stdout);
    }
    if (o->json)
        printf("]\n");
    else
        printf("(peak KiB: the process's peak so far, so it only grows down the table)\n");
    return 0;
}

int cmd_bench(const struct opts *o)
{
    enum { MAX_ROUNDS = 100 };
    if (o->ngpus > 1)
        return bench_scaling(o);
    if (o->steady)
        return cli_fail(sim_err_set(SIM_EUSAGE, "bench --steady: needs a --gpus list "
                                    "(--gpus 64,10000)"));
    struct sim_config *cfg = NULL;
    struct sim_result *r = NULL;
    int rc = bench_config(o, o->gpus, o->rate, o->duration, &cfg);
    if (rc)
        return cli_fail(rc);
    int rounds = o->rounds;
    double rps_k[MAX_ROUNDS], ref_k[MAX_ROUNDS], ratio_k[MAX_ROUNDS], wall_k[MAX_ROUNDS];
    long rss0 = peak_rss_kb(), rss = 0;
    for (int k = 0; k < rounds; k++) {
        struct sim_result *rk = NULL;
        if ((rc = sim_run_once(cfg, 1.0, NULL, &rk)))
            goto out;
        if (k == 0) {
            r = rk;
            rss = peak_rss_kb();        /* the first run's: later rounds reuse freed memory */
        }
        wall_k[k] = rk->wall_s;
        if (k > 0) {
            bool same = rk->events == r->events && rk->offered == r->offered &&
                        rk->bad_rate == r->bad_rate;
            sim_result_destroy(rk);
            if (!same) {
                rc = sim_err_set(SIM_EINTERNAL, "bench: round %d simulated other events than "
                                 "round 1 (a run must be a pure function of config and seed)",
                                 k + 1);
                goto out;
            }
        }
        rps_k[k] = (double)r->offered / wall_k[k];
        struct sim_bench_ref ref = {0};
        if (!o->no_reference && (rc = sim_bench_reference(r->offered, 1, &ref)))
            goto out;
        ref_k[k] = ref.requests_per_s;
        ratio_k[k] = ref.requests_per_s > 0 ? rps_k[k] / ref.requests_per_s : 0;
    }
    uint64_t reqs = r->offered;
    double wall = median_of(wall_k, rounds), rps = median_of(rps_k, rounds);
    double ref_rps = median_of(ref_k, rounds), ratio = median_of(ratio_k, rounds);
    double eps = (double)r->events / wall;
    double epr = reqs ? (double)r->events / (double)reqs : 0;
    /* of the events, those that went through a heap, and policy timers due at the instant
     * they were armed (fired from a FIFO: sim_timer.c) */
    double hpr = reqs ? (double)(r->events - r->same_instant) / (double)reqs : 0;
    double ipr = reqs ? (double)r->same_instant / (double)reqs : 0;
    if (o->json)
        printf("{\"policy\": \"%s\", \"duration_s\": %g, \"gpus\": %d, \"models\": %d, "
               "\"requests\": %llu, \"events\": %llu, \"events_per_request\": %.3f, "
               "\"heap_events_per_request\": %.3f, \"same_instant_timers_per_request\": %.3f, "
               "\"rounds\": %d, \"wall_s\": %.3f, \"requests_per_s\": %.0f, "
               "\"events_per_s\": %.0f, \"reference_requests_per_s\": %.0f, "
               "\"speed_ratio\": %.4f, \"peak_rss_kb\": %ld, \"rss_before_run_kb\": %ld, "
               "\"bad_rate\": %.5f, \"timeseries_points\": %zu}\n",
               o->policy, o->duration, o->gpus, r->nmodels, (unsigned long long)reqs,
               (unsigned long long)r->events, epr, hpr, ipr, rounds, wall, rps, eps, ref_rps,
               ratio, rss, rss0, r->bad_rate, r->ts.n);
    else {
        printf("bench: %s, %d GPUs x %d models, %.0f req/s offered for %g s simulated\n"
               "  requests %llu, events %llu (%.2f per request: %.2f through a heap, %.2f policy "
               "timers due at once)\n"
               "  wall %.3f s, %.0f simulated requests / wall second, %.0f events / s%s\n"
               "  peak RSS %ld KiB (before the run %ld KiB); bad rate %.4f\n",
               o->policy, o->gpus, r->nmodels, o->rate, o->duration, (unsigned long long)reqs,
               (unsigned long long)r->events, epr, hpr, ipr, wall, rps, eps,
               rounds > 1 ? " (medians of the rounds)" : "", rss, rss0, r->bad_rate);
        if (!o->no_reference)
            printf("  reference batching simulator (sim_bench.h): %.0f requests / wall second;"
                   " speed ratio %.3f\n", ref_rps, ratio);
    }
out:
    sim_result_destroy(r);
    sim_config_destroy(cfg);
    return rc ? cli_fail(rc) : 0;
}

/* servesim export DB [-o FILE]: the text form, written to a temporary name and renamed. */
