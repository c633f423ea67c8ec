/* lower_gemm.c: GEMMs lowered to kernels: the tile, pipeline depth and
 * split-K a library's heuristic picks, and matrix-vector products.
 *
 * What it models.  A grid of CTAs, each owning an output tile and looping
 * over k in k-steps.  Candidate tiles are scored with a quick per-wave
 * estimate (as library heuristics do: compute, DRAM with A re-read when B
 * does not fit the first cache, the first cache's port, split-K partials,
 * the pipeline fill), bounded by shared-memory and register capacity; the
 * winner is then simulated in full (runner.c).  Split-K CTAs exchange fp32
 * partials through L2.  GEMMs with M up to TILED_GEMV_MAX_M run as GEMV
 * kernels: B streamed through registers with FMAs on the vector pipe.
 *
 * What it ignores: a library's autotuned choice for a shape (the heuristic
 * is one rule for every library), stream-K and other persistent GEMM
 * schedules, epilogue fusion.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "tiled.h"

#define TILED_GEMV_MAX_M 4        /* GEMMs with M up to this run as GEMV kernels */

/* Widest load (1, 2, 4, 8 or 16 bytes) a GEMM kernel can use: the row
 * lengths of A (k elements) and B and C (n elements) must be multiples of
 * it, or libraries fall back to narrower loads (cuBLAS/CUTLASS "align1"
 * kernels).  A narrower load moves fewer bytes per load instruction, so the
 * same tile takes that many more requests through the SM's L2 port; the
 * port's bytes per cycle are scaled by width / 16 (runner.c
 * wave_begin).  Returned as that fraction. */
double lower_gemm_load_frac(uint64_t n, uint64_t k, double eb)
{
    double w = 16.0;
    while (w > eb && w >= 2.0 &&
           ((double)k * eb / w != floor((double)k * eb / w) ||
            (double)n * eb / w != floor((double)n * eb / w)))
        w /= 2.0;
    return w / 16.0;
}

