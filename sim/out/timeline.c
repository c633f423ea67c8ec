/* timeline.c: a recorded run as Chrome Trace Event JSON (timeline.h):
 * process and thread names, op and wave slices, the arrows from copies to
 * the ops they feed, and a counter track per level and pipe.  The events
 * are assembled by hand in a buffer (no cJSON tree: a timeline has
 * millions of events). */
#include "timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afile.h"
#include "bodytext.h"
#include "check.h"
#include "energy.h"
#include "numfmt.h"

/* ------------------------------------------------------------------ writer */

/* The writer assembles events in a small buffer and hands the file whole
 * blocks: a stdio call per field (and printf per number) was most of the
 * time of writing a timeline. */
struct lbuf {
    FILE *f;
    struct sb *mem;             /* instead of f: into memory (a body's text, bodytext.h) */
    size_t n;
    char b[8192];
};

static void lb_out(struct lbuf *l, const char *s, size_t n)
{
    if (l->mem != NULL)
        sb_putn(l->mem, s, n);
    else
        fwrite(s, 1, n, l->f);
}

static void lb_flush(struct lbuf *l)
{
    lb_out(l, l->b, l->n);
    l->n = 0;
}

static void lb_putn(struct lbuf *l, const char *s, size_t n)
{
    if (l->n + n > sizeof l->b) {
        lb_flush(l);
        if (n > sizeof l->b) {
            lb_out(l, s, n);
            return;
        }
    }
    memcpy(l->b + l->n, s, n);
    l->n += n;
}

static void lb_puts(struct lbuf *l, const char *s)
{
    lb_putn(l, s, strlen(s));
}

static void lb_putc(struct lbuf *l, char c)
{
    if (l->n == sizeof l->b)
        lb_flush(l);
    l->b[l->n++] = c;
}

static void lb_u64(struct lbuf *l, uint64_t v)
{
    char tmp[24];
    lb_putn(l, tmp, (size_t)numfmt_u64(tmp, sizeof tmp, v));
}

/* a JSON string */
static void lb_str(struct lbuf *l, const char *s)
{
    lb_putc(l, '"');
    for (;;) {
        size_t run = 0;
        while (s[run] != '\0' && s[run] != '"' && s[run] != '\\' && (unsigned char)s[run] >= 0x20)
            run++;
        lb_putn(l, s, run);
        s += run;
        if (*s == '\0')
            break;
        char esc[8];
        if (*s == '"' || *s == '\\')
            snprintf(esc, sizeof esc, "\\%c", *s);
        else
            snprintf(esc, sizeof esc, "\\u%04x", (unsigned char)*s);
        lb_puts(l, esc);
        s++;
    }
    lb_putc(l, '"');
}

/* Into buf (room for 48 bytes): "<whole>.<frac>", frac padded to digits. */
static size_t fix_into(char *buf, uint64_t whole, uint64_t frac, int digits)
{
    char tmp[48];
    int i = sizeof tmp;
    for (int k = 0; k < digits; k++) {
        tmp[--i] = (char)('0' + frac % 10);
        frac /= 10;
    }
    tmp[--i] = '.';
    do {
        tmp[--i] = (char)('0' + whole % 10);
        whole /= 10;
    } while (whole > 0);
    size_t n = sizeof tmp - (size_t)i;
    memcpy(buf, tmp + i, n);
    return n;
}

static size_t milli_into(char *buf, double v)
{
    if (!(v > 0))
        v = 0;
    if (v > 1e15)
        v = 1e15;
    uint64_t m = (uint64_t)(v * 1000.0 + 0.5);
    return fix_into(buf, m / 1000, m % 1000, 3);
}

/* Microseconds with picosecond digits, printed with integer arithmetic:
 * floating-point printing dominated the writer's time. */
static void lb_us(struct lbuf *l, uint64_t ps)
{
    char buf[48];
    lb_putn(l, buf, fix_into(buf, ps / 1000000u, ps % 1000000u, 6));
}

/* a number as numfmt_g prints it */
static void lb_num(struct lbuf *l, double v)
{
    char buf[40];
    lb_putn(l, buf, (size_t)numfmt_g(buf, sizeof buf, v));
}

