/* pyet.h: the PyTorch execution-trace importer's parts that import_pytorch
 * also uses (private to sim/work/import; import_pytorch_et itself is in
 * import.h). */
#ifndef STRATA_PYET_H
#define STRATA_PYET_H

#include "import.h"
#include "jsondoc.h"

/* A JSON file, plain or gzip, read whole.  0 or -1 with *d. */
int pyet_load(const char *path, struct jsondoc *doc, struct diag *d);
/* The ops of an execution trace's "nodes" (doc's) into *out.  0 or -1
 * with *d. */
int pyet_build(const struct jsondoc *doc, const cJSON *nodes, struct trace *out,
               struct import_stats *st, struct diag *d);

#endif
