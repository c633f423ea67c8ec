/* yconf.c: YAML file -> a tree of plain data, and its checked readers
 * (yconf.h).
 *
 * Pass 1 reads the file (at most rules->max_bytes) and turns libyaml's
 * event stream into a small tree of scalars, mappings and sequences, each
 * node remembering its 1-based line.  Pass 2, the readers below, walks it
 * for the loaders: unknown and duplicate keys first (in file order), then
 * each required key, its type and its range.  The first problem found is
 * reported through diag_set() and the reader returns -1.
 *
 * The only file that includes yaml.h. */
#include "yconf.h"

#include "afile.h"
#include "check.h"
#include "numfmt.h"
#include "suggest.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#define CFG_MAX_FILE_BYTES (64u << 20) /* 64 MiB: a chip config is a few KiB, a system of 2048 nodes 4 MiB */
#define CFG_MAX_DEPTH 8               /* schema needs 3 (top, section, dtype map) */
#define CFG_MAX_NODES 4000000         /* YAML nodes: a 2048-node system has about 600k */

static const struct yconf_rules config_rules = {.max_bytes = CFG_MAX_FILE_BYTES};

void yconf_free(struct yconf *y)
{
    free(y->nodes);
    free(y->text);
    y->nodes = NULL;
    y->text = NULL;
}

static int mark_line(yaml_mark_t m)
{
    return m.line >= (size_t)1000000000 ? 0 : (int)m.line + 1;
}

/* ---------------------------------------------------------------- pass 1 */

static int read_file(struct yconf *c, const struct yconf_rules *r, unsigned char **buf_out,
                     size_t *len_out)
{
    FILE *f = fopen(c->path, "rb");
    afile_note_input(f);
    if (f == NULL)
        return diag_set(c->d, DIAG_E_IO, c->path, 0, "", "cannot open: %s", strerror(errno));
    size_t cap = 4096, len = 0;
    unsigned char *buf = sim_xrealloc(NULL, cap);
    for (;;) { /* reads at most max_bytes + 1 bytes, then stops */
        if (len == cap) {
            cap *= 2;
            buf = sim_xrealloc(buf, cap);
        }
        size_t want = cap - len;
        if (want > r->max_bytes + 1 - len)
            want = r->max_bytes + 1 - len;
        size_t got = fread(buf + len, 1, want, f);
        len += got;
        if (got == 0 || len > r->max_bytes)
            break;
    }
    int err = ferror(f) && !r->as_loader;  /* the loader's reader took a read error as the end */
    int saved = errno;
    fclose(f);
    if (err) {
        free(buf);
        return diag_set(c->d, DIAG_E_IO, c->path, 0, "", "cannot read: %s", strerror(saved));
    }
    if (len > r->max_bytes) {
        free(buf);
        if (r->too_large != NULL)
            return diag_set(c->d, DIAG_E_RANGE, c->path, 0, "", "%s", r->too_large);
        return diag_set(c->d, DIAG_E_RANGE, c->path, 0, "",
                        "file is larger than %zu bytes; not a config", r->max_bytes);
    }
    *buf_out = buf;
    *len_out = len;
    return 0;
}

int yconf_new_node(struct yconf *c, enum yconf_kind kind, int line, int parent)
{
    if (c->n_nodes >= CFG_MAX_NODES)
        return diag_set(c->d, DIAG_E_RANGE, c->path, line, "",
                        "more than %d YAML nodes; not a config", CFG_MAX_NODES);
    if (c->n_nodes == c->cap_nodes) {
        c->cap_nodes = c->cap_nodes ? c->cap_nodes * 2 : 64;
        c->nodes = sim_xrealloc(c->nodes, c->cap_nodes * sizeof *c->nodes);
    }
    int i = (int)c->n_nodes++;
    c->nodes[i] = (struct yconf_node){.kind = kind, .line = line, .first = -1, .last = -1, .next = -1};
    if (parent >= 0) {
        struct yconf_node *p = &c->nodes[parent];
        if (p->kind == YCONF_MAPPING && p->n_children % 2 == 1)
            c->nodes[i].key_line = c->nodes[p->last].line;
        p->n_children++;
        if (p->last >= 0)
            c->nodes[p->last].next = i;
        else
            p->first = i;
        p->last = i;
    }
    return i;
}

