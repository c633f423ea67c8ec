/* serve.h: `strata serve`, a request-level discrete-event simulation of an
 * LLM serving engine on top of the op-level one (docs/serving.md).
 *
 * Requests arrive (Poisson at a rate, a closed loop of a fixed number of
 * clients, or a trace file), wait in a FCFS queue, and are run by an engine
 * that executes one step at a time, as vLLM's does: each step the scheduler
 * picks the sequences and the tokens of each (serve.c), the step's time is
 * the op-level simulation of that step's trace on the hardware (serve_step.c,
 * cached by a bucketed shape), and at its end every sequence that finished
 * its prompt or decoded a token advances.  The KV cache is paged: a block
 * allocator of sched.kv_blocks blocks of block_size tokens; a sequence that
 * needs a block when none is free preempts the newest running one, which
 * loses its KV and goes back to the front of the queue to be recomputed.
 *
 * Time is uint64_t picoseconds throughout.  Nothing here is random once the
 * requests are made: the same requests give the same results, byte for
 * byte.  Ownership: serve_reqs_* fill a caller's struct serve_reqs whose
 * array serve_reqs_free releases; serve_steps_init allocates the step
 * cache, serve_steps_free releases it.
 */
#ifndef STRATA_SERVE_H
#define STRATA_SERVE_H

#include <stdint.h>

#include "diag.h"
#include "llm.h"
#include "stack.h"
#include "system.h"

/* ---- the workload (serve_work.c) ---- */

/* A length distribution, as --isl / --osl give it: N, uniform:A..B
 * (integers, both ends included), normal:MU,SIGMA (rounded, clamped to
 * at least 1) or lognormal:MEAN,CV[,MAX] (a log-normal of that mean and
 * coefficient of variation, rounded, at least 1; with MAX, lengths above
 * MAX are drawn again, as a benchmark's length filter drops them, and the
 * log-normal is shifted so that what is kept still has mean MEAN), or
 * gamma:MEAN,CV[,MAX] (a gamma distribution of that mean and coefficient
 * of variation, shape 1/CV^2: a lighter tail than the log-normal's; MAX as
 * for the log-normal, the scale solved so the kept mean is MEAN). */
enum serve_dist_kind { SERVE_FIXED, SERVE_UNIFORM, SERVE_NORMAL, SERVE_LOGNORMAL, SERVE_GAMMA };
struct serve_dist {
    enum serve_dist_kind kind;
    double a, b;                /* the value; the ends; mu and sigma (tokens); mean and CV */
    double max;                 /* lognormal, gamma: the filter's bound (0: none) */
    double mu, sigma;           /* lognormal: the parameters of the log, as solved;
                                 * gamma: its shape and scale, as solved */
};
/* 0 with *out, or -1 with what is wrong in why[n]. */
int serve_dist_parse(const char *text, struct serve_dist *out, char *why, size_t n);

/* How requests arrive. */
enum serve_arrival {
    SERVE_POISSON,              /* exponential gaps at rate req/s from t = 0 */
    SERVE_CLOSED,               /* concurrency clients, each sends its next request when its
                                 * last one finishes (no think time) */
    SERVE_TRACE                 /* the times of a requests file */
};

struct serve_req {
    uint64_t arrival_ps;        /* when it arrives (closed loop: UINT64_MAX until its client's
                                 * previous request finishes) */
    uint32_t input, output;     /* prompt and output tokens (output >= 1) */
    /* results */
    uint64_t first_token_ps;    /* end of the step that produced its first output token */
    uint64_t finish_ps;         /* end of the step that produced its last */
    uint64_t queued_ps;         /* time spent in the waiting queue (before it first ran, and
                                 * after each preemption) */
    uint32_t preemptions;       /* times it lost its KV and went back to the queue */
    uint64_t start_ps;          /* when it first left the queue (with started) */
    int started;
    /* state while it is in the engine */
    uint32_t ctx;               /* tokens whose KV is in the cache */
    uint32_t generated;         /* output tokens produced so far */
    uint32_t blocks;            /* KV blocks it holds (its own: not a cached prefix's) */
    uint64_t queued_since;      /* when it last entered the queue */
    uint32_t group;             /* 1 + its shared prefix's group (serve_sched.prefix_*), or 0 */
    uint32_t shared;            /* blocks of its group's cached prefix it reads (0 or all) */
};

struct serve_reqs {
    struct serve_req *r;        /* n, in arrival order */
    uint32_t n;
};

/* The generated workload: n requests, lengths from isl and osl, arrivals
 * as arrival says (rate for Poisson; closed: the first concurrency at 0),
 * all from one seeded generator (xoshiro256**), so a seed gives the same
 * requests on every machine that rounds libm's log and cos alike. */
struct serve_workload {
    enum serve_arrival arrival;
    double rate;                /* Poisson: requests per second */
    uint32_t concurrency;       /* closed loop: clients */
    uint32_t n;                 /* requests */
    struct serve_dist isl, osl;
    uint64_t seed;
};
/* Fills *out (free with serve_reqs_free). */
void serve_reqs_make(const struct serve_workload *w, struct serve_reqs *out);
/* Reads a requests CSV: a header line `arrival_s,input_tokens,output_tokens`,
 * then one request a line, times non-decreasing, lengths whole numbers >= 1.
 * 0 with *out, or -1 with *d ("file:line: field: what is wrong"). */
