/* llmb_bwd.c: the backward in the LLM trace builder (see llmb_bwd.h):
 * every forward op's backward, last first, on the same stream. */
#include "llmb_bwd.h"

#include <stdio.h>
#include <string.h>

#include "llmb_cp.h"

/* Full recomputation: when the backward enters layer Ln (base, the op's
 * id past the rank prefix and, in a pipeline step (in_step), its "mbN.",
 * names a layer other than cur_layer), Ln's forward ops among ops[0..n)
 * again (".recompute", TP collectives included, DP traffic on other
 * streams not), from the layer's stored input.  With first set, the
 * first of them takes the deferred wait of slot (the gradients it needs). */
void llmb_bwd_recompute(struct llmb *b, const char *base, int in_step, char cur_layer[16],
                        const struct op *ops, uint32_t n, uint32_t *slot, int *first)
{
    size_t skip = strlen(b->prefix);
    const char *key = in_step && strchr(base, '.') != NULL ? strchr(base, '.') + 1 : base;
    size_t ln = strcspn(key, ".");
    if (key[0] != 'L' || ln < 2 || ln >= 16 || key[ln] != '.' ||
        (strncmp(key, cur_layer, ln) == 0 && cur_layer[ln] == '\0'))
        return;
    snprintf(cur_layer, 16, "%.*s", (int)ln, key);
    for (uint32_t q = 0; q < n; q++) {
        struct op f = ops[q];
        char fb[TRACE_ID_MAX];  /* a copy: llmb_op may move the trace's strings */
        snprintf(fb, sizeof fb, "%s", op_id(b->t, &f) + skip);
        const char *fk = in_step && strchr(fb, '.') != NULL ? strchr(fb, '.') + 1 : fb;
        if (strncmp(fk, cur_layer, ln) != 0 || fk[ln] != '.')
            continue;
        if (f.kind == OP_COLLECTIVE && f.stream != 0)
            continue;   /* data-parallel traffic (ZeRO-3's gather): not recomputed */
        if (llmb_cp_aux(b, fb))
            continue;   /* made again with the ring's first op */
        if (llmb_cp_again(b, &f, fb, ".recompute", 2)) {
            if (first != NULL)
                *first = 0;
            continue;
        }
        char rid[TRACE_ID_MAX];
        snprintf(rid, sizeof rid, "%.*s.recompute", (int)sizeof rid - 11, fb);
        struct op *o = llmb_op(b, rid, f.kind, f.dtype);
        o->u = f.u;
        o->stream = f.stream;
        o->pass = PASS_FWD;
        if (o->kind == OP_GEMM)
            o->transient = 1;    /* the forward's weights again */
        if (first != NULL && *first)
            llmb_slot(b, o, slot);
        if (first != NULL)
            *first = 0;
    }
}

/* The backward op of forward op src (its id without the rank prefix:
 * base), added as "<base>.bwd", or NULL when it has none: a forward
 * all-reduce has none (the column-parallel projections' input gradients
 * are all-reduced instead), nor has a router's top-k (its gradient flows
 * through the gates); an all-to-all runs again (the combine's gradients
 * to the experts' ranks, the dispatch's back to the tokens'), and with
 * sequence parallelism a TP all-gather's gradient is a reduce-scatter and
 * the other way round. */
struct op *llmb_bwd_op(struct llmb *b, const struct op *src, const char *base, int sp)
{
    int a2a = src->kind == OP_COLLECTIVE && src->u.coll.what == COLL_ALL_TO_ALL;
    int spc = src->kind == OP_COLLECTIVE && src->stream == 0 &&
              ((sp && src->u.coll.group == b->tp_group) || (b->cp > 1 && src->u.coll.group == b->cp_group)) &&
              (src->u.coll.what == COLL_ALL_GATHER || src->u.coll.what == COLL_REDUCE_SCATTER);
    if ((src->kind == OP_COLLECTIVE && !a2a && !spc) || src->kind == OP_REDUCTION)
        return NULL;
    if (llmb_cp_aux(b, base))
        return NULL;    /* the ring's backward comes with its first op's */
    if (llmb_cp_again(b, src, base, ".bwd", 1))
        return &b->t->ops[b->t->nops - 1];
    char id[TRACE_ID_MAX];
    snprintf(id, sizeof id, "%.*s.bwd", (int)sizeof id - 5, base);
    struct op s0 = *src;    /* src may point into the ops that llmb_op grows */
    struct op *o = llmb_op(b, id, s0.kind, s0.dtype);
    o->u = s0.u;
    if (spc)
        o->u.coll.what = s0.u.coll.what == COLL_ALL_GATHER ? COLL_REDUCE_SCATTER : COLL_ALL_GATHER;
    else if (!a2a)
        o->pass = PASS_BWD;
    return o;
}

