/* chakra.c: the Chakra execution-trace importer (import_chakra; what it
 * makes of a trace: import.h). */
#include "import.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gz.h"
#include "imp.h"
#include "jsondoc.h"
#include "opmap.h"
#include "uheap.h"

/* ------------------------------------------------------------ Chakra */

/* Chakra execution traces (MLCommons; what ASTRA-sim replays) in their JSON
 * form: the nodes as chakra_jsonizer writes them (protobuf JSON objects one
 * after another, the first the global metadata), or a JSON array of nodes,
 * or an object with a "nodes" array.  Keys may be camelCase (protobuf JSON)
 * or snake_case, integers numbers or strings. */

enum cnode_type {
    CN_INVALID, CN_METADATA, CN_MEM_LOAD, CN_MEM_STORE, CN_COMP, CN_SEND, CN_RECV, CN_COLL,
    CN_TYPES
};
static const char *const cnode_names[CN_TYPES] = {
    "INVALID_NODE", "METADATA_NODE", "MEM_LOAD_NODE", "MEM_STORE_NODE",
    "COMP_NODE",    "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE"};

/* Top-level JSON values one after another -> one array, with the same
 * lines (a comma goes after each value that another follows). */
static char *chakra_wrap(const char *text, int *open)
{
    size_t len = strlen(text);
    char *w = sim_xcalloc(2 * len + 3, 1); /* at most one comma per input byte */
    size_t o = 0, i = 0;
    w[o++] = '[';
    int depth = 0, in_str = 0, ended = 0;
    for (; i < len; i++) {
        char c = text[i];
        if (ended && c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            w[o++] = ',';
            ended = 0;
        }
        w[o++] = c;
        if (in_str) {
            if (c == '\\' && i + 1 < len)
                w[o++] = text[++i];
            else if (c == '"')
                in_str = 0;
            if (!in_str && depth == 0)
                ended = 1;
            continue;
        }
        if (c == '"')
            in_str = 1;
        else if (c == '{' || c == '[')
            depth++;
        else if ((c == '}' || c == ']') && depth > 0 && --depth == 0)
            ended = 1;
    }
    w[o++] = ']';
    w[o] = '\0';
    *open = in_str || depth > 0;
    return w;
}

/* member k (camelCase) or its snake_case spelling s */
static const cJSON *c_get(const cJSON *o, const char *k, const char *s)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
    return it != NULL ? it : cJSON_GetObjectItemCaseSensitive(o, s);
}

/* An integer given as a number or a decimal string (protobuf JSON writes
 * 64-bit integers as strings).  0 ok, -1 not an integer in [0, max]. */
static int c_uint(const cJSON *it, uint64_t max, uint64_t *v)
{
    double x;
    if (cJSON_IsNumber(it)) {
        x = it->valuedouble;
    } else if (cJSON_IsString(it) && it->valuestring[0] >= '0' && it->valuestring[0] <= '9') {
        char *end;
        errno = 0;
        unsigned long long u = strtoull(it->valuestring, &end, 10);
        if (*end != '\0' || errno != 0 || u > max)
            return -1;
        *v = u;
        return 0;
    } else {
        return -1;
    }
    /* a JSON number above 2^53 has lost digits: large ids come as strings */
    if (!(x >= 0 && x <= (double)max && x < 9007199254740992.0) || x != floor(x))
        return -1;
    *v = (uint64_t)x;
    return 0;
}

/* The value of attribute `name` as a number (bools are 0/1).  1 found,
 * 0 absent, -1 present but not a number >= 0. */
static int c_attr(const cJSON *node, const char *name, double *v, const cJSON **where)
{
    const cJSON *a, *m;
    cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(node, "attr"))
    {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(a, "name");
        if (!cJSON_IsString(n) || strcmp(n->valuestring, name) != 0)
            continue;
        *where = a;
        cJSON_ArrayForEach(m, a)
        {
            size_t kl = m->string ? strlen(m->string) : 0;
            if (kl < 4 || (strcmp(m->string + kl - 3, "Val") != 0 &&
                           strcmp(m->string + kl - 4, "_val") != 0))
                continue;
            uint64_t u;
            if (cJSON_IsBool(m)) {
                *v = cJSON_IsTrue(m);
                return 1;
            }
            if (cJSON_IsNumber(m) && isfinite(m->valuedouble) && m->valuedouble >= 0) {
                *v = m->valuedouble;
                return 1;
            }
            if (c_uint(m, UINT64_MAX, &u) == 0) {
                *v = (double)u;
                return 1;
            }
            return -1;
        }
        return -1;
    }
    return 0;
}

