/* sim_grow — the one rule by which arrays grow (issue 53): room for `need` elements of
 * `size` bytes at *buf, the capacity *cap doubling from `first`. On failure (no memory, or a
 * count past INT_MAX) *buf and *cap are as they were, the data intact, and SIM_ENOMEM comes
 * back for the caller to return or record: out of memory is an error, never an abort. */
#ifndef SIM_GROW_H
#define SIM_GROW_H

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"

/* `buf` is the address of the array's pointer (any element type). */
static inline int sim_grow(void *buf, int *cap, long need, size_t size, int first)
{
    if (need <= *cap)
        return 0;
    long c = *cap > 0 ? *cap : (first > 0 ? first : 1);
    while (c < need)
        c *= 2;
    if (c > INT_MAX || (size_t)c > SIZE_MAX / size)
        return SIM_ENOMEM;
    void *old, *grown;
    memcpy(&old, buf, sizeof old);
    if (!(grown = realloc(old, (size_t)c * size)))
        return SIM_ENOMEM;
    memcpy(buf, &grown, sizeof grown);
    *cap = (int)c;
    return 0;
}

#endif
