/* trace_write.c: trace_write (trace.h): a trace as format v1, written
 * atomically (temp file + rename), after cheap checks that the loader will
 * accept what is written.  The kind-specific fields come from the field
 * table (trace_field.h), in its order.  meta is written back as
 * {"tokens": N} only (when tokens > 0). */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afile.h"
#include "trace.h"
#include "trace_field.h"
#include "utf8.h"

/* A group of more devices than this is written once, in the top-level
 * "groups", and named by its ops ("group": "g3"): a data-parallel
 * all-reduce over 1,024 GPUs lists 10 KB of names, and every replica's
 * every bucket listed them all (70% of a 485 MB trace).  Smaller groups
 * stay in the op, where a reader sees them. */
#define TRACE_WRITE_INLINE_GROUP 8

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

/* A device list: ["gpu0", "gpu1"]. */
static void put_group_list(FILE *f, const struct trace *t, const struct trace_group *g)
{
    fputc('[', f);
    for (uint32_t k = 0; k < g->n; k++) {
        if (k)
            fputs(", ", f);
        put_string(f, t->devices[t->group_dev[g->off + k]], TRACE_DEVICE_MAX);
    }
    fputc(']', f);
}

static void put_op(FILE *f, const struct trace *t, const struct op *op)
{
    fputs("  {\"id\": ", f);
    put_string(f, op_id(t, op), TRACE_ID_MAX);
    fputs(", \"name\": ", f);
    put_string(f, op_name(t, op), TRACE_NAME_MAX);
    fprintf(f, ", \"kind\": \"%s\", \"device\": ", op_kind_name(op->kind));
    put_string(f, t->devices[op->device], TRACE_DEVICE_MAX);
    fprintf(f, ", \"stream\": %" PRIu32 ", \"dtype\": \"%s\", \"deps\": [", op->stream,
            dtype_name(op->dtype));
    for (uint32_t j = 0; j < op->ndeps; j++) {
        if (j)
            fputs(", ", f);
        put_string(f, op_id(t, &t->ops[t->deps[op->deps_off + j]]), TRACE_ID_MAX);
    }
    fputc(']', f);
    const struct trace_field *rows[TF_MAX_KIND];
    unsigned nrows = trace_field_of_kind(op->kind, rows);
    for (unsigned r = 0; r < nrows; r++) {
        const char *src = (const char *)op + rows[r]->off;
        if (rows[r]->type == TF_DEVICE &&
            ((op->kind == OP_MEMCPY && op->u.copy.dir != MEMCPY_P2P) ||
             *(const uint32_t *)(const void *)src >= t->ndevices))
            continue;           /* not given, or not a p2p copy's */
        if (rows[r]->off == offsetof(struct op, transient) && !op->transient)
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
        case TF_SIZE: fprintf(f, "%" PRIu64, *(const uint64_t *)(const void *)src); break;
        case TF_COUNT: fprintf(f, "%" PRIu32, *(const uint32_t *)(const void *)src); break;
        case TF_NUM: put_double(f, *(const double *)(const void *)src); break;
        case TF_BOOL: fputs(*(const int *)(const void *)src ? "true" : "false", f); break;
        case TF_IMPL:
            fprintf(f, "\"%s\"", op_attn_impl_name(*(const enum attn_impl *)(const void *)src));
            break;
        case TF_DIR:
            fprintf(f, "\"%s\"", trace_field_value_name(TF_DIR, *(const enum memcpy_dir *)(const void *)src));
            break;
        case TF_WFMT:
            fprintf(f, "\"%s\"", wfmt_name(*(const enum wfmt *)(const void *)src));
            break;
        case TF_DTYPE:
            fprintf(f, "\"%s\"", dtype_name(*(const enum dtype *)(const void *)src));
            break;
        case TF_DEVICE: {
            put_string(f, t->devices[*(const uint32_t *)(const void *)src], TRACE_DEVICE_MAX);
            break;
        }
        case TF_COLL:
            fprintf(f, "\"%s\"", coll_kind_name(*(const enum coll_kind *)(const void *)src));
            break;
        case TF_ALGO:
            fprintf(f, "\"%s\"", coll_algo_name(*(const enum coll_algo *)(const void *)src));
            break;
        case TF_GROUP: {
            uint32_t gi = *(const uint32_t *)(const void *)src;
            if (t->groups[gi].n > TRACE_WRITE_INLINE_GROUP)
                fprintf(f, "\"g%" PRIu32 "\"", gi);
            else
                put_group_list(f, t, &t->groups[gi]);
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
        fprintf(f, ", \"pass\": \"%s\"", trace_field_pass_name(op->pass));
    if (op_kernel(t, op)[0] != '\0') {
        fputs(", \"kernel\": ", f);
        put_string(f, op_kernel(t, op), TRACE_KERNEL_MAX);
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
            op->device >= t->ndevices || op_id(t, op)[0] == '\0' ||
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
        const struct trace_field *rows[TF_MAX_KIND];
        unsigned nrows = trace_field_of_kind(op->kind, rows);
        for (unsigned r = 0; r < nrows; r++) {
            const char *src = (const char *)op + rows[r]->off;
            int ok = 1;
            if (rows[r]->type == TF_SIZE) {
                uint64_t v = *(const uint64_t *)(const void *)src;
                ok = v >= 1 && v <= TRACE_SIZE_CAP;
            } else if (rows[r]->type == TF_COUNT) {
                ok = *(const uint32_t *)(const void *)src <= TRACE_TENSORS_CAP;
            } else if (rows[r]->type == TF_NUM) {
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
    fputs("],\n", f);
    int named = 0;
    for (uint32_t g = 0; g < t->ngroups; g++) {
        if (t->groups[g].n <= TRACE_WRITE_INLINE_GROUP)
            continue;
        fprintf(f, "%s  \"g%" PRIu32 "\": ", named++ ? ",\n" : " \"groups\": {\n", g);
        put_group_list(f, t, &t->groups[g]);
    }
    if (named)
        fputs("\n },\n", f);
    fputs(" \"ops\": [\n", f);
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
