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
                                   &su->kv_per_token);
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

void serve_setup_free(struct serve_setup *su)
{
    serve_steps_free(&su->steps);
    sys_free(&su->sys);
    memset(su, 0, sizeof *su);
}
