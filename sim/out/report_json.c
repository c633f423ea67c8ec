/* report_json.c: report.json (report_json.h).  The head is a cJSON tree;
 * the ops are either items of it (report_json_tree) or printed one at a
 * time into the gap the head leaves for them (report_json_write), the two
 * byte for byte the same (tests/test_unit_report.c).  cJSON is used here
 * (writing) and in the JSON loaders (reading) only. */
#include "report_json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afile.h"
#include "bodytext.h"
#include "check.h"
#include "info.h"
#include "jsonout.h"
#include "numfmt.h"
#include "strbuf.h"
#include "timeline.h"

#define REPORT_MAX_BUCKETS 512

/* {level: t[level] s} */
static cJSON *stall_obj_u64(const struct hw_config *c, const uint64_t *t)
{
    cJSON *o = cJSON_CreateObject();
    for (unsigned l = 0; l < c->nlevels; l++)
        jout_add_num(o, c->level[l].name, (double)t[l] * REPORT_PS);
    return o;
}

/* "hardware": the chip, and the system's nodes and links when the run
 * was on a system file */
static void json_hardware(cJSON *root, const struct report_ctx *c)
{
    cJSON *hw = cJSON_AddObjectToObject(root, "hardware");
    cJSON_AddStringToObject(hw, "name", cfg_label(c->cfg));
    if (c->cfg->variant[0] != '\0')
        cJSON_AddStringToObject(hw, "chip", c->cfg->name);
    cJSON_AddStringToObject(hw, "family", c->cfg->family);
    cJSON_AddStringToObject(hw, "config", c->cfg->path);
    if (c->sys != NULL) {
        const struct hw_system *s = c->sys;
        cJSON *sj = cJSON_AddObjectToObject(hw, "system");
        cJSON_AddStringToObject(sj, "name", s->name);
        cJSON_AddStringToObject(sj, "config", s->path);
        jout_add_num(sj, "devices", s->ndevices);
        cJSON *nodes = cJSON_AddArrayToObject(sj, "nodes");
        for (uint32_t i = 0; i < s->nnodes; i++) {
            cJSON *n = cJSON_CreateObject();
            cJSON_AddStringToObject(n, "name", s->nodes[i].name);
            cJSON_AddStringToObject(n, "kind", sys_node_kind_name(s->nodes[i].kind));
            jout_add_num(n, "bandwidth_bytes_per_s", s->nodes[i].bw_bytes_per_s);
            cJSON_AddItemToArray(nodes, n);
        }
        cJSON *links = cJSON_AddArrayToObject(sj, "links");
        for (uint32_t i = 0; i < s->nlinks; i++) {
            const struct sys_link *l = &s->links[i];
            cJSON *n = cJSON_CreateObject();
            cJSON_AddStringToObject(n, "name", l->name);
            cJSON_AddStringToObject(n, "from", s->nodes[l->a].name);
            cJSON_AddStringToObject(n, "to", s->nodes[l->b].name);
            cJSON_AddStringToObject(n, "level", c->cfg->level[l->level].name);
            jout_add_num(n, "bandwidth_bytes_per_s_per_direction", l->bw_bytes_per_s);
            jout_add_num(n, "latency_s", (double)l->latency_ps * 1e-12);
            cJSON_AddItemToArray(links, n);
        }
    }
}

/* the trace and the run's totals: time, tokens, work, bytes and time per
 * level, energy and power */
