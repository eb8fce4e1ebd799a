/* sim_exec — executors and their states: models' residency (preload, load, evict), an
 * executor's life (pending for a GPU, starting, up, draining, down; GPU and CPU executors,
 * cores and their speeds), and the core-seconds ledger. An executor whose speed changed has
 * its running batches re-timed through s->up.retime (set by sim_create to sim_batch.c's), so
 * calls go down only: to sim_request.c (dropping a removed executor's queue), sim_base.c and
 * the GPU ledger (sim_cluster.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_device.h"
#include "sim_err.h"
#include "sim_int.h"

/* ---------------------------------------------------------------- residency */

static void set_resident(struct sim *s, int e, int m, enum sim_residency st)
{
    struct sim_resid *rs = &s->xi[e].res[m];
    rs->state = (uint8_t)st;
    rs->version++;
    rs->changed_at = s->now;
}

static int reserve(struct sim *s, int e, int m)
{
    struct sim_exec *x = &s->execs[e];
    if (s->xi[e].res[m].state != SIM_RES_NONE || x->pages_used + s->pages[m] > x->pages_total)
        return -1;
    x->pages_used += s->pages[m];
    x->resident_mb += s->cfg->models[m].weights_mb + s->cfg->models[m].static_mb;
    return 0;
}

static void unreserve(struct sim *s, int e, int m)
{
    struct sim_exec *x = &s->execs[e];
    x->pages_used -= s->pages[m];
    x->resident_mb -= s->cfg->models[m].weights_mb + s->cfg->models[m].static_mb;
}

int sim_preload(struct sim *s, int e, int m)
{
    if (s->events != 0 && s->execs[e].state != SIM_EXEC_STARTING)
        SIM_BUG("sim_preload of model %d on executor %d after the run started", m, e);
    if (reserve(s, e, m))
        return -1;
    set_resident(s, e, m, SIM_RES_LOADED);
    s->execs[e].models_loaded++;
    return 0;
}

int sim_load(struct sim *s, int e, int m, int64_t latest)
{
    if (e < 0 || e >= s->nexecs || m < 0 || m >= s->nmodels)
        SIM_BUG("load of model %d on executor %d out of range", m, e);
    struct sim_exec *x = &s->execs[e];
    if (reserve(s, e, m))
        return -1;
    s->xi[e].res[m].state = SIM_RES_LOADING;
    int64_t start = s->now + s->ctrl_ns;
    if (x->load_free_at > start)
        start = x->load_free_at;
    bool ok = !(latest > 0 && start > latest);
    int64_t end = ok ? start + sim_exec_time(s, s->load_ns[m]) : start;
    x->load_free_at = end;
    x->load_busy_ns += end - start;
    x->loads_in_flight++;
    sim_push(s, end, EV_LOAD_DONE, (uint32_t)e, ((uint64_t)m << 1) | ok);
    return 0;
}

void sim_load_on_done(struct sim *s, int e, int m, bool ok)
{
    struct sim_exec *x = &s->execs[e];
    x->loads_in_flight--;
    if (ok) {
        set_resident(s, e, m, SIM_RES_LOADED);
        x->load_events++;
        x->models_loaded++;
    } else {
        s->xi[e].res[m].state = SIM_RES_NONE;
        unreserve(s, e, m);
        x->rejected++;
    }
    if (!s->stopping && s->pol->on_load_done)
        SIM_POLICY_CALL(s, on_load_done, e, m, ok);
}

void sim_evict(struct sim *s, int e, int m)
{
    if (e < 0 || e >= s->nexecs || m < 0 || m >= s->nmodels ||
        s->xi[e].res[m].state != SIM_RES_LOADED)
        SIM_BUG("evict of model %d from executor %d where it is not loaded", m, e);
    set_resident(s, e, m, SIM_RES_NONE);
    unreserve(s, e, m);
    s->execs[e].models_loaded--;
    s->execs[e].evictions++;
}

/* ---------------------------------------------------------------- executor life */

static int cpu_speed(const struct sim *s, int n, int m, int milli);

/* A batch's full speed on e in billionths of its profile's: a GPU's 1; a CPU executor's its
 * cores' scaling, unless threads make the speed (a shared model: the profile is one thread). */
