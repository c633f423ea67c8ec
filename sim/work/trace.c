/* trace.c: load, validate and write operator traces (format v1).
 *
 * The schema lives in traces/README.md; the kind-specific fields live in one
 * table (op_fields) that drives parsing, the unknown-key check and writing,
 * so the three cannot drift apart.  Loading is two passes over the ops:
 * the first checks every field and collects ids (deps may name later ops),
 * the second resolves deps to op indices.  Kahn's algorithm then orders the
 * ops, taking the ready op with the lowest file index first so the order
 * is the same on every run.
 *
 * Limits: TRACE_OPS_CAP ops, sizes <= 2^50, numeric ids <= 2^53 (exact in a
 * double), streams and tensor counts <= 65535.  The top-level "meta" object
 * is free-form and ignored except for meta.tokens; trace_write writes meta
 * back as {"tokens": N} only (when tokens > 0).
 */
#include "trace.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "afile.h"
#include "check.h"
#include "jsondoc.h"
#include "uheap.h"
#include "utf8.h"

#define TRACE_OPS_CAP 50000000u
#define TRACE_LOOP_CAP ((uint64_t)1 << 34)      /* a GEMM's k, an attention's kv_len */
#define TRACE_NUMERIC_ID_CAP ((uint64_t)1 << 53) /* exact in a double */
#define TRACE_STREAM_CAP 65535u
#define TRACE_TENSORS_CAP 65535u              /* elementwise inputs / outputs */
#define TRACE_DEVICES_CAP 65536u

static void *tr_alloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p == NULL) {
        fprintf(stderr, "strata: out of memory allocating %zu x %zu bytes\n", n, size);
        abort();
    }
    return p;
}

/* ---- names ------------------------------------------------------------ */

static const char *const kind_names[OP_KIND_COUNT] = {
#define OP_KIND_NAME_(e, name) name,
    OP_KIND_MAP(OP_KIND_NAME_)
#undef OP_KIND_NAME_
};

const char *op_kind_name(enum op_kind k)
{
    return (unsigned)k < OP_KIND_COUNT ? kind_names[k] : "?";
}

int op_attn_impl_from_name(const char *name, enum attn_impl *out)
{
    for (unsigned i = 0; name != NULL && i < ATTN_IMPL_COUNT; i++)
        if (ascii_ieq(name, op_attn_impl_name((enum attn_impl)i))) {
            *out = (enum attn_impl)i;
            return 0;
        }
    return -1;
}

int op_kind_from_name(const char *name, enum op_kind *out)
{
    if (name == NULL)
        return -1;
    for (unsigned i = 0; i < OP_KIND_COUNT; i++) {
        if (ascii_ieq(name, kind_names[i])) {
            *out = (enum op_kind)i;
            return 0;
        }
    }
    return -1;
}

static const char *const impl_names[] = {                            /* enum attn_impl */
#define ATTN_IMPL_NAME_(e, n) n,
    ATTN_IMPL_MAP(ATTN_IMPL_NAME_)
#undef ATTN_IMPL_NAME_
};
static const char *const pass_names[] = {"fwd", "bwd", "fwd+bwd", "dgrad", "wgrad"};  /* enum attn_pass */

const char *op_attn_impl_name(enum attn_impl i)
{
    return (unsigned)i < ATTN_IMPL_COUNT ? impl_names[i] : "?";
}
static const char *const dir_names[] = {"h2d", "d2h", "d2d", "p2p"}; /* enum memcpy_dir */
static const char *const coll_names[] = {                            /* enum coll_kind */
#define COLL_KIND_NAME_(e, n) n,
    COLL_KIND_MAP(COLL_KIND_NAME_)
#undef COLL_KIND_NAME_
};
static const char *const algo_names[] = {                            /* enum coll_algo */
#define COLL_ALGO_NAME_(e, n) n,
    COLL_ALGO_MAP(COLL_ALGO_NAME_)
#undef COLL_ALGO_NAME_
};

const char *coll_kind_name(enum coll_kind k)
{
    return (unsigned)k < COLL_KIND_COUNT ? coll_names[k] : "?";
}

const char *coll_algo_name(enum coll_algo a)
{
    return (unsigned)a < COLL_ALGO_COUNT ? algo_names[a] : "?";
}

int trace_group_rank(const struct trace *t, uint32_t g, uint32_t dev)
{
    if (g >= t->ngroups)
        return -1;
    const struct trace_group *gr = &t->groups[g];
    for (uint32_t r = 0; r < gr->n; r++)
        if (t->group_dev[gr->off + r] == dev)
            return (int)r;
    return -1;
}

/* ---- the kind-specific fields ----------------------------------------- */

enum ftype {
    F_SIZE,  /* uint64_t, integer 1 .. 2^50 */
    F_COUNT, /* uint32_t, integer 0 .. TRACE_TENSORS_CAP */
    F_NUM,   /* double, finite >= 0 */
    F_BOOL,  /* int, true / false */
    F_IMPL,  /* enum attn_impl, by name */
    F_DIR,   /* enum memcpy_dir, by name */
    F_WFMT,  /* enum wfmt, by name */
    F_DTYPE, /* enum dtype, by name (DT_COUNT default = the op's dtype) */
    F_DEVICE, /* uint32_t, a device of the trace by name (default TRACE_NO_DEVICE) */
    F_COLL,  /* enum coll_kind, by name */
    F_ALGO,  /* enum coll_algo, by name */
    F_GROUP  /* uint32_t, a list of devices: index into trace.groups */
};

struct op_field {
    enum op_kind kind;
    const char *key;
    enum ftype type;
    int required;
    size_t off;   /* offset of the member in struct op */
    double def;   /* default when optional and absent */
};

#define U_(member) offsetof(struct op, u.member)
/* In the order they are written; kv_heads' default 0 means "= heads". */
static const struct op_field op_fields[] = {
    {OP_GEMM, "m", F_SIZE, 1, U_(gemm.m), 0},
    {OP_GEMM, "n", F_SIZE, 1, U_(gemm.n), 0},
    {OP_GEMM, "k", F_SIZE, 1, U_(gemm.k), 0},
    {OP_GEMM, "batch", F_SIZE, 0, U_(gemm.batch), 1},
    {OP_GEMM, "weights", F_WFMT, 0, U_(gemm.weights), WF_NONE},
    {OP_GEMM, "sparse", F_BOOL, 0, U_(gemm.sparse), 0},
    {OP_GEMM, "transient", F_BOOL, 0, U_(gemm.transient), 0},
    {OP_ATTENTION, "batch", F_SIZE, 1, U_(attn.batch), 0},
    {OP_ATTENTION, "heads", F_SIZE, 1, U_(attn.heads), 0},
    {OP_ATTENTION, "q_len", F_SIZE, 1, U_(attn.q_len), 0},
    {OP_ATTENTION, "kv_len", F_SIZE, 1, U_(attn.kv_len), 0},
    {OP_ATTENTION, "head_dim", F_SIZE, 1, U_(attn.head_dim), 0},
    {OP_ATTENTION, "kv_heads", F_SIZE, 0, U_(attn.kv_heads), 0},
    {OP_ATTENTION, "causal", F_BOOL, 0, U_(attn.causal), 0},
    {OP_ATTENTION, "impl", F_IMPL, 0, U_(attn.impl), ATTN_FLASH},
    {OP_ATTENTION, "kv_dtype", F_DTYPE, 0, U_(attn.kv_dtype), DT_COUNT},
    {OP_ATTENTION, "page_size", F_COUNT, 0, U_(attn.page_size), 0},
    {OP_ATTENTION, "dropout", F_NUM, 0, U_(attn.dropout), 0},
    {OP_ELEMENTWISE, "elements", F_SIZE, 1, U_(ew.elements), 0},
    {OP_ELEMENTWISE, "inputs", F_COUNT, 0, U_(ew.inputs), 1},
    {OP_ELEMENTWISE, "outputs", F_COUNT, 0, U_(ew.outputs), 1},
    {OP_ELEMENTWISE, "flops_per_element", F_NUM, 0, U_(ew.flops_per_element), 1},
    {OP_ELEMENTWISE, "vector_bytes", F_COUNT, 0, U_(ew.vector_bytes), 16},
    {OP_ELEMENTWISE, "dropout", F_NUM, 0, U_(ew.dropout), 0},
    {OP_SOFTMAX, "rows", F_SIZE, 1, U_(rc.rows), 0},
    {OP_SOFTMAX, "cols", F_SIZE, 1, U_(rc.cols), 0},
    {OP_NORM, "rows", F_SIZE, 1, U_(rc.rows), 0},
    {OP_NORM, "cols", F_SIZE, 1, U_(rc.cols), 0},
    {OP_REDUCTION, "rows", F_SIZE, 1, U_(rc.rows), 0},
    {OP_REDUCTION, "cols", F_SIZE, 1, U_(rc.cols), 0},
    {OP_EMBEDDING, "tokens", F_SIZE, 1, U_(emb.tokens), 0},
    {OP_EMBEDDING, "dim", F_SIZE, 1, U_(emb.dim), 0},
    {OP_MEMCPY, "bytes", F_SIZE, 1, U_(copy.bytes), 0},
    {OP_MEMCPY, "direction", F_DIR, 1, U_(copy.dir), 0},
    {OP_MEMCPY, "src_device", F_DEVICE, 0, U_(copy.src), -1},
    {OP_MEMCPY, "dst_device", F_DEVICE, 0, U_(copy.peer), -1},
    {OP_GENERIC, "flops", F_NUM, 1, U_(gen.flops), 0},
    {OP_GENERIC, "bytes", F_NUM, 1, U_(gen.bytes), 0},
    {OP_COLLECTIVE, "collective", F_COLL, 1, U_(coll.what), 0},
    {OP_COLLECTIVE, "group", F_GROUP, 1, U_(coll.group), 0},
    {OP_COLLECTIVE, "bytes", F_SIZE, 1, U_(coll.bytes), 0},
    {OP_COLLECTIVE, "algo", F_ALGO, 0, U_(coll.algo), COLL_AUTO},
    {OP_COLLECTIVE, "root", F_DEVICE, 0, U_(coll.root), -1},
};
#undef U_
#define N_OP_FIELDS (sizeof op_fields / sizeof op_fields[0])

/* Keys every op may have, in the order they are written. */
enum {
    K_ID, K_NAME, K_KIND, K_DEVICE, K_STREAM, K_DTYPE, K_DEPS, K_MEASURED, K_FIXED, K_KERNEL, K_PASS,
    N_COMMON
};
static const char *const common_keys[N_COMMON] = {
    "id", "name", "kind", "device", "stream", "dtype", "deps", "measured_s", "fixed_s", "kernel",
    "pass"};
#define MAX_KIND_FIELDS 12
#define MAX_OP_KEYS (N_COMMON + MAX_KIND_FIELDS)

enum { T_VERSION, T_NAME, T_META, T_DEVICES, T_OPS, T_SYMMETRIC, N_TOP_KEYS };
static const char *const top_keys[N_TOP_KEYS] = {"strata_trace", "name", "meta", "devices",
                                                 "ops", "symmetric"};

/* The table rows of one kind, in table order; returns how many. */
static unsigned kind_fields(enum op_kind kind, const struct op_field **rows)
{
    unsigned n = 0;
    for (size_t i = 0; i < N_OP_FIELDS; i++)
        if (op_fields[i].kind == kind) {
            SIM_CHECK(n < MAX_KIND_FIELDS); /* raise MAX_KIND_FIELDS with the table */
            rows[n++] = &op_fields[i];
        }
    return n;
}