/* Megatron's column-parallel layers (QKV, gate/up, a router, the
 * vocab-parallel head): without sequence parallelism their input
 * gradients are all-reduced over the TP group. */
int llmb_bwd_column_parallel(const char *base, int gated)
{
    return llmb_ends_with(base, ".qkv_proj") || llmb_ends_with(base, gated ? ".gate_proj" : ".up_proj") ||
           llmb_ends_with(base, ".router") || llmb_ends_with(base, ".lm_head") || strcmp(base, "lm_head") == 0;
}

/* With sequence parallelism, Megatron's backward of a column-parallel
 * linear (QKV, gate/up, the LM head), as tensor_parallel/layers.py's
 * LinearWithGradAccumulationAndAsyncCommunication and Transformer Engine's
 * LayerNormLinear run it: the forward kept only this rank's 1/tp of the
 * input, so the input is all-gathered again, asynchronously, while the
 * input-gradient GEMM (dgrad) runs; the input gradient is then
 * reduce-scattered, asynchronously, while the weight-gradient GEMM
 * (wgrad) runs on the gathered input.  The collectives go on stream 4;
 * what follows waits for the reduce-scatter.  Called for each op of a
 * backward walk (the forward's ops reversed): 1 when it has emitted that
 * op's backward (a dgrad now, its wgrad with the reduce-scatter, which
 * stands for the forward's all-gather), 0 to leave it to llmb_bwd_op. */
int llmb_bwd_sp(struct llmb *b, const struct op *src, const char *base, int sp)
{
    if (!sp)
        return 0;
    if (src->kind == OP_GEMM && src->pass == PASS_FWD && b->sp_nw < 4 &&
        (llmb_ends_with(base, ".qkv_proj") || llmb_ends_with(base, ".gate_proj") || llmb_ends_with(base, ".up_proj") ||
         llmb_ends_with(base, ".lm_head") || strcmp(base, "lm_head") == 0)) {
        struct op s0 = *src;    /* src may point into the ops llmb_op grows */
        char id[TRACE_ID_MAX];
        if (b->sp_ag == UINT32_MAX) {
            snprintf(id, sizeof id, "%.*s.input_allgather", (int)sizeof id - 17, base);
            b->sp_ag = llmb_dp_coll(b, id, COLL_ALL_GATHER, s0.dtype,
                                    (uint64_t)((double)s0.u.gemm.m * (double)s0.u.gemm.k *
                                              dtype_bytes(s0.dtype, 1.0)),
                                    b->prev, b->tp_group, 4);
        }
        snprintf(id, sizeof id, "%.*s.bwd", (int)sizeof id - 5, base);
        struct op *o = llmb_op(b, id, OP_GEMM, s0.dtype);
        o->u = s0.u;
        o->pass = PASS_DGRAD;
        b->sp_w[b->sp_nw] = s0;
        snprintf(b->sp_wid[b->sp_nw], sizeof b->sp_wid[0], "%.*s.wgrad", (int)sizeof id - 7, base);
        b->sp_nw++;
        return 1;
    }
    if (src->kind == OP_COLLECTIVE && src->stream == 0 && src->u.coll.group == b->tp_group &&
        src->u.coll.what == COLL_ALL_GATHER && b->sp_nw > 0) {
        struct op s0 = *src;
        char id[TRACE_ID_MAX];
        snprintf(id, sizeof id, "%.*s.bwd", (int)sizeof id - 5, base);
        uint32_t rs = llmb_dp_coll(b, id, COLL_REDUCE_SCATTER, s0.dtype, s0.u.coll.bytes, b->prev,
                                   b->tp_group, 4);
        for (uint32_t i = 0; i < b->sp_nw; i++) {
            if (i == 0)
                b->also = b->sp_ag;
            struct op *o = llmb_op(b, b->sp_wid[i], OP_GEMM, b->sp_w[i].dtype);
            o->u = b->sp_w[i].u;
            o->pass = PASS_WGRAD;
        }
        b->sp_nw = 0;
        b->sp_ag = UINT32_MAX;
        b->also = rs;
        return 1;
    }
    return 0;
}
