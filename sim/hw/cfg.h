/* cfg.h: hardware configuration, compiled from YAML into an immutable struct.
 *
 * cfg_load() reads one YAML file (schema: configs/README.md), checks every
 * key and value up front and fills a struct hw_config.  Models only ever see
 * a const struct hw_config *.  Unknown keys, missing required keys, wrong
 * types and out-of-range values are errors reported as
 * "file:line: section.key: message".  No globals: a config is plain data
 * owned by the caller (it holds no pointers, so it can be copied freely).
 */
#ifndef STRATA_CFG_H
#define STRATA_CFG_H

#include <stdint.h>

#include "diag.h"
#include "dtype.h"

struct hw_config {
    char name[64];          /* chip name, e.g. "nvidia-h100-sxm" */
    char family[32];        /* model registry key, e.g. "gpu" */
    char path[512];         /* file it was loaded from */

    /* clock */
    double clock_hz;        /* compute clock used for peak rates, Hz */

    /* compute units (SMs on a GPU) */
    uint32_t units;                             /* number of compute units */
    double matrix_flops_per_cycle[DT_COUNT];    /* dense matrix-pipe FLOP/cycle/unit; 0 = unsupported */
    double vector_flops_per_cycle[DT_COUNT];    /* vector-pipe FLOP/cycle/unit (FMA = 2); 0 = unsupported */
    uint32_t max_threads_per_unit;              /* resident threads per unit */
    /* the matrix pipe of a unit is a systolic array of sa_rows x sa_cols
     * PEs, weight stationary (TPU MXU, NPU MAC array); 0 = not systolic
     * (a GPU tensor core: no fold or fill cost) */
    uint32_t sa_rows, sa_cols;
    uint32_t max_ctas_per_unit;                 /* resident thread blocks per unit */

    /* per-unit storage */
    uint64_t regfile_bytes_per_unit;            /* register file, bytes per unit */
    uint64_t smem_bytes_per_unit;               /* shared memory usable by one unit, bytes */
    double smem_bytes_per_cycle_per_unit;       /* shared-memory bandwidth, bytes/cycle/unit */

    /* L2 */
    uint64_t l2_bytes;                          /* capacity, bytes */
    double l2_bw_bytes_per_s;                   /* aggregate read bandwidth, bytes/s */
    uint64_t l2_latency_ps;                     /* load-to-use latency of an L2 hit, ps */
    double l2_port_bytes_per_cycle_per_unit;    /* L2 -> unit port width, bytes/cycle */

    /* DRAM (HBM, GDDR, LPDDR) */
    char dram_type[32];                         /* "HBM3", "GDDR6X", ... (informational) */
    uint64_t dram_bytes;                        /* capacity, bytes */
    double dram_bw_bytes_per_s;                 /* peak bandwidth (spec sheet), bytes/s */
    uint64_t dram_latency_ps;                   /* unloaded load-to-use latency, ps */
    uint32_t dram_channels;                     /* memory controllers / channels */
    int dram_unified;                           /* one memory pool shared by every device of the run
                                                   (an SoC's CPU, GPU and NPU), so they contend */

    /* host link */
    double pcie_bw_bytes_per_s;                 /* per direction, bytes/s */
    uint64_t pcie_latency_ps;                   /* one-way latency of a transfer, ps */

    /* device-to-device link (0 links = none) */
    uint32_t nvlink_links;                      /* number of links */
    double nvlink_bw_bytes_per_s_per_link;      /* per link per direction, bytes/s */
    uint64_t nvlink_latency_ps;                 /* one-way latency, ps */

    /* software */
    uint64_t launch_overhead_ps;                /* GPU front-end cost per kernel launch, ps */

    /* calibrated efficiency parameters (see each config for what they were fitted to) */
    double eff_matrix_pipe;                     /* achievable fraction of matrix peak, 0..1 */
    double eff_vector_pipe;                     /* achievable fraction of vector peak, 0..1 */
    double eff_dram_bw;                         /* achievable fraction of DRAM peak (streaming writes), 0..1 */
    double eff_dram_rw_penalty;                 /* bandwidth lost at a 50/50 read/write mix, 0..1 */
    uint64_t eff_dram_loaded_latency_ps;        /* load latency under full load, ps */
    double eff_inflight_bytes_per_unit;         /* max bytes of loads one unit keeps in flight */
};

/* Load and validate path into *out.  Returns 0, or -1 with *d filled. */
int cfg_load(const char *path, struct hw_config *out, struct diag *d);

/* Peak rates derived from the config. */
double cfg_matrix_peak_flops(const struct hw_config *c, enum dtype t); /* FLOP/s, 0 if unsupported */
double cfg_vector_peak_flops(const struct hw_config *c, enum dtype t); /* FLOP/s, 0 if unsupported */
double cfg_smem_bw(const struct hw_config *c);                          /* bytes/s, all units */

#endif