/* ---- a hash index of names stored in an array ------------------------- */

/* Names live at base + i * stride; slots hold i + 1 (0 = empty). */
struct name_index {
    uint32_t *slot;
    size_t mask;
    const char *base;
    size_t stride;
};

static uint64_t name_hash(const char *s)
{
    uint64_t h = UINT64_C(1469598103934665603); /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= UINT64_C(1099511628211);
    }
    return h ^ (h >> 31);
}

static void ni_init(struct name_index *x, size_t n, const char *base, size_t stride)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    x->slot = tr_alloc(cap, sizeof *x->slot);
    x->mask = cap - 1;
    x->base = base;
    x->stride = stride;
}

static void ni_free(struct name_index *x)
{
    free(x->slot);
    x->slot = NULL;
}

/* Index of name, or -1. */
static int64_t ni_find(const struct name_index *x, const char *name)
{
    size_t i = (size_t)name_hash(name) & x->mask;
    for (; x->slot[i] != 0; i = (i + 1) & x->mask) {
        uint32_t k = x->slot[i] - 1;
        if (strcmp(x->base + (size_t)k * x->stride, name) == 0)
            return k;
    }
    return -1;
}

/* Add entry k; returns -1, or the index of an entry with the same name. */
static int64_t ni_add(struct name_index *x, uint32_t k)
{
    const char *name = x->base + (size_t)k * x->stride;
    size_t i = (size_t)name_hash(name) & x->mask;
    for (; x->slot[i] != 0; i = (i + 1) & x->mask) {
        uint32_t j = x->slot[i] - 1;
        if (strcmp(x->base + (size_t)j * x->stride, name) == 0)
            return j;
    }
    x->slot[i] = k + 1;
    return -1;
}

/* ---- loading ---------------------------------------------------------- */

struct loader {
    const struct jsondoc *doc;
    struct jsondoc_split *sp;  /* the file: top level parsed, ops one at a time */
    cJSON *ops;               /* the top level's "ops" (every op when sp->whole) */
    cJSON *cur;               /* sp->whole: ops[cur_i], a cursor for op_elem */
    uint32_t cur_i;
    char *depids;             /* pass 1's dep ids, NUL-ended in order; "" = resolve
                               * from the op's tree (an error to report) */
    size_t ndepids, depids_cap;
    const char *file;         /* doc->name, for diagnostics */
    struct diag *d;
    struct trace *t;
    struct name_index ids;    /* over t->ops[].id */
    struct name_index devs;   /* over t->devices */
    char prefix[32];          /* "ops[12]" while checking op 12 */
    uint32_t gcap, gdcap;     /* capacity of t->groups, t->group_dev */
    uint32_t *ghash;          /* open-addressed: group index + 1, 0 = empty */
    uint32_t ghash_cap;       /* a power of two, > 2 * t->ngroups */
    uint32_t *gscratch;       /* device indices of the group being read */
};

/* Report code at item `at` (or at fallback_line when at is NULL) for the
 * field prefix.key. */
static int lerr(struct loader *L, enum diag_code code, const cJSON *at, int fallback_line,
                const char *key, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int lerr(struct loader *L, enum diag_code code, const cJSON *at, int fallback_line,
                const char *key, const char *fmt, ...)
{
    char field[128], msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int line = at ? jsondoc_line(L->doc, at) : fallback_line;
    return diag_set(L->d, code, L->file, line, jsondoc_field(field, sizeof field, L->prefix, key),
                    "%s", msg);
}

/* ops[i]'s tree: the document's own when it was parsed whole, else parsed
 * now from the text.  NULL (with L->d set) when the op is not JSON.  Give
 * it back with op_done. */
static cJSON *op_elem(struct loader *L, uint32_t i)
{
    if (!L->sp->whole)
        return jsondoc_split_elem(L->sp, i, L->d);
    if (L->cur == NULL || i < L->cur_i) {
        L->cur = L->ops->child;
        L->cur_i = 0;
    }
    while (L->cur != NULL && L->cur_i < i) {
        L->cur = L->cur->next;
        L->cur_i++;
    }
    return L->cur;
}

static void op_done(struct loader *L, cJSON *o)
{
    if (!L->sp->whole)
        jsondoc_split_done(L->sp, o);
}

static void depids_put(struct loader *L, const char *s, size_t len)
{
    if (L->ndepids + len + 1 > L->depids_cap) {
        size_t cap = L->depids_cap ? L->depids_cap : 4096;
        while (cap < L->ndepids + len + 1)
            cap *= 2;
        L->depids = sim_xrealloc(L->depids, cap);
        L->depids_cap = cap;
    }
    memcpy(L->depids + L->ndepids, s, len);
    L->depids[L->ndepids + len] = '\0';
    L->ndepids += len + 1;
}

/* Pass 1 keeps each dep's id text, so pass 2 needs no tree.  A dep that
 * is not a valid id is kept as "": pass 2 reports it from the op's tree. */
static void keep_deps(struct loader *L, const cJSON *o)
{
    const cJSON *deps = cJSON_GetObjectItemCaseSensitive(o, "deps");
    for (const cJSON *c = deps ? deps->child : NULL; c != NULL; c = c->next) {
        char num[32];
        if (cJSON_IsString(c) && c->valuestring != NULL) {
            size_t len = strlen(c->valuestring);
            depids_put(L, c->valuestring, len < TRACE_ID_MAX ? len : 0);
        } else if (cJSON_IsNumber(c) && c->valuedouble >= 0 &&
                   c->valuedouble <= (double)TRACE_NUMERIC_ID_CAP &&
                   c->valuedouble == floor(c->valuedouble)) {
            int w = snprintf(num, sizeof num, "%" PRIu64, (uint64_t)c->valuedouble);
            depids_put(L, num, (size_t)w);
        } else {
            depids_put(L, "", 0);
        }
    }
}

static const char *article(const char *word)
{
    return strchr("aeiou", word[0]) != NULL && word[0] != '\0' ? "an" : "a";
}

/* "a, b, c" of a list of names, into buf. */
static const char *join(char *buf, size_t size, const char *const *names, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < size; i++) {
        int w = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", names[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return buf;
}

static const char *kind_list(char *buf, size_t size)
{
    return join(buf, size, kind_names, OP_KIND_COUNT);
}

static const char *dtype_list(char *buf, size_t size)
{
    const char *names[DT_COUNT];
    for (unsigned i = 0; i < DT_COUNT; i++)
        names[i] = dtype_name((enum dtype)i);
    return join(buf, size, names, DT_COUNT);
}

static const char *device_list(const struct trace *t, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < t->ndevices && used + 40 < size; i++) {
        int w = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", t->devices[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (used + 40 >= size && size > 4)
        snprintf(buf + size - 5, 5, "...");
    return buf;
}

/* Id text of an id value (string or whole number).  Returns 0 or -1. */
static int id_text(struct loader *L, const cJSON *it, const char *key, char out[TRACE_ID_MAX])
{
    if (cJSON_IsNumber(it)) {
        uint64_t v;
        if (jsondoc_get_uint(L->doc, it, L->prefix, key, 0, TRACE_NUMERIC_ID_CAP, &v, L->d))
            return -1;
        snprintf(out, TRACE_ID_MAX, "%" PRIu64, v);
        return 0;
    }
    if (!cJSON_IsString(it))
        return lerr(L, DIAG_E_TYPE, it, 0, key,
                    "must be an op id (a string or a non-negative integer), got %s",
                    jsondoc_type_name(it));
    const char *s;
    if (jsondoc_get_string(L->doc, it, L->prefix, key, TRACE_ID_MAX - 1, &s, L->d))
        return -1;
    if (s[0] == '\0')
        return lerr(L, DIAG_E_RANGE, it, 0, key, "must not be empty");
    memcpy(out, s, strlen(s) + 1);
    return 0;
}

static int parse_devices(struct loader *L, const cJSON *devs)
{
    struct trace *t = L->t;
    L->prefix[0] = '\0';
    if (devs == NULL) {
        t->ndevices = 1;
        t->devices = tr_alloc(1, sizeof *t->devices);
        snprintf(t->devices[0], TRACE_DEVICE_MAX, "gpu0");
        ni_init(&L->devs, 1, t->devices[0], sizeof *t->devices);
        ni_add(&L->devs, 0);
        return 0;
    }
    if (!cJSON_IsArray(devs))
        return lerr(L, DIAG_E_TYPE, devs, 0, "devices",
                    "must be a list of device names like [\"gpu0\"], got %s",
                    jsondoc_type_name(devs));
    size_t n = 0;
    for (const cJSON *c = devs->child; c != NULL && n <= TRACE_DEVICES_CAP; c = c->next)
        n++;
    if (n == 0)
        return lerr(L, DIAG_E_RANGE, devs, 0, "devices", "must name at least one device");
    if (n > TRACE_DEVICES_CAP)
        return lerr(L, DIAG_E_RANGE, devs, 0, "devices", "lists more than 65536 devices");
    t->devices = tr_alloc(n, sizeof *t->devices);
    t->ndevices = (uint32_t)n;
    ni_init(&L->devs, n, t->devices[0], sizeof *t->devices);
    uint32_t i = 0;
    for (const cJSON *c = devs->child; c != NULL; c = c->next, i++) {
        char key[32];
        snprintf(key, sizeof key, "devices[%u]", i);
        const char *s;
        if (jsondoc_get_string(L->doc, c, "", key, TRACE_DEVICE_MAX - 1, &s, L->d))
            return -1;
        if (s[0] == '\0')
            return lerr(L, DIAG_E_RANGE, c, 0, key, "device name must not be empty");
        memcpy(t->devices[i], s, strlen(s) + 1);
        int64_t prev = ni_add(&L->devs, i);
        if (prev >= 0) {
            char msg[160];
            snprintf(msg, sizeof msg, "device \"%s\" is listed twice (also devices[%" PRId64 "])",
                     s, prev);
            return lerr(L, DIAG_E_DUPLICATE, c, 0, key, "%s", msg);
        }
    }
    return 0;
}

/* Checks one kind-specific field and stores it (or its default) in op. */
/* The trace device named s (item `at`, field key): 0, or -1 after an error
 * that lists the devices. */
static int find_device(struct loader *L, const cJSON *at, const char *key, const char *s,
                       uint32_t *out)
{
    int64_t dev = ni_find(&L->devs, s);
    if (dev < 0) {
        char known[256], msg[400];
        snprintf(msg, sizeof msg, "unknown device \"%.40s\" (devices: %s)", s,
                 device_list(L->t, known, sizeof known));
        return lerr(L, DIAG_E_UNKNOWN_NAME, at, 0, key, "%s", msg);
    }
    *out = (uint32_t)dev;
    return 0;
}

static uint64_t group_hash(const uint32_t *dev, uint32_t n)
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (uint32_t i = 0; i < n; i++) {
        h ^= dev[i];
        h *= UINT64_C(1099511628211);
    }
    return h ^ (h >> 29);
}

/* A collective's "group": a list of at least two distinct devices of the
 * trace, in rank order.  Equal lists share one entry of t->groups. */
