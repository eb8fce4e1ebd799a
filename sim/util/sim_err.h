/* sim_err — the one error table of servesim.
 *
 * Every function that can fail returns int: 0 (SIM_OK) or a negative SIM_E* code from the
 * X-macro table below, which also yields the code's name and short text. The detailed message
 * of the most recent failure (file:line or JSON path, expected vs found) is kept in one
 * process-wide buffer written by sim_err_set() and read by sim_err_msg(); servesim is
 * single-threaded per process (sweeps use processes), so one buffer is enough.
 * Exit codes follow the class of the error: bad input exits 2, a question without a valid
 * answer (SIM_EINFEASIBLE: an SLO no batch can meet) exits 4, an interrupt (SIM_EINTR, Ctrl-C)
 * exits 130, anything else exits 1. */
#ifndef SIM_ERR_H
#define SIM_ERR_H

#include <stdbool.h>

#define SIM_ERRORS(X)                                                   \
    X(SIM_OK, 0, "success")                                              \
    X(SIM_EINVAL, -1, "invalid input")                                   \
    X(SIM_ENOENT, -2, "file not found")                                  \
    X(SIM_EIO, -3, "input/output error")                                 \
    X(SIM_ENOMEM, -4, "out of memory")                                   \
    X(SIM_EDB, -5, "results database error")                             \
    X(SIM_EPOLICY, -6, "policy error")                                   \
    X(SIM_EUSAGE, -7, "bad command line")                                \
    X(SIM_EINTERNAL, -8, "internal error")                               \
    X(SIM_EUNAVAIL, -9, "not available on this machine")                \
    X(SIM_EINFEASIBLE, -10, "the question has no valid answer")         \
    X(SIM_EINTR, -11, "interrupted")

enum sim_errcode {
#define SIM_ERR_ENUM(name, val, text) name = (val),
    SIM_ERRORS(SIM_ERR_ENUM)
#undef SIM_ERR_ENUM
};

const char *sim_err_name(int code);
const char *sim_err_text(int code);

/* Records a detailed message for `code` and returns `code`, so callers write
 * `return sim_err_set(SIM_EINVAL, "%s: expected ..., got ...", path);`. */
int sim_err_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prefixes the current message with `prefix: ` (e.g. the file name) and returns `code`. */
int sim_err_prefix(int code, const char *prefix);
const char *sim_err_msg(void);
/* The message for an error `code` returned: the recorded one, else the code's own text
 * ("out of memory"), never an empty or "no details" line. */
const char *sim_err_msg_for(int code);
void sim_err_clear(void);

/* True for errors caused by the user's input (exit 2), false for internal ones (exit 1). */
bool sim_err_is_input(int code);

/* Values of command-line options, parsed whole: a finite number in [lo, hi] (lo itself
 * excluded when lo_open), an integer in [lo, hi]. Anything else is a usage error naming the
 * option and the range, e.g. `--tol: expected a number in [0, 100], got "fast"`. */
int sim_arg_num(const char *opt, const char *v, double lo, bool lo_open, double hi,
                double *out /* OUT */);
int sim_arg_int(const char *opt, const char *v, long long lo, long long hi,
                long long *out /* OUT */);

/* A broken invariant is a bug: print where and why, then abort. */
#define SIM_BUG(...) sim_bug(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void sim_bug(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
