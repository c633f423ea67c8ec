/* validate.c: `strata validate`: predictions against public measurements.
 *
 * Reads a measurements CSV with the columns of
 * ../shared/data/measurements-calibration.csv plus three of our own:
 *   config            config file stem under --configs (e.g. nvidia-a100-sxm-80gb)
 *   spec              the workload, machine-readable: "KIND key=value ..." (docs/validation.md)
 *   host_overhead_us  per-call host time the measuring harness includes
 *                     (Python dispatch + synchronize); 0 for device-timed rows
 * Each row's workload is built as a trace, run on its config, converted to
 * the row's metric and compared.  Rows without config/spec are counted as
 * skipped.  Prints per row and, per group (id prefix before '-'), the
 * median and worst absolute error.  GSL does the statistics.
 */
#include "validate.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afile.h"
#include "check.h"
#include "csv.h"
#include "jsonout.h"
#include "llm.h"
#include "numfmt.h"
#include "textline.h"
#include "coll.h"
#include "run.h"
#include "system.h"
#include "trace.h"
#include "version.h"
#include "workload.h"

#define VAL_MAX_COLS 32
#define VAL_MAX_LINE 8192
#define VAL_MAX_CONFIGS 128  /* configs one CSV may name */

static int convert(const char *metric, const char *unit, const struct hw_config *c,
                   const struct run_result *r, double time_s, const struct wl_info *wi,
                   double tokens, double *out)
{
    double elements = wi->elements;
    if (wi->coll_busfactor > 0 && strcmp(unit, "GB/s") == 0 &&
        (strcmp(metric, "allreduce_busbw") == 0 || strcmp(metric, "busbw") == 0)) {
        *out = wi->coll_bytes / time_s * wi->coll_busfactor / 1e9;
        return 0;
    }
    if (wi->coll_busfactor > 0 && strcmp(unit, "GB/s") == 0 && strcmp(metric, "algbw") == 0) {
        *out = wi->coll_bytes / time_s / 1e9;
        return 0;
    }
    /* ttft: a serving stack's time to first token, the prefill step (the
     * row's spec) with nothing queued before it */
    if (strcmp(metric, "latency") == 0 || strcmp(metric, "ttft") == 0) {
        if (strcmp(unit, "ms") == 0)
            *out = time_s * 1e3;
        else if (strcmp(unit, "us") == 0)
            *out = time_s * 1e6;
        else if (strcmp(unit, "s") == 0)
            *out = time_s;
        else
            return -1;
        return 0;
    }
    if ((strcmp(metric, "achieved_TFLOPs") == 0 || strcmp(metric, "fwd+bwd_TFLOPs") == 0 ||
         strcmp(metric, "fwd_TFLOPs") == 0 || strcmp(metric, "bwd_TFLOPs") == 0) &&
        strcmp(unit, "TFLOP/s") == 0) {
        *out = r->flops / time_s / 1e12;
        return 0;
    }
    if (strcmp(metric, "achieved_TFLOPs_per_chip") == 0 && strcmp(unit, "TFLOP/s/chip") == 0 &&
        wi->model_flops_per_chip > 0) {
        *out = wi->model_flops_per_chip / time_s / 1e12;
        return 0;
    }
    if (strcmp(metric, "element_throughput") == 0 && strcmp(unit, "Gelem/s") == 0 && elements > 0) {
        *out = elements / time_s / 1e9;
        return 0;
    }
    if ((strcmp(metric, "decode_throughput") == 0 || strcmp(metric, "prefill_throughput") == 0) &&
        strcmp(unit, "tokens/s") == 0 && tokens > 0) {
        *out = tokens / time_s;
        return 0;
    }
    /* an llm row's sequences a second (a vision encoder's images: timm's
     * infer_samples_per_sec) */
    if (strcmp(metric, "samples_throughput") == 0 && strcmp(unit, "samples/s") == 0 && wi->samples > 0) {
        *out = wi->samples / time_s;
        return 0;
    }
    /* energy (docs/energy.md): the run's joules a token, and the first
     * device's average power, where the chip has a power block */
    if (strcmp(metric, "energy_per_token") == 0 && strcmp(unit, "J/token") == 0 && tokens > 0 &&
        r->has_energy) {
        *out = run_energy_total(r) / tokens;
        return 0;
    }
    /* the same above the board's idle power: what the work itself spent
     * (a measurement of it subtracts a measured idle) */
    if (strcmp(metric, "dynamic_energy_per_token") == 0 && strcmp(unit, "J/token") == 0 &&
        tokens > 0 && r->has_energy) {
        *out = (run_energy_total(r) - r->energy_j[RUN_E_STATIC]) / tokens;
        return 0;
    }
    if (strcmp(metric, "power") == 0 && strcmp(unit, "W") == 0 && r->has_energy) {
        *out = r->dev_energy_j[0] / time_s;
        return 0;
    }
    if (strcmp(metric, "achieved_dram_bandwidth") == 0 && strcmp(unit, "GB/s") == 0) {
        *out = r->bytes[c->lv_dram] / time_s / 1e9;
        return 0;
    }
    return -1;
}

