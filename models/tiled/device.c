/* device.c: the tiled model's device: a GPU (SMs, tensor and vector pipes,
 * shared memory, caches, DRAM, PCIe), or a TPU or NPU whose units are
 * systolic arrays (compute.systolic in the config; same code).
 *
 * What it models.  Every op is lowered to one or more kernels the way a GPU
 * library would run it (lower.c), and each kernel runs as waves of thread
 * blocks (CTAs) on the device's servers (runner.c).  This file builds the
 * device: one bandwidth server per memory level (DRAM, each cache level,
 * shared memory, the host link each way) and per pipe (matrix, vector),
 * all shared by every op running on the device, so concurrent streams
 * contend for DRAM, the caches and the pipes.  It lowers every op of its
 * device up front (the run never allocates), sizes the cache-reuse scratch
 * for the largest kernel, finds the system routes of copies that leave the
 * device, and admits at most TILED_MAX_RUNNING ops at once (the rest wait in
 * FIFO order).
 *
 * Deliberately ignored: instruction issue limits, warp scheduling, bank
 * conflicts, L1 (loads are counted at L2), cross-op L2 reuse (each op
 * starts with a cold L2), DVFS and power limits (a config can model a
 * power-limited part with its own clock and efficiencies), SM partitioning
 * between concurrent kernels (they share the pipe servers instead).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tiled.h"

#define TILED_MAX_WAVES (1u << 20)   /* waves of tiles in one kernel: 200x a 65536^3 GEMM
                                    * (1214 on an A100) or a 131072-token attention of
                                    * 8 x 64 heads (4855); bounds absurd runs to seconds */
/* a panel's last wave is an int32_t (tdev.panel_last); a kernel runs up to
 * twice its waves while collectives hold half the units */
_Static_assert(2 * (uint64_t)TILED_MAX_WAVES + 1 < INT32_MAX, "panel_last holds a wave");
#define TILED_MAX_PANELS (1u << 26)  /* operand panels in one kernel */

static const struct comp_ops tdev_comp_ops = {"gpu", runner_handle};

/* ---------------------------------------------------------------- model ops */

static void tdev_destroy(void *dev)
{
    struct tdev *g = dev;
    if (g == NULL)
        return;
    struct flowsrv *srv[] = {&g->mpipe, &g->vpipe, &g->sfu};
    for (size_t i = 0; i < sizeof srv / sizeof srv[0]; i++)
        flowsrv_destroy(srv[i]);
    for (uint32_t i = 0; g->lv != NULL && i < 2 * g->cfg->nlevels; i++)
        flowsrv_destroy(&g->lv[i]);     /* a level without a server: nothing to free */
    /* the rest is in the engine's arena, freed with it */
}

static void tdev_observe(void *ctx, uint64_t t0, uint64_t t1, double amount)
{
    struct tdev_watch *w = ctx;
    tl_add(w->tl, w->s, t0, t1, amount);
}

/* Which servers level i of chip c gets: none for the registers (a
 * capacity, not a bandwidth) and for a link to peers (the system's links
 * carry that, net.h), one a direction for the host link, one for any other
 * level. */
static unsigned level_dirs(const struct hw_config *c, unsigned i)
{
    const struct hw_level *L = &c->level[i];
    if (L->kind == LK_REGISTERS || (L->kind == LK_LINK && (int)i != c->lv_host))
        return 0;
    return (int)i == c->lv_host ? 2 : 1;
}

/* Let the timeline see what each server serves: a level's bytes on its
 * series (a link's two directions on one, against twice its bandwidth),
 * the pipes' FLOPs on theirs. */
