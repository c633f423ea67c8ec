/* test_unit_llm_families.c: the model families strata gen llm builds
 * besides Llama and Mixtral: fine-grained MoE (Qwen3-MoE: num_experts,
 * moe_intermediate_size, mlp_only_layers, decoder_sparse_step, q/k norms)
 * and DeepSeek-V2/V3 (multi-head latent attention, shared experts, dense
 * first layers).  Parameter counts against the published totals; the
 * weight bytes a decode step reads against the expected number of
 * distinct experts a batch touches, E(1 - (1 - k/E)^B), worked out by hand
 * from the config; MLA's K/V bytes a token (the latent and the RoPE key,
 * not per head) in the trace and in strata fit; and the keys still
 * refused. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "fit.h"
#include "llm.h"
#include "run.h"
#include "test.h"
#include "trace.h"
#include "util.h"

static char tmpdir[64];

static int load(const char *path, struct llm_config *c)
{
    int rc = tu_load_llm(path, c);
    CHECK_EQ_INT(rc, 0);
    return rc;
}

static int build(const struct llm_config *c, enum llm_phase ph, uint64_t batch, uint64_t prompt,
                 uint64_t context, struct trace *t)
{
    struct llm_step s = {.phase = ph, .batch = batch, .prompt = prompt, .context = context,
                         .dtype = DT_BF16, .attn = ATTN_FLASH, .kv_dtype = DT_BF16,
                         .weights = WF_NONE, .framework = LLM_FW_FUSED};
    struct diag d;
    memset(&d, 0, sizeof d);
    int rc = llm_build(c, &s, t, &d);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0)
        diag_print(&d, stderr);
    return rc;
}

/* distinct experts of E a batch of B tokens, top-k each, reaches under
 * uniform routing, as a whole number (the builder rounds up) */
static double touched(double E, double k, double B)
{
    return ceil(E * (1.0 - pow(1.0 - k / E, B)) - 1e-9);
}

static void test_param_counts(void)
{
    static const struct { const char *path; double published; } m[] = {
        {"traces/models/qwen3-30b-a3b.json", 30.5e9},    /* Qwen3 technical report: 30.5 B */
        {"traces/models/qwen3-235b-a22b.json", 235e9},   /* 235 B */
        {"traces/models/deepseek-v2-lite.json", 15.7e9}, /* DeepSeek-V2 paper: 15.7 B */
        {"traces/models/deepseek-v3.json", 671e9},       /* DeepSeek-V3 report: 671 B (the
                                                          * 14 B MTP module not counted) */
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        struct llm_config c;
        if (load(m[i].path, &c) != 0)
            continue;
        double n = (double)llm_param_count(&c);
        CHECK_NEAR_REL(n, m[i].published, 0.005);
        printf("%-40s %.4g parameters\n", m[i].path, n);
    }
}

/* Qwen3-30B-A3B decode: a step reads the attention of every layer, the
 * routers, the touched experts (8 for one token, 126 of 128 for 64) and
 * the LM head; the K/V of 4 heads of 128 a layer. */
static void test_qwen3_moe_decode(void)
{
    struct llm_config c;
    if (load("traces/models/qwen3-30b-a3b.json", &c) != 0)
        return;
    CHECK_EQ_INT(c.experts, 128);
    CHECK_EQ_INT(c.experts_per_tok, 8);
    CHECK_EQ_INT(c.moe_inter, 768);
    CHECK_EQ_INT(c.qk_norm, 1);
    CHECK_EQ_INT(llm_layer_moe(&c, 0), 1);
    CHECK_EQ_INT(llm_layer_moe(&c, 47), 1);
    const double attn = 2048.0 * 4096 + 2 * 2048.0 * 512 + 4096.0 * 2048;
    const double router = 2048.0 * 128, expert = 3 * 2048.0 * 768, head = 151936.0 * 2048;
    static const uint64_t batches[] = {1, 64};
    for (size_t i = 0; i < 2; i++) {
        uint64_t B = batches[i];
        struct trace t;
        if (build(&c, LLM_DECODE, B, 1, 1024, &t) != 0)
            continue;
        double na = touched(128, 8, (double)B);
        CHECK_NEAR_REL(na, B == 1 ? 8.0 : 126.0, 0.0);
        double w = 0, ws = trace_working_set(&t, 0, &w);
        double want = 2.0 * (48 * (attn + router + na * expert) + head);
        CHECK_NEAR_REL(w, want, 1e-12);
        CHECK_NEAR_REL(ws - w, 2.0 * (double)B * 1025 * 48 * 2 * 4 * 128, 1e-12);
        printf("qwen3-30b-a3b decode batch %-3llu: %.0f experts a layer, %.4g weight bytes read\n",
               (unsigned long long)B, na, w);
        trace_free(&t);
    }
}

