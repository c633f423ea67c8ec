/* llmb_pp.c: the pipeline schedule in the LLM trace builder (see
 * llmb_pp.h).
 *
 * Pipeline parallelism, Megatron's 1F1B schedules: the layers split over
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
 * consumer waits for.  Each stage ends with AdamW over its own layers.
 */
#include "llmb_pp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "llmb_bwd.h"
#include "llmb_grad.h"
#include "llmb_layer.h"
#include "llmb_par.h"

/* The schedule's shape, and where its sends and waits are kept. */
struct pipe {
    uint32_t pp, mb, tp, dp;    /* stages, micro-batches, TP ranks, replicas */
    uint32_t dp_sim;            /* replicas given ops */
    uint32_t vpp, nchunk;       /* model chunks a stage, and in all */
    uint64_t batch, rows;       /* a micro-batch's sequences and tokens */
    uint64_t per, extra;        /* layers a chunk, and the remainder the first chunks take */
    uint64_t act_bytes;         /* what a send carries */
    double eb;                  /* bytes an element */
    /* per simulated device, chunk and micro-batch: the forward's send, the
     * backward's send, and the deps slots of the forward's and the
     * backward's first ops (filled once every sender exists) */
    uint32_t *fsend, *bsend, *fslot, *bslot;
};

/* One pipeline step's place: what it holds and where its waits go. */
struct ppstep {
    int embed, head;            /* the first chunk's embedding, the last's head and loss */
    uint64_t l0, l1;            /* its layers [l0, l1) */
    uint32_t m;                 /* the micro-batch */
    int bwd;                    /* backward, else forward */
    uint32_t *slot;             /* the deps slot its first op gets (NULL: none) */
    int last;                   /* the last micro-batch's backward: gradients reduced */
    uint32_t *last_ar;          /* the stage's last gradient reduction */
};

/* devices: tensor-parallel ranks fastest, then replicas, then stages
 * (Megatron's order: a TP group inside a node); pp_ix numbers the
 * simulated ones the same way */
static uint32_t pp_dev(const struct pipe *P, uint32_t st, uint32_t dr, uint32_t tr)
{
    return (st * P->dp + dr) * P->tp + tr;
}

static size_t pp_ix(const struct pipe *P, uint32_t st, uint32_t dr, uint32_t tr, uint32_t v,
                    uint32_t m)
{
    return ((((size_t)st * P->dp_sim + dr) * P->tp + tr) * P->vpp + v) * P->mb + m;
}

/* A step's forward, into builder fb (a scratch region when the step is a
 * backward): with TP, llmb_rank's vocab-parallel embedding, head and loss. */
static void step_forward(struct llmb *fb, const struct llm_config *c, const struct llm_step *s,
                         const struct pipe *P, const struct ppstep *q)
{
    enum dtype dt = s->dtype;
    uint32_t tp = P->tp;
    uint64_t rows = P->rows;
    uint64_t vocab = tp > 1 ? c->vocab / tp : c->vocab, act = (uint64_t)((double)rows * c->hidden * P->eb);
    int sp = s->sp && tp > 1;     /* sequence parallelism, as llmb_rank */
    if (q->embed) {
        struct op *e = llmb_op(fb, "embed", OP_EMBEDDING, dt);
        e->u.emb.tokens = rows;
        e->u.emb.dim = c->hidden;
        if (sp)
            llmb_tp_coll(fb, "embed_reduce_scatter", COLL_REDUCE_SCATTER, dt, act, tp);
        else if (tp > 1)
            llmb_allreduce(fb, "embed_allreduce", dt, act);
    }
    for (uint64_t l = q->l0; l < q->l1; l++)
        llmb_layer(fb, c, s, l, rows, P->batch, tp);
    if (q->head) {
        llmb_rc(fb, "final_norm", OP_NORM, dt, sp ? rows / tp : rows, c->hidden);
        if (sp)
            llmb_tp_coll(fb, "final_allgather", COLL_ALL_GATHER, dt, act, tp);
        llmb_gemm(fb, "lm_head", dt, rows, vocab, c->hidden, s->weights);
        llmb_rc(fb, "loss", OP_SOFTMAX, dt, rows, vocab);
        if (tp > 1) {
            llmb_allreduce(fb, "loss_max_allreduce", DT_FP32, rows * 4);
            llmb_allreduce(fb, "loss_sum_allreduce", DT_FP32, rows * 4);
        }
    }
}

