/* fit.h: the memory budget of an LLM on a device (`strata fit`, fit.c). */
#ifndef STRATA_FIT_H
#define STRATA_FIT_H

#include "cfg.h"
#include "diag.h"
#include "llm.h"

struct fit_result {
    double params;              /* parameters */
    double weights;             /* bytes, at their storage format (entropy-coded: as coded) */
    double weights_decoded;     /* bytes as the kernels read them: entropy-coded weights after
                                 * the chip's decoder (= weights for any other format) */
    double kv_cache;            /* bytes */
    double ssm_state;           /* a Mamba-2 hybrid's: each sequence's state in every mixer, bytes
                                 * (fixed, whatever the context); 0 for other models */
    double activations;         /* bytes */
    double optimizer;           /* bytes (training) */
    double workspace;           /* bytes */
    double total;               /* bytes */
    double capacity;            /* device memory, bytes */
    int fits;
    double spill;               /* weight bytes that do not fit */
    double spill_pcie_s;        /* streaming them once over the host link, s */
    double spill_storage_s;     /* or from storage, s */
};

/* train: training step (optimizer state, stored activations, no KV cache).
 * Per rank of the split in s: tensor parallelism s->tp (layers' weights,
 * K/V heads, activations, optimizer state divided as gen llm --tp shards
 * them; embedding and LM head split too in training), data parallelism
 * s->dp with ZeRO stage s->zero (1: optimizer state sharded over the
 * replicas, 2: and the gradients, 3: and the weights). */
void fit_budget(const struct hw_config *cfg, const struct llm_config *c, const struct llm_step *s,
                int train, struct fit_result *f);
/* The paged KV cache a serving engine gets on each device (`strata serve`,
 * docs/serving.md), as vLLM sizes it: util x the device's memory, less the
 * weights, the activations of a prefill step of max_tokens tokens and the
 * workspace of the budget above.  f: the budget of that prefill step (s's
 * types and layout); *per_token: the KV bytes one token takes on a device.
 * Returns the blocks of block_size tokens that fit (0: none). */
uint64_t fit_kv_blocks(const struct hw_config *cfg, const struct llm_config *c, const struct llm_step *s,
                       double util, uint64_t max_tokens, uint32_t block_size, struct fit_result *f,
                       double *per_token, uint32_t max_seqs);
/* The budget as JSON ("strata_fit": 1).  0, or -1 with *d. */
int fit_json(const struct fit_result *f, const char *path, struct diag *d);

#endif
