/* llmb_layer.c: one transformer layer's forward in the LLM trace builder
 * (see llmb_layer.h): the norm and q, k, v projections, the attention
 * (under context parallelism, its ring or collectives), the output
 * projection, and the MLP (dense or routed experts, with shared experts),
 * with the tensor- and sequence-parallel collectives between.
 *
 * Multi-head latent attention (DeepSeek-V2/V3, kv_lora_rank): q through
 * its low-rank bottleneck, the latent and the shared RoPE key from one
 * down projection (fused with q's, as vLLM and SGLang run it), their
 * norms; the cache holds the latent and the RoPE key, kv_lora + rope_dim a
 * token and layer, whole on every TP rank.  Decode absorbs the up
 * projections (DeepSeek-V2's paper, FlashMLA): q's non-RoPE part times
 * W_UK into the latent's space, attention of every head over the shared
 * latent (one K/V head: MQA), the output times W_UV; the attention op has
 * one K/V head of (kv_lora + rope_dim) / 2, so that its K and V are the
 * latent's bytes, read once; its FLOPs are then about half the real ones
 * (QK over 576, PV over 512), a known limit that matters where decode
 * attention is compute-bound (all heads on one rank, long contexts).
 * Prefill runs the non-absorbed form: the latent of every key (cached
 * ones too) up-projected to each head's k and v, and attention of heads
 * of (qk + v) / 2 (the K and V bytes and the FLOPs of qk-wide keys and
 * v-wide values). */
#include "llmb_layer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "llmb_cp.h"
#include "llmb_ssm.h"

