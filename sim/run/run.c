/* run.c: the run driver.  See run.h.
 *
 * An op waits for its listed deps and, CUDA-style, for the op before it on
 * the same (device, stream).  Both kinds of edge are checked for cycles
 * before the run (a stream order that contradicts the deps would deadlock).
 */
#include "run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "coll.h"
#include "engine.h"
#include "flow.h"
#include "membudget.h"
#include "net.h"
#include "record.h"

struct sched {
    const struct trace *t;
    struct run_result *out;
    void **dev;                     /* model instance per device */
    const struct model_ops *mops;
    uint32_t *waiting;              /* unmet predecessors per op */
    uint32_t *succ_off, *succ;      /* successors, CSR */
    int32_t *stream_prev;           /* previous op on the same stream, -1 none */
    struct coll_engine *coll;       /* runs the trace's collectives, NULL if none */
};

static void sched_done(struct engine *e, void *ctx, uint32_t op);

static void sched_release(struct engine *e, struct sched *s, uint32_t i)
{
    s->out->ops[i].ready_ps = e->now_ps;
    if (s->t->ops[i].kind == OP_COLLECTIVE) {
        coll_arrive(s->coll, i, &s->out->ops[i], sched_done, s);
        return;
    }
    s->mops->start_op(s->dev[s->t->ops[i].device], i, &s->out->ops[i], sched_done, s);
}

static void sched_done(struct engine *e, void *ctx, uint32_t op)
{
    struct sched *s = ctx;
    for (uint32_t k = s->succ_off[op]; k < s->succ_off[op + 1]; k++) {
        uint32_t j = s->succ[k];
        SIM_CHECK(s->waiting[j] > 0);
        if (--s->waiting[j] == 0)
            sched_release(e, s, j);
    }
}

/* Successor lists from deps plus stream-order edges; also checks for cycles. */
static int sched_build(struct sched *s, struct diag *d)
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
    /* Kahn's algorithm over both edge kinds */
    uint32_t *w = sim_xcalloc(n, sizeof *w), *queue = cnt;
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
                              t->ops[i].id, t->ops[i].stream, t->devices[t->ops[i].device]);
                break;
            }
        }
    }
    free(w);
    free(cnt);
    return rc;
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
        if (r->ops[i].end_ps <= r->ops[i].start_ps)
            continue;
        pts[npts].t = r->ops[i].start_ps;
        pts[npts++].op = (int32_t)i + 1;
        pts[npts].t = r->ops[i].end_ps;
        pts[npts++].op = -(int32_t)i - 1;
    }
    /* sort by time, ends before starts at equal time, then by op (stable, deterministic) */
    qsort(pts, npts, sizeof *pts, run_pt_cmp);
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
    for (uint32_t i = 0; i < n; i++) {
        const struct op_result *o = &r->ops[i];
        uint64_t dur = o->end_ps - o->start_ps;
        if (dur == 0)
            continue;
        double f = share[i] / (double)dur;
        for (unsigned c = 0; c < CAT_COUNT; c++)
            r->time_ps[c] += (double)o->time_ps[c] * f;
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
        if (r->ops[i].end_ps <= r->ops[i].start_ps)
            continue;
        uint64_t dv = t->ops[i].device;
        pts[npts][0] = dv;
        pts[npts][1] = r->ops[i].start_ps;
        pts[npts++][2] = (uint64_t)(int64_t)(i + 1);
        pts[npts][0] = dv;
        pts[npts][1] = r->ops[i].end_ps;
        pts[npts++][2] = (uint64_t)(-(int64_t)i - 1);
    }
    qsort(pts, npts, sizeof *pts, dev_pt_cmp);
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
        const struct op_result *o = &r->ops[i];
        uint64_t dur = o->end_ps - o->start_ps;
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
 * it, each byte it moved at a level times the level's energy per byte, and
 * the board's idle power over the whole run on every device that is not a
 * mirror (a mirror's energy is its twin's: reports count the simulated
 * devices, as they count their FLOPs and bytes). */
/* One op's energy, J: its pipes' and its bytes' at each level, each
 * level's added to level_j[l] (when not NULL); what runs on the core's
 * clock (the pipes, registers, scratchpads, caches) in *core. */