/* Thread ids: per stream s, ops on 2s+1, waves on 2s+2.  Counters are
 * process-level tracks. */
static void meta(struct lbuf *l, int *first, uint32_t pid, uint32_t tid, const char *what,
                 const char *name, int sort)
{
    lb_puts(l, *first ? "\n{\"ph\":\"M\",\"pid\":" : ",\n{\"ph\":\"M\",\"pid\":");
    lb_u64(l, pid);
    lb_puts(l, ",\"tid\":");
    lb_u64(l, tid);
    lb_puts(l, ",\"name\":\"");
    lb_puts(l, what);
    lb_puts(l, "\",\"args\":{\"name\":");
    lb_str(l, name);
    lb_puts(l, "}}");
    *first = 0;
    if (sort >= 0) {
        lb_puts(l, ",\n{\"ph\":\"M\",\"pid\":");
        lb_u64(l, pid);
        lb_puts(l, ",\"tid\":");
        lb_u64(l, tid);
        lb_puts(l, strcmp(what, "process_name") == 0 ? ",\"name\":\"process_sort_index\",\"args\":"
                                                     : ",\"name\":\"thread_sort_index\",\"args\":");
        lb_puts(l, "{\"sort_index\":");
        lb_u64(l, (uint64_t)sort);
        lb_puts(l, "}}");
    }
}

/* an X event up to its duration */
static void slice_head(struct lbuf *l, uint32_t pid, uint32_t tid, uint64_t start_ps, uint64_t end_ps)
{
    lb_puts(l, ",\n{\"ph\":\"X\",\"pid\":");
    lb_u64(l, pid);
    lb_puts(l, ",\"tid\":");
    lb_u64(l, tid);
    lb_puts(l, ",\"ts\":");
    lb_us(l, start_ps);
    lb_puts(l, ",\"dur\":");
    lb_us(l, end_ps - start_ps);
}

/* one end of a "feeds" arrow, on the op track of o's stream */
static void flow_event(struct lbuf *l, const char *head, uint64_t id, const struct op *o, uint64_t ps)
{
    lb_puts(l, head);
    lb_u64(l, id);
    lb_puts(l, ",\"pid\":");
    lb_u64(l, o->device + 1u);
    lb_puts(l, ",\"tid\":");
    lb_u64(l, 2u * o->stream + 1u);
    lb_puts(l, ",\"ts\":");
    lb_us(l, ps);
    lb_puts(l, ",\"cat\":\"feeds\",\"name\":\"feeds\"}");
}

/* names: processes and the threads streams use */
static void write_names(struct lbuf *l, int *first, const struct hw_config *cfg,
                        const struct trace *t)
{
    uint32_t maxstream = 0;
    for (uint32_t i = 0; i < t->nops; i++)
        if (t->ops[i].stream > maxstream)
            maxstream = t->ops[i].stream;
    uint8_t *used = sim_xcalloc((size_t)t->ndevices * (maxstream + 1), 1);
    for (uint32_t i = 0; i < t->nops; i++)
        used[(size_t)t->ops[i].device * (maxstream + 1) + t->ops[i].stream] = 1;
    for (uint32_t dv = 0; dv < t->ndevices; dv++) {
        char name[96];
        snprintf(name, sizeof name, "%s (%s)", t->devices[dv], cfg_label(cfg));
        meta(l, first, dv + 1, 0, "process_name", name, (int)dv);
        for (uint32_t s = 0; s <= maxstream; s++) {
            if (!used[(size_t)dv * (maxstream + 1) + s])
                continue;
            snprintf(name, sizeof name, "stream %u: ops", s);
            meta(l, first, dv + 1, 2 * s + 1, "thread_name", name, (int)(2 * s + 1));
            /* a wave is a round of tiles over the units: SMs on a GPU,
             * systolic arrays (MXUs) on a TPU or NPU */
            snprintf(name, sizeof name, "stream %u: %s waves", s, cfg->sa_rows ? "array" : "SM");
            meta(l, first, dv + 1, 2 * s + 2, "thread_name", name, (int)(2 * s + 2));
        }
    }
    free(used);
}

struct body_ctx {
    const struct hw_config *cfg;
    const struct run_result *r;
};

