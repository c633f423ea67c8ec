/* report_text.h: the terminal summary of a run (what `strata run` prints):
 * total time, work, bytes and energy, where the time went, each device's
 * share on several devices, and the slowest ops. */
#ifndef STRATA_REPORT_TEXT_H
#define STRATA_REPORT_TEXT_H

#include <stdint.h>
#include <stdio.h>

#include "report.h"

void report_text(const struct report_ctx *c, FILE *out);
/* name with its first run of digits that spells dev ("r3.L0.qkv" on
 * device 3: "r#.L0.qkv") as '#', into buf: an op's name with its rank
 * masked, so the same op on every rank of a TP group compares equal. */
void report_mask_device(const char *name, uint32_t dev, char *buf, size_t n);

#endif
