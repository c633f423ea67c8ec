/* llmb_rank.c: one rank's step without a pipeline schedule in the LLM
 * trace builder (see llmb_rank.h): the forward (embedding, layers, head,
 * and the loss or the sampling), then in training the backward of every
 * op, last first, the gradients' reductions and the optimizer step. */
#include "llmb_rank.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "llmb_bwd.h"
#include "llmb_grad.h"
#include "llmb_layer.h"
#include "llmb_vit.h"

/* What one rank's step is sized by, and the gradients' state as the
 * backward goes. */
struct rank {
    uint64_t rows, h;           /* the rank's tokens, the hidden size */
    uint32_t tp, dp, zero;      /* TP ranks, replicas, ZeRO stage (0: none) */
    enum dtype dt;
    double eb;                  /* bytes an element */
    int train, sp, vpar;        /* training, sequence parallel, vocab-parallel */
    int vhead;                  /* inference with the vocabulary split (vLLM's layout) */
    uint64_t vocab;             /* this rank's rows of the vocabulary */
    uint64_t grad_layer;        /* a layer's gradients on this rank, bytes */
    double expert_layer;        /* a layer's expert weights (gate, up, down of each expert) */
    double dense_layer;         /* and the rest */
    uint32_t gather;            /* ZeRO-3's last weight gather (UINT32_MAX: none) */
    uint32_t last_ar;           /* the last gradient reduction (UINT32_MAX: none) */
};

/* An inference split by layer (llama.cpp -sm layer, ExLlama, accelerate's
 * device map): layer l runs on stage l * stages / layers, so the stages
 * hold equal shares of the layers, as llama.cpp's default split does on
 * equal GPUs.  Entering a new stage, the activations (bytes) are copied
 * from the stage before to it over whatever path the system has; the
 * stages run one after another. */
static void rank_stage(struct llmb *b, const struct llm_config *c, uint64_t l, uint64_t bytes, enum dtype dt)
{
    uint32_t st = (uint32_t)(l * b->stages / c->layers);
    if (st == b->device)
        return;
    char id[40];
    snprintf(id, sizeof id, "L%llu.act_send", (unsigned long long)l);
    struct op *cp = llmb_op(b, id, OP_MEMCPY, dt);
    cp->u.copy.bytes = bytes;
    cp->u.copy.dir = MEMCPY_P2P;
    cp->u.copy.peer = st;
    cp->u.copy.src = TRACE_NO_DEVICE;
    b->device = st;
}

/* The embedding and every layer over rows tokens of step s (the whole
 * prompt, or one piece of it: s->prompt and s->context are the piece's;
 * piece 1 if it is the only one or the first, last 1 if it is the last),
 * ZeRO-3 gathering each layer's weights. */
