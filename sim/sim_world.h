/* sim_world — the world config: the validated C structure an engine is built from.
 *
 * The experiment layer (experiments/src/sim_config.c) turns a JSON config into this; the
 * engine never sees JSON or the config file's format. Everything here is plain data in the
 * engine's terms: the cluster, the models and their latency profiles (and how a profile is
 * evaluated), an optional application (DAG of the models), the network, the policy and the
 * autoscaler (their tables, and their parameters as the layers above parsed them), metrics.
 * A world is immutable while engines run: a goodput search builds many engines from one. */
#ifndef SIM_WORLD_H
#define SIM_WORLD_H

#include <stdbool.h>
#include <stdint.h>

#include "sim_llm_cost.h"

#define SIM_NAME_MAX 64
#define SIM_MAX_KINDS 8

enum sim_prof_form { SIM_PROF_LINEAR, SIM_PROF_QUADRATIC, SIM_PROF_TABLE };

/* How a batch's duration varies around the profile's l(b), which stays its mean: not at all
 * (SIM_SVC_NONE: exactly l(b)), or l(b) (shift + X), X lognormal or gamma with mean
 * 1 - shift and standard deviation cv: cv is the duration's coefficient of variation and
 * shift the share of it that never varies. Both per batch size 1..n (the last value holds for
 * larger batches). The engine draws X per batch from the executor's own stream. */
enum sim_svc_dist { SIM_SVC_NONE, SIM_SVC_LOGNORMAL, SIM_SVC_GAMMA };

struct sim_service {
    enum sim_svc_dist dist;
    int ncv, nshift;
    double *cv, *shift;                /* owned; shift NULL: 0 */
};

/* A cv below this is taken as 0 (exactly l(b)): its spread is under a millionth of the batch,
 * below the clock's nanoseconds for batches under a millisecond, and a gamma of shape 1/cv^2
 * beyond 1e12 is no longer a distribution GSL can draw from. */
#define SIM_SVC_CV_MIN 1e-6

/* The cv and shift of batch size b (>= 1). */
void sim_service_at(const struct sim_service *v, int b, double *cv, double *shift);
/* X's parameters for a duration of coefficient of variation cv (> 0) and constant share
 * shift: lognormal (*p1 = mu, *p2 = sigma) or gamma (*p1 = shape, *p2 = scale), by moments
 * (X has mean 1 - shift and standard deviation cv). */
void sim_service_xparams(enum sim_svc_dist d, double cv, double shift, double *p1, double *p2);
/* The q-quantile (0 < q < 1) of a batch of b's duration over its mean (1 with no variation). */
double sim_service_quantile(const struct sim_service *v, int b, double q);

/* A latency profile over batch size b >= 1, in milliseconds:
 * linear l(b) = alpha*b + beta (Symphony); quadratic d(b) = a*b^2 + b*b + c (FA2);
 * table: latency_ms[b-1] measured per batch size, extended linearly past its end. */
struct sim_profile {
    enum sim_prof_form form;
    double alpha_ms, beta_ms;          /* linear */
    double a_ms, b_ms, c_ms;           /* quadratic */
    int table_n;
    double *table_ms;                  /* table, owned */
    struct sim_service svc;            /* variation around l(b) (none by default) */
};

double sim_profile_ms(const struct sim_profile *p, int b);

enum { SIM_SIZE_NONE, SIM_SIZE_MEAN, SIM_SIZE_MAX };

struct sim_model_cfg {
    char name[SIM_NAME_MAX];
    double slo_ms;
    int max_batch;                     /* >= 1 (the parser derives it when the file has 0) */
    double share;                      /* explicit popularity; < 0 when not given */
    double weights_mb, static_mb, dynamic_mb;  /* dynamic: activations at max_batch */
    double load_ms;                    /* time to load onto an executor */
    double stack_ms;                   /* the serving stack's latency per request in front of
                                        * the model (a REST API, JSON decoding): added to every
                                        * response whichever executor served it, occupying none */
    int sized;                         /* requests carry a size factor (workload.sizes) that
                                        * multiplies their batch's standalone time: 0 none,
                                        * SIM_SIZE_MEAN the batch's mean size (work adds up),
                                        * SIM_SIZE_MAX its largest (padded to the longest) */
    int nprof;
    char prof_kind[SIM_MAX_KINDS][SIM_NAME_MAX];
    struct sim_profile prof[SIM_MAX_KINDS];
    /* An LLM model (llm_on): served by iterations on replicas (sim_llm.h), its requests
     * carrying prompt and output tokens; its profiles above are then unused. */
    bool llm_on;
    struct sim_llm_cfg llm;
};

