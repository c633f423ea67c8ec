/* test_cli_sweep.c: config overrides (--set, overlays) and `strata sweep`.
 *
 * --set: values land in the struct in SI units, pass the same checks as the
 * YAML, and errors name the override; the variant is named.  sweep: ranges
 * expand as documented; one sweep gives byte-identical CSVs single-threaded,
 * threaded, sharded and merged, and under mpirun (when strata-mpi is built);
 * bad input writes nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cfg.h"
#include "sweep.h"
#include "test.h"
#include "util.h"

#define H100 "configs/nvidia-h100-sxm.yaml"

static char tmp[64];

static int load_set(const char *const *kv, unsigned n, struct hw_config *h, struct diag *d)
{
    struct cfg_sets s;
    memset(&s, 0, sizeof s);
    memset(d, 0, sizeof *d);
    for (unsigned i = 0; i < n; i++)
        if (cfg_sets_add(&s, kv[i], "--set", d) != 0)
            return -1;
    return tu_load_chip(H100, &s, h, d);
}

static void test_set(void)
{
    struct hw_config base, h;
    struct diag d;
    CHECK(tu_load_cfg(H100, &base) == 0);
    const char *ok[] = {"dram.bandwidth=4.8TB/s", "l2.capacity=100MiB", "clock=1.98GHz",
                        "smem.bandwidth=64B/clk", "launch.kernel_overhead=1us",
                        "dram.efficiency.bandwidth_fraction=0.9",
                        "compute.matrix_flops_per_cycle_per_unit.fp8_e4m3=16384"};
    CHECK(load_set(ok, 7, &h, &d) == 0);
    CHECK_NEAR_REL(cfg_dram(&h)->bw_bytes_per_s, 4.8e12, 1e-12);
    CHECK(cfg_first_cache(&h)->capacity_bytes == 100u * 1048576u);
    CHECK_NEAR_REL(h.clock_hz, 1.98e9, 1e-12);
    CHECK_NEAR_REL(cfg_smem(&h)->bw_bytes_per_cycle, 64, 1e-12);
    CHECK(h.launch_overhead_ps == 1000000);
    CHECK_NEAR_REL(cfg_dram(&h)->eff_bw, 0.9, 1e-12);
    CHECK_NEAR_REL(h.matrix_flops_per_cycle[DT_FP8_E4M3], 16384, 1e-12);
    /* what was not set is as in the file */
    CHECK(cfg_dram(&h)->capacity_bytes == cfg_dram(&base)->capacity_bytes);
    CHECK_NEAR_REL(h.matrix_flops_per_cycle[DT_BF16], base.matrix_flops_per_cycle[DT_BF16], 0);
    CHECK_STR_CONTAINS(h.variant, "nvidia-h100-sxm[dram.bandwidth=4.8TB/s,");
    CHECK(strcmp(cfg_label(&base), "nvidia-h100-sxm") == 0);
    /* the same number as the file's own unit gives the same config */
    const char *a[] = {"dram.bandwidth=3350GB/s"}, *b[] = {"dram.bandwidth_GBps=3350"};
    struct hw_config ha, hb;
    CHECK(load_set(a, 1, &ha, &d) == 0 && load_set(b, 1, &hb, &d) == 0);
    CHECK(cfg_dram(&ha)->bw_bytes_per_s == cfg_dram(&base)->bw_bytes_per_s);
    CHECK(cfg_dram(&hb)->bw_bytes_per_s == cfg_dram(&base)->bw_bytes_per_s);

    /* relative values scale what the file (and the sets before) give, exactly, under any
     * unit suffix, a whole per-dtype table at once */
    const char *rel[] = {"dram.bandwidth=x2", "smem.bandwidth=x0.5", "clock=x2",
                         "compute.matrix_flops_per_cycle_per_unit=x2"};
    CHECK(load_set(rel, 4, &h, &d) == 0);
    CHECK(cfg_dram(&h)->bw_bytes_per_s == 2 * cfg_dram(&base)->bw_bytes_per_s);
    CHECK(cfg_smem(&h)->bw_bytes_per_cycle == 0.5 * cfg_smem(&base)->bw_bytes_per_cycle);
    CHECK(h.clock_hz == 2 * base.clock_hz);
    for (unsigned t = 0; t < DT_COUNT; t++)
        CHECK(h.matrix_flops_per_cycle[t] == 2 * base.matrix_flops_per_cycle[t]);
    CHECK(h.vector_flops_per_cycle[DT_FP32] == base.vector_flops_per_cycle[DT_FP32]);
    const char *then[] = {"dram.bandwidth=4TB/s", "dram.bandwidth=x2"};   /* not replaced */
    CHECK(load_set(then, 2, &h, &d) == 0);
    CHECK_NEAR_REL(cfg_dram(&h)->bw_bytes_per_s, 8e12, 1e-12);
    const char *other[] = {"l2.latency=x3", "compute.units=x0.5"};
    CHECK(load_set(other, 2, &h, &d) == 0);
    CHECK(h.units == base.units / 2);

    /* errors: each names the override and says what is wrong */
    static const struct { const char *kv, *want; } bad[] = {
        {"dram.bandwidth=100MiB", "expects a bandwidth, got a size"},
        {"dram.bandwidth=4800", "needs a unit"},
        {"foo.bandwidth=1TB/s", "neither a level of this chip nor a section"},
        {"dram.bandwith=1TB/s", "no key 'bandwith'"},
        {"l2.capacity=0MiB", "must be between"},
        {"compute.units=0", "must be between 1"},
        {"compute.units=2.5", "whole number"},
        {"dram.efficiency.bandwidth_fraction=1.5", "must be in"},
        {"compute.matrix_flops_per_cycle_per_unit.fp9=1", "unknown dtype"},
        {"compute.unitz=4", "unknown key"},
        {"name=x", "cannot be set"},
        {"clock=fast", "not a number with a unit"},
        {"dram.bandwidth=x0", "not a number with a unit"},
        {"collectives.hop_latency_scale=x2", "gives no value"},
        {"compute.units=x0.3", "whole number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *kv[] = {bad[i].kv};
        int rc = load_set(kv, 1, &h, &d);
        CHECK(rc != 0);
        if (rc == 0)
            continue;
        char where[160];
        snprintf(where, sizeof where, "--set %s", bad[i].kv);
        CHECK(strcmp(d.file, where) == 0 || strcmp(d.file, "--set") == 0);
        CHECK_STR_CONTAINS(d.msg, bad[i].want);
        CHECK(d.line == 0);
    }
    const char *bad_syntax[] = {"=3", "dram=", "nokeyvalue"};
    struct cfg_sets s;
    memset(&s, 0, sizeof s);
    for (int i = 0; i < 3; i++)
        CHECK(cfg_sets_add(&s, bad_syntax[i], "--set", &d) != 0);

    /* an overlay file: its errors name FILE:LINE */
    char ov[128];
    snprintf(ov, sizeof ov, "%s/fit.yaml", tmp);
    tu_write_file(ov, "# fitted\nbase: nvidia-h100-sxm\nset:\n  dram.efficiency.bandwidth_fraction: 0.91\n"
                      "  l2.capacity: 60MiB\n");
    memset(&s, 0, sizeof s);
    CHECK(cfg_sets_load_overlay(&s, ov, &d) == 0);
    CHECK(s.n == 2);
    CHECK(tu_load_chip(H100, &s, &h, &d) == 0);
    CHECK_NEAR_REL(cfg_dram(&h)->eff_bw, 0.91, 1e-12);
    tu_write_file(ov, "set:\n  dram.efficiency.bandwidth_fraction: 0.91\n  l2.capacity: 60\n");
    memset(&s, 0, sizeof s);
    CHECK(cfg_sets_load_overlay(&s, ov, &d) == 0);
    CHECK(tu_load_chip(H100, &s, &h, &d) != 0);
    char want[160];
    snprintf(want, sizeof want, "%s:3", ov);
    CHECK(strcmp(d.file, want) == 0);
    tu_write_file(ov, "set: [1, 2]\n");
    memset(&s, 0, sizeof s);
    CHECK(cfg_sets_load_overlay(&s, ov, &d) != 0);
    tu_write_file(ov, "sett:\n  a.b: 1\n");
    CHECK(cfg_sets_load_overlay(&s, ov, &d) != 0);
}

