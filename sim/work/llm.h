/* llm.h: operator traces for dense decoder-only transformers (Llama,
 * Mistral, Phi-3, SmolLM families) built from a Hugging Face config.json.
 *
 * llm_config_load() reads the fields strata needs and checks them
 * (positive sizes, hidden size divisible by heads, kv heads dividing heads);
 * llm_build() lowers one prefill or decode step into a struct trace that
 * trace_write() can save.  The layer structure follows gpt-fast/HF:
 * RMSNorm, fused QKV projection, RoPE, KV-cache write, attention, output
 * projection, residual add, RMSNorm, gate and up projections, SiLU*mul,
 * down projection, residual add; then the final norm, the LM head (last
 * token of each sequence) and sampling.
 *
 * Tensor parallelism (llm_step.tp = N > 1), as gpt-fast shards a model:
 * every rank (devices gpu0 .. gpuN-1) holds 1/N of the heads (K/V heads
 * replicated when fewer than N) and of the MLP's intermediate size, the QKV
 * and gate/up projections column-parallel, the output and down projections
 * row-parallel, each followed by an all-reduce of the rows x hidden
 * activations over all ranks; norms, embedding and LM head are replicated.
 *
 * Data parallelism (llm_step.dp = D > 1, training): D replicas of the TP
 * group (devices tp x dp, rank = dp_rank x tp + tp_rank), each on its own
 * batch; after a layer's backward its gradients (the layer's parameters /
 * tp, in the step's dtype) are all-reduced over the replicas on stream 1,
 * so the all-reduces overlap the backward of the layers below, as
 * PyTorch DDP's buckets do (one bucket per layer).  The optimizer step
 * waits for the last.  With TP in training, the backward of the
 * column-parallel projections (QKV, gate/up) all-reduces its input
 * gradient, Megatron's rule.
 *
 * Across slices (llm_step.dcn = S > 1, training): S copies of the tp x dp
 * devices (device = slice x tp x dp + rank), joined by a data-center
 * network; after a layer's gradients are reduced in its slice, the rank's
 * share of them (1/dp with ZeRO) is all-reduced with the same rank of the
 * other slices, on stream 1, so it too overlaps the backward.  Only the
 * first slice gets ops; the others mirror it.
 *
 * Mixture of experts (num_local_experts, num_experts_per_tok: Mixtral):
 * a router GEMM and top-k, then the experts' gate/up/down as batched GEMMs
 * over the experts the step's tokens reach, assuming uniform routing
 * (E x (1 - (1 - k/E)^tokens) distinct experts, tokens x k / that many rows
 * each).  Expert parallelism (llm_step.ep = E > 1; in training the
 * all-to-alls run again backward and the non-expert gradients are
 * all-reduced over the E ranks),
 * as DeepSeek-V3's and SGLang's DP-attention + EP serving run it: E ranks,
 * each with its own batch and a full copy of the attention and dense
 * weights, and experts / E whole experts; a layer's MoE block routes its
 * tokens, sends each token's top-k copies to the ranks of their experts
 * (dispatch: an all-to-all of tokens x k x hidden per rank under uniform
 * routing, the same count to every rank), runs its local experts on what
 * it received, and sends the results back (combine: a second all-to-all).
 * In training the E ranks are replicas inside --dp (--ep E alone is --dp
 * E): with --tp each is a TP group whose ranks split every expert as the
 * dense MLP, with --pp every stage has its own EP groups; --ep equal to
 * --tp instead puts E/T whole experts on each TP rank, with no all-to-all.
 *
 * Context parallelism (llm_step.cp = C > 1, training): Megatron's layout
 * (rank order TP, CP, DP, PP) with Transformer Engine's p2p ring.  A
 * sequence is cut into 2C chunks and rank r holds chunks r and 2C-1-r, so
 * every rank gets the same share of the causal mask.  Everything but
 * attention runs on the rank's 1/C of the tokens, as data parallelism
 * would; the gradients are reduced (ZeRO: sharded) over the DP x CP
 * ranks.  Attention takes C steps: the rank's own block (causal), then
 * C-1 blocks from the other ranks (half the block or half the queries,
 * no mask), each received from the previous rank in the ring while the
 * step before it computes (a p2p copy of K and V on stream 3).  The
 * backward runs the ring again, passing K, V and the partial dK, dV, and
 * waits for its own dK, dV to come home (in the forward's direction and
 * order; Transformer Engine runs it the other way round with the rank's
 * own block last: the same work, and the same bytes on every link of a
 * symmetric ring).
 * The MLP is gated (gate, up, down: SwiGLU, GeGLU) for Llama-family model
 * types and hidden_act silu, plain (up, the activation, down) for the GPT
 * family's types (gpt3, gpt_neox, phi, starcoder2, nemotron, ...); another
 * model type with another activation is refused (the config does not say
 * whether its MLP is gated).  Configs that name their sizes otherwise
 * (GPT-2's n_embd, OPT's ffn_dim, Falcon without intermediate_size) are
 * refused by the missing field.
 * Model fields strata does not model (shared experts, latent
 * attention, logit soft-capping, cross-attention, a sliding window the step
 * exceeds) are errors that name the field.
 */
