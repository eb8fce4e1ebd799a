/* sim_json — getters with path-named errors, file loading with line:column, --set paths. */
#include "sim_json.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"

void sim_jpath(char *buf, size_t size, const char *path, const char *key)
{
    if (path && path[0])
        snprintf(buf, size, "%s.%s", path, key);
    else
        snprintf(buf, size, "%s", key);
}

void sim_jpath_idx(char *buf, size_t size, const char *path, int i)
{
    snprintf(buf, size, "%s[%d]", path, i);
}

void sim_json_describe(const cJSON *v, char *buf, size_t size)
{
    if (!v)
        snprintf(buf, size, "nothing");
    else if (cJSON_IsString(v))
        snprintf(buf, size, "\"%.60s\"", v->valuestring);
    else if (cJSON_IsNumber(v))
        snprintf(buf, size, "%.17g", v->valuedouble);
    else if (cJSON_IsBool(v))
        snprintf(buf, size, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsNull(v))
        snprintf(buf, size, "null");
    else if (cJSON_IsArray(v))
        snprintf(buf, size, "an array");
    else if (cJSON_IsObject(v))
        snprintf(buf, size, "an object");
    else
        snprintf(buf, size, "an invalid value");
}

int sim_json_expected(const char *path, const char *what, const cJSON *got)
{
    char d[96];
    sim_json_describe(got, d, sizeof d);
    return sim_err_set(SIM_EINVAL, "%s: expected %s, got %s", path, what, d);
}

static int fail(const char *path, const char *key, const char *expected, const cJSON *got)
{
    char p[SIM_JPATH_MAX];
    sim_jpath(p, sizeof p, path, key);
    return sim_json_expected(p, expected, got);
}

int sim_json_keys(const cJSON *obj, const char *path, const char *const *allowed)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, obj) {
        bool ok = false;
        for (const char *const *a = allowed; *a; a++)
            if (it->string && strcmp(it->string, *a) == 0)
                ok = true;
        if (!ok) {
            char p[SIM_JPATH_MAX], list[512] = "";
            sim_jpath(p, sizeof p, path, it->string ? it->string : "?");
            for (const char *const *a = allowed; *a; a++) {
                size_t l = strlen(list);
                snprintf(list + l, sizeof list - l, "%s%s", l ? ", " : "", *a);
            }
            return sim_err_set(SIM_EINVAL, list[0] ? "%s: unknown key (expected one of: %s)"
                                                   : "%s: unknown key (expected none%s)", p, list);
        }
    }
    return 0;
}