static double gemm_estimate(const struct hw_config *c, const struct gemm_shape *s,
                            uint32_t tm, uint32_t tn, uint32_t tk, uint32_t split,
                            uint32_t cpu, struct kplan *p)
{
    double eb = dtype_bytes(s->dt, 1.0);
    enum dtype mdt = unit_matrix_type(c, s->dt);
    uint64_t gm = ceil_div(s->m, tm), gn = ceil_div(s->n, tn);
    uint64_t ctas = gm * gn * s->b * split;
    uint64_t kper = ceil_div(s->k, split);
    uint32_t steps = (uint32_t)ceil_div(kper, tk);
    uint64_t slots = (uint64_t)c->units * cpu;
    uint64_t waves = ceil_div(ctas, slots);
    double rows_a = dmin((double)tm, (double)s->m);
    double cols_b = dmin((double)tn, (double)s->n);
    double a_step = rows_a * tk * eb, b_step = cols_b * tk * s->b_bytes;

    /* the padded tile on a GPU; on a systolic unit, the folds of the rows
     * the tile really streams */
    double mstep = (c->sa_rows == 0 ? 2.0 * tm * tn * (double)tk
                                    : unit_systolic_flops(c, rows_a, tk, tn) +
                                          unit_systolic_fill_flops(c) / steps) * s->math_scale;
    /* quick estimate, only to choose */
    double cta_flops = mstep * steps;
    double per_unit = unit_gemm_simt(c, s->dt) ? unit_vector_rate(c, unit_simt_type(c, s->dt))
                                          : unit_matrix_rate(c, mdt);
    double active = (double)umin(ctas, slots);
    double units_busy = dmin((double)c->units, ceil(active / cpu));
    double cpu_eff = active / units_busy;
    double t_comp = waves * cpu_eff * cta_flops / per_unit;
    double dram_bytes = (double)s->b * ((double)s->m * s->k * eb + (double)s->k * s->n * s->b_bytes);
    /* A is re-read once per wave-column of B that does not fit in L2 */
    double b_bytes = (double)s->k * s->n * s->b_bytes * s->b;
    if (b_bytes > cfg_first_cache(c)->capacity_bytes * TILED_CACHE_USABLE && waves > 1)
        dram_bytes += (double)s->b * s->m * s->k * eb * dmin((double)waves - 1, (double)gn);
    dram_bytes += (double)s->b * s->m * s->n * s->out_bytes;
    double dram_bw = level_rate(cfg_dram(c));
    double little = units_busy *
                    (c->sa_rows ? (double)c->eff_inflight_bytes_per_unit
                                : dmin(cpu * (double)(p->stages - 1) * (a_step + b_step),
                                       (double)cfg_smem(c)->capacity_bytes)) /
                    ((double)cfg_dram(c)->eff_loaded_latency_ps * 1e-12);
    double t_dram = dram_bytes / dmin(dram_bw, little);
    /* the L2 serves each panel once per cluster (TMA multicast); the SMs'
     * ports still take every byte */
    double l2_bytes = (double)ctas * steps * (a_step + b_step);
    double port_bw = units_busy * cfg_first_cache(c)->port_bytes_per_cycle_per_unit * s->load_frac * c->clock_hz;
    double l2_bw = dmin(cfg_first_cache(c)->bw_bytes_per_s, port_bw);
    double share = 1.0;
    if (p->cl_m > 1 || p->cl_n > 1)
        share = (a_step / dmax(1.0, p->cl_n) + b_step / dmax(1.0, p->cl_m)) / (a_step + b_step);
    /* a 2-SM MMA pair (tcgen05): each SM receives only its half of B */
    double port_bytes = p->mma_pair ? l2_bytes * share : l2_bytes;
    double t_l2 = share < 1.0 ? dmax(l2_bytes * share / cfg_first_cache(c)->bw_bytes_per_s, port_bytes / port_bw)
                              : l2_bytes / l2_bw;
    double t_split = split > 1 ? (double)ctas * tm * tn * 4.0 * 2.0 / cfg_first_cache(c)->bw_bytes_per_s : 0;
    /* pipeline fill: once per wave with one CTA per SM, once overall when
     * SMs hold two CTAs and overlap one's prologue with the other's loop */
    double t_pro = (double)cfg_dram(c)->latency_ps * 1e-12 +
                   (p->stages - 1) * (a_step + b_step) * units_busy * cpu / l2_bw;
    double t_fill = t_pro * (cpu >= 2 ? 1.0 : (double)waves);
    /* a soft maximum: between two tiles with the same bottleneck time,
     * prefer the one whose other resources have more slack */
    double t = cbrt(t_comp * t_comp * t_comp + t_dram * t_dram * t_dram + t_l2 * t_l2 * t_l2) +
               t_split + t_fill;

    p->gm = gm;
    p->gn = gn;
    p->gb = s->b * split;
    p->ksteps = steps;
    p->a_step = a_step;
    p->b_step = b_step;
    p->mflops_step = mstep;
    return t;
}

/* The k-step of a tile, elements, for a k-step of tkb bytes of eb-byte
 * elements.  A systolic unit takes one array height of k per step (ws: a
 * shorter step would leave rows of the array idle; os: a block's drain
 * takes that long), or as much of it as the unit's buffers hold for the
 * smallest tile (16 x 64, two stages). */
static uint32_t gemm_tk(const struct hw_config *c, uint32_t tkb, double eb)
{
    uint32_t tk = (uint32_t)dmax(16.0, tkb / eb);
    if (c->sa_rows) {
        tk = c->sa_rows;
        while (tk > 16 && 2.0 * (16 + 64) * tk * eb > (double)cfg_smem(c)->capacity_bytes)
            tk /= 2;
    }
    return tk;
}

/* A GEMM kernel on Blackwell's tcgen05 path (the chip has it and the
 * stack's library issues on a TMA path): the tensor core reads both
 * operand tiles from shared memory itself, once per MMA, and keeps the
 * accumulator in tensor memory (TMEM), not in registers (PTX ISA,
 * tcgen05.mma: A from TMEM or shared memory, B from shared memory, D in
 * TMEM; CUTLASS's sm100 GEMMs, KernelTmaWarpSpecialized*Sm100).  A warp
 * tile's operand fetches into registers (mma.sync, wgmma) are not there. */
