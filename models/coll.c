/* coll.c: collectives on the system's links.  See coll.h and
 * docs/collectives.md.
 *
 * The model, in one paragraph.  A ring collective over n ranks is R rounds
 * (all-reduce 2(n-1): reduce-scatter then all-gather; all-gather and
 * reduce-scatter n-1; broadcast n-1 hops of a chain from the root); in each
 * round a rank sends its successor d bytes (S/n, or S for broadcast).  NCCL
 * cuts each round's data into C slices (its protocol's step size times the
 * channels) and pipelines them: slice c of round k may go once slice c of
 * round k-1 has arrived, so the rounds and slices form a wavefront of
 * R + C - 1 steps.  strata runs that wavefront: each step starts, for every
 * rank, one flow per link, switch and memory of its route carrying what the
 * rank sends in that step, and ends when all have drained, plus one hop
 * latency while the pipeline is still filling (the first R steps).  The
 * middle steps, where every round is busy, are one stage of many slices,
 * so a collective costs at most 2R stages, never an event per slice or per
 * byte.  The protocol sets what share of a link's bytes is data (LL sends
 * a flag with every 8 bytes: half; LL128 120 of 128; Simple all), the slice
 * size and the hop latency; channels cap what one rank copies per second.
 * All-to-all (and all-gather with algo direct) send every pair's share at
 * once in one stage.  Flows share links, switches and DRAM with everything
 * else running, so a collective slows down next to other traffic and slows
 * it down, and a ring that crosses a slow link runs at that link's rate.
 *
 * Across nodes the data splits over one ring per rail, each entering and
 * leaving every node on its own rail (ring_order), as NCCL's rings do.
 * With mirrored ranks only the simulated ranks' hops, the hops into them,
 * each ring's narrowest hop and the hops on links the rings oversubscribe
 * carry flows (symmetric ranks).
 *
 * NVLS (NVLink SHARP, a switch with nvls): one stage in which every rank
 * sends S(1 + 1/n) up its link and receives as much (all-reduce), or
 * carries S the busier way (all-gather: S/n up, S down; reduce-scatter the
 * reverse), at the chip's nvls_efficiency of the link rate
 * (docs/collectives.md).
 *
 * Trees (all_reduce over several nodes): NCCL's double binary trees, two
 * per rail, a chain in each node; every edge carries its share up and down
 * in one stage, after NCCL's tree latencies (build_trees).
 *
 * A rank's kernel holds one SM per channel from its call until the data
 * has moved (hold): NCCL's CTAs spin while the other ranks come.
 *
 * What it leaves out: NVLS-tree and CollNet algorithms; the
 * reduction's arithmetic (its memory traffic is counted).
 */
#include "coll.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "flow.h"
#include "net.h"
#include "system.h"

/* NCCL's own figures, NVIDIA/nccl @5067397 (June 2026):
 * src/graph/tuning.cc ncclTunerConstantsDefaults (base latencies of the
 * ring algorithm and per-hop latencies per link class, us) and the protocol
 * factors of ncclTopoTuneModel (LL x0.5, LL128 x0.92); step sizes from
 * src/include/device.h and src/init.cc. */
static const double base_lat_us[CP_COUNT] = {6.6, 14.0, 8.4};      /* ring: LL, LL128, Simple */
static const double hop_lat_us[ST_COUNT][CP_COUNT] = {
    [ST_PEER] = {0.6, 1.9, 3.4},            /* NVLINK */
    [ST_PCIE] = {1.0, 2.5, 5.7},            /* PCI */
    [ST_NETWORK] = {2.7, 4.0, 14.0},        /* NET */
};
static const double proto_eff[CP_COUNT] = {0.5, 0.92, 1.0};
/* NCCL's tree figures, the same file: base latencies (LL, LL128, Simple),
 * per-hop latencies per link class, and its bandwidth refinements (tree
 * all-reduce busBw x 0.92; LL / 3.8; algbw half the busBw) */
static const double tree_base_lat_us[CP_COUNT] = {6.8, 14.0, 8.4};
static const double tree_hop_lat_us[ST_COUNT][CP_COUNT] = {
    [ST_PEER] = {0.6, 1.25, 4.0},
    [ST_PCIE] = {1.0, 1.9, 4.0},
    [ST_NETWORK] = {5.0, 8.5, 14.0},
};
static const double tree_bw_factor[CP_COUNT] = {0.92 / 3.8, 0.92 * 120.0 / 128.0, 0.92};
/* NVLS (NVLink SHARP) all-reduce: NCCL's latency for it on NVLink
 * (hwLatencies NVLINK NVLS Simple; base 0): the one stage's latency, and
 * what the choice between it and a ring weighs */
#define NVLS_LAT_US 25.0
/* Data bytes one channel moves per pipeline slice: LL 8 lines x 512
 * threads x 16-byte lines, half data (32 KiB); LL128 120 elements x 640
 * threads x 8 bytes (600 KiB); Simple 2 steps (ALLREDUCE_SLICESTEPS) of a
 * 4 MiB buffer in 8 steps (1 MiB). */
static const double proto_slice[CP_COUNT] = {32768.0, 614400.0, 1048576.0};
/* Channel tuning (src/enqueue.cc): a collective of B bytes runs on the
 * largest nc <= the channels with B >= nc x threads x threshold, threads
 * per channel 512 (LL, Simple) or 640 (LL128), thresholds 8 B per thread (LL
 * times the ranks, LL128) and 64 B (Simple), src/include/comm.h. */
static const double proto_threads[CP_COUNT] = {512, 640, 512};
static const double proto_thread_bytes[CP_COUNT] = {8, 8, 64};

static const char *const proto_names[CP_COUNT] = {
#define COLL_PROTO_NAME_(e, n) n,
    COLL_PROTO_MAP(COLL_PROTO_NAME_)
#undef COLL_PROTO_NAME_
};

enum { COLL_EV_BEGIN = 1, COLL_EV_STAGE = 2 };

struct coll_run {
    uint32_t arrived;
    int finished;
    uint64_t t_all;             /* the last rank arrived */
    uint64_t t_begin;           /* data began to move (after the call overhead) */
    enum coll_proto proto;
    enum coll_algo algo;        /* resolved: ring, direct or nvls */
    double eff;                 /* share of a link's bytes that is data (protocol, NVLS) */
    uint32_t channels;          /* channels it runs on */
    double cap;                 /* data bytes/s one rank can send (0 = no limit) */
    uint32_t rounds, slices;    /* R, C */
    double slice;               /* data bytes one rank sends per slice */
    uint32_t step;              /* first wavefront step of the next stage */
    uint32_t pending;           /* flows in flight */
    uint64_t stage_lat_ps;      /* hop latency to wait out after this stage's flows */
};

