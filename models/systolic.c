/* systolic.c: see systolic.h. */
#include "systolic.h"

#include <string.h>

static const char *const df_names[SA_DATAFLOW_COUNT] = {"os", "ws", "is"};

int sa_dataflow_from_name(const char *name, enum sa_dataflow *out)
{
    for (int i = 0; i < SA_DATAFLOW_COUNT; i++)
        if (strcmp(name, df_names[i]) == 0) {
            *out = (enum sa_dataflow)i;
            return 0;
        }
    return -1;
}

const char *sa_dataflow_name(enum sa_dataflow df)
{
    return (unsigned)df < SA_DATAFLOW_COUNT ? df_names[df] : "?";
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

/* Elements of fold f when n elements are cut into pieces of size `size`. */
static uint64_t used_in_fold(uint64_t n, uint64_t size, uint64_t f)
{
    uint64_t left = n - f * size;
    return left < size ? left : size;
}

double sa_fold_cycles(double rows, double cols, enum sa_dataflow df, double t, int overlap)
{
    if (overlap)
        return t > rows ? t : rows;
    return (df == SA_OS ? rows : 2 * rows) + cols + t - 2;
}

double sa_fill_cycles(double rows, double cols, int overlap)
{
    return overlap ? rows + cols - 2.0 : 0.0;
}

int sa_run_layer(uint64_t rows, uint64_t cols, enum sa_dataflow df, const struct sa_layer *l,
                 struct sa_result *r)
{
    memset(r, 0, sizeof *r);
    const uint64_t lim = 1ull << 32;
    if (rows == 0 || cols == 0 || l->ofmap_px == 0 || l->filters == 0 || l->window == 0 ||
        rows > lim || cols > lim || l->ofmap_px > lim || l->filters > lim || l->window > lim ||
        (unsigned)df >= SA_DATAFLOW_COUNT)
        return -1;
    uint64_t sr, sc, t;
    switch (df) {
    case SA_OS: sr = l->ofmap_px; sc = l->filters; t = l->window; break;
    case SA_WS: sr = l->window; sc = l->filters; t = l->ofmap_px; break;
    case SA_IS:
    case SA_DATAFLOW_COUNT:
    default: sr = l->window; sc = l->ofmap_px; t = l->filters; break;
    }
    r->row_folds = ceil_div(sr, rows);
    r->col_folds = ceil_div(sc, cols);
    /* fill + stream + drain of one fold; ws and is first shift the
     * stationary operand down the rows */
    r->fold_cycles = (uint64_t)sa_fold_cycles((double)rows, (double)cols, df, (double)t, 0);
    uint64_t folds = r->row_folds * r->col_folds;
    if (folds > lim || r->fold_cycles > lim)
        return -1;
    /* folds run back to back; SCALE-Sim reports the index of the last cycle */
    r->cycles = folds * r->fold_cycles - 1;
    r->macs = (double)l->ofmap_px * (double)l->filters * (double)l->window;
    double pes = (double)rows * (double)cols;
    r->overall_util = r->macs / ((double)r->cycles * pes);

    /* Per-fold figures depend on the rows used (row fold) times the columns
     * used (column fold), so their sums over all folds factor into a sum
     * over row folds times a sum over column folds. */
    double sum_rows = 0, sum_cols = 0;
    for (uint64_t f = 0; f < r->row_folds; f++)
        sum_rows += (double)used_in_fold(sr, rows, f);
    for (uint64_t f = 0; f < r->col_folds; f++)
        sum_cols += (double)used_in_fold(sc, cols, f);
    double nf = (double)folds;
    double used_pes = sum_rows * sum_cols; /* summed over folds */
    r->mapping_eff = used_pes / (pes * nf);
    /* a fold's MACs over the PEs x cycles from its first demand to the
     * last column draining (fold length + cols - 1), as SCALE-Sim counts it */
    r->compute_util = used_pes * (double)t / (pes * (double)(r->fold_cycles + cols - 1) * nf);
    /* SRAM traffic: the streaming operand is read T times per used row or
     * column of every fold; the stationary one once per used PE */
    double rf = (double)r->row_folds, cf = (double)r->col_folds, tt = (double)t;
    switch (df) {
    case SA_OS:  /* ifmap rows along the array rows, filters along the columns */
        r->ifmap_reads = tt * sum_rows * cf;
        r->filter_reads = tt * sum_cols * rf;
        r->ofmap_writes = used_pes;
        break;
    case SA_WS:  /* weights stationary; ifmap streams into the rows */
        r->ifmap_reads = tt * sum_rows * cf;
        r->filter_reads = used_pes;
        r->ofmap_writes = tt * sum_cols * rf;
        break;
    case SA_IS:
    case SA_DATAFLOW_COUNT:
    default:     /* ifmap stationary; filters stream into the rows */
        r->ifmap_reads = used_pes;
        r->filter_reads = tt * sum_rows * cf;
        r->ofmap_writes = tt * sum_cols * rf;
        break;
    }
    return 0;
}