static int gemm_tmem(const struct hw_config *c, const struct gemm_shape *s)
{
    return c->matrix_path_frac[MP_TCGEN05] > 0 && !c->gemm_no_tma && c->sa_rows == 0 &&
           !unit_gemm_simt(c, s->dt);
}

/* The plan of candidate cand (a tm x tn x tk tile, its stages, split sp),
 * now the best: what the estimate does not fill in. */
static void gemm_keep(const struct hw_config *c, const struct gemm_shape *s, struct kplan *best,
                      const struct kplan *cand, uint32_t tm, uint32_t tn, uint32_t tk,
                      uint32_t stages, uint32_t sp)
{
    double eb = dtype_bytes(s->dt, 1.0);
    *best = *cand;
    snprintf(best->what, sizeof best->what, "gemm");
    best->swizzle = 8;
    best->pro_bytes = 0;
    double wm = dmin(64.0, tm), wn = dmin(128.0, tn);
    best->smem_step = tk * eb * (tm * (double)tn / wn + tm * (double)tn / wm);
    if (gemm_tmem(c, s))
        best->smem_step = tk * ((double)tm * eb + (double)tn * s->b_bytes);
    /* a systolic array reads its operands from the staging buffers once a
     * fold: ws, the k x n weights once and the streamed rows once a fold
     * column; os, each operand once a block of outputs it feeds (models/
     * systolic.c's SRAM reads); no warp tiles re-read them */
    if (c->sa_rows && !unit_gemm_simt(c, s->dt))
        best->smem_step = cand->a_step * ceil((double)tn / c->sa_cols) +
                          cand->b_step * (c->sa_os ? ceil(dmin(tm, (double)s->m) / c->sa_rows) : 1.0);
    best->store_end = sp > 1 ? 0 : dmin(tm, (double)s->m) * dmin(tn, (double)s->n) * s->out_bytes;
    best->l2_only_end = sp > 1 ? tm * (double)tn * 4.0 * 2.0 : 0;
    if (sp > 1)
        best->store_end = dmin(tm, (double)s->m) * dmin(tn, (double)s->n) *
                          s->out_bytes / sp;
    best->inflight_cta = (stages - 1) * (best->a_step + best->b_step);
    best->async_copy = 1;
    best->mdt = unit_matrix_type(c, s->dt);
    best->vdt = DT_FP32;
    if (unit_gemm_simt(c, s->dt)) {
        /* FMAs on the vector pipe: the tile's own work, no
         * array folding */
        best->vflops_step = 2.0 * tm * tn * (double)tk;
        best->mflops_step = 0;
        best->vdt = unit_simt_type(c, s->dt);
    }
    /* quantised weights are dequantised as each B tile is loaded; W4A4
     * activations are quantised once each, the work shared by the gn CTAs
     * of a row of tiles (a fused prologue) */
    best->vflops_step += dmin(tn, (double)s->n) * tk * s->deq_ops;
    if (s->aq_ops > 0)
        best->vflops_step += dmin(tm, (double)s->m) * tk * s->aq_ops / (double)best->gn;
    best->dram_cost = 1.0;
    best->load_frac = s->load_frac;
    char cl[16] = "";
    if (cand->cl_m > 1 || cand->cl_n > 1)
        snprintf(cl, sizeof cl, " c%ux%u", cand->cl_m, cand->cl_n);
    snprintf(best->tile, sizeof best->tile, "%ux%ux%u s%u split%u%s%s",
             tm, tn, tk, stages, sp, s->load_frac < 1 ? " narrow" : "", cl);
}

