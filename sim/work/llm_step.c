/* llm_step.c: the step's options (see llm_step.h): the names users give
 * them, and the checks of what llm_build can write, each with the reason
 * in the diagnostic (fit asks the same). */
#include "llm_step.h"

#include <stdio.h>
#include <string.h>

/* The expert-parallel layouts llm_build can write: EP over the TP group
 * (--ep = --tp, E/T whole experts a rank), or EP inside data parallelism
 * (Megatron's and DeepSpeed-MoE's layout): the EP groups are blocks of E
 * consecutive replicas, at the same TP rank and pipeline stage, each
 * expert split over the TP ranks as the dense MLP is, with ZeRO 0-3;
 * --ep E without --dp is --dp E --ep E.  -1 with the reason in d for any
 * other. */
int llm_check_ep(const struct llm_config *c, const struct llm_step *s, struct diag *d)
{
    uint32_t tp = s->tp > 1 ? s->tp : 1, dp = s->dp > 1 ? s->dp : 1;
    uint32_t ep = s->ep > 1 ? s->ep : 1;
    if (s->expert_load != 0 && (ep < 2 || !(s->expert_load >= 1.0 && s->expert_load <= 64.0)))
        return diag_set(d, DIAG_E_RANGE, "", 0, "--expert-load",
                        "the busiest EP rank's load over the mean, 1 (uniform) to 64, with --ep: "
                        "got %g%s", s->expert_load, ep < 2 ? " without --ep" : "");
    if (ep > 1 && ep != tp && dp == 1)
        dp = ep;    /* --ep E alone is --dp E --ep E */
    if (ep > 1) {
        if (c->experts == 0)
            return diag_set(d, DIAG_E_RANGE, c->path, 0, "num_local_experts",
                            "--ep %u: the model has no experts (a dense model)", ep);
        const char *ek = c->experts_key[0] ? c->experts_key : "num_local_experts";
        if (ep > 65536 || c->experts % ep != 0)
            return diag_set(d, DIAG_E_RANGE, c->path, 0, ek,
                            "--ep %u does not divide the %llu experts", ep, (unsigned long long)c->experts);
        if (llm_fw_one_device(s->framework))
            return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--ep", "%s is built for one device",
                            llm_fw_graph_name(s->framework));
        /* a token's k copies go to k distinct experts, at most E/ep of
         * them on one rank: the busiest rank holds at most min(k, E/ep) of
         * a token's k copies, against k/ep on average */
        double k = (double)c->experts_per_tok, per = (double)(c->experts / ep);
        double fmax = (double)ep * (k < per ? k : per) / k;
        if (s->expert_load > fmax * (1.0 + 1e-9))
            return diag_set(d, DIAG_E_RANGE, "", 0, "--expert-load",
                            "%g: with top-%llu of %llu experts over %u EP ranks the busiest rank gets "
                            "at most %g times the mean (every token's copies on its experts)",
                            s->expert_load, (unsigned long long)c->experts_per_tok,
                            (unsigned long long)c->experts, ep, fmax);
        if (ep == tp)
            return 0;   /* EP over the TP group */
        if (dp > 1 && (dp % ep != 0 || (s->dp_sim > 0 && s->dp_sim < dp && s->dp_sim % ep != 0)))
            return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--ep",
                            "with --dp, --ep %u must divide the %u replicas (each EP group a block "
                            "of them), and --replicas-simulated must be whole EP groups", ep, dp);
    }
    return 0;
}

/* The context-parallel layouts llm_build can write (--cp): training,
 * sequences cut into 2 cp chunks, not with EP; -1 with the reason in d
 * for any other (fit asks the same). */
