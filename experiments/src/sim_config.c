/* sim_config — validation of the experiment config; see sim_config.h and docs/config.md. */
#include "sim_config.h"

#include <ctype.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>

#include "sim_config_int.h"
#include "sim_err.h"
#include "sim_json.h"
#include "sim_rng.h"
#include "wl_clients.h"
#include "wl_jobs.h"
#include "wl_source.h"
#include "wl_zoo.h"

/* sim_config.spare: the engine built at load, for the first sim_config_engine call */
struct sim_config_spare {
    struct sim *s;                      /* NULL once taken */
    struct wl_replay *replay;           /* its trace replay (borrowed from s), or NULL */
    struct sim_world world;             /* the world it was built from: a caller that has
                                         * since changed a field of cfg->world (its policy, its
                                         * duration, ...) gets an engine built anew */
};
static int build_engine(const struct sim_config *cfg, double scale, const struct policy_ops *pol,
                        struct sim **out, struct wl_replay **replay);

static const char *const ARRIVALS[] = {"poisson", "gamma", "uniform", NULL};
static const char *const POPULARITY[] = {"uniform", "zipf", "explicit", NULL};
static const char *const JITTERS[] = {"none", "exponential", "lognormal", NULL};
static const char *const SPLITS[] = {"independent", "round_robin", "random", NULL};

void sim_config_destroy(struct sim_config *cfg)
{
    if (!cfg)
        return;
    if (cfg->spare)
        sim_destroy(cfg->spare->s);
    free(cfg->spare);
    for (int i = 0; i < cfg->world.nmodels; i++)
        sim_model_cfg_free(&cfg->world.models[i]);
    free(cfg->world.models);
    free(cfg->world.nodes);
    wl_jobs_free(&cfg->world);
    free(cfg->world.intf.rows);
    for (int i = 0; i < cfg->workload.nsegments; i++)
        free(cfg->workload.segments[i].model_scale);
    free(cfg->workload.segments);
    for (int m = 0; cfg->workload.schedules && m < cfg->world.nmodels; m++)
        free(cfg->workload.schedules[m].seg);
    free(cfg->workload.schedules);
    free(cfg->workload.sizes);
    wl_clients_cfg_free(cfg->workload.clients);
    wl_trace_cfg_free(cfg->workload.trace);
    sim_app_free(cfg->app);
    free(cfg->world.model_rps);
    free(cfg->file);
    free(cfg->dir);
    cJSON_Delete(cfg->json);
    free(cfg);
}

/* cluster.nodes[] {name, cores, gpus, gpu_kind, cpu_kind}: worker nodes (ROMA's), instead of
 * cluster.gpus / cluster.gpu_kind. Every node's GPUs are of one kind (heterogeneous GPUs are
 * not supported by the policies yet); CPU kinds may differ. */
static int parse_nodes(struct sim_config *c, const cJSON *arr, const char **kind, long *gpus)
{
    static const char *const keys[] = {"name", "cores", "gpus", "gpu_kind", "cpu_kind",
                                       "cpu_scaling", NULL};
    static const char *const SCALINGS[] = {"linear", "measured", NULL};
    int n = cJSON_GetArraySize(arr), rc;
    if (n == 0)
        return sim_err_set(SIM_EINVAL, "cluster.nodes: expected at least one node, got []");
    if (!(c->world.nodes = calloc((size_t)n, sizeof *c->world.nodes)))
        return SIM_ENOMEM;
    c->world.nnodes = n;
    *gpus = 0;
    const cJSON *it = sim_json_first(arr);
    for (int i = 0; i < n; i++, it = it->next) {
        char p[SIM_JPATH_MAX];
        struct sim_node_cfg *nd = &c->world.nodes[i];
        const char *gk = *kind, *ck = "cpu", *name = NULL;
        long cores = 0, g = 0;
        int scaling = 0;
        sim_jpath_idx(p, sizeof p, "cluster.nodes", i);
        if (!cJSON_IsObject(it))
            return sim_json_expected(p, "{name, cores, gpus, gpu_kind, cpu_kind}", it);
        if ((rc = sim_json_keys(it, p, keys)) || (rc = sim_json_str(it, p, "name", false, &name)) ||
            (rc = sim_json_int(it, p, "cores", true, 1, 4096, &cores)) ||
            (rc = sim_json_int(it, p, "gpus", false, 0, 100000, &g)) ||
            (rc = sim_json_str(it, p, "gpu_kind", false, &gk)) ||
            (rc = sim_json_str(it, p, "cpu_kind", false, &ck)) ||
            (rc = sim_json_enum(it, p, "cpu_scaling", false, SCALINGS, &scaling)))
            return rc;
        nd->cpu_scaling = (enum sim_cpu_scaling)scaling;
        size_t ckl = strlen(ck);
        if (scaling == SIM_CPU_MEASURED && (ckl < 6 || strcmp(ck + ckl - 6, "@1core") != 0))
            return sim_err_set(SIM_EINVAL, "%s.cpu_kind: with cpu_scaling \"measured\" expected "
                               "the one-core kind \"<cpu>@1core\" (its @<n>core siblings give "
                               "the other thread counts), got \"%s\"", p, ck);
        if ((name && strlen(name) >= SIM_NAME_MAX) || strlen(gk) >= SIM_NAME_MAX ||
            strlen(ck) >= SIM_NAME_MAX)
            return sim_err_set(SIM_EINVAL, "%s: names and kinds have at most %d characters", p,
                               SIM_NAME_MAX - 1);
        if (g > 0 && *gpus > 0 && strcmp(gk, *kind) != 0)
            return sim_err_set(SIM_EINVAL, "%s.gpu_kind: every node's GPUs must be of one kind "
                               "(\"%s\" before), got \"%s\"", p, *kind, gk);
        if (g > 0)
            *kind = gk;
        if (name)
            snprintf(nd->name, sizeof nd->name, "%s", name);
        else
            snprintf(nd->name, sizeof nd->name, "node%d", i);
        for (int k = 0; k < i; k++)
            if (strcmp(c->world.nodes[k].name, nd->name) == 0)
                return sim_err_set(SIM_EINVAL, "%s.name: node \"%s\" appears twice", p, nd->name);
        nd->cores = (int)cores;
        nd->gpus = (int)g;
        snprintf(nd->gpu_kind, sizeof nd->gpu_kind, "%s", gk);
        snprintf(nd->cpu_kind, sizeof nd->cpu_kind, "%s", ck);
        *gpus += g;
    }
    for (int i = 0; i < n; i++)        /* GPU-less nodes name the cluster's kind too */
        if (c->world.nodes[i].gpus == 0)
            snprintf(c->world.nodes[i].gpu_kind, sizeof c->world.nodes[i].gpu_kind, "%s", *kind);
    return 0;
}

static int row_cmp(const void *a, const void *b)
{
    const struct sim_intf_row *x = a, *y = b;
    return x->p != y->p ? (x->p > y->p) - (x->p < y->p)
           : x->t != y->t ? (x->t > y->t) - (x->t < y->t)
                          : (x->n > y->n) - (x->n < y->n);
}

/* cluster.interference, interference_params, interference_table (sim_world.h has the
 * models; the defaults are the RRL specification's). */
