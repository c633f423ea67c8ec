/* test_unit_lower.c: the tiled model's lowering and cache reuse, from the
 * inside (models/tiled/lower.c, lower_gemm.c, kplan.c, reuse.c), on shipped
 * configs, with exact expected values: a change to a heuristic fails here
 * even when a whole run moves too little for the golden tests to see.
 *
 * How it reaches them: lower_op and reuse_wave are declared in the tiled
 * model's private header, models/tiled/tiled.h, which CMake gives only to
 * strata_models (a PRIVATE include directory).  The test includes it by
 * its path relative to this file ("../models/tiled/tiled.h", the quoted
 * form searches the including file's folder first); the headers tiled.h
 * includes are the public ones of the layers the test links (strata_plots
 * and below), and the functions are linked from libstrata_models.a.  So
 * the build needs no per-test include directory.
 *
 * Why each value is what it is (bf16: 2-byte elements; "MiB" = 2^20 B):
 *
 * Tile choice (lower_gemm_plan).  Tiles tm x tn from {16..256} x
 * {32..256}, area 16x64 to 128x256, are tried in that order with a k-step
 * of 64 bytes (tk = 32 bf16) before 128; a candidate replaces the best only
 * when its estimate is 1% better, so on near-ties the earlier (smaller
 * k-step, smaller split) one stays.
 *   H100 4096^3: 128x256x32 s4 split1.  The largest tile moves the fewest
 *     bytes a FLOP: its estimate 202.7 us beats 128x128 (244.2 us), and
 *     256x128 (tried later) is not 1% better; tk 64 scores 206.5 us.  Four
 *     stages: 4 x (128 + 256) x 32 x 2 B = 96 KiB <= 228 KiB of shared
 *     memory.  One CTA an SM: its registers, 128 x 256 x 4 B x 1.5 + 256
 *     threads x 64 x 4 B = 256 KiB, fill the register file.  Grid 32 x 16
 *     = 512 CTAs on 132 SMs: 4 waves (3.9); 4096 / 32 = 128 k-steps.  Per
 *     step a CTA loads 128 x 32 x 2 = 8192 B of A and 256 x 32 x 2 = 16384
 *     B of B, and stores its 128 x 256 x 2 = 65536 B tile at the end.
 *   A100 4096^3: the same tile (96 KiB <= 164 KiB); 512 CTAs on 108 SMs:
 *     5 waves (4.7).
 *   TPU v5e 4096^3: 128x256x128.  A systolic unit takes one array height of
 *     k a step (tk = 128 rows of the 128 x 128 MXU; only the 64-byte pass
 *     runs), 4 x 384 x 128 x 2 = 384 KiB fits its 1 MiB staging buffer;
 *     4096 / 128 = 32 k-steps; 512 CTAs on 4 MXUs, one tile in flight each
 *     (max_tiles_per_unit 1): 128 waves.
 *
 * Split-K for skinny GEMMs.  A split s makes s CTAs of each output tile,
 * each over k / s, exchanging fp32 partials through L2 (l2_only_end, two
 * 4-byte words an element: written and read) and storing 1/s of the tile;
 * a split needs at least 4 k-steps of k.
 *   H100 64 x 4096 x 4096: 64x256x32 split4.  One row block of 16 column
 *     blocks would leave 116 of 132 SMs idle; split 4 (64 CTAs) scores
 *     13.35 us against 14.08 for split 3 and 13.38 for split 6 (not 1%
 *     better).  4096 / 4 / 32 = 32 k-steps; partials 64 x 256 x 4 x 2 =
 *     131072 B; stores 64 x 256 x 2 / 4 = 8192 B.
 *   TPU v5e 128 x 128 x 65536: one 128x128 tile, split 3 (47.01 us); split 4
 *     scores 46.60 us, within 1%, so the smaller split stays.  ceil(65536 /
 *     3) = 21846 of k a CTA: ceil(21846 / 128) = 171 k-steps.
 *
 * GEMV (TILED_GEMV_MAX_M = 4).  M <= 4 is a streaming kernel (kplan_stream)
 * on the vector pipe: 256 threads a CTA, 16 B an access, so 4096 B a step;
 * occupancy min(32 CTAs, 2048 / 256 threads) = 8 CTAs an SM.  H100 M = 4:
 * B (4096 x 4096 x 2 = 32 MiB) and A (4 x 4096 x 2 = 32 KiB) are 8200
 * steps of 4096 B, on at most a full wave of 132 x 8 = 1056 CTAs: 8 steps
 * each ("1056 ctas x 8 steps").  M = 1: 8194 steps, still 8 each.  M = 5
 * is a tiled GEMM again (16x64x32 split6).  A100 M = 4: 108 x 8 = 864 CTAs
 * of ceil(8200 / 864) = 10 steps.  TPU v5e M = 4: one CTA an MXU
 * (max_tiles_per_unit 1), 4 CTAs of ceil(8200 / 4) = 2050 steps.
 *
 * Cache reuse (reuse_wave).  CTAs run in swizzled raster order: 8 row
 * blocks walked column by column (grid rows 0-7 take CTAs 0-127 on a 32 x
 * 16 grid, column 0 first).  In a wave each distinct A (row) and B (column)
 * panel is fetched once; a panel seen in an earlier wave hits the first
 * cache when the bytes touched since the start of that wave, plus its own,
 * fit in 0.75 of the cache (TILED_CACHE_USABLE).  l2 is every CTA's operand
 * bytes, misses the distinct panels that miss.
 *   H100 4096 x 4096 x 1024, 128x256 tiles, waves of 132 CTAs: A panels
 *     128 x 1024 x 2 = 256 KiB, B panels 1024 x 256 x 2 = 512 KiB; l2 = 132
 *     x 768 KiB = 99 MiB a full wave (87 MiB for the last, 116 CTAs).
 *     Wave 0 (rows 0-7 all columns, rows 8-11 column 0): 12 A + 16 B cold:
 *     3 + 8 = 11 MiB miss.  Wave 1 (rows 8-15 all columns, rows 16-23
 *     column 0): rows 8-11 and every B panel hit (11 MiB touched <= 37.5
 *     MiB), rows 12-23 miss: 12 x 256 KiB = 3 MiB.  Wave 2: rows 24-31, 2
 *     MiB.  Wave 3: nothing new, 0.
 *   H100 4096^3 (k 4096): panels of 1 and 2 MiB; wave 0 touches 12 + 32 =
 *     44 MiB > 37.5, so nothing survives to wave 1, which misses all its 16
 *     A and 16 B panels: 48 MiB.
 *   TPU v5e 4096^3 (64 MiB of vmem, 48 usable), waves of 4 CTAs: A 1 MiB, B
 *     2 MiB panels, l2 4 x 3 = 12 MiB a wave.  Wave 0: rows 0-3 and column
 *     0, 6 MiB; wave 1: rows 4-7 (4 MiB), column 0 hits; wave 2: rows 0-3
 *     hit, column 1 misses (2 MiB); wave 3: all hit, 0.
 *
 * Decode attention per query head (mmha, plan_mmha) against the packed
 * kernel (flash).  Llama-3-8B's shape, bf16, batch 2, one new token against
 * 4096 cached: 32 query heads on 8 KV heads (group 4), head dim 128.
 * flash packs a group's 4 query rows into one 16-row tile: 1 row block a
 * KV head, 2 x 8 = 16 CTAs, split over the 65 key blocks of 64 to fill
 * the SMs: ceil(132 / 16) = 9 splits (gb 144) of ceil(65 / 9) = 8 steps.
 * mmha gives each query head its own row block: 4 row blocks a KV head
 * (the group's CTAs read the KV head's blocks, shared along m as a GEMM's
 * B panel), 64 CTAs, so ceil(132 / 64) = 3 splits (gb 48) of 22 steps, on
 * the CUDA cores (no matrix-pipe FLOPs).  Both read a 64-key block of K
 * and V a step: 2 x 64 x 128 x 2 = 32768 B, so the L2 serves mmha 4 x 48
 * x 22 = 4224 blocks against flash's 144 x 8 = 1152: the group (4) times
 * the splits' rounding (66 / 72 blocks).  On the TPU it is
 * refused (a CUDA kernel), and a backward pass with it too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../models/tiled/tiled.h"
#include "test.h"
#include "util.h"

#define MIB 1048576.0

/* h100 without its thread-block clusters (the values below were worked out
 * for one CTA's own loads); h100mc as shipped, for test_clusters */