int llm_check_cp(const struct llm_config *c, const struct llm_step *s, struct diag *d)
{
    uint32_t cp = s->cp > 1 ? s->cp : 1, tp = s->tp > 1 ? s->tp : 1;
    if (s->cp_comm > LLM_CP_ALLGATHER)
        return diag_set(d, DIAG_E_RANGE, "", 0, "--cp-comm", "p2p, a2a or allgather");
    if (cp == 1)
        return s->cp_comm != LLM_CP_P2P ? diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--cp-comm",
                                                   "needs --cp 2 or more") : 0;
    if (s->phase != LLM_TRAIN || llm_fw_one_device(s->framework))
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--cp",
                        "context parallelism splits a training step's sequences (--phase train)");
    if (cp > 4096)
        return diag_set(d, DIAG_E_RANGE, "", 0, "--cp", "at most 4096 context-parallel ranks, got %u", cp);
    if (s->prompt % (2 * (uint64_t)cp) != 0)
        return diag_set(d, DIAG_E_RANGE, "", 0, "--prompt",
                        "with --cp %u the sequence is cut into %llu chunks: --prompt %llu must be "
                        "a multiple of that", cp, 2 * (unsigned long long)cp, (unsigned long long)s->prompt);
    if (s->ep > 1)
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--cp",
                        "context parallelism with expert parallelism is not modelled yet");
    uint64_t kvh = llm_rank_kv_heads(c, tp);
    if (s->cp_comm == LLM_CP_A2A && (c->heads / tp) % cp != 0)
        return diag_set(d, DIAG_E_RANGE, c->path, 0, "num_attention_heads",
                        "--cp-comm a2a splits each TP rank's %llu heads over the %u CP ranks: they "
                        "must divide", (unsigned long long)(c->heads / tp), cp);
    if (s->cp_comm == LLM_CP_A2A && kvh > cp && kvh % cp != 0)
        return diag_set(d, DIAG_E_RANGE, c->path, 0, "num_key_value_heads",
                        "--cp-comm a2a splits each TP rank's %llu K/V heads over the %u CP ranks "
                        "(or repeats them when fewer): they must divide", (unsigned long long)kvh, cp);
    if (s->sp && (s->prompt / cp) % tp != 0)
        return diag_set(d, DIAG_E_RANGE, "", 0, "--sp",
                        "a rank's %llu tokens a sequence (--prompt / --cp) must split over the "
                        "%u TP ranks", (unsigned long long)(s->prompt / cp), tp);
    return 0;
}

/* The pipeline layouts llm_build can write (--pp, --microbatches, --vpp):
 * -1 with the reason in d for any other; fit asks the same. */
int llm_check_pp(const struct llm_config *c, const struct llm_step *s, struct diag *d)
{
    int train = s->phase == LLM_TRAIN;
    uint32_t pp = s->pp > 1 ? s->pp : 1;
    uint64_t mb = s->microbatches ? s->microbatches : s->batch;
    uint32_t vpp = s->vpp > 1 ? s->vpp : 1;
    if (vpp > 1 && pp == 1)
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--vpp", "model chunks per stage need --pp");
    /* a pipeline, or gradient accumulation (the pipeline's schedule with
     * one stage): training, not llama.cpp's graph, micro-batches that
     * split the batch */
    int ga = pp == 1 && s->microbatches > 1;
    if (pp > 1 && !train) {     /* inference: the layers split over pp devices, one after another */
        if (pp > c->layers)
            return diag_set(d, DIAG_E_RANGE, "", 0, "--pp", "%u stages for %llu layers", pp,
                            (unsigned long long)c->layers);
        if (s->microbatches > 1 || vpp > 1)
            return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, s->microbatches > 1 ? "--microbatches" : "--vpp",
                            "an inference layer split runs its stages one after another (no "
                            "micro-batches or chunks)");
        if (s->tp > 1 || s->dp > 1 || s->cp > 1 || s->ep > 1 || s->dcn > 1)
            return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--pp", "an inference layer split with "
                            "--tp, --dp, --cp, --ep or --dcn is not built; split the layers alone");
        return 0;
    }
    if (pp > 1 || ga) {
        const char *flag = ga ? "--microbatches" : "--pp";
        if (!train)
            return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, flag, "%s", "micro-batches (gradient "
                            "accumulation) are for --phase train");
        if (llm_fw_one_device(s->framework))
            return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, flag, "%s does not combine with "
                            "%s", flag, llm_fw_graph_name(s->framework));
        if (pp > c->layers)
            return diag_set(d, DIAG_E_RANGE, "", 0, "--pp", "%u stages for %llu layers", pp,
                            (unsigned long long)c->layers);
        if (mb == 0 || s->batch % mb != 0 || mb > 4096)
            return diag_set(d, DIAG_E_RANGE, "", 0, "--microbatches", "%u micro-batches do not "
                            "split a batch of %llu (1 to 4096, dividing it)", (unsigned)mb,
                            (unsigned long long)s->batch);
    }
    if (vpp > 1 && ((uint64_t)pp * vpp > c->layers || mb % pp != 0))
        return diag_set(d, DIAG_E_RANGE, "", 0, "--vpp", "%u chunks on each of %u stages: "
                        "needs at least %llu layers (the model has %llu) and micro-batches a "
                        "multiple of the stages (%u), as Megatron's interleaved schedule does",
                        vpp, pp, (unsigned long long)pp * vpp, (unsigned long long)c->layers, (unsigned)mb);
    if (vpp > 64)
        return diag_set(d, DIAG_E_RANGE, "", 0, "--vpp", "at most 64 chunks a stage, got %u", vpp);
    return 0;
}

