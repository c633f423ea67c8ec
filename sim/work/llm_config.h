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

int llm_config_load(const char *path, struct llm_config *c, struct diag *d);
/* Parameters of the model (embeddings, all layers, final norm, LM head if untied). */
uint64_t llm_param_count(const struct llm_config *c);

#endif
