/* plot_load.c: a saved report (or a run) read into struct pdata for the
 * plots and the page.  See plot_load.h. */
#include "plot_load.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "report.h"

/* A number item, or a raw number (trees built in memory by report_json.c
 * hold their numbers as raw text, with the value in valuedouble). */
static int is_num(const cJSON *it)
{
    return cJSON_IsNumber(it) || (cJSON_IsRaw(it) && it->valuestring != NULL &&
                                  strcmp(it->valuestring, "null") != 0);
}

/* report_json.c stores the value of a raw number in valuedouble as well */
double pload_num(const cJSON *it)
{
    if (cJSON_IsNumber(it) || is_num(it))
        return it->valuedouble;
    return 0.0;
}

double pload_jnum(const cJSON *o, const char *k)
{
    return pload_num(cJSON_GetObjectItemCaseSensitive(o, k));
}

const char *pload_jstr(const cJSON *o, const char *k)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(it) ? it->valuestring : "";
}

void pload_levels(const struct pdata *p, const cJSON *o, const char *k, double *v)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(o, k);
    for (unsigned i = 0; i < p->nlvl; i++)
        v[i] = pload_jnum(l, p->lvl[i]);
}

/* The report's levels: the keys of its "bytes" object, in order; their
 * kinds from hardware_derived.levels when the report has them. */
static void read_levels(struct pdata *p, const cJSON *r)
{
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(r, "bytes"), *it;
    p->nlvl = 0;
    p->lvl_dram = p->lvl_l2 = -1;
    memset(p->lvl_link, 0, sizeof p->lvl_link);
    cJSON_ArrayForEach(it, b)
    {
        if (p->nlvl >= PLOAD_NLVL || it->string == NULL)
            break;
        snprintf(p->lvl[p->nlvl++], HW_LEVEL_NAME, "%s", it->string);
    }
    const cJSON *hl = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(r, "hardware_derived"), "levels");
    cJSON_ArrayForEach(it, hl)
    {
        const char *nm = pload_jstr(it, "name"), *kind = pload_jstr(it, "kind");
        for (unsigned l = 0; l < p->nlvl; l++) {
            if (strcmp(p->lvl[l], nm) != 0)
                continue;
            if (strcmp(kind, "dram") == 0)
                p->lvl_dram = (int)l;
            if (strcmp(kind, "cache") == 0 && p->lvl_l2 < 0)
                p->lvl_l2 = (int)l;
            p->lvl_link[l] = strcmp(kind, "link") == 0;
        }
    }
    for (unsigned l = 0; l < p->nlvl; l++) {    /* reports without hardware_derived */
        if (p->lvl_dram < 0 && strcmp(p->lvl[l], "dram") == 0)
            p->lvl_dram = (int)l;
        if (p->lvl_l2 < 0 && strcmp(p->lvl[l], "l2") == 0)
            p->lvl_l2 = (int)l;
    }
}

/* qsort has no context argument, so the key travels with the index (no
 * file-scope pointer: reports may be rendered on several threads at once) */
struct time_idx {
    double time;
    uint32_t i;
};

static int by_time_desc(const void *a, const void *b)
{
    const struct time_idx *x = a, *y = b;
    if (x->time != y->time)
        return x->time > y->time ? -1 : 1;
    return x->i < y->i ? -1 : 1;
}

static void group_key(const char *name, char *key, size_t n)
{
    size_t k = 0;
    for (const char *c = name; *c && k + 1 < n; c++) {
        if (*c >= '0' && *c <= '9') {
            if (k == 0 || key[k - 1] != '#')
                key[k++] = '#';
        } else {
            key[k++] = *c;
        }
    }
    key[k] = '\0';
}

uint64_t pload_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* An op's time in category c (busy, launch, measured, waiting on a level). */
static double op_cat(const struct pop *o, int c)
{
    return c == 0 ? o->busy : c == 1 ? o->launch : c == 2 ? o->measured : o->stall[c - 3];
}

