/* chipcfg.c: a chip config's tree -> struct hw_config (chipcfg.h), against
 * the schema of configs/README.md.
 *
 * Section by section: unknown and duplicate keys first (in file order),
 * then each required key, its type and its range.  The first problem found
 * is reported through diag_set() and the fill stops; the caller keeps *h
 * only on success.
 */
#include "chipcfg.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

/* Mapping dtype-name -> FLOP/cycle/unit.  Missing dtypes stay 0. */
static int get_dtype_rates(struct yconf *c, int map, const char *section, const char *key,
                           double rates[DT_COUNT])
{
    char field[128], sub[176];
    yconf_field(field, sizeof field, section, key);
    int v = yconf_lookup(c, map, key);
    if (v < 0)
        return diag_set(c->d, DIAG_E_MISSING, c->path, yconf_map_line(c, map), field,
                        "required key is missing");
    if (c->nodes[v].kind != YCONF_MAPPING)
        return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[v].line, field,
                        "expected a mapping of dtype: FLOP/cycle/unit, got %s", yconf_kind_name(c, v));
    int seen_line[DT_COUNT] = {0};
    int any = 0;
    for (int k = c->nodes[v].first; k >= 0; k = yconf_next_key(c, k)) {
        const struct yconf_node *kn = &c->nodes[k];
        if (kn->kind != YCONF_SCALAR)
            return diag_set(c->d, DIAG_E_TYPE, c->path, kn->line, field,
                            "keys must be dtype names, got %s", yconf_kind_name(c, k));
        snprintf(sub, sizeof sub, "%s.%.40s", field, yconf_text(c, k));
        enum dtype t;
        if (strlen(yconf_text(c, k)) != kn->len || dtype_from_name(yconf_text(c, k), &t) != 0) {
            char list[256] = "";
            size_t used = 0;
            for (int i = 0; i < DT_COUNT && used < sizeof list; i++)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                         i ? ", " : "", dtype_name((enum dtype)i));
            return diag_set(c->d, DIAG_E_UNKNOWN_NAME, c->path, kn->line, sub,
                            "unknown dtype; known: %s", list);
        }
        if (seen_line[t])
            return diag_set(c->d, DIAG_E_DUPLICATE, c->path, kn->line, sub,
                            "duplicate key (first given on line %d)", seen_line[t]);
        seen_line[t] = kn->line;
        if (kn->next < 0 || yconf_number(c, kn->next, sub, YCONF_NONNEG, &rates[t]) != 0)
            return -1;
        if (rates[t] != 0 && !(rates[t] >= YCONF_MIN_POS && rates[t] <= YCONF_MAX_POS))
            return diag_set(c->d, DIAG_E_RANGE, c->path, c->nodes[kn->next].line, sub,
                            "must be 0 (no such pipe) or between %g and %g, got %.40s", YCONF_MIN_POS,
                            YCONF_MAX_POS, yconf_text(c, kn->next));
        if (rates[t] > 0)
            any = 1;
    }
    if (!any)
        return diag_set(c->d, DIAG_E_RANGE, c->path, c->nodes[v].line, field,
                        "at least one dtype must have a rate > 0");
    return 0;
}

static const char *const top_keys[] = {
    "name", "family", "clock_MHz", "compute", "threads", "systolic", "levels", "launch",
    "collectives", "efficiency", "power", NULL};
static const char *const power_keys[] = {"idle_W", "limit_W", "matrix_pipe_pJ_per_cycle",
                                         "vector_pipe_pJ_per_cycle",
                                         NULL};
static const char *const collectives_keys[] = {"channels", "channel_bandwidth_GBps",
                                               "call_overhead_us", "ll_bandwidth_GBps",
                                               "hop_latency_scale", "protocols",
                                               "nvls_efficiency", NULL};
static const char *const compute_keys[] = {
    "units", "matrix_flops_per_cycle_per_unit", "vector_flops_per_cycle_per_unit",
    "special_function_ops_per_cycle_per_unit", "matrix_paths",
    "sparse_matrix_flops_per_cycle_per_unit", "fp16_accumulate_matrix_flops_per_cycle_per_unit",
    "cluster_multicast_ctas", NULL};
static const char *const matrix_path_names[MP_COUNT] = {
#define MATRIX_PATH_NAME_(e, n) [e] = n,
    MATRIX_PATH_MAP(MATRIX_PATH_NAME_)
#undef MATRIX_PATH_NAME_
};
static const char *const threads_keys[] = {"max_threads_per_unit", "max_ctas_per_unit", NULL};
static const char *const systolic_keys[] = {"rows", "cols", "max_tiles_per_unit", "dataflow", NULL};
static const char *const launch_keys[] = {"kernel_overhead_ns", NULL};
static const char *const efficiency_keys[] = {
    "matrix_pipe_fraction", "vector_pipe_fraction", "inflight_bytes_per_unit", NULL};

