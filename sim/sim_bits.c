/* sim_bits — the two-level set of sim_bits.h. */
#include "sim_bits.h"

#include <stdlib.h>
#include <string.h>

#include "sim_err.h"

/* Both levels live in one allocation, w1 right after w0: a small set (an executor's models)
 * is one cache line, not two. */
int sim_bits_reserve(struct sim_bits *b, int n)
{
    size_t nw = ((size_t)(n > 0 ? n : 0) + 63) / 64, n1 = (nw + 63) / 64;
    if (nw <= b->nw)
        return 0;
    uint64_t *f = malloc((nw + n1) * sizeof *f);
    if (!f)
        return SIM_ENOMEM;
    size_t o1 = (b->nw + 63) / 64;
    if (b->nw) {
        memcpy(f, b->w0, b->nw * sizeof *f);
        memcpy(f + nw, b->w1, o1 * sizeof *f);
    }
    memset(f + b->nw, 0, (nw - b->nw) * sizeof *f);
    memset(f + nw + o1, 0, (n1 - o1) * sizeof *f);
    free(b->w0);                        /* (w1 was in the same block) */
    b->w0 = f;
    b->w1 = f + nw;
    b->nw = nw;
    return 0;
}

void sim_bits_free(struct sim_bits *b)
{
    free(b->w0);
    b->w0 = b->w1 = NULL;
    b->nw = 0;
}

void sim_bits_put(struct sim_bits *b, int i, bool on)
{
    size_t w = (size_t)i / 64;
    if (i < 0 || w >= b->nw)
        SIM_BUG("member %d outside the set (%zu words reserved)", i, b->nw);
    uint64_t bit = 1ull << (i % 64), wbit = 1ull << (w % 64);
    if (on) {
        b->w0[w] |= bit;
        b->w1[w / 64] |= wbit;
    } else if ((b->w0[w] &= ~bit) == 0) {
        b->w1[w / 64] &= ~wbit;
    }
}

int sim_bits_next(const struct sim_bits *b, int from)
{
    size_t w = from > 0 ? (size_t)from / 64 : 0, n1 = (b->nw + 63) / 64;
    if (w >= b->nw)
        return -1;
    uint64_t m = b->w0[w] & (~0ull << (from > 0 ? from % 64 : 0));
    if (m)
        return (int)(w * 64 + (size_t)__builtin_ctzll(m));
    size_t v = (w + 1) / 64;            /* the next non-empty word after w */
    uint64_t mm = v < n1 ? b->w1[v] & (~0ull << ((w + 1) % 64)) : 0;
    for (;;) {
        if (mm) {
            size_t ww = v * 64 + (size_t)__builtin_ctzll(mm);
            return (int)(ww * 64 + (size_t)__builtin_ctzll(b->w0[ww]));
        }
        if (++v >= n1)
            return -1;
        mm = b->w1[v];
    }
}

int sim_bits_next_and(const struct sim_bits *a, const struct sim_bits *b, int from)
{
    size_t nw = a->nw < b->nw ? a->nw : b->nw, n1 = (nw + 63) / 64;
    size_t w = from > 0 ? (size_t)from / 64 : 0;
    if (w >= nw)
        return -1;
    uint64_t m = a->w0[w] & b->w0[w] & (~0ull << (from > 0 ? from % 64 : 0));
    if (m)
        return (int)(w * 64 + (size_t)__builtin_ctzll(m));
    size_t v = (w + 1) / 64;            /* words after w that both sets have members in */
    uint64_t mm = v < n1 ? a->w1[v] & b->w1[v] & (~0ull << ((w + 1) % 64)) : 0;
    for (;;) {
        for (; mm; mm &= mm - 1) {
            size_t ww = v * 64 + (size_t)__builtin_ctzll(mm);
            uint64_t x = a->w0[ww] & b->w0[ww];
            if (x)
                return (int)(ww * 64 + (size_t)__builtin_ctzll(x));
        }
        if (++v >= n1)
            return -1;
        mm = a->w1[v] & b->w1[v];
    }
}
