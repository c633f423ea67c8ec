/* trace.h: operator traces (format v1, schema in traces/README.md).
 *
 * trace_load() reads a JSON trace, validates every op (known kind and
 * dtype, required fields present, sizes positive, no unknown keys, deps
 * that exist, no dependency cycles, devices that exist) and returns a
 * struct trace with ops in file order plus a topological order.  Errors
 * are reported as "file:line: ops[i].field: message".
 *
 * Ownership: trace_load allocates; the caller frees with trace_free().
 * trace_write() writes a trace atomically (temp file + rename), so a failed
 * write never leaves a half-written file behind.
 *
 * trace.c's opening comment says which file implements which part.
 */
#ifndef STRATA_TRACE_H
/* An op's measured or fixed time is at most this (a million seconds, 11.6
 * days): longer is not a kernel, and the engine keeps time in 64-bit ps. */
#define TRACE_MAX_OP_S 1e6
#define TRACE_SIZE_CAP ((uint64_t)1 << 50) /* every size field (elements or bytes) */
/* A number field (flops, bytes, flops per element) is at most this. */
#define TRACE_NUM_CAP 1e30
#define STRATA_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "dtype.h"
#include "wfmt.h"

#define TRACE_ID_MAX 64
#define TRACE_NAME_MAX 96
#define TRACE_DEVICE_MAX 32
#define TRACE_KERNEL_MAX 64
#define TRACE_STR_SEEN 64   /* slots of trace.str_seen */

#define OP_KIND_MAP(X)              \
    X(GEMM, "gemm")                 \
    X(ATTENTION, "attention")       \
    X(ELEMENTWISE, "elementwise")   \
    X(SOFTMAX, "softmax")           \
    X(NORM, "norm")                 \
    X(REDUCTION, "reduction")       \
    X(EMBEDDING, "embedding")       \
    X(MEMCPY, "memcpy")             \
    X(GENERIC, "generic")           \
    X(COLLECTIVE, "collective")

enum op_kind {
#define OP_KIND_ENUM_(e, name) OP_##e,
    OP_KIND_MAP(OP_KIND_ENUM_)
#undef OP_KIND_ENUM_
    OP_KIND_COUNT
};

/* Attention implementations, as users name them (docs/attention.md).
 * flash: the chip's fused attention (FlashAttention-2 on a GPU, the array's
 * fused kernel on a TPU/NPU); naive: QK^T, softmax, PV as three kernels;
 * sdpa and vllm: what PyTorch's SDPA and vLLM's default backend run on the
 * chip of the run (models/tiled/lower.c, attn_resolve); the others are the
 * libraries of those names. */
#define ATTN_IMPL_MAP(X)                                                    \
    X(ATTN_FLASH, "flash")                                                  \
    X(ATTN_NAIVE, "naive")                                                  \
    X(ATTN_FA1, "fa1")          /* FlashAttention 1 (CUDA) */               \
    X(ATTN_FA2, "fa2")          /* FlashAttention 2 (CUDA, mma.sync) */     \
    X(ATTN_FA3, "fa3")          /* FlashAttention 3 (Hopper: wgmma, TMA) */ \
    X(ATTN_CUDNN, "cudnn")      /* cuDNN's fused attention */               \
    X(ATTN_TRITON, "triton")    /* the FlashAttention algorithm in Triton */\
    X(ATTN_XFORMERS, "xformers")/* xFormers' memory-efficient (CUTLASS) */  \
    X(ATTN_MATH, "math")        /* PyTorch standard attention, every kernel */\
    X(ATTN_SDPA, "sdpa")        /* what PyTorch's SDPA picks on the chip */ \
    X(ATTN_VLLM, "vllm")        /* what vLLM's default backend runs there */\
    X(ATTN_MEGATRON, "megatron")/* Megatron-LM's unfused attention: fused   \
                                 * scale-mask-softmax between two GEMMs */   \
    X(ATTN_MMHA, "mmha")        /* a decode kernel a CTA per query head:    \
                                 * TensorRT-LLM's masked MHA, vLLM 0.2's    \
                                 * paged attention (K/V read per query head) */\
    X(ATTN_GGML, "ggml")        /* llama.cpp's attention without flash:     \
                                 * cuBLAS products into fp16, the scores    \
                                 * converted to fp32 for its soft_max_ext    \
                                 * and back to fp16 for the second product */

