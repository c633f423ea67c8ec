/* runner.c: the tiled model's execution of one op: kernels, waves,
 * chunks and copies.
 *
 * What it models.  A wave is simulated on one representative SM (all SMs
 * of a wave run the same tiles in lockstep, so they are symmetric), with
 * the wave's real totals put on the shared servers.  Its k-loop is cut into
 * at most TILED_MAX_CHUNKS chunks; chunk 0 is the pipeline prologue
 * (stages-1 k-steps, as CUTLASS issues it); chunks grow 1.5x and shrink
 * again at the end (chunk_plan).  Each chunk is
 *     load    DRAM -> L2 -> SM: a flow on the DRAM server (the bytes that
 *             miss in L2) and a flow on the L2 server (all bytes), issued
 *             back to back; data is usable one memory latency after its
 *             flows drain;
 *     compute a flow on the matrix and/or vector pipe server and a flow on
 *             the shared-memory server (operand reads);
 *     store   write-back flows to L2 and DRAM, fire and forget.
 * Loads run ahead of compute by TILED_PIPE_DEPTH chunks (multi-stage
 * buffering), so memory and compute overlap and only what does not overlap
 * shows up as stall.  All servers are shared by every op running on the
 * device, so concurrent streams contend for DRAM, L2 and the pipes.
 *
 * Per-flow caps carry the per-SM limits: a wave on n SMs can pull at most
 * n * L2-port bandwidth from L2 and, by Little's law, at most
 * n * bytes-in-flight / loaded latency from DRAM.  That is where small
 * grids (a decode GEMV, a one-row norm) lose bandwidth.
 *
 * Where time goes.  The representative SM is at any moment computing
 * (busy), waiting for a chunk's data (stall at the level whose flow
 * drained last, or whose latency it is waiting out), waiting for
 * shared-memory operand reads beyond the pipe time (smem stall), or
 * draining stores at the end of a wave.  Kernel launch overhead is its own
 * category.  The categories add up to the op's time exactly.
 */
#include <string.h>

#include "check.h"
#include "tiled.h"

#define TILED_PIPE_DEPTH 2        /* chunks a load may run ahead of compute */

enum tdev_ev { TILED_EV_BEGIN = 1, TILED_EV_READY = 2 };

/* What a flow is for; packed with the chunk number into the flow arg. */
enum flow_role { FR_LOAD, FR_PIPE, FR_SMEM, FR_STORE };

static void runner_try_load(struct runner *r);
static void runner_try_compute(struct runner *r);
static void runner_check_wave_end(struct runner *r);

/* The server a wait at level lvl is measured on: the DRAM's or a cache's
 * (their loads); NULL for the other levels, whose waits are not split. */
static struct flowsrv *wait_server(const struct runner *r, unsigned lvl)
{
    const struct hw_config *c = r->g->cfg;
    if ((int)lvl == c->lv_dram)
        return r->g->dramp;
    if ((int)lvl == c->lv_dec && c->lv_dec >= 0)
        return tdev_lv(r->g, (int)lvl, 0);
    for (uint32_t ci = 0; ci < c->ncaches; ci++)
        if ((unsigned)c->lv_cache[ci] == lvl)
            return tdev_lv(r->g, (int)lvl, 0);
    return NULL;
}

/* Accounted up to now: each split level's saturated time noted */
void runner_mark(struct runner *r, uint64_t now)
{
    const struct hw_config *c = r->g->cfg;
    r->t_mark = now;
    r->mark_sat[c->lv_dram] = flowsrv_saturated_at(r->g->dramp, now);
    if (c->lv_dec >= 0)
        r->mark_sat[c->lv_dec] = flowsrv_saturated_at(tdev_lv(r->g, c->lv_dec, 0), now);
    for (uint32_t ci = 0; ci < c->ncaches; ci++)
        r->mark_sat[c->lv_cache[ci]] = flowsrv_saturated_at(tdev_lv(r->g, c->lv_cache[ci], 0), now);
}

/* A wait at a level, split by cause: while the level's server ran at its
 * full rate, the wait is the level's bandwidth; while it ran below (the
 * flows held to their own caps: n SMs x bytes in flight / loaded latency,
 * Little's law; or none left while a latency is waited out), it is latency
 * and concurrency (op_result.lat_ps).  Reading the servers changes
 * nothing, so the split moves no prediction. */
static void account(struct runner *r, enum time_cat cat)
{
    uint64_t now = r->g->e->now_ps;
    SIM_CHECK_LE_U64(r->t_mark, now);
    uint64_t dt = now - r->t_mark;
    r->res->time_ps[cat] += dt;
    struct flowsrv *srv = cat >= CAT_STALL && dt > 0 ? wait_server(r, cat - CAT_STALL) : NULL;
    if (srv != NULL) {
        unsigned l = cat - CAT_STALL;
        uint64_t sat = flowsrv_saturated_at(srv, now) - r->mark_sat[l];
        r->res->lat_ps[l] += sat < dt ? dt - sat : 0;
    }
    runner_mark(r, now);
}

