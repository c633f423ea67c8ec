/* dtype.c: see dtype.h. */
#include "dtype.h"

#include <string.h>

static const struct {
    const char *name;
    unsigned bits;
} dtype_table[DT_COUNT] = {
#define DTYPE_ROW_(e, name, bits) {name, bits},
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

int dtype_from_name(const char *name, enum dtype *out)
{
    for (unsigned i = 0; i < DT_COUNT; i++) {
        if (strcmp(name, dtype_table[i].name) == 0) {
            *out = (enum dtype)i;
            return 0;
        }
    }
    return -1;
}

double dtype_bytes(enum dtype t, double count)
{
    return count * (double)dtype_bits(t) / 8.0;
}