static int parse_interference(struct sim_config *c, const cJSON *o)
{
    static const char *const MODELS[] = {"none", "parametric", "table", NULL};
    static const char *const pkeys[] = {"kappa_gpu", "host_ms", "host_ms_per_request", "f",
                                        "overhead", "pi", "width", "mu", "kappa", "roughness",
                                        "roughness_length", "roughness_seed", NULL};
    static const char *const rkeys[] = {"n", "p", "t", "factor", NULL};
    struct sim_intf_cfg *ic = &c->world.intf;
    *ic = (struct sim_intf_cfg){.kappa_gpu = 0.05, .host_ms = 2, .host_ms_per_request = 1,
                                .f = 0.1, .overhead = 0.005, .pi = 1, .width = 1, .mu = 0.2,
                                .kappa = 0.1, .rough_eta = 0, .rough_len = 6, .rough_seed = 1};
    long rseed = 1;
    int model = 0, rc;
    const cJSON *par, *tab;
    if ((rc = sim_json_enum(o, "cluster", "interference", false, MODELS, &model)) ||
        (rc = sim_json_obj(o, "cluster", "interference_params", false, &par)) ||
        (rc = sim_json_arr(o, "cluster", "interference_table", false, &tab)))
        return rc;
    ic->model = (enum sim_interference)model;
    if (par && ic->model != SIM_INTF_PARAMETRIC)
        return sim_err_set(SIM_EINVAL, "cluster.interference_params: only with interference "
                           "\"parametric\"");
    if (tab && ic->model != SIM_INTF_TABLE)
        return sim_err_set(SIM_EINVAL, "cluster.interference_table: only with interference "
                           "\"table\"");
    if (ic->model == SIM_INTF_TABLE && (!tab || cJSON_GetArraySize(tab) == 0))
        return sim_err_set(SIM_EINVAL, "cluster.interference_table: expected at least one row "
                           "{n, p, t, factor} with interference \"table\"");
    const char *pp = "cluster.interference_params";
    if (par && ((rc = sim_json_keys(par, pp, pkeys)) ||
                (rc = sim_json_num(par, pp, "kappa_gpu", false, SIM_J_NONNEG, &ic->kappa_gpu)) ||
                (rc = sim_json_num(par, pp, "host_ms", false, SIM_J_NONNEG, &ic->host_ms)) ||
                (rc = sim_json_num(par, pp, "host_ms_per_request", false, SIM_J_NONNEG,
                                   &ic->host_ms_per_request)) ||
                (rc = sim_json_num(par, pp, "f", false, SIM_J_UNIT, &ic->f)) ||
                (rc = sim_json_num(par, pp, "overhead", false, SIM_J_NONNEG, &ic->overhead)) ||
                (rc = sim_json_num(par, pp, "pi", false, SIM_J_POS, &ic->pi)) ||
                (rc = sim_json_num(par, pp, "width", false, SIM_J_POS, &ic->width)) ||
                (rc = sim_json_num(par, pp, "mu", false, SIM_J_NONNEG, &ic->mu)) ||
                (rc = sim_json_num(par, pp, "kappa", false, SIM_J_NONNEG, &ic->kappa)) ||
                (rc = sim_json_num(par, pp, "roughness", false, SIM_J_NONNEG, &ic->rough_eta)) ||
                (rc = sim_json_num(par, pp, "roughness_length", false, SIM_J_POS,
                                   &ic->rough_len)) ||
                (rc = sim_json_int(par, pp, "roughness_seed", false, 0, 2147483647, &rseed))))
        return rc;
    ic->rough_seed = (uint64_t)rseed;
    sim_intf_rough_draw(ic);
    if (par && ic->pi < 1)
        return sim_err_set(SIM_EINVAL, "%s.pi: expected a number >= 1 (work over critical "
                           "path), got %.15g", pp, ic->pi);
    if (par && ic->width < 1)
        return sim_err_set(SIM_EINVAL, "%s.width: expected a number >= 1 (widest join), got %.15g",
                           pp, ic->width);
    if (!tab)
        return 0;
    int n = cJSON_GetArraySize(tab), i = 0;
    if (!(ic->rows = calloc((size_t)n, sizeof *ic->rows)))
        return SIM_ENOMEM;
    ic->nrows = n;
    const cJSON *it;
    cJSON_ArrayForEach(it, tab) {
        char path[SIM_JPATH_MAX];
        sim_jpath_idx(path, sizeof path, "cluster.interference_table", i);
        long rn = 0, rp = 1, rt = 1;
        double f = 0;
        if (!cJSON_IsObject(it))
            return sim_json_expected(path, "an object {n, p, t, factor}", it);
        if ((rc = sim_json_keys(it, path, rkeys)) ||
            (rc = sim_json_int(it, path, "n", true, 1, 1000, &rn)) ||
            (rc = sim_json_int(it, path, "p", false, 1, 1000, &rp)) ||
            (rc = sim_json_int(it, path, "t", false, 1, 1000, &rt)) ||
            (rc = sim_json_num(it, path, "factor", true, SIM_J_POS, &f)))
            return rc;
        ic->rows[i++] = (struct sim_intf_row){.n = (int)rn, .p = (int)rp, .t = (int)rt,
                                              .factor = f};
    }
    qsort(ic->rows, (size_t)n, sizeof *ic->rows, row_cmp);
    for (i = 1; i < n; i++)
        if (!row_cmp(&ic->rows[i - 1], &ic->rows[i]))
            return sim_err_set(SIM_EINVAL, "cluster.interference_table: two rows for n %d, p %d, "
                               "t %d", ic->rows[i].n, ic->rows[i].p, ic->rows[i].t);
    return 0;
}

/* cluster.host_us_per_batch: a number (the same every batch), or {"median": US, "p99": US}
 * (drawn per batch, lognormal through both: what `servesim-calibrate host` measures). */
static int parse_host_time(struct sim_config *c, const cJSON *o)
{
    static const char *const keys[] = {"median", "p99", NULL};
    const char *P = "cluster.host_us_per_batch";
    const cJSON *h = cJSON_GetObjectItem(o, "host_us_per_batch");
    int rc;
    if (cJSON_IsObject(h)) {
        if ((rc = sim_json_keys(h, P, keys)) ||
            (rc = sim_json_num(h, P, "median", true, SIM_J_POS, &c->world.host_us_per_batch)) ||
            (rc = sim_json_num(h, P, "p99", true, SIM_J_POS, &c->world.host_us_p99)))
            return rc;
        if (c->world.host_us_p99 < c->world.host_us_per_batch)
            return sim_err_set(SIM_EINVAL, "%s.p99: expected at least the median (%.15g us), got "
                               "%.15g", P, c->world.host_us_per_batch, c->world.host_us_p99);
        if (c->world.host_us_p99 > 1e6)
            return sim_err_set(SIM_EINVAL, "%s.p99: expected at most 1e6 us (1 s), got %.15g", P,
                               c->world.host_us_p99);
        if (c->world.host_us_p99 == c->world.host_us_per_batch)
            c->world.host_us_p99 = 0;   /* no spread: the same every batch */
        return 0;
    }
    if (h && !cJSON_IsNumber(h))
        return sim_json_expected(P, "a number of us, or {\"median\": US, \"p99\": US}", h);
    if ((rc = sim_json_num(o, "cluster", "host_us_per_batch", false, SIM_J_NONNEG,
                           &c->world.host_us_per_batch)))
        return rc;
    if (c->world.host_us_per_batch > 1e6)
        return sim_err_set(SIM_EINVAL, "%s: expected at most 1e6 us (1 s), got %.15g", P,
                           c->world.host_us_per_batch);
    return 0;
}

static int parse_cluster(struct sim_config *c, const cJSON *root)
{
    static const char *const keys[] = {"gpus", "gpu_kind", "gpu_memory_mb", "max_gpus",
                                       "page_mb", "load_gb_s", "provision_s", "exec_cv",
                                       "nodes", "executors", "lanes", "interference",
                                       "interference_params", "interference_table",
                                       "host_us_per_batch", NULL};
    const cJSON *o, *nodes;
    const char *kind = "1080ti";
    long gpus = 0, max_gpus = 0, lanes = 1, execs = -1;
    int rc;
    c->world.page_mb = 16;
    c->world.load_gb_s = 12;
    c->world.provision_s = 10;
    if ((rc = sim_json_obj(root, "", "cluster", true, &o)) || (rc = sim_json_keys(o, "cluster", keys)) ||
        (rc = sim_json_arr(o, "cluster", "nodes", false, &nodes)))
        return rc;
    if (nodes && (cJSON_GetObjectItem(o, "gpus") || cJSON_GetObjectItem(o, "gpu_kind")))
        return sim_err_set(SIM_EINVAL, "cluster: give either nodes or gpus and gpu_kind, not both");
    if (!nodes && cJSON_GetObjectItem(o, "executors"))
        return sim_err_set(SIM_EINVAL, "cluster.executors: only with cluster.nodes (with "
                           "cluster.gpus, gpus is the executors at start)");
    long total = 0;                     /* the nodes' GPUs: the ledger's capacity */
    if ((nodes && (rc = parse_nodes(c, nodes, &kind, &total))) ||
        (nodes && (rc = sim_json_int(o, "cluster", "executors", false, 0, total, &execs))))
        return rc;
    if (nodes)
        gpus = execs >= 0 ? execs : total;
    if ((!nodes && (rc = sim_json_int(o, "cluster", "gpus", true, 1, 100000, &gpus))) ||
        (rc = sim_json_int(o, "cluster", "max_gpus", false, 1, 100000, &max_gpus)) ||
        (rc = sim_json_str(o, "cluster", "gpu_kind", false, &kind)) ||
        (rc = sim_json_num(o, "cluster", "gpu_memory_mb", false, SIM_J_NONNEG, &c->world.gpu_memory_mb)) ||
        (rc = sim_json_num(o, "cluster", "page_mb", false, SIM_J_POS, &c->world.page_mb)) ||
        (rc = sim_json_num(o, "cluster", "load_gb_s", false, SIM_J_POS, &c->world.load_gb_s)) ||
        (rc = sim_json_num(o, "cluster", "provision_s", false, SIM_J_NONNEG, &c->world.provision_s)) ||
        (rc = sim_json_num(o, "cluster", "exec_cv", false, SIM_J_NONNEG, &c->world.exec_cv)) ||
        (rc = sim_json_int(o, "cluster", "lanes", false, 1, 1024, &lanes)) ||
        (rc = parse_host_time(c, o)) ||
        (rc = parse_interference(c, o)))
        return rc;
    c->world.lanes = (int)lanes;
    if (strlen(kind) >= SIM_NAME_MAX)
        return sim_err_set(SIM_EINVAL, "cluster.gpu_kind: expected at most %d characters",
                           SIM_NAME_MAX - 1);
    if (max_gpus && max_gpus < gpus)
        return sim_err_set(SIM_EINVAL, "cluster.max_gpus: expected at least %s (%ld), got %ld",
                           nodes ? "cluster.executors" : "cluster.gpus", gpus, max_gpus);
    if (nodes && max_gpus > total)
        return sim_err_set(SIM_EINVAL, "cluster.max_gpus: expected at most the nodes' GPUs (%ld): "
                           "an executor holds a GPU, got %ld", total, max_gpus);
    c->world.gpus = (int)gpus;
    c->world.max_gpus = max_gpus ? (int)max_gpus : (int)gpus;
    snprintf(c->world.gpu_kind, sizeof c->world.gpu_kind, "%s", kind);
    if (!nodes) {                       /* one node: the GPUs, no cores */
        if (!(c->world.nodes = calloc(1, sizeof *c->world.nodes)))
            return SIM_ENOMEM;
        c->world.nnodes = 1;
        struct sim_node_cfg *nd = &c->world.nodes[0];
        snprintf(nd->name, sizeof nd->name, "node0");
        nd->gpus = (int)(gpus > max_gpus ? gpus : max_gpus);   /* every executor's GPU */
        snprintf(nd->gpu_kind, sizeof nd->gpu_kind, "%s", kind);
        snprintf(nd->cpu_kind, sizeof nd->cpu_kind, "cpu");
    }
    return 0;
}