void yconf_drop_item(struct yconf *c, int seq, int n)
{
    struct yconf_node *p = &c->nodes[seq];
    SIM_CHECK(p->kind == YCONF_SEQUENCE);
    int prev = -1, k = p->first;
    while (k >= 0 && k != n) {
        prev = k;
        k = c->nodes[k].next;
    }
    SIM_CHECK(k == n);
    if (prev < 0)
        p->first = c->nodes[n].next;
    else
        c->nodes[prev].next = c->nodes[n].next;
    if (p->last == n)
        p->last = prev;
    p->n_children--;
    c->nodes[n].next = -1;
}

void yconf_set_text(struct yconf *c, int n, const char *s, size_t len)
{
    while (c->n_text + len + 1 > c->cap_text) {
        c->cap_text = c->cap_text ? c->cap_text * 2 : 1024;
        c->text = sim_xrealloc(c->text, c->cap_text);
    }
    if (len > 0)
        memcpy(c->text + c->n_text, s, len);
    c->text[c->n_text + len] = '\0';
    c->nodes[n].text = c->n_text;
    c->nodes[n].len = len;
    c->n_text += len + 1;
}

/* Line of a reader error (bad UTF-8, control characters), which libyaml
 * reports as a byte offset rather than a mark. */
static int offset_line(const unsigned char *buf, size_t len, size_t off)
{
    int line = 1;
    for (size_t i = 0; i < off && i < len; i++)
        if (buf[i] == '\n')
            line++;
    return line;
}

/* One tree being built from the event stream. */
struct build {
    struct yconf *y;
    const struct yconf_rules *r;
    int *stack;                 /* open mappings and sequences, innermost last */
    int depth, cap;
    int root, docs, done;
    /* as_loader: the anchors so far, for aliases */
    struct anchor {
        char *name;
        int node;
    } *anchors;
    size_t nanchors, cap_anchors;
};

static int parse_error(struct build *b, const yaml_parser_t *p, const unsigned char *buf,
                       size_t len)
{
    struct yconf *c = b->y;
    const char *problem = p->problem ? p->problem : "malformed YAML";
    if (b->r->as_loader)
        return diag_set(c->d, DIAG_E_PARSE, c->path, (int)p->problem_mark.line + 1, "", "%s",
                        problem);
    int line;
    if (p->error == YAML_READER_ERROR)
        line = offset_line(buf, len, p->problem_offset);
    else
        line = mark_line(p->problem_mark);
    if (p->context)
        return diag_set(c->d, DIAG_E_PARSE, c->path, line, "", "%s (%s)", problem, p->context);
    return diag_set(c->d, DIAG_E_PARSE, c->path, line, "", "%s", problem);
}

/* Refuse YAML features a config never needs and that would make the tree
 * something other than plain data. */
static int check_plain_data(struct build *b, const yaml_char_t *anchor, const yaml_char_t *tag,
                            int line)
{
    struct yconf *c = b->y;
    if (b->r->as_loader)
        return 0;
    if (anchor != NULL)
        return diag_set(c->d, DIAG_E_UNSUPPORTED, c->path, line, "",
                        "anchors (&%.40s) are not supported in configs; write the value out",
                        (const char *)anchor);
    if (tag != NULL)
        return diag_set(c->d, DIAG_E_UNSUPPORTED, c->path, line, "",
                        "explicit tags (%.40s) are not supported in configs",
                        (const char *)tag);
    return 0;
}

/* as_loader: anchor names node n, unless an earlier node has the name
 * (libyaml's words for it). */
static int add_anchor(struct build *b, const yaml_char_t *anchor, int n)
{
    if (anchor == NULL)
        return 0;
    for (size_t i = 0; i < b->nanchors; i++)
        if (strcmp(b->anchors[i].name, (const char *)anchor) == 0)
            return diag_set(b->y->d, DIAG_E_PARSE, b->y->path, b->y->nodes[n].line, "", "%s",
                            "second occurrence");
    if (b->nanchors == b->cap_anchors) {
        b->cap_anchors = b->cap_anchors ? 2 * b->cap_anchors : 16;
        b->anchors = sim_xrealloc(b->anchors, b->cap_anchors * sizeof *b->anchors);
    }
    size_t len = strlen((const char *)anchor);
    char *name = sim_xrealloc(NULL, len + 1);
    memcpy(name, anchor, len + 1);
    b->anchors[b->nanchors++] = (struct anchor){name, n};
    return 0;
}

