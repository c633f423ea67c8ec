/* spec.c: spec and family files -> a hardware config (spec.h).
 *
 * The files are read by yconf.c as libyaml's document loader reads them
 * (anchors, tags and aliases allowed, only the first document: they were
 * read with the loader, and their errors stay its) and only ever looked up
 * at fixed paths (at most three mappings deep), so no input can make the
 * walk loop or recurse.  Every number is strict (num_parse) and
 * range-checked. */
#include "spec.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "numfmt.h"
#include "yconf.h"

#define SPEC_MAX_FILE (1u << 20)

static const char *const dt_keys[SPEC_NDT] = {"fp4", "fp6", "fp8", "int8", "int4",
                                              "fp16", "bf16", "tf32", "fp32", "fp64"};

/* How a spec or family file is read. */
static const struct yconf_rules spec_rules = {
    .max_bytes = SPEC_MAX_FILE, .too_large = "larger than 1 MiB; not a spec file",
    .empty = "empty file", .as_loader = 1};

struct sp {
    const char *path;
    struct diag *d;
    struct yconf y;
    int root;
};

/* Node n, an alias followed to the node it names (-1: none). */
static int node(const struct sp *p, int n)
{
    return n >= 0 && p->y.nodes[n].kind == YCONF_ALIAS ? p->y.nodes[n].first : n;
}

static int line_of(const struct sp *p, int n)
{
    return n < 0 ? 0 : p->y.nodes[n].line;
}

static int is_mapping(const struct sp *p, int n)
{
    return n >= 0 && p->y.nodes[n].kind == YCONF_MAPPING;
}

static const char *scalar(const struct sp *p, int n)
{
    return n >= 0 && p->y.nodes[n].kind == YCONF_SCALAR ? yconf_text(&p->y, n) : NULL;
}

/* Value node of key in mapping m, or -1. */
static int get(const struct sp *p, int m, const char *key)
{
    if (!is_mapping(p, m))
        return -1;
    for (int q = p->y.nodes[m].first; q >= 0; q = yconf_next_key(&p->y, q)) {
        const char *k = scalar(p, node(p, q));
        if (k != NULL && strcmp(k, key) == 0)
            return node(p, p->y.nodes[q].next);
    }
    return -1;
}

/* Every key of mapping m is in allowed (NULL-ended) and given once. */
static int check_keys(struct sp *p, int m, const char *section, const char *const *allowed)
{
    if (!is_mapping(p, m))
        return diag_set(p->d, DIAG_E_TYPE, p->path, line_of(p, m), section, "expected a mapping");
    for (int q = p->y.nodes[m].first; q >= 0; q = yconf_next_key(&p->y, q)) {
        int kn = node(p, q);
        const char *k = scalar(p, kn);
        char field[160];
        snprintf(field, sizeof field, "%s%s%s", section, section[0] ? "." : "", k ? k : "?");
        int ok = 0;
        for (const char *const *a = allowed; k != NULL && *a != NULL; a++)
            ok |= strcmp(*a, k) == 0;
        if (!ok) {
            char list[600] = "";
            size_t used = 0;
            for (const char *const *a = allowed; *a != NULL && used < sizeof list; a++)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                         a == allowed ? "" : ", ", *a);
            return diag_set(p->d, DIAG_E_UNKNOWN_KEY, p->path, line_of(p, kn), field,
                            "unknown key; expected one of: %s", list);
        }
        for (int e = p->y.nodes[m].first; e != q; e = yconf_next_key(&p->y, e))
            if (strcmp(scalar(p, node(p, e)) ? scalar(p, node(p, e)) : "", k) == 0)
                return diag_set(p->d, DIAG_E_DUPLICATE, p->path, line_of(p, kn), field,
                                "duplicate key");
    }
    return 0;
}

enum want { W_STR, W_POS, W_FRAC, W_COUNT };

/* A leaf {value, source}: fills v.  Absent: v->present = 0, and an error
 * when required. */