static uint64_t pack_arg(enum flow_role role, uint32_t chunk, unsigned lvl)
{
    return ((uint64_t)role << 16) | ((uint64_t)lvl << 8) | chunk;
}

static void runner_flow_done(struct engine *e, void *owner, uint64_t arg);

static void start_flow(struct runner *r, struct flowsrv *s, double amount, double cap,
                       enum flow_role role, uint32_t chunk, unsigned lvl, uint32_t *counter)
{
    if (amount <= 0)
        return;
    (*counter)++;
    flowsrv_start(s, r->g->e, amount, cap, runner_flow_done, r, pack_arg(role, chunk, lvl));
}

/* Cut a k-loop of ks steps into chunks: the prologue (pro steps), chunks
 * growing 1.5x, equal middle chunks, then the mirror image shrinking back.
 * A chunk's compute waits for all of its data and the last chunk's compute
 * cannot hide behind anything, so neighbouring chunks differ by at most
 * 1.5x and both ends are small: what stays exposed is close to what a
 * real multi-stage pipeline exposes (its fill and its drain).  Returns the
 * number of chunks; frac[i] is chunk i's share of the loop. */
static uint32_t chunk_plan(uint32_t ks, uint32_t pro, double *frac)
{
    uint32_t ramp[TILED_MAX_CHUNKS / 2], n = 0;
    uint64_t sum = 0, size = pro > 0 ? pro : 1;
    while (n < TILED_MAX_CHUNKS / 2 - 2 && 2 * (sum + size) <= ks) {
        ramp[n++] = (uint32_t)size;
        sum += size;
        size += (size + 1) / 2;
    }
    if (n == 0) {
        frac[0] = 1.0;
        return 1;
    }
    uint64_t mid = ks - 2 * sum;
    uint64_t cap = size;
    uint64_t nmid = mid ? (mid + cap - 1) / cap : 0;
    if (2 * n + nmid > TILED_MAX_CHUNKS)
        nmid = TILED_MAX_CHUNKS - 2 * n;
    uint32_t c = 0;
    for (uint32_t i = 0; i < n; i++)
        frac[c++] = (double)ramp[i] / ks;
    for (uint64_t i = 0; i < nmid; i++) {
        uint64_t lo = mid * i / nmid, hi = mid * (i + 1) / nmid;
        frac[c++] = (double)(hi - lo) / ks;
    }
    for (uint32_t i = n; i-- > 0;)
        frac[c++] = (double)ramp[i] / ks;
    return c;
}

/* The wave's per-flow rate caps, from the SMs that carry it (cpu CTAs
 * each): what they keep in flight over the loaded DRAM latency, their L2
 * ports, their pipes and shared memory. */
static void wave_caps(struct runner *r, uint32_t cpu)
{
    const struct hw_config *c = r->g->cfg;
    const struct kplan *p = r->p;
    double u = r->units;
    double inflight = cpu * p->inflight_cta;
    if (c->sa_rows)     /* systolic units are fed by DMA engines, not threads */
        inflight = (double)c->eff_inflight_bytes_per_unit;
    else if (!p->async_copy)
        inflight = dmin(inflight, c->eff_inflight_bytes_per_unit);
    else
        inflight = dmin(inflight, (double)cfg_smem(c)->capacity_bytes);
    r->cap_dram = u * inflight / ((double)cfg_dram(c)->eff_loaded_latency_ps * 1e-12) / p->dram_cost;
    r->cap_l2 = u * cfg_first_cache(c)->port_bytes_per_cycle_per_unit * (p->load_frac > 0 ? p->load_frac : 1.0) *
                c->clock_hz;
    double rf = p->rate_frac > 0 ? p->rate_frac : 1.0;
    r->cap_l2_load = r->cap_l2 * kplan_l2_share(p) / kplan_port_share(p);
    r->cap_m = u * unit_matrix_rate(c, p->mdt) * rf;
    r->cap_v = u * unit_vector_rate(c, p->vdt) * rf;
    r->cap_s = u * c->sfu_ops_per_cycle * c->clock_hz * rf;
    r->cap_smem = cfg_smem(c)->bw_bytes_per_cycle > 0
                      ? u * cfg_smem(c)->bw_bytes_per_cycle * c->clock_hz
                      : u * cfg_smem(c)->bw_bytes_per_s / c->units;
}

