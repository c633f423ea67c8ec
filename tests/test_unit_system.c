/* test_unit_system.c: systems and links (sim/hw/system.c, models/net.c).
 *
 * Copies between devices cross the system's links; each link direction and
 * each switch or host memory with a bandwidth is a fluid server, so copies
 * that share one contend.  The expected figures below are derived by hand
 * from the shipped system files (configs/systems/) and the measurements
 * they are checked against are cited where they are used. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "run.h"
#include "system.h"
#include "test.h"
#include "util.h"

static char dir[64];

/* Write ops (a JSON array body) as a trace over devices and run it on the
 * system file sys_path, with the override set (NULL: none).  Fills r;
 * returns the run's rc. */
static int run_ops_set(const char *sys_path, const char *set, const char *devices, const char *ops,
                       struct run_result *r)
{
    char path[128], *text;
    snprintf(path, sizeof path, "%s/t.json", dir);
    size_t n = strlen(devices) + strlen(ops) + 128;
    text = malloc(n);
    if (text == NULL)
        abort();
    snprintf(text, n, "{\"strata_trace\": 1, \"devices\": [%s], \"ops\": [%s]}", devices, ops);
    tu_write_file(path, text);
    free(text);
    struct trace t;
    struct hw_system sys;
    struct diag d;
    memset(&d, 0, sizeof d);
    int rc = tu_load_trace(path, &t);
    if (rc != 0)
        return rc;
    struct cfg_sets sets;
    memset(&sets, 0, sizeof sets);
    if (set != NULL && cfg_sets_add(&sets, set, "--set", &d) != 0) {
        trace_free(&t);
        return -1;
    }
    rc = tu_load_hw(sys_path, &sets, &sys, &d);
    if (rc == 1) {              /* a chip config: the system it implies */
        struct hw_config c = sys.chip;
        rc = 0;
        sys_from_chip(&c, t.ndevices, (const char (*)[32])t.devices, &sys);
    }
    if (rc == 0) {
        rc = run_system_opts(&sys, &t, NULL, r, &d);
        if (rc != 0)
            diag_print(&d, stderr);
        sys_free(&sys);
    } else {
        diag_print(&d, stderr);
    }
    trace_free(&t);
    return rc;
}

static int run_ops(const char *sys_path, const char *devices, const char *ops,
                   struct run_result *r)
{
    return run_ops_set(sys_path, NULL, devices, ops, r);
}

static const char *const gpus8 =
    "\"gpu0\", \"gpu1\", \"gpu2\", \"gpu3\", \"gpu4\", \"gpu5\", \"gpu6\", \"gpu7\"";

static double op_s(const struct run_result *r, uint32_t i)
{
    return (double)(run_op_end(r, i) - run_op_start(r, i)) * 1e-12;
}

/* p2pBandwidthLatencyTest on the DGX A100 (shared/data MLE-119/120,
 * stas00/ml-engineering network/README.md): a pair's unidirectional writes
 * 274 GB/s (off-diagonal 270.8-276.9), a GPU's local copy 1581.48 GB/s
 * counted as read + write (diagonal, cuda-samples p2pBandwidthLatencyTest.cu
 * doubles the bytes for i == j).  Each number is 5 copies of 160 MB. */
static void test_dgx_a100_p2p_matrix(void)
{
    struct run_result r;
    char ops[2048];
    snprintf(ops, sizeof ops,
             "{\"id\": \"p\", \"kind\": \"memcpy\", \"device\": \"gpu0\", \"direction\": \"p2p\", "
             "\"dst_device\": \"gpu5\", \"bytes\": 160000000},"
             "{\"id\": \"l\", \"kind\": \"memcpy\", \"device\": \"gpu3\", \"direction\": \"d2d\", "
             "\"bytes\": 160000000, \"deps\": [\"p\"]}");
    CHECK_EQ_INT(run_ops("configs/systems/nvidia-dgx-a100.yaml", gpus8, ops, &r), 0);
    if (r.nops != 2)
        return;
    double pair = 160e6 / op_s(&r, 0) / 1e9, local = 2 * 160e6 / op_s(&r, 1) / 1e9;
    printf("  DGX A100 p2p: pair %.1f GB/s (measured 274, MLE-119), local copy %.1f GB/s "
           "(measured 1581.48, MLE-120)\n", pair, local);
    CHECK(pair > 274 * 0.9 && pair < 274 * 1.1);
    CHECK(local > 1581.48 * 0.9 && local < 1581.48 * 1.1);
    /* the copy's bytes are counted at the NVLink level, and it waits there */
    const struct hw_config *c = NULL;
    struct hw_config a100;
    CHECK_EQ_INT(tu_load_cfg("configs/nvidia-a100-sxm-80gb.yaml", &a100), 0);
    c = &a100;
    CHECK(run_op_body(&r, 0)->bytes[c->lv_peer] == 160e6);
    CHECK(run_op_body(&r, 0)->bytes[c->lv_dram] == 2 * 160e6);     /* read here, written there */
    CHECK(run_op_body(&r, 0)->time_ps[CAT_STALL + c->lv_peer] > 0.99 * (double)(run_op_end(&r, 0) -
                                                                      run_op_start(&r, 0) - 2500000));
    run_result_free(&r);
}

/* The same link model on an HGX H100 checked against measurements it was
 * not fitted on: p2pBandwidthLatencyTest pair writes 371-377 GB/s
 * (NVIDIA/nccl#1264) and 365-394 GB/s (a second 8x H100 node). */
static void test_hgx_h100_p2p(void)
{
    struct run_result r;
    const char *ops = "{\"id\": \"p\", \"kind\": \"memcpy\", \"device\": \"gpu1\", "
                      "\"direction\": \"p2p\", \"dst_device\": \"gpu6\", \"bytes\": 160000000}";
    CHECK_EQ_INT(run_ops("configs/systems/nvidia-hgx-h100.yaml", gpus8, ops, &r), 0);
    if (r.nops != 1)
        return;
    double pair = 160e6 / op_s(&r, 0) / 1e9;
    printf("  HGX H100 p2p: pair %.1f GB/s (measured 365-394)\n", pair);
    CHECK(pair > 380 * 0.88 && pair < 380 * 1.12);
    run_result_free(&r);
}

/* Seven GPUs copy 160 MB each to gpu0 at once.  Each sender's NVLink port
 * carries one copy; gpu0's port (300 GB/s x 0.913 = 273.9 GB/s inbound)
 * carries all seven, so each gets 273.9 / 7 = 39.1 GB/s and all end
 * together after 7 * 160e6 / 273.9e9 = 4.089 ms (+ 2.5 us launch and
 * 0.8 us route latency).  gpu0's HBM takes the 1.12 GB of writes at up
 * to 1888 GB/s: not the limit. */