static struct hw_config h100, h100mc, a100, v5e;

/* A forward bf16 GEMM m x n x k with weights stored as w, on chip c. */
static void lower_gemm_w(const struct hw_config *c, uint64_t m, uint64_t n, uint64_t k, enum wfmt w,
                         struct lowered *L)
{
    struct op o;
    memset(&o, 0, sizeof o);
    o.kind = OP_GEMM;
    o.dtype = DT_BF16;
    o.pass = PASS_FWD;
    o.fixed_s = -1;
    o.measured_s = -1;
    o.u.gemm.m = m;
    o.u.gemm.n = n;
    o.u.gemm.k = k;
    o.u.gemm.batch = 1;
    o.u.gemm.weights = w;
    memset(L, 0, sizeof *L);
    lower_op(c, &o, 0, L);
}

/* A forward bf16 GEMM m x n x k lowered on chip c. */
static void lower_gemm(const struct hw_config *c, uint64_t m, uint64_t n, uint64_t k,
                       struct lowered *L)
{
    lower_gemm_w(c, m, n, k, WF_NONE, L);
}

static uint64_t waves_of(const struct hw_config *c, const struct kplan *p)
{
    uint64_t ctas = p->gm * p->gn * p->gb, slots = (uint64_t)c->units * p->ctas_per_unit;
    return (ctas + slots - 1) / slots;
}