static int leaf(struct sp *p, int m, const char *section, const char *key,
                enum want w, int required, struct spec_val *v)
{
    static const char *const leaf_keys[] = {"value", "source", NULL};
    char field[160];
    snprintf(field, sizeof field, "%s%s%s", section, section[0] ? "." : "", key);
    memset(v, 0, sizeof *v);
    int n = get(p, m, key);
    if (n < 0) {
        if (required)
            return diag_set(p->d, DIAG_E_MISSING, p->path, line_of(p, m), field,
                            "required key is missing");
        return 0;
    }
    v->line = line_of(p, n);
    if (!is_mapping(p, n))
        return diag_set(p->d, DIAG_E_TYPE, p->path, v->line, field,
                        "expected {value: ..., source: \"...\"} (every figure cites its source)");
    if (check_keys(p, n, field, leaf_keys) != 0)
        return -1;
    const char *val = scalar(p, get(p, n, "value")), *src = scalar(p, get(p, n, "source"));
    if (val == NULL || val[0] == '\0')
        return diag_set(p->d, DIAG_E_MISSING, p->path, v->line, field, "value is missing");
    if (src == NULL || src[0] == '\0')
        return diag_set(p->d, DIAG_E_MISSING, p->path, v->line, field,
                        "source is missing: say where the figure comes from");
    if (strlen(src) >= sizeof v->source || strlen(val) >= sizeof v->str)
        return diag_set(p->d, DIAG_E_RANGE, p->path, v->line, field, "value or source too long");
    snprintf(v->source, sizeof v->source, "%s", src);
    snprintf(v->str, sizeof v->str, "%s", val);
    for (char *c = v->source; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    if (w != W_STR) {
        if (num_parse(val, &v->num) != 0)
            return diag_set(p->d, DIAG_E_TYPE, p->path, v->line, field, "expected a number, got '%.40s'",
                            val);
        if (!(v->num > 0) || v->num > 1e15 || (w == W_FRAC && v->num > 1) ||
            (w == W_COUNT && (v->num != floor(v->num) || v->num > 4294967295.0)))
            return diag_set(p->d, DIAG_E_RANGE, p->path, v->line, field, "%s, got %.40s",
                            w == W_FRAC ? "must be in (0, 1]" : w == W_COUNT ? "must be a whole "
                            "number >= 1" : "must be > 0", val);
    }
    v->present = 1;
    return 0;
}

/* Reads p->path into p's tree (its root in p->root): 0, or -1 with *p->d
 * and nothing to free. */
static int load_doc(struct sp *p)
{
    p->y = (struct yconf){.path = p->path, .d = p->d};
    p->root = yconf_parse_file(&p->y, &spec_rules);
    if (p->root >= 0)
        return 0;
    yconf_free(&p->y);
    return -1;
}

/* The family file's single figures. */
static int family_leaves(struct sp *p, struct spec *s)
{
    static const char *const keys[] = {
        "family", "max_threads_per_unit", "max_ctas_per_unit", "registers_KiB",
        "smem_per_unit_KiB", "smem_name", "smem_bytes_per_cycle",
        "special_function_ops_per_cycle_per_unit", "cluster_multicast_ctas", "matrix_paths", "vector_ratio",
        "l2_MiB_per_unit", "l2_bytes_per_cycle_per_unit", "l2_latency_ns",
        "l2_port_bytes_per_cycle_per_unit", "llc_bytes_per_cycle_per_unit", "llc_latency_ns",
        "dram_latency_ns", "dram_bandwidth_fraction", "dram_rw_turnaround_penalty",
        "dram_loaded_latency_ns", "host_link_latency_ns", "peer_link_latency_ns",
        "kernel_overhead_ns", "matrix_pipe_fraction", "vector_pipe_fraction",
        "inflight_bytes_per_unit", "smem_energy_pJ_per_byte", "l2_energy_pJ_per_byte",
        "llc_energy_pJ_per_byte", "dram_energy_pJ_per_byte", "idle_fraction_of_tdp",
        "matrix_pipe_share_of_dynamic", "vector_pipe_share_of_dynamic", NULL};
    const int r = p->root;
    if (check_keys(p, r, "", keys) != 0)
        return -1;
    const int chip_smem = s->smem_per_unit_KiB.present, chip_l2 = s->l2_MiB.present;
    return leaf(p, r, "", "family", W_STR, 1, &s->f_family) ||
           leaf(p, r, "", "max_threads_per_unit", W_COUNT, 1, &s->f_max_threads) ||
           leaf(p, r, "", "max_ctas_per_unit", W_COUNT, 1, &s->f_max_ctas) ||
           leaf(p, r, "", "registers_KiB", W_POS, 1, &s->f_registers_KiB) ||
           leaf(p, r, "", "smem_per_unit_KiB", W_POS, !chip_smem, &s->f_smem_KiB) ||
           leaf(p, r, "", "smem_name", W_STR, 1, &s->f_smem_name) ||
           leaf(p, r, "", "smem_bytes_per_cycle", W_POS, 1, &s->f_smem_bpc) ||
           leaf(p, r, "", "special_function_ops_per_cycle_per_unit", W_POS, 0, &s->f_sfu) ||
           leaf(p, r, "", "cluster_multicast_ctas", W_COUNT, 0, &s->f_cluster_mc) ||
           leaf(p, r, "", "l2_MiB_per_unit", W_POS, !chip_l2, &s->f_l2_MiB_per_unit) ||
           leaf(p, r, "", "l2_bytes_per_cycle_per_unit", W_POS, 1, &s->f_l2_bpc) ||
           leaf(p, r, "", "l2_latency_ns", W_POS, 1, &s->f_l2_latency_ns) ||
           leaf(p, r, "", "l2_port_bytes_per_cycle_per_unit", W_POS, 1, &s->f_l2_port) ||
           leaf(p, r, "", "llc_bytes_per_cycle_per_unit", W_POS, s->llc_MiB.present, &s->f_llc_bpc) ||
           leaf(p, r, "", "llc_latency_ns", W_POS, s->llc_MiB.present, &s->f_llc_latency_ns) ||
           leaf(p, r, "", "dram_latency_ns", W_POS, 1, &s->f_dram_latency_ns) ||
           leaf(p, r, "", "dram_bandwidth_fraction", W_FRAC, 1, &s->f_dram_frac) ||
           leaf(p, r, "", "dram_rw_turnaround_penalty", W_FRAC, 1, &s->f_dram_rw) ||
           leaf(p, r, "", "dram_loaded_latency_ns", W_POS, 1, &s->f_dram_loaded_ns) ||
           leaf(p, r, "", "host_link_latency_ns", W_POS, 1, &s->f_host_latency_ns) ||
           leaf(p, r, "", "peer_link_latency_ns", W_POS, s->peer_links.present, &s->f_peer_latency_ns) ||
           leaf(p, r, "", "kernel_overhead_ns", W_POS, 1, &s->f_kernel_overhead_ns) ||
           leaf(p, r, "", "matrix_pipe_fraction", W_FRAC, 1, &s->f_matrix_frac) ||
           leaf(p, r, "", "vector_pipe_fraction", W_FRAC, 1, &s->f_vector_frac) ||
           leaf(p, r, "", "inflight_bytes_per_unit", W_POS, 1, &s->f_inflight)
               ? -1 : 0;
}

/* The family's matrix paths (required) and vector ratios (optional). */
static int family_paths(struct sp *p, struct spec *s)
{
    int mp = get(p, p->root, "matrix_paths");
    if (!is_mapping(p, mp))
        return diag_set(p->d, DIAG_E_MISSING, p->path, line_of(p, p->root), "matrix_paths",
                        "required: the instructions the matrix pipe takes, each {value, source}");
    int rc = 0;
    for (int q = p->y.nodes[mp].first; q >= 0 && rc == 0; q = yconf_next_key(&p->y, q)) {
        const char *k = scalar(p, node(p, q));
        if (k == NULL || s->npaths >= 8 || strlen(k) >= sizeof s->path_name[0])
            return diag_set(p->d, DIAG_E_TYPE, p->path, line_of(p, node(p, q)), "matrix_paths",
                            "expected instruction names (mma_sync, wgmma, tcgen05, mfma, systolic)");
        snprintf(s->path_name[s->npaths], sizeof s->path_name[0], "%s", k);
        rc = leaf(p, mp, "matrix_paths", k, W_FRAC, 1, &s->path_frac[s->npaths]);
        s->npaths++;
    }
    int vr = rc == 0 ? get(p, p->root, "vector_ratio") : -1;
    static const char *const dt_null[SPEC_NDT + 1] = {"fp4", "fp6", "fp8", "int8", "int4", "fp16",
                                                      "bf16", "tf32", "fp32", "fp64", NULL};
    if (vr >= 0 && (rc = check_keys(p, vr, "vector_ratio", dt_null)) == 0)
        for (unsigned i = 0; i < SPEC_NDT && rc == 0; i++)
            rc = leaf(p, vr, "vector_ratio", dt_keys[i], W_POS, 0, &s->f_vector_ratio[i]);
    return rc;
}

/* The family's energy defaults (all optional): the levels' per-byte energies, the DRAM's
 * picked by the spec's memory type, the idle share of tdp_W and the pipes' shares of the
 * rest.  The idle share must be below 1: a board that idles at its limit has no power for
 * work. */
static int family_energy(struct sp *p, struct spec *s)
{
    const int r = p->root;
    if (leaf(p, r, "", "smem_energy_pJ_per_byte", W_POS, 0, &s->f_smem_energy) ||
        leaf(p, r, "", "l2_energy_pJ_per_byte", W_POS, 0, &s->f_l2_energy) ||
        leaf(p, r, "", "llc_energy_pJ_per_byte", W_POS, 0, &s->f_llc_energy) ||
        leaf(p, r, "", "idle_fraction_of_tdp", W_FRAC, 0, &s->f_idle_frac) ||
        leaf(p, r, "", "matrix_pipe_share_of_dynamic", W_FRAC, 0, &s->f_matrix_share) ||
        leaf(p, r, "", "vector_pipe_share_of_dynamic", W_FRAC, 0, &s->f_vector_share))
        return -1;
    if (s->f_idle_frac.present && s->f_idle_frac.num >= 1)
        return diag_set(p->d, DIAG_E_RANGE, p->path, s->f_idle_frac.line, "idle_fraction_of_tdp",
                        "must be in (0, 1), got %g (the board would have no power left for work)",
                        s->f_idle_frac.num);
    int m = get(p, r, "dram_energy_pJ_per_byte");
    if (m < 0)
        return 0;
    if (!is_mapping(p, m))
        return diag_set(p->d, DIAG_E_TYPE, p->path, line_of(p, m), "dram_energy_pJ_per_byte",
                        "expected a mapping memory type -> {value, source} (HBM3: {value: 93.4, "
                        "source: ...})");
    size_t used = 0;
    for (int q = p->y.nodes[m].first; q >= 0; q = yconf_next_key(&p->y, q)) {
        const char *k = scalar(p, node(p, q));
        struct spec_val v;
        if (k == NULL)
            return diag_set(p->d, DIAG_E_TYPE, p->path, line_of(p, node(p, q)),
                            "dram_energy_pJ_per_byte", "expected memory type names (HBM3, GDDR6X, ...)");
        if (leaf(p, m, "dram_energy_pJ_per_byte", k, W_POS, 1, &v) != 0)
            return -1;
        if (strcasecmp(k, s->mem_type.str) == 0)
            s->f_dram_energy = v;
        if (used < sizeof s->dram_energy_types)
            used += (size_t)snprintf(s->dram_energy_types + used, sizeof s->dram_energy_types - used,
                                     "%s%s", used ? ", " : "", k);
    }
    return 0;
}

static int load_family(struct spec *s, struct diag *d)
{
    struct sp p = {.path = s->family_path, .d = d};
    if (load_doc(&p) != 0) {
        if (d->code == DIAG_E_IO)
            return diag_set(d, DIAG_E_UNKNOWN_NAME, s->path, s->architecture.line, "architecture",
                            "no family file %s for architecture '%s'", s->family_path,
                            s->architecture.str);
        return -1;
    }
    int rc = family_leaves(&p, s);
    if (rc == 0 && strcmp(s->f_family.str, "gpu") != 0)
        rc = diag_set(d, DIAG_E_UNSUPPORTED, p.path, s->f_family.line, "family",
                      "new-chip writes gpu-family configs; '%s' chips need their systolic array "
                      "described by hand (configs/README.md)", s->f_family.str);
    if (rc == 0)
        rc = family_paths(&p, s);
    if (rc == 0)
        rc = family_energy(&p, s);
    yconf_free(&p.y);
    return rc;
}

/* The spec file's single figures. */
static int spec_leaves(struct sp *p, struct spec *s)
{
    static const char *const top[] = {
        "name", "chip", "vendor", "architecture", "process", "tdp_W", "idle_W", "units", "boost_clock_MHz",
        "dense_TFLOPS", "sparse_TFLOPS", "vector_TFLOPS", "fp16_accumulate_TFLOPS", "memory", "l2_MiB", "llc_MiB",
        "smem_per_unit_KiB", "host_link", "peer_link", NULL};
    const int r = p->root;
    if (check_keys(p, r, "", top) != 0)
        return -1;
    return leaf(p, r, "", "name", W_STR, 1, &s->name) ||
           leaf(p, r, "", "chip", W_STR, 1, &s->chip) ||
           leaf(p, r, "", "vendor", W_STR, 1, &s->vendor) ||
           leaf(p, r, "", "architecture", W_STR, 1, &s->architecture) ||
           leaf(p, r, "", "process", W_STR, 0, &s->process) ||
           leaf(p, r, "", "tdp_W", W_POS, 0, &s->tdp_W) ||
           leaf(p, r, "", "idle_W", W_POS, 0, &s->idle_W) ||
           leaf(p, r, "", "units", W_COUNT, 1, &s->units) ||
           leaf(p, r, "", "boost_clock_MHz", W_POS, 1, &s->boost_clock_MHz) ||
           leaf(p, r, "", "l2_MiB", W_POS, 0, &s->l2_MiB) ||
           leaf(p, r, "", "llc_MiB", W_POS, 0, &s->llc_MiB) ||
           leaf(p, r, "", "smem_per_unit_KiB", W_POS, 0, &s->smem_per_unit_KiB)
               ? -1 : 0;
}

/* The peaks: a dense one at least, and vector fp32. */
static int spec_peaks(struct sp *p, struct spec *s)
{
    static const char *const dt_list[SPEC_NDT + 1] = {"fp4", "fp6", "fp8", "int8", "int4", "fp16",
                                                      "bf16", "tf32", "fp32", "fp64", NULL};
    static const char *const secs[4] = {"dense_TFLOPS", "sparse_TFLOPS", "vector_TFLOPS",
                                        "fp16_accumulate_TFLOPS"};
    static const char *const dt16[] = {"fp16", NULL};    /* the one type that accumulates in 16 bits */
    struct spec_val *tabs[4] = {s->dense, s->sparse, s->vector, s->acc16};
    int rc = 0;
    for (int k = 0; k < 4 && rc == 0; k++) {
        int m = get(p, p->root, secs[k]);
        if (m < 0) {
            if (k != 1 && k != 3)
                rc = diag_set(p->d, DIAG_E_MISSING, p->path, line_of(p, p->root), secs[k],
                              "required: the data sheet's %s peaks per dtype (%s)",
                              k == 0 ? "dense matrix (tensor core)" : "non-matrix",
                              k == 0 ? "e.g. bf16: {value: 989.4, source: ...}" : "fp32 at least");
            continue;
        }
        if ((rc = check_keys(p, m, secs[k], k == 3 ? dt16 : dt_list)) != 0)
            break;
        int any = 0;
        for (unsigned i = 0; i < SPEC_NDT && rc == 0; i++) {
            rc = leaf(p, m, secs[k], dt_keys[i], W_POS, k == 2 && i == 8, &tabs[k][i]);
            any |= tabs[k][i].present;
        }
        if (rc == 0 && !any)
            rc = diag_set(p->d, DIAG_E_MISSING, p->path, line_of(p, m), secs[k], "no peak given");
    }
    return rc;
}

/* memory, host_link and peer_link. */
static int spec_memory_links(struct sp *p, struct spec *s)
{
    static const char *const mem_keys[] = {"type", "capacity_GB", "bandwidth_GBps", NULL};
    static const char *const host_keys[] = {"kind", "gen", "lanes", "bandwidth_GBps", NULL};
    static const char *const peer_keys[] = {"kind", "links", "bandwidth_GBps", NULL};
    int m = get(p, p->root, "memory");
    if (m < 0)
        return diag_set(p->d, DIAG_E_MISSING, p->path, line_of(p, p->root), "memory",
                        "required: {type, capacity_GB, bandwidth_GBps}");
    if (check_keys(p, m, "memory", mem_keys) ||
        leaf(p, m, "memory", "type", W_STR, 1, &s->mem_type) ||
        leaf(p, m, "memory", "capacity_GB", W_POS, 1, &s->mem_capacity_GB) ||
        leaf(p, m, "memory", "bandwidth_GBps", W_POS, 1, &s->mem_bandwidth_GBps))
        return -1;
    m = get(p, p->root, "host_link");
    if (m < 0)
        return diag_set(p->d, DIAG_E_MISSING, p->path, line_of(p, p->root), "host_link",
                        "required: {kind: pcie, gen, lanes} or {bandwidth_GBps}");
    if (check_keys(p, m, "host_link", host_keys) ||
        leaf(p, m, "host_link", "kind", W_STR, 0, &s->host_kind) ||
        leaf(p, m, "host_link", "gen", W_COUNT, 0, &s->host_gen) ||
        leaf(p, m, "host_link", "lanes", W_COUNT, 0, &s->host_lanes) ||
        leaf(p, m, "host_link", "bandwidth_GBps", W_POS, 0, &s->host_bandwidth_GBps))
        return -1;
    if (!s->host_bandwidth_GBps.present &&
        !(s->host_gen.present && s->host_lanes.present && s->host_gen.num >= 1 &&
          s->host_gen.num <= 6))
        return diag_set(p->d, DIAG_E_MISSING, p->path, line_of(p, m), "host_link",
                        "give PCIe gen (1-6) and lanes, or bandwidth_GBps");
    m = get(p, p->root, "peer_link");
    if (m >= 0 && (check_keys(p, m, "peer_link", peer_keys) ||
                   leaf(p, m, "peer_link", "kind", W_STR, 1, &s->peer_kind) ||
                   leaf(p, m, "peer_link", "links", W_COUNT, 1, &s->peer_links) ||
                   leaf(p, m, "peer_link", "bandwidth_GBps", W_POS, 1, &s->peer_bandwidth_GBps)))
        return -1;
    return 0;
}

/* idle_W is a share of tdp_W: it needs tdp_W and must leave some of it for work. */
static int spec_power(struct sp *p, const struct spec *s)
{
    if (!s->idle_W.present)
        return 0;
    if (!s->tdp_W.present)
        return diag_set(p->d, DIAG_E_MISSING, p->path, s->idle_W.line, "idle_W",
                        "needs tdp_W (the power block is written from both)");
    if (s->idle_W.num >= s->tdp_W.num)
        return diag_set(p->d, DIAG_E_RANGE, p->path, s->idle_W.line, "idle_W",
                        "%g W is not below tdp_W %g W (the board would have no power left for "
                        "work)", s->idle_W.num, s->tdp_W.num);
    return 0;
}

/* A name that becomes a file stem: lower-case letters, digits, - and _. */
static int stem_ok(const char *s)
{
    for (const char *c = s; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '_'))
            return 0;
    return 1;
}

