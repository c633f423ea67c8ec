/* tload_graph.c: the trace loader's checks of the whole trace: deps,
 * order, cycles and collectives (see tload_graph.h). */
#include "tload_graph.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "trace_coll.h"
#include "trace_field.h"
#include "uheap.h"

static void depids_put(struct tload *L, const char *s, size_t len)
{
    if (L->ndepids + len + 1 > L->depids_cap) {
        size_t cap = L->depids_cap ? L->depids_cap : 4096;
        while (cap < L->ndepids + len + 1)
            cap *= 2;
        L->depids = sim_xrealloc(L->depids, cap);
        L->depids_cap = cap;
    }
    memcpy(L->depids + L->ndepids, s, len);
    L->depids[L->ndepids + len] = '\0';
    L->ndepids += len + 1;
}

void tload_graph_keep_deps(struct tload *L, const cJSON *o)
{
    const cJSON *deps = cJSON_GetObjectItemCaseSensitive(o, "deps");
    for (const cJSON *c = deps ? deps->child : NULL; c != NULL; c = c->next) {
        char num[32];
        if (cJSON_IsString(c) && c->valuestring != NULL) {
            size_t len = strlen(c->valuestring);
            depids_put(L, c->valuestring, len < TRACE_ID_MAX ? len : 0);
        } else if (cJSON_IsNumber(c) && c->valuedouble >= 0 &&
                   c->valuedouble <= (double)TRACE_NUMERIC_ID_CAP &&
                   c->valuedouble == floor(c->valuedouble)) {
            int w = snprintf(num, sizeof num, "%" PRIu64, (uint64_t)c->valuedouble);
            depids_put(L, num, (size_t)w);
        } else {
            depids_put(L, "", 0);
        }
    }
}

/* Pass 2 for ops[i] from its tree: deps to indices, with the diagnostic
 * of a dep that names no op, itself or one already listed.  mark[j] ==
 * i + 1 once j is seen. */
static int resolve_deps_tree(struct tload *L, const cJSON *o, uint32_t i, uint32_t *next,
                             uint32_t *mark)
{
    struct trace *t = L->t;
    struct op *op = &t->ops[i];
    op->deps_off = *next;
    if (op->ndeps == 0)
        return 0;
    snprintf(L->prefix, sizeof L->prefix, "ops[%u]", i);
    const cJSON *deps = cJSON_GetObjectItemCaseSensitive(o, "deps");
    uint32_t j = 0;
    for (const cJSON *c = deps->child; c != NULL; c = c->next, j++) {
        char key[32], id[TRACE_ID_MAX], msg[256];
        snprintf(key, sizeof key, "deps[%u]", j);
        int64_t k = -1;
        if (cJSON_IsString(c) && c->valuestring != NULL &&
            strlen(c->valuestring) >= TRACE_ID_MAX) {
            snprintf(msg, sizeof msg, "no op has the id \"%.60s...\"", c->valuestring);
            return tload_err(L, DIAG_E_UNKNOWN_NAME, c, 0, key, "%s", msg);
        }
        if (tload_id_text(L, c, key, id))
            return -1;
        k = nameidx_find(&L->ids, id);
        if (k < 0) {
            snprintf(msg, sizeof msg, "no op has the id \"%s\"", id);
            return tload_err(L, DIAG_E_UNKNOWN_NAME, c, 0, key, "%s", msg);
        }
        if ((uint32_t)k == i) {
            snprintf(msg, sizeof msg, "op \"%s\" depends on itself", id);
            return tload_err(L, DIAG_E_CYCLE, c, 0, key, "%s", msg);
        }
        if (mark[k] == i + 1) {
            snprintf(msg, sizeof msg, "\"%s\" is listed twice", id);
            return tload_err(L, DIAG_E_DUPLICATE, c, 0, key, "%s", msg);
        }
        mark[k] = i + 1;
        t->deps[(*next)++] = (uint32_t)k;
    }
    return 0;
}

/* Pass 2 for ops[i] from the ids pass 1 kept (*pos walks L->depids); the
 * op's tree is parsed again only to report a bad dep. */
static int resolve_deps(struct tload *L, uint32_t i, uint32_t *next, uint32_t *mark,
                        size_t *pos)
{
    struct trace *t = L->t;
    struct op *op = &t->ops[i];
    op->deps_off = *next;
    for (uint32_t j = 0; j < op->ndeps; j++) {
        const char *id = L->depids + *pos;
        *pos += strlen(id) + 1;
        int64_t k = id[0] != '\0' ? nameidx_find(&L->ids, id) : -1;
        if (k >= 0 && (uint32_t)k != i && mark[k] != i + 1) {
            mark[k] = i + 1;
            t->deps[(*next)++] = (uint32_t)k;
            continue;
        }
        /* a bad dep: the tree says which and where */
        for (uint32_t q = op->deps_off; q < *next; q++)
            mark[t->deps[q]] = 0;
        *next = op->deps_off;
        cJSON *o = tload_elem(L, i);
        if (o == NULL)
            return -1;
        int rc = resolve_deps_tree(L, o, i, next, mark);
        tload_elem_done(L, o);
        if (rc == 0)        /* cannot be: the ids are the tree's */
            return diag_set(L->d, DIAG_E_RANGE, L->file, op->line, "deps",
                            "internal: ops[%u]'s deps read differently twice", i);
        return rc;
    }
    return 0;
}

