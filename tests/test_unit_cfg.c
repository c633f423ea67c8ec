/* test_unit_cfg.c: load every shipped config and check the figures derived
 * from it against the peaks the configs cite (see the configs/ YAML files).  Runs with
 * cwd = repository root. */
#include <dirent.h>

#include "cfg.h"
#include "run.h"
#include "test.h"
#include "trace.h"
#include "util.h"

/* Invariants every valid config satisfies. */
static void check_common(const struct hw_config *h, const char *path, const char *name)
{
    CHECK(strcmp(h->path, path) == 0);
    CHECK(strcmp(h->name, name) == 0);
    CHECK(strcmp(h->family, "gpu") == 0);
    CHECK(h->clock_hz > 1e8);
    CHECK(h->units >= 1);
    CHECK(h->eff_matrix_pipe > 0 && h->eff_matrix_pipe <= 1);
    CHECK(h->eff_vector_pipe > 0 && h->eff_vector_pipe <= 1);
    CHECK(h->level[h->lv_dram].eff_bw > 0 && h->level[h->lv_dram].eff_bw <= 1);
    CHECK(h->level[h->lv_dram].eff_rw_penalty >= 0 && h->level[h->lv_dram].eff_rw_penalty < 1);
    CHECK(h->level[h->lv_dram].eff_loaded_latency_ps >= h->level[h->lv_dram].latency_ps);
    CHECK(h->eff_inflight_bytes_per_unit > 0);
    CHECK(h->level[h->lv_cache[0]].latency_ps < h->level[h->lv_dram].latency_ps);
    CHECK(h->level[h->lv_cache[0]].bw_bytes_per_s > h->level[h->lv_dram].bw_bytes_per_s);
    /* Hopper's gap between kernels measured on an H200; Ampere's a priori */
    CHECK_EQ_INT(h->launch_overhead_ps, (strncmp(name, "nvidia-h", 8) == 0 ? 1120000 : 2500000));
    CHECK_EQ_INT(h->level[h->lv_host].latency_ps, 1000000);
    CHECK_EQ_INT(h->level[h->lv_regs].capacity_bytes, 256 * 1024);
    CHECK(h->level[h->lv_smem].bw_bytes_per_cycle == 128);
    CHECK(cfg_matrix_peak_flops(h, DT_COUNT) == 0);
    CHECK(cfg_vector_peak_flops(h, DT_COUNT) == 0);
    CHECK(cfg_matrix_peak_flops(h, DT_BF16) > cfg_vector_peak_flops(h, DT_FP32));
}

static void test_h100(void)
{
    const char *path = "configs/nvidia-h100-sxm.yaml";
    struct hw_config h;
    CHECK_EQ_INT(tu_load_cfg(path, &h), 0);
    check_common(&h, path, "nvidia-h100-sxm");
    CHECK(h.clock_hz == 1.83e9);
    CHECK_EQ_INT(h.units, 132);
    CHECK_NEAR_REL(cfg_matrix_peak_flops(&h, DT_BF16), 989.4e12, 1e-3);
    CHECK_NEAR_REL(cfg_matrix_peak_flops(&h, DT_FP16), 989.4e12, 1e-3);
    CHECK_NEAR_REL(cfg_matrix_peak_flops(&h, DT_TF32), 494.5e12, 1e-3);
    CHECK_NEAR_REL(cfg_matrix_peak_flops(&h, DT_FP8_E4M3), 1979e12, 1e-3);
    CHECK_NEAR_REL(cfg_matrix_peak_flops(&h, DT_INT8), 1979e12, 1e-3);
    CHECK_NEAR_REL(cfg_matrix_peak_flops(&h, DT_FP64), 66.9e12, 1e-3);
    CHECK(cfg_matrix_peak_flops(&h, DT_INT4) == 0);
    CHECK_NEAR_REL(cfg_vector_peak_flops(&h, DT_FP32), 67.0e12, 1e-3);
    CHECK_NEAR_REL(cfg_vector_peak_flops(&h, DT_FP64), 33.5e12, 1e-3);
    CHECK(h.level[h.lv_dram].bw_bytes_per_s == 3.35e12);
    CHECK_EQ_INT(h.level[h.lv_dram].capacity_bytes, 80000000000ULL);
    CHECK(strcmp(h.level[h.lv_dram].type, "HBM3") == 0);
    CHECK_EQ_INT(h.level[h.lv_cache[0]].capacity_bytes, 50ULL * 1048576);
    CHECK_EQ_INT(h.level[h.lv_cache[0]].latency_ps, 151200);
    CHECK_EQ_INT(h.level[h.lv_dram].latency_ps, 375200);
    CHECK_EQ_INT(h.level[h.lv_smem].capacity_bytes, 228 * 1024);
    CHECK_EQ_INT(h.max_threads_per_unit, 2048);
    CHECK_EQ_INT(h.max_ctas_per_unit, 32);
    CHECK_EQ_INT(h.level[h.lv_peer].instances, 18);
    CHECK(h.level[h.lv_peer].bw_bytes_per_s == 18 * 25e9);
    CHECK(h.level[h.lv_host].bw_bytes_per_s == 63e9);
    CHECK_NEAR_REL(cfg_smem_bw(&h), 132 * 128 * 1.83e9, 1e-12);
}