static void json_totals(cJSON *root, const struct report_ctx *c)
{
    const struct run_result *r = c->r;
    const struct trace *t = c->t;
    double total = (double)r->total_ps * REPORT_PS;
    cJSON *tr = cJSON_AddObjectToObject(root, "trace");
    cJSON_AddStringToObject(tr, "path", t->path);
    jout_add_num(tr, "ops", t->nops);
    jout_add_num(root, "total_time_s", total);
    if (c->tokens > 0) {
        jout_add_num(root, "tokens", c->tokens);
        jout_add_num(root, "tokens_per_s", total > 0 ? c->tokens / total : 0);
    }
    jout_add_num(root, "flops", r->flops);
    jout_add_num(root, "working_set_bytes", r->working_set);
    jout_add_num(root, "spill_bytes", r->spill);
    cJSON_AddItemToObject(root, "bytes", info_json_levels(c->cfg, r->bytes, 1.0));
    cJSON *st = cJSON_CreateObject();
    for (unsigned l = 0; l < c->cfg->nlevels; l++)
        jout_add_num(st, c->cfg->level[l].name, r->time_ps[CAT_STALL + l] * REPORT_PS);
    cJSON_AddItemToObject(root, "stall_s", st);
    cJSON *sl = cJSON_CreateObject();
    for (unsigned l = 0; l < c->cfg->nlevels; l++)
        jout_add_num(sl, c->cfg->level[l].name, r->lat_ps[l] * REPORT_PS);
    cJSON_AddItemToObject(root, "stall_latency_s", sl);
    jout_add_num(root, "busy_s", r->time_ps[CAT_BUSY] * REPORT_PS);
    jout_add_num(root, "launch_s", r->time_ps[CAT_LAUNCH] * REPORT_PS);
    jout_add_num(root, "measured_s", r->time_ps[CAT_MEASURED] * REPORT_PS);
    jout_add_num(root, "idle_s", r->time_ps[RUN_IDLE] * REPORT_PS);
    jout_add_num(root, "engine_events", (double)r->events);
    if (r->has_energy) {
        /* the energy per level, the pipes' and the idle power's, J; the
         * average power of a simulated device, W */
        cJSON *ej = cJSON_AddObjectToObject(root, "energy_J");
        for (unsigned l = 0; l < c->cfg->nlevels; l++)
            jout_add_num(ej, c->cfg->level[l].name, r->energy_j[l]);
        jout_add_num(ej, "pipes", r->energy_j[RUN_E_PIPES]);
        jout_add_num(ej, "idle", r->energy_j[RUN_E_STATIC]);
        jout_add_num(ej, "total", run_energy_total(r));
        uint32_t ndev = r->ndevices - t->nmirrors;
        jout_add_num(root, "power_W", total > 0 && ndev > 0 ? run_energy_total(r) / total / ndev : 0);
        jout_add_num(root, "power_max_W", run_hot_power(r, t, NULL));
        if (c->cfg->power_limit_w > 0)
            jout_add_num(root, "power_limit_W", c->cfg->power_limit_w);
        if (r->clock_scale > 0) {   /* a sustained run: the clock it held */
            jout_add_num(root, "sustained_clock_MHz", c->cfg->clock_hz * r->clock_scale / 1e6);
            jout_add_num(root, "sustained_runs", r->power_runs);
            if (r->power_floor)
                cJSON_AddBoolToObject(root, "sustained_at_floor", 1);
        }
    }
}

static void json_devices(cJSON *root, const struct report_ctx *c)
{
    const struct run_result *r = c->r;
    const struct trace *t = c->t;
    double total = (double)r->total_ps * REPORT_PS;
    if (r->ndevices > 0 && r->dev_time_ps != NULL) {
        /* each device's time: busy, launch, stall per level (its exposed
         * communication at the link levels), idle; they add up to the total */
        cJSON *devs = cJSON_AddArrayToObject(root, "devices");
        for (uint32_t dv = 0; dv < r->ndevices; dv++) {
            const double *row = r->dev_time_ps + (size_t)dv * (CAT_COUNT + 1);
            cJSON *dj = cJSON_CreateObject();
            cJSON_AddStringToObject(dj, "name", t->devices[dv]);
            if (t->mirror != NULL && t->mirror[dv])
                cJSON_AddBoolToObject(dj, "mirror", 1);
            jout_add_num(dj, "busy_s", row[CAT_BUSY] * REPORT_PS);
            jout_add_num(dj, "launch_s", row[CAT_LAUNCH] * REPORT_PS);
            jout_add_num(dj, "measured_s", row[CAT_MEASURED] * REPORT_PS);
            cJSON *ds = cJSON_CreateObject();
            for (unsigned l = 0; l < c->cfg->nlevels; l++)
                jout_add_num(ds, c->cfg->level[l].name, row[CAT_STALL + l] * REPORT_PS);
            cJSON_AddItemToObject(dj, "stall_s", ds);
            jout_add_num(dj, "idle_s", row[RUN_IDLE] * REPORT_PS);
            if (r->has_energy && !(t->mirror != NULL && t->mirror[dv])) {
                jout_add_num(dj, "energy_J", r->dev_energy_j[dv]);
                jout_add_num(dj, "power_W", total > 0 ? r->dev_energy_j[dv] / total : 0);
            }
            cJSON_AddItemToArray(devs, dj);
        }
    }
}