/* DeepSeek-V2-Lite: the cache holds kv_lora + qk_rope = 576 elements a
 * token and layer (27 layers, 2 bytes: 31104 B), not 2 x 16 heads x 192;
 * decode attention is one K/V head over the latent; layer 0 is dense,
 * the others 2 shared experts and 6 of 64 routed; prefill expands the
 * latent to every head (heads of (192 + 128) / 2). */
static void test_deepseek_mla(void)
{
    struct llm_config c;
    if (load("traces/models/deepseek-v2-lite.json", &c) != 0)
        return;
    CHECK_EQ_INT(c.kv_lora, 512);
    CHECK_EQ_INT(c.q_lora, 0);
    CHECK_EQ_INT(c.shared_experts, 2);
    CHECK_EQ_INT(llm_layer_moe(&c, 0), 0);
    CHECK_EQ_INT(llm_layer_moe(&c, 1), 1);
    CHECK_EQ_INT(llm_kv_elems(&c, 1), 576);
    CHECK_EQ_INT(llm_kv_elems(&c, 8), 576);
    struct trace t;
    const uint64_t B = 4, ctx = 4095;
    if (build(&c, LLM_DECODE, B, 1, ctx, &t) == 0) {
        double w = 0, ws = trace_working_set(&t, 0, &w);
        CHECK_NEAR_REL((ws - w) / (double)(B * (ctx + 1)), 27.0 * 576 * 2, 1e-12);
        int nattn = 0;
        for (uint32_t i = 0; i < t.nops; i++)
            if (t.ops[i].kind == OP_ATTENTION) {
                nattn++;
                CHECK_EQ_INT(t.ops[i].u.attn.heads, 16);
                CHECK_EQ_INT(t.ops[i].u.attn.kv_heads, 1);
                CHECK_EQ_INT(t.ops[i].u.attn.head_dim, 288);
            }
        CHECK_EQ_INT(nattn, 27);
        /* weights read: q and the latent's down projection, W_UK and W_UV
         * (absorbed), o; layer 0's dense MLP; 26 layers of shared and
         * touched routed experts with the router; the LM head */
        const double h = 2048;
        double attn = h * (16 * 192 + 576) + 2 * 16.0 * 128 * 512 + 16.0 * 128 * h;
        double moe = 2 * 3 * h * 1408 + h * 64 + touched(64, 6, (double)B) * 3 * h * 1408;
        double want = 2.0 * (27 * attn + 3 * h * 10944 + 26 * moe + 102400 * h);
        CHECK_NEAR_REL(w, want, 1e-12);
        printf("deepseek-v2-lite decode batch %llu: %.4g weight bytes, %.0f KV bytes a token\n",
               (unsigned long long)B, w, (ws - w) / (double)(B * (ctx + 1)));
        trace_free(&t);
    }
    /* strata fit sizes the same cache */
    struct hw_config hw;
    struct diag d;
    memset(&d, 0, sizeof d);
    if (tu_load_chip("configs/nvidia-h100-sxm.yaml", NULL, &hw, &d) == 0) {
        struct llm_step s = {.phase = LLM_DECODE, .batch = B, .context = ctx, .dtype = DT_BF16,
                             .kv_dtype = DT_BF16, .weights = WF_NONE};
        struct fit_result f;
        fit_budget(&hw, &c, &s, 0, &f);
        CHECK_NEAR_REL(f.kv_cache, (double)B * (ctx + 1) * 27 * 576 * 2, 1e-12);
        CHECK_NEAR_REL(f.params, (double)llm_param_count(&c), 0.0);
    } else {
        CHECK(0);
        diag_print(&d, stderr);
    }
    if (build(&c, LLM_PREFILL, 2, 256, 0, &t) == 0) {
        for (uint32_t i = 0; i < t.nops; i++) {
            const struct op *o = &t.ops[i];
            if (o->kind == OP_ATTENTION) {
                CHECK_EQ_INT(o->u.attn.heads, 16);
                CHECK_EQ_INT(o->u.attn.kv_heads, 16);
                CHECK_EQ_INT(o->u.attn.head_dim, 160);
            }
            if (strcmp(op_id(&t, o), "L1.kv_b_proj") == 0) {
                CHECK_EQ_INT(o->u.gemm.m, 512);
                CHECK_EQ_INT(o->u.gemm.n, 16 * 256);
                CHECK_EQ_INT(o->u.gemm.k, 512);
            }
        }
        trace_free(&t);
    }
}

