/* trace — streaming readers of real request traces (constant memory in the trace's length,
 * but Mooncake's block ids, which requests refer to for the run: 4 bytes an id).
 *
 * A reader turns one or more files of a known public format into a time-ordered sequence of
 * records; what those records mean for arrivals (the replay: scaling, windows, gaps, models)
 * is workloads/wl_replay. Two kinds of record:
 *   - a request:  dt == 0, count == 1, at time t (Azure LLM 2023, CSV of timestamps);
 *   - an interval: [t, t + dt) with `count` requests of one stream (Azure Functions 2019
 *     per function and minute, Wikipedia hourly counts, Wikimedia projectcounts, CSV counts).
 * Times are seconds from the trace's origin: the first record's start for every format but
 * Azure Functions, whose origin is minute 0 of its first day file. Records of one interval
 * (one per selected function, Azure Functions) come out together, streams in order.
 *
 * Every error names the file and line, what was expected and what was found, and returns
 * SIM_EINVAL (bad content) or SIM_ENOENT/SIM_EIO (files); a reader never crashes on bad
 * input. Formats: traces/README.md. */
#ifndef TRACE_H
#define TRACE_H

#include <stdbool.h>
#include <stdint.h>

struct sim_prefix;                     /* sim_types.h */

/* Bounds on what a trace file may hold: a line (a trace of a known format has short lines;
 * this refuses a binary file or a device read by mistake), and the requests one row counts
 * (Wikipedia's busiest hour holds about 2e7; beyond this, totals lose integer precision and
 * no cluster serves the rate). */
#define TRACE_LINE_MAX (64 << 20)
#define TRACE_COUNT_MAX 1e12

enum trace_format {
    TRACE_AZURE_FUNCTIONS,   /* invocations_per_function_md.anon.dNN.csv, day files in order */
    TRACE_AZURE_LLM,         /* AzureLLMInferenceTrace_*.csv: TIMESTAMP,ContextTokens,GeneratedTokens */
    TRACE_WIKIPEDIA,         /* hour_end_utc,requests */
    TRACE_PROJECTCOUNTS,     /* raw Wikimedia projectcounts-YYYYMMDD-HHMMSS files, one per hour */
    TRACE_CSV_TIMESTAMPS,    /* generic: one request per row */
    TRACE_CSV_COUNTS,        /* generic: (interval start, count) rows */
    TRACE_BURSTGPT,          /* BurstGPT_*.csv: Timestamp (s), [Session ID, Elapsed time,]
                              * Model, Request tokens, Response tokens, Total tokens, Log Type */
    TRACE_MOONCAKE,          /* Mooncake's *.jsonl: one object a line, timestamp (ms),
                              * input_length, output_length, hash_ids (prompt blocks) */
};

enum trace_select { TRACE_SEL_ALL, TRACE_SEL_TOP, TRACE_SEL_HASHES, TRACE_SEL_SAMPLE };
enum trace_size { TRACE_SIZE_NONE, TRACE_SIZE_CONTEXT, TRACE_SIZE_GENERATED };

struct trace_spec {
    enum trace_format format;
    int nfiles;
    const char *const *files;          /* resolved paths, in replay order */
    /* Azure Functions: which functions become streams */
    enum trace_select select;
    int select_k;                      /* top / sample */
    uint64_t sample_seed;
    int nhashes;
    const char *const *hashes;         /* HashFunction values */
    /* Azure LLM: a per-request size column */
    enum trace_size size;
    /* generic CSV */
    int time_col, count_col;           /* 0-based */
    bool header, datetime;             /* a header row; times as "YYYY-MM-DD HH:MM:SS[.f]" */
    double interval_s;                 /* counts: each row's interval */
    /* projectcounts */
    const char *project;               /* e.g. "en" */
    /* Mooncake: the prompt tokens one of hash_ids stands for */
    int block_tokens;
};

struct trace_rec {
    double t, dt;                      /* seconds from the origin; dt 0 for a request */
    int stream;                        /* 0 but for Azure Functions (selected function index) */
    double count;                      /* requests in the interval (1 for a request) */
    double size;                       /* per-request size (tokens), 0 if none */
    int32_t prompt, output;            /* a request's tokens (Azure LLM: ContextTokens,
                                        * GeneratedTokens), 0 if none */
    const struct sim_prefix *prefix;   /* Mooncake: its prompt's block ids (hash_ids), valid
                                        * until trace_close; NULL if none */
    const char *file;                  /* where the record came from (messages) */
    long line;
};

struct trace_reader;

int trace_open(const struct trace_spec *spec, struct trace_reader **out /* OUT */);
/* 1: *rec holds the next record; 0: end of the trace; < 0: error (sim_err_msg). */
int trace_next(struct trace_reader *rd, struct trace_rec *rec /* OUT */);
void trace_close(struct trace_reader *rd);

/* Streams (1 but for Azure Functions), each with a name (the function's hash) and its total
 * volume over all files; in the order the selection produced (top-k: by volume). */
int trace_stream_count(const struct trace_reader *rd);
const char *trace_stream_name(const struct trace_reader *rd, int i);
double trace_stream_volume(const struct trace_reader *rd, int i);
/* Rank of stream i by first appearance in the files (the trace's own order; round-robin
 * mapping) and by volume (largest first, ties by that order). */
int trace_stream_file_order(const struct trace_reader *rd, int i);
int trace_stream_volume_rank(const struct trace_reader *rd, int i);
/* Absolute time of the origin (Unix seconds, UTC assumed), or NAN when unknown. */
double trace_origin_unix(const struct trace_reader *rd);

/* "YYYY-MM-DD HH:MM:SS[.fraction]" (or with 'T') to Unix seconds (UTC). 0 or SIM_EINVAL. */
int trace_parse_datetime(const char *s, double *out /* OUT */);
/* Formats of one request a row (replayed time by time), and those whose rows carry prompt
 * and output tokens. */
bool trace_format_per_request(enum trace_format f);
bool trace_format_has_tokens(enum trace_format f);
/* The format's name in configs ("azure_functions", ...) and back; -1 if unknown. */
const char *trace_format_name(enum trace_format f);
extern const char *const trace_format_names[];   /* NULL-terminated, enum order */

#endif
