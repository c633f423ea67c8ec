/* test_badinput_trace.c: every way a trace can be wrong is reported with
 * the right error kind, line and field, and nothing crashes on truncated or
 * mangled input.  Each case's message is printed, which doubles as the
 * list of example messages in traces/README.md. */
#define _DEFAULT_SOURCE /* wait4 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "util.h"
#include "run.h"
#include "trace.h"

static char tmpdir[64];

/* Load a file holding n bytes of text and check the diagnostic. */
static void expect_n(const char *name, const char *text, size_t n, enum diag_code code,
                     int line, const char *field, const char *msg_part)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s.json", tmpdir, name);
    tu_write_bytes(path, text, n);
    struct trace t;
    struct diag d;
    memset(&d, 0, sizeof d);
    memset(&t, 0x5a, sizeof t);
    int failed_before = test_failed_;
    int rc = trace_load(path, &t, &d);
    CHECK_EQ_INT(rc, -1);
    if (rc == 0) {
        trace_free(&t);
    } else {
        CHECK(t.ops == (void *)(uintptr_t)0x5a5a5a5a5a5a5a5aULL); /* *out untouched */
    }
    CHECK_EQ_INT(d.code, code);
    CHECK_EQ_INT(d.line, line);
    CHECK(strcmp(d.field, field) == 0);
    CHECK(strcmp(d.file, path) == 0);
    CHECK(d.msg[0] != '\0');
    if (msg_part != NULL)
        CHECK_STR_CONTAINS(d.msg, msg_part);
    if (test_failed_ != failed_before)
        fprintf(stderr, "  ^ in case %s: got code %s, line %d, field \"%s\": %s\n", name,
                diag_code_name(d.code), d.line, d.field, d.msg);
    printf("%-18s ", name);
    diag_print(&d, stdout);
}

static void expect(const char *name, const char *text, enum diag_code code, int line,
                   const char *field, const char *msg_part)
{
    expect_n(name, text, strlen(text), code, line, field, msg_part);
}

#define HEAD "{\"strata_trace\": 1, \"ops\": [\n"
#define GEN(id) "{\"id\": \"" id "\", \"kind\": \"generic\", \"flops\": 1, \"bytes\": 0"
#define GEMM "{\"id\": \"g\", \"kind\": \"gemm\", \"dtype\": \"bf16\", "

static void test_json_level(void)
{
    expect("malformed",
           "{\"strata_trace\": 1,\n"
           " \"ops\": [\n"
           "  {\"id\": \"a\" \"kind\": \"gemm\"}\n"
           " ]}\n",
           DIAG_E_PARSE, 3, "", "malformed JSON");
    expect("trailing-garbage", HEAD GEN("a") "}]}\n\nx\n", DIAG_E_PARSE, 4, "", "near 'x'");
    expect("truncated", HEAD GEN("a") "}\n", DIAG_E_PARSE, 2, "", "end of file");
    expect("empty", "", DIAG_E_PARSE, 0, "", "empty");
    expect("blank", "\n  \n\t\n", DIAG_E_PARSE, 0, "", "empty");
    expect_n("nul-byte", "{\"strata_trace\": 1,\n\"ops\": []}\0", 31, DIAG_E_PARSE, 2, "",
             "NUL");
    char deep[2100];
    memset(deep, '[', 1001);
    memset(deep + 1001, ']', 1001);
    deep[2002] = '\0';
    expect("too-deep", deep, DIAG_E_PARSE, 1, "", "nesting");
    expect("not-an-object", "[1, 2]\n", DIAG_E_TYPE, 1, "", "JSON object");

    /* a file that is not there, and a directory */
    struct trace t;
    struct diag d;
    char path[128];
    snprintf(path, sizeof path, "%s/no-such-file.json", tmpdir);
    CHECK_EQ_INT(trace_load(path, &t, &d), -1);
    CHECK_EQ_INT(d.code, DIAG_E_IO);
    CHECK_EQ_INT(d.line, 0);
    CHECK(strcmp(d.file, path) == 0);
    CHECK_STR_CONTAINS(d.msg, strerror(ENOENT));
    printf("%-18s ", "nonexistent");
    diag_print(&d, stdout);
    CHECK_EQ_INT(trace_load(tmpdir, &t, &d), -1);
    CHECK_EQ_INT(d.code, DIAG_E_IO);
    CHECK_STR_CONTAINS(d.msg, "directory");
}

