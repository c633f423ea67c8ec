/* llmb.c: the LLM trace builder's primitives (see llmb.h). */
#include "llmb.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

struct op *llmb_op(struct llmb *b, const char *id, enum op_kind kind, enum dtype dt)
{
    struct trace *t = b->t;
    SIM_CHECK(t->nops < b->cap);
    uint32_t i = t->nops++;
    struct op *o = &t->ops[i];
    memset(o, 0, sizeof *o);
    char full[TRACE_ID_MAX];
    snprintf(full, sizeof full, "%s%s", b->prefix, id);
    trace_op_set_id(t, i, full);
    o->name_at = o->id_at;
    o->kind = kind;
    o->dtype = dt;
    o->device = b->device;
    o->measured_s = -1;
    o->fixed_s = -1;
    o->line = 0;
    /* every op of a rank waits for the one before: one dependent chain */
    o->deps_off = t->ndeps;
    if (b->prev != UINT32_MAX) {
        SIM_CHECK(t->ndeps < b->dcap);
        t->deps[t->ndeps++] = b->prev;
        o->ndeps = 1;
    }
    if (b->also != UINT32_MAX) {
        SIM_CHECK(t->ndeps < b->dcap);
        t->deps[t->ndeps++] = b->also;
        o->ndeps++;
        b->also = UINT32_MAX;
    }
    b->prev = i;
    t->topo[i] = i;
    return o;
}

struct op *llmb_gemm(struct llmb *b, const char *id, enum dtype dt, uint64_t m, uint64_t n,
                     uint64_t k, enum wfmt w)
{
    struct op *o = llmb_op(b, id, OP_GEMM, dt);
    o->u.gemm.m = m;
    o->u.gemm.n = n;
    o->u.gemm.k = k;
    o->u.gemm.batch = 1;
    o->u.gemm.weights = w;
    return o;
}

void llmb_attn_shape(struct op *a, uint64_t batch, uint64_t heads, uint64_t kv_heads, uint64_t q_len,
                     uint64_t kv_len, uint64_t head_dim, int causal, enum attn_impl impl, enum dtype kvdt)
{
    a->u.attn.batch = batch;
    a->u.attn.heads = heads;
    a->u.attn.kv_heads = kv_heads;
    a->u.attn.q_len = q_len;
    a->u.attn.kv_len = kv_len;
    a->u.attn.head_dim = head_dim;
    a->u.attn.causal = causal;
    a->u.attn.impl = impl;
    a->u.attn.kv_dtype = kvdt;
}

struct op *llmb_attention(struct llmb *b, const char *id, enum dtype dt, uint64_t batch, uint64_t heads,
                          uint64_t kv_heads, uint64_t q_len, uint64_t kv_len, uint64_t head_dim, int causal,
                          enum attn_impl impl, enum dtype kvdt)
{
    struct op *a = llmb_op(b, id, OP_ATTENTION, dt);
    llmb_attn_shape(a, batch, heads, kv_heads, q_len, kv_len, head_dim, causal, impl, kvdt);
    return a;
}

void llmb_ew(struct llmb *b, const char *id, enum dtype dt, uint64_t el, uint32_t in,
             uint32_t out, double fpe)
{
    struct op *o = llmb_op(b, id, OP_ELEMENTWISE, dt);
    o->u.ew.elements = el;
    o->u.ew.inputs = in;
    o->u.ew.outputs = out;
    o->u.ew.flops_per_element = fpe;
    o->u.ew.vector_bytes = 16;
}

void llmb_hf_rmsnorm(struct llmb *b, const char *stem, enum dtype dt, uint64_t rows, uint64_t h)
{
    char id[TRACE_ID_MAX];
#define HF_ID(s) (snprintf(id, sizeof id, "%s.%s", stem, s), id)
    llmb_ew(b, HF_ID("cast_up"), DT_FP32, rows * h, 1, 1, 0.0);
    llmb_ew(b, HF_ID("pow"), DT_FP32, rows * h, 1, 1, 1.0);
    llmb_rc(b, HF_ID("mean"), OP_REDUCTION, DT_FP32, rows, h);
    llmb_ew(b, HF_ID("add_eps"), DT_FP32, rows, 1, 1, 1.0);
    llmb_ew(b, HF_ID("rsqrt"), DT_FP32, rows, 1, 1, 2.0);
    llmb_ew(b, HF_ID("mul"), DT_FP32, rows * h, 1, 1, 1.0);
    llmb_ew(b, HF_ID("cast_down"), dt, rows * h, 1, 1, 0.0);
    llmb_ew(b, HF_ID("weight"), dt, rows * h, 2, 1, 1.0);
#undef HF_ID
}

