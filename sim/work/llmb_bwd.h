/* llmb_bwd.h: the backward in the LLM trace builder (private to the
 * builder, see llmb.h): a forward op's backward op, sequence parallelism's
 * backward of the column-parallel GEMMs, and full recomputation. */
#ifndef STRATA_LLMB_BWD_H
#define STRATA_LLMB_BWD_H

#include <stdint.h>

#include "llmb.h"

/* Full recomputation: a layer's forward again when the backward enters it
 * (llmb_bwd.c says how). */
void llmb_bwd_recompute(struct llmb *b, const char *base, int in_step, char cur_layer[16],
                        const struct op *ops, uint32_t n, uint32_t *slot, int *first);
/* The backward op of forward op src (id past the rank prefix: base),
 * added as "<base>.bwd", or NULL when it has none. */
struct op *llmb_bwd_op(struct llmb *b, const struct op *src, const char *base, int sp);
/* Whether base names a column-parallel layer (Megatron's: QKV, gate/up, a
 * router, the vocab-parallel head). */
int llmb_bwd_column_parallel(const char *base, int gated);
/* With sequence parallelism: 1 when it has emitted src's backward, 0 to
 * leave it to llmb_bwd_op. */
int llmb_bwd_sp(struct llmb *b, const struct op *src, const char *base, int sp);

#endif