static void expect_values(const char *spec, const char *const *want, unsigned n)
{
    struct sweep s;
    struct diag d;
    memset(&s, 0, sizeof s);
    CHECK(sweep_add_vary(&s, spec, &d) == 0);
    CHECK_EQ_INT(s.key[0].nvalues, n);
    for (unsigned i = 0; i < n && i < s.key[0].nvalues; i++)
        if (strcmp(s.key[0].values[i], want[i]) != 0) {
            fprintf(stderr, "  %s: value %u is %s, want %s\n", spec, i, s.key[0].values[i], want[i]);
            CHECK(0);
        }
    sweep_free(&s);
}

static void test_ranges(void)
{
    const char *geo[] = {"1TB/s", "2TB/s", "4TB/s", "8TB/s"};
    expect_values("dram.bandwidth=1TB/s..8TB/s:x2", geo, 4);
    const char *lin[] = {"1TB/s", "1.5TB/s", "2TB/s"};
    expect_values("dram.bandwidth=1TB/s..2TB/s:+0.5TB/s", lin, 3);
    expect_values("dram.bandwidth=1TB/s..2000GB/s:+500GB/s", lin, 3);
    const char *n4[] = {"1TB/s", "2TB/s", "3TB/s", "4TB/s"};
    expect_values("dram.bandwidth=1TB/s..4TB/s:4", n4, 4);
    const char *g3[] = {"1MiB", "4MiB", "16MiB"};
    expect_values("l2.capacity=1MiB..16MiB:3g", g3, 3);
    const char *list[] = {"25MiB", "50MiB", "100MiB"};
    expect_values("l2.capacity=25MiB,50MiB,100MiB", list, 3);
    const char *rel[] = {"x0.5", "x1", "x2"};     /* factors of the file's value */
    expect_values("dram.bandwidth=x0.5,x1,x2", rel, 3);

    static const char *const bad[] = {
        "dram.bandwidth=1TB/s..8TB/s:x1",  "dram.bandwidth=1TB/s..8TB/s:+0TB/s",
        "dram.bandwidth=1TB/s..8TB/s:1",   "dram.bandwidth=1TB/s..8TB/s:0",
        "dram.bandwidth=8TB/s..1TB/s:x2",  "dram.bandwidth=1TB/s..8MiB:x2",
        "dram.bandwidth=1TB/s..8TB/s",     "dram.bandwidth=",
        "dram.bandwidth=1TB/s..8TB/s:+1MiB", "dram.bandwidth=fast,slow", "dram.bandwidth=x0,x2",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct sweep s;
        struct diag d;
        memset(&s, 0, sizeof s);
        memset(&d, 0, sizeof d);
        int rc = sweep_add_vary(&s, bad[i], &d);
        if (rc == 0)
            fprintf(stderr, "  accepted: %s\n", bad[i]);
        CHECK(rc != 0);
        CHECK(strcmp(d.file, "--vary") == 0);
        sweep_free(&s);
    }
    /* zipped keys need equal lengths; the Cartesian product multiplies */
    struct sweep s;
    struct diag d;
    memset(&s, 0, sizeof s);
    s.ntraces = 1;
    CHECK(sweep_add_vary(&s, "dram.bandwidth=1TB/s..8TB/s:x2", &d) == 0);
    CHECK(sweep_add_vary(&s, "l2.capacity=25MiB,50MiB", &d) == 0);
    CHECK(sweep_finish(&s, &d) == 0);
    CHECK(s.npoints == 8);
    CHECK_EQ_INT(sweep_value_index(&s, 0, 7), 3);
    CHECK_EQ_INT(sweep_value_index(&s, 1, 7), 1);
    CHECK_EQ_INT(sweep_value_index(&s, 1, 6), 0);
    s.zip = 1;
    CHECK(sweep_finish(&s, &d) != 0);
    sweep_free(&s);
}

