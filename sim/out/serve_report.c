/* serve_report.c: `strata serve`'s outputs (serve_report.h).
 *
 * Definitions, as vLLM's benchmark_serving.py reports them: TTFT = first
 * token - arrival; TPOT = (finish - first token) / (output - 1), for
 * requests with more than one output token; E2E = finish - arrival.
 * Percentiles interpolate linearly between order statistics (GSL's
 * gsl_stats_quantile_from_sorted_data, numpy's default).  Throughput is over
 * the first arrival to the last finish.
 */
#include "serve_report.h"

#include <math.h>
#include <cjson/cJSON.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <stdlib.h>
#include <string.h>

#include "afile.h"
#include "check.h"
#include "jsonout.h"
#include "numfmt.h"
#include "strbuf.h"
#include "units.h"

#define PS 1e-12

/* The mean and percentiles of v[0..n-1] (sorted here). */
static void lat_of(double *v, uint32_t n, struct serve_lat *l)
{
    memset(l, 0, sizeof *l);
    l->n = n;
    if (n == 0)
        return;
    gsl_sort(v, 1, n);
    l->mean = gsl_stats_mean(v, 1, n);
    l->p50 = gsl_stats_quantile_from_sorted_data(v, 1, n, 0.50);
    l->p90 = gsl_stats_quantile_from_sorted_data(v, 1, n, 0.90);
    l->p99 = gsl_stats_quantile_from_sorted_data(v, 1, n, 0.99);
}

int serve_slo_parse(const char *text, struct serve_slo *slo, char *why, size_t n)
{
    static const char *const keys[] = {"ttft", "tpot", "e2e"};
    memset(slo, 0, sizeof *slo);
    double *dst[] = {&slo->ttft_s, &slo->tpot_s, &slo->e2e_s};
    for (const char *s = text;;) {
        size_t len = strcspn(s, ","), k = 0;
        const char *eq = memchr(s, '=', len);
        while (k < 3 && !(eq != NULL && (size_t)(eq - s) == strlen(keys[k]) && strncmp(s, keys[k], strlen(keys[k])) == 0))
            k++;
        if (k == 3) {
            snprintf(why, n, "'%.*s': expected ttft=TIME, tpot=TIME or e2e=TIME (e.g. ttft=200ms,tpot=50ms)",
                     (int)(len > 60 ? 60 : len), s);
            return -1;
        }
        char v[64];
        snprintf(v, sizeof v, "%.*s", (int)(len - (size_t)(eq + 1 - s) > 60 ? 60 : len - (size_t)(eq + 1 - s)),
                 eq + 1);
        struct qty q;
        if (qty_parse(v, &q) != 0 || q.kind != QK_TIME || !(q.si > 0) || q.si > 1e9 || *dst[k] > 0) {
            snprintf(why, n, "%s: %s", keys[k], *dst[k] > 0 ? "given twice"
                     : "expected a time above 0 with its unit (200ms, 0.2s)");
            return -1;
        }
        *dst[k] = q.si;
        if (s[len] == '\0')
            return 0;
        s += len + 1;
    }
}

/* Whether request r met the objective. */
static int met(const struct serve_slo *o, const struct serve_req *r)
{
    double ttft = (double)(r->first_token_ps - r->arrival_ps) * PS;
    double e2e = (double)(r->finish_ps - r->arrival_ps) * PS;
    double tpot = r->output > 1 ? (double)(r->finish_ps - r->first_token_ps) * PS / (r->output - 1) : 0;
    return (o->ttft_s <= 0 || ttft <= o->ttft_s) && (o->tpot_s <= 0 || tpot <= o->tpot_s) &&
           (o->e2e_s <= 0 || e2e <= o->e2e_s);
}

