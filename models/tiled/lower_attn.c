/* lower_attn.c: attention ops lowered to kernels, as each library runs
 * them (docs/attention.md).
 *
 * What it models.  Fused attention is FlashAttention-style (plan_flash: a
 * CTA owns Br query rows of one KV head and streams K and V in Bc-row
 * blocks, the softmax online), with each library's matrix path, tile,
 * softmax issue and dQ accumulation (attn_libs); an impl a chip cannot run
 * falls back as PyTorch's SDPA does.  Unfused attention (naive, math,
 * megatron) is PyTorch's or Megatron-LM's list of batched GEMMs and row
 * kernels, every S-sized tensor through HBM.  FLOPs are counted as
 * FlashAttention's benchmarks count them.
 *
 * What it ignores: FlashAttention-4 and FlashInfer's own kernels (taken as
 * cuDNN's), AOTriton on ROCm (taken as FA2's port), the libraries' tile
 * choices beyond FA3's (lib_tile).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tiled.h"

/* Dropout's random numbers in a fused kernel, vector-pipe slots a score
 * (DROPOUT_RNG_SLOTS, tiled.h, says where the figure comes from) */
#define FUSED_DROPOUT_SLOTS 4.0

/* FlashAttention-2 style: a CTA owns Br query rows of one KV head (GQA
 * query heads of a group are packed into the rows) and streams K and V in
 * Bc-row blocks; S = QK^T and PV on the matrix pipe, the online softmax on
 * the vector pipe.  Short queries split the KV range over CTAs
 * (flash-decoding) so the grid fills the SMs. */
/* Query rows of a fused tile: the tile's br, or the rows there are
 * (rounded down to a power of two, at least 16). */
static uint32_t tile_rows(uint32_t br_max, uint64_t rows)
{
    uint32_t br = br_max;
    while (br > 16 && rows < br)
        br = br > 128 ? 128 : br / 2;
    return br;
}

/* per_head: the query heads of a GQA group are not packed: each has CTAs
 * of its own (row blocks of the KV head's grid), which read the KV head's
 * K and V themselves, so the group's CTAs share those blocks only as the
 * caches keep them (plan_mmha). */
static void plan_flash_tile_heads(const struct hw_config *c, struct kplan *p, const struct op *o,
                                  uint32_t br_max, uint32_t bc, int bwd, int per_head)
{
    memset(p, 0, sizeof *p);
    snprintf(p->what, sizeof p->what, "flash");
    double eb = dtype_bytes(o->dtype, 1.0);
    uint64_t d = o->u.attn.head_dim;
    uint64_t group = o->u.attn.heads / o->u.attn.kv_heads;
    uint64_t heads_per_cta = per_head ? 1 : group;
    uint64_t rows = o->u.attn.q_len * heads_per_cta;     /* query rows a CTA's tile packs */
    uint32_t br = tile_rows(br_max, rows);
    uint64_t qt = ceil_div(rows, br) * (group / heads_per_cta);  /* row blocks per KV head */
    uint64_t base = o->u.attn.batch * o->u.attn.kv_heads * qt;
    /* average KV length a query tile attends to */
    double kv = (double)o->u.attn.kv_len;
    if (o->u.attn.causal) {
        double q = (double)o->u.attn.q_len;
        double prefix = kv - q;             /* cached tokens all queries see */
        kv = dmax(1.0, prefix + (q + br / (double)heads_per_cta) / 2.0);
        if (kv > (double)o->u.attn.kv_len)
            kv = (double)o->u.attn.kv_len;
    }
    uint64_t kblocks = (uint64_t)ceil(kv / bc);
    uint64_t split = 1;
    if (base < c->units && kblocks >= 8) {
        split = ceil_div(c->units, base);
        split = umin(split, kblocks / 4 > 0 ? kblocks / 4 : 1);
    }
    uint64_t steps = ceil_div(kblocks, split);
    uint32_t threads = br >= 128 ? 256 : 128;
    double smem = (br * (double)d + 2.0 * 2.0 * bc * d) * eb;  /* Q + double-buffered K,V */
    double regs = br * (double)bc * 4.0 + br * (double)d * 4.0 + threads * 64.0 * 4.0;
    kplan_occupancy(c, p, threads, smem, regs);
    p->gm = qt;
    p->gn = 1;
    p->gb = o->u.attn.batch * o->u.attn.kv_heads * split;
    p->swizzle = (uint32_t)umin(qt, 64);
    p->ksteps = (uint32_t)steps;
    p->stages = 2;
    double q_rows = dmin((double)br, (double)rows);
    p->pro_bytes = q_rows * d * eb;
    p->a_step = 0;
    /* K and V block, shared by the KV head's CTAs, in the cache's type */
    p->b_step = 2.0 * bc * d * dtype_bytes(o->u.attn.kv_dtype, 1.0);
    /* a paged cache: the block's rows come from the pages the sequence's
     * block table names, one 4-byte entry a page (vLLM's layout, FA2's
     * block_table); a page's rows of one head are contiguous (page x
     * head_dim elements, whole 32-byte sectors), so the gather costs the
     * table reads, and its latency hides behind the pipelined loads */
    if (o->u.attn.page_size > 0)
        p->b_step += 4.0 * ceil((double)bc / o->u.attn.page_size);
    /* S = Q K^T, then O += P V: two products per key block */
    p->mflops_step = c->sa_rows == 0 ? 4.0 * br * (double)bc * d
                                     : unit_systolic_flops(c, q_rows, (double)d, (double)bc) +
                                           unit_systolic_flops(c, q_rows, (double)bc, (double)d) +
                                           unit_systolic_fill_flops(c) / (double)steps;
    p->vflops_step = 6.0 * q_rows * bc;         /* scale, max, exp, sum, rescale */
    if (o->u.attn.dropout > 0)                  /* the mask drawn per score (each pass) */
        p->vflops_step += FUSED_DROPOUT_SLOTS * q_rows * bc;
    if (bwd) {
        /* a systolic chip's fused backward: the same tiles with the five
         * products of the backward (2.5x the forward's) and the recomputed
         * softmax plus dS (1.5x); an approximation, no TPU measurement
         * checks it */
        p->mflops_step *= 2.5;
        p->vflops_step *= 1.5;
    }
    if (c->sa_rows) {
        /* a few query rows fill a systolic array poorly: the products run on
         * the vector unit when that is faster (decode attention on a TPU,
         * any attention on an array without the op's type) */
        double useful = (bwd ? 10.0 : 4.0) * q_rows * (double)bc * d;
        if (useful / unit_vector_rate(c, DT_FP32) < p->mflops_step / unit_matrix_rate(c, unit_matrix_type(c, o->dtype))) {
            p->vflops_step += useful;
            p->mflops_step = 0;
        }
    }
    p->smem_step = (2.0 * br * bc + 2.0 * bc * d) * eb;
    p->store_end = q_rows * d * eb + (split > 1 ? q_rows * (d + 2.0) * 4.0 : 0);
    p->inflight_cta = p->b_step;
    p->async_copy = 1;
    p->mdt = unit_matrix_type(c, o->dtype);
    p->vdt = DT_FP32;
    p->dram_cost = 1.0;
    snprintf(p->tile, sizeof p->tile, "Br%u Bc%u split%llu", br, bc, (unsigned long long)split);
}

