/* cfg.h: hardware configuration: what a chip is (chip.h), overrides of its
 * values (cfgset.h), and loading chip configs and system files into it
 * (hwload.h).  The header the model side and the loaders' callers include.
 *
 * A chip config (schema: configs/README.md) is compiled from YAML into an
 * immutable struct hw_config: every key and value is checked up front, and
 * models only ever see a const struct hw_config *.
 */
#ifndef STRATA_CFG_H
#define STRATA_CFG_H

#include "cfgset.h"
#include "chip.h"
#include "hwload.h"

#endif
