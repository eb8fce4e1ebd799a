/* cal_profile — turning measurements into profiles: fits per (model, executor kind), then a
 * zoo file the simulator reads directly ("servesim-zoo/2": the /1 format plus provenance and
 * each profile's measured table and fit quality) and rows in the results database
 * (profiles + profile_points, one transaction). Files are written to a temporary name and
 * renamed, so a failure never leaves half a zoo. */
#ifndef CAL_PROFILE_H
#define CAL_PROFILE_H

#include <cjson/cJSON.h>

#include "cal_backend.h"
#include "cal_fit.h"
#include "cal_measure.h"

#define CAL_MAX_POINTS CAL_FIT_MAX
/* The largest batch measured (a model's max_batch in the simulator is at most the same). */
#define CAL_MAX_BATCH 4096

/* One executor kind's measurements of one network (a GPU, or a CPU at a thread count). */
struct cal_series {
    char kind[80];
    int threads;
    bool fit_p99;                      /* fits and table on the p99 of each point (FA2's rule),
                                        * else on the median */
    int n;
    struct cal_point pts[CAL_MAX_POINTS];
    struct cal_fit lin, robust, quad;  /* robust/quad have n = 0 when too few points */
    enum cal_form chosen;
    char why[200];
};

struct cal_model_prof {
    char name[64];
    const struct cal_net *net;
    int nseries;
    struct cal_series *series;
};

struct cal_provenance {
    const char *backend, *host, *date;
    struct cal_device_info dev;
    enum cal_precision precision;
    bool folded_bn;
    bool fit_p99;
    int warmup, reps;
    double serving_load;               /* > 0: timed serving-like at this load (--serving) */
    const char *exec;                  /* GPU: how passes were issued, fused and laid out
                                        * ("graph, fused, nhwc"); NULL on a CPU */
};

/* The exec text of a GPU profile for these backend options: "graph|eager, fused|unfused,
 * nhwc|nchw" (images channels-last at fp16 and tf32). */
const char *cal_exec_text(const struct cal_opts *o, char *buf, size_t size);

/* Fits every form the point count allows and picks one (tolerance tol, e.g. 0.05). */
int cal_series_fit(struct cal_series *s, double tol);

/* SLO given to a calibrated model: 2 x l(4) rounded up to 0.1 ms (Symphony's zoo rule of
 * "an SLO at which the model can run batch >= 4"), or 2 x l(largest batch measured) where
 * fewer than 4 were measured (never an extrapolated l(4)); documented in docs/calibrate.md. */
double cal_default_slo_ms(const struct cal_series *s);

int cal_profile_write_zoo(const char *file, const char *zoo_name,
                          const struct cal_provenance *pv, const struct cal_model_prof *m,
                          int nm);
int cal_profile_write_db(const char *db, const struct cal_provenance *pv,
                         const struct cal_model_prof *m, int nm);

/* A decoder's measured iteration profile (servesim-llm-profile/1, llm-measure) as one
 * `profiles` row of form "llm-iteration": the profile whole in table_json, its provenance in
 * the provenance columns, the whole-iteration check (fits_json: [{what, tokens, seqs,
 * measured_us, profile_us, err}]) with its worst |err| as max_rel_err, weights_mb from the
 * parameters at the profile's dtype. No profile_points. */
int cal_profile_write_llm_db(const char *db, const cJSON *prof, const char *network,
                             const char *backend, const char *host, int threads,
                             double weights_mb, const cJSON *check);

#endif
