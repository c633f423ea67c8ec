/* test_badinput_quant.c: bad input around quantised weights and strata fit:
 * a clear error naming the file and field (exit 1) or the option (exit 2),
 * never a crash. */
#include <sys/wait.h>

#include "test.h"
#include "util.h"

static char dir[64] = "/tmp/strata-bq-XXXXXX";

static void expect(const char *name, const char *args, int status, const char *n1, const char *n2)
{
    char cmd[2048], errp[128];
    snprintf(errp, sizeof errp, "%s/err.txt", dir);
    snprintf(cmd, sizeof cmd, "'%s' %s >/dev/null 2>'%s'", STRATA_BINARY, args, errp);
    int st = system(cmd);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == status);
    char *err = tu_read_file(errp, NULL);
    CHECK_STR_CONTAINS(err, n1);
    if (n2 != NULL)
        CHECK_STR_CONTAINS(err, n2);
    if (!(WIFEXITED(st) && WEXITSTATUS(st) == status))
        fprintf(stderr, "  ^ case %s exited %d\n", name, WEXITSTATUS(st));
    free(err);
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    char p[256], args[1024];
    /* a trace naming an unknown weight format */
    snprintf(p, sizeof p, "%s/t.json", dir);
    tu_write_file(p, "{\"strata_trace\": 1, \"ops\": [\n"
                     "{\"id\": \"g\", \"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 1, \"n\": 64, \"k\": 64,\n"
                     " \"weights\": \"q3_x\"}]}\n");
    snprintf(args, sizeof args, "run --hw configs/nvidia-h100-sxm.yaml --trace %s", p);
    expect("trace weights", args, 1, "t.json:3:", "weights");
    /* gen llm / fit with an unknown format */
    snprintf(args, sizeof args,
             "gen llm --model traces/models/llama-2-7b.json --phase decode --weights q3_x -o %s/o.json", dir);
    expect("gen weights", args, 2, "--weights", "q3_x");
    expect("gen weights list", args, 2, "int4_g128", "fp8, nvfp4, mxfp4, exl2_2.5,"); /* the formats, FP4 and EXL2 too */
    expect("gen weights list", args, 2, "exl2_8.0;", "nf4");
    expect("serve weights",
           "serve --hw configs/nvidia-b200.yaml --model traces/models/llama-3.1-8b.json --rate 1 "
           "--requests 4 --weights fp3",
           2, "--weights", "nvfp4, mxfp4");
    expect("fit weights",
           "fit --hw configs/nvidia-rtx-4090.yaml --model traces/models/llama-2-7b.json --phase decode "
           "--weights q3_x",
           2, "--weights", NULL);
    /* entropy coding: a format with no integer codes, one whose codes no
     * public measurement sizes, coded weights on a chip with no decoder */
    snprintf(args, sizeof args,
             "gen llm --model traces/models/llama-2-7b.json --phase decode --weights bf16+huffman -o %s/o.json", dir);
    expect("coded float", args, 2, "--weights", "no integer codes");
    snprintf(args, sizeof args,
             "gen llm --model traces/models/llama-2-7b.json --phase decode --weights nvfp4+huffman -o %s/o.json", dir);
    expect("coded fp4", args, 2, "--weights", "no integer codes");
    expect("coded unmeasured",
           "fit --hw configs/nvidia-rtx-4090.yaml --model traces/models/llama-2-7b.json --phase decode "
           "--weights q5_k+huffman",
           2, "--weights", "no public measurement");
    tu_write_file(p, "{\"strata_trace\": 1, \"ops\": [\n"
                     "{\"id\": \"g\", \"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 1, \"n\": 64, \"k\": 64,\n"
                     " \"weights\": \"q4_k+huffman\"}]}\n");
    snprintf(args, sizeof args, "run --hw configs/nvidia-h100-sxm.yaml --trace %s --json %s/r.json", p, dir);
    expect("coded without a decoder", args, 1, "t.json:2: ops[0].weights", "no decoder level");
    snprintf(args, sizeof args, "%s/r.json", dir);
    CHECK(access(args, F_OK) != 0);         /* nothing written */
    /* a model config missing a field, and one with inconsistent heads */
    snprintf(p, sizeof p, "%s/m.json", dir);
    tu_write_file(p, "{\"hidden_size\": 4096, \"num_hidden_layers\": 2, \"num_attention_heads\": 32,\n"
                     " \"vocab_size\": 100, \"max_position_embeddings\": 64}\n");
    snprintf(args, sizeof args, "fit --hw configs/nvidia-rtx-4090.yaml --model %s --phase decode", p);
    expect("missing field", args, 1, "m.json", "intermediate_size");
    snprintf(p, sizeof p, "%s/h.json", dir);
    tu_write_file(p, "{\"hidden_size\": 4096, \"intermediate_size\": 11008, \"num_hidden_layers\": 2,\n"
                     " \"num_attention_heads\": 32, \"num_key_value_heads\": 5,\n"
                     " \"vocab_size\": 100, \"max_position_embeddings\": 64}\n");
    snprintf(args, sizeof args, "fit --hw configs/nvidia-rtx-4090.yaml --model %s --phase decode", p);
    expect("kv heads", args, 1, "h.json:2:", "num_key_value_heads");
    /* a context the model cannot hold */
    expect("context",
           "fit --hw configs/nvidia-rtx-4090.yaml --model traces/models/llama-2-7b.json --phase decode "
           "--context 5000",
           1, "llama-2-7b.json", "max_position_embeddings");
    expect("phase", "fit --hw configs/nvidia-rtx-4090.yaml --model traces/models/llama-2-7b.json --phase x",
           2, "--phase", NULL);
    /* ZeRO-3 with a pipeline: refused by fit as by gen llm */
    expect("zero3 pp", "fit --hw configs/nvidia-a100-sxm-80gb.yaml --model traces/models/llama-2-7b.json "
           "--phase train --batch 4 --prompt 2048 --dp 2 --pp 2 --zero 3", 2, "--zero 3", "--pp");
    expect("zero3 pp gen", "gen llm --model traces/models/llama-2-7b.json --phase train --batch 4 "
           "--prompt 2048 --dp 2 --pp 2 --zero 3 -o /dev/null", 1, "ZeRO-3", "--pp");
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    tu_sh(cmd);
    TEST_MAIN_END();
}
