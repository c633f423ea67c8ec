/* calibrate.h: fit config values to measurements (`strata calibrate`,
 * `strata validate --leave-one-chip-out`).
 *
 * The parameters are config keys as --set names them, or a software
 * stack's numbers as stack.KEY (stack_get_value: host.launch_gap_us,
 * gemm.issue_efficiency.wgmma, ...), fitted over every row that names it; the rows are those of
 * a validate CSV (validate.h) that the filters select.  The residual of a row
 * is log(predicted / measured), so a row that is 10% high weighs what one
 * 10% low does; GSL's trust-region nonlinear least squares
 * (gsl_multifit_nlinear, finite-difference Jacobian) minimises their sum of
 * squares, every evaluation a real simulation of every row.  The
 * uncertainty of each value is the square root of its diagonal entry of
 * (J^T J)^-1 s^2 with s^2 = chi^2 / (rows - parameters); a prediction's
 * error bar propagates that covariance through its row of J.
 */
#ifndef STRATA_CALIB_H
#define STRATA_CALIB_H

#include "cfg.h"
#include "diag.h"
#include "stack.h"
#include "validate.h"

#define CALIB_MAX_PARAMS 8

struct calib_param {
    char key[96];               /* as given ("efficiency.dram" is expanded) */
    char full_key[128];         /* with its unit suffix, as the config has it */
    double start;               /* the config's value */
    double value, sigma;        /* fitted, and its 1-sigma uncertainty (NAN: not determined) */
};

struct calib_opts {
    struct validate_opts vo;    /* data, configs, root and the row filters */
    const char *start_config;   /* the config file the start values are read from (NULL:
                                 * stack keys only) */
    const struct stack *start_stack;    /* the stack stack.KEY start values are read from */
    const struct cfg_sets *base;/* overrides kept fixed (may be NULL) */
    unsigned nparams;
    struct calib_param p[CALIB_MAX_PARAMS];
    unsigned max_iter;          /* 0: 50 */
};

struct calib_result {
    unsigned nrows, evals;
    int converged;              /* the driver met a tolerance */
    double rms_start, rms_fit;  /* rms of the log residuals */
    struct validate_result start, fit;  /* the rows as predicted before and after */
    double *row_sigma;          /* per fitted row: relative 1-sigma of the prediction */
};

/* Expands the shorthands (efficiency.dram, efficiency.dram_rw,
 * efficiency.dram_latency, efficiency.matrix, efficiency.vector,
 * launch) and checks a list "k1,k2"; fills o->p[].key. */
int calib_parse_keys(struct calib_opts *o, const char *list, struct diag *d);
/* Fits; o->p[].value and .sigma filled.  The result owns rows. */
int calib_fit(struct calib_opts *o, struct calib_result *r, struct diag *d);
void calib_result_free(struct calib_result *r);
/* The overrides of the fitted values (base ones first). */
int calib_sets(const struct calib_opts *o, struct cfg_sets *out, struct diag *d);
/* Writes the overlay file (cfg.h) with the values, uncertainties and rows. */
int calib_write_overlay(const struct calib_opts *o, const struct calib_result *r,
                        const char *chip, const char *path, struct diag *d);

#endif