int validate_id_match(const char *list, const char *id)
{
    if (list == NULL || list[0] == '\0')
        return 1;
    for (const char *p = list; *p != '\0';) {
        size_t n = strcspn(p, ",");
        if (n > 0 && p[n - 1] == '*' ? strncmp(id, p, n - 1) == 0
                                    : (strlen(id) == n && strncmp(id, p, n) == 0))
            return 1;
        p += n;
        if (*p == ',')
            p++;
    }
    return 0;
}

static int col_index(char **hdr, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(hdr[i], name) == 0)
            return i;
    return -1;
}

/* A config column names a chip config, or a system file as systems/NAME;
 * each is loaded once. */
struct val_cfg {
    char name[64];
    struct hw_system sys;
    int chip;                   /* a chip config (run_trace), not a system */
};

/* The CSV being read: its columns by name (-1: absent). */
struct val_csv {
    const struct validate_opts *vo;
    int nh;
    int c_id, c_metric, c_value, c_unit, c_cfg, c_spec, c_host;
    struct val_cfg *cfgs;
    int ncfg;
};

/* The header line: the columns, each named once.  0, or -1 with *d. */
static int val_header(struct val_csv *v, FILE *f, char *hline, struct diag *d)
{
    const struct validate_opts *vo = v->vo;
    char *hdr[VAL_MAX_COLS];
    size_t len;
    enum textline tl = textline_read(f, hline, VAL_MAX_LINE, &len);
    if (tl != TEXTLINE_OK)
        return tl == TEXTLINE_EOF ? diag_set(d, DIAG_E_PARSE, vo->data, 1, "", "empty file")
             : tl == TEXTLINE_LONG ? diag_set(d, DIAG_E_RANGE, vo->data, 1, "", "line longer than %d bytes",
                                              VAL_MAX_LINE - 2)
                                   : diag_set(d, DIAG_E_PARSE, vo->data, 1, "", "%s", textline_what(tl));
    int nh = csv_split(hline, hdr, VAL_MAX_COLS);
    v->nh = nh;
    v->c_id = col_index(hdr, nh, "id"), v->c_metric = col_index(hdr, nh, "metric");
    v->c_value = col_index(hdr, nh, "value"), v->c_unit = col_index(hdr, nh, "unit");
    v->c_cfg = col_index(hdr, nh, "config"), v->c_spec = col_index(hdr, nh, "spec");
    v->c_host = col_index(hdr, nh, "host_overhead_us");
    /* two columns of one name: which one a reader takes differs (pandas
     * renames the second "value.1", csv.DictReader keeps the last) */
    for (int i = 0; i < nh; i++)
        for (int j = i + 1; j < nh; j++)
            if (hdr[i][0] != '\0' && strcmp(hdr[i], hdr[j]) == 0)
                return diag_set(d, DIAG_E_PARSE, vo->data, 1, hdr[i],
                                "column named twice (columns %d and %d)", i + 1, j + 1);
    if (nh < 0 || v->c_id < 0 || v->c_metric < 0 || v->c_value < 0 || v->c_unit < 0)
        return diag_set(d, DIAG_E_MISSING, vo->data, 1, "header",
                        "needs the columns id, metric, value, unit (and config, spec to be run)");
    return 0;
}

