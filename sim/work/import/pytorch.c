/* pytorch.c: the PyTorch importers: the profiler's Kineto JSON trace
 * (import_kineto, read as a stream) and the execution trace
 * (import_pytorch_et), and import_pytorch, which tells them apart by their
 * contents.  What they make of a trace: import.h. */
#include "import.h"

#include <gsl/gsl_sort.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gz.h"
#include "imp.h"
#include "jsondoc.h"
#include "opmap.h"

/* ------------------------------------------------------------ helpers */

static int get_num(const cJSON *o, const char *k, double *v)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
        return -1;
    *v = it->valuedouble;
    return 0;
}

/* An event's duration in microseconds: a negative one or one longer than
 * an op may take (TRACE_MAX_OP_S) is no kernel's; such events are skipped
 * and counted (a dur of 1e308 became measured_s 1e302, which the trace
 * loader refuses; a negative one silently became 0). */
static int dur_ok(struct import_stats *st, double dur_us)
{
    if (dur_us >= 0 && dur_us <= TRACE_MAX_OP_S * 1e6)
        return 1;
    st->dur_skipped++;
    st->malformed++;
    return 0;
}

static int get_i64(const cJSON *o, const char *k, int64_t *v)
{
    double d;
    if (get_num(o, k, &d) != 0 || !(d > -9.2e18 && d < 9.2e18))
        return -1;
    *v = (int64_t)d;
    return 0;
}

/* An optional integer: def when k is absent, -1 when it is not a number. */
static int opt_i64(const cJSON *o, const char *k, int64_t def, int64_t *v)
{
    *v = def;
    return cJSON_GetObjectItemCaseSensitive(o, k) == NULL ? 0 : get_i64(o, k, v);
}


/* ------------------------------------------------------------ Kineto */

/* Events are reduced to small records as they are read, so a trace is never
 * held in memory as a whole: the streaming reader (kstream_*) hands one
 * event object at a time to kineto_event(). */

struct strtab {                 /* interned strings */
    char *buf;
    size_t len, cap;
    uint32_t *slot;             /* offset + 1 into buf, 0 = empty */
    size_t mask, used;
};

static void st_init(struct strtab *t)
{
    memset(t, 0, sizeof *t);
    t->cap = 1 << 16;
    t->buf = sim_xcalloc(t->cap, 1);
    t->len = 1; /* offset 0 is "" */
    t->mask = (1u << 12) - 1;
    t->slot = sim_xcalloc(t->mask + 1, sizeof *t->slot);
}

static void st_free(struct strtab *t)
{
    free(t->buf);
    free(t->slot);
}

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void st_grow_slots(struct strtab *t)
{
    size_t nmask = t->mask * 2 + 1;
    uint32_t *ns = sim_xcalloc(nmask + 1, sizeof *ns);
    for (size_t i = 0; i <= t->mask; i++) {
        if (!t->slot[i])
            continue;
        size_t j = (size_t)str_hash(t->buf + t->slot[i] - 1) & nmask;
        while (ns[j])
            j = (j + 1) & nmask;
        ns[j] = t->slot[i];
    }
    free(t->slot);
    t->slot = ns;
    t->mask = nmask;
}

/* Offset of s in the table (adding it once). */
static uint32_t st_intern(struct strtab *t, const char *s)
{
    if (s[0] == '\0')
        return 0;
    if (2 * (t->used + 1) > t->mask)
        st_grow_slots(t);
    size_t j = (size_t)str_hash(s) & t->mask;
    while (t->slot[j]) {
        if (strcmp(t->buf + t->slot[j] - 1, s) == 0)
            return t->slot[j] - 1;
        j = (j + 1) & t->mask;
    }
    size_t n = strlen(s) + 1;
    while (t->len + n > t->cap) {
        t->cap *= 2;
        char *nb = realloc(t->buf, t->cap);
        if (nb == NULL)
            sim_oom(t->cap);
        t->buf = nb;
    }
    uint32_t off = (uint32_t)t->len;
    memcpy(t->buf + off, s, n);
    t->len += n;
    t->slot[j] = off + 1;
    t->used++;
    return off;
}

static const char *st_str(const struct strtab *t, uint32_t off)
{
    return t->buf + off;
}

struct kinput {                 /* one input of a CPU op */
    int8_t ndims;               /* -1: not a tensor */
    uint32_t dim_off;           /* its ndims sizes in kstate.dims */
    uint32_t type;              /* interned */
    uint32_t conc;              /* interned "Concrete Inputs" value ("" if none) */
};

struct kcpu {                   /* a CPU op */
    uint32_t name;              /* interned */
    uint32_t in_off, nin;       /* inputs */
    int64_t pid, tid, ext;
    double ts, end;
    /* kernels it owns */
    double kern_s;
    int64_t dev, stream;
    uint32_t nkern;
    double launch;              /* host time of its first kernel launch (cpu ts if unknown) */
    uint32_t kname;             /* interned name of its longest kernel */
    double kmax;                /* that kernel's duration, us */
    int tensor_core;
    int main_kernel;            /* it owns a kernel that is not a library helper */
    uint32_t orig;              /* read order, before sorting */
};

struct krt {                    /* a runtime launch call */
    int64_t pid, tid, corr;
    double ts;
    int32_t owner;              /* CPU op index, -1 none */
};

struct kdev {                   /* a GPU event */
    uint32_t name;              /* interned */
    double ts, dur, bytes;
    int64_t dev, stream, ext, corr;
    int copy;                   /* 1 memcpy, 2 memset */
};

enum ksync_kind {
    KS_WAIT_EVENT = 1,          /* cudaStreamWaitEvent: a stream waits for another's event */
    KS_STREAM,                  /* cudaStreamSynchronize: the host waits for one stream */
    KS_EVENT,                   /* cudaEventSynchronize: the host waits for one event */
    KS_CONTEXT                  /* cudaDeviceSynchronize: the host waits for every stream */
};