/* An op slice's args from "bound" to its end, from its body alone
 * (bodytext_fn) */
static void op_body_args(struct sb *out, const void *ctx, uint32_t b)
{
    const struct body_ctx *bc = ctx;
    const struct hw_config *cfg = bc->cfg;
    const struct op_result *x = &bc->r->body[b];
    struct lbuf lb;                 /* its 8 KB not zeroed: n says what is used */
    lb.f = NULL;
    lb.mem = out;
    lb.n = 0;
    struct lbuf *l = &lb;
    lb_puts(l, "\",\"bound\":\"");
    lb_puts(l, run_bound_name(cfg, x));
    lb_puts(l, "\",\"flops\":");
    lb_num(l, x->flops);
    lb_puts(l, ",\"dram_bytes\":");
    lb_num(l, x->bytes[cfg->lv_dram]);
    lb_puts(l, ",\"kernels\":");
    lb_u64(l, x->kernels);
    lb_puts(l, ",\"tile\":");
    lb_str(l, x->tile);
    /* where its time went, us: busy, launch, and each level's wait split
     * into its bandwidth and its latency (op_result.lat_ps); zeros left out */
    static const char *const what[] = {"busy_us", "launch_us", "measured_us"};
    for (unsigned k = 0; k < CAT_STALL; k++)
        if (x->time_ps[k] > 0) {
            lb_puts(l, ",\"");
            lb_puts(l, what[k]);
            lb_puts(l, "\":");
            lb_us(l, x->time_ps[k]);
        }
    for (unsigned v = 0; v < cfg->nlevels; v++) {
        uint64_t w = x->time_ps[CAT_STALL + v], lat = x->lat_ps[v] < w ? x->lat_ps[v] : w;
        if (w - lat > 0) {
            lb_puts(l, ",\"wait_");
            lb_puts(l, cfg->level[v].name);
            lb_puts(l, "_bandwidth_us\":");
            lb_us(l, w - lat);
        }
        if (lat > 0) {
            lb_puts(l, ",\"wait_");
            lb_puts(l, cfg->level[v].name);
            lb_puts(l, "_latency_us\":");
            lb_us(l, lat);
        }
    }
    lb_puts(l, "}}");
    lb_flush(l);
}

/* op slices */
static void write_ops(struct lbuf *l, const struct hw_config *cfg, const struct trace *t,
                      const struct run_result *r)
{
    struct body_ctx bc = {cfg, r};
    struct bodytext bt;
    bodytext_init(&bt, r->nbody);
    for (uint32_t i = 0; i < t->nops; i++) {
        const struct op *o = &t->ops[i];
        slice_head(l, o->device + 1u, 2u * o->stream + 1u, run_op_start(r, i), run_op_end(r, i));
        lb_puts(l, ",\"cat\":\"op\",\"name\":");
        lb_str(l, op_name(t, o));
        lb_puts(l, ",\"args\":{\"kind\":\"");
        lb_puts(l, op_kind_name(o->kind));
        size_t n;
        const char *s = bodytext_get(&bt, r->op[i].body, op_body_args, &bc, &n);
        lb_putn(l, s, n);
    }
    bodytext_free(&bt);
}

/* wave slices (nest inside their op's time on their own track) */
static void write_waves(struct lbuf *l, const struct timeline *tl, const struct trace *t)
{
    for (uint32_t i = 0; i < tl->nslices; i++) {
        const struct tl_slice *s = &tl->slices[i];
        const struct op *o = &t->ops[s->op];
        slice_head(l, s->dev + 1u, 2u * o->stream + 2u, s->start_ps, s->end_ps);
        lb_puts(l, s->wave1 - s->wave0 == 1 ? ",\"cat\":\"waves\",\"name\":\"wave "
                                            : ",\"cat\":\"waves\",\"name\":\"waves ");
        lb_u64(l, s->wave0);
        if (s->wave1 - s->wave0 != 1) {
            lb_putc(l, '-');
            lb_u64(l, s->wave1 - 1);
        }
        lb_puts(l, "\",\"args\":{\"op\":");
        lb_str(l, op_name(t, o));
        lb_puts(l, ",\"kernel\":");
        lb_u64(l, s->kern);
        lb_puts(l, ",\"sms\":");
        lb_u64(l, s->units);
        lb_puts(l, "}}");
    }
}

