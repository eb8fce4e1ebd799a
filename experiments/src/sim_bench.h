/* sim_bench — the speed-of-light reference of `servesim bench`.
 *
 * A minimal batching simulator in plain C, run in the same process as the benchmark: one
 * binary heap of events (arrival, batch done; the engine's sim_heap), 1,000 servers, Poisson arrivals into one FIFO
 * queue, batches of up to 8 that take a fixed 10 ms, an idle server starting a batch as soon
 * as requests wait. It does the least work any discrete-event serving simulator must do per
 * request, so servesim's simulated requests per wall second divided by its figure is a speed
 * ratio that shared machines' noise affects far less than absolute times (tests/bench/). */
#ifndef SIM_BENCH_H
#define SIM_BENCH_H

#include <stdint.h>

struct sim_bench_ref {
    uint64_t requests, events;
    double wall_s, requests_per_s;
    double mean_latency_ms;           /* an output, so the work cannot be optimised away */
};

/* Simulates `requests` arrivals (at 500,000 requests/s) with seed `seed`. Returns 0 or
 * SIM_ENOMEM. */
int sim_bench_reference(uint64_t requests, uint64_t seed, struct sim_bench_ref *out /* OUT */);

#endif
