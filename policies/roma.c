/* roma — ROMA (Baresi, Quattrocchi, Rasi, "Resource Management for TensorFlow Inference",
 * ICSOC 2021; specs/roma.md) and its four baselines, one policy file:
 *  - GPUs: when a GPU is free (a request done, or an arrival while it idles; lowest id first)
 *    it takes the head of the neediest model (gpu_scheduler "roma": largest relative excess
 *    of W = beta E + (1 - beta) R over the set point alpha * SLA) or of the next non-empty
 *    queue after the last one served ("rr"). No batching: one request at a time.
 *  - CPUs: on every worker node one CPU executor per model (sim_exec_add_cpu); an idle one
 *    takes its model's head (an arrival goes to an idle GPU first, else to a random idle CPU
 *    executor of its model, else it waits).
 *  - cpu_control "ct": every period_s a PI controller per CPU executor moves its cores toward
 *    holding a mean response time at the set point (measure "executor": of the requests that
 *    executor served, the authors' controller; "model": of all the model's; gains K, a from
 *    the paper, or by pole placement), then each node's supervisor scales the demands to the
 *    cores available;
 *    "rules": every 15 s +1 core above 0.8 SLA, -1 below 0.2 SLA; "static": fixed cores.
 * Registered as roma, rr-ct, rr-rules, rr-max and rr-min (the baselines' defaults).
 * Response time = queue + service + the response delay; completions are kept per model for
 * the windows (window_s for the GPU heuristic, the control period, 15 s for the rules). */
#include "roma.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_rng.h>

#include "policy.h"
#include "sim_err.h"
#include "sim_json.h"
#include "sim_param.h"

enum { TAG_CTRL = 1, TAG_RULES = 2, TAG_METRICS = 3 };
enum { GPU_ROMA, GPU_RR };
enum { CPU_CT, CPU_RULES, CPU_STATIC };
enum { MEASURE_EXECUTOR, MEASURE_MODEL };
#define RULES_NS 15000000000LL

/* ---------------------------------------------------------------- the rules as functions */

double roma_pi(double u_prev, double e, double e_prev, double K, double a, double u_min,
               double u_max)
{
    double u = u_prev + K * e - K * a * e_prev;
    return u < u_min ? u_min : u > u_max ? u_max : u;
}

double roma_supervise(const double *u, int n, double ac, double gamma, double *out)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += u[i];
    double eta = sum > 0 ? ac / sum : INFINITY;
    for (int i = 0; i < n; i++)
        out[i] = !(sum > 0) ? u[i] : eta < 1 ? eta * u[i] : eta > 1 ? u[i] + gamma * (eta - 1) * u[i]
                                                                      : u[i];
    return eta;
}

int roma_pole_gains(double k, double b, double q, double *K, double *a)
{
    double den = q - 2 * b + 1;
    if (k == 0 || den == 0)
        return -1;
    *a = ((2 - b) * q - b) / den;
    if (b == *a)
        return -1;
    *K = 4 * (*a - 1) * (b - 1) / (k * (b - *a) * (b - *a));
    return 0;
}

int roma_pick(int n, const int *qlen, const double *E, const double *R, const int *has_r,
              const double *set, const double *head, double beta)
{
    int best = -1;
    double beps = 0;
    for (int m = 0; m < n; m++) {
        if (qlen[m] <= 0)
            continue;
        double W = has_r[m] ? beta * E[m] + (1 - beta) * R[m] : E[m];
        double eps = W < set[m] ? 0 : (W - set[m]) / set[m];
        if (best < 0 || eps > beps || (eps == beps && (qlen[m] > qlen[best] ||
                                                      (qlen[m] == qlen[best] && head[m] < head[best])))) {
            best = m;
            beps = eps;
        }
    }
    return best;
}

/* ---------------------------------------------------------------- state */

struct done {                       /* a completed request */
    int64_t t, resp;
    int exec;                       /* the executor that ran it */
    bool gpu;
};

struct ring {                       /* a model's recent completions, oldest first */
    struct done *d;
    int head, n, cap;
    int w;                          /* index (from head) of the first inside window_s */
    double wsum;                    /* response times of d[w..n) */
};