static void json_timeseries(cJSON *root, const struct report_ctx *c)
{
    const struct trace *t = c->t;
    if (c->tl != NULL) {
        const struct timeline *tl = c->tl;
        cJSON *ts = cJSON_AddObjectToObject(root, "timeseries");
        /* at most REPORT_MAX_BUCKETS points: plots need no more (the
         * timeline keeps the fine buckets) */
        uint32_t nb = 0;
        for (uint32_t i = 0; i < tl->ndev * TL_SERIES_PER_DEV; i++)
            if (tl->series[i].n > nb)
                nb = tl->series[i].n;
        uint32_t group = (nb + REPORT_MAX_BUCKETS - 1) / REPORT_MAX_BUCKETS;
        if (group == 0)
            group = 1;
        double bucket_s = (double)tl->bucket_ps * group * REPORT_PS;
        jout_add_num(ts, "bucket_s", bucket_s);
        cJSON *devs = cJSON_AddObjectToObject(ts, "devices");
        for (uint32_t dv = 0; dv < tl->ndev; dv++) {
            cJSON *dj = cJSON_AddObjectToObject(devs, t->devices[dv]);
            for (unsigned l = 0; l < c->cfg->nlevels; l++) {
                const struct tl_series *se = &tl->series[(size_t)dv * TL_SERIES_PER_DEV + l];
                cJSON *arr = cJSON_AddArrayToObject(dj, c->cfg->level[l].name);
                for (uint32_t b = 0; b < se->n; b += group) {
                    double sum = 0;
                    for (uint32_t k = b; k < b + group && k < se->n; k++)
                        sum += se->amount[k];
                    /* whole bytes per second are precise enough and print fast */
                    cJSON_AddItemToArray(arr, jout_num(floor(sum / bucket_s + 0.5)));
                }
            }
        }
    }
}

static void json_whatif(cJSON *root, const struct report_ctx *c)
{
    if (c->nwhatif > 0) {
        cJSON *wa = cJSON_AddArrayToObject(root, "whatif");
        for (unsigned k = 0; k < c->nwhatif; k++) {
            cJSON *w = cJSON_CreateObject();
            cJSON_AddStringToObject(w, "name", c->whatif[k].name);
            cJSON_AddStringToObject(w, "description", c->whatif[k].description);
            cJSON_AddStringToObject(w, "set", c->whatif[k].set);   /* --set it as: */
            jout_add_num(w, "total_time_s", c->whatif[k].total_time_s);
            cJSON_AddItemToArray(wa, w);
        }
    }
}

void *report_json_head(const struct report_ctx *c)
{
    cJSON *root = cJSON_CreateObject();
    jout_add_num(root, "strata_report", REPORT_FORMAT);
    cJSON_AddStringToObject(root, "version", STRATA_VERSION);
    json_hardware(root, c);
    json_totals(root, c);
    json_devices(root, c);
    struct info_out inf;
    info_derive(c->cfg, &inf);
    cJSON_AddItemToObject(root, "hardware_derived", info_json_tree(c->cfg, &inf));
    json_timeseries(root, c);
    json_whatif(root, c);
    cJSON_AddArrayToObject(root, "ops"); /* last: report_json_tree or the writer fills it */
    return root;
}

