/* test.h — the tiny harness of the servesim test suite. Each test executable holds a table of
 * cases; ctest runs one case per entry (`test_x CASE`), so failures are reported per case.
 * CHECK prints the expression and the values (printf-style) and marks the case failed. */
#ifndef TEST_H
#define TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;

#define CHECK(cond, ...)                                                              \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond);  \
            fprintf(stderr, __VA_ARGS__);                                             \
            fputc('\n', stderr);                                                      \
            test_failures++;                                                          \
        }                                                                             \
    } while (0)

#define CHECK_NEAR(got, want, rel)                                                    \
    CHECK(fabs((double)(got) - (double)(want)) <= (rel) * fabs((double)(want)),      \
          "got %.6g, want %.6g within %.2f%%", (double)(got), (double)(want), 100.0 * (rel))

#define REQUIRE_OK(expr)                                                              \
    do {                                                                              \
        int rc_ = (expr);                                                             \
        if (rc_) {                                                                    \
            fprintf(stderr, "%s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #expr, \
                    rc_, sim_err_msg());                                              \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

struct test_case {
    const char *name;
    void (*fn)(void);
};

static inline int test_main(int argc, char **argv, const struct test_case *cases, int n)
{
    if (argc < 2) {
        for (int i = 0; i < n; i++)
            printf("%s\n", cases[i].name);
        return 0;
    }
    for (int i = 0; i < n; i++)
        if (strcmp(argv[1], cases[i].name) == 0) {
            cases[i].fn();
            if (test_failures) {
                fprintf(stderr, "%s: %d check(s) failed\n", cases[i].name, test_failures);
                return 1;
            }
            printf("%s: ok\n", cases[i].name);
            return 0;
        }
    fprintf(stderr, "no test case named %s\n", argv[1]);
    return 2;
}

#define TEST_MAIN(...)                                                                \
    int main(int argc, char **argv)                                                   \
    {                                                                                 \
        static const struct test_case cases[] = {__VA_ARGS__};                      \
        return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));  \
    }

/* A scratch folder for fixtures, made on first use under /tmp and removed by test_scratch_done
 * (call it after test_main). Returns its path. */
static char test_scratch_dir[256];

static inline const char *test_scratch(const char *prefix)
{
    if (!test_scratch_dir[0]) {
        snprintf(test_scratch_dir, sizeof test_scratch_dir, "/tmp/%s_XXXXXX", prefix);
        if (!mkdtemp(test_scratch_dir)) {
            perror("mkdtemp");
            exit(1);
        }
    }
    return test_scratch_dir;
}

static inline void test_scratch_done(void)
{
    if (!test_scratch_dir[0])
        return;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", test_scratch_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", test_scratch_dir);
}

/* TEST_MAIN for a test file that makes fixtures: removes the scratch folder afterwards. */
#define TEST_MAIN_SCRATCH(...)                                                        \
    int main(int argc, char **argv)                                                   \
    {                                                                                 \
        static const struct test_case cases[] = {__VA_ARGS__};                      \
        int rc_ = test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0])); \
        test_scratch_done();                                                          \
        return rc_;                                                                   \
    }

#endif
