/* dynamoml — DynamoML's operators on a GPU cluster shared by inference and training jobs
 * (../shared/specs/dynamoml.md; docs/policies.md):
 *
 *  * the training-job scheduler (`scheduling`: true, operator 2): jobs wait in arrival order
 *    and start as a gang when all their initial workers fit; packing (all on the node with
 *    the fewest free GPUs that holds them, else nodes by descending free GPUs; the parameter
 *    server on the node with most workers); reclaim for the oldest queued job (non-chief
 *    workers removed in scale-in order, from the node with most free GPUs); scale-out of free
 *    GPUs, one at a time, to the running job with fewest workers, on a node it uses, on
 *    another only when that raises its modelled speed (one reconfiguration per job and pass);
 *    scale-in victims: the job with most workers (ties: latest arrival), a non-chief worker
 *    on the node where it has fewest. Passes run on job arrival and end, on a freed GPU and
 *    every sched_period_s.
 *  * the native Kubernetes scheduler (`scheduling`: false): a job keeps its initial workers;
 *    its worker pods wait in creation order and each binds alone, when a GPU is free, to the
 *    node of the largest share of free GPUs (native_placement "least_allocated", the default:
 *    kube-scheduler's default scoring, ties random from the policy's stream) or to a
 *    uniformly random node with a free GPU ("random"); the parameter server likewise over all
 *    nodes at arrival; the job progresses once all its workers are bound. Worker pods
 *    and HPA pods share one pending queue in creation order: a freed GPU goes to a job's pod
 *    unless an inference pod pending for one was requested before the job arrived (a tie
 *    goes to the job).
 *  * inference: the frontend routes round robin over ready pods, each with a queue of its own,
 *    served one request at a time (batch 1), FIFO; a pod the HPA removes finishes its queue
 *    before it goes (a terminating pod's grace period); with no pod ready, requests wait in
 *    the central queue for the first idle pod.
 *
 *  * with `autoscaling` (which needs autoscale.kind "hpa", the HPA on request rate) and the
 *    scheduler: preemption — a pod added with no GPU free takes training workers' GPUs in
 *    scale-in order until none is pending or only chiefs are left.
 *
 *  * notebooks (config `notebooks`): with `sharing` (operator 1) each claims its request of
 *    the GPU with the least residual that still fits it, else of an empty GPU, and the GPU's
 *    notebooks time-share it by token (sim/sim_shares.c); without, each holds a whole GPU
 *    (natively on a random node with a free one).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "policy.h"
#include "sim_err.h"
#include "sim_json.h"
#include "sim_param.h"

enum { TAG_PASS = 1 };

struct dyn {
    bool scheduling, sharing, autoscaling;
    double period_s;
    bool in_pass, again;
    int rr;                             /* the pod the last request was routed to */
    int *bound;                         /* native: GPUs bound so far per job, in order */
    int *nbound;
    int nnodes;
    int native_placement;               /* PLACEMENTS */
    bool least_allocated;               /* native placement: kube-scheduler's default scoring
                                         * (least requested share, ties random), not a
                                         * uniformly random node */
};

static const char *const PLACEMENTS[] = {"random", "least_allocated", NULL};
static const struct sim_param params[] = {
    {"scheduling", SIM_P_BOOL, SIM_P_AT(struct dyn, scheduling, bool), .def = 1,
     .doc = "the training-job scheduler (operator 2: gang start, packing, reclaim, "
            "scale-out and scale-in); false: native Kubernetes"},
    {"sharing", SIM_P_BOOL, SIM_P_AT(struct dyn, sharing, bool), .def = 0,
     .doc = "notebooks time-share GPUs by token (operator 1); false: each holds a whole GPU"},
    {"autoscaling", SIM_P_BOOL, SIM_P_AT(struct dyn, autoscaling, bool), .def = 0,
     .doc = "inference pods scaled by the HPA on request rate, evicting training workers for "
            "pending pods (needs `autoscale.kind: \"hpa\"`)"},
    {"sched_period_s", SIM_P_NUM, SIM_P_AT(struct dyn, period_s, double), .cons = SIM_J_POS,
     .def = 10, .doc = "the scheduler's periodic pass (besides arrivals, ends and freed GPUs)"},
    {"native_placement", SIM_P_ENUM, SIM_P_AT_ENUM(struct dyn, native_placement),
     .choices = PLACEMENTS, .sdef = "least_allocated",
     .doc = "the node a native pod binds to: kube-scheduler's default scoring (the largest "
            "share of free GPUs, ties random) or a uniformly random node with a free GPU"},
    {NULL}};

