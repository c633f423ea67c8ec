/* cmd_fit.c: `strata fit`: the memory budget of an LLM on a device
 * (sim/out/fit.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "cli.h"
#include "diag.h"
#include "fit.h"
#include "llm.h"
#include "numfmt.h"

static int parse_count(const char *opt, const char *v, uint64_t min, uint64_t *out)
{
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    if (v[0] == '\0' || v[0] == '-' || *end != '\0' || x < min || x > (1ull << 40)) {
        fprintf(stderr, "strata fit: %s: expected an integer >= %llu, got '%s'\n", opt,
                (unsigned long long)min, v);
        return -1;
    }
    *out = x;
    return 0;
}

const char cli_fit_usage[] =
    "  strata fit      --hw CONFIG.yaml --model CONFIG.json --phase decode|prefill|train\n"
    "                  [--batch B] [--prompt P] [--context C] [--dtype D] [--weights FMT]\n"
    "                  [--kv-dtype D] [--tp N] [--sp] [--cp C] [--dp D] [--zero 0-3] [--recompute]\n"
    "                  [--pp P [--vpp V]] [--microbatches M]\n"
    "                  [--ep E [--expert-load F] (MoE)] [--page-size P (decode, prefill: a paged KV cache)]\n"
    "                  [--attn IMPL] [--dropout P] (train: what attention stores, dropout masks)\n"
    "                  [--json OUT.json]\n"
    "                  " CLI_SET_USAGE "\n"
    "                  (defaults: --batch 1, --prompt 2048 (prefill, train), --context 0, --dtype\n"
    "                  bf16, --weights and --kv-dtype as --dtype, --tp, --cp, --dp, --pp, --vpp,\n"
    "                  --ep 1, --zero 0, --microbatches the batch, --expert-load 1 (uniform),\n"
    "                  --page-size 0 (a contiguous cache), --attn flash, --dropout 0)\n";

/* The options of `fit` as given (NULL: not given). */
struct fit_args {
    const char *hw, *model, *phase, *batch, *prompt;
    const char *context, *dtype, *weights, *kvd, *js;
    const char *tps, *dps, *zeros;
    const char *pps, *mbs, *eps, *pages, *vpps, *cps;
    const char *attn, *drops, *loads;
    int recompute, sp;
    uint64_t tp, dp, zero;
};

/* The parallel layout: --tp, --dp, --zero, --ep, --page-size, --cp, --vpp,
 * --pp, --microbatches.  0, or 2 after a usage message. */
static int fit_layout(struct fit_args *a, struct llm_step *s)
{
    a->tp = 1, a->dp = 1, a->zero = 0;
    if ((a->tps && parse_count("--tp", a->tps, 1, &a->tp)) || (a->dps && parse_count("--dp", a->dps, 1, &a->dp)) ||
        (a->zeros && parse_count("--zero", a->zeros, 0, &a->zero)))
        return 2;
    if (a->tp > 65536 || a->dp > 65536 || a->zero > 3) {
        fprintf(stderr, "strata fit: --tp and --dp at most 65536, --zero 0 to 3\n");
        return 2;
    }
    if (a->zero > 0 && !ascii_ieq(a->phase, "train")) {
        fprintf(stderr, "strata fit: --zero is for --phase train (it shards optimizer state)\n");
        return 2;
    }
    s->tp = (uint32_t)a->tp;
    s->dp = (uint32_t)a->dp;
    s->zero = (uint32_t)a->zero;
    if (a->eps != NULL) {
        uint64_t v = 1;
        if (parse_count("--ep", a->eps, 1, &v))
            return 2;
        if (v > 65536) {
            fprintf(stderr, "strata fit: --ep at most 65536\n");
            return 2;
        }
        s->ep = (uint32_t)v;
    }
    if (a->pages != NULL) {
        uint64_t v = 0;
        if (parse_count("--page-size", a->pages, 1, &v))
            return 2;
        if (v > 65535 || ascii_ieq(a->phase, "train")) {
            fprintf(stderr, "strata fit: --page-size (1-65535 tokens) is for decode and prefill\n");
            return 2;
        }
        s->page_size = (uint32_t)v;
    }
    s->recompute = a->recompute;
    s->sp = a->sp;
    if (a->cps != NULL) {
        uint64_t v = 1;
        if (parse_count("--cp", a->cps, 1, &v))
            return 2;
        if (v > 4096 || !ascii_ieq(a->phase, "train")) {
            fprintf(stderr, "strata fit: --cp (1-4096 context-parallel ranks) is for --phase train\n");
            return 2;
        }
        s->cp = (uint32_t)v;
    }
    return 0;
}

