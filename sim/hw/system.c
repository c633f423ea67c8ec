/* system.c: see system.h.  A system file is read by sysload.c (hw_load,
 * hwload.h). */
#include "system.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static const char *const node_kind_names[SN_COUNT] = {
#define SYS_NODE_NAME_(e, n) [e] = n,
    SYS_NODE_KIND_MAP(SYS_NODE_NAME_)
#undef SYS_NODE_NAME_
};

const char *sys_node_kind_name(enum sys_node_kind k)
{
    return (unsigned)k < SN_COUNT ? node_kind_names[k] : "?";
}

static const char *const transport_names[ST_COUNT] = {
#define SYS_TRANSPORT_NAME_(e, n) n,
    SYS_TRANSPORT_MAP(SYS_TRANSPORT_NAME_)
#undef SYS_TRANSPORT_NAME_
};

const char *sys_transport_name(enum sys_transport t)
{
    return (unsigned)t < ST_COUNT ? transport_names[t] : "?";
}

void sys_free(struct hw_system *s)
{
    free(s->nodes);
    free(s->links);
    free(s->adj_off);
    free(s->adj);
    memset(s, 0, sizeof *s);
}

void sys_index(struct hw_system *s)
{
    free(s->adj_off);
    free(s->adj);
    s->adj_off = sim_xcalloc((size_t)s->nnodes + 1, sizeof *s->adj_off);
    s->adj = sim_xcalloc(2 * (size_t)s->nlinks + 1, sizeof *s->adj);
    for (uint32_t k = 0; k < s->nlinks; k++) {
        s->adj_off[s->links[k].a + 1]++;
        if (s->links[k].b != s->links[k].a)
            s->adj_off[s->links[k].b + 1]++;
    }
    for (uint32_t v = 0; v < s->nnodes; v++)
        s->adj_off[v + 1] += s->adj_off[v];
    uint32_t *fill = sim_xcalloc((size_t)s->nnodes + 1, sizeof *fill);
    for (uint32_t k = 0; k < s->nlinks; k++) {
        uint32_t a = s->links[k].a, b = s->links[k].b;
        s->adj[s->adj_off[a] + fill[a]++] = k;
        if (b != a)
            s->adj[s->adj_off[b] + fill[b]++] = k;
    }
    free(fill);
}

int sys_node_index(const struct hw_system *s, const char *name)
{
    for (uint32_t i = 0; i < s->nnodes; i++)
        if (strcmp(s->nodes[i].name, name) == 0)
            return (int)i;
    return -1;
}

void sys_from_chip(const struct hw_config *chip, uint32_t ndev, const char (*names)[32],
                   struct hw_system *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", chip->name);
    snprintf(out->path, sizeof out->path, "%s", chip->path);
    out->implied = 1;
    out->chip = *chip;
    out->ndevices = ndev;
    int peer = chip->lv_peer >= 0;
    out->nnodes = ndev + 1 + (uint32_t)peer;
    out->nodes = sim_xcalloc(out->nnodes, sizeof *out->nodes);
    for (uint32_t i = 0; i < ndev; i++) {
        snprintf(out->nodes[i].name, SYS_NAME_MAX, "%s", names[i]);
        out->nodes[i].kind = SN_DEVICE;
    }
    uint32_t host = ndev, sw = ndev + 1;
    snprintf(out->nodes[host].name, SYS_NAME_MAX, "host");
    out->nodes[host].kind = SN_HOST;
    if (peer) {
        snprintf(out->nodes[sw].name, SYS_NAME_MAX, "switch");
        out->nodes[sw].kind = SN_SWITCH;
    }
    /* peer links first: between two devices they win the tie with the host path */
    out->nlinks = ndev * (1u + (uint32_t)peer);
    out->links = sim_xcalloc(out->nlinks, sizeof *out->links);
    uint32_t k = 0;
    for (int pass = peer ? 0 : 1; pass < 2; pass++) {
        const struct hw_level *L = &chip->level[pass == 0 ? chip->lv_peer : chip->lv_host];
        for (uint32_t i = 0; i < ndev; i++, k++) {
            struct sys_link *l = &out->links[k];
            snprintf(l->name, SYS_NAME_MAX, "%s", L->name);
            l->a = i;
            l->b = pass == 0 ? sw : host;
            l->bw_bytes_per_s = level_rate(L);
            l->latency_ps = L->latency_ps;
            l->level = pass == 0 ? chip->lv_peer : chip->lv_host;
            l->transport = pass == 0 ? ST_PEER : ST_PCIE;
        }
    }
    sys_index(out);
}

