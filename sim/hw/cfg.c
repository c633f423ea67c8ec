/* cfg.c: loading chip configs and system files (cfg_load, sys_load), with
 * the overrides (--set, overlays) written into their trees first.  The
 * file is read by yconf.c and a chip's tree checked and compiled by
 * chipcfg.c; *out is written only on success.
 */
#include "cfg.h"

#include "check.h"
#include "chipcfg.h"
#include "system.h"
#include "yconf.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    if (cfg_sets_apply(c, root, sets) != 0 || chipcfg_fill(c, root, out) != 0) {
        cfg_sets_name_error(c->d, sets);
        return -1;
    }
    cfg_sets_name_variant(out, sets);
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
