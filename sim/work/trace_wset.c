/* trace_wset.c: the bytes a device must hold for one replay of a trace
 * (trace_working_set, trace_working_sets in trace.h): the weights of its
 * GEMMs and, unless it trains, the K/V of its attention. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "trace.h"

static void op_working_set(const struct op *o, double *w, double *kv)
{
    if (o->fixed_s >= 0)
        return;
    if (o->transient || (o->kind == OP_GEMM && (o->pass == PASS_BWD || o->pass == PASS_DGRAD ||
                                                o->pass == PASS_WGRAD)))
        return;     /* the forward's weights, or none resident, or a cache another op holds */
    if (o->kind == OP_GEMM) {
        double n = (double)o->u.gemm.k * (double)o->u.gemm.n * (double)o->u.gemm.batch;
        *w += o->u.gemm.weights != WF_NONE ? n * wfmt_bits(o->u.gemm.weights) / 8.0
                                           : dtype_bytes(o->dtype, n);
    } else if (o->kind == OP_ATTENTION) {
        /* a paged cache holds whole pages: the last one partly empty */
        double p = o->u.attn.page_size, len = (double)o->u.attn.kv_len;
        if (p > 0)
            len = ceil(len / p) * p;
        *kv += dtype_bytes(o->u.attn.kv_dtype, 2.0 * (double)o->u.attn.batch *
                                                   (double)o->u.attn.kv_heads * len *
                                                   (double)o->u.attn.head_dim);
    }
}

/* A device that runs backward passes is training: its attention K and V
 * are activations of the step (strata fit budgets them), not a cache that
 * stays resident. */
double trace_working_set(const struct trace *t, uint32_t dev, double *weight_bytes)
{
    double w = 0, kv = 0;
    int train = 0;
    for (uint32_t i = 0; i < t->nops; i++)
        if (t->ops[i].device == dev) {
            op_working_set(&t->ops[i], &w, &kv);
            train |= t->ops[i].pass != PASS_FWD;
        }
    if (weight_bytes != NULL)
        *weight_bytes = w;
    return w + (train ? 0 : kv);
}

void trace_working_sets(const struct trace *t, double *ws, double *weight_bytes)
{
    for (uint32_t d = 0; d < t->ndevices; d++)
        ws[d] = weight_bytes[d] = 0;
    double *kv = ws;            /* KV first, then the weights added in */
    unsigned char *train = sim_xcalloc(t->ndevices, 1);
    for (uint32_t i = 0; i < t->nops; i++) {
        double w = 0, k = 0;
        op_working_set(&t->ops[i], &w, &k);
        weight_bytes[t->ops[i].device] += w;
        kv[t->ops[i].device] += k;
        if (t->ops[i].pass != PASS_FWD)
            train[t->ops[i].device] = 1;
    }
    for (uint32_t d = 0; d < t->ndevices; d++) {
        if (train[d])
            kv[d] = 0;          /* as trace_working_set */
        ws[d] += weight_bytes[d];
    }
    free(train);
}
