/* sim_out — an output file written whole or not at all. Its text goes to a temporary file
 * beside it, then a rename, so a reader never sees half of it and a failed write leaves the
 * old file (or none). A path that already exists and is not a regular file (a device such as
 * /dev/null, a FIFO) is written through instead, never replaced. Every error names the path the
 * user gave and the reason, never the temporary name. */
#ifndef SIM_OUT_H
#define SIM_OUT_H

#include <stdbool.h>
#include <stdio.h>

struct sim_out {
    FILE *f;                   /* write here between open and close */
    char path[4096], tmp[4160];
    bool through;              /* not a regular file: written in place */
};

/* Before the work: can `path` be written? The folder exists and may be written to, and the
 * path is not a folder. SIM_EINVAL (the user's input) with the reason otherwise. */
int sim_out_check(const char *path);
int sim_out_open(struct sim_out *o, const char *path);
/* Ends the write: with ok, commits it (flush, close, rename); without, discards it. Returns
 * the first error (ok stays false for the caller's own error). */
int sim_out_close(struct sim_out *o, bool ok);
/* The whole file in one call: text, and a line end if it lacks one (open, write, close). */
int sim_out_write(const char *path, const char *text);

#endif
