/* plan.h: `strata plan`, a search for the deployment of a model that
 * serves a workload within a latency SLA (docs/plan.md).
 *
 * A candidate is one `strata serve` run: a hardware file, a tensor-parallel
 * split and a scheduler (max_num_seqs, chunked prefill).  Each runs the
 * same requests through serve_setup_init and serve_run, exactly as the
 * verb does, and is judged by its summary (serve_summarize): the output
 * tokens a second per device it occupies (the figure to maximise), the
 * tokens a second one user sees (1 / mean TPOT), and the SLA.  A candidate
 * whose weights leave no KV cache "does not fit", one the engine refuses
 * (a prompt longer than a step without chunked prefill, a split the model
 * does not divide into) "failed": both are results, not errors.
 *
 * The runs go over threads; every result lands at its candidate's index
 * and the orders below are fixed keys, so the outputs are the same bytes
 * for any thread count.  Ownership: the caller owns every array it hands
 * in; plan_run writes only into the candidates.
 */
#ifndef STRATA_PLAN_H
#define STRATA_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "cfgset.h"
#include "diag.h"
#include "serve.h"
#include "serve_report.h"

/* ---- the SLA: `ttft_p90=500ms,tpot_p90=50ms` ---- */

#define PLAN_SLA_MAX 12

/* KEY is METRIC_STAT: ttft, tpot or e2e (serve_report.c's definitions),
 * and mean, p50, p90 or p99; the target a time with its unit (ns, us, ms,
 * s), above 0.  A candidate meets the SLA when every term's value is at
 * most its target. */
enum plan_metric { PLAN_TTFT, PLAN_TPOT, PLAN_E2E };
enum plan_stat { PLAN_MEAN, PLAN_P50, PLAN_P90, PLAN_P99 };

struct plan_sla_term {
    enum plan_metric metric;
    enum plan_stat stat;
    double target_s;            /* seconds */
};

struct plan_sla {
    unsigned n;                 /* 0: no SLA, every candidate that runs meets it */
    struct plan_sla_term t[PLAN_SLA_MAX];
};

/* Parses text: 0 with *sla, or -1 with what is wrong in why[n]. */
int plan_sla_parse(const char *text, struct plan_sla *sla, char *why, size_t n);
/* A term's key ("ttft_p90") into out[n]. */
void plan_sla_key(const struct plan_sla_term *t, char *out, size_t n);
/* The value of term t in a run's summary, seconds. */
double plan_sla_value(const struct plan_sla_term *t, const struct serve_summary *s);

/* ---- the candidates ---- */

enum plan_status {
    PLAN_RAN,                   /* ran: the summary holds */
    PLAN_NOFIT,                 /* the weights leave no KV cache (strata fit) */
    PLAN_FAILED                 /* the engine refused it (why says) */
};

struct plan_cand {
    /* what it is (the caller fills these) */
    unsigned hw;                /* index into plan.hw */
    uint32_t tp;                /* devices of the split */
    struct serve_sched sched;   /* as serve would parse its options (kv_blocks: by the run) */
    double util;                /* gpu_memory_utilization */
    struct llm_step pre, dec;   /* the steps' templates */
    /* what it gave (plan_run) */
    enum plan_status status;
    char why[400];              /* not PLAN_RAN: the reason */
    struct serve_summary sm;    /* PLAN_RAN */
    uint64_t preemptions;
    double tok_s_gpu;           /* output tokens/s per device */
    double tok_s_user;          /* output tokens/s of one request: 1 / mean TPOT */
    double violation;           /* the worst SLA term's value / target - 1: <= 0 meets it */
    int meets;                  /* ran and met every term */
    int on_front;               /* on its hardware's Pareto front of tok_s_gpu against tok_s_user */
};

struct plan {
    const struct llm_config *model;
    const char *model_path;
    const struct cfg_sets *sets;        /* --set / --hw-overlay (may be NULL) */
    const struct stack *stack;          /* NULL: none */
    const char *stack_name;             /* "" without one */
    const char *stack_dir;
    unsigned nhw;
    const char *const *hw;              /* the hardware files */
    const char (*hw_name)[64];          /* their names, as serve reports them */
    const struct serve_reqs *reqs;      /* every candidate runs a copy of these */
    const char *workload;               /* "poisson 20 req/s" */
    uint64_t seed;
    struct plan_sla sla;
    int by_energy;                      /* --rank energy: those meeting the SLA by joules an
                                         * output token (fewest first; chips without a power
                                         * block last) instead of tokens/s per device */
    struct plan_cand *c;
    unsigned n;
};

struct prog;
/* Runs every candidate on threads (>= 1) and then judges them: the SLA,
 * the fronts.  prog: a progress line the calling thread draws, or NULL.
 * Never fails: what a candidate could not do is its status. */
void plan_run(struct plan *p, unsigned threads, struct prog *prog);

/* The candidates' indices in rank order: those that meet the SLA first,
 * by tok_s_gpu (highest first; with by_energy, by joules an output token,
 * fewest first), then the rest by violation (smallest
 * first), then those that did not run; ties by the candidate order.
 * hw: only that hardware's (-1: all).  Fills idx (room for p->n): how many. */
unsigned plan_rank(const struct plan *p, int hw, unsigned *idx);

/* ---- the outputs (plan_report.c; files written atomically, afile.h) ---- */

/* The text report: per hardware its best top candidates, the verdict. */
void plan_report_text(const struct plan *p, unsigned top, FILE *f);
/* Every candidate, a row each in candidate order.  0, or -1 with *d. */
int plan_report_csv(const struct plan *p, const char *path, struct diag *d);
/* The Pareto fronts, a row a point, per hardware by tok_s_user. */
int plan_report_front(const struct plan *p, const char *path, struct diag *d);
/* The JSON document ("strata_plan": 1): the search, every candidate, the
 * best and the verdict. */
int plan_report_json(const struct plan *p, const char *path, struct diag *d);

#endif
