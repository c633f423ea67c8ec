/* timeline.c: see timeline.h. */
#include "timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afile.h"
#include "check.h"
#include "numfmt.h"

#define TL_FIRST_BUCKET_PS 1000000ull /* 1 us */

void tl_init(struct timeline *tl, uint32_t ndev, uint64_t gran_ps)
{
    memset(tl, 0, sizeof *tl);
    tl->gran_ps = gran_ps;
    tl->bucket_ps = TL_FIRST_BUCKET_PS;
    tl->ndev = ndev;
    tl->series = sim_xcalloc((size_t)ndev * TL_SERIES_PER_DEV, sizeof *tl->series);
    tl->cap = 1024;
    tl->slices = sim_xcalloc(tl->cap, sizeof *tl->slices);
}

void tl_free(struct timeline *tl)
{
    if (tl->series != NULL)
        for (uint32_t i = 0; i < tl->ndev * TL_SERIES_PER_DEV; i++)
            free(tl->series[i].amount);
    free(tl->series);
    free(tl->slices);
    memset(tl, 0, sizeof *tl);
}

struct tl_series *tl_series(struct timeline *tl, uint32_t dev, unsigned which)
{
    SIM_CHECK(dev < tl->ndev && which < TL_SERIES_PER_DEV);
    return &tl->series[(size_t)dev * TL_SERIES_PER_DEV + which];
}

/* Double the bucket width of every series (merging pairs of buckets). */
static void tl_coarsen(struct timeline *tl)
{
    for (uint32_t i = 0; i < tl->ndev * TL_SERIES_PER_DEV; i++) {
        struct tl_series *s = &tl->series[i];
        if (s->amount == NULL)
            continue;
        uint32_t m = (s->n + 1) / 2;
        for (uint32_t k = 0; k < m; k++)
            s->amount[k] = s->amount[2 * k] + (2 * k + 1 < s->n ? s->amount[2 * k + 1] : 0);
        memset(s->amount + m, 0, (s->cap - m) * sizeof *s->amount);
        s->n = m;
    }
    tl->bucket_ps *= 2;
}

static void tl_grow(struct tl_series *s, uint32_t need)
{
    if (need <= s->cap)
        return;
    uint32_t cap = s->cap ? s->cap : 256;
    while (cap < need)
        cap *= 2;
    double *a = realloc(s->amount, cap * sizeof *a);
    if (a == NULL)
        sim_oom(cap * sizeof *a);
    memset(a + s->cap, 0, (cap - s->cap) * sizeof *a);
    s->amount = a;
    s->cap = cap;
}

void tl_add(struct timeline *tl, struct tl_series *s, uint64_t t0, uint64_t t1, double amount)
{
    if (t1 <= t0 || amount <= 0)
        return;
    while (t1 / tl->bucket_ps >= TL_MAX_BUCKETS)
        tl_coarsen(tl);
    uint64_t b0 = t0 / tl->bucket_ps, b1 = (t1 - 1) / tl->bucket_ps;
    tl_grow(s, (uint32_t)b1 + 1);
    if (s->n < b1 + 1)
        s->n = (uint32_t)b1 + 1;
    double rate = amount / (double)(t1 - t0);
    for (uint64_t b = b0; b <= b1; b++) {
        uint64_t lo = b * tl->bucket_ps, hi = lo + tl->bucket_ps;
        if (lo < t0)
            lo = t0;
        if (hi > t1)
            hi = t1;
        s->amount[b] += rate * (double)(hi - lo);
    }
}

void tl_waves(struct timeline *tl, uint32_t dev, uint32_t op, uint32_t kern, uint64_t wave0,
              uint64_t wave1, uint32_t units, uint64_t start_ps, uint64_t end_ps)
{
    if (tl->nslices > 0) {
        struct tl_slice *p = &tl->slices[tl->nslices - 1];
        /* merge short consecutive wave groups of the same kernel */
        if (p->dev == dev && p->op == op && p->kern == kern && p->wave1 == wave0 &&
            p->end_ps == start_ps && p->end_ps - p->start_ps < tl->gran_ps) {
            p->end_ps = end_ps;
            p->wave1 = wave1;
            if (units > p->units)
                p->units = units;
            return;
        }
    }
    if (tl->nslices == tl->cap) {
        tl->cap *= 2;
        struct tl_slice *s = realloc(tl->slices, tl->cap * sizeof *s);
        if (s == NULL)
            sim_oom(tl->cap * sizeof *s);
        tl->slices = s;
    }
    struct tl_slice *s = &tl->slices[tl->nslices++];
    s->dev = dev;
    s->op = op;
    s->kern = kern;
    s->wave0 = wave0;
    s->wave1 = wave1;
    s->units = units;
    s->start_ps = start_ps;
    s->end_ps = end_ps;
}

