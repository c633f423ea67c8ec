/* report_text.c: the terminal summary of a run (report_text.h). */
#include "report_text.h"

#include <stdlib.h>
#include <string.h>

#include "cfgset.h"
#include "check.h"
#include "numfmt.h"

static int cmp_desc_time(const void *a, const void *b, void *ctx);

/* qsort_r is not C17; sort an index array with a small insertion-merge. */
static void sort_ops_by_time(const struct run_result *r, uint32_t *idx, uint32_t n)
{
    /* bottom-up merge sort, stable, deterministic */
    uint32_t *tmp = sim_xcalloc(n ? n : 1, sizeof *tmp);
    for (uint32_t w = 1; w < n; w *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * w) {
            uint32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            uint32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = cmp_desc_time(&idx[j], &idx[i], (void *)(uintptr_t)r) < 0 ? idx[j++] : idx[i++];
            while (i < mid)
                tmp[k++] = idx[i++];
            while (j < hi)
                tmp[k++] = idx[j++];
        }
        memcpy(idx, tmp, n * sizeof *idx);
    }
    free(tmp);
}

static int cmp_desc_time(const void *a, const void *b, void *ctx)
{
    const struct run_result *r = (const struct run_result *)(uintptr_t)ctx;
    const struct op_result *x = run_op_body(r, *(const uint32_t *)a), *y = run_op_body(r, *(const uint32_t *)b);
    uint64_t tx = x->end_ps - x->start_ps, ty = y->end_ps - y->start_ps;
    if (tx != ty)
        return tx > ty ? -1 : 1;
    return 0;
}

/* "energy ...": the run's energy, where it went, and the average power of
 * a simulated device against the board's limit (docs/energy.md).  Starts
 * on the line after "bytes moved". */
static void report_energy_line(const struct report_ctx *c, FILE *out)
{
    const struct run_result *r = c->r;
    const struct hw_config *cfg = c->cfg;
    double total = (double)r->total_ps * REPORT_PS, e = run_energy_total(r);
    uint32_t ndev = r->ndevices - c->t->nmirrors;
    char b1[32];
    numfmt_si(b1, sizeof b1, e, "J");
    fprintf(out, "\n  energy         %s (", b1);
    const char *sep = "";
    for (unsigned k = 0; k < HW_MAX_LEVELS + 2; k++) {
        if (k < HW_MAX_LEVELS && k >= cfg->nlevels)
            continue;
        double f = e > 0 ? r->energy_j[k] / e : 0;
        if (f < 0.0005)
            continue;
        fprintf(out, "%s%s %.1f%%", sep,
                k == RUN_E_PIPES ? "pipes" : k == RUN_E_STATIC ? "idle" : cfg->level[k].name, 100 * f);
        sep = ", ";
    }
    fprintf(out, ")");
    /* a token's energy: every device's, the mirrors' being their twins' */
    if (c->tokens > 0 && ndev > 0)
        fprintf(out, ", %.4g J a token", e * (double)r->ndevices / ndev / c->tokens);
    if (total > 0 && ndev > 0) {
        double w = e / total / ndev, hot = run_hot_power(r, c->t, NULL);
        fprintf(out, "\n  power          %.0f W a device on average", w);
        if (ndev > 1)
            fprintf(out, ", %.0f W the hottest", hot);
        if (r->clock_scale > 0 && r->clock_scale < 1)
            fprintf(out, "; sustained: the %.0f W limit holds the clock at %.0f MHz (%.1f%% of %.0f; "
                         "%u runs to find it)%s",
                    cfg->power_limit_w, cfg->clock_hz * r->clock_scale / 1e6, 100 * r->clock_scale,
                    cfg->clock_hz / 1e6, r->power_runs,
                    r->power_floor ? "; still over the limit at strata's lowest clock" : "");
        else if (r->clock_scale > 0)
            fprintf(out, "; sustained: under the %.0f W limit at %.0f MHz", cfg->power_limit_w,
                    cfg->clock_hz / 1e6);
        else if (cfg->power_limit_w > 0)
            fprintf(out, hot > cfg->power_limit_w
                             ? " (over its %.0f W limit: run --sustained for the clock a run "
                               "repeated for seconds would hold)"
                             : " (limit %.0f W)",
                    cfg->power_limit_w);
    }
}