struct ksync {                  /* a "cuda_sync" event (PyTorch 2.1 and later) */
    enum ksync_kind kind;
    double ts;                  /* the call, host clock */
    int64_t dev, stream;        /* the waiting stream (KS_WAIT_EVENT), the waited one (KS_STREAM) */
    int64_t wait_stream;        /* the stream whose event is waited for */
    int64_t rec_corr;           /* correlation id of the cudaEventRecord of that event */
};

struct kstate {
    struct strtab names;
    struct kcpu *cpu;
    struct krt *rt;
    struct kdev *dv;
    struct kinput *in;
    struct ksync *sy;
    int64_t *dims;              /* the inputs' sizes, ndims each */
    uint32_t ncpu, nrt, ndv, nin, nsy, ndims;
    uint32_t cap_cpu, cap_rt, cap_dv, cap_in, cap_sy, cap_dims;
    struct import_stats *st;
};

static void ks_init(struct kstate *S, struct import_stats *st)
{
    memset(S, 0, sizeof *S);
    st_init(&S->names);
    S->st = st;
}

static void ks_free(struct kstate *S)
{
    st_free(&S->names);
    free(S->cpu);
    free(S->rt);
    free(S->dv);
    free(S->in);
    free(S->sy);
    free(S->dims);
}

static int cpu_cmp(const void *a, const void *b)
{
    const struct kcpu *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1; /* parents before children */
    return x->orig < y->orig ? -1 : (x->orig > y->orig);
}

static int rt_cmp(const void *a, const void *b)
{
    const struct krt *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->corr < y->corr ? -1 : (x->corr > y->corr);
}

/* Innermost CPU op containing each runtime call, per thread, one sweep. */
static void owners_by_time(struct kcpu *cpu, uint32_t ncpu, struct krt *rt, uint32_t nrt)
{
    if (ncpu > 1)
        qsort(cpu, ncpu, sizeof *cpu, cpu_cmp);
    if (nrt > 1)
        qsort(rt, nrt, sizeof *rt, rt_cmp);
    uint32_t *stack = sim_xcalloc(ncpu + 1, sizeof *stack);
    uint32_t c = 0, top = 0;
    for (uint32_t r = 0; r < nrt; r++) {
        struct krt *x = &rt[r];
        if (r == 0 || rt[r - 1].pid != x->pid || rt[r - 1].tid != x->tid)
            top = 0; /* a new thread */
        while (c < ncpu && (cpu[c].pid < x->pid || (cpu[c].pid == x->pid && cpu[c].tid < x->tid)))
            c++;
        while (c < ncpu && cpu[c].pid == x->pid && cpu[c].tid == x->tid && cpu[c].ts <= x->ts) {
            while (top > 0 && cpu[stack[top - 1]].end <= cpu[c].ts)
                top--;
            stack[top++] = c++;
        }
        while (top > 0 && cpu[stack[top - 1]].end < x->ts)
            top--;
        x->owner = -1;
        for (uint32_t k = top; k > 0; k--)
            if (cpu[stack[k - 1]].ts <= x->ts && x->ts <= cpu[stack[k - 1]].end) {
                x->owner = (int32_t)stack[k - 1];
                break;
            }
    }
    free(stack);
}

struct kentry {                 /* one op of the output, before sorting */
    double ts;
    uint32_t seq;
    int cpu;                    /* >= 0: owner CPU op; else */
    uint32_t dev_event;         /* the GPU event (orphan kernel or copy) */
};

static void add_entry(struct kentry *ent, uint32_t *n, double ts, int cpu, uint32_t dev_event)
{
    ent[*n].ts = ts;
    ent[*n].seq = *n;
    ent[*n].cpu = cpu;
    ent[*n].dev_event = dev_event;
    (*n)++;
}

static int entry_cmp(const void *a, const void *b)
{
    const struct kentry *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

static int is_cat(const cJSON *e, const char *a, const char *b)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "cat");
    return cJSON_IsString(c) && (strcmp(c->valuestring, a) == 0 || (b && strcmp(c->valuestring, b) == 0));
}

static int tensor_core_kernel(const char *name)
{
    return strstr(name, "tensorop") || strstr(name, "tf32") || strstr(name, "1688gemm") ||
           strstr(name, "xmma") || strstr(name, "hmma") || strstr(name, "sm90_");
}

/* cuBLAS's helper kernels around a GEMM: never the GEMM itself. */
static int aux_kernel(const char *name)
{
    return strstr(name, "splitKreduce_kernel") != NULL ||
           strstr(name, "epilogue::impl::globalKernel") != NULL;
}

