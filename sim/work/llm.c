/* llm.c: see llm.h.  `strata gen llm` is here too. */
#include "llm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
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
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(doc.root, "model_type");
    const char *mname = "llm";
    if (mt != NULL && jsondoc_get_string(&doc, mt, "", "model_type", sizeof c->name - 1, &mname, d))
        goto out;   /* the name reaches report.json and the terminal */
    snprintf(c->name, sizeof c->name, "%s", mname);
    if (get_dim(&doc, "hidden_size", 1, 0, &c->hidden, d) ||
        get_dim(&doc, "intermediate_size", 1, 0, &c->intermediate, d) ||
        get_dim(&doc, "num_hidden_layers", 1, 0, &c->layers, d) ||
        get_dim(&doc, "num_attention_heads", 1, 0, &c->heads, d) ||
        get_dim(&doc, "vocab_size", 1, 0, &c->vocab, d) ||
        get_dim(&doc, "max_position_embeddings", 1, 0, &c->max_pos, d) ||
        get_dim(&doc, "num_key_value_heads", 0, c->heads, &c->kv_heads, d))
        goto out;
    /* the deepest published models have a few hundred layers; a million
     * wrote a 2 GB trace that strata run then refuses */
    if (c->layers > LLM_MAX_LAYERS) {
        diag_set(d, DIAG_E_RANGE, path,
                 jsondoc_line(&doc, cJSON_GetObjectItemCaseSensitive(doc.root, "num_hidden_layers")),
                 "num_hidden_layers", "must be at most %d, got %llu", LLM_MAX_LAYERS,
                 (unsigned long long)c->layers);
        goto out;
    }
    const cJSON *hd = cJSON_GetObjectItemCaseSensitive(doc.root, "head_dim");
    if (hd != NULL && !cJSON_IsNull(hd)) {
        if (jsondoc_get_uint(&doc, hd, "", "head_dim", 1, LLM_MAX_DIM, &c->head_dim, d))
            goto out;
    } else {
        if (c->hidden % c->heads != 0) {
            diag_set(d, DIAG_E_RANGE, path,
                     jsondoc_line(&doc, cJSON_GetObjectItemCaseSensitive(doc.root, "num_attention_heads")),
                     "num_attention_heads",
                     "hidden_size %llu is not divisible by num_attention_heads %llu",
                     (unsigned long long)c->hidden, (unsigned long long)c->heads);
            goto out;
        }
        c->head_dim = c->hidden / c->heads;
    }
    if (c->heads % c->kv_heads != 0) {
        diag_set(d, DIAG_E_RANGE, path,
                 jsondoc_line(&doc, cJSON_GetObjectItemCaseSensitive(doc.root, "num_key_value_heads")),
                 "num_key_value_heads", "%llu does not divide num_attention_heads %llu",
                 (unsigned long long)c->kv_heads, (unsigned long long)c->heads);
        goto out;
    }
    const cJSON *tie = cJSON_GetObjectItemCaseSensitive(doc.root, "tie_word_embeddings");
    if (tie != NULL && jsondoc_get_bool(&doc, tie, "", "tie_word_embeddings", &c->tied, d))
        goto out;
    /* each size is at most 2^24, but their products are not: llm_param_count
     * wrapped around 2^64 for head_dim x heads x hidden near the limits.
     * The same sum in double, against a bound a thousand times the largest
     * published dense models (~2e12), keeps every product below 2^63. */
    double hd_ = (double)c->hidden, q_ = (double)c->heads * (double)c->head_dim,
           kv_ = (double)c->kv_heads * (double)c->head_dim;
    double layer_ = 2 * hd_ * q_ + 2 * hd_ * kv_ + 3 * hd_ * (double)c->intermediate + 2 * hd_;
    double total_ = 2 * (double)c->vocab * hd_ + (double)c->layers * layer_ + hd_;
    if (!(total_ <= LLM_MAX_PARAMS)) {
        diag_set(d, DIAG_E_RANGE, path, 1, "hidden_size",
                 "the sizes give %.3g parameters, more than %.0e: not a model strata can build", total_,
                 LLM_MAX_PARAMS);
        goto out;
    }
    rc = 0;
out:
    jsondoc_free(&doc);
    return rc;
}

uint64_t llm_param_count(const struct llm_config *c)
{
    uint64_t h = c->hidden, q = c->heads * c->head_dim, kv = c->kv_heads * c->head_dim;
    uint64_t layer = h * q + 2 * h * kv + q * h      /* q, k, v, o */
                     + 3 * h * c->intermediate       /* gate, up, down */
                     + 2 * h;                        /* two RMSNorm weights */
    uint64_t n = c->vocab * h + c->layers * layer + h;
    if (!c->tied)
        n += c->vocab * h;
    return n;
}

struct builder {
    struct trace *t;
    uint32_t cap;
};

