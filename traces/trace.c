/* trace — streaming readers of Azure Functions 2019, Azure LLM 2023, Wikipedia hourly,
 * Wikimedia projectcounts and generic CSV traces (see trace.h). One line buffer, one field
 * array; Azure Functions holds one day of the selected functions (streams x 1440 counts) and
 * a table of every function seen (for the selection), nothing proportional to the days. */
#include "trace_int.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "sim_err.h"
#include "sim_grow.h"
#include "sim_rng.h"

const char *const trace_format_names[] = {"azure_functions", "azure_llm", "wikipedia",
                                          "projectcounts", "csv_timestamps", "csv_counts",
                                          "burstgpt", "mooncake", NULL};

const char *trace_format_name(enum trace_format f) { return trace_format_names[f]; }

/* ---------------------------------------------------------------- function table */

static uint64_t fn_key(const char *owner, const char *app, const char *func)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s/%s/%s", owner, app, func);
    return sim_fnv1a(SIM_FNV_OFFSET, buf, strlen(buf)) | 1;             /* 0 marks an empty slot */
}

static int map_init(struct trace_reader *rd, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n + 2)
        cap *= 2;
    free(rd->map_key);
    free(rd->map_val);
    rd->map_key = calloc(cap, sizeof *rd->map_key);
    rd->map_val = calloc(cap, sizeof *rd->map_val);
    rd->map_cap = cap;
    return rd->map_key && rd->map_val ? 0 : SIM_ENOMEM;
}

/* The slot of key: its own, or the empty one where it would go. */
static size_t map_slot(const struct trace_reader *rd, uint64_t key)
{
    size_t i = (size_t)(key * 0x9E3779B97F4A7C15ull) & (rd->map_cap - 1);
    while (rd->map_key[i] && rd->map_key[i] != key)
        i = (i + 1) & (rd->map_cap - 1);
    return i;
}

static int map_get(const struct trace_reader *rd, uint64_t key)
{
    size_t i = map_slot(rd, key);
    return rd->map_key[i] ? rd->map_val[i] : -1;
}

static int azf_header(struct trace_reader *rd)
{
    char tok[TOKEN_MAX + 4];
    int rc = tr_read_line(rd);
    if (rc <= 0)
        return rc ? rc : sim_err_set(SIM_EINVAL, "%s:1: expected the header "
                                     "\"HashOwner,HashApp,HashFunction,Trigger,1,...,1440\", "
                                     "found an empty file", tr_fname(rd));
    if ((rc = tr_split(rd, ',')))
        return rc;
    if (rd->nfld != AZF_FIELDS || strcmp(rd->fld[0], "HashOwner") != 0 ||
        strcmp(rd->fld[2], "HashFunction") != 0)
        return sim_err_set(SIM_EINVAL, "%s:1: expected the header \"HashOwner,HashApp,"
                           "HashFunction,Trigger,1,...,1440\" (%d fields), found %d fields "
                           "starting \"%s\"", tr_fname(rd), AZF_FIELDS, rd->nfld,
                           tr_token(rd->fld[0], tok));
    return 0;
}

/* Reads one data row of the current day file: its key and counts (into `counts` if not
 * NULL). 1, 0 at the end of the file, or an error. */