enum attn_impl {
#define ATTN_IMPL_ENUM_(e, n) e,
    ATTN_IMPL_MAP(ATTN_IMPL_ENUM_)
#undef ATTN_IMPL_ENUM_
    ATTN_IMPL_COUNT
};

/* Which passes an op stands for: the forward, the backward (the gradients
 * of its inputs, and of its weights for a GEMM, given those of its
 * outputs), or both one after the other.  A GEMM's backward may also come
 * as its two products apart: dgrad (the input's gradient) and wgrad (the
 * weights'), as frameworks run them when a collective goes between. */
enum attn_pass { PASS_FWD, PASS_BWD, PASS_FWDBWD, PASS_DGRAD, PASS_WGRAD, PASS_COUNT };
/* h2d/d2h cross the host link, d2d stays in device memory, p2p goes from
 * the op's device to copy.peer over the system's links */
enum memcpy_dir { MEMCPY_H2D, MEMCPY_D2H, MEMCPY_D2D, MEMCPY_P2P };
#define TRACE_NO_DEVICE UINT32_MAX

/* Collectives (docs/collectives.md).  `bytes` is what nccl-tests calls the
 * size: the buffer of each rank for all_reduce and broadcast, the gathered
 * output for all_gather, the scattered input for reduce_scatter, and what
 * each rank sends in all for all_to_all. */
#define COLL_KIND_MAP(X)                                 \
    X(COLL_ALL_REDUCE, "all_reduce")                     \
    X(COLL_ALL_GATHER, "all_gather")                     \
    X(COLL_REDUCE_SCATTER, "reduce_scatter")             \
    X(COLL_ALL_TO_ALL, "all_to_all")                     \
    X(COLL_BROADCAST, "broadcast")                       \
    X(COLL_SEND_RECV, "send_recv")

enum coll_kind {
#define COLL_KIND_ENUM_(e, n) e,
    COLL_KIND_MAP(COLL_KIND_ENUM_)
#undef COLL_KIND_ENUM_
    COLL_KIND_COUNT
};

/* tree: all_reduce over several nodes up and down NCCL's double binary
 * trees (a chain inside each node);
 * auto: what NCCL's tuning model picks for the size (models/coll.c);
 * ring: a ring through the group in its order; direct: every rank sends to
 * every other at once (all_to_all's algorithm, and all_gather's on a
 * switch); nvls: all_reduce reduced and multicast in an NVLink switch
 * (NVLink SHARP), on a system whose switch has `nvls: true`. */
#define COLL_ALGO_MAP(X)            \
    X(COLL_AUTO, "auto")            \
    X(COLL_RING, "ring")            \
    X(COLL_DIRECT, "direct")        \
    X(COLL_NVLS, "nvls")            \
    X(COLL_TREE, "tree")

enum coll_algo {
#define COLL_ALGO_ENUM_(e, n) e,
    COLL_ALGO_MAP(COLL_ALGO_ENUM_)
#undef COLL_ALGO_ENUM_
    COLL_ALGO_COUNT
};

/* The devices of a collective, in rank order (trace.group_dev[off .. off+n)).
 * In a trace marked "symmetric", a member that has no ops at all is a
 * mirror (trace.mirror):
 * the collective runs as if it took part like the others, and moves no
 * bytes of its own (its links and memory are left to the simulated ones). */
struct trace_group {
    uint32_t off, n;
};

/* One collective as all its ranks take part in it: the op of rank r is
 * trace.coll_ops[ops_off + r].  The k-th collective a device issues on a
 * group is the k-th of every other member (NCCL's rule for a communicator). */
struct trace_coll {
    uint32_t group;
    uint32_t ops_off;           /* coll_ops[ops_off + r] = UINT32_MAX for a mirror rank r */
};

