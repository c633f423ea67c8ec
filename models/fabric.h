/* fabric.h: what the devices of one run share, built around them: the
 * system's links and switches (net.h), one DRAM server for every device
 * when the chip's memory is unified (an SoC), each device's DRAM server
 * slot, the timeline's view of the links, and the collectives engine
 * (coll.h).
 *
 * The run driver asks for it in two steps: fabric_init before it creates
 * the devices (they find the links and the shared DRAM in the run_env,
 * and put their DRAM server in env->dram), fabric_colls after (the
 * collectives hold the devices' units and write their DRAM).
 *
 * Ownership: fabric_init and fabric_colls allocate; fabric_destroy frees
 * everything, after the devices are gone.
 */
#ifndef STRATA_FABRIC_H
#define STRATA_FABRIC_H

#include <stdint.h>

#include "diag.h"
#include "engine.h"
#include "model.h"
#include "system.h"
#include "trace.h"

struct coll_engine;
struct fabric_watch;

struct fabric {
    struct net *net;                /* the system's links and switches */
    struct flowsrv *shared_dram;    /* unified memory: the one DRAM server, or NULL */
    struct flowsrv **dram;          /* per trace device: its DRAM server (env->dram) */
    struct fabric_watch *watch;     /* per link direction: its timeline series, or NULL */
    struct coll_engine *coll;       /* runs the trace's collectives, NULL if none */
};

/* Builds the shared DRAM (unified memory) and the links on engine e and
 * fills env's sys, sysdev, net, shared_dram, dram and host_over_net; with
 * a timeline tl, every link that ends at a device of t shows on it.
 * sysdev: trace device -> system node (the caller's, kept by env). */
void fabric_init(struct fabric *f, struct engine *e, const struct hw_system *sys,
                 const struct trace *t, const uint32_t *sysdev, struct timeline *tl,
                 struct run_env *env);
/* The collectives engine, when t has collectives (after the devices are
 * created and env->devs, env->mops are set): 0, or -1 with *d. */
int fabric_colls(struct fabric *f, struct engine *e, const struct hw_config *cfg,
                 const struct trace *t, struct run_env *env, struct diag *d);
void fabric_destroy(struct fabric *f);

#endif
