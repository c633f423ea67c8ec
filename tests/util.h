/* util.h: helpers shared by the test programs (files, temporary
 * directories, running the strata binary).  Header-only; every function is
 * static inline so a test that does not use one gets no warning. */
#ifndef STRATA_TEST_UTIL_H
#define STRATA_TEST_UTIL_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Write text to path; aborts if the file cannot be written. */
static inline void tu_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        perror(path);
        abort();
    }
    fputs(text, f);
    if (fclose(f) != 0) {
        perror(path);
        abort();
    }
}

/* Whole file as a NUL-terminated string (caller frees), or NULL.  *len (if
 * len is not NULL) gets the byte count. */
static inline char *tu_read_file(const char *path, size_t *len)
{
    if (len != NULL)
        *len = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf != NULL) {
        if (n == cap) {
            cap *= 2;
            char *nb = realloc(buf, cap + 1);
            if (nb == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (buf != NULL && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf == NULL)
        return NULL;
    buf[n] = '\0';
    if (len != NULL)
        *len = n;
    return buf;
}

/* Remove a flat directory and the files in it. */
static inline void tu_rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char p[512];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* Run a shell command; its exit status, or -1 if it did not exit normally. */
static inline int tu_sh(const char *cmd)
{
    int st = system(cmd);
    if (st == -1 || !WIFEXITED(st)) {
        fprintf(stderr, "command did not exit normally: %s\n", cmd);
        return -1;
    }
    if (WEXITSTATUS(st) != 0)
        fprintf(stderr, "exit status %d: %s\n", WEXITSTATUS(st), cmd);
    return WEXITSTATUS(st);
}

#endif
