/* sim_sweep — `servesim sweep SWEEP.json -j N`: a grid of runs (or goodput searches) over a
 * base config, run by N worker processes, each point written to the results database in the
 * same transaction as its sweep_points row as soon as it finishes. See sim_sweep.h. */
#include "sim_sweep.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim_err.h"
#include "sim_wall.h"
#include "sim_store.h"
#include "sim_sweep_int.h"

/* One point in a worker process: run, write, exit status 0 / 1. */
static int run_point(const struct sweep *w, const char *db, long idx)
{
    struct sim_store *st = NULL;
    if (sim_store_open(db, &st)) {
        fprintf(stderr, "servesim sweep: point %ld: %s\n", idx, sim_err_msg());
        return SWEEP_DB_REFUSED;
    }
    int rc = sweep_point_into(w, st, idx);
    sim_store_close(st);
    return rc;
}

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    interrupted = sig;
    sweep_signal = sig;
}

#ifndef SERVESIM_MPI
const char *sim_sweep_mpi_library(char *buf, size_t n)
{
    snprintf(buf, n, "none");
    return buf;
}
#endif

/* The workers of a sweep on one machine and what the parent knows of them. */
struct pool {
    struct sweep *w;
    const char *db;
    struct sim_store *cs;               /* the parent's connection: its claims */
    long *todo, ntodo;
    long *waiting, nwait;               /* points another process holds */
    pid_t *pids;
    long *pidpt;                        /* the point each worker runs */
    int jobs, running;
    long next, done, failed, refused, total, by_other;
    int64_t holder;                     /* who holds the points waited for */
    double t0;
    bool tty, quiet;
    pid_t parent;
    struct sigaction old_int, old_term;
};

/* Starts workers on the next points while there is room; each point is claimed first (a
 * point another process holds waits, one it stored meanwhile counts as done). */
static int pool_launch(struct pool *pl)
{
    struct sweep *w = pl->w;
    while (pl->running < pl->jobs && pl->next < pl->ntodo && !interrupted) {
        struct point cp;
        enum sim_claim cl = SIM_CLAIM_OURS;
        long pt = pl->todo[pl->next];
        if (sweep_make_point(w, pt, &cp))
            return SIM_ENOMEM;
        if (sim_store_point_claim(pl->cs, w->id, cp.key, &cl, &pl->holder)) {
            fprintf(stderr, "servesim sweep: point %ld: %s\n", pt, sim_err_msg());
            sweep_point_free(&cp);
            pl->refused++;              /* the database refuses: no more points */
            pl->next = pl->ntodo;
            pl->nwait = 0;
            return 0;
        }
        if (cl != SIM_CLAIM_OURS) {
            if (cl == SIM_CLAIM_TAKEN) {
                pl->waiting[pl->nwait++] = pt;
            } else {                    /* stored by the other meanwhile */
                pl->done++, pl->by_other++;
                char last[600];
                snprintf(last, sizeof last, "%s, run by another process", cp.key);
                if (!pl->quiet)
                    sweep_progress(w, pl->tty, pl->done, pl->total, pl->failed, pl->t0, last,
                                   true);
            }
            sweep_point_free(&cp);
            pl->next++;
            continue;
        }
        sweep_point_free(&cp);
        pid_t pid = fork();
        if (pid < 0)
            return sim_err_set(SIM_EIO, "sweep: fork: %s", strerror(errno));
        if (pid == 0) {
            /* a worker dies with the sweep (kill -9 included), so that a resumed sweep
             * never races an orphan for the database or writes a point twice */
            sigaction(SIGINT, &pl->old_int, NULL);
            sigaction(SIGTERM, &pl->old_term, NULL);
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != pl->parent)
                _exit(1);
            _exit(run_point(w, pl->db, pt));
        }
        for (int k = 0; k < pl->jobs; k++)
            if (!pl->pids[k]) {
                pl->pids[k] = pid;
                pl->pidpt[k] = pt;
                break;
            }
        pl->next++;
        pl->running++;
    }
    return 0;
}

