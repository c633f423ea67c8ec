/* valgroups.h: a validation CSV's groups against their bounds, for the
 * test_validation_* suites (header-only, as util.h). */
#ifndef STRATA_TEST_VALGROUPS_H
#define STRATA_TEST_VALGROUPS_H

#include <stdio.h>
#include <string.h>

#include "serve_val.h"
#include "test.h"
#include "validate.h"

/* A group's bound on its median and worst |predicted/measured - 1|. */
struct tu_bound {
    const char *group;
    double median, worst;
};

/* Runs the rows of path (a serving CSV as serve runs, docs/validation.md):
 * nrows of them in exactly nb groups, each group within its bound. */
static inline void tu_check_groups(const char *path, unsigned nrows, const struct tu_bound *bb, int nb)
{
    struct diag d;
    struct validate_result r;
    struct validate_opts o = {.data = path, .configs = "configs", .root = "."};
    memset(&d, 0, sizeof d);
    int rc = serve_val_is(path) ? serve_val_run(&o, &r, NULL, &d) : validate_run(&o, &r, &d);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0) {
        diag_print(&d, stderr);
        return;
    }
    CHECK_EQ_INT(r.nrows, nrows);
    int ng, seen = 0;
    struct validate_group *g = validate_groups(&r, &ng);
    CHECK_EQ_INT(ng, nb);
    for (int q = 0; q < ng; q++)
        for (int k = 0; k < nb; k++)
            if (strcmp(g[q].name, bb[k].group) == 0) {
                printf("%-22s %3u rows  median %5.1f%% (<= %.0f%%)  worst %5.1f%% (<= %.0f%%)\n", g[q].name,
                       g[q].count, 100 * g[q].median_abs_err, 100 * bb[k].median, 100 * g[q].worst_abs_err,
                       100 * bb[k].worst);
                CHECK(g[q].median_abs_err <= bb[k].median && g[q].worst_abs_err <= bb[k].worst);
                seen++;
            }
    CHECK_EQ_INT(seen, nb);
    free(g);
    validate_free(&r);
}

#endif