struct coll_group {
    uint32_t nreal;             /* members with ops (the rest mirror them) */
    uint32_t nrings;            /* rings the data is split over (one per rail across nodes) */
    uint32_t *ring;             /* nrings x n: position p of ring k is group rank
                                 * ring[k * n + p]; it sends to position p + 1 ... */
    struct sys_route *routes;   /* ... along routes[k * n + p] */
    uint32_t *real_pos;         /* nrings x nreal: the positions of ring k whose rank has
                                 * ops (a stage visits only those: 16384 mirrored ranks) */
    uint32_t *slow_pos;         /* nrings: ring k's narrowest hop when a mirror sends it to
                                 * a mirror, else UINT32_MAX */
    uint32_t *extra_off;        /* nrings + 1: ring k's hops between two mirrors that a
                                 * stage sends too are extra_pos[extra_off[k] ..
                                 * extra_off[k + 1]): its narrowest, and those on a link
                                 * the rings oversubscribe (mirror_hops) */
    uint32_t *extra_pos;
    enum sys_transport transport; /* the slowest class any ring hop crosses */
    int8_t level;               /* chip level of the ring's narrowest link */
    uint8_t nvls;               /* one switch with nvls joins every rank: NVLink SHARP */
    double min_bw;              /* narrowest server of a ring x the rings, bytes/s */
    /* NCCL's trees (groups over two or more nodes of equal size): edges
     * child -> parent, the share of the data each carries, both ways */
    uint32_t nedges;
    struct tree_edge *edges;
    uint32_t tree_intra, tree_inter;   /* hops from a leaf to the root: in a node, across */
    enum sys_transport intra_transport;
};

struct tree_edge {
    uint32_t child, parent;     /* group ranks */
    double share;
    struct sys_route up, down;  /* routes child -> parent and back (unset between mirrors) */
};

struct coll_engine {
    struct engine *e;
    uint32_t comp;
    const struct hw_config *cfg;
    const struct trace *t;
    struct run_env *env;
    struct coll_run *run;               /* per trace collective */
    struct op_result **res;             /* per rank op, as trace.coll_ops */
    struct coll_group *group;           /* per trace group */
    model_done_fn done;
    void *ctx;
    uint32_t *island;                   /* per system node: its node of the cluster (the
                                         * parts joined without a network link) */
};

double coll_busbw_factor(enum coll_kind k, uint32_t n)
{
    switch (k) {
    case COLL_ALL_REDUCE: return 2.0 * (n - 1) / n;
    case COLL_ALL_GATHER:
    case COLL_REDUCE_SCATTER:
    case COLL_ALL_TO_ALL: return (double)(n - 1) / n;
    case COLL_BROADCAST:
    case COLL_SEND_RECV:
    case COLL_KIND_COUNT: break;
    }
    return 1.0;
}

static void coll_handle(struct engine *e, void *self, const struct eq_event *ev);

static int is_mirror(const struct trace *t, uint32_t dev)
{
    return t->mirror != NULL && t->mirror[dev];
}
static const struct comp_ops coll_comp_ops = {"collectives", coll_handle};

/* The narrowest server of a route, bytes/s, its level and its class. */
static void route_limits(const struct hw_system *sys, const struct sys_route *rt, double *bw,
                         int8_t *level, enum sys_transport *cls)
{
    for (uint32_t h = 0; h < rt->nhops; h++) {
        const struct sys_link *l = &sys->links[rt->link[h]];
        if (l->bw_bytes_per_s < *bw) {
            *bw = l->bw_bytes_per_s;
            *level = l->level;
        }
        if (l->transport > *cls)
            *cls = l->transport;
    }
    for (uint32_t v = 0; v < rt->nvia; v++) {
        double b = sys->nodes[rt->via[v]].bw_bytes_per_s / rt->via_times[v];
        if (b > 0 && b < *bw)
            *bw = b;
    }
}

/* Routes of ring k of group g (its order in cg->ring), and its limits: 0,
 * or -1 if a hop has no path (with pxn, a hop may pass another GPU:
 * sys_route_pxn). */
static int ring_routes(struct coll_engine *c, uint32_t g, uint32_t k, double *min_bw, int pxn)
{
    const struct trace *t = c->t;
    const struct trace_group *gr = &t->groups[g];
    struct coll_group *cg = &c->group[g];
    const struct run_env *env = c->env;
    uint32_t n = gr->n;
    *min_bw = HUGE_VAL;
    double slow_bw = HUGE_VAL;
    cg->slow_pos[k] = UINT32_MAX;
    for (uint32_t p = 0; p < n; p++) {
        uint32_t a = t->group_dev[gr->off + cg->ring[k * n + p]];
        uint32_t b = t->group_dev[gr->off + cg->ring[k * n + (p + 1) % n]];
        /* with mirrors, a hop between two of them is run only when it is
         * the ring's narrowest (symmetric ranks: the others are taken to
         * move what the simulated ones' hops move, no slower) */
        struct sys_route *rt = &cg->routes[k * n + p];
        if ((pxn ? sys_route_pxn : sys_route)(env->sys, env->sysdev[a], env->sysdev[b], rt, env->net->scratch) != 0)
            return -1;
        double bw = HUGE_VAL;
        int8_t lv = cg->level;
        enum sys_transport cls = cg->transport;
        route_limits(env->sys, rt, &bw, &lv, &cls);
        if (bw < slow_bw) {
            slow_bw = bw;
            cg->slow_pos[k] = t->mirror != NULL && t->mirror[a] && t->mirror[b] ? p : UINT32_MAX;
        }
        route_limits(env->sys, rt, min_bw, &cg->level, &cg->transport);
    }
    return 0;
}

static void group_alloc(struct coll_group *cg, uint32_t nrings, uint32_t n)
{
    free(cg->ring);
    free(cg->routes);
    cg->nrings = nrings;
    cg->ring = sim_xcalloc((size_t)nrings * n, sizeof *cg->ring);
    cg->routes = sim_xcalloc((size_t)nrings * n, sizeof *cg->routes);
    free(cg->slow_pos);
    cg->slow_pos = sim_xcalloc(nrings, sizeof *cg->slow_pos);
    cg->level = -1;
    cg->transport = ST_PEER;
}