/* The lines above the op table: what ran where, its time, work, bytes,
 * energy and where the time went. */
static void text_summary(const struct report_ctx *c, FILE *out)
{
    const struct run_result *r = c->r;
    const struct trace *t = c->t;
    double total = (double)r->total_ps * REPORT_PS;
    char b1[32], b2[32];
    numfmt_time(b1, sizeof b1, total);
    if (c->sys != NULL)
        fprintf(out, "strata %s: %s on %s (%u x %s, %u links)\n", STRATA_VERSION, t->path,
                c->sys->name, c->sys->ndevices, cfg_label(c->cfg), c->sys->nlinks);
    else
        fprintf(out, "strata %s: %s on %s\n", STRATA_VERSION, t->path, cfg_label(c->cfg));
    if (c->sys == NULL && t->ndevices > 1)  /* the system a chip config implies (sys_from_chip) */
        fprintf(out, "  %u devices     %u x %s, each on its own %s to one non-blocking switch and its %s "
                     "to the host (a system file gives the real topology: strata list systems)\n",
                t->ndevices, t->ndevices, cfg_label(c->cfg),
                c->cfg->lv_peer >= 0 ? c->cfg->level[c->cfg->lv_peer].name : "(no peer link)",
                c->cfg->level[c->cfg->lv_host].name);
    fprintf(out, "  total time     %s", b1);
    if (c->tokens > 0 && total > 0)
        fprintf(out, "   (%.1f tokens/s)", c->tokens / total);
    fprintf(out, "\n");
    uint32_t kernels = 0;
    for (uint32_t i = 0; i < r->nops; i++)
        kernels += run_op_body(r, i)->kernels;
    fprintf(out, "  ops            %u (%u kernels, %llu engine events)\n", r->nops, kernels,
            (unsigned long long)r->events);
    numfmt_si(b1, sizeof b1, r->flops, "FLOP");
    numfmt_si(b2, sizeof b2, total > 0 ? r->flops / total : 0, "FLOP/s");
    fprintf(out, "  work           %s (%s achieved)\n", b1, b2);
    fprintf(out, "  bytes moved   ");
    const struct hw_config *cfg = c->cfg;
    for (unsigned l = 0; l < cfg->nlevels; l++) {
        if (r->bytes[l] <= 0)
            continue;
        numfmt_si(b1, sizeof b1, r->bytes[l], "B");
        numfmt_si(b2, sizeof b2, total > 0 ? r->bytes[l] / total : 0, "B/s");
        fprintf(out, " %s %s (%s)", cfg->level[l].name, b1, b2);
    }
    if (r->has_energy)
        report_energy_line(c, out);
    fprintf(out, "\n  where the time went:");
    for (unsigned k = 0; k <= RUN_IDLE; k++) {
        double f = total > 0 ? r->time_ps[k] * REPORT_PS / total : 0;
        if (f < 0.0005)
            continue;
        fprintf(out, " %s %.1f%%", k >= CAT_STALL && k < CAT_COUNT ? "" : run_cat_name(cfg, k), 100 * f);
        if (k >= CAT_STALL && k < CAT_COUNT)
            fprintf(out, " waiting on %s", run_cat_name(cfg, k));
        double lat = k >= CAT_STALL && k < CAT_COUNT ? r->lat_ps[k - CAT_STALL] * REPORT_PS / total : 0;
        if (lat >= 0.0005)  /* the level below its rate: latency, too few bytes in flight */
            fprintf(out, " (%.1f%% its bandwidth, %.1f%% latency)", 100 * (f - lat), 100 * lat);
        fprintf(out, ";");
    }
    fprintf(out, "\n");
    if (c->nwhatif > 0 && total > 0) {  /* each re-simulated; the one that moves the run most */
        unsigned best = 0;
        fprintf(out, "  what-ifs (re-simulated):");
        for (unsigned k = 0; k < c->nwhatif; k++) {
            fprintf(out, "%s %s %+.1f%%", k ? ";" : "", c->whatif[k].description,
                    100 * (c->whatif[k].total_time_s / total - 1));
            if (c->whatif[k].total_time_s < c->whatif[best].total_time_s)
                best = k;
        }
        char cli[320];
        cfg_sets_list_cli(c->whatif[best].set, cli, sizeof cli);
        fprintf(out, "\n    the most: %s (%s)\n", c->whatif[best].description, cli);
    }
}