/* Worker `pid` ended with `status`: its point's claim is released, a worker killed by a
 * signal has its point recorded as failed here, and the progress line says so. */
static int pool_reaped(struct pool *pl, pid_t pid, int status)
{
    struct sweep *w = pl->w;
    long pt = -1;
    for (int k = 0; k < pl->jobs; k++)
        if (pl->pids[k] == pid) {
            pt = pl->pidpt[k];
            pl->pids[k] = 0;
        }
    if (pt < 0)
        return 0;
    pl->running--;
    pl->done++;
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok)
        pl->failed++;                   /* counted whatever follows */
    if (WIFEXITED(status) && WEXITSTATUS(status) == SWEEP_DB_REFUSED) {
        pl->refused++;                  /* no more points: each would be refused as well */
        pl->next = pl->ntodo;
    }
    struct point p;
    if (sweep_make_point(w, pt, &p) != 0)
        return sim_err_set(SIM_ENOMEM, "sweep %s: out of memory after point %ld", w->name, pt);
    sim_store_point_release(pl->cs, w->id, p.key);   /* written, failed or refused */
    if (WIFSIGNALED(status) && !interrupted) {       /* the worker died: record it here */
        struct sim_store *s2 = NULL;
        char msg[96];
        snprintf(msg, sizeof msg, "worker killed by signal %d", WTERMSIG(status));
        struct sim_store_point sp = {.sweep = w->id, .key = p.key, .settings_json = p.settings,
                                     .labels_json = p.labels,
                                     .point = (int)pt};
        if (sim_store_open(pl->db, &s2) == 0)
            sim_store_point_failed(s2, &sp, msg);
        sim_store_close(s2);
    }
    if (!pl->quiet)
        sweep_progress(w, pl->tty, pl->done, pl->total, pl->failed, pl->t0, p.key, ok);
    sweep_point_free(&p);
    return 0;
}

/* Ctrl-C: the workers in flight are stopped (their points were not written: a point is one
 * transaction), their claims released; returns what the database holds, said. */
static int pool_stop(struct pool *pl)
{
    int stopped = pl->running;
    for (int k = 0; k < pl->jobs; k++)
        if (pl->pids[k])
            kill(pl->pids[k], SIGKILL);
    while (pl->running > 0 && (wait(NULL) > 0 || errno == EINTR))
        pl->running--;
    for (int k = 0; k < pl->jobs; k++) {        /* their claims: free for a resumed sweep */
        struct point p;
        if (pl->pids[k] && sweep_make_point(pl->w, pl->pidpt[k], &p) == 0) {
            sim_store_point_release(pl->cs, pl->w->id, p.key);
            sweep_point_free(&p);
        }
    }
    if (!pl->quiet)
        fputc('\n', stderr);
    /* what the database holds (a worker may have written its point just before) */
    return sweep_interrupted(pl->w, pl->db, stopped);
}

/* Runs the points with `jobs` worker processes until all are done (waiting for those
 * another process holds) or an interrupt. */
static int pool_run(struct pool *pl)
{
    int rc = 0;
    bool said_wait = false;
    while ((pl->next < pl->ntodo || pl->running > 0 || pl->nwait > 0) && !interrupted) {
        if (pl->next == pl->ntodo && pl->running == 0 && pl->nwait > 0) {   /* others': again */
            if (!said_wait && !pl->quiet)
                fprintf(stderr, "%ssweep %s: %ld point%s run by another process sweeping %s "
                        "(pid %lld): waiting for it\n", pl->tty ? "\n" : "", pl->w->name,
                        pl->nwait, pl->nwait == 1 ? " is" : "s are", pl->db,
                        (long long)pl->holder);
            said_wait = true;
            struct timespec ts = {0, 200 * 1000 * 1000};
            nanosleep(&ts, NULL);
            memcpy(pl->todo, pl->waiting, (size_t)pl->nwait * sizeof *pl->todo);
            pl->ntodo = pl->nwait;
            pl->next = pl->nwait = 0;
            continue;
        }
        int lrc = pool_launch(pl);
        if (lrc) {                      /* no more points; the running ones are waited for */
            rc = rc ? rc : lrc;
            pl->next = pl->ntodo;
            pl->nwait = 0;
        }
        if (pl->running == 0)
            break;
        int status;
        pid_t pid = wait(&status);
        if (pid < 0) {
            if (errno == EINTR)
                continue;               /* (an interrupt ends the loop) */
            rc = sim_err_set(SIM_EIO, "sweep: wait: %s", strerror(errno));
            break;
        }
        int r2 = pool_reaped(pl, pid, status);
        if (!rc)
            rc = r2;
    }
    return rc;
}