void serve_summarize(const struct serve_ctx *c, struct serve_summary *s)
{
    const struct serve_reqs *q = c->q;
    const struct serve_result *res = c->res;
    memset(s, 0, sizeof *s);
    s->n = q->n;
    double *v = sim_xcalloc(q->n, sizeof *v);
    uint64_t first = UINT64_MAX;
    double compute = 0;
    for (uint32_t i = 0; i < q->n; i++) {
        const struct serve_req *r = &q->r[i];
        first = r->arrival_ps < first ? r->arrival_ps : first;
        s->input_tokens += r->input;
        s->output_tokens += r->output;
        compute += (double)(r->finish_ps - r->arrival_ps - r->queued_ps) * PS;
        if (c->slo != NULL)
            s->good += (uint32_t)met(c->slo, r);
    }
    s->compute_mean_s = compute / q->n;
    s->first_arrival_s = (double)first * PS;
    s->duration_s = (double)(res->end_ps - first) * PS;
    if (s->duration_s > 0) {
        s->req_per_s = q->n / s->duration_s;
        s->out_tok_per_s = (double)s->output_tokens / s->duration_s;
        s->tok_per_s = (double)(s->input_tokens + s->output_tokens) / s->duration_s;
        s->goodput_req_per_s = s->good / s->duration_s;
    }
    for (uint32_t i = 0; i < q->n; i++)
        v[i] = (double)(q->r[i].first_token_ps - q->r[i].arrival_ps) * PS;
    lat_of(v, q->n, &s->ttft);
    uint32_t m = 0;
    for (uint32_t i = 0; i < q->n; i++)
        if (q->r[i].output > 1)
            v[m++] = (double)(q->r[i].finish_ps - q->r[i].first_token_ps) * PS / (q->r[i].output - 1);
    lat_of(v, m, &s->tpot);
    for (uint32_t i = 0; i < q->n; i++)
        v[i] = (double)(q->r[i].finish_ps - q->r[i].arrival_ps) * PS;
    lat_of(v, q->n, &s->e2e);
    for (uint32_t i = 0; i < q->n; i++)
        v[i] = (double)q->r[i].queued_ps * PS;
    lat_of(v, q->n, &s->queued);
    free(v);
    if (res->end_ps > 0) {
        s->mean_in_system = res->in_system_ps / (double)res->end_ps;
        s->busy_frac = (double)res->busy_ps / (double)res->end_ps /   /* an engine's, on average */
                       (c->prefill_instances ? c->prefill_instances + c->decode_instances : 1);
        if (c->sched->kv_blocks > 0)
            s->kv_mean_occupancy = res->kv_block_ps / (double)res->end_ps / (double)c->sched->kv_blocks;
    }
    if (c->sched->kv_blocks > 0)
        s->kv_max_occupancy = (double)res->kv_max_blocks / (double)c->sched->kv_blocks;
    if (c->steps->has_energy) {
        /* every device of every instance draws its idle power the whole
         * run, waiting for requests too; a step adds what it spends above */
        double devs = (double)(c->tp ? c->tp : 1) *
                      (c->prefill_instances ? c->prefill_instances + c->decode_instances : 1);
        double end_s = (double)res->end_ps * PS;
        s->has_energy = 1;
        s->idle_j = c->steps->sys->chip.idle_w * devs * end_s;
        s->energy_j = res->step_j + s->idle_j;
        s->j_per_out_token = s->output_tokens ? s->energy_j / (double)s->output_tokens : 0;
        s->power_w = end_s > 0 ? s->energy_j / end_s / devs : 0;
    }
}

static void text_lat(FILE *f, const char *name, const struct serve_lat *l)
{
    char a[32], b[32], x[32], y[32];
    numfmt_time(a, sizeof a, l->mean);
    numfmt_time(b, sizeof b, l->p50);
    numfmt_time(x, sizeof x, l->p90);
    numfmt_time(y, sizeof y, l->p99);
    fprintf(f, "  %-6s mean %-11s p50 %-11s p90 %-11s p99 %s\n", name, a, b, x, y);
}