static void plan_flash_tile(const struct hw_config *c, struct kplan *p, const struct op *o,
                            uint32_t br_max, uint32_t bc, int bwd)
{
    plan_flash_tile_heads(c, p, o, br_max, bc, bwd, 0);
}

static void plan_flash_bc(const struct hw_config *c, struct kplan *p, const struct op *o, uint32_t bc,
                          int bwd)
{
    plan_flash_tile(c, p, o, 128, bc, bwd);
}

/* FlashAttention-2's key block: 64 keys, 32 above head dim 128 */
static uint32_t flash_bc(uint64_t d)
{
    return d > 128 ? 32 : 64;
}

/* The fused kernel's key block: FlashAttention-2's on a GPU; on a
 * systolic chip it spans the array's columns at least (S = Q K^T puts a
 * block's keys across them, and a narrower block would leave columns idle
 * on every fold), forward and backward alike */
static uint32_t fused_bc(const struct hw_config *c, uint64_t d)
{
    uint32_t bc = flash_bc(d);
    return c->sa_rows && c->sa_cols > bc ? c->sa_cols : bc;
}

static void plan_flash(const struct hw_config *c, struct kplan *p, const struct op *o)
{
    plan_flash_bc(c, p, o, fused_bc(c, o->u.attn.head_dim), 0);
}

/* A per-query-head decode kernel (mmha): TensorRT-LLM's masked multi-head
 * attention (before XQA) and vLLM 0.2's paged attention launch a CTA per
 * (query head, sequence), whatever the KV heads: on a GQA model each of a
 * group's query heads reads the KV head's K and V itself.  Those reads
 * share blocks only through the caches (the group's CTAs are row blocks of
 * one KV head's grid, plan_flash_tile_heads), so the L2 sees the group's
 * bytes group times and DRAM what the cache model lets through.  Its dot
 * products and softmax run on the CUDA cores (FP32 FMAs), a key block of
 * 64 rows a step. */
static void plan_mmha(const struct hw_config *c, struct kplan *p, const struct op *o)
{
    plan_flash_tile_heads(c, p, o, 16, 64, 0, 1);
    double q_rows = (double)umin(o->u.attn.q_len, 16), bc = 64.0, d = (double)o->u.attn.head_dim;
    p->mflops_step = 0;
    p->vflops_step = (4.0 * d + 5.0) * q_rows * bc;    /* q.k and p.v, then the softmax's five */
    p->sfu_step = q_rows * bc;
    if (c->sfu_ops_per_cycle <= 0) {
        p->vflops_step += p->sfu_step;
        p->sfu_step = 0;
    }
    p->serial = 1;
    p->smem_step = 0;               /* K and V go from registers to the FMAs */
    p->async_copy = 0;
    snprintf(p->what, sizeof p->what, "mmha");
}

/* FlashAttention-1's key block (its fmha kernels, flash-attention v1.0.9,
 * csrc/flash_attn/src/fmha_{fwd,bwd}_hdim{32,64,128}.cu): 256 keys up to
 * head dim 64 (128 when the keys are that short), 128 at head dim 128 */
#define FA1_FWD_WARPS_N 4.0     /* warps splitting a key block: forward, backward */
#define FA1_BWD_WARPS_N 8.0
static uint32_t fa1_bc(uint64_t d, uint64_t kv)
{
    return d <= 64 && kv >= 256 ? 256 : 128;
}

/* ---------------------------------------------------------------- attention */

/* What each attention library issues (docs/attention.md).  A GPU kernel
 * runs its matrix products on one instruction path of the chip (its rate:
 * compute.matrix_paths) and its softmax on the vector pipe and the
 * special-function unit (one exp per score).  FA1, FA2, Triton and xFormers
 * issue a step's softmax after its GEMMs (a warp waits for one before the
 * other); FA3 and cuDNN on Hopper overlap them (ping-pong warpgroups).
 * `issue` is the share of the issue rate a library's kernels reach beyond
 * that (register pressure, shuffles, synchronisation): fitted per library
 * on a third of its rows of shared/data's FA group (docs/calibration.md). */
/* How a fused backward accumulates dQ over the key blocks' CTAs. */
enum dq_mode {
    DQ_HBM,         /* read and written back in fp32 in HBM (FA1) */
    DQ_ATOMIC,      /* fp32 atomics in L2 */
    DQ_COPIES       /* on mma_sync, one copy per 128-key block in the input type, zeroed
                     * before and summed after (triton.ops.flash_attention's
                     * sequence-parallel backward, as the FA benchmark runs it); on an
                     * async path (another kernel) DQ_ATOMIC */
};
#define DQ_COPY_BLOCK 128   /* DQ_COPIES' key block and query block */

