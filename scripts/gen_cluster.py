#!/usr/bin/env python3
"""Write a system file for N rail-optimised GPU nodes on InfiniBand.

Usage: scripts/gen_cluster.py [--dgx-a100] NODES OUT.yaml

Default: HGX H100 nodes on NDR.  Each node: 8 H100 SXM on NVSwitch (as
configs/systems/nvidia-hgx-h100.yaml), each GPU on its own ConnectX-7 400
Gb/s NIC through PCIe Gen5 x16 (the DGX H100 pairs every GPU with one
compute NIC), NIC i of every node on leaf switch i (one rail per NIC index,
non-blocking), one host per node.

--dgx-a100: DGX A100 (80 GB) nodes on HDR, each as
configs/systems/two-dgx-a100-hdr.yaml's: 8 A100 on NVSwitch, four PCIe Gen4
switches of two GPUs each, GPU i on NIC i (ConnectX-6, 200 Gb/s HDR)
through its switch, two EPYC sockets; NIC i on leaf i.

The figures and their sources are written into the file's comments.
"""
import sys


def leaves(w):
    """One leaf switch per rail, then the links section."""
    for i in range(8):
        w(f"  - {{name: leaf{i}, kind: switch}}   # rail {i}")
    w("")
    w("links:")


def rails(n, w, gbps):
    """NIC i of every node on leaf i, gbps per direction."""
    for k in range(n):
        for i in range(8):
            w(f"  - {{level: pcie, name: ib, from: nic{k}_{i}, to: leaf{i}, bandwidth_GBps: {gbps}, latency_ns: 600, "
              "transport: network}")


def h100(n, w):
    w(f"# {n} HGX H100 nodes ({8 * n} GPUs) on a rail-optimised NDR InfiniBand fabric,")
    w("# written by scripts/gen_cluster.py (edit the script, not this file).")
    w("#")
    w("# Each node is configs/systems/nvidia-hgx-h100.yaml's NVSwitch domain (its")
    w("# NVLink figures and their sources).  Every GPU has its own ConnectX-7")
    w("# 400 Gb/s NIC (NVIDIA DGX H100 datasheet: 8x single-port ConnectX-7 VPI,")
    w("# 400 Gb/s InfiniBand) behind PCIe Gen5 x16 (63 GB/s per direction,")
    w("# specs.csv pcie); NIC i of every node is on leaf switch i (a rail), each")
    w("# leaf non-blocking.  NDR: 400 Gb/s = 50 GB/s per direction; per-hop")
    w("# latency 0.6 us is the HDR figure of two-dgx-a100-hdr.yaml (UNSOURCED for")
    w("# NDR).  Host copies go over one PCIe Gen5 x16 link per GPU to its node's")
    w("# host (the PCIe switches of the single-node file are left out).")
    w(f"name: hgx-h100-x{n}-ndr")
    w("chip: ../nvidia-h100-sxm.yaml")
    w(f"devices: {8 * n}                 # gpu0 .. gpu{8 * n - 1}; node k holds gpu{{8k}} .. gpu{{8k+7}}")
    w("")
    w("nodes:")
    for k in range(n):
        w(f"  - {{name: nvswitch{k}, kind: switch, nvls: true}}")
        w(f"  - {{name: cpu{k}, kind: host, bandwidth_GBps: 160}}   # as nvidia-hgx-h100.yaml's cpu0")
        for i in range(8):
            w(f"  - {{name: nic{k}_{i}, kind: switch}}   # ConnectX-7")
    leaves(w)
    for k in range(n):
        gpus = ", ".join(f"gpu{8 * k + i}" for i in range(8))
        w(f"  - {{level: nvlink, from: [{gpus}], to: nvswitch{k}, bandwidth_GBps: 450, latency_ns: 400, "
          "efficiency: {bandwidth_fraction: 0.818}}   # as nvidia-hgx-h100.yaml")
    for k in range(n):
        for i in range(8):
            g = 8 * k + i
            w(f"  - {{level: pcie, name: pcie_nic, from: gpu{g}, to: nic{k}_{i}, bandwidth_GBps: 63, latency_ns: 500}}")
    for k in range(n):
        gpus = ", ".join(f"gpu{8 * k + i}" for i in range(8))
        w(f"  - {{level: pcie, from: [{gpus}], to: cpu{k}, bandwidth_GBps: 63, latency_ns: 500, "
          "efficiency: {bandwidth_fraction: 0.88}}   # as nvidia-hgx-h100.yaml")
    rails(n, w, 50)

