/* workload.h: the workloads of the validation CSVs, one line each:
 * "KIND key=value ..." (docs/validation.md's workload specs): an LLM step
 * (llm), one collective, or one op (gemm, softmax, norm, reduction,
 * elementwise, attention), built as a trace to run. */
#ifndef STRATA_WORKLOAD_H
#define STRATA_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "stack.h"
#include "trace.h"

/* What a metric divides by: elements (element_throughput), or a
 * collective's size and bus factor (busbw). */
struct wl_info {
    double elements;
    double samples;                 /* an llm row's sequences (images, for a vision encoder):
                                     * samples_throughput's count */
    double coll_bytes, coll_busfactor;
    uint64_t gpus_per_thread;   /* a collective timed as nccl-tests -g G times it (collbench.h) */
    double model_flops_per_chip;    /* training: the step's FLOPs less the recomputed forward,
                                     * per simulated device (as MaxText and Megatron count MFU) */
    int sustained;                  /* sustained=1: run at the clock the power limit holds
                                     * (run_opts.sustained; any kind of row) */
    double clock_mhz;               /* clock_mhz=F: the SM clock the measurement read (0: the
                                     * chip's own); the chip runs at F (cfg_at_clock) */
    const char *stacks_dir;         /* in: where stack=NAME looks (NULL: ROOT/configs/stacks) */
    const char *stack_override;     /* in: a row that names a stack runs this one instead (NULL:
                                     * its own; validate --leave-one-stack-out) */
    int has_stack;                  /* out: stack=NAME named one (stack_apply_chip it to the run's
                                     * chip; the builder has applied it to the step) */
    struct stack stack;
};

/* A spec's pairs, as wl_build reads them; for other readers of specs (the
 * serving CSV's, serve_val.c) so that every spec follows one rule: keys
 * and values without spaces, every key used once (wl_spec_done). */
#define WL_SPEC_MAX 16
struct wl_spec_kv {
    char key[32];
    char val[256];
};
struct wl_spec {
    const char *file;
    int line;
    struct wl_spec_kv kv[WL_SPEC_MAX];
    int n;
    int used[WL_SPEC_MAX];
    struct diag *d;
};
/* "KIND k=v k=v": the kind into kind[kn], the pairs into *s.  0, or -1 with *d. */
int wl_spec_parse(struct wl_spec *s, const char *spec, char *kind, size_t kn, const char *file, int line,
                  struct diag *d);
/* key's value (marked used), or NULL. */
const char *wl_spec_get(struct wl_spec *s, const char *key);
/* An integer >= min (required, or def); a number >= 0 (or def); a dtype
 * (required).  0, or -1 with *d. */
int wl_spec_u64(struct wl_spec *s, const char *key, int required, uint64_t def, uint64_t min, uint64_t *out);
int wl_spec_num(struct wl_spec *s, const char *key, double def, double *out);
int wl_spec_dtype(struct wl_spec *s, enum dtype *out);
/* -1 with *d naming the first key nothing asked for, else 0. */
int wl_spec_done(struct wl_spec *s);

/* Builds spec's workload into *t (trace_free it) and *wi.  root: the folder
 * model paths are relative to; file and line name the row in messages.
 * stack=NAME (any kind of row) reads configs/stacks/NAME.yaml into
 * wi->stack; an llm step is built as that stack runs it.
 * 0, or -1 with *d ("file:line: spec: what is wrong"). */
int wl_build(const char *spec, const char *root, const char *file, int line, struct trace *t,
             struct wl_info *wi, struct diag *d);

#endif
