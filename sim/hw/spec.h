/* spec.h: a chip's data-sheet figures and its architecture's defaults, the
 * inputs of `strata new-chip` (configs/specs/README.md).
 *
 * Both files are YAML mappings whose leaves are {value: V, source: "..."}.
 * spec_load() reads a chip file and the family file its `architecture`
 * names (families/ARCH.yaml beside it), checks keys, types and ranges, and
 * keeps every value with its source and line.  spec_write_config() turns
 * them into a hardware config (configs/README.md) whose every line says
 * where its value came from.
 */
#ifndef STRATA_SPEC_H
#define STRATA_SPEC_H

#include <stdio.h>

#include "diag.h"
#include "dtype.h"

#define SPEC_SOURCE 400

/* One value and where it came from. */
struct spec_val {
    int present;
    double num;                 /* numbers */
    char str[96];               /* strings (name, type, kind) */
    char source[SPEC_SOURCE];
    int line;
};

/* Data-sheet dtype keys: fp4, fp6, fp8, int8, int4, fp16, bf16, tf32, fp32, fp64. */
#define SPEC_NDT 10

struct spec {
    char path[512], family_path[600];
    struct spec_val name, chip, vendor, architecture, process, tdp_W, units, boost_clock_MHz;
    struct spec_val idle_W;     /* board power with nothing running, W (optional; needs tdp_W) */
    struct spec_val dense[SPEC_NDT], sparse[SPEC_NDT], vector[SPEC_NDT];
    struct spec_val acc16[SPEC_NDT];    /* fp16_accumulate_TFLOPS: 16-bit GEMMs accumulating in 16
                                         * bits, where the sheet gives them apart (GeForce) */
    struct spec_val mem_type, mem_capacity_GB, mem_bandwidth_GBps;
    struct spec_val l2_MiB, llc_MiB, smem_per_unit_KiB;
    struct spec_val host_kind, host_gen, host_lanes, host_bandwidth_GBps;
    struct spec_val peer_kind, peer_links, peer_bandwidth_GBps;
    /* the family file */
    struct spec_val f_family, f_max_threads, f_max_ctas, f_registers_KiB, f_smem_KiB, f_smem_name,
        f_smem_bpc, f_sfu, f_cluster_mc, f_l2_MiB_per_unit, f_l2_bpc, f_l2_latency_ns, f_l2_port, f_llc_bpc,
        f_llc_latency_ns, f_dram_latency_ns, f_dram_frac, f_dram_rw, f_dram_loaded_ns,
        f_host_latency_ns, f_peer_latency_ns, f_kernel_overhead_ns, f_matrix_frac, f_vector_frac,
        f_inflight;
    unsigned npaths;
    char path_name[8][16];
    struct spec_val path_frac[8];
    struct spec_val f_vector_ratio[SPEC_NDT];
    /* the family's energy defaults (docs/energy.md 'Estimated power blocks'), all optional:
     * per-byte energies of the levels (pJ/B), the DRAM's the one of dram_energy_pJ_per_byte
     * whose key is the spec's memory.type (absent: f_dram_energy.present = 0 and
     * dram_energy_types lists the types the family has), the idle power as a share of
     * tdp_W, and the share of tdp_W - idle_W each pipe draws at its full rate */
    struct spec_val f_smem_energy, f_l2_energy, f_llc_energy, f_dram_energy;
    char dram_energy_types[160];
    struct spec_val f_idle_frac, f_matrix_share, f_vector_share;
};


/* Loads the spec at path and its architecture's family file: families/ARCH.yaml beside the
 * spec, else under each of the nfam folders fam_dirs (the installed
 * configs/specs/families: a spec written outside the tree), in order. */
int spec_load_in(const char *path, const char (*fam_dirs)[1100], int nfam, struct spec *s,
                 struct diag *d);
int spec_load(const char *path, struct spec *s, struct diag *d);
/* Writes the config to f.  Warnings (values outside the plausible range of
 * their kind, with the likely unit mistake) go to warn, the summary of what
 * was derived and guessed to summary (either may be NULL). */
void spec_write_config(const struct spec *s, FILE *f, FILE *warn, FILE *summary);

#endif