/* A row's own fields into *row and *host_s (seconds).  0, or -1 with *d. */
static int val_fields(const struct val_csv *v, char **col, int lineno, struct val_row *row,
                      double *host_s, struct diag *d)
{
    const struct validate_opts *vo = v->vo;
    memset(row, 0, sizeof *row);
    snprintf(row->id, sizeof row->id, "%s", col[v->c_id]);
    /* group: id prefix and workload kind, e.g. "LLMC/gemm"; LLM rows by
     * phase ("GPTFAST/decode") */
    const char *spec = col[v->c_spec], *id = col[v->c_id];
    const char *ph = strstr(spec, "phase=");
    const char *im = strstr(spec, "impl=");
    if (strncmp(spec, "attention ", 10) == 0 && im != NULL)   /* per implementation */
        snprintf(row->group, sizeof row->group, "%.*s/attention-%.*s", (int)strcspn(id, "-"),
                 id, (int)strcspn(im + 5, " "), im + 5);
    else if (strncmp(spec, "llm ", 4) == 0 && ph != NULL) {  /* tensor-parallel apart */
        const char *tpk = strstr(spec, " tp=");
        snprintf(row->group, sizeof row->group, "%.*s/%.*s%s", (int)strcspn(id, "-"), id,
                 (int)strcspn(ph + 6, " "), ph + 6,
                 tpk != NULL && strtoull(tpk + 4, NULL, 10) > 1 ? "-tp" : "");
    } else {
        snprintf(row->group, sizeof row->group, "%.*s/%.*s", (int)strcspn(id, "-"),
                 id, (int)strcspn(spec, " "), spec);
    }
    snprintf(row->metric, sizeof row->metric, "%s", col[v->c_metric]);
    snprintf(row->unit, sizeof row->unit, "%s", col[v->c_unit]);
    snprintf(row->config, sizeof row->config, "%s", col[v->c_cfg]);
    snprintf(row->spec, sizeof row->spec, "%s", spec);
    if (num_parse(col[v->c_value], &row->measured) != 0 || !(row->measured > 0))
        return diag_set(d, DIAG_E_RANGE, vo->data, lineno, "value",
                        "expected a positive number, got '%s'", col[v->c_value]);
    *host_s = 0;
    if (v->c_host >= 0 && col[v->c_host][0] != '\0') {
        if (num_parse(col[v->c_host], host_s) != 0 || !(*host_s >= 0))
            return diag_set(d, DIAG_E_RANGE, vo->data, lineno, "host_overhead_us",
                            "expected a number >= 0, got '%s'", col[v->c_host]);
        *host_s *= 1e-6;
    }
    return 0;
}

/* The row's config, loaded on first use: its index in v->cfgs, or -1 with *d. */
static int val_config(struct val_csv *v, const char *name, int lineno, struct diag *d)
{
    const struct validate_opts *vo = v->vo;
    int ci;
    for (ci = 0; ci < v->ncfg; ci++)
        if (strcmp(v->cfgs[ci].name, name) == 0)
            return ci;
    if (v->ncfg == VAL_MAX_CONFIGS)
        return diag_set(d, DIAG_E_RANGE, vo->data, lineno, "config", "more than %d configs",
                        VAL_MAX_CONFIGS);
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.yaml", vo->configs, name);
    enum hw_kind kind;
    if (hw_load(path, vo->sets, &v->cfgs[ci].sys, &kind, d) != 0) {
        if (d->line == 0 && d->code == DIAG_E_IO) {
            diag_set(d, DIAG_E_UNKNOWN_NAME, vo->data, lineno, "config",
                     "no config '%s' (looked for %s)", name, path);
        }
        return -1;
    }
    snprintf(v->cfgs[ci].name, sizeof v->cfgs[ci].name, "%s", name);
    v->cfgs[ci].chip = kind == HW_CHIP;
    v->ncfg++;
    return ci;
}

