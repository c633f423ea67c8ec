/* llm_config.c: reading a model's Hugging Face config.json (see
 * llm_config.h) and counting its parameters. */
#include "llm_config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "jsondoc.h"

#define LLM_MAX_DIM (1ull << 24)
#define LLM_MAX_LAYERS 4096 /* num_hidden_layers */
#define LLM_MAX_PARAMS 2e15 /* parameters */

static int get_dim(const struct jsondoc *doc, const char *key, int required, uint64_t def,
                   uint64_t *out, struct diag *d)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(doc->root, key);
    if (it == NULL) {
        if (required)
            return diag_set(d, DIAG_E_MISSING, doc->name, 1, key, "required field is missing");
        *out = def;
        return 0;
    }
    return jsondoc_get_uint(doc, it, "", key, 1, LLM_MAX_DIM, out, d);
}

/* Gated or plain MLP, and the activation (llm.h): from hidden_act (or
 * GPT-2's activation_function, Gemma 2's hidden_activation) and model_type.
 * 0, or -1 with d set when neither says. */
static int mlp_kind(const struct jsondoc *doc, struct llm_config *c, struct diag *d)
{
    static const char *const gated_types[] = {
        "llama", "mistral", "mixtral", "qwen2", "qwen3", "phi3", "gemma", "gemma2", "gemma3_text",
        "granite", "olmo", "olmo2", "cohere", "internlm2", "stablelm", "yi", "exaone", "smollm3",
    };
    static const char *const plain_types[] = {
        "gpt2", "gpt3", "gpt_neox", "gptj", "gpt_bigcode", "falcon", "opt", "bloom", "starcoder2",
        "phi", "mpt", "codegen", "nemotron",
    };
    static const struct { const char *name; double flops; } acts[] = {
        {"silu", 5}, {"swish", 5}, {"gelu", 10}, {"gelu_new", 10}, {"gelu_fast", 10},
        {"gelu_pytorch_tanh", 10}, {"relu", 1}, {"relu2", 2},
    };
    const char *keys[] = {"hidden_act", "activation_function", "hidden_activation"}, *act = NULL;
    const cJSON *it = NULL;
    for (size_t k = 0; k < 3 && act == NULL; k++) {
        it = cJSON_GetObjectItemCaseSensitive(doc->root, keys[k]);
        if (it != NULL && !cJSON_IsNull(it) &&
            jsondoc_get_string(doc, it, "", keys[k], sizeof c->act - 1, &act, d))
            return -1;
    }
    int gated = -1;
    for (size_t k = 0; k < sizeof gated_types / sizeof gated_types[0]; k++)
        if (strcmp(c->name, gated_types[k]) == 0)
            gated = 1;
    for (size_t k = 0; k < sizeof plain_types / sizeof plain_types[0]; k++)
        if (strcmp(c->name, plain_types[k]) == 0)
            gated = 0;
    if (act == NULL)
        act = gated == 0 ? "gelu" : "silu";     /* the family's own (HF's defaults) */
    c->act_flops = -1;
    for (size_t k = 0; k < sizeof acts / sizeof acts[0]; k++)
        if (strcmp(act, acts[k].name) == 0)
            c->act_flops = acts[k].flops;
    int line = it != NULL ? jsondoc_line(doc, it) : 1;
    if (c->act_flops < 0)
        return diag_set(d, DIAG_E_UNSUPPORTED, c->path, line, "hidden_act", "'%s': an activation "
                        "strata does not know (silu, gelu, gelu_new, gelu_pytorch_tanh, relu, relu2)", act);
    if (gated < 0) {
        if (strcmp(act, "silu") != 0 && strcmp(act, "swish") != 0)
            return diag_set(d, DIAG_E_UNSUPPORTED, c->path, line, "model_type",
                            "'%s' with hidden_act '%s': strata cannot tell whether its MLP is gated "
                            "(Llama-family types and silu are; GPT-2/3, GPT-NeoX, Falcon, Nemotron ... "
                            "are not), so it will not guess", c->name, act);
        gated = 1;
    }
    c->gated = gated;
    snprintf(c->act, sizeof c->act, "%s", act);
    return 0;
}


