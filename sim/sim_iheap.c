/* sim_iheap — sift up/down with position tracking. */
#include "sim_iheap.h"

#include <stdlib.h>
#include <string.h>

#include "sim_err.h"

static inline int less(const struct sim_iheap *h, int a, int b)
{
    return h->key[a] < h->key[b] || (h->key[a] == h->key[b] && a < b);
}

static void place(struct sim_iheap *h, int p, int item)
{
    h->heap[p] = item;
    h->pos[item] = p;
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

void sim_iheap_attach(struct sim_iheap *h, int cap, int *heap, int *pos, int64_t *key)
{
    *h = (struct sim_iheap){.n = 0, .cap = cap, .heap = heap, .pos = pos, .key = key};
    for (int i = 0; i < cap; i++) {
        pos[i] = -1;
        key[i] = 0;
    }
}

int sim_iheap_reserve(struct sim_iheap *h, int cap)
{
    if (cap <= h->cap)
        return 0;
    int *heap = realloc(h->heap, (size_t)cap * sizeof *heap);
    if (!heap)
        return SIM_ENOMEM;
    h->heap = heap;
    int *pos = realloc(h->pos, (size_t)cap * sizeof *pos);
    if (!pos)
        return SIM_ENOMEM;
    h->pos = pos;
    int64_t *key = realloc(h->key, (size_t)cap * sizeof *key);
    if (!key)
        return SIM_ENOMEM;
    h->key = key;
    for (int i = h->cap; i < cap; i++) {
        h->pos[i] = -1;
        h->key[i] = 0;
    }
    h->cap = cap;
    return 0;
}

void sim_iheap_free(struct sim_iheap *h)
{
    free(h->heap);
    free(h->pos);
    free(h->key);
    memset(h, 0, sizeof *h);
}

void sim_iheap_set(struct sim_iheap *h, int item, int64_t key)
{
    if (item < 0 || item >= h->cap)
        SIM_BUG("iheap item %d out of range (cap %d)", item, h->cap);
    int p = h->pos[item];
    int64_t old = h->key[item];
    h->key[item] = key;
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
    int p = h->pos[item];
    if (p < 0)
        return;
    h->pos[item] = -1;
    int last = h->heap[--h->n];
    if (p == h->n)
        return;
    place(h, p, last);
    sift_up(h, p);
    sift_down(h, h->pos[last]);
}
