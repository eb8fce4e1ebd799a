/* test_src.h — arrivals at fixed times for engine tests, and an observer that records when
 * requests finish: the building blocks of the hand-computed (analytic) cases. */
#ifndef TEST_SRC_H
#define TEST_SRC_H

#include <stdint.h>

#include "sim.h"

/* Arrivals at fixed times (ns), each of its model (or NULL: all of model 0) and with its size
 * (or NULL: 0). */
struct fixed_src { const int64_t *t; int n, i; const double *size; const int *model; };
static inline int fixed_next(void *ctx, int64_t *t, int *model, double *size)
{
    struct fixed_src *f = ctx;
    if (f->i >= f->n)
        return 0;
    *size = f->size ? f->size[f->i] : 0;
    *model = f->model ? f->model[f->i] : 0;
    *t = f->t[f->i++];
    return 1;
}
static inline void fixed_close(void *ctx) { (void)ctx; }

/* Finish times of the first 8 requests to end, in the order they end. */
struct end_seen { int64_t finish[8]; int n; };
static inline void end_seen_fn(void *ctx, const struct sim *s, const struct sim_request *r)
{
    (void)s;
    struct end_seen *v = ctx;
    if (v->n < 8)
        v->finish[v->n++] = r->t_finish;
}

#endif
