/* trace_field.h: trace format v1's schema as data (traces/README.md).
 *
 * The kind-specific fields of an op live in one table that drives parsing
 * (tload_field.c), the unknown-key check (tload_op.c) and writing
 * (trace_write.c), so the three cannot drift apart.  With it: the keys
 * every op may have, the top-level keys, the names the format gives enum
 * values, and the format's limits.  Private to sim/work's trace modules.
 */
#ifndef STRATA_TRACE_FIELD_H
#define STRATA_TRACE_FIELD_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

#define TRACE_OPS_CAP 50000000u
#define TRACE_NUMERIC_ID_CAP ((uint64_t)1 << 53) /* exact in a double */
#define TRACE_STREAM_CAP 65535u
#define TRACE_TENSORS_CAP 65535u              /* elementwise inputs / outputs */
#define TRACE_DEVICES_CAP 65536u

enum trace_ftype {
    TF_SIZE,  /* uint64_t, integer 1 .. 2^50 */
    TF_COUNT, /* uint32_t, integer 0 .. TRACE_TENSORS_CAP */
    TF_NUM,   /* double, finite >= 0 */
    TF_BOOL,  /* int, true / false */
    TF_IMPL,  /* enum attn_impl, by name */
    TF_DIR,   /* enum memcpy_dir, by name */
    TF_WFMT,  /* enum wfmt, by name */
    TF_DTYPE, /* enum dtype, by name (DT_COUNT default = the op's dtype) */
    TF_DEVICE, /* uint32_t, a device of the trace by name (default TRACE_NO_DEVICE) */
    TF_COLL,  /* enum coll_kind, by name */
    TF_ALGO,  /* enum coll_algo, by name */
    TF_GROUP  /* uint32_t, a list of devices: index into trace.groups */
};

struct trace_field {
    enum op_kind kind;
    const char *key;
    enum trace_ftype type;
    int required;
    size_t off;   /* offset of the member in struct op */
    double def;   /* default when optional and absent */
};

/* Keys every op may have, in the order they are written. */
enum {
    TF_KEY_ID, TF_KEY_NAME, TF_KEY_KIND, TF_KEY_DEVICE, TF_KEY_STREAM, TF_KEY_DTYPE, TF_KEY_DEPS,
    TF_KEY_MEASURED, TF_KEY_FIXED, TF_KEY_KERNEL, TF_KEY_PASS,
    TF_NCOMMON
};
extern const char *const trace_field_common_keys[TF_NCOMMON];
#define TF_MAX_KIND 12          /* kind-specific fields of one kind at most */
#define TF_MAX_KEYS (TF_NCOMMON + TF_MAX_KIND)

enum { TF_TOP_VERSION, TF_TOP_NAME, TF_TOP_META, TF_TOP_DEVICES, TF_TOP_OPS, TF_TOP_SYMMETRIC,
       TF_TOP_GROUPS, TF_NTOP };
extern const char *const trace_field_top_keys[TF_NTOP];

/* The table rows of one kind, in table order; returns how many. */
unsigned trace_field_of_kind(enum op_kind kind, const struct trace_field **rows);
/* How many values a field of an enum type (TF_IMPL .. TF_DTYPE, TF_COLL,
 * TF_ALGO) takes, and the name of value i as the format writes it. */
size_t trace_field_value_count(enum trace_ftype type);
const char *trace_field_value_name(enum trace_ftype type, unsigned i);
/* "fwd", "bwd", "fwd+bwd", "dgrad", "wgrad" (p < PASS_COUNT). */
const char *trace_field_pass_name(enum attn_pass p);

#endif
