/* tload_op.c: the trace loader's pass 1 over one op (see tload_op.h): the
 * id and kind first (the kind decides which keys are allowed), every key
 * checked against the common keys and the kind's rows of the field table,
 * the common fields, the kind's fields, then the checks across fields. */
#include "tload_op.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tload_dev.h"
#include "tload_field.h"
#include "trace_field.h"

/* One op's keys: the kind's table rows, and the item of every key given
 * (common keys first, then the rows in order; NULL when absent). */
struct opkeys {
    int line;                                /* the op's line */
    const struct trace_field *rows[TF_MAX_KIND];
    unsigned nrows;
    const cJSON *items[TF_MAX_KEYS];
};

/* The item of the kind's field named key, or NULL. */
static const cJSON *kind_item(const struct opkeys *K, const char *key)
{
    const cJSON *it = NULL;
    for (unsigned r = 0; r < K->nrows; r++)
        if (strcmp(K->rows[r]->key, key) == 0)
            it = K->items[TF_NCOMMON + r];
    return it;
}

/* id and kind first: the kind decides which keys are allowed. */
static int op_id_kind(struct tload *L, const cJSON *o, uint32_t i, int line)
{
    struct trace *t = L->t;
    struct op *op = &t->ops[i];
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, "id");
    if (it == NULL)
        return tload_err(L, DIAG_E_MISSING, NULL, line, "id", "every op needs an \"id\"");
    char id[TRACE_ID_MAX];
    if (tload_id_text(L, it, "id", id))
        return -1;
    trace_op_set_id(t, i, id);
    int64_t prev = nameidx_add(&L->ids, i);
    if (prev >= 0)
        return tload_err(L, DIAG_E_DUPLICATE, it, 0, "id",
                         "id \"%s\" is already used by ops[%" PRId64 "] (line %d)", id, prev,
                         t->ops[prev].line);
    it = cJSON_GetObjectItemCaseSensitive(o, "kind");
    char known[256], msg[400];
    if (it == NULL) {
        snprintf(msg, sizeof msg, "every op needs a \"kind\" (one of %s)",
                 tload_kind_list(known, sizeof known));
        return tload_err(L, DIAG_E_MISSING, NULL, line, "kind", "%s", msg);
    }
    const char *s;
    if (jsondoc_get_string(L->doc, it, L->prefix, "kind", SIZE_MAX, &s, L->d))
        return -1;
    if (op_kind_from_name(s, &op->kind)) {
        snprintf(msg, sizeof msg, "unknown kind \"%.60s\" (known: %s)", s,
                 tload_kind_list(known, sizeof known));
        return tload_err(L, DIAG_E_UNKNOWN_NAME, it, 0, "kind", "%s", msg);
    }
    return 0;
}

/* Every key must be a common key or one of this kind's, given once. */
static int op_keys(struct tload *L, const cJSON *o, const struct op *op, struct opkeys *K)
{
    const struct jsondoc *doc = L->doc;
    K->nrows = trace_field_of_kind(op->kind, K->rows);
    char msg[400];
    for (const cJSON *c = o->child; c != NULL; c = c->next) {
        const char *key = c->string ? c->string : "";
        unsigned k = 0;
        /* the first byte before the call (most of a big trace's load was
         * these comparisons) */
        while (k < TF_NCOMMON && (key[0] != trace_field_common_keys[k][0] ||
                                  strcmp(key, trace_field_common_keys[k]) != 0))
            k++;
        if (k == TF_NCOMMON) {
            unsigned r = 0;
            while (r < K->nrows && (key[0] != K->rows[r]->key[0] || strcmp(key, K->rows[r]->key) != 0))
                r++;
            if (r == K->nrows) {
                const char *allowed[TF_MAX_KEYS];
                for (unsigned a = 0; a < TF_NCOMMON; a++)
                    allowed[a] = trace_field_common_keys[a];
                for (unsigned a = 0; a < K->nrows; a++)
                    allowed[TF_NCOMMON + a] = K->rows[a]->key;
                char keys[256];
                const char *kind = op_kind_name(op->kind);
                snprintf(msg, sizeof msg, "unknown key \"%.40s\" for %s %s op (allowed: %s)", key,
                         tload_article(kind), kind,
                         tload_join(keys, sizeof keys, allowed, TF_NCOMMON + K->nrows));
                char field[128];
                return diag_set(L->d, DIAG_E_UNKNOWN_KEY, L->file, jsondoc_line(doc, c),
                                jsondoc_field(field, sizeof field, L->prefix, key), "%s", msg);
            }
            k = TF_NCOMMON + r;
        }
        if (K->items[k] != NULL) {
            snprintf(msg, sizeof msg, "key \"%s\" is given twice (first on line %d)", key,
                     jsondoc_line(doc, K->items[k]));
            return tload_err(L, DIAG_E_DUPLICATE, c, 0, key, "%s", msg);
        }
        K->items[k] = c;
    }
    return 0;
}

