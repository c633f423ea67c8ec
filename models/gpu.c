/* gpu.c: NVIDIA-style GPU model (SMs, tensor and vector pipes, shared
 * memory, L2, DRAM, PCIe).
 *
 * What it models.  Every op is lowered to one or more kernels the way a GPU
 * library would run it: a grid of thread blocks (CTAs), each owning an
 * output tile and looping over a reduction dimension in k-steps.  Tile
 * shape, pipeline depth and split-K are picked per shape by a library-style
 * heuristic bounded by shared-memory and register capacity (gpu_pick_gemm).
 * CTAs are resident `ctas_per_unit` at a time per SM, so the grid runs in
 * waves; the last wave may be partial (wave quantisation, tail effect).
 *
 * A wave is simulated on one representative SM (all SMs of a wave run the
 * same tiles in lockstep, so they are symmetric), with the wave's real
 * totals put on the shared servers.  Its k-loop is cut into at most
 * GPU_MAX_CHUNKS chunks; chunk 0 is the pipeline prologue (stages-1
 * k-steps, as CUTLASS issues it); chunks grow 1.5x and shrink again at
 * the end (chunk_plan).  Each chunk is
 *     load    DRAM -> L2 -> SM: a flow on the DRAM server (the bytes that
 *             miss in L2) and a flow on the L2 server (all bytes), issued
 *             back to back; data is usable one memory latency after its
 *             flows drain;
 *     compute a flow on the matrix and/or vector pipe server and a flow on
 *             the shared-memory server (operand reads);
 *     store   write-back flows to L2 and DRAM, fire and forget.
 * Loads run ahead of compute by GPU_PIPE_DEPTH chunks (multi-stage
 * buffering), so memory and compute overlap and only what does not overlap
 * shows up as stall.  All servers are shared by every op running on the
 * device, so concurrent streams contend for DRAM, L2 and the pipes.
 *
 * Per-flow caps carry the per-SM limits: a wave on n SMs can pull at most
 * n * L2-port bandwidth from L2 and, by Little's law, at most
 * n * bytes-in-flight / loaded latency from DRAM.  That is where small
 * grids (a decode GEMV, a one-row norm) lose bandwidth.
 *
 * L2 reuse.  Within a wave, CTAs that share an operand panel (same row
 * block of A or column block of B) fetch it from DRAM once.  Across waves,
 * a panel is still in L2 if the bytes touched since its last use fit in
 * the usable L2 (an LRU stack-distance test).  Streaming kernels have no
 * reuse; multi-pass row kernels read their rows again from DRAM.
 *
 * Where time goes.  The representative SM is at any moment computing
 * (busy), waiting for a chunk's data (stall at the level whose flow
 * drained last, or whose latency it is waiting out), waiting for
 * shared-memory operand reads beyond the pipe time (smem stall), or
 * draining stores at the end of a wave.  Kernel launch overhead is its own
 * category.  The categories add up to the op's time exactly.
 *
 * Deliberately ignored: instruction issue limits, warp scheduling, bank
 * conflicts, L1 (loads are counted at L2), cross-op L2 reuse (each op
 * starts with a cold L2), DVFS and power limits (a config can model a
 * power-limited part with its own clock and efficiencies), SM partitioning
 * between concurrent kernels (they share the pipe servers instead).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "flow.h"
#include "model.h"
#include "net.h"
#include "record.h"
#include "systolic.h"

#define GPU_MAX_CHUNKS 32       /* k-loop chunks simulated per wave (fidelity knob) */
#define GPU_MAX_WAVES (1u << 20)   /* waves of tiles in one kernel: 200x a 65536^3 GEMM
                                    * (1214 on an A100) or a 131072-token attention of
                                    * 8 x 64 heads (4855); bounds absurd runs to seconds */
#define GPU_MAX_PANELS (1u << 26)  /* operand panels in one kernel */
#define GPU_PIPE_DEPTH 2        /* chunks a load may run ahead of compute */
#define GPU_MAX_KERNELS 3       /* kernels one op lowers to */
#define GPU_MAX_RUNNING 64      /* ops running at once on one device */
#define GPU_L2_USABLE 0.75      /* share of L2 the reuse test may count on (sets, other data) */
#define GPU_VEC_BYTES 16.0      /* bytes one thread loads per vector access */
#define GPU_GEMV_MAX_M 4        /* GEMMs with M up to this run as GEMV kernels */
#define GPU_SOFTMAX_ISSUE 50.0  /* vector-pipe slots per softmax element (fitted, see lower_op) */

enum gpu_ev { GPU_EV_BEGIN = 1, GPU_EV_READY = 2 };

/* What a flow is for; packed with the chunk number into the flow arg. */
enum flow_role { FR_LOAD, FR_PIPE, FR_SMEM, FR_STORE };

/* One kernel as the library would launch it. */
struct kplan {
    char what[16];              /* "gemm", "flash", "stream", "dma", ... */
    int dma;                    /* copy engine transfer, no SMs */
    int dma_h2d;                /* host to device regardless of the op (spilled weights) */
    int dma_net;                /* crosses the system's links: route[] holds its path */
    uint32_t route;             /* index into gpu.route when dma_net */
    uint32_t peer;              /* p2p: the trace device written */
    uint64_t fixed_ps;          /* > 0: a kernel of this fixed length (op given fixed_s) */
    int fixed;
    uint8_t dma_level;          /* level index: the host link for h2d/d2h, DRAM for d2d */
    double dma_bytes;
    uint64_t gm, gn, gb;        /* CTA grid: row blocks x column blocks x batch */
    uint32_t swizzle;           /* row blocks per raster group */
    uint32_t ctas_per_unit;     /* resident CTAs per SM */
    uint32_t ksteps;            /* main-loop steps per CTA */
    uint32_t stages;            /* smem pipeline stages */
    double a_step, b_step;      /* load bytes per CTA per step: A panel (shared along n), B panel (shared along m) */
    double pro_bytes;           /* bytes per CTA loaded once before the loop, not shared */
    double reread_step;         /* bytes per CTA per step read again from DRAM (multi-pass kernels) */
    double store_step;          /* bytes per CTA per step written back (streaming outputs) */
    double store_end;           /* bytes per CTA written after the loop (output tile) */
    double l2_only_end;         /* bytes per CTA exchanged through L2 only (split-K partials) */
    double mflops_step;         /* matrix-pipe FLOPs per CTA per step (padded tile) */
    double vflops_step;         /* vector-pipe FLOPs per CTA per step */
    double smem_step;           /* shared-memory operand bytes per CTA per step */
    double inflight_cta;        /* load bytes one CTA keeps in flight */
    int async_copy;             /* loads go to smem asynchronously (cp.async/TMA) */
    enum dtype mdt;             /* matrix pipe type */
    enum dtype vdt;             /* vector pipe type */
    double dram_cost;           /* DRAM capacity used per byte (read/write turnaround) */
    double load_frac;           /* L2 port share usable by its loads (narrow loads: < 1; 0 = 1) */
    char tile[48];
};

struct lowered {
    uint32_t nk;
    struct kplan k[GPU_MAX_KERNELS];
    double flops;               /* useful FLOPs of the op */
};

struct gpu;

/* One op in flight. */
struct runner {
    struct gpu *g;
    int in_use;
    uint32_t op;
    struct op_result *res;
    model_done_fn done;
    void *ctx;
    const struct lowered *low;
    uint32_t kern;
    const struct kplan *p;
    uint64_t wave, nwaves;
    uint32_t mult;              /* full waves simulated as this one */
    uint64_t t_mark;            /* time up to which res->time_ps is accounted */
    /* current wave */
    uint32_t units;             /* SMs busy in this wave */
    uint32_t nchunks;
    double frac[GPU_MAX_CHUNKS];
    double w_dram_r, w_l2_r;    /* loop loads of the wave: DRAM (misses), L2 (all) */
    double w_cache_r[HW_MAX_LEVELS]; /* ... reaching cache i >= 1 (misses of cache i-1) */
    double w_pro;               /* prologue loads (read from DRAM through L2) */
    uint64_t load_lat;          /* latency of a chunk load: DRAM if the wave reads DRAM, else L2 */
    double w_mflops, w_vflops, w_smem, w_store_loop, w_store_end, w_l2_end;
    double cap_dram, cap_l2, cap_m, cap_v, cap_smem;
    /* pipeline state */
    uint32_t load_next, comp_next;
    int load_busy, comp_busy;
    uint32_t load_pending, comp_pending, pipe_pending, store_pending;
    uint64_t comp_start, pipe_done;
    uint8_t ready[GPU_MAX_CHUNKS];
    uint8_t load_level[GPU_MAX_CHUNKS];
    uint8_t store_level;
    uint64_t wave_start;        /* when the current wave group began */
    int draining;               /* all waves computed, waiting for stores */
};

