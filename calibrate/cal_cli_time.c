/* cal_cli_time — servesim-calibrate's commands that time kernels: measure (passes per batch
 * size, back to back or as a server runs them, fitted and written as profiles), concurrency
 * (k inferences at once: the interference table) and host (the device's idle time between
 * served batches). Options and the other commands: cal_cli.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sqlite3.h>
#include <cjson/cJSON.h>
#include "cal_backend.h"
#include "cal_concur.h"
#include "cal_measure.h"
#include "cal_net.h"
#include "cal_profile.h"
#include "cal_ref.h"
#include "cal_validate.h"
#include "sim_err.h"
#include "sim_out.h"
#include "sim_wall.h"
#include "sim_readback.h"
#include "sim_store.h"
#include "cal_cli_int.h"

/* A fit as its formula, with each term's own sign ("- 0.7389", not "+ -0.7389"); none where
 * fewer batch sizes were measured than the form has coefficients (nothing was fitted). */
static void print_fit(const char *name, const struct cal_fit *f)
{
    int need = f->form == CAL_FIT_QUADRATIC ? 3 : 2;
    if (!f->n)
        return;
    if (f->n < need) {
        printf("    %-14s not fitted: %d batch size%s measured, %d needed\n", name, f->n,
               f->n == 1 ? "" : "s", need);
        return;
    }
    printf("    %-14s l(b) = ", name);
    if (f->form == CAL_FIT_QUADRATIC)
        printf("%.5f b^2 %c %.4f b", f->c2, f->c1 < 0 ? '-' : '+', fabs(f->c1));
    else
        printf("%.4f b", f->c1);
    printf(" %c %.4f ms   R^2 %.5f  worst %.2f%% (b=%d)\n", f->c0 < 0 ? '-' : '+', fabs(f->c0),
           f->r2, 100 * f->max_rel_err, f->worst_batch);
}

/* One network on one backend instance (one CPU thread count): its series s measured at every
 * batch size (or serving-like at --serving's load), printed, and fitted. */
static int measure_series(const struct opts *o, const struct cal_backend_ops *be, void *st,
                          const struct cal_opts *bo, struct cal_net *net, const char *name,
                          const struct cal_provenance *pv, bool cpu, int k,
                          struct cal_series *s)
{
    int rc = 0;
    const char *base = o->kind ? o->kind : pv->dev.kind;
    if (cpu)
        snprintf(s->kind, sizeof s->kind, "%s@%dcore", base, o->threads[k]);
    else if (o->precision != CAL_FP32 && !o->kind)
        snprintf(s->kind, sizeof s->kind, "%s-%s", base, cal_precision_name(o->precision));
    else
        snprintf(s->kind, sizeof s->kind, "%s", base);
    s->threads = bo->threads;
    s->fit_p99 = o->fit_p99;
    if (o->serving > 0) {
        printf("%s on %s (%s), %s, serving-like at load %g:\n  %6s %9s %9s %9s %6s "
               "%16s %16s  (KS 5%%)\n", name, pv->dev.device, s->kind,
               cal_precision_name(o->precision), o->serving, "batch", "mean ms",
               "p99 ms", "min ms", "cv", "lognormal sh/KS", "gamma sh/KS");
        fflush(stdout);
        if ((rc = cal_measure_serving(be, bo, net, o->batches, o->nbatches,
                                      o->warmup, o->reps, o->serving, o->seed, s->pts)))
            return rc;
        s->n = o->nbatches;
        for (int j = 0; j < s->n; j++) {
            const struct cal_point *p = &s->pts[j];
            printf("  %6d %9.3f %9.3f %9.3f %6.3f %7.3f / %6.3f %7.3f / %6.3f  (%.3f)\n",
                   p->batch, p->mean_ms, p->p99_ms, p->min_ms, p->cv,
                   p->svc[CAL_SVC_LOGNORMAL].shift, p->svc[CAL_SVC_LOGNORMAL].ks,
                   p->svc[CAL_SVC_GAMMA].shift, p->svc[CAL_SVC_GAMMA].ks, p->ks_crit);
        }
    }
    printf("%s on %s (%s), %s:\n  %6s %10s %10s %8s %10s %10s %9s\n", name,
           pv->dev.device, s->kind, cal_precision_name(o->precision), "batch", "median ms",
           "p99 ms", "sd ms", "weights MB", "activ. MB", "load ms");
    for (int j = 0; j < o->nbatches && !rc; j++) {
        struct cal_point *p = &s->pts[j];
        if (o->serving <= 0 &&
            (rc = cal_measure(be, st, net, o->batches[j], o->warmup, o->reps, p)))
            break;
        s->n = j + 1;
        printf("  %6d %10.3f %10.3f %8.3f %10.1f %10.1f %9.1f\n", p->batch, p->median_ms,
               p->p99_ms, p->sd_ms, (double)p->mem.weights_bytes / 1048576.0,
               (double)(p->mem.arena_bytes + p->mem.workspace_bytes) / 1048576.0, p->mem.load_ms);
        fflush(stdout);
    }
    if (rc || (rc = cal_series_fit(s, o->tol)))
        return rc;
    print_fit("linear", &s->lin);
    print_fit("linear robust", &s->robust);
    print_fit("quadratic", &s->quad);
    printf("    recommendation: %s\n", s->why);
    return 0;
}

