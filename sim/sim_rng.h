/* sim_rng — named, independent random streams on GSL generators.
 *
 * Every source of randomness (one per model arrival process, one per jitter source, one per
 * policy) is its own gsl_rng (MT19937) seeded from (master seed, stream name) by a 64-bit
 * hash, so adding a model or a policy does not change the draws of the others, and a run is
 * a pure function of (config, seed). Never use rand() or the wall clock in the model. */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <stdint.h>
#include <gsl/gsl_rng.h>

/* The seed of the stream `name` under `master`; exposed for tests. */
uint64_t sim_rng_stream_seed(uint64_t master, const char *name);

/* A new generator for stream `name`; NULL on allocation failure. Free with gsl_rng_free. */
gsl_rng *sim_rng_stream(uint64_t master, const char *name);

/* FNV-1a 64 over bytes, chained from `h` (start with SIM_FNV_OFFSET). */
#define SIM_FNV_OFFSET 0xcbf29ce484222325ULL
uint64_t sim_fnv1a(uint64_t h, const void *data, size_t len);

#endif
