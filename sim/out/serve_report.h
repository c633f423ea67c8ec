/* serve_report.h: what `strata serve` reports (docs/serving.md): the text
 * summary, the JSON document ("strata_serve": 1) and the per-request CSV,
 * all from the same summary.  The files are written atomically (afile.h). */
#ifndef STRATA_SERVE_REPORT_H
#define STRATA_SERVE_REPORT_H

#include <stdio.h>

#include "diag.h"
#include "serve.h"

/* Mean and percentiles of one latency over the requests, seconds. */
struct serve_lat {
    double mean, p50, p90, p99;
    uint32_t n;                 /* requests it is defined for (TPOT: output > 1) */
};

/* A service-level objective a request: it is good when each given bound
 * holds for it (DistServe's and vLLM's benchmark_serving --goodput
 * definition); 0: no bound.  TPOT's bound holds for a one-token output. */
struct serve_slo {
    double ttft_s, tpot_s, e2e_s;
};
/* `ttft=200ms,tpot=50ms,e2e=10s` (any of the three, each once, a time with
 * its unit above 0): 0 with *slo, or -1 with what is wrong in why[n]. */
int serve_slo_parse(const char *text, struct serve_slo *slo, char *why, size_t n);

/* What the run was, for the report's header (strings owned by the caller). */
struct serve_ctx {
    const char *hw;             /* the hardware's name */
    const char *model;          /* the model file */
    const char *stack;          /* the stack's name, or "" */
    uint32_t tp;
    const char *dtype;
    const char *workload;       /* "poisson 20 req/s", "closed loop of 8", "file F" */
    uint64_t seed;
    const struct serve_sched *sched;
    double gpu_mem_util;
    double kv_bytes_per_token;  /* on one device */
    double weights_bytes;       /* on one device */
    const struct serve_reqs *q;
    const struct serve_result *res;
    const struct serve_steps *steps;
    const struct serve_slo *slo;        /* NULL: no goodput */
    uint32_t prefill_instances, decode_instances;   /* disaggregated (0, 0: one engine) */
    double kv_bandwidth;                /* bytes/s a device's KV moves at, disaggregated */
};

struct serve_summary {
    uint32_t n;
    double first_arrival_s, duration_s;   /* first arrival to last finish */
    double req_per_s, out_tok_per_s, tok_per_s;
    uint64_t input_tokens, output_tokens;
    struct serve_lat ttft, tpot, e2e, queued;
    double compute_mean_s;      /* e2e less the time queued, mean */
    double mean_in_system;      /* requests in the system, time-averaged over [0, end] */
    double kv_mean_occupancy, kv_max_occupancy;   /* of the blocks */
    double busy_frac;           /* of [0, end] the engine ran steps */
    uint32_t good;              /* requests that met ctx->slo (with one) */
    double goodput_req_per_s;   /* good / duration */
    /* energy (a chip with a power block; docs/energy.md): the steps' energy
     * above idle plus every device's idle power over [0, end] */
    int has_energy;
    double energy_j, idle_j;
    double j_per_out_token;     /* energy_j / output tokens */
    double power_w;             /* a device's average over [0, end] */
};

/* A latency's mean, percentiles and count as a JSON object (the caller
 * adds it to a document, which then owns it). */
struct cJSON;
struct cJSON *serve_json_lat(const struct serve_lat *l);

/* Computes the summary of a finished run. */
void serve_summarize(const struct serve_ctx *c, struct serve_summary *s);
void serve_report_text(const struct serve_ctx *c, const struct serve_summary *s, FILE *f);
/* 0, or -1 with *d (nothing written under path). */
int serve_report_json(const struct serve_ctx *c, const struct serve_summary *s, const char *path,
                      struct diag *d);
int serve_report_csv(const struct serve_ctx *c, const char *path, struct diag *d);
/* The Perfetto / chrome://tracing timeline (Chrome trace event JSON): a
 * track per request (queued, prefill to its first token, decode to its
 * last), the engine's steps on a track of their own, and counters of the
 * KV cache's blocks and the running and waiting sequences.  Needs the run's
 * samples (sched.record).  0, or -1 with *d (nothing written). */
int serve_report_timeline(const struct serve_ctx *c, const char *path, struct diag *d);

#endif