void lower_gemm_plan(const struct hw_config *c, struct kplan *best, const struct gemm_shape *s)
{
    static const uint32_t tms[] = {16, 32, 64, 128, 256};
    static const uint32_t tns[] = {32, 64, 128, 256};
    static const uint32_t splits[] = {1, 2, 3, 4, 6, 8, 12, 16};
    double eb = dtype_bytes(s->dt, 1.0);
    double best_t = INFINITY;
    /* thread-block clusters: on a chip with TMA multicast, for kernels on a TMA path
     * (not an mma_sync library's, nor SIMT FMAs); on a systolic chip that
     * says compute.cluster_multicast_ctas, arrays sharing an operand read;
     * none on a chip with fewer units than a cluster (a what-if) */
    uint32_t K = c->cluster_multicast_ctas;
    uint32_t ncl = K >= 2 && K <= c->units && (c->sa_rows || !c->gemm_no_tma) && !unit_gemm_simt(c, s->dt) ? 3 : 1;
    int tmem = gemm_tmem(c, s);
    /* relax: on a chip whose shared memory or registers hold no tile at all
     * (a config typo, or a tiny NPU buffer), take the tiles as if they fit
     * (two stages, registers unchecked) rather than have no plan */
    for (int relax = 0; relax < 2 && !isfinite(best_t); relax++)
    for (uint32_t tkb = 64; tkb <= 128; tkb *= 2) {    /* k-step of 64 or 128 bytes */
    uint32_t tk = gemm_tk(c, tkb, eb);
    if (c->sa_rows && tkb > 64)
        break;
    for (size_t i = 0; i < sizeof tms / sizeof tms[0]; i++) {
        uint32_t tm = tms[i];
        if (tm > 16 && (double)s->m <= tm / 2.0)
            continue;           /* no tile much taller than M */
        for (size_t j = 0; j < sizeof tns / sizeof tns[0]; j++) {
            uint32_t tn = tns[j];
            /* no tile much wider than N; in the relaxed pass 64 stays
             * allowed: with the minimum tile area below, a GEMM with
             * m <= 16 and n <= 32 would otherwise have no tile at all */
            if (tn > (relax ? 64u : 32u) && (double)s->n <= tn / 2.0)
                continue;
            if ((uint64_t)tm * tn < 16 * 64 || (uint64_t)tm * tn > 128 * 256)
                continue;
            uint32_t threads = (uint64_t)tm * tn >= 128 * 128 ? 256 : 128;
            uint32_t stages = 0;
            double smem = 0;
            for (uint32_t st = 4; st >= 2; st--) {
                smem = st * (double)(tm + tn) * tk * eb;
                if (smem <= (double)cfg_smem(c)->capacity_bytes) {
                    stages = st;
                    break;
                }
            }
            if (stages == 0 && relax)
                stages = 2;
            if (stages == 0)
                continue;
            /* the fp32 accumulators (and the epilogue's staging) in
             * registers; on tcgen05 they are in TMEM */
            double regs = (tmem ? 0.0 : tm * (double)tn * 4.0 * 1.5) + threads * 64.0 * 4.0;
            struct kplan cand;
            memset(&cand, 0, sizeof cand);
            kplan_occupancy(c, &cand, threads, smem, regs);
            if (regs > (double)cfg_regs(c)->capacity_bytes && !relax)
                continue;
            cand.stages = stages;
            for (uint32_t cl = 0; cl < ncl; cl++) {
            /* a cluster of K CTAs along m (sharing B) or along n (sharing A), when the
             * grid has K row or column blocks to put in it */
            cand.cl_m = cl == 1 ? K : 1;
            cand.cl_n = cl == 2 ? K : 1;
            /* the 2-SM MMA takes M = 128 or 256 a pair: 64 or 128 rows an SM;
             * on a systolic chip a cluster is arrays that take one read of
             * the operand they share through one port (a Gaudi MME engine's
             * two cores), so each receives only its share as well */
            cand.mma_pair = (tmem && cand.cl_m == 2 && (tm == 64 || tm == 128)) ||
                            (c->sa_rows && cl != 0);
            if ((cl == 1 && ceil_div(s->m, tm) < K) || (cl == 2 && ceil_div(s->n, tn) < K))
                continue;
            for (size_t k = 0; k < sizeof splits / sizeof splits[0]; k++) {
                uint32_t sp = splits[k];
                if (sp > 1 && s->k / sp < 4ull * tk)
                    break;
                double t = gemm_estimate(c, s, tm, tn, tk, sp, cand.ctas_per_unit, &cand);
                /* prefer the larger tile / smaller split / no cluster on near-ties (< 1%) */
                if (t < best_t * 0.99) {
                    best_t = t;
                    gemm_keep(c, s, best, &cand, tm, tn, tk, stages, sp);
                }
            }
            }
        }
    }
    }
    SIM_CHECK(isfinite(best_t));
    best->rate_frac = c->gemm_rate_frac;    /* a stack's GEMM library (0: the chip's own) */
}

