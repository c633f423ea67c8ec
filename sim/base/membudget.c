/* membudget.c: see membudget.h. */
#include "membudget.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "afile.h"
#include "units.h"

static _Atomic uint64_t limit_bytes;   /* 0: none */

void membudget_set_bytes(uint64_t bytes)
{
    atomic_store(&limit_bytes, bytes);
}

/* The limit in bytes; 0 = no budget. */
static uint64_t membudget_limit(void)
{
    return atomic_load(&limit_bytes);
}

int membudget_parse(const char *text, uint64_t *bytes)
{
    struct qty q;
    if (text == NULL || qty_parse(text, &q) != 0 || (q.kind != QK_BYTES && q.kind != QK_NONE))
        return -1;
    if (!(q.si >= 1048576.0) || q.si > 1e18)
        return -1;
    *bytes = (uint64_t)q.si;
    return 0;
}

int membudget_from_env(void)
{
    const char *env = getenv("STRATA_MAX_MEMORY");
    if (env != NULL && env[0] != '\0') {
        uint64_t b;
        if (membudget_parse(env, &b) != 0) {
            fprintf(stderr, "strata: STRATA_MAX_MEMORY: expected a size of at least 1MiB "
                            "(4GiB, 512MiB, 8GB), got '%s'\n", env);
            return -1;
        }
        membudget_set_bytes(b);
        return 0;
    }
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psize > 0)
        membudget_set_bytes((uint64_t)((double)pages * (double)psize * 0.9));
    return 0;
}

uint64_t membudget_peak(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (uint64_t)ru.ru_maxrss * 1024u; /* Linux: KiB */
}

int membudget_exceeded(size_t more)
{
    uint64_t lim = membudget_limit();
    if (lim == 0)
        return 0;
    uint64_t peak = membudget_peak();
    return more > lim || peak > lim - more;
}

static void fmt_size(char *buf, size_t n, double b)
{
    if (b >= 1073741824.0)
        snprintf(buf, n, "%.3g GiB", b / 1073741824.0);
    else
        snprintf(buf, n, "%.3g MiB", b / 1048576.0);
}

int membudget_check(size_t more, const char *file, struct diag *d)
{
    if (!membudget_exceeded(more))
        return 0;
    char lim[32], peak[32];
    fmt_size(lim, sizeof lim, (double)membudget_limit());
    fmt_size(peak, sizeof peak, (double)membudget_peak());
    return diag_set(d, DIAG_E_RANGE, file, 0, "memory",
                    "the run needed more than %s, its memory budget (peak resident %s so far); "
                    MEMBUDGET_HOW, lim, peak);
}

static pthread_mutex_t cleanup_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    void (*fn)(void *);
    void *arg;
} cleanups[16];
static unsigned ncleanups;

void membudget_cleanup_push(void (*fn)(void *arg), void *arg)
{
    pthread_mutex_lock(&cleanup_lock);
    if (ncleanups < sizeof cleanups / sizeof cleanups[0]) {
        cleanups[ncleanups].fn = fn;
        cleanups[ncleanups].arg = arg;
    }
    ncleanups++;
    pthread_mutex_unlock(&cleanup_lock);
}

void membudget_cleanup_pop(void)
{
    pthread_mutex_lock(&cleanup_lock);
    if (ncleanups > 0)
        ncleanups--;
    pthread_mutex_unlock(&cleanup_lock);
}

_Noreturn void membudget_fail(size_t more)
{
    static atomic_flag once = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&once))
        for (;;)
            pause(); /* another thread is failing: it exits the process */
    char lim[32], peak[32], ask[32];
    fmt_size(lim, sizeof lim, (double)membudget_limit());
    fmt_size(peak, sizeof peak, (double)membudget_peak());
    fmt_size(ask, sizeof ask, (double)more);
    if (more >= 1048576)
        fprintf(stderr, "strata: memory: the command needed more than %s, its memory budget "
                        "(peak resident %s, asking for %s more); nothing was written; " MEMBUDGET_HOW "\n",
                lim, peak, ask);
    else
        fprintf(stderr, "strata: memory: the command needed more than %s, its memory budget "
                        "(peak resident %s); nothing was written; " MEMBUDGET_HOW "\n",
                lim, peak);
    afile_abort_staged();
    pthread_mutex_lock(&cleanup_lock);
    unsigned n = ncleanups < 16 ? ncleanups : 16;
    pthread_mutex_unlock(&cleanup_lock);
    while (n > 0) {
        n--;
        cleanups[n].fn(cleanups[n].arg);
    }
    _exit(1); /* not exit(): atexit handlers and stdio of other threads may hold locks */
}

void *membudget_json_malloc(size_t n)
{
    static _Thread_local unsigned calls;   /* per thread: no locked add per allocation */
    if ((calls++ & 4095u) == 0 && membudget_exceeded(n))
        membudget_fail(n);
    return malloc(n);
}
