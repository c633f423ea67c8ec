/* dtype.h: element types the trace format and the hardware configs name.
 *
 * Sizes are in bits so sub-byte types (int4) are exact.  The block-scaled
 * formats of current tensor cores carry one scale per block of elements
 * (NVFP4: an e4m3 scale per 16 e2m1 values; OCP MX formats: an e8m0 scale
 * per 32), which dtype_bytes counts: NVFP4 is 4.5 bits an element in
 * memory, MXFP4 4.25, MXFP6 6.25.
 */
#ifndef STRATA_DTYPE_H
#define STRATA_DTYPE_H

#include <stdint.h>

/* X(enum, name, bits per element, scale bits per block, elements per block) */
#define DTYPE_MAP(X)                   \
    X(FP64, "fp64", 64, 0, 1)          \
    X(FP32, "fp32", 32, 0, 1)          \
    X(TF32, "tf32", 32, 0, 1)          \
    X(FP16, "fp16", 16, 0, 1)          \
    X(BF16, "bf16", 16, 0, 1)          \
    X(FP8_E4M3, "fp8_e4m3", 8, 0, 1)   \
    X(FP8_E5M2, "fp8_e5m2", 8, 0, 1)   \
    X(INT8, "int8", 8, 0, 1)           \
    X(INT4, "int4", 4, 0, 1)           \
    X(MXFP6, "mxfp6", 6, 8, 32)        /* OCP MX: e3m2/e2m3, e8m0 scale per 32 */ \
    X(NVFP4, "nvfp4", 4, 8, 16)        /* NVIDIA: e2m1, e4m3 scale per 16 (+ fp32 per tensor) */ \
    X(MXFP4, "mxfp4", 4, 8, 32)        /* OCP MX: e2m1, e8m0 scale per 32 */

enum dtype {
#define DTYPE_ENUM_(e, name, bits, sbits, block) DT_##e,
    DTYPE_MAP(DTYPE_ENUM_)
#undef DTYPE_ENUM_
    DT_COUNT
};

/* Name as written in traces and configs ("bf16"), or "?" if out of range. */
const char *dtype_name(enum dtype t);
/* Storage size of one element in bits, without block scales (tf32 is
 * stored in 32 bits). */
unsigned dtype_bits(enum dtype t);
/* Parse a name; returns 0 and sets *out, or -1 if the name is unknown. */
int dtype_from_name(const char *name, enum dtype *out);
/* Equal ignoring ASCII case (names on the command line: BF16, Q4_K_M, Decode). */
int ascii_ieq(const char *a, const char *b);
/* Bytes of count elements, block scales included (fractional: callers sum
 * them over a tensor). */
double dtype_bytes(enum dtype t, double count);

#endif