static void tdev_watch_servers(struct tdev *g)
{
    const struct hw_config *c = g->cfg;
    struct { struct flowsrv *srv; unsigned which; double cap; } m[sizeof g->watch / sizeof g->watch[0]];
    size_t nm = 0;
    for (unsigned i = 0; i < c->nlevels; i++) {
        unsigned dirs = level_dirs(c, i);
        for (unsigned dir = 0; dir < dirs; dir++, nm++) {
            SIM_CHECK(nm + 2 < sizeof m / sizeof m[0]);
            m[nm].srv = (int)i == c->lv_dram ? g->dramp : tdev_lv(g, (int)i, dir);
            m[nm].which = i;
            m[nm].cap = dirs * c->level[i].bw_bytes_per_s;
        }
    }
    m[nm].srv = &g->mpipe;
    m[nm].which = TL_SERIES_MATRIX;
    m[nm++].cap = g->mpipe.capacity * 1e12;
    m[nm].srv = &g->vpipe;
    m[nm].which = TL_SERIES_VECTOR;
    m[nm++].cap = g->vpipe.capacity * 1e12;
    for (size_t i = 0; i < nm; i++) {
        g->watch[i].tl = g->tl;
        g->watch[i].s = tl_series(g->tl, g->device, m[i].which);
        g->watch[i].s->capacity_per_s = m[i].cap;
        m[i].srv->observe = tdev_observe;
        m[i].srv->observe_ctx = &g->watch[i];
    }
}

/* Kernel p is a copy that leaves the device over the system's links (a
 * p2p copy, or a host copy on a system file): it takes a route of its own. */
static int kernel_routed(const struct tdev *g, const struct kplan *p)
{
    return p->dma && (p->dma_level == g->cfg->lv_host || p->dma_net) &&
           (p->dma_net || g->env->host_over_net);
}

/* The system paths of device's copies that leave it: p2p copies always,
 * host copies when the run is on a system file.  0, or -1 with *d (no path). */
static int tdev_routes(struct tdev *g, struct diag *d)
{
    const struct trace *t = g->t;
    struct run_env *env = g->env;
    uint32_t cap = 0;
    for (uint32_t j = env->dev_off[g->device]; j < env->dev_off[g->device + 1]; j++) {
        uint32_t i = env->dev_ops[j];
        const struct lowref *lr = &g->low[j - env->dev_off[g->device]];
        for (uint32_t k = 0; lr->local && k < lr->nk; k++) {
            struct kplan *p = &g->kpool[lr->off + k];
            if (p->routed || !kernel_routed(g, p))
                continue;       /* done, not a copy, or over the chip's own host link */
            if (g->nroutes == cap) {
                uint32_t nc = cap ? 2 * cap : 8;
                g->route = arena_grow(&g->e->arena, g->route, cap * sizeof *g->route,
                                      nc * sizeof *g->route);
                cap = nc;
            }
            struct sys_route *rt = &g->route[g->nroutes];
            uint32_t from = env->sysdev[g->device];
            int rc = p->dma_net ? sys_route_pxn(env->sys, from, env->sysdev[p->peer], rt, env->net->scratch)
                                : sys_route_host(env->sys, from, rt, env->net->scratch);
            if (rc != 0 || rt->nhops == 0) {
                char field[48];
                snprintf(field, sizeof field, "ops[%u]", i);
                return diag_set(d, DIAG_E_RANGE, t->path, t->ops[i].line, field,
                                "no path of at most %d links from %s to %s in %s", SYS_MAX_HOPS,
                                t->devices[g->device],
                                p->dma_net ? t->devices[p->peer] : "a host", env->sys->path);
            }
            p->dma_net = 1;
            p->routed = 1;
            p->route = g->nroutes++;
            p->dma_level = (uint8_t)env->sys->links[rt->link[0]].level;
        }
    }
    return 0;
}

/* What lower_op reads of an op: its kind, type, pass, fixed time and
 * shape.  The rest (id, name, device, stream, deps, line, measured time,
 * kernel name) is left out, so two ops of one shape have equal keys. */
struct lkey {
    uint32_t kind, dtype, pass, pad;
    double fixed_s;
    union op_shape u;
};

static void lower_key(const struct op *o, struct lkey *key)
{
    memset(key, 0, sizeof *key);
    key->kind = (uint32_t)o->kind;
    key->dtype = (uint32_t)o->dtype;
    key->pass = (uint32_t)o->pass;
    key->fixed_s = o->fixed_s;
    key->u = o->u;
}

static uint64_t lower_hash(const struct lkey *key)
{
    /* 8 bytes a step (the key is a multiple of 8 bytes, padding zeroed) */
    const unsigned char *p = (const unsigned char *)key;
    uint64_t h = UINT64_C(1469598103934665603);
    for (size_t i = 0; i + 8 <= sizeof *key; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * UINT64_C(0x100000001b3);
        h ^= h >> 32;
    }
    return h ^ (h >> 29);
}