int spec_load(const char *path, struct spec *s, struct diag *d)
{
    return spec_load_in(path, NULL, 0, s, d);
}

int spec_load_in(const char *path, const char (*fam_dirs)[1100], int nfam, struct spec *s,
                 struct diag *d)
{
    memset(s, 0, sizeof s[0]);
    if (strlen(path) >= sizeof s->path)
        return diag_set(d, DIAG_E_RANGE, path, 0, "", "path too long");
    snprintf(s->path, sizeof s->path, "%s", path);
    struct sp p = {.path = path, .d = d};
    if (load_doc(&p) != 0)
        return -1;
    int rc = spec_leaves(&p, s);
    if (rc == 0)
        rc = spec_peaks(&p, s);
    if (rc == 0)
        rc = spec_memory_links(&p, s);
    if (rc == 0)
        rc = spec_power(&p, s);
    yconf_free(&p.y);
    if (rc != 0)
        return -1;
    if (!stem_ok(s->architecture.str))
        return diag_set(d, DIAG_E_RANGE, path, s->architecture.line, "architecture",
                        "'%s': a family file stem (lower-case letters, digits, - and _)",
                        s->architecture.str);
    if (!stem_ok(s->name.str))
        return diag_set(d, DIAG_E_RANGE, path, s->name.line, "name",
                        "'%s': a config name is lower-case letters, digits, - and _",
                        s->name.str);
    const char *slash = strrchr(path, '/');
    snprintf(s->family_path, sizeof s->family_path, "%.*sfamilies/%s.yaml",
             slash ? (int)(slash - path + 1) : 0, path, s->architecture.str);
    for (int i = 0; i < nfam && access(s->family_path, F_OK) != 0; i++) {
        char cand[sizeof s->family_path];
        snprintf(cand, sizeof cand, "%.500s/%.60s.yaml", fam_dirs[i], s->architecture.str);
        if (access(cand, F_OK) == 0)
            snprintf(s->family_path, sizeof s->family_path, "%s", cand);
    }
    return load_family(s, d);
}