/* Remembered reuse.  A wave group's bytes per cache come from walking its
 * CTAs over the device's reuse scratch (reuse.c), which the kernel resets
 * when it begins and then only reads what it wrote itself: a kernel that
 * runs with no other kernel's walk in between finds, for a plan and the
 * units each group began on, the same bytes every time.  The first such
 * run of a plan is kept (memo_commit), and later runs on the same units
 * take their groups' bytes from it without walking.  The scratch is shared
 * by the device's runners, so when another kernel is about to use it
 * (reuse_claim), a kernel that skipped its walks does them first, leaving
 * the scratch as the walks would have, and walks from then on: every run
 * gives the bytes it gave without the memo, bit for bit. */
static struct wave_memo *memo_slot(const struct runner *r)
{
    return &r->g->memo[r->memo_i];
}

/* The slot of r's kernel on avail units: a kernel that runs both beside a
 * collective holding units and without one keeps both runs (each slot
 * holds one avail, and a slot kept by kernel alone flipped between
 * them, walking every other run). */
static uint32_t memo_index(const struct runner *r, uint32_t avail)
{
    uint32_t kp = r->low->soff + r->kern;
    return (kp + avail * UINT32_C(0x9e3779b1)) & r->g->memo_mask;
}

static int memo_holds(const struct runner *r, const struct wave_memo *m)
{
    return m->kp_plus1 == r->low->soff + r->kern + 1;
}

/* The kernel's operand panels, none used yet (-1). */
static void panels_reset(struct runner *r)
{
    const struct kplan *p = r->p;
    uint64_t npanels = p->gb * (p->gm + p->gn);
    for (uint64_t i = 0; i < npanels; i++)
        r->g->panel_last[i] = -1;
    r->panels_unset = 0;
}

/* The walks of groups 0 .. r->group - 1 that the memo stood in for. */
static void memo_walk(struct runner *r)
{
    struct tdev *g = r->g;
    const struct kplan *p = r->p;
    if (r->panels_unset)
        panels_reset(r);
    uint64_t ctas = p->gm * p->gn * p->gb, slots = (uint64_t)g->rec->avail * p->ctas_per_unit;
    for (uint32_t k = 0; k < r->group; k++)
        for (uint32_t m = 0; m < g->rec->mult[k]; m++) {
            uint64_t a = g->rec->cta0[k] + m * slots, b = umin(ctas, a + slots);
            double m1[HW_MAX_LEVELS], l1 = 0;
            reuse_wave(g, p, g->rec->wave[k] + m, a, b, m1, &l1);
        }
}

/* r is about to use the scratch: the kernel that used it last and skipped
 * its walks does them now, and neither may be remembered or replay from
 * here on (their bytes now depend on each other's). */
static void reuse_claim(struct runner *r)
{
    struct tdev *g = r->g;
    struct runner *o = g->reuse_owner;
    if (o != NULL && o != r) {
        if (o->replaying)
            memo_walk(o);
        o->replaying = o->recording = 0;
    }
    g->reuse_owner = r;
}

static void memo_commit(struct runner *r)
{
    const struct tdev *g = r->g;
    struct wave_memo *m = memo_slot(r);
    m->kp_plus1 = r->low->soff + r->kern + 1;
    m->n = r->group;
    m->avail = g->rec->avail;
    for (uint32_t k = 0; k < r->group; k++) {
        m->mult[k] = g->rec->mult[k];
        m->l2[k] = g->rec->l2[k];
        for (uint32_t ci = 0; ci < TILED_MEMO_CACHES; ci++)
            m->miss[k][ci] = g->rec->miss[k][ci];
    }
}

/* A wave group's loop loads per cache (miss_loop) and from the first
 * cache (l2_loop): remembered, or walked (and noted for the memo). */
static void group_reuse(struct runner *r, uint64_t c0, uint64_t slots, double *miss_loop,
                        double *l2_loop)
{
    struct tdev *g = r->g;
    const struct kplan *p = r->p;
    const uint32_t nc = g->cfg->ncaches;
    uint64_t ctas = p->gm * p->gn * p->gb;
    reuse_claim(r);
    uint32_t k = r->group;
    const struct wave_memo *mm = r->replaying ? memo_slot(r) : NULL;
    if (mm != NULL && memo_holds(r, mm) && k < mm->n && mm->avail == r->avail && mm->mult[k] == r->mult) {
        for (uint32_t ci = 0; ci < nc; ci++)
            miss_loop[ci] = mm->miss[k][ci];
        *l2_loop = mm->l2[k];
    } else {
        if (r->replaying)
            memo_walk(r);       /* off the remembered path: the scratch as the walks leave it */
        r->replaying = 0;
        for (uint32_t ci = 0; ci < nc; ci++)
            miss_loop[ci] = 0;
        *l2_loop = 0;
        for (uint32_t m = 0; m < r->mult; m++) {
            uint64_t a = c0 + m * slots, b = umin(ctas, a + slots);
            double m1[HW_MAX_LEVELS], l1 = 0;
            reuse_wave(g, p, r->wave + m, a, b, m1, &l1);
            for (uint32_t ci = 0; ci < nc; ci++)
                miss_loop[ci] += m1[ci];
            *l2_loop += l1;
        }
    }
    if (!r->recording && !r->replaying) {
        /* walked, and nothing to note */
    } else if (k >= TILED_MEMO_GROUPS || (k > 0 && r->avail != g->rec->avail)) {
        r->recording = 0;       /* too many groups to keep, or the units changed */
        SIM_CHECK(!r->replaying); /* a remembered group is one of the first few, on the same units */
    } else {
        g->rec->avail = r->avail;
        g->rec->wave[k] = r->wave;
        g->rec->cta0[k] = c0;
        g->rec->mult[k] = r->mult;
        g->rec->l2[k] = *l2_loop;
        for (uint32_t ci = 0; ci < nc; ci++)
            g->rec->miss[k][ci] = miss_loop[ci];
    }
    r->group = k + 1;
}