/* A node whose links outnumber this is a hub (a rail's leaf switch, an
 * NVSwitch of 72 GPUs, the one switch of a chip config's implied
 * system): bfs looks for the target from its side before scanning one. */
#define BFS_HUB_DEG 32

static uint32_t other_end(const struct sys_link *l, uint32_t n)
{
    return l->a == n ? l->b : l->a;
}

/* May a search that reached node u by link k (prev[u] - 1) go on from u?
 * The rule bfs applies when it dequeues u. */
static int bfs_expands(const struct hw_system *s, uint32_t a, uint32_t u, uint32_t k,
                       int through_hosts, int via_devices)
{
    if (u == a)
        return 1;
    if (s->nodes[u].kind == SN_DEVICE && !via_devices && !s->links[k].forward)
        return 0;
    return through_hosts || s->nodes[u].kind != SN_HOST;
}

/* The first link in u's order that a search expanding u takes to b, +1;
 * 0 if none. */
static uint32_t bfs_step_to(const struct hw_system *s, uint32_t a, uint32_t u, uint32_t b,
                            int via_devices)
{
    int via_dev = u != a && s->nodes[u].kind == SN_DEVICE && !via_devices;
    for (uint32_t i = s->adj_off[u]; i < s->adj_off[u + 1]; i++) {
        const struct sys_link *l = &s->links[s->adj[i]];
        if (other_end(l, u) == b && l->a != l->b && (!via_dev || l->forward))
            return s->adj[i] + 1;
    }
    return 0;
}

/* bfs has dequeued hub n (expanding it) and not yet reached b: finish the
 * search from b's side without scanning n's links, when that is sure to
 * give what the scan would.  Links are in link order at every node, so
 * the scan reaches, in order of link index: b itself over a link of n's
 * (then prev[b] is the first such), else first the b-neighbour u whose
 * link from n comes first, and u, dequeued before any other neighbour of
 * b found later, reaches b by its own first link there.  That holds when
 * no neighbour of b that would reach it is queued already (it is
 * dequeued first); then it returns 0, and bfs scans n as usual.  Sets
 * prev[] for what it reaches (appending it to the queue at *tail) and
 * returns 1 when it reached b.  Cost: b's links and their far ends'. */
static int bfs_hub(const struct hw_system *s, uint32_t a, uint32_t n, uint32_t b, int through_hosts,
                   int via_devices, uint32_t *prev, uint32_t *queue, uint32_t *tail)
{
    int via_dev_n = n != a && s->nodes[n].kind == SN_DEVICE && !via_devices;
    uint32_t direct = UINT32_MAX, best = UINT32_MAX, best_u = 0;
    for (uint32_t i = s->adj_off[b]; i < s->adj_off[b + 1]; i++) {
        uint32_t kb = s->adj[i];
        const struct sys_link *lb = &s->links[kb];
        uint32_t u = other_end(lb, b);
        if (lb->a == lb->b)
            continue;
        if (u == n) {
            if ((!via_dev_n || lb->forward) && kb < direct)
                direct = kb;
            continue;
        }
        if (prev[u] != 0) {
            /* queued already (or dequeued without reaching b: then it
             * cannot): if it reaches b, the scan must run */
            if (u != a && bfs_expands(s, a, u, prev[u] - 1, through_hosts, via_devices) &&
                bfs_step_to(s, a, u, b, via_devices) != 0)
                return 0;
            continue;
        }
        /* u not reached yet: n's first link to it */
        for (uint32_t j = s->adj_off[u]; j < s->adj_off[u + 1]; j++) {
            uint32_t k = s->adj[j];
            const struct sys_link *l = &s->links[k];
            if (k >= best || (via_dev_n && !l->forward) || l->a == l->b || other_end(l, u) != n)
                continue;
            /* the first of n's links to u decides how u was reached */
            if (bfs_expands(s, a, u, k, through_hosts, via_devices) &&
                bfs_step_to(s, a, u, b, via_devices) != 0) {
                best = k;
                best_u = u;
            }
            break;
        }
    }
    if (direct != UINT32_MAX) {
        prev[b] = direct + 1;
        queue[(*tail)++] = b;
        return 1;
    }
    if (best == UINT32_MAX)
        return 0;
    prev[best_u] = best + 1;
    queue[(*tail)++] = best_u;
    prev[b] = bfs_step_to(s, a, best_u, b, via_devices);
    queue[(*tail)++] = b;
    return 1;
}

