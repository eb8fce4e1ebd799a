/* sim_bits — a set of small integers (executor ids) with "the first member at or after i"
 * in a few instructions whatever the set's size: bit i of word i/64 of w0, and bit w of
 * w1 while word w of w0 is not 0 (two levels, so a search skips 4,096 absent members a
 * word). The engine keeps its executor indexes in it (sim_exec_next_free, and the running
 * indexes); policies keep their own sets of executors in it (Clockwork's GPUs with room). */
#ifndef SIM_BITS_H
#define SIM_BITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sim_bits {
    uint64_t *w0, *w1;                  /* one allocation: w1 follows w0 */
    size_t nw;                          /* words of w0: members 0 .. 64 nw - 1 */
};

/* Room for members 0..n-1 (new ones absent; an empty set needs no call). SIM_ENOMEM. */
int sim_bits_reserve(struct sim_bits *b, int n);
void sim_bits_free(struct sim_bits *b);
/* Adds (on) or removes i, which must be below what was reserved. */
void sim_bits_put(struct sim_bits *b, int i, bool on);
/* The least member >= from (from < 0 counts as 0), or -1. */
int sim_bits_next(const struct sim_bits *b, int from);
/* The least member of both a and b >= from, or -1: the second levels are intersected too,
 * so a search skips 4,096 ids a word where either set is empty. */
int sim_bits_next_and(const struct sim_bits *a, const struct sim_bits *b, int from);

#endif
