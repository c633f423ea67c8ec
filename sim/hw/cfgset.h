/* cfgset.h: overrides of config values.
 *
 * `--set KEY=VALUE` on the command line, or the lines of an overlay file
 * (`--hw-overlay`, written by `strata calibrate`).  KEY names a value of
 * the YAML by its path, with a level addressed by its name and the unit
 * suffix left out when VALUE carries a unit: `dram.bandwidth=4.8TB/s`,
 * `l2.capacity=100MiB`, `clock=1.98GHz`,
 * `dram.efficiency.bandwidth_fraction=0.9`,
 * `compute.matrix_flops_per_cycle_per_unit.fp8_e4m3=8192`.  A VALUE `xF`
 * scales what the file (and the overrides before it) give: `l2.bandwidth=x2`
 * whatever its unit, `compute.matrix_flops_per_cycle_per_unit=x2` every
 * dtype's rate; the report's what-ifs are such overrides.  The value is
 * written into the parsed file before it is checked, so an override passes
 * every check a value in the file does; an error in one names it.
 */
#ifndef STRATA_CFGSET_H
#define STRATA_CFGSET_H

#include <stddef.h>

#include "chip.h"
#include "diag.h"

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
 * loaded with it).  A later set of the same key replaces the earlier,
 * unless it is relative (`xF`): that one scales the earlier's value. */
int cfg_sets_add(struct cfg_sets *s, const char *kv, const char *origin, struct diag *d);
/* Adds each "KEY=VALUE" of list, separated by spaces (a what-if's). */
int cfg_sets_add_list(struct cfg_sets *s, const char *list, const char *origin, struct diag *d);
/* That list as a command line writes it: "--set A=x2 --set B=x0.5", into out. */
void cfg_sets_list_cli(const char *list, char *out, size_t n);
/* Adds every `KEY: VALUE` of an overlay file's `set:` mapping. */
int cfg_sets_load_overlay(struct cfg_sets *s, const char *path, struct diag *d);
/* The number a key (as --set names it) has in the chip config at path, and
 * the key with its unit suffix ("dram.efficiency.loaded_latency_ns"). */
int cfg_read_value(const char *path, const char *key, double *value, char *full_key, size_t n,
                   struct diag *d);

/* For the loaders (sets may be NULL). */
struct yconf;
/* Writes sets into the chip config's tree under root: 0, or -1 with *c->d.
 * Their nodes get line -(k + 1) for override k, so that a later check that
 * fails on one can name it (cfg_sets_name_error).  A set of a system's
 * links (`links.NAME...`) is left for cfg_sets_apply_links when in_system;
 * otherwise `links.NAME=off` takes the chip's peer link level NAME out of
 * its levels (after every other set), so the system the chip implies joins
 * its devices through the host, and any other `links.` set is refused. */
int cfg_sets_apply(struct yconf *c, int root, const struct cfg_sets *sets, int in_system);
/* Whether s sets a system file's links: `links.NAME.KEY`, NAME a link's
 * name (or, without one, its level), KEY bandwidth, latency or
 * efficiency.bandwidth_fraction; or `links.NAME=off` (`on` is no change). */
int cfg_set_is_links(const struct cfg_set *s);
/* A set of a software stack's value ("stack.host.launch_gap_us=8",
 * sim/study/stack.h): not the chip config's; the run applies it to the
 * stack a row names (stack_apply_sets). */
int cfg_set_is_stack(const struct cfg_set *s);
/* The first of sets that is a stack's (stack.KEY), or NULL. */
const struct cfg_set *cfg_sets_first_stack(const struct cfg_sets *sets);
/* Writes the sets of a system's links into the system file's tree under
 * root, into every link (links[i]) named NAME, or, when none is, every
 * link of level NAME (off: takes those links out of the tree): 0, or -1
 * with *c->d (a NAME no link has is an error that lists the links). */
int cfg_sets_apply_links(struct yconf *c, int root, const struct cfg_sets *sets);
/* An error at such a line: names the override (--set KEY=VALUE, or the
 * overlay's FILE:LINE) as its file, line 0. */
void cfg_sets_name_error(struct diag *d, const struct cfg_sets *sets);
/* The variant's name, chip[key=value,key=value], into h->variant ("" without sets). */
void cfg_sets_name_variant(struct hw_config *h, const struct cfg_sets *sets);

#endif