/* name, device, stream and dtype. */
static int op_common(struct tload *L, struct op *op, const struct opkeys *K)
{
    const struct jsondoc *doc = L->doc;
    const cJSON *it;
    const char *s;
    if ((it = K->items[TF_KEY_NAME]) != NULL) {
        if (jsondoc_get_string(doc, it, L->prefix, "name", TRACE_NAME_MAX - 1, &s, L->d))
            return -1;
        trace_op_set_name(L->t, (uint32_t)(op - L->t->ops), s);
    } else {
        op->name_at = op->id_at;
    }

    op->device = 0;
    if ((it = K->items[TF_KEY_DEVICE]) != NULL) {
        if (jsondoc_get_string(doc, it, L->prefix, "device", SIZE_MAX, &s, L->d))
            return -1;
        if (tload_dev_find(L, it, "device", s, &op->device))
            return -1;
    }

    uint64_t v = 0;
    if ((it = K->items[TF_KEY_STREAM]) != NULL &&
        jsondoc_get_uint(doc, it, L->prefix, "stream", 0, TRACE_STREAM_CAP, &v, L->d))
        return -1;
    op->stream = (uint32_t)v;

    char known[256], msg[400];
    const char *kind = op_kind_name(op->kind);
    if ((it = K->items[TF_KEY_DTYPE]) != NULL) {
        if (jsondoc_get_string(doc, it, L->prefix, "dtype", SIZE_MAX, &s, L->d))
            return -1;
        if (dtype_from_name(s, &op->dtype)) {
            snprintf(msg, sizeof msg, "unknown dtype \"%.40s\" (known: %s)", s,
                     tload_dtype_list(known, sizeof known));
            return tload_err(L, DIAG_E_UNKNOWN_NAME, it, 0, "dtype", "%s", msg);
        }
    } else if (op->kind == OP_MEMCPY || op->kind == OP_GENERIC) {
        op->dtype = DT_INT8;
    } else if (op->kind == OP_COLLECTIVE) {
        op->dtype = DT_FP32;        /* nccl-tests' default type */
    } else {
        snprintf(msg, sizeof msg, "%s %s op needs a \"dtype\" (one of %s)", tload_article(kind),
                 kind, tload_dtype_list(known, sizeof known));
        return tload_err(L, DIAG_E_MISSING, NULL, K->line, "dtype", "%s", msg);
    }
    return 0;
}

/* "pass", by name; dgrad and wgrad for a GEMM only. */
static int op_pass(struct tload *L, struct op *op, const cJSON *it)
{
    const char *s;
    if (jsondoc_get_string(L->doc, it, L->prefix, "pass", SIZE_MAX, &s, L->d))
        return -1;
    int p;
    for (p = 0; p < PASS_COUNT; p++)
        if (ascii_ieq(s, trace_field_pass_name((enum attn_pass)p)))
            break;
    if (p == PASS_COUNT) {
        char msg[400];
        snprintf(msg, sizeof msg, "unknown pass \"%.40s\" (known: fwd, bwd, fwd+bwd, dgrad, wgrad)", s);
        return tload_err(L, DIAG_E_UNKNOWN_NAME, it, 0, "pass", "%s", msg);
    }
    const char *kind = op_kind_name(op->kind);
    if (p != PASS_FWD && (op->kind == OP_MEMCPY || op->kind == OP_GENERIC ||
                          op->kind == OP_REDUCTION || op->kind == OP_COLLECTIVE))
        return tload_err(L, DIAG_E_RANGE, it, 0, "pass", "a %s op has no backward pass here", kind);
    if ((p == PASS_DGRAD || p == PASS_WGRAD) && op->kind != OP_GEMM)
        return tload_err(L, DIAG_E_RANGE, it, 0, "pass", "dgrad and wgrad are a GEMM's two backward "
                         "products; %s %s op's backward is \"bwd\"", tload_article(kind), kind);
    op->pass = (enum attn_pass)p;
    return 0;
}

