/* diag.h: user-facing errors as values.
 *
 * Every loader and command reports a problem by filling a caller-owned
 * struct diag and returning -1; nothing in the library prints or exits.
 * main() prints the diagnostic as "file:line: field: message" and exits
 * non-zero.  The error kinds and their short descriptions come from one
 * X-macro so the enum and the name table cannot drift apart.
 */
#ifndef STRATA_DIAG_H
#define STRATA_DIAG_H

#include <stddef.h>
#include <stdio.h>

#define DIAG_ERRNO_MAP(X)                                   \
    X(OK, "ok")                                             \
    X(IO, "cannot read or write file")                      \
    X(PARSE, "malformed input")                             \
    X(MISSING, "required field is missing")                 \
    X(UNKNOWN_KEY, "unknown key")                           \
    X(TYPE, "wrong type")                                   \
    X(RANGE, "value out of range")                          \
    X(UNKNOWN_NAME, "unknown name")                         \
    X(DUPLICATE, "duplicate")                               \
    X(CYCLE, "dependency cycle")                            \
    X(UNSUPPORTED, "not supported")                         \
    X(USAGE, "bad command line")

enum diag_code {
#define DIAG_ENUM_(name, msg) DIAG_E_##name,
    DIAG_ERRNO_MAP(DIAG_ENUM_)
#undef DIAG_ENUM_
    DIAG_E_COUNT_
};

/* Filled by whoever detected the problem.  line is 1-based; 0 = unknown. */
struct diag {
    enum diag_code code;
    char file[512];   /* input file the problem is in ("" if none) */
    int line;         /* 1-based line in file, 0 if not applicable */
    char field[128];  /* dotted field path, e.g. "ops[3].m" or "l2.capacity_MiB" */
    char msg[512];    /* what is wrong, in plain words */
};

/* Short name of an error kind ("range", "cycle", ...). */
const char *diag_code_name(enum diag_code code);

/* Fill d (if non-NULL) and return -1, so callers can write
 *   return diag_set(d, DIAG_E_RANGE, path, line, "m", "must be > 0, got %lld", v);
 */
int diag_set(struct diag *d, enum diag_code code, const char *file, int line,
             const char *field, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Print "file:line: field: msg\n" (parts that are empty are left out). */
void diag_print(const struct diag *d, FILE *out);

#endif
