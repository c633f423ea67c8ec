/* lower.c: the tiled model's lowering of ops to kernels.
 *
 * What it models.  Every op is lowered to one or more kernels the way a GPU
 * library would run it: a grid of thread blocks (CTAs), each owning an
 * output tile and looping over a reduction dimension in k-steps.  Tile
 * shape, pipeline depth and split-K are picked per shape by a library-style
 * heuristic bounded by shared-memory and register capacity (plan_gemm).
 * CTAs are resident `ctas_per_unit` at a time per SM, so the grid runs in
 * waves; the last wave may be partial (wave quantisation, tail effect).
 * Streaming and row kernels (elementwise, softmax, norms) are grid-stride
 * loops (plan_stream), attention is FlashAttention-2 (plan_flash) or three
 * kernels, copies go to the copy engine.  A kernel is described per CTA and
 * per k-step (struct kplan): bytes loaded, stored and read again, FLOPs on
 * each pipe, shared-memory operand bytes; runner.c turns that into flows.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "tiled.h"

/* ---------------------------------------------------------------- backward */

/* The backward pass of an op other than attention (which lowers its own),
 * as PyTorch's autograd runs it: appended to L's kernels (or in their place
 * for a backward-only op), L->flops gaining its FLOPs.
 *   gemm: dA = dC B^T (m x k over n) and dB = A^T dC (k x n over m), two
 *         GEMMs of the forward's FLOPs each (weights train in the op's type);
 *   softmax: dx = y (dy - sum(dy y)), one row kernel reading y and dy;
 *   norm: dx from x, dy and the saved statistics (a row kernel), and the
 *         gamma (and beta) gradients, a column reduction reading x and dy
 *         again (PyTorch's layer_norm_backward: two kernels);
 *   elementwise: the inputs' gradients from the outputs' and the saved
 *         inputs, the forward's work again;
 *   embedding: the rows' gradients scattered into the fp32 table gradient
 *         with atomics (index_add). */
static void lower_backward(const struct hw_config *c, const struct op *o, struct lowered *L)
{
    double eb = dtype_bytes(o->dtype, 1.0);
    enum dtype vdt = unit_vector_type(c, o->dtype);
    if (o->pass == PASS_BWD || o->pass == PASS_DGRAD || o->pass == PASS_WGRAD) {
        L->nk = 0;
        L->flops = 0;
    }
    uint32_t n = L->nk;
    switch (o->kind) {
    case OP_GEMM: {
        const uint64_t m = o->u.gemm.m, nn = o->u.gemm.n, k = o->u.gemm.k, b = o->u.gemm.batch;
        double ob = lower_gemm_out_bytes(o->dtype);
        struct gemm_shape da = {m, k, nn, b, o->dtype, ob, eb, 0, 1.0, 1.0, 0};
        struct gemm_shape db = {k, nn, m, b, o->dtype, ob, eb, 0, 1.0, 1.0, 0};
        if (c->sa_rows == 0) {
            /* dgrad dA = dC B^T reads dC along n and B^T along its k: the
             * forward's n and k; wgrad dB = A^T dC reads A^T along the
             * forward's k (A's rows) and dC along n, so the forward's m
             * (the tokens: any count) is never a row length */
            da.load_frac = lower_gemm_load_frac(da.n, da.k, eb);
            db.load_frac = lower_gemm_load_frac(db.n, db.m, eb);
        }
        if (o->pass != PASS_WGRAD) {
            lower_gemm_plan(c, &L->k[n], &da);
            snprintf(L->k[n++].what, sizeof L->k[0].what, "gemm_dgrad");
            L->flops += 2.0 * (double)m * nn * k * b;
        }
        if (o->pass != PASS_DGRAD) {
            lower_gemm_plan(c, &L->k[n], &db);
            snprintf(L->k[n++].what, sizeof L->k[0].what, "gemm_wgrad");
            L->flops += 2.0 * (double)m * nn * k * b;
        }
        break;
    }
    case OP_SOFTMAX: case OP_NORM: {
        double rows = (double)o->u.rc.rows, cols = (double)o->u.rc.cols, el = rows * cols;
        uint64_t per_cta = cols <= 128 ? 8 : (cols <= 1024 ? 4 : 1);
        uint64_t ctas = ceil_div(o->u.rc.rows, per_cta);
        kplan_stream(c, &L->k[n++], o->kind == OP_SOFTMAX ? "softmax_bwd" : "norm_bwd", 2.0 * el * eb,
                     el * eb, (o->kind == OP_SOFTMAX ? 4.0 : 8.0) * el, vdt, ctas, 2, TILED_VEC_BYTES);
        if (o->kind == OP_NORM)     /* gamma and beta: sums over the rows */
            kplan_stream(c, &L->k[n++], "norm_bwd_gamma", 2.0 * el * eb, 2.0 * cols * 4.0, 2.0 * el,
                         vdt, 0, 2, TILED_VEC_BYTES);
        L->flops += (o->kind == OP_SOFTMAX ? 4.0 : 10.0) * el;
        break;
    }
    case OP_ELEMENTWISE: {
        double el = (double)o->u.ew.elements;
        uint32_t in = o->u.ew.inputs, out = o->u.ew.outputs;
        double mask = o->u.ew.dropout > 0 ? el : 0.0;  /* the forward's dropout mask */
        kplan_stream(c, &L->k[n++], "elementwise_bwd", el * eb * (in + out) + mask, el * eb * (in ? in : 1),
                     el * o->u.ew.flops_per_element, vdt, 0, in + out,
                     o->u.ew.vector_bytes > 0 ? o->u.ew.vector_bytes : 1.0);
        L->flops += el * o->u.ew.flops_per_element;
        break;
    }
    case OP_EMBEDDING: {
        double el = (double)o->u.emb.tokens * o->u.emb.dim;
        kplan_stream(c, &L->k[n], "embedding_bwd", el * eb, 0, el, DT_FP32, o->u.emb.tokens, 1,
                     TILED_VEC_BYTES);
        struct kplan *p = &L->k[n++];       /* fp32 atomics into the table's gradient */
        p->l2_step = 4.0 * el / ((double)(p->gm * p->gn * p->gb) * p->ksteps);
        L->flops += el;
        break;
    }
    case OP_ATTENTION: case OP_REDUCTION: case OP_MEMCPY: case OP_GENERIC: case OP_COLLECTIVE:
    case OP_KIND_COUNT:
        break;
    }
    L->nk = n;
}