static void test_top_level(void)
{
    expect("version-2", "{\"strata_trace\": 2, \"ops\": [], \"new_in_v2\": 1}\n",
           DIAG_E_UNSUPPORTED, 1, "strata_trace", "version 2");
    expect("version-string", "{\"strata_trace\": \"1\", \"ops\": []}\n", DIAG_E_TYPE, 1,
           "strata_trace", NULL);
    expect("no-version", "{\n \"ops\": [" GEN("a") "}]}\n", DIAG_E_MISSING, 1, "strata_trace",
           "strata_trace");
    expect("missing-ops", "{\n \"strata_trace\": 1\n}\n", DIAG_E_MISSING, 1, "ops", NULL);
    expect("empty-ops", "{\"strata_trace\": 1,\n \"ops\": []}\n", DIAG_E_RANGE, 2, "ops",
           "at least one");
    expect("ops-not-list", "{\"strata_trace\": 1,\n \"ops\": {}}\n", DIAG_E_TYPE, 2, "ops",
           NULL);
    expect("unknown-top-key", "{\"strata_trace\": 1,\n \"ops\": [" GEN("a") "}],\n \"opz\": []}\n",
           DIAG_E_UNKNOWN_KEY, 3, "opz", "allowed: strata_trace, name, meta, devices, ops");
    expect("dup-top-key", "{\"strata_trace\": 1,\n \"name\": \"x\",\n \"name\": \"y\", \"ops\": []}\n",
           DIAG_E_DUPLICATE, 3, "name", "first on line 2");
    expect("name-not-string", "{\"strata_trace\": 1, \"name\": 3,\n \"ops\": [" GEN("a") "}]}\n",
           DIAG_E_TYPE, 1, "name", NULL);
    expect("devices-empty", "{\"strata_trace\": 1,\n \"devices\": [],\n \"ops\": [" GEN("a") "}]}",
           DIAG_E_RANGE, 2, "devices", NULL);
    expect("devices-dup", "{\"strata_trace\": 1, \"devices\": [\"gpu0\",\n \"gpu0\"],\n \"ops\": ["
           GEN("a") "}]}", DIAG_E_DUPLICATE, 2, "devices[1]", "twice");
    expect("device-long", "{\"strata_trace\": 1, \"devices\": [\n"
           "\"a-device-name-of-32-characters!!\"],\n \"ops\": [" GEN("a") "}]}",
           DIAG_E_RANGE, 2, "devices[0]", "too long");
    expect("devices-not-list", "{\"strata_trace\": 1, \"devices\": \"gpu0\",\n \"ops\": ["
           GEN("a") "}]}", DIAG_E_TYPE, 1, "devices", NULL);
    expect("meta-tokens", "{\"strata_trace\": 1, \"meta\": {\"by\": \"x\",\n \"tokens\": \"5\"},\n"
           " \"ops\": [" GEN("a") "}]}", DIAG_E_TYPE, 2, "meta.tokens", NULL);
    expect("meta-tokens-neg", "{\"strata_trace\": 1, \"meta\": {\"tokens\": -5},\n"
           " \"ops\": [" GEN("a") "}]}", DIAG_E_RANGE, 1, "meta.tokens", NULL);
    expect("op-not-object", HEAD "  1]}\n", DIAG_E_TYPE, 2, "ops[0]", "object");
}

