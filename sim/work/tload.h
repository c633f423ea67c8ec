/* tload.h: the trace loader's state and what its parts share (private to
 * trace_load.c and the tload_*.c files).
 *
 * trace_load (trace_load.c) reads a trace in two passes over the ops: the
 * first checks every field and collects ids (deps may name later ops), the
 * second resolves deps to op indices (tload_graph.c).  The parts report an
 * error through tload_err, which fills the caller's diag with
 * "file:line: ops[i].field: message".
 */
#ifndef STRATA_TLOAD_H
#define STRATA_TLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "jsondoc.h"
#include "nameidx.h"
#include "trace.h"

struct tload {
    const struct jsondoc *doc;
    struct jsondoc_split *sp;  /* the file: top level parsed, ops one at a time */
    cJSON *ops;               /* the top level's "ops" (every op when sp->whole) */
    cJSON *cur;               /* sp->whole: ops[cur_i], a cursor for tload_elem */
    uint32_t cur_i;
    char *depids;             /* pass 1's dep ids, NUL-ended in order; "" = resolve
                               * from the op's tree (an error to report) */
    size_t ndepids, depids_cap;
    const char *file;         /* doc->name, for diagnostics */
    struct diag *d;
    struct trace *t;
    struct nameidx ids;       /* over t->ops[].id */
    struct nameidx devs;      /* over t->devices */
    char prefix[32];          /* "ops[12]" while checking op 12 */
    uint32_t gcap, gdcap;     /* capacity of t->groups, t->group_dev */
    uint32_t *ghash;          /* open-addressed: group index + 1, 0 = empty */
    uint32_t ghash_cap;       /* a power of two, > 2 * t->ngroups */
    uint32_t *gscratch;       /* device indices of the group being read */
    uint32_t *gmark;          /* per device: the last group read that listed it (gstamp) */
    uint32_t gstamp;          /* groups read so far */
    uint32_t glast_plus1;     /* the group read last, + 1 (0: none yet): the next group is
                               * most often the same one (tload_dev_group) */
    struct tload_named *named; /* the top-level "groups", in file order */
    uint32_t nnamed;
    struct nameidx namedidx;  /* over named[].name */
};

/* An entry of the top-level "groups": a device list an op's "group" may
 * name instead of listing it (tload_dev.c). */
struct tload_named {
    char name[TRACE_DEVICE_MAX];
    const cJSON *list;        /* its device list, checked when "groups" is read */
    uint32_t g_plus1;         /* its entry of t->groups + 1, once an op used it (0: not yet) */
};

/* Report code at item `at` (or at fallback_line when at is NULL) for the
 * field prefix.key.  Returns -1. */
int tload_err(struct tload *L, enum diag_code code, const cJSON *at, int fallback_line,
              const char *key, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* ops[i]'s tree: the document's own when it was parsed whole, else parsed
 * now from the text.  NULL (with L->d set) when the op is not JSON.  Give
 * it back with tload_elem_done. */
cJSON *tload_elem(struct tload *L, uint32_t i);
void tload_elem_done(struct tload *L, cJSON *o);

/* Id text of an id value (string or whole number).  Returns 0 or -1. */
int tload_id_text(struct tload *L, const cJSON *it, const char *key, char out[TRACE_ID_MAX]);

/* Wording of diagnostics: "a" or "an" before word; "a, b, c" of a list of
 * names, of the op kinds, of the dtypes and of the trace's devices, into buf. */
const char *tload_article(const char *word);
const char *tload_join(char *buf, size_t size, const char *const *names, size_t n);
const char *tload_kind_list(char *buf, size_t size);
const char *tload_dtype_list(char *buf, size_t size);
const char *tload_device_list(const struct trace *t, char *buf, size_t size);
/* "a, b, c" of n names of at most 31 bytes at base + i * stride, into buf. */
const char *tload_name_list(const char *base, size_t stride, size_t n, char *buf, size_t size);

#endif
