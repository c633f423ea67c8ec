/* coll_stage.c: the stages of a collective: the flows each pipeline stage
 * puts on the links, switches and memories of the ranks' routes.  See
 * coll_int.h and docs/collectives.md.
 *
 * What it models.  A ring collective over n ranks is R rounds; NCCL cuts
 * each round's data into C slices and pipelines them, so the rounds and
 * slices form a wavefront of R + C - 1 steps (coll_plan.c sets R and C).
 * A stage starts, for every rank, one flow per link, switch and memory of
 * its route carrying what the rank sends in the stage's steps, and ends
 * when all have drained, plus one hop latency per step while the pipeline
 * is still filling (the first R steps).  The middle steps, where every
 * round is busy, are one stage of many slices, so a collective costs at
 * most 2R stages, never an event per slice or per byte.  All-to-all (and
 * all-gather with algo direct) send every pair's share at once in one
 * stage, trees every edge at once, NVLS its one stage.  Flows share links,
 * switches and DRAM with everything else running, so a collective slows
 * down next to other traffic and slows it down, and a ring that crosses a
 * slow link runs at that link's rate.
 *
 * What it leaves out: the reduction's arithmetic (its memory traffic is
 * counted).
 */
#include <string.h>

#include "check.h"
#include "coll_int.h"
#include "flow.h"
#include "net.h"

static void coll_flow_done(struct engine *e, void *owner, uint64_t arg);

static void put_flow(struct coll_engine *c, struct coll_run *r, struct flowsrv *s, double amount,
                     double cap, uint64_t inst)
{
    if (amount <= 0)
        return;
    r->pending++;
    flowsrv_start(s, c->e, amount, cap, coll_flow_done, c, inst);
}

/* One rank's bytes to a peer along route rt: link flows (in wire bytes),
 * switches and host memories on the way, its own memory read and the
 * peer's written. */
static void send_bytes(struct coll_engine *c, struct coll_run *r, uint64_t inst,
                       const struct sys_route *rt, uint32_t src_dev, uint32_t dst_dev,
                       double bytes, double read_factor, double write_factor, double cap,
                       struct op_result *res)
{
    const struct hw_system *sys = c->env->sys;
    double eff = r->eff;
    double wire = bytes / eff, wcap = cap > 0 ? cap / eff : 0;
    uint32_t counted = 0;
    for (uint32_t h = 0; h < rt->nhops; h++) {
        const struct sys_link *l = &sys->links[rt->link[h]];
        if (!(counted & (1u << l->level)))
            res->bytes[l->level] += bytes;
        counted |= 1u << l->level;
        put_flow(c, r, net_link_srv(c->env->net, rt->link[h], rt->dir[h]), wire, wcap, inst);
    }
    for (uint32_t v = 0; v < rt->nvia; v++)
        put_flow(c, r, &c->env->net->node[rt->via[v]], wire * rt->via_times[v],
                 wcap > 0 ? wcap * rt->via_times[v] : 0, inst);
    int8_t dram = c->cfg->lv_dram;
    put_flow(c, r, c->env->dram[src_dev], bytes * read_factor, cap > 0 ? cap * read_factor : 0,
             inst);
    put_flow(c, r, c->env->dram[dst_dev], bytes * write_factor, cap > 0 ? cap * write_factor : 0,
             inst);
    res->bytes[dram] += bytes * (read_factor + write_factor);
}

/* Trees: every edge at once, up (reduce) and down (broadcast): the slices
 * pipeline through the tree, so its busiest links set the rate; the fill
 * is 2 (intra + inter) hops of NCCL's tree latencies (coll_plan_tree_ps). */