/* Read one event into the records. */
static void kineto_event(struct kstate *S, const cJSON *e)
{
    struct import_stats *st = S->st;
    if (!cJSON_IsObject(e)) {
        st->malformed++;
        return;
    }
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
    if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "X") != 0)
        return;
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
    double ts, dur;
    if (is_cat(e, "cpu_op", "operator")) {
        IMP_GROW(S->cpu, S->ncpu, S->cap_cpu);
        struct kcpu *c = &S->cpu[S->ncpu];
        memset(c, 0, sizeof *c);
        if (get_num(e, "ts", &ts) || get_num(e, "dur", &dur) || get_i64(e, "pid", &c->pid) ||
            get_i64(e, "tid", &c->tid) || !cJSON_IsString(name)) {
            st->malformed++;
            return;
        }
        if (!dur_ok(st, dur))
            return;
        c->name = st_intern(&S->names, name->valuestring);
        c->ts = ts;
        c->end = ts + dur;
        c->ext = INT64_MIN;
        c->orig = S->ncpu;
        if (cJSON_IsObject(args)) {
            get_i64(args, "External id", &c->ext);
            struct opmap_in in;
            memset(&in, 0, sizeof in);
            imp_fill_inputs(&in, cJSON_GetObjectItemCaseSensitive(args, "Input Dims"),
                        cJSON_GetObjectItemCaseSensitive(args, "Input type"),
                        opmap_uses_concrete(name->valuestring)
                            ? cJSON_GetObjectItemCaseSensitive(args, "Concrete Inputs")
                            : NULL);
            c->in_off = S->nin;
            c->nin = (uint32_t)in.ninputs;
            for (int i = 0; i < in.ninputs; i++) {
                IMP_GROW(S->in, S->nin, S->cap_in);
                struct kinput *k = &S->in[S->nin++];
                k->ndims = (int8_t)in.ndims[i];
                k->dim_off = S->ndims;
                for (int j = 0; j < in.ndims[i]; j++) {
                    IMP_GROW(S->dims, S->ndims, S->cap_dims);
                    S->dims[S->ndims++] = in.dims[i][j];
                }
                k->type = st_intern(&S->names, in.types[i]);
                k->conc = st_intern(&S->names, in.concrete[i]);
            }
        }
        S->ncpu++;
        st->cpu_ops++;
    } else if (is_cat(e, "cuda_runtime", "hip_runtime") || is_cat(e, "runtime", NULL)) {
        IMP_GROW(S->rt, S->nrt, S->cap_rt);
        struct krt *r = &S->rt[S->nrt];
        if (get_num(e, "ts", &ts) || get_i64(e, "pid", &r->pid) || get_i64(e, "tid", &r->tid) ||
            !cJSON_IsObject(args) || get_i64(args, "correlation", &r->corr))
            return; /* a sync or malloc call without correlation: not a launch */
        r->ts = ts;
        S->nrt++;
    } else if (is_cat(e, "cuda_sync", NULL)) {
        const cJSON *kind = cJSON_IsObject(args)
                                ? cJSON_GetObjectItemCaseSensitive(args, "cuda_sync_kind")
                                : NULL;
        IMP_GROW(S->sy, S->nsy, S->cap_sy);
        struct ksync *y = &S->sy[S->nsy];
        memset(y, 0, sizeof *y);
        if (get_num(e, "ts", &ts) || !cJSON_IsString(kind)) {
            st->malformed++;
            return;
        }
        y->ts = ts;
        const char *k = kind->valuestring;
        y->kind = strcmp(k, "Stream Wait Event") == 0 ? KS_WAIT_EVENT
                  : strcmp(k, "Stream Sync") == 0     ? KS_STREAM
                  : strcmp(k, "Event Sync") == 0      ? KS_EVENT
                  : strcmp(k, "Context Sync") == 0    ? KS_CONTEXT
                                                      : 0;
        if (y->kind == 0)
            return; /* a kind this importer does not know: no dependency */
        /* Absent fields (older Kineto) or -1 (not known to the profiler)
         * give no dependency; fields of the wrong type make it malformed. */
        if (opt_i64(args, "device", 0, &y->dev) | opt_i64(args, "stream", -1, &y->stream) |
            opt_i64(args, "wait_on_stream", -1, &y->wait_stream) |
            opt_i64(args, "wait_on_cuda_event_record_corr_id", -1, &y->rec_corr)) {
            st->malformed++;
            return;
        }
        S->nsy++;
        st->syncs++;
    } else if (is_cat(e, "kernel", NULL) || is_cat(e, "gpu_memcpy", "gpu_memset")) {
        IMP_GROW(S->dv, S->ndv, S->cap_dv);
        struct kdev *k = &S->dv[S->ndv];
        if (get_num(e, "ts", &ts) || get_num(e, "dur", &dur) || !cJSON_IsObject(args) ||
            !cJSON_IsString(name)) {
            st->malformed++;
            return;
        }
        if (!dur_ok(st, dur))
            return;
        k->name = st_intern(&S->names, name->valuestring);
        k->ts = ts;
        k->dur = dur;
        k->dev = 0;
        k->stream = 0;
        k->ext = INT64_MIN;
        k->corr = INT64_MIN;
        k->bytes = 0;
        if (get_i64(args, "device", &k->dev) && get_i64(e, "pid", &k->dev))
            k->dev = 0;
        if (get_i64(args, "stream", &k->stream) && get_i64(e, "tid", &k->stream))
            k->stream = 0;
        get_i64(args, "External id", &k->ext);
        get_i64(args, "correlation", &k->corr);
        get_num(args, "bytes", &k->bytes);
        k->copy = is_cat(e, "gpu_memcpy", NULL) ? 1 : (is_cat(e, "gpu_memset", NULL) ? 2 : 0);
        if (k->copy)
            st->copies++;
        else
            st->kernels++;
        S->ndv++;
    }
}

/* ---- synchronisation between streams ----
 *
 * Streams order their own ops; what orders one stream after another is a
 * synchronisation call, which Kineto (PyTorch 2.1 and later) records as a
 * "cuda_sync" event.  Each becomes dependencies between the ops around it,
 * placed by the host time of their launch:
 *   Stream Wait Event  the first op launched on the waiting stream after the
 *                      call waits for the last op launched on the event's
 *                      stream before the event was recorded;
 *   Stream Sync        the host waits for the stream: the first op launched
 *                      on each other stream afterwards waits for its last op;
 *   Event Sync         the same, up to the event's record;
 *   Context Sync       the host waits for every stream: the first op on each
 *                      stream afterwards waits for the last op of every other.
 * A dependency always points at an earlier op of the output (ops are in
 * the order their first kernel started), so no cycle can arise. */

struct kpos {                   /* an output op, for the search */
    int64_t dev, stream;
    double launch;
    uint32_t op;
};

struct kdep {                   /* op waits for on, an op of stream group grp */
    uint32_t op, grp, on;
};

static int kpos_cmp(const void *a, const void *b)
{
    const struct kpos *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    if (x->launch != y->launch)
        return x->launch < y->launch ? -1 : 1;
    return x->op < y->op ? -1 : (x->op > y->op);
}

static int kdep_cmp(const void *a, const void *b)
{
    const struct kdep *x = a, *y = b;
    if (x->op != y->op)
        return x->op < y->op ? -1 : 1;
    if (x->grp != y->grp)
        return x->grp < y->grp ? -1 : 1;
    return x->on < y->on ? -1 : (x->on > y->on);
}

