/* sim_heap — array binary heap on (time, seq). */
#include "sim_heap.h"

#include <stdlib.h>

#include "sim_err.h"

static inline int ev_less(const struct sim_event *a, const struct sim_event *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

void sim_heap_init(struct sim_heap *h)
{
    h->ev = NULL;
    h->n = h->cap = 0;
    h->next_seq = 0;
}

void sim_heap_free(struct sim_heap *h)
{
    free(h->ev);
    sim_heap_init(h);
}

int sim_heap_push(struct sim_heap *h, struct sim_event e)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 256;
        struct sim_event *ev = realloc(h->ev, cap * sizeof *ev);
        if (!ev)
            return SIM_ENOMEM;
        h->ev = ev;
        h->cap = cap;
    }
    e.seq = h->next_seq++;
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!ev_less(&e, &h->ev[p]))
            break;
        h->ev[i] = h->ev[p];
        i = p;
    }
    h->ev[i] = e;
    return 0;
}

int sim_heap_pop(struct sim_heap *h, struct sim_event *out)
{
    if (h->n == 0)
        return 1;
    *out = h->ev[0];
    struct sim_event last = h->ev[--h->n];
    size_t i = 0, n = h->n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && ev_less(&h->ev[c + 1], &h->ev[c]))
            c++;
        if (!ev_less(&h->ev[c], &last))
            break;
        h->ev[i] = h->ev[c];
        i = c;
    }
    if (n)
        h->ev[i] = last;
    return 0;
}
