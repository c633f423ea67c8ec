/* cfg.h: hardware configuration, compiled from YAML into an immutable struct.
 *
 * cfg_load() reads one YAML file (schema: configs/README.md), checks every
 * key and value up front and fills a struct hw_config (chip.h, what the
 * models see).  Unknown keys, missing required keys, wrong types and
 * out-of-range values are errors reported as
 * "file:line: section.key: message".
 */
#ifndef STRATA_CFG_H
#define STRATA_CFG_H

#include <stddef.h>

#include "cfgset.h"
#include "chip.h"
#include "diag.h"

/* Load and validate path into *out.  Returns 0, or -1 with *d filled. */
int cfg_load(const char *path, struct hw_config *out, struct diag *d);

/* cfg_load with sets applied (sets may be NULL or empty). */
int cfg_load_with(const char *path, const struct cfg_sets *sets, struct hw_config *out,
                  struct diag *d);
/* A chip config parsed once and loaded with many sets of overrides (a
 * sweep): cfg_proto_load returns 0 with *out, 1 when path is a system file
 * (use sys_load_with), or -1 with *d. */
struct cfg_proto;
int cfg_proto_load(const char *path, struct cfg_proto **out, struct diag *d);
int cfg_load_proto(const struct cfg_proto *p, const struct cfg_sets *sets, struct hw_config *out,
                   struct diag *d);
void cfg_proto_free(struct cfg_proto *p);

#endif