void serve_report_text(const struct serve_ctx *c, const struct serve_summary *s, FILE *f)
{
    const struct serve_sched *k = c->sched;
    const struct serve_result *r = c->res;
    fprintf(f, "serve: %s on %s%s%s, TP %u, %s\n", c->model, c->hw, c->stack[0] ? " with " : "", c->stack,
            c->tp, c->dtype);
    fprintf(f, "  scheduler: %s, max %u seqs", k->is_static ? "static batching" : "continuous batching",
            k->max_num_seqs);
    if (!k->is_static)
        fprintf(f, ", %u tokens a step, chunked prefill %s", k->max_batched_tokens,
                k->chunked_prefill ? "on" : "off");
    if (!k->is_static && k->no_evict)
        fprintf(f, ", a request's whole KV reserved at admission (no eviction)");
    if (!k->is_static && k->scheduler_steps > 1)
        fprintf(f, ", %u decode steps a scheduler call", k->scheduler_steps);
    if (k->host_step_ps > 0 || k->host_seq_ps > 0)
        fprintf(f, "; host %.1f us a call + %.2f us a sequence", (double)k->host_step_ps * 1e-6,
                (double)k->host_seq_ps * 1e-6);
    if (c->prefill_instances > 0) {
        char bw[32];
        numfmt_si(bw, sizeof bw, c->kv_bandwidth, "B/s");
        fprintf(f, "\n  disaggregated: %u prefill + %u decode instances of TP %u (%u devices); KV moves at %s a "
                "device", c->prefill_instances, c->decode_instances, c->tp,
                (c->prefill_instances + c->decode_instances) * c->tp, bw);
    }
    char kvb[32], wb[32];
    numfmt_si(kvb, sizeof kvb, (double)k->kv_blocks * k->block_size * c->kv_bytes_per_token, "B");
    numfmt_si(wb, sizeof wb, c->weights_bytes, "B");
    fprintf(f, "\n  KV cache: %llu blocks of %u tokens (%s %s, %.0f%% of memory used; weights %s)\n",
            (unsigned long long)k->kv_blocks, k->block_size, kvb,
            c->prefill_instances ? "over the instances" : "a device", c->gpu_mem_util * 100, wb);
    fprintf(f, "  workload: %s, %u requests, %llu input + %llu output tokens\n\n", c->workload, s->n,
            (unsigned long long)s->input_tokens, (unsigned long long)s->output_tokens);
    char dur[32];
    numfmt_time(dur, sizeof dur, s->duration_s);
    fprintf(f, "  duration %s: %.3f requests/s, %.1f output tokens/s, %.1f tokens/s\n", dur, s->req_per_s,
            s->out_tok_per_s, s->tok_per_s);
    text_lat(f, "TTFT", &s->ttft);
    text_lat(f, "TPOT", &s->tpot);
    text_lat(f, "E2E", &s->e2e);
    if (c->slo != NULL) {
        char what[160] = "", b[32];
        const double v[] = {c->slo->ttft_s, c->slo->tpot_s, c->slo->e2e_s};
        static const char *const nm[] = {"TTFT", "TPOT", "E2E"};
        for (int i = 0; i < 3; i++)
            if (v[i] > 0) {
                size_t at = strlen(what);
                numfmt_time(b, sizeof b, v[i]);
                snprintf(what + at, sizeof what - at, "%s%s <= %s", at ? ", " : "", nm[i], b);
            }
        fprintf(f, "  goodput (%s a request): %.3f requests/s, %u of %u requests (%.1f%%)\n", what,
                s->goodput_req_per_s, s->good, s->n, s->n ? 100.0 * s->good / s->n : 0);
    }
    char qb[32], cb[32];
    numfmt_time(qb, sizeof qb, s->queued.mean);
    numfmt_time(cb, sizeof cb, s->compute_mean_s);
    fprintf(f, "  a request: %s queued + %s running (mean); %.2f in the system on average\n", qb, cb,
            s->mean_in_system);
    fprintf(f, "  KV occupancy: mean %.1f%%, max %.1f%%; %llu preemptions\n", s->kv_mean_occupancy * 100,
            s->kv_max_occupancy * 100, (unsigned long long)r->preemptions);
    if (c->sched->prefix_groups > 0)
        fprintf(f, "  shared prefixes: %u of %u tokens; prefix cache %s: %.1f%% of prompt tokens found in "
                   "it, %llu evictions\n", c->sched->prefix_groups, c->sched->prefix_tokens,
                c->sched->prefix_caching ? "on" : "off",
                s->input_tokens ? 100.0 * (double)r->prefix_hit_tokens / (double)s->input_tokens : 0,
                (unsigned long long)r->prefix_evictions);
    if (c->sched->spec_k > 0) {
        /* Leviathan et al.'s expectation beside what the run's draws gave */
        double a = c->sched->spec_accept, kk = c->sched->spec_k;
        double expect = a < 1 ? (1 - pow(a, kk + 1)) / (1 - a) : kk + 1;
        fprintf(f, "  speculative: %u draft tokens a step at %.3g acceptance: %.3f tokens a sequence's step "
                   "(%.3f expected; the last of an output is cut short)\n", c->sched->spec_k, a,
                r->spec_steps ? (double)r->spec_tokens / (double)r->spec_steps : 0, expect);
    }
    fprintf(f, "  steps: %llu (%llu prefill, %llu decode, %llu mixed), engine busy %.1f%%; step cache: "
               "%llu simulated, %llu hits\n", (unsigned long long)r->steps,
            (unsigned long long)r->prefill_steps, (unsigned long long)r->decode_steps,
            (unsigned long long)r->mixed_steps, s->busy_frac * 100, (unsigned long long)c->steps->sims,
            (unsigned long long)c->steps->hits);
    if (r->host_ps > 0)
        fprintf(f, "  host: the engine's CPU time is %.1f%% of its busy time\n",
                r->busy_ps ? 100.0 * (double)r->host_ps / (double)r->busy_ps : 0.0);
    if (s->has_energy)
        fprintf(f, "  energy: %.4g J (idle %.1f%%), %.4g J an output token; %.0f W a device on average\n",
                s->energy_j, s->energy_j > 0 ? 100.0 * s->idle_j / s->energy_j : 0.0, s->j_per_out_token,
                s->power_w);
}

