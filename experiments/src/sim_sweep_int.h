/* sim_sweep_int — what the local sweep (sim_sweep.c, worker processes) and the MPI sweep
 * (sim_sweep_mpi.c, ranks) share, all defined in sim_sweep_core.c: the parsed sweep, its
 * points, preparing the points still to run, running one point into a results store, progress
 * lines and the summary. Calls go one way: sim_sweep.c (the entry point, sim_sweep_run) ->
 * sim_sweep_mpi.c under an MPI launcher -> sim_sweep_core.c; the local runner calls the core
 * directly. Internal to the experiment layer; the public interface is sim_sweep.h. */
#ifndef SIM_SWEEP_INT_H
#define SIM_SWEEP_INT_H

#include <signal.h>
#include <stdbool.h>
#include <cjson/cJSON.h>

struct sim_store;

#define MAX_AXES 16

struct sweep {
    cJSON *json;
    char name[128], id[160], base[4096];
    bool goodput;
    int naxes;
    const char *path[MAX_AXES];         /* NULL: the `cases` axis (objects of overrides) */
    const cJSON *values[MAX_AXES];
    const cJSON **item[MAX_AXES];       /* values[a]'s elements, for picking in O(1) */
    int size[MAX_AXES];
    long npoints;
    const cJSON *labels[MAX_AXES];      /* the axis's values in words (`labels.PATH`), or NULL */
    char **fixed;                       /* "path=value" from `set` and the command line */
    int nfixed;
};

struct point {
    char **sets;                        /* fixed, then the grid's */
    int nsets;
    char *key, *settings;
    char *labels;                       /* {PATH or "case": words} from the file, or NULL */
};

/* Reads the sweep file and computes its identity (w->id). */
int sweep_parse(struct sweep *w, const char *file, const char *const *sets, int nsets);
void sweep_free(struct sweep *w);
int sweep_make_point(const struct sweep *w, long idx, struct point *p /* OUT */);
void sweep_point_free(struct point *p);
/* Parses, validates every point's config, refuses a namesake sweep (unless force) and lists
 * the points db does not hold yet (todo: malloc'd, the caller frees). Under quiet the notes
 * (a warm-up extended as the policy needs) are not printed; warnings are. */
/* The signal that stopped a sweep (set by its handler; sim_sweep_signal reads it). */
extern volatile sig_atomic_t sweep_signal;
int sweep_prepare(struct sweep *w, const char *file, const char *db, const char *const *sets,
                  int nsets, bool force, bool quiet, long **todo /* OUT */,
                  long *ntodo /* OUT */);
/* Runs point idx and writes it (or its failure) into st: 0 when it ran and was written. */
/* Runs point idx and writes it into st: 0, 1 (the point failed; recorded in sweep_points), or
 * SWEEP_DB_REFUSED (the database refused the write: nothing of it is recorded). */
#define SWEEP_DB_REFUSED 3
int sweep_point_into(const struct sweep *w, struct sim_store *st, long idx);
void sweep_progress(const struct sweep *w, bool tty, long done, long total, long failed,
                    double t0, const char *last, bool ok);
void sweep_summary(const struct sweep *w, const char *db);
/* Sets the error of an interrupted sweep (what db holds, how to resume): SIM_EINTR. */
/* A sweep stopped at the first write its database refused: the message (how many points are
 * in it, how to resume) and SIM_EDB. */
int sweep_refused(const struct sweep *w, const char *db);
int sweep_interrupted(const struct sweep *w, const char *db, int stopped);
/* The environment variable that says an MPI launcher started this process, or NULL. */
const char *sweep_mpi_launcher(void);
/* The sweep under MPI (sim_sweep_mpi.c; only where servesim is built with OpenMPI). */
int sweep_mpi_run(const char *file, const char *db, const char *const *sets, int nsets,
                  bool quiet, bool force);

#endif
