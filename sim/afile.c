/* afile.c: see afile.h. */
#include "afile.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

int afile_open(struct afile *a, const char *path, struct diag *d)
{
    memset(a, 0, sizeof *a);
    if (strlen(path) >= sizeof a->path)
        return diag_set(d, DIAG_E_IO, path, 0, "", "path too long");
    snprintf(a->path, sizeof a->path, "%s", path);
    snprintf(a->tmp, sizeof a->tmp, "%s.tmp.%ld", path, (long)getpid());
    a->f = fopen(a->tmp, "w");
    if (a->f == NULL)
        return diag_set(d, DIAG_E_IO, path, 0, "", "cannot write: %s", strerror(errno));
    return 0;
}

int afile_commit(struct afile *a, struct diag *d)
{
    int bad = ferror(a->f);
    if (fclose(a->f) != 0)
        bad = 1;
    a->f = NULL;
    if (bad) {
        remove(a->tmp);
        return diag_set(d, DIAG_E_IO, a->path, 0, "", "write failed");
    }
    if (rename(a->tmp, a->path) != 0) {
        int err = errno;
        remove(a->tmp);
        return diag_set(d, DIAG_E_IO, a->path, 0, "", "cannot write: %s", strerror(err));
    }
    return 0;
}

void afile_abort(struct afile *a)
{
    if (a->f != NULL) {
        fclose(a->f);
        a->f = NULL;
    }
    if (a->tmp[0] != '\0')
        remove(a->tmp);
}
