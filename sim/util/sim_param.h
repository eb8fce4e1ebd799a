/* sim_param — settings declared once: a table of rows (key, type, range, default, where the
 * value goes, one line of doc) from which a JSON object is checked, read and documented.
 *
 * A config section or a policy's params is one table; reading it (sim_params_read) writes
 * the defaults, refuses unknown keys, and reads every key with sim_json's getters, so the
 * messages are theirs ("policy.params.lambda: expected a positive number, got -1");
 * sim_params_markdown prints the table's rows for the docs (docs/config.md and
 * docs/policies.md are generated from them, and a test checks they are current).
 *
 * A row says where its value goes as an offset into the caller's struct, checked against the
 * row's C type at compile time (SIM_P_AT). A row whose value needs more than a type and a
 * range (an object of several forms, an array of entries) is SIM_P_HAND: its key is accepted
 * and documented by the table, and the caller reads it. Rows end with one whose key is NULL.
 *
 *     struct knobs { double lambda; int scan; };
 *     static const char *const SCANS[] = {"indexed", "every_gpu", NULL};
 *     static const struct sim_param KNOBS[] = {
 *         {"lambda", SIM_P_NUM, SIM_P_AT(struct knobs, lambda, double), .cons = SIM_J_POS,
 *          .def = 3.03, .doc = "preempt for a batch this many times larger"},
 *         {"scan", SIM_P_ENUM, SIM_P_AT_ENUM(struct knobs, scan), .choices = SCANS,
 *          .doc = "which GPUs an arrival is offered to"},
 *         {NULL}};
 *     rc = sim_params_read(KNOBS, params, "policy.params", &k);   // defaults, keys, values
 */
#ifndef SIM_PARAM_H
#define SIM_PARAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim_json.h"

enum sim_ptype {
    SIM_P_NUM,      /* double; .cons bounds it (sim_json_num's rules for *_ms, *_mb, cv) */
    SIM_P_INT,      /* int in [.lo, .hi] */
    SIM_P_LONG,     /* long in [.lo, .hi] */
    SIM_P_BOOL,     /* bool */
    SIM_P_STR,      /* const char * into the JSON tree (valid while it lives); .sdef */
    SIM_P_ENUM,     /* int: the index in .choices (NULL-terminated) of a string; .sdef */
    SIM_P_OBJ,      /* const cJSON *: an object member, NULL when absent */
    SIM_P_ARR,      /* const cJSON *: an array member, NULL when absent */
    SIM_P_HAND,     /* read by the caller: accepted and documented only (no .off) */
    SIM_P_INCLUDE,  /* another table's rows (.rows), their offsets counted from .off: params
                     * several policies share (the key names the group, for no one else) */
    SIM_P_SECTION,  /* an object whose keys are the table .rows: read by the caller (as
                     * SIM_P_HAND), documented as its rows, each "key.row" (and, with a .doc,
                     * a row for the object itself first) */
};

/* Row flags. */
enum {
    SIM_P_REQUIRED = 1,     /* absent is an error (no default) */
    SIM_P_NODEF = 2,        /* the caller sets the default before reading (.def_doc says it) */
    SIM_P_EACH = 4,         /* SIM_P_SECTION: an array of such objects ("key[].row" in docs) */
    SIM_P_MAP = 8,          /* SIM_P_SECTION: an object of such objects by name ("key.NAME.row"
                             * in docs, NAME the row's .sdef: "MODEL", "KIND") */
    SIM_P_DOC = 16,         /* documentation only: another form of the key before it (a
                             * zoo reference among models[]), not a key of its own */
};

struct sim_param {
    const char *key;                /* NULL ends a table */
    enum sim_ptype type;
    size_t off;                     /* where the value goes in the caller's struct (SIM_P_AT) */
    enum sim_jcons cons;            /* SIM_P_NUM */
    long lo, hi;                    /* SIM_P_INT, SIM_P_LONG: the range, both ends included */
    double def;                     /* SIM_P_NUM, _INT, _LONG, _BOOL (non-zero: true) */
    const char *sdef;               /* SIM_P_STR, SIM_P_ENUM (NULL: the first choice) */
    const char *const *choices;     /* SIM_P_ENUM */
    unsigned flags;                 /* SIM_P_REQUIRED, SIM_P_NODEF */
    const char *type_doc;           /* the docs' type and range, where the generated one
                                     * would say less (a bound checked after reading) */
    const char *def_doc;            /* the docs' default, where it is not .def (computed) */
    const char *doc;                /* what it means, for the docs: one line */
    const struct sim_param *rows;   /* SIM_P_INCLUDE */
};

/* offsetof(T, f), and a warning (distinct pointer types; an error where warnings are, as in
 * the dev and CI presets) unless T's f is a `type`. */
#define SIM_P_AT(T, f, type) .off = offsetof(T, f) + 0 * sizeof((type *)0 == &((T *)0)->f)
/* For SIM_P_ENUM: T's f is an int or an enum of an int's size. */
#define SIM_P_AT_ENUM(T, f) \
    .off = offsetof(T, f) + 0 * sizeof(char[sizeof(((T *)0)->f) == sizeof(int) ? 1 : -1])

/* The keys a table takes: its rows, included tables' counted in place, documentation-only
 * rows not counted. */
int sim_params_count(const struct sim_param *t);
/* Whether a table is well formed (tests run it over every table): every row has a doc, an
 * enum's default names one of its choices, a hand-read row says its type, a section has
 * rows, no key twice, at most SIM_PARAMS_MAX keys. 0, or -1 with why[] saying which row. */
#define SIM_PARAMS_MAX 120
int sim_params_check(const struct sim_param *t, char *why, size_t size);
/* The row of `key`, or NULL. */
const struct sim_param *sim_params_find(const struct sim_param *t, const char *key);
/* "a, b, c": the keys of a table (included ones in place) into buf, for messages. */
void sim_params_key_list(const struct sim_param *t, char *buf, size_t size);
/* Writes every default (rows neither SIM_P_NODEF nor SIM_P_HAND) into base. */
void sim_params_defaults(const struct sim_param *t, void *base);
/* Refuses a key of obj that no row has, with sim_json_keys' message ("PATH.k: unknown key
 * (expected one of: ...)"). */
int sim_params_keys(const struct sim_param *t, const cJSON *obj, const char *path);
/* Writes the defaults, checks obj's keys, then reads each row's key into base in the table's
 * order (the first error wins). obj may be NULL (an absent section): defaults only, and a
 * SIM_P_REQUIRED row is then missing. SIM_P_HAND rows are left to the caller. */
int sim_params_read(const struct sim_param *t, const cJSON *obj, const char *path, void *base);
/* sim_params_read without the check of keys: a part of obj's keys, whose table another one
 * includes (that one checks the keys). */
int sim_params_values(const struct sim_param *t, const cJSON *obj, const char *path, void *base);
/* The table as Markdown rows "| `PREFIX.key` | type, default | doc |" (PREFIX "" for the
 * top level), one per row, sections' rows in place, for the reference docs. */
void sim_params_markdown(const struct sim_param *t, const char *prefix, FILE *f);
/* The same rows as text for a terminal: the key and its type on one line, the doc wrapped
 * below it; only keys starting with `filter` (NULL: all). Returns the rows printed. */
int sim_params_text(const struct sim_param *t, const char *prefix, const char *filter, FILE *f);
/* The docs' "type, default" text of a row into buf. */
void sim_params_type_text(const struct sim_param *row, char *buf, size_t size);

#endif
