/* test_unit_energy.c: energy per op and byte, and the clock a power limit
 * holds (docs/energy.md).
 *
 * - A config's power block and its levels' energy_pJ_per_byte load, and
 *   every bad value is an error naming its field; --set reaches them.
 * - A run's energy is each level's bytes times its energy per byte, plus
 *   the pipes' energy (a GEMM's FLOPs times the matrix pipe's energy per
 *   cycle over its FLOPs per cycle), plus the idle power over the run; the
 *   devices' energies add up to it.  A config without a power block
 *   reports none.
 * - cfg_at_clock scales what runs on the core clock and nothing else.
 * - A sustained run of a GEMM that passes the A100's 400 W limit holds a
 *   lower clock whose power is just under the limit, is slower than a run
 *   at the config's clock, and is deterministic; with a limit it does not
 *   reach, it is the plain run.  A sustained run on a chip without a power
 *   limit is an error; `strata run --sustained` says the clock it held.
 * - Every chip file in configs/ but a listed few has a power block and an
 *   energy per byte on its levels (not the register file, not the links);
 *   an Apple and a TPU chip print an energy line. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "run.h"
#include "system.h"
#include "test.h"
#include "trace.h"
#include "util.h"
#include "validate.h"

#define A100 "configs/nvidia-a100-sxm-80gb.yaml"

static char dir[64];

static const char *path_in(const char *name)
{
    static char buf[4][160];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* The A100 config with `power:` replaced by body (NULL: no power block). */
static const char *a100_with_power(const char *name, const char *body)
{
    char *y = tu_read_file(A100, NULL);
    CHECK(y != NULL);
    if (y == NULL)
        return "";
    char *p = strstr(y, "\npower:");
    CHECK(p != NULL);
    if (p != NULL)
        p[1] = '\0';
    char *out = malloc(strlen(y) + (body ? strlen(body) : 0) + 16);
    sprintf(out, "%s%s", y, body ? body : "");
    /* the chip's relative paths do not matter: a chip file names none */
    tu_write_file(path_in(name), out);
    free(out);
    free(y);
    return path_in(name);
}

static void expect_cfg_error(const char *path, const char *field, const char *what)
{
    struct hw_config h;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK(tu_load_chip(path, NULL, &h, &d) != 0);
    CHECK_STR_CONTAINS(d.field, field);
    CHECK_STR_CONTAINS(d.msg, what);
}

