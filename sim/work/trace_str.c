/* trace_str.c: a trace's string arena (trace.h): the ids, names and kernels
 * of its ops, NUL-terminated one after the other in t->str, each op holding
 * offsets.  A million-op trace held 224 bytes of fixed char arrays per op,
 * most of it zero padding; here an op's strings cost their length, a name
 * that is its op's id costs nothing, and a name or kernel met among the
 * last few (TRACE_STR_SEEN slots, by hash) is stored once.
 *
 * Limits: the arena holds at most 4 GiB (uint32_t offsets); more aborts. */
#include "trace.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nameidx.h"

/* s points into t's arena (pointers compared as integers: s may be any string). */
static int str_inside(const struct trace *t, const char *s)
{
    uintptr_t p = (uintptr_t)s, b = (uintptr_t)t->str;
    return t->str != NULL && p >= b && p < b + t->str_len;
}

/* Append s[0..n) and a NUL; the offset.  s may lie in t->str. */
static uint32_t str_append(struct trace *t, const char *s, size_t n)
{
    if (n == 0)
        return 0;
    if (t->str == NULL) {
        t->str_cap = 256;
        t->str = sim_xcalloc(t->str_cap, 1);
        t->str_len = 1;                 /* offset 0: "" */
    }
    size_t need = t->str_len + n + 1;
    if (need > (size_t)UINT32_MAX)
        sim_check_fail(__FILE__, __LINE__, "trace strings <= 4 GiB", "the arena is full");
    if (need > t->str_cap) {
        int inside = str_inside(t, s);
        size_t from = inside ? (size_t)(s - t->str) : 0;
        size_t cap = t->str_cap;
        while (cap < need)
            cap *= 2;
        t->str = sim_xrealloc(t->str, cap);
        t->str_cap = cap;
        if (inside)
            s = t->str + from;
    }
    uint32_t at = (uint32_t)t->str_len;
    memmove(t->str + at, s, n);
    t->str[at + n] = '\0';
    t->str_len = need;
    return at;
}

/* The offset of s cut to max-1 bytes: s itself when it is one of t's
 * strings and needs no cut, else a new copy. */
static uint32_t str_put(struct trace *t, const char *s, size_t max, size_t *len)
{
    size_t n = strnlen(s, max - 1);
    *len = n;
    if (n == 0)
        return 0;
    if (str_inside(t, s) && s[n] == '\0')
        return (uint32_t)(s - t->str);
    return str_append(t, s, n);
}

static unsigned str_hash(const char *s, size_t n)
{
    return (unsigned)(nameidx_hash(s, n) % TRACE_STR_SEEN);
}

/* The offset of s cut to max-1 bytes, shared with the last string of the
 * same hash when it is the same. */
static uint32_t str_intern(struct trace *t, const char *s, size_t max)
{
    size_t n = strnlen(s, max - 1);
    if (n == 0)
        return 0;
    unsigned h = str_hash(s, n);
    uint32_t at = t->str_seen[h];
    if (at != 0 && strncmp(t->str + at, s, n) == 0 && t->str[at + n] == '\0')
        return at;
    size_t len;
    at = str_put(t, s, max, &len);
    t->str_seen[h] = at;
    return at;
}

void trace_op_set_id(struct trace *t, uint32_t i, const char *s)
{
    size_t n;
    t->ops[i].id_at = str_put(t, s, TRACE_ID_MAX, &n);
}

void trace_op_set_name(struct trace *t, uint32_t i, const char *s)
{
    struct op *o = &t->ops[i];
    const char *id = op_id(t, o);
    size_t n = strnlen(s, TRACE_NAME_MAX - 1);
    if (strncmp(id, s, n) == 0 && id[n] == '\0')
        o->name_at = o->id_at;
    else
        o->name_at = str_intern(t, s, TRACE_NAME_MAX);
}

void trace_op_set_kernel(struct trace *t, uint32_t i, const char *s)
{
    t->ops[i].kernel_at = str_intern(t, s, TRACE_KERNEL_MAX);
}
