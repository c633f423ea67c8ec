/* test_unit_timeline.c: every timeline strata writes is one Perfetto and
 * chrome://tracing can read: valid JSON, every "X" event has dur >= 0,
 * slices on each (pid, tid) nest, counters carry numbers, every process and
 * every thread that has slices is named, and the size stays bounded. */
#include <cjson/cJSON.h>
#include <stdint.h>

#include "test.h"
#include "util.h"

static char tmpdir[64];
static size_t latency_parts;    /* "wait_LEVEL_latency_us" args seen in op slices */

struct span {
    double b, e;
    int pid, tid;
};

static int span_cmp(const void *x, const void *y)
{
    const struct span *a = x, *b = y;
    if (a->pid != b->pid)
        return a->pid - b->pid;
    if (a->tid != b->tid)
        return a->tid - b->tid;
    if (a->b != b->b)
        return a->b < b->b ? -1 : 1;
    return a->e > b->e ? -1 : (a->e < b->e);
}

static int num_of(const cJSON *o, const char *k, double *v)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(it))
        return -1;
    *v = it->valuedouble;
    return 0;
}

/* Counter events fall on bucket boundaries, and buckets are power-of-two
 * multiples of 1 us no finer than the granularity: every counter's ts is a
 * multiple of quantum_us (16 us for the default 10 us granularity). */
static void check_timeline(const char *path, size_t max_events, double quantum_us)
{
    char *text = tu_read_file(path, NULL);
    CHECK(text != NULL);
    if (text == NULL)
        return;
    cJSON *root = cJSON_Parse(text);
    free(text);
    CHECK(root != NULL);
    if (root == NULL)
        return;
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    CHECK(cJSON_IsArray(ev));
    size_t n = (size_t)cJSON_GetArraySize(ev), nspans = 0, named_p = 0, nlatency = 0;
    printf("  %s: %zu events\n", path, n);
    CHECK(n > 0 && n <= max_events);
    struct span *sp = calloc(n + 1, sizeof *sp);
    int named[64][64];
    memset(named, 0, sizeof named);
    int pnamed[64];
    memset(pnamed, 0, sizeof pnamed);
    const cJSON *e;
    cJSON_ArrayForEach(e, ev)
    {
        const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
        CHECK(cJSON_IsString(ph));
        if (!cJSON_IsString(ph))
            continue;
        double pid = 0, tid = 0, ts = 0, dur = 0;
        CHECK(num_of(e, "pid", &pid) == 0 && pid >= 0 && pid < 64);
        num_of(e, "tid", &tid);
        CHECK(tid >= 0 && tid < 64);
        const char *p = ph->valuestring;
        if (strcmp(p, "M") == 0) {
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
            const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
            CHECK(cJSON_IsString(nm) && cJSON_IsObject(args));
            if (cJSON_IsString(nm) && strcmp(nm->valuestring, "process_name") == 0)
                pnamed[(int)pid] = 1, named_p++;
            if (cJSON_IsString(nm) && strcmp(nm->valuestring, "thread_name") == 0)
                named[(int)pid][(int)tid] = 1;
            continue;
        }
        CHECK(num_of(e, "ts", &ts) == 0 && ts >= 0);
        if (strcmp(p, "X") == 0) {
            CHECK(num_of(e, "dur", &dur) == 0);
            CHECK(dur >= 0);
            CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "name")));
            /* an op's time split (busy, launch, measured, each level's wait as its
             * bandwidth and its latency) adds up to its slice */
            const cJSON *cat = cJSON_GetObjectItemCaseSensitive(e, "cat");
            if (cJSON_IsString(cat) && strcmp(cat->valuestring, "op") == 0) {
                const cJSON *a;
                double parts = 0;
                cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(e, "args"))
                    if (a->string != NULL && tu_ends_with(a->string, "_us")) {
                        parts += a->valuedouble;
                        nlatency += strstr(a->string, "_latency_us") != NULL;
                    }
                CHECK(fabs(parts - dur) <= 1e-5 * (1 + dur));
            }
            sp[nspans].b = ts;
            sp[nspans].e = ts + dur;
            sp[nspans].pid = (int)pid;
            sp[nspans].tid = (int)tid;
            nspans++;
        } else if (strcmp(p, "C") == 0) {
            const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args"), *a;
            CHECK(cJSON_IsObject(args) && cJSON_GetArraySize(args) > 0);
            cJSON_ArrayForEach(a, args) CHECK(cJSON_IsNumber(a));
            CHECK(pnamed[(int)pid]);
            double q = ts / quantum_us;
            if (fabs(q - floor(q + 0.5)) > 1e-6) {
                CHECK(0);
                fprintf(stderr, "  counter at %.6f us is not on a %.0f us bucket boundary\n", ts,
                        quantum_us);
            }
        } else {
            CHECK(strcmp(p, "s") == 0 || strcmp(p, "f") == 0);
        }
    }
    CHECK(named_p > 0);
    latency_parts += nlatency;
    /* nesting: sort by (track, begin, longest first) and keep a stack of ends */
    qsort(sp, nspans, sizeof *sp, span_cmp);
    double stack[256];
    int depth = 0, bad = 0;
    for (size_t i = 0; i < nspans; i++) {
        if (i > 0 && (sp[i].pid != sp[i - 1].pid || sp[i].tid != sp[i - 1].tid))
            depth = 0;
        while (depth > 0 && stack[depth - 1] <= sp[i].b + 1e-6)
            depth--;
        if (depth > 0 && sp[i].e > stack[depth - 1] + 1e-6)
            bad++;
        if (depth < 256)
            stack[depth++] = sp[i].e;
        CHECK(named[sp[i].pid][sp[i].tid]);
    }
    CHECK_EQ_INT(bad, 0);
    free(sp);
    cJSON_Delete(root);
}

