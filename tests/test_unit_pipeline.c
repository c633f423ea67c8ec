/* test_unit_pipeline.c: pipeline parallelism in `gen llm --phase train
 * --pp P --microbatches M` (Megatron's 1F1B).  The layers split over the
 * stages; each stage does its warm-up forwards, then one forward and one
 * backward in turn; activations and gradients cross as p2p copies that the
 * consumer waits for; the idle share of each device is the schedule's
 * bubble, (P - 1) / (M + P - 1); with TP and DP (3D) each stage is a TP
 * group, replicated; what cannot combine yet is refused. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "llm.h"
#include "run.h"
#include "system.h"
#include "test.h"
#include "util.h"

/* 1F1B on 4 stages: the split of the layers, the sends and their waits,
 * the order, and every device idle for the bubble; *r1total and r1idle
 * keep the step for the tests after. */
static void test_1f1b(const struct llm_config *cfg, const struct llm_step *step, uint64_t *r1total_out,
                      double r1idle_out[4])
{
    struct diag d;
    memset(&d, 0, sizeof d);
    struct llm_config c = *cfg;
    struct llm_step s = *step;
    struct trace t;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    CHECK_EQ_INT(t.ndevices, 4);
    /* 32 layers over 4 stages: stage 1 holds L8..L15 */
    CHECK(tu_find_op(&t, "s1.mb0.L8.qkv_proj") >= 0 && tu_find_op(&t, "s1.mb0.L16.qkv_proj") < 0);
    CHECK(tu_find_op(&t, "s0.mb0.embed") >= 0 && tu_find_op(&t, "s3.mb7.loss") >= 0);
    /* the next stage's forward waits for this stage's activations, this
     * stage's backward for the next stage's gradients */
    int send = tu_find_op(&t, "s0.mb3.act_send"), recv = tu_find_op(&t, "s1.mb3.L8.attn_norm");
    CHECK(send >= 0 && recv >= 0 && tu_depends_on(&t, recv, send));
    CHECK(t.ops[send].kind == OP_MEMCPY && t.ops[send].u.copy.dir == MEMCPY_P2P &&
          t.ops[send].u.copy.peer == 1 && t.ops[send].device == 0);
    int gsend = tu_find_op(&t, "s1.mb3.grad_send"), brecv = tu_find_op(&t, "s0.mb3.L7.attn_norm.bwd");
    int bfirst = tu_find_op(&t, "s0.mb3.L7.mlp_norm.bwd");
    (void)brecv;
    /* stage 0's backward of mb3 begins with its last layer's last op */
    int first_bwd = -1;
    for (uint32_t i = 0; i < t.nops; i++)
        if (t.ops[i].device == 0 && strncmp(op_id(&t, &t.ops[i]), "s0.mb3.", 7) == 0 && t.ops[i].pass == PASS_BWD) {
            first_bwd = (int)i;
            break;
        }
    CHECK(gsend >= 0 && first_bwd >= 0 && tu_depends_on(&t, first_bwd, gsend));
    CHECK(bfirst >= 0);
    /* 1F1B order on stage 1: warm-up of 2 forwards, then forward 2, backward 0 */
    int f2 = tu_find_op(&t, "s1.mb2.L8.attn_norm"), b0 = tu_find_op(&t, "s1.mb0.L15.attn_norm.bwd"),
        f3 = tu_find_op(&t, "s1.mb3.L8.attn_norm");
    CHECK(f2 >= 0 && b0 > f2 && f3 > b0);
    /* on a node of H100s: every device idles for the bubble and no more */
    struct hw_system sys;
    CHECK_EQ_INT(tu_load_hw("configs/systems/nvidia-hgx-h100.yaml", NULL, &sys, &d), 0);
    struct run_result r;
    CHECK_EQ_INT(run_system_opts(&sys, &t, NULL, &r, &d), 0);
    double bubble = 3.0 / 11.0, r1idle[4];
    uint64_t r1total = r.total_ps;
    for (uint32_t dv = 0; dv < 4; dv++) {
        double idle = r.dev_time_ps[(size_t)dv * (CAT_COUNT + 1) + RUN_IDLE] / (double)r.total_ps;
        r1idle[dv] = idle;
        printf("  stage %u idle %.1f%% (1F1B bubble %.1f%%)\n", dv, 100 * idle, 100 * bubble);
        CHECK(idle > bubble * 0.6 && idle < bubble * 1.4);
    }
    run_result_free(&r);
    trace_free(&t);
    *r1total_out = r1total;
    memcpy(r1idle_out, r1idle, sizeof r1idle);
    sys_free(&sys);
}