/* arrows from each copy to the ops it fed */
static void write_flows(struct lbuf *l, const struct trace *t, const struct run_result *r)
{
    uint64_t flow = 0;
    for (uint32_t i = 0; i < t->nops; i++) {
        const struct op *o = &t->ops[i];
        for (uint32_t k = 0; k < o->ndeps; k++) {
            uint32_t src = t->deps[o->deps_off + k];
            if (t->ops[src].kind != OP_MEMCPY)
                continue;
            const struct op *so = &t->ops[src];
            flow++;
            uint64_t ts = run_op_end(r, src) - 1 > run_op_start(r, src) ? run_op_end(r, src) - 1
                                                                          : run_op_start(r, src);
            flow_event(l, ",\n{\"ph\":\"s\",\"id\":", flow, so, ts);
            flow_event(l, ",\n{\"ph\":\"f\",\"bp\":\"e\",\"id\":", flow, o, run_op_start(r, i));
        }
    }
}

/* One counter track: a series of device dv (a level's bytes/s, or a
 * pipe's FLOP/s), an event per change of the shown value. */
static void write_counter(struct lbuf *l, const struct timeline *tl, const struct hw_config *cfg,
                          uint32_t dv, unsigned w)
{
    static const char *const pipe_names[2] = {"matrix pipe", "vector pipe"};
    const struct tl_series *s = &tl->series[(size_t)dv * TL_SERIES_PER_DEV + w];
    const char *nm = w < HW_MAX_LEVELS ? cfg->level[w].name : pipe_names[w - HW_MAX_LEVELS];
    const char *unit = w < HW_MAX_LEVELS ? "GB/s" : "TFLOP/s";
    double scale = w < HW_MAX_LEVELS ? 1e-9 : 1e-12;
    /* one counter event per change carries both the rate and the
     * share of peak; Perfetto shows each arg as its own track */
    char head[48], args[160];
    snprintf(head, sizeof head, ",\n{\"ph\":\"C\",\"pid\":%u,\"ts\":", dv + 1);
    snprintf(args, sizeof args, ",\"name\":\"%s\",\"args\":{\"%s\":", nm, unit);
    size_t head_n = strlen(head), args_n = strlen(args);
    double last = -1;
    for (uint32_t b = 0; b <= s->n; b++) {
        double rate = b < s->n ? s->amount[b] / ((double)tl->bucket_ps * 1e-12) : 0;
        double shown = floor(rate * scale * 1000.0 + 0.5);
        if (shown == last)
            continue;
        last = shown;
        char num[48];
        lb_putn(l, head, head_n);
        lb_us(l, b * tl->bucket_ps);
        lb_putn(l, args, args_n);
        lb_putn(l, num, milli_into(num, rate * scale));
        if (s->capacity_per_s > 0) {
            static const char pk[] = ",\"% of peak\":";
            lb_putn(l, pk, sizeof pk - 1);
            lb_putn(l, num, milli_into(num, 100.0 * rate / s->capacity_per_s));
        }
        lb_putn(l, "}}", 2);
    }
}

/* The power counter of each simulated device (a run with energy,
 * docs/energy.md): per bucket, the board's idle power plus each op's
 * energy spread evenly over its span, so the track integrates to the
 * device's energy.  ops_by_dev: the ops grouped by device (off[dv] ..
 * off[dv + 1]). */
