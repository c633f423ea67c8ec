/* opmap.h: PyTorch (aten) operators -> strata ops.
 *
 * Both importers (Kineto profiler traces and execution traces) describe an
 * operator by its name and, per input, a shape and an element type string
 * ("float", "c10::BFloat16", "Tensor(float)", "Scalar", ...).  opmap_map()
 * turns that into a struct op of the right kind with sizes and dtype, or
 * says why it cannot: no shapes recorded, or an operator strata has no
 * kind for.  The caller decides what to do then (a fixed-duration op).
 */
#ifndef STRATA_OPMAP_H
#define STRATA_OPMAP_H

#include <stdint.h>

#include "trace.h"

#define OPMAP_MAX_IN 8
#define OPMAP_MAX_DIMS 8

struct opmap_in {
    const char *name;                       /* "aten::addmm" */
    int ninputs;
    int ndims[OPMAP_MAX_IN];                /* -1: not a tensor / not recorded */
    int64_t dims[OPMAP_MAX_IN][OPMAP_MAX_DIMS];
    const char *types[OPMAP_MAX_IN];        /* element type strings, may be "" */
    int tensor_core;                        /* a kernel of the op ran on tensor cores (fp32 -> tf32) */
};

enum opmap_result {
    OPMAP_OK = 0,
    OPMAP_NOSHAPE,      /* a known operator without usable shapes */
    OPMAP_UNKNOWN,      /* an operator strata has no kind for */
    OPMAP_COLLECTIVE    /* a communication op (modelled as its measured time for now) */
};

/* Fill o->kind, o->dtype and the kind's fields (other fields untouched). */
enum opmap_result opmap_map(const struct opmap_in *in, struct op *o);
/* Element type string -> dtype (unknown strings give fp32). */
enum dtype opmap_dtype(const char *type);

#endif
