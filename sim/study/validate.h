/* validate.h: compare predictions with measurements (`strata validate`).
 * See validate.c and docs/validation.md. */
#ifndef STRATA_VALIDATE_H
#define STRATA_VALIDATE_H

#include <stdint.h>

#include "diag.h"

struct cfg_sets;
struct validate_opts {
    const char *data;       /* measurements CSV */
    const char *configs;    /* directory of <config>.yaml */
    const char *root;       /* directory model paths in specs are relative to */
    /* for calibrate and --leave-one-chip-out (all optional): */
    const struct cfg_sets *sets;    /* overrides applied to every config */
    const char *only_config;        /* run only the rows of this config column value */
    const char *skip_config;        /* run all rows but this config's */
    const char *ids;                /* comma-separated ids or prefixes ending in '*' */
    /* for --leave-one-stack-out: only the rows whose spec names a stack, run
     * with this stack instead of their own; a row it cannot run (another
     * chip family, a generation it gives no value for) is skipped */
    const char *stack_override;
    const char *only_stack;         /* run only the rows whose spec names this stack (calibrate --stack) */
};

/* One compared row; err = predicted / measured - 1. */
struct val_row {
    char id[48];
    char group[40];
    char metric[48];
    char unit[24];
    double measured, predicted, err;    /* err = predicted / measured - 1 */
    char config[64];
    char spec[320];
    char stack[64];         /* the stack its spec names ("" if none) */
};

struct validate_result {
    struct val_row *rows;
    uint32_t nrows;
    uint32_t skipped;       /* rows without config/spec */
    uint32_t refused;       /* rows the stack_override cannot run */
    uint64_t events;        /* engine events over all rows */
};

struct validate_group {
    char name[40];
    uint32_t count;
    double median_abs_err;  /* |predicted/measured - 1| */
    double worst_abs_err;
};

/* Does id match list ("UBENCH-001,UBENCH-00*": ids, or prefixes ending in
 * '*'; NULL or "" matches every id)? */
int validate_id_match(const char *list, const char *id);
int validate_run(const struct validate_opts *o, struct validate_result *r, struct diag *d);
void validate_free(struct validate_result *r);
/* Per group (id prefix) statistics, every group in the order its first row
 * comes: an array the caller frees, its length in *ngroups. */
struct validate_group *validate_groups(const struct validate_result *r, int *ngroups);
/* JSON report of rows and groups. */
int validate_json(const struct validate_result *r, const char *path, struct diag *d);

#endif
