/* opspec.h: ops on the command line ("one-line ops", traces/README.md):
 * `run --op gemm:m=8192,n=8192,k=8192` and `gen gemm:...` without a
 * hand-written trace.
 *
 * Each spec is KIND:key=value,key=value.  KIND is a trace op kind (gemm,
 * attention, elementwise, softmax, ..., collective) or a collective by name
 * (all_reduce: kind collective with "collective": "all_reduce"); the keys
 * are the trace format's own fields of that kind (traces/README.md), and
 * the specs become a trace's text, loaded by the trace loader, so every
 * check and message is the loader's.  What --op adds to the format:
 *   - dtype is bf16 where not given (memcpy and generic keep the format's
 *     int8: their dtype only sizes an element);
 *   - a bytes= value may carry a size unit (1GiB, 64MB);
 *   - id, kind, deps and device are set by --op, and a collective's group
 *     by ranks=N (devices gpu0 .. gpuN-1);
 *   - the ops run one after another: op i depends on op i-1.  Without a
 *     collective everything runs on one device (gpu0).  With one, the trace
 *     has as many devices as the widest collective's ranks and every op
 *     runs on each of them (an SPMD step: each device does the GEMM, then
 *     they all-reduce), a collective on its own ranks only.
 * Ids are op1, op2, ... (op1.gpu0, op1.gpu1, ... with several devices);
 * an op's name is its spec as typed (when it is printable ASCII and fits).
 *
 * A problem is reported as "--op SPEC: field: what is wrong" (who is the
 * "--op" of that, "gen" for strata gen), with no line.
 *
 * Ownership: opspec_load fills a trace the caller frees with trace_free.
 */
#ifndef STRATA_OPSPEC_H
#define STRATA_OPSPEC_H

#include <stdint.h>

#include "diag.h"
#include "trace.h"

#define OPSPEC_MAX 64           /* specs in one trace */
#define OPSPEC_RANKS_MAX 1024   /* a collective's ranks (each rank's op lists the group) */

struct opspec {
    const char *who;                /* "--op" or "gen": how a diagnostic names a spec */
    const char *const *specs;       /* as typed */
    unsigned n;                     /* 1 .. OPSPEC_MAX */
    uint32_t ranks;                 /* a collective's ranks when it gives none (the devices of
                                     * --hw's system file); 0: it must give ranks= */
    char path[512];                 /* the trace's path ("--op SPEC --op SPEC"): opspec_load */
};

/* The trace of the specs: 0, or -1 with *d naming the spec. */
int opspec_load(struct opspec *in, struct trace *out, struct diag *d);

/* A diagnostic about the trace opspec_load made (one whose file is its
 * path, and whose line is an op's) rewritten to name that op's spec; any
 * other is left as it is. */
void opspec_diag(const struct opspec *in, struct diag *d);

#endif