struct roma {
    int gpu_mode, cpu_mode, measure;
    double alpha, beta, gamma, gc, u_min, u0, static_cores, q;
    int gains;                      /* GAINS: 1 "pole" */
    double K0, a0, period_s, window_s;  /* params K, a (every model's until "pole" sets its own) */
    bool pole;
    int64_t period_ns, window_ns, keep_ns;
    int nm, nn, rr_last;
    double *set, *pg, *K, *a;       /* [nm] set point (s), GPU time (s), gains */
    struct ring *done;              /* [nm] */
    int *cpu;                       /* [nn * nm] CPU executor or -1 */
    double *u, *e_prev;             /* [nn * nm] granted cores, last error */
    double *ac;                     /* [nn] cores for CPU executors */
    int64_t *arr;                   /* [executors] arrival of the request it runs, or -1 */
    int narr;
    /* scratch */
    int *qlen, *has_r, *idle;
    double *E, *R, *head, *dem, *grant;
};

static const char *const MEASURES[] = {"executor", "model", NULL};
static const char *const GPUS[] = {"roma", "rr", NULL};
static const char *const CPUS[] = {"ct", "rules", "static", NULL};
static const char *const GAINS[] = {"paper", "pole", NULL};
#define RP(f) SIM_P_AT(struct roma, f, double)
static const struct sim_param params[] = {
    {"gpu_scheduler", SIM_P_ENUM, SIM_P_AT_ENUM(struct roma, gpu_mode), .choices = GPUS,
     .flags = SIM_P_NODEF, .def_doc = "the policy's (`roma`: `roma`, the others `rr`)",
     .doc = "a free GPU takes the head of the neediest model (W against the set point) or of "
            "the next non-empty queue after the last served"},
    {"cpu_control", SIM_P_ENUM, SIM_P_AT_ENUM(struct roma, cpu_mode), .choices = CPUS,
     .flags = SIM_P_NODEF, .def_doc = "the policy's (`roma`, `rr-ct`: `ct`; `rr-rules`: "
                                      "`rules`; `rr-max`, `rr-min`: `static`)",
     .doc = "the CPU executors' cores: PI control, SLA rules every 15 s, or static"},
    {"static_cores_per_node", SIM_P_NUM, RP(static_cores), .cons = SIM_J_POS,
     .flags = SIM_P_NODEF, .def_doc = "`rr-max`: all, `rr-min`: 1",
     .doc = "with `cpu_control: \"static\"`: the cores of a node split evenly over its "
            "models"},
    {"alpha", SIM_P_NUM, RP(alpha), .cons = SIM_J_UNIT, .def = 0.8, .type_doc = "in (0, 1]",
     .doc = "the set point: alpha x SLA"},
    {"beta", SIM_P_NUM, RP(beta), .cons = SIM_J_UNIT, .def = 0.5,
     .doc = "the GPU heuristic's W = beta E + (1 - beta) R"},
    {"gamma", SIM_P_NUM, RP(gamma), .cons = SIM_J_UNIT, .def = 0,
     .doc = "the share of a node's spare cores its supervisor hands out"},
    {"gc_cores", SIM_P_NUM, RP(gc), .cons = SIM_J_NONNEG, .def = 0,
     .doc = "cores of each node kept from the CPU executors"},
    {"K", SIM_P_NUM, RP(K0), .cons = SIM_J_POS, .def = 0.15,
     .doc = "the PI controller's gain (`gains: \"paper\"`)"},
    {"a", SIM_P_NUM, RP(a0), .cons = SIM_J_NONNEG, .def = 0.11,
     .doc = "the PI controller's zero (`gains: \"paper\"`)"},
    {"gains", SIM_P_ENUM, SIM_P_AT_ENUM(struct roma, gains), .choices = GAINS,
     .doc = "`paper`: `K` and `a` as given; `pole`: both closed-loop poles at `q`, from the "
            "plant at the set point and the model's configured rate"},
    {"measure", SIM_P_ENUM, SIM_P_AT_ENUM(struct roma, measure), .choices = MEASURES,
     .doc = "what a controller's mean response time is over: its own executor's requests "
            "(the authors' controller) or the model's on every device (below)"},
    {"q", SIM_P_NUM, RP(q), .cons = SIM_J_NONNEG, .def = 0.5, .type_doc = "in [0, 1)",
     .doc = "the closed-loop pole of `gains: \"pole\"`"},
    {"period_s", SIM_P_NUM, RP(period_s), .cons = SIM_J_POS, .def = 1,
     .doc = "the controllers' and the time series' period"},
    {"window_s", SIM_P_NUM, RP(window_s), .cons = SIM_J_POS, .def = 1,
     .doc = "the window of the GPU heuristic's R"},
    {"u_min", SIM_P_NUM, RP(u_min), .cons = SIM_J_POS, .def = 0.1,
     .doc = "the fewest cores a CPU executor keeps"},
    {"u0", SIM_P_NUM, RP(u0), .cons = SIM_J_POS, .def = 1,
     .doc = "a CPU executor's cores at the start (at most the node's cores / models)"},
    {NULL}};