static int64_t exec_speed(const struct sim *s, int e)
{
    const struct sim_exec *x = &s->execs[e];
    if (!x->cpu || sim_dev_shared(&s->cfg->intf))
        return SIM_SPEED_ONE;
    return cpu_speed(s, x->node, x->model, x->milli_cores) * 1000LL;
}

/* Lanes and the fluid path (CPU executors; several lanes or a shared device). */
static void exec_lanes(struct sim *s, int e)
{
    struct sim_exec *x = &s->execs[e];
    struct sim_exec_int *xi = &s->xi[e];
    x->lanes = s->cfg->lanes > 1 ? s->cfg->lanes : 1;
    xi->multi = x->lanes > 1 || sim_dev_shared(&s->cfg->intf);
    xi->fluid = x->cpu || xi->multi;
    xi->speed = exec_speed(s, e);
    if (xi->fluid && !xi->run && !(xi->run = calloc((size_t)x->lanes, sizeof *xi->run))) {
        xi->fluid = xi->multi = false;  /* no lanes to touch: the run stops after this event */
        sim_fail_nomem(s, "for an executor's lanes");
    }
}

void sim_exec_init(struct sim *s, int e, enum sim_exec_state st)
{
    struct sim_exec *x = &s->execs[e];
    x->id = e;
    x->kind = 0;                        /* cluster.gpu_kind; a CPU executor sets its own */
    x->node = 0;
    x->gpu = -1;
    x->cpu = false;
    x->model = -1;
    exec_lanes(s, e);
    x->state = st;
    sim_exec_mark(s, e);
    x->added_at = s->now;
    x->memory_mb = s->cfg->gpu_memory_mb;
    /* the weights cache: memory less room for the largest batch's activations */
    x->pages_total = x->memory_mb > 0
                         ? (int)floor((x->memory_mb - s->max_dynamic_mb) / s->cfg->page_mb)
                         : INT32_MAX / 2;
    if (!s->cold_start)
        for (int m = 0; m < s->nmodels; m++)
            if (sim_preload(s, e, m))
                SIM_BUG("model %d does not fit executor %d (config check missed it)", m, e);
}

void sim_exec_up(struct sim *s, int e)
{
    struct sim_exec *x = &s->execs[e];
    if (x->state != SIM_EXEC_STARTING)
        return;                         /* removed while starting */
    x->state = SIM_EXEC_UP;
    sim_exec_mark(s, e);
    x->up_since = s->now;
    x->last_finish = s->now;
    if (!s->stopping && s->pol->on_exec_up)
        SIM_POLICY_CALL(s, on_exec_up, e);
}

int sim_exec_active(const struct sim *s)
{
    return s->nactive;
}

/* ---- the executor indexes: free lanes (sim_exec_next_free), running batches ---- */

int sim_exec_free_reserve(struct sim *s, int n)
{
    if (sim_bits_reserve(&s->free_set, n))
        return SIM_ENOMEM;
    for (int j = 0; s->run_le && j < s->run_classes; j++)
        if (sim_bits_reserve(&s->run_le[j], n))
            return SIM_ENOMEM;
    for (int m = 0; s->run_of && m < s->nmodels; m++)
        if (sim_bits_reserve(&s->run_of[m], n))
            return SIM_ENOMEM;
    if (s->run_le && n > s->run_brief_cap) {
        struct sim_run_brief *rb = realloc(s->run_brief, (size_t)n * sizeof *rb);
        if (!rb)
            return SIM_ENOMEM;
        for (int e = s->run_brief_cap; e < n; e++)
            rb[e] = (struct sim_run_brief){-1, 0};
        s->run_brief = rb;
        s->run_brief_cap = n;
    }
    return 0;
}

/* The least class of the running index that holds a batch of b: ceil(log2 b), at most the
 * last (any size). */
static int size_class(const struct sim *s, int b)
{
    int j = 0;
    while (j < s->run_classes - 1 && (1 << j) < b)
        j++;
    return j;
}