static void write_power(struct lbuf *l, const struct timeline *tl, const struct hw_config *cfg,
                        const struct run_result *r, const uint32_t *by_dev,
                        const uint32_t *off, uint32_t dv)
{
    uint64_t bk = tl->bucket_ps;
    size_t nb = (size_t)(r->total_ps / bk) + 1;
    double *e = sim_xcalloc(nb, sizeof *e);
    for (uint32_t k = off[dv]; k < off[dv + 1]; k++) {
        const struct op_result *o = run_op_body(r, by_dev[k]);
        double core, ej = energy_op(cfg, o, NULL, &core);
        uint64_t s = run_op_start(r, by_dev[k]), en = run_op_end(r, by_dev[k]);
        if (en <= s) {
            e[s / bk < nb ? s / bk : nb - 1] += ej;
            continue;
        }
        for (uint64_t b = s / bk; b <= (en - 1) / bk && b < nb; b++) {
            uint64_t lo = b * bk > s ? b * bk : s, hi = (b + 1) * bk < en ? (b + 1) * bk : en;
            e[b] += ej * (double)(hi - lo) / (double)(en - s);
        }
    }
    char head[48];
    snprintf(head, sizeof head, ",\n{\"ph\":\"C\",\"pid\":%u,\"ts\":", dv + 1);
    static const char args[] = ",\"name\":\"power\",\"args\":{\"W\":";
    size_t head_n = strlen(head);
    double last = -1;
    for (size_t b = 0; b <= nb; b++) {
        /* the last bucket ends with the run; after it, the board idles */
        uint64_t w = b + 1 < nb ? bk : b + 1 == nb ? r->total_ps - b * bk : bk;
        double watts = b < nb && w > 0 ? cfg->idle_w + e[b] / ((double)w * 1e-12) : cfg->idle_w;
        double shown = floor(watts * 1000.0 + 0.5);
        if (shown == last)
            continue;
        last = shown;
        char num[48];
        lb_putn(l, head, head_n);
        lb_us(l, b * bk);
        lb_putn(l, args, sizeof args - 1);
        lb_putn(l, num, milli_into(num, watts));
        lb_putn(l, "}}", 2);
    }
    free(e);
}

int tl_write(const struct timeline *tl, const struct hw_config *cfg, const struct trace *t,
             const struct run_result *r, const char *path, struct diag *d)
{
    struct afile a;
    if (afile_open(&a, path, d) != 0)
        return -1;
    struct lbuf *l = sim_xcalloc(1, sizeof *l);
    l->f = a.f;
    int first = 1;
    lb_puts(l, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"strata_timeline\":1,\"hardware\":");
    lb_str(l, cfg_label(cfg));
    lb_puts(l, ",\"trace\":");
    lb_str(l, t->path);
    lb_puts(l, "},\"traceEvents\":[");
    write_names(l, &first, cfg, t);
    write_ops(l, cfg, t, r);
    write_waves(l, tl, t);
    write_flows(l, t, r);
    /* counters: bytes/s (FLOP/s for pipes) and % of peak per bucket */
    for (uint32_t dv = 0; dv < tl->ndev; dv++)
        for (unsigned w = 0; w < TL_SERIES_PER_DEV; w++) {
            const struct tl_series *s = &tl->series[(size_t)dv * TL_SERIES_PER_DEV + w];
            if (s->n == 0 || (w < HW_MAX_LEVELS && w >= cfg->nlevels))
                continue;
            write_counter(l, tl, cfg, dv, w);
        }
    if (r->has_energy && tl->bucket_ps > 0 && t->ndevices == tl->ndev) {
        /* the ops grouped by device (a counting sort), then a power track each */
        uint32_t *off = sim_xcalloc((size_t)tl->ndev + 1, sizeof *off);
        uint32_t *by_dev = sim_xcalloc(r->nops ? r->nops : 1, sizeof *by_dev);
        for (uint32_t i = 0; i < r->nops; i++)
            off[t->ops[i].device + 1]++;
        for (uint32_t dv = 0; dv < tl->ndev; dv++)
            off[dv + 1] += off[dv];
        uint32_t *at = sim_xcalloc((size_t)tl->ndev + 1, sizeof *at);
        memcpy(at, off, ((size_t)tl->ndev + 1) * sizeof *at);
        for (uint32_t i = 0; i < r->nops; i++)
            by_dev[at[t->ops[i].device]++] = i;
        for (uint32_t dv = 0; dv < tl->ndev; dv++)
            if (t->mirror == NULL || !t->mirror[dv])
                write_power(l, tl, cfg, r, by_dev, off, dv);
        free(at);
        free(by_dev);
        free(off);
    }
    lb_puts(l, "\n]}\n");
    lb_flush(l);
    free(l);
    return afile_commit(&a, d);
}
