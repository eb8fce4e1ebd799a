/* sim_data — where servesim's shipped data (zoos, networks) lives, found at run time so that
 * an installed binary works outside its source tree.
 *
 * sim_data_dir("zoo", compiled) answers, in order: $SERVESIM_DATA/zoo when SERVESIM_DATA is
 * set; <the binary's folder>/../share/servesim/zoo when that folder exists (an installed
 * tree: cmake --install); else `compiled`, the source tree's folder the build knows. */
#ifndef SIM_DATA_H
#define SIM_DATA_H

#include <stddef.h>

/* The folder of `sub` (no trailing slash) into out; returns out. */
const char *sim_data_dir(const char *sub, const char *compiled, char *out, size_t size);
/* The installed data root (<bin>/../share/servesim) when it exists, else "" (for --version). */
const char *sim_data_root(char *out, size_t size);

#endif