/* several devices: each one's time, the link levels being its exposed
 * communication (at most 16 rows; report.json has every device) */
static void text_devices(const struct report_ctx *c, FILE *out)
{
    const struct run_result *r = c->r;
    const struct trace *t = c->t;
    const struct hw_config *cfg = c->cfg;
    double total = (double)r->total_ps * REPORT_PS;
    if (t->nmirrors > 0)
        fprintf(out, "  symmetric ranks: %u of %u devices are mirrors of the simulated ones (no "
                     "ops of their own; their time is their twins')\n",
                t->nmirrors, t->ndevices);
    if (!(r->ndevices > 1 && r->dev_time_ps != NULL && total > 0))
        return;
    /* per kind of time, in the step's unit: compute (busy), host (launch and measured-only
     * ops), memory (waiting on any level that is not a link), each link level (exposed
     * communication), idle; a row adds up to the step */
    double tot = (double)r->total_ps, unit = tot >= 1e9 ? 1e9 : tot >= 1e6 ? 1e6 : 1e3;
    const char *uname = unit == 1e9 ? "ms" : unit == 1e6 ? "us" : "ns";
    char b1[32];
    numfmt_time(b1, sizeof b1, total);
    char head[64];
    snprintf(head, sizeof head, "per device (%s; step %s)", uname, b1);
    fprintf(out, "\n  %-31s %8s %8s %8s", head, "compute", "host", "memory");
    for (unsigned l = 0; l < cfg->nlevels; l++)
        if (cfg->level[l].kind == LK_LINK)
            fprintf(out, " %8.8s", cfg->level[l].name);
    fprintf(out, " %8s %8s\n", "idle", "total");
    uint32_t shown = 0, dv = 0;
    for (; dv < r->ndevices && shown < 16; dv++) {
        if (t->mirror != NULL && t->mirror[dv])
            continue;
        shown++;
        const double *row = r->dev_time_ps + (size_t)dv * (CAT_COUNT + 1);
        double mem = 0, sum = 0;
        for (unsigned k = 0; k <= RUN_IDLE; k++)
            sum += row[k];
        for (unsigned l = 0; l < cfg->nlevels; l++)
            if (cfg->level[l].kind != LK_LINK)
                mem += row[CAT_STALL + l];
        fprintf(out, "  %-31.31s %8.3f %8.3f %8.3f", t->devices[dv], row[CAT_BUSY] / unit,
                (row[CAT_LAUNCH] + row[CAT_MEASURED]) / unit, mem / unit);
        for (unsigned l = 0; l < cfg->nlevels; l++)
            if (cfg->level[l].kind == LK_LINK)
                fprintf(out, " %8.3f", row[CAT_STALL + l] / unit);
        fprintf(out, " %8.3f %8.3f\n", row[RUN_IDLE] / unit, sum / unit);
    }
    if (shown < r->ndevices - t->nmirrors)
        fprintf(out, "  ... %u more devices (report.json \"devices\")\n",
                r->ndevices - t->nmirrors - shown);
    /* ops.csv against the rows: a device's ops' busy_s + launch_s + measured_s + stall_*_s add
     * up to their spans, which is its row less idle when they never overlap; what is more is
     * the time two of its ops (streams) ran at once, counted in each */
    double spans = 0, busy_rows = 0;
    for (uint32_t i = 0; i < r->nops; i++) {
        uint32_t d = t->ops[i].device;
        if (!(t->mirror != NULL && t->mirror[d]))
            spans += (double)run_op_dur_ps(r, i);
    }
    for (uint32_t e = 0; e < r->ndevices; e++)
        if (!(t->mirror != NULL && t->mirror[e]))
            busy_rows += tot - r->dev_time_ps[(size_t)e * (CAT_COUNT + 1) + RUN_IDLE];
    double over = spans - busy_rows;
    if (busy_rows > 0 && over <= 0.0005 * busy_rows)
        fprintf(out, "  ops.csv: a device's ops' busy_s, launch_s, measured_s and stall_*_s add up to "
                     "its row less idle (its ops never overlap)\n");
    else if (busy_rows > 0)
        fprintf(out, "  ops.csv: a device's ops' busy_s, launch_s, measured_s and stall_*_s add up to "
                     "its row less idle plus the time its ops overlapped (streams at once, counted in "
                     "each): %.1f%% more over these devices\n",
                100 * over / busy_rows);
    /* the collectives' time as ops.csv has it (each op's whole span) against the exposed part
     * above (a link level's wait: what overlapped nothing) */
    double coll = 0, exposed = 0;
    uint32_t ndev = r->ndevices - t->nmirrors;
    for (uint32_t i = 0; i < r->nops; i++)
        if (t->ops[i].kind == OP_COLLECTIVE)
            coll += (double)run_op_dur_ps(r, i);
    for (uint32_t e = 0; e < r->ndevices; e++)
        for (unsigned l = 0; l < cfg->nlevels; l++)
            if (cfg->level[l].kind == LK_LINK && !(t->mirror != NULL && t->mirror[e]))
                exposed += r->dev_time_ps[(size_t)e * (CAT_COUNT + 1) + CAT_STALL + l];
    if (coll > 0 && ndev > 0)
        fprintf(out, "  collectives: %.1f%% of a device's step in ops.csv (their ops' spans, over %u "
                     "devices); %.1f%% exposed, the link columns above; the rest overlapped compute or "
                     "launched\n",
                100 * coll / ndev / (double)r->total_ps, ndev, 100 * exposed / ndev / (double)r->total_ps);
}