/* Index of `kind` in model m's profiles, or -1. */
int sim_model_cfg_kind(const struct sim_model_cfg *m, const char *kind);
/* Frees the profiles' tables (not m itself). */
void sim_model_cfg_free(struct sim_model_cfg *m);

/* ---- applications (DAG pipelines; docs/config.md `application`) ----
 * Every stage names a model of the world; a model appears at most once on a path, every
 * model is on some path, and the union of the paths' edges is acyclic. With an application
 * every arrival is a request of the application: its path is drawn at arrival with
 * probability `prob` (stream "application.paths"), its deadline is arrival + the path's SLA,
 * and it visits the path's models in order. The path stays inside the engine: a policy
 * learns the next model only when a stage completes. */
#define SIM_APP_MAX_STAGES 16
#define SIM_APP_MAX_PATHS 256

struct sim_app_path {
    char name[SIM_NAME_MAX];
    int nstages;
    int stages[SIM_APP_MAX_STAGES];    /* model indices, in order */
    double sla_ms;
    double weight, prob;               /* prob = weight / sum of weights */
};

struct sim_app {
    char name[SIM_NAME_MAX];
    int npaths;
    struct sim_app_path *paths;
};

void sim_app_free(struct sim_app *a);
/* Mean request rate at model m when the application receives `rate` requests/s: the sum of
 * rate * prob over the paths through m. */
double sim_app_model_rate(const struct sim_app *a, int m, double rate);

enum sim_jitter { SIM_JIT_NONE, SIM_JIT_EXPONENTIAL, SIM_JIT_LOGNORMAL };
/* How a model's arrivals are split over several frontends: a stream per frontend, or one
 * stream whose requests are dealt round robin or at random. */
enum sim_split { SIM_SPLIT_INDEPENDENT, SIM_SPLIT_ROUND_ROBIN, SIM_SPLIT_RANDOM };

/* A worker node (cluster.nodes[i]; a config with cluster.gpus is one node without cores):
 * GPU executors of gpu_kind, and CPU cores that policies allocate to CPU executors bound to
 * one model (sim_exec_add_cpu), whose speed is the model's profile for cpu_kind (the latency
 * on one core) scaled linearly by the cores allocated. */
enum sim_cpu_scaling { SIM_CPU_LINEAR, SIM_CPU_MEASURED };

/* Models a configuration may have: the engine keeps per-model queues, statistics and latency
 * histograms (about 150 KB each), so 10,000 is about 1.5 GB. */
#define SIM_MAX_MODELS 10000

struct sim_node_cfg {
    char name[SIM_NAME_MAX];
    int cores;                         /* CPU cores for CPU executors (0: none) */
    /* linear: speed = cores x one core's; measured: the model's latency at u cores is
     * interpolated in rate between its profiles for "<base>@<n>core" (n = 1, 2, ...: kinds
     * written by servesim-calibrate --threads; cpu_kind is the one-core kind), l(1)/u below
     * one core, the largest n's above it */
    enum sim_cpu_scaling cpu_scaling;
    int gpus;                          /* GPU executors it starts with */
    char gpu_kind[SIM_NAME_MAX], cpu_kind[SIM_NAME_MAX];
};

