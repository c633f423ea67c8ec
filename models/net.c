/* net.c: see net.h. */
#include "net.h"

#include <stdio.h>
#include <stdlib.h>

#include "check.h"

struct net *net_create(struct engine *e, const struct hw_system *s)
{
    struct net *n = sim_xcalloc(1, sizeof *n);
    n->sys = s;
    n->link = sim_xcalloc(2 * (size_t)s->nlinks + 1, sizeof *n->link);
    n->node = sim_xcalloc(s->nnodes, sizeof *n->node);
    n->scratch = sim_xcalloc(2 * (size_t)s->nnodes, sizeof *n->scratch);
    for (uint32_t k = 0; k < s->nlinks; k++) {
        const struct sys_link *l = &s->links[k];
        char name[24];
        for (uint8_t dir = 0; dir < 2; dir++) {
            snprintf(name, sizeof name, "%.12s%u%c", l->name, k, dir ? '<' : '>');
            flowsrv_init(net_link_srv(n, k, dir), e, name, l->bw_bytes_per_s);
        }
    }
    for (uint32_t i = 0; i < s->nnodes; i++)
        if (s->nodes[i].bw_bytes_per_s > 0)
            flowsrv_init(&n->node[i], e, s->nodes[i].name, s->nodes[i].bw_bytes_per_s);
    return n;
}

void net_destroy(struct net *n)
{
    if (n == NULL)
        return;
    for (uint32_t k = 0; k < 2 * n->sys->nlinks; k++)
        flowsrv_destroy(&n->link[k]);
    for (uint32_t i = 0; i < n->sys->nnodes; i++)
        if (n->sys->nodes[i].bw_bytes_per_s > 0)
            flowsrv_destroy(&n->node[i]);
    free(n->link);
    free(n->node);
    free(n->scratch);
    free(n);
}