static void test_common_fields(void)
{
    expect("unknown-op-key",
           HEAD " {\"id\": \"s\", \"kind\": \"softmax\", \"dtype\": \"fp32\", \"rows\": 2, \"cols\": 3,\n"
           "  \"m\": 5}]}\n",
           DIAG_E_UNKNOWN_KEY, 3, "ops[0].m", "for a softmax op");
    expect("wrong-case-key", HEAD GEMM "\"M\": 1, \"n\": 1, \"k\": 1}]}\n", DIAG_E_UNKNOWN_KEY,
           2, "ops[0].M", NULL);
    expect("dup-op-key", HEAD GEMM "\"m\": 1, \"n\": 1, \"k\": 1,\n \"m\": 2}]}\n",
           DIAG_E_DUPLICATE, 3, "ops[0].m", "twice");
    expect("unknown-kind", HEAD GEN("a") "},\n {\"id\": \"b\", \"kind\": \"conv\"}]}\n",
           DIAG_E_UNKNOWN_NAME, 3, "ops[1].kind", "known: gemm, attention");
    expect("kind-not-string", HEAD "{\"id\": \"b\", \"kind\": 3}]}\n", DIAG_E_TYPE, 2,
           "ops[0].kind", NULL);
    /* names reach report.json (which must be UTF-8) and the terminal: an
     * escape sequence or a byte that is not UTF-8 is refused where it is */
    expect("name-escape", HEAD GEN("a") ", \"name\": \"x\\u001b[31mred\"}]}\n", DIAG_E_TYPE, 2,
           "ops[0].name", "byte 1 (0x1b) is not printable UTF-8");
    expect("name-not-utf8", HEAD GEN("a") ", \"name\": \"ab\xff\"}]}\n", DIAG_E_TYPE, 2,
           "ops[0].name", "byte 2 (0xff)");
    expect("name-overlong", HEAD GEN("a") ", \"name\": \"\xc0\xaf\"}]}\n", DIAG_E_TYPE, 2,
           "ops[0].name", "byte 0 (0xc0)");
    expect("name-c1", HEAD GEN("a") ", \"name\": \"\xc2\x9b\"}]}\n", DIAG_E_TYPE, 2,
           "ops[0].name", "byte 0 (0xc2)");
    expect("missing-kind", HEAD "{\"id\": \"b\"}]}\n", DIAG_E_MISSING, 2, "ops[0].kind", NULL);
    expect("missing-id", HEAD "{\"kind\": \"gemm\"}]}\n", DIAG_E_MISSING, 2, "ops[0].id", NULL);
    expect("unknown-dtype", HEAD "{\"id\": \"g\", \"kind\": \"gemm\",\n \"dtype\": \"fp12\", "
           "\"m\": 1, \"n\": 1, \"k\": 1}]}\n", DIAG_E_UNKNOWN_NAME, 3, "ops[0].dtype",
           "known: fp64, fp32");
    expect("missing-dtype", HEAD GEN("a") "},\n {\"id\": \"g\", \"kind\": \"gemm\",\n"
           "  \"m\": 1, \"n\": 1, \"k\": 1}]}\n", DIAG_E_MISSING, 3, "ops[1].dtype", NULL);
    expect("id-fraction", HEAD "{\"id\": 1.5, \"kind\": \"gemm\"}]}\n", DIAG_E_RANGE, 2,
           "ops[0].id", NULL);
    expect("id-negative", HEAD "{\"id\": -1, \"kind\": \"gemm\"}]}\n", DIAG_E_RANGE, 2,
           "ops[0].id", NULL);
    expect("id-bool", HEAD "{\"id\": true, \"kind\": \"gemm\"}]}\n", DIAG_E_TYPE, 2,
           "ops[0].id", NULL);
    expect("id-empty", HEAD "{\"id\": \"\", \"kind\": \"gemm\"}]}\n", DIAG_E_RANGE, 2,
           "ops[0].id", "empty");
    expect("id-too-long", HEAD "{\"id\": \"0123456789012345678901234567890123456789"
           "012345678901234567890123\", \"kind\": \"gemm\"}]}\n", DIAG_E_RANGE, 2, "ops[0].id",
           "too long");
    expect("name-too-long", HEAD GEN("a") ", \"name\": \"" 
           "0123456789012345678901234567890123456789012345678901234567890123456789"
           "01234567890123456789012345\"}]}\n", DIAG_E_RANGE, 2, "ops[0].name", NULL);
    expect("duplicate-id", HEAD GEN("a") "},\n " GEN("a") "}]}\n", DIAG_E_DUPLICATE, 3,
           "ops[1].id", "ops[0] (line 2)");
    expect("duplicate-num-id", HEAD "{\"id\": 5, \"kind\": \"generic\", \"flops\": 1, \"bytes\": 0},\n "
           GEN("5") "}]}\n", DIAG_E_DUPLICATE, 3, "ops[1].id", NULL);
    expect("unknown-device",
           "{\"strata_trace\": 1, \"devices\": [\"gpu0\", \"gpu1\"], \"ops\": [\n"
           GEN("a") ",\n \"device\": \"gpu2\"}]}\n",
           DIAG_E_UNKNOWN_NAME, 3, "ops[0].device", "devices: gpu0, gpu1");
    expect("stream-negative", HEAD GEN("a") ", \"stream\": -1}]}\n", DIAG_E_RANGE, 2,
           "ops[0].stream", NULL);
    expect("stream-string", HEAD GEN("a") ", \"stream\": \"0\"}]}\n", DIAG_E_TYPE, 2,
           "ops[0].stream", NULL);
    expect("measured-negative", HEAD GEN("a") ",\n \"measured_s\": -1}]}\n", DIAG_E_RANGE, 3,
           "ops[0].measured_s", NULL);
    expect("kernel-number", HEAD GEN("a") ",\n \"kernel\": 5}]}\n", DIAG_E_TYPE, 3,
           "ops[0].kernel", "must be a string");
    expect("kernel-too-long",
           HEAD GEN("a") ",\n \"kernel\": \"cutlass_80_tensorop_s1688gemm_nt_align1_and_a_name_far_too_long_for_the_field\"}]}\n",
           DIAG_E_RANGE, 3, "ops[0].kernel", "at most 63");
}

static void test_sizes(void)
{
    expect("missing-field", HEAD GEN("a") "},\n " GEMM "\"m\": 1,\n \"n\": 1}]}\n",
           DIAG_E_MISSING, 3, "ops[1].k", "gemm op needs \"k\"");
    expect("zero-size", HEAD GEMM "\"m\": 0, \"n\": 1, \"k\": 1}]}\n", DIAG_E_RANGE, 2,
           "ops[0].m", ">= 1, got 0");
    expect("negative-size", HEAD GEMM "\"m\": 1,\n \"n\": -5, \"k\": 1}]}\n", DIAG_E_RANGE, 3,
           "ops[0].n", "got -5");
    expect("fractional-size", HEAD GEMM "\"m\": 1, \"n\": 1,\n\n \"k\": 1.5}]}\n", DIAG_E_RANGE,
           4, "ops[0].k", "whole number");
    expect("string-size", HEAD GEMM "\"m\": \"128\", \"n\": 1, \"k\": 1}]}\n", DIAG_E_TYPE, 2,
           "ops[0].m", "string \"128\"");
    expect("null-size", HEAD GEMM "\"m\": null, \"n\": 1, \"k\": 1}]}\n", DIAG_E_TYPE, 2,
           "ops[0].m", NULL);
    expect("huge-size", HEAD GEMM "\"m\": 1125899906842625, \"n\": 1, \"k\": 1}]}\n",
           DIAG_E_RANGE, 2, "ops[0].m", "<= 1125899906842624");
    expect("inf-size", HEAD GEMM "\"m\": 1e999, \"n\": 1, \"k\": 1}]}\n", DIAG_E_RANGE, 2,
           "ops[0].m", NULL);
    expect("gemm-batch-zero", HEAD GEMM "\"m\": 1, \"n\": 1, \"k\": 1, \"batch\": 0}]}\n",
           DIAG_E_RANGE, 2, "ops[0].batch", NULL);
    /* each field fits, their product does not (it wrapped 64 bits or asked
     * for terabytes of bookkeeping) */
    expect("gemm-product", HEAD GEMM "\"m\": 512, \"n\": 14336, \"k\": 4096,\n \"batch\": 2147483647}]}\n",
           DIAG_E_RANGE, 2, "ops[0].batch", "at most 2^50 elements");
    expect("norm-product",
           HEAD "{\"id\": \"n\", \"kind\": \"norm\", \"dtype\": \"bf16\", \"rows\": 1099511627776,"
                " \"cols\": 33554432}]}\n",
           DIAG_E_RANGE, 2, "ops[0].cols", "rows x cols");
    expect("gemm-k-loop", HEAD GEMM "\"m\": 1, \"n\": 1, \"k\": 17179869185}]}\n", DIAG_E_RANGE, 2,
           "ops[0].k", "at most 2^34");
    expect("fixed-too-long", HEAD GEN("a") ", \"fixed_s\": 1e300}]}\n", DIAG_E_RANGE, 2,
           "ops[0].fixed_s", "<= 1000000");
    expect("ew-flops-huge",
           HEAD "{\"id\": \"e\", \"kind\": \"elementwise\", \"dtype\": \"bf16\", \"elements\": 8,"
                " \"flops_per_element\": 1e300}]}\n",
           DIAG_E_RANGE, 2, "ops[0].flops_per_element", "<= 1e+30");
}