struct attn_lib {
    enum attn_impl impl;
    enum matrix_path path[3];   /* the paths it can issue on, preferred first (MP_COUNT: none) */
    int serial;                 /* a step's softmax waits for its GEMMs */
    int o_roundtrip;            /* FA1: O rescaled every KV block and exchanged between warps */
    enum dq_mode dq;            /* backward: how dQ is accumulated over the key blocks */
    double issue_fwd, issue_bwd;
    double issue_async;         /* forward issue factor when it runs on an async path
                                 * (wgmma, tcgen05): a different kernel; 0 = issue_fwd */
    double sfu_serial;          /* share of its exponentials that do not overlap its GEMMs
                                 * (an overlapped kernel; 0 = all overlap) */
    int persistent;             /* its forward runs a persistent tile scheduler on an async path */
    int wgmma_fa3;              /* on wgmma its kernels are FA3's: the forward's issue factor
                                 * and exponential overlap (attn_on_wgmma), the backward's
                                 * tiles and schedule (lib_tile_bwd) */
};


static const struct attn_lib attn_libs[] = {
    /* issue: scripts/fit_attention.py, median measured/predicted over at
     * most a third of each library's FA rows (seqlen 2048 and 4096) of
     * shared/data, A100, fwd+bwd; the rest are held out */
    {ATTN_FA1, {MP_MMA_SYNC, MP_COUNT, MP_COUNT}, 1, 1, DQ_HBM, 0.418, 0.418, 0, 0, 0, 0},  /* 8 of 24 rows */
    {ATTN_FA2, {MP_MMA_SYNC, MP_MFMA, MP_COUNT}, 1, 0, DQ_ATOMIC, 0.760, 0.760, 0, 0, 0, 0},   /* 7 of 21 rows */
    /* FA3 and cuDNN: no A100 measurement; their Hopper kernels overlap the
     * softmax with the GEMMs.  cuDNN is taken at FA2's issue efficiency,
     * but on wgmma its kernels are taken as FA3's (wgmma_fa3: both are
     * warp-specialised wgmma kernels; cuDNN's are closed source), forward
     * and backward.  FA3's forward values on the B200's tcgen05 would cut
     * cuDNN's rate at 16k tokens from 1.23 to 1.07 PFLOP/s, under the 1.24
     * that FA4's "1613 TFLOP/s, up to 1.3x over cuDNN 9.13" implies, so
     * they stay on Hopper.  FA3
     * is Hopper's only (wgmma); cuDNN and Triton are taken to issue
     * Blackwell's tcgen05 where the chip has it (both ship Blackwell
     * kernels; which release first did is not pinned here, and no Blackwell
     * attention measurement checks the rate), else Hopper's wgmma, else
     * mma.sync */
    /* FA3's forward on wgmma: across head dims 64, 128 and 256 the FA3
     * paper's H100 rows grow as GEMM time plus most of the exponentials'
     * time, not as the longer of the two.  Its issue factor and the share
     * of its exponentials that do not overlap its GEMMs were fitted
     * together on 12 of its 36 rows (seqlen 2k and 4k of every head dim,
     * causal and not: FA3P-026/027/055/056, FA3D-026/027/055/056/073/074/
     * 091/092), taking the largest share whose factor keeps wgmma at or
     * under its data-sheet rate: 0.80 and 0.991 (fit rows 5.6% / 11.6%,
     * the 24 held out 3.1% / 21.0%).  Its forward runs a persistent tile
     * scheduler (hopper/tile_scheduler.hpp) */
    {ATTN_FA3, {MP_WGMMA, MP_COUNT, MP_COUNT}, 0, 0, DQ_ATOMIC, 0.760, 0.760, 0.991, 0.80, 1, 1},
    /* cuDNN on Hopper as FA3: checked on the FA3 paper's cuDNN rows
     * (forward 10.5% / 21.0% -> 7.4% / 15.4% at head dim 128, 37.2% /
     * 75.0% -> 24.6% / 40.3% at 64 and 256; backward 29.5% / 52.5% -> 7.1%
     * / 12.1%) and the H200's own cuDNN forward and forward+backward rows
     * (19.6% / 33.6% -> 7.1% / 19.4%), nothing fitted on them */
    {ATTN_CUDNN, {MP_TCGEN05, MP_WGMMA, MP_MMA_SYNC}, 0, 0, DQ_ATOMIC, 0.760, 0.760, 0, 0, 0, 1},
    /* Triton on Hopper is another kernel (the tutorial's, issuing wgmma):
     * its forward factor 0.66 was fitted on 4 of the 12 H100 Triton rows of
     * traces/validation/hopper-attention.csv (FA3P-014, -015, -043, -044;
     * worst of the four 3.9%); the other 8 are held out.  On the A100 the
     * factor was refitted (0.373 to 0.428) once the sequence-parallel
     * backward's dQ copies were modelled (plan_attn_bwd) */
    {ATTN_TRITON, {MP_TCGEN05, MP_WGMMA, MP_MMA_SYNC}, 1, 0, DQ_COPIES, 0.428, 0.428, 0.66, 0, 0, 0}, /* 8 of 24 rows */
    {ATTN_XFORMERS, {MP_MMA_SYNC, MP_COUNT, MP_COUNT}, 1, 0, DQ_ATOMIC, 0.355, 0.355, 0, 0, 0, 0}, /* 8 of 24 rows */
};

/* The library an impl means on chip c (flash: FlashAttention-2 on a GPU),
 * and the path it issues on; NULL for the array's own fused attention on a
 * systolic chip (flash there), for naive and math (library GEMMs). */
static const struct attn_lib *attn_lib_on(const struct hw_config *c, enum attn_impl impl,
                                          enum matrix_path *path)
{
    if (impl == ATTN_FLASH)
        impl = c->sa_rows ? ATTN_IMPL_COUNT : ATTN_FA2;
    for (size_t i = 0; i < sizeof attn_libs / sizeof attn_libs[0]; i++) {
        const struct attn_lib *a = &attn_libs[i];
        if (a->impl != impl)
            continue;
        for (int k = 0; k < 3; k++)
            if (a->path[k] < MP_COUNT && c->matrix_path_frac[a->path[k]] > 0) {
                *path = a->path[k];
                return a;
            }
        return NULL;
    }
    return NULL;
}

