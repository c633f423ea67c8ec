/* llm_step.h: the step llm_build (llm.h) writes: its phase, sizes, types,
 * framework and parallel layout, the names users give its options, and the
 * checks of which layouts llm_build can write.
 */
#ifndef STRATA_LLM_STEP_H
#define STRATA_LLM_STEP_H

#include <stdint.h>

#include "diag.h"
#include "dtype.h"
#include "llm_config.h"
#include "trace.h"
#include "wfmt.h"

/* TRAIN: one training step of `batch` sequences of `prompt` tokens: the
 * forward over every token (loss on every token), the backward of every op
 * in reverse order, and an AdamW update with fp32 master weights. */
enum llm_phase { LLM_PREFILL, LLM_DECODE, LLM_TRAIN };

/* Which kernels one layer becomes, and which attention it runs unless
 * --attn says.  FUSED: what a compiled stack launches (gpt-fast under
 * torch.compile, vLLM), 10 kernels per layer, attention `flash`.
 * LLAMA_CPP: one kernel per ggml graph node (separate q/k/v projections,
 * norm and weight multiply, RoPE on q and k, cache copies, SiLU and
 * multiply, residual adds), 22 per layer plus attention (`flash`).
 * PYTORCH and VLLM: FUSED's kernels, with the attention those frameworks
 * pick on the chip of the run: `sdpa` (torch.compile'd PyTorch, as
 * gpt-fast) and `vllm` (docs/attention.md). */
enum llm_framework {
    LLM_FW_FUSED = 0, LLM_FW_LLAMA_CPP = 1, LLM_FW_PYTORCH = 2, LLM_FW_VLLM = 3,
    LLM_FW_HF = 4   /* Hugging Face transformers' eager LlamaForCausalLM: a kernel per
                     * torch op (fp32 RMSNorm in 8, rotate-half RoPE in 5 a tensor,
                     * separate q/k/v and gate/up projections) */
};
/* A framework whose step is one device's graph (llama.cpp's, Hugging
 * Face's eager model): no TP, DP, EP, CP or training; its name in messages. */
static inline int llm_fw_one_device(enum llm_framework f)
{
    return f == LLM_FW_LLAMA_CPP || f == LLM_FW_HF;
}
static inline const char *llm_fw_graph_name(enum llm_framework f)
{
    return f == LLM_FW_HF ? "Hugging Face's eager model" : "llama.cpp's graph";
}

struct llm_step {
    enum llm_phase phase;
    uint64_t batch;                 /* sequences */
    uint64_t prompt;                /* prefill: new tokens per sequence */
    uint64_t context;               /* tokens already in the KV cache */
    enum dtype dtype;               /* activations (and weights unless quantised) */
    enum attn_impl attn;
    enum dtype kv_dtype;            /* KV cache */
    enum wfmt weights;              /* quantised weight format of the linear layers (WF_NONE: dtype) */
    int q4_k_m;                     /* llama.cpp's Q4_K_M mix instead of one format */
    enum llm_framework framework;   /* kernel structure (default FUSED) */
    uint32_t tp;                    /* tensor-parallel ranks (0 or 1: one device) */
    uint32_t dp;                    /* data-parallel replicas (0 or 1: none); train only */
    uint32_t dp_sim;                /* replicas given ops (0 = all); the others' devices are
                                     * mirrors (trace.h): symmetric ranks simulated once */
    uint32_t zero;                  /* ZeRO stage (0-3), train with dp > 1: 1 and 2 reduce-scatter
                                     * the gradients, update 1/dp and all-gather the weights; 3
                                     * also all-gathers each layer's weights before its forward
                                     * and its backward (stream 1, prefetched) */
    uint32_t pp;                    /* pipeline stages (0 or 1: none): train, the 1F1B
                                     * schedule; prefill and decode, the layers split over pp
                                     * devices in sequence (llama.cpp -sm layer, ExLlama,
                                     * accelerate's device map), activations copied p2p */
    uint32_t microbatches;          /* with pp: micro-batches the batch is split into (0: batch) */
    int recompute;                  /* train: full activation recomputation (Megatron's
                                     * --recompute-granularity full): each layer's forward runs
                                     * again just before its backward, and only the layers'
                                     * inputs stay stored */
    uint32_t ep;                    /* expert-parallel ranks (0 or 1: none); MoE:
                                     * each rank its own batch, attention replicated (data
                                     * parallel), experts / ep whole experts per rank, tokens
                                     * to their experts and back by two all-to-alls a layer */
    uint32_t dcn;                   /* train: data-parallel copies of the whole tp x dp group
                                     * across a slower network (0 or 1: none), as MaxText's
                                     * dcn_data_parallelism runs TPU slices: each layer's
                                     * gradients, once reduced (ZeRO: reduce-scattered) in the
                                     * group, are all-reduced over the copies; later copies are
                                     * mirrors (trace.h) */
    uint32_t page_size;             /* decode/prefill: tokens per page of a paged KV cache
                                     * (vLLM's block size); 0 = contiguous */
    uint32_t vpp;                   /* with pp: model chunks per stage (0 or 1: one), Megatron's
                                     * interleaved 1F1B (virtual pipeline stages) */
    int sp;                         /* train with tp > 1: sequence parallelism (Megatron's
                                     * --sequence-parallel): norms on 1/tp of the tokens, each
                                     * TP all-reduce an all-gather before the block and a
                                     * reduce-scatter after it */
    double expert_load;             /* with EP: the busiest EP rank's token copies over the
                                     * mean (0 or 1: uniform routing); every rank is run as
                                     * that one, which paces the all-to-alls */
    uint32_t cp;                    /* train: context-parallel ranks (0 or 1: none), Megatron's
                                     * --context-parallel-size with its p2p ring: each rank
                                     * holds 1/cp of every sequence (2 cp chunks, balanced for
                                     * the causal mask) and passes K and V round the ring while
                                     * it computes attention on the block it has */
    uint32_t cp_comm;               /* with cp > 1, how attention sees the other ranks' tokens
                                     * (Megatron's --cp-comm-type): LLM_CP_P2P the ring above,
                                     * LLM_CP_A2A all-to-alls that swap the sequence split for a
                                     * head split (DeepSpeed-Ulysses), LLM_CP_ALLGATHER an
                                     * all-gather of K and V (Llama 3's) */
    double dropout;                 /* train: dropout probability (Megatron's --attention-dropout
                                     * and --hidden-dropout, one value; 0 = none): on the
                                     * attention probabilities (a kernel of its own where they
                                     * are in memory, inside a fused kernel otherwise) and on
                                     * each block's output before the residual add (a fused
                                     * bias-dropout-add kernel, as Megatron runs it) */
    uint32_t ubatch;                /* prefill: the prompt is run in pieces of at most this
                                     * many tokens a sequence, one after another, each
                                     * attending to the cache the pieces before it wrote
                                     * (llama.cpp's n_ubatch); with a layer split (pp) the
                                     * pieces flow through the stages as a pipeline.  0: the
                                     * whole prompt at once */
    uint32_t images;                /* prefill of a vision-language model (llava): images a
                                     * sequence carries, each through the image tower and the
                                     * projector into image_tokens of the prompt, in front of
                                     * its prompt tokens (0: text only) */
};

