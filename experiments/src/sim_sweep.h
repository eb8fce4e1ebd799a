/* sim_sweep — parameter sweeps: `servesim sweep SWEEP.json -j N`.
 *
 * A sweep file names a base config, a grid and what to run per point:
 *   {"name": "single_model", "base": "single_model_8gpu.json", "mode": "goodput",
 *    "grid": {"policy.name": ["symphony", "nexus"], "seed": [1, 2]},
 *    "set": {"duration_s": 30}}
 * Points are the cartesian product of the grid (the last axis varies fastest), each applied
 * to the base like --set (`set` and command-line --set apply first). `cases`, a list of
 * objects each with a "name", is a first axis of named sets of overrides (every member is
 * applied like --set; the name is the config's name too): tests that differ in several keys. Every point's config is
 * validated before anything runs. N worker processes run points; each finished point is
 * written with its sweep_points row in one transaction, so an interrupted sweep resumes by
 * skipping points already in the database, without duplicates. A point that fails is
 * recorded (status failed, error) and the others go on. The sweep's identity is its name
 * plus a hash of its file, its base config and the extra overrides: change any of them and
 * it is a new sweep — refused (usage error) when the database holds the same name under
 * another identity and nothing of this one, unless `force`. Progress on stderr: a bar on a
 * terminal, a line per point otherwise. Under an MPI launcher (`mpirun -n N servesim sweep`)
 * the points go to N ranks instead of worker processes (sim_sweep_mpi.c). */
#ifndef SIM_SWEEP_H
#define SIM_SWEEP_H

#include <stdbool.h>
#include <stddef.h>

#include "sim_param.h"

/* The MPI library sweeps run on under mpirun (its version line), or "none" when servesim was
 * built without MPI. */
const char *sim_sweep_mpi_library(char *buf, size_t n);

int sim_sweep_run(const char *file, const char *db, int jobs, const char *const *sets, int nsets,
                  bool quiet, bool force);
/* The signal that interrupted the last sweep (SIGINT, SIGTERM), 0 if none: its exit status is
 * 128 + it, as a shell's. */
int sim_sweep_signal(void);

/* The keys of a sweep file (sim/util/sim_param.h; `servesim keys --format sweep`). */
extern const struct sim_param sim_sweep_keys[];

#endif
