/* test_unit_decoder.c: an inline weight decoder (a level of kind decoder,
 * LazyWeights) and entropy-coded weight formats (docs/lazyweights.md).
 *
 * - The what-if config loads with its decoder between L2 and DRAM, at its
 *   own clock; --set reaches its rate.
 * - A GEMV on coded weights (q4_k+huffman) reads wfmt_bits(coded) /
 *   wfmt_bits(q4_k) of the weights' bytes from DRAM, and the decoder puts
 *   out the weights decoded; the activations bypass it; the run is faster
 *   than with plain q4_k, by no more than DRAM bytes allow.
 * - A decoder slowed far below DRAM binds: the op takes its decoded bytes
 *   over the decoder's rate, and its wait is the decoder's.
 * - The working set (what must fit in DRAM) counts coded bytes.
 * - Coded weights on a chip without a decoder are an error at the op's line;
 *   a chip without a decoder runs plain weights as before. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cfg.h"
#include "cfgset.h"
#include "run.h"
#include "test.h"
#include "trace.h"
#include "util.h"
#include "wfmt.h"

#define LW "configs/nvidia-jetson-orin-nano-8gb-super-lazyweights.yaml"
#define PLAIN "configs/nvidia-jetson-orin-nano-8gb-super.yaml"

static char dir[64];

static const char *gemv_trace(const char *name, const char *weights)
{
    static char path[2][128];
    static int k;
    k ^= 1;
    snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
    char text[512];
    snprintf(text, sizeof text,
             "{\"strata_trace\": 1, \"ops\": [\n"
             "{\"id\": \"w\", \"kind\": \"gemm\", \"dtype\": \"fp16\", \"m\": 1, \"n\": 8192, \"k\": 8192,\n"
             " \"weights\": \"%s\"}]}\n", weights);
    tu_write_file(path[k], text);
    return path[k];
}

static int run_on(const struct hw_config *h, const char *trace_path, struct trace *t, struct run_result *r)
{
    if (tu_load_trace(trace_path, t) != 0)
        return -1;
    struct diag d;
    memset(&d, 0, sizeof d);
    struct run_opts o = {0};
    int rc = run_trace_opts(h, t, &o, r, &d);
    if (rc != 0)
        diag_print(&d, stderr);
    return rc;
}

/* The what-if chip with its decoder at 8 B a cycle, by --set. */
static int load_slow(struct hw_config *h)
{
    struct cfg_sets sets;
    struct diag d;
    memset(&sets, 0, sizeof sets);
    memset(&d, 0, sizeof d);
    if (cfg_sets_add(&sets, "lwdec.bandwidth_bytes_per_cycle=8", "--set", &d) != 0)
        return -1;
    return tu_load_chip(LW, &sets, h, &d);
}

static void test_config(void)
{
    struct hw_config h;
    CHECK_EQ_INT(tu_load_cfg(LW, &h), 0);
    CHECK(h.lv_dec >= 0 && h.lv_dec == h.lv_dram - 1);
    if (h.lv_dec < 0)
        return;
    CHECK_EQ_INT(h.level[h.lv_dec].kind, LK_DECODER);
    CHECK_NEAR_REL(h.level[h.lv_dec].bw_bytes_per_s, 128 * 1e9, 1e-12);    /* its own 1 GHz */
    CHECK_NEAR_REL(h.level[h.lv_dec].area_mm2, 0.21, 1e-12);
    CHECK_EQ_INT(load_slow(&h), 0);
    CHECK_NEAR_REL(h.level[h.lv_dec].bw_bytes_per_s, 8 * 1e9, 1e-12);
    CHECK_EQ_INT(tu_load_cfg(PLAIN, &h), 0);
    CHECK_EQ_INT(h.lv_dec, -1);
}

