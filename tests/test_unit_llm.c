/* test_unit_llm.c: the LLM trace builder.  Parameter counts of the bundled
 * Hugging Face configs against the published totals, the shape of a
 * decode and a prefill step, and the config checks (context too long,
 * hidden size not divisible by heads, kv heads not dividing heads, a
 * required field missing). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfg.h"
#include "check.h"
#include "llm.h"
#include "run.h"
#include "system.h"
#include "test.h"
#include "util.h"
#include "trace.h"

static char tmpdir[64];

/* Published parameter totals (the sum of the safetensors shapes). */
static void check_params(const char *path, uint64_t expected, int tied)
{
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    int rc = llm_config_load(path, &c, &d);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0) {
        fprintf(stderr, "  ^ %s: ", path);
        diag_print(&d, stderr);
        return;
    }
    uint64_t n = llm_param_count(&c);
    CHECK_EQ_INT(n, expected);
    CHECK_EQ_INT(c.tied, tied);
    printf("%-36s %llu parameters\n", path, (unsigned long long)n);
}

static void test_param_counts(void)
{
    check_params("traces/models/llama-2-7b.json", 6738415616ull, 0);
    check_params("traces/models/llama-2-13b.json", 13015864320ull, 0); /* by hand: 2 x 32000 x 5120 + 40 x 317,204,480 + 5120 */
    check_params("traces/models/llama-3-8b.json", 8030261248ull, 0);
    /* ExLlamaV2's README models (traces/validation/stacks/exllamav2.csv), by
     * hand as 2 x vocab x hidden + layers x layer + hidden, a layer being
     * q and o (hidden^2 each), k and v (hidden x kv_heads x head_dim each),
     * gate, up and down (hidden x ffn each) and two norms: LLaMA-30B (the
     * paper's "33B", 32.5 B), OpenLLaMA-3B, CodeLlama-34B (GQA, 8 KV
     * heads; 33.7 B) and TinyLlama-1.1B (4 KV heads) */
    check_params("traces/models/llama-30b.json", 32528943616ull, 0);     /* 60 x 535,049,216 */
    check_params("traces/models/open-llama-3b.json", 3426473600ull, 0);  /* 26 x 123,910,400 */
    check_params("traces/models/codellama-34b.json", 33743970304ull, 0); /* 48 x 692,076,544 */
    check_params("traces/models/tinyllama-1.1b.json", 1100048384ull, 0); /* 22 x 44,044,288 */
    check_params("traces/models/llama-3.2-1b.json", 1235814400ull, 1); /* 262,668,288 tied + 16 x 60,821,504 + 2048 */
    check_params("traces/models/mistral-7b.json", 7241732096ull, 0);
    check_params("traces/models/smollm-135m.json", 134515008ull, 1);
    check_params("traces/models/phi-3-mini-4k.json", 3821079552ull, 0);
    /* the published totals of Llama-3.1-70B and -405B and Mixtral-8x7B
     * (70.55 B, 405.85 B, 46.70 B) */
    check_params("traces/models/llama-3.1-70b.json", 70553706496ull, 0);
    check_params("traces/models/llama-3.1-405b.json", 405853388800ull, 0);
    check_params("traces/models/mixtral-8x7b.json", 46702792704ull, 0);
    /* plain (non-gated) MLPs: GPT-3 175B as Megatron builds it (tied
     * embedding, its 50257-token vocabulary padded to 50688; 174.6 B
     * without the 2048 learned positions and the biases), Nemotron-4 15B
     * (arXiv 2402.16819: 12.5 B besides 3.2 B of embeddings) and 340B
     * (arXiv 2406.11704: 341 B) */
    check_params("traces/models/gpt3-175b.json", 174571401216ull, 1);
    check_params("traces/models/nemotron-4-15b.json", 15628376064ull, 0);
    check_params("traces/models/nemotron-4-340b.json", 341025638400ull, 0);
}

/* A plain MLP (hidden_act relu2, model_type nemotron) is up, the
 * activation and down: no gate GEMM, the activation's FLOPs (relu2: 2),
 * and in TP training the up projection is the column-parallel one whose
 * input gradient is all-reduced. */
static void test_plain_mlp(void)
{
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load("traces/models/nemotron-4-15b.json", &c, &d), 0);
    CHECK(!c.gated && strcmp(c.act, "relu2") == 0 && c.act_flops == 2.0);
    struct llm_step s = {LLM_TRAIN, 1, 256, 0, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0,
                         LLM_FW_FUSED, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    struct trace t;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    int up = tu_find_op(&t, "r0.L0.up_proj"), act = tu_find_op(&t, "r0.L0.act");
    CHECK(up >= 0 && act >= 0 && tu_find_op(&t, "r0.L0.gate_proj") < 0);
    if (up >= 0 && act >= 0) {
        CHECK(t.ops[up].u.gemm.n == 24576 / 2 && t.ops[up].u.gemm.k == 6144);
        CHECK(t.ops[act].u.ew.inputs == 1 && t.ops[act].u.ew.flops_per_element == 2.0 &&
              t.ops[act].u.ew.elements == 256ull * 24576 / 2);
    }
    CHECK(tu_find_op(&t, "r0.L0.up_proj.grad_allreduce") >= 0);
    trace_free(&t);
    /* Llama stays gated, its silu_mul 6 FLOPs an element */
    CHECK_EQ_INT(llm_config_load("traces/models/llama-3-8b.json", &c, &d), 0);
    CHECK(c.gated && c.act_flops == 5.0);
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    CHECK(tu_find_op(&t, "r0.L0.gate_proj.grad_allreduce") >= 0 && tu_find_op(&t, "r0.L0.up_proj.grad_allreduce") < 0);
    trace_free(&t);
}

/* Tensor parallelism as gpt-fast shards a model: per rank 1/N of the heads
 * and of the MLP, two all-reduces per layer paired across the ranks. */