double lower_gemm_out_bytes(enum dtype t)
{
    switch (t) {
    case DT_FP64: return 8;
    case DT_FP32: case DT_TF32: return 4;
    case DT_FP16: case DT_BF16:                 /* 16-bit out */
    case DT_FP8_E4M3: case DT_FP8_E5M2: case DT_INT8: case DT_INT4: /* dequantised to 16-bit */
    case DT_MXFP6: case DT_NVFP4: case DT_MXFP4:
    case DT_COUNT:
        break;
    }
    return 2;
}

/* Kernel p reads wb bytes of weights (decoded) and ab of activations: with
 * entropy-coded weights (wcoded, decoded as wdec), the weights' share of
 * its DRAM reads passes the chip's decoder (runner.c). */
static void gemm_coded(struct kplan *p, enum wfmt wcoded, enum wfmt wdec, double wb, double ab)
{
    if (wdec == WF_NONE || wb + ab <= 0)
        return;
    p->code_frac = wb / (wb + ab);
    p->code_ratio = wfmt_bits(wcoded) / wfmt_bits(wdec);
}

/* Block-scaled weights (wfmt_matrix_type: nvfp4, mxfp4) on a chip whose
 * matrix pipe has a rate for their type run W4A4, as TensorRT-LLM and vLLM
 * run NVFP4/MXFP4 checkpoints on Blackwell (CUTLASS block-scaled GEMMs):
 * the activations are quantised to the same type (an absmax over each
 * block, a scale and a convert an element: 3 vector ops, an a priori count
 * like wfmt.h's, not fitted), A and B are read at its bits with their
 * scales, and the MMA runs at its rate with nothing to dequantise.  The
 * output stays 16-bit.  On any other chip (Hopper, Ampere, AMD) the format
 * is weight-only, as the int4 formats are.  One rule, keyed on the chip's
 * matrix rates, not on the chip. */
#define TILED_ACT_QUANT_OPS 3.0

static void gemm_w4a4(const struct hw_config *c, enum wfmt wf, struct gemm_shape *s)
{
    enum dtype qt = wfmt_matrix_type(wf);
    if (qt == DT_COUNT || c->matrix_flops_per_cycle[qt] <= 0)
        return;
    s->dt = qt;
    s->b_bytes = dtype_bytes(qt, 1.0);
    s->deq_ops = 0;
    s->aq_ops = TILED_ACT_QUANT_OPS;
}

/* A GEMM op's kernel: the tiled GEMM (lower_gemm_plan), or a GEMV for
 * M <= TILED_GEMV_MAX_M; weights may be quantised or 2:4 sparse.  A GEMV
 * streams the weights through the vector pipe, so block-scaled weights
 * are dequantised there on every chip (decode at batch <= 4 is bound by
 * their bytes either way). */
