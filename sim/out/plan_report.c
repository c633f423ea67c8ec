/* plan_report.c: `strata plan`'s outputs (plan.h): the text report, the
 * candidates' CSV, the Pareto fronts' CSV and the JSON document.  Times in
 * the files are seconds; every number is printed with a fixed format, so
 * the same plan gives the same bytes. */
#include "plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afile.h"
#include "check.h"
#include "csv.h"
#include "jsonout.h"
#include "numfmt.h"
#include "strbuf.h"

static const char *const status_names[] = {"ran", "does not fit", "failed"};

/* "TP 2, max_num_seqs 64, chunked prefill on" */
static void cand_text(const struct plan_cand *c, char *out, size_t n)
{
    snprintf(out, n, "TP %u, max_num_seqs %u, chunked prefill %s", c->tp, c->sched.max_num_seqs,
             c->sched.chunked_prefill ? "on" : "off");
}

/* "tpot_p90 62.1 ms (24.2% over 50 ms)": the candidate's worst SLA term */
static void worst_text(const struct plan *p, const struct plan_cand *c, char *out, size_t n)
{
    unsigned w = 0;
    double worst = -INFINITY;
    for (unsigned k = 0; k < p->sla.n; k++) {
        double v = plan_sla_value(&p->sla.t[k], &c->sm) / p->sla.t[k].target_s;
        if (v > worst) {
            worst = v;
            w = k;
        }
    }
    char key[16], val[32], tgt[32];
    plan_sla_key(&p->sla.t[w], key, sizeof key);
    numfmt_time(val, sizeof val, plan_sla_value(&p->sla.t[w], &c->sm));
    numfmt_time(tgt, sizeof tgt, p->sla.t[w].target_s);
    snprintf(out, n, "%s %s (%.1f%% over %s)", key, val, (worst - 1) * 100, tgt);
}

static void sla_text(const struct plan *p, FILE *f)
{
    if (p->sla.n == 0) {
        fprintf(f, "  SLA: none (every candidate that runs meets it)\n");
        return;
    }
    fprintf(f, "  SLA:");
    for (unsigned k = 0; k < p->sla.n; k++) {
        char key[16], tgt[32];
        plan_sla_key(&p->sla.t[k], key, sizeof key);
        numfmt_time(tgt, sizeof tgt, p->sla.t[k].target_s);
        fprintf(f, "%s %s <= %s", k ? "," : "", key, tgt);
    }
    fprintf(f, "\n");
}

/* Hardware h's table: its top candidates that meet the SLA, and what did not run. */
static void hw_text(const struct plan *p, unsigned h, unsigned top, unsigned *idx, FILE *f)
{
    unsigned m = plan_rank(p, (int)h, idx), met = 0, ran = 0, nofit = 0, failed = 0;
    for (unsigned i = 0; i < m; i++) {
        const struct plan_cand *c = &p->c[idx[i]];
        met += c->meets;
        ran += c->status == PLAN_RAN;
        nofit += c->status == PLAN_NOFIT;
        failed += c->status == PLAN_FAILED;
    }
    fprintf(f, "\n%s: %u candidates, %u ran, %u meet the SLA", p->hw_name[h], m, ran, met);
    if (nofit)
        fprintf(f, ", %u do not fit", nofit);
    if (failed)
        fprintf(f, ", %u failed", failed);
    fprintf(f, "\n");
    if (met > 0) {
        fprintf(f, "  %-4s %3s %5s %-7s %11s %10s %9s %9s %9s %9s %9s %9s%s\n", "rank", "TP", "seqs", "chunked",
                "tok/s/dev", "tok/s/user", "TTFT p50", "p90", "p99", "TPOT p50", "p90", "p99",
                p->by_energy ? "  J/token" : "");
        for (unsigned i = 0; i < met && i < top; i++) {
            const struct plan_cand *c = &p->c[idx[i]];
            const struct serve_summary *s = &c->sm;
            fprintf(f, "  %-4u %3u %5u %-7s %11.1f %10.1f %9.1f %9.1f %9.1f %9.2f %9.2f %9.2f", i + 1, c->tp,
                    c->sched.max_num_seqs, c->sched.chunked_prefill ? "on" : "off", c->tok_s_gpu, c->tok_s_user,
                    s->ttft.p50 * 1e3, s->ttft.p90 * 1e3, s->ttft.p99 * 1e3, s->tpot.p50 * 1e3,
                    s->tpot.p90 * 1e3, s->tpot.p99 * 1e3);
            if (p->by_energy && s->has_energy)
                fprintf(f, " %9.4f", s->j_per_out_token);
            else if (p->by_energy)
                fprintf(f, " %9s", "-");
            fprintf(f, "\n");
        }
        fprintf(f, "  (latencies in ms; tok/s/dev: output tokens a second per device%s)\n",
                p->by_energy ? "; ranked by joules an output token, idle power included" : "");
    } else if (ran > 0) {
        char ct[96], wt[128];
        cand_text(&p->c[idx[0]], ct, sizeof ct);
        worst_text(p, &p->c[idx[0]], wt, sizeof wt);
        fprintf(f, "  closest: %s: %s\n", ct, wt);
    }
    /* what did not run, a line each of the first of each kind */
    for (int st = PLAN_NOFIT; st <= PLAN_FAILED; st++)
        for (unsigned i = 0; i < m; i++) {
            const struct plan_cand *c = &p->c[idx[i]];
            if ((int)c->status != st)
                continue;
            char ct[96];
            cand_text(c, ct, sizeof ct);
            fprintf(f, "  %s (first: %s): %s\n", status_names[st], ct, c->why);
            break;
        }
}