void sim_exec_mark(struct sim *s, int e)
{
    const struct sim_exec *x = &s->execs[e];
    bool up = x->state == SIM_EXEC_UP;
    sim_bits_put(&s->free_set, e, up && x->nrunning + x->pending < x->lanes);
    if (!s->run_le)
        return;
    struct sim_exec_int *xi = &s->xi[e];
    int c = up && x->running ? 1 + size_class(s, x->running->size) : 0;
    int was = s->run_brief[e].model;
    s->run_brief[e] = c ? (struct sim_run_brief){x->running->model, x->running->size}
                        : (struct sim_run_brief){-1, 0};
    if (was != s->run_brief[e].model) {
        if (was >= 0)
            sim_bits_put(&s->run_of[was], e, false);
        if (c)
            sim_bits_put(&s->run_of[x->running->model], e, true);
    }
    if (c == xi->run_class)
        return;
    for (int j = xi->run_class ? xi->run_class - 1 : s->run_classes; j < s->run_classes; j++)
        sim_bits_put(&s->run_le[j], e, false);
    for (int j = c ? c - 1 : s->run_classes; j < s->run_classes; j++)
        sim_bits_put(&s->run_le[j], e, true);
    xi->run_class = c;
}

int sim_exec_next_free(const struct sim *s, int from)
{
    int e = sim_bits_next(&s->free_set, from);
    while (e >= 0 && !sim_mine_exec(s, e))         /* another view's: not this policy's */
        e = sim_bits_next(&s->free_set, e + 1);
    return e;
}

int sim_exec_index_running(struct sim *s)
{
    if (s->run_le)
        return 0;
    int sizes = 1, classes = 1;
    for (int m = 0; m < s->nmodels; m++)
        if (sim_model(s, m)->max_batch > sizes)
            sizes = sim_model(s, m)->max_batch;
    while (classes < 31 && (1 << (classes - 1)) < sizes)
        classes++;                      /* the last class, 2^(classes-1) >= sizes: any size */
    if (!(s->run_le = calloc((size_t)classes, sizeof *s->run_le)) ||
        !(s->run_of = calloc((size_t)(s->nmodels > 0 ? s->nmodels : 1), sizeof *s->run_of)))
        return SIM_ENOMEM;
    s->run_classes = classes;
    if (sim_exec_free_reserve(s, s->max_execs))
        return SIM_ENOMEM;              /* (sim_destroy frees what was reserved) */
    for (int e = 0; e < s->nexecs; e++)
        sim_exec_mark(s, e);
    return 0;
}

struct sim_run_brief sim_exec_running_brief(const struct sim *s, int e)
{
    if (!s->run_le || e < 0 || e >= s->nexecs)
        SIM_BUG("sim_exec_running_brief(%d) without sim_exec_index_running, or out of range", e);
    return s->run_brief[e];
}

int sim_exec_next_running_le(const struct sim *s, int b, int from)
{
    if (!s->run_le || b < 1)
        SIM_BUG("sim_exec_next_running_le(%d) without sim_exec_index_running", b);
    int e = sim_bits_next(&s->run_le[size_class(s, b)], from);
    while (e >= 0 && !sim_mine_exec(s, e))
        e = sim_bits_next(&s->run_le[size_class(s, b)], e + 1);
    return e;
}

int sim_exec_next_running_of(const struct sim *s, int m, int b, int from)
{
    if (!s->run_le || m < 0 || m >= s->nmodels || b < 1)
        SIM_BUG("sim_exec_next_running_of(%d, %d) without sim_exec_index_running, or out of "
                "range", m, b);
    const struct sim_bits *le = &s->run_le[size_class(s, b)];
    int e = sim_bits_next_and(&s->run_of[m], le, from);
    while (e >= 0 && !sim_mine_exec(s, e))
        e = sim_bits_next_and(&s->run_of[m], le, e + 1);
    return e;
}

int sim_exec_res_block(struct sim *s, int from, int to)
{
    struct sim_resid **bl = realloc(s->res_blocks, ((size_t)s->nres_blocks + 1) * sizeof *bl);
    if (!bl)
        return SIM_ENOMEM;
    s->res_blocks = bl;
    size_t nm = (size_t)(s->nmodels > 0 ? s->nmodels : 1);
    struct sim_resid *b = calloc((size_t)(to - from) * nm, sizeof *b);
    if (!b)
        return SIM_ENOMEM;
    bl[s->nres_blocks++] = b;
    for (int e = from; e < to; e++)
        s->xi[e].res = b + (size_t)(e - from) * nm;
    return 0;
}