/* A level's server name and rate: the level's bandwidth times its
 * efficiency (1 where the loader reads none), the host link's at its
 * nominal rate (each direction). */
static const char *level_srv_name(const struct hw_config *c, unsigned i, unsigned dir)
{
    if ((int)i == c->lv_dram)
        return "dram";
    if ((int)i == c->lv_smem)
        return "smem";
    if ((int)i == c->lv_host)
        return dir ? "host_d2h" : "host_h2d";
    return c->level[i].name;
}

/* The device's servers: the memory levels' in level order (a new kind of
 * level gets one here without a change), then the pipes. */
static void tdev_servers(struct tdev *g, struct engine *e, struct run_env *env)
{
    const struct hw_config *cfg = g->cfg;
    g->lv = arena_calloc(&e->arena, 2 * (size_t)cfg->nlevels, sizeof *g->lv);
    for (unsigned i = 0; i < cfg->nlevels; i++)
        for (unsigned dir = 0; dir < level_dirs(cfg, i); dir++)
            flowsrv_init(tdev_lv(g, (int)i, dir), e, level_srv_name(cfg, i, dir), level_rate(&cfg->level[i]));
    g->dramp = env->shared_dram != NULL ? env->shared_dram : tdev_lv(g, cfg->lv_dram, 0);
    env->dram[g->device] = g->dramp;
    for (uint32_t ci = 0; ci < cfg->ncaches; ci++)
        g->repl[ci] = 1.0;
    double mpeak = 0, vpeak = 0;
    for (unsigned i = 0; i < DT_COUNT; i++) {
        mpeak = dmax(mpeak, cfg->matrix_flops_per_cycle[i]);
        vpeak = dmax(vpeak, cfg->vector_flops_per_cycle[i]);
    }
    /* pipe servers: capacity generous enough for any dtype; the per-flow
     * cap (set per wave from the op's dtype) is what binds */
    flowsrv_init(&g->mpipe, e, "matrix", mpeak * cfg->clock_hz * cfg->units);
    flowsrv_init(&g->vpipe, e, "vector", vpeak * cfg->clock_hz * cfg->units);
    flowsrv_init(&g->sfu, e, "sfu", cfg->sfu_ops_per_cycle * cfg->clock_hz * cfg->units);
}

/* The largest reuse scratch a device's kernels need: operand panels,
 * waves and CTAs of a wave. */
struct scratch_size {
    size_t panels, waves, wave_ctas;
};

/* Grows *z for kernel p of op i: 0, or -1 with *d when the kernel is too
 * large for the L2 reuse model. */
static int kernel_scratch(const struct tdev *g, const struct kplan *p, uint32_t i,
                          struct scratch_size *z, struct diag *d)
{
    const struct hw_config *cfg = g->cfg;
    const struct trace *t = g->t;
    if (p->dma || p->fixed)
        return 0;
    double slots = (double)cfg->units * p->ctas_per_unit;
    double npd = (double)p->gb * ((double)p->gm + (double)p->gn);
    double nwd = ceil((double)p->gm * (double)p->gn * (double)p->gb / slots);
    /* the L2 reuse model keeps a word per operand panel and per
     * wave; an op past these sizes is no real kernel */
    if (npd > TILED_MAX_PANELS || nwd > TILED_MAX_WAVES) {
        if (nwd > TILED_MAX_WAVES)
            diag_set(d, DIAG_E_RANGE, t->path, (int)t->ops[i].line, op_id(t, &t->ops[i]),
                     "too large to simulate on %s: %.3g waves of %s tiles (at most %.3g)",
                     cfg->name, nwd, p->tile, (double)TILED_MAX_WAVES);
        else
            diag_set(d, DIAG_E_RANGE, t->path, (int)t->ops[i].line, op_id(t, &t->ops[i]),
                     "too large to simulate on %s: %.3g operand panels of %s tiles (at most %.3g)",
                     cfg->name, npd, p->tile, (double)TILED_MAX_PANELS);
        return -1;
    }
    size_t np = (size_t)npd, nw = (size_t)nwd;
    double wc = dmin(slots, (double)p->gm * (double)p->gn * (double)p->gb);
    if (wc > (double)z->wave_ctas)
        z->wave_ctas = (size_t)wc;
    if (np > z->panels)
        z->panels = np;
    if (nw > z->waves)
        z->waves = nw;
    return 0;
}

