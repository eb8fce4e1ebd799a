/* sim_base — what every part of the engine stands on: chunked object pools (requests,
 * batches), the models' request queues (ring buffers in deadline order, central or per
 * executor), pushing an event on the heap, and the random draws of service times (network
 * jitter, execution-time noise, per-executor service factors). Calls nothing of the engine's
 * other files. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>

#include "sim_err.h"
#include "sim_grow.h"
#include "sim_int.h"
#include "sim_rng.h"

/* ---------------------------------------------------------------- pools */

void sim_pool_init(struct sim_pool *p, size_t obj_size, size_t per_chunk)
{
    memset(p, 0, sizeof *p);
    p->obj_size = obj_size;
    p->per_chunk = per_chunk;
}

void *sim_pool_get(struct sim_pool *p)
{
#ifdef SERVESIM_POOL_DEBUG
    /* every object its own allocation, so ASan/valgrind see overruns and use-after-free */
    void *o = calloc(1, p->obj_size);
    if (!o)
        return NULL;
    p->live++;
    return o;
#else
    if (!p->free) {
        if (p->nchunks == p->cap_chunks) {
            size_t cap = p->cap_chunks ? 2 * p->cap_chunks : 16;
            void **c = realloc(p->chunks, cap * sizeof *c);
            if (!c)
                return NULL;
            p->chunks = c;
            p->cap_chunks = cap;
        }
        char *chunk = malloc(p->obj_size * p->per_chunk);
        if (!chunk)
            return NULL;
        p->chunks[p->nchunks++] = chunk;
        for (size_t i = p->per_chunk; i-- > 0;) {
            void *o = chunk + i * p->obj_size;
            *(void **)o = p->free;
            p->free = o;
        }
    }
    void *o = p->free;
    p->free = *(void **)o;
    memset(o, 0, p->obj_size);
    if (++p->live > p->high_water)
        p->high_water = p->live;
    return o;
#endif
}

void sim_pool_put(struct sim_pool *p, void *o)
{
    p->live--;
#ifdef SERVESIM_POOL_DEBUG
    free(o);
#else
    *(void **)o = p->free;
    p->free = o;
#endif
}

void sim_pool_free(struct sim_pool *p)
{
    for (size_t i = 0; i < p->nchunks; i++)
        free(p->chunks[i]);
    free(p->chunks);
    memset(p, 0, sizeof *p);
}

/* ---------------------------------------------------------------- queues */

int sim_mq_push(struct sim_mqueue *q, struct sim_request *r)
{
    if (q->len == q->cap) {
        int cap = q->cap < 4 ? 4 : 2 * q->cap;  /* past an executor queue's first entry, or
                                                 * a central queue's first push */
        struct sim_qent *b = malloc((size_t)cap * sizeof *b);
        if (!b)
            return SIM_ENOMEM;
        for (int i = 0; i < q->len; i++)
            b[i] = q->buf[(q->head + i) & (q->cap - 1)];
        if (q->own)
            free(q->buf);
        q->own = true;
        q->buf = b;
        q->head = 0;
        q->cap = cap;
    }
    /* insert from the back: arrivals are almost always in deadline order already */
    int i = q->len, mask = q->cap - 1;
    while (i > 0) {
        struct sim_qent prev = q->buf[(q->head + i - 1) & mask];
        if (prev.deadline <= r->deadline)
            break;
        q->buf[(q->head + i) & mask] = prev;
        i--;
    }
    q->buf[(q->head + i) & mask] = (struct sim_qent){r, r->t_arrival, r->deadline, r->t_sched};
    q->len++;
    return 0;
}

/* An executor's heads, allocated with its queues: one block, the header, then the heap (its
 * top in the header's cache line), then each model's key and heap position (SIM_ENOMEM). */
static int heads_alloc(const struct sim *s, struct sim_exec_int *xi)
{
    if (xi->heads)
        return 0;
    size_t nm = (size_t)s->nmodels, nh = (nm + 3) / 4 * 4;     /* ints, to a 16-byte edge */
    _Static_assert(sizeof(struct sim_iheap) % _Alignof(struct sim_iheap_item) == 0,
                   "the items, after the header and a heap of 16-byte multiples, aligned");
    char *b = malloc(sizeof *xi->heads + nh * sizeof(int) + nm * sizeof(struct sim_iheap_item));
    if (!b)
        return SIM_ENOMEM;
    xi->heads = (struct sim_iheap *)(void *)b;
    int *heap = (int *)(void *)(b + sizeof *xi->heads);
    sim_iheap_attach(xi->heads, s->nmodels, heap, (struct sim_iheap_item *)(void *)(heap + nh));
    return 0;
}

