/* llmb_vit.h: a vision transformer's forward in the LLM trace builder
 * (private to the builder, see llmb.h; what it builds: llmb_vit.c). */
#ifndef STRATA_LLMB_VIT_H
#define STRATA_LLMB_VIT_H

#include "llm_config.h"
#include "llm_step.h"
#include "llmb.h"

/* The encoder's forward over s->batch images of model c (c->image > 0). */
void llmb_vit(struct llmb *b, const struct llm_config *c, const struct llm_step *s);

#endif
