/* test_unit_cp.c: context parallelism in `gen llm --phase train --cp C`
 * (Megatron's layout, Transformer Engine's p2p ring; llm.h).  A rank
 * holds 1/C of each sequence as chunks r and 2C-1-r, so its attention
 * steps add up to 1/C of the causal product; K and V go round the ring
 * as p2p copies on stream 3 that the next step waits for and that
 * overlap the step before; the backward runs the ring again and waits
 * for its own dK, dV; the gradients are reduced over the DP x CP ranks;
 * with TP, PP (interleaved) and recomputation the step builds and runs;
 * --cp-comm a2a (Ulysses' head split) and allgather (K, V gathered) do
 * the same attention work; what cannot combine is refused. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "llm.h"
#include "run.h"
#include "system.h"
#include "test.h"
#include "util.h"

/* query x key products of a device's forward attention ops in layer 0,
 * per 32 heads (a causal op's mask, aligned to the end, leaves q kv -
 * q^2 / 2 of them) */
static double l0_products(const struct trace *t, uint32_t dev)
{
    double p = 0;
    for (uint32_t i = 0; i < t->nops; i++) {
        const struct op *o = &t->ops[i];
        if (o->device == dev && o->kind == OP_ATTENTION && o->pass == PASS_FWD && strstr(op_id(t, o), ".L0.") != NULL) {
            double q = (double)o->u.attn.q_len, kv = (double)o->u.attn.kv_len;
            p += (o->u.attn.causal ? q * kv - q * q / 2 : q * kv) * (double)o->u.attn.heads / 32.0;
        }
    }
    return p;
}

/* CP 2, one sequence: the blocks each rank attends to, the ring's sends
 * and waits forward and backward, the gradients, and the copy's overlap
 * on an HGX H100 */
