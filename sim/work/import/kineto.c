/* kineto.c: reading one Kineto event into the records (see kineto.h):
 * CPU operators with their input shapes, runtime launch calls, stream
 * synchronisation, and GPU kernels and copies. */
#include "kineto.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "imp.h"
#include "opmap.h"

void kineto_init(struct kstate *S, struct import_stats *st)
{
    memset(S, 0, sizeof *S);
    strtab_init(&S->names);
    S->st = st;
}

void kineto_free(struct kstate *S)
{
    strtab_free(&S->names);
    free(S->cpu);
    free(S->rt);
    free(S->dv);
    free(S->in);
    free(S->sy);
    free(S->dims);
}

/* An event's duration in microseconds: a negative one or one longer than
 * an op may take (TRACE_MAX_OP_S) is no kernel's; such events are skipped
 * and counted (a dur of 1e308 became measured_s 1e302, which the trace
 * loader refuses; a negative one silently became 0). */
static int dur_ok(struct import_stats *st, double dur_us)
{
    if (dur_us >= 0 && dur_us <= TRACE_MAX_OP_S * 1e6)
        return 1;
    st->dur_skipped++;
    st->malformed++;
    return 0;
}

/* An optional integer: def when k is absent, -1 when it is not a number. */
static int opt_i64(const cJSON *o, const char *k, int64_t def, int64_t *v)
{
    *v = def;
    return cJSON_GetObjectItemCaseSensitive(o, k) == NULL ? 0 : imp_get_i64(o, k, v);
}

static int is_cat(const cJSON *e, const char *a, const char *b)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "cat");
    return cJSON_IsString(c) && (strcmp(c->valuestring, a) == 0 || (b && strcmp(c->valuestring, b) == 0));
}

/* A CPU operator, with its inputs' shapes and types. */
static void event_cpu(struct kstate *S, const cJSON *e, const cJSON *name, const cJSON *args)
{
    struct import_stats *st = S->st;
    double ts, dur;
    IMP_GROW(S->cpu, S->ncpu, S->cap_cpu);
    struct kcpu *c = &S->cpu[S->ncpu];
    memset(c, 0, sizeof *c);
    if (imp_get_num(e, "ts", &ts) || imp_get_num(e, "dur", &dur) || imp_get_i64(e, "pid", &c->pid) ||
        imp_get_i64(e, "tid", &c->tid) || !cJSON_IsString(name)) {
        st->malformed++;
        return;
    }
    if (!dur_ok(st, dur))
        return;
    c->name = strtab_intern(&S->names, name->valuestring);
    c->ts = ts;
    c->end = ts + dur;
    c->ext = INT64_MIN;
    c->orig = S->ncpu;
    if (cJSON_IsObject(args)) {
        imp_get_i64(args, "External id", &c->ext);
        struct opmap_in in;
        memset(&in, 0, sizeof in);
        imp_fill_inputs(&in, cJSON_GetObjectItemCaseSensitive(args, "Input Dims"),
                        cJSON_GetObjectItemCaseSensitive(args, "Input type"),
                        opmap_uses_concrete(name->valuestring)
                            ? cJSON_GetObjectItemCaseSensitive(args, "Concrete Inputs")
                            : NULL);
        c->in_off = S->nin;
        c->nin = (uint32_t)in.ninputs;
        for (int i = 0; i < in.ninputs; i++) {
            IMP_GROW(S->in, S->nin, S->cap_in);
            struct kinput *k = &S->in[S->nin++];
            k->ndims = (int8_t)in.ndims[i];
            k->dim_off = S->ndims;
            for (int j = 0; j < in.ndims[i]; j++) {
                IMP_GROW(S->dims, S->ndims, S->cap_dims);
                S->dims[S->ndims++] = in.dims[i][j];
            }
            k->type = strtab_intern(&S->names, in.types[i]);
            k->conc = strtab_intern(&S->names, in.concrete[i]);
        }
    }
    S->ncpu++;
    st->cpu_ops++;
}

/* A runtime call that launched something (it carries a correlation id). */
static void event_runtime(struct kstate *S, const cJSON *e, const cJSON *args)
{
    double ts;
    IMP_GROW(S->rt, S->nrt, S->cap_rt);
    struct krt *r = &S->rt[S->nrt];
    if (imp_get_num(e, "ts", &ts) || imp_get_i64(e, "pid", &r->pid) || imp_get_i64(e, "tid", &r->tid) ||
        !cJSON_IsObject(args) || imp_get_i64(args, "correlation", &r->corr))
        return; /* a sync or malloc call without correlation: not a launch */
    r->ts = ts;
    S->nrt++;
}

