/* strtab.c: interned strings (see strtab.h). */
#include "strtab.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

void strtab_init(struct strtab *t)
{
    memset(t, 0, sizeof *t);
    t->cap = 1 << 16;
    t->buf = sim_xcalloc(t->cap, 1);
    t->len = 1; /* offset 0 is "" */
    t->mask = (1u << 12) - 1;
    t->slot = sim_xcalloc(t->mask + 1, sizeof *t->slot);
}

void strtab_free(struct strtab *t)
{
    free(t->buf);
    free(t->slot);
}

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void grow_slots(struct strtab *t)
{
    size_t nmask = t->mask * 2 + 1;
    uint32_t *ns = sim_xcalloc(nmask + 1, sizeof *ns);
    for (size_t i = 0; i <= t->mask; i++) {
        if (!t->slot[i])
            continue;
        size_t j = (size_t)str_hash(t->buf + t->slot[i] - 1) & nmask;
        while (ns[j])
            j = (j + 1) & nmask;
        ns[j] = t->slot[i];
    }
    free(t->slot);
    t->slot = ns;
    t->mask = nmask;
}

uint32_t strtab_intern(struct strtab *t, const char *s)
{
    if (s[0] == '\0')
        return 0;
    if (2 * (t->used + 1) > t->mask)
        grow_slots(t);
    size_t j = (size_t)str_hash(s) & t->mask;
    while (t->slot[j]) {
        if (strcmp(t->buf + t->slot[j] - 1, s) == 0)
            return t->slot[j] - 1;
        j = (j + 1) & t->mask;
    }
    size_t n = strlen(s) + 1;
    while (t->len + n > t->cap) {
        t->cap *= 2;
        t->buf = sim_xrealloc(t->buf, t->cap);
    }
    uint32_t off = (uint32_t)t->len;
    memcpy(t->buf + off, s, n);
    t->len += n;
    t->slot[j] = off + 1;
    t->used++;
    return off;
}

const char *strtab_str(const struct strtab *t, uint32_t off)
{
    return t->buf + off;
}
