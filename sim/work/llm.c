/* llm.c: see llm.h.  `strata gen llm` is here too. */
#include "llm.h"

#include <math.h>
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
    /* architectures strata does not model: refused by name, never built as
     * something else.  A field counts when it is there and not null,
     * false or 0. */
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
        const cJSON *u = cJSON_GetObjectItemCaseSensitive(doc.root, unmodelled[k].key);
        if (u == NULL || cJSON_IsNull(u) || cJSON_IsFalse(u) ||
            (cJSON_IsNumber(u) && u->valuedouble == 0) || (cJSON_IsArray(u) && u->child == NULL))
            continue;
        diag_set(d, DIAG_E_UNSUPPORTED, path, jsondoc_line(&doc, u), unmodelled[k].key,
                 "%s: not modelled yet, so strata will not simulate this model as a "
                 "different one", unmodelled[k].what);
        goto out;
    }
    const cJSON *ne = cJSON_GetObjectItemCaseSensitive(doc.root, "num_local_experts");
    if (ne != NULL && !cJSON_IsNull(ne)) {
        if (jsondoc_get_uint(&doc, ne, "", "num_local_experts", 1, 65536, &c->experts, d) ||
            get_dim(&doc, "num_experts_per_tok", 1, 0, &c->experts_per_tok, d))
            goto out;
        if (c->experts_per_tok > c->experts) {
            diag_set(d, DIAG_E_RANGE, path,
                     jsondoc_line(&doc, cJSON_GetObjectItemCaseSensitive(doc.root, "num_experts_per_tok")),
                     "num_experts_per_tok", "%llu is more than num_local_experts %llu",
                     (unsigned long long)c->experts_per_tok, (unsigned long long)c->experts);
            goto out;
        }
        if (c->experts == 1)
            c->experts = 0;     /* one expert is a dense MLP */
    }
    if (mlp_kind(&doc, c, d) != 0)
        goto out;
    if (c->experts && !c->gated) {
        diag_set(d, DIAG_E_UNSUPPORTED, path,
                 jsondoc_line(&doc, cJSON_GetObjectItemCaseSensitive(doc.root, "num_local_experts")),
                 "num_local_experts", "experts with a plain (non-gated) MLP: not modelled yet (strata "
                 "models Mixtral's gated experts)");
        goto out;
    }
    const cJSON *sw = cJSON_GetObjectItemCaseSensitive(doc.root, "sliding_window");
    const cJSON *usw = cJSON_GetObjectItemCaseSensitive(doc.root, "use_sliding_window");
    if (sw != NULL && !cJSON_IsNull(sw) && !(usw != NULL && cJSON_IsFalse(usw)) &&
        jsondoc_get_uint(&doc, sw, "", "sliding_window", 1, UINT64_C(1) << 40, &c->sliding_window, d))
        goto out;
    const cJSON *tie = cJSON_GetObjectItemCaseSensitive(doc.root, "tie_word_embeddings");
    if (tie != NULL && jsondoc_get_bool(&doc, tie, "", "tie_word_embeddings", &c->tied, d))
        goto out;
    /* each size is at most 2^24, but their products are not: llm_param_count
     * wrapped around 2^64 for head_dim x heads x hidden near the limits.
     * The same sum in double, against a bound a thousand times the largest
     * published dense models (~2e12), keeps every product below 2^63. */
    double hd_ = (double)c->hidden, q_ = (double)c->heads * (double)c->head_dim,
           kv_ = (double)c->kv_heads * (double)c->head_dim;
    double layer_ = 2 * hd_ * q_ + 2 * hd_ * kv_ +
                    (c->gated ? 3 : 2) * hd_ * (double)c->intermediate * (c->experts ? (double)c->experts : 1.0) +
                    2 * hd_;
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

struct builder {
    struct trace *t;
    uint32_t cap;
    uint32_t prev;              /* the op the next one waits for, UINT32_MAX = none */
    char prefix[40];            /* "r3." on rank 3 of a tensor-parallel step, "s1.mb7." in a pipeline step, else "" */
    uint32_t device;
    uint32_t tp_group, dp_group;/* this rank's groups (when tp > 1, dp > 1) */
    uint32_t dcap;              /* capacity of t->deps */
    uint32_t ep_group;          /* this rank's expert-parallel group (ep > 1) */
    uint32_t ep;                /* expert-parallel ranks (1: none) */
    uint32_t edp_group;         /* with --dp > --ep: the ranks holding this rank's experts
                                 * (expert data parallelism), else UINT32_MAX */
    uint32_t ep_tp;             /* EP over the TP group (--tp T --ep T): this rank holds
                                 * E/T whole experts, every token is on every rank */
    uint32_t also;              /* the next op waits for this one too (UINT32_MAX: none) */
    uint32_t dcn_group;         /* this rank's group across slices (dcn > 1), else UINT32_MAX */
    uint32_t cp;                /* context-parallel ranks (1: none) */
    uint32_t cp_rank;           /* this rank's place in its CP ring */
    uint32_t cp_next, cp_prev;  /* the devices it sends K, V to and receives them from */
    uint32_t mb;                /* the micro-batch being built (pipeline), else 0 */
    int scratch;                /* building a pipeline backward's scratch forward: no ring
                                 * sends recorded, no waits taken */
    struct cp_ring *ring;       /* with cp > 1: the ring's sends and waits */
    uint32_t dp_sim;            /* replicas given ops (data x context parallel) */
    uint32_t cp_comm;           /* LLM_CP_P2P, _A2A or _ALLGATHER */
    uint32_t cp_group;          /* this rank's CP group (cp > 1) */
    uint32_t cp_g0;             /* the first CP group */
    /* sequence parallelism's backward of column-parallel GEMMs (sp_bwd):
     * the input's all-gather under way (UINT32_MAX: none) and the weight
     * gradients waiting for it */
    uint32_t sp_ag;
    struct op sp_w[4];
    uint32_t sp_nw;
};

/* The context-parallel ring's cross-rank waits: every send op (keyed by
 * sender, layer, pass, micro-batch and ring step) and every deps slot that
 * waits for one, matched once all ranks are built (a sender may come after
 * its receiver).  Passes: 0 forward, 1 backward, 2 recomputed forward.
 * Both lists grow with the ops, not with the key space. */
struct cp_link {
    uint64_t key;
    uint32_t at;                /* a send: its op; a wait: its deps slot */
};
struct cp_ring {
    struct cp_link *send, *wait;
    size_t nsend, caps, nwait, capw;
    uint32_t layers, mbs, cp, tp, dp, dp_sim;
};

static void cp_push(struct cp_link **v, size_t *n, size_t *cap, uint64_t key, uint32_t at)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 4096;
        *v = sim_xrealloc(*v, *cap * sizeof **v);
    }
    (*v)[*n].key = key;
    (*v)[*n].at = at;
    (*n)++;
}

static int cp_link_cmp(const void *a, const void *b)
{
    uint64_t x = ((const struct cp_link *)a)->key, y = ((const struct cp_link *)b)->key;
    return x < y ? -1 : x > y;
}

