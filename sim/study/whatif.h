/* whatif.h: what-if re-simulations for the report.
 *
 * Re-simulate with one resource doubled (or launch overhead removed), so
 * the report's "would cut at most" figures are simulated, not guessed.
 * Each what-if is its own engine instance, so they run on two threads; the
 * results land by index, so the report does not depend on which finishes
 * first.
 */
#ifndef STRATA_WHATIF_H
#define STRATA_WHATIF_H

#include "cfg.h"
#include "system.h"
#include "trace.h"

#define WHATIF_COUNT 5 /* DRAM x2, L2 x2, matrix x2, vector x2, no launch overhead */

/* A what-if re-simulation: the same trace on a changed config. */
struct whatif {
    char name[24];              /* "dram_bw_x2", ... */
    char description[64];       /* "DRAM bandwidth x2" */
    double total_time_s;
};

/* Runs the what-ifs on sys (its chip changed, its links as they are); w
 * holds WHATIF_COUNT.  Returns how many succeeded (they are packed in
 * order; a failed run is left out).  sustained: each run at the clock the
 * chip's power limit allows (run_opts.sustained), as the run it explains. */
unsigned whatif_run(const struct hw_system *sys, const struct trace *t, int sustained,
                    struct whatif *w);

#endif
