/* sim_bench — the benchmark's reference batching simulator (see sim_bench.h). */
#include "sim_bench.h"

#include <stdlib.h>
#include <gsl/gsl_randist.h>

#include "sim_err.h"
#include "sim_rng.h"
#include "sim_wall.h"

enum { SERVERS = 1000, BATCH = 8 };
#define RATE_PER_NS 5e-4                /* 500,000 requests/s */
#define BATCH_NS 10000000               /* 10 ms */

struct ev {
    int64_t t;
    int server;                         /* -1: an arrival */
};

struct heap {
    struct ev *a;
    size_t n;
};

static void heap_push(struct heap *h, struct ev e)
{
    size_t i = h->n++;
    while (i > 0 && h->a[(i - 1) / 2].t > e.t) {
        h->a[i] = h->a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->a[i] = e;
}

static struct ev heap_pop(struct heap *h)
{
    struct ev top = h->a[0], last = h->a[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->a[c + 1].t < h->a[c].t)
            c++;
        if (h->a[c].t >= last.t)
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    h->a[i] = last;
    return top;
}

int sim_bench_reference(uint64_t requests, uint64_t seed, struct sim_bench_ref *out)
{
    size_t cap = 1u << 20;              /* queue ring; grows if the queue ever gets longer */
    int64_t *q = malloc(cap * sizeof *q);
    int *idle = malloc(SERVERS * sizeof *idle);
    struct heap h = {malloc((SERVERS + 1) * sizeof *h.a), 0};
    gsl_rng *rng = sim_rng_stream(seed, "bench.reference");
    int rc = SIM_ENOMEM;
    if (!q || !idle || !h.a || !rng)
        goto out;
    size_t head = 0, len = 0;
    int nidle = SERVERS;
    for (int i = 0; i < SERVERS; i++)
        idle[i] = SERVERS - 1 - i;
    uint64_t arrived = 0, events = 0;
    double lat_sum = 0;
    double t0 = sim_wall_seconds();
    heap_push(&h, (struct ev){(int64_t)gsl_ran_exponential(rng, 1 / RATE_PER_NS), -1});
    while (h.n) {
        struct ev e = heap_pop(&h);
        events++;
        int server = e.server;
        if (server < 0) {               /* an arrival: queue it, draw the next */
            if (len == cap) {
                int64_t *nq = malloc(2 * cap * sizeof *nq);
                if (!nq)
                    goto out;
                for (size_t i = 0; i < len; i++)
                    nq[i] = q[(head + i) % cap];
                free(q);
                q = nq;
                head = 0;
                cap *= 2;
            }
            q[(head + len++) % cap] = e.t;
            if (++arrived < requests)
                heap_push(&h, (struct ev){e.t + (int64_t)gsl_ran_exponential(rng, 1 / RATE_PER_NS),
                                          -1});
            if (nidle == 0)
                continue;
            server = idle[--nidle];
        }
        if (len == 0) {                 /* a server with nothing to do goes idle */
            idle[nidle++] = server;
            continue;
        }
        int64_t done = e.t + BATCH_NS;
        for (int b = 0; b < BATCH && len; b++, len--, head = (head + 1) % cap)
            lat_sum += (double)(done - q[head]);
        heap_push(&h, (struct ev){done, server});
    }
    out->wall_s = sim_wall_seconds() - t0;
    out->requests = arrived;
    out->events = events;
    out->requests_per_s = out->wall_s > 0 ? (double)arrived / out->wall_s : 0;
    out->mean_latency_ms = arrived ? lat_sum / (double)arrived / 1e6 : 0;
    rc = 0;
out:
    free(q);
    free(idle);
    free(h.a);
    gsl_rng_free(rng);
    return rc;
}