struct cnode {
    const cJSON *item;
    uint64_t id;
    enum cnode_type type;
    uint32_t dep_off, ndep;     /* into the dep pool (node indices once resolved) */
    uint32_t indeg;
    int32_t op;                 /* output op, -1: left out */
    uint32_t eff_off, neff;     /* left out: the ops it stands for, to its successors */
};

/* Largest work or size a Chakra attribute may give (bytes or FLOPs). */
#define CHAKRA_MAX_VALUE 1e18
/* A left-out node passes at most this many ops on to its successors. */
#define CHAKRA_MAX_EFF 64

/* A compute node converted from a PyTorch execution trace names its aten
 * operator and keeps the input shapes and types as Python lists in
 * "inputs" ("[[2048, 4096], [4096, 4096]]", "['Tensor(c10::BFloat16)', ...]").
 * When the operator is one strata knows, *o gets its kind, dtype and
 * sizes (a GEMM on the matrix units rather than num_ops on the vector
 * ones); 1 then, else 0. */
static int chakra_shaped(const cJSON *node, struct op *o)
{
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(node, "name");
    const cJSON *io = cJSON_GetObjectItemCaseSensitive(node, "inputs");
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(io, "shapes");
    const cJSON *ty = cJSON_GetObjectItemCaseSensitive(io, "types");
    if (!cJSON_IsString(nm) || !cJSON_IsString(sh) || !cJSON_IsString(ty))
        return 0;
    size_t tl = strlen(ty->valuestring);
    char *t = sim_xcalloc(tl + 1, 1);
    memcpy(t, ty->valuestring, tl);
    for (char *p = t; *p; p++)
        if (*p == '\'')
            *p = '"';
    cJSON *shapes = cJSON_Parse(sh->valuestring), *types = cJSON_Parse(t);
    free(t);
    int ok = 0;
    if (cJSON_IsArray(shapes) && cJSON_IsArray(types)) {
        struct opmap_in in;
        memset(&in, 0, sizeof in);
        in.name = nm->valuestring;
        imp_fill_inputs(&in, shapes, types, NULL);
        memset(o, 0, sizeof *o);
        ok = opmap_map(&in, o) == OPMAP_OK;
    }
    cJSON_Delete(shapes);
    cJSON_Delete(types);
    return ok;
}

static int u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : (x > y);
}

/* The build's state: the nodes, their dependencies and successors, and
 * what left-out nodes stand for. */
struct cbuild {
    const struct jsondoc *doc;
    const cJSON **items;
    uint32_t n;
    struct cnode *nd;
    struct imp_map byid;        /* node id -> index */
    uint32_t *pool, npool, cappool; /* the nodes' dependencies */
    uint32_t *succ_off, *succ;  /* each node's successors, CSR */
    uint32_t *eff, neff, capeff; /* the ops left-out nodes stand for */
    uint32_t *deps, capdeps;    /* the waits of the node being placed */
    struct trace *out;
    struct imp_builder b;
    struct import_stats *st;
    struct diag *d;
};

/* What a node is: its work, and the op it becomes (keep) or not. */
struct cwork {
    double flops, bytes, cpu, dur_us, csize;
    enum op_kind kind;
    int keep, stream, shaped;
    struct op sop;              /* shaped: the op from its operator's shapes */
};

/* Node i's ctrl and data dependencies as ids into the pool, two words
 * each (resolved by link_nodes).  0 or -1 with C->d. */
static int read_deps(struct cbuild *C, uint32_t i)
{
    const struct jsondoc *doc = C->doc;
    const cJSON *it = C->items[i];
    static const char *const dk[2][2] = {{"ctrlDeps", "ctrl_deps"}, {"dataDeps", "data_deps"}};
    for (int k = 0; k < 2; k++) {
        const cJSON *arr = c_get(it, dk[k][0], dk[k][1]), *x;
        if (arr != NULL && !cJSON_IsArray(arr))
            return diag_set(C->d, DIAG_E_TYPE, doc->name, jsondoc_line(doc, arr), dk[k][0],
                            "must be a list of node ids");
        cJSON_ArrayForEach(x, arr)
        {
            uint64_t id;
            if (c_uint(x, (uint64_t)INT64_MAX - 1, &id) != 0)
                return diag_set(C->d, DIAG_E_TYPE, doc->name, jsondoc_line(doc, x), dk[k][0],
                                "a dependency must be a node id");
            IMP_GROW(C->pool, C->npool, C->cappool);
            C->pool[C->npool++] = (uint32_t)(id & 0xffffffffu); /* resolved below */
            IMP_GROW(C->pool, C->npool, C->cappool);
            C->pool[C->npool++] = (uint32_t)(id >> 32);
        }
    }
    return 0;
}

