/* llm_config.h: a model's Hugging Face config.json, as llm_build (llm.h)
 * needs it.
 *
 * llm_config_load() reads the fields strata needs and checks them
 * (positive sizes, hidden size divisible by heads, kv heads dividing heads,
 * an MLP strata knows, parameters a trace can hold); fields of
 * architectures strata does not model are errors that name the field
 * (llm.h lists them).
 */
#ifndef STRATA_LLM_CONFIG_H
#define STRATA_LLM_CONFIG_H

#include <stdint.h>

#include "diag.h"

#define LLM_MAX_LAYERS 4096 /* num_hidden_layers */

enum llm_layer_kind { LLM_LAYER_FULL = 0, LLM_LAYER_ATTN = 1, LLM_LAYER_MLP = 2, LLM_LAYER_MAMBA = 3 };

/* A vision transformer's sizes (ViTConfig, CLIPVisionConfig keys). */
struct llm_vit {
    uint64_t image;                 /* image_size, pixels a side (default 224) */
    uint64_t patch;                 /* patch_size, pixels a side (default 16) */
    uint64_t channels;              /* num_channels (default 3) */
    uint64_t hidden;                /* hidden_size */
    uint64_t inter;                 /* intermediate_size: the MLP's width */
    uint64_t layers;                /* num_hidden_layers */
    uint64_t heads;                 /* num_attention_heads (as many K/V heads) */
    uint64_t head_dim;              /* hidden / heads */
    double act_flops;               /* hidden_act's FLOPs an element (gelu 10, quick_gelu 5) */
    uint64_t tokens;                /* (image / patch)^2 patches and the class token */
    uint64_t labels;                /* num_labels, else id2label's count: the classifier's
                                     * classes; 0 = none (the encoder's features) */
    uint64_t feature_layers;        /* layers up to the one a VLM takes its features from
                                     * (vision_feature_layer -2 of 24: 23); 0 = all */
    int pre_norm;                   /* CLIP: a LayerNorm on the embeddings before layer 0 */
};

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
    uint64_t experts;               /* routed experts: num_local_experts (Mixtral),
                                     * num_experts (Qwen2/3-MoE) or n_routed_experts
                                     * (DeepSeek-V2/V3); 0 = dense */
    char experts_key[24];           /* the field that gave them (for messages) */
    uint64_t experts_per_tok;       /* num_experts_per_tok (top-k routing) */
    uint64_t moe_inter;             /* an expert's intermediate size: moe_intermediate_size,
                                     * else intermediate_size (Mixtral); 0 when dense */
    uint64_t shared_experts;        /* n_shared_experts (DeepSeek): experts of moe_inter every
                                     * token runs, as one dense MLP n x moe_inter wide; 0 = none */
    unsigned char moe_layer[LLM_MAX_LAYERS / 8];   /* bit l: layer l's MLP is the experts (the
                                     * others dense, intermediate_size wide): DeepSeek's
                                     * first_k_dense_replace and moe_layer_freq, Qwen's
                                     * decoder_sparse_step and mlp_only_layers (llm_layer_moe) */
    uint64_t kv_lora;               /* kv_lora_rank: multi-head latent attention (DeepSeek-V2/V3)
                                     * caches this compressed K/V and one shared RoPE key of
                                     * rope_dim a token and layer; 0 = ordinary attention */
    uint64_t q_lora;                /* q_lora_rank: q through a low-rank bottleneck; 0 = direct */
    uint64_t rope_dim;              /* qk_rope_head_dim (MLA) */
    uint64_t nope_dim;              /* qk_nope_head_dim (MLA) */
    uint64_t v_dim;                 /* v_head_dim (MLA) */
    int qk_norm;                    /* a per-head RMSNorm of q and k after the projection (Qwen3) */
    uint64_t sliding_window;        /* sliding_window, 0 = none: a step whose keys exceed it
                                     * is refused (not modelled) */
    int gated;                      /* the MLP is gated (SwiGLU, GeGLU: gate, up, down); 0: a
                                     * plain MLP (GPT-2/3, GPT-NeoX, Falcon, Nemotron: up, the
                                     * activation, down) */
    char act[24];                   /* hidden_act ("silu", "gelu", "relu2", ...) */
    double act_flops;               /* the activation's FLOPs per element (sim/work/opmap.c's
                                     * counts: gelu 10, silu 5, relu 1, relu2 2) */
    /* A vision transformer (model_type vit or deit: Hugging Face's ViTConfig,
     * timm's VisionTransformer) is an encoder over an image's patches and a
     * class token, bidirectional attention, no KV cache, a classifier on the
     * class token (llmb_vit.c): encoder 1, its sizes in vit, its sequence
     * (vit.tokens) in max_pos, vocab 0.  A vision-language model (model_type
     * llava: text_config, vision_config) is the decoder its text_config
     * describes with vit its image tower (CLIP's) and a two-layer projector
     * into the decoder's width: each image becomes image_tokens tokens of
     * the prompt. */
    /* A hybrid of Mamba-2 and attention (model_type nemotron_h: Nemotron-H,
     * Nemotron Nano 2): each layer is one block of one kind, from
     * hybrid_override_pattern ('M' Mamba-2 mixer, '*' attention, '-' MLP);
     * kind[] all LLM_LAYER_FULL otherwise (attention and MLP, the usual). */
    unsigned char kind[LLM_MAX_LAYERS];
    uint64_t ssm_heads;             /* mamba_num_heads */
    uint64_t ssm_head_dim;          /* mamba_head_dim */
    uint64_t ssm_state;             /* ssm_state_size: N */
    uint64_t ssm_groups;            /* n_groups (mamba_num_groups): B and C shared by heads */
    uint64_t ssm_conv;              /* conv_kernel */
    uint64_t ssm_chunk;             /* chunk_size: the SSD scan's chunk (default 128) */
    int encoder;                    /* 1: the model is a vision encoder (vit); its sizes in vit */
    struct llm_vit vit;             /* the encoder's, or a VLM's tower; vit.layers 0: none */
    uint64_t image_tokens;          /* llava: tokens an image gives the decoder (the tower's
                                     * patches, and its class token under
                                     * vision_feature_select_strategy "full") */
    double proj_act_flops;          /* llava: projector_hidden_act's FLOPs an element */
};

