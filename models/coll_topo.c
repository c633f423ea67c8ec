/* coll_topo.c: the paths a group's collectives take, as NCCL builds them:
 * its rings, its double binary trees, and whether NVLS can run.  See
 * coll_int.h and docs/collectives.md.
 *
 * What it models.  Within a node one ring in the group's order (it already
 * has every link), or on a full mesh without a switch rings that share no
 * link direction (mesh_rings).  Across nodes the data splits over one ring per rail,
 * each entering and leaving every node on its own rail (ring_order), as
 * NCCL's rings do.  Trees (all_reduce over several nodes): NCCL's double
 * binary trees, two per rail, a chain in each node; every edge carries its
 * share up and down in one stage, after NCCL's tree latencies
 * (build_trees).  Routes are the system's fewest-hop ones (system.h).
 *
 * What it leaves out: NCCL's topology search (its ring order is the
 * group's, or the rails'), and trees over nodes of unequal size.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "coll_int.h"
#include "net.h"

/* The narrowest server of a route, bytes/s, its level and its class. */
void coll_topo_route_limits(const struct hw_system *sys, const struct sys_route *rt, double *bw,
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
        coll_topo_route_limits(env->sys, rt, &bw, &lv, &cls);
        if (bw < slow_bw) {
            slow_bw = bw;
            cg->slow_pos[k] = t->mirror != NULL && t->mirror[a] && t->mirror[b] ? p : UINT32_MAX;
        }
        coll_topo_route_limits(env->sys, rt, min_bw, &cg->level, &cg->transport);
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

/* Whether every pair of the group's devices has a link of its own, one hop
 * with no switch between (an AMD MI300X platform's xGMI, an HLS-Gaudi2's
 * RoCE ports): a ring in the group's order then uses two of a device's
 * links, and the others idle. */
static int group_full_mesh(struct coll_engine *c, uint32_t g)
{
    const struct trace *t = c->t;
    const struct trace_group *gr = &t->groups[g];
    const struct run_env *env = c->env;
    for (uint32_t i = 0; i < gr->n; i++)
        for (uint32_t j = 0; j < gr->n; j++) {
            if (i == j)
                continue;
            struct sys_route rt;
            uint32_t a = t->group_dev[gr->off + i], b = t->group_dev[gr->off + j];
            if (sys_route(env->sys, env->sysdev[a], env->sysdev[b], &rt, env->net->scratch) != 0 ||
                rt.nhops != 1 || rt.nvia != 0 || env->sys->links[rt.link[0]].transport != ST_PEER)
                return 0;
        }
    return 1;
}

/* Hamiltonian cycle of positions 0..n-1 over the directed hops not yet
 * used (used[a * n + b]), depth first from 0 taking the nearest next
 * position first; 1 with it in ring[], 0 if none within *budget steps. */
static int mesh_cycle(uint32_t n, const uint8_t *used, uint8_t *vis, uint32_t *ring, uint32_t depth,
                      uint32_t *budget)
{
    if (*budget == 0)
        return 0;
    (*budget)--;
    uint32_t u = ring[depth - 1];
    if (depth == n)
        return !used[(size_t)u * n + ring[0]];
    for (uint32_t d = 1; d < n; d++) {
        uint32_t v = (u + d) % n;
        if (vis[v] || used[(size_t)u * n + v])
            continue;
        vis[v] = 1;
        ring[depth] = v;
        if (mesh_cycle(n, used, vis, ring, depth + 1, budget))
            return 1;
        vis[v] = 0;
    }
    return 0;
}

#define MESH_MAX_RANKS 64       /* a node's devices; larger groups keep one ring */
#define MESH_SEARCH_STEPS 100000u

/* On a full mesh of n >= 3, rings that share no link direction, as many
 * as a depth-first search finds one after another (n - 2 or n - 1 of the
 * n - 1 possible: 6 over eight devices, 13 over 14 or 15), so each link
 * direction carries at most one ring and the data splits over them, as
 * RCCL's and HCCL's channels spread over every link of such a platform.
 * Built in cg (cg->min_bw their total) where they apply; else cg keeps its
 * one ring.  Every hop of them is a link group_full_mesh routed. */
static void mesh_rings(struct coll_engine *c, uint32_t g)
{
    uint32_t n = c->t->groups[g].n;
    if (n < 3 || n > MESH_MAX_RANKS || c->cfg->coll_one_ring || !group_full_mesh(c, g))
        return;
    uint8_t *used = sim_xcalloc((size_t)n * n, 1), *vis = sim_xcalloc(n, 1);
    uint32_t *rings = sim_xcalloc((size_t)(n - 1) * n, sizeof *rings), nr = 0;
    for (; nr < n - 1; nr++) {
        uint32_t *ring = rings + (size_t)nr * n, budget = MESH_SEARCH_STEPS;
        memset(vis, 0, n);
        vis[0] = 1;
        ring[0] = 0;
        if (!mesh_cycle(n, used, vis, ring, 1, &budget))
            break;
        for (uint32_t p = 0; p < n; p++)
            used[(size_t)ring[p] * n + ring[(p + 1) % n]] = 1;
    }
    if (nr >= 2) {
        struct coll_group *cg = &c->group[g];
        group_alloc(cg, nr, n);
        memcpy(cg->ring, rings, (size_t)nr * n * sizeof *rings);
        double total = 0, bw;
        for (uint32_t k = 0; k < nr; k++) {
            SIM_CHECK(ring_routes(c, g, k, &bw, 0) == 0);
            total += bw;
        }
        cg->min_bw = total;
    }
    free(used);
    free(vis);
    free(rings);
}

/* The rings NCCL would build.  The group's order when every hop has a
 * path (one node: a single ring already has every link), or on a full
 * mesh the link-disjoint rings of mesh_rings.  Else the group
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
        mesh_rings(c, g);
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
        if (coll_is_mirror(t, a) && coll_is_mirror(t, b))
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

/* Group g's shape when no collective runs on it: one ring, no routes. */
void coll_topo_unused(struct coll_engine *c, uint32_t g)
{
    const struct hw_config *cfg = c->cfg;
    group_alloc(&c->group[g], 1, c->t->groups[g].n);
    c->group[g].level = cfg->lv_peer >= 0 ? cfg->lv_peer : cfg->lv_host;
}

int coll_topo_group(struct coll_engine *c, uint32_t g)
{
    const struct trace *t = c->t;
    const struct hw_config *cfg = c->cfg;
    if (ring_order(c, g) != 0)
        return -1;
    if (c->group[g].level < 0)
        c->group[g].level = cfg->lv_peer >= 0 ? cfg->lv_peer : cfg->lv_host;
    const struct trace_group *gr = &t->groups[g];
    struct coll_group *cg = &c->group[g];
    cg->nvls = group_nvls(c, g);
    build_trees(c, g);
    for (uint32_t r = 0; r < gr->n; r++)
        cg->nreal += !coll_is_mirror(t, t->group_dev[gr->off + r]);
    cg->real_pos = sim_xcalloc((size_t)cg->nrings * cg->nreal + 1, sizeof *cg->real_pos);
    for (uint32_t k = 0, j = 0; k < cg->nrings; k++)
        for (uint32_t p = 0; p < gr->n; p++)
            if (!coll_is_mirror(t, t->group_dev[gr->off + cg->ring[(size_t)k * gr->n + p]]))
                cg->real_pos[j++] = p;
    return 0;
}
