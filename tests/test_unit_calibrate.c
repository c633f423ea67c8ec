/* test_unit_calibrate.c: `strata calibrate` and `validate --leave-one-chip-out`.
 *
 * Refitting the A100's hand-fitted DRAM efficiencies from the rows
 * docs/calibration.md names gives them back within two standard
 * deviations of the fit (the hand fit used one row each, the fit all six),
 * lowers the residual, and its overlay reproduces the fitted predictions.
 * Bad keys, too few rows and bad files are errors with nothing written. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calibrate.h"
#include "cfg.h"
#include "test.h"
#include "util.h"

static char tmp[64];

static void fit_a100(void)
{
    static struct calib_opts o;
    memset(&o, 0, sizeof o);
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK(calib_parse_keys(&o, "efficiency.dram,efficiency.dram_rw,efficiency.dram_latency", &d) == 0);
    CHECK(strcmp(o.p[0].key, "dram.efficiency.bandwidth_fraction") == 0);
    o.vo.data = "traces/validation/calibration.csv";
    o.vo.configs = "configs";
    o.vo.root = ".";
    o.vo.only_config = "nvidia-a100-sxm-80gb";
    o.vo.ids = "UBENCH-00*";
    o.start_config = "configs/nvidia-a100-sxm-80gb.yaml";
    struct calib_result r;
    int rc = calib_fit(&o, &r, &d);
    if (rc != 0)
        diag_print(&d, stderr);
    CHECK(rc == 0);
    if (rc != 0)
        return;
    CHECK_EQ_INT(r.nrows, 6);
    CHECK(r.rms_fit <= r.rms_start);
    static const double hand[3] = {0.926, 0.08, 1000};
    for (int i = 0; i < 3; i++) {
        printf("  %s: hand %g, fitted %g +- %g\n", o.p[i].full_key, hand[i], o.p[i].value,
               o.p[i].sigma);
        CHECK(isfinite(o.p[i].sigma) && o.p[i].sigma > 0);
        CHECK(fabs(o.p[i].value - hand[i]) <= 2 * o.p[i].sigma);
        CHECK(o.p[i].start == hand[i]);
    }
    /* the overlay gives the fitted predictions back */
    char ov[128];
    snprintf(ov, sizeof ov, "%s/fit.yaml", tmp);
    CHECK(calib_write_overlay(&o, &r, "nvidia-a100-sxm-80gb", ov, &d) == 0);
    struct cfg_sets sets;
    memset(&sets, 0, sizeof sets);
    CHECK(cfg_sets_load_overlay(&sets, ov, &d) == 0);
    CHECK_EQ_INT(sets.n, 3);
    struct validate_opts vo = o.vo;
    vo.sets = &sets;
    struct validate_result again;
    CHECK(validate_run(&vo, &again, &d) == 0);
    for (uint32_t i = 0; i < again.nrows && i < r.fit.nrows; i++)
        CHECK_NEAR_REL(again.rows[i].predicted, r.fit.rows[i].predicted, 1e-5);
    validate_free(&again);
    calib_result_free(&r);
}

static int cli(const char *args, char **err)
{
    char cmd[2048], ep[160];
    snprintf(ep, sizeof ep, "%s/err.txt", tmp);
    snprintf(cmd, sizeof cmd, "'%s' %s >'%s/out.txt' 2>'%s'", STRATA_BINARY, args, tmp, ep);
    int rc = tu_sh(cmd);
    *err = tu_read_file(ep, NULL);
    return rc;
}