/* A level's keys, per kind: what each kind of level is described by. */
static const char *const level_keys[LK_COUNT][16] = {
    [LK_REGISTERS] = {"name", "kind", "scope", "capacity_KiB", "capacity_MiB", NULL},
    [LK_SCRATCHPAD] = {"name", "kind", "scope", "capacity_KiB", "capacity_MiB",
                       "bandwidth_bytes_per_cycle", "bandwidth_GBps", "latency_ns",
                       "energy_pJ_per_byte", NULL},
    [LK_CACHE] = {"name", "kind", "scope", "units_per_group", "capacity_KiB", "capacity_MiB",
                  "capacity_GB", "capacity_GiB", "bandwidth_GBps", "bandwidth_bytes_per_cycle",
                  "latency_ns", "port_bytes_per_cycle_per_unit", "energy_pJ_per_byte", NULL},
    [LK_DECODER] = {"name", "kind", "scope", "bandwidth_bytes_per_cycle", "bandwidth_GBps",
                    "clock_MHz", "latency_ns", "energy_pJ_per_byte", "area_mm2", NULL},
    [LK_DRAM] = {"name", "kind", "scope", "type", "capacity_GB", "capacity_GiB", "bandwidth_GBps",
                 "latency_ns", "unified", "efficiency", "energy_pJ_per_byte", NULL},
    [LK_LINK] = {"name", "kind", "scope", "ports", "bandwidth_GBps", "latency_ns", "efficiency",
                 "energy_pJ_per_byte", NULL},
};
static const char *const dram_eff_keys[] = {
    "bandwidth_fraction", "rw_turnaround_penalty", "loaded_latency_ns", NULL};
static const char *const link_eff_keys[] = {"bandwidth_fraction", NULL};

/* Look up section name, check its keys.  Returns node, -1 error, -2 absent. */
static int open_section(struct yconf *c, int root, const char *name,
                        const char *const *keys, int required)
{
    int s = yconf_section(c, root, name, required);
    if (s >= 0 && yconf_check_keys(c, s, name, keys) != 0)
        return -1;
    return s;
}

/* The family block: how many tiles a unit holds at once.  A GPU says it in
 * threads and thread blocks (`threads`); a systolic chip in tiles
 * (`systolic`, with its array shape).  A GPU config may carry `systolic:
 * {rows, cols}` too, as a what-if (its tensor cores become arrays). */
static int fill_family_block(struct yconf *c, int root, struct hw_config *h)
{
    int gpu = strcmp(h->family, "gpu") == 0;
    int th = open_section(c, root, "threads", threads_keys, 0);
    int sy = open_section(c, root, "systolic", systolic_keys, 0);
    if (th == -1 || sy == -1)
        return -1;
    if (gpu) {
        if (th == -2)
            return diag_set(c->d, DIAG_E_MISSING, c->path, c->nodes[root].line, "threads",
                            "family gpu needs {max_threads_per_unit, max_ctas_per_unit}");
        if (yconf_get_u32(c, th, "threads", "max_threads_per_unit", &h->max_threads_per_unit) != 0 ||
            yconf_get_u32(c, th, "threads", "max_ctas_per_unit", &h->max_ctas_per_unit) != 0)
            return -1;
        if (sy >= 0 && yconf_lookup(c, sy, "max_tiles_per_unit") >= 0)
            return diag_set(c->d, DIAG_E_UNKNOWN_KEY, c->path,
                            c->nodes[yconf_lookup(c, sy, "max_tiles_per_unit")].line,
                            "systolic.max_tiles_per_unit",
                            "a gpu's threads block says how many tiles a unit holds");
    } else {
        if (th >= 0)
            return diag_set(c->d, DIAG_E_UNKNOWN_KEY, c->path, yconf_map_line(c, th), "threads",
                            "family %s has no threads; say systolic.max_tiles_per_unit",
                            h->family);
        if (sy == -2)
            return diag_set(c->d, DIAG_E_MISSING, c->path, c->nodes[root].line, "systolic",
                            "family %s needs the array shape {rows, cols, max_tiles_per_unit}",
                            h->family);
        if (yconf_get_u32(c, sy, "systolic", "max_tiles_per_unit", &h->max_ctas_per_unit) != 0)
            return -1;
        /* a tile is one 256-thread CTA of the tiled model */
        if (h->max_ctas_per_unit > 65536)
            return diag_set(c->d, DIAG_E_RANGE, c->path,
                            c->nodes[yconf_lookup(c, sy, "max_tiles_per_unit")].line,
                            "systolic.max_tiles_per_unit", "at most 65536, got %u",
                            h->max_ctas_per_unit);
        h->max_threads_per_unit = h->max_ctas_per_unit * 256u;
    }
    if (sy >= 0) {
        if (yconf_get_u32(c, sy, "systolic", "rows", &h->sa_rows) != 0 ||
            yconf_get_u32(c, sy, "systolic", "cols", &h->sa_cols) != 0)
            return -1;
        if (h->sa_rows > 65536 || h->sa_cols > 65536) {
            int rows = h->sa_rows > 65536;
            return diag_set(c->d, DIAG_E_RANGE, c->path,
                            c->nodes[yconf_lookup(c, sy, rows ? "rows" : "cols")].line,
                            rows ? "systolic.rows" : "systolic.cols", "at most 65536 PEs, got %u",
                            rows ? h->sa_rows : h->sa_cols);
        }
        /* systolic.dataflow (optional): ws, a TPU MXU's, unless the chip says os */
        char df[16] = "ws";
        if (yconf_get_string(c, sy, "systolic", "dataflow", 0, df, sizeof df) != 0)
            return -1;
        if (strcmp(df, "ws") != 0 && strcmp(df, "os") != 0)
            return diag_set(c->d, DIAG_E_RANGE, c->path,
                            c->nodes[yconf_lookup(c, sy, "dataflow")].line, "systolic.dataflow",
                            "'%s' is not a dataflow the tiled model runs (ws: weight "
                            "stationary, os: output stationary)", df);
        h->sa_os = strcmp(df, "os") == 0;
    }
    return 0;
}