/* The tensor-parallel layouts llm_build can write: --tp divides the
 * attention heads, the MLP and (training) the vocabulary, and one of it and
 * the K/V heads divides the other; data parallelism only for training.
 * -1 with the reason in d for any other (fit asks the same). */
int llm_check_tp(const struct llm_config *c, const struct llm_step *s, struct diag *d)
{
    uint32_t tp = s->tp > 1 ? s->tp : 1;
    if (tp > 1) {
        if (tp > 65536 || c->heads % tp != 0)
            return diag_set(d, DIAG_E_RANGE, c->path, 0, "num_attention_heads",
                            "--tp %u does not divide the %llu attention heads", tp,
                            (unsigned long long)c->heads);
        if (c->kv_heads >= tp ? c->kv_heads % tp != 0 : tp % c->kv_heads != 0)
            return diag_set(d, DIAG_E_RANGE, c->path, 0, "num_key_value_heads",
                            "--tp %u and the %llu key/value heads: one must divide the other "
                            "(fewer K/V heads than ranks are replicated)", tp,
                            (unsigned long long)c->kv_heads);
        if (s->phase == LLM_TRAIN && c->vocab % tp != 0)
            return diag_set(d, DIAG_E_RANGE, c->path, 0, "vocab_size",
                            "--tp %u does not divide vocab_size %llu (training shards the "
                            "vocabulary over the TP ranks)", tp, (unsigned long long)c->vocab);
        if (c->intermediate % tp != 0)
            return diag_set(d, DIAG_E_RANGE, c->path, 0, "intermediate_size",
                            "--tp %u does not divide intermediate_size %llu", tp,
                            (unsigned long long)c->intermediate);
        if (llm_fw_one_device(s->framework))
            return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--tp", "%s is built for one device",
                            llm_fw_graph_name(s->framework));
    }
    if (s->dp > 1 && s->phase != LLM_TRAIN)
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--dp",
                        "data parallelism is for training (--phase train): replicas of a decode "
                        "or prefill step do not interact");
    return 0;
}

/* The parts of the model llm_build writes for inference only: latent
 * attention, experts of their own width, shared experts and dense layers
 * among the MoE ones (their backward, gradients and training memory are
 * not modelled yet), and their TP splits. */