static struct op *add_op(struct builder *b, const char *id, enum op_kind kind, enum dtype dt)
{
    struct trace *t = b->t;
    SIM_CHECK(t->nops < b->cap);
    uint32_t i = t->nops++;
    struct op *o = &t->ops[i];
    memset(o, 0, sizeof *o);
    snprintf(o->id, sizeof o->id, "%s", id);
    snprintf(o->name, sizeof o->name, "%s", id);
    o->kind = kind;
    o->dtype = dt;
    o->measured_s = -1;
    o->fixed_s = -1;
    o->line = 0;
    /* every op waits for the one before: a single dependent chain */
    o->deps_off = t->ndeps;
    if (i > 0) {
        t->deps[t->ndeps++] = i - 1;
        o->ndeps = 1;
    }
    t->topo[i] = i;
    return o;
}

static struct op *add_gemm(struct builder *b, const char *id, enum dtype dt, uint64_t m, uint64_t n,
                           uint64_t k, enum wfmt w)
{
    struct op *o = add_op(b, id, OP_GEMM, dt);
    o->u.gemm.m = m;
    o->u.gemm.n = n;
    o->u.gemm.k = k;
    o->u.gemm.batch = 1;
    o->u.gemm.weights = w;
    return o;
}

/* llama.cpp's use_more_bits(): the layers Q4_K_M gives more bits */
static int more_bits(uint64_t i, uint64_t n)
{
    return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

static void add_ew(struct builder *b, const char *id, enum dtype dt, uint64_t el, uint32_t in,
                   uint32_t out, double fpe)
{
    struct op *o = add_op(b, id, OP_ELEMENTWISE, dt);
    o->u.ew.elements = el;
    o->u.ew.inputs = in;
    o->u.ew.outputs = out;
    o->u.ew.flops_per_element = fpe;
    o->u.ew.vector_bytes = 16;
}

static void add_rc(struct builder *b, const char *id, enum op_kind k, enum dtype dt,
                   uint64_t rows, uint64_t cols)
{
    struct op *o = add_op(b, id, k, dt);
    o->u.rc.rows = rows;
    o->u.rc.cols = cols;
}

int llm_build(const struct llm_config *c, const struct llm_step *s, struct trace *t,
              struct diag *d)
{
    memset(t, 0, sizeof *t);
    uint64_t T = s->phase == LLM_DECODE ? 1 : s->prompt;
    uint64_t kv_len = s->context + T;
    if (s->batch == 0 || T == 0)
        return diag_set(d, DIAG_E_RANGE, "", 0, "--batch/--prompt", "must be at least 1");
    if (kv_len > c->max_pos)
        return diag_set(d, DIAG_E_RANGE, c->path, 0, "max_position_embeddings",
                        "context %llu + new tokens %llu = %llu exceeds the model's %llu",
                        (unsigned long long)s->context, (unsigned long long)T,
                        (unsigned long long)kv_len, (unsigned long long)c->max_pos);
    uint64_t rows = s->batch * T, h = c->hidden, hd = c->head_dim;
    uint32_t per_layer = s->framework == LLM_FW_LLAMA_CPP ? 28 : 10;
    int train = s->phase == LLM_TRAIN;
    uint32_t cap = (uint32_t)(c->layers * per_layer + 4) * (train ? 2 : 1) + 1;
    t->ops = sim_xcalloc(cap, sizeof *t->ops);
    t->deps = sim_xcalloc(cap, sizeof *t->deps);
    t->topo = sim_xcalloc(cap, sizeof *t->topo);
    t->devices = sim_xcalloc(1, sizeof *t->devices);
    snprintf(t->devices[0], sizeof t->devices[0], "gpu0");
    t->ndevices = 1;
    t->tokens = (double)(s->phase == LLM_DECODE ? s->batch : s->batch * s->prompt);
    if (s->phase == LLM_TRAIN && s->context != 0)
        return diag_set(d, DIAG_E_RANGE, "", 0, "--context", "a training step has no KV cache");
    snprintf(t->path, sizeof t->path, "%s", c->path);
    struct builder b = {t, cap};
    enum dtype dt = s->dtype;
    char id[64];

    struct op *e = add_op(&b, "embed", OP_EMBEDDING, dt);
    e->u.emb.tokens = rows;
    e->u.emb.dim = h;
    for (uint64_t l = 0; l < c->layers; l++) {
#define ID(suffix) (snprintf(id, sizeof id, "L%llu.%s", (unsigned long long)l, suffix), id)
        enum wfmt w = s->q4_k_m ? WF_Q4_K : s->weights;
        enum wfmt wdown = s->q4_k_m && more_bits(l, c->layers) ? WF_Q6_K : w;
        uint64_t qd = c->heads * hd, kvd = c->kv_heads * hd;
        if (s->framework == LLM_FW_LLAMA_CPP) {
            /* ggml's graph as llama.cpp's Metal/CUDA backends ran it in
             * late 2023: one kernel per graph node */
            add_rc(&b, ID("attn_norm"), OP_NORM, dt, rows, h);
            add_ew(&b, ID("attn_norm_mul"), dt, rows * h, 2, 1, 1.0);
            add_gemm(&b, ID("q_proj"), dt, rows, qd, h, w);
            add_gemm(&b, ID("k_proj"), dt, rows, kvd, h, w);
            add_gemm(&b, ID("v_proj"), dt, rows, kvd, h, w);
            add_ew(&b, ID("rope_q"), dt, rows * qd, 1, 1, 3.0);
            add_ew(&b, ID("rope_k"), dt, rows * kvd, 1, 1, 3.0);
            add_ew(&b, ID("cpy_k"), dt, rows * kvd, 1, 1, 0.0);
            add_ew(&b, ID("cpy_v"), dt, rows * kvd, 1, 1, 0.0);
        } else {
            /* residual add folded into the norm, as fused kernels do */
            add_rc(&b, ID("attn_norm"), OP_NORM, dt, rows, h);
            add_gemm(&b, ID("qkv_proj"), dt, rows, qd + 2 * kvd, h, w);
            /* RoPE on q and k, with k and v written to the KV cache */
            add_ew(&b, ID("rope_kv"), dt, rows * (qd + 2 * kvd), 1, 1, 3.0);
        }
        struct op *a = add_op(&b, ID("attention"), OP_ATTENTION, dt);
        a->u.attn.batch = s->batch;
        a->u.attn.heads = c->heads;
        a->u.attn.kv_heads = c->kv_heads;
        a->u.attn.q_len = T;
        a->u.attn.kv_len = kv_len;
        a->u.attn.head_dim = hd;
        a->u.attn.causal = 1;
        a->u.attn.impl = s->attn;
        a->u.attn.kv_dtype = s->kv_dtype < DT_COUNT ? s->kv_dtype : dt;
        if (s->framework == LLM_FW_LLAMA_CPP)
            add_ew(&b, ID("attn_cont"), dt, rows * qd, 1, 1, 0.0); /* permute + cont */
        add_gemm(&b, ID("o_proj"), dt, rows, h, qd, w);
        if (s->framework == LLM_FW_LLAMA_CPP) {
            add_ew(&b, ID("residual1"), dt, rows * h, 2, 1, 1.0);
            add_rc(&b, ID("mlp_norm"), OP_NORM, dt, rows, h);
            add_ew(&b, ID("mlp_norm_mul"), dt, rows * h, 2, 1, 1.0);
        } else {
            add_rc(&b, ID("mlp_norm"), OP_NORM, dt, rows, h);
        }
        add_gemm(&b, ID("gate_proj"), dt, rows, c->intermediate, h, w);
        add_gemm(&b, ID("up_proj"), dt, rows, c->intermediate, h, w);
        if (s->framework == LLM_FW_LLAMA_CPP) {
            add_ew(&b, ID("silu"), dt, rows * c->intermediate, 1, 1, 5.0);
            add_ew(&b, ID("mul"), dt, rows * c->intermediate, 2, 1, 1.0);
        } else {
            add_ew(&b, ID("silu_mul"), dt, rows * c->intermediate, 2, 1, 6.0);
        }
        add_gemm(&b, ID("down_proj"), dt, rows, h, c->intermediate, wdown);
        if (s->framework == LLM_FW_LLAMA_CPP)
            add_ew(&b, ID("residual2"), dt, rows * h, 2, 1, 1.0);
#undef ID
    }
    /* inference samples the last token of each sequence; training takes
     * the loss (a softmax cross-entropy) over every token */
    uint64_t out_rows = train ? rows : s->batch;
    add_rc(&b, "final_norm", OP_NORM, dt, out_rows, h);
    add_gemm(&b, "lm_head", dt, out_rows, c->vocab, h, s->q4_k_m ? WF_Q6_K : s->weights);
    if (!train) {
        add_rc(&b, "sample", OP_REDUCTION, dt, s->batch, c->vocab);
        return 0;
    }
    add_rc(&b, "loss", OP_SOFTMAX, dt, rows, c->vocab);
    /* the backward: every op's, last first, on the same stream */
    uint32_t nfwd = t->nops;
    for (uint32_t j = nfwd; j-- > 0;) {
        char bid[TRACE_ID_MAX];
        snprintf(bid, sizeof bid, "%.*s.bwd", (int)sizeof bid - 5, t->ops[j].id);
        struct op src = t->ops[j];
        struct op *o = add_op(&b, bid, src.kind, src.dtype);
        o->u = src.u;
        o->pass = PASS_BWD;
    }
    /* AdamW on fp32 master weights: read the weight, its gradient and both
     * moments, write the three and the training-type copy of the weight */
    add_ew(&b, "adamw", DT_FP32, llm_param_count(c), 4, 4, 14.0);
    return 0;
}

int llm_framework_from_name(const char *name, enum llm_framework *out)
{
    if (strcmp(name, "fused") == 0)
        *out = LLM_FW_FUSED;
    else if (strcmp(name, "llama.cpp") == 0)
        *out = LLM_FW_LLAMA_CPP;
    else
        return -1;
    return 0;
}

int llm_weights_from_name(const char *name, struct llm_step *s)
{
    if (strcmp(name, "q4_k_m") == 0) {
        s->q4_k_m = 1;
        s->weights = WF_Q4_K;
        return 0;
    }
    s->q4_k_m = 0;
    return wfmt_from_name(name, &s->weights);
}
