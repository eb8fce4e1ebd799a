/* sim_rng — stream seeding: FNV-1a of the name mixed with the master seed by splitmix64. */
#include "sim_rng.h"

#include <string.h>

uint64_t sim_fnv1a(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t sim_rng_stream_seed(uint64_t master, const char *name)
{
    uint64_t h = sim_fnv1a(SIM_FNV_OFFSET, name, strlen(name));
    return splitmix64(master ^ splitmix64(h));
}

gsl_rng *sim_rng_stream(uint64_t master, const char *name)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r)
        return NULL;
    /* MT19937 takes an unsigned long seed; 0 selects GSL's default seed, so avoid it. */
    unsigned long s = (unsigned long)sim_rng_stream_seed(master, name);
    gsl_rng_set(r, s ? s : 1UL);
    return r;
}