static void stage_tree(struct coll_engine *c, uint32_t inst)
{
    const struct trace *t = c->t;
    struct coll_run *r = &c->run[inst];
    const struct trace_coll *tc = &t->colls[inst];
    const struct trace_group *gr = &t->groups[tc->group];
    const struct coll_group *cg = &c->group[tc->group];
    const struct op *o0 = &t->ops[t->coll_ops[tc->ops_off]];
    double cap = r->cap;
    double S = (double)o0->u.coll.bytes;
    for (uint32_t q = 0; q < cg->nedges; q++) {
        const struct tree_edge *te = &cg->edges[q];
        uint32_t dc = t->group_dev[gr->off + te->child], dp = t->group_dev[gr->off + te->parent];
        int mc = coll_is_mirror(t, dc), mp = coll_is_mirror(t, dp);
        if (mc && mp)
            continue;
        struct op_result scratch;
        memset(&scratch, 0, sizeof scratch);
        double pcap = cap > 0 ? cap * te->share : 0;
        send_bytes(c, r, inst, &te->up, dc, dp, te->share * S, 1.0, 1.0, pcap,
                   mc ? &scratch : c->res[tc->ops_off + te->child]);
        send_bytes(c, r, inst, &te->down, dp, dc, te->share * S, 1.0, 1.0, pcap,
                   mp ? &scratch : c->res[tc->ops_off + te->parent]);
    }
    r->step = r->rounds + r->slices - 1;
    r->stage_lat_ps = coll_plan_tree_ps(c, r, cg);
}

/* Direct (all-to-all): one stage, every rank sends every other its share
 * at once. */
static void stage_direct(struct coll_engine *c, uint32_t inst)
{
    const struct trace *t = c->t;
    struct coll_run *r = &c->run[inst];
    const struct trace_coll *tc = &t->colls[inst];
    const struct trace_group *gr = &t->groups[tc->group];
    const struct coll_group *cg = &c->group[tc->group];
    const struct op *o0 = &t->ops[t->coll_ops[tc->ops_off]];
    uint32_t n = gr->n;
    double cap = r->cap;
    double pair = (double)o0->u.coll.bytes / n;
    double pcap = cap > 0 ? cap / (n - 1) : 0;
    for (uint32_t a = 0; a < n; a++) {
        uint32_t da = t->group_dev[gr->off + a];
        struct op_result *res = c->res[tc->ops_off + a];
        if (coll_is_mirror(t, da))
            continue;           /* its bytes are the simulated ranks' twins */
        for (uint32_t b = 0; b < n; b++) {
            if (b == a)
                continue;
            uint32_t db = t->group_dev[gr->off + b];
            /* a pair on different rails of different nodes goes by
             * PXN, as NCCL's all-to-all does */
            struct sys_route rt;
            int ok = sys_route_pxn(c->env->sys, c->env->sysdev[da], c->env->sysdev[db], &rt,
                                   c->env->net->scratch);
            SIM_CHECK(ok == 0);     /* the ring's routes connect the group */
            send_bytes(c, r, inst, &rt, da, db, pair, 1.0, 1.0, pcap, res);
        }
    }
    r->step = r->rounds + r->slices - 1;
    r->stage_lat_ps = coll_plan_hop_ps(c, r, cg);
}

/* What one ring stage sends, the same for every ring position. */
struct ring_stage {
    uint32_t s0, s1;            /* the wavefront steps it covers */
    uint32_t m;                 /* rounds busy at once at most: min(R, C) */
    uint32_t last;              /* wavefront steps: R + C - 1 */
    int chain;                  /* broadcast or send_recv: a chain from the root */
    double share, rcap;         /* each ring's share of the data, and of the rank's rate */
    double read_factor, write_factor;   /* memory bytes per byte sent: read, written */
};

/* Memory per byte sent: a ring's reduction reads the incoming slice and
 * its own; NVLS reads the input once and writes the result once, of
 * S(1 + 1/n) bytes on the wire. */
