/* run.c: the run driver.  See run.h.
 *
 * It loads what to run (which system device each trace device is, each
 * device's ops), creates the devices through the model table
 * (models/registry.c) around what they share (models/fabric.h), releases
 * each op when its deps finish, and collects the results: totals, where
 * the time went, energy.  A sustained run repeats it at the clocks
 * sustained.c asks for.
 *
 * An op waits for its listed deps and, CUDA-style, for the op before it on
 * the same (device, stream).  Both kinds of edge are checked for cycles
 * before the run (a stream order that contradicts the deps would deadlock).
 */
#include "run.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "coll.h"
#include "energy.h"
#include "engine.h"
#include "fabric.h"
#include "membudget.h"
#include "progress.h"
#include "sustained.h"

struct sched {
    const struct trace *t;
    struct run_result *out;
    void **dev;                     /* model instance per device */
    const struct model_ops *mops;
    uint32_t *waiting;              /* unmet predecessors per op */
    uint32_t *succ_off, *succ;      /* successors, CSR */
    int32_t *stream_prev;           /* previous op on the same stream, -1 none */
    struct coll_engine *coll;       /* runs the trace's collectives, NULL if none */
    uint32_t ndone;                 /* ops finished (the progress line) */
    struct opstore store;           /* the running ops' results, the finished ones' bodies */
};

static void sched_done(struct engine *e, void *ctx, uint32_t op);

/* Op i's turn: a live result slot (its index in out->op[i].body until it
 * finishes), then its device or the collective engine. */
static void sched_release(struct engine *e, struct sched *s, uint32_t i)
{
    uint32_t k = opstore_take(&s->store);
    s->out->op[i].body = k;
    struct op_result *res = opstore_slot(&s->store, k);
    res->ready_ps = e->now_ps;
    if (s->t->ops[i].kind == OP_COLLECTIVE) {
        coll_arrive(s->coll, i, res, sched_done, s);
        return;
    }
    s->mops->start_op(s->dev[s->t->ops[i].device], i, res, sched_done, s);
}

static void sched_done(struct engine *e, void *ctx, uint32_t op)
{
    struct sched *s = ctx;
    opstore_finish(&s->store, s->out->op[op].body, &s->out->op[op]);
    s->ndone++;
    for (uint32_t k = s->succ_off[op]; k < s->succ_off[op + 1]; k++) {
        uint32_t j = s->succ[k];
        SIM_CHECK(s->waiting[j] > 0);
        if (--s->waiting[j] == 0)
            sched_release(e, s, j);
    }
}

/* The op before each op on its (device, stream), -1 for none: a lookup per
 * op in an open-addressed table of the last op per (device, stream). */
static void sched_stream_order(struct sched *s)
{
    const struct trace *t = s->t;
    uint32_t n = t->nops;
    s->stream_prev = sim_xcalloc(n, sizeof *s->stream_prev);
    /* last op per (device, stream): an open-addressed table, a lookup per op */
    uint32_t cap = 16;
    while (cap < 2 * (uint64_t)t->ndevices + 2 && cap < (1u << 30))
        cap *= 2;
    uint32_t used = 0;
    struct sp { uint32_t dev, stream; int32_t last; int busy; } *tab = sim_xcalloc(cap, sizeof *tab);
    for (uint32_t i = 0; i < n; i++) {
        const struct op *o = &t->ops[i];
        if (2 * (used + 1) > cap) {             /* grow and rehash */
            uint32_t ncap = 2 * cap;
            struct sp *nt = sim_xcalloc(ncap, sizeof *nt);
            for (uint32_t k = 0; k < cap; k++) {
                if (!tab[k].busy)
                    continue;
                uint32_t h = (tab[k].dev * 2654435761u ^ tab[k].stream * 40503u) & (ncap - 1);
                while (nt[h].busy)
                    h = (h + 1) & (ncap - 1);
                nt[h] = tab[k];
            }
            free(tab);
            tab = nt;
            cap = ncap;
        }
        uint32_t h = (o->device * 2654435761u ^ o->stream * 40503u) & (cap - 1);
        while (tab[h].busy && !(tab[h].dev == o->device && tab[h].stream == o->stream))
            h = (h + 1) & (cap - 1);
        if (!tab[h].busy) {
            tab[h].busy = 1;
            tab[h].dev = o->device;
            tab[h].stream = o->stream;
            tab[h].last = -1;
            used++;
        }
        s->stream_prev[i] = tab[h].last;
        tab[h].last = (int32_t)i;
    }
    free(tab);
}

/* Successor lists (CSR) from deps plus stream-order edges, and each op's
 * count of unmet predecessors. */