/* The shapes a run's devices have lowered (env->model_shared), so that
 * each is lowered once a run, not once a device: the replicas of a
 * data-parallel run lower the same shapes on the same chip, and lowering
 * (the GEMM tile search) was a sixth of loading a 1,024-GPU step.
 * lower_op reads only the op's fields in its key, the chip and the spill
 * share, so equal keys lower to equal kernels.  In the engine's arena. */
struct lower_shared {
    struct lsh_ent {
        const struct hw_config *cfg;
        uint64_t spill_bits;
        uint64_t hash;
        struct lkey key;
        uint32_t off, nk;       /* kernels at k[off] */
        double flops;
    } *ent;
    uint32_t n, cap;
    uint32_t *slot;             /* entry index + 1, open addressing; 0 = empty */
    uint32_t mask;
    struct kplan *k;
    uint32_t nk, kcap;
    struct wave_memo *memo;     /* remembered reuse (runner.c), by shared kernel, for every
                                 * device: a replica replays what the first one walked */
    uint32_t memo_mask;         /* its slots - 1 */
};

/* Where an entry of key hash h, chip cfg and spill share bits sb starts
 * its probe. */
static uint64_t lsh_hash(uint64_t h, uint64_t sb, const struct hw_config *cfg)
{
    return h ^ (sb * UINT64_C(0x9e3779b97f4a7c15)) ^ ((uint64_t)(uintptr_t)cfg >> 4);
}

/* The lowering of op o (key, hash) on g's chip at spill_frac, lowered on
 * its first use in the run. */
static const struct lsh_ent *lower_shared_get(struct tdev *g, const struct op *o,
                                              const struct lkey *key, uint64_t h,
                                              double spill_frac)
{
    struct arena *a = &g->e->arena;
    struct lower_shared *ls = g->env->model_shared;
    if (ls == NULL) {
        ls = g->env->model_shared = arena_calloc(a, 1, sizeof *ls);
        ls->cap = 16;
        ls->ent = arena_calloc(a, ls->cap, sizeof *ls->ent);
        ls->mask = 2 * ls->cap - 1;
        ls->slot = arena_calloc(a, (size_t)ls->mask + 1, sizeof *ls->slot);
    }
    uint64_t sb;
    memcpy(&sb, &spill_frac, sizeof sb);
    uint64_t hh = lsh_hash(h, sb, g->cfg);
    uint32_t q = (uint32_t)(hh & ls->mask);
    for (; ls->slot[q] != 0; q = (q + 1) & ls->mask) {
        const struct lsh_ent *en = &ls->ent[ls->slot[q] - 1];
        if (en->hash == h && en->cfg == g->cfg && en->spill_bits == sb &&
            memcmp(&en->key, key, sizeof *key) == 0)
            return en;
    }
    struct lowered L;
    memset(&L, 0, sizeof L);    /* lower_op fills a zeroed plan */
    lower_op(g->cfg, o, spill_frac, &L);
    if (ls->n == ls->cap) {     /* setup only: the run never allocates */
        ls->ent = arena_grow(a, ls->ent, ls->cap * sizeof *ls->ent, 2 * ls->cap * sizeof *ls->ent);
        ls->cap *= 2;
        ls->mask = 2 * ls->cap - 1;
        ls->slot = arena_calloc(a, (size_t)ls->mask + 1, sizeof *ls->slot);
        for (uint32_t e = 0; e < ls->n; e++) {
            const struct lsh_ent *en = &ls->ent[e];
            uint32_t r = (uint32_t)(lsh_hash(en->hash, en->spill_bits, en->cfg) & ls->mask);
            while (ls->slot[r] != 0)
                r = (r + 1) & ls->mask;
            ls->slot[r] = e + 1;
        }
        q = (uint32_t)(hh & ls->mask);
        while (ls->slot[q] != 0)
            q = (q + 1) & ls->mask;
    }
    if (ls->nk + L.nk > ls->kcap) {
        uint32_t kc = ls->kcap ? 2 * ls->kcap : 16;
        while (kc < ls->nk + L.nk)
            kc *= 2;
        ls->k = arena_grow(a, ls->k, ls->nk * sizeof *ls->k, kc * sizeof *ls->k);
        ls->kcap = kc;
    }
    struct lsh_ent *en = &ls->ent[ls->n];
    en->cfg = g->cfg;
    en->spill_bits = sb;
    en->hash = h;
    en->key = *key;
    en->off = ls->nk;
    en->nk = L.nk;
    en->flops = L.flops;
    memcpy(ls->k + ls->nk, L.k, L.nk * sizeof L.k[0]);
    ls->nk += L.nk;
    ls->slot[q] = ++ls->n;
    return en;
}

