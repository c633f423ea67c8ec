/* trace_coll.c: numbering a trace's collectives and marking its mirrors
 * (trace.h, trace_coll.h), and the trace of one collective that
 * `strata collbench` runs. */
#include "trace_coll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

void trace_coll_mark_mirrors(struct trace *t)
{
    free(t->mirror);
    t->mirror = NULL;
    t->nmirrors = 0;
    if (t->ngroups == 0 || !t->symmetric)
        return;
    uint8_t *has = sim_xcalloc(t->ndevices, 1);
    for (uint32_t i = 0; i < t->nops; i++)
        has[t->ops[i].device] = 1;
    for (uint32_t dv = 0; dv < t->ndevices; dv++) {
        if (has[dv])
            continue;
        if (t->mirror == NULL)
            t->mirror = sim_xcalloc(t->ndevices, 1);
        t->mirror[dv] = 1;
        t->nmirrors++;
    }
    free(has);
}

void trace_index_colls(struct trace *t)
{
    free(t->colls);
    free(t->coll_ops);
    t->colls = NULL;
    t->coll_ops = NULL;
    t->ncolls = 0;
    trace_coll_mark_mirrors(t);
    if (t->ngroups == 0)
        return;
    uint32_t nslots = t->groups[t->ngroups - 1].off + t->groups[t->ngroups - 1].n;
    uint32_t *cnt = sim_xcalloc(nslots, sizeof *cnt), *base = sim_xcalloc(t->ngroups, sizeof *base);
    for (uint32_t i = 0; i < t->nops; i++) {
        const struct op *o = &t->ops[i];
        if (o->kind != OP_COLLECTIVE)
            continue;
        int r = trace_group_rank(t, o->u.coll.group, o->device);
        SIM_CHECK(r >= 0);
        cnt[t->groups[o->u.coll.group].off + (uint32_t)r]++;
    }
    uint64_t total = 0, nops = 0;
    for (uint32_t g = 0; g < t->ngroups; g++) {
        const struct trace_group *gr = &t->groups[g];
        uint32_t c = 0;             /* the real members' count (they agree) */
        for (uint32_t r = 0; r < gr->n; r++)
            if (t->mirror == NULL || !t->mirror[t->group_dev[gr->off + r]]) {
                SIM_CHECK(c == 0 || cnt[gr->off + r] == c);
                c = cnt[gr->off + r];
            }
        base[g] = (uint32_t)total;
        total += c;
        cnt[gr->off] = c;           /* slot 0 holds the group's count from here */
        for (uint32_t r = 1; r < gr->n; r++)
            cnt[gr->off + r] = 0;
    }
    t->ncolls = (uint32_t)total;
    t->colls = sim_xcalloc(total, sizeof *t->colls);
    for (uint32_t g = 0; g < t->ngroups; g++)
        for (uint32_t k = 0; k < cnt[t->groups[g].off]; k++) {
            t->colls[base[g] + k].group = g;
            t->colls[base[g] + k].ops_off = (uint32_t)nops;
            nops += t->groups[g].n;
        }
    t->coll_ops = sim_xcalloc(nops, sizeof *t->coll_ops);
    for (uint64_t k = 0; k < nops; k++)
        t->coll_ops[k] = UINT32_MAX;    /* a mirror's stays so */
    memset(cnt, 0, nslots * sizeof *cnt);
    for (uint32_t i = 0; i < t->nops; i++) {
        struct op *o = &t->ops[i];
        if (o->kind != OP_COLLECTIVE)
            continue;
        uint32_t g = o->u.coll.group, r = (uint32_t)trace_group_rank(t, g, o->device);
        o->u.coll.inst = base[g] + cnt[t->groups[g].off + r]++;
        t->coll_ops[t->colls[o->u.coll.inst].ops_off + r] = i;
    }
    free(cnt);
    free(base);
}

void trace_one_collective(struct trace *t, enum coll_kind kind, enum coll_algo algo,
                          enum dtype dt, uint32_t n, uint64_t bytes)
{
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "(%s over %u ranks)", coll_kind_name(kind), n);
    t->nops = t->ndevices = n;
    t->ops = sim_xcalloc(n, sizeof *t->ops);
    t->devices = sim_xcalloc(n, sizeof *t->devices);
    t->topo = sim_xcalloc(n, sizeof *t->topo);
    t->deps = sim_xcalloc(1, sizeof *t->deps);
    t->ngroups = 1;
    t->groups = sim_xcalloc(1, sizeof *t->groups);
    t->groups[0].n = n;
    t->group_dev = sim_xcalloc(n, sizeof *t->group_dev);
    t->ncolls = 1;
    t->colls = sim_xcalloc(1, sizeof *t->colls);
    t->coll_ops = sim_xcalloc(n, sizeof *t->coll_ops);
    for (uint32_t r = 0; r < n; r++) {
        snprintf(t->devices[r], sizeof t->devices[r], "rank%u", r);
        struct op *o = &t->ops[r];
        char id[TRACE_ID_MAX];
        snprintf(id, sizeof id, "rank%u", r);
        trace_op_set_id(t, r, id);
        trace_op_set_name(t, r, coll_kind_name(kind));
        o->kind = OP_COLLECTIVE;
        o->dtype = dt;
        o->device = r;
        o->measured_s = o->fixed_s = -1;
        o->u.coll.bytes = bytes;
        o->u.coll.what = kind;
        o->u.coll.algo = algo;
        o->u.coll.root = TRACE_NO_DEVICE;
        t->group_dev[r] = r;
        t->coll_ops[r] = r;
        t->topo[r] = r;
    }
}