/* compute.special_function_ops_per_cycle_per_unit and compute.matrix_paths
 * (both optional).  Without matrix_paths a systolic chip has its array and
 * a GPU mma.sync at the full rate (Ampere, Ada); Hopper lists wgmma and
 * what mma.sync reaches there, AMD chips mfma. */
static int fill_matrix_paths(struct yconf *c, int s, struct hw_config *h)
{
    double x;
    int rc = yconf_get_number(c, s, "compute", "special_function_ops_per_cycle_per_unit", YCONF_POS, 0, &x);
    if (rc < 0)
        return -1;
    if (rc == 0)
        h->sfu_ops_per_cycle = x;
    /* compute.cluster_multicast_ctas: whole CTAs, at most a Hopper cluster's 16 */
    rc = yconf_get_number(c, s, "compute", "cluster_multicast_ctas", YCONF_COUNT, 0, &x);
    if (rc < 0)
        return -1;
    if (rc == 0 && x > 16)
        return diag_set(c->d, DIAG_E_RANGE, c->path, c->nodes[yconf_lookup(c, s, "cluster_multicast_ctas")].line,
                        "compute.cluster_multicast_ctas",
                        "%g CTAs: a thread-block cluster holds at most 16", x);
    if (rc == 0)
        h->cluster_multicast_ctas = (uint32_t)x;
    int v = yconf_lookup(c, s, "matrix_paths");
    if (v < 0) {
        h->matrix_path_frac[h->sa_rows ? MP_SYSTOLIC : MP_MMA_SYNC] = 1.0;
        return 0;
    }
    if (c->nodes[v].kind != YCONF_MAPPING)
        return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[v].line, "compute.matrix_paths",
                        "expected a mapping of path: fraction of the matrix rate, got %s",
                        yconf_kind_name(c, v));
    int any = 0;
    for (int k = c->nodes[v].first; k >= 0; k = yconf_next_key(c, k)) {
        char field[96];
        snprintf(field, sizeof field, "compute.matrix_paths.%.40s", yconf_text(c, k));
        int p;
        for (p = 0; p < MP_COUNT; p++)
            if (yconf_key_eq(c, k, matrix_path_names[p]))
                break;
        if (p == MP_COUNT)
            return diag_set(c->d, DIAG_E_UNKNOWN_NAME, c->path, c->nodes[k].line, field,
                            "unknown path; known: mma_sync, wgmma, tcgen05, mfma, systolic");
        if (h->matrix_path_frac[p] > 0)
            return diag_set(c->d, DIAG_E_DUPLICATE, c->path, c->nodes[k].line, field,
                            "duplicate key");
        if (yconf_number(c, c->nodes[k].next, field, YCONF_FRAC, &h->matrix_path_frac[p]) != 0)
            return -1;
        any = 1;
    }
    if (!any)
        return diag_set(c->d, DIAG_E_RANGE, c->path, c->nodes[v].line, "compute.matrix_paths",
                        "list at least one path");
    return 0;
}

/* One of several alternative keys (capacity_KiB or capacity_MiB ...): the
 * index of the one given, -1 if none, -2 (error set) if more than one. */
static int one_of(struct yconf *c, int map, const char *section, const char *const *keys,
                  int n, int *value)
{
    int found = -1;
    char field[128];
    for (int i = 0; i < n; i++) {
        int v = yconf_lookup(c, map, keys[i]);
        if (v < 0)
            continue;
        if (found >= 0) {
            yconf_field(field, sizeof field, section, keys[i]);
            diag_set(c->d, DIAG_E_DUPLICATE, c->path, c->nodes[v].line, field,
                     "give one of %s and %s, not both", keys[found], keys[i]);
            return -2;
        }
        found = i;
        *value = v;
    }
    return found;
}

/* Names a level may not take: they are time categories of the reports. */
static int reserved_level_name(const char *s)
{
    static const char *const r[] = {"busy", "launch", "idle", "compute", "matrix", "vector"};
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
        if (strcmp(s, r[i]) == 0)
            return 1;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return 1;
    return 0;
}

/* A level's name and kind (sec becomes "levels.NAME"), and its keys
 * checked against its kind's. */
static int level_name_kind(struct yconf *c, int map, int idx, struct hw_level *L, char *sec,
                           size_t nsec)
{
    char word[24];
    snprintf(sec, nsec, "levels[%d]", idx);
    if (c->nodes[map].kind != YCONF_MAPPING)
        return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[map].line, sec,
                        "expected a mapping {name, kind, ...}, got %s", yconf_kind_name(c, map));
    if (yconf_get_string(c, map, sec, "name", 1, L->name, sizeof L->name) != 0)
        return -1;
    if (reserved_level_name(L->name))
        return diag_set(c->d, DIAG_E_RANGE, c->path, c->nodes[yconf_lookup(c, map, "name")].line,
                        "levels.name", "'%s': a level name is lower-case letters, digits and _, "
                        "and not busy, launch, idle, compute, matrix or vector", L->name);
    snprintf(sec, nsec, "levels.%s", L->name);
    snprintf(L->lat_label, sizeof L->lat_label, "%s latency", L->name);
    if (yconf_get_string(c, map, sec, "kind", 1, word, sizeof word) != 0)
        return -1;
    int k;
    for (k = 0; k < LK_COUNT; k++)
        if (strcmp(word, level_kind_name((enum level_kind)k)) == 0)
            break;
    if (k == LK_COUNT)
        return diag_set(c->d, DIAG_E_UNKNOWN_NAME, c->path, c->nodes[yconf_lookup(c, map, "kind")].line,
                        "levels.kind", "unknown kind '%s'; known: registers, scratchpad, cache, "
                        "decoder, dram, link", word);
    L->kind = (enum level_kind)k;
    return yconf_check_keys(c, map, sec, level_keys[L->kind]);
}

