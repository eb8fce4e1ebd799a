/* sim_jobs — training jobs (sim_jobs.c): arrivals, placement by a policy, workers
 * added and removed, progress (sim.h has the overview; sim_world.h the progress model). */
#ifndef SIM_JOBS_H
#define SIM_JOBS_H

#include <stdbool.h>
#include <stdint.h>

#include "sim_types.h"

/* ---- training jobs (world.jobs; sim_world.h has the progress model). A job arrives
 * (FUTURE -> QUEUED, policy on_job_arrive) and waits until the policy places it; it is
 * STARTING for its kind's start_s, RUNNING, RECONFIGURING after workers are added, DONE when
 * its iterations are done (its GPUs freed, then on_job_done). Progress is piecewise constant:
 * re-timed at every change, one completion event. Each worker holds a whole GPU, claimed as
 * (SIM_HOLD_WORKER, job id). */
enum sim_job_state { SIM_JOB_FUTURE, SIM_JOB_QUEUED, SIM_JOB_STARTING, SIM_JOB_RUNNING,
                     SIM_JOB_RECONFIGURING, SIM_JOB_DONE };

struct sim_job {
    int id, kind;
    enum sim_job_state state;
    int init_workers, max_workers;
    int nworkers;
    int gpu[SIM_JOB_MAX_WORKERS];      /* worker w's GPU; worker 0 is the chief (a done job
                                          keeps its last workers' GPUs here, nworkers 0) */
    int ps_node;                       /* the parameter server's node */
    int64_t arrival, started, ended;   /* ns (started: placed; -1 until then) */
    double iterations;
    int reconfigs, evictions;          /* worker additions (passes), workers removed */
    int64_t cross_ns;                  /* time it progressed split over nodes */
    int64_t workers_ns[SIM_JOB_MAX_WORKERS];   /* time placed with 1, 2, ... workers, up to
                                                  its last change (sim_job_workers_ns: now) */
};

int sim_job_count(const struct sim *s);
const struct sim_job *sim_job(const struct sim *s, int j);
/* Iterations done by now (<= iterations). */
double sim_job_done(const struct sim *s, int j);
/* Time job j has been placed with n workers (1 <= n <= SIM_JOB_MAX_WORKERS) up to now. */
int64_t sim_job_workers_ns(const struct sim *s, int j, int n);
/* Places queued job j: workers on gpus[0..n) (whole free GPUs, or GPUs the policy claimed
 * for it as (SIM_HOLD_WORKER, j) while gathering them; gpus[0] the chief), its parameter
 * server on ps_node. 0, or -1 with sim_err set (then nothing changed). A job still running
 * at the run's end (duration_s) stays unfinished: its events past the end are not run. */
int sim_job_start(struct sim *s, int j, const int *gpus, int n, int ps_node);
/* Adds n workers on gpus[0..n) to a started job (one reconfiguration; GPUs free or claimed
 * for the job as above): 0 or -1 (sim_err). */
int sim_job_add_workers(struct sim *s, int j, const int *gpus, int n);
/* Removes the worker on GPU g and frees g; refuses the chief (-1, sim_err set). */
int sim_job_remove_worker(struct sim *s, int j, int g);

#endif