static void test_kinds(void)
{
#define ATT "{\"id\": \"at\", \"kind\": \"attention\", \"dtype\": \"bf16\", \"batch\": 1, " \
            "\"heads\": 32, \"q_len\": 1, \"kv_len\": 8, \"head_dim\": 64"
    expect("kv-heads", HEAD ATT ",\n \"kv_heads\": 5}]}\n", DIAG_E_RANGE, 3, "ops[0].kv_heads",
           "must divide heads");
    expect("paged-bwd", HEAD ATT ", \"pass\": \"bwd\", \"page_size\": 16}]}\n",
           DIAG_E_UNSUPPORTED, 2, "ops[0].page_size", "for inference");
    expect("paged-range", HEAD ATT ", \"page_size\": 70000}]}\n", DIAG_E_RANGE, 2,
           "ops[0].page_size", "65535");
    expect("attn-dropout-1", HEAD ATT ", \"dropout\": 1}]}\n", DIAG_E_RANGE, 2, "ops[0].dropout",
           "below 1");
    expect("ew-dropout-no-out", HEAD "{\"id\": \"e\", \"kind\": \"elementwise\", \"dtype\": \"fp32\","
           " \"elements\": 8, \"outputs\": 0, \"dropout\": 0.1}]}\n", DIAG_E_RANGE, 2,
           "ops[0].dropout", "writes none");
    expect("attn-causal-q", HEAD "{\"id\": \"at\", \"kind\": \"attention\", \"dtype\": \"bf16\","
           " \"batch\": 1, \"heads\": 1, \"q_len\": 9, \"kv_len\": 8, \"head_dim\": 64,"
           " \"causal\": true}]}\n", DIAG_E_RANGE, 2, "ops[0].q_len", "q_len <= kv_len");
    expect("meta-duplicate", "{\"strata_trace\": 1, \"meta\": {\"tokens\": 1,\n\"tokens\": 2},\n\"ops\": [\n"
           "{\"id\": \"a\", \"kind\": \"memcpy\", \"bytes\": 1, \"direction\": \"h2d\"}]}\n",
           DIAG_E_DUPLICATE, 2, "meta.tokens", "first given on line 1");
    expect("attn-impl", HEAD ATT ", \"impl\": \"fast\"}]}\n", DIAG_E_UNKNOWN_NAME, 2,
           "ops[0].impl", "flash, naive");
    expect("attn-causal", HEAD ATT ", \"causal\": \"yes\"}]}\n", DIAG_E_TYPE, 2,
           "ops[0].causal", NULL);
    expect("attn-missing", HEAD "{\"id\": \"at\", \"kind\": \"attention\", \"dtype\": \"bf16\","
           " \"heads\": 1, \"q_len\": 1, \"kv_len\": 1, \"head_dim\": 1}]}\n", DIAG_E_MISSING, 2,
           "ops[0].batch", NULL);
#undef ATT
    expect("memcpy-direction", HEAD "{\"id\": \"c\", \"kind\": \"memcpy\", \"bytes\": 8,\n"
           " \"direction\": \"h2h\"}]}\n", DIAG_E_UNKNOWN_NAME, 3, "ops[0].direction",
           "h2d, d2h, d2d");
    expect("memcpy-no-direction", HEAD "{\"id\": \"c\", \"kind\": \"memcpy\", \"bytes\": 8}]}\n",
           DIAG_E_MISSING, 2, "ops[0].direction", NULL);
    expect("generic-zero", HEAD "{\"id\": \"z\", \"kind\": \"generic\", \"flops\": 0,"
           " \"bytes\": 0}]}\n", DIAG_E_RANGE, 2, "ops[0].flops", "both are 0");
    expect("generic-negative", HEAD "{\"id\": \"z\", \"kind\": \"generic\", \"flops\": 1,"
           " \"bytes\": -1}]}\n", DIAG_E_RANGE, 2, "ops[0].bytes", NULL);
    expect("ew-no-tensors", HEAD "{\"id\": \"e\", \"kind\": \"elementwise\", \"dtype\": \"fp32\","
           " \"elements\": 4, \"inputs\": 0, \"outputs\": 0}]}\n", DIAG_E_RANGE, 2,
           "ops[0].inputs", "inputs + outputs");
    expect("ew-fpe-string", HEAD "{\"id\": \"e\", \"kind\": \"elementwise\", \"dtype\": \"fp32\","
           " \"elements\": 4, \"flops_per_element\": \"2\"}]}\n", DIAG_E_TYPE, 2,
           "ops[0].flops_per_element", NULL);
    expect("emb-other-kind-key", HEAD "{\"id\": \"e\", \"kind\": \"embedding\", \"dtype\": \"fp32\","
           " \"tokens\": 4, \"dim\": 8, \"rows\": 2}]}\n", DIAG_E_UNKNOWN_KEY, 2, "ops[0].rows",
           NULL);
}