static void test_dgx_incast(void)
{
    char ops[4096];
    size_t used = 0;
    for (int i = 1; i <= 7; i++)
        used += (size_t)snprintf(ops + used, sizeof ops - used,
                                 "%s{\"id\": \"c%d\", \"kind\": \"memcpy\", \"device\": \"gpu%d\", "
                                 "\"direction\": \"p2p\", \"dst_device\": \"gpu0\", \"bytes\": 160000000}",
                                 i > 1 ? "," : "", i, i);
    struct run_result r;
    CHECK_EQ_INT(run_ops("configs/systems/nvidia-dgx-a100.yaml", gpus8, ops, &r), 0);
    if (r.nops != 7)
        return;
    double want = 7 * 160e6 / (300e9 * 0.913) + 3.3e-6;
    for (uint32_t i = 0; i < 7; i++)
        CHECK_NEAR_REL(op_s(&r, i), want, 0.01);
    printf("  DGX A100, 7 GPUs -> gpu0 at once: %.3f ms each (by hand %.3f ms)\n",
           op_s(&r, 0) * 1e3, want * 1e3);
    run_result_free(&r);
}

/* Eight host-to-device copies of 1 GB at once, one per GPU.  On the DGX
 * A100 two GPUs share each PCIe Gen4 switch and its x16 uplink to the
 * socket (31.5 GB/s), so each copy gets 15.75 GB/s: 1e9 / 15.75e9 =
 * 63.5 ms.  A GPU alone gets the whole uplink: 31.7 ms.  The socket's
 * memory (204.8 GB/s) serves four copies at 15.75 = 63 GB/s: not the
 * limit. */
static void test_dgx_h2d_shared_uplinks(void)
{
    char ops[4096];
    size_t used = 0;
    for (int i = 0; i < 8; i++)
        used += (size_t)snprintf(ops + used, sizeof ops - used,
                                 "%s{\"id\": \"h%d\", \"kind\": \"memcpy\", \"device\": \"gpu%d\", "
                                 "\"direction\": \"h2d\", \"bytes\": 1000000000}",
                                 i ? "," : "", i, i);
    struct run_result r;
    CHECK_EQ_INT(run_ops("configs/systems/nvidia-dgx-a100.yaml", gpus8, ops, &r), 0);
    if (r.nops != 8)
        return;
    for (uint32_t i = 0; i < 8; i++)
        CHECK_NEAR_REL(op_s(&r, i), 1e9 / 15.75e9 + 3.5e-6, 0.01);
    printf("  DGX A100, 8 host->GPU copies at once: %.1f ms each (by hand 63.5 ms)\n",
           op_s(&r, 0) * 1e3);
    run_result_free(&r);
    const char *one = "{\"id\": \"h\", \"kind\": \"memcpy\", \"device\": \"gpu2\", "
                      "\"direction\": \"h2d\", \"bytes\": 1000000000}";
    CHECK_EQ_INT(run_ops("configs/systems/nvidia-dgx-a100.yaml", gpus8, one, &r), 0);
    if (r.nops == 1)
        CHECK_NEAR_REL(op_s(&r, 0), 1e9 / 31.5e9 + 3.5e-6, 0.01);
    run_result_free(&r);
}

/* The 8x RTX 4090 server has no peer-to-peer: a copy is staged in the
 * memory of the sender's socket (written, then read: twice its bytes).
 * Eight 1 GB copies cross the sockets at once, four each way
 * (gpu0..3 -> gpu4..7 and back).  Per copy the candidates are: its GPU
 * links, 31.5 x 0.762 = 24.0 GB/s each way, one copy each; the xGMI,
 * 144 GB/s per direction over four copies = 36 GB/s; the staging socket's
 * memory, 204.8 GB/s over four copies of twice the bytes = 25.6 GB/s.  So
 * 24.0 GB/s: 1e9 / 24.0e9 = 41.7 ms.  Two more copies from gpu0 and gpu1
 * to socket 1 (ten in all) make socket 0's memory stage six copies:
 * 204.8 / 12 = 17.1 GB/s each, below the 24.0 of their links, and gpu0's
 * and gpu1's uplinks now carry two copies each (12.0 GB/s): so those four
 * go at 12.0 and the other two staged there get (204.8 - 4 x 24.0) / 4 ...
 * rather than solve max-min by hand for that, the test checks the plain
 * case and that ten copies take longer than eight. */
static void test_pcie_server_cross_socket(void)
{
    char ops[4096];
    size_t used = 0;
    for (int i = 0; i < 8; i++)
        used += (size_t)snprintf(ops + used, sizeof ops - used,
                                 "%s{\"id\": \"x%d\", \"kind\": \"memcpy\", \"device\": \"gpu%d\", "
                                 "\"direction\": \"p2p\", \"dst_device\": \"gpu%d\", "
                                 "\"bytes\": 1000000000}",
                                 i ? "," : "", i, i, (i + 4) % 8);
    struct run_result r;
    CHECK_EQ_INT(run_ops("configs/systems/pcie-8x-rtx-4090.yaml", gpus8, ops, &r), 0);
    if (r.nops != 8)
        return;
    double want = 1e9 / (31.5e9 * 0.762);
    for (uint32_t i = 0; i < 8; i++)
        CHECK_NEAR_REL(op_s(&r, i), want, 0.01);
    printf("  8x RTX 4090, 8 cross-socket copies at once: %.1f ms each (by hand %.1f ms)\n",
           op_s(&r, 0) * 1e3, want * 1e3);
    run_result_free(&r);
    /* the same with the xGMI halved: 72 / 4 = 18 GB/s per copy now binds */
    char path[128];
    snprintf(path, sizeof path, "%s/half-xgmi.yaml", dir);
    size_t n = 0;
    char *text = tu_read_file("configs/systems/pcie-8x-rtx-4090.yaml", &n);
    CHECK(text != NULL);
    if (text == NULL)
        return;
    char *at = strstr(text, "bandwidth_GBps: 144");
    CHECK(at != NULL);
    if (at != NULL)
        memcpy(at, "bandwidth_GBps:  72", 19);
    char *chip = strstr(text, "chip: ../");
    /* the copy lives in a temporary folder: point it at the shipped chip */
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f != NULL && chip != NULL) {
        fwrite(text, 1, (size_t)(chip - text), f);
        char cwd[512];
        CHECK(getcwd(cwd, sizeof cwd) != NULL);
        fprintf(f, "chip: %s/configs/%s", cwd, chip + strlen("chip: ../"));
        fclose(f);
    }
    free(text);
    CHECK_EQ_INT(run_ops(path, gpus8, ops, &r), 0);
    if (r.nops == 8)
        for (uint32_t i = 0; i < 8; i++)
            CHECK_NEAR_REL(op_s(&r, i), 1e9 / 18e9, 0.01);
    run_result_free(&r);
}

