/* sysload.h: a system file (configs/systems/, schema in configs/README.md),
 * read into a tree by yconf.h, checked and compiled into a struct
 * hw_system (system.h).
 *
 * In two steps, because the chip the file names is loaded between them,
 * with the overrides, by whoever loads the file (hwload.c): the system
 * loader reads the chip loader's result and never calls it.
 */
#ifndef STRATA_SYSLOAD_H
#define STRATA_SYSLOAD_H

#include <stddef.h>

#include "system.h"
#include "yconf.h"

/* The top level's keys, the system's name (into s->name) and the path of
 * the chip config it names (relative to the system file's folder) into
 * chip_path[size]: 0, or -1 with *c->d. */
int sysload_head(struct yconf *c, int root, struct hw_system *s, char *chip_path, size_t size);
/* The rest, with s->chip loaded: the unified memory, the devices, the
 * other nodes and the links (s->nodes and s->links, which the caller frees
 * with sys_free on either result): 0, or -1 with *c->d. */
int sysload_body(struct yconf *c, int root, struct hw_system *s);

#endif