static void test_ring(const struct llm_config *cfg, const struct llm_step *step, struct hw_system *sysp)
{
    struct llm_config c = *cfg;
    struct llm_step s = *step;
    struct diag d;
    memset(&d, 0, sizeof d);
    struct trace t;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    CHECK_EQ_INT(t.ndevices, 2);
    CHECK_NEAR_REL(t.tokens, 8192.0, 1e-12);       /* one sequence, split */
    /* each rank's own block (causal) and the other's, halved */
    int a0 = tu_find_op(&t, "r0.L0.attention"), a1 = tu_find_op(&t, "r0.L0.attention.cp1");
    int b1 = tu_find_op(&t, "r1.L0.attention.cp1");
    CHECK(a0 >= 0 && a1 >= 0 && b1 >= 0);
    if (a0 >= 0 && a1 >= 0 && b1 >= 0) {
        CHECK(t.ops[a0].u.attn.causal && t.ops[a0].u.attn.q_len == 4096 && t.ops[a0].u.attn.kv_len == 4096);
        /* rank 0 sees a later rank's block with its second chunk only;
         * rank 1 sees an earlier rank's first chunk with all its queries */
        CHECK(!t.ops[a1].u.attn.causal && t.ops[a1].u.attn.q_len == 2048 && t.ops[a1].u.attn.kv_len == 4096);
        CHECK(!t.ops[b1].u.attn.causal && t.ops[b1].u.attn.q_len == 4096 && t.ops[b1].u.attn.kv_len == 2048);
    }
    /* every rank does half the causal product of the whole sequence */
    CHECK_NEAR_REL(l0_products(&t, 0), 8192.0 * 8192.0 / 2 / 2, 1e-12);
    CHECK_NEAR_REL(l0_products(&t, 1), 8192.0 * 8192.0 / 2 / 2, 1e-12);
    /* K and V (8 heads of 128, bf16, 4096 tokens) to the next rank on
     * stream 3, after RoPE; the other rank's step waits for it */
    int s0 = tu_find_op(&t, "r0.L0.kv_send.cp0"), s1 = tu_find_op(&t, "r1.L0.kv_send.cp0");
    CHECK(s0 >= 0 && s1 >= 0);
    if (s0 >= 0 && s1 >= 0) {
        CHECK(t.ops[s0].kind == OP_MEMCPY && t.ops[s0].u.copy.dir == MEMCPY_P2P && t.ops[s0].u.copy.peer == 1 &&
              t.ops[s0].stream == 3 && t.ops[s1].u.copy.peer == 0);
        CHECK_EQ_INT(t.ops[s0].u.copy.bytes, 4096ull * 2 * 8 * 128 * 2);
        CHECK(tu_depends_on(&t, s0, tu_find_op(&t, "r0.L0.rope_kv")));
    }
    CHECK(tu_depends_on(&t, a1, s1) && tu_depends_on(&t, b1, s0));
    CHECK(tu_find_op(&t, "r0.L0.kv_send.cp1") < 0);       /* C - 1 sends forward */
    /* backward: send 0 carries K, V; send 1 the dK, dV of step 0, after
     * it; the rank's own dK, dV come home from the other rank's last send */
    int bs0 = tu_find_op(&t, "r0.L0.kv_send.cp0.bwd"), bs1 = tu_find_op(&t, "r0.L0.kv_send.cp1.bwd");
    int ob0 = tu_find_op(&t, "r1.L0.kv_send.cp0.bwd"), ob1 = tu_find_op(&t, "r1.L0.kv_send.cp1.bwd");
    int ba0 = tu_find_op(&t, "r0.L0.attention.bwd"), ba1 = tu_find_op(&t, "r0.L0.attention.cp1.bwd");
    int home = tu_find_op(&t, "r0.L0.dkv_home.bwd");
    CHECK(bs0 >= 0 && bs1 >= 0 && ba0 >= 0 && ba1 >= 0 && home >= 0);
    if (bs0 >= 0 && ba1 >= 0) {
        CHECK(t.ops[ba0].pass == PASS_BWD && t.ops[ba1].pass == PASS_BWD && !t.ops[ba1].u.attn.causal);
        CHECK_EQ_INT(t.ops[bs0].u.copy.bytes, 4096ull * 2 * 8 * 128 * 2);
        CHECK_EQ_INT(t.ops[bs1].u.copy.bytes, 4096ull * 2 * 8 * 128 * 2);
        CHECK(tu_depends_on(&t, bs1, ba0) && tu_depends_on(&t, bs1, ob0) && tu_depends_on(&t, ba1, ob0));
        CHECK(tu_depends_on(&t, home, ob1));
    }
    /* the gradients over the DP x CP ranks: the same bytes as a replica's */
    int ar = tu_find_op(&t, "r0.L0.dp_allreduce");
    CHECK(ar >= 0 && t.groups[t.ops[ar].u.coll.group].n == 2);
    struct llm_step one = s;
    one.cp = 0;
    one.dp = 2;
    struct trace td;
    CHECK_EQ_INT(llm_build(&c, &one, &td, &d), 0);
    int ard = tu_find_op(&td, "r0.L0.dp_allreduce");
    CHECK(ar >= 0 && ard >= 0 && t.ops[ar].u.coll.bytes == td.ops[ard].u.coll.bytes);
    trace_free(&td);
    /* on an HGX H100: the ring copy overlaps the rank's own block, and
     * the next step starts only once it has arrived */
    struct run_result r;
    CHECK_EQ_INT(run_system_opts(sysp, &t, NULL, &r, &d), 0);
    if (s1 >= 0 && b1 >= 0 && a0 >= 0) {
        CHECK(run_op_start(&r, s0) < run_op_end(&r, a0) && run_op_end(&r, s0) > run_op_start(&r, a0));
        CHECK(run_op_start(&r, b1) >= run_op_end(&r, s0));
        printf("  Llama-3-8B, one 8192-token sequence over CP 2 on HGX H100: %.1f ms; layer 0's K, V "
               "copy %.1f us beside its own block's %.1f us\n", (double)r.total_ps * 1e-9,
               (double)(run_op_end(&r, s0) - run_op_start(&r, s0)) * 1e-6,
               (double)(run_op_end(&r, a0) - run_op_start(&r, a0)) * 1e-6);
    }
    run_result_free(&r);
    trace_free(&t);
}