def dgx_a100(n, w):
    w(f"# {n} DGX A100 (80 GB) nodes ({8 * n} GPUs) on a rail-optimised HDR InfiniBand")
    w("# fabric, written by scripts/gen_cluster.py --dgx-a100 (edit the script, not")
    w("# this file).  Each node is configs/systems/two-dgx-a100-hdr.yaml's, with that")
    w("# file's figures and sources: NVLink 3 through NVSwitch (300 GB/s a GPU,")
    w("# bandwidth_fraction 0.913 as the DGX A100 file); four PCIe Gen4 switches of")
    w("# two GPUs and their two compute NICs, GPU i to NIC i (GPUDirect RDMA, 31.5")
    w("# GB/s); eight ConnectX-6 200 Gb/s HDR NICs (25 GB/s per direction), NIC i of")
    w("# every node on leaf switch i (a rail), each leaf non-blocking, 0.6 us a hop")
    w("# (stas00/ml-engineering network/README.md); two EPYC 7742 sockets.  NVIDIA's")
    w("# Selene, where Megatron-LM's 2021 runs were measured, is such nodes on a")
    w("# three-level fat tree (arXiv 2104.04473, section 5); the levels above the leaf")
    w("# are left out (rail-local traffic does not use them).")
    w(f"name: dgx-a100-x{n}-hdr")
    w("chip: ../nvidia-a100-sxm-80gb.yaml")
    w(f"devices: {8 * n}                 # gpu0 .. gpu{8 * n - 1}; node k holds gpu{{8k}} .. gpu{{8k+7}}")
    w("")
    w("nodes:")
    for k in range(n):
        w(f"  - {{name: nvswitch{k}, kind: switch}}")
        for j in range(4):
            w(f"  - {{name: plx{k}_{j}, kind: switch}}")
        for i in range(8):
            w(f"  - {{name: nic{k}_{i}, kind: switch}}   # ConnectX-6 HDR")
        for j in range(2):
            w(f"  - {{name: cpu{k}_{j}, kind: host, bandwidth_GBps: 204.8}}   # EPYC 7742, 8 x DDR4-3200")
    leaves(w)
    for k in range(n):
        gpus = ", ".join(f"gpu{8 * k + i}" for i in range(8))
        w(f"  - {{level: nvlink, from: [{gpus}], to: nvswitch{k}, bandwidth_GBps: 300, latency_ns: 400, "
          "efficiency: {bandwidth_fraction: 0.913}}")
        for j in range(4):
            w(f"  - {{level: pcie, from: [gpu{8 * k + 2 * j}, gpu{8 * k + 2 * j + 1}], to: plx{k}_{j}, "
              "bandwidth_GBps: 31.5, latency_ns: 500}")
        for i in range(8):
            w(f"  - {{level: pcie, name: pcie_nic, from: gpu{8 * k + i}, to: nic{k}_{i}, bandwidth_GBps: 31.5, "
              "latency_ns: 500}")
        for j in range(2):
            w(f"  - {{level: pcie, name: pcie_uplink, from: [plx{k}_{2 * j}, plx{k}_{2 * j + 1}], to: cpu{k}_{j}, "
              "bandwidth_GBps: 31.5, latency_ns: 500}")
        w(f"  - {{level: pcie, name: xgmi, from: cpu{k}_0, to: cpu{k}_1, bandwidth_GBps: 144, latency_ns: 500}}"
          "   # UNSOURCED estimate, as the DGX A100 file")
    rails(n, w, 25)


def main():
    args = sys.argv[1:]
    a100 = len(args) > 0 and args[0] == "--dgx-a100"
    if a100:
        args = args[1:]
    if len(args) != 2 or not args[0].isdigit() or int(args[0]) < 1:
        sys.exit("usage: gen_cluster.py [--dgx-a100] NODES OUT.yaml")
    out = []
    (dgx_a100 if a100 else h100)(int(args[0]), out.append)
    with open(args[1], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
