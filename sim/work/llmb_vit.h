/* llmb_vit.h: a vision transformer's forward in the LLM trace builder
 * (private to the builder, see llmb.h; what it builds: llmb_vit.c). */
#ifndef STRATA_LLMB_VIT_H
#define STRATA_LLMB_VIT_H

#include "llm_config.h"
#include "llm_step.h"
#include "llmb.h"

/* The forward of vision transformer v over `images` images: the model
 * itself (tower 0: the final norm and the classifier), or a VLM's image
 * tower (tower 1: ops named vision.*, up to its feature layer). */
void llmb_vit(struct llmb *b, const struct llm_vit *v, const struct llm_step *s, uint64_t images,
              int tower);
/* A VLM prefill's images (s->images a sequence) through c's tower and its
 * projector into the decoder's width. */
void llmb_vlm_images(struct llmb *b, const struct llm_config *c, const struct llm_step *s);

#endif