static int parse_group(struct loader *L, const cJSON *it, uint32_t *out)
{
    struct trace *t = L->t;
    if (!cJSON_IsArray(it))
        return lerr(L, DIAG_E_TYPE, it, 0, "group",
                    "must be a list of device names like [\"gpu0\", \"gpu1\"], got %s",
                    jsondoc_type_name(it));
    if (L->gscratch == NULL)
        L->gscratch = tr_alloc(t->ndevices, sizeof *L->gscratch);
    uint32_t n = 0;
    for (const cJSON *c = it->child; c != NULL; c = c->next) {
        const char *s;
        if (jsondoc_get_string(L->doc, c, L->prefix, "group", SIZE_MAX, &s, L->d))
            return -1;
        uint32_t dev;
        if (find_device(L, c, "group", s, &dev))
            return -1;
        for (uint32_t k = 0; k < n; k++)
            if (L->gscratch[k] == dev)
                return lerr(L, DIAG_E_DUPLICATE, c, 0, "group",
                            "device \"%.40s\" is listed twice", s);
        if (n == t->ndevices) /* cannot happen: distinct and known */
            return lerr(L, DIAG_E_RANGE, c, 0, "group", "more devices than the trace has");
        L->gscratch[n++] = dev;
    }
    if (n < 2)
        return lerr(L, DIAG_E_RANGE, it, 0, "group",
                    "a collective needs a group of at least two devices, got %u", n);
    uint64_t h = group_hash(L->gscratch, n);
    if (L->ghash_cap <= 2 * (t->ngroups + 1)) {          /* grow and rehash */
        uint32_t cap = L->ghash_cap ? 2 * L->ghash_cap : 64;
        uint32_t *nh = tr_alloc(cap, sizeof *nh);
        for (uint32_t g = 0; g < t->ngroups; g++) {
            uint64_t k = group_hash(t->group_dev + t->groups[g].off, t->groups[g].n) & (cap - 1);
            while (nh[k] != 0)
                k = (k + 1) & (cap - 1);
            nh[k] = g + 1;
        }
        free(L->ghash);
        L->ghash = nh;
        L->ghash_cap = cap;
    }
    uint64_t k = h & (L->ghash_cap - 1);
    for (; L->ghash[k] != 0; k = (k + 1) & (L->ghash_cap - 1)) {
        const struct trace_group *g = &t->groups[L->ghash[k] - 1];
        if (g->n == n && memcmp(t->group_dev + g->off, L->gscratch, n * sizeof *L->gscratch) == 0) {
            *out = L->ghash[k] - 1;
            return 0;
        }
    }
    if (t->ngroups == L->gcap) {
        L->gcap = L->gcap ? 2 * L->gcap : 16;
        void *q = realloc(t->groups, L->gcap * sizeof *t->groups);
        if (q == NULL)
            abort();
        t->groups = q;
    }
    uint32_t used = t->ngroups ? t->groups[t->ngroups - 1].off + t->groups[t->ngroups - 1].n : 0;
    if ((uint64_t)used + n > UINT32_MAX / 2)
        return lerr(L, DIAG_E_RANGE, it, 0, "group", "the trace's groups list too many devices");
    if (used + n > L->gdcap) {
        while (used + n > L->gdcap)
            L->gdcap = L->gdcap ? 2 * L->gdcap : 64;
        void *q = realloc(t->group_dev, L->gdcap * sizeof *t->group_dev);
        if (q == NULL)
            abort();
        t->group_dev = q;
    }
    memcpy(t->group_dev + used, L->gscratch, n * sizeof *L->gscratch);
    t->groups[t->ngroups].off = used;
    t->groups[t->ngroups].n = n;
    L->ghash[k] = t->ngroups + 1;
    *out = t->ngroups++;
    return 0;
}

static int parse_field(struct loader *L, const struct op_field *f, const cJSON *it, int op_line,
                       struct op *op)
{
    char *dst = (char *)op + f->off;
    if (it == NULL) {
        if (f->required) {
            char msg[96];
            snprintf(msg, sizeof msg, "%s %s op needs \"%s\"", article(kind_names[f->kind]),
                     kind_names[f->kind], f->key);
            return lerr(L, DIAG_E_MISSING, NULL, op_line, f->key, "%s", msg);
        }
        switch (f->type) {
        case F_SIZE: *(uint64_t *)(void *)dst = (uint64_t)f->def; break;
        case F_COUNT: *(uint32_t *)(void *)dst = (uint32_t)f->def; break;
        case F_NUM: *(double *)(void *)dst = f->def; break;
        case F_BOOL: *(int *)(void *)dst = (int)f->def; break;
        case F_IMPL: *(enum attn_impl *)(void *)dst = (enum attn_impl)f->def; break;
        case F_DIR: *(enum memcpy_dir *)(void *)dst = (enum memcpy_dir)f->def; break;
        case F_WFMT: *(enum wfmt *)(void *)dst = (enum wfmt)f->def; break;
        case F_DTYPE: *(enum dtype *)(void *)dst = (enum dtype)f->def; break;
        case F_DEVICE: *(uint32_t *)(void *)dst = TRACE_NO_DEVICE; break;
        case F_COLL: *(enum coll_kind *)(void *)dst = (enum coll_kind)f->def; break;
        case F_ALGO: *(enum coll_algo *)(void *)dst = (enum coll_algo)f->def; break;
        case F_GROUP: *(uint32_t *)(void *)dst = 0; break;
        }
        return 0;
    }
    const struct jsondoc *doc = L->doc;
    switch (f->type) {
    case F_SIZE: {
        uint64_t v;
        if (jsondoc_get_uint(doc, it, L->prefix, f->key, 1, TRACE_SIZE_CAP, &v, L->d))
            return -1;
        *(uint64_t *)(void *)dst = v;
        return 0;
    }
    case F_COUNT: {
        uint64_t v;
        if (jsondoc_get_uint(doc, it, L->prefix, f->key, 0, TRACE_TENSORS_CAP, &v, L->d))
            return -1;
        *(uint32_t *)(void *)dst = (uint32_t)v;
        return 0;
    }
    case F_NUM: {
        double v;
        if (jsondoc_get_number(doc, it, L->prefix, f->key, 0.0, TRACE_NUM_CAP, &v, L->d))
            return -1;
        *(double *)(void *)dst = v;
        return 0;
    }
    case F_BOOL: {
        int v;
        if (jsondoc_get_bool(doc, it, L->prefix, f->key, &v, L->d))
            return -1;
        *(int *)(void *)dst = v;
        return 0;
    }
    case F_DEVICE: {
        const char *s;
        if (jsondoc_get_string(doc, it, L->prefix, f->key, SIZE_MAX, &s, L->d))
            return -1;
        return find_device(L, it, f->key, s, (uint32_t *)(void *)dst);
    }
    case F_GROUP:
        return parse_group(L, it, (uint32_t *)(void *)dst);
    case F_IMPL:
    case F_DIR:
    case F_WFMT:
    case F_DTYPE:
    case F_COLL:
    case F_ALGO: {
        const char *names_buf[32]; /* WFMT_COUNT and DT_COUNT fit */
        const char *const *names = f->type == F_IMPL ? impl_names
                                   : f->type == F_COLL ? coll_names
                                   : f->type == F_ALGO ? algo_names : dir_names;
        size_t n = f->type == F_IMPL ? ATTN_IMPL_COUNT
                   : f->type == F_COLL ? COLL_KIND_COUNT
                   : f->type == F_ALGO ? COLL_ALGO_COUNT : 4;
        if (f->type == F_WFMT || f->type == F_DTYPE) {
            n = f->type == F_WFMT ? WFMT_COUNT : DT_COUNT;
            for (size_t i = 0; i < n; i++)
                names_buf[i] = f->type == F_WFMT ? wfmt_name((enum wfmt)i) : dtype_name((enum dtype)i);
            names = names_buf;
        }
        const char *s;
        if (jsondoc_get_string(doc, it, L->prefix, f->key, SIZE_MAX, &s, L->d))
            return -1;
        /* names in any case, as their ecosystems spell them (FA2, H2D) */
        for (size_t i = 0; i < n; i++) {
            if (ascii_ieq(s, names[i])) {
                if (f->type == F_IMPL)
                    *(enum attn_impl *)(void *)dst = (enum attn_impl)i;
                else if (f->type == F_DIR)
                    *(enum memcpy_dir *)(void *)dst = (enum memcpy_dir)i;
                else if (f->type == F_WFMT)
                    *(enum wfmt *)(void *)dst = (enum wfmt)i;
                else if (f->type == F_COLL)
                    *(enum coll_kind *)(void *)dst = (enum coll_kind)i;
                else if (f->type == F_ALGO)
                    *(enum coll_algo *)(void *)dst = (enum coll_algo)i;
                else
                    *(enum dtype *)(void *)dst = (enum dtype)i;
                return 0;
            }
        }
        char known[256], msg[400];
        snprintf(msg, sizeof msg, "unknown %s \"%.60s\" (known: %s)", f->key, s,
                 join(known, sizeof known, names, n));
        return lerr(L, DIAG_E_UNKNOWN_NAME, it, 0, f->key, "%s", msg);
    }
    }
    return 0;
}

/* Every tensor an op reads or writes holds at most TRACE_SIZE_CAP elements,
 * as each size field does (products of fields wrapped 64 bits), and its
 * per-element work is finite.  0, or -1 with the field and a message. */
int trace_op_sizes_ok(const struct op *op, const char **field, char *msg, size_t n)
{
    double big = 0;
    const char *what = NULL;
    *field = "";
    /* the k-loop and the KV loop are counted in 32-bit steps */
    if ((op->kind == OP_GEMM && op->u.gemm.k > TRACE_LOOP_CAP) ||
        (op->kind == OP_ATTENTION && op->u.attn.kv_len > TRACE_LOOP_CAP)) {
        *field = op->kind == OP_GEMM ? "k" : "kv_len";
        snprintf(msg, n, "must be at most 2^34 (%llu here)",
                 (unsigned long long)(op->kind == OP_GEMM ? op->u.gemm.k : op->u.attn.kv_len));
        return -1;
    }
    /* dropout is a probability of dropping: 1 would drop everything */
    if ((op->kind == OP_ATTENTION && !(op->u.attn.dropout < 1.0)) ||
        (op->kind == OP_ELEMENTWISE && !(op->u.ew.dropout < 1.0))) {
        *field = "dropout";
        snprintf(msg, n, "a probability from 0 to below 1, got %g",
                 op->kind == OP_ATTENTION ? op->u.attn.dropout : op->u.ew.dropout);
        return -1;
    }
    if (op->kind == OP_ELEMENTWISE && op->u.ew.dropout > 0 && op->u.ew.outputs == 0) {
        *field = "dropout";
        snprintf(msg, n, "dropout applies to an output, and this op writes none");
        return -1;
    }
    if (op->kind == OP_GEMM) {
        double b = (double)op->u.gemm.batch, m = (double)op->u.gemm.m, nn = (double)op->u.gemm.n,
               k = (double)op->u.gemm.k;
        big = fmax(b * m * nn, fmax(b * m * k, b * k * nn));
        what = "batch x m x n, batch x m x k and batch x k x n";
        *field = "batch";
    } else if (op->kind == OP_ATTENTION) {
        double b = (double)op->u.attn.batch, h = (double)op->u.attn.heads,
               q = (double)op->u.attn.q_len, kv = (double)op->u.attn.kv_len,
               dh = (double)op->u.attn.head_dim;
        big = fmax(b * h * q * kv, fmax(b * h * q * dh, b * h * kv * dh));
        what = "batch x heads x q_len x kv_len and the Q, K and V sizes";
        *field = "kv_len";
    } else if (op->kind == OP_SOFTMAX || op->kind == OP_NORM || op->kind == OP_REDUCTION) {
        big = (double)op->u.rc.rows * (double)op->u.rc.cols;
        what = "rows x cols";
        *field = "cols";
    } else if (op->kind == OP_EMBEDDING) {
        big = (double)op->u.emb.tokens * (double)op->u.emb.dim;
        what = "tokens x dim";
        *field = "dim";
    } else if (op->kind == OP_ELEMENTWISE && !(op->u.ew.flops_per_element <= TRACE_NUM_CAP)) {
        *field = "flops_per_element";
        snprintf(msg, n, "must be at most %g", TRACE_NUM_CAP);
        return -1;
    } else if (op->kind == OP_GENERIC &&
               !(op->u.gen.flops <= TRACE_NUM_CAP && op->u.gen.bytes <= TRACE_NUM_CAP)) {
        *field = op->u.gen.flops <= TRACE_NUM_CAP ? "bytes" : "flops";
        snprintf(msg, n, "must be at most %g", TRACE_NUM_CAP);
        return -1;
    }
    if (big > (double)TRACE_SIZE_CAP) {
        snprintf(msg, n, "%s must be at most 2^50 elements (%.3g here)", what, big);
        return -1;
    }
    return 0;
}

