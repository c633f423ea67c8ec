/* test_unit_configs_apple.c: load the Apple silicon and Jetson configs and
 * check their DRAM capacity and bandwidth against the published figures
 * (within 1%), the Apple FP32 vector peak against cores * 256 * clock, and
 * the invariants every usable config satisfies.  Runs with cwd = repository
 * root. */
#include "cfg.h"
#include "test.h"
#include "util.h"

struct published {
    const char *name;   /* config name = file name without .yaml */
    int apple;          /* 1: Apple GPU core (256 FP32 FLOP/cycle) */
    unsigned cores;     /* GPU cores (Apple) or SMs (Jetson) */
    double clock_mhz;   /* clock the config states */
    double cap_gb;      /* published memory capacity, GB */
    double bw_gbps;     /* published memory bandwidth, GB/s */
    const char *dram_type;
};

/* Published figures the configs cite (see each YAML file's comments). */
static const struct published chips[] = {
    {"apple-m1-8c", 1, 8, 1278, 16, 68.25, "LPDDR4X"},
    {"apple-m1-pro-16c", 1, 16, 1296, 32, 200, "LPDDR5"},
    {"apple-m1-max-32c", 1, 32, 1296, 64, 400, "LPDDR5"},
    {"apple-m1-ultra-64c", 1, 64, 1296, 128, 800, "LPDDR5"},
    {"apple-m2-10c", 1, 10, 1398, 24, 100, "LPDDR5"},
    {"apple-m2-pro-19c", 1, 19, 1398, 32, 200, "LPDDR5"},
    {"apple-m2-pro-16c", 1, 16, 1398, 32, 200, "LPDDR5"},
    {"apple-m2-max-38c", 1, 38, 1398, 96, 400, "LPDDR5"},
    {"apple-m2-max-30c", 1, 30, 1398, 64, 400, "LPDDR5"},
    {"apple-m2-ultra-76c", 1, 76, 1398, 192, 800, "LPDDR5"},
    {"apple-m2-ultra-60c", 1, 60, 1398, 192, 800, "LPDDR5"},
    {"apple-m3-max-40c", 1, 40, 1398, 128, 400, "LPDDR5"},
    {"apple-m4-max-40c", 1, 40, 1678, 128, 546, "LPDDR5X"},
    {"apple-m3-8c", 1, 8, 1398, 24, 100, "LPDDR5"},
    {"apple-m3-10c", 1, 10, 1398, 24, 100, "LPDDR5"},
    {"apple-m3-pro-14c", 1, 14, 1398, 36, 150, "LPDDR5"},
    {"apple-m3-pro-18c", 1, 18, 1398, 36, 150, "LPDDR5"},
    {"apple-m3-max-30c", 1, 30, 1398, 96, 300, "LPDDR5"},
    {"apple-m3-ultra-60c", 1, 60, 1398, 256, 819, "LPDDR5"},
    {"apple-m3-ultra-80c", 1, 80, 1398, 512, 819, "LPDDR5"},
    {"apple-m4-10c", 1, 10, 1470, 32, 120, "LPDDR5X"},
    {"apple-m4-pro-16c", 1, 16, 1470, 64, 273, "LPDDR5X"},
    {"apple-m4-pro-20c", 1, 20, 1470, 64, 273, "LPDDR5X"},
    {"apple-m4-max-32c", 1, 32, 1678, 36, 410, "LPDDR5X"},
    {"nvidia-jetson-orin-nano-8gb", 0, 8, 625, 8, 68, "LPDDR5"},
    {"nvidia-jetson-orin-nano-8gb-super", 0, 8, 1020, 8, 102, "LPDDR5"},
    {"nvidia-jetson-nano-4gb", 0, 1, 921.6, 4, 25.6, "LPDDR4"},
};