/* One op of the report, as its own object. */
static cJSON *op_json(const struct report_ctx *c, uint32_t i)
{
    const struct op_result *o = run_op_body(c->r, i);
    const struct op *op = &c->t->ops[i];
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "id", op_id(c->t, op));
    cJSON_AddStringToObject(j, "name", op_name(c->t, op));
    cJSON_AddStringToObject(j, "kind", op_kind_name(op->kind));
    cJSON_AddStringToObject(j, "device", c->t->devices[op->device]);
    jout_add_num(j, "stream", op->stream);
    cJSON_AddStringToObject(j, "dtype", dtype_name(op->dtype));
    jout_add_num(j, "start_s", (double)run_op_start(c->r, i) * REPORT_PS);
    jout_add_num(j, "time_s", report_op_time_s(o));
    jout_add_num(j, "flops", o->flops);
    cJSON_AddItemToObject(j, "bytes", info_json_levels(c->cfg, o->bytes, 1.0));
    cJSON_AddStringToObject(j, "bound", run_bound_name(c->cfg, o));
    cJSON_AddItemToObject(j, "stall_s", stall_obj_u64(c->cfg, o->time_ps + CAT_STALL));
    cJSON_AddItemToObject(j, "stall_latency_s", stall_obj_u64(c->cfg, o->lat_ps));
    jout_add_num(j, "busy_s", (double)o->time_ps[CAT_BUSY] * REPORT_PS);
    jout_add_num(j, "launch_s", (double)o->time_ps[CAT_LAUNCH] * REPORT_PS);
    jout_add_num(j, "measured_s", (double)o->time_ps[CAT_MEASURED] * REPORT_PS);
    jout_add_num(j, "kernels", o->kernels);
    jout_add_num(j, "ctas", (double)o->ctas);
    jout_add_num(j, "waves", o->waves);
    cJSON_AddStringToObject(j, "tile", o->tile);
    if (op->measured_s >= 0)
        jout_add_num(j, "measured_s", op->measured_s);
    if (c->r->has_energy)
        jout_add_num(j, "energy_J", report_op_energy_j(c->cfg, o));
    return j;
}

void *report_json_tree(const struct report_ctx *c)
{
    cJSON *root = report_json_head(c);
    cJSON *ops = cJSON_GetObjectItemCaseSensitive(root, "ops");
    for (uint32_t i = 0; i < c->r->nops; i++)
        cJSON_AddItemToArray(ops, op_json(c, i));
    return root;
}

/* The op objects of report_json_write, printed as cJSON prints op_json()'s
 * object unformatted (one op a line: a million ops pretty-printed were
 * 640 MB, two thirds of it tabs and newlines), without building it: 40
 * allocations an op were most of the time of a 1M-op report
 * (tests/test_unit_report.c holds the two byte for byte equal). */
/* A key strata names (no byte that needs escaping): "key": */
#define PUT_KEY(f, key) sb_putn((f), "\"" key "\":", sizeof(key) + 2)

static void put_num(struct sb *f, double v)
{
    char buf[40];
    int k = isfinite(v) ? numfmt_g(buf, sizeof buf, v) : snprintf(buf, sizeof buf, "null");
    sb_putn(f, buf, (size_t)k);
}

#define PUT_STR_MEMBER(f, key, v) \
    do {                          \
        PUT_KEY(f, key);          \
        sb_json(f, v);            \
        sb_putn(f, ",", 1);       \
    } while (0)

#define PUT_NUM_MEMBER(f, key, v) \
    do {                          \
        PUT_KEY(f, key);          \
        put_num(f, v);            \
        sb_putn(f, ",", 1);       \
    } while (0)

/* The levels' names as keys, escaped once a report. */
struct lvkeys {
    char key[HW_MAX_LEVELS][80];
    size_t len[HW_MAX_LEVELS];
};

static void lvkeys_init(struct lvkeys *k, const struct hw_config *c)
{
    for (unsigned l = 0; l < c->nlevels && l < HW_MAX_LEVELS; l++) {
        struct sb b = {0};
        sb_json(&b, c->level[l].name);
        sb_putn(&b, ":", 1);
        snprintf(k->key[l], sizeof k->key[l], "%s", b.s);
        k->len[l] = strlen(k->key[l]);
        free(b.s);
    }
}

