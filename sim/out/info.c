/* info.c: see info.h. */
#include "info.h"
#include "system.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "jsonout.h"
#include "numfmt.h"

void info_derive(const struct hw_config *c, struct info_out *o)
{
    memset(o, 0, sizeof *o);
    for (unsigned t = 0; t < DT_COUNT; t++) {
        o->matrix_flops[t] = cfg_matrix_peak_flops(c, (enum dtype)t);
        o->sparse_flops[t] = cfg_sparse_peak_flops(c, (enum dtype)t);
        o->vector_flops[t] = cfg_vector_peak_flops(c, (enum dtype)t);
    }
    for (unsigned l = 0; l < c->nlevels; l++) {
        o->bw[l] = c->level[l].bw_bytes_per_s;
        o->bw_achievable[l] = level_rate(&c->level[l]);
    }
    for (unsigned t = 0; t < DT_COUNT; t++)
        for (unsigned l = 0; l < c->nlevels; l++)
            o->ridge[t][l] = o->bw[l] > 0 ? o->matrix_flops[t] / o->bw[l] : 0;
}

void info_print(const struct hw_config *c, const struct info_out *o, FILE *f)
{
    char b1[32], b2[32], bs[32];
    fprintf(f, "%s (family %s, %s)\n", cfg_label(c), c->family, c->path);
    fprintf(f, "  %u compute units at %.0f MHz\n", c->units, c->clock_hz / 1e6);
    int sparse = 0;
    for (unsigned t = 0; t < DT_COUNT; t++)
        sparse |= o->sparse_flops[t] > 0;
    fprintf(f, "\n  peak FLOP/s      matrix      vector%s\n", sparse ? "     2:4 sparse" : "");
    for (unsigned t = 0; t < DT_COUNT; t++) {
        if (o->matrix_flops[t] <= 0 && o->vector_flops[t] <= 0)
            continue;
        numfmt_si(b1, sizeof b1, o->matrix_flops[t], "FLOP/s");
        numfmt_si(b2, sizeof b2, o->vector_flops[t], "FLOP/s");
        numfmt_si(bs, sizeof bs, o->sparse_flops[t], "FLOP/s");
        fprintf(f, "  %-10s %14s %14s", dtype_name((enum dtype)t),
                o->matrix_flops[t] > 0 ? b1 : "-", o->vector_flops[t] > 0 ? b2 : "-");
        if (sparse)
            fprintf(f, " %14s", o->sparse_flops[t] > 0 ? bs : "-");
        fputc('\n', f);
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
    fprintf(f, "\n  level          kind        scope          capacity   bandwidth    achievable"
               "    latency  ridge (%s FLOP/byte)\n", dtype_name(head));
    for (unsigned l = 0; l < c->nlevels; l++) {
        const struct hw_level *L = &c->level[l];
        char b3[32], b4[48], b5[32];
        if (L->kind == LK_LINK)
            snprintf(b3, sizeof b3, "%u port%s", L->instances, L->instances == 1 ? "" : "s");
        else if (L->kind == LK_DECODER)     /* a rate, no capacity: its area instead */
            snprintf(b3, sizeof b3, "%.3g mm^2", L->area_mm2);
        else
            numfmt_si(b3, sizeof b3, (double)L->capacity_bytes, "B");
        if (L->instances > 1 && L->kind != LK_LINK)
            snprintf(b4, sizeof b4, "%u x %s", L->instances, b3);
        else
            snprintf(b4, sizeof b4, "%s", b3);
        snprintf(b5, sizeof b5, "%s", level_scope_name(L->scope));
        if (L->scope == LS_GROUP)
            snprintf(b5, sizeof b5, "group of %u", L->units_per_group);
        numfmt_si(b1, sizeof b1, o->bw[l], "B/s");
        numfmt_si(b2, sizeof b2, o->bw_achievable[l], "B/s");
        numfmt_time(b3, sizeof b3, (double)L->latency_ps * 1e-12);
        fprintf(f, "  %-14s %-11s %-12s %12s %11s  %11s  %9s  ", L->name, level_kind_name(L->kind),
                b5, b4, o->bw[l] > 0 ? b1 : "-", o->bw[l] > 0 ? b2 : "-",
                L->latency_ps > 0 ? b3 : "-");
        if (o->bw[l] > 0)
            fprintf(f, "%10.1f\n", o->ridge[head][l]);
        else
            fprintf(f, "%10s\n", "-");
    }
    const struct hw_level *D = cfg_dram(c);
    fprintf(f, "\n  %s%s%s; launch overhead %.2f us\n", D->type[0] ? D->type : "DRAM",
            D->unified ? ", unified (shared by every device of a run)" : "",
            c->lv_peer >= 0 ? "" : "; no peer link", (double)c->launch_overhead_ps * 1e-6);
    if (c->has_power) {     /* docs/energy.md */
        double u = (double)c->units * c->clock_hz * 1e-12;
        fprintf(f, "  power: idle %.0f W", c->idle_w);
        if (c->power_limit_w > 0)
            fprintf(f, ", limit %.0f W", c->power_limit_w);
        fprintf(f, "; at full rate the matrix pipe draws %.0f W, the vector pipe %.0f W\n",
                u * c->matrix_pj_per_cycle, u * c->vector_pj_per_cycle);
        fprintf(f, "  energy per byte:");
        for (uint32_t l = 0; l < c->nlevels; l++)
            if (c->level[l].energy_pj_per_byte > 0)
                fprintf(f, " %s %.1f pJ", c->level[l].name, c->level[l].energy_pj_per_byte);
        fprintf(f, "\n");
    }
}

void *info_json_tree(const struct hw_config *c, const struct info_out *o)
{
    cJSON *root = cJSON_CreateObject();
    jout_add_num(root, "strata_info", REPORT_FORMAT);
    cJSON_AddStringToObject(root, "name", cfg_label(c));
    cJSON_AddStringToObject(root, "family", c->family);
    cJSON_AddStringToObject(root, "config", c->path);
    jout_add_num(root, "units", c->units);
    jout_add_num(root, "clock_hz", c->clock_hz);
    cJSON *mp = cJSON_AddObjectToObject(root, "matrix_peak_flops");
    cJSON *vp = cJSON_AddObjectToObject(root, "vector_peak_flops");
    cJSON *sp = cJSON_AddObjectToObject(root, "sparse_matrix_peak_flops");
    cJSON *rp = cJSON_AddObjectToObject(root, "ridge_flop_per_byte");
    for (unsigned t = 0; t < DT_COUNT; t++) {
        const char *n = dtype_name((enum dtype)t);
        if (o->sparse_flops[t] > 0)
            jout_add_num(sp, n, o->sparse_flops[t]);
        if (o->matrix_flops[t] > 0) {
            jout_add_num(mp, n, o->matrix_flops[t]);
            cJSON *r = cJSON_AddObjectToObject(rp, n);
            for (unsigned l = 0; l < c->nlevels; l++)
                if (o->bw[l] > 0)
                    jout_add_num(r, c->level[l].name, o->ridge[t][l]);
        }
        if (o->vector_flops[t] > 0)
            jout_add_num(vp, n, o->vector_flops[t]);
    }
    cJSON_AddItemToObject(root, "bandwidth_bytes_per_s", info_json_levels(c, o->bw, 1.0));
    cJSON_AddItemToObject(root, "achievable_bandwidth_bytes_per_s", info_json_levels(c, o->bw_achievable, 1.0));
    /* the memory levels as the config lists them, innermost first */
    cJSON *lv = cJSON_AddArrayToObject(root, "levels");
    for (unsigned l = 0; l < c->nlevels; l++) {
        const struct hw_level *L = &c->level[l];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", L->name);
        cJSON_AddStringToObject(j, "kind", level_kind_name(L->kind));
        cJSON_AddStringToObject(j, "scope", level_scope_name(L->scope));
        jout_add_num(j, "instances", L->instances);
        jout_add_num(j, "capacity_bytes", (double)L->capacity_bytes);
        jout_add_num(j, "bandwidth_bytes_per_s", L->bw_bytes_per_s);
        jout_add_num(j, "latency_s", (double)L->latency_ps * 1e-12);
        if (L->energy_pj_per_byte > 0)
            jout_add_num(j, "energy_J_per_byte", L->energy_pj_per_byte * 1e-12);
        cJSON_AddItemToArray(lv, j);
    }
    jout_add_num(root, "l2_bytes", (double)cfg_first_cache(c)->capacity_bytes);
    jout_add_num(root, "dram_bytes", (double)cfg_dram(c)->capacity_bytes);
    jout_add_num(root, "launch_overhead_s", (double)c->launch_overhead_ps * 1e-12);
    if (c->has_power) {
        cJSON *pw = cJSON_AddObjectToObject(root, "power");
        jout_add_num(pw, "idle_W", c->idle_w);
        if (c->power_limit_w > 0)
            jout_add_num(pw, "limit_W", c->power_limit_w);
        jout_add_num(pw, "matrix_pipe_J_per_cycle", c->matrix_pj_per_cycle * 1e-12);
        jout_add_num(pw, "vector_pipe_J_per_cycle", c->vector_pj_per_cycle * 1e-12);
    }
    return root;
}

int info_json(const struct hw_config *c, const struct info_out *o, const char *path, struct diag *d)
{
    cJSON *root = info_json_tree(c, o);
    int rc = jout_write(root, path, d);
    cJSON_Delete(root);
    return rc;
}

void info_print_system(const struct hw_system *s, FILE *f)
{
    char b1[32];
    fprintf(f, "\nsystem %s (%s): %u devices of %s, %u other nodes, %u links\n", s->name, s->path,
            s->ndevices, cfg_label(&s->chip), s->nnodes - s->ndevices, s->nlinks);
    fprintf(f, "  devices:");
    for (uint32_t i = 0; i < s->ndevices; i++)
        fprintf(f, " %s", s->nodes[i].name);
    fprintf(f, "\n");
    for (uint32_t i = s->ndevices; i < s->nnodes; i++) {
        const struct sys_node *n = &s->nodes[i];
        numfmt_si(b1, sizeof b1, n->bw_bytes_per_s, "B/s");
        fprintf(f, "  %-6s %-12s %s\n", sys_node_kind_name(n->kind), n->name,
                n->bw_bytes_per_s > 0 ? b1 : "(does not limit)");
    }
    if (s->unified_bw_bytes_per_s > 0) {
        numfmt_si(b1, sizeof b1, s->unified_bw_bytes_per_s, "B/s");
        fprintf(f, "  unified memory shared by all devices: %s\n", b1);
    }
    fprintf(f, "  %-12s %-10s %-10s %-10s %14s %10s\n", "link", "from", "to", "level",
            "per direction", "latency");
    for (uint32_t k = 0; k < s->nlinks; k++) {
        const struct sys_link *l = &s->links[k];
        char b2[32];
        numfmt_si(b1, sizeof b1, l->bw_bytes_per_s, "B/s");
        numfmt_time(b2, sizeof b2, (double)l->latency_ps * 1e-12);
        fprintf(f, "  %-12s %-10s %-10s %-10s %14s %10s%s\n", l->name, s->nodes[l->a].name,
                s->nodes[l->b].name, s->chip.level[l->level].name, b1, b2,
                l->forward ? "  forwards" : "");
    }
}

void *info_json_levels(const struct hw_config *c, const double *v, double scale)
{
    cJSON *o = cJSON_CreateObject();
    for (unsigned l = 0; l < c->nlevels; l++)
        jout_add_num(o, c->level[l].name, v[l] * scale);
    return o;
}
