/* dtype.h: element types the trace format and the hardware configs name.
 *
 * Sizes are in bits so sub-byte types (int4) are exact; byte counts are
 * computed as bits * count / 8 by the caller.
 */
#ifndef STRATA_DTYPE_H
#define STRATA_DTYPE_H

#include <stdint.h>

#define DTYPE_MAP(X)            \
    X(FP64, "fp64", 64)         \
    X(FP32, "fp32", 32)         \
    X(TF32, "tf32", 32)         \
    X(FP16, "fp16", 16)         \
    X(BF16, "bf16", 16)         \
    X(FP8_E4M3, "fp8_e4m3", 8)  \
    X(FP8_E5M2, "fp8_e5m2", 8)  \
    X(INT8, "int8", 8)          \
    X(INT4, "int4", 4)

enum dtype {
#define DTYPE_ENUM_(e, name, bits) DT_##e,
    DTYPE_MAP(DTYPE_ENUM_)
#undef DTYPE_ENUM_
    DT_COUNT
};

/* Name as written in traces and configs ("bf16"), or "?" if out of range. */
const char *dtype_name(enum dtype t);
/* Storage size of one element in bits (tf32 is stored in 32 bits). */
unsigned dtype_bits(enum dtype t);
/* Parse a name; returns 0 and sets *out, or -1 if the name is unknown. */
int dtype_from_name(const char *name, enum dtype *out);
/* Equal ignoring ASCII case (names on the command line: BF16, Q4_K_M, Decode). */
int ascii_ieq(const char *a, const char *b);
/* Bytes for count elements, rounded up to whole bytes. */
double dtype_bytes(enum dtype t, double count);

#endif