/* scope: registers and scratchpads belong to a unit, caches and DRAM
 * to the device unless said otherwise; a link must say where it goes */
static int level_scope(struct yconf *c, int map, const char *sec, const struct hw_config *h,
                       struct hw_level *L)
{
    char field[128], word[24];
    word[0] = '\0';
    if (yconf_get_string(c, map, sec, "scope", L->kind == LK_LINK, word, sizeof word) != 0)
        return -1;
    L->scope = L->kind <= LK_SCRATCHPAD ? LS_UNIT : LS_DEVICE;
    if (word[0] != '\0') {
        int sc;
        for (sc = 0; sc < LS_COUNT; sc++)
            if (strcmp(word, level_scope_name((enum level_scope)sc)) == 0)
                break;
        yconf_field(field, sizeof field, sec, "scope");
        int line = c->nodes[yconf_lookup(c, map, "scope")].line;
        if (sc == LS_COUNT)
            return diag_set(c->d, DIAG_E_UNKNOWN_NAME, c->path, line, field,
                            "unknown scope '%s'; known: unit, group, device, host, system", word);
        int ok = L->kind == LK_LINK ? (sc == LS_HOST || sc == LS_SYSTEM)
                 : L->kind == LK_CACHE ? (sc == LS_UNIT || sc == LS_GROUP || sc == LS_DEVICE)
                 : L->kind == LK_DRAM || L->kind == LK_DECODER ? sc == LS_DEVICE
                                      : sc == LS_UNIT;
        if (!ok)
            return diag_set(c->d, DIAG_E_RANGE, c->path, line, field,
                            "a %s level cannot have scope %s", level_kind_name(L->kind), word);
        L->scope = (enum level_scope)sc;
    }
    L->instances = L->scope == LS_UNIT ? h->units : 1;
    if (L->scope == LS_GROUP) {
        if (yconf_get_u32(c, map, sec, "units_per_group", &L->units_per_group) != 0)
            return -1;
        if (h->units % L->units_per_group != 0)
            return diag_set(c->d, DIAG_E_RANGE, c->path,
                            c->nodes[yconf_lookup(c, map, "units_per_group")].line,
                            "levels.units_per_group", "%u units do not split into groups of %u",
                            h->units, L->units_per_group);
        L->instances = h->units / L->units_per_group;
    } else if (yconf_lookup(c, map, "units_per_group") >= 0) {
        return diag_set(c->d, DIAG_E_RANGE, c->path,
                        c->nodes[yconf_lookup(c, map, "units_per_group")].line, "levels.units_per_group",
                        "only a level of scope group has groups");
    }
    return 0;
}

/* capacity, per instance (a link and a decoder have none) */
static int level_capacity(struct yconf *c, int map, const char *sec, struct hw_level *L)
{
    if (L->kind == LK_LINK || L->kind == LK_DECODER)
        return 0;
    static const char *const ck[] = {"capacity_KiB", "capacity_MiB", "capacity_GB",
                                     "capacity_GiB"};
    static const double cs[] = {1024.0, 1048576.0, 1e9, 1073741824.0};
    int v = -1, which = one_of(c, map, sec, ck, 4, &v);
    if (which == -2)
        return -1;
    if (which < 0)
        return diag_set(c->d, DIAG_E_MISSING, c->path, yconf_map_line(c, map), sec,
                        "required key capacity_KiB, capacity_MiB, capacity_GB or "
                        "capacity_GiB is missing");
    return yconf_get_scaled_u64(c, map, sec, ck[which], YCONF_POS, cs[which], &L->capacity_bytes);
}

/* The energy per byte (optional) and the bandwidth. */
static int level_bandwidth(struct yconf *c, int map, const char *sec, const struct hw_config *h,
                           struct hw_level *L)
{
    const double GB = 1e9;
    char field[128];
    double x;
    if (yconf_get_number(c, map, sec, "energy_pJ_per_byte", YCONF_NONNEG, 0, &L->energy_pj_per_byte) < 0)
        return -1;
    if (L->energy_pj_per_byte > 1e6) {
        yconf_field(field, sizeof field, sec, "energy_pJ_per_byte");
        return diag_set(c->d, DIAG_E_RANGE, c->path, c->nodes[yconf_lookup(c, map, "energy_pJ_per_byte")].line,
                        field, "at most 1e+06 pJ, got %g", L->energy_pj_per_byte);
    }