/* The rings NCCL would build.  The group's order when every hop has a
 * path (one node: a single ring already has every link).  Else the group
 * falls into islands (runs joined without a network hop: nodes); with
 * islands of equal size K, K rings, ring k entering and leaving every
 * node on rail k (forward from local rank k in even islands, backward from
 * k - 1 in odd ones), so the crossings spread over all the rails; failing
 * that, one such ring (k = 0); failing that, the same ring with PXN hops. */
static int ring_order(struct coll_engine *c, uint32_t g)
{
    const struct trace *t = c->t;
    const struct trace_group *gr = &t->groups[g];
    struct coll_group *cg = &c->group[g];
    const struct run_env *env = c->env;
    uint32_t n = gr->n;
    double bw;
    group_alloc(cg, 1, n);
    for (uint32_t r = 0; r < n; r++)
        cg->ring[r] = r;
    if (ring_routes(c, g, 0, &bw, 0) == 0) {
        cg->min_bw = bw;
        return 0;
    }
    /* islands: starts of runs without a network hop between neighbours */
    uint32_t *start = sim_xcalloc((size_t)n + 1, sizeof *start), nisl = 0;
    start[nisl++] = 0;
    for (uint32_t r = 1; r < n; r++) {
        struct sys_route rt;
        uint32_t a = t->group_dev[gr->off + r - 1], b = t->group_dev[gr->off + r];
        int edge = sys_route(env->sys, env->sysdev[a], env->sysdev[b], &rt, env->net->scratch) != 0;
        for (uint32_t h = 0; !edge && h < rt.nhops; h++)
            edge = env->sys->links[rt.link[h]].transport == ST_NETWORK;
        if (edge)
            start[nisl++] = r;
    }
    start[nisl] = n;
    uint32_t K = start[1] - start[0];
    int equal = nisl >= 2;
    for (uint32_t i = 0; i < nisl; i++)
        equal = equal && start[i + 1] - start[i] == K;
    /* attempt 2: the one ring with PXN hops (a crossing between rails goes
     * over NVLink to the GPU on the destination's rail, as NCCL's PXN
     * does), for islands of unequal size whose crossings cannot all stay
     * on a rail */
    for (int attempt = equal ? 0 : 1; attempt < 3; attempt++) {
        uint32_t nr = attempt == 0 ? K : 1;
        group_alloc(cg, nr, n);
        for (uint32_t k = 0; k < nr; k++)
            for (uint32_t i = 0, p = 0; i < nisl; i++) {
                uint32_t s0 = start[i], sz = start[i + 1] - s0;
                for (uint32_t j = 0; j < sz; j++, p++)
                    cg->ring[k * n + p] = i % 2 == 0 ? s0 + (k + j) % sz
                                                     : s0 + (k + 2 * sz - 1 - j) % sz;
            }
        double total = 0;
        int ok = 1;
        for (uint32_t k = 0; k < nr && ok; k++) {
            ok = ring_routes(c, g, k, &bw, attempt == 2) == 0;
            total += bw;
        }
        if (ok) {
            cg->min_bw = total;
            free(start);
            return 0;
        }
    }
    free(start);
    return -1;
}

static uint32_t uf_find(uint32_t *p, uint32_t x)
{
    while (p[x] != x) {
        p[x] = p[p[x]];
        x = p[x];
    }
    return x;
}

/* Which cluster node each system node is in: the parts the links other
 * than network links join (union-find; no route per pair: 16384 ranks). */
static void find_islands(struct coll_engine *c)
{
    const struct hw_system *sys = c->env->sys;
    c->island = sim_xcalloc(sys->nnodes + 1, sizeof *c->island);
    for (uint32_t v = 0; v < sys->nnodes; v++)
        c->island[v] = v;
    for (uint32_t l = 0; l < sys->nlinks; l++) {
        if (sys->links[l].transport == ST_NETWORK)
            continue;
        uint32_t a = uf_find(c->island, sys->links[l].a), b = uf_find(c->island, sys->links[l].b);
        if (a != b)
            c->island[a < b ? b : a] = a < b ? a : b;
    }
    for (uint32_t v = 0; v < sys->nnodes; v++)
        c->island[v] = uf_find(c->island, v);
}

/* NCCL's trees over a group that spans N >= 2 nodes of K ranks each (runs
 * of the group's order on one cluster node): for each rail k (local rank k
 * heads its node), two binary trees over the nodes, the second the first
 * mirrored so that a node inner in one is a leaf in the other (NCCL's
 * double binary tree), each with a chain through the node's ranks from its
 * head; each tree carries 1/(2K) of the data.  No trees for one node,
 * nodes of different sizes, or an edge without a path. */
static void build_trees(struct coll_engine *c, uint32_t g)
{
    const struct trace *t = c->t;
    const struct trace_group *gr = &t->groups[g];
    struct coll_group *cg = &c->group[g];
    const struct run_env *env = c->env;
    uint32_t n = gr->n;
    if (c->island == NULL)
        find_islands(c);
    uint32_t *start = sim_xcalloc((size_t)n + 1, sizeof *start), nisl = 0;
    start[nisl++] = 0;
    for (uint32_t r = 1; r < n; r++) {
        uint32_t a = t->group_dev[gr->off + r - 1], b = t->group_dev[gr->off + r];
        if (c->island[env->sysdev[a]] != c->island[env->sysdev[b]])
            start[nisl++] = r;
    }
    start[nisl] = n;
    uint32_t K = start[1], N = nisl;
    int equal = N >= 2;
    for (uint32_t i = 0; i < N; i++)
        equal = equal && start[i + 1] - start[i] == K;
    if (!equal) {
        free(start);
        return;
    }
    cg->nedges = 2 * K * (N * (K - 1) + (N - 1));
    cg->edges = sim_xcalloc(cg->nedges, sizeof *cg->edges);
    cg->tree_intra = K - 1;
    cg->tree_inter = 0;
    while ((2u << cg->tree_inter) <= N)     /* depth of position N - 1: floor(log2 N) */
        cg->tree_inter++;
    cg->intra_transport = ST_PEER;
    double share = 1.0 / (2.0 * K);
    uint32_t e = 0;
    int ok = 1;
    for (uint32_t k = 0; k < K; k++)
        for (uint32_t tr = 0; tr < 2; tr++) {
            for (uint32_t i = 0; i < N; i++)        /* the chains, toward local rank k */
                for (uint32_t j = 1; j < K; j++)
                    cg->edges[e++] = (struct tree_edge){.child = start[i] + (k + j) % K,
                                                        .parent = start[i] + (k + j - 1) % K,
                                                        .share = share};
            for (uint32_t p = 1; p < N; p++) {      /* heap order; mirrored in the second */
                uint32_t ic = tr == 0 ? p : N - 1 - p, q = (p - 1) / 2;
                uint32_t ip = tr == 0 ? q : N - 1 - q;
                cg->edges[e++] = (struct tree_edge){.child = start[ic] + k, .parent = start[ip] + k,
                                                    .share = share};
            }
        }
    SIM_CHECK(e == cg->nedges);
    for (uint32_t q = 0; q < cg->nedges && ok; q++) {
        struct tree_edge *te = &cg->edges[q];
        uint32_t a = t->group_dev[gr->off + te->child], b = t->group_dev[gr->off + te->parent];
        if (is_mirror(t, a) && is_mirror(t, b))
            continue;
        ok = sys_route(env->sys, env->sysdev[a], env->sysdev[b], &te->up, env->net->scratch) == 0 &&
             sys_route(env->sys, env->sysdev[b], env->sysdev[a], &te->down, env->net->scratch) == 0;
        for (uint32_t h = 0; ok && h < te->up.nhops; h++) {
            enum sys_transport tc = env->sys->links[te->up.link[h]].transport;
            if (tc != ST_NETWORK && tc > cg->intra_transport)
                cg->intra_transport = tc;
        }
    }
    if (!ok) {
        free(cg->edges);
        cg->edges = NULL;
        cg->nedges = 0;
    }
    free(start);
}