/* ------------------------------------------------------------ the writer */

struct w {
    FILE *f, *warn, *sum;
    const struct spec *s;
    double units, mhz, hz;      /* the spec's units and boost clock (MHz, Hz) */
    int power;                  /* a power block and the levels' energies are written */
    double idle_W;              /* its idle power, W */
    unsigned from_sheet, derived, from_family, estimates, unsourced;
};

static const char *fam_name(const struct w *w)
{
    return w->s->architecture.str;
}

/* "spec: SRC", "family (ARCH): SRC" or "derived: HOW; spec: SRC" as a comment. */
static void line_num(struct w *w, int indent, const char *key, double x, const char *kind,
                     const char *how, const struct spec_val *v)
{
    char num[40];
    snprintf(num, sizeof num, "%.12g", x);
    fprintf(w->f, "%*s%s: %s", indent, "", key, num);
    fprintf(w->f, "  # ");
    if (how != NULL && how[0] != '\0') {
        fprintf(w->f, "derived: %s; ", how);
        w->derived++;
    }
    if (strcmp(kind, "spec") == 0) {
        fprintf(w->f, "data sheet: %s\n", v->source);
        if (how == NULL || how[0] == '\0')
            w->from_sheet++;
    } else {
        fprintf(w->f, "family default (%s): %s\n", fam_name(w), v->source);
        w->from_family++;
        int est = strncmp(v->source, "ESTIMATE", 8) == 0, uns = strncmp(v->source, "UNSOURCED", 9) == 0;
        w->estimates += est;
        w->unsourced += uns;
        if (w->sum != NULL && (est || uns))
            fprintf(w->sum, "  guessed  %-44s %s (%.90s)\n", key, num, v->source);
    }
}