    /* bandwidth, per instance: bytes per cycle or GB/s */
    if (L->kind == LK_LINK) {
        L->instances = 1;
        if (yconf_lookup(c, map, "ports") >= 0 && yconf_get_u32(c, map, sec, "ports", &L->instances) != 0)
            return -1;
        if (yconf_get_number(c, map, sec, "bandwidth_GBps", YCONF_POS, 1, &x) != 0)
            return -1;
        L->bw_bytes_per_s = (double)L->instances * (x * GB);
    } else {
        static const char *const bk[] = {"bandwidth_bytes_per_cycle", "bandwidth_GBps"};
        int v = -1, which = one_of(c, map, sec, bk, 2, &v);
        if (which == -2)
            return -1;
        if (which < 0)
            return diag_set(c->d, DIAG_E_MISSING, c->path, yconf_map_line(c, map), sec,
                            "required key bandwidth_GBps (or bandwidth_bytes_per_cycle) is missing");
        if (yconf_get_number(c, map, sec, bk[which], YCONF_POS, 1, &x) != 0)
            return -1;
        if (which == 0) {
            /* a decoder may run on its own clock (clock_MHz) */
            double hz = h->clock_hz;
            if (L->kind == LK_DECODER && yconf_lookup(c, map, "clock_MHz") >= 0) {
                if (yconf_get_number(c, map, sec, "clock_MHz", YCONF_POS, 1, &L->clock_hz) != 0)
                    return -1;
                L->clock_hz *= 1e6;
                hz = L->clock_hz;
            }
            L->bw_bytes_per_cycle = x;
            L->bw_bytes_per_s = (double)L->instances * x * hz;
        }
        else
            L->bw_bytes_per_s = L->instances == 1 ? x * GB : (double)L->instances * (x * GB);
    }
    L->eff_bw = 1.0;
    return 0;
}

/* A DRAM's or a link's efficiency, and a DRAM's type and unified flag. */
static int level_efficiency(struct yconf *c, int map, const char *sec, struct hw_level *L)
{
    char field[128];
    int e = yconf_lookup(c, map, "efficiency");
    snprintf(field, sizeof field, "%s.efficiency", sec);
    if (e >= 0 && c->nodes[e].kind != YCONF_MAPPING)
        return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[e].line, field,
                        "expected a mapping, got %s", yconf_kind_name(c, e));
    if (L->kind == LK_LINK) {
        if (e >= 0 && (yconf_check_keys(c, e, field, link_eff_keys) != 0 ||
                       yconf_get_number(c, e, field, "bandwidth_fraction", YCONF_FRAC, 1, &L->eff_bw) != 0))
            return -1;
        return 0;
    }
    /* DRAM */
    if (yconf_get_string(c, map, sec, "type", 0, L->type, sizeof L->type) != 0)
        return -1;
    char u[16] = "";
    if (yconf_get_string(c, map, sec, "unified", 0, u, sizeof u) != 0)
        return -1;
    if (strcmp(u, "true") == 0)
        L->unified = 1;
    else if (u[0] != '\0' && strcmp(u, "false") != 0)
        return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[yconf_lookup(c, map, "unified")].line,
                        "levels.unified", "expected true or false, got '%s'", u);
    if (e < 0)
        return diag_set(c->d, DIAG_E_MISSING, c->path, yconf_map_line(c, map), field,
                        "required: {bandwidth_fraction, rw_turnaround_penalty, loaded_latency_ns}");
    if (yconf_check_keys(c, e, field, dram_eff_keys) != 0 ||
        yconf_get_number(c, e, field, "bandwidth_fraction", YCONF_FRAC, 1, &L->eff_bw) != 0 ||
        yconf_get_number(c, e, field, "rw_turnaround_penalty", YCONF_FRAC0, 1, &L->eff_rw_penalty) != 0 ||
        yconf_get_scaled_u64(c, e, field, "loaded_latency_ns", YCONF_POS, 1000.0,
                             &L->eff_loaded_latency_ps) != 0)
        return -1;
    /* Cross-check: a loaded latency below the unloaded one is a typo. */
    if (L->eff_loaded_latency_ps < L->latency_ps)
        return diag_set(c->d, DIAG_E_RANGE, c->path,
                        c->nodes[yconf_lookup(c, e, "loaded_latency_ns")].line,
                        "efficiency.loaded_latency_ns", "must be >= latency_ns (%g), got %g",
                        (double)L->latency_ps / 1000.0, (double)L->eff_loaded_latency_ps / 1000.0);
    return 0;
}

static int fill_level(struct yconf *c, int map, int idx, struct hw_config *h,
                      struct hw_level *L)
{
    char sec[48];
    if (level_name_kind(c, map, idx, L, sec, sizeof sec) != 0 ||
        level_scope(c, map, sec, h, L) != 0 || level_capacity(c, map, sec, L) != 0)
        return -1;
    if (L->kind == LK_REGISTERS)
        return 0;
    if (level_bandwidth(c, map, sec, h, L) != 0)
        return -1;
    if (L->kind == LK_SCRATCHPAD) {
        if (yconf_lookup(c, map, "latency_ns") >= 0 &&
            yconf_get_scaled_u64(c, map, sec, "latency_ns", YCONF_POS, 1000.0, &L->latency_ps) != 0)
            return -1;
        return 0;
    }
    if (yconf_get_scaled_u64(c, map, sec, "latency_ns", YCONF_POS, 1000.0, &L->latency_ps) != 0)
        return -1;
    if (L->kind == LK_CACHE)
        return yconf_get_number(c, map, sec, "port_bytes_per_cycle_per_unit", YCONF_POS, 1,
                                &L->port_bytes_per_cycle_per_unit);
    if (L->kind == LK_DECODER) {
        char field[128];
        if (yconf_lookup(c, map, "clock_MHz") >= 0 && L->clock_hz == 0) {
            yconf_field(field, sizeof field, sec, "clock_MHz");
            return diag_set(c->d, DIAG_E_RANGE, c->path, c->nodes[yconf_lookup(c, map, "clock_MHz")].line,
                            field, "a decoder's own clock goes with bandwidth_bytes_per_cycle, "
                            "not bandwidth_GBps");
        }
        return yconf_get_number(c, map, sec, "area_mm2", YCONF_NONNEG, 0, &L->area_mm2) < 0 ? -1 : 0;
    }
    return level_efficiency(c, map, sec, L);
}