int tload_graph_resolve(struct tload *L)
{
    struct trace *t = L->t;
    uint32_t n = t->nops;
    t->deps = sim_xcalloc(t->ndeps, sizeof *t->deps);
    uint32_t *mark = sim_xcalloc(n, sizeof *mark);
    uint32_t next = 0;
    size_t pos = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (resolve_deps(L, i, &next, mark, &pos)) {
            free(mark);
            return -1;
        }
    }
    free(mark);
    free(L->depids);
    L->depids = NULL;
    return 0;
}

/* Names one cycle among the ops Kahn's algorithm could not order
 * (indeg[i] > 0).  Every such op waits for another such op, so walking
 * "first unfinished dep" from any of them must come back on itself. */
static int report_cycle(struct tload *L, const uint32_t *indeg)
{
    struct trace *t = L->t;
    uint32_t n = t->nops;
    uint32_t *pos = sim_xcalloc(n, sizeof *pos); /* step + 1 at which an op was visited */
    uint32_t *path = sim_xcalloc(n, sizeof *path);
    uint32_t start = 0;
    while (indeg[start] == 0)
        start++;
    uint32_t len = 0, cur = start;
    while (pos[cur] == 0) {
        pos[cur] = len + 1;
        path[len++] = cur;
        const struct op *op = &t->ops[cur];
        uint32_t next = cur;
        for (uint32_t j = 0; j < op->ndeps; j++) {
            if (indeg[t->deps[op->deps_off + j]] > 0) {
                next = t->deps[op->deps_off + j];
                break;
            }
        }
        cur = next;
    }
    /* The cycle is path[pos[cur] - 1 .. len); start it at its earliest op. */
    uint32_t first = pos[cur] - 1, best = first;
    for (uint32_t k = first; k < len; k++)
        if (path[k] < path[best])
            best = k;
    uint32_t clen = len - first, victim = path[best];
    char msg[480];
    size_t used = (size_t)snprintf(msg, sizeof msg, "dependency cycle: ");
    for (uint32_t s = 0; s <= clen && used < sizeof msg; s++) {
        uint32_t k = first + (best - first + s) % clen;
        int w = snprintf(msg + used, sizeof msg - used, "%s\"%s\"", s ? " -> " : "",
                         op_id(t, &t->ops[path[k]]));
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (used < sizeof msg)
        snprintf(msg + used, sizeof msg - used, " (each op waits for the next)");
    else
        snprintf(msg + sizeof msg - 4, 4, "...");
    free(pos);
    free(path);

    cJSON *o = tload_elem(L, victim);
    if (o == NULL)
        return -1;
    int line = jsondoc_line(L->doc, cJSON_GetObjectItemCaseSensitive(o, "deps"));
    tload_elem_done(L, o);
    snprintf(L->prefix, sizeof L->prefix, "ops[%u]", victim);
    return tload_err(L, DIAG_E_CYCLE, NULL, line ? line : t->ops[victim].line, "deps", "%s", msg);
}

int tload_graph_order(struct tload *L)
{
    struct trace *t = L->t;
    uint32_t n = t->nops;
    t->topo = sim_xcalloc(n, sizeof *t->topo);
    /* every dep listed before its user (how traces are written): the
     * smallest op not yet placed always has its deps placed, so the order
     * is the file's */
    int forward = 1;
    for (uint32_t i = 0; i < n && forward; i++)
        for (uint32_t j = 0; j < t->ops[i].ndeps; j++)
            forward &= t->deps[t->ops[i].deps_off + j] < i;
    if (forward) {
        for (uint32_t i = 0; i < n; i++)
            t->topo[i] = i;
        return 0;
    }
    uint32_t *indeg = sim_xcalloc(n, sizeof *indeg);
    uint32_t *off = sim_xcalloc((size_t)n + 1, sizeof *off);       /* dependents, CSR */
    uint32_t *users = sim_xcalloc(t->ndeps, sizeof *users);
    uint32_t *heap = sim_xcalloc(n, sizeof *heap);
    for (uint32_t i = 0; i < n; i++) {
        indeg[i] = t->ops[i].ndeps;
        for (uint32_t j = 0; j < t->ops[i].ndeps; j++)
            off[t->deps[t->ops[i].deps_off + j] + 1]++;
    }
    for (uint32_t i = 0; i < n; i++)
        off[i + 1] += off[i];
    uint32_t *fill = sim_xcalloc(n, sizeof *fill);
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t j = 0; j < t->ops[i].ndeps; j++) {
            uint32_t dep = t->deps[t->ops[i].deps_off + j];
            users[off[dep] + fill[dep]++] = i;
        }
    }
    free(fill);

    uint32_t nheap = 0, done = 0;
    for (uint32_t i = 0; i < n; i++)
        if (indeg[i] == 0)
            uheap_push(heap, &nheap, i);
    while (nheap > 0) {
        uint32_t i = uheap_pop(heap, &nheap);
        t->topo[done++] = i;
        for (uint32_t u = off[i]; u < off[i + 1]; u++)
            if (--indeg[users[u]] == 0)
                uheap_push(heap, &nheap, users[u]);
    }
    int rc = done == n ? 0 : report_cycle(L, indeg);
    free(indeg);
    free(off);
    free(users);
    free(heap);
    return rc;
}

