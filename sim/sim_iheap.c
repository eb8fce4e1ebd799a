/* sim_iheap — sift up/down with position tracking. */
#include "sim_iheap.h"

#include <stdlib.h>
#include <string.h>

#include "sim_err.h"

static inline int less(const struct sim_iheap *h, int a, int b)
{
    int64_t ka = h->it[a].key, kb = h->it[b].key;
    return ka < kb || (ka == kb && a < b);
}

static void place(struct sim_iheap *h, int p, int item)
{
    h->heap[p] = item;
    h->it[item].pos = p;
}

static void sift_up(struct sim_iheap *h, int p)
{
    int item = h->heap[p];
    while (p > 0) {
        int q = (p - 1) / 2;
        if (!less(h, item, h->heap[q]))
            break;
        place(h, p, h->heap[q]);
        p = q;
    }
    place(h, p, item);
}

static void sift_down(struct sim_iheap *h, int p)
{
    int item = h->heap[p];
    for (;;) {
        int c = 2 * p + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && less(h, h->heap[c + 1], h->heap[c]))
            c++;
        if (!less(h, h->heap[c], item))
            break;
        place(h, p, h->heap[c]);
        p = c;
    }
    place(h, p, item);
}

int sim_iheap_init(struct sim_iheap *h, int cap)
{
    memset(h, 0, sizeof *h);
    return sim_iheap_reserve(h, cap);
}

void sim_iheap_attach(struct sim_iheap *h, int cap, int *heap, struct sim_iheap_item *it)
{
    *h = (struct sim_iheap){.n = 0, .cap = cap, .heap = heap, .it = it};
    for (int i = 0; i < cap; i++)
        it[i] = (struct sim_iheap_item){.key = 0, .pos = -1};
}

int sim_iheap_reserve(struct sim_iheap *h, int cap)
{
    if (cap <= h->cap)
        return 0;
    int *heap = realloc(h->heap, (size_t)cap * sizeof *heap);
    if (!heap)
        return SIM_ENOMEM;
    h->heap = heap;
    struct sim_iheap_item *it = realloc(h->it, (size_t)cap * sizeof *it);
    if (!it)
        return SIM_ENOMEM;
    h->it = it;
    for (int i = h->cap; i < cap; i++)
        h->it[i] = (struct sim_iheap_item){.key = 0, .pos = -1};
    h->cap = cap;
    return 0;
}

void sim_iheap_free(struct sim_iheap *h)
{
    free(h->heap);
    free(h->it);
    memset(h, 0, sizeof *h);
}

void sim_iheap_set(struct sim_iheap *h, int item, int64_t key)
{
    if (item < 0 || item >= h->cap)
        SIM_BUG("iheap item %d out of range (cap %d)", item, h->cap);
    int p = h->it[item].pos;
    int64_t old = h->it[item].key;
    h->it[item].key = key;
    if (p < 0) {
        place(h, h->n++, item);
        sift_up(h, h->n - 1);
    } else if (key < old) {
        sift_up(h, p);
    } else {
        sift_down(h, p);
    }
}

void sim_iheap_remove(struct sim_iheap *h, int item)
{
    int p = h->it[item].pos;
    if (p < 0)
        return;
    h->it[item].pos = -1;
    int last = h->heap[--h->n];
    if (p == h->n)
        return;
    place(h, p, last);
    sift_up(h, p);
    sift_down(h, h->it[last].pos);
}
