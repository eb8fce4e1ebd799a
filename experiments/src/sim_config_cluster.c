/* sim_config_cluster — the config's cluster (GPUs, nodes, interference, host time) and
 * models sections, and the checks that need both (memory, work), for sim_config.c
 * (docs/config.md has the keys). */
#include "sim_config_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "sim_json.h"
#include "sim_param.h"
#include "wl_zoo.h"

/* cluster.nodes[] {name, cores, gpus, gpu_kind, cpu_kind}: worker nodes (ROMA's), instead of
 * cluster.gpus / cluster.gpu_kind. Every node's GPUs are of one kind (heterogeneous GPUs are
 * not supported by the policies yet); CPU kinds may differ. */
struct node_in {
    const char *name, *gpu_kind, *cpu_kind;
    int cores, gpus, cpu_scaling;
};
static const char *const SCALINGS[] = {"linear", "measured", NULL};
#define NI(f, type) SIM_P_AT(struct node_in, f, type)
static const struct sim_param NODE[] = {
    {"name", SIM_P_STR, NI(name, const char *), .def_doc = "`node<i>`",
     .doc = "unique; at most 63 characters"},
    {"cores", SIM_P_INT, NI(cores, int), .lo = 1, .hi = 4096, .flags = SIM_P_REQUIRED,
     .doc = "CPU cores that policies allocate to CPU executors bound to one model "
            "(`sim_exec_add_cpu`)"},
    {"gpus", SIM_P_INT, NI(gpus, int), .lo = 0, .hi = 100000, .def = 0,
     .doc = "GPUs on the node, all of one `gpu_kind`: the GPU ledger's capacity"},
    {"gpu_kind", SIM_P_STR, NI(gpu_kind, const char *), .flags = SIM_P_NODEF,
     .def_doc = "the first node's (with GPUs)", .doc = "every node's GPUs are of one kind"},
    {"cpu_kind", SIM_P_STR, NI(cpu_kind, const char *), .sdef = "cpu",
     .doc = "the profile kind of a model's latency on one core"},
    {"cpu_scaling", SIM_P_ENUM, SIM_P_AT_ENUM(struct node_in, cpu_scaling), .choices = SCALINGS,
     .doc = "`linear`: the one-core latency scaled by the cores allocated; `measured`: with "
            "`cpu_kind` \"<cpu>@1core\", interpolated in rate between the model's profiles for "
            "\"<cpu>@<n>core\" as `servesim-calibrate --threads` writes them (l(1)/u below one "
            "core, the largest n's above it)"},
    {NULL}};
#undef NI

