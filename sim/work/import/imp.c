/* imp.c: what the importers share (see imp.h): numbers from JSON fields,
 * the small hash map, input shapes and types, and building a trace op by
 * op. */
#include "imp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* ------------------------------------------------------------ JSON fields */

int imp_get_num(const cJSON *o, const char *k, double *v)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
        return -1;
    *v = it->valuedouble;
    return 0;
}

int imp_get_i64(const cJSON *o, const char *k, int64_t *v)
{
    double d;
    if (imp_get_num(o, k, &d) != 0 || !(d > -9.2e18 && d < 9.2e18))
        return -1;
    *v = (int64_t)d;
    return 0;
}

/* ------------------------------------------------------------ small map */

void imp_map_init(struct imp_map *m, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n + 2)
        cap *= 2;
    m->key = sim_xcalloc(cap, sizeof *m->key);
    m->val = sim_xcalloc(cap, sizeof *m->val);
    m->mask = cap - 1;
    for (size_t i = 0; i < cap; i++)
        m->key[i] = INT64_MIN;
}

void imp_map_free(struct imp_map *m)
{
    free(m->key);
    free(m->val);
}

size_t imp_map_slot(const struct imp_map *m, int64_t k)
{
    uint64_t h = (uint64_t)k * 0x9E3779B97F4A7C15ull;
    size_t i = (size_t)(h >> 20) & m->mask;
    while (m->key[i] != INT64_MIN && m->key[i] != k)
        i = (i + 1) & m->mask;
    return i;
}

void imp_map_put(struct imp_map *m, int64_t k, uint32_t v)
{
    size_t i = imp_map_slot(m, k);
    if (m->key[i] == INT64_MIN) { /* first one wins */
        m->key[i] = k;
        m->val[i] = v;
    }
}

int imp_map_get(const struct imp_map *m, int64_t k, uint32_t *v)
{
    size_t i = imp_map_slot(m, k);
    if (m->key[i] == INT64_MIN)
        return 0;
    *v = m->val[i];
    return 1;
}

/* shapes and types from a Kineto "Input Dims"/"Input type" pair or an ET
 * "input_shapes"/"input_types" pair */
void imp_fill_inputs(struct opmap_in *in, const cJSON *dims, const cJSON *types,
                        const cJSON *concrete)
{
    in->ninputs = 0;
    const cJSON *dl = cJSON_IsArray(dims) ? dims->child : NULL;
    const cJSON *tl = cJSON_IsArray(types) ? types->child : NULL;
    const cJSON *cl = cJSON_IsArray(concrete) ? concrete->child : NULL;
    while (dl != NULL && in->ninputs < OPMAP_MAX_IN) {
        int i = in->ninputs++;
        in->ndims[i] = -1;
        in->types[i] = tl && cJSON_IsString(tl) ? tl->valuestring : "";
        in->concrete[i] = cl && cJSON_IsString(cl) ? cl->valuestring : "";
        if (cJSON_IsArray(dl)) {
            int n = 0, ok = 1;
            for (const cJSON *x = dl->child; x != NULL; x = x->next) {
                if (!cJSON_IsNumber(x) || n == OPMAP_MAX_DIMS ||
                    !(fabs(x->valuedouble) < 9.2e18)) {
                    ok = 0;
                    break;
                }
                in->dims[i][n++] = (int64_t)x->valuedouble;
            }
            /* [] is a scalar; a tensor has at least one dim */
            if (ok && n > 0)
                in->ndims[i] = n;
        }
        dl = dl->next;
        if (tl)
            tl = tl->next;
        if (cl)
            cl = cl->next;
    }
}

/* ------------------------------------------------------------ trace building */

void imp_build_init(struct imp_builder *b, struct trace *t, uint32_t cap)
{
    memset(t, 0, sizeof *t);
    memset(b, 0, sizeof *b);
    b->t = t;
    b->cap = cap ? cap : 1;
    b->dcap = b->cap;
    t->ops = sim_xcalloc(b->cap, sizeof *t->ops);
    t->deps = sim_xcalloc(b->dcap, sizeof *t->deps);
    t->topo = sim_xcalloc(b->cap, sizeof *t->topo);
    t->devices = sim_xcalloc(64, sizeof *t->devices);
}

uint32_t imp_build_device(struct imp_builder *b, int64_t dev)
{
    for (uint32_t i = 0; i < b->ndev; i++)
        if (b->dev_ids[i] == dev)
            return i;
    if (b->ndev == 64)
        return 63;
    b->dev_ids[b->ndev] = dev;
    snprintf(b->t->devices[b->ndev], sizeof b->t->devices[0], "gpu%lld", (long long)dev);
    return b->ndev++;
}

uint32_t imp_build_stream(struct imp_builder *b, int64_t dev, int64_t stream)
{
    /* streams numbered per device in order of appearance */
    uint32_t n = 0;
    for (uint32_t i = 0; i < b->nstreams; i++) {
        if (b->streams[i].dev == dev) {
            if (b->streams[i].stream == stream)
                return n;
            n++;
        }
    }
    if (b->nstreams < 256) {
        b->streams[b->nstreams].dev = dev;
        b->streams[b->nstreams].stream = stream;
        b->nstreams++;
    }
    return n;
}

struct op *imp_build_add(struct imp_builder *b, const char *name)
{
    struct trace *t = b->t;
    if (t->nops == b->cap) {
        b->cap *= 2;
        t->ops = sim_xrealloc(t->ops, b->cap * sizeof *t->ops);
        t->topo = sim_xrealloc(t->topo, b->cap * sizeof *t->topo);
    }
    uint32_t i = t->nops++;
    struct op *o = &t->ops[i];
    memset(o, 0, sizeof *o);
    char id[TRACE_ID_MAX];
    snprintf(id, sizeof id, "op%u", i);
    trace_op_set_id(t, i, id);
    trace_op_set_name(t, i, name);
    o->measured_s = -1;
    o->fixed_s = -1;
    o->deps_off = t->ndeps;
    t->topo[i] = i;
    return o;
}

void imp_build_dep(struct imp_builder *b, uint32_t on)
{
    struct trace *t = b->t;
    if (t->ndeps == b->dcap) {
        b->dcap *= 2;
        t->deps = sim_xrealloc(t->deps, b->dcap * sizeof *t->deps);
    }
    t->deps[t->ndeps++] = on;
    t->ops[t->nops - 1].ndeps++;
}

void imp_build_fixed(struct op *o, double seconds)
{
    o->kind = OP_GENERIC;
    o->dtype = DT_INT8;
    o->u.gen.flops = 0;
    o->u.gen.bytes = 0;
    o->fixed_s = seconds;
    o->measured_s = seconds;
}
