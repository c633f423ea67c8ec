/* pyet.c: the PyTorch execution-trace importer (import_pytorch_et; what
 * it makes of a trace: import.h): leaf aten operators become ops, with
 * data dependencies from the tensors one op writes and another reads. */
#include "pyet.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gz.h"
#include "imp.h"
#include "opmap.h"

int pyet_load(const char *path, struct jsondoc *doc, struct diag *d)
{
    char *text;
    size_t len;
    if (gz_read_all(path, &text, &len, d) != 0)
        return -1;
    int rc = jsondoc_parse_string(text, path, doc, d);
    free(text);
    return rc;
}

/* storage id of a tensor value [tensor_id, storage_id, offset, numel, itemsize, device] */
static int64_t storage_of(const cJSON *v)
{
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) < 2)
        return INT64_MIN;
    const cJSON *s = cJSON_GetArrayItem(v, 1);
    return cJSON_IsNumber(s) && fabs(s->valuedouble) < 9.2e18 ? (int64_t)s->valuedouble
                                                               : INT64_MIN;
}

/* The op of leaf operator node nd (named nm), or NULL when strata cannot
 * size it. */
static struct op *et_op(struct imp_builder *b, const cJSON *nd, const char *nm,
                        struct import_stats *st)
{
    struct opmap_in in;
    memset(&in, 0, sizeof in);
    in.name = nm;
    imp_fill_inputs(&in, cJSON_GetObjectItemCaseSensitive(nd, "input_shapes"),
                cJSON_GetObjectItemCaseSensitive(nd, "input_types"), NULL);
    struct op tmp;
    memset(&tmp, 0, sizeof tmp);
    enum opmap_result mr = opmap_map(&in, &tmp);
    if (mr == OPMAP_UNKNOWN || mr == OPMAP_NOSHAPE) {
        /* allocations, views and metadata ops do no GPU work we can size */
        if (mr == OPMAP_NOSHAPE)
            st->fixed_noshape++;
        else
            st->fixed_unknown++;
        return NULL;
    }
    struct op *o = imp_build_add(b, nm);
    if (mr == OPMAP_COLLECTIVE) {
        /* bytes of the tensors it communicates; timed as generic traffic */
        double bytes = 0;
        for (int i = 0; i < in.ninputs; i++) {
            double e = in.ndims[i] >= 1 ? 1 : 0;
            for (int k = 0; k < in.ndims[i]; k++)
                e *= (double)in.dims[i][k];
            bytes += e * (double)dtype_bits(opmap_dtype(in.types[i])) / 8.0;
        }
        o->kind = OP_GENERIC;
        o->dtype = DT_INT8;
        o->u.gen.flops = 0;
        o->u.gen.bytes = bytes > 0 ? bytes : 1;
        st->fixed_collective++;
    } else {
        /* the id ("op<i>") and name (nm) imp_build_add gave it */
        *o = (struct op){.kind = tmp.kind, .dtype = tmp.dtype, .u = tmp.u,
                         .measured_s = -1, .fixed_s = -1, .deps_off = o->deps_off,
                         .id_at = o->id_at, .name_at = o->name_at};
        st->mapped++;
    }
    o->device = 0;
    o->stream = 0;
    return o;
}

/* data deps: on the last writer of every tensor it reads (op me, node nd);
 * then it is the last writer of what it writes */
static void et_deps(struct imp_builder *b, struct imp_map *writer, const cJSON *nd, uint32_t me)
{
    struct trace *out = b->t;
    const cJSON *ins = cJSON_GetObjectItemCaseSensitive(nd, "inputs"), *v;
    cJSON_ArrayForEach(v, ins)
    {
        int64_t sid = storage_of(v);
        uint32_t w;
        if (sid != INT64_MIN && imp_map_get(writer, sid, &w) && w - 1 != me) {
            int dup = 0;
            for (uint32_t k = 0; k < out->ops[me].ndeps; k++)
                if (out->deps[out->ops[me].deps_off + k] == w - 1)
                    dup = 1;
            if (!dup)
                imp_build_dep(b, w - 1);
        }
    }
    const cJSON *outs = cJSON_GetObjectItemCaseSensitive(nd, "outputs");
    cJSON_ArrayForEach(v, outs)
    {
        int64_t sid = storage_of(v);
        if (sid != INT64_MIN) {
            size_t slot = imp_map_slot(writer, sid);
            writer->key[slot] = sid;
            writer->val[slot] = me + 1;
        }
    }
}

int pyet_build(const struct jsondoc *doc, const cJSON *nodes, struct trace *out,
               struct import_stats *st, struct diag *d)
{
    uint32_t n = (uint32_t)cJSON_GetArraySize(nodes);
    /* which node ids are parents */
    struct imp_map parent;
    imp_map_init(&parent, n);
    const cJSON *nd;
    cJSON_ArrayForEach(nd, nodes)
    {
        int64_t p;
        if (cJSON_IsObject(nd) && imp_get_i64(nd, "parent", &p) == 0)
            imp_map_put(&parent, p, 1);
    }
    struct imp_builder b;
    imp_build_init(&b, out, n);
    imp_build_device(&b, 0);
    struct imp_map writer; /* storage id -> op index + 1 of its last writer */
    imp_map_init(&writer, 4 * (size_t)n);
    cJSON_ArrayForEach(nd, nodes)
    {
        int64_t id;
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(nd, "name");
        if (!cJSON_IsObject(nd) || !cJSON_IsString(name) || imp_get_i64(nd, "id", &id)) {
            st->malformed++;
            continue;
        }
        uint32_t dummy;
        const char *nm = name->valuestring;
        int is_op = strncmp(nm, "aten::", 6) == 0 || strncmp(nm, "c10d::", 6) == 0 ||
                    strncmp(nm, "nccl:", 5) == 0 || strncmp(nm, "record_param_comms", 18) == 0;
        if (!is_op || imp_map_get(&parent, id, &dummy))
            continue; /* not an operator, or not a leaf */
        st->cpu_ops++;
        struct op *o = et_op(&b, nd, nm, st);
        if (o == NULL)
            continue;
        et_deps(&b, &writer, nd, out->nops - 1);
        st->by_kind[o->kind]++;
    }
    imp_map_free(&parent);
    imp_map_free(&writer);
    out->ndevices = 1;
    snprintf(out->path, sizeof out->path, "%s", doc->name);
    if (out->nops == 0) {
        trace_free(out);
        return diag_set(d, DIAG_E_RANGE, doc->name, 1, "nodes",
                        "no operators strata can size in the execution trace");
    }
    return 0;
}

int import_pytorch_et(const char *path, struct trace *out, struct import_stats *st,
                      struct diag *d)
{
    memset(st, 0, sizeof *st);
    struct jsondoc doc;
    if (pyet_load(path, &doc, d) != 0)
        return -1;
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(doc.root, "nodes");
    int rc;
    if (!cJSON_IsArray(nodes))
        rc = diag_set(d, DIAG_E_MISSING, path, 1, "nodes",
                      "not a PyTorch execution trace (no nodes array)");
    else
        rc = pyet_build(&doc, nodes, out, st, d);
    jsondoc_free(&doc);
    return rc;
}