static int parse_nodes(struct sim_config *c, const cJSON *arr, const char **kind, long *gpus)
{
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
        struct node_in in = {.gpu_kind = *kind};
        sim_jpath_idx(p, sizeof p, "cluster.nodes", i);
        if (!cJSON_IsObject(it))
            return sim_json_expected(p, "{name, cores, gpus, gpu_kind, cpu_kind}", it);
        if ((rc = sim_params_read(NODE, it, p, &in)))
            return rc;
        const char *gk = in.gpu_kind, *ck = in.cpu_kind, *name = in.name;
        long cores = in.cores, g = in.gpus;
        int scaling = in.cpu_scaling;
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

/* cluster.interference_params (struct sim_intf_cfg; the defaults are the RRL
 * specification's) */
#define IP(f) SIM_P_AT(struct sim_intf_cfg, f, double)
static const struct sim_param INTF_PARAMS[] = {
    {"kappa_gpu", SIM_P_NUM, IP(kappa_gpu), .cons = SIM_J_NONNEG, .def = 0.05,
     .doc = "GPU: the device phase's slow-down per extra batch in it"},
    {"host_ms", SIM_P_NUM, IP(host_ms), .cons = SIM_J_NONNEG, .def = 2,
     .doc = "GPU: the host phase's fixed part"},
    {"host_ms_per_request", SIM_P_NUM, IP(host_ms_per_request), .cons = SIM_J_NONNEG, .def = 1,
     .doc = "GPU: the host phase's part per request"},
    {"f", SIM_P_NUM, IP(f), .cons = SIM_J_UNIT, .def = 0.1, .doc = "CPU: the serial fraction"},
    {"overhead", SIM_P_NUM, IP(overhead), .cons = SIM_J_NONNEG, .def = 0.005,
     .doc = "CPU: per extra intra-op thread, in one-thread latencies"},
    {"pi", SIM_P_NUM, IP(pi), .cons = SIM_J_POS, .def = 1, .type_doc = ">= 1",
     .doc = "CPU: work over critical path of the layer graph"},
    {"width", SIM_P_NUM, IP(width), .cons = SIM_J_POS, .def = 1, .type_doc = ">= 1",
     .doc = "CPU: the widest join"},
    {"mu", SIM_P_NUM, IP(mu), .cons = SIM_J_NONNEG, .def = 0.2,
     .doc = "CPU: the slow-down of cores in use, at all of them"},
    {"kappa", SIM_P_NUM, IP(kappa), .cons = SIM_J_NONNEG, .def = 0.1,
     .doc = "CPU: the slow-down per unit of thread demand past the cores"},
    {"roughness", SIM_P_NUM, IP(rough_eta), .cons = SIM_J_NONNEG, .def = 0,
     .doc = "CPU: η of the optional seeded roughness of the landscape (0 = off, the spec's "
            "value when on is 0.1): each batch's time times `eps(c) = exp(η Σ_{j≤8} a_j "
            "cos(2π ω_j·c/ℓ + φ_j)/√8)` over its configuration `c = (k, p, t)` (k: "
            "`sim_dispatch_args.k`, the batches in service its dispatcher allows, else the "
            "lanes; a_j normal, ω_j random unit vectors, φ_j uniform, drawn from the roughness "
            "seed, so the landscape is the same for every run seed)"},
    {"roughness_length", SIM_P_NUM, IP(rough_len), .cons = SIM_J_POS, .def = 6,
     .doc = "CPU: ℓ, in knob steps"},
    {"roughness_seed", SIM_P_HAND, .type_doc = "integer in [0, 2147483647]", .def_doc = "1",
     .doc = "CPU: the roughness's seed"},
    {NULL}};
#undef IP
static const char *const INTF_MODELS[] = {"none", "parametric", "table", NULL};

/* cluster.interference, interference_params, interference_table (sim_world.h has the
 * models). */
struct intf_row_in {
    int n, p, t;
    double factor;
};
#define IR(f) SIM_P_AT(struct intf_row_in, f, int)
static const struct sim_param INTF_ROW[] = {
    {"n", SIM_P_INT, IR(n), .lo = 1, .hi = 1000, .flags = SIM_P_REQUIRED,
     .doc = "batches running on the executor"},
    {"p", SIM_P_INT, IR(p), .lo = 1, .hi = 1000, .def = 1, .doc = "CPU: inter-op threads"},
    {"t", SIM_P_INT, IR(t), .lo = 1, .hi = 1000, .def = 1, .doc = "CPU: intra-op threads"},
    {"factor", SIM_P_NUM, SIM_P_AT(struct intf_row_in, factor, double), .cons = SIM_J_POS,
     .flags = SIM_P_REQUIRED, .doc = "a batch's time over its standalone time"},
    {NULL}};
#undef IR

static int parse_interference(struct sim_config *c, const cJSON *o)
{
    struct sim_intf_cfg *ic = &c->world.intf;
    *ic = (struct sim_intf_cfg){0};
    long rseed = 1;
    int model = 0, rc;
    const cJSON *par, *tab;
    if ((rc = sim_json_enum(o, "cluster", "interference", false, INTF_MODELS, &model)) ||
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
    if ((rc = sim_params_read(INTF_PARAMS, par, pp, ic)) ||
        (rc = sim_json_int(par, pp, "roughness_seed", false, 0, 2147483647, &rseed)))
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
        struct intf_row_in in;
        if (!cJSON_IsObject(it))
            return sim_json_expected(path, "an object {n, p, t, factor}", it);
        if ((rc = sim_params_read(INTF_ROW, it, path, &in)))
            return rc;
        ic->rows[i++] = (struct sim_intf_row){.n = in.n, .p = in.p, .t = in.t,
                                              .factor = in.factor};
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
static const struct sim_param HOST_TIME[] = {
    {"median", SIM_P_NUM, SIM_P_AT(struct sim_world, host_us_per_batch, double),
     .cons = SIM_J_POS, .flags = SIM_P_REQUIRED, .doc = "the host time's median"},
    {"p99", SIM_P_NUM, SIM_P_AT(struct sim_world, host_us_p99, double), .cons = SIM_J_POS,
     .flags = SIM_P_REQUIRED, .type_doc = ">= median and <= 1e6", .doc = "its 99th percentile"},
    {NULL}};

static int parse_host_time(struct sim_config *c, const cJSON *o)
{
    const char *P = "cluster.host_us_per_batch";
    const cJSON *h = cJSON_GetObjectItem(o, "host_us_per_batch");
    int rc;
    if (cJSON_IsObject(h)) {
        if ((rc = sim_params_read(HOST_TIME, h, P, &c->world)))
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

/* The keys of `cluster`: the plain numbers are read by the table, the others below. */
#define CW(f, type) SIM_P_AT(struct sim_world, f, type)
const struct sim_param sim_config_cluster_keys[] = {
    {"gpus", SIM_P_HAND, .type_doc = "integer in [1, 100000]",
     .def_doc = "required unless `nodes`", .doc = "executors (GPUs), on one node without CPU cores"},
    {"gpu_kind", SIM_P_HAND, .type_doc = "string", .def_doc = "`\"1080ti\"`",
     .doc = "executor kind: the key into models' profiles"},
    {"nodes", SIM_P_SECTION, .rows = NODE, .flags = SIM_P_EACH,
     .type_doc = "array of objects (instead of `gpus` and `gpu_kind`)", .def_doc = "",
     .doc = "worker nodes, with CPU cores and GPUs (rows below). The GPU ledger holds every GPU "
            "of every node and what holds it: executors hold whole GPUs, a policy's other work "
            "claims whole or fractional GPUs; an executor added with none free is pending until "
            "one frees, not billed meanwhile (docs/architecture.md). Results: "
            "`executor_stats.node`, `class`, `cores`, `core_s`, `runs.core_s`"},
    {"gpu_memory_mb", SIM_P_NUM, CW(gpu_memory_mb, double), .cons = SIM_J_NONNEG,
     .def_doc = "0 (unlimited)", .doc = "every GPU loads every model: weights + static memory of all models plus the largest "
            "dynamic memory must fit"},
    {"executors", SIM_P_HAND, .type_doc = "integer in [0, the nodes' GPUs]",
     .def_doc = "all of them (only with `nodes`)", .doc = "GPU executors at start, on the nodes' GPUs in order"},
    {"max_gpus", SIM_P_HAND, .type_doc = "integer >= gpus (or `executors`); with `nodes` at most "
     "their GPUs", .def_doc = "= gpus", .doc = "most executors up, starting or pending at once (added at run time by autoscalers "
            "and pipeline policies); ids are never reused. With `cluster.gpus` the one node has "
            "max(gpus, max_gpus) GPUs, so an added executor always finds one"},
    {"provision_s", SIM_P_NUM, CW(provision_s, double), .cons = SIM_J_NONNEG, .def = 10,
     .doc = "delay before an added executor is up"},
    {"page_mb", SIM_P_NUM, CW(page_mb, double), .cons = SIM_J_POS, .def = 16,
     .doc = "weights-cache page; the cache is memory less the largest dynamic memory"},
    {"load_gb_s", SIM_P_NUM, CW(load_gb_s, double), .cons = SIM_J_POS, .def = 12,
     .doc = "weights transfer rate when a model has no `load_ms`"},
    {"exec_cv", SIM_P_NUM, CW(exec_cv, double), .cons = SIM_J_NONNEG, .def = 0,
     .doc = "execution (and load) time jitter: lognormal factor, mean 1, this cv (an LLM "
            "iteration's too)"},
    {"lanes", SIM_P_INT, CW(lanes, int), .lo = 1, .hi = 1024, .def = 1, .doc = "batches an executor runs at once (TF Serving's batch threads, RRL's k or m); each "
            "starts when a lane is free; needs a policy that fills lanes (`fifo`), others are "
            "refused. `sim_exec.lanes`, `nrunning`; busy time is the union (time with at least "
            "one batch on the device)"},
    {"host_us_per_batch", SIM_P_HAND, .type_doc = ">= 0 and <= 1e6; or `{\"median\": US, "
     "\"p99\": US}`", .def_doc = "0", .doc = "the host's time around each batch on a GPU executor (a launch, the synchronisation "
            "that ends the pass, the result's copy): the executor starts nothing else meanwhile, "
            "so back-to-back batches are spaced by it, and the batch's requests finish after it. "
            "What policies plan with (`sim_latency_ns`) includes it, as a server's own measured "
            "batch time would. Off by default, since profiles from `servesim-calibrate` on a GPU "
            "time the device from the launch to the pass's end and leave the host out. Measured "
            "on an H100 with `servesim-calibrate host` (`experiments/h100/README.md`, \"The "
            "host's share of a batch\"): about 7-8 us a batch for a CUDA-graph launch and a "
            "stream wait, whatever the network and batch (p99 17-48 us); with the inputs copied "
            "synchronously in the same loop, 19 us for one ResNet-50 image and 194 us for 32. "
            "`experiments/paper/resnet10_controller.sweep.json` uses 8. With "
            "`cluster.interference: parametric` it adds to that model's host phase. As "
            "`{\"median\": US, \"p99\": US}` (p99 >= median) it is drawn for each batch from a "
            "lognormal through both, on its own random stream (`cluster.host`), as a real "
            "server's launch and wait has a tail (`servesim-calibrate host` prints both per "
            "batch size: `gap_median_us`, `gap_p99_us`); policies then plan with its mean, "
            "median x exp(sigma^2 / 2), sigma = ln(p99 / median) / 2.3263 (`test_core "
            "host_time_drawn_per_batch`). Tested by hand: batches of 2 ms with 500 us of host "
            "time start 2.5 ms apart under overload (`test_core host_time_spaces_batches`)"},
    {"interference", SIM_P_HAND, .type_doc = "`none` (default), `parametric`, `table`",
     .def_doc = "", .doc = "how batches running on one executor slow each other down; a running batch keeps the "
            "work it has done and is re-timed (integer ns, never early) whenever one starts or "
            "finishes beside it. `none`: every batch at its standalone speed (lanes are "
            "independent servers). `parametric`, GPU: a host phase `host_ms + "
            "host_ms_per_request b` that overlaps across lanes and keeps the GPU idle, then a "
            "device phase shared by the n batches in it, each at speed `1 / (n (1 + kappa_gpu "
            "(n-1)))`. `parametric`, CPU executors: a batch of p inter-op and t intra-op threads "
            "(`sim_dispatch_args.p`, `.t`) runs at `1 / ([f + (1-f)/t + overhead (t-1)] a(p) "
            "sigma(D))` of its profile's speed (the profile is then the one-thread latency; the "
            "cores' `cpu_scaling` no longer applies), `a(p) = 1/pi + (1 - 1/pi)/min(p, width)`, "
            "D the running batches' thread demand `sum t/a(p)`, C the executor's cores, "
            "`sigma(D) = (1 + mu min(D,C)/C) max(1, D/C) (1 + kappa max(0, D/C - 1))`; cores "
            "busy `min(C, D)` (`sim_exec_busy_core_s`). `table`: each batch's standalone time "
            "times `factor(n, p, t)` from `interference_table`"},
    {"interference_params", SIM_P_SECTION, .rows = INTF_PARAMS,
     .type_doc = "object, with `parametric` only", .def_doc = "",
     .doc = "the constants of `parametric` interference (below; the defaults are the RRL "
            "specification's)"},
    {"interference_table", SIM_P_SECTION, .rows = INTF_ROW, .flags = SIM_P_EACH,
     .type_doc = "array of objects, with `table` only", .def_doc = "required there",
     .doc = "measured slow-down of a batch with n batches running (a GPU's rows need only n): "
            "linear in n between rows of the same (p, t), `factor(K) n / K` past the largest "
            "K, the smallest row's below it; a batch asking for threads the table has no row "
            "for fails the run with that message"},
    {NULL}};
#undef CW

int sim_config_parse_cluster(struct sim_config *c, const cJSON *root)
{
    const cJSON *o, *nodes;
    const char *kind = "1080ti";
    long gpus = 0, max_gpus = 0, execs = -1;
    int rc;
    if ((rc = sim_json_obj(root, "", "cluster", true, &o)) ||
        (rc = sim_params_read(sim_config_cluster_keys, o, "cluster", &c->world)) ||
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
        (rc = parse_host_time(c, o)) ||
        (rc = parse_interference(c, o)))
        return rc;
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
        if ((rc = wl_model_parse(it, p, c->world.gpu_kind, c->dir,
                                 &c->world.models[c->world.nmodels])))
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
