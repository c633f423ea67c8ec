/* test_badinput_cfg.c: hw_load() on broken chip configs.  Each case writes a
 * small YAML file into a fresh mkdtemp() directory and checks the error
 * kind, line and field of the diagnostic; then every prefix of a shipped
 * config and a set of single-byte corruptions are loaded to check that no
 * input crashes the loader (run it under -DSTRATA_SANITIZE=ON). */
#include <stdint.h>
#include <unistd.h>

#include "cfg.h"
#include "test.h"
#include "util.h"

/* A minimal valid config; the line numbers in the cases below refer to it. */
static const char base[] =
    "name: test-chip\n"                                            /*  1 */
    "family: gpu\n"                                                /*  2 */
    "clock_MHz: 1000\n"                                            /*  3 */
    "compute:\n"                                                   /*  4 */
    "  units: 4\n"                                                 /*  5 */
    "  matrix_flops_per_cycle_per_unit: {bf16: 1024, fp16: 1024}\n" /*  6 */
    "  vector_flops_per_cycle_per_unit: {fp32: 256}\n"             /*  7 */
    "threads:\n"                                                   /*  8 */
    "  max_threads_per_unit: 2048\n"                               /*  9 */
    "  max_ctas_per_unit: 32\n"                                    /* 10 */
    "levels:\n"                                                    /* 11 */
    "  - name: registers\n"                                        /* 12 */
    "    kind: registers\n"                                        /* 13 */
    "    capacity_KiB: 256\n"                                      /* 14 */
    "  - name: smem\n"                                             /* 15 */
    "    kind: scratchpad\n"                                       /* 16 */
    "    capacity_KiB: 228\n"                                      /* 17 */
    "    bandwidth_bytes_per_cycle: 128\n"                         /* 18 */
    "  - name: l2\n"                                               /* 19 */
    "    kind: cache\n"                                            /* 20 */
    "    capacity_MiB: 50\n"                                       /* 21 */
    "    bandwidth_GBps: 10000\n"                                  /* 22 */
    "    latency_ns: 150\n"                                        /* 23 */
    "    port_bytes_per_cycle_per_unit: 64\n"                      /* 24 */
    "  - name: dram\n"                                             /* 25 */
    "    kind: dram\n"                                             /* 26 */
    "    type: HBM3\n"                                             /* 27 */
    "    capacity_GB: 80\n"                                        /* 28 */
    "    bandwidth_GBps: 3350\n"                                   /* 29 */
    "    latency_ns: 400\n"                                        /* 30 */
    "    efficiency:\n"                                            /* 31 */
    "      bandwidth_fraction: 0.92\n"                             /* 32 */
    "      rw_turnaround_penalty: 0.08\n"                          /* 33 */
    "      loaded_latency_ns: 900\n"                               /* 34 */
    "  - name: pcie\n"                                             /* 35 */
    "    kind: link\n"                                             /* 36 */
    "    scope: host\n"                                            /* 37 */
    "    bandwidth_GBps: 63\n"                                     /* 38 */
    "    latency_ns: 1000\n"                                       /* 39 */
    "launch:\n"                                                    /* 40 */
    "  kernel_overhead_ns: 2500\n"                                 /* 41 */
    "efficiency:\n"                                                /* 42 */
    "  matrix_pipe_fraction: 0.93\n"                               /* 43 */
    "  vector_pipe_fraction: 0.9\n"                                /* 44 */
    "  inflight_bytes_per_unit: 32768\n";                          /* 45 */

static char tmpdir[64];
static char tmpfile_[128];

/* Load text (len bytes) from the temp file; returns hw_load's result. */
static int load_bytes(const char *text, size_t len, struct hw_config *h, struct diag *d)
{
    tu_write_bytes(tmpfile_, text, len);
    memset(d, 0, sizeof *d);
    return tu_load_chip(tmpfile_, NULL, h, d);
}

/* base with the first occurrence of from replaced by to (malloc'd). */
static char *variant(const char *from, const char *to)
{
    const char *at = strstr(base, from);
    if (at == NULL) {
        fprintf(stderr, "test bug: '%s' not in base\n", from);
        exit(2);
    }
    size_t pre = (size_t)(at - base), flen = strlen(from), tlen = strlen(to);
    char *s = malloc(sizeof base + tlen);
    if (s == NULL)
        abort();
    memcpy(s, base, pre);
    memcpy(s + pre, to, tlen);
    strcpy(s + pre + tlen, at + flen);
    return s;
}