int cmd_measure(const struct opts *o)
{
    const struct cal_backend_ops *be;
    int rc;
    if (o->nnets < 1)
        return sim_err_set(SIM_EUSAGE, "measure: expected at least one network");
    if (o->serving > 0 && o->fit_p99)
        return sim_err_set(SIM_EUSAGE, "--serving fits on the means (the service-time "
                           "distribution carries the tail): drop --fit-on p99");
    if (o->serving > 0 && o->reps < 10)
        return sim_err_set(SIM_EUSAGE, "--serving: expected --reps of at least 10 to fit a "
                           "distribution, got %d", o->reps);
    if ((rc = cli_find_backend(o, &be)))
        return rc;
    bool cpu = !strcmp(be->name, "onednn");
    int nk = cpu ? o->nthreads : 1;
    struct cal_model_prof *mp = calloc((size_t)o->nnets, sizeof *mp);
    struct cal_net **nets = calloc((size_t)o->nnets, sizeof *nets);
    char host[128], date[32];
    struct cal_provenance pv = {.backend = be->name, .host = host, .date = date,
                                .precision = o->precision, .folded_bn = o->fold, .fit_p99 = o->fit_p99,
                                .warmup = o->warmup, .reps = o->reps,
                                .serving_load = o->serving};
    char exec[64];
    struct cal_opts eo = cli_backend_opts(o, 0);
    pv.exec = cpu ? NULL : cal_exec_text(&eo, exec, sizeof exec);
    cal_host_name(host, sizeof host);
    sim_utc_now(date);
    if (!mp || !nets) {
        rc = SIM_ENOMEM;
        goto out;
    }
    for (int i = 0; i < o->nnets && !rc; i++) {
        if ((rc = cli_load_net(o->nets[i], o, &nets[i])))
            break;
        if (o->fold)
            cal_net_fold_bn(nets[i]);
        mp[i].net = nets[i];
        snprintf(mp[i].name, sizeof mp[i].name, "%s", nets[i]->name);
        if (!(mp[i].series = calloc((size_t)nk, sizeof *mp[i].series)))
            rc = SIM_ENOMEM;
        mp[i].nseries = nk;
    }
    for (int k = 0; k < nk && !rc; k++) {
        struct cal_opts bo = cli_backend_opts(o, cpu ? o->threads[k] : 0);
        void *st = NULL;
        if ((rc = be->create(&bo, &st)) || (rc = be->info(st, &pv.dev))) {
            if (st)
                be->destroy(st);
            break;
        }
        for (int i = 0; i < o->nnets && !rc; i++)
            rc = measure_series(o, be, st, &bo, nets[i], mp[i].name, &pv, cpu, k,
                                &mp[i].series[k]);
        be->destroy(st);
    }
    if (!rc && o->out && (rc = cal_profile_write_zoo(o->out, o->zoo_name, &pv, mp, o->nnets)) == 0)
        printf("wrote %s\n", o->out);
    if (!rc && o->db && (rc = cal_profile_write_db(o->db, &pv, mp, o->nnets)) == 0)
        printf("added %d profile(s) to %s\n", o->nnets * nk, o->db);
out:
    for (int i = 0; mp && i < o->nnets; i++)
        free(mp[i].series);
    for (int i = 0; nets && i < o->nnets; i++)
        cal_net_destroy(nets[i]);
    free(mp), free(nets);
    return rc;
}

