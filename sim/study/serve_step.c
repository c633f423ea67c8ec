/* serve_step.c: the time of a serving engine's step (serve.h), from the
 * op-level simulation of the step's trace: llm_build writes the step (the
 * same builder `gen llm` uses), run_system_opts runs it on the hardware (as
 * `run` does), and the time is kept under the step's bucketed shape so each
 * shape is simulated once.
 *
 * What a step is, as the builder can write it (llm_step.h has one phase a
 * step):
 *   decode   nd sequences, one new token each, all at the mean context of
 *            the batch (rounded up to its bucket): the attention reads the
 *            same KV bytes in total as the real, ragged batch, spread evenly;
 *   prefill  np sequences of ceil(ptok / np) new tokens each (ptok rounded
 *            up to its bucket) after the mean cached context (a later chunk
 *            of a prompt, or a preempted sequence's recompute);
 *   mixed    (chunked prefill) the prefill part plus the decode part, each
 *            simulated alone: an upper bound, since the real fused step
 *            reads the weights once, not twice (docs/serving.md).
 * Deliberately ignored: the attention's raggedness (a batch's longest
 * sequence can set a kernel's tail), sampling's cost beyond the builder's
 * sampling op, and the CPU scheduler's own time beyond the stack's step_us.
 */
#include "serve.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "run.h"

/* A cached shape and its time.  phase 0 marks an empty slot. */
struct serve_entry {
    uint32_t phase;             /* 1 + enum llm_phase */
    uint32_t n;                 /* sequences */
    uint64_t tokens;            /* prefill: new tokens in all (bucketed); decode: 0 */
    uint64_t ctx;               /* cached context a sequence (bucketed) */
    uint64_t ps;                /* the step's simulated time */
    double ej;                  /* its energy above idle, J */
};

#define SERVE_STEPS_CAP0 4096u  /* slots at start: a few hundred shapes fill a tenth */

uint64_t serve_bucket(uint64_t x)
{
    if (x <= 16)
        return x;
    unsigned p = 63u - (unsigned)__builtin_clzll(x);
    uint64_t step = (UINT64_C(1) << p) / SERVE_BUCKET_STEPS;
    return (x + step - 1) / step * step;
}

void serve_steps_init(struct serve_steps *st, const struct llm_config *model,
                      const struct llm_step *prefill, const struct llm_step *decode,
                      const struct hw_system *sys, uint64_t cap_tokens)
{
    memset(st, 0, sizeof *st);
    st->model = model;
    st->prefill = *prefill;
    st->decode = *decode;
    st->sys = sys;
    st->cap_tokens = cap_tokens;
    st->has_energy = sys->chip.has_power;
    st->ncap = SERVE_STEPS_CAP0;
    st->e = sim_xcalloc(st->ncap, sizeof *st->e);
}

void serve_steps_free(struct serve_steps *st)
{
    free(st->e);
    st->e = NULL;
}

static uint64_t key_hash(uint32_t phase, uint32_t n, uint64_t tokens, uint64_t ctx)
{
    uint64_t h = (uint64_t)phase * UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)n * UINT64_C(0xc2b2ae3d27d4eb4f);
    h ^= tokens * UINT64_C(0x165667b19e3779f9) + (h << 6) + (h >> 2);
    h ^= ctx * UINT64_C(0xd6e8feb86659fd93) + (h << 6) + (h >> 2);
    return h ^ (h >> 29);
}

static struct serve_entry *slot(struct serve_entry *e, uint32_t ncap, uint32_t phase, uint32_t n,
                                uint64_t tokens, uint64_t ctx)
{
    uint32_t i = (uint32_t)key_hash(phase, n, tokens, ctx) & (ncap - 1);
    while (e[i].phase != 0 &&
           !(e[i].phase == phase && e[i].n == n && e[i].tokens == tokens && e[i].ctx == ctx))
        i = (i + 1) & (ncap - 1);
    return &e[i];
}

/* Doubles the table when it is half full (linear probing stays short). */
static void grow(struct serve_steps *st)
{
    uint32_t ncap = st->ncap * 2;
    struct serve_entry *e = sim_xcalloc(ncap, sizeof *e);
    for (uint32_t i = 0; i < st->ncap; i++)
        if (st->e[i].phase != 0)
            *slot(e, ncap, st->e[i].phase, st->e[i].n, st->e[i].tokens, st->e[i].ctx) = st->e[i];
    free(st->e);
    st->e = e;
    st->ncap = ncap;
    st->grows++;
}

