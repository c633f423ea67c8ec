/* test_validation_training.c: published training step times, each within
 * the 25% worst-row bound (held out: nothing fitted on them).
 * Three ctest entries run this executable on a part each, so the heavy
 * parts run side by side; all three are left out of the sanitizer run of
 * scripts/test.sh (each is a minute or two; test_unit_cp, test_unit_llm
 * and test_unit_pipeline run the same code there).
 *
 * test_validation_training: NVIDIA's DGX H100 rows with context and tensor
 * parallelism (traces/validation/dgxc-h100.csv): Llama-3.1-8B CP 2 x DP 4
 * on one node and x DP 64 on 16 (32 micro-batches), Nemotron-4-15B TP 2 x
 * DP 8 on 2 nodes, Llama-3.1-70B TP 4 x PP 4 (VP 5) x CP 2 x DP 2 on 8
 * nodes (about 380 million engine events).  DGXC-L70B-128 is in the file
 * but not run here: it takes as long again and adds only replicas.
 * test_validation_training_plain ("plain"): the plain-MLP pipelines of the
 * same file, GPT-3 175B TP 4 x PP 8 (VP 6) x DP 4 on 16 nodes and
 * Nemotron-4-340B TP 8 x PP 8 (VP 12) x DP 4 on 32.
 * test_validation_training_a100 ("a100"): Megatron-LM's 2021 weak-scaling
 * table on DGX A100s (traces/validation/megatron-a100.csv), GPT 1.7B to
 * 76B on 32 to 1024 GPUs, TP, PP (interleaved) and DP, full recomputation. */
#include <stdio.h>
#include <string.h>

#include "test.h"
#include "util.h"
#include "validate.h"

int main(int argc, char **argv)
{
    struct diag d;
    memset(&d, 0, sizeof d);
    struct validate_result r;
    const char *part = argc > 1 ? argv[1] : "";
    static const struct { const char *part, *data, *ids; unsigned rows; } parts[] = {
        {"", "traces/validation/dgxc-h100.csv", "DGXC-L8B-008,DGXC-L8B-128,DGXC-N15B-016,DGXC-L70B-064", 4},
        {"plain", "traces/validation/dgxc-h100.csv", "DGXC-G175B-128,DGXC-N340B-256", 2},
        {"a100", "traces/validation/megatron-a100.csv", NULL, 6},
    };
    size_t k = 0;
    while (k < sizeof parts / sizeof parts[0] && strcmp(parts[k].part, part) != 0)
        k++;
    CHECK(k < sizeof parts / sizeof parts[0]);
    if (k == sizeof parts / sizeof parts[0])
        TEST_MAIN_END();
    struct validate_opts o = {.data = parts[k].data, .configs = "configs", .root = ".", .ids = parts[k].ids};
    int rc = validate_run(&o, &r, &d);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0) {
        diag_print(&d, stderr);
        TEST_MAIN_END();
    }
    CHECK_EQ_INT(r.nrows, parts[k].rows);
    for (unsigned i = 0; i < r.nrows; i++) {
        printf("%-14s predicted %.3f s, measured %.3f s (%+.1f%%, |err| <= 25%%)\n", r.rows[i].id,
               r.rows[i].predicted, r.rows[i].measured, 100 * r.rows[i].err);
        CHECK(r.rows[i].err > -0.25 && r.rows[i].err < 0.25);
    }
    validate_free(&r);
    TEST_MAIN_END();
}
