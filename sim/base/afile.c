/* afile.c: see afile.h.  The temporary file is made with mkstemp (no two
 * writers collide) and renamed into place once fully written.  There is no
 * fsync: the promise is that an error or a crash of strata never leaves a
 * half-written file under the real name, not durability across a power
 * loss, and an fsync per file made the output folder slower to write than
 * the simulation itself. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "afile.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { AFILE_BUF = 1 << 16 }; /* below glibc's mmap threshold: reused, not faulted in per file */

/* The files this process has read (device and inode: every name and link
 * for one file matches).  Only the main thread reads and writes files. */
static struct {
    dev_t dev;
    ino_t ino;
} inputs[256];
static int ninputs, guard;

/* The temporary files now open (their names), for afile_abort_staged;
 * `run --out` writes its files from two threads. */
static char *staged[64];
static pthread_mutex_t staged_lock = PTHREAD_MUTEX_INITIALIZER;

static void stage_add(const char *tmp)
{
    pthread_mutex_lock(&staged_lock);
    for (unsigned i = 0; i < sizeof staged / sizeof staged[0]; i++)
        if (staged[i] == NULL) {
            staged[i] = strdup(tmp); /* NULL without memory: then not cleaned up, as before */
            break;
        }
    pthread_mutex_unlock(&staged_lock);
}

static void stage_drop(const char *tmp)
{
    pthread_mutex_lock(&staged_lock);
    for (unsigned i = 0; i < sizeof staged / sizeof staged[0]; i++)
        if (staged[i] != NULL && strcmp(staged[i], tmp) == 0) {
            free(staged[i]);
            staged[i] = NULL;
            break;
        }
    pthread_mutex_unlock(&staged_lock);
}

void afile_abort_staged(void)
{
    for (unsigned i = 0; i < sizeof staged / sizeof staged[0]; i++)
        if (staged[i] != NULL)
            unlink(staged[i]); /* left allocated: the process is exiting */
}

void afile_guard_inputs(void)
{
    guard = 1;
}

static void note(const struct stat *st)
{
    for (int i = 0; i < ninputs; i++)
        if (inputs[i].dev == st->st_dev && inputs[i].ino == st->st_ino)
            return;
    if (ninputs < (int)(sizeof inputs / sizeof inputs[0])) {
        inputs[ninputs].dev = st->st_dev;
        inputs[ninputs].ino = st->st_ino;
        ninputs++;
    }
}

void afile_note_input(FILE *f)
{
    struct stat st;
    if (f != NULL && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode))
        note(&st);
}

void afile_note_input_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
        note(&st);
}

