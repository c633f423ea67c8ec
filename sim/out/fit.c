/* fit.c: `strata fit` (sim/cli/cmd_fit.c): will a model run on a device, and what does it cost
 * when it does not?
 *
 *   strata fit --hw CFG --model HF.json --phase decode|prefill|train
 *              [--batch B] [--prompt P] [--context C] [--dtype bf16]
 *              [--weights FMT] [--kv-dtype D] [--json OUT]
 *
 * The budget, per device:
 *   weights      every parameter at its storage size: linear layers in the
 *                weight format (wfmt.h; q4_k_m per tensor as the generator
 *                assigns it), embeddings and norms in the dtype
 *   kv_cache     batch x (context + new tokens) x layers x 2 x kv_heads x
 *                head_dim x kv bytes
 *   activations  decode: batch x (4 hidden + 2 intermediate) values;
 *                prefill: batch x prompt x (4 hidden + 2 intermediate)
 *                (flash attention, no score matrix); train: the stored
 *                activations of every layer, tensor by tensor for the
 *                model's shapes (GQA, gated or plain MLP, experts' top-k
 *                copies), as Korthikanti et al. 2022 ("Reducing Activation
 *                Recomputation in Large Transformer Models") count them: 34
 *                x tokens x hidden bytes a GPT layer at 16 bits with dropout,
 *                plus the attention scores where attention keeps them
 *   optimizer    train only: Adam with fp32 master weights, momentum and
 *                variance (12 B/param) plus 16-bit gradients (2 B/param)
 *   workspace    1 GiB for the runtime, library handles and scratch
 *                (assumption, not measured)
 * If the total exceeds the device memory, the part of the weights that does
 * not fit has to be streamed every step: over the host link (PCIe) from
 * host memory, or from storage at FIT_STORAGE_BPS.
 */
#include "fit.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "jsonout.h"
#include "llm.h"

#define FIT_WORKSPACE_BYTES (1024.0 * 1024.0 * 1024.0)
#define FIT_STORAGE_BPS 7e9 /* a PCIe 4.0 x4 NVMe SSD's sequential read, assumption */

static double wbytes(const struct llm_step *s, enum wfmt w, double params)
{
    if (w == WF_NONE)
        return params * dtype_bytes(s->dtype, 1.0);
    return params * wfmt_bits(w) / 8.0;
}

