/* llmb.h: the LLM trace builder's state and its primitives (private to
 * sim/work's llm*.c and llmb_*.c files): one rank's ops are added one after
 * another, each waiting for the one before (one dependent chain), with
 * collectives on the rank's groups and waits filled in later.
 *
 * llm_build (llm.c) lays out the devices and groups (llmb_par.c) and builds
 * each rank: a step without a pipeline (llmb_rank.c) or a pipeline schedule
 * (llmb_pp.c), both from one layer's forward (llmb_layer.c), its backward
 * (llmb_bwd.c), the gradients' traffic (llmb_grad.c) and the
 * context-parallel ring (llmb_cp.c); a vision transformer's forward is
 * llmb_vit.c's.
 */
#ifndef STRATA_LLMB_H
#define STRATA_LLMB_H

#include <stdint.h>

#include "dtype.h"
#include "trace.h"
#include "wfmt.h"

struct llmb_cp_ring;

struct llmb {
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
    uint32_t stages;            /* inference split by layer over devices 0..stages-1 (0, 1: none) */
    int scratch;                /* building a pipeline backward's scratch forward: no ring
                                 * sends recorded, no waits taken */
    struct llmb_cp_ring *ring;  /* with cp > 1: the ring's sends and waits */
    uint32_t dp_sim;            /* replicas given ops (data x context parallel) */
    uint32_t cp_comm;           /* LLM_CP_P2P, _A2A or _ALLGATHER */
    uint32_t cp_group;          /* this rank's CP group (cp > 1) */
    uint32_t cp_g0;             /* the first CP group */
    /* sequence parallelism's backward of column-parallel GEMMs (llmb_bwd_sp):
     * the input's all-gather under way (UINT32_MAX: none) and the weight
     * gradients waiting for it */
    uint32_t sp_ag;
    struct op sp_w[4];
    char sp_wid[4][TRACE_ID_MAX];   /* their ids */
    uint32_t sp_nw;
};

/* Adds an op named prefix + id on the rank's device, waiting for the op
 * before (b->prev) and b->also (then cleared); it becomes b->prev. */
struct op *llmb_op(struct llmb *b, const char *id, enum op_kind kind, enum dtype dt);
/* A GEMM m x k by k x n, batch 1, weights stored as w. */
struct op *llmb_gemm(struct llmb *b, const char *id, enum dtype dt, uint64_t m, uint64_t n,
                     uint64_t k, enum wfmt w);
/* Sets op a's attention shape: batch sequences, q_len queries of heads
 * heads each against kv_len keys of kv_heads heads of head_dim, in library
 * impl, the cache in kvdt (no pages, no dropout: the caller's). */
void llmb_attn_shape(struct op *a, uint64_t batch, uint64_t heads, uint64_t kv_heads, uint64_t q_len,
                     uint64_t kv_len, uint64_t head_dim, int causal, enum attn_impl impl, enum dtype kvdt);
/* An attention op of that shape added on the rank (llmb_op). */
struct op *llmb_attention(struct llmb *b, const char *id, enum dtype dt, uint64_t batch, uint64_t heads,
                          uint64_t kv_heads, uint64_t q_len, uint64_t kv_len, uint64_t head_dim, int causal,
                          enum attn_impl impl, enum dtype kvdt);
/* An elementwise op over el elements, in inputs read and out written, fpe
 * FLOPs an element. */
void llmb_ew(struct llmb *b, const char *id, enum dtype dt, uint64_t el, uint32_t in,
             uint32_t out, double fpe);
void llmb_dropout_add(struct llmb *b, const char *id, enum dtype dt, uint64_t el, double p);
/* A softmax, norm or reduction over rows x cols. */
/* Hugging Face's LlamaRMSNorm as eager PyTorch runs it, a kernel a torch
 * op: x to fp32, pow, mean, + eps, rsqrt, multiply, back to dt, times the
 * weight (ids stem.cast_up ... stem.weight). */
void llmb_hf_rmsnorm(struct llmb *b, const char *stem, enum dtype dt, uint64_t rows, uint64_t h);
/* apply_rotary_pos_emb on one tensor of el elements, a kernel a torch op:
 * x * cos, rotate_half's -x2 and cat, * sin, + (ids stem.mul_cos ...
 * stem.add). */
void llmb_hf_rope(struct llmb *b, const char *stem, enum dtype dt, uint64_t el);
void llmb_rc(struct llmb *b, const char *id, enum op_kind k, enum dtype dt, uint64_t rows,
             uint64_t cols);
void llmb_coll(struct llmb *b, const char *id, enum coll_kind what, enum dtype dt, uint64_t bytes,
               uint32_t group, uint32_t ranks);
void llmb_allreduce(struct llmb *b, const char *id, enum dtype dt, uint64_t bytes);
void llmb_tp_coll(struct llmb *b, const char *id, enum coll_kind what, enum dtype dt,
                  uint64_t bytes, uint32_t tp);
/* Returns the collective's op index. */
uint32_t llmb_dp_coll(struct llmb *b, const char *id, enum coll_kind what, enum dtype dt,
                      uint64_t bytes, uint32_t after, uint32_t group, uint32_t stream);
void llmb_alltoall(struct llmb *b, const char *id, enum dtype dt, uint64_t bytes);
void llmb_slot(struct llmb *b, struct op *o, uint32_t *slot);
/* The op added last also waits for op `on` (UINT32_MAX: none). */
void llmb_wait(struct llmb *b, uint32_t on);
/* Whether s ends with suffix (an op id's last part: ".attn_norm"). */
int llmb_ends_with(const char *s, const char *suffix);

#endif
