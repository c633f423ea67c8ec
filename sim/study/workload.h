/* workload.h: the workloads of the validation CSVs, one line each:
 * "KIND key=value ..." (docs/validation.md's workload specs): an LLM step
 * (llm), one collective, or one op (gemm, softmax, norm, reduction,
 * elementwise, attention), built as a trace to run. */
#ifndef STRATA_WORKLOAD_H
#define STRATA_WORKLOAD_H

#include <stdint.h>

#include "diag.h"
#include "stack.h"
#include "trace.h"

/* What a metric divides by: elements (element_throughput), or a
 * collective's size and bus factor (busbw). */
struct wl_info {
    double elements;
    double coll_bytes, coll_busfactor;
    uint64_t gpus_per_thread;   /* a collective timed as nccl-tests -g G times it (collbench.h) */
    double model_flops_per_chip;    /* training: the step's FLOPs less the recomputed forward,
                                     * per simulated device (as MaxText and Megatron count MFU) */
    int sustained;                  /* sustained=1: run at the clock the power limit holds
                                     * (run_opts.sustained; any kind of row) */
    const char *stacks_dir;         /* in: where stack=NAME looks (NULL: ROOT/configs/stacks) */
    int has_stack;                  /* out: stack=NAME named one (stack_apply_chip it to the run's
                                     * chip; the builder has applied it to the step) */
    struct stack stack;
};

/* Builds spec's workload into *t (trace_free it) and *wi.  root: the folder
 * model paths are relative to; file and line name the row in messages.
 * stack=NAME (any kind of row) reads configs/stacks/NAME.yaml into
 * wi->stack; an llm step is built as that stack runs it.
 * 0, or -1 with *d ("file:line: spec: what is wrong"). */
int wl_build(const char *spec, const char *root, const char *file, int line, struct trace *t,
             struct wl_info *wi, struct diag *d);

#endif