#undef RP

static int ring_add(struct ring *r, struct done d)
{
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 64;
        struct done *nd = malloc((size_t)cap * sizeof *nd);
        if (!nd)
            return SIM_ENOMEM;
        for (int i = 0; i < r->n; i++)
            nd[i] = r->d[(r->head + i) % r->cap];
        free(r->d);
        r->d = nd;
        r->head = 0;
        r->cap = cap;
    }
    r->d[(r->head + r->n++) % r->cap] = d;
    r->wsum += (double)d.resp;
    return 0;
}

static inline const struct done *ring_at(const struct ring *r, int i)
{
    return &r->d[(r->head + i) % r->cap];
}

/* Drops what no window needs and moves the window_s cursor up to now. */
static void ring_trim(struct roma *st, struct ring *r, int64_t now)
{
    while (r->w < r->n && ring_at(r, r->w)->t <= now - st->window_ns)
        r->wsum -= (double)ring_at(r, r->w++)->resp;
    while (r->n > 0 && r->w > 0 && ring_at(r, 0)->t <= now - st->keep_ns) {
        r->head = (r->head + 1) % r->cap;
        r->n--;
        r->w--;
    }
}

/* Mean response time (s) of the completions in (now - span, now] that ran on executor
 * `only` (all when -1; with `gpus` also every completion on a GPU), and their count on GPUs
 * and CPUs. */
static double ring_mean_of(const struct ring *r, int64_t now, int64_t span, int only, bool gpus,
                           int *n, int *ngpu)
{
    double sum = 0;
    *n = *ngpu = 0;
    for (int i = r->n - 1; i >= 0 && ring_at(r, i)->t > now - span; i--) {
        const struct done *d = ring_at(r, i);
        if (only >= 0 && d->exec != only && !(gpus && d->gpu))
            continue;
        sum += (double)d->resp;
        (*n)++;
        *ngpu += d->gpu;
    }
    return *n ? sum / *n / 1e9 : 0;
}

static double ring_mean(const struct ring *r, int64_t now, int64_t span, int *n, int *ngpu)
{
    return ring_mean_of(r, now, span, -1, false, n, ngpu);
}

/* ---------------------------------------------------------------- dispatch */

static bool idle(const struct sim *s, int e)
{
    const struct sim_exec *x = sim_exec(s, e);
    return x->state == SIM_EXEC_UP && !x->running && x->pending == 0;
}

static void start(struct sim *s, struct roma *st, int e, int m)
{
    if (e >= st->narr) {
        int n = 2 * e + 2;
        int64_t *a = realloc(st->arr, (size_t)n * sizeof *a);
        if (a) {
            for (int i = st->narr; i < n; i++)
                a[i] = -1;
            st->arr = a;
            st->narr = n;
        } else {                        /* dispatched all the same, so that the callers' loops
                                         * end; the run stops after this event */
            sim_fail_nomem(s, "growing ROMA's executors");
        }
    }
    if (e < st->narr)
        st->arr[e] = sim_queue_at(s, m, 0)->t_arrival;
    sim_dispatch(s, e, m, 1, sim_now(s));
}

