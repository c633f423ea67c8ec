/* tiled.h: what the files of the tiled model share (private to models/).
 *
 * The tiled model (models/tiled/) serves the `gpu`, `tpu` and `npu` families:
 *   device.c  the device: its servers, op admission, `tiled_model_ops`;
 *   lower*.c  ops -> kernels (tile shapes, grids, bytes and FLOPs per step);
 *   unit.c    the compute unit's rates and types, the systolic array's work;
 *   reuse.c   which operand bytes a wave of CTAs finds in the caches;
 *   runner.c  one op in flight: its kernels, waves, chunks and copies.
 * Lowering is four files:
 *   lower.c       the op's kernels: dispatch by kind, row kernels, copies,
 *                 the backward pass, weights spilled to the host;
 *   lower_gemm.c  GEMM tiles, split-K and GEMV;
 *   lower_attn.c  attention as each library runs it;
 *   kplan.c       occupancy, DRAM read/write cost, the streaming kernel.
 * Each file opens with the part of the model it holds.  Units are in the
 * names; times are picoseconds, rates per second.
 */
#ifndef STRATA_TILED_H
#define STRATA_TILED_H

#include <stdint.h>

#include "flow.h"
#include "model.h"
#include "net.h"
#include "record.h"

#define TILED_MAX_CHUNKS 32       /* k-loop chunks simulated per wave (fidelity knob) */
#define TILED_MAX_KERNELS 20      /* kernels one op lowers to (math attention forward + backward
                                 * with dropout: 17) */
#define TILED_MAX_RUNNING 64      /* ops running at once on one device */
#define TILED_CACHE_USABLE 0.75      /* share of L2 the reuse test may count on (sets, other data) */
#define TILED_VEC_BYTES 16.0      /* bytes one thread loads per vector access */
#define TILED_SOFTMAX_ISSUE 50.0  /* vector-pipe slots per softmax element (fitted, see lower_rows) */
/* Dropout's random numbers, in vector-pipe slots (one an instruction, as
 * the softmax's are counted), from the kernels' source, not fitted:
 * PyTorch's fused dropout draws curand's Philox4x32-10 (ten rounds of two
 * 32x32->64 multiplies, xors and key bumps, about 60 instructions) for 4
 * elements, then a uniform, a compare and a scale each: about 20 an
 * element.  FlashAttention's (csrc/flash_attn/src/philox.cuh, dropout.h)
 * runs 7 rounds for 16 scores (one byte each) and a compare and an AND per
 * pair: about 4 a score, forward and again backward (the mask is drawn
 * again, not stored: FUSED_DROPOUT_SLOTS, lower_attn.c). */
#define DROPOUT_RNG_SLOTS 20.0
#define TILED_MEMO_GROUPS 16      /* wave groups of a kernel whose cache reuse is remembered */
#define TILED_MEMO_CACHES 3       /* caches a remembered wave group holds misses for */
#define TILED_MEMO_SLOTS 1024     /* kernels remembered a device (at most; a power of two) */

