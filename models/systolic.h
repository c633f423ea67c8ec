/* systolic.h: a systolic array of rows x cols multiply-accumulate PEs
 * running one GEMM (or an im2col-lowered convolution) fold by fold, with
 * the timing SCALE-Sim v2 uses (Samajdar et al., "A Systematic Methodology
 * for Characterizing Scalability of DNN Accelerators using SCALE-Sim",
 * ISPASS 2020; scale-sim-v2's compute/systolic_compute_{os,ws,is}).
 *
 * A layer is three numbers: ofmap pixels P (GEMM M), filters F (GEMM N)
 * and the window W = filter h * w * channels (GEMM K).  The dataflow says
 * which operand stays in the PEs and so which two dimensions are spread
 * over the array (Sr over rows, Sc over columns) and which one streams
 * through it in time (T):
 *
 *   os (output stationary):  Sr = P, Sc = F, T = W
 *   ws (weight stationary):  Sr = W, Sc = F, T = P
 *   is (input stationary):   Sr = W, Sc = P, T = F
 *
 * The operand matrix is cut into ceil(Sr/rows) x ceil(Sc/cols) folds,
 * walked column fold by column fold.  A fold occupies the whole array for
 * its demand length, partly used or not:
 *
 *   os: rows + cols + T - 2 cycles (operands skewed in, results drained)
 *   ws, is: 2 rows + cols + T - 2 (the stationary operand is shifted into
 *           the rows first, then the streaming one is skewed through)
 *
 * and folds follow each other back to back when the SRAMs keep up (the
 * CALC bandwidth mode).  The model also counts the SRAM reads and writes
 * of each operand and the mapping and compute utilisation per fold.
 */
#ifndef STRATA_SYSTOLIC_H
#define STRATA_SYSTOLIC_H

#include <stdint.h>

enum sa_dataflow { SA_OS, SA_WS, SA_IS, SA_DATAFLOW_COUNT };

/* "os" / "ws" / "is" -> 0 and *out, or -1. */
int sa_dataflow_from_name(const char *name, enum sa_dataflow *out);
const char *sa_dataflow_name(enum sa_dataflow df);

struct sa_layer {
    uint64_t ofmap_px;   /* P: output pixels (GEMM M) */
    uint64_t filters;    /* F: output channels (GEMM N) */
    uint64_t window;     /* W: filter h * w * channels (GEMM K) */
};

struct sa_result {
    uint64_t row_folds, col_folds;
    uint64_t fold_cycles;      /* demand length of one fold */
    uint64_t cycles;           /* SCALE-Sim's "Total Cycles": last cycle index */
    double macs;               /* P * F * W */
    double mapping_eff;        /* mean over folds of used PEs / all PEs */
    double compute_util;       /* mean over folds of MACs / (PEs * fold span) */
    double overall_util;       /* macs / (cycles * PEs) */
    double ifmap_reads, filter_reads, ofmap_writes; /* SRAM words */
};

/* The one fold-timing rule, shared by `strata scalesim` (sa_run_layer) and
 * the tiled model's systolic chips (models/tiled/unit.c).  A fold streams t rows
 * of the moving operand through the array after its stationary operand is
 * in place.
 *   overlap 0 (SCALE-Sim v2): each fold fills and drains on its own:
 *     os: rows + cols + t - 2 cycles; ws, is: 2 rows + cols + t - 2.
 *   overlap 1 (a double-buffered stationary operand, as a TPU MXU loads
 *     its next weights while the current ones stream): folds follow each
 *     other every max(t, rows) cycles, and the array's fill and drain,
 *     sa_fill_cycles = rows + cols - 2, is paid once per run of folds.
 * Doubles, so the tiled model can pass the rows a partial tile streams;
 * exact for whole numbers below 2^53. */
double sa_fold_cycles(double rows, double cols, enum sa_dataflow df, double t, int overlap);
double sa_fill_cycles(double rows, double cols, int overlap);

/* Walks the folds of one layer on a rows x cols array.  Returns 0, or -1
 * when a dimension is zero or the counts would overflow. */
int sa_run_layer(uint64_t rows, uint64_t cols, enum sa_dataflow df, const struct sa_layer *l,
                 struct sa_result *r);

#endif
