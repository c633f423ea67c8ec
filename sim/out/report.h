/* report.h: what a run tells its user, and what every writer of it reads.
 *
 * struct report_ctx names the run and what goes with it; the writers are
 * report_text.h (the terminal summary), report_json.h (report.json, whose
 * fields, listed in docs/report.md, are a stable contract: add freely,
 * rename nothing) and report_csv.h (ops.csv, one row an op).
 */
#ifndef STRATA_REPORT_H
#define STRATA_REPORT_H

#include "cfg.h"
#include "diag.h"
#include "energy.h"
#include "run.h"
#include "system.h"
#include "trace.h"
#include "version.h"
#include "whatif.h"

#define REPORT_PS 1e-12 /* seconds in a picosecond: the run's times are integer ps */

struct timeline;

struct report_ctx {
    const struct hw_config *cfg;
    const struct trace *t;
    const struct run_result *r;
    double tokens;              /* tokens produced per trace replay, 0 = not a token workload */
    unsigned top;               /* ops to list in the terminal table */
    const struct timeline *tl;  /* adds "timeseries" to the JSON when set */
    const struct whatif *whatif;/* adds "whatif" to the JSON when nwhatif > 0 */
    unsigned nwhatif;
    const struct hw_system *sys;/* the system file the run was on, or NULL (a chip config) */
};

/* An op's time from its start to its end, s. */
static inline double report_op_time_s(const struct op_result *o)
{
    return (double)(o->end_ps - o->start_ps) * REPORT_PS;
}

/* An op's energy, J (a run with energy: docs/energy.md): its pipes' and
 * its bytes' at each level (energy_op); the ops' add up, with the run's
 * idle energy, to its total. */
static inline double report_op_energy_j(const struct hw_config *cfg, const struct op_result *o)
{
    double core;
    return energy_op(cfg, o, NULL, &core);
}

#endif
