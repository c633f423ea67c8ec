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

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "diag.h"

#define JSONDOC_MAX_BYTES ((size_t)1 << 30) /* 1 GiB */

struct jsondoc {
    cJSON *root;                 /* parsed document, owned by the doc */
    char name[512];              /* file path (or name given), used in diagnostics */
    int has_lines;               /* every value's line is in its node's valueint (jsondoc.c) */
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
