/* gz.c: see gz.h. */
#include "gz.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "afile.h"
#include "check.h"

int gz_read_all(const char *path, char **buf, size_t *len, struct diag *d)
{
    *buf = NULL;
    *len = 0;
    gzFile g = gzopen(path, "rb");
    if (g == NULL)
        return diag_set(d, DIAG_E_IO, path, 0, "", "cannot read: %s",
                        errno ? strerror(errno) : "out of memory");
    afile_note_input_path(path);
    gzbuffer(g, 1 << 17);
    size_t cap = 1 << 20, n = 0;
    char *b = sim_xrealloc(NULL, cap + 1);
    for (;;) {
        if (n == cap) {
            if (cap >= GZ_MAX_BYTES) {
                free(b);
                gzclose(g);
                return diag_set(d, DIAG_E_RANGE, path, 0, "", "larger than %zu bytes decompressed",
                                (size_t)GZ_MAX_BYTES);
            }
            cap *= 2;
            b = sim_xrealloc(b, cap + 1);
        }
        size_t want = cap - n > (1u << 30) ? (1u << 30) : cap - n;
        int got = gzread(g, b + n, (unsigned)want);
        if (got < 0) {
            int err;
            const char *msg = gzerror(g, &err);
            diag_set(d, DIAG_E_PARSE, path, 0, "", "not a readable gzip file: %s", msg);
            free(b);
            gzclose(g);
            return -1;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    /* a gzip stream cut short reads as EOF; zlib reports it here */
    int err = 0;
    const char *msg = gzerror(g, &err);
    if (err != Z_OK && err != Z_STREAM_END) {
        diag_set(d, DIAG_E_PARSE, path, 0, "", "corrupt or truncated gzip: %s", msg);
        free(b);
        gzclose(g);
        return -1;
    }
    if (gzclose(g) != Z_OK) {
        free(b);
        return diag_set(d, DIAG_E_PARSE, path, 0, "", "corrupt or truncated gzip file");
    }
    b[n] = '\0';
    if (memchr(b, '\0', n) != NULL) {   /* every caller reads JSON text */
        free(b);
        return diag_set(d, DIAG_E_PARSE, path, 0, "", "not a JSON file (NUL byte)");
    }
    *buf = b;
    *len = n;
    return 0;
}

void *gz_open_read(const char *path, struct diag *d)
{
    gzFile g = gzopen(path, "rb");
    if (g == NULL) {
        diag_set(d, DIAG_E_IO, path, 0, "", "cannot read: %s", errno ? strerror(errno) : "out of memory");
        return NULL;
    }
    afile_note_input_path(path);
    gzbuffer(g, 1 << 17);
    return g;
}

long gz_read_some(void *gz, char *buf, size_t n, const char *path, struct diag *d)
{
    if (n > (1u << 30))
        n = 1u << 30;
    int got = gzread((gzFile)gz, buf, (unsigned)n);
    if (got < 0) {
        int err;
        const char *msg = gzerror((gzFile)gz, &err);
        diag_set(d, DIAG_E_PARSE, path, 0, "", "corrupt or truncated gzip: %s", msg);
        return -1;
    }
    if (got == 0) {
        int err = 0;
        const char *msg = gzerror((gzFile)gz, &err);
        if (err != Z_OK && err != Z_STREAM_END) {
            diag_set(d, DIAG_E_PARSE, path, 0, "", "corrupt or truncated gzip: %s", msg);
            return -1;
        }
    }
    return got;
}

void gz_close(void *gz)
{
    gzclose((gzFile)gz);
}