/* Two DGX A100 nodes on HDR InfiniBand: gpu0 -> gpu8 and gpu1 -> gpu9 at
 * once take rails 0 and 1 (each GPU its own NIC, each rail its own leaf):
 * 25 GB/s each, 1e9 / 25e9 = 40 ms for 1 GB, plus the 2.5 us launch and the
 * route's 0.5 + 0.6 + 0.6 + 0.5 us. */
static void test_two_nodes(void)
{
    const char *ops = "{\"id\": \"a\", \"kind\": \"memcpy\", \"device\": \"gpu0\", "
                      "\"direction\": \"p2p\", \"dst_device\": \"gpu8\", \"bytes\": 1000000000},"
                      "{\"id\": \"b\", \"kind\": \"memcpy\", \"device\": \"gpu1\", "
                      "\"direction\": \"p2p\", \"dst_device\": \"gpu9\", \"bytes\": 1000000000}";
    struct run_result r;
    CHECK_EQ_INT(run_ops("configs/systems/two-dgx-a100-hdr.yaml",
                         "\"gpu0\", \"gpu1\", \"gpu8\", \"gpu9\"", ops, &r), 0);
    if (r.nops == 2)
        for (uint32_t i = 0; i < 2; i++)    /* + 2.5 us launch, 0.5 + 0.6 + 0.6 + 0.5 us route */
            CHECK_NEAR_REL(op_s(&r, i), 1e9 / 25e9 + 4.7e-6, 0.001);
    run_result_free(&r);
}

/* A chip config with several devices implies a system: peer copies go
 * over the chip's peer link to a non-blocking switch (A100: 12 x 25 =
 * 300 GB/s, no efficiency given), or over the host links when the chip has
 * none (RTX 4090: 31.5 GB/s, staged through a host without a bandwidth). */
static void test_implied_system(void)
{
    const char *ops = "{\"id\": \"p\", \"kind\": \"memcpy\", \"device\": \"a\", "
                      "\"direction\": \"p2p\", \"dst_device\": \"b\", \"bytes\": 300000000}";
    struct run_result r;
    CHECK_EQ_INT(run_ops("configs/nvidia-a100-sxm-80gb.yaml", "\"a\", \"b\"", ops, &r), 0);
    if (r.nops == 1)
        CHECK_NEAR_REL(op_s(&r, 0), 300e6 / 300e9 + 2.5e-6 + 2e-6, 0.001);
    run_result_free(&r);
    CHECK_EQ_INT(run_ops("configs/nvidia-rtx-4090.yaml", "\"a\", \"b\"", ops, &r), 0);
    if (r.nops == 1)
        CHECK_NEAR_REL(op_s(&r, 0), 300e6 / 31.5e9 + 2.5e-6 + 2e-6, 0.001);
    run_result_free(&r);
}

/* Routes: fewest hops, the first-listed link on a tie, never through a
 * device (but for a point-to-point copy's PXN route), staging in the
 * first host only. */
static void test_routes(void)
{
    struct hw_system s;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(tu_load_hw("configs/systems/pcie-8x-rtx-4090.yaml", NULL, &s, &d), 0);
    uint32_t scratch[64] = {0};    /* zero, as routes want it and leave it */
    struct sys_route rt;
    CHECK_EQ_INT(sys_route(&s, 0, 1, &rt, scratch), 0);   /* gpu0 -> cpu0 -> gpu1 */
    CHECK_EQ_INT(rt.nhops, 2);
    CHECK_EQ_INT(rt.nvia, 1);
    CHECK_EQ_INT(rt.via_times[0], 2);                     /* staged in cpu0's memory */
    CHECK_EQ_INT(sys_route(&s, 0, 5, &rt, scratch), 0);   /* gpu0 -> cpu0 -> cpu1 -> gpu5 */
    CHECK_EQ_INT(rt.nhops, 3);
    CHECK_EQ_INT(rt.nvia, 1);                             /* cpu1 only forwards */
    CHECK(strcmp(s.nodes[rt.via[0]].name, "cpu0") == 0);
    CHECK_EQ_INT(rt.latency_ps, 2500000);
    CHECK_EQ_INT(sys_route_host(&s, 6, &rt, scratch), 0);  /* gpu6 -> cpu1 */
    CHECK_EQ_INT(rt.nhops, 1);
    CHECK_EQ_INT(rt.via_times[0], 1);
    sys_free(&s);
    /* the A100 PCIe server does peer-to-peer: the same layout with each
     * socket's root complex a switch, so no copy between GPUs is staged
     * (no host on the route), and a cross-socket one crosses the socket
     * link between the two root complexes: gpu0 -> rc0 -> rc1 -> gpu5,
     * 0.5 + 0.5 + 0.5 us; a host copy still reaches the socket's memory */
    CHECK_EQ_INT(tu_load_hw("configs/systems/pcie-8x-a100-80gb.yaml", NULL, &s, &d), 0);
    memset(scratch, 0, sizeof scratch);   /* a search leaves its queue behind, past the last system's nodes */
    CHECK_EQ_INT(sys_route(&s, 0, 1, &rt, scratch), 0);   /* gpu0 -> rc0 -> gpu1 */
    CHECK_EQ_INT(rt.nhops, 2);
    CHECK_EQ_INT(rt.nvia, 0);
    CHECK_EQ_INT(sys_route(&s, 0, 5, &rt, scratch), 0);
    CHECK_EQ_INT(rt.nhops, 3);
    CHECK_EQ_INT(rt.nvia, 0);
    CHECK_EQ_INT(rt.latency_ps, 1500000);
    CHECK_EQ_INT(sys_route_host(&s, 6, &rt, scratch), 0);  /* gpu6 -> rc1 -> cpu1 */
    CHECK_EQ_INT(rt.nhops, 2);
    sys_free(&s);
    CHECK_EQ_INT(tu_load_hw("configs/systems/google-tpu-v5e-8.yaml", NULL, &s, &d), 0);
    CHECK_EQ_INT(sys_route(&s, 0, 7, &rt, scratch), 0);   /* corner to corner of a 2 x 4 mesh */
    CHECK_EQ_INT(rt.nhops, 4);
    sys_free(&s);
    /* a rail-optimised cluster: gpu4 (node 0, rail 4) and gpu8 (node 1,
     * rail 0) share no rail, so no route avoids another device; a
     * point-to-point copy takes NCCL's PXN route instead, over NVLink to
     * gpu0 and out through its NIC: gpu4 -> nvswitch0 -> gpu0 -> nic0_0 ->
     * leaf0 -> nic1_0 -> gpu8 */
    CHECK_EQ_INT(tu_load_hw("configs/systems/hgx-h100-x8-ndr.yaml", NULL, &s, &d), 0);
    uint32_t *big = calloc(2 * (size_t)s.nnodes, sizeof *big);
    CHECK(big != NULL);
    if (big != NULL) {
        int g4 = sys_node_index(&s, "gpu4"), g8 = sys_node_index(&s, "gpu8"), g0 = sys_node_index(&s, "gpu0");
        CHECK(sys_route(&s, (uint32_t)g4, (uint32_t)g8, &rt, big) != 0);
        CHECK_EQ_INT(sys_route_pxn(&s, (uint32_t)g4, (uint32_t)g8, &rt, big), 0);
        CHECK_EQ_INT(rt.nhops, 6);
        int through0 = 0;
        for (uint32_t h = 0; h < rt.nhops; h++)
            through0 |= s.links[rt.link[h]].a == (uint32_t)g0 || s.links[rt.link[h]].b == (uint32_t)g0;
        CHECK(through0);
        /* where sys_route has a route, PXN takes the same (same rail: 4 hops) */
        int g12 = sys_node_index(&s, "gpu12");
        CHECK_EQ_INT(sys_route_pxn(&s, (uint32_t)g4, (uint32_t)g12, &rt, big), 0);
        CHECK_EQ_INT(rt.nhops, 4);
        free(big);
    }
    sys_free(&s);
    /* a chip config is no system */
    CHECK_EQ_INT(tu_load_hw("configs/nvidia-h100-sxm.yaml", NULL, &s, &d), 1);
}

