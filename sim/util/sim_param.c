/* sim_param — reading, checking and documenting a table of settings (sim_param.h). */
#include "sim_param.h"

#include <string.h>

#include "sim_err.h"

#define AT(base, row, type) ((type *)((char *)(base) + (row)->off))

int sim_params_count(const struct sim_param *t)
{
    int n = 0;
    for (; t && t->key; t++)
        n += t->type == SIM_P_INCLUDE ? sim_params_count(t->rows) : !(t->flags & SIM_P_DOC);
    return n;
}

const struct sim_param *sim_params_find(const struct sim_param *t, const char *key)
{
    for (; t && t->key; t++) {
        const struct sim_param *r = t->type == SIM_P_INCLUDE ? sim_params_find(t->rows, key)
                                    : !(t->flags & SIM_P_DOC) && strcmp(t->key, key) == 0 ? t
                                                                                         : NULL;
        if (r)
            return r;
    }
    return NULL;
}

static int enum_index(const struct sim_param *r)
{
    for (int i = 0; r->sdef && r->choices[i]; i++)
        if (strcmp(r->choices[i], r->sdef) == 0)
            return i;
    return 0;
}

void sim_params_defaults(const struct sim_param *t, void *base)
{
    for (const struct sim_param *r = t; r && r->key; r++) {
        if (r->flags & (SIM_P_NODEF | SIM_P_DOC))
            continue;
        switch (r->type) {
        case SIM_P_NUM: *AT(base, r, double) = r->def; break;
        case SIM_P_INT: *AT(base, r, int) = (int)r->def; break;
        case SIM_P_LONG: *AT(base, r, long) = (long)r->def; break;
        case SIM_P_BOOL: *AT(base, r, bool) = r->def != 0; break;
        case SIM_P_STR: *AT(base, r, const char *) = r->sdef; break;
        case SIM_P_ENUM: *AT(base, r, int) = enum_index(r); break;
        case SIM_P_OBJ:
        case SIM_P_ARR: *AT(base, r, const cJSON *) = NULL; break;
        case SIM_P_HAND:
        case SIM_P_SECTION: break;
        case SIM_P_INCLUDE: sim_params_defaults(r->rows, AT(base, r, char)); break;
        }
    }
}

/* The keys of t's rows in order, included tables' in place, appended to keys[*n..max-1]
 * (past max they are left out: sim_params_check keeps every table below SIM_PARAMS_MAX). */
static void collect(const struct sim_param *t, const char **keys, int *n, int max)
{
    for (const struct sim_param *r = t; r && r->key; r++)
        if (r->type == SIM_P_INCLUDE)
            collect(r->rows, keys, n, max);
        else if (!(r->flags & SIM_P_DOC) && *n < max)
            keys[(*n)++] = r->key;
}

static int collect_keys(const struct sim_param *t, const char **keys, int max)
{
    int n = 0;
    collect(t, keys, &n, max - 1);
    keys[n] = NULL;
    return n;
}

int sim_params_keys(const struct sim_param *t, const cJSON *obj, const char *path)
{
    const char *keys[SIM_PARAMS_MAX + 1];
    collect_keys(t, keys, SIM_PARAMS_MAX + 1);
    return sim_json_keys(obj, path, keys);
}

void sim_params_key_list(const struct sim_param *t, char *buf, size_t size)
{
    const char *keys[SIM_PARAMS_MAX + 1];
    int n = collect_keys(t, keys, SIM_PARAMS_MAX + 1);
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        size_t l = strlen(buf);
        snprintf(buf + l, size - l, "%s%s", i ? ", " : "", keys[i]);
    }
}

static int read_row(const struct sim_param *r, const cJSON *obj, const char *path, void *base)
{
    bool req = r->flags & SIM_P_REQUIRED;
    long l;
    int rc;
    if (r->flags & SIM_P_DOC)
        return 0;
    switch (r->type) {
    case SIM_P_NUM:
        return sim_json_num(obj, path, r->key, req, r->cons, AT(base, r, double));
    case SIM_P_INT:
        l = *AT(base, r, int);
        if ((rc = sim_json_int(obj, path, r->key, req, r->lo, r->hi, &l)))
            return rc;
        *AT(base, r, int) = (int)l;
        return 0;
    case SIM_P_LONG:
        return sim_json_int(obj, path, r->key, req, r->lo, r->hi, AT(base, r, long));
    case SIM_P_BOOL:
        return sim_json_bool(obj, path, r->key, req, AT(base, r, bool));
    case SIM_P_STR:
        return sim_json_str(obj, path, r->key, req, AT(base, r, const char *));
    case SIM_P_ENUM:
        return sim_json_enum(obj, path, r->key, req, r->choices, AT(base, r, int));
    case SIM_P_OBJ:
        return sim_json_obj(obj, path, r->key, req, AT(base, r, const cJSON *));
    case SIM_P_ARR:
        return sim_json_arr(obj, path, r->key, req, AT(base, r, const cJSON *));
    case SIM_P_HAND:
    case SIM_P_SECTION:
        return 0;
    case SIM_P_INCLUDE:
        return sim_params_values(r->rows, obj, path, AT(base, r, char));
    }
    return 0;
}