static int by_group_time(const void *a, const void *b)
{
    const struct pgroup *x = a, *y = b;
    if (x->time != y->time)
        return x->time > y->time ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void build_groups(struct pdata *p)
{
    size_t cap = 16;
    while (cap < 2 * (size_t)p->nops)
        cap *= 2;
    int64_t *slot = sim_xcalloc(cap, sizeof *slot);
    for (size_t i = 0; i < cap; i++)
        slot[i] = -1;
    /* grown as groups appear: a million ops are a few dozen groups */
    size_t gcap = 64;
    p->groups = sim_xcalloc(gcap, sizeof *p->groups);
    for (uint32_t i = 0; i < p->nops; i++) {
        struct pop ob;
        const struct pop *o = pload_op(p, i, &ob);
        char key[100];
        group_key(o->name, key, sizeof key);
        size_t h = (size_t)pload_hash(key) & (cap - 1);
        while (slot[h] >= 0 && strcmp(p->groups[slot[h]].name, key) != 0)
            h = (h + 1) & (cap - 1);
        if (slot[h] < 0) {
            if ((size_t)p->ngroups == gcap) {
                p->groups = sim_xrealloc(p->groups, 2 * gcap * sizeof *p->groups);
                memset(p->groups + gcap, 0, gcap * sizeof *p->groups);
                gcap *= 2;
            }
            slot[h] = p->ngroups;
            snprintf(p->groups[p->ngroups++].name, sizeof p->groups[0].name, "%s", key);
        }
        struct pgroup *g = &p->groups[slot[h]];
        g->count++;
        g->time += o->time;
        for (int c = 0; c < 3 + (int)p->nlvl; c++)
            g->cat[c] += op_cat(o, c);
    }
    free(slot);
    qsort(p->groups, p->ngroups, sizeof *p->groups, by_group_time);
}

/* The ops straight from a run (plot_render_run): what pload_report reads
 * from a report's "ops", without the report's tree of them. */
static double fin(double v)
{
    return isfinite(v) ? v : 0.0;   /* as a report's null reads */
}

static void pop_from_run(const struct pdata *p, const struct report_ctx *c, uint32_t i,
                         struct pop *q)
{
    const double ps = 1e-12;
    const struct op_result *o = run_op_body(c->r, i);
    const struct op *op = &c->t->ops[i];
    memset(q, 0, sizeof *q);
    q->name = op_name(c->t, op);
    q->kind = op_kind_name(op->kind);
    q->bound = p->body_bound[c->r->op[i].body];
    q->tile = o->tile;
    q->dtype = dtype_name(op->dtype);
    q->device = c->t->devices[op->device];
    q->time = fin((double)(o->end_ps - o->start_ps) * ps);
    q->flops = fin(o->flops);
    q->busy = fin((double)o->time_ps[CAT_BUSY] * ps);
    q->launch = fin((double)o->time_ps[CAT_LAUNCH] * ps);
    /* the report's last "measured_s" of an op: the trace's, if given */
    q->measured = op->measured_s >= 0 ? fin(op->measured_s) : fin((double)o->time_ps[CAT_MEASURED] * ps);
    /* the report names the chip's levels in order */
    for (unsigned l = 0; l < p->nlvl && l < c->cfg->nlevels; l++) {
        q->bytes[l] = fin(o->bytes[l]);
        q->stall[l] = fin((double)o->time_ps[CAT_STALL + l] * ps);
    }
    if (p->have_energy)
        q->energy = p->body_energy[c->r->op[i].body];
}

static double run_op_time(const struct report_ctx *c, uint32_t i)
{
    return fin((double)run_op_dur_ps(c->r, i) * 1e-12);
}

/* Op i: a report's from its array; a run's made from the run when asked
 * for (a million ops' copies were 208 MB of a 1M-op run's --out), in *buf. */
const struct pop *pload_op(const struct pdata *p, uint32_t i, struct pop *buf)
{
    if (p->run == NULL)
        return &p->ops[i];
    pop_from_run(p, p->run, i, buf);
    return buf;
}

/* The members of an op that the plots read. */
enum member { M_NONE, M_NAME, M_KIND, M_BOUND, M_TILE, M_TIME, M_FLOPS, M_BUSY, M_LAUNCH,
              M_BYTES, M_STALL, M_MEASURED, M_DTYPE, M_DEVICE, M_ENERGY };

/* The member is told by its first letters, then confirmed: comparing each
 * name against every wanted one was most of the op loop's time. */
static enum member which_member(const char *k)
{
    static const char *const mname[] = {"", "name", "kind", "bound", "tile", "time_s",
                                        "flops", "busy_s", "launch_s", "bytes", "stall_s",
                                        "measured_s", "dtype", "device", "energy_J"};
    enum member which = M_NONE;
    switch (k[0]) {
    case 'n': which = M_NAME; break;
    case 'k': which = M_KIND; break;
    case 'f': which = M_FLOPS; break;
    case 'l': which = M_LAUNCH; break;
    case 'm': which = M_MEASURED; break;
    case 'd': which = k[1] == 'e' ? M_DEVICE : M_DTYPE; break;
    case 'e': which = M_ENERGY; break;
    case 'b': which = k[1] == 'o' ? M_BOUND : k[1] == 'y' ? M_BYTES : M_BUSY; break;
    case 't': which = k[1] == 'i' && k[2] == 'l' ? M_TILE : M_TIME; break;
    case 's': which = M_STALL; break;
    default: break;
    }
    if (which == M_NONE || strcmp(k, mname[which]) != 0)
        return M_NONE;
    return which;
}

/* An op's "bytes" or "stall_s": one number per level, into dst. */
static void read_op_levels(const struct pdata *p, const cJSON *m, double *dst)
{
    const cJSON *lv;
    unsigned pos = 0;
    cJSON_ArrayForEach(lv, m)
    {
        /* strata writes the levels in order: try that one first */
        if (lv->string == NULL)
            continue;
        if (pos < p->nlvl && strcmp(lv->string, p->lvl[pos]) == 0) {
            dst[pos++] = pload_num(lv);
            continue;
        }
        for (unsigned l = 0; l < p->nlvl; l++)
            if (strcmp(lv->string, p->lvl[l]) == 0)
                dst[l] = pload_num(lv);
    }
}

static void read_op(const struct pdata *p, const cJSON *o, struct pop *q)
{
    q->name = q->kind = q->bound = q->tile = q->device = "";
    /* one pass over the op's members (looking each up by name was a
     * quadratic share of the rendering time) */
    const cJSON *m;
    cJSON_ArrayForEach(m, o)
    {
        enum member which = which_member(m->string ? m->string : "");
        if (which == M_NONE)
            continue;
        if (which == M_NAME)
            q->name = cJSON_IsString(m) ? m->valuestring : "";
        else if (which == M_KIND)
            q->kind = cJSON_IsString(m) ? m->valuestring : "";
        else if (which == M_BOUND)
            q->bound = cJSON_IsString(m) ? m->valuestring : "";
        else if (which == M_TILE)
            q->tile = cJSON_IsString(m) ? m->valuestring : "";
        else if (which == M_TIME)
            q->time = pload_num(m);
        else if (which == M_FLOPS)
            q->flops = pload_num(m);
        else if (which == M_BUSY)
            q->busy = pload_num(m);
        else if (which == M_LAUNCH)
            q->launch = pload_num(m);
        else if (which == M_MEASURED)
            q->measured = pload_num(m);
        else if (which == M_DTYPE)
            q->dtype = cJSON_IsString(m) ? m->valuestring : "";
        else if (which == M_DEVICE)
            q->device = cJSON_IsString(m) ? m->valuestring : "";
        else if (which == M_ENERGY)
            q->energy = pload_num(m);
        else
            read_op_levels(p, m, which == M_BYTES ? q->bytes : q->stall);
    }
}

/* The report's "ops" array, or NULL with *d when it is no strata report
 * of this version or has no array of ops. */
static const cJSON *check_header(const struct jsondoc *doc, struct diag *d)
{
    const cJSON *r = doc->root;
    if (!cJSON_IsObject(r)) {
        diag_set(d, DIAG_E_PARSE, doc->name, 1, "", "not a strata report (not a JSON object)");
        return NULL;
    }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, "strata_report");
    if (v == NULL) {
        diag_set(d, DIAG_E_UNSUPPORTED, doc->name, 1, "strata_report",
                 "not a strata report (written by strata run --json or --out)");
        return NULL;
    }
    if (!is_num(v) || pload_num(v) != 1) {
        diag_set(d, DIAG_E_UNSUPPORTED, doc->name, jsondoc_line(doc, v), "strata_report",
                 "incompatible report version (this strata reads version 1)");
        return NULL;
    }
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(r, "ops");
    if (!cJSON_IsArray(ops)) {
        diag_set(d, DIAG_E_TYPE, doc->name, jsondoc_line(doc, ops ? ops : r), "ops",
                 "expected an array of ops");
        return NULL;
    }
    return ops;
}