/* ---- inference: routed round robin over ready pods, each one request at a time, FIFO ---- */

/* The frontend (the service's load balancer) sends each request to the next ready pod after
 * the last one chosen, in executor order; with no pod ready (all starting), to the central
 * queue, which the first pod to become idle serves. */
static int route(struct sim *s, void *state, const struct sim_request *r)
{
    struct dyn *st = state;
    (void)r;
    int n = sim_exec_count(s);
    for (int i = 1; i <= n; i++) {
        int e = (st->rr + i) % n;
        const struct sim_exec *x = sim_exec(s, e);
        if (x->state == SIM_EXEC_UP && !x->cpu) {
            st->rr = e;
            return e;
        }
    }
    return SIM_CENTRAL;
}

/* Pod e, if idle, takes the oldest request queued at it (a removed pod, DRAINING, still
 * finishes its queue, as a terminating pod does), else, if ready, the central queue's. */
static void serve_exec(struct sim *s, int e)
{
    const struct sim_exec *x = sim_exec(s, e);
    if (x->cpu || x->nrunning + x->pending > 0 ||
        (x->state != SIM_EXEC_UP && x->state != SIM_EXEC_DRAINING))
        return;
    int from = e, m = sim_xqueue_oldest(s, e);
    if (m < 0 && x->state == SIM_EXEC_UP)
        from = SIM_CENTRAL, m = sim_xqueue_oldest(s, SIM_CENTRAL);
    if (m < 0)
        return;
    struct sim_dispatch_args a = {.exec = e, .model = m, .n = 1, .from = from,
                                  .start_at = sim_now(s)};
    sim_dispatch_ex(s, &a);
}

static void serve_all(struct sim *s)
{
    for (int e = 0; e < sim_exec_count(s); e++)
        serve_exec(s, e);
}

/* ---- the ledger as the scheduler sees it ---- */

static int free_on(const struct sim *s, int n)
{
    return sim_node_gpus_free(s, n);
}

static int free_total(const struct sim *s, int nnodes)
{
    int t = 0;
    for (int n = 0; n < nnodes; n++)
        t += free_on(s, n);
    return t;
}

static int first_free_gpu(const struct sim *s, int n)
{
    for (int g = 0; g < sim_gpu_count(s); g++)
        if (sim_gpu(s, g)->node == n && sim_gpu(s, g)->milli == 0)
            return g;
    return -1;
}

static bool started(const struct sim_job *j)
{
    return j->state == SIM_JOB_STARTING || j->state == SIM_JOB_RUNNING ||
           j->state == SIM_JOB_RECONFIGURING;
}

static int workers_on(const struct sim *s, const struct sim_job *j, int n)
{
    int c = 0;
    for (int w = 0; w < j->nworkers; w++)
        c += sim_gpu(s, j->gpu[w])->node == n;
    return c;
}

/* The job's modelled speed (iterations/s) with n workers on these nodes. */
static double speed(const struct sim *s, const struct sim_job *j, int n, bool split)
{
    const struct sim_job_kind *k = &sim_world(s)->job_kinds[j->kind];
    return k->speedup[n - 1] / k->iter_s / (split ? k->cross_node : 1);
}

static bool is_split(const struct sim *s, const struct sim_job *j, int extra_node)
{
    for (int w = 0; w < j->nworkers; w++)
        if (sim_gpu(s, j->gpu[w])->node != j->ps_node)
            return true;
    return extra_node >= 0 && extra_node != j->ps_node;
}

/* ---- operator 2: gang, packing, reclaim, scale-out, scale-in ---- */