static void test_interleaved(const struct llm_config *cfg, const struct llm_step *step,
                             uint64_t r1total, const double r1idle[4])
{
    struct diag d;
    memset(&d, 0, sizeof d);
    struct llm_config c = *cfg;
    struct llm_step s = *step;
    struct trace t;
    struct hw_system sys;
    CHECK_EQ_INT(tu_load_hw("configs/systems/nvidia-hgx-h100.yaml", NULL, &sys, &d), 0);
    /* interleaved 1F1B (--vpp 2, Megatron's virtual pipeline): stage st
     * holds chunks st and 4 + st of the 8 four-layer shares; stage 0's
     * chunk 1 takes the last stage's chunk-0 activations, and the last
     * stage's chunk-0 backward the first stage's chunk-1 gradients.  The
     * bubble is (P - 1) / V of a micro-batch's stage time: idle 1.5 / 9.5
     * of the step plus the chunks' extra copies, less than without */
    struct llm_step sv = s;
    sv.vpp = 2;
    CHECK_EQ_INT(llm_build(&c, &sv, &t, &d), 0);
    CHECK(tu_find_op(&t, "s0.mb0.L0.qkv_proj") >= 0 && tu_find_op(&t, "s0.mb0.L16.qkv_proj") >= 0 &&
          tu_find_op(&t, "s0.mb0.L4.qkv_proj") < 0 && tu_find_op(&t, "s3.mb0.L28.qkv_proj") >= 0);
    int wrap = tu_find_op(&t, "s3.mb2.c0.act_send"), c1 = tu_find_op(&t, "s0.mb2.L16.attn_norm");
    CHECK(wrap >= 0 && c1 >= 0 && tu_depends_on(&t, c1, wrap) && t.ops[wrap].u.copy.peer == 0);
    int gwrap = tu_find_op(&t, "s0.mb2.c1.grad_send"), b3 = tu_find_op(&t, "s3.mb2.L15.down_proj.bwd");
    CHECK(gwrap >= 0 && b3 >= 0 && tu_depends_on(&t, b3, gwrap) && t.ops[gwrap].u.copy.peer == 3);
    /* Megatron's order on stage 3: 0 + 4 warm-up chunk-forwards (mb 0-3 of
     * chunk 0), then chunk 1's mb 0 forward before chunk 1's mb 0 backward */
    int w3 = tu_find_op(&t, "s3.mb3.L12.attn_norm"), f40 = tu_find_op(&t, "s3.mb0.L28.attn_norm"),
        bw0 = tu_find_op(&t, "s3.mb0.L31.attn_norm.bwd");
    CHECK(w3 >= 0 && f40 > w3 && bw0 > f40);
    struct run_result rv;
    CHECK_EQ_INT(run_system_opts(&sys, &t, NULL, &rv, &d), 0);
    for (uint32_t dv = 0; dv < 4; dv++) {
        double idle = rv.dev_time_ps[(size_t)dv * (CAT_COUNT + 1) + RUN_IDLE] / (double)rv.total_ps;
        double idle1 = r1idle[dv];
        printf("  interleaved (2 chunks a stage): stage %u idle %.1f%% (bubble %.1f%%; 1F1B %.1f%%)\n", dv,
               100 * idle, 100 * 1.5 / 9.5, 100 * idle1);
        CHECK(idle < idle1 * 0.8);
        CHECK(idle > 1.5 / 9.5 * 0.6 && idle < 1.5 / 9.5 * 1.4);
    }
    printf("  step %.2f ms, 1F1B %.2f ms\n", (double)rv.total_ps * 1e-9, (double)r1total * 1e-9);
    CHECK(rv.total_ps < r1total);
    run_result_free(&rv);
    sys_free(&sys);
    trace_free(&t);
    sv.microbatches = 6;    /* not a multiple of the 4 stages */
    sv.batch = 6;
    CHECK(llm_build(&c, &sv, &t, &d) != 0);
    CHECK(strcmp(d.field, "--vpp") == 0);
    sv.microbatches = 8;
    sv.batch = 8;
    sv.vpp = 9;             /* 36 shares of 32 layers */
    CHECK(llm_build(&c, &sv, &t, &d) != 0);
    CHECK(strcmp(d.field, "--vpp") == 0);
}

