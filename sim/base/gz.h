/* gz.h: read a whole file that may be gzip-compressed (zlib is included
 * only in gz.c).  Plain files are read as they are. */
#ifndef STRATA_GZ_H
#define STRATA_GZ_H

#include <stddef.h>

#include "diag.h"

#define GZ_MAX_BYTES ((size_t)1 << 31) /* 2 GiB decompressed */

/* *buf gets a NUL-terminated copy of the (decompressed) contents; the
 * caller frees it.  Returns 0, or -1 with *d (unreadable, corrupt or
 * truncated gzip, too large, or a NUL byte: the callers read JSON text). */
int gz_read_all(const char *path, char **buf, size_t *len, struct diag *d);

/* Streaming: open (NULL with *d on failure), read up to n bytes (returns
 * the count, 0 at the end, -1 with *d on a corrupt or truncated stream),
 * close. */
void *gz_open_read(const char *path, struct diag *d);
long gz_read_some(void *gz, char *buf, size_t n, const char *path, struct diag *d);
void gz_close(void *gz);

#endif