static void sched_successors(struct sched *s)
{
    const struct trace *t = s->t;
    uint32_t n = t->nops;
    s->waiting = sim_xcalloc(n, sizeof *s->waiting);
    s->succ_off = sim_xcalloc((size_t)n + 1, sizeof *s->succ_off);
    uint32_t *cnt = sim_xcalloc((size_t)n + 1, sizeof *cnt);
    for (uint32_t i = 0; i < n; i++) {
        const struct op *o = &t->ops[i];
        for (uint32_t k = 0; k < o->ndeps; k++)
            cnt[t->deps[o->deps_off + k]]++;
        if (s->stream_prev[i] >= 0)
            cnt[s->stream_prev[i]]++;
    }
    for (uint32_t i = 0; i < n; i++)
        s->succ_off[i + 1] = s->succ_off[i] + cnt[i];
    s->succ = sim_xcalloc((size_t)s->succ_off[n] + 1, sizeof *s->succ);
    memset(cnt, 0, ((size_t)n + 1) * sizeof *cnt);
    for (uint32_t i = 0; i < n; i++) {
        const struct op *o = &t->ops[i];
        for (uint32_t k = 0; k < o->ndeps; k++) {
            uint32_t p = t->deps[o->deps_off + k];
            s->succ[s->succ_off[p] + cnt[p]++] = i;
            s->waiting[i]++;
        }
        if (s->stream_prev[i] >= 0) {
            uint32_t p = (uint32_t)s->stream_prev[i];
            s->succ[s->succ_off[p] + cnt[p]++] = i;
            s->waiting[i]++;
        }
    }
    free(cnt);
    free(s->stream_prev);           /* in the successor lists now */
    s->stream_prev = NULL;
}

/* 0, or -1 with *d naming an op that can never start (Kahn's algorithm
 * over both edge kinds). */
static int sched_check_cycles(const struct sched *s, struct diag *d)
{
    const struct trace *t = s->t;
    uint32_t n = t->nops;
    uint32_t *w = sim_xcalloc(n, sizeof *w), *queue = sim_xcalloc((size_t)n + 1, sizeof *queue);
    memcpy(w, s->waiting, n * sizeof *w);
    uint32_t head = 0, tail = 0;
    for (uint32_t i = 0; i < n; i++)
        if (w[i] == 0)
            queue[tail++] = i;
    while (head < tail) {
        uint32_t i = queue[head++];
        for (uint32_t k = s->succ_off[i]; k < s->succ_off[i + 1]; k++)
            if (--w[s->succ[k]] == 0)
                queue[tail++] = s->succ[k];
    }
    int rc = 0;
    if (tail < n) {
        for (uint32_t i = 0; i < n; i++) {
            if (w[i] > 0) {
                char field[32];
                snprintf(field, sizeof field, "ops[%u].deps", i);
                rc = diag_set(d, DIAG_E_CYCLE, t->path, t->ops[i].line, field,
                              "op '%s' can never start: its deps contradict the order of "
                              "ops on stream %u of device '%s'",
                              op_id(t, &t->ops[i]), t->ops[i].stream, t->devices[t->ops[i].device]);
                break;
            }
        }
    }
    free(w);
    free(queue);
    return rc;
}

/* Successor lists from deps plus stream-order edges; also checks for cycles. */
static int sched_build(struct sched *s, struct diag *d)
{
    sched_stream_order(s);
    sched_successors(s);
    return sched_check_cycles(s, d);
}

/* qsort, skipped when the points are in order already: ops that run one
 * after another (a single stream) give them so, and the sort was a tenth
 * of a million-op run.  cmp is a total order (every point's op code is
 * its own), so the result is qsort's either way. */
static void sort_points(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    const char *p = base;
    for (size_t k = 1; k < n; k++)
        if (cmp(p + (k - 1) * size, p + k * size) > 0) {
            qsort(base, n, size, cmp);
            return;
        }
}

struct run_pt {
    uint64_t t;
    int32_t op; /* +i+1 start, -(i+1) end */
};

static int run_pt_cmp(const void *a, const void *b)
{
    const struct run_pt *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if ((x->op < 0) != (y->op < 0))
        return x->op < 0 ? -1 : 1;
    return x->op < y->op ? -1 : (x->op > y->op);
}

