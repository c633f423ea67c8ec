/* test_validation_maxtext.c: MaxText's training steps on TPU v4 slices
 * (traces/validation/maxtext-tpu-v4.csv; held out: nothing fitted on
 * TPUs): FSDP as ZeRO-3 over the slice, full recomputation, flash
 * attention; one slice, and 2 to 8 slices joined by the data-centre
 * network (--dcn); TFLOP/s per chip within the 15% median.  Each row
 * simulates about 50 million engine events (the TPU model's tile waves),
 * so the sanitizer run of scripts/test.sh leaves this suite out; the code
 * it runs is covered there by test_unit_coll (ZeRO-3) and the TPU tests. */
#include <stdio.h>
#include <string.h>

#include "test.h"
#include "util.h"
#include "validate.h"

int main(void)
{
    struct diag d;
    struct validate_result r;
    struct validate_group g[32];
    int ng, rc;
    struct validate_opts omx = {.data = "traces/validation/maxtext-tpu-v4.csv", .configs = "configs",
                                .root = "."};
    memset(&d, 0, sizeof d);
    rc = validate_run(&omx, &r, &d);
    CHECK_EQ_INT(rc, 0);
    if (rc == 0) {
        CHECK_EQ_INT(r.nrows, 6);
        ng = validate_groups(&r, g, 32);
        CHECK_EQ_INT(ng, 1);
        printf("%-22s %3u rows  median %5.1f%% (<= 15%%)  worst %5.1f%% (<= 15%%)\n", g[0].name,
               g[0].count, 100 * g[0].median_abs_err, 100 * g[0].worst_abs_err);
        CHECK(g[0].median_abs_err <= 0.15 && g[0].worst_abs_err <= 0.15);
        validate_free(&r);
    } else {
        diag_print(&d, stderr);
    }
    TEST_MAIN_END();
}
