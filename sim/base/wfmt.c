/* wfmt.c: see wfmt.h. */
#include "wfmt.h"

#include "dtype.h"

#include <string.h>

static const struct {
    const char *name;
    double bits, ops;
    enum wfmt base;
    enum dtype mma;
} wfmt_table[WFMT_COUNT] = {
#define WFMT_ROW_(e, n, b, d, base, mma) {n, b, d, WF_##base, DT_##mma},
    WFMT_MAP(WFMT_ROW_)
#undef WFMT_ROW_
};

const char *wfmt_name(enum wfmt f)
{
    return (unsigned)f < WFMT_COUNT ? wfmt_table[f].name : "?";
}

int wfmt_from_name(const char *name, enum wfmt *out)
{
    for (unsigned i = 0; i < WFMT_COUNT; i++)
        if (ascii_ieq(name, wfmt_table[i].name)) {
            *out = (enum wfmt)i;
            return 0;
        }
    return -1;
}

double wfmt_bits(enum wfmt f)
{
    return (unsigned)f < WFMT_COUNT ? wfmt_table[f].bits : 0.0;
}

double wfmt_dequant_ops(enum wfmt f)
{
    return (unsigned)f < WFMT_COUNT ? wfmt_table[f].ops : 0.0;
}

enum wfmt wfmt_decoded(enum wfmt f)
{
    return (unsigned)f < WFMT_COUNT ? wfmt_table[f].base : WF_NONE;
}

enum dtype wfmt_matrix_type(enum wfmt f)
{
    return (unsigned)f < WFMT_COUNT ? wfmt_table[f].mma : DT_COUNT;
}