/* Chooses k free GPUs by packing into gpus[]; the parameter server's node into *ps. */
static bool pack(const struct sim *s, int nnodes, int k, int *gpus, int *ps)
{
    if (free_total(s, nnodes) < k)
        return false;
    int best = -1;                      /* the node with the fewest free GPUs that holds all */
    for (int n = 0; n < nnodes; n++)
        if (free_on(s, n) >= k && (best < 0 || free_on(s, n) < free_on(s, best)))
            best = n;
    int got = 0, most = -1, most_n = -1;
    if (best >= 0) {
        for (int g = 0; g < sim_gpu_count(s) && got < k; g++)
            if (sim_gpu(s, g)->node == best && sim_gpu(s, g)->milli == 0)
                gpus[got++] = g;
        *ps = best;
        return true;
    }
    bool used[256] = {false};           /* nodes by descending free GPUs (ties: lower index) */
    while (got < k) {
        int n = -1;
        for (int m = 0; m < nnodes && m < 256; m++)
            if (!used[m] && free_on(s, m) > 0 && (n < 0 || free_on(s, m) > free_on(s, n)))
                n = m;
        if (n < 0)
            return false;
        used[n] = true;
        int here = 0;
        for (int g = 0; g < sim_gpu_count(s) && got < k; g++)
            if (sim_gpu(s, g)->node == n && sim_gpu(s, g)->milli == 0)
                gpus[got++] = g, here++;
        if (here > most)
            most = here, most_n = n;
    }
    *ps = most_n;
    return true;
}

/* The scale-in victim job (most workers, ties: latest arrival) with a non-chief worker; -1. */
static int victim_job(const struct sim *s)
{
    int v = -1;
    for (int j = 0; j < sim_job_count(s); j++) {
        const struct sim_job *p = sim_job(s, j);
        if (!started(p) || p->nworkers < 2)
            continue;
        if (v < 0 || p->nworkers > sim_job(s, v)->nworkers ||
            (p->nworkers == sim_job(s, v)->nworkers && p->arrival >= sim_job(s, v)->arrival))
            v = j;
    }
    return v;
}

/* Its victim worker's GPU: a non-chief on the node where the job has fewest workers (reclaim:
 * on the node with most free GPUs first); the last such worker on that node. */
static int victim_gpu(const struct sim *s, const struct sim_job *p, bool reclaim)
{
    int best = -1;
    for (int w = 1; w < p->nworkers; w++) {
        int g = p->gpu[w], n = sim_gpu(s, g)->node;
        if (best < 0) {
            best = w;
            continue;
        }
        int bn = sim_gpu(s, p->gpu[best])->node;
        int fa = free_on(s, n), fb = free_on(s, bn);
        bool better;
        if (reclaim && fa != fb)
            better = fa > fb;
        else                            /* fewest of its workers there; ties: the later one */
            better = workers_on(s, p, n) <= workers_on(s, p, bn);
        if (better)
            best = w;
    }
    return best < 0 ? -1 : p->gpu[best];
}

static bool remove_one(struct sim *s, bool reclaim)
{
    int v = victim_job(s);
    if (v < 0)
        return false;
    int g = victim_gpu(s, sim_job(s, v), reclaim);
    return g >= 0 && sim_job_remove_worker(s, v, g) == 0;
}

static int removable(const struct sim *s)
{
    int r = 0;
    for (int j = 0; j < sim_job_count(s); j++)
        if (started(sim_job(s, j)))
            r += sim_job(s, j)->nworkers - 1;
    return r;
}

