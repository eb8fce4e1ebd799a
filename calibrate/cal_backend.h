/* cal_backend — the interface every calibration backend implements (a table of hooks, as
 * policies are): oneDNN on the CPU (cal_dnnl.c) and cuDNN + cuBLAS on NVIDIA GPUs
 * (cal_cudnn.c). Both execute the same cal_net graph; none hand-codes a network.
 *
 * Life cycle: create (device, threads, precision) -> prepare(net, batch) builds every
 * primitive / descriptor, chooses algorithms, plans one activation arena by liveness, copies
 * the weights in (timed: the model load) -> set_input -> run (one timed forward pass, any
 * number of times) -> read (a layer's output in canonical layout: the last layer always, the
 * others only with keep_all, which gives every tensor its own buffer) -> unprepare -> destroy. */
#ifndef CAL_BACKEND_H
#define CAL_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "cal_net.h"

enum cal_precision { CAL_FP32, CAL_TF32, CAL_FP16 };

const char *cal_precision_name(enum cal_precision p);
int cal_precision_parse(const char *s, enum cal_precision *out /* OUT */);

struct cal_opts {
    int threads;             /* CPU threads (oneDNN): each inter-op worker's OpenMP team; 0 = all */
    int inter_op;            /* oneDNN: workers running independent layers of the graph at once
                              * (a ready-list executor; every tensor then has its own buffer);
                              * 0 or 1 = one layer after another. The cuDNN backend refuses > 1 */
    enum cal_precision precision;
    bool keep_all;           /* every tensor in its own buffer, readable after run */
    int device;              /* GPU ordinal */
    /* GPU: how a pass is issued and what it fuses (the CPU backend runs layer by layer).
     * Default: one CUDA graph per prepared batch size, replayed per pass (what a serving
     * engine does); eager issues every kernel from the host each pass (framework-eager). */
    bool eager;
    bool unfused;            /* GPU: no fusion groups (batch norm is still folded unless the
                              * net kept it): every layer its own calls */
};

/* "graph" or "eager" (the GPU's pass), for provenance. */
const char *cal_exec_name(const struct cal_opts *o);

/* What the device is, for the provenance of a profile. */
struct cal_device_info {
    char device[160];        /* "Intel(R) Xeon(R) ..." / "NVIDIA H100 80GB HBM3" */
    char kind[64];           /* suggested executor kind: "xeon-8375c", "h100" */
    char versions[256];      /* driver, runtime and library versions */
};

/* Memory and load figures of a prepared network. */
struct cal_mem_info {
    size_t weights_bytes, arena_bytes, workspace_bytes;
    size_t device_used_bytes; /* GPU: drop of cudaMemGetInfo's free memory over prepare */
    double load_ms;           /* copying the weights in (host to device for GPUs) */
};

struct cal_backend_ops {
    const char *name;
    const char *description;
    int (*create)(const struct cal_opts *o, void **st /* OUT */);
    int (*info)(void *st, struct cal_device_info *out /* OUT */);
    int (*prepare)(void *st, const struct cal_net *net, int batch,
                   struct cal_mem_info *out /* OUT */);
    int (*set_input)(void *st, const void *input);
    int (*run)(void *st, double *ms /* OUT */);
    int (*read)(void *st, int layer, float *out /* OUT: canonical layout */);
    /* Optional (NULL: every layer is materialised): the layer whose output carries `layer`'s
     * result once prepared: itself, or the last layer of the fused group that absorbed it
     * (its output is then never materialised and read refuses it). */
    int (*fused_into)(void *st, int layer);
    /* Optional (NULL: the backend has no host/device split, as the CPU's): `passes` prepared
     * passes back to back, as a synchronous server issues them. With `copies`, each is the
     * batch's input copied in from pinned host memory (in the layout and type the pass
     * reads), the pass, its output copied out and a wait on the stream; without, the pass and
     * the wait. gpu_ms[i]: pass i on the device; gap_us[i], i < passes - 1: the device's idle
     * time from the end of pass i to the start of pass i + 1 (events on the stream): the
     * host's share of a batch that the executor cannot overlap. */
    int (*serve_gaps)(void *st, int passes, bool copies, double *gpu_ms /* OUT */,
                      double *gap_us /* OUT */);
    void (*unprepare)(void *st);
    void (*destroy)(void *st);
};

extern const struct cal_backend_ops cal_backend_onednn;
#ifdef SERVESIM_HAVE_CUDNN
extern const struct cal_backend_ops cal_backend_cudnn;
#endif

/* By name ("onednn", "cudnn"); NULL when unknown or not built. */
const struct cal_backend_ops *cal_backend_find(const char *name);
/* Names of the backends built into this binary, comma-separated. */
const char *cal_backend_names(void);

/* The host name and the current UTC date-time, for provenance. */
void cal_host_name(char *buf, size_t size);

#endif