void plan_report_text(const struct plan *p, unsigned top, FILE *f)
{
    fprintf(f, "plan: %s%s%s, %s, %u requests (seed %llu)\n", p->model_path, p->stack_name[0] ? " with " : "",
            p->stack_name, p->workload, p->reqs->n, (unsigned long long)p->seed);
    sla_text(p, f);
    unsigned *idx = sim_xcalloc(p->n ? p->n : 1, sizeof *idx);
    for (unsigned h = 0; h < p->nhw; h++)
        hw_text(p, h, top, idx, f);
    unsigned m = plan_rank(p, -1, idx);
    const struct plan_cand *b = m > 0 ? &p->c[idx[0]] : NULL;
    char ct[96], wt[128];
    if (b != NULL && b->meets) {
        cand_text(b, ct, sizeof ct);
        fprintf(f, "\nbest: %s, %s: %.1f output tokens/s per device, %.1f a user; TTFT p90 %.1f ms, "
                   "TPOT p90 %.2f ms", p->hw_name[b->hw], ct, b->tok_s_gpu, b->tok_s_user, b->sm.ttft.p90 * 1e3,
                b->sm.tpot.p90 * 1e3);
        if (b->sm.has_energy)
            fprintf(f, "; %.4f J an output token", b->sm.j_per_out_token);
        fprintf(f, "\n");
    } else if (b != NULL && b->status == PLAN_RAN) {
        cand_text(b, ct, sizeof ct);
        worst_text(p, b, wt, sizeof wt);
        fprintf(f, "\nno configuration meets the SLA; closest: %s, %s: %s\n", p->hw_name[b->hw], ct, wt);
    } else {
        fprintf(f, "\nno configuration ran\n");
    }
    free(idx);
}

/* ---- files ---- */

/* Appends ",x" with 9 significant digits (nothing for a NaN: the field is empty). */
static void put_num(struct sb *b, double x)
{
    char nb[40];
    sb_putn(b, ",", 1);
    if (isfinite(x)) {
        numfmt_gp(nb, sizeof nb, x, 9);
        sb_puts(b, nb);
    }
}

static void put_lat(struct sb *b, const struct serve_lat *l)
{
    put_num(b, l->mean);
    put_num(b, l->p50);
    put_num(b, l->p90);
    put_num(b, l->p99);
}

/* The start of a row: hw,tp,max_num_seqs,chunked_prefill */
static void put_key(struct sb *b, const struct plan *p, const struct plan_cand *c)
{
    csv_field(b, p->hw_name[c->hw]);
    sb_printf(b, ",%u,%u,%s", c->tp, c->sched.max_num_seqs, c->sched.chunked_prefill ? "on" : "off");
}

