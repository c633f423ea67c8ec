/* serve_opts.h: the options of a serving run, parsed one way for every verb
 * that runs one: `strata serve` (cmd_serve.c) and each candidate of
 * `strata plan` (cmd_plan.c), so a plan's candidate is the serve run with
 * the same options.  Messages start "strata VERB: " (struct serve_args.verb).
 * Only sim/cli includes this header. */
#ifndef STRATA_SERVE_OPTS_H
#define STRATA_SERVE_OPTS_H

#include <stddef.h>
#include <stdint.h>

#include "serve.h"

/* Defaults where neither the command line nor the stack's `serving:` block
 * says: the scheduler's are vLLM's (serve_sched_defaults, serve.c), and so
 * is gpu_memory_utilization 0.9 (vllm/engine/arg_utils.py EngineArgs).
 * The workload's: 1000 requests of 1024 in, 128 out (vLLM's
 * benchmarks/benchmark_serving.py --num-prompts and its random dataset's
 * --random-input-len / --random-output-len), seed 1. */
#define SERVE_DEF_UTIL 0.9
#define SERVE_DEF_REQUESTS 1000
#define SERVE_DEF_ISL "1024"
#define SERVE_DEF_OSL "128"

/* The options as given (NULL: not given). */
struct serve_args {
    const char *verb;           /* "serve", "plan": for the messages */
    const char *hw, *model, *stack, *tp, *dtype, *weights;
    const char *rate, *conc, *file, *nreq, *isl, *osl, *seed;
    const char *sched, *seqs, *tokens, *block, *chunked, *capacity, *util, *msteps, *goodput, *timeline, *disagg, *kvbw;
    const char *spec_draft, *spec_k, *spec_accept;  /* speculative decoding (serve only) */
    const char *prefix, *pcache;                    /* --shared-prefix G:P, --prefix-caching */
    const char *js, *csv;
};

/* "strata VERB: opt: what, got 'got'"; returns 2. */
int serve_opts_err(const struct serve_args *a, const char *opt, const char *what, const char *got);
/* A count option: 0 with *out (left alone when v is NULL), or 2. */
int serve_opts_count(const struct serve_args *a, const char *opt, const char *v, unsigned min, unsigned max,
                     uint32_t *out);
/* The workload options (arrivals, counts, lengths, seed) into *w and its
 * description into label[n].  0, or 2. */
int serve_opts_workload(const struct serve_args *a, struct serve_workload *w, char *label, size_t n);
/* The scheduler: the defaults, then the stack's serving: block (stk may be
 * NULL), then the options; max_pos: the model's max_position_embeddings.
 * 0, or 2. */
int serve_opts_sched(const struct serve_args *a, const struct stack *stk, uint64_t max_pos,
                     struct serve_sched *s, double *util);
/* The steps' templates: the dtype, the weights' format (--weights), the
 * split (--tp) and the stack's kernels and attention for each phase.  0,
 * or 2. */
int serve_opts_step(const struct serve_args *a, const struct stack *stk, struct llm_step *pre,
                    struct llm_step *dec);
/* The requests of workload w: the requests file's (its first --requests)
 * or generated, each within the model c's positions; sets
 * sch->concurrency.  0 with *q (free with serve_reqs_free), or 1 after the
 * message. */
int serve_opts_reqs(const struct serve_args *a, const struct serve_workload *w, const struct llm_config *c,
                    struct serve_sched *sch, struct serve_reqs *q);

#endif
