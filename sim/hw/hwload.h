/* hwload.h: loading a hardware file: a chip config (configs/, schema in
 * configs/README.md) or a system file (configs/systems/), with overrides
 * (cfgset.h) applied to the chip.
 *
 * hw_load is the one entry: it reads a path that may name either and says
 * which it named, or, for a caller that needs a chip, refuses a system
 * file.  The prototype (hw_proto_load) is the same load for a sweep that
 * loads one file with many sets of overrides.  Every key and value is
 * checked up front; unknown keys, missing required keys, wrong types and
 * out-of-range values are errors reported as
 * "file:line: section.key: message", and an error in an override names the
 * override.  A data-sheet spec file is not a hardware file: `strata
 * new-chip` turns it into a chip config (spec.h), which hw_load reads.
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
 * *out and *kind, or -1 with *d filled (*out untouched; d may be NULL).
 * kind NULL: the caller needs a chip, and a system file is an error. */
int hw_load(const char *path, const struct cfg_sets *sets, struct hw_system *out,
            enum hw_kind *kind, struct diag *d);

/* A hardware file parsed once and loaded with many sets of overrides (a
 * sweep's points): each load works on a copy of the tree as hw_load works
 * on the file (a system's chip config is read at each load).
 * hw_proto_load: 0 with *out, or -1 with *d. */
struct hw_proto;
int hw_proto_load(const char *path, struct hw_proto **out, struct diag *d);
int hw_load_proto(const struct hw_proto *p, const struct cfg_sets *sets, struct hw_system *out,
                  enum hw_kind *kind, struct diag *d);
void hw_proto_free(struct hw_proto *p);

#endif