/* A layer's gradients over the data-parallel replicas (and then the
 * slices), once all its micro-batches are in: after its backward (at its
 * attn_norm, id base) in the last micro-batch. */
static void step_layer_reduce(struct llmb *b, const struct llm_config *c, const struct llm_step *s,
                              const struct pipe *P, const struct ppstep *q, const char *base)
{
    enum dtype dt = s->dtype;
    uint32_t tp = P->tp, dp = P->dp;
    double eb = P->eb;
    double lp = (double)(llm_param_count(c) - c->vocab * c->hidden * (c->tied ? 1 : 2) - c->hidden) /
                (double)c->layers;
    /* with EP inside DP: the non-expert gradients over the replicas, each
     * expert's over the replicas that hold it (llmb_rank's rule) */
    double expert_layer = (double)c->experts * 3.0 * (double)c->hidden * (double)c->intermediate;
    uint64_t grad_layer = (uint64_t)((b->ep > 1 ? lp - expert_layer : lp) / tp * eb);
    /* ZeRO 1/2 (Megatron's distributed optimizer): reduce-scattered */
    const char *layer = strchr(base, '.') + 1;          /* past "mbN." */
    char lid[TRACE_ID_MAX];
    uint32_t zero = dp > 1 ? s->zero : 0;
    if (dp > 1) {
        snprintf(lid, sizeof lid, "%.*s.%s", (int)strcspn(layer, "."), layer,
                 zero ? "dp_reduce_scatter" : "dp_allreduce");
        *q->last_ar = llmb_dp_coll(b, lid, zero ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, dt,
                                   grad_layer, b->prev, b->dp_group, 1);
    }
    if (b->edp_group != UINT32_MAX) {
        snprintf(lid, sizeof lid, "%.*s.%s", (int)strcspn(layer, "."), layer,
                 zero ? "edp_reduce_scatter" : "edp_allreduce");
        *q->last_ar = llmb_dp_coll(b, lid, zero ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, dt,
                                   (uint64_t)(expert_layer / b->ep / tp * eb), *q->last_ar,
                                   b->edp_group, 1);
    }
    if (b->dcn_group != UINT32_MAX) {   /* then over the slices, as llmb_rank */
        snprintf(lid, sizeof lid, "%.*s.dcn_allreduce", (int)strcspn(layer, "."), layer);
        *q->last_ar = llmb_dp_coll(b, lid, COLL_ALL_REDUCE, dt,
                                   llmb_grad_dcn_share(b, (uint64_t)(lp / tp * eb), lp - expert_layer,
                                                       expert_layer, tp, dp, zero, eb),
                                   dp > 1 ? *q->last_ar : b->prev, b->dcn_group, 1);
    }
}

/* backward: the forward's ops (t->ops[f0, f1)) reversed; the scratch
 * forward is dropped */
static void step_backward(struct llmb *b, const struct llm_config *c, const struct llm_step *s,
                          const struct pipe *P, const struct ppstep *q, uint32_t f0, uint32_t f1)
{
    struct trace *t = b->t;
    uint32_t tp = P->tp;
    uint64_t act = (uint64_t)((double)P->rows * c->hidden * P->eb);
    int sp = s->sp && tp > 1;     /* sequence parallelism, as llmb_rank */
    struct op *fwd = sim_xcalloc(f1 - f0, sizeof *fwd);
    memcpy(fwd, &t->ops[f0], (size_t)(f1 - f0) * sizeof *fwd);
    uint32_t ndeps0 = t->ndeps;
    for (uint32_t k = f0; k < f1; k++)
        ndeps0 -= t->ops[k].ndeps;
    t->nops = f0;
    t->ndeps = ndeps0;
    int first = 1;
    char cur_layer[16] = "";
    for (uint32_t k = f1 - f0; k-- > 0;) {
        char base[TRACE_ID_MAX];    /* a copy: llmb_op may move the trace's strings */
        snprintf(base, sizeof base, "%s", op_id(t, &fwd[k]) + strlen(b->prefix));
        if (s->recompute)
            llmb_bwd_recompute(b, base, 1, cur_layer, fwd, f1 - f0, q->slot, &first);
        struct op *o = llmb_bwd_sp(b, &fwd[k], base, sp) ? &t->ops[t->nops - 1]
                                                         : llmb_bwd_op(b, &fwd[k], base, sp);
        if (o == NULL)
            continue;
        if (first)
            llmb_slot(b, o, q->slot);
        first = 0;
        if (tp > 1 && !sp && llmb_bwd_column_parallel(base, c->gated)) {
            char aid[TRACE_ID_MAX];
            snprintf(aid, sizeof aid, "%.*s.grad_allreduce", (int)sizeof aid - 16, base);
            llmb_allreduce(b, aid, s->dtype, act);
        }
        if ((P->dp > 1 || b->dcn_group != UINT32_MAX) && q->last &&
            llmb_ends_with(base, ".attn_norm"))
            step_layer_reduce(b, c, s, P, q, base);
    }
    free(fwd);
}