/* What a framework's attention entry point runs on chip c (docs/attention.md):
 *   sdpa: PyTorch's F.scaled_dot_product_attention.  On sm90/sm100 (a chip
 *         with wgmma or tcgen05) cuDNN's kernel: PyTorch prefers it there
 *         when its bundled cuDNN is newer than 9.15 (check_prefer_cudnn_
 *         attention in aten/src/ATen/native/transformers/cuda/sdp_utils.cpp,
 *         bundled from PyTorch 2.11; 2.5.1-2.10 ran the flash backend, after
 *         pytorch/pytorch#138522 made cuDNN opt-in).  Else the flash backend
 *         (FlashAttention-2) for fp16/bf16, the memory-efficient one
 *         (xFormers' CUTLASS kernel) for other types; FA2 on MFMA (ROCm's
 *         port; PyTorch's ROCm build uses AOTriton, not modelled apart).
 *   vllm: vLLM's default backend.  FlashInfer on Blackwell sm100
 *         (vllm-project/vllm#19118), taken as cuDNN's tcgen05 kernel (both
 *         overlap the softmax with the products; an approximation: no
 *         FlashInfer measurement here); FLASH_ATTN elsewhere: FA3 on Hopper,
 *         FA2 on Ampere, Ada and (CK's port) MFMA.
 * On a systolic chip both mean the array's fused kernel (flash); where
 * SDPA's fused backends cannot run, its math backend does. */
static enum attn_impl attn_resolve(const struct hw_config *c, const struct op *o)
{
    enum attn_impl impl = o->u.attn.impl;
    if (impl != ATTN_SDPA && impl != ATTN_VLLM)
        return impl;
    if (c->sa_rows)
        return ATTN_FLASH;
    int tc05 = c->matrix_path_frac[MP_TCGEN05] > 0, wg = c->matrix_path_frac[MP_WGMMA] > 0;
    if (impl == ATTN_SDPA) {
        enum attn_impl pick = tc05 || wg ? ATTN_CUDNN
                              : o->dtype == DT_FP16 || o->dtype == DT_BF16 ||
                                        c->matrix_path_frac[MP_MMA_SYNC] <= 0
                                  ? ATTN_FA2 : ATTN_XFORMERS;
        enum matrix_path path;
        return attn_lib_on(c, pick, &path) != NULL ? pick : ATTN_MATH; /* math: always there */
    }
    return tc05 ? ATTN_CUDNN : wg ? ATTN_FA3 : ATTN_FA2;
}

int lower_attn_check(const struct hw_config *c, const struct op *o, char *msg, size_t n)
{
    enum attn_impl impl = attn_resolve(c, o);
    enum matrix_path path;
    if (o->u.attn.page_size > 0 &&
        (impl == ATTN_NAIVE || impl == ATTN_MATH || impl == ATTN_MEGATRON || impl == ATTN_GGML)) {
        snprintf(msg, n, "%s%s reads K and V as contiguous tensors, not a paged cache (page_size "
                         "%u): a fused impl (flash and the libraries) reads pages",
                 op_attn_impl_name(o->u.attn.impl), impl != o->u.attn.impl ? " (math here)" : "",
                 o->u.attn.page_size);
        return -1;
    }
    if (impl == ATTN_MMHA) {
        if (c->sa_rows) {
            snprintf(msg, n, "mmha is a CUDA kernel; %s is a systolic chip (flash, naive, math and "
                             "megatron run there)", c->name);
            return -1;
        }
        if (o->pass != PASS_FWD) {
            snprintf(msg, n, "mmha is a decode kernel (forward only); a backward pass needs flash "
                             "or a library's kernel");
            return -1;
        }
        return 0;
    }
    if (impl == ATTN_GGML && o->pass != PASS_FWD) {
        snprintf(msg, n, "ggml is llama.cpp's inference attention (forward only); a backward pass "
                         "needs flash, naive, math or a library's kernel");
        return -1;
    }
    if (impl == ATTN_NAIVE || impl == ATTN_MATH || impl == ATTN_MEGATRON || impl == ATTN_GGML ||
        (impl == ATTN_FLASH && c->sa_rows))
        return 0;
    if (attn_lib_on(c, impl, &path) != NULL)
        return 0;
    char ok[192] = "naive, math, megatron, ggml, sdpa";
    size_t used = strlen(ok);
    if (c->sa_rows)
        used += (size_t)snprintf(ok + used, sizeof ok - used, ", flash");
    for (size_t i = 0; i < sizeof attn_libs / sizeof attn_libs[0] && used < sizeof ok; i++)
        if (attn_lib_on(c, attn_libs[i].impl, &path) != NULL)
            used += (size_t)snprintf(ok + used, sizeof ok - used, "%s%s",
                                     attn_libs[i].impl == ATTN_FA2 ? ", flash, " : ", ",
                                     op_attn_impl_name(attn_libs[i].impl));
    if (impl != o->u.attn.impl)     /* an alias: say what it meant here */
        snprintf(msg, n, "%s (%s on this chip) runs on none of %s's matrix paths; it can run: %s",
                 op_attn_impl_name(o->u.attn.impl), op_attn_impl_name(impl), c->name, ok);
    else
        snprintf(msg, n, "%s runs on none of %s's matrix paths; it can run: %s",
                 op_attn_impl_name(impl), c->name, ok);
    return -1;
}

/* The forward tile (query rows x keys) a library's launch code picks for
 * the head dim, where strata follows it: FlashAttention-3's
 * (hopper/flash_fwd_launch_template.h: 192 x 128 at head dim 64, 128 x 176
 * at 128, 128 x 128 causal, 128 x 80 at 256).  The others keep plan_flash's
 * 128 x flash_bc.  (FlashAttention-2's own, 128 x 128 at 64 and 64 x 64 at
 * 256 on an H100, were tried: alone they moved the A100 rows 0.6 points
 * better and the H100 head-dim-64 ones 5 worse; with its 4-warp CTAs too,
 * the H100 head-dim-128 causal rows came out 10-20% fast against the
 * mma_sync rate fitted without them.  Left for a refit of that rate.) */
static void lib_tile(const struct op *o, const struct attn_lib *a, enum matrix_path path,
                     uint32_t *br, uint32_t *bc)
{
    uint64_t d = o->u.attn.head_dim;
    if (a->impl == ATTN_FA3 && path == MP_WGMMA) {
        if (d <= 64) {
            *br = 192;
            *bc = 128;
        } else if (d <= 128) {
            *br = 128;
            *bc = o->u.attn.causal ? 128 : 176;
        } else if (d <= 256) {
            *br = 128;
            *bc = 80;
        }
    }
}

