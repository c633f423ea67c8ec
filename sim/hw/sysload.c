/* sysload.c: a system file's tree -> struct hw_system (sysload.h).
 *
 * Devices first (a count, named gpu0, gpu1, ..., or a list of names), then
 * the other nodes (switches, hosts), then the links, each `from` a name, a
 * list of names or "*" (every device), one link each.  Node names go into
 * a hash as they come: a linear scan per link end was most of loading a
 * 2048-node cluster.
 *
 * An entry of `nodes` or `links` may be a repeat group, {repeat: {k: 2048,
 * i: 8}, nodes: [...]} (or links: [...]): its entries once for every value
 * of its variables, the first variable outermost, in the order written, and
 * a name in them may hold {EXPR}, a sum of products of whole numbers and
 * the variables of the groups around it ("gpu{8*k+i}").  A cluster of
 * thousands of nodes is then a page, not 57,000 lines to parse, and it is
 * the same system as the file written out (docs/systems.md). */
#include "sysload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "chipcfg.h"
#include "numfmt.h"

#define SYS_VAR_MAX 16          /* bytes of a repeat variable's name, NUL included */
#define SYS_REPEAT_DEPTH 4      /* repeat groups one inside another */
#define SYS_REPEAT_MAX 262144   /* entries one group may make (SYS_MAX_LINKS) */

static const char *const sys_top_keys[] = {"name", "chip", "devices", "nodes", "links",
                                           "unified_bandwidth_GBps", NULL};
static const char *const sys_node_keys[] = {"name", "kind", "bandwidth_GBps", "nvls", NULL};
static const char *const sys_nodes_group_keys[] = {"repeat", "nodes", NULL};
static const char *const sys_links_group_keys[] = {"repeat", "links", NULL};
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
    /* the repeat groups around the entry being read: variable, value */
    struct sysbind {
        char var[SYS_VAR_MAX];
        int64_t value;
    } bind[SYS_REPEAT_DEPTH];
    int nbind;
    uint64_t outer;             /* copies the groups around the one being read make */
    int tpl_map;                /* the link entry whose template tpl is, or -1 */
    struct sys_link tpl;
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

/* Text and whole numbers onto buf (size bytes, *n used, kept
 * NUL-terminated and cut at its end), without snprintf: the names and
 * fields of a 16,384-GPU cluster's repeat groups are made per entry. */
static void put_text(char *buf, size_t size, size_t *n, const char *t)
{
    size_t k = strlen(t);
    if (k > size - 1 - *n)
        k = size - 1 - *n;
    memcpy(buf + *n, t, k);
    *n += k;
    buf[*n] = '\0';
}

/* v >= 0: every repeat value and {EXPR} is (no minus) */
static void put_int(char *buf, size_t size, size_t *n, int64_t v)
{
    char d[24];
    numfmt_u64(d, sizeof d, (uint64_t)v);
    put_text(buf, size, n, d);
}

/* One {EXPR} of a name, read by recursive descent: a sum of terms, a term
 * factors joined by '*', '/' (whole division) or '%' (remainder: a torus's
 * wrap, "chip{(x+1)%4}"), left to right, a factor a whole number, a
 * variable of a repeat group around the entry, or (EXPR). */
struct expr {
    const struct sysparse *p;
    const char *e;              /* the text between the braces */
    size_t n, i;                /* its length, the position read to */
    const char *err;            /* what is wrong, or NULL */
};

#define EXPR_MAX INT64_C(1000000000)

static int64_t expr_sum(struct expr *x, int depth);