static void read_summary(struct pdata *p, const cJSON *r)
{
    p->hw_name = pload_jstr(cJSON_GetObjectItemCaseSensitive(r, "hardware"), "name");
    p->sys_name = pload_jstr(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "hardware"),
                                                              "system"), "name");
    p->ndev = 0;
    const cJSON *dv;
    cJSON_ArrayForEach(dv, cJSON_GetObjectItemCaseSensitive(r, "devices"))
        p->ndev += !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(dv, "mirror"));
    if (p->ndev == 0)
        p->ndev = 1;
    p->trace_path = pload_jstr(cJSON_GetObjectItemCaseSensitive(r, "trace"), "path");
    p->total = pload_jnum(r, "total_time_s");
    p->tokens_per_s = pload_jnum(r, "tokens_per_s");
    p->flops = pload_jnum(r, "flops");
    p->busy = pload_jnum(r, "busy_s");
    p->launch = pload_jnum(r, "launch_s");
    p->idle = pload_jnum(r, "idle_s");
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(r, "energy_J");
    p->have_energy = cJSON_IsObject(en);
    p->energy = pload_jnum(en, "total");
    read_levels(p, r);
    pload_levels(p, r, "bytes", p->bytes);
    pload_levels(p, r, "stall_s", p->stall);
    pload_levels(p, r, "stall_latency_s", p->stall_lat);
}