struct op {
    /* The op's strings are offsets into its trace's string arena (trace.str):
     * read them with op_id/op_name/op_kernel, set them with trace_op_set_*
     * (at most TRACE_ID_MAX-1, TRACE_NAME_MAX-1, TRACE_KERNEL_MAX-1 bytes). */
    uint32_t id_at;               /* unique id (numbers are kept as their decimal text) */
    uint32_t name_at;             /* display name; defaults to the id (then name_at == id_at) */
    uint32_t kernel_at;           /* the family of the kernel that ran it, when a profile says
                                   * ("cutlass_80_tensorop_s1688gemm_nt_align1"); 0 ("") if not known */
    enum op_kind kind;
    enum dtype dtype;             /* element type of the op's tensors */
    uint32_t device;              /* index into trace.devices */
    uint32_t stream;              /* stream number on that device (default 0) */
    enum attn_pass pass;          /* forward, backward or both (default forward) */
    uint32_t deps_off;            /* first dependency in trace.deps */
    uint32_t ndeps;               /* number of dependencies */
    int line;                     /* line of the op in the trace file */
    int transient;                /* a GEMM's B, an attention's K/V cache is not resident
                                   * on the device for this op: gathered before use
                                   * (ZeRO-3/FSDP), or another op's (a recomputed forward's
                                   * weights; a prompt piece's cache, which a later piece
                                   * of the same prompt holds whole); the working set leaves
                                   * it out, as it does a backward op's (the forward's
                                   * weights).  "transient" in a trace, GEMM and attention */
    double measured_s;            /* measured time if the trace carries one, else -1 */
    double fixed_s;               /* >= 0: the op takes exactly this long (not simulated), else -1 */
    union op_shape {               /* the kind's fields */
        struct {
            uint64_t m, n, k, batch;    /* C[b] = A[b](m x k) * B[b](k x n) */
            enum wfmt weights;          /* storage of B when quantised (WF_NONE: dtype) */
            int sparse;                 /* B is 2:4 structured-sparse (compressed: half its
                                         * values plus 2-bit indices); the FLOPs stay the
                                         * dense product's, as data sheets count them */
        } gemm;
        struct {
            uint64_t batch, heads, kv_heads, q_len, kv_len, head_dim;
            int causal;
            enum attn_impl impl;
            enum dtype kv_dtype;        /* K/V cache element type (default: dtype) */
            uint32_t page_size;         /* tokens per page of a paged K/V cache (vLLM's block
                                         * size); 0 = one contiguous cache per sequence */
            double dropout;             /* training: dropout on the attention probabilities
                                         * (0 = none): a mask drawn per score, by a kernel of
                                         * its own where the scores are in memory, inside the
                                         * fused kernel otherwise */
        } attn;
        struct {
            uint64_t elements;          /* elements per tensor */
            uint32_t inputs, outputs;   /* tensors read / written */
            double flops_per_element;
            uint32_t vector_bytes;      /* bytes a thread loads per access (16: 128-bit vectors) */
            double dropout;             /* the output goes through dropout (0 = none): a 1-byte
                                         * mask per element written forward, read backward */
        } ew;
        struct { uint64_t rows, cols; } rc;                  /* softmax, norm, reduction */
        struct { uint64_t tokens, dim; } emb;
        struct {
            uint64_t bytes;
            enum memcpy_dir dir;
            uint32_t peer;              /* p2p: the device written (dst_device); else TRACE_NO_DEVICE */
            uint32_t src;               /* src_device as given (TRACE_NO_DEVICE if not); the op runs on it */
        } copy;
        struct { double flops, bytes; } gen;
        struct {
            uint64_t bytes;             /* nccl-tests' size (see COLL_KIND_MAP) */
            enum coll_kind what;
            enum coll_algo algo;
            uint32_t group;             /* index into trace.groups */
            uint32_t root;              /* broadcast: the trace device that sends (default: rank 0) */
            uint32_t inst;              /* index into trace.colls */
        } coll;
    } u;
};

struct trace {
    char path[512];
    uint32_t nops;
    struct op *ops;               /* in file order */
    uint32_t ndeps;
    uint32_t *deps;               /* op indices; op i waits for deps[ops[i].deps_off .. +ndeps) */
    uint32_t *topo;               /* a topological order of op indices (nops entries) */
    uint32_t ndevices;
    char (*devices)[TRACE_DEVICE_MAX]; /* device names; default one device "gpu0" */
    char name[TRACE_NAME_MAX];    /* the trace's optional "name", "" if none */
    double tokens;                /* meta.tokens: tokens one replay produces (0 = not given) */
    uint32_t ngroups;             /* distinct device groups of the collectives */
    struct trace_group *groups;
    uint32_t *group_dev;          /* trace device indices, groups[g].off .. +n */
    int symmetric;                /* "symmetric": true: group members without ops are mirrors */
    uint8_t *mirror;              /* per device: 1 = a group member with no ops of its own,
                                   * taken to do what the simulated members do at the same
                                   * time (symmetric ranks simulated once); NULL = none */
    uint32_t nmirrors;
    uint32_t ncolls;              /* collectives (each a set of ops, one per rank) */
    struct trace_coll *colls;
    uint32_t *coll_ops;           /* op indices, ncolls x their group's size */
    /* The ops' strings (trace_str.c): NUL-terminated, at the offsets struct op
     * holds; offset 0 is "".  NULL until the first string: every offset reads "". */
    char *str;
    size_t str_len, str_cap;      /* bytes used / allocated */
    uint32_t str_seen[TRACE_STR_SEEN]; /* offsets of names and kernels met lately, by hash
                                   * (0 = none): a repeated one is stored once */
};

