/* cfg.c: loading chip configs and system files (cfg_load, sys_load), with
 * the overrides (--set, overlays) written into their trees first.  The
 * file is read by yconf.c and a chip's tree checked and compiled by
 * chipcfg.c; *out is written only on success.
 */
#include "cfg.h"

#include "check.h"
#include "chipcfg.h"
#include "numfmt.h"
#include "system.h"
#include "units.h"
#include "yconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- overrides */

/* A key's unit suffix: what kind of quantity it holds and the SI value of
 * one of its units. */
static const struct key_unit {
    const char *suffix;
    enum qty_kind kind;
    double scale;
} key_units[] = {
    {"_GBps", QK_BANDWIDTH, 1e9}, {"_bytes_per_cycle", QK_PER_CYCLE, 1},
    {"_KiB", QK_BYTES, 1024.0},   {"_MiB", QK_BYTES, 1048576.0},
    {"_GB", QK_BYTES, 1e9},       {"_GiB", QK_BYTES, 1073741824.0},
    {"_MHz", QK_FREQ, 1e6},       {"_ns", QK_TIME, 1e-9},
    {"_us", QK_TIME, 1e-6},
};
enum { NKEY_UNITS = sizeof key_units / sizeof key_units[0] };

/* The unit suffix key ends with, or NULL. */
static const struct key_unit *key_unit_of(const char *key)
{
    size_t n = strlen(key);
    for (int i = 0; i < NKEY_UNITS; i++) {
        size_t m = strlen(key_units[i].suffix);
        if (n > m && strcmp(key + n - m, key_units[i].suffix) == 0)
            return &key_units[i];
    }
    return NULL;
}

/* Is key in the NULL-ended list? */
static int in_list(const char *const *list, const char *key)
{
    for (; list != NULL && *list != NULL; list++)
        if (strcmp(*list, key) == 0)
            return 1;
    return 0;
}

