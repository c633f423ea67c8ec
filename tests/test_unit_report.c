/* test_unit_report.c: report.json is written op by op (report_json_write)
 * and the --out page and plots read the ops from the run (plot_render_run),
 * so a 1M-op run holds no tree of its ops (issue 14).  Both must give the
 * bytes the whole cJSON tree gives (report_json_tree, printed by cJSON;
 * plot_render_tree): for traces with one and many devices, a timeline,
 * what-ifs, an op with a measured time and names that need escaping. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bodytext.h"
#include "plot.h"
#include "report_json.h"
#include "run.h"
#include "system.h"
#include "test.h"
#include "timeline.h"
#include "util.h"
#include "whatif.h"

static char dir[64];

static void same_files(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    char *x = tu_read_file(a, &na), *y = tu_read_file(b, &nb);
    CHECK(x != NULL && y != NULL);
    if (x != NULL && y != NULL) {
        if (na != nb || memcmp(x, y, na) != 0)
            fprintf(stderr, "  %s and %s differ\n", a, b);
        CHECK(na == nb && memcmp(x, y, na) == 0);
    }
    free(x);
    free(y);
}

static void check_trace(const char *hw, const char *trace_path, int with_out)
{
    struct diag d;
    memset(&d, 0, sizeof d);
    struct hw_system sys;
    int sr = tu_load_hw(hw, NULL, &sys, &d);
    CHECK(sr >= 0);
    if (sr < 0)
        return;
    struct hw_config chip = sys.chip;
    struct trace t;
    CHECK_EQ_INT(tu_load_trace(trace_path, &t), 0);
    if (sr == 1)
        sys_from_chip(&chip, t.ndevices, (const char (*)[32])t.devices, &sys);
    struct timeline tl;
    struct run_opts ro = {.tl = NULL, .max_events = 0};
    if (with_out) {
        tl_init(&tl, t.ndevices, TL_SERIES_PER_DEV, 10000000);
        ro.tl = &tl;
    }
    struct run_result r;
    CHECK_EQ_INT(run_system_opts(&sys, &t, &ro, &r, &d), 0);
    struct whatif w[WHATIF_COUNT];
    struct report_ctx c = {&sys.chip, &t, &r, t.tokens, 15, ro.tl, w, 0, sys.implied ? NULL : &sys};
    struct whatif_hw wh = {hw, NULL, NULL, NULL};
    if (with_out)
        c.nwhatif = whatif_run(&wh, &sys.chip, &t, 0, NULL, w);
    if (with_out && t.ndevices > 1) {   /* several devices: the peer link's what-if too */
        CHECK_EQ_INT((int)c.nwhatif, WHATIF_COUNT);
        CHECK(c.nwhatif == WHATIF_COUNT && strcmp(w[WHATIF_COUNT - 1].name, "link_bw_x2") == 0);
    }

    /* the streamed report and the tree's print */
    char streamed[160], whole[160];
    snprintf(streamed, sizeof streamed, "%s/streamed.json", dir);
    snprintf(whole, sizeof whole, "%s/whole.json", dir);
    CHECK_EQ_INT(report_json(&c, streamed, &d), 0);
    void *tree = report_json_tree(&c);
    CHECK_EQ_INT(report_json_tree_write(tree, whole, &d), 0);
    same_files(streamed, whole);

    /* the page and plots from the run's ops and from the tree's */
    if (with_out) {
        char o1[160], o2[160], p1[200], p2[200];
        snprintf(o1, sizeof o1, "%s/from-run", dir);
        snprintf(o2, sizeof o2, "%s/from-tree", dir);
        void *head = report_json_head(&c);
        CHECK_EQ_INT(plot_render_run(head, &c, streamed, o1, &d), 0);
        CHECK_EQ_INT(plot_render_tree(tree, streamed, o2, &d), 0);
        report_tree_free(head);
        static const char *const files[] = {"report.html", "plots/stalls.dat", "plots/roofline.dat",
                                            "plots/bandwidth.dat", "plots/stalls.gp"};
        for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
            snprintf(p1, sizeof p1, "%s/%s", o1, files[k]);
            snprintf(p2, sizeof p2, "%s/%s", o2, files[k]);
            same_files(p1, p2);
        }
        tu_rmtree(o1);
        tu_rmtree(o2);
        tl_free(&tl);
    }
    report_tree_free(tree);
    run_result_free(&r);
    trace_free(&t);
    sys_free(&sys);
}

