/* trace_load.c: trace_load and trace_load_text (trace.h): load and validate a trace (format
 * v1, schema in traces/README.md).
 *
 * Loading is two passes over the ops: the first checks every field and
 * collects ids (deps may name later ops; tload_op.c), the second resolves
 * deps to op indices (tload_graph.c).  Kahn's algorithm then orders the
 * ops, taking the ready op with the lowest file index first so the order
 * is the same on every run.  The top-level "meta" object is free-form and
 * ignored except for meta.tokens.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tload.h"
#include "tload_dev.h"
#include "tload_graph.h"
#include "tload_op.h"
#include "trace.h"
#include "trace_field.h"

/* The version first, so a newer trace is not reported as unknown keys. */
static int top_version(struct tload *L, const cJSON *root, int root_line)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, "strata_trace");
    if (it == NULL)
        return tload_err(L, DIAG_E_MISSING, NULL, root_line, "strata_trace",
                         "missing \"strata_trace\": 1 (is this a strata trace? see "
                         "traces/README.md)");
    if (!cJSON_IsNumber(it))
        return tload_err(L, DIAG_E_TYPE, it, 0, "strata_trace",
                         "must be the format version number 1, got %s", jsondoc_type_name(it));
    if (it->valuedouble != 1.0) {
        char msg[128];
        snprintf(msg, sizeof msg, "trace format version %.15g is not supported (this strata "
                 "reads version 1)", it->valuedouble);
        return tload_err(L, DIAG_E_UNSUPPORTED, it, 0, "strata_trace", "%s", msg);
    }
    return 0;
}

/* The top-level keys: each known, given once, into items. */
static int top_keys(struct tload *L, const cJSON *root, const cJSON **items)
{
    const struct jsondoc *doc = L->doc;
    for (const cJSON *c = root->child; c != NULL; c = c->next) {
        const char *key = c->string ? c->string : "";
        size_t k = 0;
        while (k < TF_NTOP && strcmp(key, trace_field_top_keys[k]) != 0)
            k++;
        char msg[256], keys[128];
        if (k == TF_NTOP) {
            snprintf(msg, sizeof msg, "unknown key \"%.40s\" (allowed: %s)", key,
                     tload_join(keys, sizeof keys, trace_field_top_keys, TF_NTOP));
            char field[128];
            return diag_set(L->d, DIAG_E_UNKNOWN_KEY, L->file, jsondoc_line(doc, c),
                            jsondoc_field(field, sizeof field, "", key), "%s", msg);
        }
        if (items[k] != NULL) {
            snprintf(msg, sizeof msg, "key \"%s\" is given twice (first on line %d)", key,
                     jsondoc_line(doc, items[k]));
            return tload_err(L, DIAG_E_DUPLICATE, c, 0, key, "%s", msg);
        }
        items[k] = c;
    }
    return 0;
}

/* name, meta, devices, groups and symmetric. */
static int top_fields(struct tload *L, const cJSON **items)
{
    const struct jsondoc *doc = L->doc;
    struct trace *t = L->t;
    const cJSON *it;
    if ((it = items[TF_TOP_NAME]) != NULL) {
        const char *s;
        if (jsondoc_get_string(doc, it, "", "name", TRACE_NAME_MAX - 1, &s, L->d))
            return -1;
        memcpy(t->name, s, strlen(s) + 1);
    }
    /* meta is free-form provenance, except for the number meta.tokens. */
    if ((it = items[TF_TOP_META]) != NULL && cJSON_IsObject(it)) {
        if (jsondoc_check_unique(doc, it, "meta", L->d))
            return -1;
        const cJSON *tok = cJSON_GetObjectItemCaseSensitive(it, "tokens");
        if (tok != NULL &&
            jsondoc_get_number(doc, tok, "meta", "tokens", 0.0, HUGE_VAL, &t->tokens, L->d))
            return -1;
    }
    if (tload_dev_list(L, items[TF_TOP_DEVICES]) || tload_dev_named_list(L, items[TF_TOP_GROUPS]))
        return -1;
    if ((it = items[TF_TOP_SYMMETRIC]) != NULL &&
        jsondoc_get_bool(doc, it, "", "symmetric", &t->symmetric, L->d))
        return -1;
    return 0;
}