/* p->order: the ops slowest first, ties by index. */
static void order_ops(struct pdata *p)
{
    struct time_idx *ti = sim_xcalloc(p->nops ? p->nops : 1, sizeof *ti);
    for (uint32_t k = 0; k < p->nops; k++)
        ti[k] = (struct time_idx){p->run != NULL ? run_op_time(p->run, k) : p->ops[k].time, k};
    qsort(ti, p->nops, sizeof *ti, by_time_desc);
    for (uint32_t k = 0; k < p->nops; k++)
        p->order[k] = ti[k].i;
    free(ti);
}

/* hardware_derived: the roofline's peak (the matrix peak of bf16, else
 * fp16, tf32, fp32, fp64) and the levels' bandwidths, checked. */
static int read_hwd(struct pdata *p, const struct jsondoc *doc, struct diag *d)
{
    p->hwd = cJSON_GetObjectItemCaseSensitive(doc->root, "hardware_derived");
    if (!cJSON_IsObject(p->hwd))
        return 0;
    const cJSON *mp = cJSON_GetObjectItemCaseSensitive(p->hwd, "matrix_peak_flops");
    static const char *const pref[] = {"bf16", "fp16", "tf32", "fp32", "fp64"};
    for (size_t k = 0; k < sizeof pref / sizeof pref[0] && p->peak <= 0; k++) {
        p->peak = pload_jnum(mp, pref[k]);
        snprintf(p->peak_dtype, sizeof p->peak_dtype, "%s", pref[k]);
    }
    pload_levels(p, p->hwd, "bandwidth_bytes_per_s", p->bw);
    p->have_hw = p->peak > 0;
    /* The roofline's log axes span the peak and the roofs: a peak or a
     * bandwidth far outside what a chip can have (1e308, 5e-324) gives
     * an axis of infinite or zero range. */
    char field[128];
    snprintf(field, sizeof field, "matrix_peak_flops.%s", p->peak_dtype);
    if (p->have_hw && (p->peak < PLOAD_MIN_RATE || p->peak > PLOAD_MAX_RATE))
        return diag_set(d, DIAG_E_RANGE, doc->name,
                        jsondoc_line(doc, cJSON_GetObjectItemCaseSensitive(mp, p->peak_dtype)),
                        field, "%g FLOP/s is outside [%g, %g]", p->peak, PLOAD_MIN_RATE,
                        PLOAD_MAX_RATE);
    const cJSON *bws = cJSON_GetObjectItemCaseSensitive(p->hwd, "bandwidth_bytes_per_s");
    for (unsigned l = 0; l < p->nlvl && p->have_hw; l++)
        if (p->bw[l] > 0 && (p->bw[l] < PLOAD_MIN_RATE || p->bw[l] > PLOAD_MAX_RATE)) {
            snprintf(field, sizeof field, "bandwidth_bytes_per_s.%s", p->lvl[l]);
            return diag_set(d, DIAG_E_RANGE, doc->name,
                            jsondoc_line(doc, cJSON_GetObjectItemCaseSensitive(bws, p->lvl[l])),
                            field, "%g B/s is outside [%g, %g]", p->bw[l], PLOAD_MIN_RATE,
                            PLOAD_MAX_RATE);
        }
    return 0;
}

/* The first device's timeseries, and the what-ifs. */
static void read_ts_whatif(struct pdata *p, const cJSON *r)
{
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(r, "timeseries");
    if (cJSON_IsObject(ts)) {
        p->bucket_s = pload_jnum(ts, "bucket_s");
        const cJSON *devs = cJSON_GetObjectItemCaseSensitive(ts, "devices");
        if (cJSON_IsObject(devs) && devs->child != NULL && p->bucket_s > 0) {
            p->ts_dev = devs->child;
            p->ts_dev_name = devs->child->string;
        }
    }
    const cJSON *wi = cJSON_GetObjectItemCaseSensitive(r, "whatif");
    if (cJSON_IsArray(wi))
        p->whatif = wi;
    const cJSON *dv = cJSON_GetObjectItemCaseSensitive(r, "devices");
    if (cJSON_IsArray(dv))
        p->devices = dv;
}