/* Every node's id, type and dependencies.  0 or -1 with C->d. */
static int read_nodes(struct cbuild *C)
{
    const struct jsondoc *doc = C->doc;
    struct cnode *nd = C->nd;
    for (uint32_t i = 0; i < C->n; i++) {
        const cJSON *it = C->items[i], *v;
        nd[i].item = it;
        nd[i].op = -1;
        const cJSON *idv = cJSON_GetObjectItemCaseSensitive(it, "id");
        if (idv != NULL && c_uint(idv, (uint64_t)INT64_MAX - 1, &nd[i].id) != 0)
            return diag_set(C->d, DIAG_E_TYPE, doc->name, jsondoc_line(doc, it), "id",
                            "a Chakra node needs an integer \"id\" (0 .. 2^63-2)");
        uint32_t prev;
        if (imp_map_get(&C->byid, (int64_t)nd[i].id, &prev))
            return diag_set(C->d, DIAG_E_DUPLICATE, doc->name, jsondoc_line(doc, it), "id",
                            "node id %llu is given twice (first on line %d)",
                            (unsigned long long)nd[i].id, jsondoc_line(doc, C->items[prev]));
        imp_map_put(&C->byid, (int64_t)nd[i].id, i);
        v = cJSON_GetObjectItemCaseSensitive(it, "type");
        uint64_t t = 0;
        if (cJSON_IsString(v)) {
            while (t < CN_TYPES && strcmp(v->valuestring, cnode_names[t]) != 0)
                t++;
        } else if (v != NULL && c_uint(v, 1000, &t) != 0) {
            t = CN_TYPES;
        }
        nd[i].type = t < CN_TYPES ? (enum cnode_type)t : CN_INVALID; /* later kinds: left out */
        nd[i].dep_off = C->npool;
        if (read_deps(C, i))
            return -1;
        nd[i].ndep = (C->npool - nd[i].dep_off) / 2;
    }
    return 0;
}

/* resolve ids to node indices (in place: the pool halves) and list each
 * node's successors.  0 or -1 with C->d. */
static int link_nodes(struct cbuild *C)
{
    struct cnode *nd = C->nd;
    uint32_t n = C->n, *pool = C->pool;
    C->succ_off = sim_xcalloc((size_t)n + 2, sizeof *C->succ_off);
    uint32_t *succ_off = C->succ_off;
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t j = 0; j < nd[i].ndep; j++) {
            uint64_t id = pool[nd[i].dep_off + 2 * j] | (uint64_t)pool[nd[i].dep_off + 2 * j + 1] << 32;
            uint32_t k;
            if (!imp_map_get(&C->byid, (int64_t)id, &k))
                return diag_set(C->d, DIAG_E_UNKNOWN_NAME, C->doc->name,
                                jsondoc_line(C->doc, nd[i].item), "deps",
                                "node %llu depends on node %llu, which is not in the trace",
                                (unsigned long long)nd[i].id, (unsigned long long)id);
            pool[nd[i].dep_off + j] = k;
            succ_off[k + 1]++;
        }
        nd[i].indeg = nd[i].ndep;
    }
    for (uint32_t i = 0; i < n; i++)
        succ_off[i + 1] += succ_off[i];
    C->succ = sim_xcalloc((size_t)succ_off[n] + 1, sizeof *C->succ);
    uint32_t *fill = sim_xcalloc((size_t)n + 1, sizeof *fill);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < nd[i].ndep; j++) {
            uint32_t k = pool[nd[i].dep_off + j];
            C->succ[succ_off[k] + fill[k]++] = i;
        }
    free(fill);
    return 0;
}

/* the ops node c waits for: kept dependencies, and what left-out ones
 * stand for (each at most CHAKRA_MAX_EFF), sorted and distinct in
 * C->deps; returns how many */