static const cJSON *member(const cJSON *obj, const char *key)
{
    return obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

static int missing(const char *path, const char *key, const char *expected)
{
    char p[SIM_JPATH_MAX];
    sim_jpath(p, sizeof p, path, key);
    return sim_err_set(SIM_EINVAL, "%s: missing (expected %s)", p, expected);
}

/* Durations are named by their unit (`slo_ms`, `duration_s`, `ctrl_us`); their seconds must
 * stay below SIM_JSON_MAX_DURATION_S, so that times in integer ns (and sums of a few of them)
 * fit in 64 bits. Rates whose names end the same way (`load_gb_s`) are not durations. */
static bool ends_with(const char *key, const char *tail)
{
    size_t n = strlen(key), t = strlen(tail);
    return n > t && !strcmp(key + n - t, tail);
}

static double duration_unit_s(const char *key)
{
    size_t n = strlen(key);
    if (n > 5 && !strcmp(key + n - 5, "_gb_s"))
        return 0;
    if (n > 3 && !strcmp(key + n - 3, "_ms"))
        return 1e-3;
    if (n > 3 && !strcmp(key + n - 3, "_us"))
        return 1e-6;
    if (n > 2 && !strcmp(key + n - 2, "_s"))
        return 1;
    return 0;
}

int sim_json_num(const cJSON *obj, const char *path, const char *key, bool required,
                 enum sim_jcons c, double *out)
{
    static const char *const what[] = {
        [SIM_J_ANY] = "a number", [SIM_J_POS] = "a positive number",
        [SIM_J_NONNEG] = "a non-negative number", [SIM_J_UNIT] = "a number in [0, 1]"};
    const cJSON *v = member(obj, key);
    if (!v)
        return required ? missing(path, key, what[c]) : 0;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return fail(path, key, what[c], v);
    double x = v->valuedouble;
    if ((c == SIM_J_POS && !(x > 0)) || (c == SIM_J_NONNEG && !(x >= 0)) ||
        (c == SIM_J_UNIT && !(x >= 0 && x <= 1)))
        return fail(path, key, what[c], v);
    double unit = duration_unit_s(key);
    if (unit > 0 && c == SIM_J_POS && x * unit < 1e-9)
        return fail(path, key, "a positive duration of at least 1 ns (the clock's resolution)", v);
    if (ends_with(key, "_mb") && fabs(x) > SIM_JSON_MAX_MB) {
        char want[64];
        snprintf(want, sizeof want, "a size of at most %.0e MB (1 PB)", SIM_JSON_MAX_MB);
        return fail(path, key, want, v);
    }
    if ((!strcmp(key, "cv") || ends_with(key, "_cv")) && x > SIM_JSON_MAX_CV) {
        char want[64];
        snprintf(want, sizeof want, "a coefficient of variation of at most %g", SIM_JSON_MAX_CV);
        return fail(path, key, want, v);
    }
    if (unit > 0 && fabs(x) * unit > SIM_JSON_MAX_DURATION_S) {
        char want[96];
        if (unit == 1)
            snprintf(want, sizeof want, "a duration of at most %g s", SIM_JSON_MAX_DURATION_S);
        else
            snprintf(want, sizeof want, "a duration of at most %g s (%g %s)",
                     SIM_JSON_MAX_DURATION_S, SIM_JSON_MAX_DURATION_S / unit,
                     unit == 1e-3 ? "ms" : "us");
        return fail(path, key, want, v);
    }
    *out = x;
    return 0;
}

int sim_json_int(const cJSON *obj, const char *path, const char *key, bool required,
                 long min, long max, long *out)
{
    char what[96];
    snprintf(what, sizeof what, "an integer in [%ld, %ld]", min, max);
    const cJSON *v = member(obj, key);
    if (!v)
        return required ? missing(path, key, what) : 0;
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
        v->valuedouble < (double)min || v->valuedouble > (double)max)
        return fail(path, key, what, v);
    *out = (long)v->valuedouble;
    return 0;
}

int sim_json_str(const cJSON *obj, const char *path, const char *key, bool required,
                 const char **out)
{
    const cJSON *v = member(obj, key);
    if (!v)
        return required ? missing(path, key, "a string") : 0;
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return fail(path, key, "a non-empty string", v);
    *out = v->valuestring;
    return 0;
}

int sim_json_bool(const cJSON *obj, const char *path, const char *key, bool required, bool *out)
{
    const cJSON *v = member(obj, key);
    if (!v)
        return required ? missing(path, key, "true or false") : 0;
    if (!cJSON_IsBool(v))
        return fail(path, key, "true or false", v);
    *out = cJSON_IsTrue(v);
    return 0;
}

int sim_json_obj(const cJSON *obj, const char *path, const char *key, bool required,
                 const cJSON **out)
{
    const cJSON *v = member(obj, key);
    *out = NULL;
    if (!v)
        return required ? missing(path, key, "an object") : 0;
    if (!cJSON_IsObject(v))
        return fail(path, key, "an object", v);
    *out = v;
    return 0;
}

int sim_json_arr(const cJSON *obj, const char *path, const char *key, bool required,
                 const cJSON **out)
{
    const cJSON *v = member(obj, key);
    *out = NULL;
    if (!v)
        return required ? missing(path, key, "an array") : 0;
    if (!cJSON_IsArray(v))
        return fail(path, key, "an array", v);
    *out = v;
    return 0;
}

int sim_json_enum(const cJSON *obj, const char *path, const char *key, bool required,
                  const char *const *choices, int *out)
{
    char what[512] = "one of ";
    for (int i = 0; choices[i]; i++) {
        size_t l = strlen(what);
        snprintf(what + l, sizeof what - l, "%s\"%s\"", i ? ", " : "", choices[i]);
    }
    const cJSON *v = member(obj, key);
    if (!v)
        return required ? missing(path, key, what) : 0;
    if (cJSON_IsString(v))
        for (int i = 0; choices[i]; i++)
            if (strcmp(v->valuestring, choices[i]) == 0) {
                *out = i;
                return 0;
            }
    return fail(path, key, what, v);
}

