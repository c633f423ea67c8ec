#define _DEFAULT_SOURCE 1   /* madvise, MADV_SEQUENTIAL and MADV_DONTNEED (Linux) */
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
#include "check.h"
#include "utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>


/* ---- line table ------------------------------------------------------- */

/* The line of each value is kept in its own cJSON node, in valueint: cJSON
 * fills valueint only as a copy of a number's value, which nothing here
 * reads (numbers are read from valuedouble), and it prints numbers from
 * valuedouble.  A table from item to line cost 16 bytes a slot at half
 * load, 256 MB for a 1M-op trace, and a hash per value. */
static void split_lines(struct jsondoc_split *sp);

int jsondoc_line(const struct jsondoc *doc, const cJSON *item)
{
    if (doc == NULL || item == NULL || !doc->has_lines)
        return 0;
    if (doc->split != NULL && doc->split->cur != NULL && !doc->split->cur_lines)
        split_lines(doc->split);
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
    int *lines = sim_xcalloc(nvalues, sizeof *lines);
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

/* The whole file in a NUL-terminated buffer (*out, *len), or -1 with *d. */
static int read_file(const char *path, char **out, size_t *len, struct diag *d)
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
    char *buf = sim_xcalloc(cap + 1, 1);
    for (;;) {
        if (n == cap) {
            if (cap >= limit)
                break;
            size_t ncap = cap * 2 < limit ? cap * 2 : limit;
            buf = sim_xrealloc(buf, ncap + 1);
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
    *out = buf;
    *len = n;
    return 0;
}

int jsondoc_load(const char *path, struct jsondoc *doc, struct diag *d)
{
    char *buf;
    size_t n;
    if (read_file(path, &buf, &n, d))
        return -1;
    int rc = parse_text(buf, n, path, doc, d);
    free(buf);
    return rc;
}

/* ---- one array read element by element -------------------------------- */

/* Past the string that opens at s[i] ('"'); n if it does not close. */
static size_t skip_string(const char *s, size_t n, size_t i, int *line)
{
    for (i++; i < n && s[i] != '"'; i++) {
        if (s[i] == '\\' && i + 1 < n)
            i++;
        if (s[i] == '\n')
            (*line)++;
    }
    return i < n ? i + 1 : n;
}

static size_t skip_blank(const char *s, size_t n, size_t i, int *line)
{
    for (; i < n && is_blank((unsigned char)s[i]); i++)
        if (s[i] == '\n')
            (*line)++;
    return i;
}

/* Find the array that is the value of the top-level key `key` and the
 * start of each of its elements.  Only a skim: it follows strings and
 * brackets, not the grammar, so it may accept what cJSON will not (each
 * element is parsed for real later, and the top level with the array
 * blanked out).  Returns 0 and fills s->open, s->close, s->count, s->off
 * and s->line, or -1 when the text is not laid out so (no such key, the
 * key twice, not an array, unbalanced, an empty element). */
/* The bytes the skim stops at: newline, quote, brackets and braces, comma. */
static const unsigned char skim_special[256] = {
    ['\n'] = 1, ['"'] = 1, ['{'] = 1, ['}'] = 1, ['['] = 1, [']'] = 1, [','] = 1,
};

static void split_drop(struct jsondoc_split *sp, size_t upto);
static void split_unmap(struct jsondoc_split *sp);

static int split_skim(struct jsondoc_split *sp, const char *key)
{
    const char *s = sp->text;
    size_t n = sp->n, klen = strlen(key);
    int line = 1;
    size_t i = skip_blank(s, n, skip_bom(s, n), &line);
    if (i >= n || s[i] != '{')
        return -1;
    long depth = 0;
    int found = 0;
    for (; i < n; ) {
        char c = s[i];
        if (c == '\n') {
            line++;
            i++;
        } else if (c == '"') {
            size_t a = i;
            i = skip_string(s, n, i, &line);
            if (depth != 1)
                continue;
            int l2 = line;
            size_t j = skip_blank(s, n, i, &l2);
            if (j >= n || s[j] != ':' || i - a != klen + 2 || memcmp(s + a + 1, key, klen) != 0)
                continue;
            if (found)
                return -1;              /* the key twice: the tree reports it */
            found = 1;
            line = l2;
            j = skip_blank(s, n, j + 1, &line);
            if (j >= n || s[j] != '[')
                return -1;
            sp->open = j;
            int endline = line;
            /* the elements, in one pass: where each starts */
            size_t cap = 1024;
            sp->off = sim_xcalloc(cap + 1, sizeof *sp->off);
            sp->line = sim_xcalloc(cap + 1, sizeof *sp->line);
            int ln = line;
            uint32_t count = 0;
            long dd = 0;
            size_t k = skip_blank(s, n, j + 1, &ln);
            if (k < n && s[k] == ']') {
                sp->close = k;              /* [] */
            } else {
                int want = 1;           /* an element starts at the next non-blank */
                while (k < n) {
                    if (want) {
                        char e = s[k];
                        if (e == ',' || e == ']' || count == UINT32_MAX)
                            return -1;      /* an empty element */
                        if (count == cap) {
                            cap *= 2;
                            sp->off = sim_xrealloc(sp->off, (cap + 1) * sizeof *sp->off);
                            sp->line = sim_xrealloc(sp->line, (cap + 1) * sizeof *sp->line);
                        }
                        sp->off[count] = k;
                        sp->line[count] = ln;
                        count++;
                        if ((count & 1023) == 0)
                            split_drop(sp, k);
                        want = 0;
                    }
                    /* past the bytes that change nothing here */
                    while (k < n && !skim_special[(unsigned char)s[k]])
                        k++;
                    if (k >= n)
                        break;
                    char e = s[k];
                    if (e == '\n') {
                        ln++;
                        k++;
                    } else if (e == '"') {
                        k = skip_string(s, n, k, &ln);
                    } else if (e == '{' || e == '[') {
                        dd++;
                        k++;
                    } else if (e == '}' || (e == ']' && dd > 0)) {
                        if (--dd < 0)
                            return -1;
                        k++;
                    } else if (e == ']') {
                        break;
                    } else if (e == ',' && dd == 0) {
                        k = skip_blank(s, n, k + 1, &ln);
                        want = 1;
                    } else {
                        k++;
                    }
                }
                if (k >= n)
                    return -1;
                sp->close = k;
                sp->off[count] = k;         /* the end of the last element */
            }
            sp->count = count;
            endline = ln;
            sp->nl_inside = (size_t)(endline - line);
            i = sp->close + 1;
            line = endline;
        } else if (c == '{' || c == '[') {
            depth++;
            i++;
        } else if (c == '}' || c == ']') {
            depth--;
            i++;
        } else {
            i++;
        }
    }
    return found ? 0 : -1;
}

static void split_reset(struct jsondoc_split *sp)
{
    free(sp->off);
    free(sp->line);
    sp->off = NULL;
    sp->line = NULL;
    sp->count = 0;
    sp->whole = 1;
}

/* The split of sp->text (sp->n bytes, NUL-terminated), named path. */
static int split_text(struct jsondoc_split *sp, const char *path, const char *key,
                      struct diag *d)
{
    snprintf(sp->name, sizeof sp->name, "%s", path);
    if (memchr(sp->text, '\0', sp->n) == NULL && split_skim(sp, key) == 0) {
        /* the top level with the array's elements cut out but for their
         * newlines, so every line stays where it was (a column after the
         * array may not: an error there is reported from the whole text) */
        char *top = sim_xcalloc(sp->n + 1, 1);
        memcpy(top, sp->text, sp->open + 1);
        size_t m = sp->open + 1;
        memset(top + m, '\n', sp->nl_inside);     /* counted by the skim */
        m += sp->nl_inside;
        memcpy(top + m, sp->text + sp->close, sp->n - sp->close + 1);
        m += sp->n - sp->close;
        int rc = parse_text(top, m, path, &sp->top, d);
        free(top);
        if (rc == 0) {
            sp->whole = 0;
            sp->top.split = sp;
            return 0;
        }
        /* not JSON outside the array: the whole text says where */
    }
    split_reset(sp);
    int rc = parse_text(sp->text, sp->n, path, &sp->top, d);
    split_unmap(sp);
    return rc;
}

/* A big regular file mapped rather than read (a copy into zeroed pages
 * was a tenth of a million-op trace's run, and its 79 MB stayed resident
 * while the ops were built): 1 when sp->text is the mapping, 0 to read the
 * file instead.  The byte after the file must be in the mapping's last
 * page, which the kernel zeroes: that is the text's NUL. */
#define SPLIT_MAP_MIN ((size_t)1 << 20)
static int map_file(const char *path, struct jsondoc_split *sp)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return 0;                   /* read_file says why */
    struct stat st;
    long page = sysconf(_SC_PAGESIZE);
    int ok = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && page > 0 &&
             (uint64_t)st.st_size >= SPLIT_MAP_MIN && (uint64_t)st.st_size <= JSONDOC_MAX_BYTES &&
             st.st_size % page != 0;
    void *m = ok ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fileno(f), 0) : MAP_FAILED;
    if (m != MAP_FAILED) {
        afile_note_input(f);
        madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
        sp->text = m;
        sp->n = (size_t)st.st_size;
        sp->mapped = sp->n;
    }
    fclose(f);
    return m != MAP_FAILED;
}

