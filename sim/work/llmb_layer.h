/* llmb_layer.h: one transformer layer's forward in the LLM trace builder
 * (private to the builder, see llmb.h; the layer's structure: llm.h). */
#ifndef STRATA_LLMB_LAYER_H
#define STRATA_LLMB_LAYER_H

#include <stdint.h>

#include "llm_config.h"
#include "llm_step.h"
#include "llmb.h"

/* Layer l's forward on rows tokens of batch sequences (a rank's share of
 * heads and MLP with tp ranks). */
void llmb_layer(struct llmb *b, const struct llm_config *c, const struct llm_step *s,
                uint64_t l, uint64_t rows, uint64_t batch, uint32_t tp);

#endif
