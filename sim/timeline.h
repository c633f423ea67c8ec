/* timeline.h: what a run did over time, for Perfetto / chrome://tracing.
 *
 * Optional (NULL = off).  Records
 *   - slices for groups of waves of each kernel (merged while shorter than
 *     the granularity, so the size stays bounded for long runs), and
 *   - per device and level, the bytes (or FLOPs for the pipes) served in
 *     fixed time buckets; the bucket doubles (pairs merged) whenever the run
 *     outgrows TL_MAX_BUCKETS, so a long run never grows the file without
 *     bound.
 * Op slices, dependency arrows and names come from the trace and the run
 * result when the file is written.  tl_write() writes Chrome Trace Event
 * JSON atomically: one process per device, a thread per stream for ops and
 * one for their waves, counter tracks per level (bytes/s and % of peak).
 *
 * Ownership: tl_init allocates, tl_free releases.
 */
#ifndef STRATA_TIMELINE_H
#define STRATA_TIMELINE_H

#include <stdint.h>

#include "cfg.h"
#include "diag.h"
#include "model.h"
#include "run.h"
#include "trace.h"

#define TL_MAX_BUCKETS 1024
#define TL_SERIES_PER_DEV (HW_MAX_LEVELS + 2) /* levels (config order), then matrix and vector pipe */
#define TL_SERIES_MATRIX HW_MAX_LEVELS
#define TL_SERIES_VECTOR (HW_MAX_LEVELS + 1)

struct tl_series {
    double capacity_per_s;  /* peak of the resource, for the % counter (0 = unknown) */
    double *amount;         /* amount served per bucket */
    uint32_t n;             /* buckets in use */
    uint32_t cap;
};

struct tl_slice {
    uint64_t start_ps, end_ps;
    uint32_t dev, op;
    uint32_t kern;          /* kernel of the op */
    uint64_t wave0, wave1;  /* waves [wave0, wave1) */
    uint32_t units;         /* SMs busy */
};

struct timeline {
    uint64_t gran_ps;       /* wave slices shorter than this are merged */
    uint64_t bucket_ps;     /* current bucket width */
    uint32_t ndev;
    struct tl_series *series;   /* ndev * TL_SERIES_PER_DEV */
    struct tl_slice *slices;
    uint32_t nslices, cap;
};

void tl_init(struct timeline *tl, uint32_t ndev, uint64_t gran_ps);
void tl_free(struct timeline *tl);
/* Series of a device (level index or TL_SERIES_MATRIX / TL_SERIES_VECTOR). */
struct tl_series *tl_series(struct timeline *tl, uint32_t dev, unsigned which);
/* Spread amount uniformly over [t0, t1) into the series' buckets. */
void tl_add(struct timeline *tl, struct tl_series *s, uint64_t t0, uint64_t t1, double amount);
/* A group of waves of one kernel ran on units SMs over [start, end). */
void tl_waves(struct timeline *tl, uint32_t dev, uint32_t op, uint32_t kern, uint64_t wave0,
              uint64_t wave1, uint32_t units, uint64_t start_ps, uint64_t end_ps);
/* Write the Chrome Trace Event JSON. */
int tl_write(const struct timeline *tl, const struct hw_config *cfg, const struct trace *t,
             const struct run_result *r, const char *path, struct diag *d);

#endif
