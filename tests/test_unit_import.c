/* test_unit_import.c: the PyTorch importers on the real traces in
 * ../shared/traces/pytorch (skipped when absent).  For each Kineto trace the
 * number of ops and of GEMMs is recomputed here by a different (brute-force)
 * owner search, and no GEMM is counted at both a parent and its child.
 * Also: every imported trace writes and loads back, and broken inputs
 * (cut in half, wrong types, not a trace) give an error or a warning
 * count, never a crash. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <sys/stat.h>

#include "gz.h"
#include "import.h"
#include "opmap.h"
#include "test.h"
#include "util.h"

#define SHARED "../shared/traces/pytorch/"

static int is_gemm_name(const char *n)
{
    static const char *const g[] = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm",
                                    "aten::matmul", "aten::linear", "aten::addbmm"};
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        if (strcmp(n, g[i]) == 0)
            return 1;
    return 0;
}

static const char *cat(const cJSON *e)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "cat");
    return cJSON_IsString(c) ? c->valuestring : "";
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(it) ? it->valuedouble : -1;
}

/* Independent count: owners found by scanning every CPU op (O(n^2)). */
static void check_kineto(const char *file)
{
    char path[256];
    snprintf(path, sizeof path, SHARED "%s", file);
    struct diag d;
    struct trace t;
    struct import_stats st;
    CHECK_EQ_INT(import_kineto(path, &t, &st, &d), 0);
    char *text;
    size_t len;
    CHECK_EQ_INT(gz_read_all(path, &text, &len, &d), 0);
    cJSON *root = cJSON_Parse(text);
    free(text);
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(root, "traceEvents"), *e, *c, *r;
    int owners = 0, orphans = 0, copies = 0, gemm_owners = 0, nested_gemm = 0, syncs = 0;
    /* mark owners with a number field we add to the CPU op object */
    cJSON_ArrayForEach(e, ev)
    {
        if (strcmp(cat(e), "gpu_memcpy") == 0 || strcmp(cat(e), "gpu_memset") == 0) {
            copies++;
            continue;
        }
        if (strcmp(cat(e), "cuda_sync") == 0) {
            const cJSON *k = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(e, "args"), "cuda_sync_kind");
            static const char *const kinds[] = {"Stream Wait Event", "Stream Sync", "Event Sync",
                                                "Context Sync"};
            for (size_t i = 0; i < 4; i++)
                syncs += cJSON_IsString(k) && strcmp(k->valuestring, kinds[i]) == 0;
            continue;
        }
        if (strcmp(cat(e), "kernel") != 0)
            continue;
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(e, "args");
        double ext = num(a, "External id"), corr = num(a, "correlation");
        const cJSON *owner = NULL;
        cJSON_ArrayForEach(c, ev) /* by External id */
        {
            if (strcmp(cat(c), "cpu_op") == 0 &&
                num(cJSON_GetObjectItemCaseSensitive(c, "args"), "External id") == ext) {
                owner = c;
                break;
            }
        }
        if (owner == NULL) { /* by the launch call's thread and time */
            cJSON_ArrayForEach(r, ev)
            {
                if (strcmp(cat(r), "cuda_runtime") != 0 ||
                    num(cJSON_GetObjectItemCaseSensitive(r, "args"), "correlation") != corr)
                    continue;
                double t0 = num(r, "ts"), best = -1;
                cJSON_ArrayForEach(c, ev)
                {
                    if (strcmp(cat(c), "cpu_op") != 0 || num(c, "pid") != num(r, "pid") ||
                        num(c, "tid") != num(r, "tid"))
                        continue;
                    double s = num(c, "ts"), f = s + num(c, "dur");
                    if (s <= t0 && t0 <= f && s > best) {
                        best = s;
                        owner = c;
                    }
                }
                break;
            }
        }
        if (owner == NULL) {
            orphans++;
            continue;
        }
        if (cJSON_GetObjectItemCaseSensitive(owner, "strata_test_owner") == NULL) {
            cJSON_AddNumberToObject((cJSON *)(uintptr_t)owner, "strata_test_owner", 1);
            owners++;
            const cJSON *dims = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(owner, "args"), "Input Dims");
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(owner, "name");
            int shaped = 0;
            const cJSON *x;
            cJSON_ArrayForEach(x, dims) if (cJSON_GetArraySize(x) >= 1) shaped++;
            if (is_gemm_name(nm->valuestring) && shaped >= 2)
                gemm_owners++;
        }
    }
    /* no GEMM owner lies inside another GEMM owner on the same thread */
    cJSON_ArrayForEach(c, ev)
    {
        if (!cJSON_GetObjectItemCaseSensitive(c, "strata_test_owner") ||
            !is_gemm_name(cJSON_GetObjectItemCaseSensitive(c, "name")->valuestring))
            continue;
        cJSON_ArrayForEach(r, ev)
        {
            if (r == c || !cJSON_GetObjectItemCaseSensitive(r, "strata_test_owner") ||
                !is_gemm_name(cJSON_GetObjectItemCaseSensitive(r, "name")->valuestring) ||
                num(r, "tid") != num(c, "tid") || num(r, "pid") != num(c, "pid"))
                continue;
            if (num(c, "ts") <= num(r, "ts") && num(r, "ts") + num(r, "dur") <= num(c, "ts") + num(c, "dur") &&
                !(num(c, "ts") == num(r, "ts") && num(c, "dur") == num(r, "dur")))
                nested_gemm++;
        }
    }
    printf("  %s: %u ops (%d owners + %d orphan kernels + %d copies), %u gemm (%d counted here)\n",
           file, t.nops, owners, orphans, copies, st.by_kind[OP_GEMM], gemm_owners);
    CHECK_EQ_INT(t.nops, owners + orphans + copies);
    CHECK_EQ_INT(st.owners, owners);
    CHECK_EQ_INT(st.by_kind[OP_GEMM], gemm_owners);
    CHECK_EQ_INT(nested_gemm, 0);
    CHECK_EQ_INT(st.syncs, syncs);
    printf("  %s: %d synchronisation events -> %u dependencies between streams\n", file, syncs,
           st.sync_deps);
    for (uint32_t i = 0; i < t.nops; i++) /* each points back to an op of another stream */
        for (uint32_t j = 0; j < t.ops[i].ndeps; j++) {
            uint32_t on = t.deps[t.ops[i].deps_off + j];
            CHECK(on < i && (t.ops[on].stream != t.ops[i].stream || t.ops[on].device != t.ops[i].device));
        }
    /* the trace it makes is a valid strata trace */
    char out[128];
    snprintf(out, sizeof out, "/tmp/strata-imp-%d.json", (int)getpid());
    CHECK_EQ_INT(trace_write(&t, out, &d), 0);
    struct trace t2;
    CHECK_EQ_INT(trace_load(out, &t2, &d), 0);
    CHECK_EQ_INT(t2.nops, t.nops);
    /* each op keeps the family of its longest kernel, through the file */
    uint32_t named = 0;
    for (uint32_t i = 0; i < t.nops && i < t2.nops; i++) {
        named += op_kernel(&t, &t.ops[i])[0] != '\0';
        CHECK(strcmp(op_kernel(&t, &t.ops[i]), op_kernel(&t2, &t2.ops[i])) == 0);
    }
    CHECK_EQ_INT(named, t.nops);
    trace_free(&t2);
    remove(out);
    cJSON_Delete(root);
    trace_free(&t);
}