/* Executors that run several batches at once (cluster.lanes) and how batches running on one
 * device slow each other down (cluster.interference; sim_device.c has the formulas):
 *  none       every batch runs at its standalone speed (a CPU executor's at its cores);
 *  parametric GPU executors: a host phase host_ms + host_ms_per_request * b that lanes
 *             overlap, then a device phase shared by the n batches in it, each at speed
 *             1 / (n (1 + kappa_gpu (n - 1))); CPU executors: a batch of p inter-op and t
 *             intra-op threads runs at 1 / ([f + (1 - f)/t + overhead (t - 1)] a(p) sigma(D))
 *             of its one-thread standalone speed, a(p) = 1/pi + (1 - 1/pi)/min(p, width),
 *             D = sum of t/a(p) over the running batches, C the executor's cores and
 *             sigma(D) = (1 + mu min(D, C)/C) max(1, D/C) (1 + kappa max(0, D/C - 1));
 *  table      each batch's standalone time times factor(n, p, t) from measured rows (n
 *             batches running; linear in n between rows, factor(K) n / K past the largest K).
 * On CPU executors, parametric and table replace the cores' linear or measured scaling: the
 * profile is the one-thread latency and threads make the speed. */
enum sim_interference { SIM_INTF_NONE, SIM_INTF_PARAMETRIC, SIM_INTF_TABLE };

struct sim_intf_row {
    int n, p, t;
    double factor;
};

#define SIM_ROUGH_TERMS 8

struct sim_intf_cfg {
    enum sim_interference model;
    double kappa_gpu, host_ms, host_ms_per_request;        /* parametric, GPU */
    double f, overhead, pi, width, mu, kappa;               /* parametric, CPU */
    /* parametric, CPU: the optional seeded roughness of the landscape, a factor on each
     * batch's time, eps(c) = exp(eta sum_j a_j cos(2 pi w_j . c / len + phi_j) / sqrt(8)) over
     * c = (k, p, t) (the executor's lanes, the batch's threads); eta 0 = off. The terms (a_j
     * normal, w_j random unit vectors, phi_j uniform) are drawn from rough_seed by
     * sim_dev_rough_draw, so the landscape is the machine's, the same for every run seed. */
    double rough_eta, rough_len;
    uint64_t rough_seed;
    double rough_a[SIM_ROUGH_TERMS], rough_w[SIM_ROUGH_TERMS][3], rough_phi[SIM_ROUGH_TERMS];
    int nrows;                                              /* table: sorted by (p, t, n) */
    struct sim_intf_row *rows;
};

/* Draws the roughness terms of c from c->rough_seed (GSL's MT19937; sim_device.c). */
void sim_intf_rough_draw(struct sim_intf_cfg *c);
/* The roughness eps(k, p, t) of a CPU configuration (1 when rough_eta is 0). */
double sim_intf_roughness(const struct sim_intf_cfg *c, int k, int p, int t);

/* Training jobs (DynamoML's), a second kind of work beside requests: data-parallel jobs of
 * one parameter server and n workers, each worker holding a whole GPU of the ledger, worker 0
 * the chief. A job of kind k needs `iterations`; with n workers it progresses at
 * speedup[n-1] / iter_s iterations per second, divided by cross_node when its workers and
 * its parameter server are not all on one node; no progress for start_s after it is placed,
 * for reconfig_s after workers are added (checkpoint and restart), for shrink_s after one is
 * removed. sim_jobs.c runs them; a policy places them (sim.h). */
#define SIM_JOB_MAX_WORKERS 16

struct sim_job_kind {
    char name[SIM_NAME_MAX];
    double iterations, iter_s;
    int nspeedup;                      /* speedup[0] = 1 worker's (normally 1) */
    double speedup[SIM_JOB_MAX_WORKERS];
    double cross_node;                 /* >= 1 */
    double start_s, reconfig_s, shrink_s;
};

struct sim_job_cfg {
    int kind;                          /* index into job_kinds */
    double arrival_s;
    int init_workers, max_workers;     /* 1 <= init <= max <= kind's nspeedup */
};

struct policy_ops;
struct sim_autoscaler_ops;
struct cJSON;

struct sim_world {
    char name[128];                    /* the experiment's name, for results */
    uint64_t seed;
    double duration_s, warmup_s, drain_s;
    /* reporting only: the experiment layer extended the config's warm-up (warmup_config_s)
     * to warmup_s, the policy's convergence time (docs/config.md, keep_warmup) */
    bool warmup_extended;
    double warmup_config_s;