static int parse_models(struct sim_config *c, const cJSON *root)
{
    const cJSON *arr;
    int rc;
    if ((rc = sim_json_arr(root, "", "models", true, &arr)))
        return rc;
    if (cJSON_GetArraySize(arr) == 0)
        return sim_err_set(SIM_EINVAL, "models: expected at least one model, got []");
    if (cJSON_GetArraySize(arr) > SIM_MAX_MODELS)
        return sim_err_set(SIM_EINVAL, "models: expected at most %d models, got %d",
                           SIM_MAX_MODELS, cJSON_GetArraySize(arr));
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, arr) {
        char p[SIM_JPATH_MAX];
        sim_jpath_idx(p, sizeof p, "models", i++);
        if (cJSON_IsObject(it) && cJSON_GetObjectItemCaseSensitive(it, "zoo")) {
            if ((rc = wl_zoo_expand(it, p, c->dir, &c->world.models, &c->world.nmodels)))
                return rc;
            continue;
        }
        if ((rc = wl_models_reserve(&c->world.models, c->world.nmodels, 1)))
            return rc;
        if ((rc = wl_model_parse(it, p, c->world.gpu_kind, &c->world.models[c->world.nmodels])))
            return rc;
        c->world.nmodels++;
    }
    if (c->world.nmodels > SIM_MAX_MODELS)     /* the engine's per-model state is ~150 KB */
        return sim_err_set(SIM_EINVAL, "models: expected at most %d models, got %d (zoos "
                           "expanded)", SIM_MAX_MODELS, c->world.nmodels);
    /* cross-model checks against the cluster: its GPU kind, or on a cluster that never has
     * a GPU, for a model without a GPU profile, the CPU kind of its first node with cores */
    const char *cpu_kind = NULL;
    for (int n = 0; c->world.gpus == 0 && c->world.max_gpus <= 0 && n < c->world.nnodes; n++)
        if (c->world.nodes[n].cores > 0) {
            cpu_kind = c->world.nodes[n].cpu_kind;
            break;
        }
    for (int m = 0; m < c->world.nmodels; m++) {
        struct sim_model_cfg *md = &c->world.models[m];
        for (int j = 0; j < m; j++)
            if (strcmp(c->world.models[j].name, md->name) == 0)
                return sim_err_set(SIM_EINVAL, "models: model \"%s\" appears twice", md->name);
        for (const char *ch = md->name; *ch; ch++)   /* names are fields of exports and keys */
            if ((unsigned char)*ch < 0x20 || *ch == 0x7f)
                return sim_err_set(SIM_EINVAL, "models: the name of model %d (zoo models "
                                   "counted) has byte 0x%02x at position %d: expected no control "
                                   "characters (a tab or newline breaks export and compare)",
                                   m, (unsigned)(unsigned char)*ch, (int)(ch - md->name));
        if (!md->name[0])
            return sim_err_set(SIM_EINVAL, "models: model %d (zoo models counted) has an empty "
                               "name", m);
        const char *kind = c->world.gpu_kind, *what = "cluster.gpu_kind";
        if (cpu_kind && sim_model_cfg_kind(md, kind) < 0) {
            kind = cpu_kind;
            what = "the nodes' cpu_kind (no GPUs)";
        }
        int k = sim_model_cfg_kind(md, kind);
        if (k < 0)
            return sim_err_set(SIM_EINVAL,
                               "models: model \"%s\" has no profile for %s \"%s\" "
                               "(it has: %s%s)", md->name, what, kind, md->prof_kind[0],
                               md->nprof > 1 ? ", ..." : "");
        double l1 = sim_profile_ms(&md->prof[k], 1);
        if (l1 > md->slo_ms)
            return sim_err_set(SIM_EINVAL,
                               "models: model \"%s\": slo_ms %g is below its batch-1 latency "
                               "%g ms on %s", md->name, md->slo_ms, l1, kind);
        if (md->max_batch == 0) {
            int b = 1;
            while (b < 1024 && sim_profile_ms(&md->prof[k], b + 1) <= md->slo_ms)
                b++;
            md->max_batch = b;
        }
    }
    return 0;
}

/* Memory: with a policy that keeps every model on every GPU, all of them must fit together;
 * with a cold-start policy (models loaded on demand) each must fit alone. */
static int check_memory(const struct sim_config *c)
{
    if (c->world.gpu_memory_mb <= 0)
        return 0;
    bool all = !sim_policy_cold_start(c->world.policy, c->world.policy_params);
    double fixed_mb = 0, max_dyn = 0;
    for (int m = 0; m < c->world.nmodels; m++) {
        const struct sim_model_cfg *md = &c->world.models[m];
        fixed_mb += md->weights_mb + md->static_mb;
        if (md->dynamic_mb > max_dyn)
            max_dyn = md->dynamic_mb;
        double alone = md->weights_mb + md->static_mb + md->dynamic_mb;
        if (!all && alone > c->world.gpu_memory_mb)
            return sim_err_set(SIM_EINVAL, "cluster.gpu_memory_mb: expected at least %g MB "
                               "(model \"%s\" alone), got %.15g", alone, md->name, c->world.gpu_memory_mb);
    }
    if (all && fixed_mb + max_dyn > c->world.gpu_memory_mb)
        return sim_err_set(SIM_EINVAL,
                           "cluster.gpu_memory_mb: expected at least %g MB (weights and static "
                           "memory of all models plus the largest dynamic memory, since every "
                           "GPU loads every model with policy \"%s\"), got %.15g",
                           fixed_mb + max_dyn, c->world.policy->name, c->world.gpu_memory_mb);
    return 0;
}

/* The most time-series points a run keeps (about 1 GB) and the most pages of cluster.page_mb a
 * GPU's memory, or all models' weights, may span (docs/config.md "Limits"). */
#define MAX_TS_POINTS 4e7
#define MAX_PAGES 1e8

/* The work a run would do, bounded before it starts so that no accepted value makes a run
 * that exhausts memory or never ends: time-series points, notebooks' token turns (each a
 * timer), pages of the weights cache (counted in int). Each error names the field to change
 * and the least value that fits. */
static int check_work(const struct sim_config *c)
{
    const struct sim_world *w = &c->world;
    double run_s = w->duration_s + w->drain_s;
    if (w->sample_period_s > 0) {
        double per_tick = 16 + 2.0 * w->nmodels + (w->app ? 2.0 * w->app->npaths : 0) + w->njobs;
        double least = run_s * per_tick / MAX_TS_POINTS;
        if (w->sample_period_s < least)
            return sim_err_set(SIM_EINVAL, "metrics.sample_period_s: expected at least %g s, "
                               "got %.15g (a sample of about %g series every period over the run's "
                               "%g s, duration and drain, may keep at most %.0e points)",
                               least, w->sample_period_s, per_tick, run_s, MAX_TS_POINTS);
    }
    if (w->nnotebooks > 0) {
        double least_ms = 1e3 * run_s * (w->gpus > 0 ? w->gpus : 1) / SIM_MAX_FIRINGS;
        if (w->nb_quota_s * 1e3 < least_ms)
            return sim_err_set(SIM_EINVAL, "notebooks.quota_ms: expected at least %g ms, got %.15g "
                               "(a turn of each GPU's token every quantum, over the run's %g s, "
                               "may fire at most %.0e times)", least_ms, w->nb_quota_s * 1e3,
                               run_s, SIM_MAX_FIRINGS);
    }
    double mb = 0;
    for (int m = 0; m < w->nmodels; m++)
        mb += w->models[m].weights_mb + w->models[m].static_mb;
    if (w->gpu_memory_mb > mb)
        mb = w->gpu_memory_mb;
    if (mb / w->page_mb > MAX_PAGES)
        return sim_err_set(SIM_EINVAL, "cluster.page_mb: expected at least %g MB, got %.15g (the "
                           "GPU's memory or the weights of all models, %g MB, would span more "
                           "than %.0e pages)", mb / MAX_PAGES, w->page_mb, mb, MAX_PAGES);
    return 0;
}

/* workload.random_segments {"sd_rps", "period_s", "min_rps"}: the rate is redrawn every
 * period from normal(rate_rps, sd_rps), truncated below at min_rps (FA2's normal(15, 5)
 * workload); expanded here into segments from the stream "workload.random_segments", so a
 * run stays a function of config and seed. */
static int parse_random_segments(struct sim_config *c, const cJSON *w, const cJSON *segs)
{
    static const char *const keys[] = {"sd_rps", "period_s", "min_rps", NULL};
    const char *p = "workload.random_segments";
    const cJSON *o;
    double sd = 0, period = 0, lo = 0.1;
    int rc;
    if ((rc = sim_json_obj(w, "workload", "random_segments", false, &o)) || !o)
        return rc;
    if (segs)
        return sim_err_set(SIM_EINVAL, "%s: give either segments or random_segments, not both", p);
    if ((rc = sim_json_keys(o, p, keys)) || (rc = sim_json_num(o, p, "sd_rps", true, SIM_J_NONNEG, &sd)) ||
        (rc = sim_json_num(o, p, "period_s", true, SIM_J_POS, &period)) ||
        (rc = sim_json_num(o, p, "min_rps", false, SIM_J_POS, &lo)))
        return rc;
    if (!(c->world.rate_rps > 0))
        return sim_err_set(SIM_EINVAL, "%s: needs workload.rate_rps (the mean)", p);
    double n = ceil(c->world.duration_s / period);
    if (n > 1e6)
        return sim_err_set(SIM_EINVAL, "%s.period_s: expected at most 1e6 periods in duration_s, "
                           "got %.15g", p, n);
    gsl_rng *r = sim_rng_stream(c->world.seed, "workload.random_segments");
    if (!r || !(c->workload.segments = calloc((size_t)n, sizeof *c->workload.segments))) {
        gsl_rng_free(r);
        return SIM_ENOMEM;
    }
    c->workload.nsegments = (int)n;
    for (int i = 0; i < c->workload.nsegments; i++) {
        double rate = c->world.rate_rps + gsl_ran_gaussian_ziggurat(r, sd);
        c->workload.segments[i].duration_s = i + 1 < c->workload.nsegments ? period : 0;
        c->workload.segments[i].scale = fmax(rate, lo) / c->world.rate_rps;
    }
    gsl_rng_free(r);
    return 0;
}

/* workload.segments[i].models {"model name": factor, ...}: those models' rates are further
 * multiplied by their factor during the segment (a shift in popularity); others by 1. */