/* One pipeline step of a stage (its own device) for micro-batch q->m on
 * one of its model chunks, forward or backward: the ops of layers [l0,
 * l1), plus the embedding on the first chunk and the head and loss on the
 * last.  The backward is the forward's ops reversed (".bwd"), as
 * llmb_rank makes it.  The step's first op waits for the stage's previous
 * op and, with a slot, for one more op filled in later: the activations or
 * gradients it receives (their sender may be built after it). */
static void pp_step(struct llmb *b, const struct llm_config *c, const struct llm_step *s,
                    const struct pipe *P, const struct ppstep *q)
{
    struct trace *t = b->t;
    /* the forward, emitted into a scratch builder region when bwd: the
     * ops are made, then copied reversed as the backward and dropped */
    uint32_t f0 = t->nops;
    struct llmb fb = *b;
    fb.prev = UINT32_MAX;
    fb.mb = q->m;
    fb.scratch = q->bwd;   /* a backward's scratch forward: ring sends not recorded */
    b->mb = q->m;
    snprintf(fb.prefix, sizeof fb.prefix, "%.24smb%u.", b->prefix, q->m);
    step_forward(&fb, c, s, P, q);
    uint32_t f1 = t->nops;
    /* every micro-batch's forward uses the same weights: the first holds
     * them, the others' GEMMs are marked as another op's (trace.h), so
     * the working set counts a stage's weights once */
    for (uint32_t k = f0; q->m > 0 && !q->bwd && k < f1; k++)
        if (t->ops[k].kind == OP_GEMM)
            t->ops[k].transient = 1;
    if (q->bwd) {
        step_backward(b, c, s, P, q, f0, f1);
        return;
    }
    /* the forward's first op waits for the stage's previous op and the
     * activations it receives (its own deps, at the end) */
    struct op *o = &t->ops[f0];
    SIM_CHECK(o->ndeps == 0 && t->ndeps + 2 <= b->dcap);
    o->deps_off = t->ndeps;
    if (b->prev != UINT32_MAX)
        t->deps[t->ndeps++] = b->prev, o->ndeps++;
    if (q->slot != NULL) {
        *q->slot = t->ndeps;
        t->deps[t->ndeps++] = UINT32_MAX;
        o->ndeps++;
    }
    b->prev = f1 - 1;
}

/* A micro-batch's activations to the next stage (fwd) or its gradients to
 * the previous one, from rank (st, dr, tr)'s chunk v. */
static void pp_send(struct llmb *b, const struct llm_step *s, const struct pipe *P, uint32_t st,
                    uint32_t dr, uint32_t tr, uint32_t v, uint32_t m, int fwd)
{
    const char *what = fwd ? "act_send" : "grad_send";
    char id[40];
    if (P->vpp > 1)
        snprintf(id, sizeof id, "mb%u.c%u.%s", m, v, what);
    else
        snprintf(id, sizeof id, "mb%u.%s", m, what);
    struct op *cp = llmb_op(b, id, OP_MEMCPY, s->dtype);
    cp->u.copy.bytes = P->act_bytes;
    cp->u.copy.dir = MEMCPY_P2P;
    cp->u.copy.peer = pp_dev(P, fwd ? (st + 1) % P->pp : (st + P->pp - 1) % P->pp, dr, tr);
    cp->u.copy.src = TRACE_NO_DEVICE;
    (fwd ? P->fsend : P->bsend)[pp_ix(P, st, dr, tr, v, m)] = b->t->nops - 1;
}

