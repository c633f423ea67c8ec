/* sysload.c: a system file's tree -> struct hw_system (sysload.h).
 *
 * Devices first (a count, named gpu0, gpu1, ..., or a list of names), then
 * the other nodes (switches, hosts), then the links, each `from` a name, a
 * list of names or "*" (every device), one link each.  Node names go into
 * a hash as they come: a linear scan per link end was most of loading a
 * 2048-node cluster. */
#include "sysload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "chipcfg.h"

static const char *const sys_top_keys[] = {"name", "chip", "devices", "nodes", "links",
                                           "unified_bandwidth_GBps", NULL};
static const char *const sys_node_keys[] = {"name", "kind", "bandwidth_GBps", "nvls", NULL};
static const char *const sys_link_keys[] = {
    "name", "level", "from", "to", "bandwidth_GBps", "latency_ns", "efficiency", "forward",
    "transport", NULL};

/* A system file being read. */
struct sysparse {
    struct yconf *c;
    struct hw_system *s;
    uint32_t *nh;               /* the nodes' names: node index + 1 by hash, 0 = empty */
    uint32_t nh_cap;            /* a power of two, more than twice the nodes */
    uint32_t ncap, lcap;        /* room in s->nodes, s->links */
};

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

/* The node called name, or -1. */
static int node_find(const struct sysparse *p, const char *name)
{
    if (p->nh == NULL)
        return -1;
    for (uint32_t h = (uint32_t)name_hash(name) & (p->nh_cap - 1); p->nh[h] != 0;
         h = (h + 1) & (p->nh_cap - 1))
        if (strcmp(p->s->nodes[p->nh[h] - 1].name, name) == 0)
            return (int)(p->nh[h] - 1);
    return -1;
}

static void node_hash_put(struct sysparse *p, uint32_t cap, uint32_t i)
{
    uint32_t h = (uint32_t)name_hash(p->s->nodes[i].name) & (cap - 1);
    while (p->nh[h] != 0)
        h = (h + 1) & (cap - 1);
    p->nh[h] = i + 1;
}

static uint32_t add_node(struct sysparse *p, const char *name, enum sys_node_kind kind, int line)
{
    struct hw_system *s = p->s;
    if (s->nnodes == p->ncap) {
        p->ncap = p->ncap ? p->ncap * 2 : 16;
        s->nodes = sim_xrealloc(s->nodes, p->ncap * sizeof *s->nodes);
    }
    struct sys_node *n = &s->nodes[s->nnodes];
    memset(n, 0, sizeof *n);
    snprintf(n->name, sizeof n->name, "%s", name);
    n->kind = kind;
    n->line = line;
    uint32_t idx = s->nnodes++;
    if (2 * (uint64_t)s->nnodes >= p->nh_cap) {     /* grow and rehash */
        uint32_t ncap = p->nh_cap ? 2 * p->nh_cap : 64;
        while (2 * (uint64_t)s->nnodes >= ncap)
            ncap *= 2;
        free(p->nh);
        p->nh = sim_xcalloc(ncap, sizeof *p->nh);
        p->nh_cap = ncap;
        for (uint32_t k = 0; k < s->nnodes; k++)
            node_hash_put(p, ncap, k);
    } else {
        node_hash_put(p, p->nh_cap, idx);
    }
    return idx;
}

/* The node a link end names: an error unless it exists. */
static int link_end(struct sysparse *p, int v, const char *field, uint32_t *out)
{
    struct yconf *c = p->c;
    char name[SYS_NAME_MAX];
    if (scalar_string(c, v, field, name, sizeof name) != 0)
        return -1;
    int i = node_find(p, name);
    if (i < 0)
        return diag_set(c->d, DIAG_E_UNKNOWN_NAME, c->path, c->nodes[v].line, field,
                        "no device or node '%s' in this system (a link to nowhere)", name);
    *out = (uint32_t)i;
    return 0;
}

int sysload_head(struct yconf *c, int root, struct hw_system *s, char *chip_path, size_t size)
{
    if (yconf_check_keys(c, root, "", sys_top_keys) != 0 ||
        yconf_get_string(c, root, "", "name", 1, s->name, sizeof s->name) != 0)
        return -1;
    /* the chip, relative to this file's folder */
    char chip[512];
    if (yconf_get_string(c, root, "", "chip", 1, chip, sizeof chip) != 0)
        return -1;
    const char *slash = strrchr(c->path, '/');
    if (chip[0] == '/' || slash == NULL)
        snprintf(chip_path, size, "%s", chip);
    else
        snprintf(chip_path, size, "%.*s/%s", (int)(slash - c->path), c->path, chip);
    return 0;
}

