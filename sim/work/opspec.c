/* opspec.c: one-line ops (opspec.h): each spec parsed into its kind and
 * key=value pairs, the pairs written as a trace's text with the field
 * table's types (a name-valued field is always a JSON string; a number or
 * true/false elsewhere goes in as it is, anything else as a string for the
 * loader to refuse), and the text loaded by trace_load_text.  The text has
 * the header on line 1 and spec i's ops on line i + 2, which is how a
 * loader's diagnostic finds its spec again (opspec_diag). */
#include "opspec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "strbuf.h"
#include "trace_field.h"
#include "units.h"

#define SPEC_MAX_KEYS 32        /* key=value pairs of one spec (a kind has at most 23 keys) */

struct kv {
    const char *key, *val;      /* into spec.buf */
};

/* One spec as parsed. */
struct spec {
    const char *text;           /* as typed */
    char *buf;                  /* a copy, cut into the pairs */
    enum op_kind kind;
    int coll;                   /* a collective named as the kind: its enum coll_kind; else -1 */
    uint32_t ranks;             /* a collective's devices; 0 for the other kinds */
    int has_dtype, has_name;    /* given: the defaults are left out */
    unsigned nkv;
    struct kv kv[SPEC_MAX_KEYS];
};

/* Fills *d for spec s (no line: the spec is on the command line). */
static int spec_err(const struct opspec *in, const struct spec *s, struct diag *d,
                    enum diag_code code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static int spec_err(const struct opspec *in, const struct spec *s, struct diag *d,
                    enum diag_code code, const char *field, const char *fmt, ...)
{
    char file[512], msg[512];
    snprintf(file, sizeof file, "%s %s", in->who, s->text);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return diag_set(d, code, file, 0, field, "%s", msg);
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* s without leading and trailing blanks (cut in place). */
static char *trim(char *s)
{
    while (is_blank(*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && is_blank(s[n - 1]))
        s[--n] = '\0';
    return s;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Is s a number as JSON writes one (-?int frac? exp?)? */
static int is_json_number(const char *s)
{
    if (*s == '-')
        s++;
    if (!is_digit(*s))
        return 0;
    if (*s == '0')
        s++;
    else
        while (is_digit(*s))
            s++;
    if (*s == '.') {
        if (!is_digit(*++s))
            return 0;
        while (is_digit(*s))
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (!is_digit(*s))
            return 0;
        while (is_digit(*s))
            s++;
    }
    return *s == '\0';
}

/* Does the format give key (of an op of kind) a name, not a number? */
static int key_is_name(enum op_kind kind, const char *key)
{
    static const char *const names[] = {"name", "dtype", "pass", "kernel"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(key, names[i]) == 0)
            return 1;
    const struct trace_field *rows[TF_MAX_KIND];
    unsigned n = trace_field_of_kind(kind, rows);
    for (unsigned r = 0; r < n; r++)
        if (strcmp(key, rows[r]->key) == 0)
            return rows[r]->type != TF_SIZE && rows[r]->type != TF_COUNT &&
                   rows[r]->type != TF_NUM && rows[r]->type != TF_BOOL;
    return 0;
}

/* The kind before ':': an op kind, or a collective by its name. */
static int spec_kind(const struct opspec *in, struct spec *s, const char *name, struct diag *d)
{
    s->coll = -1;
    if (op_kind_from_name(name, &s->kind) == 0)
        return 0;
    for (unsigned c = 0; c < COLL_KIND_COUNT; c++)
        if (ascii_ieq(name, coll_kind_name((enum coll_kind)c))) {
            s->kind = OP_COLLECTIVE;
            s->coll = (int)c;
            return 0;
        }
    char known[400];
    size_t used = 0;
    for (unsigned k = 0; k < OP_KIND_COUNT + COLL_KIND_COUNT && used < sizeof known; k++) {
        const char *sep = k == 0 ? "" : k == OP_KIND_COUNT ? "; or a collective by name: " : ", ";
        const char *n = k < OP_KIND_COUNT ? op_kind_name((enum op_kind)k)
                                          : coll_kind_name((enum coll_kind)(k - OP_KIND_COUNT));
        used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", sep, n);
    }
    return spec_err(in, s, d, DIAG_E_UNKNOWN_NAME, "kind", "unknown kind \"%.40s\" (known: %s)",
                    name, known);
}

/* The keys a spec may not give, and why. */
static int spec_key_refused(const struct opspec *in, const struct spec *s, const char *key,
                            struct diag *d)
{
    static const struct {
        const char *key, *why;
    } refused[] = {
        {"id", "ops are op1, op2, ... in the order given"},
        {"deps", "each op depends on the one before"},
        {"kind", "the kind is what comes before ':'"},
        {"device", "a collective's ranks=N are devices gpu0 .. gpuN-1, and the other ops run "
                   "on each of them"},
        {"group", "a collective runs over ranks=N devices, gpu0 .. gpuN-1"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (strcmp(key, refused[i].key) == 0)
            return spec_err(in, s, d, DIAG_E_UNSUPPORTED, key,
                            "is not given in a one-line op: %s", refused[i].why);
    if (s->coll >= 0 && strcmp(key, "collective") == 0)
        return spec_err(in, s, d, DIAG_E_UNSUPPORTED, key, "the kind (%s) names the collective",
                        coll_kind_name((enum coll_kind)s->coll));
    for (unsigned j = 0; j < s->nkv; j++)
        if (strcmp(key, s->kv[j].key) == 0)
            return spec_err(in, s, d, DIAG_E_DUPLICATE, key, "is given twice");
    return 0;
}

/* ranks=N of a collective: 2 .. OPSPEC_RANKS_MAX. */
static int spec_ranks(const struct opspec *in, struct spec *s, const char *v, struct diag *d)
{
    unsigned long n = 0;
    size_t len = strspn(v, "0123456789");
    if (len > 0 && len < 8 && v[len] == '\0')
        n = strtoul(v, NULL, 10);
    if (n < 2 || n > OPSPEC_RANKS_MAX)
        return spec_err(in, s, d, DIAG_E_RANGE, "ranks",
                        "a collective runs over 2 to %u devices (gpu0 .. gpuN-1), got \"%.40s\"",
                        OPSPEC_RANKS_MAX, v);
    s->ranks = (uint32_t)n;
    return 0;
}

/* The key=value pairs after ':' into s->kv (ranks= of a collective into s->ranks). */
static int spec_pairs(const struct opspec *in, struct spec *s, char *rest, struct diag *d)
{
    if (*trim(rest) == '\0')
        return 0;               /* "gemm:": the loader names what is missing */
    for (char *p = rest; p != NULL;) {
        char *comma = strchr(p, ',');
        if (comma != NULL)
            *comma = '\0';
        char *eq = strchr(p, '=');
        if (eq == NULL) {
            p = trim(p);
            return spec_err(in, s, d, DIAG_E_USAGE, "",
                            *p ? "expected key=value, got \"%.40s\""
                               : "an empty key=value%.0s (two commas, or one at the end?)", p);
        }
        *eq = '\0';
        char *key = trim(p), *val = trim(eq + 1);
        if (*key == '\0')
            return spec_err(in, s, d, DIAG_E_USAGE, "", "expected key=value, got \"=%.40s\"", val);
        if (*val == '\0')
            return spec_err(in, s, d, DIAG_E_USAGE, key, "needs a value (key=value)");
        if (spec_key_refused(in, s, key, d))
            return -1;
        if (s->kind == OP_COLLECTIVE && strcmp(key, "ranks") == 0) {
            if (s->ranks != 0)
                return spec_err(in, s, d, DIAG_E_DUPLICATE, key, "is given twice");
            if (spec_ranks(in, s, val, d))
                return -1;
        } else {
            if (s->nkv == SPEC_MAX_KEYS)
                return spec_err(in, s, d, DIAG_E_RANGE, "", "more than %d key=value pairs",
                                SPEC_MAX_KEYS);
            s->has_dtype |= strcmp(key, "dtype") == 0;
            s->has_name |= strcmp(key, "name") == 0;
            s->kv[s->nkv++] = (struct kv){key, val};
        }
        p = comma != NULL ? comma + 1 : NULL;
    }
    return 0;
}

/* One spec: KIND:key=value,... */
static int spec_parse(const struct opspec *in, struct spec *s, const char *text, struct diag *d)
{
    s->text = text;
    size_t n = strlen(text);
    s->buf = sim_xcalloc(n + 1, 1);
    memcpy(s->buf, text, n);
    char *colon = strchr(s->buf, ':');
    if (colon == NULL)
        return spec_err(in, s, d, DIAG_E_USAGE, "",
                        "expected KIND:key=value,... (e.g. gemm:m=8192,n=8192,k=8192)");
    *colon = '\0';
    if (spec_kind(in, s, trim(s->buf), d) || spec_pairs(in, s, colon + 1, d))
        return -1;
    if (s->kind == OP_COLLECTIVE && s->ranks == 0) {
        if (in->ranks > OPSPEC_RANKS_MAX)
            return spec_err(in, s, d, DIAG_E_RANGE, "ranks",
                            "the system has %u devices, more than the %u a one-line collective "
                            "runs over: give ranks=N", in->ranks, OPSPEC_RANKS_MAX);
        if (in->ranks < 2)
            return spec_err(in, s, d, DIAG_E_MISSING, "ranks",
                            "a collective needs ranks=N, the devices gpu0 .. gpuN-1 it runs over "
                            "(with --hw a system file, its devices)");
        s->ranks = in->ranks;
    }
    return 0;
}

/* A value as the format takes the key: a name as a string; a size with a
 * unit (bytes=1GiB) as its number of bytes; a number or true/false as it
 * is; anything else as a string, for the loader to refuse by its rules. */
static void put_value(struct sb *b, const struct spec *s, const struct kv *kv)
{
    struct qty q;
    if (strcmp(kv->key, "bytes") == 0 && qty_parse(kv->val, &q) == 0 && q.kind == QK_BYTES) {
        sb_printf(b, q.si < 9e15 && q.si == (double)(uint64_t)q.si ? "%.0f" : "%.17g", q.si);
        return;
    }
    if (!key_is_name(s->kind, kv->key) &&
        (is_json_number(kv->val) || strcmp(kv->val, "true") == 0 || strcmp(kv->val, "false") == 0))
        sb_puts(b, kv->val);
    else
        sb_json(b, kv->val);
}

/* The id of spec i's op (1-based) on device r of ndev. */
static void put_id(struct sb *b, unsigned i, uint32_t r, uint32_t ndev)
{
    if (ndev > 1)
        sb_printf(b, "\"op%u.gpu%u\"", i, r);
    else
        sb_printf(b, "\"op%u\"", i);
}

/* The op of spec i (1-based) on device r; last: the spec before it there (0: none). */
static void put_op(struct sb *b, const struct spec *s, unsigned i, uint32_t r, uint32_t ndev,
                   unsigned last)
{
    sb_puts(b, "{\"id\": ");
    put_id(b, i, r, ndev);
    if (!s->has_name) {         /* the spec as typed, where it can be a name */
        size_t n = strlen(s->text), printable = 0;
        while (printable < n && s->text[printable] >= ' ' && s->text[printable] <= '~')
            printable++;
        sb_puts(b, ", \"name\": ");
        if (printable == n && n < TRACE_NAME_MAX)
            sb_json(b, s->text);
        else
            sb_json(b, s->coll >= 0 ? coll_kind_name((enum coll_kind)s->coll)
                                    : op_kind_name(s->kind));
    }
    sb_printf(b, ", \"kind\": \"%s\"", op_kind_name(s->kind));
    if (ndev > 1)
        sb_printf(b, ", \"device\": \"gpu%u\"", r);
    if (last > 0) {
        sb_puts(b, ", \"deps\": [");
        put_id(b, last, r, ndev);
        sb_puts(b, "]");
    }
    if (s->coll >= 0)
        sb_printf(b, ", \"collective\": \"%s\"", coll_kind_name((enum coll_kind)s->coll));
    if (s->kind == OP_COLLECTIVE) {
        sb_puts(b, ", \"group\": [");
        for (uint32_t g = 0; g < s->ranks; g++)
            sb_printf(b, "%s\"gpu%u\"", g ? ", " : "", g);
        sb_puts(b, "]");
    }
    if (!s->has_dtype && s->kind != OP_MEMCPY && s->kind != OP_GENERIC)
        sb_puts(b, ", \"dtype\": \"bf16\"");
    for (unsigned k = 0; k < s->nkv; k++) {
        sb_puts(b, ", ");
        sb_json(b, s->kv[k].key);
        sb_puts(b, ": ");
        put_value(b, s, &s->kv[k]);
    }
    sb_puts(b, "}");
}

/* The trace: the header on line 1, spec i's ops (one per device it runs
 * on) on line i + 2. */
static void put_trace(struct sb *b, const struct opspec *in, const struct spec *s, uint32_t ndev)
{
    sb_puts(b, "{\"strata_trace\": 1, ");
    if (ndev > 1) {
        sb_puts(b, "\"devices\": [");
        for (uint32_t r = 0; r < ndev; r++)
            sb_printf(b, "%s\"gpu%u\"", r ? ", " : "", r);
        sb_puts(b, "], ");
    }
    sb_puts(b, "\"ops\": [\n");
    unsigned *last = sim_xcalloc(ndev, sizeof *last);     /* the spec before, per device */
    for (unsigned i = 0; i < in->n; i++) {
        uint32_t on = s[i].kind == OP_COLLECTIVE ? s[i].ranks : ndev;
        for (uint32_t r = 0; r < on; r++) {
            if (r > 0)
                sb_puts(b, ", ");
            put_op(b, &s[i], i + 1, r, ndev, last[r]);
            last[r] = i + 1;
        }
        sb_puts(b, i + 1 < in->n ? ",\n" : "\n");
    }
    free(last);
    sb_puts(b, "]}\n");
}

int opspec_load(struct opspec *in, struct trace *out, struct diag *d)
{
    SIM_CHECK(in->n >= 1 && in->n <= OPSPEC_MAX);
    size_t used = 0;
    in->path[0] = '\0';
    for (unsigned i = 0; i < in->n && used < sizeof in->path; i++)
        used += (size_t)snprintf(in->path + used, sizeof in->path - used, "%s%s %s",
                                 i ? " " : "", in->who, in->specs[i]);
    struct spec *s = sim_xcalloc(in->n, sizeof *s);
    uint32_t ndev = 1;
    int rc = 0;
    for (unsigned i = 0; i < in->n && rc == 0; i++) {
        rc = spec_parse(in, &s[i], in->specs[i], d);
        if (rc == 0 && s[i].ranks > ndev)
            ndev = s[i].ranks;
    }
    if (rc == 0) {
        struct sb b = {0};
        put_trace(&b, in, s, ndev);
        rc = trace_load_text(b.s, in->path, out, d);
        if (rc != 0)
            opspec_diag(in, d);
        free(b.s);
    }
    for (unsigned i = 0; i < in->n; i++)
        free(s[i].buf);
    free(s);
    return rc;
}

void opspec_diag(const struct opspec *in, struct diag *d)
{
    if (strcmp(d->file, in->path) != 0)
        return;
    int k = d->line - 2;        /* spec k's ops are on line k + 2 */
    if (k >= 0 && (unsigned)k < in->n)
        snprintf(d->file, sizeof d->file, "%s %s", in->who, in->specs[k]);
    d->line = 0;
    /* ops[7].m is the spec's m; the group is the one ranks= made */
    const char *f = d->field;
    if (strncmp(f, "ops[", 4) == 0 && strchr(f, ']') != NULL) {
        f = strchr(f, ']') + 1;
        f += *f == '.';
    }
    char field[sizeof d->field];
    if (strncmp(f, "group", 5) == 0)
        snprintf(field, sizeof field, "ranks%s", f + 5);
    else
        snprintf(field, sizeof field, "%s", f);
    memcpy(d->field, field, sizeof field);
}
