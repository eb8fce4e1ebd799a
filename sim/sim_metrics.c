/* sim_metrics — allocation of per-model statistics and the growable time series. */
#include "sim_metrics.h"

#include <stdlib.h>
#include <string.h>

#include "sim_err.h"

int sim_model_stats_init(struct sim_model_stats *ms, int max_batch)
{
    memset(ms, 0, sizeof *ms);
    sim_hist_reset(&ms->latency);
    sim_hist_reset(&ms->queueing);
    ms->max_batch = max_batch;
    ms->batch_hist = calloc((size_t)max_batch + 1, sizeof *ms->batch_hist);
    return ms->batch_hist ? 0 : SIM_ENOMEM;
}

void sim_model_stats_free(struct sim_model_stats *ms)
{
    free(ms->batch_hist);
    ms->batch_hist = NULL;
    free(ms->llm);
    ms->llm = NULL;
}

void sim_ts_init(struct sim_ts *ts)
{
    memset(ts, 0, sizeof *ts);
}

void sim_ts_free(struct sim_ts *ts)
{
    free(ts->pts);
    memset(ts, 0, sizeof *ts);
}

static int32_t intern(struct sim_ts *ts, const char *series)
{
    for (int i = 0; i < ts->nseries; i++)
        if (ts->series[i] == series || strcmp(ts->series[i], series) == 0)
            return i;
    if (ts->nseries == SIM_TS_MAX_SERIES)
        SIM_BUG("more than %d time series (adding \"%s\")", SIM_TS_MAX_SERIES, series);
    ts->series[ts->nseries] = series;
    return ts->nseries++;
}

int sim_ts_push(struct sim_ts *ts, int64_t t, const char *series, int key, double value)
{
    if (ts->n == ts->cap) {
        size_t cap = ts->cap ? 2 * ts->cap : 1024;
        struct sim_ts_point *p = realloc(ts->pts, cap * sizeof *p);
        if (!p)
            return SIM_ENOMEM;
        ts->pts = p;
        ts->cap = cap;
    }
    ts->pts[ts->n++] = (struct sim_ts_point){t, intern(ts, series), (int32_t)key, value};
    return 0;
}
