/* arena.h: memory a run hands out and takes back all at once.
 *
 * A device's state (its servers, kernel pool, queues) and a flow server's
 * storage live as long as the run, so they come from the run's arena: one
 * bump allocation each, no free one by one, and big chunks that the
 * kernel can back with huge pages (check.c).  A 65,536-device run made
 * about 26 small allocations a device and faulted its 0.5 GB in 4 KiB
 * pages.  Chunks start at 64 KiB and double up to 32 MiB, so a one-chip
 * run stays small.  Memory comes zeroed.  A zeroed struct arena is empty.
 */
#ifndef STRATA_ARENA_H
#define STRATA_ARENA_H

#include <stddef.h>

struct arena_chunk;

struct arena {
    struct arena_chunk *head;   /* the chunk allocations come from, then the older ones */
    size_t used, cap;           /* bytes of head's room used / it has */
    size_t next;                /* room of the next chunk */
};

/* n x size zeroed bytes, aligned for any type; out of memory aborts
 * (sim_oom).  a NULL: calloc, the caller frees it. */
void *arena_calloc(struct arena *a, size_t n, size_t size);
/* p (old bytes, from arena_calloc on a; NULL with old 0) grown to nb bytes:
 * a new block with p's bytes copied, the rest zero (p's room is not reused
 * until arena_free).  a NULL: realloc, the new bytes zeroed. */
void *arena_grow(struct arena *a, void *p, size_t old, size_t nb);
/* Every block of a, at once; a is empty again. */
void arena_free(struct arena *a);

#endif