static int values(const struct sim_param *t, const cJSON *obj, const char *path, void *base)
{
    int rc;
    for (const struct sim_param *r = t; r && r->key; r++)
        if ((rc = read_row(r, obj, path, base)))
            return rc;
    return 0;
}

int sim_params_values(const struct sim_param *t, const cJSON *obj, const char *path, void *base)
{
    sim_params_defaults(t, base);
    return values(t, obj, path, base);
}

int sim_params_read(const struct sim_param *t, const cJSON *obj, const char *path, void *base)
{
    int rc;
    sim_params_defaults(t, base);
    if (obj && (rc = sim_params_keys(t, obj, path)))
        return rc;
    return values(t, obj, path, base);
}

static void range_text(const struct sim_param *r, char *buf, size_t size)
{
    static const char *const cons[] = {[SIM_J_ANY] = "number", [SIM_J_POS] = "> 0",
                                       [SIM_J_NONNEG] = ">= 0", [SIM_J_UNIT] = "in [0, 1]"};
    size_t l;
    switch (r->type) {
    case SIM_P_NUM: snprintf(buf, size, "%s", cons[r->cons]); break;
    case SIM_P_INT:
    case SIM_P_LONG: snprintf(buf, size, "integer in [%ld, %ld]", r->lo, r->hi); break;
    case SIM_P_BOOL: snprintf(buf, size, "bool"); break;
    case SIM_P_STR: snprintf(buf, size, "string"); break;
    case SIM_P_ENUM:
        buf[0] = '\0';
        for (int i = 0; r->choices[i]; i++) {
            l = strlen(buf);
            snprintf(buf + l, size - l, "%s`%s`%s", i ? ", " : "", r->choices[i],
                     !(r->flags & (SIM_P_REQUIRED | SIM_P_NODEF)) && i == enum_index(r)
                         ? " (default)" : "");
        }
        break;
    case SIM_P_OBJ: snprintf(buf, size, "object"); break;
    case SIM_P_ARR: snprintf(buf, size, "array"); break;
    case SIM_P_HAND: snprintf(buf, size, "see meaning"); break;
    case SIM_P_SECTION:
        snprintf(buf, size, "%s", r->flags & SIM_P_EACH  ? "array of objects"
                                  : r->flags & SIM_P_MAP ? "object of objects by name"
                                                         : "object");
        break;
    case SIM_P_INCLUDE: buf[0] = '\0'; break;
    }
}

static void default_text(const struct sim_param *r, char *buf, size_t size)
{
    buf[0] = '\0';
    if (r->def_doc)
        snprintf(buf, size, "%s", r->def_doc);
    else if (r->flags & SIM_P_REQUIRED)
        snprintf(buf, size, "required");
    else if (r->type == SIM_P_NUM || r->type == SIM_P_INT || r->type == SIM_P_LONG)
        snprintf(buf, size, "%.15g", r->def);
    else if (r->type == SIM_P_BOOL)
        snprintf(buf, size, "%s", r->def != 0 ? "true" : "false");
    else if (r->type == SIM_P_STR && r->sdef)
        snprintf(buf, size, "`\"%s\"`", r->sdef);
}

void sim_params_type_text(const struct sim_param *row, char *buf, size_t size)
{
    char range[512], def[256];
    if (row->type_doc)
        snprintf(range, sizeof range, "%s", row->type_doc);
    else
        range_text(row, range, sizeof range);
    default_text(row, def, sizeof def);
    snprintf(buf, size, "%s%s%s", range, def[0] ? ", " : "", def);
}

/* Calls fn for each row to document, in order: included rows in place, a section's own row
 * (when it has a doc) and then its rows, each with its full key ("prefix.key"). */
typedef void (*row_fn)(const struct sim_param *r, const char *key, void *ctx);
static void walk(const struct sim_param *t, const char *prefix, row_fn fn, void *ctx)
{
    for (const struct sim_param *r = t; r && r->key; r++) {
        char key[SIM_JPATH_MAX], inner[SIM_JPATH_MAX + 64];
        sim_jpath(key, sizeof key, prefix, r->key);
        if (r->type == SIM_P_INCLUDE) {
            walk(r->rows, prefix, fn, ctx);
            continue;
        }
        if (r->type == SIM_P_SECTION && (r->flags & SIM_P_EACH))   /* the array: key[] */
            strncat(key, "[]", sizeof key - strlen(key) - 1);
        if (r->type != SIM_P_SECTION || r->doc)
            fn(r, key, ctx);
        if (r->type != SIM_P_SECTION)
            continue;
        if (r->flags & SIM_P_MAP)       /* its members: key.NAME (.sdef) */
            snprintf(inner, sizeof inner, "%s.%s", key, r->sdef ? r->sdef : "NAME");
        else
            snprintf(inner, sizeof inner, "%s", key);
        walk(r->rows, inner, fn, ctx);
    }
}