static void check_chip(const struct published *p)
{
    char path[256];
    snprintf(path, sizeof path, "configs/%s.yaml", p->name);
    struct hw_config h;
    int rc = tu_load_cfg(path, &h);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0) {
        fprintf(stderr, "  (config %s did not load)\n", path);
        return;
    }
    CHECK(strcmp(h.name, p->name) == 0);
    CHECK(strcmp(h.family, "gpu") == 0);
    CHECK(strcmp(h.level[h.lv_dram].type, p->dram_type) == 0);
    CHECK_EQ_INT(h.units, p->cores);
    CHECK_NEAR_REL(h.clock_hz, p->clock_mhz * 1e6, 1e-9);

    /* Published capacity and bandwidth, within 1%. */
    CHECK_NEAR_REL((double)h.level[h.lv_dram].capacity_bytes, p->cap_gb * 1e9, 0.01);
    CHECK_NEAR_REL(h.level[h.lv_dram].bw_bytes_per_s, p->bw_gbps * 1e9, 0.01);

    /* Invariants of a usable config. */
    CHECK(h.lv_peer < 0 || strcmp(h.level[h.lv_peer].name, "ultrafusion") == 0); /* M2 Max: the die-to-die port an M2 Ultra joins */
    CHECK(h.level[h.lv_host].bw_bytes_per_s > 0);
    CHECK(h.level[h.lv_cache[0]].capacity_bytes > 0);
    CHECK(h.level[h.lv_cache[0]].bw_bytes_per_s > h.level[h.lv_dram].bw_bytes_per_s);
    CHECK(h.level[h.lv_cache[0]].latency_ps < h.level[h.lv_dram].latency_ps);
    CHECK(h.level[h.lv_dram].eff_loaded_latency_ps >= h.level[h.lv_dram].latency_ps);
    CHECK(h.eff_matrix_pipe > 0 && h.eff_matrix_pipe <= 1);
    CHECK(h.eff_vector_pipe > 0 && h.eff_vector_pipe <= 1);
    CHECK(h.level[h.lv_dram].eff_bw > 0 && h.level[h.lv_dram].eff_bw <= 1);
    /* The L2 port of all units together must be able to carry the DRAM
     * stream, or the model would cap DRAM-bound kernels below the data sheet. */
    CHECK((double)h.units * h.level[h.lv_cache[0]].port_bytes_per_cycle_per_unit * h.clock_hz >
          h.level[h.lv_dram].bw_bytes_per_s);
    CHECK(cfg_vector_peak_flops(&h, DT_FP32) > 0);
    CHECK(cfg_matrix_peak_flops(&h, DT_FP16) > 0);

    if (p->apple) {
        /* Apple GPU core: 128 FP32 ALUs, FMA = 2 -> 256 FLOP/cycle. */
        double want = (double)p->cores * 256.0 * p->clock_mhz * 1e6;
        CHECK_NEAR_REL(cfg_vector_peak_flops(&h, DT_FP32), want, 1e-9);
        CHECK_NEAR_REL(cfg_vector_peak_flops(&h, DT_FP16), want, 1e-9);
        /* No tensor cores: simdgroup_matrix runs at the ALU rate. */
        CHECK_NEAR_REL(cfg_matrix_peak_flops(&h, DT_FP16), want, 1e-9);
        CHECK(cfg_matrix_peak_flops(&h, DT_FP16) <= cfg_vector_peak_flops(&h, DT_FP16));
        CHECK(cfg_vector_peak_flops(&h, DT_FP64) == 0);
        CHECK(h.launch_overhead_ps == 5000000);
        CHECK_EQ_INT(h.level[h.lv_smem].capacity_bytes, 32 * 1024);
    } else {
        CHECK(h.launch_overhead_ps == 4000000);
    }
}

