/* serve_setup.h: the deployment a `strata serve` run stands on, built the
 * same way for the verb and for `strata validate` on a serving CSV
 * (serve_val.h): the hardware as `run` loads it for the steps' devices
 * with the stack applied, the paged KV cache `fit` leaves on a device, and
 * the step-time cache.  Ownership: serve_setup_free releases what
 * serve_setup_init filled (the system and the step cache). */
#ifndef STRATA_SERVE_SETUP_H
#define STRATA_SERVE_SETUP_H

#include "cfgset.h"
#include "diag.h"
#include "fit.h"
#include "serve.h"

struct serve_setup {
    struct hw_system sys;       /* the hardware, the stack applied to its chip */
    struct fit_result fit;      /* the memory budget of a prefill of max_batched_tokens */
    double kv_per_token;        /* KV bytes a token takes on a device */
    struct serve_steps steps;   /* the step-time cache over sys */
    struct serve_steps draft;   /* speculative decoding's draft model's (serve_setup_draft) */
    double draft_weights;       /* its weights on a device, bytes (0: none) */
};

/* Loads hw (a chip config or a system file; sets and stk may be NULL,
 * sdir: the stacks' folder) for the devices of dec, sizes the cache at
 * util of a device's memory into sch->kv_blocks, and readies the step
 * cache for model c.  0, or -1 with *d (a model that leaves no room for a
 * KV cache names its budget; nothing left to free). */
int serve_setup_init(struct serve_setup *su, const char *hw, const struct cfg_sets *sets,
                     const struct stack *stk, const char *sdir, const struct llm_config *c,
                     const struct llm_step *pre, const struct llm_step *dec, double util,
                     struct serve_sched *sch, struct diag *d);
/* Speculative decoding (sch->spec_k > 0): the draft model dc on the same
 * devices with the same step templates.  Its weights come out of the KV
 * cache, and each cached token holds the draft's KV beside the model's
 * (vLLM keeps both caches in the same memory), so sch->kv_blocks shrinks.
 * 0, or -1 with *d (a draft that leaves no cache). */
int serve_setup_draft(struct serve_setup *su, const struct llm_config *dc, const struct llm_step *pre,
                      const struct llm_step *dec, struct serve_sched *sch, struct diag *d);
void serve_setup_free(struct serve_setup *su);

#endif
