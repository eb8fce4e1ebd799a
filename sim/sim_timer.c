/* sim_timer — policy timers: a small indexed min-heap of timer slots keyed by (time, seq),
 * beside the event heap. A timer takes its seq from the event heap's counter, so sim_run,
 * which fires whichever of the two heaps' tops is least, runs every event and timer in the
 * same (time, seq) order as if timers were ordinary events. Cancelling removes the timer at
 * once (O(log timers)) instead of leaving a dead event to be popped and skipped: policies that
 * re-arm a timer on every arrival (Symphony's model timers) no longer grow the event heap.
 *
 * A timer armed for the current instant (at <= now: "as soon as what is already scheduled
 * for now has run") skips the heap: it goes to a FIFO. Its seq is larger than that of
 * everything scheduled before it, and every timer in the FIFO is due now, so the FIFO is in
 * (time, seq) order by construction and sim_timer_next compares only its head with the
 * heap's top: the order of everything is unchanged, without a heap insertion and removal
 * for each. Moving or cancelling such a timer leaves its FIFO entry stale (the slot's pos or
 * seq no longer match); stale entries are dropped when they reach the head. */
#include <stdlib.h>

#include "sim_err.h"
#include "sim_int.h"

static inline bool t_less(const struct sim_timer_slot *a, const struct sim_timer_slot *b)
{
    return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void t_place(struct sim *s, uint32_t p, uint32_t slot)
{
    s->theap[p] = slot;
    s->timers[slot].pos = p;
}

static void t_sift_up(struct sim *s, uint32_t p)
{
    uint32_t slot = s->theap[p];
    while (p > 0) {
        uint32_t q = (p - 1) / 2;
        if (!t_less(&s->timers[slot], &s->timers[s->theap[q]]))
            break;
        t_place(s, p, s->theap[q]);
        p = q;
    }
    t_place(s, p, slot);
}

static void t_sift_down(struct sim *s, uint32_t p)
{
    uint32_t slot = s->theap[p], n = s->ntheap;
    for (;;) {
        uint32_t c = 2 * p + 1;
        if (c >= n)
            break;
        if (c + 1 < n && t_less(&s->timers[s->theap[c + 1]], &s->timers[s->theap[c]]))
            c++;
        if (!t_less(&s->timers[s->theap[c]], &s->timers[slot]))
            break;
        t_place(s, p, s->theap[c]);
        p = c;
    }
    t_place(s, p, slot);
}

/* Takes slot out of the heap (it is there). */
static void t_unheap(struct sim *s, uint32_t slot)
{
    uint32_t p = s->timers[slot].pos, last = s->theap[--s->ntheap];
    if (p != s->ntheap) {
        t_place(s, p, last);
        t_sift_up(s, p);
        t_sift_down(s, s->timers[last].pos);
    }
}

/* Appends slot (armed for now, its seq set) to the FIFO of timers due now. */
static bool now_push(struct sim *s, uint32_t slot)
{
    if (s->tnow_len == s->tnow_cap) {
        uint32_t cap = s->tnow_cap ? 2 * s->tnow_cap : 16;
        struct sim_timer_now *q = malloc(cap * sizeof *q);
        if (!q) {
            sim_fail_nomem(s, "growing the timers due now");
            return false;               /* the caller puts it in the heap instead */
        }
        for (uint32_t i = 0; i < s->tnow_len; i++)
            q[i] = s->tnow[(s->tnow_head + i) & (s->tnow_cap - 1)];
        free(s->tnow);
        s->tnow = q;
        s->tnow_head = 0;
        s->tnow_cap = cap;
    }
    s->tnow[(s->tnow_head + s->tnow_len++) & (s->tnow_cap - 1)] =
        (struct sim_timer_now){slot, s->timers[slot].seq};
    s->timers[slot].pos = SIM_TIMER_NOW;
    return true;
}

/* The slot at the head of the FIFO, stale entries dropped; UINT32_MAX when it is empty. */
static uint32_t now_first(struct sim *s)
{
    while (s->tnow_len) {
        struct sim_timer_now e = s->tnow[s->tnow_head];
        const struct sim_timer_slot *ts = &s->timers[e.slot];
        if (ts->pos == SIM_TIMER_NOW && ts->seq == e.seq)
            return e.slot;
        s->tnow_head = (s->tnow_head + 1) & (s->tnow_cap - 1);
        s->tnow_len--;
    }
    return UINT32_MAX;
}

/* Arms slot (at and seq set): the FIFO when it is due now, else the heap. */
static void t_arm(struct sim *s, uint32_t slot)
{
    /* due now: the FIFO, or (out of memory for it) the heap, which has room for every slot
     * and gives the same (time, seq) order */
    if (s->timers[slot].at != s->now || !now_push(s, slot)) {
        t_place(s, s->ntheap++, slot);
        t_sift_up(s, s->timers[slot].pos);
    }
}

/* Disarms slot and returns it to the free list; stale handles stop matching. */
static void t_release(struct sim *s, uint32_t slot)
{
    struct sim_timer_slot *ts = &s->timers[slot];
    if (ts->pos != SIM_TIMER_NOW)
        t_unheap(s, slot);
    ts->pos = SIM_TIMER_IDLE;           /* a FIFO entry of it goes stale */
    ts->gen++;
    ts->next_free = s->free_timer;
    s->free_timer = slot + 1;
}

uint64_t sim_timer_set(struct sim *s, int64_t at, uint64_t tag, void *arg)
{
    uint32_t slot;
    if (s->free_timer) {
        slot = s->free_timer - 1;
        s->free_timer = s->timers[slot].next_free;
    } else {
        if (s->ntimers == s->cap_timers) {
            uint32_t cap = s->cap_timers ? 2 * s->cap_timers : 64;
            struct sim_timer_slot *t = realloc(s->timers, cap * sizeof *t);
            uint32_t *h = t ? realloc(s->theap, cap * sizeof *h) : NULL;
            if (t)
                s->timers = t;
            if (!h) {                   /* no timer: the run stops after this event */
                sim_fail_nomem(s, "growing the timers");
                return 0;
            }
            s->theap = h;
            s->cap_timers = cap;
        }
        slot = s->ntimers++;
        s->timers[slot].gen = 1;
    }
    struct sim_timer_slot *ts = &s->timers[slot];
    ts->tag = tag;
    ts->arg = arg;
    ts->view = s->view;
    ts->at = at < s->now ? s->now : at;
    ts->seq = s->heap.next_seq++;
    t_arm(s, slot);
    return ((uint64_t)ts->gen << 32) | (uint64_t)(slot + 1);
}

uint64_t sim_timer_rearm(struct sim *s, uint64_t h, int64_t at, uint64_t tag, void *arg)
{
    uint32_t slot = (uint32_t)(h & 0xffffffffu) - 1;
    if (!h || slot >= s->ntimers || s->timers[slot].gen != (uint32_t)(h >> 32))
        return sim_timer_set(s, at, tag, arg);
    struct sim_timer_slot *ts = &s->timers[slot];
    int64_t old = ts->at;
    ts->tag = tag;
    ts->arg = arg;
    ts->view = s->view;
    ts->at = at < s->now ? s->now : at;
    ts->seq = s->heap.next_seq++;       /* later than all before, as a new timer would be */
    if (ts->pos == SIM_TIMER_NOW)       /* from the FIFO: its old entry goes stale */
        t_arm(s, slot);
    else if (ts->at == s->now) {        /* from the heap to the FIFO */
        t_unheap(s, slot);
        t_arm(s, slot);
    } else if (ts->at < old)            /* earlier: up; same time or later (seq grew): down */
        t_sift_up(s, ts->pos);
    else
        t_sift_down(s, ts->pos);
    return h;
}

void sim_timer_cancel(struct sim *s, uint64_t h)
{
    if (!h)
        return;
    uint32_t slot = (uint32_t)(h & 0xffffffffu) - 1;
    uint32_t gen = (uint32_t)(h >> 32);
    if (slot < s->ntimers && s->timers[slot].gen == gen)
        t_release(s, slot);
}

/* sim_timer_next when the FIFO holds entries: its first live one or the heap's top. */
const struct sim_timer_slot *sim_timer_next_due_now(struct sim *s)
{
    const struct sim_timer_slot *h = s->ntheap ? &s->timers[s->theap[0]] : NULL;
    uint32_t f = now_first(s);
    if (f == UINT32_MAX)
        return h;
    const struct sim_timer_slot *n = &s->timers[f];
    return !h || t_less(n, h) ? n : h;
}

void sim_timer_fire(struct sim *s, const struct sim_timer_slot *ts)
{
    uint32_t slot = (uint32_t)(ts - s->timers);
    uint64_t tag = ts->tag;
    void *arg = ts->arg;
    int view = ts->view;
    if (ts->pos == SIM_TIMER_NOW) {     /* the FIFO's head (sim_timer_next dropped stale ones) */
        s->tnow_head = (s->tnow_head + 1) & (s->tnow_cap - 1);
        s->tnow_len--;
        s->same_instant++;
    }
    t_release(s, slot);
    if (!s->stopping) {
        int was = s->view;
        s->view = view;                 /* in the view it was set in (a composite's part) */
        SIM_POLICY_CALL(s, on_timer, tag, arg);
        s->view = was;
    }
}

void sim_timer_free(struct sim *s)
{
    free(s->timers);
    free(s->theap);
    free(s->tnow);
    s->timers = NULL;
    s->theap = NULL;
    s->tnow = NULL;
    s->ntimers = s->cap_timers = s->ntheap = s->free_timer = 0;
    s->tnow_head = s->tnow_len = s->tnow_cap = 0;
}
