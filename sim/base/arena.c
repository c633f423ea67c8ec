/* arena.c: see arena.h. */
#include "arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define ARENA_FIRST ((size_t)64 << 10)
#define ARENA_MAX ((size_t)32 << 20)
#define ARENA_ALIGN alignof(max_align_t)
/* Under AddressSanitizer every block is a chunk of its own, so a write past
 * a block's end is still caught (a bump arena would hide it). */
#if defined(__SANITIZE_ADDRESS__)
#define ARENA_EACH 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_EACH 1
#endif
#endif
#ifndef ARENA_EACH
#define ARENA_EACH 0
#endif

struct arena_chunk {
    struct arena_chunk *older;
    alignas(max_align_t) unsigned char room[];
};

void *arena_calloc(struct arena *a, size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size)
        sim_oom(SIZE_MAX);
    size_t want = n * size;
    if (a == NULL)
        return sim_xcalloc(want ? want : 1, 1);
    if (!ARENA_EACH)
        want = want ? (want + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1) : ARENA_ALIGN;
    if (a->head == NULL || a->cap - a->used < want || ARENA_EACH) {
        size_t room = a->next ? a->next : ARENA_FIRST;
        a->next = room < ARENA_MAX ? 2 * room : ARENA_MAX;
        if (room < want || ARENA_EACH)
            room = want;
        struct arena_chunk *c = sim_xcalloc(1, sizeof *c + room);
        c->older = a->head;
        a->head = c;
        a->used = 0;
        a->cap = room;
    }
    void *p = a->head->room + a->used;
    a->used += want;
    return p;
}

void *arena_grow(struct arena *a, void *p, size_t old, size_t nb)
{
    if (a == NULL) {
        unsigned char *q = sim_xrealloc(p, nb);
        if (nb > old)
            memset(q + old, 0, nb - old);
        return q;
    }
    void *q = arena_calloc(a, nb, 1);
    if (old > 0)
        memcpy(q, p, old < nb ? old : nb);
    return q;
}

void arena_free(struct arena *a)
{
    for (struct arena_chunk *c = a->head, *o; c != NULL; c = o) {
        o = c->older;
        free(c);
    }
    memset(a, 0, sizeof *a);
}
