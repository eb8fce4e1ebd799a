/* cal_net — a network architecture as data: the layer graph that every calibration backend
 * (oneDNN on CPU, cuDNN on GPU, the reference implementation in the tests) executes.
 *
 * A network file (format "servesim-net/1", calibrate/networks/ *.json) lists layers in
 * execution order; each names its inputs (default: the previous layer) and its true shape
 * attributes. Loading infers and checks every shape, so a bad file is refused with its JSON
 * path and the expected vs found shape before anything runs.
 *
 * Shapes are per sample (the batch size is the calibration variable):
 *   [C,H,W] image activations, [S,D] token activations, [H,S,S] attention scores, [K] vectors.
 * Canonical layouts (what the reference uses and backends convert from): activations
 * row-major in those shapes (so NCHW with the batch); conv weights [out][in/g][kh][kw];
 * fc weights [out][K] with K in the input's C,H,W order; linear weights [out][D];
 * embed tables word|position|type, each [rows][dim]. Token inputs are int32 ids.
 * Invariant after load: every layer's inputs come before it, and shapes are consistent. */
#ifndef CAL_NET_H
#define CAL_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CAL_OPS(X)                                                                    \
    X(CAL_CONV, "conv") X(CAL_BN, "bn") X(CAL_RELU, "relu") X(CAL_RELU6, "relu6")      \
    X(CAL_SIGMOID, "sigmoid") X(CAL_TANH, "tanh") X(CAL_GELU, "gelu")                  \
    X(CAL_MAXPOOL, "maxpool") X(CAL_AVGPOOL, "avgpool") X(CAL_GAP, "gap")              \
    X(CAL_ADD, "add") X(CAL_CONCAT, "concat") X(CAL_FC, "fc") X(CAL_LINEAR, "linear")  \
    X(CAL_BMM, "bmm") X(CAL_SOFTMAX, "softmax") X(CAL_LAYERNORM, "layernorm")          \
    X(CAL_EMBED, "embed") X(CAL_TOKEN, "token")

enum cal_op {
#define CAL_OP_ENUM(e, s) e,
    CAL_OPS(CAL_OP_ENUM)
#undef CAL_OP_ENUM
    CAL_NOPS
};

const char *cal_op_name(enum cal_op op);
/* Element-wise activations: relu, relu6, sigmoid, tanh, gelu (erf form). */
bool cal_op_is_eltwise(enum cal_op op);

#define CAL_MAX_IN 8
#define CAL_NAME_MAX 64
#define CAL_INPUT (-1) /* tensor id of the network input */

struct cal_shape {
    int nd;        /* 1, 2 or 3 */
    int64_t d[3];
};

struct cal_layer {
    char name[CAL_NAME_MAX];
    enum cal_op op;
    int nin;
    int in[CAL_MAX_IN];          /* CAL_INPUT or the index of an earlier layer */
    /* attributes (those the op does not use are 0) */
    int out;                     /* conv channels, fc/linear features */
    int kh, kw, sh, sw, ph, pw;  /* conv / pool window, stride, padding */
    int dh, dw, groups;          /* conv dilation (1 = none) and groups */
    bool bias;                   /* conv / fc / linear */
    double eps;                  /* bn, layernorm */
    int heads;                   /* bmm */
    bool transpose_b;            /* bmm */
    double scale;                /* bmm: output multiplied by scale (1 when absent) */
    int vocab, positions, types, dim, index; /* embed; token index */
    /* derived at load */
    int orig;                    /* the layer of the file whose output this layer's output is
                                  * (its own index; a conv that absorbed a bn: the bn's) */
    struct cal_shape shape;      /* output, per sample */
    int64_t params;              /* learned parameters (bn: gamma+beta; running stats apart) */
    double macs;                 /* multiply-accumulates per sample */
    /* canonical host weights, after cal_net_init_weights (NULL where unused) */
    float *w, *b, *mean, *var;
    int64_t nw, nb;              /* element counts of w and b (mean/var have nb) */
};

struct cal_net {
    char name[CAL_NAME_MAX];
    char file[512];
    char source[512];
    bool tokens;                 /* input is int32 token ids [S] */
    struct cal_shape input;
    int n;
    struct cal_layer *layers;
    int64_t pub_params;          /* published figures (0 when none) */
    double pub_gmacs;
    char pub_ref[512];
};

/* Loads and checks a network file. Errors name the file and JSON path. */
int cal_net_load(const char *file, struct cal_net **out /* OUT */);
void cal_net_destroy(struct cal_net *net);
/* Resolves a bare name ("resnet50") against $SERVESIM_NET_DIR or the shipped folder. */
void cal_net_resolve(const char *ref, char *out, size_t size);

/* Deterministic random weights (GSL, one stream per layer from seed) scaled to keep
 * activations O(1); bn running statistics too. */
int cal_net_init_weights(struct cal_net *net, uint64_t seed);
/* Folds every bn whose input is a conv read by nothing else into that conv (weights scaled,
 * bias added) and removes it: what inference runtimes do. Returns the number folded. Needs
 * weights. */
int cal_net_fold_bn(struct cal_net *net);

int64_t cal_shape_count(const struct cal_shape *s);
/* Shape of tensor t (CAL_INPUT or a layer). */
const struct cal_shape *cal_net_tensor_shape(const struct cal_net *net, int t);
int64_t cal_net_params(const struct cal_net *net);
double cal_net_macs(const struct cal_net *net);
/* The layer graph's parallelism as RRL's CPU model reads it (specs/rrl.md): pi = total work
 * over the critical path's (work = multiply-accumulates; the longest chain of dependent
 * layers) and width = the widest join (the most inputs of one concat or add; 1 for a chain). */
void cal_net_parallelism(const struct cal_net *net, double *pi, int *width);
/* Index of the last layer that reads tensor t (t itself when none; n-1 for the output). */
void cal_net_last_use(const struct cal_net *net, int *last /* OUT: n+1 entries, [0]=input */);

/* Places buffers with lifetimes [first, last] (inclusive steps) in one arena so that
 * buffers alive at the same step never overlap: greedy by decreasing size, lowest fitting
 * offset (the TFLite arena planner). Offsets are multiples of align. */
int cal_arena_plan(int n, const size_t *size, const int *first, const int *last, size_t align,
                   size_t *off /* OUT */, size_t *total /* OUT */);

#endif
