/* test_golden_plots.c: `strata plot` on a fixed saved report
 * (tests/data/report-small.json) writes the plot data files of
 * tests/golden/plots/ byte for byte.  The report is fixed, so only a change
 * to the plot writer moves them; after a deliberate change run
 *     STRATA_GOLDEN_REGEN=1 build/test_golden_plots
 * and commit the new files. */
#include "test.h"
#include "util.h"

static const char *const files[] = {"roofline.dat", "stalls.dat", "bandwidth.dat"};

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
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    tu_sh(cmd);
    TEST_MAIN_END();
}