static int on_alias(struct build *b, const yaml_event_t *ev, int line, int parent)
{
    struct yconf *c = b->y;
    const char *name = (const char *)ev->data.alias.anchor;
    if (!b->r->as_loader)
        return diag_set(c->d, DIAG_E_UNSUPPORTED, c->path, line, "",
                        "aliases (*%.40s) are not supported in configs; write the value out",
                        name);
    size_t i = 0;
    while (i < b->nanchors && strcmp(b->anchors[i].name, name) != 0)
        i++;
    if (i == b->nanchors)
        return diag_set(c->d, DIAG_E_PARSE, c->path, line, "", "%s", "found undefined alias");
    int n = yconf_new_node(c, YCONF_ALIAS, line, parent);
    if (n < 0)
        return -1;
    c->nodes[n].first = b->anchors[i].node;
    return 0;
}

static int on_scalar(struct build *b, const yaml_event_t *ev, int line, int parent)
{
    struct yconf *c = b->y;
    if (check_plain_data(b, ev->data.scalar.anchor, ev->data.scalar.tag, line) != 0)
        return -1;
    int n = yconf_new_node(c, YCONF_SCALAR, line, parent);
    if (n < 0)
        return -1;
    c->nodes[n].plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    yconf_set_text(c, n, (const char *)ev->data.scalar.value, ev->data.scalar.length);
    if (b->root < 0)
        b->root = n;
    return b->r->as_loader ? add_anchor(b, ev->data.scalar.anchor, n) : 0;
}

/* The start of a mapping or a sequence. */
static int on_open(struct build *b, const yaml_event_t *ev, int line, int parent)
{
    struct yconf *c = b->y;
    int map = ev->type == YAML_MAPPING_START_EVENT;
    const yaml_char_t *anchor = map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
    if (check_plain_data(b, anchor,
                         map ? ev->data.mapping_start.tag : ev->data.sequence_start.tag, line) != 0)
        return -1;
    if (!b->r->as_loader && b->depth >= CFG_MAX_DEPTH)
        return diag_set(c->d, DIAG_E_RANGE, c->path, line, "",
                        "nesting deeper than %d levels; not a config", CFG_MAX_DEPTH);
    int n = yconf_new_node(c, map ? YCONF_MAPPING : YCONF_SEQUENCE, line, parent);
    if (n < 0)
        return -1;
    if (b->depth == b->cap) {
        b->cap = b->cap ? 2 * b->cap : CFG_MAX_DEPTH;
        b->stack = sim_xrealloc(b->stack, (size_t)b->cap * sizeof *b->stack);
    }
    b->stack[b->depth++] = n;
    if (b->root < 0)
        b->root = n;
    return b->r->as_loader ? add_anchor(b, anchor, n) : 0;
}

/* One event into the tree: 0, or -1 with *d. */
static int on_event(struct build *b, const yaml_event_t *ev)
{
    struct yconf *c = b->y;
    int line = mark_line(ev->start_mark);
    int parent = b->depth > 0 ? b->stack[b->depth - 1] : -1;
    switch (ev->type) {
    case YAML_STREAM_END_EVENT:
        b->done = 1;
        return 0;
    case YAML_DOCUMENT_START_EVENT:
        if (++b->docs > 1)
            return diag_set(c->d, DIAG_E_UNSUPPORTED, c->path, line, "",
                            "more than one YAML document; a config is one mapping");
        return 0;
    case YAML_DOCUMENT_END_EVENT:
        b->done = b->r->as_loader;      /* the loader reads one document */
        return 0;
    case YAML_ALIAS_EVENT:
        return on_alias(b, ev, line, parent);
    case YAML_SCALAR_EVENT:
        return on_scalar(b, ev, line, parent);
    case YAML_MAPPING_START_EVENT:
    case YAML_SEQUENCE_START_EVENT:
        return on_open(b, ev, line, parent);
    case YAML_MAPPING_END_EVENT:
    case YAML_SEQUENCE_END_EVENT:
        if (b->depth > 0)
            b->depth--;
        return 0;
    case YAML_STREAM_START_EVENT:
    case YAML_NO_EVENT:
        return 0;
    }
    return 0;
}