void lower_gemm_op(const struct hw_config *c, const struct op *o, struct lowered *L)
{
    double eb = dtype_bytes(o->dtype, 1.0);
    enum dtype vdt = unit_vector_type(c, o->dtype);
    /* entropy-coded weights: the kernel reads them decoded (their format's
     * bytes); DRAM holds wfmt_bits(coded) / wfmt_bits(decoded) of that */
    enum wfmt wcoded = o->u.gemm.weights, wdec = wfmt_decoded(wcoded);
    enum wfmt wf = wdec != WF_NONE ? wdec : wcoded;
    struct gemm_shape s = {o->u.gemm.m, o->u.gemm.n, o->u.gemm.k, o->u.gemm.batch,
                           o->dtype, lower_gemm_out_bytes(o->dtype),
                           wf != WF_NONE ? wfmt_bits(wf) / 8.0 : eb, wfmt_dequant_ops(wf), 1.0,
                           1.0, 0};
    if (s.m > TILED_GEMV_MAX_M)
        gemm_w4a4(c, wf, &s);
    if (o->u.gemm.sparse) {
        /* 2:4 compressed B: half the values and a 2-bit index per kept
         * one (1 bit per dense element); the sparse tensor-core path
         * skips the zeros where the chip has one */
        s.b_bytes = 0.5 * s.b_bytes + 1.0 / 8.0;
        enum dtype mt = unit_matrix_type(c, s.dt);
        if (c->sparse_matrix_flops_per_cycle[mt] > 0)
            s.math_scale = c->matrix_flops_per_cycle[mt] / c->sparse_matrix_flops_per_cycle[mt];
    }
    /* the narrow-load rule is about GPU libraries' kernels; a systolic
     * chip's DMA and quantised weights (packed blocks) are not bound by it */
    if (c->sa_rows == 0 && wf == WF_NONE)
        s.load_frac = lower_gemm_load_frac(s.n, s.k, eb);
    L->flops = 2.0 * s.m * (double)s.n * s.k * s.b;
    L->nk = 1;
    if (s.m <= TILED_GEMV_MAX_M) {
        /* matrix-vector: libraries stream B through registers with FMAs
         * on the vector pipe; no tiles, no tensor cores, no reuse;
         * quantised weights are dequantised once each */
        double w = (double)s.k * s.n * s.b;
        double wb = w * s.b_bytes;
        double ab = (double)s.m * s.k * eb * s.b, ob = (double)s.m * s.n * s.out_bytes * s.b;
        kplan_stream(c, &L->k[0], "gemv", wb + ab, ob, L->flops + w * s.deq_ops, vdt, 0, 1,
                     TILED_VEC_BYTES);
        /* a stack's own matrix-vector kernel for 16-bit weights (llama.cpp's
         * dequantize_mul_mat_vec: a warp a row, two values a thread a
         * step) keeps fewer bytes in flight than the grid-stride loop
         * does; by Little's law it then streams at units x that / the
         * loaded latency.  One row only (llama.cpp sends batches of 2-4 to
         * cuBLAS); quantised weights' kernels keep their own. */
        if (c->gemv_inflight_bytes_per_unit > 0 && wf == WF_NONE && s.m == 1 && eb == 2.0)
            L->k[0].inflight_cta = dmin(L->k[0].inflight_cta,
                                        c->gemv_inflight_bytes_per_unit / L->k[0].ctas_per_unit);
        gemm_coded(&L->k[0], wcoded, wdec, wb, ab);
        return;
    }
    if (c->gemm_deq_kernel_min_m > 0 && wf != WF_NONE && s.aq_ops == 0 && !o->u.gemm.sparse &&
        s.m >= c->gemm_deq_kernel_min_m) {
        /* the stack's library dequantises the weights in a kernel of its own,
         * written out at the activations' type, and a 16-bit GEMM reads them
         * (llama.cpp's prompt path: dequantize_block_* then cublasGemmEx) */
        double w = (double)s.k * s.n * s.b;
        kplan_stream(c, &L->k[0], "dequant", w * s.b_bytes, w * eb, w * s.deq_ops, vdt, 0, 1,
                     TILED_VEC_BYTES);
        gemm_coded(&L->k[0], wcoded, wdec, w * s.b_bytes, 0);
        s.b_bytes = eb;
        s.deq_ops = 0;
        s.load_frac = c->sa_rows == 0 ? lower_gemm_load_frac(s.n, s.k, eb) : 1.0;
        lower_gemm_plan(c, &L->k[1], &s);
        L->nk = 2;
        return;
    }
    lower_gemm_plan(c, &L->k[0], &s);
    /* the tiled kernel's DRAM reads taken in the shares of its operands'
     * footprints (re-reads of either are not told apart) */
    gemm_coded(&L->k[0], wcoded, wdec, (double)s.k * s.n * s.b * s.b_bytes, (double)s.m * s.k * s.b * eb);
}