/* FlashAttention-3's backward tile, Br query rows x Bc keys by head dim
 * (hopper/flash_bwd_launch_template.h, run_mha_bwd_hdim*, sm90: 128 x 128
 * at 64, 64 x 128 at 96, 80 x 128 at 128 (64 x 128 causal), 64 x 96 at
 * 192, 64 x 80 at 256), for a library whose backward on wgmma is FA3's;
 * the others keep plan_attn_bwd's. */
static void lib_tile_bwd(const struct op *o, const struct attn_lib *a, enum matrix_path path,
                         uint32_t *br, uint32_t *bc)
{
    uint64_t d = o->u.attn.head_dim;
    if (!a->wgmma_fa3 || path != MP_WGMMA || d > 256)
        return;
    *br = d <= 64 ? 128 : d <= 96 ? 64 : d <= 128 ? (o->u.attn.causal ? 64 : 80) : 64;
    *bc = d <= 128 ? 128 : d <= 192 ? 96 : 80;
}

/* The library whose forward values (issue factor, exponential overlap) a
 * kernel of a on path takes: FA3's for one whose wgmma kernels are FA3's
 * (cuDNN on Hopper), else a's own. */
static const struct attn_lib *attn_on_wgmma(const struct attn_lib *a, enum matrix_path path)
{
    if (a->wgmma_fa3 && path == MP_WGMMA)
        for (size_t i = 0; i < sizeof attn_libs / sizeof attn_libs[0]; i++)
            if (attn_libs[i].impl == ATTN_FA3)
                return &attn_libs[i];
    return a;
}

/* A library's fused forward kernel: plan_flash's tiles, with the library's
 * path, tile, softmax issue and O round trips. */
static void plan_attn_fwd(const struct hw_config *c, struct kplan *p, const struct op *o,
                          const struct attn_lib *a, enum matrix_path path)
{
    uint32_t brm = 128, bcu = a->o_roundtrip ? fa1_bc(o->u.attn.head_dim, o->u.attn.kv_len)
                                             : flash_bc(o->u.attn.head_dim);
    lib_tile(o, a, path, &brm, &bcu);
    plan_flash_tile(c, p, o, brm, bcu, 0);
    double d = (double)o->u.attn.head_dim;
    /* plan_flash's tile */
    uint64_t rows64 = o->u.attn.q_len * (o->u.attn.heads / o->u.attn.kv_heads);
    double rows = (double)rows64;
    double br = tile_rows(brm, rows64);
    double q_rows = dmin(br, rows), bc = bcu;
    /* the softmax: one exp per score on the SFU (or the vector pipe when
     * the chip has none), five FP32 operations (scale and subtract the max,
     * running max, sum, rescale, convert) */
    p->vflops_step = (5.0 + (o->u.attn.dropout > 0 ? FUSED_DROPOUT_SLOTS : 0.0)) * q_rows * bc;
    p->sfu_step = q_rows * bc;
    if (c->sfu_ops_per_cycle <= 0) {
        p->vflops_step += p->sfu_step;
        p->sfu_step = 0;
    }
    const struct attn_lib *v = attn_on_wgmma(a, path);
    p->serial = a->serial;
    p->sfu_serial = a->serial ? 0 : v->sfu_serial;
    p->persistent = a->persistent && (path == MP_WGMMA || path == MP_TCGEN05);
    p->rate_frac = c->matrix_path_frac[path] *
                   ((path == MP_WGMMA || path == MP_TCGEN05) && v->issue_async > 0 ? v->issue_async
                                                                                : v->issue_fwd);
    if (a->o_roundtrip) {
        /* FA1 rescales its output every key block (FA2 once at the end), and
         * its four warps split the key block (FMHA_kernel_traits<Bc, d, 16,
         * 1, 4>), so each writes a partial fp32 output to shared memory and
         * they are summed there, every step (FlashAttention-2 paper, sec. 3) */
        p->vflops_step += (2.0 + FA1_FWD_WARPS_N) * q_rows * d;
        p->xchg_step = 2.0 * FA1_FWD_WARPS_N * q_rows * d * 4.0;
        /* and its loop runs the other way round: a CTA takes a key block
         * and walks its query rows, so each key block reads the rows' Q
         * and their fp32 partial output O_tmp (with the running max and
         * sum) from memory and writes O_tmp back (fmha_fprop_kernel_1xN.h,
         * Gmem_tile_o<Cta_tile_o, 4>): HBM traffic per FLOP of 2.5 / Bc
         * bytes, twice as much at head dim 128 as at 64 */
        if (p->ksteps > 1) {
            double more = (p->ksteps - 1.0) / p->ksteps;   /* not the first block's */
            p->reread_step += more * q_rows * (d * (dtype_bytes(o->dtype, 1.0) + 4.0) + 8.0);
            p->store_step += more * q_rows * (d * 4.0 + 8.0);
            p->dram_cost = kplan_dram_cost(c, p->reread_step, p->store_step);
        }
    }
    snprintf(p->what, sizeof p->what, "%s_fwd", op_attn_impl_name(a->impl));
}

/* The fused backward (FlashAttention-2's algorithm): a CTA owns a block of
 * Bc keys of one head, keeps K_j, V_j, dK_j, dV_j on chip and walks the
 * query blocks that see it; per block five products (S = QK^T recomputed,
 * dP = dO V^T, dV += P^T dO, dK += dS^T Q, dQ += dS K), one exp per score
 * and dS = P (dP - D), on the library's tile (lib_tile_bwd: FA3's on
 * wgmma; else 64 query rows by 64 keys, 128 up to head dim 64).  dQ is
 * accumulated as the library's dq_mode says: fp32 atomics in L2 (FA2),
 * fp32 read and written in HBM (FA1), or a copy per key block (Triton on
 * mma_sync).  Small kernels go around it: D = rowsum(dO o O) before; dQ to
 * the input type after (or, for the copies, zeroing them before and
 * summing them after). */
