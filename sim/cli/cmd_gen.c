/* cmd_gen.c: `strata gen llm`: an LLM step as a trace (sim/work/llm.h);
 * `strata gen KIND:key=value,...`: the trace of run --op's ops
 * (sim/work/opspec.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "diag.h"
#include "llm.h"
#include "numfmt.h"
#include "opspec.h"
#include "stack.h"
#include "trace.h"

static int parse_u64(const char *opt, const char *v, uint64_t min, uint64_t *out)
{
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    if (v[0] == '\0' || v[0] == '-' || *end != '\0' || x < min || x > (1ull << 40)) {
        fprintf(stderr, "strata gen llm: %s: expected an integer >= %llu, got '%s'\n", opt,
                (unsigned long long)min, v);
        return -1;
    }
    *out = x;
    return 0;
}

/* A count of ranks or replicas: 1 to 65536.  0, or -1 after a message. */
static int parse_ranks(const char *opt, const char *v, uint64_t *out)
{
    if (parse_u64(opt, v, 1, out))
        return -1;
    if (*out > 65536) {
        fprintf(stderr, "strata gen llm: %s: at most 65536, got %llu\n", opt, (unsigned long long)*out);
        return -1;
    }
    return 0;
}

const char cli_gen_usage[] =
    "  strata gen llm  --model CONFIG.json --phase prefill|decode|train [--batch B] [--prompt P]\n"
    "                  [--context C] [--dtype bf16] [--attn IMPL] [--weights FMT]\n"
    "                  [--kv-dtype D] [--framework fused|llama.cpp|pytorch|vllm|hf] [--stack NAME]\n"
    "                  [--tp N] [--dp D [--replicas-simulated K]]\n"
    "                  [--recompute] [--pp P [--vpp V]] [--microbatches M] (train)\n"
    "                  [--pp P (prefill, decode: the layers split over P devices in sequence)]\n"
    "                  [--sp (train, --tp: sequence parallelism)]\n"
    "                  [--cp C [--cp-comm p2p|a2a|allgather] (train: context parallelism)]\n"
    "                  [--ep E (MoE) [--expert-load F]] [--zero 0-3 (train, --dp)] [--dcn S (train: S slices)]\n"
    "                  [--dropout P (train: attention and hidden dropout)]\n"
    "                  [--page-size P (decode, prefill: a paged KV cache)]\n"
    "                  [--ubatch U (prefill: the prompt in pieces of U tokens, llama.cpp's n_ubatch)]\n"
    "                  [--images N (prefill of a VLM: images a sequence, their tokens before the prompt's)]\n"
    "                  -o|--output TRACE.json\n"
    "                  (defaults: --batch 1, --prompt 512 (prefill, train), --context 0, --dtype\n"
    "                  bf16, --attn flash, --weights and --kv-dtype as --dtype, --framework fused,\n"
    "                  --tp, --dp, --pp, --vpp, --cp, --ep, --dcn 1, --replicas-simulated all,\n"
    "                  --microbatches the batch, --zero 0, --cp-comm p2p, --expert-load 1 (uniform),\n"
    "                  --dropout 0, --page-size 0 (a contiguous cache), --ubatch the prompt, --images 0; --stack\n"
    "                  sets --framework, --attn and --ubatch where they are not given)\n"
    "  strata gen      KIND:key=value,... [KIND:key=value,... ...] -o|--output TRACE.json\n"
    "                  (the trace run --op runs, to read or edit: gen gemm:m=8192,n=8192,k=8192\n"
    "                  -o gemm.json; a collective needs ranks=N: all_reduce:bytes=1GiB,ranks=8)\n";

/* The options of `gen llm` as given (NULL: not given). */
struct gen_args {
    const char *model, *phase, *batch, *prompt, *context;
    const char *dtype, *attn, *outp, *weights, *kvd;
    const char *fw, *tps, *dps, *sims;
    const char *pps, *mbs, *eps, *zeros, *dcns, *pages;
    const char *vpps, *loads, *cps, *cpcs, *drops, *stack, *ubs, *imgs;
    int recompute, sp;
};