/* Figures quoted by the vendors that the configs must reproduce. */
static void test_quoted_peaks(void)
{
    struct hw_config h;

    /* Apple FP32 TFLOPS as listed by philipturner/metal-benchmarks. */
    CHECK_EQ_INT(tu_load_cfg("configs/apple-m1-8c.yaml", &h), 0);
    CHECK_NEAR_REL(cfg_vector_peak_flops(&h, DT_FP32), 2617e9, 1e-3);
    CHECK_EQ_INT(tu_load_cfg("configs/apple-m1-max-32c.yaml", &h), 0);
    CHECK_NEAR_REL(cfg_vector_peak_flops(&h, DT_FP32), 10617e9, 1e-3);
    CHECK_EQ_INT(tu_load_cfg("configs/apple-m2-max-38c.yaml", &h), 0);
    CHECK_NEAR_REL(cfg_vector_peak_flops(&h, DT_FP32), 13600e9, 1e-3);
    CHECK(cfg_matrix_peak_flops(&h, DT_BF16) == 0); /* bf16 emulated on M1/M2 */
    CHECK_EQ_INT(tu_load_cfg("configs/apple-m3-max-40c.yaml", &h), 0);
    CHECK(cfg_matrix_peak_flops(&h, DT_BF16) > 0);  /* native bf16 from M3 on */

    /* Apple FP32 TFLOPS as listed by hmc-tech.com (two decimals: within
     * 0.2%; third-party figures the M3/M4 configs derive their clocks from). */
    static const struct {
        const char *path;
        double tflops;
    } hmc[] = {
        {"configs/apple-m3-8c.yaml", 2.86},        {"configs/apple-m3-10c.yaml", 3.58},
        {"configs/apple-m3-pro-14c.yaml", 5.01},   {"configs/apple-m3-pro-18c.yaml", 6.44},
        {"configs/apple-m3-max-30c.yaml", 10.74},  {"configs/apple-m3-max-40c.yaml", 14.32},
        {"configs/apple-m3-ultra-60c.yaml", 21.47}, {"configs/apple-m4-10c.yaml", 3.76},
        {"configs/apple-m4-pro-16c.yaml", 6.02},   {"configs/apple-m4-pro-20c.yaml", 7.53},
        {"configs/apple-m4-max-32c.yaml", 13.74},
    };
    for (size_t i = 0; i < sizeof hmc / sizeof hmc[0]; i++) {
        CHECK_EQ_INT(tu_load_cfg(hmc[i].path, &h), 0);
        CHECK_NEAR_REL(cfg_vector_peak_flops(&h, DT_FP32), hmc[i].tflops * 1e12, 2e-3);
        CHECK(cfg_matrix_peak_flops(&h, DT_BF16) > 0); /* native bf16 from M3 on */
    }

    /* Orin Nano: 40 / 67 INT8 TOPS with 2:4 sparsity = 2 x the dense rate. */
    CHECK_EQ_INT(tu_load_cfg("configs/nvidia-jetson-orin-nano-8gb.yaml", &h), 0);
    CHECK_NEAR_REL(2 * cfg_matrix_peak_flops(&h, DT_INT8), 40e12, 0.03);
    CHECK_NEAR_REL(cfg_matrix_peak_flops(&h, DT_FP16), 10e12, 0.03);
    CHECK_EQ_INT(h.level[h.lv_cache[0]].capacity_bytes, 2ULL * 1048576);
    CHECK_EQ_INT(tu_load_cfg("configs/nvidia-jetson-orin-nano-8gb-super.yaml", &h), 0);
    CHECK_NEAR_REL(2 * cfg_matrix_peak_flops(&h, DT_INT8), 67e12, 0.03);

    /* Jetson Nano: 472 GFLOPS FP16, no tensor cores. */
    CHECK_EQ_INT(tu_load_cfg("configs/nvidia-jetson-nano-4gb.yaml", &h), 0);
    CHECK_NEAR_REL(cfg_vector_peak_flops(&h, DT_FP16), 471.6e9, 0.01);
    CHECK(cfg_matrix_peak_flops(&h, DT_INT8) == 0);
    CHECK(cfg_matrix_peak_flops(&h, DT_BF16) == 0);
}

/* Capacity ordering the brief asks for: the 128 GB M4 Max and the 24 GB
 * RTX 4090 (an existing config). */
static void test_capacities(void)
{
    struct hw_config h;
    CHECK_EQ_INT(tu_load_cfg("configs/apple-m4-max-40c.yaml", &h), 0);
    CHECK((double)h.level[h.lv_dram].capacity_bytes >= 128e9);
    CHECK_EQ_INT(tu_load_cfg("configs/nvidia-rtx-4090.yaml", &h), 0);
    CHECK_EQ_INT(h.level[h.lv_dram].capacity_bytes, 24000000000ULL);

    /* Bins: the 60-core M3 Ultra tops out at 256 GB (512 GB needs the 80-core
     * bin); the 30-core M3 Max and 32-core M4 Max have a 384-bit bus (3/4 of
     * the 40-core bin's channels and about 3/4 of its bandwidth). */
    struct hw_config lo;
    CHECK_EQ_INT(tu_load_cfg("configs/apple-m3-ultra-60c.yaml", &lo), 0);
    CHECK_EQ_INT(tu_load_cfg("configs/apple-m3-ultra-80c.yaml", &h), 0);
    CHECK(lo.level[lo.lv_dram].capacity_bytes < h.level[h.lv_dram].capacity_bytes);
    CHECK_NEAR_REL(lo.level[lo.lv_dram].bw_bytes_per_s, h.level[h.lv_dram].bw_bytes_per_s, 1e-9);
    CHECK_EQ_INT(tu_load_cfg("configs/apple-m3-max-30c.yaml", &lo), 0);
    CHECK_EQ_INT(tu_load_cfg("configs/apple-m3-max-40c.yaml", &h), 0);
    CHECK_NEAR_REL(lo.level[lo.lv_dram].bw_bytes_per_s * 4, h.level[h.lv_dram].bw_bytes_per_s * 3, 0.01);
    CHECK_EQ_INT(tu_load_cfg("configs/apple-m4-max-32c.yaml", &lo), 0);
    CHECK_EQ_INT(tu_load_cfg("configs/apple-m4-max-40c.yaml", &h), 0);
    CHECK_NEAR_REL(lo.level[lo.lv_dram].bw_bytes_per_s * 4, h.level[h.lv_dram].bw_bytes_per_s * 3, 0.01);
    CHECK(lo.level[lo.lv_dram].capacity_bytes < h.level[h.lv_dram].capacity_bytes);
}

int main(void)
{
    for (size_t i = 0; i < sizeof chips / sizeof chips[0]; i++)
        check_chip(&chips[i]);
    test_quoted_peaks();
    test_capacities();
    TEST_MAIN_END();
}
