/* test_golden_small.c: a small fixed trace on the A100 config must keep
 * giving the times recorded in tests/golden/small-a100.json.
 *
 * The point is to catch *unintended* model changes: any edit to the
 * models, the engine or the A100 config that moves these numbers fails
 * here.  After a *deliberate* model change, regenerate the golden file
 * with tests/golden/regen.sh (which runs this program with
 * STRATA_GOLDEN_REGEN=1, so the trace below is the single source of truth)
 * and commit the new file together with the change.
 *
 * Tolerance: relative 1e-6 on total_time_s and on each op's time_s.  The
 * simulator is deterministic and counts time in integer picoseconds, so
 * the same code gives the same numbers bit for bit; 1e-6 only leaves room
 * for printing/parsing and libm differences between platforms, and is far
 * below any real model change (which moves times by percents).
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "util.h"

#define GOLDEN_TOL 1e-6
#define GOLDEN_FILE STRATA_SOURCE_DIR "/tests/golden/small-a100.json"
#define GOLDEN_CONFIG "configs/nvidia-a100-sxm-80gb.yaml"

/* The fixed workload: a GEMM, an elementwise op that waits for it, and a
 * softmax (which follows on stream 0).  Changing it means regenerating. */
static const char small_trace[] =
    "{\"strata_trace\": 1, \"name\": \"golden small\", \"ops\": [\n"
    " {\"id\": \"gemm\", \"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 1024, \"n\": 1024, "
    "\"k\": 1024},\n"
    " {\"id\": \"ew\", \"kind\": \"elementwise\", \"dtype\": \"bf16\", \"elements\": 1048576, "
    "\"deps\": [\"gemm\"]},\n"
    " {\"id\": \"softmax\", \"kind\": \"softmax\", \"dtype\": \"bf16\", \"rows\": 1024, "
    "\"cols\": 1024}\n"
    "]}\n";

static char tmpdir[64];

static cJSON *load_json(const char *path)
{
    char *text = tu_read_file(path, NULL);
    if (text == NULL) {
        fprintf(stderr, "cannot read %s\n", path);
        return NULL;
    }
    cJSON *j = cJSON_Parse(text);
    free(text);
    if (j == NULL)
        fprintf(stderr, "%s is not valid JSON\n", path);
    return j;
}

static double num(const cJSON *j, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsNumber(it) ? it->valuedouble : (double)NAN;
}

static const char *str(const cJSON *j, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsString(it) ? it->valuestring : "";
}

/* Runs the trace and returns the parsed report (NULL on failure). */
static cJSON *run_small(void)
{
    char trace[128], out[128], cmd[1024];
    snprintf(trace, sizeof trace, "%s/small.json", tmpdir);
    snprintf(out, sizeof out, "%s/small-report.json", tmpdir);
    tu_write_file(trace, small_trace);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && '%s' run --hw " GOLDEN_CONFIG " --trace '%s' --json '%s' --quiet",
             STRATA_SOURCE_DIR, STRATA_BINARY, trace, out);
    int st = system(cmd);
    int rc = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    CHECK_EQ_INT(rc, 0);
    if (rc != 0) {
        fprintf(stderr, "failed: %s\n", cmd);
        return NULL;
    }
    cJSON *r = load_json(out);
    CHECK(r != NULL);
    return r;
}

/* Writes the golden file from a report (temp file + rename). */
static int write_golden(const cJSON *report)
{
    cJSON *g = cJSON_CreateObject();
    cJSON_AddStringToObject(g, "about",
                            "golden times of the trace in tests/test_golden_small.c; "
                            "regenerate with tests/golden/regen.sh after a deliberate model change");
    cJSON_AddStringToObject(g, "config", GOLDEN_CONFIG);
    cJSON_AddStringToObject(g, "version", str(report, "version"));
    cJSON_AddNumberToObject(g, "total_time_s", num(report, "total_time_s"));
    cJSON *ops = cJSON_AddArrayToObject(g, "ops");
    const cJSON *op;
    cJSON_ArrayForEach(op, cJSON_GetObjectItemCaseSensitive(report, "ops"))
    {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", str(op, "id"));
        cJSON_AddNumberToObject(o, "time_s", num(op, "time_s"));
        cJSON_AddStringToObject(o, "bound", str(op, "bound"));
        cJSON_AddItemToArray(ops, o);
    }
    char *text = cJSON_Print(g);
    cJSON_Delete(g);
    if (text == NULL)
        return -1;
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", GOLDEN_FILE, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    int bad = f == NULL;
    if (f != NULL) {
        bad = fputs(text, f) < 0 || fputc('\n', f) == EOF;
        bad |= fclose(f) != 0;
    }
    free(text);
    if (bad || rename(tmp, GOLDEN_FILE) != 0) {
        perror(GOLDEN_FILE);
        remove(tmp);
        return -1;
    }
    printf("rewrote %s\n", GOLDEN_FILE);
    return 0;
}

static void compare(const cJSON *report, const cJSON *golden)
{
    double t = num(report, "total_time_s"), gt = num(golden, "total_time_s");
    printf("total_time_s  %.9g (golden %.9g)\n", t, gt);
    CHECK(!isnan(gt));
    CHECK_NEAR_REL(t, gt, GOLDEN_TOL);
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(report, "ops");
    const cJSON *gops = cJSON_GetObjectItemCaseSensitive(golden, "ops");
    int n = cJSON_GetArraySize(ops), gn = cJSON_GetArraySize(gops);
    CHECK_EQ_INT(n, 3);
    CHECK_EQ_INT(n, gn);
    for (int i = 0; i < n && i < gn; i++) {
        const cJSON *o = cJSON_GetArrayItem(ops, i), *g = cJSON_GetArrayItem(gops, i);
        double ot = num(o, "time_s"), gto = num(g, "time_s");
        printf("  %-8s time_s %.9g (golden %.9g), bound %s (golden %s)\n", str(o, "id"), ot,
               gto, str(o, "bound"), str(g, "bound"));
        CHECK(strcmp(str(o, "id"), str(g, "id")) == 0);
        CHECK(!isnan(gto));
        CHECK_NEAR_REL(ot, gto, GOLDEN_TOL);
    }
}

int main(void)
{
    if (tu_mkdtemp(tmpdir, sizeof tmpdir, "strata-golden") != 0)
        return 1;
    const char *regen = getenv("STRATA_GOLDEN_REGEN");
    cJSON *report = run_small();
    if (report != NULL) {
        if (regen != NULL && strcmp(regen, "1") == 0)
            CHECK_EQ_INT(write_golden(report), 0);
        int failed_before = test_failed_;
        cJSON *golden = load_json(GOLDEN_FILE);
        CHECK(golden != NULL);
        if (golden != NULL)
            compare(report, golden);
        if (test_failed_ != failed_before)
            fprintf(stderr,
                    "\nThe simulated times no longer match %s.\n"
                    "If the model change was deliberate, regenerate the golden file with\n"
                    "    tests/golden/regen.sh\n"
                    "review the diff and commit it with the change; otherwise this is a "
                    "regression.\n",
                    GOLDEN_FILE);
        cJSON_Delete(golden);
        cJSON_Delete(report);
    }
    tu_rmtree(tmpdir);
    TEST_MAIN_END();
}