void llmb_hf_rope(struct llmb *b, const char *stem, enum dtype dt, uint64_t el)
{
    char id[TRACE_ID_MAX];
#define HF_ID(s) (snprintf(id, sizeof id, "%s.%s", stem, s), id)
    llmb_ew(b, HF_ID("mul_cos"), dt, el, 2, 1, 1.0);
    llmb_ew(b, HF_ID("neg"), dt, el / 2, 1, 1, 1.0);
    llmb_ew(b, HF_ID("cat"), dt, el, 1, 1, 0.0);
    llmb_ew(b, HF_ID("mul_sin"), dt, el, 2, 1, 1.0);
    llmb_ew(b, HF_ID("add"), dt, el, 2, 1, 1.0);
#undef HF_ID
}

/* Megatron's bias-dropout-add (one fused kernel): a block's output through
 * dropout, plus the residual; with it the residual add is no longer folded
 * into the next norm */
void llmb_dropout_add(struct llmb *b, const char *id, enum dtype dt, uint64_t el, double p)
{
    llmb_ew(b, id, dt, el, 2, 1, 2.0);
    b->t->ops[b->t->nops - 1].u.ew.dropout = p;
}

void llmb_rc(struct llmb *b, const char *id, enum op_kind k, enum dtype dt,
             uint64_t rows, uint64_t cols)
{
    struct op *o = llmb_op(b, id, k, dt);
    o->u.rc.rows = rows;
    o->u.rc.cols = cols;
}

/* A collective on the compute stream over group, of `ranks` ranks (bytes:
 * nccl-tests' size, rounded up to a multiple of the ranks). */
void llmb_coll(struct llmb *b, const char *id, enum coll_kind what, enum dtype dt, uint64_t bytes,
               uint32_t group, uint32_t ranks)
{
    struct op *o = llmb_op(b, id, OP_COLLECTIVE, dt);
    o->u.coll.what = what;
    o->u.coll.algo = COLL_AUTO;
    o->u.coll.bytes = (bytes + ranks - 1) / ranks * ranks;
    o->u.coll.group = group;
    o->u.coll.root = TRACE_NO_DEVICE;
}

/* The all-reduce of a row-parallel projection's output over the TP group. */
void llmb_allreduce(struct llmb *b, const char *id, enum dtype dt, uint64_t bytes)
{
    llmb_coll(b, id, COLL_ALL_REDUCE, dt, bytes, b->tp_group, 1);
}

/* Sequence parallelism's all-gather or reduce-scatter over the TP group
 * (bytes: the whole tensor). */
void llmb_tp_coll(struct llmb *b, const char *id, enum coll_kind what, enum dtype dt,
                  uint64_t bytes, uint32_t tp)
{
    llmb_coll(b, id, what, dt, bytes, b->tp_group, tp);
}

/* A collective over group (the data-parallel replicas, or the EP ranks)
 * on its own stream, after op `after` (UINT32_MAX: none); the compute
 * chain goes on without it.  all-gather and reduce-scatter sizes are
 * rounded up to the ranks. */
uint32_t llmb_dp_coll(struct llmb *b, const char *id, enum coll_kind what, enum dtype dt,
                      uint64_t bytes, uint32_t after, uint32_t group, uint32_t stream)
{
    uint32_t ranks = b->t->groups[group].n;
    uint32_t keep = b->prev, also = b->also;
    b->prev = after;
    b->also = UINT32_MAX;
    struct op *o = llmb_op(b, id, OP_COLLECTIVE, dt);
    o->stream = stream;
    o->u.coll.what = what;
    o->u.coll.algo = COLL_AUTO;
    if (bytes == 0)
        bytes = 1;
    if (what != COLL_ALL_REDUCE)
        bytes = (bytes + ranks - 1) / ranks * ranks;
    o->u.coll.bytes = bytes;
    o->u.coll.group = group;
    o->u.coll.root = TRACE_NO_DEVICE;
    uint32_t idx = b->prev;
    b->prev = keep;
    b->also = also;
    return idx;
}

/* One rank's all-to-all over the expert-parallel group: bytes it sends in all. */
void llmb_alltoall(struct llmb *b, const char *id, enum dtype dt, uint64_t bytes)
{
    llmb_coll(b, id, COLL_ALL_TO_ALL, dt, bytes, b->ep_group, b->ep);
}

/* Give op o (the last one added) one more wait whose op is filled in
 * later, recording where in *slot (slot NULL: none); right after its own
 * deps, so they stay contiguous. */
void llmb_slot(struct llmb *b, struct op *o, uint32_t *slot)
{
    struct trace *t = b->t;
    if (slot == NULL)
        return;
    SIM_CHECK(t->ndeps < b->dcap);
    if (o->ndeps == 0)
        o->deps_off = t->ndeps;
    *slot = t->ndeps;
    t->deps[t->ndeps++] = UINT32_MAX;
    o->ndeps++;
}

void llmb_wait(struct llmb *b, uint32_t on)
{
    struct trace *t = b->t;
    if (on == UINT32_MAX)
        return;
    struct op *o = &t->ops[t->nops - 1];
    SIM_CHECK(t->ndeps < b->dcap);
    t->deps[t->ndeps++] = on;
    o->ndeps++;
}

int llmb_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}