int serve_reqs_load(const char *path, struct serve_reqs *out, struct diag *d);
void serve_reqs_free(struct serve_reqs *q);

/* ---- the step times (serve_step.c) ---- */

/* Context and prompt lengths are rounded up to a bucket before a step is
 * simulated: exact to 16, then SERVE_BUCKET_STEPS steps per power of two
 * (17..32 in 2s, 33..64 in 4s, ...): at most 1/8 = 12.5% above the true
 * length, so 10,000 requests cost a few hundred simulations.  The batch is
 * exact. */
#define SERVE_BUCKET_STEPS 8
uint64_t serve_bucket(uint64_t x);

struct serve_entry;
/* The step-time cache: every distinct bucketed shape simulated once. */
struct serve_steps {
    const struct llm_config *model;
    struct llm_step prefill, decode;    /* the steps' templates (types, layout, kernels) */
    const struct hw_system *sys;        /* the hardware the steps run on */
    uint64_t cap_tokens;                /* the KV cache's tokens: a bucketed context is held
                                         * below cap_tokens / batch */
    struct serve_entry *e;              /* open-addressed table, ncap slots */
    uint32_t ncap, nused;
    uint64_t hits, sims;                /* lookups answered from the table; simulations */
    int has_energy;                     /* the chip has a power block: steps carry their energy */
    uint32_t grows;                     /* times the table doubled (rare: starts at 4096) */
    struct serve_steps *draft;          /* speculative decoding's draft model on the same
                                         * hardware, or NULL */
};
/* splitmix64 (Vigna, public domain): adds its increment to *x and returns
 * the mix of the result; seeds the requests' generator and hashes
 * speculative decoding's draws. */
uint64_t serve_splitmix64(uint64_t *x);
void serve_steps_init(struct serve_steps *st, const struct llm_config *model,
                      const struct llm_step *prefill, const struct llm_step *decode,
                      const struct hw_system *sys, uint64_t cap_tokens);
void serve_steps_free(struct serve_steps *st);
/* The time of a step of nd decoding sequences with mean context dctx and
 * np prefilling sequences computing ptok tokens in all, after pctx cached
 * tokens on average; either part may be empty (0 sequences).  A step with
 * both is simulated as its prefill part plus its decode part (llm_step has
 * one phase a step).  0 with *ps and *ej (the energy its devices spent
 * above their idle power, J; 0 on a chip without a power block), or -1
 * with *d (a step that does not build or run). */
int serve_step_time(struct serve_steps *st, uint32_t nd, uint64_t dctx, uint32_t np, uint64_t ptok,
                    uint64_t pctx, uint64_t *ps, double *ej, struct diag *d);
/* The decode part of a speculative step (serve_sched.spec_k = k): the
 * draft model decodes k tokens for each of nd sequences (k of its decode
 * steps), then the model checks them in one pass of k + 1 tokens a
 * sequence after its dctx cached (a prefill chunk's shape: vLLM's
 * scorer runs the proposals as one batch).  0 with *ps and *ej, or -1
 * with *d. */
int serve_spec_time(struct serve_steps *st, uint32_t nd, uint64_t dctx, uint32_t k, uint64_t *ps,
                    double *ej, struct diag *d);

/* ---- the engine (serve.c) ---- */

struct serve_sched {
    int is_static;              /* static batching: a full batch (or the queue drained) runs
                                 * from its prefill to its longest output, no one joins */
    uint32_t max_num_seqs;      /* sequences a step may hold */
    uint32_t max_batched_tokens;/* tokens a step may compute (continuous) */
    int no_evict;               /* continuous: a request is admitted only with the KV blocks of
                                 * its prompt and its whole output free, and holds them from
                                 * then on, so nothing is ever preempted (TensorRT-LLM's
                                 * GUARANTEED_NO_EVICT capacity policy); 0: the blocks are
                                 * taken as the steps need them (vLLM; TRT-LLM's
                                 * MAX_UTILIZATION) */
    uint32_t block_size;        /* tokens a KV block holds */
    int chunked_prefill;        /* prompts split over steps, sharing each step's tokens with
                                 * the decodes (decodes first); else a step is all prompts
                                 * or all decodes (vLLM V0's default) */
    uint32_t scheduler_steps;   /* decode steps one scheduler call runs (vLLM's multi-step
                                 * scheduling; 1: every step is scheduled): a window of decodes
                                 * admits no one, keeps its finished sequences' seats as
                                 * padding and returns their last tokens at its end */
    uint64_t host_step_ps;      /* the engine's CPU time a scheduler call (added to its step:
                                 * not overlapped with the GPU's work) */
    uint64_t host_seq_ps;       /* and a sequence in a step, every step (its output token) */
    uint64_t kv_blocks;         /* blocks in the cache */
    uint32_t spec_k;            /* speculative decoding: draft tokens a step (0: off); the
                                 * draft model's steps are serve_steps.draft's */
    double spec_accept;         /* the chance a draft token is accepted, given the ones before
                                 * it were (0 < a <= 1) */
    uint32_t prefix_groups;     /* shared prefixes: requests of group g (serve_req.group) start
                                 * with the same prefix_tokens tokens (0: none) */
    uint32_t prefix_tokens;
    int prefix_caching;         /* a prefix's full blocks stay cached and later requests of its
                                 * group start after them (vLLM's automatic prefix caching,
                                 * SGLang's radix cache); unused ones are evicted, least
                                 * recently used first, before anyone is preempted */
    uint32_t concurrency;       /* closed loop: clients (0: the arrivals are given) */
    int record;                 /* keep a sample of the engine a step (serve_result.samples,
                                 * for the timeline) */
};