static void wave_begin(struct runner *r)
{
    struct tdev *g = r->g;
    const struct hw_config *c = g->cfg;
    const struct kplan *p = r->p;
    uint64_t ctas = p->gm * p->gn * p->gb;
    /* each wave takes the units free when it begins: a collective's
     * kernel that held some when the kernel launched gives them back when
     * it ends, and the block scheduler puts the next CTAs on them */
    r->avail = tdev_avail_units(g);
    uint64_t slots = (uint64_t)r->avail * p->ctas_per_unit;
    uint64_t c0 = r->cta0, c1 = umin(ctas, c0 + slots);
    uint64_t wctas = c1 - c0;
    r->wctas = wctas;
    /* the block scheduler spreads CTAs over all SMs before doubling up */
    r->units = (uint32_t)umin(r->avail, wctas);
    uint32_t cpu = (uint32_t)ceil_div(wctas, r->units);

    /* With two or more CTAs per SM, an SM starts its next CTA while the
     * other one still computes, so a run of full waves behaves like one
     * long pipeline (no per-wave fill and drain): simulate it as one wave
     * whose k-loop is that many times longer.  With one CTA per SM the
     * next CTA's prologue is exposed, wave by wave. */
    uint64_t full = (ctas - c0) / slots;   /* full waves left */
    r->mult = 1;
    if ((p->ctas_per_unit >= 2 || p->persistent) && full >= 2)
        r->mult = (uint32_t)umin(full, UINT32_MAX / (p->ksteps + 1));
    const uint32_t nc = c->ncaches;
    double miss_loop[HW_MAX_LEVELS] = {0}, l2_loop = 0;
    group_reuse(r, c0, slots, miss_loop, &l2_loop);
    double n = (double)wctas * r->mult, steps = p->ksteps;
    double reread = p->reread_step * steps * n;   /* extra passes: from DRAM */
    r->w_dram_r = miss_loop[nc - 1] + reread;
    r->w_dec = 0;
    if (p->code_frac > 0 && c->lv_dec >= 0) {
        /* entropy-coded weights: DRAM holds code_ratio of the bytes the
         * decoder puts out to the caches */
        r->w_dec = r->w_dram_r * p->code_frac;
        r->w_dram_r -= r->w_dec * (1.0 - p->code_ratio);
    }
    r->w_l2_r = l2_loop + reread;
    for (uint32_t ci = 1; ci < nc; ci++)        /* what reaches the outer caches */
        r->w_cache_r[ci] = miss_loop[ci - 1] + reread;
    r->w_pro = p->pro_bytes * n;
    /* a chunk's data is usable one latency of the outermost level it
     * reaches after its flows drain */
    r->load_lat = cfg_first_cache(c)->latency_ps;
    for (uint32_t ci = 1; ci < nc; ci++)
        if (r->w_cache_r[ci] > 0)
            r->load_lat = c->level[c->lv_cache[ci]].latency_ps;
    if (r->w_dram_r + r->w_pro > 0)
        r->load_lat = cfg_dram(c)->latency_ps;
    if (r->w_dec > 0)
        r->load_lat += c->level[c->lv_dec].latency_ps;
    r->w_mflops = p->mflops_step * steps * n;
    r->w_sfu = p->sfu_step * steps * n;
    r->w_l2_loop = p->l2_step * steps * n;
    r->w_vflops = p->vflops_step * steps * n;
    r->w_smem = p->smem_step * steps * n;
    r->w_xchg = p->xchg_step * steps * n;
    r->w_store_loop = p->store_step * steps * n;
    r->w_store_end = p->store_end * n;
    r->w_l2_end = p->l2_only_end * n;

    struct op_result *res = r->res;
    res->pipe_pj += r->w_mflops * unit_matrix_pj(c, p->mdt) + r->w_vflops * unit_vector_pj(c, p->vdt) +
                    r->w_sfu * unit_sfu_pj(c);
    double wst = r->w_store_loop + r->w_store_end;
    res->bytes[c->lv_dram] += r->w_dram_r + r->w_pro + wst;
    if (r->w_dec > 0)
        res->bytes[c->lv_dec] += r->w_dec;
    res->bytes[c->lv_cache[0]] += r->w_l2_r + r->w_pro + wst + r->w_l2_end;
    for (uint32_t ci = 1; ci < nc; ci++)        /* stores pass through to DRAM */
        res->bytes[c->lv_cache[ci]] += r->w_cache_r[ci] + r->w_pro + wst;
    /* async copies land in shared memory: every byte each CTA receives (a
     * multicast L2 read lands in each CTA of its cluster) */
    res->bytes[c->lv_smem] += r->w_smem + r->w_xchg +
                              (l2_loop * kplan_port_share(p) / kplan_l2_share(p) + reread + r->w_pro) *
                                  (p->async_copy ? 1.0 : 0.0);

    wave_caps(r, cpu);

    uint32_t pro = p->stages > 1 ? p->stages - 1 : 1;
    r->nchunks = chunk_plan(p->ksteps * r->mult, pro, r->frac);
    r->wave_start = g->e->now_ps;
    r->load_next = r->comp_next = 0;
    r->load_busy = r->comp_busy = 0;
    r->load_pending = r->comp_pending = r->pipe_pending = 0;
    memset(r->ready, 0, sizeof r->ready);
    runner_try_load(r);
}

