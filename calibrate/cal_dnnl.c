/* cal_dnnl — the oneDNN (CPU) calibration backend: every cal_net layer as a oneDNN primitive.
 *
 * Convolutions, inner products and matmuls pick their own memory formats ("any"), so
 * activations flow in blocked layouts between them as in a real oneDNN deployment; a reorder
 * is inserted only where a consumer needs another layout. Weights are reordered once into
 * the primitive's layout at prepare time (that copy is the "model load"). Activations live in
 * one arena planned by liveness (cal_arena_plan) unless keep_all asks for a buffer each.
 * Token tensors [S,D] are 2-D {N*S, D}; attention scores 4-D {N,H,S,S}; heads are strided
 * views of the token tensors, so no transpose is materialised. The embedding lookup is the
 * one layer without a oneDNN primitive (oneDNN 2.x has no gather): a plain loop.
 * Precision: fp32 only (oneDNN's bf16/fp16 paths need ISA support this backend does not
 * probe); others are refused. Threads: OpenMP, set once per backend instance (and per
 * inter-op worker).
 *
 * Inter-op parallelism (cal_opts.inter_op = p > 1): a ready-list executor over the layer graph.
 * The calling thread and p - 1 helper threads, each with its own oneDNN stream and OpenMP team
 * of `threads`, take ready layers from one queue (lowest layer index first) and run that
 * layer's steps; finishing a layer releases the consumers whose every input is done. The
 * arena then gives every buffer its own bytes (liveness in program order no longer holds when
 * layers run out of order).
 *
 * Layout: this file holds the backend (create, prepare, run, read) and the executor; the
 * builders of each op family are cal_dnnl_ops.c, and what both share is cal_dnnl_int.h. */
#include "cal_backend.h"
#include "cal_dnnl_int.h"

#include <math.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "sim_wall.h"


#define GROW(arr, n, cap)                                                                  \
    ((n) < (cap) ? 0                                                                       \
                 : (((cap) = (cap) ? 2 * (cap) : 16),                                     \
                    ((arr) = realloc_or_free((arr), (size_t)(cap) * sizeof *(arr))) ? 0    \
                                                                                   : SIM_ENOMEM))

static void *realloc_or_free(void *p, size_t size)
{
    void *q = realloc(p, size);
    if (!q)
        free(p);
    return q;
}

int dn_chk(dnnl_status_t s, const struct cal_layer *l, const char *what)
{
    if (s == dnnl_success)
        return 0;
    return sim_err_set(s == dnnl_unimplemented ? SIM_EUNAVAIL : SIM_EINTERNAL,
                       "onednn: layer \"%s\" (%s): %s failed (status %d%s)", l ? l->name : "-",
                       l ? cal_op_name(l->op) : "-", what, (int)s,
                       s == dnnl_unimplemented ? ": no implementation for these shapes" : "");
}

static int dn_create(const struct cal_opts *o, void **out)
{
    if (o->precision != CAL_FP32)
        return sim_err_set(SIM_EINVAL, "onednn: precision %s is not supported (fp32 only; tf32 "
                           "and fp16 are GPU precisions)", cal_precision_name(o->precision));
    struct dn *d = calloc(1, sizeof *d);
    if (!d)
        return SIM_ENOMEM;
    d->o = *o;
    if (o->threads > 0)
        omp_set_num_threads(o->threads);
    /* User-managed scratchpads: oneDNN's library-managed one is a per-thread buffer sized when
     * a primitive is created, so a primitive created in one thread and run in another (the
     * concurrency mode's workers, the inter-op executor) would find none there. */
    if (dnnl_engine_create(&d->eng, dnnl_cpu, 0) != dnnl_success ||
        dnnl_stream_create(&d->strm, d->eng, dnnl_stream_default_flags) != dnnl_success ||
        dnnl_primitive_attr_create(&d->attr) != dnnl_success ||
        dnnl_primitive_attr_set_scratchpad_mode(d->attr, dnnl_scratchpad_mode_user) != dnnl_success) {
        if (d->attr)
            dnnl_primitive_attr_destroy(d->attr);
        if (d->strm)
            dnnl_stream_destroy(d->strm);
        if (d->eng)
            dnnl_engine_destroy(d->eng);
        free(d);
        return sim_err_set(SIM_EINTERNAL, "onednn: cannot create the CPU engine");
    }
    *out = d;
    return 0;
}