/* Ops of one stream: p[lo, hi) sorted by launch time. */
struct kgroup {
    uint32_t lo, hi;
};

/* In group g, the last op launched before t (after == 0) or the first one
 * launched after t (after == 1); UINT32_MAX if none. */
static uint32_t kgroup_find(const struct kpos *p, struct kgroup g, double t, int after)
{
    uint32_t lo = g.lo, hi = g.hi; /* first index with launch > t (after) or >= t */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (after ? p[mid].launch <= t : p[mid].launch < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (after)
        return lo < g.hi ? p[lo].op : UINT32_MAX;
    return lo > g.lo ? p[lo - 1].op : UINT32_MAX;
}

/* The index of the group of (dev, stream), or ng if there is none. */
static uint32_t kgroup_of(const struct kgroup *g, uint32_t ng, const struct kpos *p, int64_t dev,
                          int64_t stream)
{
    uint32_t lo = 0, hi = ng;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const struct kpos *q = &p[g[mid].lo];
        if (q->dev < dev || (q->dev == dev && q->stream < stream))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < ng && p[g[lo].lo].dev == dev && p[g[lo].lo].stream == stream)
        return lo;
    return ng;
}


/* How many of the sorted a[0..n) are below t. */
static size_t count_below(const double *a, size_t n, double t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Sort, and of an op's dependencies on one stream keep only the latest
 * (the stream orders the others before it); returns how many are left. */
static uint32_t kdep_compact(struct kdep *d, uint32_t n)
{
    if (n > 1)
        qsort(d, n, sizeof *d, kdep_cmp);
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++)
        if (i + 1 == n || d[i + 1].op != d[i].op || d[i + 1].grp != d[i].grp)
            d[m++] = d[i];
    return m;
}

struct kdeps {
    struct kdep *d;
    uint32_t n, cap;
    uint32_t fresh;             /* added since the last compaction */
};

static void kdep_add(struct kdeps *k, uint32_t op, uint32_t grp, uint32_t on,
                     struct import_stats *st)
{
    if (op == UINT32_MAX || on == UINT32_MAX || on >= op)
        return;
    /* full: drop repeats first, unless that was just done (a compaction
     * per call would make this quadratic) */
    if (k->n >= k->cap && k->fresh >= k->cap / 4) {
        k->n = kdep_compact(k->d, k->n);
        k->fresh = 0;
    }
    if (k->n >= k->cap) {
        st->deps_dropped++;
        return;
    }
    k->d[k->n++] = (struct kdep){op, grp, on};
    k->fresh++;
}

static struct kdep *sync_deps(struct kstate *S, const struct kentry *ent, uint32_t nent,
                              const struct imp_map *by_corr, uint32_t *ndep)
{
    *ndep = 0;
    if (S->nsy == 0 || nent == 0)
        return NULL;
    struct kpos *p = sim_xcalloc(nent, sizeof *p);
    for (uint32_t i = 0; i < nent; i++) {
        uint32_t r;
        if (ent[i].cpu >= 0) {
            const struct kcpu *c = &S->cpu[ent[i].cpu];
            p[i] = (struct kpos){c->dev, c->stream, c->launch, i};
        } else {
            const struct kdev *k = &S->dv[ent[i].dev_event];
            double t = k->ts;
            if (k->corr != INT64_MIN && imp_map_get(by_corr, k->corr, &r))
                t = S->rt[r].ts;
            p[i] = (struct kpos){k->dev, k->stream, t, i};
        }
    }
    qsort(p, nent, sizeof *p, kpos_cmp);
    struct kgroup *g = sim_xcalloc(nent, sizeof *g);
    uint32_t ng = 0;
    for (uint32_t i = 0; i < nent; i++)
        if (i == 0 || p[i].dev != p[i - 1].dev || p[i].stream != p[i - 1].stream)
            g[ng++] = (struct kgroup){i, i + 1};
        else
            g[ng - 1].hi = i + 1;
    /* launch times in order, to tell whether anything was launched between
     * two host syncs (if not, the second adds nothing) */
    double *lt = sim_xcalloc(nent, sizeof *lt);
    for (uint32_t i = 0; i < nent; i++)
        lt[i] = p[i].launch;
    gsl_sort(lt, 1, nent);
    struct kdeps k = {NULL, 0, IMPORT_SYNC_DEPS_PER_OP * nent + 16, 0};
    k.d = sim_xcalloc(k.cap, sizeof *k.d);
    /* a bound on the work: a device-wide sync costs streams^2, so a small
     * file of many streams and syncs could otherwise take hours */
    uint64_t budget = 256ull * nent + 65536;
    struct { int kind; int64_t dev, stream; size_t before_rec, before; } prev = {0, 0, 0, 0, 0};
    for (uint32_t s = 0; s < S->nsy; s++) {
        const struct ksync *y = &S->sy[s];
        double rec = y->ts;
        uint32_t r;
        if (budget == 0) {
            S->st->syncs_skipped = S->nsy - s;
            break;
        }
        budget--;
        if (y->kind == KS_WAIT_EVENT || y->kind == KS_EVENT) {
            if (!imp_map_get(by_corr, y->rec_corr, &r))
                continue; /* the event's record is not in the trace */
            rec = S->rt[r].ts;
        }
        if (y->kind == KS_WAIT_EVENT) {
            uint32_t ga = kgroup_of(g, ng, p, y->dev, y->wait_stream);
            uint32_t gb = kgroup_of(g, ng, p, y->dev, y->stream);
            if (ga < ng && gb < ng)
                kdep_add(&k, kgroup_find(p, g[gb], y->ts, 1), ga, kgroup_find(p, g[ga], rec, 0),
                         S->st);
            continue;
        }
        int64_t key = y->kind == KS_STREAM ? y->stream : (y->kind == KS_EVENT ? y->wait_stream : -1);
        size_t before_rec = count_below(lt, nent, rec);
        size_t before = count_below(lt, nent, y->ts);
        if (prev.kind == (int)y->kind && prev.dev == y->dev && prev.stream == key &&
            prev.before_rec == before_rec && prev.before == before)
            continue; /* nothing launched since the same sync */
        prev.kind = (int)y->kind;
        prev.dev = y->dev;
        prev.stream = key;
        prev.before_rec = before_rec;
        prev.before = before;
        /* each stream waited for: the one named, or all of the device's */
        uint32_t a0 = 0, a1 = ng;
        if (key >= 0) {
            a0 = kgroup_of(g, ng, p, y->dev, key);
            a1 = a0 < ng ? a0 + 1 : a0;
        }
        for (uint32_t a = a0; a < a1 && budget > 0; a++) {
            budget--;
            const struct kpos *pa = &p[g[a].lo];
            if (pa->dev != y->dev)
                continue;
            uint32_t on = kgroup_find(p, g[a], rec, 0);
            if (on == UINT32_MAX)
                continue;
            for (uint32_t b2 = 0; b2 < ng && budget > 0; b2++) { /* the first op after, on each other stream */
                budget--;
                if (b2 != a && p[g[b2].lo].dev == y->dev)
                    kdep_add(&k, kgroup_find(p, g[b2], y->ts, 1), a, on, S->st);
            }
        }
        if (budget == 0) {
            S->st->syncs_skipped = S->nsy - s; /* this one was cut short too */
            break;
        }
    }
    free(p);
    free(g);
    free(lt);
    k.n = kdep_compact(k.d, k.n);
    S->st->sync_deps = k.n;
    *ndep = k.n;
    return k.d;
}