/* unified_bandwidth_GBps: only for a chip whose DRAM is unified. */
static int read_unified(struct sysparse *p, int root)
{
    struct yconf *c = p->c;
    struct hw_system *s = p->s;
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
    return 0;
}

/* devices: a count (gpu0, gpu1, ...) or a list of names */
static int read_devices(struct sysparse *p, int root)
{
    struct yconf *c = p->c;
    struct hw_system *s = p->s;
    char field[96];
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
            int prev = node_find(p, name);
            if (prev >= 0)
                return diag_set(c->d, DIAG_E_DUPLICATE, c->path, c->nodes[m].line, field,
                                "duplicate device name '%s'", name);
            if (s->nnodes >= SYS_MAX_NODES)     /* a list as long as the count may be */
                return diag_set(c->d, DIAG_E_RANGE, c->path, c->nodes[m].line, field,
                                "more than %d devices", SYS_MAX_NODES);
            add_node(p, name, SN_DEVICE, c->nodes[m].line);
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
            add_node(p, name, SN_DEVICE, c->nodes[dv].line);
        }
    }
    s->ndevices = s->nnodes;
    if (s->ndevices == 0)
        return diag_set(c->d, DIAG_E_RANGE, c->path, c->nodes[dv].line, "devices",
                        "a system needs at least one device");
    return 0;
}

/* One of the other nodes: nodes[i], mapping m. */
static int read_node(struct sysparse *p, int m, int i)
{
    struct yconf *c = p->c;
    struct hw_system *s = p->s;
    char field[96];
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
    int prev = node_find(p, name);
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
    uint32_t ni = add_node(p, name, k, c->nodes[m].line);
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
    return 0;
}

/* other nodes */
static int read_nodes(struct sysparse *p, int root)
{
    struct yconf *c = p->c;
    int nv = yconf_lookup(c, root, "nodes");
    if (nv >= 0 && c->nodes[nv].kind != YCONF_SEQUENCE)
        return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[nv].line, "nodes",
                        "expected a list of {name, kind, bandwidth_GBps}, got %s", yconf_kind_name(c, nv));
    int i = 0;
    for (int m = nv >= 0 ? c->nodes[nv].first : -1; m >= 0; m = c->nodes[m].next, i++)
        if (read_node(p, m, i) != 0)
            return -1;
    return 0;
}

/* What every link of links[i] (mapping m, named field) shares: its class
 * (the chip's link level), bandwidth after its efficiency, latency, and
 * whether devices forward on it; the ends are the caller's. */
static int link_template(struct sysparse *p, int m, const char *field, struct sys_link *tpl)
{
    struct yconf *c = p->c;
    const struct hw_config *chip = &p->s->chip;
    memset(tpl, 0, sizeof *tpl);
    char level[HW_LEVEL_NAME];
    double bw, eff = 1.0;
    if (yconf_check_keys(c, m, field, sys_link_keys) != 0 ||
        yconf_get_string(c, m, field, "level", 1, level, sizeof level) != 0)
        return -1;
    int li = cfg_level_index(chip, level);
    char lf[112];
    yconf_field(lf, sizeof lf, field, "level");
    if (li < 0 || chip->level[li].kind != LK_LINK)
        return diag_set(c->d, DIAG_E_UNKNOWN_NAME, c->path,
                        c->nodes[yconf_lookup(c, m, "level")].line, lf,
                        "'%s' is not a link level of %s (its links: %s%s%s)", level,
                        chip->name, chip->level[chip->lv_host].name,
                        chip->lv_peer >= 0 ? ", " : "",
                        chip->lv_peer >= 0 ? chip->level[chip->lv_peer].name : "");
    tpl->level = (int8_t)li;
    snprintf(tpl->name, sizeof tpl->name, "%s", level);
    if (yconf_get_string(c, m, field, "name", 0, tpl->name, sizeof tpl->name) != 0 ||
        yconf_get_number(c, m, field, "bandwidth_GBps", YCONF_POS, 1, &bw) != 0 ||
        yconf_get_scaled_u64(c, m, field, "latency_ns", YCONF_NONNEG, 1000.0, &tpl->latency_ps) != 0)
        return -1;
    int e = yconf_lookup(c, m, "efficiency");
    char ef[112];
    yconf_field(ef, sizeof ef, field, "efficiency");
    if (e >= 0 && (c->nodes[e].kind != YCONF_MAPPING ||
                   yconf_check_keys(c, e, ef, chipcfg_efficiency_keys(LK_LINK)) != 0 ||
                   yconf_get_number(c, e, ef, "bandwidth_fraction", YCONF_FRAC, 1, &eff) != 0)) {
        if (c->nodes[e].kind != YCONF_MAPPING)
            return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[e].line, ef,
                            "expected {bandwidth_fraction}, got %s", yconf_kind_name(c, e));
        return -1;
    }
    tpl->bw_bytes_per_s = bw * 1e9 * eff;
    char fw[8] = "";
    if (yconf_get_string(c, m, field, "forward", 0, fw, sizeof fw) != 0)
        return -1;
    if (strcmp(fw, "true") == 0)
        tpl->forward = 1;
    else if (fw[0] != '\0' && strcmp(fw, "false") != 0)
    {
        char ff[112];
        yconf_field(ff, sizeof ff, field, "forward");
        return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[yconf_lookup(c, m, "forward")].line,
                        ff, "expected true or false, got '%s'", fw);
    }
    tpl->transport = li == chip->lv_peer ? ST_PEER : ST_PCIE;
    char tr[16] = "";
    if (yconf_get_string(c, m, field, "transport", 0, tr, sizeof tr) != 0)
        return -1;
    if (tr[0] != '\0') {
        int k = 0;
        while (k < ST_COUNT && strcmp(tr, sys_transport_name((enum sys_transport)k)) != 0)
            k++;
        char tf[112];
        yconf_field(tf, sizeof tf, field, "transport");
        if (k == ST_COUNT)
            return diag_set(c->d, DIAG_E_UNKNOWN_NAME, c->path,
                            c->nodes[yconf_lookup(c, m, "transport")].line, tf,
                            "unknown transport '%s' (known: peer, pcie, network)", tr);
        tpl->transport = (enum sys_transport)k;
    }
    tpl->line = c->nodes[m].line;
    return 0;
}

