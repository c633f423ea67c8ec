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
#include "report.h"

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
    "                  " CLI_SET_USAGE "\n";

int cli_fit(int argc, char **argv)
{
    const char *hw = NULL, *model = NULL, *phase = NULL, *batch = NULL, *prompt = NULL;
    const char *context = NULL, *dtype = NULL, *weights = NULL, *kvd = NULL, *js = NULL;
    const char *tps = NULL, *dps = NULL, *zeros = NULL;
    const char *pps = NULL, *mbs = NULL, *eps = NULL, *pages = NULL, *vpps = NULL, *cps = NULL;
    const char *attn = NULL, *drops = NULL, *loads = NULL;
    int recompute = 0, sp = 0;
    const struct cli_opt opts[] = {
        {"hw", 0, &hw, NULL},           {"model", 0, &model, NULL},
        {"phase", 0, &phase, NULL},     {"batch", 0, &batch, NULL},
        {"prompt", 0, &prompt, NULL},   {"context", 0, &context, NULL},
        {"recompute", 0, NULL, &recompute}, {"sp", 0, NULL, &sp},
        {"pp", 0, &pps, NULL},          {"microbatches", 0, &mbs, NULL},
        {"vpp", 0, &vpps, NULL},        {"cp", 0, &cps, NULL},
        {"dtype", 0, &dtype, NULL},     {"weights", 0, &weights, NULL},
        {"kv-dtype", 0, &kvd, NULL},    {"json", 0, &js, NULL},
        {"tp", 0, &tps, NULL},          {"dp", 0, &dps, NULL},
        {"zero", 0, &zeros, NULL},      {"ep", 0, &eps, NULL},
        {"page-size", 0, &pages, NULL}, {"attn", 0, &attn, NULL},
        {"dropout", 0, &drops, NULL},   {"expert-load", 0, &loads, NULL},
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
    if (cli_find("fit", "--hw", &hw, 0, hw_path, sizeof hw_path) != 0)
        return 1;
    char model_path[1600];
    if (cli_find("fit", "--model", &model, 1, model_path, sizeof model_path) != 0)
        return 1;
    if (hw == NULL || model == NULL || phase == NULL) {
        fprintf(stderr, "strata fit: --hw, --model and --phase are required\n");
        return 2;
    }
    struct llm_step s = {LLM_DECODE, 1, 1, 0, DT_BF16, ATTN_FLASH, DT_COUNT, WF_NONE, 0, LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    uint64_t tp = 1, dp = 1, zero = 0;
    if ((tps && parse_count("--tp", tps, 1, &tp)) || (dps && parse_count("--dp", dps, 1, &dp)) ||
        (zeros && parse_count("--zero", zeros, 0, &zero)))
        return 2;
    if (tp > 65536 || dp > 65536 || zero > 3) {
        fprintf(stderr, "strata fit: --tp and --dp at most 65536, --zero 0 to 3\n");
        return 2;
    }
    if (zero > 0 && !ascii_ieq(phase, "train")) {
        fprintf(stderr, "strata fit: --zero is for --phase train (it shards optimizer state)\n");
        return 2;
    }
    s.tp = (uint32_t)tp;
    s.dp = (uint32_t)dp;
    s.zero = (uint32_t)zero;
    if (eps != NULL) {
        uint64_t v = 1;
        if (parse_count("--ep", eps, 1, &v))
            return 2;
        if (v > 65536) {
            fprintf(stderr, "strata fit: --ep at most 65536\n");
            return 2;
        }
        s.ep = (uint32_t)v;
    }
    if (pages != NULL) {
        uint64_t v = 0;
        if (parse_count("--page-size", pages, 1, &v))
            return 2;
        if (v > 65535 || ascii_ieq(phase, "train")) {
            fprintf(stderr, "strata fit: --page-size (1-65535 tokens) is for decode and prefill\n");
            return 2;
        }
        s.page_size = (uint32_t)v;
    }
    s.recompute = recompute;
    s.sp = sp;
    if (cps != NULL) {
        uint64_t v = 1;
        if (parse_count("--cp", cps, 1, &v))
            return 2;
        if (v > 4096 || !ascii_ieq(phase, "train")) {
            fprintf(stderr, "strata fit: --cp (1-4096 context-parallel ranks) is for --phase train\n");
            return 2;
        }
        s.cp = (uint32_t)v;
    }
    uint64_t vp = 1;
    if (vpps != NULL && (parse_count("--vpp", vpps, 1, &vp) || vp > 64 || pps == NULL)) {
        fprintf(stderr, "strata fit: --vpp (1-64 model chunks a stage) needs --pp 2 or more\n");
        return 2;
    }
    s.vpp = (uint32_t)vp;
    if (pps != NULL || mbs != NULL) {
        uint64_t v = 1, m = 0;
        if ((pps && parse_count("--pp", pps, 1, &v)) || (mbs && parse_count("--microbatches", mbs, 1, &m)))
            return 2;
        if (!ascii_ieq(phase, "train") || v > 65536 || m > 4096) {
            fprintf(stderr, "strata fit: --pp (1-65536) and --microbatches (1-4096) are for --phase train\n");
            return 2;
        }
        s.pp = (uint32_t)v;
        s.microbatches = (uint32_t)m;
        if (s.vpp > 1 && (s.pp < 2 || (uint64_t)s.pp * s.vpp > 65536)) {
            fprintf(stderr, "strata fit: --vpp (1-64 model chunks a stage) needs --pp 2 or more\n");
            return 2;
        }
        if ((s.pp > 1 || s.microbatches > 1) && s.zero > 2) {   /* as gen llm: DeepSpeed refuses it */
            fprintf(stderr, "strata fit: --zero 3 does not combine with --pp or --microbatches (each "
                            "micro-batch would gather the weights again); use --zero 1 or 2\n");
            return 2;
        }
    }
    if (sp && (!ascii_ieq(phase, "train") || s.tp < 2)) {
        fprintf(stderr, "strata fit: --sp (sequence parallelism) is for --phase train with --tp 2 or more\n");
        return 2;
    }
    if (recompute && !ascii_ieq(phase, "train")) {
        fprintf(stderr, "strata fit: --recompute is for --phase train\n");
        return 2;
    }
    if (drops != NULL && !ascii_ieq(phase, "train")) {
        fprintf(stderr, "strata fit: --dropout is for --phase train (what the backward keeps)\n");
        return 2;
    }   /* --attn, as gen's, for any phase: only a training step keeps what it stores */
    if (attn != NULL && op_attn_impl_from_name(attn, &s.attn) != 0) {
        fprintf(stderr, "strata fit: --attn: unknown attention '%s' (as gen llm's)\n", attn);
        return 2;
    }
    if (loads != NULL) {
        if (num_parse(loads, &s.expert_load) != 0 || !(s.expert_load >= 1.0 && s.expert_load <= 64.0) ||
            eps == NULL || !ascii_ieq(phase, "train")) {
            fprintf(stderr, "strata fit: --expert-load: the busiest EP rank's token copies over the mean, "
                            "1 to 64, with --ep and --phase train, got '%s'\n", loads);
            return 2;
        }
    }
    if (drops != NULL) {
        if (num_parse(drops, &s.dropout) != 0 || !(s.dropout >= 0.0 && s.dropout < 1.0)) {
            fprintf(stderr, "strata fit: --dropout: a probability from 0 to below 1, got '%s'\n", drops);
            return 2;
        }
    }
    int train = ascii_ieq(phase, "train");
    if (ascii_ieq(phase, "prefill") || train) {
        s.phase = LLM_PREFILL;
        s.prompt = 2048;
    } else if (!ascii_ieq(phase, "decode")) {
        fprintf(stderr, "strata fit: --phase: expected decode, prefill or train, got '%s'\n", phase);
        return 2;
    }
    if ((batch && parse_count("--batch", batch, 1, &s.batch)) ||
        (prompt && parse_count("--prompt", prompt, 1, &s.prompt)) ||
        (context && parse_count("--context", context, 0, &s.context)))
        return 2;
    if (prompt != NULL && s.phase == LLM_DECODE)
        fprintf(stderr, "strata fit: warning: --prompt applies to prefill and train; decode's KV "
                        "cache is --context%s\n", context == NULL ? " (not given: empty)" : "");
    if (dtype && dtype_from_name(dtype, &s.dtype) != 0) {
        fprintf(stderr, "strata fit: --dtype: unknown dtype '%s'\n", dtype);
        return 2;
    }
    if (weights && llm_weights_from_name(weights, &s) != 0) {
        fprintf(stderr, "strata fit: --weights: unknown weight format '%s'\n", weights);
        return 2;
    }
    if (kvd && dtype_from_name(kvd, &s.kv_dtype) != 0) {
        fprintf(stderr, "strata fit: --kv-dtype: unknown dtype '%s'\n", kvd);
        return 2;
    }
    struct diag d;
    memset(&d, 0, sizeof d);
    struct hw_system hs;            /* a chip config: only hs.chip */
    struct llm_config c;
    if (hw_load(hw, &sets, &hs, NULL, &d) != 0 || llm_config_load(model, &c, &d) != 0) {
        diag_print(&d, stderr);
        return 1;
    }
    struct hw_config cfg = hs.chip;
    struct llm_step as_gen = s;     /* fit's train is a prefill-shaped step with train set */
    if (train)
        as_gen.phase = LLM_TRAIN;
    if (llm_check_tp(&c, &as_gen, &d) != 0 || llm_check_ep(&c, &as_gen, &d) != 0 ||
        llm_check_pp(&c, &as_gen, &d) != 0 ||
        llm_check_cp(&c, &as_gen, &d) != 0) {   /* the layouts gen llm can write */
        diag_print(&d, stderr);
        return 1;
    }
    uint64_t seq = s.context + (s.phase == LLM_DECODE ? 1 : s.prompt);
    if (seq > c.max_pos) {
        d.code = DIAG_E_RANGE;
        diag_set(&d, DIAG_E_RANGE, model, 0, "max_position_embeddings",
                 "context %llu + new tokens %llu = %llu exceeds the model's %llu",
                 (unsigned long long)s.context, (unsigned long long)(seq - s.context),
                 (unsigned long long)seq, (unsigned long long)c.max_pos);
        diag_print(&d, stderr);
        return 1;
    }
    struct fit_result f;
    fit_budget(&cfg, &c, &s, train, &f);
    FILE *txt = cli_is_stdout(js) ? stderr : stdout; /* JSON on stdout: the table moves aside */
    char a[32], b[32];
    fprintf(txt, "strata fit: %s (%.2f B params) %s on %s, batch %llu%s, ", model, f.params / 1e9,
            phase, cfg_label(&cfg), (unsigned long long)s.batch, batch ? "" : " (default)");
    if (s.phase == LLM_DECODE)
        fprintf(txt, "KV cache of %llu tokens%s", (unsigned long long)s.context + 1,
                context ? "" : " (no --context: the step's own token only)");
    else
        fprintf(txt, "%llu-token sequences%s", (unsigned long long)(s.prompt + s.context),
                prompt ? "" : " (default --prompt 2048)");
    if (s.page_size > 0)
        fprintf(txt, ", in pages of %u tokens", s.page_size);
    if (tp > 1 || dp > 1)
        fprintf(txt, ", per rank of TP %llu x DP %llu%s%s", (unsigned long long)tp,
                (unsigned long long)dp, zero ? ", ZeRO-" : "", zero ? (zero == 1 ? "1" : zero == 2 ? "2" : "3") : "");
    if (s.pp > 1)
        fprintf(txt, ", first pipeline stage of %u (%u micro-batches, 1F1B)", s.pp,
                s.microbatches ? s.microbatches : (unsigned)s.batch);
    fprintf(txt, "\n");
    const struct { const char *name; double v; } rows[] = {
        {"weights", f.weights},       {"KV cache", f.kv_cache},   {"activations", f.activations},
        {"optimizer state", f.optimizer}, {"workspace", f.workspace},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        numfmt_si(a, sizeof a, rows[i].v, "B");
        fprintf(txt, "  %-16s %12s  (%.3f GiB)\n", rows[i].name, a, rows[i].v / 1073741824.0);
    }
    numfmt_si(a, sizeof a, f.total, "B");
    numfmt_si(b, sizeof b, f.capacity, "B");
    fprintf(txt, "  %-16s %12s of %s: %s\n", "total", a, b,
           f.fits ? "FITS" : "DOES NOT FIT");
    if (!f.fits) {
        numfmt_si(a, sizeof a, f.spill, "B");
        fprintf(txt, "  %s of weights must be streamed every step: %.3f s over PCIe from host memory, "
               "%.3f s from an NVMe SSD (7 GB/s)\n",
               a, f.spill_pcie_s, f.spill_storage_s);
    }
    if (js != NULL && fit_json(&f, js, &d) != 0) {
        diag_print(&d, stderr);
        return 1;
    }
    return 0;
}