/* The records -> a strata trace. */
static int kineto_finish(struct kstate *S, const char *path, struct trace *out, struct diag *d)
{
    struct import_stats *st = S->st;
    struct kcpu *cpu = S->cpu;
    struct kdev *dv = S->dv;
    struct krt *rt = S->rt;
    uint32_t ncpu = S->ncpu, ndv = S->ndv, nrt = S->nrt;
    owners_by_time(cpu, ncpu, rt, nrt);
    struct imp_map by_ext, by_corr;
    imp_map_init(&by_ext, ncpu);
    imp_map_init(&by_corr, nrt);
    for (uint32_t i = 0; i < ncpu; i++)
        if (cpu[i].ext != INT64_MIN)
            imp_map_put(&by_ext, cpu[i].ext, i);
    for (uint32_t i = 0; i < nrt; i++)
        imp_map_put(&by_corr, rt[i].corr, i);
    struct kentry *ent = sim_xcalloc((size_t)ndv + 1, sizeof *ent);
    uint32_t nent = 0;
    for (uint32_t i = 0; i < ndv; i++) {
        struct kdev *k = &dv[i];
        if (k->copy) {
            add_entry(ent, &nent, k->ts, -1, i);
            continue;
        }
        uint32_t owner = 0, r;
        int have = 0;
        if (k->ext != INT64_MIN && imp_map_get(&by_ext, k->ext, &owner))
            have = 1;
        else if (k->corr != INT64_MIN && imp_map_get(&by_corr, k->corr, &r) && rt[r].owner >= 0) {
            owner = (uint32_t)rt[r].owner;
            have = 1;
        }
        if (!have) {
            st->orphan_kernels++;
            add_entry(ent, &nent, k->ts, -1, i);
            continue;
        }
        struct kcpu *c = &cpu[owner];
        if (c->nkern == 0) {
            c->dev = k->dev;
            c->stream = k->stream;
            c->launch = c->ts;
            add_entry(ent, &nent, k->ts, (int)owner, 0);
            st->owners++;
        }
        if (k->corr != INT64_MIN && imp_map_get(&by_corr, k->corr, &r) &&
            (c->nkern == 0 || rt[r].ts < c->launch))
            c->launch = rt[r].ts;
        if (c->nkern == 0 || k->dur > c->kmax) {
            c->kname = k->name;
            c->kmax = k->dur;
        }
        c->nkern++;
        c->kern_s += k->dur * 1e-6;
        if (tensor_core_kernel(st_str(&S->names, k->name)))
            c->tensor_core = 1;
        if (!aux_kernel(st_str(&S->names, k->name)))
            c->main_kernel = 1;
    }
    if (nent > 1)
        qsort(ent, nent, sizeof *ent, entry_cmp);
    uint32_t ndep = 0;
    struct kdep *dep = sync_deps(S, ent, nent, &by_corr, &ndep);
    uint32_t di = 0;
    struct imp_builder b;
    imp_build_init(&b, out, nent);
    for (uint32_t i = 0; i < nent; i++) {
        struct op *o;
        int64_t dev, stream;
        if (ent[i].cpu >= 0) {
            struct kcpu *c = &cpu[ent[i].cpu];
            const char *nm = st_str(&S->names, c->name);
            o = imp_build_add(&b, nm);
            opmap_kernel_family(st_str(&S->names, c->kname), o->kernel, sizeof o->kernel);
            dev = c->dev;
            stream = c->stream;
            /* each kernel is within the bound, their sum need not be */
            if (c->kern_s > TRACE_MAX_OP_S) {
                c->kern_s = TRACE_MAX_OP_S;
                st->dur_clamped++;
            }
            struct opmap_in in;
            memset(&in, 0, sizeof in);
            in.name = nm;
            in.tensor_core = c->tensor_core;
            in.ninputs = (int)c->nin;
            for (uint32_t k = 0; k < c->nin; k++) {
                const struct kinput *x = &S->in[c->in_off + k];
                in.ndims[k] = x->ndims;
                for (int j = 0; j < x->ndims; j++)
                    in.dims[k][j] = S->dims[x->dim_off + j];
                in.types[k] = st_str(&S->names, x->type);
                in.concrete[k] = st_str(&S->names, x->conc);
            }
            enum opmap_result mr = opmap_map(&in, o);
            if (mr == OPMAP_OK) {
                /* a GEMM whose only kernels are a library's helpers (the
                 * split-K reduction, a bias epilogue): its main kernel is
                 * not in the trace (dropped by the profiler or counted at
                 * another op), so its kernel time is not its time */
                if (o->kind == OP_GEMM && !c->main_kernel)
                    st->partial++;
                else
                    o->measured_s = c->kern_s;
                st->mapped++;
            } else {
                imp_build_fixed(o, c->kern_s);
                if (mr == OPMAP_NOSHAPE)
                    st->fixed_noshape++;
                else if (mr == OPMAP_COLLECTIVE)
                    st->fixed_collective++;
                else
                    st->fixed_unknown++;
            }
        } else {
            struct kdev *k = &dv[ent[i].dev_event];
            const char *nm = st_str(&S->names, k->name);
            o = imp_build_add(&b, nm);
            opmap_kernel_family(nm, o->kernel, sizeof o->kernel);
            dev = k->dev;
            stream = k->stream;
            if (k->copy == 1 && k->bytes >= 1) {
                o->kind = OP_MEMCPY;
                o->dtype = DT_INT8;
                o->u.copy.bytes = (uint64_t)k->bytes;
                o->u.copy.peer = o->u.copy.src = TRACE_NO_DEVICE;
                o->u.copy.dir = strstr(nm, "HtoD") ? MEMCPY_H2D
                                                   : (strstr(nm, "DtoH") ? MEMCPY_D2H : MEMCPY_D2D);
                o->measured_s = k->dur * 1e-6;
            } else if (k->copy == 2 && k->bytes >= 1) {
                o->kind = OP_ELEMENTWISE;
                o->dtype = DT_INT8;
                o->u.ew.elements = (uint64_t)k->bytes;
                o->u.ew.inputs = 0;
                o->u.ew.outputs = 1;
                o->u.ew.flops_per_element = 0;
                o->u.ew.vector_bytes = 16;
                o->measured_s = k->dur * 1e-6;
            } else {
                imp_build_fixed(o, k->dur * 1e-6);
            }
        }
        o->device = imp_build_device(&b, dev);
        o->stream = imp_build_stream(&b, dev, stream);
        for (; di < ndep && dep[di].op == i; di++)
            imp_build_dep(&b, dep[di].on);
        st->by_kind[o->kind]++;
    }
    out->ndevices = b.ndev ? b.ndev : 1;
    if (b.ndev == 0)
        snprintf(out->devices[0], sizeof out->devices[0], "gpu0");
    snprintf(out->path, sizeof out->path, "%s", path);
    snprintf(out->name, sizeof out->name, "imported from %.60s", path);
    imp_map_free(&by_ext);
    imp_map_free(&by_corr);
    free(ent);
    free(dep);
    if (out->nops == 0) {
        trace_free(out);
        return diag_set(d, DIAG_E_RANGE, path, 1, "traceEvents",
                        "no GPU kernels or copies in the trace: nothing to import");
    }
    return 0;
}