static void test_bytes_and_time(void)
{
    struct hw_config h;
    CHECK_EQ_INT(tu_load_cfg(LW, &h), 0);
    struct trace tp, tc;
    struct run_result rp, rc;
    CHECK_EQ_INT(run_on(&h, gemv_trace("plain.json", "q4_k"), &tp, &rp), 0);
    CHECK_EQ_INT(run_on(&h, gemv_trace("coded.json", "q4_k+huffman"), &tc, &rc), 0);
    double w = 8192.0 * 8192.0 * wfmt_bits(WF_Q4_K) / 8.0;     /* decoded weight bytes */
    double ratio = wfmt_bits(WF_Q4_K_H) / wfmt_bits(WF_Q4_K);
    CHECK(ratio > 0.9 && ratio < 1.0);
    const struct op_result *p = run_op_body(&rp, 0), *c = run_op_body(&rc, 0);
    /* plain: nothing passes the decoder */
    CHECK(p->bytes[h.lv_dec] == 0);
    /* coded: the weights pass the decoder decoded, DRAM holds them coded */
    CHECK_NEAR_REL(c->bytes[h.lv_dec], w, 1e-3);
    CHECK_NEAR_REL(p->bytes[h.lv_dram] - c->bytes[h.lv_dram], w * (1.0 - ratio), 1e-3);
    CHECK_NEAR_REL(c->bytes[h.lv_cache[0]], p->bytes[h.lv_cache[0]], 1e-12);
    /* faster, by at most the DRAM bytes saved */
    CHECK(rc.total_ps < rp.total_ps);
    CHECK((double)rc.total_ps >= (double)rp.total_ps * ratio * 0.99);
    run_result_free(&rc);
    trace_free(&tc);

    /* a decoder at 8 B a cycle (8 GB/s, far under the 87 GB/s DRAM) binds */
    CHECK_EQ_INT(load_slow(&h), 0);
    CHECK_EQ_INT(run_on(&h, gemv_trace("coded.json", "q4_k+huffman"), &tc, &rc), 0);
    double t = (double)(run_op_end(&rc, 0) - run_op_start(&rc, 0)) * 1e-12;
    CHECK(t >= w / 8e9 && t <= w / 8e9 * 1.05);
    uint64_t wait_dec = run_op_body(&rc, 0)->time_ps[CAT_STALL + h.lv_dec];
    CHECK((double)wait_dec > 0.8 * t * 1e12);
    run_result_free(&rc);
    trace_free(&tc);
    run_result_free(&rp);
    trace_free(&tp);

    /* what must fit in DRAM: the coded bytes */
    CHECK_EQ_INT(tu_load_trace(gemv_trace("coded.json", "q4_k+huffman"), &tc), 0);
    double wb = 0;
    trace_working_set(&tc, 0, &wb);
    CHECK_NEAR_REL(wb, w * ratio, 1e-9);
    trace_free(&tc);
}

static void test_no_decoder(void)
{
    struct hw_config h;
    CHECK_EQ_INT(tu_load_cfg(PLAIN, &h), 0);
    struct trace t;
    struct run_result r;
    CHECK_EQ_INT(tu_load_trace(gemv_trace("coded.json", "q4_k+huffman"), &t), 0);
    struct diag d;
    memset(&d, 0, sizeof d);
    struct run_opts o = {0};
    CHECK(run_trace_opts(&h, &t, &o, &r, &d) != 0);
    CHECK(strstr(d.field, "ops[0].weights") != NULL);
    CHECK(strstr(d.msg, "no decoder level") != NULL);
    CHECK_EQ_INT(d.line, 2);          /* the op's first line */
    trace_free(&t);
}

int main(void)
{
    if (tu_mkdtemp(dir, sizeof dir, "strata-dec") != 0)
        return 2;
    test_config();
    test_bytes_and_time();
    test_no_decoder();
    char p[128];
    snprintf(p, sizeof p, "%s/plain.json", dir);
    remove(p);
    snprintf(p, sizeof p, "%s/coded.json", dir);
    remove(p);
    rmdir(dir);
    TEST_MAIN_END();
}
