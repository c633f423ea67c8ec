/* system.h: a system is devices plus the links between them.
 *
 * A system file (configs/systems/, schema in configs/README.md) names the
 * chip every device is (a chip config), the devices, the other nodes a
 * transfer may pass through (switches, CPU sockets / host memory) and the
 * links.  hw_load() (hwload.h) reads and checks it; sys_from_chip() makes
 * the system a plain chip config implies for a trace's devices: each
 * device on the chip's host link to one host node and, when the chip has a
 * peer link, on that link to one non-blocking switch.
 *
 * Every link is full duplex: a bandwidth per direction.  A node may have a
 * forwarding bandwidth that every transfer through it shares (an NVSwitch's
 * or a host memory's); 0 means it never limits.  A copy between devices
 * takes a peer-to-peer path (switches and links only) when there is one.  A copy between two devices
 * that has to pass a host (no peer-to-peer path) is staged in the memory of
 * the first host on its way: written there and read back, twice its bytes;
 * later hosts on the way only forward it (root complex to root complex).  sys_route() finds the
 * path with the fewest hops (ties go to the link listed first: list the
 * fastest links first), so routes are the same on every run.
 *
 * Ownership: hw_load and sys_from_chip allocate; sys_free releases.
 */
#ifndef STRATA_SYSTEM_H
#define STRATA_SYSTEM_H

#include <stdint.h>

#include "chip.h"
#include "diag.h"

#define SYS_NAME_MAX 32             /* bytes of a node or link name, NUL included */
#define SYS_MAX_HOPS 16             /* links one route may cross */
#define SYS_MAX_NODES 65536         /* devices plus other nodes */
#define SYS_MAX_LINKS 262144

#define SYS_NODE_KIND_MAP(X)                                                \
    X(SN_DEVICE, "device")      /* a chip of the system's chip config */   \
    X(SN_SWITCH, "switch")      /* NVSwitch, PCIe switch, network switch */ \
    X(SN_HOST, "host")          /* a CPU socket with its memory (root complex) */

enum sys_node_kind {
#define SYS_NODE_ENUM_(e, n) e,
    SYS_NODE_KIND_MAP(SYS_NODE_ENUM_)
#undef SYS_NODE_ENUM_
    SN_COUNT
};

struct sys_node {
    char name[SYS_NAME_MAX];
    enum sys_node_kind kind;
    double bw_bytes_per_s;      /* forwarding bandwidth all transfers through it share; 0 = none */
    uint8_t nvls;               /* a switch that reduces and multicasts (NVLink SHARP) */
    int line;                   /* where the file defines it (0 if implied) */
};

/* What a link is to a collective library: its per-hop latency and protocol
 * figures differ by class (NCCL's NVLINK, PCI and NET). */
#define SYS_TRANSPORT_MAP(X)                                    \
    X(ST_PEER, "peer")          /* NVLink, xGMI, ICI, UltraFusion */ \
    X(ST_PCIE, "pcie")          /* PCIe, and socket links */    \
    X(ST_NETWORK, "network")    /* InfiniBand, RoCE, Ethernet, DCN */

enum sys_transport {
#define SYS_TRANSPORT_ENUM_(e, n) e,
    SYS_TRANSPORT_MAP(SYS_TRANSPORT_ENUM_)
#undef SYS_TRANSPORT_ENUM_
    ST_COUNT
};

struct sys_link {
    char name[SYS_NAME_MAX];    /* the link class, e.g. "nvlink", "pcie", "upi" */
    uint32_t a, b;              /* the nodes it joins */
    double bw_bytes_per_s;      /* per direction, after its efficiency */
    uint64_t latency_ps;        /* one way */
    int8_t level;               /* chip level (kind link) whose bytes and stalls it counts as */
    int forward;                /* devices route between their links of this kind (a TPU's ICI
                                 * router): a path may pass a device from one such link to another */
    enum sys_transport transport; /* default: peer for the chip's peer link, else pcie */
    int line;
};

struct hw_system {
    char name[64];
    char path[512];
    int implied;                /* made by sys_from_chip, not read from a file */
    struct hw_config chip;      /* every device is this chip */
    double unified_bw_bytes_per_s; /* a unified-memory chip's devices share one memory of this
                                    * bandwidth (an SoC of several dies); 0 = the chip's DRAM's */
    uint32_t ndevices;          /* devices are nodes 0 .. ndevices-1 */
    uint32_t nnodes;
    struct sys_node *nodes;
    uint32_t nlinks;
    struct sys_link *links;
    /* the links at each node, in link order (sys_index; NULL: none yet) */
    uint32_t *adj_off;          /* node v's links are adj[adj_off[v] .. adj_off[v + 1]) */
    uint32_t *adj;
};

/* One transfer's path: the links it crosses (with their direction) and the
 * nodes with a forwarding bandwidth it passes through. */
struct sys_route {
    uint32_t nhops;
    uint32_t link[SYS_MAX_HOPS];
    uint8_t dir[SYS_MAX_HOPS];  /* 0: a -> b, 1: b -> a */
    uint32_t nvia;
    uint32_t via[SYS_MAX_HOPS]; /* nodes with bw_bytes_per_s > 0 the bytes pass through */
    uint8_t via_times[SYS_MAX_HOPS]; /* how many times the bytes cross via[i]: a switch
                                      * forwards them (1); the first host on the way stages
                                      * them in its memory, written and read (2); a host at
                                      * the end is read or written once (1) */
    uint64_t latency_ps;        /* sum of the hops' latencies */
};

/* Index the links by node (adj_off, adj), which routes use; system loads
 * and sys_from_chip do it.  Again after changing the links. */
void sys_index(struct hw_system *s);

/* The system a chip config implies for ndev devices named names[i]. */
void sys_from_chip(const struct hw_config *chip, uint32_t ndev, const char (*names)[32],
                   struct hw_system *out);
void sys_free(struct hw_system *s);
/* Index of the node called name, or -1. */
int sys_node_index(const struct hw_system *s, const char *name);
/* Fewest-hop route from node a to node b: 0, or -1 if none (or longer than
 * SYS_MAX_HOPS).  scratch holds 2 * nnodes uint32_t, the first nnodes of them
 * zero before the first call (calloc); every route leaves them zero again. */
int sys_route(const struct hw_system *s, uint32_t a, uint32_t b, struct sys_route *r,
              uint32_t *scratch);
/* sys_route, or where it finds none, a route that passes through other
 * devices (NCCL's PXN: over NVLink to the GPU beside the NIC of the
 * destination's rail): for a point-to-point copy.  Collectives build their
 * rings from sys_route's edges. */
int sys_route_pxn(const struct hw_system *s, uint32_t a, uint32_t b, struct sys_route *r,
                  uint32_t *scratch);
/* The nearest node of kind SN_HOST from device dev, with its route: 0, or -1. */
int sys_route_host(const struct hw_system *s, uint32_t dev, struct sys_route *r,
                   uint32_t *scratch);
const char *sys_node_kind_name(enum sys_node_kind k);
const char *sys_transport_name(enum sys_transport t);

#endif
