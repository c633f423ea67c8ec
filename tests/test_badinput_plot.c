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

/* Every `from` in file src replaced by `to`, written back to src. */
static void replace_all(const char *src, const char *from, const char *to)
{
    char *full = tu_read_file(src, NULL);
    CHECK(full != NULL && strstr(full, from) != NULL);
    if (full == NULL)
        return;
    size_t cap = strlen(full) * (strlen(to) + 1) + 1, n = 0;
    char *out = malloc(cap);
    for (const char *s = full, *at; (at = strstr(s, from)) != NULL || *s; s = at + strlen(from)) {
        if (at == NULL) {
            n += (size_t)snprintf(out + n, cap - n, "%s", s);
            break;
        }
        n += (size_t)snprintf(out + n, cap - n, "%.*s%s", (int)(at - s), s, to);
    }
    out[n] = '\0';
    tu_write_file(src, out);
    free(out);
    free(full);
}

/* 1 if file path contains needle (an unreadable file counts as containing it) */
static int file_has(const char *path, const char *needle)
{
    char *t = tu_read_file(path, NULL);
    int has = t == NULL || strstr(t, needle) != NULL;
    if (has)
        fprintf(stderr, "  %s contains %s\n", path, needle);
    free(t);
    return has;
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

    /* report strings reach the page and the gnuplot files only escaped: a crafted kind, bound
     * or level name runs no script in the browser and no command in gnuplot */
    {
        char rep[256], cmd[2048], hp[512], gp[512];
        snprintf(rep, sizeof rep, "%s", variant(good, "crafted.json", "\"strata_report\"",
                                                 "\"strata_report\""));
        replace_all(rep, "\"kind\": \"memcpy\"", "\"kind\": \"<script>alert(1)</script>\"");
        replace_all(rep, "\"kind\": \"gemm\"", "\"kind\": \"<script>alert(1)</script>\"");
        replace_all(rep, "\"bound\": \"pcie\"", "\"bound\": \"<img src=x onerror=alert(2)>\"");
        replace_all(rep, "\"bound\": \"launch\"", "\"bound\": \"<img src=x onerror=alert(2)>\"");
        replace_all(rep, "\"dram\": ", "\"d<i>\\\"; system(\\\"touch PWN\\\") #`id`\": ");
        snprintf(cmd, sizeof cmd, "timeout 20 '%s' plot --report '%s' --out '%s' >/dev/null 2>&1",
                 STRATA_BINARY, rep, out);
        int st = system(cmd);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        snprintf(hp, sizeof hp, "%s/report.html", out);
        CHECK(!file_has(hp, "<script>alert"));
        CHECK(!file_has(hp, "<img"));
        CHECK(!file_has(hp, "<i>"));
        CHECK(!file_has(hp, "\"; system"));
        static const char *const files[] = {"roofline.gp", "roofline.dat", "stalls.gp", "stalls.dat",
                                            "bandwidth.gp", "bandwidth.dat"};
        for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
            snprintf(gp, sizeof gp, "%s/plots/%s", out, files[k]);
            CHECK(!file_has(gp, "system("));
            CHECK(!file_has(gp, "`"));
            CHECK(!file_has(gp, "<i>"));
        }
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", out);
        tu_sh(cmd);
    }

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