void report_mask_device(const char *name, uint32_t dev, char *buf, size_t n)
{
    snprintf(buf, n, "%s", name);
    for (char *p = buf; *p != '\0'; p++) {
        if (*p < '0' || *p > '9')
            continue;
        char *e = p;
        unsigned long v = strtoul(p, &e, 10);
        if (v == dev) {
            *p = '#';
            memmove(p + 1, e, strlen(e) + 1);
            return;
        }
        p = e - 1;
    }
}

/* Is op j the same op as op i on another device: the same kind and time,
 * and the same name once each one's own device number is masked (a TP
 * rank's r3.L0.qkv_proj and rank 5's r5.L0.qkv_proj)? */
static int twin_op(const struct report_ctx *c, uint32_t i, uint32_t j)
{
    const struct op *a = &c->t->ops[i], *b = &c->t->ops[j];
    const struct op_result *x = run_op_body(c->r, i), *y = run_op_body(c->r, j);
    if (a->device == b->device || a->kind != b->kind || x->end_ps - x->start_ps != y->end_ps - y->start_ps)
        return 0;
    char ma[200], mb[200];
    report_mask_device(op_name(c->t, a), a->device, ma, sizeof ma);
    report_mask_device(op_name(c->t, b), b->device, mb, sizeof mb);
    return strcmp(ma, mb) == 0;
}

/* How many ops after position k of idx (equal times sort together) are
 * op idx[k] on other devices; they are moved right behind it. */
static uint32_t gather_twins(const struct report_ctx *c, uint32_t *idx, uint32_t k, uint32_t n)
{
    const struct op_result *o = run_op_body(c->r, idx[k]);
    uint32_t got = 0;
    for (uint32_t j = k + 1; j < n && j < k + 1 + 4096; j++) {
        const struct op_result *y = run_op_body(c->r, idx[j]);
        if (y->end_ps - y->start_ps != o->end_ps - o->start_ps)
            break;
        if (twin_op(c, idx[k], idx[j])) {
            uint32_t v = idx[j];
            memmove(&idx[k + 2 + got], &idx[k + 1 + got], (j - k - 1 - got) * sizeof *idx);
            idx[k + 1 + got++] = v;
        }
    }
    return got;
}