/* DeepSeek-V3 over 8 TP ranks: q's and the latent's down projections
 * whole on every rank, the heads and every expert split; training and
 * llama.cpp's graph refused. */
static void test_deepseek_v3_tp(void)
{
    struct llm_config c;
    if (load("traces/models/deepseek-v3.json", &c) != 0)
        return;
    CHECK_EQ_INT(c.q_lora, 1536);
    CHECK_EQ_INT(llm_layer_moe(&c, 2), 0);
    CHECK_EQ_INT(llm_layer_moe(&c, 3), 1);
    struct llm_step s = {.phase = LLM_DECODE, .batch = 1, .context = 100, .dtype = DT_BF16,
                         .kv_dtype = DT_BF16, .weights = WF_NONE, .tp = 8};
    struct trace t;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    if (t.nops > 0) {
        for (uint32_t i = 0; i < t.nops; i++) {
            const struct op *o = &t.ops[i];
            if (strcmp(op_id(&t, o), "r0.L3.qkv_a_proj") == 0)
                CHECK_EQ_INT(o->u.gemm.n, 1536 + 576);
            if (strcmp(op_id(&t, o), "r0.L3.q_b_proj") == 0)
                CHECK_EQ_INT(o->u.gemm.n, 16 * 192);
            if (strcmp(op_id(&t, o), "r0.L3.shared_gate_up") == 0)
                CHECK_EQ_INT(o->u.gemm.n, 2 * 2048 / 8);
            if (strcmp(op_id(&t, o), "r0.L3.experts_down") == 0)
                CHECK_EQ_INT(o->u.gemm.k, 2048 / 8);
            if (strcmp(op_id(&t, o), "r0.L0.down_proj") == 0)
                CHECK_EQ_INT(o->u.gemm.k, 18432 / 8);
            if (o->kind == OP_ATTENTION)
                CHECK_EQ_INT(o->u.attn.heads, 16);
        }
        trace_free(&t);
    }
    s.phase = LLM_TRAIN;
    s.prompt = 128;
    s.context = 0;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), -1);
    CHECK(strcmp(d.field, "--phase") == 0);
}

static void expect_refused(const char *name, const char *text, const char *field)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s.json", tmpdir, name);
    tu_write_file(path, text);
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load(path, &c, &d), -1);
    CHECK(strcmp(d.field, field) == 0);
    if (strcmp(d.field, field) != 0)
        fprintf(stderr, "  ^ %s: field \"%s\", wanted \"%s\": %s\n", name, d.field, field, d.msg);
    printf("%-22s ", name);
    diag_print(&d, stdout);
}

/* keys still unmodelled are refused by name; half a layout is refused by
 * what is missing or stray; mlp_only_layers and decoder_sparse_step pick
 * the dense layers */