/* Every idle GPU, lowest id first, takes the head of the model its heuristic picks. */
static void schedule_gpus(struct sim *s, struct roma *st)
{
    int64_t now = sim_now(s);
    for (int g = 0; g < sim_exec_count(s); g++) {
        if (sim_exec(s, g)->cpu || !idle(s, g))
            continue;
        int m = -1, any = 0;
        for (int k = 0; k < st->nm; k++)
            any |= (st->qlen[k] = sim_queue_len(s, k)) > 0;
        if (!any)
            return;
        if (st->gpu_mode == GPU_RR) {
            for (int i = 1; i <= st->nm && m < 0; i++)
                if (st->qlen[(st->rr_last + i) % st->nm] > 0)
                    m = (st->rr_last + i) % st->nm;
            st->rr_last = m;
        } else {
            for (int k = 0; k < st->nm; k++) {
                int q = st->qlen[k];
                struct ring *r = &st->done[k];
                ring_trim(st, r, now);
                st->has_r[k] = r->n - r->w > 0;
                st->R[k] = st->has_r[k] ? r->wsum / (r->n - r->w) / 1e9 : 0;
                if (q == 0)
                    continue;
                double age = 0;
                for (int i = 0; i < q; i++)
                    age += (double)(now - sim_queue_at(s, k, i)->t_arrival);
                st->E[k] = age / q / 1e9 + st->pg[k] * (q - 1) / 2.0;
                st->head[k] = (double)sim_queue_at(s, k, 0)->t_arrival;
            }
            m = roma_pick(st->nm, st->qlen, st->E, st->R, st->has_r, st->set, st->head, st->beta);
        }
        start(s, st, g, m);
    }
}

/* Model m's idle CPU executors (chosen at random) take its queue's head while both last. */
static void serve_cpu(struct sim *s, struct roma *st, int m)
{
    while (sim_queue_len(s, m) > 0) {
        int n = 0;
        for (int node = 0; node < st->nn; node++) {
            int e = st->cpu[node * st->nm + m];
            if (e >= 0 && idle(s, e))
                st->idle[n++] = e;
        }
        if (n == 0)
            return;
        int e = st->idle[n == 1 ? 0 : gsl_rng_uniform_int(sim_policy_rng(s), (unsigned long)n)];
        start(s, st, e, m);
    }
}

static void on_request(struct sim *s, void *state, int m, struct sim_request *r)
{
    (void)r;
    struct roma *st = state;
    schedule_gpus(s, st);
    serve_cpu(s, st, m);
}

static void on_batch_done(struct sim *s, void *state, const struct sim_batch *b)
{
    struct roma *st = state;
    int e = b->exec, m = b->model;
    const struct sim_exec *x = sim_exec(s, e);
    if (b->status == SIM_BATCH_OK && e < st->narr && st->arr[e] >= 0) {
        if (ring_add(&st->done[m], (struct done){b->t_finish, b->t_finish +
                                                 sim_resp_delay_ns(s, m) - st->arr[e], e, !x->cpu}))
            sim_fail_nomem(s, "keeping ROMA's completions");
        ring_trim(st, &st->done[m], sim_now(s));  /* memory stays that of the longest window */
    }
    if (e < st->narr)
        st->arr[e] = -1;
    if (x->cpu)
        serve_cpu(s, st, m);
    else
        schedule_gpus(s, st);
}

/* ---------------------------------------------------------------- control */

/* Applies node n's grants: the executors' cores in thousandths (rounded down, so the node's
 * sum stays within its cores), those that shrink first so that no step oversubscribes. */
static void apply(struct sim *s, struct roma *st, int node)
{
    for (int pass = 0; pass < 2; pass++)
        for (int m = 0; m < st->nm; m++) {
            int e = st->cpu[node * st->nm + m];
            if (e < 0)
                continue;
            int milli = (int)floor(st->u[node * st->nm + m] * 1000);
            if (milli < 1)
                milli = 1;
            if ((milli < sim_exec(s, e)->milli_cores) != (pass == 0))
                continue;
            if (sim_exec_set_cores(s, e, milli))
                SIM_BUG("roma: %s", sim_err_msg());
        }
}

