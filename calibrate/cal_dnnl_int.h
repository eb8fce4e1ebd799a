/* cal_dnnl_int — what the oneDNN backend's two files share: its state (struct dn: the engine,
 * the steps of a prepared pass, the tensor arena) and the helpers that build one step, for
 * cal_dnnl.c (the backend: prepare, run, the inter-op executor) and cal_dnnl_ops.c (one
 * builder per op family). */
#ifndef CAL_DNNL_INT_H
#define CAL_DNNL_INT_H

#include <oneapi/dnnl/dnnl.h>
#include <stddef.h>

#include "cal_backend.h"

#define MAX_ARGS (CAL_MAX_IN + 2) /* concat: its sources, dst and a scratchpad */

struct step {
    dnnl_primitive_t prim;   /* NULL: the embedding loop of layer `layer` */
    int layer, nargs;
    dnnl_exec_arg_t args[MAX_ARGS];
};

struct buf {                 /* an arena buffer: one tensor or one transient reorder output */
    size_t size;
    int first, last;
};

struct view {                /* a memory object living in the arena, bound after planning */
    dnnl_memory_t mem;
    int buf;
};

struct dag;

struct dn {
    struct cal_opts o;
    dnnl_primitive_attr_t attr;  /* the run-time primitives': user-managed scratchpad */
    struct dag *dag;             /* the inter-op executor (inter_op > 1), built at prepare */
    dnnl_engine_t eng;
    dnnl_stream_t strm;
    const struct cal_net *net;
    int batch;
    dnnl_memory_desc_t *tmd;     /* per tensor t+1 (0 = input): its layout */
    dnnl_memory_t *tmem;         /* per tensor: the memory in that layout */
    int *tbuf;                   /* per tensor: its arena buffer */
    struct step *steps;
    int nsteps, capsteps;
    struct buf *bufs;
    int nbufs, capbufs;
    struct view *views;
    int nviews, capviews;
    dnnl_memory_t *owned;        /* weights and other self-allocated memories */
    int nowned, capowned;
    dnnl_primitive_t *setup;     /* weight reorders, run once at prepare */
    int nsetup, capsetup;
    dnnl_exec_arg_t (*setup_args)[2];
    char *arena;
    size_t arena_bytes, weights_bytes;
    int32_t *tokens;
};

/* Appends a step: primitive pd (created here; NULL: a host step such as an embedding) of
 * layer `layer` with its nargs arguments. SIM_ENOMEM. */
int dn_add_step(struct dn *d, dnnl_primitive_desc_t pd, int layer, int nargs,
    const dnnl_exec_arg_t *args);
/* A memory object with layout md living in arena buffer b. */
int dn_arena_mem(struct dn *d, const dnnl_memory_desc_t *md, int b, dnnl_memory_t *out);
/* 0 on dnnl_success, else the error naming the layer and what failed (SIM_EUNAVAIL where
 * oneDNN has no implementation for these shapes). */
int dn_chk(dnnl_status_t s, const struct cal_layer *l, const char *what);
/* Builds primitive descriptor + step for one op with its output set; the common tail. */
int dn_finish(struct dn *d, int i, const struct cal_layer *l, dnnl_primitive_desc_t pd,
                  int last, int nargs, dnnl_exec_arg_t *args, int dst_slot);
/* Strided 4-D view {N,H,S,dh} of a token tensor {N*S, H*dh}; transposed: {N,H,dh,S}. */
void dn_head_view(dnnl_memory_desc_t *md, int64_t n, int64_t h, int64_t s, int64_t dh,
    bool transposed);
/* The memory of tensor t in layout want: t's own memory, or a transient reorder of it at
 * step `layer`. */
int dn_input_as(struct dn *d, const struct cal_layer *l, int layer, int t,
    const dnnl_memory_desc_t *want, dnnl_memory_t *out);
/* Copies user data (canonical layout `user`) into a new owned memory of layout `want`,
 * through a reorder run once at prepare time. */
int dn_load_weights(struct dn *d, const struct cal_layer *l, const dnnl_memory_desc_t *user,
    const float *data, const dnnl_memory_desc_t *want, dnnl_memory_t *out);
/* --- building blocks -------------------------------------------------------------------- */
int dn_new_buf(struct dn *d, size_t size, int first, int last);
/* An f32 memory descriptor of nd dims in layout tag. */
int dn_plain_md(dnnl_memory_desc_t *md, int nd, const dnnl_dims_t dims, dnnl_format_tag_t tag);
/* Records layer i's output layout and creates its arena buffer and memory. */
int dn_set_output(struct dn *d, int i, const dnnl_memory_desc_t *md, int last);
/* The dims of a tensor of cal shape s with the batch: [C,H,W] and [H,S,S] -> 4-D,
 * tokens [S,D] -> {N*S, D}, vectors [K] -> {N, K}. */
void dn_tensor_dims(const struct dn *d, const struct cal_shape *s, int *nd, dnnl_dims_t dims);
/* conv, fc and linear: the source (reordered when the primitive wants another layout), the
 * weights and bias loaded into the primitive's layouts from their canonical ones (uw, ub),
 * then the step. Consumes pd. */
int dn_weighted_step(struct dn *d, int i, const struct cal_layer *l, dnnl_primitive_desc_t pd,
    int last, const dnnl_memory_desc_t *uw, const dnnl_memory_desc_t *ub);
/* Layer i as one step (its primitive, weights and arguments); last: the net's last layer. */
int dn_build_layer(struct dn *d, int i, int last);

#endif