static int parse_segment_models(struct sim_config *c, const cJSON *ms, const char *sp,
                                struct wl_segment *seg)
{
    char mp[SIM_JPATH_MAX];
    snprintf(mp, sizeof mp, "%s.models", sp);
    if (c->app)
        return sim_err_set(SIM_EINVAL, "%s: with an application, requests are the "
                           "application's; per-model factors do not apply", mp);
    if (!(seg->model_scale = malloc((size_t)c->world.nmodels * sizeof *seg->model_scale)))
        return SIM_ENOMEM;
    for (int m = 0; m < c->world.nmodels; m++)
        seg->model_scale[m] = 1;
    const cJSON *it;
    cJSON_ArrayForEach(it, ms) {
        int m = 0;
        while (m < c->world.nmodels && strcmp(c->world.models[m].name, it->string) != 0)
            m++;
        if (m == c->world.nmodels)
            return sim_err_set(SIM_EINVAL, "%s: no model named \"%s\" in the config's models",
                               mp, it->string);
        if (!cJSON_IsNumber(it) || it->valuedouble < 0) {
            char kp[SIM_JPATH_MAX + 64];
            snprintf(kp, sizeof kp, "%s.%s", mp, it->string);
            return sim_json_expected(kp, "a factor >= 0", it);
        }
        seg->model_scale[m] = it->valuedouble;
    }
    return 0;
}

/* A per-model workload key (`section`.<model name>): the model's index into *m and the key's
 * JSON path into path; an error naming the path when no model has that name. */
static int model_key(const struct sim_config *c, const char *section, const cJSON *it,
                     char *path, size_t size, int *m)
{
    snprintf(path, size, "%s.%s", section, it->string);
    for (*m = 0; *m < c->world.nmodels; (*m)++)
        if (strcmp(c->world.models[*m].name, it->string) == 0)
            return 0;
    return sim_err_set(SIM_EINVAL, "%s: no model named \"%s\" in the config's models", path,
                       it->string);
}

/* workload.sizes {"model name": {"mean": m, "cv": c, "batch": "mean"|"max"}}: that model's
 * requests carry a lognormal size factor that multiplies their batch's standalone time (the
 * batch's mean size, or its largest: padded). Synthetic arrivals only: a trace's sizes are
 * its own (tokens). */
static int parse_sizes(struct sim_config *c, const cJSON *o, bool trace)
{
    static const char *const keys[] = {"mean", "cv", "batch", NULL};
    static const char *const HOW[] = {"mean", "max", NULL};
    if (!o)
        return 0;
    if (trace)
        return sim_err_set(SIM_EINVAL, "workload.sizes: the trace's requests carry the trace's "
                           "sizes (workload.trace.size); give one or the other");
    if (c->app)
        return sim_err_set(SIM_EINVAL, "workload.sizes: with an application, requests are the "
                           "application's; per-model sizes do not apply");
    if (!(c->workload.sizes = calloc((size_t)c->world.nmodels, sizeof *c->workload.sizes)))
        return SIM_ENOMEM;
    const cJSON *it;
    cJSON_ArrayForEach(it, o) {
        char p[SIM_JPATH_MAX + SIM_NAME_MAX];
        int m, rc;
        if ((rc = model_key(c, "workload.sizes", it, p, sizeof p, &m)))
            return rc;
        struct wl_size *z = &c->workload.sizes[m];
        int how = 0;
        if (!cJSON_IsObject(it))
            return sim_json_expected(p, "{mean, cv, batch}", it);
        if ((rc = sim_json_keys(it, p, keys)) ||
            (rc = sim_json_num(it, p, "mean", true, SIM_J_POS, &z->mean)) ||
            (rc = sim_json_num(it, p, "cv", true, SIM_J_NONNEG, &z->cv)) ||
            (rc = sim_json_enum(it, p, "batch", false, HOW, &how)))
            return rc;
        c->world.models[m].sized = how == 0 ? SIM_SIZE_MEAN : SIM_SIZE_MAX;
    }
    return 0;
}

/* workload.rate_schedules {"model name": {"step_s": s, "rps": [r0, r1, ...]}}: that model's
 * rate is r0 for s seconds, then r1, ..., the last held to the end; its mean over the run
 * becomes its configured rate (what policies read), and the steps segments scaled by it.
 * Returns the number of models with a schedule in *n. */
static int parse_rate_schedules(struct sim_config *c, const cJSON *o, int *n)
{
    static const char *const keys[] = {"step_s", "rps", NULL};
    *n = 0;
    if (!o)
        return 0;
    if (c->app)
        return sim_err_set(SIM_EINVAL, "workload.rate_schedules: with an application, requests "
                           "are the application's; per-model schedules do not apply");
    if (!(c->workload.schedules = calloc((size_t)c->world.nmodels, sizeof *c->workload.schedules)))
        return SIM_ENOMEM;
    const cJSON *it;
    cJSON_ArrayForEach(it, o) {
        char p[SIM_JPATH_MAX + SIM_NAME_MAX];
        const cJSON *rps;
        double step = 0;
        int m, rc;
        if ((rc = model_key(c, "workload.rate_schedules", it, p, sizeof p, &m)))
            return rc;
        if (!cJSON_IsObject(it))
            return sim_json_expected(p, "{step_s, rps}", it);
        if ((rc = sim_json_keys(it, p, keys)) ||
            (rc = sim_json_num(it, p, "step_s", true, SIM_J_POS, &step)) ||
            (rc = sim_json_arr(it, p, "rps", true, &rps)))
            return rc;
        int k = cJSON_GetArraySize(rps);
        if (k == 0)
            return sim_err_set(SIM_EINVAL, "%s.rps: expected at least one rate", p);
        struct wl_schedule *sc = &c->workload.schedules[m];
        if (!(sc->seg = calloc((size_t)k, sizeof *sc->seg)))
            return SIM_ENOMEM;
        sc->n = k;
        double dur = c->world.duration_s, sum = 0;
        const cJSON *r = sim_json_first(rps);
        for (int i = 0; i < k; i++, r = r->next) {
            if (!cJSON_IsNumber(r) || r->valuedouble < 0) {
                char ip[SIM_JPATH_MAX + SIM_NAME_MAX + 16];
                snprintf(ip, sizeof ip, "%s.rps[%d]", p, i);
                return sim_json_expected(ip, "a rate >= 0 (req/s)", r);
            }
            double t0 = i * step, t1 = i == k - 1 ? fmax(dur, t0) : (i + 1) * step;
            sum += r->valuedouble * fmax(0, fmin(t1, dur) - fmin(t0, dur));
            sc->seg[i] = (struct wl_segment){i == k - 1 ? 0 : step, r->valuedouble, NULL};
        }
        double mean = dur > 0 ? sum / dur : 0;
        for (int i = 0; i < k; i++)
            sc->seg[i].scale = mean > 0 ? sc->seg[i].scale / mean : 0;
        c->world.model_rps[m] = mean;
        (*n)++;
    }
    return 0;
}

/* A window the trace's rows do not cover is an error (the answer would be for a shorter or
 * emptier window than asked); with workload.trace.partial_window a warning every answer
 * carries. A per-request trace's window may run 1 trace second past its last request. */
static int trace_coverage(struct sim_config *c, const struct wl_trace_info *in)
{
    const struct wl_trace_cfg *tc = c->workload.trace;
    double tol = tc->timestamps ? 1 : 1e-6 * fmax(1, in->window_hi - in->window_lo);
    if (in->uncovered_s <= tol)
        return 0;
    char win[96], rows[96];
    if (isfinite(in->window_hi))
        snprintf(win, sizeof win, "[%.9g, %.9g) s", in->window_lo, in->window_hi);
    else
        snprintf(win, sizeof win, "from %.9g s to the trace's end", in->window_lo);
    if (in->have_data)
        snprintf(rows, sizeof rows, "[%.9g, %.9g) s", in->data_lo, in->data_hi);
    else
        snprintf(rows, sizeof rows, "nothing (no rows)");
    if (!tc->partial_window)
        return sim_err_set(SIM_EINVAL, "workload.trace: the window %s (start_s, window_s) is "
                           "not covered by the trace, whose rows span %s (%s%s): %.9g s of the "
                           "window have no data. Choose a window inside the rows, or set "
                           "workload.trace.partial_window to true to answer for the part "
                           "covered (with a warning)", win, rows, tc->spec.files[0],
                           tc->spec.nfiles > 1 ? " and the other files" : "",
                           in->uncovered_s);
    snprintf(c->trace_warning, sizeof c->trace_warning, "warning: workload.trace: the trace "
             "covers only part of the window %s: its rows span %s; %.9g trace seconds have no "
             "data (partial_window)", win, rows, in->uncovered_s);
    return 0;
}