/* The trace says how long op o takes (e.g. an imported kernel without
 * shapes): one kernel of that length, busy the whole time. */
static void lower_fixed(const struct op *o, struct lowered *L)
{
    struct kplan *p = &L->k[0];
    p->fixed = 1;
    p->fixed_ps = (uint64_t)llround(o->fixed_s * 1e12);
    snprintf(p->what, sizeof p->what, "fixed");
    snprintf(p->tile, sizeof p->tile, "fixed %.3f us", o->fixed_s * 1e6);
    L->nk = 1;
}

static void lower_elementwise(const struct hw_config *c, const struct op *o, struct lowered *L)
{
    double eb = dtype_bytes(o->dtype, 1.0);
    enum dtype vdt = unit_vector_type(c, o->dtype);
    double el = (double)o->u.ew.elements;
    /* with dropout, a 1-byte mask written and the random draws */
    double drop = o->u.ew.dropout > 0 ? el : 0.0;
    kplan_stream(c, &L->k[0], "elementwise", el * eb * o->u.ew.inputs,
                 el * eb * o->u.ew.outputs + drop,
                 el * o->u.ew.flops_per_element + DROPOUT_RNG_SLOTS * drop, vdt, 0,
                 o->u.ew.inputs, o->u.ew.vector_bytes > 0 ? o->u.ew.vector_bytes : 1.0);
    L->nk = 1;
    L->flops = el * o->u.ew.flops_per_element;
}

/* Softmax, norm and reduction: row kernels. */
static void lower_rows(const struct hw_config *c, const struct op *o, struct lowered *L)
{
    double eb = dtype_bytes(o->dtype, 1.0);
    enum dtype vdt = unit_vector_type(c, o->dtype);
    /* Row kernels.  A row of up to 1024 elements lives in one warp's
     * registers (PyTorch's persistent warp softmax, Triton's persistent
     * reductions): 4 rows per 128-thread CTA, 8 when rows are short,
     * one pass.  Longer rows get a CTA each and are read again from
     * DRAM: PyTorch's block softmax reads its input twice (max/sum,
     * then normalise), and a looped norm reads it three times (mean,
     * variance, normalise) once a row exceeds 16 KB.  The extra passes
     * are fitted to the LLMC softmax/layernorm sweeps' large-N rows
     * (docs/calibration.md). */
    double rows = (double)o->u.rc.rows, cols = (double)o->u.rc.cols;
    double el = rows * cols;
    double fpe = o->kind == OP_SOFTMAX ? 5.0 : (o->kind == OP_NORM ? 5.0 : 1.0);
    double out = o->kind == OP_REDUCTION ? rows * eb : el * eb;
    const char *what = o->kind == OP_SOFTMAX ? "softmax" : (o->kind == OP_NORM ? "norm" : "reduce");
    uint64_t per_cta = cols <= 128 ? 8 : (cols <= 1024 ? 4 : 1);
    uint64_t ctas = ceil_div(o->u.rc.rows, per_cta);
    /* Softmax is issue-bound, not FLOP-bound: per element it spends
     * vector-pipe slots on exp, fp16<->fp32 converts and the warp
     * shuffles of two row reductions.  TILED_SOFTMAX_ISSUE slots per
     * element were fitted to LLMC-103 (A100, 4096 x 4096 fp16); the
     * report still counts 5 useful FLOP per element. */
    double slots_pe = o->kind == OP_SOFTMAX ? TILED_SOFTMAX_ISSUE : fpe;
    kplan_stream(c, &L->k[0], what, el * eb, out, el * slots_pe, vdt, ctas, 1, TILED_VEC_BYTES);
    double passes = 1;
    if (o->kind == OP_SOFTMAX && cols > 1024)
        passes = 2;
    if (o->kind == OP_NORM && cols * eb > 16384)
        passes = 3;
    L->k[0].reread_step = L->k[0].a_step * (passes - 1);
    L->nk = 1;
    L->flops = el * fpe;
}