int pload_report(const struct jsondoc *doc, const struct report_ctx *run, struct pdata *p,
                 struct diag *d)
{
    const cJSON *r = doc->root;
    memset(p, 0, sizeof *p);
    const cJSON *ops = check_header(doc, d);
    if (ops == NULL)
        return -1;
    read_summary(p, r);
    p->nops = run != NULL ? run->r->nops : (uint32_t)cJSON_GetArraySize(ops);
    p->run = run;
    p->ops = run != NULL ? NULL : sim_xcalloc(p->nops ? p->nops : 1, sizeof *p->ops);
    if (run != NULL) {              /* what each op reads of its body (opstore.h) */
        uint32_t nb = run->r->nbody;
        p->body_bound = sim_xcalloc(nb ? nb : 1, sizeof *p->body_bound);
        p->body_energy = sim_xcalloc(nb ? nb : 1, sizeof *p->body_energy);
        for (uint32_t b = 0; b < nb; b++) {
            p->body_bound[b] = run_bound_name(run->cfg, &run->r->body[b]);
            p->body_energy[b] = fin(report_op_energy_j(run->cfg, &run->r->body[b]));
        }
    }
    p->order = sim_xcalloc(p->nops ? p->nops : 1, sizeof *p->order);
    uint32_t i = 0;
    const cJSON *o;
    const cJSON *from = run != NULL ? (const cJSON *)NULL : ops;
    cJSON_ArrayForEach(o, from)
    {
        if (!cJSON_IsObject(o))
            return diag_set(d, DIAG_E_TYPE, doc->name, jsondoc_line(doc, o), "ops[]",
                            "expected an object");
        read_op(p, o, &p->ops[i++]);
    }
    order_ops(p);
    build_groups(p);
    if (read_hwd(p, doc, d) != 0)
        return -1;
    read_ts_whatif(p, r);
    return 0;
}

void pload_free(struct pdata *p)
{
    free(p->ops);
    free(p->body_bound);
    free(p->body_energy);
    free(p->order);
    free(p->groups);
}

const char *pload_cat_name(const struct pdata *p, int c)
{
    return c == 0 ? "busy" : c == 1 ? "launch" : c == 2 ? "measured" : p->lvl[c - 3];
}

const char *pload_workload(const struct pdata *p)
{
    const char *s = strrchr(p->trace_path, '/');
    return s != NULL ? s + 1 : p->trace_path;
}

int pload_ts_len(const struct pdata *p, unsigned l)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(p->ts_dev, p->lvl[l]);
    return cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
}

/* Matrix kinds run on the matrix pipe at their dtype; the rest on the vector
 * pipe (fp64 for fp64 ops, fp32 otherwise, as the model runs them). */
int pload_roofs(const struct pdata *p, struct pload_roof *r, int max)
{
    int n = 0;
    const cJSON *mp = cJSON_GetObjectItemCaseSensitive(p->hwd, "matrix_peak_flops");
    const cJSON *vp = cJSON_GetObjectItemCaseSensitive(p->hwd, "vector_peak_flops");
    const char *last_kind = NULL, *last_dtype = NULL;
    for (uint32_t i = 0; i < p->nops && n < max; i++) {
        struct pop ob;
        const struct pop *o = pload_op(p, i, &ob);
        if (o->flops <= 0 || o->dtype == NULL)
            continue;
        /* the kind and dtype of the op before (the same strings): its roof is known */
        if (o->kind == last_kind && o->dtype == last_dtype)
            continue;
        last_kind = o->kind;
        last_dtype = o->dtype;
        int matrix = o->kind != NULL && (strcmp(o->kind, "gemm") == 0 || strcmp(o->kind, "attention") == 0);
        const char *dt = matrix ? o->dtype : (strcmp(o->dtype, "fp64") == 0 ? "fp64" : "fp32");
        double peak = pload_jnum(matrix ? mp : vp, dt);
        if (peak <= 0)
            continue;
        char label[64];
        snprintf(label, sizeof label, "%s %s", dt, matrix ? "matrix" : "vector");
        int seen = 0;
        for (int k = 0; k < n; k++)
            seen |= strcmp(r[k].label, label) == 0;
        if (!seen) {
            snprintf(r[n].label, sizeof r[n].label, "%s", label);
            r[n++].peak = peak;
        }
    }
    if (n == 0 && p->peak > 0) {
        snprintf(r[0].label, sizeof r[0].label, "%s matrix", p->peak_dtype);
        r[0].peak = p->peak;
        n = 1;
    }
    return n;
}