static int more_bits(uint64_t i, uint64_t n)
{
    return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

/* What the parts of the budget share: the model's shapes as one rank
 * holds them, and what earlier parts found. */
struct fshape {
    double h, hd, inter, q;     /* hidden size, head dim, intermediate size, query width */
    enum wfmt w;                /* the linear layers' weight format */
    double eb;                  /* bytes an activation value */
    double t;                   /* tensor-parallel ranks */
    double dp;                  /* ranks the training state is sharded over */
    double kvh;                 /* K/V heads on a rank (replicated below t) */
    double act_tokens;          /* tokens whose activations a rank holds at once */
    double w_embed, w_layers, w_experts; /* weight bytes: embedding, layers, the rank's experts */
    /* training */
    double per_tok;             /* stored activation bytes a layer and token, over h, at 16 bits */
    double experts;             /* parameters of the experts that EP inside DP shards (0: none) */
    double pe;                  /* of those, this rank's */
    double edp;                 /* the replicas an expert's state is sharded over */
};

/* MLA's attention weights on one of t ranks: the down projections of q
 * and the latent and their norms on every rank, q's up projection, the
 * latent's to k and v and the output projection split by heads. */
static double mla_rank_params(const struct llm_config *c, double t)
{
    double h = (double)c->hidden, heads = (double)c->heads, ql = (double)c->q_lora;
    double qk = (double)(c->nope_dim + c->rope_dim), lat = (double)(c->kv_lora + c->rope_dim);
    double q = c->q_lora ? h * ql + ql + ql * heads * qk / t : h * heads * qk / t;
    return q + h * lat + (double)c->kv_lora + (double)c->kv_lora * heads * (double)(c->nope_dim + c->v_dim) / t +
           heads * (double)c->v_dim * h / t;
}

/* every parameter at its storage size, this rank's share */
static void budget_weights(const struct llm_config *c, const struct llm_step *s, int train,
                           struct fshape *z, struct fit_result *f)
{
    double h = z->h, hd = z->hd, inter = z->inter, q = z->q, t = z->t, kvh = z->kvh;
    enum wfmt w = z->w;
    double eb = z->eb;
    /* vocab-parallel in training, and in vLLM's inference (llmb_rank.c) */
    double vshard = train || s->framework == LLM_FW_VLLM ? t : 1;
    double vrows = vshard > 1 ? ceil((double)c->vocab / vshard) : (double)c->vocab; /* a rank's rows */
    f->weights = vrows * h * eb;                            /* embedding */
    const double w_embed = f->weights;
    if (llm_hybrid(c)) {
        /* a Mamba-2 hybrid: its blocks' parameters in the weights' format,
         * norms and the SSM's small vectors with them, a rank's 1/t of
         * them with tensor parallelism (every block splits its heads or
         * its width, llmb_ssm.c; the blocks' own norms, 2 x hidden a layer
         * at most, taken as split too) */
        double head = c->tied ? 0 : (double)c->vocab * h;
        double layers = ((double)llm_param_count(c) - (double)c->vocab * h - h - head) / t;
        f->weights += wbytes(s, w, layers) + h * eb + (head > 0 ? wbytes(s, s->weights, vrows * h) : 0);
        z->w_embed = w_embed;
        z->w_layers = wbytes(s, w, layers);
        z->w_experts = 0;
        return;
    }
    double w_experts = 0;                                   /* the rank's experts' share */
    for (uint64_t l = 0; l < c->layers; l++) {
        enum wfmt wdown = s->q4_k_m && more_bits(l, c->layers) ? llm_w_more(s) : w;
        /* experts per rank: all of them, or (expert parallelism) 1/ep,
         * whole when EP spans the TP group (--tp T --ep T), else 1/t of each */
        /* a layer's MLP is the experts (moe_intermediate_size wide) or dense
         * (DeepSeek's first layers, Qwen's mlp_only_layers) */
        int moe = llm_layer_moe(c, l);
        double li = moe ? (double)c->moe_inter : inter;
        double ffn = moe ? (double)c->experts / (s->ep > 1 ? (double)s->ep : 1.0) : 1.0;
        double ft = moe && s->ep > 1 && s->ep == t ? 1.0 : t;
        double in_mats = c->gated ? 2 : 1;                  /* gate and up, or up */
        double attn = c->kv_lora ? mla_rank_params(c, t) : h * (q / t + 2 * kvh * hd) + q / t * h;
        f->weights += wbytes(s, w, attn + in_mats * h * li / ft * ffn);
        f->weights += wbytes(s, wdown, li / ft * h * ffn);
        if (moe)
            w_experts += wbytes(s, w, 2 * h * li / ft * ffn) + wbytes(s, wdown, li / ft * h * ffn);
        if (moe && c->shared_experts) {  /* split over TP as the dense MLP */
            double sh = (double)(c->shared_experts * c->moe_inter);
            f->weights += wbytes(s, w, 2 * h * sh / t) + wbytes(s, wdown, sh / t * h);
        }
        f->weights += 2 * h * eb;                           /* norms, on every rank */
    }
    const double w_layers = f->weights - w_embed;
    f->weights += h * eb;                                   /* final norm */
    if (!c->tied)
        f->weights += wbytes(s, s->q4_k_m ? llm_w_more(s) : s->weights, vrows * h);
    z->w_embed = w_embed;
    z->w_layers = w_layers;
    z->w_experts = w_experts;
}

/* the KV cache, and the activations of inference (training's replace them) */
static void budget_cache(const struct llm_config *c, const struct llm_step *s, int train,
                         struct fshape *z, struct fit_result *f)
{
    double h = z->h, hd = z->hd, inter = z->inter, t = z->t, kvh = z->kvh, eb = z->eb;
    double tokens_new = s->phase == LLM_DECODE ? 1 : (double)s->prompt;
    double seq = (double)s->context + tokens_new;
    if (s->page_size > 0 && !train)      /* a paged cache holds whole pages */
        seq = ceil(seq / s->page_size) * s->page_size;
    if (c->kv_lora)     /* MLA: the latent and the RoPE key (llm_kv_elems), on every rank */
        f->kv_cache = (double)s->batch * seq * (double)c->layers * (double)llm_kv_elems(c, (uint32_t)t) *
                      dtype_bytes(s->kv_dtype < DT_COUNT ? s->kv_dtype : s->dtype, 1.0);
    else        /* the layers with attention: all but a hybrid's others */
        f->kv_cache = (double)s->batch * seq * (double)llm_attn_layers(c) * 2 * kvh * hd *
                      dtype_bytes(s->kv_dtype < DT_COUNT ? s->kv_dtype : s->dtype, 1.0);
    /* a hybrid's mixers keep a fixed state a sequence: the SSM's in fp32
     * (vLLM's mamba_ssm_cache_dtype for these models), the convolution's
     * window in the model's dtype */
    f->ssm_state = 0;       /* a rank holds 1/t of the heads and groups */
    for (uint64_t l = 0; l < c->layers && l < LLM_MAX_LAYERS; l++)
        if (c->kind[l] == LLM_LAYER_MAMBA)
            f->ssm_state += (double)s->batch * ((double)llm_ssm_state_elems(c) * 4.0 +
                                                (double)llm_ssm_conv_elems(c) * eb) / t;
    /* context parallelism: a rank holds 1/cp of each sequence, and the
     * training state is sharded over the data x context ranks */
    double cpn = train && s->cp > 1 ? s->cp : 1;
    double act_tokens = (double)s->batch * tokens_new / cpn;
    if (train && s->pp <= 1 && s->microbatches > 1)
        act_tokens /= s->microbatches;  /* gradient accumulation: one micro-batch's at a time */
    z->dp *= cpn;
    f->activations = act_tokens * (4 * h + 2 * inter / t) * eb;
    z->act_tokens = act_tokens;
}

/* training's stored activations */
static void train_activations(const struct llm_config *c, const struct llm_step *s,
                              struct fshape *z, struct fit_result *f)
{
    double h = z->h, hd = z->hd, inter = z->inter, q = z->q, t = z->t, kvh = z->kvh, eb = z->eb;
    double act_tokens = z->act_tokens;
    /* stored activations per layer and token, bytes at 16 bits, tensor
     * by tensor as Korthikanti et al. 2022 ("Reducing Activation
     * Recomputation in Large Transformer Models", section 4) count them,
     * for the model's own shapes.  On every TP rank (split over them
     * with sequence parallelism): the two norms' inputs, the QKV and
     * MLP inputs (2 h each), and with dropout its two 1-byte masks.
     * Split over the TP ranks: Q, K, V and the attention output (2 q,
     * 2 kv, 2 kv, 2 q; K/V heads replicated below t); the MLP's
     * up-projection output and activation output (4 x intermediate),
     * gated, the gate and up outputs and their product (6 x
     * intermediate); with experts, that for each of the top-k copies of
     * a token on the busiest rank (--expert-load) and the dispatched
     * copies' inputs (2 h each).  A GPT layer (MHA, plain MLP of 4 h)
     * gives the paper's s b h (10 + 24 / t) with dropout (eq. 2), 34 /
     * t with sequence parallelism (eq. 5); flash attention keeps no
     * scores */
    double masks = s->dropout > 0 ? 2.0 * h : 0.0;
    double spd = s->sp && t > 1 ? t : 1;
    double copies = c->experts ? (double)c->experts_per_tok * (s->expert_load > 1 ? s->expert_load : 1.0) : 1.0;
    double mlp = (c->gated ? 6.0 : 4.0) * inter / t * copies + (c->experts ? 2.0 * h * copies / spd : 0.0);
    double per_tok = ((8.0 * h + masks) / spd + 4.0 * q / t + 4.0 * kvh * hd + mlp) / h;
    /* attention without a fused kernel keeps its probabilities for the
     * backward: the eq.'s 5 a s / h (softmax output, dropout mask and
     * dropout output), 2 a s / h without dropout, over the t ranks */
    if (s->attn == ATTN_MATH || s->attn == ATTN_NAIVE || s->attn == ATTN_MEGATRON || s->attn == ATTN_GGML)
        per_tok += (masks > 0 ? 5.0 : 2.0) * (double)c->heads * (double)s->prompt / (h * t);
    f->activations = per_tok * act_tokens * h * (double)c->layers * eb / 2.0;
    if (s->recompute)
        /* full recomputation (Korthikanti et al. 2022, section 4): each
         * layer's input stays (2 s b h bytes at 16 bits), and one layer's
         * full set lives while its forward is recomputed */
        f->activations = act_tokens * h * eb * (double)c->layers / (s->sp && t > 1 ? t : 1) +
                         per_tok * act_tokens * h * eb / 2.0;
    z->per_tok = per_tok;
}

/* training's optimizer state and gradients, and ZeRO 3's weights */
static void train_state(const struct llm_config *c, const struct llm_step *s, struct fshape *z,
                        struct fit_result *f)
{
    double h = z->h, inter = z->inter, t = z->t;
    /* fp32 master weights and Adam's two moments (12 bytes a
     * parameter) and 16-bit gradients (2), this rank's 1/t; ZeRO 1
     * shards the first over the replicas, ZeRO 2 the gradients too,
     * ZeRO 3 the 16-bit weights as well */
    /* EP inside DP (any --ep but --tp's; --ep E alone is --dp E): a
     * rank's 1/t of the dense state, sharded over the dp replicas, and
     * of its 1/ep of the experts, over the dp / ep that hold them */
    int ep_dp = s->ep > 1 && s->ep != t;
    if (ep_dp && z->dp < s->ep)
        z->dp = s->ep;
    double dp = z->dp;
    double experts = ep_dp ? (double)c->experts * 3.0 * h * inter * (double)c->layers : 0.0;
    double edp = ep_dp ? dp / (double)s->ep : 1.0;
    double pd = (f->params - experts) / t, pe = ep_dp ? experts / (double)s->ep / t : 0.0;
    f->optimizer = pd * 12.0 / (s->zero >= 1 ? dp : 1) + pd * 2.0 / (s->zero >= 2 ? dp : 1) +
                   pe * 12.0 / (s->zero >= 1 ? edp : 1) + pe * 2.0 / (s->zero >= 2 ? edp : 1);
    if (s->zero >= 3)   /* with EP inside DP, the experts' over the dp / ep holding them */
        f->weights = (f->weights - (ep_dp ? z->w_experts : 0)) / dp + (ep_dp ? z->w_experts / edp : 0);
    f->kv_cache = 0; /* training keeps no KV cache */
    z->experts = experts;
    z->pe = pe;
    z->edp = edp;
}

/* pipeline (1F1B): the first stage is the fullest, with the
 * embedding, its share of the layers (earlier stages take the
 * remainder) and min(pp, micro-batches) micro-batches' stored
 * activations in flight (Narayanan et al. 2021, section 2.2) */
static void train_pipeline(const struct llm_config *c, const struct llm_step *s,
                           const struct fshape *z, struct fit_result *f)
{
    double h = z->h, t = z->t, dp = z->dp, eb = z->eb, edp = z->edp, pe = z->pe;
    double act_tokens = z->act_tokens, per_tok = z->per_tok, experts = z->experts;
    double pp = s->pp, L = (double)c->layers;
    double l0 = floor(L / pp) + (c->layers % s->pp ? 1 : 0);
    /* interleaved: the first stage holds chunks 0, pp, 2 pp, ... of
     * the pp v shares (earlier shares take the remainder) */
    uint64_t nch = (uint64_t)s->pp * (s->vpp > 1 ? s->vpp : 1), per = c->layers / nch;
    if (s->vpp > 1) {
        l0 = 0;
        for (uint64_t v = 0; v < s->vpp; v++)
            l0 += (double)(per + (v * s->pp < c->layers % nch ? 1 : 0));
    }
    double mb = s->microbatches ? s->microbatches : (double)s->batch;
    double inflight = pp < mb ? pp : mb;
    double share = l0 / L;
    f->weights = (z->w_embed + z->w_layers * share) / (s->zero >= 3 ? dp : 1);
    double pv = (double)c->vocab * h / t;
    double pl = (f->params - (double)c->vocab * h * (c->tied ? 1 : 2) - h - experts) / t;
    double p0 = pv + pl * share, x0 = pe * share;
    f->optimizer = p0 * 12.0 / (s->zero >= 1 ? dp : 1) + p0 * 2.0 / (s->zero >= 2 ? dp : 1) +
                   x0 * 12.0 / (s->zero >= 1 ? edp : 1) + x0 * 2.0 / (s->zero >= 2 ? edp : 1);
    /* layer-micro-batches stored at the peak: l0 layers of min(pp,
     * mb) micro-batches; interleaved (--vpp v), the first stage's
     * 2 (pp - 1) + (v - 1) pp warm-up chunk-forwards and one more,
     * of L / (pp v) layers each: 1 + (pp - 1) / (pp v) times L /
     * pp layers of pp micro-batches (Korthikanti et al. 2022,
     * section 4.2) */
    double held = l0 * inflight;
    if (s->vpp > 1) {
        double v = s->vpp, lc = (double)(per + (c->layers % nch ? 1 : 0));
        double chunks = 2.0 * (pp - 1) + (v - 1) * pp + 1;
        held = lc * (chunks < mb * v ? chunks : mb * v);
    }
    f->activations = f->activations / L * held / (double)s->batch * ((double)s->batch / mb);
    if (s->recompute)
        f->activations = act_tokens / mb * h * eb * held / (s->sp && t > 1 ? t : 1) +
                         per_tok * act_tokens / mb * h * eb / 2.0;
}

/* the total against the device's memory, and what does not fit */
static void budget_total(const struct hw_config *cfg, struct fit_result *f)
{
    f->workspace = FIT_WORKSPACE_BYTES;
    f->total = f->weights + f->kv_cache + f->ssm_state + f->activations + f->optimizer + f->workspace;
    f->capacity = (double)cfg_dram(cfg)->capacity_bytes;
    f->fits = f->total <= f->capacity;
    if (!f->fits) {
        double over = f->total - f->capacity;
        f->spill = over < f->weights ? over : f->weights;
        f->spill_pcie_s = level_rate(cfg_host(cfg)) > 0 ? f->spill / level_rate(cfg_host(cfg)) : (double)INFINITY;
        f->spill_storage_s = f->spill / FIT_STORAGE_BPS;
    }
}

void fit_budget(const struct hw_config *cfg, const struct llm_config *c, const struct llm_step *s,
                int train, struct fit_result *f)
{
    memset(f, 0, sizeof *f);
    struct fshape z;
    memset(&z, 0, sizeof z);
    z.h = (double)c->hidden;
    z.hd = (double)c->head_dim;
    z.inter = (double)c->intermediate;
    z.q = (double)c->heads * z.hd;
    z.w = s->weights;
    z.eb = dtype_bytes(s->dtype, 1.0);
    z.t = s->tp > 1 ? s->tp : 1;
    z.dp = s->dp > 1 ? s->dp : 1;
    z.kvh = (double)c->kv_heads >= z.t ? (double)c->kv_heads / z.t : 1;   /* replicated below t */
    f->params = (double)llm_param_count(c);
    budget_weights(c, s, train, &z, f);
    budget_cache(c, s, train, &z, f);
    if (train) {
        train_activations(c, s, &z, f);
        train_state(c, s, &z, f);
        if (s->pp > 1)
            train_pipeline(c, s, &z, f);
    }
    budget_total(cfg, f);
    f->weights_decoded = f->weights;
    if (wfmt_decoded(s->weights) != WF_NONE) {
        /* the same model with the formats decoded: what the kernels read */
        struct llm_step sd = *s;
        sd.weights = wfmt_decoded(s->weights);
        struct fit_result fd;
        fit_budget(cfg, c, &sd, train, &fd);
        f->weights_decoded = fd.weights;
    }
}

uint64_t fit_kv_blocks(const struct hw_config *cfg, const struct llm_config *c, const struct llm_step *s,
                       double util, uint64_t max_tokens, uint32_t block_size, struct fit_result *f,
                       double *per_token, uint32_t max_seqs)
{
    struct llm_step one = *s;   /* one token, no context, a contiguous cache: the bytes a token */
    one.phase = LLM_DECODE;
    one.batch = 1;
    one.context = 0;
    one.page_size = 0;
    struct fit_result f1;
    fit_budget(cfg, c, &one, 0, &f1);
    *per_token = f1.kv_cache;
    struct llm_step pre = one;  /* the largest step's activations (vLLM's profile run) */
    pre.phase = LLM_PREFILL;
    pre.prompt = max_tokens;
    fit_budget(cfg, c, &pre, 0, f);
    /* a hybrid's state for every sequence a step may hold, set aside
     * first (vLLM gives each request its state before its cache) */
    double left = util * f->capacity - f->weights - f->activations - f->workspace -
                  f1.ssm_state * (double)max_seqs;
    if (!(left > 0) || !(*per_token > 0))
        return 0;
    return (uint64_t)(left / (*per_token * block_size));
}

int fit_json(const struct fit_result *f, const char *path, struct diag *d)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, "strata_fit", 1);
    cJSON_AddNumberToObject(r, "params", f->params);
    cJSON_AddNumberToObject(r, "weights_bytes", f->weights);
    if (f->weights_decoded != f->weights)
        cJSON_AddNumberToObject(r, "weights_decoded_bytes", f->weights_decoded);
    cJSON_AddNumberToObject(r, "kv_cache_bytes", f->kv_cache);
    if (f->ssm_state > 0)
        cJSON_AddNumberToObject(r, "ssm_state_bytes", f->ssm_state);
    cJSON_AddNumberToObject(r, "activation_bytes", f->activations);
    cJSON_AddNumberToObject(r, "optimizer_bytes", f->optimizer);
    cJSON_AddNumberToObject(r, "workspace_bytes", f->workspace);
    cJSON_AddNumberToObject(r, "total_bytes", f->total);
    cJSON_AddNumberToObject(r, "capacity_bytes", f->capacity);
    cJSON_AddBoolToObject(r, "fits", f->fits);
    if (!f->fits) {
        cJSON_AddNumberToObject(r, "spill_bytes", f->spill);
        cJSON_AddNumberToObject(r, "spill_pcie_s_per_step", f->spill_pcie_s);
        cJSON_AddNumberToObject(r, "spill_storage_s_per_step", f->spill_storage_s);
    }
    int rc = jout_write(r, path, d);
    cJSON_Delete(r);
    return rc;
}
