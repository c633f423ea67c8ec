/* units.c: see units.h. */
#include "units.h"

#include <stdlib.h>
#include <string.h>

#include "numfmt.h"

static const struct unit {
    const char *name;
    double scale;
    enum qty_kind kind;
} units[] = {
    {"B/s", 1, QK_BANDWIDTH},      {"kB/s", 1e3, QK_BANDWIDTH},  {"KB/s", 1e3, QK_BANDWIDTH},
    {"MB/s", 1e6, QK_BANDWIDTH},   {"GB/s", 1e9, QK_BANDWIDTH},  {"TB/s", 1e12, QK_BANDWIDTH},
    {"KiB/s", 1024.0, QK_BANDWIDTH}, {"MiB/s", 1048576.0, QK_BANDWIDTH},
    {"GiB/s", 1073741824.0, QK_BANDWIDTH}, {"TiB/s", 1099511627776.0, QK_BANDWIDTH},
    {"GBps", 1e9, QK_BANDWIDTH},   {"TBps", 1e12, QK_BANDWIDTH},
    {"B/clk", 1, QK_PER_CYCLE},    {"B/cycle", 1, QK_PER_CYCLE},
    {"B", 1, QK_BYTES},            {"kB", 1e3, QK_BYTES},        {"KB", 1e3, QK_BYTES},
    {"MB", 1e6, QK_BYTES},         {"GB", 1e9, QK_BYTES},        {"TB", 1e12, QK_BYTES},
    {"KiB", 1024.0, QK_BYTES},     {"MiB", 1048576.0, QK_BYTES}, {"GiB", 1073741824.0, QK_BYTES},
    {"TiB", 1099511627776.0, QK_BYTES},
    {"Hz", 1, QK_FREQ},            {"kHz", 1e3, QK_FREQ},        {"KHz", 1e3, QK_FREQ},
    {"MHz", 1e6, QK_FREQ},         {"GHz", 1e9, QK_FREQ},
    {"ps", 1e-12, QK_TIME},        {"ns", 1e-9, QK_TIME},        {"us", 1e-6, QK_TIME},
    {"ms", 1e-3, QK_TIME},         {"s", 1, QK_TIME},
    {"GFLOPS", 1e9, QK_RATE},      {"TFLOPS", 1e12, QK_RATE},    {"PFLOPS", 1e15, QK_RATE},
    {"TOPS", 1e12, QK_RATE},       {"POPS", 1e15, QK_RATE},
};

static const char *const whats[QK_COUNT] = {
#define QTY_WHAT_(e, what, eg) [e] = what,
    QTY_KIND_MAP(QTY_WHAT_)
#undef QTY_WHAT_
};

const char *qty_kind_what(enum qty_kind k)
{
    return (unsigned)k < QK_COUNT ? whats[k] : "?";
}

/* Length of the number at the start of s: up to the first letter that is
 * not an exponent marker followed by a digit or sign. */
static size_t number_len(const char *s)
{
    size_t n = 0, len = strlen(s);
    while (n < len) {
        char ch = s[n];
        if ((ch >= '0' && ch <= '9') || ch == '.' || ch == '+' || ch == '-') {
            n++;
            continue;
        }
        if ((ch == 'e' || ch == 'E') && n > 0 && n + 1 < len &&
            ((s[n + 1] >= '0' && s[n + 1] <= '9') || s[n + 1] == '+' || s[n + 1] == '-')) {
            n++;
            continue;
        }
        break;
    }
    return n;
}

const char *qty_unit_text(const char *s)
{
    return s + number_len(s);
}

int qty_parse(const char *s, struct qty *q)
{
    if (s == NULL || q == NULL)
        return -1;
    size_t len = strlen(s);
    if (len == 0 || len > 64)
        return -1;
    size_t n = number_len(s);
    char num[72];
    memcpy(num, s, n);
    num[n] = '\0';
    double x;
    if (n == 0 || num_parse(num, &x) != 0)
        return -1;
    const char *u = s + n;
    if (*u == '\0') {
        *q = (struct qty){.si = x, .mantissa = x, .scale = 1, .kind = QK_NONE};
        return 0;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(u, units[i].name) == 0) {
            *q = (struct qty){.si = x * units[i].scale, .mantissa = x, .scale = units[i].scale,
                              .kind = units[i].kind};
            return 0;
        }
    return -1;
}