/* Room for one more executor slot (ids are never reused, so a long autoscaled run grows);
 * SIM_ENOMEM (recorded: the run stops) with the tables as they were. */
static int exec_grow(struct sim *s)
{
    if (s->nexecs < s->max_execs)
        return 0;
    int cap = s->max_execs > 4 ? s->max_execs * 2 : 8;
    struct sim_exec *x = realloc(s->execs, (size_t)cap * sizeof *x);
    if (x)
        s->execs = x;
    struct sim_exec_int *xi = x ? realloc(s->xi, (size_t)cap * sizeof *xi) : NULL;
    if (xi)
        s->xi = xi;
    if (!xi)
        return sim_fail_nomem(s, "growing the executors");
    memset(s->execs + s->max_execs, 0, (size_t)(cap - s->max_execs) * sizeof *x);
    memset(s->xi + s->max_execs, 0, (size_t)(cap - s->max_execs) * sizeof *xi);
    if (sim_exec_res_block(s, s->max_execs, cap) || sim_exec_free_reserve(s, cap))
        return sim_fail_nomem(s, "growing the executors");
    s->max_execs = cap;
    return 0;
}

void sim_exec_bind(struct sim *s, int e, int g)
{
    struct sim_exec *x = &s->execs[e];
    if (sim_gpu_claim(s, g, SIM_HOLD_EXEC, e, 1000)) {
        if (sim_out_of_memory(s))
            return;                     /* the run stops after this event */
        SIM_BUG("executor %d cannot take GPU %d: %s", e, g, sim_err_msg());
    }
    x->gpu = g;
    x->node = s->gpus[g].pub.node;
    x->state = SIM_EXEC_STARTING;
    sim_exec_mark(s, e);
    x->added_at = s->now;               /* billed from here */
    sim_push(s, s->now + s->xi[e].start_delay, EV_EXEC_UP, (uint32_t)e, 0);
}

int sim_exec_add_on(struct sim *s, int g, int64_t delay_ns)
{
    int limit = s->cfg->max_gpus > s->cfg->gpus ? s->cfg->max_gpus : s->cfg->gpus;
    if (sim_exec_active(s) >= limit)
        return -1;
    if (g >= 0 && (g >= s->ngpus || s->gpus[g].pub.milli != 0))
        return sim_err_set(SIM_EINVAL, "GPU %d is not a free GPU of the ledger", g), -1;
    if (g < 0)
        g = sim_ledger_first_free(s);
    if (exec_grow(s))
        return -1;
    int e = s->nexecs++;
    sim_exec_init(s, e, SIM_EXEC_STARTING);
    s->nactive++;
    s->xi[e].start_delay = delay_ns > 0 ? delay_ns : 0;
    if (g >= 0) {
        sim_exec_bind(s, e, g);
        return e;
    }
    s->execs[e].state = SIM_EXEC_PENDING;   /* not serving, not billed: waits for a GPU */
    sim_exec_mark(s, e);
    s->pend_execs[s->npend++] = e;
    if (!s->stopping && s->pol->on_exec_pending)
        SIM_POLICY_CALL(s, on_exec_pending, e);
    return e;
}

int sim_exec_add_after(struct sim *s, int64_t delay_ns)
{
    return sim_exec_add_on(s, -1, delay_ns);
}

int sim_exec_add(struct sim *s)
{
    return sim_exec_add_after(s, sim_s_to_ns(s->cfg->provision_s));
}

static void core_accrue(struct sim *s, int e);