static int dn_info(void *st, struct cal_device_info *out)
{
    (void)st;
    memset(out, 0, sizeof *out);
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    snprintf(out->device, sizeof out->device, "unknown CPU");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0) {
            char *v = strchr(line, ':');
            if (v) {
                v += 1 + strspn(v + 1, " \t");
                v[strcspn(v, "\n")] = 0;
                snprintf(out->device, sizeof out->device, "%s", v);
            }
            break;
        }
    if (f)
        fclose(f);
    /* kind: "cpu-" + the model's alphanumerics, lowercased, shortened */
    size_t k = (size_t)snprintf(out->kind, sizeof out->kind, "cpu");
    bool dash = true;
    for (const char *c = out->device; *c && k + 2 < sizeof out->kind; c++) {
        if ((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || (*c >= 'A' && *c <= 'Z')) {
            if (dash)
                out->kind[k++] = '-';
            out->kind[k++] = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
            dash = false;
        } else if (strncmp(c, "(R)", 3) == 0 || strncmp(c, "(TM)", 4) == 0) {
            c += c[1] == 'R' ? 2 : 3;
        } else {
            dash = true;
        }
    }
    out->kind[k] = 0;
    const dnnl_version_t *v = dnnl_version();
    snprintf(out->versions, sizeof out->versions, "oneDNN %d.%d.%d (%s), CPU runtime OpenMP, "
             "ISA %d, max threads %d", v->major, v->minor, v->patch, v->hash ? v->hash : "",
             (int)dnnl_get_effective_cpu_isa(), omp_get_max_threads());
    return 0;
}

/* --- building blocks -------------------------------------------------------------------- */

int dn_new_buf(struct dn *d, size_t size, int first, int last)
{
    if (GROW(d->bufs, d->nbufs, d->capbufs))
        return SIM_ENOMEM;
    d->bufs[d->nbufs] = (struct buf){size, first, last};
    return d->nbufs++;
}

/* A memory object with layout md living in arena buffer b. */
int dn_arena_mem(struct dn *d, const dnnl_memory_desc_t *md, int b, dnnl_memory_t *out)
{
    if (GROW(d->views, d->nviews, d->capviews))
        return SIM_ENOMEM;
    if (dnnl_memory_create(out, md, d->eng, DNNL_MEMORY_NONE) != dnnl_success)
        return sim_err_set(SIM_EINTERNAL, "onednn: cannot create a memory object");
    d->views[d->nviews++] = (struct view){*out, b};
    return 0;
}

static int owned_mem(struct dn *d, const dnnl_memory_desc_t *md, void *handle, dnnl_memory_t *out)
{
    if (GROW(d->owned, d->nowned, d->capowned))
        return SIM_ENOMEM;
    if (dnnl_memory_create(out, md, d->eng, handle) != dnnl_success)
        return sim_err_set(SIM_EINTERNAL, "onednn: cannot create a memory object");
    d->owned[d->nowned++] = *out;
    return 0;
}

int dn_add_step(struct dn *d, dnnl_primitive_desc_t pd, int layer, int nargs,
                    const dnnl_exec_arg_t *args)
{
    if (GROW(d->steps, d->nsteps, d->capsteps))
        return SIM_ENOMEM;
    struct step *s = &d->steps[d->nsteps];
    memset(s, 0, sizeof *s);
    s->layer = layer, s->nargs = nargs;
    memcpy(s->args, args, (size_t)nargs * sizeof *args);
    if (pd && dnnl_primitive_create(&s->prim, pd) != dnnl_success)
        return sim_err_set(SIM_EINTERNAL, "onednn: cannot create the primitive of layer %d", layer);
    d->nsteps++;
    /* its scratchpad: an arena buffer of this layer (the attr asks for user-managed ones) */
    const dnnl_memory_desc_t *smd = pd ? dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0)
                                       : NULL;
    size_t bytes = smd ? dnnl_memory_desc_get_size(smd) : 0;
    if (bytes > 0) {
        int b = dn_new_buf(d, bytes, layer, layer), rc;
        if (b < 0)
            return b;
        if ((rc = dn_arena_mem(d, smd, b, &s->args[s->nargs].memory)))
            return rc;
        s->args[s->nargs++].arg = DNNL_ARG_SCRATCHPAD;
    }
    return 0;
}

