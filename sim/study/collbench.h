/* collbench.h: one collective over the first n devices of a system, timed
 * as nccl-tests times it (`strata bench collective`, and `validate` rows of
 * kind collective).
 *
 * collbench_run() builds a trace in memory (one collective op per rank, a
 * group of the system's devices 0 .. n-1 in order), runs it on the system
 * and reports the time with nccl-tests' bandwidths: algbw = size / time,
 * busbw = algbw x the collective's bus factor (coll_busbw_factor).
 *
 * nccl-tests times back-to-back iterations; with -g G one host thread
 * issues the collective for each of its G GPUs.  strata times an
 * iteration as the thread's issue time (G x the chip's
 * collectives.call_overhead_us) plus the collective on the GPUs.  The sum,
 * not the larger of the two, is what the 8x A100 sweep (-g 8) shows: its
 * 32 KiB to 512 KiB rows rise by the simulated GPU time over a fixed floor
 * (docs/collectives.md).  Inside CUDA graphs (gpt-fast) no call is issued
 * and a trace's collectives pay only the GPUs' time.
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
    double time_s;              /* one iteration as nccl-tests times it: host_s + gpu_s */
    double gpu_s;               /* the simulated collective, launch to end on the GPUs */
    double host_s;              /* the host thread's issue time */
    double algbw, busbw;        /* bytes/s */
    char how[48];               /* algorithm, protocol and channels it ran with */
};

/* 0, or -1 with *d (too few devices in the system, no path between ranks,
 * a size not divisible by the ranks where it must be). */
int collbench_run(const struct hw_system *sys, enum coll_kind kind, enum coll_algo algo,
                  enum dtype dt, uint32_t nranks, uint32_t gpus_per_thread, uint64_t bytes,
                  struct collbench_pt *out, struct diag *d);

#endif
