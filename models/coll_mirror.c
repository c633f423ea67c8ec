/* coll_mirror.c: symmetric ranks in collectives: which hops between two
 * mirrored ranks still carry flows.  See coll_int.h and
 * docs/collectives.md.
 *
 * What it models.  A trace may simulate some ranks and name the others
 * mirrors of them (trace.h): a mirror runs nothing and its bytes are its
 * simulated twin's.  With mirrored ranks only the simulated ranks' hops,
 * the hops into them, each ring's narrowest hop and the hops on links the
 * rings oversubscribe carry flows (coll_stage.c), so a collective over
 * 16384 ranks costs a stage per simulated rank, not per rank.
 *
 * What it leaves out: traffic other than the rings' on the links a mirror
 * hop crosses (it counts only the rings' load).
 */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "coll_int.h"

/* Every routed ring hop of every group adds its route's narrowest rate to
 * each link direction (lload) and switch (vload) on its route. */
static void add_ring_loads(const struct coll_engine *c, double *lload, double *vload)
{
    const struct trace *t = c->t;
    const struct hw_system *sys = c->env->sys;
    for (uint32_t g = 0; g < t->ngroups; g++) {
        const struct coll_group *cg = &c->group[g];
        uint32_t n = t->groups[g].n;
        for (uint32_t k = 0; k < cg->nrings; k++)
            for (uint32_t p = 0; p < n; p++) {
                const struct sys_route *rt = &cg->routes[(size_t)k * n + p];
                if (rt->nhops == 0 && rt->nvia == 0)
                    continue;       /* not routed (no collective on the group) */
                double bw = HUGE_VAL;
                int8_t lv = -1;
                enum sys_transport cls = ST_PEER;
                coll_topo_route_limits(sys, rt, &bw, &lv, &cls);
                for (uint32_t h = 0; h < rt->nhops; h++)
                    lload[(size_t)rt->link[h] * 2 + rt->dir[h]] += bw;
                for (uint32_t v = 0; v < rt->nvia; v++)
                    vload[rt->via[v]] += bw * rt->via_times[v];
            }
    }
}

/* Whether the hop of ring position p, between two mirrors, must run: it is
 * its ring's narrowest, or a link or switch on its route is loaded past
 * its rate. */
static int mirror_hop_runs(const struct hw_system *sys, const struct coll_group *cg, uint32_t k,
                           uint32_t p, const struct sys_route *rt, const double *lload,
                           const double *vload)
{
    int run = cg->slow_pos[k] == p;
    for (uint32_t h = 0; h < rt->nhops && !run; h++)
        run = lload[(size_t)rt->link[h] * 2 + rt->dir[h]] >
              sys->links[rt->link[h]].bw_bytes_per_s * (1.0 + 1e-9);
    for (uint32_t v = 0; v < rt->nvia && !run; v++) {
        double cap = sys->nodes[rt->via[v]].bw_bytes_per_s;
        run = cap > 0 && vload[rt->via[v]] > cap * (1.0 + 1e-9);
    }
    return run;
}

/* Group g's extra hops, ring by ring (extra_off, extra_pos). */
static void pick_extra_hops(struct coll_engine *c, uint32_t g, const double *lload,
                            const double *vload)
{
    const struct trace *t = c->t;
    const struct hw_system *sys = c->env->sys;
    struct coll_group *cg = &c->group[g];
    uint32_t n = t->groups[g].n;
    free(cg->extra_off);
    free(cg->extra_pos);
    cg->extra_off = sim_xcalloc((size_t)cg->nrings + 1, sizeof *cg->extra_off);
    cg->extra_pos = NULL;
    uint32_t nx = 0, capx = 0;
    for (uint32_t k = 0; k < cg->nrings; k++) {
        for (uint32_t p = 0; p < n; p++) {
            const struct sys_route *rt = &cg->routes[(size_t)k * n + p];
            if (rt->nhops == 0 && rt->nvia == 0)
                continue;       /* not routed (no collective on the group) */
            uint32_t a = t->group_dev[t->groups[g].off + cg->ring[(size_t)k * n + p]];
            uint32_t b = t->group_dev[t->groups[g].off + cg->ring[(size_t)k * n + (p + 1) % n]];
            if (!coll_is_mirror(t, a) || !coll_is_mirror(t, b))
                continue;       /* run anyway: from a simulated rank, or into one */
            if (!mirror_hop_runs(sys, cg, k, p, rt, lload, vload))
                continue;
            if (nx == capx) {
                capx = capx ? 2 * capx : 8;
                cg->extra_pos = sim_xrealloc(cg->extra_pos, (size_t)capx * sizeof *cg->extra_pos);
            }
            cg->extra_pos[nx++] = p;
        }
        cg->extra_off[k + 1] = nx;
    }
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
void coll_mirror_hops(struct coll_engine *c)
{
    const struct trace *t = c->t;
    const struct hw_system *sys = c->env->sys;
    double *lload = sim_xcalloc((size_t)sys->nlinks * 2 + 1, sizeof *lload);
    double *vload = sim_xcalloc((size_t)sys->nnodes + 1, sizeof *vload);
    add_ring_loads(c, lload, vload);
    for (uint32_t g = 0; g < t->ngroups; g++)
        pick_extra_hops(c, g, lload, vload);
    free(lload);
    free(vload);
}
