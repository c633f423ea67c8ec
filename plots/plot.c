/* plot.c: plots and the HTML report from a saved run report.  See plot.h.
 *
 * The same numbers go two ways: gnuplot .dat/.gp pairs (rendered to PNG
 * and SVG when gnuplot is installed) and SVG drawn here for report.html,
 * so the page never depends on gnuplot.  Every file is written under a
 * temporary name and renamed; on failure what this call renamed is removed.
 */
#include "plot.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "afile.h"
#include "check.h"
#include "jsondoc.h"
#include "model.h"
#include "numfmt.h"
#include "report.h"
#include "strbuf.h"

#define NLVL HW_MAX_LEVELS /* levels a report may name */
#define NCATMAX (3 + NLVL)

struct pop {
    const char *name, *kind, *bound, *tile, *dtype;
    double time, flops, busy, launch, measured;
    double bytes[NLVL], stall[NLVL];
};

/* Ops whose names differ only in numbers (L0.qkv_proj, L1.qkv_proj, ...)
 * form one group in the stall plot, so a 32-layer model shows 10 bars of
 * 32 ops instead of 20 near-identical ones. */
struct pgroup {
    char name[100];             /* the name with each digit run replaced by '#' */
    uint32_t count;
    double time;
    double cat[NCATMAX];
};

struct pdata {
    const char *hw_name, *trace_path;
    double total, tokens_per_s, flops, busy, launch, idle;
    double bytes[NLVL], stall[NLVL];
    /* the levels the report names (its "bytes" keys, in order) */
    unsigned nlvl;
    char lvl[NLVL][HW_LEVEL_NAME];
    int lvl_dram, lvl_l2;       /* the DRAM and the first cache, -1 if unknown */
    uint32_t nops;
    struct pop *ops;            /* a report's ops (NULL for a run's: see pop_at) */
    const struct report_ctx *run; /* the run whose ops these are, or NULL */
    uint32_t *order;            /* op indices, slowest first */
    struct pgroup *groups;      /* slowest first */
    uint32_t ngroups;
    /* hardware_derived (0 when absent) */
    int have_hw;
    double peak;                /* matrix peak of the roofline's dtype */
    char peak_dtype[16];
    double bw[NLVL];
    const cJSON *hwd;
    /* timeseries of the first device */
    double bucket_s;
    const cJSON *ts_dev;
    const char *ts_dev_name;
    const cJSON *whatif;
};

/* files this call has put in place, removed again on failure */
struct written {
    char path[16][1200];
    int n;
    int made_plots_dir, made_outdir;
    char plots_dir[1100], outdir[1100];
};

/* A number item, or a raw number (trees built in memory by report.c hold
 * their numbers as raw text, with the value in valuedouble). */
static int is_num(const cJSON *it)
{
    return cJSON_IsNumber(it) || (cJSON_IsRaw(it) && it->valuestring != NULL &&
                                  strcmp(it->valuestring, "null") != 0);
}

/* report.c stores the value of a raw number in valuedouble as well */
static double num(const cJSON *it)
{
    if (cJSON_IsNumber(it) || is_num(it))
        return it->valuedouble;
    return 0.0;
}

static double jnum(const cJSON *o, const char *k)
{
    return num(cJSON_GetObjectItemCaseSensitive(o, k));
}

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(it) ? it->valuestring : "";
}

static void jlevels(const struct pdata *p, const cJSON *o, const char *k, double *v)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(o, k);
    for (unsigned i = 0; i < p->nlvl; i++)
        v[i] = jnum(l, p->lvl[i]);
}

/* The report's levels: the keys of its "bytes" object, in order; their
 * kinds from hardware_derived.levels when the report has them. */