/* Share each instant of the run among the ops running then. */
static void run_attribute(struct run_result *r)
{
    uint32_t n = r->nops;
    struct run_pt *pts = sim_xcalloc(2 * (size_t)n + 1, sizeof *pts);
    size_t npts = 0;
    for (uint32_t i = 0; i < n; i++) {
        /* an op that takes no time (a fixed_s of 0 with no launch
         * overhead) shares no instant; its end would sort before its start */
        if (run_op_dur_ps(r, i) == 0)
            continue;
        pts[npts].t = run_op_start(r, i);
        pts[npts++].op = (int32_t)i + 1;
        pts[npts].t = run_op_end(r, i);
        pts[npts++].op = -(int32_t)i - 1;
    }
    /* sort by time, ends before starts at equal time, then by op (stable, deterministic) */
    sort_points(pts, npts, sizeof *pts, run_pt_cmp);
    double *share = sim_xcalloc(n, sizeof *share);
    uint32_t *active = sim_xcalloc(n, sizeof *active);
    uint32_t *pos = sim_xcalloc(n, sizeof *pos);
    uint32_t nact = 0;
    uint64_t prev = 0;
    double idle = 0;
    for (size_t k = 0; k < npts; k++) {
        uint64_t dt = pts[k].t - prev;
        if (dt > 0) {
            if (nact == 0)
                idle += (double)dt;
            for (uint32_t a = 0; a < nact; a++)
                share[active[a]] += (double)dt / nact;
        }
        prev = pts[k].t;
        if (pts[k].op > 0) {
            uint32_t i = (uint32_t)pts[k].op - 1;
            pos[i] = nact;
            active[nact++] = i;
        } else {
            uint32_t i = (uint32_t)(-pts[k].op) - 1;
            uint32_t p = pos[i];
            active[p] = active[--nact];
            pos[active[p]] = p;
        }
    }
    memset(r->time_ps, 0, sizeof r->time_ps);
    memset(r->lat_ps, 0, sizeof r->lat_ps);
    for (uint32_t i = 0; i < n; i++) {
        const struct op_result *o = run_op_body(r, i);
        uint64_t dur = o->end_ps;
        if (dur == 0)
            continue;
        double f = share[i] / (double)dur;
        for (unsigned c = 0; c < CAT_COUNT; c++)
            r->time_ps[c] += (double)o->time_ps[c] * f;
        for (unsigned l = 0; l < HW_MAX_LEVELS; l++)
            r->lat_ps[l] += (double)o->lat_ps[l] * f;
    }
    r->time_ps[RUN_IDLE] = idle;
    free(pts);
    free(share);
    free(active);
    free(pos);
}

static int dev_pt_cmp(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;      /* {device, time, op code} */
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    if (x[1] != y[1])
        return x[1] < y[1] ? -1 : 1;
    int64_t p = (int64_t)x[2], q = (int64_t)y[2];
    if ((p < 0) != (q < 0))
        return p < 0 ? -1 : 1;
    return p < q ? -1 : (p > q);
}

/* run_attribute per device: each device's instants shared among its own
 * running compute ops, or, when none runs, among its collectives (so a
 * device's link stall is its exposed communication); idle up to the
 * run's end. */
static void run_attribute_devices(struct run_result *r, const struct trace *t)
{
    uint32_t n = r->nops, nd = t->ndevices;
    r->ndevices = nd;
    r->dev_time_ps = sim_xcalloc((size_t)nd * (CAT_COUNT + 1), sizeof *r->dev_time_ps);
    uint64_t (*pts)[3] = sim_xcalloc(2 * (size_t)n + 1, sizeof *pts);
    size_t npts = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (run_op_dur_ps(r, i) == 0)
            continue;
        uint64_t dv = t->ops[i].device;
        pts[npts][0] = dv;
        pts[npts][1] = run_op_start(r, i);
        pts[npts++][2] = (uint64_t)(int64_t)(i + 1);
        pts[npts][0] = dv;
        pts[npts][1] = run_op_end(r, i);
        pts[npts++][2] = (uint64_t)(-(int64_t)i - 1);
    }
    sort_points(pts, npts, sizeof *pts, dev_pt_cmp);
    double *share = sim_xcalloc(n ? n : 1, sizeof *share);
    /* two active sets: compute ops, and collectives; an instant goes to the
     * compute ops running then, and to the collectives only when nothing
     * else runs (their exposed time) */
    uint32_t *act[2] = {sim_xcalloc(n ? n : 1, sizeof(uint32_t)), sim_xcalloc(n ? n : 1, sizeof(uint32_t))};
    uint32_t *pos = sim_xcalloc(n ? n : 1, sizeof *pos);
    double *busy_any = sim_xcalloc(nd, sizeof *busy_any);
    uint32_t nact[2] = {0, 0};
    uint64_t prev = 0, cur = UINT64_MAX;
    for (size_t k = 0; k < npts; k++) {
        if (pts[k][0] != cur) {         /* a new device: its sweep starts at 0 */
            cur = pts[k][0];
            nact[0] = nact[1] = 0;
            prev = 0;
        }
        uint64_t dt = pts[k][1] - prev;
        int w = nact[0] > 0 ? 0 : 1;
        if (dt > 0 && nact[w] > 0) {
            busy_any[cur] += (double)dt;
            for (uint32_t a = 0; a < nact[w]; a++)
                share[act[w][a]] += (double)dt / nact[w];
        }
        prev = pts[k][1];
        int64_t code = (int64_t)pts[k][2];
        uint32_t i = code > 0 ? (uint32_t)code - 1 : (uint32_t)(-code) - 1;
        int set = t->ops[i].kind == OP_COLLECTIVE;
        if (code > 0) {
            pos[i] = nact[set];
            act[set][nact[set]++] = i;
        } else {
            uint32_t p = pos[i];
            act[set][p] = act[set][--nact[set]];
            pos[act[set][p]] = p;
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        const struct op_result *o = run_op_body(r, i);
        uint64_t dur = o->end_ps;
        if (dur == 0)
            continue;
        double f = share[i] / (double)dur, *row = r->dev_time_ps + (size_t)t->ops[i].device * (CAT_COUNT + 1);
        for (unsigned c = 0; c < CAT_COUNT; c++)
            row[c] += (double)o->time_ps[c] * f;
    }
    for (uint32_t dv = 0; dv < nd; dv++)
        r->dev_time_ps[(size_t)dv * (CAT_COUNT + 1) + RUN_IDLE] = (double)r->total_ps - busy_any[dv];
    free(pts);
    free(share);
    free(act[0]);
    free(act[1]);
    free(pos);
    free(busy_any);
}