/* Expect loading text to fail with code at line in field, msg containing
 * msg_part, and to leave *out untouched. */
static void expect_text(const char *what, const char *text, enum diag_code code, int line,
                        const char *field, const char *msg_part)
{
    struct hw_config h;
    struct diag d;
    memset(&h, 0x5a, sizeof h);
    int rc = load_bytes(text, strlen(text), &h, &d);
    int ok = rc == -1 && d.code == code && d.line == line && strcmp(d.field, field) == 0 &&
             strstr(d.msg, msg_part) != NULL && strcmp(d.file, tmpfile_) == 0 &&
             (unsigned char)h.name[0] == 0x5a;
    if (ok) {
        test_passed_++;
    } else {
        test_failed_++;
        fprintf(stderr, "case '%s': want rc -1 %s line %d field '%s' msg ~'%s'; got rc %d: ",
                what, diag_code_name(code), line, field, msg_part, rc);
        fprintf(stderr, "[%s] line %d field '%s': ", diag_code_name(d.code), d.line, d.field);
        diag_print(&d, stderr);
    }
}

static void expect_variant(const char *what, const char *from, const char *to,
                           enum diag_code code, int line, const char *field, const char *msg_part)
{
    char *s = variant(from, to);
    expect_text(what, s, code, line, field, msg_part);
    free(s);
}

static void test_base_is_valid(void)
{
    struct hw_config h;
    struct diag d;
    int rc = load_bytes(base, strlen(base), &h, &d);
    if (rc != 0)
        diag_print(&d, stderr);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(h.units, 4);
    CHECK(h.lv_peer < 0);
    CHECK_EQ_INT(h.nlevels, 5);
    CHECK_EQ_INT(h.ncaches, 1);
    CHECK_EQ_INT(h.level[h.lv_cache[0]].latency_ps, 150000);
    CHECK_EQ_INT(h.level[h.lv_dram].capacity_bytes, 80000000000ULL);
    CHECK(cfg_matrix_peak_flops(&h, DT_BF16) == 4 * 1024 * 1e9);
    CHECK(cfg_matrix_peak_flops(&h, DT_INT8) == 0);
    CHECK(cfg_vector_peak_flops(&h, DT_FP32) == 4 * 256 * 1e9);
    CHECK(cfg_smem_bw(&h) == 4 * 128 * 1e9);
}

