/* sustained.h: the clock a chip's power limit holds when a trace runs
 * again and again for seconds (`run --sustained`, docs/energy.md).
 *
 * The search simulates the trace at a few clocks through the caller's
 * sustained_run_fn (the run driver's: one simulation with the chip at a
 * clock scale) and reads back the hottest device's power and time; it
 * knows no run driver, so any code that can run a trace at a clock can
 * use it.
 */
#ifndef STRATA_SUSTAINED_H
#define STRATA_SUSTAINED_H

#include <stdint.h>

#include "cfg.h"
#include "model.h"
#include "opstore.h"
#include "trace.h"

/* strata's lowest clock, as a share of the config's: a run still over the
 * limit there reports it (sustained_result.floor) */
#define SUSTAINED_MIN_CLOCK 0.25

/* What the search reads of one simulation. */
struct sustained_view {
    double hot_w;                   /* the hottest device that is not a mirror: its average
                                     * power, W (run_hot_power) */
    uint32_t hot;                   /* ... and its trace device */
    uint64_t total_ps;              /* the run's time */
    const struct run_op *op;        /* per op, trace order: its body's index (opstore.h) */
    const struct op_result *body;   /* the run's distinct bodies */
    uint32_t nops;
    const double *hot_time_ps;      /* the hot device's time per category (CAT_COUNT + 1:
                                     * run_result.dev_time_ps's row) */
};

/* One simulation of the trace with the chip at clock scale s (0 < s <= 1),
 * recording the timeline when record: 0 with *v, or -1 with the caller's
 * diagnostic.  Each call may free what the previous one's *v pointed at. */
typedef int (*sustained_run_fn)(void *ctx, double s, int record, struct sustained_view *v);

struct sustained_result {
    double clock;                   /* the clock it held, a share of the config's (1: the
                                     * limit did not bind) */
    uint32_t runs;                  /* simulations the search took */
    int floor;                      /* still over the limit at SUSTAINED_MIN_CLOCK */
};

/* The clock chip c's power limit (c->power_limit_w > 0) holds on trace t;
 * the last call of run was at that clock (recording when record).  0, or
 * the first failing run's -1.  *res is filled once known (also when only
 * the rerun that records the timeline failed); zero otherwise. */
int sustained_search(const struct hw_config *c, const struct trace *t, int record,
                     sustained_run_fn run, void *ctx, struct sustained_result *res);

#endif