static void ring_memory(const struct coll_run *r, const struct op *o0, uint32_t n,
                        struct ring_stage *st)
{
    /* memory per link byte: NVLS all_reduce reads the buffer and writes
     * the result once (S of S(1 + 1/n)); NVLS all_gather reads the
     * rank's share and writes all, reduce_scatter the reverse */
    double nvls_part = 1.0 / (1.0 + 1.0 / n);
    int nvls_ag = r->algo == COLL_NVLS && o0->u.coll.what == COLL_ALL_GATHER;
    int nvls_rs = r->algo == COLL_NVLS && o0->u.coll.what == COLL_REDUCE_SCATTER;
    st->read_factor = nvls_ag ? 1.0 / n
                      : r->algo == COLL_NVLS && !nvls_rs ? nvls_part
                      : nvls_rs ? 1.0
                      : o0->u.coll.what == COLL_ALL_REDUCE ? 1.5
                      : o0->u.coll.what == COLL_REDUCE_SCATTER ? 2.0 : 1.0;
    st->write_factor = nvls_rs ? 1.0 / n : nvls_ag ? 1.0 : r->algo == COLL_NVLS ? nvls_part : 1.0;
}

/* Slices the rank at ring position a sends in steps s0..s1 (root: the
 * chain's root's position in this ring). */
static double ring_slices(const struct coll_run *r, const struct ring_stage *st, uint32_t a,
                          uint32_t root, uint32_t n)
{
    uint32_t R = r->rounds, C = r->slices, s0 = st->s0, s1 = st->s1;
    double slices = 0;
    if (st->chain) {
        uint32_t hop = (a + n - root) % n;      /* its hop in the chain */
        if (hop < R) {
            uint64_t lo = s0 > hop ? s0 : hop, hi = s1 < hop + C - 1 ? s1 : hop + C - 1;
            slices = hi >= lo ? (double)(hi - lo + 1) : 0;
        }
    } else {
        uint32_t act = s0 + 1;  /* rounds busy at step s0 */
        if (act > st->m)
            act = st->m;
        if (act > st->last - s0)
            act = st->last - s0;
        slices = (double)act * (s1 - s0 + 1);   /* the merged middle: m each step */
    }
    return slices;
}

/* The flows of ring k's position with ops q (ring position a) in a stage:
 * what it sends, what a mirror predecessor sends into it, and (once a
 * ring) the hops between two mirrors that must run. */
static void ring_send(struct coll_engine *c, uint32_t inst, const struct ring_stage *st,
                      uint32_t k, uint32_t q, uint32_t a, double slices)
{
    const struct trace *t = c->t;
    struct coll_run *r = &c->run[inst];
    const struct trace_coll *tc = &t->colls[inst];
    const struct trace_group *gr = &t->groups[tc->group];
    const struct coll_group *cg = &c->group[tc->group];
    uint32_t n = gr->n;
    const uint32_t *ring = cg->ring + (size_t)k * n;
    double bytes = slices * r->slice * st->share;
    uint32_t ra = ring[a], rb = ring[(a + 1) % n];
    uint32_t da = t->group_dev[gr->off + ra], db = t->group_dev[gr->off + rb];
    if (coll_is_mirror(t, da))
        return;             /* a mirror sends what its simulated twin sends */
    send_bytes(c, r, inst, &cg->routes[(size_t)k * n + a], da, db, bytes, st->read_factor,
               st->write_factor, st->rcap, c->res[tc->ops_off + ra]);
    /* what a mirror predecessor sends into this rank: its links
     * and memory carry that too (symmetric ranks: the same
     * slices); its bytes are the mirror's, not this rank's */
    uint32_t pa = (a + n - 1) % n, dp = t->group_dev[gr->off + ring[pa]];
    if (coll_is_mirror(t, dp) && !st->chain) {
        struct op_result scratch;
        memset(&scratch, 0, sizeof scratch);
        send_bytes(c, r, inst, &cg->routes[(size_t)k * n + pa], dp, da, bytes, st->read_factor,
                   st->write_factor, st->rcap, &scratch);
    }
    /* and the hops between two mirrors that pace the ring or
     * load its links as a full run's would (coll_mirror_hops; once
     * a ring) */
    uint32_t x0 = 0, x1 = 0;
    if (q == 0 && !st->chain && cg->extra_off != NULL) {
        x0 = cg->extra_off[k];
        x1 = cg->extra_off[k + 1];
    }
    for (uint32_t x = x0; x < x1; x++) {
        struct op_result scratch;
        memset(&scratch, 0, sizeof scratch);
        uint32_t sp = cg->extra_pos[x];
        uint32_t ds = t->group_dev[gr->off + ring[sp]];
        uint32_t dd = t->group_dev[gr->off + ring[(sp + 1) % n]];
        send_bytes(c, r, inst, &cg->routes[(size_t)k * n + sp], ds, dd, bytes, st->read_factor,
                   st->write_factor, st->rcap, &scratch);
    }
}

