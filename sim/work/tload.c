/* tload.c: the trace loader's diagnostics, its access to one op's tree and
 * the reading of op ids (see tload.h). */
#include "tload.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "trace_field.h"

int tload_err(struct tload *L, enum diag_code code, const cJSON *at, int fallback_line,
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

cJSON *tload_elem(struct tload *L, uint32_t i)
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

void tload_elem_done(struct tload *L, cJSON *o)
{
    if (!L->sp->whole)
        jsondoc_split_done(L->sp, o);
}

int tload_id_text(struct tload *L, const cJSON *it, const char *key, char out[TRACE_ID_MAX])
{
    if (cJSON_IsNumber(it)) {
        uint64_t v;
        if (jsondoc_get_uint(L->doc, it, L->prefix, key, 0, TRACE_NUMERIC_ID_CAP, &v, L->d))
            return -1;
        snprintf(out, TRACE_ID_MAX, "%" PRIu64, v);
        return 0;
    }
    if (!cJSON_IsString(it))
        return tload_err(L, DIAG_E_TYPE, it, 0, key,
                         "must be an op id (a string or a non-negative integer), got %s",
                         jsondoc_type_name(it));
    const char *s;
    if (jsondoc_get_string(L->doc, it, L->prefix, key, TRACE_ID_MAX - 1, &s, L->d))
        return -1;
    if (s[0] == '\0')
        return tload_err(L, DIAG_E_RANGE, it, 0, key, "must not be empty");
    memcpy(out, s, strlen(s) + 1);
    return 0;
}

const char *tload_article(const char *word)
{
    return strchr("aeiou", word[0]) != NULL && word[0] != '\0' ? "an" : "a";
}

const char *tload_join(char *buf, size_t size, const char *const *names, size_t n)
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

const char *tload_kind_list(char *buf, size_t size)
{
    const char *names[OP_KIND_COUNT];
    for (unsigned i = 0; i < OP_KIND_COUNT; i++)
        names[i] = op_kind_name((enum op_kind)i);
    return tload_join(buf, size, names, OP_KIND_COUNT);
}

const char *tload_dtype_list(char *buf, size_t size)
{
    const char *names[DT_COUNT];
    for (unsigned i = 0; i < DT_COUNT; i++)
        names[i] = dtype_name((enum dtype)i);
    return tload_join(buf, size, names, DT_COUNT);
}

const char *tload_name_list(const char *base, size_t stride, size_t n, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used + 40 < size; i++) {
        int w = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", base + i * stride);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (used + 40 >= size && size > 4)
        snprintf(buf + size - 5, 5, "...");
    return buf;
}

const char *tload_device_list(const struct trace *t, char *buf, size_t size)
{
    return tload_name_list(t->devices[0], sizeof *t->devices, t->ndevices, buf, size);
}