/* ------------------------------------------------------------------ writer */

static void put_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (;;) {
        size_t run = 0;
        while (s[run] != '\0' && s[run] != '"' && s[run] != '\\' && (unsigned char)s[run] >= 0x20)
            run++;
        fwrite(s, 1, run, f);
        s += run;
        if (*s == '\0')
            break;
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else
            fprintf(f, "\\u%04x", (unsigned char)*s);
        s++;
    }
    fputc('"', f);
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

/* "<whole>.<frac>" with frac zero-padded to `digits`, no printf. */
static void put_fixed(FILE *f, uint64_t whole, uint64_t frac, int digits)
{
    char buf[48];
    fwrite(buf, 1, fix_into(buf, whole, frac, digits), f);
}

/* Microseconds with picosecond digits, printed with integer arithmetic:
 * floating-point printing dominated the writer's time. */
static void put_us(FILE *f, uint64_t ps)
{
    put_fixed(f, ps / 1000000u, ps % 1000000u, 6);
}


/* Thread ids: per stream s, ops on 2s+1, waves on 2s+2.  Counters are
 * process-level tracks. */
static void meta(FILE *f, int *first, uint32_t pid, uint32_t tid, const char *what,
                 const char *name, int sort)
{
    fprintf(f, "%s\n{\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"%s\",\"args\":{\"name\":",
            *first ? "" : ",", pid, tid, what);
    put_str(f, name);
    fprintf(f, "}}");
    *first = 0;
    if (sort >= 0)
        fprintf(f, ",\n{\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"%s_sort_index\",\"args\":"
                   "{\"sort_index\":%d}}",
                pid, tid, strcmp(what, "process_name") == 0 ? "process" : "thread", sort);
}

