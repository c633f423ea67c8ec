/* chip.h: what a chip is, as the models see it, and the figures derived
 * from it.
 *
 * struct hw_config is a chip config (configs/README.md) compiled into an
 * immutable struct: its compute units and pipes, its memory levels
 * innermost first, its collectives and its power.  hw_load() (hwload.h)
 * fills it; models only ever see a const struct hw_config *.  No globals:
 * a config is plain data owned by the caller (it holds no pointers, so it
 * can be copied freely).  Derived here: the peak rates, and the chip at a
 * lower clock (cfg_at_clock).
 */
#ifndef STRATA_CHIP_H
#define STRATA_CHIP_H

#include <stdint.h>

#include "dtype.h"

/* What a memory level is (innermost kinds first: a level list must keep
 * this order).  LEVEL_KIND_MAP is the one list of them: the loader's names
 * and the enum come from it. */
#define LEVEL_KIND_MAP(X)                                                    \
    X(LK_REGISTERS, "registers")  /* register file: capacity only (occupancy) */ \
    X(LK_SCRATCHPAD, "scratchpad")/* software-managed (shared memory, LDS, staging) */ \
    X(LK_CACHE, "cache")          /* hardware cache: reuse by capacity */    \
    X(LK_DECODER, "decoder")      /* inline weight decoder between the caches and DRAM \
                                   * (LazyWeights): entropy-coded weights above it, \
                                   * decoded below; a rate, no capacity */             \
    X(LK_DRAM, "dram")            /* the device's main memory */              \
    X(LK_LINK, "link")            /* an off-chip port: host (PCIe) or peers (NVLink, ICI) */

enum level_kind {
#define LEVEL_KIND_ENUM_(e, n) e,
    LEVEL_KIND_MAP(LEVEL_KIND_ENUM_)
#undef LEVEL_KIND_ENUM_
    LK_COUNT
};

/* Who shares one instance of a level; its capacity and bandwidth are
 * given per instance. */
#define LEVEL_SCOPE_MAP(X)                                                   \
    X(LS_UNIT, "unit")            /* one per compute unit (SM, CU, MXU) */    \
    X(LS_GROUP, "group")          /* one per group of units (a die: MI300X XCD) */ \
    X(LS_DEVICE, "device")        /* one per device */                       \
    X(LS_HOST, "host")            /* a link to the host */                   \
    X(LS_SYSTEM, "system")        /* a link to other devices of a system */

enum level_scope {
#define LEVEL_SCOPE_ENUM_(e, n) e,
    LEVEL_SCOPE_MAP(LEVEL_SCOPE_ENUM_)
#undef LEVEL_SCOPE_ENUM_
    LS_COUNT
};

/* The instructions a matrix pipe can be driven by.  A kernel names the one
 * it issues (models/tiled/lower.c); a chip lists the ones it has, each with
 * the fraction of the pipe's rate it reaches (compute.matrix_paths). */
#define MATRIX_PATH_MAP(X)                                                   \
    X(MP_MMA_SYNC, "mma_sync")    /* warp-level mma.sync (Volta .. Blackwell) */ \
    X(MP_WGMMA, "wgmma")          /* Hopper's warpgroup wgmma, async with TMA */ \
    X(MP_TCGEN05, "tcgen05")      /* Blackwell's tensor-memory MMA */        \
    X(MP_MFMA, "mfma")            /* AMD CDNA matrix cores */                \
    X(MP_SYSTOLIC, "systolic")    /* a TPU/NPU array, fed by its compiler */

enum matrix_path {
#define MATRIX_PATH_ENUM_(e, n) e,
    MATRIX_PATH_MAP(MATRIX_PATH_ENUM_)
#undef MATRIX_PATH_ENUM_
    MP_COUNT
};

#define HW_MAX_LEVELS 8         /* levels one chip may list */
#define HW_LEVEL_NAME 16        /* bytes of a level name, NUL included */

