/* test_golden_plots.c: `strata plot` on a fixed saved report
 * (tests/data/report-small.json) writes the plot data files of
 * tests/golden/plots/ byte for byte.  The report is fixed, so only a change
 * to the plot writer moves them; after a deliberate change run
 *     STRATA_GOLDEN_REGEN=1 build/test_golden_plots
 * and commit the new files.
 *
 * Then what the plots must show (issue 16.6): gnuplot text without enhanced
 * mode, the chip, dtype and workload in titles, a roof per compute pipe and
 * dtype the run used, no empty legend entries, HTML ticks at round values
 * with units and tooltips in engineering notation, and measured-only ops in
 * a "measured" category of their own. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "util.h"

static const char *const files[] = {"roofline.dat", "stalls.dat", "bandwidth.dat"};

/* Is the tick label (number and optional unit) a round value: a multiple of
 * a 1, 2 or 5 x 10^n step, so at most two significant digits (not 232.4)? */
static int round_tick(const char *t)
{
    double v = strtod(t, NULL);
    if (v == 0)
        return 1;
    double m = v / pow(10, floor(log10(v))) * 10;
    return fabs(m - round(m)) < 1e-6;
}

static void check_plot_points(const char *dir)
{
    char cmd[1024], p[256];
    /* a trace of a bf16 GEMM, an fp32 elementwise op and a measured-only op */
    snprintf(p, sizeof p, "%s/t.json", dir);
    tu_write_file(p, "{\"strata_trace\": 1, \"ops\": [\n"
                     "{\"id\": \"mm_0\", \"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 4096, \"n\": 4096, \"k\": 4096},\n"
                     "{\"id\": \"add_1\", \"kind\": \"elementwise\", \"dtype\": \"fp32\", \"elements\": 16777216, \"deps\": [\"mm_0\"]},\n"
                     "{\"id\": \"nccl_ar\", \"kind\": \"elementwise\", \"dtype\": \"bf16\", \"elements\": 1, \"fixed_s\": 0.001, \"deps\": [\"add_1\"]}]}\n");
    snprintf(cmd, sizeof cmd, "STRATA_GNUPLOT=none '%s' run --hw configs/nvidia-h100-sxm.yaml --trace '%s' "
             "--out '%s/pp' > '%s/pp.txt'", STRATA_BINARY, p, dir, dir);
    CHECK_EQ_INT(tu_sh(cmd), 0);
    snprintf(p, sizeof p, "%s/pp/plots/roofline.gp", dir);
    char *gp = tu_read_file(p, NULL);
    CHECK_STR_CONTAINS(gp, "set terminal pngcairo noenhanced");
    CHECK_STR_CONTAINS(gp, "set terminal svg noenhanced");
    CHECK_STR_CONTAINS(gp, "t.json on nvidia-h100-sxm");   /* workload and chip */
    CHECK_STR_CONTAINS(gp, "roofline (bf16 peak");         /* dtype */
    CHECK_STR_CONTAINS(gp, "bf16 matrix 989 TFLOP/s");     /* a roof per pipe and dtype used */
    CHECK_STR_CONTAINS(gp, "fp32 vector 67 TFLOP/s");
    CHECK(gp == NULL || strstr(gp, "ops at registers") == NULL); /* no empty legend entry */
    free(gp);
    snprintf(p, sizeof p, "%s/pp/plots/stalls.gp", dir);
    gp = tu_read_file(p, NULL);
    CHECK_STR_CONTAINS(gp, "title \"measured\"");
    CHECK(gp == NULL || strstr(gp, "title \"registers\"") == NULL);
    free(gp);
    snprintf(p, sizeof p, "%s/pp.txt", dir);
    char *txt = tu_read_file(p, NULL);
    CHECK_STR_CONTAINS(txt, "measured ");                   /* its own category in the text */
    free(txt);
    snprintf(p, sizeof p, "%s/pp/report.json", dir);
    char *js = tu_read_file(p, NULL);
    CHECK_STR_CONTAINS(js, "\"measured_s\":\t0.001");
    free(js);
    snprintf(p, sizeof p, "%s/pp/report.html", dir);
    char *h = tu_read_file(p, NULL);
    CHECK(h != NULL);
    if (h == NULL)
        return;
    /* every tick label at a round value; no 1e+12-style numbers anywhere in the plots */
    int ticks = 0;
    for (const char *q = strstr(h, "text-anchor=\"end\">"); q != NULL;
         q = strstr(q + 1, "text-anchor=\"end\">")) {
        const char *t = q + strlen("text-anchor=\"end\">");
        if (!round_tick(t)) {
            fprintf(stderr, "  tick label not at a round value: %.20s\n", t);
            CHECK(0);
        }
        ticks++;
    }
    CHECK(ticks >= 10);
    CHECK_STR_CONTAINS(h, ">1 TFLOP/s<");
    const char *svg = strstr(h, "<svg");
    CHECK(svg != NULL && strstr(svg, "e+") == NULL);
    CHECK_STR_CONTAINS(h, "FLOP/B, ");                      /* tooltips in engineering notation */
    free(h);
}