    /* the cluster: GPU executors of one kind (every node's), and the nodes they are on */
    int gpus, max_gpus;                /* at start (all nodes); upper bound for sim_exec_add */
    char gpu_kind[SIM_NAME_MAX];
    int nnodes;
    struct sim_node_cfg *nodes;        /* their GPUs: the GPU ledger (sim.h) */
    double gpu_memory_mb;              /* 0 = unlimited */
    double page_mb;                    /* weights cache page */
    double load_gb_s;                  /* weights transfer when a model has no load_ms */
    double provision_s;                /* delay before an added executor is up */
    double exec_cv;                    /* execution-time jitter: lognormal, mean 1, this cv */
    double plan_quantile;              /* policies plan with this quantile of a batch's
                                        * duration (sim_latency_ns); 0: the mean l(b) */
    int lanes;                         /* batches an executor runs at once (>= 1) */
    struct sim_intf_cfg intf;          /* how they share the device */

    int nmodels;
    struct sim_model_cfg *models;
    const struct sim_app *app;         /* or NULL */
    double rate_rps;                   /* mean total arrival rate at load scale 1 */
    double *model_rps;                 /* [nmodels] mean offered rate per model at scale 1 */

    int frontends;
    enum sim_split frontend_split;
    double ctrl_us, data_us_per_request, resp_us;
    double host_us_per_batch;          /* a GPU executor's host time around each batch
                                        * (launch, synchronisation): it runs nothing else
                                        * then, and the batch's requests wait for it */
    double host_us_p99;                /* > host_us_per_batch: that time is drawn per batch,
                                        * lognormal with host_us_per_batch as its median and
                                        * this as its p99 (stream "cluster.host"); 0: fixed */
    /* The central controller's own time (controller.*; 0 threads: free and instant): each
     * decision (a policy callback) that charges time runs on the first free of `threads`
     * scheduler threads, so decisions queue when all are busy, and the batches it
     * dispatches centrally are ready only once its work up to them is done. Charged: each
     * request admitted to a central queue, each batch dispatched centrally, and each
     * candidate a policy says it examined (sim_ctrl_examine). */
    struct sim_ctrl_cfg {
        int threads;
        double us_per_request, us_per_candidate, us_per_batch;
    } ctrl;
    enum sim_jitter jitter;
    double jitter_mean_us, jitter_sigma;

    /* The policy's table and its parameters, handed to its init unread by the engine. */
    const struct policy_ops *policy;
    const struct cJSON *policy_params;
    /* The autoscaler's table (NULL: none) and its parameters, likewise opaque here. */
    const struct sim_autoscaler_ops *autoscaler;
    const void *autoscale_params;

    double percentile;                 /* e.g. 99: the SLO predicate of the results */
    long max_live_requests;            /* 0: SIM_MAX_LIVE_REQUESTS (sim.h) */
    const char *load_key;              /* what sets the offered load, for messages (the
                                        * experiment layer's key; NULL: "the offered load") */
    uint64_t max_events;               /* > 0: the run stops with an error past this many
                                        * events (a harness's budget; 0: no limit) */
    double sample_period_s;            /* 0 = no time series and no control ticks */

    /* training jobs (none: njobs 0), in arrival order */
    int njob_kinds, njobs;
    struct sim_job_kind *job_kinds;
    struct sim_job_cfg *jobs;
    /* notebooks (DynamoML's modeling work; none: nnotebooks 0): each alternates idle periods
     * (exponential, mean nb_idle_s) and bursts of GPU work (exponential, mean nb_burst_s of a
     * whole GPU's time; fixed: exactly the means) on the GPU share the policy places it on
     * (sim_notebook_place), claiming `request` of it; a GPU's notebooks take turns holding its
     * token for quota_s each, chosen by their use over the last window_s (sim_shares.c): below
     * request x window first, up to limit x window. */
    int nnotebooks;
    double nb_request, nb_limit, nb_idle_s, nb_burst_s, nb_window_s, nb_quota_s;
    bool nb_fixed;
    /* end_when_done: the run ends when the last job ends, but not before end_not_before_s
     * (the clients' schedule), and at the latest at duration_s */
    bool end_when_done;
    double end_not_before_s;
};

#endif
