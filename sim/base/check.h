/* check.h: always-on assertions for bugs (not user errors), printing the
 * values involved, and the out-of-memory abort.  User errors never go
 * through here: they are struct diag values (diag.h). */
#ifndef STRATA_CHECK_H
#define STRATA_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

_Noreturn void sim_check_fail(const char *file, int line, const char *expr,
                              const char *detail);
_Noreturn void sim_oom(size_t bytes);

#define SIM_CHECK(cond)                                                   \
    do {                                                                  \
        if (!(cond))                                                      \
            sim_check_fail(__FILE__, __LINE__, #cond, "");                \
    } while (0)

#define SIM_CHECK_LE_U64(a, b)                                            \
    do {                                                                  \
        unsigned long long a_ = (a), b_ = (b);                            \
        if (!(a_ <= b_)) {                                                \
            char d_[96];                                                  \
            snprintf(d_, sizeof d_, "%llu > %llu", a_, b_);               \
            sim_check_fail(__FILE__, __LINE__, #a " <= " #b, d_);         \
        }                                                                 \
    } while (0)

/* malloc/calloc that abort with the size on failure (setup paths only).
 * A request of 1 MiB or more that would pass the memory budget stops the
 * process with membudget_fail (membudget.h). */
void *sim_xcalloc(size_t n, size_t size);
void *sim_xrealloc(void *p, size_t n);

#endif