/* Millionths of one core's speed for model m on node n at `milli` thousandths of cores. */
static int cpu_speed(const struct sim *s, int n, int m, int milli)
{
    const struct sim_node_cfg *nd = &s->cfg->nodes[n];
    if (nd->cpu_scaling == SIM_CPU_LINEAR)
        return milli * 1000;
    const struct sim_model_cfg *mc = s->models[m].cfg;
    char base[SIM_NAME_MAX], kind[SIM_NAME_MAX + 16];
    snprintf(base, sizeof base, "%s", nd->cpu_kind);
    char *at = strrchr(base, '@');
    if (at)
        *at = '\0';
    double u = milli / 1000.0, l1 = 0, lo_n = 0, lo_r = 0, hi_n = 0, hi_r = 0;
    for (int n2 = 1; n2 <= 256; n2++) {  /* rates 1/l(n) of the measured thread counts */
        snprintf(kind, sizeof kind, "%s@%dcore", base, n2);
        int k = sim_model_cfg_kind(mc, kind);
        if (k < 0)
            continue;
        double r = 1 / sim_profile_ms(&mc->prof[k], 1);
        if (n2 == 1)
            l1 = 1 / r;
        if (n2 <= u)
            lo_n = n2, lo_r = r;
        if (n2 >= u && !hi_n)
            hi_n = n2, hi_r = r;
    }
    double rate;                        /* requests per ms at u cores */
    if (u < 1 || !lo_n)
        rate = u / l1;
    else if (!hi_n || hi_n == lo_n)
        rate = lo_r;
    else
        rate = lo_r + (hi_r - lo_r) * (u - lo_n) / (hi_n - lo_n);
    long sp = (long)floor(1e6 * rate * l1 + 1e-9);   /* down: never faster than measured */
    return sp < 1 ? 1 : (int)sp;
}

static int node_cores(const struct sim *s, int n)
{
    return n < s->cfg->nnodes ? s->cfg->nodes[n].cores : 0;
}

int sim_node_milli_used(const struct sim *s, int n)
{
    if (n < 0 || n >= (s->cfg->nnodes > 0 ? s->cfg->nnodes : 1))
        SIM_BUG("node %d out of range", n);
    return s->node_milli[n];
}

int sim_exec_add_cpu(struct sim *s, int node, int model, int milli_cores)
{
    if (node < 0 || node >= (s->cfg->nnodes > 0 ? s->cfg->nnodes : 1) || model < 0 ||
        model >= s->nmodels)
        SIM_BUG("CPU executor for model %d on node %d out of range", model, node);
    const struct sim_node_cfg *nd = node < s->cfg->nnodes ? &s->cfg->nodes[node] : NULL;
    int kind = s->node_cpu_kind[node];
    if (kind < 0 || !nd)
        return sim_err_set(SIM_EINVAL, "node %d has no CPU cores (cluster.nodes[%d].cores)", node,
                           node), -1;
    if (s->prof_of_kind[model][kind] < 0)
        return sim_err_set(SIM_EINVAL, "model \"%s\" has no profile for CPU kind \"%s\" of "
                           "node \"%s\"", s->models[model].cfg->name, nd->cpu_kind, nd->name), -1;
    if (milli_cores < 1 || s->node_milli[node] + milli_cores > nd->cores * 1000)
        return sim_err_set(SIM_EINVAL, "node \"%s\": %.3f cores asked, %.3f of %d free",
                           nd->name, milli_cores / 1000.0,
                           nd->cores - s->node_milli[node] / 1000.0, nd->cores), -1;
    if (exec_grow(s))
        return -1;
    int e = s->nexecs++;
    struct sim_exec *x = &s->execs[e];
    x->id = e;
    x->kind = kind;
    x->node = node;
    x->cpu = true;
    x->model = model;
    x->milli_cores = milli_cores;
    exec_lanes(s, e);
    x->state = SIM_EXEC_UP;
    sim_exec_mark(s, e);
    x->added_at = x->up_since = x->last_finish = s->now;
    x->memory_mb = 0;
    x->pages_total = INT32_MAX / 2;
    set_resident(s, e, model, SIM_RES_LOADED);  /* its model, in host memory */
    x->models_loaded = 1;
    s->xi[e].core_since = s->now;
    s->node_milli[node] += milli_cores;
    return e;
}

