/* jsondoc.h: a JSON document parsed by cJSON, plus the line of every value.
 *
 * cJSON keeps no source positions, so after cJSON has accepted a text a
 * small scanner walks the same text and records the line of each value
 * (object, array, string, number, true, false, null) in document order.
 * cJSON stores children in document order too, so a depth-first walk of the
 * tree meets the values in the same order, and each node gets its line (in
 * its valueint, which cJSON fills only as a copy of a number's value:
 * read numbers from valuedouble).  Object keys are not values: an object
 * member's line is the line of its value.
 *
 * Limits: files larger than JSONDOC_MAX_BYTES are refused; nesting is
 * capped by cJSON (CJSON_NESTING_LIMIT, 1000) and reported as malformed.
 * A NUL byte in the text is an error.  Lines count '\n' only.
 *
 * Ownership: jsondoc_load / jsondoc_parse_string fill a caller-owned
 * struct jsondoc; the caller releases it with jsondoc_free(), which is
 * safe on a zeroed or already freed doc.  On error nothing needs freeing.
 * Items returned by cJSON calls on doc->root belong to the doc.
 *
 * The getters below check one value's type and range and, on failure, fill
 * *d with the value's line and the field "prefix.key" (just "key" when
 * prefix is "" or NULL), so loaders can write
 *     if (jsondoc_get_uint(doc, it, "ops[3]", "m", 1, max, &m, d)) return -1;
 */
#ifndef STRATA_JSONDOC_H
#define STRATA_JSONDOC_H

struct jsondoc_split;

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "diag.h"

#define JSONDOC_MAX_BYTES ((size_t)1 << 30) /* 1 GiB */

struct jsondoc {
    cJSON *root;                 /* parsed document, owned by the doc */
    char name[512];              /* file path (or name given), used in diagnostics */
    int has_lines;               /* every value's line is in its node's valueint (jsondoc.c) */
    struct jsondoc_split *split; /* the split this is the top of: jsondoc_line gives
                                  * its current element its lines first */
};

/* Read and parse a file.  Returns 0, or -1 with *d filled (DIAG_E_IO when
 * the file cannot be read, DIAG_E_RANGE when it is too large, DIAG_E_PARSE
 * with the line of the error when it is not JSON or is empty). */
int jsondoc_load(const char *path, struct jsondoc *doc, struct diag *d);

/* Same for a NUL-terminated text in memory; name is used in diagnostics. */
int jsondoc_parse_string(const char *text, const char *name, struct jsondoc *doc,
                         struct diag *d);

/* 1-based line of item's value, or 0 if item is NULL or not in the doc. */
int jsondoc_line(const struct jsondoc *doc, const cJSON *item);

void jsondoc_free(struct jsondoc *doc);

/* A document whose one big array, the value of a top-level key (a trace's
 * "ops"), is parsed one element at a time: a million-op trace never has a
 * tree of all its ops, only the text and one op's tree at a time.
 *
 * jsondoc_load_split reads the file and parses its top level with that
 * array's elements blanked out (lines kept), into top; the array there is
 * empty and count says how many elements the text has.  jsondoc_split_elem
 * parses element i; jsondoc_line(&top, it) gives the line of any value in
 * it (lines are found only when a line is asked for: the scan was a tenth
 * of a million-op load that had nothing to report).  One element at a
 * time: the caller gives it back with jsondoc_split_done before asking for
 * the next.  When the text is not
 * laid out so (no such key, the key twice, a value that is not an array,
 * unbalanced brackets, an empty element) or its top level is not JSON, the
 * whole text is parsed as jsondoc_load does: whole is 1, top holds every
 * element and count is 0.  An element that is not JSON gets the whole
 * text's diagnostic (the same one jsondoc_load gives, when the error is in
 * that element), so a reader cannot tell the two apart.  An element of
 * plain JSON (no escapes or control bytes in its strings, numbers as the
 * grammar writes them) is read without cJSON into reused storage, as the
 * tree cJSON would build; anything else goes to cJSON.
 * Free with jsondoc_split_free (safe on a zeroed or failed split). */
struct jsondoc_split {
    struct jsondoc top;
    int whole;
    uint32_t count;              /* elements of the array, when !whole */
    char name[512];
    char *text;                  /* the file, NUL-terminated (NULL when whole) */
    size_t n;
    size_t mapped;               /* text is the file mapped, this many bytes (0: read) */
    size_t dropped;              /* bytes of the mapping before this given back (jsondoc.c) */
    size_t open, close;          /* offsets of the array's '[' and ']' */
    size_t nl_inside;            /* newlines between them */
    size_t *off;                 /* element i starts at off[i]; off[count] = close */
    int *line;                   /* line of off[i] */
    cJSON *cur;                  /* the element out, and whether its lines are in */
    uint32_t cur_i;
    int cur_lines;
    int cur_pooled;              /* cur's nodes are pool's and its strings scratch's */
    cJSON *pool;                 /* nodes of an element read without cJSON (jsondoc.c) */
    size_t pool_cap;
    char *scratch;               /* that element's text, its strings NUL-ended in place */
    size_t scratch_cap;
};

int jsondoc_load_split(const char *path, const char *key, struct jsondoc_split *sp,
                       struct diag *d);
/* The same for a NUL-terminated text in memory (copied); name is used in
 * diagnostics. */
int jsondoc_split_string(const char *text, const char *name, const char *key,
                         struct jsondoc_split *sp, struct diag *d);
cJSON *jsondoc_split_elem(struct jsondoc_split *sp, uint32_t i, struct diag *d);
void jsondoc_split_done(struct jsondoc_split *sp, cJSON *elem);
void jsondoc_split_free(struct jsondoc_split *sp);

/* "object", "array", "string", "number", "true", "false", "null". */
const char *jsondoc_type_name(const cJSON *item);

/* Whole number in [min, max] (max <= 2^53).  A non-number is DIAG_E_TYPE;
 * a fraction, infinity or a value outside the range is DIAG_E_RANGE. */
int jsondoc_get_uint(const struct jsondoc *doc, const cJSON *item, const char *prefix,
                     const char *key, uint64_t min, uint64_t max, uint64_t *out,
                     struct diag *d);

/* Finite number in [min, max].  Non-number: DIAG_E_TYPE; else DIAG_E_RANGE. */
int jsondoc_get_number(const struct jsondoc *doc, const cJSON *item, const char *prefix,
                       const char *key, double min, double max, double *out,
                       struct diag *d);

/* String of at most maxlen bytes (SIZE_MAX: any).  *out points into the
 * doc.  Non-string: DIAG_E_TYPE; too long: DIAG_E_RANGE. */
int jsondoc_get_string(const struct jsondoc *doc, const cJSON *item, const char *prefix,
                       const char *key, size_t maxlen, const char **out, struct diag *d);

/* true or false.  Anything else: DIAG_E_TYPE. */
int jsondoc_get_bool(const struct jsondoc *doc, const cJSON *item, const char *prefix,
                     const char *key, int *out, struct diag *d);

/* Format "prefix.key" (or "key") into buf, for callers' own diagnostics. */
const char *jsondoc_field(char *buf, size_t size, const char *prefix, const char *key);
/* 0 if no key of object obj appears twice, else -1 with *d at the second
 * one ("duplicate key (first given on line N)"): JSON readers disagree on
 * which one wins (Hugging Face takes the last, cJSON the first). */
int jsondoc_check_unique(const struct jsondoc *doc, const cJSON *obj, const char *prefix,
                         struct diag *d);

#endif
