/* sim_wall — the wall clock, for measurements (wall_s, benchmarks, calibration timing) and
 * timestamps in results. Never used inside the model: simulated time is the engine's. */
#ifndef SIM_WALL_H
#define SIM_WALL_H

/* Seconds since an arbitrary point (CLOCK_MONOTONIC). */
double sim_wall_seconds(void);

/* Seconds since the Unix epoch (CLOCK_REALTIME): comparable across processes (claims). */
double sim_wall_unix(void);

/* The current UTC time as ISO 8601 ("2026-11-21T16:23:26Z"), as stored in the tables. */
void sim_utc_now(char buf[32]);

#endif