static void chunk_ready_at(struct runner *r, uint32_t chunk, uint64_t latency)
{
    engine_after(r->g->e, latency, r->g->comp, TILED_EV_READY, chunk, r);
}

static void runner_try_load(struct runner *r)
{
    if (r->load_busy || r->load_next >= r->nchunks ||
        r->load_next >= r->comp_next + TILED_PIPE_DEPTH)
        return;
    struct tdev *g = r->g;
    uint32_t ch = r->load_next++;
    double f = r->frac[ch];
    double dram = r->w_dram_r * f + (ch == 0 ? r->w_pro : 0);
    double l2 = r->w_l2_r * f + (ch == 0 ? r->w_pro : 0);
    const struct hw_config *c = g->cfg;
    r->load_level[ch] = (uint8_t)(dram > 0 ? c->lv_dram : c->lv_cache[0]);
    r->load_busy = 1;
    r->load_pending = 0;
    start_flow(r, g->dramp, dram * r->p->dram_cost, r->cap_dram * r->p->dram_cost, FR_LOAD, ch,
               (unsigned)c->lv_dram, &r->load_pending);
    start_flow(r, tdev_lv(g, c->lv_cache[0], 0), l2, r->cap_l2_load, FR_LOAD, ch, (unsigned)c->lv_cache[0],
               &r->load_pending);
    if (r->w_dec > 0)
        start_flow(r, tdev_lv(g, c->lv_dec, 0), r->w_dec * f, 0, FR_LOAD, ch, (unsigned)c->lv_dec,
                   &r->load_pending);
    for (uint32_t ci = 1; ci < c->ncaches; ci++)
        start_flow(r, tdev_lv(g, c->lv_cache[ci], 0), r->w_cache_r[ci] * f + (ch == 0 ? r->w_pro : 0),
                   0, FR_LOAD, ch, (unsigned)c->lv_cache[ci], &r->load_pending);
    if (r->load_pending == 0) {
        r->load_busy = 0;
        chunk_ready_at(r, ch, 0);
        runner_try_load(r);
    }
}

static void runner_compute_done(struct runner *r)
{
    struct tdev *g = r->g;
    uint64_t now = g->e->now_ps;
    /* busy while the pipes ran; operand reads beyond that are smem stall */
    uint64_t pd = r->pipe_done ? r->pipe_done : r->comp_start;
    r->res->time_ps[CAT_BUSY] += pd - r->t_mark;
    r->res->time_ps[CAT_STALL + g->cfg->lv_smem] += now - pd;
    runner_mark(r, now);
    r->comp_busy = 0;
    uint32_t ch = r->comp_next++;
    double f = r->frac[ch];
    double store = r->w_store_loop * f, l2_end = r->w_l2_loop * f;
    if (r->comp_next == r->nchunks)
        store += r->w_store_end;
    const struct hw_config *c = g->cfg;
    if (store > 0) {
        r->store_level = (uint8_t)c->lv_dram;
        start_flow(r, g->dramp, store * r->p->dram_cost, r->cap_l2, FR_STORE, ch,
                   (unsigned)c->lv_dram, &r->store_pending);
        for (uint32_t ci = 0; ci < c->ncaches; ci++)
            start_flow(r, tdev_lv(g, c->lv_cache[ci], 0), store, r->cap_l2, FR_STORE, ch,
                       (unsigned)c->lv_cache[ci], &r->store_pending);
    }
    if (r->comp_next == r->nchunks)
        l2_end += r->w_l2_end;
    if (l2_end > 0)
        start_flow(r, tdev_lv(g, c->lv_cache[0], 0), l2_end, r->cap_l2, FR_STORE, ch,
                   (unsigned)c->lv_cache[0], &r->store_pending);
    runner_try_load(r);
    runner_try_compute(r);
    runner_check_wave_end(r);
}

