/* sa_mem.h: the on-chip SRAMs of a systolic array and their DRAM side, cycle
 * by cycle, as SCALE-Sim v2 models them when the interface bandwidth is
 * set by the user (InterfaceBandwidth: USER).
 *
 * The array consumes one demand row per cycle: the ifmap, filter and ofmap
 * addresses that enter or leave the array edge in that cycle (models/
 * systolic.h gives their shapes: a fold is skewed in, streamed and drained).
 * Each operand has an SRAM of S words split into an active half, which the
 * array reads, and a prefetch half, which the DRAM interface fills at B
 * words per cycle:
 *
 *  - The ifmap and filter buffers are filled in the order the array will
 *    need the data (the operand's prefetch order).  That stream is grouped
 *    into lines of ceil(S/100) words; the active window holds the first
 *    ceil(S/2) words' worth of lines.  When a demanded address is not in the
 *    window, the window slides by the prefetch half and ceil(S/2 / B)
 *    cycles of DRAM reads are issued after the previous prefetch; the row's
 *    data arrives when that prefetch has arrived, and the array stalls until
 *    then.  The first fill happens before cycle 0, so it costs nothing.
 *  - The ofmap buffer takes the array's results; once more than half of it
 *    is full it drains half of it to DRAM, B words per cycle, and the array
 *    stalls when the buffer is full before that drain has finished.
 *
 * A row's stall is the largest of the three operands'; stalls add up, so
 * total cycles = demand rows - 1 + stall cycles.  This reproduces SCALE-Sim
 * v2's USER-mode totals exactly on the cases in traces/scalesim/
 * scalesim-reference.csv (one per dataflow).
 *
 * Addresses follow SCALE-Sim's operand matrices: ifmap pixel (h, w, c) of an
 * H x W x C input is h*W*C + w*C + c; filter element i of filter j is
 * j * window + i; ofmap element (pixel p, filter j) is p * filters + j.  A
 * GEMM M x N x K is the convolution of an M x K "image" (C = 1) with N
 * 1 x K filters.
 */
#ifndef STRATA_SA_MEM_H
#define STRATA_SA_MEM_H

#include <stdint.h>

#include "systolic.h"

struct sa_conv {
    uint64_t ifmap_h, ifmap_w, filt_h, filt_w, channels, filters, stride;
};

enum sa_operand { SA_IFMAP, SA_FILTER, SA_OFMAP, SA_OPERANDS };

struct sa_mem_config {
    uint64_t rows, cols;
    enum sa_dataflow df;
    uint64_t sram_words[SA_OPERANDS]; /* SCALE-Sim: kB * 1024 one-byte words */
    uint64_t bw;                      /* DRAM interface words per cycle */
};

struct sa_mem_result {
    uint64_t demand_rows;
    uint64_t cycles;                  /* last cycle index, as SCALE-Sim reports */
    uint64_t stall;                   /* cycles - (demand_rows - 1) */
    uint64_t stall_by[SA_OPERANDS];   /* the stall cycles, by the buffer that held the row */
    /* per operand: SRAM side (reads, or writes for the ofmap) */
    int64_t sram_start[SA_OPERANDS], sram_stop[SA_OPERANDS];
    uint64_t sram_words[SA_OPERANDS];
    /* DRAM side: words moved (whole lines of B, as issued) and the first
     * and last cycle of that traffic (the first fill is before cycle 0) */
    int64_t dram_start[SA_OPERANDS], dram_stop[SA_OPERANDS];
    uint64_t dram_words[SA_OPERANDS];
};

/* Ofmap height and width of a convolution. */
uint64_t sa_conv_ofmap_h(const struct sa_conv *v);
uint64_t sa_conv_ofmap_w(const struct sa_conv *v);

/* The work sa_mem_run does for one layer, in walk units: folds x fold
 * rows x (R + 2C) buffer steps.  One unit took about 32 ns on the
 * development machine (a 1x1 array with K = 1e9, 3e9 units, walked in
 * 97 s).  -1 when the layer's geometry is refused (as sa_mem_run would). */
double sa_mem_walk_units(const struct sa_mem_config *c, const struct sa_conv *v);
/* The default budget of walk units for a whole run: about a minute. */
#define SA_MEM_WALK_BUDGET 2e9

/* Runs one layer.  Returns 0, or -1 when a size is zero, the buffers are
 * smaller than two words, or an operand's addresses do not fit.  The
 * caller bounds the work with sa_mem_walk_units (a per-run budget). */
int sa_mem_run(const struct sa_mem_config *c, const struct sa_conv *v, struct sa_mem_result *r);

/* The same figures when the interface keeps up (SCALE-Sim's CALC mode): no
 * stalls, reads answered the cycle after they are made, and on the DRAM
 * side every operand word crosses the interface once, just before it is
 * first needed (SCALE-Sim's own CALC bandwidth estimator is not
 * reproduced).  bw and sram_words are not used.  Returns 0 or -1. */
int sa_mem_calc(const struct sa_mem_config *c, const struct sa_conv *v, struct sa_mem_result *r);

#endif