/* One kernel as the library would launch it. */
struct kplan {
    char what[16];              /* "gemm", "flash", "stream", "dma", ... */
    int dma;                    /* copy engine transfer, no SMs */
    int dma_h2d;                /* host to device regardless of the op (spilled weights) */
    int dma_net;                /* crosses the system's links: route[] holds its path */
    uint32_t route;             /* index into gpu.route when dma_net */
    int routed;                 /* route found (ops of one shape share this plan) */
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
    uint32_t cl_m, cl_n;        /* thread-block cluster (0 = 1): cl_m row blocks x cl_n column
                                 * blocks whose shared panels one TMA multicast L2 read feeds
                                 * (B along m, A along n) */
    int mma_pair;               /* a 2-SM MMA (tcgen05, cta_group::2) over the cl_m = 2 pair: B
                                 * is split between the pair's shared memories and each tensor
                                 * core reads the other's half, so an SM receives only its own
                                 * half (its port carries kplan_l2_share of the panel bytes) */
    double pro_bytes;           /* bytes per CTA loaded once before the loop, not shared */
    double reread_step;         /* bytes per CTA per step read again from DRAM (multi-pass kernels) */
    double store_step;          /* bytes per CTA per step written back (streaming outputs) */
    double store_end;           /* bytes per CTA written after the loop (output tile) */
    double l2_only_end;         /* bytes per CTA exchanged through L2 only (split-K partials) */
    double mflops_step;         /* matrix-pipe FLOPs per CTA per step (padded tile) */
    double vflops_step;         /* vector-pipe FLOPs per CTA per step */
    double sfu_step;            /* special-function results (exp) per CTA per step */
    double l2_step;             /* bytes per CTA per step that go to L2 only (fp32 atomics) */
    int persistent;             /* one CTA an SM loops over the tiles (a persistent
                                 * scheduler): the next tile's loads overlap this one's
                                 * epilogue, as with two CTAs an SM */
    double sfu_serial;          /* not serial: the share of the step's special-function work
                                 * that runs after its matrix work rather than beside it */
    int serial;                 /* a step's matrix work, then its softmax: one after the other
                                 * (a warp issues them in turn); 0 = they overlap (FA3 ping-pong) */
    double rate_frac;           /* share of the pipes' rate the kernel reaches: its matrix path's
                                 * fraction times its library's issue efficiency (0 = 1) */
    double smem_step;           /* shared-memory operand bytes per CTA per step */
    double xchg_step;           /* bytes per CTA per step its warps exchange through shared
                                 * memory between barriers (partial outputs of a split key
                                 * block): part of the softmax phase, so serial kernels pay
                                 * it after their products */
    double inflight_cta;        /* load bytes one CTA keeps in flight */
    int async_copy;             /* loads go to smem asynchronously (cp.async/TMA) */
    enum dtype mdt;             /* matrix pipe type */
    enum dtype vdt;             /* vector pipe type */
    double dram_cost;           /* DRAM capacity used per byte (read/write turnaround) */
    double load_frac;           /* L2 port share usable by its loads (narrow loads: < 1; 0 = 1) */
    double code_frac;           /* share of its DRAM reads that are entropy-coded weights,
                                 * counted decoded (0: none); they pass the chip's decoder */
    double code_ratio;          /* their bytes in DRAM per decoded byte */
    char tile[48];
};

/* An op's kernels while lowering (lower_op fills one on the stack). */
struct lowered {
    uint32_t nk;
    struct kplan k[TILED_MAX_KERNELS];
    double flops;               /* useful FLOPs of the op */
};

/* ... and as a device keeps them: nk kernels of the run's shared
 * lowering (device.c) at soff, or, for an op whose copies the device
 * routes over the system's links, its own copies at kpool[off]
 * (tdev_kernel). */
struct lowref {
    uint32_t off, nk;
    uint32_t soff;              /* the kernels in the shared lowering: the remembered reuse
                                 * is kept by it */
    uint32_t local;             /* 1: the device's own copies, kpool[off] */
    double flops;
};

struct tdev;

/* A kernel's cache reuse, remembered (runner.c, "Remembered reuse").  A
 * wave group's bytes per cache come from a walk over its CTAs
 * (reuse_wave), a tenth to a fifth of a training step's time; a kernel of
 * one plan on the same units gives the same bytes every time it runs
 * alone, so the walk's results are kept by plan. */
struct wave_memo {
    uint32_t kp_plus1;          /* shared kernel index (lowref.soff + kernel) + 1 of the kernel
                                 * it holds; 0 = empty */
    uint32_t n;                 /* its wave groups */
    uint32_t avail;             /* the units every one of them began on */
    uint32_t mult[TILED_MEMO_GROUPS];
    double miss[TILED_MEMO_GROUPS][TILED_MEMO_CACHES];
    double l2[TILED_MEMO_GROUPS];
};

