/* test_unit_fit.c: `strata fit`'s budget against hand calculations.
 *   Llama-2-7B bf16, 4096 positions: weights 6,738,415,616 params x 2 B
 *   = 13.48 GB; KV cache 32 layers x 2 (K, V) x 4096 x 4096 (32 heads x 128)
 *   x 2 B = 2 GiB exactly.
 *   Llama-2-70B bf16 (68.98 B params, 138 GB) fits neither a 24 GB RTX 4090
 *   nor 128 GB; at q4_k_m (~4.8 bits per weight, ~41 GB) it fits 128 GB. */
#include <sys/stat.h>

#include "cfg.h"
#include "fit.h"
#include "llm.h"
#include "run.h"
#include "test.h"
#include "util.h"

static void budget(const char *hw, const char *model, const char *weights, uint64_t context,
                   struct fit_result *f)
{
    struct diag d;
    struct hw_config cfg;
    struct llm_config c;
    CHECK_EQ_INT(tu_load_chip(hw, NULL, &cfg, &d), 0);
    CHECK_EQ_INT(llm_config_load(model, &c, &d), 0);
    struct llm_step s = {LLM_DECODE, 1, 1, context, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0, LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    if (weights != NULL)
        CHECK_EQ_INT(llm_weights_from_name(weights, &s), 0);
    fit_budget(&cfg, &c, &s, 0, f);
}

/* The parallel case: per rank of TP 8 x DP 16 with ZeRO 1 for a
 * Llama-3.1-70B training step (70,553,706,496 params, vocab 128256, hidden
 * 8192, 80 layers), against the unsplit budget. */
/* Expert parallelism: each rank keeps 1/ep of the experts' weights and all
 * of the rest (Mixtral-8x7B: 8 experts of 3 x 4096 x 14336 per layer). */
static void test_expert_parallel(void)
{
    struct diag d;
    struct hw_config cfg;
    struct llm_config c;
    CHECK_EQ_INT(tu_load_chip("configs/nvidia-h100-sxm.yaml", NULL, &cfg, &d), 0);
    CHECK_EQ_INT(llm_config_load("traces/models/mixtral-8x7b.json", &c, &d), 0);
    struct llm_step s = {LLM_DECODE, 16, 1, 1024, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0,
                         LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    struct fit_result all, ep8;
    fit_budget(&cfg, &c, &s, 0, &all);
    s.ep = 8;
    fit_budget(&cfg, &c, &s, 0, &ep8);
    double experts = 32.0 * 8 * 3 * 4096 * 14336 * 2;   /* bytes, bf16 */
    CHECK_NEAR_REL(all.weights - ep8.weights, experts * 7.0 / 8.0, 1e-9);
    CHECK_NEAR_REL(ep8.kv_cache, all.kv_cache, 1e-12);
    CHECK(!all.fits && ep8.fits);
    /* training: the optimizer state (12 + 2 bytes a parameter) of the
     * rank's share: the dense part and 1/8 of the experts */
    s.phase = LLM_PREFILL;
    s.prompt = 2048;
    s.context = 0;
    s.batch = 1;
    fit_budget(&cfg, &c, &s, 1, &ep8);
    CHECK_NEAR_REL(ep8.optimizer, ((double)llm_param_count(&c) - experts / 2 * 7.0 / 8.0) * 14.0, 1e-9);
    /* EP 8 inside DP 16 with ZeRO-1: the dense state's 12 bytes over the
     * 16 replicas, the rank's expert's over the 2 that hold it (gradients,
     * 2 bytes, whole) */
    s.dp = 16;
    s.zero = 1;
    fit_budget(&cfg, &c, &s, 1, &ep8);
    double dense = (double)llm_param_count(&c) - experts / 2, mine = experts / 2 / 8;
    CHECK_NEAR_REL(ep8.optimizer, dense * 12.0 / 16 + dense * 2.0 + mine * 12.0 / 2 + mine * 2.0, 1e-9);
    /* with TP 2 (Megatron: each expert split over the TP ranks as the
     * dense MLP is): a rank holds half of each of its experts, and 1/2 of
     * both optimizer shares */
    struct fit_result tp2;
    s.tp = 2;
    fit_budget(&cfg, &c, &s, 1, &tp2);
    CHECK_NEAR_REL(tp2.optimizer, ep8.optimizer / 2, 1e-9);
    /* and 4 pipeline stages: the first holds 8 of the 32 layers (and the
     * embedding): its dense and expert state */
    struct fit_result pp4;
    s.pp = 4;
    s.microbatches = 1;
    fit_budget(&cfg, &c, &s, 1, &pp4);
    double vocab = 32000.0 * 4096 / 2, layers = (dense - 2 * 32000.0 * 4096 - 4096) / 2 / 4;
    double mine4 = mine / 2 / 4;
    CHECK_NEAR_REL(pp4.optimizer, (vocab + layers) * 12.0 / 16 + (vocab + layers) * 2.0 + mine4 * 12.0 / 2 +
                                      mine4 * 2.0, 1e-9);
    /* ZeRO-3 with EP 8 inside DP 16: the 16-bit dense weights sharded over
     * the 16 replicas, the rank's expert (1/8 of them) over its 2 */
    struct fit_result z1, z3;
    s.pp = 0;
    s.microbatches = 0;
    s.tp = 1;
    fit_budget(&cfg, &c, &s, 1, &z1);
    s.zero = 3;
    fit_budget(&cfg, &c, &s, 1, &z3);
    CHECK_NEAR_REL(z3.weights, (z1.weights - experts / 8) / 16 + experts / 8 / 2, 1e-9);
}

/* Stored activations of a Llama-3.1-70B layer, bytes a token at 16 bits
 * (h 8192, q 8192, 8 K/V heads of 128, gated MLP of 28672) over t TP
 * ranks, tensor by tensor: the norms', QKV's and MLP's inputs (8 h, split
 * too with SP), Q, K, V and the attention output (4 q / t + 4 kv / t,
 * K/V heads replicated below t), the gate and up outputs and their
 * product (6 x 28672 / t); no dropout masks. */
static double l70_tok(double t, int sp)
{
    double kvh = 8 >= t ? 8 / t : 1;
    return 8.0 * 8192 / (sp ? t : 1) + 4.0 * 8192 / t + 4.0 * kvh * 128 + 6.0 * 28672 / t;
}

/* Sequence parallelism splits the norms' and residuals' 8 s b h over the
 * TP ranks too (Korthikanti et al. 2022, eq. 5 with flash attention and
 * without dropout's two masks). */
static void test_sequence_parallel(void)
{
    struct diag d;
    struct hw_config cfg;
    struct llm_config c;
    CHECK_EQ_INT(tu_load_chip("configs/nvidia-h100-sxm.yaml", NULL, &cfg, &d), 0);
    CHECK_EQ_INT(llm_config_load("traces/models/llama-3.1-70b.json", &c, &d), 0);
    struct llm_step s = {LLM_PREFILL, 1, 4096, 0, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0,
                         LLM_FW_FUSED, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    struct fit_result tp, sp;
    fit_budget(&cfg, &c, &s, 1, &tp);
    s.sp = 1;
    fit_budget(&cfg, &c, &s, 1, &sp);
    CHECK_NEAR_REL(sp.activations, tp.activations * l70_tok(8, 1) / l70_tok(8, 0), 1e-12);
    CHECK_NEAR_REL(tp.activations, l70_tok(8, 0) * 4096 * 80, 1e-12);
    CHECK_NEAR_REL(sp.weights, tp.weights, 1e-12);
    /* context parallelism (--cp 2): a rank holds half of each sequence's
     * activations, and ZeRO-1 shards the optimizer over the 2 x 2 data x
     * context ranks; the weights stay whole */
    struct fit_result nocp, cp2;
    s.sp = 0;
    s.dp = 2;
    s.zero = 1;
    fit_budget(&cfg, &c, &s, 1, &nocp);
    s.cp = 2;
    fit_budget(&cfg, &c, &s, 1, &cp2);
    CHECK_NEAR_REL(cp2.activations, nocp.activations / 2, 1e-12);
    CHECK_NEAR_REL(cp2.weights, nocp.weights, 1e-12);
    double P8 = (double)llm_param_count(&c) / 8;
    CHECK_NEAR_REL(nocp.optimizer, P8 * 12 / 2 + P8 * 2, 1e-12);
    CHECK_NEAR_REL(cp2.optimizer, P8 * 12 / 4 + P8 * 2, 1e-12);
    /* gradient accumulation (--microbatches without --pp): one
     * micro-batch's activations are stored at a time */
    struct fit_result ga;
    s.cp = 0;
    s.batch = 8;
    fit_budget(&cfg, &c, &s, 1, &nocp);
    s.microbatches = 4;
    fit_budget(&cfg, &c, &s, 1, &ga);
    CHECK_NEAR_REL(ga.activations, nocp.activations / 4, 1e-12);
    CHECK_NEAR_REL(ga.optimizer, nocp.optimizer, 1e-12);
}

/* A GPT-3 175B layer (MHA, plain MLP of 4 h) is the paper's own case:
 * 34 s b h with dropout (eq. 1), s b h (10 + 24 / t) with TP (eq. 2), 34
 * s b h / t with SP (eq. 5), 32 without dropout.  Mixtral's experts keep
 * each of a token's two copies' MLP tensors and the dispatched inputs, and
 * --expert-load F scales them for the busiest rank. */
static void test_activation_shapes(void)
{
    struct diag d;
    struct hw_config cfg;
    struct llm_config c;
    CHECK_EQ_INT(tu_load_chip("configs/nvidia-h100-sxm.yaml", NULL, &cfg, &d), 0);
    CHECK_EQ_INT(llm_config_load("traces/models/gpt3-175b.json", &c, &d), 0);
    struct llm_step s = {LLM_PREFILL, 1, 2048, 0, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0,
                         LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.1, 0, 0};
    double sbhL = 2048.0 * 12288 * 96;
    struct fit_result f;
    fit_budget(&cfg, &c, &s, 1, &f);
    CHECK_NEAR_REL(f.activations, 34 * sbhL, 1e-12);
    s.tp = 8;
    fit_budget(&cfg, &c, &s, 1, &f);
    CHECK_NEAR_REL(f.activations, (10 + 24.0 / 8) * sbhL, 1e-12);
    s.sp = 1;
    fit_budget(&cfg, &c, &s, 1, &f);
    CHECK_NEAR_REL(f.activations, 34.0 / 8 * sbhL, 1e-12);
    s.dropout = 0;
    fit_budget(&cfg, &c, &s, 1, &f);
    CHECK_NEAR_REL(f.activations, 32.0 / 8 * sbhL, 1e-12);
    struct llm_config m;
    CHECK_EQ_INT(llm_config_load("traces/models/mixtral-8x7b.json", &m, &d), 0);
    struct llm_step e = {LLM_PREFILL, 1, 4096, 0, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0,
                         LLM_FW_FUSED, 1, 8, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    fit_budget(&cfg, &m, &e, 1, &f);
    /* h 4096, q 4096, 8 K/V heads of 128, 2 copies of a gated 14336 MLP */
    double tok = 8.0 * 4096 + 4.0 * 4096 + 4.0 * 1024 + 2 * (6.0 * 14336 + 2.0 * 4096);
    CHECK_NEAR_REL(f.activations, tok * 4096 * 32, 1e-12);
    e.expert_load = 1.5;
    struct fit_result g;
    fit_budget(&cfg, &m, &e, 1, &g);
    CHECK_NEAR_REL(g.activations - f.activations, 0.5 * 2 * (6.0 * 14336 + 2.0 * 4096) * 4096 * 32, 1e-12);
}

static void test_parallel(void)
{
    struct diag d;
    struct hw_config cfg;
    struct llm_config c;
    CHECK_EQ_INT(tu_load_chip("configs/nvidia-h100-sxm.yaml", NULL, &cfg, &d), 0);
    CHECK_EQ_INT(llm_config_load("traces/models/llama-3.1-70b.json", &c, &d), 0);
    struct llm_step s = {LLM_PREFILL, 1, 4096, 0, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0,
                         LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    struct fit_result one, split;
    fit_budget(&cfg, &c, &s, 1, &one);
    s.tp = 8;
    s.dp = 16;
    s.zero = 1;
    fit_budget(&cfg, &c, &s, 1, &split);
    double P = 70553706496.0;
    CHECK_NEAR_REL(one.optimizer, P * 14, 1e-12);
    /* optimizer state: 12 B a parameter over 8 x 16, gradients 2 B over 8 */
    CHECK_NEAR_REL(split.optimizer, P / 8 * 12 / 16 + P / 8 * 2, 1e-12);
    /* weights: everything but the norms over 8 (embedding and LM head too:
     * vocab-parallel in training) */
    double norms = (2.0 * 80 + 1) * 8192 * 2;
    CHECK_NEAR_REL(split.weights, (one.weights - norms) / 8 + norms, 1e-9);
    /* activations: a rank's share of the tensors (l70_tok) */
    CHECK_NEAR_REL(split.activations, one.activations * l70_tok(8, 0) / l70_tok(1, 0), 1e-12);
    CHECK(!one.fits && split.fits);
    printf("Llama-3.1-70B train on H100: %.1f GB unsplit, %.1f GB per rank of TP 8 x DP 16 ZeRO-1\n",
           one.total / 1e9, split.total / 1e9);
    /* ZeRO 3 shards the weights over the replicas as well */
    s.zero = 3;
    struct fit_result z3;
    fit_budget(&cfg, &c, &s, 1, &z3);
    CHECK_NEAR_REL(z3.weights, split.weights / 16, 1e-12);
    CHECK_NEAR_REL(z3.optimizer, P / 8 * 14 / 16, 1e-12);
    /* full recomputation: each layer's 2 s b h input, plus one layer's full
     * set while it is recomputed (Korthikanti et al. 2022, section 4) */
    s.tp = 1;
    s.dp = 1;
    s.zero = 0;
    s.recompute = 1;
    struct fit_result rc;
    fit_budget(&cfg, &c, &s, 1, &rc);
    double sbh = 4096.0 * 8192.0;
    double one_layer = l70_tok(1, 0) * 4096;
    CHECK_NEAR_REL(rc.activations, 2 * sbh * 80 + one_layer, 1e-12);
    /* with dropout the two 1-byte masks are kept; attention that keeps
     * its probabilities adds 5 a s / h (2 without dropout) */
    s.dropout = 0.1;
    struct fit_result dr;
    fit_budget(&cfg, &c, &s, 1, &dr);
    CHECK_NEAR_REL(dr.activations, 2 * sbh * 80 + one_layer + 2 * sbh, 1e-12);
    s.attn = ATTN_MEGATRON;
    fit_budget(&cfg, &c, &s, 1, &dr);
    CHECK_NEAR_REL(dr.activations, 2 * sbh * 80 + one_layer + (2 + 5.0 * 64 * 4096 / 8192) * sbh, 1e-12);
    s.dropout = 0;
    fit_budget(&cfg, &c, &s, 1, &dr);
    CHECK_NEAR_REL(dr.activations, 2 * sbh * 80 + one_layer + 2.0 * 64 * 4096 / 8192 * sbh, 1e-12);
    s.attn = ATTN_FLASH;
    CHECK(rc.activations < one.activations / 10);
    /* pipeline (1F1B), the first stage: the embedding and 10 of 80 layers,
     * and min(pp, micro-batches) micro-batches of stored activations */
    s.recompute = 0;
    s.batch = 8;
    struct fit_result whole, pp;
    fit_budget(&cfg, &c, &s, 1, &whole);
    s.pp = 8;
    s.microbatches = 8;
    fit_budget(&cfg, &c, &s, 1, &pp);
    CHECK_NEAR_REL(pp.activations, whole.activations / 80 * 10 / 8 * 8, 1e-12);
    double embed = 128256.0 * 8192 * 2;
    CHECK_NEAR_REL(pp.weights, embed + (whole.weights - embed - 8192 * 2 - embed) / 8, 1e-9);
    CHECK(pp.optimizer < whole.optimizer / 6 && pp.optimizer > whole.optimizer / 9);
    s.microbatches = 2;                 /* fewer micro-batches than stages: 2 in flight */
    struct fit_result pp2;
    fit_budget(&cfg, &c, &s, 1, &pp2);
    CHECK_NEAR_REL(pp2.activations, whole.activations / 80 * 10 / 2 * 2, 1e-12);
    /* interleaved, 5 chunks of 2 layers a stage, 16 micro-batches: the
     * first stage stores 2 x 7 + 4 x 8 + 1 = 47 chunk-forwards of 2 layers,
     * 1 + 7 / 40 times the 10 layers of 8 micro-batches */
    s.microbatches = 16;
    s.batch = 16;
    struct fit_result v1, v5;
    fit_budget(&cfg, &c, &s, 1, &v1);
    s.vpp = 5;
    fit_budget(&cfg, &c, &s, 1, &v5);
    CHECK_NEAR_REL(v5.activations, v1.activations * (1.0 + 7.0 / 40.0), 1e-12);
    CHECK_NEAR_REL(v5.weights, v1.weights, 1e-12);
}

/* A paged KV cache holds whole pages: 4000 + 1 tokens in pages of 256 is
 * 4096 a sequence, Llama-2-7B's 0.5 MiB a token (32 layers x 2 x 4096 x 2
 * bytes): 2 GiB, against 4001 tokens' worth contiguous. */
static void test_paged(void)
{
    struct diag d;
    struct hw_config cfg;
    struct llm_config c;
    CHECK_EQ_INT(tu_load_chip("configs/nvidia-h100-sxm.yaml", NULL, &cfg, &d), 0);
    CHECK_EQ_INT(llm_config_load("traces/models/llama-2-7b.json", &c, &d), 0);
    struct llm_step s = {LLM_DECODE, 1, 1, 4000, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0,
                         LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    struct fit_result flat, paged;
    fit_budget(&cfg, &c, &s, 0, &flat);
    s.page_size = 256;
    fit_budget(&cfg, &c, &s, 0, &paged);
    CHECK_NEAR_REL(flat.kv_cache, 4001.0 * 512 * 1024, 1e-12);
    CHECK_NEAR_REL(paged.kv_cache, 2.0 * 1024 * 1024 * 1024, 1e-12);
}

int main(void)
{
    test_sequence_parallel();
    test_expert_parallel();
    test_activation_shapes();
    test_parallel();
    test_paged();
    struct fit_result f;
    budget("configs/nvidia-h100-sxm.yaml", "traces/models/llama-2-7b.json", NULL, 4095, &f);
    CHECK_NEAR_REL(f.params, 6738415616.0, 1e-12);
    CHECK_NEAR_REL(f.weights, 6738415616.0 * 2, 1e-12);
    CHECK_NEAR_REL(f.kv_cache, 2.0 * 1024 * 1024 * 1024, 1e-12);
    CHECK(f.fits);

    budget("configs/nvidia-rtx-4090.yaml", "traces/models/llama-2-70b.json", NULL, 4095, &f);
    CHECK_NEAR_REL(f.params, 68976648192.0, 1e-12);
    CHECK(!f.fits);
    CHECK(f.spill > 0 && f.spill_pcie_s > 1.0); /* > 100 GB over ~32 GB/s */
    printf("  70B bf16 on RTX 4090: %.1f GB needed, %.1f GB spill, %.2f s/step over PCIe\n",
           f.total / 1e9, f.spill / 1e9, f.spill_pcie_s);

    budget("configs/nvidia-rtx-4090.yaml", "traces/models/llama-2-70b.json", "q4_k_m", 4095, &f);
    printf("  70B q4_k_m weights: %.2f GB (%.2f bits per weight)\n", f.weights / 1e9,
           f.weights * 8 / f.params);
    CHECK(f.weights * 8 / f.params > 4.5 && f.weights * 8 / f.params < 5.2);
    CHECK(!f.fits);

    /* strata run models the spill: the weights that do not fit cross PCIe */
    {
        struct diag d;
        struct hw_config cfg;
        struct llm_config c;
        struct trace t;
        struct run_result r;
        struct llm_step s = {LLM_DECODE, 1, 1, 1024, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0, LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        CHECK_EQ_INT(tu_load_chip("configs/nvidia-rtx-4090.yaml", NULL, &cfg, &d), 0);
        CHECK_EQ_INT(llm_config_load("traces/models/llama-2-70b.json", &c, &d), 0);
        CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
        CHECK_EQ_INT(run_trace(&cfg, &t, &r, &d), 0);
        double secs = (double)r.total_ps * 1e-12;
        printf("  70B bf16 decode on RTX 4090: %.3f s/token, %.1f GB spilled\n", secs, r.spill / 1e9);
        CHECK(r.spill > 100e9);
        CHECK(secs >= r.spill / cfg.level[cfg.lv_host].bw_bytes_per_s);
        CHECK(r.time_ps[CAT_STALL + cfg.lv_host] > 0.9 * (double)r.total_ps);
        run_result_free(&r);
        trace_free(&t);
    }

    struct stat st;
    if (stat("configs/apple-m4-max-40c.yaml", &st) == 0) {
        budget("configs/apple-m4-max-40c.yaml", "traces/models/llama-2-70b.json", NULL, 4095, &f);
        CHECK(!f.fits); /* 138 GB of bf16 weights alone exceed 128 GB */
        budget("configs/apple-m4-max-40c.yaml", "traces/models/llama-2-70b.json", "q4_k_m", 4095, &f);
        CHECK(f.fits);
    }
    TEST_MAIN_END();
}