static void rank_layers(struct llmb *b, const struct llm_config *c, const struct llm_step *s,
                        struct rank *R, uint64_t rows, int first, int last)
{
    uint64_t h = R->h;
    uint32_t tp = R->tp, zero = R->zero;
    enum dtype dt = R->dt;
    double eb = R->eb;
    struct op *e = llmb_op(b, "embed", OP_EMBEDDING, dt);
    e->u.emb.tokens = rows;
    e->u.emb.dim = h;
    if (s->images > 0)  /* the projected images into their places in the prompt (masked_scatter) */
        llmb_ew(b, "image_merge", dt, s->batch * s->images * c->image_tokens * h, 1, 1, 0.0);
    if (R->sp)      /* the vocab-parallel lookups summed and scattered over the tokens */
        llmb_tp_coll(b, "embed_reduce_scatter", COLL_REDUCE_SCATTER, dt, (uint64_t)(rows * h * eb), tp);
    else if (R->vpar || R->vhead)
        llmb_allreduce(b, "embed_allreduce", dt, (uint64_t)(rows * h * eb));
    if (s->framework == LLM_FW_HF) {
        /* LlamaRotaryEmbedding: inv_freq times the positions in fp32
         * (a copy and a multiply), cat, cos and sin, each cast to dt */
        uint64_t half = rows * (c->head_dim / 2), full = rows * c->head_dim;
        llmb_ew(b, "rotary.positions", DT_FP32, rows, 1, 1, 0.0);
        llmb_ew(b, "rotary.freqs", DT_FP32, half, 2, 1, 1.0);
        llmb_ew(b, "rotary.cat", DT_FP32, full, 1, 1, 0.0);
        llmb_ew(b, "rotary.cos", DT_FP32, full, 1, 1, 10.0);
        llmb_ew(b, "rotary.cos_cast", dt, full, 1, 1, 0.0);
        llmb_ew(b, "rotary.sin", DT_FP32, full, 1, 1, 10.0);
        llmb_ew(b, "rotary.sin_cast", dt, full, 1, 1, 0.0);
    }
    for (uint64_t l = 0; l < c->layers; l++) {
        if (zero >= 3) {
            char gid[64];
            snprintf(gid, sizeof gid, "L%llu.param_allgather", (unsigned long long)l);
            /* on stream 2: a gather need not wait behind the gradients
             * of the layer before (FSDP and XLA overlap the two) */
            R->gather = llmb_grad_zero3(b, gid, dt, R->grad_layer, R->dense_layer,
                                        R->expert_layer, tp, R->gather);
        }
        if (b->stages > 1)
            rank_stage(b, c, l, (uint64_t)(rows * h * eb), dt);
        uint32_t first_op = b->t->nops;
        llmb_layer(b, c, s, l, rows, s->batch, tp);
        for (uint32_t k = first_op; k < b->t->nops; k++) {
            struct op *o = &b->t->ops[k];
            /* a later piece reads the first piece's weights; an earlier
             * piece's cache is part of the last piece's */
            if ((o->kind == OP_GEMM && !first) || (o->kind == OP_ATTENTION && !last))
                o->transient = 1;
            /* gathered for this use only (a rank's experts stay when no
             * other replica holds them) */
            if (zero >= 3 && o->kind == OP_GEMM &&
                !(b->ep > 1 && b->edp_group == UINT32_MAX && strstr(op_id(b->t, o), ".experts_") != NULL))
                o->transient = 1;
        }
    }
}

/* The forward: embedding and layers (the prompt in pieces when the step
 * says so: llama.cpp's ubatches), the final norm and the LM head, then the
 * sampling or the loss. */
