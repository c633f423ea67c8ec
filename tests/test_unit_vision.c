/* test_unit_vision.c: vision transformers (model_type vit, deit) as strata
 * gen llm builds them (sim/work/llmb_vit.c).  Parameter counts and MACs an
 * image against timm's own columns for the 18 ViTs of
 * traces/validation/timm-vit.csv; the kernels eager PyTorch runs under
 * autocast (the fp32 residual stream, the casts, LayerNorm in fp32, the
 * bytes of a mixed residual add) against the fused build; bidirectional
 * attention over the patches and the class token; and the inputs refused:
 * decode, a cache, parallel layouts, llama.cpp, a patch that does not
 * divide the image, and serve/fit on an encoder. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "llm.h"
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

static struct llm_step step(uint64_t batch, enum llm_framework fw, enum attn_impl attn)
{
    struct llm_step s = {.phase = LLM_PREFILL, .batch = batch, .prompt = 512, .dtype = DT_FP16,
                         .attn = attn, .kv_dtype = DT_FP16, .weights = WF_NONE, .framework = fw};
    return s;
}

static const struct op *find(const struct trace *t, const char *id)
{
    int i = tu_find_op(t, id);
    return i >= 0 ? &t->ops[i] : NULL;
}

/* timm's param_count (M) and infer_gmacs columns
 * (results/benchmark-infer-amp-nchw-pt240-cu124-rtx4090.csv @ 5c33776a) */
static void test_counts(void)
{
    static const struct { const char *name; double params_m, gmacs; } m[] = {
        {"vit-tiny-patch16-224", 5.72, 1.26},    {"vit-small-patch16-224", 22.05, 4.61},
        {"vit-small-patch32-224", 22.88, 1.15},  {"vit-small-patch8-224", 21.67, 22.44},
        {"vit-base-patch16-224", 86.57, 17.58},  {"vit-base-patch32-224", 88.22, 4.41},
        {"vit-base-patch8-224", 86.58, 78.22},   {"vit-large-patch16-224", 304.33, 61.6},
        {"vit-large-patch32-224", 305.51, 15.39}, {"vit-large-patch14-224", 304.2, 81.08},
        {"vit-huge-patch14-224", 630.76, 167.4}, {"vit-tiny-patch16-384", 5.79, 4.7},
        {"vit-small-patch16-384", 22.2, 15.52},  {"vit-small-patch32-384", 22.92, 3.45},
        {"vit-base-patch16-384", 86.86, 55.54},  {"vit-base-patch32-384", 88.3, 13.06},
        {"vit-large-patch16-384", 304.72, 191.21}, {"vit-large-patch32-384", 306.63, 45.31},
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, "traces/models/vision/%s.json", m[i].name);
        struct llm_config c;
        if (load(path, &c) != 0)
            continue;
        double p = (double)llm_param_count(&c) / 1e6;
        CHECK(fabs(p - m[i].params_m) < 0.006);
        /* the matrix work (GEMMs and attention's two products) an image, in
         * MACs, as timm's fvcore count takes it */
        struct llm_step s = step(2, LLM_FW_PYTORCH, ATTN_SDPA);
        struct trace t;
        struct diag d;
        memset(&d, 0, sizeof d);
        CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
        double macs = 0;
        for (uint32_t k = 0; k < t.nops; k++) {
            const struct op *o = &t.ops[k];
            if (o->kind == OP_GEMM)
                macs += (double)o->u.gemm.m * o->u.gemm.n * o->u.gemm.k * o->u.gemm.batch;
            else if (o->kind == OP_ATTENTION)
                macs += 2.0 * o->u.attn.batch * o->u.attn.heads * o->u.attn.q_len * o->u.attn.kv_len *
                        o->u.attn.head_dim;
        }
        macs /= 2.0 * 1e9;
        CHECK(fabs(macs - m[i].gmacs) <= 0.006 * m[i].gmacs + 0.006);
        printf("%-22s %8.2f M params (timm %.2f), %7.2f GMACs an image (timm %.2f)\n", m[i].name, p,
               m[i].params_m, macs, m[i].gmacs);
        trace_free(&t);
    }
}