/* Breadth-first search from a; prev[n] = the link that reached n (+1), 0 =
 * not reached.  Stops when target is reached (or, for target < 0, at the
 * first host node).  With through_hosts 0 a path may not pass a host (a
 * peer-to-peer path).  A device forwards only between links marked
 * `forward`, or, with via_devices, between any of its links (a GPU relaying
 * a copy to its own NIC: NCCL's PXN).  Returns the node found, or -1;
 * *reached: how many nodes it reached (queue[0 .. *reached), the entries of
 * prev it set: bfs_clear).
 *
 * prev must be all zero on entry (bfs_clear leaves it so), which spares a
 * memset of every node per route (a 16384-GPU cluster has 35,000 nodes and
 * its rings 16384 hops).  The search stops when it first reaches the
 * target, not when it dequeues it: the target's prev, and its parents',
 * are set once, when first reached, so the route is the same, and it
 * skips the rest of the last layers (every other NIC of a rail). */
static int bfs(const struct hw_system *s, uint32_t a, int target, int through_hosts, int via_devices,
               uint32_t *scratch, uint32_t *reached)
{
    uint32_t *prev = scratch, *queue = scratch + s->nnodes;
    uint32_t head = 0, tail = 0;
    SIM_CHECK(prev[a] == 0);
    queue[tail++] = a;
    prev[a] = UINT32_MAX;
    *reached = tail;
    if ((target >= 0 && a == (uint32_t)target) || (target < 0 && s->nodes[a].kind == SN_HOST))
        return (int)a;
    while (head < tail) {
        uint32_t n = queue[head++];
        /* a transfer passes through switches and hosts, never through
         * another device */
        /* a device forwards only between links that route through it */
        int via_dev = n != a && s->nodes[n].kind == SN_DEVICE && !via_devices;
        if (via_dev && !s->links[prev[n] - 1].forward)
            continue;
        if (n != a && !through_hosts && s->nodes[n].kind == SN_HOST)
            continue;
        if (target >= 0 && s->adj_off && s->adj_off[n + 1] - s->adj_off[n] > BFS_HUB_DEG &&
            bfs_hub(s, a, n, (uint32_t)target, through_hosts, via_devices, prev, queue, &tail)) {
            *reached = tail;
            return target;
        }
        /* n's links, in link order (a scan of every link per node made
         * a route on a 2048-node cluster take a fifth of a second) */
        uint32_t i0 = s->adj_off ? s->adj_off[n] : 0, i1 = s->adj_off ? s->adj_off[n + 1] : s->nlinks;
        for (uint32_t i = i0; i < i1; i++) {
            uint32_t k = s->adj_off ? s->adj[i] : i;
            const struct sys_link *l = &s->links[k];
            if (via_dev && !l->forward)
                continue;
            uint32_t m;
            if (l->a == n)
                m = l->b;
            else if (l->b == n)
                m = l->a;
            else
                continue;
            if (prev[m] == 0) {
                prev[m] = k + 1;
                queue[tail++] = m;
                *reached = tail;
                if ((target >= 0 && m == (uint32_t)target) ||
                    (target < 0 && s->nodes[m].kind == SN_HOST))
                    return (int)m;
            }
        }
    }
    return -1;
}