/* A copy: one copy-engine transfer (runner_dma). */
static void lower_copy(const struct hw_config *c, const struct op *o, struct lowered *L)
{
    struct kplan *p = &L->k[0];
    memset(p, 0, sizeof *p);
    p->dma = 1;
    p->dma_bytes = (double)o->u.copy.bytes;
    p->dma_level = (uint8_t)(o->u.copy.dir == MEMCPY_D2D ? c->lv_dram : c->lv_host);
    p->peer = o->u.copy.dir == MEMCPY_P2P ? o->u.copy.peer : TRACE_NO_DEVICE;
    p->dma_net = o->u.copy.dir == MEMCPY_P2P;  /* tdev_create finds its route */
    p->dram_cost = o->u.copy.dir == MEMCPY_D2D ? kplan_dram_cost(c, 1, 1) : 1.0;
    snprintf(p->what, sizeof p->what, "dma");
    snprintf(p->tile, sizeof p->tile, "copy engine");
    L->nk = 1;
}

/* The device cannot hold every weight: GEMM o's share of the overflow
 * (spill_frac of its weights) is copied from host memory over PCIe before
 * it runs, a kernel put first. */
static void lower_spill(const struct hw_config *c, const struct op *o, double spill_frac,
                        struct lowered *L)
{
    double n = (double)o->u.gemm.k * o->u.gemm.n * o->u.gemm.batch;
    double wb = o->u.gemm.weights != WF_NONE ? n * wfmt_bits(o->u.gemm.weights) / 8.0
                                             : dtype_bytes(o->dtype, n);
    memmove(&L->k[1], &L->k[0], L->nk * sizeof L->k[0]);
    struct kplan *p = &L->k[0];
    memset(p, 0, sizeof *p);
    p->dma = 1;
    p->dma_bytes = wb * spill_frac;
    p->dma_level = (uint8_t)c->lv_host;
    p->dram_cost = 1.0;
    p->dma_h2d = 1;
    p->peer = TRACE_NO_DEVICE;
    snprintf(p->what, sizeof p->what, "spill");
    snprintf(p->tile, sizeof p->tile, "weights from host");
    L->nk++;
}

void lower_op(const struct hw_config *c, const struct op *o, double spill_frac,
              struct lowered *L)
{
    L->nk = 0;      /* each planner fills its own kernels whole; the rest stay unread */
    L->flops = 0;
    if (o->fixed_s >= 0) {
        lower_fixed(o, L);
        return;
    }
    double eb = dtype_bytes(o->dtype, 1.0);
    enum dtype vdt = unit_vector_type(c, o->dtype);
    switch (o->kind) {
    case OP_GEMM:
        lower_gemm_op(c, o, L);
        break;
    case OP_ATTENTION:
        lower_attn_op(c, o, L);
        break;
    case OP_ELEMENTWISE:
        lower_elementwise(c, o, L);
        break;
    case OP_SOFTMAX: case OP_NORM: case OP_REDUCTION:
        lower_rows(c, o, L);
        break;
    case OP_EMBEDDING: {
        double el = (double)o->u.emb.tokens * o->u.emb.dim;
        kplan_stream(c, &L->k[0], "embedding", el * eb, el * eb, 0, vdt, o->u.emb.tokens, 1,
                     TILED_VEC_BYTES);
        L->nk = 1;
        break;
    }
    case OP_MEMCPY:
        lower_copy(c, o, L);
        break;
    case OP_GENERIC: {
        kplan_stream(c, &L->k[0], "generic", o->u.gen.bytes, 0, o->u.gen.flops, vdt, 0, 1,
                     TILED_VEC_BYTES);
        L->nk = 1;
        L->flops = o->u.gen.flops;
        break;
    }
    case OP_COLLECTIVE:         /* the run's collective engine (models/coll.c) runs it */
        L->nk = 0;
        break;
    case OP_KIND_COUNT:
        SIM_CHECK(0);
    }
    if (o->pass != PASS_FWD && o->kind != OP_ATTENTION && o->fixed_s < 0)
        lower_backward(c, o, L);
    /* (a weight gradient, dB = A^T dC, reads no weights) */
    if (spill_frac > 0 && o->kind == OP_GEMM && o->pass != PASS_WGRAD && L->nk < TILED_MAX_KERNELS)
        lower_spill(c, o, spill_frac, L);
}
