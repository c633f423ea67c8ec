/* ktrace.c: a Kineto trace's records -> a strata trace (import_kineto,
 * what it makes of a trace: import.h).  Each GPU kernel goes to its owner,
 * the CPU op whose "External id" it carries or the innermost one around
 * its launch call; every owner, unowned kernel and copy becomes one op, in
 * the order its first kernel started, with ksync.c's dependencies. */
#include "ktrace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "imp.h"
#include "ksync.h"
#include "kstream.h"
#include "opmap.h"

static int cpu_cmp(const void *a, const void *b)
{
    const struct kcpu *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1; /* parents before children */
    return x->orig < y->orig ? -1 : (x->orig > y->orig);
}

static int rt_cmp(const void *a, const void *b)
{
    const struct krt *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->corr < y->corr ? -1 : (x->corr > y->corr);
}

/* Innermost CPU op containing each runtime call, per thread, one sweep. */
static void owners_by_time(struct kcpu *cpu, uint32_t ncpu, struct krt *rt, uint32_t nrt)
{
    if (ncpu > 1)
        qsort(cpu, ncpu, sizeof *cpu, cpu_cmp);
    if (nrt > 1)
        qsort(rt, nrt, sizeof *rt, rt_cmp);
    uint32_t *stack = sim_xcalloc(ncpu + 1, sizeof *stack);
    uint32_t c = 0, top = 0;
    for (uint32_t r = 0; r < nrt; r++) {
        struct krt *x = &rt[r];
        if (r == 0 || rt[r - 1].pid != x->pid || rt[r - 1].tid != x->tid)
            top = 0; /* a new thread */
        while (c < ncpu && (cpu[c].pid < x->pid || (cpu[c].pid == x->pid && cpu[c].tid < x->tid)))
            c++;
        while (c < ncpu && cpu[c].pid == x->pid && cpu[c].tid == x->tid && cpu[c].ts <= x->ts) {
            while (top > 0 && cpu[stack[top - 1]].end <= cpu[c].ts)
                top--;
            stack[top++] = c++;
        }
        while (top > 0 && cpu[stack[top - 1]].end < x->ts)
            top--;
        x->owner = -1;
        for (uint32_t k = top; k > 0; k--)
            if (cpu[stack[k - 1]].ts <= x->ts && x->ts <= cpu[stack[k - 1]].end) {
                x->owner = (int32_t)stack[k - 1];
                break;
            }
    }
    free(stack);
}

static void add_entry(struct kentry *ent, uint32_t *n, double ts, int cpu, uint32_t dev_event)
{
    ent[*n].ts = ts;
    ent[*n].seq = *n;
    ent[*n].cpu = cpu;
    ent[*n].dev_event = dev_event;
    (*n)++;
}