static void check_broken(void)
{
    char dir[64] = "/tmp/strata-impb-XXXXXX", p[256], cmd[512];
    CHECK(mkdtemp(dir) != NULL);
    struct diag d;
    struct trace t;
    memset(&t, 0, sizeof t);
    struct import_stats st;
    /* gzip cut in half */
    snprintf(cmd, sizeof cmd, "head -c 60000 " SHARED "a100-train-rank0-shapes.json.gz > %s/cut.json.gz", dir);
    tu_sh(cmd);
    snprintf(p, sizeof p, "%s/cut.json.gz", dir);
    CHECK_EQ_INT(import_pytorch(p, &t, &st, &d), -1);
    CHECK(d.code == DIAG_E_PARSE);
    /* JSON cut in half */
    snprintf(cmd, sizeof cmd, "zcat " SHARED "mi250-toy-train.json.gz | head -c 30000 > %s/cut.json", dir);
    tu_sh(cmd);
    snprintf(p, sizeof p, "%s/cut.json", dir);
    CHECK_EQ_INT(import_pytorch(p, &t, &st, &d), -1);
    CHECK(d.code == DIAG_E_PARSE && d.line > 0);
    /* wrong types: counted and skipped */
    snprintf(p, sizeof p, "%s/types.json", dir);
    tu_write_file(p, "{\"traceEvents\": [\n"
                     "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"ts\": \"x\", \"dur\": 3},\n"
                     "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": \"y\", \"args\": {}},\n"
                     "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k2\", \"ts\": 5, \"dur\": 2, \"args\": {\"stream\": 7}},\n"
                     "7]}\n");
    CHECK_EQ_INT(import_pytorch(p, &t, &st, &d), 0);
    CHECK_EQ_INT(st.malformed, 3);
    CHECK_EQ_INT(st.orphan_kernels, 1);
    CHECK_EQ_INT(t.nops, 1);
    trace_free(&t);
    /* not a trace */
    snprintf(p, sizeof p, "%s/other.json", dir);
    tu_write_file(p, "{\"strata_trace\": 1, \"ops\": []}\n");
    CHECK_EQ_INT(import_pytorch(p, &t, &st, &d), -1);
    CHECK(d.code == DIAG_E_UNSUPPORTED);
    /* no kernels at all */
    snprintf(p, sizeof p, "%s/empty.json", dir);
    tu_write_file(p, "{\"traceEvents\": []}\n");
    CHECK_EQ_INT(import_pytorch(p, &t, &st, &d), -1);
    CHECK_EQ_INT(import_pytorch("/nonexistent.json.gz", &t, &st, &d), -1);
    CHECK(d.code == DIAG_E_IO);
    /* durations out of range (1e308 us, negative): skipped and counted, and the trace
     * written loads again (measured_s and fixed_s stay within TRACE_MAX_OP_S) */
    snprintf(p, sizeof p, "%s/dur.json", dir);
    tu_write_file(p, "{\"traceEvents\": [\n"
                     "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"huge\", \"ts\": 1, \"dur\": 1e308, \"args\": {}},\n"
                     "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"neg\", \"ts\": 2, \"dur\": -5, \"args\": {}},\n"
                     "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD\", \"ts\": 3, \"dur\": 1e300, \"args\": {\"bytes\": 64}},\n"
                     "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::relu\", \"ts\": 9, \"dur\": 20, \"pid\": 1, \"tid\": 1, \"args\": {\"External id\": 5}},\n"
                     "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\", \"ts\": 10, \"dur\": 9e11, \"args\": {\"External id\": 5}},\n"
                     "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"b\", \"ts\": 11, \"dur\": 9e11, \"args\": {\"External id\": 5}},\n"
                     "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ok\", \"ts\": 40, \"dur\": 2, \"args\": {}}]}\n");
    CHECK_EQ_INT(import_pytorch(p, &t, &st, &d), 0);
    CHECK_EQ_INT(st.dur_skipped, 3);
    CHECK_EQ_INT(st.malformed, 3);
    CHECK_EQ_INT(st.dur_clamped, 1);
    for (uint32_t i = 0; i < t.nops; i++) {
        CHECK(t.ops[i].measured_s <= TRACE_MAX_OP_S);
        CHECK(t.ops[i].fixed_s <= TRACE_MAX_OP_S);
    }
    char tp[300];
    snprintf(tp, sizeof tp, "%s/dur-trace.json", dir);
    CHECK_EQ_INT(trace_write(&t, tp, &d), 0);
    trace_free(&t);
    CHECK_EQ_INT(trace_load(tp, &t, &d), 0);
    if (t.nops == 0)
        fprintf(stderr, "  %s:%d: %s: %s\n", d.file, d.line, d.field, d.msg);
    trace_free(&t);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    tu_sh(cmd);
}

/* A generated trace bigger than the reader's buffer: every event must be
 * seen whatever buffer boundary it straddles. */
static void check_stream(void)
{
    char path[96];
    snprintf(path, sizeof path, "/tmp/strata-stream-%d.json", (int)getpid());
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f == NULL)
        return;
    const int n = 20000;
    fprintf(f, "{\"schemaVersion\": 1, \"deviceProperties\": [{\"name\": \"x ] } [ {\"}],\n \"traceEvents\": [\n");
    for (int i = 0; i < n; i++) {
        double t = 1000.0 * i;
        fprintf(f, "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1, "
                   "\"ts\": %.1f, \"dur\": 50, \"args\": {\"External id\": %d, \"Input Dims\": [[%d, 256], [256, 512]], "
                   "\"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"], \"note\": \"brackets ]}{[ in a string\"}},\n",
                i ? "," : "", t, i + 1, 64 + i % 7);
        fprintf(f, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"sm90_xmma_gemm\", \"pid\": 0, \"tid\": 7, "
                   "\"ts\": %.1f, \"dur\": 20, \"args\": {\"External id\": %d, \"device\": 0, \"stream\": 7}}\n",
                t + 10, i + 1);
    }
    fprintf(f, "]}\n");
    fclose(f);
    struct diag d;
    struct trace t;
    struct import_stats st;
    CHECK_EQ_INT(import_kineto(path, &t, &st, &d), 0);
    CHECK_EQ_INT(t.nops, n);
    CHECK_EQ_INT(st.by_kind[OP_GEMM], n);
    CHECK_EQ_INT(st.cpu_ops, n);
    CHECK(t.nops == (uint32_t)n && t.ops[n - 1].u.gemm.m == (uint64_t)(64 + (n - 1) % 7));
    CHECK(t.nops == (uint32_t)n && t.ops[0].dtype == DT_BF16);
    trace_free(&t);
    remove(path);
}

/* Kineto events for the tests: a CPU op "my::NAME" with its launch at
 * host time `launch` and one kernel on `stream` starting at `start`, and
 * synchronisation events. */
static FILE *kineto_begin(const char *path)
{
    FILE *f = fopen(path, "w");
    if (f != NULL)
        fprintf(f, "{\"traceEvents\": [\n");
    return f;
}