static void check_tile(const struct hw_config *c, uint64_t m, uint64_t n, uint64_t k,
                       const char *tile, uint64_t gm, uint64_t gn, uint64_t gb, uint32_t cpu,
                       uint32_t ksteps, uint64_t waves)
{
    struct lowered L;
    lower_gemm(c, m, n, k, &L);
    const struct kplan *p = &L.k[0];
    CHECK_EQ_INT(L.nk, 1);
    CHECK_STR_CONTAINS(p->what, "gemm");
    if (strcmp(p->tile, tile) != 0)
        fprintf(stderr, "  %s %llux%llux%llu: tile '%s', expected '%s'\n", c->name,
                (unsigned long long)m, (unsigned long long)n, (unsigned long long)k, p->tile, tile);
    CHECK(strcmp(p->tile, tile) == 0);
    CHECK_EQ_INT(p->gm, gm);
    CHECK_EQ_INT(p->gn, gn);
    CHECK_EQ_INT(p->gb, gb);
    CHECK_EQ_INT(p->ctas_per_unit, cpu);
    CHECK_EQ_INT(p->ksteps, ksteps);
    CHECK_EQ_INT(waves_of(c, p), waves);
    CHECK(L.flops == 2.0 * (double)m * (double)n * (double)k);
}

static void test_tiles(void)
{
    check_tile(&h100, 4096, 4096, 4096, "128x256x32 s4 split1", 32, 16, 1, 1, 128, 4);
    check_tile(&a100, 4096, 4096, 4096, "128x256x32 s4 split1", 32, 16, 1, 1, 128, 5);
    check_tile(&v5e, 4096, 4096, 4096, "128x256x128 s4 split1", 32, 16, 1, 1, 32, 128);
    struct lowered L;
    lower_gemm(&h100, 4096, 4096, 4096, &L);
    CHECK_EQ_INT(L.k[0].stages, 4);
    CHECK(L.k[0].a_step == 8192.0 && L.k[0].b_step == 16384.0);
    CHECK(L.k[0].store_end == 65536.0 && L.k[0].l2_only_end == 0);
    lower_gemm(&v5e, 4096, 4096, 4096, &L);
    CHECK(L.k[0].a_step == 128.0 * 128 * 2 && L.k[0].b_step == 256.0 * 128 * 2);
}

static void test_split_k(void)
{
    check_tile(&h100, 64, 4096, 4096, "64x256x32 s4 split4", 1, 16, 4, 1, 32, 1);
    struct lowered L;
    lower_gemm(&h100, 64, 4096, 4096, &L);
    CHECK(L.k[0].l2_only_end == 131072.0);
    CHECK(L.k[0].store_end == 8192.0);
    check_tile(&v5e, 128, 128, 65536, "128x128x128 s4 split3", 1, 1, 3, 1, 171, 1);
    lower_gemm(&v5e, 128, 128, 65536, &L);
    CHECK_NEAR_REL(L.k[0].store_end, 128.0 * 128 * 2 / 3, 1e-15);
}