static int64_t expr_factor(struct expr *x, int depth)
{
    const char *e = x->e;
    if (x->i < x->n && e[x->i] == '(') {
        x->i++;
        int64_t v = depth < 16 ? expr_sum(x, depth + 1) : 0;
        if (depth >= 16)
            x->err = "parentheses nested too deep";
        if (x->err == NULL && (x->i >= x->n || e[x->i] != ')'))
            x->err = "a '(' without its ')'";
        x->i++;
        return v;
    }
    if (x->i < x->n && e[x->i] >= '0' && e[x->i] <= '9') {
        int64_t v = 0;
        for (; x->i < x->n && e[x->i] >= '0' && e[x->i] <= '9'; x->i++)
            v = v <= EXPR_MAX ? 10 * v + (e[x->i] - '0') : EXPR_MAX + 1;
        return v;
    }
    size_t v = x->i;
    while (x->i < x->n && (e[x->i] == '_' || (e[x->i] >= 'a' && e[x->i] <= 'z') ||
                           (e[x->i] >= 'A' && e[x->i] <= 'Z') || (x->i > v && e[x->i] >= '0' && e[x->i] <= '9')))
        x->i++;
    int b = x->p->nbind - 1;
    while (b >= 0 && !(strlen(x->p->bind[b].var) == x->i - v &&
                       memcmp(x->p->bind[b].var, e + v, x->i - v) == 0))
        b--;
    if (x->i == v)
        x->err = "expected a number, a variable or (";
    else if (b < 0)
        x->err = "not a variable of a repeat group around this entry";
    return b >= 0 ? x->p->bind[b].value : 0;
}

static int64_t expr_term(struct expr *x, int depth)
{
    int64_t v = expr_factor(x, depth);
    while (x->err == NULL && x->i < x->n && strchr("*/%", x->e[x->i]) != NULL) {
        char op = x->e[x->i++];
        int64_t f = expr_factor(x, depth);
        if (op != '*' && f == 0 && x->err == NULL)
            x->err = "a division by 0";
        else if (op == '*')
            v = v <= EXPR_MAX && f <= EXPR_MAX ? v * f : EXPR_MAX + 1;
        else if (f != 0)
            v = op == '/' ? v / f : v % f;
    }
    return v;
}

static int64_t expr_sum(struct expr *x, int depth)
{
    int64_t v = expr_term(x, depth);
    while (x->err == NULL && x->i < x->n && x->e[x->i] == '+') {
        x->i++;
        v += expr_term(x, depth);
        if (v > EXPR_MAX)
            v = EXPR_MAX + 1;
    }
    return v;
}

/* The value of {EXPR} (e, n bytes, without the braces): 0, or -1 with *c->d. */
static int eval_expr(const struct sysparse *p, int line, const char *field, const char *e,
                     size_t n, int64_t *out)
{
    struct yconf *c = p->c;
    struct expr x = {p, e, n, 0, NULL};
    int64_t v = expr_sum(&x, 0);
    if (x.err == NULL && x.i < n)
        return diag_set(c->d, DIAG_E_RANGE, c->path, line, field,
                        "'{%.*s}': unexpected '%c' (+, *, / and %% join numbers, variables and "
                        "parentheses)", (int)n, e, e[x.i]);
    if (x.err != NULL)
        return diag_set(c->d, DIAG_E_RANGE, c->path, line, field,
                        "'{%.*s}': %s (a name's {} holds whole numbers and the variables of the repeat "
                        "groups around it, joined by +, *, / and %%)", (int)n, e, x.err);
    if (v > EXPR_MAX)
        return diag_set(c->d, DIAG_E_RANGE, c->path, line, field, "'{%.*s}' is more than %lld",
                        (int)n, e, (long long)EXPR_MAX);
    *out = v;
    return 0;
}

/* buf (size bytes) with each {EXPR} replaced by its value. */
static int expand_name(const struct sysparse *p, int line, const char *field, char *buf, size_t size)
{
    struct yconf *c = p->c;
    char out[SYS_NAME_MAX * 4];
    size_t o = 0;
    for (const char *q = buf; *q != '\0';) {
        if (*q != '{') {
            if (o + 1 < sizeof out)
                out[o++] = *q;
            q++;
            continue;
        }
        const char *end = strchr(q, '}');
        if (end == NULL)
            return diag_set(c->d, DIAG_E_RANGE, c->path, line, field, "'%s': a '{' without its '}'",
                            buf);
        int64_t v;
        if (eval_expr(p, line, field, q + 1, (size_t)(end - q - 1), &v) != 0)
            return -1;
        out[o] = '\0';
        put_int(out, sizeof out, &o, v);
        q = end + 1;
    }
    out[o] = '\0';
    if (o >= size)
        return diag_set(c->d, DIAG_E_RANGE, c->path, line, field,
                        "'%s' makes the name '%.40s', longer than %zu characters", buf, out, size - 1);
    memcpy(buf, out, o + 1);
    return 0;
}

/* Scalar node v as a name into buf (size bytes), its {EXPR}s replaced
 * (a name in a repeat group). */