static void kineto_op(FILE *f, const char *name, int i, int launch, int stream, int start)
{
    fprintf(f, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"my::%s\", \"pid\": 1, \"tid\": 1,"
               " \"ts\": %d, \"dur\": 1, \"args\": {\"External id\": %d}},\n"
               "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1,"
               " \"tid\": 1, \"ts\": %d, \"dur\": 1, \"args\": {\"correlation\": %d}},\n"
               "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": %d, \"ts\": %d,"
               " \"dur\": 5, \"args\": {\"External id\": %d, \"correlation\": %d, \"device\": 0,"
               " \"stream\": %d}},\n",
            name, launch, i + 1, launch, 100000 + i, stream, start, i + 1, 100000 + i, stream);
}

static void kineto_sync(FILE *f, const char *kind, int ts, int stream)
{
    fprintf(f, "{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"%s\", \"pid\": 0, \"tid\": 0,"
               " \"ts\": %d, \"dur\": 1, \"args\": {\"cuda_sync_kind\": \"%s\", \"device\": 0,"
               " \"stream\": %d}},\n",
            kind, ts, kind, stream);
}

static void kineto_end(FILE *f)
{
    fprintf(f, "{\"ph\": \"i\", \"name\": \"end\"}]}\n");
    fclose(f);
}

/* Synchronisation between streams (Kineto "cuda_sync" events) becomes
 * dependencies: a stream waiting for another's event, the host waiting for
 * one stream, for an event, for the whole device.  Seven ops on streams 7
 * and 20, launched at host times 1, 21, 31, 50, 51, 61, 71. */
static void check_sync(void)
{
    char path[96];
    snprintf(path, sizeof path, "/tmp/strata-sync-%d.json", (int)getpid());
    FILE *f = kineto_begin(path);
    CHECK(f != NULL);
    if (f == NULL)
        return;
    /* name, launch time, stream, kernel start (the output order) */
    static const struct { const char *name; int launch, stream, start; } op[] = {
        {"A", 1, 7, 100}, {"B", 21, 20, 160}, {"C", 31, 7, 170}, {"D", 50, 20, 200},
        {"E", 51, 7, 210}, {"F", 61, 7, 300}, {"G", 71, 20, 400}};
    for (int i = 0; i < 7; i++)
        kineto_op(f, op[i].name, i, op[i].launch, op[i].stream, op[i].start);
    /* event records on stream 7 at 2 (after A) and 62 (after F) */
    fprintf(f, "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaEventRecord\", \"pid\": 1,"
               " \"tid\": 1, \"ts\": 2, \"dur\": 1, \"args\": {\"correlation\": 201}},\n"
               "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaEventRecord\", \"pid\": 1,"
               " \"tid\": 1, \"ts\": 62, \"dur\": 1, \"args\": {\"correlation\": 202}},\n");
#define SYNC(ts, kind, extra)                                                               \
    "{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"" kind "\", \"pid\": 0, \"tid\": 7, \"ts\": " ts \
    ", \"dur\": 1, \"args\": {\"cuda_sync_kind\": \"" kind "\", \"device\": 0" extra "}}"
    fprintf(f, "%s,\n%s,\n%s,\n%s,\n%s,\n%s,\n%s\n]}\n",
            /* B (stream 20, launched after 15) waits for A's event */
            SYNC("15", "Stream Wait Event",
                 ", \"stream\": 20, \"wait_on_stream\": 7, \"wait_on_cuda_event_record_corr_id\": 201"),
            /* the whole device: D waits for C, E for B */
            SYNC("40", "Context Sync", ", \"stream\": 4294967295"),
            /* stream 20: F waits for D */
            SYNC("60", "Stream Sync", ", \"stream\": 20"),
            /* the event after F: G waits for F */
            SYNC("70", "Event Sync", ", \"wait_on_stream\": 7, \"wait_on_cuda_event_record_corr_id\": 202"),
            /* an event never recorded, a kind not known, a malformed one: nothing */
            SYNC("80", "Stream Wait Event",
                 ", \"stream\": 20, \"wait_on_stream\": 7, \"wait_on_cuda_event_record_corr_id\": 999"),
            SYNC("81", "Something Else", ""), SYNC("82", "Stream Sync", ", \"stream\": \"x\""));
#undef SYNC
    fclose(f);
    struct diag d;
    struct trace t;
    struct import_stats st;
    CHECK_EQ_INT(import_kineto(path, &t, &st, &d), 0);
    CHECK_EQ_INT(t.nops, 7);
    CHECK_EQ_INT(st.syncs, 5);
    CHECK_EQ_INT(st.malformed, 1);
    CHECK_EQ_INT(st.sync_deps, 5);
    static const char *const want[7] = {"", "my::A", "", "my::C", "my::B", "my::D", "my::F"};
    for (uint32_t i = 0; i < t.nops && i < 7; i++) {
        char got[TRACE_NAME_MAX] = "";
        CHECK(t.ops[i].ndeps <= 1);
        if (t.ops[i].ndeps == 1)
            snprintf(got, sizeof got, "%s", op_name(&t, &t.ops[t.deps[t.ops[i].deps_off]]));
        if (strcmp(got, want[i]) != 0)
            printf("  %s waits for \"%s\", want \"%s\"\n", op_name(&t, &t.ops[i]), got, want[i]);
        CHECK(strcmp(got, want[i]) == 0);
    }
    /* and the dependencies survive writing and loading */
    CHECK_EQ_INT(trace_write(&t, path, &d), 0);
    struct trace t2;
    CHECK_EQ_INT(trace_load(path, &t2, &d), 0);
    CHECK_EQ_INT(t2.ndeps, 5);
    trace_free(&t2);
    trace_free(&t);
    remove(path);
}

/* The ops of a trace as "id:kind:stream:dep,dep;" for comparing. */
static void summary(const struct trace *t, char *buf, size_t n)
{
    size_t o = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < t->nops && o + 1 < n; i++) {
        const struct op *op = &t->ops[i];
        o += (size_t)snprintf(buf + o, n - o, "%s:%s:%u:", op_id(t, op), op_kind_name(op->kind), op->stream);
        for (uint32_t j = 0; j < op->ndeps && o + 1 < n; j++)
            o += (size_t)snprintf(buf + o, n - o, "%s%s", j ? "," : "",
                                  op_id(t, &t->ops[t->deps[op->deps_off + j]]));
        if (o + 1 < n)
            buf[o++] = ';';
        buf[o] = '\0';
    }
}

/* Chakra JSON: the example in traces/chakra (chakra_jsonizer's layout), the
 * other layouts, and broken files. */
/* The bundled tiny step and each form a Chakra trace comes in (p: a
 * scratch file). */
