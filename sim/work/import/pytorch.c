/* pytorch.c: import_pytorch (import.h): a PyTorch profiler (Kineto) trace
 * or an execution trace, told apart by their contents.  The importers
 * themselves: ktrace.c (Kineto, with kineto.c, kstream.c, ksync.c) and
 * pyet.c (execution traces). */
#include "import.h"

#include "ktrace.h"
#include "pyet.h"

int import_pytorch(const char *path, struct trace *out, struct import_stats *st, struct diag *d)
{
    int rc = ktrace_try(path, out, st, d);
    if (rc != 1)
        return rc;
    /* not a Kineto trace: an execution trace (read whole; they are small) */
    struct jsondoc doc;
    if (pyet_load(path, &doc, d) != 0)
        return -1;
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(doc.root, "nodes");
    if (cJSON_IsArray(nodes))
        rc = pyet_build(&doc, nodes, out, st, d);
    else
        rc = diag_set(d, DIAG_E_UNSUPPORTED, path, 1, "",
                      "neither a PyTorch profiler trace (traceEvents) nor an execution trace (nodes)");
    jsondoc_free(&doc);
    return rc;
}
