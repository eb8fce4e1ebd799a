/* sim_json — typed, path-aware access to cJSON trees for configs, zoos and policy params.
 *
 * Every getter knows the JSON path of what it reads ("models[3].slo_ms") and fails with a
 * message naming that path, what was expected and what was found:
 *     models[3].slo_ms: expected a positive number, got "fast"
 * Optional keys leave *out untouched when absent (callers pre-fill defaults). Unknown keys
 * are errors (sim_json_keys), never silently ignored. */
#ifndef SIM_JSON_H
#define SIM_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <cjson/cJSON.h>

enum sim_jcons {
    SIM_J_ANY,        /* any finite number */
    SIM_J_POS,        /* > 0 */
    SIM_J_NONNEG,     /* >= 0 */
    SIM_J_UNIT,       /* in [0, 1] */
};

#define SIM_JPATH_MAX 256

/* The longest duration sim_json_num accepts in a key named like one (`*_ms`, `*_s`, `*_us`):
 * about 3 years, 1e17 ns. A positive one (SIM_J_POS) is at least 1 ns: less would round to
 * no time at all in the engine. */
#define SIM_JSON_MAX_DURATION_S 1e8
/* The largest memory size in a key named `*_mb`: 1e9 MB, a petabyte. */
#define SIM_JSON_MAX_MB 1e9
/* The largest coefficient of variation in a key named `cv` or `*_cv`: beyond 10 a lognormal
 * or gamma draw is almost always ~0 with rare astronomically large values. */
#define SIM_JSON_MAX_CV 10.0

/* The first element of an array (NULL for none or no array); walk on with ->next. Loops over
 * arrays walk so, in linear time: cJSON_GetArrayItem(a, i) walks i elements each call. */
static inline const cJSON *sim_json_first(const cJSON *a) { return a ? a->child : NULL; }

/* path + "." + key (or just key at the root) into buf. */
void sim_jpath(char *buf, size_t size, const char *path, const char *key);
/* path + "[i]" into buf. */
void sim_jpath_idx(char *buf, size_t size, const char *path, int i);
/* A short description of a value for messages: "\"fast\"", "an object", "-3", "null". */
void sim_json_describe(const cJSON *v, char *buf, size_t size);

/* The one error form: "PATH: expected WHAT, got <description of got>" (SIM_EINVAL). */
int sim_json_expected(const char *path, const char *what, const cJSON *got);

int sim_json_keys(const cJSON *obj, const char *path, const char *const *allowed);
int sim_json_num(const cJSON *obj, const char *path, const char *key, bool required,
                 enum sim_jcons c, double *out /* OUT */);
int sim_json_int(const cJSON *obj, const char *path, const char *key, bool required,
                 long min, long max, long *out /* OUT */);
int sim_json_str(const cJSON *obj, const char *path, const char *key, bool required,
                 const char **out /* OUT */);
int sim_json_bool(const cJSON *obj, const char *path, const char *key, bool required,
                  bool *out /* OUT */);
/* Object or array member with a type check; *out = NULL when absent and optional. */
int sim_json_obj(const cJSON *obj, const char *path, const char *key, bool required,
                 const cJSON **out /* OUT */);
int sim_json_arr(const cJSON *obj, const char *path, const char *key, bool required,
                 const cJSON **out /* OUT */);
/* Requires a number or string to be one of `choices`; returns its index through *out. */
int sim_json_enum(const cJSON *obj, const char *path, const char *key, bool required,
                  const char *const *choices, int *out /* OUT */);

/* Reads and parses a JSON file; syntax errors report file:line:column. */
int sim_json_load_file(const char *file, cJSON **out /* OUT */);
int sim_json_parse(const char *text, const char *name, cJSON **out /* OUT */);

/* Applies one override "a.b[2].c=value". The value is parsed as JSON when it is valid JSON,
 * else taken as a string. Missing object members are created; array indices must exist or
 * equal the array's length (append). */
int sim_json_set(cJSON *root, const char *assignment);
/* sim_json_set, but an object value may not replace an object and so drop a key that one of
 * the `earlier` assignments set (it would be lost silently): the command line's --set and a
 * sweep's "set" block, each given the ones before it. */
int sim_json_set_keeping(cJSON *root, const char *assignment, const char *const *earlier,
                         int nearlier);
/* The value at a path "a.b[2].c" (the syntax of sim_json_set, without [*]), or NULL. */
const cJSON *sim_json_get(const cJSON *root, const char *path);

#endif
