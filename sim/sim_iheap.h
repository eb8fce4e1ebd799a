/* sim_iheap — indexed min-heap over items 0..n-1 with int64 keys (ties broken by item index,
 * for determinism). Policies use it for "the executor with the earliest free_at": peek is
 * O(1), changing one key O(log n). */
#ifndef SIM_IHEAP_H
#define SIM_IHEAP_H

#include <stdbool.h>
#include <stdint.h>

/* An item's key and heap position side by side: setting a key reads one line, not two. */
struct sim_iheap_item {
    int64_t key;
    int pos;            /* heap position, -1 if absent */
    int spare;
};

struct sim_iheap {
    int n, cap;
    int *heap;          /* heap position -> item */
    struct sim_iheap_item *it;      /* item -> its key and position */
};

int sim_iheap_init(struct sim_iheap *h, int cap);
/* An empty heap over the caller's arrays, each of cap entries (one allocation for many small
 * heaps): sim_iheap_reserve and sim_iheap_free must not be called on it. */
void sim_iheap_attach(struct sim_iheap *h, int cap, int *heap, struct sim_iheap_item *it);
void sim_iheap_free(struct sim_iheap *h);
/* Grows capacity so items up to cap-1 can be inserted. */
int sim_iheap_reserve(struct sim_iheap *h, int cap);
/* Inserts item or changes its key. */
void sim_iheap_set(struct sim_iheap *h, int item, int64_t key);
void sim_iheap_remove(struct sim_iheap *h, int item);
static inline int sim_iheap_top(const struct sim_iheap *h) { return h->n ? h->heap[0] : -1; }
static inline int64_t sim_iheap_key(const struct sim_iheap *h, int item) { return h->it[item].key; }
static inline bool sim_iheap_has(const struct sim_iheap *h, int item) { return h->it[item].pos >= 0; }

#endif