/* The vector and special-function work of a chunk (phase 1).  A serial
 * kernel starts it when its matrix work is done, others with it. */
static void runner_softmax_phase(struct runner *r, uint32_t ch)
{
    struct tdev *g = r->g;
    double f = r->frac[ch];
    unsigned smem = (unsigned)g->cfg->lv_smem;
    r->phase = 1;
    double sfu = r->w_sfu * f * (1.0 - r->p->sfu_serial);    /* 0 for a serial kernel */
    start_flow(r, &g->vpipe, r->w_vflops * f, r->cap_v, FR_PIPE, ch, smem, &r->pipe_pending);
    start_flow(r, &g->sfu, sfu, r->cap_s, FR_PIPE, ch, smem, &r->pipe_pending);
    start_flow(r, tdev_lv(g, g->cfg->lv_smem, 0), r->w_xchg * f, r->cap_smem, FR_PIPE, ch, smem,
               &r->pipe_pending);
}

static void runner_try_compute(struct runner *r)
{
    if (r->comp_busy || r->comp_next >= r->nchunks || !r->ready[r->comp_next])
        return;
    struct tdev *g = r->g;
    uint32_t ch = r->comp_next;
    account(r, (enum time_cat)(CAT_STALL + r->load_level[ch]));
    r->comp_busy = 1;
    r->comp_start = g->e->now_ps;
    r->pipe_done = 0;
    r->comp_pending = r->pipe_pending = 0;
    double f = r->frac[ch];
    unsigned smem = (unsigned)g->cfg->lv_smem;
    r->phase = 0;
    start_flow(r, &g->mpipe, r->w_mflops * f, r->cap_m, FR_PIPE, ch, smem, &r->pipe_pending);
    if (!r->p->serial || r->pipe_pending == 0)
        runner_softmax_phase(r, ch);
    r->comp_pending = r->pipe_pending;
    start_flow(r, tdev_lv(g, g->cfg->lv_smem, 0), r->w_smem * f, r->cap_smem, FR_SMEM, ch, smem,
               &r->comp_pending);
    if (r->pipe_pending == 0)
        r->pipe_done = r->comp_start;
    if (r->comp_pending == 0)
        runner_compute_done(r);
}

/* A wave ends when its last chunk has computed: the SM retires the CTA and
 * takes the next one while the stores drain in the background (they still
 * use L2 and DRAM bandwidth).  The kernel ends when its last wave has
 * computed and every store has drained. */
static void runner_check_wave_end(struct runner *r)
{
    if (r->draining) {
        if (r->store_pending > 0)
            return;
        account(r, (enum time_cat)(CAT_STALL + r->store_level));
        r->draining = 0;
        runner_next_kernel(r);
        return;
    }
    if (r->comp_busy || r->comp_next < r->nchunks)
        return;
    r->res->waves += r->mult;
    if (r->g->tl != NULL)
        tl_waves(r->g->tl, r->g->device, r->op, r->kern, r->wave, r->wave + r->mult, r->units,
                 r->wave_start, r->g->e->now_ps);
    r->wave += r->mult;
    r->cta0 += r->wctas * r->mult;
    if (r->cta0 < r->p->gm * r->p->gn * r->p->gb) {
        wave_begin(r);
        return;
    }
    /* every wave group has begun: walked alone, the kernel is remembered */
    if (r->recording)
        memo_commit(r);
    r->recording = r->replaying = 0;
    r->draining = 1;
    runner_check_wave_end(r);
}