/* llama.cpp's use_more_bits(): the layers Q4_K_M gives more bits */
static int more_bits(uint64_t i, uint64_t n)
{
    return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

/* What one layer's ops are sized by, on this rank. */
struct lay {
    uint64_t l;                 /* the layer */
    uint64_t rows, batch;       /* tokens, sequences */
    uint32_t tp;                /* tensor-parallel ranks */
    uint64_t T, kv_len;         /* a sequence's new tokens on this rank, and keys */
    uint64_t h, hd;             /* hidden size, head size */
    uint64_t heads, kvh, inter; /* this rank's heads, K/V heads and MLP width */
    uint64_t qd, kvd;           /* its q and k (or v) widths */
    enum dtype dt;
    double eb;                  /* bytes an element */
    int sp;                     /* sequence parallelism */
    enum wfmt w, wdown;         /* the weights' storage (wdown: the down projection's) */
    int moe;                    /* the MLP is the routed experts */
    int qk_norm;                /* Qwen3's q and k norms */
    int absorb;                 /* MLA in decode: the weight-absorbed form */
};

#define ID(suffix) (snprintf(id, sizeof id, "L%llu.%s", (unsigned long long)l, suffix), id)

/* A MoE block on `rows` tokens: the shared experts (DeepSeek) as one dense
 * gated MLP, then the router, top-k, and the routed experts the tokens
 * reach under uniform routing as batched GEMMs.  The same count serves
 * Mixtral's 8 experts and the fine-grained 64-256 (Qwen3-MoE, DeepSeek):
 * a batch of B tokens, each to k of E experts, touches E(1 - (1 - k/E)^B)
 * of them in expectation, and each touched expert's weights are read once
 * a step: decode's weight bytes grow with the batch until every expert is
 * read. */
static void add_moe(struct llmb *b, const struct llm_config *c, const struct llm_step *s,
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
        inter = c->moe_inter;       /* whole experts */
    double eb = dtype_bytes(dt, 1.0);
    uint64_t a2a = (uint64_t)ceil((double)rows * k * F * (double)c->hidden * eb);
    if (c->shared_experts) {
        /* every token's, split over the TP ranks as the dense MLP (the
         * rank's share of the width, inter); before the routed ones, not
         * overlapped with the dispatch as SGLang can */
        uint64_t sh = c->shared_experts * inter;
        llmb_gemm(b, ID("shared_gate_up"), dt, rows, 2 * sh, c->hidden, w);
        llmb_ew(b, ID("shared_silu_mul"), dt, rows * sh, 2, 1, c->act_flops + 1.0);
        llmb_gemm(b, ID("shared_down"), dt, rows, c->hidden, sh, wdown);
    }
    llmb_gemm(b, ID("router"), dt, rows, c->experts, c->hidden, WF_NONE);
    llmb_rc(b, ID("topk"), OP_REDUCTION, dt, rows, c->experts);
    if (ep > 1 && !b->ep_tp) {
        /* the tokens' copies to their experts' ranks (permuted into
         * per-rank order first) */
        llmb_ew(b, ID("dispatch_permute"), dt, rows * (uint64_t)k * c->hidden, 1, 1, 0.0);
        llmb_alltoall(b, ID("dispatch"), dt, a2a);
        if (g > 1)
            llmb_tp_coll(b, ID("dispatch_allgather"), COLL_ALL_GATHER, dt, a2a * g, (uint32_t)g);
    }
    struct op *o = llmb_gemm(b, ID("experts_gate_up"), dt, per, 2 * inter, c->hidden, w);
    o->u.gemm.batch = na;
    llmb_ew(b, ID("silu_mul"), dt, na * per * inter, 2, 1, 6.0);
    o = llmb_gemm(b, ID("experts_down"), dt, per, c->hidden, inter, wdown);
    o->u.gemm.batch = na;
    if (ep > 1 && !b->ep_tp) {   /* the results back to their tokens' ranks */
        if (g > 1)
            llmb_tp_coll(b, ID("combine_reduce_scatter"), COLL_REDUCE_SCATTER, dt, a2a * g, (uint32_t)g);
        llmb_alltoall(b, ID("combine_a2a"), dt, a2a);
    }
    llmb_ew(b, ID("combine"), dt, rows * c->hidden, (uint32_t)c->experts_per_tok + 1, 1,
            (double)c->experts_per_tok);
}

/* The norm and the projections into q, k, v (with RoPE and the cache
 * write), as the framework runs them. */
static void layer_qkv(struct llmb *b, const struct llm_step *s, const struct lay *y)
{
    uint64_t l = y->l, rows = y->rows, h = y->h, qd = y->qd, kvd = y->kvd;
    uint32_t tp = y->tp;
    enum dtype dt = y->dt;
    enum wfmt w = y->w;
    double eb = y->eb;
    int sp = y->sp;
    char id[64];
    if (s->framework == LLM_FW_HF) {
        /* modeling_llama.py's LlamaAttention as eager PyTorch runs it:
         * the fp32 RMSNorm, three projections, RoPE by rotate_half on q
         * and k (q * cos, -x2, cat, * sin, +), the cache written in place
         * (index_copy_, as a static cache does) */
        llmb_hf_rmsnorm(b, ID("attn_norm"), dt, rows, h);
        llmb_gemm(b, ID("q_proj"), dt, rows, qd, h, w);
        llmb_gemm(b, ID("k_proj"), dt, rows, kvd, h, w);
        llmb_gemm(b, ID("v_proj"), dt, rows, kvd, h, w);
        if (y->qk_norm) {
            llmb_hf_rmsnorm(b, ID("q_norm"), dt, rows * y->heads, y->hd);
            llmb_hf_rmsnorm(b, ID("k_norm"), dt, rows * y->kvh, y->hd);
        }
        llmb_hf_rope(b, ID("rope_q"), dt, rows * qd);
        llmb_hf_rope(b, ID("rope_k"), dt, rows * kvd);
        llmb_ew(b, ID("cache_k"), dt, rows * kvd, 1, 1, 0.0);
        llmb_ew(b, ID("cache_v"), dt, rows * kvd, 1, 1, 0.0);
    } else if (s->framework == LLM_FW_LLAMA_CPP) {
        /* ggml's graph as llama.cpp's Metal/CUDA backends ran it in
         * late 2023: one kernel per graph node */
        llmb_rc(b, ID("attn_norm"), OP_NORM, dt, rows, h);
        llmb_ew(b, ID("attn_norm_mul"), dt, rows * h, 2, 1, 1.0);
        llmb_gemm(b, ID("q_proj"), dt, rows, qd, h, w);
        llmb_gemm(b, ID("k_proj"), dt, rows, kvd, h, w);
        llmb_gemm(b, ID("v_proj"), dt, rows, kvd, h, w);
        if (y->qk_norm)
            llmb_rc(b, ID("qk_norm"), OP_NORM, dt, rows * (y->heads + y->kvh), y->hd);
        llmb_ew(b, ID("rope_q"), dt, rows * qd, 1, 1, 3.0);
        llmb_ew(b, ID("rope_k"), dt, rows * kvd, 1, 1, 3.0);
        llmb_ew(b, ID("cpy_k"), dt, rows * kvd, 1, 1, 0.0);
        llmb_ew(b, ID("cpy_v"), dt, rows * kvd, 1, 1, 0.0);
    } else {
        /* residual add folded into the norm, as fused kernels do; with
         * sequence parallelism the norm runs on this rank's 1/tp of the
         * tokens and an all-gather brings them all for the projections */
        llmb_rc(b, ID("attn_norm"), OP_NORM, dt, sp ? rows / tp : rows, h);
        if (sp)
            llmb_tp_coll(b, ID("attn_allgather"), COLL_ALL_GATHER, dt, (uint64_t)(rows * h * eb), tp);
        llmb_gemm(b, ID("qkv_proj"), dt, rows, qd + 2 * kvd, h, w);
        if (y->qk_norm)     /* Qwen3: RMSNorm of every q and k head */
            llmb_rc(b, ID("qk_norm"), OP_NORM, dt, rows * (y->heads + y->kvh), y->hd);
        /* RoPE on q and k, with k and v written to the KV cache */
        llmb_ew(b, ID("rope_kv"), dt, rows * (qd + 2 * kvd), 1, 1, 3.0);
    }
}

/* MLA's projections (see the top): the fused down projection of q and
 * the latent with the RoPE key, their norms, q's up projection, and in
 * decode q's non-RoPE part absorbed into the latent's space (W_UK, one
 * GEMM a head), in prefill every key's latent up-projected to its heads'
 * k and v (W_UKV); RoPE and the cache write of the latent. */
static void layer_mla_qkv(struct llmb *b, const struct llm_config *c, const struct lay *y)
{
    uint64_t l = y->l, rows = y->rows, h = y->h, heads = y->heads;
    uint64_t qk = c->nope_dim + c->rope_dim, lat = c->kv_lora + c->rope_dim;
    enum dtype dt = y->dt;
    enum wfmt w = y->w;
    char id[64];
    llmb_rc(b, ID("attn_norm"), OP_NORM, dt, rows, h);
    if (c->q_lora) {
        llmb_gemm(b, ID("qkv_a_proj"), dt, rows, c->q_lora + lat, h, w);
        llmb_rc(b, ID("qkv_a_norm"), OP_NORM, dt, rows, c->q_lora + c->kv_lora);
        llmb_gemm(b, ID("q_b_proj"), dt, rows, heads * qk, c->q_lora, w);
    } else {
        llmb_gemm(b, ID("qkv_a_proj"), dt, rows, heads * qk + lat, h, w);
        llmb_rc(b, ID("kv_a_norm"), OP_NORM, dt, rows, c->kv_lora);
    }
    if (y->absorb) {
        struct op *o = llmb_gemm(b, ID("q_absorb"), dt, rows, c->kv_lora, c->nope_dim, w);
        o->u.gemm.batch = heads;
        llmb_ew(b, ID("rope_kv"), dt, rows * (heads * c->rope_dim + lat), 1, 1, 3.0);
    } else {
        llmb_ew(b, ID("rope_kv"), dt, rows * (heads * qk + lat), 1, 1, 3.0);
        llmb_gemm(b, ID("kv_b_proj"), dt, y->batch * y->kv_len, heads * (c->nope_dim + c->v_dim),
                  c->kv_lora, w);
    }
}

/* The attention itself: one op, or under context parallelism the ring
 * (p2p), the all-to-alls around it (a2a) or the K/V all-gather. */
static void layer_attention(struct llmb *b, const struct llm_step *s, const struct lay *y)
{
    uint64_t l = y->l, rows = y->rows, batch = y->batch, T = y->T, kv_len = y->kv_len;
    uint64_t hd = y->hd, heads = y->heads, kvh = y->kvh, qd = y->qd;
    enum dtype dt = y->dt;
    double eb = y->eb;
    char id[64];
    struct op pa, *a = &pa;
    memset(a, 0, sizeof *a);
    a->kind = OP_ATTENTION;
    a->dtype = dt;
    llmb_attn_shape(a, batch, heads, kvh, T, kv_len, hd, 1, s->attn, s->kv_dtype < DT_COUNT ? s->kv_dtype : dt);
    a->u.attn.page_size = s->phase == LLM_TRAIN ? 0 : s->page_size;
    a->u.attn.dropout = s->dropout;
    if (b->cp > 1 && b->cp_comm == LLM_CP_P2P) {
        char stem[24];
        snprintf(stem, sizeof stem, "L%llu", (unsigned long long)l);
        llmb_cp_attention(b, &pa, stem, "", l, 0);
    } else if (b->cp > 1 && b->cp_comm == LLM_CP_A2A) {
        /* DeepSpeed-Ulysses: an all-to-all turns the rank's 1/cp of the
         * tokens with all its heads into all the tokens with 1/cp of the
         * heads (K/V heads repeated up to cp when fewer), attention runs on
         * the whole sequence, and a second all-to-all turns the output back */
        uint64_t C = b->cp, kvs = kvh >= C ? kvh : C;
        llmb_coll(b, ID("attn_a2a"), COLL_ALL_TO_ALL, dt, (uint64_t)((double)rows * (qd + 2 * kvs * hd) * eb),
                  b->cp_group, b->cp);
        struct op *o = llmb_op(b, ID("attention"), OP_ATTENTION, dt);
        o->u = pa.u;
        o->u.attn.heads = heads / C;
        o->u.attn.kv_heads = kvs / C;
        o->u.attn.q_len = o->u.attn.kv_len = T * C;
        llmb_coll(b, ID("attn_out_a2a"), COLL_ALL_TO_ALL, dt, (uint64_t)((double)rows * qd * eb), b->cp_group, b->cp);
    } else if (b->cp > 1) {
        /* all-gather (Llama 3's): every rank's K and V gathered, then each of
         * the rank's two chunks attends to the keys up to its own end
         * (causal, aligned to the end); the backward reduce-scatters dK, dV */
        uint64_t C = b->cp, half = T / 2, r = b->cp_rank;
        llmb_coll(b, ID("kv_allgather"), COLL_ALL_GATHER, dt, (uint64_t)((double)batch * T * C * 2 * kvh * hd * eb),
                  b->cp_group, b->cp);
        for (int k = 0; k < 2; k++) {
            struct op *o = llmb_op(b, k ? ID("attention.chunk1") : ID("attention"), OP_ATTENTION, dt);
            o->u = pa.u;
            o->u.attn.q_len = half;
            o->u.attn.kv_len = (k ? 2 * C - r : r + 1) * half;
        }
    } else {
        llmb_op(b, ID("attention"), OP_ATTENTION, dt)->u = pa.u;
    }
}

/* The output projection and what follows it up to the MLP's norm. */
static void layer_attn_out(struct llmb *b, const struct llm_step *s, const struct lay *y)
{
    uint64_t l = y->l, rows = y->rows, h = y->h, qd = y->qd;
    uint32_t tp = y->tp;
    enum dtype dt = y->dt;
    enum wfmt w = y->w;
    double eb = y->eb;
    int sp = y->sp;
    char id[64];
    if (s->framework == LLM_FW_LLAMA_CPP)
        llmb_ew(b, ID("attn_cont"), dt, rows * qd, 1, 1, 0.0); /* permute + cont */
    llmb_gemm(b, ID("o_proj"), dt, rows, h, qd, w);
    if (sp)     /* the partial sums reduced and scattered back over the tokens */
        llmb_tp_coll(b, ID("o_reduce_scatter"), COLL_REDUCE_SCATTER, dt, (uint64_t)(rows * h * eb), tp);
    else if (tp > 1)
        llmb_allreduce(b, ID("o_allreduce"), dt, (uint64_t)(rows * h * eb));
    if (s->dropout > 0)
        llmb_dropout_add(b, ID("attn_dropout_add"), dt, (sp ? rows / tp : rows) * h, s->dropout);
    if (s->framework == LLM_FW_LLAMA_CPP) {
        llmb_ew(b, ID("residual1"), dt, rows * h, 2, 1, 1.0);
        llmb_rc(b, ID("mlp_norm"), OP_NORM, dt, rows, h);
        llmb_ew(b, ID("mlp_norm_mul"), dt, rows * h, 2, 1, 1.0);
    } else if (s->framework == LLM_FW_HF) {
        llmb_ew(b, ID("residual1"), dt, rows * h, 2, 1, 1.0);
        llmb_hf_rmsnorm(b, ID("mlp_norm"), dt, rows, h);
    } else {
        llmb_rc(b, ID("mlp_norm"), OP_NORM, dt, sp ? rows / tp : rows, h);
    }
}

/* The MLP (gated, plain or the experts') and the residual. */
static void layer_mlp(struct llmb *b, const struct llm_config *c, const struct llm_step *s,
                      const struct lay *y)
{
    uint64_t l = y->l, rows = y->rows, h = y->h, inter = y->inter;
    uint32_t tp = y->tp;
    enum dtype dt = y->dt;
    enum wfmt w = y->w, wdown = y->wdown;
    double eb = y->eb;
    int sp = y->sp;
    char id[64];
    /* with SP, EP inside DP dispatches this rank's 1/tp of the tokens (its
     * own all-gather and reduce-scatter over TP); the dense MLP and EP
     * over the TP group gather all the tokens first */
    int sp_moe = sp && y->moe && b->ep > 1;
    if (sp && !sp_moe)
        llmb_tp_coll(b, ID("mlp_allgather"), COLL_ALL_GATHER, dt, (uint64_t)(rows * h * eb), tp);
    if (y->moe) {
        add_moe(b, c, s, l, sp_moe ? rows / tp : rows, inter, w, wdown, sp_moe ? tp : 1);
    } else if (c->gated) {
        llmb_gemm(b, ID("gate_proj"), dt, rows, inter, h, w);
        llmb_gemm(b, ID("up_proj"), dt, rows, inter, h, w);
        if (llm_fw_one_device(s->framework)) {   /* act_fn(gate) * up: two kernels */
            llmb_ew(b, ID("silu"), dt, rows * inter, 1, 1, c->act_flops);
            llmb_ew(b, ID("mul"), dt, rows * inter, 2, 1, 1.0);
        } else {
            llmb_ew(b, ID("silu_mul"), dt, rows * inter, 2, 1, c->act_flops + 1.0);
        }
        llmb_gemm(b, ID("down_proj"), dt, rows, h, inter, wdown);
    } else {
        /* a plain MLP: up, the activation, down */
        llmb_gemm(b, ID("up_proj"), dt, rows, inter, h, w);
        llmb_ew(b, ID("act"), dt, rows * inter, 1, 1, c->act_flops);
        llmb_gemm(b, ID("down_proj"), dt, rows, h, inter, wdown);
    }
    if (sp && !sp_moe)
        llmb_tp_coll(b, ID("mlp_reduce_scatter"), COLL_REDUCE_SCATTER, dt, (uint64_t)(rows * h * eb), tp);
    else if (tp > 1 && !sp)
        llmb_allreduce(b, ID("mlp_allreduce"), dt, (uint64_t)(rows * h * eb));
    if (s->dropout > 0)
        llmb_dropout_add(b, ID("mlp_dropout_add"), dt, (sp ? rows / tp : rows) * h, s->dropout);
    if (llm_fw_one_device(s->framework))
        llmb_ew(b, ID("residual2"), dt, rows * h, 2, 1, 1.0);
}

/* Layer l's forward on rows tokens of batch sequences (a rank's share of
 * heads and MLP with tp ranks). */
void llmb_layer(struct llmb *b, const struct llm_config *c, const struct llm_step *s,
                uint64_t l, uint64_t rows, uint64_t batch, uint32_t tp)
{
    struct lay y = {.l = l, .rows = rows, .batch = batch, .tp = tp};
    /* with context parallelism a rank holds 1/cp of each sequence */
    y.T = s->phase == LLM_DECODE ? 1 : s->prompt / b->cp;
    y.kv_len = s->context + y.T;
    if (l < LLM_MAX_LAYERS && c->kind[l] != LLM_LAYER_FULL) {  /* a hybrid's block (llmb_ssm.c) */
        llmb_hybrid_layer(b, c, s, l, rows, batch, y.T, y.kv_len, tp);
        return;
    }
    y.h = c->hidden;
    y.hd = c->head_dim;
    y.dt = s->dtype;
    y.heads = c->heads / tp;
    y.kvh = llm_rank_kv_heads(c, tp);
    y.inter = c->intermediate / tp;
    y.eb = dtype_bytes(y.dt, 1.0);
    y.sp = s->sp && tp > 1 && s->phase == LLM_TRAIN;     /* sequence parallelism */
    y.w = s->weights;
    y.wdown = s->q4_k_m && more_bits(l, c->layers) ? llm_w_more(s) : y.w;
    y.qd = y.heads * y.hd;
    y.kvd = y.kvh * y.hd;
    y.moe = llm_layer_moe(c, l);
    if (y.moe)
        y.inter = c->moe_inter / tp;
    y.qk_norm = c->qk_norm;
    if (c->kv_lora) {
        char id[64];
        /* the attention op's heads (see the top): decode one K/V head over
         * the latent, prefill every head's expanded k and v */
        y.absorb = s->phase == LLM_DECODE;
        y.kvh = y.absorb ? 1 : y.heads;
        y.hd = y.absorb ? (c->kv_lora + c->rope_dim + 1) / 2 : (c->nope_dim + c->rope_dim + c->v_dim + 1) / 2;
        y.qd = y.heads * c->v_dim;      /* o_proj's input */
        layer_mla_qkv(b, c, &y);
        layer_attention(b, s, &y);
        if (y.absorb) {     /* the latent output to each head's v (W_UV) */
            struct op *o = llmb_gemm(b, ID("v_absorb"), y.dt, rows, c->v_dim, c->kv_lora, y.w);
            o->u.gemm.batch = y.heads;
        }
    } else {
        layer_qkv(b, s, &y);
        layer_attention(b, s, &y);
    }
    layer_attn_out(b, s, &y);
    layer_mlp(b, c, s, &y);
}
#undef ID