/* measured_s, fixed_s, pass and kernel. */
static int op_timing(struct tload *L, struct op *op, const struct opkeys *K)
{
    const struct jsondoc *doc = L->doc;
    const cJSON *it;
    op->measured_s = -1.0;
    if ((it = K->items[TF_KEY_MEASURED]) != NULL &&
        jsondoc_get_number(doc, it, L->prefix, "measured_s", 0.0, TRACE_MAX_OP_S, &op->measured_s,
                           L->d))
        return -1;
    op->fixed_s = -1.0;
    if ((it = K->items[TF_KEY_FIXED]) != NULL &&
        jsondoc_get_number(doc, it, L->prefix, "fixed_s", 0.0, TRACE_MAX_OP_S, &op->fixed_s, L->d))
        return -1;
    op->pass = PASS_FWD;
    if ((it = K->items[TF_KEY_PASS]) != NULL && op_pass(L, op, it))
        return -1;
    op->kernel_at = 0;
    if ((it = K->items[TF_KEY_KERNEL]) != NULL) {
        const char *s;
        if (jsondoc_get_string(doc, it, L->prefix, "kernel", TRACE_KERNEL_MAX - 1, &s, L->d))
            return -1;
        trace_op_set_kernel(L->t, (uint32_t)(op - L->t->ops), s);
    }
    return 0;
}

/* deps: only counted here; resolved once every id is known. */
static int op_deps(struct tload *L, struct op *op, const cJSON *it, uint64_t *total_deps)
{
    op->ndeps = 0;
    if (it == NULL)
        return 0;
    if (!cJSON_IsArray(it))
        return tload_err(L, DIAG_E_TYPE, it, 0, "deps",
                         "must be a list of op ids like [\"a\", \"b\"], got %s",
                         jsondoc_type_name(it));
    uint64_t n = 0;
    for (const cJSON *c = it->child; c != NULL; c = c->next)
        n++;
    *total_deps += n;
    if (*total_deps >= UINT32_MAX)
        return tload_err(L, DIAG_E_RANGE, it, 0, "deps",
                         "the trace has more than 2^32 dependencies in all");
    op->ndeps = (uint32_t)n;
    return 0;
}

static int check_copy(struct tload *L, struct op *op, const struct opkeys *K)
{
    int line = K->line;
    const cJSON *src = kind_item(K, "src_device"), *dst = kind_item(K, "dst_device");
    if (op->u.copy.src != TRACE_NO_DEVICE) {
        if (K->items[TF_KEY_DEVICE] != NULL && op->device != op->u.copy.src)
            return tload_err(L, DIAG_E_RANGE, src, line, "src_device",
                             "src_device and device name different devices");
        op->device = op->u.copy.src;   /* the source's copy engine does the copy */
    }
    if (op->u.copy.dir == MEMCPY_P2P && op->u.copy.peer == TRACE_NO_DEVICE)
        return tload_err(L, DIAG_E_MISSING, NULL, line, "dst_device",
                         "a p2p copy needs \"dst_device\", the device it writes");
    if (op->u.copy.dir == MEMCPY_P2P && op->u.copy.peer == op->device)
        return tload_err(L, DIAG_E_RANGE, dst, line, "dst_device",
                         "a p2p copy to its own device; use direction \"d2d\"");
    if (op->u.copy.dir != MEMCPY_P2P && (op->u.copy.peer != TRACE_NO_DEVICE ||
                                         op->u.copy.src != TRACE_NO_DEVICE))
        return tload_err(L, DIAG_E_RANGE, dst ? dst : src, line, dst ? "dst_device" : "src_device",
                         "src_device and dst_device are for a copy with direction \"p2p\"");
    return 0;
}

