/* trace_fields — the trace readers' lines, fields and dates (trace_int.h): a line buffer
 * that grows, fields split on a separator, numbers and counts with messages that name the
 * file, line and column, and civil dates to seconds without the C library's time zone. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim_err.h"
#include "sim_grow.h"
#include "trace_int.h"

/* ---------------------------------------------------------------- lines and fields */

int tr_open_file(struct trace_reader *rd, int i)
{
    if (rd->f)
        fclose(rd->f);
    const char *path = rd->spec.files[i];
    rd->f = fopen(path, "r");
    rd->file_i = i;
    rd->line = 0;
    if (!rd->f)
        return sim_err_set(errno == ENOENT ? SIM_ENOENT : SIM_EIO, "%s: cannot open: %s",
                           path, strerror(errno));
    /* a trace is read twice (the scan, then the replay) and must end: a regular file */
    struct stat sb;
    if (fstat(fileno(rd->f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        bool dir = S_ISDIR(sb.st_mode);
        fclose(rd->f);
        rd->f = NULL;
        return sim_err_set(SIM_EINVAL, "%s: expected a trace file, found %s", path,
                           dir ? "a folder" : "something else than a regular file (a device, "
                                              "FIFO or socket: a trace is read twice and must "
                                              "end; save it to a file first)");
    }
    return 0;
}

const char *tr_fname(const struct trace_reader *rd) { return rd->spec.files[rd->file_i]; }

/* What a message quotes of a field it could not read: its leading token (letters, digits,
 * and . + - _ : at most TOKEN_MAX), "..." where the field goes on; never the rest of a line,
 * which may be another file's content. */
#define TOKEN_WORD "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.+-_"
#define TOKEN_DATE "0123456789-: .T"
static const char *token_of(const char *s, const char *chars, char out[TOKEN_MAX + 4])
{
    size_t n = 0;
    while (n < TOKEN_MAX && s[n] && strchr(chars, s[n]))
        n++;
    if (n == 0 && s[0])                 /* a field that starts with anything else */
        n = 1;
    memcpy(out, s, n);
    strcpy(out + n, s[n] ? "..." : "");
    return out;
}

const char *tr_token(const char *s, char out[TOKEN_MAX + 4])
{
    return token_of(s, TOKEN_WORD, out);
}

/* Next line of the current file without its end of line: 1, or 0 at the file's end. A line
 * ends at LF, CR LF or a lone CR (old Mac files); one longer than TRACE_LINE_MAX is refused. */
int tr_read_line(struct trace_reader *rd)
{
    size_t n = 0;
    int c = EOF;
    bool any = false;
    flockfile(rd->f);
    while ((c = getc_unlocked(rd->f)) != EOF) {
        any = true;
        if (c == '\n')
            break;
        if (c == '\r') {
            int d = getc_unlocked(rd->f);
            if (d != '\n' && d != EOF)
                ungetc(d, rd->f);
            break;
        }
        if (c == 0) {
            funlockfile(rd->f);
            return sim_err_set(SIM_EINVAL, "%s:%ld: expected text, found a NUL byte",
                               tr_fname(rd), rd->line + 1);
        }
        if (n + 2 > rd->cap) {
            if (rd->cap >= TRACE_LINE_MAX) {
                funlockfile(rd->f);
                return sim_err_set(SIM_EINVAL, "%s:%ld: a line longer than %d MiB: not a "
                                   "trace of a known format", tr_fname(rd), rd->line + 1,
                                   TRACE_LINE_MAX >> 20);
            }
            size_t cap = rd->cap ? 2 * rd->cap : 4096;
            char *b = realloc(rd->buf, cap);
            if (!b) {
                funlockfile(rd->f);
                return SIM_ENOMEM;
            }
            rd->buf = b;
            rd->cap = cap;
        }
        rd->buf[n++] = (char)c;
    }
    bool err = ferror(rd->f);
    funlockfile(rd->f);
    if (err)
        return sim_err_set(SIM_EIO, "%s:%ld: read error: %s", tr_fname(rd), rd->line + 1,
                           strerror(errno));
    if (!any)
        return 0;
    if (!rd->buf && !(rd->buf = malloc(rd->cap = 4096)))
        return SIM_ENOMEM;
    rd->buf[n] = 0;
    rd->line++;
    return 1;
}

/* Splits the line at `sep` (or at runs of blanks when sep == ' ') into rd->fld. With ',' a
 * field may be quoted as RFC 4180 has it ("a, b" and "say ""hi""" are one field each). */
int tr_split(struct trace_reader *rd, char sep)
{
    rd->nfld = 0;
    char *p = rd->buf;
    for (;;) {
        if (sep == ' ')
            while (*p == ' ' || *p == '\t')
                p++;
        if (sep == ' ' && !*p)
            break;
        if (sim_grow(&rd->fld, &rd->cap_fld, rd->nfld + 1, sizeof *rd->fld, 64))
            return SIM_ENOMEM;
        if (sep == ',' && *p == '"') {  /* quoted: up to the lone closing quote */
            char *w = p, *r = p + 1;
            for (;; r++) {
                if (!*r)
                    return sim_err_set(SIM_EINVAL, "%s:%ld: field %d: a quoted field without "
                                       "its closing quote (a field may not span lines)",
                                       tr_fname(rd), rd->line, rd->nfld + 1);
                if (*r == '"' && r[1] == '"')
                    *w++ = *r++;
                else if (*r == '"')
                    break;
                else
                    *w++ = *r;
            }
            *w = 0;
            rd->fld[rd->nfld++] = p;
            r++;
            if (*r && *r != ',')
                return sim_err_set(SIM_EINVAL, "%s:%ld: field %d: expected ',' or the line's "
                                   "end after a quoted field, found '%c'", tr_fname(rd), rd->line,
                                   rd->nfld, *r);
            if (!*r)
                break;
            p = r + 1;
            continue;
        }
        rd->fld[rd->nfld++] = p;
        char *e = sep == ' ' ? p + strcspn(p, " \t") : strchr(p, sep);
        if (!e || !*e)
            break;
        *e = 0;
        p = e + 1;
    }
    return 0;
}

int tr_expect_fields(struct trace_reader *rd, int n, const char *what)
{
    if (rd->nfld < n)
        return sim_err_set(SIM_EINVAL, "%s:%ld: expected %d fields (%s), found %d", tr_fname(rd),
                           rd->line, n, what, rd->nfld);
    return 0;
}

int tr_field_num(struct trace_reader *rd, int i, const char *col, bool integer, double *out)
{
    const char *s = rd->fld[i];
    char *end, tok[TOKEN_MAX + 4];
    errno = 0;
    double x = strtod(s, &end);
    while (*end == ' ')
        end++;
    if (!*s || *end || errno || !isfinite(x) || x < 0 || (integer && x != floor(x)))
        return sim_err_set(SIM_EINVAL, "%s:%ld: column %d (%s): expected a non-negative %s, "
                           "found \"%s\"", tr_fname(rd), rd->line, i + 1, col,
                           integer ? "integer" : "number", tr_token(s, tok));
    *out = x;
    return 0;
}

/* A count of requests in one row: at most TRACE_COUNT_MAX (trace.h). */
int tr_field_count(struct trace_reader *rd, int i, const char *col, bool integer,
                       double *out)
{
    int rc = tr_field_num(rd, i, col, integer, out);
    if (!rc && *out > TRACE_COUNT_MAX)
        return sim_err_set(SIM_EINVAL, "%s:%ld: column %d (%s): expected a count of at most "
                           "%.0e requests in one row, found %.6g", tr_fname(rd), rd->line, i + 1,
                           col, TRACE_COUNT_MAX, *out);
    return rc;
}

/* ---------------------------------------------------------------- dates */


int64_t tr_days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m)
{
    static const int dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return dim[m - 1] + (m == 2 && leap);
}

/* Whole Unix seconds and the fraction apart: a double of ~1.7e9 s keeps only ~0.2 us.
 * SIM_EINVAL for text that is not a date-time, NO_SUCH_DAY for a day the month does not have
 * (2014-02-30: not normalised into March). */
#define NO_SUCH_DAY 1
static int parse_datetime2(const char *s, int64_t *sec, double *frac_out)
{
    int y, mo, d, h, mi, se, n = 0;
    if (sscanf(s, "%4d-%2d-%2d%*1[ T]%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &se, &n) != 6 ||
        n < 19)
        return SIM_EINVAL;
    double frac = 0;
    const char *p = s + n;
    if (*p == '.') {
        double scale = 0.1;
        for (p++; isdigit((unsigned char)*p); p++, scale /= 10)
            frac += (*p - '0') * scale;
    }
    if (*p == 'Z')
        p++;
    if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60 || y < 1970)
        return SIM_EINVAL;
    if (d > days_in_month(y, mo))
        return NO_SUCH_DAY;
    *sec = tr_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
    *frac_out = frac;
    return 0;
}

int trace_parse_datetime(const char *s, double *out)
{
    int64_t sec;
    double frac;
    if (parse_datetime2(s, &sec, &frac))
        return SIM_EINVAL;
    *out = (double)sec + frac;
    return 0;
}

/* A time as whole seconds and a fraction (numbers: sec 0, frac the number). */
int tr_field_time(struct trace_reader *rd, int i, const char *col, bool datetime,
                      struct ttime *out)
{
    out->sec = 0;
    if (!datetime)
        return tr_field_num(rd, i, col, false, &out->frac);
    int rc = parse_datetime2(rd->fld[i], &out->sec, &out->frac);
    char tok[TOKEN_MAX + 4];
    if (rc == NO_SUCH_DAY)
        return sim_err_set(SIM_EINVAL, "%s:%ld: column %d (%s): invalid date \"%s\" (the "
                           "month has no such day)", tr_fname(rd), rd->line, i + 1, col,
                           token_of(rd->fld[i], TOKEN_DATE, tok));
    if (rc)
        return sim_err_set(SIM_EINVAL, "%s:%ld: column %d (%s): expected a date-time "
                           "\"YYYY-MM-DD HH:MM:SS[.fraction]\", found \"%s\"", tr_fname(rd),
                           rd->line, i + 1, col, token_of(rd->fld[i], TOKEN_DATE, tok));
    return 0;
}

