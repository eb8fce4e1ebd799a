/* cal_fuse — how a serving engine runs a cal_net rather than how a framework issues it layer by
 * layer: the fusion plan (which layers become one group: a convolution or GEMM with its bias,
 * residual add and activation; an unfolded batch norm with its activation) and the
 * channels-last (NHWC) transforms of weights and activations. Plain C with no device code, so
 * the transforms are tested on a CPU against the reference (tests/unit/test_calibrate.c);
 * the cuDNN backend executes the plan (cal_cudnn.c) with the element rules of cal_epi.h.
 *
 * Every convolution or fc/linear with a bias is a group (its bias is an epilogue), with or
 * without an absorbed add or activation. A group runs when its execution reaches its last layer (so a residual operand computed
 * after the group's head is ready); the layers it absorbed are never materialised. */
#ifndef CAL_FUSE_H
#define CAL_FUSE_H

#include <stdbool.h>
#include <stddef.h>

#include "cal_epi.h"
#include "cal_net.h"

struct cal_group {
    int head;      /* conv, fc, linear, bn or add: the layer the group starts with */
    int add;       /* the residual add absorbed after a conv/fc/linear head (-1: none) */
    int z;         /* the add's other operand (a tensor id: a layer or CAL_INPUT) */
    int act;       /* the activation layer absorbed (-1: none) */
    int last;      /* the layer whose output the group writes */
    int kind;      /* enum cal_act of the absorbed activation (CAL_ACT_NONE when none) */
};

struct cal_plan {
    int n;             /* layers of the network */
    int ngroups;
    struct cal_group *groups; /* in execution order (by last layer) */
    int *into;         /* per layer: the layer whose output carries its result (itself when
                        * materialised; the group's last layer when absorbed) */
    int *group;        /* per layer: index into groups of the group ending there, or -1 */
};

/* The activation a layer's op computes, or -1 when the op is not an element-wise activation. */
int cal_act_of(enum cal_op op);

/* Plans the groups of a network (usually after cal_net_fold_bn). fuse = false gives the
 * identity plan (every layer on its own). Free with cal_plan_free. */
int cal_plan_build(const struct cal_net *net, bool fuse, struct cal_plan *out /* OUT */);
void cal_plan_free(struct cal_plan *p);
/* Layers that run (materialised ones): what a pass launches, before a backend's own splits. */
int cal_plan_steps(const struct cal_plan *p);
/* Liveness under the plan: last[t+1] = the last execution step (layer index) that reads tensor
 * t (t = CAL_INPUT .. n-1), where a group reads its head's inputs and its residual operand at
 * its last layer. last[0] is the input's; the network's output lives to n-1. */
void cal_plan_last_use(const struct cal_net *net, const struct cal_plan *p,
                       int *last /* OUT: n+1 entries */);

/* Batch-norm inference as a per-channel affine map y = x * scale + shift (in float). */
void cal_bn_affine(const struct cal_layer *bn, float *scale /* OUT: nb */, float *shift /* OUT */);

/* Channels-last transforms. A convolution's weights [K][C/g][R][S] to [K][R][S][C/g]. */
void cal_nhwc_conv_weights(const float *w, float *out, int k, int cg, int r, int s);
/* An fc's weights [out][C*H*W] (inputs in C,H,W order) to [out][H*W*C] (the order of a
 * flattened NHWC activation). */
void cal_nhwc_fc_weights(const float *w, float *out, int out_features, int c, int hw);
/* Activations: n samples of [C][H*W] to [H*W][C] (to_nhwc) or back. */
void cal_nhwc_permute(const float *x, float *y, int n, int c, int hw, bool to_nhwc);

#endif