static void test_tensor_parallel(void)
{
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load("traces/models/llama-3.1-70b.json", &c, &d), 0);
    struct llm_step s = {LLM_DECODE, 1, 1, 100, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0, LLM_FW_FUSED, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    struct trace t;
    int rc = llm_build(&c, &s, &t, &d);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0)
        return;
    CHECK_EQ_INT(t.ndevices, 8);
    CHECK_EQ_INT(t.ngroups, 1);
    CHECK_EQ_INT(t.ncolls, 2 * 80);
    uint32_t per_rank = t.nops / 8, colls = 0;
    for (uint32_t i = 0; i < t.nops; i++) {
        const struct op *o = &t.ops[i];
        CHECK_EQ_INT(o->device, i / per_rank);
        if (o->kind == OP_COLLECTIVE) {
            colls++;
            CHECK_EQ_INT(o->u.coll.bytes, 8192 * 2);        /* one token x hidden x bf16 */
            CHECK_EQ_INT(t.ops[t.coll_ops[t.colls[o->u.coll.inst].ops_off + o->device]].device,
                         o->device);
        }
        if (strcmp(op_id(&t, o), "r3.L7.qkv_proj") == 0)   /* 64/8 q heads + 2 x 8/8 kv heads of 128 */
            CHECK_EQ_INT(o->u.gemm.n, (8 + 2) * 128);
        if (strcmp(op_id(&t, o), "r3.L7.down_proj") == 0)
            CHECK_EQ_INT(o->u.gemm.k, 28672 / 8);
        if (strcmp(op_id(&t, o), "r5.L0.attention") == 0) {
            CHECK_EQ_INT(o->u.attn.heads, 8);
            CHECK_EQ_INT(o->u.attn.kv_heads, 1);
        }
        if (strcmp(op_id(&t, o), "r0.lm_head") == 0)        /* replicated, as gpt-fast leaves it (vLLM: below) */
            CHECK_EQ_INT(o->u.gemm.n, 128256);
    }
    CHECK_EQ_INT(colls, 8 * 160);
    /* written and read back, the loader pairs the same all-reduces */
    char path[128];
    snprintf(path, sizeof path, "%s/tp.json", tmpdir);
    CHECK_EQ_INT(trace_write(&t, path, &d), 0);
    struct trace u;
    rc = trace_load(path, &u, &d);
    CHECK_EQ_INT(rc, 0);
    if (rc == 0) {
        CHECK_EQ_INT(u.ncolls, 160);
        for (uint32_t i = 0; i < u.nops; i++)
            if (u.ops[i].kind == OP_COLLECTIVE)
                CHECK_EQ_INT(u.ops[i].u.coll.inst, t.ops[i].u.coll.inst);
        trace_free(&u);
    } else {
        diag_print(&d, stderr);
    }
    trace_free(&t);
    /* vLLM's layout splits the vocabulary over the ranks too: the
     * embedding's output all-reduced, each rank 1/8 of the LM head's 128256
     * rows, the logits (one token x 128256 x bf16) gathered to the sampler:
     * two more collectives, and 1/8 of the head's bytes a rank */
    s.framework = LLM_FW_VLLM;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    CHECK_EQ_INT(t.ncolls, 2 * 80 + 2);
    int head = tu_find_op(&t, "r0.lm_head"), emb = tu_find_op(&t, "r2.embed_allreduce"),
        gat = tu_find_op(&t, "r7.logits_gather");
    CHECK(head >= 0 && emb >= 0 && gat >= 0);
    if (head >= 0 && emb >= 0 && gat >= 0) {
        CHECK_EQ_INT(t.ops[head].u.gemm.n, 128256 / 8);
        CHECK_EQ_INT(t.ops[emb].u.coll.what, COLL_ALL_REDUCE);
        CHECK_EQ_INT(t.ops[emb].u.coll.bytes, 8192 * 2);
        CHECK_EQ_INT(t.ops[gat].u.coll.what, COLL_ALL_GATHER);
        CHECK_EQ_INT(t.ops[gat].u.coll.bytes, 128256 * 2);
    }
    trace_free(&t);
    s.framework = LLM_FW_FUSED;
    /* 16 ranks: more than the 8 K/V heads, which then replicate; 3 ranks
     * divide neither the heads nor the K/V heads */
    s.tp = 16;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    trace_free(&t);
    s.tp = 3;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), -1);
    CHECK(strcmp(d.field, "num_attention_heads") == 0);
    printf("%-20s ", "tp=3");
    diag_print(&d, stdout);
    /* training on TP 2 x DP 4: the backward's TP all-reduces after the
     * column-parallel projections, one DP gradient all-reduce per layer on
     * stream 1 (plus embedding and LM head), and AdamW after the last */
    s.tp = 2;
    s.dp = 4;
    s.phase = LLM_TRAIN;
    s.context = 0;
    s.prompt = 16;
    rc = llm_build(&c, &s, &t, &d);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0)
        return;
    CHECK_EQ_INT(t.ndevices, 8);
    CHECK_EQ_INT(t.ngroups, 4 + 2);     /* a TP group per replica, a DP group per TP rank */
    uint32_t tp_fwd = 0, tp_bwd = 0, dp_ar = 0, adamw = 0;
    for (uint32_t i = 0; i < t.nops; i++) {
        const struct op *o = &t.ops[i];
        if (o->device != 5)
            continue;
        if (o->kind == OP_COLLECTIVE && o->stream == 0) {
            if (strstr(op_id(&t, o), "grad_allreduce") != NULL)
                tp_bwd++;
            else
                tp_fwd++;
        }
        if (o->kind == OP_COLLECTIVE && o->stream == 1) {
            dp_ar++;
            CHECK_EQ_INT(t.groups[o->u.coll.group].n, 4);
            CHECK(trace_group_rank(&t, o->u.coll.group, 1) >= 0);  /* gpu1, gpu3, gpu5, gpu7 */
        }
        if (strcmp(op_id(&t, o), "r5.adamw") == 0) {
            adamw++;
            CHECK_EQ_INT(o->ndeps, 2);      /* the backward and the last all-reduce */
        }
    }
    CHECK_EQ_INT(tp_fwd, 2 * 80 + 3);   /* + the vocab-parallel embedding and loss */
    CHECK_EQ_INT(tp_bwd, 2 * 80 + 1);   /* + the vocab-parallel head's input gradients */
    CHECK_EQ_INT(dp_ar, 80 + 1);
    CHECK_EQ_INT(adamw, 1);
    CHECK_EQ_INT(t.ncolls, 4 * (4 * 80 + 4) + 2 * 81);
    CHECK(t.tokens == 4.0 * 16);
    trace_free(&t);
    /* data parallelism without training: refused */
    s.phase = LLM_DECODE;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), -1);
    CHECK(strcmp(d.field, "--dp") == 0);
}

/* Mixtral: top-2 of 8 experts as batched GEMMs over the experts the tokens
 * reach (uniform routing). */
/* Mixtral decode: the experts a step reaches, and expert parallelism
 * over 4 ranks. */
static void moe_decode(const struct llm_config *cfg, struct llm_step *step)
{
    struct llm_config c = *cfg;
    struct llm_step s = *step;
    struct diag d;
    memset(&d, 0, sizeof d);
    struct trace t;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    int seen = 0;
    for (uint32_t i = 0; i < t.nops; i++) {
        const struct op *o = &t.ops[i];
        if (strcmp(op_id(&t, o), "L0.experts_gate_up") == 0) {     /* 1 token: its 2 experts */
            CHECK_EQ_INT(o->u.gemm.batch, 2);
            CHECK_EQ_INT(o->u.gemm.m, 1);
            CHECK_EQ_INT(o->u.gemm.n, 2 * 14336);
            seen++;
        }
        if (strcmp(op_id(&t, o), "L0.router") == 0) {
            CHECK_EQ_INT(o->u.gemm.n, 8);
            seen++;
        }
    }
    CHECK_EQ_INT(seen, 2);
    trace_free(&t);
    /* 64 sequences: every expert is reached, 64 x 2 / 8 = 16 rows each */
    s.batch = 64;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    for (uint32_t i = 0; i < t.nops; i++)
        if (strcmp(op_id(&t, &t.ops[i]), "L5.experts_down") == 0) {
            CHECK_EQ_INT(t.ops[i].u.gemm.batch, 8);
            CHECK_EQ_INT(t.ops[i].u.gemm.m, 16);
        }
    trace_free(&t);

    /* expert parallelism over 4 ranks, 64 sequences each: each rank holds
     * 2 of the 8 experts and, under uniform routing, receives its 64 x 2
     * token copies (64 per local expert); dispatch and combine are
     * all-to-alls of 64 x 2 x 4096 x 2 bytes over the 4 ranks, on every
     * layer, pairing across the ranks */
    s.ep = 4;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    CHECK_EQ_INT(t.ndevices, 4);
    CHECK_EQ_INT(t.tokens, 4 * 64);
    uint32_t a2a[4] = {0}, gemms = 0;
    for (uint32_t i = 0; i < t.nops; i++) {
        const struct op *o = &t.ops[i];
        if (o->kind == OP_COLLECTIVE) {
            CHECK_EQ_INT(o->u.coll.what, COLL_ALL_TO_ALL);
            CHECK(o->u.coll.bytes == 64ull * 2 * 4096 * 2);
            CHECK_EQ_INT(t.groups[o->u.coll.group].n, 4);
            a2a[o->device]++;
        }
        if (strstr(op_id(&t, o), ".L7.experts_gate_up") != NULL) {
            CHECK_EQ_INT(o->u.gemm.batch, 2);
            CHECK_EQ_INT(o->u.gemm.m, 64);
            gemms++;
        }
        if (strstr(op_id(&t, o), ".L0.dispatch") != NULL && o->kind == OP_COLLECTIVE)
            CHECK(o->ndeps == 1 && strstr(op_id(&t, &t.ops[t.deps[o->deps_off]]), "dispatch_permute") != NULL);
    }
    for (int r = 0; r < 4; r++)
        CHECK_EQ_INT(a2a[r], 2 * 32);   /* two a layer, 32 layers */
    CHECK_EQ_INT(gemms, 4);
    CHECK_EQ_INT(t.ncolls, 2 * 32);
    trace_free(&t);
    /* what it cannot do is refused by field */
    s.ep = 3;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), -1);
    CHECK_STR_CONTAINS(d.msg, "does not divide the 8 experts");
    *step = s;
}

static void moe_train(const struct llm_config *cfg, struct llm_step *step)
{
    struct llm_config c = *cfg;
    struct llm_step s = *step;
    struct diag d;
    memset(&d, 0, sizeof d);
    struct trace t;
    /* training with EP: the all-to-alls again in the backward, the
     * non-expert gradients all-reduced over the EP ranks (each expert's
     * stay on its rank), AdamW over the rank's share; top-k has no
     * backward kernel */
    s.ep = 4;
    s.phase = LLM_TRAIN;
    s.context = 0;
    s.batch = 2;
    s.prompt = 256;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    uint32_t fa2a = 0, ardp = 0, topk_bwd = 0;
    double experts_layer = 8.0 * 3 * 4096 * 14336;
    double dense_layer = ((double)llm_param_count(&c) - 2.0 * 32000 * 4096 - 4096) / 32 - experts_layer;
    for (uint32_t i = 0; i < t.nops; i++) {
        const struct op *o = &t.ops[i];
        if (o->device != 1)
            continue;
        fa2a += o->kind == OP_COLLECTIVE && o->u.coll.what == COLL_ALL_TO_ALL;
        topk_bwd += strstr(op_id(&t, o), "topk.bwd") != NULL;
        if (strstr(op_id(&t, o), ".L3.dp_allreduce") != NULL) {    /* --ep 4 alone is --dp 4 --ep 4 */
            CHECK(o->u.coll.what == COLL_ALL_REDUCE && o->stream == 1);
            CHECK_EQ_INT(t.groups[o->u.coll.group].n, 4);
            CHECK_NEAR_REL((double)o->u.coll.bytes, dense_layer * 2, 1e-6);
            ardp++;
        }
        if (strcmp(op_id(&t, o), "r1.adamw") == 0)
            CHECK_NEAR_REL((double)o->u.ew.elements,
                           (double)llm_param_count(&c) - experts_layer * 32 * 3.0 / 4.0, 1e-6);
    }
    CHECK_EQ_INT(fa2a, 4 * 32);
    CHECK_EQ_INT(ardp, 1);
    CHECK_EQ_INT(topk_bwd, 0);
    trace_free(&t);
    s.dp = 2;   /* EP groups are blocks of the replicas: 4 does not divide 2 */
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), -1);
    CHECK(strcmp(d.field, "--ep") == 0);
    *step = s;
}