static void test_valid_variants(void)
{
    struct hw_config h;
    struct diag d;
    /* Comments everywhere, a document marker, block-style dtype maps,
     * decimals and exponents, quoted strings, capacity_GiB and nvlink. */
    static const char commented[] =
        "# leading comment\n"
        "---\n"
        "name: \"commented-chip\"   # quoted string\n"
        "family: 'gpu'\n"
        "clock_MHz: 1.5e3 # exponent\n"
        "compute:   # section comment\n"
        "  # comment inside a section\n"
        "  units: 2\n"
        "  matrix_flops_per_cycle_per_unit:\n"
        "    bf16: 512.5   # decimal rate\n"
        "    int4: 0\n"
        "  vector_flops_per_cycle_per_unit: {fp32: 128, fp64: 0}\n"
        "threads: {max_threads_per_unit: 1024, max_ctas_per_unit: 16}\n"
        "levels:\n"
        "  - {name: registers, kind: registers, capacity_KiB: 64}\n"
        "  - name: smem\n"
        "    kind: scratchpad\n"
        "    scope: unit\n"
        "    capacity_KiB: 0.5\n"
        "    bandwidth_bytes_per_cycle: 64\n"
        "  - {name: l2, kind: cache, capacity_MiB: 1, bandwidth_GBps: 100, latency_ns: 0.0015, port_bytes_per_cycle_per_unit: 32}\n"
        "  - name: l3     # a second cache, per group of units\n"
        "    kind: cache\n"
        "    scope: group\n"
        "    units_per_group: 1\n"
        "    capacity_MiB: 4\n"
        "    bandwidth_GBps: 80\n"
        "    latency_ns: 100\n"
        "    port_bytes_per_cycle_per_unit: 16\n"
        "  - name: dram\n"
        "    kind: dram\n"
        "    capacity_GiB: 2\n"
        "    bandwidth_GBps: 50\n"
        "    latency_ns: 300.25\n"
        "    efficiency: {bandwidth_fraction: 0.5, rw_turnaround_penalty: 0, loaded_latency_ns: 300.25}\n"
        "  - name: pcie\n"
        "    kind: link\n"
        "    scope: host\n"
        "    bandwidth_GBps: 8\n"
        "    latency_ns: 500\n"
        "  - name: nvlink\n"
        "    kind: link\n"
        "    scope: system\n"
        "    ports: 4\n"
        "    bandwidth_GBps: 12.5\n"
        "    latency_ns: 700\n"
        "    efficiency: {bandwidth_fraction: 0.9}\n"
        "launch:\n"
        "  kernel_overhead_ns: 0\n"
        "efficiency:\n"
        "  matrix_pipe_fraction: 1\n"
        "  vector_pipe_fraction: 1.0\n"
        "  inflight_bytes_per_unit: 1e4\n"
        "...\n"
        "# trailing comment\n";
    int rc = load_bytes(commented, strlen(commented), &h, &d);
    if (rc != 0)
        diag_print(&d, stderr);
    CHECK_EQ_INT(rc, 0);
    CHECK(strcmp(h.name, "commented-chip") == 0);
    CHECK(h.clock_hz == 1.5e9);
    CHECK(h.matrix_flops_per_cycle[DT_BF16] == 512.5);
    CHECK(h.matrix_flops_per_cycle[DT_FP16] == 0);
    CHECK_EQ_INT(h.level[h.lv_smem].capacity_bytes, 512);
    CHECK_EQ_INT(h.level[h.lv_cache[0]].latency_ps, 2); /* 1.5 ps rounds to 2 */
    CHECK_EQ_INT(h.level[h.lv_dram].capacity_bytes, 2ULL << 30);
    CHECK_EQ_INT(h.level[h.lv_dram].latency_ps, 300250);
    CHECK_EQ_INT(h.level[h.lv_peer].instances, 4);
    CHECK(h.level[h.lv_peer].bw_bytes_per_s == 4 * 12.5e9);
    CHECK(h.level[h.lv_peer].eff_bw == 0.9);
    CHECK_EQ_INT(h.ncaches, 2);
    CHECK(strcmp(h.level[h.lv_cache[1]].name, "l3") == 0);
    CHECK_EQ_INT(h.level[h.lv_cache[1]].instances, 2);      /* 2 units, 1 per group */
    CHECK(h.level[h.lv_cache[1]].bw_bytes_per_s == 2 * 80e9);
    CHECK(h.level[h.lv_smem].bw_bytes_per_s == 2 * 64 * 1.5e9);
    CHECK_EQ_INT(h.launch_overhead_ps, 0);
    CHECK(strcmp(h.level[h.lv_dram].type, "") == 0);
    CHECK(h.eff_inflight_bytes_per_unit == 1e4);
}