/* One number per level, as jout_levels (v[l] * scale) */
static void put_levels(struct sb *f, const struct hw_config *c, const struct lvkeys *k,
                       const double *v, const uint64_t *vu, double scale)
{
    sb_putn(f, "{", 1);
    for (unsigned l = 0; l < c->nlevels; l++) {
        if (l > 0)
            sb_putn(f, ",", 1);
        sb_putn(f, k->key[l], k->len[l]);
        put_num(f, v != NULL ? v[l] * scale : (double)vu[l] * scale);
    }
    sb_putn(f, "},", 2);
}

struct op_writer {
    const struct report_ctx *c;
    struct lvkeys k;
    struct bodytext time, energy;   /* each body's "time_s" ... "tile", its ",energy_J" */
};

/* Body b's members from "time_s" to "tile" (bodytext_fn) */
static void put_body(struct sb *f, const void *ctx, uint32_t b)
{
    const struct op_writer *w = ctx;
    const struct report_ctx *c = w->c;
    const struct op_result *o = &c->r->body[b];
    PUT_NUM_MEMBER(f, "time_s", report_op_time_s(o));
    PUT_NUM_MEMBER(f, "flops", o->flops);
    PUT_KEY(f, "bytes");
    put_levels(f, c->cfg, &w->k, o->bytes, NULL, 1.0);
    PUT_STR_MEMBER(f, "bound", run_bound_name(c->cfg, o));
    PUT_KEY(f, "stall_s");
    put_levels(f, c->cfg, &w->k, NULL, o->time_ps + CAT_STALL, REPORT_PS);
    PUT_KEY(f, "stall_latency_s");
    put_levels(f, c->cfg, &w->k, NULL, o->lat_ps, REPORT_PS);
    PUT_NUM_MEMBER(f, "busy_s", (double)o->time_ps[CAT_BUSY] * REPORT_PS);
    PUT_NUM_MEMBER(f, "launch_s", (double)o->time_ps[CAT_LAUNCH] * REPORT_PS);
    PUT_NUM_MEMBER(f, "measured_s", (double)o->time_ps[CAT_MEASURED] * REPORT_PS);
    PUT_NUM_MEMBER(f, "kernels", o->kernels);
    PUT_NUM_MEMBER(f, "ctas", (double)o->ctas);
    PUT_NUM_MEMBER(f, "waves", o->waves);
    PUT_KEY(f, "tile");
    sb_json(f, o->tile);
}

/* Body b's energy member, with its leading comma (bodytext_fn) */
static void put_body_energy(struct sb *f, const void *ctx, uint32_t b)
{
    const struct op_writer *w = ctx;
    sb_putn(f, ",", 1);
    PUT_KEY(f, "energy_J");
    put_num(f, report_op_energy_j(w->c->cfg, &w->c->r->body[b]));
}

static void put_op(struct sb *f, struct op_writer *w, uint32_t i)
{
    const struct report_ctx *c = w->c;
    const struct op *op = &c->t->ops[i];
    uint32_t b = c->r->op[i].body;
    sb_putn(f, "{", 1);
    PUT_STR_MEMBER(f, "id", op_id(c->t, op));
    PUT_STR_MEMBER(f, "name", op_name(c->t, op));
    PUT_STR_MEMBER(f, "kind", op_kind_name(op->kind));
    PUT_STR_MEMBER(f, "device", c->t->devices[op->device]);
    PUT_NUM_MEMBER(f, "stream", op->stream);
    PUT_STR_MEMBER(f, "dtype", dtype_name(op->dtype));
    PUT_NUM_MEMBER(f, "start_s", (double)run_op_start(c->r, i) * REPORT_PS);
    bodytext_put(&w->time, f, b, put_body, w);
    if (op->measured_s >= 0) {
        sb_putn(f, ",", 1);
        PUT_KEY(f, "measured_s");
        put_num(f, op->measured_s);
    }
    if (c->r->has_energy)
        bodytext_put(&w->energy, f, b, put_body_energy, w);
    sb_putn(f, "}", 1);
}