/* Thread-block clusters with TMA multicast (compute.cluster_multicast_ctas):
 * an H100 8192^3 bf16 GEMM runs its 128x256 tiles in clusters of 2 along m,
 * so each B tile (16384 B a step) is read from L2 once per pair: the L2
 * serves (8192 + 16384 / 2) / 24576 = 2/3 of the operand bytes.  A kernel of
 * a stack on mma_sync (no TMA) and the A100 (no clusters) read every tile. */
static void test_clusters(void)
{
    struct lowered L;
    lower_gemm(&h100mc, 8192, 8192, 8192, &L);
    CHECK_EQ_INT(h100mc.cluster_multicast_ctas, 2);
    CHECK_STR_CONTAINS(L.k[0].tile, " c2x1");
    CHECK_EQ_INT(L.k[0].cl_m, 2);
    CHECK_NEAR_REL(kplan_l2_share(&L.k[0]), 2.0 / 3.0, 1e-12);
    struct hw_config old = h100mc;
    old.gemm_no_tma = 1;
    lower_gemm(&old, 8192, 8192, 8192, &L);
    CHECK(strstr(L.k[0].tile, " c") == NULL && kplan_l2_share(&L.k[0]) == 1.0);
    lower_gemm(&a100, 8192, 8192, 8192, &L);
    CHECK(strstr(L.k[0].tile, " c") == NULL && kplan_l2_share(&L.k[0]) == 1.0);
}

/* Blackwell's tcgen05 (test_tmem): the tensor core reads each operand tile
 * from shared memory once a k-step ((tm + tn) x tk x 2 bytes for bf16, not
 * a warp tile's fetches), the accumulator sits in tensor memory, and the
 * cluster of two along m is the 2-SM MMA: each SM's port takes its own A
 * and half of B, the L2 share.  On wgmma (H100) the port takes every byte
 * of a multicast cluster, and the warp-tile fetches stay. */
static void test_tmem(const struct hw_config *b200)
{
    struct lowered L;
    lower_gemm(b200, 8192, 8192, 8192, &L);
    const struct kplan *p = &L.k[0];
    CHECK_EQ_INT(p->cl_m, 2);
    CHECK(p->mma_pair == 1);
    double tk = 32.0;     /* the tile string's k-step */
    CHECK_STR_CONTAINS(p->tile, "128x256x32");
    CHECK_NEAR_REL(p->smem_step, (128.0 + 256.0) * tk * 2.0, 1e-12);
    CHECK_NEAR_REL(kplan_port_share(p), kplan_l2_share(p), 1e-12);
    CHECK(kplan_port_share(p) < 1.0);
    lower_gemm(&h100mc, 8192, 8192, 8192, &L);
    CHECK(L.k[0].mma_pair == 0 && kplan_port_share(&L.k[0]) == 1.0);
    CHECK(L.k[0].smem_step > 1.5 * (L.k[0].a_step + L.k[0].b_step));   /* warp tiles: twice the operands */
    /* a stack whose kernels issue mma.sync on the B200: registers, no pair */
    struct hw_config old = *b200;
    old.gemm_no_tma = 1;
    lower_gemm(&old, 8192, 8192, 8192, &L);
    CHECK(L.k[0].mma_pair == 0 && L.k[0].cl_m <= 1);
}

static void check_gemv(const struct hw_config *c, uint64_t m, const char *tile, uint64_t ctas,
                       uint32_t steps)
{
    struct lowered L;
    lower_gemm(c, m, 4096, 4096, &L);
    const struct kplan *p = &L.k[0];
    CHECK_EQ_INT(L.nk, 1);
    CHECK(strcmp(p->what, "gemv") == 0);
    if (strcmp(p->tile, tile) != 0)
        fprintf(stderr, "  %s gemv m=%llu: tile '%s', expected '%s'\n", c->name,
                (unsigned long long)m, p->tile, tile);
    CHECK(strcmp(p->tile, tile) == 0);
    CHECK_EQ_INT(p->gm * p->gn * p->gb, ctas);
    CHECK_EQ_INT(p->ksteps, steps);
    CHECK(p->mflops_step == 0);     /* FMAs on the vector pipe, no tensor cores */
    double load = 4096.0 * 4096 * 2 + (double)m * 4096 * 2;
    CHECK_NEAR_REL(p->a_step * (double)ctas * steps, load, 1e-12);
    CHECK_NEAR_REL(p->vflops_step * (double)ctas * steps, 2.0 * (double)m * 4096 * 4096, 1e-12);
}