/* ---- the streaming reader: one event object at a time ---- */

struct kstream {
    void *gz;                   /* gzFile, behind gz.h */
    const char *path;
    char *buf;
    size_t len, pos, cap;
    int eof;
    long line;                  /* 1-based line of buf[pos] */
    uint64_t bytes;             /* decompressed bytes read */
};

static int ks_fill(struct kstream *r, struct diag *d)
{
    if (r->eof)
        return 0;
    if (r->pos > 0) { /* keep the unread tail */
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->len -= r->pos;
        r->pos = 0;
    }
    if (r->len == r->cap) {
        if (r->cap >= ((size_t)1 << 28))
            return diag_set(d, DIAG_E_RANGE, r->path, (int)r->line, "traceEvents",
                            "an event longer than 256 MiB");
        r->cap *= 2;
        char *nb = realloc(r->buf, r->cap + 1);
        if (nb == NULL)
            sim_oom(r->cap + 1);
        r->buf = nb;
    }
    long got = gz_read_some(r->gz, r->buf + r->len, r->cap - r->len, r->path, d);
    if (got < 0)
        return -1;
    if (got == 0)
        r->eof = 1;
    r->len += (size_t)got;
    r->bytes += (uint64_t)got;
    return 0;
}

/* Next byte without consuming; -1 at the end. */
static int ks_peek(struct kstream *r, struct diag *d, int *err)
{
    while (r->pos == r->len) {
        if (r->eof)
            return -1;
        if (ks_fill(r, d) != 0) {
            *err = 1;
            return -1;
        }
    }
    return (unsigned char)r->buf[r->pos];
}

static void ks_skip_ws(struct kstream *r, struct diag *d, int *err)
{
    for (;;) {
        int c = ks_peek(r, d, err);
        if (c == '\n')
            r->line++;
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
            return;
        r->pos++;
    }
}

/* The extent of the JSON value starting at pos: strings and nesting are
 * tracked so brackets inside strings do not count.  On success the value
 * is buf[start .. pos). */
static int ks_value(struct kstream *r, size_t *start, struct diag *d)
{
    int depth = 0, in_str = 0, esc = 0;
    size_t i = r->pos;
    *start = r->pos;
    for (;;) {
        while (i == r->len) {
            size_t off = *start;
            r->pos = off; /* ks_fill keeps from pos on */
            if (r->eof)
                return diag_set(d, DIAG_E_PARSE, r->path, (int)r->line, "traceEvents",
                                "the file ends inside an event (truncated?)");
            if (ks_fill(r, d) != 0)
                return -1;
            i = i - off;
            *start = 0;
        }
        char c = r->buf[i++];
        if (in_str) {
            if (esc)
                esc = 0;
            else if (c == '\\')
                esc = 1;
            else if (c == '"')
                in_str = 0;
            if (c == '\n')
                r->line++;
            if (depth == 0 && !in_str)
                break; /* a top-level string */
            continue;
        }
        if (depth == 0 && i - 1 > *start &&
            (c == ',' || c == ']' || c == '}' || c == ' ' || c == '\n' || c == '\r' || c == '\t')) {
            i--; /* a number or literal ended */
            break;
        }
        if (c == '"') {
            in_str = 1;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (--depth < 0)
                return diag_set(d, DIAG_E_PARSE, r->path, (int)r->line, "traceEvents", "unbalanced brackets");
            if (depth == 0)
                break;
        } else if (c == '\n') {
            r->line++;
        }
    }
    r->pos = i;
    return 0;
}

