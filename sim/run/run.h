/* run.h: replay a trace on a hardware config.
 *
 * run_trace() builds one engine, one model instance per trace device (all
 * from the same config for now), releases each op when its dependencies
 * and the previous op on its (device, stream) have finished, and collects
 * per-op results.  Everything lives in the struct run_result; no globals,
 * so any number of runs may happen in one process or on several threads.
 *
 * Ownership: run_trace allocates out->op and out->body; free with
 * run_result_free().
 */
#ifndef STRATA_RUN_H
#define STRATA_RUN_H

#include <stdint.h>

#include "cfg.h"
#include "diag.h"
#include "model.h"
#include "opstore.h"
#include "system.h"
#include "trace.h"

struct run_result {
    uint32_t nops;
    struct run_op *op;              /* per op, trace order: its times and body (opstore.h);
                                       run_op_result() reads one whole */
    struct op_result *body;         /* the distinct bodies, each as if its op began at 0 */
    uint32_t nbody;
    uint64_t total_ps;              /* end of the last op */
    uint64_t events;                /* engine events dispatched */
    uint64_t queue_grows;           /* event-queue reallocations during the run (should be 0) */
    double flops;                   /* useful FLOPs of all ops */
    double working_set;             /* largest per-device weights + KV bytes (trace_working_set) */
    double spill;                   /* bytes of it beyond the device's memory (streamed from host) */
    double bytes[HW_MAX_LEVELS];    /* bytes moved per level (config order), all ops */
    /* Where the run's wall time went: each instant is shared among the ops
     * running then; CAT_COUNT extra slot = nothing running (idle on
     * dependencies or the host).  Adds up to total_ps. */
    double time_ps[CAT_COUNT + 1];
    /* Of time_ps[CAT_STALL + l], the part the level ran below its rate
     * (op_result.lat_ps), shared out as time_ps is. */
    double lat_ps[HW_MAX_LEVELS];
    /* The same per device (ndevices x (CAT_COUNT + 1), row d for trace
     * device d): each instant shared among the compute ops running on that
     * device then, or among its collectives when no compute op runs; idle
     * = nothing.  A collective's wait and transfer count at its link level,
     * so a device's stall at nvlink, pcie or ici is its exposed
     * communication: what overlaps compute is not counted. */
    uint32_t ndevices;
    double *dev_time_ps;
    /* Energy, on a config with a power block (docs/energy.md), J: each
     * level's bytes, then the pipes' (RUN_E_PIPES), then the idle power
     * over the whole run of every device that is not a mirror
     * (RUN_E_STATIC); has_energy 0 and all 0 otherwise.  dev_energy_j:
     * each device's total (a mirror's 0: its twin's is counted). */
    int has_energy;
    double energy_j[HW_MAX_LEVELS + 2];
    double *dev_energy_j;
    /* A sustained run (run_opts.sustained): the clock it held, as a
     * fraction of the config's (1: the limit did not bind), and how many
     * times the trace was simulated to find it; 0 and 0 otherwise. */
    double clock_scale;
    uint32_t power_runs;
    int power_floor;                /* a sustained run still over the limit at strata's lowest
                                       clock (SUSTAINED_MIN_CLOCK of the config's, sustained.h) */
};
/* The average power of the hottest device of a run that is not a mirror,
 * W (0 without energy); its index in *dev when dev is not NULL. */
double run_hot_power(const struct run_result *r, const struct trace *t, uint32_t *dev);

#define RUN_IDLE CAT_COUNT
#define RUN_E_PIPES HW_MAX_LEVELS
#define RUN_E_STATIC (HW_MAX_LEVELS + 1)
/* Op i's result, whole, in *tmp (returned). */
static inline const struct op_result *run_op_result(const struct run_result *r, uint32_t i,
                                                    struct op_result *tmp)
{
    const struct run_op *p = &r->op[i];
    *tmp = r->body[p->body];
    tmp->ready_ps = p->ready_ps;
    tmp->start_ps = p->start_ps;
    tmp->end_ps += p->start_ps;
    return tmp;
}
/* Op i's body: its result but for the times (ready_ps and start_ps 0,
 * end_ps its duration). */
static inline const struct op_result *run_op_body(const struct run_result *r, uint32_t i)
{
    return &r->body[r->op[i].body];
}
static inline uint64_t run_op_start(const struct run_result *r, uint32_t i)
{
    return r->op[i].start_ps;
}
/* Op i's time from its start to its end (its body's end). */
static inline uint64_t run_op_dur_ps(const struct run_result *r, uint32_t i)
{
    return r->body[r->op[i].body].end_ps;
}
static inline uint64_t run_op_end(const struct run_result *r, uint32_t i)
{
    return r->op[i].start_ps + run_op_dur_ps(r, i);
}

/* Sum of r->energy_j. */
double run_energy_total(const struct run_result *r);

struct timeline;
struct prog;

struct run_opts {
    struct timeline *tl;            /* record a timeline (tl_init'ed for t->ndevices), or NULL */
    uint64_t max_events;            /* work budget in engine events; 0: $STRATA_MAX_EVENTS, else
                                       RUN_MAX_EVENTS */
    int sustained;                  /* hold the clock the chip's power limit allows a run
                                       repeated for seconds (docs/energy.md); the config must
                                       have a power block with limit_W */
    struct prog *progress;          /* draw the ops done on this progress line (progress.h),
                                       or NULL; only from the thread that owns it */
    int resident;                   /* the caller holds the weights and KV in the device's
                                       memory (a serving engine's cache, which shares a prefix's
                                       blocks between sequences): nothing streams from the host
                                       however large the trace's working set */
};
/* The default work budget of one run: about three minutes of simulation at
 * the engine's 28 M events/s (scripts/bench.sh).  Every mode that runs a
 * trace (run, sweep points, validate and calibrate rows, compare, bench)
 * stops past it with an error that says how to raise it. */
#define RUN_MAX_EVENTS UINT64_C(5000000000)

int run_trace(const struct hw_config *cfg, const struct trace *t, struct run_result *out,
              struct diag *d);
int run_trace_opts(const struct hw_config *cfg, const struct trace *t, const struct run_opts *o,
                   struct run_result *out, struct diag *d);
/* The same on a system: its devices, links and switches (system.h).  Each
 * trace device runs on the system device of its name. */
int run_system_opts(const struct hw_system *sys, const struct trace *t, const struct run_opts *o,
                    struct run_result *out, struct diag *d);
void run_result_free(struct run_result *r);

/* The category that took most of an op's time: "compute", "launch" or a
 * level name; "NAME latency" when most of that level's wait it ran below
 * its rate (op_result.lat_ps: too few bytes in flight for its latency). */
const char *run_bound_name(const struct hw_config *c, const struct op_result *r);
/* The same for a whole run (its time_ps and lat_ps): a sweep point's bound. */
const char *run_result_bound(const struct hw_config *c, const struct run_result *r);
/* Name of a time category ("busy", "launch", "smem", ..., "idle"). */
const char *run_cat_name(const struct hw_config *c, unsigned cat);

#endif
