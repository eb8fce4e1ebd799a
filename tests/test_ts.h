/* test_ts.h — reading a result's time series in tests: the mean of a series over a time
 * window, its number of samples, its last value, and when it first reaches a level. Keys: a model (or path, node)
 * index, or -1 for unkeyed series. */
#ifndef TEST_TS_H
#define TEST_TS_H

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "sim_result.h"

/* Mean of series `name` (key `key`) over samples in (t0, t1] seconds; NAN if none. */
static inline double test_ts_mean(const struct sim_result *r, const char *name, int key, double t0,
                                  double t1)
{
    double sum = 0;
    int n = 0;
    for (size_t i = 0; i < r->ts.n; i++) {
        const struct sim_ts_point *p = &r->ts.pts[i];
        double t = (double)p->t / 1e9;
        if (!strcmp(r->ts.series[p->series], name) && p->key == key && t > t0 && t <= t1)
            sum += p->value, n++;
    }
    return n ? sum / n : NAN;
}

/* The number of samples of series `name` (any key). */
static inline int test_ts_count(const struct sim_result *r, const char *name)
{
    int n = 0;
    for (size_t i = 0; i < r->ts.n; i++)
        n += !strcmp(r->ts.series[r->ts.pts[i].series], name);
    return n;
}

/* The last value of series `name` (key `key`), or -1 if it has none. */
static inline double test_ts_last(const struct sim_result *r, const char *name, int key)
{
    double v = -1;
    for (size_t i = 0; i < r->ts.n; i++)
        if (!strcmp(r->ts.series[r->ts.pts[i].series], name) && r->ts.pts[i].key == key)
            v = r->ts.pts[i].value;
    return v;
}

/* Seconds after t0 until series `name` (key `key`) is first >= level (up) or <= level (!up)
 * at a sample after t0; -1: never. */
static inline double test_ts_reaches(const struct sim_result *r, const char *name, int key,
                                     double t0, double level, bool up)
{
    for (size_t i = 0; i < r->ts.n; i++) {
        const struct sim_ts_point *p = &r->ts.pts[i];
        double t = (double)p->t / 1e9;
        if (!strcmp(r->ts.series[p->series], name) && p->key == key && t > t0 &&
            (up ? p->value >= level : p->value <= level))
            return t - t0;
    }
    return -1;
}

#endif
