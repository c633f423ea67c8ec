/* uheap.h: a min-heap of uint32 indices in a caller's array (capacity is
 * the caller's), so that of the items ready at once the one earliest in a
 * file goes first.  Used by the trace loader's and the Chakra importer's
 * topological orders. */
#ifndef STRATA_UHEAP_H
#define STRATA_UHEAP_H

#include <stdint.h>

static inline void uheap_push(uint32_t *h, uint32_t *n, uint32_t v)
{
    uint32_t i = (*n)++;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (h[p] <= v)
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = v;
}

/* The smallest; *n must be > 0. */
static inline uint32_t uheap_pop(uint32_t *h, uint32_t *n)
{
    uint32_t top = h[0], v = h[--(*n)], i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1] < h[c])
            c++;
        if (v <= h[c])
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0)
        h[i] = v;
    return top;
}

#endif