static void test_config(void)
{
    struct hw_config h;
    CHECK_EQ_INT(tu_load_cfg(A100, &h), 0);
    CHECK(h.has_power);
    CHECK_NEAR_REL(h.idle_w, 88, 1e-12);
    CHECK_NEAR_REL(h.power_limit_w, 400, 1e-12);
    CHECK_NEAR_REL(h.matrix_pj_per_cycle, 1434, 1e-12);
    CHECK_NEAR_REL(h.level[h.lv_dram].energy_pj_per_byte, 104.9, 1e-12);
    CHECK_NEAR_REL(cfg_first_cache(&h)->energy_pj_per_byte, 37.7, 1e-12);

    const char *ok = "power:\n  idle_W: 50\n  matrix_pipe_pJ_per_cycle: 1000\n  vector_pipe_pJ_per_cycle: 100\n";
    CHECK_EQ_INT(tu_load_cfg(a100_with_power("ok.yaml", ok), &h), 0);
    CHECK(h.has_power && h.power_limit_w == 0);     /* limit_W is optional */
    CHECK_EQ_INT(tu_load_cfg(a100_with_power("none.yaml", NULL), &h), 0);
    CHECK(!h.has_power);

    expect_cfg_error(a100_with_power("unknown.yaml", "power:\n  idle_W: 50\n  matrix_pipe_pJ_per_cycle: 1\n"
                                                     "  vector_pipe_pJ_per_cycle: 1\n  tdp_W: 400\n"),
                     "power", "unknown key");
    expect_cfg_error(a100_with_power("missing.yaml", "power:\n  idle_W: 50\n  vector_pipe_pJ_per_cycle: 1\n"),
                     "power.matrix_pipe_pJ_per_cycle", "required");
    expect_cfg_error(a100_with_power("low.yaml", "power:\n  idle_W: 90\n  limit_W: 80\n"
                                                 "  matrix_pipe_pJ_per_cycle: 1\n  vector_pipe_pJ_per_cycle: 1\n"),
                     "power.limit_W", "at least idle_W");
    expect_cfg_error(a100_with_power("neg.yaml", "power:\n  idle_W: 50\n  matrix_pipe_pJ_per_cycle: -3\n"
                                                 "  vector_pipe_pJ_per_cycle: 1\n"),
                     "power.matrix_pipe_pJ_per_cycle", "");
    expect_cfg_error(a100_with_power("zero.yaml", "power:\n  idle_W: 0\n  matrix_pipe_pJ_per_cycle: 1\n"
                                                  "  vector_pipe_pJ_per_cycle: 1\n"),
                     "power.idle_W", "");
    /* a level's energy: not negative, and not on the register file */
    char *y = tu_read_file(A100, NULL);
    CHECK(y != NULL);
    if (y != NULL) {
        char *p = strstr(y, "energy_pJ_per_byte: 104.9");
        CHECK(p != NULL);
        if (p != NULL) {
            memcpy(p, "energy_pJ_per_byte: -1.0 ", 25);
            tu_write_file(path_in("negbyte.yaml"), y);
            expect_cfg_error(path_in("negbyte.yaml"), "energy_pJ_per_byte", "");
        }
        free(y);
    }

    /* --set reaches the power block and a level's energy */
    struct cfg_sets sets;
    memset(&sets, 0, sizeof sets);
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(cfg_sets_add(&sets, "power.limit_W=300", "--set", &d), 0);
    CHECK_EQ_INT(cfg_sets_add(&sets, "dram.energy_pJ_per_byte=50", "--set", &d), 0);
    CHECK_EQ_INT(tu_load_chip(A100, &sets, &h, &d), 0);
    CHECK_NEAR_REL(h.power_limit_w, 300, 1e-12);
    CHECK_NEAR_REL(h.level[h.lv_dram].energy_pj_per_byte, 50, 1e-12);
    memset(&sets, 0, sizeof sets);
    CHECK_EQ_INT(cfg_sets_add(&sets, "power.tdp_W=300", "--set", &d), 0);
    CHECK(tu_load_chip(A100, &sets, &h, &d) != 0);
}

static int run_path(const char *hw, const char *trace_path, int sustained, struct trace *t,
                    struct run_result *r)
{
    struct hw_config h;
    if (tu_load_cfg(hw, &h) != 0 || tu_load_trace(trace_path, t) != 0)
        return -1;
    struct diag d;
    memset(&d, 0, sizeof d);
    struct run_opts o = {.sustained = sustained};
    int rc = run_trace_opts(&h, t, &o, r, &d);
    if (rc != 0)
        diag_print(&d, stderr);
    return rc;
}

