/* llmb_cp.h: context parallelism's p2p ring in the LLM trace builder
 * (llm.h: Megatron's layout with Transformer Engine's ring): the
 * attention of a rank's block against every other rank's, K and V passed
 * round the ring while it computes, and the waits across ranks that tie
 * each step to the send it needs (private to the builder, see llmb.h). */
#ifndef STRATA_LLMB_CP_H
#define STRATA_LLMB_CP_H

#include <stddef.h>
#include <stdint.h>

#include "llmb.h"

/* The context-parallel ring's cross-rank waits: every send op (keyed by
 * sender, layer, pass, micro-batch and ring step) and every deps slot that
 * waits for one, matched once all ranks are built (a sender may come after
 * its receiver).  Passes: 0 forward, 1 backward, 2 recomputed forward.
 * Both lists grow with the ops, not with the key space. */
struct llmb_cp_link {
    uint64_t key;
    uint32_t at;                /* a send: its op; a wait: its deps slot */
};
struct llmb_cp_ring {
    struct llmb_cp_link *send, *wait;
    size_t nsend, caps, nwait, capw;
    uint32_t layers, mbs, cp, tp, dp, dp_sim;
};

/* Attention under context parallelism: the ring's steps and sends for
 * proto (the rank's own block), ids "<stem>.attention<sfx>" and the
 * like, pass 0 forward, 1 backward, 2 recomputed forward (llmb_cp.c says
 * how). */
void llmb_cp_attention(struct llmb *b, const struct op *proto, const char *stem, const char *sfx,
                       uint64_t l, int pass);
/* Whether base (an op id past the rank prefix) is one of a ring's other
 * ops, which llmb_cp_attention makes again with the ring's first op. */
int llmb_cp_aux(const struct llmb *b, const char *base);
/* For a CP ring's first forward op src (id base): the ring again as pass,
 * with sfx; 1 when it was, 0 when src is not such an op. */
int llmb_cp_again(struct llmb *b, const struct op *src, const char *base, const char *sfx, int pass);
/* Once every rank is built: each wait's deps slot gets its send, and the
 * ring's lists are freed. */
void llmb_cp_link(struct trace *t, struct llmb_cp_ring *ring);

#endif