static int set_fail(struct yconf *c, const struct cfg_set *s, enum diag_code code,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int set_fail(struct yconf *c, const struct cfg_set *s, enum diag_code code,
                    const char *fmt, ...)
{
    char where[300], msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (strcmp(s->origin, "--set") == 0)
        snprintf(where, sizeof where, "--set %s=%s", s->key, s->value);
    else
        snprintf(where, sizeof where, "%s", s->origin);
    diag_set(c->d, code, where, 0, s->key, "%s", msg);
    return -1;
}

/* Child mapping `name` of map, made empty when absent. */
static int child_map(struct yconf *c, int map, const char *name, int line)
{
    int v = yconf_lookup(c, map, name);
    if (v >= 0)
        return c->nodes[v].kind == YCONF_MAPPING ? v : -1;
    int k = yconf_new_node(c, YCONF_SCALAR, line, map);
    if (k < 0)
        return -2;
    c->nodes[k].plain = 1;
    yconf_set_text(c, k, name, strlen(name));
    int m = yconf_new_node(c, YCONF_MAPPING, line, map);
    return m < 0 ? -2 : m;
}

/* Writes override s (number k of the load) into the tree under root.  Its
 * nodes get line -(k + 1), so a later check that fails on it can name it. */
static int apply_set(struct yconf *c, int root, const struct cfg_set *s, int k,
                     double *read_out, char *read_key, size_t read_n)
{
    const int line = -(k + 1);
    char parts[4][96];
    int np = 0;
    const char *p = s->key;
    while (np < 4) {
        size_t n = strcspn(p, ".");
        if (n == 0 || n >= sizeof parts[0])
            return set_fail(c, s, DIAG_E_USAGE,
                            "a key is words joined by '.', like dram.bandwidth or compute.units");
        memcpy(parts[np], p, n);
        parts[np++][n] = '\0';
        if (p[n] == '\0')
            break;
        p += n + 1;
    }
    if (*p != '\0' && np == 4 && strchr(p, '.') != NULL)
        return set_fail(c, s, DIAG_E_USAGE, "more than 4 parts in a key");

    /* where the leaf lives, and which keys are allowed there */
    int map = root, first = 0;
    const char *const *allowed = chipcfg_keys("");
    int dram = 0;
    if (np == 1) {
        if (strcmp(parts[0], "name") == 0 || strcmp(parts[0], "family") == 0 ||
            strcmp(parts[0], "levels") == 0)
            return set_fail(c, s, DIAG_E_UNSUPPORTED,
                            "cannot be set; a variant is named after its chip and overrides");
    } else {
        int found = 0;
        if (chipcfg_keys(parts[0]) != NULL) {
            found = 1;
            map = read_out != NULL ? yconf_lookup(c, root, parts[0]) : child_map(c, root, parts[0], line);
            if (read_out != NULL && map < 0)
                return set_fail(c, s, DIAG_E_MISSING, "the config has no section %s", parts[0]);
            allowed = chipcfg_keys(parts[0]);
        }
        /* a level by its name, else the first level of that kind (so
         * `dram.efficiency.bandwidth_fraction` finds an MI210's `hbm`) */
        for (int by_kind = 0; by_kind < 2 && !found; by_kind++) {
            int seq = yconf_lookup(c, root, "levels");
            for (int m = seq >= 0 && c->nodes[seq].kind == YCONF_SEQUENCE ? c->nodes[seq].first : -1;
                 m >= 0 && !found; m = c->nodes[m].next) {
                int nv = c->nodes[m].kind == YCONF_MAPPING ? yconf_lookup(c, m, by_kind ? "kind" : "name") : -1;
                if (nv < 0 || c->nodes[nv].kind != YCONF_SCALAR ||
                    strcmp(yconf_text(c, nv), parts[0]) != 0)
                    continue;
                found = 1;
                map = m;
                int kv = yconf_lookup(c, m, "kind");
                allowed = NULL;
                for (int kk = 0; kv >= 0 && kk < LK_COUNT; kk++)
                    if (strcmp(yconf_text(c, kv), level_kind_name((enum level_kind)kk)) == 0) {
                        allowed = chipcfg_level_keys((enum level_kind)kk);
                        dram = kk == LK_DRAM;
                    }
            }
        }
        if (!found) {
            char names[400] = "";
            size_t used = 0;
            int seq = yconf_lookup(c, root, "levels");
            for (int m = seq >= 0 && c->nodes[seq].kind == YCONF_SEQUENCE ? c->nodes[seq].first : -1;
                 m >= 0 && used < sizeof names; m = c->nodes[m].next) {
                int nv = c->nodes[m].kind == YCONF_MAPPING ? yconf_lookup(c, m, "name") : -1;
                if (nv >= 0)
                    used += (size_t)snprintf(names + used, sizeof names - used, "%s, ",
                                             yconf_text(c, nv));
            }
            return set_fail(c, s, DIAG_E_UNKNOWN_KEY,
                            "'%s' is neither a level of this chip nor a section; known: %s"
                            "compute, threads, systolic, launch, collectives, efficiency, power",
                            parts[0], names);
        }
        if (map == -1)
            return set_fail(c, s, DIAG_E_TYPE, "is not a mapping in the config");
        if (map < -1)
            return -1;
        first = 1;
        /* inner mappings: compute.matrix_flops_per_cycle_per_unit.bf16,
         * dram.efficiency.bandwidth_fraction */
        for (int i = first; i < np - 1; i++) {
            if (!in_list(allowed, parts[i]) && allowed != NULL)
                return set_fail(c, s, DIAG_E_UNKNOWN_KEY, "no key '%s' here", parts[i]);
            if (read_out != NULL) {
                map = yconf_lookup(c, map, parts[i]);
                if (map < 0)
                    return set_fail(c, s, DIAG_E_MISSING, "the config has no '%s' here", parts[i]);
            } else {
                map = child_map(c, map, parts[i], line);
            }
            if (map == -1)
                return set_fail(c, s, DIAG_E_TYPE, "'%s' is not a mapping in the config",
                                parts[i]);
            if (map < -1)
                return -1;
            allowed = strcmp(parts[i], "efficiency") == 0 ? chipcfg_efficiency_keys(dram ? LK_DRAM : LK_LINK)
                      : NULL; /* dtype or instruction names: checked by the loader */
        }
    }
    const char *leaf = parts[np - 1];
    if (read_out != NULL) {
        /* read mode: the leaf as it is in the file, under any unit suffix */
        for (int kk = c->nodes[map].first; kk >= 0; kk = yconf_next_key(c, kk)) {
            const char *t = yconf_text(c, kk);
            const struct key_unit *tu = key_unit_of(t);
            size_t stem = strlen(t) - (tu ? strlen(tu->suffix) : 0);
            if (strcmp(t, leaf) != 0 && !(tu != NULL && strlen(leaf) == stem &&
                                          strncmp(t, leaf, stem) == 0))
                continue;
            int vn = c->nodes[kk].next;
            if (c->nodes[vn].kind != YCONF_SCALAR || num_parse(yconf_text(c, vn), read_out) != 0)
                return set_fail(c, s, DIAG_E_TYPE, "'%s' is not a number in the config", t);
            char full[400] = "";
            size_t used = 0;
            for (int i = 0; i + 1 < np; i++)
                used += (size_t)snprintf(full + used, sizeof full - used, "%s.", parts[i]);
            snprintf(full + used, sizeof full - used, "%s", t);
            snprintf(read_key, read_n, "%s", full);
            return 0;
        }
        return set_fail(c, s, DIAG_E_MISSING, "the config gives no value for %s", s->key);
    }

    struct qty q;
    if (qty_parse(s->value, &q) != 0)
        return set_fail(c, s, DIAG_E_TYPE,
                        "'%s' is not a number with a unit (like 4.8TB/s, 100MiB, 1.98GHz, 650ns, "
                        "0.9)", s->value);

    /* the leaf's key in the file: as given, or the stem plus the unit
     * suffix the value's unit calls for */
    char key[128];
    const struct key_unit *ku = key_unit_of(leaf);
    if (ku != NULL || q.kind == QK_NONE) {
        snprintf(key, sizeof key, "%s", leaf);
        if (ku == NULL) {
            /* a stem with no unit: only fine if the key takes plain numbers */
            int stem_has_units = 0;
            for (int i = 0; i < NKEY_UNITS && allowed != NULL; i++) {
                char cand[128];
                snprintf(cand, sizeof cand, "%s%s", leaf, key_units[i].suffix);
                if (in_list(allowed, cand))
                    stem_has_units = 1;
            }
            if (stem_has_units)
                return set_fail(c, s, DIAG_E_TYPE,
                                "'%s' needs a unit (e.g. 4.8TB/s, 100MiB, 1.98GHz, 650ns)",
                                s->value);
        }
    } else {
        key[0] = '\0';
        for (int i = 0; i < NKEY_UNITS && key[0] == '\0'; i++) {
            if (key_units[i].kind != q.kind)
                continue;
            char cand[128];
            snprintf(cand, sizeof cand, "%s%s", leaf, key_units[i].suffix);
            /* a DRAM's capacity is in GB, others' in KiB */
            if (q.kind == QK_BYTES && dram != (strcmp(key_units[i].suffix, "_GB") == 0))
                continue;
            if (allowed == NULL || in_list(allowed, cand)) {
                snprintf(key, sizeof key, "%s", cand);
                ku = &key_units[i];
            }
        }
        if (key[0] == '\0') {
            for (int i = 0; i < NKEY_UNITS && allowed != NULL; i++) {
                char cand[128];
                snprintf(cand, sizeof cand, "%s%s", leaf, key_units[i].suffix);
                if (in_list(allowed, cand))
                    return set_fail(c, s, DIAG_E_TYPE, "expects %s, got %s",
                                    qty_kind_what(key_units[i].kind), qty_kind_what(q.kind));
            }
            return set_fail(c, s, DIAG_E_UNKNOWN_KEY, "no key '%s' here takes %s", leaf,
                            qty_kind_what(q.kind));
        }
    }
    if (ku != NULL && q.kind != QK_NONE && q.kind != ku->kind)
        return set_fail(c, s, DIAG_E_TYPE, "expects %s, got %s", qty_kind_what(ku->kind),
                        qty_kind_what(q.kind));
    double x = q.kind == QK_NONE ? q.mantissa : q.mantissa * (q.scale / ku->scale);
    char num[40];
    snprintf(num, sizeof num, "%.15g", x);

    /* the same quantity under another unit is replaced, not duplicated */
    const struct key_unit *want = key_unit_of(key);
    size_t stem = strlen(key) - (want ? strlen(want->suffix) : 0);
    int kn = -1;
    for (int kk = c->nodes[map].first; kk >= 0; kk = yconf_next_key(c, kk)) {
        const char *t = yconf_text(c, kk);
        const struct key_unit *tu = key_unit_of(t);
        if (strcmp(t, key) == 0 ||
            (want != NULL && tu != NULL && tu->kind == want->kind &&
             strlen(t) - strlen(tu->suffix) == stem && strncmp(t, key, stem) == 0) ||
            (want != NULL && tu != NULL && strlen(t) - strlen(tu->suffix) == stem &&
             strncmp(t, key, stem) == 0 &&
             ((tu->kind == QK_PER_CYCLE && want->kind == QK_BANDWIDTH) ||
              (tu->kind == QK_BANDWIDTH && want->kind == QK_PER_CYCLE)))) {
            kn = kk;
            break;
        }
    }
    if (kn < 0) {
        kn = yconf_new_node(c, YCONF_SCALAR, line, map);
        if (kn < 0 || yconf_new_node(c, YCONF_SCALAR, line, map) < 0)
            return -1;
    }
    c->nodes[kn].plain = 1;
    c->nodes[kn].line = line;
    yconf_set_text(c, kn, key, strlen(key));
    int vn = c->nodes[kn].next;
    if (c->nodes[vn].kind != YCONF_SCALAR)
        return set_fail(c, s, DIAG_E_TYPE, "'%s' is a section in the config, not a value",
                        key);
    c->nodes[vn].plain = 1;
    c->nodes[vn].line = line;
    yconf_set_text(c, vn, num, strlen(num));
    return 0;
}

/* Applies sets to the tree; on a later failure map a line -(k + 1) back
 * to override k. */
static int apply_sets(struct yconf *c, int root, const struct cfg_sets *sets)
{
    if (sets == NULL)
        return 0;
    if (c->nodes[root].kind != YCONF_MAPPING)
        return 0; /* chipcfg_fill reports it */
    for (unsigned k = 0; k < sets->n; k++)
        if (apply_set(c, root, &sets->set[k], (int)k, NULL, NULL, 0) != 0)
            return -1;
    return 0;
}

static void name_override(struct diag *d, const struct cfg_sets *sets)
{
    if (sets == NULL || d == NULL || d->line >= 0)
        return;
    unsigned k = (unsigned)(-d->line - 1);
    if (k >= sets->n)
        return;
    const struct cfg_set *s = &sets->set[k];
    if (strcmp(s->origin, "--set") == 0)
        snprintf(d->file, sizeof d->file, "--set %s=%s", s->key, s->value);
    else
        snprintf(d->file, sizeof d->file, "%s", s->origin);
    d->line = 0;
}

/* The variant's name: chip[key=value,key=value]. */
static void name_variant(struct hw_config *h, const struct cfg_sets *sets)
{
    h->variant[0] = '\0';
    if (sets == NULL || sets->n == 0)
        return;
    size_t used = (size_t)snprintf(h->variant, sizeof h->variant, "%s[", h->name);
    for (unsigned k = 0; k < sets->n && used < sizeof h->variant; k++)
        used += (size_t)snprintf(h->variant + used, sizeof h->variant - used, "%s%s=%s",
                                 k ? "," : "", sets->set[k].key, sets->set[k].value);
    if (used + 2 <= sizeof h->variant)
        memcpy(h->variant + used, "]", 2);
    else
        memcpy(h->variant + sizeof h->variant - 5, "...]", 5);
}

int cfg_sets_add(struct cfg_sets *s, const char *kv, const char *origin, struct diag *d)
{
    const char *eq = strchr(kv, '=');
    const char *where = origin[0] ? origin : "--set";
    if (eq == NULL || eq == kv || eq[1] == '\0')
        return diag_set(d, DIAG_E_USAGE, where, 0, "", "expected KEY=VALUE (like "
                        "dram.bandwidth=4.8TB/s), got '%.80s'", kv);
    size_t kl = (size_t)(eq - kv), vl = strlen(eq + 1);
    struct cfg_set one;
    memset(&one, 0, sizeof one);
    if (kl >= sizeof one.key || vl >= sizeof one.value)
        return diag_set(d, DIAG_E_RANGE, where, 0, "", "key or value too long in '%.80s'", kv);
    memcpy(one.key, kv, kl);
    memcpy(one.value, eq + 1, vl);
    snprintf(one.origin, sizeof one.origin, "%s", where);
    for (unsigned k = 0; k < s->n; k++)
        if (strcmp(s->set[k].key, one.key) == 0) {
            s->set[k] = one;
            return 0;
        }
    if (s->n >= CFG_MAX_SETS)
        return diag_set(d, DIAG_E_RANGE, where, 0, one.key, "more than %d overrides",
                        CFG_MAX_SETS);
    s->set[s->n++] = one;
    return 0;
}

int cfg_load(const char *path, struct hw_config *out, struct diag *d)
{
    return cfg_load_with(path, NULL, out, d);
}

int cfg_load_with(const char *path, const struct cfg_sets *sets, struct hw_config *out,
                  struct diag *d)
{
    if (path == NULL || out == NULL)
        return diag_set(d, DIAG_E_USAGE, "", 0, "", "cfg_load: path and out are required");
    /* one reader for both kinds of file: sys_load gives a chip config's
     * contents in s.chip */
    struct hw_system s;
    int rc = sys_load_with(path, sets, &s, d);
    if (rc < 0)
        return -1;
    if (rc == 0) {
        diag_set(d, DIAG_E_UNSUPPORTED, path, 0, "chip",
                 "a system file (%u devices of %s) where a chip config is needed", s.ndevices,
                 s.chip.name);
        sys_free(&s);
        return -1;
    }
    *out = s.chip;
    return 0;
}

/* ---------------------------------------------------------------- systems */

static const char *const sys_top_keys[] = {"name", "chip", "devices", "nodes", "links",
                                            "unified_bandwidth_GBps", NULL};
static const char *const sys_node_keys[] = {"name", "kind", "bandwidth_GBps", "nvls", NULL};
static const char *const sys_link_keys[] = {
    "name", "level", "from", "to", "bandwidth_GBps", "latency_ns", "efficiency", "forward",
    "transport", NULL};

/* A node name: a device, switch or host is [A-Za-z0-9_.-]+. */
static int check_node_name(struct yconf *c, int v, const char *field, const char *s)
{
    if (s[0] == '\0' || strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                  "0123456789_.-") != strlen(s))
        return diag_set(c->d, DIAG_E_RANGE, c->path, c->nodes[v].line, field,
                        "'%s': a name is letters, digits, '_', '.' and '-'", s);
    return 0;
}