static void scale_out(struct sim *s, struct dyn *st)
{
    int nj = sim_job_count(s);
    int (*add)[SIM_JOB_MAX_WORKERS] = calloc((size_t)(nj ? nj : 1), sizeof *add);
    int *nadd = calloc((size_t)(nj ? nj : 1), sizeof *nadd);
    bool *done = calloc((size_t)(nj ? nj : 1), sizeof *done);
    if (!add || !nadd || !done) {
        free(add);
        free(nadd);
        free(done);
        sim_fail_nomem(s, "in the dynamoml scheduler");
        return;
    }
    for (;;) {
        int j = -1;                     /* fewest workers (planned adds counted), earliest */
        for (int i = 0; i < nj; i++) {
            const struct sim_job *p = sim_job(s, i);
            if (done[i] || !started(p) || p->nworkers + nadd[i] >= p->max_workers)
                continue;
            if (j < 0 || p->nworkers + nadd[i] < sim_job(s, j)->nworkers + nadd[j])
                j = i;
        }
        if (j < 0 || free_total(s, st->nnodes) == 0)
            break;
        const struct sim_job *p = sim_job(s, j);
        int n = -1;                     /* a node it uses: the one with most of its workers */
        for (int m = 0; m < st->nnodes; m++)
            if (free_on(s, m) > 0 && workers_on(s, p, m) > 0 &&
                (n < 0 || workers_on(s, p, m) > workers_on(s, p, n)))
                n = m;
        if (n < 0) {                    /* another node, only if that is faster */
            for (int m = 0; m < st->nnodes && n < 0; m++)
                if (free_on(s, m) > 0 &&
                    speed(s, p, p->nworkers + nadd[j] + 1, is_split(s, p, m)) >
                        speed(s, p, p->nworkers + nadd[j], is_split(s, p, -1)))
                    n = m;
        }
        if (n < 0) {
            done[j] = true;
            continue;
        }
        int g = first_free_gpu(s, n);
        /* held for the job while the pass plans; adding the workers adopts the claims */
        if (sim_gpu_claim(s, g, SIM_HOLD_WORKER, j, 1000)) {
            if (!sim_out_of_memory(s))
                SIM_BUG("scale-out: %s", sim_err_msg());
            break;                      /* the run stops after this event */
        }
        add[j][nadd[j]++] = g;
    }
    for (int j = 0; j < nj && !sim_out_of_memory(s); j++)   /* one reconfiguration per job */
        if (nadd[j] && sim_job_add_workers(s, j, add[j], nadd[j]) && !sim_out_of_memory(s))
            SIM_BUG("scale-out of job %d: %s", j, sim_err_msg());
    free(add);
    free(nadd);
    free(done);
}

static void schedule(struct sim *s, struct dyn *st)
{
    bool oldest = true;
    for (int j = 0; j < sim_job_count(s); j++) {
        const struct sim_job *p = sim_job(s, j);
        if (p->state != SIM_JOB_QUEUED)
            continue;
        int gpus[SIM_JOB_MAX_WORKERS], ps = 0, k = p->init_workers;
        if (oldest && free_total(s, st->nnodes) < k &&
            free_total(s, st->nnodes) + removable(s) >= k)
            while (free_total(s, st->nnodes) < k && remove_one(s, true))
                ;
        oldest = false;
        if (pack(s, st->nnodes, k, gpus, &ps) && sim_job_start(s, j, gpus, k, ps)) {
            if (!sim_out_of_memory(s))
                SIM_BUG("starting job %d: %s", j, sim_err_msg());
            return;                     /* the run stops after this event */
        }
    }
    bool queued = false;
    for (int j = 0; j < sim_job_count(s); j++)
        queued |= sim_job(s, j)->state == SIM_JOB_QUEUED;
    if (!queued && sim_exec_first_pending(s) < 0)
        scale_out(s, st);
}

/* Whether node a's share of free GPUs is above (1), equal to (0) or below (-1) node b's. */
static int freer(const struct sim *s, int a, int b)
{
    const struct sim_world *w = sim_world(s);
    long fa = free_on(s, a), fb = free_on(s, b);
    long ta = w->nnodes > 0 ? w->nodes[a].gpus : sim_gpu_count(s);
    long tb = w->nnodes > 0 ? w->nodes[b].gpus : sim_gpu_count(s);
    long x = fa * tb, y = fb * ta;
    return x > y ? 1 : x < y ? -1 : 0;
}

/* Native Kubernetes' node for a pod (from stream `rng`): among the nodes with a free GPU when
 * `need_gpu` (any node otherwise), a uniformly random one, or with least_allocated the
 * kube-scheduler's default: the node least requested (NodeResourcesLeastAllocated, scored on
 * CPU and memory; here every pod's request is taken as proportional to the GPUs it holds, so
 * the node with the largest share of free GPUs), ties uniformly at random (selectHost). */
static int native_node(struct sim *s, const struct dyn *st, gsl_rng *rng, bool need_gpu)
{
    int nc = 0, best = -1;
    for (int m = 0; m < st->nnodes; m++) {
        if (need_gpu && free_on(s, m) == 0)
            continue;
        int c = !st->least_allocated || best < 0 ? 0 : freer(s, m, best);
        if (c > 0 || best < 0)
            best = m, nc = 1;
        else if (c == 0)
            nc++;
    }
    if (nc == 0)
        return -1;
    int pick = (int)gsl_rng_uniform_int(rng, (unsigned long)nc);
    for (int m = 0; m < st->nnodes; m++)
        if ((!need_gpu || free_on(s, m) > 0) &&
            (!st->least_allocated || freer(s, m, best) == 0) && pick-- == 0)
            return m;
    return -1;
}

