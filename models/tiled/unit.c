/* unit.c: the tiled model's compute unit (an SM, or a systolic array).
 *
 * What it models.  The peak rate of one unit's matrix and vector pipes per
 * type, scaled by the config's pipe efficiencies; which pipe type an op's
 * dtype runs in (vector math in fp32, matrix types falling back to the
 * closest one the chip has, SIMT GEMMs on the vector pipe when there is no
 * matrix pipe for the type); and the matrix-pipe work of a tile on a
 * systolic array, folds and fill included (models/systolic.c's timing
 * rule), expressed as FLOPs at the array's peak so the pipe server's rate
 * stays the peak.  Units: FLOP/s, FLOPs.
 */
#include <math.h>

#include "systolic.h"
#include "tiled.h"

double unit_matrix_rate(const struct hw_config *c, enum dtype t)
{
    return c->matrix_flops_per_cycle[t] * c->clock_hz * c->eff_matrix_pipe;
}

double unit_vector_rate(const struct hw_config *c, enum dtype t)
{
    return c->vector_flops_per_cycle[t] * c->clock_hz * c->eff_vector_pipe;
}

/* Energy (docs/energy.md): a FLOP of type t on the matrix or the vector
 * pipe costs the pipe's energy per busy cycle over its FLOPs per cycle of
 * that type; a special-function result as much as an fp32 FMA.  0 on a
 * config without power, or a type the pipe does not run. */
double unit_matrix_pj(const struct hw_config *c, enum dtype t)
{
    double f = c->matrix_flops_per_cycle[t];
    return c->has_power && f > 0 ? c->matrix_pj_per_cycle / f : 0.0;
}

double unit_vector_pj(const struct hw_config *c, enum dtype t)
{
    double f = c->vector_flops_per_cycle[t];
    return c->has_power && f > 0 ? c->vector_pj_per_cycle / f : 0.0;
}

double unit_sfu_pj(const struct hw_config *c)
{
    return 2.0 * unit_vector_pj(c, DT_FP32);
}

/* Vector math runs in fp32 for 32-bit-and-narrower types (as PyTorch does). */
enum dtype unit_vector_type(const struct hw_config *c, enum dtype t)
{
    if (t == DT_FP64 && c->vector_flops_per_cycle[DT_FP64] > 0)
        return DT_FP64;
    return DT_FP32;
}

/* Matrix pipe type: fall back to the closest supported one. */
enum dtype unit_matrix_type(const struct hw_config *c, enum dtype t)
{
    static const enum dtype fallback[] = {DT_BF16, DT_FP16, DT_TF32, DT_FP32};
    if (c->matrix_flops_per_cycle[t] > 0)
        return t;
    for (size_t i = 0; i < sizeof fallback / sizeof fallback[0]; i++)
        if (c->matrix_flops_per_cycle[fallback[i]] > 0)
            return fallback[i];
    return t;
}

/* Matrix-pipe work of one tile step on a systolic unit (the `systolic`
 * block): a (rows x k) x (k x n) product.  Weight stationary unless the
 * chip says os (below): the k x n operand is held in the array, cut into
 * ceil(k/R) x ceil(n/C) folds; each streams the `rows` rows through it.  The timing of a fold is
 * models/systolic.c's rule (the one `strata scalesim` uses) with the
 * weights double-buffered, as the TPU's MXU loads the next fold's while the
 * current one streams: max(rows, R) cycles a fold.  Returned as FLOPs at
 * the array's peak (2 R C per cycle), so short or narrow products cost what
 * the idle PEs and weight loads cost.  On a GPU (no array): 2 rows k n. */
double unit_systolic_flops(const struct hw_config *c, double rows, double k, double n)
{
    if (c->sa_rows == 0)
        return 2.0 * rows * k * n;
    double R = c->sa_rows, C = c->sa_cols;
    /* output stationary (systolic.dataflow: os): the rows x n outputs are
     * cut into ceil(rows/R) x ceil(n/C) blocks held in the accumulators,
     * each streaming its k, one a cycle, while the last block drains (the
     * same fold rule, overlapped: max(k, R) cycles); no weights are
     * loaded, so a short product costs the idle rows of its block */
    if (c->sa_os)
        return 2.0 * R * C * ceil(rows / R) * ceil(n / C) * sa_fold_cycles(R, C, SA_OS, k, 1);
    double folds = ceil(k / R) * ceil(n / C);
    return 2.0 * R * C * folds * sa_fold_cycles(R, C, SA_WS, rows, 1);
}

/* The array's fill and drain once per tile (the same rule), as FLOPs. */
double unit_systolic_fill_flops(const struct hw_config *c)
{
    /* os: the accumulators are double-buffered, so a tile's drain runs
     * under the next tile's accumulation, as ws's weight loads do */
    return c->sa_rows == 0 || c->sa_os ? 0
                           : 2.0 * c->sa_rows * (double)c->sa_cols *
                                 sa_fill_cycles(c->sa_rows, c->sa_cols, 1);
}

/* fp32/fp64 GEMMs on a chip without a matrix pipe for that type run as
 * SIMT kernels on the vector pipe (FFMA), e.g. fp32 with TF32 disabled. */
int unit_gemm_simt(const struct hw_config *c, enum dtype t)
{
    return (c->matrix_flops_per_cycle[t] <= 0 && c->vector_flops_per_cycle[t] > 0) ||
           c->matrix_flops_per_cycle[unit_matrix_type(c, t)] <= 0; /* no matrix pipe for it at all */
}

/* The vector-pipe type a SIMT GEMM computes in: its own, else fp32, else
 * any the chip has (an int8-only NPU running a bf16 trace). */
enum dtype unit_simt_type(const struct hw_config *c, enum dtype t)
{
    if (c->vector_flops_per_cycle[t] > 0)
        return t;
    if (c->vector_flops_per_cycle[DT_FP32] > 0)
        return DT_FP32;
    for (unsigned i = 0; i < DT_COUNT; i++)
        if (c->vector_flops_per_cycle[i] > 0)
            return (enum dtype)i;
    return t;
}