static void line_str(struct w *w, int indent, const char *key, const char *val,
                     const struct spec_val *v)
{
    fprintf(w->f, "%*s%s: %s", indent, "", key, val);
    if (v != NULL) {
        fprintf(w->f, "  # data sheet: %s", v->source);
        w->from_sheet++;
    }
    fputc('\n', w->f);
}

/* A figure derived from a family default for a chip it was not measured on: an estimate
 * whatever the default's own source, so the comment says so first. */
static void line_est(struct w *w, int indent, const char *key, double x, const char *how,
                     const struct spec_val *v)
{
    char num[40];
    snprintf(num, sizeof num, "%.12g", x);
    fprintf(w->f, "%*s%s: %s  # ESTIMATE, derived: %s; family default (%s): %s\n", indent, "", key,
            num, how, fam_name(w), v->source);
    w->derived++;
    w->from_family++;
    w->estimates++;
    if (w->sum != NULL)
        fprintf(w->sum, "  guessed  %-44s %s (%.90s)\n", key, num, how);
}

/* A level's energy a byte, when the config gets a power block and the family has it. */
static void line_energy(struct w *w, const struct spec_val *v)
{
    if (w->power && v->present)
        line_num(w, 4, "energy_pJ_per_byte", v->num, "family", NULL, v);
}

/* A figure outside the range its kind can have: a warning naming the likely
 * unit mistake. */
static void plausible(struct w *w, const char *field, const struct spec_val *v, double lo,
                      double hi, const char *unit)
{
    if (w->warn == NULL || !v->present || (v->num >= lo && v->num <= hi))
        return;
    const char *hint = "";
    if (v->num < lo && v->num * 1000 >= lo && v->num * 1000 <= hi)
        hint = " (given in a unit 1000x larger, e.g. TB/s for GB/s or PFLOPS for TFLOPS?)";
    else if (v->num > hi && v->num / 1000 >= lo && v->num / 1000 <= hi)
        hint = " (given in a unit 1000x smaller, e.g. MB/s for GB/s or GFLOPS for TFLOPS?)";
    else if (v->num < lo && v->num * 1024 >= lo && v->num * 1024 <= hi)
        hint = " (given in a unit 1024x larger?)";
    fprintf(w->warn, "%s:%d: warning: %s: %g %s is outside %g..%g, what this kind of figure "
                     "can be%s\n", w->s->path, v->line, field, v->num, unit, lo, hi, hint);
}

