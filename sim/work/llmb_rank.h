/* llmb_rank.h: one rank's step without a pipeline schedule in the LLM
 * trace builder (private to the builder, see llmb.h). */
#ifndef STRATA_LLMB_RANK_H
#define STRATA_LLMB_RANK_H

#include <stdint.h>

#include "llm_config.h"
#include "llm_step.h"
#include "llmb.h"

/* One rank's step (of tp ranks, dp replicas), on b->device. */
void llmb_rank(struct llmb *b, const struct llm_config *c, const struct llm_step *s, uint32_t tp,
               uint32_t dp);

#endif
