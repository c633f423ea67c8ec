/* collbench.h: one collective over the first n devices of a system, timed
 * as nccl-tests times it (`strata bench collective`, and `validate` rows of
 * kind collective).
 *
 * collbench_run() builds a trace in memory (one collective op per rank, a
 * group of the system's devices 0 .. n-1 in order), runs it on the system
 * and reports the time with nccl-tests' bandwidths: algbw = size / time,
 * busbw = algbw x the collective's bus factor (coll_busbw_factor).
 */
#ifndef STRATA_COLLBENCH_H
#define STRATA_COLLBENCH_H

#include <stdint.h>

#include "diag.h"
#include "dtype.h"
#include "system.h"
#include "trace.h"

struct collbench_pt {
    uint64_t bytes;             /* nccl-tests' size */
    double time_s;              /* one collective, start to end on the GPUs */
    double algbw, busbw;        /* bytes/s */
    char how[48];               /* algorithm, protocol and channels it ran with */
};

/* 0, or -1 with *d (too few devices in the system, no path between ranks,
 * a size not divisible by the ranks where it must be). */
int collbench_run(const struct hw_system *sys, enum coll_kind kind, enum coll_algo algo,
                  enum dtype dt, uint32_t nranks, uint64_t bytes,
                  struct collbench_pt *out, struct diag *d);

#endif
