/* sim_out — an output file written whole or not at all. Its text goes to a temporary file
 * beside it, then a rename, so a reader never sees half of it, a failed write leaves the
 * old file (or none), and a symbolic link planted at the name is replaced, never written
 * through. A path that already exists and is not a regular file (a device such as
 * /dev/null, a FIFO) is written through instead, never replaced. Every error names the path the
 * user gave and the reason, never the temporary name. */
#ifndef SIM_OUT_H
#define SIM_OUT_H

#include <stdbool.h>
#include <stdio.h>

struct sim_out {
    FILE *f;                   /* write here between open and close */
    char path[4096], tmp[4200];
    bool through;              /* not a regular file: written in place */
};

/* Before the work: can `path` be written? The folder exists and may be written to, and the
 * path is not a folder. SIM_EINVAL (the user's input) with the reason otherwise. */
int sim_out_check(const char *path);
int sim_out_open(struct sim_out *o, const char *path);
/* Refuses to write `out` where it is the input `in` (the same file by device and inode,
 * whatever the names or links): SIM_EUSAGE naming both, as `what` (e.g. "the database"). A
 * NULL or missing file is no clash. */
int sim_out_not_input(const char *out, const char *in, const char *what);
/* Whether a and b name one existing file (device and inode); false for NULL or missing. */
bool sim_out_same_file(const char *a, const char *b);
/* The temporary beside `path` for a writer that renames it into place itself (a figure that
 * gnuplot writes): a new, empty file (O_EXCL | O_NOFOLLOW: never an existing file nor a link
 * planted there), its name to tmp. Returns its descriptor, or a negative error. */
int sim_out_tmp(const char *path, char *tmp, size_t size);
/* Renames tmp to path (replacing a link there, never writing through it); on failure tmp is
 * removed and the error names path. */
int sim_out_commit(const char *tmp, const char *path);
/* A new, empty regular file at `path`, made beside it and renamed there, so whatever stood at
 * the name (a planted link above all) is replaced, never written through; for a file that is
 * filled in place after (a figure's .dat). Returns its descriptor, or a negative error. */
int sim_out_fresh(const char *path);
/* Ends the write: with ok, commits it (flush, close, rename); without, discards it. Returns
 * the first error (ok stays false for the caller's own error). */
int sim_out_close(struct sim_out *o, bool ok);
/* The whole file in one call: text, and a line end if it lacks one (open, write, close). */
int sim_out_write(const char *path, const char *text);

/* Before the work: has the filesystem that holds `path` at least `need` bytes free (for an
 * unprivileged user)? SIM_EIO naming the path, the space left and what needs it otherwise
 * (a full disk found before a simulation, not after it). */
int sim_out_space(const char *path, double need, const char *what);

/* At exit, standard output is flushed and closed, and a failed write (a full disk, /dev/full,
 * a closed pipe) is said on stderr naming its target and reason, and turns the exit status
 * to 1: output a user asked for is never lost in silence. Also ignores SIGXFSZ, so a write
 * past `ulimit -f` fails as an error the command reports and cleans up after (a temporary
 * removed, a sweep stopped) instead of killing it. Call once, first thing in main. */
void sim_out_guard_stdout(const char *prog);

#endif