static void test_bad_structure(void)
{
    /* The cases the loader must reject, one per error kind and place: the
     * file's structure, its keys and its levels. */
    expect_variant("malformed YAML", "clock_MHz: 1000\n", "clock_MHz: 1000: 5\n",
                   DIAG_E_PARSE, 3, "", "mapping values are not allowed");
    expect_variant("unclosed flow mapping", "{fp32: 256}", "{fp32: 256",
                   DIAG_E_PARSE, 8, "", "");
    expect_variant("tab indentation", "  units: 4\n", "\tunits: 4\n", DIAG_E_PARSE, 5, "", "");
    expect_variant("cluster larger than a chip allows", "  units: 4\n",
                   "  units: 4\n  cluster_multicast_ctas: 17\n", DIAG_E_RANGE, 6,
                   "compute.cluster_multicast_ctas", "at most 16");
    expect_variant("cluster of no CTAs", "  units: 4\n", "  units: 4\n  cluster_multicast_ctas: 0\n",
                   DIAG_E_RANGE, 6, "compute.cluster_multicast_ctas", "");
    expect_variant("unknown top-level key", "  inflight_bytes_per_unit: 32768\n",
                   "  inflight_bytes_per_unit: 32768\nturbo: 1\n",
                   DIAG_E_UNKNOWN_KEY, 46, "turbo", "expected one of: name, family");
    expect_variant("unknown level key", "    latency_ns: 150\n",
                   "    latency_ns: 150\n    latncy_ns: 5\n",
                   DIAG_E_UNKNOWN_KEY, 24, "levels.l2.latncy_ns", "unknown key");
    expect_variant("key of another kind", "    latency_ns: 150\n",
                   "    latency_ns: 150\n    type: SRAM\n",
                   DIAG_E_UNKNOWN_KEY, 24, "levels.l2.type", "unknown key");
    expect_variant("missing level key", "    latency_ns: 400\n", "",
                   DIAG_E_MISSING, 25, "levels.dram.latency_ns", "missing");
    expect_variant("missing top-level key", "clock_MHz: 1000\n", "",
                   DIAG_E_MISSING, 1, "clock_MHz", "missing");
    expect_variant("missing section", "launch:\n  kernel_overhead_ns: 2500\n", "",
                   DIAG_E_MISSING, 1, "launch", "missing");
    expect_variant("missing dram capacity", "    capacity_GB: 80\n", "",
                   DIAG_E_MISSING, 25, "levels.dram", "capacity_GiB");
    expect_variant("missing link key", "launch:\n",
                   "  - {name: nvlink, kind: link, scope: system, ports: 4, latency_ns: 10}\nlaunch:\n",
                   DIAG_E_MISSING, 40, "levels.nvlink.bandwidth_GBps", "missing");
    expect_variant("link without scope", "    scope: host\n", "",
                   DIAG_E_MISSING, 35, "levels.pcie.scope", "missing");
    expect_variant("unknown level kind", "    kind: cache\n", "    kind: cach\n",
                   DIAG_E_UNKNOWN_NAME, 20, "levels.kind", "unknown kind 'cach'");
    expect_variant("unknown scope", "    scope: host\n", "    scope: hots\n",
                   DIAG_E_UNKNOWN_NAME, 37, "levels.pcie.scope", "unknown scope");
    expect_variant("scope a kind cannot have", "    kind: cache\n", "    kind: cache\n    scope: host\n",
                   DIAG_E_RANGE, 21, "levels.l2.scope", "cannot have scope host");
    expect_variant("groups that do not divide", "    kind: cache\n",
                   "    kind: cache\n    scope: group\n    units_per_group: 3\n",
                   DIAG_E_RANGE, 22, "levels.units_per_group", "do not split");
    expect_variant("levels out of order", "  - name: smem\n    kind: scratchpad\n"
                   "    capacity_KiB: 228\n    bandwidth_bytes_per_cycle: 128\n", "",
                   DIAG_E_MISSING, 11, "levels", "needs a scratchpad level");
    expect_variant("cache before scratchpad", "  - name: registers\n",
                   "  - {name: l1, kind: cache, capacity_KiB: 64, bandwidth_GBps: 1, latency_ns: 1, "
                   "port_bytes_per_cycle_per_unit: 1}\n  - name: registers\n",
                   DIAG_E_RANGE, 13, "levels", "innermost first");
    expect_variant("two levels of one name", "  - name: l2\n", "  - name: smem\n",
                   DIAG_E_DUPLICATE, 19, "levels.name", "two levels named 'smem'");
    expect_variant("two DRAMs", "  - name: pcie\n",
                   "  - {name: dram2, kind: dram, capacity_GB: 1, bandwidth_GBps: 1, latency_ns: 1, "
                   "efficiency: {bandwidth_fraction: 1, rw_turnaround_penalty: 0, loaded_latency_ns: 1}}\n"
                   "  - name: pcie\n",
                   DIAG_E_DUPLICATE, 35, "levels", "a second dram level 'dram2'");
    expect_variant("reserved level name", "  - name: l2\n", "  - name: busy\n",
                   DIAG_E_RANGE, 19, "levels.name", "not busy");
    expect_variant("level name with a space", "  - name: l2\n", "  - name: L 2\n",
                   DIAG_E_RANGE, 19, "levels.name", "lower-case");
    expect_variant("levels not a list", "levels:\n", "levels: 5\nx_levels:\n",
                   DIAG_E_UNKNOWN_KEY, 12, "x_levels", "unknown key");
    /* a decoder (LazyWeights) sits between the caches and DRAM */
    expect_variant("decoder below the registers", "  - name: registers\n",
                   "  - {name: lwdec, kind: decoder, bandwidth_bytes_per_cycle: 64, latency_ns: 10}\n"
                   "  - name: registers\n",
                   DIAG_E_RANGE, 13, "levels", "innermost first");
    expect_variant("decoder above DRAM", "  - name: pcie\n",
                   "  - {name: lwdec, kind: decoder, bandwidth_bytes_per_cycle: 64, latency_ns: 10}\n"
                   "  - name: pcie\n",
                   DIAG_E_RANGE, 35, "levels", "'lwdec' (decoder) after 'dram' (dram)");
    expect_variant("decoder with a capacity", "  - name: dram\n",
                   "  - {name: lwdec, kind: decoder, bandwidth_bytes_per_cycle: 64, latency_ns: 10, "
                   "capacity_MiB: 1}\n  - name: dram\n",
                   DIAG_E_UNKNOWN_KEY, 25, "levels.lwdec.capacity_MiB", "unknown key");
    expect_variant("decoder clock with GB/s", "  - name: dram\n",
                   "  - {name: lwdec, kind: decoder, bandwidth_GBps: 64, clock_MHz: 1000, latency_ns: 10}\n"
                   "  - name: dram\n",
                   DIAG_E_RANGE, 25, "levels.lwdec.clock_MHz", "bandwidth_bytes_per_cycle");
    expect_variant("two decoders", "  - name: dram\n",
                   "  - {name: dec1, kind: decoder, bandwidth_bytes_per_cycle: 64, latency_ns: 10}\n"
                   "  - {name: dec2, kind: decoder, bandwidth_bytes_per_cycle: 64, latency_ns: 10}\n"
                   "  - name: dram\n",
                   DIAG_E_DUPLICATE, 26, "levels", "a second decoder level 'dec2'");
    expect_variant("level not a mapping", "  - name: registers\n    kind: registers\n    capacity_KiB: 256\n",
                   "  - registers\n", DIAG_E_TYPE, 12, "levels[0]", "expected a mapping");
}

