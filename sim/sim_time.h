/* sim_time — the engine's clock: int64 nanoseconds, and saturating conversions from seconds,
 * milliseconds and raw nanosecond doubles, so that no configured or drawn duration wraps. */
#ifndef SIM_TIME_H
#define SIM_TIME_H

#include <math.h>
#include <stdint.h>

#define SIM_NS_PER_MS 1000000LL
#define SIM_NS_PER_S 1000000000LL

/* The clock is int64 nanoseconds. A duration converts saturating at SIM_NS_MAX (about 73
 * years; a run lasts at most 1e8 s = 1e17 ns), so now + d, even with two more such terms, never
 * overflows: an event that far out lies past the end and never fires. A NaN (a defect
 * upstream: configs admit only finite numbers) saturates too, never a wrapped time. */
#define SIM_NS_MAX (INT64_MAX / 4)
static inline int64_t sim_ns(double ns)
{
    if (!(ns < (double)SIM_NS_MAX))
        return SIM_NS_MAX;
    if (ns <= -(double)SIM_NS_MAX)
        return -SIM_NS_MAX;
    return (int64_t)llround(ns);
}
static inline int64_t sim_ms_to_ns(double ms) { return sim_ns(ms * 1e6); }
static inline int64_t sim_s_to_ns(double s) { return sim_ns(s * 1e9); }
static inline double sim_ns_to_ms(int64_t ns) { return (double)ns / 1e6; }

#endif