/* Build the node tree.  Returns the root node index, -1 on error. */
static int build_tree(struct yconf *c, const struct yconf_rules *r, const unsigned char *buf,
                      size_t len)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) {
        fprintf(stderr, "strata: out of memory initializing libyaml\n");
        abort();
    }
    yaml_parser_set_input_string(&p, buf, len);

    struct build b = {.y = c, .r = r, .root = -1};
    int rc = 0;
    while (!b.done && rc == 0) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            rc = parse_error(&b, &p, buf, len);
            break;
        }
        rc = on_event(&b, &ev);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    free(b.stack);
    for (size_t i = 0; i < b.nanchors; i++)
        free(b.anchors[i].name);
    free(b.anchors);
    if (rc != 0)
        return -1;
    if (b.root < 0) {
        if (r->empty != NULL)
            return diag_set(c->d, DIAG_E_PARSE, c->path, 0, "", "%s", r->empty);
        return diag_set(c->d, DIAG_E_PARSE, c->path, 0, "",
                        "file is empty; expected a mapping of config keys (see configs/README.md)");
    }
    return b.root;
}

int yconf_parse_file(struct yconf *c, const struct yconf_rules *rules)
{
    const struct yconf_rules *r = rules != NULL ? rules : &config_rules;
    unsigned char *buf = NULL;
    size_t len = 0;
    if (read_file(c, r, &buf, &len) != 0)
        return -1;
    int root = build_tree(c, r, buf, len);
    free(buf);
    return root;
}

void yconf_copy(struct yconf *dst, const struct yconf *src, const char *path, struct diag *d)
{
    *dst = (struct yconf){.path = path, .d = d};
    dst->n_nodes = dst->cap_nodes = src->n_nodes;
    dst->n_text = dst->cap_text = src->n_text;
    dst->nodes = sim_xrealloc(NULL, dst->cap_nodes * sizeof *dst->nodes);
    dst->text = sim_xrealloc(NULL, dst->cap_text ? dst->cap_text : 1);
    memcpy(dst->nodes, src->nodes, dst->n_nodes * sizeof *dst->nodes);
    memcpy(dst->text, src->text, dst->n_text);
}

/* ---------------------------------------------------------------- pass 2 */

const char *yconf_text(const struct yconf *c, int n)
{
    return c->text + c->nodes[n].text;
}

const char *yconf_kind_name(const struct yconf *c, int n)
{
    switch (c->nodes[n].kind) {
    case YCONF_MAPPING:
        return "a mapping";
    case YCONF_SEQUENCE:
        return "a sequence";
    case YCONF_ALIAS:
        return "an alias";
    case YCONF_SCALAR:
    default:
        return c->nodes[n].plain ? "a scalar" : "a quoted string";
    }
}

int yconf_map_line(const struct yconf *c, int map)
{
    return c->nodes[map].key_line > 0 ? c->nodes[map].key_line : c->nodes[map].line;
}

int yconf_next_key(const struct yconf *c, int k)
{
    int v = c->nodes[k].next;
    return v >= 0 ? c->nodes[v].next : -1;
}

void yconf_field(char *buf, size_t size, const char *section, const char *key)
{
    /* as snprintf("%s.%s") would, without it: a system file of thousands of
     * links names a field per link end */
    if (size == 0)
        return;
    size_t n = 0, ls = strlen(section), lk = strlen(key);
    if (ls > 0) {
        size_t k = ls < size - 1 ? ls : size - 1;
        memcpy(buf, section, k);
        n = k;
        if (n < size - 1)
            buf[n++] = '.';
    }
    size_t k = lk < size - 1 - n ? lk : size - 1 - n;
    memcpy(buf + n, key, k);
    buf[n + k] = '\0';
}

int yconf_key_eq(const struct yconf *c, int k, const char *s)
{
    size_t n = strlen(s);
    return c->nodes[k].len == n && memcmp(yconf_text(c, k), s, n) == 0;
}

