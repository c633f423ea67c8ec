/* energy.c: an op's energy from what it did.  See energy.h.
 *
 * What it models: dynamic energy as activity times a cost per unit of it
 * (a FLOP, a byte at a level), the pipes' already summed by the model.
 * What it ignores: the idle power (the run adds it over the whole run, per
 * device), data-dependent switching, and temperature.
 */
#include "energy.h"

double energy_op(const struct hw_config *cfg, const struct op_result *o, double *level_j,
                 double *core)
{
    double e = o->pipe_pj * 1e-12, ec = e;
    for (unsigned l = 0; l < cfg->nlevels; l++) {
        double el = o->bytes[l] * cfg->level[l].energy_pj_per_byte * 1e-12;
        if (level_j != NULL)
            level_j[l] += el;
        if (cfg_level_core_clocked(&cfg->level[l]))
            ec += el;
        e += el;
    }
    *core = ec;
    return e;
}