/* One memory level, from the config's `levels:` list. */
struct hw_level {
    char name[HW_LEVEL_NAME];   /* as reports name it: "smem", "l2", "vmem", "hbm", "nvlink" */
    char lat_label[HW_LEVEL_NAME + 8]; /* "hbm latency": what an op waiting on the level below its
                                 * rate is bound by (run_bound_name) */
    enum level_kind kind;
    enum level_scope scope;
    uint32_t instances;         /* how many: units, groups, 1 (device) or ports (a link) */
    uint32_t units_per_group;   /* LS_GROUP: compute units sharing one instance; else 0 */
    uint64_t capacity_bytes;    /* per instance, bytes (0 for links) */
    double bw_bytes_per_s;      /* all instances together, bytes/s (a link: per direction) */
    double bw_bytes_per_cycle;  /* per instance, bytes/cycle, when the config gives it so (else 0) */
    uint64_t latency_ps;        /* load-to-use latency (a link: one-way), ps */
    double port_bytes_per_cycle_per_unit; /* cache: width of its port to one unit, bytes/cycle */
    char type[32];              /* dram: "HBM3", "LPDDR5" (informational) */
    int unified;                /* dram: one pool shared by every device of the run (an SoC) */
    /* calibrated (see each config for what they were fitted to) */
    double eff_bw;              /* achievable fraction of bw, 0..1 (1 if not given) */
    double eff_rw_penalty;      /* dram: bandwidth lost at a 50/50 read/write mix, 0..1 */
    uint64_t eff_loaded_latency_ps; /* dram: load latency under full load, ps */
    /* energy (optional): moving one byte at this level, its own access or
     * transfer only (a DRAM byte also pays the caches it passes), pJ */
    double energy_pj_per_byte;
    /* decoder: its own clock (0: the chip's), its area (reported, mm^2) */
    double clock_hz;
    double area_mm2;
};

struct hw_config {
    char name[64];          /* chip name, e.g. "nvidia-h100-sxm" */
    char variant[256];      /* the chip plus its overrides, "nvidia-h100-sxm[dram.bandwidth=4.8TB/s]";
                               "" when none was applied (cfg_label) */
    char family[32];        /* model registry key, e.g. "gpu" */
    char path[512];         /* file it was loaded from */

    /* clock */
    double clock_hz;        /* compute clock used for peak rates, Hz */

    /* compute units (SMs on a GPU, MXUs on a TPU) */
    uint32_t units;                             /* number of compute units */
    double matrix_flops_per_cycle[DT_COUNT];    /* dense matrix-pipe FLOP/cycle/unit; 0 = unsupported */
    double vector_flops_per_cycle[DT_COUNT];    /* vector-pipe FLOP/cycle/unit (FMA = 2); 0 = unsupported */
    double sparse_matrix_flops_per_cycle[DT_COUNT]; /* the matrix pipe on 2:4 structured-sparse
                                                   operands, FLOP/cycle/unit counted as the data
                                                   sheets do (the dense-equivalent FLOPs); 0 = no
                                                   sparse path (a sparse GEMM runs dense) */
    double acc16_matrix_flops_per_cycle[DT_COUNT]; /* a 16-bit GEMM accumulating in 16 bits
                                                (cuBLAS CUBLAS_COMPUTE_16F), where the data
                                                sheet gives it apart (GeForce: twice the
                                                fp32-accumulate rate); 0: the matrix rate.  A
                                                stack that accumulates so uses it
                                                (configs/stacks: gemm.accumulate) */
    /* family block: `threads` (gpu) or `systolic` (tpu, npu) */
    uint32_t max_threads_per_unit;              /* resident threads per unit */
    /* the matrix pipe of a unit is a systolic array of sa_rows x sa_cols
     * PEs, weight stationary (TPU MXU, NPU MAC array) or output stationary
     * (sa_os: a Gaudi MME core); 0 = not systolic
     * (a GPU tensor core: no fold or fill cost) */
    uint32_t sa_rows, sa_cols;
    int sa_os;                                  /* 1: the array is output stationary
                                                   (systolic.dataflow: os), accumulators
                                                   double-buffered; 0: weight stationary */
    uint32_t max_ctas_per_unit;                 /* resident thread blocks (tiles) per unit */
    double sfu_ops_per_cycle;                   /* special-function results (exp2, rsqrt) per cycle
                                                   per unit; 0 = they issue on the vector pipe */
    double matrix_path_frac[MP_COUNT];          /* fraction of the matrix rate each instruction path
                                                   reaches; 0 = the chip has no such path */