static void moe_ep_in_dp(const struct llm_config *cfg, struct llm_step *step)
{
    struct llm_config c = *cfg;
    struct llm_step s = *step;
    struct diag d;
    memset(&d, 0, sizeof d);
    struct trace t;
    double experts_layer = 8.0 * 3 * 4096 * 14336;
    double dense_layer = ((double)llm_param_count(&c) - 2.0 * 32000 * 4096 - 4096) / 32 - experts_layer;
    /* EP 4 inside DP 8: two EP groups of 4 consecutive replicas (the
     * all-to-alls), the non-expert gradients all-reduced over all 8, each
     * expert's (2 of 8 a rank) over the 2 replicas that hold it, and no
     * all-reduce over the EP group */
    s.dp = 8;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    CHECK_EQ_INT(t.ndevices, 8);
    CHECK_EQ_INT(t.tokens, 8 * 2 * 256);
    uint32_t edp = 0, dpar = 0;
    for (uint32_t i = 0; i < t.nops; i++) {
        const struct op *o = &t.ops[i];
        if (o->kind != OP_COLLECTIVE || o->device != 5)
            continue;
        const struct trace_group *g = &t.groups[o->u.coll.group];
        if (o->u.coll.what == COLL_ALL_TO_ALL) {
            CHECK_EQ_INT(g->n, 4);
            CHECK(t.group_dev[g->off] == 4 && t.group_dev[g->off + 3] == 7);
        }
        if (strstr(op_id(&t, o), ".L3.dp_allreduce") != NULL) {
            CHECK_EQ_INT(g->n, 8);
            CHECK_NEAR_REL((double)o->u.coll.bytes, dense_layer * 2, 1e-6);
            dpar++;
        }
        if (strstr(op_id(&t, o), ".L3.edp_allreduce") != NULL) {
            CHECK_EQ_INT(g->n, 2);
            CHECK(t.group_dev[g->off] == 1 && t.group_dev[g->off + 1] == 5);
            CHECK_NEAR_REL((double)o->u.coll.bytes, experts_layer / 4 * 2, 1e-6);
            edp++;
        }
    }
    CHECK_EQ_INT(dpar, 1);
    CHECK_EQ_INT(edp, 1);
    trace_free(&t);
    /* with ZeRO-1 (DeepSpeed-MoE's layout): both gradient reductions
     * become reduce-scatters, AdamW updates 1/8 of the dense state and
     * 1/2 of the rank's two experts', and after it the dense weights are
     * gathered over the 8 replicas and the experts' over their 2 */
    s.zero = 1;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    uint32_t rs = 0, ags = 0;
    for (uint32_t i = 0; i < t.nops; i++) {
        const struct op *o = &t.ops[i];
        if (o->device != 5)
            continue;
        if (strstr(op_id(&t, o), ".L3.edp_reduce_scatter") != NULL) {
            CHECK(o->u.coll.what == COLL_REDUCE_SCATTER && t.groups[o->u.coll.group].n == 2);
            rs++;
        }
        if (strcmp(op_id(&t, o), "r5.expert_param_allgather") == 0) {
            CHECK(o->u.coll.what == COLL_ALL_GATHER && t.groups[o->u.coll.group].n == 2);
            CHECK_NEAR_REL((double)o->u.coll.bytes, experts_layer * 32 / 4 * 2, 1e-6);
            ags++;
        }
        if (strcmp(op_id(&t, o), "r5.adamw") == 0)
            CHECK_NEAR_REL((double)o->u.ew.elements,
                           ((double)llm_param_count(&c) - experts_layer * 32) / 8 + experts_layer * 32 / 4 / 2,
                           1e-6);
    }
    CHECK_EQ_INT(rs, 1);
    CHECK_EQ_INT(ags, 1);
    trace_free(&t);
    *step = s;
}

static void moe_ep_slices_zero3(const struct llm_config *cfg, struct llm_step *step)
{
    struct llm_config c = *cfg;
    struct llm_step s = *step;
    struct diag d;
    memset(&d, 0, sizeof d);
    struct trace t;
    double experts_layer = 8.0 * 3 * 4096 * 14336;
    double dense_layer = ((double)llm_param_count(&c) - 2.0 * 32000 * 4096 - 4096) / 32 - experts_layer;
    /* and across two slices (--dcn 2): each layer's reduced share, 1/8 of
     * the dense gradients and 1/2 of the rank's experts', all-reduced with
     * the same rank of the other slice */
    s.dcn = 2;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    CHECK_EQ_INT(t.ndevices, 16);
    uint32_t dcns = 0;
    for (uint32_t i = 0; i < t.nops; i++)
        if (strcmp(op_id(&t, &t.ops[i]), "r5.L3.dcn_allreduce") == 0) {
            const struct trace_group *g = &t.groups[t.ops[i].u.coll.group];
            CHECK(g->n == 2 && t.group_dev[g->off] == 5 && t.group_dev[g->off + 1] == 13);
            CHECK_NEAR_REL((double)t.ops[i].u.coll.bytes, dense_layer * 2 / 8 + experts_layer / 4 * 2 / 2, 1e-6);
            dcns++;
        }
    CHECK_EQ_INT(dcns, 1);
    trace_free(&t);
    s.dcn = 0;
    /* ZeRO-3 with EP (FSDP with expert parallelism): before each layer's
     * forward and backward its dense weights are gathered over the 8
     * replicas and this rank's experts over the 2 that hold them, the
     * second after the first on stream 2 */
    s.zero = 3;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    uint32_t g3 = 0;
    for (uint32_t i = 0; i < t.nops; i++) {
        const struct op *o = &t.ops[i];
        if (strcmp(op_id(&t, o), "r5.L3.param_allgather") == 0 || strcmp(op_id(&t, o), "r5.L3.param_allgather.bwd") == 0) {
            CHECK(o->u.coll.what == COLL_ALL_GATHER && o->stream == 2 && t.groups[o->u.coll.group].n == 8);
            CHECK_NEAR_REL((double)o->u.coll.bytes, dense_layer * 2, 1e-3);
            g3++;
        }
        if (strcmp(op_id(&t, o), "r5.L3.param_allgather.experts") == 0 ||
            strcmp(op_id(&t, o), "r5.L3.param_allgather.bwd.experts") == 0) {
            CHECK(o->u.coll.what == COLL_ALL_GATHER && o->stream == 2 && t.groups[o->u.coll.group].n == 2);
            CHECK_NEAR_REL((double)o->u.coll.bytes, experts_layer / 4 * 2, 1e-6);
            CHECK(o->ndeps >= 1 && strstr(op_id(&t, &t.ops[t.deps[o->deps_off]]), "param_allgather") != NULL);
            g3++;
        }
    }
    CHECK_EQ_INT(g3, 4);
    trace_free(&t);
    *step = s;
}

static void moe_ep_dp_equal(const struct llm_config *cfg, struct llm_step *step)
{
    struct llm_config c = *cfg;
    struct llm_step s = *step;
    struct diag d;
    memset(&d, 0, sizeof d);
    struct trace t;
    /* with --dp equal to --ep no other replica holds a rank's experts: they
     * stay resident (not gathered, not transient), the dense weights do not */
    s.dp = 4;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    int xg = -1, qg = -1;
    for (uint32_t i = 0; i < t.nops; i++) {
        if (strcmp(op_id(&t, &t.ops[i]), "r1.L3.experts_gate_up") == 0)
            xg = (int)i;
        if (strcmp(op_id(&t, &t.ops[i]), "r1.L3.qkv_proj") == 0)
            qg = (int)i;
        CHECK(strstr(op_id(&t, &t.ops[i]), "param_allgather.experts") == NULL);
    }
    CHECK(xg >= 0 && qg >= 0 && !t.ops[xg].transient && t.ops[qg].transient);
    trace_free(&t);
    /* --ep 4 alone is --dp 4 --ep 4, ZeRO included */
    s.dp = 1;
    s.zero = 2;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    CHECK_EQ_INT(t.ndevices, 4);
    trace_free(&t);
    s.dp = 8;
    s.zero = 0;
    s.dp_sim = 2;   /* mirrors must be whole EP groups */
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), -1);
    CHECK(strcmp(d.field, "--ep") == 0);
    s.dp_sim = 0;
    s.dp = 1;
    s.phase = LLM_DECODE;
    s.batch = 64;
    *step = s;
}