/* The pipeline: --vpp, --pp, --microbatches. */
static int fit_pipeline(const struct fit_args *a, struct llm_step *s)
{
    uint64_t vp = 1;
    if (a->vpps != NULL && (parse_count("--vpp", a->vpps, 1, &vp) || vp > 64 || a->pps == NULL)) {
        fprintf(stderr, "strata fit: --vpp (1-64 model chunks a stage) needs --pp 2 or more\n");
        return 2;
    }
    s->vpp = (uint32_t)vp;
    if (a->pps != NULL || a->mbs != NULL) {
        uint64_t v = 1, m = 0;
        if ((a->pps && parse_count("--pp", a->pps, 1, &v)) || (a->mbs && parse_count("--microbatches", a->mbs, 1, &m)))
            return 2;
        if (!ascii_ieq(a->phase, "train") || v > 65536 || m > 4096) {
            fprintf(stderr, "strata fit: --pp (1-65536) and --microbatches (1-4096) are for --phase train\n");
            return 2;
        }
        s->pp = (uint32_t)v;
        s->microbatches = (uint32_t)m;
        if (s->vpp > 1 && (s->pp < 2 || (uint64_t)s->pp * s->vpp > 65536)) {
            fprintf(stderr, "strata fit: --vpp (1-64 model chunks a stage) needs --pp 2 or more\n");
            return 2;
        }
        if ((s->pp > 1 || s->microbatches > 1) && s->zero > 2) {   /* as gen llm: DeepSpeed refuses it */
            fprintf(stderr, "strata fit: --zero 3 does not combine with --pp or --microbatches (each "
                            "micro-batch would gather the weights again); use --zero 1 or 2\n");
            return 2;
        }
    }
    return 0;
}

/* What a training step stores: --sp, --recompute, --dropout, --attn,
 * --expert-load. */
static int fit_train_opts(const struct fit_args *a, struct llm_step *s)
{
    if (a->sp && (!ascii_ieq(a->phase, "train") || s->tp < 2)) {
        fprintf(stderr, "strata fit: --sp (sequence parallelism) is for --phase train with --tp 2 or more\n");
        return 2;
    }
    if (a->recompute && !ascii_ieq(a->phase, "train")) {
        fprintf(stderr, "strata fit: --recompute is for --phase train\n");
        return 2;
    }
    if (a->drops != NULL && !ascii_ieq(a->phase, "train")) {
        fprintf(stderr, "strata fit: --dropout is for --phase train (what the backward keeps)\n");
        return 2;
    }   /* --attn, as gen's, for any phase: only a training step keeps what it stores */
    if (a->attn != NULL && op_attn_impl_from_name(a->attn, &s->attn) != 0) {
        fprintf(stderr, "strata fit: --attn: unknown attention '%s' (as gen llm's)\n", a->attn);
        return 2;
    }
    if (a->loads != NULL) {
        if (num_parse(a->loads, &s->expert_load) != 0 || !(s->expert_load >= 1.0 && s->expert_load <= 64.0) ||
            a->eps == NULL || !ascii_ieq(a->phase, "train")) {
            fprintf(stderr, "strata fit: --expert-load: the busiest EP rank's token copies over the mean, "
                            "1 to 64, with --ep and --phase train, got '%s'\n", a->loads);
            return 2;
        }
    }
    if (a->drops != NULL) {
        if (num_parse(a->drops, &s->dropout) != 0 || !(s->dropout >= 0.0 && s->dropout < 1.0)) {
            fprintf(stderr, "strata fit: --dropout: a probability from 0 to below 1, got '%s'\n", a->drops);
            return 2;
        }
    }
    return 0;
}

/* The phase, shapes and types: --phase, --batch, --prompt, --context,
 * --dtype, --weights, --kv-dtype. */
static int fit_shape(const struct fit_args *a, struct llm_step *s)
{
    if (ascii_ieq(a->phase, "prefill") || ascii_ieq(a->phase, "train")) {
        s->phase = LLM_PREFILL;
        s->prompt = 2048;
    } else if (!ascii_ieq(a->phase, "decode")) {
        fprintf(stderr, "strata fit: --phase: expected decode, prefill or train, got '%s'\n", a->phase);
        return 2;
    }
    if ((a->batch && parse_count("--batch", a->batch, 1, &s->batch)) ||
        (a->prompt && parse_count("--prompt", a->prompt, 1, &s->prompt)) ||
        (a->context && parse_count("--context", a->context, 0, &s->context)))
        return 2;
    if (a->prompt != NULL && s->phase == LLM_DECODE)
        fprintf(stderr, "strata fit: warning: --prompt applies to prefill and train; decode's KV "
                        "cache is --context%s\n", a->context == NULL ? " (not given: empty)" : "");
    if (a->dtype && dtype_from_name(a->dtype, &s->dtype) != 0) {
        fprintf(stderr, "strata fit: --dtype: unknown dtype '%s'\n", a->dtype);
        return 2;
    }
    if (a->weights && llm_weights_from_name(a->weights, s) != 0) {
        char why[512];
        llm_weights_why(a->weights, why, sizeof why);
        fprintf(stderr, "strata fit: --weights: '%s': %s\n", a->weights, why);
        return 2;
    }
    if (a->kvd && dtype_from_name(a->kvd, &s->kv_dtype) != 0) {
        fprintf(stderr, "strata fit: --kv-dtype: unknown dtype '%s'\n", a->kvd);
        return 2;
    }
    return 0;
}