static int check_attn(struct tload *L, struct op *op, const struct opkeys *K)
{
    int line = K->line;
    /* Causal queries are the last q_len of the kv_len keys. */
    if (op->u.attn.causal && op->u.attn.q_len > op->u.attn.kv_len)
        return tload_err(L, DIAG_E_RANGE, NULL, line, "q_len",
                         "causal attention needs q_len <= kv_len (the queries are among the "
                         "keys), got q_len %" PRIu64 " > kv_len %" PRIu64,
                         op->u.attn.q_len, op->u.attn.kv_len);
    if (op->u.attn.kv_dtype == DT_COUNT)
        op->u.attn.kv_dtype = op->dtype;
    if (op->u.attn.page_size > 0 && op->pass != PASS_FWD)
        return tload_err(L, DIAG_E_UNSUPPORTED, NULL, line, "page_size",
                         "a paged K/V cache is for inference (pass \"fwd\"): a training "
                         "step's K and V are activations, not a cache");
    if (op->u.attn.kv_heads == 0) {
        op->u.attn.kv_heads = op->u.attn.heads;
    } else if (op->u.attn.heads % op->u.attn.kv_heads != 0) {
        char msg[400];
        snprintf(msg, sizeof msg, "kv_heads (%" PRIu64 ") must divide heads (%" PRIu64 ")",
                 op->u.attn.kv_heads, op->u.attn.heads);
        return tload_err(L, DIAG_E_RANGE, kind_item(K, "kv_heads"), line, "kv_heads", "%s", msg);
    }
    return 0;
}

/* The algorithm fits the collective, as NCCL runs them. */
static int check_algo(struct tload *L, const struct op *op, int line)
{
    if (op->u.coll.algo == COLL_DIRECT && op->u.coll.what != COLL_ALL_TO_ALL &&
        op->u.coll.what != COLL_ALL_GATHER)
        return tload_err(L, DIAG_E_RANGE, NULL, line, "algo",
                         "\"direct\" is an algorithm of all_to_all and all_gather only");
    if (op->u.coll.algo == COLL_TREE && op->u.coll.what != COLL_ALL_REDUCE)
        return tload_err(L, DIAG_E_RANGE, NULL, line, "algo",
                         "\"tree\" is an algorithm of all_reduce only");
    if (op->u.coll.algo == COLL_NVLS && op->u.coll.what != COLL_ALL_REDUCE &&
        op->u.coll.what != COLL_ALL_GATHER && op->u.coll.what != COLL_REDUCE_SCATTER)
        return tload_err(L, DIAG_E_RANGE, NULL, line, "algo",
                         "\"nvls\" (NVLink SHARP) is an algorithm of all_reduce, all_gather and "
                         "reduce_scatter only");
    if (op->u.coll.algo == COLL_RING && op->u.coll.what == COLL_ALL_TO_ALL)
        return tload_err(L, DIAG_E_RANGE, NULL, line, "algo",
                         "all_to_all runs \"direct\" (or \"auto\"), not \"ring\"");
    return 0;
}

static int check_coll(struct tload *L, const struct op *op, const struct opkeys *K)
{
    const struct trace *t = L->t;
    int line = K->line;
    char msg[400];
    if (op->fixed_s >= 0)
        return tload_err(L, DIAG_E_RANGE, K->items[TF_KEY_FIXED], line, "fixed_s",
                         "a collective's time is simulated on the system's links; a step of "
                         "known length is a generic op with fixed_s");
    int rank = trace_group_rank(t, op->u.coll.group, op->device);
    if (rank < 0) {
        snprintf(msg, sizeof msg, "the op runs on device \"%s\", which is not in its group",
                 t->devices[op->device]);
        return tload_err(L, DIAG_E_RANGE, NULL, line, "group", "%s", msg);
    }
    if (op->u.coll.what == COLL_SEND_RECV && t->groups[op->u.coll.group].n != 2)
        return tload_err(L, DIAG_E_RANGE, NULL, line, "group",
                         "a send_recv is between two devices (the sender, \"root\", default "
                         "the first, and the receiver), got a group of %u",
                         t->groups[op->u.coll.group].n);
    if (op->u.coll.root != TRACE_NO_DEVICE) {
        if (op->u.coll.what != COLL_BROADCAST && op->u.coll.what != COLL_SEND_RECV)
            return tload_err(L, DIAG_E_RANGE, NULL, line, "root",
                             "only a broadcast or a send_recv has a root (the sender)");
        if (trace_group_rank(t, op->u.coll.group, op->u.coll.root) < 0)
            return tload_err(L, DIAG_E_RANGE, NULL, line, "root",
                             "the root \"%s\" is not in the group", t->devices[op->u.coll.root]);
    }
    if (check_algo(L, op, line))
        return -1;
    uint32_t gn = t->groups[op->u.coll.group].n;
    if (op->u.coll.what != COLL_ALL_REDUCE && op->u.coll.what != COLL_BROADCAST &&
        op->u.coll.what != COLL_SEND_RECV && op->u.coll.bytes % gn != 0) {
        const char *what = coll_kind_name(op->u.coll.what);
        snprintf(msg, sizeof msg, "%s %s over %u devices needs bytes divisible by %u "
                 "(each rank's share), got %" PRIu64, tload_article(what), what, gn, gn,
                 op->u.coll.bytes);
        return tload_err(L, DIAG_E_RANGE, NULL, line, "bytes", "%s", msg);
    }
    return 0;
}