/* Energy (docs/energy.md): each op's pipes' energy as the model counted
 * it, each byte it moved at a level times the level's energy per byte
 * (energy_op), and the board's idle power over the whole run on every
 * device that is not a mirror (a mirror's energy is its twin's: reports
 * count the simulated devices, as they count their FLOPs and bytes). */
static void run_energy(struct run_result *r, const struct hw_config *cfg, const struct trace *t)
{
    if (!cfg->has_power)
        return;
    r->has_energy = 1;
    r->dev_energy_j = sim_xcalloc(t->ndevices ? t->ndevices : 1, sizeof *r->dev_energy_j);
    for (uint32_t i = 0; i < r->nops; i++) {
        double core;
        const struct op_result *o = run_op_body(r, i);
        r->energy_j[RUN_E_PIPES] += o->pipe_pj * 1e-12;
        r->dev_energy_j[t->ops[i].device] += energy_op(cfg, o, r->energy_j, &core);
    }
    double idle = cfg->idle_w * (double)r->total_ps * 1e-12;
    for (uint32_t dv = 0; dv < t->ndevices; dv++)
        if (t->mirror == NULL || !t->mirror[dv]) {
            r->energy_j[RUN_E_STATIC] += idle;
            r->dev_energy_j[dv] += idle;
        }
}

double run_energy_total(const struct run_result *r)
{
    double e = 0;
    for (unsigned k = 0; k < HW_MAX_LEVELS + 2; k++)
        e += r->energy_j[k];
    return e;
}

int run_trace(const struct hw_config *cfg, const struct trace *t, struct run_result *out,
              struct diag *d)
{
    return run_trace_opts(cfg, t, NULL, out, d);
}

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;   /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h ^ (h >> 15);
}

/* Each trace device is the system device of the same name (a system a
 * chip config implies has exactly the trace's devices).  A trace that uses
 * none of the system's names (a one-device "gpu0" trace on a TPU slice of
 * chip0 .. chip7) runs its i-th device on the system's i-th.  A device that
 * an op uses must be there. */