/* The search routes take, as it was before it stopped early and finished
 * from the target's side at a hub (bfs_hub in system.c): a plain
 * breadth-first search that dequeues every node, kept here as the
 * reference.  Fills links[] (source first) and returns the hop count, or
 * -1. */
static int ref_route(const struct hw_system *s, uint32_t a, uint32_t b, int through_hosts,
                     int via_devices, uint32_t *prev, uint32_t *queue, uint32_t *links)
{
    memset(prev, 0, s->nnodes * sizeof *prev);
    uint32_t head = 0, tail = 0;
    queue[tail++] = a;
    prev[a] = UINT32_MAX;
    int found = 0;
    while (head < tail && !found) {
        uint32_t n = queue[head++];
        if (n == b) {
            found = 1;
            break;
        }
        int via_dev = n != a && s->nodes[n].kind == SN_DEVICE && !via_devices;
        if (via_dev && !s->links[prev[n] - 1].forward)
            continue;
        if (n != a && !through_hosts && s->nodes[n].kind == SN_HOST)
            continue;
        for (uint32_t k = 0; k < s->nlinks; k++) {
            const struct sys_link *l = &s->links[k];
            if (via_dev && !l->forward)
                continue;
            uint32_t m = l->a == n ? l->b : l->b == n ? l->a : UINT32_MAX;
            if (m != UINT32_MAX && prev[m] == 0) {
                prev[m] = k + 1;
                queue[tail++] = m;
            }
        }
    }
    if (!found)
        return -1;
    uint32_t hops = 0, tmp[64];
    for (uint32_t n = b; n != a && hops < 64; hops++) {
        tmp[hops] = prev[n] - 1;
        n = s->links[tmp[hops]].a == n ? s->links[tmp[hops]].b : s->links[tmp[hops]].a;
    }
    for (uint32_t i = 0; i < hops; i++)
        links[i] = tmp[hops - 1 - i];
    return (int)hops;
}

static void add_node(struct hw_system *s, enum sys_node_kind kind)
{
    s->nodes[s->nnodes++].kind = kind;
}

static void add_link(struct hw_system *s, uint32_t a, uint32_t b, int forward)
{
    s->links[s->nlinks].a = a;
    s->links[s->nlinks].b = b;
    s->links[s->nlinks].forward = forward;
    s->nlinks++;
}

/* The routes of every ordered pair of the first nfrom nodes to every node
 * (peer-to-peer, through hosts, PXN) are the reference search's. */
static void check_routes_match(const struct hw_system *s, uint32_t nfrom)
{
    uint32_t *scratch = calloc(2 * (size_t)s->nnodes, sizeof *scratch);
    uint32_t *prev = calloc(2 * (size_t)s->nnodes, sizeof *prev);
    CHECK(scratch != NULL && prev != NULL);
    if (scratch == NULL || prev == NULL)
        return;
    uint32_t links[64], bad = 0, routed = 0;
    for (uint32_t a = 0; a < nfrom; a++)
        for (uint32_t b = 0; b < s->nnodes; b++) {
            struct sys_route rt;
            int h = ref_route(s, a, b, 0, 0, prev, prev + s->nnodes, links);
            if (h < 0)
                h = ref_route(s, a, b, 1, 0, prev, prev + s->nnodes, links);
            int rc = sys_route(s, a, b, &rt, scratch);
            bad += (h < 0) != (rc != 0);
            for (int i = 0; rc == 0 && i < h; i++)
                bad += rt.nhops != (uint32_t)h || rt.link[i] != links[i];
            routed += rc == 0;
            if (rc != 0) {      /* PXN: through other devices */
                h = ref_route(s, a, b, 0, 1, prev, prev + s->nnodes, links);
                rc = sys_route_pxn(s, a, b, &rt, scratch);
                bad += (h < 0) != (rc != 0);
                for (int i = 0; rc == 0 && i < h; i++)
                    bad += rt.nhops != (uint32_t)h || rt.link[i] != links[i];
            }
        }
    CHECK_EQ_INT(bad, 0);
    CHECK(routed > nfrom);
    for (uint32_t v = 0; v < s->nnodes; v++)    /* routes leave the scratch zero */
        bad += scratch[v] != 0;
    CHECK_EQ_INT(bad, 0);
    free(scratch);
    free(prev);
}

/* Routes on big fabrics: the search stops when it reaches the target and
 * finishes from the target's side at a hub (a leaf of 40 NICs, a switch of
 * 40 GPUs, a 2-D torus of forwarding chips); every route is the plain
 * breadth-first search's, link for link (ties included). */