static int azf_row(struct trace_reader *rd, uint64_t *key, double *counts, double *sum)
{
    char tok[TOKEN_MAX + 4];
    int rc = tr_read_line(rd);
    if (rc <= 0)
        return rc;
    if (!rd->buf[0])
        return sim_err_set(SIM_EINVAL, "%s:%ld: expected a function row, found an empty line",
                           tr_fname(rd), rd->line);
    if ((rc = tr_split(rd, ',')))
        return rc;
    if (rd->nfld != AZF_FIELDS)
        return sim_err_set(SIM_EINVAL, "%s:%ld: expected %d fields (HashOwner, HashApp, "
                           "HashFunction, Trigger, 1440 per-minute counts), found %d",
                           tr_fname(rd), rd->line, AZF_FIELDS, rd->nfld);
    if (!rd->fld[2][0] || strlen(rd->fld[2]) >= sizeof ((struct fn *)0)->hash)
        return sim_err_set(SIM_EINVAL, "%s:%ld: column 3 (HashFunction): expected a hash of "
                           "1..71 characters, found \"%s\"", tr_fname(rd), rd->line,
                           tr_token(rd->fld[2], tok));
    *key = fn_key(rd->fld[0], rd->fld[1], rd->fld[2]);
    double s = 0;
    for (int i = 0; i < AZF_MINUTES; i++) {
        double x;
        char col[24];
        snprintf(col, sizeof col, "minute %d", i + 1);
        if ((rc = tr_field_count(rd, 4 + i, col, true, &x)))
            return rc;
        s += x;
        if (counts)
            counts[i] = x;
    }
    *sum = s;
    return 1;
}

static int cmp_volume(const void *a, const void *b);