static int cmp_key(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    return strcmp(x->string, y->string);
}

/* A key given twice in one object (cJSON keeps both and every lookup sees the first): an
 * error with the object's JSON path. Each object's keys sorted: n log n over the document. */
static int no_duplicate_keys(const cJSON *j, char *path, size_t len, size_t size,
                             const char *name)
{
    if (!cJSON_IsObject(j) && !cJSON_IsArray(j))
        return 0;
    int n = 0, i = 0, rc = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, j)
        n++;
    if (cJSON_IsObject(j) && n > 1) {
        const cJSON **v = malloc((size_t)n * sizeof *v);
        if (!v)
            return sim_err_set(SIM_ENOMEM, "%s: out of memory", name);
        cJSON_ArrayForEach(c, j)
            v[i++] = c;
        qsort(v, (size_t)n, sizeof *v, cmp_key);
        for (i = 1; i < n && !rc; i++)
            if (strcmp(v[i - 1]->string, v[i]->string) == 0)
                rc = sim_err_set(SIM_EINVAL, "%s: %s%s%.100s: the key appears twice in one "
                                 "object (expected each key once)", name, path, len ? "." : "",
                                 v[i]->string);
        free(v);
        if (rc)
            return rc;
    }
    i = 0;
    cJSON_ArrayForEach(c, j) {
        if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
            int w = cJSON_IsArray(j) ? snprintf(path + len, size - len, "[%d]", i)
                                      : snprintf(path + len, size - len, "%s%s", len ? "." : "",
                                                 c->string);
            size_t nl = w < 0 ? len : len + (size_t)w < size ? len + (size_t)w : size - 1;
            if ((rc = no_duplicate_keys(c, path, nl, size, name)))
                return rc;
            path[len] = '\0';
        }
        i++;
    }
    return 0;
}

/* Where a \u0000 escape sits in JSON text (a string holding a NUL: cJSON ends the string
 * there, silently cutting a name), or NULL. An escaped backslash before it is not an escape. */
static const char *nul_escape(const char *text)
{
    for (const char *p = text; (p = strstr(p, "\\u0000")); p++) {
        int bs = 0;
        for (const char *q = p; q > text && q[-1] == '\\'; q--)
            bs++;
        if (bs % 2 == 0)
            return p;
    }
    return NULL;
}

/* Line and column of `at` in text. */
static void position(const char *text, const char *at, int *line, int *col)
{
    *line = 1, *col = 1;
    for (const char *p = text; p < at && *p; p++)
        if (*p == '\n')
            ++*line, *col = 1;
        else
            ++*col;
}

/* cJSON allocates through these, so that a parse that ran out of memory is told from
 * invalid JSON (cJSON returns NULL for both). */
static bool json_nomem;

static void *json_alloc(size_t n)
{
    void *p = malloc(n);
    json_nomem |= p == NULL;
    return p;
}

/* --set ran out of memory: what it held is freed (either may be NULL). */
static int set_nomem(const char *path, cJSON *a, cJSON *b)
{
    cJSON_Delete(a);
    cJSON_Delete(b);
    return sim_err_set(SIM_ENOMEM, "--set %s: out of memory", path);
}

static void json_hooks(void)
{
    static bool done;
    if (!done) {
        cJSON_Hooks h = {json_alloc, free};
        cJSON_InitHooks(&h);
        done = true;
    }
}

