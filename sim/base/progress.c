/* progress.c: the progress line on stderr (progress.h). */
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void prog_init(struct prog *p, int want, const char *what)
{
    const char *env = getenv("STRATA_PROGRESS");
    int forced = env != NULL && strcmp(env, "1") == 0;
    int off = env != NULL && strcmp(env, "0") == 0;
    p->on = want && !off && (forced || isatty(2));
    p->t0_s = mono_s();
    p->after_s = forced ? 0 : PROG_AFTER_S;
    p->last_s = -1;
    p->width = 0;
    p->what = what;
}

/* v with a comma every three digits: 1,000,000 */
static void grouped(char *out, size_t n, uint64_t v)
{
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
    size_t j = 0;
    for (int i = 0; i < len && j + 2 < n; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            out[j++] = ',';
        out[j++] = digits[i];
    }
    out[j] = '\0';
}

void prog_show(struct prog *p, uint64_t done, uint64_t total, const char *unit, int eta)
{
    if (p == NULL || !p->on)
        return;
    double now = mono_s(), el = now - p->t0_s;
    if (el < p->after_s || (p->last_s >= 0 && now - p->last_s < PROG_EVERY_S))
        return;
    p->last_s = now;
    char a[32], b[32], line[200];
    grouped(a, sizeof a, done);
    grouped(b, sizeof b, total);
    int pct = total > 0 ? (int)((double)done / (double)total * 100.0) : 0;
    int len = snprintf(line, sizeof line, "  %s: %s of %s %s (%d%%), %.1f s", p->what, a, b, unit,
                       pct, el);
    if (eta && done > 0 && done < total && len > 0 && (size_t)len < sizeof line)
        len += snprintf(line + len, sizeof line - (size_t)len, ", ~%.0f s left",
                        el / (double)done * (double)(total - done));
    if (len < 0)
        return;
    if (len > (int)sizeof line - 1)
        len = (int)sizeof line - 1;
    /* pad over a longer line drawn before */
    fprintf(stderr, "\r%s%*s", line, p->width > len ? p->width - len : 0, "");
    fflush(stderr);
    if (len > p->width)
        p->width = len;
}

void prog_clear(struct prog *p)
{
    if (p == NULL || p->width == 0)
        return;
    fprintf(stderr, "\r%*s\r", p->width, "");
    fflush(stderr);
    p->width = 0;
    p->last_s = -1;
}
