/* llmb_vit.c: a vision transformer's forward (ViT, DeiT: model_type vit or
 * deit) in the LLM trace builder (see llmb_vit.h).
 *
 * The image is cut into (image / patch)^2 patches, each projected to the
 * hidden size (a convolution with stride = kernel = patch: a GEMM of
 * batch x patches rows by channels x patch^2), a class token is put in
 * front and a learned position table added.  Each layer is pre-norm:
 * LayerNorm, the q/k/v projection, attention of every token to every
 * token (no mask, no cache), the output projection and the residual add;
 * LayerNorm, the MLP (up, GELU, down) and the residual add.  The final
 * LayerNorm runs on every token, the classifier on the class token.
 *
 * Eager PyTorch under autocast (framework pytorch or hf, 16-bit dtype),
 * as timm's benchmark.py and Hugging Face's pipelines run it: the weights
 * and the residual stream stay fp32.  A Linear or the convolution casts
 * its fp32 input, weight and bias to dt (one kernel each; a weight is
 * cast once a forward, autocast's cache), runs in dt and writes dt;
 * LayerNorm runs in fp32 (autocast's fp32 list) on the fp32 stream; the
 * residual adds take the fp32 stream and a dt output and write fp32
 * (type promotion), and so does the class token's cat.  Attention is
 * F.scaled_dot_product_attention on the q, k, v views of the projection's
 * output; a fused kernel writes its output in the layout the output
 * projection reads (PyTorch's flash and memory-efficient kernels return
 * it as a transposed view), the math path needs a copy.  The GELU runs on
 * dt.  A mixed kernel's bytes are counted in 16-bit tensors (an fp32
 * tensor is two).
 *
 * Fused (the default framework): one kernel per op at dt, the residual
 * adds folded into the norms, no casts (TensorRT's and compiled graphs'
 * shape). */
#include "llmb_vit.h"

#include <stdio.h>

/* An elementwise kernel over el elements reading f_in fp32 and d_in dt
 * tensors and writing f_out fp32 and d_out dt ones (dt 16-bit). */
static void ew_amp(struct llmb *b, const char *id, enum dtype dt, uint64_t el, uint32_t f_in,
                   uint32_t d_in, uint32_t f_out, uint32_t d_out, double fpe)
{
    llmb_ew(b, id, dt, el, 2 * f_in + d_in, 2 * f_out + d_out, fpe);
}

/* A Linear (or the patch convolution) of rows x k by k x n with a bias:
 * under autocast its weight and bias cast first, and its input when that
 * is the fp32 stream (in_f32). */
static void linear(struct llmb *b, const char *stem, enum dtype dt, int amp, int in_f32, uint64_t rows,
                   uint64_t n, uint64_t k, enum wfmt w)
{
    char id[TRACE_ID_MAX];
    if (amp) {
        if (in_f32) {
            snprintf(id, sizeof id, "%s.in_cast", stem);
            ew_amp(b, id, dt, rows * k, 1, 0, 0, 1, 0.0);
        }
        snprintf(id, sizeof id, "%s.w_cast", stem);
        ew_amp(b, id, dt, n * k, 1, 0, 0, 1, 0.0);
        snprintf(id, sizeof id, "%s.b_cast", stem);
        ew_amp(b, id, dt, n, 1, 0, 0, 1, 0.0);
    }
    llmb_gemm(b, stem, dt, rows, n, k, w);
}

void llmb_vit(struct llmb *b, const struct llm_config *c, const struct llm_step *s)
{
    uint64_t B = s->batch, T = c->max_pos, P = T - 1, h = c->hidden, inter = c->intermediate;
    uint64_t rows = B * T, kp = c->channels * c->patch * c->patch;
    enum dtype dt = s->dtype;
    enum wfmt w = s->weights;
    int amp = (s->framework == LLM_FW_PYTORCH || s->framework == LLM_FW_HF) && dtype_bytes(dt, 1.0) == 2.0;
    /* the residual stream's type: fp32 under autocast */
    enum dtype rt = amp ? DT_FP32 : dt;
    int fused_attn = s->attn != ATTN_NAIVE && s->attn != ATTN_MATH;
    char id[64];
#define ID(fmt, ...) (snprintf(id, sizeof id, fmt, __VA_ARGS__), id)
    /* the images (fp32 under autocast, cast for the convolution) to patches */
    if (amp)
        ew_amp(b, "pixels_cast", dt, B * c->channels * c->image * c->image, 1, 0, 0, 1, 0.0);
    linear(b, "patch_embed", dt, amp, 0, B * P, h, kp, WF_NONE);
    if (amp) {
        /* cat(class token fp32, patches dt) is fp32; + the position table */
        ew_amp(b, "cls_cat", dt, rows * h, 0, 1, 1, 0, 0.0);
        llmb_ew(b, "pos_add", DT_FP32, rows * h, 1, 1, 1.0);
    } else {
        llmb_ew(b, "cls_pos", dt, rows * h, 1, 1, 1.0);
    }
    for (uint64_t l = 0; l < c->layers; l++) {
        llmb_rc(b, ID("L%llu.norm1", (unsigned long long)l), OP_NORM, rt, rows, h);
        linear(b, ID("L%llu.qkv", (unsigned long long)l), dt, amp, 1, rows, 3 * h, h, w);
        struct op *a = llmb_op(b, ID("L%llu.attention", (unsigned long long)l), OP_ATTENTION, dt);
        a->u.attn.batch = B;
        a->u.attn.heads = c->heads;
        a->u.attn.kv_heads = c->heads;
        a->u.attn.q_len = T;
        a->u.attn.kv_len = T;
        a->u.attn.head_dim = c->head_dim;
        a->u.attn.causal = 0;
        a->u.attn.impl = s->attn;
        a->u.attn.kv_dtype = dt;
        if (!fused_attn)    /* (B, H, T, D) to (B, T, H x D) */
            llmb_ew(b, ID("L%llu.attn_transpose", (unsigned long long)l), dt, rows * h, 1, 1, 0.0);
        linear(b, ID("L%llu.proj", (unsigned long long)l), dt, amp, 0, rows, h, h, w);
        if (amp)
            ew_amp(b, ID("L%llu.residual1", (unsigned long long)l), dt, rows * h, 1, 1, 1, 0, 1.0);
        llmb_rc(b, ID("L%llu.norm2", (unsigned long long)l), OP_NORM, rt, rows, h);
        linear(b, ID("L%llu.fc1", (unsigned long long)l), dt, amp, 1, rows, inter, h, w);
        llmb_ew(b, ID("L%llu.act", (unsigned long long)l), dt, rows * inter, 1, 1, c->act_flops);
        linear(b, ID("L%llu.fc2", (unsigned long long)l), dt, amp, 0, rows, h, inter, w);
        if (amp)
            ew_amp(b, ID("L%llu.residual2", (unsigned long long)l), dt, rows * h, 1, 1, 1, 0, 1.0);
    }
    /* the final norm on every token (timm's forward_features), then the
     * classifier on the class token */
    llmb_rc(b, "final_norm", OP_NORM, rt, rows, h);
    if (c->labels > 0)
        linear(b, "head", dt, amp, 1, B, c->labels, h, WF_NONE);
#undef ID
}