static void chakra_forms(const char *p)
{
    struct diag d;
    struct trace t;
    struct import_stats st;
    char got[512];
    /* node 0 has no "id" (protobuf JSON leaves out zeros); node 2 is a CPU
     * node: the all-reduce that waited for it waits for what it waited for
     * (mlp_fwd); compute, communication and the host load take three streams */
    CHECK_EQ_INT(import_chakra("traces/chakra/tiny-step.json", &t, &st, &d), 0);
    summary(&t, got, sizeof got);
    printf("  chakra: %s\n", got);
    CHECK(strcmp(got, "0:generic:0:;1:generic:0:0;3:generic:1:1;4:memcpy:2:;5:generic:0:1,4;") == 0);
    CHECK_EQ_INT(st.cpu_ops, 6);
    CHECK_EQ_INT(st.mapped, 5);
    if (t.nops == 5) {
        CHECK(t.ops[1].u.gen.flops == 68719476736.0 && t.ops[1].u.gen.bytes == 100663296.0);
        CHECK(fabs(t.ops[1].measured_s - 310e-6) < 1e-12);
        CHECK(t.ops[2].u.gen.bytes == 33554432.0 && t.ops[2].measured_s < 0);
        CHECK(t.ops[3].u.copy.bytes == 16777216 && t.ops[3].u.copy.dir == MEMCPY_H2D);
    }
    trace_free(&t);

    /* an array of nodes, snake_case, numbers as numbers, listed out of
     * order: the output follows the dependencies; a node with only a
     * duration keeps it as fixed_s */
    tu_write_file(p, "[{\"id\": 7, \"type\": \"COMP_NODE\", \"data_deps\": [9],"
                     " \"duration_micros\": 12, \"attr\": []},\n"
                     " {\"id\": 9, \"type\": 4, \"attr\": [{\"name\": \"num_ops\", \"int64_val\": 1000}]}]\n");
    CHECK_EQ_INT(import_chakra(p, &t, &st, &d), 0);
    summary(&t, got, sizeof got);
    CHECK(strcmp(got, "9:generic:0:;7:generic:0:9;") == 0);
    CHECK(t.nops == 2 && fabs(t.ops[1].fixed_s - 12e-6) < 1e-12);
    trace_free(&t);
    /* a node converted from a PyTorch execution trace: its aten operator
     * and input shapes (Python lists) make it a bf16 GEMM, not num_ops on
     * the vector units; an operator strata does not know stays generic */
    tu_write_file(p, "{\"id\": 1, \"name\": \"aten::mm\", \"type\": \"COMP_NODE\", \"inputs\": {\"values\":"
                     " \"[]\", \"shapes\": \"[[2048, 4096], [4096, 1024]]\", \"types\":"
                     " \"['Tensor(c10::BFloat16)', 'Tensor(c10::BFloat16)']\"}, \"attr\": [{\"name\":"
                     " \"num_ops\", \"int64Val\": \"17179869184\"}]}\n"
                     "{\"id\": 2, \"name\": \"aten::frobnicate\", \"type\": \"COMP_NODE\", \"inputs\":"
                     " {\"shapes\": \"[[8, 8]]\", \"types\": \"['Tensor(float)']\"}, \"attr\": [{\"name\":"
                     " \"num_ops\", \"int64Val\": \"64\"}]}\n");
    CHECK_EQ_INT(import_chakra(p, &t, &st, &d), 0);
    CHECK_EQ_INT(t.nops, 2);
    if (t.nops == 2) {
        const struct op *g = &t.ops[0];
        CHECK(g->kind == OP_GEMM && g->dtype == DT_BF16 && g->u.gemm.m == 2048 &&
              g->u.gemm.n == 1024 && g->u.gemm.k == 4096 && g->u.gemm.batch == 1);
        CHECK(t.ops[1].kind == OP_GENERIC && t.ops[1].u.gen.flops == 64.0);
    }
    CHECK_EQ_INT(st.owners, 1);
    trace_free(&t);
    /* an object with a "nodes" array */
    tu_write_file(p, "{\"nodes\": [{\"id\": \"1\", \"type\": \"COMM_SEND_NODE\","
                     " \"attr\": [{\"name\": \"comm_size\", \"int64Val\": \"4096\"}]}]}\n");
    CHECK_EQ_INT(import_chakra(p, &t, &st, &d), 0);
    CHECK(t.nops == 1 && t.ops[0].u.gen.bytes == 4096.0);
    trace_free(&t);
}