static void test_refused(void)
{
    static const char base[] = "{\"hidden_size\": 1024,\n"
                               " \"intermediate_size\": 4096,\n"
                               " \"num_hidden_layers\": 4,\n"
                               " \"num_attention_heads\": 8,\n"
                               " \"vocab_size\": 32000,\n"
                               " \"max_position_embeddings\": 4096,\n";
    char text[768];
    snprintf(text, sizeof text, "%s \"num_experts\": 60, \"num_experts_per_tok\": 4,\n"
             " \"moe_intermediate_size\": 1408, \"shared_expert_intermediate_size\": 5632}\n", base);
    expect_refused("qwen2-moe-shared", text, "shared_expert_intermediate_size");
    snprintf(text, sizeof text, "%s \"moe_intermediate_size\": 1408}\n", base);
    expect_refused("moe-width-alone", text, "moe_intermediate_size");
    snprintf(text, sizeof text, "%s \"q_lora_rank\": 1536}\n", base);
    expect_refused("q-lora-alone", text, "q_lora_rank");
    snprintf(text, sizeof text, "%s \"kv_lora_rank\": 512, \"qk_nope_head_dim\": 128,\n"
             " \"v_head_dim\": 128}\n", base);
    expect_refused("mla-no-rope", text, "qk_rope_head_dim");
    snprintf(text, sizeof text, "%s \"num_experts\": 8, \"n_routed_experts\": 8,\n"
             " \"num_experts_per_tok\": 2}\n", base);
    expect_refused("experts-twice", text, "n_routed_experts");
    snprintf(text, sizeof text, "%s \"full_attention_interval\": 4}\n", base);
    expect_refused("qwen3-next", text, "full_attention_interval");
    snprintf(text, sizeof text, "%s \"num_experts\": 8, \"num_experts_per_tok\": 2,\n"
             " \"mlp_only_layers\": [4]}\n", base);
    expect_refused("mlp-only-range", text, "mlp_only_layers");
    /* layers 1 and 3 sparse (step 2), 3 dense by name: only layer 1 MoE */
    snprintf(text, sizeof text, "%s \"num_experts\": 8, \"num_experts_per_tok\": 2,\n"
             " \"moe_intermediate_size\": 512, \"decoder_sparse_step\": 2, \"mlp_only_layers\": [3]}\n",
             base);
    char path[128];
    snprintf(path, sizeof path, "%s/sparse-step.json", tmpdir);
    tu_write_file(path, text);
    struct llm_config c;
    if (load(path, &c) == 0) {
        CHECK_EQ_INT(llm_layer_moe(&c, 0), 0);
        CHECK_EQ_INT(llm_layer_moe(&c, 1), 1);
        CHECK_EQ_INT(llm_layer_moe(&c, 2), 0);
        CHECK_EQ_INT(llm_layer_moe(&c, 3), 0);
        /* 3 dense layers of 3 x 1024 x 4096, one of 8 experts of 512 */
        uint64_t attn = 4 * 1024 * 1024, dense = 3 * 1024 * 4096;
        uint64_t moe = 8 * 3 * 1024 * 512 + 1024 * 8;
        CHECK_EQ_INT(llm_param_count(&c), 2 * 32000 * 1024 + 1024 + 3 * (attn + dense + 2048) +
                                              (attn + moe + 2048));
    }
}

/* NVIDIA-Nemotron-Nano-9B-v2 (traces/models/nemotron-nano-9b-v2.json):
 * 27 Mamba-2, 4 attention and 25 MLP blocks; 8.89 B parameters counted by
 * hand from the config; a decode step reads each Mamba layer's fp32 state
 * (128 heads x 80 x N 128) once and writes it once, its KV cache only on
 * the 4 attention layers; a prefill runs vLLM's SSD kernels in chunks of
 * 128 tokens; and what it refuses. */
