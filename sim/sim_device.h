/* sim_device — speed models of a shared device (cluster.interference): how fast each batch
 * running on an executor progresses, given what else runs there. Pure functions of the
 * world's parameters; the engine (sim_batch.c) calls them when batches start or finish and
 * re-times the running ones with the result. Engine-private. */
#ifndef SIM_DEVICE_H
#define SIM_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "sim_world.h"

/* Thread demand of a batch of p inter-op and t intra-op threads on a CPU: t / a(p) under the
 * parametric model, t otherwise (cores it keeps busy when alone). */
double sim_dev_demand(const struct sim_intf_cfg *c, int p, int t);

/* The factor by which a batch's standalone time is stretched on an executor (cpu or GPU,
 * `cores` its cores) while n batches with total thread demand D run there; >= some positive
 * value, 1 under `none`. `rough` is the batch's roughness (sim_intf_roughness of its
 * configuration, computed once when it starts; the parametric CPU model multiplies by it).
 * *missing is set when a table has no row for (p, t). */
double sim_dev_factor(const struct sim_intf_cfg *c, bool cpu, double cores, int n, double D,
                      int p, int t, double rough, bool *missing);

/* The host phase before a batch of b joins the device (parametric GPU executors), in ns. */
int64_t sim_dev_host_ns(const struct sim_intf_cfg *c, bool cpu, int b);

/* Does the speed of one batch depend on the others running beside it? */
bool sim_dev_shared(const struct sim_intf_cfg *c);

#endif