static void test_deps(void)
{
    expect("unknown-dep", HEAD GEN("a") "},\n " GEN("b") ", \"deps\": [\"a\",\n \"nope\"]}]}\n",
           DIAG_E_UNKNOWN_NAME, 4, "ops[1].deps[1]", "no op has the id \"nope\"");
    expect("unknown-num-dep", HEAD GEN("a") ", \"deps\": [42]}]}\n", DIAG_E_UNKNOWN_NAME, 2,
           "ops[0].deps[0]", "\"42\"");
    expect("dup-dep", HEAD GEN("a") "},\n " GEN("b") ", \"deps\": [\"a\", \"a\"]}]}\n",
           DIAG_E_DUPLICATE, 3, "ops[1].deps[1]", NULL);
    expect("deps-not-list", HEAD GEN("a") ", \"deps\": \"b\"}]}\n", DIAG_E_TYPE, 2,
           "ops[0].deps", NULL);
    expect("dep-bool", HEAD GEN("a") ", \"deps\": [true]}]}\n", DIAG_E_TYPE, 2,
           "ops[0].deps[0]", NULL);
    expect("two-cycle", HEAD GEN("a") ", \"deps\": [\"b\"]},\n " GEN("b") ", \"deps\": [\"a\"]}]}\n",
           DIAG_E_CYCLE, 2, "ops[0].deps", "\"a\" -> \"b\" -> \"a\"");
    expect("self-cycle", HEAD GEN("a") "},\n " GEN("b") ",\n \"deps\": [\"b\"]}]}\n",
           DIAG_E_CYCLE, 4, "ops[1].deps[0]", "itself");
    /* the cycle y <-> z sits behind x; the report names y, the first op on it */
    expect("cycle-behind",
           HEAD GEN("x") ", \"deps\": [\"y\"]},\n"
           " " GEN("y") ",\n \"deps\": [\"z\"]},\n"
           " " GEN("z") ", \"deps\": [\"y\"]}]}\n",
           DIAG_E_CYCLE, 4, "ops[1].deps", "\"y\" -> \"z\" -> \"y\"");
    expect("three-cycle",
           HEAD GEN("p") ", \"deps\": [\"r\"]},\n"
           " " GEN("q") ", \"deps\": [\"p\"]},\n"
           " " GEN("r") ", \"deps\": [\"q\"]}]}\n",
           DIAG_E_CYCLE, 2, "ops[0].deps", "\"p\" -> \"r\" -> \"q\" -> \"p\"");
}

/* A valid trace with every kind, for the truncation and mutation runs. */
static const char valid[] =
    "{\"strata_trace\": 1, \"name\": \"fuzz\", \"meta\": {\"a\": [1, 2.5, null]},\n"
    " \"devices\": [\"gpu0\", \"gpu1\"],\n"
    " \"ops\": [\n"
    "  {\"id\": \"e\", \"kind\": \"embedding\", \"dtype\": \"bf16\", \"tokens\": 16, \"dim\": 64},\n"
    "  {\"id\": 2, \"kind\": \"gemm\", \"dtype\": \"bf16\", \"deps\": [\"e\"], \"m\": 16, \"n\": 64,"
    " \"k\": 64, \"batch\": 2},\n"
    "  {\"id\": \"at\", \"kind\": \"attention\", \"dtype\": \"fp16\", \"deps\": [2], \"batch\": 1,"
    " \"heads\": 8, \"kv_heads\": 2, \"q_len\": 16, \"kv_len\": 16, \"head_dim\": 8,"
    " \"causal\": true, \"impl\": \"flash\", \"measured_s\": 1e-5},\n"
    "  {\"id\": \"sm\", \"kind\": \"softmax\", \"dtype\": \"fp32\", \"rows\": 4, \"cols\": 4,"
    " \"device\": \"gpu1\", \"stream\": 3},\n"
    "  {\"id\": \"n\", \"kind\": \"norm\", \"dtype\": \"fp32\", \"rows\": 4, \"cols\": 4},\n"
    "  {\"id\": \"r\", \"kind\": \"reduction\", \"dtype\": \"fp32\", \"rows\": 4, \"cols\": 4},\n"
    "  {\"id\": \"w\", \"kind\": \"elementwise\", \"dtype\": \"fp32\", \"elements\": 4,"
    " \"inputs\": 2, \"outputs\": 1, \"flops_per_element\": 2},\n"
    "  {\"id\": \"c\", \"kind\": \"memcpy\", \"bytes\": 64, \"direction\": \"d2d\","
    " \"deps\": [\"sm\", \"n\"]},\n"
    "  {\"id\": \"g\", \"kind\": \"generic\", \"flops\": 10, \"bytes\": 20, \"name\": \"misc\"}\n"
    " ]}\n";