/* An op's strings (never NULL; "" when unset). */
static inline const char *trace_str(const struct trace *t, uint32_t at)
{
    return t->str != NULL ? t->str + at : "";
}
static inline const char *op_id(const struct trace *t, const struct op *o)
{
    return trace_str(t, o->id_at);
}
static inline const char *op_name(const struct trace *t, const struct op *o)
{
    return trace_str(t, o->name_at);
}
static inline const char *op_kernel(const struct trace *t, const struct op *o)
{
    return trace_str(t, o->kernel_at);
}
/* Set op i's id, name or kernel to s, cut to TRACE_ID_MAX-1, TRACE_NAME_MAX-1
 * or TRACE_KERNEL_MAX-1 bytes (as a char[TRACE_*_MAX] and snprintf cut
 * them).  s may be one of t's own strings.  A name equal to the op's id
 * shares its storage; names and kernels met lately are stored once.  The
 * arena grows by doubling: set strings while a trace is built, not while it
 * runs. */
void trace_op_set_id(struct trace *t, uint32_t i, const char *s);
void trace_op_set_name(struct trace *t, uint32_t i, const char *s);
void trace_op_set_kernel(struct trace *t, uint32_t i, const char *s);

const char *op_kind_name(enum op_kind k);
const char *op_attn_impl_name(enum attn_impl i);
const char *coll_kind_name(enum coll_kind k);
const char *coll_algo_name(enum coll_algo a);
/* The rank of trace device dev in group g, or -1. */
int trace_group_rank(const struct trace *t, uint32_t g, uint32_t dev);
int op_kind_from_name(const char *name, enum op_kind *out);
/* An attention implementation by its name, any case ("flash", "megatron", ...).
 * 0, or -1 if unknown. */
int op_attn_impl_from_name(const char *name, enum attn_impl *out);

/* Load and validate.  Returns 0, or -1 with *d filled; *out untouched on error. */
int trace_load(const char *path, struct trace *out, struct diag *d);
/* The same for a trace's text in memory; name stands for the file in
 * diagnostics and becomes out->path. */
int trace_load_text(const char *text, const char *name, struct trace *out, struct diag *d);
void trace_free(struct trace *t);

/* Bytes device `dev` must hold for one replay: the weights of every GEMM
 * (its B operand, at its storage format, each GEMM's own) and the K/V of
 * every attention.  Activations are left out (they are small next to
 * these and reused between ops). */
double trace_working_set(const struct trace *t, uint32_t dev, double *weight_bytes);
/* The same for every device in one pass: ws[d] and weight_bytes[d] (arrays
 * of t->ndevices). */
void trace_working_sets(const struct trace *t, double *ws, double *weight_bytes);

/* Number a built trace's collectives: with every collective op's
 * u.coll.group set and t->groups / t->group_dev filled, fills t->colls,
 * t->coll_ops and each op's u.coll.inst by the pairing rule (the k-th op a
 * device issues on a group is its part of the group's k-th collective).
 * The trace must be consistent (a builder's, not a file's: trace_load
 * checks a file's). */
void trace_index_colls(struct trace *t);

/* A trace of one collective over n devices named rank0 .. rank<n-1>, one
 * op per rank, the group all of them in order (the run maps them onto a
 * system's first n devices).  Sizes are not checked: trace_op_sizes_ok. */
void trace_one_collective(struct trace *t, enum coll_kind kind, enum coll_algo algo,
                          enum dtype dt, uint32_t n, uint64_t bytes);

/* Write t as trace format v1 to path atomically.  Returns 0 or -1 with *d. */
int trace_write(const struct trace *t, const char *path, struct diag *d);

/* Every tensor an op reads or writes holds at most 2^50 elements and its
 * work is finite: 0, or -1 with the offending field and a message. */
int trace_op_sizes_ok(const struct op *op, const char **field, char *msg, size_t n);

#endif