/* Scalar node v as a string into buf (size bytes). */
static int scalar_string(struct yconf *c, int v, const char *field, char *buf, size_t size)
{
    const struct yconf_node *n = &c->nodes[v];
    if (n->kind != YCONF_SCALAR)
        return diag_set(c->d, DIAG_E_TYPE, c->path, n->line, field, "expected a name, got %s",
                        yconf_kind_name(c, v));
    if (n->len == 0 || n->len >= size || strlen(yconf_text(c, v)) != n->len)
        return diag_set(c->d, DIAG_E_RANGE, c->path, n->line, field,
                        "a name of 1 to %zu characters, got '%.40s'", size - 1, yconf_text(c, v));
    memcpy(buf, yconf_text(c, v), n->len + 1);
    return check_node_name(c, v, field, buf);
}

static uint64_t name_hash(const char *p)
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (; *p; p++)
        h = (h ^ (unsigned char)*p) * UINT64_C(1099511628211);
    return h ^ (h >> 31);
}

/* The system's node names: node index + 1 by hash, 0 = empty. */
struct names {
    uint32_t *nh;
    uint32_t cap;       /* a power of two, more than twice the nodes */
};

/* The node called name, or -1: a hash of the names (a linear scan per link
 * end was most of loading a 2048-node cluster). */
