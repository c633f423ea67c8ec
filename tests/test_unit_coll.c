/* Collectives (models/coll.c, docs/collectives.md) run on systems (the
 * trace's groups and pairing: test_unit_groups.c): ring
 * and direct algorithms, contention, rings over several nodes, deadlocks,
 * and `strata bench collective`. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "collbench.h"
#include "llm.h"
#include "run.h"
#include "system.h"
#include "test.h"
#include "trace.h"
#include "util.h"

static char dir[256];

static const char *const gpus8 =
    "\"gpu0\", \"gpu1\", \"gpu2\", \"gpu3\", \"gpu4\", \"gpu5\", \"gpu6\", \"gpu7\"";
static const char *const group8 =
    "[\"gpu0\", \"gpu1\", \"gpu2\", \"gpu3\", \"gpu4\", \"gpu5\", \"gpu6\", \"gpu7\"]";

/* A trace of these devices and ops, loaded: 0, or the loader's rc with its
 * message in msg. */
static int load(const char *devices, const char *ops, struct trace *t, char *msg, size_t n)
{
    return tu_trace_ops(dir, devices, ops, t, msg, n);
}

/* One op per rank of gpu0..gpu<n-1>: tmpl with every '@' replaced by the rank. */
static char *rank_ops(unsigned n, const char *tmpl)
{
    size_t cap = (strlen(tmpl) + 32) * n + 64, used = 0;
    char *s = malloc(cap);
    if (s == NULL)
        abort();
    s[0] = '\0';
    for (unsigned r = 0; r < n; r++) {
        if (r)
            used += (size_t)snprintf(s + used, cap - used, ",\n");
        for (const char *p = tmpl; *p; p++) {
            if (*p == '@')
                used += (size_t)snprintf(s + used, cap - used, "%u", r);
            else
                s[used++] = *p;
        }
        s[used] = '\0';
    }
    return s;
}


static double allreduce_time(const char *sys, unsigned n, uint64_t bytes)
{
    struct hw_system s;
    struct diag d;
    memset(&d, 0, sizeof d);
    if (tu_load_hw(sys, NULL, &s, &d) != 0)
        return -1;
    struct collbench_pt pt;
    int rc = collbench_run(&s, COLL_ALL_REDUCE, COLL_AUTO, DT_FP32, n, 1, bytes, &pt, &d);
    sys_free(&s);
    if (rc != 0)
        diag_print(&d, stderr);
    return rc == 0 ? pt.time_s : -1;
}

static void test_ring_mechanism(void)
{
    const char *dgx = "configs/systems/nvidia-dgx-a100.yaml";
    /* time grows with the size; the large-message rate approaches the
     * channels' copy rate (12 x 19.6 GB/s busbw), under the NVLink's 274 */
    double t1 = allreduce_time(dgx, 8, 1 << 20), t2 = allreduce_time(dgx, 8, 1 << 26),
           t3 = allreduce_time(dgx, 8, (uint64_t)1 << 33);
    CHECK(t1 > 0 && t2 > t1 && t3 > t2);
    double busbw = (double)((uint64_t)1 << 33) / t3 * 2 * 7 / 8;
    CHECK(busbw < 12 * 19.6e9 && busbw > 0.97 * 12 * 19.6e9);
    /* more ranks: more hops, so a small all-reduce takes longer */
    CHECK(allreduce_time(dgx, 8, 32768) > allreduce_time(dgx, 2, 32768));
    /* two nodes: eight rings, ring k crossing between the nodes on HDR rail
     * k (25 GB/s each way), so the eight rails together bound the bus
     * bandwidth at 8 x 25 = 200 GB/s; one ring alone would get 25 */
    double t16 = allreduce_time("configs/systems/two-dgx-a100-hdr.yaml", 16, (uint64_t)1 << 30);
    CHECK(t16 > 0);
    double bus16 = (double)((uint64_t)1 << 30) / t16 * 2 * 15 / 16;
    printf("  two DGX A100 nodes, 1 GiB all-reduce: busbw %.1f GB/s\n", bus16 * 1e-9);
    CHECK(bus16 < 200e9 && bus16 > 150e9);
    /* sixteen HGX H100 nodes on NDR (scripts/gen_cluster.py): 128 ranks, eight
     * rings over the 50 GB/s rails, so at most 8 x 50 = 400 GB/s busbw */
    double t128 = allreduce_time("configs/systems/hgx-h100-x16-ndr.yaml", 128, (uint64_t)1 << 32);
    CHECK(t128 > 0);
    double bus128 = (double)((uint64_t)1 << 32) / t128 * 2 * 127 / 128;
    printf("  16 HGX H100 nodes, 4 GiB all-reduce over 128 GPUs: busbw %.1f GB/s\n", bus128 * 1e-9);
    CHECK(bus128 < 400e9 && bus128 > 300e9);
}

/* Two all-reduces at once on the same GPUs (two streams) share NVLink: one
 * alone is held to its channels' copy rate (235 GB/s), two together to the
 * links' 274, so the pair takes 2 x 235 / 274 = 1.7 times as long. */
static void test_contention(void)
{
    struct trace t;
    struct run_result r1, r2;
    char msg[600] = "";
    char fmt[512];
    snprintf(fmt, sizeof fmt,
             "{\"id\": \"ar@\", \"kind\": \"collective\", \"device\": \"gpu@\", "
             "\"collective\": \"all_reduce\", \"group\": %s, \"bytes\": 268435456}", group8);
    char *one = rank_ops(8, fmt);
    int rc = load(gpus8, one, &t, msg, sizeof msg);
    CHECK_EQ_INT(rc, 0);
    rc = rc == 0 ? tu_run_on("configs/systems/nvidia-dgx-a100.yaml", &t, &r1, msg, sizeof msg) : rc;
    CHECK_EQ_INT(rc, 0);
    if (rc == 0)
        trace_free(&t);
    snprintf(fmt, sizeof fmt,
             "{\"id\": \"x@\", \"kind\": \"collective\", \"device\": \"gpu@\", \"stream\": 1, "
             "\"collective\": \"all_reduce\", \"group\": %s, \"bytes\": 268435456}", group8);
    char *two = rank_ops(8, fmt);
    size_t len = strlen(one) + strlen(two) + 4;
    char *both = malloc(len);
    if (both == NULL)
        abort();
    snprintf(both, len, "%s,\n%s", one, two);
    rc = load(gpus8, both, &t, msg, sizeof msg);
    CHECK_EQ_INT(rc, 0);
    if (rc == 0) {
        CHECK_EQ_INT(t.ngroups, 1);
        CHECK_EQ_INT(t.ncolls, 2);
        rc = tu_run_on("configs/systems/nvidia-dgx-a100.yaml", &t, &r2, msg, sizeof msg);
        CHECK_EQ_INT(rc, 0);
        if (rc == 0) {
            double ratio = (double)r2.total_ps / (double)r1.total_ps;
            printf("  two concurrent 256 MiB all-reduces: %.2fx one\n", ratio);
            CHECK(ratio > 1.65 && ratio < 1.75);
            /* every rank's op ends when the collective does */
            CHECK_EQ_INT(run_op_end(&r2, 0), run_op_end(&r2, 7));
            run_result_free(&r2);
        }
        trace_free(&t);
    }
    if (r1.op != NULL)
        run_result_free(&r1);
    free(one);
    free(two);
    free(both);
}

/* NVLS all_gather and reduce_scatter (NVIDIA/nccl#1083): a rank sends
 * S/n and receives S (all_gather), or sends S and receives S/n; the busier
 * direction carries S at NVLS's efficiency, so for a large S the ring's
 * (n-1)/n S wins, as NCCL's tuning says.  Memory: all_gather reads the
 * rank's share and writes all of it, reduce_scatter the reverse. */
static void test_nvls_gather_scatter(void)
{
    static const char *const what[] = {"all_gather", "reduce_scatter"};
    struct hw_config c;
    tu_load_cfg("configs/nvidia-h100-sxm.yaml", &c);
    for (int w = 0; w < 2; w++) {
        double t_algo[2] = {0, 0}, dram[2] = {0, 0};
        for (int nv = 0; nv < 2; nv++) {
            char fmt[512];
            snprintf(fmt, sizeof fmt,
                     "{\"id\": \"a@\", \"kind\": \"collective\", \"device\": \"gpu@\", "
                     "\"collective\": \"%s\", \"algo\": \"%s\", \"group\": %s, \"bytes\": 1073741824}",
                     what[w], nv ? "nvls" : "ring", group8);
            char *ops = rank_ops(8, fmt);
            struct trace t;
            struct run_result r;
            char msg[600] = "";
            int rc = load(gpus8, ops, &t, msg, sizeof msg);
            free(ops);
            CHECK_EQ_INT(rc, 0);
            if (rc != 0)
                continue;
            rc = tu_run_on("configs/systems/nvidia-hgx-h100.yaml", &t, &r, msg, sizeof msg);
            CHECK_EQ_INT(rc, 0);
            if (rc == 0) {
                t_algo[nv] = (double)(run_op_end(&r, 0) - run_op_start(&r, 0)) * 1e-12;
                dram[nv] = run_op_body(&r, 0)->bytes[c.lv_dram];
                CHECK_STR_CONTAINS(run_op_body(&r, 0)->tile, nv ? "nvls" : "ring");
                run_result_free(&r);
            }
            trace_free(&t);
        }
        double busbw = 1073741824.0 * 7 / 8 / t_algo[1] / 1e9, ringbw = 1073741824.0 * 7 / 8 / t_algo[0] / 1e9;
        printf("  %s 1 GiB on 8 H100s: ring busbw %.0f GB/s, NVLS %.0f GB/s; NVLS memory %.3g B a rank\n",
               what[w], ringbw, busbw, dram[1]);
        CHECK(t_algo[1] > t_algo[0] * 1.1);
        /* S x 7/8 / (S / (0.85 x the link's data rate)): NVLS's busbw is
         * 7/8 x 0.85 of what the link carries, below the ring's */
        CHECK(busbw > 240 && busbw < 300);
        CHECK_NEAR_REL(dram[1], 1073741824.0 * (1.0 + 1.0 / 8), 0.02);
    }
}