static void read_levels(struct pdata *p, const cJSON *r)
{
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(r, "bytes"), *it;
    p->nlvl = 0;
    p->lvl_dram = p->lvl_l2 = -1;
    cJSON_ArrayForEach(it, b)
    {
        if (p->nlvl >= NLVL || it->string == NULL)
            break;
        snprintf(p->lvl[p->nlvl++], HW_LEVEL_NAME, "%s", it->string);
    }
    const cJSON *hl = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(r, "hardware_derived"), "levels");
    cJSON_ArrayForEach(it, hl)
    {
        const char *nm = jstr(it, "name"), *kind = jstr(it, "kind");
        for (unsigned l = 0; l < p->nlvl; l++) {
            if (strcmp(p->lvl[l], nm) != 0)
                continue;
            if (strcmp(kind, "dram") == 0)
                p->lvl_dram = (int)l;
            if (strcmp(kind, "cache") == 0 && p->lvl_l2 < 0)
                p->lvl_l2 = (int)l;
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

static uint64_t key_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static double op_cat(const struct pop *o, int c);
static const struct pop *pop_at(const struct pdata *p, uint32_t i, struct pop *buf);

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
        const struct pop *o = pop_at(p, i, &ob);
        char key[100];
        group_key(o->name, key, sizeof key);
        size_t h = (size_t)key_hash(key) & (cap - 1);
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

/* The ops straight from a run (plot_render_run): what load_report reads
 * from a report's "ops", without the report's tree of them. */
static double fin(double v)
{
    return isfinite(v) ? v : 0.0;   /* as a report's null reads */
}

static void pop_from_run(const struct pdata *p, const struct report_ctx *c, uint32_t i,
                         struct pop *q)
{
    const double ps = 1e-12;
    const struct op_result *o = &c->r->ops[i];
    const struct op *op = &c->t->ops[i];
    memset(q, 0, sizeof *q);
    q->name = op->name;
    q->kind = op_kind_name(op->kind);
    q->bound = run_bound_name(c->cfg, o);
    q->tile = o->tile;
    q->dtype = dtype_name(op->dtype);
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
}

static double run_op_time(const struct report_ctx *c, uint32_t i)
{
    return fin((double)(c->r->ops[i].end_ps - c->r->ops[i].start_ps) * 1e-12);
}

/* Op i: a report's from its array; a run's made from the run when asked
 * for (a million ops' copies were 208 MB of a 1M-op run's --out), in *buf. */
static const struct pop *pop_at(const struct pdata *p, uint32_t i, struct pop *buf)
{
    if (p->run == NULL)
        return &p->ops[i];
    pop_from_run(p, p->run, i, buf);
    return buf;
}

static int load_report(const struct jsondoc *doc, const struct report_ctx *run, struct pdata *p,
                       struct diag *d)
{
    const cJSON *r = doc->root;
    memset(p, 0, sizeof *p);
    if (!cJSON_IsObject(r))
        return diag_set(d, DIAG_E_PARSE, doc->name, 1, "", "not a strata report (not a JSON object)");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, "strata_report");
    if (v == NULL)
        return diag_set(d, DIAG_E_UNSUPPORTED, doc->name, 1, "strata_report",
                        "not a strata report (written by strata run --json or --out)");
    if (!is_num(v) || num(v) != 1)
        return diag_set(d, DIAG_E_UNSUPPORTED, doc->name, jsondoc_line(doc, v), "strata_report",
                        "incompatible report version (this strata reads version 1)");
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(r, "ops");
    if (!cJSON_IsArray(ops))
        return diag_set(d, DIAG_E_TYPE, doc->name, jsondoc_line(doc, ops ? ops : r), "ops",
                        "expected an array of ops");
    p->hw_name = jstr(cJSON_GetObjectItemCaseSensitive(r, "hardware"), "name");
    p->trace_path = jstr(cJSON_GetObjectItemCaseSensitive(r, "trace"), "path");
    p->total = jnum(r, "total_time_s");
    p->tokens_per_s = jnum(r, "tokens_per_s");
    p->flops = jnum(r, "flops");
    p->busy = jnum(r, "busy_s");
    p->launch = jnum(r, "launch_s");
    p->idle = jnum(r, "idle_s");
    read_levels(p, r);
    jlevels(p, r, "bytes", p->bytes);
    jlevels(p, r, "stall_s", p->stall);
    p->nops = run != NULL ? run->r->nops : (uint32_t)cJSON_GetArraySize(ops);
    p->run = run;
    p->ops = run != NULL ? NULL : sim_xcalloc(p->nops ? p->nops : 1, sizeof *p->ops);
    p->order = sim_xcalloc(p->nops ? p->nops : 1, sizeof *p->order);
    uint32_t i = 0;
    const cJSON *o;
    const cJSON *from = run != NULL ? (const cJSON *)NULL : ops;
    cJSON_ArrayForEach(o, from)
    {
        if (!cJSON_IsObject(o))
            return diag_set(d, DIAG_E_TYPE, doc->name, jsondoc_line(doc, o), "ops[]",
                            "expected an object");
        struct pop *q = &p->ops[i];
        q->name = q->kind = q->bound = q->tile = "";
        /* one pass over the op's members (looking each up by name was a
         * quadratic share of the rendering time) */
        const cJSON *m;
        cJSON_ArrayForEach(m, o)
        {
            const char *k = m->string ? m->string : "";
            /* the member is told by its first letters, then confirmed:
             * comparing each name against every wanted one was most of
             * this loop's time */
            enum { M_NONE, M_NAME, M_KIND, M_BOUND, M_TILE, M_TIME, M_FLOPS, M_BUSY, M_LAUNCH,
                   M_BYTES, M_STALL, M_MEASURED, M_DTYPE } which = M_NONE;
            static const char *const mname[] = {"", "name", "kind", "bound", "tile", "time_s",
                                                "flops", "busy_s", "launch_s", "bytes", "stall_s",
                                                "measured_s", "dtype"};
            switch (k[0]) {
            case 'n': which = M_NAME; break;
            case 'k': which = M_KIND; break;
            case 'f': which = M_FLOPS; break;
            case 'l': which = M_LAUNCH; break;
            case 'm': which = M_MEASURED; break;
            case 'd': which = M_DTYPE; break;
            case 'b': which = k[1] == 'o' ? M_BOUND : k[1] == 'y' ? M_BYTES : M_BUSY; break;
            case 't': which = k[1] == 'i' && k[2] == 'l' ? M_TILE : M_TIME; break;
            case 's': which = M_STALL; break;
            default: break;
            }
            if (which == M_NONE || strcmp(k, mname[which]) != 0)
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
                q->time = num(m);
            else if (which == M_FLOPS)
                q->flops = num(m);
            else if (which == M_BUSY)
                q->busy = num(m);
            else if (which == M_LAUNCH)
                q->launch = num(m);
            else if (which == M_MEASURED)
                q->measured = num(m);
            else if (which == M_DTYPE)
                q->dtype = cJSON_IsString(m) ? m->valuestring : "";
            else {
                double *dst = which == M_BYTES ? q->bytes : q->stall;
                const cJSON *lv;
                unsigned pos = 0;
                cJSON_ArrayForEach(lv, m)
                {
                    /* strata writes the levels in order: try that one first */
                    if (lv->string == NULL)
                        continue;
                    if (pos < p->nlvl && strcmp(lv->string, p->lvl[pos]) == 0) {
                        dst[pos++] = num(lv);
                        continue;
                    }
                    for (unsigned l = 0; l < p->nlvl; l++)
                        if (strcmp(lv->string, p->lvl[l]) == 0)
                            dst[l] = num(lv);
                }
            }
        }
        i++;
    }
    struct time_idx *ti = sim_xcalloc(p->nops ? p->nops : 1, sizeof *ti);
    for (uint32_t k = 0; k < p->nops; k++)
        ti[k] = (struct time_idx){p->run != NULL ? run_op_time(p->run, k) : p->ops[k].time, k};
    qsort(ti, p->nops, sizeof *ti, by_time_desc);
    for (uint32_t k = 0; k < p->nops; k++)
        p->order[k] = ti[k].i;
    free(ti);
    build_groups(p);
    p->hwd = cJSON_GetObjectItemCaseSensitive(r, "hardware_derived");
    if (cJSON_IsObject(p->hwd)) {
        const cJSON *mp = cJSON_GetObjectItemCaseSensitive(p->hwd, "matrix_peak_flops");
        static const char *const pref[] = {"bf16", "fp16", "tf32", "fp32", "fp64"};
        for (size_t k = 0; k < sizeof pref / sizeof pref[0] && p->peak <= 0; k++) {
            p->peak = jnum(mp, pref[k]);
            snprintf(p->peak_dtype, sizeof p->peak_dtype, "%s", pref[k]);
        }
        jlevels(p, p->hwd, "bandwidth_bytes_per_s", p->bw);
        p->have_hw = p->peak > 0;
        /* The roofline's log axes span the peak and the roofs: a peak or a
         * bandwidth far outside what a chip can have (1e308, 5e-324) gives
         * an axis of infinite or zero range. */
        char field[128];
        snprintf(field, sizeof field, "matrix_peak_flops.%s", p->peak_dtype);
        if (p->have_hw && (p->peak < PLOT_MIN_RATE || p->peak > PLOT_MAX_RATE))
            return diag_set(d, DIAG_E_RANGE, doc->name,
                            jsondoc_line(doc, cJSON_GetObjectItemCaseSensitive(mp, p->peak_dtype)),
                            field, "%g FLOP/s is outside [%g, %g]", p->peak, PLOT_MIN_RATE,
                            PLOT_MAX_RATE);
        const cJSON *bws = cJSON_GetObjectItemCaseSensitive(p->hwd, "bandwidth_bytes_per_s");
        for (unsigned l = 0; l < p->nlvl && p->have_hw; l++)
            if (p->bw[l] > 0 && (p->bw[l] < PLOT_MIN_RATE || p->bw[l] > PLOT_MAX_RATE)) {
                snprintf(field, sizeof field, "bandwidth_bytes_per_s.%s", p->lvl[l]);
                return diag_set(d, DIAG_E_RANGE, doc->name,
                                jsondoc_line(doc, cJSON_GetObjectItemCaseSensitive(bws, p->lvl[l])),
                                field, "%g B/s is outside [%g, %g]", p->bw[l], PLOT_MIN_RATE,
                                PLOT_MAX_RATE);
            }
    }
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(r, "timeseries");
    if (cJSON_IsObject(ts)) {
        p->bucket_s = jnum(ts, "bucket_s");
        const cJSON *devs = cJSON_GetObjectItemCaseSensitive(ts, "devices");
        if (cJSON_IsObject(devs) && devs->child != NULL && p->bucket_s > 0) {
            p->ts_dev = devs->child;
            p->ts_dev_name = devs->child->string;
        }
    }
    const cJSON *wi = cJSON_GetObjectItemCaseSensitive(r, "whatif");
    if (cJSON_IsArray(wi))
        p->whatif = wi;
    return 0;
}

/* ------------------------------------------------------------------ files */

static int put_file(struct written *w, const char *path, const char *text, size_t len,
                    struct diag *d)
{
    struct afile a;
    if (afile_open(&a, path, d) != 0)
        return -1;
    fwrite(text, 1, len, a.f);
    if (afile_commit(&a, d) != 0)
        return -1;
    if (w->n < 16)
        snprintf(w->path[w->n++], sizeof w->path[0], "%s", path);
    return 0;
}

static void undo(struct written *w)
{
    for (int i = w->n - 1; i >= 0; i--)
        remove(w->path[i]);
    if (w->made_plots_dir)
        rmdir(w->plots_dir);
    if (w->made_outdir)
        rmdir(w->outdir);
    w->n = 0;
}

static int ensure_dir(const char *dir, int *made, struct diag *d)
{
    struct stat st;
    *made = 0;
    if (stat(dir, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return 0;
        return diag_set(d, DIAG_E_IO, dir, 0, "", "exists and is not a folder");
    }
    if (mkdir(dir, 0755) != 0)
        return diag_set(d, DIAG_E_IO, dir, 0, "", "cannot create the folder: %s", strerror(errno));
    *made = 1;
    return 0;
}

/* a gnuplot data string: double quotes, no quotes, backquotes, backslashes
 * or newlines inside */
static void sb_gpstr(struct sb *b, const char *s)
{
    sb_putn(b, "\"", 1);
    for (;;) {
        size_t run = strcspn(s, "\"\n\r\\`");
        sb_putn(b, s, run);
        s += run;
        if (*s == '\0')
            break;
        sb_putn(b, "_", 1);
        s++;
    }
    sb_putn(b, "\"", 1);
}

/* A report string (a level or device name) as a bare word for a gnuplot
 * script or data file: anything but letters, digits and _.+- becomes _, so
 * it cannot end a quoted string, a comment line or start a backquoted
 * shell command.  out must hold n bytes. */
static const char *gp_word(char *out, size_t n, const char *s)
{
    size_t i = 0;
    for (; s[i] != '\0' && i + 1 < n; i++) {
        unsigned char c = (unsigned char)s[i];
        out[i] = (isalnum(c) || strchr("_.+-", c) != NULL) ? (char)c : '_';
    }
    out[i] = '\0';
    return out;
}


/* ------------------------------------------------------------------ gnuplot */

/* Time categories: busy, launch, measured (ops that ran for their measured
 * time, not simulated), then waiting on each level. */
#define NCAT ((int)(3 + p->nlvl))
static const char *cat_name(const struct pdata *p, int c)
{
    return c == 0 ? "busy" : c == 1 ? "launch" : c == 2 ? "measured" : p->lvl[c - 3];
}

static double op_cat(const struct pop *o, int c)
{
    return c == 0 ? o->busy : c == 1 ? o->launch : c == 2 ? o->measured : o->stall[c - 3];
}

static const char *const level_colors[NLVL] = {"#8c564b", "#2ca02c", "#1f77b4", "#9467bd",
                                               "#ff7f0e", "#e377c2", "#17becf", "#bcbd22"};
static const char *const cat_colors[NCATMAX] = {"#4daf4a", "#999999", "#f0c808", "#8c564b",
                                                "#2ca02c", "#1f77b4", "#9467bd", "#ff7f0e",
                                                "#e377c2", "#17becf", "#bcbd22"};

/* The workload's name: the trace file's base name. */
static const char *workload(const struct pdata *p)
{
    const char *s = strrchr(p->trace_path, '/');
    return s != NULL ? s + 1 : p->trace_path;
}

static void gp_head(struct sb *g, const struct pdata *p, const char *name, const char *title)
{
    char t[700], w[160], hw[160];
    gp_word(w, sizeof w, workload(p));
    gp_word(hw, sizeof hw, p->hw_name);
    snprintf(t, sizeof t, "%s: %s on %s", title, w, hw);
    sb_printf(g, "# %s.gp: written by strata; render with: gnuplot %s.gp\n", name, name);
    sb_printf(g, "set title \"%s\"\nset key outside right\nset grid\n", t);
}

static void gp_outputs(struct sb *g, const char *name, const char *plotcmd)
{
    /* noenhanced: op and level names keep their '_' (enhanced text makes it a subscript) */
    sb_printf(g, "set terminal pngcairo noenhanced size 1100,650\nset output \"%s.png\"\n%s\n", name,
              plotcmd);
    sb_printf(g, "set terminal svg noenhanced size 1100,650\nset output \"%s.svg\"\n%s\n", name,
              plotcmd);
}

/* Writes <dir>/<name>.dat and <dir>/<name>.gp and frees both buffers. */
static int put_plot(struct written *w, const char *dir, const char *name, struct sb *dat,
                    struct sb *gp, struct diag *d)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.dat", dir, name);
    int rc = put_file(w, path, dat->s, dat->n, d);
    snprintf(path, sizeof path, "%s/%s.gp", dir, name);
    if (rc == 0)
        rc = put_file(w, path, gp->s, gp->n, d);
    free(dat->s);
    free(gp->s);
    return rc;
}

/* ------------------------------------------------------------ roofs and kinds */

/* Op kinds get one colour each, in every plot that colours by kind. */
static const char *const kind_names[] = {"gemm", "attention", "elementwise", "softmax", "norm",
                                         "memcpy", "collective", "other"};
static const char *const kind_colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b",
                                          "#7f7f7f", "#ff7f0e", "#17becf"};