static void moe_ep_tp(const struct llm_config *cfg, struct llm_step *step)
{
    struct llm_config c = *cfg;
    struct llm_step s = *step;
    struct diag d;
    memset(&d, 0, sizeof d);
    struct trace t;
    /* EP 4 with TP 2 (Megatron's layout, EP from the data-parallel
     * ranks): --ep 4 alone is 4 replicas of a TP pair, 8 devices; the
     * all-to-alls run over the same TP rank of the 4 replicas, each rank 2
     * of the 8 experts, half of each (inter / 2), on every token its
     * replica's 64 send: 64 x 2 copies over 2 experts, 64 rows each */
    s.tp = 2;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    CHECK_EQ_INT(t.ndevices, 8);
    uint32_t tpe = 0, tpa = 0;
    for (uint32_t i = 0; i < t.nops; i++) {
        const struct op *o = &t.ops[i];
        if (strcmp(op_id(&t, o), "r5.L4.experts_gate_up") == 0) {
            CHECK_EQ_INT(o->u.gemm.batch, 2);
            CHECK_EQ_INT(o->u.gemm.n, 14336);
            CHECK_EQ_INT(o->u.gemm.m, 64);
            tpe++;
        }
        if (strcmp(op_id(&t, o), "r5.L4.dispatch") == 0) {
            const struct trace_group *g = &t.groups[o->u.coll.group];
            CHECK_EQ_INT(g->n, 4);
            CHECK(t.group_dev[g->off] == 1 && t.group_dev[g->off + 1] == 3 &&
                  t.group_dev[g->off + 2] == 5 && t.group_dev[g->off + 3] == 7);
            tpa++;
        }
    }
    CHECK_EQ_INT(tpe, 1);
    CHECK_EQ_INT(tpa, 1);
    trace_free(&t);
    s.dp = 6;       /* with --dp, EP groups are blocks of it: 4 does not divide 6 */
    s.phase = LLM_TRAIN;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), -1);
    CHECK(strcmp(d.field, "--ep") == 0);
    s.dp = 1;
    s.phase = LLM_DECODE;
    /* EP over the TP group (vLLM's expert parallelism): 4 ranks with the
     * same 64 tokens, each 2 whole experts (not 1/4 of all 8), which get
     * 64 x 2 / 4 = 32 token copies, 16 each; no all-to-all, the MLP
     * all-reduce sums the experts' outputs */
    s.tp = 4;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    CHECK_EQ_INT(t.ndevices, 4);
    uint32_t eg = 0, a2as = 0, mlp_ar = 0;
    for (uint32_t i = 0; i < t.nops; i++) {
        const struct op *o = &t.ops[i];
        a2as += o->kind == OP_COLLECTIVE && o->u.coll.what == COLL_ALL_TO_ALL;
        mlp_ar += strstr(op_id(&t, o), ".mlp_allreduce") != NULL;
        if (strcmp(op_id(&t, o), "r2.L4.experts_gate_up") == 0) {
            CHECK_EQ_INT(o->u.gemm.batch, 2);
            CHECK_EQ_INT(o->u.gemm.n, 2 * 14336);
            CHECK_EQ_INT(o->u.gemm.m, 16);
            eg++;
        }
    }
    CHECK_EQ_INT(eg, 1);
    CHECK_EQ_INT(a2as, 0);
    CHECK_EQ_INT(mlp_ar, 4 * 32);
    trace_free(&t);
    struct llm_config dense;
    CHECK_EQ_INT(llm_config_load("traces/models/llama-2-7b.json", &dense, &d), 0);
    s.tp = 1;
    CHECK_EQ_INT(llm_build(&dense, &s, &t, &d), -1);
    CHECK(strcmp(d.field, "num_local_experts") == 0);
    *step = s;
}

static void test_moe(void)
{
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load("traces/models/mixtral-8x7b.json", &c, &d), 0);
    CHECK_EQ_INT(c.experts, 8);
    CHECK_EQ_INT(c.experts_per_tok, 2);
    struct llm_step s = {LLM_DECODE, 1, 1, 100, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0, LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    moe_decode(&c, &s);
    moe_train(&c, &s);
    moe_ep_in_dp(&c, &s);
    moe_ep_slices_zero3(&c, &s);
    moe_ep_dp_equal(&c, &s);
    moe_ep_tp(&c, &s);
}

/* Sequence parallelism (Megatron's --sequence-parallel, --sp): with TP 2
 * each norm runs on half the tokens, an all-gather brings them all before
 * the attention and the MLP, a reduce-scatter takes the place of each
 * all-reduce after them, and the backward runs each transposed (no
 * grad all-reduce).  The TP bytes are the same as the all-reduces' (an
 * all-reduce is a reduce-scatter and an all-gather).  With EP inside DP a
 * rank dispatches its half of the tokens and the experts' TP ranks
 * all-gather them. */
static void test_sequence_parallel(void)
{
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load("traces/models/llama-2-7b.json", &c, &d), 0);
    struct llm_step s = {LLM_TRAIN, 2, 512, 0, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0,
                         LLM_FW_FUSED, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    struct trace t;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    double ar_bytes = 0;
    for (uint32_t i = 0; i < t.nops; i++)
        if (t.ops[i].device == 1 && t.ops[i].kind == OP_COLLECTIVE && t.ops[i].dtype == DT_BF16)
            ar_bytes += (double)t.ops[i].u.coll.bytes * 2;    /* an all-reduce: RS + AG */
    trace_free(&t);
    s.sp = 1;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    double sp_bytes = 0;
    uint32_t ag = 0, rs = 0, ar = 0, gar = 0, found = 0;
    uint64_t S = 2ull * 512 * 4096 * 2;
    for (uint32_t i = 0; i < t.nops; i++) {
        const struct op *o = &t.ops[i];
        if (o->device != 1)
            continue;
        if (o->kind == OP_COLLECTIVE && o->dtype == DT_BF16) {
            sp_bytes += (double)o->u.coll.bytes;
            ag += o->u.coll.what == COLL_ALL_GATHER;
            rs += o->u.coll.what == COLL_REDUCE_SCATTER;
            ar += o->u.coll.what == COLL_ALL_REDUCE;
        }
        gar += strstr(op_id(&t, o), "grad_allreduce") != NULL;
        if (strcmp(op_id(&t, o), "r1.L3.attn_norm") == 0) {
            CHECK_EQ_INT(o->u.rc.rows, 512);
            found++;
        }
        if (strcmp(op_id(&t, o), "r1.L3.attn_allgather") == 0 || strcmp(op_id(&t, o), "r1.L3.o_reduce_scatter.bwd") == 0) {
            CHECK(o->u.coll.what == COLL_ALL_GATHER && o->u.coll.bytes == S && t.groups[o->u.coll.group].n == 2);
            found++;
        }
        if (strcmp(op_id(&t, o), "r1.L3.mlp_reduce_scatter") == 0 || strcmp(op_id(&t, o), "r1.L3.attn_allgather.bwd") == 0) {
            CHECK(o->u.coll.what == COLL_REDUCE_SCATTER && o->u.coll.bytes == S);
            found++;
        }
    }
    CHECK_EQ_INT(found, 5);
    CHECK_EQ_INT(gar, 0);
    CHECK_EQ_INT(ar, 0);
    /* 4 a layer each way plus the embedding's and the head's, and in the
     * backward the inputs of QKV, gate/up and the head gathered again for
     * their weight gradients (Megatron's SP backward): 2 a layer and 1 */
    CHECK_EQ_INT(rs, 4 * 32 + 2);
    CHECK_EQ_INT(ag, 4 * 32 + 2 + 2 * 32 + 1);
    CHECK_NEAR_REL(sp_bytes, ar_bytes + (2.0 * 32 + 1) * (double)S, 1e-9);
    /* and overlapped: the input's all-gather beside the dgrad, the dgrad's
     * reduce-scatter beside the wgrad, on stream 4; the norm's backward
     * waits for the reduce-scatter */
    int iag = tu_find_op(&t, "r1.L3.qkv_proj.input_allgather"), dg = tu_find_op(&t, "r1.L3.qkv_proj.bwd"),
        wg = tu_find_op(&t, "r1.L3.qkv_proj.wgrad"), rsb = tu_find_op(&t, "r1.L3.attn_allgather.bwd"),
        nb = tu_find_op(&t, "r1.L3.attn_norm.bwd");
    CHECK(iag >= 0 && dg > iag && rsb > dg && wg > rsb && nb > wg);
    if (iag >= 0 && dg > iag && rsb > dg && wg > rsb && nb > wg) {
        CHECK(t.ops[iag].stream == 4 && t.ops[rsb].stream == 4 && t.ops[dg].stream == 0);
        CHECK(t.ops[dg].pass == PASS_DGRAD && t.ops[wg].pass == PASS_WGRAD);
        CHECK(!tu_depends_on(&t, dg, iag) && tu_depends_on(&t, wg, iag) && !tu_depends_on(&t, wg, rsb));
        CHECK(tu_depends_on(&t, nb, rsb));
    }
    trace_free(&t);
    /* Mixtral, TP 2 x EP 4 inside DP 8: half the dispatch bytes, then the
     * experts' TP pair gathers what each received */
    struct llm_config m;
    CHECK_EQ_INT(llm_config_load("traces/models/mixtral-8x7b.json", &m, &d), 0);
    s.dp = 8;
    s.ep = 4;
    s.sp = 0;
    CHECK_EQ_INT(llm_build(&m, &s, &t, &d), 0);
    int di = -1;
    for (uint32_t i = 0; i < t.nops && di < 0; i++)
        if (strcmp(op_id(&t, &t.ops[i]), "r3.L5.dispatch") == 0)
            di = (int)i;
    uint64_t a2a0 = di >= 0 ? t.ops[di].u.coll.bytes : 0;
    trace_free(&t);
    s.sp = 1;
    CHECK_EQ_INT(llm_build(&m, &s, &t, &d), 0);
    uint32_t mf = 0;
    for (uint32_t i = 0; i < t.nops; i++) {
        const struct op *o = &t.ops[i];
        if (strcmp(op_id(&t, o), "r3.L5.dispatch") == 0) {
            CHECK(o->u.coll.bytes * 2 == a2a0 && a2a0 > 0);
            mf++;
        }
        if (strcmp(op_id(&t, o), "r3.L5.dispatch_allgather") == 0) {
            CHECK(o->u.coll.what == COLL_ALL_GATHER && o->u.coll.bytes == a2a0);
            mf++;
        }
        if (strcmp(op_id(&t, o), "r3.L5.router") == 0) {
            CHECK_EQ_INT(o->u.gemm.m, 512);
            mf++;
        }
        CHECK(strstr(op_id(&t, o), ".L5.mlp_allgather") == NULL);
    }
    CHECK_EQ_INT(mf, 3);
    trace_free(&t);
    /* refused: without TP, outside training, tokens not split evenly */
    s.tp = 1;
    s.dp = 1;
    s.ep = 0;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), -1);
    CHECK(strcmp(d.field, "--sp") == 0);
    s.tp = 2;
    s.prompt = 511;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), -1);
    CHECK(strcmp(d.field, "--sp") == 0);
}