/* Copies user data (canonical layout `user`) into a new owned memory of layout `want`,
 * through a reorder run once at prepare time. */
int dn_load_weights(struct dn *d, const struct cal_layer *l, const dnnl_memory_desc_t *user,
                        const float *data, const dnnl_memory_desc_t *want, dnnl_memory_t *out)
{
    dnnl_memory_t src;
    dnnl_primitive_desc_t pd = NULL;
    int rc;
    if ((rc = owned_mem(d, user, (void *)(uintptr_t)data, &src)) ||
        (rc = owned_mem(d, want, DNNL_MEMORY_ALLOCATE, out)))
        return rc;
    if ((rc = dn_chk(dnnl_reorder_primitive_desc_create(&pd, user, d->eng, want, d->eng, NULL), l,
                  "weights reorder")))
        return rc;
    if (GROW(d->setup, d->nsetup, d->capsetup)) {
        dnnl_primitive_desc_destroy(pd);
        return SIM_ENOMEM;
    }
    dnnl_exec_arg_t (*na)[2] = realloc(d->setup_args, (size_t)d->capsetup * sizeof *na);
    if (!na) {
        dnnl_primitive_desc_destroy(pd);
        return SIM_ENOMEM;
    }
    d->setup_args = na;
    rc = dn_chk(dnnl_primitive_create(&d->setup[d->nsetup], pd), l, "weights reorder");
    dnnl_primitive_desc_destroy(pd);
    if (rc)
        return rc;
    d->setup_args[d->nsetup][0] = (dnnl_exec_arg_t){DNNL_ARG_FROM, src};
    d->setup_args[d->nsetup][1] = (dnnl_exec_arg_t){DNNL_ARG_TO, *out};
    d->nsetup++;
    d->weights_bytes += dnnl_memory_desc_get_size(want);
    return 0;
}

int dn_plain_md(dnnl_memory_desc_t *md, int nd, const dnnl_dims_t dims, dnnl_format_tag_t tag)
{
    return dnnl_memory_desc_init_by_tag(md, nd, dims, dnnl_f32, tag) == dnnl_success
               ? 0 : sim_err_set(SIM_EINTERNAL, "onednn: bad memory descriptor");
}

/* The memory of tensor t in layout want: t's own memory, or a transient reorder of it at
 * step `layer`. */
int dn_input_as(struct dn *d, const struct cal_layer *l, int layer, int t,
                    const dnnl_memory_desc_t *want, dnnl_memory_t *out)
{
    if (dnnl_memory_desc_equal(&d->tmd[t + 1], want)) {
        *out = d->tmem[t + 1];
        return 0;
    }
    dnnl_primitive_desc_t pd = NULL;
    int rc, b = dn_new_buf(d, dnnl_memory_desc_get_size(want), layer, layer);
    if (b < 0)
        return b;
    if ((rc = dn_arena_mem(d, want, b, out)) ||
        (rc = dn_chk(dnnl_reorder_primitive_desc_create(&pd, &d->tmd[t + 1], d->eng, want, d->eng,
                                                     d->attr), l, "input reorder")))
        return rc;
    dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, d->tmem[t + 1]}, {DNNL_ARG_TO, *out}};
    rc = dn_add_step(d, pd, layer, 2, a);
    dnnl_primitive_desc_destroy(pd);
    return rc;
}

/* Records layer i's output layout and creates its arena buffer and memory. */
int dn_set_output(struct dn *d, int i, const dnnl_memory_desc_t *md, int last)
{
    d->tmd[i + 1] = *md;
    int b = dn_new_buf(d, dnnl_memory_desc_get_size(md), i, last);
    if (b < 0)
        return b;
    d->tbuf[i + 1] = b;
    return dn_arena_mem(d, md, b, &d->tmem[i + 1]);
}

