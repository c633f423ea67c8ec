/* kineto.h: a PyTorch profiler (Kineto) trace as small records, and
 * reading one event into them (private to sim/work/import).
 *
 * Events are reduced to small records as they are read, so a trace is never
 * held in memory as a whole: the streaming reader (kstream.c) hands one
 * event object at a time to kineto_event().  ktrace.c turns the records
 * into a strata trace, with ksync.c's dependencies between streams.
 *
 * Ownership: kineto_init allocates, kineto_free frees.
 */
#ifndef STRATA_KINETO_H
#define STRATA_KINETO_H

#include <stdint.h>

#include "import.h"
#include "jsondoc.h"
#include "strtab.h"

struct kinput {                 /* one input of a CPU op */
    int8_t ndims;               /* -1: not a tensor */
    uint32_t dim_off;           /* its ndims sizes in kstate.dims */
    uint32_t type;              /* interned */
    uint32_t conc;              /* interned "Concrete Inputs" value ("" if none) */
};

struct kcpu {                   /* a CPU op */
    uint32_t name;              /* interned */
    uint32_t in_off, nin;       /* inputs */
    int64_t pid, tid, ext;
    double ts, end;
    /* kernels it owns */
    double kern_s;
    int64_t dev, stream;
    uint32_t nkern;
    double launch;              /* host time of its first kernel launch (cpu ts if unknown) */
    uint32_t kname;             /* interned name of its longest kernel */
    double kmax;                /* that kernel's duration, us */
    int tensor_core;
    int main_kernel;            /* it owns a kernel that is not a library helper */
    uint32_t orig;              /* read order, before sorting */
};

struct krt {                    /* a runtime launch call */
    int64_t pid, tid, corr;
    double ts;
    int32_t owner;              /* CPU op index, -1 none */
};

struct kdev {                   /* a GPU event */
    uint32_t name;              /* interned */
    double ts, dur, bytes;
    int64_t dev, stream, ext, corr;
    int copy;                   /* 1 memcpy, 2 memset */
};

enum ksync_kind {
    KS_WAIT_EVENT = 1,          /* cudaStreamWaitEvent: a stream waits for another's event */
    KS_STREAM,                  /* cudaStreamSynchronize: the host waits for one stream */
    KS_EVENT,                   /* cudaEventSynchronize: the host waits for one event */
    KS_CONTEXT                  /* cudaDeviceSynchronize: the host waits for every stream */
};

struct ksync {                  /* a "cuda_sync" event (PyTorch 2.1 and later) */
    enum ksync_kind kind;
    double ts;                  /* the call, host clock */
    int64_t dev, stream;        /* the waiting stream (KS_WAIT_EVENT), the waited one (KS_STREAM) */
    int64_t wait_stream;        /* the stream whose event is waited for */
    int64_t rec_corr;           /* correlation id of the cudaEventRecord of that event */
};

struct kstate {
    struct strtab names;
    struct kcpu *cpu;
    struct krt *rt;
    struct kdev *dv;
    struct kinput *in;
    struct ksync *sy;
    int64_t *dims;              /* the inputs' sizes, ndims each */
    uint32_t ncpu, nrt, ndv, nin, nsy, ndims;
    uint32_t cap_cpu, cap_rt, cap_dv, cap_in, cap_sy, cap_dims;
    struct import_stats *st;
};

struct kentry {                 /* one op of the output, before sorting */
    double ts;
    uint32_t seq;
    int cpu;                    /* >= 0: owner CPU op; else */
    uint32_t dev_event;         /* the GPU event (orphan kernel or copy) */
};

void kineto_init(struct kstate *S, struct import_stats *st);
void kineto_free(struct kstate *S);
/* Read one event into the records (counted in S->st; one that is not an
 * event strata reads is left out). */
void kineto_event(struct kstate *S, const cJSON *e);

#endif