static int check_family(const struct llm_config *c, const struct llm_step *s, struct diag *d)
{
    uint32_t tp = s->tp > 1 ? s->tp : 1;
    int dense_layers = 0;
    for (uint64_t l = 0; c->experts && l < c->layers; l++)
        dense_layers |= !llm_layer_moe(c, l);
    int newer = c->kv_lora || (c->experts && (c->moe_inter != c->intermediate || c->shared_experts ||
                                              dense_layers));
    if (s->framework == LLM_FW_HF && (c->experts || c->kv_lora))
        return diag_set(d, DIAG_E_UNSUPPORTED, c->path, 0, "--framework",
                        "hf builds Hugging Face's eager dense decoder (Llama, Mistral, Qwen); its %s "
                        "is not modelled", c->kv_lora ? "latent attention" : "Python loop over experts");
    if (!newer)
        return 0;
    const char *what = c->kv_lora ? "latent attention (kv_lora_rank)"
                                  : c->shared_experts ? "shared experts (n_shared_experts)"
                                  : dense_layers ? "dense layers among the MoE ones"
                                                 : "experts of their own width (moe_intermediate_size)";
    if (s->phase == LLM_TRAIN)
        return diag_set(d, DIAG_E_UNSUPPORTED, c->path, 0, "--phase",
                        "training a model with %s is not modelled yet: decode and prefill are", what);
    if (llm_fw_one_device(s->framework))
        return diag_set(d, DIAG_E_UNSUPPORTED, c->path, 0, "--framework",
                        "%s for a model with %s is not modelled", llm_fw_graph_name(s->framework), what);
    int ep_tp = s->ep > 1 && s->ep == tp;  /* EP over the TP group: whole experts */
    if (c->experts && !ep_tp && c->moe_inter % tp != 0)
        return diag_set(d, DIAG_E_RANGE, c->path, 0, "moe_intermediate_size",
                        "--tp %u does not divide moe_intermediate_size %llu", tp,
                        (unsigned long long)c->moe_inter);
    return 0;
}

/* The step's size against the model's: tokens, positions, window. */
static int check_shape(const struct llm_config *c, const struct llm_step *s, struct diag *d)
{
    uint64_t T = s->phase == LLM_DECODE ? 1 : s->prompt;
    uint64_t kv_len = s->context + T;
    if (s->batch == 0 || T == 0)
        return diag_set(d, DIAG_E_RANGE, "", 0, "--batch/--prompt", "must be at least 1");
    if (kv_len > c->max_pos)
        return diag_set(d, DIAG_E_RANGE, c->path, 0, "max_position_embeddings",
                        "context %llu + new tokens %llu = %llu exceeds the model's %llu",
                        (unsigned long long)s->context, (unsigned long long)T,
                        (unsigned long long)kv_len, (unsigned long long)c->max_pos);
    if (c->sliding_window > 0 && kv_len > c->sliding_window)
        return diag_set(d, DIAG_E_UNSUPPORTED, c->path, 0, "sliding_window",
                        "the step attends over %llu keys, more than the model's sliding window "
                        "of %llu: windowed attention is not modelled yet",
                        (unsigned long long)kv_len, (unsigned long long)c->sliding_window);
    if (s->phase == LLM_TRAIN && s->context != 0)
        return diag_set(d, DIAG_E_RANGE, "", 0, "--context", "a training step has no KV cache");
    return 0;
}

/* ZeRO, dropout, a paged cache and slices: each for the phase it is for. */
static int check_options(const struct llm_step *s, struct diag *d)
{
    uint32_t tp = s->tp > 1 ? s->tp : 1, dp = s->dp > 1 ? s->dp : 1;
    uint32_t cp = s->cp > 1 ? s->cp : 1;
    if (s->zero > 3)
        return diag_set(d, DIAG_E_RANGE, "", 0, "--zero", "ZeRO stages are 0 to 3, got %u", s->zero);
    uint32_t dp_eff = dp > 1 ? dp : s->ep > 1 && s->ep != tp ? s->ep : 1;   /* --ep E alone: --dp E */
    if (s->zero > 0 && ((uint64_t)dp_eff * cp < 2 || s->phase != LLM_TRAIN))
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--zero",
                        "ZeRO shards training state over data-parallel replicas: it needs --phase "
                        "train and --dp (or --cp) 2 or more");
    if (s->zero > 2 && (s->pp > 1 || s->microbatches > 1))
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--zero",
                        "ZeRO-3 does not combine with --pp or --microbatches (DeepSpeed refuses "
                        "it with --pp: each micro-batch would gather the weights again); use "
                        "--zero 1 or 2, Megatron's distributed optimizer");
    if (!(s->dropout >= 0.0 && s->dropout < 1.0))
        return diag_set(d, DIAG_E_RANGE, "", 0, "--dropout", "a probability from 0 to below 1, got %g",
                        s->dropout);
    if (s->dropout > 0 && s->phase != LLM_TRAIN)
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--dropout",
                        "dropout is off at inference: it is for --phase train");
    if (s->dropout > 0 && s->framework == LLM_FW_LLAMA_CPP)
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--dropout", "llama.cpp does not train");
    if (s->framework == LLM_FW_HF && s->phase == LLM_TRAIN)
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--framework",
                        "hf is Hugging Face's eager inference (decode, prefill); a training step "
                        "is built with fused or pytorch");
    if (s->page_size > 0 && s->phase == LLM_TRAIN)
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--page-size",
                        "a paged KV cache is for decode and prefill, not training");
    if (s->page_size > 65535)
        return diag_set(d, DIAG_E_RANGE, "", 0, "--page-size", "at most 65535 tokens a page, got %u",
                        s->page_size);
    if (s->dcn > 1 && s->phase != LLM_TRAIN)
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--dcn",
                        "data parallelism across slices is for --phase train");
    return 0;
}

