/* report_text.h: the terminal summary of a run (what `strata run` prints):
 * total time, work, bytes and energy, where the time went, each device's
 * share on several devices, and the slowest ops. */
#ifndef STRATA_REPORT_TEXT_H
#define STRATA_REPORT_TEXT_H

#include <stdio.h>

#include "report.h"

void report_text(const struct report_ctx *c, FILE *out);

#endif
