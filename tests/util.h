/* util.h: helpers shared by the test programs (files, temporary
 * directories, loading a config, running the strata binary).  Header-only;
 * every function is static inline so a test that does not use one gets no
 * warning. */
#ifndef STRATA_TEST_UTIL_H
#define STRATA_TEST_UTIL_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cfg.h"
#include "llm.h"
#include "run.h"
#include "system.h"
#include "trace.h"

/* Write n bytes to path; aborts if the file cannot be written. */
static inline void tu_write_bytes(const char *path, const char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        perror(path);
        abort();
    }
    if ((n > 0 && fwrite(data, 1, n, f) != n) || fclose(f) != 0) {
        perror(path);
        abort();
    }
}

/* Write a NUL-terminated text to path. */
static inline void tu_write_file(const char *path, const char *text)
{
    tu_write_bytes(path, text, strlen(text));
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

/* 1 if path exists. */
static inline int tu_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Make a fresh directory /tmp/<tag>-XXXXXX into buf; 0, or -1 (reported). */
static inline int tu_mkdtemp(char *buf, size_t n, const char *tag)
{
    snprintf(buf, n, "/tmp/%s-XXXXXX", tag);
    if (mkdtemp(buf) == NULL) {
        perror("mkdtemp");
        return -1;
    }
    return 0;
}

/* Entries in a directory other than . and .., or -1 if it cannot be read. */
static inline int tu_count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

/* Remove a directory and everything under it. */
static inline void tu_rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char p[512];
            if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= (int)sizeof p)
                continue;
            struct stat st;
            if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
                tu_rmtree(p);
            else
                unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* A chip config through hw_load, sets (may be NULL) applied: 0 with *h, or
 * -1 with *d (a system file is an error; h NULL is hw_load's usage error). */
static inline int tu_load_chip(const char *path, const struct cfg_sets *sets, struct hw_config *h,
                               struct diag *d)
{
    struct hw_system s;
    int rc = hw_load(path, sets, h != NULL ? &s : NULL, NULL, d);
    if (rc == 0)
        *h = s.chip;
    return rc;
}

/* A hardware file through hw_load: 0 for a system file, 1 for a chip
 * config (only s->chip filled), -1 with *d. */
static inline int tu_load_hw(const char *path, const struct cfg_sets *sets, struct hw_system *s,
                             struct diag *d)
{
    enum hw_kind kind;
    if (hw_load(path, sets, s, &kind, d) != 0)
        return -1;
    return kind == HW_CHIP ? 1 : 0;
}

/* A trace's text written to dir/t.json and loaded: 0, or the loader's rc
 * with its error as file:line: field: message in msg. */
static inline int tu_trace_text(const char *dir, const char *text, struct trace *t, char *msg,
                                size_t n)
{
    char path[300];
    snprintf(path, sizeof path, "%s/t.json", dir);
    tu_write_file(path, text);
    struct diag d;
    memset(&d, 0, sizeof d);
    int rc = trace_load(path, t, &d);
    if (rc != 0 && msg != NULL)
        snprintf(msg, n, "%s:%d: %s: %s", d.file, d.line, d.field, d.msg);
    return rc;
}

/* The same for a trace of these devices and ops (JSON list bodies). */
static inline int tu_trace_ops(const char *dir, const char *devices, const char *ops,
                               struct trace *t, char *msg, size_t n)
{
    size_t len = strlen(devices) + strlen(ops) + 128;
    char *text = malloc(len);
    if (text == NULL)
        abort();
    snprintf(text, len, "{\"strata_trace\": 1, \"devices\": [%s], \"ops\": [\n%s]}", devices, ops);
    int rc = tu_trace_text(dir, text, t, msg, n);
    free(text);
    return rc;
}

/* Runs trace t on a system file, or on a chip config's implied system for
 * the trace's devices: 0, or the error as file:line: field: message in msg. */
static inline int tu_run_on(const char *sys_path, const struct trace *t, struct run_result *r,
                            char *msg, size_t n)
{
    struct hw_system sys;
    struct diag d;
    memset(&d, 0, sizeof d);
    int rc = tu_load_hw(sys_path, NULL, &sys, &d);
    if (rc == 1) {
        struct hw_config c = sys.chip;
        sys_from_chip(&c, t->ndevices, (const char (*)[32])t->devices, &sys);
        rc = 0;
    }
    if (rc == 0) {
        rc = run_system_opts(&sys, t, NULL, r, &d);
        sys_free(&sys);
    }
    if (rc != 0 && msg != NULL)
        snprintf(msg, n, "%s:%d: %s: %s", d.file, d.line, d.field, d.msg);
    return rc;
}

/* Load a hardware config, printing the diagnostic if it fails. */
static inline int tu_load_cfg(const char *path, struct hw_config *h)
{
    struct diag d;
    memset(&d, 0, sizeof d);
    int rc = tu_load_chip(path, NULL, h, &d);
    if (rc != 0)
        diag_print(&d, stderr);
    return rc;
}

/* Load a trace; 0, or -1 with the error printed. */
static inline int tu_load_trace(const char *path, struct trace *t)
{
    struct diag d;
    memset(&d, 0, sizeof d);
    int rc = trace_load(path, t, &d);
    if (rc != 0)
        diag_print(&d, stderr);
    return rc;
}

/* Load a model's config.json; 0, or -1 with the error printed. */
static inline int tu_load_llm(const char *path, struct llm_config *c)
{
    struct diag d;
    memset(&d, 0, sizeof d);
    int rc = llm_config_load(path, c, &d);
    if (rc != 0)
        diag_print(&d, stderr);
    return rc;
}

/* Run a shell command; its exit status, or -1 if it did not exit normally. */
/* 1 if s ends with suffix. */
static inline int tu_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The index of the op with this id in t, or -1. */
static inline int tu_find_op(const struct trace *t, const char *id)
{
    for (uint32_t i = 0; i < t->nops; i++)
        if (strcmp(op_id(t, &t->ops[i]), id) == 0)
            return (int)i;
    return -1;
}

/* 1 if op waits for op `on` directly (either may be -1: 0). */
static inline int tu_depends_on(const struct trace *t, int op, int on)
{
    if (op < 0 || on < 0)
        return 0;
    const struct op *o = &t->ops[op];
    for (uint32_t k = 0; k < o->ndeps; k++)
        if ((int)t->deps[o->deps_off + k] == on)
            return 1;
    return 0;
}

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

#ifdef STRATA_BINARY
/* Runs `strata args` (args as the shell reads them) with its stdout and
 * stderr through files in dir; returns the exit status (-1: it did not
 * exit normally), the texts in *out and *err (caller frees). */
static inline int tu_run_strata(const char *dir, const char *args, char **out, char **err)
{
    char cmd[4096], op[256], ep[256];
    snprintf(op, sizeof op, "%s/stdout.txt", dir);
    snprintf(ep, sizeof ep, "%s/stderr.txt", dir);
    snprintf(cmd, sizeof cmd, "'%s' %s >'%s' 2>'%s'", STRATA_BINARY, args, op, ep);
    int st = system(cmd);
    *out = tu_read_file(op, NULL);
    *err = tu_read_file(ep, NULL);
    unlink(op);
    unlink(ep);
    return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}
#endif

/* The commands README.md shows between <!-- readme-commands --> and
 * <!-- /readme-commands --> (lines starting with `strata`, a trailing
 * backslash continuing one), without the leading "strata ": how many,
 * at most max, into cmds. */
static inline unsigned tu_readme_commands(const char *readme, char (*cmds)[1024], unsigned max)
{
    char *text = tu_read_file(readme, NULL);
    char *b = text ? strstr(text, "<!-- readme-commands -->") : NULL;
    char *e = b ? strstr(b, "<!-- /readme-commands -->") : NULL;
    unsigned n = 0;
    if (e == NULL) {
        free(text);
        return 0;
    }
    *e = '\0';
    int cont = 0;
    for (char *line = strchr(b, '\n'); line != NULL && *line != '\0';) {
        line++;
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char one[1024];
        snprintf(one, sizeof one, "%.*s", (int)len, line);
        char *s = one;
        while (*s == ' ')
            s++;
        size_t l = strlen(s);
        int more = l > 0 && s[l - 1] == '\\';
        if (more)
            s[--l] = '\0';
        if (cont && n > 0) {
            size_t u = strlen(cmds[n - 1]);
            snprintf(cmds[n - 1] + u, 1024 - u, " %s", s);
        } else if (strncmp(s, "strata ", 7) == 0 && n < max) {
            snprintf(cmds[n++], 1024, "%s", s + 7);
        }
        cont = more;
        line = nl;
    }
    free(text);
    return n;
}

#endif
