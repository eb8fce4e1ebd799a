/* clockwork_int — what the Clockwork policy's two files share: its constants and state,
 * small accessors, and the functions that cross between clockwork.c (estimates, the
 * WorkerTracker, INFER4 and INFER5 scheduling, events, setup) and clockwork_load.c (the load
 * tracker and LOAD / EVICT decisions). */
#ifndef CLOCKWORK_INT_H
#define CLOCKWORK_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "policy.h"
#include "sim_bits.h"

#define MAXB 64                     /* largest supported batch size */
#define WIN 10                      /* estimate window */
#define FUTURE_NS 1000000           /* earliest plan: now + 1 ms */
#define LAG_NS 10000000
#define BUFFER_NS 5000000
#define MAX_WEIGHTS_SLO_NS 25000000
#define LOAD_SPACING_NS 100000

enum { TAG_TIMEOUT = 1, TAG_INFER = 2, TAG_PCIE = 3 };

struct est {                        /* a duration estimate from the last WIN measurements */
    double v[WIN];
    int n, pos;
    int64_t value;
};

struct action { int64_t size, begin; };

struct tracker {                    /* WorkerTracker */
    struct action *a;
    int head, n, cap;
    int64_t sum, work_begin;
};

struct gpu {
    struct tracker exec, pcie;
    int64_t last_load;
    int loads;                      /* outstanding */
    bool pcie_shut;                 /* the PCIe window was found shut and has not changed
                                     * since (no load result, its timer not yet fired) */
    int held;                       /* models loaded or loading */
    uint64_t infer_timer, pcie_timer;
    int64_t infer_at, pcie_at;
    int64_t full_until;             /* the exec window is full before this (0: not known) */
    double O, wt;                   /* load tracker: outstanding work (ms), weight C / O */
};

struct model {                      /* what the strategy loops read first, the estimates last */
    int64_t exec_slo, weights_slo;
    int64_t removed;                /* requests removed from the head of the queue so far */
    int nsizes, sizes[MAXB];        /* supported batch sizes, ascending */
    int64_t ev[MAXB + 1];           /* est[b].value, packed for the strategy loops */
    int inflight;                   /* requests executing */
    int held_by;                    /* GPUs where it is loaded or loading: hold[0..held_by) */
    int *hold, caphold;             /* in the order they took it */
    double *alloc;                  /* E_m's share on hold[i] */
    double absorb;                  /* load tracker: the part of W_m its holders absorb */
    bool stale;                     /* changed since the tracker last spread it */
    bool listed;                    /* in the list lz of this schedule_infer call */
    bool sorted;                    /* the queue is in arrival order, so deadlines rise along
                                     * it: the engine keeps it in deadline order, which with
                                     * one SLO per model is arrival order; checked anyway (an
                                     * arrival before the last one clears it till it empties) */
    uint64_t timeout;
    int64_t timeout_at;
    int64_t c5[MAXB + 1];           /* INFER5: head of the size-b copy (absolute position) */
    struct est est[MAXB + 1];
    struct est weights;
};

/* policy.params as given (clockwork.c's table); init turns them into the fields below */
struct cw_params {
    int scheduler;                  /* 0 infer4, 1 infer5 */
    int max_batch;
    double max_exec_ms, schedule_ahead_ms, default_slo_ms;
    bool preload, skip_satisfied_loads;
    int inputs;                     /* 0 network, 1 none */
};