enum { NKINDS = sizeof kind_names / sizeof kind_names[0] };

static int kind_index(const char *kind)
{
    for (int k = 0; k < NKINDS - 1; k++)
        if (kind != NULL && strcmp(kind, kind_names[k]) == 0)
            return k;
    return NKINDS - 1;
}

/* A compute roof: a pipe at a dtype the run used. */
struct roof {
    char label[64];
    double peak;
};

/* Matrix kinds run on the matrix pipe at their dtype; the rest on the vector
 * pipe (fp64 for fp64 ops, fp32 otherwise, as the model runs them). */
static int compute_roofs(const struct pdata *p, struct roof *r, int max)
{
    int n = 0;
    const cJSON *mp = cJSON_GetObjectItemCaseSensitive(p->hwd, "matrix_peak_flops");
    const cJSON *vp = cJSON_GetObjectItemCaseSensitive(p->hwd, "vector_peak_flops");
    for (uint32_t i = 0; i < p->nops && n < max; i++) {
        struct pop ob;
        const struct pop *o = pop_at(p, i, &ob);
        if (o->flops <= 0 || o->dtype == NULL)
            continue;
        int matrix = o->kind != NULL && (strcmp(o->kind, "gemm") == 0 || strcmp(o->kind, "attention") == 0);
        const char *dt = matrix ? o->dtype : (strcmp(o->dtype, "fp64") == 0 ? "fp64" : "fp32");
        double peak = jnum(matrix ? mp : vp, dt);
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

static int write_roofline_gp(const struct pdata *p, const char *dir, struct written *w,
                             struct diag *d)
{
    struct sb dat = {0}, gp = {0}, cmd = {0};
    struct roof roofs[12];
    int nr = compute_roofs(p, roofs, 12);
    double top = 0;
    for (int k = 0; k < nr; k++)
        top = roofs[k].peak > top ? roofs[k].peak : top;
    char lw[NLVL][HW_LEVEL_NAME];
    for (unsigned l = 0; l < p->nlvl; l++)
        gp_word(lw[l], sizeof lw[l], p->lvl[l]);
    sb_printf(&dat, "# roofline: compute roofs (one per pipe and dtype the run used), memory roofs\n"
                    "# (one per level), then the ops at each level: intensity perf kind_index name\n");
    int idx = 0, first = 1;
    char si[32];
    sb_printf(&cmd, "plot ");
    for (int k = 0; k < nr; k++) {
        sb_printf(&dat, "# compute roof %s\n%.6g %.6g\n%.6g %.6g\n\n\n", roofs[k].label, 1e-2,
                  roofs[k].peak, 1e5, roofs[k].peak);
        numfmt_si(si, sizeof si, roofs[k].peak, "FLOP/s");
        sb_printf(&cmd, "%s\"roofline.dat\" index %d using 1:2 with lines lw 2 dt %d lc rgb \"#333333\" "
                        "title \"%s %s\"", first ? "" : ", ", idx++, k + 1, roofs[k].label, si);
        first = 0;
    }
    for (unsigned l = 0; l < p->nlvl; l++) {
        if (p->bw[l] <= 0 || top <= 0)
            continue;
        sb_printf(&dat, "# memory roof %s\n%.6g %.6g\n%.6g %.6g\n\n\n", lw[l], 1e-2, p->bw[l] * 1e-2,
                  top / p->bw[l], top);
        numfmt_si(si, sizeof si, p->bw[l], "B/s");
        sb_printf(&cmd, ", \"roofline.dat\" index %d using 1:2 with lines lw 2 lc rgb \"%s\" "
                        "title \"%s %s\"", idx++, level_colors[l], lw[l], si);
    }
    /* ops: one block per level that has any (no empty legend entries),
     * coloured by kind (linetype = kind), one point type per level */
    uint32_t m = p->nops < PLOT_MAX_ROOF_OPS ? p->nops : PLOT_MAX_ROOF_OPS;
    int kinds_used[NKINDS] = {0}, pt = 5;
    for (unsigned l = 0; l < p->nlvl; l++) {
        if (p->bw[l] <= 0)
            continue;
        int any = 0;
        for (uint32_t k = 0; k < m; k++) {
            struct pop ob;
        const struct pop *o = pop_at(p, p->order[k], &ob);
            if (o->flops <= 0 || o->bytes[l] <= 0 || o->time <= 0)
                continue;
            if (!any)
                sb_printf(&dat, "# ops at %s\n", lw[l]);
            any = 1;
            char ia[32], pa[32];
            numfmt_sig(ia, sizeof ia, o->flops / o->bytes[l], 6);
            numfmt_sig(pa, sizeof pa, o->flops / o->time, 6);
            int ki = kind_index(o->kind);
            kinds_used[ki] = 1;
            sb_printf(&dat, "%s %s %d ", ia, pa, ki + 1);
            sb_gpstr(&dat, o->name);
            sb_putn(&dat, "\n", 1);
        }
        if (!any)
            continue;
        sb_printf(&dat, "\n\n");
        sb_printf(&cmd, ", \"roofline.dat\" index %d using 1:2:3 with points pt %d ps 0.9 lc variable "
                        "title \"ops at %s\"", idx++, pt, lw[l]);
        pt = pt == 5 ? 7 : pt == 7 ? 9 : pt == 9 ? 11 : pt == 11 ? 13 : 5;
    }
    /* the five slowest ops, labelled where they sit against DRAM (or the
     * outermost level they touch) */
    int labelled = 0;
    for (uint32_t k = 0; k < p->nops && labelled < 5; k++) {
        struct pop ob;
        const struct pop *o = pop_at(p, p->order[k], &ob);
        int lv = p->lvl_dram;
        if (lv < 0 || o->bytes[lv] <= 0)
            for (int l = (int)p->nlvl - 1; l >= 0; l--)
                if (o->bytes[l] > 0 && p->bw[l] > 0) {
                    lv = l;
                    break;
                }
        if (lv < 0 || o->flops <= 0 || o->time <= 0 || o->bytes[lv] <= 0)
            continue;
        if (labelled == 0)
            sb_printf(&dat, "# the five slowest ops\n");
        sb_printf(&dat, "%.6g %.6g ", o->flops / o->bytes[lv], o->flops / o->time);
        sb_gpstr(&dat, o->name);
        sb_putn(&dat, "\n", 1);
        labelled++;
    }
    if (labelled > 0) {
        sb_printf(&dat, "\n\n");
        sb_printf(&cmd, ", \"roofline.dat\" index %d using 1:2:3 with labels offset 0.8,0.6 left "
                        "font \",9\" notitle", idx++);
    }
    for (int k = 0; k < NKINDS; k++)
        if (kinds_used[k])
            sb_printf(&cmd, ", NaN with points pt 7 ps 1.2 lc %d title \"%s\"", k + 1, kind_names[k]);
    char title[200];
    snprintf(title, sizeof title, "roofline (%s peak%s)", p->peak_dtype, nr > 1 ? " and the others used" : "");
    gp_head(&gp, p, "roofline", title);
    for (int k = 0; k < NKINDS; k++)
        sb_printf(&gp, "set linetype %d lc rgb \"%s\"\n", k + 1, kind_colors[k]);
    sb_printf(&gp, "set logscale xy\nset xlabel \"arithmetic intensity (FLOP/byte)\"\n"
                   "set ylabel \"FLOP/s\"\nset xrange [0.01:100000]\n");
    gp_outputs(&gp, "roofline", cmd.s);
    free(cmd.s);
    return put_plot(w, dir, "roofline", &dat, &gp, d);
}

static int write_stalls_gp(const struct pdata *p, const char *dir, struct written *w,
                           struct diag *d)
{
    struct sb dat = {0}, gp = {0};
    sb_printf(&dat, "# where the slowest ops spent their time, microseconds; ops whose names differ\n# only in numbers are summed (name with # for the numbers, x count)\n# name");
    char cw[NCATMAX][HW_LEVEL_NAME];
    for (int c = 0; c < NCAT; c++)
        sb_printf(&dat, " %s", gp_word(cw[c], sizeof cw[c], cat_name(p, c)));
    sb_printf(&dat, "\n");
    uint32_t top = p->ngroups < PLOT_TOP_STALLS ? p->ngroups : PLOT_TOP_STALLS;
    double other[NCATMAX] = {0};
    uint32_t nother = 0;
    for (uint32_t k = 0; k < p->ngroups; k++) {
        const struct pgroup *g = &p->groups[k];
        if (k < top) {
            struct sb label = {0};
            if (g->count > 1)
                sb_printf(&label, "%s x%u", g->name, g->count);
            else
                sb_printf(&label, "%s", g->name);
            sb_gpstr(&dat, label.s);
            free(label.s);
            for (int c = 0; c < NCAT; c++)
                sb_printf(&dat, " %.6g", g->cat[c] * 1e6);
            sb_printf(&dat, "\n");
        } else {
            nother += g->count;
            for (int c = 0; c < NCAT; c++)
                other[c] += g->cat[c];
        }
    }
    if (p->ngroups > top) {
        sb_printf(&dat, "\"other (%u ops)\"", nother);
        for (int c = 0; c < NCAT; c++)
            sb_printf(&dat, " %.6g", other[c] * 1e6);
        sb_printf(&dat, "\n");
    }
    gp_head(&gp, p, "stalls", "where the time went, slowest ops");
    sb_printf(&gp, "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.9\n"
                   "set boxwidth 0.8\nset xtics rotate by -45\nset ylabel \"microseconds\"\n");
    /* every category stays a column of the data; the legend and the bars
     * show the ones with time (no empty entries) */
    struct sb cmd = {0};
    sb_printf(&cmd, "plot \"stalls.dat\" using 2:xtic(1) lc rgb \"%s\" title \"%s\"", cat_colors[0],
              cw[0]);
    for (int c = 1; c < NCAT; c++) {
        double any = other[c];
        for (uint32_t k = 0; k < top; k++)
            any += p->groups[k].cat[c];
        if (any > 0)
            sb_printf(&cmd, ", \"\" using %d lc rgb \"%s\" title \"%s\"", c + 2, cat_colors[c], cw[c]);
    }
    gp_outputs(&gp, "stalls", cmd.s);
    free(cmd.s);
    return put_plot(w, dir, "stalls", &dat, &gp, d);
}

static int ts_len(const struct pdata *p, unsigned l)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(p->ts_dev, p->lvl[l]);
    return cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
}

static int write_bandwidth_gp(const struct pdata *p, const char *dir, struct written *w,
                              struct diag *d)
{
    struct sb dat = {0}, gp = {0};
    int n = 0;
    for (unsigned l = 0; l < p->nlvl; l++)
        if (ts_len(p, l) > n)
            n = ts_len(p, l);
    char devw[128], lw[NLVL][HW_LEVEL_NAME];
    sb_printf(&dat, "# %s: bandwidth per level, GB/s, bucket %.6g s\n# time_us",
              gp_word(devw, sizeof devw, p->ts_dev_name), p->bucket_s);
    for (unsigned l = 0; l < p->nlvl; l++)
        sb_printf(&dat, " %s", gp_word(lw[l], sizeof lw[l], p->lvl[l]));
    sb_printf(&dat, "\n");
    /* cJSON arrays are lists: walk them once */
    const cJSON *cur[NLVL];
    for (unsigned l = 0; l < p->nlvl; l++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(p->ts_dev, p->lvl[l]);
        cur[l] = cJSON_IsArray(a) ? a->child : NULL;
    }
    for (int i = 0; i < n; i++) {
        char tb[32];
        numfmt_fix(tb, sizeof tb, (i + 0.5) * p->bucket_s * 1e6, 4);
        sb_putn(&dat, tb, strlen(tb));
        for (unsigned l = 0; l < p->nlvl; l++) {
            double v = cur[l] ? num(cur[l]) : 0.0;
            if (cur[l])
                cur[l] = cur[l]->next;
            char vb[32];
            vb[0] = ' ';
            numfmt_fix(vb + 1, sizeof vb - 1, v * 1e-9, 3);
            sb_putn(&dat, vb, strlen(vb));
        }
        sb_putn(&dat, "\n", 1);
    }
    gp_head(&gp, p, "bandwidth", "bandwidth per memory level over time");
    sb_printf(&gp, "set xlabel \"time (us)\"\nset ylabel \"GB/s\"\n");
    struct sb cmd = {0};
    sb_printf(&cmd, "plot ");
    for (unsigned l = 0; l < p->nlvl; l++)
        sb_printf(&cmd, "%s\"bandwidth.dat\" using 1:%u with steps lw 2 lc rgb \"%s\" title \"%s\"",
                  l ? ", " : "", l + 2, level_colors[l], lw[l]);
    gp_outputs(&gp, "bandwidth", cmd.s);
    free(cmd.s);
    return put_plot(w, dir, "bandwidth", &dat, &gp, d);
}

/* gnuplot binary: $STRATA_GNUPLOT ("" or "none" = never), else PATH lookup */
int plot_find_gnuplot(char *out, size_t n)
{
    const char *env = getenv("STRATA_GNUPLOT");
    if (env != NULL) {
        if (env[0] == '\0' || strcmp(env, "none") == 0)
            return 0;
        snprintf(out, n, "%s", env);
        return access(out, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    static const char *const names[] = {"gnuplot", "gnuplot-nox"};
    for (size_t k = 0; k < 2; k++) {
        const char *s = path ? path : "/usr/bin:/bin";
        while (*s) {
            size_t len = strcspn(s, ":");
            snprintf(out, n, "%.*s/%s", (int)len, s, names[k]);
            if (len > 0 && access(out, X_OK) == 0)
                return 1;
            s += len;
            if (*s == ':')
                s++;
        }
    }
    out[0] = '\0';
    return 0;
}

/* Render each names[k].gp in dir that have[k] marks, all at once (one
 * gnuplot process per plot, run side by side: most of their time is
 * gnuplot starting up).  PNG and SVG land next to the scripts; ok[k] says
 * which rendered.  Each process leads its own process group, and whatever
 * is still running after PLOT_GNUPLOT_TIMEOUT_S is killed with its
 * children.  The path is passed as it is, no shell. */
void plot_run_gnuplots(const char *gnuplot, const char *dir, const char *const *names,
                       const int *have, int n, int *ok)
{
    enum { MAXP = 3 };
    pid_t pid[MAXP] = {-1, -1, -1};
    int done[MAXP] = {1, 1, 1};
    for (int k = 0; k < n && k < MAXP; k++) {
        ok[k] = 0;
        char script[1100];
        if (!have[k] || snprintf(script, sizeof script, "%s.gp", names[k]) >= (int)sizeof script)
            continue;
        fflush(NULL);
        pid[k] = fork();
        if (pid[k] == 0) {
            setpgid(0, 0);
            int fd = open("/dev/null", O_WRONLY);
            if (fd >= 0) {
                dup2(fd, 1);
                dup2(fd, 2);
                close(fd);
            }
            if (chdir(dir) != 0)
                _exit(127);
            execl(gnuplot, gnuplot, script, (char *)NULL);
            _exit(127);
        }
        if (pid[k] > 0) {
            setpgid(pid[k], pid[k]); /* also here: no race with the kill below */
            done[k] = 0;
        }
    }
    struct timespec t0, now, nap = {0, 2000000}; /* poll every 2 ms */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int left = 0;
        for (int k = 0; k < n && k < MAXP; k++) {
            if (done[k])
                continue;
            int st = 0;
            pid_t w = waitpid(pid[k], &st, WNOHANG);
            if (w == pid[k]) {
                done[k] = 1;
                ok[k] = WIFEXITED(st) && WEXITSTATUS(st) == 0;
            } else if (w < 0 && errno != EINTR) {
                done[k] = 1; /* not ours to wait for (SIGCHLD ignored): not known to have worked */
            } else {
                left++;
            }
        }
        if (left == 0)
            break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double waited = (double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) * 1e-9;
        if (waited >= PLOT_GNUPLOT_TIMEOUT_S) {
            for (int k = 0; k < n && k < MAXP; k++)
                if (!done[k]) {
                    kill(-pid[k], SIGKILL);
                    while (waitpid(pid[k], NULL, 0) < 0 && errno == EINTR)
                        ;
                    done[k] = 1;
                }
            break;
        }
        nanosleep(&nap, NULL);
    }
}

/* ------------------------------------------------------------------ SVG */

struct axis {
    double lo, hi;
    int log;                    /* 1 log scale, 0 linear, -1 linear without tick labels */
    double px0, px1;    /* pixel range */
};

static double ax_map(const struct axis *a, double v)
{
    double t;
    if (a->log > 0)
        t = (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
    else
        t = (v - a->lo) / (a->hi - a->lo);
    return a->px0 + t * (a->px1 - a->px0);
}

static void svg_open(struct sb *h, const char *id, const char *title, int w, int hgt)
{
    sb_printf(h, "<figure><figcaption>%s</figcaption>\n<svg id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" "
                 "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n"
                 "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n",
              title, id, w, hgt, w, hgt, w, hgt);
}

/* A tick label: engineering notation with the unit ("10 TFLOP/s"), or the
 * plain number when the axis label carries the unit. */
static void tick_label(char *buf, size_t n, double v, const char *unit)
{
    if (unit != NULL && unit[0] != '\0')
        numfmt_si(buf, n, v, unit);
    else
        snprintf(buf, n, "%g", v);
}

/* Tick step of a linear axis: 1, 2 or 5 x 10^n, about five ticks. */
static double nice_step(double span)
{
    if (!(span > 0))
        return 1;
    double raw = span / 5, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

static void svg_frame(struct sb *h, const struct axis *x, const struct axis *y, const char *xl,
                      const char *yl, const char *xu, const char *yu)
{
    sb_printf(h, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#333\"/>\n",
              x->px0, y->px1, x->px1 - x->px0, y->px0 - y->px1);
    /* ticks at powers of ten (log) or at 1, 2, 5 x 10^n steps (linear),
     * labelled in engineering notation with the axis's unit */
    char lab[48];
    for (int axis = 0; axis < 2; axis++) {
        const struct axis *a = axis ? y : x;
        const char *unit = axis ? yu : xu;
        if (a->log > 0) {
            /* bounded: the ranges are checked when the report is read, and an axis of more
             * than 64 decades would be unreadable anyway */
            int ticks = 0;
            for (double v = pow(10, floor(log10(a->lo))); v > 0 && v <= a->hi * 1.0001 && ticks < 64;
                 v *= 10, ticks++) {
                if (v < a->lo * 0.9999)
                    continue;
                double px = ax_map(a, v);
                tick_label(lab, sizeof lab, v, unit);
                if (axis == 0)
                    sb_printf(h, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                                 "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                              px, y->px0, px, y->px1, px, y->px0 + 14, lab);
                else
                    sb_printf(h, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                                 "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                              x->px0, px, x->px1, px, x->px0 - 4, px + 4, lab);
            }
        } else if (a->log == 0) {
            double step = nice_step(a->hi - a->lo);
            int ticks = 0;
            for (double v = ceil(a->lo / step) * step; v <= a->hi * (1 + 1e-9) && ticks < 32;
                 v += step, ticks++) {
                double px = ax_map(a, v);
                tick_label(lab, sizeof lab, fabs(v) < step * 1e-9 ? 0 : v, unit);
                if (axis == 0)
                    sb_printf(h, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", px,
                              y->px0 + 14, lab);
                else
                    sb_printf(h, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                                 "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                              x->px0, px, x->px1, px, x->px0 - 4, px + 4, lab);
            }
        }
    }
    sb_printf(h, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", (x->px0 + x->px1) / 2,
              y->px0 + 30, xl);
    sb_printf(h, "<text x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" text-anchor=\"middle\">%s</text>\n",
              (y->px0 + y->px1) / 2, (y->px0 + y->px1) / 2, yl);
}

static void svg_legend(struct sb *h, int x, int y, const char *const *names, const char *const *colors,
                       int n)
{
    for (int i = 0; i < n; i++) {
        sb_printf(h, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                     "<text x=\"%d\" y=\"%d\">",
                  x, y + 16 * i, colors[i], x + 14, y + 16 * i + 9);
        sb_html(h, names[i]);
        sb_printf(h, "</text>\n");
    }
}

static void svg_roofline(struct sb *h, const struct pdata *p)
{
    struct axis x = {1e-1, 1e4, 1, 100, 760}, y = {1e9, 1e16, 1, 390, 20};
    /* fit the y range to the peak and the points */
    double ymax = p->peak * 2, ymin = p->peak / 1e5;
    y.lo = pow(10, floor(log10(ymin)));
    y.hi = pow(10, ceil(log10(ymax)));
    char cap[600];
    snprintf(cap, sizeof cap, "Hierarchical roofline, %s on %s: one roof per compute pipe and dtype "
                              "the run used and one per memory level; each op (coloured by kind, "
                              "outlined by level) is placed at its arithmetic intensity at every level",
             workload(p), p->hw_name);
    struct sb capb = {0};
    sb_html(&capb, cap);
    svg_open(h, "plot-roofline", capb.s ? capb.s : "", 990, 430);
    free(capb.s);
    char yl[64];
    snprintf(yl, sizeof yl, "FLOP/s (%s peak)", p->peak_dtype);
    svg_frame(h, &x, &y, "arithmetic intensity (FLOP/byte)", yl, "", "FLOP/s");
    const char *names[NLVL + 12 + NKINDS], *cols[NLVL + 12 + NKINDS];
    char roofname[12][96];
    int nl = 0;
    /* compute roofs: one per pipe and dtype the run used (dashed, grey) */
    struct roof roofs[12];
    int nr = compute_roofs(p, roofs, 12);
    for (int k = 0; k < nr; k++) {
        if (roofs[k].peak < y.lo || roofs[k].peak > y.hi)
            continue;
        char si[32];
        numfmt_si(si, sizeof si, roofs[k].peak, "FLOP/s");
        snprintf(roofname[k], sizeof roofname[k], "%s %s", roofs[k].label, si);
        sb_printf(h, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\" "
                     "stroke-dasharray=\"%d 3\"/>\n", x.px0, ax_map(&y, roofs[k].peak), x.px1,
                  ax_map(&y, roofs[k].peak), 6 + 3 * k);
        names[nl] = roofname[k];
        cols[nl++] = "#555555";
    }
    for (unsigned l = 0; l < p->nlvl; l++) {
        if (p->bw[l] <= 0)
            continue;
        double ridge = p->peak / p->bw[l];
        double x0 = x.lo, y0 = p->bw[l] * x0;
        if (y0 < y.lo) {
            x0 = y.lo / p->bw[l];
            y0 = y.lo;
        }
        double xr = ridge < x.hi ? ridge : x.hi;
        sb_printf(h, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n",
                  level_colors[l], ax_map(&x, x0), ax_map(&y, y0), ax_map(&x, xr),
                  ax_map(&y, p->bw[l] * xr < p->peak ? p->bw[l] * xr : p->peak), ax_map(&x, x.hi),
                  ax_map(&y, p->peak));
        names[nl] = p->lvl[l];
        cols[nl++] = level_colors[l];
    }
    /* Ops that land on the same pixel at a level (the same layer of each
     * of 32 blocks) are one circle whose tooltip says how many: identical
     * circles drawn over each other only made the page larger. */
    uint32_t m = p->nops < PLOT_MAX_ROOF_OPS ? p->nops : PLOT_MAX_ROOF_OPS;
    struct rpt {
        char cx[24], cy[24];
        uint32_t op, count;
        unsigned l;
        double ai, perf;
    } *pts = sim_xcalloc((size_t)m * NLVL + 1, sizeof *pts);
    enum { RPT_HASH = 4096 };   /* more than the points: never full */
    _Static_assert(PLOT_MAX_ROOF_OPS * NLVL < RPT_HASH, "roofline point table too small");
    int32_t *slot = sim_xcalloc(RPT_HASH, sizeof *slot); /* index + 1, 0 = empty */
    uint32_t npts = 0;
    for (uint32_t k = 0; k < m; k++) {
        struct pop ob;
        const struct pop *o = pop_at(p, p->order[k], &ob);
        if (o->flops <= 0 || o->time <= 0)
            continue;
        double perf = o->flops / o->time;
        for (unsigned l = 0; l < p->nlvl; l++) {
            if (p->bw[l] <= 0 || o->bytes[l] <= 0)
                continue;
            double ai = o->flops / o->bytes[l];
            if (ai < x.lo || ai > x.hi || perf < y.lo || perf > y.hi)
                continue;
            struct rpt *q = &pts[npts];
            numfmt_fix(q->cx, sizeof q->cx, ax_map(&x, ai), 1);
            numfmt_fix(q->cy, sizeof q->cy, ax_map(&y, perf), 1);
            uint64_t hsh = key_hash(q->cx) * 31 + key_hash(q->cy) * 7 + l;
            uint32_t b = (uint32_t)(hsh % RPT_HASH);
            while (slot[b] != 0) {
                struct rpt *e = &pts[slot[b] - 1];
                if (e->l == l && strcmp(e->cx, q->cx) == 0 && strcmp(e->cy, q->cy) == 0)
                    break;
                b = (b + 1) % RPT_HASH;
            }
            if (slot[b] != 0) {
                pts[slot[b] - 1].count++;
                continue;
            }
            slot[b] = (int32_t)++npts;
            q->op = p->order[k];
            q->count = 1;
            q->l = l;
            q->ai = ai;
            q->perf = perf;
        }
    }
    struct pop qb;
    for (uint32_t i = 0; i < npts; i++) {
        const struct rpt *q = &pts[i];
        char ia[32], pa[32], more[48] = "";
        numfmt_si(ia, sizeof ia, q->ai, "FLOP/B");
        numfmt_si(pa, sizeof pa, q->perf, "FLOP/s");
        if (q->count > 1)
            snprintf(more, sizeof more, " and %u more ops", q->count - 1);
        const char *head[] = {"<circle cx=\"", q->cx, "\" cy=\"", q->cy, "\" r=\"3\" fill=\"",
                              kind_colors[kind_index(pop_at(p, q->op, &qb)->kind)], "\" stroke=\"",
                              level_colors[q->l], "\" fill-opacity=\"0.7\"><title>"};
        for (size_t j = 0; j < sizeof head / sizeof head[0]; j++)
            sb_puts(h, head[j]);
        sb_html(h, pop_at(p, q->op, &qb)->name);
        sb_puts(h, more);
        sb_puts(h, " at ");
        sb_html(h, p->lvl[q->l]);
        const char *tail[] = {": ", ia, ", ", pa, "</title></circle>\n"};
        for (size_t j = 0; j < sizeof tail / sizeof tail[0]; j++)
            sb_puts(h, tail[j]);
    }
    /* the five slowest ops, named next to their DRAM point */
    int labelled = 0;
    for (uint32_t k = 0; k < p->nops && labelled < 5 && p->lvl_dram >= 0; k++) {
        struct pop ob;
        const struct pop *o = pop_at(p, p->order[k], &ob);
        double b = o->bytes[p->lvl_dram];
        if (o->flops <= 0 || o->time <= 0 || b <= 0)
            continue;
        double ai = o->flops / b, perf = o->flops / o->time;
        if (ai < x.lo || ai > x.hi || perf < y.lo || perf > y.hi)
            continue;
        sb_printf(h, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">", ax_map(&x, ai) + 5,
                  ax_map(&y, perf) - 5 - 10 * labelled);
        sb_html(h, o->name);
        sb_printf(h, "</text>\n");
        labelled++;
    }
    /* kinds in the legend: only those present */
    int used[NKINDS] = {0};
    for (uint32_t i = 0; i < npts; i++)
        used[kind_index(pop_at(p, pts[i].op, &qb)->kind)] = 1;
    for (int k = 0; k < NKINDS; k++)
        if (used[k]) {
            names[nl] = kind_names[k];
            cols[nl++] = kind_colors[k];
        }
    free(pts);
    free(slot);
    svg_legend(h, 770, 30, names, cols, nl);
    sb_printf(h, "</svg></figure>\n");
}

static void svg_stalls(struct sb *h, const struct pdata *p)
{
    uint32_t top = p->ngroups < PLOT_TOP_STALLS ? p->ngroups : PLOT_TOP_STALLS;
    int bars = (int)top + (p->ngroups > top ? 1 : 0);
    double vals[PLOT_TOP_STALLS + 1][NCATMAX];
    memset(vals, 0, sizeof vals);
    double vmax = 0;
    for (uint32_t k = 0; k < p->ngroups; k++) {
        int b = k < top ? (int)k : (int)top;
        for (int c = 0; c < NCAT; c++)
            vals[b][c] += p->groups[k].cat[c] * 1e6;
    }
    for (int b = 0; b < bars; b++) {
        double s = 0;
        for (int c = 0; c < NCAT; c++)
            s += vals[b][c];
        if (s > vmax)
            vmax = s;
    }
    if (vmax <= 0)
        vmax = 1;
    struct axis x = {0, bars > 0 ? bars : 1, -1, 70, 760}, y = {0, vmax * 1.05, 0, 330, 20};
    svg_open(h, "plot-stalls", "Where the time went: busy, launch and waiting per memory level, "
                               "slowest op groups first (names that differ only in numbers summed)",
             900, 470);
    svg_frame(h, &x, &y, "", "time (us)", "", "");
    double bw = (x.px1 - x.px0) / (bars > 0 ? bars : 1);
    for (int b = 0; b < bars; b++) {
        double acc = 0;
        char nm[120];
        if (b < (int)top && p->groups[b].count > 1)
            snprintf(nm, sizeof nm, "%s x%u", p->groups[b].name, p->groups[b].count);
        else
            snprintf(nm, sizeof nm, "%s", b < (int)top ? p->groups[b].name : "other");
        for (int c = 0; c < NCAT; c++) {
            if (vals[b][c] <= 0)
                continue;
            double y0 = ax_map(&y, acc), y1 = ax_map(&y, acc + vals[b][c]);
            sb_printf(h, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
                      x.px0 + b * bw + bw * 0.1, y1, bw * 0.8, y0 - y1, cat_colors[c]);
            sb_html(h, nm);
            sb_printf(h, ": ");
            sb_html(h, cat_name(p, c));
            sb_printf(h, " %.3f us</title></rect>\n", vals[b][c]);
            acc += vals[b][c];
        }
        sb_printf(h, "<text transform=\"translate(%.1f,%.1f) rotate(45)\" font-size=\"9\">",
                  x.px0 + b * bw + bw * 0.5, y.px0 + 8);
        char shortname[28];
        snprintf(shortname, sizeof shortname, "%.27s", nm);
        sb_html(h, shortname);
        sb_printf(h, "</text>\n");
    }
    /* the legend names the categories that have time (no empty entries) */
    const char *cn[NCATMAX], *cc[NCATMAX];
    int ncn = 0;
    for (int c = 0; c < NCAT; c++) {
        double any = 0;
        for (int b = 0; b < bars; b++)
            any += vals[b][c];
        if (any > 0) {
            cn[ncn] = cat_name(p, c);
            cc[ncn++] = cat_colors[c];
        }
    }
    svg_legend(h, 780, 30, cn, cc, ncn);
    sb_printf(h, "</svg></figure>\n");
}

/* one flat step of a line, from time t0 to t1 (us) at pixel height y */
static void svg_step(struct sb *h, const struct axis *x, double t0, double t1, const char *y)
{
    char a1[24], a3[24];
    numfmt_fix(a1, sizeof a1, ax_map(x, t0), 1);
    numfmt_fix(a3, sizeof a3, ax_map(x, t1), 1);
    const char *pts[] = {a1, ",", y, " ", a3, ",", y, " "};
    for (size_t q = 0; q < sizeof pts / sizeof pts[0]; q++)
        sb_puts(h, pts[q]);
}

/* at most this many steps per line of the bandwidth plot (690 px wide) */
#define SVG_BW_STEPS 345

static void svg_bandwidth(struct sb *h, const struct pdata *p)
{
    int n = 0;
    double vmax = 0;
    for (unsigned l = 0; l < p->nlvl; l++) {
        int k = ts_len(p, l);
        if (k > n)
            n = k;
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(p->ts_dev, p->lvl[l]);
        for (const cJSON *v = cJSON_IsArray(a) ? a->child : NULL; v != NULL; v = v->next)
            if (num(v) > vmax)
                vmax = num(v);
    }
    double tmax = n * p->bucket_s * 1e6;
    struct axis x = {0, tmax > 0 ? tmax : 1, 0, 70, 760}, y = {0, vmax > 0 ? vmax * 1.05e-9 : 1, 0, 390, 20};
    svg_open(h, "plot-bandwidth", "Bandwidth per memory level over time", 900, 430);
    svg_frame(h, &x, &y, "time (us)", "bandwidth (GB/s)", "", "");
    const char *names[NLVL], *cols[NLVL];
    int nl = 0;
    for (unsigned l = 0; l < p->nlvl; l++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(p->ts_dev, p->lvl[l]);
        if (!cJSON_IsArray(a) || a->child == NULL)
            continue;
        sb_printf(h, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", level_colors[l]);
        /* a step line: buckets are averaged in groups of about two
         * pixels, and a run of steps at the same height is one segment
         * (more points than pixels only made the page larger) */
        int len = ts_len(p, l), g = (len + SVG_BW_STEPS - 1) / SVG_BW_STEPS, i = 0;
        if (g < 1)
            g = 1;
        char y0[24] = "", ycur[24];
        int seg0 = 0;
        for (const cJSON *v = a->child; v != NULL;) {
            int i0 = i;
            double sum = 0;
            for (int k = 0; k < g && v != NULL; k++, v = v->next, i++)
                sum += num(v);
            numfmt_fix(ycur, sizeof ycur, ax_map(&y, sum / (i - i0) * 1e-9), 1);
            if (i0 > 0 && strcmp(ycur, y0) != 0) {
                svg_step(h, &x, seg0 * p->bucket_s * 1e6, i0 * p->bucket_s * 1e6, y0);
                seg0 = i0;
            }
            if (i0 == 0 || strcmp(ycur, y0) != 0)
                memcpy(y0, ycur, sizeof y0);
        }
        if (i > 0)
            svg_step(h, &x, seg0 * p->bucket_s * 1e6, i * p->bucket_s * 1e6, y0);
        sb_printf(h, "\"/>\n");
        names[nl] = p->lvl[l];
        cols[nl++] = level_colors[l];
    }
    svg_legend(h, 780, 30, names, cols, nl);
    sb_printf(h, "</svg></figure>\n");
}

/* ------------------------------------------------------------------ HTML */

static double whatif_time(const struct pdata *p, const char *name)
{
    const cJSON *w;
    cJSON_ArrayForEach(w, p->whatif)
    {
        if (strcmp(jstr(w, "name"), name) == 0)
            return jnum(w, "total_time_s");
    }
    return 0;
}

static void verdicts(struct sb *h, const struct pdata *p)
{
    char a[32], b[32];
    sb_printf(h, "<h2>Verdicts</h2>\n<ul id=\"verdicts\">\n");
    if (p->total <= 0) {
        sb_printf(h, "<li>The run took no time.</li></ul>\n");
        return;
    }
    /* the largest waiting level */
    int worst = -1;
    for (unsigned l = 0; l < p->nlvl; l++)
        if (p->stall[l] > 0 && (worst < 0 || p->stall[l] > p->stall[worst]))
            worst = (int)l;
    if (worst >= 0) {
        /* the built-in what-ifs double the DRAM and the first cache */
        const char *wname = worst == p->lvl_dram ? "dram_bw_x2" : worst == p->lvl_l2 ? "l2_bw_x2" : "";
        const char *wlabel = p->lvl[worst];
        sb_printf(h, "<li>%.0f%% of the time the compute units waited on ", 100 * p->stall[worst] / p->total);
        sb_html(h, wlabel);
        sb_printf(h, ".");
        double t2 = p->whatif ? whatif_time(p, wname) : 0;
        if (t2 > 0) {
            numfmt_time(a, sizeof a, p->total);
            numfmt_time(b, sizeof b, t2);
            sb_printf(h, " Doubling ");
            sb_html(h, wlabel);
            sb_printf(h, " bandwidth would cut at most %.0f%% (re-simulated: %s &rarr; %s).",
                      100 * (1 - t2 / p->total), a, b);
        }
        sb_printf(h, "</li>\n");
    }
    sb_printf(h, "<li>The compute pipes were busy %.0f%% of the time.", 100 * p->busy / p->total);
    double tm = p->whatif ? whatif_time(p, "matrix_x2") : 0;
    if (tm > 0)
        sb_printf(h, " Twice the matrix FLOP/s would cut %.0f%% (re-simulated).", 100 * (1 - tm / p->total));
    sb_printf(h, "</li>\n");
    if (p->launch / p->total > 0.05) {
        sb_printf(h, "<li>%.0f%% of the time went to kernel launches.", 100 * p->launch / p->total);
        double tl = p->whatif ? whatif_time(p, "no_launch") : 0;
        if (tl > 0)
            sb_printf(h, " With no launch overhead (CUDA graphs, fused kernels) the run would be %.0f%% shorter "
                         "(re-simulated).",
                      100 * (1 - tl / p->total));
        sb_printf(h, "</li>\n");
    }
    if (p->nops > 0) {
        struct pop ob;
        const struct pop *o = pop_at(p, p->order[0], &ob);
        sb_printf(h, "<li>The slowest op, <code>");
        sb_html(h, o->name);
        sb_printf(h, "</code> (");
        sb_html(h, o->kind);
        sb_printf(h, "), takes %.1f%% of the run and is bound by ", 100 * o->time / p->total);
        sb_html(h, o->bound);
        sb_printf(h, ".</li>\n");
    }
    sb_printf(h, "</ul>\n");
}

static const char html_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<title>strata report</title>\n<style>\n"
    "body{font-family:sans-serif;margin:24px;max-width:1200px;color:#222}\n"
    "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}\n"
    "th{background:#eee;cursor:pointer}td.l,th.l{text-align:left}figure{margin:16px 0}\n"
    "figcaption{font-weight:bold;margin-bottom:4px}.big{font-size:20px}\n"
    "</style></head><body>\n";

static const char html_sort_js[] =
    "<script>\n"
    "function sortTable(c){var t=document.getElementById('ops'),b=t.tBodies[0],r=Array.from(b.rows);\n"
    "var d=t.getAttribute('data-dir')==='a'?-1:1;t.setAttribute('data-dir',d===1?'a':'d');\n"
    "r.sort(function(x,y){var a=x.cells[c].getAttribute('data-v'),e=y.cells[c].getAttribute('data-v');\n"
    "if(a!==null&&e!==null)return d*(parseFloat(e)-parseFloat(a));\n"
    "return d*x.cells[c].textContent.localeCompare(y.cells[c].textContent);});\n"
    "r.forEach(function(x){b.appendChild(x);});}\n"
    "</script>\n";

static void html_report(struct sb *h, const struct pdata *p)
{
    char a[32], b[32];
    sb_printf(h, "%s", html_head);
    sb_printf(h, "<h1>strata: ");
    sb_html(h, p->trace_path);
    sb_printf(h, " on ");
    sb_html(h, p->hw_name);
    sb_printf(h, "</h1>\n<p class=\"big\">Total time <b id=\"total-time\">");
    numfmt_time(a, sizeof a, p->total);
    sb_printf(h, "%s</b>", a);
    if (p->tokens_per_s > 0)
        sb_printf(h, " &middot; <b id=\"tokens-per-s\">%.1f tokens/s</b>", p->tokens_per_s);
    numfmt_si(a, sizeof a, p->flops, "FLOP");
    numfmt_si(b, sizeof b, p->total > 0 ? p->flops / p->total : 0, "FLOP/s");
    sb_printf(h, " &middot; %s (%s)</p>\n<p>Bytes moved:", a, b);
    for (unsigned l = 0; l < p->nlvl; l++) {
        if (p->bytes[l] <= 0)
            continue;
        numfmt_si(a, sizeof a, p->bytes[l], "B");
        numfmt_si(b, sizeof b, p->total > 0 ? p->bytes[l] / p->total : 0, "B/s");
        sb_printf(h, " ");
        sb_html(h, p->lvl[l]);
        sb_printf(h, " %s (%s);", a, b);
    }
    sb_printf(h, "</p>\n");
    verdicts(h, p);
    if (p->have_hw) {
        sb_printf(h, "<h2>The chip</h2>\n<table id=\"chip\"><tr><th class=\"l\">level</th><th>bandwidth</th>"
                     "<th>achievable</th><th>ridge (%s FLOP/byte)</th></tr>\n",
                  p->peak_dtype);
        double ach[NLVL];
        jlevels(p, p->hwd, "achievable_bandwidth_bytes_per_s", ach);
        for (unsigned l = 0; l < p->nlvl; l++) {
            if (p->bw[l] <= 0)
                continue;
            numfmt_si(a, sizeof a, p->bw[l], "B/s");
            numfmt_si(b, sizeof b, ach[l], "B/s");
            sb_printf(h, "<tr><td class=\"l\">");
            sb_html(h, p->lvl[l]);
            sb_printf(h, "</td><td>%s</td><td>%s</td><td>%.1f</td></tr>\n", a, b, p->peak / p->bw[l]);
        }
        sb_printf(h, "</table>\n<p>Peak FLOP/s:");
        const cJSON *mp = cJSON_GetObjectItemCaseSensitive(p->hwd, "matrix_peak_flops"), *it;
        cJSON_ArrayForEach(it, mp)
        {
            numfmt_si(a, sizeof a, num(it), "FLOP/s");
            sb_printf(h, " ");
            sb_html(h, it->string ? it->string : "");
            sb_printf(h, " %s (matrix);", a);
        }
        sb_printf(h, "</p>\n");
    }
    sb_printf(h, "<h2>Plots</h2>\n");
    if (p->have_hw)
        svg_roofline(h, p);
    else
        sb_printf(h, "<p>No roofline: the report has no hardware_derived figures.</p>\n");
    svg_stalls(h, p);
    if (p->ts_dev != NULL)
        svg_bandwidth(h, p);
    else
        sb_printf(h, "<p>No bandwidth plot: the report has no timeseries (write it with strata run --out).</p>\n");
    uint32_t rows = p->nops < PLOT_MAX_TABLE_ROWS ? p->nops : PLOT_MAX_TABLE_ROWS;
    sb_printf(h, "<h2>Ops</h2>\n<p>Slowest first; click a column to sort.%s</p>\n", p->nops > rows ? " Only the slowest 500 are listed." : "");
    sb_printf(h, "<table id=\"ops\" data-dir=\"d\"><thead><tr><th class=\"l\" onclick=\"sortTable(0)\">op</th>"
                 "<th class=\"l\" onclick=\"sortTable(1)\">kind</th><th onclick=\"sortTable(2)\">time (us)</th>"
                 "<th onclick=\"sortTable(3)\">share</th><th onclick=\"sortTable(4)\">GFLOP</th>"
                 "<th onclick=\"sortTable(5)\">DRAM MB</th><th class=\"l\" onclick=\"sortTable(6)\">bound</th>"
                 "<th class=\"l\" onclick=\"sortTable(7)\">tiles</th></tr></thead><tbody>\n");
    for (uint32_t k = 0; k < rows; k++) {
        struct pop ob;
        const struct pop *o = pop_at(p, p->order[k], &ob);
        /* sort keys: time in ps, FLOPs and bytes as whole numbers */
        char tv[24], t3[24], sh[24], fv[40], f3[24], dv[40], d3[24];
        numfmt_g(tv, sizeof tv, floor(o->time * 1e12 + 0.5));
        numfmt_fix(t3, sizeof t3, o->time * 1e6, 3);
        numfmt_fix(sh, sizeof sh, p->total > 0 ? 100 * o->time / p->total : 0, 1);
        numfmt_g(fv, sizeof fv, floor(o->flops));
        numfmt_fix(f3, sizeof f3, o->flops * 1e-9, 3);
        double db = p->lvl_dram >= 0 ? o->bytes[p->lvl_dram] : 0;
        numfmt_g(dv, sizeof dv, floor(db));
        numfmt_fix(d3, sizeof d3, db * 1e-6, 3);
        const char *cells[] = {"<tr><td class=\"l\">", NULL, "</td><td class=\"l\">", NULL,
                               "</td><td data-v=\"", tv, "\">", t3, "</td><td data-v=\"", tv, "\">",
                               sh, "%</td><td data-v=\"", fv, "\">", f3, "</td><td data-v=\"", dv,
                               "\">", d3, "</td><td class=\"l\">", NULL, "</td><td class=\"l\">",
                               NULL, "</td></tr>\n"};
        const char *esc[] = {o->name, o->kind, o->bound, o->tile};
        int e = 0;
        for (size_t c = 0; c < sizeof cells / sizeof cells[0]; c++) {
            if (cells[c] == NULL)
                sb_html(h, esc[e++]);
            else
                sb_puts(h, cells[c]);
        }
    }
    sb_printf(h, "</tbody></table>\n%s<p>Written by strata from a saved report; open timeline.json in "
                 "ui.perfetto.dev for the time line.</p>\n</body></html>\n",
              html_sort_js);
}

/* ------------------------------------------------------------------ entry */

static int render_doc(const struct jsondoc *docp, const struct report_ctx *run, const char *outdir,
                      struct plot_summary *sum, struct diag *d);

/* The first number in a document that is not finite (1e400 parses as
 * infinity), or NULL.  strata writes only finite numbers. */
static const cJSON *first_nonfinite(const cJSON *j)
{
    if (cJSON_IsNumber(j) && !isfinite(j->valuedouble))
        return j;
    for (const cJSON *c = j ? j->child : NULL; c != NULL; c = c->next) {
        const cJSON *b = first_nonfinite(c);
        if (b != NULL)
            return b;
    }
    return NULL;
}

int plot_render_ex(const char *report_path, const char *outdir, struct plot_summary *sum,
                   struct diag *d)
{
    struct plot_summary local;
    if (strlen(outdir) > 1000)
        return diag_set(d, DIAG_E_IO, outdir, 0, "--out", "path too long");
    if (sum == NULL)
        sum = &local;
    memset(sum, 0, sizeof *sum);
    struct jsondoc doc;
    if (jsondoc_load(report_path, &doc, d) != 0)
        return -1;
    const cJSON *bad = first_nonfinite(doc.root);
    if (bad != NULL) {
        int rc = diag_set(d, DIAG_E_RANGE, doc.name, jsondoc_line(&doc, bad),
                          bad->string ? bad->string : "", "not a finite number");
        jsondoc_free(&doc);
        return rc;
    }
    int rc = render_doc(&doc, NULL, outdir, sum, d);
    jsondoc_free(&doc);
    return rc;
}

int plot_render_tree(const void *report, const char *name, const char *outdir, struct diag *d)
{
    return plot_render_run(report, NULL, name, outdir, d);
}

/* c NULL: the ops come from the tree's "ops" */
int plot_render_run(const void *head, const struct report_ctx *c, const char *name, const char *outdir,
                    struct diag *d)
{
    if (strlen(outdir) > 1000)
        return diag_set(d, DIAG_E_IO, outdir, 0, "--out", "path too long");
    struct jsondoc doc;
    memset(&doc, 0, sizeof doc);
    doc.root = (cJSON *)(uintptr_t)head; /* read only */
    snprintf(doc.name, sizeof doc.name, "%s", name);
    struct plot_summary sum;
    return render_doc(&doc, c, outdir, &sum, d);
}

static int render_doc(const struct jsondoc *docp, const struct report_ctx *run, const char *outdir,
                      struct plot_summary *sum, struct diag *d)
{
    const struct jsondoc doc = *docp;
    struct pdata p;
    struct written w;
    memset(&w, 0, sizeof w);
    int rc = load_report(&doc, run, &p, d);
    char plots[1100], path[1200];
    snprintf(plots, sizeof plots, "%s/plots", outdir);
    if (rc == 0) {
        snprintf(w.outdir, sizeof w.outdir, "%s", outdir);
        rc = ensure_dir(outdir, &w.made_outdir, d);
    }
    if (rc == 0) {
        snprintf(w.plots_dir, sizeof w.plots_dir, "%s", plots);
        rc = ensure_dir(plots, &w.made_plots_dir, d);
    }
    static const char *const names[3] = {"roofline", "stalls", "bandwidth"};
    int have[3] = {0, 0, 0};
    if (rc == 0 && p.have_hw) {
        rc = write_roofline_gp(&p, plots, &w, d);
        have[0] = rc == 0;
    }
    if (rc == 0) {
        rc = write_stalls_gp(&p, plots, &w, d);
        have[1] = rc == 0;
    }
    if (rc == 0 && p.ts_dev != NULL) {
        rc = write_bandwidth_gp(&p, plots, &w, d);
        have[2] = rc == 0;
    }
    if (rc == 0) {
        sum->plots = have[0] + have[1] + have[2];
        sum->gnuplot_found = plot_find_gnuplot(sum->gnuplot, sizeof sum->gnuplot);
        struct sb readme = {0};
        int ok[3] = {0, 0, 0};
        if (sum->gnuplot_found)
            plot_run_gnuplots(sum->gnuplot, plots, names, have, 3, ok);
        for (int k = 0; k < 3; k++) {
            if (!have[k])
                continue;
            if (ok[k])
                sum->rendered++;
            else if (sum->gnuplot_found)
                sb_printf(&readme, "gnuplot failed on %s.gp\n", names[k]);
        }
        if (!sum->gnuplot_found || sum->rendered < sum->plots) {
            sb_printf(&readme, "To render the plots: apt-get install gnuplot-nox; cd plots; "
                               "for f in *.gp; do gnuplot \"$f\"; done\n");
            snprintf(path, sizeof path, "%s/README.txt", plots);
            rc = put_file(&w, path, readme.s, readme.n, d);
        }
        free(readme.s);
        /* rendered images are files of this call too */
        for (int k = 0; k < 3 && sum->rendered; k++)
            for (int e = 0; e < 2 && have[k]; e++) {
                snprintf(path, sizeof path, "%s/%s.%s", plots, names[k], e ? "svg" : "png");
                if (access(path, F_OK) == 0 && w.n < 16)
                    snprintf(w.path[w.n++], sizeof w.path[0], "%s", path);
            }
    }
    if (rc == 0) {
        struct sb h = {0};
        html_report(&h, &p);
        snprintf(path, sizeof path, "%s/report.html", outdir);
        rc = put_file(&w, path, h.s, h.n, d);
        free(h.s);
    }
    if (rc != 0)
        undo(&w);
    free(p.ops);
    free(p.order);
    free(p.groups);
    return rc;
}
