/* sim_heap — the event queue: a binary min-heap of events stored by value, keyed by
 * (time, seq). seq is a global insertion counter, so events with equal time fire in
 * insertion order and a run is deterministic. Events are plain structs copied into one
 * growable array: scheduling allocates nothing once the array has grown to the run's
 * high-water mark (the "pool"). Cancellation is lazy and lives one level up (timer
 * generations in sim.c): a cancelled event stays here and is skipped when it pops. */
#ifndef SIM_HEAP_H
#define SIM_HEAP_H

#include <stddef.h>
#include <stdint.h>

struct sim_event {
    int64_t time;       /* ns */
    uint64_t seq;       /* insertion order; ties on time fire in this order */
    uint32_t type;      /* engine event type (sim.c) */
    uint32_t idx;       /* type-specific index: stream, executor, timer slot */
    uint64_t gen;       /* type-specific: timer generation */
};

struct sim_heap {
    struct sim_event *ev;
    size_t n, cap;
    uint64_t next_seq;
};

void sim_heap_init(struct sim_heap *h);
void sim_heap_free(struct sim_heap *h);
/* Fills in e->seq. Returns 0 or SIM_ENOMEM. */
int sim_heap_push(struct sim_heap *h, struct sim_event e);
/* Removes the least event into *out; returns 0, or 1 when empty. */
int sim_heap_pop(struct sim_heap *h, struct sim_event *out /* OUT */);
static inline const struct sim_event *sim_heap_peek(const struct sim_heap *h)
{
    return h->n ? &h->ev[0] : NULL;
}

#endif
