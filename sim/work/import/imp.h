/* imp.h: what the importers (Kineto, execution traces, Chakra) share: an
 * int64 -> uint32 hash map, numbers from JSON fields, reading an
 * operator's input shapes and types, and building a strata trace op by op.  Private to sim/work (the public API
 * is import.h).
 *
 * Ownership: imp_map_init allocates, imp_map_free frees.  imp_build_init
 * allocates the trace's arrays in *t; the trace owns them (trace_free).
 */
#ifndef STRATA_IMP_H
#define STRATA_IMP_H

#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "jsondoc.h"
#include "opmap.h"
#include "trace.h"

/* Grows arr (n used of cap) to hold one more element: doubles, from 1024;
 * out of memory aborts (sim_xrealloc). */
#define IMP_GROW(arr, n, cap)                                              \
    do {                                                                   \
        if ((n) == (cap)) {                                                \
            (cap) = (cap) ? (cap) * 2 : 1024;                              \
            (arr) = sim_xrealloc((arr), (size_t)(cap) * sizeof *(arr));    \
        }                                                                  \
    } while (0)

/* ------------------------------------------------------------ JSON fields */

/* Member k of o as a finite number: 0, or -1 when absent or not one. */
int imp_get_num(const cJSON *o, const char *k, double *v);
/* The same as an integer (truncated; |value| < 9.2e18). */
int imp_get_i64(const cJSON *o, const char *k, int64_t *v);

/* ------------------------------------------------------------ small map */

/* Open addressing; INT64_MIN marks a free slot (it cannot be a key). */
struct imp_map {
    int64_t *key;
    uint32_t *val;
    size_t mask;
};

/* A map for about n keys. */
void imp_map_init(struct imp_map *m, size_t n);
void imp_map_free(struct imp_map *m);
/* k's slot: where it is, or the free one where it would go. */
size_t imp_map_slot(const struct imp_map *m, int64_t k);
/* Adds k -> v; a key already there keeps its value (first one wins). */
void imp_map_put(struct imp_map *m, int64_t k, uint32_t v);
/* 1 and *v when k is there, else 0. */
int imp_map_get(const struct imp_map *m, int64_t k, uint32_t *v);

/* ------------------------------------------------------------ inputs */

/* shapes and types from a Kineto "Input Dims"/"Input type" pair or an ET
 * "input_shapes"/"input_types" pair (concrete: "Concrete Inputs", or NULL) */
void imp_fill_inputs(struct opmap_in *in, const cJSON *dims, const cJSON *types,
                     const cJSON *concrete);

/* ------------------------------------------------------------ trace building */

struct imp_builder {
    struct trace *t;
    uint32_t cap, dcap, ndev;
    int64_t dev_ids[64];
    struct { int64_t dev, stream; } streams[256];
    uint32_t nstreams;
};

/* Empties *t and gives it room for cap ops (it grows). */
void imp_build_init(struct imp_builder *b, struct trace *t, uint32_t cap);
/* The trace device of device id dev ("gpu<dev>"; the 64th and later share the last). */
uint32_t imp_build_device(struct imp_builder *b, int64_t dev);
/* Stream number of (dev, stream): numbered per device in order of appearance. */
uint32_t imp_build_stream(struct imp_builder *b, int64_t dev, int64_t stream);
/* Appends an op named name (no kind yet, no measured or fixed time). */
struct op *imp_build_add(struct imp_builder *b, const char *name);
/* The op added last depends on op `on`. */
void imp_build_dep(struct imp_builder *b, uint32_t on);
/* Makes o a generic op of fixed (and measured) length seconds. */
void imp_build_fixed(struct op *o, double seconds);

#endif