static uint32_t node_waits(struct cbuild *C, const struct cnode *c)
{
    uint32_t nd_ = 0;
    for (uint32_t j = 0; j < c->ndep; j++) {
        const struct cnode *p = &C->nd[C->pool[c->dep_off + j]];
        if (p->op >= 0) {
            IMP_GROW(C->deps, nd_, C->capdeps);
            C->deps[nd_++] = (uint32_t)p->op;
        } else {
            for (uint32_t e = 0; e < p->neff; e++) {
                IMP_GROW(C->deps, nd_, C->capdeps);
                C->deps[nd_++] = C->eff[p->eff_off + e];
            }
        }
    }
    uint32_t *deps = C->deps;
    if (nd_ > 1)
        qsort(deps, nd_, sizeof *deps, u32_cmp);
    uint32_t m = 0;
    for (uint32_t j = 0; j < nd_; j++)
        if (m == 0 || deps[j] != deps[m - 1])
            deps[m++] = deps[j];
    return m;
}

/* what the node is: its attributes and duration, and whether (and as
 * what) it becomes an op.  0 or -1 with C->d. */
static int node_work(struct cbuild *C, const struct cnode *c, struct cwork *W)
{
    const struct jsondoc *doc = C->doc;
    memset(W, 0, sizeof *W);
    const cJSON *w = c->item, *dv;
    static const char *const an[4] = {"num_ops", "tensor_size", "comm_size", "is_cpu_op"};
    double *av[4] = {&W->flops, &W->bytes, &W->csize, &W->cpu};
    for (int k = 0; k < 4; k++) {
        int r = c_attr(c->item, an[k], av[k], &w);
        if (r < 0 || *av[k] > CHAKRA_MAX_VALUE)
            return diag_set(C->d, DIAG_E_RANGE, doc->name, jsondoc_line(doc, w), an[k],
                            "node %llu: must be a number from 0 to 1e18", (unsigned long long)c->id);
    }
    uint64_t du = 0;
    if ((dv = c_get(c->item, "durationMicros", "duration_micros")) != NULL &&
        c_uint(dv, (uint64_t)1e12, &du) != 0)
        return diag_set(C->d, DIAG_E_RANGE, doc->name, jsondoc_line(doc, dv), "durationMicros",
                        "node %llu: must be a whole number of microseconds up to 1e12",
                        (unsigned long long)c->id);
    W->dur_us = (double)du;
    W->kind = OP_GENERIC;
    if (c->type == CN_COMP && W->cpu == 0 && chakra_shaped(c->item, &W->sop)) {
        W->keep = W->shaped = 1;
        W->kind = W->sop.kind;
    } else if (c->type == CN_COMP && W->cpu == 0 && (W->flops > 0 || W->bytes > 0 || W->dur_us > 0)) {
        W->keep = 1;
    } else if ((c->type == CN_COLL || c->type == CN_SEND || c->type == CN_RECV) &&
               (W->csize > 0 || W->dur_us > 0)) {
        W->keep = 1;
        W->flops = 0;
        W->bytes = W->csize;
        W->stream = 2;
    } else if ((c->type == CN_MEM_LOAD || c->type == CN_MEM_STORE) && W->bytes >= 1) {
        W->keep = 1;
        W->kind = OP_MEMCPY;
        W->stream = 1;
        if (W->bytes > (double)TRACE_SIZE_CAP) {
            c_attr(c->item, "tensor_size", &W->bytes, &w);
            return diag_set(C->d, DIAG_E_RANGE, doc->name, jsondoc_line(doc, w), "tensor_size",
                            "node %llu: a copy of at most 2^50 bytes", (unsigned long long)c->id);
        }
    }
    return 0;
}