static int map_devices(const struct hw_system *sys, const struct trace *t, uint32_t *sysdev,
                       struct diag *d)
{
    uint32_t named = 0;
    /* the system's device names in an open-addressed table: a lookup per
     * trace device, not a scan (65536 devices) */
    uint32_t cap = 16;
    while (cap < 2 * sys->ndevices + 2)
        cap *= 2;
    uint32_t *slot = sim_xcalloc(cap, sizeof *slot);    /* device index + 1, 0 = empty */
    for (uint32_t k = 0; k < sys->ndevices; k++) {
        uint32_t h = name_hash(sys->nodes[k].name) & (cap - 1);
        while (slot[h] != 0)
            h = (h + 1) & (cap - 1);
        slot[h] = k + 1;
    }
    for (uint32_t i = 0; i < t->ndevices; i++) {
        sysdev[i] = UINT32_MAX;
        for (uint32_t h = name_hash(t->devices[i]) & (cap - 1); slot[h] != 0; h = (h + 1) & (cap - 1))
            if (strcmp(sys->nodes[slot[h] - 1].name, t->devices[i]) == 0) {
                sysdev[i] = slot[h] - 1;
                break;
            }
        named += sysdev[i] != UINT32_MAX;
    }
    free(slot);
    for (uint32_t i = 0; named == 0 && i < t->ndevices; i++)
        sysdev[i] = i < sys->ndevices ? i : UINT32_MAX;
    unsigned char *gseen = sim_xcalloc(t->ngroups ? t->ngroups : 1, 1);
    for (uint32_t i = 0; i < t->nops; i++) {
        const struct op *o = &t->ops[i];
        uint32_t dv = o->device;
        const char *what = "device";
        if (sysdev[dv] == UINT32_MAX && o->kind == OP_MEMCPY && o->u.copy.dir == MEMCPY_P2P)
            what = "src_device";
        if (sysdev[dv] != UINT32_MAX && o->kind == OP_MEMCPY && o->u.copy.dir == MEMCPY_P2P &&
            sysdev[o->u.copy.peer] == UINT32_MAX) {
            dv = o->u.copy.peer;
            what = "dst_device";
        }
        if (sysdev[dv] != UINT32_MAX && o->kind == OP_COLLECTIVE && o->u.coll.group < t->ngroups &&
            !gseen[o->u.coll.group]) {
            /* a collective's members, mirrors without ops of their own
             * included; each group once */
            const struct trace_group *g = &t->groups[o->u.coll.group];
            gseen[o->u.coll.group] = 1;
            for (uint32_t k = 0; k < g->n && sysdev[dv] != UINT32_MAX; k++)
                if (sysdev[t->group_dev[g->off + k]] == UINT32_MAX) {
                    dv = t->group_dev[g->off + k];
                    what = "group";
                }
        }
        if (sysdev[dv] != UINT32_MAX)
            continue;
        char field[48], list[200] = "";
        size_t used = 0;
        for (uint32_t k = 0; k < sys->ndevices && used < sizeof list; k++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", k ? ", " : "",
                                     sys->nodes[k].name);
        snprintf(field, sizeof field, "ops[%u].%s", i, what);
        free(gseen);
        return diag_set(d, DIAG_E_UNKNOWN_NAME, t->path, t->ops[i].line, field,
                        "device '%s' is not in system %s (devices: %s)", t->devices[dv],
                        sys->name, list);
    }
    free(gseen);
    return 0;
}

int run_trace_opts(const struct hw_config *cfg, const struct trace *t, const struct run_opts *opts,
                   struct run_result *out, struct diag *d)
{
    struct hw_system sys;
    sys_from_chip(cfg, t->ndevices, (const char (*)[32])t->devices, &sys);
    int rc = run_system_opts(&sys, t, opts, out, d);
    sys_free(&sys);
    return rc;
}

/* The work budget: the caller's, else $STRATA_MAX_EVENTS, else the default. */
static uint64_t run_budget(const struct run_opts *opts)
{
    if (opts != NULL && opts->max_events > 0)
        return opts->max_events;
    const char *env = getenv("STRATA_MAX_EVENTS");
    if (env != NULL && env[0] >= '1' && env[0] <= '9') {
        char *end;
        unsigned long long v = strtoull(env, &end, 10);
        if (*end == '\0' && v > 0)
            return (uint64_t)v;
    }
    return RUN_MAX_EVENTS;
}


/* Everything one simulation of a trace holds (run_once). */
struct run_state {
    const struct hw_system *sys;
    const struct trace *t;
    const struct model_ops *mops;
    struct sched s;
    struct engine e;
    int eng_ok;                     /* e was initialised */
    struct run_env env;
    struct fabric fab;              /* what the devices share */
    uint32_t *sysdev;               /* trace device -> system device */
    uint32_t *dev_off, *dev_ops, *local, *dev_streams;  /* each device's ops (run_env) */
    double *ws, *wbytes;            /* per device: working set, weight bytes */
    struct prog *progress;          /* run_opts.progress */
};

/* Each device's ops (CSR), their local index, the streams each device
 * uses and its working set: one pass over the trace, into st->env. */