static void chakra_broken(const char *p)
{
    struct diag d;
    struct trace t;
    struct import_stats st;
    /* broken: each an error with its line, never a crash */
    static const struct { const char *text; enum diag_code code; int line; const char *field; } bad[] = {
        {"{\"id\": \"1\", \"type\": \"COMP_NODE\", \"dataDeps\": [\"2\"]}\n"
         "{\"id\": \"2\", \"type\": \"COMP_NODE\", \"dataDeps\": [\"1\"]}\n",
         DIAG_E_CYCLE, 1, "deps"},
        {"{\"id\": \"1\", \"type\": \"COMP_NODE\", \"ctrlDeps\": [\"1\"]}\n", DIAG_E_CYCLE, 1, "deps"},
        {"{\"id\": \"1\", \"type\": \"COMP_NODE\"}\n{\"id\": \"2\",\n \"type\": \"COMP_NODE\","
         " \"dataDeps\": [\"5\"]}\n",
         DIAG_E_UNKNOWN_NAME, 2, "deps"},
        {"{\"id\": \"1\", \"type\": \"COMP_NODE\"}\n{\"id\": 1, \"type\": \"COMP_NODE\"}\n",
         DIAG_E_DUPLICATE, 2, "id"},
        {"{\"id\": \"1\", \"type\": \"COMP_NODE\", \"attr\": [\n{\"name\": \"num_ops\", \"int64Val\": \"-5\"}]}\n",
         DIAG_E_RANGE, 2, "num_ops"},
        {"{\"id\": \"1\", \"type\": \"COMP_NODE\", \"attr\": [{\"name\": \"num_ops\", \"int64Val\": \"1e400\"}]}\n",
         DIAG_E_RANGE, 1, "num_ops"},
        {"{\"id\": \"1\", \"type\": \"COMP_NODE\", \"attr\": [{\"name\": \"num_ops\", \"int64Val\": 1e300}]}\n",
         DIAG_E_RANGE, 1, "num_ops"},
        {"{\"id\": \"x\", \"type\": \"COMP_NODE\"}\n", DIAG_E_TYPE, 1, "id"},
        {"{\"id\": \"1\", \"type\": \"COMP_NODE\", \"dataDeps\": \"2\"}\n", DIAG_E_TYPE, 1, "dataDeps"},
        {"{\"id\": \"1\", \"type\": \"COMP_NODE\", \"durationMicros\": -3}\n", DIAG_E_RANGE, 1,
         "durationMicros"},
        {"{\"id\": \"1\", \"type\": \"COMP_NODE\", \"attr\": [{\"name\": \"num_ops\", \"int64Val\": \"8\"}]}\n"
         "{\"id\": \"2\", \"type\": \"COMP_N",
         DIAG_E_PARSE, 2, ""},
        {"{\"version\": \"0.0.4\"}\n", DIAG_E_UNSUPPORTED, 1, ""},
        {"[1, 2]\n", DIAG_E_TYPE, 1, ""},
        {"{\"id\": \"1\", \"type\": \"COMP_NODE\", \"attr\": [{\"name\": \"is_cpu_op\", \"boolVal\": true}]}\n",
         DIAG_E_RANGE, 1, "nodes"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tu_write_file(p, bad[i].text);
        memset(&d, 0, sizeof d);
        int rc = import_chakra(p, &t, &st, &d);
        CHECK_EQ_INT(rc, -1);
        if (rc == 0)
            trace_free(&t);
        if (d.code != bad[i].code || d.line != bad[i].line || strcmp(d.field, bad[i].field) != 0)
            printf("  chakra bad case %zu: got code %d line %d field \"%s\": %s\n", i, (int)d.code,
                   d.line, d.field, d.msg);
        CHECK(d.code == bad[i].code && d.line == bad[i].line && strcmp(d.field, bad[i].field) == 0);
    }
}

/* Dependencies past the bound, large ids, cycles, copies and metadata. */
static void chakra_limits(const char *p)
{
    struct diag d;
    struct trace t;
    struct import_stats st;
    /* a node with 300 dependencies keeps them all; a CPU node waiting for
     * 100 passes on the latest 64 and counts the rest */
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    if (f != NULL) {
        fprintf(f, "[");
        for (int i = 0; i < 300; i++)
            fprintf(f, "{\"id\": %d, \"type\": \"COMP_NODE\", \"attr\": [{\"name\": \"num_ops\","
                       " \"int64Val\": \"1000\"}]},\n", i + 1);
        fprintf(f, "{\"id\": 1000, \"type\": \"COMM_COLL_NODE\", \"attr\": [{\"name\": \"comm_size\","
                   " \"int64Val\": \"4096\"}], \"dataDeps\": [");
        for (int i = 0; i < 300; i++)
            fprintf(f, "%s%d", i ? ", " : "", i + 1);
        fprintf(f, "]},\n{\"id\": 1001, \"type\": \"COMP_NODE\", \"attr\": [{\"name\": \"is_cpu_op\","
                   " \"boolVal\": true}], \"ctrlDeps\": [");
        for (int i = 0; i < 100; i++)
            fprintf(f, "%s%d", i ? ", " : "", i + 1);
        fprintf(f, "]},\n{\"id\": 1002, \"type\": \"COMM_SEND_NODE\", \"attr\": [{\"name\": \"comm_size\","
                   " \"int64Val\": \"64\"}], \"dataDeps\": [1001]}]\n");
        fclose(f);
        CHECK_EQ_INT(import_chakra(p, &t, &st, &d), 0);
        CHECK_EQ_INT(t.nops, 302);
        if (t.nops == 302) {
            CHECK_EQ_INT(t.ops[300].ndeps, 300);
            CHECK_EQ_INT(t.ops[301].ndeps, 64);
            CHECK(strcmp(op_id(&t, &t.ops[t.deps[t.ops[301].deps_off]]), "37") == 0);
        }
        CHECK_EQ_INT(st.deps_dropped, 36);
        trace_free(&t);
    }
    /* ids: numbers up to 2^53, larger ones as strings */
    tu_write_file(p, "{\"id\": 9223372036854775808, \"type\": \"COMP_NODE\"}\n");
    CHECK_EQ_INT(import_chakra(p, &t, &st, &d), -1);
    CHECK(d.code == DIAG_E_TYPE);
    tu_write_file(p, "{\"id\": \"9223372036854775806\", \"type\": \"COMM_SEND_NODE\","
                     " \"attr\": [{\"name\": \"comm_size\", \"int64Val\": \"64\"}]}\n");
    CHECK_EQ_INT(import_chakra(p, &t, &st, &d), 0);
    CHECK(t.nops == 1 && strcmp(op_id(&t, &t.ops[0]), "9223372036854775806") == 0);
    trace_free(&t);
    /* a cycle is named by a node in it, not one waiting for it */
    tu_write_file(p, "{\"id\": 1, \"type\": \"COMP_NODE\", \"dataDeps\": [2]}\n"
                     "{\"id\": 2, \"type\": \"COMP_NODE\", \"dataDeps\": [3]}\n"
                     "{\"id\": 3, \"type\": \"COMP_NODE\", \"dataDeps\": [2]}\n");
    CHECK_EQ_INT(import_chakra(p, &t, &st, &d), -1);
    CHECK(d.code == DIAG_E_CYCLE && d.line >= 2 && strstr(d.msg, "node 1 ") == NULL);
    /* a copy larger than a trace holds, with the node's line */
    tu_write_file(p, "{\"id\": 1, \"type\": \"MEM_LOAD_NODE\",\n \"attr\": [{\"name\": \"tensor_size\","
                     " \"uint64Val\": \"100000000000000000\"}]}\n");
    CHECK_EQ_INT(import_chakra(p, &t, &st, &d), -1);
    CHECK(d.code == DIAG_E_RANGE && d.line == 2 && strcmp(d.field, "tensor_size") == 0);
    /* metadata without a version, and metadata followed by a nodes object */
    tu_write_file(p, "{\"attr\": []}\n{\"nodes\": [{\"type\": \"COMM_SEND_NODE\","
                     " \"attr\": [{\"name\": \"comm_size\", \"int64Val\": \"64\"}]}]}\n");
    CHECK_EQ_INT(import_chakra(p, &t, &st, &d), 0);
    CHECK(t.nops == 1 && strcmp(op_id(&t, &t.ops[0]), "0") == 0);
    trace_free(&t);
}

static void check_chakra(void)
{
    char dir[64], p[128];
    CHECK(tu_mkdtemp(dir, sizeof dir, "strata-chakra") == 0);
    snprintf(p, sizeof p, "%s/t.json", dir);
    chakra_forms(p);
    chakra_broken(p);
    chakra_limits(p);
    tu_rmtree(dir);
}

/* The bounds on synchronisation: repeats never crowd out a real
 * dependency, and a file of many streams and device-wide syncs imports
 * quickly, leaving the syncs past the work bound unused (counted). */
static void check_sync_bounds(void)
{
    char path[96];
    snprintf(path, sizeof path, "/tmp/strata-syncb-%d.json", (int)getpid());
    struct diag d;
    struct trace t;
    struct import_stats st;
    /* op0 (stream 7), op1 (8), op2 (7), op3 (8); 70 syncs of stream 7
     * between op0 and op1 fill the dependency buffer (16 per op) with
     * repeats; the one between op2 and op3 must still count */
    FILE *f = kineto_begin(path);
    CHECK(f != NULL);
    if (f == NULL)
        return;
    kineto_op(f, "op", 0, 1, 7, 1000);
    kineto_op(f, "op", 1, 200, 8, 1100);
    kineto_op(f, "op", 2, 300, 7, 1200);
    kineto_op(f, "op", 3, 400, 8, 1300);
    for (int k = 0; k < 70; k++)
        kineto_sync(f, "Stream Sync", 10 + k, 7);
    kineto_sync(f, "Stream Sync", 350, 7);
    kineto_end(f);
    CHECK_EQ_INT(import_kineto(path, &t, &st, &d), 0);
    CHECK_EQ_INT(st.sync_deps, 2);
    CHECK_EQ_INT(st.deps_dropped, 0);
    CHECK(t.nops == 4 && t.ops[1].ndeps == 1 && t.deps[t.ops[1].deps_off] == 0);
    CHECK(t.nops == 4 && t.ops[3].ndeps == 1 && t.deps[t.ops[3].deps_off] == 2);
    trace_free(&t);
    /* 400 streams of one op each, a device-wide sync after each launch */
    f = kineto_begin(path);
    CHECK(f != NULL);
    if (f == NULL)
        return;
    for (int i = 0; i < 400; i++) {
        kineto_op(f, "op", i, 10 * i + 1, i, 100000 + 10 * i);
        kineto_sync(f, "Context Sync", 10 * i + 5, -1);
    }
    kineto_end(f);
    CHECK_EQ_INT(import_kineto(path, &t, &st, &d), 0);
    CHECK_EQ_INT(st.syncs, 400);
    printf("  400 streams, 400 device syncs: %u dependencies, %u syncs past the work bound\n",
           st.sync_deps, st.syncs_skipped);
    CHECK(st.syncs_skipped > 0 && st.syncs_skipped < 400);
    CHECK(st.sync_deps > 0 && st.sync_deps <= IMPORT_SYNC_DEPS_PER_OP * 400 + 16);
    trace_free(&t);
    remove(path);
}

/* Convolutions as implicit GEMMs, with stride, padding, dilation and
 * groups from "Concrete Inputs" where the trace has them. */
static void check_conv(void)
{
    static const struct {
        const char *name;
        int64_t x[4], w[4];
        const char *conc[9];
        uint64_t m, n, k, b;
    } c[] = {
        /* ResNet's stem, 7x7 stride 2 pad 3: 224 -> 112 */
        {"aten::convolution", {32, 3, 224, 224}, {64, 3, 7, 7},
         {"", "", "", "[2, 2]", "[3, 3]", "[1, 1]", "False", "[0, 0]", "1"},
         32 * 112 * 112, 64, 3 * 49, 1},
        /* no concrete inputs: the output keeps the input's size */
        {"aten::convolution", {32, 3, 224, 224}, {64, 3, 7, 7}, {NULL}, 32 * 224 * 224, 64, 147, 1},
        /* cudnn_convolution(self, weight, padding, stride, dilation, groups): a
         * depthwise 3x3, stride 1, pad 1, 32 groups */
        {"aten::cudnn_convolution", {8, 32, 56, 56}, {32, 1, 3, 3},
         {"", "", "[1, 1]", "[1, 1]", "[1, 1]", "32", "False", "False", "True"},
         8 * 56 * 56, 1, 9, 32},
        /* conv2d(input, weight, bias, stride, padding, dilation 2, groups) */
        {"aten::conv2d", {1, 16, 32, 32}, {16, 16, 3, 3},
         {"", "", "", "[1, 1]", "[0, 0]", "[2, 2]", "1"}, 28 * 28, 16, 144, 1},
        /* a padding given as a string is recorded as "": "same" is assumed */
        {"aten::conv2d", {1, 16, 32, 32}, {16, 16, 3, 3},
         {"", "", "", "[1, 1]", "", "[1, 1]", "1"}, 32 * 32, 16, 144, 1},
        /* the argument order of each operator: stride 2, padding 0 on 9x9
         * with a 3x3 kernel gives 4x4, padding 2 with stride 1 gives 11x11 */
        {"aten::cudnn_convolution", {1, 8, 9, 9}, {8, 8, 3, 3},
         {"", "", "[0, 0]", "[2, 2]", "[1, 1]", "1", "False", "False", "True"}, 16, 8, 72, 1},
        {"aten::cudnn_convolution", {1, 8, 9, 9}, {8, 8, 3, 3},
         {"", "", "[2, 2]", "[1, 1]", "[1, 1]", "1", "False", "False", "True"}, 121, 8, 72, 1},
        {"aten::miopen_convolution", {1, 8, 9, 9}, {8, 8, 3, 3},
         {"", "", "", "[0, 0]", "[2, 2]", "[1, 1]", "1", "False", "False"}, 16, 8, 72, 1},
        {"aten::_convolution", {1, 8, 9, 9}, {8, 8, 3, 3},
         {"", "", "", "[2, 2]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"}, 16, 8, 72, 1},
        /* groups is convolution's ninth argument */
        {"aten::convolution", {2, 8, 9, 9}, {8, 4, 3, 3},
         {"", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "2"}, 2 * 81, 4, 36, 2},
        /* a transposed convolution keeps the input's size */
        {"aten::convolution", {1, 8, 9, 9}, {8, 8, 3, 3},
         {"", "", "", "[2, 2]", "[0, 0]", "[1, 1]", "True", "[0, 0]", "1"}, 81, 8, 72, 1},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        struct opmap_in in;
        memset(&in, 0, sizeof in);
        in.name = c[i].name;
        in.ninputs = 9;
        for (int j = 0; j < 9; j++) {
            in.ndims[j] = -1;
            in.types[j] = "";
            in.concrete[j] = c[i].conc[0] != NULL ? c[i].conc[j] : NULL;
        }
        in.ndims[0] = in.ndims[1] = 4;
        memcpy(in.dims[0], c[i].x, sizeof c[i].x);
        memcpy(in.dims[1], c[i].w, sizeof c[i].w);
        in.types[0] = in.types[1] = "c10::BFloat16";
        struct op o;
        memset(&o, 0, sizeof o);
        CHECK_EQ_INT(opmap_map(&in, &o), OPMAP_OK);
        int ok = o.kind == OP_GEMM && o.u.gemm.m == c[i].m && o.u.gemm.n == c[i].n &&
                 o.u.gemm.k == c[i].k && o.u.gemm.batch == c[i].b;
        if (!ok)
            printf("  conv case %zu: %llux%llux%llu b%llu\n", i, (unsigned long long)o.u.gemm.m,
                   (unsigned long long)o.u.gemm.n, (unsigned long long)o.u.gemm.k,
                   (unsigned long long)o.u.gemm.batch);
        CHECK(ok);
    }
    /* index_select along dim 1 of a [4, 1000, 64] tensor, 300 indices:
     * 4 x 300 slices of 64 */
    struct opmap_in in;
    memset(&in, 0, sizeof in);
    in.name = "aten::index_select";
    in.ninputs = 3;
    in.ndims[0] = 3;
    in.dims[0][0] = 4;
    in.dims[0][1] = 1000;
    in.dims[0][2] = 64;
    in.ndims[1] = -1;
    in.ndims[2] = 1;
    in.dims[2][0] = 300;
    const char *conc[3] = {"", "1", ""}, *types[3] = {"float", "Scalar", "long"};
    for (int j = 0; j < 3; j++) {
        in.concrete[j] = conc[j];
        in.types[j] = types[j];
    }
    struct op o;
    memset(&o, 0, sizeof o);
    CHECK_EQ_INT(opmap_map(&in, &o), OPMAP_OK);
    CHECK(o.kind == OP_EMBEDDING && o.u.emb.tokens == 1200 && o.u.emb.dim == 64);
    /* dim -2 is dim 1 of three; dim 3 is not a dimension */
    in.concrete[1] = "-2";
    memset(&o, 0, sizeof o);
    CHECK_EQ_INT(opmap_map(&in, &o), OPMAP_OK);
    CHECK(o.kind == OP_EMBEDDING && o.u.emb.tokens == 1200 && o.u.emb.dim == 64);
    in.concrete[1] = "3";
    CHECK_EQ_INT(opmap_map(&in, &o), OPMAP_NOSHAPE);
    /* a convolution with no output, and one with sizes past the bound */
    memset(&in, 0, sizeof in);
    in.name = "aten::convolution";
    in.ninputs = 9;
    for (int j = 0; j < 9; j++) {
        in.ndims[j] = -1;
        in.types[j] = "";
        in.concrete[j] = "";
    }
    in.ndims[0] = in.ndims[1] = 4;
    int64_t x[4] = {1, 3, 2, 2}, w[4] = {8, 3, 3, 3};
    memcpy(in.dims[0], x, sizeof x);
    memcpy(in.dims[1], w, sizeof w);
    in.concrete[3] = "[2, 2]";
    in.concrete[4] = "[0, 0]";
    in.concrete[5] = "[1, 1]";
    CHECK_EQ_INT(opmap_map(&in, &o), OPMAP_NOSHAPE);
    in.dims[1][2] = 3000000000;
    in.concrete[5] = "[1048576, 1]";
    CHECK_EQ_INT(opmap_map(&in, &o), OPMAP_NOSHAPE);
}

/* An op whose recorded sizes no trace can hold (1e19, or a 2^62-element
 * product) keeps its measured time instead of failing the import. */
static void check_huge(void)
{
    char path[96];
    snprintf(path, sizeof path, "/tmp/strata-huge-%d.json", (int)getpid());
    tu_write_file(path,
                  "{\"traceEvents\": [\n"
                  "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1,"
                  " \"ts\": 1, \"dur\": 9, \"args\": {\"External id\": 1, \"Input Dims\": [[1e19, 4],"
                  " [4, 4]], \"Input type\": [\"float\", \"float\"]}},\n"
                  "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1,"
                  " \"ts\": 20, \"dur\": 9, \"args\": {\"External id\": 2, \"Input Dims\": [[4611686018427387904, 4],"
                  " [4, 4]], \"Input type\": [\"float\", \"float\"]}},\n"
                  "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 100,"
                  " \"dur\": 5, \"args\": {\"External id\": 1, \"device\": 0, \"stream\": 7}},\n"
                  "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 200,"
                  " \"dur\": 5, \"args\": {\"External id\": 2, \"device\": 0, \"stream\": 7}}]}\n");
    struct diag d;
    struct trace t;
    struct import_stats st;
    CHECK_EQ_INT(import_kineto(path, &t, &st, &d), 0);
    CHECK_EQ_INT(t.nops, 2);
    for (uint32_t i = 0; i < t.nops; i++)
        CHECK(t.ops[i].kind == OP_GENERIC && fabs(t.ops[i].fixed_s - 5e-6) < 1e-12);
    trace_free(&t);
    remove(path);
}

/* A GEMM that owns only cuBLAS's split-K reduction (its main kernel is not
 * in the trace) keeps no measured time; one that owns both does. */
static void check_partial(void)
{
    char path[96];
    snprintf(path, sizeof path, "/tmp/strata-partial-%d.json", (int)getpid());
    static const char *const kern[3] = {
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_nt_align4>(x)",
        "void splitKreduce_kernel<float, float, float, float, true, false, false>(x)",
        "void splitKreduce_kernel<float, float, float, float, true, false, false>(x)"};
    static const int owner[3] = {1, 1, 2};
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f == NULL)
        return;
    fprintf(f, "{\"traceEvents\": [\n");
    for (int i = 1; i <= 2; i++)
        fprintf(f, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1,"
                   " \"ts\": %d, \"dur\": 50, \"args\": {\"External id\": %d, \"Input Dims\": [[200, 2048],"
                   " [2048, 512]], \"Input type\": [\"float\", \"float\"]}},\n",
                100 * i, i);
    for (int j = 0; j < 3; j++)
        fprintf(f, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": 7,"
                   " \"ts\": %d, \"dur\": %d, \"args\": {\"External id\": %d, \"device\": 0, \"stream\": 7}}%s\n",
                kern[j], 1000 + 100 * j, j == 0 ? 26 : 7, owner[j], j < 2 ? "," : "");
    fprintf(f, "]}\n");
    fclose(f);
    struct diag d;
    struct trace t;
    struct import_stats st;
    CHECK_EQ_INT(import_kineto(path, &t, &st, &d), 0);
    CHECK_EQ_INT(t.nops, 2);
    CHECK_EQ_INT(st.partial, 1);
    if (t.nops == 2) {
        CHECK(t.ops[0].kind == OP_GEMM && fabs(t.ops[0].measured_s - 33e-6) < 1e-12);
        CHECK(t.ops[1].kind == OP_GEMM && t.ops[1].measured_s < 0);
    }
    trace_free(&t);
    remove(path);
}