/* A what-if is the run with its named overrides (`--set`) added: each
 * one's time is what a load with them gives, and the ones that must move a
 * DRAM-bound decode do. */
static void check_whatif_is_a_set(const char *hw, const char *trace_path)
{
    struct cfg_sets base;
    memset(&base, 0, sizeof base);
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(cfg_sets_add(&base, "l2.capacity=40MiB", "--set", &d), 0);
    struct hw_system sys;
    struct trace t;
    CHECK_EQ_INT(tu_load_trace(trace_path, &t), 0);
    CHECK_EQ_INT(tu_load_hw(hw, &base, &sys, &d), 1);
    struct hw_config chip = sys.chip;
    sys_from_chip(&chip, t.ndevices, (const char (*)[32])t.devices, &sys);
    struct run_result r;
    struct run_opts ro = {.tl = NULL};
    CHECK_EQ_INT(run_system_opts(&sys, &t, &ro, &r, &d), 0);
    double t0 = (double)r.total_ps * 1e-12;
    run_result_free(&r);
    sys_free(&sys);
    struct whatif_hw wh = {hw, &base, NULL, NULL};
    struct whatif w[WHATIF_COUNT];
    unsigned n = whatif_run(&wh, &chip, &t, 0, NULL, w);
    CHECK_EQ_INT((int)n, WHATIF_COUNT - 1);   /* one device: no peer-link what-if */
    CHECK_STR_CONTAINS(w[0].set, "dram.bandwidth=x2");
    CHECK_STR_CONTAINS(w[2].set, "compute.sparse_matrix_flops_per_cycle_per_unit=x2");
    for (unsigned i = 0; i < n; i++) {
        struct cfg_sets s = base;
        CHECK_EQ_INT(cfg_sets_add_list(&s, w[i].set, "--set", &d), 0);
        CHECK_EQ_INT(tu_load_hw(hw, &s, &sys, &d), 1);
        chip = sys.chip;
        sys_from_chip(&chip, t.ndevices, (const char (*)[32])t.devices, &sys);
        CHECK_EQ_INT(run_system_opts(&sys, &t, &ro, &r, &d), 0);
        CHECK((double)r.total_ps * 1e-12 == w[i].total_time_s);
        run_result_free(&r);
        sys_free(&sys);
    }
    CHECK(w[0].total_time_s < 0.8 * t0);   /* dram x2 on a decode */
    CHECK(w[4].total_time_s < t0);         /* no launch overhead */
    trace_free(&t);
}

/* A level's wait split by cause (issue 33): a Llama-2-7B decode on an H100
 * waits on DRAM's bandwidth at the data sheet's 3.35 TB/s, and below its
 * rate (too few bytes in flight for its latency) at 16 TB/s, where more
 * bandwidth no longer helps and half the latency does. */