int yconf_check_keys(struct yconf *c, int map, const char *section, const char *const *allowed)
{
    char field[128];
    for (int k = c->nodes[map].first; k >= 0; k = yconf_next_key(c, k)) {
        const struct yconf_node *kn = &c->nodes[k];
        if (kn->kind != YCONF_SCALAR)
            return diag_set(c->d, DIAG_E_TYPE, c->path, kn->line, section,
                            "keys must be plain words, got %s", yconf_kind_name(c, k));
        int known = 0;
        for (const char *const *a = allowed; *a != NULL; a++)
            if (yconf_key_eq(c, k, *a))
                known = 1;
        yconf_field(field, sizeof field, section, yconf_text(c, k));
        if (!known) {
            char list[512] = "";
            size_t used = 0;
            for (const char *const *a = allowed; *a != NULL && used < sizeof list; a++)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                         a == allowed ? "" : ", ", *a);
            struct suggest sg;
            char hint[SUGGEST_MAX * SUGGEST_NAME + 32];
            suggest_init(&sg, yconf_text(c, k));
            suggest_offer_list(&sg, allowed);
            suggest_text(&sg, hint, sizeof hint);
            return diag_set(c->d, DIAG_E_UNKNOWN_KEY, c->path, kn->line, field,
                            "unknown key%s expected one of: %s", hint[0] ? hint : ";", list);
        }
        for (int e = c->nodes[map].first; e != k; e = yconf_next_key(c, e))
            if (yconf_key_eq(c, e, yconf_text(c, k)))
                return diag_set(c->d, DIAG_E_DUPLICATE, c->path, kn->line, field,
                                "duplicate key (first given on line %d)", c->nodes[e].line);
    }
    return 0;
}

int yconf_lookup(const struct yconf *c, int map, const char *key)
{
    for (int k = c->nodes[map].first; k >= 0; k = yconf_next_key(c, k))
        if (c->nodes[k].kind == YCONF_SCALAR && yconf_key_eq(c, k, key))
            return c->nodes[k].next;
    return -1;
}

int yconf_section(struct yconf *c, int root, const char *name, int required)
{
    int v = yconf_lookup(c, root, name);
    if (v < 0) {
        if (!required)
            return -2;
        return diag_set(c->d, DIAG_E_MISSING, c->path, c->nodes[root].line, name,
                        "required section is missing");
    }
    if (c->nodes[v].kind != YCONF_MAPPING)
        return diag_set(c->d, DIAG_E_TYPE, c->path, c->nodes[v].line, name,
                        "expected a mapping of keys, got %s", yconf_kind_name(c, v));
    return v;
}

/* Whether x is in range r; if not, the error for it. */
static int check_range(struct yconf *c, int line, const char *field, enum yconf_range r, double x,
                       const char *s)
{
    switch (r) {
    case YCONF_POS:
        /* every positive figure of a config (MHz, GB/s, bytes per cycle,
         * KiB, ns) is far inside this; a value like 1e-300 passed "> 0" and
         * made times infinite */
        if (!(x >= YCONF_MIN_POS && x <= YCONF_MAX_POS))
            return diag_set(c->d, DIAG_E_RANGE, c->path, line, field,
                            "must be between %g and %g, got %.40s", YCONF_MIN_POS, YCONF_MAX_POS, s);
        break;
    case YCONF_NONNEG:
        if (!(x >= 0))
            return diag_set(c->d, DIAG_E_RANGE, c->path, line, field,
                            "must be >= 0, got %.40s", s);
        break;
    case YCONF_FRAC:
        if (!(x >= YCONF_MIN_POS && x <= 1))
            return diag_set(c->d, DIAG_E_RANGE, c->path, line, field,
                            "must be in [%g, 1], got %.40s", YCONF_MIN_POS, s);
        break;
    case YCONF_FRAC0:
        if (!(x >= 0 && x < 1))
            return diag_set(c->d, DIAG_E_RANGE, c->path, line, field,
                            "must be in [0, 1), got %.40s", s);
        break;
    case YCONF_COUNT:
        if (x != floor(x))
            return diag_set(c->d, DIAG_E_TYPE, c->path, line, field,
                            "must be a whole number, got %.40s", s);
        if (!(x >= 1 && x <= 4294967295.0))
            return diag_set(c->d, DIAG_E_RANGE, c->path, line, field,
                            "must be between 1 and 4294967295, got %.40s", s);
        break;
    }
    return 0;
}

