/* llmb_ssm.c: a hybrid model's blocks in the LLM trace builder (see
 * llmb_ssm.h): Nemotron-H's layers, each a pre-norm block of one kind
 * (the residual add folded into the next norm, as vLLM fuses them).
 *
 * A Mamba-2 mixer (arXiv 2405.21060; vLLM's MambaMixer2 and its Triton
 * SSD kernels, as vLLM and NIM run Nemotron-H):
 *   in_proj     one GEMM to z (the gate, heads x head_dim), x (the same),
 *               B and C (groups x N each) and dt (one a head);
 *   conv1d      a causal depthwise convolution (conv_kernel taps) and SiLU
 *               over x, B and C: a prefill reads the new tokens, a decode
 *               step also reads and shifts each sequence's window of the
 *               last kernel - 1 tokens;
 *   SSM         decode: selective_state_update, each sequence's state
 *               (heads x head_dim x N, fp32) read, decayed, updated with
 *               dt B x and written back, y = C state + D x;  prefill: the
 *               SSD algorithm in chunks of chunk_size tokens, the kernels
 *               vLLM runs (mamba_chunk_scan_combined): chunk_state (each
 *               chunk's state, B^T x: N x head_dim a head, k = chunk),
 *               state_passing (the states carried across chunks, fp32),
 *               bmm_chunk (C B^T a group: chunk x chunk, k = N) and
 *               chunk_scan (each chunk's output, the masked C B^T times x
 *               and C times the state carried in: k = chunk + N);
 *   gate, norm  y times SiLU(z), then RMSNorm over each group of heads;
 *   out_proj    one GEMM back to the hidden size.
 * chunk_cumsum (dt's cumulative sums, heads x tokens) is left out (a
 * tenth of a per-cent of the bytes).  An attention block is the norm, the
 * q/k/v projection with the cache write (Nemotron-H has no RoPE), the
 * attention and o_proj; an MLP block the norm, up, the activation, down.
 *
 * Tensor parallelism, as vLLM splits these blocks: the mixer's in_proj is
 * column-parallel over its heads and groups (each rank 1/tp of z, x, B, C
 * and dt), so are the convolution's channels, the state (a rank holds
 * heads/tp of each sequence's), the gate and the grouped norm (whole
 * groups a rank); out_proj is row-parallel and its output all-reduced.
 * Attention and the MLP split as in the dense layers (heads, K/V heads
 * replicated below tp; the MLP's width), each block's last projection
 * all-reduced.  The block's norm runs whole on every rank. */
#include "llmb_ssm.h"

#include <stdio.h>

#define ID(suffix) (snprintf(id, sizeof id, "L%llu.%s", (unsigned long long)l, suffix), id)

static void mamba_block(struct llmb *b, const struct llm_config *c, const struct llm_step *s, uint64_t l,
                        uint64_t rows, uint64_t batch, uint64_t T, uint32_t tp)
{
    char id[64];
    enum dtype dt = s->dtype;
    enum wfmt w = s->weights;
    uint64_t h = c->hidden, H = c->ssm_heads / tp, P = c->ssm_head_dim, N = c->ssm_state;
    uint64_t G = c->ssm_groups / tp, K = c->ssm_conv, Q = c->ssm_chunk;
    uint64_t di = H * P, cd = di + 2 * G * N;
    int decode = s->phase == LLM_DECODE;
    llmb_rc(b, ID("norm"), OP_NORM, dt, rows, h);
    llmb_gemm(b, ID("in_proj"), dt, rows, di + cd + H, h, w);
    /* the window's kernel - 1 earlier tokens come from the cache in decode */
    uint32_t win = decode ? (uint32_t)K : 1;
    llmb_ew(b, ID("conv1d"), dt, rows * cd, win, decode ? win : 1, 2.0 * (double)K + 5.0);
    if (decode) {
        llmb_ew(b, ID("ssm_update"), DT_FP32, batch * di * N, 1, 1, 6.0);
    } else {
        uint64_t chunks = (T + Q - 1) / Q, n = batch * chunks;
        struct op *o = llmb_gemm(b, ID("ssd_chunk_state"), dt, N, P, Q, WF_NONE);
        o->u.gemm.batch = n * H;
        llmb_ew(b, ID("ssd_state_passing"), DT_FP32, n * di * N, 1, 1, 2.0);
        o = llmb_gemm(b, ID("ssd_bmm_chunk"), dt, Q, Q, N, WF_NONE);
        o->u.gemm.batch = n * G;
        o = llmb_gemm(b, ID("ssd_chunk_scan"), dt, Q, P, Q + N, WF_NONE);
        o->u.gemm.batch = n * H;
    }
    llmb_ew(b, ID("gate"), dt, rows * di, 2, 1, 6.0);
    llmb_rc(b, ID("gated_norm"), OP_NORM, dt, rows * G, di / G);
    llmb_gemm(b, ID("out_proj"), dt, rows, h, di, w);
    if (tp > 1)
        llmb_allreduce(b, ID("mixer_allreduce"), dt, (uint64_t)dtype_bytes(dt, (double)(rows * h)));
}

void llmb_hybrid_layer(struct llmb *b, const struct llm_config *c, const struct llm_step *s, uint64_t l,
                       uint64_t rows, uint64_t batch, uint64_t T, uint64_t kv_len, uint32_t tp)
{
    char id[64];
    enum dtype dt = s->dtype;
    enum wfmt w = s->weights;
    uint64_t h = c->hidden, act_bytes = (uint64_t)dtype_bytes(dt, (double)(rows * h));
    tp = tp > 1 ? tp : 1;
    if (c->kind[l] == LLM_LAYER_MAMBA) {
        mamba_block(b, c, s, l, rows, batch, T, tp);
        return;
    }
    llmb_rc(b, ID("norm"), OP_NORM, dt, rows, h);
    if (c->kind[l] == LLM_LAYER_MLP) {
        uint64_t inter = c->intermediate / tp;
        llmb_gemm(b, ID("up_proj"), dt, rows, inter, h, w);
        llmb_ew(b, ID("act"), dt, rows * inter, 1, 1, c->act_flops);
        llmb_gemm(b, ID("down_proj"), dt, rows, h, inter, w);
        if (tp > 1)
            llmb_allreduce(b, ID("mlp_allreduce"), dt, act_bytes);
        return;
    }
    uint64_t heads = c->heads / tp, kvh = llm_rank_kv_heads(c, tp);
    uint64_t qd = heads * c->head_dim, kvd = kvh * c->head_dim;
    llmb_gemm(b, ID("qkv_proj"), dt, rows, qd + 2 * kvd, h, w);
    llmb_ew(b, ID("cache_kv"), dt, rows * 2 * kvd, 1, 1, 0.0);
    struct op *a = llmb_attention(b, ID("attention"), dt, batch, heads, kvh, T, kv_len, c->head_dim, 1,
                                  s->attn, s->kv_dtype < DT_COUNT ? s->kv_dtype : dt);
    a->u.attn.page_size = s->page_size;
    llmb_gemm(b, ID("o_proj"), dt, rows, h, qd, w);
    if (tp > 1)
        llmb_allreduce(b, ID("attn_allreduce"), dt, act_bytes);
}
#undef ID