static int node_find(const struct names *nh, const struct hw_system *s, const char *name)
{
    if (nh->nh == NULL)
        return -1;
    for (uint32_t h = (uint32_t)name_hash(name) & (nh->cap - 1); nh->nh[h] != 0;
         h = (h + 1) & (nh->cap - 1))
        if (strcmp(s->nodes[nh->nh[h] - 1].name, name) == 0)
            return (int)(nh->nh[h] - 1);
    return -1;
}

static void node_hash_put(struct names *nh, uint32_t cap, const struct hw_system *s, uint32_t i)
{
    uint32_t h = (uint32_t)name_hash(s->nodes[i].name) & (cap - 1);
    while (nh->nh[h] != 0)
        h = (h + 1) & (cap - 1);
    nh->nh[h] = i + 1;
}

static uint32_t sys_add_node(struct names *nh, struct hw_system *s, uint32_t *cap,
                             const char *name, enum sys_node_kind kind, int line)
{
    if (s->nnodes == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        s->nodes = sim_xrealloc(s->nodes, *cap * sizeof *s->nodes);
    }
    struct sys_node *n = &s->nodes[s->nnodes];
    memset(n, 0, sizeof *n);
    snprintf(n->name, sizeof n->name, "%s", name);
    n->kind = kind;
    n->line = line;
    uint32_t idx = s->nnodes++;
    if (2 * (uint64_t)s->nnodes >= nh->cap) {     /* grow and rehash */
        uint32_t ncap = nh->cap ? 2 * nh->cap : 64;
        while (2 * (uint64_t)s->nnodes >= ncap)
            ncap *= 2;
        free(nh->nh);
        nh->nh = sim_xcalloc(ncap, sizeof *nh->nh);
        nh->cap = ncap;
        for (uint32_t k = 0; k < s->nnodes; k++)
            node_hash_put(nh, ncap, s, k);
    } else {
        node_hash_put(nh, nh->cap, s, idx);
    }
    return idx;
}

