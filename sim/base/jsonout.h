/* jsonout.h: what every JSON output of strata shares (report, info,
 * validate): numbers printed with 10 significant digits, and an atomic
 * write.  Each module builds and writes its own document with these. */
#ifndef STRATA_JSONOUT_H
#define STRATA_JSONOUT_H

#include <cjson/cJSON.h>

#include "diag.h"

#define REPORT_FORMAT 1 /* the "strata_report" / "strata_info" / "strata_validate" format number */

/* A number item (non-finite values print as null). */
cJSON *jout_num(double v);
void jout_add_num(cJSON *o, const char *key, double v);
/* Print root to path atomically (afile); 0, or -1 with *d. */
int jout_write(const cJSON *root, const char *path, struct diag *d);

#endif