static struct op *add_op(struct builder *b, const char *id, enum op_kind kind, enum dtype dt)
{
    struct trace *t = b->t;
    SIM_CHECK(t->nops < b->cap);
    uint32_t i = t->nops++;
    struct op *o = &t->ops[i];
    memset(o, 0, sizeof *o);
    snprintf(o->id, sizeof o->id, "%s%s", b->prefix, id);
    snprintf(o->name, sizeof o->name, "%s", o->id);
    o->kind = kind;
    o->dtype = dt;
    o->device = b->device;
    o->measured_s = -1;
    o->fixed_s = -1;
    o->line = 0;
    /* every op of a rank waits for the one before: one dependent chain */
    o->deps_off = t->ndeps;
    if (b->prev != UINT32_MAX) {
        SIM_CHECK(t->ndeps < b->dcap);
        t->deps[t->ndeps++] = b->prev;
        o->ndeps = 1;
    }
    if (b->also != UINT32_MAX) {
        SIM_CHECK(t->ndeps < b->dcap);
        t->deps[t->ndeps++] = b->also;
        o->ndeps++;
        b->also = UINT32_MAX;
    }
    b->prev = i;
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

/* Megatron's bias-dropout-add (one fused kernel): a block's output through
 * dropout, plus the residual; with it the residual add is no longer folded
 * into the next norm */
static void add_dropout_add(struct builder *b, const char *id, enum dtype dt, uint64_t el, double p)
{
    add_ew(b, id, dt, el, 2, 1, 2.0);
    b->t->ops[b->t->nops - 1].u.ew.dropout = p;
}

static void add_rc(struct builder *b, const char *id, enum op_kind k, enum dtype dt,
                   uint64_t rows, uint64_t cols)
{
    struct op *o = add_op(b, id, k, dt);
    o->u.rc.rows = rows;
    o->u.rc.cols = cols;
}

/* A collective on the compute stream over group, of `ranks` ranks (bytes:
 * nccl-tests' size, rounded up to a multiple of the ranks). */
static void add_coll(struct builder *b, const char *id, enum coll_kind what, enum dtype dt, uint64_t bytes,
                     uint32_t group, uint32_t ranks)
{
    struct op *o = add_op(b, id, OP_COLLECTIVE, dt);
    o->u.coll.what = what;
    o->u.coll.algo = COLL_AUTO;
    o->u.coll.bytes = (bytes + ranks - 1) / ranks * ranks;
    o->u.coll.group = group;
    o->u.coll.root = TRACE_NO_DEVICE;
}

/* The all-reduce of a row-parallel projection's output over the TP group. */
static void add_allreduce(struct builder *b, const char *id, enum dtype dt, uint64_t bytes)
{
    add_coll(b, id, COLL_ALL_REDUCE, dt, bytes, b->tp_group, 1);
}

/* Sequence parallelism's all-gather or reduce-scatter over the TP group
 * (bytes: the whole tensor). */
static void add_tp_coll(struct builder *b, const char *id, enum coll_kind what, enum dtype dt,
                        uint64_t bytes, uint32_t tp)
{
    add_coll(b, id, what, dt, bytes, b->tp_group, tp);
}

/* A collective over group (the data-parallel replicas, or the EP ranks)
 * on its own stream, after op `after` (UINT32_MAX: none); the compute
 * chain goes on without it.  all-gather and reduce-scatter sizes are
 * rounded up to the ranks. */
static uint32_t add_dp_coll(struct builder *b, const char *id, enum coll_kind what, enum dtype dt,
                            uint64_t bytes, uint32_t after, uint32_t group, uint32_t stream)
{
    uint32_t ranks = b->t->groups[group].n;
    uint32_t keep = b->prev, also = b->also;
    b->prev = after;
    b->also = UINT32_MAX;
    struct op *o = add_op(b, id, OP_COLLECTIVE, dt);
    o->stream = stream;
    o->u.coll.what = what;
    o->u.coll.algo = COLL_AUTO;
    if (bytes == 0)
        bytes = 1;
    if (what != COLL_ALL_REDUCE)
        bytes = (bytes + ranks - 1) / ranks * ranks;
    o->u.coll.bytes = bytes;
    o->u.coll.group = group;
    o->u.coll.root = TRACE_NO_DEVICE;
    uint32_t idx = b->prev;
    b->prev = keep;
    b->also = also;
    return idx;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* One rank's all-to-all over the expert-parallel group: bytes it sends in all. */
static void add_alltoall(struct builder *b, const char *id, enum dtype dt, uint64_t bytes)
{
    add_coll(b, id, COLL_ALL_TO_ALL, dt, bytes, b->ep_group, b->ep);
}

/* A Mixtral-style MoE block on `rows` tokens: router, top-k, the experts
 * the tokens reach under uniform routing as batched GEMMs. */
static void add_moe(struct builder *b, const struct llm_config *c, const struct llm_step *s,
                    uint64_t l, uint64_t rows, uint64_t inter, enum wfmt w, enum wfmt wdown,
                    uint32_t sp_tp)
{
    char id[64];
    enum dtype dt = s->dtype;
    /* with ep ranks: every rank's tokens (rows each) pick k of the E
     * experts; this rank holds E / ep of them and, under uniform routing,
     * receives rows x k token copies in all.  EP over the TP group (vLLM's
     * expert parallelism with tensor-parallel attention): every rank has
     * the same rows tokens and holds E / tp whole experts, which get
     * rows x k / tp of the copies; the MLP all-reduce sums them */
    /* with sequence parallelism (sp_tp = tp ranks, EP inside DP): rows is
     * this TP rank's 1/tp of the tokens; after the dispatch the experts'
     * TP ranks all-gather what each received (Megatron's alltoall
     * dispatcher), so an expert's copies come from ep x tp ranks, and a
     * reduce-scatter sums their TP halves before the combine */
    uint64_t g = sp_tp > 1 ? sp_tp : 1;
    uint64_t ep = b->ep_tp ? b->ep_tp : b->ep, local = c->experts / ep;
    uint64_t all_rows = b->ep_tp ? rows : rows * ep * g;
    double E = (double)c->experts, k = (double)c->experts_per_tok;
    double active = (double)local * (1.0 - pow(1.0 - k / E, (double)all_rows));
    uint64_t na = (uint64_t)ceil(active - 1e-9);
    if (na < 1)
        na = 1;
    if (na > local)
        na = local;
    /* skewed routing (--expert-load F): the busiest EP rank gets F times
     * the mean of the copies, and every rank is run as that one (the
     * all-to-alls wait for it): F times the expert rows and the bytes */
    double F = ep > 1 && s->expert_load > 1.0 ? s->expert_load : 1.0;
    double copies = (double)rows * k * (double)g * F / (b->ep_tp ? (double)b->ep_tp : 1.0);
    uint64_t per = (uint64_t)ceil(copies / (double)na);
    if (b->ep_tp)
        inter = c->intermediate;    /* whole experts */
    double eb = dtype_bytes(dt, 1.0);
    uint64_t a2a = (uint64_t)ceil((double)rows * k * F * (double)c->hidden * eb);
#define ID(suffix) (snprintf(id, sizeof id, "L%llu.%s", (unsigned long long)l, suffix), id)
    add_gemm(b, ID("router"), dt, rows, c->experts, c->hidden, WF_NONE);
    add_rc(b, ID("topk"), OP_REDUCTION, dt, rows, c->experts);
    if (ep > 1 && !b->ep_tp) {
        /* the tokens' copies to their experts' ranks (permuted into
         * per-rank order first) */
        add_ew(b, ID("dispatch_permute"), dt, rows * (uint64_t)k * c->hidden, 1, 1, 0.0);
        add_alltoall(b, ID("dispatch"), dt, a2a);
        if (g > 1)
            add_tp_coll(b, ID("dispatch_allgather"), COLL_ALL_GATHER, dt, a2a * g, (uint32_t)g);
    }
    struct op *o = add_gemm(b, ID("experts_gate_up"), dt, per, 2 * inter, c->hidden, w);
    o->u.gemm.batch = na;
    add_ew(b, ID("silu_mul"), dt, na * per * inter, 2, 1, 6.0);
    o = add_gemm(b, ID("experts_down"), dt, per, c->hidden, inter, wdown);
    o->u.gemm.batch = na;
    if (ep > 1 && !b->ep_tp) {   /* the results back to their tokens' ranks */
        if (g > 1)
            add_tp_coll(b, ID("combine_reduce_scatter"), COLL_REDUCE_SCATTER, dt, a2a * g, (uint32_t)g);
        add_alltoall(b, ID("combine_a2a"), dt, a2a);
    }
    add_ew(b, ID("combine"), dt, rows * c->hidden, (uint32_t)c->experts_per_tok + 1, 1,
           (double)c->experts_per_tok);
#undef ID
}

static void cp_attention(struct builder *b, const struct op *proto, const char *stem, const char *sfx,
                         uint64_t l, int pass);

/* Layer l's forward on rows tokens of batch sequences (a rank's share of
 * heads and MLP with tp ranks). */
static void emit_layer(struct builder *b, const struct llm_config *c, const struct llm_step *s,
                       uint64_t l, uint64_t rows, uint64_t batch, uint32_t tp)
{
    /* with context parallelism a rank holds 1/cp of each sequence */
    uint64_t T = s->phase == LLM_DECODE ? 1 : s->prompt / b->cp;
    uint64_t kv_len = s->context + T;
    uint64_t h = c->hidden, hd = c->head_dim;
    enum dtype dt = s->dtype;
    uint64_t heads = c->heads / tp, kvh = c->kv_heads >= tp ? c->kv_heads / tp : 1;
    uint64_t inter = c->intermediate / tp;
    double eb = dtype_bytes(dt, 1.0);
    int sp = s->sp && tp > 1 && s->phase == LLM_TRAIN;     /* sequence parallelism */
    char id[64];
#define ID(suffix) (snprintf(id, sizeof id, "L%llu.%s", (unsigned long long)l, suffix), id)
    enum wfmt w = s->q4_k_m ? WF_Q4_K : s->weights;
    enum wfmt wdown = s->q4_k_m && more_bits(l, c->layers) ? WF_Q6_K : w;
    uint64_t qd = heads * hd, kvd = kvh * hd;
    if (s->framework == LLM_FW_LLAMA_CPP) {
        /* ggml's graph as llama.cpp's Metal/CUDA backends ran it in
         * late 2023: one kernel per graph node */
        add_rc(b, ID("attn_norm"), OP_NORM, dt, rows, h);
        add_ew(b, ID("attn_norm_mul"), dt, rows * h, 2, 1, 1.0);
        add_gemm(b, ID("q_proj"), dt, rows, qd, h, w);
        add_gemm(b, ID("k_proj"), dt, rows, kvd, h, w);
        add_gemm(b, ID("v_proj"), dt, rows, kvd, h, w);
        add_ew(b, ID("rope_q"), dt, rows * qd, 1, 1, 3.0);
        add_ew(b, ID("rope_k"), dt, rows * kvd, 1, 1, 3.0);
        add_ew(b, ID("cpy_k"), dt, rows * kvd, 1, 1, 0.0);
        add_ew(b, ID("cpy_v"), dt, rows * kvd, 1, 1, 0.0);
    } else {
        /* residual add folded into the norm, as fused kernels do; with
         * sequence parallelism the norm runs on this rank's 1/tp of the
         * tokens and an all-gather brings them all for the projections */
        add_rc(b, ID("attn_norm"), OP_NORM, dt, sp ? rows / tp : rows, h);
        if (sp)
            add_tp_coll(b, ID("attn_allgather"), COLL_ALL_GATHER, dt, (uint64_t)(rows * h * eb), tp);
        add_gemm(b, ID("qkv_proj"), dt, rows, qd + 2 * kvd, h, w);
        /* RoPE on q and k, with k and v written to the KV cache */
        add_ew(b, ID("rope_kv"), dt, rows * (qd + 2 * kvd), 1, 1, 3.0);
    }
    struct op pa, *a = &pa;
    memset(a, 0, sizeof *a);
    a->kind = OP_ATTENTION;
    a->dtype = dt;
    a->u.attn.batch = batch;
    a->u.attn.heads = heads;
    a->u.attn.kv_heads = kvh;
    a->u.attn.q_len = T;
    a->u.attn.kv_len = kv_len;
    a->u.attn.head_dim = hd;
    a->u.attn.causal = 1;
    a->u.attn.impl = s->attn;
    a->u.attn.kv_dtype = s->kv_dtype < DT_COUNT ? s->kv_dtype : dt;
    a->u.attn.page_size = s->phase == LLM_TRAIN ? 0 : s->page_size;
    a->u.attn.dropout = s->dropout;
    if (b->cp > 1 && b->cp_comm == LLM_CP_P2P) {
        char stem[24];
        snprintf(stem, sizeof stem, "L%llu", (unsigned long long)l);
        cp_attention(b, &pa, stem, "", l, 0);
    } else if (b->cp > 1 && b->cp_comm == LLM_CP_A2A) {
        /* DeepSpeed-Ulysses: an all-to-all turns the rank's 1/cp of the
         * tokens with all its heads into all the tokens with 1/cp of the
         * heads (K/V heads repeated up to cp when fewer), attention runs on
         * the whole sequence, and a second all-to-all turns the output back */
        uint64_t C = b->cp, kvs = kvh >= C ? kvh : C;
        add_coll(b, ID("attn_a2a"), COLL_ALL_TO_ALL, dt, (uint64_t)((double)rows * (qd + 2 * kvs * hd) * eb),
                 b->cp_group, b->cp);
        struct op *o = add_op(b, ID("attention"), OP_ATTENTION, dt);
        o->u = pa.u;
        o->u.attn.heads = heads / C;
        o->u.attn.kv_heads = kvs / C;
        o->u.attn.q_len = o->u.attn.kv_len = T * C;
        add_coll(b, ID("attn_out_a2a"), COLL_ALL_TO_ALL, dt, (uint64_t)((double)rows * qd * eb), b->cp_group, b->cp);
    } else if (b->cp > 1) {
        /* all-gather (Llama 3's): every rank's K and V gathered, then each of
         * the rank's two chunks attends to the keys up to its own end
         * (causal, aligned to the end); the backward reduce-scatters dK, dV */
        uint64_t C = b->cp, half = T / 2, r = b->cp_rank;
        add_coll(b, ID("kv_allgather"), COLL_ALL_GATHER, dt, (uint64_t)((double)batch * T * C * 2 * kvh * hd * eb),
                 b->cp_group, b->cp);
        for (int k = 0; k < 2; k++) {
            struct op *o = add_op(b, k ? ID("attention.chunk1") : ID("attention"), OP_ATTENTION, dt);
            o->u = pa.u;
            o->u.attn.q_len = half;
            o->u.attn.kv_len = (k ? 2 * C - r : r + 1) * half;
        }
    } else {
        add_op(b, ID("attention"), OP_ATTENTION, dt)->u = pa.u;
    }
    if (s->framework == LLM_FW_LLAMA_CPP)
        add_ew(b, ID("attn_cont"), dt, rows * qd, 1, 1, 0.0); /* permute + cont */
    add_gemm(b, ID("o_proj"), dt, rows, h, qd, w);
    if (sp)     /* the partial sums reduced and scattered back over the tokens */
        add_tp_coll(b, ID("o_reduce_scatter"), COLL_REDUCE_SCATTER, dt, (uint64_t)(rows * h * eb), tp);
    else if (tp > 1)
        add_allreduce(b, ID("o_allreduce"), dt, (uint64_t)(rows * h * eb));
    if (s->dropout > 0)
        add_dropout_add(b, ID("attn_dropout_add"), dt, (sp ? rows / tp : rows) * h, s->dropout);
    if (s->framework == LLM_FW_LLAMA_CPP) {
        add_ew(b, ID("residual1"), dt, rows * h, 2, 1, 1.0);
        add_rc(b, ID("mlp_norm"), OP_NORM, dt, rows, h);
        add_ew(b, ID("mlp_norm_mul"), dt, rows * h, 2, 1, 1.0);
    } else {
        add_rc(b, ID("mlp_norm"), OP_NORM, dt, sp ? rows / tp : rows, h);
    }
    /* with SP, EP inside DP dispatches this rank's 1/tp of the tokens (its
     * own all-gather and reduce-scatter over TP); the dense MLP and EP
     * over the TP group gather all the tokens first */
    int sp_moe = sp && c->experts && b->ep > 1;
    if (sp && !sp_moe)
        add_tp_coll(b, ID("mlp_allgather"), COLL_ALL_GATHER, dt, (uint64_t)(rows * h * eb), tp);
    if (c->experts) {
        add_moe(b, c, s, l, sp_moe ? rows / tp : rows, inter, w, wdown, sp_moe ? tp : 1);
    } else if (c->gated) {
        add_gemm(b, ID("gate_proj"), dt, rows, inter, h, w);
        add_gemm(b, ID("up_proj"), dt, rows, inter, h, w);
        if (s->framework == LLM_FW_LLAMA_CPP) {
            add_ew(b, ID("silu"), dt, rows * inter, 1, 1, c->act_flops);
            add_ew(b, ID("mul"), dt, rows * inter, 2, 1, 1.0);
        } else {
            add_ew(b, ID("silu_mul"), dt, rows * inter, 2, 1, c->act_flops + 1.0);
        }
        add_gemm(b, ID("down_proj"), dt, rows, h, inter, wdown);
    } else {
        /* a plain MLP: up, the activation, down */
        add_gemm(b, ID("up_proj"), dt, rows, inter, h, w);
        add_ew(b, ID("act"), dt, rows * inter, 1, 1, c->act_flops);
        add_gemm(b, ID("down_proj"), dt, rows, h, inter, wdown);
    }
    if (sp && !sp_moe)
        add_tp_coll(b, ID("mlp_reduce_scatter"), COLL_REDUCE_SCATTER, dt, (uint64_t)(rows * h * eb), tp);
    else if (tp > 1 && !sp)
        add_allreduce(b, ID("mlp_allreduce"), dt, (uint64_t)(rows * h * eb));
    if (s->dropout > 0)
        add_dropout_add(b, ID("mlp_dropout_add"), dt, (sp ? rows / tp : rows) * h, s->dropout);
    if (s->framework == LLM_FW_LLAMA_CPP)
        add_ew(b, ID("residual2"), dt, rows * h, 2, 1, 1.0);
#undef ID
}

/* A rank's share of a layer's gradients once reduced in its slice: all
 * of its 1/tp, or 1/dp of it with ZeRO; with EP inside DP the dense part
 * so, and its experts' (1/ep of them) whole or 1/(dp/ep) with ZeRO.  The
 * bytes a --dcn all-reduce carries across the slices. */
static uint64_t dcn_share(const struct builder *b, uint64_t layer_bytes, double dense_layer,
                          double expert_layer, uint32_t tp, uint32_t dp, uint32_t zero, double eb)
{
    if (b->ep <= 1)
        return layer_bytes / (zero ? dp : 1);
    double edp = (double)dp / b->ep;
    return (uint64_t)(dense_layer / tp * eb / (zero ? dp : 1) +
                      expert_layer / b->ep / tp * eb / (zero ? edp : 1));
}

/* ZeRO-3: a layer's weights gathered before use, on stream 2 after the
 * gather before (`after`), the next compute op waiting for it; with EP
 * inside DP the dense weights over the replicas, then this rank's
 * experts over the replicas that hold them (`id` and "<id>.experts").
 * The last gather. */
static uint32_t zero3_gather(struct builder *b, const char *id, enum dtype dt, uint64_t layer_bytes,
                             double dense_layer, double expert_layer, uint32_t tp, uint32_t after)
{
    double eb = dtype_bytes(dt, 1.0);
    uint64_t bytes = b->ep > 1 ? (uint64_t)(dense_layer / tp * eb) : layer_bytes;
    uint32_t g = add_dp_coll(b, id, COLL_ALL_GATHER, dt, bytes, after, b->dp_group, 2);
    if (b->ep > 1 && b->edp_group != UINT32_MAX) {
        char xid[TRACE_ID_MAX];
        snprintf(xid, sizeof xid, "%.*s.experts", (int)sizeof xid - 9, id);
        g = add_dp_coll(b, xid, COLL_ALL_GATHER, dt, (uint64_t)(expert_layer / b->ep / tp * eb), g,
                        b->edp_group, 2);
    }
    b->also = g;
    return g;
}

/* Give op o (the last one added) one more wait whose op is filled in
 * later, recording where in *slot (slot NULL: none); right after its own
 * deps, so they stay contiguous. */
static void take_slot(struct builder *b, struct op *o, uint32_t *slot)
{
    struct trace *t = b->t;
    if (slot == NULL)
        return;
    SIM_CHECK(t->ndeps < b->dcap);
    if (o->ndeps == 0)
        o->deps_off = t->ndeps;
    *slot = t->ndeps;
    t->deps[t->ndeps++] = UINT32_MAX;
    o->ndeps++;
}

/* Where ring send (sender dev, layer l, pass, micro-batch m, step i) is
 * kept; dev must be simulated (a CP ring is simulated whole). */
static uint64_t cp_key(const struct cp_ring *r, uint32_t dev, uint64_t l, int pass, uint32_t m, uint32_t i)
{
    uint32_t st = dev / (r->dp * r->tp), dr = dev / r->tp % r->dp, tr = dev % r->tp;
    SIM_CHECK(dr < r->dp_sim && l < r->layers && m < r->mbs && i < r->cp);
    uint64_t six = ((uint64_t)st * r->dp_sim + dr) * r->tp + tr;
    return (((six * r->layers + l) * 3 + (uint64_t)pass) * r->mbs + m) * r->cp + i;
}

/* Op o (the last added) also waits for the previous rank's ring send i. */
static void cp_wait_for(struct builder *b, struct op *o, uint64_t l, int pass, uint32_t i)
{
    struct cp_ring *r = b->ring;
    if (b->scratch)
        return;
    uint32_t slot;
    take_slot(b, o, &slot);
    cp_push(&r->wait, &r->nwait, &r->capw, cp_key(r, b->cp_prev, l, pass, b->mb, i), slot);
}

/* Ring send i: bytes to the next rank on stream 3, after `after` and
 * `also` (UINT32_MAX: none) and, when recv, the previous rank's send
 * i - 1 (what it forwards); the compute chain goes on without it. */
static uint32_t cp_send(struct builder *b, const char *id, enum dtype dt, uint64_t bytes, uint32_t after,
                        uint32_t also, uint64_t l, int pass, uint32_t i, int recv)
{
    uint32_t keep = b->prev, keep_also = b->also;
    b->prev = after;
    b->also = also;
    struct op *o = add_op(b, id, OP_MEMCPY, dt);
    o->stream = 3;
    o->u.copy.bytes = bytes > 0 ? bytes : 1;
    o->u.copy.dir = MEMCPY_P2P;
    o->u.copy.peer = b->cp_next;
    o->u.copy.src = TRACE_NO_DEVICE;
    if (recv)
        cp_wait_for(b, o, l, pass, i - 1);
    uint32_t idx = b->t->nops - 1;
    if (!b->scratch)
        cp_push(&b->ring->send, &b->ring->nsend, &b->ring->caps,
                cp_key(b->ring, b->device, l, pass, b->mb, i), idx);
    b->prev = keep;
    b->also = keep_also;
    return idx;
}

/* The ring ops of a context-parallel attention: the other ops of the
 * ring, which cp_attention makes again for the backward and recompute. */
static int cp_aux(const struct builder *b, const char *base)
{
    return b->cp > 1 && b->cp_comm == LLM_CP_P2P && (strstr(base, ".kv_send.cp") != NULL || strstr(base, ".attention.cp") != NULL ||
           ends_with(base, ".attn_merge"));
}

/* Attention under context parallelism (llm.h): proto is the rank's own
 * block (its 1/cp of each sequence against itself, causal), stem the id
 * before ".attention" ("L3", "mb2.L3"), sfx "", ".bwd" or ".recompute",
 * pass 0 forward, 1 backward, 2 recomputed forward.  Step i works on the
 * K, V of ring rank r - i: of an earlier rank only its first chunk is
 * seen, by all the queries; of a later rank both chunks, by the second
 * chunk of queries only.  Forward: send i passes on the block step i
 * used (cp - 1 sends), then the partial outputs are merged by their
 * log-sum-exps.  Backward, in the forward's direction and order (TE runs
 * it the other way round, own block last: the same work and link bytes):
 * send i carries the K, V step i + 1 needs and the dK, dV step i - 1 added
 * to, and the rank's own dK, dV come home after the last step. */
static void cp_attention(struct builder *b, const struct op *proto, const char *stem, const char *sfx,
                         uint64_t l, int pass)
{
    uint32_t C = b->cp, r = b->cp_rank;
    const struct op p0 = *proto;     /* proto may point into the ops add_op grows */
    uint64_t Tl = p0.u.attn.q_len, half = Tl / 2;
    enum dtype dt = p0.dtype;
    double kb = dtype_bytes(p0.u.attn.kv_dtype < DT_COUNT ? p0.u.attn.kv_dtype : dt, 1.0);
    uint64_t kv_el = p0.u.attn.batch * Tl * 2 * p0.u.attn.kv_heads * p0.u.attn.head_dim;
    uint64_t kvb = (uint64_t)ceil((double)kv_el * kb);
    uint32_t before = b->prev, send = UINT32_MAX, step = UINT32_MAX;
    char id[TRACE_ID_MAX + 64];   /* stem (60) + ".attention.cpN" + sfx: add_op cuts to the id's size */
    for (uint32_t i = 0; i < C; i++) {
        if (pass == 1 || i + 1 < C) {
            uint64_t bytes = pass == 1 ? (i + 1 < C ? kvb : 0) + (i > 0 ? kvb : 0) : kvb;
            snprintf(id, sizeof id, "%.60s.kv_send.cp%u%.12s", stem, i, sfx);
            send = cp_send(b, id, dt, bytes, i == 0 ? before : send, pass == 1 && i > 0 ? step : UINT32_MAX,
                           l, pass, i, i > 0);
        }
        if (i == 0)
            snprintf(id, sizeof id, "%.60s.attention%.12s", stem, sfx);
        else
            snprintf(id, sizeof id, "%.60s.attention.cp%u%.12s", stem, i, sfx);
        struct op *a = add_op(b, id, OP_ATTENTION, dt);
        a->u = p0.u;
        a->pass = pass == 1 ? PASS_BWD : PASS_FWD;
        if (i > 0) {
            a->u.attn.causal = 0;
            if (i <= r)
                a->u.attn.kv_len = half;
            else
                a->u.attn.q_len = half;
            cp_wait_for(b, a, l, pass, i - 1);
        }
        step = b->t->nops - 1;
    }
    uint64_t q_el = p0.u.attn.batch * Tl * p0.u.attn.heads * p0.u.attn.head_dim;
    if (pass == 1) {
        snprintf(id, sizeof id, "%.60s.dkv_home%.12s", stem, sfx);
        add_ew(b, id, dt, kv_el, 1, 1, 0.0);
        cp_wait_for(b, &b->t->ops[b->t->nops - 1], l, 1, C - 1);
    } else {
        snprintf(id, sizeof id, "%.60s.attn_merge%.12s", stem, sfx);
        add_ew(b, id, dt, q_el * (C - 1), 2, 1, 4.0);
    }
}

/* The layer number of a stem "L3" or "mb2.L3". */
static uint64_t stem_layer(const char *stem)
{
    const char *p = strrchr(stem, '.');
    p = p != NULL ? p + 1 : stem;
    return p[0] == 'L' ? strtoull(p + 1, NULL, 10) : 0;
}

/* For a CP ring's first forward op (the rank's own block, "<stem>.attention"
 * with stem at most 60 characters): the ring again as pass, with sfx. */
static int cp_again(struct builder *b, const struct op *src, const char *base, const char *sfx, int pass)
{
    size_t n = strlen(base);
    if (b->cp <= 1 || b->cp_comm != LLM_CP_P2P || src->kind != OP_ATTENTION ||
        !ends_with(base, ".attention") || n - 10 > 60)
        return 0;
    char stem[64];
    snprintf(stem, sizeof stem, "%.*s", (int)(n - 10), base);
    cp_attention(b, src, stem, sfx, stem_layer(stem), pass);
    return 1;
}

/* Full recomputation: when the backward enters layer Ln (base, the op's
 * id past the rank prefix and, in a pipeline step (in_step), its "mbN.",
 * names a layer other than cur_layer), Ln's forward ops among ops[0..n)
 * again (".recompute", TP collectives included, DP traffic on other
 * streams not), from the layer's stored input.  With first set, the
 * first of them takes the deferred wait of slot (the gradients it needs). */
static void recompute_entering(struct builder *b, const char *base, int in_step, char cur_layer[16],
                               const struct op *ops, uint32_t n, uint32_t *slot, int *first)
{
    size_t skip = strlen(b->prefix);
    const char *key = in_step && strchr(base, '.') != NULL ? strchr(base, '.') + 1 : base;
    size_t ln = strcspn(key, ".");
    if (key[0] != 'L' || ln < 2 || ln >= 16 || key[ln] != '.' ||
        (strncmp(key, cur_layer, ln) == 0 && cur_layer[ln] == '\0'))
        return;
    snprintf(cur_layer, 16, "%.*s", (int)ln, key);
    for (uint32_t q = 0; q < n; q++) {
        struct op f = ops[q];
        const char *fb = f.id + skip;
        const char *fk = in_step && strchr(fb, '.') != NULL ? strchr(fb, '.') + 1 : fb;
        if (strncmp(fk, cur_layer, ln) != 0 || fk[ln] != '.')
            continue;
        if (f.kind == OP_COLLECTIVE && f.stream != 0)
            continue;   /* data-parallel traffic (ZeRO-3's gather): not recomputed */
        if (cp_aux(b, fb))
            continue;   /* made again with the ring's first op */
        if (cp_again(b, &f, fb, ".recompute", 2)) {
            if (first != NULL)
                *first = 0;
            continue;
        }
        char rid[TRACE_ID_MAX];
        snprintf(rid, sizeof rid, "%.*s.recompute", (int)sizeof rid - 11, fb);
        struct op *o = add_op(b, rid, f.kind, f.dtype);
        o->u = f.u;
        o->stream = f.stream;
        o->pass = PASS_FWD;
        if (o->kind == OP_GEMM)
            o->u.gemm.transient = 1;    /* the forward's weights again */
        if (first != NULL && *first)
            take_slot(b, o, slot);
        if (first != NULL)
            *first = 0;
    }
}

/* The backward op of forward op src (its id without the rank prefix:
 * base), added as "<base>.bwd", or NULL when it has none: a forward
 * all-reduce has none (the column-parallel projections' input gradients
 * are all-reduced instead), nor has a router's top-k (its gradient flows
 * through the gates); an all-to-all runs again (the combine's gradients
 * to the experts' ranks, the dispatch's back to the tokens'), and with
 * sequence parallelism a TP all-gather's gradient is a reduce-scatter and
 * the other way round. */
static struct op *bwd_op(struct builder *b, const struct op *src, const char *base, int sp)
{
    int a2a = src->kind == OP_COLLECTIVE && src->u.coll.what == COLL_ALL_TO_ALL;
    int spc = src->kind == OP_COLLECTIVE && src->stream == 0 &&
              ((sp && src->u.coll.group == b->tp_group) || (b->cp > 1 && src->u.coll.group == b->cp_group)) &&
              (src->u.coll.what == COLL_ALL_GATHER || src->u.coll.what == COLL_REDUCE_SCATTER);
    if ((src->kind == OP_COLLECTIVE && !a2a && !spc) || src->kind == OP_REDUCTION)
        return NULL;
    if (cp_aux(b, base))
        return NULL;    /* the ring's backward comes with its first op's */
    if (cp_again(b, src, base, ".bwd", 1))
        return &b->t->ops[b->t->nops - 1];
    char id[TRACE_ID_MAX];
    snprintf(id, sizeof id, "%.*s.bwd", (int)sizeof id - 5, base);
    struct op s0 = *src;    /* src may point into the ops that add_op grows */
    struct op *o = add_op(b, id, s0.kind, s0.dtype);
    o->u = s0.u;
    if (spc)
        o->u.coll.what = s0.u.coll.what == COLL_ALL_GATHER ? COLL_REDUCE_SCATTER : COLL_ALL_GATHER;
    else if (!a2a)
        o->pass = PASS_BWD;
    return o;
}

/* Megatron's column-parallel layers (QKV, gate/up, a router, the
 * vocab-parallel head): without sequence parallelism their input
 * gradients are all-reduced over the TP group. */
static int column_parallel(const char *base, int gated)
{
    return ends_with(base, ".qkv_proj") || ends_with(base, gated ? ".gate_proj" : ".up_proj") ||
           ends_with(base, ".router") || ends_with(base, ".lm_head") || strcmp(base, "lm_head") == 0;
}

/* With sequence parallelism, Megatron's backward of a column-parallel
 * linear (QKV, gate/up, the LM head), as tensor_parallel/layers.py's
 * LinearWithGradAccumulationAndAsyncCommunication and Transformer Engine's
 * LayerNormLinear run it: the forward kept only this rank's 1/tp of the
 * input, so the input is all-gathered again, asynchronously, while the
 * input-gradient GEMM (dgrad) runs; the input gradient is then
 * reduce-scattered, asynchronously, while the weight-gradient GEMM
 * (wgrad) runs on the gathered input.  The collectives go on stream 4;
 * what follows waits for the reduce-scatter.  Called for each op of a
 * backward walk (the forward's ops reversed): 1 when it has emitted that
 * op's backward (a dgrad now, its wgrad with the reduce-scatter, which
 * stands for the forward's all-gather), 0 to leave it to bwd_op. */
static int sp_bwd(struct builder *b, const struct op *src, const char *base, int sp)
{
    if (!sp)
        return 0;
    if (src->kind == OP_GEMM && src->pass == PASS_FWD && b->sp_nw < 4 &&
        (ends_with(base, ".qkv_proj") || ends_with(base, ".gate_proj") || ends_with(base, ".up_proj") ||
         ends_with(base, ".lm_head") || strcmp(base, "lm_head") == 0)) {
        struct op s0 = *src;    /* src may point into the ops add_op grows */
        char id[TRACE_ID_MAX];
        if (b->sp_ag == UINT32_MAX) {
            snprintf(id, sizeof id, "%.*s.input_allgather", (int)sizeof id - 17, base);
            b->sp_ag = add_dp_coll(b, id, COLL_ALL_GATHER, s0.dtype,
                                   (uint64_t)((double)s0.u.gemm.m * (double)s0.u.gemm.k *
                                              dtype_bytes(s0.dtype, 1.0)),
                                   b->prev, b->tp_group, 4);
        }
        snprintf(id, sizeof id, "%.*s.bwd", (int)sizeof id - 5, base);
        struct op *o = add_op(b, id, OP_GEMM, s0.dtype);
        o->u = s0.u;
        o->pass = PASS_DGRAD;
        b->sp_w[b->sp_nw] = s0;
        snprintf(b->sp_w[b->sp_nw].id, sizeof b->sp_w[0].id, "%.*s.wgrad", (int)sizeof id - 7, base);
        b->sp_nw++;
        return 1;
    }
    if (src->kind == OP_COLLECTIVE && src->stream == 0 && src->u.coll.group == b->tp_group &&
        src->u.coll.what == COLL_ALL_GATHER && b->sp_nw > 0) {
        struct op s0 = *src;
        char id[TRACE_ID_MAX];
        snprintf(id, sizeof id, "%.*s.bwd", (int)sizeof id - 5, base);
        uint32_t rs = add_dp_coll(b, id, COLL_REDUCE_SCATTER, s0.dtype, s0.u.coll.bytes, b->prev,
                                  b->tp_group, 4);
        for (uint32_t i = 0; i < b->sp_nw; i++) {
            if (i == 0)
                b->also = b->sp_ag;
            struct op *o = add_op(b, b->sp_w[i].id, OP_GEMM, b->sp_w[i].dtype);
            o->u = b->sp_w[i].u;
            o->pass = PASS_WGRAD;
        }
        b->sp_nw = 0;
        b->sp_ag = UINT32_MAX;
        b->also = rs;
        return 1;
    }
    return 0;
}

/* One rank's step (of tp ranks). */
static void build_rank(struct builder *b, const struct llm_config *c, const struct llm_step *s,
                       uint32_t tp, uint32_t dp)
{
    uint64_t T = s->phase == LLM_DECODE ? 1 : s->prompt / b->cp;
    uint64_t rows = s->batch * T, h = c->hidden;
    int train = s->phase == LLM_TRAIN;
    enum dtype dt = s->dtype;
    double eb = dtype_bytes(dt, 1.0);

    /* training with TP shards the vocabulary (Megatron's vocab-parallel
     * embedding, LM head and cross-entropy: each rank 1/tp of the rows of
     * the table, an all-reduce of the embedding's output, two of a number
     * per token for the loss); inference keeps them whole, as gpt-fast */
    int vpar = train && tp > 1;
    uint64_t vocab = vpar ? c->vocab / tp : c->vocab;
    struct op *e = add_op(b, "embed", OP_EMBEDDING, dt);
    e->u.emb.tokens = rows;
    e->u.emb.dim = h;
    int sp = s->sp && tp > 1 && train;     /* sequence parallelism */
    if (sp)         /* the vocab-parallel lookups summed and scattered over the tokens */
        add_tp_coll(b, "embed_reduce_scatter", COLL_REDUCE_SCATTER, dt, (uint64_t)(rows * h * eb), tp);
    else if (vpar)
        add_allreduce(b, "embed_allreduce", dt, (uint64_t)(rows * h * eb));
    /* ZeRO (train, dp > 1): stage 1 and 2 shard the optimizer state (and the
     * gradients) over the replicas, so gradients are reduce-scattered, each
     * replica updates its 1/dp and the updated weights are all-gathered;
     * stage 3 shards the weights too: each layer's are all-gathered before
     * its forward and again before its backward, on stream 1, prefetched
     * as far ahead as the links allow (DeepSpeed bounds the prefetch by
     * stage3_prefetch_bucket_size; not modelled) */
    uint32_t zero = train && dp > 1 ? s->zero : 0, gather = UINT32_MAX;
    double layer_params = (double)(llm_param_count(c) - 2 * c->vocab * h - h) / (double)c->layers;
    if (c->tied)
        layer_params = (double)(llm_param_count(c) - c->vocab * h - h) / (double)c->layers;
    uint64_t grad_layer = (uint64_t)(layer_params / tp * eb);
    /* a layer's expert weights (gate, up, down of each expert), and the rest */
    double expert_layer = (double)c->experts * 3.0 * (double)h * (double)c->intermediate;
    double dense_layer = layer_params - expert_layer;
    for (uint64_t l = 0; l < c->layers; l++) {
        if (zero >= 3) {
            char gid[64];
            snprintf(gid, sizeof gid, "L%llu.param_allgather", (unsigned long long)l);
            /* on stream 2: a gather need not wait behind the gradients
             * of the layer before (FSDP and XLA overlap the two) */
            gather = zero3_gather(b, gid, dt, grad_layer, dense_layer, expert_layer, tp, gather);
        }
        uint32_t first_op = b->t->nops;
        emit_layer(b, c, s, l, rows, s->batch, tp);
        for (uint32_t k = first_op; zero >= 3 && k < b->t->nops; k++)
            if (b->t->ops[k].kind == OP_GEMM &&
                !(b->ep > 1 && b->edp_group == UINT32_MAX && strstr(b->t->ops[k].id, ".experts_") != NULL))
                b->t->ops[k].u.gemm.transient = 1;  /* gathered for this use only (a rank's
                                                     * experts stay when no other replica
                                                     * holds them) */
    }
    /* inference samples the last token of each sequence; training takes
     * the loss (a softmax cross-entropy) over every token */
    uint64_t out_rows = train ? rows : s->batch;
    add_rc(b, "final_norm", OP_NORM, dt, sp ? out_rows / tp : out_rows, h);
    if (sp)
        add_tp_coll(b, "final_allgather", COLL_ALL_GATHER, dt, (uint64_t)(rows * h * eb), tp);
    add_gemm(b, "lm_head", dt, out_rows, vocab, h, s->q4_k_m ? WF_Q6_K : s->weights);
    if (!train) {
        add_rc(b, "sample", OP_REDUCTION, dt, s->batch, c->vocab);
        return;
    }
    add_rc(b, "loss", OP_SOFTMAX, dt, rows, vocab);
    if (vpar) {     /* the max and the sum of each token's logits over the ranks */
        add_allreduce(b, "loss_max_allreduce", DT_FP32, rows * 4);
        add_allreduce(b, "loss_sum_allreduce", DT_FP32, rows * 4);
    }
    /* the backward: every op's, last first, on the same stream; with TP the
     * forward's all-reduces have none, and the column-parallel projections'
     * input gradients are all-reduced instead; with DP each layer's
     * gradients are all-reduced on stream 1 once its backward is done */
    struct trace *t = b->t;
    uint32_t first = t->nops;
    while (first > 0 && t->ops[first - 1].device == b->device)
        first--;
    uint32_t nfwd = t->nops;
    uint32_t last_ar = UINT32_MAX;
    char cur_layer[16] = "", gather_layer[16] = "";
    for (uint32_t j = nfwd; j-- > first;) {
        struct op src = t->ops[j];
        /* the id without the rank prefix: add_op puts it back */
        const char *base = src.id + strlen(b->prefix);
        if (zero >= 3 && src.kind != OP_COLLECTIVE && base[0] == 'L') {
            /* entering a layer's backward: its weights gathered again */
            size_t ln = strcspn(base, ".");
            if (ln < sizeof gather_layer && (strncmp(base, gather_layer, ln) != 0 || gather_layer[ln] != '\0')) {
                snprintf(gather_layer, sizeof gather_layer, "%.*s", (int)ln, base);
                char gid[64];
                snprintf(gid, sizeof gid, "%s.param_allgather.bwd", gather_layer);
                gather = zero3_gather(b, gid, dt, grad_layer, dense_layer, expert_layer, tp, gather);
            }
        }
        if (s->recompute)
            recompute_entering(b, base, 0, cur_layer, &t->ops[first], nfwd - first, NULL, NULL);
        if (sp_bwd(b, &src, base, sp) || bwd_op(b, &src, base, sp) == NULL)
            continue;
        if (tp > 1 && !sp && column_parallel(base, c->gated)) {
            char aid[TRACE_ID_MAX];
            snprintf(aid, sizeof aid, "%.*s.grad_allreduce", (int)sizeof aid - 16, base);
            add_allreduce(b, aid, dt, (uint64_t)(rows * h * eb));
        }
        if (dp > 1 && ends_with(base, ".attn_norm")) {   /* a layer's backward is done */
            char lid[TRACE_ID_MAX];
            snprintf(lid, sizeof lid, "%.*s.dp_%s", (int)strcspn(base, "."), base,
                     zero ? "reduce_scatter" : "allreduce");
            /* with EP inside DP (Megatron's and DeepSpeed-MoE's layout):
             * the non-expert gradients over every replica, each expert's
             * over the replicas that hold it */
            uint64_t bytes = b->ep > 1 ? (uint64_t)(dense_layer / tp * eb) : grad_layer;
            last_ar = add_dp_coll(b, lid, zero ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, dt, bytes,
                                  b->prev, b->dp_group, 1);
            if (b->edp_group != UINT32_MAX) {
                snprintf(lid, sizeof lid, "%.*s.edp_%s", (int)strcspn(base, "."), base,
                         zero ? "reduce_scatter" : "allreduce");
                last_ar = add_dp_coll(b, lid, zero ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, dt,
                                      (uint64_t)(expert_layer / b->ep / tp * eb), last_ar,
                                      b->edp_group, 1);
            }
        }
        if (b->dcn_group != UINT32_MAX && ends_with(base, ".attn_norm")) {
            /* the slice's reduced gradients (this rank's share) over the slices */
            char lid[TRACE_ID_MAX];
            snprintf(lid, sizeof lid, "%.*s.dcn_allreduce", (int)strcspn(base, "."), base);
            last_ar = add_dp_coll(b, lid, COLL_ALL_REDUCE, dt,
                                  dcn_share(b, grad_layer, dense_layer, expert_layer, tp, dp, zero, eb),
                                  dp > 1 ? last_ar : b->prev, b->dcn_group, 1);
        }
    }
    uint64_t embed_bytes = (uint64_t)((double)vocab * h * (c->tied ? 1 : 2) * eb);
    if (dp > 1)   /* embedding and LM head */
        last_ar = add_dp_coll(b, zero ? "embed.dp_reduce_scatter" : "embed.dp_allreduce",
                              zero ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, dt, embed_bytes, b->prev,
                              b->dp_group, 1);
    if (b->dcn_group != UINT32_MAX)
        last_ar = add_dp_coll(b, "embed.dcn_allreduce", COLL_ALL_REDUCE, dt,
                              embed_bytes / (zero ? dp : 1), dp > 1 ? last_ar : b->prev,
                              b->dcn_group, 1);
    /* AdamW on fp32 master weights: read the weight, its gradient and both
     * moments, write the three and the training-type copy of the weight;
     * this rank's 1/tp of them (and 1/dp with ZeRO), after every gradient
     * is reduced */
    uint64_t shard = (uint64_t)tp * (zero ? dp : 1);
    /* with EP (inside DP), this rank's experts only, 1/ep of them; with
     * ZeRO the dense state sharded over the dp replicas and the experts'
     * over the dp/ep that hold them */
    double experts_all = expert_layer * (double)c->layers;
    double adam = (double)llm_param_count(c) / (double)shard;
    int ep_in_dp = b->ep > 1;
    uint32_t edp = ep_in_dp ? dp / b->ep : 1;
    if (ep_in_dp)
        adam = ((double)llm_param_count(c) - experts_all) / ((double)tp * (zero ? dp : 1)) +
               experts_all / b->ep / ((double)tp * (zero ? edp : 1));
    add_ew(b, "adamw", DT_FP32, (uint64_t)ceil(adam), 4, 4, 14.0);
    if (last_ar != UINT32_MAX) {
        struct op *o = &t->ops[t->nops - 1];
        SIM_CHECK(t->ndeps < b->dcap);
        t->deps[t->ndeps++] = last_ar;
        o->ndeps++;
    }
    if (zero == 1 || zero == 2) {
        /* the updated 16-bit weights back to every replica, before the
         * next step's forward (here, at the step's end) */
        double gathered = ep_in_dp ? (double)llm_param_count(c) - experts_all : (double)llm_param_count(c);
        uint32_t ag = add_dp_coll(b, "param_allgather", COLL_ALL_GATHER, dt,
                                  (uint64_t)(gathered / tp * eb), b->prev, b->dp_group, 1);
        if (ep_in_dp && b->edp_group != UINT32_MAX)     /* this rank's experts, from their replicas */
            ag = add_dp_coll(b, "expert_param_allgather", COLL_ALL_GATHER, dt,
                             (uint64_t)(experts_all / b->ep / tp * eb), ag, b->edp_group, 1);
        b->prev = ag;
    }
}

/* A rank's place in its context-parallel ring: replicas (data x context
 * parallel) r x cp .. r x cp + cp - 1 share one, CP after TP in Megatron's
 * rank order; base is the device of the stage's first rank. */
static void cp_place(struct builder *b, uint32_t dr, uint32_t tr, uint32_t base, uint32_t tp, uint32_t dp)
{
    uint32_t C = b->cp, cr = dr % C, r0 = dr - cr;
    b->cp_rank = cr;
    /* CP groups: per stage, block of C replicas and TP rank (llm_build) */
    b->cp_group = b->cp_g0 + (base / (dp * tp) * (dp / C) + dr / C) * tp + tr;
    b->cp_next = base + (r0 + (cr + 1) % C) * tp + tr;
    b->cp_prev = base + (r0 + (cr + C - 1) % C) * tp + tr;
}

/* Rank (stage st, replica dr, TP rank tr)'s EP and expert-data-parallel
 * groups, as llm_build lays them out after the TP and DP groups. */
static void ep_groups(struct builder *b, uint32_t tp, uint32_t dp, uint32_t pp, uint32_t st,
                      uint32_t dr, uint32_t tr)
{
    uint32_t ep = b->ep;
    b->ep_group = 0;
    b->edp_group = UINT32_MAX;
    if (ep <= 1)
        return;
    uint32_t g0 = (tp > 1 ? dp * pp : 0) + (dp > 1 ? tp * pp : 0), blocks = dp / ep;
    b->ep_group = g0 + (st * blocks + dr / ep) * tp + tr;
    if (dp > ep)
        b->edp_group = g0 + pp * blocks * tp + (st * ep + dr % ep) * tp + tr;
}

/* One pipeline step of a stage (its own device) for micro-batch m on one
 * of its model chunks, forward (bwd = 0) or backward: the ops of layers
 * [l0, l1), plus the embedding on the first chunk (`embed`) and the head
 * and loss on the last (`head`).  The backward is the forward's ops
 * reversed (".bwd"), as build_rank makes it.  The step's first op waits
 * for the stage's previous op and, with `slot`, for one more op filled in
 * later: the activations or gradients it receives (their sender may be
 * built after it). */
static void pp_step(struct builder *b, const struct llm_config *c, const struct llm_step *s,
                    int embed, int head, uint64_t l0, uint64_t l1, uint32_t m,
                    uint64_t rows, uint64_t batch, int bwd, uint32_t *slot,
                    uint32_t tp, uint32_t dp, int last, uint32_t *last_ar)
{
    struct trace *t = b->t;
    enum dtype dt = s->dtype;
    /* the forward, emitted into a scratch builder region when bwd: the
     * ops are made, then copied reversed as the backward and dropped */
    uint32_t f0 = t->nops;
    struct builder fb = *b;
    fb.prev = UINT32_MAX;
    fb.mb = m;
    fb.scratch = bwd;   /* a backward's scratch forward: ring sends not recorded */
    b->mb = m;
    snprintf(fb.prefix, sizeof fb.prefix, "%.24smb%u.", b->prefix, m);
    /* with TP, build_rank's vocab-parallel embedding, head and loss */
    double eb = dtype_bytes(dt, 1.0);
    uint64_t vocab = tp > 1 ? c->vocab / tp : c->vocab, act = (uint64_t)((double)rows * c->hidden * eb);
    int sp = s->sp && tp > 1;     /* sequence parallelism, as build_rank */
    if (embed) {
        struct op *e = add_op(&fb, "embed", OP_EMBEDDING, dt);
        e->u.emb.tokens = rows;
        e->u.emb.dim = c->hidden;
        if (sp)
            add_tp_coll(&fb, "embed_reduce_scatter", COLL_REDUCE_SCATTER, dt, act, tp);
        else if (tp > 1)
            add_allreduce(&fb, "embed_allreduce", dt, act);
    }
    for (uint64_t l = l0; l < l1; l++)
        emit_layer(&fb, c, s, l, rows, batch, tp);
    if (head) {
        add_rc(&fb, "final_norm", OP_NORM, dt, sp ? rows / tp : rows, c->hidden);
        if (sp)
            add_tp_coll(&fb, "final_allgather", COLL_ALL_GATHER, dt, act, tp);
        add_gemm(&fb, "lm_head", dt, rows, vocab, c->hidden, s->weights);
        add_rc(&fb, "loss", OP_SOFTMAX, dt, rows, vocab);
        if (tp > 1) {
            add_allreduce(&fb, "loss_max_allreduce", DT_FP32, rows * 4);
            add_allreduce(&fb, "loss_sum_allreduce", DT_FP32, rows * 4);
        }
    }
    uint32_t f1 = t->nops;
    /* every micro-batch's forward uses the same weights: the first holds
     * them, the others' GEMMs are marked as another op's (trace.h), so
     * the working set counts a stage's weights once */
    for (uint32_t k = f0; m > 0 && !bwd && k < f1; k++)
        if (t->ops[k].kind == OP_GEMM)
            t->ops[k].u.gemm.transient = 1;
    if (!bwd) {
        /* the forward's first op waits for the stage's previous op and the
         * activations it receives (its own deps, at the end) */
        struct op *o = &t->ops[f0];
        SIM_CHECK(o->ndeps == 0 && t->ndeps + 2 <= b->dcap);
        o->deps_off = t->ndeps;
        if (b->prev != UINT32_MAX)
            t->deps[t->ndeps++] = b->prev, o->ndeps++;
        if (slot != NULL) {
            *slot = t->ndeps;
            t->deps[t->ndeps++] = UINT32_MAX;
            o->ndeps++;
        }
        b->prev = f1 - 1;
        return;
    }
    /* backward: the forward's ops reversed; the scratch forward is dropped */
    struct op *fwd = sim_xcalloc(f1 - f0, sizeof *fwd);
    memcpy(fwd, &t->ops[f0], (size_t)(f1 - f0) * sizeof *fwd);
    uint32_t ndeps0 = t->ndeps;
    for (uint32_t k = f0; k < f1; k++)
        ndeps0 -= t->ops[k].ndeps;
    t->nops = f0;
    t->ndeps = ndeps0;
    /* a layer's gradients over the data-parallel replicas, once all its
     * micro-batches are in: after its backward in the last micro-batch */
    double lp = (double)(llm_param_count(c) - c->vocab * c->hidden * (c->tied ? 1 : 2) - c->hidden) /
                (double)c->layers;
    /* with EP inside DP: the non-expert gradients over the replicas, each
     * expert's over the replicas that hold it (build_rank's rule) */
    double expert_layer = (double)c->experts * 3.0 * (double)c->hidden * (double)c->intermediate;
    uint64_t grad_layer = (uint64_t)((b->ep > 1 ? lp - expert_layer : lp) / tp * eb);
    int first = 1;
    char cur_layer[16] = "";
    for (uint32_t k = f1 - f0; k-- > 0;) {
        const char *base = fwd[k].id + strlen(b->prefix);
        if (s->recompute)
            recompute_entering(b, base, 1, cur_layer, fwd, f1 - f0, slot, &first);
        struct op *o = sp_bwd(b, &fwd[k], base, sp) ? &t->ops[t->nops - 1] : bwd_op(b, &fwd[k], base, sp);
        if (o == NULL)
            continue;
        if (first)
            take_slot(b, o, slot);
        first = 0;
        if (tp > 1 && !sp && column_parallel(base, c->gated)) {
            char aid[TRACE_ID_MAX];
            snprintf(aid, sizeof aid, "%.*s.grad_allreduce", (int)sizeof aid - 16, base);
            add_allreduce(b, aid, dt, act);
        }
        if ((dp > 1 || b->dcn_group != UINT32_MAX) && last && ends_with(base, ".attn_norm")) {
            /* ZeRO 1/2 (Megatron's distributed optimizer): reduce-scattered */
            const char *layer = strchr(base, '.') + 1;          /* past "mbN." */
            char lid[TRACE_ID_MAX];
            uint32_t zero = dp > 1 ? s->zero : 0;
            if (dp > 1) {
                snprintf(lid, sizeof lid, "%.*s.%s", (int)strcspn(layer, "."), layer,
                         zero ? "dp_reduce_scatter" : "dp_allreduce");
                *last_ar = add_dp_coll(b, lid, zero ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, dt,
                                       grad_layer, b->prev, b->dp_group, 1);
            }
            if (b->edp_group != UINT32_MAX) {
                snprintf(lid, sizeof lid, "%.*s.%s", (int)strcspn(layer, "."), layer,
                         zero ? "edp_reduce_scatter" : "edp_allreduce");
                *last_ar = add_dp_coll(b, lid, zero ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, dt,
                                       (uint64_t)(expert_layer / b->ep / tp * eb), *last_ar,
                                       b->edp_group, 1);
            }
            if (b->dcn_group != UINT32_MAX) {   /* then over the slices, as build_rank */
                snprintf(lid, sizeof lid, "%.*s.dcn_allreduce", (int)strcspn(layer, "."), layer);
                *last_ar = add_dp_coll(b, lid, COLL_ALL_REDUCE, dt,
                                       dcn_share(b, (uint64_t)(lp / tp * eb), lp - expert_layer,
                                                 expert_layer, tp, dp, zero, eb),
                                       dp > 1 ? *last_ar : b->prev, b->dcn_group, 1);
            }
        }
    }
    free(fwd);
}

/* Pipeline parallelism, Megatron's 1F1B schedules: the layers split over
 * pp stages (one device each) and, interleaved, over vpp model chunks per
 * stage (chunk v of stage st holds the (v pp + st)-th share of the
 * layers; earlier shares take the remainder), the batch into mb
 * micro-batches.  Non-interleaved (vpp 1), stage st runs min(pp - st - 1,
 * mb) forwards, then a forward and a backward in turn, then the remaining
 * backwards.  Interleaved (Megatron's forward_backward_pipelining_with_
 * interleaving), the mb x vpp chunk-steps go in groups of pp micro-batches
 * per chunk, chunk 0 first forward and last first backward, with 2 (pp -
 * st - 1) + (vpp - 1) pp warm-up forwards.  A micro-batch's activations go
 * to the next stage (from the last stage, to the first stage's next
 * chunk), and its gradients back, as p2p copies (docs/systems.md) that the
 * consumer waits for.  Each stage ends with AdamW over its own layers. */
static void build_pp(struct builder *b, const struct llm_config *c, const struct llm_step *s,
                     uint32_t pp, uint32_t mb, uint32_t tp, uint32_t dp)
{
    struct trace *t = b->t;
    uint64_t T = s->prompt / b->cp, batch = s->batch / mb, rows = batch * T;
    double eb = dtype_bytes(s->dtype, 1.0);
    uint32_t vpp = s->vpp > 1 ? s->vpp : 1, nchunk = pp * vpp;
    /* each TP rank sends the whole activation to its peer of the next
     * stage (Megatron without its scatter-gather optimisation) */
    uint64_t act_bytes = (uint64_t)((double)rows * (double)c->hidden * eb);
    if (s->sp && tp > 1)
        act_bytes /= tp;    /* sequence parallel: each TP rank sends its 1/tp of the tokens */
    uint32_t ndev = pp * dp * tp, ntpg = tp > 1 ? dp * pp : 0;
    /* replicas past dp_sim: mirrors with no ops (symmetric ranks) */
    uint32_t dp_sim = b->dp_sim;
    /* per simulated device, chunk and micro-batch: the forward's send, the
     * backward's send, and the deps slots of the forward's and the
     * backward's first ops (filled once every sender exists) */
    size_t nslot = (size_t)pp * dp_sim * tp * vpp * mb;
    uint32_t *fsend = sim_xcalloc(nslot, sizeof *fsend), *bsend = sim_xcalloc(nslot, sizeof *bsend);
    uint32_t *fslot = sim_xcalloc(nslot, sizeof *fslot), *bslot = sim_xcalloc(nslot, sizeof *bslot);
    /* devices: tensor-parallel ranks fastest, then replicas, then stages
     * (Megatron's order: a TP group inside a node); PP_IX numbers the
     * simulated ones the same way */
#define PP_DEV(st, dr, tr) (((st) * dp + (dr)) * tp + (tr))
#define PP_IX(st, dr, tr, v, m) (((((size_t)(st) * dp_sim + (dr)) * tp + (tr)) * vpp + (v)) * mb + (m))
    t->symmetric = dp_sim < dp || s->dcn > 1;   /* the other replicas and slices mirror these */
    uint64_t per = c->layers / nchunk, extra = c->layers % nchunk;
    /* with --dcn (slices of these ndev devices) the groups end with one
     * across the slices per device of the first */
    uint32_t dev_slice = ndev;
    for (uint32_t dr = 0; dr < dp_sim; dr++)
        for (uint32_t st = 0; st < pp; st++)
            for (uint32_t tr = 0; tr < tp; tr++) {
                uint32_t dev = PP_DEV(st, dr, tr);
                b->device = dev;
                b->prev = UINT32_MAX;
                b->tp_group = tp > 1 ? st * dp + dr : 0;
                b->dp_group = dp > 1 ? ntpg + st * tp + tr : 0;
                ep_groups(b, tp, dp, pp, st, dr, tr);
                b->dcn_group = s->dcn > 1 ? t->ngroups - dev_slice + dev : UINT32_MAX;
                cp_place(b, dr, tr, PP_DEV(st, 0, 0), tp, dp);
                if (tp * dp > 1)
                    snprintf(b->prefix, sizeof b->prefix, "r%u.s%u.", dev, st);
                else
                    snprintf(b->prefix, sizeof b->prefix, "s%u.", st);
                uint64_t nl = 0;    /* the stage's layers, over its chunks */
                for (uint32_t v = 0; v < vpp; v++)
                    nl += per + (v * pp + st < extra ? 1 : 0);
                uint32_t total = mb * vpp, warm;
                if (vpp == 1)
                    warm = pp - st - 1 < mb ? pp - st - 1 : mb;
                else
                    warm = mb == pp ? total : (pp - st - 1) * 2 + (vpp - 1) * pp;
                if (warm > total)
                    warm = total;
                uint32_t nf = 0, nb = 0, last_ar = UINT32_MAX;
                while (nb < total) {
                    int do_fwd = nf < total && (nf < warm || nf <= nb + warm);
                    uint32_t k = do_fwd ? nf : nb;
                    /* chunk-step k: micro-batch and chunk (groups of pp
                     * micro-batches per chunk; backward, last chunk first) */
                    uint32_t v = k % (pp * vpp) / pp;
                    if (!do_fwd)
                        v = vpp - 1 - v;
                    uint32_t m = vpp == 1 ? k : k / (pp * vpp) * pp + k % pp;
                    uint32_t ci = v * pp + st;
                    uint64_t l0 = ci * per + (ci < extra ? ci : extra), l1 = l0 + per + (ci < extra ? 1 : 0);
                    int first = ci == 0, lastc = ci == nchunk - 1;
                    pp_step(b, c, s, first, lastc, l0, l1, m, rows, batch, !do_fwd,
                            do_fwd ? (first ? NULL : &fslot[PP_IX(st, dr, tr, v, m)])
                                   : (lastc ? NULL : &bslot[PP_IX(st, dr, tr, v, m)]),
                            tp, dp, !do_fwd && m == mb - 1, &last_ar);
                    char id[40];
                    if (do_fwd && !lastc) {
                        if (vpp > 1)
                            snprintf(id, sizeof id, "mb%u.c%u.act_send", m, v);
                        else
                            snprintf(id, sizeof id, "mb%u.act_send", m);
                        struct op *cp = add_op(b, id, OP_MEMCPY, s->dtype);
                        cp->u.copy.bytes = act_bytes;
                        cp->u.copy.dir = MEMCPY_P2P;
                        cp->u.copy.peer = PP_DEV((st + 1) % pp, dr, tr);
                        cp->u.copy.src = TRACE_NO_DEVICE;
                        fsend[PP_IX(st, dr, tr, v, m)] = t->nops - 1;
                    }
                    if (!do_fwd && !first) {
                        if (vpp > 1)
                            snprintf(id, sizeof id, "mb%u.c%u.grad_send", m, v);
                        else
                            snprintf(id, sizeof id, "mb%u.grad_send", m);
                        struct op *cp = add_op(b, id, OP_MEMCPY, s->dtype);
                        cp->u.copy.bytes = act_bytes;
                        cp->u.copy.dir = MEMCPY_P2P;
                        cp->u.copy.peer = PP_DEV((st + pp - 1) % pp, dr, tr);
                        cp->u.copy.src = TRACE_NO_DEVICE;
                        bsend[PP_IX(st, dr, tr, v, m)] = t->nops - 1;
                    }
                    if (do_fwd)
                        nf++;
                    else
                        nb++;
                }
                /* the embedding's and the head's gradients over the
                 * replicas, on the stages that hold them */
                double vh = (double)c->vocab * c->hidden / tp;
                uint32_t zero = dp > 1 ? s->zero : 0;
                uint64_t vb = (uint64_t)(vh * ((st == 0) + (st == pp - 1 && !c->tied)) * eb);
                if (dp > 1 && (st == 0 || st == pp - 1))
                    last_ar = add_dp_coll(b, zero ? "embed.dp_reduce_scatter" : "embed.dp_allreduce",
                                          zero ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, s->dtype, vb,
                                          b->prev, b->dp_group, 1);
                if (b->dcn_group != UINT32_MAX && (st == 0 || st == pp - 1))
                    last_ar = add_dp_coll(b, "embed.dcn_allreduce", COLL_ALL_REDUCE, s->dtype,
                                          vb / (zero ? dp : 1), dp > 1 ? last_ar : b->prev,
                                          b->dcn_group, 1);
                /* AdamW over this rank's share of the stage's parameters
                 * (1/dp of them with ZeRO), after the last gradient
                 * all-reduce or reduce-scatter */
                double lp = (double)(llm_param_count(c) - c->vocab * c->hidden * (c->tied ? 1 : 2) -
                                     c->hidden) / (double)c->layers;
                /* with EP: the stage's dense parameters over the dp
                 * replicas, its experts' (1/ep of them) over the dp/ep
                 * that hold them */
                double xl = b->ep > 1 ? (double)c->experts * 3.0 * (double)c->hidden *
                                            (double)c->intermediate * (double)nl / tp : 0.0;
                /* the head on the last stage: a copy of a tied embedding
                 * there (Megatron's), none when the one stage holds both */
                double params = (lp * (double)nl) / tp - xl + (st == 0 ? vh : 0) +
                                (st == pp - 1 && !(c->tied && pp == 1) ? vh : 0);
                double xrank = b->ep > 1 ? xl / b->ep : 0.0, edp = b->ep > 1 ? (double)dp / b->ep : 1.0;
                add_ew(b, "adamw", DT_FP32,
                       (uint64_t)ceil(params / (zero ? dp : 1) + xrank / (zero ? edp : 1)), 4, 4, 14.0);
                if (last_ar != UINT32_MAX) {
                    struct op *o = &t->ops[t->nops - 1];
                    SIM_CHECK(t->ndeps < b->dcap);
                    t->deps[t->ndeps++] = last_ar;
                    o->ndeps++;
                }
                /* ZeRO 1/2: the stage's updated 16-bit weights back to
                 * every replica, at the step's end */
                if (zero)
                    b->prev = add_dp_coll(b, "param_allgather", COLL_ALL_GATHER, s->dtype,
                                          (uint64_t)(params * eb), b->prev, b->dp_group, 1);
                if (zero && b->edp_group != UINT32_MAX)
                    b->prev = add_dp_coll(b, "expert_param_allgather", COLL_ALL_GATHER, s->dtype,
                                          (uint64_t)(xrank * eb), b->prev, b->edp_group, 1);
            }
    /* each receiver's wait: the forward of chunk v on stage st gets its
     * activations from stage st - 1's chunk v (stage 0: the last stage's
     * chunk v - 1), its backward its gradients from stage st + 1's (the
     * last stage: the first stage's chunk v + 1) */
    for (uint32_t st = 0; st < pp; st++)
        for (uint32_t dr = 0; dr < dp_sim; dr++)
            for (uint32_t tr = 0; tr < tp; tr++) {
                uint32_t prev = (st + pp - 1) % pp, next = (st + 1) % pp;
                for (uint32_t v = 0; v < vpp; v++) {
                    uint32_t ci = v * pp + st;
                    for (uint32_t m = 0; m < mb; m++) {
                        if (ci > 0)
                            t->deps[fslot[PP_IX(st, dr, tr, v, m)]] =
                                fsend[PP_IX(prev, dr, tr, st == 0 ? v - 1 : v, m)];
                        if (ci < nchunk - 1)
                            t->deps[bslot[PP_IX(st, dr, tr, v, m)]] =
                                bsend[PP_IX(next, dr, tr, st == pp - 1 ? v + 1 : v, m)];
                    }
                }
            }
#undef PP_IX
#undef PP_DEV
    free(fsend);
    free(bsend);
    free(fslot);
    free(bslot);
}

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
        if (ep > 65536 || c->experts % ep != 0)
            return diag_set(d, DIAG_E_RANGE, c->path, 0, "num_local_experts",
                            "--ep %u does not divide the %llu experts", ep, (unsigned long long)c->experts);
        if (s->framework == LLM_FW_LLAMA_CPP)
            return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--ep",
                            "llama.cpp's graph is built for one device");
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
    if (s->phase != LLM_TRAIN || s->framework == LLM_FW_LLAMA_CPP)
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
    uint64_t kvh = c->kv_heads >= tp ? c->kv_heads / tp : 1;
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
    if (pp > 1 || ga) {
        const char *flag = ga ? "--microbatches" : "--pp";
        if (!train)
            return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, flag, "%s", ga ? "micro-batches (gradient "
                            "accumulation) are for --phase train" : "pipeline parallelism is for --phase train");
        if (s->framework == LLM_FW_LLAMA_CPP)
            return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, flag, "%s does not combine with "
                            "llama.cpp's graph", flag);
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
        if (s->framework == LLM_FW_LLAMA_CPP)
            return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--tp",
                            "llama.cpp's graph is built for one device");
    }
    if (s->dp > 1 && s->phase != LLM_TRAIN)
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--dp",
                        "data parallelism is for training (--phase train): replicas of a decode "
                        "or prefill step do not interact");
    return 0;
}