/* Rank (stage st, replica dr, TP rank tr)'s chunk-steps in 1F1B order,
 * with their sends; returns the stage's last gradient reduction. */
static uint32_t pp_schedule(struct llmb *b, const struct llm_config *c, const struct llm_step *s,
                            const struct pipe *P, uint32_t st, uint32_t dr, uint32_t tr)
{
    uint32_t pp = P->pp, mb = P->mb, vpp = P->vpp;
    uint64_t per = P->per, extra = P->extra;
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
        int first = ci == 0, lastc = ci == P->nchunk - 1;
        struct ppstep q = {
            .embed = first, .head = lastc, .l0 = l0, .l1 = l1, .m = m, .bwd = !do_fwd,
            .slot = do_fwd ? (first ? NULL : &P->fslot[pp_ix(P, st, dr, tr, v, m)])
                           : (lastc ? NULL : &P->bslot[pp_ix(P, st, dr, tr, v, m)]),
            .last = !do_fwd && m == mb - 1, .last_ar = &last_ar};
        pp_step(b, c, s, P, &q);
        if (do_fwd && !lastc)
            pp_send(b, s, P, st, dr, tr, v, m, 1);
        if (!do_fwd && !first)
            pp_send(b, s, P, st, dr, tr, v, m, 0);
        if (do_fwd)
            nf++;
        else
            nb++;
    }
    return last_ar;
}

/* A stage's end: the embedding's and the head's gradients over the
 * replicas (on the stages that hold them), AdamW, and with ZeRO the
 * updated weights gathered. */
