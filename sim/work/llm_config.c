/* llm_config.c: reading a model's Hugging Face config.json (see
 * llm_config.h) and counting its parameters. */
#include "llm_config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "jsondoc.h"

#define LLM_MAX_DIM (1ull << 24)
#define LLM_MAX_PARAMS 2e15 /* parameters */

static double act_flops_of(const char *act);

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
        "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3",
    };
    static const char *const plain_types[] = {
        "gpt2", "gpt3", "gpt_neox", "gptj", "gpt_bigcode", "falcon", "opt", "bloom", "starcoder2",
        "phi", "mpt", "codegen", "nemotron", "vit", "nemotron_h",
    };
    const char *keys[] = {"hidden_act", "activation_function", "hidden_activation", "mlp_hidden_act"}, *act = NULL;
    const cJSON *it = NULL;
    for (size_t k = 0; k < 4 && act == NULL; k++) {
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
    c->act_flops = act_flops_of(act);
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


/* A field that is there and not null. */
static const cJSON *field(const struct jsondoc *doc, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(doc->root, key);
    return it != NULL && !cJSON_IsNull(it) ? it : NULL;
}

/* The FLOPs an element of an activation, by its hidden_act name (the
 * counts of sim/work/opmap.c: gelu 10, silu 5, relu 1, relu2 2; CLIP's
 * quick_gelu, x * sigmoid(1.702 x), as silu); -1 if unknown. */
static double act_flops_of(const char *act)
{
    static const struct { const char *name; double flops; } acts[] = {
        {"silu", 5}, {"swish", 5}, {"gelu", 10}, {"gelu_new", 10}, {"gelu_fast", 10},
        {"gelu_pytorch_tanh", 10}, {"relu", 1}, {"relu2", 2}, {"quick_gelu", 5},
    };
    for (size_t k = 0; k < sizeof acts / sizeof acts[0]; k++)
        if (strcmp(act, acts[k].name) == 0)
            return acts[k].flops;
    return -1;
}

/* The activation named by key (def where the config leaves it out): its
 * FLOPs an element into *flops.  0, or -1 with d (a name strata does not
 * know is refused at its line). */
static int config_act(const struct jsondoc *doc, const char *path, const char *key, const char *def,
                      double *flops, struct diag *d)
{
    const char *act = def;
    const cJSON *it = field(doc, key);
    if (it != NULL && jsondoc_get_string(doc, it, "", key, 23, &act, d))
        return -1;
    *flops = act_flops_of(act);
    if (*flops < 0)
        return diag_set(d, DIAG_E_UNSUPPORTED, path, jsondoc_line(doc, it), key,
                        "'%s': an activation strata does not know (gelu, quick_gelu, silu, relu, ...)", act);
    return 0;
}

/* A vision transformer's sizes from the object doc->root (Hugging Face's
 * ViTConfig keys and defaults, or with clip CLIPVisionConfig's: patches of
 * 32, quick GELU): the encoder's widths, the image, its patches, the
 * activation and the classifier. */
static int config_tower(const struct jsondoc *doc, const char *path, int clip, struct llm_vit *v,
                        struct diag *d)
{
    if (get_dim(doc, "hidden_size", 1, 0, &v->hidden, d) ||
        get_dim(doc, "intermediate_size", 1, 0, &v->inter, d) ||
        get_dim(doc, "num_hidden_layers", 1, 0, &v->layers, d) ||
        get_dim(doc, "num_attention_heads", 1, 0, &v->heads, d) ||
        get_dim(doc, "image_size", 0, 224, &v->image, d) ||
        get_dim(doc, "patch_size", 0, clip ? 32 : 16, &v->patch, d) ||
        get_dim(doc, "num_channels", 0, 3, &v->channels, d))
        return -1;
    v->pre_norm = clip;
    const cJSON *qb = field(doc, "qkv_bias");
    if (qb != NULL && cJSON_IsFalse(qb))
        return diag_set(d, DIAG_E_UNSUPPORTED, path, jsondoc_line(doc, qb), "qkv_bias",
                        "false: strata counts and builds the q/k/v bias ViT and CLIP have");
    if (v->image > 65536)
        return diag_set(d, DIAG_E_RANGE, path, jsondoc_line(doc, field(doc, "image_size")), "image_size",
                        "at most 65536 pixels a side, got %llu", (unsigned long long)v->image);
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(doc->root, "num_hidden_layers");
    if (v->layers > LLM_MAX_LAYERS)
        return diag_set(d, DIAG_E_RANGE, path, jsondoc_line(doc, it), "num_hidden_layers",
                        "must be at most %d, got %llu", LLM_MAX_LAYERS, (unsigned long long)v->layers);
    it = cJSON_GetObjectItemCaseSensitive(doc->root, "num_attention_heads");
    if (v->hidden % v->heads != 0)
        return diag_set(d, DIAG_E_RANGE, path, jsondoc_line(doc, it), "num_attention_heads",
                        "hidden_size %llu is not divisible by num_attention_heads %llu",
                        (unsigned long long)v->hidden, (unsigned long long)v->heads);
    it = cJSON_GetObjectItemCaseSensitive(doc->root, "patch_size");
    if (v->image % v->patch != 0 || v->image / v->patch > 4096)
        return diag_set(d, DIAG_E_RANGE, path, it != NULL ? jsondoc_line(doc, it) : 1, "patch_size",
                        "%llu must divide image_size %llu into at most 4096 patches a side",
                        (unsigned long long)v->patch, (unsigned long long)v->image);
    if (v->channels > 64)
        return diag_set(d, DIAG_E_RANGE, path, jsondoc_line(doc, cJSON_GetObjectItemCaseSensitive(doc->root, "num_channels")),
                        "num_channels", "at most 64, got %llu", (unsigned long long)v->channels);
    uint64_t side = v->image / v->patch;
    v->tokens = side * side + 1;    /* the patches and the class token */
    v->head_dim = v->hidden / v->heads;
    if (config_act(doc, path, "hidden_act", clip ? "quick_gelu" : "gelu", &v->act_flops, d))
        return -1;
    const cJSON *nl = field(doc, "num_labels"), *ids = field(doc, "id2label");
    if (nl != NULL) {
        if (jsondoc_get_uint(doc, nl, "", "num_labels", 0, LLM_MAX_DIM, &v->labels, d))
            return -1;
    } else if (ids != NULL) {
        if (!cJSON_IsObject(ids))
            return diag_set(d, DIAG_E_TYPE, path, jsondoc_line(doc, ids), "id2label",
                            "an object of class names, got %s", jsondoc_type_name(ids));
        v->labels = (uint64_t)cJSON_GetArraySize(ids);
    }
    /* each size is at most 2^24; their products are bounded as the
     * decoder's are (config_params) */
    double p = (double)v->channels * v->patch * v->patch * v->hidden + (double)v->tokens * v->hidden +
               (double)v->layers * (4.0 * v->hidden * v->hidden + 2.0 * v->hidden * v->inter) +
               (double)v->labels * v->hidden;
    if (!(p <= LLM_MAX_PARAMS))
        return diag_set(d, DIAG_E_RANGE, path, 1, "hidden_size",
                        "the image tower's sizes give %.3g parameters, more than %.0e: not a model strata "
                        "can build", p, LLM_MAX_PARAMS);
    return 0;
}

/* A vision transformer as the model itself (ViT, DeiT): the tower, and the
 * decoder's fields its checks and counts read. */
static int config_vision(const struct jsondoc *doc, const char *path, struct llm_config *c,
                         struct diag *d)
{
    struct llm_vit *v = &c->vit;
    if (config_tower(doc, path, 0, v, d) != 0)
        return -1;
    c->encoder = 1;
    c->hidden = v->hidden;
    c->intermediate = v->inter;
    c->layers = v->layers;
    c->heads = c->kv_heads = v->heads;
    c->head_dim = v->head_dim;
    c->max_pos = v->tokens;
    c->act_flops = v->act_flops;
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
    if (strcmp(c->name, "vit") == 0)
        return config_vision(doc, path, c, d);
    if (strcmp(c->name, "deit") == 0)
        return diag_set(d, DIAG_E_UNSUPPORTED, path, jsondoc_line(doc, mt), "model_type",
                        "'deit': DeiT with its distillation token and second classifier is not modelled "
                        "(DeiT checkpoints without them are model_type vit)");
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
        {"shared_expert_intermediate_size", "Qwen2-MoE's gated shared expert"},
        {"attn_logit_softcapping", "attention logit soft-capping"},
        {"final_logit_softcapping", "final logit soft-capping"},
        {"is_encoder_decoder", "encoder-decoder models"},
        {"cross_attention_layers", "cross-attention layers"},
        {"full_attention_interval", "linear-attention layers (Qwen3-Next)"},
        {"index_topk", "DeepSeek sparse attention (V3.2's indexer)"},
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

static int field_line(const struct jsondoc *doc, const char *key)
{
    return jsondoc_line(doc, cJSON_GetObjectItemCaseSensitive(doc->root, key));
}

/* Which layers' MLP is the experts: all, but DeepSeek's first
 * first_k_dense_replace layers and those off every moe_layer_freq-th, and
 * Qwen's mlp_only_layers and those off every decoder_sparse_step-th (as
 * the transformers code of each picks them). */
static int config_moe_layers(const struct jsondoc *doc, const char *path, struct llm_config *c,
                             struct diag *d)
{
    uint64_t first = 0, freq = 1, step = 1;
    const cJSON *it;
    if (((it = field(doc, "first_k_dense_replace")) != NULL &&
         jsondoc_get_uint(doc, it, "", "first_k_dense_replace", 0, c->layers, &first, d)) ||
        ((it = field(doc, "moe_layer_freq")) != NULL &&
         jsondoc_get_uint(doc, it, "", "moe_layer_freq", 1, c->layers, &freq, d)) ||
        ((it = field(doc, "decoder_sparse_step")) != NULL &&
         jsondoc_get_uint(doc, it, "", "decoder_sparse_step", 1, c->layers, &step, d)))
        return -1;
    memset(c->moe_layer, 0, sizeof c->moe_layer);
    for (uint64_t l = 0; l < c->layers; l++)
        if (l >= first && l % freq == 0 && (l + 1) % step == 0)
            c->moe_layer[l / 8] |= (unsigned char)(1u << (l % 8));
    const cJSON *only = field(doc, "mlp_only_layers");
    if (only == NULL)
        return 0;
    if (!cJSON_IsArray(only))
        return diag_set(d, DIAG_E_TYPE, path, jsondoc_line(doc, only), "mlp_only_layers",
                        "a list of layer numbers");
    for (const cJSON *e = only->child; e != NULL; e = e->next) {
        uint64_t l;
        if (jsondoc_get_uint(doc, e, "", "mlp_only_layers", 0, c->layers - 1, &l, d))
            return -1;
        c->moe_layer[l / 8] &= (unsigned char)~(1u << (l % 8));
    }
    return 0;
}

/* The routed experts (num_local_experts: Mixtral; num_experts: Qwen2/3-MoE;
 * n_routed_experts: DeepSeek), top-k, the experts' width and DeepSeek's
 * shared experts. */
static int config_experts(const struct jsondoc *doc, const char *path, struct llm_config *c,
                          struct diag *d)
{
    static const char *const keys[] = {"num_local_experts", "num_experts", "n_routed_experts"};
    const cJSON *ne = NULL;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        const cJSON *it = field(doc, keys[k]);
        if (it == NULL)
            continue;
        if (ne != NULL)
            return diag_set(d, DIAG_E_RANGE, path, jsondoc_line(doc, it), keys[k],
                            "the experts are given twice (%s too): which is meant is not clear",
                            c->experts_key);
        ne = it;
        snprintf(c->experts_key, sizeof c->experts_key, "%s", keys[k]);
    }
    const cJSON *mi = field(doc, "moe_intermediate_size"), *ns = field(doc, "n_shared_experts");
    if (ne == NULL) {
        /* the experts' sizes without experts: a layout strata cannot guess */
        const cJSON *stray = mi != NULL ? mi : ns;
        if (stray != NULL && !(cJSON_IsNumber(stray) && stray->valuedouble == 0))
            return diag_set(d, DIAG_E_UNSUPPORTED, path, jsondoc_line(doc, stray),
                            stray == mi ? "moe_intermediate_size" : "n_shared_experts",
                            "experts' sizes without routed experts (num_local_experts, "
                            "num_experts or n_routed_experts): not modelled");
        return 0;
    }
    if (jsondoc_get_uint(doc, ne, "", c->experts_key, 1, 65536, &c->experts, d) ||
        get_dim(doc, "num_experts_per_tok", 1, 0, &c->experts_per_tok, d) ||
        get_dim(doc, "moe_intermediate_size", 0, c->intermediate, &c->moe_inter, d) ||
        (ns != NULL && jsondoc_get_uint(doc, ns, "", "n_shared_experts", 0, 64, &c->shared_experts, d)) ||
        config_moe_layers(doc, path, c, d))
        return -1;
    if (c->experts_per_tok > c->experts)
        return diag_set(d, DIAG_E_RANGE, path, field_line(doc, "num_experts_per_tok"),
                        "num_experts_per_tok", "%llu is more than %s %llu",
                        (unsigned long long)c->experts_per_tok, c->experts_key,
                        (unsigned long long)c->experts);
    if (c->experts == 1 && c->moe_inter == c->intermediate && c->shared_experts == 0)
        c->experts = 0;     /* one expert is a dense MLP */
    return 0;
}

/* Multi-head latent attention (DeepSeek-V2/V3): kv_lora_rank, the RoPE and
 * non-RoPE widths of q and k, v's, and q_lora_rank (null: q projected
 * directly).  The K/V heads are the heads (each expands the latent). */
static int config_mla(const struct jsondoc *doc, const char *path, struct llm_config *c,
                      struct diag *d)
{
    const cJSON *kv = field(doc, "kv_lora_rank"), *q = field(doc, "q_lora_rank");
    if (kv == NULL || (cJSON_IsNumber(kv) && kv->valuedouble == 0)) {
        if (q != NULL && !(cJSON_IsNumber(q) && q->valuedouble == 0))
            return diag_set(d, DIAG_E_UNSUPPORTED, path, jsondoc_line(doc, q), "q_lora_rank",
                            "a low-rank q without kv_lora_rank (latent attention): not modelled");
        return 0;
    }
    if (jsondoc_get_uint(doc, kv, "", "kv_lora_rank", 1, LLM_MAX_DIM, &c->kv_lora, d) ||
        (q != NULL && jsondoc_get_uint(doc, q, "", "q_lora_rank", 0, LLM_MAX_DIM, &c->q_lora, d)) ||
        get_dim(doc, "qk_rope_head_dim", 1, 0, &c->rope_dim, d) ||
        get_dim(doc, "qk_nope_head_dim", 1, 0, &c->nope_dim, d) ||
        get_dim(doc, "v_head_dim", 1, 0, &c->v_dim, d))
        return -1;
    c->kv_heads = c->heads;
    c->head_dim = c->nope_dim + c->rope_dim;    /* q's and k's width a head */
    return 0;
}

/* The MLP, the sliding window and tied embeddings. */
static int config_rest(const struct jsondoc *doc, const char *path, struct llm_config *c,
                       struct diag *d)
{
    if (mlp_kind(doc, c, d) != 0)
        return -1;
    if (c->experts && !c->gated)
        return diag_set(d, DIAG_E_UNSUPPORTED, path, field_line(doc, c->experts_key), c->experts_key,
                        "experts with a plain (non-gated) MLP: not modelled yet (strata "
                        "models gated experts: Mixtral, Qwen-MoE, DeepSeek)");
    c->qk_norm = strcmp(c->name, "qwen3") == 0 || strcmp(c->name, "qwen3_moe") == 0;
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
    /* experts' widths and the latent's terms (0 without them): a bound, not the count */
    double inter_ = (double)(c->moe_inter > c->intermediate ? c->moe_inter : c->intermediate);
    double mla_ = c->kv_lora ? (double)c->kv_lora * q_ * 2 + (double)c->q_lora * (hd_ + q_) +
                               hd_ * (double)(c->kv_lora + c->rope_dim) + (double)c->heads * (double)c->v_dim * hd_
                             : 0.0;
    double layer_ = 2 * hd_ * q_ + 2 * hd_ * kv_ +
                    (c->gated ? 3 : 2) * hd_ * inter_ *
                    (c->experts ? (double)(c->experts + c->shared_experts) : 1.0) +
                    2 * hd_ + mla_;
    double total_ = 2 * (double)c->vocab * hd_ + (double)c->layers * layer_ + hd_;
    if (!(total_ <= LLM_MAX_PARAMS))
        return diag_set(d, DIAG_E_RANGE, path, 1, "hidden_size",
                        "the sizes give %.3g parameters, more than %.0e: not a model strata can build", total_,
                        LLM_MAX_PARAMS);
    return 0;
}

/* A Mamba-2 hybrid (model_type nemotron_h): the layer pattern
 * (hybrid_override_pattern, one character a layer: 'M' a Mamba-2 mixer,
 * '*' attention, '-' an MLP) and the mixer's sizes.  Any other model's
 * layers are all attention and MLP (kind[] 0, the memset's). */
static int config_hybrid(const struct jsondoc *doc, const char *path, struct llm_config *c, struct diag *d)
{
    const cJSON *pat = field(doc, "hybrid_override_pattern");
    if (pat == NULL) {
        if (strcmp(c->name, "nemotron_h") == 0)
            return diag_set(d, DIAG_E_MISSING, path, 1, "hybrid_override_pattern",
                            "required for nemotron_h: which layers are Mamba-2 ('M'), attention ('*') "
                            "and MLP ('-')");
        return 0;
    }
    const char *p;
    if (jsondoc_get_string(doc, pat, "", "hybrid_override_pattern", LLM_MAX_LAYERS, &p, d))
        return -1;
    int line = jsondoc_line(doc, pat);
    if (strlen(p) != c->layers)
        return diag_set(d, DIAG_E_RANGE, path, line, "hybrid_override_pattern",
                        "%zu characters for num_hidden_layers %llu: one a layer", strlen(p),
                        (unsigned long long)c->layers);
    int mamba = 0;
    for (uint64_t l = 0; l < c->layers; l++) {
        if (p[l] == 'M')
            c->kind[l] = LLM_LAYER_MAMBA;
        else if (p[l] == '*')
            c->kind[l] = LLM_LAYER_ATTN;
        else if (p[l] == '-')
            c->kind[l] = LLM_LAYER_MLP;
        else
            return diag_set(d, DIAG_E_RANGE, path, line, "hybrid_override_pattern",
                            "'%c' at layer %llu: expected M (Mamba-2), * (attention) or - (MLP)", p[l],
                            (unsigned long long)l);
        mamba |= p[l] == 'M';
    }
    if (c->experts)
        return diag_set(d, DIAG_E_UNSUPPORTED, path, line, "hybrid_override_pattern",
                        "a Mamba-2 hybrid with experts (Nemotron 3): not modelled yet");
    const char *gkey = field(doc, "n_groups") != NULL ? "n_groups" : "mamba_num_groups";
    const cJSON *g = field(doc, gkey);
    if (mamba && (get_dim(doc, "mamba_num_heads", 1, 0, &c->ssm_heads, d) ||
                  get_dim(doc, "mamba_head_dim", 1, 0, &c->ssm_head_dim, d) ||
                  get_dim(doc, "ssm_state_size", 1, 0, &c->ssm_state, d) ||
                  get_dim(doc, "conv_kernel", 0, 4, &c->ssm_conv, d) ||
                  get_dim(doc, "chunk_size", 0, 128, &c->ssm_chunk, d)))
        return -1;
    c->ssm_groups = 1;
    if (mamba && g != NULL && jsondoc_get_uint(doc, g, "", gkey, 1, LLM_MAX_DIM, &c->ssm_groups, d))
        return -1;
    if (mamba && c->ssm_heads % c->ssm_groups != 0)
        return diag_set(d, DIAG_E_RANGE, path, jsondoc_line(doc, g), gkey,
                        "%llu does not divide mamba_num_heads %llu", (unsigned long long)c->ssm_groups,
                        (unsigned long long)c->ssm_heads);
    if (mamba && c->ssm_conv > 64)
        return diag_set(d, DIAG_E_RANGE, path, jsondoc_line(doc, field(doc, "conv_kernel")), "conv_kernel",
                        "at most 64, got %llu", (unsigned long long)c->ssm_conv);
    /* each size is at most 2^24: a mixer's state and weights bounded as
     * the decoder's are (config_params) */
    double di = (double)c->ssm_heads * c->ssm_head_dim, cd = di + 2.0 * c->ssm_groups * c->ssm_state;
    double mixer = (double)c->hidden * (di + cd + c->ssm_heads) + di * c->hidden + cd * c->ssm_conv;
    if (mamba && (!(di * c->ssm_state <= 1e12) || !((double)c->layers * mixer <= LLM_MAX_PARAMS)))
        return diag_set(d, DIAG_E_RANGE, path, jsondoc_line(doc, field(doc, "mamba_num_heads")),
                        "mamba_num_heads", "the mixer's sizes give a state of %.3g and %.3g parameters: "
                        "not a model strata can build", di * c->ssm_state, (double)c->layers * mixer);
    return 0;
}

/* The object under key (required) as a document of its own: the same
 * tree, so lines stay the file's. */
static int config_object(const struct jsondoc *doc, const char *path, const char *key, struct jsondoc *sub,
                         struct diag *d)
{
    cJSON *o = cJSON_GetObjectItemCaseSensitive(doc->root, key);
    if (o == NULL || cJSON_IsNull(o))
        return diag_set(d, DIAG_E_MISSING, path, 1, key, "required field is missing");
    if (!cJSON_IsObject(o))
        return diag_set(d, DIAG_E_TYPE, path, jsondoc_line(doc, o), key, "must be an object, got %s",
                        jsondoc_type_name(o));
    *sub = *doc;
    sub->root = o;
    return 0;
}

/* LLaVA (Hugging Face's LlavaConfig): the image tower from vision_config
 * (CLIP's vision model: a LayerNorm before the first layer, no classifier),
 * the layer its features come from (vision_feature_layer, -2: the
 * penultimate's output) and which of its tokens go on
 * (vision_feature_select_strategy: "default" drops the class token,
 * "full" keeps it).  The projector is two Linears with an activation
 * between (projector_hidden_act), tower width to the decoder's and the
 * decoder's to itself. */
static int config_llava(const struct jsondoc *doc, const char *path, struct llm_config *c, struct diag *d)
{
    struct jsondoc vis;
    struct llm_vit *v = &c->vit;
    if (c->encoder || c->experts || c->kv_lora || llm_hybrid(c))
        return diag_set(d, DIAG_E_UNSUPPORTED, path, 1, "text_config",
                        "a LLaVA's decoder is a dense decoder LLM (Llama, Mistral, Qwen ...), not '%s'",
                        c->name);
    if (config_object(doc, path, "vision_config", &vis, d))
        return -1;
    const cJSON *vm = field(&vis, "model_type");
    if (vm == NULL || !cJSON_IsString(vm) || strcmp(vm->valuestring, "clip_vision_model") != 0)
        return diag_set(d, DIAG_E_UNSUPPORTED, path, vm != NULL ? jsondoc_line(doc, vm) : 1,
                        "vision_config.model_type", "'%s': strata builds LLaVA's CLIP tower "
                        "(clip_vision_model) only", vm != NULL && cJSON_IsString(vm) ? vm->valuestring : "");
    if (config_tower(&vis, path, 1, v, d))
        return -1;
    const cJSON *pb = field(doc, "multimodal_projector_bias");
    if (pb != NULL && cJSON_IsFalse(pb))
        return diag_set(d, DIAG_E_UNSUPPORTED, path, jsondoc_line(doc, pb), "multimodal_projector_bias",
                        "false: strata counts the projector's biases");
    v->labels = 0;
    const cJSON *fl = field(doc, "vision_feature_layer");
    double layer = -2;  /* LlavaConfig's default */
    if (fl != NULL && !cJSON_IsNumber(fl))
        return diag_set(d, DIAG_E_TYPE, path, jsondoc_line(doc, fl), "vision_feature_layer",
                        "a layer number (negative: from the last), got %s", jsondoc_type_name(fl));
    if (fl != NULL)
        layer = fl->valuedouble;
    /* hidden_states[k]: the embeddings at 0, layer k's output at k */
    double k = layer < 0 ? (double)v->layers + 1 + layer : layer;
    if (layer != floor(layer) || k < 1 || k > (double)v->layers)
        return diag_set(d, DIAG_E_RANGE, path, fl != NULL ? jsondoc_line(doc, fl) : 1, "vision_feature_layer",
                        "%g is not one of the tower's %llu layers (1 to %llu, or -1 to -%llu)", layer,
                        (unsigned long long)v->layers, (unsigned long long)v->layers,
                        (unsigned long long)v->layers);
    v->feature_layers = (uint64_t)k;
    const cJSON *st = field(doc, "vision_feature_select_strategy");
    const char *strategy = "default";
    if (st != NULL && jsondoc_get_string(doc, st, "", "vision_feature_select_strategy", 15, &strategy, d))
        return -1;
    if (strcmp(strategy, "default") != 0 && strcmp(strategy, "full") != 0)
        return diag_set(d, DIAG_E_RANGE, path, jsondoc_line(doc, st), "vision_feature_select_strategy",
                        "'%s': default (the patches) or full (and the class token)", strategy);
    c->image_tokens = strcmp(strategy, "full") == 0 ? v->tokens : v->tokens - 1;
    if (config_act(doc, path, "projector_hidden_act", "gelu", &c->proj_act_flops, d))
        return -1;
    snprintf(c->name, sizeof c->name, "llava");
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
    /* a vision-language model: its decoder from text_config, its image
     * tower from vision_config (config_llava) */
    const cJSON *mt = field(&doc, "model_type");
    int llava = mt != NULL && cJSON_IsString(mt) && strcmp(mt->valuestring, "llava") == 0;
    struct jsondoc text = doc;
    if (llava && config_object(&doc, path, "text_config", &text, d))
        goto out;
    if (config_sizes(&text, path, c, d) || config_unmodelled(&text, path, d) ||
        config_experts(&text, path, c, d) || config_mla(&text, path, c, d) ||
        config_rest(&text, path, c, d) || config_hybrid(&text, path, c, d) ||
        config_params(path, c, d))
        goto out;
    if (llava && config_llava(&doc, path, c, d))
        goto out;
    rc = 0;
out:
    jsondoc_free(&doc);
    return rc;
}

int llm_layer_moe(const struct llm_config *c, uint64_t l)
{
    return c->experts > 0 && l < LLM_MAX_LAYERS && (c->moe_layer[l / 8] >> (l % 8) & 1u);
}

uint64_t llm_kv_elems(const struct llm_config *c, uint32_t tp)
{
    if (c->kv_lora)     /* the latent and the shared RoPE key, whole on every rank */
        return c->kv_lora + c->rope_dim;
    return 2 * llm_rank_kv_heads(c, tp) * c->head_dim;
}

uint64_t llm_rank_kv_heads(const struct llm_config *c, uint32_t tp)
{
    uint64_t t = tp > 1 ? tp : 1;
    return c->kv_heads >= t ? c->kv_heads / t : 1;
}

/* A layer's attention weights: q, k, v, o (and Qwen3's q/k norms), or
 * MLA's q (direct, or down, norm, up), the latent's down projection with
 * the RoPE key, its norm, its up projection to every head's k (non-RoPE
 * part) and v, and o. */
static uint64_t attn_params(const struct llm_config *c)
{
    uint64_t h = c->hidden;
    if (c->kv_lora) {
        uint64_t qk = c->heads * (c->nope_dim + c->rope_dim);
        uint64_t q = c->q_lora ? h * c->q_lora + c->q_lora + c->q_lora * qk : h * qk;
        return q + h * (c->kv_lora + c->rope_dim) + c->kv_lora +
               c->kv_lora * c->heads * (c->nope_dim + c->v_dim) + c->heads * c->v_dim * h;
    }
    uint64_t q = c->heads * c->head_dim, kv = c->kv_heads * c->head_dim;
    return h * q + 2 * h * kv + q * h + (c->qk_norm ? 2 * c->head_dim : 0);
}

/* A vision transformer's parameters, biases and norms included (timm's
 * and Hugging Face's counts): the patch projection, class token and
 * position table, each layer's q/k/v/o and MLP with their biases and two
 * LayerNorms, the final LayerNorm (CLIP's pre- and post-LayerNorms) and
 * the classifier. */
static uint64_t vit_params(const struct llm_vit *v)
{
    uint64_t h = v->hidden, i = v->inter;
    uint64_t layer = 4 * h * h + 4 * h + 2 * h * i + i + h + 4 * h;
    return v->channels * v->patch * v->patch * h + (v->pre_norm ? 0 : h) + h + v->tokens * h +
           v->layers * layer + (v->pre_norm ? 4 : 2) * h + v->labels * h + v->labels;
}

int llm_config_decoder(const struct llm_config *c, const char *verb, int hybrid_ok, struct diag *d)
{
    if (llm_hybrid(c) && !hybrid_ok)
        return diag_set(d, DIAG_E_UNSUPPORTED, c->path, 1, "hybrid_override_pattern",
                        "a Mamba-2 hybrid as %s is not modelled yet (a draft's state is not built; "
                        "strata serve, fit and plan take it as the model served)", verb);
    if (!c->encoder)
        return 0;
    return diag_set(d, DIAG_E_UNSUPPORTED, c->path, 1, "model_type",
                    "'%s' is a vision encoder: it has no tokens to decode, and %s is for decoder "
                    "LLMs (strata gen llm --phase prefill builds its forward)", c->name, verb);
}

int llm_hybrid(const struct llm_config *c)
{
    for (uint64_t l = 0; l < c->layers && l < LLM_MAX_LAYERS; l++)
        if (c->kind[l] != LLM_LAYER_FULL)
            return 1;
    return 0;
}

uint64_t llm_attn_layers(const struct llm_config *c)
{
    uint64_t n = 0;
    for (uint64_t l = 0; l < c->layers && l < LLM_MAX_LAYERS; l++)
        n += c->kind[l] == LLM_LAYER_FULL || c->kind[l] == LLM_LAYER_ATTN;
    return n;
}

/* A Mamba-2 mixer's widths: the inner (heads x head_dim) and the
 * convolution's channels (x, B and C). */
static uint64_t ssm_inner(const struct llm_config *c)
{
    return c->ssm_heads * c->ssm_head_dim;
}

static uint64_t ssm_conv_dim(const struct llm_config *c)
{
    return ssm_inner(c) + 2 * c->ssm_groups * c->ssm_state;
}

uint64_t llm_ssm_state_elems(const struct llm_config *c)
{
    return ssm_inner(c) * c->ssm_state;
}

uint64_t llm_ssm_conv_elems(const struct llm_config *c)
{
    return ssm_conv_dim(c) * (c->ssm_conv - 1);
}

/* One block of a hybrid: its norm and its mixer's weights (a Mamba-2
 * mixer's in_proj to z, x, B, C and dt, the convolution with its bias,
 * dt_bias, A_log and D, the gated norm, out_proj). */
static uint64_t hybrid_block_params(const struct llm_config *c, uint64_t l)
{
    uint64_t h = c->hidden, di = ssm_inner(c), cd = ssm_conv_dim(c);
    switch (c->kind[l]) {
    case LLM_LAYER_MAMBA:
        return h + h * (di + cd + c->ssm_heads) + cd * c->ssm_conv + cd + 3 * c->ssm_heads + di + di * h;
    case LLM_LAYER_ATTN:
        return h + attn_params(c);
    default:
        return h + (c->gated ? 3 : 2) * h * c->intermediate;
    }
}

uint64_t llm_param_count(const struct llm_config *c)
{
    if (c->encoder)
        return vit_params(&c->vit);
    uint64_t h = c->hidden, attn = attn_params(c), n = c->vocab * h + h;
    if (llm_hybrid(c)) {
        for (uint64_t l = 0; l < c->layers; l++)
            n += hybrid_block_params(c, l);
        return n + (c->tied ? 0 : c->vocab * h);
    }
    for (uint64_t l = 0; l < c->layers; l++) {
        /* (gate,) up, down; the experts' with the router and the shared experts' */
        uint64_t ffn = llm_layer_moe(c, l)
                           ? (c->experts + c->shared_experts) * 3 * h * c->moe_inter + h * c->experts
                           : (c->gated ? 3 : 2) * h * c->intermediate;
        n += attn + ffn + 2 * h;                    /* two RMSNorm weights */
    }
    if (!c->tied)
        n += c->vocab * h;
    if (c->vit.layers)  /* a VLM's tower and its projector (two Linears with biases) */
        n += vit_params(&c->vit) + c->vit.hidden * h + h + h * h + h;
    return n;
}