static void test_valid_baseline(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/valid.json", tmpdir);
    tu_write_bytes(path, valid, strlen(valid));
    struct trace t;
    int rc = tu_load_trace(path, &t);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0)
        return;
    CHECK_EQ_INT(t.nops, 9);
    trace_free(&t);

    /* the largest size allowed, 2^50 */
    const char *big = HEAD GEMM "\"m\": 1125899906842624, \"n\": 1, \"k\": 1}]}\n";
    tu_write_bytes(path, big, strlen(big));
    rc = tu_load_trace(path, &t);
    CHECK_EQ_INT(rc, 0);
    if (rc == 0) {
        CHECK(t.ops[0].u.gemm.m == (uint64_t)1 << 50);
        trace_free(&t);
    }
}

static void test_truncation(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/trunc.json", tmpdir);
    size_t n = strlen(valid);
    int ok = 0, rejected = 0, bad_diag = 0;
    for (size_t cut = 0; cut <= n; cut++) {
        tu_write_bytes(path, valid, cut);
        struct trace t;
        struct diag d;
        memset(&d, 0, sizeof d);
        if (trace_load(path, &t, &d) == 0) {
            ok++;
            trace_free(&t);
        } else {
            rejected++;
            bad_diag += d.code == DIAG_E_OK || d.msg[0] == '\0';
        }
    }
    /* Only the whole text, and the whole text less its final newline, load. */
    CHECK_EQ_INT(ok, 2);
    CHECK_EQ_INT(rejected, (int)n - 1);
    CHECK_EQ_INT(bad_diag, 0);
}

static void test_mutations(void)
{
    static const char alphabet[] = "{}[]\",:0123456789-+.eE tfnul\n\\ax\001";
    char path[128];
    snprintf(path, sizeof path, "%s/mut.json", tmpdir);
    size_t n = strlen(valid);
    char *buf = malloc(n + 1);
    if (buf == NULL)
        abort();
    uint64_t rng = 12345;
    int loaded = 0, bad_diag = 0;
    for (int iter = 0; iter < 3000; iter++) {
        memcpy(buf, valid, n + 1);
        int edits = 1 + iter % 3;
        for (int e = 0; e < edits; e++) {
            rng = rng * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
            size_t at = (size_t)(rng >> 33) % n;
            buf[at] = alphabet[(rng >> 20) % (sizeof alphabet - 1)];
        }
        tu_write_bytes(path, buf, n);
        struct trace t;
        struct diag d;
        memset(&d, 0, sizeof d);
        if (trace_load(path, &t, &d) == 0) {
            loaded++;
            /* whatever loads must also write and load again */
            char out[160];
            snprintf(out, sizeof out, "%s/mut-out.json", tmpdir);
            struct trace t2;
            int wrc = trace_write(&t, out, &d);
            CHECK_EQ_INT(wrc, 0);
            if (wrc == 0) {
                int lrc = trace_load(out, &t2, &d);
                CHECK_EQ_INT(lrc, 0);
                if (lrc == 0) {
                    CHECK_EQ_INT(t2.nops, t.nops);
                    trace_free(&t2);
                } else {
                    diag_print(&d, stderr);
                }
            }
            trace_free(&t);
        } else {
            bad_diag += d.code == DIAG_E_OK || d.msg[0] == '\0';
        }
    }
    free(buf);
    CHECK_EQ_INT(bad_diag, 0);
    printf("mutations: %d of 3000 still loaded\n", loaded);
}