/* The phase and what it allows: --phase, --recompute, --sp. */
static int gen_phase(const struct gen_args *a, struct llm_step *s)
{
    if (ascii_ieq(a->phase, "prefill"))
        s->phase = LLM_PREFILL;
    else if (ascii_ieq(a->phase, "train"))
        s->phase = LLM_TRAIN;
    else if (!ascii_ieq(a->phase, "decode")) {
        fprintf(stderr, "strata gen llm: --phase: expected prefill, decode or train, got '%s'\n",
                a->phase);
        return 2;
    }
    if (s->phase != LLM_DECODE)
        s->prompt = 512;
    if (a->recompute && s->phase != LLM_TRAIN) {
        fprintf(stderr, "strata gen llm: --recompute is for --phase train (it recomputes the "
                        "forward before the backward)\n");
        return 2;
    }
    s->recompute = a->recompute;
    s->sp = a->sp;
    return 0;
}

/* The pipeline and the training step's knobs: --pp, --microbatches,
 * --expert-load, --dropout, --vpp. */
static int gen_schedule(const struct gen_args *a, struct llm_step *s)
{
    if (a->pps != NULL) {
        uint64_t v;
        if (parse_ranks("--pp", a->pps, &v))
            return 2;
        s->pp = (uint32_t)v;
    }
    if (a->ubs != NULL) {
        uint64_t v = 0;
        if (parse_u64("--ubatch", a->ubs, 1, &v) || v > (1u << 20) || s->phase != LLM_PREFILL) {
            if (v > (1u << 20) || s->phase != LLM_PREFILL)
                fprintf(stderr, "strata gen llm: --ubatch: tokens a prefill piece holds, 1 to 1048576, "
                                "with --phase prefill\n");
            return 2;
        }
        s->ubatch = (uint32_t)v;
    }
    if (a->imgs != NULL) {
        uint64_t v = 0;
        if (parse_u64("--images", a->imgs, 0, &v) || v > 1024) {
            if (v > 1024)
                fprintf(stderr, "strata gen llm: --images: at most 1024 a sequence\n");
            return 2;
        }
        s->images = (uint32_t)v;
    }
    if (a->mbs != NULL) {
        uint64_t v = 0;
        if (parse_u64("--microbatches", a->mbs, 1, &v) || v > 4096) {
            if (v > 4096)
                fprintf(stderr, "strata gen llm: --microbatches: at most 4096\n");
            return 2;
        }
        s->microbatches = (uint32_t)v;
    }
    if (a->loads != NULL) {
        if (num_parse(a->loads, &s->expert_load) != 0 ||
            !(s->expert_load >= 1.0 && s->expert_load <= 64.0)) {
            fprintf(stderr, "strata gen llm: --expert-load: the busiest EP rank's load over the "
                            "mean, a number from 1 (uniform) to 64, got '%s'\n", a->loads);
            return 2;
        }
    }
    if (a->drops != NULL) {
        if (num_parse(a->drops, &s->dropout) != 0 || !(s->dropout >= 0.0 && s->dropout < 1.0)) {
            fprintf(stderr, "strata gen llm: --dropout: a probability from 0 to below 1 (Megatron's "
                            "default 0.1), got '%s'\n", a->drops);
            return 2;
        }
    }
    if (a->vpps != NULL) {
        uint64_t v = 0;
        if (parse_u64("--vpp", a->vpps, 1, &v) || v > 64) {
            if (v > 64)
                fprintf(stderr, "strata gen llm: --vpp: at most 64 model chunks a stage\n");
            return 2;
        }
        s->vpp = (uint32_t)v;
    }
    return 0;
}

/* The shapes: --batch, --prompt, --context (warning about those that do
 * not apply to the phase: said, not silently dropped). */
