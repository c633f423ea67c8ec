/* jsondoc.c: see jsondoc.h.
 *
 * The line scanner runs only on text cJSON has accepted, so it can be much
 * simpler than a parser: it never has to diagnose anything.  It relies on
 * three facts about cJSON 1.7 that hold for every accepted text:
 *   - whitespace is any byte <= 32 and a UTF-8 BOM may open the text;
 *   - a string is a key exactly when the next non-blank byte is ':';
 *   - a number is a run of [0-9+-.eE] (nothing else may follow a value).
 * If the scanner and the tree ever disagree on the number of values (a bug
 * or a future cJSON change), every line reads as 0 ("unknown") rather than
 * as a wrong line.
 */
#include "jsondoc.h"
#include "afile.h"
#include "utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Out of memory is not a user error: stop with the size (house style). */
static void *jd_alloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p == NULL) {
        fprintf(stderr, "strata: out of memory allocating %zu x %zu bytes\n", n, size);
        abort();
    }
    return p;
}

/* ---- line table ------------------------------------------------------- */

/* The line of each value is kept in its own cJSON node, in valueint: cJSON
 * fills valueint only as a copy of a number's value, which nothing here
 * reads (numbers are read from valuedouble), and it prints numbers from
 * valuedouble.  A table from item to line cost 16 bytes a slot at half
 * load, 256 MB for a 1M-op trace, and a hash per value. */
int jsondoc_line(const struct jsondoc *doc, const cJSON *item)
{
    if (doc == NULL || item == NULL || !doc->has_lines)
        return 0;
    return item->valueint;
}

/* Values in the tree; recursion depth is bounded by CJSON_NESTING_LIMIT. */
static size_t tree_count(const cJSON *item)
{
    size_t n = 1;
    for (const cJSON *c = item->child; c != NULL; c = c->next)
        n += tree_count(c);
    return n;
}

/* Pre-order walk, pairing the k-th value with lines[k]. */
static void tree_assign(cJSON *item, const int *lines, size_t *k)
{
    item->valueint = lines[(*k)++];
    for (cJSON *c = item->child; c != NULL; c = c->next)
        tree_assign(c, lines, k);
}

static int is_blank(unsigned char c)
{
    return c <= 32;
}

static size_t skip_bom(const char *s, size_t n)
{
    if (n >= 3 && (unsigned char)s[0] == 0xEF && (unsigned char)s[1] == 0xBB &&
        (unsigned char)s[2] == 0xBF)
        return 3;
    return 0;
}

/* Record the line of each value of an accepted text in document order.
 * Writes at most cap lines; returns the number of values seen. */
static size_t scan_lines(const char *s, size_t n, int *lines, size_t cap)
{
    size_t count = 0;
    int line = 1;
    size_t i = skip_bom(s, n);
#define RECORD_(ln)                  \
    do {                             \
        if (count < cap)             \
            lines[count] = (ln);     \
        count++;                     \
    } while (0)
    while (i < n) {
        char c = s[i];
        if (c == '\n') {
            line++;
            i++;
        } else if (c == '"') {
            int start = line;
            i++;
            while (i < n && s[i] != '"') {
                if (s[i] == '\\' && i + 1 < n)
                    i++;
                if (s[i] == '\n')
                    line++;
                i++;
            }
            i++; /* closing quote */
            size_t j = i;
            while (j < n && is_blank((unsigned char)s[j]))
                j++;
            if (j >= n || s[j] != ':')
                RECORD_(start);
        } else if (c == '{' || c == '[') {
            RECORD_(line);
            i++;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            RECORD_(line);
            while (i < n && (s[i] == '-' || s[i] == '+' || s[i] == '.' || s[i] == 'e' ||
                             s[i] == 'E' || (s[i] >= '0' && s[i] <= '9')))
                i++;
        } else if (c == 't' || c == 'f' || c == 'n') {
            RECORD_(line);
            while (i < n && s[i] >= 'a' && s[i] <= 'z')
                i++;
        } else {
            i++; /* blank, ',', ':', '}' or ']' */
        }
    }
#undef RECORD_
    return count;
}