int sim_json_parse(const char *text, const char *name, cJSON **out)
{
    const char *end = NULL, *nul = nul_escape(text);
    int line, col;
    if (nul) {
        position(text, nul, &line, &col);
        return sim_err_set(SIM_EINVAL, "%s:%d:%d: a string holds \\u0000 (a NUL character), "
                           "which would cut it short there: no name or text may hold one",
                           name, line, col);
    }
    json_hooks();
    json_nomem = false;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root && json_nomem)
        return sim_err_set(SIM_ENOMEM, "%s: out of memory parsing it", name);
    if (!root) {
        if (!end)
            end = text + strlen(text);
        position(text, end, &line, &col);
        int depth = 0, deepest = 0;      /* cJSON refuses nesting past CJSON_NESTING_LIMIT */
        for (const char *p = text; p <= end && *p && deepest <= CJSON_NESTING_LIMIT; p++)
            if (*p == '[' || *p == '{')
                deepest = ++depth > deepest ? depth : deepest;
            else if (*p == ']' || *p == '}')
                depth--;
        if (deepest > CJSON_NESTING_LIMIT)
            return sim_err_set(SIM_EINVAL, "%s:%d:%d: invalid JSON: nested more than %d levels "
                               "deep (the parser's limit)", name, line, col, CJSON_NESTING_LIMIT);
        /* the position only, never the text: the file may not be JSON at all (a password
         * file named by mistake), and its contents do not belong in a message */
        return sim_err_set(SIM_EINVAL, "%s:%d:%d: invalid JSON (the parser stopped at line %d, "
                           "column %d)", name, line, col, line, col);
    }
    char path[SIM_JPATH_MAX] = "";
    int rc = no_duplicate_keys(root, path, 0, sizeof path, name);
    if (rc) {
        cJSON_Delete(root);
        return rc;
    }
    *out = root;
    return 0;
}

/* The largest JSON input file read (configs, zoos, sweeps, --set @FILE): 64 MiB, or
 * $SERVESIM_MAX_JSON_MB; a larger one (or an endless device) is refused, not read. */
static size_t max_json_bytes(void)
{
    const char *e = getenv("SERVESIM_MAX_JSON_MB");
    char *end;
    double mb = e && *e ? strtod(e, &end) : 64;
    if (!e || !*e || *end || !(mb > 0) || mb > 1e6)
        mb = 64;
    return (size_t)(mb * 1024 * 1024);
}

int sim_json_load_file(const char *file, cJSON **out)
{
    FILE *f = fopen(file, "rb");
    if (!f)   /* a missing or unreadable path is the user's input, not an I/O fault */
        return sim_err_set(errno == ENOENT ? SIM_ENOENT : SIM_EINVAL, "%s: cannot open: %s",
                           file, strerror(errno));
    int rc = 0;
    char *buf = NULL;
    size_t len = 0, cap = 0, max = max_json_bytes();
    for (;;) {
        if (len > max) {
            rc = sim_err_set(SIM_EINVAL, "%s: larger than %g MiB: not read (a JSON input "
                             "file; SERVESIM_MAX_JSON_MB raises the limit)", file,
                             (double)max / (1024 * 1024));
            goto out_free;
        }
        if (len + 4096 + 1 > cap) {
            cap = cap ? 2 * cap : 8192;
            char *nb = realloc(buf, cap);
            if (!nb) {
                rc = sim_err_set(SIM_ENOMEM, "%s: out of memory", file);
                goto out_free;
            }
            buf = nb;
        }
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        rc = errno == EISDIR ? sim_err_set(SIM_EINVAL, "%s: is a directory, expected a JSON "
                                           "file", file)
                             : sim_err_set(SIM_EIO, "%s: read error: %s", file, strerror(errno));
        goto out_free;
    }
    buf[len] = '\0';
    if (strlen(buf) != len) {
        rc = sim_err_set(SIM_EINVAL, "%s: contains a NUL byte (not a JSON text file)", file);
        goto out_free;
    }
    rc = sim_json_parse(buf, file, out);
out_free:
    free(buf);
    fclose(f);
    return rc;
}

/* --set: walk "a.b[2].c", creating objects on the way. */
/* The existing value at a path of keys and [i] indices, or NULL. */
static const cJSON *lookup(const cJSON *cur, const char *p, const char *end)
{
    while (cur && p < end) {
        if (*p == '.') {
            p++;
            continue;
        }
        if (*p == '[') {
            char *e;
            long i = strtol(p + 1, &e, 10);
            if (*e != ']' || !cJSON_IsArray(cur))
                return NULL;
            cur = cJSON_GetArrayItem(cur, (int)i);
            p = e + 1;
            continue;
        }
        char key[128];
        size_t k = 0;
        while (p < end && *p != '.' && *p != '[' && k + 1 < sizeof key)
            key[k++] = *p++;
        key[k] = '\0';
        cur = cJSON_IsObject(cur) ? cJSON_GetObjectItemCaseSensitive(cur, key) : NULL;
    }
    return cur;
}

const cJSON *sim_json_get(const cJSON *root, const char *path)
{
    return lookup(root, path, path + strlen(path));
}