/* Checks across fields. */
static int op_checks(struct tload *L, struct op *op, const struct opkeys *K)
{
    int line = K->line;
    if (op->kind == OP_MEMCPY && check_copy(L, op, K))
        return -1;
    if (op->kind == OP_ATTENTION) {
        if (check_attn(L, op, K))
            return -1;
    } else if (op->kind == OP_ELEMENTWISE) {
        if (op->u.ew.inputs + op->u.ew.outputs == 0)
            return tload_err(L, DIAG_E_RANGE, NULL, line, "inputs",
                             "an elementwise op must read or write at least one tensor "
                             "(inputs + outputs >= 1)");
    } else if (op->kind == OP_COLLECTIVE) {
        if (check_coll(L, op, K))
            return -1;
    } else if (op->kind == OP_GENERIC) {
        if (op->u.gen.flops == 0.0 && op->u.gen.bytes == 0.0 && op->fixed_s < 0)
            return tload_err(L, DIAG_E_RANGE, NULL, line, "flops",
                             "a generic op needs flops > 0 or bytes > 0 (both are 0), or a fixed_s");
    }
    const char *field = NULL;
    char msg[400];
    if (trace_op_sizes_ok(op, &field, msg, sizeof msg) != 0)
        return tload_err(L, DIAG_E_RANGE, NULL, line, field, "%s", msg);
    return 0;
}

/* "ops[i]" into L->prefix: per op, so by hand (an snprintf here was a
 * twentieth of a million-op load). */
static void op_prefix(struct tload *L, uint32_t i)
{
    char digits[10];
    unsigned nd = 0;
    do {
        digits[nd++] = (char)('0' + i % 10);
        i /= 10;
    } while (i > 0);
    char *p = L->prefix;
    memcpy(p, "ops[", 4);
    p += 4;
    while (nd > 0)
        *p++ = digits[--nd];
    p[0] = ']';
    p[1] = '\0';
}

int tload_op_parse(struct tload *L, const cJSON *o, uint32_t i, uint64_t *total_deps)
{
    struct op *op = &L->t->ops[i];
    op_prefix(L, i);
    struct opkeys K;
    memset(&K, 0, sizeof K);
    /* the skim knows where each op starts: no scan of its lines unless a
     * diagnostic needs one */
    K.line = L->sp->whole ? jsondoc_line(L->doc, o) : L->sp->line[i];
    op->line = K.line;
    if (!cJSON_IsObject(o))
        return tload_err(L, DIAG_E_TYPE, o, 0, "", "each op must be an object {...}, got %s",
                         jsondoc_type_name(o));
    if (op_id_kind(L, o, i, K.line) || op_keys(L, o, op, &K) || op_common(L, op, &K) ||
        op_timing(L, op, &K) || op_deps(L, op, K.items[TF_KEY_DEPS], total_deps))
        return -1;
    for (unsigned r = 0; r < K.nrows; r++)
        if (tload_field_read(L, K.rows[r], K.items[TF_NCOMMON + r], K.line, op))
            return -1;
    return op_checks(L, op, &K);
}
