/* cal_backend — the registry of calibration backends and small shared helpers. */
#include "cal_backend.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sim_err.h"

static const struct cal_backend_ops *const backends[] = {
    &cal_backend_onednn,
#ifdef SERVESIM_HAVE_CUDNN
    &cal_backend_cudnn,
#endif
};

const struct cal_backend_ops *cal_backend_find(const char *name)
{
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
        if (strcmp(backends[i]->name, name) == 0)
            return backends[i];
    return NULL;
}

const char *cal_backend_names(void)
{
#ifdef SERVESIM_HAVE_CUDNN
    return "onednn, cudnn";
#else
    return "onednn (cudnn not built: no CUDA toolkit/cuDNN at build time)";
#endif
}

static const char *const precisions[] = {"fp32", "tf32", "fp16"};

const char *cal_precision_name(enum cal_precision p)
{
    return p <= CAL_FP16 ? precisions[p] : "?";
}

int cal_precision_parse(const char *s, enum cal_precision *out)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(s, precisions[i]) == 0) {
            *out = (enum cal_precision)i;
            return 0;
        }
    return sim_err_set(SIM_EINVAL, "precision: expected one of fp32, tf32, fp16, got \"%s\"", s);
}

void cal_host_name(char *buf, size_t size)
{
    if (gethostname(buf, size) != 0)
        snprintf(buf, size, "unknown");
    buf[size - 1] = 0;
}

const char *cal_exec_name(const struct cal_opts *o)
{
    return o->eager ? "eager" : "graph";
}