struct gpu {
    const struct hw_config *cfg;
    const struct trace *t;
    uint32_t device;
    uint32_t comp;
    struct engine *e;
    struct flowsrv dram, smem, mpipe, vpipe, h2d, d2h;
    struct flowsrv cache[HW_MAX_LEVELS];    /* one per cache level, innermost first */
    struct flowsrv *dramp;      /* &dram, or the run's shared unified-memory server */
    uint64_t frontend_free_ps;  /* launches are issued one at a time */
    struct lowered *low;        /* per op of the trace (only this device's are filled) */
    /* L2 reuse scratch, sized for the largest plan */
    int64_t *panel_last;        /* last wave a panel was used, -1 = never */
    double *wave_cum;           /* bytes touched up to and including wave w */
    /* multi-instance caches: the panels a wave fetched, with their readers */
    struct wpanel { double bytes; uint32_t missed; uint32_t readers; } *wpanel;
    uint32_t *panel_slot;       /* panel -> its wpanel entry in the current wave */
    double repl[HW_MAX_LEVELS]; /* copies per fetched byte the last wave made, per cache */
    uint32_t wave_npanels;      /* wpanel entries of the current wave */
    struct runner run[GPU_MAX_RUNNING];
    /* ops handed over while GPU_MAX_RUNNING were running (FIFO ring,
     * sized for every op of the trace) */
    uint32_t *waitq;
    struct op_result **waitq_res;
    uint32_t waitq_head, waitq_n, waitq_cap;
    model_done_fn done;
    void *ctx;
    struct timeline *tl;        /* NULL = not recording */
    struct run_env *env;        /* what the run's devices share (links, peers' DRAM) */
    struct sys_route *route;    /* paths of this device's copies that cross the system's links */
    uint32_t nroutes;
    struct gpu_watch { struct timeline *tl; struct tl_series *s; } watch[HW_MAX_LEVELS + 6];
};

static double dmax(double a, double b) { return a > b ? a : b; }
static double dmin(double a, double b) { return a < b ? a : b; }
static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
static uint64_t umin(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* ---------------------------------------------------------------- rates */

static double unit_matrix_rate(const struct hw_config *c, enum dtype t)
{
    return c->matrix_flops_per_cycle[t] * c->clock_hz * c->eff_matrix_pipe;
}

static double unit_vector_rate(const struct hw_config *c, enum dtype t)
{
    return c->vector_flops_per_cycle[t] * c->clock_hz * c->eff_vector_pipe;
}

/* Vector math runs in fp32 for 32-bit-and-narrower types (as PyTorch does). */
static enum dtype vector_type(const struct hw_config *c, enum dtype t)
{
    if (t == DT_FP64 && c->vector_flops_per_cycle[DT_FP64] > 0)
        return DT_FP64;
    return DT_FP32;
}

/* Matrix pipe type: fall back to the closest supported one. */
static enum dtype matrix_type(const struct hw_config *c, enum dtype t)
{
    static const enum dtype fallback[] = {DT_BF16, DT_FP16, DT_TF32, DT_FP32};
    if (c->matrix_flops_per_cycle[t] > 0)
        return t;
    for (size_t i = 0; i < sizeof fallback / sizeof fallback[0]; i++)
        if (c->matrix_flops_per_cycle[fallback[i]] > 0)
            return fallback[i];
    return t;
}

/* DRAM capacity used per byte when a kernel mixes reads and writes. */
static double dram_cost(const struct hw_config *c, double rd, double wr)
{
    double tot = rd + wr;
    if (tot <= 0)
        return 1.0;
    double mix = 2.0 * dmin(rd, wr) / tot;
    return 1.0 / (1.0 - cfg_dram(c)->eff_rw_penalty * mix);
}

/* ---------------------------------------------------------------- lowering */

static void plan_occupancy(const struct hw_config *c, struct kplan *p, uint32_t threads,
                           double smem_cta, double regs_cta)
{
    uint64_t cpu = c->max_ctas_per_unit;
    cpu = umin(cpu, c->max_threads_per_unit / threads);
    if (smem_cta > 0)
        cpu = umin(cpu, (uint64_t)((double)cfg_smem(c)->capacity_bytes / smem_cta));
    if (regs_cta > 0)
        cpu = umin(cpu, (uint64_t)((double)cfg_regs(c)->capacity_bytes / regs_cta));
    p->ctas_per_unit = cpu > 0 ? (uint32_t)cpu : 1;
}

/* A streaming kernel over `items` work items of `item_bytes` loaded bytes:
 * a grid-stride loop on a persistent grid (at most one full wave), as
 * PyTorch's and CUTLASS's elementwise kernels effectively behave.
 * min_ctas forces at least that many CTAs (one per row for row kernels). */
static void plan_stream(const struct hw_config *c, struct kplan *p, const char *what,
                        double load_bytes, double store_bytes, double vflops,
                        enum dtype vdt, uint64_t rows, uint32_t inputs, double vec_bytes)
{
    memset(p, 0, sizeof *p);
    snprintf(p->what, sizeof p->what, "%s", what);
    uint32_t threads = 256;
    plan_occupancy(c, p, threads, 0, 0);
    double per_step = threads * vec_bytes * (inputs > 0 ? inputs : 1);
    double traffic = dmax(load_bytes, store_bytes);
    uint64_t items = (uint64_t)ceil(dmax(traffic, 1.0) / per_step);
    uint64_t slots = (uint64_t)c->units * p->ctas_per_unit;
    uint64_t ctas = rows > 0 ? rows : items;
    if (ctas > slots * 64)      /* group rows so a grid is at most 64 waves */
        ctas = slots * 64;
    if (rows == 0 && ctas > slots)
        ctas = slots;
    if (ctas > items && rows == 0)
        ctas = items;
    if (ctas == 0)
        ctas = 1;
    uint64_t steps = ceil_div(items, ctas);
    if (steps == 0)
        steps = 1;
    p->gm = ctas;
    p->gn = 1;
    p->gb = 1;
    p->swizzle = 1;
    p->ksteps = (uint32_t)umin(steps, UINT32_MAX);
    p->stages = 2;
    double per_cta_step = 1.0 / ((double)ctas * (double)p->ksteps);
    p->a_step = load_bytes * per_cta_step;
    p->store_step = store_bytes * per_cta_step;
    p->vflops_step = vflops * per_cta_step;
    p->smem_step = 0;
    /* each thread keeps one access per input in flight */
    p->inflight_cta = dmin(per_step, dmax(p->a_step * p->ksteps, 1.0));
    p->async_copy = 0;
    p->vdt = vdt;
    p->mdt = vdt;
    p->dram_cost = dram_cost(c, load_bytes, store_bytes);
    snprintf(p->tile, sizeof p->tile, "%llu ctas x %u steps",
             (unsigned long long)ctas, p->ksteps);
}

/* GEMM C[b](M x N) = A[b](M x K) B[b](K x N).  Candidate tiles are scored
 * with a quick per-wave estimate (as library heuristics do); the winner is
 * then simulated in full.  Split-K CTAs exchange fp32 partials through L2. */
struct gemm_shape {
    uint64_t m, n, k, b;
    enum dtype dt;
    double out_bytes;           /* bytes per output element */
    double b_bytes;             /* bytes per B (weight) element: dtype or quantised format */
    double deq_ops;             /* vector ops to dequantise one weight (0 if not quantised) */
    double load_frac;           /* load width / 16 B: 1 when rows are 16-byte aligned */
};

/* Widest load (1, 2, 4, 8 or 16 bytes) a GEMM kernel can use: the row
 * lengths of A (k elements) and B and C (n elements) must be multiples of
 * it, or libraries fall back to narrower loads (cuBLAS/CUTLASS "align1"
 * kernels).  A narrower load moves fewer bytes per load instruction, so the
 * same tile takes that many more requests through the SM's L2 port; the
 * port's bytes per cycle are scaled by width / 16 (models/gpu.c
 * wave_begin).  Returned as that fraction. */
static double gemm_load_frac(uint64_t n, uint64_t k, double eb)
{
    double w = 16.0;
    while (w > eb && w >= 2.0 &&
           ((double)k * eb / w != floor((double)k * eb / w) ||
            (double)n * eb / w != floor((double)n * eb / w)))
        w /= 2.0;
    return w / 16.0;
}

/* Matrix-pipe work of one tile step on a systolic unit (the `systolic`
 * block): a (rows x k) x (k x n) product with the k x n operand held in the
 * array (weight stationary).  It is cut into ceil(k/R) x ceil(n/C) folds;
 * each streams the `rows` rows through the array.  The timing of a fold is
 * models/systolic.c's rule (the one `strata scalesim` uses) with the
 * weights double-buffered, as the TPU's MXU loads the next fold's while the
 * current one streams: max(rows, R) cycles a fold.  Returned as FLOPs at
 * the array's peak (2 R C per cycle), so short or narrow products cost what
 * the idle PEs and weight loads cost.  On a GPU (no array): 2 rows k n. */
static double systolic_flops(const struct hw_config *c, double rows, double k, double n)
{
    if (c->sa_rows == 0)
        return 2.0 * rows * k * n;
    double R = c->sa_rows, C = c->sa_cols;
    double folds = ceil(k / R) * ceil(n / C);
    return 2.0 * R * C * folds * sa_fold_cycles(R, C, SA_WS, rows, 1);
}

/* The array's fill and drain once per tile (the same rule), as FLOPs. */
static double systolic_fill_flops(const struct hw_config *c)
{
    return c->sa_rows == 0 ? 0
                           : 2.0 * c->sa_rows * (double)c->sa_cols *
                                 sa_fill_cycles(c->sa_rows, c->sa_cols, 1);
}

/* fp32/fp64 GEMMs on a chip without a matrix pipe for that type run as
 * SIMT kernels on the vector pipe (FFMA), e.g. fp32 with TF32 disabled. */
static int gemm_simt(const struct hw_config *c, enum dtype t)
{
    return (c->matrix_flops_per_cycle[t] <= 0 && c->vector_flops_per_cycle[t] > 0) ||
           c->matrix_flops_per_cycle[matrix_type(c, t)] <= 0; /* no matrix pipe for it at all */
}

/* The vector-pipe type a SIMT GEMM computes in: its own, else fp32, else
 * any the chip has (an int8-only NPU running a bf16 trace). */
static enum dtype simt_type(const struct hw_config *c, enum dtype t)
{
    if (c->vector_flops_per_cycle[t] > 0)
        return t;
    if (c->vector_flops_per_cycle[DT_FP32] > 0)
        return DT_FP32;
    for (unsigned i = 0; i < DT_COUNT; i++)
        if (c->vector_flops_per_cycle[i] > 0)
            return (enum dtype)i;
    return t;
}

static double gemm_estimate(const struct hw_config *c, const struct gemm_shape *s,
                            uint32_t tm, uint32_t tn, uint32_t tk, uint32_t split,
                            uint32_t cpu, struct kplan *p)
{
    double eb = dtype_bytes(s->dt, 1.0);
    enum dtype mdt = matrix_type(c, s->dt);
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
    double mstep = c->sa_rows == 0 ? 2.0 * tm * tn * (double)tk
                                   : systolic_flops(c, rows_a, tk, tn) +
                                         systolic_fill_flops(c) / steps;
    /* quick estimate, only to choose */
    double cta_flops = mstep * steps;
    double per_unit = gemm_simt(c, s->dt) ? unit_vector_rate(c, simt_type(c, s->dt))
                                          : unit_matrix_rate(c, mdt);
    double active = (double)umin(ctas, slots);
    double units_busy = dmin((double)c->units, ceil(active / cpu));
    double cpu_eff = active / units_busy;
    double t_comp = waves * cpu_eff * cta_flops / per_unit;
    double dram_bytes = (double)s->b * ((double)s->m * s->k * eb + (double)s->k * s->n * s->b_bytes);
    /* A is re-read once per wave-column of B that does not fit in L2 */
    double b_bytes = (double)s->k * s->n * s->b_bytes * s->b;
    if (b_bytes > cfg_l2(c)->capacity_bytes * GPU_L2_USABLE && waves > 1)
        dram_bytes += (double)s->b * s->m * s->k * eb * dmin((double)waves - 1, (double)gn);
    dram_bytes += (double)s->b * s->m * s->n * s->out_bytes;
    double dram_bw = cfg_dram(c)->bw_bytes_per_s * cfg_dram(c)->eff_bw;
    double little = units_busy *
                    (c->sa_rows ? (double)c->eff_inflight_bytes_per_unit
                                : dmin(cpu * (double)(p->stages - 1) * (a_step + b_step),
                                       (double)cfg_smem(c)->capacity_bytes)) /
                    ((double)cfg_dram(c)->eff_loaded_latency_ps * 1e-12);
    double t_dram = dram_bytes / dmin(dram_bw, little);
    double l2_bytes = (double)ctas * steps * (a_step + b_step);
    double l2_bw = dmin(cfg_l2(c)->bw_bytes_per_s,
                        units_busy * cfg_l2(c)->port_bytes_per_cycle_per_unit * s->load_frac * c->clock_hz);
    double t_l2 = l2_bytes / l2_bw;
    double t_split = split > 1 ? (double)ctas * tm * tn * 4.0 * 2.0 / cfg_l2(c)->bw_bytes_per_s : 0;
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

static void plan_gemm(const struct hw_config *c, struct kplan *best, const struct gemm_shape *s)
{
    static const uint32_t tms[] = {16, 32, 64, 128, 256};
    static const uint32_t tns[] = {32, 64, 128, 256};
    static const uint32_t splits[] = {1, 2, 3, 4, 6, 8, 12, 16};
    double eb = dtype_bytes(s->dt, 1.0);
    double best_t = INFINITY;
    /* relax: on a chip whose shared memory or registers hold no tile at all
     * (a config typo, or a tiny NPU buffer), take the tiles as if they fit
     * (two stages, registers unchecked) rather than have no plan */
    for (int relax = 0; relax < 2 && !isfinite(best_t); relax++)
    for (uint32_t tkb = 64; tkb <= 128; tkb *= 2) {    /* k-step of 64 or 128 bytes */
    /* a systolic unit takes one array height of k per step (a shorter step
     * would leave rows of the array idle), or as much of it as the unit's
     * buffers hold for the smallest tile (16 x 64, two stages) */
    uint32_t tk = (uint32_t)dmax(16.0, tkb / eb);
    if (c->sa_rows) {
        tk = c->sa_rows;
        while (tk > 16 && 2.0 * (16 + 64) * tk * eb > (double)cfg_smem(c)->capacity_bytes)
            tk /= 2;
    }
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
            double regs = tm * (double)tn * 4.0 * 1.5 + threads * 64.0 * 4.0;
            struct kplan cand;
            memset(&cand, 0, sizeof cand);
            plan_occupancy(c, &cand, threads, smem, regs);
            if (regs > (double)cfg_regs(c)->capacity_bytes && !relax)
                continue;
            cand.stages = stages;
            for (size_t k = 0; k < sizeof splits / sizeof splits[0]; k++) {
                uint32_t sp = splits[k];
                if (sp > 1 && s->k / sp < 4ull * tk)
                    break;
                double t = gemm_estimate(c, s, tm, tn, tk, sp, cand.ctas_per_unit, &cand);
                /* prefer the larger tile / smaller split on near-ties (< 1%) */
                if (t < best_t * 0.99) {
                    best_t = t;
                    *best = cand;
                    snprintf(best->what, sizeof best->what, "gemm");
                    best->swizzle = 8;
                    best->pro_bytes = 0;
                    double wm = dmin(64.0, tm), wn = dmin(128.0, tn);
                    best->smem_step = tk * eb * (tm * (double)tn / wn + tm * (double)tn / wm);
                    best->store_end = sp > 1 ? 0 : dmin(tm, (double)s->m) * dmin(tn, (double)s->n) * s->out_bytes;
                    best->l2_only_end = sp > 1 ? tm * (double)tn * 4.0 * 2.0 : 0;
                    if (sp > 1)
                        best->store_end = dmin(tm, (double)s->m) * dmin(tn, (double)s->n) *
                                          s->out_bytes / sp;
                    best->inflight_cta = (stages - 1) * (best->a_step + best->b_step);
                    best->async_copy = 1;
                    best->mdt = matrix_type(c, s->dt);
                    best->vdt = DT_FP32;
                    if (gemm_simt(c, s->dt)) {
                        /* FMAs on the vector pipe: the tile's own work, no
                         * array folding */
                        best->vflops_step = 2.0 * tm * tn * (double)tk;
                        best->mflops_step = 0;
                        best->vdt = simt_type(c, s->dt);
                    }
                    /* quantised weights are dequantised as each B tile is loaded */
                    best->vflops_step += dmin(tn, (double)s->n) * tk * s->deq_ops;
                    best->dram_cost = 1.0;
                    best->load_frac = s->load_frac;
                    snprintf(best->tile, sizeof best->tile, "%ux%ux%u s%u split%u%s",
                             tm, tn, tk, stages, sp, s->load_frac < 1 ? " narrow" : "");
                }
            }
        }
    }
    }
    SIM_CHECK(isfinite(best_t));
}

