/* bodytext.h: the text a writer makes of an op's body, made once.
 *
 * A run keeps one body for all the ops that did the same work the same way
 * (sim/run/opstore.h): a data-parallel training step of 5,456 ops has 26,
 * a million chained GEMMs one.  The part of an op's line that comes from
 * its body alone (its time, FLOPs, bytes and stalls per level, bound,
 * kernels, tile, energy) is then the same text for each of them, so a
 * writer formats it the first time it meets the body and copies it after.
 * The cache keeps at most BODYTEXT_MAX_BYTES; past that a body's text is
 * made each time, as before (the same bytes either way).
 */
#ifndef STRATA_BODYTEXT_H
#define STRATA_BODYTEXT_H

#include <stdint.h>

#include "strbuf.h"

#define BODYTEXT_MAX_BYTES ((size_t)64 << 20)

/* Appends body b's text to out. */
typedef void (*bodytext_fn)(struct sb *out, const void *ctx, uint32_t b);

struct bodytext {
    uint64_t *at;               /* per body: its text's offset + 1 in text, 0 not made */
    uint32_t *len;
    uint32_t nbody;
    struct sb text;
    struct sb scratch;          /* a body's text once the cache is full */
};

void bodytext_init(struct bodytext *bt, uint32_t nbody);
/* Body b's text, fmt's: *len bytes, valid until the next call. */
const char *bodytext_get(struct bodytext *bt, uint32_t b, bodytext_fn fmt, const void *ctx,
                         size_t *len);
/* The same onto out. */
void bodytext_put(struct bodytext *bt, struct sb *out, uint32_t b, bodytext_fn fmt, const void *ctx);
void bodytext_free(struct bodytext *bt);

#endif