/* Skewed routing (--expert-load F): the busiest EP rank gets F times the
 * mean of the token copies and every rank runs as it: F times the experts'
 * rows and the all-to-alls' bytes; refused without EP or below 1. */
static void test_expert_load(void)
{
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load("traces/models/mixtral-8x7b.json", &c, &d), 0);
    struct llm_step s = {LLM_DECODE, 64, 1, 256, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0,
                         LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    uint64_t a2a[2] = {0, 0}, rows[2] = {0, 0};
    for (int skew = 0; skew < 2; skew++) {
        s.expert_load = skew ? 1.5 : 0;
        struct trace t;
        CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
        for (uint32_t i = 0; i < t.nops; i++) {
            if (strcmp(op_id(&t, &t.ops[i]), "r2.L7.dispatch") == 0)
                a2a[skew] = t.ops[i].u.coll.bytes;
            if (strcmp(op_id(&t, &t.ops[i]), "r2.L7.experts_gate_up") == 0)
                rows[skew] = t.ops[i].u.gemm.m * t.ops[i].u.gemm.batch;
        }
        trace_free(&t);
    }
    CHECK(a2a[0] == 64ull * 2 * 4096 * 2 && a2a[1] == a2a[0] * 3 / 2);
    CHECK(rows[0] == 128 && rows[1] == 192);
    struct trace t;
    s.expert_load = 0.5;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), -1);
    CHECK(strcmp(d.field, "--expert-load") == 0);
    /* top-2 of 8 experts over 4 ranks: a rank holds 2 of them, so it gets
     * at most every token's 2 copies, 4 x the mean of 2/4; not more */
    s.expert_load = 4.0;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    trace_free(&t);
    s.expert_load = 4.5;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), -1);
    CHECK(strcmp(d.field, "--expert-load") == 0);
    CHECK(strstr(d.msg, "at most 4 times") != NULL);
    s.expert_load = 1.5;
    s.ep = 0;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), -1);
    CHECK(strcmp(d.field, "--expert-load") == 0);
}

/* --dropout: every attention op carries it, each block's output goes
 * through a bias-dropout-add kernel (on the rank's 1/tp of the tokens with
 * SP), the backward reads the masks, and the step takes longer on a GPU;
 * refused outside training and above 1 by name. */
static void test_dropout(void)
{
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load("traces/models/llama-2-7b.json", &c, &d), 0);
    struct llm_step s = {LLM_TRAIN, 2, 512, 0, DT_BF16, ATTN_MEGATRON, DT_BF16, WF_NONE, 0,
                         LLM_FW_FUSED, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
    struct hw_system sys;
    CHECK_EQ_INT(tu_load_hw("configs/systems/nvidia-dgx-a100.yaml", NULL, &sys, &d), 0);
    uint64_t ps[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        s.dropout = k ? 0.1 : 0.0;
        struct trace t;
        CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
        uint32_t attn = 0, attn_drop = 0, adds = 0, adds_bwd = 0;
        for (uint32_t i = 0; i < t.nops; i++) {
            const struct op *o = &t.ops[i];
            if (o->device != 0)
                continue;
            if (o->kind == OP_ATTENTION) {
                attn++;
                attn_drop += o->u.attn.dropout == 0.1;
            }
            if (o->kind == OP_ELEMENTWISE && o->u.ew.dropout == 0.1) {
                /* x and the residual in, the sum out, on 512 of the 1024 tokens */
                CHECK(o->u.ew.inputs == 2 && o->u.ew.outputs == 1 && o->u.ew.elements == 512ull * 4096);
                if (o->pass == PASS_BWD)
                    adds_bwd++;
                else
                    adds++;
            }
        }
        CHECK_EQ_INT(attn, 2 * 32);                 /* forward and backward */
        CHECK_EQ_INT(attn_drop, k ? 2 * 32 : 0);
        CHECK_EQ_INT(adds, k ? 2 * 32 : 0);
        CHECK_EQ_INT(adds_bwd, k ? 2 * 32 : 0);
        struct run_result r;
        CHECK_EQ_INT(run_system_opts(&sys, &t, NULL, &r, &d), 0);
        ps[k] = r.total_ps;
        run_result_free(&r);
        trace_free(&t);
    }
    printf("  Llama-2-7B TP 2 SP, 2 x 512 tokens, DGX A100: %.2f ms, %.2f ms with dropout 0.1\n",
           (double)ps[0] * 1e-9, (double)ps[1] * 1e-9);
    CHECK(ps[1] > ps[0] * 1.01);
    sys_free(&sys);
    struct trace t;
    /* the ops it adds are within the trace's capacity in the fullest
     * layout without a schedule (it overflowed: ZeRO-3, SP, DCN) */
    s.zero = 3;
    s.dp = 2;
    s.dcn = 2;
    s.dropout = 0.1;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    trace_free(&t);
    s.zero = 0;
    s.dp = 1;
    s.dcn = 0;
    s.dropout = 1.0;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), -1);
    CHECK(strcmp(d.field, "--dropout") == 0);
    s.dropout = 0.1;
    s.phase = LLM_DECODE;
    s.sp = 0;
    s.prompt = 1;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), -1);
    CHECK(strcmp(d.field, "--dropout") == 0);
    CHECK_EQ_INT(d.code, DIAG_E_UNSUPPORTED);
}

/* A sliding window the step exceeds is refused by name (Mistral-7B v0.1:
 * 4096). */
static void test_sliding_window(void)
{
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load("traces/models/mistral-7b.json", &c, &d), 0);
    CHECK_EQ_INT(c.sliding_window, 4096);
    struct llm_step s = {LLM_DECODE, 1, 1, 4095, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0, LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    struct trace t;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    trace_free(&t);
    s.context = 4096;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), -1);
    CHECK(strcmp(d.field, "sliding_window") == 0);
    CHECK_EQ_INT(d.code, DIAG_E_UNSUPPORTED);
    printf("%-20s ", "sliding window");
    diag_print(&d, stdout);
}

static void test_decode(void)
{
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load("traces/models/llama-2-7b.json", &c, &d), 0);
    CHECK_EQ_INT(c.layers, 32);
    CHECK_EQ_INT(c.head_dim, 128);
    CHECK_EQ_INT(c.kv_heads, 32);
    struct llm_step s = {LLM_DECODE, 1, 1, 2048, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0, LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    struct trace t;
    int rc = llm_build(&c, &s, &t, &d);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0) {
        diag_print(&d, stderr);
        return;
    }
    /* embedding, 10 ops per layer, final norm + LM head + sampling */
    CHECK_EQ_INT(t.nops, 1 + 32 * 10 + 3);
    CHECK_NEAR_REL(t.tokens, 1.0, 0.0);
    CHECK_EQ_INT(t.ndevices, 1);
    int nattn = 0;
    for (uint32_t i = 0; i < t.nops; i++) {
        const struct op *o = &t.ops[i];
        CHECK_EQ_INT(o->dtype, DT_BF16);
        if (o->kind != OP_ATTENTION)
            continue;
        nattn++;
        CHECK_EQ_INT(o->u.attn.kv_len, 2049);
        CHECK_EQ_INT(o->u.attn.q_len, 1);
        CHECK_EQ_INT(o->u.attn.batch, 1);
        CHECK_EQ_INT(o->u.attn.heads, 32);
        CHECK_EQ_INT(o->u.attn.head_dim, 128);
    }
    CHECK_EQ_INT(nattn, 32);
    CHECK_EQ_INT(t.ops[0].kind, OP_EMBEDDING);
    CHECK(strcmp(op_id(&t, &t.ops[t.nops - 2]), "lm_head") == 0);
    CHECK_EQ_INT(t.ops[t.nops - 2].u.gemm.m, 1);
    CHECK_EQ_INT(t.ops[t.nops - 2].u.gemm.n, 32000);
    trace_free(&t);
}

