/* info.h: figures derived from a hardware config (`strata info`): peak
 * FLOP/s per dtype and pipe, bandwidth per memory level, and the ridge point
 * (FLOP per byte where a kernel turns from memory- to compute-bound) of each
 * level for each matrix dtype. */
#ifndef STRATA_INFO_H
#define STRATA_INFO_H

#include <stdio.h>

#include "cfg.h"
#include "diag.h"
#include "model.h"

struct info_out {
    double matrix_flops[DT_COUNT];      /* peak, FLOP/s */
    double vector_flops[DT_COUNT];      /* peak, FLOP/s */
    double bw[LVL_COUNT];               /* peak bandwidth per level, bytes/s (0 = none) */
    double bw_achievable[LVL_COUNT];    /* after calibrated efficiencies, bytes/s */
    double ridge[DT_COUNT][LVL_COUNT];  /* matrix peak / bw, FLOP/byte */
};

void info_derive(const struct hw_config *c, struct info_out *o);
void info_print(const struct hw_config *c, const struct info_out *o, FILE *f);
/* The derived figures as a cJSON object (void * keeps cJSON out of this
 * header); the caller owns it (cJSON_Delete, or add it to a tree). */
void *info_json_tree(const struct hw_config *c, const struct info_out *o);
int info_json(const struct hw_config *c, const struct info_out *o, const char *path, struct diag *d);

#endif