/* Zero the prev entries a search set (scratch as bfs left it). */
static void bfs_clear(const struct hw_system *s, uint32_t *scratch, uint32_t reached)
{
    const uint32_t *queue = scratch + s->nnodes;
    for (uint32_t i = 0; i < reached; i++)
        scratch[queue[i]] = 0;
}

static int walk_back(const struct hw_system *s, uint32_t a, uint32_t b, const uint32_t *prev,
                     struct sys_route *r)
{
    memset(r, 0, sizeof *r);
    uint32_t n = b, hops = 0, tmp[SYS_MAX_HOPS];
    uint8_t dir[SYS_MAX_HOPS];
    while (n != a) {
        if (hops == SYS_MAX_HOPS)
            return -1;
        uint32_t k = prev[n] - 1;
        const struct sys_link *l = &s->links[k];
        dir[hops] = l->b == n ? 0 : 1;  /* crossed towards n */
        tmp[hops++] = k;
        n = l->b == n ? l->a : l->b;
    }
    int staged = 0;
    for (uint32_t i = 0; i < hops; i++) {     /* reverse into source-first order */
        uint32_t k = tmp[hops - 1 - i];
        r->link[i] = k;
        r->dir[i] = dir[hops - 1 - i];
        r->latency_ps += s->links[k].latency_ps;
        if (i > 0) {
            const struct sys_link *l = &s->links[k];
            uint32_t from = r->dir[i] == 0 ? l->a : l->b;
            int host = s->nodes[from].kind == SN_HOST;
            if (host && staged)
                continue;       /* staged already: this host only forwards */
            staged |= host;
            if (s->nodes[from].bw_bytes_per_s > 0) {
                r->via_times[r->nvia] = host ? 2 : 1;
                r->via[r->nvia++] = from;
            }
        }
    }
    r->nhops = hops;
    return 0;
}

int sys_route(const struct hw_system *s, uint32_t a, uint32_t b, struct sys_route *r,
              uint32_t *scratch)
{
    SIM_CHECK(a < s->nnodes && b < s->nnodes);
    /* a peer-to-peer path if there is one; staging in a host only if not */
    uint32_t reached;
    int found = bfs(s, a, (int)b, 0, 0, scratch, &reached) >= 0;
    if (!found) {
        bfs_clear(s, scratch, reached);
        found = bfs(s, a, (int)b, 1, 0, scratch, &reached) >= 0;
    }
    int rc = found ? walk_back(s, a, b, scratch, r) : -1;
    bfs_clear(s, scratch, reached);
    return rc;
}

int sys_route_pxn(const struct hw_system *s, uint32_t a, uint32_t b, struct sys_route *r,
                  uint32_t *scratch)
{
    if (sys_route(s, a, b, r, scratch) == 0)
        return 0;
    SIM_CHECK(a < s->nnodes && b < s->nnodes);
    uint32_t reached;
    int rc = bfs(s, a, (int)b, 0, 1, scratch, &reached) >= 0 ? walk_back(s, a, b, scratch, r) : -1;
    bfs_clear(s, scratch, reached);
    return rc;
}

int sys_route_host(const struct hw_system *s, uint32_t dev, struct sys_route *r,
                   uint32_t *scratch)
{
    uint32_t reached;
    int h = bfs(s, dev, -1, 1, 0, scratch, &reached);
    int rc = h >= 0 ? walk_back(s, dev, (uint32_t)h, scratch, r) : -1;
    bfs_clear(s, scratch, reached);
    if (rc != 0)
        return -1;
    /* the host's own memory is the far end of the transfer */
    if (s->nodes[h].bw_bytes_per_s > 0 && r->nvia < SYS_MAX_HOPS) {
        r->via_times[r->nvia] = 1;
        r->via[r->nvia++] = (uint32_t)h;
    }
    return 0;
}
