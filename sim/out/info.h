/* info.h: figures derived from a hardware config (`strata info`): peak
 * FLOP/s per dtype and pipe, bandwidth per memory level, and the ridge point
 * (FLOP per byte where a kernel turns from memory- to compute-bound) of each
 * level for each matrix dtype. */
#ifndef STRATA_INFO_H
#define STRATA_INFO_H

#include <stdio.h>

#include "cfg.h"
#include "diag.h"

struct info_out {
    double matrix_flops[DT_COUNT];      /* peak, FLOP/s */
    double sparse_flops[DT_COUNT];      /* peak with 2:4 sparsity, FLOP/s (0: none) */
    double vector_flops[DT_COUNT];      /* peak, FLOP/s */
    double bw[HW_MAX_LEVELS];           /* peak bandwidth per level (config order), bytes/s (0 = none) */
    double bw_achievable[HW_MAX_LEVELS];/* after calibrated efficiencies, bytes/s */
    double ridge[DT_COUNT][HW_MAX_LEVELS]; /* matrix peak / bw, FLOP/byte */
};

void info_derive(const struct hw_config *c, struct info_out *o);
void info_print(const struct hw_config *c, const struct info_out *o, FILE *f);
/* A system's devices, other nodes and links (after info_print of its chip). */
struct hw_system;
void info_print_system(const struct hw_system *s, FILE *f);
/* The derived figures as a cJSON object (void * keeps cJSON out of this
 * header); the caller owns it (cJSON_Delete, or add it to a tree). */
void *info_json_tree(const struct hw_config *c, const struct info_out *o);
/* One number per memory level of c (c->nlevels values of v, times
 * scale), keyed by the level's name: a cJSON object the caller owns. */
void *info_json_levels(const struct hw_config *c, const double *v, double scale);
int info_json(const struct hw_config *c, const struct info_out *o, const char *path, struct diag *d);

#endif