/* s with Markdown's table separator escaped (\|) */
static void md_cell(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|')
            fputc('\\', f);
        fputc(*s, f);
    }
}

static void md_row(const struct sim_param *r, const char *key, void *ctx)
{
    char type[1024];
    sim_params_type_text(r, type, sizeof type);
    fprintf(ctx, "| `%s` | ", key);
    md_cell(ctx, type);
    fputs(" | ", ctx);
    md_cell(ctx, r->doc);
    fputs(" |\n", ctx);
}

void sim_params_markdown(const struct sim_param *t, const char *prefix, FILE *f)
{
    walk(t, prefix, md_row, f);
}

struct text_ctx {
    FILE *f;
    const char *filter;
    int n;
};

/* s without Markdown's backticks, wrapped at 92 columns with a 6-space indent */
static void wrapped(FILE *f, const char *s)
{
    int col = 0;
    while (*s) {
        size_t w = strcspn(s, " ");
        int vis = 0;
        for (size_t i = 0; i < w; i++)
            vis += s[i] != '`';
        if (col > 0 && col + 1 + vis > 92) {
            fputc('\n', f);
            col = 0;
        }
        if (col == 0)
            col = fprintf(f, "      ");
        else
            col += fprintf(f, " ");
        for (size_t i = 0; i < w; i++)
            if (s[i] != '`')
                fputc(s[i], f);
        col += vis;
        s += w;
        while (*s == ' ')
            s++;
    }
    if (col)
        fputc('\n', f);
}

static void text_row(const struct sim_param *r, const char *key, void *p)
{
    struct text_ctx *c = p;
    if (c->filter && strncmp(key, c->filter, strlen(c->filter)) != 0)
        return;
    char type[1024];
    sim_params_type_text(r, type, sizeof type);
    fprintf(c->f, "%s\n", key);
    wrapped(c->f, type);
    if (r->doc)
        wrapped(c->f, r->doc);
    c->n++;
}

int sim_params_text(const struct sim_param *t, const char *prefix, const char *filter, FILE *f)
{
    struct text_ctx c = {f, filter, 0};
    walk(t, prefix, text_row, &c);
    return c.n;
}

static int check_rows(const struct sim_param *t, char *why, size_t size, int depth)
{
    if (depth > 8)
        return snprintf(why, size, "tables included or nested more than 8 deep"), -1;
    for (const struct sim_param *r = t; r && r->key; r++) {
        const char *k = r->key;
        if (r->type == SIM_P_INCLUDE || r->type == SIM_P_SECTION) {
            if (!r->rows)
                return snprintf(why, size, "%s: no rows", k), -1;
            if (check_rows(r->rows, why, size, depth + 1))
                return -1;
            if (r->type == SIM_P_INCLUDE)
                continue;
        }
        if (r->type != SIM_P_SECTION && (!r->doc || !r->doc[0]))
            return snprintf(why, size, "%s: no doc", k), -1;
        if (r->type == SIM_P_HAND && !r->type_doc)
            return snprintf(why, size, "%s: read by hand, but no type_doc says its type", k), -1;
        if (r->type == SIM_P_ENUM && (!r->choices || !r->choices[0]))
            return snprintf(why, size, "%s: an enum without choices", k), -1;
        if (r->type == SIM_P_ENUM && r->sdef) {
            bool found = false;
            for (int i = 0; r->choices[i]; i++)
                found |= strcmp(r->choices[i], r->sdef) == 0;
            if (!found)
                return snprintf(why, size, "%s: default \"%s\" is not one of its choices", k,
                                r->sdef), -1;
        }
        if ((r->flags & SIM_P_REQUIRED) && (r->flags & SIM_P_NODEF))
            return snprintf(why, size, "%s: required and defaulted by the caller", k), -1;
    }
    return 0;
}

int sim_params_check(const struct sim_param *t, char *why, size_t size)
{
    const char *keys[SIM_PARAMS_MAX + 2];
    int n = 0;
    collect(t, keys, &n, SIM_PARAMS_MAX + 1);
    if (n > SIM_PARAMS_MAX)
        return snprintf(why, size, "more than %d keys", SIM_PARAMS_MAX), -1;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(keys[i], keys[j]) == 0)
                return snprintf(why, size, "%s: twice", keys[i]), -1;
    return check_rows(t, why, size, 0);
}