/* One Llama-3.1-8B decode step (batch 1, 1024 positions) with the linear
 * layers stored as w, on chip hw: its time (s) and the DRAM bytes of the
 * GEMMs with quantisable weights (into *wb). */
static double fp4_decode(const char *hw, enum wfmt w, double *wb)
{
    struct diag d;
    struct hw_config cfg;
    struct llm_config c;
    struct trace t;
    struct run_result r;
    struct llm_step s = {LLM_DECODE, 1, 1, 1024, DT_BF16, ATTN_FLASH, DT_BF16, w, 0, LLM_FW_FUSED, 1, 1,
                         0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    memset(&d, 0, sizeof d);
    *wb = 0;
    if (tu_load_chip(hw, NULL, &cfg, &d) != 0 || llm_config_load("traces/models/llama-3.1-8b.json", &c, &d) != 0 ||
        llm_build(&c, &s, &t, &d) != 0) {
        diag_print(&d, stderr);
        CHECK(0);
        return 0;
    }
    CHECK_EQ_INT(run_trace(&cfg, &t, &r, &d), 0);
    for (uint32_t i = 0; i < t.nops; i++)
        if (t.ops[i].kind == OP_GEMM) {
            CHECK_EQ_INT(t.ops[i].u.gemm.weights, w);
            CHECK_EQ_INT(t.ops[i].dtype, DT_BF16);          /* the activations' type stays */
            *wb += run_op_body(&r, i)->bytes[cfg.lv_dram];
        }
    double v = (double)r.total_ps * 1e-12;
    run_result_free(&r);
    trace_free(&t);
    return v;
}

/* --weights nvfp4 / mxfp4: on B200 (an FP4 matrix path) and H100 (none) a
 * decode step reads the weights at 4.5 / 4.25 bits, 8 for fp8 and 16 for
 * bf16, and is faster in that order. */
static void test_fp4_weights(void)
{
    static const char *const hws[] = {"configs/nvidia-b200.yaml", "configs/nvidia-h100-sxm.yaml"};
    for (int i = 0; i < 2; i++) {
        double b16, b8, b4, bmx;
        double t16 = fp4_decode(hws[i], WF_NONE, &b16), t8 = fp4_decode(hws[i], WF_FP8, &b8);
        double t4 = fp4_decode(hws[i], WF_NVFP4, &b4), tmx = fp4_decode(hws[i], WF_MXFP4, &bmx);
        printf("  %s Llama-3.1-8B decode: bf16 %.3f ms, fp8 %.3f, nvfp4 %.3f, mxfp4 %.3f; GEMM DRAM "
               "%.3f / %.3f / %.3f / %.3f GB\n", hws[i], t16 * 1e3, t8 * 1e3, t4 * 1e3, tmx * 1e3, b16 / 1e9,
               b8 / 1e9, b4 / 1e9, bmx / 1e9);
        CHECK(t4 < t8 && t8 < t16 && tmx <= t4);
        /* the weights' bytes (a decode GEMM's activations are KBs) */
        CHECK_NEAR_REL(b8 / b16, 8.0 / 16.0, 0.01);
        CHECK_NEAR_REL(b4 / b16, 4.5 / 16.0, 0.01);
        CHECK_NEAR_REL(bmx / b16, 4.25 / 16.0, 0.01);
    }
}

static void test_prefill(void)
{
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load("traces/models/llama-2-7b.json", &c, &d), 0);
    struct llm_step s = {LLM_PREFILL, 2, 128, 0, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0, LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    struct trace t;
    int rc = llm_build(&c, &s, &t, &d);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0) {
        diag_print(&d, stderr);
        return;
    }
    CHECK_NEAR_REL(t.tokens, 256.0, 0.0);
    CHECK_EQ_INT(t.nops, 1 + 32 * 10 + 3);
    for (uint32_t i = 0; i < t.nops; i++) {
        const struct op *o = &t.ops[i];
        if (o->kind == OP_ATTENTION) {
            CHECK_EQ_INT(o->u.attn.q_len, 128);
            CHECK_EQ_INT(o->u.attn.kv_len, 128);
            CHECK_EQ_INT(o->u.attn.batch, 2);
        }
    }
    CHECK_EQ_INT(t.ops[0].u.emb.tokens, 256);
    trace_free(&t);
}

/* Inference split by layer (llama.cpp -sm layer, ExLlama): --pp 4 on a
 * decode puts layers 0-7 on gpu0, 8-15 on gpu1, ... with one p2p copy of
 * the activations (batch x hidden x 2 bytes) into each stage, the stages in
 * sequence; --tp with it, more stages than layers and micro-batches are
 * refused. */
static void test_layer_split(void)
{
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load("traces/models/llama-2-7b.json", &c, &d), 0);
    struct llm_step s = {LLM_DECODE, 2, 1, 1024, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0, LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    s.pp = 4;
    struct trace t;
    int rc = llm_build(&c, &s, &t, &d);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0) {
        diag_print(&d, stderr);
        return;
    }
    CHECK_EQ_INT(t.ndevices, 4);
    CHECK_EQ_INT(t.nops, 1 + 32 * 10 + 3 + 3);  /* the step, and 3 copies */
    int copies = 0;
    for (uint32_t i = 0; i < t.nops; i++) {
        const struct op *o = &t.ops[i];
        unsigned layer;
        if (sscanf(op_id(&t, o), "L%u.", &layer) == 1 && o->kind != OP_MEMCPY)
            CHECK_EQ_INT(o->device, layer / 8);
        if (o->kind == OP_MEMCPY) {
            copies++;
            CHECK_EQ_INT(o->u.copy.dir, MEMCPY_P2P);
            CHECK_EQ_INT(o->u.copy.bytes, 2 * 4096 * 2);
            CHECK_EQ_INT(o->u.copy.peer, o->device + 1);
            CHECK(i + 1 < t.nops && t.ops[i + 1].device == o->device + 1);
            CHECK(t.ops[i + 1].ndeps >= 1 && t.deps[t.ops[i + 1].deps_off] == i); /* in sequence */
        }
    }
    CHECK_EQ_INT(copies, 3);
    CHECK_EQ_INT(t.ops[0].device, 0);                /* the embedding on the first stage */
    CHECK_EQ_INT(t.ops[t.nops - 2].device, 3);       /* the LM head on the last */
    trace_free(&t);

    static const struct { uint32_t pp, tp, mb; const char *flag; } bad[] = {
        {33, 1, 0, "--pp"}, {2, 2, 0, "--pp"}, {2, 1, 2, "--microbatches"}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        s.pp = bad[k].pp;
        s.tp = bad[k].tp;
        s.microbatches = bad[k].mb;
        memset(&d, 0, sizeof d);
        CHECK(llm_build(&c, &s, &t, &d) != 0);
        CHECK(strcmp(d.field, bad[k].flag) == 0);
    }
}

/* The prompt in pieces (llama.cpp's n_ubatch, gen llm --ubatch): each piece
 * runs embedding and every layer, attending to the cache the pieces before
 * wrote; its ops are named "uN." after the first's; the head runs once, after
 * the last.  The working set counts the weights and the whole cache once.
 * On one device the pieces run one after another; split by layer over two,
 * the second piece's first stage overlaps the first piece's second stage. */
static double ub_run(const struct hw_config *hw, const struct trace *t)
{
    struct run_result r;
    struct diag d;
    memset(&d, 0, sizeof d);
    SIM_CHECK(run_trace(hw, t, &r, &d) == 0);
    double s = (double)r.total_ps * 1e-12;
    run_result_free(&r);
    return s;
}

/* step s of model c built and run on hw: its time */
static double ub_step(const struct llm_config *c, const struct llm_step *s, const struct hw_config *hw)
{
    struct trace t;
    struct diag d;
    memset(&d, 0, sizeof d);
    SIM_CHECK(llm_build(c, s, &t, &d) == 0);
    double x = ub_run(hw, &t);
    trace_free(&t);
    return x;
}

