/* stack.h: a software stack as data (configs/stacks/NAME.yaml, docs/stacks.md).
 *
 * The chip config says what the hardware can do; a stack says what the
 * software that drives it does with it: which kernels an LLM step becomes
 * (the trace builder's kernel structure), which attention kernel runs in
 * prefill and in decode, which matrix path its GEMM kernels issue on and
 * what share of it they reach, what its host loop costs (per kernel, per
 * step) and the GPU-side gap between its kernels, and what one collective
 * call costs.  Every value a stack file gives names its source (the file's
 * `sources:` mapping); a value it leaves out keeps the chip's or the
 * builder's default, so a stack file says only what differs.
 *
 * A stack is applied twice: to the step the trace builder writes
 * (stack_apply_llm) and to the copy of the chip config the run uses
 * (stack_apply_chip).
 */
#ifndef STRATA_STACK_H
#define STRATA_STACK_H

#include <stddef.h>

#include "cfg.h"
#include "cfgset.h"
#include "diag.h"
#include "llm_step.h"

#define STACK_NAME_MAX 64
#define STACK_MAX_FAMILIES 4

struct stack {
    char name[STACK_NAME_MAX];
    char path[512];
    char runs_on[STACK_MAX_FAMILIES][32];   /* the chip families it runs on ("gpu") */
    unsigned nruns_on;
    /* the trace builder */
    int has_kernels;
    enum llm_framework kernels;             /* the kernels one layer becomes */
    long prefill_ubatch;                    /* prompt tokens a forward pass takes at most
                                             * (llama.cpp's n_ubatch); -1 not given */
    int has_prefill_attn, has_decode_attn;
    enum attn_impl prefill_attn, decode_attn;
    /* the run (< 0: not given, the chip's value stays) */
    double kernel_dispatch_s;               /* host CPU time to issue one kernel */
    double step_s;                          /* host CPU time before a step's first kernel */
    double launch_gap_s;                    /* the GPU-side gap between its kernels */
    double coll_call_s;                     /* host cost of one collective call */
    int coll_one_ring;                      /* collectives.rings: one (1), all_links (0), -1 unset */
    int gemm_path;                          /* matrix path its GEMMs issue on (enum matrix_path); MP_COUNT:
                                             * the chip's own newest (gemm.path not given); -1: no gemm */
    double gemm_issue;                      /* share of that path's rate they reach (with gemm_path) */
    double gemm_issue_by[MP_COUNT];         /* or, given per chip generation (its own newest
                                             * matrix path, stack_native_path): the share on
                                             * such a chip; 0 where not given, gemm_issue < 0 */
    int gemm_acc16;                         /* 16-bit GEMMs accumulate in 16 bits (cuBLAS
                                             * CUBLAS_COMPUTE_16F): the chip's rate for it */
    long gemm_deq_kernel_min_m;             /* quantised weights dequantised by a kernel of
                                             * their own for GEMMs with at least this many
                                             * rows (llama.cpp: above MMQ's 32); -1 not given */
    double gemm_matvec_inflight;            /* load bytes a unit keeps in flight in the library's
                                             * matrix-vector kernel for 16-bit weights (decode
                                             * GEMMs of a few rows); -1 not given */
    /* the serving engine's scheduler (the optional `serving:` block; `strata serve`,
     * docs/serving.md); each < 0 where the file does not give it */
    int serve_static;                       /* 1: static batching, 0: continuous */
    long serve_max_num_seqs;                /* sequences a step may hold */
    long serve_max_batched_tokens;          /* tokens a step may compute */
    long serve_block_size;                  /* tokens a KV-cache block holds */
    int serve_no_evict;                     /* 1: capacity_policy guaranteed_no_evict (a
                                             * request's whole KV taken at admission), 0:
                                             * max_utilization */
    int serve_chunked_prefill;              /* 1: prompts split over steps, sharing them
                                             * with the decodes */
    long serve_scheduler_steps;             /* decode steps a scheduler call runs (vLLM's
                                             * --num-scheduler-steps) */
    double serve_host_step_s;               /* the engine's CPU time a scheduler call */
    double serve_host_seq_s;                /* and a sequence in a step, every step */
};

/* the most bytes in flight a unit a stack may give (gemm.float_matvec_inflight_bytes_per_unit) */
#define STACK_MAX_INFLIGHT (1 << 24)

/* A chip's generation as a stack's GEMM efficiency names it: the matrix
 * path it issues at its full rate, the newest of them where several are
 * (Hopper: wgmma; Ampere and Ada: mma_sync; Blackwell: tcgen05). */
enum matrix_path stack_native_path(const struct hw_config *c);
/* A stack's number by its key as the file spells it ("host.launch_gap_us",
 * "gemm.issue_efficiency", "gemm.issue_efficiency.wgmma", ...), in the
 * file's units, into *v: 0, or -1 with *d (a key the fitter cannot take,
 * or a value the stack does not give).  stack_set_value writes one. */
int stack_get_value(const struct stack *s, const char *key, double *v, struct diag *d);
int stack_set_value(struct stack *s, const char *key, double v, struct diag *d);
/* The sets among sets that name a stack value ("stack.KEY=V" or "=xF",
 * cfg_set_is_stack) applied to s: 0, or -1 with *d. */
int stack_apply_sets(struct stack *s, const struct cfg_sets *sets, struct diag *d);
/* Reads a stack file.  0, or -1 with *d ("file:line: field: what is wrong"). */
int stack_load(const char *path, struct stack *s, struct diag *d);
/* Reads dir/NAME.yaml; an unknown name is an error naming the stacks dir
 * holds. */
int stack_find(const char *dir, const char *name, struct stack *s, struct diag *d);
/* Applies the stack to chip config c (the run's copy): -1 with *d if the
 * stack cannot run there (another family, a GEMM path the chip lacks),
 * naming the stacks in dir that can (dir NULL: not named). */
int stack_apply_chip(const struct stack *s, struct hw_config *c, const char *dir, struct diag *d);
/* Applies the stack to the step the trace builder writes: its kernel
 * structure unless framework_given, its attention for the step's phase
 * unless attn_given. */
void stack_apply_llm(const struct stack *s, struct llm_step *st, int framework_given, int attn_given);

#endif