/* Pass 1 over "ops": t->ops and t->ndeps. */
static int ops_pass1(struct tload *L, const cJSON *ops, int root_line)
{
    struct trace *t = L->t;
    L->prefix[0] = '\0';
    if (ops == NULL)
        return tload_err(L, DIAG_E_MISSING, NULL, root_line, "ops",
                         "missing \"ops\": [...], the list of operators");
    if (!cJSON_IsArray(ops))
        return tload_err(L, DIAG_E_TYPE, ops, 0, "ops", "must be a list of ops [{...}, ...], got %s",
                         jsondoc_type_name(ops));
    /* the same item, as the tree owns it (tload_elem walks it) */
    L->ops = cJSON_GetObjectItemCaseSensitive(L->sp->top.root, "ops");
    size_t n = L->sp->whole ? 0 : L->sp->count;
    for (const cJSON *c = ops->child; c != NULL && n <= TRACE_OPS_CAP; c = c->next)
        n++;
    if (n == 0)
        return tload_err(L, DIAG_E_RANGE, ops, 0, "ops", "must list at least one op");
    if (n > TRACE_OPS_CAP)
        return tload_err(L, DIAG_E_RANGE, ops, 0, "ops", "lists more than 50000000 ops");

    t->nops = (uint32_t)n;
    t->ops = sim_xcalloc(n, sizeof *t->ops);
    nameidx_init_at(&L->ids, n, &t->str, &t->ops[0].id_at, sizeof *t->ops);
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        cJSON *o = tload_elem(L, i);
        if (o == NULL)
            return -1;
        int rc = tload_op_parse(L, o, i, &total);
        if (rc == 0)
            tload_graph_keep_deps(L, o);
        tload_elem_done(L, o);
        if (rc)
            return -1;
    }
    t->ndeps = (uint32_t)total;
    return 0;
}

static int build(struct tload *L)
{
    const struct jsondoc *doc = L->doc;
    const cJSON *root = doc->root;
    int root_line = jsondoc_line(doc, root);
    L->prefix[0] = '\0';
    if (!cJSON_IsObject(root))
        return tload_err(L, DIAG_E_TYPE, root, 0, "",
                         "a trace must be a JSON object {\"strata_trace\": 1, ...}, got %s",
                         jsondoc_type_name(root));
    const cJSON *items[TF_NTOP] = {0};
    if (top_version(L, root, root_line) || top_keys(L, root, items) || top_fields(L, items) ||
        ops_pass1(L, items[TF_TOP_OPS], root_line) || tload_graph_resolve(L) ||
        tload_graph_colls(L))
        return -1;
    return tload_graph_order(L);
}

/* The trace of a split document named path (freed here). */
static int load_split(struct jsondoc_split *sp, const char *path, struct trace *out,
                      struct diag *d)
{
    struct jsondoc *docp = &sp->top;
    struct trace t;
    memset(&t, 0, sizeof t);
    snprintf(t.path, sizeof t.path, "%s", path);
    struct tload L;
    memset(&L, 0, sizeof L);
    L.doc = docp;
    L.sp = sp;
    L.file = docp->name;
    L.d = d;
    L.t = &t;
    int rc = build(&L);
    nameidx_free(&L.ids);
    nameidx_free(&L.devs);
    nameidx_free(&L.namedidx);
    free(L.named);
    free(L.ghash);
    free(L.gscratch);
    free(L.gmark);
    free(L.depids);
    jsondoc_split_free(sp);
    if (rc != 0) {
        trace_free(&t);
        return -1;
    }
    *out = t;
    return 0;
}

int trace_load(const char *path, struct trace *out, struct diag *d)
{
    struct jsondoc_split sp;
    if (jsondoc_load_split(path, "ops", &sp, d)) {
        jsondoc_split_free(&sp);
        return -1;
    }
    return load_split(&sp, path, out, d);
}

int trace_load_text(const char *text, const char *name, struct trace *out, struct diag *d)
{
    struct jsondoc_split sp;
    if (jsondoc_split_string(text, name, "ops", &sp, d)) {
        jsondoc_split_free(&sp);
        return -1;
    }
    return load_split(&sp, name, out, d);
}