#ifndef STRATA_LLM_H
#define STRATA_LLM_H

#include <stdint.h>

#include "diag.h"
#include "dtype.h"
#include "trace.h"

struct llm_config {
    char path[512];
    char name[96];                  /* model_type or file stem */
    uint64_t hidden;                /* hidden_size */
    uint64_t intermediate;          /* intermediate_size */
    uint64_t layers;                /* num_hidden_layers */
    uint64_t heads;                 /* num_attention_heads */
    uint64_t kv_heads;              /* num_key_value_heads (default heads) */
    uint64_t head_dim;              /* head_dim (default hidden / heads) */
    uint64_t vocab;                 /* vocab_size */
    uint64_t max_pos;               /* max_position_embeddings */
    int tied;                       /* tie_word_embeddings */
    uint64_t experts;               /* num_local_experts (Mixtral-style MoE), 0 = dense */
    uint64_t experts_per_tok;       /* num_experts_per_tok (top-k routing) */
    uint64_t sliding_window;        /* sliding_window, 0 = none: a step whose keys exceed it
                                     * is refused (not modelled) */
    int gated;                      /* the MLP is gated (SwiGLU, GeGLU: gate, up, down); 0: a
                                     * plain MLP (GPT-2/3, GPT-NeoX, Falcon, Nemotron: up, the
                                     * activation, down) */
    char act[24];                   /* hidden_act ("silu", "gelu", "relu2", ...) */
    double act_flops;               /* the activation's FLOPs per element (sim/work/opmap.c's
                                     * counts: gelu 10, silu 5, relu 1, relu2 2) */
};

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
enum llm_framework { LLM_FW_FUSED = 0, LLM_FW_LLAMA_CPP = 1, LLM_FW_PYTORCH = 2, LLM_FW_VLLM = 3 };

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
    uint32_t pp;                    /* train: pipeline stages (0 or 1: none), 1F1B schedule */
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
};

enum { LLM_CP_P2P = 0, LLM_CP_A2A = 1, LLM_CP_ALLGATHER = 2 };

int llm_config_load(const char *path, struct llm_config *c, struct diag *d);
/* Parameters of the model (embeddings, all layers, final norm, LM head if untied). */
uint64_t llm_param_count(const struct llm_config *c);
/* "fused", "llama.cpp", "pytorch" or "vllm".  0, or -1 if unknown. */
int llm_framework_from_name(const char *name, enum llm_framework *out);
/* The attention a framework runs when --attn does not say (resolved per
 * chip at run time for pytorch and vllm). */
enum attn_impl llm_framework_attn(enum llm_framework f);
/* --cp-comm names: "p2p", "a2a", "allgather" (LLM_CP_*).  0, or -1 if unknown. */
int llm_cp_comm_from_name(const char *name, uint32_t *out);
/* --weights names: a wfmt.h format or "q4_k_m".  0, or -1 if unknown. */
int llm_weights_from_name(const char *name, struct llm_step *s);
/* -1 (reason in d) if s asks for an expert-parallel layout llm_build cannot
 * write; 0 otherwise (fit checks the same). */
int llm_check_ep(const struct llm_config *c, const struct llm_step *s, struct diag *d);
int llm_check_tp(const struct llm_config *c, const struct llm_step *s, struct diag *d);
int llm_check_pp(const struct llm_config *c, const struct llm_step *s, struct diag *d);
int llm_check_cp(const struct llm_config *c, const struct llm_step *s, struct diag *d);
/* Builds the trace; free with trace_free().  Returns 0 or -1 with *d. */
int llm_build(const struct llm_config *c, const struct llm_step *s, struct trace *t,
              struct diag *d);

#endif