/* Gathers: embedding(weight, indices) and index_select(self, dim, index),
 * whose self may be 1-D (single elements gathered). */
static void check_gather(void)
{
    static const struct { const char *name; int nd0; int64_t d0[2]; int nd2; int64_t d2;
                          uint64_t tokens, dim; } c[] = {
        {"aten::index_select", 1, {2048, 0}, 1, 6825, 6825, 1},   /* a100 trace, 4 ops */
        {"aten::index_select", 2, {1000, 64}, 1, 300, 300, 64},
        {"aten::embedding", 2, {32000, 4096}, 1, 512, 512, 4096},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        struct opmap_in in;
        memset(&in, 0, sizeof in);
        in.name = c[i].name;
        in.ninputs = 3;
        in.ndims[0] = c[i].nd0;
        in.dims[0][0] = c[i].d0[0];
        in.dims[0][1] = c[i].d0[1];
        in.types[0] = "float";
        in.ndims[1] = c[i].name[6] == 'i' ? 0 : 1; /* index_select's dim is a Scalar */
        in.dims[1][0] = c[i].d2;
        in.types[1] = c[i].name[6] == 'i' ? "Scalar" : "long";
        in.ndims[2] = c[i].name[6] == 'i' ? 1 : -1;
        in.dims[2][0] = c[i].d2;
        in.types[2] = "long";
        struct op o;
        memset(&o, 0, sizeof o);
        CHECK_EQ_INT(opmap_map(&in, &o), OPMAP_OK);
        CHECK(o.kind == OP_EMBEDDING && o.u.emb.tokens == c[i].tokens && o.u.emb.dim == c[i].dim);
        if (!(o.u.emb.tokens == c[i].tokens && o.u.emb.dim == c[i].dim))
            printf("  %s: tokens %llu dim %llu\n", c[i].name, (unsigned long long)o.u.emb.tokens,
                   (unsigned long long)o.u.emb.dim);
    }
}