/* Node c as an op waiting for C->deps[0..m). */
static void node_op(struct cbuild *C, struct cnode *c, const struct cwork *W, uint32_t m)
{
    struct import_stats *st = C->st;
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(c->item, "name");
    struct op *o = imp_build_add(&C->b, cJSON_IsString(nm) && nm->valuestring[0] ? nm->valuestring
                                                                                 : cnode_names[c->type]);
    char id[TRACE_ID_MAX];
    snprintf(id, sizeof id, "%llu", (unsigned long long)c->id);
    trace_op_set_id(C->b.t, (uint32_t)(o - C->b.t->ops), id);
    o->kind = W->kind;
    o->dtype = DT_INT8;
    if (W->shaped) {
        o->dtype = W->sop.dtype;
        o->u = W->sop.u;
        st->owners++;
    } else if (W->kind == OP_MEMCPY) {
        o->u.copy.bytes = (uint64_t)W->bytes;
        o->u.copy.peer = o->u.copy.src = TRACE_NO_DEVICE;
        o->u.copy.dir = c->type == CN_MEM_LOAD ? MEMCPY_H2D : MEMCPY_D2H;
    } else if (W->flops > 0 || W->bytes > 0) {
        o->u.gen.flops = W->flops;
        o->u.gen.bytes = W->bytes;
    } else {
        imp_build_fixed(o, W->dur_us * 1e-6);
        st->fixed_noshape++;
    }
    if (W->dur_us > 0)
        o->measured_s = W->dur_us * 1e-6;
    o->device = 0;
    o->stream = imp_build_stream(&C->b, 0, W->stream);
    for (uint32_t j = 0; j < m; j++)
        imp_build_dep(&C->b, C->deps[j]);
    c->op = (int32_t)(C->out->nops - 1);
    st->mapped++;
    st->by_kind[o->kind]++;
}

/* left out: successors wait for what it waited for (C->deps[0..m)) */
static void node_left_out(struct cbuild *C, struct cnode *c, uint32_t m)
{
    if (m > CHAKRA_MAX_EFF) { /* keep the latest ones */
        memmove(C->deps, C->deps + (m - CHAKRA_MAX_EFF), CHAKRA_MAX_EFF * sizeof *C->deps);
        C->st->deps_dropped += m - CHAKRA_MAX_EFF;
        m = CHAKRA_MAX_EFF;
    }
    c->eff_off = C->neff;
    c->neff = m;
    for (uint32_t j = 0; j < m; j++) {
        IMP_GROW(C->eff, C->neff, C->capeff);
        C->eff[C->neff++] = C->deps[j];
    }
}

/* The nodes in an order that respects every dependency (Kahn's, lowest
 * index first), each an op or left out.  How many were placed (fewer than
 * the nodes: a cycle), or -1 with C->d. */
static int64_t place_nodes(struct cbuild *C)
{
    struct cnode *nd = C->nd;
    uint32_t n = C->n;
    uint32_t *heap = sim_xcalloc((size_t)n + 1, sizeof *heap);
    uint32_t nheap = 0, done_n = 0;
    for (uint32_t i = 0; i < n; i++)
        if (nd[i].indeg == 0)
            uheap_push(heap, &nheap, i);
    while (nheap > 0) {
        uint32_t i = uheap_pop(heap, &nheap);
        struct cnode *c = &nd[i];
        done_n++;
        uint32_t m = node_waits(C, c);
        struct cwork W;
        if (node_work(C, c, &W)) {
            free(heap);
            return -1;
        }
        if (W.keep)
            node_op(C, c, &W, m);
        else
            node_left_out(C, c, m);
        for (uint32_t s = C->succ_off[i]; s < C->succ_off[i + 1]; s++)
            if (--nd[C->succ[s]].indeg == 0)
                uheap_push(heap, &nheap, C->succ[s]);
    }
    free(heap);
    return done_n;
}

/* an unplaced node waits for another unplaced one: walk back until a node
 * repeats; that one is in the cycle.  Returns -1 with C->d. */
static int report_cycle(struct cbuild *C)
{
    const struct cnode *nd = C->nd;
    uint32_t n = C->n, i = 0;
    while (i < n && nd[i].indeg == 0)
        i++;
    unsigned char *seen = sim_xcalloc(n, 1);
    while (!seen[i]) {
        seen[i] = 1;
        uint32_t j = 0;
        while (j < nd[i].ndep && nd[C->pool[nd[i].dep_off + j]].indeg == 0)
            j++;
        if (j == nd[i].ndep)
            break; /* cannot happen: it would have been placed */
        i = C->pool[nd[i].dep_off + j];
    }
    free(seen);
    return diag_set(C->d, DIAG_E_CYCLE, C->doc->name, jsondoc_line(C->doc, nd[i].item), "deps",
                    "node %llu is in a dependency cycle", (unsigned long long)nd[i].id);
}

/* The nodes (items of doc) -> ops in an order that respects every
 * dependency; nodes strata does not run are left out and pass their
 * dependencies on. */