static void test_direct_and_broadcast(void)
{
    struct trace t;
    struct run_result r;
    char msg[600] = "";
    char fmt[512];
    snprintf(fmt, sizeof fmt,
             "{\"id\": \"a@\", \"kind\": \"collective\", \"device\": \"gpu@\", "
             "\"collective\": \"all_to_all\", \"group\": %s, \"bytes\": 8388608}", group8);
    char *ops = rank_ops(8, fmt);
    int rc = load(gpus8, ops, &t, msg, sizeof msg);
    CHECK_EQ_INT(rc, 0);
    if (rc == 0) {
        rc = tu_run_on("configs/systems/nvidia-dgx-a100.yaml", &t, &r, msg, sizeof msg);
        CHECK_EQ_INT(rc, 0);
        if (rc == 0) {
            /* each rank sends 7/8 of its 8 MiB over NVLink */
            struct hw_config c;
            tu_load_cfg("configs/nvidia-a100-sxm-80gb.yaml", &c);
            CHECK_NEAR_REL(run_op_body(&r, 3)->bytes[c.lv_peer], 8388608.0 * 7 / 8, 1e-9);
            CHECK_STR_CONTAINS(run_op_body(&r, 3)->tile, "direct");
            run_result_free(&r);
        }
        trace_free(&t);
    }
    free(ops);
    /* broadcast: a chain from the root; the last rank sends nothing */
    snprintf(fmt, sizeof fmt,
             "{\"id\": \"b@\", \"kind\": \"collective\", \"device\": \"gpu@\", "
             "\"collective\": \"broadcast\", \"root\": \"gpu2\", \"group\": %s, \"bytes\": 8388608}",
             group8);
    ops = rank_ops(8, fmt);
    rc = load(gpus8, ops, &t, msg, sizeof msg);
    CHECK_EQ_INT(rc, 0);
    if (rc == 0) {
        rc = tu_run_on("configs/systems/nvidia-dgx-a100.yaml", &t, &r, msg, sizeof msg);
        CHECK_EQ_INT(rc, 0);
        if (rc == 0) {
            struct hw_config c;
            tu_load_cfg("configs/nvidia-a100-sxm-80gb.yaml", &c);
            CHECK_NEAR_REL(run_op_body(&r, 2)->bytes[c.lv_peer], 8388608.0, 1e-9);   /* the root */
            CHECK(run_op_body(&r, 1)->bytes[c.lv_peer] == 0);                          /* the chain's end */
            run_result_free(&r);
        }
        trace_free(&t);
    }
    free(ops);
}

/* Rank a issues X then Y, rank b Y then X (two groups): neither can start. */
static void test_deadlock_and_unreachable(void)
{
    struct trace t;
    struct run_result r;
    char msg[600] = "";
    const char *ops =
        "{\"id\": \"x0\", \"kind\": \"collective\", \"device\": \"a\", \"collective\": \"all_reduce\", "
        "\"group\": [\"a\", \"b\"], \"bytes\": 1024},\n"
        "{\"id\": \"y0\", \"kind\": \"collective\", \"device\": \"a\", \"collective\": \"all_reduce\", "
        "\"group\": [\"b\", \"a\"], \"bytes\": 1024},\n"
        "{\"id\": \"y1\", \"kind\": \"collective\", \"device\": \"b\", \"collective\": \"all_reduce\", "
        "\"group\": [\"b\", \"a\"], \"bytes\": 1024},\n"
        "{\"id\": \"x1\", \"kind\": \"collective\", \"device\": \"b\", \"collective\": \"all_reduce\", "
        "\"group\": [\"a\", \"b\"], \"bytes\": 1024}";
    int rc = load("\"a\", \"b\"", ops, &t, msg, sizeof msg);
    CHECK_EQ_INT(rc, 0);
    if (rc == 0) {
        rc = tu_run_on("configs/nvidia-a100-sxm-80gb.yaml", &t, &r, msg, sizeof msg);
        CHECK(rc != 0);
        CHECK_STR_CONTAINS(msg, "deadlock");
        printf("  deadlock                 -> %s\n", msg);
        trace_free(&t);
    }
    /* a group across two nodes' devices with no path at all (a system of
     * two PCIe GPUs on separate hosts has one) is refused before the run:
     * the 4090 server's GPUs do reach each other through the hosts, so use
     * a TPU slice, whose chips reach every other through the ICI mesh, and
     * a device that is not in the system */
    const char *ops2 =
        "{\"id\": \"x0\", \"kind\": \"collective\", \"device\": \"chip0\", \"collective\": \"all_reduce\", "
        "\"group\": [\"chip0\", \"chip9\"], \"bytes\": 1024},\n"
        "{\"id\": \"x1\", \"kind\": \"collective\", \"device\": \"chip9\", \"collective\": \"all_reduce\", "
        "\"group\": [\"chip0\", \"chip9\"], \"bytes\": 1024}";
    rc = load("\"chip0\", \"chip9\"", ops2, &t, msg, sizeof msg);
    CHECK_EQ_INT(rc, 0);
    if (rc == 0) {
        rc = tu_run_on("configs/systems/google-tpu-v5e-8.yaml", &t, &r, msg, sizeof msg);
        CHECK(rc != 0);
        CHECK_STR_CONTAINS(msg, "chip9");
        printf("  device not in system     -> %s\n", msg);
        trace_free(&t);
    }
}

static void test_bench_cli(void)
{
    char cmd[4096], out[300];
    snprintf(out, sizeof out, "%s/bench.csv", dir);
    snprintf(cmd, sizeof cmd,
             STRATA_BINARY " bench collective --hw configs/systems/nvidia-dgx-a100.yaml "
             "--min 32K --max 1M --csv %s > %s/bench.txt", out, dir);
    CHECK_EQ_INT(tu_sh(cmd), 0);
    size_t len;
    char *csv = tu_read_file(out, &len);
    CHECK_STR_CONTAINS(csv, "size_bytes,count,type,time_us,algbw_GBps,busbw_GBps,how,gpu_us,host_us\n");
    CHECK_STR_CONTAINS(csv, "\n32768,8192,fp32,");
    CHECK_STR_CONTAINS(csv, "\n1048576,262144,fp32,");
    int lines = 0;
    for (size_t i = 0; csv && i < len; i++)
        lines += csv[i] == '\n';
    CHECK_EQ_INT(lines, 7);         /* header and 32K .. 1M */
    free(csv);
    /* a chip config is not a system; an unknown collective; no target */
    snprintf(cmd, sizeof cmd, STRATA_BINARY " bench collective --hw configs/nvidia-h100-sxm.yaml "
                              "2> %s/err.txt", dir);
    CHECK_EQ_INT(tu_sh(cmd), 2);
    snprintf(cmd, sizeof cmd, STRATA_BINARY " bench collective --hw "
                              "configs/systems/nvidia-dgx-a100.yaml --op allreduce 2> %s/err.txt", dir);
    CHECK_EQ_INT(tu_sh(cmd), 2);
    char errp[300];
    snprintf(errp, sizeof errp, "%s/err.txt", dir);
    char *err = tu_read_file(errp, &len);
    CHECK_STR_CONTAINS(err, "unknown collective 'allreduce'");
    free(err);
    snprintf(cmd, sizeof cmd, STRATA_BINARY " bench --hw configs/systems/nvidia-dgx-a100.yaml "
                              "2> %s/err.txt", dir);
    CHECK_EQ_INT(tu_sh(cmd), 2);
    snprintf(cmd, sizeof cmd, STRATA_BINARY " bench collective --hw configs/systems/nvidia-dgx-a100.yaml "
                              "--ranks 9 > %s/out.txt 2> %s/err.txt", dir, dir);
    CHECK_EQ_INT(tu_sh(cmd), 2);
    err = tu_read_file(errp, &len);
    CHECK_STR_CONTAINS(err, "has 8 devices");
    free(err);
}

/* Per-device time: an all-reduce that runs next to compute on another
 * stream is not exposed; one that runs alone is all exposed. */