static void test_ubatch(void)
{
    struct llm_config c;
    struct hw_config hw;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load("traces/models/llama-2-7b.json", &c, &d), 0);
    CHECK_EQ_INT(tu_load_cfg("configs/nvidia-rtx-4090.yaml", &hw), 0);
    struct llm_step s = {LLM_PREFILL, 1, 1024, 0, DT_FP16, ATTN_FLASH, DT_FP16, WF_Q4_0, 0, LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    struct trace whole, ub;
    CHECK_EQ_INT(llm_build(&c, &s, &whole, &d), 0);
    s.ubatch = 512;
    CHECK_EQ_INT(llm_build(&c, &s, &ub, &d), 0);
    CHECK_EQ_INT(ub.nops, 2 * (whole.nops - 3) + 3);   /* two pieces, one head (norm, lm_head, sample) */
    int embeds = 0, heads = 0;
    for (uint32_t i = 0; i < ub.nops; i++) {
        const struct op *o = &ub.ops[i];
        const char *id = op_id(&ub, o);
        int second = strncmp(id, "u1.", 3) == 0;
        embeds += o->kind == OP_EMBEDDING;
        heads += strcmp(id, "lm_head") == 0;
        if (o->kind == OP_EMBEDDING)
            CHECK_EQ_INT(o->u.emb.tokens, 512);
        if (o->kind == OP_ATTENTION) {
            CHECK_EQ_INT(o->u.attn.q_len, 512);
            CHECK_EQ_INT(o->u.attn.kv_len, second ? 1024 : 512);
            CHECK_EQ_INT(o->transient, !second);       /* the second piece's cache holds it */
        }
        if (o->kind == OP_GEMM && strcmp(id, "lm_head") != 0) {
            CHECK_EQ_INT(o->u.gemm.m, 512);
            CHECK_EQ_INT(o->transient, second);        /* the first piece's weights */
        }
    }
    CHECK_EQ_INT(embeds, 2);
    CHECK_EQ_INT(heads, 1);
    double w1, w2;
    CHECK_NEAR_REL(trace_working_set(&ub, 0, &w2), trace_working_set(&whole, 0, &w1), 1e-12);
    CHECK_NEAR_REL(w2, w1, 1e-12);
    CHECK_NEAR_REL(ub.tokens, whole.tokens, 0);
    /* one device: the second piece waits for the first */
    double t_ub = ub_run(&hw, &ub);
    s.prompt = 512;
    s.ubatch = 0;
    double t_half = ub_step(&c, &s, &hw);
    CHECK(t_ub > 1.9 * t_half);
    /* two stages: the pieces overlap (at most 1.5x one piece's time, ideally 1.5x) */
    s.pp = 2;
    double t_half2 = ub_step(&c, &s, &hw);
    s.prompt = 1024;
    s.ubatch = 512;
    double t_ub2 = ub_step(&c, &s, &hw);
    printf("  Llama-2-7B Q4_0 prompt on RTX 4090s: 512 tokens %.2f ms; 1024 in two pieces %.2f ms on one, "
           "%.2f ms split over two (512: %.2f)\n", t_half * 1e3, t_ub * 1e3, t_ub2 * 1e3, t_half2 * 1e3);
    CHECK(t_ub2 < 1.6 * t_half2);
    CHECK(t_ub2 > 1.4 * t_half2);
    trace_free(&ub);
    trace_free(&whole);
}

static void test_context_too_long(void)
{
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load("traces/models/llama-2-7b.json", &c, &d), 0);
    CHECK_EQ_INT(c.max_pos, 4096);
    /* 4096 cached + 1 new token = 4097 > 4096 */
    struct llm_step s = {LLM_DECODE, 1, 1, 4096, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0, LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    struct trace t;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), -1);
    CHECK(strcmp(d.field, "max_position_embeddings") == 0);
    CHECK_EQ_INT(d.code, DIAG_E_RANGE);
    printf("%-20s ", "context too long");
    diag_print(&d, stdout);
    trace_free(&t);
    /* exactly at the limit is fine */
    s.context = 4095;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    trace_free(&t);
}

/* line: the line of the offending key (1 for a missing field). */
static void expect_config_error(const char *name, const char *text, enum diag_code code,
                                int line, const char *field)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s.json", tmpdir, name);
    tu_write_file(path, text);
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    int failed_before = test_failed_;
    CHECK_EQ_INT(llm_config_load(path, &c, &d), -1);
    CHECK_EQ_INT(d.code, code);
    CHECK(strcmp(d.field, field) == 0);
    CHECK(strcmp(d.file, path) == 0);
    CHECK_EQ_INT(d.line, line);
    if (test_failed_ != failed_before)
        fprintf(stderr, "  ^ in case %s: got code %s, line %d, field \"%s\": %s\n", name,
                diag_code_name(d.code), d.line, d.field, d.msg);
    printf("%-20s ", name);
    diag_print(&d, stdout);
}

static void test_config_errors(void)
{
    /* Hugging Face keeps the last of two equal keys, cJSON the first: refused */
    expect_config_error("duplicate-key",
                        "{\"hidden_size\": 4096,\n"
                        " \"intermediate_size\": 11008,\n"
                        " \"num_hidden_layers\": 2,\n"
                        " \"num_attention_heads\": 32,\n"
                        " \"num_hidden_layers\": 32,\n"
                        " \"vocab_size\": 32000,\n"
                        " \"max_position_embeddings\": 4096}\n",
                        DIAG_E_DUPLICATE, 5, "num_hidden_layers");
    /* every size within its own limit, but the parameter count past 2^64
     * (it wrapped around to a small number) */
    expect_config_error("too-many-params",
                        "{\"hidden_size\": 16777216,\n"
                        " \"intermediate_size\": 16777216,\n"
                        " \"num_hidden_layers\": 4096,\n"
                        " \"num_attention_heads\": 16777216,\n"
                        " \"head_dim\": 16777216,\n"
                        " \"vocab_size\": 32000,\n"
                        " \"max_position_embeddings\": 4096}\n",
                        DIAG_E_RANGE, 1, "hidden_size");
    expect_config_error("not-divisible",
                        "{\"hidden_size\": 4100,\n"
                        " \"intermediate_size\": 11008,\n"
                        " \"num_hidden_layers\": 2,\n"
                        " \"num_attention_heads\": 32,\n"
                        " \"vocab_size\": 32000,\n"
                        " \"max_position_embeddings\": 4096}\n",
                        DIAG_E_RANGE, 4, "num_attention_heads");
    expect_config_error("kv-heads",
                        "{\"hidden_size\": 4096,\n"
                        " \"intermediate_size\": 11008,\n"
                        " \"num_hidden_layers\": 2,\n"
                        " \"num_attention_heads\": 32,\n"
                        " \"num_key_value_heads\": 5,\n"
                        " \"vocab_size\": 32000,\n"
                        " \"max_position_embeddings\": 4096}\n",
                        DIAG_E_RANGE, 5, "num_key_value_heads");
    expect_config_error("missing-hidden",
                        "{\"intermediate_size\": 11008,\n"
                        " \"num_hidden_layers\": 2,\n"
                        " \"num_attention_heads\": 32,\n"
                        " \"vocab_size\": 32000,\n"
                        " \"max_position_embeddings\": 4096}\n",
                        DIAG_E_MISSING, 1, "hidden_size");
    /* architectures strata does not model are refused by the field */
    static const char base[] = "{\"hidden_size\": 4096,\n"
                               " \"intermediate_size\": 11008,\n"
                               " \"num_hidden_layers\": 2,\n"
                               " \"num_attention_heads\": 32,\n"
                               " \"vocab_size\": 32000,\n"
                               " \"max_position_embeddings\": 4096,\n";
    /* (routed experts, MLA and their sizes are modelled now:
     * tests/test_unit_llm_families.c; alone, their sizes are refused) */
    static const char *const fields[] = {"n_shared_experts", "moe_intermediate_size", "q_lora_rank",
                                         "shared_expert_intermediate_size", "attn_logit_softcapping",
                                         "final_logit_softcapping"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "%s \"%s\": 64}\n", base, fields[i]);
        expect_config_error(fields[i], text, DIAG_E_UNSUPPORTED, 7, fields[i]);
    }
    char text[512];
    /* a model type strata does not know with another activation than silu:
     * whether its MLP is gated is not said, so it is refused; an unknown
     * activation too; experts with a plain MLP */
    snprintf(text, sizeof text, "%s \"model_type\": \"mystery\",\n \"hidden_act\": \"gelu\"}\n", base);
    expect_config_error("gated-unknown", text, DIAG_E_UNSUPPORTED, 8, "model_type");
    snprintf(text, sizeof text, "%s \"hidden_act\": \"softplus\"}\n", base);
    expect_config_error("act-unknown", text, DIAG_E_UNSUPPORTED, 7, "hidden_act");
    snprintf(text, sizeof text, "%s \"model_type\": \"gpt_neox\",\n \"num_local_experts\": 8,\n"
             " \"num_experts_per_tok\": 2}\n", base);
    expect_config_error("plain-experts", text, DIAG_E_UNSUPPORTED, 8, "num_local_experts");
    snprintf(text, sizeof text, "%s \"is_encoder_decoder\": true}\n", base);
    expect_config_error("encoder-decoder", text, DIAG_E_UNSUPPORTED, 7, "is_encoder_decoder");
    /* null or false means the feature is off: accepted */
    snprintf(text, sizeof text, "%s \"n_routed_experts\": null, \"is_encoder_decoder\": false}\n", base);
    char path[128];
    snprintf(path, sizeof path, "%s/off.json", tmpdir);
    tu_write_file(path, text);
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load(path, &c, &d), 0);
}