/* A wholly free GPU on a node with one: native Kubernetes' node (native_node, the policy's
 * stream) or the first; -1 when none is free. */
static int free_gpu_on_node(struct sim *s, const struct dyn *st, bool random)
{
    if (random) {
        int n = native_node(s, st, sim_policy_rng(s), true);
        return n < 0 ? -1 : first_free_gpu(s, n);
    }
    for (int n = 0; n < st->nnodes; n++)
        if (free_on(s, n) > 0)
            return first_free_gpu(s, n);
    return -1;
}

/* ---- the native scheduler: pods bind one at a time to a random node with a free GPU ---- */

static void native(struct sim *s, struct dyn *st)
{
    for (int j = 0; j < sim_job_count(s); j++) {
        const struct sim_job *p = sim_job(s, j);
        if (p->state != SIM_JOB_QUEUED)
            continue;
        int pe = sim_exec_first_pending(s);   /* one queue in creation order: an inference
                                               * pod requested before the job goes first */
        if (pe >= 0 && sim_exec(s, pe)->added_at < p->arrival)
            return;
        while (st->nbound[j] < p->init_workers && free_total(s, st->nnodes) > 0) {
            int g = free_gpu_on_node(s, st, true);
            if (sim_gpu_claim(s, g, SIM_HOLD_WORKER, j, 1000)) {
                if (!sim_out_of_memory(s))
                    SIM_BUG("native bind: %s", sim_err_msg());
                return;                 /* the run stops after this event */
            }
            st->bound[j * SIM_JOB_MAX_WORKERS + st->nbound[j]++] = g;
        }
        if (st->nbound[j] < p->init_workers)
            return;                     /* pods wait in creation order */
        int ps = native_node(s, st, sim_policy_rng_named(s, "ps"), false);
        if (sim_job_start(s, j, st->bound + j * SIM_JOB_MAX_WORKERS, p->init_workers, ps)) {
            if (!sim_out_of_memory(s))
                SIM_BUG("starting job %d: %s", j, sim_err_msg());
            return;                     /* the run stops after this event */
        }
    }
}

static void pass(struct sim *s, struct dyn *st)
{
    if (st->in_pass) {                  /* a GPU freed inside a pass: run once more after */
        st->again = true;
        return;
    }
    st->in_pass = true;
    for (int round = 0; round < 8; round++) {
        st->again = false;
        if (st->scheduling)
            schedule(s, st);
        else
            native(s, st);
        if (!st->again)
            break;
    }
    st->in_pass = false;
}

/* ---- notebooks: operator 1 places them on shares, native Kubernetes on whole GPUs ---- */

static int place_notebooks(struct sim *s, struct dyn *st)
{
    const struct sim_world *w = sim_world(s);
    int r = (int)lround(w->nb_request * 1000);
    for (int i = 0; i < sim_notebook_count(s); i++) {
        int g = -1;
        if (st->sharing) {              /* the least residual that still fits r, else an empty
                                         * GPU (natively: on a random node; else the first) */
            for (int k = 0; k < sim_gpu_count(s); k++) {
                const struct sim_gpu *gp = sim_gpu(s, k);
                bool shares = gp->nclaims > 0 && gp->claims[0].kind == SIM_HOLD_SHARE;
                if (shares && 1000 - gp->milli >= r &&
                    (g < 0 || gp->milli > sim_gpu(s, g)->milli))
                    g = k;
            }
        }
        if (g < 0 && (g = free_gpu_on_node(s, st, !st->sharing && !st->scheduling)) < 0)
            return sim_err_set(SIM_EINVAL, "notebooks: no free GPU for notebook %d", i);
        if (sim_notebook_place(s, i, g, st->sharing ? r : 1000))
            return sim_out_of_memory(s) ? SIM_ENOMEM : SIM_EINVAL;
    }
    return 0;
}

/* ---- hooks ---- */