static void index_devices(struct run_state *st)
{
    const struct trace *t = st->t;
    uint32_t nd = t->ndevices;
    uint32_t *dev_off = st->dev_off = sim_xcalloc((size_t)nd + 1, sizeof *dev_off);
    uint32_t *dev_ops = st->dev_ops = sim_xcalloc((size_t)t->nops + 1, sizeof *dev_ops);
    uint32_t *local = st->local = sim_xcalloc((size_t)t->nops + 1, sizeof *local);
    uint32_t *dev_streams = st->dev_streams = sim_xcalloc(nd, sizeof *dev_streams);
    st->ws = sim_xcalloc(nd, sizeof *st->ws);
    st->wbytes = sim_xcalloc(nd, sizeof *st->wbytes);
    for (uint32_t i = 0; i < t->nops; i++)
        dev_off[t->ops[i].device + 1]++;
    for (uint32_t dv = 0; dv < nd; dv++)
        dev_off[dv + 1] += dev_off[dv];
    uint32_t *fill = sim_xcalloc(nd, sizeof *fill);
    for (uint32_t i = 0; i < t->nops; i++) {
        uint32_t dv = t->ops[i].device;
        local[i] = fill[dv]++;
        dev_ops[dev_off[dv] + local[i]] = i;
    }
    free(fill);
    for (uint32_t dv = 0; dv < nd; dv++) {
        /* distinct streams: sort-free count with a small scan (devices
         * use a handful of streams) */
        uint32_t seen[64], nseen = 0;
        for (uint32_t j = dev_off[dv]; j < dev_off[dv + 1] && nseen < 64; j++) {
            uint32_t stream = t->ops[dev_ops[j]].stream, k = 0;
            while (k < nseen && seen[k] != stream)
                k++;
            if (k == nseen)
                seen[nseen++] = stream;
        }
        dev_streams[dv] = nseen;
    }
    trace_working_sets(t, st->ws, st->wbytes);
    st->env.dev_off = dev_off;
    st->env.dev_ops = dev_ops;
    st->env.local = local;
    st->env.dev_streams = dev_streams;
    st->env.ws = st->ws;
    st->env.wbytes = st->wbytes;
}

/* The engine, what the devices share, the devices (through the model
 * table) and the collectives: 0, or -1 with *d. */
static int run_build(struct run_state *st, const struct run_opts *opts, struct diag *d)
{
    const struct trace *t = st->t;
    const struct hw_config *cfg = &st->sys->chip;
    struct timeline *tl = opts ? opts->tl : NULL;
    engine_init(&st->e, 1024);      /* aborts with the size when out of memory */
    st->eng_ok = 1;
    st->s.dev = sim_xcalloc(t->ndevices, sizeof *st->s.dev);
    fabric_init(&st->fab, &st->e, st->sys, t, st->sysdev, tl, &st->env);
    index_devices(st);
    if (opts != NULL && opts->resident)
        for (uint32_t i = 0; i < t->ndevices; i++)
            if (st->ws[i] > (double)cfg_dram(cfg)->capacity_bytes)
                st->ws[i] = (double)cfg_dram(cfg)->capacity_bytes;
    int rc = 0;
    for (uint32_t i = 0; i < t->ndevices && rc == 0; i++) {
        st->s.dev[i] = st->mops->create(&st->e, cfg, t, i, tl, &st->env, d);
        if (st->s.dev[i] == NULL)
            rc = -1;
    }
    st->env.devs = st->s.dev;
    st->env.mops = st->mops;
    if (rc == 0 && fabric_colls(&st->fab, &st->e, cfg, t, &st->env, d) != 0)
        rc = -1;
    st->s.coll = st->fab.coll;
    return rc;
}

/* The engine's tick: the ops done so far on the progress line. */
static void run_tick(void *ctx)
{
    const struct run_state *st = ctx;
    prog_show(st->progress, st->s.ndone, st->t->nops, "ops", 0);
}

/* Release the ops without predecessors and run the engine to its end:
 * 0, or -1 with *d (a deadlocked collective, a budget passed). */
static int run_simulate(struct run_state *st, const struct run_opts *opts, struct run_result *out,
                        struct diag *d)
{
    const struct trace *t = st->t;
    const struct hw_config *cfg = &st->sys->chip;
    struct engine *e = &st->e;
    int rc = 0;
    out->nops = t->nops;
    out->op = sim_xcalloc(t->nops, sizeof *out->op);
    for (uint32_t i = 0; i < t->nops; i++) /* ops with no predecessor, at t = 0 */
        if (st->s.waiting[i] == 0)
            sched_release(e, &st->s, i);
    uint64_t grows0 = e->q.grows;
    e->max_events = run_budget(opts);
    if (opts != NULL && opts->progress != NULL) {
        prog_show(opts->progress, 0, t->nops, "ops", 0);
        e->tick = run_tick;
        e->tick_ctx = st;
        st->progress = opts->progress;
    }
    engine_run(e);
    /* the bodies are the result's; the live slots go */
    opstore_end_run(&st->s.store);
    out->body = st->s.store.body;
    out->nbody = st->s.store.nbody;
    st->s.store.body = NULL;
    out->events = e->events;
    out->queue_grows = e->q.grows - grows0;
    /* a run stopped early left its collectives unfinished, not stuck */
    if (st->s.coll != NULL && !e->overflow && !e->over_budget && !e->over_memory)
        rc = coll_check_done(st->s.coll, d);
    if (rc == 0 && e->over_memory && membudget_check(0, t->path, d) == 0)
        SIM_CHECK(!"the memory budget was passed and then was not");  /* peak RSS only grows */
    if (rc == 0 && e->over_memory)
        rc = -1;
    if (rc == 0 && e->over_budget)
        rc = diag_set(d, DIAG_E_RANGE, t->path, 0, "ops",
                      "the run needed more than %llu engine events, its work budget; raise it "
                      "with --max-events N (run) or STRATA_MAX_EVENTS=N (every command)",
                      (unsigned long long)e->max_events);
    if (rc == 0 && e->overflow)
        rc = diag_set(d, DIAG_E_RANGE, t->path, 0, "ops",
                      "the simulated time passed %.3g s on %s: the run is far too long for this "
                      "chip (an op far too large, or very many long ones)",
                      (double)ENGINE_MAX_PS * 1e-12, cfg->name);
    return rc;
}