static uint32_t plan_attn_bwd(const struct hw_config *c, struct kplan *k, const struct op *o,
                              const struct attn_lib *a, enum matrix_path path)
{
    double eb = dtype_bytes(o->dtype, 1.0), kvb = dtype_bytes(o->u.attn.kv_dtype, 1.0);
    const uint64_t b = o->u.attn.batch, h = o->u.attn.heads, kvh = o->u.attn.kv_heads;
    const uint64_t d = o->u.attn.head_dim, q = o->u.attn.q_len, kv = o->u.attn.kv_len;
    double rows = (double)b * h * q;
    kplan_stream(c, &k[0], "attn_bwd_dot", 2.0 * rows * d * eb, rows * 4.0, 2.0 * rows * d,
                 DT_FP32, b * h * q / 4 > 0 ? b * h * q / 4 : 1, 2, TILED_VEC_BYTES);
    enum dq_mode dq = a->dq == DQ_COPIES && path != MP_MMA_SYNC ? DQ_ATOMIC : a->dq;
    int sp = dq == DQ_COPIES;
    uint32_t nk = 1;
    uint64_t reps = ceil_div(kv, DQ_COPY_BLOCK);
    if (sp)
        kplan_stream(c, &k[nk++], "attn_bwd_dq_zero", 0, (double)reps * rows * d * eb, 0, DT_FP32, 0, 1,
                     TILED_VEC_BYTES);
    struct kplan *p = &k[nk];
    memset(p, 0, sizeof *p);
    /* FA1 walks blocks of its own key length (fa1_bc) */
    uint32_t bc = a->o_roundtrip ? fa1_bc(d, kv) : sp ? DQ_COPY_BLOCK : d > 64 ? 64 : 128;
    uint32_t br = sp ? DQ_COPY_BLOCK : 64;
    lib_tile_bwd(o, a, path, &br, &bc);
    uint64_t group = h / kvh;
    uint64_t kt = ceil_div(kv, bc);
    /* query rows a key block sees: all, or (causal) those at or after it */
    double qr = (double)q * group;
    if (o->u.attn.causal)
        qr = dmax((double)br, qr / 2.0 + bc * group / 2.0);
    uint64_t steps = (uint64_t)ceil(qr / br);
    uint32_t threads = 256;
    double smem = (2.0 * bc * d + 2.0 * 2.0 * br * d) * eb;   /* K, V + double-buffered Q, dO */
    double regs = 2.0 * bc * (double)d * 4.0 + br * (double)bc * 4.0 + threads * 64.0 * 4.0;
    kplan_occupancy(c, p, threads, smem, regs);
    p->gm = kt;
    p->gn = 1;
    p->gb = b * kvh;
    p->swizzle = (uint32_t)umin(kt, 64);
    p->ksteps = (uint32_t)(steps > 0 ? steps : 1);
    p->stages = 2;
    p->pro_bytes = 2.0 * bc * d * kvb;                       /* K_j, V_j */
    p->b_step = 2.0 * br * d * eb + br * 8.0;                 /* Q_i, dO_i, lse_i, D_i */
    p->mflops_step = 10.0 * br * (double)bc * d;
    p->vflops_step = (6.0 + (o->u.attn.dropout > 0 ? FUSED_DROPOUT_SLOTS : 0.0)) * br * (double)bc;
    p->sfu_step = br * (double)bc;
    if (c->sfu_ops_per_cycle <= 0) {
        p->vflops_step += p->sfu_step;
        p->sfu_step = 0;
    }
    if (sp)
        p->store_step = br * (double)d * eb;                  /* this key block's dQ_i copy */
    else if (dq == DQ_ATOMIC)
        p->l2_step = br * (double)d * 4.0;                    /* dQ_i += dS K_j, fp32 atomics */
    else {
        p->store_step = br * (double)d * 4.0;                 /* dQ_i out and back, fp32 */
        p->reread_step = p->store_step;
    }
    p->store_end = 2.0 * bc * d * eb;                         /* dK_j, dV_j */
    p->smem_step = (4.0 * br * bc + 6.0 * br * d) * eb;
    if (a->o_roundtrip) {
        /* FA1's eight warps split the key block (FMHA_kernel_traits<Bc, d,
         * 16, 1, 8>): each writes a partial fp32 dQ_i to shared memory and
         * they are summed there (its smem_size_dq: 16 x d x 4 x WARPS_N) */
        p->xchg_step = 2.0 * FA1_BWD_WARPS_N * br * (double)d * 4.0;
        p->vflops_step += FA1_BWD_WARPS_N * br * (double)d;
    }
    p->inflight_cta = p->b_step;
    p->async_copy = 1;
    p->mdt = unit_matrix_type(c, o->dtype);
    p->vdt = DT_FP32;
    /* dQ_i read and written back (FA1): a read/write mix */
    p->dram_cost = dq == DQ_HBM ? kplan_dram_cost(c, p->reread_step, p->store_step) : 1.0;
    /* FA3's backward on wgmma has no ping-pong: its two MMA warpgroups share
     * each tile (hopper/flash_bwd_kernel_sm90.h: both run the mainloop on
     * one block of keys), so a step's exponentials and dS wait for its
     * products, as in FA2's */
    p->serial = a->serial || (a->wgmma_fa3 && path == MP_WGMMA);
    p->rate_frac = c->matrix_path_frac[path] * a->issue_bwd;
    snprintf(p->what, sizeof p->what, "%s_bwd", op_attn_impl_name(a->impl));
    snprintf(p->tile, sizeof p->tile, "Br%u Bc%u bwd", br, bc);
    if (sp) {
        kplan_stream(c, &k[nk + 1], "attn_bwd_dq_sum", (double)reps * rows * d * eb, rows * d * eb,
                     (double)reps * rows * d, DT_FP32, 0, (uint32_t)umin(reps, 64), TILED_VEC_BYTES);
        return nk + 2;
    }
    kplan_stream(c, &k[nk + 1], "attn_bwd_dq", rows * d * 4.0, rows * d * eb, rows * d, DT_FP32, 0, 1,
                 TILED_VEC_BYTES);
    return nk + 2;
}

