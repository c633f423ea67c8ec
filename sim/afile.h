/* afile.h: write a file atomically.  Output goes to "<path>.tmp.XXXXXX" in
 * the same directory and is renamed over <path> only by afile_commit(), so
 * an error or a crash never leaves a half-written file under the real name.
 */
#ifndef STRATA_AFILE_H
#define STRATA_AFILE_H

#include <stdio.h>

#include "diag.h"

struct afile {
    FILE *f;
    char *buf; /* stdio buffer we own: glibc ignores setvbuf's size when buf is NULL */
    char path[1024];
    char tmp[1100];
};

/* Returns 0 with a->f open for writing, or -1 with *d filled. */
int afile_open(struct afile *a, const char *path, struct diag *d);
/* Flush, close and rename.  Returns 0, or -1 (temp file removed) with *d. */
int afile_commit(struct afile *a, struct diag *d);
/* Close and remove the temp file. */
void afile_abort(struct afile *a);

#endif
