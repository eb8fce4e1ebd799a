/* sim_sweep_mpi — `mpirun -n N servesim sweep SWEEP.json`: the same sweep as sim_sweep.c, its
 * points spread over MPI ranks (built only where CMake finds OpenMPI; SERVESIM_MPI).
 *
 * Rank 0 validates the sweep, lists the points the database lacks, hands them out one at a
 * time to whichever rank is free and is the only process that opens the database: every
 * other rank runs its point into an in-memory results store (the same sim_config_store as a
 * local sweep) and sends the store's image back; rank 0 merges it in one transaction
 * (sim_store_merge), so a point is in the database whole or not at all, exactly as with -j.
 * Rank 0 simulates too, in a second thread, so that `-n 2` has two simulators; only the main
 * thread calls MPI (MPI_THREAD_FUNNELED). Waiting is polling with a 1 ms sleep, never MPI's
 * busy wait, so an idle rank leaves its core to the others.
 *
 * Every rank reads the sweep file, the base config and what it names from the same path (a
 * shared file system, as usual under mpirun); a rank whose sweep identity differs from rank
 * 0's stops the sweep before anything runs. OpenMPI ends the whole job when a rank dies: what
 * rank 0 had merged stays in the database, the points in flight are lost and run again on
 * resume. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <mpi.h>

#include "sim_err.h"
#include "sim_store.h"
#include "sim_sweep.h"
#include "sim_sweep_int.h"
#include "sim_wall.h"

enum { TAG_HELLO = 1, TAG_POINT, TAG_STOP, TAG_RESULT };

/* A result message: this header, then the in-memory store's image. */
struct result_head {
    int64_t point;
    int32_t ok;                         /* 1: the point ran and was written */
    int32_t pad;
};

const char *sim_sweep_mpi_library(char *buf, size_t n)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    v[strcspn(v, ",\n")] = 0;          /* "Open MPI v4.1.4, package: ..." -> the name */
    snprintf(buf, n, "%s", v);
    return buf;
}

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    interrupted = sig;
    sweep_signal = sig;
}

static void nap(void)
{
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
}

/* Runs one point into a fresh in-memory store; the message to send back in *msg. */
static int point_message(const struct sweep *w, long idx, unsigned char **msg, size_t *n)
{
    struct sim_store *st = NULL;
    unsigned char *img = NULL;
    size_t ni = 0;
    struct result_head h = {.point = idx};
    *msg = NULL;
    int rc = sim_store_open(":memory:", &st);
    if (!rc) {
        h.ok = sweep_point_into(w, st, idx) == 0;
        rc = sim_store_image(st, &img, &ni);
    }
    sim_store_close(st);
    if (!rc && !(*msg = malloc(sizeof h + ni)))
        rc = SIM_ENOMEM;
    if (!rc) {
        memcpy(*msg, &h, sizeof h);
        memcpy(*msg + sizeof h, img, ni);
        *n = sizeof h + ni;
    }
    free(img);
    return rc;
}

/* ---- ranks 1..N-1 -------------------------------------------------------------------- */