/* Every member of every group issues as many collectives on it (mirrors
 * aside); 0, or -1 with the first collective that has no partner. */
static int colls_counted(struct tload *L)
{
    struct trace *t = L->t;
    uint32_t nslots = t->groups[t->ngroups - 1].off + t->groups[t->ngroups - 1].n;
    uint32_t *cnt = sim_xcalloc(nslots, sizeof *cnt);
    for (uint32_t i = 0; i < t->nops; i++) {
        const struct op *op = &t->ops[i];
        if (op->kind != OP_COLLECTIVE)
            continue;
        const struct trace_group *g = &t->groups[op->u.coll.group];
        cnt[g->off + (uint32_t)trace_group_rank(t, op->u.coll.group, op->device)]++;
    }
    trace_coll_mark_mirrors(t);
    for (uint32_t gi = 0; gi < t->ngroups; gi++) {
        const struct trace_group *g = &t->groups[gi];
        uint32_t r0 = 0;            /* the first member with ops: the others must match it */
        while (r0 < g->n && t->mirror != NULL && t->mirror[t->group_dev[g->off + r0]])
            r0++;
        for (uint32_t r = r0 + 1; r < g->n; r++) {
            if (cnt[g->off + r] == cnt[g->off + r0] ||
                (t->mirror != NULL && t->mirror[t->group_dev[g->off + r]]))
                continue;
            uint32_t few = cnt[g->off + r] < cnt[g->off + r0] ? r : r0, many = few == r ? r0 : r;
            char msg[400];
            snprintf(msg, sizeof msg, "device \"%s\" takes part in %u collectives on the group "
                     "starting [\"%s\", ...] but \"%s\" in %u: every member%s must issue each one",
                     t->devices[t->group_dev[g->off + many]], cnt[g->off + many],
                     t->devices[t->group_dev[g->off]], t->devices[t->group_dev[g->off + few]],
                     cnt[g->off + few], t->symmetric ? " with ops" : "");
            /* point at the first collective of the group that has no partner */
            uint32_t seen = 0, at = 0;
            for (uint32_t i = 0; i < t->nops; i++)
                if (t->ops[i].kind == OP_COLLECTIVE && t->ops[i].u.coll.group == gi &&
                    t->ops[i].device == t->group_dev[g->off + many] &&
                    ++seen == cnt[g->off + few] + 1)
                    at = i;
            free(cnt);
            snprintf(L->prefix, sizeof L->prefix, "ops[%u]", at);
            return tload_err(L, DIAG_E_RANGE, NULL, t->ops[at].line, "group", "%s", msg);
        }
    }
    free(cnt);
    return 0;
}

int tload_graph_colls(struct tload *L)
{
    struct trace *t = L->t;
    if (t->ngroups == 0)
        return 0;
    if (colls_counted(L))
        return -1;
    trace_index_colls(t);   /* the counts agree: number them */
    int rc = 0;
    for (uint32_t ci = 0; ci < t->ncolls && rc == 0; ci++) {
        const struct trace_coll *c = &t->colls[ci];
        uint32_t gn = t->groups[c->group].n, r0 = 0;
        while (r0 < gn && t->coll_ops[c->ops_off + r0] == UINT32_MAX)
            r0++;
        const struct op *a = &t->ops[t->coll_ops[c->ops_off + r0]];
        for (uint32_t r = r0 + 1; r < gn && rc == 0; r++) {
            uint32_t bi = t->coll_ops[c->ops_off + r];
            if (bi == UINT32_MAX)
                continue;           /* a mirror */
            const struct op *b = &t->ops[bi];
            const char *what = a->u.coll.what != b->u.coll.what ? "collective"
                               : a->u.coll.bytes != b->u.coll.bytes ? "bytes"
                               : a->dtype != b->dtype ? "dtype"
                               : a->u.coll.algo != b->u.coll.algo ? "algo"
                               : a->u.coll.root != b->u.coll.root ? "root" : NULL;
            if (what == NULL)
                continue;
            snprintf(L->prefix, sizeof L->prefix, "ops[%u]", bi);
            rc = tload_err(L, DIAG_E_RANGE, NULL, b->line, what,
                           "op '%s' is the partner of op '%s' (line %d) in one collective (the same "
                           "turn on the same group) but their %s differ", op_id(t, b), op_id(t, a), a->line, what);
        }
    }
    return rc;
}