/* A unit mistake is the likeliest error in a spec: say so first. */
static void check_units(struct w *w)
{
    const struct spec *s = w->s;
    plausible(w, "boost_clock_MHz", &s->boost_clock_MHz, 100, 5000, "MHz");
    const char *t = s->mem_type.str;
    double blo = 10, bhi = 30000;
    if (strncmp(t, "HBM", 3) == 0)
        blo = 300, bhi = 30000;
    else if (strncmp(t, "GDDR", 4) == 0)
        blo = 100, bhi = 3000;
    else if (strstr(t, "DDR") != NULL)
        blo = 10, bhi = 1500;
    plausible(w, "memory.bandwidth_GBps", &s->mem_bandwidth_GBps, blo, bhi, "GB/s");
    plausible(w, "memory.capacity_GB", &s->mem_capacity_GB, 1, 4000, "GB");
    plausible(w, "l2_MiB", &s->l2_MiB, 0.25, 2048, "MiB");
    plausible(w, "llc_MiB", &s->llc_MiB, 1, 8192, "MiB");
    plausible(w, "smem_per_unit_KiB", &s->smem_per_unit_KiB, 8, 4096, "KiB");
    plausible(w, "host_link.bandwidth_GBps", &s->host_bandwidth_GBps, 1, 2000, "GB/s");
    plausible(w, "peer_link.bandwidth_GBps", &s->peer_bandwidth_GBps, 5, 10000, "GB/s");
    for (unsigned i = 0; i < SPEC_NDT; i++) {
        char field[48];
        snprintf(field, sizeof field, "dense_TFLOPS.%s", dt_keys[i]);
        plausible(w, field, &s->dense[i], 0.5, 100000, "TFLOPS");
        snprintf(field, sizeof field, "vector_TFLOPS.%s", dt_keys[i]);
        plausible(w, field, &s->vector[i], 0.05, 10000, "TFLOPS");
    }
}

/* The header comment, name, family and clock. */
static void write_head(struct w *w)
{
    const struct spec *s = w->s;
    const char *spec_base = strrchr(s->path, '/') ? strrchr(s->path, '/') + 1 : s->path;
    fprintf(w->f, "# %s (%s), generated by `strata new-chip` from configs/specs/%s and\n"
                  "# configs/specs/families/%s.yaml (docs/new-chip.md).  Change those and\n"
                  "# regenerate rather than editing this file.  Each value's comment says where\n"
                  "# it came from: the chip's data sheet, arithmetic on it (derived), or a\n"
                  "# default of the architecture (family), with that figure's source.\n",
            s->chip.str, s->architecture.str, spec_base, s->architecture.str);
    fprintf(w->f, "# Peak rates are per cycle at %g MHz, the clock the data sheet's peaks are\n"
                  "# quoted at, so strata info gives back the sheet's TFLOP/s.\n", w->mhz);
    line_str(w, 0, "name", s->name.str, NULL);
    fprintf(w->f, "family: gpu  # family default (%s): %s\n", fam_name(w), s->f_family.source);
    line_num(w, 0, "clock_MHz", w->mhz, "spec", NULL, &s->boost_clock_MHz);
    fprintf(w->f, "\ncompute:\n");
    line_num(w, 2, "units", w->units, "spec", NULL, &s->units);
}

/* compute: the peaks per cycle and unit, the matrix paths. */
static void write_compute(struct w *w)
{
    const struct spec *s = w->s;
    char how[200];
    /* data-sheet keys -> config dtypes */
    static const char *const cfg_dt[SPEC_NDT][2] = {
        {"nvfp4", "mxfp4"}, {"mxfp6", NULL},  {"fp8_e4m3", "fp8_e5m2"}, {"int8", NULL},
        {"int4", NULL},     {"fp16", NULL},   {"bf16", NULL},           {"tf32", NULL},
        {"fp32", NULL},     {"fp64", NULL}};
    const int amd = strcmp(s->vendor.str, "nvidia") != 0;
    const struct spec_val *tabs[3] = {s->dense, s->sparse, s->acc16};
    static const char *const tab_key[3] = {"matrix_flops_per_cycle_per_unit",
                                           "sparse_matrix_flops_per_cycle_per_unit",
                                           "fp16_accumulate_matrix_flops_per_cycle_per_unit"};
    static const char *const tab_src[3] = {"dense_TFLOPS", "sparse_TFLOPS", "fp16_accumulate_TFLOPS"};
    for (int k = 0; k < 3; k++) {
        int any = 0;
        for (unsigned i = 0; i < SPEC_NDT; i++)
            any |= tabs[k][i].present && s->dense[i].present;
        if (!any)
            continue;
        fprintf(w->f, "  %s:\n", tab_key[k]);
        for (unsigned i = 0; i < SPEC_NDT; i++) {
            if (!tabs[k][i].present || !s->dense[i].present)
                continue;
            for (int j = 0; j < 2; j++) {
                const char *name = cfg_dt[i][j];
                if (name == NULL || (amd && strcmp(name, "nvfp4") == 0))
                    continue;
                snprintf(how, sizeof how, "%s.%s %g TFLOPS / (%g units x %g MHz)", tab_src[k],
                         dt_keys[i], tabs[k][i].num, w->units, w->mhz);
                line_num(w, 4, name, tabs[k][i].num * 1e12 / (w->units * w->hz), "spec", how,
                         &tabs[k][i]);
            }
        }
    }
    fprintf(w->f, "  vector_flops_per_cycle_per_unit:\n");
    const double fp32 = s->vector[8].num * 1e12 / (w->units * w->hz);
    static const unsigned vec_order[] = {8, 9, 5, 6};   /* fp32, fp64, fp16, bf16 */
    for (size_t q = 0; q < sizeof vec_order / sizeof vec_order[0]; q++) {
        unsigned i = vec_order[q];
        if (s->vector[i].present) {
            snprintf(how, sizeof how, "vector_TFLOPS.%s %g TFLOPS / (%g units x %g MHz)",
                     dt_keys[i], s->vector[i].num, w->units, w->mhz);
            line_num(w, 4, dt_keys[i], s->vector[i].num * 1e12 / (w->units * w->hz), "spec", how,
                     &s->vector[i]);
        } else if (s->f_vector_ratio[i].present) {
            snprintf(how, sizeof how, "%g x the fp32 rate", s->f_vector_ratio[i].num);
            line_num(w, 4, dt_keys[i], fp32 * s->f_vector_ratio[i].num, "family", how,
                     &s->f_vector_ratio[i]);
        }
    }
    if (s->f_sfu.present)
        line_num(w, 2, "special_function_ops_per_cycle_per_unit", s->f_sfu.num, "family", NULL,
                 &s->f_sfu);
    if (s->f_cluster_mc.present)
        line_num(w, 2, "cluster_multicast_ctas", s->f_cluster_mc.num, "family", NULL, &s->f_cluster_mc);
    fprintf(w->f, "  matrix_paths:\n");
    for (unsigned i = 0; i < s->npaths; i++)
        line_num(w, 4, s->path_name[i], s->path_frac[i].num, "family", NULL, &s->path_frac[i]);
}