/* An executor queue's first SIM_MQ_FIRST entries, taken in order of first use from chunks of
 * QCHUNK (a queue mallocs only past them). Where requests of every model reach every executor
 * (dynamoml's round robin in a pod), a buffer malloc'd per (executor, model) at its first
 * request was 350,000 mallocs at 10,000 GPUs and 35 models (0.43 a request over 4 simulated
 * seconds), and 89 MB of peak memory where the chunks take 51 MB. Entries in a block per
 * executor instead made each executor's first request about 1 us dearer; taken in order of
 * use they are dense (tests/bench/RESULTS.md, stop 71). SIM_ENOMEM. */
enum { QCHUNK = 4096 };

static int queue_first(struct sim *s, struct sim_mqueue *q)
{
    if (s->qfirst_left < SIM_MQ_FIRST) {
        struct sim_qent *c = malloc(QCHUNK * sizeof *c);
        if (!c || sim_grow(&s->qchunks, &s->capqchunks, s->nqchunks + 1, sizeof *s->qchunks, 8)) {
            free(c);
            return SIM_ENOMEM;
        }
        s->qchunks[s->nqchunks++] = c;
        s->qfirst = c;
        s->qfirst_left = QCHUNK;
    }
    q->buf = s->qfirst;
    q->cap = SIM_MQ_FIRST;
    s->qfirst += SIM_MQ_FIRST;
    s->qfirst_left -= SIM_MQ_FIRST;
    return 0;
}

/* The queue of model m at `where` (SIM_CENTRAL or an executor); executors' queues are
 * allocated on first use. */
struct sim_mqueue *sim_queue_of(struct sim *s, int where, int m)
{
    if (where == SIM_CENTRAL)
        return &s->queues[m];
    if (where < 0 || where >= s->nexecs)
        SIM_BUG("queue of executor %d out of range (%d executors)", where, s->nexecs);
    struct sim_exec_int *xi = &s->xi[where];
    if ((!xi->q && (sim_bits_reserve(&xi->qbits, s->nmodels) ||
                    !(xi->q = calloc((size_t)s->nmodels, sizeof *xi->q)))) ||
        (s->track_heads && !xi->heads && heads_alloc(s, xi))) {
        sim_fail_nomem(s, "for an executor's queues");
        return NULL;
    }
    return &xi->q[m];
}

/* Model m's key in the heads of `where` after its queue q there changed head or emptied. */
static void heads_note(struct sim *s, int where, int m, const struct sim_mqueue *q)
{
    struct sim_iheap *h = where == SIM_CENTRAL ? &s->central_heads : s->xi[where].heads;
    if (q->len == 0)
        sim_iheap_remove(h, m);
    else
        sim_iheap_set(h, m, q->buf[q->head].t_sched);
}

int sim_track_heads(struct sim *s)
{
    if (s->track_heads)
        return 0;
    if (s->events != 0 || s->arrived != 0)  /* at init every queue is empty: nothing to add */
        SIM_BUG("sim_track_heads after the run began (from a policy's init only)");
    if (sim_iheap_init(&s->central_heads, s->nmodels))
        return SIM_ENOMEM;
    s->track_heads = true;              /* executors' heads come with their queues */
    return 0;
}

int sim_xqueue_oldest(const struct sim *s, int e)
{
    if (!s->track_heads)
        SIM_BUG("sim_xqueue_oldest without sim_track_heads");
    if (e == SIM_CENTRAL)
        return sim_iheap_top(&s->central_heads);
    if (e < 0 || e >= s->nexecs)
        SIM_BUG("queue of executor %d out of range (%d executors)", e, s->nexecs);
    return s->xi[e].heads ? sim_iheap_top(s->xi[e].heads) : -1;
}

