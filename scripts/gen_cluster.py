#!/usr/bin/env python3
"""Write a system file for N rail-optimised HGX H100 nodes on NDR InfiniBand.

Usage: scripts/gen_cluster.py NODES OUT.yaml

Each node: 8 H100 SXM on NVSwitch (as configs/systems/nvidia-hgx-h100.yaml),
each GPU on its own ConnectX-7 400 Gb/s NIC through PCIe Gen5 x16 (the DGX
H100 pairs every GPU with one compute NIC), NIC i of every node on leaf
switch i (one rail per NIC index, non-blocking), one host per node.  The
figures and their sources are written into the file's comments.
"""
import sys


def main():
    if len(sys.argv) != 3 or not sys.argv[1].isdigit() or int(sys.argv[1]) < 1:
        sys.exit("usage: gen_cluster.py NODES OUT.yaml")
    n = int(sys.argv[1])
    out = []
    w = out.append
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
    for i in range(8):
        w(f"  - {{name: leaf{i}, kind: switch}}   # rail {i}")
    w("")
    w("links:")
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
    for k in range(n):
        for i in range(8):
            w(f"  - {{level: pcie, name: ib, from: nic{k}_{i}, to: leaf{i}, bandwidth_GBps: 50, latency_ns: 600, "
              "transport: network}")
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