/* The head every measurement record shares: its format, and a provenance object (tool,
 * backend, device, versions, host, date) that the caller extends. Returns the provenance. */
static cJSON *record_head(cJSON *doc, const char *format, const char *tool,
                          const struct cal_backend_ops *be, const struct cal_device_info *dev)
{
    char host[128], date[32];
    cal_host_name(host, sizeof host);
    sim_utc_now(date);
    cJSON_AddStringToObject(doc, "format", format);
    cJSON *pv = cJSON_AddObjectToObject(doc, "provenance");
    cJSON_AddStringToObject(pv, "tool", tool);
    cJSON_AddStringToObject(pv, "backend", be->name);
    cJSON_AddStringToObject(pv, "device", dev->device);
    cJSON_AddStringToObject(pv, "versions", dev->versions);
    cJSON_AddStringToObject(pv, "host", host);
    cJSON_AddStringToObject(pv, "date", date);
    return pv;
}

/* concurrency NET: lat(k, p, t) and cores busy for every k x p x t, the interference table
 * relative to (1, 1, 1), and (oneDNN) the parametric model fitted to the points. */
/* The points into doc's "points" and the interference table's rows (factors over the
 * one-thread base; a GPU's rows need only n), printed as factors. */
static void concur_points(cJSON *doc, cJSON *rows, const struct cal_concur_point *pts, int np,
                          bool gpu, double base)
{
    cJSON *jp = cJSON_AddArrayToObject(doc, "points");
    for (int i = 0; i < np; i++) {
        const struct cal_concur_point *p = &pts[i];
        cJSON *x = cJSON_CreateObject(), *r = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "k", p->k);
        cJSON_AddNumberToObject(x, "p", p->p);
        cJSON_AddNumberToObject(x, "t", p->t);
        cJSON_AddNumberToObject(x, "n", p->n);
        cJSON_AddNumberToObject(x, "median_ms", p->median_ms);
        cJSON_AddNumberToObject(x, "p99_ms", p->p99_ms);
        cJSON_AddNumberToObject(x, "cores", p->cores);
        cJSON_AddItemToArray(jp, x);
        cJSON_AddNumberToObject(r, "n", p->k);
        if (!gpu) {                 /* a GPU's rows need only n */
            cJSON_AddNumberToObject(r, "p", p->p);
            cJSON_AddNumberToObject(r, "t", p->t);
        }
        cJSON_AddNumberToObject(r, "factor", p->median_ms / base);
        cJSON_AddItemToArray(rows, r);
        printf(" (%d,%d,%d) %.3f", p->k, p->p, p->t, p->median_ms / base);
    }
}

/* RRL's parametric CPU model fitted to the points (a fallback for more cores than here),
 * with the graph's own pi and width, into doc's "parametric_fit" and printed. */