/* --framework names the kernel structure and the attention it runs unless
 * --attn says: pytorch and vllm keep fused's kernels and run the
 * attention those frameworks pick on the chip (sdpa, vllm). */
static void test_frameworks(void)
{
    static const struct {
        const char *name;
        enum llm_framework f;
        enum attn_impl attn;
    } fw[] = {{"fused", LLM_FW_FUSED, ATTN_FLASH},     {"llama.cpp", LLM_FW_LLAMA_CPP, ATTN_FLASH},
              {"PyTorch", LLM_FW_PYTORCH, ATTN_SDPA}, {"torch", LLM_FW_PYTORCH, ATTN_SDPA},
              {"vLLM", LLM_FW_VLLM, ATTN_VLLM}};
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load("traces/models/llama-2-7b.json", &c, &d), 0);
    uint32_t fused_ops = 0;
    for (size_t i = 0; i < sizeof fw / sizeof fw[0]; i++) {
        enum llm_framework f;
        CHECK_EQ_INT(llm_framework_from_name(fw[i].name, &f), 0);
        CHECK_EQ_INT(f, fw[i].f);
        CHECK_EQ_INT(llm_framework_attn(f), fw[i].attn);
        struct llm_step s = {LLM_PREFILL, 1, 512, 0, DT_BF16, llm_framework_attn(f), DT_BF16, WF_NONE, 0,
                             f, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        struct trace t;
        CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
        uint32_t nattn = 0;
        for (uint32_t k = 0; k < t.nops; k++)
            if (t.ops[k].kind == OP_ATTENTION) {
                CHECK_EQ_INT(t.ops[k].u.attn.impl, fw[i].attn);
                nattn++;
            }
        CHECK_EQ_INT(nattn, c.layers);
        if (f == LLM_FW_FUSED)
            fused_ops = t.nops;
        if (f == LLM_FW_PYTORCH || f == LLM_FW_VLLM)
            CHECK_EQ_INT(t.nops, fused_ops);   /* fused's kernels */
        trace_free(&t);
    }
    enum llm_framework f;
    CHECK_EQ_INT(llm_framework_from_name("tensorflow", &f), -1);
}

/* hf: Hugging Face's eager LlamaForCausalLM, a kernel per torch op.  The
 * Llama-3-8B decode step is the 1,298 kernel-owning ops the PyTorch
 * profiler saw on the H200 (traces/validation/h200/decode-llama3-8b-b1-
 * ctx2048.json.gz): 40 a layer (two 8-kernel fp32 RMSNorms, q, k, v, ten
 * RoPE kernels, two cache writes, attention, o, two residual adds, gate,
 * up, SiLU, multiply, down), the rotary table's 7, the final norm's 8, the
 * embedding, the LM head and the sampling.  It runs on one device (a layer
 * split too), for inference, and dense models only. */
static void test_hf(void)
{
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load("traces/models/llama-3-8b.json", &c, &d), 0);
    struct llm_step s = {LLM_DECODE, 1, 1, 2048, DT_BF16, ATTN_SDPA, DT_BF16, WF_NONE, 0, LLM_FW_HF, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    struct trace t;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    CHECK_EQ_INT(t.nops, 32 * 40 + 7 + 8 + 3);
    uint32_t norms = 0, casts = 0;
    for (uint32_t k = 0; k < t.nops; k++) {
        const char *id = op_id(&t, &t.ops[k]);
        norms += strstr(id, "norm.mean") != NULL && t.ops[k].kind == OP_REDUCTION;
        casts += strstr(id, "cast_up") != NULL && t.ops[k].dtype == DT_FP32;
    }
    CHECK_EQ_INT(norms, 2 * 32 + 1);
    CHECK_EQ_INT(casts, 2 * 32 + 1);
    trace_free(&t);
    enum llm_framework f;
    CHECK_EQ_INT(llm_framework_from_name("transformers", &f), 0);
    CHECK_EQ_INT(f, LLM_FW_HF);
    CHECK_EQ_INT(llm_framework_attn(f), ATTN_SDPA);
    s.pp = 2;       /* accelerate's device map: the layers over two GPUs */
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    CHECK_EQ_INT(t.ndevices, 2);
    trace_free(&t);
    s.pp = 1;
    s.tp = 2;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), -1);
    CHECK_STR_CONTAINS(d.msg, "Hugging Face's eager model is built for one device");
    s.tp = 1;
    s.phase = LLM_TRAIN;
    s.prompt = 512;
    s.context = 0;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), -1);
    CHECK_STR_CONTAINS(d.msg, "hf is Hugging Face's eager inference");
    struct llm_config m;
    CHECK_EQ_INT(llm_config_load("traces/models/mixtral-8x7b.json", &m, &d), 0);
    s.phase = LLM_DECODE;
    s.prompt = 1;
    CHECK_EQ_INT(llm_build(&m, &s, &t, &d), -1);
    CHECK_STR_CONTAINS(d.msg, "Python loop over experts");
}

/* A paged KV cache (--page-size): the decode step's attention ops carry
 * the page size through a write and a load; the cache is held in whole
 * pages (4001 tokens in pages of 256: 4096 a sequence); and reading it
 * page by page costs the block-table entries only, so the step on an H100
 * takes at least as long as with a contiguous cache and at most 1% more.
 * Training and the unfused impls refuse it. */
static void test_paged_kv(void)
{
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load("traces/models/llama-3-8b.json", &c, &d), 0);
    struct llm_step s = {LLM_DECODE, 32, 1, 4000, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0,
                         LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    struct trace flat, paged, back;
    CHECK_EQ_INT(llm_build(&c, &s, &flat, &d), 0);
    s.page_size = 256;
    CHECK_EQ_INT(llm_build(&c, &s, &paged, &d), 0);
    char path[600];
    snprintf(path, sizeof path, "%s/paged.json", tmpdir);
    CHECK_EQ_INT(trace_write(&paged, path, &d), 0);
    CHECK_EQ_INT(tu_load_trace(path, &back), 0);
    uint32_t npaged = 0;
    for (uint32_t i = 0; i < back.nops; i++)
        if (back.ops[i].kind == OP_ATTENTION && back.ops[i].u.attn.page_size == 256)
            npaged++;
    CHECK_EQ_INT(npaged, (uint32_t)c.layers);
    double wf = 0, wp = 0;
    double kf = trace_working_set(&flat, 0, &wf) - wf, kp = trace_working_set(&back, 0, &wp) - wp;
    CHECK_NEAR_REL(kp / kf, 4096.0 / 4001.0, 1e-9);
    struct hw_config cfg;
    CHECK_EQ_INT(tu_load_chip("configs/nvidia-h100-sxm.yaml", NULL, &cfg, &d), 0);
    struct run_result rf, rp;
    int rc = run_trace(&cfg, &flat, &rf, &d), rc2 = run_trace(&cfg, &back, &rp, &d);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(rc2, 0);
    if (rc == 0 && rc2 == 0) {
        printf("  Llama-3-8B decode, 32 x 4000 tokens: contiguous %.4f ms, paged (256) %.4f ms\n",
               (double)rf.total_ps * 1e-9, (double)rp.total_ps * 1e-9);
        CHECK(rp.total_ps >= rf.total_ps && (double)rp.total_ps <= 1.01 * (double)rf.total_ps);
    }
    if (rc == 0)
        run_result_free(&rf);
    if (rc2 == 0)
        run_result_free(&rp);
    /* PyTorch's standard attention reads contiguous tensors */
    for (uint32_t i = 0; i < back.nops; i++)
        if (back.ops[i].kind == OP_ATTENTION)
            back.ops[i].u.attn.impl = ATTN_MATH;
    rc = run_trace(&cfg, &back, &rp, &d);
    CHECK_EQ_INT(rc, -1);
    if (rc == 0)
        run_result_free(&rp);
    else
        CHECK_STR_CONTAINS(d.msg, "not a paged cache");
    trace_free(&flat);
    trace_free(&paged);
    trace_free(&back);
    struct trace bad;
    s.phase = LLM_TRAIN;
    s.prompt = 128;
    s.context = 0;
    CHECK_EQ_INT(llm_build(&c, &s, &bad, &d), -1);
    if (strcmp(d.field, "--page-size") != 0)
        diag_print(&d, stderr);
    CHECK(strcmp(d.field, "--page-size") == 0);
}

int main(void)
{
    test_expert_load();
    test_sequence_parallel();
    test_dropout();
    if (tu_mkdtemp(tmpdir, sizeof tmpdir, "strata-llm") != 0)
        return 1;
    test_frameworks();
    test_hf();
    test_param_counts();
    test_plain_mlp();
    test_decode();
    test_fp4_weights();
    test_prefill();
    test_layer_split();
    test_ubatch();
    test_context_too_long();
    test_config_errors();
    test_tensor_parallel();
    test_moe();
    test_sliding_window();
    test_paged_kv();
    tu_rmtree(tmpdir);
    TEST_MAIN_END();
}