/* Simulates one step of the template s with n sequences of new tokens
 * each after ctx cached: 0 with *ps, or -1 with *d. */
static int simulate(const struct serve_steps *st, const struct llm_step *tmpl, uint32_t n, uint64_t tokens,
                    uint64_t ctx, uint64_t *ps, double *ej, struct diag *d)
{
    struct llm_step s = *tmpl;
    s.batch = n;
    s.prompt = tokens;
    s.context = ctx;
    struct trace t;
    if (llm_build(st->model, &s, &t, d) != 0)
        return -1;
    /* the engine's blocks are in the device's memory (a shared prefix's once for all
     * its sequences, though each sequence's attention reads them) */
    struct run_opts o = {.tl = NULL, .resident = 1};
    struct run_result r;
    int rc = run_system_opts(st->sys, &t, &o, &r, d);
    trace_free(&t);
    if (rc != 0)
        return -1;
    *ps = r.total_ps;
    /* the devices' idle power is the run's, over its whole length
     * (serve_report.c): a step's own energy is what it adds */
    *ej = r.has_energy ? run_energy_total(&r) - r.energy_j[RUN_E_STATIC] : 0;
    run_result_free(&r);
    return 0;
}

/* One part of a step, from the table or simulated: 0 with *ps, or -1. */
static int part_time(struct serve_steps *st, enum llm_phase phase, uint32_t n, uint64_t tokens,
                     uint64_t ctx, uint64_t *ps, double *ej, struct diag *d)
{
    /* the bucket, held where the cache could not hold n sequences of it (a run past the
     * device's memory would be charged for streaming from the host) */
    uint64_t per = phase == LLM_DECODE ? 1 : (tokens + n - 1) / n;
    uint64_t cb = serve_bucket(ctx);
    if (st->cap_tokens > 0 && (cb + per) * n > st->cap_tokens && st->cap_tokens / n > ctx + per)
        cb = st->cap_tokens / n - per;
    /* nor past the model's positions: a request that fits them exactly (a
     * 2048-token prompt and 2048 new on a 4096-position model) is not
     * refused for its bucket */
    if (cb + per > st->model->max_pos && ctx + per <= st->model->max_pos)
        cb = st->model->max_pos - per;
    uint32_t ph = 1u + (uint32_t)phase;
    struct serve_entry *e = slot(st->e, st->ncap, ph, n, tokens, cb);
    if (e->phase != 0) {
        st->hits++;
        *ps = e->ps;
        *ej = e->ej;
        return 0;
    }
    uint64_t t;
    double j;
    if (simulate(st, phase == LLM_DECODE ? &st->decode : &st->prefill, n, per, cb, &t, &j, d) != 0)
        return -1;
    st->sims++;
    *e = (struct serve_entry){ph, n, tokens, cb, t, j};
    *ej = j;
    if (++st->nused * 2 > st->ncap)
        grow(st);
    *ps = t;
    return 0;
}

int serve_step_time(struct serve_steps *st, uint32_t nd, uint64_t dctx, uint32_t np, uint64_t ptok,
                    uint64_t pctx, uint64_t *ps, double *ej, struct diag *d)
{
    uint64_t td = 0, tp = 0;
    double jd = 0, jp = 0;
    SIM_CHECK(nd > 0 || np > 0);
    if (nd > 0 && part_time(st, LLM_DECODE, nd, 0, dctx, &td, &jd, d) != 0)
        return -1;
    if (np > 0) {
        uint64_t tb = serve_bucket(ptok);
        if (tb < np)
            tb = np;
        if (part_time(st, LLM_PREFILL, np, tb, pctx, &tp, &jp, d) != 0)
            return -1;
    }
    *ps = td + tp;
    *ej = jd + jp;
    return 0;
}

int serve_spec_time(struct serve_steps *st, uint32_t nd, uint64_t dctx, uint32_t k, uint64_t *ps,
                    double *ej, struct diag *d)
{
    SIM_CHECK(st->draft != NULL && nd > 0 && k > 0);
    uint64_t td, tv;
    double jd, jv;
    /* the draft's k decodes see contexts dctx .. dctx + k - 1: the bucket
     * of the first holds them all but at a bucket's edge */
    if (serve_step_time(st->draft, nd, dctx, 0, 0, 0, &td, &jd, d) != 0 ||
        serve_step_time(st, 0, 0, nd, (uint64_t)nd * (k + 1), dctx, &tv, &jv, d) != 0)
        return -1;
    *ps = td * k + tv;
    *ej = jd * k + jv;
    return 0;
}