static int cmp_order(const void *a, const void *b)
{
    const struct fn *x = a, *y = b;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Ranks the selected streams by file order and by volume (a sorted copy, O(k log k)). */
static int rank_streams(struct trace_reader *rd)
{
    int k = rd->nstreams;
    struct fn *c = malloc((size_t)k * sizeof *c);
    if (!c)
        return SIM_ENOMEM;
    for (int i = 0; i < k; i++) {
        c[i] = rd->fns[i];
        c[i].file_rank = i;             /* carries the stream index through the sort */
    }
    qsort(c, (size_t)k, sizeof *c, cmp_order);
    for (int r = 0; r < k; r++)
        rd->fns[c[r].file_rank].file_rank = r;
    for (int i = 0; i < k; i++) {
        c[i] = rd->fns[i];
        c[i].volume_rank = i;
    }
    qsort(c, (size_t)k, sizeof *c, cmp_volume);
    for (int r = 0; r < k; r++)
        rd->fns[c[r].volume_rank].volume_rank = r;
    free(c);
    return 0;
}

static int cmp_volume(const void *a, const void *b)
{
    const struct fn *x = a, *y = b;
    if (x->volume != y->volume)
        return x->volume > y->volume ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Pass 1: every function of every day file with its volume; then the selection. */
/* Pass 1 over every file: each function seen (its hash, first appearance, total volume)
 * into *all (n of them), found by key through the map. */
static int azf_scan(struct trace_reader *rd, struct fn **allp, int *np)
{
    struct fn *all = NULL;
    int n = 0, cap = 0, rc = 0;
    if ((rc = map_init(rd, 1 << 14)))
        return rc;
    for (int i = 0; i < rd->spec.nfiles && !rc; i++) {
        if ((rc = tr_open_file(rd, i)) || (rc = azf_header(rd)))
            break;
        uint64_t key;
        double sum;
        while ((rc = azf_row(rd, &key, NULL, &sum)) == 1) {
            int k = map_get(rd, key);
            if (k < 0) {
                if ((rc = sim_grow(&all, &cap, n + 1, sizeof *all, 1024)))
                    break;
                if ((size_t)n * 2 + 2 > rd->map_cap) {  /* grow the map: rebuild */
                    if ((rc = map_init(rd, (size_t)n * 2)))
                        break;
                    for (int j = 0; j < n; j++) {
                        size_t sl = map_slot(rd, all[j].key);
                        rd->map_key[sl] = all[j].key;
                        rd->map_val[sl] = j;
                    }
                }
                k = n++;
                all[k].key = key;
                snprintf(all[k].hash, sizeof all[k].hash, "%s", rd->fld[2]);
                all[k].volume = 0;
                all[k].order = k;
                size_t sl = map_slot(rd, key);
                rd->map_key[sl] = key;
                rd->map_val[sl] = k;
            }
            all[k].volume += sum;
        }
    }
    *allp = all;
    *np = n;
    return rc < 0 ? rc : 0;
}

/* The selection (spec.select) of the n functions in all, moved to its front in stream
 * order; their count into *kp. */
static int azf_select(struct trace_reader *rd, struct fn *all, int n, int *kp)
{
    int k = n;
    switch (rd->spec.select) {
    case TRACE_SEL_ALL:
        break;
    case TRACE_SEL_TOP:
        qsort(all, (size_t)n, sizeof *all, cmp_volume);
        k = rd->spec.select_k < n ? rd->spec.select_k : n;
        break;
    case TRACE_SEL_SAMPLE: {
        k = rd->spec.select_k < n ? rd->spec.select_k : n;
        gsl_rng *g = sim_rng_stream(rd->spec.sample_seed, "trace.sample");
        struct fn *pick = malloc((size_t)k * sizeof *pick);
        if (!g || !pick) {
            gsl_rng_free(g);
            free(pick);
            return SIM_ENOMEM;
        }
        gsl_ran_choose(g, pick, (size_t)k, all, (size_t)n, sizeof *all);  /* keeps order */
        memcpy(all, pick, (size_t)k * sizeof *all);
        gsl_rng_free(g);
        free(pick);
        break;
    }
    case TRACE_SEL_HASHES:
        k = 0;
        for (int h = 0; h < rd->spec.nhashes; h++) {
            int j = 0;
            while (j < n && strcmp(all[j].hash, rd->spec.hashes[h]) != 0)
                j++;
            if (j == n)
                return sim_err_set(SIM_EINVAL, "function %s: not found in any of the %d day "
                                   "files", rd->spec.hashes[h], rd->spec.nfiles);
            struct fn t = all[k];
            all[k] = all[j];
            all[j] = t;
            k++;
        }
        break;
    }
    *kp = k;
    return 0;
}

static int azf_open(struct trace_reader *rd)
{
    struct fn *all = NULL;
    int n = 0, rc;
    if ((rc = azf_scan(rd, &all, &n)))
        goto out;
    if (n == 0) {
        rc = sim_err_set(SIM_EINVAL, "%s: no function rows", rd->spec.files[0]);
        goto out;
    }
    int k = 0;
    if ((rc = azf_select(rd, all, n, &k)))
        goto out;
    rd->nstreams = k;
    rd->fns = realloc(all, (size_t)k * sizeof *all);
    all = NULL;
    if (!rd->fns) {
        rc = SIM_ENOMEM;
        goto out;
    }
    if ((rc = map_init(rd, (size_t)k)))
        goto out;
    for (int j = 0; j < k; j++) {
        size_t sl = map_slot(rd, rd->fns[j].key);
        rd->map_key[sl] = rd->fns[j].key;
        rd->map_val[sl] = j;
    }
    rd->day = malloc((size_t)k * AZF_MINUTES * sizeof *rd->day);
    if (!rd->day || rank_streams(rd)) {
        rc = SIM_ENOMEM;
        goto out;
    }
    rd->day_file = -1;
    rd->have_origin = true;
    rd->origin = 0;
out:
    free(all);
    return rc;
}

/* Pass 2, one day at a time. */
static int azf_load_day(struct trace_reader *rd, int d)
{
    int rc;
    if ((rc = tr_open_file(rd, d)) || (rc = azf_header(rd)))
        return rc;
    memset(rd->day, 0, (size_t)rd->nstreams * AZF_MINUTES * sizeof *rd->day);
    uint64_t key;
    double sum;
    double *row = rd->day;              /* parse into stream rows; others are discarded */
    double scratch[AZF_MINUTES];
    for (;;) {
        rc = azf_row(rd, &key, scratch, &sum);
        if (rc <= 0)
            break;
        int k = map_get(rd, key);
        if (k >= 0) {
            row = rd->day + (size_t)k * AZF_MINUTES;
            for (int i = 0; i < AZF_MINUTES; i++)
                row[i] += scratch[i];
        }
    }
    if (rc < 0)
        return rc;
    rd->day_file = d;
    rd->minute = 0;
    rd->next_stream = 0;
    return 0;
}

static int azf_next(struct trace_reader *rd, struct trace_rec *rec)
{
    int rc;
    if (rd->day_file < 0 || (rd->minute == AZF_MINUTES)) {
        int d = rd->day_file + 1;
        if (d >= rd->spec.nfiles)
            return 0;
        if ((rc = azf_load_day(rd, d)))
            return rc;
    }
    int k = rd->next_stream;
    rec->t = (double)rd->day_file * 86400 + rd->minute * 60.0;
    rec->dt = 60;
    rec->stream = k;
    rec->count = rd->day[(size_t)k * AZF_MINUTES + (size_t)rd->minute];
    rec->size = 0;
    rec->file = tr_fname(rd);
    rec->line = 0;
    if (++rd->next_stream == rd->nstreams) {
        rd->next_stream = 0;
        rd->minute++;
    }
    return 1;
}

/* ---------------------------------------------------------------- row formats */

/* Checks time order and converts an absolute time to origin-relative. */
int tr_place(struct trace_reader *rd, struct ttime at, double dt, struct trace_rec *rec)
{
    if (!rd->have_origin) {
        rd->have_origin = true;
        rd->origin_sec = at.sec;
        rd->origin = at.frac;
        rd->origin_unix = (double)at.sec + at.frac;
    }
    double abs_t = (double)(at.sec - rd->origin_sec) + at.frac;
    if (rd->have_last) {
        if (dt == 0 ? abs_t < rd->last_t : abs_t < rd->last_end - 1e-6)
        {   /* the file's own values (what the user can find in it), and where they fall */
            double prev = dt == 0 ? rd->last_t : rd->last_end;
            return sim_err_set(SIM_EINVAL, "%s:%ld: time %.3f s (%.3f s after the first row) "
                               "is before the previous record's %s, %.3f s: rows must be in "
                               "time order without overlap", tr_fname(rd), rd->line,
                               (double)rd->origin_sec + abs_t, abs_t - rd->origin,
                               dt == 0 ? "time" : "end", (double)rd->origin_sec + prev);
        }
    }
    rd->have_last = true;
    rd->last_t = abs_t;
    rd->last_end = abs_t + dt;
    rec->t = abs_t - rd->origin;
    rec->dt = dt;
    rec->stream = 0;
    rec->size = 0;
    rec->file = tr_fname(rd);
    rec->line = rd->line;
    return 0;
}

static int check_header(struct trace_reader *rd, const char *want)
{
    if (strcmp(rd->buf, want) != 0)
        return sim_err_set(SIM_EINVAL, "%s:%ld: expected the header \"%s\", found another "
                           "first line (a file of another kind or format?)", tr_fname(rd), rd->line,
                           want);
    return 0;
}

/* The formats, one row each in enum trace_format's order: what reads a file's rows and what
 * comes before them. */
struct format {
    int (*open)(struct trace_reader *rd);   /* before the first row (NULL: nothing) */
    int (*next)(struct trace_reader *rd, struct trace_rec *rec);
    const char *header;                     /* the line each file starts with (NULL: none) */
    bool generic;                           /* generic CSV: a header if the spec says so, and
                                             * plain seconds (no absolute time) unless its
                                             * times are date-times */
};

static int llm_next(struct trace_reader *rd, struct trace_rec *rec);
static int wiki_next(struct trace_reader *rd, struct trace_rec *rec);
static int csv_next(struct trace_reader *rd, struct trace_rec *rec);
static int burst_next(struct trace_reader *rd, struct trace_rec *rec);
static int pc_next(struct trace_reader *rd, struct trace_rec *rec);

static const struct format FORMATS[] = {
    [TRACE_AZURE_FUNCTIONS] = {azf_open, azf_next, NULL, false},
    [TRACE_AZURE_LLM] = {NULL, llm_next, "TIMESTAMP,ContextTokens,GeneratedTokens", false},
    [TRACE_WIKIPEDIA] = {NULL, wiki_next, "hour_end_utc,requests", false},
    [TRACE_PROJECTCOUNTS] = {NULL, pc_next, NULL, false},
    [TRACE_CSV_TIMESTAMPS] = {NULL, csv_next, NULL, true},
    [TRACE_CSV_COUNTS] = {NULL, csv_next, NULL, true},
    [TRACE_BURSTGPT] = {NULL, burst_next, NULL, false},   /* two headers: burst_header */
    [TRACE_MOONCAKE] = {NULL, tr_mooncake_next, NULL, false},
};

/* Next non-empty data line of any file (headers consumed per file); 1, 0 at the end. */
int tr_next_data_line(struct trace_reader *rd)
{
    for (;;) {
        if (!rd->f) {
            if (rd->file_i >= rd->spec.nfiles)
                return 0;
            int rc = tr_open_file(rd, rd->file_i);
            if (rc)
                return rc;
            const struct format *fm = &FORMATS[rd->spec.format];
            bool header = fm->generic && rd->spec.header;
            const char *want = fm->header;
            if (want || header) {
                rc = tr_read_line(rd);
                if (rc < 0)
                    return rc;
                if (rc == 0)
                    return sim_err_set(SIM_EINVAL, "%s:1: expected a header, found an empty "
                                       "file", tr_fname(rd));
                if (want && (rc = check_header(rd, want)))
                    return rc;
            }
        }
        int rc = tr_read_line(rd);
        if (rc < 0)
            return rc;
        if (rc == 1 && rd->buf[0])
            return 1;
        if (rc == 0) {
            fclose(rd->f);
            rd->f = NULL;
            rd->file_i++;
        }
    }
}

static int llm_next(struct trace_reader *rd, struct trace_rec *rec)
{
    int rc = tr_next_data_line(rd);
    if (rc <= 0)
        return rc;
    struct ttime t;
    double ctx, gen;
    if ((rc = tr_split(rd, ',')) || (rc = tr_expect_fields(rd, 3, "TIMESTAMP, ContextTokens, "
                                                     "GeneratedTokens")) ||
        (rc = tr_field_time(rd, 0, "TIMESTAMP", true, &t)) ||
        (rc = tr_field_num(rd, 1, "ContextTokens", true, &ctx)) ||
        (rc = tr_field_num(rd, 2, "GeneratedTokens", true, &gen)) ||
        (rc = tr_place(rd, t, 0, rec)))
        return rc;
    rec->count = 1;
    rec->size = rd->spec.size == TRACE_SIZE_CONTEXT ? ctx
              : rd->spec.size == TRACE_SIZE_GENERATED ? gen : 0;
    if (ctx > 1e9 || gen > 1e9)
        return sim_err_set(SIM_EINVAL, "%s:%ld: expected ContextTokens and GeneratedTokens of "
                           "at most 1e9 tokens, found %.15g and %.15g", tr_fname(rd), rd->line,
                           ctx, gen);
    rec->prompt = (int32_t)ctx;
    rec->output = (int32_t)gen;
    return 1;
}

/* BurstGPT's two releases: without and with sessions. Each file's first line is one of them;
 * the columns read are found by name. */
static const char *const BURST_HEADERS[] = {
    "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type",
    "Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type",
};

static int burst_header(struct trace_reader *rd)
{
    for (size_t h = 0; h < sizeof BURST_HEADERS / sizeof *BURST_HEADERS; h++)
        if (strcmp(rd->buf, BURST_HEADERS[h]) == 0) {
            rd->bg_t = 0;
            rd->bg_req = h ? 4 : 2;
            rd->bg_resp = h ? 5 : 3;
            rd->bg_nf = h ? 8 : 6;
            return 0;
        }
    return sim_err_set(SIM_EINVAL, "%s:%ld: expected BurstGPT's header \"%s\" (or with "
                       "\"Session ID,Elapsed time,\" after Timestamp), found another first line",
                       tr_fname(rd), rd->line, BURST_HEADERS[0]);
}

/* A request: its time in seconds from the trace's start, its Request tokens as the prompt and
 * its Response tokens as the output (0 for a failed request: an LLM model refuses it). */
static int burst_next(struct trace_reader *rd, struct trace_rec *rec)
{
    int rc;
    for (;;) {
        if ((rc = tr_next_data_line(rd)) <= 0)
            return rc;
        if (rd->line != 1)
            break;
        if ((rc = burst_header(rd)))    /* a file's first line: the header */
            return rc;
    }
    struct ttime t;
    double req, resp;
    if ((rc = tr_split(rd, ',')) || (rc = tr_expect_fields(rd, rd->bg_nf, "BurstGPT's columns")) ||
        (rc = tr_field_time(rd, rd->bg_t, "Timestamp", false, &t)) ||
        (rc = tr_field_num(rd, rd->bg_req, "Request tokens", true, &req)) ||
        (rc = tr_field_num(rd, rd->bg_resp, "Response tokens", true, &resp)) ||
        (rc = tr_place(rd, t, 0, rec)))
        return rc;
    if (req > 1e9 || resp > 1e9)
        return sim_err_set(SIM_EINVAL, "%s:%ld: expected Request tokens and Response tokens of "
                           "at most 1e9, found %.15g and %.15g", tr_fname(rd), rd->line, req,
                           resp);
    rec->count = 1;
    rec->prompt = (int32_t)req;
    rec->output = (int32_t)resp;
    return 1;
}

static int wiki_next(struct trace_reader *rd, struct trace_rec *rec)
{
    int rc = tr_next_data_line(rd);
    if (rc <= 0)
        return rc;
    struct ttime end;
    double n;
    if ((rc = tr_split(rd, ',')) || (rc = tr_expect_fields(rd, 2, "hour_end_utc, requests")) ||
        (rc = tr_field_time(rd, 0, "hour_end_utc", true, &end)))
        return rc;
    end.sec -= 3600;
    if ((rc = tr_field_count(rd, 1, "requests", true, &n)) || (rc = tr_place(rd, end, 3600, rec)))
        return rc;
    rec->count = n;
    return 1;
}

static int csv_next(struct trace_reader *rd, struct trace_rec *rec)
{
    int rc = tr_next_data_line(rd);
    if (rc <= 0)
        return rc;
    const struct trace_spec *sp = &rd->spec;
    bool counts = sp->format == TRACE_CSV_COUNTS;
    int need = (sp->time_col > sp->count_col || !counts ? sp->time_col : sp->count_col) + 1;
    struct ttime t;
    double n = 1;
    if ((rc = tr_split(rd, ',')) || (rc = tr_expect_fields(rd, need, counts ? "time, count" : "time")) ||
        (rc = tr_field_time(rd, sp->time_col, "time", sp->datetime, &t)) ||
        (counts && (rc = tr_field_count(rd, sp->count_col, "count", false, &n))) ||
        (rc = tr_place(rd, t, counts ? sp->interval_s : 0, rec)))
        return rc;
    rec->count = n;
    return 1;
}

/* The hour a projectcounts file ends: "...projectcounts-YYYYMMDD-HHMMSS" in its name. */
static int pc_file_time(const char *path, struct ttime *out)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    const char *p = strstr(b, "projectcounts-");
    int y, mo, d, h, mi, se;
    if (!p || sscanf(p, "projectcounts-%4d%2d%2d-%2d%2d%2d", &y, &mo, &d, &h, &mi, &se) != 6)
        return sim_err_set(SIM_EINVAL, "%s: expected a file name containing "
                           "\"projectcounts-YYYYMMDD-HHMMSS\"", path);
    out->sec = tr_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - 3600;
    out->frac = 0;                      /* the hour's start */
    return 0;
}

static int pc_next(struct trace_reader *rd, struct trace_rec *rec)
{
    if (rd->file_i >= rd->spec.nfiles)
        return 0;
    int rc;
    struct ttime start;
    if ((rc = pc_file_time(rd->spec.files[rd->file_i], &start)) || (rc = tr_open_file(rd, rd->file_i)))
        return rc;
    double n = -1;
    while ((rc = tr_read_line(rd)) == 1) {
        if (!rd->buf[0])
            continue;
        if ((rc = tr_split(rd, ' ')))
            return rc;
        if (rd->nfld < 3 || strcmp(rd->fld[0], rd->spec.project) != 0)
            continue;
        if ((rc = tr_expect_fields(rd, 4, "project, \"-\", requests, bytes")) ||
            (rc = tr_field_count(rd, 2, "requests", true, &n)))
            return rc;
        break;
    }
    if (rc < 0)
        return rc;
    if (n < 0)
        return sim_err_set(SIM_EINVAL, "%s: expected a line for project \"%s\", found none "
                           "(%ld lines)", tr_fname(rd), rd->spec.project, rd->line);
    if ((rc = tr_place(rd, start, 3600, rec)))
        return rc;
    rec->count = n;
    fclose(rd->f);
    rd->f = NULL;
    rd->file_i++;
    return 1;
}


/* ---------------------------------------------------------------- public */

int trace_open(const struct trace_spec *spec, struct trace_reader **out)
{
    *out = NULL;
    if (spec->nfiles < 1)
        return sim_err_set(SIM_EINVAL, "trace: expected at least one file, found none");
    struct trace_reader *rd = calloc(1, sizeof *rd);
    if (!rd)
        return SIM_ENOMEM;
    rd->spec = *spec;
    rd->origin_unix = NAN;
    rd->nstreams = 1;
    int rc = 0;
    if (FORMATS[spec->format].open) {
        if ((rc = FORMATS[spec->format].open(rd))) {
            trace_close(rd);
            return rc;
        }
        if (rd->f) {                    /* the rows start from the first file again */
            fclose(rd->f);
            rd->f = NULL;
        }
    }
    rd->file_i = 0;
    *out = rd;
    return 0;
}

int trace_next(struct trace_reader *rd, struct trace_rec *rec)
{
    const struct format *fm = &FORMATS[rd->spec.format];
    rec->prompt = rec->output = 0;      /* only formats with tokens set them */
    rec->prefix = NULL;
    int rc = fm->next(rd, rec);
    if (rc == 1 && fm->generic && !rd->spec.datetime)
        rd->origin_unix = NAN;          /* plain seconds: no absolute time */
    return rc;
}

void trace_close(struct trace_reader *rd)
{
    if (!rd)
        return;
    if (rd->f)
        fclose(rd->f);
    free(rd->buf);
    free(rd->fld);
    free(rd->fns);
    free(rd->map_key);
    free(rd->map_val);
    free(rd->day);
    while (rd->arena) {
        struct tr_chunk *c = rd->arena;
        rd->arena = c->next;
        free(c);
    }
    free(rd);
}

bool trace_format_has_tokens(enum trace_format f)
{
    return f == TRACE_AZURE_LLM || f == TRACE_BURSTGPT || f == TRACE_MOONCAKE;
}

bool trace_format_per_request(enum trace_format f)
{
    return trace_format_has_tokens(f) || f == TRACE_CSV_TIMESTAMPS;
}

int trace_stream_count(const struct trace_reader *rd) { return rd->nstreams; }
double trace_origin_unix(const struct trace_reader *rd) { return rd->origin_unix; }

const char *trace_stream_name(const struct trace_reader *rd, int i)
{
    return rd->fns ? rd->fns[i].hash : "all";
}

double trace_stream_volume(const struct trace_reader *rd, int i)
{
    return rd->fns ? rd->fns[i].volume : 0;
}

int trace_stream_file_order(const struct trace_reader *rd, int i)
{
    return rd->fns ? rd->fns[i].file_rank : 0;
}

int trace_stream_volume_rank(const struct trace_reader *rd, int i)
{
    return rd->fns ? rd->fns[i].volume_rank : 0;
}
