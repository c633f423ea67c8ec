/* record.h: what a run did over time, recorded while it runs.
 *
 * Optional (NULL = off).  Records
 *   - slices for groups of waves of each kernel (merged while shorter than
 *     the granularity, so the size stays bounded for long runs), and
 *   - per device, nseries series of an amount (bytes, FLOPs) served in
 *     fixed time buckets; the bucket doubles (pairs merged) whenever the run
 *     outgrows TL_MAX_BUCKETS, so a long run never grows the data without
 *     bound.
 * It knows no hardware: which series is which is the model's business
 * (models/model.h), and sim/out/timeline.h writes it out.  It sits below the
 * models so they can record into it.
 *
 * Ownership: tl_init allocates, tl_free releases.
 */
#ifndef STRATA_RECORD_H
#define STRATA_RECORD_H

#include <stdint.h>

#define TL_MAX_BUCKETS 1024

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
    uint32_t nseries;       /* series per device (the model decides what each is) */
    struct tl_series *series;   /* ndev * nseries */
    struct tl_slice *slices;
    uint32_t nslices, cap;
};

void tl_init(struct timeline *tl, uint32_t ndev, uint32_t nseries, uint64_t gran_ps);
void tl_free(struct timeline *tl);
/* Series which (< nseries) of a device; models/model.h numbers them
 * (level index, TL_SERIES_MATRIX, TL_SERIES_VECTOR). */
struct tl_series *tl_series(struct timeline *tl, uint32_t dev, unsigned which);
/* Spread amount uniformly over [t0, t1) into the series' buckets. */
void tl_add(struct timeline *tl, struct tl_series *s, uint64_t t0, uint64_t t1, double amount);
/* A group of waves of one kernel ran on units SMs over [start, end). */
void tl_waves(struct timeline *tl, uint32_t dev, uint32_t op, uint32_t kern, uint64_t wave0,
              uint64_t wave1, uint32_t units, uint64_t start_ps, uint64_t end_ps);

#endif