/* workload.clients: closed-loop clients instead of an arrival rate (wl_clients.h). */
static int parse_clients(struct sim_config *c, const cJSON *w)
{
    static const char *const keys[] = {"model", "step_s", "counts", "think_s", "after", NULL};
    static const char *const AFTER[] = {"hold", "end", NULL};
    static const char *const others[] = {"rate_rps", "arrival", "popularity", "segments",
                                         "random_segments", "trace", "rate_schedules", "sizes",
                                         NULL};
    const char *P = "workload.clients", *mname = NULL;
    const cJSON *o, *counts;
    int rc, after = 0;
    for (int i = 0; others[i]; i++)
        if (cJSON_GetObjectItemCaseSensitive(w, others[i]))
            return sim_err_set(SIM_EINVAL, "workload.%s: with workload.clients the clients make "
                               "the requests; give no rate, arrival process or trace", others[i]);
    if (c->app)
        return sim_err_set(SIM_EINVAL, "workload.clients: not with an application");
    struct wl_clients_cfg *cl = calloc(1, sizeof *cl);
    if (!cl)
        return SIM_ENOMEM;
    c->workload.clients = cl;           /* freed with the config from here on */
    cl->step_s = 60;
    cl->think_s = 1;
    if ((rc = sim_json_obj(w, "workload", "clients", true, &o)) ||
        (rc = sim_json_keys(o, P, keys)) || (rc = sim_json_str(o, P, "model", false, &mname)) ||
        (rc = sim_json_num(o, P, "step_s", false, SIM_J_POS, &cl->step_s)) ||
        (rc = sim_json_num(o, P, "think_s", false, SIM_J_POS, &cl->think_s)) ||
        (rc = sim_json_arr(o, P, "counts", true, &counts)) ||
        (rc = sim_json_enum(o, P, "after", false, AFTER, &after)))
        return rc;
    cl->hold = after == 0;
    if (mname) {
        cl->model = -1;
        for (int m = 0; m < c->world.nmodels && cl->model < 0; m++)
            if (!strcmp(c->world.models[m].name, mname))
                cl->model = m;
        if (cl->model < 0)
            return sim_err_set(SIM_EINVAL, "%s.model: no model \"%s\" in models", P, mname);
    } else if (c->world.nmodels != 1) {
        return sim_err_set(SIM_EINVAL, "%s.model: missing (the config has %d models: name the "
                           "one the clients use)", P, c->world.nmodels);
    }
    int n = cJSON_GetArraySize(counts);
    if (n < 1 || n > 100000)
        return sim_err_set(SIM_EINVAL, "%s.counts: expected 1 to 100000 counts, got %d", P, n);
    if (!(cl->counts = calloc((size_t)n, sizeof *cl->counts)))
        return SIM_ENOMEM;
    cl->nsteps = n;
    int most = 0;
    const cJSON *v = sim_json_first(counts);
    for (int i = 0; i < n; i++, v = v->next) {
        char q[SIM_JPATH_MAX];
        sim_jpath_idx(q, sizeof q, "workload.clients.counts", i);
        if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 1e6 ||
            v->valuedouble != floor(v->valuedouble))
            return sim_json_expected(q, "a whole number of clients in [0, 1000000]", v);
        cl->counts[i] = (int)v->valuedouble;
        most = cl->counts[i] > most ? cl->counts[i] : most;
    }
    if (most == 0)
        return sim_err_set(SIM_EINVAL, "%s.counts: every step has 0 clients", P);
    if (cl->think_s > 1e6 || cl->step_s > 1e8)
        return sim_err_set(SIM_EINVAL, "%s: think_s at most 1e6 s, step_s at most 1e8 s", P);
    c->world.rate_rps = wl_clients_rate(cl);   /* what policies read: an upper bound */
    c->world.model_rps[cl->model] = c->world.rate_rps;
    c->workload.arrival = WL_ARR_POISSON;
    return 0;
}

static int parse_workload(struct sim_config *c, const cJSON *root)
{
    static const char *const keys[] = {"rate_rps", "arrival", "popularity", "segments",
                                       "random_segments", "trace", "rate_schedules", "sizes",
                                       "clients", NULL};
    static const char *const akeys[] = {"kind", "shape", NULL};
    static const char *const pkeys[] = {"kind", "s", NULL};
    static const char *const skeys[] = {"duration_s", "scale", "models", NULL};
    const cJSON *w, *a, *p, *segs, *sched, *sizes;
    int rc, kind = 0, nsched = 0;
    const cJSON *tr = NULL;
    if (!(c->world.model_rps = calloc((size_t)c->world.nmodels, sizeof *c->world.model_rps)))
        return SIM_ENOMEM;
    if ((rc = sim_json_obj(root, "", "workload", true, &w)) ||
        (rc = sim_json_keys(w, "workload", keys)))
        return rc;
    if (cJSON_GetObjectItemCaseSensitive(w, "clients"))
        return parse_clients(c, w);
    if ((rc = sim_json_obj(w, "workload", "trace", false, &tr)) ||
        (rc = sim_json_obj(w, "workload", "rate_schedules", false, &sched)) ||
        (rc = parse_rate_schedules(c, sched, &nsched)) ||
        (rc = sim_json_obj(w, "workload", "sizes", false, &sizes)) ||
        (rc = parse_sizes(c, sizes, tr && cJSON_GetObjectItemCaseSensitive(tr, "size"))))
        return rc;
    bool all_sched = nsched == c->world.nmodels;
    if (sched && (tr || cJSON_GetObjectItem(w, "segments") || cJSON_GetObjectItem(w, "random_segments")))
        return sim_err_set(SIM_EINVAL, "workload.rate_schedules: give the models' rates either by "
                           "schedules or by %s, not both", tr ? "a trace" : "segments");
    if (all_sched && cJSON_GetObjectItem(w, "rate_rps"))
        return sim_err_set(SIM_EINVAL, "workload.rate_rps: every model has a rate schedule, so "
                           "there is no rate left to split; remove rate_rps");
    c->world.load_key = "workload.rate_rps";        /* a trace sets its own below */
    if ((rc = sim_json_num(w, "workload", "rate_rps", !tr && !all_sched, SIM_J_POS, &c->world.rate_rps)) ||
        (rc = sim_json_obj(w, "workload", "arrival", false, &a)) ||
        (rc = sim_json_obj(w, "workload", "popularity", false, &p)) ||
        (rc = sim_json_arr(w, "workload", "segments", false, &segs)))
        return rc;
    if (c->world.rate_rps > 1e9)         /* (the engine also stops a run that overflows) */
        return sim_err_set(SIM_EINVAL, "workload.rate_rps: expected at most 1e9 requests/s, got "
                           "%g", c->world.rate_rps);
    if ((rc = parse_random_segments(c, w, segs)))
        return rc;
    if (tr && (cJSON_GetObjectItem(w, "rate_rps") || a || segs || c->workload.nsegments))
        return sim_err_set(SIM_EINVAL, "workload: rate_rps, arrival and segments describe a "
                           "synthetic workload; with workload.trace the trace gives the rates "
                           "(use workload.trace.rate_scale, process, cv)");
    c->workload.arrival = WL_ARR_POISSON;
    if (a) {
        if ((rc = sim_json_keys(a, "workload.arrival", akeys)) ||
            (rc = sim_json_enum(a, "workload.arrival", "kind", true, ARRIVALS, &kind)))
            return rc;
        c->workload.arrival = (enum wl_arrival)kind;
        if (c->workload.arrival == WL_ARR_GAMMA) {
            if ((rc = sim_json_num(a, "workload.arrival", "shape", true, SIM_J_POS, &c->workload.gamma_shape)))
                return rc;
            if (c->workload.gamma_shape < 0.01)    /* the gaps' cv, 1/sqrt(shape), at most 10 */
                return sim_err_set(SIM_EINVAL, "workload.arrival.shape: expected at least 0.01 "
                                   "(gaps with a coefficient of variation of at most 10), got %.15g",
                                   c->workload.gamma_shape);
        } else if (cJSON_GetObjectItemCaseSensitive(a, "shape")) {
            return sim_err_set(SIM_EINVAL, "workload.arrival.shape: only for kind \"gamma\"");
        }
    }
    c->workload.popularity = WL_POP_UNIFORM;
    if (p) {
        if ((rc = sim_json_keys(p, "workload.popularity", pkeys)) ||
            (rc = sim_json_enum(p, "workload.popularity", "kind", true, POPULARITY, &kind)))
            return rc;
        c->workload.popularity = (enum wl_popularity)kind;
        if (c->workload.popularity == WL_POP_ZIPF) {
            if ((rc = sim_json_num(p, "workload.popularity", "s", true, SIM_J_NONNEG, &c->workload.zipf_s)))
                return rc;
        } else if (cJSON_GetObjectItemCaseSensitive(p, "s")) {
            return sim_err_set(SIM_EINVAL, "workload.popularity.s: only for kind \"zipf\"");
        }
    }
    if (segs) {
        int n = cJSON_GetArraySize(segs);
        c->workload.segments = calloc((size_t)(n ? n : 1), sizeof *c->workload.segments);
        if (!c->workload.segments)
            return SIM_ENOMEM;
        const cJSON *s = sim_json_first(segs);
        for (int i = 0; i < n; i++, s = s->next) {
            char sp[SIM_JPATH_MAX];
            sim_jpath_idx(sp, sizeof sp, "workload.segments", i);
            if (!cJSON_IsObject(s))
                return sim_json_expected(sp, "{duration_s, scale, models}", s);
            bool last = (i == n - 1);
            const cJSON *ms;
            c->workload.nsegments = i + 1;      /* freed with the config from here on */
            if ((rc = sim_json_keys(s, sp, skeys)) ||
                (rc = sim_json_num(s, sp, "duration_s", !last, SIM_J_POS, &c->workload.segments[i].duration_s)) ||
                (rc = sim_json_num(s, sp, "scale", true, SIM_J_NONNEG, &c->workload.segments[i].scale)) ||
                (rc = sim_json_obj(s, sp, "models", false, &ms)) ||
                (ms && (rc = parse_segment_models(c, ms, sp, &c->workload.segments[i]))))
                return rc;
        }
        c->workload.nsegments = n;
    }
    /* popularity shares */
    for (int m = 0; m < c->world.nmodels; m++) {
        bool has = c->world.models[m].share >= 0;
        if (c->workload.popularity == WL_POP_EXPLICIT && !has)
            return sim_err_set(SIM_EINVAL, "models: model \"%s\": missing share (expected a "
                               "non-negative number with workload.popularity.kind \"explicit\")",
                               c->world.models[m].name);
        if (c->workload.popularity != WL_POP_EXPLICIT && has)
            return sim_err_set(SIM_EINVAL, "models: model \"%s\": share is only used with "
                               "workload.popularity.kind \"explicit\"", c->world.models[m].name);
    }
    if (c->app && p)
        return sim_err_set(SIM_EINVAL, "workload.popularity: with an application, requests "
                           "are the application's (its paths' weights split them)");
    if (!tr && nsched) {                /* rate_rps splits over the models without schedules */
        double *share = calloc((size_t)c->world.nmodels, sizeof *share), sum = 0, total = 0;
        if (!share)
            return SIM_ENOMEM;
        wl_popularity_shares(&c->workload, &c->world, share);
        for (int m = 0; m < c->world.nmodels; m++)
            sum += c->workload.schedules[m].n ? 0 : share[m];
        for (int m = 0; m < c->world.nmodels; m++) {
            if (!c->workload.schedules[m].n)
                c->world.model_rps[m] = sum > 0 ? share[m] / sum * c->world.rate_rps : 0;
            total += c->world.model_rps[m];
        }
        free(share);
        c->world.rate_rps = total;      /* the mean total, as without schedules */
    } else if (!tr) {
        wl_popularity_shares(&c->workload, &c->world, c->world.model_rps);
        for (int m = 0; m < c->world.nmodels; m++)
            c->world.model_rps[m] = c->app ? sim_app_model_rate(c->app, m, c->world.rate_rps)
                                     : c->world.model_rps[m] * c->world.rate_rps;
    } else {
        struct wl_trace_info info;
        bool dur_given = cJSON_GetObjectItem(root, "duration_s") != NULL;
        c->world.load_key = "workload.trace.rate_scale";
        if ((rc = sim_config_parse_trace(c, tr, &c->workload.trace)) ||
            (rc = wl_trace_scan(&c->workload, &c->world, &info)))
            return rc;
        c->trace_total = info.total;
        c->trace_peak_rps = info.peak_rps;
        c->trace_gaps = info.ngaps;
        c->trace_gap_s = info.gap_s;
        c->world.rate_rps = info.mean_rps;
        if (!dur_given)
            c->world.duration_s = info.span_s;
        for (int m = 0; m < c->world.nmodels; m++)   /* multi-stream traces: by the mapping */
            c->world.model_rps[m] = c->app ? sim_app_model_rate(c->app, m, c->world.rate_rps)
                              : info.span_s > 0 ? info.model_total[m] / info.span_s : 0;
        wl_trace_info_free(&info);
        if ((rc = trace_coverage(c, &info)))
            return rc;
        if (info.total <= 0)
            return sim_err_set(SIM_EINVAL, "workload.trace: no requests in the window (check "
                               "start_s, window_s and the files)");
    }
    return 0;
}

