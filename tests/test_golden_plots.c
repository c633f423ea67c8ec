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

/* The roofline's op labels in report.html overlap no other (issue 33: two
 * ops at one place printed their names on top of each other): each label's
 * box, about 6 px a character and 11 px high at font-size 10, from the
 * SVG's <text class="oplabel" x y>. */
static void check_label_overlap(const char *dir, const char *hw, const char *trace, int min_labels)
{
    char cmd[1400], path[300];
    snprintf(cmd, sizeof cmd, "STRATA_GNUPLOT=none '%s' run --hw %s --trace '%s' --out '%s/lab' >/dev/null",
             STRATA_BINARY, hw, trace, dir);
    CHECK_EQ_INT(tu_sh(cmd), 0);
    snprintf(path, sizeof path, "%s/lab/report.html", dir);
    char *h = tu_read_file(path, NULL);
    CHECK(h != NULL);
    double box[16][4];
    int n = 0;
    for (const char *p = h; p != NULL && n < 16 && (p = strstr(p, "class=\"oplabel\"")) != NULL; p++) {
        double x, y;
        const char *gt = strchr(p, '>'), *end = gt ? strstr(gt, "</text>") : NULL;
        if (gt == NULL || end == NULL || sscanf(p, "class=\"oplabel\" x=\"%lf\" y=\"%lf\"", &x, &y) != 2)
            break;
        double w = 6.0 * (double)(end - gt - 1);
        box[n][0] = x;
        box[n][1] = y - 9;
        box[n][2] = x + w;
        box[n][3] = y + 2;
        n++;
    }
    free(h);
    printf("  %s on %s: %d op labels on the roofline\n", trace, hw, n);
    CHECK(n >= min_labels);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            CHECK(!(box[i][0] < box[j][2] && box[j][0] < box[i][2] && box[i][1] < box[j][3] &&
                    box[j][1] < box[i][3]));
    snprintf(cmd, sizeof cmd, "rm -rf '%s/lab'", dir);
    tu_sh(cmd);
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
    check_label_overlap(dir, "configs/nvidia-h100-sxm.yaml", "traces/examples/llama-2-7b-decode-b1-ctx2048.json", 3);
    check_label_overlap(dir, "configs/nvidia-a100-sxm-80gb.yaml", "traces/examples/mistral-7b-prefill-512.json", 3);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    tu_sh(cmd);
    TEST_MAIN_END();
}