static void test_write_failures(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/valid.json", tmpdir);
    tu_write_bytes(path, valid, strlen(valid));
    struct trace t;
    struct diag d;
    if (trace_load(path, &t, &d) != 0) {
        CHECK(0);
        return;
    }
    int before = tu_count_entries(tmpdir);

    /* into a directory that does not exist */
    char out[192];
    snprintf(out, sizeof out, "%s/no-such-dir/out.json", tmpdir);
    CHECK_EQ_INT(trace_write(&t, out, &d), -1);
    CHECK_EQ_INT(d.code, DIAG_E_IO);
    CHECK(strcmp(d.file, out) == 0);
    printf("%-18s ", "write-no-dir");
    diag_print(&d, stdout);
    struct stat st;
    CHECK(stat(out, &st) != 0);
    CHECK_EQ_INT(tu_count_entries(tmpdir), before);

    /* over a directory: the rename fails and the temp file is removed */
    char sub[160];
    snprintf(sub, sizeof sub, "%s/a-directory", tmpdir);
    CHECK_EQ_INT(mkdir(sub, 0755), 0);
    CHECK_EQ_INT(trace_write(&t, sub, &d), -1);
    CHECK_EQ_INT(d.code, DIAG_E_IO);
    CHECK_EQ_INT(tu_count_entries(tmpdir), before + 1);
    CHECK_EQ_INT(tu_count_entries(sub), 0);

    /* an inconsistent trace built in code is refused before any file exists */
    snprintf(out, sizeof out, "%s/bad.json", tmpdir);
    uint32_t saved = t.ops[1].device;
    t.ops[1].device = 7;
    CHECK_EQ_INT(trace_write(&t, out, &d), -1);
    CHECK_EQ_INT(d.code, DIAG_E_RANGE);
    CHECK(strcmp(d.field, "ops[1]") == 0);
    t.ops[1].device = saved;
    uint64_t m = t.ops[1].u.gemm.m;
    t.ops[1].u.gemm.m = 0;
    CHECK_EQ_INT(trace_write(&t, out, &d), -1);
    CHECK_EQ_INT(d.code, DIAG_E_RANGE);
    t.ops[1].u.gemm.m = m;
    CHECK(stat(out, &st) != 0);
    CHECK_EQ_INT(tu_count_entries(tmpdir), before + 1);

    trace_free(&t);
}

/* Ops that take no time at all (fixed_s 0, and no launch overhead, as in
 * the "no launch overhead" what-if of --out) ran into the time-sharing
 * sweep with their end sorted before their start and crashed it. */
static void test_zero_time_ops(void)
{
    static const char zero[] =
        "{\"strata_trace\": 1, \"name\": \"zero\", \"devices\": [\"gpu0\"], \"ops\": [\n"
        "{\"id\": \"a\", \"kind\": \"generic\", \"device\": \"gpu0\", \"fixed_s\": 0, \"flops\": 0, \"bytes\": 0},\n"
        "{\"id\": \"b\", \"kind\": \"generic\", \"device\": \"gpu0\", \"fixed_s\": 0, \"flops\": 0, \"bytes\": 0,"
        " \"deps\": [\"a\"]},\n"
        "{\"id\": \"c\", \"kind\": \"elementwise\", \"device\": \"gpu0\", \"dtype\": \"fp32\", \"elements\": 1000,"
        " \"inputs\": 1, \"outputs\": 1, \"deps\": [\"b\"]}]}\n";
    char path[128];
    snprintf(path, sizeof path, "%s/zero.json", tmpdir);
    tu_write_file(path, zero);
    struct trace t;
    struct hw_config cfg;
    if (tu_load_trace(path, &t) != 0 || tu_load_cfg("configs/nvidia-h100-sxm.yaml", &cfg) != 0) {
        CHECK(0);
        return;
    }
    cfg.launch_overhead_ps = 0;
    struct run_result r;
    struct diag d;
    CHECK_EQ_INT(run_trace(&cfg, &t, &r, &d), 0);
    CHECK(r.total_ps > 0);
    CHECK(run_op_end(&r, 0) == run_op_start(&r, 0));
    run_result_free(&r);
    trace_free(&t);
}

/* Each device registers its own engine components; more than 8 devices
 * once overflowed a fixed table of 64 and aborted. */
static void test_many_devices(void)
{
    enum { NDEV = 300 };
    char *text = malloc(64 * 1024), path[128];
    size_t w = (size_t)snprintf(text, 64 * 1024, "{\"strata_trace\": 1, \"devices\": [");
    for (int i = 0; i < NDEV; i++)
        w += (size_t)snprintf(text + w, 64 * 1024 - w, "%s\"d%d\"", i ? ", " : "", i);
    w += (size_t)snprintf(text + w, 64 * 1024 - w, "], \"ops\": [");
    for (int i = 0; i < NDEV; i++)
        w += (size_t)snprintf(text + w, 64 * 1024 - w,
                              "%s{\"id\": \"o%d\", \"kind\": \"gemm\", \"device\": \"d%d\", \"dtype\": \"bf16\","
                              " \"m\": 64, \"n\": 64, \"k\": 64}",
                              i ? ", " : "", i, i);
    snprintf(text + w, 64 * 1024 - w, "]}\n");
    snprintf(path, sizeof path, "%s/many-devices.json", tmpdir);
    tu_write_file(path, text);
    free(text);
    struct trace t;
    struct hw_config cfg;
    if (tu_load_trace(path, &t) != 0 || tu_load_cfg("configs/nvidia-h100-sxm.yaml", &cfg) != 0) {
        CHECK(0);
        return;
    }
    struct run_result r;
    struct diag d;
    CHECK_EQ_INT(run_trace(&cfg, &t, &r, &d), 0);
    CHECK(r.total_ps > 0 && run_op_end(&r, NDEV - 1) > 0);
    run_result_free(&r);
    trace_free(&t);
}

/* Memory grows with devices plus ops, not their product (issue 17.3): each
 * device once kept a 4 KB plan for every op of the trace (65536 one-op
 * devices: over 24 GB).  The peak resident size of `strata run` on 4096
 * and 16384 one-op devices, in a child process each: four times the
 * devices may cost at most five times the memory, and 16384 stay under
 * 1.5 GB (about 0.4 GB in the Release build). */
