/* trace.c: the in-memory trace's vocabulary and invariants (trace.h): the
 * names of its enums, a device's rank in a group, the limits every op's
 * sizes keep, and freeing.  The rest of trace.h lives in: trace_load.c
 * (loading and validating, with the tload_*.c parts), trace_write.c
 * (writing), trace_coll.c (collectives and mirrors), trace_wset.c (working
 * sets), trace_str.c (the ops' strings); the format's schema as data in
 * trace_field.c.
 *
 * Limits: TRACE_OPS_CAP ops, sizes <= 2^50, numeric ids <= 2^53 (exact in a
 * double), streams and tensor counts <= 65535 (trace_field.h).  The
 * top-level "meta" object is free-form and ignored except for meta.tokens.
 */
#include "trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_LOOP_CAP ((uint64_t)1 << 34)      /* a GEMM's k, an attention's kv_len */

/* ---- names ------------------------------------------------------------ */

static const char *const kind_names[OP_KIND_COUNT] = {
#define OP_KIND_NAME_(e, name) name,
    OP_KIND_MAP(OP_KIND_NAME_)
#undef OP_KIND_NAME_
};

const char *op_kind_name(enum op_kind k)
{
    return (unsigned)k < OP_KIND_COUNT ? kind_names[k] : "?";
}

int op_attn_impl_from_name(const char *name, enum attn_impl *out)
{
    for (unsigned i = 0; name != NULL && i < ATTN_IMPL_COUNT; i++)
        if (ascii_ieq(name, op_attn_impl_name((enum attn_impl)i))) {
            *out = (enum attn_impl)i;
            return 0;
        }
    return -1;
}

int op_kind_from_name(const char *name, enum op_kind *out)
{
    if (name == NULL)
        return -1;
    for (unsigned i = 0; i < OP_KIND_COUNT; i++) {
        if (ascii_ieq(name, kind_names[i])) {
            *out = (enum op_kind)i;
            return 0;
        }
    }
    return -1;
}

static const char *const impl_names[] = {                            /* enum attn_impl */
#define ATTN_IMPL_NAME_(e, n) n,
    ATTN_IMPL_MAP(ATTN_IMPL_NAME_)
#undef ATTN_IMPL_NAME_
};

const char *op_attn_impl_name(enum attn_impl i)
{
    return (unsigned)i < ATTN_IMPL_COUNT ? impl_names[i] : "?";
}
static const char *const coll_names[] = {                            /* enum coll_kind */
#define COLL_KIND_NAME_(e, n) n,
    COLL_KIND_MAP(COLL_KIND_NAME_)
#undef COLL_KIND_NAME_
};
static const char *const algo_names[] = {                            /* enum coll_algo */
#define COLL_ALGO_NAME_(e, n) n,
    COLL_ALGO_MAP(COLL_ALGO_NAME_)
#undef COLL_ALGO_NAME_
};

const char *coll_kind_name(enum coll_kind k)
{
    return (unsigned)k < COLL_KIND_COUNT ? coll_names[k] : "?";
}

const char *coll_algo_name(enum coll_algo a)
{
    return (unsigned)a < COLL_ALGO_COUNT ? algo_names[a] : "?";
}

int trace_group_rank(const struct trace *t, uint32_t g, uint32_t dev)
{
    if (g >= t->ngroups)
        return -1;
    const struct trace_group *gr = &t->groups[g];
    for (uint32_t r = 0; r < gr->n; r++)
        if (t->group_dev[gr->off + r] == dev)
            return (int)r;
    return -1;
}

/* Every tensor an op reads or writes holds at most TRACE_SIZE_CAP elements,
 * as each size field does (products of fields wrapped 64 bits), and its
 * per-element work is finite.  0, or -1 with the field and a message. */