int tl_write(const struct timeline *tl, const struct hw_config *cfg, const struct trace *t,
             const struct run_result *r, const char *path, struct diag *d)
{
    struct afile a;
    if (afile_open(&a, path, d) != 0)
        return -1;
    FILE *f = a.f;
    int first = 1;
    fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"strata_timeline\":1,\"hardware\":");
    put_str(f, cfg->name);
    fprintf(f, ",\"trace\":");
    put_str(f, t->path);
    fprintf(f, "},\"traceEvents\":[");
    /* names: processes and the threads streams use */
    uint32_t maxstream = 0;
    for (uint32_t i = 0; i < t->nops; i++)
        if (t->ops[i].stream > maxstream)
            maxstream = t->ops[i].stream;
    uint8_t *used = sim_xcalloc((size_t)t->ndevices * (maxstream + 1), 1);
    for (uint32_t i = 0; i < t->nops; i++)
        used[(size_t)t->ops[i].device * (maxstream + 1) + t->ops[i].stream] = 1;
    for (uint32_t dv = 0; dv < t->ndevices; dv++) {
        char name[96];
        snprintf(name, sizeof name, "%s (%s)", t->devices[dv], cfg->name);
        meta(f, &first, dv + 1, 0, "process_name", name, (int)dv);
        for (uint32_t s = 0; s <= maxstream; s++) {
            if (!used[(size_t)dv * (maxstream + 1) + s])
                continue;
            snprintf(name, sizeof name, "stream %u: ops", s);
            meta(f, &first, dv + 1, 2 * s + 1, "thread_name", name, (int)(2 * s + 1));
            /* a wave is a round of tiles over the units: SMs on a GPU,
             * systolic arrays (MXUs) on a TPU or NPU */
            snprintf(name, sizeof name, "stream %u: %s waves", s, cfg->sa_rows ? "array" : "SM");
            meta(f, &first, dv + 1, 2 * s + 2, "thread_name", name, (int)(2 * s + 2));
        }
    }
    free(used);
    /* op slices */
    for (uint32_t i = 0; i < t->nops; i++) {
        const struct op *o = &t->ops[i];
        const struct op_result *x = &r->ops[i];
        fprintf(f, ",\n{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":", o->device + 1, 2 * o->stream + 1);
        put_us(f, x->start_ps);
        fputs(",\"dur\":", f);
        put_us(f, x->end_ps - x->start_ps);
        fputs(",\"cat\":\"op\",\"name\":", f);
        put_str(f, o->name);
        char fl[40], db[40];
        numfmt_g(fl, sizeof fl, x->flops);
        numfmt_g(db, sizeof db, x->bytes[LVL_DRAM]);
        fprintf(f, ",\"args\":{\"kind\":\"%s\",\"bound\":\"%s\",\"flops\":%s,\"dram_bytes\":%s,"
                   "\"kernels\":%u,\"tile\":",
                op_kind_name(o->kind), run_bound_name(x), fl, db, x->kernels);
        put_str(f, x->tile);
        fprintf(f, "}}");
    }
    /* wave slices (nest inside their op's time on their own track); the
     * numbers are integers, printed without printf */
    for (uint32_t i = 0; i < tl->nslices; i++) {
        const struct tl_slice *s = &tl->slices[i];
        const struct op *o = &t->ops[s->op];
        char n[8][24];
        numfmt_g(n[0], sizeof n[0], s->dev + 1);
        numfmt_g(n[1], sizeof n[1], 2.0 * o->stream + 2);
        numfmt_g(n[2], sizeof n[2], (double)s->wave0);
        numfmt_g(n[3], sizeof n[3], (double)(s->wave1 - 1));
        numfmt_g(n[4], sizeof n[4], s->kern);
        numfmt_g(n[5], sizeof n[5], s->units);
        const char *a1[] = {",\n{\"ph\":\"X\",\"pid\":", n[0], ",\"tid\":", n[1], ",\"ts\":"};
        for (size_t k = 0; k < 5; k++)
            fputs(a1[k], f);
        put_us(f, s->start_ps);
        fputs(",\"dur\":", f);
        put_us(f, s->end_ps - s->start_ps);
        fputs(s->wave1 - s->wave0 == 1 ? ",\"cat\":\"waves\",\"name\":\"wave "
                                       : ",\"cat\":\"waves\",\"name\":\"waves ",
              f);
        fputs(n[2], f);
        if (s->wave1 - s->wave0 != 1) {
            fputc('-', f);
            fputs(n[3], f);
        }
        fputs("\",\"args\":{\"op\":", f);
        put_str(f, o->name);
        const char *a2[] = {",\"kernel\":", n[4], ",\"sms\":", n[5], "}}"};
        for (size_t k = 0; k < 5; k++)
            fputs(a2[k], f);
    }
    /* arrows from each copy to the ops it fed */
    uint64_t flow = 0;
    for (uint32_t i = 0; i < t->nops; i++) {
        const struct op *o = &t->ops[i];
        for (uint32_t k = 0; k < o->ndeps; k++) {
            uint32_t src = t->deps[o->deps_off + k];
            if (t->ops[src].kind != OP_MEMCPY)
                continue;
            const struct op *so = &t->ops[src];
            flow++;
            uint64_t ts = r->ops[src].end_ps - 1 > r->ops[src].start_ps ? r->ops[src].end_ps - 1
                                                                          : r->ops[src].start_ps;
            fprintf(f, ",\n{\"ph\":\"s\",\"id\":%llu,\"pid\":%u,\"tid\":%u,\"ts\":",
                    (unsigned long long)flow, so->device + 1, 2 * so->stream + 1);
            put_us(f, ts);
            fputs(",\"cat\":\"feeds\",\"name\":\"feeds\"}", f);
            fprintf(f, ",\n{\"ph\":\"f\",\"bp\":\"e\",\"id\":%llu,\"pid\":%u,\"tid\":%u,\"ts\":",
                    (unsigned long long)flow, o->device + 1, 2 * o->stream + 1);
            put_us(f, r->ops[i].start_ps);
            fputs(",\"cat\":\"feeds\",\"name\":\"feeds\"}", f);
        }
    }
    /* counters: bytes/s (FLOP/s for pipes) and % of peak per bucket */
    static const char *const pipe_names[2] = {"matrix pipe", "vector pipe"};
    for (uint32_t dv = 0; dv < tl->ndev; dv++) {
        for (unsigned w = 0; w < TL_SERIES_PER_DEV; w++) {
            const struct tl_series *s = &tl->series[(size_t)dv * TL_SERIES_PER_DEV + w];
            if (s->n == 0)
                continue;
            const char *nm = w < LVL_COUNT ? level_name((enum level)w) : pipe_names[w - LVL_COUNT];
            const char *unit = w < LVL_COUNT ? "GB/s" : "TFLOP/s";
            double scale = w < LVL_COUNT ? 1e-9 : 1e-12;
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
                /* the event is assembled in memory and written at once */
                char line[320];
                size_t k = 0;
                memcpy(line + k, head, head_n);
                k += head_n;
                k += fix_into(line + k, b * tl->bucket_ps / 1000000u, b * tl->bucket_ps % 1000000u, 6);
                memcpy(line + k, args, args_n);
                k += args_n;
                k += milli_into(line + k, rate * scale);
                if (s->capacity_per_s > 0) {
                    static const char pk[] = ",\"% of peak\":";
                    memcpy(line + k, pk, sizeof pk - 1);
                    k += sizeof pk - 1;
                    k += milli_into(line + k, 100.0 * rate / s->capacity_per_s);
                }
                memcpy(line + k, "}}", 2);
                k += 2;
                fwrite(line, 1, k, f);
            }
        }
    }
    fprintf(f, "\n]}\n");
    return afile_commit(&a, d);
}