static void test_accounting(void)
{
    char tp[160];
    snprintf(tp, sizeof tp, "%s", path_in("mix.json"));
    tu_write_file(tp, "{\"strata_trace\": 1, \"ops\": ["
                      "{\"id\": \"mm\", \"kind\": \"gemm\", \"dtype\": \"fp16\", \"m\": 4096, \"n\": 4096, \"k\": 4096},"
                      "{\"id\": \"cp\", \"kind\": \"memcpy\", \"bytes\": 268435456, \"direction\": \"d2d\", \"deps\": [\"mm\"]},"
                      "{\"id\": \"sm\", \"kind\": \"softmax\", \"dtype\": \"fp16\", \"rows\": 4096, \"cols\": 4096, \"deps\": [\"cp\"]}]}");
    struct hw_config h;
    CHECK_EQ_INT(tu_load_cfg(A100, &h), 0);
    struct trace t;
    struct run_result r;
    CHECK_EQ_INT(run_path(A100, tp, 0, &t, &r), 0);
    CHECK(r.has_energy);
    if (!r.has_energy)
        return;
    double levels = 0, pipes = 0, T = (double)r.total_ps * 1e-12;
    for (uint32_t i = 0; i < r.nops; i++) {
        pipes += run_op_body(&r, i)->pipe_pj * 1e-12;
        for (unsigned l = 0; l < h.nlevels; l++)
            levels += run_op_body(&r, i)->bytes[l] * h.level[l].energy_pj_per_byte * 1e-12;
    }
    CHECK_NEAR_REL(r.energy_j[RUN_E_PIPES], pipes, 1e-9);
    CHECK_NEAR_REL(r.energy_j[RUN_E_STATIC], 88.0 * T, 1e-9);
    CHECK_NEAR_REL(run_energy_total(&r), levels + pipes + 88.0 * T, 1e-9);
    CHECK_NEAR_REL(r.dev_energy_j[0], run_energy_total(&r), 1e-9);
    /* the GEMM's pipes: its FLOPs at 1434 pJ a cycle / 2048 FLOP a cycle,
     * and a little more for the padded tiles and the epilogue's vector work */
    int mm = tu_find_op(&t, "mm");
    double want = run_op_body(&r, mm)->flops * 1434.0 / 2048.0;
    CHECK(run_op_body(&r, mm)->pipe_pj >= want * 0.999 && run_op_body(&r, mm)->pipe_pj <= want * 1.10);
    /* the copy moves DRAM bytes only: no pipe energy */
    CHECK(run_op_body(&r, tu_find_op(&t, "cp"))->pipe_pj == 0);
    CHECK(run_op_body(&r, tu_find_op(&t, "cp"))->bytes[h.lv_dram] >= 2.0 * 268435456);
    run_result_free(&r);
    trace_free(&t);

    /* report.json and ops.csv give each op's energy: with the idle
     * energy they add up to the run's */
    char args[512], *out = NULL, *err = NULL;
    snprintf(args, sizeof args, "run --hw " A100 " --trace %s --json %s --csv %s --quiet", tp,
             path_in("r.json"), path_in("r.csv"));
    CHECK_EQ_INT(tu_run_strata(dir, args, &out, &err), 0);
    free(out);
    free(err);
    char *text = tu_read_file(path_in("r.json"), NULL);
    cJSON *rj = text ? cJSON_Parse(text) : NULL;
    double sum = 0;
    const cJSON *op;
    cJSON_ArrayForEach(op, cJSON_GetObjectItemCaseSensitive(rj, "ops"))
        sum += cJSON_GetObjectItemCaseSensitive(op, "energy_J")->valuedouble;
    const cJSON *ej = cJSON_GetObjectItemCaseSensitive(rj, "energy_J");
    CHECK_NEAR_REL(sum + cJSON_GetObjectItemCaseSensitive(ej, "idle")->valuedouble,
                   cJSON_GetObjectItemCaseSensitive(ej, "total")->valuedouble, 1e-9);
    double total_j = cJSON_GetObjectItemCaseSensitive(ej, "total")->valuedouble;
    double idle_j = cJSON_GetObjectItemCaseSensitive(ej, "idle")->valuedouble;
    cJSON_Delete(rj);
    free(text);
    text = tu_read_file(path_in("r.csv"), NULL);
    CHECK(text != NULL && strstr(text, ",energy_J\n") != NULL);
    free(text);
    /* the timeline's power track integrates to the run's energy (its
     * timestamps are whole microseconds: within 1%) */
    snprintf(args, sizeof args, "run --hw " A100 " --trace %s --out %s --no-whatif --quiet", tp, path_in("out"));
    setenv("STRATA_GNUPLOT", "none", 1);
    CHECK_EQ_INT(tu_run_strata(dir, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "%s/timeline.json", path_in("out"));
    text = tu_read_file(args, NULL);
    cJSON *tl = text ? cJSON_Parse(text) : NULL;
    double joules = 0, last_ts = -1, last_w = 0;
    cJSON_ArrayForEach(op, cJSON_GetObjectItemCaseSensitive(tl, "traceEvents")) {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(op, "name");
        if (!cJSON_IsString(nm) || strcmp(nm->valuestring, "power") != 0)
            continue;
        double ts = cJSON_GetObjectItemCaseSensitive(op, "ts")->valuedouble;
        if (last_ts >= 0)
            joules += last_w * (ts - last_ts) * 1e-6;
        last_ts = ts;
        last_w = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(op, "args"), "W")->valuedouble;
    }
    CHECK(last_ts > 0 && last_w == 88.0);      /* after the run: idle */
    CHECK_NEAR_REL(joules, total_j, 0.01);
    cJSON_Delete(tl);
    free(text);
    /* report.html: the run's energy and a column of each op's, its sort
     * key in J; the ops' keys and the idle energy add up to the total */
    snprintf(args, sizeof args, "%s/report.html", path_in("out"));
    text = tu_read_file(args, NULL);
    CHECK(text != NULL && strstr(text, "<b id=\"energy\">") != NULL);
    CHECK(text != NULL && strstr(text, ">energy (mJ)</th>") != NULL);
    double html_sum = 0;
    for (const char *q = text ? strstr(text, "<table id=\"ops\"") : NULL; q != NULL;) {
        q = strstr(q, "<tr><td class=\"l\">");
        if (q == NULL)
            break;
        /* the 7th cell's data-v: after time, share, GFLOP and DRAM MB */
        const char *c = q;
        for (int k = 0; k < 5 && c != NULL; k++)
            c = strstr(c + 1, "data-v=\"");
        if (c != NULL)
            html_sum += strtod(c + 8, NULL);
        q++;
    }
    CHECK_NEAR_REL(html_sum + idle_j, total_j, 1e-6);
    free(text);
    snprintf(args, sizeof args, "rm -rf '%s'", path_in("out"));
    tu_sh(args);

    /* no power block: no energy */
    CHECK_EQ_INT(run_path(a100_with_power("nopower.yaml", NULL), tp, 0, &t, &r), 0);
    CHECK(!r.has_energy && r.dev_energy_j == NULL && run_energy_total(&r) == 0);
    run_result_free(&r);
    trace_free(&t);
}

