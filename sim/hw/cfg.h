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

#include "chip.h"
#include "diag.h"

/* Load and validate path into *out.  Returns 0, or -1 with *d filled. */
int cfg_load(const char *path, struct hw_config *out, struct diag *d);

/* Overrides of config values: `--set KEY=VALUE` on the command line, or
 * the lines of an overlay file (`--hw-overlay`, written by `strata
 * calibrate`).  KEY names a value of the YAML by its path, with a level
 * addressed by its name and the unit suffix left out when VALUE carries a
 * unit: `dram.bandwidth=4.8TB/s`, `l2.capacity=100MiB`, `clock=1.98GHz`,
 * `dram.efficiency.bandwidth_fraction=0.9`,
 * `compute.matrix_flops_per_cycle_per_unit.fp8_e4m3=8192`.  The value is
 * written into the parsed file before it is checked, so an override passes
 * every check a value in the file does; an error in one names it. */
#define CFG_MAX_SETS 32
struct cfg_set {
    char key[96];
    char value[64];
    char origin[160];   /* "--set" or "FILE:LINE" of an overlay */
};
struct cfg_sets {
    unsigned n;
    struct cfg_set set[CFG_MAX_SETS];
};
/* Adds "KEY=VALUE" (syntax only; the key is checked when a config is
 * loaded with it).  A later set of the same key replaces the earlier. */
int cfg_sets_add(struct cfg_sets *s, const char *kv, const char *origin, struct diag *d);
/* Adds every `KEY: VALUE` of an overlay file's `set:` mapping. */
int cfg_sets_load_overlay(struct cfg_sets *s, const char *path, struct diag *d);
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
/* The number a key (as --set names it) has in the chip config at path, and
 * the key with its unit suffix ("dram.efficiency.loaded_latency_ns"). */
int cfg_read_value(const char *path, const char *key, double *value, char *full_key, size_t n,
                   struct diag *d);

#endif
