/* test_determinism_run.c: `strata run` is deterministic.  A generated
 * Llama-2-7B decode trace and a prefill trace are each run twice on the
 * H100 config through the command line; the JSON and CSV reports of the
 * two runs must be byte-identical (and not empty).  So must two --out
 * folders (report.json with the what-if re-simulations, which run on two
 * threads, timeline.json, report.html and the plot data), on H100 and on a
 * TPU. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "util.h"

static char tmpdir[64];

static void check_same(const char *a, const char *b)
{
    size_t na, nb;
    char *x = tu_read_file(a, &na), *y = tu_read_file(b, &nb);
    CHECK(x != NULL);
    CHECK(y != NULL);
    if (x != NULL && y != NULL) {
        CHECK(na > 0);
        CHECK_EQ_INT(na, nb);
        int same = na == nb && memcmp(x, y, na) == 0;
        CHECK(same);
        if (!same)
            fprintf(stderr, "  ^ %s and %s differ\n", a, b);
        else
            printf("  %s == %s (%zu bytes)\n", a, b, na);
    }
    free(x);
    free(y);
}

static void run_twice(const char *label, const char *gen_args)
{
    char cmd[2048], trace[256];
    snprintf(trace, sizeof trace, "%s/%s.json", tmpdir, label);
    snprintf(cmd, sizeof cmd,
             "'%s' gen llm --model traces/models/llama-2-7b.json %s -o '%s' >/dev/null",
             STRATA_BINARY, gen_args, trace);
    int rc = tu_sh(cmd);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0)
        return;
    const char *runs[2] = {"a", "b"};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd,
                 "'%s' run --hw configs/nvidia-h100-sxm.yaml --trace '%s' "
                 "--json '%s/%s-%s.json' --csv '%s/%s-%s.csv' --quiet",
                 STRATA_BINARY, trace, tmpdir, label, runs[i], tmpdir, label, runs[i]);
        CHECK_EQ_INT(tu_sh(cmd), 0);
    }
    char a[256], b[256];
    printf("%s:\n", label);
    snprintf(a, sizeof a, "%s/%s-a.json", tmpdir, label);
    snprintf(b, sizeof b, "%s/%s-b.json", tmpdir, label);
    check_same(a, b);
    snprintf(a, sizeof a, "%s/%s-a.csv", tmpdir, label);
    snprintf(b, sizeof b, "%s/%s-b.csv", tmpdir, label);
    check_same(a, b);
}

static void out_twice(const char *label, const char *hw, const char *trace)
{
    char cmd[2048];
    const char *runs[2] = {"a", "b"};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd,
                 "STRATA_GNUPLOT=none '%s' run --hw %s --trace %s --out '%s/%s-%s' --quiet",
                 STRATA_BINARY, hw, trace, tmpdir, label, runs[i]);
        CHECK_EQ_INT(tu_sh(cmd), 0);
    }
    static const char *const files[] = {"report.json", "timeline.json", "report.html", "ops.csv",
                                        "plots/roofline.dat", "plots/stalls.dat",
                                        "plots/bandwidth.dat"};
    printf("%s --out:\n", label);
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        char a[512], b[512];
        snprintf(a, sizeof a, "%s/%s-a/%s", tmpdir, label, files[k]);
        snprintf(b, sizeof b, "%s/%s-b/%s", tmpdir, label, files[k]);
        check_same(a, b);
    }
}

/* err is all progress lines, each cleared: "\r  LINE...\r<spaces>\r", with what in it */
static int only_progress(const char *err, const char *what)
{
    size_t n = err != NULL ? strlen(err) : 0;
    if (n < 3 || err[0] != '\r' || err[n - 1] != '\r' || err[n - 2] != ' ' || strchr(err, '\n') != NULL)
        return 0;
    return strstr(err, what) != NULL;
}

/* The progress line (progress.h): forced with STRATA_PROGRESS=1 it is
 * drawn on stderr and cleared, and stdout is the same bytes as without
 * it; not forced, stderr is a file here, so nothing; with --quiet nothing. */
static void progress_line(void)
{
    char args[3][1024];
    snprintf(args[0], sizeof args[0], "run --hw configs/nvidia-h100-sxm.yaml --trace "
             "traces/examples/llama-2-7b-decode-b1-ctx2048.json");
    snprintf(args[1], sizeof args[1], "run --hw configs/nvidia-h100-sxm.yaml --trace "
             "traces/examples/llama-2-7b-decode-b1-ctx2048.json --out '%s/prog'", tmpdir);
    snprintf(args[2], sizeof args[2], "sweep --hw configs/nvidia-h100-sxm.yaml --trace "
             "traces/examples/llama-2-7b-decode-b1-ctx2048.json --vary dram.bandwidth=1TB/s,2TB/s");
    static const char *const what[3] = {"  simulating: 0 of 324 ops (0%), ", "  what-if 1 of 7: ",
                                        "  sweep: "};
    for (int i = 0; i < 3; i++) {
        char *out0, *err0, *out1, *err1;
        unsetenv("STRATA_PROGRESS");
        CHECK_EQ_INT(tu_run_strata(tmpdir, args[i], &out0, &err0), 0);
        setenv("STRATA_PROGRESS", "1", 1);
        CHECK_EQ_INT(tu_run_strata(tmpdir, args[i], &out1, &err1), 0);
        CHECK(out0 != NULL && out1 != NULL && out0[0] != '\0' && strcmp(out0, out1) == 0);
        CHECK(err0 != NULL && err0[0] == '\0');
        CHECK(only_progress(err1, what[i]));
        if (err1 != NULL && !only_progress(err1, what[i]))
            fprintf(stderr, "  stderr with STRATA_PROGRESS=1: '%s'\n", err1);
        free(out0);
        free(err0);
        free(out1);
        free(err1);
    }
    char *out, *err, q[1100];
    snprintf(q, sizeof q, "%s --quiet", args[0]);
    CHECK_EQ_INT(tu_run_strata(tmpdir, q, &out, &err), 0);
    CHECK(err != NULL && err[0] == '\0');
    free(out);
    free(err);
    unsetenv("STRATA_PROGRESS");
}

int main(void)
{
    if (tu_mkdtemp(tmpdir, sizeof tmpdir, "strata-det") != 0)
        return 1;
    progress_line();
    run_twice("decode", "--phase decode --context 512");
    run_twice("prefill", "--phase prefill --prompt 256");
    out_twice("h100", "configs/nvidia-h100-sxm.yaml", "traces/examples/llama-2-7b-decode-b1-ctx2048.json");
    out_twice("v5e", "configs/google-tpu-v5e.yaml", "traces/examples/mistral-7b-prefill-512.json");
    /* 64 devices: a TP 8 x DP 8 training step on the 16-node H100 cluster
     * (collectives, eight rings across nodes, per-device attribution) */
    char cmd[2048], trace[300];
    snprintf(trace, sizeof trace, "%s/tp8dp8.json", tmpdir);
    snprintf(cmd, sizeof cmd, "'%s' gen llm --model traces/models/llama-2-7b.json --phase train "
             "--batch 1 --prompt 128 --tp 8 --dp 8 -o '%s' > /dev/null", STRATA_BINARY, trace);
    CHECK_EQ_INT(tu_sh(cmd), 0);
    out_twice("64dev", "configs/systems/hgx-h100-x16-ndr.yaml", trace);
    tu_rmtree(tmpdir);
    TEST_MAIN_END();
}