static void rank_forward(struct llmb *b, const struct llm_config *c, const struct llm_step *s,
                         struct rank *R)
{
    uint64_t rows = R->rows, h = R->h;
    uint32_t tp = R->tp;
    enum dtype dt = R->dt;
    double eb = R->eb;
    int train = R->train, sp = R->sp, vpar = R->vpar;
    uint64_t vocab = R->vocab;
    if (c->encoder) {   /* a vision encoder: its own forward, no head over a vocabulary */
        llmb_vit(b, &c->vit, s, s->batch, 0);
        return;
    }
    if (s->images > 0)  /* a VLM: the images through the tower and the projector first */
        llmb_vlm_images(b, c, s);
    /* each piece runs embedding and layers in turn, its ops named "uN."
     * after the first's; each starts on the first stage with nothing to
     * wait for but the stream before it, so with a layer split the pieces
     * overlap across the stages (llama.cpp's pipeline parallelism) */
    uint64_t U = llm_ubatch_tokens(s, b->cp);
    if (U == 0)
        rank_layers(b, c, s, R, rows, 1, 1);
    uint32_t dev0 = b->device;
    char pfx0[sizeof b->prefix];
    snprintf(pfx0, sizeof pfx0, "%s", b->prefix);
    for (uint64_t off = 0; U > 0 && off < s->prompt; off += U) {
        struct llm_step piece = *s;
        piece.prompt = s->prompt - off < U ? s->prompt - off : U;
        piece.context = s->context + off;
        if (off > 0) {
            snprintf(b->prefix, sizeof b->prefix, "%.24su%u.", pfx0, (unsigned)(off / U));
            b->device = dev0;
            b->prev = UINT32_MAX;
        }
        rank_layers(b, c, &piece, R, s->batch * piece.prompt, off == 0, off + U >= s->prompt);
    }
    snprintf(b->prefix, sizeof b->prefix, "%s", pfx0);
    /* inference samples the last token of each sequence; training takes
     * the loss (a softmax cross-entropy) over every token */
    uint64_t out_rows = train ? rows : s->batch;
    if (s->framework == LLM_FW_HF)
        llmb_hf_rmsnorm(b, "final_norm", dt, rows, h);     /* LlamaModel's norm: every token */
    else
        llmb_rc(b, "final_norm", OP_NORM, dt, sp ? out_rows / tp : out_rows, h);
    if (sp)
        llmb_tp_coll(b, "final_allgather", COLL_ALL_GATHER, dt, (uint64_t)(rows * h * eb), tp);
    llmb_gemm(b, "lm_head", dt, out_rows, vocab, h, s->q4_k_m ? llm_w_more(s) : s->weights);
    if (R->vhead)   /* each rank's slice of the logits to the sampler (16-bit) */
        llmb_tp_coll(b, "logits_gather", COLL_ALL_GATHER, eb < 2 ? DT_FP16 : dt,
                     (uint64_t)((double)out_rows * (double)c->vocab * (eb < 2 ? 2 : eb)), tp);
    if (!train) {
        llmb_rc(b, "sample", OP_REDUCTION, dt, s->batch, c->vocab);
        return;
    }
    llmb_rc(b, "loss", OP_SOFTMAX, dt, rows, vocab);
    if (vpar) {     /* the max and the sum of each token's logits over the ranks */
        llmb_allreduce(b, "loss_max_allreduce", DT_FP32, rows * 4);
        llmb_allreduce(b, "loss_sum_allreduce", DT_FP32, rows * 4);
    }
}

/* Once a layer's backward is done (at its attn_norm, id base): its
 * gradients reduced over the replicas and then across slices. */
static void rank_layer_reduce(struct llmb *b, const char *base, struct rank *R)
{
    uint32_t tp = R->tp, dp = R->dp, zero = R->zero;
    enum dtype dt = R->dt;
    double eb = R->eb;
    double dense_layer = R->dense_layer, expert_layer = R->expert_layer;
    uint64_t grad_layer = R->grad_layer;
    uint32_t last_ar = R->last_ar;
    if (dp > 1) {
        char lid[TRACE_ID_MAX];
        snprintf(lid, sizeof lid, "%.*s.dp_%s", (int)strcspn(base, "."), base,
                 zero ? "reduce_scatter" : "allreduce");
        /* with EP inside DP (Megatron's and DeepSpeed-MoE's layout):
         * the non-expert gradients over every replica, each expert's
         * over the replicas that hold it */
        uint64_t bytes = b->ep > 1 ? (uint64_t)(dense_layer / tp * eb) : grad_layer;
        last_ar = llmb_dp_coll(b, lid, zero ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, dt, bytes,
                               b->prev, b->dp_group, 1);
        if (b->edp_group != UINT32_MAX) {
            snprintf(lid, sizeof lid, "%.*s.edp_%s", (int)strcspn(base, "."), base,
                     zero ? "reduce_scatter" : "allreduce");
            last_ar = llmb_dp_coll(b, lid, zero ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, dt,
                                   (uint64_t)(expert_layer / b->ep / tp * eb), last_ar,
                                   b->edp_group, 1);
        }
    }
    if (b->dcn_group != UINT32_MAX) {
        /* the slice's reduced gradients (this rank's share) over the slices */
        char lid[TRACE_ID_MAX];
        snprintf(lid, sizeof lid, "%.*s.dcn_allreduce", (int)strcspn(base, "."), base);
        last_ar = llmb_dp_coll(b, lid, COLL_ALL_REDUCE, dt,
                               llmb_grad_dcn_share(b, grad_layer, dense_layer, expert_layer, tp, dp, zero, eb),
                               dp > 1 ? last_ar : b->prev, b->dcn_group, 1);
    }
    R->last_ar = last_ar;
}

