/* test_badinput_plot.c: `strata plot` on inputs that are not a usable
 * report, or into a folder it cannot write: exit 1, a message naming the
 * file, and no report.html or plots left behind. */
#include <sys/stat.h>

#include "test.h"
#include "util.h"

static char dir[64] = "/tmp/strata-bp-XXXXXX";

static void expect_fail(const char *name, const char *report, const char *out, const char *needle)
{
    char cmd[2048], errp[256];
    snprintf(errp, sizeof errp, "%s/err.txt", dir);
    /* a bounded run: a plot that never ends is a failure, not a hung test */
    snprintf(cmd, sizeof cmd, "timeout 20 '%s' plot --report '%s' --out '%s' >/dev/null 2>'%s'", STRATA_BINARY,
             report, out, errp);
    int st = system(cmd);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1);
    char *err = tu_read_file(errp, NULL);
    CHECK_STR_CONTAINS(err, needle);
    if (err && !strstr(err, needle))
        fprintf(stderr, "  ^ case %s\n", name);
    free(err);
    char p[512];
    snprintf(p, sizeof p, "%s/report.html", out);
    CHECK(!tu_exists(p));
    snprintf(p, sizeof p, "%s/plots/stalls.dat", out);
    CHECK(!tu_exists(p));
}

/* The good report with its first `from` replaced by `to`, written to dir/name; returns the path
 * (static). */
static const char *variant(const char *good, const char *name, const char *from, const char *to)
{
    static char path[256];
    char *full = tu_read_file(good, NULL);
    CHECK(full != NULL);
    char *at = full ? strstr(full, from) : NULL;
    CHECK(at != NULL);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (at != NULL) {
        size_t n = strlen(full) + strlen(to) + 1;
        char *out = malloc(n);
        snprintf(out, n, "%.*s%s%s", (int)(at - full), full, to, at + strlen(from));
        tu_write_file(path, out);
        free(out);
    }
    free(full);
    return path;
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    setenv("STRATA_GNUPLOT", "none", 1);
    char p[320], out[256], good[] = "tests/data/report-small.json";
    snprintf(out, sizeof out, "%s/out", dir);

    snprintf(p, sizeof p, "%s/trace.json", dir);
    tu_write_file(p, "{\"strata_trace\": 1, \"ops\": []}\n");
    expect_fail("not a report", p, out, "not a strata report");

    snprintf(p, sizeof p, "%s/v2.json", dir);
    tu_write_file(p, "{\"strata_report\": 2, \"ops\": []}\n");
    expect_fail("version", p, out, "incompatible report version");

    char *full = tu_read_file(good, NULL);
    CHECK(full != NULL);
    if (full != NULL) {
        full[strlen(full) / 2] = '\0';
        snprintf(p, sizeof p, "%s/cut.json", dir);
        tu_write_file(p, full);
        expect_fail("truncated", p, out, p);
        free(full);
    }

    snprintf(p, sizeof p, "%s/ops-not-array.json", dir);
    tu_write_file(p, "{\"strata_report\": 1,\n \"ops\": 3}\n");
    expect_fail("ops type", p, out, ":2: ops");

    /* a number too large for a double reads as infinity: refused with its line */
    snprintf(p, sizeof p, "%s/inf.json", dir);
    tu_write_file(p, "{\"strata_report\": 1, \"ops\": [],\n \"total_time_s\": 1e400}\n");
    expect_fail("infinite", p, out, ":2: total_time_s: not a finite number");

    /* absurd but finite roofline ranges: refused with their line, nothing written (the
     * log-axis ticks once looped until memory ran out) */
    expect_fail("huge peak", variant(good, "peak-huge.json", "\"bf16\": 989429760000000", "\"bf16\": 1e308"),
                out, ":842: matrix_peak_flops.bf16: ");
    expect_fail("tiny peak", variant(good, "peak-tiny.json", "\"bf16\": 989429760000000", "\"bf16\": 5e-324"),
                out, ":842: matrix_peak_flops.bf16: ");
    expect_fail("huge bandwidth",
                variant(good, "bw-huge.json", "\"dram\": 3350000000000", "\"dram\": 1e308"), out,
                ":856: bandwidth_bytes_per_s.dram: ");
    expect_fail("tiny bandwidth",
                variant(good, "bw-tiny.json", "\"dram\": 3350000000000", "\"dram\": 5e-324"), out,
                ":856: bandwidth_bytes_per_s.dram: ");
    snprintf(p, sizeof p, "%s/plots", out);
    CHECK(!tu_exists(p));

    /* an output folder under a regular file cannot be created */
    snprintf(p, sizeof p, "%s/afile", dir);
    tu_write_file(p, "x");
    char bad_out[300];
    snprintf(bad_out, sizeof bad_out, "%s/afile/out", dir);
    expect_fail("unwritable out", good, bad_out, bad_out);

    expect_fail("missing report", "/nonexistent/report.json", out, "/nonexistent/report.json");

    /* strata run --out into a folder that cannot be created: exit 1, nothing written */
    char cmd0[2048], errp[300];
    snprintf(errp, sizeof errp, "%s/err2.txt", dir);
    snprintf(cmd0, sizeof cmd0,
             "'%s' run --hw configs/nvidia-h100-sxm.yaml --trace traces/examples/two-streams.json "
             "--out '%s' >/dev/null 2>'%s'",
             STRATA_BINARY, bad_out, errp);
    int st = system(cmd0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1);
    char *err = tu_read_file(errp, NULL);
    CHECK_STR_CONTAINS(err, bad_out);
    free(err);

    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    tu_sh(cmd);
    TEST_MAIN_END();
}