static int parse_network(struct sim_config *c, const cJSON *root)
{
    static const char *const keys[] = {"ctrl_us", "data_us_per_request", "resp_us", "jitter", NULL};
    static const char *const jkeys[] = {"kind", "mean_us", "sigma", NULL};
    const cJSON *n, *j;
    int rc, kind = 0;
    c->world.ctrl_us = 20;
    c->world.data_us_per_request = 10;
    c->world.resp_us = 20;
    if ((rc = sim_json_obj(root, "", "network", false, &n)))
        return rc;
    if (!n)
        return 0;
    if ((rc = sim_json_keys(n, "network", keys)) ||
        (rc = sim_json_num(n, "network", "ctrl_us", false, SIM_J_NONNEG, &c->world.ctrl_us)) ||
        (rc = sim_json_num(n, "network", "data_us_per_request", false, SIM_J_NONNEG, &c->world.data_us_per_request)) ||
        (rc = sim_json_num(n, "network", "resp_us", false, SIM_J_NONNEG, &c->world.resp_us)) ||
        (rc = sim_json_obj(n, "network", "jitter", false, &j)))
        return rc;
    if (j) {
        if ((rc = sim_json_keys(j, "network.jitter", jkeys)) ||
            (rc = sim_json_enum(j, "network.jitter", "kind", true, JITTERS, &kind)))
            return rc;
        c->world.jitter = (enum sim_jitter)kind;
        if (c->world.jitter != SIM_JIT_NONE &&
            (rc = sim_json_num(j, "network.jitter", "mean_us", true, SIM_J_POS, &c->world.jitter_mean_us)))
            return rc;
        c->world.jitter_sigma = 1.0;
        if (c->world.jitter == SIM_JIT_LOGNORMAL &&
            (rc = sim_json_num(j, "network.jitter", "sigma", false, SIM_J_POS, &c->world.jitter_sigma)))
            return rc;
    }
    return 0;
}

/* policy: {name, preset, params}. A preset's params are merged into the config's own tree
 * (keys given in params win), so the stored config_json holds what the run used; without a
 * preset the policy's default one (its built-in defaults) is named and merged the same way. */
static int parse_policy(struct sim_config *c, cJSON *root)
{
    static const char *const keys[] = {"name", "preset", "params", "plan_quantile", NULL};
    const cJSON *p;
    const char *name = "symphony", *preset = NULL;
    int rc;
    if ((rc = sim_json_obj(root, "", "policy", false, &p)))
        return rc;
    if (p && ((rc = sim_json_keys(p, "policy", keys)) ||
              (rc = sim_json_str(p, "policy", "name", false, &name)) ||
              (rc = sim_json_str(p, "policy", "preset", false, &preset)) ||
              (rc = sim_json_obj(p, "policy", "params", false, &c->world.policy_params)) ||
              (rc = sim_json_num(p, "policy", "plan_quantile", false, SIM_J_UNIT,
                                 &c->world.plan_quantile))))
        return rc;
    double q = c->world.plan_quantile;
    if (q >= 1)
        return sim_err_set(SIM_EINVAL, "policy.plan_quantile: expected a quantile in (0, 1) "
                           "(0 or absent: plan with the mean), got %.15g", q);
    if (!(c->world.policy = policy_find(name))) {
        char list[512];
        policy_names(list, sizeof list);
        return sim_err_set(SIM_EINVAL, "policy.name: expected one of %s, got \"%s\"", list, name);
    }
    cJSON *pol = cJSON_GetObjectItemCaseSensitive(root, "policy");
    const struct policy_preset *dflt = preset ? NULL : policy_preset_default(name);
    if (dflt) {                         /* recorded as if given: what ran is in config_json */
        if (!pol && !(pol = cJSON_AddObjectToObject(root, "policy")))
            return SIM_ENOMEM;
        if (!cJSON_GetObjectItemCaseSensitive(pol, "name") &&
            !cJSON_AddStringToObject(pol, "name", name))
            return SIM_ENOMEM;
        if (!cJSON_AddStringToObject(pol, "preset", dflt->name))
            return SIM_ENOMEM;
        preset = dflt->name;
    }
    if (preset) {
        const struct policy_preset *ps = policy_preset_find(name, preset);
        if (!ps) {
            char list[512];
            policy_preset_names(name, list, sizeof list);
            return sim_err_set(SIM_EINVAL, "policy.preset: expected one of the presets of "
                               "policy \"%s\" (%s), got \"%s\"", name,
                               list[0] ? list : "it has none", preset);
        }
        cJSON *params = cJSON_GetObjectItemCaseSensitive(pol, "params");
        if (!params && !(params = cJSON_AddObjectToObject(pol, "params")))
            return SIM_ENOMEM;
        if ((rc = policy_preset_apply(ps, params)))
            return rc;
        c->world.policy_params = params;
    }
    return policy_check_params(c->world.policy, c->world.policy_params);
}

static int parse_rest(struct sim_config *c, const cJSON *root)
{
    static const char *const mkeys[] = {"percentile", "sample_period_s", NULL};
    static const char *const skeys[] = {"start_scale", "tolerance", "max_probes", "rule", NULL};
    static const char *const rules[] = {"worst", "aggregate", NULL};
    const cJSON *m, *s;
    long fe = 1, probes = 24;
    int rc, split = 0, rule = 0;
    c->world.percentile = 99;
    c->world.sample_period_s = 1;
    c->search_start_scale = 1;
    c->search_tol = 0.02;
    if ((rc = sim_json_int(root, "", "frontends", false, 1, 4096, &fe)) ||
        (rc = sim_json_enum(root, "", "frontend_split", false, SPLITS, &split)) ||
        (rc = sim_json_obj(root, "", "metrics", false, &m)) ||
        (rc = sim_json_obj(root, "", "search", false, &s)))
        return rc;
    c->world.frontends = (int)fe;
    c->world.frontend_split = (enum sim_split)split;
    if (m && ((rc = sim_json_keys(m, "metrics", mkeys)) ||
              (rc = sim_json_num(m, "metrics", "percentile", false, SIM_J_POS, &c->world.percentile)) ||
              (rc = sim_json_num(m, "metrics", "sample_period_s", false, SIM_J_NONNEG, &c->world.sample_period_s))))
        return rc;
    if (c->world.percentile >= 100)
        return sim_err_set(SIM_EINVAL, "metrics.percentile: expected a number in (0, 100), got %.15g",
                           c->world.percentile);
    if (s && ((rc = sim_json_keys(s, "search", skeys)) ||
              (rc = sim_json_num(s, "search", "start_scale", false, SIM_J_POS, &c->search_start_scale)) ||
              (rc = sim_json_num(s, "search", "tolerance", false, SIM_J_POS, &c->search_tol)) ||
              (rc = sim_json_int(s, "search", "max_probes", false, 2, 200, &probes)) ||
              (rc = sim_json_enum(s, "search", "rule", false, rules, &rule))))
        return rc;
    c->search_max_probes = (int)probes;
    c->search_rule = (enum sim_search_rule)rule;
    return 0;
}