static void test_h200(void)
{
    const char *path = "configs/nvidia-h200-sxm.yaml";
    struct hw_config h, h100;
    CHECK_EQ_INT(tu_load_cfg(path, &h), 0);
    CHECK_EQ_INT(tu_load_cfg("configs/nvidia-h100-sxm.yaml", &h100), 0);
    check_common(&h, path, "nvidia-h200-sxm");
    /* Same die as the H100 SXM: identical compute. */
    for (int t = 0; t < DT_COUNT; t++) {
        CHECK(h.matrix_flops_per_cycle[t] == h100.matrix_flops_per_cycle[t]);
        CHECK(h.vector_flops_per_cycle[t] == h100.vector_flops_per_cycle[t]);
    }
    CHECK_NEAR_REL(cfg_matrix_peak_flops(&h, DT_BF16), 989.4e12, 1e-3);
    CHECK(h.level[h.lv_dram].bw_bytes_per_s == 4.8e12);
    CHECK_EQ_INT(h.level[h.lv_dram].capacity_bytes, 141000000000ULL);
    CHECK(strcmp(h.level[h.lv_dram].type, "HBM3e") == 0);
    CHECK_NEAR_REL(h.level[h.lv_cache[0]].bw_bytes_per_s, 10.148e12, 1e-9);
    CHECK_EQ_INT(h.level[h.lv_peer].instances, 18);
}

static void test_a100(void)
{
    const char *path = "configs/nvidia-a100-sxm-80gb.yaml";
    struct hw_config h;
    CHECK_EQ_INT(tu_load_cfg(path, &h), 0);
    check_common(&h, path, "nvidia-a100-sxm-80gb");
    CHECK_EQ_INT(h.units, 108);
    CHECK(h.clock_hz == 1.41e9);
    CHECK_NEAR_REL(cfg_matrix_peak_flops(&h, DT_BF16), 312e12, 2e-3);
    CHECK_NEAR_REL(cfg_matrix_peak_flops(&h, DT_TF32), 156e12, 2e-3);
    CHECK_NEAR_REL(cfg_matrix_peak_flops(&h, DT_INT8), 624e12, 2e-3);
    CHECK_NEAR_REL(cfg_matrix_peak_flops(&h, DT_FP64), 19.5e12, 2e-3);
    CHECK(cfg_matrix_peak_flops(&h, DT_FP8_E4M3) == 0);
    CHECK_NEAR_REL(cfg_vector_peak_flops(&h, DT_FP32), 19.5e12, 2e-3);
    CHECK_NEAR_REL(cfg_vector_peak_flops(&h, DT_FP64), 9.7e12, 1e-2);
    CHECK_NEAR_REL(cfg_vector_peak_flops(&h, DT_FP16), 78e12, 2e-3);
    CHECK_EQ_INT(h.level[h.lv_smem].capacity_bytes, 164 * 1024);
    CHECK_NEAR_REL(cfg_smem_bw(&h), 108 * 128 * 1.41e9, 1e-12);
    CHECK_EQ_INT(h.level[h.lv_cache[0]].capacity_bytes, 40ULL * 1048576);
    CHECK_EQ_INT(h.level[h.lv_cache[0]].latency_ps, 149600);
    CHECK(h.level[h.lv_dram].bw_bytes_per_s == 2039e9);
    CHECK_EQ_INT(h.level[h.lv_dram].capacity_bytes, 80000000000ULL);
    CHECK_EQ_INT(h.level[h.lv_peer].instances, 12);
    CHECK(h.level[h.lv_peer].bw_bytes_per_s == 12 * 25e9);
}

static void test_rtx4090(void)
{
    const char *path = "configs/nvidia-rtx-4090.yaml";
    struct hw_config h;
    CHECK_EQ_INT(tu_load_cfg(path, &h), 0);
    check_common(&h, path, "nvidia-rtx-4090");
    CHECK_EQ_INT(h.units, 128);
    CHECK(h.clock_hz == 2.52e9);
    CHECK_NEAR_REL(cfg_matrix_peak_flops(&h, DT_BF16), 165.15e12, 1e-3);
    CHECK_NEAR_REL(cfg_matrix_peak_flops(&h, DT_FP8_E5M2), 330.3e12, 1e-3);
    CHECK_NEAR_REL(cfg_matrix_peak_flops(&h, DT_INT8), 660.6e12, 1e-3);
    CHECK(cfg_matrix_peak_flops(&h, DT_FP64) == 0);
    CHECK_NEAR_REL(cfg_vector_peak_flops(&h, DT_FP32), 82.6e12, 1e-3);
    CHECK_EQ_INT(h.max_threads_per_unit, 1536);
    CHECK_EQ_INT(h.max_ctas_per_unit, 24);
    CHECK_EQ_INT(h.level[h.lv_smem].capacity_bytes, 100 * 1024);
    CHECK_EQ_INT(h.level[h.lv_cache[0]].capacity_bytes, 72ULL * 1048576);
    CHECK(h.level[h.lv_dram].bw_bytes_per_s == 1008e9);
    CHECK_EQ_INT(h.level[h.lv_dram].capacity_bytes, 24000000000ULL);
    CHECK(strcmp(h.level[h.lv_dram].type, "GDDR6X") == 0);
    CHECK(h.lv_peer < 0);   /* no NVLink on the RTX 4090 */
}

