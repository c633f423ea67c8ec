/* check.c: see check.h. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>

#include "membudget.h"

void sim_check_fail(const char *file, int line, const char *expr, const char *detail)
{
    fprintf(stderr, "strata: internal error at %s:%d: check failed: %s %s\n",
            file, line, expr, detail);
    abort();
}

void sim_oom(size_t bytes)
{
    fprintf(stderr, "strata: out of memory allocating %zu bytes\n", bytes);
    abort();
}

/* A large request is held against the memory budget before it is made. */
static void budget(size_t n)
{
    if (n >= ((size_t)1 << 20) && membudget_exceeded(n))
        membudget_fail(n);
}

void *sim_xrealloc(void *p, size_t n)
{
    budget(n);
    void *q = realloc(p, n ? n : 1);
    if (q == NULL)
        sim_oom(n);
    return q;
}

void *sim_xcalloc(size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size)
        sim_oom(SIZE_MAX);
    budget(n * size);
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p == NULL)
        sim_oom(n * size);
    return p;
}