static int init(struct sim *s, const cJSON *p, void *state)
{
    struct dyn *st = state;
    int rc;
    if ((rc = sim_params_read(params, p, "policy.params", st)) ||
        (rc = sim_check_period(s, "policy.params.sched_period_s", st->period_s, SIM_MAX_PLANS)) ||
        (rc = sim_track_heads(s)))      /* pods and the frontend serve the oldest head */
        return rc;
    st->least_allocated = st->native_placement == 1;
    const struct sim_world *w = sim_world(s);
    if (st->autoscaling && (!w->autoscaler || strcmp(w->autoscaler->name, "hpa") != 0))
        return sim_err_set(SIM_EINVAL, "policy.params.autoscaling: DynamoML's inference "
                           "autoscaler is the HPA on request rate: give autoscale.kind \"hpa\" "
                           "(its target_rps, sync_s, window_s, stabilization_s) and "
                           "cluster.max_gpus");
    st->nnodes = w->nnodes > 0 ? w->nnodes : 1;
    if (st->nnodes > 256)
        return sim_err_set(SIM_EINVAL, "cluster.nodes: dynamoml handles at most 256 nodes");
    int nj = sim_job_count(s);
    st->bound = calloc((size_t)(nj ? nj : 1) * SIM_JOB_MAX_WORKERS, sizeof *st->bound);
    st->nbound = calloc((size_t)(nj ? nj : 1), sizeof *st->nbound);
    if (!st->bound || !st->nbound)
        return SIM_ENOMEM;
    if (st->scheduling && nj)
        sim_timer_set(s, sim_s_to_ns(st->period_s), TAG_PASS, NULL);
    return place_notebooks(s, st);
}

static void destroy(void *state)
{
    struct dyn *st = state;
    free(st->bound);
    free(st->nbound);
}

static void on_request(struct sim *s, void *state, int m, struct sim_request *r)
{
    (void)state, (void)m;
    if (r->exec >= 0)
        serve_exec(s, r->exec);
    else
        serve_all(s);
}

static void on_batch_done(struct sim *s, void *state, const struct sim_batch *b)
{
    (void)state;
    serve_exec(s, b->exec);
}

static void on_exec_up(struct sim *s, void *state, int e)
{
    (void)state;
    serve_exec(s, e);
}

static void on_timer(struct sim *s, void *state, uint64_t tag, void *arg)
{
    struct dyn *st = state;
    (void)arg;
    if (tag != TAG_PASS)
        return;
    pass(s, st);
    bool left = false;
    for (int j = 0; j < sim_job_count(s); j++)
        left |= sim_job(s, j)->state != SIM_JOB_DONE;
    if (left)
        sim_timer_set(s, sim_now(s) + sim_s_to_ns(st->period_s), TAG_PASS, NULL);
}

static void on_job(struct sim *s, void *state, int j)
{
    (void)j;
    pass(s, state);
}

/* Preemption (scheduler and HPA both on): a pod added with no GPU free takes training
 * workers' GPUs, one worker at a time in scale-in order, until no pod is pending or only
 * chiefs are left (each freed GPU goes to the first pending pod at once). */
static void on_exec_pending(struct sim *s, void *state, int e)
{
    struct dyn *st = state;
    (void)e;
    if (!st->scheduling || !st->autoscaling)
        return;
    while (sim_exec_first_pending(s) >= 0 && remove_one(s, false))
        ;
}

/* A freed GPU goes to: a pending inference pod > a queued training gang > scale-out (with
 * the scheduler: left to the engine, which gives it to the first pending pod); natively to
 * whichever pending pod was created first, a job's worker or an inference pod (native()). */
static void on_gpu_free(struct sim *s, void *state, int g)
{
    struct dyn *st = state;
    (void)g;
    if (st->scheduling && sim_exec_first_pending(s) >= 0)
        return;
    pass(s, st);
}

const struct policy_ops policy_dynamoml = {
    .name = "dynamoml",
    .summary = "DynamoML: fractional GPUs for notebooks (token sharing), training-job "
               "scheduler (gang, packing, reclaim, scale-out) or native placement, preemption "
               "for HPA pods; inference routed round robin to pods, batch 1, FIFO",
    .state_size = sizeof(struct dyn),
    .params = params,
    .init = init,
    .route = route,
    .on_request = on_request,
    .on_batch_done = on_batch_done,
    .on_exec_up = on_exec_up,
    .on_timer = on_timer,
    .on_job_arrive = on_job,
    .on_job_done = on_job,
    .on_gpu_free = on_gpu_free,
    .on_exec_pending = on_exec_pending,
    .destroy = destroy,
    .dynamic_execs = true,
};