/* The layouts gen llm can write, and the model's position limit: 0, or 1
 * after printing why not. */
static int fit_check(const struct fit_args *a, const struct llm_config *c, const struct llm_step *s,
                     int train)
{
    struct diag d;
    memset(&d, 0, sizeof d);
    struct llm_step as_gen = *s;     /* fit's train is a prefill-shaped step with train set */
    if (train)
        as_gen.phase = LLM_TRAIN;
    if ((llm_hybrid(c) && llm_check_hybrid(c, &as_gen, &d) != 0) ||
        llm_check_tp(c, &as_gen, &d) != 0 || llm_check_ep(c, &as_gen, &d) != 0 ||
        llm_check_pp(c, &as_gen, &d) != 0 ||
        llm_check_cp(c, &as_gen, &d) != 0) {   /* the layouts gen llm can write */
        diag_print(&d, stderr);
        return 1;
    }
    uint64_t seq = s->context + (s->phase == LLM_DECODE ? 1 : s->prompt);
    if (seq > c->max_pos) {
        d.code = DIAG_E_RANGE;
        diag_set(&d, DIAG_E_RANGE, a->model, 0, "max_position_embeddings",
                 "context %llu + new tokens %llu = %llu exceeds the model's %llu",
                 (unsigned long long)s->context, (unsigned long long)(seq - s->context),
                 (unsigned long long)seq, (unsigned long long)c->max_pos);
        diag_print(&d, stderr);
        return 1;
    }
    return 0;
}

/* The budget as a table on txt. */
static void fit_print(FILE *txt, const struct fit_args *a, const struct hw_config *cfg,
                      const struct llm_step *s, const struct fit_result *f)
{
    char x[32], y[32];
    fprintf(txt, "strata fit: %s (%.2f B params) %s on %s, batch %llu%s, ", a->model, f->params / 1e9,
            a->phase, cfg_label(cfg), (unsigned long long)s->batch, a->batch ? "" : " (default)");
    if (s->phase == LLM_DECODE)
        fprintf(txt, "KV cache of %llu tokens%s", (unsigned long long)s->context + 1,
                a->context ? "" : " (no --context: the step's own token only)");
    else
        fprintf(txt, "%llu-token sequences%s", (unsigned long long)(s->prompt + s->context),
                a->prompt ? "" : " (default --prompt 2048)");
    if (s->page_size > 0)
        fprintf(txt, ", in pages of %u tokens", s->page_size);
    if (a->tp > 1 || a->dp > 1)
        fprintf(txt, ", per rank of TP %llu x DP %llu%s%s", (unsigned long long)a->tp,
                (unsigned long long)a->dp, a->zero ? ", ZeRO-" : "",
                a->zero ? (a->zero == 1 ? "1" : a->zero == 2 ? "2" : "3") : "");
    if (s->pp > 1)
        fprintf(txt, ", first pipeline stage of %u (%u micro-batches, 1F1B)", s->pp,
                s->microbatches ? s->microbatches : (unsigned)s->batch);
    fprintf(txt, "\n");
    const struct { const char *name; double v; } rows[] = {
        {"weights", f->weights},       {"KV cache", f->kv_cache},   {"activations", f->activations},
        {"optimizer state", f->optimizer}, {"workspace", f->workspace},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        numfmt_si(x, sizeof x, rows[i].v, "B");
        fprintf(txt, "  %-16s %12s  (%.3f GiB)\n", rows[i].name, x, rows[i].v / 1073741824.0);
        if (i == 0 && f->weights_decoded != f->weights) {
            numfmt_si(x, sizeof x, f->weights_decoded, "B");
            fprintf(txt, "  %-16s %12s  (%.3f GiB: entropy-coded in memory, %.1f%% smaller than "
                         "decoded)\n", "  decoded", x, f->weights_decoded / 1073741824.0,
                    100.0 * (1.0 - f->weights / f->weights_decoded));
        }
        if (i == 1 && f->ssm_state > 0) {   /* a hybrid's mixers: fixed a sequence */
            numfmt_si(x, sizeof x, f->ssm_state, "B");
            fprintf(txt, "  %-16s %12s  (%.3f GiB: the Mamba-2 mixers' state, fixed a sequence)\n",
                    "SSM state", x, f->ssm_state / 1073741824.0);
        }
    }
    numfmt_si(x, sizeof x, f->total, "B");
    numfmt_si(y, sizeof y, f->capacity, "B");
    fprintf(txt, "  %-16s %12s of %s: %s\n", "total", x, y,
           f->fits ? "FITS" : "DOES NOT FIT");
    if (!f->fits) {
        numfmt_si(x, sizeof x, f->spill, "B");
        fprintf(txt, "  %s of weights must be streamed every step: %.3f s over PCIe from host memory, "
               "%.3f s from an NVMe SSD (7 GB/s)\n",
               x, f->spill_pcie_s, f->spill_storage_s);
    }
}