/* Read a Kineto trace event by event.  Returns 0, 1 if the file is not a
 * Kineto trace (no top-level traceEvents), or -1 with *d. */
static int kineto_stream(const char *path, struct kstate *S, struct diag *d)
{
    struct kstream r;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.line = 1;
    r.cap = 1 << 20;
    r.buf = sim_xcalloc(r.cap + 1, 1);
    r.gz = gz_open_read(path, d);
    int rc = -1, err = 0;
    if (r.gz == NULL)
        goto out;
    ks_skip_ws(&r, d, &err);
    int c = ks_peek(&r, d, &err);
    if (err)
        goto out;
    int top_array = c == '[';
    if (c != '{' && c != '[') {
        rc = diag_set(d, DIAG_E_PARSE, path, (int)r.line, "", "not JSON (expected { or [)");
        goto out;
    }
    r.pos++;
    if (!top_array) {
        /* find the "traceEvents" member, skipping the others */
        for (;;) {
            ks_skip_ws(&r, d, &err);
            c = ks_peek(&r, d, &err);
            if (err)
                goto out;
            if (c == '}' || c < 0) {
                rc = 1; /* no traceEvents */
                goto out;
            }
            if (c == ',') {
                r.pos++;
                continue;
            }
            size_t ks;
            if (c != '"' || ks_value(&r, &ks, d) != 0) {
                if (c != '"')
                    rc = diag_set(d, DIAG_E_PARSE, path, (int)r.line, "", "expected a member name");
                goto out;
            }
            int is_events = r.pos - ks == 13 && memcmp(r.buf + ks, "\"traceEvents\"", 13) == 0;
            ks_skip_ws(&r, d, &err);
            if (ks_peek(&r, d, &err) != ':') {
                rc = diag_set(d, DIAG_E_PARSE, path, (int)r.line, "", "expected ':'");
                goto out;
            }
            r.pos++;
            ks_skip_ws(&r, d, &err);
            if (is_events) {
                if (ks_peek(&r, d, &err) != '[') {
                    rc = diag_set(d, DIAG_E_TYPE, path, (int)r.line, "traceEvents", "expected an array");
                    goto out;
                }
                r.pos++;
                break;
            }
            size_t vs;
            if (ks_value(&r, &vs, d) != 0)
                goto out;
        }
    }
    /* the events */
    for (;;) {
        ks_skip_ws(&r, d, &err);
        c = ks_peek(&r, d, &err);
        if (err)
            goto out;
        if (c < 0) {
            rc = diag_set(d, DIAG_E_PARSE, path, (int)r.line, "traceEvents",
                          "the file ends inside traceEvents (truncated?)");
            goto out;
        }
        if (c == ']')
            break;
        if (c == ',') {
            r.pos++;
            continue;
        }
        long line = r.line;
        size_t vs;
        if (ks_value(&r, &vs, d) != 0)
            goto out;
        cJSON *e = cJSON_ParseWithLength(r.buf + vs, r.pos - vs);
        if (e == NULL) {
            rc = diag_set(d, DIAG_E_PARSE, path, (int)line, "traceEvents", "malformed event");
            goto out;
        }
        kineto_event(S, e);
        cJSON_Delete(e);
    }
    rc = 0;
out:
    if (r.gz != NULL)
        gz_close(r.gz);
    free(r.buf);
    return rc;
}

/* Streams a Kineto trace into *out: 0, -1 with *d, or 1 (nothing
 * consumed) when the file has no traceEvents array. */
static int kineto_try(const char *path, struct trace *out, struct import_stats *st, struct diag *d)
{
    memset(st, 0, sizeof *st);
    struct kstate S;
    ks_init(&S, st);
    int rc = kineto_stream(path, &S, d);
    if (rc == 0)
        rc = kineto_finish(&S, path, out, d);
    ks_free(&S);
    return rc;
}

int import_kineto(const char *path, struct trace *out, struct import_stats *st, struct diag *d)
{
    int rc = kineto_try(path, out, st, d);
    if (rc == 1)
        rc = diag_set(d, DIAG_E_MISSING, path, 1, "traceEvents",
                      "not a PyTorch profiler trace (no traceEvents array)");
    return rc;
}

static int load_json(const char *path, struct jsondoc *doc, struct diag *d)
{
    char *text;
    size_t len;
    if (gz_read_all(path, &text, &len, d) != 0)
        return -1;
    int rc = jsondoc_parse_string(text, path, doc, d);
    free(text);
    return rc;
}

/* ------------------------------------------------------------ execution trace */

/* storage id of a tensor value [tensor_id, storage_id, offset, numel, itemsize, device] */
static int64_t storage_of(const cJSON *v)
{
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) < 2)
        return INT64_MIN;
    const cJSON *s = cJSON_GetArrayItem(v, 1);
    return cJSON_IsNumber(s) && fabs(s->valuedouble) < 9.2e18 ? (int64_t)s->valuedouble
                                                               : INT64_MIN;
}

