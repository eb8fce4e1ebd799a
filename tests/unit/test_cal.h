/* test_cal — what the calibration tests share: loading a shipped network by name (or a file)
 * and failing the case when it does not load. Include after test.h. */
#ifndef TEST_CAL_H
#define TEST_CAL_H

#include "cal_net.h"
#include "sim_err.h"

static inline struct cal_net *load(const char *name)
{
    char file[1024];
    struct cal_net *net = NULL;
    cal_net_resolve(name, file, sizeof file);
    REQUIRE_OK(cal_net_load(file, &net));
    return net;
}

#endif