/* Whether group g can run NVLS: the chip has it, the group is one ring
 * within a node, and every hop of it passes a switch with nvls. */
static int group_nvls(const struct coll_engine *c, uint32_t g)
{
    const struct coll_group *cg = &c->group[g];
    const struct hw_system *sys = c->env->sys;
    if (c->cfg->coll_nvls_eff <= 0 || cg->nrings != 1 || cg->transport == ST_NETWORK)
        return 0;
    uint32_t n = c->t->groups[g].n, routed = 0;
    for (uint32_t p = 0; p < n; p++) {
        const struct sys_route *rt = &cg->routes[p];
        if (rt->nhops == 0)
            continue;               /* between two mirrors: not routed */
        int through = 0;
        for (uint32_t h = 0; h < rt->nhops && !through; h++) {
            const struct sys_link *l = &sys->links[rt->link[h]];
            through = sys->nodes[l->a].nvls || sys->nodes[l->b].nvls;
        }
        if (!through)
            return 0;
        routed++;
    }
    return routed > 0;
}

/* Which hops between two mirrors a stage runs (symmetric ranks).  A
 * mirror sends what its twin sends, at the twin's pace, unless one of its
 * hop's links or switches is shared with more ring hops than it can carry
 * at their full rate: on a torus, two data-parallel rings interleaved
 * over the same chips cross each other's links, and a full run's stage
 * waits for those hops at half speed.  So every ring hop of every group
 * with a collective adds its route's narrowest rate to each link
 * direction and switch on its route, and a hop between two mirrors that
 * crosses one loaded past its rate is run, as is each ring's narrowest
 * hop.  A non-blocking switched network loads nothing past its rate, so
 * it adds no flows there (16384 mirrored ranks stay cheap). */
static void mirror_hops(struct coll_engine *c)
{
    const struct trace *t = c->t;
    const struct hw_system *sys = c->env->sys;
    double *lload = sim_xcalloc((size_t)sys->nlinks * 2 + 1, sizeof *lload);
    double *vload = sim_xcalloc((size_t)sys->nnodes + 1, sizeof *vload);
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t g = 0; g < t->ngroups; g++) {
            struct coll_group *cg = &c->group[g];
            uint32_t n = t->groups[g].n;
            if (pass == 1) {
                free(cg->extra_off);
                free(cg->extra_pos);
                cg->extra_off = sim_xcalloc((size_t)cg->nrings + 1, sizeof *cg->extra_off);
                cg->extra_pos = NULL;
            }
            uint32_t nx = 0, capx = 0;
            for (uint32_t k = 0; k < cg->nrings; k++) {
                for (uint32_t p = 0; p < n; p++) {
                    const struct sys_route *rt = &cg->routes[(size_t)k * n + p];
                    if (rt->nhops == 0 && rt->nvia == 0)
                        continue;       /* not routed (no collective on the group) */
                    if (pass == 0) {
                        double bw = HUGE_VAL;
                        int8_t lv = -1;
                        enum sys_transport cls = ST_PEER;
                        route_limits(sys, rt, &bw, &lv, &cls);
                        for (uint32_t h = 0; h < rt->nhops; h++)
                            lload[(size_t)rt->link[h] * 2 + rt->dir[h]] += bw;
                        for (uint32_t v = 0; v < rt->nvia; v++)
                            vload[rt->via[v]] += bw * rt->via_times[v];
                        continue;
                    }
                    uint32_t a = t->group_dev[t->groups[g].off + cg->ring[(size_t)k * n + p]];
                    uint32_t b = t->group_dev[t->groups[g].off + cg->ring[(size_t)k * n + (p + 1) % n]];
                    if (!is_mirror(t, a) || !is_mirror(t, b))
                        continue;       /* run anyway: from a simulated rank, or into one */
                    int run = cg->slow_pos[k] == p;
                    for (uint32_t h = 0; h < rt->nhops && !run; h++)
                        run = lload[(size_t)rt->link[h] * 2 + rt->dir[h]] >
                              sys->links[rt->link[h]].bw_bytes_per_s * (1.0 + 1e-9);
                    for (uint32_t v = 0; v < rt->nvia && !run; v++) {
                        double cap = sys->nodes[rt->via[v]].bw_bytes_per_s;
                        run = cap > 0 && vload[rt->via[v]] > cap * (1.0 + 1e-9);
                    }
                    if (!run)
                        continue;
                    if (nx == capx) {
                        capx = capx ? 2 * capx : 8;
                        cg->extra_pos = sim_xrealloc(cg->extra_pos, (size_t)capx * sizeof *cg->extra_pos);
                    }
                    cg->extra_pos[nx++] = p;
                }
                if (pass == 1)
                    cg->extra_off[k + 1] = nx;
            }
        }
    free(lload);
    free(vload);
}

