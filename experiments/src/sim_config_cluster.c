/* sim_config_cluster — the config's cluster (GPUs, nodes, interference, host time) and
 * models sections, and the checks that need both (memory, work), for sim_config.c
 * (docs/config.md has the keys). */
#include "sim_config_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "sim_json.h"
#include "wl_zoo.h"

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

int sim_config_parse_cluster(struct sim_config *c, const cJSON *root)
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

int sim_config_parse_models(struct sim_config *c, const cJSON *root)
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
int sim_config_check_memory(const struct sim_config *c)
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
int sim_config_check_work(const struct sim_config *c)
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
