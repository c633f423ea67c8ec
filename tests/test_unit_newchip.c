/* test_unit_newchip.c: `strata new-chip` and the configs it made.
 *
 * For every chip config made from a spec file (configs/specs/NAME.yaml ->
 * configs/NAME.yaml): regenerating gives the shipped file byte for byte, and
 * the loaded config gives back the data sheet's peaks, bandwidths and sizes
 * exactly.  Every architecture family with a spec file is covered.  Bad
 * spec files are errors naming the key, with nothing written; figures in a
 * wrong unit are warnings that say so.  A spec with tdp_W gets a power
 * block from its family's energy defaults (docs/energy.md 'Estimated power
 * blocks'), one without none. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfg.h"
#include "spec.h"
#include "test.h"
#include "util.h"

static char tmp[64];

/* Data-sheet dtype key -> the config dtype its peak lands on. */
static enum dtype cfg_dtype(unsigned i)
{
    static const enum dtype m[SPEC_NDT] = {DT_MXFP4, DT_MXFP6, DT_FP8_E4M3, DT_INT8, DT_INT4,
                                           DT_FP16, DT_BF16, DT_TF32, DT_FP32, DT_FP64};
    return m[i];
}

static void check_chip(const char *spec_path, const char *name, char fams[][96], int *nfams,
                       int *npower)
{
    static struct spec s;
    struct diag d;
    memset(&d, 0, sizeof d);
    if (spec_load(spec_path, &s, &d) != 0) {
        diag_print(&d, stderr);
        CHECK(0);
        return;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    spec_write_config(&s, f, NULL, NULL);
    fclose(f);
    char shipped[300];
    snprintf(shipped, sizeof shipped, "configs/%s.yaml", name);
    size_t slen = 0;
    char *want = tu_read_file(shipped, &slen);
    int same = want != NULL && slen == len && memcmp(want, text, len) == 0;
    if (!same)
        fprintf(stderr, "  %s: regenerating from %s does not give the shipped file (run strata "
                        "new-chip --spec %s -o %s)\n", shipped, spec_path, spec_path, shipped);
    CHECK(same);
    free(want);
    free(text);

    struct hw_config c;
    if (tu_load_cfg(shipped, &c) != 0) {
        CHECK(0);
        return;
    }
    for (unsigned i = 0; i < SPEC_NDT; i++) {
        if (s.dense[i].present)
            CHECK_NEAR_REL(cfg_matrix_peak_flops(&c, cfg_dtype(i)), s.dense[i].num * 1e12, 1e-9);
        if (s.sparse[i].present && s.dense[i].present)
            CHECK_NEAR_REL(cfg_sparse_peak_flops(&c, cfg_dtype(i)), s.sparse[i].num * 1e12, 1e-9);
    }
    CHECK_NEAR_REL(cfg_vector_peak_flops(&c, DT_FP32), s.vector[8].num * 1e12, 1e-9);
    if (s.vector[9].present)
        CHECK_NEAR_REL(cfg_vector_peak_flops(&c, DT_FP64), s.vector[9].num * 1e12, 1e-9);
    CHECK_NEAR_REL(cfg_dram(&c)->bw_bytes_per_s, s.mem_bandwidth_GBps.num * 1e9, 1e-9);
    CHECK_NEAR_REL((double)cfg_dram(&c)->capacity_bytes, s.mem_capacity_GB.num * 1e9, 1e-9);
    if (s.l2_MiB.present)
        CHECK_NEAR_REL((double)cfg_first_cache(&c)->capacity_bytes, s.l2_MiB.num * 1048576.0, 1e-6);
    CHECK_NEAR_REL(c.clock_hz, s.boost_clock_MHz.num * 1e6, 1e-12);
    CHECK(c.units == (uint32_t)s.units.num);
    if (s.peer_links.present)
        CHECK_NEAR_REL(c.level[c.lv_peer].bw_bytes_per_s, s.peer_bandwidth_GBps.num * 1e9, 1e-9);
    /* energy on every chip whose data sheet gives its board power */
    CHECK(c.has_power == s.tdp_W.present);
    if (s.tdp_W.present && !c.has_power)
        fprintf(stderr, "  %s: tdp_W given but no power block\n", shipped);
    if (c.has_power) {
        CHECK_NEAR_REL(c.power_limit_w, s.tdp_W.num, 1e-12);
        CHECK(c.level[c.lv_dram].energy_pj_per_byte > 0);
        *npower += 1;
    }
    int seen = 0;
    for (int k = 0; k < *nfams; k++)
        seen |= strcmp(fams[k], s.architecture.str) == 0;
    if (!seen && *nfams < 32)
        snprintf(fams[(*nfams)++], 96, "%s", s.architecture.str);
}

static void test_shipped(void)
{
    DIR *dir = opendir("configs/specs");
    CHECK(dir != NULL);
    if (dir == NULL)
        return;
    char fams[32][96];
    int nfams = 0, nchips = 0, npower = 0;
    struct dirent *e;
    char names[64][128];
    int n = 0;
    while ((e = readdir(dir)) != NULL && n < 64) {
        size_t l = strlen(e->d_name);
        if (l > 5 && strcmp(e->d_name + l - 5, ".yaml") == 0)
            snprintf(names[n++], sizeof names[0], "%.*s", (int)(l - 5), e->d_name);
    }
    closedir(dir);
    for (int i = 0; i < n; i++) {
        char sp[256], cf[256];
        snprintf(sp, sizeof sp, "configs/specs/%s.yaml", names[i]);
        snprintf(cf, sizeof cf, "configs/%s.yaml", names[i]);
        if (!tu_exists(cf))
            continue; /* a spec whose family new-chip cannot write (Gaudi: docs/new-chip.md) */
        check_chip(sp, names[i], fams, &nfams, &npower);
        nchips++;
    }
    printf("  %d chips regenerated and checked, %d architecture families, %d with a power "
           "block\n", nchips, nfams, npower);
    CHECK(nchips >= 19);
    CHECK(npower >= nchips - 1); /* all but the A10G, whose board power AWS does not publish */
    static const char *const want[] = {"ampere-ga100", "ampere-ga102", "ada", "hopper",
                                       "blackwell", "orin", "thor", "cdna2", "cdna3"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int seen = 0;
        for (int k = 0; k < nfams; k++)
            seen |= strcmp(fams[k], want[i]) == 0;
        if (!seen)
            fprintf(stderr, "  no chip of family %s was checked\n", want[i]);
        CHECK(seen);
    }
}

/* A spec file in tmp (with a families/ folder copied from the real one). */
static void write_spec(const char *body)
{
    char p[160];
    snprintf(p, sizeof p, "%s/chip.yaml", tmp);
    tu_write_file(p, body);
}

static const char *const good =
    "name: {value: test-chip, source: \"t\"}\n"
    "chip: {value: Test, source: \"t\"}\n"
    "vendor: {value: nvidia, source: \"t\"}\n"
    "architecture: {value: hopper, source: \"t\"}\n"
    "units: {value: 100, source: \"t\"}\n"
    "boost_clock_MHz: {value: 1500, source: \"t\"}\n"
    "dense_TFLOPS:\n  bf16: {value: 600, source: \"t\"}\n"
    "vector_TFLOPS:\n  fp32: {value: 40, source: \"t\"}\n"
    "memory:\n  type: {value: HBM3, source: \"t\"}\n  capacity_GB: {value: 80, source: \"t\"}\n"
    "  bandwidth_GBps: {value: BW, source: \"t\"}\n"
    "host_link:\n  kind: {value: pcie, source: \"t\"}\n  gen: {value: 5, source: \"t\"}\n"
    "  lanes: {value: 16, source: \"t\"}\n";

static int newchip(const char *extra, char **err)
{
    char cmd[1024], ep[160];
    snprintf(ep, sizeof ep, "%s/err.txt", tmp);
    snprintf(cmd, sizeof cmd, "'%s' new-chip --spec '%s/chip.yaml' -o '%s/out.yaml' %s >/dev/null "
             "2>'%s'", STRATA_BINARY, tmp, tmp, extra, ep);
    int rc = tu_sh(cmd);
    *err = tu_read_file(ep, NULL);
    return rc;
}

static void test_bad(void)
{
    char cmd[512], out[160];
    snprintf(cmd, sizeof cmd, "cp -r configs/specs/families '%s/'", tmp);
    CHECK(tu_sh(cmd) == 0);
    snprintf(out, sizeof out, "%s/out.yaml", tmp);
    char *err = NULL;
    /* the good one, with a plausible bandwidth: written, no warning */
    char body[4096];
    const char *at = strstr(good, "BW");
    snprintf(body, sizeof body, "%.*s3350%s", (int)(at - good), good, at + 2);
    write_spec(body);
    CHECK(newchip("", &err) == 0);
    CHECK(err != NULL && strstr(err, "warning") == NULL);
    free(err);
    CHECK(tu_exists(out));
    struct hw_config c;
    CHECK(tu_load_cfg(out, &c) == 0);
    CHECK_NEAR_REL(cfg_matrix_peak_flops(&c, DT_BF16), 600e12, 1e-9);
    unlink(out);
    /* 3.35 where GB/s belong (TB/s given): a warning naming the likely mistake */
    snprintf(body, sizeof body, "%.*s3.35%s", (int)(at - good), good, at + 2);
    write_spec(body);
    CHECK(newchip("", &err) == 0);
    CHECK_STR_CONTAINS(err, "memory.bandwidth_GBps");
    CHECK_STR_CONTAINS(err, "1000x larger");
    free(err);
    unlink(out);
    /* errors: each names the key; nothing is written */
    static const struct { const char *from, *to, *want; } bad[] = {
        {"dense_TFLOPS:\n  bf16: {value: 600, source: \"t\"}\n", "", "dense_TFLOPS"},
        {"vector_TFLOPS:\n  fp32: {value: 40, source: \"t\"}\n", "vector_TFLOPS:\n  fp64: {value: 4, source: \"t\"}\n", "vector_TFLOPS.fp32"},
        {"units: {value: 100, source: \"t\"}", "units: {value: 100}", "source is missing"},
        {"units: {value: 100, source: \"t\"}", "units: 100", "expected {value"},
        {"units: {value: 100, source: \"t\"}", "unitz: {value: 100, source: \"t\"}", "unknown key"},
        {"architecture: {value: hopper", "architecture: {value: volta", "no family file"},
        {"boost_clock_MHz: {value: 1500", "boost_clock_MHz: {value: -5", "must be > 0"},
        {"  gen: {value: 5, source: \"t\"}\n", "", "host_link"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(body, sizeof body, "%.*s3350%s", (int)(at - good), good, at + 2);
        char *p = strstr(body, bad[i].from);
        CHECK(p != NULL);
        if (p == NULL)
            continue;
        char fixed[4096];
        snprintf(fixed, sizeof fixed, "%.*s%s%s", (int)(p - body), body, bad[i].to,
                 p + strlen(bad[i].from));
        write_spec(fixed);
        int rc = newchip("", &err);
        CHECK(rc == 1);
        CHECK_STR_CONTAINS(err, bad[i].want);
        CHECK_STR_CONTAINS(err, "chip.yaml");
        free(err);
        CHECK(!tu_exists(out));
    }
}

/* body: the good spec (a plausible bandwidth) with `from` replaced by `to` */
static void good_with(char *body, size_t n, const char *from, const char *to)
{
    char base[4096];
    const char *at = strstr(good, "BW");
    snprintf(base, sizeof base, "%.*s3350%s", (int)(at - good), good, at + 2);
    char *p = strstr(base, from);
    CHECK(p != NULL);
    if (p == NULL) {
        snprintf(body, n, "%s", base);
        return;
    }
    snprintf(body, n, "%.*s%s%s", (int)(p - base), base, to, p + strlen(from));
}

static const char *const units_line = "units: {value: 100, source: \"t\"}";

/* A spec with tdp_W: a power block whose pipes draw the family's share of tdp - idle over
 * the units' cycles at the boost clock; without tdp_W none; an unknown memory type a
 * warning and no DRAM energy; the config runs and reports its energy. */
static void test_power(void)
{
    char body[4096], out[160], sp[160];
    snprintf(out, sizeof out, "%s/out.yaml", tmp);
    snprintf(sp, sizeof sp, "%s/chip.yaml", tmp);
    char *err = NULL;
    static const struct { const char *extra; double idle; } cases[] = {
        {"\ntdp_W: {value: 700, source: \"t\"}", -1},
        {"\ntdp_W: {value: 700, source: \"t\"}\nidle_W: {value: 100, source: \"t\"}", 100},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char to[256];
        snprintf(to, sizeof to, "%s%s", units_line, cases[i].extra);
        good_with(body, sizeof body, units_line, to);
        write_spec(body);
        CHECK(newchip("", &err) == 0);
        CHECK(err != NULL && strstr(err, "warning") == NULL);
        free(err);
        static struct spec s;
        struct diag d;
        memset(&d, 0, sizeof d);
        CHECK(spec_load(sp, &s, &d) == 0);
        struct hw_config c;
        CHECK(tu_load_cfg(out, &c) == 0);
        CHECK(c.has_power);
        const double idle = cases[i].idle > 0 ? cases[i].idle : s.f_idle_frac.num * 700;
        CHECK(s.f_matrix_share.present && s.f_vector_share.present);
        CHECK_NEAR_REL(c.idle_w, idle, 1e-9);
        CHECK_NEAR_REL(c.power_limit_w, 700, 1e-12);
        CHECK_NEAR_REL(c.matrix_pj_per_cycle, s.f_matrix_share.num * (700 - idle) / (100 * 1.5e9) * 1e12,
                       1e-9);
        CHECK_NEAR_REL(c.vector_pj_per_cycle, s.f_vector_share.num * (700 - idle) / (100 * 1.5e9) * 1e12,
                       1e-9);
        CHECK_NEAR_REL(c.level[c.lv_dram].energy_pj_per_byte, s.f_dram_energy.num, 1e-12);
        CHECK(c.level[c.lv_dram].energy_pj_per_byte > 0);
        CHECK_NEAR_REL(cfg_first_cache(&c)->energy_pj_per_byte, s.f_l2_energy.num, 1e-12);
    }
    /* a run on it reports energy and power */
    char args[512], *o = NULL;
    snprintf(args, sizeof args, "run --hw '%s' --op gemm:m=2048,n=2048,k=2048", out);
    CHECK(tu_run_strata(tmp, args, &o, &err) == 0);
    CHECK_STR_CONTAINS(o, "energy");
    CHECK_STR_CONTAINS(o, "W a device on average");
    free(o);
    free(err);
    unlink(out);
    /* no tdp_W: no power block, no energy lines */
    good_with(body, sizeof body, units_line, units_line);
    write_spec(body);
    CHECK(newchip("", &err) == 0);
    free(err);
    char *text = tu_read_file(out, NULL);
    CHECK(text != NULL && strstr(text, "power:") == NULL && strstr(text, "energy_pJ") == NULL);
    free(text);
    unlink(out);
    /* a memory type the family has no energy for: a warning naming it, the config written
     * with its power block but no DRAM energy */
    char to[256];
    snprintf(to, sizeof to, "%s\ntdp_W: {value: 700, source: \"t\"}", units_line);
    good_with(body, sizeof body, units_line, to);
    char *hb = strstr(body, "type: {value: HBM3,");
    CHECK(hb != NULL);
    if (hb != NULL)
        memcpy(hb, "type: {value: HBM9,", 19);
    write_spec(body);
    CHECK(newchip("", &err) == 0);
    CHECK_STR_CONTAINS(err, "chip.yaml:13: warning: memory.type");
    CHECK_STR_CONTAINS(err, "no dram_energy_pJ_per_byte for 'HBM9'");
    free(err);
    struct hw_config c;
    CHECK(tu_load_cfg(out, &c) == 0);
    CHECK(c.has_power);
    CHECK(c.level[c.lv_dram].energy_pj_per_byte == 0);
    unlink(out);
}

/* Bad power figures: each an error `file:line: field: what`, nothing written. */
static void test_power_bad(void)
{
    char body[4096], out[160], to[512];
    snprintf(out, sizeof out, "%s/out.yaml", tmp);
    char *err = NULL;
    static const struct { const char *extra, *want; } bad[] = {
        {"\ntdp_W: {value: 700, source: \"t\"}\nidle_W: {value: -5, source: \"t\"}",
         "chip.yaml:7: idle_W: must be > 0"},
        {"\ntdp_W: {value: 700, source: \"t\"}\nidle_W: {value: 700, source: \"t\"}",
         "chip.yaml:7: idle_W: 700 W is not below tdp_W 700 W"},
        {"\nidle_W: {value: 50, source: \"t\"}", "chip.yaml:6: idle_W: needs tdp_W"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(to, sizeof to, "%s%s", units_line, bad[i].extra);
        good_with(body, sizeof body, units_line, to);
        write_spec(body);
        CHECK(newchip("", &err) == 1);
        CHECK_STR_CONTAINS(err, bad[i].want);
        free(err);
        CHECK(!tu_exists(out));
    }
    /* the family's shares and idle fraction: the family file's line and key */
    char fam[200];
    snprintf(fam, sizeof fam, "%s/families/hopper.yaml", tmp);
    char *orig = tu_read_file(fam, NULL);
    CHECK(orig != NULL);
    if (orig == NULL)
        return;
    snprintf(to, sizeof to, "%s\ntdp_W: {value: 700, source: \"t\"}", units_line);
    good_with(body, sizeof body, units_line, to);
    write_spec(body);
    static const struct { const char *key, *value, *want; } fbad[] = {
        {"matrix_pipe_share_of_dynamic", "1.5", "matrix_pipe_share_of_dynamic: must be in (0, 1]"},
        {"vector_pipe_share_of_dynamic", "0", "vector_pipe_share_of_dynamic: must be in (0, 1]"},
        {"idle_fraction_of_tdp", "1", "idle_fraction_of_tdp: must be in (0, 1)"},
    };
    for (size_t i = 0; i < sizeof fbad / sizeof fbad[0]; i++) {
        char edited[16384];
        char key[80];
        snprintf(key, sizeof key, "\n%s: {value: ", fbad[i].key);
        const char *k = strstr(orig, key);
        CHECK(k != NULL);
        if (k == NULL)
            continue;
        const char *v = k + strlen(key), *comma = strchr(v, ',');
        snprintf(edited, sizeof edited, "%.*s%s%s", (int)(v - orig), orig, fbad[i].value, comma);
        tu_write_file(fam, edited);
        CHECK(newchip("", &err) == 1);
        CHECK_STR_CONTAINS(err, "hopper.yaml:");
        CHECK_STR_CONTAINS(err, fbad[i].want);
        free(err);
        CHECK(!tu_exists(out));
    }
    tu_write_file(fam, orig);
    free(orig);
}

int main(void)
{
    if (chdir(STRATA_SOURCE_DIR) != 0 || tu_mkdtemp(tmp, sizeof tmp, "strata-newchip") != 0)
        return 1;
    test_shipped();
    test_bad();
    test_power();
    test_power_bad();
    tu_rmtree(tmp);
    TEST_MAIN_END();
}