static void build_lines(struct jsondoc *doc, const char *text, size_t n)
{
    size_t nvalues = tree_count(doc->root);
    int *lines = jd_alloc(nvalues, sizeof *lines);
    size_t seen = scan_lines(text, n, lines, nvalues);
    if (seen == nvalues) {
        size_t k = 0;
        tree_assign(doc->root, lines, &k);
        doc->has_lines = 1;
    }
    free(lines);
}

/* ---- parsing ---------------------------------------------------------- */

static int line_at(const char *s, size_t off)
{
    int line = 1;
    for (size_t i = 0; i < off; i++)
        if (s[i] == '\n')
            line++;
    return line;
}

/* Deepest nesting of objects and arrays, ignoring brackets in strings. */
static long max_depth(const char *s, size_t n)
{
    long depth = 0, deepest = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '"') {
            for (i++; i < n && s[i] != '"'; i++)
                if (s[i] == '\\')
                    i++;
        } else if (c == '{' || c == '[') {
            if (++depth > deepest)
                deepest = depth;
        } else if (c == '}' || c == ']') {
            depth--;
        }
    }
    return deepest;
}

/* text[n] must be '\0'. */
static int parse_text(const char *text, size_t n, const char *name, struct jsondoc *doc,
                      struct diag *d)
{
    struct jsondoc tmp;
    memset(&tmp, 0, sizeof tmp);
    snprintf(tmp.name, sizeof tmp.name, "%s", name ? name : "");

    const char *nul = memchr(text, '\0', n);
    if (nul != NULL)
        return diag_set(d, DIAG_E_PARSE, tmp.name, line_at(text, (size_t)(nul - text)), "",
                        "malformed JSON: the file contains a NUL byte");
    size_t i = skip_bom(text, n);
    while (i < n && is_blank((unsigned char)text[i]))
        i++;
    if (i == n)
        return diag_set(d, DIAG_E_PARSE, tmp.name, 0, "", "the file is empty (no JSON value)");

    const char *end = NULL;
    tmp.root = cJSON_ParseWithOpts(text, &end, 1);
    if (tmp.root == NULL) {
        size_t off = (end != NULL && end >= text && end <= text + n) ? (size_t)(end - text) : n;
        size_t rest = off;
        while (rest < n && is_blank((unsigned char)text[rest]))
            rest++;
        int line = line_at(text, off < n ? off : n);
        if (rest >= n) {
            /* Point at the last line that has something on it. */
            size_t last = n;
            while (last > 0 && is_blank((unsigned char)text[last - 1]))
                last--;
            line = line_at(text, last > 0 ? last - 1 : 0);
            return diag_set(d, DIAG_E_PARSE, tmp.name, line, "",
                            "malformed JSON: unexpected end of file (unclosed object, array "
                            "or string?)");
        }
        if (max_depth(text, n) > CJSON_NESTING_LIMIT)
            return diag_set(d, DIAG_E_PARSE, tmp.name, line, "",
                            "malformed JSON: nesting is deeper than %d levels",
                            CJSON_NESTING_LIMIT);
        size_t col = 1;
        for (size_t j = off; j > 0 && text[j - 1] != '\n'; j--)
            col++;
        char near[24];
        size_t k = 0;
        for (size_t j = off; j < n && k + 1 < sizeof near && text[j] != '\n'; j++) {
            unsigned char c = (unsigned char)text[j];
            near[k++] = (c < 32 || c >= 127 || c == '\'') ? '?' : (char)c;
        }
        near[k] = '\0';
        return diag_set(d, DIAG_E_PARSE, tmp.name, line, "",
                        "malformed JSON at column %zu, near '%s'", col, near);
    }
    build_lines(&tmp, text, n);
    *doc = tmp;
    return 0;
}

int jsondoc_parse_string(const char *text, const char *name, struct jsondoc *doc,
                         struct diag *d)
{
    if (text == NULL)
        return diag_set(d, DIAG_E_PARSE, name, 0, "", "no text");
    return parse_text(text, strlen(text), name, doc, d);
}