static void test_layouts(const struct llm_config *cfg, const struct llm_step *step, struct hw_system *sysp)
{
    struct llm_config c = *cfg;
    struct llm_step s = *step;
    struct diag d;
    memset(&d, 0, sizeof d);
    struct trace t;
    /* CP 2 x TP 2 x PP 2 (interleaved) with recomputation, and CP 4 x PP 2
     * with ZeRO-1: built and run to the end on the 8 GPUs */
    static const struct { uint32_t cp, tp, pp, vpp, zero; int recompute; } lay[] = {
        {2, 2, 2, 2, 0, 1},
        {4, 1, 2, 1, 1, 0},
    };
    for (size_t i = 0; i < sizeof lay / sizeof lay[0]; i++) {
        struct llm_step x = s;
        x.prompt = 2048;
        x.batch = 4;
        x.cp = lay[i].cp;
        x.tp = lay[i].tp;
        x.pp = lay[i].pp;
        x.vpp = lay[i].vpp;
        x.microbatches = 4;
        x.zero = lay[i].zero;
        x.recompute = lay[i].recompute;
        x.sp = lay[i].tp > 1;
        CHECK_EQ_INT(llm_build(&c, &x, &t, &d), 0);
        CHECK_EQ_INT(t.ndevices, 8);
        if (lay[i].recompute) {
            /* the recomputed forward runs the ring again, with its own sends */
            int rs = tu_find_op(&t, "r0.s0.mb1.L3.kv_send.cp0.recompute");
            int ra = tu_find_op(&t, "r0.s0.mb1.L3.attention.cp1.recompute");
            int os = tu_find_op(&t, "r2.s0.mb1.L3.kv_send.cp0.recompute");
            CHECK(rs >= 0 && ra >= 0 && tu_depends_on(&t, ra, os));
        }
        struct run_result rx;
        CHECK_EQ_INT(run_system_opts(sysp, &t, NULL, &rx, &d), 0);
        printf("  CP %u x TP %u x PP %u (VP %u)%s%s, 4 x 2048 tokens: %.1f ms\n", lay[i].cp, lay[i].tp,
               lay[i].pp, lay[i].vpp, lay[i].recompute ? ", recompute" : "", lay[i].zero ? ", ZeRO-1" : "",
               (double)rx.total_ps * 1e-9);
        CHECK(rx.total_ps > 0);
        run_result_free(&rx);
        trace_free(&t);
    }
}

