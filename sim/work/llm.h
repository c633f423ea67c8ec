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
 * Mixture of experts (num_local_experts, num_experts_per_tok: Mixtral;
 * num_experts, moe_intermediate_size: Qwen3-MoE; n_routed_experts,
 * n_shared_experts, first_k_dense_replace: DeepSeek; llmb_layer.c):
 * the shared experts as a dense MLP, a router GEMM and top-k, then the experts' gate/up/down as batched GEMMs
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
 * Multi-head latent attention (kv_lora_rank: DeepSeek-V2/V3) caches the
 * latent and the RoPE key; decode runs the weight-absorbed form, prefill
 * the expanded one (llmb_layer.c); those models, and MoE ones with shared
 * experts, dense layers or experts of their own width, are built for
 * decode and prefill only.
 * Vision transformers (model_type vit: a ViTConfig's image_size,
 * patch_size, num_channels, num_labels) are built as their encoder's
 * forward over a batch of images (llmb_vit.c, docs/vision.md): prefill on
 * one device only.  LLaVA (model_type llava: text_config, vision_config)
 * is its decoder with a CLIP tower and projector in front: a prefill's
 * --images run through them into image tokens ahead of the prompt's.
 * Mamba-2 hybrids (model_type nemotron_h: hybrid_override_pattern) build
 * each layer as one block, a Mamba-2 mixer, attention or an MLP
 * (llmb_ssm.c, docs/ssm.md): decode and prefill.
 * Model fields strata does not model (Qwen2-MoE's gated shared expert,
 * logit soft-capping, cross-attention, linear attention, a sliding window
 * the step exceeds) are errors that name the field.
 *
 * Where it lives: the config in llm_config.c, the step's options and their
 * checks in llm_step.c, llm_build in llm.c with the builder's parts in
 * llmb*.c (llmb.h says which does what).
 */
#ifndef STRATA_LLM_H
#define STRATA_LLM_H

#include "diag.h"
#include "llm_config.h"
#include "llm_step.h"
#include "trace.h"

/* Builds the trace; free with trace_free().  Returns 0 or -1 with *d. */
int llm_build(const struct llm_config *c, const struct llm_step *s, struct trace *t,
              struct diag *d);

#endif
