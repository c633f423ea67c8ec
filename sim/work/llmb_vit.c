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
 * shape).
 *
 * A vision-language model's image tower (LLaVA: CLIP's vision model) is
 * the same encoder in the model's dtype (no autocast: a VLM is loaded in
 * its torch_dtype), with CLIP's LayerNorm before the first layer, run up
 * to the layer its features come from (vLLM and SGLang stop there;
 * Hugging Face's eager model runs every layer for output_hidden_states),
 * no final norm or classifier; its patches' features go through the
 * projector (two GEMMs and the activation) into the decoder's width, and
 * the decoder's embedding output takes them in the image tokens' places
 * (llmb_rank.c's image_merge). */
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

void llmb_vit(struct llmb *b, const struct llm_vit *v, const struct llm_step *s, uint64_t images,
              int tower)
{
    uint64_t B = images, T = v->tokens, P = T - 1, h = v->hidden, inter = v->inter;
    uint64_t rows = B * T, kp = v->channels * v->patch * v->patch;
    enum dtype dt = s->dtype;
    enum wfmt w = s->weights;
    int eager = s->framework == LLM_FW_PYTORCH || s->framework == LLM_FW_HF;
    /* autocast: timm's and HF's image models run from fp32 weights; a VLM
     * is loaded in its dtype (torch_dtype, vLLM) */
    int amp = eager && !tower && dtype_bytes(dt, 1.0) == 2.0;
    enum dtype rt = amp ? DT_FP32 : dt;     /* the residual stream's type */
    int fused_attn = s->attn != ATTN_NAIVE && s->attn != ATTN_MATH;
    /* a VLM's tower up to its feature layer: Hugging Face runs every layer
     * (output_hidden_states), vLLM and SGLang only those */
    uint64_t nl = tower && v->feature_layers && !eager ? v->feature_layers : v->layers;
    const char *pf = tower ? "vision." : "";
    char id[64];
#define ID(fmt, ...) (snprintf(id, sizeof id, fmt, __VA_ARGS__), id)
    /* the images (fp32 under autocast, cast for the convolution) to patches */
    if (amp)
        ew_amp(b, "pixels_cast", dt, B * v->channels * v->image * v->image, 1, 0, 0, 1, 0.0);
    linear(b, ID("%spatch_embed", pf), dt, amp, 0, B * P, h, kp, WF_NONE);
    if (amp) {
        /* cat(class token fp32, patches dt) is fp32; + the position table */
        ew_amp(b, "cls_cat", dt, rows * h, 0, 1, 1, 0, 0.0);
        llmb_ew(b, "pos_add", DT_FP32, rows * h, 1, 1, 1.0);
    } else {
        llmb_ew(b, ID("%scls_pos", pf), dt, rows * h, 1, 1, 1.0);
    }
    if (v->pre_norm)    /* CLIP's pre_layrnorm */
        llmb_rc(b, ID("%spre_norm", pf), OP_NORM, rt, rows, h);
    for (uint64_t l = 0; l < nl; l++) {
        char L[32];
        snprintf(L, sizeof L, "%s%s%llu", pf, tower ? "V" : "L", (unsigned long long)l);
        llmb_rc(b, ID("%s.norm1", L), OP_NORM, rt, rows, h);
        linear(b, ID("%s.qkv", L), dt, amp, 1, rows, 3 * h, h, w);
        llmb_attention(b, ID("%s.attention", L), dt, B, v->heads, v->heads, T, T, v->head_dim, 0, s->attn, dt);
        if (!fused_attn)    /* (B, H, T, D) to (B, T, H x D) */
            llmb_ew(b, ID("%s.attn_transpose", L), dt, rows * h, 1, 1, 0.0);
        linear(b, ID("%s.proj", L), dt, amp, 0, rows, h, h, w);
        if (amp)
            ew_amp(b, ID("%s.residual1", L), dt, rows * h, 1, 1, 1, 0, 1.0);
        else if (eager)
            llmb_ew(b, ID("%s.residual1", L), dt, rows * h, 2, 1, 1.0);
        llmb_rc(b, ID("%s.norm2", L), OP_NORM, rt, rows, h);
        linear(b, ID("%s.fc1", L), dt, amp, 1, rows, inter, h, w);
        llmb_ew(b, ID("%s.act", L), dt, rows * inter, 1, 1, v->act_flops);
        linear(b, ID("%s.fc2", L), dt, amp, 0, rows, h, inter, w);
        if (amp)
            ew_amp(b, ID("%s.residual2", L), dt, rows * h, 1, 1, 1, 0, 1.0);
        else if (eager)
            llmb_ew(b, ID("%s.residual2", L), dt, rows * h, 2, 1, 1.0);
    }
#undef ID
    if (tower)
        return;
    /* the final norm on every token (timm's forward_features), then the
     * classifier on the class token */
    llmb_rc(b, "final_norm", OP_NORM, rt, rows, h);
    if (v->labels > 0)
        linear(b, "head", dt, amp, 1, B, v->labels, h, WF_NONE);
}

void llmb_vlm_images(struct llmb *b, const struct llm_config *c, const struct llm_step *s)
{
    uint64_t n = s->batch * s->images, rows = n * c->image_tokens, h = c->hidden;
    enum dtype dt = s->dtype;
    llmb_vit(b, &c->vit, s, n, 1);
    /* the feature layer's tokens (the class token dropped: a view) through
     * LLaVA's projector, two Linears with biases (epilogues) */
    llmb_gemm(b, "mm_projector.linear_1", dt, rows, h, c->vit.hidden, s->weights);
    llmb_ew(b, "mm_projector.act", dt, rows * h, 1, 1, c->proj_act_flops);
    llmb_gemm(b, "mm_projector.linear_2", dt, rows, h, h, s->weights);
}
