/* strtab.h: interned strings: each distinct string stored once in one
 * buffer and named by its offset, so the Kineto reader keeps a trace's
 * names (millions of events, a few thousand names) in little memory.
 *
 * Ownership: strtab_init allocates, strtab_free frees; a string from
 * strtab_str lives until then (the buffer may move on strtab_intern:
 * keep offsets, not pointers).
 */
#ifndef STRATA_STRTAB_H
#define STRATA_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct strtab {                 /* interned strings */
    char *buf;
    size_t len, cap;
    uint32_t *slot;             /* offset + 1 into buf, 0 = empty */
    size_t mask, used;
};

void strtab_init(struct strtab *t);
void strtab_free(struct strtab *t);
/* Offset of s in the table (adding it once); "" is offset 0. */
uint32_t strtab_intern(struct strtab *t, const char *s);
const char *strtab_str(const struct strtab *t, uint32_t off);

#endif