static void test_bad_values(void)
{
    /* Numbers, strings and dtype rates the loader must reject. */
    expect_variant("negative number", "    bandwidth_GBps: 3350\n", "    bandwidth_GBps: -5\n",
                   DIAG_E_RANGE, 29, "levels.dram.bandwidth_GBps", "must be between 0.001 and 1e+15, got -5");
    expect_variant("zero units", "units: 4", "units: 0",
                   DIAG_E_RANGE, 5, "compute.units", "got 0");
    expect_variant("fractional units", "units: 4", "units: 4.5",
                   DIAG_E_TYPE, 5, "compute.units", "whole number");
    expect_variant("huge count", "max_ctas_per_unit: 32", "max_ctas_per_unit: 1e10",
                   DIAG_E_RANGE, 10, "threads.max_ctas_per_unit", "between 1 and");
    expect_variant("overflowing number", "capacity_MiB: 50", "capacity_MiB: 1e400",
                   DIAG_E_RANGE, 21, "levels.l2.capacity_MiB", "too large");
    expect_variant("too many bytes", "capacity_MiB: 50", "capacity_MiB: 1e300",
                   DIAG_E_RANGE, 21, "levels.l2.capacity_MiB", "must be between 0.001 and 1e+15");
    /* tiny but positive: passed "> 0" and made every time infinite */
    expect_variant("tiny clock", "clock_MHz: 1000", "clock_MHz: 1e-300",
                   DIAG_E_RANGE, 3, "clock_MHz", "must be between 0.001 and 1e+15");
    expect_variant("string where number expected", "clock_MHz: 1000", "clock_MHz: fast",
                   DIAG_E_TYPE, 3, "clock_MHz", "expected a number, got 'fast'");
    expect_variant("quoted number", "clock_MHz: 1000", "clock_MHz: \"1000\"",
                   DIAG_E_TYPE, 3, "clock_MHz", "quoted string");
    expect_variant("hex number", "clock_MHz: 1000", "clock_MHz: 0x3e8",
                   DIAG_E_TYPE, 3, "clock_MHz", "expected a number");
    expect_variant("inf", "clock_MHz: 1000", "clock_MHz: .inf",
                   DIAG_E_TYPE, 3, "clock_MHz", "expected a number");
    expect_variant("empty value", "clock_MHz: 1000", "clock_MHz:",
                   DIAG_E_TYPE, 3, "clock_MHz", "got nothing");
    expect_variant("mapping where number expected", "clock_MHz: 1000", "clock_MHz: {a: 1}",
                   DIAG_E_TYPE, 3, "clock_MHz", "got a mapping");
    expect_variant("sequence where number expected", "clock_MHz: 1000", "clock_MHz: [1000]",
                   DIAG_E_TYPE, 3, "clock_MHz", "got a sequence");
    expect_variant("mapping where string expected", "name: test-chip", "name: {a: b}",
                   DIAG_E_TYPE, 1, "name", "expected a string");
    expect_variant("scalar where section expected", "launch:\n  kernel_overhead_ns: 2500\n",
                   "launch: 5\n", DIAG_E_TYPE, 40, "launch", "expected a mapping");
    expect_variant("empty name", "name: test-chip", "name: ''",
                   DIAG_E_RANGE, 1, "name", "empty");
    expect_variant("name too long", "name: test-chip",
                   "name: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                   DIAG_E_RANGE, 1, "name", "longer than 63");
    expect_variant("NUL in name", "name: test-chip", "name: \"a\\0b\"",
                   DIAG_E_TYPE, 1, "name", "NUL");
    expect_variant("unknown dtype key", "{bf16: 1024, fp16: 1024}", "{bf16: 1024, bf17: 1024}",
                   DIAG_E_UNKNOWN_NAME, 6, "compute.matrix_flops_per_cycle_per_unit.bf17",
                   "unknown dtype");
    expect_variant("duplicate dtype key", "{bf16: 1024, fp16: 1024}", "{bf16: 1024, bf16: 2}",
                   DIAG_E_DUPLICATE, 6, "compute.matrix_flops_per_cycle_per_unit.bf16",
                   "duplicate");
    expect_variant("negative dtype rate", "{fp32: 256}", "{fp32: -1}",
                   DIAG_E_RANGE, 7, "compute.vector_flops_per_cycle_per_unit.fp32", ">= 0");
    expect_variant("all dtype rates zero", "{bf16: 1024, fp16: 1024}", "{bf16: 0}",
                   DIAG_E_RANGE, 6, "compute.matrix_flops_per_cycle_per_unit", "at least one");
    expect_variant("empty dtype map", "{fp32: 256}", "{}",
                   DIAG_E_RANGE, 7, "compute.vector_flops_per_cycle_per_unit", "at least one");
    expect_variant("fp16 accumulate of an 8-bit type", "  vector_flops_per_cycle_per_unit: {fp32: 256}\n",
                   "  vector_flops_per_cycle_per_unit: {fp32: 256}\n"
                   "  fp16_accumulate_matrix_flops_per_cycle_per_unit: {int8: 2048}\n",
                   DIAG_E_RANGE, 8, "compute.fp16_accumulate_matrix_flops_per_cycle_per_unit",
                   "only a 16-bit type");
    expect_variant("dtype map is a scalar", "{fp32: 256}", "256",
                   DIAG_E_TYPE, 7, "compute.vector_flops_per_cycle_per_unit",
                   "expected a mapping");
}

static void test_bad_families(void)
{
    /* Families, duplicates, efficiencies and the YAML features the loader refuses. */
    expect_variant("unknown family", "family: gpu", "family: fpga",
                   DIAG_E_UNKNOWN_NAME, 2, "family", "unknown family 'fpga'");
    expect_variant("tpu with threads", "family: gpu", "family: tpu",
                   DIAG_E_UNKNOWN_KEY, 8, "threads", "family tpu has no threads");
    expect_variant("tpu without an array", "family: gpu", "family: tpu",
                   DIAG_E_UNKNOWN_KEY, 8, "threads", "");
    expect_variant("gpu without threads", "threads:\n  max_threads_per_unit: 2048\n  max_ctas_per_unit: 32\n",
                   "", DIAG_E_MISSING, 1, "threads", "family gpu needs");
    expect_variant("systolic zero rows", "levels:\n", "systolic: {rows: 0, cols: 8}\nlevels:\n",
                   DIAG_E_RANGE, 11, "systolic.rows", "");
    expect_variant("systolic unknown key", "levels:\n", "systolic: {rows: 8, colums: 8}\nlevels:\n",
                   DIAG_E_UNKNOWN_KEY, 11, "systolic.colums", "");
    expect_variant("systolic not a mapping", "levels:\n", "systolic: 128\nlevels:\n",
                   DIAG_E_TYPE, 11, "systolic", "expected a mapping");
    expect_variant("systolic too wide", "levels:\n", "systolic: {rows: 8, cols: 70000}\nlevels:\n",
                   DIAG_E_RANGE, 11, "systolic.cols", "at most 65536 PEs, got 70000");
    expect_variant("systolic unknown dataflow", "levels:\n",
                   "systolic: {rows: 8, cols: 8, dataflow: is}\nlevels:\n",
                   DIAG_E_RANGE, 11, "systolic.dataflow", "'is' is not a dataflow the tiled model runs");
    expect_variant("gpu systolic with tiles", "levels:\n",
                   "systolic: {rows: 8, cols: 8, max_tiles_per_unit: 1}\nlevels:\n",
                   DIAG_E_UNKNOWN_KEY, 11, "systolic.max_tiles_per_unit", "threads block");
    expect_variant("duplicate key", "    latency_ns: 150\n",
                   "    latency_ns: 150\n    latency_ns: 160\n",
                   DIAG_E_DUPLICATE, 24, "levels.l2.latency_ns", "first given on line 23");
    expect_variant("duplicate section", "launch:\n", "launch: {kernel_overhead_ns: 1}\nlaunch:\n",
                   DIAG_E_DUPLICATE, 41, "launch", "first given on line 40");
    expect_variant("both capacity units", "    capacity_GB: 80\n",
                   "    capacity_GB: 80\n    capacity_GiB: 75\n",
                   DIAG_E_DUPLICATE, 29, "levels.dram.capacity_GiB", "not both");
    expect_variant("fraction > 1", "matrix_pipe_fraction: 0.93", "matrix_pipe_fraction: 1.5",
                   DIAG_E_RANGE, 43, "efficiency.matrix_pipe_fraction", "[0.001, 1]");
    expect_variant("fraction = 0", "bandwidth_fraction: 0.92",
                   "bandwidth_fraction: 0", DIAG_E_RANGE, 32,
                   "levels.dram.efficiency.bandwidth_fraction", "[0.001, 1]");
    expect_variant("penalty = 1", "rw_turnaround_penalty: 0.08",
                   "rw_turnaround_penalty: 1", DIAG_E_RANGE, 33,
                   "levels.dram.efficiency.rw_turnaround_penalty", "[0, 1)");
    expect_variant("loaded latency below unloaded", "loaded_latency_ns: 900",
                   "loaded_latency_ns: 300", DIAG_E_RANGE, 34,
                   "efficiency.loaded_latency_ns", "latency_ns (400)");
    expect_variant("dram without efficiency", "    efficiency:\n      bandwidth_fraction: 0.92\n"
                   "      rw_turnaround_penalty: 0.08\n      loaded_latency_ns: 900\n", "",
                   DIAG_E_MISSING, 25, "levels.dram.efficiency", "required");
    expect_variant("negative overhead", "kernel_overhead_ns: 2500", "kernel_overhead_ns: -1",
                   DIAG_E_RANGE, 41, "launch.kernel_overhead_ns", ">= 0");
    expect_variant("non-scalar key", "launch:\n", "? [a]\n: 1\nlaunch:\n",
                   DIAG_E_TYPE, 40, "", "keys must be");
    expect_variant("anchor", "clock_MHz: 1000", "clock_MHz: &c 1000",
                   DIAG_E_UNSUPPORTED, 3, "", "anchors");
    expect_variant("alias", "    latency_ns: 400\n", "    latency_ns: *c\n",
                   DIAG_E_UNSUPPORTED, 30, "", "aliases");
    expect_variant("anchor and alias", "clock_MHz: 1000\n",
                   "clock_MHz: 1000\nx: &a 1\ny: *a\n", DIAG_E_UNSUPPORTED, 4, "", "anchors");
    expect_variant("merge key", "launch:\n", "<<: *r\nlaunch:\n",
                   DIAG_E_UNSUPPORTED, 40, "", "aliases");
    expect_variant("explicit tag", "clock_MHz: 1000", "clock_MHz: !!float 1000",
                   DIAG_E_UNSUPPORTED, 3, "", "tags");
    expect_variant("deep nesting", "clock_MHz: 1000",
                   "clock_MHz: [[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]", DIAG_E_RANGE, 3, "",
                   "nesting");
    expect_variant("two documents", "name: test-chip\n", "name: test-chip\n---\nname: x\n",
                   DIAG_E_UNSUPPORTED, 2, "", "more than one YAML document");
    expect_text("empty file", "", DIAG_E_PARSE, 0, "", "empty");
    expect_text("only comments", "# nothing here\n\n# at all\n", DIAG_E_PARSE, 0, "", "empty");
    expect_text("non-mapping top level", "- a\n- b\n", DIAG_E_TYPE, 1, "", "top level");
    expect_text("scalar top level", "\n\nhello\n", DIAG_E_TYPE, 3, "", "top level");
    expect_text("null document", "---\n", DIAG_E_TYPE, 2, "", "top level");
    expect_text("invalid UTF-8", "name: a\nfamily: \xff\xfe\x80\n", DIAG_E_PARSE, 2, "", "");
    expect_text("control character", "name: a\nfamily: gpu\nclock_MHz: \x01\n",
                DIAG_E_PARSE, 3, "", "");
}

static void test_files(void)
{
    struct hw_config h;
    struct diag d;
    char path[160];

    /* Nonexistent file. */
    snprintf(path, sizeof path, "%s/does-not-exist.yaml", tmpdir);
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(tu_load_chip(path, NULL, &h, &d), -1);
    CHECK_EQ_INT(d.code, DIAG_E_IO);
    CHECK_EQ_INT(d.line, 0);
    CHECK(strcmp(d.file, path) == 0);
    CHECK_STR_CONTAINS(d.msg, "cannot open");

    /* A directory. */
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(tu_load_chip(tmpdir, NULL, &h, &d), -1);
    CHECK_EQ_INT(d.code, DIAG_E_IO);

    /* Over the 64 MiB cap: base followed by comment padding. */
    size_t big = (64u << 20) + 100;
    char *s = malloc(big);
    if (s == NULL)
        abort();
    memset(s, '#', big);
    memcpy(s, base, strlen(base));
    s[big - 1] = '\n';
    CHECK_EQ_INT(load_bytes(s, big, &h, &d), -1);
    CHECK_EQ_INT(d.code, DIAG_E_RANGE);
    CHECK_STR_CONTAINS(d.msg, "larger than");
    free(s);

    /* NULL arguments. */
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(tu_load_chip(NULL, NULL, &h, &d), -1);
    CHECK_EQ_INT(d.code, DIAG_E_USAGE);
    CHECK_EQ_INT(tu_load_chip(tmpfile_, NULL, NULL, &d), -1);
    CHECK_EQ_INT(tu_load_chip(path, NULL, &h, NULL), -1); /* d may be NULL */

    /* The printed form is "file:line: field: message". */
    char *v = variant("    bandwidth_GBps: 3350\n", "    bandwidth_GBps: -5\n");
    CHECK_EQ_INT(load_bytes(v, strlen(v), &h, &d), -1);
    free(v);
    char *out = NULL;
    size_t out_len = 0;
    FILE *mem = open_memstream(&out, &out_len);
    if (mem == NULL)
        abort();
    diag_print(&d, mem);
    fclose(mem);
    char want[256];
    snprintf(want, sizeof want, "%s:29: levels.dram.bandwidth_GBps: must be between 0.001 and 1e+15, got -5\n", tmpfile_);
    CHECK_STR_CONTAINS(out, want);
    free(out);
}

/* No input may crash the loader: every prefix of a shipped config, and
 * every position overwritten with YAML-significant bytes (half of the 12 at
 * each position, alternating, so each byte lands on every other position:
 * the whole set was the slowest test under the sanitizer, and
 * scripts/fuzz.sh fuzzes the loader besides). */
static void test_fuzz(void)
{
    FILE *f = fopen("configs/nvidia-h100-sxm.yaml", "rb");
    CHECK(f != NULL);
    if (f == NULL)
        return;
    static char text[65536];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    CHECK(len > 1000 && len < sizeof text - 1);

    struct hw_config h;
    struct diag d;
    int bad = 0, full_ok = 0;
    for (size_t n = 0; n <= len; n++) {
        int rc = load_bytes(text, n, &h, &d);
        if (rc != 0 && rc != -1)
            bad++;
        if (rc == -1 && (d.code == DIAG_E_OK || d.msg[0] == '\0'))
            bad++;
        if (n == len && rc == 0)
            full_ok = 1;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(full_ok);

    static const char flips[] = {':', '[', '{', '-', '&', '*', '!', '"', '\t', '\0', '\n', '#'};
    static char copy[65536];
    for (size_t i = 0; i < len; i++) {
        for (size_t j = i % 2; j < sizeof flips; j += 2) {
            memcpy(copy, text, len);
            copy[i] = flips[j];
            int rc = load_bytes(copy, len, &h, &d);
            if (rc != 0 && rc != -1)
                bad++;
            if (rc == -1 && d.code == DIAG_E_OK)
                bad++;
        }
    }
    CHECK_EQ_INT(bad, 0);
}

int main(void)
{
    if (tu_mkdtemp(tmpdir, sizeof tmpdir, "strata-cfg") != 0)
        return 2;
    snprintf(tmpfile_, sizeof tmpfile_, "%s/case.yaml", tmpdir);

    test_base_is_valid();
    test_valid_variants();
    test_bad_structure();
    test_bad_values();
    test_bad_families();
    test_files();
    test_fuzz();

    remove(tmpfile_);
    rmdir(tmpdir);
    TEST_MAIN_END();
}