static int chakra_build(const struct jsondoc *doc, const cJSON **items, uint32_t n,
                        struct trace *out, struct import_stats *st, struct diag *d)
{
    struct cbuild C = {.doc = doc, .items = items, .n = n, .out = out, .st = st, .d = d};
    C.nd = sim_xcalloc((size_t)n + 1, sizeof *C.nd);
    imp_map_init(&C.byid, n);
    int rc = -1;
    if (read_nodes(&C) || link_nodes(&C))
        goto done;
    imp_build_init(&C.b, out, n);
    imp_build_device(&C.b, 0);
    int64_t placed = place_nodes(&C);
    if (placed < 0) {
        trace_free(out);
        goto done;
    }
    if (placed < n) {
        report_cycle(&C);
        trace_free(out);
        goto done;
    }
    if (out->nops == 0) {
        trace_free(out);
        diag_set(d, DIAG_E_RANGE, doc->name, 1, "nodes",
                 "no node strata can run (compute, communication or memory nodes with work)");
        goto done;
    }
    out->ndevices = 1;
    snprintf(out->path, sizeof out->path, "%s", doc->name);
    snprintf(out->name, sizeof out->name, "imported from %.60s", doc->name);
    rc = 0;
done:
    free(C.nd);
    free(C.pool);
    free(C.succ_off);
    free(C.succ);
    free(C.eff);
    free(C.deps);
    imp_map_free(&C.byid);
    return rc;
}

/* Add x to the nodes if it is one.  protobuf JSON leaves out fields at
 * their default (id 0, type INVALID_NODE); an object with none of a node's
 * fields is the global metadata. */
static int chakra_take(const struct jsondoc *doc, const cJSON *x, const cJSON ***items,
                       uint32_t *n, uint32_t *cap, struct import_stats *st, struct diag *d)
{
    static const char *const keys[] = {"id",       "name",     "type",     "ctrlDeps",
                                       "ctrl_deps", "dataDeps", "data_deps"};
    if (!cJSON_IsObject(x))
        return diag_set(d, DIAG_E_TYPE, doc->name, jsondoc_line(doc, x), "",
                        "a Chakra trace holds node objects, not a %s", jsondoc_type_name(x));
    int node = 0;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        node |= cJSON_GetObjectItemCaseSensitive(x, keys[k]) != NULL;
    if (!node)
        return 0;
    IMP_GROW(*items, *n, *cap);
    (*items)[(*n)++] = x;
    st->cpu_ops++;
    return 0;
}

int import_chakra(const char *path, struct trace *out, struct import_stats *st, struct diag *d)
{
    memset(st, 0, sizeof *st);
    char *text;
    size_t len;
    if (gz_read_all(path, &text, &len, d) != 0)
        return -1;
    int open = 0;
    char *w = chakra_wrap(text, &open);
    if (open) {
        int line = 1;
        for (const char *c = text; *c; c++)
            line += *c == '\n';
        free(text);
        free(w);
        return diag_set(d, DIAG_E_PARSE, path, line, "",
                        "the file ends inside a JSON value (cut short?)");
    }
    free(text);
    struct jsondoc doc;
    int rc = jsondoc_parse_string(w, path, &doc, d);
    free(w);
    if (rc != 0)
        return -1;
    /* the nodes: the objects one after another, or the elements of one
     * array, or of a "nodes" array */
    const cJSON *top = doc.root, *e, *x;
    if (cJSON_GetArraySize(top) == 1 && cJSON_IsArray(cJSON_GetArrayItem(top, 0)))
        top = cJSON_GetArrayItem(top, 0);
    uint32_t n = 0, cap = 0;
    const cJSON **items = NULL;
    cJSON_ArrayForEach(e, top)
    {
        const cJSON *sub = cJSON_GetObjectItemCaseSensitive(e, "nodes");
        if (!cJSON_IsArray(sub)) {
            rc = chakra_take(&doc, e, &items, &n, &cap, st, d);
        } else {
            cJSON_ArrayForEach(x, sub)
            {
                if ((rc = chakra_take(&doc, x, &items, &n, &cap, st, d)) != 0)
                    break;
            }
        }
        if (rc != 0)
            break;
    }
    if (rc == 0 && n == 0)
        rc = diag_set(d, DIAG_E_UNSUPPORTED, path, 1, "", "not a Chakra trace: no node objects");
    if (rc == 0)
        rc = chakra_build(&doc, items, n, out, st, d);
    free(items);
    jsondoc_free(&doc);
    return rc;
}