static void test_3d_zero(const struct llm_config *cfg, const struct llm_step *step)
{
    struct diag d;
    memset(&d, 0, sizeof d);
    struct llm_config c = *cfg;
    struct llm_step s = *step;
    struct trace t;
    /* 3D: TP 2 x DP 2 x PP 2 on the 8 GPUs of an HGX H100.  Devices: TP
     * rank fastest, then replica, then stage; each TP pair all-reduces
     * inside its stage, each stage's replicas all-reduce their gradients
     * once, in the last micro-batch's backward, and the activations go to
     * the same TP rank and replica of the next stage */
    struct llm_step s3 = s;
    s3.tp = 2;
    s3.dp = 2;
    s3.pp = 2;
    s3.batch = 4;
    s3.microbatches = 4;
    CHECK_EQ_INT(llm_build(&c, &s3, &t, &d), 0);
    CHECK_EQ_INT(t.ndevices, 8);
    CHECK_EQ_INT(t.ngroups, 4 + 4);
    int a = tu_find_op(&t, "r5.s1.mb0.act_send");       /* stage 1 has no act_send */
    CHECK(a < 0);
    a = tu_find_op(&t, "r1.s0.mb2.act_send");            /* stage 0, replica 0, TP rank 1 -> device 5 */
    CHECK(a >= 0 && t.ops[a].device == 1 && t.ops[a].u.copy.peer == 5);
    int g = tu_find_op(&t, "r6.s1.mb3.grad_send");       /* stage 1, replica 1, TP rank 0 -> device 2 */
    CHECK(g >= 0 && t.ops[g].u.copy.peer == 2);
    uint32_t dp_ar = 0, tp_ar = 0;
    for (uint32_t i = 0; i < t.nops; i++) {
        const struct op *o = &t.ops[i];
        if (o->kind != OP_COLLECTIVE || o->device != 4)
            continue;
        const struct trace_group *gr = &t.groups[o->u.coll.group];
        uint32_t m0 = t.group_dev[gr->off], m1 = t.group_dev[gr->off + 1];
        if (strstr(op_id(&t, o), "dp_allreduce") != NULL) {
            CHECK(m0 == 4 && m1 == 6 && o->stream == 1);   /* stage 1's TP rank 0 of both replicas */
            CHECK(strstr(op_id(&t, o), "mb3.") == NULL);
            dp_ar++;
        } else {
            CHECK(m0 == 4 && m1 == 5);                     /* stage 1, replica 0 */
            tp_ar++;
        }
    }
    CHECK_EQ_INT(dp_ar, 16 + 1);         /* L16..L31, and the head */
    /* forward: 2 a layer, 2 for the loss; backward: 2 a layer and the head's
     * input gradients; 4 micro-batches */
    CHECK_EQ_INT(tp_ar, 4 * (16 * 2 + 2 + 16 * 2 + 1));
    struct hw_system sys3;
    CHECK_EQ_INT(tu_load_hw("configs/systems/nvidia-hgx-h100.yaml", NULL, &sys3, &d), 0);
    struct run_result r3;
    CHECK_EQ_INT(run_system_opts(&sys3, &t, NULL, &r3, &d), 0);
    printf("  TP 2 x DP 2 x PP 2, 4 micro-batches: step %.2f ms\n", (double)r3.total_ps * 1e-9);
    for (uint32_t dv = 0; dv < 8; dv++) {
        double idle = r3.dev_time_ps[(size_t)dv * (CAT_COUNT + 1) + RUN_IDLE] / (double)r3.total_ps;
        CHECK(idle > 0.5 * 1.0 / 5.0 && idle < 0.6);   /* the bubble: (P - 1) / (M + P - 1) = 20% */
    }
    double adamw0 = 0;
    int aw = tu_find_op(&t, "r4.s1.adamw");
    CHECK(aw >= 0);
    if (aw >= 0)
        adamw0 = (double)t.ops[aw].u.ew.elements;
    uint64_t step0 = r3.total_ps;
    run_result_free(&r3);
    trace_free(&t);

    /* ZeRO-1 with the pipeline (Megatron's distributed optimizer): each
     * stage's layer gradients are reduce-scattered over its replicas, AdamW
     * updates half the stage's state, and one all-gather brings the weights
     * back at the end; ZeRO-3 is refused (as DeepSpeed does) */
    struct llm_step z1 = s3;
    z1.zero = 1;
    CHECK_EQ_INT(llm_build(&c, &z1, &t, &d), 0);
    uint32_t rs = 0, ag = 0, ar = 0;
    for (uint32_t i = 0; i < t.nops; i++) {
        const struct op *o = &t.ops[i];
        if (o->kind != OP_COLLECTIVE || o->device != 4)
            continue;
        rs += o->u.coll.what == COLL_REDUCE_SCATTER;
        ag += o->u.coll.what == COLL_ALL_GATHER;
        ar += strstr(op_id(&t, o), "dp_allreduce") != NULL;
    }
    CHECK_EQ_INT(rs, 16 + 1);
    CHECK_EQ_INT(ag, 1);
    CHECK_EQ_INT(ar, 0);
    aw = tu_find_op(&t, "r4.s1.adamw");
    CHECK(aw >= 0 && fabs((double)t.ops[aw].u.ew.elements - adamw0 / 2) <= 1.0);
    int pg = tu_find_op(&t, "r4.s1.param_allgather");
    CHECK(pg >= 0 && tu_depends_on(&t, pg, aw));
    struct run_result rz;
    CHECK_EQ_INT(run_system_opts(&sys3, &t, NULL, &rz, &d), 0);
    printf("  the same with ZeRO-1: step %.2f ms (without: %.2f)\n", (double)rz.total_ps * 1e-9,
           (double)step0 * 1e-9);
    CHECK(rz.total_ps < step0);        /* half the optimizer's memory traffic */
    run_result_free(&rz);
    trace_free(&t);
    z1.zero = 3;
    memset(&d, 0, sizeof d);
    CHECK(llm_build(&c, &z1, &t, &d) != 0);
    CHECK_STR_CONTAINS(d.msg, "ZeRO-3 does not combine with --pp");
    sys_free(&sys3);
}