/* The run's totals from its ops: time, work, bytes, where the time went,
 * energy, the largest working set (ws: per device) and what of it spills. */
static void run_collect(const struct trace *t, const struct hw_config *cfg, const double *ws,
                        struct run_result *out)
{
    for (uint32_t b = 0; b < out->nbody; b++) {
        const struct op_result *o = &out->body[b];
        uint64_t sum = 0;
        for (unsigned c = 0; c < CAT_COUNT; c++)
            sum += o->time_ps[c];
        SIM_CHECK(sum == o->end_ps);     /* a body's end is its duration */
    }
    for (uint32_t i = 0; i < t->nops; i++) {
        const struct op_result *o = run_op_body(out, i);
        uint64_t end = run_op_end(out, i);
        if (end > out->total_ps)
            out->total_ps = end;
        out->flops += o->flops;
        for (unsigned l = 0; l < HW_MAX_LEVELS; l++)
            out->bytes[l] += o->bytes[l];
    }
    run_attribute(out);
    run_attribute_devices(out, t);
    run_energy(out, cfg, t);
    for (uint32_t dv = 0; dv < t->ndevices; dv++) {
        if (ws[dv] > out->working_set)
            out->working_set = ws[dv];
        double over = ws[dv] - (double)cfg_dram(cfg)->capacity_bytes;
        if (over > out->spill)
            out->spill = over;
    }
}

static void run_teardown(struct run_state *st)
{
    if (st->s.dev) {
        for (uint32_t i = 0; i < st->t->ndevices; i++)
            st->mops->destroy(st->s.dev[i]);
        free(st->s.dev);
    }
    fabric_destroy(&st->fab);
    free(st->dev_off);
    free(st->dev_ops);
    free(st->local);
    free(st->dev_streams);
    free(st->ws);
    free(st->wbytes);
    free(st->sysdev);
    if (st->eng_ok)
        engine_destroy(&st->e);
    free(st->s.waiting);
    free(st->s.succ_off);
    free(st->s.succ);
    free(st->s.stream_prev);
    opstore_free(&st->s.store);
}

static int run_once(const struct hw_system *sys, const struct trace *t, const struct run_opts *opts,
                    struct run_result *out, struct diag *d)
{
    memset(out, 0, sizeof *out);
    const struct hw_config *cfg = &sys->chip;
    const struct model_ops *mops = model_lookup(cfg->family);
    if (mops == NULL)
        return diag_set(d, DIAG_E_UNKNOWN_NAME, cfg->path, 0, "family",
                        "no model for family '%s'", cfg->family);
    struct run_state st;
    memset(&st, 0, sizeof st);
    st.sys = sys;
    st.t = t;
    st.mops = mops;
    st.s.t = t;
    st.s.out = out;
    st.s.mops = mops;
    if (membudget_check(0, t->path, d) != 0)
        return -1;
    st.sysdev = sim_xcalloc(t->ndevices, sizeof *st.sysdev);
    int rc = map_devices(sys, t, st.sysdev, d);
    if (rc == 0)
        rc = sched_build(&st.s, d);
    if (rc == 0)
        rc = run_build(&st, opts, d);
    if (rc == 0)
        rc = run_simulate(&st, opts, out, d);
    if (rc == 0)
        SIM_CHECK(st.s.ndone == t->nops);
    /* the devices, engine and schedule go before the totals are summed
     * (the attribution's sort is the largest block then) */
    double *ws = st.ws;
    st.ws = NULL;
    run_teardown(&st);
    if (rc == 0)
        run_collect(t, cfg, ws, out);
    free(ws);
    if (rc != 0)
        run_result_free(out);
    return rc;
}