int cli_fit(int argc, char **argv)
{
    struct fit_args a;
    memset(&a, 0, sizeof a);
    const struct cli_opt opts[] = {
        {"hw", 0, &a.hw, NULL},           {"model", 0, &a.model, NULL},
        {"phase", 0, &a.phase, NULL},     {"batch", 0, &a.batch, NULL},
        {"prompt", 0, &a.prompt, NULL},   {"context", 0, &a.context, NULL},
        {"recompute", 0, NULL, &a.recompute}, {"sp", 0, NULL, &a.sp},
        {"pp", 0, &a.pps, NULL},          {"microbatches", 0, &a.mbs, NULL},
        {"vpp", 0, &a.vpps, NULL},        {"cp", 0, &a.cps, NULL},
        {"dtype", 0, &a.dtype, NULL},     {"weights", 0, &a.weights, NULL},
        {"kv-dtype", 0, &a.kvd, NULL},    {"json", 0, &a.js, NULL},
        {"tp", 0, &a.tps, NULL},          {"dp", 0, &a.dps, NULL},
        {"zero", 0, &a.zeros, NULL},      {"ep", 0, &a.eps, NULL},
        {"page-size", 0, &a.pages, NULL}, {"attn", 0, &a.attn, NULL},
        {"dropout", 0, &a.drops, NULL},   {"expert-load", 0, &a.loads, NULL},
        {NULL, 0, NULL, NULL},
    };
    struct cfg_sets sets;
    memset(&sets, 0, sizeof sets);
    {
        int src = cli_take_sets("fit", &argc, argv, &sets);
        if (src >= 0)
            return src;
    }
    int rc = cli_parse("fit", cli_fit_usage, opts, argc, argv, NULL);
    if (rc >= 0)
        return rc;
    char hw_path[1600];
    if (cli_find("fit", "--hw", &a.hw, 0, hw_path, sizeof hw_path) != 0)
        return 1;
    char model_path[1600];
    if (cli_find("fit", "--model", &a.model, 1, model_path, sizeof model_path) != 0)
        return 1;
    if (a.hw == NULL || a.model == NULL || a.phase == NULL) {
        fprintf(stderr, "strata fit: --hw, --model and --phase are required\n");
        return 2;
    }
    struct llm_step s = {LLM_DECODE, 1, 1, 0, DT_BF16, ATTN_FLASH, DT_COUNT, WF_NONE, 0, LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    if ((rc = fit_layout(&a, &s)) != 0 || (rc = fit_pipeline(&a, &s)) != 0 ||
        (rc = fit_train_opts(&a, &s)) != 0 || (rc = fit_shape(&a, &s)) != 0)
        return rc;
    int train = ascii_ieq(a.phase, "train");
    struct diag d;
    memset(&d, 0, sizeof d);
    struct hw_system hs;            /* a chip config: only hs.chip */
    struct llm_config c;
    if (hw_load(a.hw, &sets, &hs, NULL, &d) != 0 || llm_config_load(a.model, &c, &d) != 0 ||
        llm_config_decoder(&c, "strata fit", 1, &d) != 0) {
        diag_print(&d, stderr);
        return 1;
    }
    struct hw_config cfg = hs.chip;
    if (fit_check(&a, &c, &s, train) != 0)
        return 1;
    struct fit_result f;
    fit_budget(&cfg, &c, &s, train, &f);
    /* JSON on stdout: the table moves aside */
    fit_print(cli_is_stdout(a.js) ? stderr : stdout, &a, &cfg, &s, &f);
    if (a.js != NULL && fit_json(&f, a.js, &d) != 0) {
        diag_print(&d, stderr);
        return 1;
    }
    return 0;
}