/* Pass 1 for ops[i]: every field except resolving deps. */
static int parse_op(struct loader *L, const cJSON *o, uint32_t i, uint64_t *total_deps)
{
    struct trace *t = L->t;
    struct op *op = &t->ops[i];
    const struct jsondoc *doc = L->doc;
    snprintf(L->prefix, sizeof L->prefix, "ops[%u]", i);
    /* the skim knows where each op starts: no scan of its lines unless a
     * diagnostic needs one */
    int line = L->sp->whole ? jsondoc_line(doc, o) : L->sp->line[i];
    op->line = line;
    if (!cJSON_IsObject(o))
        return lerr(L, DIAG_E_TYPE, o, 0, "", "each op must be an object {...}, got %s",
                    jsondoc_type_name(o));

    /* id and kind first: the kind decides which keys are allowed. */
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, "id");
    if (it == NULL)
        return lerr(L, DIAG_E_MISSING, NULL, line, "id", "every op needs an \"id\"");
    if (id_text(L, it, "id", op->id))
        return -1;
    int64_t prev = ni_add(&L->ids, i);
    if (prev >= 0)
        return lerr(L, DIAG_E_DUPLICATE, it, 0, "id",
                    "id \"%s\" is already used by ops[%" PRId64 "] (line %d)", op->id, prev,
                    t->ops[prev].line);
    it = cJSON_GetObjectItemCaseSensitive(o, "kind");
    char known[256], msg[400];
    if (it == NULL) {
        snprintf(msg, sizeof msg, "every op needs a \"kind\" (one of %s)",
                 kind_list(known, sizeof known));
        return lerr(L, DIAG_E_MISSING, NULL, line, "kind", "%s", msg);
    }
    const char *s;
    if (jsondoc_get_string(doc, it, L->prefix, "kind", SIZE_MAX, &s, L->d))
        return -1;
    if (op_kind_from_name(s, &op->kind)) {
        snprintf(msg, sizeof msg, "unknown kind \"%.60s\" (known: %s)", s,
                 kind_list(known, sizeof known));
        return lerr(L, DIAG_E_UNKNOWN_NAME, it, 0, "kind", "%s", msg);
    }

    /* Every key must be a common key or one of this kind's, given once. */
    const struct op_field *rows[MAX_KIND_FIELDS];
    unsigned nrows = kind_fields(op->kind, rows);
    const cJSON *items[MAX_OP_KEYS] = {0};
    for (const cJSON *c = o->child; c != NULL; c = c->next) {
        const char *key = c->string ? c->string : "";
        unsigned k = 0;
        /* the first byte before the call (most of a big trace's load was
         * these comparisons) */
        while (k < N_COMMON && (key[0] != common_keys[k][0] || strcmp(key, common_keys[k]) != 0))
            k++;
        if (k == N_COMMON) {
            unsigned r = 0;
            while (r < nrows && (key[0] != rows[r]->key[0] || strcmp(key, rows[r]->key) != 0))
                r++;
            if (r == nrows) {
                const char *allowed[MAX_OP_KEYS];
                for (unsigned a = 0; a < N_COMMON; a++)
                    allowed[a] = common_keys[a];
                for (unsigned a = 0; a < nrows; a++)
                    allowed[N_COMMON + a] = rows[a]->key;
                char keys[256];
                snprintf(msg, sizeof msg, "unknown key \"%.40s\" for %s %s op (allowed: %s)", key,
                         article(kind_names[op->kind]), kind_names[op->kind],
                         join(keys, sizeof keys, allowed, N_COMMON + nrows));
                char field[128];
                return diag_set(L->d, DIAG_E_UNKNOWN_KEY, L->file, jsondoc_line(doc, c),
                                jsondoc_field(field, sizeof field, L->prefix, key), "%s", msg);
            }
            k = N_COMMON + r;
        }
        if (items[k] != NULL) {
            snprintf(msg, sizeof msg, "key \"%s\" is given twice (first on line %d)", key,
                     jsondoc_line(doc, items[k]));
            return lerr(L, DIAG_E_DUPLICATE, c, 0, key, "%s", msg);
        }
        items[k] = c;
    }

    if ((it = items[K_NAME]) != NULL) {
        if (jsondoc_get_string(doc, it, L->prefix, "name", TRACE_NAME_MAX - 1, &s, L->d))
            return -1;
        memcpy(op->name, s, strlen(s) + 1);
    } else {
        memcpy(op->name, op->id, strlen(op->id) + 1);
    }

    op->device = 0;
    if ((it = items[K_DEVICE]) != NULL) {
        if (jsondoc_get_string(doc, it, L->prefix, "device", SIZE_MAX, &s, L->d))
            return -1;
        if (find_device(L, it, "device", s, &op->device))
            return -1;
    }

    uint64_t v = 0;
    if ((it = items[K_STREAM]) != NULL &&
        jsondoc_get_uint(doc, it, L->prefix, "stream", 0, TRACE_STREAM_CAP, &v, L->d))
        return -1;
    op->stream = (uint32_t)v;

    if ((it = items[K_DTYPE]) != NULL) {
        if (jsondoc_get_string(doc, it, L->prefix, "dtype", SIZE_MAX, &s, L->d))
            return -1;
        if (dtype_from_name(s, &op->dtype)) {
            snprintf(msg, sizeof msg, "unknown dtype \"%.40s\" (known: %s)", s,
                     dtype_list(known, sizeof known));
            return lerr(L, DIAG_E_UNKNOWN_NAME, it, 0, "dtype", "%s", msg);
        }
    } else if (op->kind == OP_MEMCPY || op->kind == OP_GENERIC) {
        op->dtype = DT_INT8;
    } else if (op->kind == OP_COLLECTIVE) {
        op->dtype = DT_FP32;        /* nccl-tests' default type */
    } else {
        snprintf(msg, sizeof msg, "%s %s op needs a \"dtype\" (one of %s)",
                 article(kind_names[op->kind]), kind_names[op->kind],
                 dtype_list(known, sizeof known));
        return lerr(L, DIAG_E_MISSING, NULL, line, "dtype", "%s", msg);
    }

    op->measured_s = -1.0;
    if ((it = items[K_MEASURED]) != NULL &&
        jsondoc_get_number(doc, it, L->prefix, "measured_s", 0.0, TRACE_MAX_OP_S, &op->measured_s,
                           L->d))
        return -1;
    op->fixed_s = -1.0;
    if ((it = items[K_FIXED]) != NULL &&
        jsondoc_get_number(doc, it, L->prefix, "fixed_s", 0.0, TRACE_MAX_OP_S, &op->fixed_s, L->d))
        return -1;
    op->pass = PASS_FWD;
    if ((it = items[K_PASS]) != NULL) {
        if (jsondoc_get_string(doc, it, L->prefix, "pass", SIZE_MAX, &s, L->d))
            return -1;
        int p;
        for (p = 0; p < PASS_COUNT; p++)
            if (ascii_ieq(s, pass_names[p]))
                break;
        if (p == PASS_COUNT) {
            snprintf(msg, sizeof msg, "unknown pass \"%.40s\" (known: fwd, bwd, fwd+bwd, dgrad, wgrad)", s);
            return lerr(L, DIAG_E_UNKNOWN_NAME, it, 0, "pass", "%s", msg);
        }
        if (p != PASS_FWD && (op->kind == OP_MEMCPY || op->kind == OP_GENERIC ||
                              op->kind == OP_REDUCTION || op->kind == OP_COLLECTIVE))
            return lerr(L, DIAG_E_RANGE, it, 0, "pass", "a %s op has no backward pass here",
                        kind_names[op->kind]);
        if ((p == PASS_DGRAD || p == PASS_WGRAD) && op->kind != OP_GEMM)
            return lerr(L, DIAG_E_RANGE, it, 0, "pass", "dgrad and wgrad are a GEMM's two backward "
                        "products; %s %s op's backward is \"bwd\"", article(kind_names[op->kind]),
                        kind_names[op->kind]);
        op->pass = (enum attn_pass)p;
    }
    op->kernel[0] = '\0';
    if ((it = items[K_KERNEL]) != NULL) {
        if (jsondoc_get_string(doc, it, L->prefix, "kernel", TRACE_KERNEL_MAX - 1, &s, L->d))
            return -1;
        memcpy(op->kernel, s, strlen(s) + 1);
    }

    /* deps: only counted here; resolved once every id is known. */
    op->ndeps = 0;
    if ((it = items[K_DEPS]) != NULL) {
        if (!cJSON_IsArray(it))
            return lerr(L, DIAG_E_TYPE, it, 0, "deps",
                        "must be a list of op ids like [\"a\", \"b\"], got %s",
                        jsondoc_type_name(it));
        uint64_t n = 0;
        for (const cJSON *c = it->child; c != NULL; c = c->next)
            n++;
        *total_deps += n;
        if (*total_deps >= UINT32_MAX)
            return lerr(L, DIAG_E_RANGE, it, 0, "deps",
                        "the trace has more than 2^32 dependencies in all");
        op->ndeps = (uint32_t)n;
    }

    for (unsigned r = 0; r < nrows; r++)
        if (parse_field(L, rows[r], items[N_COMMON + r], line, op))
            return -1;

    /* Checks across fields. */
    if (op->kind == OP_MEMCPY) {
        const cJSON *src = NULL, *dst = NULL;
        for (unsigned r = 0; r < nrows; r++) {
            if (strcmp(rows[r]->key, "src_device") == 0)
                src = items[N_COMMON + r];
            if (strcmp(rows[r]->key, "dst_device") == 0)
                dst = items[N_COMMON + r];
        }
        if (op->u.copy.src != TRACE_NO_DEVICE) {
            if (items[K_DEVICE] != NULL && op->device != op->u.copy.src)
                return lerr(L, DIAG_E_RANGE, src, line, "src_device",
                            "src_device and device name different devices");
            op->device = op->u.copy.src;   /* the source's copy engine does the copy */
        }
        if (op->u.copy.dir == MEMCPY_P2P && op->u.copy.peer == TRACE_NO_DEVICE)
            return lerr(L, DIAG_E_MISSING, NULL, line, "dst_device",
                        "a p2p copy needs \"dst_device\", the device it writes");
        if (op->u.copy.dir == MEMCPY_P2P && op->u.copy.peer == op->device)
            return lerr(L, DIAG_E_RANGE, dst, line, "dst_device",
                        "a p2p copy to its own device; use direction \"d2d\"");
        if (op->u.copy.dir != MEMCPY_P2P && (op->u.copy.peer != TRACE_NO_DEVICE ||
                                             op->u.copy.src != TRACE_NO_DEVICE))
            return lerr(L, DIAG_E_RANGE, dst ? dst : src, line, dst ? "dst_device" : "src_device",
                        "src_device and dst_device are for a copy with direction \"p2p\"");
    }
    if (op->kind == OP_ATTENTION) {
        /* Causal queries are the last q_len of the kv_len keys. */
        if (op->u.attn.causal && op->u.attn.q_len > op->u.attn.kv_len)
            return lerr(L, DIAG_E_RANGE, NULL, line, "q_len",
                        "causal attention needs q_len <= kv_len (the queries are among the "
                        "keys), got q_len %" PRIu64 " > kv_len %" PRIu64,
                        op->u.attn.q_len, op->u.attn.kv_len);
        if (op->u.attn.kv_dtype == DT_COUNT)
            op->u.attn.kv_dtype = op->dtype;
        if (op->u.attn.page_size > 0 && op->pass != PASS_FWD)
            return lerr(L, DIAG_E_UNSUPPORTED, NULL, line, "page_size",
                        "a paged K/V cache is for inference (pass \"fwd\"): a training "
                        "step's K and V are activations, not a cache");
        if (op->u.attn.kv_heads == 0) {
            op->u.attn.kv_heads = op->u.attn.heads;
        } else if (op->u.attn.heads % op->u.attn.kv_heads != 0) {
            const cJSON *kv = NULL;
            for (unsigned r = 0; r < nrows; r++)
                if (strcmp(rows[r]->key, "kv_heads") == 0)
                    kv = items[N_COMMON + r];
            snprintf(msg, sizeof msg, "kv_heads (%" PRIu64 ") must divide heads (%" PRIu64 ")",
                     op->u.attn.kv_heads, op->u.attn.heads);
            return lerr(L, DIAG_E_RANGE, kv, line, "kv_heads", "%s", msg);
        }
    } else if (op->kind == OP_ELEMENTWISE) {
        if (op->u.ew.inputs + op->u.ew.outputs == 0)
            return lerr(L, DIAG_E_RANGE, NULL, line, "inputs",
                        "an elementwise op must read or write at least one tensor "
                        "(inputs + outputs >= 1)");
    } else if (op->kind == OP_COLLECTIVE) {
        if (op->fixed_s >= 0)
            return lerr(L, DIAG_E_RANGE, items[K_FIXED], line, "fixed_s",
                        "a collective's time is simulated on the system's links; a step of "
                        "known length is a generic op with fixed_s");
        int rank = trace_group_rank(t, op->u.coll.group, op->device);
        if (rank < 0) {
            snprintf(msg, sizeof msg, "the op runs on device \"%s\", which is not in its group",
                     t->devices[op->device]);
            return lerr(L, DIAG_E_RANGE, NULL, line, "group", "%s", msg);
        }
        if (op->u.coll.what == COLL_SEND_RECV && t->groups[op->u.coll.group].n != 2)
            return lerr(L, DIAG_E_RANGE, NULL, line, "group",
                        "a send_recv is between two devices (the sender, \"root\", default "
                        "the first, and the receiver), got a group of %u",
                        t->groups[op->u.coll.group].n);
        if (op->u.coll.root != TRACE_NO_DEVICE) {
            if (op->u.coll.what != COLL_BROADCAST && op->u.coll.what != COLL_SEND_RECV)
                return lerr(L, DIAG_E_RANGE, NULL, line, "root",
                            "only a broadcast or a send_recv has a root (the sender)");
            if (trace_group_rank(t, op->u.coll.group, op->u.coll.root) < 0)
                return lerr(L, DIAG_E_RANGE, NULL, line, "root",
                            "the root \"%s\" is not in the group", t->devices[op->u.coll.root]);
        }
        if (op->u.coll.algo == COLL_DIRECT && op->u.coll.what != COLL_ALL_TO_ALL &&
            op->u.coll.what != COLL_ALL_GATHER)
            return lerr(L, DIAG_E_RANGE, NULL, line, "algo",
                        "\"direct\" is an algorithm of all_to_all and all_gather only");
        if (op->u.coll.algo == COLL_TREE && op->u.coll.what != COLL_ALL_REDUCE)
            return lerr(L, DIAG_E_RANGE, NULL, line, "algo",
                        "\"tree\" is an algorithm of all_reduce only");
        if (op->u.coll.algo == COLL_NVLS && op->u.coll.what != COLL_ALL_REDUCE &&
            op->u.coll.what != COLL_ALL_GATHER && op->u.coll.what != COLL_REDUCE_SCATTER)
            return lerr(L, DIAG_E_RANGE, NULL, line, "algo",
                        "\"nvls\" (NVLink SHARP) is an algorithm of all_reduce, all_gather and "
                        "reduce_scatter only");
        if (op->u.coll.algo == COLL_RING && op->u.coll.what == COLL_ALL_TO_ALL)
            return lerr(L, DIAG_E_RANGE, NULL, line, "algo",
                        "all_to_all runs \"direct\" (or \"auto\"), not \"ring\"");
        uint32_t gn = t->groups[op->u.coll.group].n;
        if (op->u.coll.what != COLL_ALL_REDUCE && op->u.coll.what != COLL_BROADCAST &&
            op->u.coll.what != COLL_SEND_RECV && op->u.coll.bytes % gn != 0) {
            snprintf(msg, sizeof msg, "%s %s over %u devices needs bytes divisible by %u "
                     "(each rank's share), got %" PRIu64, article(coll_names[op->u.coll.what]),
                     coll_names[op->u.coll.what], gn, gn,
                     op->u.coll.bytes);
            return lerr(L, DIAG_E_RANGE, NULL, line, "bytes", "%s", msg);
        }
    } else if (op->kind == OP_GENERIC) {
        if (op->u.gen.flops == 0.0 && op->u.gen.bytes == 0.0 && op->fixed_s < 0)
            return lerr(L, DIAG_E_RANGE, NULL, line, "flops",
                        "a generic op needs flops > 0 or bytes > 0 (both are 0), or a fixed_s");
    }
    const char *field = NULL;
    if (trace_op_sizes_ok(op, &field, msg, sizeof msg) != 0)
        return lerr(L, DIAG_E_RANGE, NULL, line, field, "%s", msg);

    return 0;
}

