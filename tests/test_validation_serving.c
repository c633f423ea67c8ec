/* test_validation_serving.c: `strata validate` on a serving CSV (issue 34,
 * docs/validation.md "Serving"): five rows of traces/validation/serving/
 * serving.csv with fewer requests (six figures: SERVE-157 gives three) (tests/data/serving-small.csv; the
 * steady state is the same, the run a tenth as long), each a strata serve
 * run built as the verb builds it.  The bounds are where the shipped model
 * stands today with a margin, so a change that breaks serving's step
 * times, scheduler or KV sizing fails here.  TensorRT-LLM 0.17's
 * max-throughput rows (8B FP8 on H200 and H100) come out 33% and 30% high
 * (nothing fitted on them).  SGLang 0.3's 4 req/s row on an A100
 * (SERVE-157) is one of the three its two host times were fitted on
 * (configs/stacks/sglang-0.3.yaml): median TTFT 20% low, TPOT within 1%,
 * end-to-end 9% low in this short run (-24%, 0%, +9% in the full one; 36%,
 * 19% and 8% low before the 2 ms a forward pass); its offline throughput
 * (SERVE-165, a row ShareGPT's gamma-distributed lengths were chosen on)
 * 24% low (this short run's tail weighs more than the full 5000-request
 * row's, -10%; docs/validation.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "serve_val.h"
#include "test.h"
#include "util.h"

/* Runs the rows of data (ids: NULL for all) as o does, into *r (the
 * caller frees it): 1 if the run passed with nrows compared rows. */
static int run_rows(const struct validate_opts *o, const char *data, const char *ids, uint32_t nrows,
                    struct validate_result *r, FILE *out)
{
    struct validate_opts v = *o;
    struct diag d;
    memset(&d, 0, sizeof d);
    v.data = data;
    v.ids = ids;
    int rc = serve_val_run(&v, r, out, &d);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(r->nrows, nrows);
    return rc == 0 && r->nrows == nrows;
}

/* data's line 2 is refused with a message holding each of the words. */
static void refused(const struct validate_opts *o, const char *data, const char *word, const char *word2)
{
    struct validate_opts v = *o;
    struct validate_result r;
    struct diag d;
    memset(&d, 0, sizeof d);
    v.data = data;
    int rc = serve_val_run(&v, &r, NULL, &d);
    CHECK(rc != 0 && d.line == 2 && strstr(d.msg, word) != NULL && (word2 == NULL || strstr(d.msg, word2) != NULL));
}

int main(void)
{
    struct validate_opts o = {.data = "tests/data/serving-small.csv", .configs = "configs", .root = "."};
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK(serve_val_is(o.data));
    CHECK(!serve_val_is("traces/validation/calibration.csv"));
    struct validate_result r;
    int rc = serve_val_run(&o, &r, stdout, &d);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0) {
        diag_print(&d, stderr);
        TEST_MAIN_END();
    }
    CHECK_EQ_INT(r.nrows, 6);
    CHECK_EQ_INT(r.skipped, 1);     /* SERVE-127: FP4 on B200 */
    /* each row: its id, metric and the error's range */
    static const struct {
        const char *id, *metric;
        double lo, hi;
    } want[] = {
        /* TRT-LLM 0.17 max throughput, 8B FP8: +15% (H100) and +17% (H200) before Hopper's GEMMs
         * ran in 2-CTA clusters (issue 35), +31% and +28% after: their FP8 prefill GEMMs were
         * L2-bound; +33% and +30% with TensorRT-LLM's capacity policy (no preemption, so no
         * recomputed prompts); the engine's per-step CPU time is not modelled yet
         * (docs/validation.md) */
        {"SERVE-073", "output_throughput", 0.05, 0.40},
        {"SERVE-157", "ttft_p50", -0.40, -0.10},
        {"SERVE-157", "tpot_p50", -0.12, 0.12},
        /* the median request's whole time, first arrival to last token (-9.2%) */
        {"SERVE-157", "e2e_p50", -0.20, 0.20},
        {"SERVE-165", "output_throughput", -0.35, -0.10},
        {"SERVE-079", "output_throughput", 0.05, 0.40},
    };
    for (uint32_t i = 0; i < r.nrows && i < 6; i++) {
        const struct val_row *w = &r.rows[i];
        printf("%-10s %-18s predicted %10.4g measured %10.4g %+6.1f%% (want %+.0f%% .. %+.0f%%)\n", w->id,
               w->metric, w->predicted, w->measured, 100 * w->err, 100 * want[i].lo, 100 * want[i].hi);
        CHECK(strcmp(w->id, want[i].id) == 0 && strcmp(w->metric, want[i].metric) == 0);
        CHECK(isfinite(w->err) && w->err >= want[i].lo && w->err <= want[i].hi);
    }
    validate_free(&r);
    /* shared prefixes (vLLM PR #1983's rows, 10 req/s): with the prefix
     * cached the mean TTFT is lower, the throughput the offered rate */
    if (run_rows(&o, "tests/data/serving-prefix.csv", NULL, 4, &r, stdout)) {
        /* rows: SERVE-221 (cache) throughput, TTFT; SERVE-222 (none) throughput, TTFT */
        CHECK(strcmp(r.rows[1].metric, "ttft_mean") == 0 && strcmp(r.rows[3].metric, "ttft_mean") == 0);
        CHECK(r.rows[1].predicted < 0.7 * r.rows[3].predicted);
        CHECK(fabs(r.rows[0].err) < 0.1 && fabs(r.rows[2].err) < 0.1);
    }
    validate_free(&r);
    refused(&o, "tests/data/serving-prefix-bad.csv", "prefix_caching", NULL);
    /* vLLM's ROCm build on 8x MI300X (traces/validation/serving/rocm.csv):
     * one static batch, its whole time against the median request's
     * end-to-end time; batch 1 and 128 of Llama-3.1-70B with 2048-token
     * prompts, held out from the stack's launch-gap fit (+2.8%, -2.4%; 13%
     * and 9% fast at the chip's a-priori gap) */
    if (run_rows(&o, "traces/validation/serving/rocm.csv", "ROCMVLLM-009,ROCMVLLM-016", 2, &r, stdout)) {
        for (uint32_t i = 0; i < r.nrows; i++) {
            printf("%-12s %-8s predicted %10.4g measured %10.4g %+6.1f%%\n", r.rows[i].id, r.rows[i].metric,
                   r.rows[i].predicted, r.rows[i].measured, 100 * r.rows[i].err);
            CHECK(strcmp(r.rows[i].metric, "e2e_p50") == 0);
            CHECK(fabs(r.rows[i].err) < 0.08);
        }
        /* a bigger batch takes longer: 128 sequences against 1 */
        CHECK(r.rows[1].predicted > 3 * r.rows[0].predicted);
    }
    validate_free(&r);
    /* scheduler_steps=N (vLLM's --num-scheduler-steps) over the stack's:
     * a multi-step window keeps finished sequences' seats until its end,
     * so the same 64 requests finish no sooner; 0 is refused at its line */
    if (run_rows(&o, "tests/data/serving-steps.csv", NULL, 2, &r, NULL))
        CHECK(r.rows[1].predicted <= r.rows[0].predicted && r.rows[1].predicted != r.rows[0].predicted);
    validate_free(&r);
    refused(&o, "tests/data/serving-steps-bad.csv", "scheduler_steps", "expected an integer");
    /* a spec that names no model is refused with its line */
    refused(&o, "tests/data/serving-bad.csv", "model=", NULL);
    TEST_MAIN_END();
}
