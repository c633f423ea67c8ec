/* coll_int.h: what the files of the collectives model share (private to
 * models/; the interface is coll.h).
 *
 * The collectives model is five files, one concern each:
 *   coll.c         the engine: create and destroy, a rank's arrival, the
 *                  collective's end, the deadlock check;
 *   coll_topo.c    the group's paths: NCCL's rings (one per rail across
 *                  nodes), its double binary trees, whether NVLS can run;
 *   coll_mirror.c  which hops between two mirrored ranks still carry flows
 *                  (symmetric ranks);
 *   coll_plan.c    NCCL's figures and tuning: algorithm, protocol,
 *                  channels and slices of one collective, and its latencies;
 *   coll_stage.c   the stages: the flows one pipeline stage puts on the
 *                  links, switches and memories.
 * Units are in the names; times are picoseconds, rates bytes per second.
 */
#ifndef STRATA_COLL_INT_H
#define STRATA_COLL_INT_H

#include <stdint.h>

#include "cfg.h"
#include "engine.h"
#include "model.h"
#include "system.h"
#include "trace.h"

/* NCCL's protocols: LL (a flag with every 8 bytes), LL128 (120 data bytes
 * of 128), Simple */
#define COLL_PROTO_MAP(X)     \
    X(CP_LL, "LL")            \
    X(CP_LL128, "LL128")      \
    X(CP_SIMPLE, "Simple")

enum coll_proto {
#define COLL_PROTO_ENUM_(e, n) e,
    COLL_PROTO_MAP(COLL_PROTO_ENUM_)
#undef COLL_PROTO_ENUM_
    CP_COUNT
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
                                 * the rings oversubscribe (coll_mirror_hops) */
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

static inline int coll_is_mirror(const struct trace *t, uint32_t dev)
{
    return t->mirror != NULL && t->mirror[dev];
}

/* coll.c: collective inst has moved its data: every rank's op ends now */
void coll_finish(struct coll_engine *c, uint32_t inst);

/* coll_topo.c: group g's rings, trees and NVLS (0, or -1 when no ring
 * through it has a path on every hop); coll_topo_unused gives a group
 * without collectives its one-ring shape; coll_topo_route_limits lowers
 * *bw, raises *cls and sets *level to the narrowest server of route rt */
int coll_topo_group(struct coll_engine *c, uint32_t g);
void coll_topo_unused(struct coll_engine *c, uint32_t g);
void coll_topo_route_limits(const struct hw_system *sys, const struct sys_route *rt, double *bw,
                            int8_t *level, enum sys_transport *cls);

/* coll_mirror.c: fills every group's extra_off / extra_pos (a trace with
 * mirrors) */
void coll_mirror_hops(struct coll_engine *c);

/* coll_plan.c: how collective inst runs (set at its first rank's arrival:
 * o is that rank's op); the hop latency of one of its ring or NVLS stages
 * and the fill latency of its trees, ps; a protocol's name */
void coll_plan_pick(struct coll_engine *c, uint32_t inst, const struct op *o);
uint64_t coll_plan_hop_ps(const struct coll_engine *c, const struct coll_run *r,
                          const struct coll_group *cg);
uint64_t coll_plan_tree_ps(const struct coll_engine *c, const struct coll_run *r,
                           const struct coll_group *cg);
const char *coll_plan_proto_name(enum coll_proto p);

/* coll_stage.c: start the next stage of collective inst, or finish it */
void coll_stage_next(struct coll_engine *c, uint32_t inst);

#endif