/* The devices the layout takes, at most 65536. */
static int check_devices(const struct llm_step *s, struct diag *d)
{
    uint32_t tp = s->tp > 1 ? s->tp : 1, dp = s->dp > 1 ? s->dp : 1;
    uint32_t ep = s->ep > 1 ? s->ep : 1, cp = s->cp > 1 ? s->cp : 1;
    uint32_t dcn = s->dcn > 1 ? s->dcn : 1;
    uint64_t ndev64 = (uint64_t)tp * (dp > 1 ? dp : ep > 1 && ep != tp ? ep : 1) *
                      (s->pp > 1 ? s->pp : 1) * dcn * cp;
    if (ndev64 > 65536)
        return diag_set(d, DIAG_E_RANGE, "", 0, "devices",
                        "--tp x --cp x --dp (or --ep) x --pp x --dcn = %llu devices, more than 65536",
                        (unsigned long long)ndev64);
    if (dp > 1 && llm_fw_one_device(s->framework))
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--dp", "%s is built for one device",
                        llm_fw_graph_name(s->framework));
    if ((uint64_t)tp * dp > 65536)
        return diag_set(d, DIAG_E_RANGE, "", 0, "--dp", "--tp x --dp = %llu devices, more than 65536",
                        (unsigned long long)tp * dp);
    return 0;
}

/* A vision encoder (llm_config.encoder): one forward over a batch of images
 * on one device, as timm's and Hugging Face's inference run it. */
static int check_vision(const struct llm_config *c, const struct llm_step *s, struct diag *d)
{
    if (s->phase != LLM_PREFILL)
        return diag_set(d, DIAG_E_UNSUPPORTED, c->path, 0, "--phase",
                        "'%s' is a vision encoder: one forward over a batch of images is --phase "
                        "prefill (its backward is not modelled yet, and it has nothing to decode)", c->name);
    if (s->context != 0)
        return diag_set(d, DIAG_E_RANGE, "", 0, "--context", "a vision encoder has no KV cache");
    const char *opt = s->tp > 1 ? "--tp" : s->pp > 1 ? "--pp" : s->cp > 1 ? "--cp" : s->ep > 1 ? "--ep"
                    : s->dp > 1 ? "--dp" : s->dcn > 1 ? "--dcn" : s->ubatch > 0 ? "--ubatch"
                    : s->page_size > 0 ? "--page-size" : s->microbatches > 1 ? "--microbatches"
                    : s->vpp > 1 ? "--vpp" : s->images > 0 ? "--images" : s->q4_k_m ? "--weights" : NULL;
    if (opt != NULL)
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, opt,
                        "a vision encoder is built whole on one device from its images: --tp, --pp, --cp, "
                        "--ep, --dp, --dcn, --ubatch, --page-size, --images and llama.cpp's q4_k_m mix are "
                        "for decoder LLMs");
    /* the images' pixels a step: batch x channels x image^2 */
    double px = (double)s->batch * (double)c->vit.channels * (double)c->vit.image * (double)c->vit.image;
    if (!(px <= 1e15))
        return diag_set(d, DIAG_E_RANGE, "", 0, "--batch", "%llu images of %llux%llu are %.3g pixels, more "
                        "than a step strata builds (1e15)", (unsigned long long)s->batch,
                        (unsigned long long)c->vit.image, (unsigned long long)c->vit.image, px);
    if (s->framework == LLM_FW_LLAMA_CPP || s->framework == LLM_FW_VLLM)
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--framework",
                        "a vision encoder is built as fused kernels, or as eager PyTorch under autocast "
                        "(pytorch, hf: timm's and Hugging Face's inference), not as %s",
                        s->framework == LLM_FW_VLLM ? "vllm" : "llama.cpp");
    return 0;
}