/* One op in flight. */
struct runner {
    struct tdev *g;
    int in_use;
    uint32_t op;
    struct op_result *res;
    model_done_fn done;
    void *ctx;
    const struct lowref *low;
    uint32_t kern;
    const struct kplan *p;
    uint64_t wave;              /* waves begun */
    uint64_t cta0, wctas;       /* CTAs begun before the current wave, and in it */
    uint32_t memo_i;            /* its kernel's memo slot (runner.c, memo_index) */
    uint32_t avail;             /* units the current wave runs on (the device's, less
                                 * what collectives held when it began) */
    uint32_t mult;              /* full waves simulated as this one */
    uint64_t t_mark;            /* time up to which res->time_ps is accounted */
    uint64_t mark_sat[HW_MAX_LEVELS]; /* the DRAM's and the caches' servers' saturated time at
                                 * t_mark (a wait's split: runner.c account) */
    /* current wave */
    uint32_t units;             /* SMs busy in this wave */
    uint32_t nchunks;
    double frac[TILED_MAX_CHUNKS];
    double w_dram_r, w_l2_r;    /* loop loads of the wave: DRAM (misses), L2 (all) */
    double w_dec;               /* of the DRAM loads, the decoded bytes the decoder puts out */
    double w_cache_r[HW_MAX_LEVELS]; /* ... reaching cache i >= 1 (misses of cache i-1) */
    double w_pro;               /* prologue loads (read from DRAM through L2) */
    uint64_t load_lat;          /* latency of a chunk load: DRAM if the wave reads DRAM, else L2 */
    double w_mflops, w_vflops, w_smem, w_store_loop, w_store_end, w_l2_end;
    double w_sfu, w_l2_loop;    /* special-function ops; L2-only bytes of the loop */
    double w_xchg;              /* shared-memory bytes exchanged between warps */
    double cap_dram, cap_l2, cap_m, cap_v, cap_smem, cap_s;
    double cap_l2_load;         /* cap_l2 in L2 bytes of the loop's loads: the SMs' ports carry
                                 * every delivered byte, the L2 only kplan_l2_share of them */
    int phase;                  /* 0 = matrix work (and, overlapped, the softmax), 1 = softmax
                                 * (serial kernels: after the matrix work), 2 = the exponentials
                                 * an overlapped kernel runs after it (sfu_serial) */
    /* pipeline state */
    uint32_t load_next, comp_next;
    int load_busy, comp_busy;
    uint32_t load_pending, comp_pending, pipe_pending, store_pending;
    uint64_t comp_start, pipe_done;
    uint8_t ready[TILED_MAX_CHUNKS];
    uint8_t load_level[TILED_MAX_CHUNKS];
    uint8_t store_level;
    uint64_t wave_start;        /* when the current wave group began */
    int draining;               /* all waves computed, waiting for stores */
    /* remembered reuse (runner.c): its groups are in tdev.rec while it
     * replays or records (only the scratch's owner does either) */
    uint32_t group;             /* wave groups begun in this kernel */
    int replaying;              /* its groups so far came from the memo, their walks not done */
    int panels_unset;           /* replaying: its panels not yet marked unused (memo_walk
                                 * does it before walking; nothing else reads them) */
    int recording;              /* its groups so far were walked with nobody else's in between */
};

/* The wave groups of the kernel that owns a device's reuse scratch, while
 * it records them for the memo or replays them from it: each group's first
 * wave, first CTA and waves, and what its walk found. */
struct memo_rec {
    uint64_t wave[TILED_MEMO_GROUPS], cta0[TILED_MEMO_GROUPS];
    uint32_t mult[TILED_MEMO_GROUPS], avail;
    double miss[TILED_MEMO_GROUPS][TILED_MEMO_CACHES], l2[TILED_MEMO_GROUPS];
};

/* A tiled device: one GPU, TPU or NPU of the run (the family's YAML, not
 * the code, says which). */
