/* energy.h: what an op's activity costs in energy (docs/energy.md).
 *
 * The models count an op's pipe energy as they run it (op_result.pipe_pj:
 * FLOPs and special-function results times the chip's pJ each); the bytes
 * it moved at each level cost that level's energy per byte.  Which part
 * runs on the core's clock (the pipes, registers, scratchpads, caches)
 * matters to a power limit: that part scales with the clock squared
 * (cfg_at_clock), DRAM and links do not.
 */
#ifndef STRATA_ENERGY_H
#define STRATA_ENERGY_H

#include "cfg.h"
#include "model.h"

/* One op's energy, J: its pipes' and its bytes' at each level, each
 * level's added to level_j[l] (when not NULL); what runs on the core's
 * clock (the pipes, registers, scratchpads, caches) in *core. */
double energy_op(const struct hw_config *cfg, const struct op_result *o, double *level_j,
                 double *core);

#endif