/* model_type, the sizes, head_dim and the K/V heads. */
static int config_sizes(const struct jsondoc *doc, const char *path, struct llm_config *c,
                        struct diag *d)
{
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(doc->root, "model_type");
    const char *mname = "llm";
    if (mt != NULL && jsondoc_get_string(doc, mt, "", "model_type", sizeof c->name - 1, &mname, d))
        return -1;  /* the name reaches report.json and the terminal */
    snprintf(c->name, sizeof c->name, "%s", mname);
    if (get_dim(doc, "hidden_size", 1, 0, &c->hidden, d) ||
        get_dim(doc, "intermediate_size", 1, 0, &c->intermediate, d) ||
        get_dim(doc, "num_hidden_layers", 1, 0, &c->layers, d) ||
        get_dim(doc, "num_attention_heads", 1, 0, &c->heads, d) ||
        get_dim(doc, "vocab_size", 1, 0, &c->vocab, d) ||
        get_dim(doc, "max_position_embeddings", 1, 0, &c->max_pos, d) ||
        get_dim(doc, "num_key_value_heads", 0, c->heads, &c->kv_heads, d))
        return -1;
    /* the deepest published models have a few hundred layers; a million
     * wrote a 2 GB trace that strata run then refuses */
    if (c->layers > LLM_MAX_LAYERS)
        return diag_set(d, DIAG_E_RANGE, path,
                        jsondoc_line(doc, cJSON_GetObjectItemCaseSensitive(doc->root, "num_hidden_layers")),
                        "num_hidden_layers", "must be at most %d, got %llu", LLM_MAX_LAYERS,
                        (unsigned long long)c->layers);
    const cJSON *hd = cJSON_GetObjectItemCaseSensitive(doc->root, "head_dim");
    if (hd != NULL && !cJSON_IsNull(hd)) {
        if (jsondoc_get_uint(doc, hd, "", "head_dim", 1, LLM_MAX_DIM, &c->head_dim, d))
            return -1;
    } else {
        if (c->hidden % c->heads != 0)
            return diag_set(d, DIAG_E_RANGE, path,
                            jsondoc_line(doc, cJSON_GetObjectItemCaseSensitive(doc->root, "num_attention_heads")),
                            "num_attention_heads",
                            "hidden_size %llu is not divisible by num_attention_heads %llu",
                            (unsigned long long)c->hidden, (unsigned long long)c->heads);
        c->head_dim = c->hidden / c->heads;
    }
    if (c->heads % c->kv_heads != 0)
        return diag_set(d, DIAG_E_RANGE, path,
                        jsondoc_line(doc, cJSON_GetObjectItemCaseSensitive(doc->root, "num_key_value_heads")),
                        "num_key_value_heads", "%llu does not divide num_attention_heads %llu",
                        (unsigned long long)c->kv_heads, (unsigned long long)c->heads);
    return 0;
}

/* architectures strata does not model: refused by name, never built as
 * something else.  A field counts when it is there and not null,
 * false or 0. */
static int config_unmodelled(const struct jsondoc *doc, const char *path, struct diag *d)
{
    static const struct { const char *key, *what; } unmodelled[] = {
        {"n_routed_experts", "DeepSeek-style routed experts"},
        {"n_shared_experts", "shared experts"},
        {"shared_expert_intermediate_size", "shared experts"},
        {"num_experts", "this MoE layout (strata models Mixtral's num_local_experts)"},
        {"moe_intermediate_size", "a separate MoE intermediate size"},
        {"kv_lora_rank", "multi-head latent attention"},
        {"q_lora_rank", "multi-head latent attention"},
        {"attn_logit_softcapping", "attention logit soft-capping"},
        {"final_logit_softcapping", "final logit soft-capping"},
        {"is_encoder_decoder", "encoder-decoder models"},
        {"cross_attention_layers", "cross-attention layers"},
    };
    for (size_t k = 0; k < sizeof unmodelled / sizeof unmodelled[0]; k++) {
        const cJSON *u = cJSON_GetObjectItemCaseSensitive(doc->root, unmodelled[k].key);
        if (u == NULL || cJSON_IsNull(u) || cJSON_IsFalse(u) ||
            (cJSON_IsNumber(u) && u->valuedouble == 0) || (cJSON_IsArray(u) && u->child == NULL))
            continue;
        return diag_set(d, DIAG_E_UNSUPPORTED, path, jsondoc_line(doc, u), unmodelled[k].key,
                        "%s: not modelled yet, so strata will not simulate this model as a "
                        "different one", unmodelled[k].what);
    }
    return 0;
}

/* num_local_experts and num_experts_per_tok (Mixtral). */
static int config_experts(const struct jsondoc *doc, const char *path, struct llm_config *c,
                          struct diag *d)
{
    const cJSON *ne = cJSON_GetObjectItemCaseSensitive(doc->root, "num_local_experts");
    if (ne == NULL || cJSON_IsNull(ne))
        return 0;
    if (jsondoc_get_uint(doc, ne, "", "num_local_experts", 1, 65536, &c->experts, d) ||
        get_dim(doc, "num_experts_per_tok", 1, 0, &c->experts_per_tok, d))
        return -1;
    if (c->experts_per_tok > c->experts)
        return diag_set(d, DIAG_E_RANGE, path,
                        jsondoc_line(doc, cJSON_GetObjectItemCaseSensitive(doc->root, "num_experts_per_tok")),
                        "num_experts_per_tok", "%llu is more than num_local_experts %llu",
                        (unsigned long long)c->experts_per_tok, (unsigned long long)c->experts);
    if (c->experts == 1)
        c->experts = 0;     /* one expert is a dense MLP */
    return 0;
}