/* Lowers op i (the device's j-th) into the kernel pool, its shape's
 * first time on this device; sizes *z for its kernels.  0, or -1 with *d. */
static int tdev_lower_new(struct tdev *g, uint32_t i, uint32_t j, const struct lkey *key,
                          uint64_t h, double spill_frac, uint32_t *kcap,
                          struct scratch_size *z, struct diag *d)
{
    const struct lsh_ent *en = lower_shared_get(g, &g->t->ops[i], key, h, spill_frac);
    const struct lower_shared *ls = g->env->model_shared;
    g->low[j].soff = en->off;
    g->low[j].nk = en->nk;
    g->low[j].flops = en->flops;
    g->low[j].off = 0;
    g->low[j].local = 0;
    g->nkdist += en->nk;
    /* a copy that leaves the device over the system's links takes a route
     * of its own (tdev_routes): those kernels are the device's copies;
     * the rest are the shared ones, read in place */
    for (uint32_t k = 0; k < en->nk; k++)
        g->low[j].local |= (uint32_t)kernel_routed(g, &ls->k[en->off + k]);
    if (g->low[j].local) {
        if (g->nkpool + en->nk > *kcap) {     /* setup only: the run never allocates */
            uint32_t kc = *kcap ? 2 * *kcap : 1;
            while (kc < g->nkpool + en->nk)
                kc *= 2;
            g->kpool = arena_grow(&g->e->arena, g->kpool, g->nkpool * sizeof *g->kpool,
                                  kc * sizeof *g->kpool);
            *kcap = kc;
        }
        g->low[j].off = g->nkpool;
        memcpy(g->kpool + g->nkpool, ls->k + en->off, en->nk * sizeof *g->kpool);
        g->nkpool += en->nk;
    }
    for (uint32_t k = 0; k < en->nk; k++)
        if (kernel_scratch(g, &ls->k[en->off + k], i, z, d) != 0)
            return -1;
    return 0;
}

/* Lower every op of this device up front (the run never allocates), each
 * shape once, and size the reuse scratch for the largest kernel: 0, or -1
 * with *d (an attention impl the chip cannot run, a kernel too large). */