/* Ring and NVLS: steps [s0, s1], one step while filling or draining, all
 * the steps where every round is busy at once. */
static void stage_ring(struct coll_engine *c, uint32_t inst)
{
    const struct trace *t = c->t;
    struct coll_run *r = &c->run[inst];
    const struct trace_coll *tc = &t->colls[inst];
    const struct trace_group *gr = &t->groups[tc->group];
    const struct coll_group *cg = &c->group[tc->group];
    const struct op *o0 = &t->ops[t->coll_ops[tc->ops_off]];
    uint32_t n = gr->n, R = r->rounds, C = r->slices;
    double cap = r->cap;
    struct ring_stage st;
    st.last = R + C - 1;
    uint32_t s0 = r->step, m = R < C ? R : C, M = R < C ? C : R, s1 = s0;
    if (s0 + 1 >= m && s0 + 1 <= M)
        s1 = M - 1;
    st.s0 = s0;
    st.s1 = s1;
    st.m = m;
    uint32_t lat_steps = s0 < R ? (s1 < R ? s1 : R - 1) - s0 + 1 : 0;
    r->stage_lat_ps = coll_plan_hop_ps(c, r, cg) * lat_steps;
    ring_memory(r, o0, n, &st);
    uint32_t rr = 0;            /* the root's group rank */
    /* a send_recv is a broadcast of two: its root (the sender) to the other */
    st.chain = o0->u.coll.what == COLL_BROADCAST || o0->u.coll.what == COLL_SEND_RECV;
    if (st.chain && o0->u.coll.root != TRACE_NO_DEVICE)
        rr = (uint32_t)trace_group_rank(t, tc->group, o0->u.coll.root);
    st.share = 1.0 / cg->nrings;
    st.rcap = cap > 0 ? cap / cg->nrings : 0;
    for (uint32_t k = 0; k < cg->nrings; k++) {
        const uint32_t *ring = cg->ring + (size_t)k * n;
        uint32_t root = 0;      /* the root's position in this ring (broadcast) */
        while (st.chain && ring[root] != rr)
            root++;
        for (uint32_t q = 0; q < cg->nreal; q++) {  /* the ring's positions with ops */
            uint32_t a = cg->real_pos[(size_t)k * cg->nreal + q];
            double slices = ring_slices(r, &st, a, root, n);
            if (slices <= 0)
                continue;
            ring_send(c, inst, &st, k, q, a, slices);
        }
    }
    r->step = s1 + 1;
}

void coll_stage_next(struct coll_engine *c, uint32_t inst)
{
    struct coll_run *r = &c->run[inst];
    if (r->step >= r->rounds + r->slices - 1) {     /* wavefront steps */
        coll_finish(c, inst);
        return;
    }
    r->pending = 0;
    if (r->algo == COLL_TREE)
        stage_tree(c, inst);
    else if (r->algo == COLL_DIRECT)
        stage_direct(c, inst);
    else
        stage_ring(c, inst);
    if (r->pending == 0)        /* nothing moved (cannot happen with bytes >= 1) */
        engine_after(c->e, r->stage_lat_ps, c->comp, COLL_EV_STAGE, inst, NULL);
}

static void coll_flow_done(struct engine *e, void *owner, uint64_t arg)
{
    struct coll_engine *c = owner;
    struct coll_run *r = &c->run[arg];
    SIM_CHECK(r->pending > 0);
    if (--r->pending == 0)
        engine_after(e, r->stage_lat_ps, c->comp, COLL_EV_STAGE, arg, NULL);
}