/* PyTorch runs an elementwise op or copy whose operands are not all
 * contiguous (a permuted copy, an add that broadcasts a mask) with its
 * legacy kernel (ATen CUDALoops.cuh, launch_legacy_kernel): each thread
 * loads one element per input, computes and stores it before the next,
 * since the store may alias the next load.  So a thread keeps one element
 * in flight, not a 16-byte vector: the kernels below pass the element size
 * as their vector width, and with one DRAM-read input (a broadcast mask
 * stays in cache) they are bound by latency, not by bandwidth. */

/* PyTorch's standard attention (the `math` backend): S = (Q K^T) scale as
 * one batched GEMM into HBM, the causal mask added to S, softmax, P V; and
 * for the backward dV = P^T dO, dP = dO V^T, dS = softmax_backward(P, dP),
 * dQ = dS K, dK = dS^T Q.  Every S-sized tensor goes through HBM. */
/* One batched GEMM of an unfused attention, named for the report. */
static void attn_bmm(const struct hw_config *c, struct kplan *k, const char *what, uint64_t m,
                     uint64_t n, uint64_t kk, uint64_t batch, enum dtype dt, double eb, double beb)
{
    struct gemm_shape g = {m, n, kk, batch, dt, eb, beb, 0, 1.0, 1.0, 0};
    lower_gemm_plan(c, k, &g);
    snprintf(k->what, sizeof k->what, "%s", what);
}

/* Dropout on el scores in memory (PyTorch's fused dropout): forward,
 * read them, write them and a 1-byte mask; backward, read the gradient
 * and the mask, write the gradient. */
static void plan_dropout(const struct hw_config *c, struct kplan *p, double el, double eb,
                         enum dtype vdt, int bwd)
{
    if (bwd)
        kplan_stream(c, p, "dropout_bwd", el * (eb + 1.0), el * eb, el, vdt, 0, 2, TILED_VEC_BYTES);
    else
        kplan_stream(c, p, "dropout", el * eb, el * (eb + 1.0), DROPOUT_RNG_SLOTS * el, vdt, 0, 1,
                     TILED_VEC_BYTES);
}

static uint32_t plan_attn_math(const struct hw_config *c, struct kplan *k, const struct op *o,
                               enum attn_impl impl)
{
    int minimal = impl == ATTN_NAIVE, mega = impl == ATTN_MEGATRON;
    double eb = dtype_bytes(o->dtype, 1.0), kvb = dtype_bytes(o->u.attn.kv_dtype, 1.0);
    const uint64_t b = o->u.attn.batch, h = o->u.attn.heads, q = o->u.attn.q_len;
    const uint64_t kv = o->u.attn.kv_len, d = o->u.attn.head_dim, bh = b * h;
    double el = (double)bh * q * kv;
    enum dtype vdt = unit_vector_type(c, o->dtype);
    uint32_t n = 0;
    enum attn_pass pass = o->pass;
    double mask = (double)q * kv;   /* one causal mask, shared by every head */
    int drop = o->u.attn.dropout > 0;
    /* q, k and v come in as (batch, tokens, heads, dim), packed or not, and
     * the batched GEMMs want (batch x heads, tokens, dim): batch and heads
     * are not adjacent, so each is copied (einops' rearrange in the FA
     * benchmark's attention_pytorch, a transpose and reshape in a model's
     * eager attention), the output copied back, and in the backward the
     * output's gradient and the three input gradients the same way.  The
     * copies scale with tokens, the products with tokens squared: they
     * weigh on short sequences. */
    double elq = (double)bh * q * d, elkv = (double)b * o->u.attn.kv_heads * kv * d;
    /* naive: S = QK^T to memory, softmax, O = PV (GQA K/V expanded).
     * math: PyTorch's, with the layout copies and, for causal, the mask
     * built every call (full() and triu() in fp32, then cast to the input
     * type: three small kernels, one here) and added to S (flash-
     * attention's benchmark, attention_pytorch).  megatron: Megatron-LM's
     * (ParallelAttention without flash): Q, K and V are strided views of
     * the QKV output that the batched GEMMs read in place, the scale rides
     * in baddbmm, one kernel scales, masks (the causal mask from the
     * indices) and normalises (scaled_upper_triang_masked_softmax, a warp a
     * row, issue-bound as PyTorch's softmax is), and the output is
     * permuted back to (tokens, batch, hidden).  Dropout, when the op has
     * it, between the softmax and PV. */
    if (impl == ATTN_GGML) {
        /* llama.cpp without flash attention (llm_build_kqv: kq = mul_mat(k,
         * q), soft_max_ext, kqv = mul_mat(v, kq)), as ggml-cuda runs it:
         * each product a batched cuBLAS GEMM into fp16 (GQA by broadcast,
         * no copies) converted to the fp32 ggml keeps; the scores' softmax
         * (scale, mask, max, exp, sum, divide) on fp32 reading the mask;
         * the probabilities converted back to fp16 for the second product.
         * 24 bytes a score through memory, three times naive's 8. */
        attn_bmm(c, &k[n++], "kq", q, kv, d, bh, o->dtype, 2.0, kvb);
        kplan_stream(c, &k[n++], "kq_to_f32", el * 2.0, el * 4.0, 0, vdt, 0, 1, TILED_VEC_BYTES);
        kplan_stream(c, &k[n++], "soft_max_ext", el * 4.0 + mask * 4.0, el * 4.0, 5.0 * el, vdt, bh * q, 2,
                     TILED_VEC_BYTES);
        kplan_stream(c, &k[n++], "kq_to_f16", el * 4.0, el * 2.0, 0, vdt, 0, 1, TILED_VEC_BYTES);
        attn_bmm(c, &k[n++], "kqv", q, d, kv, bh, o->dtype, 2.0, kvb);
        kplan_stream(c, &k[n++], "kqv_to_f32", elq * 2.0, elq * 4.0, 0, vdt, 0, 1, TILED_VEC_BYTES);
        return n;
    }
    if (pass != PASS_BWD) {
        if (!minimal && !mega)
            kplan_stream(c, &k[n++], "qkv_layout", (elq + 2.0 * elkv) * eb, (elq + 2.0 * elkv) * eb, 0,
                         vdt, 0, 1, eb);
        attn_bmm(c, &k[n++], "bmm_qk", q, kv, d, bh, o->dtype, eb, kvb);
        if (!minimal && !mega && o->u.attn.causal) {
            kplan_stream(c, &k[n++], "mask_build", 8.0 * mask, (8.0 + eb) * mask, mask, vdt, 0, 1,
                         TILED_VEC_BYTES);
            kplan_stream(c, &k[n++], "mask_add", el * eb + mask * eb, el * eb, el, vdt, 0, 1, eb);
        }
        kplan_stream(c, &k[n++], mega ? "scale_mask_softmax" : "softmax", el * eb, el * eb,
                     (minimal ? 5.0 : TILED_SOFTMAX_ISSUE) * el, vdt, bh * q, 1, TILED_VEC_BYTES);
        if (drop)
            plan_dropout(c, &k[n++], el, eb, vdt, 0);
        attn_bmm(c, &k[n++], "bmm_pv", q, d, kv, bh, o->dtype, eb, kvb);
        if (!minimal)
            kplan_stream(c, &k[n++], "out_layout", elq * eb, elq * eb, 0, vdt, 0, 1, eb);
    }
    if (pass != PASS_FWD) {
        if (!minimal)
            kplan_stream(c, &k[n++], "dout_layout", elq * eb, elq * eb, 0, vdt, 0, 1, eb);
        attn_bmm(c, &k[n++], "bmm_dv", kv, d, q, bh, o->dtype, eb, eb);
        attn_bmm(c, &k[n++], "bmm_dp", q, kv, d, bh, o->dtype, eb, kvb);
        if (drop)
            plan_dropout(c, &k[n++], el, eb, vdt, 1);
        if (!minimal && !mega)
            /* ATen's softmax backward first multiplies the gradient by
             * the output into a temporary (softmax_backward_cuda_out:
             * tmp = grad * output), then runs its row kernel on it */
            kplan_stream(c, &k[n++], "softmax_bwd_mul", 2.0 * el * eb, el * eb, el, vdt, 0, 2,
                         TILED_VEC_BYTES);
        kplan_stream(c, &k[n++], "softmax_bwd", 2.0 * el * eb, el * eb, 4.0 * el, vdt, bh * q, 2,
                     TILED_VEC_BYTES);
        attn_bmm(c, &k[n++], "bmm_dq", q, d, kv, bh, o->dtype, eb, kvb);
        attn_bmm(c, &k[n++], "bmm_dk", kv, d, q, bh, o->dtype, eb, eb);
        if (!minimal)
            kplan_stream(c, &k[n++], "dqkv_layout", (elq + 2.0 * elkv) * eb, (elq + 2.0 * elkv) * eb,
                         0, vdt, 0, 1, eb);
    }
    return n;
}