int afile_open(struct afile *a, const char *path, struct diag *d)
{
    memset(a, 0, sizeof *a);
    if (strlen(path) >= sizeof a->path)
        return diag_set(d, DIAG_E_IO, path, 0, "", "path too long");
    snprintf(a->path, sizeof a->path, "%s", path);
    snprintf(a->target, sizeof a->target, "%s", path);
    if (strcmp(path, "-") == 0) {
        a->f = stdout;
        a->to_stdout = 1;
        return 0;
    }
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        char *real = realpath(path, NULL);
        if (real == NULL || strlen(real) >= sizeof a->target) {
            int e = real == NULL ? errno : ENAMETOOLONG;
            free(real);
            return diag_set(d, DIAG_E_IO, path, 0, "", "cannot write: %s",
                            e == ENOENT ? "a symbolic link to a file that does not exist"
                                        : strerror(e));
        }
        snprintf(a->target, sizeof a->target, "%s", real);
        free(real);
    }
    /* the mode open(2) would give: an existing file keeps its own (a 0600
     * report stays private), a new one gets 0666 less the umask.  mkstemp
     * makes 0600 whatever the umask.  umask() can only be read by setting
     * it; files are written on the main thread (whatif's workers only
     * simulate), so nothing sees the moment it is 0. */
    mode_t mode;
    if (stat(a->target, &st) == 0) {
        if (!S_ISREG(st.st_mode))
            return diag_set(d, DIAG_E_IO, path, 0, "",
                            "cannot write: it exists and is not a regular file (%s)",
                            S_ISDIR(st.st_mode) ? "a folder" : "a device, pipe or socket");
        for (int i = 0; guard && i < ninputs; i++)
            if (inputs[i].dev == st.st_dev && inputs[i].ino == st.st_ino)
                return diag_set(d, DIAG_E_IO, path, 0, "",
                                "cannot write: it is one of this command's inputs");
        mode = st.st_mode & 0777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    snprintf(a->tmp, sizeof a->tmp, "%s.tmp.XXXXXX", a->target);
    int fd = mkstemp(a->tmp);
    if (fd < 0) {
        int e = errno;
        a->tmp[0] = '\0';
        if (strcmp(a->target, path) != 0) /* through a link: say where it failed */
            return diag_set(d, DIAG_E_IO, path, 0, "",
                            "cannot write next to %s, the file the link names: %s", a->target,
                            strerror(e));
        return diag_set(d, DIAG_E_IO, path, 0, "", "cannot write: %s", strerror(e));
    }
    stage_add(a->tmp);
    if (fchmod(fd, mode) != 0 || (a->f = fdopen(fd, "w")) == NULL) {
        int e = errno;
        close(fd);
        unlink(a->tmp);
        stage_drop(a->tmp);
        a->tmp[0] = '\0';
        return diag_set(d, DIAG_E_IO, path, 0, "", "cannot write: %s", strerror(e));
    }
    /* large writes: a few syscalls per file instead of one per 4 KiB.  The
     * buffer must be ours: given NULL, glibc keeps its st_blksize buffer and
     * ignores the size.  Without memory we fall back to that buffer (the one
     * allocation that may fail quietly: it only makes writes faster). */
    a->buf = malloc(AFILE_BUF);
    if (a->buf != NULL)
        setvbuf(a->f, a->buf, _IOFBF, AFILE_BUF);
    return 0;
}

int afile_commit(struct afile *a, struct diag *d)
{
    if (a->to_stdout) {
        a->f = NULL;
        if (ferror(stdout) || fflush(stdout) != 0)
            return diag_set(d, DIAG_E_IO, "<stdout>", 0, "", "write failed: %s",
                            strerror(errno ? errno : EIO));
        return 0;
    }
    int bad = ferror(a->f) || fflush(a->f) != 0;
    int e = errno ? errno : EIO;
    if (fclose(a->f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    a->f = NULL;
    free(a->buf);
    a->buf = NULL;
    stage_drop(a->tmp);
    if (bad) {
        unlink(a->tmp);
        return diag_set(d, DIAG_E_IO, a->path, 0, "", "write failed: %s", strerror(e));
    }
    if (rename(a->tmp, a->target) != 0) {
        e = errno;
        unlink(a->tmp);
        return diag_set(d, DIAG_E_IO, a->path, 0, "", "cannot write: %s", strerror(e));
    }
    return 0;
}

void afile_abort(struct afile *a)
{
    if (a->to_stdout) {
        a->f = NULL; /* what was written is gone already */
        return;
    }
    if (a->f != NULL) {
        fclose(a->f);
        a->f = NULL;
    }
    free(a->buf);
    a->buf = NULL;
    if (a->tmp[0] != '\0') {
        unlink(a->tmp);
        stage_drop(a->tmp);
    }
}

int afile_make_dir(const char *dir, const char *opt, struct diag *d)
{
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return 0;
        return diag_set(d, DIAG_E_IO, dir, 0, opt, "exists and is not a folder");
    }
    if (mkdir(dir, 0755) != 0)
        return diag_set(d, DIAG_E_IO, dir, 0, opt, "cannot create the output folder: %s",
                        strerror(errno));
    return 0;
}
