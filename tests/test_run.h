/* test_run.h — one run (load scale 1) or one goodput search of a config given as JSON text,
 * for tests that build their experiment inline: parse, run, free the config; exits the test
 * on an error. */
#ifndef TEST_RUN_H
#define TEST_RUN_H

#include "sim_config.h"
#include "sim_goodput.h"
#include "sim_result.h"
#include "test.h"

/* The result of running `text` (`name` labels parse errors); the caller destroys it. */
static inline struct sim_result *test_run_text(const char *text, const char *name)
{
    struct sim_config *cfg;
    struct sim_result *r = NULL;
    REQUIRE_OK(sim_config_from_text(text, name, ".", &cfg));
    REQUIRE_OK(sim_run_once(cfg, 1.0, NULL, &r));
    sim_config_destroy(cfg);
    return r;
}

/* The goodput of `text` (0 when the search gives none: no load passed, or it did not bracket
 * or converge); *batch (may be NULL) the mean batch of model 0 at it. */
static inline double test_goodput_text(const char *text, const char *name, double *batch)
{
    struct sim_config *cfg;
    struct sim_goodput g;
    REQUIRE_OK(sim_config_from_text(text, name, ".", &cfg));
    REQUIRE_OK(sim_goodput_search(cfg, false, &g));
    bool ok = g.status == SIM_SEARCH_CONVERGED;
    double v = ok ? g.goodput_rps : 0;
    if (batch)
        *batch = ok ? g.best->models[0].mean_batch : 0;
    sim_goodput_free(&g);
    sim_config_destroy(cfg);
    return v;
}

#endif