/* Model FLOPs per chip: every op but the recomputed forward's (gen llm
 * names those ".recompute"), over the devices with ops. */
static double model_flops_per_chip(const struct trace *t, const struct run_result *r)
{
    double mf = 0;
    for (uint32_t i = 0; i < t->nops; i++) {
        const char *id = op_id(t, &t->ops[i]);
        size_t idn = strlen(id);
        if (idn < 10 || strcmp(id + idn - 10, ".recompute") != 0)
            mf += run_op_body(r, i)->flops;
    }
    uint32_t chips = t->ndevices > t->nmirrors ? t->ndevices - t->nmirrors : 1;
    return mf / chips;
}

/* Builds row's workload, runs it on config cfg and converts the result to
 * the row's metric (row->predicted).  0, or -1 with *d. */
static int val_predict(const struct val_csv *v, const struct val_cfg *cfg, int lineno, double host_s,
                       struct val_row *row, uint64_t *events, struct diag *d)
{
    const struct validate_opts *vo = v->vo;
    struct trace t;
    struct wl_info wi;
    memset(&wi, 0, sizeof wi);
    char sdir[1024];
    snprintf(sdir, sizeof sdir, "%s/stacks", vo->configs);
    wi.stacks_dir = sdir;
    wi.stack_override = vo->stack_override;
    if (wl_build(row->spec, vo->root, vo->data, lineno, &t, &wi, d) != 0)
        return -1;
    if (wi.has_stack && stack_apply_sets(&wi.stack, vo->sets, d) != 0) {    /* stack.KEY sets */
        trace_free(&t);
        return -1;
    }
    struct run_result r;
    /* the stack the row names drives a copy of the chip */
    struct hw_system ssys = cfg->sys;
    if (wi.has_stack && stack_apply_chip(&wi.stack, &ssys.chip, sdir, d) != 0) {
        char msg[sizeof d->msg];
        snprintf(msg, sizeof msg, "%s", d->msg);
        trace_free(&t);
        return diag_set(d, d->code, vo->data, lineno, "spec", "stack: %s", msg);
    }
    if (wi.clock_mhz > 0) {     /* the clock the measurement read */
        double sc = wi.clock_mhz * 1e6 / ssys.chip.clock_hz;
        if (sc > 1.0 + 1e-9) {
            trace_free(&t);
            return diag_set(d, DIAG_E_RANGE, vo->data, lineno, "spec",
                            "clock_mhz %g is above %s's clock, %g MHz (the clock its rates are given at)",
                            wi.clock_mhz, row->config, ssys.chip.clock_hz / 1e6);
        }
        if (sc < 1.0)
            cfg_at_clock(&ssys.chip, sc);
    }
    const struct hw_config *ccfg = &ssys.chip;
    struct run_opts ro = {.sustained = wi.sustained};
    if (wi.sustained && !(ccfg->has_power && ccfg->power_limit_w > 0)) {
        diag_set(d, DIAG_E_UNSUPPORTED, vo->data, lineno, "spec",
                 "sustained=1 needs the chip's power limit, and %s has no power block with "
                 "limit_W (docs/energy.md)", row->config);
        trace_free(&t);
        return -1;
    }
    if ((cfg->chip ? run_trace_opts(ccfg, &t, &ro, &r, d)
                   : run_system_opts(&ssys, &t, &ro, &r, d)) != 0) {
        trace_free(&t);
        return -1;
    }
    wi.model_flops_per_chip = model_flops_per_chip(&t, &r);
    double time_s = (double)r.total_ps * 1e-12 + host_s;
    double issue_s = (double)wi.gpus_per_thread * (double)ccfg->coll_overhead_ps * 1e-12;
    time_s += issue_s;      /* nccl-tests' one thread issuing for its GPUs (collbench.h) */
    int rc = 0;
    if (convert(row->metric, row->unit, ccfg, &r, time_s, &wi, t.tokens, &row->predicted) != 0)
        rc = diag_set(d, DIAG_E_UNSUPPORTED, vo->data, lineno, "metric",
                      "cannot predict metric '%s' in '%s' for this workload", row->metric, row->unit);
    else
        *events += r.events;
    run_result_free(&r);
    trace_free(&t);
    row->err = row->predicted / row->measured - 1.0;
    return rc;
}