struct coll_engine *coll_create(struct engine *e, const struct hw_config *cfg,
                                const struct trace *t, struct run_env *env, struct diag *d)
{
    struct coll_engine *c = sim_xcalloc(1, sizeof *c);
    c->e = e;
    c->cfg = cfg;
    c->t = t;
    c->env = env;
    c->comp = engine_register(e, &coll_comp_ops, c);
    c->run = sim_xcalloc(t->ncolls, sizeof *c->run);
    uint64_t nrank_ops = 0;
    for (uint32_t k = 0; k < t->ncolls; k++)
        nrank_ops += t->groups[t->colls[k].group].n;
    c->res = sim_xcalloc(nrank_ops, sizeof *c->res);
    c->group = sim_xcalloc(t->ngroups, sizeof *c->group);
    uint8_t *used = sim_xcalloc(t->ngroups + 1, 1);     /* groups with a collective */
    for (uint32_t k = 0; k < t->ncolls; k++)
        used[t->colls[k].group] = 1;
    for (uint32_t g = 0; g < t->ngroups; g++) {
        if (!used[g]) {             /* no collective on it: no rings to build */
            group_alloc(&c->group[g], 1, t->groups[g].n);
            c->group[g].level = cfg->lv_peer >= 0 ? cfg->lv_peer : cfg->lv_host;
            continue;
        }
        if (ring_order(c, g) != 0) {
            free(used);
            const struct trace_group *gr = &t->groups[g];
            /* name the first op on this group, and the pair without a path */
            uint32_t at = 0;
            for (uint32_t i = 0; i < t->nops; i++)
                if (t->ops[i].kind == OP_COLLECTIVE && t->ops[i].u.coll.group == g) {
                    at = i;
                    break;
                }
            uint32_t a = 0, b = 0;
            for (uint32_t r = 0; r < gr->n; r++) {
                a = t->group_dev[gr->off + r];
                b = t->group_dev[gr->off + (r + 1) % gr->n];
                struct sys_route rt;
                if (sys_route(env->sys, env->sysdev[a], env->sysdev[b], &rt, env->net->scratch) != 0)
                    break;
            }
            char field[48];
            snprintf(field, sizeof field, "ops[%u].group", at);
            diag_set(d, DIAG_E_RANGE, t->path, t->ops[at].line, field,
                     "devices '%s' and '%s' of the group have no path between them in system "
                     "%s (no link, or more than %d hops), and no ring through the group has "
                     "one on every hop", t->devices[a], t->devices[b], env->sys->name,
                     SYS_MAX_HOPS);
            coll_destroy(c);
            return NULL;
        }
        if (c->group[g].level < 0)
            c->group[g].level = cfg->lv_peer >= 0 ? cfg->lv_peer : cfg->lv_host;
        const struct trace_group *gr = &t->groups[g];
        struct coll_group *cg = &c->group[g];
        cg->nvls = group_nvls(c, g);
        build_trees(c, g);
        for (uint32_t r = 0; r < gr->n; r++)
            cg->nreal += !is_mirror(t, t->group_dev[gr->off + r]);
        cg->real_pos = sim_xcalloc((size_t)cg->nrings * cg->nreal + 1, sizeof *cg->real_pos);
        for (uint32_t k = 0, j = 0; k < cg->nrings; k++)
            for (uint32_t p = 0; p < gr->n; p++)
                if (!is_mirror(t, t->group_dev[gr->off + cg->ring[(size_t)k * gr->n + p]]))
                    cg->real_pos[j++] = p;
    }
    free(used);
    if (t->mirror != NULL)
        mirror_hops(c);
    /* an all_reduce that asks for nvls where there is none */
    for (uint32_t k = 0; k < t->ncolls; k++) {
        const struct trace_coll *tc = &t->colls[k];
        uint32_t r0 = 0;
        while (t->coll_ops[tc->ops_off + r0] == UINT32_MAX)
            r0++;
        uint32_t at = t->coll_ops[tc->ops_off + r0];
        char field[48];
        snprintf(field, sizeof field, "ops[%u].algo", at);
        if (t->ops[at].u.coll.algo == COLL_TREE && c->group[tc->group].nedges == 0) {
            diag_set(d, DIAG_E_UNSUPPORTED, t->path, t->ops[at].line, field,
                     "\"tree\" runs over two or more nodes with the same number of the group's "
                     "ranks each (in system %s this group is on one node or uneven); use "
                     "\"ring\" or \"auto\"", env->sys->name);
            coll_destroy(c);
            return NULL;
        }
        if (t->ops[at].u.coll.algo != COLL_NVLS || c->group[tc->group].nvls)
            continue;
        diag_set(d, DIAG_E_UNSUPPORTED, t->path, t->ops[at].line, field,
                 "\"nvls\" needs every rank of the group on one NVLink switch that reduces "
                 "(a switch node with nvls: true in system %s, and collectives.nvls_efficiency "
                 "in the chip's config%s); use \"ring\" or \"auto\"", env->sys->name,
                 cfg->coll_nvls_eff > 0 ? "" : ", which this chip lacks");
        coll_destroy(c);
        return NULL;
    }
    return c;
}

void coll_destroy(struct coll_engine *c)
{
    if (c == NULL)
        return;
    free(c->run);
    free(c->res);
    for (uint32_t g = 0; c->group != NULL && g < c->t->ngroups; g++) {
        free(c->group[g].ring);
        free(c->group[g].routes);
        free(c->group[g].real_pos);
        free(c->group[g].slow_pos);
        free(c->group[g].extra_off);
        free(c->group[g].extra_pos);
        free(c->group[g].edges);
    }
    free(c->group);
    free(c->island);
    free(c);
}

/* Channels a collective of `bytes` runs on with protocol p, over n ranks. */
static uint32_t channels_for(const struct coll_engine *c, enum coll_proto p, double bytes,
                             uint32_t n)
{
    double per = proto_threads[p] * proto_thread_bytes[p] * (p == CP_LL ? n : 1);
    double nc = floor(bytes / per);
    if (nc < 1)
        nc = 1;
    return nc < c->cfg->coll_channels ? (uint32_t)nc : c->cfg->coll_channels;
}

/* The data rate one rank can push with protocol p on nc channels: the
 * channels' copy rate, times the share of the bytes that is data for the
 * flag-carrying protocols; LL's own per-channel rate where the config gives
 * one (0 = no limit). */
static double rank_cap(const struct coll_engine *c, enum coll_proto p, uint32_t nc)
{
    double cap = c->cfg->coll_channel_bw > 0 ? c->cfg->coll_channel_bw * nc * proto_eff[p] : 0;
    double ll = c->cfg->coll_ll_bw;
    (void)nc;
    if (p == CP_LL && ll > 0 && (cap == 0 || ll < cap))
        cap = ll;
    return cap;
}

