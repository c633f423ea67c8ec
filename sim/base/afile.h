/* afile.h: write a file atomically.  Output goes to "<path>.tmp.XXXXXX" in
 * the same directory and is renamed over <path> only by afile_commit(), so
 * an error or a crash never leaves a half-written file under the real name.
 * The path "-" is standard output: written in place and flushed by
 * afile_commit, with no temporary file, so there an error can leave part of
 * the output behind (a pipe cannot be taken back).
 */
#ifndef STRATA_AFILE_H
#define STRATA_AFILE_H

#include <stdio.h>

#include "diag.h"

struct afile {
    FILE *f;
    char *buf; /* stdio buffer we own: glibc ignores setvbuf's size when buf is NULL */
    char path[1024];   /* as the caller named it, for messages */
    char target[4096]; /* what is replaced: path, or the file a symbolic link names */
    char tmp[4200];
    int to_stdout; /* path was "-": f is stdout, not ours to close */
};

/* Returns 0 with a->f open for writing, or -1 with *d filled.  A path that
 * is a symbolic link writes the file it names (the link stays); a path that
 * exists but is not a regular file (a folder, a device such as /dev/null,
 * a pipe) is refused: renaming over it would replace it, and so is one of
 * the command's inputs (afile_note_input). */
int afile_open(struct afile *a, const char *path, struct diag *d);
/* Flush, close and rename.  Returns 0, or -1 (temp file removed) with *d. */
int afile_commit(struct afile *a, struct diag *d);
/* Close and remove the temp file. */
void afile_abort(struct afile *a);
/* Records that f, just opened for reading, is an input of this command:
 * afile_open then refuses to replace that file (`run --trace T --json T`
 * would overwrite the trace).  The loaders call it; up to 256 inputs. */
void afile_note_input(FILE *f);
/* The same for a file read by name (zlib's gzopen). */
void afile_note_input_path(const char *path);
/* Turns that refusal on: the command line does, for the whole process.  A
 * library caller (a test that reloads and rewrites one file) leaves it off. */
void afile_guard_inputs(void);

/* Removes every temporary file now open (membudget_fail, on the way out
 * of a process that cannot go on). */
void afile_abort_staged(void);

/* Create dir if it is missing (its parent must exist); opt names the
 * option in the diagnostic.  0, or -1 with *d. */
int afile_make_dir(const char *dir, const char *opt, struct diag *d);

#endif