int llm_build(const struct llm_config *c, const struct llm_step *s, struct trace *t,
              struct diag *d)
{
    memset(t, 0, sizeof *t);
    uint64_t T = s->phase == LLM_DECODE ? 1 : s->prompt;
    uint64_t kv_len = s->context + T;
    uint32_t tp = s->tp > 1 ? s->tp : 1, dp = s->dp > 1 ? s->dp : 1;
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
    if (llm_check_tp(c, s, d) != 0)
        return -1;
    if (s->sp && (s->phase != LLM_TRAIN || tp < 2 || s->prompt % tp != 0))
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--sp",
                        "sequence parallelism splits a training step's tokens over the TP ranks: "
                        "it needs --phase train, --tp 2 or more and --prompt a multiple of --tp");
    uint32_t ep = s->ep > 1 ? s->ep : 1;
    if (llm_check_ep(c, s, d) != 0)
        return -1;
    uint32_t cp = s->cp > 1 ? s->cp : 1;
    if (llm_check_cp(c, s, d) != 0)
        return -1;
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
    if (s->page_size > 0 && s->phase == LLM_TRAIN)
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--page-size",
                        "a paged KV cache is for decode and prefill, not training");
    if (s->page_size > 65535)
        return diag_set(d, DIAG_E_RANGE, "", 0, "--page-size", "at most 65535 tokens a page, got %u",
                        s->page_size);
    uint32_t dcn = s->dcn > 1 ? s->dcn : 1;
    if (dcn > 1 && s->phase != LLM_TRAIN)
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--dcn",
                        "data parallelism across slices is for --phase train");
    uint64_t ndev64 = (uint64_t)tp * (dp > 1 ? dp : ep > 1 && ep != tp ? ep : 1) *
                      (s->pp > 1 ? s->pp : 1) * dcn * cp;
    if (ndev64 > 65536)
        return diag_set(d, DIAG_E_RANGE, "", 0, "devices",
                        "--tp x --cp x --dp (or --ep) x --pp x --dcn = %llu devices, more than 65536",
                        (unsigned long long)ndev64);
    if (dp > 1 && s->framework == LLM_FW_LLAMA_CPP)
        return diag_set(d, DIAG_E_UNSUPPORTED, "", 0, "--dp", "llama.cpp's graph is built for one device");
    if ((uint64_t)tp * dp > 65536)
        return diag_set(d, DIAG_E_RANGE, "", 0, "--dp", "--tp x --dp = %llu devices, more than 65536",
                        (unsigned long long)tp * dp);
    /* a layer's forward ops at most (a MoE block's router, top-k, all-to-alls
     * and experts: 8 more) */
    uint32_t per_layer = (s->framework == LLM_FW_LLAMA_CPP ? 28 : 14) + (c->experts ? 8 : 0) +
                         (cp > 1 ? 2 * cp + 2 : 0) +    /* the CP ring's steps and sends */
                         (s->dropout > 0 ? 2 : 0) +     /* the bias-dropout-adds */
                         (s->sp ? 6 : 0);   /* SP backward: input all-gathers, split wgrads */
    int train = s->phase == LLM_TRAIN;
    uint32_t pp = s->pp > 1 ? s->pp : 1, mb = s->microbatches ? s->microbatches : (uint32_t)s->batch;
    uint32_t vpp = s->vpp > 1 ? s->vpp : 1;
    if (llm_check_pp(c, s, d) != 0)
        return -1;
    /* EP over the TP group adds no ranks, groups or all-to-alls; any other
     * EP is inside data parallelism, the EP groups blocks of the replicas
     * (--ep E alone: E replicas, attention data-parallel over them) */
    uint32_t ep_tp = ep > 1 && ep == tp ? tp : 0;
    if (ep_tp)
        ep = 1;
    if (ep > 1 && dp == 1)
        dp = ep;
    /* ops go to the simulated ranks only (the first slice, dp_sim replicas) */
    uint32_t dp_sim = s->dp_sim > 0 && s->dp_sim < dp ? s->dp_sim : dp;
    /* context parallelism: each replica is cp ranks (CP after TP in
     * Megatron's rank order), simulated whole; from here dp counts them all */
    uint64_t seqs = (uint64_t)dp;
    dp *= cp;
    dp_sim *= cp;
    uint32_t ndev = tp * dp * pp * dcn;
    uint32_t nsim = tp * dp_sim * pp;
    uint64_t cap64 = ((uint64_t)c->layers * (per_layer + 4) + 8) *
                     (train ? (s->recompute ? 3 : 2) : 1) * nsim + 1;
    /* with micro-batches and no pipeline (gradient accumulation), the
     * pipeline's schedule on one stage: forward, backward, forward, ...,
     * the gradients reduced during the last backward */
    int schedule = pp > 1 || (train && s->microbatches > 1);
    if (schedule) /* every micro-batch's steps (with TP's all-reduces), the copies, the
                   * gradient all-reduces and one scratch forward, on every TP x DP rank */
        cap64 = (((uint64_t)c->layers * (per_layer + 8) + 16) * ((s->recompute ? 3 : 2) * (uint64_t)mb + 1) +
                 (24 * (uint64_t)mb * vpp + c->layers + 8) * pp) * tp *
                dp_sim + 16;
    if (cap64 > 50000000)
        return diag_set(d, DIAG_E_RANGE, "", 0, "--tp", "the step would have %llu ops, more than "
                        "a trace may hold (50 million)", (unsigned long long)cap64);
    uint32_t cap = (uint32_t)cap64;
    t->ops = sim_xcalloc(cap, sizeof *t->ops);
    t->deps = sim_xcalloc((size_t)cap * (cp > 1 ? 3 : 2) + ndev, sizeof *t->deps);
    t->topo = sim_xcalloc(cap, sizeof *t->topo);
    t->devices = sim_xcalloc(ndev, sizeof *t->devices);
    t->ndevices = ndev;
    for (uint32_t r = 0; r < ndev; r++)
        snprintf(t->devices[r], sizeof t->devices[r], "gpu%u", r);
    /* groups: TP groups (one per replica and stage), DP groups (one per
     * TP rank and stage), EP and expert-data-parallel groups, and across
     * slices one per rank of the first slice (the other slices mirror it) */
    /* EP groups: per stage and TP rank, one per block of ep consecutive
     * replicas; expert-data-parallel groups (dp > ep): per stage and TP
     * rank, the replicas at the same place in each block, holding the
     * same experts */
    uint32_t ntpg = tp > 1 ? dp * pp : 0, ndpg = dp > 1 ? tp * pp : 0;
    uint32_t nepg = ep > 1 ? pp * (dp / ep) * tp : 0, nedpg = ep > 1 && dp > ep ? pp * ep * tp : 0;
    uint32_t ndcng = dcn > 1 ? tp * dp * pp : 0;     /* one per device of the first slice */
    uint32_t ncpg = cp > 1 ? pp * (dp / cp) * tp : 0;  /* per stage, block of cp replicas, TP rank */
    t->ngroups = ntpg + ndpg + nepg + nedpg + ncpg + ndcng;
    t->groups = sim_xcalloc(t->ngroups + 1, sizeof *t->groups);
    t->group_dev = sim_xcalloc((size_t)(ntpg ? ndev : 0) + (ndpg ? ndev : 0) + (nepg ? ndev : 0) +
                                   (nedpg ? ndev : 0) + (ncpg ? ndev : 0) + (ndcng ? ndev : 0) + 1,
                               sizeof *t->group_dev);
    /* devices: TP ranks fastest, then replicas, then stages (then slices) */