static double out_bytes_for(enum dtype t)
{
    switch (t) {
    case DT_FP64: return 8;
    case DT_FP32: case DT_TF32: return 4;
    case DT_FP16: case DT_BF16:                 /* 16-bit out */
    case DT_FP8_E4M3: case DT_FP8_E5M2: case DT_INT8: case DT_INT4: /* dequantised to 16-bit */
    case DT_COUNT:
        break;
    }
    return 2;
}

/* FlashAttention-2 style: a CTA owns Br query rows of one KV head (GQA
 * query heads of a group are packed into the rows) and streams K and V in
 * Bc-row blocks; S = QK^T and PV on the matrix pipe, the online softmax on
 * the vector pipe.  Short queries split the KV range over CTAs
 * (flash-decoding) so the grid fills the SMs. */
static void plan_flash(const struct hw_config *c, struct kplan *p, const struct op *o)
{
    memset(p, 0, sizeof *p);
    snprintf(p->what, sizeof p->what, "flash");
    double eb = dtype_bytes(o->dtype, 1.0);
    uint64_t d = o->u.attn.head_dim;
    uint64_t group = o->u.attn.heads / o->u.attn.kv_heads;
    uint64_t rows = o->u.attn.q_len * group;     /* query rows per KV head */
    uint32_t br = rows >= 128 ? 128 : (rows >= 64 ? 64 : (rows >= 32 ? 32 : 16));
    uint32_t bc = d > 128 ? 32 : 64;
    uint64_t qt = ceil_div(rows, br);
    uint64_t base = o->u.attn.batch * o->u.attn.kv_heads * qt;
    /* average KV length a query tile attends to */
    double kv = (double)o->u.attn.kv_len;
    if (o->u.attn.causal) {
        double q = (double)o->u.attn.q_len;
        double prefix = kv - q;             /* cached tokens all queries see */
        kv = dmax(1.0, prefix + (q + br / (double)group) / 2.0);
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
    plan_occupancy(c, p, threads, smem, regs);
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
    /* S = Q K^T, then O += P V: two products per key block */
    p->mflops_step = c->sa_rows == 0 ? 4.0 * br * (double)bc * d
                                     : systolic_flops(c, q_rows, (double)d, (double)bc) +
                                           systolic_flops(c, q_rows, (double)bc, (double)d) +
                                           systolic_fill_flops(c) / (double)steps;
    p->vflops_step = 6.0 * q_rows * bc;         /* scale, max, exp, sum, rescale */
    if (c->sa_rows) {
        /* a few query rows fill a systolic array poorly: the products run on
         * the vector unit when that is faster (decode attention on a TPU) */
        double useful = 4.0 * q_rows * (double)bc * d;
        if (useful / unit_vector_rate(c, DT_FP32) < p->mflops_step / unit_matrix_rate(c, matrix_type(c, o->dtype))) {
            p->vflops_step += useful;
            p->mflops_step = 0;
        }
    }
    p->smem_step = (2.0 * br * bc + 2.0 * bc * d) * eb;
    p->store_end = q_rows * d * eb + (split > 1 ? q_rows * (d + 2.0) * 4.0 : 0);
    p->inflight_cta = p->b_step;
    p->async_copy = 1;
    p->mdt = matrix_type(c, o->dtype);
    p->vdt = DT_FP32;
    p->dram_cost = 1.0;
    snprintf(p->tile, sizeof p->tile, "Br%u Bc%u split%llu", br, bc, (unsigned long long)split);
}

static void lower_op(const struct hw_config *c, const struct op *o, double spill_frac,
                     struct lowered *L)
{
    memset(L, 0, sizeof *L);
    if (o->fixed_s >= 0) {
        /* the trace says how long it takes (e.g. an imported kernel without
         * shapes): one kernel of that length, busy the whole time */
        struct kplan *p = &L->k[0];
        p->fixed = 1;
        p->fixed_ps = (uint64_t)llround(o->fixed_s * 1e12);
        snprintf(p->what, sizeof p->what, "fixed");
        snprintf(p->tile, sizeof p->tile, "fixed %.3f us", o->fixed_s * 1e6);
        L->nk = 1;
        return;
    }
    double eb = dtype_bytes(o->dtype, 1.0);
    enum dtype vdt = vector_type(c, o->dtype);
    switch (o->kind) {
    case OP_GEMM: {
        enum wfmt wf = o->u.gemm.weights;
        struct gemm_shape s = {o->u.gemm.m, o->u.gemm.n, o->u.gemm.k, o->u.gemm.batch,
                               o->dtype, out_bytes_for(o->dtype),
                               wf != WF_NONE ? wfmt_bits(wf) / 8.0 : eb, wfmt_dequant_ops(wf), 1.0};
        /* the narrow-load rule is about GPU libraries' kernels; a systolic
         * chip's DMA and quantised weights (packed blocks) are not bound by it */
        if (c->sa_rows == 0 && wf == WF_NONE)
            s.load_frac = gemm_load_frac(s.n, s.k, eb);
        L->flops = 2.0 * s.m * (double)s.n * s.k * s.b;
        L->nk = 1;
        if (s.m <= GPU_GEMV_MAX_M) {
            /* matrix-vector: libraries stream B through registers with FMAs
             * on the vector pipe; no tiles, no tensor cores, no reuse;
             * quantised weights are dequantised once each */
            double w = (double)s.k * s.n * s.b;
            double wb = w * s.b_bytes;
            double ab = (double)s.m * s.k * eb * s.b, ob = (double)s.m * s.n * s.out_bytes * s.b;
            plan_stream(c, &L->k[0], "gemv", wb + ab, ob, L->flops + w * s.deq_ops, vdt, 0, 1,
                        GPU_VEC_BYTES);
            break;
        }
        plan_gemm(c, &L->k[0], &s);
        break;
    }
    case OP_ATTENTION: {
        const uint64_t b = o->u.attn.batch, h = o->u.attn.heads, q = o->u.attn.q_len;
        const uint64_t kv = o->u.attn.kv_len, d = o->u.attn.head_dim;
        double pairs = (double)q * kv;
        if (o->u.attn.causal)       /* query i sees kv_len - q_len + i + 1 keys */
            pairs = (double)q * (double)(kv - q) + (double)q * (q + 1) / 2.0;
        L->flops = 4.0 * b * h * pairs * d;
        if (o->u.attn.impl == ATTN_FLASH) {
            plan_flash(c, &L->k[0], o);
            L->nk = 1;
        } else {
            /* naive: S = QK^T to memory, softmax, O = PV (GQA K/V expanded) */
            struct gemm_shape s1 = {q, kv, d, b * h, o->dtype, eb, dtype_bytes(o->u.attn.kv_dtype, 1.0), 0, 1.0};
            plan_gemm(c, &L->k[0], &s1);
            snprintf(L->k[0].what, sizeof L->k[0].what, "bmm_qk");
            double el = (double)b * h * q * kv;
            plan_stream(c, &L->k[1], "softmax", el * eb, el * eb, 5.0 * el, vdt, b * h * q, 1, GPU_VEC_BYTES);
            struct gemm_shape s2 = {q, d, kv, b * h, o->dtype, eb, dtype_bytes(o->u.attn.kv_dtype, 1.0), 0, 1.0};
            plan_gemm(c, &L->k[2], &s2);
            snprintf(L->k[2].what, sizeof L->k[2].what, "bmm_pv");
            L->nk = 3;
        }
        break;
    }
    case OP_ELEMENTWISE: {
        double el = (double)o->u.ew.elements;
        plan_stream(c, &L->k[0], "elementwise", el * eb * o->u.ew.inputs,
                    el * eb * o->u.ew.outputs, el * o->u.ew.flops_per_element, vdt, 0,
                    o->u.ew.inputs, o->u.ew.vector_bytes > 0 ? o->u.ew.vector_bytes : 1.0);
        L->nk = 1;
        L->flops = el * o->u.ew.flops_per_element;
        break;
    }
    case OP_SOFTMAX: case OP_NORM: case OP_REDUCTION: {
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
         * shuffles of two row reductions.  GPU_SOFTMAX_ISSUE slots per
         * element were fitted to LLMC-103 (A100, 4096 x 4096 fp16); the
         * report still counts 5 useful FLOP per element. */
        double slots_pe = o->kind == OP_SOFTMAX ? GPU_SOFTMAX_ISSUE : fpe;
        plan_stream(c, &L->k[0], what, el * eb, out, el * slots_pe, vdt, ctas, 1, GPU_VEC_BYTES);
        double passes = 1;
        if (o->kind == OP_SOFTMAX && cols > 1024)
            passes = 2;
        if (o->kind == OP_NORM && cols * eb > 16384)
            passes = 3;
        L->k[0].reread_step = L->k[0].a_step * (passes - 1);
        L->nk = 1;
        L->flops = el * fpe;
        break;
    }
    case OP_EMBEDDING: {
        double el = (double)o->u.emb.tokens * o->u.emb.dim;
        plan_stream(c, &L->k[0], "embedding", el * eb, el * eb, 0, vdt, o->u.emb.tokens, 1, GPU_VEC_BYTES);
        L->nk = 1;
        break;
    }
    case OP_MEMCPY: {
        struct kplan *p = &L->k[0];
        memset(p, 0, sizeof *p);
        p->dma = 1;
        p->dma_bytes = (double)o->u.copy.bytes;
        p->dma_level = (uint8_t)(o->u.copy.dir == MEMCPY_D2D ? c->lv_dram : c->lv_host);
        p->peer = o->u.copy.dir == MEMCPY_P2P ? o->u.copy.peer : TRACE_NO_DEVICE;
        p->dma_net = o->u.copy.dir == MEMCPY_P2P;  /* gpu_create finds its route */
        p->dram_cost = o->u.copy.dir == MEMCPY_D2D ? dram_cost(c, 1, 1) : 1.0;
        snprintf(p->what, sizeof p->what, "dma");
        snprintf(p->tile, sizeof p->tile, "copy engine");
        L->nk = 1;
        break;
    }
    case OP_GENERIC: {
        plan_stream(c, &L->k[0], "generic", o->u.gen.bytes, 0, o->u.gen.flops, vdt, 0, 1, GPU_VEC_BYTES);
        L->nk = 1;
        L->flops = o->u.gen.flops;
        break;
    }
    case OP_KIND_COUNT:
        SIM_CHECK(0);
    }
    if (spill_frac > 0 && o->kind == OP_GEMM && L->nk < GPU_MAX_KERNELS) {
        /* the device cannot hold every weight: this GEMM's share of the
         * overflow is copied from host memory over PCIe before it runs */
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
}

/* ---------------------------------------------------------------- L2 reuse */

/* CTA index -> (batch, row block, column block), grouped raster order:
 * `swizzle` row blocks are walked column by column, which keeps the B
 * panels of a wave few (CUTLASS threadblock swizzle / Triton GROUP_M). */
struct cta_pos {
    uint64_t b, first, rows, li, j; /* i = first + li */
};

static void cta_coords(const struct kplan *p, uint64_t idx, struct cta_pos *c)
{
    uint64_t per_b = p->gm * p->gn;
    c->b = idx / per_b;
    uint64_t t = idx % per_b;
    uint64_t sw = p->swizzle ? p->swizzle : 1;
    c->first = t / (sw * p->gn) * sw;
    c->rows = umin(sw, p->gm - c->first);
    uint64_t local = t % (sw * p->gn);
    c->li = local % c->rows;
    c->j = local / c->rows;
}

/* The next CTA in launch order (no division: this runs once per CTA). */
static void cta_next(const struct kplan *p, struct cta_pos *c)
{
    if (++c->li < c->rows)
        return;
    c->li = 0;
    if (++c->j < p->gn)
        return;
    c->j = 0;
    uint64_t sw = p->swizzle ? p->swizzle : 1;
    c->first += sw;
    if (c->first >= p->gm) {
        c->first = 0;
        c->b++;
    }
    c->rows = umin(sw, p->gm - c->first);
}

/* Fills the wave's load bytes per cache level: l2 = what the wave's CTAs
 * read from the first cache (all their operand bytes), miss[i] = what
 * misses cache i and goes on to the next cache or, for the last, DRAM.
 * Panels: A (b, i) and B (b, j).
 *
 * One LRU stack-distance rule serves every cache: a panel is still in a
 * cache if the bytes touched since its last use fit in that cache's usable
 * capacity, so the misses of a larger (outer) cache are a subset of an
 * inner one's.  A cache with several instances (scope group: one L2 per
 * MI300X XCD) holds, in each instance, what its own units read.  CTAs are
 * dealt round-robin over the instances, so a panel that k CTAs of the wave
 * read is fetched into min(k, instances) of them: that many times its bytes
 * at the next level.  The copies also crowd each other out, so the reuse
 * test counts the capacity of all instances divided by the replication the
 * previous wave saw (g->repl, 1 at the start of a kernel). */
static inline void wave_reuse_loop(struct gpu *g, const struct kplan *p, uint64_t wave,
                                   uint64_t c0, uint64_t c1, double *miss, const double *cap,
                                   const uint32_t nc, const int grouped)
{
    double steps = p->ksteps;
    const double sz[2] = {p->a_step * steps, p->b_step * steps};
    const int shared[2] = {p->gn > 1, p->gm > 1};
    uint64_t na = p->gb * p->gm;
    double touched = 0, all = 0;    /* all: bytes that miss every cache */
    double lm[HW_MAX_LEVELS] = {0}; /* misses per cache, kept local (miss may alias g's arrays) */
    uint32_t nlist = 0;
    double prev_cum = wave > 0 ? g->wave_cum[wave - 1] : 0;
    struct cta_pos pos;
    cta_coords(p, c0, &pos);
    /* a panel nobody else reads streams from DRAM: its bytes, per CTA */
    double alone = (sz[0] > 0 && !shared[0] ? sz[0] : 0) + (sz[1] > 0 && !shared[1] ? sz[1] : 0);
    const int look[2] = {sz[0] > 0 && shared[0], sz[1] > 0 && shared[1]};
    for (uint64_t c = c0; c < c1; c++, cta_next(p, &pos)) {
        all += alone;
        touched += alone;
        for (int k = 0; k < 2; k++) {
            if (!look[k])
                continue;
            uint64_t id = k == 0 ? pos.b * p->gm + pos.first + pos.li : na + pos.b * p->gn + pos.j;
            int64_t last = g->panel_last[id];
            if (last == (int64_t)wave) {
                if (grouped)        /* one more reader of it in this wave */
                    g->wpanel[g->panel_slot[id]].readers++;
                continue;           /* another CTA of this wave already fetched it */
            }
            touched += sz[k];
            uint32_t missed = 0;    /* bit ci: it missed cache ci */
            if (last < 0) {
                all += sz[k];
                missed = ~0u;
            } else {
                double since = prev_cum - (last > 0 ? g->wave_cum[last - 1] : 0);
                for (uint32_t ci = 0; ci < nc; ci++)
                    if (since + sz[k] > cap[ci]) {
                        lm[ci] += sz[k];
                        missed |= 1u << ci;
                    }
            }
            g->panel_last[id] = (int64_t)wave;
            if (grouped) {
                g->panel_slot[id] = nlist;
                g->wpanel[nlist++] = (struct wpanel){sz[k], missed, 1};
            }
        }
    }
    for (uint32_t ci = 0; ci < nc; ci++)
        miss[ci] += lm[ci] + all;
    g->wave_cum[wave] = prev_cum + touched;
    g->wave_npanels = nlist;
}

static void wave_reuse(struct gpu *g, const struct kplan *p, uint64_t wave, uint64_t c0,
                       uint64_t c1, double *miss, double *l2)
{
    const struct hw_config *cfg = g->cfg;
    const uint32_t nc = cfg->ncaches;
    double cap[HW_MAX_LEVELS];
    int grouped = 0;
    for (uint32_t ci = 0; ci < nc; ci++) {
        const struct hw_level *L = &cfg->level[cfg->lv_cache[ci]];
        cap[ci] = (double)L->capacity_bytes * GPU_L2_USABLE;
        if (L->instances > 1) {
            cap[ci] = cap[ci] * L->instances / g->repl[ci];
            grouped = 1;
        }
        miss[ci] = 0;
    }
    /* the common chip (one cache, one instance) gets its own copy of the
     * loop, with the cache count a constant */
    if (nc == 1 && !grouped)
        wave_reuse_loop(g, p, wave, c0, c1, miss, cap, 1, 0);
    else
        wave_reuse_loop(g, p, wave, c0, c1, miss, cap, nc, grouped);
    /* the replicated fetches into the instances of multi-instance caches */
    for (uint32_t ci = 0; grouped && ci < nc; ci++) {
        const struct hw_level *L = &cfg->level[cfg->lv_cache[ci]];
        if (L->instances <= 1)
            continue;
        double once = 0, copies = 0;
        for (uint32_t i = 0; i < g->wave_npanels; i++) {
            const struct wpanel *w = &g->wpanel[i];
            double n = dmin((double)w->readers, (double)L->instances);
            once += w->bytes;
            copies += w->bytes * n;
            if (w->missed & (1u << ci))
                miss[ci] += w->bytes * (n - 1);
        }
        g->repl[ci] = once > 0 ? copies / once : 1.0;
    }
    double steps = p->ksteps;
    *l2 = (double)(c1 - c0) * (p->a_step * steps + p->b_step * steps);
}

/* ---------------------------------------------------------------- runner */

static void runner_next_kernel(struct runner *r);
static void gpu_start_op(void *dev, uint32_t op_index, struct op_result *res,
                         model_done_fn done, void *ctx);
static void runner_try_load(struct runner *r);
static void runner_try_compute(struct runner *r);
static void runner_check_wave_end(struct runner *r);

static void account(struct runner *r, enum time_cat cat)
{
    uint64_t now = r->g->e->now_ps;
    SIM_CHECK_LE_U64(r->t_mark, now);
    r->res->time_ps[cat] += now - r->t_mark;
    r->t_mark = now;
}

static uint64_t pack_arg(enum flow_role role, uint32_t chunk, unsigned lvl)
{
    return ((uint64_t)role << 16) | ((uint64_t)lvl << 8) | chunk;
}

static void runner_flow_done(struct engine *e, void *owner, uint64_t arg);

static void start_flow(struct runner *r, struct flowsrv *s, double amount, double cap,
                       enum flow_role role, uint32_t chunk, unsigned lvl, uint32_t *counter)
{
    if (amount <= 0)
        return;
    (*counter)++;
    flowsrv_start(s, r->g->e, amount, cap, runner_flow_done, r, pack_arg(role, chunk, lvl));
}

/* Cut a k-loop of ks steps into chunks: the prologue (pro steps), chunks
 * growing 1.5x, equal middle chunks, then the mirror image shrinking back.
 * A chunk's compute waits for all of its data and the last chunk's compute
 * cannot hide behind anything, so neighbouring chunks differ by at most
 * 1.5x and both ends are small: what stays exposed is close to what a
 * real multi-stage pipeline exposes (its fill and its drain).  Returns the
 * number of chunks; frac[i] is chunk i's share of the loop. */
static uint32_t chunk_plan(uint32_t ks, uint32_t pro, double *frac)
{
    uint32_t ramp[GPU_MAX_CHUNKS / 2], n = 0;
    uint64_t sum = 0, size = pro > 0 ? pro : 1;
    while (n < GPU_MAX_CHUNKS / 2 - 2 && 2 * (sum + size) <= ks) {
        ramp[n++] = (uint32_t)size;
        sum += size;
        size += (size + 1) / 2;
    }
    if (n == 0) {
        frac[0] = 1.0;
        return 1;
    }
    uint64_t mid = ks - 2 * sum;
    uint64_t cap = size;
    uint64_t nmid = mid ? (mid + cap - 1) / cap : 0;
    if (2 * n + nmid > GPU_MAX_CHUNKS)
        nmid = GPU_MAX_CHUNKS - 2 * n;
    uint32_t c = 0;
    for (uint32_t i = 0; i < n; i++)
        frac[c++] = (double)ramp[i] / ks;
    for (uint64_t i = 0; i < nmid; i++) {
        uint64_t lo = mid * i / nmid, hi = mid * (i + 1) / nmid;
        frac[c++] = (double)(hi - lo) / ks;
    }
    for (uint32_t i = n; i-- > 0;)
        frac[c++] = (double)ramp[i] / ks;
    return c;
}

static void wave_begin(struct runner *r)
{
    struct gpu *g = r->g;
    const struct hw_config *c = g->cfg;
    const struct kplan *p = r->p;
    uint64_t ctas = p->gm * p->gn * p->gb;
    uint64_t slots = (uint64_t)c->units * p->ctas_per_unit;
    uint64_t c0 = r->wave * slots, c1 = umin(ctas, c0 + slots);
    uint64_t wctas = c1 - c0;
    /* the block scheduler spreads CTAs over all SMs before doubling up */
    r->units = (uint32_t)umin(c->units, wctas);
    uint32_t cpu = (uint32_t)ceil_div(wctas, r->units);

    /* With two or more CTAs per SM, an SM starts its next CTA while the
     * other one still computes, so a run of full waves behaves like one
     * long pipeline (no per-wave fill and drain): simulate it as one wave
     * whose k-loop is that many times longer.  With one CTA per SM the
     * next CTA's prologue is exposed, wave by wave. */
    uint64_t full = ctas / slots;
    r->mult = 1;
    if (p->ctas_per_unit >= 2 && r->wave + 1 < full)
        r->mult = (uint32_t)umin(full - r->wave, UINT32_MAX / (p->ksteps + 1));
    const uint32_t nc = c->ncaches;
    double miss_loop[HW_MAX_LEVELS] = {0}, l2_loop = 0;
    for (uint32_t m = 0; m < r->mult; m++) {
        uint64_t a = (r->wave + m) * slots, b = umin(ctas, a + slots);
        double m1[HW_MAX_LEVELS], l1 = 0;
        wave_reuse(g, p, r->wave + m, a, b, m1, &l1);
        for (uint32_t ci = 0; ci < nc; ci++)
            miss_loop[ci] += m1[ci];
        l2_loop += l1;
    }
    double n = (double)wctas * r->mult, steps = p->ksteps;
    double reread = p->reread_step * steps * n;   /* extra passes: from DRAM */
    r->w_dram_r = miss_loop[nc - 1] + reread;
    r->w_l2_r = l2_loop + reread;
    for (uint32_t ci = 1; ci < nc; ci++)        /* what reaches the outer caches */
        r->w_cache_r[ci] = miss_loop[ci - 1] + reread;
    r->w_pro = p->pro_bytes * n;
    /* a chunk's data is usable one latency of the outermost level it
     * reaches after its flows drain */
    r->load_lat = cfg_l2(c)->latency_ps;
    for (uint32_t ci = 1; ci < nc; ci++)
        if (r->w_cache_r[ci] > 0)
            r->load_lat = c->level[c->lv_cache[ci]].latency_ps;
    if (r->w_dram_r + r->w_pro > 0)
        r->load_lat = cfg_dram(c)->latency_ps;
    r->w_mflops = p->mflops_step * steps * n;
    r->w_vflops = p->vflops_step * steps * n;
    r->w_smem = p->smem_step * steps * n;
    r->w_store_loop = p->store_step * steps * n;
    r->w_store_end = p->store_end * n;
    r->w_l2_end = p->l2_only_end * n;

    struct op_result *res = r->res;
    double wst = r->w_store_loop + r->w_store_end;
    res->bytes[c->lv_dram] += r->w_dram_r + r->w_pro + wst;
    res->bytes[c->lv_cache[0]] += r->w_l2_r + r->w_pro + wst + r->w_l2_end;
    for (uint32_t ci = 1; ci < nc; ci++)        /* stores pass through to DRAM */
        res->bytes[c->lv_cache[ci]] += r->w_cache_r[ci] + r->w_pro + wst;
    res->bytes[c->lv_smem] += r->w_smem + (r->w_l2_r + r->w_pro) * (p->async_copy ? 1.0 : 0.0);

    /* per-wave rate caps from the SMs that carry the wave */
    double u = r->units;
    double inflight = cpu * p->inflight_cta;
    if (c->sa_rows)     /* systolic units are fed by DMA engines, not threads */
        inflight = (double)c->eff_inflight_bytes_per_unit;
    else if (!p->async_copy)
        inflight = dmin(inflight, c->eff_inflight_bytes_per_unit);
    else
        inflight = dmin(inflight, (double)cfg_smem(c)->capacity_bytes);
    r->cap_dram = u * inflight / ((double)cfg_dram(c)->eff_loaded_latency_ps * 1e-12) / p->dram_cost;
    r->cap_l2 = u * cfg_l2(c)->port_bytes_per_cycle_per_unit * (p->load_frac > 0 ? p->load_frac : 1.0) *
                c->clock_hz;
    r->cap_m = u * unit_matrix_rate(c, p->mdt);
    r->cap_v = u * unit_vector_rate(c, p->vdt);
    r->cap_smem = cfg_smem(c)->bw_bytes_per_cycle > 0
                      ? u * cfg_smem(c)->bw_bytes_per_cycle * c->clock_hz
                      : u * cfg_smem(c)->bw_bytes_per_s / c->units;

    uint32_t pro = p->stages > 1 ? p->stages - 1 : 1;
    r->nchunks = chunk_plan(p->ksteps * r->mult, pro, r->frac);
    r->wave_start = g->e->now_ps;
    r->load_next = r->comp_next = 0;
    r->load_busy = r->comp_busy = 0;
    r->load_pending = r->comp_pending = r->pipe_pending = 0;
    memset(r->ready, 0, sizeof r->ready);
    runner_try_load(r);
}

static void chunk_ready_at(struct runner *r, uint32_t chunk, uint64_t latency)
{
    engine_after(r->g->e, latency, r->g->comp, GPU_EV_READY, chunk, r);
}

static void runner_try_load(struct runner *r)
{
    if (r->load_busy || r->load_next >= r->nchunks ||
        r->load_next >= r->comp_next + GPU_PIPE_DEPTH)
        return;
    struct gpu *g = r->g;
    uint32_t ch = r->load_next++;
    double f = r->frac[ch];
    double dram = r->w_dram_r * f + (ch == 0 ? r->w_pro : 0);
    double l2 = r->w_l2_r * f + (ch == 0 ? r->w_pro : 0);
    const struct hw_config *c = g->cfg;
    r->load_level[ch] = (uint8_t)(dram > 0 ? c->lv_dram : c->lv_cache[0]);
    r->load_busy = 1;
    r->load_pending = 0;
    start_flow(r, g->dramp, dram * r->p->dram_cost, r->cap_dram * r->p->dram_cost, FR_LOAD, ch,
               (unsigned)c->lv_dram, &r->load_pending);
    start_flow(r, &g->cache[0], l2, r->cap_l2, FR_LOAD, ch, (unsigned)c->lv_cache[0],
               &r->load_pending);
    for (uint32_t ci = 1; ci < c->ncaches; ci++)
        start_flow(r, &g->cache[ci], r->w_cache_r[ci] * f + (ch == 0 ? r->w_pro : 0), 0, FR_LOAD,
                   ch, (unsigned)c->lv_cache[ci], &r->load_pending);
    if (r->load_pending == 0) {
        r->load_busy = 0;
        chunk_ready_at(r, ch, 0);
        runner_try_load(r);
    }
}

static void runner_compute_done(struct runner *r)
{
    struct gpu *g = r->g;
    uint64_t now = g->e->now_ps;
    /* busy while the pipes ran; operand reads beyond that are smem stall */
    uint64_t pd = r->pipe_done ? r->pipe_done : r->comp_start;
    r->res->time_ps[CAT_BUSY] += pd - r->t_mark;
    r->res->time_ps[CAT_STALL + g->cfg->lv_smem] += now - pd;
    r->t_mark = now;
    r->comp_busy = 0;
    uint32_t ch = r->comp_next++;
    double f = r->frac[ch];
    double store = r->w_store_loop * f, l2_end = 0;
    if (r->comp_next == r->nchunks) {
        store += r->w_store_end;
        l2_end = r->w_l2_end;
    }
    const struct hw_config *c = g->cfg;
    if (store > 0) {
        r->store_level = (uint8_t)c->lv_dram;
        start_flow(r, g->dramp, store * r->p->dram_cost, r->cap_l2, FR_STORE, ch,
                   (unsigned)c->lv_dram, &r->store_pending);
        for (uint32_t ci = 0; ci < c->ncaches; ci++)
            start_flow(r, &g->cache[ci], store, r->cap_l2, FR_STORE, ch, (unsigned)c->lv_cache[ci],
                       &r->store_pending);
    }
    if (l2_end > 0)
        start_flow(r, &g->cache[0], l2_end, r->cap_l2, FR_STORE, ch, (unsigned)c->lv_cache[0],
                   &r->store_pending);
    runner_try_load(r);
    runner_try_compute(r);
    runner_check_wave_end(r);
}

static void runner_try_compute(struct runner *r)
{
    if (r->comp_busy || r->comp_next >= r->nchunks || !r->ready[r->comp_next])
        return;
    struct gpu *g = r->g;
    uint32_t ch = r->comp_next;
    account(r, (enum time_cat)(CAT_STALL + r->load_level[ch]));
    r->comp_busy = 1;
    r->comp_start = g->e->now_ps;
    r->pipe_done = 0;
    r->comp_pending = r->pipe_pending = 0;
    double f = r->frac[ch];
    unsigned smem = (unsigned)g->cfg->lv_smem;
    start_flow(r, &g->mpipe, r->w_mflops * f, r->cap_m, FR_PIPE, ch, smem, &r->pipe_pending);
    start_flow(r, &g->vpipe, r->w_vflops * f, r->cap_v, FR_PIPE, ch, smem, &r->pipe_pending);
    r->comp_pending = r->pipe_pending;
    start_flow(r, &g->smem, r->w_smem * f, r->cap_smem, FR_SMEM, ch, smem, &r->comp_pending);
    if (r->pipe_pending == 0)
        r->pipe_done = r->comp_start;
    if (r->comp_pending == 0)
        runner_compute_done(r);
}

/* A wave ends when its last chunk has computed: the SM retires the CTA and
 * takes the next one while the stores drain in the background (they still
 * use L2 and DRAM bandwidth).  The kernel ends when its last wave has
 * computed and every store has drained. */
static void runner_check_wave_end(struct runner *r)
{
    if (r->draining) {
        if (r->store_pending > 0)
            return;
        account(r, (enum time_cat)(CAT_STALL + r->store_level));
        r->draining = 0;
        runner_next_kernel(r);
        return;
    }
    if (r->comp_busy || r->comp_next < r->nchunks)
        return;
    r->res->waves += r->mult;
    if (r->g->tl != NULL)
        tl_waves(r->g->tl, r->g->device, r->op, r->kern, r->wave, r->wave + r->mult, r->units,
                 r->wave_start, r->g->e->now_ps);
    r->wave += r->mult;
    if (r->wave < r->nwaves) {
        wave_begin(r);
        return;
    }
    r->draining = 1;
    runner_check_wave_end(r);
}

static void runner_flow_done(struct engine *e, void *owner, uint64_t arg)
{
    struct runner *r = owner;
    enum flow_role role = (enum flow_role)(arg >> 16);
    unsigned lvl = (unsigned)((arg >> 8) & 0xff);
    uint32_t ch = (uint32_t)(arg & 0xff);
    switch (role) {
    case FR_LOAD:
        r->load_level[ch] = (uint8_t)lvl;   /* the level that drained last */
        if (--r->load_pending == 0) {
            r->load_busy = 0;
            chunk_ready_at(r, ch, r->load_lat);
            runner_try_load(r);
        }
        break;
    case FR_PIPE:
        if (--r->pipe_pending == 0)
            r->pipe_done = e->now_ps;
        if (--r->comp_pending == 0)
            runner_compute_done(r);
        break;
    case FR_SMEM:
        if (--r->comp_pending == 0)
            runner_compute_done(r);
        break;
    case FR_STORE:
        r->store_level = (uint8_t)lvl;
        if (--r->store_pending == 0)
            runner_check_wave_end(r);
        break;
    }
}

/* A copy-engine transfer: the bytes cross PCIe (or DRAM for d2d) with
 * the link's latency; no SMs involved. */
/* A copy-engine transfer; no SMs involved.  h2d/d2h cross the chip's host
 * link (or, in a system file, the links to the nearest host), d2d reads and
 * writes device memory, p2p reads this device's memory, crosses the links
 * of its route and writes the peer's.  Every flow starts at once, so the
 * copy goes at the rate of its most contended server; its data lands one
 * route latency after the last flow drains. */
static void runner_dma(struct runner *r)
{
    struct gpu *g = r->g;
    const struct kplan *p = r->p;
    const struct op *o = &g->t->ops[r->op];
    r->nchunks = 1;
    r->frac[0] = 1.0;
    r->comp_next = 0;
    r->load_next = 1;
    r->load_busy = 1;
    r->load_pending = 0;
    memset(r->ready, 0, sizeof r->ready);
    r->w_mflops = r->w_vflops = r->w_smem = r->w_store_loop = r->w_store_end = r->w_l2_end = 0;
    r->w_dram_r = r->w_pro = 0;
    r->store_pending = 0;
    r->load_level[0] = (uint8_t)p->dma_level;
    const struct hw_config *c = g->cfg;
    r->load_lat = c->level[p->dma_level].latency_ps;
    double B = p->dma_bytes;
    if (p->dma_net) {
        const struct sys_route *rt = &g->route[p->route];
        const struct hw_system *sys = g->env->sys;
        r->load_lat = rt->latency_ps;
        uint32_t counted = 0;       /* bit per level: bytes counted once per level */
        for (uint32_t h = 0; h < rt->nhops; h++) {
            const struct sys_link *l = &sys->links[rt->link[h]];
            if (!(counted & (1u << l->level)))
                r->res->bytes[l->level] += B;
            counted |= 1u << l->level;
            start_flow(r, net_link_srv(g->env->net, rt->link[h], rt->dir[h]), B, 0, FR_LOAD, 0,
                       (unsigned)l->level, &r->load_pending);
        }
        for (uint32_t v = 0; v < rt->nvia; v++)  /* switches and host memories on the way */
            start_flow(r, &g->env->net->node[rt->via[v]], B * rt->via_times[v], 0, FR_LOAD, 0,
                       (unsigned)sys->links[rt->link[0]].level, &r->load_pending);
        /* this device's memory, and for p2p the peer's */
        start_flow(r, g->dramp, B, 0, FR_LOAD, 0, (unsigned)c->lv_dram, &r->load_pending);
        r->res->bytes[c->lv_dram] += B;
        if (p->peer != TRACE_NO_DEVICE) {
            start_flow(r, g->env->dram[p->peer], B, 0, FR_LOAD, 0, (unsigned)c->lv_dram,
                       &r->load_pending);
            r->res->bytes[c->lv_dram] += B;
        }
    } else if (p->dma_level == c->lv_host) {
        struct flowsrv *link = p->dma_h2d || o->u.copy.dir == MEMCPY_H2D ? &g->h2d : &g->d2h;
        r->res->bytes[c->lv_host] += B;
        r->res->bytes[c->lv_dram] += B;
        start_flow(r, link, B, 0, FR_LOAD, 0, (unsigned)c->lv_host, &r->load_pending);
        start_flow(r, g->dramp, B, 0, FR_LOAD, 0, (unsigned)c->lv_dram, &r->load_pending);
    } else {
        r->res->bytes[c->lv_dram] += 2.0 * B;
        start_flow(r, g->dramp, 2.0 * B * p->dram_cost, 0, FR_LOAD, 0, (unsigned)c->lv_dram,
                   &r->load_pending);
    }
    if (r->load_pending == 0) {  /* nothing to move: a copy of bytes no level carries */
        r->load_busy = 0;
        chunk_ready_at(r, 0, r->load_lat);
    }
}

static void runner_finish(struct runner *r)
{
    struct gpu *g = r->g;
    r->res->end_ps = g->e->now_ps;
    r->res->flops = r->low->flops;
    r->in_use = 0;
    uint32_t op = r->op;
    model_done_fn done = r->done;
    void *ctx = r->ctx;
    /* start a waiting op in the freed runner before reporting */
    if (g->waitq_n > 0) {
        uint32_t next = g->waitq[g->waitq_head];
        struct op_result *nres = g->waitq_res[g->waitq_head];
        g->waitq_head = (g->waitq_head + 1) % g->waitq_cap;
        g->waitq_n--;
        gpu_start_op(g, next, nres, g->done, g->ctx);
    }
    done(g->e, ctx, op);
}

static void runner_next_kernel(struct runner *r)
{
    struct gpu *g = r->g;
    if (r->p != NULL)
        r->kern++;
    if (r->kern >= r->low->nk) {
        runner_finish(r);
        return;
    }
    r->p = &r->low->k[r->kern];
    r->res->kernels++;
    /* the front end issues one launch at a time */
    uint64_t now = g->e->now_ps;
    uint64_t begin = now > g->frontend_free_ps ? now : g->frontend_free_ps;
    begin += g->cfg->launch_overhead_ps;
    g->frontend_free_ps = begin;
    engine_at(g->e, begin, g->comp, GPU_EV_BEGIN, 0, r);
}

/* Events carry the runner they are for; self (the gpu) is reached through it. */
static void gpu_handle(struct engine *e, void *self, const struct eq_event *ev)
{
    (void)e;
    (void)self;
    struct runner *r = ev->ptr;
    switch (ev->type) {
    case GPU_EV_BEGIN: {
        account(r, CAT_LAUNCH);
        const struct kplan *p = r->p;
        if (p->fixed) {
            r->nchunks = 1;
            engine_after(r->g->e, p->fixed_ps, r->g->comp, GPU_EV_READY, 0, r);
            break;
        }
        if (p->dma) {
            runner_dma(r);
            break;
        }
        uint64_t ctas = p->gm * p->gn * p->gb;
        uint64_t slots = (uint64_t)r->g->cfg->units * p->ctas_per_unit;
        r->nwaves = ceil_div(ctas, slots);
        r->wave = 0;
        r->store_pending = 0;
        r->store_level = (uint8_t)r->g->cfg->lv_cache[0];
        for (uint32_t ci = 0; ci < HW_MAX_LEVELS; ci++)
            r->g->repl[ci] = 1.0;
        r->draining = 0;
        r->res->ctas += ctas;
        uint64_t npanels = p->gb * (p->gm + p->gn);
        for (uint64_t i = 0; i < npanels; i++)
            r->g->panel_last[i] = -1;
        wave_begin(r);
        break;
    }
    case GPU_EV_READY:
        if (r->p->fixed) {
            account(r, CAT_BUSY);
            r->res->waves++;
            runner_next_kernel(r);
            break;
        }
        r->ready[ev->arg] = 1;
        if (r->p->dma) {
            account(r, (enum time_cat)(CAT_STALL + r->load_level[0]));
            r->res->waves++;
            runner_next_kernel(r);
            break;
        }
        runner_try_compute(r);
        break;
    default:
        SIM_CHECK(0);
    }
}

static const struct comp_ops gpu_comp_ops = {"gpu", gpu_handle};

/* ---------------------------------------------------------------- model ops */

static void gpu_destroy(void *dev)
{
    struct gpu *g = dev;
    if (g == NULL)
        return;
    struct flowsrv *srv[] = {&g->dram, &g->smem, &g->mpipe, &g->vpipe, &g->h2d, &g->d2h};
    for (size_t i = 0; i < sizeof srv / sizeof srv[0]; i++)
        flowsrv_destroy(srv[i]);
    for (uint32_t ci = 0; ci < g->cfg->ncaches; ci++)
        flowsrv_destroy(&g->cache[ci]);
    free(g->wpanel);
    free(g->panel_slot);
    free(g->low);
    free(g->route);
    free(g->waitq);
    free(g->waitq_res);
    free(g->panel_last);
    free(g->wave_cum);
    free(g);
}

static void gpu_observe(void *ctx, uint64_t t0, uint64_t t1, double amount)
{
    struct gpu_watch *w = ctx;
    tl_add(w->tl, w->s, t0, t1, amount);
}

/* Let the timeline see what each server serves. */
static void gpu_watch_servers(struct gpu *g)
{
    const struct hw_config *c = g->cfg;
    struct { struct flowsrv *srv; unsigned which; double cap; } m[HW_MAX_LEVELS + 6] = {
        {g->dramp, (unsigned)c->lv_dram, cfg_dram(c)->bw_bytes_per_s},
        {&g->smem, (unsigned)c->lv_smem, cfg_smem_bw(c)},
        {&g->h2d, (unsigned)c->lv_host, 2 * cfg_host(c)->bw_bytes_per_s},
        {&g->d2h, (unsigned)c->lv_host, 2 * cfg_host(c)->bw_bytes_per_s},
        {&g->mpipe, TL_SERIES_MATRIX, g->mpipe.capacity * 1e12},
        {&g->vpipe, TL_SERIES_VECTOR, g->vpipe.capacity * 1e12},
    };
    size_t nm = 6;
    for (uint32_t ci = 0; ci < c->ncaches; ci++, nm++) {
        m[nm].srv = &g->cache[ci];
        m[nm].which = (unsigned)c->lv_cache[ci];
        m[nm].cap = c->level[c->lv_cache[ci]].bw_bytes_per_s;
    }
    for (size_t i = 0; i < nm; i++) {
        g->watch[i].tl = g->tl;
        g->watch[i].s = tl_series(g->tl, g->device, m[i].which);
        g->watch[i].s->capacity_per_s = m[i].cap;
        m[i].srv->observe = gpu_observe;
        m[i].srv->observe_ctx = &g->watch[i];
    }
}

/* The system paths of device's copies that leave it: p2p copies always,
 * host copies when the run is on a system file.  0, or -1 with *d (no path). */
static int gpu_routes(struct gpu *g, struct diag *d)
{
    const struct trace *t = g->t;
    struct run_env *env = g->env;
    uint32_t cap = 0;
    for (uint32_t i = 0; i < t->nops; i++) {
        if (t->ops[i].device != g->device)
            continue;
        for (uint32_t k = 0; k < g->low[i].nk; k++) {
            struct kplan *p = &g->low[i].k[k];
            if (!p->dma || (p->dma_level != g->cfg->lv_host && !p->dma_net))
                continue;
            if (!p->dma_net && !env->host_over_net)
                continue;       /* the chip's own host link */
            if (g->nroutes == cap) {
                cap = cap ? 2 * cap : 8;
                void *q = realloc(g->route, cap * sizeof *g->route);
                if (q == NULL)
                    sim_oom(cap * sizeof *g->route);
                g->route = q;
            }
            struct sys_route *rt = &g->route[g->nroutes];
            uint32_t from = env->sysdev[g->device];
            int rc = p->dma_net ? sys_route(env->sys, from, env->sysdev[p->peer], rt, env->net->scratch)
                                : sys_route_host(env->sys, from, rt, env->net->scratch);
            if (rc != 0 || rt->nhops == 0) {
                char field[48];
                snprintf(field, sizeof field, "ops[%u]", i);
                return diag_set(d, DIAG_E_RANGE, t->path, t->ops[i].line, field,
                                "no path of at most %d links from %s to %s in %s", SYS_MAX_HOPS,
                                t->devices[g->device],
                                p->dma_net ? t->devices[p->peer] : "a host", env->sys->path);
            }
            p->dma_net = 1;
            p->route = g->nroutes++;
            p->dma_level = (uint8_t)env->sys->links[rt->link[0]].level;
        }
    }
    return 0;
}

static void *gpu_create(struct engine *e, const struct hw_config *cfg, const struct trace *t,
                        uint32_t device, struct timeline *tl, struct run_env *env,
                        struct diag *d)
{
    struct gpu *g = sim_xcalloc(1, sizeof *g);
    g->cfg = cfg;
    g->t = t;
    g->device = device;
    g->e = e;
    g->comp = engine_register(e, &gpu_comp_ops, g);
    flowsrv_init(&g->dram, e, "dram", cfg_dram(cfg)->bw_bytes_per_s * cfg_dram(cfg)->eff_bw);
    g->env = env;
    g->dramp = env->shared_dram != NULL ? env->shared_dram : &g->dram;
    env->dram[device] = g->dramp;
    for (uint32_t ci = 0; ci < cfg->ncaches; ci++) {
        const struct hw_level *L = &cfg->level[cfg->lv_cache[ci]];
        flowsrv_init(&g->cache[ci], e, L->name, L->bw_bytes_per_s);
        g->repl[ci] = 1.0;
    }
    flowsrv_init(&g->smem, e, "smem", cfg_smem_bw(cfg));
    double mpeak = 0, vpeak = 0;
    for (unsigned i = 0; i < DT_COUNT; i++) {
        mpeak = dmax(mpeak, cfg->matrix_flops_per_cycle[i]);
        vpeak = dmax(vpeak, cfg->vector_flops_per_cycle[i]);
    }
    /* pipe servers: capacity generous enough for any dtype; the per-flow
     * cap (set per wave from the op's dtype) is what binds */
    flowsrv_init(&g->mpipe, e, "matrix", mpeak * cfg->clock_hz * cfg->units);
    flowsrv_init(&g->vpipe, e, "vector", vpeak * cfg->clock_hz * cfg->units);
    flowsrv_init(&g->h2d, e, "host_h2d", cfg_host(cfg)->bw_bytes_per_s);
    flowsrv_init(&g->d2h, e, "host_d2h", cfg_host(cfg)->bw_bytes_per_s);
    g->tl = tl;
    if (tl != NULL)
        gpu_watch_servers(g);
    /* Lower every op of this device up front: the run never allocates. */
    g->low = sim_xcalloc(t->nops, sizeof *g->low);
    /* more weights and KV than the device holds: the rest streams in */
    double wbytes = 0, ws = trace_working_set(t, device, &wbytes);
    double over = ws - (double)cfg_dram(cfg)->capacity_bytes;
    double spill_frac = over > 0 && wbytes > 0 ? dmin(1.0, over / wbytes) : 0;
    g->waitq_cap = t->nops;
    g->waitq = sim_xcalloc(t->nops, sizeof *g->waitq);
    g->waitq_res = sim_xcalloc(t->nops, sizeof *g->waitq_res);
    size_t panels = 1, waves = 1;
    for (uint32_t i = 0; i < t->nops; i++) {
        if (t->ops[i].device != device)
            continue;
        lower_op(cfg, &t->ops[i], spill_frac, &g->low[i]);
        for (uint32_t k = 0; k < g->low[i].nk; k++) {
            const struct kplan *p = &g->low[i].k[k];
            if (p->dma || p->fixed)
                continue;
            double slots = (double)cfg->units * p->ctas_per_unit;
            double npd = (double)p->gb * ((double)p->gm + (double)p->gn);
            double nwd = ceil((double)p->gm * (double)p->gn * (double)p->gb / slots);
            /* the L2 reuse model keeps a word per operand panel and per
             * wave; an op past these sizes is no real kernel */
            if (npd > GPU_MAX_PANELS || nwd > GPU_MAX_WAVES) {
                if (nwd > GPU_MAX_WAVES)
                    diag_set(d, DIAG_E_RANGE, t->path, (int)t->ops[i].line, t->ops[i].id,
                             "too large to simulate on %s: %.3g waves of %s tiles (at most %.3g)",
                             cfg->name, nwd, p->tile, (double)GPU_MAX_WAVES);
                else
                    diag_set(d, DIAG_E_RANGE, t->path, (int)t->ops[i].line, t->ops[i].id,
                             "too large to simulate on %s: %.3g operand panels of %s tiles (at most %.3g)",
                             cfg->name, npd, p->tile, (double)GPU_MAX_PANELS);
                gpu_destroy(g);
                return NULL;
            }
            size_t np = (size_t)npd, nw = (size_t)nwd;
            if (np > panels)
                panels = np;
            if (nw > waves)
                waves = nw;
        }
    }
    if (gpu_routes(g, d) != 0) {
        gpu_destroy(g);
        return NULL;
    }
    g->panel_last = sim_xcalloc(panels, sizeof *g->panel_last);
    g->panel_slot = sim_xcalloc(panels, sizeof *g->panel_slot);
    /* a wave fetches at most two panels per CTA, and holds at most every
     * unit's resident CTAs */
    g->wpanel = sim_xcalloc(2 * (size_t)cfg->units * cfg->max_ctas_per_unit, sizeof *g->wpanel);
    g->wave_cum = sim_xcalloc(waves, sizeof *g->wave_cum);
    return g;
}

static void gpu_start_op(void *dev, uint32_t op_index, struct op_result *res,
                         model_done_fn done, void *ctx)
{
    struct gpu *g = dev;
    g->done = done;
    g->ctx = ctx;
    struct runner *r = NULL;
    for (uint32_t i = 0; i < GPU_MAX_RUNNING; i++) {
        if (!g->run[i].in_use) {
            r = &g->run[i];
            break;
        }
    }
    if (r == NULL) {
        SIM_CHECK(g->waitq_n < g->waitq_cap);
        uint32_t at = (g->waitq_head + g->waitq_n) % g->waitq_cap;
        g->waitq[at] = op_index;
        g->waitq_res[at] = res;
        g->waitq_n++;
        return;
    }
    memset(r, 0, sizeof *r);
    r->in_use = 1;
    r->g = g;
    r->op = op_index;
    r->res = res;
    r->done = done;
    r->ctx = ctx;
    r->low = &g->low[op_index];
    r->kern = 0;
    r->p = NULL;
    res->start_ps = g->e->now_ps;
    r->t_mark = g->e->now_ps;
    const struct lowered *L = r->low;
    snprintf(res->tile, sizeof res->tile, "%s", L->nk > 0 ? L->k[0].tile : "");
    runner_next_kernel(r);
}

const struct model_ops gpu_model_ops = {"gpu", gpu_create, gpu_start_op, gpu_destroy};
