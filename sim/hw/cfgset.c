/* cfgset.c: overrides of config values (cfgset.h): `--set KEY=VALUE` and
 * overlay files, written into a chip config's tree before it is checked.
 *
 * A KEY names its leaf by the path of mappings to it (a section, or a
 * level by its name or kind, then inner mappings); the leaf's key in the
 * file gets the unit suffix the value's unit calls for, and the same
 * quantity given under another unit is replaced, not duplicated. */
#include "cfgset.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "chipcfg.h"
#include "numfmt.h"
#include "suggest.h"
#include "units.h"
#include "yconf.h"

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

/* "; did you mean 'KEY'?" for a key part that names nothing allowed (a
 * leaf by its stem too: `bandwidth` of bandwidth_GBps), or "". */
static void near_key(const char *typed, const char *const *allowed, char *hint, size_t n)
{
    struct suggest sg;
    suggest_init(&sg, typed);
    for (; allowed != NULL && *allowed != NULL; allowed++) {
        const struct key_unit *ku = key_unit_of(*allowed);
        char stem[SUGGEST_NAME];
        snprintf(stem, sizeof stem, "%.*s",
                 (int)(strlen(*allowed) - (ku ? strlen(ku->suffix) : 0)), *allowed);
        suggest_offer(&sg, *allowed);
        suggest_offer(&sg, stem);
    }
    suggest_text(&sg, hint, n);
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

/* Where an override's leaf lives: the mapping that holds it, the keys
 * allowed there (NULL: any, checked by the loader) and whether it is a
 * DRAM level's. */
struct target {
    int map;
    const char *const *allowed;
    int dram;
};

/* s->key split at its dots into parts: how many, or -1 with the error. */
static int split_key(struct yconf *c, const struct cfg_set *s, char parts[4][96])
{
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
    return np;
}

/* a level by its name, else the first level of that kind (so
 * `dram.efficiency.bandwidth_fraction` finds an MI210's `hbm`): 1 and *t,
 * or 0 */
static int find_level(struct yconf *c, int root, const char *name, struct target *t)
{
    for (int by_kind = 0; by_kind < 2; by_kind++) {
        int seq = yconf_lookup(c, root, "levels");
        for (int m = seq >= 0 && c->nodes[seq].kind == YCONF_SEQUENCE ? c->nodes[seq].first : -1;
             m >= 0; m = c->nodes[m].next) {
            int nv = c->nodes[m].kind == YCONF_MAPPING ? yconf_lookup(c, m, by_kind ? "kind" : "name") : -1;
            if (nv < 0 || c->nodes[nv].kind != YCONF_SCALAR ||
                strcmp(yconf_text(c, nv), name) != 0)
                continue;
            t->map = m;
            int kv = yconf_lookup(c, m, "kind");
            t->allowed = NULL;
            for (int kk = 0; kv >= 0 && kk < LK_COUNT; kk++)
                if (strcmp(yconf_text(c, kv), level_kind_name((enum level_kind)kk)) == 0) {
                    t->allowed = chipcfg_level_keys((enum level_kind)kk);
                    t->dram = kk == LK_DRAM;
                }
            return 1;
        }
    }
    return 0;
}

/* The error for a first part that names nothing, with what it could name. */
static int unknown_first(struct yconf *c, int root, const struct cfg_set *s, const char *name)
{
    char names[400] = "", secs[200] = "", hint[SUGGEST_MAX * SUGGEST_NAME + 32];
    size_t used = 0;
    struct suggest sg;
    suggest_init(&sg, name);
    int seq = yconf_lookup(c, root, "levels");
    for (int m = seq >= 0 && c->nodes[seq].kind == YCONF_SEQUENCE ? c->nodes[seq].first : -1;
         m >= 0 && used < sizeof names; m = c->nodes[m].next) {
        int nv = c->nodes[m].kind == YCONF_MAPPING ? yconf_lookup(c, m, "name") : -1;
        if (nv >= 0) {
            used += (size_t)snprintf(names + used, sizeof names - used, "%s, ",
                                     yconf_text(c, nv));
            suggest_offer(&sg, yconf_text(c, nv));
        }
        int kv = c->nodes[m].kind == YCONF_MAPPING ? yconf_lookup(c, m, "kind") : -1;
        if (kv >= 0 && c->nodes[kv].kind == YCONF_SCALAR)
            suggest_offer(&sg, yconf_text(c, kv));   /* a level by its kind (find_level) */
    }
    used = 0;   /* the sections: the top-level keys that hold keys of their own */
    for (const char *const *k = chipcfg_keys(""); *k != NULL && used < sizeof secs; k++)
        if (chipcfg_keys(*k) != NULL) {
            used += (size_t)snprintf(secs + used, sizeof secs - used, "%s%s", used ? ", " : "",
                                     *k);
            suggest_offer(&sg, *k);
        }
    suggest_text(&sg, hint, sizeof hint);
    return set_fail(c, s, DIAG_E_UNKNOWN_KEY,
                    "'%s' is neither a level of this chip nor a section; known: %s%s%s", name,
                    names, secs, hint);
}

/* The mapping that holds the leaf of a key of np > 1 parts: a section or a
 * level, then the inner mappings (made empty when absent, unless reading). */
static int find_map(struct yconf *c, int root, const struct cfg_set *s, char parts[4][96], int np,
                    int line, int reading, struct target *t)
{
    int found = 0;
    if (chipcfg_keys(parts[0]) != NULL) {
        found = 1;
        t->map = reading ? yconf_lookup(c, root, parts[0]) : child_map(c, root, parts[0], line);
        if (reading && t->map < 0)
            return set_fail(c, s, DIAG_E_MISSING, "the config has no section %s", parts[0]);
        t->allowed = chipcfg_keys(parts[0]);
    }
    if (!found && !find_level(c, root, parts[0], t))
        return unknown_first(c, root, s, parts[0]);
    if (t->map == -1)
        return set_fail(c, s, DIAG_E_TYPE, "is not a mapping in the config");
    if (t->map < -1)
        return -1;
    /* inner mappings: compute.matrix_flops_per_cycle_per_unit.bf16,
     * dram.efficiency.bandwidth_fraction */
    for (int i = 1; i < np - 1; i++) {
        if (!in_list(t->allowed, parts[i]) && t->allowed != NULL) {
            char hint[SUGGEST_MAX * SUGGEST_NAME + 32];
            near_key(parts[i], t->allowed, hint, sizeof hint);
            return set_fail(c, s, DIAG_E_UNKNOWN_KEY, "no key '%s' here%s", parts[i], hint);
        }
        if (reading) {
            t->map = yconf_lookup(c, t->map, parts[i]);
            if (t->map < 0)
                return set_fail(c, s, DIAG_E_MISSING, "the config has no '%s' here", parts[i]);
        } else {
            t->map = child_map(c, t->map, parts[i], line);
        }
        if (t->map == -1)
            return set_fail(c, s, DIAG_E_TYPE, "'%s' is not a mapping in the config",
                            parts[i]);
        if (t->map < -1)
            return -1;
        t->allowed = strcmp(parts[i], "efficiency") == 0
                         ? chipcfg_efficiency_keys(t->dram ? LK_DRAM : LK_LINK)
                         : NULL; /* dtype or instruction names: checked by the loader */
    }
    return 0;
}

/* read mode: the leaf as it is in the file, under any unit suffix */
static int read_leaf(struct yconf *c, const struct cfg_set *s, int map, char parts[4][96], int np,
                     double *read_out, char *read_key, size_t read_n)
{
    const char *leaf = parts[np - 1];
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

/* the leaf's key in the file: as given, or the stem plus the unit
 * suffix the value's unit (q) calls for; *ku its unit, if any */
static int leaf_key(struct yconf *c, const struct cfg_set *s, const struct target *t,
                    const char *leaf, const struct qty *q, char key[128],
                    const struct key_unit **ku)
{
    *ku = key_unit_of(leaf);
    if (*ku != NULL || q->kind == QK_NONE) {
        snprintf(key, 128, "%s", leaf);
        if (*ku == NULL) {
            /* a stem with no unit: only fine if the key takes plain numbers */
            int stem_has_units = 0;
            for (int i = 0; i < NKEY_UNITS && t->allowed != NULL; i++) {
                char cand[128];
                snprintf(cand, sizeof cand, "%s%s", leaf, key_units[i].suffix);
                if (in_list(t->allowed, cand))
                    stem_has_units = 1;
            }
            if (stem_has_units)
                return set_fail(c, s, DIAG_E_TYPE,
                                "'%s' needs a unit (e.g. 4.8TB/s, 100MiB, 1.98GHz, 650ns)",
                                s->value);
        }
        return 0;
    }
    key[0] = '\0';
    for (int i = 0; i < NKEY_UNITS && key[0] == '\0'; i++) {
        if (key_units[i].kind != q->kind)
            continue;
        char cand[128];
        snprintf(cand, sizeof cand, "%s%s", leaf, key_units[i].suffix);
        /* a DRAM's capacity is in GB, others' in KiB */
        if (q->kind == QK_BYTES && t->dram != (strcmp(key_units[i].suffix, "_GB") == 0))
            continue;
        if (t->allowed == NULL || in_list(t->allowed, cand)) {
            snprintf(key, 128, "%s", cand);
            *ku = &key_units[i];
        }
    }
    if (key[0] != '\0')
        return 0;
    for (int i = 0; i < NKEY_UNITS && t->allowed != NULL; i++) {
        char cand[128];
        snprintf(cand, sizeof cand, "%s%s", leaf, key_units[i].suffix);
        if (in_list(t->allowed, cand))
            return set_fail(c, s, DIAG_E_TYPE, "expects %s, got %s",
                            qty_kind_what(key_units[i].kind), qty_kind_what(q->kind));
    }
    char hint[SUGGEST_MAX * SUGGEST_NAME + 32];
    near_key(leaf, t->allowed, hint, sizeof hint);
    return set_fail(c, s, DIAG_E_UNKNOWN_KEY, "no key '%s' here takes %s%s", leaf,
                    qty_kind_what(q->kind), hint);
}

/* key: num into map, at line.  the same quantity under another unit is
 * replaced, not duplicated */
static int write_leaf(struct yconf *c, const struct cfg_set *s, int map, const char *key,
                      const char *num, int line)
{
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

/* A relative value, "x2" or "x0.5": 1 and its factor in *f; 0 for any other */
static int relative_factor(const char *value, double *f)
{
    return value[0] == 'x' && num_parse(value + 1, f) == 0 && *f > 0;
}

/* value node v (a number, or a mapping of numbers such as a per-dtype
 * rate table) times f, in place, its nodes at line */
static int scale_value(struct yconf *c, const struct cfg_set *s, int v, double f, int line)
{
    if (c->nodes[v].kind == YCONF_MAPPING) {
        int n = 0;
        for (int kk = c->nodes[v].first; kk >= 0; kk = yconf_next_key(c, kk), n++)
            if (scale_value(c, s, c->nodes[kk].next, f, line) != 0)
                return -1;
        if (n == 0)
            return set_fail(c, s, DIAG_E_MISSING, "the config's %s is empty", s->key);
        return 0;
    }
    double x;
    if (c->nodes[v].kind != YCONF_SCALAR || num_parse(yconf_text(c, v), &x) != 0)
        return set_fail(c, s, DIAG_E_TYPE, "x%g scales a number, and the config's value is not one",
                        f);
    char num[40];
    snprintf(num, sizeof num, "%.17g", x * f); /* %.17g: read back, exactly x * f */
    c->nodes[v].plain = 1;
    c->nodes[v].line = line;
    yconf_set_text(c, v, num, strlen(num));
    return 0;
}

/* KEY=xF: the value the config gives (under any unit suffix, or a mapping
 * of them) times F */
static int scale_leaf(struct yconf *c, const struct cfg_set *s, int map, const char *leaf,
                      double f, int line)
{
    for (int kk = c->nodes[map].first; kk >= 0; kk = yconf_next_key(c, kk)) {
        const char *t = yconf_text(c, kk);
        const struct key_unit *tu = key_unit_of(t);
        size_t stem = strlen(t) - (tu ? strlen(tu->suffix) : 0);
        if (strcmp(t, leaf) == 0 || (tu != NULL && strlen(leaf) == stem && strncmp(t, leaf, stem) == 0)) {
            c->nodes[kk].line = line;
            return scale_value(c, s, c->nodes[kk].next, f, line);
        }
    }
    return set_fail(c, s, DIAG_E_MISSING, "the config gives no value for %s to scale", s->key);
}

static int set_leaf(struct yconf *c, const struct cfg_set *s, const struct target *t,
                    const char *leaf, int line);

/* Writes override s (number k of the load) into the tree under root.  Its
 * nodes get line -(k + 1), so a later check that fails on it can name it.
 * With read_out, writes nothing: reads the value the key names instead. */
static int apply_set(struct yconf *c, int root, const struct cfg_set *s, int k,
                     double *read_out, char *read_key, size_t read_n)
{
    const int line = -(k + 1);
    char parts[4][96];
    int np = split_key(c, s, parts);
    if (np < 0)
        return -1;

    /* where the leaf lives, and which keys are allowed there */
    struct target t = {root, chipcfg_keys(""), 0};
    if (np == 1) {
        if (strcmp(parts[0], "name") == 0 || strcmp(parts[0], "family") == 0 ||
            strcmp(parts[0], "levels") == 0)
            return set_fail(c, s, DIAG_E_UNSUPPORTED,
                            "cannot be set; a variant is named after its chip and overrides");
    } else if (find_map(c, root, s, parts, np, line, read_out != NULL, &t) != 0) {
        return -1;
    }
    const char *leaf = parts[np - 1];
    if (read_out != NULL)
        return read_leaf(c, s, t.map, parts, np, read_out, read_key, read_n);
    return set_leaf(c, s, &t, leaf, line);
}

/* Leaves that take a word, not a number: written as given, and checked
 * by the config loader as a file's would be (systolic.dataflow: ws, os). */
static const char *const word_leaves[] = {"dataflow", NULL};

/* s's value written as leaf of t->map (scaling it, for a relative value) */
static int set_leaf(struct yconf *c, const struct cfg_set *s, const struct target *t,
                    const char *leaf, int line)
{
    if (in_list(word_leaves, leaf) && (t->allowed == NULL || in_list(t->allowed, leaf)))
        return write_leaf(c, s, t->map, leaf, s->value, line);
    double f;
    if (relative_factor(s->value, &f))
        return scale_leaf(c, s, t->map, leaf, f, line);

    struct qty q;
    if (qty_parse(s->value, &q) != 0)
        return set_fail(c, s, DIAG_E_TYPE,
                        "'%s' is not a number with a unit (like 4.8TB/s, 100MiB, 1.98GHz, 650ns, "
                        "0.9)", s->value);
    char key[128];
    const struct key_unit *ku;
    if (leaf_key(c, s, t, leaf, &q, key, &ku) != 0)
        return -1;
    if (ku != NULL && q.kind != QK_NONE && q.kind != ku->kind)
        return set_fail(c, s, DIAG_E_TYPE, "expects %s, got %s", qty_kind_what(ku->kind),
                        qty_kind_what(q.kind));
    double x = q.kind == QK_NONE ? q.mantissa : q.mantissa * (q.scale / ku->scale);
    char num[40];
    snprintf(num, sizeof num, "%.15g", x);
    return write_leaf(c, s, t->map, key, num, line);
}

int cfg_set_is_links(const struct cfg_set *s)
{
    return strncmp(s->key, "links.", 6) == 0;
}

int cfg_set_is_stack(const struct cfg_set *s)
{
    return strncmp(s->key, "stack.", 6) == 0;
}

const struct cfg_set *cfg_sets_first_stack(const struct cfg_sets *sets)
{
    for (unsigned k = 0; sets != NULL && k < sets->n; k++)
        if (cfg_set_is_stack(&sets->set[k]))
            return &sets->set[k];
    return NULL;
}

/* A `links.NAME=` value that switches links: 0 off, 1 on (changes
 * nothing), -1 neither. */
static int link_switch(const char *value)
{
    return strcmp(value, "off") == 0 ? 0 : strcmp(value, "on") == 0 ? 1 : -1;
}

/* Scalar map.key's text, or "" */
static const char *text_at(struct yconf *c, int map, const char *key)
{
    int v = yconf_lookup(c, map, key);
    return v >= 0 && c->nodes[v].kind == YCONF_SCALAR ? yconf_text(c, v) : "";
}

/* `links.NAME=off` on a chip config.  The system a chip implies
 * (sys_from_chip) joins its devices by their peer link through one switch
 * and by their host link through the host; off takes the peer link level
 * NAME out of the chip's levels, so the chip is one without it (an A100
 * PCIe without its NVLink bridge) and devices talk through the host.  The
 * host link, the DRAM and the caches a device needs for itself cannot be
 * off.  `on` changes nothing.  0, or -1 with *c->d. */
static int apply_chip_link_switch(struct yconf *c, int root, const struct cfg_set *s)
{
    char parts[4][96];
    int np = split_key(c, s, parts);
    if (np < 0)
        return -1;
    int on = link_switch(s->value);
    if (np == 2 && on < 0)
        return set_fail(c, s, DIAG_E_USAGE, "links.%s takes off (or on), not '%s'", parts[1],
                        s->value);
    if (np != 2)
        return set_fail(c, s, DIAG_E_UNSUPPORTED,
                        "links.NAME.KEY sets a system file's links, and --hw names a chip config "
                        "(a chip's own links are levels: --set nvlink.bandwidth=...; "
                        "--set links.nvlink=off takes its peer link away)");
    int seq = yconf_lookup(c, root, "levels");
    if (seq < 0 || c->nodes[seq].kind != YCONF_SEQUENCE)
        return 0;   /* chipcfg_fill reports it */
    char links[300] = "";
    size_t used = 0;
    int hit = -1;
    for (int m = c->nodes[seq].first; m >= 0; m = c->nodes[m].next) {
        if (c->nodes[m].kind != YCONF_MAPPING)
            continue;
        const char *name = text_at(c, m, "name");
        if (strcmp(text_at(c, m, "kind"), "link") == 0 && used < sizeof links)
            used += (size_t)snprintf(links + used, sizeof links - used, "%s%s%s", used ? ", " : "",
                                     name, strcmp(text_at(c, m, "scope"), "host") == 0
                                     ? " (to the host)" : "");
        if (strcmp(name, parts[1]) == 0)
            hit = m;
    }
    if (hit < 0)
        return set_fail(c, s, DIAG_E_UNKNOWN_NAME, "the chip has no level named '%s'; its links: %s",
                        parts[1], links);
    const char *kind = text_at(c, hit, "kind"), *scope = text_at(c, hit, "scope");
    if (strcmp(kind, "link") != 0 || strcmp(scope, "host") == 0)
        return set_fail(c, s, DIAG_E_UNSUPPORTED,
                        "'%s' is the chip's %s%s, which every device needs; only a link to other "
                        "devices can be off (its links: %s)", parts[1],
                        strcmp(kind, "link") != 0 ? kind : "link to the host",
                        strcmp(kind, "link") != 0 ? " level" : "", links);
    if (on == 0 && strcmp(scope, "system") == 0)
        yconf_drop_item(c, seq, hit);   /* another scope: chipcfg_fill reports it */
    return 0;
}

int cfg_sets_apply(struct yconf *c, int root, const struct cfg_sets *sets, int in_system)
{
    if (sets == NULL)
        return 0;
    if (c->nodes[root].kind != YCONF_MAPPING)
        return 0; /* chipcfg_fill reports it */
    for (unsigned k = 0; k < sets->n; k++) {
        const struct cfg_set *s = &sets->set[k];
        if (cfg_set_is_links(s) || cfg_set_is_stack(s))
            continue;   /* the system's own (cfg_sets_apply_links), or below; a stack's */
        if (apply_set(c, root, s, (int)k, NULL, NULL, 0) != 0)
            return -1;
    }
    /* a chip's links off last, so that a set of the level's keys (a
     * what-if's) before or after it is not an error */
    for (unsigned k = 0; !in_system && k < sets->n; k++)
        if (cfg_set_is_links(&sets->set[k]) && apply_chip_link_switch(c, root, &sets->set[k]) != 0)
            return -1;
    return 0;
}

/* The keys of a system file's link that an override may set */
static const char *const sys_link_set_keys[] = {"bandwidth_GBps", "latency_ns", "efficiency", NULL};

/* links[i], mapping m: its name (its level's without one) and level */
static void link_names(struct yconf *c, int m, const char **name, const char **level)
{
    int lv = yconf_lookup(c, m, "level"), nv = yconf_lookup(c, m, "name");
    *level = lv >= 0 && c->nodes[lv].kind == YCONF_SCALAR ? yconf_text(c, lv) : "";
    *name = nv >= 0 && c->nodes[nv].kind == YCONF_SCALAR ? yconf_text(c, nv) : *level;
}

/* One links.NAME override on its way through a system file's links, into
 * their repeat groups (sysload.c) too. */
struct links_walk {
    const struct cfg_set *s;
    char (*parts)[96];
    int np, on, line;
    int by_name, matched;
    char names[300];
    size_t used;
};

/* A repeat group's list of links, or -1 (m an entry of links). */
static int links_group(struct yconf *c, int m)
{
    if (c->nodes[m].kind != YCONF_MAPPING || yconf_lookup(c, m, "repeat") < 0)
        return -1;
    int l = yconf_lookup(c, m, "links");
    return l >= 0 && c->nodes[l].kind == YCONF_SEQUENCE ? l : -1;
}

/* Whether any link of list seq has the name (else NAME is a level). */
static void links_by_name(struct yconf *c, int seq, struct links_walk *w)
{
    for (int m = c->nodes[seq].first; m >= 0; m = c->nodes[m].next) {
        int g = links_group(c, m);
        if (g >= 0) {
            links_by_name(c, g, w);
        } else if (c->nodes[m].kind == YCONF_MAPPING) {
            const char *name, *level;
            link_names(c, m, &name, &level);
            w->by_name |= strcmp(name, w->parts[1]) == 0;
        }
    }
}

static int links_apply(struct yconf *c, int seq, struct links_walk *w)
{
    const struct cfg_set *s = w->s;
    for (int m = c->nodes[seq].first, next; m >= 0; m = next) {
        next = c->nodes[m].next;
        int g = links_group(c, m);
        if (g >= 0) {
            if (links_apply(c, g, w) != 0)
                return -1;
            continue;
        }
        if (c->nodes[m].kind != YCONF_MAPPING)
            continue;       /* sysload reports it */
        const char *name, *level;
        link_names(c, m, &name, &level);
        if (strcmp(w->by_name ? name : level, w->parts[1]) != 0) {
            if (w->used < sizeof w->names && strstr(w->names, name) == NULL)
                w->used += (size_t)snprintf(w->names + w->used, sizeof w->names - w->used, "%s%s",
                                            w->used ? ", " : "", name);
            continue;
        }
        w->matched++;
        if (w->np == 2) {   /* off: the system without it; a route that needs it is the run's error */
            if (w->on == 0)
                yconf_drop_item(c, seq, m);
            continue;
        }
        struct target t = {m, sys_link_set_keys, 0};
        if (w->np == 4) {
            t.map = child_map(c, m, "efficiency", w->line);
            if (t.map == -1)
                return set_fail(c, s, DIAG_E_TYPE, "a link's efficiency is a mapping");
            if (t.map < -1)
                return -1;
            t.allowed = chipcfg_efficiency_keys(LK_LINK);
        }
        if (set_leaf(c, s, &t, w->parts[w->np - 1], w->line) != 0)
            return -1;
    }
    return 0;
}

/* One `links.NAME.KEY=VALUE` override into every link it names, or
 * `links.NAME=off`, which takes them out of the file (`on`: leaves them). */
static int apply_links_set(struct yconf *c, int root, const struct cfg_set *s, int k)
{
    char parts[4][96];
    int np = split_key(c, s, parts);
    if (np < 0)
        return -1;
    int on = np == 2 ? link_switch(s->value) : -1;
    if ((np == 2 && on < 0) || np > 4 || (np == 4 && strcmp(parts[2], "efficiency") != 0))
        return set_fail(c, s, DIAG_E_USAGE,
                        "a system's link is set as links.NAME.KEY, NAME a link's name or level and "
                        "KEY bandwidth, latency or efficiency.bandwidth_fraction "
                        "(links.nvlink.bandwidth=150GB/s), or taken out as links.NAME=off");
    int seq = yconf_lookup(c, root, "links");
    if (seq < 0 || c->nodes[seq].kind != YCONF_SEQUENCE)
        seq = -1;
    struct links_walk w = {s, parts, np, on, -(k + 1), 0, 0, "", 0};
    if (seq >= 0) {
        links_by_name(c, seq, &w);
        if (links_apply(c, seq, &w) != 0)
            return -1;
    }
    if (w.matched == 0)
        return set_fail(c, s, DIAG_E_UNKNOWN_NAME, "no link of this system is named '%s'; its links: %s",
                        parts[1], w.names);
    return 0;
}

int cfg_sets_apply_links(struct yconf *c, int root, const struct cfg_sets *sets)
{
    for (unsigned k = 0; sets != NULL && k < sets->n; k++)
        if (cfg_set_is_links(&sets->set[k]) && apply_links_set(c, root, &sets->set[k], (int)k) != 0)
            return -1;
    return 0;
}

void cfg_sets_name_error(struct diag *d, const struct cfg_sets *sets)
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

void cfg_sets_name_variant(struct hw_config *h, const struct cfg_sets *sets)
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
    double f;
    int relative = relative_factor(one.value, &f);  /* scales what the sets before it left */
    for (unsigned k = 0; k < s->n && !relative; k++)
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

int cfg_sets_add_list(struct cfg_sets *s, const char *list, const char *origin, struct diag *d)
{
    char one[200];
    for (const char *p = list; *p != '\0';) {
        size_t n = strcspn(p, " ");
        snprintf(one, sizeof one, "%.*s", (int)n, p);
        if (n > 0 && cfg_sets_add(s, one, origin, d) != 0)
            return -1;
        p += n + (p[n] == ' ');
    }
    return 0;
}

void cfg_sets_list_cli(const char *list, char *out, size_t n)
{
    size_t used = 0;
    out[0] = '\0';
    for (const char *p = list; *p != '\0' && used < n;) {
        size_t k = strcspn(p, " ");
        used += (size_t)snprintf(out + used, n - used, "%s--set %.*s", used ? " " : "", (int)k, p);
        p += k + (p[k] == ' ');
    }
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