/* Kernel names as Kineto records them -> the family compare groups by. */
static void check_family(void)
{
    static const char *const cases[][2] = {
        {"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128_32x3_nn_align1>"
         "(cutlass_80_tensorop_s1688gemm_256x128_32x3_nn_align1::Params)",
         "cutlass_80_tensorop_s1688gemm_nn_align1"},
        {"ampere_sgemm_128x64_nn", "ampere_sgemm_nn"},
        {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
         "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
         "at::detail::Array<char*, 3>)",
         "vectorized_elementwise_kernel"},
        {"void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float, "
         "unsigned int, 1, 4, bool>(at::cuda::detail::TensorInfo<float, unsigned int>)",
         "fused_dropout_kernel_vec"},
        {"sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_"
         "tensor16x8x16_kernel",
         "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_stage4_kernel"},
        {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
         "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t"},
        {"Memcpy DtoD (Device -> Device)", "Memcpy DtoD"},
        {"void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<int> >(int)",
         "GemmUniversal"},
        {"", ""},
        {"(", ""},
        {"void Kernel<", ""},
        {"a<<<>>>(((", "a"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[TRACE_KERNEL_MAX];
        opmap_kernel_family(cases[i][0], out, sizeof out);
        if (strcmp(out, cases[i][1]) != 0)
            printf("  family of \"%s\": got \"%s\", want \"%s\"\n", cases[i][0], out, cases[i][1]);
        CHECK(strcmp(out, cases[i][1]) == 0);
    }
    /* a family longer than the field is cut, never overrun */
    char small[8];
    opmap_kernel_family("ampere_sgemm_128x64_nn", small, sizeof small);
    CHECK(strcmp(small, "ampere_") == 0);
    opmap_kernel_family("ampere_sgemm_128x64_nn", small, 1);
    CHECK(small[0] == '\0');
}

/* strata compare on a small trace with measured times: one GEMM and one
 * elementwise op measured, one GEMM measured at 1e-300 s (no relative error
 * exists: it counts as not measured, and no inf or nan comes out). */
static void check_compare(void)
{
    char dir[64], tp[128], jp[128], cmd[600];
    CHECK(tu_mkdtemp(dir, sizeof dir, "strata-cmp") == 0);
    snprintf(tp, sizeof tp, "%s/t.json", dir);
    snprintf(jp, sizeof jp, "%s/c.json", dir);
    tu_write_file(tp, "{\"strata_trace\": 1, \"ops\": [\n"
                      "{\"id\": \"a\", \"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 4096, \"n\": 4096,"
                      " \"k\": 4096, \"measured_s\": 0.0006, \"kernel\": \"ampere_bf16_s16816gemm_tn\"},\n"
                      "{\"id\": \"b\", \"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 64, \"n\": 64,"
                      " \"k\": 64, \"measured_s\": 1e-300},\n"
                      "{\"id\": \"c\", \"kind\": \"elementwise\", \"dtype\": \"bf16\", \"elements\": 67108864,"
                      " \"inputs\": 2, \"outputs\": 1, \"measured_s\": 0.0003,"
                      " \"kernel\": \"vectorized_elementwise_kernel\"},\n"
                      "{\"id\": \"d\", \"kind\": \"elementwise\", \"dtype\": \"bf16\", \"elements\": 67108864,"
                      " \"inputs\": 2, \"outputs\": 1, \"measured_s\": 0.0009,"
                      " \"kernel\": \"vectorized_elementwise_kernel\"}]}\n");
    snprintf(cmd, sizeof cmd,
             "'%s' compare --hw configs/nvidia-a100-sxm-80gb.yaml --trace '%s' --json '%s' >/dev/null",
             STRATA_BINARY, tp, jp);
    CHECK_EQ_INT(tu_sh(cmd), 0);
    char *text = tu_read_file(jp, NULL);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    free(text);
    CHECK(root != NULL);
    const cJSON *cls = cJSON_GetObjectItemCaseSensitive(root, "classes");
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(cls, "gemm");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(cls, "elementwise");
    CHECK(g != NULL && e != NULL);
    const cJSON *c;
    cJSON_ArrayForEach(c, cls)
    {
        const cJSON *v;
        cJSON_ArrayForEach(v, c) if (cJSON_IsNumber(v)) CHECK(isfinite(v->valuedouble));
    }
    CHECK_EQ_INT((int)cJSON_GetObjectItemCaseSensitive(g, "ops")->valuedouble, 1);
    CHECK_EQ_INT((int)cJSON_GetObjectItemCaseSensitive(e, "ops")->valuedouble, 2);
    /* by kernel family: the elementwise family (1.2 ms measured) first,
     * holding both of its ops; the unmeasured GEMM is in no family */
    const cJSON *kf = cJSON_GetObjectItemCaseSensitive(root, "kernel_families");
    CHECK_EQ_INT(cJSON_GetArraySize(kf), 2);
    const cJSON *k0 = cJSON_GetArrayItem(kf, 0), *k1 = cJSON_GetArrayItem(kf, 1);
    CHECK(k0 != NULL && k1 != NULL);
    if (k0 != NULL && k1 != NULL) {
        CHECK(strcmp(cJSON_GetObjectItemCaseSensitive(k0, "kernel")->valuestring,
                     "vectorized_elementwise_kernel") == 0);
        CHECK(strcmp(cJSON_GetObjectItemCaseSensitive(k0, "class")->valuestring, "elementwise") == 0);
        CHECK_EQ_INT((int)cJSON_GetObjectItemCaseSensitive(k0, "ops")->valuedouble, 2);
        CHECK(strcmp(cJSON_GetObjectItemCaseSensitive(k1, "kernel")->valuestring,
                     "ampere_bf16_s16816gemm_tn") == 0);
        /* the median predicted/measured of the two equal elementwise ops
         * (0.3 and 0.9 ms measured) is the mean of their two ratios */
        double r = cJSON_GetObjectItemCaseSensitive(k0, "median_ratio")->valuedouble;
        double p = cJSON_GetObjectItemCaseSensitive(e, "predicted_s")->valuedouble / 2;
        double want = (p / 0.0003 + p / 0.0009) / 2;
        CHECK(fabs(r / want - 1) < 1e-9);
    }
    /* a 4096^3 bf16 GEMM on an A100 takes 0.4-0.7 ms: the error is modest */
    double med = cJSON_GetObjectItemCaseSensitive(g, "median_abs_error")->valuedouble;
    printf("  compare: 4096^3 GEMM |err| %.1f%% against 0.6 ms\n", 100 * med);
    CHECK(med < 0.5);
    cJSON_Delete(root);
    tu_rmtree(dir);
}

int main(void)
{
    check_stream();
    check_sync();
    check_sync_bounds();
    check_chakra();
    check_family();
    check_gather();
    check_partial();
    check_huge();
    check_conv();
    check_compare();
    struct stat sb;
    if (stat(SHARED "a100-train-rank0-shapes.json.gz", &sb) != 0) {
        printf("SKIP: ../shared/traces/pytorch is not here\n");
        TEST_MAIN_END();
    }
    check_kineto("a100-train-rank0-shapes.json.gz");
    check_kineto("mi250-toy-train.json.gz");
    check_kineto("a100-alexnet-noshapes.json.gz");
    /* the execution trace: leaf operators with data dependencies */
    struct diag d;
    struct trace t;
    struct import_stats st;
    CHECK_EQ_INT(import_pytorch_et(SHARED "simple-add-execution-trace.json.gz", &t, &st, &d), 0);
    printf("  simple-add-execution-trace: %u ops, %u deps\n", t.nops, t.ndeps);
    CHECK(t.nops >= 1);
    CHECK_EQ_INT(st.by_kind[OP_ELEMENTWISE], t.nops);
    char out[128];
    snprintf(out, sizeof out, "/tmp/strata-et-%d.json", (int)getpid());
    CHECK_EQ_INT(trace_write(&t, out, &d), 0);
    struct trace t2;
    CHECK_EQ_INT(trace_load(out, &t2, &d), 0); /* deps resolve, no cycle */
    trace_free(&t2);
    remove(out);
    trace_free(&t);
    check_broken();
    TEST_MAIN_END();
}