static void test_moe_stages(void)
{
    struct diag d;
    memset(&d, 0, sizeof d);
    struct trace t;
    /* a MoE model over stages (Mixtral, PP 4, experts whole on their
     * stage): each layer's experts run forward and backward, its router's
     * top-k forward only (no backward kernel), and the step runs */
    struct llm_config moe;
    CHECK_EQ_INT(llm_config_load("traces/models/mixtral-8x7b.json", &moe, &d), 0);
    struct llm_step sm = {LLM_TRAIN, 4, 256, 0, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0,
                          LLM_FW_FUSED, 1, 1, 0, 0, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    CHECK_EQ_INT(llm_build(&moe, &sm, &t, &d), 0);
    CHECK(tu_find_op(&t, "s2.mb1.L17.experts_gate_up") >= 0 && tu_find_op(&t, "s2.mb1.L17.experts_gate_up.bwd") >= 0);
    CHECK(tu_find_op(&t, "s2.mb1.L17.topk") >= 0 && tu_find_op(&t, "s2.mb1.L17.topk.bwd") < 0);
    struct hw_system sysm;
    CHECK_EQ_INT(tu_load_hw("configs/systems/nvidia-hgx-h100.yaml", NULL, &sysm, &d), 0);
    struct run_result rm;
    CHECK_EQ_INT(run_system_opts(&sysm, &t, NULL, &rm, &d), 0);
    CHECK(rm.total_ps > 0);
    run_result_free(&rm);
    trace_free(&t);
    /* EP inside DP on every stage (Megatron's MoE layout): PP 2 x DP 4 x
     * EP 2 on 8 GPUs.  Stage 1 is devices 4-7; its EP groups are replica
     * pairs {4,5}, {6,7} and each expert's gradients go over the replicas
     * holding it, {5,7} for device 5; the all-to-alls run again backward;
     * AdamW updates the stage's dense weights and 4 of its 8 experts */
    struct llm_step se = sm;
    se.pp = 2;
    se.microbatches = 2;
    se.dp = 4;
    se.ep = 2;
    CHECK_EQ_INT(llm_build(&moe, &se, &t, &d), 0);
    CHECK_EQ_INT(t.ndevices, 8);
    int disp = tu_find_op(&t, "r5.s1.mb1.L20.dispatch"), dispb = tu_find_op(&t, "r5.s1.mb1.L20.dispatch.bwd");
    CHECK(disp >= 0 && dispb >= 0);
    if (disp >= 0 && dispb >= 0) {
        const struct trace_group *ge = &t.groups[t.ops[disp].u.coll.group];
        CHECK(ge->n == 2 && t.group_dev[ge->off] == 4 && t.group_dev[ge->off + 1] == 5);
        CHECK(t.ops[dispb].u.coll.what == COLL_ALL_TO_ALL && t.ops[dispb].u.coll.group == t.ops[disp].u.coll.group);
    }
    double xl = 8.0 * 3 * 4096 * 14336;   /* a layer's experts */
    int edp = tu_find_op(&t, "r5.s1.L20.edp_allreduce"), ddp = tu_find_op(&t, "r5.s1.L20.dp_allreduce");
    CHECK(edp >= 0 && ddp >= 0);
    if (edp >= 0 && ddp >= 0) {
        const struct trace_group *gx = &t.groups[t.ops[edp].u.coll.group];
        CHECK(gx->n == 2 && t.group_dev[gx->off] == 5 && t.group_dev[gx->off + 1] == 7);
        CHECK_NEAR_REL((double)t.ops[edp].u.coll.bytes, xl / 2 * 2, 1e-6);
        CHECK_EQ_INT(t.groups[t.ops[ddp].u.coll.group].n, 4);
    }
    int awe = tu_find_op(&t, "r5.s1.adamw");
    double lpe = ((double)llm_param_count(&moe) - 2.0 * 32000 * 4096 - 4096) / 32;  /* less the final norm */
    CHECK(awe >= 0 && fabs((double)t.ops[awe].u.ew.elements - ((lpe - xl) * 16 + 32000.0 * 4096 + xl * 16 / 2)) <= 1.0);
    struct run_result re;
    CHECK_EQ_INT(run_system_opts(&sysm, &t, NULL, &re, &d), 0);
    printf("  Mixtral PP 2 x DP 4 x EP 2, 2 micro-batches of 2 x 256 tokens, HGX H100: %.1f ms\n",
           (double)re.total_ps * 1e-9);
    CHECK(re.total_ps > 0);
    run_result_free(&re);
    sys_free(&sysm);
    trace_free(&t);
}

static void test_recompute(const struct llm_config *cfg, const struct llm_step *step, uint64_t r1total)
{
    struct diag d;
    memset(&d, 0, sizeof d);
    struct llm_config c = *cfg;
    struct llm_step s = *step;
    struct trace t;
    /* full recomputation with the pipeline: each layer's backward in each
     * micro-batch first runs its forward again (".recompute"), and the
     * first of those waits for the next stage's gradients */
    struct llm_step rcs = s;
    rcs.recompute = 1;
    CHECK_EQ_INT(llm_build(&c, &rcs, &t, &d), 0);
    int rq = tu_find_op(&t, "s1.mb3.L15.attn_norm.recompute"), rb = tu_find_op(&t, "s1.mb3.L15.down_proj.bwd");
    CHECK(rq >= 0 && rb > rq && t.ops[rq].pass == PASS_FWD);
    int rfirst = tu_find_op(&t, "s1.mb3.L15.attn_norm.recompute"), gs = tu_find_op(&t, "s2.mb3.grad_send");
    CHECK(rfirst >= 0 && gs >= 0 && tu_depends_on(&t, rfirst, gs));
    uint32_t nrc = 0;
    for (uint32_t i = 0; i < t.nops; i++)
        nrc += t.ops[i].device == 1 && strstr(op_id(&t, &t.ops[i]), ".qkv_proj.recompute") != NULL;
    CHECK_EQ_INT(nrc, 8 * 8);      /* 8 layers on stage 1, 8 micro-batches */
    struct hw_system sysr;
    CHECK_EQ_INT(tu_load_hw("configs/systems/nvidia-hgx-h100.yaml", NULL, &sysr, &d), 0);
    struct run_result rr;
    CHECK_EQ_INT(run_system_opts(&sysr, &t, NULL, &rr, &d), 0);
    printf("  with --recompute: %.2f ms (without: %.2f ms)\n", (double)rr.total_ps * 1e-9,
           (double)r1total * 1e-9);
    CHECK(rr.total_ps > r1total * 1.1 && rr.total_ps < r1total * 1.5);
    run_result_free(&rr);
    sys_free(&sysr);
    trace_free(&t);
}

/* tied embeddings (SmolLM-135M): a layer's gradients are the same
 * bytes with and without the pipeline (its parameters less one
 * embedding table and the final norm) */
static void test_tied(const struct llm_config *tiedcfg)
{
    struct diag d;
    memset(&d, 0, sizeof d);
    struct llm_config tied = *tiedcfg;
    struct trace t;
    CHECK(tied.tied);
    struct llm_step st1 = {LLM_TRAIN, 2, 256, 0, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0,
                           LLM_FW_FUSED, 1, 2, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    CHECK_EQ_INT(llm_build(&tied, &st1, &t, &d), 0);
    int rs1 = tu_find_op(&t, "r0.L0.dp_reduce_scatter");
    uint64_t rs_flat = rs1 >= 0 ? t.ops[rs1].u.coll.bytes : 0;
    trace_free(&t);
    st1.pp = 2;
    st1.microbatches = 2;
    CHECK_EQ_INT(llm_build(&tied, &st1, &t, &d), 0);
    int rs2 = tu_find_op(&t, "r0.s0.L0.dp_reduce_scatter");
    CHECK(rs1 >= 0 && rs2 >= 0 && rs_flat > 0 && t.ops[rs2].u.coll.bytes == rs_flat);
    trace_free(&t);
}

static void test_working_set(const struct llm_config *cfg, const struct llm_step *step)
{
    struct diag d;
    memset(&d, 0, sizeof d);
    struct llm_config c = *cfg;
    struct llm_step s = *step;
    struct trace t;
    /* a stage's weights count once in its working set, however many
     * micro-batches use them (each micro-batch's forward GEMMs after the
     * first are another op's weights): 8 micro-batches hold what 1 does */
    {
        double w1 = 0, w8 = 0;
        struct llm_step one = s;
        one.microbatches = 1;
        CHECK_EQ_INT(llm_build(&c, &one, &t, &d), 0);
        trace_working_set(&t, 1, &w1);
        trace_free(&t);
        CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
        trace_working_set(&t, 1, &w8);
        trace_free(&t);
        /* stage 1: L8..L15, 8 x 202 M parameters at 2 bytes */
        CHECK_NEAR_REL(w1, 8.0 * 2.0 * (4096.0 * 3 * 4096 + 4096.0 * 4096 + 3.0 * 4096 * 11008), 1e-9);
        CHECK_NEAR_REL(w8, w1, 1e-12);
    }
}

static void test_grad_accum(const struct llm_config *cfg, const struct llm_step *step)
{
    struct diag d;
    memset(&d, 0, sizeof d);
    struct llm_config c = *cfg;
    struct llm_step s = *step;
    struct trace t;
    /* gradient accumulation (--microbatches without --pp): the schedule on
     * one stage, a forward and a backward per micro-batch, each layer's
     * gradients all-reduced once, during the last backward; smaller GEMMs
     * and less overlap make the step slower than one pass over the batch,
     * on the same FLOPs; the working set and fit's activations are one
     * micro-batch's */
    {
        struct llm_step ga = s;
        ga.pp = 0;
        ga.dp = 2;
        ga.microbatches = 4;
        CHECK_EQ_INT(llm_build(&c, &ga, &t, &d), 0);
        CHECK(tu_find_op(&t, "r0.s0.mb3.L31.qkv_proj") >= 0 && tu_find_op(&t, "r1.s0.mb3.L0.qkv_proj.bwd") >= 0);
        uint32_t nar = 0, nq = 0;
        for (uint32_t i = 0; i < t.nops; i++) {
            nar += t.ops[i].device == 0 && tu_ends_with(op_id(&t, &t.ops[i]), ".dp_allreduce");
            nq += t.ops[i].device == 0 && tu_ends_with(op_id(&t, &t.ops[i]), ".qkv_proj");
        }
        CHECK_EQ_INT(nar, 33);          /* once a layer, and the embedding's */
        CHECK_EQ_INT(nq, 4 * 32);       /* every micro-batch's forward */
        int gar = tu_find_op(&t, "r0.s0.L5.dp_allreduce"), last = tu_find_op(&t, "r0.s0.mb3.L5.attn_norm.bwd");
        CHECK(tu_depends_on(&t, gar, last));
        struct hw_system sg;
        CHECK_EQ_INT(tu_load_hw("configs/systems/nvidia-hgx-h100.yaml", NULL, &sg, &d), 0);
        struct run_result rg, r1;
        CHECK_EQ_INT(run_system_opts(&sg, &t, NULL, &rg, &d), 0);
        trace_free(&t);
        struct llm_step one = ga;
        one.microbatches = 0;
        CHECK_EQ_INT(llm_build(&c, &one, &t, &d), 0);
        CHECK_EQ_INT(run_system_opts(&sg, &t, NULL, &r1, &d), 0);
        printf("  Llama-2-7B, DP 2, 8 x 1024 tokens a replica: one pass %.1f ms, 4 micro-batches %.1f ms\n",
               (double)r1.total_ps * 1e-9, (double)rg.total_ps * 1e-9);
        CHECK(rg.total_ps > r1.total_ps);
        CHECK_NEAR_REL(rg.flops, r1.flops, 1e-3);
        run_result_free(&rg);
        run_result_free(&r1);
        sys_free(&sg);
        trace_free(&t);
        /* not with decode, nor with ZeRO-3 */
        struct llm_step bd = ga;
        bd.phase = LLM_DECODE;
        bd.dp = 0;
        memset(&d, 0, sizeof d);
        CHECK(llm_build(&c, &bd, &t, &d) != 0);
        CHECK_STR_CONTAINS(d.field, "--microbatches");
        bd = ga;
        bd.zero = 3;
        memset(&d, 0, sizeof d);
        CHECK(llm_build(&c, &bd, &t, &d) != 0);
        CHECK_STR_CONTAINS(d.field, "--zero");
    }
}

static void test_refused(const struct llm_config *cfg, const struct llm_step *step,
                         const struct llm_config *tiedcfg)
{
    struct diag d;
    memset(&d, 0, sizeof d);
    struct llm_config c = *cfg;
    struct llm_step s = *step;
    struct trace t;
    struct llm_config tied = *tiedcfg;
    /* refused until modelled, by field */
    static const struct { int recompute; uint32_t mb; uint64_t batch; const char *want; } bad[] = {
        {0, 3, 8, "split"}, {1, 5, 8, "split"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct llm_step b = s;
        b.recompute = bad[i].recompute;
        b.microbatches = bad[i].mb;
        b.batch = bad[i].batch;
        memset(&d, 0, sizeof d);
        CHECK(llm_build(&c, &b, &t, &d) != 0);
        CHECK_STR_CONTAINS(d.msg, bad[i].want);
    }
    /* a tied embedding with gradient accumulation (one stage holds the
     * embedding and the head): AdamW counts the table once, as without
     * micro-batches */
    {
        struct llm_step ta = {LLM_TRAIN, 4, 256, 0, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0,
                              LLM_FW_FUSED, 1, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        double el[2] = {0, 0};
        for (int k = 0; k < 2; k++) {
            ta.microbatches = k ? 2 : 0;
            CHECK_EQ_INT(llm_build(&tied, &ta, &t, &d), 0);
            for (uint32_t i = 0; i < t.nops; i++)
                if (t.ops[i].device == 0 && tu_ends_with(op_id(&t, &t.ops[i]), ".adamw"))
                    el[k] = (double)t.ops[i].u.ew.elements;
            trace_free(&t);
        }
        CHECK(el[0] > 0);
        CHECK_NEAR_REL(el[1], el[0], 1e-4);     /* less the final norm, 576 of 67 million */
    }
    struct llm_step dec = s;
    dec.phase = LLM_DECODE;
    CHECK(llm_build(&c, &dec, &t, &d) != 0);
}

int main(void)
{
    struct diag d;
    memset(&d, 0, sizeof d);
    struct llm_config c;
    CHECK_EQ_INT(llm_config_load("traces/models/llama-2-7b.json", &c, &d), 0);
    struct llm_step s = {LLM_TRAIN, 8, 1024, 0, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0,
                         LLM_FW_FUSED, 1, 1, 0, 0, 4, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    struct llm_config tied;
    CHECK_EQ_INT(llm_config_load("traces/models/smollm-135m.json", &tied, &d), 0);
    uint64_t r1total = 0;
    double r1idle[4] = {0, 0, 0, 0};
    test_1f1b(&c, &s, &r1total, r1idle);
    test_interleaved(&c, &s, r1total, r1idle);
    test_3d_zero(&c, &s);
    test_moe_stages();
    test_recompute(&c, &s, r1total);
    test_tied(&tied);
    test_working_set(&c, &s);
    test_grad_accum(&c, &s);
    test_refused(&c, &s, &tied);
    TEST_MAIN_END();
}