static void test_gemv(void)
{
    check_gemv(&h100, 4, "1056 ctas x 8 steps", 1056, 8);
    check_gemv(&h100, 1, "1056 ctas x 8 steps", 1056, 8);
    check_gemv(&a100, 4, "864 ctas x 10 steps", 864, 10);
    check_gemv(&v5e, 4, "4 ctas x 2050 steps", 4, 2050);
    /* one row more and it is a tiled GEMM again */
    check_tile(&h100, 5, 4096, 4096, "16x64x32 s4 split6", 1, 64, 6, 6, 22, 1);
}

/* Runs reuse_wave over waves [0, nw) of a bf16 GEMM's kernel on chip c, as
 * the device does (runner.c: panels cold at the kernel's start, waves of
 * units x ctas_per_unit CTAs); l2[w] and miss[w] (first cache) out. */
static void run_waves(const struct hw_config *c, uint64_t m, uint64_t n, uint64_t k, uint32_t nw,
                      double *l2, double *miss)
{
    struct lowered L;
    lower_gemm(c, m, n, k, &L);
    const struct kplan *p = &L.k[0];
    uint64_t ctas = p->gm * p->gn * p->gb, slots = (uint64_t)c->units * p->ctas_per_unit;
    size_t npanels = p->gb * (p->gm + p->gn);
    struct tdev g;
    memset(&g, 0, sizeof g);
    g.cfg = c;
    g.panel_last = calloc(npanels, sizeof *g.panel_last);
    g.panel_slot = calloc(npanels, sizeof *g.panel_slot);
    g.wave_cum = calloc(waves_of(c, p) + 1, sizeof *g.wave_cum);
    g.wpanel = calloc(2 * slots, sizeof *g.wpanel);
    for (size_t i = 0; i < npanels; i++)
        g.panel_last[i] = -1;
    for (uint32_t ci = 0; ci < HW_MAX_LEVELS; ci++)
        g.repl[ci] = 1.0;
    for (uint32_t w = 0; w < nw; w++) {
        double m_lv[HW_MAX_LEVELS];
        uint64_t c0 = w * slots, c1 = c0 + slots < ctas ? c0 + slots : ctas;
        reuse_wave(&g, p, w, c0, c1, m_lv, &l2[w]);
        miss[w] = m_lv[0];
    }
    free(g.panel_last);
    free(g.panel_slot);
    free(g.wave_cum);
    free(g.wpanel);
}

static void test_reuse(void)
{
    double l2[4], miss[4];
    run_waves(&h100, 4096, 4096, 1024, 4, l2, miss);
    const double want_miss[4] = {11 * MIB, 3 * MIB, 2 * MIB, 0};
    const double want_l2[4] = {99 * MIB, 99 * MIB, 99 * MIB, 87 * MIB};
    for (int w = 0; w < 4; w++) {
        CHECK(miss[w] == want_miss[w]);
        CHECK(l2[w] == want_l2[w]);
    }
    run_waves(&h100, 4096, 4096, 4096, 2, l2, miss);
    CHECK(miss[0] == 44 * MIB);
    CHECK(miss[1] == 48 * MIB);     /* wave 0's 44 MiB passed the 37.5 usable: no reuse */
    CHECK(l2[0] == 396 * MIB && l2[1] == 396 * MIB);
    run_waves(&v5e, 4096, 4096, 4096, 4, l2, miss);
    const double v5e_miss[4] = {6 * MIB, 4 * MIB, 2 * MIB, 0};
    for (int w = 0; w < 4; w++) {
        CHECK(miss[w] == v5e_miss[w]);
        CHECK(l2[w] == 12 * MIB);
    }
}

