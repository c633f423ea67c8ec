/* model.h: the interface between the engine side (sim/) and hardware models.
 *
 * A hardware family (GPU, systolic array, ...) implements one struct
 * model_ops; models/registry.c maps the config's `family` to it.  The run
 * driver (sim/run/run.c) creates one model instance per device, hands it ops
 * whose dependencies are satisfied, and is called back when each finishes.
 * The model fills the op's struct op_result: time, work, bytes per memory
 * level, and where the time went.
 */
#ifndef STRATA_MODEL_H
#define STRATA_MODEL_H

#include <stdint.h>

#include "cfg.h"
#include "diag.h"
#include "engine.h"
#include "system.h"
#include "trace.h"

/* Where an op's time went: computing, waiting at a memory level, or
 * launching.  Levels are the config's (struct hw_config level[], innermost
 * first): CAT_STALL + i is waiting on level i.  The categories of one op add
 * up to its duration. */
enum time_cat {
    CAT_BUSY = 0,               /* the compute pipes were working */
    CAT_LAUNCH = 1,             /* kernel launch overhead */
    CAT_MEASURED = 2,           /* an op that runs for its measured time (fixed_s: an imported
                                 * collective or unknown kernel): not simulated, so neither
                                 * busy nor a stall */
    CAT_STALL = 3,              /* CAT_STALL + level: waiting on that level */
    CAT_COUNT = CAT_STALL + HW_MAX_LEVELS
};

struct op_result {
    uint64_t ready_ps;          /* dependencies done, handed to the device */
    uint64_t start_ps;          /* began (launch started) */
    uint64_t end_ps;            /* finished */
    double flops;               /* useful FLOPs (not padding) */
    double bytes[HW_MAX_LEVELS];/* bytes moved at each level (config order) */
    double pipe_pj;             /* energy its pipes spent (matrix, vector, special-function),
                                 * pJ; 0 on a config without power (the run adds the bytes') */
    uint64_t time_ps[CAT_COUNT];/* breakdown of end - start */
    /* Of a memory level's wait (time_ps[CAT_STALL + l]), the part during
     * which the level ran below its rate: too few bytes in flight for its
     * latency (Little's law), or a latency waited out (docs/report.md).  The
     * rest of the wait is its bandwidth.  Split for the DRAM and the caches;
     * 0 for the other levels. */
    uint64_t lat_ps[HW_MAX_LEVELS];
    uint32_t kernels;           /* kernels the op was lowered to */
    uint64_t ctas;              /* thread blocks over all its kernels */
    uint32_t waves;             /* waves over all its kernels */
    char tile[48];              /* lowering summary, e.g. "128x128x64 s3 split1" */
};

/* The timeline series a device records (tl_init's nseries): one per level
 * (bytes), then the matrix and the vector pipe (FLOPs). */
#define TL_SERIES_PER_DEV (HW_MAX_LEVELS + 2)
#define TL_SERIES_MATRIX HW_MAX_LEVELS
#define TL_SERIES_VECTOR (HW_MAX_LEVELS + 1)

typedef void (*model_done_fn)(struct engine *e, void *ctx, uint32_t op_index);

struct timeline; /* sim/engine/record.h; NULL when no timeline is recorded */
struct flowsrv;  /* sim/engine/flow.h */
struct net;      /* models/net.h */

/* What the devices of one run share.  The run driver fills it before it
 * creates the devices (fabric_init, models/fabric.h: the system, its links,
 * the unified DRAM; the run driver: each device's ops); each device's
 * create() puts its DRAM server in dram[device], so a copy between devices
 * can write the peer's memory. */
struct run_env {
    const struct hw_system *sys;    /* the system (a chip config implies one) */
    const uint32_t *sysdev;         /* trace device -> system device (node index) */
    struct net *net;                /* the system's links and switches */
    struct flowsrv *shared_dram;    /* unified memory: one DRAM server for all, or NULL */
    struct flowsrv **dram;          /* per trace device: its DRAM server */
    int host_over_net;              /* host copies cross the system's links (a system file)
                                     * rather than each chip's own host link */
    /* each device's ops, so that a device's work and memory grow with its
     * own ops, not the trace's (O(devices + ops) for the run) */
    const uint32_t *dev_off;        /* per trace device: its ops are dev_ops[dev_off[d] .. dev_off[d+1]) */
    const uint32_t *dev_ops;        /* op indices, by device, in trace order */
    const uint32_t *local;          /* per op: its index among its device's ops */
    const uint32_t *dev_streams;    /* per trace device: the streams its ops use */
    const double *ws, *wbytes;      /* per trace device: working set and weight bytes
                                     * (trace_working_set) */
    void *const *devs;              /* per trace device: its model instance (for hold_units) */
    const struct model_ops *mops;   /* the devices' model */
    void *model_shared;             /* what the model's devices share (the tiled model: the
                                     * shapes lowered so far), made by its first device in the
                                     * engine's arena; NULL until then */
};

struct model_ops {
    const char *family;
    /* Create a device instance for trace device index `device`.  Everything
     * the run needs is allocated here; start_op never allocates. */
    void *(*create)(struct engine *e, const struct hw_config *cfg,
                    const struct trace *t, uint32_t device, struct timeline *tl,
                    struct run_env *env, struct diag *d);
    /* Begin op t->ops[op_index] now; call done(e, ctx, op_index) when it ends. */
    void (*start_op)(void *dev, uint32_t op_index, struct op_result *res,
                     model_done_fn done, void *ctx);
    void (*destroy)(void *dev);
    /* Optional (NULL: not modelled): a collective's kernels hold `delta`
     * more compute units of the device (fewer when negative) while they
     * run, as NCCL's CTAs hold SMs; kernels starting meanwhile get the rest. */
    void (*hold_units)(void *dev, int32_t delta);
};

/* NULL if no model implements the family. */
const struct model_ops *model_lookup(const char *family);

#endif