static void check_wait_split(void)
{
    const char *tr = "traces/examples/llama-2-7b-decode-b1-ctx2048.json";
    struct trace t;
    CHECK_EQ_INT(tu_load_trace(tr, &t), 0);
    const char *bw[2] = {"dram.bandwidth=3.35TB/s", "dram.bandwidth=16TB/s"};
    for (int k = 0; k < 2; k++) {
        struct cfg_sets sets;
        memset(&sets, 0, sizeof sets);
        struct diag d;
        memset(&d, 0, sizeof d);
        CHECK_EQ_INT(cfg_sets_add(&sets, bw[k], "--set", &d), 0);
        struct hw_system sys;
        CHECK_EQ_INT(tu_load_hw("configs/nvidia-h100-sxm.yaml", &sets, &sys, &d), 1);
        struct hw_config chip = sys.chip;
        sys_from_chip(&chip, t.ndevices, (const char (*)[32])t.devices, &sys);
        struct run_result r;
        struct run_opts ro = {.tl = NULL};
        CHECK_EQ_INT(run_system_opts(&sys, &t, &ro, &r, &d), 0);
        int dram = chip.lv_dram;
        double wait = r.time_ps[CAT_STALL + dram], lat = r.lat_ps[dram];
        printf("  H100 decode at %s: %.1f%% waiting on dram, %.1f%% of it below its rate; bound %s\n",
               bw[k], 100 * wait / (double)r.total_ps, 100 * lat / wait, run_result_bound(&chip, &r));
        if (k == 0) {
            CHECK(lat < 0.2 * wait);
            CHECK(strcmp(run_result_bound(&chip, &r), "dram") == 0);
        } else {
            CHECK(lat > 0.8 * wait);
            CHECK(strcmp(run_result_bound(&chip, &r), "dram latency") == 0);
        }
        for (uint32_t i = 0; i < r.nops; i++)   /* a part of each wait, never more */
            for (unsigned l = 0; l < chip.nlevels; l++)
                CHECK(run_op_body(&r, i)->lat_ps[l] <= run_op_body(&r, i)->time_ps[CAT_STALL + l]);
        if (k == 1) {   /* the verdict's claim, re-simulated: half the latency helps, 2x bandwidth not */
            struct whatif_hw wh = {"configs/nvidia-h100-sxm.yaml", &sets, NULL, NULL};
            struct whatif w[WHATIF_COUNT];
            CHECK_EQ_INT((int)whatif_run(&wh, &chip, &t, 0, NULL, w), WHATIF_COUNT - 1);
            double t0 = (double)r.total_ps * 1e-12;
            CHECK(strcmp(w[0].name, "dram_bw_x2") == 0);
            CHECK(strcmp(w[5].name, "dram_lat_x0.5") == 0);
            CHECK(w[0].total_time_s > 0.98 * t0);
            CHECK(w[5].total_time_s < 0.9 * t0);
        }
        run_result_free(&r);
        sys_free(&sys);
    }
    trace_free(&t);
}

/* Numbers after the first cell of the line of text that begins with
 * lead (after spaces): up to max into v; how many. */
static unsigned row_numbers(const char *text, const char *lead, const char *sep, double *v, unsigned max)
{
    const char *p = text;
    size_t nl = strlen(lead);
    for (;;) {
        while (*p == ' ')
            p++;
        if (strncmp(p, lead, nl) == 0)
            break;
        p = strchr(p, '\n');
        if (p == NULL)
            return 0;
        p++;
    }
    p += nl;
    unsigned n = 0;
    while (n < max && *p != '\0' && *p != '\n') {
        char *e;
        double x = strtod(p, &e);
        if (e == p) {
            p++;
            continue;
        }
        v[n++] = x;
        p = e;
        if (sep != NULL && strncmp(p, sep, strlen(sep)) != 0 && *p != '<')
            break;
    }
    return n;
}

/* A multi-GPU run's per-device summary (compute, host, memory, each link,
 * idle, total) in the terminal report and report.html, and gpu0's ops in
 * ops.csv, agree to 0.1% of the step (issue 33). */
