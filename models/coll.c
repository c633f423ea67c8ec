/* coll.c: collectives on the system's links: the engine that runs them.
 * See coll.h, coll_int.h (its files) and docs/collectives.md.
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
 * byte (coll_stage.c).  The protocol, algorithm, channels and slices are
 * NCCL's tuning's (coll_plan.c); the rings, trees and NVLS are the group's
 * paths (coll_topo.c); with mirrored ranks only the hops that matter carry
 * flows (coll_mirror.c).
 *
 * This file: a rank's arrival, the collective's start once every rank is
 * in, its end, and the setup that checks each group has the paths its
 * collectives ask for.
 *
 * A rank's kernel holds one SM per channel from its call until the data
 * has moved (hold): NCCL's CTAs spin while the other ranks come.
 *
 * What it leaves out: NVLS-tree and CollNet algorithms; the
 * reduction's arithmetic (its memory traffic is counted).
 */
#include "coll.h"

#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "coll_int.h"
#include "net.h"

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

static const struct comp_ops coll_comp_ops = {"collectives", coll_handle};

/* The error for group g, whose ring has a hop without a path: names the
 * first op on the group and the pair without one.  Returns -1. */
static int no_path(const struct coll_engine *c, uint32_t g, struct diag *d)
{
    const struct trace *t = c->t;
    const struct run_env *env = c->env;
    const struct trace_group *gr = &t->groups[g];
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
    return diag_set(d, DIAG_E_RANGE, t->path, t->ops[at].line, field,
                    "devices '%s' and '%s' of the group have no path between them in system "
                    "%s (no link, or more than %d hops), and no ring through the group has "
                    "one on every hop", t->devices[a], t->devices[b], env->sys->name,
                    SYS_MAX_HOPS);
}

/* 0, or -1 with *d for a collective that asks for an algorithm its group
 * cannot run: tree over one node or uneven nodes, nvls without a switch
 * that reduces. */
static int check_algos(const struct coll_engine *c, struct diag *d)
{
    const struct trace *t = c->t;
    const struct hw_config *cfg = c->cfg;
    const struct run_env *env = c->env;
    /* an all_reduce that asks for nvls where there is none */
    for (uint32_t k = 0; k < t->ncolls; k++) {
        const struct trace_coll *tc = &t->colls[k];
        uint32_t r0 = 0;
        while (t->coll_ops[tc->ops_off + r0] == UINT32_MAX)
            r0++;
        uint32_t at = t->coll_ops[tc->ops_off + r0];
        char field[48];
        snprintf(field, sizeof field, "ops[%u].algo", at);
        if (t->ops[at].u.coll.algo == COLL_TREE && c->group[tc->group].nedges == 0)
            return diag_set(d, DIAG_E_UNSUPPORTED, t->path, t->ops[at].line, field,
                            "\"tree\" runs over two or more nodes with the same number of the "
                            "group's ranks each (in system %s this group is on one node or "
                            "uneven); use \"ring\" or \"auto\"", env->sys->name);
        if (t->ops[at].u.coll.algo != COLL_NVLS || c->group[tc->group].nvls)
            continue;
        return diag_set(d, DIAG_E_UNSUPPORTED, t->path, t->ops[at].line, field,
                        "\"nvls\" needs every rank of the group on one NVLink switch that "
                        "reduces (a switch node with nvls: true in system %s, and "
                        "collectives.nvls_efficiency in the chip's config%s); use \"ring\" or "
                        "\"auto\"", env->sys->name,
                        cfg->coll_nvls_eff > 0 ? "" : ", which this chip lacks");
    }
    return 0;
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
    int rc = 0;
    for (uint32_t g = 0; g < t->ngroups && rc == 0; g++) {
        if (!used[g])               /* no collective on it: no rings to build */
            coll_topo_unused(c, g);
        else if (coll_topo_group(c, g) != 0)
            rc = no_path(c, g, d);
    }
    free(used);
    if (rc == 0 && t->mirror != NULL)
        coll_mirror_hops(c);
    if (rc == 0)
        rc = check_algos(c, d);
    if (rc != 0) {
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


/* A collective's kernel holds one SM per channel on its rank from the
 * rank's arrival (NCCL's CTAs spin there until the other ranks come)
 * until the data has moved (the model's hold_units; a mirror runs
 * nothing, so it holds nothing). */
static void hold(struct coll_engine *c, uint32_t dv, int32_t delta)
{
    const struct run_env *env = c->env;
    if (env->mops == NULL || env->mops->hold_units == NULL || env->devs == NULL ||
        coll_is_mirror(c->t, dv) || env->devs[dv] == NULL)
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
    coll_stage_next(c, inst);
}

void coll_finish(struct coll_engine *c, uint32_t inst)
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
                     coll_plan_proto_name(r->proto), r->channels);
        else
            snprintf(res->tile, sizeof res->tile, "%s %s %uch", coll_algo_name(r->algo),
                     coll_plan_proto_name(r->proto), r->channels);
    }
    for (uint32_t a = 0; a < gr->n; a++)
        if (t->coll_ops[tc->ops_off + a] != UINT32_MAX)
            c->done(c->e, c->ctx, t->coll_ops[tc->ops_off + a]);
}

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
        coll_plan_pick(c, inst, o);
    hold(c, o->device, (int32_t)r->channels);
    if (++r->arrived < cg0->nreal)
        return;
    /* every rank is in: start after the call overhead */
    r->t_all = c->e->now_ps;
    engine_after(c->e, c->cfg->launch_overhead_ps, c->comp, COLL_EV_BEGIN, inst, NULL);
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
                        "collective itself (a deadlock)", op_id(t, o), t->devices[o->device],
                        c->group[tc->group].nreal - 1);
    }
    return 0;
}
