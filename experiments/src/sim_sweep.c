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
    long *todo = NULL, ntodo = 0;
    struct sim_store *cs = NULL;        /* the parent's connection: its claims */
    long *waiting = NULL, nwait = 0;    /* points another process holds */
    pid_t *pids = NULL;
    long *pidpt = NULL;
    int rc = sweep_prepare(&w, file, db, sets, nsets, force, quiet, &todo, &ntodo);
    if (rc)
        goto out;
    pids = calloc((size_t)jobs, sizeof *pids);
    pidpt = calloc((size_t)jobs, sizeof *pidpt);
    if (!pids || !pidpt) {
        rc = SIM_ENOMEM;
        goto out;
    }
    bool tty = isatty(STDERR_FILENO) && !quiet;
    if (!quiet)
        fprintf(stderr, "sweep %s: %ld points, %ld already in %s, %ld to run with %d workers\n",
                w.name, w.npoints, w.npoints - ntodo, db, ntodo, jobs);
    /* the parent claims each point before a worker runs it (sweep_claims), so that another
     * process sweeping the same database runs none of them twice: points it holds wait for it */
    waiting = malloc((size_t)(ntodo ? ntodo : 1) * sizeof *waiting);
    long total = ntodo, by_other = 0;
    int64_t holder = 0;
    bool said_wait = false;
    if (!waiting)
        rc = SIM_ENOMEM;
    else
        rc = sim_store_open(db, &cs);
    if (rc)
        goto out;
    fflush(NULL);
    double t0 = sim_wall_seconds();
    pid_t parent = getpid();
    long next = 0, done = 0, failed = 0, refused = 0;
    int running = 0;
    /* Ctrl-C (or SIGTERM): no new points; the workers in flight are stopped (their points
     * were not written: a point is one transaction) and the sweep says what it kept */
    struct sigaction sa = {.sa_handler = on_interrupt}, old_int, old_term;
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    while ((next < ntodo || running > 0 || nwait > 0) && !interrupted) {
        if (next == ntodo && running == 0 && nwait > 0) {   /* what others hold: again */
            if (!said_wait && !quiet)
                fprintf(stderr, "%ssweep %s: %ld point%s run by another process sweeping %s "
                        "(pid %lld): waiting for it\n", tty ? "\n" : "", w.name, nwait,
                        nwait == 1 ? " is" : "s are", db, (long long)holder);
            said_wait = true;
            struct timespec ts = {0, 200 * 1000 * 1000};
            nanosleep(&ts, NULL);
            memcpy(todo, waiting, (size_t)nwait * sizeof *todo);
            ntodo = nwait;
            next = nwait = 0;
            continue;
        }
        while (running < jobs && next < ntodo && !interrupted) {
            struct point cp;
            enum sim_claim cl = SIM_CLAIM_OURS;
            if (sweep_make_point(&w, todo[next], &cp)) {
                rc = SIM_ENOMEM;
                break;
            }
            if (sim_store_point_claim(cs, w.id, cp.key, &cl, &holder)) {
                fprintf(stderr, "servesim sweep: point %ld: %s\n", todo[next], sim_err_msg());
                sweep_point_free(&cp);
                refused++;                  /* the database refuses: no more points */
                next = ntodo;
                nwait = 0;
                break;
            }
            if (cl != SIM_CLAIM_OURS) {
                if (cl == SIM_CLAIM_TAKEN) {
                    waiting[nwait++] = todo[next];
                } else {                    /* stored by the other meanwhile */
                    done++, by_other++;
                    char last[600];
                    snprintf(last, sizeof last, "%s, run by another process", cp.key);
                    if (!quiet)
                        sweep_progress(&w, tty, done, total, failed, t0, last, true);
                }
                sweep_point_free(&cp);
                next++;
                continue;
            }
            sweep_point_free(&cp);
            pid_t pid = fork();
            if (pid < 0) {
                rc = sim_err_set(SIM_EIO, "sweep: fork: %s", strerror(errno));
                break;
            }
            if (pid == 0) {
                /* a worker dies with the sweep (kill -9 included), so that a resumed sweep
                 * never races an orphan for the database or writes a point twice */
                sigaction(SIGINT, &old_int, NULL);
                sigaction(SIGTERM, &old_term, NULL);
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                    _exit(1);
                _exit(run_point(&w, db, todo[next]));
            }
            for (int k = 0; k < jobs; k++)
                if (!pids[k]) {
                    pids[k] = pid;
                    pidpt[k] = todo[next];
                    break;
                }
            next++;
            running++;
        }
        if (running == 0)
            break;
        int status;
        pid_t pid = wait(&status);
        if (pid < 0) {
            if (errno == EINTR)
                continue;               /* (an interrupt ends the loop) */
            rc = sim_err_set(SIM_EIO, "sweep: wait: %s", strerror(errno));
            break;
        }
        long pt = -1;
        for (int k = 0; k < jobs; k++)
            if (pids[k] == pid) {
                pt = pidpt[k];
                pids[k] = 0;
            }
        if (pt < 0)
            continue;
        running--;
        done++;
        bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (!ok)
            failed++;                   /* counted whatever follows */
        if (WIFEXITED(status) && WEXITSTATUS(status) == SWEEP_DB_REFUSED) {
            refused++;                  /* no more points: each would be refused as well */
            next = ntodo;
        }
        struct point p;
        if (sweep_make_point(&w, pt, &p) == 0) {
            sim_store_point_release(cs, w.id, p.key);   /* written, failed or refused */
            if (WIFSIGNALED(status) && !interrupted) {   /* the worker died: record it here */
                struct sim_store *s2 = NULL;
                char msg[96];
                snprintf(msg, sizeof msg, "worker killed by signal %d", WTERMSIG(status));
                struct sim_store_point sp = {.sweep = w.id, .key = p.key,
                                             .settings_json = p.settings, .point = (int)pt};
                if (sim_store_open(db, &s2) == 0)
                    sim_store_point_failed(s2, &sp, msg);
                sim_store_close(s2);
            }
            if (!quiet)
                sweep_progress(&w, tty, done, total, failed, t0, p.key, ok);
            sweep_point_free(&p);
        } else if (!rc) {
            rc = sim_err_set(SIM_ENOMEM, "sweep %s: out of memory after point %ld", w.name, pt);
        }
    }
    if (interrupted) {
        int stopped = running;
        for (int k = 0; k < jobs; k++)
            if (pids[k])
                kill(pids[k], SIGKILL);
        while (running > 0 && (wait(NULL) > 0 || errno == EINTR))
            running--;
        for (int k = 0; k < jobs; k++) {        /* their claims: free for a resumed sweep */
            struct point p;
            if (pids[k] && sweep_make_point(&w, pidpt[k], &p) == 0) {
                sim_store_point_release(cs, w.id, p.key);
                sweep_point_free(&p);
            }
        }
        if (!quiet)
            fputc('\n', stderr);
        /* what the database holds (a worker may have written its point just before) */
        rc = sweep_interrupted(&w, db, stopped);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (!quiet && !interrupted && by_other)
        fprintf(stderr, "sweep %s: %ld of its %ld points were run by another process sweeping "
                "%s (each point is run once)\n", w.name, by_other, total, db);
    if (!quiet && !interrupted)
        sweep_summary(&w, db);
    if (!rc && refused) {
        rc = sweep_refused(&w, db);
    } else if (!rc && failed) {
        rc = sim_err_set(SIM_EIO, "sweep %s: %ld of %ld points failed (see sweep_points.error)",
                         w.name, failed - refused, total);
    }
out:
    sim_store_close(cs);
    free(waiting);
    free(todo);
    free(pids);
    free(pidpt);
    sweep_free(&w);
    return rc;
}