static int gen_shape(const struct gen_args *a, struct llm_step *s)
{
    if (a->prompt != NULL && s->phase == LLM_DECODE)
        fprintf(stderr, "strata gen llm: warning: --prompt applies to prefill and train; a decode "
                        "step's KV cache length is --context%s\n",
                a->context == NULL ? " (not given: an empty cache)" : "");
    if (a->context != NULL && s->phase == LLM_TRAIN) {
        fprintf(stderr, "strata gen llm: --context: a training step has no KV cache (its sequence "
                        "length is --prompt)\n");
        return 2;
    }
    if ((a->batch && parse_u64("--batch", a->batch, 1, &s->batch)) ||
        (a->prompt && parse_u64("--prompt", a->prompt, 1, &s->prompt)) ||
        (a->context && parse_u64("--context", a->context, 0, &s->context)))
        return 2;
    return 0;
}

/* The parallel layout: --tp, --dp, --ep, --dcn, --cp, --cp-comm,
 * --page-size, --zero, --replicas-simulated. */
static int gen_parallel(const struct gen_args *a, struct llm_step *s)
{
    uint64_t tp = 1, dp = 1;
    if ((a->tps && parse_ranks("--tp", a->tps, &tp)) || (a->dps && parse_ranks("--dp", a->dps, &dp)))
        return 2;
    s->tp = (uint32_t)tp;
    s->dp = (uint32_t)dp;
    uint64_t ep = 1, dcn = 1;
    if ((a->eps && parse_ranks("--ep", a->eps, &ep)) || (a->dcns && parse_ranks("--dcn", a->dcns, &dcn)))
        return 2;
    s->ep = (uint32_t)ep;
    s->dcn = (uint32_t)dcn;
    uint64_t cpn = 1;
    if (a->cps && parse_ranks("--cp", a->cps, &cpn))
        return 2;
    if (cpn > 4096) {
        fprintf(stderr, "strata gen llm: --cp: at most 4096 context-parallel ranks\n");
        return 2;
    }
    s->cp = (uint32_t)cpn;
    if (a->cpcs && llm_cp_comm_from_name(a->cpcs, &s->cp_comm) != 0) {
        fprintf(stderr, "strata gen llm: --cp-comm: p2p, a2a or allgather, got '%s'\n", a->cpcs);
        return 2;
    }
    if (a->pages != NULL) {
        uint64_t v;
        if (parse_u64("--page-size", a->pages, 1, &v))
            return 2;
        if (v > 65535) {
            fprintf(stderr, "strata gen llm: --page-size: at most 65535 tokens a page\n");
            return 2;
        }
        s->page_size = (uint32_t)v;
    }
    if (a->zeros != NULL) {
        uint64_t z;
        if (parse_u64("--zero", a->zeros, 0, &z))
            return 2;
        if (z > 3) {
            fprintf(stderr, "strata gen llm: --zero: a ZeRO stage, 0 to 3, got %llu\n", (unsigned long long)z);
            return 2;
        }
        s->zero = (uint32_t)z;
    }
    uint64_t sim = 0;
    if (a->sims && parse_u64("--replicas-simulated", a->sims, 1, &sim))
        return 2;
    if (a->sims && (dp < 2 || sim > dp)) {
        fprintf(stderr, "strata gen llm: --replicas-simulated: 1 to --dp replicas, with --dp 2 or more\n");
        return 2;
    }
    s->dp_sim = (uint32_t)sim;
    return 0;
}