double run_hot_power(const struct run_result *r, const struct trace *t, uint32_t *dev)
{
    double T = (double)r->total_ps * 1e-12, w = 0;
    uint32_t hot = 0;
    for (uint32_t dv = 0; r->dev_energy_j != NULL && dv < r->ndevices && T > 0; dv++)
        if ((t->mirror == NULL || !t->mirror[dv]) && r->dev_energy_j[dv] / T > w) {
            w = r->dev_energy_j[dv] / T;
            hot = dv;
        }
    if (dev != NULL)
        *dev = hot;
    return w;
}

/* The runs of a sustained search: each the trace on sys with its chip at
 * a clock scale, into out (the previous one's freed first). */
struct clock_runs {
    const struct hw_system *sys;
    const struct trace *t;
    const struct run_opts *opts;    /* the caller's; its timeline only when recording */
    struct run_result *out;
    struct diag *d;
    int have;                       /* out holds a run */
};

/* sustained_run_fn: one run of t on sys with its chip at clock scale s. */
static int run_at(void *ctx, double s, int record, struct sustained_view *v)
{
    struct clock_runs *x = ctx;
    struct run_opts o = *x->opts;
    if (!record)
        o.tl = NULL;
    if (x->have)
        run_result_free(x->out);
    x->have = 0;
    struct hw_system at = *x->sys;  /* the nodes and links are read, not changed */
    if (s < 1)
        cfg_at_clock(&at.chip, s);
    int rc = run_once(&at, x->t, &o, x->out, x->d);
    if (rc != 0)
        return rc;
    x->have = 1;
    const struct run_result *r = x->out;
    v->hot_w = run_hot_power(r, x->t, &v->hot);
    v->total_ps = r->total_ps;
    v->op = r->op;
    v->body = r->body;
    v->nops = r->nops;
    v->hot_time_ps = r->dev_time_ps + (size_t)v->hot * (CAT_COUNT + 1);
    return 0;
}

int run_system_opts(const struct hw_system *sys, const struct trace *t, const struct run_opts *opts,
                    struct run_result *out, struct diag *d)
{
    if (opts == NULL || !opts->sustained)
        return run_once(sys, t, opts, out, d);
    const struct hw_config *c = &sys->chip;
    if (!c->has_power || c->power_limit_w <= 0) {
        memset(out, 0, sizeof *out);
        return diag_set(d, DIAG_E_MISSING, c->path, 0, c->has_power ? "power.limit_W" : "power",
                        "a sustained run needs the chip's power limit: a power block with limit_W "
                        "(docs/energy.md)");
    }
    struct clock_runs x = {sys, t, opts, out, d, 0};
    struct sustained_result res;
    int rc = sustained_search(c, t, opts->tl != NULL, run_at, &x, &res);
    out->clock_scale = res.clock;
    out->power_runs = res.runs;
    out->power_floor = res.floor;
    return rc;
}

void run_result_free(struct run_result *r)
{
    free(r->op);
    free(r->body);
    free(r->dev_time_ps);
    free(r->dev_energy_j);
    memset(r, 0, sizeof *r);
}

const char *run_cat_name(const struct hw_config *c, unsigned cat)
{
    if (cat == CAT_BUSY)
        return "busy";
    if (cat == CAT_LAUNCH)
        return "launch";
    if (cat == CAT_MEASURED)
        return "measured";
    if (cat >= CAT_STALL && cat < CAT_STALL + c->nlevels)
        return c->level[cat - CAT_STALL].name;
    if (cat == RUN_IDLE)
        return "idle";
    return "?";
}

/* The bound named by the largest category best, with its wait and the
 * latency part of it (when best is a level's) */
static const char *bound_name(const struct hw_config *c, unsigned best, double wait, double lat)
{
    if (best >= CAT_STALL && best < CAT_STALL + c->nlevels) {
        const struct hw_level *L = &c->level[best - CAT_STALL];
        if (2 * lat > wait && L->lat_label[0] != '\0')
            return L->lat_label;    /* most of that wait the level ran below its rate */
    }
    return best == CAT_BUSY ? "compute" : run_cat_name(c, best);
}

const char *run_bound_name(const struct hw_config *c, const struct op_result *r)
{
    unsigned best = CAT_BUSY;
    for (unsigned k = 0; k < CAT_COUNT; k++)
        if (r->time_ps[k] > r->time_ps[best])
            best = k;
    double lat = best >= CAT_STALL ? (double)r->lat_ps[best - CAT_STALL] : 0;
    return bound_name(c, best, (double)r->time_ps[best], lat);
}

const char *run_result_bound(const struct hw_config *c, const struct run_result *r)
{
    unsigned best = CAT_BUSY;
    for (unsigned k = 0; k < CAT_COUNT; k++)
        if (r->time_ps[k] > r->time_ps[best])
            best = k;
    return bound_name(c, best, r->time_ps[best], best >= CAT_STALL ? r->lat_ps[best - CAT_STALL] : 0);
}