/* `controller` (sim_world.h, struct sim_ctrl_cfg): the central controller's own time. */
static int parse_controller(struct sim_config *c, const cJSON *root)
{
    static const char *const keys[] = {"threads", "us_per_request", "us_per_candidate",
                                       "us_per_batch", NULL};
    static const char *const costs[] = {"us_per_request", "us_per_candidate", "us_per_batch"};
    const cJSON *o;
    long threads = 1;
    int rc;
    if ((rc = sim_json_obj(root, "", "controller", false, &o)) || !o)
        return rc;
    double *v[] = {&c->world.ctrl.us_per_request, &c->world.ctrl.us_per_candidate,
                   &c->world.ctrl.us_per_batch};
    if ((rc = sim_json_keys(o, "controller", keys)) ||
        (rc = sim_json_int(o, "controller", "threads", false, 1, 1024, &threads)))
        return rc;
    for (int i = 0; i < 3; i++) {
        if ((rc = sim_json_num(o, "controller", costs[i], false, SIM_J_NONNEG, v[i])))
            return rc;
        if (*v[i] > 1e6)
            return sim_err_set(SIM_EINVAL, "controller.%s: expected at most 1e6 us (1 s), got %.15g",
                               costs[i], *v[i]);
    }
    c->world.ctrl.threads = (int)threads;
    return 0;
}

/* `autoscale` (policies/autoscale.c): which autoscaler, and its parameters. */
static int parse_autoscale(struct sim_config *c, const cJSON *root)
{
    static const char *const keys[] = {"kind", "min_gpus", "bad_rate_threshold", "keep_idle",
                                       "target_util", "tolerance", "cooldown_s", "target_rps",
                                       "sync_s", "window_s", "stabilization_s", NULL};
    static const char *const KINDS[] = {"none", "symphony", "target_util", "hpa", NULL};
    const char *P = "autoscale";
    struct policy_autoscale *a = &c->autoscale;
    const cJSON *o;
    int kind = 0, rc;
    long min_gpus = 1;
    memset(a, 0, sizeof *a);
    a->bad_rate_threshold = 0.01;
    a->keep_idle = 0.1;
    a->target_util = 0.7;
    a->tolerance = 0.1;
    a->cooldown_s = 30;
    a->target_rps = 20;                 /* hpa: DynamoML's (ours), then Kubernetes' defaults */
    a->sync_s = 15;
    a->window_s = 30;
    a->stabilization_s = 300;
    c->world.autoscaler = NULL;
    c->world.autoscale_params = a;
    if ((rc = sim_json_obj(root, "", "autoscale", false, &o)) || !o)
        return rc;
    if ((rc = sim_json_keys(o, P, keys)) ||
        (rc = sim_json_enum(o, P, "kind", true, KINDS, &kind)) ||
        (rc = sim_json_int(o, P, "min_gpus", false, 1, 1 << 20, &min_gpus)) ||
        (rc = sim_json_num(o, P, "bad_rate_threshold", false, SIM_J_UNIT, &a->bad_rate_threshold)) ||
        (rc = sim_json_num(o, P, "keep_idle", false, SIM_J_UNIT, &a->keep_idle)) ||
        (rc = sim_json_num(o, P, "target_util", false, SIM_J_UNIT, &a->target_util)) ||
        (rc = sim_json_num(o, P, "tolerance", false, SIM_J_UNIT, &a->tolerance)) ||
        (rc = sim_json_num(o, P, "cooldown_s", false, SIM_J_NONNEG, &a->cooldown_s)) ||
        (rc = sim_json_num(o, P, "target_rps", false, SIM_J_POS, &a->target_rps)) ||
        (rc = sim_json_num(o, P, "sync_s", false, SIM_J_POS, &a->sync_s)) ||
        (rc = sim_json_num(o, P, "window_s", false, SIM_J_POS, &a->window_s)) ||
        (rc = sim_json_num(o, P, "stabilization_s", false, SIM_J_NONNEG, &a->stabilization_s)))
        return rc;
    a->min_gpus = (int)min_gpus;
    if (kind == 0)
        return 0;
    c->world.autoscaler = autoscaler_find(KINDS[kind]);
    if (a->target_util <= 0)
        return sim_err_set(SIM_EINVAL, "autoscale.target_util: expected a number in (0, 1], "
                           "got 0");
    if (!c->world.policy->dynamic_execs)
        return sim_err_set(SIM_EINVAL, "autoscale: policy \"%s\" does not support executors "
                           "added or removed during a run (policies that do: see servesim "
                           "policies)", c->world.policy->name);
    if (c->world.sample_period_s <= 0)
        return sim_err_set(SIM_EINVAL, "autoscale: needs metrics.sample_period_s > 0 (its "
                           "control period)");
    if (c->world.max_gpus <= c->world.gpus)
        return sim_err_set(SIM_EINVAL, "cluster.max_gpus: expected more than cluster.gpus (%d) "
                           "for the autoscaler to add executors, got %d", c->world.gpus,
                           c->world.max_gpus);
    if (a->min_gpus > c->world.max_gpus)
        return sim_err_set(SIM_EINVAL, "autoscale.min_gpus: expected at most cluster.max_gpus "
                           "(%d), got %d", c->world.max_gpus, a->min_gpus);
    return 0;
}

/* Whether the workload changes over time (a trace, rate segments or schedules, closed-loop
 * clients): its timeline is absolute, so a longer warm-up would move the measured window
 * over other phases of it; the warm-up is then kept, with the warning. */
static bool time_varying(const struct sim_config *c)
{
    const struct wl_workload *wl = &c->workload;
    return wl->trace || wl->nsegments > 0 || wl->schedules || wl->clients;
}

/* Steady state by default: a warm-up shorter than the time the policy declares it needs to
 * converge (policy_ops.converge_s) is extended to it, and the duration by as much, so the
 * measured window keeps its length; the config's value is kept for the report
 * (keep_warmup: true, or --keep-warmup, measures the transient instead). A workload that
 * changes over time keeps its warm-up (time_varying). */
/* The time the world's policy declares it needs to converge (0: none). */
static double converge_need_s(const struct sim_world *w)
{
    return w->policy->converge_s ? w->policy->converge_s(w->policy_params) : 0;
}

static int extend_warmup(struct sim_config *c)
{
    struct sim_world *w = &c->world;
    double need = converge_need_s(w);
    if (!(w->warmup_s < need) || time_varying(c))
        return 0;
    double dur = w->duration_s + (need - w->warmup_s);
    if (dur > 1e7)
        return sim_err_set(SIM_EINVAL, "duration_s: extended by the warm-up policy %s needs "
                           "(%g s) it would be %g s, above the 1e7 s limit (keep_warmup: true "
                           "keeps the config's warm-up)", w->policy->name, need, dur);
    w->warmup_extended = true;
    w->warmup_config_s = w->warmup_s;
    w->warmup_s = need;
    w->duration_s = dur;
    return 0;
}

static int build(struct sim_config *c)
{
    static const char *const keys[] = {"name", "description", "seed", "duration_s", "warmup_s",
                                       "drain_s", "keep_warmup", "cluster", "models", "workload", "frontends",
                                       "frontend_split",
                                       "network", "policy", "metrics", "search", "controller",
                                       "autoscale", "application", "jobs", "notebooks",
                                       NULL};
    const cJSON *root = c->json;
    const char *name = "unnamed";
    long seed = 1;
    bool keep_warmup = false;
    int rc;
    if (!cJSON_IsObject(root))
        return sim_err_set(SIM_EINVAL, "expected a JSON object at the top level");
    c->world.duration_s = 60;
    c->world.warmup_s = 0;
    c->world.drain_s = 10;
    /* a run's own limit, stricter than every duration's (sim_json.c): said as itself */
    const cJSON *dj = cJSON_GetObjectItemCaseSensitive(root, "duration_s");
    if (cJSON_IsNumber(dj) && dj->valuedouble > SIM_CONFIG_MAX_DURATION_S)
        return sim_err_set(SIM_EINVAL, "duration_s: expected at most %g s (about 115 days), got %.15g",
                           SIM_CONFIG_MAX_DURATION_S, dj->valuedouble);
    if ((rc = sim_json_keys(root, "", keys)) || (rc = sim_json_str(root, "", "name", false, &name)) ||
        (rc = sim_json_int(root, "", "seed", false, 0, (1L << 53), &seed)) ||
        (rc = sim_json_num(root, "", "duration_s", false, SIM_J_POS, &c->world.duration_s)) ||
        (rc = sim_json_num(root, "", "warmup_s", false, SIM_J_NONNEG, &c->world.warmup_s)) ||
        (rc = sim_json_num(root, "", "drain_s", false, SIM_J_NONNEG, &c->world.drain_s)) ||
        (rc = sim_json_bool(root, "", "keep_warmup", false, &keep_warmup)))
        return rc;
    if (name && strlen(name) >= sizeof c->world.name)  /* a name is a key of results: never cut */
        return sim_err_set(SIM_EINVAL, "name: expected at most %zu characters, got %zu",
                           sizeof c->world.name - 1, strlen(name));
    for (const char *ch = name; ch && *ch; ch++)
        if ((unsigned char)*ch < 0x20 || *ch == 0x7f)
            return sim_err_set(SIM_EINVAL, "name: has byte 0x%02x at position %d: expected no "
                               "control characters (a tab or newline breaks export and compare)",
                               (unsigned)(unsigned char)*ch, (int)(ch - name));
    snprintf(c->world.name, sizeof c->world.name, "%s", name);
    c->world.seed = (uint64_t)seed;
    if ((rc = parse_cluster(c, root)) || (rc = parse_models(c, root)) ||
        (rc = sim_config_parse_app(c, root)) || (rc = parse_workload(c, root)) ||
        (rc = wl_jobs_parse(root, &c->world)) || (rc = wl_notebooks_parse(root, &c->world)))
        return rc;
    if (c->world.end_when_done && c->workload.clients)    /* not before the schedule is over */
        c->world.end_not_before_s = c->workload.clients->step_s * c->workload.clients->nsteps;
    if (c->world.warmup_s >= c->world.duration_s)
        return sim_err_set(SIM_EINVAL, "warmup_s: expected less than duration_s (%g), got %.15g",
                           c->world.duration_s, c->world.warmup_s);
    if ((rc = parse_network(c, root)) || (rc = parse_policy(c, c->json)))
        return rc;
    if (!keep_warmup && (rc = extend_warmup(c)))
        return rc;
    if (c->world.gpus < 1 && !c->world.policy->needs_no_gpus)
        return sim_err_set(SIM_EINVAL, "cluster.nodes: policy \"%s\" needs at least one GPU over "
                           "all nodes, got 0", c->world.policy->name);
    if ((c->world.lanes > 1 || c->world.intf.model != SIM_INTF_NONE) &&
        !c->world.policy->shared_devices)
        return sim_err_set(SIM_EINVAL, "cluster.%s: policy \"%s\" plans with one batch at a "
                           "time at the profile's speed; lanes > 1 and interference need a "
                           "policy that fills lanes (fifo)",
                           c->world.lanes > 1 ? "lanes" : "interference", c->world.policy->name);
    if ((rc = check_memory(c)) || (rc = parse_rest(c, root)) ||
        (rc = parse_autoscale(c, root)) || (rc = parse_controller(c, root)) ||
        (rc = check_work(c)))
        return rc;
    return 0;
}