static void test_nemotron_h(void)
{
    struct llm_config c;
    if (load("traces/models/nemotron-nano-9b-v2.json", &c) != 0)
        return;
    CHECK(llm_hybrid(&c));
    CHECK_EQ_INT((int)llm_attn_layers(&c), 4);
    int nm = 0, nmlp = 0;
    for (int l = 0; l < 56; l++) {
        nm += c.kind[l] == LLM_LAYER_MAMBA;
        nmlp += c.kind[l] == LLM_LAYER_MLP;
    }
    CHECK_EQ_INT(nm, 27);
    CHECK_EQ_INT(nmlp, 25);
    uint64_t h = 4480, di = 128 * 80, cd = di + 2 * 8 * 128;
    uint64_t mamba = h + h * (di + cd + 128) + cd * 4 + cd + 3 * 128 + di + di * h;
    uint64_t attn = h + h * 5120 + 2 * h * 1024 + 5120 * h;
    uint64_t mlp = h + 2 * h * 15680;
    uint64_t total = 2 * 131072ull * h + h + 27 * mamba + 4 * attn + 25 * mlp;
    CHECK_EQ_INT((long long)llm_param_count(&c), (long long)total);
    printf("nemotron-nano-9b-v2: %.4f B params (mamba block %.1f M, attention %.1f M, MLP %.1f M)\n",
           total / 1e9, mamba / 1e6, attn / 1e6, mlp / 1e6);
    CHECK_EQ_INT((long long)llm_ssm_state_elems(&c), (long long)(di * 128));
    CHECK_EQ_INT((long long)llm_ssm_conv_elems(&c), (long long)(cd * 3));
    struct trace t;
    if (build(&c, LLM_DECODE, 4, 1, 1000, &t) != 0)
        return;
    int nattn = 0, nupd = 0;
    for (uint32_t i = 0; i < t.nops; i++) {
        const struct op *o = &t.ops[i];
        nattn += o->kind == OP_ATTENTION;
        if (strstr(op_id(&t, o), ".ssm_update") != NULL) {
            nupd++;     /* each sequence's state, read and written in fp32 */
            CHECK(o->dtype == DT_FP32 && o->u.ew.elements == 4 * di * 128 && o->u.ew.inputs == 1 &&
                  o->u.ew.outputs == 1);
        }
    }
    CHECK_EQ_INT(nattn, 4);
    CHECK_EQ_INT(nupd, 27);
    int i = tu_find_op(&t, "L0.in_proj");
    CHECK(i >= 0 && t.ops[i].u.gemm.n == di + cd + 128 && t.ops[i].u.gemm.k == h);
    i = tu_find_op(&t, "L14.attention");    /* the pattern's first attention block */
    CHECK(i >= 0 && t.ops[i].u.attn.kv_len == 1001 && t.ops[i].u.attn.kv_heads == 8);
    trace_free(&t);
    if (build(&c, LLM_PREFILL, 2, 1000, 0, &t) != 0)
        return;
    i = tu_find_op(&t, "L0.ssd_chunk_scan");   /* ceil(1000 / 128) = 8 chunks, 2 sequences, 128 heads */
    CHECK(i >= 0 && t.ops[i].u.gemm.batch == 2 * 8 * 128 && t.ops[i].u.gemm.m == 128 &&
          t.ops[i].u.gemm.n == 80 && t.ops[i].u.gemm.k == 256);
    i = tu_find_op(&t, "L0.ssd_bmm_chunk");     /* C B^T a group of heads */
    CHECK(i >= 0 && t.ops[i].u.gemm.batch == 2 * 8 * 8 && t.ops[i].u.gemm.k == 128);
    CHECK(tu_find_op(&t, "L0.ssm_update") < 0);
    trace_free(&t);
    struct llm_step s = {.phase = LLM_TRAIN, .batch = 1, .prompt = 128, .dtype = DT_BF16, .attn = ATTN_FLASH,
                         .kv_dtype = DT_BF16, .weights = WF_NONE, .framework = LLM_FW_FUSED};
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), -1);
    CHECK(strcmp(d.field, "--phase") == 0);
    s.phase = LLM_DECODE;
    /* tensor parallelism, as vLLM splits the blocks: TP 2 gives each rank
     * 64 of the mixer's 128 heads and 4 of its 8 groups (in_proj 1/2 as
     * wide, the state update 1/2 the elements), 4 of the 8 K/V heads, half
     * the MLP; each block's output all-reduced (56 a rank), and vLLM's
     * vocabulary split two more; 3 ranks divide neither heads nor groups */
    s.batch = 4;
    s.context = 1000;
    s.framework = LLM_FW_VLLM;
    s.attn = ATTN_VLLM;
    s.tp = 2;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    if (t.nops > 0) {
        CHECK_EQ_INT(t.ndevices, 2);
        CHECK_EQ_INT(t.ncolls, 56 + 2);
        i = tu_find_op(&t, "r1.L0.in_proj");
        CHECK(i >= 0 && t.ops[i].u.gemm.n == (di + cd + 128) / 2 && t.ops[i].u.gemm.k == h);
        i = tu_find_op(&t, "r1.L0.out_proj");
        CHECK(i >= 0 && t.ops[i].u.gemm.k == di / 2);
        i = tu_find_op(&t, "r0.L0.ssm_update");
        CHECK(i >= 0 && t.ops[i].u.ew.elements == 4 * di / 2 * 128);
        i = tu_find_op(&t, "r0.L14.attention");
        CHECK(i >= 0 && t.ops[i].u.attn.heads == 20 && t.ops[i].u.attn.kv_heads == 4);
        i = tu_find_op(&t, "r0.L1.up_proj");
        CHECK(i >= 0 && t.ops[i].u.gemm.n == 15680 / 2);
        CHECK(tu_find_op(&t, "r0.L0.mixer_allreduce") >= 0 && tu_find_op(&t, "r0.L1.mlp_allreduce") >= 0 &&
              tu_find_op(&t, "r1.L14.attn_allreduce") >= 0);
        trace_free(&t);
    }
    s.tp = 3;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), -1);
    CHECK(strcmp(d.field, "num_attention_heads") == 0 || strcmp(d.field, "mamba_num_heads") == 0);
    s.tp = 1;
    s.batch = 1;
    s.context = 0;
    s.attn = ATTN_FLASH;
    s.framework = LLM_FW_PYTORCH;   /* its kernels are vLLM's: eager PyTorch's are another graph */
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), -1);
    CHECK(strcmp(d.field, "--framework") == 0);
    CHECK_EQ_INT(llm_config_decoder(&c, "a draft model", 0, &d), -1);   /* a draft's state is not built */
    CHECK_EQ_INT(llm_config_decoder(&c, "strata serve", 1, &d), 0);
    /* strata fit: the KV cache on the 4 attention layers only, and each
     * sequence's state in the 27 mixers (fp32 SSM state, bf16 window:
     * 5,316,608 bytes a mixer, vLLM's mamba page for this model) */
    struct hw_config hw;
    if (tu_load_cfg("configs/nvidia-h100-sxm.yaml", &hw) == 0) {
        struct llm_step fs = {.phase = LLM_DECODE, .batch = 8, .prompt = 1, .context = 999, .dtype = DT_BF16,
                              .attn = ATTN_FLASH, .kv_dtype = DT_BF16, .weights = WF_NONE,
                              .framework = LLM_FW_FUSED};
        struct fit_result f;
        fit_budget(&hw, &c, &fs, 0, &f);
        CHECK(fabs(f.kv_cache - 8.0 * 1000 * 4 * 2 * 8 * 128 * 2) < 1.0);
        CHECK(fabs(f.ssm_state - 8.0 * 27 * 5316608) < 1.0);
        CHECK(fabs(f.weights - 2.0 * (double)total) < 1e6);   /* every parameter in bf16 */
        printf("fit: KV cache %.3f GB, SSM state %.3f GB, weights %.3f GB\n", f.kv_cache / 1e9,
               f.ssm_state / 1e9, f.weights / 1e9);
        /* at TP 2 a rank holds half of each: the state, the cache (4 of 8
         * K/V heads), the blocks' weights (the embedding and head whole:
         * fused's layout) */
        struct fit_result f2;
        fs.tp = 2;
        fit_budget(&hw, &c, &fs, 0, &f2);
        CHECK(fabs(f2.ssm_state - f.ssm_state / 2) < 1.0);
        CHECK(fabs(f2.kv_cache - f.kv_cache / 2) < 1.0);
        double embed_head = 2.0 * 2 * 131072.0 * 4480;
        CHECK(fabs(f2.weights - (embed_head + (f.weights - embed_head) / 2)) < 1e6);
    }
    CHECK(strcmp(d.field, "hybrid_override_pattern") == 0);
    static const char base[] = "{\"model_type\": \"nemotron_h\", \"hidden_size\": 64,\n"
                               " \"intermediate_size\": 128, \"num_hidden_layers\": 3,\n"
                               " \"num_attention_heads\": 2, \"vocab_size\": 100,\n"
                               " \"max_position_embeddings\": 4096, \"mamba_num_heads\": 4,\n"
                               " \"mamba_head_dim\": 16, \"ssm_state_size\": 8,\n";
    char text[768];
    snprintf(text, sizeof text, "%s \"hybrid_override_pattern\": \"M*\", \"n_groups\": 2}\n", base);
    expect_refused("hybrid-length", text, "hybrid_override_pattern");
    snprintf(text, sizeof text, "%s \"hybrid_override_pattern\": \"M*E\", \"n_groups\": 2}\n", base);
    expect_refused("hybrid-char", text, "hybrid_override_pattern");
    snprintf(text, sizeof text, "%s \"hybrid_override_pattern\": \"M*-\", \"n_groups\": 3}\n", base);
    expect_refused("hybrid-groups", text, "n_groups");
    snprintf(text, sizeof text, "%s \"hybrid_override_pattern\": \"M*-\", \"mamba_num_groups\": 3}\n", base);
    expect_refused("hybrid-groups-key", text, "mamba_num_groups");
}

int main(void)
{
    if (tu_mkdtemp(tmpdir, sizeof tmpdir, "strata-llmfam") != 0)
        return 1;
    test_param_counts();
    test_qwen3_moe_decode();
    test_deepseek_mla();
    test_deepseek_v3_tp();
    test_refused();
    test_nemotron_h();
    tu_rmtree(tmpdir);
    TEST_MAIN_END();
}