int jsondoc_load(const char *path, struct jsondoc *doc, struct diag *d)
{
    FILE *f = fopen(path, "rb");
    afile_note_input(f);
    if (f == NULL)
        return diag_set(d, DIAG_E_IO, path, 0, "", "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        int e = errno;
        fclose(f);
        return diag_set(d, DIAG_E_IO, path, 0, "", "cannot stat: %s", strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        fclose(f);
        return diag_set(d, DIAG_E_IO, path, 0, "", "is a directory, not a file");
    }
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > (uint64_t)JSONDOC_MAX_BYTES) {
        fclose(f);
        return diag_set(d, DIAG_E_RANGE, path, 0, "", "file is larger than %zu MiB",
                        JSONDOC_MAX_BYTES >> 20);
    }
    /* Grow as we read, so pipes and files that change size also work; read
     * at most one byte past the cap to detect an oversized file. */
    const size_t limit = JSONDOC_MAX_BYTES + 1;
    size_t cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 65536;
    size_t n = 0;
    char *buf = jd_alloc(cap + 1, 1);
    for (;;) {
        if (n == cap) {
            if (cap >= limit)
                break;
            size_t ncap = cap * 2 < limit ? cap * 2 : limit;
            char *nb = realloc(buf, ncap + 1);
            if (nb == NULL) {
                fprintf(stderr, "strata: out of memory allocating %zu bytes\n", ncap + 1);
                abort();
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        int e = errno;
        free(buf);
        fclose(f);
        return diag_set(d, DIAG_E_IO, path, 0, "", "read error: %s", strerror(e));
    }
    fclose(f);
    if (n > JSONDOC_MAX_BYTES) {
        free(buf);
        return diag_set(d, DIAG_E_RANGE, path, 0, "", "file is larger than %zu MiB",
                        JSONDOC_MAX_BYTES >> 20);
    }
    buf[n] = '\0';
    int rc = parse_text(buf, n, path, doc, d);
    free(buf);
    return rc;
}

void jsondoc_free(struct jsondoc *doc)
{
    if (doc == NULL)
        return;
    cJSON_Delete(doc->root);
    doc->root = NULL;
    doc->has_lines = 0;
}

/* ---- typed getters ---------------------------------------------------- */

const char *jsondoc_type_name(const cJSON *item)
{
    if (item == NULL)
        return "nothing";
    if (cJSON_IsObject(item))
        return "object";
    if (cJSON_IsArray(item))
        return "array";
    if (cJSON_IsString(item))
        return "string";
    if (cJSON_IsNumber(item))
        return "number";
    if (cJSON_IsTrue(item))
        return "true";
    if (cJSON_IsFalse(item))
        return "false";
    if (cJSON_IsNull(item))
        return "null";
    return "unknown";
}

const char *jsondoc_field(char *buf, size_t size, const char *prefix, const char *key)
{
    if (key == NULL || key[0] == '\0')
        snprintf(buf, size, "%s", prefix ? prefix : "");
    else if (prefix != NULL && prefix[0] != '\0')
        snprintf(buf, size, "%s.%s", prefix, key);
    else
        snprintf(buf, size, "%s", key ? key : "");
    return buf;
}

/* A number for messages: whole numbers in full, others in %g. */
static void fmt_num(char *buf, size_t size, double v)
{
    if (v == floor(v) && fabs(v) < 1e18)
        snprintf(buf, size, "%.0f", v);
    else
        snprintf(buf, size, "%.15g", v);
}

/* "got string \"abc\"" style description of a value for messages. */
static void describe(const cJSON *item, char *buf, size_t size)
{
    if (cJSON_IsString(item) && item->valuestring != NULL)
        snprintf(buf, size, "string \"%.40s\"%s", item->valuestring,
                 strlen(item->valuestring) > 40 ? "..." : "");
    else if (cJSON_IsNumber(item))
        fmt_num(buf, size, item->valuedouble);
    else
        snprintf(buf, size, "%s", jsondoc_type_name(item));
}

static int type_error(const struct jsondoc *doc, const cJSON *item, const char *prefix,
                      const char *key, const char *want, struct diag *d)
{
    char field[128], got[80];
    describe(item, got, sizeof got);
    return diag_set(d, DIAG_E_TYPE, doc->name, jsondoc_line(doc, item),
                    jsondoc_field(field, sizeof field, prefix, key), "must be %s, got %s",
                    want, got);
}

/* Fill *d for a number that is out of range; what says what was expected. */
static int range_error(const struct jsondoc *doc, const cJSON *item, const char *prefix,
                       const char *key, const char *what, double limit, struct diag *d)
{
    char field[128], got[40], lim[40];
    double v = item->valuedouble;
    jsondoc_field(field, sizeof field, prefix, key);
    int line = jsondoc_line(doc, item);
    if (!isfinite(v))
        return diag_set(d, DIAG_E_RANGE, doc->name, line, field,
                        "must be finite, got a number too large to represent");
    fmt_num(got, sizeof got, v);
    if (what == NULL)
        return diag_set(d, DIAG_E_RANGE, doc->name, line, field,
                        "must be a whole number, got %s", got);
    fmt_num(lim, sizeof lim, limit);
    return diag_set(d, DIAG_E_RANGE, doc->name, line, field, "must be %s %s, got %s", what, lim,
                    got);
}

int jsondoc_get_uint(const struct jsondoc *doc, const cJSON *item, const char *prefix,
                     const char *key, uint64_t min, uint64_t max, uint64_t *out,
                     struct diag *d)
{
    if (!cJSON_IsNumber(item))
        return type_error(doc, item, prefix, key, "an integer", d);
    double v = item->valuedouble;
    if (!isfinite(v) || v != floor(v))
        return range_error(doc, item, prefix, key, NULL, 0.0, d);
    if (v < (double)min)
        return range_error(doc, item, prefix, key, ">=", (double)min, d);
    if (v > (double)max)
        return range_error(doc, item, prefix, key, "<=", (double)max, d);
    *out = (uint64_t)v;
    return 0;
}

int jsondoc_get_number(const struct jsondoc *doc, const cJSON *item, const char *prefix,
                       const char *key, double min, double max, double *out,
                       struct diag *d)
{
    if (!cJSON_IsNumber(item))
        return type_error(doc, item, prefix, key, "a number", d);
    double v = item->valuedouble;
    if (!isfinite(v))
        return range_error(doc, item, prefix, key, NULL, 0.0, d);
    if (v < min)
        return range_error(doc, item, prefix, key, ">=", min, d);
    if (v > max)
        return range_error(doc, item, prefix, key, "<=", max, d);
    *out = v + 0.0; /* folds -0 into 0 */
    return 0;
}

int jsondoc_get_string(const struct jsondoc *doc, const cJSON *item, const char *prefix,
                       const char *key, size_t maxlen, const char **out, struct diag *d)
{
    if (!cJSON_IsString(item) || item->valuestring == NULL)
        return type_error(doc, item, prefix, key, "a string", d);
    size_t len = strlen(item->valuestring);
    if (len > maxlen) {
        char field[128];
        return diag_set(d, DIAG_E_RANGE, doc->name, jsondoc_line(doc, item),
                        jsondoc_field(field, sizeof field, prefix, key),
                        "is too long: %zu bytes, at most %zu allowed", len, maxlen);
    }
    size_t bad;
    if (!utf8_printable(item->valuestring, &bad)) {
        char field[128];
        return diag_set(d, DIAG_E_TYPE, doc->name, jsondoc_line(doc, item),
                        jsondoc_field(field, sizeof field, prefix, key),
                        "byte %zu (0x%02x) is not printable UTF-8 (a control character, or not UTF-8)",
                        bad, (unsigned)(unsigned char)item->valuestring[bad]);
    }
    *out = item->valuestring;
    return 0;
}

int jsondoc_get_bool(const struct jsondoc *doc, const cJSON *item, const char *prefix,
                     const char *key, int *out, struct diag *d)
{
    if (!cJSON_IsBool(item))
        return type_error(doc, item, prefix, key, "true or false", d);
    *out = cJSON_IsTrue(item) ? 1 : 0;
    return 0;
}

int jsondoc_check_unique(const struct jsondoc *doc, const cJSON *obj, const char *prefix,
                         struct diag *d)
{
    if (!cJSON_IsObject(obj))
        return 0;
    for (const cJSON *a = obj->child; a != NULL; a = a->next) {
        if (a->string == NULL)
            continue;
        for (const cJSON *b = obj->child; b != a; b = b->next)
            if (b->string != NULL && strcmp(a->string, b->string) == 0) {
                char field[160];
                return diag_set(d, DIAG_E_DUPLICATE, doc->name, jsondoc_line(doc, a),
                                jsondoc_field(field, sizeof field, prefix, a->string),
                                "duplicate key (first given on line %d)", jsondoc_line(doc, b));
            }
    }
    return 0;
}
