/* tload_field.c: reading one kind-specific field of an op (see
 * tload_field.h). */
#include "tload_field.h"

#include <stdio.h>
#include <string.h>

#include "check.h"
#include "tload_dev.h"

/* An absent field: its default, or an error when it is required. */
static int field_default(struct tload *L, const struct trace_field *f, int op_line, char *dst)
{
    if (f->required) {
        char msg[96];
        const char *kind = op_kind_name(f->kind);
        snprintf(msg, sizeof msg, "%s %s op needs \"%s\"", tload_article(kind), kind, f->key);
        return tload_err(L, DIAG_E_MISSING, NULL, op_line, f->key, "%s", msg);
    }
    switch (f->type) {
    case TF_SIZE: *(uint64_t *)(void *)dst = (uint64_t)f->def; break;
    case TF_COUNT: *(uint32_t *)(void *)dst = (uint32_t)f->def; break;
    case TF_NUM: *(double *)(void *)dst = f->def; break;
    case TF_BOOL: *(int *)(void *)dst = (int)f->def; break;
    case TF_IMPL: *(enum attn_impl *)(void *)dst = (enum attn_impl)f->def; break;
    case TF_DIR: *(enum memcpy_dir *)(void *)dst = (enum memcpy_dir)f->def; break;
    case TF_WFMT: *(enum wfmt *)(void *)dst = (enum wfmt)f->def; break;
    case TF_DTYPE: *(enum dtype *)(void *)dst = (enum dtype)f->def; break;
    case TF_DEVICE: *(uint32_t *)(void *)dst = TRACE_NO_DEVICE; break;
    case TF_COLL: *(enum coll_kind *)(void *)dst = (enum coll_kind)f->def; break;
    case TF_ALGO: *(enum coll_algo *)(void *)dst = (enum coll_algo)f->def; break;
    case TF_GROUP: *(uint32_t *)(void *)dst = 0; break;
    }
    return 0;
}

/* A field whose value is one of the names the format gives an enum's
 * values (TF_IMPL, TF_DIR, TF_WFMT, TF_DTYPE, TF_COLL, TF_ALGO). */
static int field_enum(struct tload *L, const struct trace_field *f, const cJSON *it, char *dst)
{
    const char *names[32]; /* every enum's values fit (wfmt.h asserts it for WFMT_COUNT) */
    size_t n = trace_field_value_count(f->type);
    SIM_CHECK(n <= sizeof names / sizeof names[0]);
    for (size_t i = 0; i < n; i++)
        names[i] = trace_field_value_name(f->type, (unsigned)i);
    const char *s;
    if (jsondoc_get_string(L->doc, it, L->prefix, f->key, SIZE_MAX, &s, L->d))
        return -1;
    /* names in any case, as their ecosystems spell them (FA2, H2D) */
    for (size_t i = 0; i < n; i++) {
        if (ascii_ieq(s, names[i])) {
            if (f->type == TF_IMPL)
                *(enum attn_impl *)(void *)dst = (enum attn_impl)i;
            else if (f->type == TF_DIR)
                *(enum memcpy_dir *)(void *)dst = (enum memcpy_dir)i;
            else if (f->type == TF_WFMT)
                *(enum wfmt *)(void *)dst = (enum wfmt)i;
            else if (f->type == TF_COLL)
                *(enum coll_kind *)(void *)dst = (enum coll_kind)i;
            else if (f->type == TF_ALGO)
                *(enum coll_algo *)(void *)dst = (enum coll_algo)i;
            else
                *(enum dtype *)(void *)dst = (enum dtype)i;
            return 0;
        }
    }
    char known[256], msg[400];
    snprintf(msg, sizeof msg, "unknown %s \"%.60s\" (known: %s)", f->key, s,
             tload_join(known, sizeof known, names, n));
    return tload_err(L, DIAG_E_UNKNOWN_NAME, it, 0, f->key, "%s", msg);
}

int tload_field_read(struct tload *L, const struct trace_field *f, const cJSON *it, int op_line,
                     struct op *op)
{
    char *dst = (char *)op + f->off;
    if (it == NULL)
        return field_default(L, f, op_line, dst);
    const struct jsondoc *doc = L->doc;
    switch (f->type) {
    case TF_SIZE: {
        uint64_t v;
        if (jsondoc_get_uint(doc, it, L->prefix, f->key, 1, TRACE_SIZE_CAP, &v, L->d))
            return -1;
        *(uint64_t *)(void *)dst = v;
        return 0;
    }
    case TF_COUNT: {
        uint64_t v;
        if (jsondoc_get_uint(doc, it, L->prefix, f->key, 0, TRACE_TENSORS_CAP, &v, L->d))
            return -1;
        *(uint32_t *)(void *)dst = (uint32_t)v;
        return 0;
    }
    case TF_NUM: {
        double v;
        if (jsondoc_get_number(doc, it, L->prefix, f->key, 0.0, TRACE_NUM_CAP, &v, L->d))
            return -1;
        *(double *)(void *)dst = v;
        return 0;
    }
    case TF_BOOL: {
        int v;
        if (jsondoc_get_bool(doc, it, L->prefix, f->key, &v, L->d))
            return -1;
        *(int *)(void *)dst = v;
        return 0;
    }
    case TF_DEVICE: {
        const char *s;
        if (jsondoc_get_string(doc, it, L->prefix, f->key, SIZE_MAX, &s, L->d))
            return -1;
        return tload_dev_find(L, it, f->key, s, (uint32_t *)(void *)dst);
    }
    case TF_GROUP:
        return tload_dev_group(L, it, (uint32_t *)(void *)dst);
    case TF_IMPL:
    case TF_DIR:
    case TF_WFMT:
    case TF_DTYPE:
    case TF_COLL:
    case TF_ALGO:
        return field_enum(L, f, it, dst);
    }
    return 0;
}