int trace_op_sizes_ok(const struct op *op, const char **field, char *msg, size_t n)
{
    double big = 0;
    const char *what = NULL;
    *field = "";
    /* the k-loop and the KV loop are counted in 32-bit steps */
    if ((op->kind == OP_GEMM && op->u.gemm.k > TRACE_LOOP_CAP) ||
        (op->kind == OP_ATTENTION && op->u.attn.kv_len > TRACE_LOOP_CAP)) {
        *field = op->kind == OP_GEMM ? "k" : "kv_len";
        snprintf(msg, n, "must be at most 2^34 (%llu here)",
                 (unsigned long long)(op->kind == OP_GEMM ? op->u.gemm.k : op->u.attn.kv_len));
        return -1;
    }
    /* dropout is a probability of dropping: 1 would drop everything */
    if ((op->kind == OP_ATTENTION && !(op->u.attn.dropout < 1.0)) ||
        (op->kind == OP_ELEMENTWISE && !(op->u.ew.dropout < 1.0))) {
        *field = "dropout";
        snprintf(msg, n, "a probability from 0 to below 1, got %g",
                 op->kind == OP_ATTENTION ? op->u.attn.dropout : op->u.ew.dropout);
        return -1;
    }
    if (op->kind == OP_ELEMENTWISE && op->u.ew.dropout > 0 && op->u.ew.outputs == 0) {
        *field = "dropout";
        snprintf(msg, n, "dropout applies to an output, and this op writes none");
        return -1;
    }
    if (op->kind == OP_GEMM) {
        double b = (double)op->u.gemm.batch, m = (double)op->u.gemm.m, nn = (double)op->u.gemm.n,
               k = (double)op->u.gemm.k;
        big = fmax(b * m * nn, fmax(b * m * k, b * k * nn));
        what = "batch x m x n, batch x m x k and batch x k x n";
        *field = "batch";
    } else if (op->kind == OP_ATTENTION) {
        double b = (double)op->u.attn.batch, h = (double)op->u.attn.heads,
               q = (double)op->u.attn.q_len, kv = (double)op->u.attn.kv_len,
               dh = (double)op->u.attn.head_dim;
        big = fmax(b * h * q * kv, fmax(b * h * q * dh, b * h * kv * dh));
        what = "batch x heads x q_len x kv_len and the Q, K and V sizes";
        *field = "kv_len";
    } else if (op->kind == OP_SOFTMAX || op->kind == OP_NORM || op->kind == OP_REDUCTION) {
        big = (double)op->u.rc.rows * (double)op->u.rc.cols;
        what = "rows x cols";
        *field = "cols";
    } else if (op->kind == OP_EMBEDDING) {
        big = (double)op->u.emb.tokens * (double)op->u.emb.dim;
        what = "tokens x dim";
        *field = "dim";
    } else if (op->kind == OP_ELEMENTWISE && !(op->u.ew.flops_per_element <= TRACE_NUM_CAP)) {
        *field = "flops_per_element";
        snprintf(msg, n, "must be at most %g", TRACE_NUM_CAP);
        return -1;
    } else if (op->kind == OP_GENERIC &&
               !(op->u.gen.flops <= TRACE_NUM_CAP && op->u.gen.bytes <= TRACE_NUM_CAP)) {
        *field = op->u.gen.flops <= TRACE_NUM_CAP ? "bytes" : "flops";
        snprintf(msg, n, "must be at most %g", TRACE_NUM_CAP);
        return -1;
    }
    if (big > (double)TRACE_SIZE_CAP) {
        snprintf(msg, n, "%s must be at most 2^50 elements (%.3g here)", what, big);
        return -1;
    }
    return 0;
}

void trace_free(struct trace *t)
{
    if (t == NULL)
        return;
    free(t->ops);
    free(t->deps);
    free(t->topo);
    free(t->devices);
    free(t->groups);
    free(t->group_dev);
    free(t->colls);
    free(t->coll_ops);
    free(t->mirror);
    free(t->str);
    t->str = NULL;
    t->str_len = t->str_cap = 0;
    memset(t->str_seen, 0, sizeof t->str_seen);
    t->mirror = NULL;
    t->nmirrors = 0;
    t->ops = NULL;
    t->deps = NULL;
    t->topo = NULL;
    t->devices = NULL;
    t->groups = NULL;
    t->group_dev = NULL;
    t->colls = NULL;
    t->coll_ops = NULL;
    t->nops = t->ndeps = t->ndevices = t->ngroups = t->ncolls = 0;
}