/* The dims of a tensor of cal shape s with the batch: [C,H,W] and [H,S,S] -> 4-D,
 * tokens [S,D] -> {N*S, D}, vectors [K] -> {N, K}. */
void dn_tensor_dims(const struct dn *d, const struct cal_shape *s, int *nd, dnnl_dims_t dims)
{
    int64_t n = d->batch;
    if (s->nd == 3)
        *nd = 4, dims[0] = n, dims[1] = s->d[0], dims[2] = s->d[1], dims[3] = s->d[2];
    else if (s->nd == 2) /* tokens */
        *nd = 2, dims[0] = n * s->d[0], dims[1] = s->d[1];
    else
        *nd = 2, dims[0] = n, dims[1] = s->d[0];
}

/* Strided 4-D view {N,H,S,dh} of a token tensor {N*S, H*dh}; transposed: {N,H,dh,S}. */
void dn_head_view(dnnl_memory_desc_t *md, int64_t n, int64_t h, int64_t s, int64_t dh,
                      bool transposed)
{
    dnnl_dims_t dims = {n, h, transposed ? dh : s, transposed ? s : dh};
    dnnl_dims_t strides = {s * h * dh, dh, transposed ? 1 : h * dh, transposed ? h * dh : 1};
    dnnl_memory_desc_init_by_strides(md, 4, dims, dnnl_f32, strides);
}

/* Builds primitive descriptor + step for one op with its output set; the common tail. */
int dn_finish(struct dn *d, int i, const struct cal_layer *l, dnnl_primitive_desc_t pd,
                  int last, int nargs, dnnl_exec_arg_t *args, int dst_slot)
{
    int rc = dn_set_output(d, i, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), last);
    if (!rc) {
        args[dst_slot] = (dnnl_exec_arg_t){DNNL_ARG_DST, d->tmem[i + 1]};
        rc = dn_add_step(d, pd, i, nargs, args);
    }
    dnnl_primitive_desc_destroy(pd);
    (void)l;
    return rc;
}

/* conv, fc and linear: the source (reordered when the primitive wants another layout), the
 * weights and bias loaded into the primitive's layouts from their canonical ones (uw, ub),
 * then the step. Consumes pd. */
int dn_weighted_step(struct dn *d, int i, const struct cal_layer *l, dnnl_primitive_desc_t pd,
                         int last, const dnnl_memory_desc_t *uw, const dnnl_memory_desc_t *ub)
{
    dnnl_exec_arg_t a[4];
    dnnl_memory_t src, w, b = NULL;
    int rc;
    if ((rc = dn_input_as(d, l, i, l->in[0], dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0), &src)) ||
        (rc = dn_load_weights(d, l, uw, l->w, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), &w)) ||
        (l->b && (rc = dn_load_weights(d, l, ub, l->b, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1), &b)))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    a[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, src};
    a[1] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, w};
    a[2] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, b};
    return dn_finish(d, i, l, pd, last, b ? 4 : 3, a, b ? 3 : 2);
}


static void embed(struct dn *d, const struct cal_layer *l, int i);

/* --- the inter-op executor ---------------------------------------------------------- */

struct dag {
    struct dn *d;
    int n, p;                    /* layers, workers (the caller is worker 0) */
    int *first;                  /* per layer: its first step; first[n] = nsteps */
    int *cons, *cons_off;        /* consumers of layer i: cons[cons_off[i] .. cons_off[i+1]) */
    int *need;                   /* per layer: inputs produced by layers (CAL_INPUT excluded) */
    int *left;                   /* this pass: inputs not yet done */
    int *ready;                  /* a min-heap of ready layers */
    int nready, done, inflight, gen, err_layer;
    dnnl_status_t err;
    bool quit;
    pthread_mutex_t mu;
    pthread_cond_t cv;           /* a layer became ready, the pass ended, or a new pass began */
    pthread_t *th;
    int started;
    dnnl_stream_t *strm;         /* per worker; strm[0] is the instance's own */
};

