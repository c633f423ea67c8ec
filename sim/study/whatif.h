/* whatif.h: what-if re-simulations for the report.
 *
 * Re-simulate with one resource doubled (or launch overhead removed), so
 * the report's "would cut at most" figures are simulated, not guessed.
 * Each what-if is a named override (cfgset.h) added after the run's own:
 * `DRAM.bandwidth=x2` (the DRAM level by its name), `CACHE.bandwidth=x2`
 * (the first cache), `compute.matrix_flops_per_cycle_per_unit=x2`,
 * (and the 2:4 sparse rates, where the chip has them),
 * `compute.vector_flops_per_cycle_per_unit=x2`,
 * `launch.kernel_overhead_ns=0`, `DRAM.latency=x0.5` with
 * `DRAM.efficiency.loaded_latency=x0.5` (what a wait below the DRAM's
 * rate, too few bytes in flight for its latency, would gain) and, on a
 * trace of several devices, `PEER.bandwidth=x2` for the chip's peer link
 * (on a system file: every link of that level, cfgset.h); the
 * hardware is loaded with it as the run
 * loaded its own (whatif_build), so `strata run --set` with the same
 * override gives the same time.  Each what-if is its own engine instance,
 * so they run on two threads; the results land by index, so the report
 * does not depend on which finishes first.
 */
#ifndef STRATA_WHATIF_H
#define STRATA_WHATIF_H

#include "cfgset.h"
#include "hwload.h"
#include "stack.h"
#include "system.h"
#include "trace.h"

#define WHATIF_COUNT 7 /* DRAM x2, L2 x2, matrix x2, vector x2, no launch overhead, DRAM
                        * latency x0.5, peer link x2 (several devices) */

/* A what-if re-simulation: the same trace on a changed config. */
struct whatif {
    char name[24];              /* "dram_bw_x2", ... */
    char description[64];       /* "DRAM bandwidth x2" */
    char set[128];              /* the overrides, separated by spaces: "hbm.bandwidth=x2" */
    double total_time_s;
};

/* The hardware a run stands on: the file, its overrides (may be NULL) and
 * the software stack that drives the chip (NULL: none). */
struct whatif_hw {
    const char *path;
    const struct cfg_sets *sets;
    const struct stack *stack;
    const char *stack_dir;
};

/* After hw_load of h->path gave *sys of kind: the system a chip config
 * implies for t's devices, and the stack applied to the chip.  0, or -1
 * with *d (*sys freed). */
int whatif_build(const struct whatif_hw *h, enum hw_kind kind, const struct trace *t,
                 struct hw_system *sys, struct diag *d);

/* Runs the what-ifs of the run on h (whose chip, as loaded, is base) with
 * trace t; w holds WHATIF_COUNT.  Returns how many succeeded (they are
 * packed in order; a failed run is left out).  sustained: each run at the
 * clock the chip's power limit allows (run_opts.sustained), as the run it
 * explains.  prog: the calling thread's progress line (progress.h), which
 * the what-ifs run on this thread draw on, or NULL. */
struct prog;
unsigned whatif_run(const struct whatif_hw *h, const struct hw_config *base, const struct trace *t,
                    int sustained, struct prog *prog, struct whatif *w);

#endif
