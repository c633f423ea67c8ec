/* import.h: traces other tools wrote -> strata traces.
 *
 * import_kineto(): a PyTorch profiler (Kineto) JSON trace, plain or gzip.
 * Work is counted once per GPU kernel owner: a kernel belongs to the CPU op
 * whose "External id" it carries or, in traces where kernels carry the
 * launch's correlation id instead, to the innermost CPU op on the
 * launching thread whose time span contains the cudaLaunchKernel call.
 * Parents of that op (aten::linear around aten::addmm) are never counted.
 * Each owner becomes one strata op with the shapes from its "Input Dims"
 * and "Input type" and its kernels' total time as measured_s; one that
 * cannot be mapped (no shapes, an operator strata has no kind for, a
 * collective) becomes a generic op with fixed_s = that time, and is
 * counted in the stats.  Copies (gpu_memcpy) become memcpy ops.  Ops keep
 * their GPU stream; their order is the order their first kernel started.
 *
 * import_pytorch_et(): a PyTorch execution trace (the graph Chakra
 * converts): leaf aten operators become ops, with data dependencies from
 * the tensors one op writes and another reads.
 *
 * Kineto traces are read as a stream, one event at a time.  Streams order
 * their own ops; synchronisation between streams ("cuda_sync" events:
 * stream wait event, stream, event and device synchronize) becomes
 * dependencies between the ops launched around it, at most
 * IMPORT_SYNC_DEPS_PER_OP times the number of ops in all (more are left out
 * and counted).  An op whose kernels ran on several streams takes the stream
 * of its first kernel.
 */
#ifndef STRATA_IMPORT_H
#define STRATA_IMPORT_H

#include <stdint.h>

#include "diag.h"
#include "trace.h"

#define IMPORT_SYNC_DEPS_PER_OP 16

struct import_stats {
    uint32_t cpu_ops;           /* CPU op events read */
    uint32_t kernels;           /* GPU kernel events read */
    uint32_t copies;            /* gpu_memcpy / gpu_memset events */
    uint32_t owners;            /* CPU ops that own at least one kernel */
    uint32_t mapped;            /* owners turned into shaped ops */
    uint32_t fixed_noshape;     /* owners without usable shapes -> fixed_s */
    uint32_t fixed_unknown;     /* owners strata has no kind for -> fixed_s */
    uint32_t fixed_collective;  /* communication ops -> fixed_s */
    uint32_t orphan_kernels;    /* kernels with no CPU owner -> fixed_s */
    uint32_t malformed;         /* events skipped because fields had wrong types or values
                                 * out of range (dur_skipped among them) */
    uint32_t dur_skipped;       /* Kineto events whose dur was negative or over TRACE_MAX_OP_S */
    uint32_t dur_clamped;       /* ops whose kernels summed to more than TRACE_MAX_OP_S: cut to it */
    uint32_t partial;           /* GEMMs whose main kernel is not in the trace: no measured_s */
    uint32_t syncs;             /* synchronisation events read (cuda_sync) */
    uint32_t sync_deps;         /* dependencies between streams they gave */
    uint32_t deps_dropped;      /* dependencies past a bound, left out (see above) */
    uint32_t syncs_skipped;     /* synchronisation events past the work bound, not used */
    uint32_t by_kind[OP_KIND_COUNT]; /* ops written, per kind */
};

int import_kineto(const char *path, struct trace *out, struct import_stats *st, struct diag *d);
int import_pytorch_et(const char *path, struct trace *out, struct import_stats *st,
                      struct diag *d);
/* A Chakra execution trace in JSON (chakra_jsonizer's output: protobuf
 * JSON node objects one after another; or an array of nodes, or an object
 * with a "nodes" array).  GPU compute nodes that name an aten operator
 * with input shapes and types (Chakra's PyTorch converter) map like the
 * same operator in a PyTorch trace; other compute nodes become generic ops
 * (num_ops FLOPs, tensor_size bytes; a node with neither keeps its
 * duration as fixed_s), collective and send/receive nodes generic traffic of comm_size
 * bytes, memory load/store nodes host copies; CPU and other nodes are left
 * out and their dependencies pass on to the nodes that waited for them.
 * Compute, copies and communication each take one stream of their own (so
 * compute nodes run one at a time, as in ASTRA-sim); ctrl and data
 * dependencies order everything else.  A left-out node passes on at most
 * CHAKRA_MAX_EFF (64) dependencies, the latest ones.  Unknown dependency ids, repeated
 * ids and cycles are errors with the node's line. */
int import_chakra(const char *path, struct trace *out, struct import_stats *st, struct diag *d);
/* Picks the importer from the file's contents. */
int import_pytorch(const char *path, struct trace *out, struct import_stats *st, struct diag *d);

#endif