/* The slowest ops (c->top, 15 by default), a row each with its share of
 * the time in each category; an op that runs on several devices at once
 * (a tensor-parallel rank's) is one row, "x8" for its 8 devices. */
static void text_ops(const struct report_ctx *c, FILE *out)
{
    const struct run_result *r = c->r;
    const struct trace *t = c->t;
    const struct hw_config *cfg = c->cfg;
    double total = (double)r->total_ps * REPORT_PS;
    char b1[32], b2[32], b3[32];
    uint32_t n = r->nops;
    uint32_t *idx = sim_xcalloc(n ? n : 1, sizeof *idx);
    for (uint32_t i = 0; i < n; i++)
        idx[i] = i;
    sort_ops_by_time(r, idx, n);
    unsigned top = c->top ? c->top : 15;
    if (top > n)
        top = n;
    /* the stall columns: every level that can hold an op up (not the
     * register file, which has no traffic of its own) */
    /* measured-only ops (imported collectives, unknown kernels) get their own column */
    const int any_measured = r->time_ps[CAT_MEASURED] > 0;
    char cats[160] = "stalls (busy/launch";
    size_t used = strlen(cats);
    if (any_measured)
        used += (size_t)snprintf(cats + used, sizeof cats - used, "/measured");
    for (unsigned l = 0; l < cfg->nlevels && used < sizeof cats; l++)
        if (cfg->level[l].kind != LK_REGISTERS)
            used += (size_t)snprintf(cats + used, sizeof cats - used, "/%s", cfg->level[l].name);
    if (used < sizeof cats)
        snprintf(cats + used, sizeof cats - used, ")");
    fprintf(out, "\n  %-28s %-11s %10s %6s %10s %10s %-8s %s\n", "op (slowest first)", "kind",
            "time", "share", "FLOP", "DRAM B", "bound", cats);
    unsigned rows = 0;
    uint32_t k = 0;
    for (; k < n && rows < top; k++, rows++) {
        const struct op_result *o = run_op_body(r, idx[k]);
        const struct op *op = &t->ops[idx[k]];
        uint32_t twins = t->ndevices > 1 ? gather_twins(c, idx, k, n) : 0;
        double ts = report_op_time_s(o);
        numfmt_time(b1, sizeof b1, ts);
        numfmt_si(b2, sizeof b2, o->flops, "");
        numfmt_si(b3, sizeof b3, o->bytes[cfg->lv_dram], "");
        char name[64];
        if (twins > 0)
            snprintf(name, sizeof name, "%.20s x%u", op_name(t, op), twins + 1);
        else
            snprintf(name, sizeof name, "%.63s", op_name(t, op));     /* the column shows 28 */
        fprintf(out, "  %-28.28s %-11s %10s %5.1f%% %10s %10s %-8s", name, op_kind_name(op->kind),
                b1, total > 0 ? 100 * ts / total : 0, b2, b3, run_bound_name(cfg, o));
        k += twins;
        uint64_t dur = o->end_ps - o->start_ps;
        for (unsigned cat = 0; cat < CAT_STALL + cfg->nlevels; cat++)
            if ((cat < CAT_STALL && (cat != CAT_MEASURED || any_measured)) ||
                (cat >= CAT_STALL && cfg->level[cat - CAT_STALL].kind != LK_REGISTERS))
                fprintf(out, "%s%.0f", cat ? "/" : " ",
                        dur ? 100.0 * (double)o->time_ps[cat] / (double)dur : 0);
        fprintf(out, "%%\n");
    }
    if (n > k)
        fprintf(out, "  ... %u more ops (--top N, --csv, --json)\n", n - k);
    free(idx);
}

void report_text(const struct report_ctx *c, FILE *out)
{
    text_summary(c, out);
    text_devices(c, out);
    text_ops(c, out);
}
