/* sim_err — error names, texts and the process-wide detailed-message buffer. */
#include "sim_err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char errmsg[4096];

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

int sim_err_set(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errmsg, sizeof errmsg, fmt, ap);
    va_end(ap);
    return code;
}

int sim_err_prefix(int code, const char *prefix)
{
    char tmp[sizeof errmsg];
    snprintf(tmp, sizeof tmp, "%s: %s", prefix, errmsg[0] ? errmsg : sim_err_text(code));
    memcpy(errmsg, tmp, sizeof errmsg);
    return code;
}

const char *sim_err_msg(void)
{
    return errmsg[0] ? errmsg : "no details";
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