static void test_exposed_comm(void)
{
    struct trace t;
    struct run_result r;
    char msg[600] = "";
    const char *ops =
        "{\"id\": \"w0\", \"kind\": \"elementwise\", \"device\": \"gpu0\", \"dtype\": \"fp32\", \"elements\": 1000000000},\n"
        "{\"id\": \"w1\", \"kind\": \"elementwise\", \"device\": \"gpu1\", \"dtype\": \"fp32\", \"elements\": 1000000000},\n"
        "{\"id\": \"a0\", \"kind\": \"collective\", \"device\": \"gpu0\", \"stream\": 1, \"collective\": \"all_reduce\", "
        "\"group\": [\"gpu0\", \"gpu1\"], \"bytes\": 1048576},\n"
        "{\"id\": \"a1\", \"kind\": \"collective\", \"device\": \"gpu1\", \"stream\": 1, \"collective\": \"all_reduce\", "
        "\"group\": [\"gpu0\", \"gpu1\"], \"bytes\": 1048576},\n"
        "{\"id\": \"b0\", \"kind\": \"collective\", \"device\": \"gpu0\", \"collective\": \"all_reduce\", "
        "\"group\": [\"gpu0\", \"gpu1\"], \"bytes\": 1048576, \"deps\": [\"w0\"]},\n"
        "{\"id\": \"b1\", \"kind\": \"collective\", \"device\": \"gpu1\", \"collective\": \"all_reduce\", "
        "\"group\": [\"gpu0\", \"gpu1\"], \"bytes\": 1048576, \"deps\": [\"w1\"]}";
    int rc = load("\"gpu0\", \"gpu1\"", ops, &t, msg, sizeof msg);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0) {
        fprintf(stderr, "%s\n", msg);
        return;
    }
    rc = tu_run_on("configs/systems/nvidia-dgx-a100.yaml", &t, &r, msg, sizeof msg);
    CHECK_EQ_INT(rc, 0);
    if (rc == 0) {
        struct hw_config c;
        tu_load_cfg("configs/nvidia-a100-sxm-80gb.yaml", &c);
        CHECK_EQ_INT(r.ndevices, 2);
        const double *row = r.dev_time_ps;   /* gpu0 */
        double b = (double)(run_op_end(&r, 4) - run_op_start(&r, 4));
        /* the exposed link time is b0's alone: a0 hid behind w0 */
        CHECK_NEAR_REL(row[CAT_STALL + c.lv_peer], b - (double)run_op_body(&r, 4)->time_ps[CAT_LAUNCH], 0.01);
        double sum = 0;
        for (unsigned k = 0; k <= RUN_IDLE; k++)
            sum += row[k];
        CHECK_NEAR_REL(sum, (double)r.total_ps, 1e-9);
        run_result_free(&r);
    } else {
        fprintf(stderr, "%s\n", msg);
    }
    trace_free(&t);
}

/* The channels in a collective's tile column ("ring Simple 12ch": 12). */
static unsigned tile_channels(const char *tile)
{
    const char *ch = strstr(tile, "ch");
    while (ch != NULL && ch > tile && ch[-1] >= '0' && ch[-1] <= '9')
        ch--;
    return ch != NULL ? (unsigned)atoi(ch) : 0;
}

#define HOLD_GEMM "\"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 8192, \"n\": 8192, \"k\": 8192"

/* GEMM op gi of ops on gpu0 of a DGX A100, beside collective op ci,
 * against the same GEMM alone: the collective's channels hold that many
 * of the 108 SMs, so the GEMM takes about 108 / (108 - channels) times as
 * long.  r keeps the run for the caller's own checks (the caller frees it
 * when this returns 1). */
static int gemm_beside(const char *ops, uint32_t ci, uint32_t gi, const char *what, struct run_result *r)
{
    char alone[1024];
    snprintf(alone, sizeof alone,
             "{\"id\": \"p0\", \"kind\": \"elementwise\", \"device\": \"gpu0\", \"dtype\": \"bf16\", "
             "\"elements\": 1048576},\n{\"id\": \"g0\", \"device\": \"gpu0\", " HOLD_GEMM ", \"deps\": [\"p0\"]}");
    struct trace t, t0;
    struct run_result r0;
    char msg[600] = "";
    CHECK_EQ_INT(load("\"gpu0\", \"gpu1\"", ops, &t, msg, sizeof msg), 0);
    CHECK_EQ_INT(load("\"gpu0\", \"gpu1\"", alone, &t0, msg, sizeof msg), 0);
    int ok1 = tu_run_on("configs/systems/nvidia-dgx-a100.yaml", &t, r, msg, sizeof msg) == 0;
    int ok = ok1 && tu_run_on("configs/systems/nvidia-dgx-a100.yaml", &t0, &r0, msg, sizeof msg) == 0;
    CHECK(ok);
    if (ok1 && !ok)
        run_result_free(r);
    if (ok) {
        const struct op_result *a = run_op_body(r, ci), *g = run_op_body(r, gi), *g0 = run_op_body(&r0, 1);
        unsigned channels = tile_channels(a->tile);
        double with = (double)(g->end_ps - g->start_ps), without = (double)(g0->end_ps - g0->start_ps);
        double expect = 108.0 / (108.0 - channels);
        printf("  8192^3 bf16 GEMM on an A100 %s: %.3f ms (alone %.3f; %s: %u SMs held, 108/%u = "
               "%.3f, got %.3f)\n", what, with * 1e-9, without * 1e-9, a->tile, channels, 108 - channels,
               expect, with / without);
        CHECK(channels >= 2);
        CHECK(with > without * (1.0 + 0.5 * (expect - 1.0)));
        CHECK(with < without * (1.0 + 1.5 * (expect - 1.0)));
        run_result_free(&r0);
    } else {
        fprintf(stderr, "%s\n", msg);
    }
    trace_free(&t);
    trace_free(&t0);
    return ok;
}

/* NCCL launches one CTA per channel (NVIDIA/nccl src/enqueue.cc: grid =
 * {nChannels, 1, 1}) and a GEMM's CTAs do not fit beside it: a GEMM that
 * starts while a 1 GiB all-reduce runs on the other stream gets the A100's
 * 108 SMs less the collective's channels, and takes about 108 / (108 -
 * channels) times as long as alone; after the collective it gets all 108. */
static void test_sm_hold(void)
{
    char ops[4096];
    int used = 0;
    for (int g = 0; g < 2; g++) {
        used += snprintf(ops + used, sizeof ops - (size_t)used,
                         "%s{\"id\": \"p%d\", \"kind\": \"elementwise\", \"device\": \"gpu%d\", "
                         "\"dtype\": \"bf16\", \"elements\": 1048576},\n"
                         "{\"id\": \"g%d\", \"device\": \"gpu%d\", " HOLD_GEMM ", \"deps\": [\"p%d\"]},\n"
                         "{\"id\": \"a%d\", \"kind\": \"collective\", \"device\": \"gpu%d\", \"stream\": 1, "
                         "\"collective\": \"all_reduce\", \"group\": [\"gpu0\", \"gpu1\"], \"bytes\": 1073741824}",
                         g ? ",\n" : "", g, g, g, g, g, g, g);
    }
    struct run_result r;
    if (gemm_beside(ops, 2, 1, "beside a 1 GiB all-reduce", &r)) {
        CHECK(run_op_start(&r, 1) < run_op_end(&r, 2) && run_op_end(&r, 1) > run_op_start(&r, 2));  /* they overlap */
        run_result_free(&r);
    }
}

/* A short collective gives its SMs back: a GEMM that starts beside a 1
 * MiB all-reduce runs its first wave on 108 less the channels' SMs and
 * the rest, once the all-reduce is done, on all 108.  Its 2048 CTAs take
 * 19 waves alone; beside it, at most one wave more (it kept the fewer SMs
 * for every wave before: 1.15x). */
static void test_sm_hold_short(void)
{
    char ops[4096];
    int used = 0;
    for (int g = 0; g < 2; g++)
        used += snprintf(ops + used, sizeof ops - (size_t)used,
                         "%s{\"id\": \"p%d\", \"kind\": \"elementwise\", \"device\": \"gpu%d\", "
                         "\"dtype\": \"bf16\", \"elements\": 1048576},\n"
                         "{\"id\": \"g%d\", \"device\": \"gpu%d\", " HOLD_GEMM ", \"deps\": [\"p%d\"]},\n"
                         "{\"id\": \"a%d\", \"kind\": \"collective\", \"device\": \"gpu%d\", \"stream\": 1, "
                         "\"collective\": \"all_reduce\", \"group\": [\"gpu0\", \"gpu1\"], \"bytes\": 1048576}",
                         g ? ",\n" : "", g, g, g, g, g, g, g);
    struct trace t, t0;
    struct run_result r, r0;
    char msg[600] = "";
    char alone[512];
    snprintf(alone, sizeof alone,
             "{\"id\": \"p0\", \"kind\": \"elementwise\", \"device\": \"gpu0\", \"dtype\": \"bf16\", "
             "\"elements\": 1048576},\n{\"id\": \"g0\", \"device\": \"gpu0\", " HOLD_GEMM ", \"deps\": [\"p0\"]}");
    CHECK_EQ_INT(load("\"gpu0\", \"gpu1\"", ops, &t, msg, sizeof msg), 0);
    CHECK_EQ_INT(load("\"gpu0\", \"gpu1\"", alone, &t0, msg, sizeof msg), 0);
    if (tu_run_on("configs/systems/nvidia-dgx-a100.yaml", &t, &r, msg, sizeof msg) == 0) {
        if (tu_run_on("configs/systems/nvidia-dgx-a100.yaml", &t0, &r0, msg, sizeof msg) == 0) {
            double with = (double)(run_op_end(&r, 1) - run_op_start(&r, 1));
            double without = (double)(run_op_end(&r0, 1) - run_op_start(&r0, 1));
            printf("  8192^3 bf16 GEMM on an A100 beside a 1 MiB all-reduce: %.3f ms (alone %.3f; the "
                   "all-reduce ends at %.3f ms)\n", with * 1e-9, without * 1e-9,
                   (double)(run_op_end(&r, 2) - run_op_start(&r, 1)) * 1e-9);
            CHECK(run_op_end(&r, 2) < run_op_end(&r, 1));
            CHECK(with <= without * (1.0 + 1.0 / 19.0) * 1.01);
            run_result_free(&r0);
        }
        run_result_free(&r);
    }
    trace_free(&t);
    trace_free(&t0);
}