/* The node a link end names: an error unless it exists. */
static int sys_end(struct yconf *c, const struct names *nh, const struct hw_system *s, int v,
                   const char *field, uint32_t *out)
{
    char name[SYS_NAME_MAX];
    if (scalar_string(c, v, field, name, sizeof name) != 0)
        return -1;
    int i = node_find(nh, s, name);
    if (i < 0)
        return diag_set(c->d, DIAG_E_UNKNOWN_NAME, c->path, c->nodes[v].line, field,
                        "no device or node '%s' in this system (a link to nowhere)", name);
    *out = (uint32_t)i;
    return 0;
}

static int fill_system_names(struct yconf *c, int root, const struct cfg_sets *sets,
                             struct hw_system *s, struct names *nh)
{
    uint32_t ncap = 0, lcap = 0;
    char field[96];
    if (yconf_check_keys(c, root, "", sys_top_keys) != 0 ||
        yconf_get_string(c, root, "", "name", 1, s->name, sizeof s->name) != 0)
        return -1;
    /* the chip, relative to this file's folder */
    char chip[512], full[1100];
    if (yconf_get_string(c, root, "", "chip", 1, chip, sizeof chip) != 0)
        return -1;
    const char *slash = strrchr(c->path, '/');
    if (chip[0] == '/' || slash == NULL)
        snprintf(full, sizeof full, "%s", chip);
    else
        snprintf(full, sizeof full, "%.*s/%s", (int)(slash - c->path), c->path, chip);
    struct diag cd;
    memset(&cd, 0, sizeof cd);
    if (cfg_load_with(full, sets, &s->chip, &cd) != 0) {
        if (cd.code == DIAG_E_IO)
            return diag_set(c->d, DIAG_E_IO, c->path, c->nodes[yconf_lookup(c, root, "chip")].line,
                            "chip", "cannot load '%s': %s", full, cd.msg);
        *c->d = cd;     /* the chip's own error, with its own file and line */
        return -1;
    }
    double ub;
    int urc = yconf_get_number(c, root, "", "unified_bandwidth_GBps", YCONF_POS, 0, &ub);
    if (urc < 0)
        return -1;
    if (urc == 0 && !cfg_dram(&s->chip)->unified)
        return diag_set(c->d, DIAG_E_RANGE, c->path,
                        c->nodes[yconf_lookup(c, root, "unified_bandwidth_GBps")].line,
                        "unified_bandwidth_GBps", "the chip's DRAM is not unified (dram unified: true)");
    if (urc == 0)
        s->unified_bw_bytes_per_s = ub * 1e9;
    /* devices: a count (gpu0, gpu1, ...) or a list of names */
    int dv = yconf_lookup(c, root, "devices");
    if (dv < 0)
        return diag_set(c->d, DIAG_E_MISSING, c->path, c->nodes[root].line, "devices",
                        "required: a count or a list of device names");
    if (c->nodes[dv].kind == YCONF_SEQUENCE) {
        int i = 0;
        for (int m = c->nodes[dv].first; m >= 0; m = c->nodes[m].next, i++) {
            char name[SYS_NAME_MAX];
            snprintf(field, sizeof field, "devices[%d]", i);
            if (scalar_string(c, m, field, name, sizeof name) != 0)
                return -1;
            int prev = node_find(nh, s, name);
            if (prev >= 0)
                return diag_set(c->d, DIAG_E_DUPLICATE, c->path, c->nodes[m].line, field,
                                "duplicate device name '%s'", name);
            sys_add_node(nh, s, &ncap, name, SN_DEVICE, c->nodes[m].line);
        }
    } else {
        double x;
        if (yconf_number(c, dv, "devices", YCONF_COUNT, &x) != 0)
            return -1;
        if (x > 65536)
            return diag_set(c->d, DIAG_E_RANGE, c->path, c->nodes[dv].line, "devices",
                            "at most 65536 devices, got %.0f", x);
        for (uint32_t i = 0; i < (uint32_t)x; i++) {
            char name[SYS_NAME_MAX];
            snprintf(name, sizeof name, "gpu%u", i);
            sys_add_node(nh, s, &ncap, name, SN_DEVICE, c->nodes[dv].line);
        }
    }
    s->ndevices = s->nnodes;
    if (s->ndevices == 0)
        return diag_set(c->d, DIAG_E_RANGE, c->path, c->nodes[dv].line, "devices",
                        "a system needs at least one device");
    /* other nodes */
    int nv = yconf_lookup(c, root, "nodes");
    if (nv >= 0 && c->nodes[nv].kind != YCONF_SEQUENCE)
        return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[nv].line, "nodes",
                        "expected a list of {name, kind, bandwidth_GBps}, got %s", yconf_kind_name(c, nv));
    int i = 0;
    for (int m = nv >= 0 ? c->nodes[nv].first : -1; m >= 0; m = c->nodes[m].next, i++) {
        snprintf(field, sizeof field, "nodes[%d]", i);
        if (c->nodes[m].kind != YCONF_MAPPING)
            return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[m].line, field,
                            "expected a mapping {name, kind}, got %s", yconf_kind_name(c, m));
        char name[SYS_NAME_MAX], kind[16];
        if (yconf_check_keys(c, m, field, sys_node_keys) != 0 ||
            yconf_get_string(c, m, field, "name", 1, name, sizeof name) != 0 ||
            check_node_name(c, yconf_lookup(c, m, "name"), field, name) != 0 ||
            yconf_get_string(c, m, field, "kind", 1, kind, sizeof kind) != 0)
            return -1;
        int prev = node_find(nh, s, name);
        if (prev >= 0)
            return diag_set(c->d, DIAG_E_DUPLICATE, c->path, c->nodes[m].line, field,
                            "'%s' is already a %s (line %d)", name,
                            sys_node_kind_name(s->nodes[prev].kind), s->nodes[prev].line);
        enum sys_node_kind k;
        if (strcmp(kind, "switch") == 0)
            k = SN_SWITCH;
        else if (strcmp(kind, "host") == 0)
            k = SN_HOST;
        else
            return diag_set(c->d, DIAG_E_UNKNOWN_NAME, c->path,
                            c->nodes[yconf_lookup(c, m, "kind")].line, field,
                            "unknown node kind '%s'; known: switch, host (devices come from "
                            "`devices`)", kind);
        uint32_t ni = sys_add_node(nh, s, &ncap, name, k, c->nodes[m].line);
        double x;
        int rc = yconf_get_number(c, m, field, "bandwidth_GBps", YCONF_POS, 0, &x);
        if (rc < 0)
            return -1;
        if (rc == 0)
            s->nodes[ni].bw_bytes_per_s = x * 1e9;
        char nvs[8] = "";
        if (yconf_get_string(c, m, field, "nvls", 0, nvs, sizeof nvs) != 0)
            return -1;
        int nvls = strcmp(nvs, "true") == 0;
        if (!nvls && nvs[0] != '\0' && strcmp(nvs, "false") != 0)
            return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[yconf_lookup(c, m, "nvls")].line, field,
                            "nvls: expected true or false, got '%s'", nvs);
        if (nvls && k != SN_SWITCH)
            return diag_set(c->d, DIAG_E_RANGE, c->path, c->nodes[yconf_lookup(c, m, "nvls")].line, field,
                            "nvls (in-switch reduction) is a property of a switch, not of a %s",
                            kind);
        s->nodes[ni].nvls = (uint8_t)nvls;
        if (s->nnodes > SYS_MAX_NODES)
            return diag_set(c->d, DIAG_E_RANGE, c->path, c->nodes[m].line, "nodes",
                            "more than %d nodes", SYS_MAX_NODES);
    }
    /* links */
    int lv = yconf_lookup(c, root, "links");
    if (lv >= 0 && c->nodes[lv].kind != YCONF_SEQUENCE)
        return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[lv].line, "links",
                        "expected a list of links, got %s", yconf_kind_name(c, lv));
    i = 0;
    for (int m = lv >= 0 ? c->nodes[lv].first : -1; m >= 0; m = c->nodes[m].next, i++) {
        snprintf(field, sizeof field, "links[%d]", i);
        if (c->nodes[m].kind != YCONF_MAPPING)
            return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[m].line, field,
                            "expected a mapping {level, from, to, ...}, got %s", yconf_kind_name(c, m));
        struct sys_link tpl;
        memset(&tpl, 0, sizeof tpl);
        char level[HW_LEVEL_NAME];
        double bw, eff = 1.0;
        if (yconf_check_keys(c, m, field, sys_link_keys) != 0 ||
            yconf_get_string(c, m, field, "level", 1, level, sizeof level) != 0)
            return -1;
        int li = cfg_level_index(&s->chip, level);
        char lf[112];
        yconf_field(lf, sizeof lf, field, "level");
        if (li < 0 || s->chip.level[li].kind != LK_LINK)
            return diag_set(c->d, DIAG_E_UNKNOWN_NAME, c->path,
                            c->nodes[yconf_lookup(c, m, "level")].line, lf,
                            "'%s' is not a link level of %s (its links: %s%s%s)", level,
                            s->chip.name, s->chip.level[s->chip.lv_host].name,
                            s->chip.lv_peer >= 0 ? ", " : "",
                            s->chip.lv_peer >= 0 ? s->chip.level[s->chip.lv_peer].name : "");
        tpl.level = (int8_t)li;
        snprintf(tpl.name, sizeof tpl.name, "%s", level);
        if (yconf_get_string(c, m, field, "name", 0, tpl.name, sizeof tpl.name) != 0 ||
            yconf_get_number(c, m, field, "bandwidth_GBps", YCONF_POS, 1, &bw) != 0 ||
            yconf_get_scaled_u64(c, m, field, "latency_ns", YCONF_NONNEG, 1000.0, &tpl.latency_ps) != 0)
            return -1;
        int e = yconf_lookup(c, m, "efficiency");
        char ef[112];
        yconf_field(ef, sizeof ef, field, "efficiency");
        if (e >= 0 && (c->nodes[e].kind != YCONF_MAPPING || yconf_check_keys(c, e, ef, chipcfg_efficiency_keys(LK_LINK)) != 0 ||
                       yconf_get_number(c, e, ef, "bandwidth_fraction", YCONF_FRAC, 1, &eff) != 0)) {
            if (c->nodes[e].kind != YCONF_MAPPING)
                return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[e].line, ef,
                                "expected {bandwidth_fraction}, got %s", yconf_kind_name(c, e));
            return -1;
        }
        tpl.bw_bytes_per_s = bw * 1e9 * eff;
        char fw[8] = "";
        if (yconf_get_string(c, m, field, "forward", 0, fw, sizeof fw) != 0)
            return -1;
        if (strcmp(fw, "true") == 0)
            tpl.forward = 1;
        else if (fw[0] != '\0' && strcmp(fw, "false") != 0)
            return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[yconf_lookup(c, m, "forward")].line,
                            "links.forward", "expected true or false, got '%s'", fw);
        tpl.transport = li == s->chip.lv_peer ? ST_PEER : ST_PCIE;
        char tr[16] = "";
        if (yconf_get_string(c, m, field, "transport", 0, tr, sizeof tr) != 0)
            return -1;
        if (tr[0] != '\0') {
            int k = 0;
            while (k < ST_COUNT && strcmp(tr, sys_transport_name((enum sys_transport)k)) != 0)
                k++;
            if (k == ST_COUNT)
                return diag_set(c->d, DIAG_E_UNKNOWN_NAME, c->path,
                                c->nodes[yconf_lookup(c, m, "transport")].line, "links.transport",
                                "unknown transport '%s' (known: peer, pcie, network)", tr);
            tpl.transport = (enum sys_transport)k;
        }
        tpl.line = c->nodes[m].line;
        char tf[112];
        yconf_field(tf, sizeof tf, field, "to");
        int tv = yconf_lookup(c, m, "to"), fv = yconf_lookup(c, m, "from");
        if (tv < 0 || fv < 0)
            return diag_set(c->d, DIAG_E_MISSING, c->path, c->nodes[m].line, field,
                            "a link needs from and to");
        if (sys_end(c, nh, s, tv, tf, &tpl.b) != 0)
            return -1;
        /* from: one name, a list of names, or "*" (every device): one link each */
        yconf_field(tf, sizeof tf, field, "from");
        int first = fv, list = c->nodes[fv].kind == YCONF_SEQUENCE;
        if (list)
            first = c->nodes[fv].first;
        int all = !list && c->nodes[fv].kind == YCONF_SCALAR && strcmp(yconf_text(c, fv), "*") == 0;
        uint32_t nfrom = all ? s->ndevices : 0;
        if (!all)
            for (int f = first; f >= 0; f = list ? c->nodes[f].next : -1)
                nfrom++;
        for (uint32_t k = 0, f = (uint32_t)first; k < nfrom; k++) {
            struct sys_link l = tpl;
            if (all) {
                l.a = k;
            } else {
                if (sys_end(c, nh, s, (int)f, tf, &l.a) != 0)
                    return -1;
                f = list ? (uint32_t)c->nodes[f].next : f;
            }
            if (l.a == l.b)
                return diag_set(c->d, DIAG_E_RANGE, c->path, tpl.line, field,
                                "a link from '%s' to itself", s->nodes[l.a].name);
            if (s->nlinks == lcap) {
                lcap = lcap ? lcap * 2 : 16;
                s->links = sim_xrealloc(s->links, lcap * sizeof *s->links);
            }
            if (s->nlinks >= SYS_MAX_LINKS)
                return diag_set(c->d, DIAG_E_RANGE, c->path, tpl.line, "links",
                                "more than %d links", SYS_MAX_LINKS);
            s->links[s->nlinks++] = l;
        }
    }
    return 0;
}