static void check_device_summary(const char *tp)
{
    char cmd[600], out[160];
    snprintf(out, sizeof out, "%s/kinds", dir);
    snprintf(cmd, sizeof cmd, "'%s' run --hw configs/systems/nvidia-dgx-a100.yaml --trace '%s' --out '%s' "
             "> '%s/kinds.txt'", STRATA_BINARY, tp, out, dir);
    CHECK_EQ_INT(tu_sh(cmd), 0);
    char path[200];
    snprintf(path, sizeof path, "%s/kinds.txt", dir);
    char *text = tu_read_file(path, NULL);
    snprintf(path, sizeof path, "%s/report.html", out);
    char *html = tu_read_file(path, NULL);
    snprintf(path, sizeof path, "%s/ops.csv", out);
    char *csv = tu_read_file(path, NULL);
    CHECK(text != NULL && html != NULL && csv != NULL);
    if (text == NULL || html == NULL || csv == NULL)
        goto done;
    /* compute, host, memory, pcie, nvlink, idle, total (ms) */
    double tv[8], hv[8];
    CHECK_EQ_INT((int)row_numbers(text, "gpu0 ", NULL, tv, 8), 7);
    const char *h = strstr(html, "<td class=\"l\">gpu0</td>");
    CHECK(h != NULL);
    CHECK_EQ_INT(h ? (int)row_numbers(h, "<td class=\"l\">gpu0</td>", NULL, hv, 8) : 0, 7);
    double step = tv[6];
    CHECK(step > 0);
    double sum = 0;
    for (int k = 0; k < 6; k++) {
        sum += tv[k];
        CHECK(fabs(tv[k] - hv[k]) <= 0.001 * step);
    }
    CHECK(fabs(sum - step) <= 0.001 * step);
    CHECK(tv[4] > 0.05 * step);                 /* the step waits on nvlink */
    /* the op table: the same op on each of the 8 ranks is one row */
    CHECK(strstr(html, ">r0.lm_head &times;8<") != NULL);
    CHECK(strstr(html, ">r1.lm_head") == NULL);
    /* ops.csv: gpu0's busy_s; launch_s + measured_s; stall_* at the levels
     * that are not links; each link; in ms */
    char *line = csv, *save = NULL;
    char *hdr = strtok_r(line, "\n", &save);
    char cols[40][32];
    int nc = 0;
    for (char *c = hdr, *e; c != NULL && nc < 40; c = e ? e + 1 : NULL) {
        e = strchr(c, ',');
        snprintf(cols[nc++], sizeof cols[0], "%.*s", e ? (int)(e - c) : (int)strlen(c), c);
    }
    double cv[5] = {0};
    for (char *row = strtok_r(NULL, "\n", &save); row != NULL; row = strtok_r(NULL, "\n", &save)) {
        char *f = row;
        int dev0 = 0;
        for (int k = 0; k < nc && f != NULL; k++) {
            char *e = strchr(f, ',');
            if (strcmp(cols[k], "device") == 0)
                dev0 = strncmp(f, "gpu0,", 5) == 0;
            double x = atof(f) * 1e3;
            if (dev0 && strcmp(cols[k], "busy_s") == 0)
                cv[0] += x;
            else if (dev0 && (strcmp(cols[k], "launch_s") == 0 || strcmp(cols[k], "measured_s") == 0))
                cv[1] += x;
            else if (dev0 && strcmp(cols[k], "stall_pcie_s") == 0)
                cv[3] += x;
            else if (dev0 && strcmp(cols[k], "stall_nvlink_s") == 0)
                cv[4] += x;
            else if (dev0 && strncmp(cols[k], "stall_", 6) == 0)
                cv[2] += x;
            f = e ? e + 1 : NULL;
        }
    }
    for (int k = 0; k < 5; k++) {
        if (fabs(cv[k] - tv[k]) > 0.001 * step)
            fprintf(stderr, "  column %d: ops.csv %g ms, report %g ms\n", k, cv[k], tv[k]);
        CHECK(fabs(cv[k] - tv[k]) <= 0.001 * step);
    }
done:
    free(text);
    free(html);
    free(csv);
    tu_rmtree(out);
}

/* bodytext_fn: body b's text, counting the calls; a long text for body 1 */
static unsigned fmt_calls;
static void fmt_body(struct sb *out, const void *ctx, uint32_t b)
{
    (void)ctx;
    fmt_calls++;
    if (b == 1)
        for (int k = 0; k < 100000; k++)
            sb_puts(out, "0123456789");
    else
        sb_printf(out, ",body %u", b);
}