/* The mapped text before byte upto is read: its pages leave the process
 * (the file's cache keeps them; a later read maps them again), a few MiB
 * at a time, so a big trace is not resident all at once. */
static void split_drop(struct jsondoc_split *sp, size_t upto)
{
    const size_t step = (size_t)8 << 20;
    if (upto < sp->dropped)
        sp->dropped = 0;            /* a new pass from the start */
    if (sp->mapped == 0 || upto < sp->dropped + step)
        return;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    upto -= upto % page;
    madvise(sp->text + sp->dropped, upto - sp->dropped, MADV_DONTNEED);
    sp->dropped = upto;
}

static void split_unmap(struct jsondoc_split *sp)
{
    if (sp->mapped)
        munmap(sp->text, sp->mapped);
    else
        free(sp->text);
    sp->text = NULL;
    sp->mapped = sp->dropped = 0;
}

int jsondoc_load_split(const char *path, const char *key, struct jsondoc_split *sp,
                       struct diag *d)
{
    memset(sp, 0, sizeof *sp);
    if (!map_file(path, sp) && read_file(path, &sp->text, &sp->n, d))
        return -1;
    return split_text(sp, path, key, d);
}

int jsondoc_split_string(const char *text, const char *name, const char *key,
                         struct jsondoc_split *sp, struct diag *d)
{
    memset(sp, 0, sizeof *sp);
    if (text == NULL)
        return diag_set(d, DIAG_E_PARSE, name, 0, "", "no text");
    sp->n = strlen(text);
    sp->text = sim_xcalloc(sp->n + 1, 1);
    memcpy(sp->text, text, sp->n);
    return split_text(sp, name, key, d);
}