/* links[i], mapping m: one link from each of its `from` to its `to`. */
static int read_link(struct sysparse *p, int m, int i)
{
    struct yconf *c = p->c;
    struct hw_system *s = p->s;
    char field[96];
    snprintf(field, sizeof field, "links[%d]", i);
    if (c->nodes[m].kind != YCONF_MAPPING)
        return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[m].line, field,
                        "expected a mapping {level, from, to, ...}, got %s", yconf_kind_name(c, m));
    struct sys_link tpl;
    if (link_template(p, m, field, &tpl) != 0)
        return -1;
    char tf[112];
    yconf_field(tf, sizeof tf, field, "to");
    int tv = yconf_lookup(c, m, "to"), fv = yconf_lookup(c, m, "from");
    if (tv < 0 || fv < 0)
        return diag_set(c->d, DIAG_E_MISSING, c->path, c->nodes[m].line, field,
                        "a link needs from and to");
    if (link_end(p, tv, tf, &tpl.b) != 0)
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
            if (link_end(p, (int)f, tf, &l.a) != 0)
                return -1;
            f = list ? (uint32_t)c->nodes[f].next : f;
        }
        if (l.a == l.b)
            return diag_set(c->d, DIAG_E_RANGE, c->path, tpl.line, field,
                            "a link from '%s' to itself", s->nodes[l.a].name);
        if (s->nlinks == p->lcap) {
            p->lcap = p->lcap ? p->lcap * 2 : 16;
            s->links = sim_xrealloc(s->links, p->lcap * sizeof *s->links);
        }
        if (s->nlinks >= SYS_MAX_LINKS)
            return diag_set(c->d, DIAG_E_RANGE, c->path, tpl.line, "links",
                            "more than %d links", SYS_MAX_LINKS);
        s->links[s->nlinks++] = l;
    }
    return 0;
}

static int read_links(struct sysparse *p, int root)
{
    struct yconf *c = p->c;
    int lv = yconf_lookup(c, root, "links");
    if (lv >= 0 && c->nodes[lv].kind != YCONF_SEQUENCE)
        return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[lv].line, "links",
                        "expected a list of links, got %s", yconf_kind_name(c, lv));
    int i = 0;
    for (int m = lv >= 0 ? c->nodes[lv].first : -1; m >= 0; m = c->nodes[m].next, i++)
        if (read_link(p, m, i) != 0)
            return -1;
    return 0;
}

int sysload_body(struct yconf *c, int root, struct hw_system *s)
{
    struct sysparse p = {.c = c, .s = s};
    int rc = 0;
    if (read_unified(&p, root) != 0 || read_devices(&p, root) != 0 ||
        read_nodes(&p, root) != 0 || read_links(&p, root) != 0)
        rc = -1;
    free(p.nh);
    return rc;
}