/* Pass 2 for ops[i] from its tree: deps to indices, with the diagnostic
 * of a dep that names no op, itself or one already listed.  mark[j] ==
 * i + 1 once j is seen. */
static int resolve_deps_tree(struct loader *L, const cJSON *o, uint32_t i, uint32_t *next,
                             uint32_t *mark)
{
    struct trace *t = L->t;
    struct op *op = &t->ops[i];
    op->deps_off = *next;
    if (op->ndeps == 0)
        return 0;
    snprintf(L->prefix, sizeof L->prefix, "ops[%u]", i);
    const cJSON *deps = cJSON_GetObjectItemCaseSensitive(o, "deps");
    uint32_t j = 0;
    for (const cJSON *c = deps->child; c != NULL; c = c->next, j++) {
        char key[32], id[TRACE_ID_MAX], msg[256];
        snprintf(key, sizeof key, "deps[%u]", j);
        int64_t k = -1;
        if (cJSON_IsString(c) && c->valuestring != NULL &&
            strlen(c->valuestring) >= TRACE_ID_MAX) {
            snprintf(msg, sizeof msg, "no op has the id \"%.60s...\"", c->valuestring);
            return lerr(L, DIAG_E_UNKNOWN_NAME, c, 0, key, "%s", msg);
        }
        if (id_text(L, c, key, id))
            return -1;
        k = ni_find(&L->ids, id);
        if (k < 0) {
            snprintf(msg, sizeof msg, "no op has the id \"%s\"", id);
            return lerr(L, DIAG_E_UNKNOWN_NAME, c, 0, key, "%s", msg);
        }
        if ((uint32_t)k == i) {
            snprintf(msg, sizeof msg, "op \"%s\" depends on itself", id);
            return lerr(L, DIAG_E_CYCLE, c, 0, key, "%s", msg);
        }
        if (mark[k] == i + 1) {
            snprintf(msg, sizeof msg, "\"%s\" is listed twice", id);
            return lerr(L, DIAG_E_DUPLICATE, c, 0, key, "%s", msg);
        }
        mark[k] = i + 1;
        t->deps[(*next)++] = (uint32_t)k;
    }
    return 0;
}

/* Pass 2 for ops[i] from the ids pass 1 kept (*pos walks L->depids); the
 * op's tree is parsed again only to report a bad dep. */
static int resolve_deps(struct loader *L, uint32_t i, uint32_t *next, uint32_t *mark,
                        size_t *pos)
{
    struct trace *t = L->t;
    struct op *op = &t->ops[i];
    op->deps_off = *next;
    for (uint32_t j = 0; j < op->ndeps; j++) {
        const char *id = L->depids + *pos;
        *pos += strlen(id) + 1;
        int64_t k = id[0] != '\0' ? ni_find(&L->ids, id) : -1;
        if (k >= 0 && (uint32_t)k != i && mark[k] != i + 1) {
            mark[k] = i + 1;
            t->deps[(*next)++] = (uint32_t)k;
            continue;
        }
        /* a bad dep: the tree says which and where */
        for (uint32_t q = op->deps_off; q < *next; q++)
            mark[t->deps[q]] = 0;
        *next = op->deps_off;
        cJSON *o = op_elem(L, i);
        if (o == NULL)
            return -1;
        int rc = resolve_deps_tree(L, o, i, next, mark);
        op_done(L, o);
        if (rc == 0)        /* cannot be: the ids are the tree's */
            return diag_set(L->d, DIAG_E_RANGE, L->file, op->line, "deps",
                            "internal: ops[%u]'s deps read differently twice", i);
        return rc;
    }
    return 0;
}

/* Names one cycle among the ops Kahn's algorithm could not order
 * (indeg[i] > 0).  Every such op waits for another such op, so walking
 * "first unfinished dep" from any of them must come back on itself. */
