/* llmb_ssm.h: a hybrid model's blocks (Mamba-2 mixers, attention alone, an
 * MLP alone) in the LLM trace builder (private to the builder, see llmb.h;
 * what it builds: llmb_ssm.c). */
#ifndef STRATA_LLMB_SSM_H
#define STRATA_LLMB_SSM_H

#include <stdint.h>

#include "llm_config.h"
#include "llm_step.h"
#include "llmb.h"

/* Layer l of hybrid c (c->kind[l] != LLM_LAYER_FULL) on rows tokens of
 * batch sequences, each T new tokens after kv_len - T cached: a rank's
 * share of it with tp ranks (llm_check_step has checked the split). */
void llmb_hybrid_layer(struct llmb *b, const struct llm_config *c, const struct llm_step *s, uint64_t l,
                       uint64_t rows, uint64_t batch, uint64_t T, uint64_t kv_len, uint32_t tp);

#endif