#define LLM_DEV(st, dr, tr) (((st) * dp + (dr)) * tp + (tr))
    uint32_t goff = 0;
    for (uint32_t g = 0; g < ntpg; g++) {
        t->groups[g].off = goff;
        t->groups[g].n = tp;
        for (uint32_t k = 0; k < tp; k++)
            t->group_dev[goff++] = g * tp + k;
    }
    for (uint32_t g = 0; g < ndpg; g++) {
        uint32_t st = g / tp, tr = g % tp;
        t->groups[ntpg + g].off = goff;
        t->groups[ntpg + g].n = dp;
        for (uint32_t k = 0; k < dp; k++)
            t->group_dev[goff++] = LLM_DEV(st, k, tr);
    }
    for (uint32_t g = 0; g < nepg; g++) {   /* g = (stage x blocks + block) x tp + TP rank */
        uint32_t tr = g % tp, blk = g / tp % (dp / ep), st = g / tp / (dp / ep);
        t->groups[ntpg + ndpg + g].off = goff;
        t->groups[ntpg + ndpg + g].n = ep;
        for (uint32_t k = 0; k < ep; k++)
            t->group_dev[goff++] = LLM_DEV(st, blk * ep + k, tr);
    }
    for (uint32_t g = 0; g < nedpg; g++) {  /* g = (stage x ep + place) x tp + TP rank */
        uint32_t tr = g % tp, e = g / tp % ep, st = g / tp / ep;
        t->groups[ntpg + ndpg + nepg + g].off = goff;
        t->groups[ntpg + ndpg + nepg + g].n = dp / ep;
        for (uint32_t k = 0; k < dp / ep; k++)
            t->group_dev[goff++] = LLM_DEV(st, k * ep + e, tr);
    }
    for (uint32_t g = 0; g < ncpg; g++) {   /* g = (stage x blocks + block) x tp + TP rank */
        uint32_t tr = g % tp, blk = g / tp % (dp / cp), st = g / tp / (dp / cp);
        t->groups[ntpg + ndpg + nepg + nedpg + g].off = goff;
        t->groups[ntpg + ndpg + nepg + nedpg + g].n = cp;
        for (uint32_t k = 0; k < cp; k++)
            t->group_dev[goff++] = LLM_DEV(st, blk * cp + k, tr);
    }