/* The report's layout: the head as cJSON formats it, its "ops" array last
 * and printed one op a line:
 *     "ops":\t[
 *     \t\t{"id":"a",...},
 *     \t\t{"id":"b",...}
 *     \t]
 *     }
 * (an empty ops array stays "[]").  head_text is the formatted head with
 * an empty ops array; put(i) prints op i into the buffer. */
typedef void (*put_op_fn)(struct sb *b, const void *ctx, uint32_t i);

static int write_layout(const char *head_text, uint32_t nops, put_op_fn put, const void *ctx,
                        const char *path, struct diag *d)
{
    /* the head ends with its empty ops array: "\t\"ops\":\t[]\n}" */
    size_t n = strlen(head_text);
    SIM_CHECK(n >= 4 && strcmp(head_text + n - 4, "[]\n}") == 0);
    struct afile a;
    int rc = afile_open(&a, path, d);
    if (rc != 0)
        return rc;
    if (nops == 0) {
        fputs(head_text, a.f);
    } else {
        fwrite(head_text, 1, n - 3, a.f);           /* up to and with the '[' */
        struct sb b = {0};
        for (uint32_t i = 0; i < nops; i++) {
            b.n = 0;
            sb_puts(&b, i > 0 ? ",\n\t\t" : "\n\t\t");
            put(&b, ctx, i);
            fwrite(b.s, 1, b.n, a.f);
        }
        free(b.s);
        fputs("\n\t]\n}", a.f);
    }
    fputc('\n', a.f);
    return afile_commit(&a, d);
}

static void put_op_run(struct sb *b, const void *ctx, uint32_t i)
{
    put_op(b, (struct op_writer *)(uintptr_t)ctx, i);
}

/* The report, written as report_json_tree's tree would print, without
 * holding the tree: the head is printed with its ops array empty and the
 * ops are printed into the gap.  A 1M-op run's tree took 4.5 GB and most
 * of the 20 s its report took to write. */
int report_json_write(const struct report_ctx *c, const void *head, const char *path,
                      struct diag *d)
{
    char *text = cJSON_PrintBuffered((const cJSON *)head, 1 << 16, 1);
    if (text == NULL)
        sim_oom(0);
    struct op_writer w;
    memset(&w, 0, sizeof w);
    w.c = c;
    lvkeys_init(&w.k, c->cfg);
    bodytext_init(&w.time, c->r->nbody);
    bodytext_init(&w.energy, c->r->nbody);
    int rc = write_layout(text, c->r->nops, put_op_run, &w, path, d);
    bodytext_free(&w.time);
    bodytext_free(&w.energy);
    free(text);
    return rc;
}

/* ctx: the cursor, a pointer to the next op's item (ops in order) */
static void put_op_tree(struct sb *b, const void *ctx, uint32_t i)
{
    (void)i;
    const cJSON **cur = (const cJSON **)(uintptr_t)ctx;
    char *s = cJSON_PrintUnformatted(*cur);
    if (s == NULL)
        sim_oom(0);
    sb_puts(b, s);
    free(s);
    *cur = (*cur)->next;
}

int report_json_tree_write(void *tree, const char *path, struct diag *d)
{
    cJSON *root = tree;
    cJSON *ops = cJSON_DetachItemFromObjectCaseSensitive(root, "ops");
    SIM_CHECK(ops != NULL);
    cJSON_AddItemToObject(root, "ops", cJSON_CreateArray());
    char *text = cJSON_PrintBuffered(root, 1 << 16, 1);
    if (text == NULL)
        sim_oom(0);
    cJSON_ReplaceItemInObjectCaseSensitive(root, "ops", ops);
    const cJSON *cur = ops->child;
    int rc = write_layout(text, (uint32_t)cJSON_GetArraySize(ops), put_op_tree, &cur, path, d);
    free(text);
    return rc;
}

void report_tree_free(void *tree)
{
    cJSON_Delete(tree);
}

int report_json(const struct report_ctx *c, const char *path, struct diag *d)
{
    void *head = report_json_head(c);
    int rc = report_json_write(c, head, path, d);
    report_tree_free(head);
    return rc;
}