int llm_config_load(const char *path, struct llm_config *c, struct diag *d);
/* -1 with d naming verb when c is a vision encoder, which has no tokens to
 * decode (serve, plan and fit size decoder LLMs'), or, unless hybrid_ok,
 * a Mamba-2 hybrid (plan's tensor-parallel candidates and a speculative
 * draft are not modelled for one); else 0. */
int llm_config_decoder(const struct llm_config *c, const char *verb, int hybrid_ok, struct diag *d);
/* Parameters of the model (embeddings, all layers, final norm, LM head if untied);
 * DeepSeek's multi-token-prediction layers (num_nextn_predict_layers) are not
 * counted: strata does not model them. */
uint64_t llm_param_count(const struct llm_config *c);
/* 1 if layer l's MLP is the routed experts, 0 if it is dense. */
int llm_layer_moe(const struct llm_config *c, uint64_t l);
/* 1 if c has Mamba-2 layers (a hybrid). */
int llm_hybrid(const struct llm_config *c);
/* Layers of c whose block holds attention (and a KV cache). */
uint64_t llm_attn_layers(const struct llm_config *c);
/* A Mamba-2 layer's state a sequence, elements: the SSM state (heads x
 * head_dim x N, kept in fp32), and the convolution's window (kernel - 1
 * steps of its channels, in the model's dtype). */
uint64_t llm_ssm_state_elems(const struct llm_config *c);
uint64_t llm_ssm_conv_elems(const struct llm_config *c);
/* Elements of K/V cache a token takes in one layer on one of tp ranks:
 * 2 x K/V heads x head_dim (K/V heads replicated below tp), or with MLA
 * the latent and the RoPE key, kv_lora + rope_dim, on every rank. */
uint64_t llm_kv_elems(const struct llm_config *c, uint32_t tp);
/* K/V heads on one of tp ranks: kv_heads / tp, or 1 (replicated) when
 * there are fewer K/V heads than ranks. */
uint64_t llm_rank_kv_heads(const struct llm_config *c, uint32_t tp);

#endif