static void bad_and_cli(void)
{
    char *err = NULL, args[1024], out[160];
    snprintf(out, sizeof out, "%s/o.yaml", tmp);
    static const struct { const char *fit, *rows, *want; int rc; } bad[] = {
        {"dram.nosuch", "UBENCH-00*", "no value for dram.nosuch", 1},
        {"efficiency.dram,efficiency.dram", "UBENCH-00*", "given twice", 2},
        {"efficiency.dram,efficiency.dram_rw", "UBENCH-001", "at least as many rows", 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(args, sizeof args, "calibrate --hw configs/nvidia-a100-sxm-80gb.yaml --data "
                 "traces/validation/calibration.csv --fit %s --rows '%s' -o '%s'", bad[i].fit,
                 bad[i].rows, out);
        CHECK_EQ_INT(cli(args, &err), bad[i].rc);
        CHECK_STR_CONTAINS(err, bad[i].want);
        free(err);
        CHECK(!tu_exists(out));
    }
    snprintf(args, sizeof args, "calibrate --hw configs/nvidia-a100-sxm-80gb.yaml --data "
             "traces/validation/calibration.csv --fit efficiency.dram --rows 'UBENCH-00*' -o '%s'",
             out);
    CHECK_EQ_INT(cli(args, &err), 0);
    free(err);
    CHECK(tu_exists(out));
    /* leave one chip out over the stream rows: every chip with rows is held out once */
    CHECK_EQ_INT(cli("validate --data traces/validation/new-chips.csv --rows 'UBENCH-*' "
                     "--leave-one-chip-out --fit efficiency.dram", &err), 0);
    free(err);
    char p[160];
    snprintf(p, sizeof p, "%s/out.txt", tmp);
    char *txt = tu_read_file(p, NULL);
    CHECK_STR_CONTAINS(txt, "nvidia-h100-pcie");
    CHECK_STR_CONTAINS(txt, "nvidia-a100-pcie-40gb");
    CHECK_STR_CONTAINS(txt, "nvidia-l40 ");
    CHECK_STR_CONTAINS(txt, "nvidia-a40 ");
    free(txt);
    CHECK_EQ_INT(cli("validate --data traces/validation/new-chips.csv --leave-one-chip-out", &err), 2);
    free(err);
}

/* calibrate --stack: a stack's numbers over the rows that name it, on every
 * chip.  TensorRT-LLM 0.6's launch gap from its 7 fit rows comes back as
 * shipped (it was fitted so), and the fit does not raise the rms. */
static void fit_stack(void)
{
    char *err = NULL;
    CHECK_EQ_INT(cli("calibrate --stack trtllm-0.6 --data traces/validation/stacks/trtllm.csv --rows "
                     "TRTLLM06-021,TRTLLM06-027,TRTLLM06-028,TRTLLM08-001,TRTLLM08-004,TRTLLM08-010,"
                     "TRTLLM08-015 --fit stack.host.launch_gap_us", &err), 0);
    free(err);
    char p[160];
    snprintf(p, sizeof p, "%s/out.txt", tmp);
    char *txt = tu_read_file(p, NULL);
    CHECK(txt != NULL);
    double start = 0, fitted = 0, r0 = 0, r1 = 0;
    const char *k = txt ? strstr(txt, "stack.host.launch_gap_us") : NULL;
    CHECK(k != NULL && sscanf(k + strlen("stack.host.launch_gap_us"), "%lf %lf", &start, &fitted) == 2);
    const char *m = txt ? strstr(txt, "rms of log(predicted/measured): ") : NULL;
    CHECK(m != NULL && sscanf(m + strlen("rms of log(predicted/measured): "), "%lf -> %lf", &r0, &r1) == 2);
    printf("  calibrate --stack trtllm-0.6: launch gap %.3g -> %.3g us, rms %.4f -> %.4f\n", start, fitted, r0, r1);
    CHECK_NEAR_REL(start, 8.83, 1e-9);
    CHECK(fabs(fitted - start) < 0.5);
    CHECK(r1 <= r0 + 1e-9);
    free(txt);
    /* a chip's key needs --hw; -o is a chip's overlay; an unknown stack key */
    CHECK(cli("calibrate --stack trtllm-0.6 --data traces/validation/stacks/trtllm.csv --fit efficiency.dram",
              &err) != 0);
    CHECK_STR_CONTAINS(err, "a config key needs --hw");
    free(err);
    CHECK_EQ_INT(cli("calibrate --stack trtllm-0.6 --data traces/validation/stacks/trtllm.csv "
                     "--fit stack.host.launch_gap_us -o x.yaml", &err), 2);
    free(err);
    CHECK(cli("calibrate --stack trtllm-0.6 --data traces/validation/stacks/trtllm.csv "
              "--fit stack.attention.decode", &err) != 0);
    CHECK_STR_CONTAINS(err, "not a number stack trtllm-0.6 gives");
    free(err);
}

int main(void)
{
    if (chdir(STRATA_SOURCE_DIR) != 0 || tu_mkdtemp(tmp, sizeof tmp, "strata-calib") != 0)
        return 1;
    fit_a100();
    bad_and_cli();
    fit_stack();
    tu_rmtree(tmp);
    TEST_MAIN_END();
}
