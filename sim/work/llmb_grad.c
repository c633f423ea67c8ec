/* llmb_grad.c: the gradients' traffic between replicas in the LLM trace
 * builder (see llmb_grad.h). */
#include "llmb_grad.h"

#include <stdio.h>

/* A rank's share of a layer's gradients once reduced in its slice: all
 * of its 1/tp, or 1/dp of it with ZeRO; with EP inside DP the dense part
 * so, and its experts' (1/ep of them) whole or 1/(dp/ep) with ZeRO.  The
 * bytes a --dcn all-reduce carries across the slices. */
uint64_t llmb_grad_dcn_share(const struct llmb *b, uint64_t layer_bytes, double dense_layer,
                             double expert_layer, uint32_t tp, uint32_t dp, uint32_t zero, double eb)
{
    if (b->ep <= 1)
        return layer_bytes / (zero ? dp : 1);
    double edp = (double)dp / b->ep;
    return (uint64_t)(dense_layer / tp * eb / (zero ? dp : 1) +
                      expert_layer / b->ep / tp * eb / (zero ? edp : 1));
}

/* ZeRO-3: a layer's weights gathered before use, on stream 2 after the
 * gather before (`after`), the next compute op waiting for it; with EP
 * inside DP the dense weights over the replicas, then this rank's
 * experts over the replicas that hold them (`id` and "<id>.experts").
 * The last gather. */
uint32_t llmb_grad_zero3(struct llmb *b, const char *id, enum dtype dt, uint64_t layer_bytes,
                         double dense_layer, double expert_layer, uint32_t tp, uint32_t after)
{
    double eb = dtype_bytes(dt, 1.0);
    uint64_t bytes = b->ep > 1 ? (uint64_t)(dense_layer / tp * eb) : layer_bytes;
    uint32_t g = llmb_dp_coll(b, id, COLL_ALL_GATHER, dt, bytes, after, b->dp_group, 2);
    if (b->ep > 1 && b->edp_group != UINT32_MAX) {
        char xid[TRACE_ID_MAX];
        snprintf(xid, sizeof xid, "%.*s.experts", (int)sizeof xid - 9, id);
        g = llmb_dp_coll(b, xid, COLL_ALL_GATHER, dt, (uint64_t)(expert_layer / b->ep / tp * eb), g,
                         b->edp_group, 2);
    }
    b->also = g;
    return g;
}