cJSON *serve_json_lat(const struct serve_lat *l)
{
    cJSON *o = cJSON_CreateObject();
    jout_add_num(o, "mean", l->mean);
    jout_add_num(o, "p50", l->p50);
    jout_add_num(o, "p90", l->p90);
    jout_add_num(o, "p99", l->p99);
    jout_add_num(o, "requests", l->n);
    return o;
}

int serve_report_json(const struct serve_ctx *c, const struct serve_summary *s, const char *path,
                      struct diag *d)
{
    const struct serve_sched *k = c->sched;
    const struct serve_result *r = c->res;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "strata_serve", REPORT_FORMAT);
    cJSON_AddStringToObject(root, "hardware", c->hw);
    cJSON_AddStringToObject(root, "model", c->model);
    cJSON_AddStringToObject(root, "stack", c->stack);
    jout_add_num(root, "tp", c->tp);
    if (c->prefill_instances > 0) {
        cJSON *dg = cJSON_AddObjectToObject(root, "disaggregated");
        jout_add_num(dg, "prefill_instances", c->prefill_instances);
        jout_add_num(dg, "decode_instances", c->decode_instances);
        jout_add_num(dg, "kv_bandwidth_bytes_per_s", c->kv_bandwidth);
    }
    cJSON_AddStringToObject(root, "dtype", c->dtype);
    cJSON *sc = cJSON_AddObjectToObject(root, "scheduler");
    cJSON_AddStringToObject(sc, "kind", k->is_static ? "static" : "continuous");
    jout_add_num(sc, "max_num_seqs", k->max_num_seqs);
    jout_add_num(sc, "max_batched_tokens", k->max_batched_tokens);
    cJSON_AddBoolToObject(sc, "chunked_prefill", k->chunked_prefill);
    /* static batching reserves the whole output too */
    cJSON_AddStringToObject(sc, "capacity_policy",
                            k->no_evict || k->is_static ? "guaranteed_no_evict" : "max_utilization");
    jout_add_num(sc, "scheduler_steps", k->scheduler_steps);
    jout_add_num(sc, "host_step_us", (double)k->host_step_ps * 1e-6);
    jout_add_num(sc, "host_seq_us", (double)k->host_seq_ps * 1e-6);
    cJSON *w = cJSON_AddObjectToObject(root, "workload");
    cJSON_AddStringToObject(w, "arrivals", c->workload);
    jout_add_num(w, "seed", (double)c->seed);
    jout_add_num(w, "requests", s->n);
    jout_add_num(w, "input_tokens", (double)s->input_tokens);
    jout_add_num(w, "output_tokens", (double)s->output_tokens);
    cJSON *kv = cJSON_AddObjectToObject(root, "kv_cache");
    jout_add_num(kv, "blocks", (double)k->kv_blocks);
    jout_add_num(kv, "block_size", k->block_size);
    jout_add_num(kv, "bytes_per_token", c->kv_bytes_per_token);
    jout_add_num(kv, "gpu_memory_utilization", c->gpu_mem_util);
    jout_add_num(kv, "weights_bytes", c->weights_bytes);
    jout_add_num(kv, "mean_occupancy", s->kv_mean_occupancy);
    jout_add_num(kv, "max_occupancy", s->kv_max_occupancy);
    jout_add_num(root, "duration_s", s->duration_s);
    jout_add_num(root, "requests_per_s", s->req_per_s);
    jout_add_num(root, "output_tokens_per_s", s->out_tok_per_s);
    jout_add_num(root, "tokens_per_s", s->tok_per_s);
    cJSON_AddItemToObject(root, "ttft_s", serve_json_lat(&s->ttft));
    cJSON_AddItemToObject(root, "tpot_s", serve_json_lat(&s->tpot));
    cJSON_AddItemToObject(root, "e2e_s", serve_json_lat(&s->e2e));
    if (c->slo != NULL) {
        cJSON *g = cJSON_AddObjectToObject(root, "goodput");
        jout_add_num(g, "ttft_s", c->slo->ttft_s);
        jout_add_num(g, "tpot_s", c->slo->tpot_s);
        jout_add_num(g, "e2e_s", c->slo->e2e_s);
        jout_add_num(g, "requests", s->good);
        jout_add_num(g, "fraction", s->n ? (double)s->good / s->n : 0);
        jout_add_num(g, "requests_per_s", s->goodput_req_per_s);
    }
    cJSON_AddItemToObject(root, "queued_s", serve_json_lat(&s->queued));
    jout_add_num(root, "running_s_mean", s->compute_mean_s);
    jout_add_num(root, "mean_in_system", s->mean_in_system);
    jout_add_num(root, "preemptions", (double)r->preemptions);
    if (c->sched->prefix_groups > 0) {
        cJSON *pc = cJSON_AddObjectToObject(root, "prefix_cache");
        jout_add_num(pc, "groups", c->sched->prefix_groups);
        jout_add_num(pc, "prefix_tokens", c->sched->prefix_tokens);
        cJSON_AddBoolToObject(pc, "caching", c->sched->prefix_caching);
        jout_add_num(pc, "hit_tokens", (double)r->prefix_hit_tokens);
        jout_add_num(pc, "hit_rate", s->input_tokens ? (double)r->prefix_hit_tokens / (double)s->input_tokens : 0);
        jout_add_num(pc, "evictions", (double)r->prefix_evictions);
    }
    if (c->sched->spec_k > 0) {
        cJSON *sp = cJSON_AddObjectToObject(root, "speculative");
        jout_add_num(sp, "draft_tokens", c->sched->spec_k);
        jout_add_num(sp, "acceptance", c->sched->spec_accept);
        jout_add_num(sp, "sequence_steps", (double)r->spec_steps);
        jout_add_num(sp, "tokens", (double)r->spec_tokens);
        jout_add_num(sp, "tokens_per_step", r->spec_steps ? (double)r->spec_tokens / (double)r->spec_steps : 0);
    }
    cJSON *st = cJSON_AddObjectToObject(root, "steps");
    jout_add_num(st, "total", (double)r->steps);
    jout_add_num(st, "prefill", (double)r->prefill_steps);
    jout_add_num(st, "decode", (double)r->decode_steps);
    jout_add_num(st, "mixed", (double)r->mixed_steps);
    jout_add_num(st, "busy_fraction", s->busy_frac);
    jout_add_num(st, "host_fraction", r->busy_ps ? (double)r->host_ps / (double)r->busy_ps : 0.0);
    jout_add_num(st, "simulated", (double)c->steps->sims);
    jout_add_num(st, "cache_hits", (double)c->steps->hits);
    if (s->has_energy) {
        cJSON *en = cJSON_AddObjectToObject(root, "energy");
        jout_add_num(en, "total_J", s->energy_j);
        jout_add_num(en, "idle_J", s->idle_j);
        jout_add_num(en, "J_per_output_token", s->j_per_out_token);
        jout_add_num(en, "power_W", s->power_w);
    }
    int rc = jout_write(root, path, d);
    cJSON_Delete(root);
    return rc;
}