static void runner_flow_done(struct engine *e, void *owner, uint64_t arg)
{
    struct runner *r = owner;
    enum flow_role role = (enum flow_role)(arg >> 16);
    unsigned lvl = (unsigned)((arg >> 8) & 0xff);
    uint32_t ch = (uint32_t)(arg & 0xff);
    switch (role) {
    case FR_LOAD:
        r->load_level[ch] = (uint8_t)lvl;   /* the level that drained last */
        if (--r->load_pending == 0) {
            r->load_busy = 0;
            chunk_ready_at(r, ch, r->load_lat);
            runner_try_load(r);
        }
        break;
    case FR_PIPE:
        --r->comp_pending;
        if (--r->pipe_pending == 0 && r->phase == 0 && r->p->serial) {
            /* the matrix work is done: now the softmax of the step */
            uint32_t before = r->pipe_pending;
            runner_softmax_phase(r, ch);
            r->comp_pending += r->pipe_pending - before;
        }
        else if (r->pipe_pending == 0 && r->phase == 1 && r->p->sfu_serial > 0) {
            /* the exponentials that did not overlap the step's GEMMs */
            uint32_t before = r->pipe_pending;
            r->phase = 2;
            start_flow(r, &r->g->sfu, r->w_sfu * r->frac[ch] * r->p->sfu_serial, r->cap_s, FR_PIPE,
                       ch, (unsigned)r->g->cfg->lv_smem, &r->pipe_pending);
            r->comp_pending += r->pipe_pending - before;
        }
        if (r->pipe_pending == 0)
            r->pipe_done = e->now_ps;
        if (r->comp_pending == 0)
            runner_compute_done(r);
        break;
    case FR_SMEM:
        if (--r->comp_pending == 0)
            runner_compute_done(r);
        break;
    case FR_STORE:
        r->store_level = (uint8_t)lvl;
        if (--r->store_pending == 0)
            runner_check_wave_end(r);
        break;
    }
}

/* A copy-engine transfer: the bytes cross PCIe (or DRAM for d2d) with
 * the link's latency; no SMs involved. */
/* A copy-engine transfer; no SMs involved.  h2d/d2h cross the chip's host
 * link (or, in a system file, the links to the nearest host), d2d reads and
 * writes device memory, p2p reads this device's memory, crosses the links
 * of its route and writes the peer's.  Every flow starts at once, so the
 * copy goes at the rate of its most contended server; its data lands one
 * route latency after the last flow drains. */
static void runner_dma(struct runner *r)
{
    struct tdev *g = r->g;
    const struct kplan *p = r->p;
    const struct op *o = &g->t->ops[r->op];
    r->nchunks = 1;
    r->frac[0] = 1.0;
    r->comp_next = 0;
    r->load_next = 1;
    r->load_busy = 1;
    r->load_pending = 0;
    memset(r->ready, 0, sizeof r->ready);
    r->w_mflops = r->w_vflops = r->w_smem = r->w_xchg = r->w_store_loop = r->w_store_end = r->w_l2_end = 0;
    r->w_dram_r = r->w_pro = r->w_dec = 0;
    r->store_pending = 0;
    r->load_level[0] = (uint8_t)p->dma_level;
    const struct hw_config *c = g->cfg;
    r->load_lat = c->level[p->dma_level].latency_ps;
    double B = p->dma_bytes;
    if (p->dma_net) {
        const struct sys_route *rt = &g->route[p->route];
        const struct hw_system *sys = g->env->sys;
        r->load_lat = rt->latency_ps;
        uint32_t counted = 0;       /* bit per level: bytes counted once per level */
        for (uint32_t h = 0; h < rt->nhops; h++) {
            const struct sys_link *l = &sys->links[rt->link[h]];
            if (!(counted & (1u << l->level)))
                r->res->bytes[l->level] += B;
            counted |= 1u << l->level;
            start_flow(r, net_link_srv(g->env->net, rt->link[h], rt->dir[h]), B, 0, FR_LOAD, 0,
                       (unsigned)l->level, &r->load_pending);
        }
        for (uint32_t v = 0; v < rt->nvia; v++)  /* switches and host memories on the way */
            start_flow(r, &g->env->net->node[rt->via[v]], B * rt->via_times[v], 0, FR_LOAD, 0,
                       (unsigned)sys->links[rt->link[0]].level, &r->load_pending);
        /* this device's memory, and for p2p the peer's */
        start_flow(r, g->dramp, B, 0, FR_LOAD, 0, (unsigned)c->lv_dram, &r->load_pending);
        r->res->bytes[c->lv_dram] += B;
        if (p->peer != TRACE_NO_DEVICE) {
            start_flow(r, g->env->dram[p->peer], B, 0, FR_LOAD, 0, (unsigned)c->lv_dram,
                       &r->load_pending);
            r->res->bytes[c->lv_dram] += B;
        }
    } else if (p->dma_level == c->lv_host) {
        struct flowsrv *link = tdev_lv(g, c->lv_host, p->dma_h2d || o->u.copy.dir == MEMCPY_H2D ? 0 : 1);
        r->res->bytes[c->lv_host] += B;
        r->res->bytes[c->lv_dram] += B;
        start_flow(r, link, B, 0, FR_LOAD, 0, (unsigned)c->lv_host, &r->load_pending);
        start_flow(r, g->dramp, B, 0, FR_LOAD, 0, (unsigned)c->lv_dram, &r->load_pending);
    } else {
        r->res->bytes[c->lv_dram] += 2.0 * B;
        start_flow(r, g->dramp, 2.0 * B * p->dram_cost, 0, FR_LOAD, 0, (unsigned)c->lv_dram,
                   &r->load_pending);
    }
    if (r->load_pending == 0) {  /* nothing to move: a copy of bytes no level carries */
        r->load_busy = 0;
        chunk_ready_at(r, 0, r->load_lat);
    }
}