    /* memory levels, innermost first (kinds in LEVEL_KIND_MAP order) */
    uint32_t nlevels;
    struct hw_level level[HW_MAX_LEVELS];
    /* what the tiled model needs, as indices into level[] (-1 = none) */
    int8_t lv_regs;                             /* the register file */
    int8_t lv_smem;                             /* the scratchpad operands are staged in */
    int8_t lv_dram;                             /* main memory */
    int8_t lv_host;                             /* the link to the host */
    int8_t lv_peer;                             /* the link to other devices */
    int8_t lv_dec;                              /* an inline weight decoder (LK_DECODER) */
    uint8_t ncaches;                            /* caches between scratchpad and DRAM */
    int8_t lv_cache[HW_MAX_LEVELS];             /* their indices, innermost first */

    /* software */
    uint64_t launch_overhead_ps;                /* GPU front-end cost per kernel launch, ps */
    /* the host loop of the software stack that drives the chip (a stack
     * file's host block, sim/work/stack.c; 0 without a stack): the CPU
     * issues kernels in order, ahead of the GPU, each costing it
     * host_dispatch_ps, after host_step_ps at the step's start; a kernel
     * cannot begin before the CPU has issued it */
    uint64_t host_dispatch_ps;                  /* CPU time to issue one kernel, ps */
    uint64_t host_step_ps;                      /* CPU time before a step's first kernel, ps */
    /* Thread-block clusters with TMA multicast (Hopper, Blackwell): the CTAs
     * of a cluster that one L2 read of a shared operand tile feeds, as the
     * GEMM libraries' kernels on a TMA path (wgmma, tcgen05) launch them;
     * 0 or 1: no multicast (every CTA reads its own tiles from L2). */
    uint32_t cluster_multicast_ctas;
    int gemm_no_tma;                            /* the stack's GEMM kernels issue on a path
                                                   without TMA (mma_sync): no clusters */
    double gemm_rate_frac;                      /* the stack's GEMM kernels: the share of the
                                                   matrix pipe's rate they reach (their path's
                                                   fraction times their issue efficiency); 0 =
                                                   the chip's own (the best library's) */
    uint32_t gemm_deq_kernel_min_m;             /* the stack dequantises a quantised GEMM's
                                                   weights in a kernel of their own (written
                                                   out at the activations' type, then read by
                                                   the GEMM) when M is at least this; 0 =
                                                   never (dequantised in the GEMM's tile loads) */
    double gemv_inflight_bytes_per_unit;        /* the stack's matrix-vector kernel for 16-bit
                                                   weights keeps at most this many load bytes
                                                   in flight a unit (its DRAM rate: units x
                                                   this / loaded latency); 0 = the streaming
                                                   kernel's own */
    /* collectives (NCCL-style, models/coll.c) */
    uint32_t coll_channels;                     /* channels (rings) a collective runs on; >= 1 */
    double coll_channel_bw;                     /* data bytes/s one channel's thread block copies
                                                   and reduces; 0 = no limit but the links' */
    int coll_one_ring;                          /* a stack's collectives keep one ring on a full
                                                   mesh (collectives.rings: one; models/coll_topo.c) */
    uint64_t coll_overhead_ps;                  /* host-side cost of one collective call
                                                   (enqueue, launch), ps */
    uint8_t coll_protocols;                     /* bit per protocol NCCL may pick (LL, LL128,
                                                   Simple: 1, 2, 4); 0 = all */
    double coll_hop_scale;                      /* x NCCL's per-hop latencies (1 = NCCL's) */
    double coll_ll_bw;                          /* LL protocol's data rate per rank, bytes/s;
                                                   0 = the channels' copy rate */
    double coll_nvls_eff;                       /* NVLink SHARP all-reduce: share of a link's
                                                   rate it reaches; 0 = the chip has none */

