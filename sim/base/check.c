/* check.c: see check.h. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>

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

void *sim_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (q == NULL)
        sim_oom(n);
    return q;
}

void *sim_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p == NULL)
        sim_oom(n * size);
    return p;
}