/* `BINARY gen llm ARGS -o OUT` */
static int gen(const char *args, const char *out)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' gen llm %s -o '%s' >/dev/null 2>&1", STRATA_BINARY, args, out);
    return tu_sh(cmd);
}

static int same_file(const char *a, const char *b)
{
    size_t na, nb;
    char *x = tu_read_file(a, &na), *y = tu_read_file(b, &nb);
    int same = x != NULL && y != NULL && na == nb && memcmp(x, y, na) == 0;
    if (!same)
        fprintf(stderr, "  differ: %s %s\n", a, b);
    free(x);
    free(y);
    return same;
}

/* Two keys: each key's plot is a family of curves, one per value of the
 * other key (not a median with bars that read as error bars), titled with
 * the chip, with a tick at every value swept; and a heatmap per trace,
 * which one key does not get. */
static void test_two_key_plot(const char *dec)
{
    char cmd[2048], p[300];
    snprintf(cmd, sizeof cmd, "STRATA_GNUPLOT=none '%s' sweep --hw configs/nvidia-h100-sxm.yaml --trace '%s' "
             "--vary dram.bandwidth=1TB/s..8TB/s:x2 --vary l2.capacity=25MiB,50MiB,100MiB --out '%s/fam' "
             "2>/dev/null", STRATA_BINARY, dec, tmp);
    CHECK_EQ_INT(tu_sh(cmd), 0);
    snprintf(p, sizeof p, "%s/fam/plots/dram_bandwidth.dat", tmp);
    char *dat = tu_read_file(p, NULL);
    int blocks = 0;
    for (const char *q = dat; q != NULL && (q = strstr(q, "# trace 0: ")) != NULL; q++)
        blocks++;
    CHECK_EQ_INT(blocks, 3);
    CHECK_STR_CONTAINS(dat, "l2.capacity = 100MiB");
    free(dat);
    snprintf(p, sizeof p, "%s/fam/plots/dram_bandwidth.gp", tmp);
    char *gp = tu_read_file(p, NULL);
    CHECK_STR_CONTAINS(gp, "on nvidia-h100-sxm, one curve per value of the other key");
    CHECK_STR_CONTAINS(gp, "title \"l2.capacity = 25MiB\"");
    CHECK_STR_CONTAINS(gp, "set xtics (\"1\" 1, \"2\" 2, \"4\" 4, \"8\" 8)");
    free(gp);
    /* and a heatmap of the trace: one cell per point, each with its value (tokens/s: the trace
     * is a decode step) as the CSV has it, to 3 digits */
    snprintf(p, sizeof p, "%s/fam/plots/heatmap_dec.dat", tmp);
    dat = tu_read_file(p, NULL);
    snprintf(p, sizeof p, "%s/fam/sweep.csv", tmp);
    char *csv = tu_read_file(p, NULL);
    CHECK(dat != NULL && csv != NULL);
    int cells = 0, found = 0;
    for (const char *row = csv != NULL ? strchr(csv, '\n') : NULL; row != NULL && row[1] != '\0';
         row = strchr(row + 1, '\n')) {
        const char *last = row, *end = strchr(row + 1, '\n');  /* the last field: tokens_per_s */
        for (const char *c = row + 1; end != NULL && c < end; c++)
            if (*c == ',')
                last = c;
        char want[64];
        /* the heatmap scales its unit to k, M or G when the values reach 1,000 */
        double scale = dat == NULL ? 1 : strstr(dat, "(k ") ? 1e-3 : strstr(dat, "(M ") ? 1e-6
                                     : strstr(dat, "(G ") ? 1e-9 : 1;
        snprintf(want, sizeof want, " %.3g ", strtod(last + 1, NULL) * scale);
        found += dat != NULL && strstr(dat, want) != NULL;
    }
    for (const char *q = dat; q != NULL && *q != '\0'; q = strchr(q, '\n') ? strchr(q, '\n') + 1 : NULL)
        cells += *q >= '0' && *q <= '9';
    CHECK_EQ_INT(cells, 12);
    CHECK_EQ_INT(found, 12);
    free(csv);
    free(dat);
    snprintf(p, sizeof p, "%s/fam/plots/heatmap_dec.gp", tmp);
    gp = tu_read_file(p, NULL);
    CHECK_STR_CONTAINS(gp, "set title \"dec on nvidia-h100-sxm: throughput (k tokens/s) by dram.bandwidth "
                           "and l2.capacity\"");
    CHECK_STR_CONTAINS(gp, "set palette defined (0 \"#440154\"");
    CHECK_STR_CONTAINS(gp, "with labels");
    free(gp);
    snprintf(p, sizeof p, "%s/fam/sweep.html", tmp);
    char *html = tu_read_file(p, NULL);
    CHECK_STR_CONTAINS(html, "heatmap: ");
    free(html);
    /* one key: a curve, no heatmap */
    snprintf(cmd, sizeof cmd, "STRATA_GNUPLOT=none '%s' sweep --hw configs/nvidia-h100-sxm.yaml --trace '%s' "
             "--vary dram.bandwidth=1TB/s,2TB/s --out '%s/one' 2>/dev/null", STRATA_BINARY, dec, tmp);
    CHECK_EQ_INT(tu_sh(cmd), 0);
    snprintf(p, sizeof p, "%s/one/plots/dram_bandwidth.gp", tmp);
    CHECK(tu_exists(p));
    snprintf(p, sizeof p, "%s/one/plots/heatmap_dec.dat", tmp);
    CHECK(!tu_exists(p));
    snprintf(p, sizeof p, "%s/one/plots", tmp);
    CHECK_EQ_INT(tu_count_entries(p), 2);
}