/* the backward: every op's, last first, on the same stream; with TP the
 * forward's all-reduces have none, and the column-parallel projections'
 * input gradients are all-reduced instead; with DP each layer's
 * gradients are all-reduced on stream 1 once its backward is done */
static void rank_backward(struct llmb *b, const struct llm_config *c, const struct llm_step *s,
                          struct rank *R)
{
    uint64_t rows = R->rows, h = R->h;
    uint32_t tp = R->tp, zero = R->zero;
    enum dtype dt = R->dt;
    double eb = R->eb;
    int sp = R->sp;
    struct trace *t = b->t;
    uint32_t first = t->nops;
    while (first > 0 && t->ops[first - 1].device == b->device)
        first--;
    uint32_t nfwd = t->nops;
    char cur_layer[16] = "", gather_layer[16] = "";
    for (uint32_t j = nfwd; j-- > first;) {
        struct op src = t->ops[j];
        /* the id without the rank prefix: llmb_op puts it back */
        char base[TRACE_ID_MAX];    /* a copy: llmb_op may move the trace's strings */
        snprintf(base, sizeof base, "%s", op_id(t, &src) + strlen(b->prefix));
        if (zero >= 3 && src.kind != OP_COLLECTIVE && base[0] == 'L') {
            /* entering a layer's backward: its weights gathered again */
            size_t ln = strcspn(base, ".");
            if (ln < sizeof gather_layer && (strncmp(base, gather_layer, ln) != 0 || gather_layer[ln] != '\0')) {
                snprintf(gather_layer, sizeof gather_layer, "%.*s", (int)ln, base);
                char gid[64];
                snprintf(gid, sizeof gid, "%s.param_allgather.bwd", gather_layer);
                R->gather = llmb_grad_zero3(b, gid, dt, R->grad_layer, R->dense_layer,
                                            R->expert_layer, tp, R->gather);
            }
        }
        if (s->recompute)
            llmb_bwd_recompute(b, base, 0, cur_layer, &t->ops[first], nfwd - first, NULL, NULL);
        if (llmb_bwd_sp(b, &src, base, sp) || llmb_bwd_op(b, &src, base, sp) == NULL)
            continue;
        if (tp > 1 && !sp && llmb_bwd_column_parallel(base, c->gated)) {
            char aid[TRACE_ID_MAX];
            snprintf(aid, sizeof aid, "%.*s.grad_allreduce", (int)sizeof aid - 16, base);
            llmb_allreduce(b, aid, dt, (uint64_t)(rows * h * eb));
        }
        if (llmb_ends_with(base, ".attn_norm"))    /* a layer's backward is done */
            rank_layer_reduce(b, base, R);
    }
}

/* The embedding's and head's gradients reduced, AdamW, and with ZeRO 1/2
 * the updated weights gathered. */