static void pp_stage_end(struct llmb *b, const struct llm_config *c, const struct llm_step *s,
                         const struct pipe *P, uint32_t st, uint32_t last_ar)
{
    uint32_t pp = P->pp, tp = P->tp, dp = P->dp;
    double eb = P->eb;
    uint64_t nl = 0;    /* the stage's layers, over its chunks */
    for (uint32_t v = 0; v < P->vpp; v++)
        nl += P->per + (v * pp + st < P->extra ? 1 : 0);
    /* the embedding's and the head's gradients over the
     * replicas, on the stages that hold them */
    double vh = (double)c->vocab * c->hidden / tp;
    uint32_t zero = dp > 1 ? s->zero : 0;
    uint64_t vb = (uint64_t)(vh * ((st == 0) + (st == pp - 1 && !c->tied)) * eb);
    if (dp > 1 && (st == 0 || st == pp - 1))
        last_ar = llmb_dp_coll(b, zero ? "embed.dp_reduce_scatter" : "embed.dp_allreduce",
                               zero ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, s->dtype, vb,
                               b->prev, b->dp_group, 1);
    if (b->dcn_group != UINT32_MAX && (st == 0 || st == pp - 1))
        last_ar = llmb_dp_coll(b, "embed.dcn_allreduce", COLL_ALL_REDUCE, s->dtype,
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
    llmb_ew(b, "adamw", DT_FP32,
            (uint64_t)ceil(params / (zero ? dp : 1) + xrank / (zero ? edp : 1)), 4, 4, 14.0);
    llmb_wait(b, last_ar);
    /* ZeRO 1/2: the stage's updated 16-bit weights back to
     * every replica, at the step's end */
    if (zero)
        b->prev = llmb_dp_coll(b, "param_allgather", COLL_ALL_GATHER, s->dtype,
                               (uint64_t)(params * eb), b->prev, b->dp_group, 1);
    if (zero && b->edp_group != UINT32_MAX)
        b->prev = llmb_dp_coll(b, "expert_param_allgather", COLL_ALL_GATHER, s->dtype,
                               (uint64_t)(xrank * eb), b->prev, b->edp_group, 1);
}

/* each receiver's wait: the forward of chunk v on stage st gets its
 * activations from stage st - 1's chunk v (stage 0: the last stage's
 * chunk v - 1), its backward its gradients from stage st + 1's (the
 * last stage: the first stage's chunk v + 1) */
static void pp_link(struct trace *t, const struct pipe *P)
{
    uint32_t pp = P->pp;
    for (uint32_t st = 0; st < pp; st++)
        for (uint32_t dr = 0; dr < P->dp_sim; dr++)
            for (uint32_t tr = 0; tr < P->tp; tr++) {
                uint32_t prev = (st + pp - 1) % pp, next = (st + 1) % pp;
                for (uint32_t v = 0; v < P->vpp; v++) {
                    uint32_t ci = v * pp + st;
                    for (uint32_t m = 0; m < P->mb; m++) {
                        if (ci > 0)
                            t->deps[P->fslot[pp_ix(P, st, dr, tr, v, m)]] =
                                P->fsend[pp_ix(P, prev, dr, tr, st == 0 ? v - 1 : v, m)];
                        if (ci < P->nchunk - 1)
                            t->deps[P->bslot[pp_ix(P, st, dr, tr, v, m)]] =
                                P->bsend[pp_ix(P, next, dr, tr, st == pp - 1 ? v + 1 : v, m)];
                    }
                }
            }
}

void llmb_pp(struct llmb *b, const struct llm_config *c, const struct llm_step *s, uint32_t pp,
             uint32_t mb, uint32_t tp, uint32_t dp)
{
    struct trace *t = b->t;
    struct pipe P = {.pp = pp, .mb = mb, .tp = tp, .dp = dp};
    uint64_t T = s->prompt / b->cp;
    P.batch = s->batch / mb;
    P.rows = P.batch * T;
    P.eb = dtype_bytes(s->dtype, 1.0);
    P.vpp = s->vpp > 1 ? s->vpp : 1;
    P.nchunk = pp * P.vpp;
    /* each TP rank sends the whole activation to its peer of the next
     * stage (Megatron without its scatter-gather optimisation) */
    P.act_bytes = (uint64_t)((double)P.rows * (double)c->hidden * P.eb);
    if (s->sp && tp > 1)
        P.act_bytes /= tp;    /* sequence parallel: each TP rank sends its 1/tp of the tokens */
    uint32_t ndev = pp * dp * tp, ntpg = tp > 1 ? dp * pp : 0;
    /* replicas past dp_sim: mirrors with no ops (symmetric ranks) */
    P.dp_sim = b->dp_sim;
    size_t nslot = (size_t)pp * P.dp_sim * tp * P.vpp * mb;
    P.fsend = sim_xcalloc(nslot, sizeof *P.fsend);
    P.bsend = sim_xcalloc(nslot, sizeof *P.bsend);
    P.fslot = sim_xcalloc(nslot, sizeof *P.fslot);
    P.bslot = sim_xcalloc(nslot, sizeof *P.bslot);
    t->symmetric = P.dp_sim < dp || s->dcn > 1;   /* the other replicas and slices mirror these */
    P.per = c->layers / P.nchunk;
    P.extra = c->layers % P.nchunk;
    /* with --dcn (slices of these ndev devices) the groups end with one
     * across the slices per device of the first */
    uint32_t dev_slice = ndev;
    for (uint32_t dr = 0; dr < P.dp_sim; dr++)
        for (uint32_t st = 0; st < pp; st++)
            for (uint32_t tr = 0; tr < tp; tr++) {
                uint32_t dev = pp_dev(&P, st, dr, tr);
                b->device = dev;
                b->prev = UINT32_MAX;
                b->tp_group = tp > 1 ? st * dp + dr : 0;
                b->dp_group = dp > 1 ? ntpg + st * tp + tr : 0;
                llmb_par_ep(b, tp, dp, pp, st, dr, tr);
                b->dcn_group = s->dcn > 1 ? t->ngroups - dev_slice + dev : UINT32_MAX;
                llmb_par_cp(b, dr, tr, pp_dev(&P, st, 0, 0), tp, dp);
                if (tp * dp > 1)
                    snprintf(b->prefix, sizeof b->prefix, "r%u.s%u.", dev, st);
                else
                    snprintf(b->prefix, sizeof b->prefix, "s%u.", st);
                uint32_t last_ar = pp_schedule(b, c, s, &P, st, dr, tr);
                pp_stage_end(b, c, s, &P, st, last_ar);
            }
    pp_link(t, &P);
    free(P.fsend);
    free(P.bsend);
    free(P.fslot);
    free(P.bslot);
}