static int finish(struct sim_config *c, const char *label)
{
    int rc = build(c);
    if (!rc) {
        /* policy params are checked by the policy's own init, on an engine built here, so
         * their errors surface here (with the file name), before any database is touched;
         * the engine is kept for the first run (sim_config_engine) */
        struct sim *s = NULL;
        struct wl_replay *rp = NULL;
        rc = build_engine(c, 1.0, NULL, &s, &rp);
        if (!rc && !(c->spare = malloc(sizeof *c->spare)))
            rc = SIM_ENOMEM;
        if (rc)
            sim_destroy(s);
        else
            *c->spare = (struct sim_config_spare){.s = s, .replay = rp, .world = c->world};
    }
    if (rc)
        sim_err_prefix(rc, label);
    return rc;
}

static struct sim_config *alloc_cfg(const char *file, const char *dir)
{
    struct sim_config *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->file = strdup(file);
    c->dir = strdup(dir);
    if (!c->file || !c->dir) {
        sim_config_destroy(c);
        return NULL;
    }
    return c;
}

/* Does the --set path pattern (its first pl characters; "[*]" stands for any index) begin
 * text? *tl: the length of text it covers. */
static bool path_matches(const char *pat, size_t pl, const char *text, size_t *tl)
{
    size_t i = 0, j = 0;
    while (i < pl) {
        if (pat[i] == '[' && i + 2 < pl && pat[i + 1] == '*' && pat[i + 2] == ']') {
            if (text[j] != '[' || !isdigit((unsigned char)text[j + 1]))
                return false;
            j++;
            while (isdigit((unsigned char)text[j]))
                j++;
            if (text[j++] != ']')
                return false;
            i += 3;
        } else if (pat[i++] != text[j++]) {
            return false;
        }
    }
    *tl = j;
    return true;
}

/* An error of the finished configuration ("FILE: PATH: ...") whose PATH a --set gave (the
 * last one wins, as in applying them) is the option's, not the file's: "--set PATH: ...". */
static void blame_set(int rc, const char *file, const char *const *sets, int nsets)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", sim_err_msg());
    size_t fl = strlen(file);
    if (strncmp(msg, file, fl) != 0 || strncmp(msg + fl, ": ", 2) != 0)
        return;
    const char *rest = msg + fl + 2;
    for (int i = nsets - 1; i >= 0; i--) {
        const char *eq = strchr(sets[i], '=');
        size_t pl = eq ? (size_t)(eq - sets[i]) : 0, tl = 0;
        if (pl && memchr(sets[i], '*', pl)) {  /* models[*].slo_ms: the element is named too */
            if (path_matches(sets[i], pl, rest, &tl) && strchr(":.[", rest[tl])) {
                sim_err_set(rc, "--set %.*s: %s (an option over %s)", (int)pl, sets[i], rest,
                            file);
                return;
            }
            continue;
        }
        if (pl == 0 || strncmp(rest, sets[i], pl) != 0 || !strchr(":.[", rest[pl]))
            continue;
        if (rest[pl] == ':')
            sim_err_set(rc, "--set %.*s%s (an option over %s)", (int)pl, sets[i], rest + pl,
                        file);
        else
            sim_err_set(rc, "--set %.*s: %s (an option over %s)", (int)pl, sets[i], rest, file);
        return;
    }
}

int sim_config_load(const char *file, const char *const *sets, int nsets, bool seed_given,
                    uint64_t seed, struct sim_config **out)
{
    return sim_config_load_n(file, sets, nsets, nsets, seed_given, seed, out);
}

int sim_config_load_n(const char *file, const char *const *sets, int nsets, int nkeep,
                      bool seed_given, uint64_t seed, struct sim_config **out)
{
    struct sim_config *c;
    int rc;
    *out = NULL;
    if (file) {
        char *tmp = strdup(file);
        if (!tmp)
            return SIM_ENOMEM;
        c = alloc_cfg(file, dirname(tmp));
        free(tmp);
    } else {
        c = alloc_cfg("(embedded quickstart)", ".");
    }
    if (!c)
        return SIM_ENOMEM;
    rc = file ? sim_json_load_file(file, &c->json)
              : sim_json_parse(sim_quickstart_json, c->file, &c->json);
    if (rc)
        goto fail;
    for (int i = 0; i < nsets; i++)
        if ((rc = i < nkeep ? sim_json_set_keeping(c->json, sets[i], sets, i)
                            : sim_json_set(c->json, sets[i]))) {
            char msg[1024];             /* the message names the option; the file is context */
            snprintf(msg, sizeof msg, "%s", sim_err_msg());
            rc = sim_err_set(SIM_EINVAL, "%s (an option over %s)", msg, c->file);
            goto fail;
        }
    if (seed_given) {
        cJSON *s = cJSON_CreateNumber((double)seed);
        if (cJSON_GetObjectItemCaseSensitive(c->json, "seed"))
            cJSON_ReplaceItemInObjectCaseSensitive(c->json, "seed", s);
        else
            cJSON_AddItemToObject(c->json, "seed", s);
    }
    if ((rc = finish(c, c->file))) {
        blame_set(rc, c->file, sets, nsets);
        goto fail;
    }
    *out = c;
    return 0;
fail:
    sim_config_destroy(c);
    return rc;
}

int sim_config_from_text(const char *text, const char *name, const char *dir,
                         struct sim_config **out)
{
    int rc;
    struct sim_config *c = alloc_cfg(name, dir);
    *out = NULL;
    if (!c)
        return SIM_ENOMEM;
    if ((rc = sim_json_parse(text, name, &c->json)) || (rc = finish(c, name))) {
        sim_config_destroy(c);
        return rc;
    }
    *out = c;
    return 0;
}

char *sim_config_canonical(const struct sim_config *cfg)
{
    return cJSON_PrintUnformatted(cfg->json);
}

/* The hash of a canonical config text (sim_config_hash). */
static void hash_text(const char *canonical, char out[17])
{
    uint64_t h = canonical ? sim_fnv1a(SIM_FNV_OFFSET, canonical, strlen(canonical)) : 0;
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

void sim_config_hash(const struct sim_config *cfg, char out[17])
{
    char *s = sim_config_canonical(cfg);
    hash_text(s, out);
    free(s);
}

int sim_config_store(struct sim_store *st, const struct sim_config *cfg, const char *kind,
                     const struct sim_result *r, const struct sim_goodput *g,
                     const struct sim_store_point *pt, int64_t *run_id)
{
    char hash[17];
    char *json = sim_config_canonical(cfg);
    if (!json)
        return SIM_ENOMEM;
    hash_text(json, hash);              /* (sim_config_hash would print the text again) */
    struct sim_store_run run = {.kind = kind, .config_json = json, .config_hash = hash,
                                .world = &cfg->world, .goodput = g, .point = pt};
    int rc = sim_store_write(st, &run, r, run_id);
    free(json);
    return rc;
}

static int build_engine(const struct sim_config *cfg, double scale, const struct policy_ops *pol,
                        struct sim **out, struct wl_replay **replay)
{
    struct sim_source *src;
    int n, rc;
    *out = NULL;
    if ((rc = wl_sources_open(&cfg->workload, &cfg->world, scale, &src, &n, replay)))
        return rc;
    rc = sim_create(&cfg->world, scale, pol, src, n, out);
    free(src);
    return rc;
}

int sim_config_engine(const struct sim_config *cfg, double scale, const struct policy_ops *pol,
                      struct sim **out, struct wl_replay **replay)
{
    struct sim_config_spare *sp = cfg->spare;
    if (sp && sp->s) {
        struct sim *s = sp->s;
        sp->s = NULL;                   /* taken or freed: the first call only */
        if (scale == 1.0 && (!pol || pol == cfg->world.policy) &&
            memcmp(&sp->world, &cfg->world, sizeof cfg->world) == 0) {
            *out = s;
            if (replay)
                *replay = sp->replay;
            return 0;
        }
        sim_destroy(s);
    }
    return build_engine(cfg, scale, pol, out, replay);
}

bool sim_config_transient(const struct sim_config *cfg, char *msg, size_t size)
{
    const struct sim_world *w = &cfg->world;
    if (w->warmup_extended) {
        snprintf(msg, size, "note: %s: warm-up extended from %g s to %g s, the time policy %s "
                 "needs to reach its steady state (docs/policies.md), and the run to %g s to "
                 "keep the measured %g s; --keep-warmup (keep_warmup: true) keeps the config's",
                 cfg->file, w->warmup_config_s, w->warmup_s, w->policy->name, w->duration_s,
                 w->duration_s - w->warmup_s);
        return true;
    }
    double need = converge_need_s(w);
    if (!(w->warmup_s < need))
        return false;
    snprintf(msg, size, "warning: %s: warmup_s %g is shorter than the %g s policy %s needs to "
             "reach its steady state (docs/policies.md), kept %s: the results include its "
             "start-up transient", cfg->file, w->warmup_s, need, w->policy->name,
             time_varying(cfg) ? "since the workload changes over time (a longer warm-up "
             "would move the measured window); set warmup_s" : "as keep_warmup asks");
    return true;
}