/* ViT-B/16, 4 images: under autocast every Linear casts its weight and
 * bias, LayerNorm runs on the fp32 stream, the residual adds read fp32 and
 * fp16 and write fp32; fused has none of that; attention is over all 197
 * tokens, unmasked; math attention adds the output's transpose */
static void test_kernels(void)
{
    struct llm_config c;
    if (load("traces/models/vision/vit-base-patch16-224.json", &c) != 0)
        return;
    CHECK_EQ_INT((int)c.max_pos, 197);
    CHECK_EQ_INT((int)c.vit.labels, 1000);
    struct diag d;
    memset(&d, 0, sizeof d);
    struct llm_step s = step(4, LLM_FW_PYTORCH, ATTN_SDPA);
    struct trace t;
    if (llm_build(&c, &s, &t, &d) != 0) {
        diag_print(&d, stderr);
        CHECK(0);
        return;
    }
    uint64_t rows = 4 * 197, h = 768;
    /* pixels' cast, the patch conv (2 casts and the GEMM), cat, pos; 20 a layer; the
     * norm; the head (3 casts and the GEMM) */
    CHECK_EQ_INT((int)t.nops, 6 + 12 * 20 + 1 + 4);
    const struct op *o = find(&t, "L0.norm1");
    CHECK(o != NULL && o->kind == OP_NORM && o->dtype == DT_FP32 && o->u.rc.rows == rows && o->u.rc.cols == h);
    o = find(&t, "L0.residual1");   /* fp32 + fp16 -> fp32: 10 bytes an element in 2-byte units */
    CHECK(o != NULL && o->dtype == DT_FP16 && o->u.ew.elements == rows * h && o->u.ew.inputs == 3 &&
          o->u.ew.outputs == 2);
    o = find(&t, "L0.qkv.in_cast");
    CHECK(o != NULL && o->u.ew.inputs == 2 && o->u.ew.outputs == 1);
    o = find(&t, "L0.fc1.w_cast");
    CHECK(o != NULL && o->u.ew.elements == 4 * h * h);
    o = find(&t, "L0.qkv");
    CHECK(o != NULL && o->kind == OP_GEMM && o->u.gemm.m == rows && o->u.gemm.n == 3 * h && o->u.gemm.k == h);
    o = find(&t, "L0.attention");
    CHECK(o != NULL && o->u.attn.causal == 0 && o->u.attn.q_len == 197 && o->u.attn.kv_len == 197 &&
          o->u.attn.heads == 12 && o->u.attn.kv_heads == 12 && o->u.attn.head_dim == 64);
    CHECK(find(&t, "L0.attn_transpose") == NULL);
    o = find(&t, "head");
    CHECK(o != NULL && o->u.gemm.m == 4 && o->u.gemm.n == 1000);
    CHECK_EQ_INT((int)t.tokens, (int)rows);
    trace_free(&t);
    s = step(4, LLM_FW_FUSED, ATTN_FLASH);
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    CHECK_EQ_INT((int)t.nops, 2 + 12 * 8 + 1 + 1);
    o = find(&t, "L0.norm1");
    CHECK(o != NULL && o->dtype == DT_FP16);
    CHECK(find(&t, "L0.residual1") == NULL && find(&t, "L0.qkv.w_cast") == NULL);
    trace_free(&t);
    s = step(4, LLM_FW_PYTORCH, ATTN_MATH);
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    CHECK(find(&t, "L11.attn_transpose") != NULL);
    trace_free(&t);
    /* fp32 under eager PyTorch: no autocast, no casts */
    s = step(4, LLM_FW_PYTORCH, ATTN_SDPA);
    s.dtype = DT_FP32;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    CHECK(find(&t, "L0.qkv.w_cast") == NULL && find(&t, "pixels_cast") == NULL);
    trace_free(&t);
}

static void expect_step_refused(const struct llm_config *c, struct llm_step s, const char *field)
{
    struct trace t;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_build(c, &s, &t, &d), -1);
    CHECK(strcmp(d.field, field) == 0);
    printf("refused: ");
    diag_print(&d, stdout);
}

/* The config text (written as NAME.json) refused at field and line. */
static void expect_config_refused(const char *name, const char *text, const char *field, int line)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s.json", tmpdir, name);
    tu_write_file(path, text);
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load(path, &c, &d), -1);
    CHECK(strcmp(d.field, field) == 0 && d.line == line);
    printf("refused: ");
    diag_print(&d, stdout);
}