/* ---- one element without cJSON ----------------------------------------
 *
 * cJSON spends most of a big trace's load in malloc and free: a node and a
 * string each a value.  An element in the common subset of JSON is read
 * here instead, into nodes from a pool and strings in a copy of its text,
 * both reused from element to element, as the same tree cJSON 1.7 builds
 * (types, children in order with head->prev the last, keys in `string`,
 * valuedouble from strtod and valueint as cJSON sets it).  What is left
 * out goes to cJSON, which parses it or says why not: escapes and control
 * bytes in strings, numbers outside the JSON grammar or longer than 40
 * bytes (cJSON reads at most 63), nesting deeper than 32, elements over
 * 64 KiB, and any syntax error. */
#define FAST_MAX_BYTES ((size_t)64 << 10)
#define FAST_MAX_DEPTH 32

struct fastp {
    const char *s;                /* the element's text */
    char *buf;                    /* its copy, where strings are NUL-ended */
    size_t i, n;
    cJSON *pool;
    size_t used, cap;
    int depth;
};

static void fp_blank(struct fastp *f)
{
    while (f->i < f->n && is_blank((unsigned char)f->s[f->i]))
        f->i++;
}

/* The string that opens at s[i], or NULL. */
static char *fp_string(struct fastp *f)
{
    size_t a = ++f->i;
    while (f->i < f->n) {
        unsigned char c = (unsigned char)f->s[f->i];
        if (c == '"')
            break;
        if (c == '\\' || c < 32)
            return NULL;
        f->i++;
    }
    if (f->i >= f->n)
        return NULL;
    f->buf[f->i++] = '\0';
    return f->buf + a;
}