/* The types and kernels: --dtype, --weights, --kv-dtype, --framework, --attn. */
static int gen_types(const struct gen_args *a, struct llm_step *s)
{
    if (a->dtype && dtype_from_name(a->dtype, &s->dtype) != 0) {
        fprintf(stderr, "strata gen llm: --dtype: unknown dtype '%s' (fp64, fp32, tf32, fp16, "
                        "bf16, fp8_e4m3, fp8_e5m2, int8, int4; also bfloat16, float16, fp8, ...)\n",
                a->dtype);
        return 2;
    }
    if (a->weights && llm_weights_from_name(a->weights, s) != 0) {
        char why[512];
        llm_weights_why(a->weights, why, sizeof why);
        fprintf(stderr, "strata gen llm: --weights: '%s': %s\n", a->weights, why);
        return 2;
    }
    if (a->kvd && dtype_from_name(a->kvd, &s->kv_dtype) != 0) {
        fprintf(stderr, "strata gen llm: --kv-dtype: unknown dtype '%s'\n", a->kvd);
        return 2;
    }
    if (a->fw && llm_framework_from_name(a->fw, &s->framework) != 0) {
        fprintf(stderr, "strata gen llm: --framework: expected fused, llama.cpp, pytorch, vllm or hf, got '%s'\n",
                a->fw);
        return 2;
    }
    s->attn = llm_framework_attn(s->framework);   /* unless --attn says */
    if (a->stack != NULL) {     /* its kernels and attention, unless --framework / --attn say */
        struct stack stk;
        char dir[1600];
        if (cli_load_stack("gen llm", a->stack, &stk, dir, sizeof dir) != 0)
            return 1;
        stack_apply_llm(&stk, s, a->fw != NULL, a->attn != NULL);
    }
    if (s->kv_dtype == DT_COUNT)
        s->kv_dtype = s->dtype;
    if (a->attn && op_attn_impl_from_name(a->attn, &s->attn) != 0) {
        fprintf(stderr, "strata gen llm: --attn: expected flash, naive, fa1, fa2, fa3, cudnn, "
                        "triton, xformers, math, megatron, sdpa, vllm or mmha, got '%s'\n", a->attn);
        return 2;
    }
    return 0;
}

/* The step the options describe: 0, or 2 after a usage message. */
static int gen_step(const struct gen_args *a, struct llm_step *s)
{
    int rc = gen_phase(a, s);
    if (rc == 0)
        rc = gen_schedule(a, s);
    if (rc == 0)
        rc = gen_shape(a, s);
    if (rc == 0)
        rc = gen_parallel(a, s);
    if (rc == 0)
        rc = gen_types(a, s);
    return rc;
}

/* What the trace holds, on msg (stdout, or stderr when the trace went to
 * stdout). */