/* An early rank's NCCL kernel holds its SMs while it spins for the
 * others: gpu0 calls the all-reduce at once (stream 1) and runs a GEMM
 * beside it; gpu1 calls it only after two GEMMs of its own.  gpu0's GEMM
 * runs wholly before any data moves, and still gets 108 less the
 * channels' SMs, as test_sm_hold's does while the data moves. */
static void test_sm_hold_wait(void)
{
    const char *ar = "\"kind\": \"collective\", \"collective\": \"all_reduce\", "
                     "\"group\": [\"gpu0\", \"gpu1\"], \"bytes\": 1073741824";
    char ops[4096];
    snprintf(ops, sizeof ops,
             "{\"id\": \"a0\", \"device\": \"gpu0\", \"stream\": 1, %s},\n"
             "{\"id\": \"p0\", \"kind\": \"elementwise\", \"device\": \"gpu0\", \"dtype\": \"bf16\", "
             "\"elements\": 1048576},\n"
             "{\"id\": \"g0\", \"device\": \"gpu0\", " HOLD_GEMM ", \"deps\": [\"p0\"]},\n"
             "{\"id\": \"h1\", \"device\": \"gpu1\", " HOLD_GEMM "},\n"
             "{\"id\": \"g1\", \"device\": \"gpu1\", " HOLD_GEMM "},\n"
             "{\"id\": \"a1\", \"device\": \"gpu1\", \"stream\": 1, \"deps\": [\"g1\"], %s}",
             ar, ar);
    struct run_result r;
    if (gemm_beside(ops, 0, 2, "beside an all-reduce still waiting for its peer", &r)) {
        CHECK(run_op_end(&r, 2) <= run_op_start(&r, 5));      /* all of it before the peer arrives */
        run_result_free(&r);
    }
}

/* Symmetric ranks: a TP 2 x DP 4 training step with one replica simulated
 * (the other three replicas' GPUs mirror it) takes the same time as the
 * full simulation on a symmetric system, from a sixth of the ops. */
static void test_mirrors(void)
{
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load("traces/models/llama-2-7b.json", &c, &d), 0);
    struct llm_step s = {LLM_TRAIN, 1, 256, 0, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0,
                         LLM_FW_FUSED, 2, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    struct trace full, one;
    CHECK_EQ_INT(llm_build(&c, &s, &full, &d), 0);
    s.dp_sim = 1;
    CHECK_EQ_INT(llm_build(&c, &s, &one, &d), 0);
    CHECK_EQ_INT(one.ndevices, 8);
    CHECK_EQ_INT(one.nmirrors, 6);
    CHECK_EQ_INT(one.nops * 4, full.nops);
    struct run_result rf, ro;
    char msg[600] = "";
    int rc = tu_run_on("configs/systems/nvidia-dgx-a100.yaml", &full, &rf, msg, sizeof msg);
    CHECK_EQ_INT(rc, 0);
    int rc2 = tu_run_on("configs/systems/nvidia-dgx-a100.yaml", &one, &ro, msg, sizeof msg);
    CHECK_EQ_INT(rc2, 0);
    if (rc == 0 && rc2 == 0) {
        printf("  TP 2 x DP 4 step: all replicas %.6f ms, one replica and mirrors %.6f ms\n",
               (double)rf.total_ps * 1e-9, (double)ro.total_ps * 1e-9);
        CHECK_NEAR_REL((double)ro.total_ps, (double)rf.total_ps, 1e-9);
    }
    if (rc == 0)
        run_result_free(&rf);
    if (rc2 == 0)
        run_result_free(&ro);
    trace_free(&full);
    trace_free(&one);
}

/* Expert parallelism: Mixtral decode over the 8 GPUs of an HGX H100, 16
 * sequences each and one expert per GPU; the two all-to-alls a layer
 * pair across the ranks, cross NVLink and show up as exposed NVLink time;
 * the ranks are symmetric, so they end together; and the step is faster
 * than the same 128 sequences under TP 8, where every GPU streams 1/8 of
 * every expert and all-reduces twice a layer. */