static int fp_digits(struct fastp *f)
{
    size_t a = f->i;
    while (f->i < f->n && f->s[f->i] >= '0' && f->s[f->i] <= '9')
        f->i++;
    return f->i > a ? 0 : -1;
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, which strtod reads whole. */
static int fp_number(struct fastp *f, cJSON *it)
{
    size_t a = f->i;
    int whole = 1;                  /* digits only: no sign, fraction or exponent */
    if (f->s[f->i] == '-') {
        f->i++;
        whole = 0;
    }
    if (f->i < f->n && f->s[f->i] == '0')
        f->i++;
    else if (fp_digits(f))
        return -1;
    if (f->i < f->n && f->s[f->i] == '.') {
        whole = 0;
        f->i++;
        if (fp_digits(f))
            return -1;
    }
    if (f->i < f->n && (f->s[f->i] == 'e' || f->s[f->i] == 'E')) {
        whole = 0;
        f->i++;
        if (f->i < f->n && (f->s[f->i] == '+' || f->s[f->i] == '-'))
            f->i++;
        if (fp_digits(f))
            return -1;
    }
    /* what cJSON would read on with: not a number this grammar has */
    if (f->i - a > 40 || (f->i < f->n && strchr("0123456789+-eE.", f->s[f->i]) != NULL &&
                          f->s[f->i] != '\0'))
        return -1;
    double v;
    size_t len = f->i - a;
    if (whole && len <= 15) {
        /* a whole number below 10^15: exact in a double, as strtod reads it */
        uint64_t u = 0;
        for (size_t k = a; k < f->i; k++)
            u = u * 10 + (uint64_t)(f->s[k] - '0');
        v = (double)u;
    } else {
        char num[48];
        memcpy(num, f->s + a, len);
        num[len] = '\0';
        char *end;
        v = strtod(num, &end);
        if (end != num + len)
            return -1;
    }
    it->type = cJSON_Number;
    it->valuedouble = v;
    it->valueint = v >= INT_MAX ? INT_MAX : v <= (double)INT_MIN ? INT_MIN : (int)v;
    return 0;
}

static int fp_value(struct fastp *f, cJSON *it);

static int fp_container(struct fastp *f, cJSON *it, int obj)
{
    char close = obj ? '}' : ']';
    f->i++;
    fp_blank(f);
    it->type = obj ? cJSON_Object : cJSON_Array;
    if (f->i < f->n && f->s[f->i] == close) {
        f->i++;
        return 0;
    }
    cJSON *head = NULL, *cur = NULL;
    for (;;) {
        if (f->used == f->cap)
            return -1;
        cJSON *c = &f->pool[f->used++];
        memset(c, 0, sizeof *c);
        if (head == NULL) {
            head = c;
        } else {
            cur->next = c;
            c->prev = cur;
        }
        cur = c;
        if (obj) {
            if (f->i >= f->n || f->s[f->i] != '"' || (c->string = fp_string(f)) == NULL)
                return -1;
            fp_blank(f);
            if (f->i >= f->n || f->s[f->i] != ':')
                return -1;
            f->i++;
            fp_blank(f);
        }
        if (fp_value(f, c))
            return -1;
        fp_blank(f);
        if (f->i < f->n && f->s[f->i] == ',') {
            f->i++;
            fp_blank(f);
            continue;
        }
        break;
    }
    if (f->i >= f->n || f->s[f->i] != close)
        return -1;
    f->i++;
    head->prev = cur;
    it->child = head;
    return 0;
}

static int fp_value(struct fastp *f, cJSON *it)
{
    if (f->i >= f->n)
        return -1;
    char c = f->s[f->i];
    size_t left = f->n - f->i;
    if (c == '"') {
        it->type = cJSON_String;
        return (it->valuestring = fp_string(f)) != NULL ? 0 : -1;
    }
    if (c == '{' || c == '[') {
        if (++f->depth > FAST_MAX_DEPTH)
            return -1;
        int rc = fp_container(f, it, c == '{');
        f->depth--;
        return rc;
    }
    if (c == '-' || (c >= '0' && c <= '9'))
        return fp_number(f, it);
    if (left >= 4 && memcmp(f->s + f->i, "true", 4) == 0) {
        it->type = cJSON_True;
        it->valueint = 1;
        f->i += 4;
    } else if (left >= 5 && memcmp(f->s + f->i, "false", 5) == 0) {
        it->type = cJSON_False;
        f->i += 5;
    } else if (left >= 4 && memcmp(f->s + f->i, "null", 4) == 0) {
        it->type = cJSON_NULL;
        f->i += 4;
    } else {
        return -1;
    }
    return 0;
}

/* Element text[0 .. n) read into sp's pool: its root, and *end just past
 * its value (as cJSON_ParseWithLengthOpts gives), or NULL. */
static cJSON *fast_elem(struct jsondoc_split *sp, const char *text, size_t n, const char **end)
{
    if (n == 0 || n > FAST_MAX_BYTES || (text[0] != '{' && text[0] != '['))
        return NULL;
    /* every value but the root takes at least a byte */
    if (sp->pool_cap < n + 1) {
        free(sp->pool);
        sp->pool_cap = n + 1 > 256 ? n + 1 : 256;
        sp->pool = sim_xcalloc(sp->pool_cap, sizeof *sp->pool);
    }
    if (sp->scratch_cap < n + 1) {
        free(sp->scratch);
        sp->scratch_cap = n + 1 > 4096 ? n + 1 : 4096;
        sp->scratch = sim_xcalloc(sp->scratch_cap, 1);
    }
    memcpy(sp->scratch, text, n);
    sp->scratch[n] = '\0';
    struct fastp f = {text, sp->scratch, 0, n, sp->pool, 1, sp->pool_cap, 0};
    cJSON *root = &sp->pool[0];
    memset(root, 0, sizeof *root);
    if (fp_value(&f, root))
        return NULL;
    *end = text + f.i;
    return root;
}

cJSON *jsondoc_split_elem(struct jsondoc_split *sp, uint32_t i, struct diag *d)
{
    if (sp->whole || i >= sp->count)
        return NULL;
    size_t a = sp->off[i], b = sp->off[i + 1];
    split_drop(sp, a);
    const char *end = NULL;
    cJSON *e = fast_elem(sp, sp->text + a, b - a, &end);
    int pooled = e != NULL;
    if (!pooled)
        e = cJSON_ParseWithLengthOpts(sp->text + a, b - a, &end, 0);
    int ok = e != NULL && end != NULL && end >= sp->text + a && end <= sp->text + b;
    if (ok) {
        /* the value, blanks, and (but for the last) a ',' and blanks */
        size_t k = (size_t)(end - sp->text);
        while (k < b && is_blank((unsigned char)sp->text[k]))
            k++;
        if (i + 1 < sp->count) {
            ok = k < b && sp->text[k] == ',';
            for (k++; k < b && is_blank((unsigned char)sp->text[k]); k++)
                ;
        }
        ok = ok && k == b;
    }
    if (!ok) {
        if (!pooled)
            cJSON_Delete(e);
        /* the whole text's parse gives the diagnostic every reader gives */
        struct jsondoc whole;
        if (parse_text(sp->text, sp->n, sp->name, &whole, d) == 0) {
            jsondoc_free(&whole);
            diag_set(d, DIAG_E_PARSE, sp->name, sp->line[i], "", "malformed JSON");
        }
        return NULL;
    }
    sp->cur = e;
    sp->cur_i = i;
    sp->cur_lines = 0;
    sp->cur_pooled = pooled;
    return e;
}

/* The current element's lines, into its values' valueint. */
static void split_lines(struct jsondoc_split *sp)
{
    cJSON *e = sp->cur;
    size_t a = sp->off[sp->cur_i], b = sp->off[sp->cur_i + 1];
    size_t nvalues = tree_count(e);
    int *lines = sim_xcalloc(nvalues, sizeof *lines);
    int l0 = sp->line[sp->cur_i] - 1;
    size_t seen = scan_lines(sp->text + a, b - a, lines, nvalues);
    if (seen == nvalues)
        for (size_t k = 0; k < nvalues; k++)
            lines[k] += l0;
    else
        memset(lines, 0, nvalues * sizeof *lines);
    size_t k = 0;
    tree_assign(e, lines, &k);
    free(lines);
    sp->cur_lines = 1;
}

void jsondoc_split_done(struct jsondoc_split *sp, cJSON *elem)
{
    if (sp != NULL && elem != NULL && elem == sp->cur) {
        sp->cur = NULL;
        if (sp->cur_pooled) {       /* the pool's: nothing to free */
            sp->cur_pooled = 0;
            return;
        }
    }
    cJSON_Delete(elem);
}

void jsondoc_split_free(struct jsondoc_split *sp)
{
    if (sp == NULL)
        return;
    jsondoc_free(&sp->top);
    split_unmap(sp);
    free(sp->off);
    free(sp->line);
    free(sp->pool);
    free(sp->scratch);
    memset(sp, 0, sizeof *sp);
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
