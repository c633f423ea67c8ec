/* sweep.h: design-space sweeps, many config variants x several traces.
 *
 * A sweep varies config keys (cfg.h overrides) over lists or ranges:
 *     dram.bandwidth=1TB/s..8TB/s:x2          geometric: 1, 2, 4, 8 TB/s
 *     dram.bandwidth=1TB/s..4TB/s:+0.5TB/s    linear steps
 *     dram.bandwidth=1TB/s..8TB/s:8           8 points, evenly spaced
 *     dram.bandwidth=1TB/s..8TB/s:4g          4 points, geometrically spaced
 *     l2.capacity=25MiB,50MiB,100MiB          a list
 * The points are the Cartesian product of the keys (the last key varying
 * fastest), or with zip the i-th value of every key together.  Every point
 * runs every trace; a task is one (point, trace) pair, numbered
 * point * ntraces + trace.
 *
 * Rows are formatted here, one line of CSV each, so a threaded run, a
 * shard, a merge of shards and the MPI driver all write the same bytes.
 * Every point's config is loaded (and so checked) before anything runs:
 * a bad value anywhere fails the sweep with nothing written.
 */
#ifndef STRATA_SWEEP_H
#define STRATA_SWEEP_H

#include <stdint.h>

#include "cfg.h"
#include "diag.h"
#include "trace.h"

#define SWEEP_MAX_KEYS 8
#define SWEEP_MAX_POINTS 10000000u
#define SWEEP_MAX_TRACES 16

struct sweep_key {
    char key[96];
    unsigned nvalues;
    char (*values)[48];         /* as they go into --set: "2TB/s" */
    double *num;                /* their numbers in the key's unit (for plots) */
};

struct sweep {
    char hw[512];               /* --hw */
    struct cfg_sets base;       /* --set and --hw-overlay, applied to every point */
    unsigned nkeys;
    struct sweep_key key[SWEEP_MAX_KEYS];
    int zip;
    uint64_t npoints;
    unsigned ntraces;
    char trace_path[SWEEP_MAX_TRACES][512];
};

/* Adds one --vary KEY=SPEC.  Errors name the spec. */
int sweep_add_vary(struct sweep *s, const char *spec, struct diag *d);
/* Counts the points (checks zip lengths and the point limit). */
int sweep_finish(struct sweep *s, struct diag *d);
void sweep_free(struct sweep *s);

struct prog;

/* What to run: tasks first, first + step, first + 2 step ... below ntasks
 * (a shard i/N is first = i, step = N over points; see sweep_run). */
struct sweep_opts {
    unsigned threads;           /* >= 1 */
    unsigned shard, nshards;    /* points p with p % nshards == shard */
    struct prog *progress;      /* the runs done on this progress line (progress.h), drawn
                                   by the calling thread while workers run, or NULL */
};

/* Runs the shard's points and returns their rows (CSV lines, task order)
 * in *rows (a malloc'ed string, NUL-ended) and the header in *header.
 * Returns 0, or -1 with *d filled and nothing allocated. */
int sweep_run(const struct sweep *s, const struct sweep_opts *o, char **header, char **rows,
              struct diag *d);

/* Writes a full or shard CSV (atomically: a temporary file renamed).  A
 * shard file starts with "# shard i/N". */
int sweep_write_csv(const char *path, const struct sweep *s, const struct sweep_opts *o,
                    const char *header, const char *rows, struct diag *d);

/* Merges shard CSVs into the CSV the unsharded sweep writes.  Checks that
 * the shards are of one sweep, each given once, all present. */
int sweep_merge(const char *const *paths, unsigned n, const char *out, struct diag *d);

/* Index of key i's value at point p. */
unsigned sweep_value_index(const struct sweep *s, unsigned i, uint64_t p);

#endif