/* Rounds and bytes per round per rank of a collective with its algorithm. */
static void coll_shape(const struct op *o, uint32_t n, enum coll_algo algo, uint32_t *rounds,
                       double *per_round)
{
    double S = (double)o->u.coll.bytes;
    if (algo == COLL_TREE) {            /* all of it up the trees and down again */
        *rounds = 1;
        *per_round = S;
        return;
    }
    if (algo == COLL_NVLS) {
        /* all_reduce: all of it up to the switch and back, plus 1/n; all_gather
         * sends S/n up and receives S (the switch multicasts each share),
         * reduce_scatter sends S and receives S/n (the switch reduces each
         * rank's share): S over the busier direction (NVIDIA/nccl#1083) */
        *rounds = 1;
        *per_round = o->u.coll.what == COLL_ALL_REDUCE ? S * (1.0 + 1.0 / n) : S;
        return;
    }
    if (algo == COLL_DIRECT) {          /* every pair's share at once */
        *rounds = 1;
        *per_round = S / n * (n - 1);
        return;
    }
    switch (o->u.coll.what) {
    case COLL_ALL_REDUCE: *rounds = 2 * (n - 1); *per_round = S / n; return;
    case COLL_ALL_GATHER:
    case COLL_REDUCE_SCATTER: *rounds = n - 1; *per_round = S / n; return;
    case COLL_BROADCAST:
    case COLL_SEND_RECV: *rounds = n - 1; *per_round = S; return;
    case COLL_ALL_TO_ALL:
    case COLL_KIND_COUNT: break;
    }
    *rounds = 1;
    *per_round = S;
}

/* Pick the protocol as NCCL's tuning model does: the least of base
 * latency + R hop latencies + bytes over the ring's bandwidth for it. */
static enum coll_proto pick_proto(const struct coll_engine *c, const struct coll_group *g,
                                  uint32_t n, double bytes, uint32_t rounds, double per_round,
                                  double *t_best)
{
    enum coll_proto best = CP_SIMPLE;
    double best_t = HUGE_VAL;
    for (int p = 0; p < CP_COUNT; p++) {
        if (c->cfg->coll_protocols != 0 && !(c->cfg->coll_protocols & (1u << p)))
            continue;       /* not enabled on this system */
        double bw = g->min_bw * proto_eff[p];
        double cap = rank_cap(c, (enum coll_proto)p, channels_for(c, (enum coll_proto)p, bytes, n));
        if (cap > 0 && cap < bw)
            bw = cap;
        double tt = (base_lat_us[p] + rounds * hop_lat_us[g->transport][p] * c->cfg->coll_hop_scale) *
                        1e-6 +
                    rounds * per_round / bw;
        if (tt < best_t) {
            best_t = tt;
            best = (enum coll_proto)p;
        }
    }
    *t_best = best_t;
    return best;
}

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

static void finish(struct coll_engine *c, uint32_t inst);

