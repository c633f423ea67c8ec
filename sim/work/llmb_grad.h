/* llmb_grad.h: the gradients' traffic between replicas in the LLM trace
 * builder (private to the builder, see llmb.h): ZeRO-3's weight gathers
 * and a rank's share of a layer's gradients across slices (--dcn). */
#ifndef STRATA_LLMB_GRAD_H
#define STRATA_LLMB_GRAD_H

#include <stdint.h>

#include "llmb.h"

/* The bytes a --dcn all-reduce of one layer's gradients carries across
 * the slices (llmb_grad.c says whose). */
uint64_t llmb_grad_dcn_share(const struct llmb *b, uint64_t layer_bytes, double dense_layer,
                             double expert_layer, uint32_t tp, uint32_t dp, uint32_t zero, double eb);
/* ZeRO-3: a layer's weights gathered before use; returns the last gather. */
uint32_t llmb_grad_zero3(struct llmb *b, const char *id, enum dtype dt, uint64_t layer_bytes,
                         double dense_layer, double expert_layer, uint32_t tp, uint32_t after);

#endif
