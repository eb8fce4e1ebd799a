/* sim_store_int — what the results store's two files share (sim_store.c: the schema,
 * opening and migrating, sweeps' points and claims, images and merges; sim_store_write.c:
 * the writers of runs, plans and profiles). Not for other layers: they use sim_store.h. */
#ifndef SIM_STORE_INT_H
#define SIM_STORE_INT_H

#include <sqlite3.h>
#include <stdint.h>

#include "sim_store.h"

struct sim_store {
    sqlite3 *db;
    char *path;
};

/* SIM_EDB with SQLite's message for `what` (the lock said as such). */
int store_err(struct sim_store *st, const char *what);
/* Runs sql (no rows); SIM_EDB on an error. */
int store_exec(struct sim_store *st, const char *sql);
/* Rolls back the open transaction, if any. */
void store_rollback(struct sim_store *st);
/* Prepares sql into *q; SIM_EDB on an error. */
int store_prep(struct sim_store *st, const char *sql, sqlite3_stmt **q);

/* A writer puts rows into one table by column name. Its INSERT names every column the table
 * has, each as the parameter :column, except an INTEGER PRIMARY KEY (the row id SQLite
 * gives). A row gives each column once (sw_int, sw_real, sw_text, sw_null), and sw_row writes
 * it. A name the table lacks, or a column given twice or left out, is an error naming the
 * table and the column: never a row whose values sit one column over. */
#define W_MAXCOLS 64

struct sim_store_writer {
    struct sim_store *st;
    sqlite3_stmt *q;
    const char *table;
    int ncols;
    uint64_t given;                     /* bit i - 1: parameter i has its value for this row */
    int next;                           /* the parameter tried first for the next column (the
                                         * writers give them mostly in the table's order) */
    int rc;                             /* the first error of this row */
};

/* Opens w on `table`: `verb` "INSERT" or "INSERT OR REPLACE", `tail` SQL after VALUES(...)
 * (an ON CONFLICT clause) or "". */
int sw_open(struct sim_store *st, struct sim_store_writer *w, const char *verb,
            const char *table, const char *tail);
void sw_close(struct sim_store_writer *w);
void sw_int(struct sim_store_writer *w, const char *col, int64_t v);
void sw_real(struct sim_store_writer *w, const char *col, double v);   /* NAN: NULL */
void sw_text(struct sim_store_writer *w, const char *col, const char *v); /* NULL: NULL */
void sw_null(struct sim_store_writer *w, const char *col);
/* Writes the row given since the last one. */
int sw_row(struct sim_store_writer *w);

#endif