/* The engine at the start of a step (with sched.record). */
struct serve_sample {
    uint64_t t_ps, dur_ps;      /* the step's start and time */
    uint32_t kv_blocks;         /* blocks held */
    uint32_t running, waiting;  /* sequences in the engine; in the queue */
    uint32_t decodes, prefills; /* the step's decoding and prefilling sequences */
    uint32_t tokens;            /* tokens it computes */
};

struct serve_result {
    uint64_t end_ps;            /* when the last request finished */
    uint64_t steps;             /* engine steps */
    uint64_t prefill_steps, decode_steps, mixed_steps;
    uint64_t preemptions;
    uint64_t prefix_hit_tokens;         /* prompt tokens found in the prefix cache */
    uint64_t prefix_evictions;          /* cached prefixes evicted for room */
    uint64_t spec_steps, spec_tokens;   /* speculative: a sequence's verify passes, and the
                                         * tokens they produced */
    uint64_t kv_max_blocks;     /* most blocks held at once */
    double kv_block_ps;         /* blocks held, integrated over time (block x ps) */
    double in_system_ps;        /* requests arrived and not finished, integrated over time */
    uint64_t busy_ps;           /* time the engine ran steps (host time included) */
    uint64_t host_ps;           /* of which the scheduler's CPU time */
    double step_j;              /* the steps' energy above the devices' idle power, J */
    struct serve_sample *samples;   /* with sched.record: a step each (serve_result_free) */
    uint64_t nsamples, cap_samples;
};
void serve_result_free(struct serve_result *r);

/* Prefill/decode disaggregation (DistServe, Splitwise, Dynamo): np
 * prefill instances and nd decode instances, each an engine of sched s.
 * Requests go round-robin to the prefill instances, which run their
 * prompts and produce the first token; each prompt's KV then moves to a
 * decode instance (round-robin in the order they are ready) taking
 * xfer_ps_per_token a prompt token (a device's KV bytes a token over its
 * link: the TP ranks send their shares in parallel); the decode instances
 * run the rest of each output (a request of one output token ends in its
 * prefill).  Each pool instance is a serve_run of its share (the pools do
 * not push back on each other: the decode pool's KV cache is taken as
 * able to accept what arrives, and preempts if not).  q's results are the
 * whole requests'; *res sums the instances' (end_ps the last finish).
 * 0, or -1 with *d. */
int serve_run_disagg(const struct serve_sched *s, struct serve_reqs *q, struct serve_steps *st, uint32_t np,
                     uint32_t nd, double xfer_ps_per_token, struct serve_result *res, struct diag *d);

/* The scheduler a run starts from (is_static, max_num_seqs, block_size,
 * chunked_prefill, max_batched_tokens, scheduler_steps (1), host_step_ps
 * and host_seq_ps (0); kv_blocks and concurrency 0):
 * vLLM's defaults (serve.c), then the stack's serving: block (stk may be
 * NULL).  max_pos: the model's max_position_embeddings.  *tokens_given
 * (may be NULL): the stack set max_batched_tokens, so a later change of
 * chunked_prefill keeps it (else serve_sched_tokens gives it anew). */
void serve_sched_defaults(const struct stack *stk, uint64_t max_pos, struct serve_sched *s, int *tokens_given);
/* vLLM's default tokens a step: 8192 with chunked prefill (V1), else
 * max(max_pos, 2048) (V0). */
uint32_t serve_sched_tokens(int chunked_prefill, uint64_t max_pos);
/* The steps' templates of a run: weights, activations and KV in dtype, tp
 * ranks, the fused kernels and flash attention unless the stack (may be
 * NULL) says otherwise; *pre a prefill, *dec a decode. */
void serve_step_templates(const struct stack *stk, enum dtype dtype, uint32_t tp, struct llm_step *pre,
                          struct llm_step *dec);

/* Runs every request of q through the engine: fills their results and *res.
 * 0, or -1 with *d (a request that can never fit the cache or a step, a
 * step that does not simulate). */
int serve_run(const struct serve_sched *s, struct serve_reqs *q, struct serve_steps *st,
              struct serve_result *res, struct diag *d);

#endif