/* The node's supervisor over the demands in dem[nm] (models without an executor: 0). */
static double supervise(struct sim *s, struct roma *st, int node)
{
    int n = 0;
    for (int m = 0; m < st->nm; m++)
        if (st->cpu[node * st->nm + m] >= 0)
            st->dem[n++] = st->dem[m];
    double eta = roma_supervise(st->dem, n, st->ac[node], st->cpu_mode == CPU_CT ? st->gamma : 0,
                                st->grant);
    for (int m = 0, i = 0; m < st->nm; m++)   /* (the rules: gamma 0, so only scaled down) */
        if (st->cpu[node * st->nm + m] >= 0)
            st->u[node * st->nm + m] = st->grant[i++];
    apply(s, st, node);
    return eta;
}

/* tau_R(k) over the last period for CPU executor `ex` of model m. measure "executor" (the
 * authors' controller: the response times of the requests this executor served): the mean
 * of its completions, else the age of the request it runs, else 0. "model" (Eq. 1 over all
 * devices and workers): the mean of m's completions, else the mean age of its requests
 * waiting or running, else 0. 0 sheds cores. */
static double tau_r(struct sim *s, struct roma *st, int m, int ex)
{
    int64_t now = sim_now(s);
    bool per_exec = st->measure == MEASURE_EXECUTOR;
    int n, ng;
    double t = ring_mean_of(&st->done[m], now, st->period_ns, per_exec ? ex : -1, false, &n, &ng);
    if (n)
        return t;
    double age = 0;
    int k = 0;
    for (int i = 0; !per_exec && i < sim_queue_len(s, m); i++, k++)
        age += (double)(now - sim_queue_at(s, m, i)->t_arrival);
    for (int e = 0; e < sim_exec_count(s) && e < st->narr; e++)
        if ((!per_exec || e == ex) && st->arr[e] >= 0 && sim_exec(s, e)->running &&
            sim_exec(s, e)->running->model == m)
            age += (double)(now - st->arr[e]), k++;
    return k ? age / k / 1e9 : 0;
}

/* Every period_s, whatever controls the cores: per model the mean response time of the
 * requests completed in the period (0 when none), where they ran, and its cores. */
static void metrics(struct sim *s, struct roma *st)
{
    double secs = (double)st->period_ns / 1e9;
    for (int m = 0; m < st->nm; m++) {
        int n, ng;
        double t = ring_mean(&st->done[m], sim_now(s), st->period_ns, &n, &ng), c = 0;
        sim_ts_add(s, "roma.response_s", m, t);
        sim_ts_add(s, "roma.gpu_rps", m, ng / secs);
        sim_ts_add(s, "roma.cpu_rps", m, (n - ng) / secs);
        for (int node = 0; node < st->nn; node++)
            c += st->cpu[node * st->nm + m] >= 0 ? st->u[node * st->nm + m] : 0;
        sim_ts_add(s, "roma.cores", m, c);
    }
    for (int node = 0; node < st->nn; node++) {
        if (st->ac[node] <= 0)
            continue;
        double c = 0;
        for (int m = 0; m < st->nm; m++)
            c += st->u[node * st->nm + m];
        sim_ts_add(s, "node.cores", node, c);
        sim_ts_add(s, "node.eta", node, c > 0 ? st->ac[node] / c : 0);
    }
}

static void control(struct sim *s, struct roma *st)
{
    double etas = 0;
    int nodes = 0;
    for (int m = 0; m < st->nm; m++) {
        for (int node = 0; node < st->nn; node++) {
            int i = node * st->nm + m;
            if (st->cpu[i] < 0)
                continue;
            double e = tau_r(s, st, m, st->cpu[i]) - st->set[m];
            st->u[i] = roma_pi(st->u[i], e, st->e_prev[i], st->K[m], st->a[m], st->u_min,
                               st->ac[node]);
            st->e_prev[i] = e;
        }
    }
    for (int node = 0; node < st->nn; node++) {
        if (st->ac[node] <= 0)
            continue;
        for (int m = 0; m < st->nm; m++)
            st->dem[m] = st->u[node * st->nm + m];
        etas += supervise(s, st, node);
        nodes++;
    }
    if (nodes)
        sim_ts_add(s, "roma.eta", -1, etas / nodes);
}