/* Images in a prompt: a VLM's prefill, on one device or split by layer
 * (the tower and projector on the first), whole (no ubatches). */
static int check_images(const struct llm_config *c, const struct llm_step *s, struct diag *d)
{
    if (c->image_tokens == 0)
        return diag_set(d, DIAG_E_UNSUPPORTED, c->path, 0, "--images",
                        "'%s' has no image tower: --images is for a vision-language model "
                        "(model_type llava)", c->name);
    if (s->phase != LLM_PREFILL)
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--images",
                        "images enter with the prompt: --phase prefill (a decode step's cache holds "
                        "their tokens: count them in --context)");
    if (s->images > 1024)
        return diag_set(d, DIAG_E_RANGE, "", 0, "--images", "at most 1024 a sequence, got %u", s->images);
    if (s->tp > 1 || s->cp > 1 || s->ep > 1 || s->dp > 1 || s->ubatch > 0)
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--images",
                        "a VLM's images with --tp, --cp, --ep, --dp or --ubatch: not modelled yet (one "
                        "device, or --pp)");
    double px = (double)s->batch * s->images * (double)c->vit.channels * (double)c->vit.image * (double)c->vit.image;
    if (!(px <= 1e15))
        return diag_set(d, DIAG_E_RANGE, "", 0, "--images", "%.3g pixels a step, more than strata builds (1e15)",
                        px);
    return 0;
}

/* A Mamba-2 hybrid: inference on one device (or split by layer), its
 * blocks as vLLM runs them. */
int llm_check_hybrid(const struct llm_config *c, const struct llm_step *s, struct diag *d)
{
    if (s->phase == LLM_TRAIN)
        return diag_set(d, DIAG_E_UNSUPPORTED, c->path, 0, "--phase",
                        "training a Mamba-2 hybrid is not modelled yet: decode and prefill are");
    const char *opt = s->cp > 1 ? "--cp" : s->ep > 1 ? "--ep" : s->dp > 1 ? "--dp"
                    : s->q4_k_m ? "--weights" : NULL;
    if (opt != NULL)
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, opt,
                        "a Mamba-2 hybrid on one device, split by layer (--pp) or by tensor (--tp): its "
                        "expert and context layouts and llama.cpp's q4_k_m mix are not modelled yet");
    /* vLLM's MambaMixer2 splits the heads and the groups over the ranks */
    uint32_t tp = s->tp > 1 ? s->tp : 1;
    if (tp > 1 && (c->ssm_heads % tp != 0 || c->ssm_groups % tp != 0))
        return diag_set(d, DIAG_E_RANGE, c->path, 0, c->ssm_heads % tp != 0 ? "mamba_num_heads" : "n_groups",
                        "--tp %u must divide the Mamba-2 mixers' %llu heads and %llu groups (vLLM splits "
                        "both over the ranks)", tp, (unsigned long long)c->ssm_heads,
                        (unsigned long long)c->ssm_groups);
    if (s->framework != LLM_FW_FUSED && s->framework != LLM_FW_VLLM)
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--framework",
                        "a Mamba-2 hybrid is built as vLLM runs it (fused or vllm): eager PyTorch's and "
                        "the one-device frameworks' kernels for it are not modelled");
    return 0;
}

