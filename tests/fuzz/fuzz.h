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

#endif