int yconf_number(struct yconf *c, int v, const char *field, enum yconf_range r, double *out)
{
    const struct yconf_node *n = &c->nodes[v];
    const char *s = yconf_text(c, v);
    if (n->kind != YCONF_SCALAR)
        return diag_set(c->d, DIAG_E_TYPE, c->path, n->line, field,
                        "expected a number, got %s", yconf_kind_name(c, v));
    if (!n->plain)
        return diag_set(c->d, DIAG_E_TYPE, c->path, n->line, field,
                        "expected a number, got a quoted string \"%.40s\"", s);
    if (n->len == 0)
        return diag_set(c->d, DIAG_E_TYPE, c->path, n->line, field,
                        "expected a number, got nothing");
    if (!num_is_decimal(s))
        return diag_set(c->d, DIAG_E_TYPE, c->path, n->line, field,
                        "expected a number, got '%.40s'", s);
    double x = strtod(s, NULL);
    if (!isfinite(x))
        return diag_set(c->d, DIAG_E_RANGE, c->path, n->line, field, "too large, got %.40s", s);
    if (check_range(c, n->line, field, r, x, s) != 0)
        return -1;
    *out = x;
    return 0;
}

int yconf_get_number(struct yconf *c, int map, const char *section, const char *key,
                     enum yconf_range r, int required, double *out)
{
    char field[128];
    yconf_field(field, sizeof field, section, key);
    int v = yconf_lookup(c, map, key);
    if (v < 0) {
        if (!required)
            return 1;
        return diag_set(c->d, DIAG_E_MISSING, c->path, yconf_map_line(c, map), field,
                        "required key is missing");
    }
    return yconf_number(c, v, field, r, out);
}

int yconf_get_u32(struct yconf *c, int map, const char *section, const char *key, uint32_t *out)
{
    double x;
    if (yconf_get_number(c, map, section, key, YCONF_COUNT, 1, &x) != 0)
        return -1;
    *out = (uint32_t)x;
    return 0;
}

int yconf_get_scaled_u64(struct yconf *c, int map, const char *section, const char *key,
                         enum yconf_range r, double scale, uint64_t *out)
{
    double x;
    if (yconf_get_number(c, map, section, key, r, 1, &x) != 0)
        return -1;
    double y = round(x * scale);
    if (y > YCONF_MAX_U64) {
        char field[128];
        yconf_field(field, sizeof field, section, key);
        return diag_set(c->d, DIAG_E_RANGE, c->path, c->nodes[yconf_lookup(c, map, key)].line,
                        field, "too large, got %g", x);
    }
    *out = (uint64_t)y;
    return 0;
}

int yconf_get_string(struct yconf *c, int map, const char *section, const char *key,
                     int required, char *buf, size_t size)
{
    char field[128];
    yconf_field(field, sizeof field, section, key);
    int v = yconf_lookup(c, map, key);
    if (v < 0) {
        if (!required)
            return 0;
        return diag_set(c->d, DIAG_E_MISSING, c->path, yconf_map_line(c, map), field,
                        "required key is missing");
    }
    const struct yconf_node *n = &c->nodes[v];
    if (n->kind != YCONF_SCALAR)
        return diag_set(c->d, DIAG_E_TYPE, c->path, n->line, field,
                        "expected a string, got %s", yconf_kind_name(c, v));
    if (n->len == 0)
        return diag_set(c->d, DIAG_E_RANGE, c->path, n->line, field, "must not be empty");
    if (strlen(yconf_text(c, v)) != n->len)
        return diag_set(c->d, DIAG_E_TYPE, c->path, n->line, field,
                        "must not contain a NUL character");
    if (n->len >= size)
        return diag_set(c->d, DIAG_E_RANGE, c->path, n->line, field,
                        "longer than %zu characters", size - 1);
    memcpy(buf, yconf_text(c, v), n->len + 1);
    return 0;
}