int llm_check_step(const struct llm_config *c, const struct llm_step *s, struct diag *d)
{
    uint32_t tp = s->tp > 1 ? s->tp : 1;
    if (llm_hybrid(c) && llm_check_hybrid(c, s, d) != 0)
        return -1;
    if (c->encoder && check_vision(c, s, d) != 0)
        return -1;
    if (s->images > 0 && check_images(c, s, d) != 0)
        return -1;
    if (check_shape(c, s, d) != 0 || llm_check_tp(c, s, d) != 0 || check_family(c, s, d) != 0)
        return -1;
    if (s->sp && (s->phase != LLM_TRAIN || tp < 2 || s->prompt % tp != 0))
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--sp",
                        "sequence parallelism splits a training step's tokens over the TP ranks: "
                        "it needs --phase train, --tp 2 or more and --prompt a multiple of --tp");
    if (llm_check_ep(c, s, d) != 0 || llm_check_cp(c, s, d) != 0 || check_options(s, d) != 0 ||
        check_devices(s, d) != 0 || llm_check_pp(c, s, d) != 0)
        return -1;
    return 0;
}

int llm_framework_from_name(const char *name, enum llm_framework *out)
{
    if (ascii_ieq(name, "fused"))
        *out = LLM_FW_FUSED;
    else if (ascii_ieq(name, "llama.cpp"))
        *out = LLM_FW_LLAMA_CPP;
    else if (ascii_ieq(name, "pytorch") || ascii_ieq(name, "torch"))
        *out = LLM_FW_PYTORCH;
    else if (ascii_ieq(name, "vllm"))
        *out = LLM_FW_VLLM;
    else if (ascii_ieq(name, "hf") || ascii_ieq(name, "transformers"))
        *out = LLM_FW_HF;
    else
        return -1;
    return 0;
}

enum attn_impl llm_framework_attn(enum llm_framework f)
{
    return f == LLM_FW_PYTORCH || f == LLM_FW_HF ? ATTN_SDPA : f == LLM_FW_VLLM ? ATTN_VLLM : ATTN_FLASH;
}

int llm_cp_comm_from_name(const char *name, uint32_t *out)
{
    static const char *const names[] = {"p2p", "a2a", "allgather"};
    for (uint32_t i = 0; i < 3; i++)
        if (ascii_ieq(name, names[i])) {
            *out = i;
            return 0;
        }
    return -1;
}

int llm_weights_from_name(const char *name, struct llm_step *s)
{
    if (ascii_ieq(name, "q4_k_m") || ascii_ieq(name, "q4_k_m+huffman")) {
        s->q4_k_m = 1;
        s->weights = name[6] != '\0' ? WF_Q4_K_H : WF_Q4_K;
        return 0;
    }
    s->q4_k_m = 0;
    return wfmt_from_name(name, &s->weights);
}

void llm_weights_why(const char *name, char *why, size_t n)
{
    static const char coded[] = "entropy-coded formats: q4_0+huffman, q4_k+huffman, q4_k_m+huffman, "
                                "q6_k+huffman";
    const char *plus = strchr(name, '+');
    if (plus == NULL) {
        /* wfmt.h's formats less the coded ones, and llama.cpp's mix after q4_k */
        char list[320] = "";
        size_t at = 0;
        for (unsigned f = 1; f < WFMT_COUNT && at < sizeof list; f++)
            if (wfmt_decoded((enum wfmt)f) == WF_NONE)
                at += (size_t)snprintf(list + at, sizeof list - at, "%s%s%s", at ? ", " : "",
                                       wfmt_name((enum wfmt)f), f == WF_Q4_K ? ", q4_k_m" : "");
        snprintf(why, n, "unknown weight format (%s; %s)", list, coded);
        return;
    }
    /* an entropy stage codes a format's integer codes */
    char base[32];
    int len = (int)(plus - name);
    snprintf(base, sizeof base, "%.*s", len < 31 ? len : 31, name);
    enum wfmt b;
    enum dtype dt;
    if (wfmt_from_name(base, &b) == 0 && b != WF_NONE && b != WF_FP8 && b != WF_NF4 &&
        wfmt_matrix_type(b) == DT_COUNT)
        snprintf(why, n, "no public measurement of %s's codes to size it by (wfmt.h); %s", base, coded);
    else if (wfmt_from_name(base, &b) == 0 || dtype_from_name(base, &dt) == 0)
        snprintf(why, n, "%s has no integer codes to entropy-code; %s", base, coded);
    else
        snprintf(why, n, "unknown weight format '%s'; %s", base, coded);
}