static void heap_push(struct dag *g, int layer)
{
    int i = g->nready++;
    while (i > 0 && g->ready[(i - 1) / 2] > layer) {
        g->ready[i] = g->ready[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    g->ready[i] = layer;
}

static int heap_pop(struct dag *g)
{
    int top = g->ready[0], x = g->ready[--g->nready], i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= g->nready)
            break;
        if (c + 1 < g->nready && g->ready[c + 1] < g->ready[c])
            c++;
        if (g->ready[c] >= x)
            break;
        g->ready[i] = g->ready[c];
        i = c;
    }
    if (g->nready > 0)
        g->ready[i] = x;
    return top;
}

/* Runs layers until the pass is over (every layer done, or one failed). Caller holds mu. */
static void dag_work(struct dag *g, int wid)
{
    struct dn *d = g->d;
    while (g->done < g->n && !g->err) {
        if (g->nready == 0) {
            pthread_cond_wait(&g->cv, &g->mu);
            continue;
        }
        int layer = heap_pop(g);
        g->inflight++;
        pthread_mutex_unlock(&g->mu);
        dnnl_status_t r = dnnl_success;
        for (int s = g->first[layer]; s < g->first[layer + 1] && r == dnnl_success; s++) {
            struct step *st = &d->steps[s];
            if (st->prim)
                r = dnnl_primitive_execute(st->prim, g->strm[wid], st->nargs, st->args);
            else
                embed(d, &d->net->layers[st->layer], st->layer);
        }
        if (r == dnnl_success)
            r = dnnl_stream_wait(g->strm[wid]);
        pthread_mutex_lock(&g->mu);
        g->inflight--;
        if (r != dnnl_success && !g->err) {
            g->err = r, g->err_layer = layer;
        } else if (r == dnnl_success) {
            g->done++;
            for (int c = g->cons_off[layer]; c < g->cons_off[layer + 1]; c++)
                if (--g->left[g->cons[c]] == 0)
                    heap_push(g, g->cons[c]);
        }
        pthread_cond_broadcast(&g->cv);
    }
}

struct helper {
    struct dag *g;
    int wid;
};

static void *dag_helper(void *arg)
{
    struct helper *h = arg;
    struct dag *g = h->g;
    int wid = h->wid;
    free(h);
    if (g->d->o.threads > 0)
        omp_set_num_threads(g->d->o.threads);   /* this worker's own OpenMP team */
    pthread_mutex_lock(&g->mu);
    int seen = g->gen;
    for (;;) {
        while (g->gen == seen && !g->quit)
            pthread_cond_wait(&g->cv, &g->mu);
        if (g->quit)
            break;
        seen = g->gen;
        dag_work(g, wid);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

static void dag_destroy(struct dag *g)
{
    if (!g)
        return;
    pthread_mutex_lock(&g->mu);
    g->quit = true;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
    for (int i = 0; i < g->started; i++)
        pthread_join(g->th[i], NULL);
    for (int w = 1; g->strm && w < g->p; w++)
        if (g->strm[w])
            dnnl_stream_destroy(g->strm[w]);
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->cv);
    free(g->first), free(g->cons), free(g->cons_off), free(g->need), free(g->left);
    free(g->ready), free(g->th), free(g->strm);
    free(g);
}

/* The graph of the prepared network (steps are in layer order, a layer's steps contiguous),
 * p - 1 helper threads and their streams. */
static int dag_create(struct dn *d, int p, struct dag **out)
{
    const struct cal_net *net = d->net;
    int n = net->n, rc = 0;
    struct dag *g = calloc(1, sizeof *g);
    if (!g)
        return SIM_ENOMEM;
    g->d = d, g->n = n, g->p = p;
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->first = calloc((size_t)n + 1, sizeof *g->first);
    g->cons_off = calloc((size_t)n + 1, sizeof *g->cons_off);
    g->need = calloc((size_t)n, sizeof *g->need);
    g->left = calloc((size_t)n, sizeof *g->left);
    g->ready = calloc((size_t)n, sizeof *g->ready);
    g->th = calloc((size_t)p, sizeof *g->th);
    g->strm = calloc((size_t)p, sizeof *g->strm);
    int edges = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < net->layers[i].nin; j++)
            edges += net->layers[i].in[j] != CAL_INPUT;
    g->cons = calloc((size_t)edges + 1, sizeof *g->cons);
    if (!g->first || !g->cons_off || !g->need || !g->left || !g->ready || !g->th || !g->strm ||
        !g->cons) {
        dag_destroy(g);
        return SIM_ENOMEM;
    }
    for (int i = 0, s = 0; i <= n; i++) {
        while (s < d->nsteps && d->steps[s].layer < i)
            s++;
        g->first[i] = s;
    }
    /* consumers, counted per edge (a layer reading one tensor twice counts it twice) */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < net->layers[i].nin; j++)
            if (net->layers[i].in[j] != CAL_INPUT) {
                g->cons_off[net->layers[i].in[j] + 1]++;
                g->need[i]++;
            }
    for (int i = 0; i < n; i++)
        g->cons_off[i + 1] += g->cons_off[i];
    int *fill = g->left;                    /* scratch: next free slot per producer */
    for (int i = 0; i < n; i++)
        fill[i] = g->cons_off[i];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < net->layers[i].nin; j++)
            if (net->layers[i].in[j] != CAL_INPUT)
                g->cons[fill[net->layers[i].in[j]]++] = i;
    g->strm[0] = d->strm;
    for (int w = 1; w < p && !rc; w++)
        if (dnnl_stream_create(&g->strm[w], d->eng, dnnl_stream_default_flags) != dnnl_success)
            rc = sim_err_set(SIM_EINTERNAL, "onednn: cannot create the stream of inter-op "
                             "worker %d", w);
    for (int w = 1; w < p && !rc; w++) {
        struct helper *h = malloc(sizeof *h);
        if (!h) {
            rc = SIM_ENOMEM;
            break;
        }
        *h = (struct helper){g, w};
        if (pthread_create(&g->th[g->started], NULL, dag_helper, h) != 0) {
            free(h);
            rc = sim_err_set(SIM_EINTERNAL, "onednn: cannot start inter-op worker %d of %d", w,
                             p);
            break;
        }
        g->started++;
    }
    if (rc) {
        dag_destroy(g);
        return rc;
    }
    *out = g;
    return 0;
}