static long run_maxrss_kb(int ndev)
{
    char path[128];
    snprintf(path, sizeof path, "%s/dev%d.json", tmpdir, ndev);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "{\"strata_trace\": 1, \"devices\": [");
    for (int i = 0; i < ndev; i++)
        fprintf(f, "%s\"d%d\"", i ? ", " : "", i);
    fprintf(f, "], \"ops\": [");
    for (int i = 0; i < ndev; i++)
        fprintf(f, "%s{\"id\": \"o%d\", \"kind\": \"gemm\", \"device\": \"d%d\", "
                   "\"dtype\": \"bf16\", \"m\": 64, \"n\": 64, \"k\": 64}\n", i ? ", " : "", i, i);
    fprintf(f, "]}\n");
    fclose(f);
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        execl(STRATA_BINARY, STRATA_BINARY, "run", "--hw", "configs/nvidia-h100-sxm.yaml",
              "--trace", path, "--quiet", (char *)NULL);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        return -1;
    return ru.ru_maxrss;
}

static void test_memory_scales(void)
{
    long small = run_maxrss_kb(4096), big = run_maxrss_kb(16384);
    printf("peak memory: 4096 devices %ld KB, 16384 devices %ld KB\n", small, big);
    CHECK(small > 0 && big > 0);
    CHECK(big < 5 * small);
    CHECK(big < 1500 * 1024);
}

/* An error deep in a big ops array, one op a line: the line and the op are
 * the last op's, whether the op is read without cJSON (plain JSON) or by
 * it (an escape), and a malformed op gets the whole text's diagnostic. */
static void test_deep_errors(void)
{
    enum { N = 50000 };
    const char *const last[] = {
        "{\"id\": \"x\", \"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": \"64\", \"n\": 64, \"k\": 64}",
        "{\"id\": \"\\u0078\", \"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 0, \"n\": 64, \"k\": 64}",
        "{\"id\": \"o0\", \"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 64, \"n\": 64, \"k\": 64}",
        "{\"id\": \"x\", \"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 64 \"n\": 64, \"k\": 64}",
    };
    const enum diag_code code[] = {DIAG_E_TYPE, DIAG_E_RANGE, DIAG_E_DUPLICATE, DIAG_E_PARSE};
    const char *const field[] = {"ops[49999].m", "ops[49999].m", "ops[49999].id", ""};
    size_t cap = (size_t)N * 100 + 256;
    char *text = malloc(cap);
    for (unsigned c = 0; c < sizeof last / sizeof last[0]; c++) {
        size_t n = (size_t)snprintf(text, cap, "%s", HEAD);
        for (unsigned i = 0; i + 1 < N; i++)
            n += (size_t)snprintf(text + n, cap - n, "{\"id\": \"o%u\", \"kind\": \"gemm\", "
                                  "\"dtype\": \"bf16\", \"m\": 64, \"n\": 64, \"k\": 64},\n", i);
        n += (size_t)snprintf(text + n, cap - n, "%s\n]}\n", last[c]);
        char name[32];
        snprintf(name, sizeof name, "deep-%u", c);
        /* HEAD is line 1, op i is line i + 2 */
        expect_n(name, text, n, code[c], N + 1, field[c], NULL);
    }
    free(text);
}

/* An op far too large for the chip stops the run with an error once the
 * simulated time would pass 2^62 ps (it used to wrap around and abort or
 * spin); one past the tile bookkeeping's limits is refused up front. */
static void test_run_limits(void)
{
    struct hw_config cfg;
    if (tu_load_cfg("configs/nvidia-h100-sxm.yaml", &cfg) != 0) {
        CHECK(0);
        return;
    }
    static const char *const texts[] = {
        HEAD "{\"id\": \"a\", \"kind\": \"generic\", \"flops\": 1e25, \"bytes\": 0}]}\n",
        HEAD "{\"id\": \"a\", \"kind\": \"generic\", \"flops\": 0, \"bytes\": 1e29}]}\n",
        HEAD GEMM "\"m\": 33554432, \"n\": 33554432, \"k\": 1}]}\n",
    };
    static const char *const want[] = {"simulated time passed", "simulated time passed",
                                       "too large to simulate"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/limit%zu.json", tmpdir, i);
        tu_write_file(path, texts[i]);
        struct trace t;
        if (tu_load_trace(path, &t) != 0) {
            CHECK(0);
            continue;
        }
        struct run_result r;
        struct diag d;
        memset(&d, 0, sizeof d);
        CHECK_EQ_INT(run_trace(&cfg, &t, &r, &d), -1);
        CHECK_EQ_INT(d.code, DIAG_E_RANGE);
        CHECK_STR_CONTAINS(d.msg, want[i]);
        printf("%-18s ", "run-limit");
        diag_print(&d, stdout);
        trace_free(&t);
    }
}

int main(void)
{
    if (tu_mkdtemp(tmpdir, sizeof tmpdir, "strata-badinput-trace") != 0)
        return 1;
    test_json_level();
    test_top_level();
    test_common_fields();
    test_sizes();
    test_kinds();
    test_deps();
    test_valid_baseline();
    test_truncation();
    test_mutations();
    test_write_failures();
    test_zero_time_ops();
    test_many_devices();
    test_memory_scales();
    test_deep_errors();
    test_run_limits();
    tu_rmtree(tmpdir);
    TEST_MAIN_END();
}
