/* chipcfg.h: a chip config (configs/README.md), read into a tree by
 * yconf.h, checked against its schema and compiled into a struct
 * hw_config (chip.h).  The schema's key lists are here too, for the
 * overrides that name keys (cfgset.c) and the links of a system file.
 */
#ifndef STRATA_CHIPCFG_H
#define STRATA_CHIPCFG_H

#include "chip.h"
#include "yconf.h"

/* Fills *h (zeroed by the caller) from the chip config under root: 0, or
 * -1 with *c->d at the first problem. */
int chipcfg_fill(struct yconf *c, int root, struct hw_config *h);
/* The keys a chip config allows at its top level (section "") or in one of
 * its sections (compute, threads, systolic, launch, collectives,
 * efficiency, power), NULL-ended; NULL for any other name. */
const char *const *chipcfg_keys(const char *section);
/* The keys a level of kind k allows. */
const char *const *chipcfg_level_keys(enum level_kind k);
/* The keys of a level's efficiency mapping: a DRAM's (LK_DRAM) or a link's. */
const char *const *chipcfg_efficiency_keys(enum level_kind k);

#endif