static void test_expert_parallel(void)
{
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load("traces/models/mixtral-8x7b.json", &c, &d), 0);
    struct llm_step s = {LLM_DECODE, 16, 1, 1024, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0,
                         LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    struct trace ep, tp;
    CHECK_EQ_INT(llm_build(&c, &s, &ep, &d), 0);
    s.ep = 0;
    s.tp = 8;
    s.batch = 128;
    CHECK_EQ_INT(llm_build(&c, &s, &tp, &d), 0);
    struct run_result re, rt;
    char msg[600] = "";
    int rc = tu_run_on("configs/systems/nvidia-hgx-h100.yaml", &ep, &re, msg, sizeof msg);
    CHECK_EQ_INT(rc, 0);
    int rc2 = tu_run_on("configs/systems/nvidia-hgx-h100.yaml", &tp, &rt, msg, sizeof msg);
    CHECK_EQ_INT(rc2, 0);
    if (rc == 0 && rc2 == 0) {
        struct hw_config h;
        CHECK_EQ_INT(tu_load_cfg("configs/nvidia-h100-sxm.yaml", &h), 0);
        int nv = cfg_level_index(&h, "nvlink");
        CHECK(nv >= 0);
        if (nv >= 0) {
            /* 32 layers x 2 all-to-alls x 8 ranks, each sending 7/8 of
             * 16 x 2 x 4096 x 2 bytes to the others */
            double sent = 32.0 * 2 * 8 * (16.0 * 2 * 4096 * 2) * 7.0 / 8.0;
            printf("  Mixtral decode EP 8: %.3f ms, %.3g NVLink bytes (%.3g sent); TP 8: %.3f ms\n",
                   (double)re.total_ps * 1e-9, re.bytes[nv], sent, (double)rt.total_ps * 1e-9);
            CHECK(re.bytes[nv] >= sent * 0.99);
            CHECK(re.time_ps[CAT_STALL + nv] > 0);
        }
        for (uint32_t dv = 1; dv < re.ndevices; dv++)
            CHECK_NEAR_REL(re.dev_time_ps[(size_t)dv * (CAT_COUNT + 1) + RUN_IDLE],
                           re.dev_time_ps[RUN_IDLE], 1e-9);
        CHECK(re.total_ps < rt.total_ps);
    } else {
        fprintf(stderr, "%s\n", msg);
    }
    if (rc == 0)
        run_result_free(&re);
    if (rc2 == 0)
        run_result_free(&rt);
    trace_free(&ep);
    trace_free(&tp);
    /* EP over the TP group (--tp 8 --ep 8, vLLM's layout): each GPU one
     * whole expert instead of 1/8 of each; with all 8 experts reached
     * (128 sequences) it streams the same bytes as TP 8, so the step
     * takes the same time within 1% */
    s.ep = 8;
    struct trace etp, tp8;
    CHECK_EQ_INT(llm_build(&c, &s, &etp, &d), 0);
    s.ep = 0;
    CHECK_EQ_INT(llm_build(&c, &s, &tp8, &d), 0);
    struct run_result r1, r2;
    int ok = tu_run_on("configs/systems/nvidia-hgx-h100.yaml", &etp, &r1, msg, sizeof msg) == 0;
    ok = ok && tu_run_on("configs/systems/nvidia-hgx-h100.yaml", &tp8, &r2, msg, sizeof msg) == 0;
    CHECK(ok);
    if (ok) {
        printf("  Mixtral decode 128 sequences: TP 8 %.3f ms, TP 8 with EP 8 %.3f ms\n",
               (double)r2.total_ps * 1e-9, (double)r1.total_ps * 1e-9);
        CHECK_NEAR_REL((double)r1.total_ps, (double)r2.total_ps, 0.01);
        run_result_free(&r1);
        run_result_free(&r2);
    }
    trace_free(&etp);
    trace_free(&tp8);
    /* a training step with EP: written, read back and run (the backward
     * all-to-alls pair across the ranks) */
    struct llm_step st = {LLM_TRAIN, 1, 256, 0, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0,
                          LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    struct trace tt, back;
    CHECK_EQ_INT(llm_build(&c, &st, &tt, &d), 0);
    char path[300];
    snprintf(path, sizeof path, "%s/ep-train.json", dir);
    CHECK_EQ_INT(trace_write(&tt, path, &d), 0);
    CHECK_EQ_INT(tu_load_trace(path, &back), 0);
    struct run_result rr;
    char msg2[600] = "";
    CHECK_EQ_INT(tu_run_on("configs/systems/nvidia-hgx-h100.yaml", &back, &rr, msg2, sizeof msg2), 0);
    if (msg2[0] != '\0')
        fprintf(stderr, "%s\n", msg2);
    else
        run_result_free(&rr);
    trace_free(&back);
    trace_free(&tt);
}

/* Expert parallelism inside data parallelism (Megatron's and DeepSpeed-
 * MoE's layout), Mixtral training: --ep 8 alone and --dp 8 --ep 8 are the
 * same step to the picosecond (the EP ranks are the replicas); --dp 16
 * --ep 8 on two DGX A100s adds the all-reduce of each expert's gradients
 * over the two replicas that hold it; simulating one node's EP group and
 * mirroring the other gives the same time.  Before, the mirrored step
 * failed: a mirrored group's ring kept its order, and gpu7 -> gpu8 has no
 * route on rail-only InfiniBand. */
static void test_ep_dp(void)
{
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load("traces/models/mixtral-8x7b.json", &c, &d), 0);
    struct llm_step s = {LLM_TRAIN, 1, 256, 0, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0,
                         LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    struct trace a, b, full, half;
    CHECK_EQ_INT(llm_build(&c, &s, &a, &d), 0);
    s.dp = 8;
    CHECK_EQ_INT(llm_build(&c, &s, &b, &d), 0);
    s.dp = 16;
    CHECK_EQ_INT(llm_build(&c, &s, &full, &d), 0);
    s.dp_sim = 8;
    CHECK_EQ_INT(llm_build(&c, &s, &half, &d), 0);
    CHECK_EQ_INT(full.ndevices, 16);
    CHECK_EQ_INT(half.nmirrors, 8);
    struct run_result ra, rb, rf, rh;
    char msg[600] = "";
    int ok = tu_run_on("configs/systems/nvidia-dgx-a100.yaml", &a, &ra, msg, sizeof msg) == 0;
    ok = ok && tu_run_on("configs/systems/nvidia-dgx-a100.yaml", &b, &rb, msg, sizeof msg) == 0;
    ok = ok && tu_run_on("configs/systems/two-dgx-a100-hdr.yaml", &full, &rf, msg, sizeof msg) == 0;
    ok = ok && tu_run_on("configs/systems/two-dgx-a100-hdr.yaml", &half, &rh, msg, sizeof msg) == 0;
    CHECK(ok);
    if (ok) {
        printf("  Mixtral train EP 8: %.3f ms; DP 8 x EP 8: %.3f ms; DP 16 x EP 8: %.3f ms "
               "(one node simulated: %.3f ms)\n",
               (double)ra.total_ps * 1e-9, (double)rb.total_ps * 1e-9, (double)rf.total_ps * 1e-9,
               (double)rh.total_ps * 1e-9);
        CHECK(ra.total_ps == rb.total_ps);
        CHECK(rf.total_ps > ra.total_ps);
        CHECK_NEAR_REL((double)rh.total_ps, (double)rf.total_ps, 1e-9);
        run_result_free(&ra);
        run_result_free(&rb);
        run_result_free(&rf);
        run_result_free(&rh);
    } else {
        fprintf(stderr, "%s\n", msg);
    }
    trace_free(&a);
    trace_free(&b);
    trace_free(&full);
    trace_free(&half);
}

static int find_op(const struct trace *t, const char *id)
{
    for (uint32_t i = 0; i < t->nops; i++)
        if (strcmp(op_id(t, &t->ops[i]), id) == 0)
            return (int)i;
    return -1;
}

/* ZeRO in a training step, TP 2 x DP 4: stages 1 and 2 reduce-scatter
 * each layer's gradients instead of all-reducing them, update 1/4 of the
 * optimizer state and all-gather the weights at the end; stage 3 also
 * gathers each layer's weights before its forward and its backward (the
 * layer's first op waits for its gather), moving more bytes over NVLink */
static void test_zero(void)
{
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load("traces/models/llama-2-7b.json", &c, &d), 0);
    struct llm_step s = {LLM_TRAIN, 1, 512, 0, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0,
                         LLM_FW_FUSED, 2, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    double nv[4] = {0};
    uint64_t time_ps[4] = {0};
    for (uint32_t z = 0; z <= 3; z++) {
        s.zero = z;
        struct trace t;
        CHECK_EQ_INT(llm_build(&c, &s, &t, &d), 0);
        uint32_t ar = 0, rs = 0, ag = 0;
        for (uint32_t i = 0; i < t.nops; i++) {
            const struct op *o = &t.ops[i];
            if (o->device != 0 || o->kind != OP_COLLECTIVE || t.groups[o->u.coll.group].n != 4)
                continue;
            ar += o->u.coll.what == COLL_ALL_REDUCE;
            rs += o->u.coll.what == COLL_REDUCE_SCATTER;
            ag += o->u.coll.what == COLL_ALL_GATHER;
            if (o->u.coll.what != COLL_ALL_REDUCE)
                CHECK(o->u.coll.bytes % 4 == 0);
        }
        CHECK_EQ_INT(ar, z ? 0 : 33);                  /* 32 layers and the embedding/head */
        CHECK_EQ_INT(rs, z ? 33 : 0);
        CHECK_EQ_INT(ag, z == 0 ? 0 : z < 3 ? 1 : 64);
        int adam = find_op(&t, "r0.adamw");
        CHECK(adam >= 0 && t.ops[adam].u.ew.elements ==
                               (llm_param_count(&c) + 2 * (z ? 4 : 1) - 1) / (2 * (z ? 4 : 1)));
        if (z == 3) {
            int g = find_op(&t, "r0.L5.param_allgather"), first = find_op(&t, "r0.L5.attn_norm");
            CHECK(g >= 0 && first >= 0 && t.ops[g].stream == 2);
            int waits = 0;
            for (uint32_t k = 0; first >= 0 && k < t.ops[first].ndeps; k++)
                waits += (int)t.deps[t.ops[first].deps_off + k] == g;
            CHECK_EQ_INT(waits, 1);
        }
        struct run_result r;
        char msg[600] = "";
        int rc = tu_run_on("configs/systems/nvidia-dgx-a100.yaml", &t, &r, msg, sizeof msg);
        CHECK_EQ_INT(rc, 0);
        if (rc == 0) {
            struct hw_config h;
            CHECK_EQ_INT(tu_load_cfg("configs/nvidia-a100-sxm-80gb.yaml", &h), 0);
            nv[z] = r.bytes[cfg_level_index(&h, "nvlink")];
            time_ps[z] = r.total_ps;
            run_result_free(&r);
        } else {
            fprintf(stderr, "%s\n", msg);
        }
        trace_free(&t);
    }
    printf("  TP 2 x DP 4 step, ZeRO 0/1/2/3: %.1f/%.1f/%.1f/%.1f ms, NVLink %.3g/%.3g/%.3g/%.3g B\n",
           time_ps[0] * 1e-9, time_ps[1] * 1e-9, time_ps[2] * 1e-9, time_ps[3] * 1e-9, nv[0], nv[1],
           nv[2], nv[3]);
    CHECK(time_ps[1] < time_ps[0]);                    /* AdamW on a quarter of the state */
    /* with recomputation the layer's forward runs again but its gather is
     * not copied: one gather before the recompute, on stream 2 */
    s.zero = 3;
    s.recompute = 1;
    struct trace tr;
    CHECK_EQ_INT(llm_build(&c, &s, &tr, &d), 0);
    uint32_t gathers = 0;
    for (uint32_t i = 0; i < tr.nops; i++)
        if (tr.ops[i].device == 0 && tr.ops[i].kind == OP_COLLECTIVE &&
            tr.ops[i].u.coll.what == COLL_ALL_GATHER) {
            CHECK(tr.ops[i].stream == 2 && strstr(op_id(&tr, &tr.ops[i]), "recompute") == NULL);
            gathers++;
        }
    CHECK_EQ_INT(gathers, 64);
    /* the resident weights: ZeRO-3 gathers them per use (and a recomputed
     * or backward GEMM reuses them), so no more than the head's remain */
    double wb = 0;
    trace_working_set(&tr, 0, &wb);
    CHECK(wb < 32000.0 * 4096 * 2 * 1.01);
    trace_free(&tr);
    s.recompute = 0;
    CHECK(nv[3] > 1.3 * nv[1]);                        /* the weights gathered twice more */
    /* refused: without replicas, with PP, stage 4 */
    struct trace bad;
    s.zero = 1;
    s.dp = 1;
    CHECK_EQ_INT(llm_build(&c, &s, &bad, &d), -1);
    CHECK(strcmp(d.field, "--zero") == 0);
    s.dp = 4;
    s.zero = 4;
    CHECK_EQ_INT(llm_build(&c, &s, &bad, &d), -1);
    CHECK(strcmp(d.field, "--zero") == 0);
}

/* gen llm --tp: a trace the run pairs; a TP size that does not divide the
 * heads is an error and writes nothing. */
static void test_gen_tp(void)
{
    char cmd[4096], out[300];
    snprintf(out, sizeof out, "%s/tp2.json", dir);
    snprintf(cmd, sizeof cmd, STRATA_BINARY " gen llm --model traces/models/llama-2-7b.json "
             "--phase decode --context 100 --tp 2 -o %s > %s/gen.txt", out, dir);
    CHECK_EQ_INT(tu_sh(cmd), 0);
    snprintf(cmd, sizeof cmd, STRATA_BINARY " run --hw configs/systems/nvidia-dgx-a100.yaml "
             "--trace %s --csv %s/tp2.csv > %s/run.txt", out, dir, dir);
    CHECK_EQ_INT(tu_sh(cmd), 0);
    char p[300];
    snprintf(p, sizeof p, "%s/tp2.csv", dir);
    size_t len;
    char *csv = tu_read_file(p, &len);
    CHECK_STR_CONTAINS(csv, "r1.L31.mlp_allreduce,");
    CHECK_STR_CONTAINS(csv, ",collective,");
    free(csv);
    snprintf(out, sizeof out, "%s/tp3.json", dir);
    snprintf(cmd, sizeof cmd, STRATA_BINARY " gen llm --model traces/models/llama-2-7b.json "
             "--phase decode --tp 3 -o %s 2> %s/err.txt", out, dir);
    CHECK_EQ_INT(tu_sh(cmd), 1);
    CHECK(!tu_exists(out));
    snprintf(p, sizeof p, "%s/err.txt", dir);
    char *err = tu_read_file(p, &len);
    CHECK_STR_CONTAINS(err, "num_attention_heads: --tp 3 does not divide the 32 attention heads");
    free(err);
}

/* NVLink SHARP (NVLS): on an NVSwitch that reduces (nvls: true) an
 * all-reduce sends each rank's S bytes up and the S/n it reduced back, and
 * receives the same, so at large sizes algbw = link x 0.85 (NCCL's Hopper
 * NVLS efficiency) / (1 + 1/n); the ring's is link x n / (2(n - 1)).  auto
 * takes NVLS when NCCL's cost model says so; a system or a collective
 * without it keeps the ring, and asking for it there is an error. */
/* Islands of unequal size (12 GPUs over two 8-GPU nodes): no ring keeps
 * both crossings on one rail, so the one ring takes PXN hops (over NVLink
 * to the GPU on the destination's rail) and runs at one NIC's rate; NCCL
 * would spread such crossings over several rails (a lower bound here). */
static void test_uneven_islands(void)
{
    struct hw_system s;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(tu_load_hw("configs/systems/hgx-h100-x2-ndr.yaml", NULL, &s, &d), 0);
    struct collbench_pt pt;
    CHECK_EQ_INT(collbench_run(&s, COLL_ALL_REDUCE, COLL_AUTO, DT_FP32, 12, 1, (uint64_t)1 << 30, &pt, &d), 0);
    CHECK_STR_CONTAINS(pt.how, "ring");
    printf("  all-reduce 1 GiB on 12 H100s over 2 nodes (8 + 4): busbw %.1f GB/s (%s)\n", pt.busbw * 1e-9, pt.how);
    CHECK(pt.busbw < 50e9 && pt.busbw > 40e9);
    sys_free(&s);
}

static void test_nvls(void)
{
    const char *hgx = "configs/systems/nvidia-hgx-h100.yaml";
    struct hw_system s;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(tu_load_hw(hgx, NULL, &s, &d), 0);
    double link = 450e9 * 0.818;        /* the file's NVLink rate after its efficiency */
    struct collbench_pt pt, pr;
    uint64_t big = (uint64_t)1 << 32;
    for (uint32_t n = 5; n <= 8; n++) {
        CHECK_EQ_INT(collbench_run(&s, COLL_ALL_REDUCE, COLL_AUTO, DT_FP32, n, 1, big, &pt, &d), 0);
        CHECK_STR_CONTAINS(pt.how, "nvls");
        double want = link * 0.85 / (1.0 + 1.0 / n);
        printf("  NVLS all-reduce 4 GiB on %u H100s: algbw %.1f GB/s (S(1+1/n) model %.1f), busbw %.1f\n",
               n, pt.algbw * 1e-9, want * 1e-9, pt.busbw * 1e-9);
        CHECK(pt.algbw < want && pt.algbw > 0.97 * want);
    }
    /* the ring, asked for: the link's rate as bus bandwidth */
    CHECK_EQ_INT(collbench_run(&s, COLL_ALL_REDUCE, COLL_RING, DT_FP32, 8, 1, big, &pr, &d), 0);
    CHECK_STR_CONTAINS(pr.how, "ring");
    CHECK(pr.busbw < link && pr.busbw > 0.97 * link);
    CHECK(pt.busbw > 1.25 * pr.busbw);  /* n = 8: NVLS 1.32x the ring's */
    /* small messages stay on the ring (NVLS's 25 us latency) */
    CHECK_EQ_INT(collbench_run(&s, COLL_ALL_REDUCE, COLL_AUTO, DT_FP32, 8, 1, 32768, &pt, &d), 0);
    CHECK_STR_CONTAINS(pt.how, "ring");
    /* only all-reduce: all-gather keeps its algorithms */
    CHECK_EQ_INT(collbench_run(&s, COLL_ALL_GATHER, COLL_AUTO, DT_FP32, 8, 1, big, &pt, &d), 0);
    CHECK(strstr(pt.how, "nvls") == NULL);
    sys_free(&s);
    /* the A100's NVSwitch has no SHARP: auto stays on the ring ... */
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(tu_load_hw("configs/systems/nvidia-dgx-a100.yaml", NULL, &s, &d), 0);
    CHECK_EQ_INT(collbench_run(&s, COLL_ALL_REDUCE, COLL_AUTO, DT_FP32, 8, 1, big, &pt, &d), 0);
    CHECK_STR_CONTAINS(pt.how, "ring");
    sys_free(&s);
    /* ... and a trace that asks for nvls there is told why not */
    struct trace t;
    char msg[600];
    char *ops = rank_ops(8, "{\"id\": \"ar@\", \"kind\": \"collective\", \"device\": \"gpu@\", "
                            "\"collective\": \"all_reduce\", \"group\": [\"gpu0\", \"gpu1\", \"gpu2\", "
                            "\"gpu3\", \"gpu4\", \"gpu5\", \"gpu6\", \"gpu7\"], \"bytes\": 1073741824, "
                            "\"algo\": \"nvls\"}");
    CHECK_EQ_INT(load(gpus8, ops, &t, msg, sizeof msg), 0);
    struct run_result r;
    CHECK(tu_run_on("configs/systems/nvidia-dgx-a100.yaml", &t, &r, msg, sizeof msg) != 0);
    CHECK_STR_CONTAINS(msg, "ops[0].algo");
    CHECK_STR_CONTAINS(msg, "nvls: true");
    /* on the HGX it runs, and each rank's NVLink carries S(1 + 1/n) */
    CHECK_EQ_INT(tu_run_on(hgx, &t, &r, msg, sizeof msg), 0);
    struct hw_system h;
    CHECK_EQ_INT(tu_load_hw(hgx, NULL, &h, &d), 0);
    double nvb = run_op_body(&r, 0)->bytes[h.chip.lv_peer];
    CHECK(nvb > 1073741824.0 * 1.125 * 0.999 && nvb < 1073741824.0 * 1.125 * 1.001);
    CHECK_STR_CONTAINS(run_op_body(&r, 0)->tile, "nvls");
    sys_free(&h);
    run_result_free(&r);
    trace_free(&t);
    free(ops);
    /* nvls runs all_reduce, all_gather and reduce_scatter, not all_to_all */
    ops = rank_ops(8, "{\"id\": \"ag@\", \"kind\": \"collective\", \"device\": \"gpu@\", "
                      "\"collective\": \"all_to_all\", \"group\": [\"gpu0\", \"gpu1\", \"gpu2\", "
                      "\"gpu3\", \"gpu4\", \"gpu5\", \"gpu6\", \"gpu7\"], \"bytes\": 1048576, "
                      "\"algo\": \"nvls\"}");
    CHECK(load(gpus8, ops, &t, msg, sizeof msg) != 0);
    CHECK_STR_CONTAINS(msg, "all_reduce, all_gather and reduce_scatter only");
    free(ops);
}

/* send_recv: one device sends, one receives (NCCL's send/recv pair, a
 * pipeline stage's activations): a broadcast of two, both ops ending when
 * the bytes are in; the sender is the root (default the first). */
static void test_send_recv(void)
{
    const char *dgx = "configs/systems/nvidia-dgx-a100.yaml";
    struct trace t;
    struct run_result r;
    char msg[600];
    const char *devs = "\"gpu0\", \"gpu1\", \"gpu2\", \"gpu3\"";
    const char *ops =
        "{\"id\": \"s\", \"kind\": \"collective\", \"device\": \"gpu3\", \"collective\": \"send_recv\", "
        "\"group\": [\"gpu0\", \"gpu3\"], \"root\": \"gpu3\", \"bytes\": 1073741824},\n"
        "{\"id\": \"r\", \"kind\": \"collective\", \"device\": \"gpu0\", \"collective\": \"send_recv\", "
        "\"group\": [\"gpu0\", \"gpu3\"], \"root\": \"gpu3\", \"bytes\": 1073741824}";
    CHECK_EQ_INT(load(devs, ops, &t, msg, sizeof msg), 0);
    CHECK_EQ_INT(tu_run_on(dgx, &t, &r, msg, sizeof msg), 0);
    /* 1 GiB at the channels' 12 x 19.6 GB/s (under the link's 274) */
    double sec = (double)(run_op_end(&r, 0) - run_op_start(&r, 0)) * 1e-12;
    printf("  send_recv 1 GiB gpu3 -> gpu0 on a DGX A100: %.3f ms (%.1f GB/s)\n", sec * 1e3,
           1073741824.0 / sec * 1e-9);
    CHECK(sec > 1073741824.0 / 235.2e9 && sec < 1.05 * 1073741824.0 / 235.2e9);
    CHECK_EQ_INT((long long)run_op_end(&r, 0), (long long)run_op_end(&r, 1));
    struct hw_system h;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(tu_load_hw(dgx, NULL, &h, &d), 0);
    /* the sender's bytes crossed NVLink; the receiver sent nothing */
    CHECK(run_op_body(&r, 0)->bytes[h.chip.lv_peer] == 1073741824.0);
    CHECK(run_op_body(&r, 1)->bytes[h.chip.lv_peer] == 0.0);
    sys_free(&h);
    run_result_free(&r);
    trace_free(&t);
    /* between two devices only; a root is its sender */
    char *three = rank_ops(3, "{\"id\": \"x@\", \"kind\": \"collective\", \"device\": \"gpu@\", "
                              "\"collective\": \"send_recv\", \"group\": [\"gpu0\", \"gpu1\", \"gpu2\"], "
                              "\"bytes\": 1024}");
    CHECK(load(devs, three, &t, msg, sizeof msg) != 0);
    CHECK_STR_CONTAINS(msg, "between two devices");
    free(three);
    char *ar = rank_ops(2, "{\"id\": \"x@\", \"kind\": \"collective\", \"device\": \"gpu@\", "
                           "\"collective\": \"all_reduce\", \"group\": [\"gpu0\", \"gpu1\"], "
                           "\"root\": \"gpu1\", \"bytes\": 1024}");
    CHECK(load(devs, ar, &t, msg, sizeof msg) != 0);
    CHECK_STR_CONTAINS(msg, "broadcast or a send_recv has a root");
    free(ar);
}

/* NCCL's trees (all_reduce over two or more nodes): a chain in each node,
 * a double binary tree between them, one pair of trees per rail.  Its
 * latency grows as log2 of the nodes where a ring's grows with the ranks,
 * so small all-reduces over many nodes take it; on two DGX A100 nodes it
 * sends half the ring's bytes over the HDR rails (each node's partial sum
 * crosses once each way).  One node has no trees. */
static void test_tree(void)
{
    struct hw_system s;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(tu_load_hw("configs/systems/hgx-h100-x16-ndr.yaml", NULL, &s, &d), 0);
    struct collbench_pt tr, rg;
    CHECK_EQ_INT(collbench_run(&s, COLL_ALL_REDUCE, COLL_AUTO, DT_FP32, 128, 1, 32768, &tr, &d), 0);
    CHECK_EQ_INT(collbench_run(&s, COLL_ALL_REDUCE, COLL_RING, DT_FP32, 128, 1, 32768, &rg, &d), 0);
    printf("  32 KiB all-reduce over 128 H100s on 16 nodes: auto %s %.1f us, ring %.1f us\n", tr.how,
           tr.gpu_s * 1e6, rg.gpu_s * 1e6);
    CHECK_STR_CONTAINS(tr.how, "tree");
    CHECK(tr.gpu_s < rg.gpu_s / 5);     /* 2 (7 + 4) tree hops against 2 x 127 ring hops */
    sys_free(&s);
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(tu_load_hw("configs/systems/two-dgx-a100-hdr.yaml", NULL, &s, &d), 0);
    uint64_t big = (uint64_t)1 << 27;
    CHECK_EQ_INT(collbench_run(&s, COLL_ALL_REDUCE, COLL_TREE, DT_FP32, 16, 1, big, &tr, &d), 0);
    CHECK_EQ_INT(collbench_run(&s, COLL_ALL_REDUCE, COLL_RING, DT_FP32, 16, 1, big, &rg, &d), 0);
    printf("  128 MiB over two DGX A100 nodes: tree busbw %.1f GB/s, 8 rings %.1f GB/s\n",
           tr.busbw * 1e-9, rg.busbw * 1e-9);
    CHECK(rg.busbw < 8 * 25e9);         /* the rings: bound by the 8 HDR rails */
    CHECK(tr.busbw > 1.2 * rg.busbw);   /* the trees cross them with half the bytes */
    sys_free(&s);
    /* one node: no trees, and asking for one says why */
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(tu_load_hw("configs/systems/nvidia-dgx-a100.yaml", NULL, &s, &d), 0);
    CHECK(collbench_run(&s, COLL_ALL_REDUCE, COLL_TREE, DT_FP32, 8, 1, 1 << 20, &tr, &d) != 0);
    CHECK_STR_CONTAINS(d.msg, "two or more nodes");
    sys_free(&s);
}

/* Build model's step s in full and with one replica simulated (the
 * others mirrors), run both on system sys and check one replica's step
 * time is the full run's within tol. */
static void check_one_replica(const char *model, struct llm_step s, const char *sys,
                              uint32_t nmirrors, const char *what, double tol)
{
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load(model, &c, &d), 0);
    struct trace full, one;
    CHECK_EQ_INT(llm_build(&c, &s, &full, &d), 0);
    s.dp_sim = 1;
    CHECK_EQ_INT(llm_build(&c, &s, &one, &d), 0);
    CHECK_EQ_INT(one.nmirrors, nmirrors);
    struct run_result rf, r1;
    char msg[600] = "";
    int okf = tu_run_on(sys, &full, &rf, msg, sizeof msg) == 0;
    int ok1 = tu_run_on(sys, &one, &r1, msg, sizeof msg) == 0;
    CHECK(okf && ok1);
    if (okf && ok1) {
        printf("  %s: %.3f ms in full, %.3f ms with one replica\n", what,
               (double)rf.total_ps * 1e-9, (double)r1.total_ps * 1e-9);
        CHECK_NEAR_REL((double)r1.total_ps, (double)rf.total_ps, tol);
    }
    if (okf)
        run_result_free(&rf);
    if (ok1)
        run_result_free(&r1);
    trace_free(&full);
    trace_free(&one);
}