static void rules(struct sim *s, struct roma *st)
{
    for (int node = 0; node < st->nn; node++) {
        if (st->ac[node] <= 0)
            continue;
        for (int m = 0; m < st->nm; m++) {
            int i = node * st->nm + m, n, ng;
            if (st->cpu[i] < 0)
                continue;
            /* measure "executor": the model's GPU completions and this executor's (the
             * authors' rules), "model": all the model's */
            double t = ring_mean_of(&st->done[m], sim_now(s), RULES_NS,
                                    st->measure == MEASURE_EXECUTOR ? st->cpu[i] : -1, true,
                                    &n, &ng);
            double sla = sim_model(s, m)->cfg->slo_ms / 1e3, u = st->u[i];
            if (n && t >= 0.8 * sla)
                u += 1;
            else if (n && t <= 0.2 * sla)
                u -= 1;
            st->dem[m] = u < st->u_min ? st->u_min : u > st->ac[node] ? st->ac[node] : u;
        }
        supervise(s, st, node);
    }
}

static void on_timer(struct sim *s, void *state, uint64_t tag, void *arg)
{
    (void)arg;
    struct roma *st = state;
    if (sim_now(s) > sim_duration_ns(s))
        return;                         /* the drain: the run's measurements are over */
    if (tag == TAG_METRICS) {
        metrics(s, st);
        sim_timer_set(s, sim_now(s) + st->period_ns, TAG_METRICS, NULL);
    } else if (tag == TAG_CTRL) {
        control(s, st);
        sim_timer_set(s, sim_now(s) + st->period_ns, TAG_CTRL, NULL);
    } else {
        rules(s, st);
        sim_timer_set(s, sim_now(s) + RULES_NS, TAG_RULES, NULL);
    }
}

/* ---------------------------------------------------------------- setup */

/* The per-model and per-node arrays (st->nm, st->nn set). */
static int roma_alloc(struct roma *st)
{
    size_t nm = (size_t)st->nm, nn = (size_t)st->nn;
    st->set = calloc(nm, sizeof *st->set);
    st->pg = calloc(nm, sizeof *st->pg);
    st->K = calloc(nm, sizeof *st->K);
    st->a = calloc(nm, sizeof *st->a);
    st->done = calloc(nm, sizeof *st->done);
    st->cpu = malloc(nn * nm * sizeof *st->cpu);
    st->u = calloc(nn * nm, sizeof *st->u);
    st->e_prev = calloc(nn * nm, sizeof *st->e_prev);
    st->ac = calloc(nn, sizeof *st->ac);
    st->qlen = calloc(nm, sizeof *st->qlen);
    st->has_r = calloc(nm, sizeof *st->has_r);
    st->idle = calloc(nn, sizeof *st->idle);
    st->E = calloc(nm, sizeof *st->E);
    st->R = calloc(nm, sizeof *st->R);
    st->head = calloc(nm, sizeof *st->head);
    st->dem = calloc(nm, sizeof *st->dem);
    st->grant = calloc(nm, sizeof *st->grant);
    if (!st->set || !st->pg || !st->K || !st->a || !st->done || !st->cpu || !st->u ||
        !st->e_prev || !st->ac || !st->qlen || !st->has_r || !st->idle || !st->E || !st->R ||
        !st->head || !st->dem || !st->grant)
        return SIM_ENOMEM;
    return 0;
}

/* One CPU executor per node with cores and model, each starting with its share of the node's
 * cores (static: static_cores_per_node split evenly; else u0, at most an even split), and with
 * gains "pole" each model's gains from the plant at the set point. Returns the nodes with
 * cores through *cpu_nodes. */