static int fill_system(struct yconf *c, int root, const struct cfg_sets *sets, struct hw_system *s)
{
    struct names nh = {NULL, 0};
    int rc = fill_system_names(c, root, sets, s, &nh);
    free(nh.nh);
    return rc;
}

int sys_load(const char *path, struct hw_system *out, struct diag *d)
{
    return sys_load_with(path, NULL, out, d);
}

/* A chip config from its parsed tree, sets applied: 1, or -1 with *c->d. */
static int chip_from_tree(struct yconf *c, int root, const char *path,
                          const struct cfg_sets *sets, struct hw_config *out)
{
    snprintf(out->path, sizeof out->path, "%s", path);
    if (apply_sets(c, root, sets) != 0 || chipcfg_fill(c, root, out) != 0) {
        name_override(c->d, sets);
        return -1;
    }
    name_variant(out, sets);
    return 1;
}

/* A chip config parsed once, loaded many times with different overrides
 * (a sweep's points): each load works on a copy of the tree. */
struct cfg_proto {
    char path[512];
    struct yconf c;
    int root;
};

int cfg_proto_load(const char *path, struct cfg_proto **out, struct diag *d)
{
    *out = NULL;
    struct cfg_proto *p = sim_xcalloc(1, sizeof *p);
    if (strlen(path) >= sizeof p->path) {
        free(p);
        return diag_set(d, DIAG_E_RANGE, "", 0, "", "config path longer than %zu characters",
                        sizeof p->path - 1);
    }
    memcpy(p->path, path, strlen(path) + 1);
    p->c = (struct yconf){.path = p->path, .d = d};
    p->root = yconf_parse_file(&p->c, NULL);
    if (p->root < 0 || (p->c.nodes[p->root].kind == YCONF_MAPPING &&
                        yconf_lookup(&p->c, p->root, "chip") >= 0)) {
        int rc = p->root < 0 ? -1 : 1;  /* 1: a system file, which is not kept */
        cfg_proto_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

int cfg_load_proto(const struct cfg_proto *p, const struct cfg_sets *sets, struct hw_config *out,
                   struct diag *d)
{
    struct yconf c;
    yconf_copy(&c, &p->c, p->path, d);
    struct hw_config h;
    memset(&h, 0, sizeof h);
    int rc = chip_from_tree(&c, p->root, p->path, sets, &h);
    yconf_free(&c);
    if (rc < 0)
        return -1;
    *out = h;
    return 0;
}

void cfg_proto_free(struct cfg_proto *p)
{
    if (p == NULL)
        return;
    yconf_free(&p->c);
    free(p);
}

int sys_load_with(const char *path, const struct cfg_sets *sets, struct hw_system *out,
                  struct diag *d)
{
    if (path == NULL || out == NULL)
        return diag_set(d, DIAG_E_USAGE, "", 0, "", "sys_load: path and out are required");
    struct hw_system s;
    memset(&s, 0, sizeof s);
    if (strlen(path) >= sizeof s.path)
        return diag_set(d, DIAG_E_RANGE, "", 0, "", "config path longer than %zu characters",
                        sizeof s.path - 1);
    memcpy(s.path, path, strlen(path) + 1);
    struct yconf c = {.path = path, .d = d};
    int root = yconf_parse_file(&c, NULL);
    int rc = root < 0 ? -1 : 0;
    if (rc == 0 && (c.nodes[root].kind != YCONF_MAPPING || yconf_lookup(&c, root, "chip") < 0))
        /* not a system: a chip config, read into s.chip from the same tree */
        rc = chip_from_tree(&c, root, path, sets, &s.chip);
    if (rc == 0)
        rc = fill_system(&c, root, sets, &s);
    if (rc == 0)
        sys_index(&s);
    yconf_free(&c);
    if (rc < 0) {
        sys_free(&s);
        return rc;
    }
    *out = s;
    return rc;
}


int cfg_read_value(const char *path, const char *key, double *value, char *full_key, size_t n,
                   struct diag *d)
{
    struct yconf c = {.path = path, .d = d};
    int root = yconf_parse_file(&c, NULL), rc = root < 0 ? -1 : 0;
    struct cfg_set one;
    memset(&one, 0, sizeof one);
    snprintf(one.key, sizeof one.key, "%s", key);
    snprintf(one.origin, sizeof one.origin, "--fit");
    if (rc == 0 && c.nodes[root].kind != YCONF_MAPPING)
        rc = diag_set(d, DIAG_E_TYPE, path, 1, "", "not a config");
    if (rc == 0)
        rc = apply_set(&c, root, &one, 0, value, full_key, n);
    yconf_free(&c);
    return rc;
}

/* ---------------------------------------------------------------- overlays */

/* An overlay file (written by `strata calibrate`, or by hand):
 *     base: nvidia-a100-sxm-80gb        # optional: the chip it was fitted on
 *     set:
 *       dram.efficiency.bandwidth_fraction: 0.931
 * Each entry becomes one override whose errors name FILE:LINE. */
int cfg_sets_load_overlay(struct cfg_sets *s, const char *path, struct diag *d)
{
    static const char *const overlay_keys[] = {"base", "set", NULL};
    struct yconf c = {.path = path, .d = d};
    int root = yconf_parse_file(&c, NULL), rc = root < 0 ? -1 : 0;
    if (rc == 0 && c.nodes[root].kind != YCONF_MAPPING)
        rc = diag_set(d, DIAG_E_TYPE, path, c.nodes[root].line, "",
                      "an overlay is a mapping {base, set}");
    if (rc == 0)
        rc = yconf_check_keys(&c, root, "", overlay_keys);
    int m = rc == 0 ? yconf_section(&c, root, "set", 1) : -1;
    if (m < 0)
        rc = -1;
    for (int k = rc == 0 ? c.nodes[m].first : -1; k >= 0 && rc == 0; k = yconf_next_key(&c, k)) {
        int v = c.nodes[k].next;
        if (c.nodes[v].kind != YCONF_SCALAR) {
            rc = diag_set(d, DIAG_E_TYPE, path, c.nodes[v].line, yconf_text(&c, k),
                          "expected a value, got %s", yconf_kind_name(&c, v));
            break;
        }
        char kv[200], origin[160];
        snprintf(kv, sizeof kv, "%.95s=%.63s", yconf_text(&c, k), yconf_text(&c, v));
        snprintf(origin, sizeof origin, "%.140s:%d", path, c.nodes[k].line);
        rc = cfg_sets_add(s, kv, origin, d);
    }
    yconf_free(&c);
    return rc;
}