struct tdev {
    const struct hw_config *cfg;
    const struct trace *t;
    uint32_t device;
    uint32_t comp;
    struct engine *e;
    struct flowsrv mpipe, vpipe, sfu;       /* the pipes: matrix, vector, special-function */
    struct flowsrv *lv;         /* the memory levels' servers, 2 a level (tdev_lv) */
    struct flowsrv *dramp;      /* the DRAM level's server, or the run's shared unified-memory one */
    uint64_t frontend_free_ps;  /* launches are issued one at a time */
    uint64_t host_issued_ps;    /* when the host loop has issued the kernels so far
                                 * (cfg host_step_ps, host_dispatch_ps) */
    struct lowref *low;         /* per op of this device (run_env.local indexes it) */
    struct kplan *const *ks;    /* the run's shared kernels (&lower_shared.k: one copy for
                                 * every device; a data-parallel run's replicas read the
                                 * same plans) */
    struct kplan *kpool;        /* the kernels the device routes itself (lowref.local) */
    uint32_t nkpool;
    uint32_t nkdist;            /* distinct kernels of this device's ops */
    /* L2 reuse scratch, sized for the largest plan */
    int32_t *panel_last;        /* last wave a panel was used, -1 = never (a kernel has at
                                 * most TILED_MAX_WAVES, device.c) */
    double *wave_cum;           /* bytes touched up to and including wave w */
    /* multi-instance caches: the panels a wave fetched, with their readers
     * (NULL on a chip whose caches have one instance each) */
    struct wpanel { double bytes; uint32_t missed; uint32_t readers; } *wpanel;
    uint32_t *panel_slot;       /* panel -> its wpanel entry in the current wave */
    double repl[HW_MAX_LEVELS]; /* copies per fetched byte the last wave made, per cache */
    uint32_t wave_npanels;      /* wpanel entries of the current wave */
    struct runner *reuse_owner; /* the runner whose kernel last used the scratch above */
    struct wave_memo *memo;     /* remembered reuse, the run's (device.c), direct-mapped by
                                 * shared kernel index; NULL when no kernel plan of the
                                 * device runs twice (or STRATA_REUSE_MEMO=0) */
    uint32_t memo_mask;         /* its slots - 1 */
    struct memo_rec *rec;       /* the owner's groups (with memo) */
    struct runner *run;         /* min(TILED_MAX_RUNNING, the streams the device uses): ops of
                                 * one stream never run at once */
    uint32_t nrun;
    /* ops handed over while TILED_MAX_RUNNING were running (FIFO ring,
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
    struct tdev_watch { struct timeline *tl; struct tl_series *s; } watch[HW_MAX_LEVELS + 6];
    uint32_t held_units;        /* units running collectives' kernels now (hold_units) */
};

/* Kernel k of an op lowered as L on g. */
static inline const struct kplan *tdev_kernel(const struct tdev *g, const struct lowref *L,
                                              uint32_t k)
{
    return L->local ? &g->kpool[L->off + k] : &(*g->ks)[L->soff + k];
}

/* The bandwidth server of the device's memory level `level` (config
 * order) and direction dir: a link's 0 toward the device, 1 out of it;
 * every other level has direction 0 only.  device.c makes one for each
 * level but the registers (a capacity) and a link to peers (the system's
 * links, net.h). */
static inline struct flowsrv *tdev_lv(const struct tdev *g, int level, unsigned dir)
{
    return &g->lv[2 * (unsigned)level + dir];
}

/* Units a kernel launched now gets: the device's less those collectives
 * hold, never under half of them (the reuse scratch is sized for that). */
static inline uint32_t tdev_avail_units(const struct tdev *g)
{
    uint32_t u = g->cfg->units, floor_u = (u + 1) / 2;
    return g->held_units >= u - floor_u ? floor_u : u - g->held_units;
}