static int write_sb(const char *path, const struct sb *b, struct diag *d)
{
    struct afile a;
    if (afile_open(&a, path, d) != 0)
        return -1;
    fwrite(b->s, 1, b->n, a.f);
    return afile_commit(&a, d);
}

int plan_report_csv(const struct plan *p, const char *path, struct diag *d)
{
    struct sb b = {0};
    sb_puts(&b, "hw,tp,max_num_seqs,chunked_prefill,max_batched_tokens,status,meets_sla,sla_violation,"
                "output_tokens_per_s,output_tokens_per_s_per_device,tokens_per_s_per_user,requests_per_s,"
                "ttft_mean_s,ttft_p50_s,ttft_p90_s,ttft_p99_s,tpot_mean_s,tpot_p50_s,tpot_p90_s,tpot_p99_s,"
                "e2e_mean_s,e2e_p50_s,e2e_p90_s,e2e_p99_s,preemptions,kv_max_occupancy,on_front,"
                "joules_per_output_token,why\n");
    for (unsigned i = 0; i < p->n; i++) {
        const struct plan_cand *c = &p->c[i];
        put_key(&b, p, c);
        sb_printf(&b, ",%u,%s", c->sched.max_batched_tokens,
                  c->status == PLAN_RAN ? "ran" : c->status == PLAN_NOFIT ? "nofit" : "failed");
        if (c->status == PLAN_RAN) {
            sb_printf(&b, ",%d", c->meets);
            put_num(&b, p->sla.n ? c->violation : (double)NAN);
            put_num(&b, c->sm.out_tok_per_s);
            put_num(&b, c->tok_s_gpu);
            put_num(&b, c->tok_s_user);
            put_num(&b, c->sm.req_per_s);
            put_lat(&b, &c->sm.ttft);
            put_lat(&b, &c->sm.tpot);
            put_lat(&b, &c->sm.e2e);
            sb_printf(&b, ",%llu", (unsigned long long)c->preemptions);
            put_num(&b, c->sm.kv_max_occupancy);
            sb_printf(&b, ",%d", c->on_front);
            if (c->sm.has_energy)
                put_num(&b, c->sm.j_per_out_token);
            else
                sb_putn(&b, ",", 1);
            sb_putn(&b, ",\n", 2);
        } else {
            sb_puts(&b, ",0,,,,,,,,,,,,,,,,,,,0,");
            sb_putn(&b, ",", 1);
            csv_field(&b, c->why);
            sb_putn(&b, "\n", 1);
        }
    }
    int rc = write_sb(path, &b, d);
    free(b.s);
    return rc;
}

/* Hardware h's front in rising tok_s_user (ties by candidate order) into idx: how many. */
static unsigned front_of(const struct plan *p, unsigned h, unsigned *idx)
{
    unsigned m = 0;
    for (unsigned i = 0; i < p->n; i++)
        if (p->c[i].hw == h && p->c[i].on_front) {
            unsigned k = m++;
            for (; k > 0 && p->c[idx[k - 1]].tok_s_user > p->c[i].tok_s_user; k--)
                idx[k] = idx[k - 1];
            idx[k] = i;
        }
    return m;
}

int plan_report_front(const struct plan *p, const char *path, struct diag *d)
{
    struct sb b = {0};
    sb_puts(&b, "hw,tp,max_num_seqs,chunked_prefill,tokens_per_s_per_user,output_tokens_per_s_per_device,"
                "ttft_p90_s,tpot_p90_s,meets_sla\n");
    unsigned *idx = sim_xcalloc(p->n ? p->n : 1, sizeof *idx);
    for (unsigned h = 0; h < p->nhw; h++) {
        unsigned m = front_of(p, h, idx);
        for (unsigned i = 0; i < m; i++) {
            const struct plan_cand *c = &p->c[idx[i]];
            put_key(&b, p, c);
            put_num(&b, c->tok_s_user);
            put_num(&b, c->tok_s_gpu);
            put_num(&b, c->sm.ttft.p90);
            put_num(&b, c->sm.tpot.p90);
            sb_printf(&b, ",%d\n", c->meets);
        }
    }
    free(idx);
    int rc = write_sb(path, &b, d);
    free(b.s);
    return rc;
}

