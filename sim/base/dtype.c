/* dtype.c: see dtype.h. */
#include "dtype.h"

#include <string.h>

static const struct {
    const char *name;
    unsigned bits, scale_bits, block;
} dtype_table[DT_COUNT] = {
#define DTYPE_ROW_(e, name, bits, sbits, block) {name, bits, sbits, block},
    DTYPE_MAP(DTYPE_ROW_)
#undef DTYPE_ROW_
};

const char *dtype_name(enum dtype t)
{
    return (unsigned)t < DT_COUNT ? dtype_table[t].name : "?";
}

unsigned dtype_bits(enum dtype t)
{
    return (unsigned)t < DT_COUNT ? dtype_table[t].bits : 0;
}

int ascii_ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        unsigned char x = (unsigned char)*a, y = (unsigned char)*b;
        if (x >= 'A' && x <= 'Z')
            x = (unsigned char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z')
            y = (unsigned char)(y - 'A' + 'a');
        if (x != y)
            return 0;
    }
    return *a == *b;
}

/* The spellings PyTorch, NumPy and the spec sheets use for the same types
 * ("fp8" is e4m3, the format inference and the FP8 peak figures use). */
static const struct { const char *alias, *name; } dtype_alias[] = {
    {"bfloat16", "bf16"},        {"float16", "fp16"},          {"half", "fp16"},
    {"float32", "fp32"},         {"float", "fp32"},            {"float64", "fp64"},
    {"double", "fp64"},          {"fp8", "fp8_e4m3"},          {"e4m3", "fp8_e4m3"},
    {"float8_e4m3fn", "fp8_e4m3"}, {"e5m2", "fp8_e5m2"},       {"float8_e5m2", "fp8_e5m2"},
    {"fp4", "nvfp4"},            {"fp6", "mxfp6"},             {"mxfp6_e3m2", "mxfp6"},
    {"mxfp6_e2m3", "mxfp6"},     {"mxfp4_e2m1", "mxfp4"},      {"nvfp4_e2m1", "nvfp4"},
};

int dtype_from_name(const char *name, enum dtype *out)
{
    /* the names themselves first (no alias is a name): the common case */
    for (unsigned i = 0; i < DT_COUNT; i++) {
        if (ascii_ieq(name, dtype_table[i].name)) {
            *out = (enum dtype)i;
            return 0;
        }
    }
    for (size_t k = 0; k < sizeof dtype_alias / sizeof dtype_alias[0]; k++)
        if (ascii_ieq(name, dtype_alias[k].alias))
            name = dtype_alias[k].name;
    for (unsigned i = 0; i < DT_COUNT; i++) {
        if (ascii_ieq(name, dtype_table[i].name)) {
            *out = (enum dtype)i;
            return 0;
        }
    }
    return -1;
}

double dtype_bytes(enum dtype t, double count)
{
    if ((unsigned)t >= DT_COUNT)
        return 0;
    double bits = (double)dtype_table[t].bits +
                  (double)dtype_table[t].scale_bits / (double)dtype_table[t].block;
    return count * bits / 8.0;
}