/* A writer's body text is made once per body and copied after; once the
 * cache holds BODYTEXT_MAX_BYTES it is made each time, the same bytes. */
static void test_bodytext(void)
{
    struct bodytext bt;
    bodytext_init(&bt, 3);
    struct sb out = {0};
    fmt_calls = 0;
    for (int k = 0; k < 5; k++)
        bodytext_put(&bt, &out, 2, fmt_body, NULL);
    bodytext_put(&bt, &out, 0, fmt_body, NULL);
    CHECK_EQ_INT(fmt_calls, 2);
    CHECK(out.s != NULL && strcmp(out.s, ",body 2,body 2,body 2,body 2,body 2,body 0") == 0);
    /* fill the cache past its limit with body 1's megabyte */
    while (bt.text.n < BODYTEXT_MAX_BYTES) {
        bt.at[1] = 0;
        size_t n;
        bodytext_get(&bt, 1, fmt_body, NULL, &n);
        CHECK_EQ_INT(n, 1000000);
    }
    fmt_calls = 0;
    for (int k = 0; k < 3; k++) {
        size_t n;
        bt.at[1] = 0;
        const char *s = bodytext_get(&bt, 1, fmt_body, NULL, &n);
        CHECK(n == 1000000 && memcmp(s, "0123456789", 10) == 0);
    }
    CHECK_EQ_INT(fmt_calls, 3);     /* made each time now */
    out.n = 0;
    bodytext_put(&bt, &out, 2, fmt_body, NULL);     /* made before the cache filled */
    CHECK(strcmp(out.s, ",body 2") == 0 && fmt_calls == 3);
    free(out.s);
    bodytext_free(&bt);
}

int main(void)
{
    test_bodytext();
    CHECK(tu_mkdtemp(dir, sizeof dir, "strata-report") == 0);
    setenv("STRATA_GNUPLOT", "none", 1);
    char odd[160];
    snprintf(odd, sizeof odd, "%s/odd.json", dir);
    /* a measured op (its report object has two "measured_s"), names with a
     * quote, a backslash and UTF-8, a tile string, two streams */
    tu_write_file(odd,
                  "{\"strata_trace\": 1, \"ops\": [\n"
                  "{\"id\": \"a\\\"b\\\\c/d\", \"name\": \"x y\\u00e9\\u4e2d <>&\", \"kind\": \"gemm\", "
                  "\"dtype\": \"bf16\", \"m\": 64, \"n\": 64, \"k\": 64, \"measured_s\": 2e-6},\n"
                  "{\"id\": \"b\", \"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 640, \"n\": 64, \"k\": 64, "
                  "\"stream\": 1},\n"
                  "{\"id\": \"c\", \"kind\": \"elementwise\", \"dtype\": \"fp32\", \"elements\": 1000, "
                  "\"deps\": [\"a\\\"b\\\\c/d\", \"b\"]}]}\n");
    check_trace("configs/nvidia-h100-sxm.yaml", odd, 1);
    check_trace("configs/nvidia-h100-sxm.yaml", odd, 0);
    check_trace("configs/nvidia-a100-sxm-80gb.yaml", "traces/examples/llama-2-7b-decode-b1-ctx2048.json", 1);
    check_trace("configs/apple-m2-max-38c.yaml", "traces/examples/two-streams.json", 1);
    /* many devices on a system: per-device times, links */
    char tp[160];
    snprintf(tp, sizeof tp, "%s/tp.json", dir);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "'%s' gen llm --model traces/models/llama-2-7b.json --phase decode --context 256 "
             "--tp 8 -o '%s' >/dev/null", STRATA_BINARY, tp);
    CHECK_EQ_INT(tu_sh(cmd), 0);
    check_trace("configs/systems/nvidia-dgx-a100.yaml", tp, 1);
    check_device_summary(tp);
    check_whatif_is_a_set("configs/nvidia-h100-sxm.yaml", "traces/examples/llama-2-7b-decode-b1-ctx2048.json");
    check_wait_split();
    tu_rmtree(dir);
    TEST_MAIN_END();
}