/* One data line (after the header): 0 (a row appended, or the line
 * skipped), or -1 with *d. */
static int val_line(struct val_csv *v, char *line, size_t len, int lineno, size_t *cap,
                    struct validate_result *res, struct diag *d)
{
    const struct validate_opts *vo = v->vo;
    char *col[VAL_MAX_COLS];
    if (strspn(line, " \t\r\n") == len)
        return 0;
    int n = csv_split(line, col, VAL_MAX_COLS);
    if (n < 0)
        return diag_set(d, DIAG_E_PARSE, vo->data, lineno, "", "malformed CSV (quotes or too many columns)");
    if (n != v->nh)
        return diag_set(d, DIAG_E_PARSE, vo->data, lineno, "",
                        "%d columns, the header has %d", n, v->nh);
    if (v->c_cfg < 0 || v->c_spec < 0 || col[v->c_cfg][0] == '\0' || col[v->c_spec][0] == '\0') {
        res->skipped++;
        return 0;
    }
    if ((vo->only_config != NULL && strcmp(col[v->c_cfg], vo->only_config) != 0) ||
        (vo->skip_config != NULL && strcmp(col[v->c_cfg], vo->skip_config) == 0) ||
        !validate_id_match(vo->ids, col[v->c_id]))
        return 0;
    struct val_row row;
    double host_s;
    if (val_fields(v, col, lineno, &row, &host_s, d) != 0)
        return -1;
    struct wl_spec sp;          /* the stack the spec names, read as wl_build reads it */
    char kind[32];
    if (wl_spec_parse(&sp, row.spec, kind, sizeof kind, vo->data, lineno, d) != 0)
        return -1;
    const char *st = wl_spec_get(&sp, "stack");
    snprintf(row.stack, sizeof row.stack, "%s", st != NULL ? st : "");
    if ((vo->stack_override != NULL && row.stack[0] == '\0') ||
        (vo->only_stack != NULL && strcmp(row.stack, vo->only_stack) != 0))
        return 0;
    int ci = val_config(v, row.config, lineno, d);
    if (ci < 0)
        return -1;
    if (val_predict(v, &v->cfgs[ci], lineno, host_s, &row, &res->events, d) != 0) {
        if (vo->stack_override == NULL || d->code != DIAG_E_UNSUPPORTED)
            return -1;
        res->refused++;     /* the other stack cannot run this row's chip or step */
        memset(d, 0, sizeof *d);
        return 0;
    }
    if (res->nrows == *cap) {
        *cap *= 2;
        res->rows = sim_xrealloc(res->rows, *cap * sizeof *res->rows);
    }
    res->rows[res->nrows++] = row;
    return 0;
}