/* Did one of the earlier assignments set path.key (or something inside it)? */
static bool set_before(const char *path, const char *key, const char *const *earlier, int n)
{
    char full[SIM_JPATH_MAX];
    snprintf(full, sizeof full, "%s.%s", path, key);
    size_t fl = strlen(full);
    for (int i = 0; i < n; i++)
        if (strncmp(earlier[i], full, fl) == 0 && strchr("=.[", earlier[i][fl]))
            return true;
    return false;
}

/* Would the object val, replacing the object old at path, drop a key of old that an earlier
 * assignment set? The first such key is refused with what to do instead. */
static int drops(const char *path, const cJSON *old, const cJSON *val,
                 const char *const *earlier, int nearlier)
{
    if (!cJSON_IsObject(old) || !cJSON_IsObject(val))
        return 0;
    for (const cJSON *k = old->child; k; k = k->next) {
        if (!k->string || cJSON_GetObjectItemCaseSensitive(val, k->string) ||
            !set_before(path, k->string, earlier, nearlier))
            continue;
        char *was = cJSON_PrintUnformatted(k);
        int rc = sim_err_set(SIM_EUSAGE, "--set %s: the object replaces the whole of %s and "
                             "would drop %s.%s (%s), set by an earlier --set: give it in the "
                             "object too, or set each key by itself (--set %s.KEY=VALUE)",
                             path, path, path, k->string, was ? was : "...", path);
        cJSON_free(was);
        return rc;
    }
    return 0;
}

static int set_value(cJSON *root, const char *assignment, const char *const *earlier,
                     int nearlier);

int sim_json_set(cJSON *root, const char *assignment)
{
    return set_value(root, assignment, NULL, 0);
}

int sim_json_set_keeping(cJSON *root, const char *assignment, const char *const *earlier,
                         int nearlier)
{
    return set_value(root, assignment, earlier, nearlier);
}

/* a[*].b=v: b set in every element of the existing array a (star: where "[*]" is). */
static int set_each(cJSON *root, const char *assignment, const char *star,
                    const char *const *earlier, int nearlier)
{
    const cJSON *arr = lookup(root, assignment, star);
    if (!cJSON_IsArray(arr))
        return sim_err_set(SIM_EUSAGE, "--set %s: [*] needs an existing array before it",
                           assignment);
    size_t len = strlen(assignment) + 24;
    char *one = malloc(len);
    if (!one)
        return SIM_ENOMEM;
    int rc = 0;
    for (int i = 0; !rc && i < cJSON_GetArraySize(arr); i++) {
        snprintf(one, len, "%.*s[%d]%s", (int)(star - assignment), assignment, i, star + 3);
        rc = set_value(root, one, earlier, nearlier);
    }
    free(one);
    return rc;
}

/* The path's last step, a key of object cur (next: its member, or NULL): val replaces or is
 * added; val is owned here from now on. */
static int put_member(cJSON *cur, cJSON *next, const char *key, cJSON *val, const char *path,
                      const char *const *earlier, int nearlier)
{
    int drc = next ? drops(path, next, val, earlier, nearlier) : 0;
    if (drc) {
        cJSON_Delete(val);
        return drc;
    }
    /* the key copied here: cJSON 1.7.15's ReplaceItemInObject does not check its own copy,
     * and a failed one left a member without a name */
    char *name = next ? cJSON_malloc(strlen(key) + 1) : NULL;
    if (name) {
        strcpy(name, key);
        val->string = name;
    }
    if (next ? !name || !cJSON_ReplaceItemViaPointer(cur, next, val)
             : !cJSON_AddItemToObject(cur, key, val))
        return set_nomem(path, val, NULL);
    return 0;
}

/* The path's last step, element i of array cur of n (i == n appends): val replaces or is
 * appended; val is owned here from now on. */
static int put_element(cJSON *cur, int i, int n, cJSON *val, const char *path,
                       const char *const *earlier, int nearlier)
{
    int drc = i < n ? drops(path, cJSON_GetArrayItem(cur, i), val, earlier, nearlier) : 0;
    if (drc) {
        cJSON_Delete(val);
        return drc;
    }
    if (!(i == n ? cJSON_AddItemToArray(cur, val) : cJSON_ReplaceItemInArray(cur, i, val)))
        return set_nomem(path, val, NULL);
    return 0;
}

