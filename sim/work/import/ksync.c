/* ksync.c: dependencies between streams from their synchronisation (see
 * ksync.h).
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
#include "ksync.h"

#include <gsl/gsl_sort.h>
#include <stdlib.h>

#include "check.h"

struct kpos {                   /* an output op, for the search */
    int64_t dev, stream;
    double launch;
    uint32_t op;
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
/* The search over the output's ops: their places sorted by stream and
 * launch time, one group a stream, and the launch times in order. */
struct sctx {
    struct kstate *S;
    const struct imp_map *by_corr;
    uint32_t nent;
    struct kpos *p;
    struct kgroup *g;
    uint32_t ng;
    double *lt;
    struct kdeps k;
    uint64_t budget;            /* work left (see ksync_deps) */
    struct { int kind; int64_t dev, stream; size_t before_rec, before; } prev; /* the last host sync */
};

static void sync_places(struct sctx *C, const struct kentry *ent)
{
    struct kstate *S = C->S;
    uint32_t nent = C->nent;
    struct kpos *p = sim_xcalloc(nent, sizeof *p);
    for (uint32_t i = 0; i < nent; i++) {
        uint32_t r;
        if (ent[i].cpu >= 0) {
            const struct kcpu *c = &S->cpu[ent[i].cpu];
            p[i] = (struct kpos){c->dev, c->stream, c->launch, i};
        } else {
            const struct kdev *k = &S->dv[ent[i].dev_event];
            double t = k->ts;
            if (k->corr != INT64_MIN && imp_map_get(C->by_corr, k->corr, &r))
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
    C->p = p;
    C->g = g;
    C->ng = ng;
    C->lt = lt;
}

/* The dependencies of sync y.  1 when it was a host sync that may have
 * used up the work bound, 0 when it was passed over or a stream wait. */
static int sync_one(struct sctx *C, const struct ksync *y)
{
    struct kstate *S = C->S;
    const struct kpos *p = C->p;
    const struct kgroup *g = C->g;
    uint32_t ng = C->ng;
    double rec = y->ts;
    uint32_t r;
    if (y->kind == KS_WAIT_EVENT || y->kind == KS_EVENT) {
        if (!imp_map_get(C->by_corr, y->rec_corr, &r))
            return 0; /* the event's record is not in the trace */
        rec = S->rt[r].ts;
    }
    if (y->kind == KS_WAIT_EVENT) {
        uint32_t ga = kgroup_of(g, ng, p, y->dev, y->wait_stream);
        uint32_t gb = kgroup_of(g, ng, p, y->dev, y->stream);
        if (ga < ng && gb < ng)
            kdep_add(&C->k, kgroup_find(p, g[gb], y->ts, 1), ga, kgroup_find(p, g[ga], rec, 0),
                     S->st);
        return 0;
    }
    int64_t key = y->kind == KS_STREAM ? y->stream : (y->kind == KS_EVENT ? y->wait_stream : -1);
    size_t before_rec = count_below(C->lt, C->nent, rec);
    size_t before = count_below(C->lt, C->nent, y->ts);
    if (C->prev.kind == (int)y->kind && C->prev.dev == y->dev && C->prev.stream == key &&
        C->prev.before_rec == before_rec && C->prev.before == before)
        return 0; /* nothing launched since the same sync */
    C->prev.kind = (int)y->kind;
    C->prev.dev = y->dev;
    C->prev.stream = key;
    C->prev.before_rec = before_rec;
    C->prev.before = before;
    /* each stream waited for: the one named, or all of the device's */
    uint32_t a0 = 0, a1 = ng;
    if (key >= 0) {
        a0 = kgroup_of(g, ng, p, y->dev, key);
        a1 = a0 < ng ? a0 + 1 : a0;
    }
    for (uint32_t a = a0; a < a1 && C->budget > 0; a++) {
        C->budget--;
        const struct kpos *pa = &p[g[a].lo];
        if (pa->dev != y->dev)
            continue;
        uint32_t on = kgroup_find(p, g[a], rec, 0);
        if (on == UINT32_MAX)
            continue;
        for (uint32_t b2 = 0; b2 < ng && C->budget > 0; b2++) { /* the first op after, on each other stream */
            C->budget--;
            if (b2 != a && p[g[b2].lo].dev == y->dev)
                kdep_add(&C->k, kgroup_find(p, g[b2], y->ts, 1), a, on, S->st);
        }
    }
    return 1;
}

struct kdep *ksync_deps(struct kstate *S, const struct kentry *ent, uint32_t nent,
                        const struct imp_map *by_corr, uint32_t *ndep)
{
    *ndep = 0;
    if (S->nsy == 0 || nent == 0)
        return NULL;
    struct sctx C = {.S = S, .by_corr = by_corr, .nent = nent};
    sync_places(&C, ent);
    C.k = (struct kdeps){NULL, 0, IMPORT_SYNC_DEPS_PER_OP * nent + 16, 0};
    C.k.d = sim_xcalloc(C.k.cap, sizeof *C.k.d);
    /* a bound on the work: a device-wide sync costs streams^2, so a small
     * file of many streams and syncs could otherwise take hours */
    C.budget = 256ull * nent + 65536;
    for (uint32_t s = 0; s < S->nsy; s++) {
        if (C.budget == 0) {
            S->st->syncs_skipped = S->nsy - s;
            break;
        }
        C.budget--;
        if (sync_one(&C, &S->sy[s]) && C.budget == 0) {
            S->st->syncs_skipped = S->nsy - s; /* this one was cut short too */
            break;
        }
    }
    free(C.p);
    free(C.g);
    free(C.lt);
    C.k.n = kdep_compact(C.k.d, C.k.n);
    S->st->sync_deps = C.k.n;
    *ndep = C.k.n;
    return C.k.d;
}