int sim_sweep_run(const char *file, const char *db, int jobs, const char *const *sets, int nsets,
                  bool quiet, bool force)
{
    const char *mpi = sweep_mpi_launcher();
    if (mpi) {
#ifdef SERVESIM_MPI
        return sweep_mpi_run(file, db, sets, nsets, quiet, force);
#else
        return sim_err_set(SIM_EUSAGE, "sweep: started by an MPI launcher (%s is set), but this "
                           "servesim was built without MPI. Install OpenMPI (Debian: apt-get "
                           "install libopenmpi-dev openmpi-bin) and rebuild (CMake finds it), "
                           "or run the sweep on one machine with -j N", mpi);
#endif
    }
    struct sweep w;
    memset(&w, 0, sizeof w);
    struct pool pl = {.w = &w, .db = db, .jobs = jobs, .quiet = quiet};
    int rc = sweep_prepare(&w, file, db, sets, nsets, force, quiet, &pl.todo, &pl.ntodo);
    if (rc)
        goto out;
    pl.pids = calloc((size_t)jobs, sizeof *pl.pids);
    pl.pidpt = calloc((size_t)jobs, sizeof *pl.pidpt);
    if (!pl.pids || !pl.pidpt) {
        rc = SIM_ENOMEM;
        goto out;
    }
    pl.tty = isatty(STDERR_FILENO) && !quiet;
    if (!quiet)
        fprintf(stderr, "sweep %s: %ld points, %ld already in %s, %ld to run with %d workers\n",
                w.name, w.npoints, w.npoints - pl.ntodo, db, pl.ntodo, jobs);
    /* the parent claims each point before a worker runs it (sweep_claims), so that another
     * process sweeping the same database runs none of them twice: points it holds wait for it */
    pl.waiting = malloc((size_t)(pl.ntodo ? pl.ntodo : 1) * sizeof *pl.waiting);
    pl.total = pl.ntodo;
    if (!pl.waiting)
        rc = SIM_ENOMEM;
    else
        rc = sim_store_open(db, &pl.cs);
    if (rc)
        goto out;
    fflush(NULL);
    pl.t0 = sim_wall_seconds();
    pl.parent = getpid();
    /* Ctrl-C (or SIGTERM): no new points; the workers in flight are stopped and the sweep
     * says what it kept */
    struct sigaction sa = {.sa_handler = on_interrupt};
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    sigaction(SIGINT, &sa, &pl.old_int);
    sigaction(SIGTERM, &sa, &pl.old_term);
    rc = pool_run(&pl);
    if (interrupted)
        rc = pool_stop(&pl);
    sigaction(SIGINT, &pl.old_int, NULL);
    sigaction(SIGTERM, &pl.old_term, NULL);
    if (!quiet && !interrupted && pl.by_other)
        fprintf(stderr, "sweep %s: %ld of its %ld points were run by another process sweeping "
                "%s (each point is run once)\n", w.name, pl.by_other, pl.total, db);
    if (!quiet && !interrupted)
        sweep_summary(&w, db);
    if (!rc && pl.refused) {
        rc = sweep_refused(&w, db);
    } else if (!rc && pl.failed) {
        rc = sim_err_set(SIM_EIO, "sweep %s: %ld of %ld points failed (see sweep_points.error)",
                         w.name, pl.failed - pl.refused, pl.total);
    }
out:
    sim_store_close(pl.cs);
    free(pl.waiting);
    free(pl.todo);
    free(pl.pids);
    free(pl.pidpt);
    sweep_free(&w);
    return rc;
}