static int add_cpu_executors(struct sim *s, struct roma *st, const char *path, double period_s,
                             int *cpu_nodes_out)
{
    const struct sim_world *w = sim_world(s);
    int cpu_nodes = 0;
    for (int node = 0; node < st->nn; node++) {
        const struct sim_node_cfg *nd = &w->nodes[node];
        st->ac[node] = nd->cores > 0 ? nd->cores - st->gc : 0;
        if (nd->cores > 0 && st->ac[node] <= 0)
            return sim_err_set(SIM_EINVAL, "%s.gc_cores: %g leaves node \"%s\" (%d cores) none "
                               "for CPU executors", path, st->gc, nd->name, nd->cores);
        double each = st->cpu_mode == CPU_STATIC
                          ? fmin(st->static_cores, st->ac[node]) / st->nm
                          : fmin(st->u0, st->ac[node] / st->nm);
        for (int m = 0; m < st->nm; m++) {
            int i = node * st->nm + m;
            st->cpu[i] = -1;
            if (nd->cores <= 0)
                continue;
            st->u[i] = each;
            int milli = (int)floor(each * 1000 + 1e-9);
            if ((st->cpu[i] = sim_exec_add_cpu(s, node, m, milli < 1 ? 1 : milli)) < 0)
                return sim_out_of_memory(s) ? SIM_ENOMEM  /* said (sim_fail_nomem) */
                                            : SIM_EINVAL; /* the message names model, node */
            if (st->pole && m >= 0) {   /* the plant at the set point and the configured rate */
                const struct sim_model *md = sim_model(s, m);
                double mu = 1e9 / (double)sim_latency_ns(s, m, sim_exec(s, st->cpu[i])->kind, 1);
                double tau0 = st->set[m], rO = md->rate_rps * sim_load_scale(s);
                double k = rO > 0 ? mu * tau0 / rO : 0, b = 1 - period_s / tau0;
                if (roma_pole_gains(k, b, st->q, &st->K[m], &st->a[m]))
                    return sim_err_set(SIM_EINVAL, "%s.gains \"pole\": no gains for model "
                                       "\"%s\" (k %g, b %g, q %g)", path, md->cfg->name, k, b,
                                       st->q);
            }
        }
        cpu_nodes += nd->cores > 0;
    }
    *cpu_nodes_out = cpu_nodes;
    return 0;
}

static int init_with(struct sim *s, const cJSON *p, struct roma *st, int gpu, int cpu,
                     double static_cores)
{
    const char *path = "policy.params";
    int rc;
    const struct sim_world *w = sim_world(s);
    st->gpu_mode = gpu;
    st->cpu_mode = cpu;
    st->static_cores = static_cores;
    if ((rc = sim_params_read(params, p, path, st)) ||
        (rc = sim_check_period(s, "policy.params.period_s", st->period_s, SIM_MAX_FIRINGS)))
        return rc;
    double K = st->K0, a = st->a0, period_s = st->period_s, window_s = st->window_s;
    if (st->alpha <= 0)
        return sim_err_set(SIM_EINVAL, "%s.alpha: expected a fraction in (0, 1], got 0", path);
    if (st->q >= 1)
        return sim_err_set(SIM_EINVAL, "%s.q: expected a pole in [0, 1), got %.15g", path, st->q);
    for (int node = 0; node < w->nnodes; node++)
        if (cJSON_GetObjectItemCaseSensitive(p, "static_cores_per_node") && w->nodes[node].cores > 0 &&
            st->static_cores > w->nodes[node].cores - st->gc)
            return sim_err_set(SIM_EINVAL, "%s.static_cores_per_node: %g is more than node \"%s\" "
                               "has for CPU executors (%g)", path, st->static_cores,
                               w->nodes[node].name, w->nodes[node].cores - st->gc);
    if (st->cpu_mode == CPU_STATIC && st->static_cores <= 0)
        return sim_err_set(SIM_EINVAL, "%s.static_cores_per_node: needed with cpu_control "
                           "\"static\"", path);
    st->pole = st->gains == 1;
    st->period_ns = sim_s_to_ns(period_s);
    st->window_ns = sim_s_to_ns(window_s);
    st->keep_ns = st->window_ns > st->period_ns ? st->window_ns : st->period_ns;
    if (st->cpu_mode == CPU_RULES && st->keep_ns < RULES_NS)
        st->keep_ns = RULES_NS;
    st->nm = sim_model_count(s);
    st->nn = w->nnodes;
    if ((rc = roma_alloc(st)))
        return rc;
    st->rr_last = st->nm - 1;
    int gpu_kind = sim_exec_count(s) > 0 ? sim_exec(s, 0)->kind : -1;
    for (int m = 0; m < st->nm; m++) {
        st->set[m] = st->alpha * sim_model(s, m)->cfg->slo_ms / 1e3;
        st->pg[m] = gpu_kind >= 0 ? (double)sim_latency_ns(s, m, gpu_kind, 1) / 1e9 : 0;
        st->K[m] = K;
        st->a[m] = a;
    }
    int cpu_nodes = 0;
    if ((rc = add_cpu_executors(s, st, path, period_s, &cpu_nodes)))
        return rc;
    if (!cpu_nodes)
        return sim_err_set(SIM_EINVAL, "no node has CPU cores for its CPU executors "
                           "(cluster.nodes[].cores)");
    sim_timer_set(s, st->period_ns, TAG_METRICS, NULL);  /* before the controller's */
    if (st->cpu_mode == CPU_CT)
        sim_timer_set(s, st->period_ns, TAG_CTRL, NULL);
    else if (st->cpu_mode == CPU_RULES)
        sim_timer_set(s, RULES_NS, TAG_RULES, NULL);
    return 0;
}