static void test_at_clock(void)
{
    struct hw_config h, s;
    CHECK_EQ_INT(tu_load_cfg(A100, &h), 0);
    s = h;
    cfg_at_clock(&s, 0.5);
    CHECK_NEAR_REL(s.clock_hz, 0.5 * h.clock_hz, 1e-12);
    CHECK_NEAR_REL(s.matrix_pj_per_cycle, 0.25 * h.matrix_pj_per_cycle, 1e-12);
    CHECK_NEAR_REL(cfg_first_cache(&s)->bw_bytes_per_s, 0.5 * cfg_first_cache(&h)->bw_bytes_per_s, 1e-12);
    CHECK_NEAR_REL((double)cfg_first_cache(&s)->latency_ps, 2.0 * (double)cfg_first_cache(&h)->latency_ps, 1e-6);
    CHECK_NEAR_REL(cfg_smem(&s)->bw_bytes_per_s, 0.5 * cfg_smem(&h)->bw_bytes_per_s, 1e-12);
    CHECK_NEAR_REL(cfg_first_cache(&s)->energy_pj_per_byte, 0.25 * cfg_first_cache(&h)->energy_pj_per_byte, 1e-12);
    /* the DRAM, the links and the idle power keep theirs */
    CHECK(cfg_dram(&s)->bw_bytes_per_s == cfg_dram(&h)->bw_bytes_per_s);
    CHECK(cfg_dram(&s)->latency_ps == cfg_dram(&h)->latency_ps);
    CHECK(cfg_dram(&s)->energy_pj_per_byte == cfg_dram(&h)->energy_pj_per_byte);
    CHECK(cfg_host(&s)->bw_bytes_per_s == cfg_host(&h)->bw_bytes_per_s);
    CHECK(s.idle_w == h.idle_w);
}