static void test_comm(const struct llm_config *cfg, const struct llm_step *step, struct hw_system *sysp)
{
    struct llm_config c = *cfg;
    struct llm_step s = *step;
    struct diag d;
    memset(&d, 0, sizeof d);
    struct trace t;
    /* the other ways to see the other ranks' tokens (--cp-comm), CP 4:
     * every rank still does 1/4 of the causal product (per 32 heads) */
    for (uint32_t cc = LLM_CP_A2A; cc <= LLM_CP_ALLGATHER; cc++) {
        struct llm_step x = s;
        x.cp = 4;
        x.cp_comm = cc;
        CHECK_EQ_INT(llm_build(&c, &x, &t, &d), 0);
        for (uint32_t dv = 0; dv < 4; dv++)
            CHECK_NEAR_REL(l0_products(&t, dv), 8192.0 * 8192.0 / 2 / 4, 1e-12);
        if (cc == LLM_CP_A2A) {
            /* Ulysses: Q, K, V of the rank's 2048 tokens to a head split,
             * attention over all 8192 tokens on 8 of the 32 heads (2 of the
             * 8 K/V heads), the output back; both run again backward */
            int a2a = tu_find_op(&t, "r1.L0.attn_a2a"), at = tu_find_op(&t, "r1.L0.attention");
            int back = tu_find_op(&t, "r1.L0.attn_out_a2a"), a2b = tu_find_op(&t, "r1.L0.attn_a2a.bwd");
            CHECK(a2a >= 0 && at >= 0 && back >= 0 && a2b >= 0);
            if (a2a >= 0 && at >= 0 && back >= 0 && a2b >= 0) {
                CHECK(t.ops[a2a].u.coll.what == COLL_ALL_TO_ALL && t.groups[t.ops[a2a].u.coll.group].n == 4);
                CHECK_EQ_INT(t.ops[a2a].u.coll.bytes, 2048ull * (4096 + 2 * 8 * 128) * 2);
                CHECK_EQ_INT(t.ops[back].u.coll.bytes, 2048ull * 4096 * 2);
                CHECK(t.ops[at].u.attn.heads == 8 && t.ops[at].u.attn.kv_heads == 2 &&
                      t.ops[at].u.attn.q_len == 8192 && t.ops[at].u.attn.causal);
                CHECK(t.ops[a2b].u.coll.what == COLL_ALL_TO_ALL);
            }
        } else {
            /* all-gather: K, V of all 8192 tokens, then the rank's chunks 1
             * and 6 (of 8) against the keys up to their ends; dK, dV
             * reduce-scattered backward */
            int ag = tu_find_op(&t, "r1.L0.kv_allgather"), c0 = tu_find_op(&t, "r1.L0.attention");
            int c1 = tu_find_op(&t, "r1.L0.attention.chunk1"), rs = tu_find_op(&t, "r1.L0.kv_allgather.bwd");
            CHECK(ag >= 0 && c0 >= 0 && c1 >= 0 && rs >= 0);
            if (ag >= 0 && c0 >= 0 && c1 >= 0 && rs >= 0) {
                CHECK(t.ops[ag].u.coll.what == COLL_ALL_GATHER);
                CHECK_EQ_INT(t.ops[ag].u.coll.bytes, 8192ull * 2 * 8 * 128 * 2);
                CHECK(t.ops[c0].u.attn.q_len == 1024 && t.ops[c0].u.attn.kv_len == 2048);
                CHECK(t.ops[c1].u.attn.q_len == 1024 && t.ops[c1].u.attn.kv_len == 7168);
                CHECK(t.ops[rs].u.coll.what == COLL_REDUCE_SCATTER && t.ops[rs].u.coll.bytes == t.ops[ag].u.coll.bytes);
            }
        }
        struct run_result rx;
        CHECK_EQ_INT(run_system_opts(sysp, &t, NULL, &rx, &d), 0);
        printf("  CP 4 with --cp-comm %s: %.1f ms\n", cc == LLM_CP_A2A ? "a2a" : "allgather",
               (double)rx.total_ps * 1e-9);
        run_result_free(&rx);
        trace_free(&t);
    }
}

