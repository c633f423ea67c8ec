/* serve_setup.c: the hardware, KV cache and step cache of a serving run
 * (serve_setup.h).  The cache is vLLM's: a share of the device's memory
 * less the weights, a prefill step's activations and the workspace
 * (fit_kv_blocks); a model that leaves nothing is an error that says what
 * took the memory. */
#include "serve_setup.h"

#include <string.h>

#include "hwload.h"
#include "whatif.h"

int serve_setup_init(struct serve_setup *su, const char *hw, const struct cfg_sets *sets,
                     const struct stack *stk, const char *sdir, const struct llm_config *c,
                     const struct llm_step *pre, const struct llm_step *dec, double util,
                     struct serve_sched *sch, struct diag *d)
{
    memset(su, 0, sizeof *su);
    enum hw_kind kind;
    if (hw_load(hw, sets, &su->sys, &kind, d) != 0)
        return -1;
    /* the devices a step has: a decode step's trace */
    struct trace probe;
    if (llm_build(c, dec, &probe, d) != 0) {
        sys_free(&su->sys);
        return -1;
    }
    struct whatif_hw wh = {hw, sets, stk, sdir};
    int rc = whatif_build(&wh, kind, &probe, &su->sys, d);
    trace_free(&probe);
    if (rc != 0)
        return -1;
    const struct hw_config *cfg = &su->sys.chip;
    sch->kv_blocks = fit_kv_blocks(cfg, c, dec, util, sch->max_batched_tokens, sch->block_size, &su->fit,
                                   &su->kv_per_token, sch->max_num_seqs);
    if (sch->kv_blocks == 0) {
        const struct fit_result *f = &su->fit;
        diag_set(d, DIAG_E_RANGE, "", 0, "", "the model does not fit: %.3g GB of weights a device, "
                 "%.3g GB of activations for a step of %u tokens and %.3g GB of workspace leave no KV "
                 "cache in %.0f%% of %s's %.3g GB (strata fit; more --tp, --gpu-memory-utilization, "
                 "or a larger device)", f->weights / 1e9, f->activations / 1e9, sch->max_batched_tokens,
                 f->workspace / 1e9, util * 100, cfg->name, f->capacity / 1e9);
        sys_free(&su->sys);
        return -1;
    }
    serve_steps_init(&su->steps, c, pre, dec, &su->sys, sch->kv_blocks * sch->block_size);
    return 0;
}

int serve_setup_draft(struct serve_setup *su, const struct llm_config *dc, const struct llm_step *pre,
                      const struct llm_step *dec, struct serve_sched *sch, struct diag *d)
{
    const struct hw_config *cfg = &su->sys.chip;
    struct fit_result f;
    double per = 0;
    /* the draft's weights and its KV a token at the same split (its own budget is not used) */
    (void)fit_kv_blocks(cfg, dc, dec, 1.0, 1, sch->block_size, &f, &per, 0);
    double bytes = (double)sch->kv_blocks * sch->block_size * su->kv_per_token - f.weights;
    double blocks = bytes / ((double)sch->block_size * (su->kv_per_token + per));
    if (!(blocks >= 1)) {
        return diag_set(d, DIAG_E_RANGE, "", 0, "", "the draft model leaves no KV cache: its %.3g GB of "
                        "weights a device take the %.3g GB the cache had", f.weights / 1e9,
                        (double)sch->kv_blocks * sch->block_size * su->kv_per_token / 1e9);
    }
    sch->kv_blocks = (uint64_t)blocks;
    su->draft_weights = f.weights;
    su->steps.cap_tokens = sch->kv_blocks * sch->block_size;
    serve_steps_init(&su->draft, dc, pre, dec, &su->sys, su->steps.cap_tokens);
    su->steps.draft = &su->draft;
    return 0;
}

void serve_setup_free(struct serve_setup *su)
{
    if (su->steps.draft != NULL)
        serve_steps_free(&su->draft);
    serve_steps_free(&su->steps);
    sys_free(&su->sys);
    memset(su, 0, sizeof *su);
}