int sim_exec_set_cores(struct sim *s, int e, int milli_cores)
{
    if (e < 0 || e >= s->nexecs || !s->execs[e].cpu)
        SIM_BUG("set_cores on executor %d, which is not a CPU executor", e);
    struct sim_exec *x = &s->execs[e];
    struct sim_exec_int *xi = &s->xi[e];
    int old = x->milli_cores, cores = node_cores(s, x->node);
    if (x->state != SIM_EXEC_UP && x->state != SIM_EXEC_DRAINING)
        return sim_err_set(SIM_EINVAL, "executor %d is down", e), -1;
    if (milli_cores < 1 || s->node_milli[x->node] - old + milli_cores > cores * 1000)
        return sim_err_set(SIM_EINVAL, "node \"%s\": %.3f cores asked for executor %d, %.3f of "
                           "%d free", s->cfg->nodes[x->node].name, milli_cores / 1000.0, e,
                           cores - (s->node_milli[x->node] - old) / 1000.0, cores), -1;
    core_accrue(s, e);
    s->node_milli[x->node] += milli_cores - old;
    x->milli_cores = milli_cores;
    int64_t sp_old = xi->speed;
    xi->speed = exec_speed(s, e);
    if (xi->multi || xi->speed != sp_old)
        s->up.retime(s, e);                   /* running batches keep their work done */
    return 0;
}

/* The allocation's integral of CPU executor e up to min(now, duration), in milli-core ns. */
static void core_accrue(struct sim *s, int e)
{
    struct sim_exec_int *xi = &s->xi[e];
    int64_t t = s->now < s->duration ? s->now : s->duration;
    if (t > xi->core_since)
        xi->core_acc += (t - xi->core_since) * (int64_t)s->execs[e].milli_cores;
    xi->core_since = t > xi->core_since ? t : xi->core_since;
}

/* A CPU executor going DOWN gives its cores back to the node. */
static void cpu_release(struct sim *s, int e)
{
    core_accrue(s, e);
    s->node_milli[s->execs[e].node] -= s->execs[e].milli_cores;
    s->execs[e].milli_cores = 0;
}

/* A GPU executor that went down (or was cancelled while starting) frees its GPU. */
static void exec_release_gpu(struct sim *s, int e)
{
    int g = s->execs[e].gpu;
    if (g >= 0) {
        s->execs[e].gpu = -1;
        sim_gpu_release(s, g, SIM_HOLD_EXEC, e);
    }
}

void sim_exec_maybe_down(struct sim *s, int e)
{
    struct sim_exec *x = &s->execs[e];
    struct sim_exec_int *xi = &s->xi[e];
    if (x->state != SIM_EXEC_DRAINING || xi->running || xi->pend_head || sim_llm_holds(s, e))
        return;
    x->state = SIM_EXEC_DOWN;
    sim_exec_mark(s, e);
    x->down_at = s->now;
    if (x->cpu)
        cpu_release(s, e);
    exec_release_gpu(s, e);
    if (xi->q)
        for (int m = 0; m < s->nmodels; m++)
            while (xi->q[m].len)
                sim_xqueue_drop_head(s, e, m);
}

void sim_exec_remove(struct sim *s, int e)
{
    if (e < 0 || e >= s->nexecs)
        SIM_BUG("remove of executor %d out of range", e);
    struct sim_exec *x = &s->execs[e];
    if (x->state == SIM_EXEC_PENDING) {         /* cancelled before it had a GPU: no cost */
        sim_ledger_unpend(s, e);
        x->state = SIM_EXEC_DOWN;
        sim_exec_mark(s, e);
        x->up_since = x->down_at = x->added_at = s->now;
    } else if (x->state == SIM_EXEC_STARTING) {
        x->state = SIM_EXEC_DOWN;
        sim_exec_mark(s, e);
        x->up_since = x->down_at = s->now;
        exec_release_gpu(s, e);
    } else if (x->state == SIM_EXEC_UP) {
        x->state = SIM_EXEC_DRAINING;
        sim_exec_mark(s, e);
        sim_exec_maybe_down(s, e);
    } else {
        return;
    }
    if (!x->cpu)
        s->nactive--;
    if (s->pol->on_exec_remove)
        SIM_POLICY_CALL(s, on_exec_remove, e);
}


enum sim_residency sim_resident(const struct sim *s, int e, int m)
{
    return (enum sim_residency)s->xi[e].res[m].state;
}

int sim_model_pages(const struct sim *s, int m) { return s->pages[m]; }

int64_t sim_load_ns(const struct sim *s, int m) { return s->load_ns[m]; }