/* The HTML plots carry no redundant marks: no two roofline circles at the
 * same place and colour (ops that coincide are one circle that says how
 * many), and no two consecutive steps of a bandwidth line at one height. */
static void check_html(const char *path, int expect_merged)
{
    char *h = tu_read_file(path, NULL);
    CHECK(h != NULL);
    if (h == NULL)
        return;
    enum { MAXC = 4096 };
    static char seen[MAXC][96];
    int nc = 0, dup = 0;
    for (const char *c = strstr(h, "<circle cx=\""); c != NULL; c = strstr(c + 1, "<circle cx=\"")) {
        const char *end = strstr(c, " fill-opacity");
        CHECK(end != NULL && end - c < 96);
        if (end == NULL || end - c >= 96 || nc == MAXC)
            break;
        char key[96];
        memcpy(key, c, (size_t)(end - c));
        key[end - c] = '\0';
        for (int i = 0; i < nc; i++)
            dup += strcmp(seen[i], key) == 0;
        memcpy(seen[nc++], key, sizeof key);
    }
    printf("  %s: %d roofline circles\n", path, nc);
    CHECK(nc > 0);
    CHECK_EQ_INT(dup, 0);
    if (expect_merged)
        CHECK_STR_CONTAINS(h, " more ops at ");
    const char *bw = strstr(h, "id=\"plot-bandwidth\"");
    CHECK(bw != NULL);
    int lines = 0, same = 0;
    for (const char *pl = bw ? strstr(bw, "points=\"") : NULL; pl != NULL; pl = strstr(pl + 1, "points=\"")) {
        /* "x0,y x1,y x1,y' x2,y' ...": a segment is two points at one y */
        const char *q = pl + 8;
        double prev_y = -1;
        int first = 1;
        lines++;
        while (*q != '"' && *q != '\0') {
            double x0, y0, x1, y1;
            int used = 0;
            if (sscanf(q, "%lf,%lf %lf,%lf %n", &x0, &y0, &x1, &y1, &used) != 4 || used == 0)
                break;
            CHECK(y0 == y1 && x1 >= x0);
            if (!first && y0 == prev_y)
                same++;
            prev_y = y0;
            first = 0;
            q += used;
        }
    }
    CHECK(lines > 0);
    CHECK_EQ_INT(same, 0);
    free(h);
}

static void run_one(const char *hw, const char *trace, const char *extra, size_t max_events,
                    double quantum_us, int html_merged)
{
    char cmd[2048], out[256], tlp[300];
    snprintf(out, sizeof out, "%s/out", tmpdir);
    snprintf(cmd, sizeof cmd, "'%s' run --hw %s --trace %s --out '%s' --quiet %s", STRATA_BINARY,
             hw, trace, out, extra);
    CHECK_EQ_INT(tu_sh(cmd), 0);
    snprintf(tlp, sizeof tlp, "%s/timeline.json", out);
    check_timeline(tlp, max_events, quantum_us);
    snprintf(tlp, sizeof tlp, "%s/report.html", out);
    check_html(tlp, html_merged);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", out);
    tu_sh(cmd);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/strata-tl-XXXXXX");
    if (mkdtemp(tmpdir) == NULL)
        return 1;
    run_one("configs/nvidia-a100-sxm-80gb.yaml", "traces/examples/two-streams.json", "", 200000, 16,
            0);
    /* 32 identical layers: their ops coincide on the roofline */
    run_one("configs/nvidia-h100-sxm.yaml", "traces/examples/llama-2-7b-decode-b1-ctx2048.json", "",
            200000, 16, 1);
    CHECK(latency_parts > 0);       /* a decode's small ops wait out DRAM's latency */
    /* a long run stays bounded: the bucket width and wave merging adapt */
    run_one("configs/nvidia-h100-sxm.yaml", "traces/examples/llama-2-7b-prefill-2048.json",
            "--timeline-granularity-us 100", 80000, 128, 1);
    tu_rmtree(tmpdir);
    TEST_MAIN_END();
}