static int report_cycle(struct loader *L, const uint32_t *indeg)
{
    struct trace *t = L->t;
    uint32_t n = t->nops;
    uint32_t *pos = tr_alloc(n, sizeof *pos); /* step + 1 at which an op was visited */
    uint32_t *path = tr_alloc(n, sizeof *path);
    uint32_t start = 0;
    while (indeg[start] == 0)
        start++;
    uint32_t len = 0, cur = start;
    while (pos[cur] == 0) {
        pos[cur] = len + 1;
        path[len++] = cur;
        const struct op *op = &t->ops[cur];
        uint32_t next = cur;
        for (uint32_t j = 0; j < op->ndeps; j++) {
            if (indeg[t->deps[op->deps_off + j]] > 0) {
                next = t->deps[op->deps_off + j];
                break;
            }
        }
        cur = next;
    }
    /* The cycle is path[pos[cur] - 1 .. len); start it at its earliest op. */
    uint32_t first = pos[cur] - 1, best = first;
    for (uint32_t k = first; k < len; k++)
        if (path[k] < path[best])
            best = k;
    uint32_t clen = len - first, victim = path[best];
    char msg[480];
    size_t used = (size_t)snprintf(msg, sizeof msg, "dependency cycle: ");
    for (uint32_t s = 0; s <= clen && used < sizeof msg; s++) {
        uint32_t k = first + (best - first + s) % clen;
        int w = snprintf(msg + used, sizeof msg - used, "%s\"%s\"", s ? " -> " : "",
                         t->ops[path[k]].id);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (used < sizeof msg)
        snprintf(msg + used, sizeof msg - used, " (each op waits for the next)");
    else
        snprintf(msg + sizeof msg - 4, 4, "...");
    free(pos);
    free(path);

    cJSON *o = op_elem(L, victim);
    if (o == NULL)
        return -1;
    int line = jsondoc_line(L->doc, cJSON_GetObjectItemCaseSensitive(o, "deps"));
    op_done(L, o);
    snprintf(L->prefix, sizeof L->prefix, "ops[%u]", victim);
    return lerr(L, DIAG_E_CYCLE, NULL, line ? line : t->ops[victim].line, "deps", "%s", msg);
}

static int order_ops(struct loader *L)
{
    struct trace *t = L->t;
    uint32_t n = t->nops;
    uint32_t *indeg = tr_alloc(n, sizeof *indeg);
    uint32_t *off = tr_alloc((size_t)n + 1, sizeof *off);       /* dependents, CSR */
    uint32_t *users = tr_alloc(t->ndeps, sizeof *users);
    uint32_t *heap = tr_alloc(n, sizeof *heap);
    for (uint32_t i = 0; i < n; i++) {
        indeg[i] = t->ops[i].ndeps;
        for (uint32_t j = 0; j < t->ops[i].ndeps; j++)
            off[t->deps[t->ops[i].deps_off + j] + 1]++;
    }
    for (uint32_t i = 0; i < n; i++)
        off[i + 1] += off[i];
    uint32_t *fill = tr_alloc(n, sizeof *fill);
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t j = 0; j < t->ops[i].ndeps; j++) {
            uint32_t dep = t->deps[t->ops[i].deps_off + j];
            users[off[dep] + fill[dep]++] = i;
        }
    }
    free(fill);

    uint32_t nheap = 0, done = 0;
    for (uint32_t i = 0; i < n; i++)
        if (indeg[i] == 0)
            uheap_push(heap, &nheap, i);
    while (nheap > 0) {
        uint32_t i = uheap_pop(heap, &nheap);
        t->topo[done++] = i;
        for (uint32_t u = off[i]; u < off[i + 1]; u++)
            if (--indeg[users[u]] == 0)
                uheap_push(heap, &nheap, users[u]);
    }
    int rc = done == n ? 0 : report_cycle(L, indeg);
    free(indeg);
    free(off);
    free(users);
    free(heap);
    return rc;
}

/* Pair up collectives: the k-th op a device issues on a group is its part
 * of the group's k-th collective, and every member must issue as many, of
 * the same collective, size, type, algorithm and root. */
static void mark_mirrors(struct trace *t);

static int match_colls(struct loader *L)
{
    struct trace *t = L->t;
    if (t->ngroups == 0)
        return 0;
    uint32_t nslots = t->groups[t->ngroups - 1].off + t->groups[t->ngroups - 1].n;
    uint32_t *cnt = tr_alloc(nslots, sizeof *cnt);
    for (uint32_t i = 0; i < t->nops; i++) {
        const struct op *op = &t->ops[i];
        if (op->kind != OP_COLLECTIVE)
            continue;
        const struct trace_group *g = &t->groups[op->u.coll.group];
        cnt[g->off + (uint32_t)trace_group_rank(t, op->u.coll.group, op->device)]++;
    }
    mark_mirrors(t);
    for (uint32_t gi = 0; gi < t->ngroups; gi++) {
        const struct trace_group *g = &t->groups[gi];
        uint32_t r0 = 0;            /* the first member with ops: the others must match it */
        while (r0 < g->n && t->mirror != NULL && t->mirror[t->group_dev[g->off + r0]])
            r0++;
        for (uint32_t r = r0 + 1; r < g->n; r++) {
            if (cnt[g->off + r] == cnt[g->off + r0] ||
                (t->mirror != NULL && t->mirror[t->group_dev[g->off + r]]))
                continue;
            uint32_t few = cnt[g->off + r] < cnt[g->off + r0] ? r : r0, many = few == r ? r0 : r;
            char msg[400];
            snprintf(msg, sizeof msg, "device \"%s\" takes part in %u collectives on the group "
                     "starting [\"%s\", ...] but \"%s\" in %u: every member%s must issue each one",
                     t->devices[t->group_dev[g->off + many]], cnt[g->off + many],
                     t->devices[t->group_dev[g->off]], t->devices[t->group_dev[g->off + few]],
                     cnt[g->off + few], t->symmetric ? " with ops" : "");
            /* point at the first collective of the group that has no partner */
            uint32_t seen = 0, at = 0;
            for (uint32_t i = 0; i < t->nops; i++)
                if (t->ops[i].kind == OP_COLLECTIVE && t->ops[i].u.coll.group == gi &&
                    t->ops[i].device == t->group_dev[g->off + many] &&
                    ++seen == cnt[g->off + few] + 1)
                    at = i;
            free(cnt);
            snprintf(L->prefix, sizeof L->prefix, "ops[%u]", at);
            return lerr(L, DIAG_E_RANGE, NULL, t->ops[at].line, "group", "%s", msg);
        }
    }
    free(cnt);
    trace_index_colls(t);   /* the counts agree: number them */
    int rc = 0;
    for (uint32_t ci = 0; ci < t->ncolls && rc == 0; ci++) {
        const struct trace_coll *c = &t->colls[ci];
        uint32_t gn = t->groups[c->group].n, r0 = 0;
        while (r0 < gn && t->coll_ops[c->ops_off + r0] == UINT32_MAX)
            r0++;
        const struct op *a = &t->ops[t->coll_ops[c->ops_off + r0]];
        for (uint32_t r = r0 + 1; r < gn && rc == 0; r++) {
            uint32_t bi = t->coll_ops[c->ops_off + r];
            if (bi == UINT32_MAX)
                continue;           /* a mirror */
            const struct op *b = &t->ops[bi];
            const char *what = a->u.coll.what != b->u.coll.what ? "collective"
                               : a->u.coll.bytes != b->u.coll.bytes ? "bytes"
                               : a->dtype != b->dtype ? "dtype"
                               : a->u.coll.algo != b->u.coll.algo ? "algo"
                               : a->u.coll.root != b->u.coll.root ? "root" : NULL;
            if (what == NULL)
                continue;
            snprintf(L->prefix, sizeof L->prefix, "ops[%u]", bi);
            rc = lerr(L, DIAG_E_RANGE, NULL, b->line, what,
                      "op '%s' is the partner of op '%s' (line %d) in one collective (the same "
                      "turn on the same group) but their %s differ", b->id, a->id, a->line, what);
        }
    }
    return rc;
}

static int build(struct loader *L)
{
    const struct jsondoc *doc = L->doc;
    const cJSON *root = doc->root;
    struct trace *t = L->t;
    int root_line = jsondoc_line(doc, root);
    L->prefix[0] = '\0';
    if (!cJSON_IsObject(root))
        return lerr(L, DIAG_E_TYPE, root, 0, "",
                    "a trace must be a JSON object {\"strata_trace\": 1, ...}, got %s",
                    jsondoc_type_name(root));

    /* The version first, so a newer trace is not reported as unknown keys. */
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, "strata_trace");
    if (it == NULL)
        return lerr(L, DIAG_E_MISSING, NULL, root_line, "strata_trace",
                    "missing \"strata_trace\": 1 (is this a strata trace? see "
                    "traces/README.md)");
    if (!cJSON_IsNumber(it))
        return lerr(L, DIAG_E_TYPE, it, 0, "strata_trace",
                    "must be the format version number 1, got %s", jsondoc_type_name(it));
    if (it->valuedouble != 1.0) {
        char msg[128];
        snprintf(msg, sizeof msg, "trace format version %.15g is not supported (this strata "
                 "reads version 1)", it->valuedouble);
        return lerr(L, DIAG_E_UNSUPPORTED, it, 0, "strata_trace", "%s", msg);
    }

    const cJSON *items[N_TOP_KEYS] = {0};
    for (const cJSON *c = root->child; c != NULL; c = c->next) {
        const char *key = c->string ? c->string : "";
        size_t k = 0;
        while (k < N_TOP_KEYS && strcmp(key, top_keys[k]) != 0)
            k++;
        char msg[256], keys[128];
        if (k == N_TOP_KEYS) {
            snprintf(msg, sizeof msg, "unknown key \"%.40s\" (allowed: %s)", key,
                     join(keys, sizeof keys, top_keys, N_TOP_KEYS));
            char field[128];
            return diag_set(L->d, DIAG_E_UNKNOWN_KEY, L->file, jsondoc_line(doc, c),
                            jsondoc_field(field, sizeof field, "", key), "%s", msg);
        }
        if (items[k] != NULL) {
            snprintf(msg, sizeof msg, "key \"%s\" is given twice (first on line %d)", key,
                     jsondoc_line(doc, items[k]));
            return lerr(L, DIAG_E_DUPLICATE, c, 0, key, "%s", msg);
        }
        items[k] = c;
    }

    if ((it = items[T_NAME]) != NULL) {
        const char *s;
        if (jsondoc_get_string(doc, it, "", "name", TRACE_NAME_MAX - 1, &s, L->d))
            return -1;
        memcpy(t->name, s, strlen(s) + 1);
    }
    /* meta is free-form provenance, except for the number meta.tokens. */
    if ((it = items[T_META]) != NULL && cJSON_IsObject(it)) {
        if (jsondoc_check_unique(doc, it, "meta", L->d))
            return -1;
        const cJSON *tok = cJSON_GetObjectItemCaseSensitive(it, "tokens");
        if (tok != NULL &&
            jsondoc_get_number(doc, tok, "meta", "tokens", 0.0, HUGE_VAL, &t->tokens, L->d))
            return -1;
    }
    if (parse_devices(L, items[T_DEVICES]))
        return -1;
    if ((it = items[T_SYMMETRIC]) != NULL &&
        jsondoc_get_bool(doc, it, "", "symmetric", &t->symmetric, L->d))
        return -1;

    const cJSON *ops = items[T_OPS];
    L->prefix[0] = '\0';
    if (ops == NULL)
        return lerr(L, DIAG_E_MISSING, NULL, root_line, "ops",
                    "missing \"ops\": [...], the list of operators");
    if (!cJSON_IsArray(ops))
        return lerr(L, DIAG_E_TYPE, ops, 0, "ops", "must be a list of ops [{...}, ...], got %s",
                    jsondoc_type_name(ops));
    /* the same item, as the tree owns it (op_elem walks it) */
    L->ops = cJSON_GetObjectItemCaseSensitive(L->sp->top.root, "ops");
    size_t n = L->sp->whole ? 0 : L->sp->count;
    for (const cJSON *c = ops->child; c != NULL && n <= TRACE_OPS_CAP; c = c->next)
        n++;
    if (n == 0)
        return lerr(L, DIAG_E_RANGE, ops, 0, "ops", "must list at least one op");
    if (n > TRACE_OPS_CAP)
        return lerr(L, DIAG_E_RANGE, ops, 0, "ops", "lists more than 50000000 ops");

    t->nops = (uint32_t)n;
    t->ops = tr_alloc(n, sizeof *t->ops);
    ni_init(&L->ids, n, t->ops[0].id, sizeof *t->ops);
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        cJSON *o = op_elem(L, i);
        if (o == NULL)
            return -1;
        int rc = parse_op(L, o, i, &total);
        if (rc == 0)
            keep_deps(L, o);
        op_done(L, o);
        if (rc)
            return -1;
    }

    t->ndeps = (uint32_t)total;
    t->deps = tr_alloc(total, sizeof *t->deps);
    uint32_t *mark = tr_alloc(n, sizeof *mark);
    uint32_t next = 0;
    size_t pos = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (resolve_deps(L, i, &next, mark, &pos)) {
            free(mark);
            return -1;
        }
    }
    free(mark);
    free(L->depids);
    L->depids = NULL;

    if (match_colls(L))
        return -1;
    t->topo = tr_alloc(n, sizeof *t->topo);
    return order_ops(L);
}