/* One forward pass through the executor: the caller works as worker 0. */
static int dag_run(struct dag *g)
{
    pthread_mutex_lock(&g->mu);
    g->done = 0, g->nready = 0, g->err = dnnl_success;
    memcpy(g->left, g->need, (size_t)g->n * sizeof *g->left);
    for (int i = 0; i < g->n; i++)
        if (g->need[i] == 0)
            heap_push(g, i);
    g->gen++;
    pthread_cond_broadcast(&g->cv);
    dag_work(g, 0);
    /* after an error, the pass is over only when no worker still runs a layer of it */
    while (g->inflight > 0)
        pthread_cond_wait(&g->cv, &g->mu);
    dnnl_status_t err = g->err;
    int layer = g->err_layer;
    pthread_mutex_unlock(&g->mu);
    return err == dnnl_success ? 0 : dn_chk(err, &g->d->net->layers[layer], "execute");
}

static void dn_unprepare(void *st)
{
    struct dn *d = st;
    dag_destroy(d->dag);
    d->dag = NULL;
    for (int i = 0; i < d->nsteps; i++)
        if (d->steps[i].prim)
            dnnl_primitive_destroy(d->steps[i].prim);
    for (int i = 0; i < d->nsetup; i++)
        dnnl_primitive_destroy(d->setup[i]);
    for (int i = 0; i < d->nviews; i++)
        dnnl_memory_destroy(d->views[i].mem);
    for (int i = 0; i < d->nowned; i++)
        dnnl_memory_destroy(d->owned[i]);
    free(d->steps), free(d->bufs), free(d->views), free(d->owned), free(d->setup);
    free(d->setup_args), free(d->tmd), free(d->tmem), free(d->tbuf), free(d->arena);
    free(d->tokens);
    struct cal_opts o = d->o;
    dnnl_engine_t eng = d->eng;
    dnnl_stream_t strm = d->strm;
    dnnl_primitive_attr_t attr = d->attr;
    memset(d, 0, sizeof *d);
    d->o = o, d->eng = eng, d->strm = strm, d->attr = attr;
}

