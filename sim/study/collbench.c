/* collbench.c: see collbench.h. */
#include "collbench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "coll.h"
#include "run.h"

int collbench_run(const struct hw_system *sys, enum coll_kind kind, enum coll_algo algo,
                  enum dtype dt, uint32_t nranks, uint32_t gpus_per_thread, uint64_t bytes,
                  struct collbench_pt *out, struct diag *d)
{
    memset(out, 0, sizeof *out);
    if (nranks < 2 || nranks > sys->ndevices)
        return diag_set(d, DIAG_E_RANGE, sys->path, 0, "devices",
                        "a collective over %u ranks needs 2 to %u devices; system %s has %u",
                        nranks, sys->ndevices, sys->name, sys->ndevices);
    if (bytes == 0 || bytes > TRACE_SIZE_CAP)
        return diag_set(d, DIAG_E_RANGE, "", 0, "bytes", "a size of 1 byte to 2^50 bytes, got %llu",
                        (unsigned long long)bytes);
    if (kind == COLL_SEND_RECV && nranks != 2)
        return diag_set(d, DIAG_E_RANGE, "", 0, "ranks",
                        "a send_recv is between two devices (one sends, one receives), got %u",
                        nranks);
    if (kind != COLL_ALL_REDUCE && kind != COLL_BROADCAST && kind != COLL_SEND_RECV &&
        bytes % nranks != 0)
        return diag_set(d, DIAG_E_RANGE, "", 0, "bytes",
                        "a %s over %u ranks needs a size divisible by %u, got %llu",
                        coll_kind_name(kind), nranks, nranks, (unsigned long long)bytes);
    struct trace t;
    trace_one_collective(&t, kind, algo, dt, nranks, bytes);
    struct run_result res;
    int rc = run_system_opts(sys, &t, NULL, &res, d);
    if (rc == 0) {
        out->bytes = bytes;
        out->gpu_s = (double)res.total_ps * 1e-12;
        out->host_s = (gpus_per_thread ? gpus_per_thread : 1) * (double)sys->chip.coll_overhead_ps * 1e-12;
        out->time_s = out->gpu_s + out->host_s;
        out->algbw = out->time_s > 0 ? (double)bytes / out->time_s : 0;
        out->busbw = out->algbw * coll_busbw_factor(kind, nranks);
        snprintf(out->how, sizeof out->how, "%s", run_op_body(&res, 0)->tile);
        run_result_free(&res);
    }
    trace_free(&t);
    return rc;
}