/* threads, and the levels from the registers to the DRAM. */
static void write_levels(struct w *w)
{
    const struct spec *s = w->s;
    char how[200];
    fprintf(w->f, "\nthreads:\n");
    line_num(w, 2, "max_threads_per_unit", s->f_max_threads.num, "family", NULL, &s->f_max_threads);
    line_num(w, 2, "max_ctas_per_unit", s->f_max_ctas.num, "family", NULL, &s->f_max_ctas);

    fprintf(w->f, "\nlevels:\n  - name: registers\n    kind: registers\n");
    line_num(w, 4, "capacity_KiB", s->f_registers_KiB.num, "family", NULL, &s->f_registers_KiB);
    fprintf(w->f, "  - name: %s\n    kind: scratchpad\n", s->f_smem_name.str);
    if (s->smem_per_unit_KiB.present)
        line_num(w, 4, "capacity_KiB", s->smem_per_unit_KiB.num, "spec", NULL, &s->smem_per_unit_KiB);
    else
        line_num(w, 4, "capacity_KiB", s->f_smem_KiB.num, "family", NULL, &s->f_smem_KiB);
    line_num(w, 4, "bandwidth_bytes_per_cycle", s->f_smem_bpc.num, "family", NULL, &s->f_smem_bpc);
    line_energy(w, &s->f_smem_energy);
    fprintf(w->f, "  - name: l2\n    kind: cache\n");
    if (s->l2_MiB.present)
        line_num(w, 4, "capacity_MiB", s->l2_MiB.num, "spec", NULL, &s->l2_MiB);
    else {
        snprintf(how, sizeof how, "%g MiB per unit x %g units", s->f_l2_MiB_per_unit.num, w->units);
        line_num(w, 4, "capacity_MiB", s->f_l2_MiB_per_unit.num * w->units, "family", how,
                 &s->f_l2_MiB_per_unit);
    }
    snprintf(how, sizeof how, "%g B/clk/unit x %g units x %g MHz", s->f_l2_bpc.num, w->units,
             w->mhz);
    line_num(w, 4, "bandwidth_GBps", s->f_l2_bpc.num * w->units * w->hz / 1e9, "family", how,
             &s->f_l2_bpc);
    line_num(w, 4, "latency_ns", s->f_l2_latency_ns.num, "family", NULL, &s->f_l2_latency_ns);
    line_num(w, 4, "port_bytes_per_cycle_per_unit", s->f_l2_port.num, "family", NULL, &s->f_l2_port);
    line_energy(w, &s->f_l2_energy);
    if (s->llc_MiB.present) {
        fprintf(w->f, "  - name: llc\n    kind: cache\n");
        line_num(w, 4, "capacity_MiB", s->llc_MiB.num, "spec", NULL, &s->llc_MiB);
        snprintf(how, sizeof how, "%g B/clk/unit x %g units x %g MHz", s->f_llc_bpc.num, w->units,
                 w->mhz);
        line_num(w, 4, "bandwidth_GBps", s->f_llc_bpc.num * w->units * w->hz / 1e9, "family", how,
                 &s->f_llc_bpc);
        line_num(w, 4, "latency_ns", s->f_llc_latency_ns.num, "family", NULL, &s->f_llc_latency_ns);
        line_num(w, 4, "port_bytes_per_cycle_per_unit", s->f_l2_port.num, "family", NULL,
                 &s->f_l2_port);
        line_energy(w, &s->f_llc_energy);
    }
    fprintf(w->f, "  - name: dram\n    kind: dram\n");
    line_str(w, 4, "type", s->mem_type.str, &s->mem_type);
    line_num(w, 4, "capacity_GB", s->mem_capacity_GB.num, "spec", NULL, &s->mem_capacity_GB);
    line_num(w, 4, "bandwidth_GBps", s->mem_bandwidth_GBps.num, "spec", NULL, &s->mem_bandwidth_GBps);
    line_num(w, 4, "latency_ns", s->f_dram_latency_ns.num, "family", NULL, &s->f_dram_latency_ns);
    line_energy(w, &s->f_dram_energy);
    fprintf(w->f, "    efficiency:\n");
    line_num(w, 6, "bandwidth_fraction", s->f_dram_frac.num, "family", NULL, &s->f_dram_frac);
    line_num(w, 6, "rw_turnaround_penalty", s->f_dram_rw.num, "family", NULL, &s->f_dram_rw);
    double loaded = fmax(s->f_dram_loaded_ns.num, s->f_dram_latency_ns.num);
    line_num(w, 6, "loaded_latency_ns", loaded, "family", NULL, &s->f_dram_loaded_ns);
}