/* Symmetric ranks: a DP 16 step on two DGX A100s with one replica
 * simulated takes what the full run takes.  The rail rings' node-crossing
 * hops run between two mirrors; each ring's narrowest hop is run anyway,
 * so the stage waits for it and the protocol is chosen on it (the mirrored
 * run took 14.6 ms against 9.55 ms when only the simulated rank's hops
 * were seen). */
static void test_mirror_rings(void)
{
    struct llm_step s = {LLM_TRAIN, 1, 256, 0, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0,
                         LLM_FW_FUSED, 1, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    check_one_replica("traces/models/smollm-135m.json", s, "configs/systems/two-dgx-a100-hdr.yaml",
                      15, "SmolLM DP 16 on two DGX A100s", 1e-3);
}

/* Symmetric ranks on a torus: TP 2 x DP 16 on a TPU v4-128, one replica
 * simulated.  Chip 2r and 2r + 1 are replica r's TP pair, so the two
 * data-parallel rings (TP rank 0's and rank 1's) interleave over the same
 * chips and cross each other's links.  The hops between two mirrors that
 * share a link past its rate are run (mirror_hops in models/coll.c), so
 * the step is the full run's; when they were not, the mirrored step took
 * 8.43 ms against 13.38 ms. */
static void test_mirror_torus(void)
{
    struct llm_step s = {LLM_TRAIN, 16, 64, 0, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0,
                         LLM_FW_FUSED, 2, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    check_one_replica("tests/data/tiny-gpt.json", s, "configs/systems/google-tpu-v4-128.yaml", 30,
                      "tiny GPT TP 2 x DP 16 on a v4-128", 1e-6);
}

/* Symmetric ranks on a full mesh: SmolLM DP 8 on an HLS-Gaudi2, one
 * replica simulated.  The gradients' all-reduces split over the mesh's six
 * link-disjoint rings, every ring's hops but the simulated rank's between
 * two mirrors; each ring's narrowest hop is run, so the step is the full
 * run's. */
static void test_mirror_mesh(void)
{
    struct llm_step s = {LLM_TRAIN, 1, 256, 0, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0,
                         LLM_FW_FUSED, 1, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    check_one_replica("traces/models/smollm-135m.json", s, "configs/systems/intel-hls-gaudi2.yaml", 7,
                      "SmolLM DP 8 on an HLS-Gaudi2 (6 rings)", 1e-3);
}

/* Data parallelism across slices (--dcn): TP 1 x DP 8 with ZeRO-1 in each
 * node of two DGX A100s, the nodes as two slices joined by InfiniBand.
 * Each layer's reduce-scattered gradients (this rank's 1/8) are all-reduced
 * with the same rank of the other node, after the node's reduce-scatter,
 * on the data-parallel stream; one replica of one node is simulated and
 * the other 15 GPUs mirror it.  The step takes longer than one node's
 * (the last layers' all-reduces cross the network after the backward),
 * and --dcn refuses what it does not model. */
static void test_dcn(void)
{
    struct llm_config c;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(llm_config_load("traces/models/llama-2-7b.json", &c, &d), 0);
    struct llm_step s = {LLM_TRAIN, 1, 256, 0, DT_BF16, ATTN_FLASH, DT_BF16, WF_NONE, 0,
                         LLM_FW_FUSED, 1, 8, 1, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    struct trace two, one;
    CHECK_EQ_INT(llm_build(&c, &s, &two, &d), 0);
    CHECK_EQ_INT(two.ndevices, 16);
    CHECK_EQ_INT(two.nmirrors, 15);
    uint32_t ndcn = 0, bad = 0;
    uint64_t rs = 0, ar = 0;
    for (uint32_t i = 0; i < two.nops; i++) {
        const struct op *o = &two.ops[i];
        if (strcmp(op_id(&two, o), "r0.L5.dp_reduce_scatter") == 0)
            rs = o->u.coll.bytes;
        if (strstr(op_id(&two, o), "dcn_allreduce") == NULL)
            continue;
        ndcn++;
        const struct trace_group *g = &two.groups[o->u.coll.group];
        if (o->u.coll.what != COLL_ALL_REDUCE || o->stream != 1 || g->n != 2 ||
            two.group_dev[g->off] != 0 || two.group_dev[g->off + 1] != 8)
            bad++;
        if (strcmp(op_id(&two, o), "r0.L5.dcn_allreduce") == 0) {
            ar = o->u.coll.bytes;
            /* it waits for the node's reduce-scatter of the same layer */
            const uint32_t *dp = &two.deps[o->deps_off];
            CHECK(o->ndeps >= 1 && strcmp(op_id(&two, &two.ops[dp[0]]), "r0.L5.dp_reduce_scatter") == 0);
        }
    }
    CHECK_EQ_INT(ndcn, (uint32_t)c.layers + 1);
    CHECK_EQ_INT(bad, 0);
    CHECK(rs > 0 && ar * 8 >= rs - 8 && ar * 8 <= rs);
    s.dcn = 1;
    CHECK_EQ_INT(llm_build(&c, &s, &one, &d), 0);
    struct run_result r2, r1;
    char msg[600] = "";
    int rc = tu_run_on("configs/systems/two-dgx-a100-hdr.yaml", &two, &r2, msg, sizeof msg);
    CHECK_EQ_INT(rc, 0);
    int rc1 = tu_run_on("configs/systems/two-dgx-a100-hdr.yaml", &one, &r1, msg, sizeof msg);
    CHECK_EQ_INT(rc1, 0);
    if (rc == 0 && rc1 == 0) {
        printf("  ZeRO-1 DP 8 step: one node %.3f ms, two nodes (--dcn 2) %.3f ms\n",
               (double)r1.total_ps * 1e-9, (double)r2.total_ps * 1e-9);
        CHECK(r2.total_ps > r1.total_ps);
    }
    if (rc == 0)
        run_result_free(&r2);
    if (rc1 == 0)
        run_result_free(&r1);
    trace_free(&two);
    trace_free(&one);
    struct trace bad_t;
    s.dcn = 2;
    s.phase = LLM_DECODE;
    s.dp = 1;
    s.zero = 0;
    CHECK_EQ_INT(llm_build(&c, &s, &bad_t, &d), -1);
    CHECK(strcmp(d.field, "--dcn") == 0);
    /* with a pipeline: PP 2 x DP 4 in each node, the slices the two nodes.
     * Every stage's layers, once reduce-scattered over its 4 replicas in
     * the last micro-batch's backward, are all-reduced with the same
     * device of the other node (gpu k and k + 8), and so are the
     * embedding's and the head's; the other slice mirrors the first */
    s.phase = LLM_TRAIN;
    s.pp = 2;
    s.dp = 4;
    s.zero = 1;
    s.dp_sim = 0;
    s.batch = 2;
    s.microbatches = 2;
    struct trace pp;
    CHECK_EQ_INT(llm_build(&c, &s, &pp, &d), 0);
    CHECK_EQ_INT(pp.ndevices, 16);
    CHECK_EQ_INT(pp.nmirrors, 8);
    uint32_t pdcn = 0, pbad = 0;
    for (uint32_t i = 0; i < pp.nops; i++) {
        const struct op *o = &pp.ops[i];
        if (strstr(op_id(&pp, o), "dcn_allreduce") == NULL)
            continue;
        pdcn++;
        const struct trace_group *g = &pp.groups[o->u.coll.group];
        if (g->n != 2 || pp.group_dev[g->off] != o->device || pp.group_dev[g->off + 1] != o->device + 8)
            pbad++;
        if (strcmp(op_id(&pp, o), "r5.s1.L20.dcn_allreduce") == 0) {
            const uint32_t *dp = &pp.deps[o->deps_off];
            CHECK(o->ndeps >= 1 && strcmp(op_id(&pp, &pp.ops[dp[0]]), "r5.s1.L20.dp_reduce_scatter") == 0);
            CHECK(o->u.coll.bytes * 4 <= pp.ops[dp[0]].u.coll.bytes + 8);
        }
    }
    /* 32 layers on each of 8 devices, and the embedding / head on each */
    CHECK_EQ_INT(pdcn, 8 * (32 / 2 + 1));
    CHECK_EQ_INT(pbad, 0);
    struct run_result rp;
    char pmsg[600] = "";
    CHECK_EQ_INT(tu_run_on("configs/systems/two-dgx-a100-hdr.yaml", &pp, &rp, pmsg, sizeof pmsg), 0);
    printf("  PP 2 x DP 4 x ZeRO-1 in each node, two nodes (--dcn 2): %.3f ms\n", (double)rp.total_ps * 1e-9);
    run_result_free(&rp);
    trace_free(&pp);
}

/* A full mesh (every pair of GPUs on a link of its own, no switch): rings
 * that share no link direction split the data (six over eight devices), so
 * a large all-reduce runs near six links' rate, where one ring in the
 * group's order uses two of a GPU's seven links; a stack that keeps one
 * ring (collectives.rings: one) gets one link's rate.  Two devices, or
 * devices behind a switch, keep the one ring. */
static void test_mesh_rings(void)
{
    struct hw_system s;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(tu_load_hw("configs/systems/intel-hls-gaudi2.yaml", NULL, &s, &d), 0);
    struct collbench_pt six, one, two;
    uint64_t bytes = (uint64_t)1 << 30;
    CHECK_EQ_INT(collbench_run(&s, COLL_ALL_REDUCE, COLL_AUTO, DT_BF16, 8, 1, bytes, &six, &d), 0);
    CHECK_EQ_INT(collbench_run(&s, COLL_ALL_REDUCE, COLL_AUTO, DT_BF16, 2, 1, bytes, &two, &d), 0);
    s.chip.coll_one_ring = 1;
    CHECK_EQ_INT(collbench_run(&s, COLL_ALL_REDUCE, COLL_AUTO, DT_BF16, 8, 1, bytes, &one, &d), 0);
    printf("  HLS-Gaudi2, 1 GiB all-reduce over 8: %s busbw %.1f GB/s; one ring %s %.1f GB/s; over 2: %s %.1f GB/s\n",
           six.how, six.busbw * 1e-9, one.how, one.busbw * 1e-9, two.how, two.busbw * 1e-9);
    CHECK(strstr(six.how, "6 rings") != NULL);
    CHECK(six.busbw > 0.9 * 6 * 37.5e9 && six.busbw <= 6 * 37.5e9);
    CHECK(one.busbw > 0.9 * 37.5e9 && one.busbw <= 37.5e9);
    CHECK(strstr(two.how, "rings") == NULL);
    /* five of the eight: an odd mesh, n - 1 = 4 rings */
    s.chip.coll_one_ring = 0;
    CHECK_EQ_INT(collbench_run(&s, COLL_ALL_REDUCE, COLL_AUTO, DT_BF16, 5, 1, bytes, &two, &d), 0);
    CHECK(strstr(two.how, "4 rings") != NULL);
    sys_free(&s);
    /* the MI300X platform's xGMI is a full mesh too */
    CHECK_EQ_INT(tu_load_hw("configs/systems/amd-mi300x-8.yaml", NULL, &s, &d), 0);
    CHECK_EQ_INT(collbench_run(&s, COLL_ALL_REDUCE, COLL_AUTO, DT_BF16, 8, 1, bytes, &six, &d), 0);
    CHECK(strstr(six.how, "6 rings") != NULL);
    sys_free(&s);
    /* the DGX A100's GPUs meet through NVSwitches: no mesh, one ring */
    CHECK_EQ_INT(tu_load_hw("configs/systems/nvidia-dgx-a100.yaml", NULL, &s, &d), 0);
    CHECK_EQ_INT(collbench_run(&s, COLL_ALL_REDUCE, COLL_RING, DT_BF16, 8, 1, bytes, &one, &d), 0);
    CHECK(strstr(one.how, "rings") == NULL);
    sys_free(&s);
}

int main(void)
{
    if (tu_mkdtemp(dir, sizeof dir, "coll") != 0)
        return 1;
    test_ring_mechanism();
    test_contention();
    test_direct_and_broadcast();
    test_deadlock_and_unreachable();
    test_bench_cli();
    test_gen_tp();
    test_exposed_comm();
    test_mirrors();
    test_expert_parallel();
    test_ep_dp();
    test_sm_hold();
    test_sm_hold_wait();
    test_sm_hold_short();
    test_nvls_gather_scatter();
    test_mirror_rings();
    test_mirror_torus();
    test_mirror_mesh();
    test_zero();
    test_nvls();
    test_uneven_islands();
    test_send_recv();
    test_tree();
    test_dcn();
    test_mesh_rings();
    tu_rmtree(dir);
    TEST_MAIN_END();
}