static void test_sustained(void)
{
    char tp[160];
    snprintf(tp, sizeof tp, "%s", path_in("g8k.json"));
    tu_write_file(tp, "{\"strata_trace\": 1, \"ops\": [{\"id\": \"mm\", \"kind\": \"gemm\", \"dtype\": \"fp16\","
                      " \"m\": 8192, \"n\": 8192, \"k\": 8192}]}");
    struct trace t;
    struct run_result plain, sus, again;
    if (run_path(A100, tp, 0, &t, &plain) != 0) {
        CHECK(!"the plain run failed");
        return;
    }
    trace_free(&t);
    double T0 = (double)plain.total_ps * 1e-12, w0 = run_energy_total(&plain) / T0;
    CHECK(w0 > 400);                    /* at 1410 MHz the GEMM passes the limit */
    CHECK(plain.clock_scale == 0);
    CHECK_EQ_INT(run_path(A100, tp, 1, &t, &sus), 0);
    double T1 = (double)sus.total_ps * 1e-12, w1 = run_energy_total(&sus) / T1;
    printf("8192^3 fp16 on an A100: %.0f W at 1410 MHz; sustained %.0f W at %.0f MHz, %.0f TFLOP/s "
           "(%u runs)\n", w0, w1, 1410 * sus.clock_scale, sus.flops / T1 / 1e12, sus.power_runs);
    CHECK(sus.clock_scale > 0.6 && sus.clock_scale < 0.95);
    CHECK(w1 <= 400 && w1 >= 400 * (1 - 0.02));
    CHECK(T1 > T0 * 1.05);
    CHECK(sus.power_runs >= 2 && sus.power_runs <= 12);
    trace_free(&t);
    CHECK_EQ_INT(run_path(A100, tp, 1, &t, &again), 0);
    CHECK(again.total_ps == sus.total_ps && again.clock_scale == sus.clock_scale);
    run_result_free(&again);
    trace_free(&t);
    run_result_free(&sus);

    /* a limit no clock meets: the floor, said so */
    const char *low = a100_with_power("low100.yaml", "power:\n  idle_W: 88\n  limit_W: 100\n"
                                                     "  matrix_pipe_pJ_per_cycle: 1434\n  vector_pipe_pJ_per_cycle: 1824\n");
    CHECK_EQ_INT(run_path(low, tp, 1, &t, &sus), 0);
    CHECK(sus.power_floor && sus.clock_scale == 0.25);
    CHECK(run_hot_power(&sus, &t, NULL) > 100);
    run_result_free(&sus);
    trace_free(&t);

    /* a limit the run does not reach: the plain run, at the config's clock */
    const char *hi = a100_with_power("hi.yaml", "power:\n  idle_W: 88\n  limit_W: 2000\n"
                                                "  matrix_pipe_pJ_per_cycle: 1434\n  vector_pipe_pJ_per_cycle: 1824\n");
    CHECK_EQ_INT(run_path(hi, tp, 1, &t, &sus), 0);
    CHECK(sus.clock_scale == 1.0 && sus.total_ps == plain.total_ps);
    run_result_free(&sus);
    trace_free(&t);
    run_result_free(&plain);

    /* no limit: a sustained run is an error naming the field */
    char nolimit[160];
    snprintf(nolimit, sizeof nolimit, "%s", a100_with_power("nolimit.yaml", "power:\n  idle_W: 88\n  matrix_pipe_pJ_per_cycle: 1434\n"
                                                          "  vector_pipe_pJ_per_cycle: 1824\n"));
    struct hw_config h;
    CHECK_EQ_INT(tu_load_cfg(nolimit, &h), 0);
    CHECK_EQ_INT(tu_load_trace(tp, &t), 0);
    struct diag d;
    memset(&d, 0, sizeof d);
    struct run_opts o = {.sustained = 1};
    CHECK(run_trace_opts(&h, &t, &o, &sus, &d) != 0);
    CHECK_STR_CONTAINS(d.field, "power.limit_W");
    trace_free(&t);

    /* the command line */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s run --hw " A100 " --trace %s --sustained > %s 2>&1", STRATA_BINARY, tp,
             path_in("out.txt"));
    CHECK_EQ_INT(tu_sh(cmd), 0);
    char *txt = tu_read_file(path_in("out.txt"), NULL);
    CHECK(txt != NULL);
    if (txt != NULL) {
        CHECK_STR_CONTAINS(txt, "energy ");
        CHECK_STR_CONTAINS(txt, "sustained: the 400 W limit holds the clock at");
    }
    free(txt);
    snprintf(cmd, sizeof cmd, "%s run --hw %s --trace %s --sustained > %s 2>&1", STRATA_BINARY, nolimit, tp,
             path_in("err.txt"));
    CHECK(tu_sh(cmd) != 0);
    txt = tu_read_file(path_in("err.txt"), NULL);
    CHECK(txt != NULL);
    if (txt != NULL)
        CHECK_STR_CONTAINS(txt, "power.limit_W");
    free(txt);
}

