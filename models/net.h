/* net.h: the links of a system as bandwidth servers.
 *
 * Each link of a struct hw_system is full duplex: one fluid server per
 * direction, with the link's bandwidth per direction (after its
 * efficiency).  A node with a forwarding bandwidth (an NVSwitch's, a host
 * memory's) is one more server that every transfer through it shares.  A
 * transfer puts one flow of its bytes on every server of its route at once,
 * so it runs at the rate of its most contended hop, and transfers that
 * share a link, switch or host contend there (max-min fair, flow.h).  What
 * it ignores: packetisation and credit flow control, adaptive routing (the
 * route is the fewest-hop one, fixed), and a switch's internal blocking
 * beyond its one forwarding figure.
 *
 * Ownership: net_create allocates and registers the servers with the
 * engine; net_destroy frees them.
 */
#ifndef STRATA_NET_H
#define STRATA_NET_H

#include <stdint.h>

#include "engine.h"
#include "flow.h"
#include "system.h"

struct net {
    const struct hw_system *sys;
    struct flowsrv *link;       /* 2 per link: [2k] a -> b, [2k + 1] b -> a */
    struct flowsrv *node;       /* per node; used only where bw_bytes_per_s > 0 */
    uint32_t *scratch;          /* routing work space, 2 * nnodes */
};

struct net *net_create(struct engine *e, const struct hw_system *s);
void net_destroy(struct net *n);
static inline struct flowsrv *net_link_srv(struct net *n, uint32_t link, uint8_t dir)
{
    return &n->link[2 * (size_t)link + dir];
}

#endif