static int entry_cmp(const void *a, const void *b)
{
    const struct kentry *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

static int tensor_core_kernel(const char *name)
{
    return strstr(name, "tensorop") || strstr(name, "tf32") || strstr(name, "1688gemm") ||
           strstr(name, "xmma") || strstr(name, "hmma") || strstr(name, "sm90_");
}

/* cuBLAS's helper kernels around a GEMM: never the GEMM itself. */
static int aux_kernel(const char *name)
{
    return strstr(name, "splitKreduce_kernel") != NULL ||
           strstr(name, "epilogue::impl::globalKernel") != NULL;
}

/* Each kernel to its owner (the CPU op whose "External id" it carries, or
 * the one around its launch call), and the output's entries: one per
 * owner, unowned kernel and copy, in event order (*nent of them). */
static struct kentry *assign_kernels(struct kstate *S, const struct imp_map *by_ext,
                                     const struct imp_map *by_corr, uint32_t *nent_out)
{
    struct import_stats *st = S->st;
    struct kcpu *cpu = S->cpu;
    struct kdev *dv = S->dv;
    struct krt *rt = S->rt;
    uint32_t ndv = S->ndv;
    struct kentry *ent = sim_xcalloc((size_t)ndv + 1, sizeof *ent);
    uint32_t nent = 0;
    for (uint32_t i = 0; i < ndv; i++) {
        struct kdev *k = &dv[i];
        if (k->copy) {
            add_entry(ent, &nent, k->ts, -1, i);
            continue;
        }
        uint32_t owner = 0, r;
        int have = 0;
        if (k->ext != INT64_MIN && imp_map_get(by_ext, k->ext, &owner))
            have = 1;
        else if (k->corr != INT64_MIN && imp_map_get(by_corr, k->corr, &r) && rt[r].owner >= 0) {
            owner = (uint32_t)rt[r].owner;
            have = 1;
        }
        if (!have) {
            st->orphan_kernels++;
            add_entry(ent, &nent, k->ts, -1, i);
            continue;
        }
        struct kcpu *c = &cpu[owner];
        if (c->nkern == 0) {
            c->dev = k->dev;
            c->stream = k->stream;
            c->launch = c->ts;
            add_entry(ent, &nent, k->ts, (int)owner, 0);
            st->owners++;
        }
        if (k->corr != INT64_MIN && imp_map_get(by_corr, k->corr, &r) &&
            (c->nkern == 0 || rt[r].ts < c->launch))
            c->launch = rt[r].ts;
        if (c->nkern == 0 || k->dur > c->kmax) {
            c->kname = k->name;
            c->kmax = k->dur;
        }
        c->nkern++;
        c->kern_s += k->dur * 1e-6;
        if (tensor_core_kernel(strtab_str(&S->names, k->name)))
            c->tensor_core = 1;
        if (!aux_kernel(strtab_str(&S->names, k->name)))
            c->main_kernel = 1;
    }
    *nent_out = nent;
    return ent;
}

/* The op of owner CPU op c: mapped from its name and inputs, or of fixed
 * length (its kernels' time) when it cannot be. */
static struct op *op_of_cpu(struct kstate *S, struct imp_builder *b, struct kcpu *c)
{
    struct import_stats *st = S->st;
    const char *nm = strtab_str(&S->names, c->name);
    struct op *o = imp_build_add(b, nm);
    char kern[TRACE_KERNEL_MAX];
    opmap_kernel_family(strtab_str(&S->names, c->kname), kern, sizeof kern);
    trace_op_set_kernel(b->t, (uint32_t)(o - b->t->ops), kern);
    /* each kernel is within the bound, their sum need not be */
    if (c->kern_s > TRACE_MAX_OP_S) {
        c->kern_s = TRACE_MAX_OP_S;
        st->dur_clamped++;
    }
    struct opmap_in in;
    memset(&in, 0, sizeof in);
    in.name = nm;
    in.tensor_core = c->tensor_core;
    in.ninputs = (int)c->nin;
    for (uint32_t k = 0; k < c->nin; k++) {
        const struct kinput *x = &S->in[c->in_off + k];
        in.ndims[k] = x->ndims;
        for (int j = 0; j < x->ndims; j++)
            in.dims[k][j] = S->dims[x->dim_off + j];
        in.types[k] = strtab_str(&S->names, x->type);
        in.concrete[k] = strtab_str(&S->names, x->conc);
    }
    enum opmap_result mr = opmap_map(&in, o);
    if (mr == OPMAP_OK) {
        /* a GEMM whose only kernels are a library's helpers (the
         * split-K reduction, a bias epilogue): its main kernel is
         * not in the trace (dropped by the profiler or counted at
         * another op), so its kernel time is not its time */
        if (o->kind == OP_GEMM && !c->main_kernel)
            st->partial++;
        else
            o->measured_s = c->kern_s;
        st->mapped++;
    } else {
        imp_build_fixed(o, c->kern_s);
        if (mr == OPMAP_NOSHAPE)
            st->fixed_noshape++;
        else if (mr == OPMAP_COLLECTIVE)
            st->fixed_collective++;
        else
            st->fixed_unknown++;
    }
    return o;
}

/* The op of an unowned kernel or a copy (k). */
static struct op *op_of_dev(struct kstate *S, struct imp_builder *b, const struct kdev *k)
{
    const char *nm = strtab_str(&S->names, k->name);
    struct op *o = imp_build_add(b, nm);
    char kern[TRACE_KERNEL_MAX];
    opmap_kernel_family(nm, kern, sizeof kern);
    trace_op_set_kernel(b->t, (uint32_t)(o - b->t->ops), kern);
    if (k->copy == 1 && k->bytes >= 1) {
        o->kind = OP_MEMCPY;
        o->dtype = DT_INT8;
        o->u.copy.bytes = (uint64_t)k->bytes;
        o->u.copy.peer = o->u.copy.src = TRACE_NO_DEVICE;
        o->u.copy.dir = strstr(nm, "HtoD") ? MEMCPY_H2D
                                           : (strstr(nm, "DtoH") ? MEMCPY_D2H : MEMCPY_D2D);
        o->measured_s = k->dur * 1e-6;
    } else if (k->copy == 2 && k->bytes >= 1) {
        o->kind = OP_ELEMENTWISE;
        o->dtype = DT_INT8;
        o->u.ew.elements = (uint64_t)k->bytes;
        o->u.ew.inputs = 0;
        o->u.ew.outputs = 1;
        o->u.ew.flops_per_element = 0;
        o->u.ew.vector_bytes = 16;
        o->measured_s = k->dur * 1e-6;
    } else {
        imp_build_fixed(o, k->dur * 1e-6);
    }
    return o;
}

/* The records -> a strata trace. */
static int kineto_finish(struct kstate *S, const char *path, struct trace *out, struct diag *d)
{
    struct import_stats *st = S->st;
    struct kcpu *cpu = S->cpu;
    struct kdev *dv = S->dv;
    struct krt *rt = S->rt;
    uint32_t ncpu = S->ncpu, nrt = S->nrt;
    owners_by_time(cpu, ncpu, rt, nrt);
    struct imp_map by_ext, by_corr;
    imp_map_init(&by_ext, ncpu);
    imp_map_init(&by_corr, nrt);
    for (uint32_t i = 0; i < ncpu; i++)
        if (cpu[i].ext != INT64_MIN)
            imp_map_put(&by_ext, cpu[i].ext, i);
    for (uint32_t i = 0; i < nrt; i++)
        imp_map_put(&by_corr, rt[i].corr, i);
    uint32_t nent = 0;
    struct kentry *ent = assign_kernels(S, &by_ext, &by_corr, &nent);
    if (nent > 1)
        qsort(ent, nent, sizeof *ent, entry_cmp);
    uint32_t ndep = 0;
    struct kdep *dep = ksync_deps(S, ent, nent, &by_corr, &ndep);
    uint32_t di = 0;
    struct imp_builder b;
    imp_build_init(&b, out, nent);
    for (uint32_t i = 0; i < nent; i++) {
        struct op *o;
        int64_t dev, stream;
        if (ent[i].cpu >= 0) {
            struct kcpu *c = &cpu[ent[i].cpu];
            o = op_of_cpu(S, &b, c);
            dev = c->dev;
            stream = c->stream;
        } else {
            const struct kdev *k = &dv[ent[i].dev_event];
            o = op_of_dev(S, &b, k);
            dev = k->dev;
            stream = k->stream;
        }
        o->device = imp_build_device(&b, dev);
        o->stream = imp_build_stream(&b, dev, stream);
        for (; di < ndep && dep[di].op == i; di++)
            imp_build_dep(&b, dep[di].on);
        st->by_kind[o->kind]++;
    }
    out->ndevices = b.ndev ? b.ndev : 1;
    if (b.ndev == 0)
        snprintf(out->devices[0], sizeof out->devices[0], "gpu0");
    snprintf(out->path, sizeof out->path, "%s", path);
    snprintf(out->name, sizeof out->name, "imported from %.60s", path);
    imp_map_free(&by_ext);
    imp_map_free(&by_corr);
    free(ent);
    free(dep);
    if (out->nops == 0) {
        trace_free(out);
        return diag_set(d, DIAG_E_RANGE, path, 1, "traceEvents",
                        "no GPU kernels or copies in the trace: nothing to import");
    }
    return 0;
}

int ktrace_try(const char *path, struct trace *out, struct import_stats *st, struct diag *d)
{
    memset(st, 0, sizeof *st);
    struct kstate S;
    kineto_init(&S, st);
    int rc = kstream_read(path, &S, d);
    if (rc == 0)
        rc = kineto_finish(&S, path, out, d);
    kineto_free(&S);
    return rc;
}

int import_kineto(const char *path, struct trace *out, struct import_stats *st, struct diag *d)
{
    int rc = ktrace_try(path, out, st, d);
    if (rc == 1)
        rc = diag_set(d, DIAG_E_MISSING, path, 1, "traceEvents",
                      "not a PyTorch profiler trace (no traceEvents array)");
    return rc;
}