/* A bf16 decode attention of Llama-3-8B's shape, lowered with impl on c. */
static int lower_decode_attn(const struct hw_config *c, enum attn_impl impl, enum attn_pass pass,
                             struct lowered *L, char *msg, size_t n)
{
    struct op o;
    memset(&o, 0, sizeof o);
    o.kind = OP_ATTENTION;
    o.dtype = DT_BF16;
    o.pass = pass;
    o.fixed_s = -1;
    o.measured_s = -1;
    o.u.attn.batch = 2;
    o.u.attn.heads = 32;
    o.u.attn.kv_heads = 8;
    o.u.attn.q_len = 1;
    o.u.attn.kv_len = 4097;
    o.u.attn.head_dim = 128;
    o.u.attn.causal = 1;
    o.u.attn.impl = impl;
    o.u.attn.kv_dtype = DT_BF16;
    memset(L, 0, sizeof *L);
    if (lower_attn_check(c, &o, msg, n) != 0)
        return -1;
    lower_op(c, &o, 0, L);
    return 0;
}

static void test_decode_attn_per_head(void)
{
    struct lowered f, m;
    char msg[512];
    CHECK_EQ_INT(lower_decode_attn(&h100, ATTN_FLASH, PASS_FWD, &f, msg, sizeof msg), 0);
    CHECK_EQ_INT(lower_decode_attn(&h100, ATTN_MMHA, PASS_FWD, &m, msg, sizeof msg), 0);
    /* flash splits the 4097 keys over CTAs to fill the SMs (8 KV heads of one
     * sequence): its partials are combined by a kernel of their own */
    CHECK_EQ_INT(f.nk, 2);
    CHECK(strcmp(f.k[1].what, "splitkv_combine") == 0);
    CHECK_EQ_INT(m.nk, 1);
    const struct kplan *pf = &f.k[0], *pm = &m.k[0];
    CHECK(strcmp(pm->what, "mmha") == 0);
    CHECK_EQ_INT(pf->gm, 1);
    CHECK_EQ_INT(pm->gm, 4);                    /* a row block a query head of the group */
    CHECK_EQ_INT(pm->gn, 1);
    CHECK(pf->b_step == 32768.0 && pm->b_step == 32768.0);
    CHECK(pm->mflops_step == 0 && pf->mflops_step > 0);
    CHECK(pm->vflops_step > 0);
    CHECK(f.flops == m.flops);
    /* the K/V bytes the L2 serves: group times flash's over the grid */
    double kv_f = (double)(pf->gm * pf->gn * pf->gb) * pf->ksteps * pf->b_step;
    double kv_m = (double)(pm->gm * pm->gn * pm->gb) * pm->ksteps * pm->b_step;
    CHECK_EQ_INT(pf->gb, 144);
    CHECK_EQ_INT(pf->ksteps, 8);
    CHECK_EQ_INT(pm->gb, 48);
    CHECK_EQ_INT(pm->ksteps, 22);
    CHECK(kv_m == 4224.0 * 32768.0 && kv_f == 1152.0 * 32768.0);
    CHECK(lower_decode_attn(&v5e, ATTN_MMHA, PASS_FWD, &m, msg, sizeof msg) != 0);
    CHECK_STR_CONTAINS(msg, "systolic");
    CHECK(lower_decode_attn(&h100, ATTN_MMHA, PASS_BWD, &m, msg, sizeof msg) != 0);
    CHECK_STR_CONTAINS(msg, "forward only");
}

/* Block-scaled FP4 weights: W4A4 on a chip with an FP4 matrix rate (the
 * MMA in the format, A and B at its bits, nothing dequantised, a little
 * vector work to quantise A), weight-only on one without (bf16 MMA, B at
 * its bits, dequantised on the vector pipe); a GEMV dequantises on both. */