static int set_value(cJSON *root, const char *assignment, const char *const *earlier,
                     int nearlier)
{
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment)
        return sim_err_set(SIM_EUSAGE, "--set %s: expected PATH=VALUE", assignment);
    const char *star = strstr(assignment, "[*]");
    if (star && star < eq)
        return set_each(root, assignment, star, earlier, nearlier);
    size_t plen = (size_t)(eq - assignment);
    char path[SIM_JPATH_MAX];
    if (plen >= sizeof path)
        return sim_err_set(SIM_EUSAGE, "--set: path too long");
    memcpy(path, assignment, plen);
    path[plen] = '\0';

    const char *vtext = eq + 1;
    if (nul_escape(vtext))
        return sim_err_set(SIM_EUSAGE, "--set %s: the value holds \\u0000 (a NUL character), "
                           "which would cut it short there", path);
    json_hooks();
    json_nomem = false;
    cJSON *val = cJSON_Parse(vtext);
    if (!val && !json_nomem)            /* not JSON: the value is the text */
        val = cJSON_CreateString(vtext);
    if (!val)
        return set_nomem(path, NULL, NULL);

    cJSON *cur = root;
    char *p = path;
    char done[SIM_JPATH_MAX] = "";
    while (*p) {
        char key[128];
        size_t k = 0;
        while (*p && *p != '.' && *p != '[' && k + 1 < sizeof key)
            key[k++] = *p++;
        key[k] = '\0';
        if (k) {
            if (!cJSON_IsObject(cur))
                goto not_object;
            bool last = (*p == '\0');
            cJSON *next = cJSON_GetObjectItemCaseSensitive(cur, key);
            char np[SIM_JPATH_MAX];
            sim_jpath(np, sizeof np, done, key);
            snprintf(done, sizeof done, "%s", np);
            if (last)
                return put_member(cur, next, key, val, path, earlier, nearlier);
            if (!next) {
                next = (*p == '[') ? cJSON_CreateArray() : cJSON_CreateObject();
                if (!next || !cJSON_AddItemToObject(cur, key, next))
                    return set_nomem(path, val, next);
            }
            cur = next;
        }
        if (*p == '.') {
            p++;
            continue;
        }
        if (*p == '[') {
            char *end;
            errno = 0;
            long i = strtol(p + 1, &end, 10);
            if (end == p + 1 || *end != ']' || i < 0) {
                cJSON_Delete(val);
                return sim_err_set(SIM_EUSAGE, "--set %s: bad index in path", path);
            }
            const char *digits = p + 1;
            int ndigits = (int)(end - digits);
            p = end + 1;
            if (!cJSON_IsArray(cur)) {
                cJSON_Delete(val);
                return sim_err_set(SIM_EINVAL, "--set %s: %s is not an array", path, done);
            }
            int n = cJSON_GetArraySize(cur);
            if (errno == ERANGE || i > n) {   /* n: one past the end appends */
                cJSON_Delete(val);
                return sim_err_set(SIM_EINVAL, "--set %s: index %.*s out of range (%s has %d "
                                   "element%s; %d appends)", path, ndigits, digits, done, n,
                                   n == 1 ? "" : "s", n);
            }
            char np[SIM_JPATH_MAX];
            sim_jpath_idx(np, sizeof np, done, (int)i);
            snprintf(done, sizeof done, "%s", np);
            bool last = (*p == '\0');
            if (last)
                return put_element(cur, (int)i, n, val, path, earlier, nearlier);
            if (i == n) {
                cJSON *o = cJSON_CreateObject();
                if (!o || !cJSON_AddItemToArray(cur, o))
                    return set_nomem(path, val, o);
            }
            cur = cJSON_GetArrayItem(cur, (int)i);
            if (*p == '.')
                p++;
            continue;
        }
        if (*p) {
            cJSON_Delete(val);
            return sim_err_set(SIM_EUSAGE, "--set %s: malformed path", path);
        }
    }
    cJSON_Delete(val);
    return sim_err_set(SIM_EUSAGE, "--set %s: empty path", assignment);
not_object:
    cJSON_Delete(val);
    return sim_err_set(SIM_EINVAL, "--set %s: %s is not an object", path, done[0] ? done : "(root)");
}