static void gen_summary(FILE *msg, const struct gen_args *a, const struct llm_config *c,
                        const struct llm_step *s, const struct trace *t)
{
    if (c->encoder) {   /* a vision encoder: its sequence is the image's */
        const struct llm_vit *v = &c->vit;
        fprintf(msg, "wrote %s: %u ops, %s forward, batch %llu image%s%s of %llux%llu, %llu tokens "
                     "each (%llu patches of %llu and the class token), %.3g M params\n",
                a->outp, t->nops, c->name, (unsigned long long)s->batch, s->batch == 1 ? "" : "s",
                a->batch ? "" : " (default)", (unsigned long long)v->image, (unsigned long long)v->image,
                (unsigned long long)v->tokens, (unsigned long long)(v->tokens - 1),
                (unsigned long long)v->patch, (double)llm_param_count(c) / 1e6);
        if (s->attn == ATTN_SDPA)
            fprintf(msg, "  attention: sdpa, the kernel PyTorch's SDPA runs on the chip of the run "
                         "(docs/attention.md)\n");
        return;
    }
    fprintf(msg, "wrote %s: %u ops, %s %s, batch %llu%s, %llu new tokens%s, %llu cached%s, "
                 "%.3g B params\n",
           a->outp, t->nops, c->name, s->phase == LLM_DECODE ? "decode" : s->phase == LLM_TRAIN ? "train" : "prefill",
           (unsigned long long)s->batch, a->batch ? "" : " (default)",
           (unsigned long long)(s->phase == LLM_DECODE ? 1 : s->prompt),
           s->phase != LLM_DECODE && a->prompt == NULL ? " (default --prompt)" : "",
           (unsigned long long)s->context,
           a->context == NULL && s->phase != LLM_TRAIN ? " (no --context)" : "",
           (double)llm_param_count(c) / 1e9);
    if (s->images > 0 && c->image_tokens > 0)
        fprintf(msg, "  %u image%s a sequence of %llux%llu through %llu of the image tower's %llu layers and "
                     "the projector: %llu tokens each, in front of the prompt's %llu\n",
                s->images, s->images == 1 ? "" : "s", (unsigned long long)c->vit.image,
                (unsigned long long)c->vit.image,
                (unsigned long long)(s->framework == LLM_FW_HF || s->framework == LLM_FW_PYTORCH
                                         ? c->vit.layers : c->vit.feature_layers),
                (unsigned long long)c->vit.layers, (unsigned long long)c->image_tokens,
                (unsigned long long)s->prompt);
    if (s->attn == ATTN_SDPA || s->attn == ATTN_VLLM)
        fprintf(msg, "  attention: %s, the kernel %s runs on the chip of the run (docs/attention.md)\n",
                op_attn_impl_name(s->attn), s->attn == ATTN_SDPA ? "PyTorch's SDPA" : "vLLM's default backend");
    if (s->tp > 1 && s->sp)
        fprintf(msg, "  tensor- and sequence-parallel over %u ranks (norms on 1/%u of the tokens; "
                     "an all-gather before each attention and MLP, a reduce-scatter after, "
                     "transposed in the backward)\n", s->tp, s->tp);
    else if (s->tp > 1)
        fprintf(msg, "  tensor-parallel over %u ranks (an all-reduce after each attention and "
                     "MLP%s)\n", s->tp, s->phase == LLM_TRAIN ? ", and after the backward of QKV and gate/up" : "");
    if (s->cp > 1)
        fprintf(msg, "  context-parallel over %u ranks: each %llu tokens of a sequence (chunks "
                     "balanced for the causal mask), %s, gradients reduced over the %u data x "
                     "context ranks\n", s->cp, (unsigned long long)(s->prompt / s->cp),
                s->cp_comm == LLM_CP_A2A ? "all-to-alls to a head split for attention (Ulysses)"
                : s->cp_comm == LLM_CP_ALLGATHER ? "K and V all-gathered before attention"
                                                : "K and V passed round a ring of p2p copies while "
                                                  "attention runs (Transformer Engine's p2p)",
                (s->dp > 1 ? s->dp : 1) * s->cp);
    uint64_t U = llm_ubatch_tokens(s, s->cp);
    if (U > 0)
        fprintf(msg, "  the prompt in %llu ubatches of at most %llu tokens, one after another, each "
                     "attending to the cache the ones before wrote%s\n",
                (unsigned long long)((s->prompt + U - 1) / U), (unsigned long long)U,
                s->pp > 1 ? "; they overlap across the stages (llama.cpp's pipeline parallelism)" : "");
    if (s->pp > 1 && s->phase != LLM_TRAIN)
        fprintf(msg, "  layers split over %u devices (%llu or %llu each), run one after another; the "
                     "activations copied p2p at each boundary (llama.cpp -sm layer, ExLlama, accelerate)\n",
                s->pp, (unsigned long long)(c->layers / s->pp),
                (unsigned long long)((c->layers + s->pp - 1) / s->pp));
    else if (s->pp > 1)
        fprintf(msg, "  pipeline-parallel over %u stages, %u micro-batches of %llu (1F1B%s; "
                     "activations and gradients as p2p copies between stages)\n", s->pp,
                s->microbatches ? s->microbatches : (unsigned)s->batch,
                (unsigned long long)(s->batch / (s->microbatches ? s->microbatches : s->batch)),
                s->vpp > 1 ? ", interleaved: each stage holds --vpp model chunks" : "");
    if (s->pp <= 1 && s->microbatches > 1 && s->phase == LLM_TRAIN)
        fprintf(msg, "  gradient accumulation: %u micro-batches of %llu, a forward and a backward "
                     "each in turn, the gradients reduced during the last backward\n",
                s->microbatches, (unsigned long long)(s->batch / s->microbatches));
    if (s->ep > 1 && s->ep == s->tp)
        fprintf(msg, "  expert-parallel over the %u tensor-parallel ranks: each %llu whole experts "
                     "of the %llu on every token (uniform routing assumed), the MLP all-reduce "
                     "summing them\n", s->tp, (unsigned long long)(c->experts / s->ep),
                (unsigned long long)c->experts);
    else if (s->ep > 1)
        fprintf(msg, "  expert-parallel over %u replicas: each its own batch of %llu and %llu of the "
                     "%llu experts%s; tokens to their experts and back by two all-to-alls a layer "
                     "(uniform routing assumed)\n", s->ep, (unsigned long long)s->batch,
                (unsigned long long)(c->experts / s->ep), (unsigned long long)c->experts,
                s->tp > 1 ? ", each split over the TP ranks as the MLP is" : "");
    if (s->ep > 1 && s->expert_load > 1.0)
        fprintf(msg, "  routing skewed: the busiest EP rank gets %.3g times the mean of the token "
                     "copies, and every rank is run as it (an upper bound)\n", s->expert_load);
    if (s->dropout > 0)
        fprintf(msg, "  dropout %g on the attention probabilities and on each block's output "
                     "(a bias-dropout-add kernel before the residual)\n", s->dropout);
    if (s->recompute)
        fprintf(msg, "  full activation recomputation: each layer's forward runs again before "
                     "its backward\n");
    if (s->dp > s->ep && s->zero == 0 && s->ep > 1 && s->ep != s->tp)
        fprintf(msg, "  data-parallel over %u replicas, EP groups of %u consecutive ones (each "
                     "layer's non-expert gradients all-reduced over all %u on stream 1 as its "
                     "backward ends, each expert's over the %u replicas that hold it)\n",
                s->dp, s->ep, s->dp, s->dp / s->ep);
    else if (s->dp > 1 && s->zero == 0)
        fprintf(msg, "  data-parallel over %u replicas (each layer's %sgradients all-reduced on "
                     "stream 1 as its backward ends)\n", s->dp,
                s->ep > 1 && s->ep != s->tp ? "non-expert " : "");
    if (s->dp > 1 && s->zero > 0)
        fprintf(msg, "  data-parallel over %u replicas with ZeRO-%u (gradients reduce-scattered, "
                     "1/%u of the optimizer updated per replica, %s)\n", s->dp, s->zero, s->dp,
                s->zero == 3 ? "each layer's weights all-gathered before its forward and backward"
                            : "the weights all-gathered after the update");
    if (t->nmirrors > 0)
        fprintf(msg, "  %u replica(s) simulated; the other %u devices mirror them (symmetric "
                     "ranks: they run what their twins run, at the same time)\n",
                s->dp_sim ? s->dp_sim : s->dp > 1 ? s->dp : 1, t->nmirrors);
    if (t->ndevices > 1)
        fprintf(msg, "  devices gpu0..gpu%u: run it on a system file with that many devices\n",
                t->ndevices - 1);
}