static int scalar_name(const struct sysparse *p, int v, const char *field, char *buf, size_t size)
{
    struct yconf *c = p->c;
    const struct yconf_node *n = &c->nodes[v];
    if (n->kind != YCONF_SCALAR)
        return diag_set(c->d, DIAG_E_TYPE, c->path, n->line, field, "expected a name, got %s",
                        yconf_kind_name(c, v));
    if (n->len == 0 || n->len >= size || strlen(yconf_text(c, v)) != n->len)
        return diag_set(c->d, DIAG_E_RANGE, c->path, n->line, field,
                        "a name of 1 to %zu characters, got '%.40s'", size - 1, yconf_text(c, v));
    memcpy(buf, yconf_text(c, v), n->len + 1);
    if (strchr(buf, '{') != NULL && expand_name(p, n->line, field, buf, size) != 0)
        return -1;
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
    if (scalar_name(p, v, field, name, sizeof name) != 0)
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
            if (scalar_name(p, m, field, name, sizeof name) != 0)
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

/* One of the other nodes: mapping m, named field. */
static int read_node(struct sysparse *p, int m, const char *field)
{
    struct yconf *c = p->c;
    struct hw_system *s = p->s;
    if (c->nodes[m].kind != YCONF_MAPPING)
        return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[m].line, field,
                        "expected a mapping {name, kind}, got %s", yconf_kind_name(c, m));
    char name[SYS_NAME_MAX], kind[16];
    int nv = yconf_lookup(c, m, "name");
    if (yconf_check_keys(c, m, field, sys_node_keys) != 0 ||
        yconf_get_string(c, m, field, "name", 1, name, sizeof name) != 0 ||
        scalar_name(p, nv, field, name, sizeof name) != 0 ||
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

typedef int (*sys_entry_fn)(struct sysparse *p, int m, const char *field);

static int read_list(struct sysparse *p, int seq, const char *field, const char *key,
                     sys_entry_fn fn);

/* A repeat group, mapping m named field, of list key (nodes or links):
 * its list once for each value of its variables, the first outermost. */
static int read_group(struct sysparse *p, int m, const char *field, const char *key,
                      sys_entry_fn fn)
{
    struct yconf *c = p->c;
    char rf[112], lf[112];
    yconf_field(rf, sizeof rf, field, "repeat");
    yconf_field(lf, sizeof lf, field, key);
    int rv = yconf_lookup(c, m, "repeat"), lv = yconf_lookup(c, m, key);
    if (yconf_check_keys(c, m, field, key[0] == 'n' ? sys_nodes_group_keys : sys_links_group_keys) != 0)
        return -1;
    if (c->nodes[rv].kind != YCONF_MAPPING || c->nodes[rv].first < 0)
        return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[rv].line, rf,
                        "expected {VARIABLE: COUNT, ...} (repeat: {k: 2048, i: 8}), got %s",
                        yconf_kind_name(c, rv));
    if (lv < 0 || c->nodes[lv].kind != YCONF_SEQUENCE)
        return diag_set(c->d, lv < 0 ? DIAG_E_MISSING : DIAG_E_TYPE, c->path,
                        c->nodes[lv < 0 ? m : lv].line, lf,
                        "a repeat group lists the %s it repeats: {repeat: {...}, %s: [...]}", key, key);
    int b0 = p->nbind, rc = 0;
    uint64_t total = 1;
    int64_t count[SYS_REPEAT_DEPTH];
    for (int k = c->nodes[rv].first; k >= 0; k = c->nodes[c->nodes[k].next].next) {
        const char *var = c->nodes[k].kind == YCONF_SCALAR ? yconf_text(c, k) : "";
        int val = c->nodes[k].next;
        size_t vl = strspn(var, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_0123456789");
        if (p->nbind == SYS_REPEAT_DEPTH)
            return diag_set(c->d, DIAG_E_RANGE, c->path, c->nodes[k].line, rf,
                            "more than %d variables in repeat groups one inside another",
                            SYS_REPEAT_DEPTH);
        if (vl == 0 || vl != strlen(var) || vl >= SYS_VAR_MAX || (var[0] >= '0' && var[0] <= '9'))
            return diag_set(c->d, DIAG_E_RANGE, c->path, c->nodes[k].line, rf,
                            "'%.40s': a variable is a letter or '_', then letters, digits, '_' "
                            "(at most %d)", var, SYS_VAR_MAX - 1);
        for (int b = 0; b < p->nbind; b++)
            if (strcmp(p->bind[b].var, var) == 0)
                return diag_set(c->d, DIAG_E_DUPLICATE, c->path, c->nodes[k].line, rf,
                                "variable '%s' is already a repeat variable here", var);
        double x;
        char vf[112];
        yconf_field(vf, sizeof vf, rf, var);
        if (yconf_number(c, val, vf, YCONF_COUNT, &x) != 0)
            return -1;
        total *= (uint64_t)x;
        if (x < 1 || total * p->outer > SYS_REPEAT_MAX)
            return diag_set(c->d, DIAG_E_RANGE, c->path, c->nodes[val].line, vf,
                            "a repeat group makes 1 to %d copies with the groups around it, this "
                            "one %.0f", SYS_REPEAT_MAX, x < 1 ? x : (double)(total * p->outer));
        snprintf(p->bind[p->nbind].var, SYS_VAR_MAX, "%s", var);
        count[p->nbind - b0] = (int64_t)x;
        p->bind[p->nbind++].value = 0;
    }
    /* every value, the last variable fastest */
    p->outer *= total;
    for (uint64_t n = 0; n < total && rc == 0; n++) {
        rc = read_list(p, lv, lf, key, fn);
        for (int b = p->nbind - 1; b >= b0; b--) {
            if (++p->bind[b].value < count[b - b0])
                break;
            p->bind[b].value = 0;
        }
    }
    p->outer /= total;
    p->nbind = b0;
    return rc;
}

/* The entries of list seq (named field): each fn's, or a repeat group's. */
static int read_list(struct sysparse *p, int seq, const char *field, const char *key,
                     sys_entry_fn fn)
{
    struct yconf *c = p->c;
    int i = 0;
    for (int m = c->nodes[seq].first; m >= 0; m = c->nodes[m].next, i++) {
        /* in a repeat group, with its variables' values: links[2].links[0] (k=5);
         * a group inside gets the path alone (its entries add the values) */
        char ef[160];
        size_t w = 0;
        put_text(ef, sizeof ef, &w, field);
        put_text(ef, sizeof ef, &w, "[");
        put_int(ef, sizeof ef, &w, i);
        put_text(ef, sizeof ef, &w, "]");
        int group = c->nodes[m].kind == YCONF_MAPPING && yconf_lookup(c, m, "repeat") >= 0;
        for (int b = 0; b < p->nbind && !group; b++) {
            put_text(ef, sizeof ef, &w, b ? ", " : " (");
            put_text(ef, sizeof ef, &w, p->bind[b].var);
            put_text(ef, sizeof ef, &w, "=");
            put_int(ef, sizeof ef, &w, p->bind[b].value);
            put_text(ef, sizeof ef, &w, b + 1 == p->nbind ? ")" : "");
        }
        int rc = group ? read_group(p, m, ef, key, fn) : fn(p, m, ef);
        if (rc != 0)
            return -1;
    }
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
    return nv >= 0 ? read_list(p, nv, "nodes", "nodes", read_node) : 0;
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

/* A link entry, mapping m named field: one link from each of its `from`
 * to its `to`. */
static int read_link(struct sysparse *p, int m, const char *field)
{
    struct yconf *c = p->c;
    struct hw_system *s = p->s;
    if (c->nodes[m].kind != YCONF_MAPPING)
        return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[m].line, field,
                        "expected a mapping {level, from, to, ...}, got %s", yconf_kind_name(c, m));
    /* a repeat group's entry reads the same template every time */
    if (p->tpl_map != m) {
        p->tpl_map = -1;
        if (link_template(p, m, field, &p->tpl) != 0)
            return -1;
        p->tpl_map = m;
    }
    struct sys_link tpl = p->tpl;
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
    return lv >= 0 ? read_list(p, lv, "links", "links", read_link) : 0;
}

int sysload_body(struct yconf *c, int root, struct hw_system *s)
{
    struct sysparse p = {.c = c, .s = s, .outer = 1, .tpl_map = -1};
    int rc = 0;
    if (read_unified(&p, root) != 0 || read_devices(&p, root) != 0 ||
        read_nodes(&p, root) != 0 || read_links(&p, root) != 0)
        rc = -1;
    free(p.nh);
    return rc;
}
