/* llmb_cp.c: context parallelism's p2p ring in the LLM trace builder (see
 * llmb_cp.h). */
#include "llmb_cp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "llm_step.h"

static void cp_push(struct llmb_cp_link **v, size_t *n, size_t *cap, uint64_t key, uint32_t at)
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
    uint64_t x = ((const struct llmb_cp_link *)a)->key, y = ((const struct llmb_cp_link *)b)->key;
    return x < y ? -1 : x > y;
}

/* Where ring send (sender dev, layer l, pass, micro-batch m, step i) is
 * kept; dev must be simulated (a CP ring is simulated whole). */
static uint64_t cp_key(const struct llmb_cp_ring *r, uint32_t dev, uint64_t l, int pass, uint32_t m, uint32_t i)
{
    uint32_t st = dev / (r->dp * r->tp), dr = dev / r->tp % r->dp, tr = dev % r->tp;
    SIM_CHECK(dr < r->dp_sim && l < r->layers && m < r->mbs && i < r->cp);
    uint64_t six = ((uint64_t)st * r->dp_sim + dr) * r->tp + tr;
    return (((six * r->layers + l) * 3 + (uint64_t)pass) * r->mbs + m) * r->cp + i;
}

/* Op o (the last added) also waits for the previous rank's ring send i. */
static void cp_wait_for(struct llmb *b, struct op *o, uint64_t l, int pass, uint32_t i)
{
    struct llmb_cp_ring *r = b->ring;
    if (b->scratch)
        return;
    uint32_t slot;
    llmb_slot(b, o, &slot);
    cp_push(&r->wait, &r->nwait, &r->capw, cp_key(r, b->cp_prev, l, pass, b->mb, i), slot);
}

/* Ring send i: bytes to the next rank on stream 3, after `after` and
 * `also` (UINT32_MAX: none) and, when recv, the previous rank's send
 * i - 1 (what it forwards); the compute chain goes on without it. */
static uint32_t cp_send(struct llmb *b, const char *id, enum dtype dt, uint64_t bytes, uint32_t after,
                        uint32_t also, uint64_t l, int pass, uint32_t i, int recv)
{
    uint32_t keep = b->prev, keep_also = b->also;
    b->prev = after;
    b->also = also;
    struct op *o = llmb_op(b, id, OP_MEMCPY, dt);
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
 * ring, which llmb_cp_attention makes again for the backward and recompute. */
int llmb_cp_aux(const struct llmb *b, const char *base)
{
    return b->cp > 1 && b->cp_comm == LLM_CP_P2P && (strstr(base, ".kv_send.cp") != NULL || strstr(base, ".attention.cp") != NULL ||
           llmb_ends_with(base, ".attn_merge"));
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
void llmb_cp_attention(struct llmb *b, const struct op *proto, const char *stem, const char *sfx,
                       uint64_t l, int pass)
{
    uint32_t C = b->cp, r = b->cp_rank;
    const struct op p0 = *proto;     /* proto may point into the ops llmb_op grows */
    uint64_t Tl = p0.u.attn.q_len, half = Tl / 2;
    enum dtype dt = p0.dtype;
    double kb = dtype_bytes(p0.u.attn.kv_dtype < DT_COUNT ? p0.u.attn.kv_dtype : dt, 1.0);
    uint64_t kv_el = p0.u.attn.batch * Tl * 2 * p0.u.attn.kv_heads * p0.u.attn.head_dim;
    uint64_t kvb = (uint64_t)ceil((double)kv_el * kb);
    uint32_t before = b->prev, send = UINT32_MAX, step = UINT32_MAX;
    char id[TRACE_ID_MAX + 64];   /* stem (60) + ".attention.cpN" + sfx: llmb_op cuts to the id's size */
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
        struct op *a = llmb_op(b, id, OP_ATTENTION, dt);
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
        llmb_ew(b, id, dt, kv_el, 1, 1, 0.0);
        cp_wait_for(b, &b->t->ops[b->t->nops - 1], l, 1, C - 1);
    } else {
        snprintf(id, sizeof id, "%.60s.attn_merge%.12s", stem, sfx);
        llmb_ew(b, id, dt, q_el * (C - 1), 2, 1, 4.0);
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
int llmb_cp_again(struct llmb *b, const struct op *src, const char *base, const char *sfx, int pass)
{
    size_t n = strlen(base);
    if (b->cp <= 1 || b->cp_comm != LLM_CP_P2P || src->kind != OP_ATTENTION ||
        !llmb_ends_with(base, ".attention") || n - 10 > 60)
        return 0;
    char stem[64];
    snprintf(stem, sizeof stem, "%.*s", (int)(n - 10), base);
    llmb_cp_attention(b, src, stem, sfx, stem_layer(stem), pass);
    return 1;
}

void llmb_cp_link(struct trace *t, struct llmb_cp_ring *ring)
{
    /* the ring's waits, now that every send exists */
    if (ring->nsend > 0)
        qsort(ring->send, ring->nsend, sizeof *ring->send, cp_link_cmp);
    for (size_t k = 0; k < ring->nwait; k++) {
        const struct llmb_cp_link *f = bsearch(&ring->wait[k], ring->send, ring->nsend,
                                               sizeof *ring->send, cp_link_cmp);
        SIM_CHECK(f != NULL);
        t->deps[ring->wait[k].at] = f->at;
    }
    free(ring->send);
    free(ring->wait);
}
