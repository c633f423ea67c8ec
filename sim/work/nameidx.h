/* nameidx.h: a hash index of names stored in an array (the trace loader's
 * op ids and device names), so a lookup does not scan the array.
 *
 * Names live at base + i * stride, or (nameidx_init_at) at *arena plus the
 * uint32_t offset at base + i * stride, read at each lookup so the arena may
 * grow; the index holds entry numbers only.
 * Ownership: nameidx_init allocates, nameidx_free frees; the names stay the
 * caller's.
 */
#ifndef STRATA_NAMEIDX_H
#define STRATA_NAMEIDX_H

#include <stddef.h>
#include <stdint.h>

/* Slots hold i + 1 (0 = empty) and, beside it, the top 32 bits of the
 * name's hash: a probe past another name compares the tags, not the names
 * (two cache misses each, into the op array and its strings, were a tenth
 * of loading a million ops). */
struct nameidx_slot {
    uint32_t k1, tag;
};

struct nameidx {
    struct nameidx_slot *slot;
    size_t mask;
    const char *base;
    size_t stride;
    char *const *arena;           /* NULL: the names are at base + i * stride */
};

/* An index for up to n entries of the array at base. */
/* The index's hash of the n bytes at s (FNV-1a, folded): also the trace's
 * string arena's (trace_str.c). */
uint64_t nameidx_hash(const char *s, size_t n);
void nameidx_init(struct nameidx *x, size_t n, const char *base, size_t stride);
/* The same for names at offsets: entry i is *arena + at[i * stride bytes]. */
void nameidx_init_at(struct nameidx *x, size_t n, char *const *arena, const uint32_t *at,
                     size_t stride);
void nameidx_free(struct nameidx *x);
/* Index of name, or -1. */
int64_t nameidx_find(const struct nameidx *x, const char *name);
/* Add entry k; returns -1, or the index of an entry with the same name. */
int64_t nameidx_add(struct nameidx *x, uint32_t k);

#endif