/* The MLP, the sliding window and tied embeddings. */
static int config_rest(const struct jsondoc *doc, const char *path, struct llm_config *c,
                       struct diag *d)
{
    if (mlp_kind(doc, c, d) != 0)
        return -1;
    if (c->experts && !c->gated)
        return diag_set(d, DIAG_E_UNSUPPORTED, path,
                        jsondoc_line(doc, cJSON_GetObjectItemCaseSensitive(doc->root, "num_local_experts")),
                        "num_local_experts", "experts with a plain (non-gated) MLP: not modelled yet (strata "
                        "models Mixtral's gated experts)");
    const cJSON *sw = cJSON_GetObjectItemCaseSensitive(doc->root, "sliding_window");
    const cJSON *usw = cJSON_GetObjectItemCaseSensitive(doc->root, "use_sliding_window");
    if (sw != NULL && !cJSON_IsNull(sw) && !(usw != NULL && cJSON_IsFalse(usw)) &&
        jsondoc_get_uint(doc, sw, "", "sliding_window", 1, UINT64_C(1) << 40, &c->sliding_window, d))
        return -1;
    const cJSON *tie = cJSON_GetObjectItemCaseSensitive(doc->root, "tie_word_embeddings");
    if (tie != NULL && jsondoc_get_bool(doc, tie, "", "tie_word_embeddings", &c->tied, d))
        return -1;
    return 0;
}

/* each size is at most 2^24, but their products are not: llm_param_count
 * wrapped around 2^64 for head_dim x heads x hidden near the limits.
 * The same sum in double, against a bound a thousand times the largest
 * published dense models (~2e12), keeps every product below 2^63. */
static int config_params(const char *path, const struct llm_config *c, struct diag *d)
{
    double hd_ = (double)c->hidden, q_ = (double)c->heads * (double)c->head_dim,
           kv_ = (double)c->kv_heads * (double)c->head_dim;
    double layer_ = 2 * hd_ * q_ + 2 * hd_ * kv_ +
                    (c->gated ? 3 : 2) * hd_ * (double)c->intermediate * (c->experts ? (double)c->experts : 1.0) +
                    2 * hd_;
    double total_ = 2 * (double)c->vocab * hd_ + (double)c->layers * layer_ + hd_;
    if (!(total_ <= LLM_MAX_PARAMS))
        return diag_set(d, DIAG_E_RANGE, path, 1, "hidden_size",
                        "the sizes give %.3g parameters, more than %.0e: not a model strata can build", total_,
                        LLM_MAX_PARAMS);
    return 0;
}

int llm_config_load(const char *path, struct llm_config *c, struct diag *d)
{
    memset(c, 0, sizeof *c);
    struct jsondoc doc;
    if (jsondoc_load(path, &doc, d) != 0)
        return -1;
    int rc = -1;
    if (!cJSON_IsObject(doc.root)) {
        diag_set(d, DIAG_E_TYPE, path, 1, "", "a model config must be a JSON object");
        goto out;
    }
    snprintf(c->path, sizeof c->path, "%s", path);
    if (jsondoc_check_unique(&doc, doc.root, "", d))
        goto out;
    if (config_sizes(&doc, path, c, d) || config_unmodelled(&doc, path, d) ||
        config_experts(&doc, path, c, d) || config_rest(&doc, path, c, d) ||
        config_params(path, c, d))
        goto out;
    rc = 0;
out:
    jsondoc_free(&doc);
    return rc;
}

uint64_t llm_param_count(const struct llm_config *c)
{
    uint64_t h = c->hidden, q = c->heads * c->head_dim, kv = c->kv_heads * c->head_dim;
    uint64_t ffn = c->experts ? c->experts * 3 * h * c->intermediate + h * c->experts
                              : (c->gated ? 3 : 2) * h * c->intermediate;   /* (gate,) up, down
                                                                           * (x experts, router) */
    uint64_t layer = h * q + 2 * h * kv + q * h      /* q, k, v, o */
                     + ffn
                     + 2 * h;                        /* two RMSNorm weights */
    uint64_t n = c->vocab * h + c->layers * layer + h;
    if (!c->tied)
        n += c->vocab * h;
    return n;
}