static void test_routes_big(void)
{
    enum { NODES = 40, G = 4, TX = 8, TY = 6 };
    struct hw_system s;
    memset(&s, 0, sizeof s);
    s.nodes = calloc(NODES * (2 * G + 2) + G + 2, sizeof *s.nodes);
    s.links = calloc(NODES * 4 * G + 2 * TX * TY + 8, sizeof *s.links);
    CHECK(s.nodes != NULL && s.links != NULL);
    if (s.nodes == NULL || s.links == NULL)
        return;
    /* a rail-optimised cluster as scripts/gen_cluster.py writes it: per
     * node G GPUs on an NVSwitch, each on its NIC and the node's host; NIC
     * i on leaf i; and a second NVLink to the switch on the first GPU (a
     * tie the first-listed link wins) */
    uint32_t sw0 = NODES * G, host0 = sw0 + NODES, nic0 = host0 + NODES, leaf0 = nic0 + NODES * G;
    s.ndevices = NODES * G;
    for (uint32_t i = 0; i < NODES * G; i++)
        add_node(&s, SN_DEVICE);
    for (uint32_t i = 0; i < NODES; i++)
        add_node(&s, SN_SWITCH);
    for (uint32_t i = 0; i < NODES; i++)
        add_node(&s, SN_HOST);
    for (uint32_t i = 0; i < NODES * G + G; i++)
        add_node(&s, SN_SWITCH);
    for (uint32_t i = 0; i < NODES * G; i++)
        add_link(&s, i, sw0 + i / G, 0);
    for (uint32_t i = 0; i < NODES; i++)
        add_link(&s, i * G, sw0 + i, 0);
    for (uint32_t i = 0; i < NODES * G; i++)
        add_link(&s, i, nic0 + i, 0);
    for (uint32_t i = 0; i < NODES * G; i++)
        add_link(&s, i, host0 + i / G, 0);
    for (uint32_t i = 0; i < NODES * G; i++)
        add_link(&s, nic0 + i, leaf0 + i % G, 0);
    sys_index(&s);
    check_routes_match(&s, 2 * G + 1);
    /* the system a chip config implies: every device on one switch and one host */
    s.nnodes = s.nlinks = 0;
    for (uint32_t i = 0; i < NODES; i++)
        add_node(&s, SN_DEVICE);
    add_node(&s, SN_HOST);
    add_node(&s, SN_SWITCH);
    for (uint32_t i = 0; i < NODES; i++)
        add_link(&s, i, NODES + 1, 0);
    for (uint32_t i = 0; i < NODES; i++)
        add_link(&s, i, NODES, 0);
    s.ndevices = NODES;
    sys_index(&s);
    check_routes_match(&s, NODES);
    /* a TX x TY torus of chips that route (ICI), hosts of 4 chips, and a hub
     * switch all hosts share */
    s.nnodes = s.nlinks = 0;
    for (uint32_t i = 0; i < TX * TY; i++)
        add_node(&s, SN_DEVICE);
    for (uint32_t y = 0; y < TY; y++)
        for (uint32_t x = 0; x < TX; x++) {
            add_link(&s, y * TX + x, y * TX + (x + 1) % TX, 1);
            add_link(&s, y * TX + x, ((y + 1) % TY) * TX + x, 1);
        }
    for (uint32_t i = 0; i < TX * TY / 4; i++)
        add_node(&s, SN_HOST);
    add_node(&s, SN_SWITCH);
    for (uint32_t i = 0; i < TX * TY; i++)
        add_link(&s, i, TX * TY + i / 4, 0);
    for (uint32_t i = 0; i < TX * TY / 4; i++)
        add_link(&s, TX * TY + i, s.nnodes - 1, 0);
    s.ndevices = TX * TY;
    sys_index(&s);
    check_routes_match(&s, TX * TY);
    sys_free(&s);
}

/* Every shipped system file loads, names itself after its file and runs
 * the two-stream example on its first device. */
static void test_shipped_systems(void)
{
    DIR *dr = opendir("configs/systems");
    CHECK(dr != NULL);
    if (dr == NULL)
        return;
    struct dirent *e;
    int n = 0;
    while ((e = readdir(dr)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0)
            continue;
        char path[600], want[256];
        snprintf(path, sizeof path, "configs/systems/%s", e->d_name);
        snprintf(want, sizeof want, "%.*s", (int)(len - 5), e->d_name);
        struct hw_system s;
        struct diag d;
        memset(&d, 0, sizeof d);
        int rc = tu_load_hw(path, NULL, &s, &d);
        if (rc != 0)
            diag_print(&d, stderr);
        CHECK_EQ_INT(rc, 0);
        if (rc != 0)
            continue;
        CHECK(strcmp(s.name, want) == 0);
        CHECK(s.ndevices >= 2 && s.nlinks >= 1);
        struct trace t;
        CHECK_EQ_INT(tu_load_trace("traces/examples/two-streams.json", &t), 0);
        struct run_result r;
        CHECK_EQ_INT(run_system_opts(&s, &t, NULL, &r, &d), 0);
        CHECK(r.total_ps > 0);
        run_result_free(&r);
        trace_free(&t);
        sys_free(&s);
        n++;
    }
    closedir(dr);
    CHECK(n >= 8);
}

/* hw with the override kv is refused, the error naming kv and saying want */
static void check_refused(const char *hw, const char *kv, const char *want)
{
    struct cfg_sets sets;
    struct hw_system s;
    struct diag d;
    memset(&sets, 0, sizeof sets);
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(cfg_sets_add(&sets, kv, "--set", &d), 0);
    CHECK(tu_load_hw(hw, &sets, &s, &d) < 0);
    CHECK_STR_CONTAINS(d.file, kv);
    CHECK_STR_CONTAINS(d.msg, want);
}

/* Overrides reach a system's links (issue 33: a link what-if on a system
 * used to change the chip's level, which no system link reads): by link
 * name or level (`links.NAME.KEY`), or through the chip's link level, whose
 * factor the system's links of that level take. */
