/* fuzz.h — the libFuzzer entry point every target in tests/fuzz defines, and what the targets
 * share. Built two ways: with clang's libFuzzer (scripts/fuzz.sh; SERVESIM_FUZZ=ON) to search
 * for crashes, and with fuzz_main.c as plain programs that replay the regression inputs in
 * tests/fuzz/regress/TARGET and the seeds in the test suite (ctest: fuzz.TARGET). */
#ifndef FUZZ_H
#define FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a NUL-terminated string (malloc'd; NULL when out of memory). */
char *fuzz_text(const uint8_t *data, size_t size);
/* The input written to a file of this process (its path; reused by every call). */
const char *fuzz_file(const uint8_t *data, size_t size, const char *suffix);

struct sim_config;
/* Runs cfg through the engine when it describes a small run: a plain rate (no segments or
 * schedules, whose rates the bound would not see), at most 5 simulated seconds (and drain),
 * 20,000 expected requests, 50 models, 64 GPUs, 1,000 requests alive at once and 300,000
 * events (periodic work of a tiny period stops there), so that
 * run-time defects of accepted inputs are reached without a run that outlasts libFuzzer's
 * timeout. Otherwise does nothing. */
void fuzz_run_small(struct sim_config *cfg);

#endif
