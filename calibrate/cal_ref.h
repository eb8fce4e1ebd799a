/* cal_ref — a straightforward reference implementation of every layer of cal_net, in plain
 * loops over the canonical layouts. It is the oracle of the backend correctness tests (and of
 * `servesim-calibrate check`), not a timing backend: nothing here is optimised. */
#ifndef CAL_REF_H
#define CAL_REF_H

#include "cal_net.h"

/* Computes layer li for `batch` samples. in[j] points at input j (int32 token ids for embed,
 * floats otherwise) and out at the output, all in canonical layout. */
void cal_ref_layer(const struct cal_net *net, int li, int batch, const void *const *in,
                   float *out);

/* Runs every layer; outs receives net->n arrays (free each, then outs itself). */
int cal_ref_forward(const struct cal_net *net, int batch, const void *input,
                    float ***outs /* OUT */);

/* Deterministic input of `batch` samples (floats in [-1,1] or token ids below the
 * vocabulary); free() it. */
void *cal_ref_input(const struct cal_net *net, int batch, uint64_t seed);

/* max |a-b| / max(max |b|, 1e-6) over n values: a scale-free error for whole tensors. */
double cal_ref_rel_err(const float *a, const float *b, int64_t n);

#endif