/* `levels:` innermost first.  The tiled model needs one register file and
 * one scratchpad per unit, one or more caches, one DRAM and a link to the
 * host; a link to peer devices is optional. */
static int fill_levels(struct yconf *c, int root, struct hw_config *h)
{
    int seq = yconf_lookup(c, root, "levels");
    if (seq < 0)
        return diag_set(c->d, DIAG_E_MISSING, c->path, c->nodes[root].line, "levels",
                        "required: the memory levels, innermost first (see configs/README.md)");
    if (c->nodes[seq].kind != YCONF_SEQUENCE)
        return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[seq].line, "levels",
                        "expected a list of levels, got %s", yconf_kind_name(c, seq));
    h->lv_regs = h->lv_smem = h->lv_dram = h->lv_host = h->lv_peer = h->lv_dec = -1;
    int idx = 0;
    for (int m = c->nodes[seq].first; m >= 0; m = c->nodes[m].next, idx++) {
        if (idx >= HW_MAX_LEVELS)
            return diag_set(c->d, DIAG_E_RANGE, c->path, c->nodes[m].line, "levels",
                            "more than %d levels", HW_MAX_LEVELS);
        struct hw_level *L = &h->level[idx];
        if (fill_level(c, m, idx, h, L) != 0)
            return -1;
        int line = c->nodes[m].line;
        for (int j = 0; j < idx; j++)
            if (strcmp(h->level[j].name, L->name) == 0)
                return diag_set(c->d, DIAG_E_DUPLICATE, c->path, line, "levels.name",
                                "two levels named '%s'", L->name);
        if (idx > 0 && L->kind < h->level[idx - 1].kind)
            return diag_set(c->d, DIAG_E_RANGE, c->path, line, "levels",
                            "level '%s' (%s) after '%s' (%s): levels go innermost first "
                            "(registers, scratchpad, caches, decoder, dram, links)",
                            L->name, level_kind_name(L->kind), h->level[idx - 1].name,
                            level_kind_name(h->level[idx - 1].kind));
        int8_t *role = NULL;
        switch (L->kind) {
        case LK_REGISTERS: role = &h->lv_regs; break;
        case LK_SCRATCHPAD: role = &h->lv_smem; break;
        case LK_DRAM: role = &h->lv_dram; break;
        case LK_DECODER: role = &h->lv_dec; break;
        case LK_LINK: role = L->scope == LS_HOST ? &h->lv_host : &h->lv_peer; break;
        case LK_CACHE: h->lv_cache[h->ncaches++] = (int8_t)idx; break;
        case LK_COUNT: SIM_CHECK(0); break;
        }
        if (role != NULL && *role >= 0)
            return diag_set(c->d, DIAG_E_DUPLICATE, c->path, line, "levels",
                            "a second %s%s level '%s' (the first is '%s')",
                            L->kind == LK_LINK ? (L->scope == LS_HOST ? "host " : "peer ") : "",
                            level_kind_name(L->kind), L->name, h->level[*role].name);
        if (role != NULL)
            *role = (int8_t)idx;
    }
    h->nlevels = (uint32_t)idx;
    static const struct { size_t off; const char *what; } need[] = {
        {offsetof(struct hw_config, lv_regs), "a registers level"},
        {offsetof(struct hw_config, lv_smem), "a scratchpad level"},
        {offsetof(struct hw_config, lv_dram), "a dram level"},
        {offsetof(struct hw_config, lv_host), "a link of scope host"},
    };
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (*((const int8_t *)h + need[i].off) < 0)
            return diag_set(c->d, DIAG_E_MISSING, c->path, yconf_map_line(c, seq), "levels",
                            "the list needs %s", need[i].what);
    if (h->ncaches == 0)
        return diag_set(c->d, DIAG_E_MISSING, c->path, yconf_map_line(c, seq), "levels",
                        "the list needs a cache level");
    return 0;
}

/* The top level: name, family, clock. */
static int fill_top(struct yconf *c, int root, struct hw_config *h)
{
    double x;
    if (c->nodes[root].kind != YCONF_MAPPING)
        return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[root].line, "",
                        "top level must be a mapping of config keys, got %s",
                        yconf_kind_name(c, root));
    if (yconf_check_keys(c, root, "", top_keys) != 0)
        return -1;

    if (yconf_get_string(c, root, "", "name", 1, h->name, sizeof h->name) != 0 ||
        yconf_get_string(c, root, "", "family", 1, h->family, sizeof h->family) != 0)
        return -1;
    /* one tiled model serves all three; tpu and npu name chips whose matrix
     * pipe is a systolic array (compute.systolic) */
    if (strcmp(h->family, "gpu") != 0 && strcmp(h->family, "tpu") != 0 &&
        strcmp(h->family, "npu") != 0)
        return diag_set(c->d, DIAG_E_UNKNOWN_NAME, c->path,
                        c->nodes[yconf_lookup(c, root, "family")].line, "family",
                        "unknown family '%s'; known: gpu, tpu, npu", h->family);
    if (yconf_get_number(c, root, "", "clock_MHz", YCONF_POS, 1, &x) != 0)
        return -1;
    h->clock_hz = x * 1e6;
    return 0;
}