static int tdev_lower_all(struct tdev *g, double spill_frac, struct scratch_size *z,
                          struct diag *d)
{
    const struct hw_config *cfg = g->cfg;
    const struct trace *t = g->t;
    const struct run_env *env = g->env;
    uint32_t first = env->dev_off[g->device], nlocal = env->dev_off[g->device + 1] - first;
    uint32_t kcap = 0, mcap = 16;
    while (mcap < 2 * (uint64_t)nlocal + 2)
        mcap *= 2;
    /* 16 bytes a slot: the key is re-derived from the op that first had
     * it (a copy of the op per slot cost 352 MB a million ops) */
    struct memo { uint64_t hash; uint32_t op, local_plus1; } *memo =
        sim_xcalloc(mcap, sizeof *memo);
    int rc = 0;
    for (uint32_t j = 0; j < nlocal && rc == 0; j++) {
        uint32_t i = env->dev_ops[first + j];
        if (t->ops[i].kind == OP_COLLECTIVE)
            continue;
        char msg[320];
        if (t->ops[i].kind == OP_ATTENTION && lower_attn_check(cfg, &t->ops[i], msg, sizeof msg) != 0) {
            char field[48];
            snprintf(field, sizeof field, "ops[%u].impl", i);
            diag_set(d, DIAG_E_UNSUPPORTED, t->path, (int)t->ops[i].line, field, "%s", msg);
            rc = -1;
            break;
        }
        if (t->ops[i].kind == OP_GEMM && cfg->lv_dec < 0 && wfmt_decoded(t->ops[i].u.gemm.weights) != WF_NONE) {
            char field[48];
            snprintf(field, sizeof field, "ops[%u].weights", i);
            diag_set(d, DIAG_E_UNSUPPORTED, t->path, (int)t->ops[i].line, field,
                     "'%s' weights are entropy-coded and %s has no decoder level to read them "
                     "(a level of kind decoder between its caches and its DRAM: docs/lazyweights.md)",
                     wfmt_name(t->ops[i].u.gemm.weights), cfg->name);
            rc = -1;
            break;
        }
        /* ops of one shape lower to the same kernels: lower each shape
         * once and share its kernels (a million-op trace of a few shapes) */
        struct lkey key, seen;
        lower_key(&t->ops[i], &key);
        uint64_t h = lower_hash(&key);
        uint32_t hs = (uint32_t)(h & (mcap - 1));
        int found = 0;
        for (; memo[hs].local_plus1 != 0; hs = (hs + 1) & (mcap - 1)) {
            if (memo[hs].hash != h)
                continue;
            lower_key(&t->ops[memo[hs].op], &seen);
            if (memcmp(&seen, &key, sizeof key) == 0) {
                found = 1;
                break;
            }
        }
        if (found) {
            g->low[j] = g->low[memo[hs].local_plus1 - 1];
            continue;
        }
        memo[hs].hash = h;
        memo[hs].op = i;
        memo[hs].local_plus1 = j + 1;
        rc = tdev_lower_new(g, i, j, &key, h, spill_frac, &kcap, z, d);
    }
    free(memo);
    return rc;
}

static void *tdev_create(struct engine *e, const struct hw_config *cfg, const struct trace *t,
                        uint32_t device, struct timeline *tl, struct run_env *env,
                        struct diag *d)
{
    /* the device's state lives in the run's arena (arena.h): freed with the engine */
    struct tdev *g = arena_calloc(&e->arena, 1, sizeof *g);
    g->cfg = cfg;
    g->t = t;
    g->device = device;
    g->e = e;
    g->host_issued_ps = cfg->host_step_ps;
    g->comp = engine_register(e, &tdev_comp_ops, g);
    g->env = env;
    tdev_servers(g, e, env);
    g->tl = tl;
    if (tl != NULL)
        tdev_watch_servers(g);
    uint32_t first = env->dev_off[device], nlocal = env->dev_off[device + 1] - first;
    g->low = arena_calloc(&e->arena, nlocal, sizeof *g->low);
    /* more weights and KV than the device holds: the rest streams in */
    double wbytes = env->wbytes[device], ws = env->ws[device];
    double over = ws - (double)cfg_dram(cfg)->capacity_bytes;
    double spill_frac = over > 0 && wbytes > 0 ? dmin(1.0, over / wbytes) : 0;
    g->waitq_cap = nlocal ? nlocal : 1;
    g->waitq = arena_calloc(&e->arena, g->waitq_cap, sizeof *g->waitq);
    g->waitq_res = arena_calloc(&e->arena, g->waitq_cap, sizeof *g->waitq_res);
    g->nrun = env->dev_streams[device] < TILED_MAX_RUNNING ? env->dev_streams[device] : TILED_MAX_RUNNING;
    if (g->nrun == 0)
        g->nrun = 1;
    g->run = arena_calloc(&e->arena, g->nrun, sizeof *g->run);
    struct scratch_size z = {1, 1, 1};
    if (tdev_lower_all(g, spill_frac, &z, d) != 0 || tdev_routes(g, d) != 0) {
        tdev_destroy(g);
        return NULL;
    }
    if (env->model_shared != NULL)
        g->ks = &((struct lower_shared *)env->model_shared)->k;
    g->panel_last = arena_calloc(&e->arena, z.panels, sizeof *g->panel_last);
    /* the panels a wave fetched, only where a cache has several instances
     * (reuse_wave's grouped walk): a 1,024-GPU H100 run saved 53 MB */
    int multi = 0;
    for (uint32_t ci = 0; ci < cfg->ncaches; ci++)
        multi |= cfg->level[cfg->lv_cache[ci]].instances > 1;
    if (multi) {
        g->panel_slot = arena_calloc(&e->arena, z.panels, sizeof *g->panel_slot);
        /* a wave fetches at most two panels per CTA, and holds at most
         * every unit's resident CTAs (or all of the kernel's, if fewer) */
        g->wpanel = arena_calloc(&e->arena, 2 * z.wave_ctas, sizeof *g->wpanel);
    }
    /* kernels may run on half the units while collectives hold the rest
     * (tdev_avail_units): up to twice the waves, plus one */
    g->wave_cum = arena_calloc(&e->arena, 2 * z.waves + 1, sizeof *g->wave_cum);
    /* remembered reuse (runner.c), where some kernel plan runs more than
     * once: a slot a plan of the pool, up to TILED_MEMO_SLOTS.
     * STRATA_REUSE_MEMO=0: none, every group walked (to show the memo
     * changes nothing: tests/test_unit_memo.c) */
    uint64_t launches = 0;
    for (uint32_t j = 0; j < nlocal; j++)
        launches += g->low[j].nk;
    const char *memo_env = getenv("STRATA_REUSE_MEMO");
    struct lower_shared *ls = env->model_shared;
    if (ls != NULL && launches > g->nkdist && !(memo_env != NULL && strcmp(memo_env, "0") == 0)) {
        /* one memo for the run, kept by shared kernel: a kernel's walks
         * give the same bytes on every device of its chip (a pure
         * function of the plan, the chip and the units), so a
         * data-parallel run walks each kernel once, not once a replica */
        if (ls->memo == NULL) {
            /* room for this device's kernels on every device (the run's
             * are not all lowered yet), up to TILED_MEMO_SLOTS */
            uint32_t slots = 1;
            while (slots < TILED_MEMO_SLOTS && slots < (uint64_t)g->nkdist * t->ndevices)
                slots *= 2;
            ls->memo = arena_calloc(&e->arena, slots, sizeof *ls->memo);
            ls->memo_mask = slots - 1;
        }
        g->memo = ls->memo;
        g->memo_mask = ls->memo_mask;
        g->rec = arena_calloc(&e->arena, 1, sizeof *g->rec);
    }
    return g;
}

