/* flow.h: a shared bandwidth server (fluid, processor-sharing).
 *
 * Models anything with a throughput that concurrent users share: an HBM
 * interface, the L2, a PCIe direction, a link, or a pipe's FLOP rate.
 * Work arrives as flows (an amount of bytes or FLOPs, and a cap on the rate
 * that one flow can reach, e.g. what the SMs issuing it can sustain).
 * Active flows share the capacity max-min fairly: no flow gets more than
 * its cap, and what capped flows leave is split evenly among the others.
 * Rates are recomputed only when a flow starts or ends, so the cost is an
 * event per flow, never an event per byte.  When a flow finishes the
 * server calls its done() callback.
 *
 * Amounts are doubles (bytes or FLOPs); rates are per picosecond.  Flow
 * storage is allocated with a server's first flow (FLOWSRV_INIT_FLOWS of
 * them: a system of 65536 devices has a million servers, most never used)
 * and doubles when more flows are active at once (counted in `grows`), so
 * starting a flow allocates at most a few times per server per run, never
 * per event; it comes from the engine's arena (arena.h: one block for the
 * flows and the scratch, freed with the engine).  Four to start: most servers
 * never hold more at once, and 32 made a 65,536-device run 1.5 GB, 0.7 of
 * it flow storage no flow used (0.79 GB with four; a training step's time
 * unchanged, measured side by side).
 */
#ifndef STRATA_FLOW_H
#define STRATA_FLOW_H

#include <stdint.h>

#include "engine.h"

#define FLOWSRV_INIT_FLOWS 4

typedef void (*flow_done_fn)(struct engine *e, void *owner, uint64_t arg);
/* Told what the server served over [t0, t1) (optional: timelines). */
typedef void (*flow_observe_fn)(void *ctx, uint64_t t0_ps, uint64_t t1_ps, double amount);

struct flow {
    double remaining;       /* amount left */
    double cap;             /* max rate of this flow, per ps */
    double rate;            /* current rate, per ps */
    flow_done_fn done;
    void *owner;
    uint64_t arg;
};

struct flowsrv {
    /* what every share-out and completion reads, first (a 1,024-GPU run's
     * servers do not stay in the caches between their events) */
    struct flow *flows;     /* active flows */
    uint32_t *order;        /* scratch: water-filling order */
    double capacity;        /* total rate, per ps */
    uint64_t last_ps;       /* time remaining[] was last brought up to date */
    uint64_t pending;       /* handle of the scheduled completion event, 0 = none */
    uint64_t pending_seq;   /* push order the next completion event takes (flowsrv_reschedule) */
    uint32_t comp;          /* engine component index */
    uint32_t nflows;
    int saturated;          /* the active flows' rates add up to the capacity (none is held
                             * back by its own cap alone) */
    int resched;            /* its rates and completion are to be set when the event is
                             * over (engine_defer) */
    /* statistics */
    double served;          /* total amount served */
    uint64_t busy_ps;       /* time with at least one active flow */
    uint64_t saturated_ps;  /* time saturated, up to last_ps */
    uint64_t shares;        /* times the rates were shared out (once an event at most) */
    flow_observe_fn observe;/* NULL = nobody watches */
    void *observe_ctx;
    struct flow *fin;       /* scratch: flows finishing at one event */
    uint32_t cap;           /* storage for this many flows */
    uint32_t grows;         /* times the storage grew */
    uint32_t peak_flows;    /* most concurrent flows seen */
    char name[24];
};

/* capacity_per_s: amount per second.  Registers the server with e. */
void flowsrv_init(struct flowsrv *s, struct engine *e, const char *name,
                  double capacity_per_s);
void flowsrv_destroy(struct flowsrv *s);
/* Start a flow of amount (> 0) with rate cap cap_per_s (<= 0: no cap).
 * done(e, owner, arg) is called from the engine when it completes. */
void flowsrv_start(struct flowsrv *s, struct engine *e, double amount,
                   double cap_per_s, flow_done_fn done, void *owner, uint64_t arg);

/* How long the server has run at its full capacity, up to now (>= the
 * time its rates were last set), without advancing it: reading it changes
 * nothing.  Over a wait, the share of it the server was saturated is its
 * bandwidth at work; the rest its flows ran at their own caps (too few
 * bytes in flight) or there were none. */
uint64_t flowsrv_saturated_at(const struct flowsrv *s, uint64_t now);

#endif