int main(void)
{
    char dir[64] = "/tmp/strata-gp-XXXXXX", cmd[1024], got[256], want[256];
    CHECK(mkdtemp(dir) != NULL);
    setenv("STRATA_GNUPLOT", "none", 1); /* data only: fast and the same everywhere */
    snprintf(cmd, sizeof cmd, "'%s' plot --report tests/data/report-small.json --out '%s/out' >/dev/null",
             STRATA_BINARY, dir);
    CHECK_EQ_INT(tu_sh(cmd), 0);
    int regen = getenv("STRATA_GOLDEN_REGEN") != NULL;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(got, sizeof got, "%s/out/plots/%s", dir, files[i]);
        snprintf(want, sizeof want, "tests/golden/plots/%s", files[i]);
        char *g = tu_read_file(got, NULL);
        CHECK(g != NULL);
        if (g == NULL)
            continue;
        if (regen) {
            tu_write_file(want, g);
            printf("rewrote %s\n", want);
        }
        char *w = tu_read_file(want, NULL);
        CHECK(w != NULL);
        if (w != NULL && strcmp(g, w) != 0) {
            CHECK(0);
            fprintf(stderr, "  %s differs from %s; after a deliberate change: "
                            "STRATA_GOLDEN_REGEN=1 build/test_golden_plots\n", got, want);
        }
        free(g);
        free(w);
    }
    snprintf(got, sizeof got, "%s/out/report.html", dir);
    char *h = tu_read_file(got, NULL);
    CHECK_STR_CONTAINS(h, "id=\"total-time\"");
    CHECK_STR_CONTAINS(h, "would cut at most"); /* a verdict from the what-if runs */
    free(h);
    /* With gnuplot installed, each plot is rendered to PNG and SVG, also
     * into a folder whose name holds a quote (no shell in between). */
    if (tu_sh("command -v gnuplot >/dev/null 2>&1 || command -v gnuplot-nox >/dev/null 2>&1") == 0) {
        unsetenv("STRATA_GNUPLOT");
        snprintf(cmd, sizeof cmd,
                 "'%s' plot --report tests/data/report-small.json --out \"%s/it's\" >/dev/null",
                 STRATA_BINARY, dir);
        CHECK_EQ_INT(tu_sh(cmd), 0);
        static const char *const names[] = {"roofline", "stalls", "bandwidth"};
        for (size_t i = 0; i < 3; i++) {
            size_t n = 0;
            snprintf(got, sizeof got, "%s/it's/plots/%s.png", dir, names[i]);
            char *png = tu_read_file(got, &n);
            CHECK(png != NULL && n > 1000 && memcmp(png, "\x89PNG", 4) == 0);
            free(png);
            snprintf(got, sizeof got, "%s/it's/plots/%s.svg", dir, names[i]);
            char *svg = tu_read_file(got, &n);
            CHECK(svg != NULL && strstr(svg, "<svg") != NULL);
            free(svg);
        }
        snprintf(got, sizeof got, "%s/it's/plots/README.txt", dir);
        CHECK(access(got, F_OK) != 0); /* only written when rendering failed */
    } else {
        printf("  gnuplot not installed: rendering not checked\n");
    }
    check_plot_points(dir);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    tu_sh(cmd);
    TEST_MAIN_END();
}
