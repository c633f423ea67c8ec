/* reuse.c: the tiled model's cache reuse between the CTAs of a kernel.
 *
 * What it models.  Within a wave, CTAs that share an operand panel (same
 * row block of A or column block of B) fetch it from DRAM once.  Across
 * waves, a panel is still in L2 if the bytes touched since its last use
 * fit in the usable L2 (an LRU stack-distance test).  Streaming kernels
 * have no reuse; multi-pass row kernels read their rows again from DRAM
 * (runner.c adds those).  The result is bytes per level per wave; runner.c
 * puts them on the servers.
 *
 * This runs once per CTA of every wave, the hottest code of a run: the loop
 * (wave_reuse_loop) is `static inline` and has a copy specialised for one
 * cache of one instance; keep it in this file with its caller.
 */
#include "tiled.h"

/* CTA index -> (batch, row block, column block), grouped raster order:
 * `swizzle` row blocks are walked column by column, which keeps the B
 * panels of a wave few (CUTLASS threadblock swizzle / Triton GROUP_M). */
struct cta_pos {
    uint64_t b, first, rows, li, j; /* i = first + li */
};

static void cta_coords(const struct kplan *p, uint64_t idx, struct cta_pos *c)
{
    uint64_t per_b = p->gm * p->gn;
    c->b = idx / per_b;
    uint64_t t = idx % per_b;
    uint64_t sw = p->swizzle ? p->swizzle : 1;
    c->first = t / (sw * p->gn) * sw;
    c->rows = umin(sw, p->gm - c->first);
    uint64_t local = t % (sw * p->gn);
    c->li = local % c->rows;
    c->j = local / c->rows;
}

/* The next CTA in launch order (no division: this runs once per CTA). */
static void cta_next(const struct kplan *p, struct cta_pos *c)
{
    if (++c->li < c->rows)
        return;
    c->li = 0;
    if (++c->j < p->gn)
        return;
    c->j = 0;
    uint64_t sw = p->swizzle ? p->swizzle : 1;
    c->first += sw;
    if (c->first >= p->gm) {
        c->first = 0;
        c->b++;
    }
    c->rows = umin(sw, p->gm - c->first);
}

/* Fills the wave's load bytes per cache level: l2 = what the wave's CTAs
 * read from the first cache (all their operand bytes), miss[i] = what
 * misses cache i and goes on to the next cache or, for the last, DRAM.
 * Panels: A (b, i) and B (b, j).
 *
 * One LRU stack-distance rule serves every cache: a panel is still in a
 * cache if the bytes touched since its last use fit in that cache's usable
 * capacity, so the misses of a larger (outer) cache are a subset of an
 * inner one's.  A cache with several instances (scope group: one L2 per
 * MI300X XCD) holds, in each instance, what its own units read.  CTAs are
 * dealt round-robin over the instances, so a panel that k CTAs of the wave
 * read is fetched into min(k, instances) of them: that many times its bytes
 * at the next level.  The copies also crowd each other out, so the reuse
 * test counts the capacity of all instances divided by the replication the
 * previous wave saw (g->repl, 1 at the start of a kernel). */
