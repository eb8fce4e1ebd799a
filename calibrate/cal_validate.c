/* cal_validate — a real FIFO batching server against the simulator on the same arrivals. */
#include "cal_validate.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cal_measure.h"
#include "cal_ref.h"
#include "sim.h"
#include "sim_config.h"
#include "sim_err.h"
#include "sim_wall.h"
#include "sim_goodput.h"
#include "sim_json.h"

/* Sleeps to time t of sim_wall_seconds()'s clock (CLOCK_MONOTONIC). */
static void sleep_until(double t)
{
    struct timespec ts = {(time_t)t, (long)((t - floor(t)) * 1e9)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

/* Summary of per-request latencies (sorted in place) over a span. */
static void side_stats(double *lat_ms, int n, double span_s, double busy_s, long batches,
                       struct cal_side *out)
{
    gsl_sort(lat_ms, 1, (size_t)n);
    out->mean_ms = gsl_stats_mean(lat_ms, 1, (size_t)n);
    out->p50_ms = gsl_stats_quantile_from_sorted_data(lat_ms, 1, (size_t)n, 0.5);
    out->p99_ms = gsl_stats_quantile_from_sorted_data(lat_ms, 1, (size_t)n, 0.99);
    out->tput_rps = n / span_s;
    out->util = busy_s / span_s;
    out->mean_batch = batches ? (double)n / (double)batches : 0;
}

/* The real passes' times per batch size (ms), for the observed profile. */
struct passes {
    double *ms[CAL_VALIDATE_MAX_BATCH + 1];
    int n[CAL_VALIDATE_MAX_BATCH + 1];
    double *ratio;               /* every pass's time / l(b), in the order they ran */
    int nratio;
};

/* The real server over arrival times arr[0..n) (seconds from start). */
static int serve_real(const struct cal_validate_opts *o, void *const *inst, const double *arr,
                      int n, struct cal_validate_row *row, struct passes *ps)
{
    double *lat = malloc((size_t)n * sizeof *lat);
    if (!lat)
        return SIM_ENOMEM;
    int next = 0, rc = 0;
    long batches = 0;
    double busy = 0, last_done = 0;
    double t0 = sim_wall_seconds() + 0.05;
    while (next < n && !rc) {
        double now = sim_wall_seconds() - t0;
        if (arr[next] > now) {
            sleep_until(t0 + arr[next]);
            now = sim_wall_seconds() - t0;
        }
        int b = 0;
        while (next + b < n && b < o->max_batch && arr[next + b] <= now)
            b++;
        if (b == 0)
            continue;
        double ms = 0;
        rc = o->be->run(inst[b - 1], &ms);
        double done = sim_wall_seconds() - t0;
        for (int k = 0; k < b; k++)
            lat[next + k] = (done - arr[next + k]) * 1e3;
        busy += done - now;
        batches++;
        ps->ms[b][ps->n[b]++] = (done - now) * 1e3;
        ps->ratio[ps->nratio++] = (done - now) * 1e3 / row->profile_ms[b];
        row->real_n[b]++;
        row->real_exec_ms[b] += ((done - now) * 1e3 - row->real_exec_ms[b]) / (double)row->real_n[b];
        last_done = done;
        next += b;
    }
    if (!rc)
        side_stats(lat, n, last_done - arr[0], busy, batches, &row->real);
    row->autocorr = ps->nratio > 2 ? gsl_stats_lag1_autocorrelation(ps->ratio, 1,
                                                                      (size_t)ps->nratio) : 0;
    free(lat);
    return rc;
}

struct sim_obs_ctx {
    double *lat;
    int n, cap;
    double last_done, busy;
    long batches;
};

static void obs_end(void *ctx, const struct sim *s, const struct sim_request *r)
{
    (void)s;
    struct sim_obs_ctx *c = ctx;
    if (c->n < c->cap)
        c->lat[c->n++] = (double)(r->t_finish - r->t_arrival) / 1e6;
    if ((double)r->t_finish / 1e9 > c->last_done)
        c->last_done = (double)r->t_finish / 1e9;
}

static void obs_batch(void *ctx, const struct sim *s, const struct sim_batch *b)
{
    (void)s;
    struct sim_obs_ctx *c = ctx;
    c->busy += (double)(b->t_finish - b->t_start) / 1e9;
    c->batches++;
}

static int serve_sim(const struct cal_validate_opts *o, const char *zoo, const char *model,
                     const char *kind, const double *arr, int n, struct cal_side *out)
{
    char csv[1024], text[4096];
    snprintf(csv, sizeof csv, "%s/arrivals.csv", o->scratch);
    FILE *f = fopen(csv, "w");
    if (!f)
        return sim_err_set(SIM_EIO, "%s: cannot write", csv);
    fprintf(f, "t\n");
    for (int i = 0; i < n; i++)
        fprintf(f, "%.9f\n", arr[i]);
    if (fclose(f) != 0)
        return sim_err_set(SIM_EIO, "%s: cannot write", csv);
    snprintf(text, sizeof text,
             "{\"name\": \"validate\", \"seed\": 1, \"duration_s\": %.6f, \"warmup_s\": 0,"
             " \"cluster\": {\"gpus\": 1, \"gpu_kind\": \"%s\"},"
             " \"models\": [{\"zoo\": \"%s\", \"select\": [\"%s\"], \"slo_ms\": 1000000,"
             " \"max_batch\": %d}],"
             " \"workload\": {\"trace\": {\"format\": \"csv_timestamps\", \"files\": [\"%s\"],"
             " \"dir\": \"/\", \"gaps\": \"zero\", \"zero_run_s\": 0}},"
             " \"network\": {\"ctrl_us\": 0, \"data_us_per_request\": 0, \"resp_us\": 0},"
             " \"policy\": {\"name\": \"fifo\", \"params\": {\"drop_late\": false}},"
             " \"metrics\": {\"percentile\": 99, \"sample_period_s\": 0}}",
             arr[n - 1] + 600, kind, zoo, model, o->max_batch, csv + 1);
    struct sim_config *cfg = NULL;
    struct sim_result *res = NULL;
    struct sim_obs_ctx c = {.lat = malloc((size_t)n * sizeof(double)), .cap = n};
    struct sim_observer obs = {.ctx = &c, .request_end = obs_end, .batch_done = obs_batch};
    int rc = c.lat ? 0 : SIM_ENOMEM;
    if (!rc)
        rc = sim_config_from_text(text, "validate", o->scratch, &cfg);
    if (!rc)
        rc = sim_run_once(cfg, 1.0, &obs, &res);
    if (!rc && c.n != n)
        rc = sim_err_set(SIM_EINTERNAL, "validate: the simulator completed %d of %d requests",
                         c.n, n);
    if (!rc)
        side_stats(c.lat, n, c.last_done - arr[0], c.busy, c.batches, out);
    sim_result_destroy(res);
    sim_config_destroy(cfg);
    free(c.lat);
    return rc;
}

/* Capacity of the profile: B / l(B) requests per second. */
static int capacity(const struct cal_validate_opts *o, const char *model, char *kind,
                    size_t ksize, double *mu, double *prof_ms)
{
    char text[1024], zk[SIM_NAME_MAX] = "";
    int rc = 0;
    if (!o->kind) { /* the zoo's own executor kind */
        cJSON *zoo = NULL;
        const char *k = NULL;
        if ((rc = sim_json_load_file(o->zoo, &zoo)) ||
            (rc = sim_json_str(zoo, "", "executor_kind", true, &k))) {
            cJSON_Delete(zoo);
            return sim_err_prefix(rc, o->zoo);
        }
        snprintf(zk, sizeof zk, "%s", k);
        cJSON_Delete(zoo);
    }
    snprintf(text, sizeof text, "{\"name\": \"cap\", \"duration_s\": 1, \"cluster\": {\"gpus\": 1,"
             " \"gpu_kind\": \"%s\"}, \"models\": [{\"zoo\": \"%s\", \"select\": [\"%s\"]}],"
             " \"workload\": {\"rate_rps\": 1}, \"policy\": {\"name\": \"fifo\"}}",
             o->kind ? o->kind : zk, o->zoo, model);
    struct sim_config *cfg = NULL;
    rc = sim_config_from_text(text, "validate", o->scratch, &cfg);
    if (rc)
        return rc;
    const struct sim_model_cfg *m = &cfg->world.models[0];
    int k = sim_model_cfg_kind(m, cfg->world.gpu_kind);
    if (k < 0)
        rc = sim_err_set(SIM_EINVAL, "%s: model %s has no profile for kind %s", o->zoo, model,
                         cfg->world.gpu_kind);
    else {
        *mu = o->max_batch / sim_profile_ms(&m->prof[k], o->max_batch) * 1e3;
        for (int b = 1; b <= o->max_batch; b++)
            prof_ms[b] = sim_profile_ms(&m->prof[k], b);
        snprintf(kind, ksize, "%s", cfg->world.gpu_kind);
    }
    sim_config_destroy(cfg);
    return rc;
}

/* n Poisson arrival times at `rate` per second from 0. */
static void poisson_arrivals(gsl_rng *r, double rate, double *arr, int n)
{
    double t = 0;
    for (int i = 0; i < n; i++) {
        arr[i] = t;
        t += gsl_ran_exponential(r, 1.0 / rate);
    }
}

/* A zoo of one model whose profile is what the real passes showed: per batch size their mean
 * (kept non-decreasing, as profiles are) and the better-fitting distribution (cal_svc_fit);
 * sizes with fewer than 5 passes keep the calibrated profile's mean and no variation. */
static int observed_zoo(const struct cal_validate_opts *o, const char *model, const char *kind,
                        const double *prof_ms, struct passes *ps, char *file, size_t fsize)
{
    struct cal_point pt[CAL_VALIDATE_MAX_BATCH + 1];
    double ks[CAL_SVC_NDIST] = {0};
    for (int b = 1; b <= o->max_batch; b++) {
        memset(&pt[b], 0, sizeof pt[b]);
        if (ps->n[b] >= 5) {
            gsl_sort(ps->ms[b], 1, (size_t)ps->n[b]);
            pt[b].mean_ms = gsl_stats_mean(ps->ms[b], 1, (size_t)ps->n[b]);
            cal_svc_fit(ps->ms[b], ps->n[b], &pt[b]);
            for (int d = 0; d < CAL_SVC_NDIST; d++)
                ks[d] += pt[b].svc[d].ks;
        } else {
            pt[b].mean_ms = prof_ms[b];
        }
    }
    int d = ks[CAL_SVC_GAMMA] < ks[CAL_SVC_LOGNORMAL] ? CAL_SVC_GAMMA : CAL_SVC_LOGNORMAL;
    snprintf(file, fsize, "%s/observed.json", o->scratch);
    FILE *f = fopen(file, "w");
    if (!f)
        return sim_err_set(SIM_EIO, "%s: cannot write", file);
    fprintf(f, "{\"format\": \"servesim-zoo/1\", \"name\": \"observed\", \"executor_kind\": "
            "\"%s\", \"models\": [{\"name\": \"%s\", \"slo_ms\": 1000000, \"max_batch\": %d, "
            "\"profile\": {\"form\": \"table\", \"latency_ms\": [", kind, model, o->max_batch);
    double prev = 0;
    for (int b = 1; b <= o->max_batch; b++) {
        prev = fmax(prev, pt[b].mean_ms);
        fprintf(f, "%s%.6f", b > 1 ? ", " : "", prev);
    }
    fprintf(f, "], \"service\": {\"dist\": \"%s\", \"cv\": [",
            d == CAL_SVC_GAMMA ? "gamma" : "lognormal");
    for (int b = 1; b <= o->max_batch; b++)
        fprintf(f, "%s%.6f", b > 1 ? ", " : "", fmin(pt[b].cv, 10));
    fprintf(f, "], \"shift\": [");
    for (int b = 1; b <= o->max_batch; b++)
        fprintf(f, "%s%.6f", b > 1 ? ", " : "", fmin(pt[b].svc[d].shift, 0.999));
    fprintf(f, "]}}}]}\n");
    if (fclose(f) != 0)
        return sim_err_set(SIM_EIO, "%s: cannot write", file);
    return 0;
}

int cal_validate(const struct cal_validate_opts *o, struct cal_validate_row *rows)
{
    const char *model = o->model ? o->model : o->net->name;
    char kind[SIM_NAME_MAX];
    double mu = 0, prof_ms[CAL_VALIDATE_MAX_BATCH + 1] = {0};
    if (o->max_batch > CAL_VALIDATE_MAX_BATCH)
        return sim_err_set(SIM_EUSAGE, "--max-batch: expected at most %d, got %d",
                           CAL_VALIDATE_MAX_BATCH, o->max_batch);
    int rc = capacity(o, model, kind, sizeof kind, &mu, prof_ms);
    if (rc)
        return rc;
    void **inst = calloc((size_t)o->max_batch, sizeof *inst);
    double *arr = malloc((size_t)o->requests * sizeof *arr);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    struct passes ps = {{0}, {0}, NULL, 0};
    bool ok = inst && arr && r && (ps.ratio = malloc((size_t)o->requests * sizeof *ps.ratio));
    for (int b = 1; b <= o->max_batch && ok; b++)
        ok = (ps.ms[b] = malloc((size_t)o->requests * sizeof **ps.ms)) != NULL;
    if (!ok) {
        rc = SIM_ENOMEM;
        goto out;
    }
    for (int b = 1; b <= o->max_batch && !rc; b++) {
        struct cal_mem_info mi;
        void *in = cal_ref_input(o->net, b, 99);
        double ms;
        if (!in)
            rc = SIM_ENOMEM;
        if (!rc)
            rc = o->be->create(&o->bo, &inst[b - 1]);
        if (!rc)
            rc = o->be->prepare(inst[b - 1], o->net, b, &mi);
        if (!rc)
            rc = o->be->set_input(inst[b - 1], in);
        for (int w = 0; w < 3 && !rc; w++)
            rc = o->be->run(inst[b - 1], &ms);
        free(in);
    }
    for (int li = 0; li < o->nloads && !rc; li++) {
        struct cal_validate_row *row = &rows[li];
        memset(row, 0, sizeof *row);
        memcpy(row->profile_ms, prof_ms, sizeof prof_ms);
        row->load = o->loads[li];
        row->rate_rps = o->loads[li] * mu;
        gsl_rng_set(r, (unsigned long)(o->seed + (uint64_t)li));
        poisson_arrivals(r, row->rate_rps, arr, o->requests);
        memset(ps.n, 0, sizeof ps.n);
        ps.nratio = 0;
        if ((rc = serve_real(o, inst, arr, o->requests, row, &ps)))
            break;
        char obs[1100] = "";
        if (!(rc = serve_sim(o, o->zoo, model, kind, arr, o->requests, &row->sim)) &&
            !(rc = observed_zoo(o, model, kind, prof_ms, &ps, obs, sizeof obs)))
            rc = serve_sim(o, obs, model, kind, arr, o->requests, &row->obs);
        if (obs[0])
            remove(obs);
        double mean[CAL_VALIDATE_NOISE_RUNS], p99[CAL_VALIDATE_NOISE_RUNS];
        for (int k = 0; k < CAL_VALIDATE_NOISE_RUNS && !rc; k++) {
            struct cal_side side;
            gsl_rng_set(r, (unsigned long)(o->seed + 1000003 * (uint64_t)(li + 1) + (uint64_t)k));
            poisson_arrivals(r, row->rate_rps, arr, o->requests);
            rc = serve_sim(o, o->zoo, model, kind, arr, o->requests, &side);
            mean[k] = side.mean_ms, p99[k] = side.p99_ms;
        }
        if (!rc) {
            size_t nk = CAL_VALIDATE_NOISE_RUNS;
            row->noise_mean = gsl_stats_sd(mean, 1, nk) / gsl_stats_mean(mean, 1, nk);
            row->noise_p99 = gsl_stats_sd(p99, 1, nk) / gsl_stats_mean(p99, 1, nk);
        }
    }
out:
    for (int b = 1; b <= o->max_batch && b <= CAL_VALIDATE_MAX_BATCH; b++)
        free(ps.ms[b]);
    free(ps.ratio);
    for (int b = 0; inst && b < o->max_batch; b++)
        if (inst[b])
            o->be->destroy(inst[b]);
    free(inst), free(arr);
    gsl_rng_free(r);
    return rc;
}