static int et_build(const struct jsondoc *doc, const cJSON *nodes, struct trace *out,
                    struct import_stats *st, struct diag *d)
{
    uint32_t n = (uint32_t)cJSON_GetArraySize(nodes);
    /* which node ids are parents */
    struct imp_map parent;
    imp_map_init(&parent, n);
    const cJSON *nd;
    cJSON_ArrayForEach(nd, nodes)
    {
        int64_t p;
        if (cJSON_IsObject(nd) && get_i64(nd, "parent", &p) == 0)
            imp_map_put(&parent, p, 1);
    }
    struct imp_builder b;
    imp_build_init(&b, out, n);
    imp_build_device(&b, 0);
    struct imp_map writer; /* storage id -> op index + 1 of its last writer */
    imp_map_init(&writer, 4 * (size_t)n);
    cJSON_ArrayForEach(nd, nodes)
    {
        int64_t id;
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(nd, "name");
        if (!cJSON_IsObject(nd) || !cJSON_IsString(name) || get_i64(nd, "id", &id)) {
            st->malformed++;
            continue;
        }
        uint32_t dummy;
        const char *nm = name->valuestring;
        int is_op = strncmp(nm, "aten::", 6) == 0 || strncmp(nm, "c10d::", 6) == 0 ||
                    strncmp(nm, "nccl:", 5) == 0 || strncmp(nm, "record_param_comms", 18) == 0;
        if (!is_op || imp_map_get(&parent, id, &dummy))
            continue; /* not an operator, or not a leaf */
        st->cpu_ops++;
        struct opmap_in in;
        memset(&in, 0, sizeof in);
        in.name = nm;
        imp_fill_inputs(&in, cJSON_GetObjectItemCaseSensitive(nd, "input_shapes"),
                    cJSON_GetObjectItemCaseSensitive(nd, "input_types"), NULL);
        struct op tmp;
        memset(&tmp, 0, sizeof tmp);
        enum opmap_result mr = opmap_map(&in, &tmp);
        if (mr == OPMAP_UNKNOWN || mr == OPMAP_NOSHAPE) {
            /* allocations, views and metadata ops do no GPU work we can size */
            if (mr == OPMAP_NOSHAPE)
                st->fixed_noshape++;
            else
                st->fixed_unknown++;
            continue;
        }
        struct op *o = imp_build_add(&b, nm);
        if (mr == OPMAP_COLLECTIVE) {
            /* bytes of the tensors it communicates; timed as generic traffic */
            double bytes = 0;
            for (int i = 0; i < in.ninputs; i++) {
                double e = in.ndims[i] >= 1 ? 1 : 0;
                for (int k = 0; k < in.ndims[i]; k++)
                    e *= (double)in.dims[i][k];
                bytes += e * (double)dtype_bits(opmap_dtype(in.types[i])) / 8.0;
            }
            o->kind = OP_GENERIC;
            o->dtype = DT_INT8;
            o->u.gen.flops = 0;
            o->u.gen.bytes = bytes > 0 ? bytes : 1;
            st->fixed_collective++;
        } else {
            *o = (struct op){.kind = tmp.kind, .dtype = tmp.dtype, .u = tmp.u,
                             .measured_s = -1, .fixed_s = -1, .deps_off = o->deps_off};
            snprintf(o->id, sizeof o->id, "op%u", out->nops - 1);
            snprintf(o->name, sizeof o->name, "%s", nm);
            st->mapped++;
        }
        o->device = 0;
        o->stream = 0;
        /* data deps: on the last writer of every tensor it reads */
        const cJSON *ins = cJSON_GetObjectItemCaseSensitive(nd, "inputs"), *v;
        uint32_t me = out->nops - 1;
        cJSON_ArrayForEach(v, ins)
        {
            int64_t sid = storage_of(v);
            uint32_t w;
            if (sid != INT64_MIN && imp_map_get(&writer, sid, &w) && w - 1 != me) {
                int dup = 0;
                for (uint32_t k = 0; k < out->ops[me].ndeps; k++)
                    if (out->deps[out->ops[me].deps_off + k] == w - 1)
                        dup = 1;
                if (!dup)
                    imp_build_dep(&b, w - 1);
            }
        }
        const cJSON *outs = cJSON_GetObjectItemCaseSensitive(nd, "outputs");
        cJSON_ArrayForEach(v, outs)
        {
            int64_t sid = storage_of(v);
            if (sid != INT64_MIN) {
                size_t slot = imp_map_slot(&writer, sid);
                writer.key[slot] = sid;
                writer.val[slot] = me + 1;
            }
        }
        st->by_kind[o->kind]++;
    }
    imp_map_free(&parent);
    imp_map_free(&writer);
    out->ndevices = 1;
    snprintf(out->path, sizeof out->path, "%s", doc->name);
    if (out->nops == 0) {
        trace_free(out);
        return diag_set(d, DIAG_E_RANGE, doc->name, 1, "nodes",
                        "no operators strata can size in the execution trace");
    }
    return 0;
}

int import_pytorch_et(const char *path, struct trace *out, struct import_stats *st,
                      struct diag *d)
{
    memset(st, 0, sizeof *st);
    struct jsondoc doc;
    if (load_json(path, &doc, d) != 0)
        return -1;
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(doc.root, "nodes");
    int rc;
    if (!cJSON_IsArray(nodes))
        rc = diag_set(d, DIAG_E_MISSING, path, 1, "nodes",
                      "not a PyTorch execution trace (no nodes array)");
    else
        rc = et_build(&doc, nodes, out, st, d);
    jsondoc_free(&doc);
    return rc;
}

int import_pytorch(const char *path, struct trace *out, struct import_stats *st, struct diag *d)
{
    int rc = kineto_try(path, out, st, d);
    if (rc != 1)
        return rc;
    /* not a Kineto trace: an execution trace (read whole; they are small) */
    struct jsondoc doc;
    if (load_json(path, &doc, d) != 0)
        return -1;
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(doc.root, "nodes");
    if (cJSON_IsArray(nodes))
        rc = et_build(&doc, nodes, out, st, d);
    else
        rc = diag_set(d, DIAG_E_UNSUPPORTED, path, 1, "",
                      "neither a PyTorch profiler trace (traceEvents) nor an execution trace (nodes)");
    jsondoc_free(&doc);
    return rc;
}
