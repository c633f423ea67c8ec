/* units.h: quantities with units, as users type them on the command line
 * ("4.8TB/s", "100MiB", "1.98GHz", "650ns").
 *
 * qty_parse() reads a strict decimal number (num_is_decimal) followed,
 * with no space, by an optional unit, and gives the value in SI base units
 * (bytes/s, bytes, Hz, s) with its kind, so a caller can refuse a
 * capacity where a bandwidth belongs.  Decimal prefixes are powers of 1000
 * (KB = kB = 1e3), binary ones powers of 1024 (KiB).  Unit names are
 * matched case-sensitively except the prefix k/K, because MB and Mb, ms and
 * Ms, differ. */
#ifndef STRATA_UNITS_H
#define STRATA_UNITS_H

#define QTY_KIND_MAP(X)                                                      \
    X(QK_NONE, "a plain number", "")                                         \
    X(QK_BANDWIDTH, "a bandwidth", "4.8TB/s, 3350GB/s, 900GiB/s")            \
    X(QK_PER_CYCLE, "bytes per cycle", "128B/clk")                          \
    X(QK_BYTES, "a size", "100MiB, 80GB, 228KiB")                            \
    X(QK_FREQ, "a frequency", "1.98GHz, 1830MHz")                            \
    X(QK_TIME, "a time", "650ns, 2.5us")                                     \
    X(QK_RATE, "an operation rate", "989TFLOPS, 1.98PFLOPS")

enum qty_kind {
#define QTY_KIND_ENUM_(e, what, eg) e,
    QTY_KIND_MAP(QTY_KIND_ENUM_)
#undef QTY_KIND_ENUM_
    QK_COUNT
};

struct qty {
    double si;            /* value in bytes/s, bytes, Hz, s, FLOP/s (QK_NONE: the number) */
    double mantissa;      /* the number as typed */
    double scale;         /* si = mantissa * scale */
    enum qty_kind kind;
};

/* 0 and *q filled, or -1 if s is not a number with a known unit. */
int qty_parse(const char *s, struct qty *q);
/* The unit part of s as qty_parse splits it ("TB/s" of "4.8TB/s"; "" if none). */
const char *qty_unit_text(const char *s);
/* "a bandwidth", "a size", ... */
const char *qty_kind_what(enum qty_kind k);

#endif