static void runner_finish(struct runner *r)
{
    struct tdev *g = r->g;
    r->res->end_ps = g->e->now_ps;
    r->res->flops = r->low->flops;
    r->in_use = 0;
    uint32_t op = r->op;
    model_done_fn done = r->done;
    void *ctx = r->ctx;
    /* start a waiting op in the freed runner before reporting */
    if (g->waitq_n > 0) {
        uint32_t next = g->waitq[g->waitq_head];
        struct op_result *nres = g->waitq_res[g->waitq_head];
        g->waitq_head = (g->waitq_head + 1) % g->waitq_cap;
        g->waitq_n--;
        tdev_start_op(g, next, nres, g->done, g->ctx);
    }
    done(g->e, ctx, op);
}

void runner_next_kernel(struct runner *r)
{
    struct tdev *g = r->g;
    if (r->p != NULL)
        r->kern++;
    if (r->kern >= r->low->nk) {
        runner_finish(r);
        return;
    }
    r->p = tdev_kernel(r->g, r->low, r->kern);
    r->res->kernels++;
    /* the front end issues one launch at a time, each once the host loop
     * has issued it (the CPU runs ahead of the GPU: it waits only when the
     * host is slower than the kernels) */
    uint64_t now = g->e->now_ps;
    uint64_t begin = now > g->frontend_free_ps ? now : g->frontend_free_ps;
    g->host_issued_ps += g->cfg->host_dispatch_ps;
    if (begin < g->host_issued_ps)
        begin = g->host_issued_ps;
    begin += g->cfg->launch_overhead_ps;
    g->frontend_free_ps = begin;
    engine_at(g->e, begin, g->comp, TILED_EV_BEGIN, 0, r);
}

/* Events carry the runner they are for; self (the gpu) is reached through it. */
void runner_handle(struct engine *e, void *self, const struct eq_event *ev)
{
    (void)e;
    (void)self;
    struct runner *r = ev->ptr;
    switch (ev->type) {
    case TILED_EV_BEGIN: {
        account(r, CAT_LAUNCH);
        const struct kplan *p = r->p;
        r->recording = r->replaying = 0;
        if (p->fixed) {
            r->nchunks = 1;
            engine_after(r->g->e, p->fixed_ps, r->g->comp, TILED_EV_READY, 0, r);
            break;
        }
        if (p->dma) {
            runner_dma(r);
            break;
        }
        uint64_t ctas = p->gm * p->gn * p->gb;
        r->wave = 0;
        r->cta0 = 0;
        r->store_pending = 0;
        r->store_level = (uint8_t)r->g->cfg->lv_cache[0];
        /* the scratch is this kernel's from here: the last user's walks first */
        reuse_claim(r);
        r->group = 0;
        r->recording = r->g->cfg->ncaches <= TILED_MEMO_CACHES && r->g->memo != NULL;
        if (r->recording) {
            /* its first wave's units: what wave_begin takes now */
            uint32_t a0 = tdev_avail_units(r->g);
            r->memo_i = memo_index(r, a0);
            r->replaying = memo_holds(r, memo_slot(r)) && memo_slot(r)->avail == a0;
        }
        if (r->replaying)
            r->recording = 0;
        for (uint32_t ci = 0; ci < HW_MAX_LEVELS; ci++)
            r->g->repl[ci] = 1.0;
        r->draining = 0;
        r->res->ctas += ctas;
        /* a kernel that replays its walks reads no panel; it marks its
         * panels unused only if it walks after all (memo_walk) */
        r->panels_unset = r->replaying;
        if (!r->replaying)
            panels_reset(r);
        wave_begin(r);
        break;
    }
    case TILED_EV_READY:
        if (r->p->fixed) {
            account(r, CAT_MEASURED);
            r->res->waves++;
            runner_next_kernel(r);
            break;
        }
        r->ready[ev->arg] = 1;
        if (r->p->dma) {
            account(r, (enum time_cat)(CAT_STALL + r->load_level[0]));
            r->res->waves++;
            runner_next_kernel(r);
            break;
        }
        runner_try_compute(r);
        break;
    default:
        SIM_CHECK(0);
    }
}