/* `strata gen KIND:key=value,... -o FILE`: the ops as run --op runs them,
 * written as a trace file. */
static int gen_ops(int argc, char **argv)
{
    const char *outp = NULL;
    const struct cli_opt opts[] = {{"output", 'o', &outp, NULL}, {NULL, 0, NULL, NULL}};
    int first = argc;
    int rc = cli_parse("gen", cli_gen_usage, opts, argc, argv, &first);
    if (rc >= 0)
        return rc;
    unsigned n = (unsigned)(argc - first);
    if (outp == NULL) {
        fprintf(stderr, "strata gen: -o TRACE.json is required\n");
        return 2;
    }
    if (n > OPSPEC_MAX) {
        fprintf(stderr, "strata gen: at most %d ops in one trace, got %u\n", OPSPEC_MAX, n);
        return 2;
    }
    struct opspec in = {"gen", (const char *const *)(argv + first), n, 0, ""};
    struct diag d;
    memset(&d, 0, sizeof d);
    struct trace t;
    if (opspec_load(&in, &t, &d) != 0)
        return cli_fail(&d) + (d.code == DIAG_E_USAGE);  /* 2: not KIND:key=value,... */
    rc = trace_write(&t, outp, &d);
    if (rc != 0)
        diag_print(&d, stderr);
    else    /* with -o -, stdout holds the trace */
        fprintf(cli_is_stdout(outp) ? stderr : stdout, "wrote %s: %u op%s on %u device%s\n", outp,
                t.nops, t.nops == 1 ? "" : "s", t.ndevices, t.ndevices == 1 ? "" : "s");
    trace_free(&t);
    return rc ? 1 : 0;
}