static void test_link_sets(void)
{
    const char *dgx = "configs/systems/nvidia-dgx-a100.yaml";
    struct hw_system base, s;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(tu_load_hw(dgx, NULL, &base, &d), 0);
    struct cfg_sets sets;
    const char *cases[][2] = {{"links.nvlink.bandwidth=150GB/s", "150"}, {"nvlink.bandwidth=x0.5", "half"},
                              {"links.pcie.latency=x2", "pcie"}, {"nvlink.latency=2us", "lat"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        memset(&sets, 0, sizeof sets);
        CHECK_EQ_INT(cfg_sets_add(&sets, cases[k][0], "--set", &d), 0);
        CHECK_EQ_INT(tu_load_hw(dgx, &sets, &s, &d), 0);
        CHECK_EQ_INT((int)s.nlinks, (int)base.nlinks);
        int lvn = cfg_level_index(&s.chip, "nvlink");
        for (uint32_t i = 0; i < s.nlinks && i < base.nlinks; i++) {
            const struct sys_link *a = &base.links[i], *b = &s.links[i];
            int nv = a->level == lvn, pcie = strcmp(a->name, "pcie") == 0;
            if (k == 0)
                CHECK(b->bw_bytes_per_s == (nv ? 150e9 * 0.913 : a->bw_bytes_per_s));
            if (k == 1)
                CHECK(b->bw_bytes_per_s == (nv ? 0.5 * a->bw_bytes_per_s : a->bw_bytes_per_s));
            if (k == 2)
                CHECK(b->latency_ps == (pcie ? 2 * a->latency_ps : a->latency_ps));
            if (k == 3)   /* the chip's 1 us placeholder to 2 us: every nvlink link's latency x2 */
                CHECK(b->latency_ps == (nv ? 2 * a->latency_ps : a->latency_ps));
        }
        if (k == 1)
            CHECK(s.chip.level[lvn].bw_bytes_per_s == 0.5 * base.chip.level[lvn].bw_bytes_per_s);
        sys_free(&s);
    }
    /* errors name the override */
    static const struct { const char *kv, *want; } bad[] = {
        {"links.foo.bandwidth=1GB/s", "its links: nvlink, pcie, pcie_uplink, xgmi"},
        {"links.nvlink.bandwidth=0GB/s", "must be"},
        {"links.nvlink.ports=2", "unknown key"},
        {"links.nvlink=2", "links.NAME.KEY"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        check_refused(dgx, bad[k].kv, bad[k].want);
    /* on a chip config, a system's links are refused */
    memset(&sets, 0, sizeof sets);
    CHECK_EQ_INT(cfg_sets_add(&sets, "links.nvlink.bandwidth=1GB/s", "--set", &d), 0);
    CHECK(tu_load_hw("configs/nvidia-a100-sxm-80gb.yaml", &sets, &s, &d) < 0);
    CHECK_STR_CONTAINS(d.msg, "system file's links");
    sys_free(&base);

    /* and a chip's link key moves a TP=8 decode step on the system (it used not to) */
    char cmd[1200], tp[160], out[3][160];
    snprintf(tp, sizeof tp, "%s/tp8.json", dir);
    snprintf(cmd, sizeof cmd, "'%s' gen llm --model traces/models/llama-3-8b.json --phase decode "
             "--context 4096 --tp 8 -o '%s' >/dev/null", STRATA_BINARY, tp);
    CHECK_EQ_INT(tu_sh(cmd), 0);
    const char *set[3] = {"", "--set nvlink.bandwidth=1GB/s", "--set links.nvlink.bandwidth=8GB/s"};
    double t[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) {
        snprintf(out[k], sizeof out[k], "%s/r%d.json", dir, k);
        snprintf(cmd, sizeof cmd, "'%s' run --hw %s --trace '%s' %s --json '%s' --quiet", STRATA_BINARY,
                 dgx, tp, set[k], out[k]);
        CHECK_EQ_INT(tu_sh(cmd), 0);
        size_t n;
        char *js = tu_read_file(out[k], &n);
        const char *p = js ? strstr(js, "\"total_time_s\":") : NULL;
        CHECK(p != NULL);
        if (p != NULL)
            t[k] = strtod(p + strlen("\"total_time_s\":"), NULL);
        free(js);
    }
    printf("  DGX A100 TP=8 decode: %.4f ms, nvlink.bandwidth=1GB/s %.4f ms, "
           "links.nvlink.bandwidth=8GB/s %.4f ms\n", t[0] * 1e3, t[1] * 1e3, t[2] * 1e3);
    CHECK(t[1] > t[0] * 1.01);
    CHECK(t[2] > t[0] * 1.01);
}

/* Issue 32: a chip config or a system file without its optional links
 * (`--set links.nvlink=off`): an A100 PCIe box without NVLink bridges
 * copies over PCIe through the host, as a 4090 box does. */
static void test_links_off_chip(void)
{
    const char *a100 = "configs/nvidia-a100-pcie-80gb.yaml";
    struct hw_config base;
    CHECK_EQ_INT(tu_load_cfg(a100, &base), 0);
    int nv = cfg_level_index(&base, "nvlink"), pcie = cfg_level_index(&base, "pcie");
    CHECK(nv >= 0 && nv == base.lv_peer && pcie == base.lv_host);
    struct cfg_sets sets;
    struct hw_system s;
    struct diag d;
    memset(&sets, 0, sizeof sets);
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(cfg_sets_add(&sets, "links.nvlink=off", "--set", &d), 0);
    CHECK_EQ_INT(tu_load_hw(a100, &sets, &s, &d), 1);
    CHECK(s.chip.lv_peer < 0 && cfg_level_index(&s.chip, "nvlink") < 0);
    CHECK_EQ_INT(s.chip.lv_host, pcie);
    CHECK_EQ_INT((int)s.chip.nlevels, (int)base.nlevels - 1);
    /* a 300 MB copy: 12 NVLink ports (300 GB/s), or the 31.5 GB/s host link, as the 4090 */
    const char *ops = "{\"id\": \"p\", \"kind\": \"memcpy\", \"device\": \"a\", "
                      "\"direction\": \"p2p\", \"dst_device\": \"b\", \"bytes\": 300000000}";
    struct run_result r;
    double t[2] = {0, 0};
    for (int off = 0; off < 2; off++) {
        CHECK_EQ_INT(run_ops_set(a100, off ? "links.nvlink=off" : "links.nvlink=on", "\"a\", \"b\"",
                                 ops, &r), 0);
        if (r.nops != 1)
            continue;
        t[off] = op_s(&r, 0);
        CHECK(run_op_body(&r, 0)->bytes[off ? pcie : nv] >= 300e6);
        CHECK(off || run_op_body(&r, 0)->bytes[pcie] == 0);
        run_result_free(&r);
    }
    printf("  A100 PCIe p2p 300 MB: %.3f ms over NVLink, %.3f ms with links.nvlink=off\n",
           t[0] * 1e3, t[1] * 1e3);
    CHECK_NEAR_REL(t[0], 300e6 / 300e9 + 2.5e-6 + 2e-6, 0.001);
    CHECK_NEAR_REL(t[1], 300e6 / 31.5e9 + 2.5e-6 + 2e-6, 0.001);

    /* the CLI: an all_reduce's bytes move from nvlink to pcie */
    char args[600], *out = NULL, *err = NULL, js[2][128];
    double tot[2] = {0, 0};
    for (int off = 0; off < 2; off++) {
        snprintf(js[off], sizeof js[off], "%s/ar%d.json", dir, off);
        snprintf(args, sizeof args, "run --hw %s --op all_reduce:bytes=256MiB,ranks=2 %s --json '%s' --quiet",
                 a100, off ? "--set links.nvlink=off" : "", js[off]);
        CHECK_EQ_INT(tu_run_strata(dir, args, &out, &err), 0);
        free(out);
        free(err);
        char *text = tu_read_file(js[off], NULL);
        CHECK(text != NULL);
        if (text == NULL)
            continue;
        const char *p = strstr(text, "\"total_time_s\":");
        tot[off] = p ? strtod(p + strlen("\"total_time_s\":"), NULL) : 0;
        /* each rank's op: half the buffer out over its link (ring, 2 ranks) */
        CHECK_STR_CONTAINS(text, off ? "\"pcie\":268435456}" : "\"pcie\":0,\"nvlink\":268435456}");
        CHECK(off == 0 || strstr(text, "\"nvlink\"") == NULL);
        free(text);
    }
    printf("  A100 PCIe all_reduce 256 MiB x2: %.3f ms, links.nvlink=off %.3f ms\n", tot[0] * 1e3,
           tot[1] * 1e3);
    CHECK(tot[1] > 5 * tot[0]);

    /* what a chip needs for itself, or has not, cannot be off */
    static const struct { const char *hw, *kv, *want; } bad[] = {
        {"configs/nvidia-a100-pcie-80gb.yaml", "links.pcie=off",
         "link to the host, which every device needs; only a link to other devices can be off "
         "(its links: pcie (to the host), nvlink)"},
        {"configs/nvidia-a100-pcie-80gb.yaml", "links.dram=off", "the chip's dram level"},
        {"configs/nvidia-a100-pcie-80gb.yaml", "links.l2=off", "the chip's cache level"},
        {"configs/nvidia-a100-pcie-80gb.yaml", "links.nvlnk=off",
         "no level named 'nvlnk'; its links: pcie (to the host), nvlink"},
        {"configs/nvidia-a100-pcie-80gb.yaml", "links.nvlink=no", "takes off (or on), not 'no'"},
        {"configs/nvidia-rtx-4090.yaml", "links.nvlink=off", "its links: pcie (to the host)"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        check_refused(bad[k].hw, bad[k].kv, bad[k].want);
}

/* On a system file, `links.NAME=off` takes out every link of that name
 * (or level): the DGX A100 without NVSwitch copies over its PCIe
 * switches; without PCIe as well its GPUs have no path, and the run says
 * so and writes nothing. */
static void test_links_off_system(void)
{
    const char *dgx = "configs/systems/nvidia-dgx-a100.yaml";
    struct hw_system base, s;
    struct diag d;
    struct cfg_sets sets;
    memset(&d, 0, sizeof d);
    memset(&sets, 0, sizeof sets);
    CHECK_EQ_INT(tu_load_hw(dgx, NULL, &base, &d), 0);
    CHECK_EQ_INT(cfg_sets_add(&sets, "links.nvlink=off", "--set", &d), 0);
    CHECK_EQ_INT(tu_load_hw(dgx, &sets, &s, &d), 0);
    CHECK_EQ_INT((int)s.nlinks, (int)base.nlinks - 8);
    int nv = cfg_level_index(&s.chip, "nvlink"), pcie = cfg_level_index(&s.chip, "pcie");
    for (uint32_t i = 0; i < s.nlinks; i++)
        CHECK(s.links[i].level != nv);
    sys_free(&s);
    sys_free(&base);
    /* gpu0 -> gpu1: 160 MB at 274 GB/s over NVSwitch, or 31.5 GB/s through plx0 */
    const char *ops = "{\"id\": \"p\", \"kind\": \"memcpy\", \"device\": \"gpu0\", "
                      "\"direction\": \"p2p\", \"dst_device\": \"gpu1\", \"bytes\": 160000000}";
    struct run_result r;
    double t[2] = {0, 0};
    for (int off = 0; off < 2; off++) {
        CHECK_EQ_INT(run_ops_set(dgx, off ? "links.nvlink=off" : NULL, gpus8, ops, &r), 0);
        if (r.nops != 1)
            continue;
        t[off] = op_s(&r, 0);
        CHECK(run_op_body(&r, 0)->bytes[off ? pcie : nv] == 160e6);
        CHECK(run_op_body(&r, 0)->bytes[off ? nv : pcie] == 0);
        run_result_free(&r);
    }
    printf("  DGX A100 p2p gpu0 -> gpu1 160 MB: %.3f ms, links.nvlink=off %.3f ms\n", t[0] * 1e3,
           t[1] * 1e3);
    CHECK_NEAR_REL(t[1], 160e6 / 31.5e9, 0.01);
    CHECK(t[1] > 5 * t[0]);

    /* no path left: the run's error, nothing written */
    char args[600], js[128], *out = NULL, *err = NULL;
    snprintf(js, sizeof js, "%s/none.json", dir);
    snprintf(args, sizeof args, "run --hw %s --op all_reduce:bytes=256MiB,ranks=8 --set links.nvlink=off "
             "--set links.pcie=off --json '%s'", dgx, js);
    CHECK(tu_run_strata(dir, args, &out, &err) != 0);
    CHECK_STR_CONTAINS(err, "ranks: devices 'gpu0' and 'gpu1' of the group have no path between them");
    CHECK(!tu_exists(js));
    free(out);
    free(err);
    /* run --out's what-ifs: "nvlink bandwidth x2" only while nvlink links are there */
    for (int off = 0; off < 2; off++) {
        char od[128], rp[160];
        snprintf(od, sizeof od, "%s/wi%d", dir, off);
        snprintf(rp, sizeof rp, "%s/report.json", od);
        snprintf(args, sizeof args, "run --hw %s --op all_reduce:bytes=64MiB,ranks=8 %s --out '%s' --quiet",
                 dgx, off ? "--set links.nvlink=off" : "", od);
        CHECK_EQ_INT(tu_run_strata(dir, args, &out, &err), 0);
        char *rep = tu_read_file(rp, NULL);
        CHECK(rep != NULL && (strstr(rep, "\"link_bw_x2\"") != NULL) == !off);
        free(rep);
        free(out);
        free(err);
    }
    /* a name no link has, or a value other than off and on */
    static const struct { const char *kv, *want; } bad[] = {
        {"links.nvswitch=off", "no link of this system is named 'nvswitch'; its links: nvlink, pcie"},
        {"links.nvlink=0", "or taken out as links.NAME=off"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        check_refused(dgx, bad[k].kv, bad[k].want);
}

/* A system written with repeat groups (sysload.c) is the system written
 * out: the same nodes and links in the same order, to the field; and a
 * links.NAME set reaches the links inside a group. */
static void test_repeat_groups(void)
{
    char cwd[512], pa[640], pb[640], text[4096];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    snprintf(pa, sizeof pa, "%s/rep.yaml", dir);
    snprintf(pb, sizeof pb, "%s/flat.yaml", dir);
    /* the last group's `to`: first a name that is not there for i = 2 (an
     * error naming the entry and its variables), then the GPU's switch */
    const char *to[2] = {"nic{k}_{i*1+0*k+0}", "sw{k}"};
    struct hw_system a, b;
    struct diag d;
    for (int pass = 0; pass < 2; pass++) {
        snprintf(text, sizeof text,
                 "name: rep\nchip: %s/configs/nvidia-h100-sxm.yaml\ndevices: 8\n"
                 "nodes:\n"
                 "  - repeat: {k: 2}\n"
                 "    nodes:\n"
                 "      - {name: \"sw{k}\", kind: switch, nvls: true}\n"
                 "      - repeat: {i: 2}\n"
                 "        nodes: [{name: \"nic{k}_{i}\", kind: switch}]\n"
                 "  - {name: spine, kind: switch}\n"
                 "links:\n"
                 "  - repeat: {k: 2, i: 4}\n"
                 "    links:\n"
                 "      - {level: nvlink, from: \"gpu{4*k+i}\", to: \"sw{k}\", bandwidth_GBps: 450, latency_ns: 400}\n"
                 "  - repeat: {k: 2}\n"
                 "    links:\n"
                 "      - {level: pcie, name: ib, from: [\"nic{k}_0\", \"nic{k}_1\"], to: spine, bandwidth_GBps: 50, "
                 "latency_ns: 600, transport: network}\n"
                 "      - repeat: {i: 4}\n"
                 "        links: [{level: pcie, from: \"gpu{4*k+i}\", to: \"%s\", bandwidth_GBps: 63, "
                 "latency_ns: 500}]\n", cwd, to[pass]);
        tu_write_file(pa, text);
        memset(&d, 0, sizeof d);
        if (pass == 0) {
            CHECK_EQ_INT(tu_load_hw(pa, NULL, &a, &d), -1);
            CHECK(strstr(d.msg, "no device or node 'nic0_2'") != NULL);
            CHECK(strcmp(d.field, "links[1].links[1].links[0] (k=0, i=2).to") == 0);
            CHECK_EQ_INT(d.line, 19);
        }
    }
    snprintf(text, sizeof text,
             "name: rep\nchip: %s/configs/nvidia-h100-sxm.yaml\ndevices: 8\n"
             "nodes:\n"
             "  - {name: sw0, kind: switch, nvls: true}\n  - {name: nic0_0, kind: switch}\n"
             "  - {name: nic0_1, kind: switch}\n  - {name: sw1, kind: switch, nvls: true}\n"
             "  - {name: nic1_0, kind: switch}\n  - {name: nic1_1, kind: switch}\n"
             "  - {name: spine, kind: switch}\n"
             "links:\n"
             "  - {level: nvlink, from: [gpu0, gpu1, gpu2, gpu3], to: sw0, bandwidth_GBps: 450, latency_ns: 400}\n"
             "  - {level: nvlink, from: [gpu4, gpu5, gpu6, gpu7], to: sw1, bandwidth_GBps: 450, latency_ns: 400}\n"
             "  - {level: pcie, name: ib, from: [nic0_0, nic0_1], to: spine, bandwidth_GBps: 50, latency_ns: 600, "
             "transport: network}\n"
             "  - {level: pcie, from: [gpu0, gpu1, gpu2, gpu3], to: sw0, bandwidth_GBps: 63, latency_ns: 500}\n"
             "  - {level: pcie, name: ib, from: [nic1_0, nic1_1], to: spine, bandwidth_GBps: 50, latency_ns: 600, "
             "transport: network}\n"
             "  - {level: pcie, from: [gpu4, gpu5, gpu6, gpu7], to: sw1, bandwidth_GBps: 63, latency_ns: 500}\n",
             cwd);
    tu_write_file(pb, text);
    CHECK_EQ_INT(tu_load_hw(pa, NULL, &a, &d), 0);
    CHECK_EQ_INT(tu_load_hw(pb, NULL, &b, &d), 0);
    CHECK_EQ_INT(a.nnodes, 15);
    CHECK_EQ_INT(a.nnodes, b.nnodes);
    CHECK_EQ_INT(a.nlinks, 20);
    CHECK_EQ_INT(a.nlinks, b.nlinks);
    int same = a.nnodes == b.nnodes && a.nlinks == b.nlinks;
    for (uint32_t i = 0; same && i < a.nnodes; i++)
        same = strcmp(a.nodes[i].name, b.nodes[i].name) == 0 && a.nodes[i].kind == b.nodes[i].kind &&
               a.nodes[i].nvls == b.nodes[i].nvls;
    for (uint32_t i = 0; same && i < a.nlinks; i++)
        same = a.links[i].a == b.links[i].a && a.links[i].b == b.links[i].b &&
               a.links[i].level == b.links[i].level && a.links[i].bw_bytes_per_s == b.links[i].bw_bytes_per_s &&
               a.links[i].latency_ps == b.links[i].latency_ps && a.links[i].transport == b.links[i].transport &&
               strcmp(a.links[i].name, b.links[i].name) == 0;
    CHECK(same);
    sys_free(&a);
    sys_free(&b);
    /* links.ib.bandwidth reaches the four ib links inside the group */
    struct cfg_sets sets;
    memset(&sets, 0, sizeof sets);
    CHECK_EQ_INT(cfg_sets_add(&sets, "links.ib.bandwidth=x0.5", "--set", &d), 0);
    CHECK_EQ_INT(tu_load_hw(pa, &sets, &a, &d), 0);
    int halved = 0;
    for (uint32_t i = 0; i < a.nlinks; i++)
        halved += strcmp(a.links[i].name, "ib") == 0 && a.links[i].bw_bytes_per_s == 25e9;
    CHECK_EQ_INT(halved, 4);
    sys_free(&a);
    memset(&sets, 0, sizeof sets);
    CHECK_EQ_INT(cfg_sets_add(&sets, "links.ib=off", "--set", &d), 0);
    CHECK_EQ_INT(tu_load_hw(pa, &sets, &a, &d), 0);
    CHECK_EQ_INT(a.nlinks, 16);
    sys_free(&a);
    /* a ring's wrap and whole division: gpu x to gpu (x+1)%6, and to the
     * switch of its pair */
    snprintf(text, sizeof text,
             "name: ring\nchip: %s/configs/nvidia-h100-sxm.yaml\ndevices: 6\n"
             "nodes: [{repeat: {p: 3}, nodes: [{name: \"sw{p}\", kind: switch}]}]\n"
             "links:\n"
             "  - repeat: {x: 6}\n"
             "    links:\n"
             "      - {level: nvlink, from: \"gpu{x}\", to: \"gpu{(x+1)%%6}\", bandwidth_GBps: 100, latency_ns: 100, "
             "forward: true}\n"
             "      - {level: pcie, from: \"gpu{x}\", to: \"sw{x/2}\", bandwidth_GBps: 10, latency_ns: 100}\n",
             cwd);
    tu_write_file(pa, text);
    CHECK_EQ_INT(tu_load_hw(pa, NULL, &a, &d), 0);
    CHECK_EQ_INT(a.nlinks, 12);
    int ring = a.nlinks == 12;
    for (uint32_t x = 0; ring && x < 6; x++)
        ring = a.links[2 * x].a == x && a.links[2 * x].b == (x + 1) % 6 &&
               a.links[2 * x + 1].a == x && a.links[2 * x + 1].b == 6 + x / 2;
    CHECK(ring);
    sys_free(&a);
}

int main(void)
{
    test_shipped_systems();
    CHECK(tu_mkdtemp(dir, sizeof dir, "strata-sys") == 0);
    test_link_sets();
    test_repeat_groups();
    test_links_off_chip();
    test_links_off_system();
    test_routes();
    test_routes_big();
    test_dgx_a100_p2p_matrix();
    test_hgx_h100_p2p();
    test_dgx_incast();
    test_dgx_h2d_shared_uplinks();
    test_pcie_server_cross_socket();
    test_implied_system();
    test_two_nodes();
    tu_rmtree(dir);
    TEST_MAIN_END();
}