/* Lower an attention op (fills L; FLOPs: 4 pairs d per head forward, 2.5x
 * that backward, as FlashAttention's benchmarks count them). */
void lower_attn_op(const struct hw_config *c, const struct op *o, struct lowered *L)
{
    const uint64_t b = o->u.attn.batch, h = o->u.attn.heads, q = o->u.attn.q_len;
    const uint64_t kv = o->u.attn.kv_len, d = o->u.attn.head_dim;
    double pairs = (double)q * kv;
    if (o->u.attn.causal)       /* query i sees kv_len - q_len + i + 1 keys */
        pairs = (double)q * (double)(kv - q) + (double)q * (q + 1) / 2.0;
    double fwd = 4.0 * b * h * pairs * d;
    enum attn_pass pass = o->pass;
    L->flops = pass == PASS_FWD ? fwd : pass == PASS_BWD ? 2.5 * fwd : 3.5 * fwd;
    enum attn_impl impl = attn_resolve(c, o);
    if (impl == ATTN_MMHA) {
        plan_mmha(c, &L->k[0], o);
        L->nk = 1;
        return;
    }
    enum matrix_path path = MP_COUNT;
    const struct attn_lib *a = attn_lib_on(c, impl, &path);
    if (impl == ATTN_MATH || impl == ATTN_NAIVE || impl == ATTN_MEGATRON || impl == ATTN_GGML ||
        (a == NULL && impl != ATTN_FLASH)) {
        /* naive: three kernels forward (as before); math: PyTorch's full
         * list; megatron: Megatron-LM's fused softmax between the GEMMs;
         * ggml: llama.cpp's products and conversions */
        L->nk = plan_attn_math(c, L->k, o,
                               impl == ATTN_MATH || impl == ATTN_MEGATRON || impl == ATTN_GGML ? impl : ATTN_NAIVE);
        return;
    }
    if (a == NULL) {            /* flash on a systolic chip: the array's fused kernel */
        uint32_t n = 0;
        if (pass != PASS_BWD)
            plan_flash(c, &L->k[n++], o);
        if (pass != PASS_FWD) {
            /* its backward (plan_flash_bc's bwd) */
            struct kplan *p = &L->k[n++];
            plan_flash_bc(c, p, o, fused_bc(c, o->u.attn.head_dim), 1);
            p->store_end *= 3.0;            /* dQ, dK, dV */
            snprintf(p->what, sizeof p->what, "flash_bwd");
        }
        L->nk = n;
        return;
    }
    uint32_t n = 0;
    if (pass != PASS_BWD) {
        plan_attn_fwd(c, &L->k[n++], o, a, path);
        /* split over the keys (flash-decoding): each split wrote its partial
         * output and softmax statistics in fp32; a kernel of their own
         * combines them, as every library runs it (FA2's and FA3's
         * splitkv_combine, cuDNN's lean_reduction on the H200's census) */
        uint64_t split = L->k[0].gb / (b * o->u.attn.kv_heads);
        if (split > 1) {
            double rows = (double)b * h * q, eb = dtype_bytes(o->dtype, 1.0);
            kplan_stream(c, &L->k[n++], "splitkv_combine", (double)split * rows * (d + 2.0) * 4.0,
                         rows * d * eb, 4.0 * (double)split * rows * d, DT_FP32, 0, 1, TILED_VEC_BYTES);
        }
    }
    if (pass != PASS_FWD)
        n += plan_attn_bwd(c, &L->k[n], o, a, path);
    L->nk = n;
}