#undef LLM_DEV
    for (uint32_t g = 0; g < ndcng; g++) {   /* one per rank of a slice: it in every slice */
        t->groups[ntpg + ndpg + nepg + nedpg + ncpg + g].off = goff;
        t->groups[ntpg + ndpg + nepg + nedpg + ncpg + g].n = dcn;
        for (uint32_t k = 0; k < dcn; k++)
            t->group_dev[goff++] = k * tp * dp * pp + g;
    }
    t->tokens = (double)(s->phase == LLM_DECODE ? s->batch : s->batch * s->prompt) * (double)seqs * dcn;
    snprintf(t->path, sizeof t->path, "%s", c->path);
    struct builder b = {.t = t, .cap = cap, .prev = UINT32_MAX, .dcap = cap * (cp > 1 ? 3 : 2) + ndev,
                        .ep_group = ntpg + ndpg, .ep = ep, .edp_group = UINT32_MAX, .ep_tp = ep_tp,
                        .also = UINT32_MAX, .dcn_group = UINT32_MAX, .sp_ag = UINT32_MAX, .cp = cp, .dp_sim = dp_sim,
                        .cp_comm = s->cp_comm, .cp_g0 = ntpg + ndpg + nepg + nedpg};
    struct cp_ring ring = {0};
    if (cp > 1) {
        ring.layers = (uint32_t)c->layers;
        ring.mbs = schedule ? mb : 1;
        ring.cp = cp;
        ring.tp = tp;
        ring.dp = dp;
        ring.dp_sim = dp_sim;
        b.ring = &ring;
    }
    if (schedule) {
        build_pp(&b, c, s, pp, mb, tp, dp);
    } else {
        t->symmetric = dp_sim < dp || dcn > 1;   /* the other replicas' devices mirror these */
        for (uint32_t r = 0; r < tp * dp_sim; r++) {  /* replicas past dp_sim: mirrors, no ops */
            b.prev = UINT32_MAX;
            b.device = r;
            b.tp_group = tp > 1 ? r / tp : 0;
            b.dp_group = dp > 1 ? ntpg + r % tp : 0;
            ep_groups(&b, tp, dp, pp, 0, r / tp, r % tp);
            cp_place(&b, r / tp, r % tp, 0, tp, dp);
            b.dcn_group = dcn > 1 ? ntpg + ndpg + nepg + nedpg + ncpg + r : UINT32_MAX;
            if (ndev > 1)
                snprintf(b.prefix, sizeof b.prefix, "r%u.", r);
            build_rank(&b, c, s, tp, dp);
        }
    }
    /* the ring's waits, now that every send exists */
    if (ring.nsend > 0)
        qsort(ring.send, ring.nsend, sizeof *ring.send, cp_link_cmp);
    for (size_t k = 0; k < ring.nwait; k++) {
        const struct cp_link *f = bsearch(&ring.wait[k], ring.send, ring.nsend, sizeof *ring.send, cp_link_cmp);
        SIM_CHECK(f != NULL);
        t->deps[ring.wait[k].at] = f->at;
    }
    free(ring.send);
    free(ring.wait);
    trace_index_colls(t);
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
    else
        return -1;
    return 0;
}

enum attn_impl llm_framework_attn(enum llm_framework f)
{
    return f == LLM_FW_PYTORCH ? ATTN_SDPA : f == LLM_FW_VLLM ? ATTN_VLLM : ATTN_FLASH;
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
    if (ascii_ieq(name, "q4_k_m")) {
        s->q4_k_m = 1;
        s->weights = WF_Q4_K;
        return 0;
    }
    s->q4_k_m = 0;
    return wfmt_from_name(name, &s->weights);
}