enum { LLM_CP_P2P = 0, LLM_CP_A2A = 1, LLM_CP_ALLGATHER = 2 };

/* The tokens a sequence of each of a prefill's pieces (llm_step.ubatch)
 * when the prompt is run in more than one, else 0 (cp: context-parallel
 * ranks, which take the prompt whole). */
static inline uint64_t llm_ubatch_tokens(const struct llm_step *s, uint32_t cp)
{
    return s->phase == LLM_PREFILL && cp <= 1 && s->ubatch > 0 && s->prompt > s->ubatch ? s->ubatch : 0;
}
/* "fused", "llama.cpp", "pytorch", "vllm" or "hf".  0, or -1 if unknown. */
int llm_framework_from_name(const char *name, enum llm_framework *out);
/* The attention a framework runs when --attn does not say (resolved per
 * chip at run time for pytorch and vllm). */
enum attn_impl llm_framework_attn(enum llm_framework f);
/* --cp-comm names: "p2p", "a2a", "allgather" (LLM_CP_*).  0, or -1 if unknown. */
int llm_cp_comm_from_name(const char *name, uint32_t *out);
/* The format of q4_k_m's tensors that take more bits (q6_k; coded, when
 * the mix is entropy-coded: q4_k_m+huffman). */
static inline enum wfmt llm_w_more(const struct llm_step *s)
{
    return wfmt_decoded(s->weights) != WF_NONE ? WF_Q6_K_H : WF_Q6_K;
}
/* Why name is not a --weights name, in words (into why[n]). */
void llm_weights_why(const char *name, char *why, size_t n);
/* --weights names: a wfmt.h format, "q4_k_m" or "q4_k_m+huffman".  0, or
 * -1 if unknown. */
int llm_weights_from_name(const char *name, struct llm_step *s);
/* -1 (reason in d) if s asks for an expert-parallel layout llm_build cannot
 * write; 0 otherwise (fit checks the same). */
int llm_check_ep(const struct llm_config *c, const struct llm_step *s, struct diag *d);
int llm_check_tp(const struct llm_config *c, const struct llm_step *s, struct diag *d);
/* A Mamba-2 hybrid's step (llm_hybrid(c)): what it may run (decode or
 * prefill, one device, --pp or a --tp that divides the mixers' heads and
 * groups; vLLM's kernels); 0, or -1 with *d. */
int llm_check_hybrid(const struct llm_config *c, const struct llm_step *s, struct diag *d);
int llm_check_pp(const struct llm_config *c, const struct llm_step *s, struct diag *d);
int llm_check_cp(const struct llm_config *c, const struct llm_step *s, struct diag *d);
/* Every check llm_build makes of c and s before it builds (the layouts
 * above among them): 0, or -1 with the first failure in d. */
int llm_check_step(const struct llm_config *c, const struct llm_step *s, struct diag *d);

#endif