/* validate's sustained=1: the row runs sustained; on a chip without a
 * power limit it is an error at the row's line */
static void test_validate(void)
{
    char csvp[160];
    snprintf(csvp, sizeof csvp, "%s", path_in("rows.csv"));
    const char *hdr = "id,hardware,workload,shape_or_model,dtype,batch,metric,value,unit,source,notes,config,spec,"
                      "host_overhead_us\n";
    char text[1024];
    snprintf(text, sizeof text, "%sE-1,A100,GEMM,8192^3,fp16,1,latency,4.28,ms,He 2024,,nvidia-a100-sxm-80gb,"
                                "gemm m=8192 n=8192 k=8192 dtype=fp16 sustained=1,0\n", hdr);
    tu_write_file(csvp, text);
    struct validate_opts o = {.data = csvp, .configs = "configs", .root = "."};
    struct validate_result r;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(validate_run(&o, &r, &d), 0);
    if (r.nrows == 1)   /* 1.1e12 FLOP at the sustained 240 TFLOP/s, not 284 */
        CHECK(r.rows[0].predicted > 4.4 && r.rows[0].predicted < 4.8);
    validate_free(&r);
    snprintf(text, sizeof text, "%sE-1,v5e,GEMM,8192^3,bf16,1,latency,4.28,ms,none,,google-tpu-v5e,"
                                "gemm m=8192 n=8192 k=8192 dtype=bf16 sustained=1,0\n", hdr);
    tu_write_file(csvp, text);
    memset(&d, 0, sizeof d);
    CHECK(validate_run(&o, &r, &d) != 0);
    CHECK_EQ_INT(d.line, 2);
    CHECK_STR_CONTAINS(d.msg, "power limit");

    /* energy metrics: the run's joules over its tokens, the device's
     * average power; refused on a chip without a power block */
    snprintf(text, sizeof text, "%sE-2,A100,decode,Llama-2-7B,fp16,8,energy_per_token,1,J/token,none,,"
                                "nvidia-a100-sxm-80gb,llm model=traces/models/llama-2-7b.json phase=decode batch=8 "
                                "context=512 dtype=fp16,0\n"
                                "E-3,A100,decode,Llama-2-7B,fp16,8,power,300,W,none,,nvidia-a100-sxm-80gb,"
                                "llm model=traces/models/llama-2-7b.json phase=decode batch=8 context=512 dtype=fp16,0\n"
                                "E-5,A100,decode,Llama-2-7B,fp16,8,dynamic_energy_per_token,1,J/token,none,,"
                                "nvidia-a100-sxm-80gb,llm model=traces/models/llama-2-7b.json phase=decode batch=8 "
                                "context=512 dtype=fp16,0\n",
             hdr);
    tu_write_file(csvp, text);
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(validate_run(&o, &r, &d), 0);
    CHECK_EQ_INT((int)r.nrows, 3);
    if (r.nrows == 3) {
        /* J/token x tokens/s = W: 8 tokens a step */
        double step_s = 8.0 * r.rows[0].predicted / r.rows[1].predicted;
        CHECK(r.rows[0].predicted > 0.05 && r.rows[0].predicted < 5);
        CHECK(r.rows[1].predicted > 88 && r.rows[1].predicted < 800);
        CHECK(step_s > 1e-3 && step_s < 0.1);
        /* above idle: the 88 W idle over the step, shared by its 8 tokens, less */
        CHECK_NEAR_REL(r.rows[0].predicted - r.rows[2].predicted, 88.0 * step_s / 8.0, 1e-6);
    }
    validate_free(&r);
    a100_with_power("nopower.yaml", NULL);   /* every shipped chip has a block: a copy without */
    snprintf(text, sizeof text, "%sE-4,A100,decode,Llama-2-7B,fp16,1,energy_per_token,1,J/token,none,,"
                                "nopower,llm model=traces/models/llama-2-7b.json phase=decode dtype=fp16,0\n", hdr);
    tu_write_file(csvp, text);
    memset(&d, 0, sizeof d);
    o.configs = dir;
    CHECK(validate_run(&o, &r, &d) != 0);
    CHECK_STR_CONTAINS(d.msg, "cannot predict metric 'energy_per_token'");
}

