/* fabric.c: what the devices of one run share.  See fabric.h.
 *
 * Unified memory (a chip whose dram level is `unified`, an Apple SoC's):
 * every device's DRAM traffic goes through one server, at the system's
 * unified bandwidth when it gives one, else the chip's, times the DRAM's
 * efficiency.  What a link server serves shows on the timeline as its
 * device's counter for the link's level (both directions of a device's
 * link on one).
 */
#include "fabric.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "coll.h"
#include "flow.h"
#include "net.h"
#include "record.h"

struct fabric_watch {
    struct timeline *tl;
    struct tl_series *s;
};

static void link_observe(void *ctx, uint64_t t0, uint64_t t1, double amount)
{
    struct fabric_watch *w = ctx;
    tl_add(w->tl, w->s, t0, t1, amount);
}

/* Watch every link that ends at a device of the trace; returns the watch
 * array (fabric_destroy frees it). */
static struct fabric_watch *watch_links(struct timeline *tl, const struct hw_system *sys,
                                        const struct trace *t, const uint32_t *sysdev,
                                        struct net *n)
{
    struct fabric_watch *w = sim_xcalloc(2 * (size_t)sys->nlinks + 1, sizeof *w);
    uint32_t *tdev = sim_xcalloc(sys->nnodes, sizeof *tdev);   /* system node -> trace device */
    for (uint32_t k = 0; k < sys->nnodes; k++)
        tdev[k] = UINT32_MAX;
    for (uint32_t i = 0; i < t->ndevices; i++)
        if (sysdev[i] != UINT32_MAX)
            tdev[sysdev[i]] = i;
    for (uint32_t k = 0; k < sys->nlinks; k++) {
        const struct sys_link *l = &sys->links[k];
        uint32_t dev = tdev[l->b] != UINT32_MAX ? tdev[l->b] : tdev[l->a];
        if (dev == UINT32_MAX)
            continue;           /* a switch-to-host or host-to-host link */
        for (uint8_t dir = 0; dir < 2; dir++) {
            struct fabric_watch *x = &w[2 * k + dir];
            x->tl = tl;
            x->s = tl_series(tl, dev, (unsigned)l->level);
            x->s->capacity_per_s = 2 * l->bw_bytes_per_s;
            struct flowsrv *srv = net_link_srv(n, k, dir);
            srv->observe = link_observe;
            srv->observe_ctx = x;
        }
    }
    free(tdev);
    return w;
}

void fabric_init(struct fabric *f, struct engine *e, const struct hw_system *sys,
                 const struct trace *t, const uint32_t *sysdev, struct timeline *tl,
                 struct run_env *env)
{
    const struct hw_config *cfg = &sys->chip;
    memset(f, 0, sizeof *f);
    /* unified memory: every device's DRAM traffic goes through one server */
    if (cfg_dram(cfg)->unified) {
        f->shared_dram = sim_xcalloc(1, sizeof *f->shared_dram);
        double bw = sys->unified_bw_bytes_per_s > 0 ? sys->unified_bw_bytes_per_s
                                                    : cfg_dram(cfg)->bw_bytes_per_s;
        flowsrv_init(f->shared_dram, e, "unified_dram", bw * cfg_dram(cfg)->eff_bw);
    }
    f->net = net_create(e, sys);
    f->dram = sim_xcalloc(t->ndevices, sizeof *f->dram);
    env->sys = sys;
    env->sysdev = sysdev;
    env->net = f->net;
    env->shared_dram = f->shared_dram;
    env->dram = f->dram;
    env->host_over_net = !sys->implied;
    if (tl != NULL)
        f->watch = watch_links(tl, sys, t, sysdev, f->net);
}

int fabric_colls(struct fabric *f, struct engine *e, const struct hw_config *cfg,
                 const struct trace *t, struct run_env *env, struct diag *d)
{
    if (t->ncolls == 0)
        return 0;
    f->coll = coll_create(e, cfg, t, env, d);
    return f->coll != NULL ? 0 : -1;
}

void fabric_destroy(struct fabric *f)
{
    coll_destroy(f->coll);
    if (f->shared_dram != NULL) {
        flowsrv_destroy(f->shared_dram);
        free(f->shared_dram);
    }
    net_destroy(f->net);
    free(f->watch);
    free(f->dram);
    memset(f, 0, sizeof *f);
}
