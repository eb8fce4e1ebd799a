/* sim_bench — the benchmark's reference batching simulator (see sim_bench.h). */
#include "sim_bench.h"

#include <stdlib.h>
#include <gsl/gsl_randist.h>

#include "sim_err.h"
#include "sim_heap.h"
#include "sim_rng.h"
#include "sim_wall.h"

enum { SERVERS = 1000, BATCH = 8 };
#define RATE_PER_NS 5e-4                /* 500,000 requests/s */
#define BATCH_NS 10000000               /* 10 ms */
#define ARRIVAL UINT32_MAX              /* an event's idx: an arrival, else the server done */

static int push(struct sim_heap *h, int64_t t, uint32_t idx)
{
    return sim_heap_push(h, (struct sim_event){.time = t, .idx = idx});
}

static int64_t gap_ns(gsl_rng *rng)
{
    return (int64_t)gsl_ran_exponential(rng, 1 / RATE_PER_NS);
}

int sim_bench_reference(uint64_t requests, uint64_t seed, struct sim_bench_ref *out)
{
    size_t cap = 1u << 20;              /* queue ring; grows if the queue ever gets longer */
    int64_t *q = malloc(cap * sizeof *q);
    int *idle = malloc(SERVERS * sizeof *idle);
    struct sim_heap h;
    gsl_rng *rng = sim_rng_stream(seed, "bench.reference");
    int rc = SIM_ENOMEM;
    sim_heap_init(&h);
    if (!q || !idle || !rng)
        goto out;
    size_t head = 0, len = 0;
    int nidle = SERVERS;
    for (int i = 0; i < SERVERS; i++)
        idle[i] = SERVERS - 1 - i;
    uint64_t arrived = 0, events = 0;
    double lat_sum = 0;
    double t0 = sim_wall_seconds();
    struct sim_event e;
    if (push(&h, gap_ns(rng), ARRIVAL))
        goto out;
    while (sim_heap_pop(&h, &e) == 0) {
        events++;
        int server = e.idx == ARRIVAL ? -1 : (int)e.idx;
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
            q[(head + len++) % cap] = e.time;
            if (++arrived < requests && push(&h, e.time + gap_ns(rng), ARRIVAL))
                goto out;
            if (nidle == 0)
                continue;
            server = idle[--nidle];
        }
        if (len == 0) {                 /* a server with nothing to do goes idle */
            idle[nidle++] = server;
            continue;
        }
        int64_t done = e.time + BATCH_NS;
        for (int b = 0; b < BATCH && len; b++, len--, head = (head + 1) % cap)
            lat_sum += (double)(done - q[head]);
        if (push(&h, done, (uint32_t)server))
            goto out;
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
    sim_heap_free(&h);
    gsl_rng_free(rng);
    return rc;
}