/* compute: units, the pipes' rates and the optional 2:4 sparse rates.
 * *s is the section (fill_matrix_paths reads it too). */
static int fill_compute(struct yconf *c, int root, struct hw_config *h, int *sp)
{
    int s;
    if ((s = open_section(c, root, "compute", compute_keys, 1)) < 0 ||
        yconf_get_u32(c, s, "compute", "units", &h->units) != 0 ||
        get_dtype_rates(c, s, "compute", "matrix_flops_per_cycle_per_unit",
                        h->matrix_flops_per_cycle) != 0 ||
        get_dtype_rates(c, s, "compute", "vector_flops_per_cycle_per_unit",
                        h->vector_flops_per_cycle) != 0)
        return -1;
    /* optional: the 2:4 sparse rates; a dtype must have a dense rate first */
    if (yconf_lookup(c, s, "sparse_matrix_flops_per_cycle_per_unit") >= 0) {
        if (get_dtype_rates(c, s, "compute", "sparse_matrix_flops_per_cycle_per_unit",
                            h->sparse_matrix_flops_per_cycle) != 0)
            return -1;
        int sv = yconf_lookup(c, s, "sparse_matrix_flops_per_cycle_per_unit");
        for (int k = c->nodes[sv].first; k >= 0; k = yconf_next_key(c, k)) {
            enum dtype t;
            if (dtype_from_name(yconf_text(c, k), &t) == 0 &&
                h->sparse_matrix_flops_per_cycle[t] > 0 &&
                h->sparse_matrix_flops_per_cycle[t] < h->matrix_flops_per_cycle[t])
                return diag_set(c->d, DIAG_E_RANGE, c->path, c->nodes[k].line,
                                "compute.sparse_matrix_flops_per_cycle_per_unit",
                                "%s: %g is below the dense rate %g; a sparse rate counts the "
                                "dense-equivalent FLOPs (data sheets: 2x dense)",
                                yconf_text(c, k), h->sparse_matrix_flops_per_cycle[t],
                                h->matrix_flops_per_cycle[t]);
        }
    }
    /* optional: a 16-bit GEMM's rate accumulating in 16 bits, where it differs */
    const char *ak = "fp16_accumulate_matrix_flops_per_cycle_per_unit";
    if (yconf_lookup(c, s, ak) >= 0) {
        if (get_dtype_rates(c, s, "compute", ak, h->acc16_matrix_flops_per_cycle) != 0)
            return -1;
        int av = yconf_lookup(c, s, ak);
        for (int k = c->nodes[av].first; k >= 0; k = yconf_next_key(c, k)) {
            enum dtype t;
            if (dtype_from_name(yconf_text(c, k), &t) == 0 && t != DT_FP16 && t != DT_BF16)
                return diag_set(c->d, DIAG_E_RANGE, c->path, c->nodes[k].line,
                                "compute.fp16_accumulate_matrix_flops_per_cycle_per_unit",
                                "%s: only a 16-bit type (fp16, bf16) accumulates in 16 bits",
                                yconf_text(c, k));
        }
    }
    *sp = s;
    return 0;
}

/* collectives (optional): NCCL's channels, protocols and costs. */
static int fill_collectives(struct yconf *c, int root, struct hw_config *h)
{
    double x;
    int s;
    h->coll_channels = 1;
    h->coll_hop_scale = 1.0;
    h->coll_overhead_ps = h->launch_overhead_ps;
    if ((s = open_section(c, root, "collectives", collectives_keys, 0)) == -1)
        return -1;
    if (s >= 0) {
        int rc = yconf_get_number(c, s, "collectives", "channels", YCONF_COUNT, 0, &x);
        if (rc < 0)
            return -1;
        if (rc == 0)
            h->coll_channels = (uint32_t)x;
        if ((rc = yconf_get_number(c, s, "collectives", "channel_bandwidth_GBps", YCONF_POS, 0, &x)) < 0)
            return -1;
        if (rc == 0)
            h->coll_channel_bw = x * 1e9;
        int pv = yconf_lookup(c, s, "protocols");
        if (pv >= 0) {
            static const char *const pn[] = {"LL", "LL128", "Simple"};
            if (c->nodes[pv].kind != YCONF_SEQUENCE || c->nodes[pv].first < 0)
                return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[pv].line,
                                "collectives.protocols",
                                "expected a list of protocols NCCL may use, e.g. [LL, Simple]");
            for (int k = c->nodes[pv].first; k >= 0; k = c->nodes[k].next) {
                int p = 0;
                while (p < 3 && !(c->nodes[k].kind == YCONF_SCALAR &&
                                  strcmp(yconf_text(c, k), pn[p]) == 0))
                    p++;
                if (p == 3)
                    return diag_set(c->d, DIAG_E_UNKNOWN_NAME, c->path, c->nodes[k].line,
                                    "collectives.protocols",
                                    "unknown protocol '%.40s' (known: LL, LL128, Simple)",
                                    c->nodes[k].kind == YCONF_SCALAR ? yconf_text(c, k) : "?");
                h->coll_protocols |= (uint8_t)(1u << p);
            }
        }
        if ((rc = yconf_get_number(c, s, "collectives", "hop_latency_scale", YCONF_POS, 0, &x)) < 0)
            return -1;
        if (rc == 0)
            h->coll_hop_scale = x;
        if ((rc = yconf_get_number(c, s, "collectives", "ll_bandwidth_GBps", YCONF_POS, 0, &x)) < 0)
            return -1;
        if (rc == 0)
            h->coll_ll_bw = x * 1e9;
        if ((rc = yconf_get_number(c, s, "collectives", "nvls_efficiency", YCONF_FRAC, 0, &x)) < 0)
            return -1;
        if (rc == 0)
            h->coll_nvls_eff = x;
        if ((rc = yconf_get_number(c, s, "collectives", "call_overhead_us", YCONF_NONNEG, 0, &x)) < 0)
            return -1;
        if (rc == 0)
            h->coll_overhead_ps = (uint64_t)llround(x * 1e6);
    }
    return 0;
}