/* Appends ",x" with 9 significant digits. */
static void put_num(struct sb *b, double x)
{
    char nb[40];
    numfmt_gp(nb, sizeof nb, x, 9);
    sb_putn(b, ",", 1);
    sb_puts(b, nb);
}

int serve_report_csv(const struct serve_ctx *c, const char *path, struct diag *d)
{
    struct afile a;
    if (afile_open(&a, path, d) != 0)
        return -1;
    fputs("id,arrival_s,input_tokens,output_tokens,first_token_s,finish_s,ttft_s,tpot_s,e2e_s,queued_s,"
          "preemptions\n", a.f);
    struct sb b = {0};
    for (uint32_t i = 0; i < c->q->n; i++) {
        const struct serve_req *r = &c->q->r[i];
        b.n = 0;
        sb_printf(&b, "%u", i);
        put_num(&b, (double)r->arrival_ps * PS);
        sb_printf(&b, ",%u,%u", r->input, r->output);
        put_num(&b, (double)r->first_token_ps * PS);
        put_num(&b, (double)r->finish_ps * PS);
        put_num(&b, (double)(r->first_token_ps - r->arrival_ps) * PS);
        if (r->output > 1)
            put_num(&b, (double)(r->finish_ps - r->first_token_ps) * PS / (r->output - 1));
        else
            sb_putn(&b, ",", 1);    /* no time between tokens with one token */
        put_num(&b, (double)(r->finish_ps - r->arrival_ps) * PS);
        put_num(&b, (double)r->queued_ps * PS);
        sb_printf(&b, ",%u\n", r->preemptions);
        fwrite(b.s, 1, b.n, a.f);
    }
    free(b.s);
    return afile_commit(&a, d);
}

