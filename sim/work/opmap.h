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

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

#define OPMAP_MAX_IN 16
#define OPMAP_MAX_DIMS 8

struct opmap_in {
    const char *name;                       /* "aten::addmm" */
    int ninputs;
    int ndims[OPMAP_MAX_IN];                /* -1: not a tensor / not recorded */
    int64_t dims[OPMAP_MAX_IN][OPMAP_MAX_DIMS];
    const char *types[OPMAP_MAX_IN];        /* element type strings, may be "" */
    const char *concrete[OPMAP_MAX_IN];     /* scalar argument values as Kineto's
                                             * "Concrete Inputs" gives them ("2",
                                             * "[2, 2]", "same"); NULL or "" if not */
    int tensor_core;                        /* a kernel of the op ran on tensor cores (fp32 -> tf32) */
};

enum opmap_result {
    OPMAP_OK = 0,
    OPMAP_NOSHAPE,      /* a known operator without usable shapes */
    OPMAP_UNKNOWN,      /* an operator strata has no kind for */
    OPMAP_COLLECTIVE    /* a communication op (modelled as its measured time for now) */
};

/* Fill o->kind, o->dtype and the kind's fields (other fields untouched).
 * Sizes no trace can hold (trace_op_sizes_ok) give OPMAP_NOSHAPE. */
enum opmap_result opmap_map(const struct opmap_in *in, struct op *o);
/* Whether the operator reads any "Concrete Inputs" (the importer keeps
 * them only for those). */
int opmap_uses_concrete(const char *name);
/* Element type string -> dtype (unknown strings give fp32). */
enum dtype opmap_dtype(const char *type);
/* The family of a GPU kernel, from the name a profiler gives it: the
 * function's own name without namespaces, template arguments or
 * parameters (a wrapper such as cutlass::Kernel<X> gives X), and without
 * the tile sizes library kernels carry ("128x128", "16x4").  So
 * "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128_32x3_nn_align1>(...)"
 * is "cutlass_80_tensorop_s1688gemm_nn_align1", and every launch of one
 * kernel template with other tiles falls in one family.  Writes at most
 * n - 1 bytes and a terminator; "" when nothing is left. */
void opmap_kernel_family(const char *name, char *out, size_t n);

#endif
