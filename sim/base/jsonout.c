/* jsonout.c: see jsonout.h. */
#include "jsonout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "afile.h"
#include "check.h"
#include "numfmt.h"

/* Numbers go in as raw text with 10 significant digits: cJSON's own number
 * printing (print, parse back, maybe print again) was most of the cost of
 * writing a report. */
cJSON *jout_num(double v)
{
    char buf[40];
    if (isfinite(v))
        numfmt_g(buf, sizeof buf, v);
    else
        snprintf(buf, sizeof buf, "null");
    cJSON *it = cJSON_CreateRaw(buf);
    /* keep the value too, so in-memory readers (plot.c) need not parse the
     * text; cJSON ignores valuedouble on raw items */
    it->valuedouble = isfinite(v) ? v : 0.0;
    return it;
}

void jout_add_num(cJSON *o, const char *key, double v)
{
    cJSON_AddItemToObject(o, key, jout_num(v));
}

int jout_write(const cJSON *root, const char *path, struct diag *d)
{
    char *text = cJSON_PrintBuffered(root, 1 << 20, 1);
    if (text == NULL)
        sim_oom(0);
    struct afile a;
    int rc = afile_open(&a, path, d);
    if (rc == 0) {
        fputs(text, a.f);
        fputc('\n', a.f);
        rc = afile_commit(&a, d);
    }
    free(text);
    return rc;
}