static cJSON *json_cand(const struct plan *p, const struct plan_cand *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "hw", p->hw_name[c->hw]);
    jout_add_num(o, "tp", c->tp);
    jout_add_num(o, "max_num_seqs", c->sched.max_num_seqs);
    cJSON_AddBoolToObject(o, "chunked_prefill", c->sched.chunked_prefill);
    jout_add_num(o, "max_batched_tokens", c->sched.max_batched_tokens);
    cJSON_AddStringToObject(o, "status", c->status == PLAN_RAN ? "ran" : c->status == PLAN_NOFIT ? "nofit"
                                                                                                 : "failed");
    if (c->status != PLAN_RAN) {
        cJSON_AddStringToObject(o, "why", c->why);
        return o;
    }
    cJSON_AddBoolToObject(o, "meets_sla", c->meets);
    if (p->sla.n)
        jout_add_num(o, "sla_violation", c->violation);
    jout_add_num(o, "output_tokens_per_s", c->sm.out_tok_per_s);
    jout_add_num(o, "output_tokens_per_s_per_device", c->tok_s_gpu);
    jout_add_num(o, "tokens_per_s_per_user", c->tok_s_user);
    jout_add_num(o, "requests_per_s", c->sm.req_per_s);
    cJSON_AddItemToObject(o, "ttft_s", serve_json_lat(&c->sm.ttft));
    cJSON_AddItemToObject(o, "tpot_s", serve_json_lat(&c->sm.tpot));
    cJSON_AddItemToObject(o, "e2e_s", serve_json_lat(&c->sm.e2e));
    jout_add_num(o, "preemptions", (double)c->preemptions);
    cJSON_AddBoolToObject(o, "on_front", c->on_front);
    if (c->sm.has_energy)
        jout_add_num(o, "joules_per_output_token", c->sm.j_per_out_token);
    return o;
}

int plan_report_json(const struct plan *p, const char *path, struct diag *d)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "strata_plan", REPORT_FORMAT);
    cJSON_AddStringToObject(root, "model", p->model_path);
    cJSON_AddStringToObject(root, "stack", p->stack_name);
    cJSON *w = cJSON_AddObjectToObject(root, "workload");
    cJSON_AddStringToObject(w, "arrivals", p->workload);
    jout_add_num(w, "requests", p->reqs->n);
    jout_add_num(w, "seed", (double)p->seed);
    cJSON *sla = cJSON_AddObjectToObject(root, "sla_s");
    for (unsigned k = 0; k < p->sla.n; k++) {
        char key[16];
        plan_sla_key(&p->sla.t[k], key, sizeof key);
        jout_add_num(sla, key, p->sla.t[k].target_s);
    }
    cJSON *hw = cJSON_AddArrayToObject(root, "hardware");
    for (unsigned h = 0; h < p->nhw; h++)
        cJSON_AddItemToArray(hw, cJSON_CreateString(p->hw_name[h]));
    cJSON *cs = cJSON_AddArrayToObject(root, "candidates");
    for (unsigned i = 0; i < p->n; i++)
        cJSON_AddItemToArray(cs, json_cand(p, &p->c[i]));
    unsigned *idx = sim_xcalloc(p->n ? p->n : 1, sizeof *idx);
    unsigned m = plan_rank(p, -1, idx);
    const struct plan_cand *b = m > 0 && p->c[idx[0]].status == PLAN_RAN ? &p->c[idx[0]] : NULL;
    cJSON_AddStringToObject(root, "verdict", b == NULL ? "none ran" : b->meets ? "meets" : "no configuration "
                                                                                           "meets the SLA");
    /* the best when one meets the SLA, else the closest */
    if (b != NULL)
        cJSON_AddItemToObject(root, b->meets ? "best" : "closest", json_cand(p, b));
    free(idx);
    int rc = jout_write(root, path, d);
    cJSON_Delete(root);
    return rc;
}