/* Start the next stage of collective inst, or finish it. */
static void run_stage(struct coll_engine *c, uint32_t inst)
{
    const struct trace *t = c->t;
    struct coll_run *r = &c->run[inst];
    const struct trace_coll *tc = &t->colls[inst];
    const struct trace_group *gr = &t->groups[tc->group];
    const struct coll_group *cg = &c->group[tc->group];
    const struct op *o0 = &t->ops[t->coll_ops[tc->ops_off]];
    uint32_t n = gr->n, R = r->rounds, C = r->slices;
    uint32_t last = R + C - 1;          /* wavefront steps */
    if (r->step >= last) {
        finish(c, inst);
        return;
    }
    double cap = r->cap;
    /* NVLS: one stage that costs NCCL's NVLS latency (its tuning figure;
     * the multicast and its synchronisation, not a ring's hops) */
    uint64_t hop_ps = (uint64_t)llround((r->algo == COLL_NVLS ? NVLS_LAT_US
                                                              : hop_lat_us[cg->transport][r->proto]) *
                                        c->cfg->coll_hop_scale * 1e6);
    r->pending = 0;
    if (r->algo == COLL_TREE) {
        /* every edge at once, up (reduce) and down (broadcast): the slices
         * pipeline through the tree, so its busiest links set the rate;
         * the fill is 2 (intra + inter) hops of NCCL's tree latencies */
        double S = (double)o0->u.coll.bytes;
        for (uint32_t q = 0; q < cg->nedges; q++) {
            const struct tree_edge *te = &cg->edges[q];
            uint32_t dc = t->group_dev[gr->off + te->child], dp = t->group_dev[gr->off + te->parent];
            int mc = is_mirror(t, dc), mp = is_mirror(t, dp);
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
        r->step = last;
        r->stage_lat_ps = (uint64_t)llround(
            2.0 * (cg->tree_intra * tree_hop_lat_us[cg->intra_transport][r->proto] +
                   cg->tree_inter * tree_hop_lat_us[ST_NETWORK][r->proto]) *
            c->cfg->coll_hop_scale * 1e6);
    } else if (r->algo == COLL_DIRECT) {
        /* one stage: every rank sends every other its share at once */
        double pair = (double)o0->u.coll.bytes / n;
        double pcap = cap > 0 ? cap / (n - 1) : 0;
        for (uint32_t a = 0; a < n; a++) {
            uint32_t da = t->group_dev[gr->off + a];
            struct op_result *res = c->res[tc->ops_off + a];
            if (is_mirror(t, da))
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
        r->step = last;
        r->stage_lat_ps = hop_ps;
    } else {
        /* steps [s0, s1]: one step while filling or draining, all the
         * steps where every round is busy at once */
        uint32_t s0 = r->step, m = R < C ? R : C, M = R < C ? C : R, s1 = s0;
        if (s0 + 1 >= m && s0 + 1 <= M)
            s1 = M - 1;
        uint32_t lat_steps = s0 < R ? (s1 < R ? s1 : R - 1) - s0 + 1 : 0;
        r->stage_lat_ps = hop_ps * lat_steps;
        /* memory per byte sent: a ring's reduction reads the incoming
         * slice and its own; NVLS reads the input once and writes the
         * result once, of S(1 + 1/n) bytes on the wire */
        /* memory per link byte: NVLS all_reduce reads the buffer and writes
         * the result once (S of S(1 + 1/n)); NVLS all_gather reads the
         * rank's share and writes all, reduce_scatter the reverse */
        double nvls_part = 1.0 / (1.0 + 1.0 / n);
        int nvls_ag = r->algo == COLL_NVLS && o0->u.coll.what == COLL_ALL_GATHER;
        int nvls_rs = r->algo == COLL_NVLS && o0->u.coll.what == COLL_REDUCE_SCATTER;
        double read_factor = nvls_ag ? 1.0 / n
                             : r->algo == COLL_NVLS && !nvls_rs ? nvls_part
                             : nvls_rs ? 1.0
                             : o0->u.coll.what == COLL_ALL_REDUCE ? 1.5
                             : o0->u.coll.what == COLL_REDUCE_SCATTER ? 2.0 : 1.0;
        double write_factor = nvls_rs ? 1.0 / n : nvls_ag ? 1.0 : r->algo == COLL_NVLS ? nvls_part : 1.0;
        uint32_t rr = 0;            /* the root's group rank */
        /* a send_recv is a broadcast of two: its root (the sender) to the other */
        int chain = o0->u.coll.what == COLL_BROADCAST || o0->u.coll.what == COLL_SEND_RECV;
        if (chain && o0->u.coll.root != TRACE_NO_DEVICE)
            rr = (uint32_t)trace_group_rank(t, tc->group, o0->u.coll.root);
        double share = 1.0 / cg->nrings, rcap = cap > 0 ? cap / cg->nrings : 0;
        for (uint32_t k = 0; k < cg->nrings; k++) {
            const uint32_t *ring = cg->ring + (size_t)k * n;
            uint32_t root = 0;      /* the root's position in this ring (broadcast) */
            while (chain && ring[root] != rr)
                root++;
            for (uint32_t q = 0; q < cg->nreal; q++) {  /* the ring's positions with ops */
                uint32_t a = cg->real_pos[(size_t)k * cg->nreal + q];
                /* slices rank a sends in steps s0..s1 */
                double slices = 0;
                if (chain) {
                    uint32_t hop = (a + n - root) % n;      /* its hop in the chain */
                    if (hop < R) {
                        uint64_t lo = s0 > hop ? s0 : hop, hi = s1 < hop + C - 1 ? s1 : hop + C - 1;
                        slices = hi >= lo ? (double)(hi - lo + 1) : 0;
                    }
                } else {
                    uint32_t act = s0 + 1;  /* rounds busy at step s0 */
                    if (act > m)
                        act = m;
                    if (act > last - s0)
                        act = last - s0;
                    slices = (double)act * (s1 - s0 + 1);   /* the merged middle: m each step */
                }
                if (slices <= 0)
                    continue;
                uint32_t ra = ring[a], rb = ring[(a + 1) % n];
                uint32_t da = t->group_dev[gr->off + ra], db = t->group_dev[gr->off + rb];
                if (is_mirror(t, da))
                    continue;       /* a mirror sends what its simulated twin sends */
                send_bytes(c, r, inst, &cg->routes[(size_t)k * n + a], da, db,
                           slices * r->slice * share, read_factor, write_factor, rcap,
                           c->res[tc->ops_off + ra]);
                /* what a mirror predecessor sends into this rank: its links
                 * and memory carry that too (symmetric ranks: the same
                 * slices); its bytes are the mirror's, not this rank's */
                uint32_t pa = (a + n - 1) % n, dp = t->group_dev[gr->off + ring[pa]];
                if (is_mirror(t, dp) && !chain) {
                    struct op_result scratch;
                    memset(&scratch, 0, sizeof scratch);
                    send_bytes(c, r, inst, &cg->routes[(size_t)k * n + pa], dp, da,
                               slices * r->slice * share, read_factor, write_factor, rcap,
                               &scratch);
                }
                /* and the hops between two mirrors that pace the ring or
                 * load its links as a full run's would (mirror_hops; once
                 * a ring) */
                uint32_t x0 = 0, x1 = 0;
                if (q == 0 && !chain && cg->extra_off != NULL) {
                    x0 = cg->extra_off[k];
                    x1 = cg->extra_off[k + 1];
                }
                for (uint32_t x = x0; x < x1; x++) {
                    struct op_result scratch;
                    memset(&scratch, 0, sizeof scratch);
                    uint32_t sp = cg->extra_pos[x];
                    uint32_t ds = t->group_dev[gr->off + ring[sp]];
                    uint32_t dd = t->group_dev[gr->off + ring[(sp + 1) % n]];
                    send_bytes(c, r, inst, &cg->routes[(size_t)k * n + sp], ds, dd,
                               slices * r->slice * share, read_factor, write_factor, rcap,
                               &scratch);
                }
            }
        }
        r->step = s1 + 1;
    }
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

/* A collective's kernel holds one SM per channel on its rank from the
 * rank's arrival (NCCL's CTAs spin there until the other ranks come)
 * until the data has moved (the model's hold_units; a mirror runs
 * nothing, so it holds nothing). */
static void hold(struct coll_engine *c, uint32_t dv, int32_t delta)
{
    const struct run_env *env = c->env;
    if (env->mops == NULL || env->mops->hold_units == NULL || env->devs == NULL ||
        is_mirror(c->t, dv) || env->devs[dv] == NULL)
        return;
    env->mops->hold_units(env->devs[dv], delta);
}

static void coll_handle(struct engine *e, void *self, const struct eq_event *ev)
{
    (void)e;
    struct coll_engine *c = self;
    uint32_t inst = (uint32_t)ev->arg;
    if (ev->type == COLL_EV_BEGIN)
        c->run[inst].t_begin = c->e->now_ps;
    run_stage(c, inst);
}

static void finish(struct coll_engine *c, uint32_t inst)
{
    const struct trace *t = c->t;
    struct coll_run *r = &c->run[inst];
    const struct trace_coll *tc = &t->colls[inst];
    const struct trace_group *gr = &t->groups[tc->group];
    const struct coll_group *cg = &c->group[tc->group];
    uint64_t now = c->e->now_ps;
    r->finished = 1;
    for (uint32_t a = 0; a < gr->n; a++)
        hold(c, t->group_dev[gr->off + a], -(int32_t)r->channels);
    for (uint32_t a = 0; a < gr->n; a++) {
        struct op_result *res = c->res[tc->ops_off + a];
        if (res == NULL)
            continue;               /* a mirror */
        res->end_ps = now;
        /* waiting for the other ranks and moving the data both count as
         * time at the ring's narrowest link; the kernel launch as launch */
        res->time_ps[CAT_STALL + cg->level] += (r->t_all - res->start_ps) + (now - r->t_begin);
        res->time_ps[CAT_LAUNCH] += r->t_begin - r->t_all;
        res->kernels = 1;
        if (cg->nrings > 1 && r->algo == COLL_RING)
            snprintf(res->tile, sizeof res->tile, "%u rings %s %uch", cg->nrings,
                     proto_names[r->proto], r->channels);
        else
            snprintf(res->tile, sizeof res->tile, "%s %s %uch", coll_algo_name(r->algo),
                     proto_names[r->proto], r->channels);
    }
    for (uint32_t a = 0; a < gr->n; a++)
        if (t->coll_ops[tc->ops_off + a] != UINT32_MAX)
            c->done(c->e, c->ctx, t->coll_ops[tc->ops_off + a]);
}

static void plan(struct coll_engine *c, uint32_t inst, const struct op *o);

void coll_arrive(struct coll_engine *c, uint32_t op, struct op_result *res, model_done_fn done,
                 void *ctx)
{
    const struct trace *t = c->t;
    const struct op *o = &t->ops[op];
    uint32_t inst = o->u.coll.inst;
    struct coll_run *r = &c->run[inst];
    const struct trace_coll *tc = &t->colls[inst];
    int rank = trace_group_rank(t, tc->group, o->device);
    const struct coll_group *cg0 = &c->group[tc->group];
    SIM_CHECK(rank >= 0 && r->arrived < cg0->nreal);
    c->done = done;
    c->ctx = ctx;
    c->res[tc->ops_off + (uint32_t)rank] = res;
    res->start_ps = c->e->now_ps;
    if (r->arrived == 0)
        plan(c, inst, o);
    hold(c, o->device, (int32_t)r->channels);
    if (++r->arrived < cg0->nreal)
        return;
    /* every rank is in: start after the call overhead */
    r->t_all = c->e->now_ps;
    engine_after(c->e, c->cfg->launch_overhead_ps, c->comp, COLL_EV_BEGIN, inst, NULL);
}

/* How collective inst runs (algorithm, protocol, channels, rounds and
 * slices): fixed by its kind, size and group, so known at the first
 * rank's arrival. */
static void plan(struct coll_engine *c, uint32_t inst, const struct op *o)
{
    const struct trace *t = c->t;
    struct coll_run *r = &c->run[inst];
    const struct trace_coll *tc = &t->colls[inst];
    const struct trace_group *gr = &t->groups[tc->group];
    const struct coll_group *cg = &c->group[tc->group];
    r->algo = o->u.coll.algo != COLL_AUTO ? o->u.coll.algo
              : o->u.coll.what == COLL_ALL_TO_ALL ? COLL_DIRECT : COLL_RING;
    uint32_t rounds;
    double per_round, t_ring;
    coll_shape(o, gr->n, r->algo, &rounds, &per_round);
    double bytes = (double)o->u.coll.bytes;
    r->proto = pick_proto(c, cg, gr->n, bytes, rounds, per_round, &t_ring);
    /* NVLS where NCCL's tuning would take it: its latency (25 us, NCCL's
     * NVLINK NVLS Simple figure, which keeps it off small messages) plus
     * S(1 + 1/n) at the switch links' NVLS rate, against the ring's best */
    if (o->u.coll.algo == COLL_AUTO && o->u.coll.what == COLL_ALL_REDUCE && cg->nvls) {
        uint32_t nr;
        double pr;
        coll_shape(o, gr->n, COLL_NVLS, &nr, &pr);
        double t_nvls = NVLS_LAT_US * 1e-6 + pr / (cg->min_bw * c->cfg->coll_nvls_eff);
        if (t_nvls < t_ring) {
            r->algo = COLL_NVLS;
            rounds = nr;
            per_round = pr;
        }
    }
    /* trees (a group over several nodes) where NCCL's model prefers them:
     * its tree latency, 2 ((K - 1) intra-node + log2 N network hops), and
     * half the bus bandwidth (its algbw ratio for trees) */
    if ((o->u.coll.algo == COLL_TREE ||
         (o->u.coll.algo == COLL_AUTO && o->u.coll.what == COLL_ALL_REDUCE && r->algo == COLL_RING)) &&
        cg->nedges > 0) {
        double best = HUGE_VAL;
        enum coll_proto bp = CP_SIMPLE;
        for (int p = 0; p < CP_COUNT; p++) {
            if (c->cfg->coll_protocols != 0 && !(c->cfg->coll_protocols & (1u << p)))
                continue;
            double lat = tree_base_lat_us[p] +
                         2.0 * (cg->tree_intra * tree_hop_lat_us[cg->intra_transport][p] +
                                cg->tree_inter * tree_hop_lat_us[ST_NETWORK][p]) *
                             c->cfg->coll_hop_scale;
            double tt = lat * 1e-6 + 2.0 * bytes / (cg->min_bw * tree_bw_factor[p]);
            if (tt < best) {
                best = tt;
                bp = (enum coll_proto)p;
            }
        }
        if (o->u.coll.algo == COLL_TREE || best < t_ring) {
            r->algo = COLL_TREE;
            r->proto = bp;
            coll_shape(o, gr->n, COLL_TREE, &rounds, &per_round);
        }
    }
    if (r->algo == COLL_NVLS)
        r->proto = CP_SIMPLE;       /* NVLS runs Simple only */
    r->eff = proto_eff[r->proto] * (r->algo == COLL_NVLS ? c->cfg->coll_nvls_eff : 1.0);
    r->channels = channels_for(c, r->proto, bytes, gr->n);
    r->cap = rank_cap(c, r->proto, r->channels);
    r->rounds = rounds;
    double slice = proto_slice[r->proto] * r->channels;
    double ns = r->algo == COLL_TREE ? 1 : ceil(per_round / slice);  /* a tree: one stage */
    r->slices = ns < 1 ? 1 : ns > 1e9 ? 1000000000u : (uint32_t)ns;
    r->slice = per_round / r->slices;
    r->step = 0;
}

int coll_check_done(const struct coll_engine *c, struct diag *d)
{
    const struct trace *t = c->t;
    for (uint32_t k = 0; k < t->ncolls; k++) {
        if (c->run[k].finished)
            continue;
        const struct trace_coll *tc = &t->colls[k];
        const struct trace_group *gr = &t->groups[tc->group];
        /* a rank that never came: its op waits, through deps or stream
         * order, on something that waits on this collective */
        uint32_t miss = 0;
        for (uint32_t a = 0; a < gr->n; a++)
            if (c->res[tc->ops_off + a] == NULL && t->coll_ops[tc->ops_off + a] != UINT32_MAX) {
                miss = a;
                break;
            }
        const struct op *o = &t->ops[t->coll_ops[tc->ops_off + miss]];
        char field[48];
        snprintf(field, sizeof field, "ops[%u]", t->coll_ops[tc->ops_off + miss]);
        return diag_set(d, DIAG_E_CYCLE, t->path, o->line, field,
                        "collective op '%s' on device '%s' never started, so the %u other ranks "
                        "wait forever: its deps or the order of its stream wait on the "
                        "collective itself (a deadlock)", o->id, t->devices[o->device],
                        c->group[tc->group].nreal - 1);
    }
    return 0;
}