/* A complete slice on pid/tid from a to b (ps), in microseconds. */
static void tl_slice(struct sb *b, const char *name, int pid, uint32_t tid, uint64_t a, uint64_t z)
{
    sb_printf(b, ",\n{\"name\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%.6f,\"dur\":%.6f", name, pid,
              tid, (double)a * 1e-6, (double)(z - a) * 1e-6);
}

int serve_report_timeline(const struct serve_ctx *c, const char *path, struct diag *d)
{
    struct afile a;
    if (afile_open(&a, path, d) != 0)
        return -1;
    struct sb b = {0};
    sb_puts(&b, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"
                "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"engine\"}},\n"
                "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"steps\"}},\n"
                "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":2,\"args\":{\"name\":\"requests\"}}");
    const struct serve_result *res = c->res;
    for (uint64_t k = 0; k < res->nsamples; k++) {
        const struct serve_sample *s = &res->samples[k];
        tl_slice(&b, s->prefills && s->decodes ? "mixed" : s->prefills ? "prefill" : "decode", 1, 0, s->t_ps,
                 s->t_ps + s->dur_ps);
        sb_printf(&b, ",\"args\":{\"decodes\":%u,\"prefills\":%u,\"tokens\":%u}}", s->decodes, s->prefills,
                  s->tokens);
        sb_printf(&b, ",\n{\"name\":\"KV cache\",\"ph\":\"C\",\"pid\":1,\"ts\":%.6f,\"args\":{\"blocks\":%u}}",
                  (double)s->t_ps * 1e-6, s->kv_blocks);
        sb_printf(&b, ",\n{\"name\":\"sequences\",\"ph\":\"C\",\"pid\":1,\"ts\":%.6f,\"args\":"
                  "{\"running\":%u,\"waiting\":%u}}", (double)s->t_ps * 1e-6, s->running, s->waiting);
        if (b.n > 1 << 16) {
            fwrite(b.s, 1, b.n, a.f);
            b.n = 0;
        }
    }
    for (uint32_t i = 0; i < c->q->n; i++) {
        const struct serve_req *r = &c->q->r[i];
        sb_printf(&b, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":2,\"tid\":%u,\"args\":"
                  "{\"name\":\"request %u\"}}", i + 1, i);
        if (r->start_ps > r->arrival_ps) {
            tl_slice(&b, "queued", 2, i + 1, r->arrival_ps, r->start_ps);
            sb_puts(&b, "}");
        }
        tl_slice(&b, "prefill", 2, i + 1, r->start_ps, r->first_token_ps);
        sb_printf(&b, ",\"args\":{\"input_tokens\":%u,\"preemptions\":%u}}", r->input, r->preemptions);
        if (r->finish_ps > r->first_token_ps) {
            tl_slice(&b, "decode", 2, i + 1, r->first_token_ps, r->finish_ps);
            sb_printf(&b, ",\"args\":{\"output_tokens\":%u}}", r->output);
        }
        if (b.n > 1 << 16) {
            fwrite(b.s, 1, b.n, a.f);
            b.n = 0;
        }
    }
    sb_puts(&b, "\n]}\n");
    fwrite(b.s, 1, b.n, a.f);
    free(b.s);
    return afile_commit(&a, d);
}