static void test_fp4_weights(const struct hw_config *b200)
{
    struct lowered L;
    unsigned tm, tn, tk;
    static const enum wfmt fmts[] = {WF_NVFP4, WF_MXFP4};
    for (int i = 0; i < 2; i++) {
        enum wfmt w = fmts[i];
        enum dtype qt = w == WF_NVFP4 ? DT_NVFP4 : DT_MXFP4;
        double bb = wfmt_bits(w) / 8.0;
        CHECK_NEAR_REL(bb, dtype_bytes(qt, 1.0), 1e-12);   /* one size in wfmt.h and dtype.h */
        lower_gemm_w(b200, 2048, 4096, 4096, w, &L);
        const struct kplan *p = &L.k[0];
        CHECK_EQ_INT(p->mdt, qt);
        CHECK_EQ_INT(sscanf(p->tile, "%ux%ux%u", &tm, &tn, &tk), 3);
        CHECK_NEAR_REL(p->a_step, tm * (double)tk * bb, 1e-12);
        CHECK_NEAR_REL(p->b_step, tn * (double)tk * bb, 1e-12);
        /* A quantised once an element (3 ops), shared by a row of tiles; no dequantise */
        CHECK_NEAR_REL(p->vflops_step, tm * (double)tk * 3.0 / (double)p->gn, 1e-12);
        lower_gemm_w(&h100mc, 2048, 4096, 4096, w, &L);
        p = &L.k[0];
        CHECK_EQ_INT(p->mdt, DT_BF16);
        CHECK_EQ_INT(sscanf(p->tile, "%ux%ux%u", &tm, &tn, &tk), 3);
        CHECK_NEAR_REL(p->a_step, tm * (double)tk * 2.0, 1e-12);
        CHECK_NEAR_REL(p->b_step, tn * (double)tk * bb, 1e-12);
        CHECK_NEAR_REL(p->vflops_step, tn * (double)tk * wfmt_dequant_ops(w), 1e-12);
        lower_gemm_w(b200, 1, 4096, 4096, w, &L);
        CHECK(strcmp(L.k[0].what, "gemv") == 0);
    }
}

/* A stack whose library dequantises in a kernel of its own (llama.cpp's
 * prompt path: gemm.dequant_kernel_min_m): from that many rows a quantised
 * GEMM is a stream kernel that reads the packed weights and writes them
 * 16-bit, then a GEMM that reads them as 16-bit weights with nothing to
 * dequantise; below it (MMQ) and without the stack the tile loads
 * dequantise. */
static void test_dequant_kernel(void)
{
    struct hw_config c = a100;
    c.gemm_deq_kernel_min_m = 33;
    struct lowered L;
    uint32_t tm, tn, tk;
    double qb = wfmt_bits(WF_Q4_K) / 8.0;
    lower_gemm_w(&c, 512, 4096, 4096, WF_Q4_K, &L);
    CHECK_EQ_INT(L.nk, 2);
    CHECK(strcmp(L.k[0].what, "dequant") == 0);
    CHECK(strcmp(L.k[1].what, "gemm") == 0);
    CHECK_EQ_INT(sscanf(L.k[1].tile, "%ux%ux%u", &tm, &tn, &tk), 3);
    CHECK_NEAR_REL(L.k[1].b_step, tn * (double)tk * 2.0, 1e-12);
    CHECK_NEAR_REL(L.k[1].vflops_step, 0.0, 0);
    CHECK_NEAR_REL(L.flops, 2.0 * 512 * 4096 * 4096, 1e-12);
    lower_gemm_w(&c, 32, 4096, 4096, WF_Q4_K, &L);     /* MMQ's rows: one kernel */
    CHECK_EQ_INT(L.nk, 1);
    CHECK_EQ_INT(sscanf(L.k[0].tile, "%ux%ux%u", &tm, &tn, &tk), 3);
    CHECK_NEAR_REL(L.k[0].b_step, tn * (double)tk * qb, 1e-12);
    lower_gemm_w(&c, 512, 4096, 4096, WF_NONE, &L);    /* fp16 weights: nothing to dequantise */
    CHECK_EQ_INT(L.nk, 1);
    lower_gemm_w(&a100, 512, 4096, 4096, WF_Q4_K, &L); /* no such stack */
    CHECK_EQ_INT(L.nk, 1);
}

