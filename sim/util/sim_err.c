/* sim_err — error names, texts and the detailed-message buffer (one per thread); command-line
 * option values and their usage errors. */
#include "sim_err.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* per thread: under MPI, a sweep's rank 0 simulates a point in a second thread */
static _Thread_local char errmsg[4096];

const char *sim_err_name(int code)
{
    switch (code) {
#define SIM_ERR_NAME(name, val, text) case (val): return #name;
        SIM_ERRORS(SIM_ERR_NAME)
#undef SIM_ERR_NAME
    }
    return "SIM_E?";
}

const char *sim_err_text(int code)
{
    switch (code) {
#define SIM_ERR_TEXT(name, val, text) case (val): return text;
        SIM_ERRORS(SIM_ERR_TEXT)
#undef SIM_ERR_TEXT
    }
    return "unknown error";
}

/* A message longer than the buffer keeps its head and its end (where the reason is), the
 * middle elided with a note of how much: a 5,000-character path never hides why. */
static void keep(const char *text, size_t len)
{
    if (len < sizeof errmsg) {
        memcpy(errmsg, text, len + 1);
        return;
    }
    char mid[64];
    int ml = snprintf(mid, sizeof mid, " [... %zu characters ...] ", len - (sizeof errmsg - 64));
    size_t head = (sizeof errmsg - 64) / 3, tail = sizeof errmsg - 64 - head;
    memcpy(errmsg, text, head);
    memcpy(errmsg + head, mid, (size_t)ml);
    memcpy(errmsg + head + (size_t)ml, text + len - tail, tail);
    errmsg[head + (size_t)ml + tail] = '\0';
}

int sim_err_set(int code, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    char small[sizeof errmsg];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    char *big = n >= (int)sizeof small ? malloc((size_t)n + 1) : NULL;
    if (big) {
        vsnprintf(big, (size_t)n + 1, fmt, ap2);
        keep(big, (size_t)n);
        free(big);
    } else {
        keep(small, n >= 0 && n < (int)sizeof small ? (size_t)n : strlen(small));
    }
    va_end(ap2);
    return code;
}

int sim_err_prefix(int code, const char *prefix)
{
    const char *m = errmsg[0] ? errmsg : sim_err_text(code);
    size_t n = strlen(prefix) + 2 + strlen(m);
    char *tmp = malloc(n + 1);
    if (!tmp)
        return code;
    snprintf(tmp, n + 1, "%s: %s", prefix, m);
    keep(tmp, n);
    free(tmp);
    return code;
}

const char *sim_err_msg(void)
{
    return errmsg[0] ? errmsg : "no details";
}

const char *sim_err_msg_for(int code)
{
    /* an allocation that failed where no message was set says so, not an older message */
    if (code == SIM_ENOMEM && !strstr(errmsg, "memory"))
        return sim_err_text(code);
    return errmsg[0] ? errmsg : sim_err_text(code);
}

void sim_err_clear(void)
{
    errmsg[0] = '\0';
}

bool sim_err_is_input(int code)
{
    return code == SIM_EINVAL || code == SIM_ENOENT || code == SIM_EUSAGE ||
           code == SIM_EPOLICY;
}

int sim_arg_num(const char *opt, const char *v, double lo, bool lo_open, double hi,
                double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (*v && !*end && !errno && isfinite(x) && (lo_open ? x > lo : x >= lo) && x <= hi) {
        *out = x;
        return 0;
    }
    char want[96];
    if (isinf(hi) && lo == 0 && lo_open)
        snprintf(want, sizeof want, "a positive number");
    else if (isinf(hi))
        snprintf(want, sizeof want, "a number %s %g", lo_open ? ">" : ">=", lo);
    else
        snprintf(want, sizeof want, "a number in %c%g, %g]", lo_open ? '(' : '[', lo, hi);
    return sim_err_set(SIM_EUSAGE, "%s: expected %s, got \"%s\"", opt, want, v);
}

int sim_arg_int(const char *opt, const char *v, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (*v && !*end && !errno && x >= lo && x <= hi) {
        *out = x;
        return 0;
    }
    if (hi == LLONG_MAX)
        return sim_err_set(SIM_EUSAGE, "%s: expected an integer >= %lld, got \"%s\"", opt, lo, v);
    return sim_err_set(SIM_EUSAGE, "%s: expected an integer in [%lld, %lld], got \"%s\"", opt,
                       lo, hi, v);
}

void sim_bug(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "servesim: BUG at %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}