static int init_roma(struct sim *s, const cJSON *p, void *st)
{
    return init_with(s, p, st, GPU_ROMA, CPU_CT, 0);
}
static int init_rr_ct(struct sim *s, const cJSON *p, void *st)
{
    return init_with(s, p, st, GPU_RR, CPU_CT, 0);
}
static int init_rr_rules(struct sim *s, const cJSON *p, void *st)
{
    return init_with(s, p, st, GPU_RR, CPU_RULES, 0);
}
/* rr-max: every core of a node split evenly (a large static_cores is capped at the node's) */
static int init_rr_max(struct sim *s, const cJSON *p, void *st)
{
    return init_with(s, p, st, GPU_RR, CPU_STATIC, 1e9);
}
static int init_rr_min(struct sim *s, const cJSON *p, void *st)
{
    return init_with(s, p, st, GPU_RR, CPU_STATIC, 1);
}

static void destroy(void *state)
{
    struct roma *st = state;
    for (int m = 0; st->done && m < st->nm; m++)
        free(st->done[m].d);
    free(st->done);
    free(st->set);
    free(st->pg);
    free(st->K);
    free(st->a);
    free(st->cpu);
    free(st->u);
    free(st->e_prev);
    free(st->ac);
    free(st->arr);
    free(st->qlen);
    free(st->has_r);
    free(st->idle);
    free(st->E);
    free(st->R);
    free(st->head);
    free(st->dem);
    free(st->grant);
}

#define ROMA_OPS(var, pname, psummary, pinit)                                                  \
    const struct policy_ops var = {                                                            \
        .name = pname, .summary = psummary, .state_size = sizeof(struct roma),                 \
        .params = params, .init = pinit, .on_request = on_request,                         \
        .on_batch_done = on_batch_done, .on_timer = on_timer, .destroy = destroy,              \
        .needs_no_gpus = true,                                                                 \
    }

ROMA_OPS(policy_roma, "roma", "ROMA: neediest-model GPU heuristic, PI core control per CPU "
         "executor under a node supervisor (ICSOC'21)", init_roma);
ROMA_OPS(policy_rr_ct, "rr-ct", "ROMA baseline: round-robin GPUs, ROMA's PI core control",
         init_rr_ct);
ROMA_OPS(policy_rr_rules, "rr-rules", "ROMA baseline: round-robin GPUs, +-1 core every 15 s "
         "by SLA rules", init_rr_rules);
ROMA_OPS(policy_rr_max, "rr-max", "ROMA baseline: round-robin GPUs, all cores split evenly "
         "(static)", init_rr_max);
ROMA_OPS(policy_rr_min, "rr-min", "ROMA baseline: round-robin GPUs, one core per node split "
         "evenly (static)", init_rr_min);