int cli_gen(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        cli_usage(stdout, cli_gen_usage);
        return 0;
    }
    if (argc >= 2 && argv[1][0] != '-' && strcmp(argv[1], "llm") != 0)
        return gen_ops(argc, argv);
    if (argc < 2 || strcmp(argv[1], "llm") != 0) {
        fprintf(stderr, "strata gen: expected 'strata gen llm ...' or 'strata gen "
                        "KIND:key=value,... -o TRACE.json' (see strata gen --help)\n");
        return 2;
    }
    struct gen_args a;
    memset(&a, 0, sizeof a);
    const struct cli_opt opts[] = {
        {"model", 0, &a.model, NULL},     {"phase", 0, &a.phase, NULL},
        {"batch", 0, &a.batch, NULL},     {"prompt", 0, &a.prompt, NULL},
        {"context", 0, &a.context, NULL}, {"dtype", 0, &a.dtype, NULL},
        {"attn", 0, &a.attn, NULL},       {"output", 'o', &a.outp, NULL},
        {"weights", 0, &a.weights, NULL}, {"kv-dtype", 0, &a.kvd, NULL},
        {"framework", 0, &a.fw, NULL},    {"tp", 0, &a.tps, NULL}, {"stack", 0, &a.stack, NULL},
        {"dp", 0, &a.dps, NULL},          {"replicas-simulated", 0, &a.sims, NULL},
        {"recompute", 0, NULL, &a.recompute}, {"sp", 0, NULL, &a.sp},
        {"pp", 0, &a.pps, NULL},          {"microbatches", 0, &a.mbs, NULL},
        {"ep", 0, &a.eps, NULL},          {"zero", 0, &a.zeros, NULL},
        {"dcn", 0, &a.dcns, NULL},        {"page-size", 0, &a.pages, NULL},
        {"vpp", 0, &a.vpps, NULL},        {"expert-load", 0, &a.loads, NULL},
        {"cp", 0, &a.cps, NULL},          {"cp-comm", 0, &a.cpcs, NULL},
        {"dropout", 0, &a.drops, NULL},   {"ubatch", 0, &a.ubs, NULL},
        {"images", 0, &a.imgs, NULL},
        {NULL, 0, NULL, NULL},
    };
    int rc = cli_parse("gen llm", cli_gen_usage, opts, argc - 1, argv + 1, NULL);
    if (rc >= 0)
        return rc;
    char model_path[1600];
    if (cli_find("gen llm", "--model", &a.model, 1, model_path, sizeof model_path) != 0)
        return 1;
    if (a.model == NULL || a.phase == NULL || a.outp == NULL) {
        fprintf(stderr, "strata gen llm: --model, --phase and -o are required\n");
        return 2;
    }
    struct llm_step s = {LLM_DECODE, 1, 1, 0, DT_BF16, ATTN_FLASH, DT_COUNT, WF_NONE, 0, LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    rc = gen_step(&a, &s);
    if (rc != 0)
        return rc;
    struct diag d;
    memset(&d, 0, sizeof d);
    struct llm_config c;
    struct trace t;
    if (llm_config_load(a.model, &c, &d) != 0 || llm_build(&c, &s, &t, &d) != 0) {
        diag_print(&d, stderr);
        return 1;
    }
    rc = trace_write(&t, a.outp, &d);
    if (rc != 0)
        diag_print(&d, stderr);
    else /* with -o -, stdout holds the trace */
        gen_summary(cli_is_stdout(a.outp) ? stderr : stdout, &a, &c, &s, &t);
    trace_free(&t);
    return rc ? 1 : 0;
}