static void test_cli(void)
{
    char dec[128], pre[128], args[1024], p[256], q[256];
    snprintf(dec, sizeof dec, "%s/dec.json", tmp);
    snprintf(pre, sizeof pre, "%s/pre.json", tmp);
    CHECK(gen("--model traces/models/smollm-135m.json --phase decode --context 512", dec) == 0);
    CHECK(gen("--model traces/models/smollm-135m.json --phase prefill --prompt 256", pre) == 0);
    test_two_key_plot(dec);
    snprintf(args, sizeof args, "--hw " H100 " --trace %s --trace %s "
             "--vary dram.bandwidth=1TB/s..8TB/s:x2 --vary l2.capacity=25MiB,50MiB,100MiB "
             "--vary clock=1.5GHz..2GHz:3 --set launch.kernel_overhead=2us", dec, pre);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' sweep %s -j1 --csv '%s/one.csv' 2>/dev/null", STRATA_BINARY,
             args, tmp);
    CHECK(tu_sh(cmd) == 0);
    snprintf(cmd, sizeof cmd, "'%s' sweep %s -j2 --out '%s/out' 2>/dev/null", STRATA_BINARY,
             args, tmp);
    CHECK(tu_sh(cmd) == 0);
    for (int i = 0; i < 3; i++) {
        snprintf(cmd, sizeof cmd, "'%s' sweep %s --shard %d/3 --out '%s/sh' 2>/dev/null",
                 STRATA_BINARY, args, i, tmp);
        CHECK(tu_sh(cmd) == 0);
    }
    snprintf(cmd, sizeof cmd, "'%s' sweep --merge '%s/sh/shard-2-of-3.csv' '%s/sh/shard-0-of-3.csv' "
             "'%s/sh/shard-1-of-3.csv' -o '%s/merged.csv'", STRATA_BINARY, tmp, tmp, tmp, tmp);
    CHECK(tu_sh(cmd) == 0);
    /* a shard with no points of a system file's sweep: its header comes from a system load */
    snprintf(cmd, sizeof cmd, "'%s' sweep --hw configs/systems/nvidia-dgx-a100.yaml --trace "
             "traces/systems/p2p-matrix-8gpu.json --vary nvlink.bandwidth=100GB/s --shard 2/3 "
             "--out '%s/shs' 2>/dev/null", STRATA_BINARY, tmp);
    CHECK(tu_sh(cmd) == 0);
    snprintf(p, sizeof p, "%s/one.csv", tmp);
    snprintf(q, sizeof q, "%s/out/sweep.csv", tmp);
    CHECK(same_file(p, q));
    snprintf(q, sizeof q, "%s/merged.csv", tmp);
    CHECK(same_file(p, q));
    /* 36 points x 2 traces + the header; faster memory never slows a run */
    size_t n;
    char *csv = tu_read_file(p, &n);
    CHECK(csv != NULL);
    int lines = 0;
    for (size_t i = 0; csv != NULL && i < n; i++)
        lines += csv[i] == '\n';
    CHECK_EQ_INT(lines, 73);
    /* the H100 config has a power block: each row ends with the run's
     * energy and the device's average power (docs/energy.md), which is
     * that energy over the time, above the 72 W idle */
    const char *nl = csv != NULL ? strchr(csv, '\n') : NULL;
    static const char tail[] = ",idle_us,energy_J,power_W,dram.bandwidth_si,l2.capacity_si,clock_si,hw,tokens_per_s";
    size_t tl = strlen(tail);
    CHECK(nl != NULL && (size_t)(nl - csv) > tl && memcmp(nl - tl, tail, tl) == 0);
    int rows_ok = 0;
    double min_jt = INFINITY;   /* the decode trace's least joules a token */
    for (const char *row = nl; row != NULL && row[1] != '\0'; row = strchr(row + 1, '\n')) {
        /* fields: point, trace, 3 keys, time_us (5), ...; from the end: tokens_per_s, hw, 3 SI
         * values, power_W (-6), energy_J (-7) */
        char line[1024];
        const char *end = strchr(row + 1, '\n');
        if (end == NULL || end - row - 1 >= (long)sizeof line)
            break;
        snprintf(line, sizeof line, "%.*s", (int)(end - row - 1), row + 1);
        char *f[64];
        int nf = 0;
        f[nf++] = line;
        for (char *c = line; *c != '\0' && nf < 64; c++)
            if (*c == ',') {
                *c = '\0';
                f[nf++] = c + 1;
            }
        if (nf < 12)
            break;
        double t_s = strtod(f[5], NULL) * 1e-6, e_j = strtod(f[nf - 7], NULL), w = strtod(f[nf - 6], NULL);
        double bw_si = strtod(f[nf - 5], NULL), tok = strtod(f[nf - 1], NULL);
        rows_ok += t_s > 0 && e_j > 0 && w > 72.0 && fabs(e_j / t_s - w) <= 1e-3 * w + 1e-3 &&
                   bw_si >= 1e12 && bw_si <= 8e12 && strcmp(f[nf - 2], "nvidia-h100-sxm") == 0 &&
                   (strstr(f[1], "dec") == NULL || fabs(tok * t_s - 1) < 1e-3); /* decode: 1 token */
        if (strstr(f[1], "dec") != NULL && tok > 0 && e_j / (tok * t_s) < min_jt)
            min_jt = e_j / (tok * t_s);
    }
    CHECK_EQ_INT(rows_ok, 72);
    free(csv);
    snprintf(q, sizeof q, "%s/out/sweep.html", tmp);
    CHECK(tu_exists(q));
    /* the page ranks the points by joules a token too: the decode trace's
     * first row is the least of the CSV's */
    char *html = tu_read_file(q, NULL), want[64];
    const char *le = html != NULL ? strstr(html, "<h2>least energy: ") : NULL;
    while (le != NULL && strncmp(strchr(le, ':') + 2, dec, strlen(dec)) != 0)
        le = strstr(le + 1, "<h2>least energy: ");
    snprintf(want, sizeof want, "<td>%.6g</td></tr>", min_jt);
    const char *first = le != NULL ? strstr(le, "</th></tr>\n<tr>") : NULL;
    const char *eol = first != NULL ? strchr(first + 11, '\n') : NULL;
    CHECK(le != NULL && strstr(le, "<th>J a token</th>") != NULL);
    CHECK(eol != NULL && (size_t)(eol - first) > strlen(want) &&
          memcmp(eol - strlen(want), want, strlen(want)) == 0);
    free(html);
    snprintf(q, sizeof q, "%s/out/plots/dram_bandwidth.gp", tmp);
    CHECK(tu_exists(q));
