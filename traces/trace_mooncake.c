/* trace_mooncake — Mooncake's request traces (kvcache-ai/Mooncake, FAST'25 release and the
 * arXiv one): JSON Lines, one request an object
 *   {"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, ...]}
 * with the time in milliseconds from the trace's start, the prompt and output tokens, and the
 * prompt's blocks: hash_ids[i] names its tokens [0, (i + 1) x 512) (the block size the trace
 * was made with, trace.block_tokens), so requests that share ids up to i share those tokens.
 * Each row's ids are kept for the whole replay (an arena freed by trace_close): the requests
 * of a run refer to them while they are served. Other keys are ignored. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "sim_types.h"
#include "trace_int.h"
#include <cjson/cJSON.h>

/* n bytes from the arena (8-aligned), or NULL. */
static void *arena_get(struct trace_reader *rd, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    struct tr_chunk *c = rd->arena;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        if (!(c = malloc(sizeof *c + cap)))
            return NULL;
        c->next = rd->arena;
        c->used = 0;
        c->cap = cap;
        rd->arena = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    return p;
}

/* The object's member `key`: a non-negative number (an integer where `integer`), at most
 * `most`. */
static int member_num(struct trace_reader *rd, const cJSON *o, const char *key, bool integer,
                      double most, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return sim_err_set(SIM_EINVAL, "%s:%ld: expected a key \"%s\", found none", tr_fname(rd),
                           rd->line, key);
    double x = v->valuedouble;
    if (!cJSON_IsNumber(v) || !isfinite(x) || x < 0 || x > most || (integer && x != floor(x)))
        return sim_err_set(SIM_EINVAL, "%s:%ld: \"%s\": expected a%s number of at most %.15g, "
                           "found %s%.15g", tr_fname(rd), rd->line, key,
                           integer ? " non-negative whole" : " non-negative", most,
                           cJSON_IsNumber(v) ? "" : "a non-number (JSON type) or ",
                           cJSON_IsNumber(v) ? x : (double)v->type);
    *out = x;
    return 0;
}

static int row(struct trace_reader *rd, const cJSON *o, struct trace_rec *rec)
{
    double ms, in, out;
    int rc;
    if (!cJSON_IsObject(o))
        return sim_err_set(SIM_EINVAL, "%s:%ld: expected a JSON object (a request), found "
                           "another JSON value", tr_fname(rd), rd->line);
    if ((rc = member_num(rd, o, "timestamp", false, 1e15, &ms)) ||
        (rc = member_num(rd, o, "input_length", true, 1e9, &in)) ||
        (rc = member_num(rd, o, "output_length", true, 1e9, &out)))
        return rc;
    struct ttime t = {(int64_t)floor(ms / 1000), 0};
    t.frac = (ms - 1000 * (double)t.sec) / 1000;
    if ((rc = tr_place(rd, t, 0, rec)))
        return rc;
    rec->count = 1;
    rec->prompt = (int32_t)in;
    rec->output = (int32_t)out;
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "hash_ids");
    if (!h)
        return 0;
    if (!cJSON_IsArray(h))
        return sim_err_set(SIM_EINVAL, "%s:%ld: \"hash_ids\": expected an array of block ids, "
                           "found another JSON value", tr_fname(rd), rd->line);
    int n = cJSON_GetArraySize(h);
    if (n == 0)
        return 0;
    int unit = rd->spec.block_tokens > 0 ? rd->spec.block_tokens : 512;
    struct sim_prefix *px = arena_get(rd, sizeof *px + (size_t)n * sizeof(uint32_t));
    if (!px)
        return SIM_ENOMEM;
    uint32_t *ids = (uint32_t *)(px + 1);
    int i = 0;
    for (const cJSON *e = h->child; e; e = e->next, i++) {
        double x = e->valuedouble;
        if (!cJSON_IsNumber(e) || !(x >= 0) || x > 4294967295.0 || x != floor(x))
            return sim_err_set(SIM_EINVAL, "%s:%ld: \"hash_ids\"[%d]: expected a whole number "
                               "in 0..4294967295, found %s", tr_fname(rd), rd->line, i,
                               cJSON_IsNumber(e) ? "another number" : "a non-number");
        ids[i] = (uint32_t)x;
    }
    *px = (struct sim_prefix){(uint32_t)unit, (uint32_t)n, ids};
    rec->prefix = px;
    return 0;
}

int tr_mooncake_next(struct trace_reader *rd, struct trace_rec *rec)
{
    int rc = tr_next_data_line(rd);
    if (rc <= 0)
        return rc;
    const char *end = NULL;
    cJSON *o = cJSON_ParseWithOpts(rd->buf, &end, true);
    if (!o) {
        long col = end ? (long)(end - rd->buf) + 1 : 1;
        char tok[TOKEN_MAX + 4];
        return sim_err_set(SIM_EINVAL, "%s:%ld: column %ld: expected one JSON object a line "
                           "(Mooncake's JSON Lines), found \"%s\"", tr_fname(rd), rd->line, col,
                           tr_token(end ? end : rd->buf, tok));
    }
    rc = row(rd, o, rec);
    cJSON_Delete(o);
    return rc ? rc : 1;
}