int trace_load(const char *path, struct trace *out, struct diag *d)
{
    struct jsondoc_split sp;
    if (jsondoc_load_split(path, "ops", &sp, d)) {
        jsondoc_split_free(&sp);
        return -1;
    }
    struct jsondoc *docp = &sp.top;
    struct trace t;
    memset(&t, 0, sizeof t);
    snprintf(t.path, sizeof t.path, "%s", path);
    struct loader L;
    memset(&L, 0, sizeof L);
    L.doc = docp;
    L.sp = &sp;
    L.file = docp->name;
    L.d = d;
    L.t = &t;
    int rc = build(&L);
    ni_free(&L.ids);
    ni_free(&L.devs);
    free(L.ghash);
    free(L.gscratch);
    free(L.depids);
    jsondoc_split_free(&sp);
    if (rc != 0) {
        trace_free(&t);
        return -1;
    }
    *out = t;
    return 0;
}

void trace_free(struct trace *t)
{
    if (t == NULL)
        return;
    free(t->ops);
    free(t->deps);
    free(t->topo);
    free(t->devices);
    free(t->groups);
    free(t->group_dev);
    free(t->colls);
    free(t->coll_ops);
    free(t->mirror);
    t->mirror = NULL;
    t->nmirrors = 0;
    t->ops = NULL;
    t->deps = NULL;
    t->topo = NULL;
    t->devices = NULL;
    t->groups = NULL;
    t->group_dev = NULL;
    t->colls = NULL;
    t->coll_ops = NULL;
    t->nops = t->ndeps = t->ndevices = t->ngroups = t->ncolls = 0;
}

/* In a symmetric trace, every device with no ops of its own is a mirror:
 * the unsimulated members of the simulated ranks' groups, and the devices
 * of copies that no used group reaches (the other slices' ranks). */
static void mark_mirrors(struct trace *t)
{
    free(t->mirror);
    t->mirror = NULL;
    t->nmirrors = 0;
    if (t->ngroups == 0 || !t->symmetric)
        return;
    uint8_t *has = tr_alloc(t->ndevices, 1);
    for (uint32_t i = 0; i < t->nops; i++)
        has[t->ops[i].device] = 1;
    for (uint32_t dv = 0; dv < t->ndevices; dv++) {
        if (has[dv])
            continue;
        if (t->mirror == NULL)
            t->mirror = tr_alloc(t->ndevices, 1);
        t->mirror[dv] = 1;
        t->nmirrors++;
    }
    free(has);
}

void trace_index_colls(struct trace *t)
{
    free(t->colls);
    free(t->coll_ops);
    t->colls = NULL;
    t->coll_ops = NULL;
    t->ncolls = 0;
    mark_mirrors(t);
    if (t->ngroups == 0)
        return;
    uint32_t nslots = t->groups[t->ngroups - 1].off + t->groups[t->ngroups - 1].n;
    uint32_t *cnt = tr_alloc(nslots, sizeof *cnt), *base = tr_alloc(t->ngroups, sizeof *base);
    for (uint32_t i = 0; i < t->nops; i++) {
        const struct op *o = &t->ops[i];
        if (o->kind != OP_COLLECTIVE)
            continue;
        int r = trace_group_rank(t, o->u.coll.group, o->device);
        SIM_CHECK(r >= 0);
        cnt[t->groups[o->u.coll.group].off + (uint32_t)r]++;
    }
    uint64_t total = 0, nops = 0;
    for (uint32_t g = 0; g < t->ngroups; g++) {
        const struct trace_group *gr = &t->groups[g];
        uint32_t c = 0;             /* the real members' count (they agree) */
        for (uint32_t r = 0; r < gr->n; r++)
            if (t->mirror == NULL || !t->mirror[t->group_dev[gr->off + r]]) {
                SIM_CHECK(c == 0 || cnt[gr->off + r] == c);
                c = cnt[gr->off + r];
            }
        base[g] = (uint32_t)total;
        total += c;
        cnt[gr->off] = c;           /* slot 0 holds the group's count from here */
        for (uint32_t r = 1; r < gr->n; r++)
            cnt[gr->off + r] = 0;
    }
    t->ncolls = (uint32_t)total;
    t->colls = tr_alloc(total, sizeof *t->colls);
    for (uint32_t g = 0; g < t->ngroups; g++)
        for (uint32_t k = 0; k < cnt[t->groups[g].off]; k++) {
            t->colls[base[g] + k].group = g;
            t->colls[base[g] + k].ops_off = (uint32_t)nops;
            nops += t->groups[g].n;
        }
    t->coll_ops = tr_alloc(nops, sizeof *t->coll_ops);
    for (uint64_t k = 0; k < nops; k++)
        t->coll_ops[k] = UINT32_MAX;    /* a mirror's stays so */
    memset(cnt, 0, nslots * sizeof *cnt);
    for (uint32_t i = 0; i < t->nops; i++) {
        struct op *o = &t->ops[i];
        if (o->kind != OP_COLLECTIVE)
            continue;
        uint32_t g = o->u.coll.group, r = (uint32_t)trace_group_rank(t, g, o->device);
        o->u.coll.inst = base[g] + cnt[t->groups[g].off + r]++;
        t->coll_ops[t->colls[o->u.coll.inst].ops_off + r] = i;
    }
    free(cnt);
    free(base);
}

void trace_one_collective(struct trace *t, enum coll_kind kind, enum coll_algo algo,
                          enum dtype dt, uint32_t n, uint64_t bytes)
{
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "(%s over %u ranks)", coll_names[kind], n);
    t->nops = t->ndevices = n;
    t->ops = tr_alloc(n, sizeof *t->ops);
    t->devices = tr_alloc(n, sizeof *t->devices);
    t->topo = tr_alloc(n, sizeof *t->topo);
    t->deps = tr_alloc(1, sizeof *t->deps);
    t->ngroups = 1;
    t->groups = tr_alloc(1, sizeof *t->groups);
    t->groups[0].n = n;
    t->group_dev = tr_alloc(n, sizeof *t->group_dev);
    t->ncolls = 1;
    t->colls = tr_alloc(1, sizeof *t->colls);
    t->coll_ops = tr_alloc(n, sizeof *t->coll_ops);
    for (uint32_t r = 0; r < n; r++) {
        snprintf(t->devices[r], sizeof t->devices[r], "rank%u", r);
        struct op *o = &t->ops[r];
        snprintf(o->id, sizeof o->id, "rank%u", r);
        snprintf(o->name, sizeof o->name, "%s", coll_names[kind]);
        o->kind = OP_COLLECTIVE;
        o->dtype = dt;
        o->device = r;
        o->measured_s = o->fixed_s = -1;
        o->u.coll.bytes = bytes;
        o->u.coll.what = kind;
        o->u.coll.algo = algo;
        o->u.coll.root = TRACE_NO_DEVICE;
        t->group_dev[r] = r;
        t->coll_ops[r] = r;
        t->topo[r] = r;
    }
}

/* ---- writing ---------------------------------------------------------- */

/* A JSON string of at most max bytes of s (s need not be terminated). */
static void put_string(FILE *f, const char *s, size_t max)
{
    /* what the loader would refuse (not UTF-8, control characters: an
     * imported kernel name) becomes U+FFFD, a byte at a time */
    size_t n = strnlen(s, max), out = 0;   /* at most max - 1 bytes, as the loader reads */
    fputc('"', f);
    for (size_t i = 0; i < n;) {
        size_t k = utf8_char_len(s + i, n - i);
        if (out + (k == 0 ? 3 : k) > max - 1)
            break;
        if (k == 0) {
            fputs(UTF8_REPLACEMENT, f);
            out += 3;
            i++;
        } else if (s[i] == '"' || s[i] == '\\') {
            fprintf(f, "\\%c", s[i]);
            out++;
            i++;
        } else {
            fwrite(s + i, 1, k, f);
            out += k;
            i += k;
        }
    }
    fputc('"', f);
}