    /* calibrated efficiency parameters (see each config for what they were fitted to) */
    double eff_matrix_pipe;                     /* achievable fraction of matrix peak, 0..1 */
    double eff_vector_pipe;                     /* achievable fraction of vector peak, 0..1 */
    double eff_inflight_bytes_per_unit;         /* max bytes of loads one unit keeps in flight */

    /* power (the optional `power:` block; docs/energy.md).  has_power 0:
     * the config gives none and no energy is reported. */
    int has_power;
    double idle_w;                              /* board power with nothing running, W */
    double power_limit_w;                       /* the board's power limit, W; 0 = not given */
    double matrix_pj_per_cycle;                 /* what one unit's matrix pipe spends in a cycle
                                                   at full rate, pJ (a FLOP of type t: this /
                                                   matrix_flops_per_cycle[t], so every type
                                                   draws the same power at full rate) */
    double vector_pj_per_cycle;                 /* the same for the vector pipe; a special-
                                                   function result costs its share of it too */
};

/* The levels the tiled model reads (always present in a loaded config). */
static inline const struct hw_level *cfg_smem(const struct hw_config *c) { return &c->level[c->lv_smem]; }
static inline const struct hw_level *cfg_regs(const struct hw_config *c) { return &c->level[c->lv_regs]; }
static inline const struct hw_level *cfg_first_cache(const struct hw_config *c) { return &c->level[c->lv_cache[0]]; }
static inline const struct hw_level *cfg_dram(const struct hw_config *c) { return &c->level[c->lv_dram]; }
static inline const struct hw_level *cfg_host(const struct hw_config *c) { return &c->level[c->lv_host]; }

/* The rate a level sustains: its data-sheet bandwidth times its efficiency
 * (a DRAM's or a link's; 1 for the others and for a link that gives none).
 * One rule for every level: a chip's own host link, the links a system
 * file or sys_from_chip makes, the report's achievable rates. */
static inline double level_rate(const struct hw_level *L) { return L->bw_bytes_per_s * L->eff_bw; }

const char *level_kind_name(enum level_kind k);
const char *level_scope_name(enum level_scope s);
/* Whether level L runs on the core's clock (registers, scratchpads,
 * caches), as cfg_at_clock scales it; DRAM and links keep theirs. */
int cfg_level_core_clocked(const struct hw_level *L);
/* The chip at s times its clock (0 < s <= 1), as a power limit holds it
 * (docs/energy.md): the pipes, the registers, scratchpads and caches run on
 * the core clock, so their rates scale with s and the caches' latencies
 * with 1/s; the DRAM and the links keep theirs.  Their dynamic energy per
 * cycle or byte scales with the supply voltage squared, taken to scale
 * with the clock (V ~ f), so by s^2; the idle power and the DRAM's and
 * links' energy per byte stay. */
void cfg_at_clock(struct hw_config *c, double s);
/* Index of the level called name, or -1. */
int cfg_level_index(const struct hw_config *c, const char *name);

/* What reports call the chip: the variant when overrides were applied. */
static inline const char *cfg_label(const struct hw_config *c)
{
    return c->variant[0] ? c->variant : c->name;
}

/* Peak rates derived from the config. */
double cfg_matrix_peak_flops(const struct hw_config *c, enum dtype t); /* FLOP/s, 0 if unsupported */
double cfg_vector_peak_flops(const struct hw_config *c, enum dtype t); /* FLOP/s, 0 if unsupported */
double cfg_sparse_peak_flops(const struct hw_config *c, enum dtype t); /* 2:4 sparse, FLOP/s, or 0 */
double cfg_smem_bw(const struct hw_config *c);                          /* bytes/s, all units */

#endif