/* power: what the board draws idle and at its limit, and each pipe's
 * dynamic power at full rate (docs/energy.md) */
static int fill_power(struct yconf *c, int root, struct hw_config *h)
{
    int s;
    if ((s = open_section(c, root, "power", power_keys, 0)) == -1)
        return -1;
    if (s >= 0) {
        h->has_power = 1;
        if (yconf_get_number(c, s, "power", "idle_W", YCONF_POS, 1, &h->idle_w) != 0 ||
            yconf_get_number(c, s, "power", "matrix_pipe_pJ_per_cycle", YCONF_NONNEG, 1,
                             &h->matrix_pj_per_cycle) != 0 ||
            yconf_get_number(c, s, "power", "vector_pipe_pJ_per_cycle", YCONF_NONNEG, 1,
                             &h->vector_pj_per_cycle) != 0 ||
            yconf_get_number(c, s, "power", "limit_W", YCONF_POS, 0, &h->power_limit_w) < 0)
            return -1;
        static const struct { const char *key; double max; } cap[] = {
            {"idle_W", 1e5}, {"limit_W", 1e5}, {"matrix_pipe_pJ_per_cycle", 1e7},
            {"vector_pipe_pJ_per_cycle", 1e7}};
        const double val[] = {h->idle_w, h->power_limit_w, h->matrix_pj_per_cycle, h->vector_pj_per_cycle};
        for (size_t k = 0; k < sizeof cap / sizeof cap[0]; k++)
            if (val[k] > cap[k].max) {
                char f[64];
                snprintf(f, sizeof f, "power.%s", cap[k].key);
                return diag_set(c->d, DIAG_E_RANGE, c->path, c->nodes[yconf_lookup(c, s, cap[k].key)].line, f,
                                "at most %g, got %g", cap[k].max, val[k]);
            }
        if (h->power_limit_w > 0 && h->power_limit_w < h->idle_w)
            return diag_set(c->d, DIAG_E_RANGE, c->path, c->nodes[yconf_lookup(c, s, "limit_W")].line,
                            "power.limit_W", "must be at least idle_W (%g W), got %g W", h->idle_w,
                            h->power_limit_w);
    }
    return 0;
}

int chipcfg_fill(struct yconf *c, int root, struct hw_config *h)
{
    int s;
    if (fill_top(c, root, h) != 0 || fill_compute(c, root, h, &s) != 0)
        return -1;
    if (fill_family_block(c, root, h) != 0 || fill_levels(c, root, h) != 0 ||
        fill_matrix_paths(c, s, h) != 0)
        return -1;

    if ((s = open_section(c, root, "launch", launch_keys, 1)) < 0 ||
        yconf_get_scaled_u64(c, s, "launch", "kernel_overhead_ns", YCONF_NONNEG, 1000.0,
                             &h->launch_overhead_ps) != 0)
        return -1;

    if (fill_collectives(c, root, h) != 0)
        return -1;
    if ((s = open_section(c, root, "efficiency", efficiency_keys, 1)) < 0 ||
        yconf_get_number(c, s, "efficiency", "matrix_pipe_fraction", YCONF_FRAC, 1,
                         &h->eff_matrix_pipe) != 0 ||
        yconf_get_number(c, s, "efficiency", "vector_pipe_fraction", YCONF_FRAC, 1,
                         &h->eff_vector_pipe) != 0 ||
        yconf_get_number(c, s, "efficiency", "inflight_bytes_per_unit", YCONF_POS, 1,
                         &h->eff_inflight_bytes_per_unit) != 0)
        return -1;

    return fill_power(c, root, h);
}

const char *const *chipcfg_keys(const char *section)
{
    static const struct {
        const char *name;
        const char *const *keys;
    } sections[] = {
        {"", top_keys},          {"compute", compute_keys},         {"threads", threads_keys},
        {"systolic", systolic_keys}, {"launch", launch_keys},       {"collectives", collectives_keys},
        {"efficiency", efficiency_keys}, {"power", power_keys},
    };
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
        if (strcmp(section, sections[i].name) == 0)
            return sections[i].keys;
    return NULL;
}

const char *const *chipcfg_level_keys(enum level_kind k)
{
    return level_keys[k];
}

const char *const *chipcfg_efficiency_keys(enum level_kind k)
{
    return k == LK_DRAM ? dram_eff_keys : link_eff_keys;
}