static void concur_fit(cJSON *doc, const struct cal_concur_point *pts, int np,
                       const struct cal_net *net, bool gpu)
{
    struct cal_concur_fit fit = {0};
    double cores = (double)sysconf(_SC_NPROCESSORS_ONLN);
    cal_net_parallelism(net, &fit.pi, &fit.width);
    if (gpu) {
        printf("  no parametric fit: it models CPU threads\n");
    } else if (cal_concur_fit(pts, np, cores, &fit) == 0) {
        printf("  parametric fit on %g cores (pi %.3f, width %d): one thread %.3f ms, f %.4f, "
               "overhead %.3f (held), mu %.4f, kappa %.4f; relative error rms %.1f%%, max "
               "%.1f%%\n", cores, fit.pi, fit.width, fit.l1_ms, fit.f, fit.overhead, fit.mu,
               fit.kappa, 100 * fit.rms_rel, 100 * fit.max_rel);
        cJSON *jf = cJSON_AddObjectToObject(doc, "parametric_fit");
        cJSON_AddNumberToObject(jf, "cores", cores);
        cJSON_AddNumberToObject(jf, "pi", fit.pi);
        cJSON_AddNumberToObject(jf, "width", fit.width);
        cJSON_AddNumberToObject(jf, "one_thread_ms", fit.l1_ms);
        cJSON_AddNumberToObject(jf, "f", fit.f);
        cJSON_AddNumberToObject(jf, "overhead", fit.overhead);
        cJSON_AddNumberToObject(jf, "mu", fit.mu);
        cJSON_AddNumberToObject(jf, "kappa", fit.kappa);
        cJSON_AddNumberToObject(jf, "rms_rel_err", fit.rms_rel);
        cJSON_AddNumberToObject(jf, "max_rel_err", fit.max_rel);
    } else {
        printf("  no parametric fit: %s\n", sim_err_msg());
    }
}

int cmd_concurrency(const struct opts *o)
{
    const struct cal_backend_ops *be;
    int rc;
    if (o->nnets != 1)
        return sim_err_set(SIM_EUSAGE, "concurrency: expected one network, got %d", o->nnets);
    if ((rc = cli_find_backend(o, &be)))
        return rc;
    bool gpu = strcmp(be->name, "onednn") != 0;
    bool k1 = false, p1 = false, t1 = false;
    for (int i = 0; i < o->nks; i++)
        k1 |= o->ks[i] == 1;
    for (int i = 0; i < o->nps; i++)
        p1 |= o->ps[i] == 1;
    for (int i = 0; i < o->nthreads; i++)
        t1 |= o->threads[i] == 1;
    if (!k1 || !p1 || !t1)
        return sim_err_set(SIM_EUSAGE, "concurrency: --k, --inter-op and --threads must include 1 "
                           "(the table's factors are relative to one inference on one thread)");
    if (gpu && (o->nps > 1 || o->nthreads > 1))
        return sim_err_set(SIM_EUSAGE, "concurrency: with --backend %s only --k varies (k "
                           "streams on one GPU); --inter-op and --threads are CPU knobs", be->name);
    int batch = o->batch_set ? o->batch : 1;     /* (check's default is 2) */
    struct cal_net *net = NULL;
    if ((rc = cli_load_net(o->nets[0], o, &net)))
        return rc;
    if (o->fold)
        cal_net_fold_bn(net);
    struct cal_device_info dev;
    void *st = NULL;
    struct cal_opts bo = cli_backend_opts(o, 1);
    if (!(rc = be->create(&bo, &st)))
        rc = be->info(st, &dev);
    if (st)
        be->destroy(st);
    int np = o->nks * o->nps * o->nthreads;
    struct cal_concur_point *pts = calloc((size_t)np, sizeof *pts);
    if (!rc && !pts)
        rc = SIM_ENOMEM;
    if (!rc)
        printf("%s, batch %d, on %s (%ld online CPUs): %g s per point\n  %4s %4s %4s %8s %10s "
               "%10s %7s\n", net->name, batch, dev.device, sysconf(_SC_NPROCESSORS_ONLN),
               o->seconds, "k", "p", "t", "n", "median ms", "p99 ms", "cores");
    double base = 0;
    for (int i = 0, q = 0; i < o->nks && !rc; i++)
        for (int h = 0; h < o->nps && !rc; h++)
            for (int j = 0; j < o->nthreads && !rc; j++, q++) {
                struct cal_concur_point *p = &pts[q];
                if ((rc = cal_concur_measure(be, &bo, net, batch, o->ks[i], o->ps[h], o->threads[j],
                                             o->warmup, o->seconds, p)))
                    break;
                if (p->k == 1 && p->p == 1 && p->t == 1)
                    base = p->median_ms;
                printf("  %4d %4d %4d %8d %10.3f %10.3f %7.2f\n", p->k, p->p, p->t, p->n,
                       p->median_ms, p->p99_ms, p->cores);
                fflush(stdout);
            }
    cJSON *doc = NULL, *rows = NULL;
    if (!rc) {
        printf("  factors, lat(k, p, t) / lat(1, 1, 1) = %.3f ms:", base);
        doc = cJSON_CreateObject();
        rows = cJSON_CreateArray();
        cJSON *pv = record_head(doc, "servesim-concurrency/1", "servesim-calibrate concurrency",
                                be, &dev);
        cJSON_AddNumberToObject(pv, "online_cpus", (double)sysconf(_SC_NPROCESSORS_ONLN));
        cJSON_AddStringToObject(doc, "network", net->name);
        cJSON_AddNumberToObject(doc, "batch", batch);
        cJSON_AddNumberToObject(doc, "seconds", o->seconds);
        cJSON_AddNumberToObject(doc, "one_thread_ms", base);
        concur_points(doc, rows, pts, np, gpu, base);
        printf("\n");
        cJSON_AddItemToObject(doc, "interference_table", cJSON_Duplicate(rows, true));
        concur_fit(doc, pts, np, net, gpu);
        if (o->out && !(rc = cli_write_json(o->out, doc)))
            printf("wrote %s\n", o->out);
        if (!rc && o->table_out && !(rc = cli_write_json(o->table_out, rows)))
            printf("wrote %s\n", o->table_out);
    }
    cJSON_Delete(doc);
    cJSON_Delete(rows);
    free(pts);
    cal_net_destroy(net);
    return rc;
}

