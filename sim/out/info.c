/* info.c: see info.h. */
#include "info.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "jsonout.h"
#include "report.h"

void info_derive(const struct hw_config *c, struct info_out *o)
{
    memset(o, 0, sizeof *o);
    for (unsigned t = 0; t < DT_COUNT; t++) {
        o->matrix_flops[t] = cfg_matrix_peak_flops(c, (enum dtype)t);
        o->vector_flops[t] = cfg_vector_peak_flops(c, (enum dtype)t);
    }
    o->bw[LVL_SMEM] = cfg_smem_bw(c);
    o->bw[LVL_L2] = c->l2_bw_bytes_per_s;
    o->bw[LVL_DRAM] = c->dram_bw_bytes_per_s;
    o->bw[LVL_PCIE] = c->pcie_bw_bytes_per_s;
    o->bw[LVL_NVLINK] = c->nvlink_links * c->nvlink_bw_bytes_per_s_per_link;
    memcpy(o->bw_achievable, o->bw, sizeof o->bw);
    o->bw_achievable[LVL_DRAM] = c->dram_bw_bytes_per_s * c->eff_dram_bw;
    for (unsigned t = 0; t < DT_COUNT; t++)
        for (unsigned l = 0; l < LVL_COUNT; l++)
            o->ridge[t][l] = o->bw[l] > 0 ? o->matrix_flops[t] / o->bw[l] : 0;
}

void info_print(const struct hw_config *c, const struct info_out *o, FILE *f)
{
    char b1[32], b2[32];
    fprintf(f, "%s (family %s, %s)\n", c->name, c->family, c->path);
    fprintf(f, "  %u compute units at %.0f MHz\n", c->units, c->clock_hz / 1e6);
    fprintf(f, "\n  peak FLOP/s      matrix      vector\n");
    for (unsigned t = 0; t < DT_COUNT; t++) {
        if (o->matrix_flops[t] <= 0 && o->vector_flops[t] <= 0)
            continue;
        report_fmt_si(b1, sizeof b1, o->matrix_flops[t], "FLOP/s");
        report_fmt_si(b2, sizeof b2, o->vector_flops[t], "FLOP/s");
        fprintf(f, "  %-10s %14s %14s\n", dtype_name((enum dtype)t),
                o->matrix_flops[t] > 0 ? b1 : "-", o->vector_flops[t] > 0 ? b2 : "-");
    }
    /* the ridge is shown for the widest-used training/inference type the
     * matrix pipe has (an int8-only NPU: int8) */
    static const enum dtype pref[] = {DT_BF16, DT_FP16, DT_INT8, DT_FP32};
    enum dtype head = DT_FP16;
    for (size_t i = 0; i < sizeof pref / sizeof pref[0]; i++)
        if (o->matrix_flops[pref[i]] > 0) {
            head = pref[i];
            break;
        }
    fprintf(f, "\n  level     bandwidth     achievable    ridge (%s FLOP/byte)\n", dtype_name(head));
    for (unsigned l = 0; l < LVL_COUNT; l++) {
        if (o->bw[l] <= 0)
            continue;
        report_fmt_si(b1, sizeof b1, o->bw[l], "B/s");
        report_fmt_si(b2, sizeof b2, o->bw_achievable[l], "B/s");
        fprintf(f, "  %-8s %12s  %12s  %10.1f\n", level_name((enum level)l), b1, b2,
                o->ridge[head][l]);
    }
    report_fmt_si(b1, sizeof b1, (double)c->l2_bytes, "B");
    report_fmt_si(b2, sizeof b2, (double)c->dram_bytes, "B");
    fprintf(f, "\n  capacity: L2 %s, %s %s; launch overhead %.2f us\n", b1,
            c->dram_type[0] ? c->dram_type : "DRAM", b2, (double)c->launch_overhead_ps * 1e-6);
}

void *info_json_tree(const struct hw_config *c, const struct info_out *o)
{
    cJSON *root = cJSON_CreateObject();
    jout_add_num(root, "strata_info", REPORT_FORMAT);
    cJSON_AddStringToObject(root, "name", c->name);
    cJSON_AddStringToObject(root, "family", c->family);
    cJSON_AddStringToObject(root, "config", c->path);
    jout_add_num(root, "units", c->units);
    jout_add_num(root, "clock_hz", c->clock_hz);
    cJSON *mp = cJSON_AddObjectToObject(root, "matrix_peak_flops");
    cJSON *vp = cJSON_AddObjectToObject(root, "vector_peak_flops");
    cJSON *rp = cJSON_AddObjectToObject(root, "ridge_flop_per_byte");
    for (unsigned t = 0; t < DT_COUNT; t++) {
        const char *n = dtype_name((enum dtype)t);
        if (o->matrix_flops[t] > 0) {
            jout_add_num(mp, n, o->matrix_flops[t]);
            cJSON *r = cJSON_AddObjectToObject(rp, n);
            for (unsigned l = 0; l < LVL_COUNT; l++)
                if (o->bw[l] > 0)
                    jout_add_num(r, level_name((enum level)l), o->ridge[t][l]);
        }
        if (o->vector_flops[t] > 0)
            jout_add_num(vp, n, o->vector_flops[t]);
    }
    cJSON_AddItemToObject(root, "bandwidth_bytes_per_s", jout_levels(o->bw, 1.0));
    cJSON_AddItemToObject(root, "achievable_bandwidth_bytes_per_s", jout_levels(o->bw_achievable, 1.0));
    jout_add_num(root, "l2_bytes", (double)c->l2_bytes);
    jout_add_num(root, "dram_bytes", (double)c->dram_bytes);
    jout_add_num(root, "launch_overhead_s", (double)c->launch_overhead_ps * 1e-12);
    return root;
}

int info_json(const struct hw_config *c, const struct info_out *o, const char *path, struct diag *d)
{
    cJSON *root = info_json_tree(c, o);
    int rc = jout_write(root, path, d);
    cJSON_Delete(root);
    return rc;
}
