/* yconf.h: a YAML file read into a small tree of plain data, and the
 * readers that check its keys and values the way every hardware file is
 * checked ("file:line: section.key: message").
 *
 * The one module that includes yaml.h (STYLE.md: each external library in
 * one file): chip configs, system files, overlays (cfgset.c) and the spec
 * sheets of `strata new-chip` (spec.c) are all read through it.
 *
 * The tree: every node remembers its 1-based line; a mapping's children
 * alternate key, value, key, value.  Nothing here is global; all memory is
 * owned by one struct yconf and released by yconf_free() on every path.
 */
#ifndef STRATA_YCONF_H
#define STRATA_YCONF_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"

enum yconf_kind {
    YCONF_SCALAR,
    YCONF_MAPPING,
    YCONF_SEQUENCE,
    YCONF_ALIAS         /* only under spec rules (yconf_rules.as_loader): first is the node it names */
};

/* One YAML node. */
struct yconf_node {
    enum yconf_kind kind;
    int line;          /* 1-based line where the node starts */
    int key_line;      /* value in a mapping: line of its key (else 0) */
    int n_children;
    int plain;         /* scalar written without quotes (only plain scalars can be numbers) */
    size_t text;       /* scalar: offset of its NUL-terminated text in yconf.text */
    size_t len;        /* scalar: length in bytes (may include an escaped NUL) */
    int first, last;   /* first/last child, -1 if none */
    int next;          /* next sibling, -1 if none */
};

/* A parsed file.  Set path and d, then yconf_parse_file(). */
struct yconf {
    const char *path;
    struct diag *d;
    struct yconf_node *nodes;
    size_t n_nodes, cap_nodes;
    char *text;
    size_t n_text, cap_text;
};

/* How a file is read.  Configs (NULL): at most 64 MiB, nested at most 8
 * deep, and only plain data: anchors, aliases, explicit tags and more than
 * one document are refused, so no input can make the tree large or
 * cyclic.  With as_loader, a file is read as libyaml's document loader
 * reads it (the spec sheets were read so, and their errors say what it
 * said): anchors and tags are ignored, an alias is a YCONF_ALIAS node,
 * only the first document is read, a read error ends the file, a parse
 * error is libyaml's problem at its mark, and nesting is not capped. */
struct yconf_rules {
    size_t max_bytes;           /* a larger file is refused */
    const char *too_large;      /* the message then (NULL: a config's) */
    const char *empty;          /* the message for a file with no document (NULL: a config's) */
    int as_loader;
};

/* Reads y->path into y's tree: its root node, or -1 with *y->d filled.
 * rules NULL: a config's.  The caller frees with yconf_free(). */
int yconf_parse_file(struct yconf *y, const struct yconf_rules *rules);
void yconf_free(struct yconf *y);
/* A copy of src's tree in dst (path and d as given), to change without
 * touching src (a parse kept for many loads). */
void yconf_copy(struct yconf *dst, const struct yconf *src, const char *path, struct diag *d);

/* Changing the tree (an override written into it): a new node, appended
 * to parent's children (-1: none); its index, or -1 with *y->d past the
 * node cap.  yconf_set_text sets a scalar's text. */
int yconf_new_node(struct yconf *y, enum yconf_kind kind, int line, int parent);
/* Takes item n out of sequence seq (an override that removes a level or a
 * link); its nodes stay allocated, reachable from nothing. */
void yconf_drop_item(struct yconf *y, int seq, int n);
void yconf_set_text(struct yconf *y, int n, const char *s, size_t len);

/* Node access. */
const char *yconf_text(const struct yconf *y, int n);
/* "a mapping", "a sequence", "a scalar", "a quoted string": for messages. */
const char *yconf_kind_name(const struct yconf *y, int n);
/* Line that "missing key" errors in mapping map point at: the line of the
 * key that opened the section, or the mapping's own first line. */
int yconf_map_line(const struct yconf *y, int map);
/* Next key after key k in a mapping (children alternate key, value). */
int yconf_next_key(const struct yconf *y, int k);
/* Scalar k's text is exactly s. */
int yconf_key_eq(const struct yconf *y, int k, const char *s);
/* "section.key", or "key" in the top level (section ""). */
void yconf_field(char *buf, size_t size, const char *section, const char *key);
/* Value node of key in mapping map, or -1.  Keys are unique after
 * yconf_check_keys. */
int yconf_lookup(const struct yconf *y, int map, const char *key);

/* Checking (each returns 0, or -1 with *y->d filled). */
/* The keys of mapping map: each a scalar, each in allowed (NULL-ended),
 * none twice.  Reports in file order. */
int yconf_check_keys(struct yconf *y, int map, const char *section, const char *const *allowed);
/* A section is a mapping under a top-level key.  Returns its node, -1 on
 * error, -2 if absent and optional. */
int yconf_section(struct yconf *y, int root, const char *name, int required);

#define YCONF_MIN_POS 1e-3 /* smallest positive figure a config may give */
#define YCONF_MAX_POS 1e15 /* and the largest */
#define YCONF_MAX_U64 1e18 /* cap for values converted to uint64_t */

enum yconf_range {
    YCONF_POS,     /* YCONF_MIN_POS .. YCONF_MAX_POS */
    YCONF_NONNEG,  /* >= 0 */
    YCONF_FRAC,    /* [YCONF_MIN_POS, 1] */
    YCONF_FRAC0,   /* [0, 1) */
    YCONF_COUNT    /* whole number, 1 .. UINT32_MAX */
};

/* Scalar node v as a number in range r; field names it in errors. */
int yconf_number(struct yconf *y, int v, const char *field, enum yconf_range r, double *out);
/* Number map.key: 0; absent and optional: 1 (out untouched). */
int yconf_get_number(struct yconf *y, int map, const char *section, const char *key,
                     enum yconf_range r, int required, double *out);
/* Required whole number 1 .. UINT32_MAX. */
int yconf_get_u32(struct yconf *y, int map, const char *section, const char *key, uint32_t *out);
/* Required quantity times scale, rounded to a uint64_t (bytes, ps). */
int yconf_get_scaled_u64(struct yconf *y, int map, const char *section, const char *key,
                         enum yconf_range r, double scale, uint64_t *out);
/* String map.key into buf[size]: non-empty, no NUL, and it must fit.
 * Absent and optional: 0, buf untouched. */
int yconf_get_string(struct yconf *y, int map, const char *section, const char *key,
                     int required, char *buf, size_t size);

#endif
