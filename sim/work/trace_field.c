/* trace_field.c: trace format v1's field table, keys and value names (see
 * trace_field.h). */
#include "trace_field.h"

#include "check.h"

#define U_(member) offsetof(struct op, u.member)
/* In the order they are written; kv_heads' default 0 means "= heads". */
static const struct trace_field op_fields[] = {
    {OP_GEMM, "m", TF_SIZE, 1, U_(gemm.m), 0},
    {OP_GEMM, "n", TF_SIZE, 1, U_(gemm.n), 0},
    {OP_GEMM, "k", TF_SIZE, 1, U_(gemm.k), 0},
    {OP_GEMM, "batch", TF_SIZE, 0, U_(gemm.batch), 1},
    {OP_GEMM, "weights", TF_WFMT, 0, U_(gemm.weights), WF_NONE},
    {OP_GEMM, "sparse", TF_BOOL, 0, U_(gemm.sparse), 0},
    {OP_GEMM, "transient", TF_BOOL, 0, offsetof(struct op, transient), 0},
    {OP_ATTENTION, "batch", TF_SIZE, 1, U_(attn.batch), 0},
    {OP_ATTENTION, "heads", TF_SIZE, 1, U_(attn.heads), 0},
    {OP_ATTENTION, "q_len", TF_SIZE, 1, U_(attn.q_len), 0},
    {OP_ATTENTION, "kv_len", TF_SIZE, 1, U_(attn.kv_len), 0},
    {OP_ATTENTION, "head_dim", TF_SIZE, 1, U_(attn.head_dim), 0},
    {OP_ATTENTION, "kv_heads", TF_SIZE, 0, U_(attn.kv_heads), 0},
    {OP_ATTENTION, "causal", TF_BOOL, 0, U_(attn.causal), 0},
    {OP_ATTENTION, "impl", TF_IMPL, 0, U_(attn.impl), ATTN_FLASH},
    {OP_ATTENTION, "kv_dtype", TF_DTYPE, 0, U_(attn.kv_dtype), DT_COUNT},
    {OP_ATTENTION, "page_size", TF_COUNT, 0, U_(attn.page_size), 0},
    {OP_ATTENTION, "dropout", TF_NUM, 0, U_(attn.dropout), 0},
    {OP_ATTENTION, "transient", TF_BOOL, 0, offsetof(struct op, transient), 0},
    {OP_ELEMENTWISE, "elements", TF_SIZE, 1, U_(ew.elements), 0},
    {OP_ELEMENTWISE, "inputs", TF_COUNT, 0, U_(ew.inputs), 1},
    {OP_ELEMENTWISE, "outputs", TF_COUNT, 0, U_(ew.outputs), 1},
    {OP_ELEMENTWISE, "flops_per_element", TF_NUM, 0, U_(ew.flops_per_element), 1},
    {OP_ELEMENTWISE, "vector_bytes", TF_COUNT, 0, U_(ew.vector_bytes), 16},
    {OP_ELEMENTWISE, "dropout", TF_NUM, 0, U_(ew.dropout), 0},
    {OP_SOFTMAX, "rows", TF_SIZE, 1, U_(rc.rows), 0},
    {OP_SOFTMAX, "cols", TF_SIZE, 1, U_(rc.cols), 0},
    {OP_NORM, "rows", TF_SIZE, 1, U_(rc.rows), 0},
    {OP_NORM, "cols", TF_SIZE, 1, U_(rc.cols), 0},
    {OP_REDUCTION, "rows", TF_SIZE, 1, U_(rc.rows), 0},
    {OP_REDUCTION, "cols", TF_SIZE, 1, U_(rc.cols), 0},
    {OP_EMBEDDING, "tokens", TF_SIZE, 1, U_(emb.tokens), 0},
    {OP_EMBEDDING, "dim", TF_SIZE, 1, U_(emb.dim), 0},
    {OP_MEMCPY, "bytes", TF_SIZE, 1, U_(copy.bytes), 0},
    {OP_MEMCPY, "direction", TF_DIR, 1, U_(copy.dir), 0},
    {OP_MEMCPY, "src_device", TF_DEVICE, 0, U_(copy.src), -1},
    {OP_MEMCPY, "dst_device", TF_DEVICE, 0, U_(copy.peer), -1},
    {OP_GENERIC, "flops", TF_NUM, 1, U_(gen.flops), 0},
    {OP_GENERIC, "bytes", TF_NUM, 1, U_(gen.bytes), 0},
    {OP_COLLECTIVE, "collective", TF_COLL, 1, U_(coll.what), 0},
    {OP_COLLECTIVE, "group", TF_GROUP, 1, U_(coll.group), 0},
    {OP_COLLECTIVE, "bytes", TF_SIZE, 1, U_(coll.bytes), 0},
    {OP_COLLECTIVE, "algo", TF_ALGO, 0, U_(coll.algo), COLL_AUTO},
    {OP_COLLECTIVE, "root", TF_DEVICE, 0, U_(coll.root), -1},
};
#undef U_
#define N_OP_FIELDS (sizeof op_fields / sizeof op_fields[0])

const char *const trace_field_common_keys[TF_NCOMMON] = {
    "id", "name", "kind", "device", "stream", "dtype", "deps", "measured_s", "fixed_s", "kernel",
    "pass"};

const char *const trace_field_top_keys[TF_NTOP] = {"strata_trace", "name", "meta", "devices",
                                                   "ops", "symmetric", "groups"};

static const char *const pass_names[] = {"fwd", "bwd", "fwd+bwd", "dgrad", "wgrad"};  /* enum attn_pass */
static const char *const dir_names[] = {"h2d", "d2h", "d2d", "p2p"}; /* enum memcpy_dir */

unsigned trace_field_of_kind(enum op_kind kind, const struct trace_field **rows)
{
    unsigned n = 0;
    for (size_t i = 0; i < N_OP_FIELDS; i++)
        if (op_fields[i].kind == kind) {
            SIM_CHECK(n < TF_MAX_KIND); /* raise TF_MAX_KIND with the table */
            rows[n++] = &op_fields[i];
        }
    return n;
}

size_t trace_field_value_count(enum trace_ftype type)
{
    switch (type) {
    case TF_IMPL: return ATTN_IMPL_COUNT;
    case TF_DIR: return sizeof dir_names / sizeof dir_names[0];
    case TF_WFMT: return WFMT_COUNT;
    case TF_DTYPE: return DT_COUNT;
    case TF_COLL: return COLL_KIND_COUNT;
    case TF_ALGO: return COLL_ALGO_COUNT;
    case TF_SIZE: case TF_COUNT: case TF_NUM: case TF_BOOL: case TF_DEVICE: case TF_GROUP: break;
    }
    return 0;
}

const char *trace_field_value_name(enum trace_ftype type, unsigned i)
{
    switch (type) {
    case TF_IMPL: return op_attn_impl_name((enum attn_impl)i);
    case TF_DIR: return i < sizeof dir_names / sizeof dir_names[0] ? dir_names[i] : "?";
    case TF_WFMT: return wfmt_name((enum wfmt)i);
    case TF_DTYPE: return dtype_name((enum dtype)i);
    case TF_COLL: return coll_kind_name((enum coll_kind)i);
    case TF_ALGO: return coll_algo_name((enum coll_algo)i);
    case TF_SIZE: case TF_COUNT: case TF_NUM: case TF_BOOL: case TF_DEVICE: case TF_GROUP: break;
    }
    return "?";
}

const char *trace_field_pass_name(enum attn_pass p)
{
    return (unsigned)p < PASS_COUNT ? pass_names[p] : "?";
}