static inline double dmax(double a, double b) { return a > b ? a : b; }
static inline double dmin(double a, double b) { return a < b ? a : b; }
static inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
static inline uint64_t umin(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* The share of a kernel's operand loads the first cache serves: with a
 * thread-block cluster (kplan cl_m x cl_n) one L2 read of a shared panel
 * reaches every CTA of the cluster that needs it (TMA multicast), so A
 * panels are read once per cl_n CTAs and B panels once per cl_m; 1 without
 * a cluster.  Each SM still receives all its bytes, but in a 2-SM MMA
 * pair (mma_pair, kplan_port_share). */
static inline double kplan_l2_share(const struct kplan *p)
{
    double cm = p->cl_m > 1 ? p->cl_m : 1, cn = p->cl_n > 1 ? p->cl_n : 1;
    double all = p->a_step + p->b_step;
    if ((cm == 1 && cn == 1) || all <= 0)
        return 1.0;
    return (p->a_step / cn + p->b_step / cm) / all;
}

/* Share of the panel bytes a CTA's port (and shared memory) receives:
 * all of them under multicast, the L2 share in a 2-SM MMA pair. */
static inline double kplan_port_share(const struct kplan *p)
{
    return p->mma_pair ? kplan_l2_share(p) : 1.0;
}

/* unit.c: rates of one unit (SM, array), pipe types, systolic work */
double unit_matrix_rate(const struct hw_config *c, enum dtype t);
double unit_vector_rate(const struct hw_config *c, enum dtype t);
double unit_matrix_pj(const struct hw_config *c, enum dtype t);   /* pJ a FLOP, 0 = no power */
double unit_vector_pj(const struct hw_config *c, enum dtype t);
double unit_sfu_pj(const struct hw_config *c);                   /* pJ a result */
enum dtype unit_vector_type(const struct hw_config *c, enum dtype t);
enum dtype unit_matrix_type(const struct hw_config *c, enum dtype t);
double unit_systolic_flops(const struct hw_config *c, double rows, double k, double n);
double unit_systolic_fill_flops(const struct hw_config *c);
int unit_gemm_simt(const struct hw_config *c, enum dtype t);
enum dtype unit_simt_type(const struct hw_config *c, enum dtype t);

/* lower.c: fills *L (zeroed) with the kernels op o runs as on chip c;
 * spill_frac is the share of its weights that must first be copied from
 * the host */
void lower_op(const struct hw_config *c, const struct op *o, double spill_frac,
              struct lowered *L);

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
    double math_scale;          /* matrix-pipe time per FLOP relative to dense: dense rate /
                                 * 2:4 sparse rate for a sparse B on a chip with that path */
    double aq_ops;              /* vector ops to quantise one A (activation) element to dt,
                                 * once per element (0: A arrives in dt) */
};

/* lower_gemm.c: a GEMM op's kernel (into L->k[0]); the tile plan of shape
 * s; the load width (a share of 16 bytes) rows of n and k elements of eb
 * bytes allow; bytes per output element of a GEMM of type t */
void lower_gemm_op(const struct hw_config *c, const struct op *o, struct lowered *L);
void lower_gemm_plan(const struct hw_config *c, struct kplan *best, const struct gemm_shape *s);
double lower_gemm_load_frac(uint64_t n, uint64_t k, double eb);
double lower_gemm_out_bytes(enum dtype t);

/* lower_attn.c: 0 if chip c can run attention op o's impl, else -1 with a
 * message naming the impls it can run; an attention op's kernels (fills
 * L, its FLOPs too) */
int lower_attn_check(const struct hw_config *c, const struct op *o, char *msg, size_t n);
void lower_attn_op(const struct hw_config *c, const struct op *o, struct lowered *L);

/* kplan.c: CTAs a unit holds of a kernel with these threads, shared-memory
 * and register bytes a CTA (into p->ctas_per_unit); DRAM capacity a byte
 * uses at a read/write mix; a streaming kernel over load_bytes in,
 * store_bytes out, with vflops of vector work (rows > 0: at least a CTA a
 * row), each thread loading vec_bytes per input an access */
void kplan_occupancy(const struct hw_config *c, struct kplan *p, uint32_t threads,
                     double smem_cta, double regs_cta);
double kplan_dram_cost(const struct hw_config *c, double rd, double wr);
void kplan_stream(const struct hw_config *c, struct kplan *p, const char *what,
                  double load_bytes, double store_bytes, double vflops,
                  enum dtype vdt, uint64_t rows, uint32_t inputs, double vec_bytes);

/* reuse.c: the load bytes of CTAs [c0, c1) of wave `wave` of p: *l2 what
 * they read from the first cache, miss[i] what misses cache i */
void reuse_wave(struct tdev *g, const struct kplan *p, uint64_t wave, uint64_t c0,
                uint64_t c1, double *miss, double *l2);

/* runner.c: the device's event handler, and the step to an op's next
 * kernel (its first when r->p is NULL; finishes the op after its last) */
void runner_handle(struct engine *e, void *self, const struct eq_event *ev);
void runner_next_kernel(struct runner *r);
/* Accounted up to now (runner.c): each split level's saturated time noted. */
void runner_mark(struct runner *r, uint64_t now);

/* device.c: hands op op_index to the device (runs it now or queues it) */
void tdev_start_op(void *dev, uint32_t op_index, struct op_result *res,
                  model_done_fn done, void *ctx);

#endif