static int worker(const struct sweep *w, int parse_rc, const char *parse_msg)
{
    char hello[1024];
    if (parse_rc)
        snprintf(hello, sizeof hello, "E%s", parse_msg);
    else
        snprintf(hello, sizeof hello, "I%s", w->id);
    MPI_Send(hello, (int)strlen(hello) + 1, MPI_CHAR, 0, TAG_HELLO, MPI_COMM_WORLD);
    for (;;) {
        MPI_Status s;
        int flag = 0;
        while (!flag) {
            MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &s);
            if (!flag)
                nap();
        }
        int64_t idx = 0;
        MPI_Recv(&idx, 1, MPI_INT64_T, 0, s.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (s.MPI_TAG != TAG_POINT)
            return 0;
        unsigned char *msg = NULL;
        size_t n = 0;
        if (point_message(w, (long)idx, &msg, &n)) {
            /* no image to send: say the point failed without rows (not written; resume
             * runs it again) */
            struct result_head h = {.point = idx, .ok = 0};
            fprintf(stderr, "servesim sweep: point %lld: %s\n", (long long)idx, sim_err_msg());
            MPI_Send(&h, (int)sizeof h, MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
        } else {
            MPI_Send(msg, (int)n, MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
        }
        free(msg);
    }
}

/* ---- rank 0 -------------------------------------------------------------------------- */

struct local {                          /* the point rank 0 simulates in its second thread */
    pthread_t th;
    const struct sweep *w;
    long point;                         /* -1: idle */
    int rc;
    unsigned char *msg;
    size_t n;
    volatile sig_atomic_t done;         /* set by the thread as its last act */
};

static void *local_main(void *arg)
{
    struct local *l = arg;
    l->rc = point_message(l->w, l->point, &l->msg, &l->n);
    __atomic_store_n(&l->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Merges one result message; *ok says whether the point counts as done. */
static void take_result(const struct sweep *w, struct sim_store *st, const unsigned char *msg,
                        size_t n, int from, long *point, bool *ok, bool *refused)
{
    struct result_head h;
    char origin[64];
    *ok = false;
    *point = -1;
    if (n < sizeof h) {
        fprintf(stderr, "servesim sweep: rank %d sent a truncated result (%zu bytes)\n", from, n);
        return;
    }
    memcpy(&h, msg, sizeof h);
    *point = (long)h.point;
    if (n == sizeof h)
        return;                         /* nothing to merge (the rank said why) */
    snprintf(origin, sizeof origin, "rank %d (point %lld)", from, (long long)h.point);
    if (sim_store_merge(st, msg + sizeof h, n - sizeof h, origin)) {
        fprintf(stderr, "servesim sweep: %s\n", sim_err_msg());
        *refused = true;                /* the database refused the write: stop there */
        return;
    }
    *ok = h.ok != 0;
    (void)w;
}

static void stop_all(int size)
{
    int64_t none = 0;
    for (int r = 1; r < size; r++)
        MPI_Send(&none, 1, MPI_INT64_T, r, TAG_STOP, MPI_COMM_WORLD);
}

/* Waits for every rank's hello; a rank that could not read the sweep, or read another one,
 * stops the sweep before anything runs. */
static int hellos(const struct sweep *w, int size)
{
    int rc = 0;
    for (int got = 0; got < size - 1;) {
        MPI_Status s;
        int flag = 0, len = 0;
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_HELLO, MPI_COMM_WORLD, &flag, &s);
        if (!flag) {
            nap();
            continue;
        }
        MPI_Get_count(&s, MPI_CHAR, &len);
        char *m = calloc((size_t)len + 1, 1);
        if (!m)
            return SIM_ENOMEM;
        MPI_Recv(m, len, MPI_CHAR, s.MPI_SOURCE, TAG_HELLO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        got++;
        if (!rc && m[0] == 'E')
            rc = sim_err_set(SIM_EUSAGE, "sweep: rank %d cannot read the sweep: %s (every rank "
                             "reads the sweep file and its base config from the same path)",
                             s.MPI_SOURCE, m + 1);
        else if (!rc && strcmp(m + 1, w->id) != 0)
            rc = sim_err_set(SIM_EUSAGE, "sweep: rank %d reads another sweep (%s) than rank 0 "
                             "(%s): the sweep file, its base config or the --set options differ "
                             "between the ranks' machines", s.MPI_SOURCE, m + 1, w->id);
        free(m);
    }
    return rc;
}

/* A finished point from another rank, if one has come: its result written (take_result),
 * the rank free again. 1 when one came, 0 when none, or an error. */
static int from_rank(struct sweep *w, struct sim_store *st, long *busy, long *pt, bool *ok,
                     bool *refused)
{
    MPI_Status s;
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &flag, &s);
    if (!flag)
        return 0;
    int len = 0;
    MPI_Get_count(&s, MPI_BYTE, &len);
    unsigned char *m = malloc(len > 0 ? (size_t)len : 1);
    if (!m)
        return SIM_ENOMEM;
    MPI_Recv(m, len, MPI_BYTE, s.MPI_SOURCE, TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    take_result(w, st, m, (size_t)len, s.MPI_SOURCE, pt, ok, refused);
    free(m);
    if (*pt < 0)
        *pt = busy[s.MPI_SOURCE];
    busy[s.MPI_SOURCE] = -1;
    return 1;
}

/* Rank 0's own point, if its thread has finished: its result written. Whether it had. */
static bool from_local(struct sweep *w, struct sim_store *st, struct local *loc, long *pt,
                       bool *ok, bool *refused)
{
    if (loc->point < 0 || !__atomic_load_n(&loc->done, __ATOMIC_ACQUIRE))
        return false;
    pthread_join(loc->th, NULL);
    if (loc->rc)
        fprintf(stderr, "servesim sweep: point %ld: %s\n", loc->point, sim_err_msg());
    else
        take_result(w, st, loc->msg, loc->n, 0, pt, ok, refused);
    if (*pt < 0)
        *pt = loc->point;
    free(loc->msg);
    loc->msg = NULL;
    loc->point = -1;
    return true;
}

static int coordinator(struct sweep *w, const char *db, const long *todo, long ntodo, int size,
                       bool quiet)
{
    struct sim_store *st = NULL;
    int rc = sim_store_open(db, &st);
    if (rc)
        return rc;
    long *busy = malloc((size_t)size * sizeof *busy);   /* the point each rank runs, or -1 */
    if (!busy) {
        sim_store_close(st);
        return SIM_ENOMEM;
    }
    for (int r = 0; r < size; r++)
        busy[r] = -1;
    struct local loc = {.w = w, .point = -1};
    bool tty = isatty(STDERR_FILENO) && !quiet;
    if (!quiet)
        fprintf(stderr, "sweep %s: %ld points, %ld already in %s, %ld to run on %d MPI rank%s\n",
                w->name, w->npoints, w->npoints - ntodo, db, ntodo, size, size == 1 ? "" : "s");
    double t0 = sim_wall_seconds();
    long next = 0, done = 0, failed = 0;
    int running = 0;
    bool refused = false;
    while ((next < ntodo || running > 0) && !interrupted) {
        if (refused)
            next = ntodo;               /* hand out no more points: each would be refused */
        bool idle = true;
        for (int r = 1; r < size && next < ntodo; r++)
            if (busy[r] < 0) {
                int64_t idx = todo[next];
                MPI_Send(&idx, 1, MPI_INT64_T, r, TAG_POINT, MPI_COMM_WORLD);
                busy[r] = todo[next++];
                running++;
            }
        if (loc.point < 0 && next < ntodo) {
            loc.point = todo[next++];
            loc.done = 0;
            if (pthread_create(&loc.th, NULL, local_main, &loc) != 0) {
                rc = sim_err_set(SIM_EIO, "sweep: cannot start a thread: %s", strerror(errno));
                loc.point = -1;
                break;
            }
            running++;
        }
        long pt = -1;
        bool ok = false;
        int got = from_rank(w, st, busy, &pt, &ok, &refused);
        if (got < 0) {
            rc = got;
            break;
        }
        if (got || from_local(w, st, &loc, &pt, &ok, &refused))
            idle = false;
        if (idle) {
            nap();
            continue;
        }
        running--;
        done++;
        if (!ok)
            failed++;
        struct point p;
        if (!quiet && sweep_make_point(w, pt, &p) == 0) {
            sweep_progress(w, tty, done, ntodo, failed, t0, p.key, ok);
            sweep_point_free(&p);
        }
    }
    sim_store_close(st);
    free(busy);
    if (interrupted || rc) {
        if (!quiet)
            fputc('\n', stderr);
        if (!rc)
            rc = sweep_interrupted(w, db, running);
        /* the ranks (and rank 0's thread) may be inside a point: end the job */
        fprintf(stderr, "servesim: %s\n", sim_err_msg());
        fflush(NULL);
        MPI_Abort(MPI_COMM_WORLD, rc == SIM_EINTR ? 128 + (sweep_signal ? sweep_signal : SIGINT) : 1);
    }
    stop_all(size);
    if (!quiet)
        sweep_summary(w, db);
    if (refused)
        rc = sweep_refused(w, db);
    else if (failed)
        rc = sim_err_set(SIM_EIO, "sweep %s: %ld of %ld points failed (see sweep_points.error)",
                         w->name, failed, ntodo);
    return rc;
}

int sweep_mpi_run(const char *file, const char *db, const char *const *sets, int nsets,
                  bool quiet, bool force)
{
    int provided = 0, rank = 0, size = 1, rc;
    int argc = 0;
    char **argv = NULL;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return sim_err_set(SIM_EIO, "sweep: MPI_Init_thread failed");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    struct sweep w;
    memset(&w, 0, sizeof w);
    if (rank != 0) {
        char msg[1000] = "";
        rc = sweep_parse(&w, file, sets, nsets);
        if (rc)
            snprintf(msg, sizeof msg, "%s", sim_err_msg());
        worker(&w, rc, msg);
        sweep_free(&w);
        MPI_Finalize();
        return 0;                       /* rank 0 reports for the whole sweep */
    }
    long *todo = NULL, ntodo = 0;
    rc = sweep_prepare(&w, file, db, sets, nsets, force, quiet, &todo, &ntodo);
    if (!rc && provided < MPI_THREAD_FUNNELED)
        rc = sim_err_set(SIM_EIO, "sweep: the MPI library gives no thread support "
                         "(MPI_THREAD_FUNNELED), which rank 0 needs to simulate beside "
                         "handing out points");
    int hrc = rc ? 0 : hellos(&w, size);
    if (!rc)
        rc = hrc;
    if (rc) {
        stop_all(size);
    } else {
        struct sigaction sa = {.sa_handler = on_interrupt}, old_int, old_term;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
        rc = coordinator(&w, db, todo, ntodo, size, quiet);
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
    }
    free(todo);
    sweep_free(&w);
    MPI_Finalize();
    return rc;
}