static double op_energy(const struct hw_config *cfg, const struct op_result *o, double *level_j,
                        double *core)
{
    double e = o->pipe_pj * 1e-12, ec = e;
    for (unsigned l = 0; l < cfg->nlevels; l++) {
        double el = o->bytes[l] * cfg->level[l].energy_pj_per_byte * 1e-12;
        if (level_j != NULL)
            level_j[l] += el;
        if (cfg_level_core_clocked(&cfg->level[l]))
            ec += el;
        e += el;
    }
    *core = ec;
    return e;
}

static void run_energy(struct run_result *r, const struct hw_config *cfg, const struct trace *t)
{
    if (!cfg->has_power)
        return;
    r->has_energy = 1;
    r->dev_energy_j = sim_xcalloc(t->ndevices ? t->ndevices : 1, sizeof *r->dev_energy_j);
    for (uint32_t i = 0; i < r->nops; i++) {
        double core;
        r->energy_j[RUN_E_PIPES] += r->ops[i].pipe_pj * 1e-12;
        r->dev_energy_j[t->ops[i].device] += op_energy(cfg, &r->ops[i], r->energy_j, &core);
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

/* What a link server serves shows on the timeline as its device's counter
 * for the link's level (both directions of a device's link on one). */
struct link_watch {
    struct timeline *tl;
    struct tl_series *s;
};

static void link_observe(void *ctx, uint64_t t0, uint64_t t1, double amount)
{
    struct link_watch *w = ctx;
    tl_add(w->tl, w->s, t0, t1, amount);
}

/* Watch every link that ends at a device of the trace; returns the watch
 * array (the caller frees it). */
static struct link_watch *watch_links(struct timeline *tl, const struct hw_system *sys,
                                      const struct trace *t, const uint32_t *sysdev, struct net *n)
{
    struct link_watch *w = sim_xcalloc(2 * (size_t)sys->nlinks + 1, sizeof *w);
    uint32_t *tdev = sim_xcalloc(sys->nnodes, sizeof *tdev);   /* system node -> trace device */
    for (uint32_t k = 0; k < sys->nnodes; k++)
        tdev[k] = UINT32_MAX;
    for (uint32_t i = 0; i < t->ndevices; i++)
        if (sysdev[i] != UINT32_MAX)
            tdev[sysdev[i]] = i;
    for (uint32_t k = 0; k < sys->nlinks; k++) {
        const struct sys_link *l = &sys->links[k];
        uint32_t dev = tdev[l->b] != UINT32_MAX ? tdev[l->b] : tdev[l->a];
        if (dev == UINT32_MAX)
            continue;           /* a switch-to-host or host-to-host link */
        for (uint8_t dir = 0; dir < 2; dir++) {
            struct link_watch *x = &w[2 * k + dir];
            x->tl = tl;
            x->s = tl_series(tl, dev, (unsigned)l->level);
            x->s->capacity_per_s = 2 * l->bw_bytes_per_s;
            struct flowsrv *srv = net_link_srv(n, k, dir);
            srv->observe = link_observe;
            srv->observe_ctx = x;
        }
    }
    free(tdev);
    return w;
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
    unsigned char *gseen = calloc(t->ngroups ? t->ngroups : 1, 1);
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
            gseen != NULL && !gseen[o->u.coll.group]) {
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

static int run_once(const struct hw_system *sys, const struct trace *t, const struct run_opts *opts,
                    struct run_result *out, struct diag *d)
{
    memset(out, 0, sizeof *out);
    const struct hw_config *cfg = &sys->chip;
    const struct model_ops *mops = model_lookup(cfg->family);
    if (mops == NULL)
        return diag_set(d, DIAG_E_UNKNOWN_NAME, cfg->path, 0, "family",
                        "no model for family '%s'", cfg->family);
    struct sched s;
    memset(&s, 0, sizeof s);
    s.t = t;
    s.out = out;
    s.mops = mops;
    struct run_env env;
    memset(&env, 0, sizeof env);
    struct link_watch *watch = NULL;
    if (membudget_check(0, t->path, d) != 0)
        return -1;
    uint32_t *sysdev = sim_xcalloc(t->ndevices, sizeof *sysdev);
    int rc = map_devices(sys, t, sysdev, d);
    if (rc == 0)
        rc = sched_build(&s, d);
    struct engine e;
    struct flowsrv *shared = NULL;
    int eng_ok = 0;
    uint32_t *dev_off = NULL, *dev_ops = NULL, *local = NULL, *dev_streams = NULL;
    double *ws = NULL, *wbytes = NULL;
    if (rc == 0) {
        if (engine_init(&e, 1024) != 0)
            sim_oom(1024);
        eng_ok = 1;
        s.dev = sim_xcalloc(t->ndevices, sizeof *s.dev);
        /* unified memory: every device's DRAM traffic goes through one server */
        if (cfg_dram(cfg)->unified) {
            shared = sim_xcalloc(1, sizeof *shared);
            double bw = sys->unified_bw_bytes_per_s > 0 ? sys->unified_bw_bytes_per_s
                                                        : cfg_dram(cfg)->bw_bytes_per_s;
            flowsrv_init(shared, &e, "unified_dram", bw * cfg_dram(cfg)->eff_bw);
        }
        env.sys = sys;
        env.sysdev = sysdev;
        env.net = net_create(&e, sys);
        env.shared_dram = shared;
        env.dram = sim_xcalloc(t->ndevices, sizeof *env.dram);
        env.host_over_net = !sys->implied;
        /* each device's ops (CSR), their local index, the streams each
         * device uses and its working set: one pass over the trace */
        uint32_t nd = t->ndevices;
        dev_off = sim_xcalloc((size_t)nd + 1, sizeof *dev_off);
        dev_ops = sim_xcalloc((size_t)t->nops + 1, sizeof *dev_ops);
        local = sim_xcalloc((size_t)t->nops + 1, sizeof *local);
        dev_streams = sim_xcalloc(nd, sizeof *dev_streams);
        ws = sim_xcalloc(nd, sizeof *ws);
        wbytes = sim_xcalloc(nd, sizeof *wbytes);
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
                uint32_t st = t->ops[dev_ops[j]].stream, k = 0;
                while (k < nseen && seen[k] != st)
                    k++;
                if (k == nseen)
                    seen[nseen++] = st;
            }
            dev_streams[dv] = nseen;
        }
        trace_working_sets(t, ws, wbytes);
        env.dev_off = dev_off;
        env.dev_ops = dev_ops;
        env.local = local;
        env.dev_streams = dev_streams;
        env.ws = ws;
        env.wbytes = wbytes;
        if (opts != NULL && opts->tl != NULL)
            watch = watch_links(opts->tl, sys, t, sysdev, env.net);
        for (uint32_t i = 0; i < t->ndevices && rc == 0; i++) {
            s.dev[i] = mops->create(&e, cfg, t, i, opts ? opts->tl : NULL, &env, d);
            if (s.dev[i] == NULL)
                rc = -1;
        }
        env.devs = s.dev;
        env.mops = mops;
        if (rc == 0 && t->ncolls > 0 && (s.coll = coll_create(&e, cfg, t, &env, d)) == NULL)
            rc = -1;
    }
    if (rc == 0) {
        out->nops = t->nops;
        out->ops = sim_xcalloc(t->nops, sizeof *out->ops);
        for (uint32_t i = 0; i < t->nops; i++) /* ops with no predecessor, at t = 0 */
            if (s.waiting[i] == 0)
                sched_release(&e, &s, i);
        uint64_t grows0 = e.q.grows;
        e.max_events = run_budget(opts);
        engine_run(&e);
        out->events = e.events;
        out->queue_grows = e.q.grows - grows0;
        /* a run stopped early left its collectives unfinished, not stuck */
        if (s.coll != NULL && !e.overflow && !e.over_budget && !e.over_memory)
            rc = coll_check_done(s.coll, d);
        if (rc == 0 && e.over_memory && membudget_check(0, t->path, d) == 0)
            SIM_CHECK(!"the memory budget was passed and then was not");  /* peak RSS only grows */
        if (rc == 0 && e.over_memory)
            rc = -1;
        if (rc == 0 && e.over_budget)
            rc = diag_set(d, DIAG_E_RANGE, t->path, 0, "ops",
                          "the run needed more than %llu engine events, its work budget; raise it "
                          "with --max-events N (run) or STRATA_MAX_EVENTS=N (every command)",
                          (unsigned long long)e.max_events);
        if (rc == 0 && e.overflow)
            rc = diag_set(d, DIAG_E_RANGE, t->path, 0, "ops",
                          "the simulated time passed %.3g s on %s: the run is far too long for this "
                          "chip (an op far too large, or very many long ones)",
                          (double)ENGINE_MAX_PS * 1e-12, cfg->name);
    }
    if (rc == 0) {
        for (uint32_t i = 0; i < t->nops; i++) {
            const struct op_result *o = &out->ops[i];
            SIM_CHECK(o->end_ps >= o->start_ps);
            uint64_t sum = 0;
            for (unsigned c = 0; c < CAT_COUNT; c++)
                sum += o->time_ps[c];
            SIM_CHECK(sum == o->end_ps - o->start_ps);
            if (o->end_ps > out->total_ps)
                out->total_ps = o->end_ps;
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
    coll_destroy(s.coll);
    if (s.dev) {
        for (uint32_t i = 0; i < t->ndevices; i++)
            mops->destroy(s.dev[i]);
        free(s.dev);
    }
    if (shared != NULL) {
        flowsrv_destroy(shared);
        free(shared);
    }
    net_destroy(env.net);
    free(watch);
    free(env.dram);
    free(dev_off);
    free(dev_ops);
    free(local);
    free(dev_streams);
    free(ws);
    free(wbytes);
    free(sysdev);
    if (eng_ok)
        engine_destroy(&e);
    free(s.waiting);
    free(s.succ_off);
    free(s.succ);
    free(s.stream_prev);
    if (rc != 0) {
        free(out->ops);
        free(out->dev_time_ps);
        free(out->dev_energy_j);
        memset(out, 0, sizeof *out);
    }
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

/* One run of t on sys with its chip at clock scale s; its hottest device's
 * average power in *w. */
static int run_at(const struct hw_system *sys, double s, const struct trace *t,
                  const struct run_opts *o, struct run_result *out, double *w, struct diag *d)
{
    struct hw_system at = *sys;     /* the nodes and links are read, not changed */
    if (s < 1)
        cfg_at_clock(&at.chip, s);
    int rc = run_once(&at, t, o, out, d);
    if (rc == 0)
        *w = run_hot_power(out, t, NULL);
    return rc;
}

/* A sustained run: a power limit that a run at the config's clock passes
 * pulls the clock down until the hottest device's average power meets it
 * (the power management of NVIDIA and AMD boards, in its steady state;
 * docs/energy.md).  Every device runs at that one clock.
 *
 * Each clock tried is a simulation, so the search is guided by a model of
 * what a clock scale s does to the hottest device: its core-domain energy
 * (pipes, registers, scratchpads, caches) E_c scales by s^2, its DRAM and
 * link energy E_m stays, and its time is T(s) = T(1) (a / s + 1 - a), a
 * the share of the time that runs at the core's pace; so
 *     P(s) = (E_c s^2 + E_m) / T(s) + P_idle.
 * a starts at the share of the device's time it was busy or waiting on a
 * level of the core clock, and is refitted from each run's
 * time, with a factor on P for what the model misses; the model's root,
 * kept inside the bracket the runs have found, is the next clock to try.
 * The search stops at a clock whose power is within RUN_POWER_TOL under
 * the limit (two or three runs, usually), and the result is the fastest
 * clock tried that meets the limit; with a timeline, that clock is run
 * once more to record it. */
#define RUN_MIN_CLOCK 0.25
#define RUN_POWER_TOL 0.02
#define RUN_POWER_ITERS 10

/* The model's power at clock scale s, times the bias b the runs found. */
static double power_model(double ec, double em, double t1, double a, double idle, double b, double s)
{
    return b * ((ec * s * s + em) / (t1 * (a / s + 1.0 - a)) + idle);
}

/* The model's clock for power limit w: P(s) rises with s, so bisection. */
static double power_model_clock(double ec, double em, double t1, double a, double idle, double b,
                                double w)
{
    double lo = RUN_MIN_CLOCK, hi = 1.0;
    for (int i = 0; i < 60; i++) {
        double s = 0.5 * (lo + hi);
        double p = power_model(ec, em, t1, a, idle, b, s);
        if (p > w)
            hi = s;
        else
            lo = s;
    }
    return lo;
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
    struct run_opts quiet = *opts;
    quiet.tl = NULL;
    const double limit = c->power_limit_w;
    double w;
    uint32_t runs = 1;
    int rc = run_at(sys, 1.0, t, &quiet, out, &w, d);
    if (rc != 0)
        return rc;
    if (w <= limit) {
        out->clock_scale = 1.0;
        out->power_runs = runs;
        if (opts->tl == NULL)
            return 0;
        run_result_free(out);
        rc = run_at(sys, 1.0, t, opts, out, &w, d);     /* again, to record the timeline */
        out->clock_scale = 1.0;
        out->power_runs = runs;
        return rc;
    }
    /* the hottest device's energy at the config's clock, by domain */
    uint32_t hot;
    (void)run_hot_power(out, t, &hot);
    double t1 = (double)out->total_ps * 1e-12, ec = 0, em = 0;
    for (uint32_t i = 0; i < out->nops; i++) {
        if (t->ops[i].device != hot)
            continue;
        double core, e = op_energy(c, &out->ops[i], NULL, &core);
        ec += core;
        em += e - core;
    }
    /* a's first guess: the share of the device's time its pipes were busy
     * or it waited on a level of the core clock (shared memory, caches) */
    const double *row = out->dev_time_ps + (size_t)hot * (CAT_COUNT + 1);
    double core_ps = row[CAT_BUSY];
    for (unsigned l = 0; l < c->nlevels; l++)
        if (c->level[l].kind == LK_SCRATCHPAD || c->level[l].kind == LK_CACHE)
            core_ps += row[CAT_STALL + l];
    double a = t1 > 0 ? core_ps * 1e-12 / t1 : 1.0;
    a = a < 0.0 ? 0.0 : a > 1.0 ? 1.0 : a;
    /* aim inside the tolerance band, not at its edge */
    const double aim = limit * (1.0 - 0.5 * RUN_POWER_TOL);
    double ok = 0, over = 1.0;      /* fastest clock meeting the limit; slowest passing it */
    double b = 1.0;                 /* what the model misses, as a factor on its power */
    double s = power_model_clock(ec, em, t1, a, c->idle_w, b, aim), at = 1.0;
    for (uint32_t it = 0; it < RUN_POWER_ITERS; it++) {
        if (!(s > ok && s < over))
            s = ok > 0 ? 0.5 * (ok + over) : 0.5 * (RUN_MIN_CLOCK + over);
        run_result_free(out);
        if ((rc = run_at(sys, s, t, &quiet, out, &w, d)) != 0)
            return rc;
        runs++;
        at = s;
        if (w <= limit) {
            ok = s;
            if (w >= limit * (1.0 - RUN_POWER_TOL) || s <= RUN_MIN_CLOCK)
                break;
        } else {
            over = s;
        }
        double ts = (double)out->total_ps * 1e-12;
        if (s < 1.0 && ts > t1)
            a = (ts / t1 - 1.0) / (1.0 / s - 1.0);
        a = a < 0.0 ? 0.0 : a > 1.0 ? 1.0 : a;
        b = w / power_model(ec, em, t1, a, c->idle_w, 1.0, s);
        double next = power_model_clock(ec, em, t1, a, c->idle_w, b, aim);
        if (fabs(next - s) < 1e-6)
            break;              /* the model has nothing more to say */
        s = next;
        if (s <= RUN_MIN_CLOCK && ok == 0)
            s = RUN_MIN_CLOCK;
    }
    int floor = ok == 0;
    if (floor)
        ok = RUN_MIN_CLOCK;         /* the floor: still over the limit there */
    if (at != ok || opts->tl != NULL) {
        run_result_free(out);
        if ((rc = run_at(sys, ok, t, opts, out, &w, d)) != 0)
            return rc;
        runs += at != ok;           /* a rerun only to record the timeline is not a search's */
    }
    out->clock_scale = ok;
    out->power_runs = runs;
    out->power_floor = floor;
    return 0;
}

void run_result_free(struct run_result *r)
{
    free(r->ops);
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

const char *run_bound_name(const struct hw_config *c, const struct op_result *r)
{
    unsigned best = CAT_BUSY;
    for (unsigned k = 0; k < CAT_COUNT; k++)
        if (r->time_ps[k] > r->time_ps[best])
            best = k;
    return best == CAT_BUSY ? "compute" : run_cat_name(c, best);
}
