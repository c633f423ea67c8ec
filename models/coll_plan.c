/* coll_plan.c: how one collective runs, as NCCL's tuning picks it: the
 * algorithm (ring, direct, NVLS, tree), the protocol (LL, LL128, Simple),
 * the channels, the rounds and slices of its pipeline, and the latencies
 * its stages wait out.  See coll_int.h and docs/collectives.md.
 *
 * What it models.  NCCL's cost model as its tuner has it: a base latency,
 * a per-hop latency per link class and protocol, and the bytes over the
 * ring's (or trees') bandwidth times the protocol's share of data; the
 * least of these picks the protocol, and NVLS or trees where NCCL's model
 * prefers them.  The protocol sets what share of a link's bytes is data
 * (LL sends a flag with every 8 bytes: half; LL128 120 of 128; Simple
 * all), the slice size and the hop latency; channels cap what one rank
 * copies per second.
 *
 * NVLS (NVLink SHARP, a switch with nvls): one stage in which every rank
 * sends S(1 + 1/n) up its link and receives as much (all-reduce), or
 * carries S the busier way (all-gather: S/n up, S down; reduce-scatter the
 * reverse), at the chip's nvls_efficiency of the link rate
 * (docs/collectives.md).
 *
 * What it leaves out: NCCL's tuning tables beyond these figures (its
 * per-architecture bandwidth caps, the NVLS-tree and CollNet algorithms).
 */
#include <math.h>

#include "coll_int.h"

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

const char *coll_plan_proto_name(enum coll_proto p)
{
    return proto_names[p];
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

/* The latency one ring stage waits out per hop it fills, ps; NVLS: its one
 * stage costs NCCL's NVLS latency (its tuning figure; the multicast and
 * its synchronisation, not a ring's hops). */
uint64_t coll_plan_hop_ps(const struct coll_engine *c, const struct coll_run *r,
                          const struct coll_group *cg)
{
    return (uint64_t)llround((r->algo == COLL_NVLS ? NVLS_LAT_US
                                                   : hop_lat_us[cg->transport][r->proto]) *
                             c->cfg->coll_hop_scale * 1e6);
}

/* The trees' fill: 2 (intra + inter) hops of NCCL's tree latencies, ps. */
uint64_t coll_plan_tree_ps(const struct coll_engine *c, const struct coll_run *r,
                           const struct coll_group *cg)
{
    return (uint64_t)llround(
        2.0 * (cg->tree_intra * tree_hop_lat_us[cg->intra_transport][r->proto] +
               cg->tree_inter * tree_hop_lat_us[ST_NETWORK][r->proto]) *
        c->cfg->coll_hop_scale * 1e6);
}

/* The protocol NCCL's model runs group cg's trees with for `bytes`, and
 * its time in *t_best: its tree latency, 2 ((K - 1) intra-node + log2 N
 * network hops), and half the bus bandwidth (its algbw ratio for trees). */
static enum coll_proto tree_proto(const struct coll_engine *c, const struct coll_group *cg,
                                  double bytes, double *t_best)
{
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
    *t_best = best;
    return bp;
}

/* How collective inst runs (algorithm, protocol, channels, rounds and
 * slices): fixed by its kind, size and group, so known at the first
 * rank's arrival. */
void coll_plan_pick(struct coll_engine *c, uint32_t inst, const struct op *o)
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
    /* trees (a group over several nodes) where NCCL's model prefers them
     * (tree_proto) */
    if ((o->u.coll.algo == COLL_TREE ||
         (o->u.coll.algo == COLL_AUTO && o->u.coll.what == COLL_ALL_REDUCE && r->algo == COLL_RING)) &&
        cg->nedges > 0) {
        double best;
        enum coll_proto bp = tree_proto(c, cg, bytes, &best);
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