/* Shortest %g text that reads back as exactly v. */
static void put_double(FILE *f, double v)
{
    char buf[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    fputs(buf, f);
}

static void put_op(FILE *f, const struct trace *t, const struct op *op)
{
    fputs("  {\"id\": ", f);
    put_string(f, op->id, TRACE_ID_MAX);
    fputs(", \"name\": ", f);
    put_string(f, op->name, TRACE_NAME_MAX);
    fprintf(f, ", \"kind\": \"%s\", \"device\": ", kind_names[op->kind]);
    put_string(f, t->devices[op->device], TRACE_DEVICE_MAX);
    fprintf(f, ", \"stream\": %" PRIu32 ", \"dtype\": \"%s\", \"deps\": [", op->stream,
            dtype_name(op->dtype));
    for (uint32_t j = 0; j < op->ndeps; j++) {
        if (j)
            fputs(", ", f);
        put_string(f, t->ops[t->deps[op->deps_off + j]].id, TRACE_ID_MAX);
    }
    fputc(']', f);
    const struct op_field *rows[MAX_KIND_FIELDS];
    unsigned nrows = kind_fields(op->kind, rows);
    for (unsigned r = 0; r < nrows; r++) {
        const char *src = (const char *)op + rows[r]->off;
        if (rows[r]->type == F_DEVICE &&
            ((op->kind == OP_MEMCPY && op->u.copy.dir != MEMCPY_P2P) ||
             *(const uint32_t *)(const void *)src >= t->ndevices))
            continue;           /* not given, or not a p2p copy's */
        if (op->kind == OP_GEMM && rows[r]->off == offsetof(struct op, u.gemm.transient) &&
            !op->u.gemm.transient)
            continue;           /* written only when true */
        if (op->kind == OP_ATTENTION && rows[r]->off == offsetof(struct op, u.attn.page_size) &&
            op->u.attn.page_size == 0)
            continue;           /* written only when paged */
        if (((op->kind == OP_ATTENTION && rows[r]->off == offsetof(struct op, u.attn.dropout)) ||
             (op->kind == OP_ELEMENTWISE && rows[r]->off == offsetof(struct op, u.ew.dropout))) &&
            *(const double *)(const void *)src == 0)
            continue;           /* written only when there is dropout */
        fprintf(f, ", \"%s\": ", rows[r]->key);
        switch (rows[r]->type) {
        case F_SIZE: fprintf(f, "%" PRIu64, *(const uint64_t *)(const void *)src); break;
        case F_COUNT: fprintf(f, "%" PRIu32, *(const uint32_t *)(const void *)src); break;
        case F_NUM: put_double(f, *(const double *)(const void *)src); break;
        case F_BOOL: fputs(*(const int *)(const void *)src ? "true" : "false", f); break;
        case F_IMPL:
            fprintf(f, "\"%s\"", impl_names[*(const enum attn_impl *)(const void *)src]);
            break;
        case F_DIR:
            fprintf(f, "\"%s\"", dir_names[*(const enum memcpy_dir *)(const void *)src]);
            break;
        case F_WFMT:
            fprintf(f, "\"%s\"", wfmt_name(*(const enum wfmt *)(const void *)src));
            break;
        case F_DTYPE:
            fprintf(f, "\"%s\"", dtype_name(*(const enum dtype *)(const void *)src));
            break;
        case F_DEVICE: {
            put_string(f, t->devices[*(const uint32_t *)(const void *)src], TRACE_DEVICE_MAX);
            break;
        }
        case F_COLL:
            fprintf(f, "\"%s\"", coll_names[*(const enum coll_kind *)(const void *)src]);
            break;
        case F_ALGO:
            fprintf(f, "\"%s\"", algo_names[*(const enum coll_algo *)(const void *)src]);
            break;
        case F_GROUP: {
            const struct trace_group *g = &t->groups[*(const uint32_t *)(const void *)src];
            fputc('[', f);
            for (uint32_t k = 0; k < g->n; k++) {
                if (k)
                    fputs(", ", f);
                put_string(f, t->devices[t->group_dev[g->off + k]], TRACE_DEVICE_MAX);
            }
            fputc(']', f);
            break;
        }
        }
    }
    if (op->measured_s >= 0.0) {
        fputs(", \"measured_s\": ", f);
        put_double(f, op->measured_s);
    }
    if (op->fixed_s >= 0.0) {
        fputs(", \"fixed_s\": ", f);
        put_double(f, op->fixed_s);
    }
    if (op->pass != PASS_FWD)
        fprintf(f, ", \"pass\": \"%s\"", pass_names[op->pass]);
    if (op->kernel[0] != '\0') {
        fputs(", \"kernel\": ", f);
        put_string(f, op->kernel, TRACE_KERNEL_MAX);
    }
    fputc('}', f);
}

/* Cheap checks that the writer will emit something the loader accepts
 * (a trace built in code may be wrong; one from trace_load never is).
 * Not checked: unique ids and device names, and cycles. */
static int check_writable(const struct trace *t, const char *path, struct diag *d)
{
    if (t->nops == 0 || t->ops == NULL)
        return diag_set(d, DIAG_E_RANGE, path, 0, "ops", "a trace needs at least one op");
    if (!isfinite(t->tokens) || t->tokens < 0.0)
        return diag_set(d, DIAG_E_RANGE, path, 0, "meta.tokens", "must be a finite number >= 0");
    if (t->ndevices == 0 || t->devices == NULL)
        return diag_set(d, DIAG_E_RANGE, path, 0, "devices", "a trace needs at least one device");
    for (uint32_t i = 0; i < t->ndevices; i++)
        if (t->devices[i][0] == '\0')
            return diag_set(d, DIAG_E_RANGE, path, 0, "devices", "device %u has no name", i);
    for (uint32_t i = 0; i < t->nops; i++) {
        const struct op *op = &t->ops[i];
        char field[48];
        snprintf(field, sizeof field, "ops[%u]", i);
        if ((unsigned)op->kind >= OP_KIND_COUNT || (unsigned)op->dtype >= DT_COUNT ||
            op->device >= t->ndevices || op->id[0] == '\0' ||
            (uint64_t)op->deps_off + op->ndeps > t->ndeps)
            return diag_set(d, DIAG_E_RANGE, path, 0, field,
                            "kind, dtype, device, id or deps out of range");
        for (uint32_t j = 0; j < op->ndeps; j++)
            if (t->deps[op->deps_off + j] >= t->nops)
                return diag_set(d, DIAG_E_RANGE, path, 0, field, "dep index out of range");
        if ((unsigned)op->pass >= PASS_COUNT ||
            (op->kind == OP_ATTENTION && (unsigned)op->u.attn.impl >= ATTN_IMPL_COUNT))
            return diag_set(d, DIAG_E_RANGE, path, 0, field, "bad attention impl or pass");
        if (op->kind == OP_MEMCPY && ((unsigned)op->u.copy.dir > MEMCPY_P2P ||
                                      (op->u.copy.dir == MEMCPY_P2P && op->u.copy.peer >= t->ndevices)))
            return diag_set(d, DIAG_E_RANGE, path, 0, field, "bad memcpy direction or dst_device");
        if (op->kind == OP_COLLECTIVE &&
            ((unsigned)op->u.coll.what >= COLL_KIND_COUNT ||
             (unsigned)op->u.coll.algo >= COLL_ALGO_COUNT || op->u.coll.group >= t->ngroups ||
             trace_group_rank(t, op->u.coll.group, op->device) < 0))
            return diag_set(d, DIAG_E_RANGE, path, 0, field,
                            "bad collective, algo or group, or a device not in its group");
        const struct op_field *rows[MAX_KIND_FIELDS];
        unsigned nrows = kind_fields(op->kind, rows);
        for (unsigned r = 0; r < nrows; r++) {
            const char *src = (const char *)op + rows[r]->off;
            int ok = 1;
            if (rows[r]->type == F_SIZE) {
                uint64_t v = *(const uint64_t *)(const void *)src;
                ok = v >= 1 && v <= TRACE_SIZE_CAP;
            } else if (rows[r]->type == F_COUNT) {
                ok = *(const uint32_t *)(const void *)src <= TRACE_TENSORS_CAP;
            } else if (rows[r]->type == F_NUM) {
                double v = *(const double *)(const void *)src;
                ok = isfinite(v) && v >= 0.0;
            }
            if (!ok)
                return diag_set(d, DIAG_E_RANGE, path, 0, field, "%s is out of range",
                                rows[r]->key);
        }
        if (op->stream > TRACE_STREAM_CAP)
            return diag_set(d, DIAG_E_RANGE, path, 0, field, "stream is out of range");
        const char *which;
        char msg[160];
        if (trace_op_sizes_ok(op, &which, msg, sizeof msg) != 0)
            return diag_set(d, DIAG_E_RANGE, path, 0, field, "%s: %s", which, msg);
        if (isnan(op->fixed_s) || isinf(op->fixed_s))
            return diag_set(d, DIAG_E_RANGE, path, 0, field, "fixed_s is not finite");
        if (isnan(op->measured_s) || isinf(op->measured_s))
            return diag_set(d, DIAG_E_RANGE, path, 0, field, "measured_s is not finite");
    }
    return 0;
}

static void put_trace(FILE *f, const struct trace *t)
{
    fputs("{\"strata_trace\": 1,\n", f);
    if (t->name[0] != '\0') {
        fputs(" \"name\": ", f);
        put_string(f, t->name, TRACE_NAME_MAX);
        fputs(",\n", f);
    }
    if (t->tokens > 0.0) {
        fputs(" \"meta\": {\"tokens\": ", f);
        put_double(f, t->tokens);
        fputs("},\n", f);
    }
    if (t->symmetric)
        fputs(" \"symmetric\": true,\n", f);
    fputs(" \"devices\": [", f);
    for (uint32_t i = 0; i < t->ndevices; i++) {
        if (i)
            fputs(", ", f);
        put_string(f, t->devices[i], TRACE_DEVICE_MAX);
    }
    fputs("],\n \"ops\": [\n", f);
    for (uint32_t i = 0; i < t->nops; i++) {
        put_op(f, t, &t->ops[i]);
        fputs(i + 1 < t->nops ? ",\n" : "\n", f);
    }
    fputs(" ]}\n", f);
}

int trace_write(const struct trace *t, const char *path, struct diag *d)
{
    if (check_writable(t, path, d))
        return -1;
    struct afile a;
    if (afile_open(&a, path, d) != 0)
        return -1;
    put_trace(a.f, t);
    return afile_commit(&a, d);
}

static void op_working_set(const struct op *o, double *w, double *kv)
{
    if (o->fixed_s >= 0)
        return;
    if (o->kind == OP_GEMM && (o->pass == PASS_BWD || o->pass == PASS_DGRAD || o->pass == PASS_WGRAD ||
                               o->u.gemm.transient))
        return;     /* the forward's weights, or none resident */
    if (o->kind == OP_GEMM) {
        double n = (double)o->u.gemm.k * (double)o->u.gemm.n * (double)o->u.gemm.batch;
        *w += o->u.gemm.weights != WF_NONE ? n * wfmt_bits(o->u.gemm.weights) / 8.0
                                           : dtype_bytes(o->dtype, n);
    } else if (o->kind == OP_ATTENTION) {
        /* a paged cache holds whole pages: the last one partly empty */
        double p = o->u.attn.page_size, len = (double)o->u.attn.kv_len;
        if (p > 0)
            len = ceil(len / p) * p;
        *kv += dtype_bytes(o->u.attn.kv_dtype, 2.0 * (double)o->u.attn.batch *
                                                   (double)o->u.attn.kv_heads * len *
                                                   (double)o->u.attn.head_dim);
    }
}

/* A device that runs backward passes is training: its attention K and V
 * are activations of the step (strata fit budgets them), not a cache that
 * stays resident. */
double trace_working_set(const struct trace *t, uint32_t dev, double *weight_bytes)
{
    double w = 0, kv = 0;
    int train = 0;
    for (uint32_t i = 0; i < t->nops; i++)
        if (t->ops[i].device == dev) {
            op_working_set(&t->ops[i], &w, &kv);
            train |= t->ops[i].pass != PASS_FWD;
        }
    if (weight_bytes != NULL)
        *weight_bytes = w;
    return w + (train ? 0 : kv);
}

void trace_working_sets(const struct trace *t, double *ws, double *weight_bytes)
{
    for (uint32_t d = 0; d < t->ndevices; d++)
        ws[d] = weight_bytes[d] = 0;
    double *kv = ws;            /* KV first, then the weights added in */
    unsigned char *train = calloc(t->ndevices ? t->ndevices : 1, 1);
    for (uint32_t i = 0; i < t->nops; i++) {
        double w = 0, k = 0;
        op_working_set(&t->ops[i], &w, &k);
        weight_bytes[t->ops[i].device] += w;
        kv[t->ops[i].device] += k;
        if (train != NULL && t->ops[i].pass != PASS_FWD)
            train[t->ops[i].device] = 1;
    }
    for (uint32_t d = 0; d < t->ndevices; d++) {
        if (train != NULL && train[d])
            kv[d] = 0;          /* as trace_working_set */
        ws[d] += weight_bytes[d];
    }
    free(train);
}