/* The host link and the peer link. */
static void write_links(struct w *w)
{
    const struct spec *s = w->s;
    char how[200];
    /* the host link: PCIe per direction = GT/s x lanes x encoding / 8 */
    const char *hname = s->host_kind.present ? s->host_kind.str : "host";
    fprintf(w->f, "  - name: %s\n    kind: link\n    scope: host\n", hname);
    if (s->host_bandwidth_GBps.present) {
        line_num(w, 4, "bandwidth_GBps", s->host_bandwidth_GBps.num, "spec", NULL,
                 &s->host_bandwidth_GBps);
    } else {
        static const double gts[7] = {0, 2.5, 5, 8, 16, 32, 64};
        static const double enc[7] = {0, 0.8, 0.8, 128.0 / 130, 128.0 / 130, 128.0 / 130,
                                      242.0 / 256};
        unsigned g = (unsigned)s->host_gen.num;
        snprintf(how, sizeof how, "PCIe gen %u x%g: %g GT/s x %g lanes x %s / 8", g,
                 s->host_lanes.num, gts[g], s->host_lanes.num,
                 g <= 2 ? "8b/10b" : g <= 5 ? "128b/130b" : "242B/256B FLIT");
        line_num(w, 4, "bandwidth_GBps", gts[g] * s->host_lanes.num * enc[g] / 8.0, "spec", how,
                 &s->host_gen);
    }
    line_num(w, 4, "latency_ns", s->f_host_latency_ns.num, "family", NULL, &s->f_host_latency_ns);
    if (s->peer_links.present) {
        fprintf(w->f, "  - name: %s\n    kind: link\n    scope: system\n", s->peer_kind.str);
        line_num(w, 4, "ports", s->peer_links.num, "spec", NULL, &s->peer_links);
        snprintf(how, sizeof how, "%g GB/s per direction over %g links", s->peer_bandwidth_GBps.num,
                 s->peer_links.num);
        line_num(w, 4, "bandwidth_GBps", s->peer_bandwidth_GBps.num / s->peer_links.num, "spec",
                 how, &s->peer_bandwidth_GBps);
        line_num(w, 4, "latency_ns", s->f_peer_latency_ns.num, "family", NULL, &s->f_peer_latency_ns);
    }
}

/* Whether the config gets a power block: tdp_W, an idle power (the spec's or the family's
 * share of tdp_W) and both pipes' shares.  What is missing is a warning, as is a memory
 * type the family has no DRAM energy for (the block is still written: a run's energy then
 * leaves the DRAM out). */
static void plan_power(struct w *w)
{
    const struct spec *s = w->s;
    if (!s->tdp_W.present)
        return;
    const int idle = s->idle_W.present || s->f_idle_frac.present;
    w->power = idle && s->f_matrix_share.present && s->f_vector_share.present;
    if (!w->power) {
        if (w->warn != NULL)
            fprintf(w->warn, "%s:%d: warning: tdp_W: no power block written: family file %s gives "
                             "no %s\n", s->path, s->tdp_W.line, s->family_path,
                    !idle ? "idle_fraction_of_tdp (and the spec no idle_W)"
                    : !s->f_matrix_share.present ? "matrix_pipe_share_of_dynamic"
                                                 : "vector_pipe_share_of_dynamic");
        return;
    }
    w->idle_W = s->idle_W.present ? s->idle_W.num : s->f_idle_frac.num * s->tdp_W.num;
    if (!s->f_dram_energy.present && w->warn != NULL)
        fprintf(w->warn, "%s:%d: warning: memory.type: family file %s has no "
                         "dram_energy_pJ_per_byte for '%s' (it has: %s); the config gets no DRAM "
                         "energy, so a run's energy leaves the DRAM out\n", s->path, s->mem_type.line,
                s->family_path, s->mem_type.str,
                s->dram_energy_types[0] ? s->dram_energy_types : "none");
}

/* power: the data sheet's tdp_W as the limit; the idle power the spec's idle_W or the
 * family's share of tdp_W; each pipe at its full rate draws the family's share of the
 * dynamic power (tdp_W - idle_W), spread over the units' cycles at the boost clock. */
static void write_power(struct w *w)
{
    const struct spec *s = w->s;
    char how[200];
    const double tdp = s->tdp_W.num, dyn = tdp - w->idle_W;
    fprintf(w->f, "\npower: # docs/energy.md 'Estimated power blocks': limit_W is the data "
                  "sheet's tdp_W; the rest ESTIMATES from the family's defaults\n");
    if (s->idle_W.present)
        line_num(w, 2, "idle_W", s->idle_W.num, "spec", NULL, &s->idle_W);
    else {
        snprintf(how, sizeof how, "idle_fraction_of_tdp %g x tdp_W %g W", s->f_idle_frac.num, tdp);
        line_est(w, 2, "idle_W", w->idle_W, how, &s->f_idle_frac);
    }
    line_num(w, 2, "limit_W", tdp, "spec", NULL, &s->tdp_W);
    const struct spec_val *share[2] = {&s->f_matrix_share, &s->f_vector_share};
    static const char *const key[2] = {"matrix_pipe_pJ_per_cycle", "vector_pipe_pJ_per_cycle"};
    for (int i = 0; i < 2; i++) {
        snprintf(how, sizeof how, "%g x (tdp_W %g - idle_W %.4g) W / (%g units x %g MHz)",
                 share[i]->num, tdp, w->idle_W, w->units, w->mhz);
        line_est(w, 2, key[i], share[i]->num * dyn / (w->units * w->hz) * 1e12, how, share[i]);
    }
}

void spec_write_config(const struct spec *s, FILE *f, FILE *warn, FILE *summary)
{
    struct w w = {.f = f, .warn = warn, .sum = summary, .s = s, .units = s->units.num,
                  .mhz = s->boost_clock_MHz.num, .hz = s->boost_clock_MHz.num * 1e6};
    check_units(&w);
    plan_power(&w);
    write_head(&w);
    write_compute(&w);
    write_levels(&w);
    write_links(&w);
    fprintf(f, "\nlaunch:\n");
    line_num(&w, 2, "kernel_overhead_ns", s->f_kernel_overhead_ns.num, "family", NULL,
             &s->f_kernel_overhead_ns);
    fprintf(f, "\nefficiency:\n");
    line_num(&w, 2, "matrix_pipe_fraction", s->f_matrix_frac.num, "family", NULL, &s->f_matrix_frac);
    line_num(&w, 2, "vector_pipe_fraction", s->f_vector_frac.num, "family", NULL, &s->f_vector_frac);
    line_num(&w, 2, "inflight_bytes_per_unit", s->f_inflight.num, "family", NULL, &s->f_inflight);
    if (w.power)
        write_power(&w);
    if (summary != NULL)
        fprintf(summary, "new-chip %s: %u values from the data sheet, %u derived from it, %u "
                         "family defaults (%s), of which %u ESTIMATE and %u UNSOURCED (listed "
                         "above)\n", s->name.str, w.from_sheet, w.derived, w.from_family,
                s->architecture.str, w.estimates, w.unsourced);
}