static inline void wave_reuse_loop(struct tdev *g, const struct kplan *p, uint64_t wave,
                                   uint64_t c0, uint64_t c1, double *miss, const double *cap,
                                   const uint32_t nc, const int grouped)
{
    double steps = p->ksteps;
    const double sz[2] = {p->a_step * steps, p->b_step * steps};
    const int shared[2] = {p->gn > 1, p->gm > 1};
    uint64_t na = p->gb * p->gm;
    double touched = 0, all = 0;    /* all: bytes that miss every cache */
    double lm[HW_MAX_LEVELS] = {0}; /* misses per cache, kept local (miss may alias g's arrays) */
    uint32_t nlist = 0;
    double prev_cum = wave > 0 ? g->wave_cum[wave - 1] : 0;
    struct cta_pos pos;
    cta_coords(p, c0, &pos);
    /* a panel nobody else reads streams from DRAM: its bytes, per CTA */
    double alone = (sz[0] > 0 && !shared[0] ? sz[0] : 0) + (sz[1] > 0 && !shared[1] ? sz[1] : 0);
    const int look[2] = {sz[0] > 0 && shared[0], sz[1] > 0 && shared[1]};
    for (uint64_t c = c0; c < c1; c++, cta_next(p, &pos)) {
        all += alone;
        touched += alone;
        for (int k = 0; k < 2; k++) {
            if (!look[k])
                continue;
            uint64_t id = k == 0 ? pos.b * p->gm + pos.first + pos.li : na + pos.b * p->gn + pos.j;
            int64_t last = g->panel_last[id];
            if (last == (int64_t)wave) {
                if (grouped)        /* one more reader of it in this wave */
                    g->wpanel[g->panel_slot[id]].readers++;
                continue;           /* another CTA of this wave already fetched it */
            }
            touched += sz[k];
            uint32_t missed = 0;    /* bit ci: it missed cache ci */
            if (last < 0) {
                all += sz[k];
                missed = ~0u;
            } else {
                double since = prev_cum - (last > 0 ? g->wave_cum[last - 1] : 0);
                for (uint32_t ci = 0; ci < nc; ci++)
                    if (since + sz[k] > cap[ci]) {
                        lm[ci] += sz[k];
                        missed |= 1u << ci;
                    }
            }
            g->panel_last[id] = (int32_t)wave;
            if (grouped) {
                g->panel_slot[id] = nlist;
                g->wpanel[nlist++] = (struct wpanel){sz[k], missed, 1};
            }
        }
    }
    for (uint32_t ci = 0; ci < nc; ci++)
        miss[ci] += lm[ci] + all;
    g->wave_cum[wave] = prev_cum + touched;
    g->wave_npanels = nlist;
}

void reuse_wave(struct tdev *g, const struct kplan *p, uint64_t wave, uint64_t c0,
                       uint64_t c1, double *miss, double *l2)
{
    const struct hw_config *cfg = g->cfg;
    const uint32_t nc = cfg->ncaches;
    double cap[HW_MAX_LEVELS];
    int grouped = 0;
    for (uint32_t ci = 0; ci < nc; ci++) {
        const struct hw_level *L = &cfg->level[cfg->lv_cache[ci]];
        cap[ci] = (double)L->capacity_bytes * TILED_CACHE_USABLE;
        if (L->instances > 1) {
            cap[ci] = cap[ci] * L->instances / g->repl[ci];
            grouped = 1;
        }
        miss[ci] = 0;
    }
    /* the common chip (one cache, one instance) gets its own copy of the
     * loop, with the cache count a constant */
    if (nc == 1 && !grouped)
        wave_reuse_loop(g, p, wave, c0, c1, miss, cap, 1, 0);
    else
        wave_reuse_loop(g, p, wave, c0, c1, miss, cap, nc, grouped);
    /* the replicated fetches into the instances of multi-instance caches */
    for (uint32_t ci = 0; grouped && ci < nc; ci++) {
        const struct hw_level *L = &cfg->level[cfg->lv_cache[ci]];
        if (L->instances <= 1)
            continue;
        double once = 0, copies = 0;
        for (uint32_t i = 0; i < g->wave_npanels; i++) {
            const struct wpanel *w = &g->wpanel[i];
            double n = dmin((double)w->readers, (double)L->instances);
            once += w->bytes;
            copies += w->bytes * n;
            if (w->missed & (1u << ci))
                miss[ci] += w->bytes * (n - 1);
        }
        g->repl[ci] = once > 0 ? copies / once : 1.0;
    }
    double steps = p->ksteps;
    *l2 = (double)(c1 - c0) * (p->a_step * steps + p->b_step * steps) * kplan_l2_share(p);
}
