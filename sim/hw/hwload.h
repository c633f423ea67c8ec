/* hwload.h: loading hardware files: a chip config (configs/, schema in
 * configs/README.md) or a system file (configs/systems/), with overrides
 * (cfgset.h) applied to the chip.
 *
 * hw_load is the entry point for a path that may name either and says
 * which it named.  cfg_load is for callers that need a chip, the prototype
 * (hw_proto_load) for a sweep that loads one file with many sets of
 * overrides.  Every key and value is checked up front; unknown keys,
 * missing required keys, wrong types and out-of-range values are errors
 * reported as "file:line: section.key: message", and an error in an
 * override names the override.
 *
 * Ownership: a system that hw_load fills holds its nodes and links;
 * sys_free (system.h) releases them, and is harmless on a chip's result.
 */
#ifndef STRATA_HWLOAD_H
#define STRATA_HWLOAD_H

#include "cfgset.h"
#include "chip.h"
#include "diag.h"
#include "system.h"

/* What a hardware file is. */
enum hw_kind {
    HW_CHIP,    /* a chip config: only out->chip (and out->path) is filled; the caller makes the
                 * system it implies for its trace's devices (sys_from_chip) */
    HW_SYSTEM   /* a system file: *out whole, its chip loaded with the same overrides */
};

/* Loads path, with sets (may be NULL or empty) applied to the chip: 0 with
 * *out and *kind, or -1 with *d filled (*out untouched). */
int hw_load(const char *path, const struct cfg_sets *sets, struct hw_system *out,
            enum hw_kind *kind, struct diag *d);

/* A hardware file parsed once and loaded with many sets of overrides (a
 * sweep's points): each load works on a copy of the tree as hw_load works
 * on the file.  hw_proto_load: 0 with *out, or -1 with *d. */
struct hw_proto;
int hw_proto_load(const char *path, struct hw_proto **out, struct diag *d);
int hw_load_proto(const struct hw_proto *p, const struct cfg_sets *sets, struct hw_system *out,
                  enum hw_kind *kind, struct diag *d);
void hw_proto_free(struct hw_proto *p);

/* A chip config into *out: 0, or -1 with *d filled (a system file is an
 * error).  cfg_load_with applies sets (may be NULL or empty). */
int cfg_load(const char *path, struct hw_config *out, struct diag *d);
int cfg_load_with(const char *path, const struct cfg_sets *sets, struct hw_config *out,
                  struct diag *d);

/* hw_load without overrides, its kind as the result: 0 for a system file,
 * 1 for a chip config (only out->chip filled), -1 with *d. */
int sys_load(const char *path, struct hw_system *out, struct diag *d);
/* sys_load with config overrides applied to the chip. */
int sys_load_with(const char *path, const struct cfg_sets *sets, struct hw_system *out,
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