static int dn_prepare(void *st, const struct cal_net *net, int batch, struct cal_mem_info *out)
{
    struct dn *d = st;
    int rc = 0, n = net->n, nd;
    dn_unprepare(d);
    d->net = net, d->batch = batch;
    d->tmd = calloc((size_t)n + 1, sizeof *d->tmd);
    d->tmem = calloc((size_t)n + 1, sizeof *d->tmem);
    d->tbuf = calloc((size_t)n + 1, sizeof *d->tbuf);
    int *last = malloc((size_t)(n + 1) * sizeof *last);
    size_t *off = NULL;
    if (!d->tmd || !d->tmem || !d->tbuf || !last) {
        rc = SIM_ENOMEM;
        goto out;
    }
    cal_net_last_use(net, last);
    if (net->tokens) {
        if (!(d->tokens = calloc((size_t)(batch * net->input.d[0]), sizeof *d->tokens))) {
            rc = SIM_ENOMEM;
            goto out;
        }
    } else {
        dnnl_dims_t dims;
        dn_tensor_dims(d, &net->input, &nd, dims);
        dn_plain_md(&d->tmd[0], 4, dims, dnnl_nchw);
        /* the input stays intact over the whole pass, so repeated runs read the same input */
        int b = dn_new_buf(d, dnnl_memory_desc_get_size(&d->tmd[0]), 0, n);
        if (b < 0 || (rc = dn_arena_mem(d, &d->tmd[0], b, &d->tmem[0]))) {
            rc = b < 0 ? b : rc;
            goto out;
        }
        d->tbuf[0] = b;
    }
    for (int i = 0; i < n && !rc; i++)
        rc = dn_build_layer(d, i, d->o.keep_all ? n : last[i + 1]);
    if (rc)
        goto out;
    /* plan the arena and bind every view */
    size_t *size = malloc((size_t)d->nbufs * sizeof *size);
    int *first = malloc((size_t)d->nbufs * sizeof *first), *lst = malloc((size_t)d->nbufs * sizeof *lst);
    off = malloc((size_t)d->nbufs * sizeof *off);
    if (!size || !first || !lst || !off) {
        free(size), free(first), free(lst);
        rc = SIM_ENOMEM;
        goto out;
    }
    /* out of order (inter-op workers), every buffer lives for the whole pass */
    bool ooo = d->o.inter_op > 1;
    for (int b = 0; b < d->nbufs; b++)
        size[b] = d->bufs[b].size, first[b] = ooo ? 0 : d->bufs[b].first,
        lst[b] = ooo ? n : d->bufs[b].last;
    rc = cal_arena_plan(d->nbufs, size, first, lst, 64, off, &d->arena_bytes);
    free(size), free(first), free(lst);
    if (rc)
        goto out;
    if (!(d->arena = aligned_alloc(64, (d->arena_bytes + 63) / 64 * 64 + 64))) {
        rc = SIM_ENOMEM;
        goto out;
    }
    memset(d->arena, 0, d->arena_bytes);
    for (int v = 0; v < d->nviews; v++)
        dnnl_memory_set_data_handle(d->views[v].mem, d->arena + off[d->views[v].buf]);
    /* the model load: every weight reorder into the primitives' layouts */
    double t0 = sim_wall_seconds();
    for (int k = 0; k < d->nsetup; k++)
        dnnl_primitive_execute(d->setup[k], d->strm, 2, d->setup_args[k]);
    dnnl_stream_wait(d->strm);
    memset(out, 0, sizeof *out);
    out->load_ms = (sim_wall_seconds() - t0) * 1e3;
    if (ooo && (rc = dag_create(d, d->o.inter_op, &d->dag)))
        goto out;
    out->weights_bytes = d->weights_bytes;
    out->arena_bytes = d->arena_bytes;
out:
    free(last), free(off);
    if (rc)
        dn_unprepare(d);
    return rc;
}

static int dn_set_input(void *st, const void *input)
{
    struct dn *d = st;
    const struct cal_net *net = d->net;
    size_t n = (size_t)(d->batch * cal_shape_count(&net->input));
    if (net->tokens) {
        memcpy(d->tokens, input, n * sizeof *d->tokens);
        return 0;
    }
    void *h = NULL;
    dnnl_memory_get_data_handle(d->tmem[0], &h);
    memcpy(h, input, n * sizeof(float));
    return 0;
}