int sim_q_push(struct sim *s, int where, struct sim_request *r)
{
    int m = r->model;
    struct sim_mqueue *q = sim_queue_of(s, where, m);
    if (!q || (q->cap == 0 && where != SIM_CENTRAL && queue_first(s, q)) || sim_mq_push(q, r))
        return sim_fail_nomem(s, "queueing a request");
    sim_bits_put(where == SIM_CENTRAL ? &s->central_bits : &s->xi[where].qbits, m, true);
    if (s->track_heads && q->buf[q->head].r == r)     /* r is the new head */
        heads_note(s, where, m, q);
    return 0;
}

struct sim_request *sim_q_pop(struct sim *s, int where, int m)
{
    struct sim_mqueue *q = sim_queue_of(s, where, m);
    struct sim_request *r = sim_mq_pop(q);
    if (q->len == 0)
        sim_bits_put(where == SIM_CENTRAL ? &s->central_bits : &s->xi[where].qbits, m, false);
    if (s->track_heads)
        heads_note(s, where, m, q);
    return r;
}

/* ---------------------------------------------------------------- events */

void sim_push(struct sim *s, int64_t t, uint32_t type, uint32_t idx, uint64_t gen)
{
    if (t < s->now)
        SIM_BUG("event type %u scheduled in the past: %lld < now %lld", type, (long long)t,
                (long long)s->now);
    if (sim_heap_push(&s->heap, (struct sim_event){.time = t, .type = type, .idx = idx, .gen = gen}))
        sim_fail_nomem(s, "growing the event queue");
}

void sim_push_event(struct sim *s, int64_t t, uint32_t type, uint32_t idx, uint64_t gen)
{
    if (t <= s->duration)               /* later: its work stays unfinished, and the clock never
                                         * runs past the end for it */
        sim_push(s, t, type, idx, gen);
}

int64_t sim_jitter_draw(struct sim *s)
{
    const struct sim_world *c = s->cfg;
    double us = 0;
    switch (c->jitter) {
    case SIM_JIT_NONE:
        return 0;
    case SIM_JIT_EXPONENTIAL:
        us = gsl_ran_exponential(s->jrng, c->jitter_mean_us);
        break;
    case SIM_JIT_LOGNORMAL: {
        double sg = c->jitter_sigma;
        us = gsl_ran_lognormal(s->jrng, log(c->jitter_mean_us) - sg * sg / 2, sg);
        break;
    }
    }
    return sim_ns(us * 1e3);
}

/* Execution (and load) time: the nominal time times a lognormal factor of mean 1 and
 * coefficient of variation cluster.exec_cv (no draw when the cv is 0). */
int64_t sim_exec_time(struct sim *s, int64_t nominal)
{
    if (!s->xrng)
        return nominal;
    return sim_ns((double)nominal * gsl_ran_lognormal(s->xrng, s->x_mu, s->x_sigma));
}

int64_t sim_host_time(struct sim *s)
{
    if (!s->host_rng)
        return s->host_ns;
    return sim_ns(gsl_ran_lognormal(s->host_rng, s->host_mu, s->host_sigma));
}

/* A batch of n of model m on executor e (of this kind) lasts its nominal time times this:
 * 1, or shift + X drawn from the executor's own stream "executors.service.<e>" (so a run
 * stays a function of its seed, and one executor's draws never shift another's). */
double sim_service_factor(struct sim *s, int e, int m, int kind, int n)
{
    const struct sim_svc_b *tab = s->svc[m * SIM_MAX_KINDS + kind];
    if (!tab)
        return 1;
    const struct sim_svc_b *v = &tab[n <= s->models[m].max_batch + 1 ? n : s->models[m].max_batch + 1];
    if (v->dist == SIM_SVC_NONE)
        return 1;
    struct sim_exec_int *xi = &s->xi[e];
    if (!xi->srng) {
        char name[48];
        snprintf(name, sizeof name, "executors.service.%d", e);
        if (!(xi->srng = sim_rng_stream(s->cfg->seed, name))) {
            sim_fail_nomem(s, "for an executor's service-time stream");
            return 1;
        }
    }
    double x = v->dist == SIM_SVC_LOGNORMAL ? gsl_ran_lognormal(xi->srng, v->p1, v->p2)
                                            : gsl_ran_gamma(xi->srng, v->p1, v->p2);
    return v->shift + x;
}