int validate_run(const struct validate_opts *vo, struct validate_result *res, struct diag *d)
{
    memset(res, 0, sizeof *res);
    FILE *f = fopen(vo->data, "r");
    afile_note_input(f);
    if (f == NULL)
        return diag_set(d, DIAG_E_IO, vo->data, 0, "", "cannot read: %s", strerror(errno));
    char *line = sim_xcalloc(VAL_MAX_LINE, 1);
    char *hline = sim_xcalloc(VAL_MAX_LINE, 1);
    int rc = 0, lineno = 1;
    struct val_csv v;
    memset(&v, 0, sizeof v);
    v.vo = vo;
    v.cfgs = sim_xcalloc(VAL_MAX_CONFIGS, sizeof *v.cfgs);
    rc = val_header(&v, f, hline, d);
    size_t cap = 64, len;
    enum textline tl;
    if (rc == 0)
        res->rows = sim_xcalloc(cap, sizeof *res->rows);
    while (rc == 0 && (tl = textline_read(f, line, VAL_MAX_LINE, &len)) != TEXTLINE_EOF) {
        lineno++;
        if (tl == TEXTLINE_LONG)
            rc = diag_set(d, DIAG_E_RANGE, vo->data, lineno, "", "line longer than %d bytes",
                          VAL_MAX_LINE - 2);
        else if (tl != TEXTLINE_OK)
            rc = diag_set(d, DIAG_E_PARSE, vo->data, lineno, "", "%s", textline_what(tl));
        else
            rc = val_line(&v, line, len, lineno, &cap, res, d);
    }
    if (rc == 0 && ferror(f))
        rc = diag_set(d, DIAG_E_IO, vo->data, lineno, "", "read error");
    fclose(f);
    free(line);
    free(hline);
    for (int i = 0; i < v.ncfg; i++)
        if (!v.cfgs[i].chip)
            sys_free(&v.cfgs[i].sys);
    free(v.cfgs);
    if (rc != 0)
        validate_free(res);
    return rc;
}

void validate_free(struct validate_result *r)
{
    free(r->rows);
    memset(r, 0, sizeof *r);
}

struct validate_group *validate_groups(const struct validate_result *r, int *ngroups)
{
    /* at most a group a row: every group is counted, however many */
    struct validate_group *g = sim_xcalloc(r->nrows > 0 ? r->nrows : 1, sizeof *g);
    int n = 0;
    for (uint32_t i = 0; i < r->nrows; i++) {
        int k;
        for (k = 0; k < n; k++)
            if (strcmp(g[k].name, r->rows[i].group) == 0)
                break;
        if (k == n) {
            snprintf(g[n].name, sizeof g[n].name, "%s", r->rows[i].group);
            n++;
        }
        g[k].count++;
    }
    for (int k = 0; k < n; k++) {
        double *e = sim_xcalloc(g[k].count, sizeof *e);
        size_t m = 0;
        for (uint32_t i = 0; i < r->nrows; i++)
            if (strcmp(g[k].name, r->rows[i].group) == 0)
                e[m++] = fabs(r->rows[i].err);
        gsl_sort(e, 1, m);
        g[k].median_abs_err = gsl_stats_median_from_sorted_data(e, 1, m);
        g[k].worst_abs_err = e[m - 1];
        free(e);
    }
    *ngroups = n;
    return g;
}

int validate_json(const struct validate_result *r, const char *path, struct diag *d)
{
    cJSON *root = cJSON_CreateObject();
    jout_add_num(root, "strata_validate", REPORT_FORMAT);
    cJSON_AddStringToObject(root, "version", STRATA_VERSION);
    cJSON *rows = cJSON_AddArrayToObject(root, "rows");
    for (uint32_t i = 0; i < r->nrows; i++) {
        const struct val_row *w = &r->rows[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "id", w->id);
        cJSON_AddStringToObject(j, "group", w->group);
        cJSON_AddStringToObject(j, "config", w->config);
        cJSON_AddStringToObject(j, "spec", w->spec);
        cJSON_AddStringToObject(j, "metric", w->metric);
        cJSON_AddStringToObject(j, "unit", w->unit);
        jout_add_num(j, "predicted", w->predicted);
        jout_add_num(j, "measured", w->measured);
        jout_add_num(j, "error", w->err);
        cJSON_AddItemToArray(rows, j);
    }
    int ng;
    struct validate_group *g = validate_groups(r, &ng);
    cJSON *groups = cJSON_AddObjectToObject(root, "groups");
    for (int k = 0; k < ng; k++) {
        cJSON *j = cJSON_AddObjectToObject(groups, g[k].name);
        jout_add_num(j, "rows", g[k].count);
        jout_add_num(j, "median_abs_error", g[k].median_abs_err);
        jout_add_num(j, "worst_abs_error", g[k].worst_abs_err);
    }
    free(g);
    jout_add_num(root, "skipped", r->skipped);
    int rc = jout_write(root, path, d);
    cJSON_Delete(root);
    return rc;
}