static void embed(struct dn *d, const struct cal_layer *l, int i)
{
    float *y = NULL;
    dnnl_memory_get_data_handle(d->tmem[i + 1], (void **)&y);
    int64_t S = d->net->input.d[0], D = l->dim, rows = d->batch * S;
    const float *pos = l->w + (int64_t)l->vocab * D, *typ = pos + (int64_t)l->positions * D;
#pragma omp parallel for
    for (int64_t r = 0; r < rows; r++) {
        const float *wv = l->w + (int64_t)d->tokens[r] * D, *pv = pos + (r % S) * D;
        for (int64_t k = 0; k < D; k++)
            y[r * D + k] = wv[k] + pv[k] + (l->types ? typ[k] : 0.0f);
    }
}

static int dn_run(void *st, double *ms)
{
    struct dn *d = st;
    double t0 = sim_wall_seconds();
    if (d->dag) {
        int rc = dag_run(d->dag);
        *ms = (sim_wall_seconds() - t0) * 1e3;
        return rc;
    }
    for (int s = 0; s < d->nsteps; s++) {
        struct step *p = &d->steps[s];
        if (!p->prim) {
            embed(d, &d->net->layers[p->layer], p->layer);
            continue;
        }
        dnnl_status_t r = dnnl_primitive_execute(p->prim, d->strm, p->nargs, p->args);
        if (r != dnnl_success)
            return dn_chk(r, &d->net->layers[p->layer], "execute");
    }
    dnnl_stream_wait(d->strm);
    *ms = (sim_wall_seconds() - t0) * 1e3;
    return 0;
}

static int dn_read(void *st, int layer, float *out)
{
    struct dn *d = st;
    if (!d->o.keep_all && layer != d->net->n - 1)
        return sim_err_set(SIM_EINTERNAL, "onednn: reading a layer other than the last needs keep_all");
    const struct cal_layer *l = &d->net->layers[layer];
    const dnnl_memory_desc_t *md = &d->tmd[layer + 1];
    dnnl_memory_desc_t plain;
    dnnl_format_tag_t tag = md->ndims == 4 ? dnnl_abcd : dnnl_ab;
    dnnl_memory_desc_init_by_tag(&plain, md->ndims, md->dims, dnnl_f32, tag);
    dnnl_memory_t um;
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t p;
    int rc;
    if ((rc = dn_chk(dnnl_memory_create(&um, &plain, d->eng, out), l, "read memory")))
        return rc;
    if ((rc = dn_chk(dnnl_reorder_primitive_desc_create(&pd, md, d->eng, &plain, d->eng, NULL), l,
                  "read reorder"))) {
        dnnl_memory_destroy(um);
        return rc;
    }
    rc = dn_chk(dnnl_primitive_create(&p, pd), l, "read reorder");
    dnnl_primitive_desc_destroy(pd);
    if (!rc) {
        dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, d->tmem[layer + 1]}, {DNNL_ARG_TO, um}};
        rc = dn_chk(dnnl_primitive_execute(p, d->strm, 2, a), l, "read reorder");
        dnnl_stream_wait(d->strm);
        dnnl_primitive_destroy(p);
    }
    dnnl_memory_destroy(um);
    return rc;
}

static void dn_destroy(void *st)
{
    struct dn *d = st;
    if (!d)
        return;
    dn_unprepare(d);
    dnnl_primitive_attr_destroy(d->attr);
    dnnl_stream_destroy(d->strm);
    dnnl_engine_destroy(d->eng);
    free(d);
}

const struct cal_backend_ops cal_backend_onednn = {
    .name = "onednn",
    .description = "oneDNN primitives on the CPU (fp32; threads = OpenMP threads)",
    .create = dn_create,
    .info = dn_info,
    .prepare = dn_prepare,
    .set_input = dn_set_input,
    .run = dn_run,
    .read = dn_read,
    .unprepare = dn_unprepare,
    .destroy = dn_destroy,
};