/* A "cuda_sync" event. */
static void event_sync(struct kstate *S, const cJSON *e, const cJSON *args)
{
    struct import_stats *st = S->st;
    double ts;
    const cJSON *kind = cJSON_IsObject(args)
                            ? cJSON_GetObjectItemCaseSensitive(args, "cuda_sync_kind")
                            : NULL;
    IMP_GROW(S->sy, S->nsy, S->cap_sy);
    struct ksync *y = &S->sy[S->nsy];
    memset(y, 0, sizeof *y);
    if (imp_get_num(e, "ts", &ts) || !cJSON_IsString(kind)) {
        st->malformed++;
        return;
    }
    y->ts = ts;
    const char *k = kind->valuestring;
    y->kind = strcmp(k, "Stream Wait Event") == 0 ? KS_WAIT_EVENT
              : strcmp(k, "Stream Sync") == 0     ? KS_STREAM
              : strcmp(k, "Event Sync") == 0      ? KS_EVENT
              : strcmp(k, "Context Sync") == 0    ? KS_CONTEXT
                                                  : 0;
    if (y->kind == 0)
        return; /* a kind this importer does not know: no dependency */
    /* Absent fields (older Kineto) or -1 (not known to the profiler)
     * give no dependency; fields of the wrong type make it malformed. */
    if (opt_i64(args, "device", 0, &y->dev) | opt_i64(args, "stream", -1, &y->stream) |
        opt_i64(args, "wait_on_stream", -1, &y->wait_stream) |
        opt_i64(args, "wait_on_cuda_event_record_corr_id", -1, &y->rec_corr)) {
        st->malformed++;
        return;
    }
    S->nsy++;
    st->syncs++;
}

/* A GPU kernel, memcpy or memset. */
static void event_device(struct kstate *S, const cJSON *e, const cJSON *name, const cJSON *args)
{
    struct import_stats *st = S->st;
    double ts, dur;
    IMP_GROW(S->dv, S->ndv, S->cap_dv);
    struct kdev *k = &S->dv[S->ndv];
    if (imp_get_num(e, "ts", &ts) || imp_get_num(e, "dur", &dur) || !cJSON_IsObject(args) ||
        !cJSON_IsString(name)) {
        st->malformed++;
        return;
    }
    if (!dur_ok(st, dur))
        return;
    k->name = strtab_intern(&S->names, name->valuestring);
    k->ts = ts;
    k->dur = dur;
    k->dev = 0;
    k->stream = 0;
    k->ext = INT64_MIN;
    k->corr = INT64_MIN;
    k->bytes = 0;
    if (imp_get_i64(args, "device", &k->dev) && imp_get_i64(e, "pid", &k->dev))
        k->dev = 0;
    if (imp_get_i64(args, "stream", &k->stream) && imp_get_i64(e, "tid", &k->stream))
        k->stream = 0;
    imp_get_i64(args, "External id", &k->ext);
    imp_get_i64(args, "correlation", &k->corr);
    imp_get_num(args, "bytes", &k->bytes);
    k->copy = is_cat(e, "gpu_memcpy", NULL) ? 1 : (is_cat(e, "gpu_memset", NULL) ? 2 : 0);
    if (k->copy)
        st->copies++;
    else
        st->kernels++;
    S->ndv++;
}

void kineto_event(struct kstate *S, const cJSON *e)
{
    if (!cJSON_IsObject(e)) {
        S->st->malformed++;
        return;
    }
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
    if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "X") != 0)
        return;
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
    if (is_cat(e, "cpu_op", "operator"))
        event_cpu(S, e, name, args);
    else if (is_cat(e, "cuda_runtime", "hip_runtime") || is_cat(e, "runtime", NULL))
        event_runtime(S, e, args);
    else if (is_cat(e, "cuda_sync", NULL))
        event_sync(S, e, args);
    else if (is_cat(e, "kernel", NULL) || is_cat(e, "gpu_memcpy", "gpu_memset"))
        event_device(S, e, name, args);
}