#ifdef STRATA_MPI_BINARY
    if (tu_sh("command -v mpirun >/dev/null 2>&1") == 0) {
        snprintf(cmd, sizeof cmd, "mpirun --allow-run-as-root --oversubscribe -np 2 '%s' sweep %s "
                 "--csv '%s/mpi.csv' >/dev/null 2>&1", STRATA_MPI_BINARY, args, tmp);
        CHECK(tu_sh(cmd) == 0);
        snprintf(q, sizeof q, "%s/mpi.csv", tmp);
        CHECK(same_file(p, q));
    } else {
        printf("SKIP: mpirun not found; the MPI sweep is not checked\n");
    }
#else
    printf("SKIP: strata-mpi not built (cmake -DSTRATA_MPI=ON); the MPI sweep is not checked\n");
#endif

    /* bad input: an error naming what is wrong, and nothing written */
    static const char *const bad[] = {
        "--vary l2.capacity=0MiB,1MiB",        "--vary dram.bandwidth=1TB/s..2TB/s:x1",
        "--vary dram.bandwidth=100MiB,200MiB", "--vary nosuch.key=1,2",
        "--vary l2.capacity=1MiB,2MiB --shard 3/3", "--vary l2.capacity=1MiB --set dram.bandwidth=9",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(cmd, sizeof cmd, "'%s' sweep --hw " H100 " --trace '%s' %s --csv '%s/bad.csv' "
                 "2>/dev/null", STRATA_BINARY, dec, bad[i], tmp);
        int rc = tu_sh(cmd);
        CHECK(rc == 1 || rc == 2);
        snprintf(q, sizeof q, "%s/bad.csv", tmp);
        CHECK(!tu_exists(q));
    }
    /* a merge with a shard missing, or one given twice */
    snprintf(cmd, sizeof cmd, "'%s' sweep --merge '%s/sh/shard-0-of-3.csv' '%s/sh/shard-1-of-3.csv' "
             "-o '%s/bad.csv' 2>/dev/null", STRATA_BINARY, tmp, tmp, tmp);
    CHECK(tu_sh(cmd) == 1);
    snprintf(cmd, sizeof cmd, "'%s' sweep --merge '%s/sh/shard-0-of-3.csv' '%s/sh/shard-0-of-3.csv' "
             "-o '%s/bad.csv' 2>/dev/null", STRATA_BINARY, tmp, tmp, tmp);
    CHECK(tu_sh(cmd) == 1);
    CHECK(!tu_exists(q));
    /* --set on run names the variant in the report */
    snprintf(cmd, sizeof cmd, "'%s' run --hw " H100 " --trace '%s' --set dram.bandwidth=4.8TB/s "
             "--json '%s/r.json' >/dev/null 2>&1", STRATA_BINARY, dec, tmp);
    CHECK(tu_sh(cmd) == 0);
    snprintf(q, sizeof q, "%s/r.json", tmp);
    char *r = tu_read_file(q, NULL);
    CHECK(r != NULL && strstr(r, "nvidia-h100-sxm[dram.bandwidth=4.8TB/s]") != NULL);
    free(r);
}

int main(void)
{
    if (chdir(STRATA_SOURCE_DIR) != 0 || tu_mkdtemp(tmp, sizeof tmp, "strata-sweep") != 0)
        return 1;
    test_set();
    test_ranges();
    test_cli();
    tu_rmtree(tmp);
    TEST_MAIN_END();
}