static void test_refused(const struct llm_config *cfg, const struct llm_step *step)
{
    struct llm_config c = *cfg;
    struct llm_step s = *step;
    struct diag d;
    memset(&d, 0, sizeof d);
    struct trace t;
    /* refused, by field */
    static const struct { enum llm_phase ph; uint64_t prompt; uint32_t cp, ep, tp; int sp; const char *field; } bad[] = {
        {LLM_PREFILL, 8192, 2, 0, 1, 0, "--cp"},
        {LLM_TRAIN, 8190, 2, 0, 1, 0, "--prompt"},
        {LLM_TRAIN, 4100, 4, 0, 1, 0, "--prompt"},
        {LLM_TRAIN, 8192, 2, 0, 2, 1, NULL},
        {LLM_TRAIN, 8188, 2, 0, 4, 1, "--sp"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct llm_step b = s;
        b.phase = bad[i].ph;
        b.prompt = bad[i].prompt;
        b.cp = bad[i].cp;
        b.tp = bad[i].tp;
        b.sp = bad[i].sp;
        memset(&d, 0, sizeof d);
        int rc = llm_build(&c, &b, &t, &d);
        if (bad[i].field == NULL) {
            CHECK_EQ_INT(rc, 0);
        } else {
            CHECK(rc != 0);
            CHECK_STR_CONTAINS(d.field, bad[i].field);
        }
        if (rc == 0)
            trace_free(&t);
    }
    /* Ulysses needs the heads to split over the CP ranks; --cp-comm needs --cp */
    struct llm_step u = s;
    u.cp = 3;
    u.prompt = 8190;
    u.cp_comm = LLM_CP_A2A;
    memset(&d, 0, sizeof d);
    CHECK(llm_build(&c, &u, &t, &d) != 0);
    CHECK_STR_CONTAINS(d.field, "num_attention_heads");
    u.cp = 1;
    memset(&d, 0, sizeof d);
    CHECK(llm_build(&c, &u, &t, &d) != 0);
    CHECK_STR_CONTAINS(d.field, "--cp-comm");
    /* K/V heads that neither split over the CP ranks nor divide them */
    struct llm_config nem;
    CHECK_EQ_INT(llm_config_load("traces/models/nemotron-4-15b.json", &nem, &d), 0);
    u.cp = 3;
    u.prompt = 4092;
    memset(&d, 0, sizeof d);
    CHECK(llm_build(&nem, &u, &t, &d) != 0);
    CHECK_STR_CONTAINS(d.field, "num_key_value_heads");
    /* Ulysses across nodes: TP 4 x CP 4 spans two nodes, the CP group's
     * pairs on different rails; its all-to-alls go by PXN */
    {
        struct llm_step x = s;
        x.prompt = 512;
        x.batch = 2;
        x.tp = 4;
        x.cp = 4;
        x.cp_comm = LLM_CP_A2A;
        struct hw_system s2;
        CHECK_EQ_INT(tu_load_hw("configs/systems/hgx-h100-x2-ndr.yaml", NULL, &s2, &d), 0);
        CHECK_EQ_INT(llm_build(&c, &x, &t, &d), 0);
        struct run_result rx;
        CHECK_EQ_INT(run_system_opts(&s2, &t, NULL, &rx, &d), 0);
        CHECK(rx.total_ps > 0);
        printf("  TP 4 x CP 4 (a2a) over two HGX H100 nodes, 2 x 512 tokens: %.1f ms\n", (double)rx.total_ps * 1e-9);
        run_result_free(&rx);
        trace_free(&t);
        sys_free(&s2);
    }
    struct llm_config moe;
    CHECK_EQ_INT(llm_config_load("traces/models/mixtral-8x7b.json", &moe, &d), 0);
    struct llm_step me = s;
    me.ep = 2;
    memset(&d, 0, sizeof d);
    CHECK(llm_build(&moe, &me, &t, &d) != 0);
    CHECK_STR_CONTAINS(d.field, "--cp");
}

int main(void)
{
    struct diag d;
    memset(&d, 0, sizeof d);
    struct llm_config c;
    CHECK_EQ_INT(llm_config_load("traces/models/llama-3-8b.json", &c, &d), 0);
    struct llm_step s = {LLM_TRAIN, 1, 8192, 0, DT_BF16, ATTN_FA2, DT_BF16, WF_NONE, 0,
                         LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0};
    struct hw_system sys;
    CHECK_EQ_INT(tu_load_hw("configs/systems/nvidia-hgx-h100.yaml", NULL, &sys, &d), 0);
    test_ring(&c, &s, &sys);
    test_layouts(&c, &s, &sys);
    test_comm(&c, &s, &sys);
    sys_free(&sys);
    test_refused(&c, &s);
    TEST_MAIN_END();
}