/* Every shipped chip has a power block and an energy per byte on each of
 * its levels but the register file and the links (docs/energy.md
 * 'Estimated power blocks'), but for these: */
static const char *const no_power[] = {
    "arm-ethos-u65-256", /* an NPU IP block: no board or package power published for a licensee's chip */
    "nvidia-a10g",       /* AWS publishes no board power for it (docs/new-chip.md) */
};

static void test_every_chip(void)
{
    DIR *dp = opendir("configs");
    CHECK(dp != NULL);
    if (dp == NULL)
        return;
    int nchips = 0, nskipped = 0;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".yaml") != 0)
            continue;
        int skip = 0;
        for (size_t k = 0; k < sizeof no_power / sizeof no_power[0]; k++)
            if (strlen(no_power[k]) == n - 5 && strncmp(e->d_name, no_power[k], n - 5) == 0)
                skip = 1;
        char path[300];
        snprintf(path, sizeof path, "configs/%s", e->d_name);
        struct hw_config h;
        CHECK_EQ_INT(tu_load_cfg(path, &h), 0);
        nchips++;
        if (skip) {
            CHECK(!h.has_power);   /* one that gains a block leaves the list */
            nskipped++;
            continue;
        }
        if (!h.has_power)
            fprintf(stderr, "%s: no power block\n", path);
        CHECK(h.has_power);
        for (uint32_t i = 0; i < h.nlevels; i++) {
            const struct hw_level *L = &h.level[i];
            if (L->kind == LK_REGISTERS || L->kind == LK_LINK)
                continue;
            if (!(L->energy_pj_per_byte > 0))
                fprintf(stderr, "%s: level %s has no energy_pJ_per_byte\n", path, L->name);
            CHECK(L->energy_pj_per_byte > 0);
        }
    }
    closedir(dp);
    CHECK(nchips > 60);
    CHECK_EQ_INT(nskipped, (int)(sizeof no_power / sizeof no_power[0]));

    /* one Apple and one TPU chip print an energy line */
    const char *chips[] = {"configs/apple-m2-max-38c.yaml", "configs/google-tpu-v4.yaml"};
    for (int k = 0; k < 2; k++) {
        char args[512], *out = NULL, *err = NULL;
        snprintf(args, sizeof args, "run --hw %s --trace traces/examples/llama-2-7b-decode-b1-ctx2048.json --top 0",
                 chips[k]);
        CHECK_EQ_INT(tu_run_strata(".", args, &out, &err), 0);
        CHECK(out != NULL && strstr(out, "\n  energy ") != NULL && strstr(out, " J a token") != NULL);
        free(out);
        free(err);
    }
}

int main(void)
{
    CHECK_EQ_INT(tu_mkdtemp(dir, sizeof dir, "energy"), 0);
    test_config();
    test_accounting();
    test_at_clock();
    test_sustained();
    test_validate();
    test_every_chip();
    tu_rmtree(dir);
    TEST_MAIN_END();
}