/* Every YAML file in configs/: loads, is named after its file, has a
 * positive peak, and runs the small two-stream example trace (a bf16 GEMM,
 * a host copy and a softmax) to a positive time, so a config whose matrix
 * pipe lacks the trace's type (the int8-only NPU) still runs. */
static void test_every_config(void)
{
    DIR *dir = opendir("configs");
    CHECK(dir != NULL);
    if (dir == NULL)
        return;
    struct diag d;
    struct trace t, tiny;
    CHECK_EQ_INT(trace_load("traces/examples/two-streams.json", &t, &d), 0);
    /* tiny GEMMs and naive attention over a short context: every shape must
     * find a tile on every chip (m <= 16 with n <= 32 once found none) */
    char tp[64], *tt = malloc(1 << 16);
    size_t w = 0;
    w += (size_t)snprintf(tt + w, (1 << 16) - w, "{\"strata_trace\": 1, \"ops\": [\n");
    static const int dims[] = {1, 4, 16, 17, 32, 33};
    int nops = 0;
    for (size_t i = 0; i < 6; i++)
        for (size_t j = 0; j < 6; j++)
            for (int kk = 1; kk <= 64; kk += 63)
                w += (size_t)snprintf(tt + w, (1 << 16) - w,
                                      "%s{\"id\": \"g%d\", \"kind\": \"gemm\", \"dtype\": \"bf16\", "
                                      "\"m\": %d, \"n\": %d, \"k\": %d}\n",
                                      nops ? "," : "", nops, dims[i], dims[j], kk), nops++;
    for (int kv = 1; kv <= 32; kv *= 2)
        w += (size_t)snprintf(tt + w, (1 << 16) - w,
                              ",{\"id\": \"a%d\", \"kind\": \"attention\", \"dtype\": \"bf16\", \"batch\": 1, "
                              "\"heads\": 1, \"q_len\": 1, \"kv_len\": %d, \"head_dim\": 64, \"impl\": \"naive\"}\n",
                              kv, kv);
    snprintf(tt + w, (1 << 16) - w, "]}\n");
    CHECK(tu_mkdtemp(tp, sizeof tp, "strata-cfg") == 0);
    char tpath[96];
    snprintf(tpath, sizeof tpath, "%s/tiny.json", tp);
    tu_write_file(tpath, tt);
    free(tt);
    CHECK_EQ_INT(trace_load(tpath, &tiny, &d), 0);
    tu_rmtree(tp);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(dir)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0)
            continue;
        char path[512], name[256];
        snprintf(path, sizeof path, "configs/%s", e->d_name);
        snprintf(name, sizeof name, "%.*s", (int)(len - 5), e->d_name);
        struct hw_config h;
        if (tu_load_chip(path, NULL, &h, &d) != 0) {
            diag_print(&d, stderr);
            CHECK(0);
            continue;
        }
        CHECK(strcmp(h.name, name) == 0);
        double peak = 0;
        for (unsigned k = 0; k < DT_COUNT; k++)
            if (h.matrix_flops_per_cycle[k] > peak)
                peak = h.matrix_flops_per_cycle[k];
        CHECK(peak * h.units * h.clock_hz > 1e9 || h.vector_flops_per_cycle[DT_FP32] > 0);
        struct run_result r;
        CHECK_EQ_INT(run_trace(&h, &t, &r, &d), 0);
        CHECK(r.total_ps > 0);
        run_result_free(&r);
        CHECK_EQ_INT(run_trace(&h, &tiny, &r, &d), 0);
        CHECK(r.total_ps > 0);
        run_result_free(&r);
        /* buffers too small for any tile: still a plan (tiles taken as if
         * they fit), not an abort */
        struct hw_config small = h;
        small.level[small.lv_smem].capacity_bytes = 1024;
        small.level[small.lv_regs].capacity_bytes = 4096;
        CHECK_EQ_INT(run_trace(&small, &tiny, &r, &d), 0);
        CHECK(r.total_ps > 0);
        run_result_free(&r);
        n++;
    }
    closedir(dir);
    trace_free(&t);
    trace_free(&tiny);
    printf("  every config: %d loaded and ran the two-stream example and %d tiny GEMMs\n", n, nops);
    CHECK(n >= 30);
}

int main(void)
{
    test_every_config();
    test_h100();
    test_h200();
    test_a100();
    test_rtx4090();
    TEST_MAIN_END();
}