struct clockwork {
    struct cw_params par;
    bool infer5, preload, skip_satisfied;
    bool no_input;                  /* inputs "none": workers make the inputs (the Symphony
                                     * paper's runs), no input transfer with each INFER */
    int64_t ahead, max_exec, default_slo;
    int max_batch, nm, ng, capg, kind;  /* ng: executor ids seen so far; capg: room */
    int sizes_mode;                 /* 0 pow2, 1 all, 2 list */
    int list[MAXB];
    int nlist;
    struct model *ms;
    struct gpu *gs;
    int64_t *cur;                   /* INFER4 cursors [g][coff[m] + slot], slot < nsizes(m):
                                     * ncur a GPU (packed: a GPU's cursors share cache lines) */
    int *coff, ncur;
    uint64_t *last_used;            /* [g][m] */
    uint8_t *on;                    /* [g][m]: 0 no, 1 loading, 2 loaded (cw_set_on) */
    struct sim_bits *loaded;        /* [nm] the GPUs where each model is loaded (on 2): an
                                     * offer visits those of them that are open */
    uint64_t seq;
    int *cap;                       /* scratch [nm]: INFER5 size caps in one pass */
    struct strat *sh;               /* scratch: INFER4 strategies of one GPU, a min-heap */
    int nsh, capsh;
    uint32_t *mver;                 /* [nm] version of each model's entries in sh */
    struct strat *dmin;             /* [nm] INFER4: the least of each model's set-aside
                                     * strategies (strat_model's `lazy`), p INT64_MAX if none */
    int *lz, nlz;                   /* [nm] the models with strategies set aside, this call */
    int *stale, nstale;             /* [nm] the load tracker's stale models, in order */
    struct sim_bits open;           /* GPUs up whose window was open at their last
                                     * schedule_infer (full_until 0): those an offer visits */
    struct sim_bits could;          /* GPUs up that lack a model and may start a load (fewer
                                     * than 2 outstanding, INFER4): those a load check visits */
};

static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline uint8_t *on_at(const struct clockwork *st, int m, int g)
{
    return &st->on[(size_t)g * (size_t)st->nm + (size_t)m];
}
static inline void cw_set_on(struct clockwork *st, int m, int g, uint8_t v)
{
    *on_at(st, m, g) = v;
    sim_bits_put(&st->loaded[m], g, v == 2);
}
static inline uint64_t *used_at(const struct clockwork *st, int m, int g)
{
    return &st->last_used[(size_t)g * (size_t)st->nm + (size_t)m];
}
static inline int64_t est_of(const struct clockwork *st, int m, int b)
{
    return st->ms[m].ev[b];
}
static inline int64_t sched_dl(const struct clockwork *st, const struct sim_request *r)
{
    return r->t_arrival + st->ms[r->model].exec_slo;
}

/* g's membership of the load check's set, after its state, models, loads or PCIe window
 * changed. A shut window stays shut until its timer or a load result: with a fixed tracker
 * it opens at the timer's instant, and once the lag rule holds its state no longer moves
 * with time (a visit would only push the timer back). */
void cw_could(const struct sim *s, struct clockwork *st, int g);
/* Room for one more holder of m (SIM_ENOMEM: none, nothing changed). */
int cw_hold_reserve(struct clockwork *st, int m);
/* g takes m (loading): it joins m's holders with no share yet. SIM_ENOMEM: nothing done. */
int cw_hold_add(struct clockwork *st, int m, int g);
/* g lets go of m (evicted, failed load, removed GPU): its share leaves O_g. */
void cw_hold_del(struct clockwork *st, int m, int g);
/* The load check after an arrival of m: only a model some GPU lacks can start a load, and
 * only on a GPU of the set `could` (schedule_load returns at once on the others). */
void cw_load_check(struct sim *s, struct clockwork *st, int m);
/* Clockwork's schedule_load(g): when g may decide (spacing, outstanding loads, its PCIe
 * window), the model it loads (load_choice) and what it evicts for it (evict_choice). */
void cw_schedule_load(struct sim *s, struct clockwork *st, int g);
/* m changed (a request came, left or was sent, a holder came or went): the next load
 * decision spreads it again. */
void cw_touch(struct clockwork *st, int m);
/* The first position in [lo, q) of m's queue whose t_arrival + off is after key (q if none):
 * a binary search while the queue is in arrival order, else a scan. */
int cw_first_after(const struct sim *s, const struct clockwork *st, int m, int lo, int q,
                   int64_t off, int64_t key);
/* WorkerTracker.add(): an action of predicted `size` planned to begin at `begin` (the
 * executor's outstanding work); SIM_ENOMEM with the tracker as it was. */
int cw_tr_add(struct tracker *t, int64_t now, int64_t size, int64_t begin);
/* WorkerTracker.available(): when the tracked executor is predicted free (the lag rule
 * applied). */
int64_t cw_tr_available(struct tracker *t, int64_t now);
/* schedule_infer(g): while g's window has room, the most urgent strategy of the models it
 * holds is tried and, if it yields a batch, sent (INFER4 or INFER5). only >= 0: no model but
 * that one can have a strategy on g that g has not spent (INFER4 then enters only its). */
void cw_schedule_infer(struct sim *s, struct clockwork *st, int g, int only);

#endif
