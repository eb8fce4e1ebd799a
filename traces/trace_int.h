/* trace_int — what the trace readers' files share (trace.c: the formats; trace_fields.c:
 * lines, fields and dates). Not for other files. */
#ifndef TRACE_INT_H
#define TRACE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "trace.h"

#define AZF_MINUTES 1440
#define AZF_FIELDS (4 + AZF_MINUTES)

/* The longest token a message quotes from a file (tr_token) */
#define TOKEN_MAX 24

struct fn {                      /* one Azure function */
    uint64_t key;                /* FNV-1a of owner, app, function */
    char hash[72];               /* HashFunction (64 hex digits upstream) */
    double volume;
    int order;                   /* first appearance in the first file that has it */
    int file_rank, volume_rank;  /* among the selected streams */
};

struct trace_reader {
    struct trace_spec spec;
    FILE *f;
    int file_i;
    long line;
    char *buf;
    size_t cap;
    char **fld;
    int nfld, cap_fld;
    bool have_origin, have_last;
    int64_t origin_sec;
    double origin, origin_unix, last_t, last_end;  /* last_*: relative to origin_sec */
    /* Azure Functions */
    struct fn *fns;              /* selected streams, in stream order */
    int nstreams;
    uint64_t *map_key;           /* open addressing: key -> stream index */
    int *map_val;
    size_t map_cap;
    double *day;                 /* [stream][minute] of the loaded day */
    int day_file, minute, next_stream;
    bool day_ready;
    /* BurstGPT: the columns of Timestamp, Request tokens, Response tokens, and their count */
    int bg_t, bg_req, bg_resp, bg_nf;
    /* Mooncake: every request's block ids, kept until trace_close (requests refer to them) */
    struct tr_chunk *arena;
};

struct tr_chunk {                /* a block of the arena */
    struct tr_chunk *next;
    size_t used, cap;
    _Alignas(8) unsigned char data[];
};

struct ttime {
    int64_t sec;
    double frac;
};

/* The record's time (and extent dt) placed against the trace's origin, checked to be in
 * time order; rec's place fields set. */
int tr_place(struct trace_reader *rd, struct ttime at, double dt, struct trace_rec *rec);
/* Next non-empty data line of any file (headers consumed per file); 1, 0 at the end. */
int tr_next_data_line(struct trace_reader *rd);
/* Mooncake's rows (trace_mooncake.c). */
int tr_mooncake_next(struct trace_reader *rd, struct trace_rec *rec);

/* Opens the i-th file of the spec (errors name it). */
int tr_open_file(struct trace_reader *rd, int i);
/* The current file's name, for messages. */
const char *tr_fname(const struct trace_reader *rd);
/* The first token of s, quoted for a message, into out. */
const char *tr_token(const char *s, char out[TOKEN_MAX + 4]);
/* The current file's next line into rd->buf, without its end of line: 1, or 0 at the
 * file's end (errors as < 0, said). */
int tr_read_line(struct trace_reader *rd);
/* rd->buf split on sep into rd->fld, rd->nfld; the field count is checked by the next. */
int tr_split(struct trace_reader *rd, char sep);
int tr_expect_fields(struct trace_reader *rd, int n, const char *what);
/* Field i as a number (an integer if asked), its column named in the message; counts are
 * also non-negative. */
int tr_field_num(struct trace_reader *rd, int i, const char *col, bool integer, double *out);
int tr_field_count(struct trace_reader *rd, int i, const char *col, bool integer, double *out);
/* Days since 1970-01-01 of a proleptic Gregorian date. */
int64_t tr_days_from_civil(int64_t y, int m, int d);
/* Field i as a time: seconds, or a date-time "YYYY-MM-DD hh:mm:ss[.f]" (datetime). */
int tr_field_time(struct trace_reader *rd, int i, const char *col, bool datetime,
                  struct ttime *out);

#endif