void tdev_start_op(void *dev, uint32_t op_index, struct op_result *res,
                         model_done_fn done, void *ctx)
{
    struct tdev *g = dev;
    g->done = done;
    g->ctx = ctx;
    struct runner *r = NULL;
    for (uint32_t i = 0; i < g->nrun; i++) {
        if (!g->run[i].in_use) {
            r = &g->run[i];
            break;
        }
    }
    if (r == NULL) {
        SIM_CHECK(g->waitq_n < g->waitq_cap);
        uint32_t at = (g->waitq_head + g->waitq_n) % g->waitq_cap;
        g->waitq[at] = op_index;
        g->waitq_res[at] = res;
        g->waitq_n++;
        return;
    }
    memset(r, 0, sizeof *r);
    r->in_use = 1;
    r->g = g;
    r->op = op_index;
    r->res = res;
    r->done = done;
    r->ctx = ctx;
    r->low = &g->low[g->env->local[op_index]];
    r->kern = 0;
    r->p = NULL;
    res->start_ps = g->e->now_ps;
    runner_mark(r, g->e->now_ps);
    const struct lowref *L = r->low;
    /* a copy per op: snprintf here was a tenth of a million-op run */
    const char *tile = L->nk > 0 ? tdev_kernel(g, L, 0)->tile : "";
    size_t tn = strnlen(tile, sizeof res->tile - 1);
    memcpy(res->tile, tile, tn);
    res->tile[tn] = '\0';
    runner_next_kernel(r);
}

/* NCCL's kernels run one CTA per channel on the SMs, and a GEMM's CTAs
 * (hundreds of KB of shared memory) do not fit beside them: while a
 * collective runs, kernels that start get the device's SMs less its
 * channels.  A TPU's or NPU's collectives run on DMA engines: nothing held. */
static void tdev_hold_units(void *dev, int32_t delta)
{
    struct tdev *g = dev;
    if (g->cfg->sa_rows)
        return;
    SIM_CHECK(delta >= 0 || g->held_units >= (uint32_t)-delta);
    g->held_units = (uint32_t)((int64_t)g->held_units + delta);
}

const struct model_ops tiled_model_ops = {"gpu", tdev_create, tdev_start_op, tdev_destroy, tdev_hold_units};
