/* llmb_pp.h: the pipeline schedule in the LLM trace builder (private to
 * the builder, see llmb.h): Megatron's 1F1B, plain or interleaved, over
 * pp stages; with one stage, gradient accumulation over micro-batches. */
#ifndef STRATA_LLMB_PP_H
#define STRATA_LLMB_PP_H

#include <stdint.h>

#include "llm_config.h"
#include "llm_step.h"
#include "llmb.h"

/* Every simulated rank's step: pp stages, mb micro-batches, tp TP ranks
 * and dp replicas (counting CP ranks), as llmb_pp.c says. */
void llmb_pp(struct llmb *b, const struct llm_config *c, const struct llm_step *s, uint32_t pp,
             uint32_t mb, uint32_t tp, uint32_t dp);

#endif