/* host NET...: the device's idle time between back-to-back served batches (the host's share
 * of a batch: launch and wait, and with the input/output copies), per batch size; the evidence
 * for the simulator's cluster.host_us_per_batch. GPU backends only. */
int cmd_host(const struct opts *o)
{
    const struct cal_backend_ops *be;
    int rc;
    if (o->nnets < 1)
        return sim_err_set(SIM_EUSAGE, "host: expected at least one network");
    if ((rc = cli_find_backend(o, &be)))
        return rc;
    if (!be->serve_gaps)
        return sim_err_set(SIM_EUSAGE, "host: the %s backend has no host/device split (its "
                           "passes are host work); use --backend cudnn on a GPU", be->name);
    if (o->reps < 10)
        return sim_err_set(SIM_EUSAGE, "host: expected --reps of at least 10 (the passes per "
                           "batch size and mode), got %d", o->reps);
    struct cal_opts bo = cli_backend_opts(o, 0);
    struct cal_device_info dev;
    void *st = NULL;
    char exec[64];
    cJSON *doc = cJSON_CreateObject(), *jn = NULL;
    if (!(rc = be->create(&bo, &st)))
        rc = be->info(st, &dev);
    if (!rc) {
        cJSON *pv = record_head(doc, "servesim-host/1", "servesim-calibrate host", be, &dev);
        jn = cJSON_AddArrayToObject(doc, "networks");
        cJSON_AddStringToObject(pv, "precision", cal_precision_name(o->precision));
        cJSON_AddStringToObject(pv, "exec", cal_exec_text(&bo, exec, sizeof exec));
        cJSON_AddNumberToObject(pv, "passes", o->reps);
        cJSON_AddStringToObject(pv, "gap", "device idle from the end of one pass to the start "
                                "of the next (CUDA events); launch_wait: launch, pass, stream "
                                "wait; copies: input in from pinned memory, pass, output out, wait");
    }
    for (int i = 0; i < o->nnets && !rc; i++) {
        struct cal_net *net = NULL;
        if ((rc = cli_load_net(o->nets[i], o, &net)))
            break;
        if (o->fold)
            cal_net_fold_bn(net);
        printf("%s on %s (%s, %s), %d passes back to back per batch size and mode: the device's "
               "idle time between passes, us\n  %6s %9s %10s %10s | %21s | %21s\n  %6s %9s %10s "
               "%10s | %10s %10s | %10s %10s\n", net->name, dev.device,
               cal_precision_name(o->precision), exec, o->reps, "", "", "", "",
               "launch + wait", "with copies", "batch", "pass ms", "in KiB", "out KiB",
               "median", "p99", "median", "p99");
        cJSON *jo = cJSON_CreateObject(), *jb = cJSON_AddArrayToObject(jo, "batches");
        cJSON_AddStringToObject(jo, "network", net->name);
        cJSON_AddItemToArray(jn, jo);
        size_t in_el = net->tokens ? sizeof(int32_t) : o->precision == CAL_FP16 ? 2 : 4;
        size_t out_el = o->precision == CAL_FP16 ? 2 : 4;
        for (int j = 0; j < o->nbatches && !rc; j++) {
            int b = o->batches[j];
            struct cal_point pt;
            struct cal_gaps lw, cp;
            if ((rc = cal_measure(be, st, net, b, o->warmup, o->reps, &pt)) ||
                (rc = cal_measure_gaps(be, st, o->reps, false, &lw)) ||
                (rc = cal_measure_gaps(be, st, o->reps, true, &cp)))
                break;
            double kin = (double)b * (double)cal_shape_count(&net->input) * (double)in_el / 1024;
            double kout = (double)b * (double)cal_shape_count(&net->layers[net->n - 1].shape) *
                          (double)out_el / 1024;
            printf("  %6d %9.3f %10.1f %10.1f | %10.1f %10.1f | %10.1f %10.1f\n", b, pt.median_ms,
                   kin, kout, lw.median_us, lw.p99_us, cp.median_us, cp.p99_us);
            cJSON *x = cJSON_CreateObject();
            cJSON_AddNumberToObject(x, "batch", b);
            cJSON_AddNumberToObject(x, "pass_median_ms", pt.median_ms);
            cJSON_AddNumberToObject(x, "input_kib", kin);
            cJSON_AddNumberToObject(x, "output_kib", kout);
            const struct cal_gaps *g[2] = {&lw, &cp};
            const char *gn[2] = {"launch_wait", "copies"};
            for (int k = 0; k < 2; k++) {
                cJSON *y = cJSON_AddObjectToObject(x, gn[k]);
                cJSON_AddNumberToObject(y, "gap_median_us", g[k]->median_us);
                cJSON_AddNumberToObject(y, "gap_mean_us", g[k]->mean_us);
                cJSON_AddNumberToObject(y, "gap_p90_us", g[k]->p90_us);
                cJSON_AddNumberToObject(y, "gap_p99_us", g[k]->p99_us);
                cJSON_AddNumberToObject(y, "gap_min_us", g[k]->min_us);
                cJSON_AddNumberToObject(y, "gap_max_us", g[k]->max_us);
                cJSON_AddNumberToObject(y, "pass_median_ms", g[k]->gpu_median_ms);
            }
            cJSON_AddItemToArray(jb, x);
        }
        be->unprepare(st);
        cal_net_destroy(net);
    }
    if (!rc && o->out && !(rc = cli_write_json(o->out, doc)))
        printf("wrote %s\n", o->out);
    if (st)
        be->destroy(st);
    cJSON_Delete(doc);
    return rc;
}