/* A stack's matrix-vector kernel for 16-bit weights keeping fewer bytes in
 * flight (gemm.float_matvec_inflight_bytes_per_unit; llama.cpp's
 * dequantize_mul_mat_vec, a warp a row): the decode GEMV's CTAs hold that
 * many an SM between them (A100: 256-thread CTAs, 8 an SM, 4096 B each by
 * the grid-stride loop's 16 B a thread; 9728 / 8 = 1216 B each with the
 * stack), so by Little's law its DRAM rate falls; quantised weights (MMVQ)
 * and GEMMs of two rows or more keep their own. */
static void test_float_matvec_inflight(void)
{
    struct hw_config c = a100;
    struct lowered L;
    lower_gemm_w(&c, 1, 4096, 4096, WF_NONE, &L);
    CHECK(strcmp(L.k[0].what, "gemv") == 0);
    CHECK_EQ_INT(L.k[0].ctas_per_unit, 8);
    CHECK_NEAR_REL(L.k[0].inflight_cta, 4096.0, 0);
    c.gemv_inflight_bytes_per_unit = 9728;
    lower_gemm_w(&c, 1, 4096, 4096, WF_NONE, &L);
    CHECK_NEAR_REL(L.k[0].inflight_cta, 1216.0, 1e-12);
    lower_gemm_w(&c, 1, 4096, 4096, WF_Q4_K, &L);
    CHECK_NEAR_REL(L.k[0].inflight_cta, 4096.0, 0);
    lower_gemm_w(&c, 512, 4096, 4096, WF_NONE, &L);
    CHECK(strcmp(L.k[0].what, "gemv") != 0);
    lower_gemm_w(&c, 2, 4096, 4096, WF_NONE, &L);      /* two rows: llama.cpp's cuBLAS path */
    CHECK(strcmp(L.k[0].what, "gemv") == 0);
    CHECK_NEAR_REL(L.k[0].inflight_cta, 4096.0, 0);
}

/* ExLlamaV2's EXL2 bitrates: a name each, its bits a weight, and a decode
 * GEMV's weight bytes in proportion to them (2.5 bits: 2.5 / 4.25 of
 * int4_g128's). */
static void test_exl2(void)
{
    static const char *const names[] = {"exl2_2.5", "exl2_3.0", "exl2_3.5", "exl2_4.0",
                                        "exl2_4.65", "exl2_5.0", "exl2_6.0", "exl2_8.0"};
    static const double bits[] = {2.5, 3.0, 3.5, 4.0, 4.65, 5.0, 6.0, 8.0};
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) {
        enum wfmt f;
        CHECK_EQ_INT(wfmt_from_name(names[i], &f), 0);
        CHECK_NEAR_REL(wfmt_bits(f), bits[i], 0);
        CHECK(strcmp(wfmt_name(f), names[i]) == 0);
    }
    enum wfmt e25;
    CHECK_EQ_INT(wfmt_from_name("exl2_2.5", &e25), 0);
    struct lowered L;
    lower_gemm_w(&a100, 1, 8192, 8192, e25, &L);
    double b25 = L.k[0].a_step * (double)L.k[0].gm * L.k[0].ksteps;  /* the GEMV's loads */
    lower_gemm_w(&a100, 1, 8192, 8192, WF_INT4_G128, &L);
    CHECK(b25 > 0);
    CHECK_NEAR_REL(b25 / (L.k[0].a_step * (double)L.k[0].gm * L.k[0].ksteps), 2.5 / 4.25, 0.01);
}

int main(void)
{
    if (tu_load_cfg("configs/nvidia-h100-sxm.yaml", &h100) != 0 ||
        tu_load_cfg("configs/nvidia-a100-sxm-80gb.yaml", &a100) != 0 ||
        tu_load_cfg("configs/google-tpu-v5e.yaml", &v5e) != 0)
        return 1;
    h100mc = h100;
    h100.cluster_multicast_ctas = 0;
    test_tiles();
    test_split_k();
    test_clusters();
    test_gemv();
    test_reuse();
    test_decode_attn_per_head();
    test_dequant_kernel();
    test_float_matvec_inflight();
    test_exl2();
    struct hw_config b200;
    if (tu_load_cfg("configs/nvidia-b200.yaml", &b200) != 0)
        return 1;
    test_fp4_weights(&b200);
    test_tmem(&b200);
    printf("%d passed, %d failed\n", test_passed_, test_failed_);
    return test_failed_ != 0;
}