static void test_refused(void)
{
    struct llm_config c;
    if (load("traces/models/vision/vit-small-patch16-224.json", &c) != 0)
        return;
    struct llm_step s = step(2, LLM_FW_PYTORCH, ATTN_SDPA);
    s.phase = LLM_DECODE;
    expect_step_refused(&c, s, "--phase");
    s.phase = LLM_TRAIN;
    expect_step_refused(&c, s, "--phase");
    s = step(2, LLM_FW_PYTORCH, ATTN_SDPA);
    s.context = 16;
    expect_step_refused(&c, s, "--context");
    s = step(2, LLM_FW_PYTORCH, ATTN_SDPA);
    s.tp = 2;
    expect_step_refused(&c, s, "--tp");
    s.tp = 1;
    s.dp = 4;
    expect_step_refused(&c, s, "--dp");
    s = step(2, LLM_FW_LLAMA_CPP, ATTN_FLASH);
    expect_step_refused(&c, s, "--framework");
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_decoder(&c, "strata serve", 1, &d), -1);
    CHECK(strcmp(d.field, "model_type") == 0 && strstr(d.msg, "strata serve") != NULL);
    static const struct { const char *name, *text, *field; int line; } bad[] = {
        {"patch", "{\"model_type\": \"vit\", \"hidden_size\": 64, \"num_hidden_layers\": 2,\n"
                  " \"num_attention_heads\": 2, \"intermediate_size\": 256,\n \"patch_size\": 15}\n",
         "patch_size", 3},
        {"heads", "{\"model_type\": \"vit\", \"hidden_size\": 64, \"num_hidden_layers\": 2,\n"
                  " \"num_attention_heads\": 3, \"intermediate_size\": 256}\n", "num_attention_heads", 2},
        {"deit", "{\"model_type\": \"deit\", \"hidden_size\": 64, \"num_hidden_layers\": 2,\n"
                 " \"num_attention_heads\": 2, \"intermediate_size\": 256}\n", "model_type", 1},
        {"qkv-bias", "{\"model_type\": \"vit\", \"hidden_size\": 64, \"num_hidden_layers\": 2,\n"
                     " \"num_attention_heads\": 2, \"intermediate_size\": 256,\n \"qkv_bias\": false}\n",
         "qkv_bias", 3},
        {"sizes", "{\"model_type\": \"vit\", \"hidden_size\": 16000000, \"num_hidden_layers\": 4000,\n"
                  " \"num_attention_heads\": 2, \"intermediate_size\": 256}\n", "hidden_size", 1},
        {"labels", "{\"model_type\": \"vit\", \"hidden_size\": 64, \"num_hidden_layers\": 2,\n"
                   " \"num_attention_heads\": 2, \"intermediate_size\": 256,\n \"id2label\": [1, 2]}\n",
         "id2label", 3},
        {"width", "{\"model_type\": \"vit\", \"hidden_size\": 64, \"num_hidden_layers\": 2,\n"
                  " \"num_attention_heads\": 2}\n", "intermediate_size", 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_config_refused(bad[i].name, bad[i].text, bad[i].field, bad[i].line);
    /* id2label's count is the classifier's width when num_labels is not given */
    char path[128];
    snprintf(path, sizeof path, "%s/ids.json", tmpdir);
    tu_write_file(path, "{\"model_type\": \"vit\", \"hidden_size\": 64, \"num_hidden_layers\": 2,\n"
                        " \"num_attention_heads\": 2, \"intermediate_size\": 256, \"image_size\": 32,\n"
                        " \"patch_size\": 8, \"num_channels\": 1, \"id2label\": {\"0\": \"a\", \"1\": \"b\"}}\n");
    if (load(path, &c) == 0) {
        CHECK_EQ_INT((int)c.vit.labels, 2);
        CHECK_EQ_INT((int)c.max_pos, 17);
        /* 64 x 64 patch conv + bias, class token, 17 positions, 2 layers, final norm, 2 classes */
        uint64_t layer = 4 * 64 * 64 + 4 * 64 + 2 * 64 * 256 + 256 + 64 + 4 * 64;
        CHECK_EQ_INT((int)llm_param_count(&c), (int)(64 * 64 + 64 + 64 + 17 * 64 + 2 * layer + 128 + 2 * 64 + 2));
    }
}

/* LLaVA-1.5-7B (traces/models/llava-1.5-7b.json): CLIP ViT-L/14 at 336
 * pixels in front of Vicuna-7B; 7.06 B parameters (Llama-2-7B with 32,064
 * tokens, the tower's 303.5 M, the projector's 21.0 M); an image is 576
 * tokens (its 24 x 24 patches, the class token dropped); vLLM's build stops
 * at the feature layer (-2: 23 of 24 layers), Hugging Face's runs all 24;
 * the prompt the decoder sees is the images' tokens and the text's */
static void test_llava(void)
{
    struct llm_config c;
    if (load("traces/models/llava-1.5-7b.json", &c) != 0)
        return;
    CHECK(strcmp(c.name, "llava") == 0 && !c.encoder);
    CHECK_EQ_INT((int)c.image_tokens, 576);
    CHECK_EQ_INT((int)c.vit.feature_layers, 23);
    CHECK_EQ_INT((int)c.vit.tokens, 577);
    uint64_t tower = 3 * 14 * 14 * 1024 + 1024 + 577 * 1024 + 24 * (4 * 1024 * 1024 + 4 * 1024 + 2 * 1024 * 4096 + 4096 +
                                                                     1024 + 4 * 1024) + 4 * 1024;
    uint64_t proj = 1024 * 4096 + 4096 + 4096 * 4096 + 4096;
    /* Llama-2-7B's count with 32,064 tokens (tests/test_unit_llm.c's 6.74 B at 32,000) */
    uint64_t dec = 2 * 32064ull * 4096 + 4096 + 32 * (4ull * 4096 * 4096 + 3ull * 4096 * 11008 + 2 * 4096);
    CHECK_EQ_INT((long long)llm_param_count(&c), (long long)(dec + tower + proj));
    printf("llava-1.5-7b: %.4f B params (tower %.1f M, projector %.1f M)\n", llm_param_count(&c) / 1e9,
           tower / 1e6, proj / 1e6);
    /* CLIPVisionConfig's defaults where vision_config leaves them out
     * (llava-hf's own file gives no hidden_act): patches of 32, quick GELU */
    char path[128];
    snprintf(path, sizeof path, "%s/llava-defaults.json", tmpdir);
    tu_write_file(path, "{\"model_type\": \"llava\",\n"
                        " \"text_config\": {\"model_type\": \"llama\", \"hidden_size\": 64, \"intermediate_size\": 128,\n"
                        "  \"num_hidden_layers\": 2, \"num_attention_heads\": 2, \"vocab_size\": 100,\n"
                        "  \"max_position_embeddings\": 4096},\n"
                        " \"vision_config\": {\"model_type\": \"clip_vision_model\", \"hidden_size\": 64,\n"
                        "  \"intermediate_size\": 128, \"num_hidden_layers\": 4, \"num_attention_heads\": 2}}\n");
    struct llm_config cd;
    if (load(path, &cd) == 0) {
        CHECK_EQ_INT((int)cd.vit.patch, 32);
        CHECK_EQ_INT((int)cd.image_tokens, 49);     /* (224 / 32)^2 */
        CHECK(cd.vit.act_flops == 5.0 && cd.vit.pre_norm);
    }
    struct llm_step s = step(2, LLM_FW_FUSED, ATTN_FLASH);
    s.prompt = 64;
    s.images = 2;
    struct trace t;
    struct diag d;
    memset(&d, 0, sizeof d);
    if (llm_build(&c, &s, &t, &d) != 0) {
        diag_print(&d, stderr);
        CHECK(0);
        return;
    }
    CHECK(find(&t, "vision.V22.fc2") != NULL && find(&t, "vision.V23.norm1") == NULL);
    const struct op *o = find(&t, "vision.V0.attention");   /* 4 images, 577 tokens each */
    CHECK(o != NULL && o->u.attn.batch == 4 && o->u.attn.q_len == 577 && o->u.attn.causal == 0);
    o = find(&t, "vision.pre_norm");
    CHECK(o != NULL && o->u.rc.rows == 4 * 577);
    o = find(&t, "mm_projector.linear_1");
    CHECK(o != NULL && o->u.gemm.m == 4 * 576 && o->u.gemm.n == 4096 && o->u.gemm.k == 1024);
    o = find(&t, "image_merge");
    CHECK(o != NULL && o->u.ew.elements == 4ull * 576 * 4096);
    o = find(&t, "L0.attention");           /* the decoder: 2 x 576 + 64 tokens a sequence, causal */
    CHECK(o != NULL && o->u.attn.batch == 2 && o->u.attn.q_len == 1216 && o->u.attn.causal == 1);
    CHECK_EQ_INT((int)t.tokens, 2 * 1216);
    trace_free(&t);
    s.framework = LLM_FW_HF;
    s.attn = ATTN_SDPA;
    CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
    CHECK(find(&t, "vision.V23.fc2") != NULL && find(&t, "vision.V23.residual2") != NULL);
    CHECK(find(&t, "vision.V0.qkv.w_cast") == NULL);    /* loaded in fp16: no autocast */
    trace_free(&t);
    /* images where they cannot go */
    s = step(1, LLM_FW_FUSED, ATTN_FLASH);
    s.images = 1;
    s.phase = LLM_DECODE;
    expect_step_refused(&c, s, "--images");
    s.phase = LLM_PREFILL;
    s.tp = 2;
    expect_step_refused(&c, s, "--images");
    s.tp = 1;
    s.dp = 2;
    expect_step_refused(&c, s, "--images");
    s.dp = 1;
    struct llm_config llama;
    if (load("traces/models/llama-2-7b.json", &llama) == 0) {
        s.tp = 1;
        expect_step_refused(&llama, s, "--images");
    }
    static const struct { const char *name, *text, *field; int line; } bad[] = {
        {"llava-layer", "{\"model_type\": \"llava\", \"vision_feature_layer\": -30,\n"
                  " \"text_config\": {\"model_type\": \"llama\", \"hidden_size\": 64, \"intermediate_size\": 128,\n"
                  "  \"num_hidden_layers\": 2, \"num_attention_heads\": 2, \"vocab_size\": 100,\n"
                  "  \"max_position_embeddings\": 4096},\n"
                  " \"vision_config\": {\"model_type\": \"clip_vision_model\", \"hidden_size\": 64,\n"
                  "  \"intermediate_size\": 128, \"num_hidden_layers\": 4, \"num_attention_heads\": 2}}\n",
         "vision_feature_layer", 1},
        {"llava-tower", "{\"model_type\": \"llava\",\n"
                  " \"text_config\": {\"model_type\": \"llama\", \"hidden_size\": 64, \"intermediate_size\": 128,\n"
                  "  \"num_hidden_layers\": 2, \"num_attention_heads\": 2, \"vocab_size\": 100,\n"
                  "  \"max_position_embeddings\": 4096},\n"
                  " \"vision_config\": {\"model_type\": \"siglip_vision_model\", \"hidden_size\": 64,\n"
                  "  \"intermediate_size\": 128, \"num_hidden_layers\": 4, \"num_attention_heads\": 2}}\n",
         "vision_config.model_type", 5},
        {"llava-text", "{\"model_type\": \"llava\",\n \"text_config\": [1]}\n", "text_config", 2},
        {"llava-vit-text", "{\"model_type\": \"llava\",\n"
                           " \"text_config\": {\"model_type\": \"vit\", \"hidden_size\": 64, \"intermediate_size\": 128,\n"
                           "  \"num_hidden_layers\": 2, \"num_attention_heads\": 2},\n"
                           " \"vision_config\": {\"model_type\": \"clip_vision_model\", \"hidden_size\": 64,\n"
                           "  \"intermediate_size\": 128, \"num_hidden_layers\": 4, \"num_attention_heads\": 2}}\n",
         "text_config", 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_config_refused(bad[i].name, bad[i].text, bad[i].field, bad[i].line);
}

int main(void)
{
    if (tu_mkdtemp(tmpdir, sizeof tmpdir, "strata-vision") != 0)
        return 1;
    test_counts();
    test_kernels();
    test_refused();
    test_llava();
    tu_rmtree(tmpdir);
    TEST_MAIN_END();
}