static void rank_optimizer(struct llmb *b, const struct llm_config *c, struct rank *R)
{
    uint64_t h = R->h;
    uint32_t tp = R->tp, dp = R->dp, zero = R->zero;
    enum dtype dt = R->dt;
    double eb = R->eb;
    uint64_t vocab = R->vocab;
    double expert_layer = R->expert_layer;
    uint32_t last_ar = R->last_ar;
    uint64_t embed_bytes = (uint64_t)((double)vocab * h * (c->tied ? 1 : 2) * eb);
    if (dp > 1)   /* embedding and LM head */
        last_ar = llmb_dp_coll(b, zero ? "embed.dp_reduce_scatter" : "embed.dp_allreduce",
                               zero ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, dt, embed_bytes, b->prev,
                               b->dp_group, 1);
    if (b->dcn_group != UINT32_MAX)
        last_ar = llmb_dp_coll(b, "embed.dcn_allreduce", COLL_ALL_REDUCE, dt,
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
    llmb_ew(b, "adamw", DT_FP32, (uint64_t)ceil(adam), 4, 4, 14.0);
    llmb_wait(b, last_ar);
    if (zero == 1 || zero == 2) {
        /* the updated 16-bit weights back to every replica, before the
         * next step's forward (here, at the step's end) */
        double gathered = ep_in_dp ? (double)llm_param_count(c) - experts_all : (double)llm_param_count(c);
        uint32_t ag = llmb_dp_coll(b, "param_allgather", COLL_ALL_GATHER, dt,
                                   (uint64_t)(gathered / tp * eb), b->prev, b->dp_group, 1);
        if (ep_in_dp && b->edp_group != UINT32_MAX)     /* this rank's experts, from their replicas */
            ag = llmb_dp_coll(b, "expert_param_allgather", COLL_ALL_GATHER, dt,
                              (uint64_t)(experts_all / b->ep / tp * eb), ag, b->edp_group, 1);
        b->prev = ag;
    }
}

/* One rank's step (of tp ranks). */
void llmb_rank(struct llmb *b, const struct llm_config *c, const struct llm_step *s, uint32_t tp,
               uint32_t dp)
{
    struct rank R = {.tp = tp, .dp = dp, .gather = UINT32_MAX, .last_ar = UINT32_MAX};
    uint64_t T = s->phase == LLM_DECODE ? 1 : s->prompt / b->cp;
    uint64_t h = c->hidden;
    R.rows = s->batch * T;
    R.h = h;
    R.train = s->phase == LLM_TRAIN;
    R.dt = s->dtype;
    R.eb = dtype_bytes(R.dt, 1.0);
    /* training with TP shards the vocabulary (Megatron's vocab-parallel
     * embedding, LM head and cross-entropy: each rank 1/tp of the rows of
     * the table, an all-reduce of the embedding's output, two of a number
     * per token for the loss); inference keeps them whole, as gpt-fast,
     * but for vLLM's layout (and SGLang's, which shares its layers):
     * VocabParallelEmbedding, its output all-reduced, and ParallelLMHead,
     * each rank 1/tp of the vocabulary (padded), the logits gathered to the
     * sampler (vllm/model_executor/layers/vocab_parallel_embedding.py,
     * logits_processor.py: tensor_model_parallel_gather; strata's
     * all_gather of the same bytes) */
    R.vpar = R.train && tp > 1;
    R.vhead = !R.train && tp > 1 && s->framework == LLM_FW_VLLM;
    R.vocab = R.vpar ? c->vocab / tp : R.vhead ? (c->vocab + tp - 1) / tp : c->vocab;
    R.sp = s->sp && tp > 1 && R.train;     /* sequence parallelism */
    /* ZeRO (train, dp > 1): stage 1 and 2 shard the optimizer state (and the
     * gradients) over the replicas, so gradients are reduce-scattered, each
     * replica updates its 1/dp and the updated weights are all-gathered;
     * stage 3 shards the weights too: each layer's are all-gathered before
     * its forward and again before its backward, on stream 1, prefetched
     * as far ahead as the links allow (DeepSpeed bounds the prefetch by
     * stage3_prefetch_bucket_size; not modelled) */
    R.zero = R.train && dp > 1 ? s->zero : 0;
    double layer_params = (double)(llm_param_count(c) - 2 * c->vocab * h - h) / (double)c->layers;
    if (c->tied)
        layer_params = (double)(llm_param_count(c) - c->vocab * h - h) / (double)c->layers;
    R.grad_layer = (uint64_t)(layer_params / tp * R.eb);
    /* a layer's expert weights (gate, up, down of each expert), and the rest */
    R.expert_layer = (double)c->experts * 3.0 * (double)h * (double)c->intermediate;
    R.dense_layer = layer_params - R.expert_layer;
    rank_forward(b, c, s, &R);
    if (!R.train)
        return;
    rank_backward(b, c, s, &R);
    rank_optimizer(b, c, &R);
}
