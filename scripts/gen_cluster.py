#!/usr/bin/env python3
"""Write a system file for N rail-optimised GPU nodes on InfiniBand.

Usage: scripts/gen_cluster.py [--dgx-a100 | --hgx-h200 | --hgx-b200] NODES OUT.yaml
       scripts/gen_cluster.py --gb200-nvl72 OUT.yaml

Default: HGX H100 nodes on NDR.  Each node: 8 H100 SXM on NVSwitch (as
configs/systems/nvidia-hgx-h100.yaml), each GPU on its own ConnectX-7 400
Gb/s NIC through PCIe Gen5 x16 (the DGX H100 pairs every GPU with one
compute NIC), NIC i of every node on leaf switch i (one rail per NIC index,
non-blocking), one host per node.

--dgx-a100: DGX A100 (80 GB) nodes on HDR, each as
configs/systems/two-dgx-a100-hdr.yaml's: 8 A100 on NVSwitch, four PCIe Gen4
switches of two GPUs each, GPU i on NIC i (ConnectX-6, 200 Gb/s HDR)
through its switch, two EPYC sockets; NIC i on leaf i.

--hgx-h200, --hgx-b200: the same rail-optimised NDR fabric with HGX H200 nodes
(configs/systems/nvidia-hgx-h200.yaml's NVSwitch domain) or HGX B200 nodes
(configs/systems/nvidia-hgx-b200.yaml's: NVLink 5, 900 GB/s a GPU per
direction); both pair every GPU with one ConnectX-7 400 Gb/s NIC on PCIe Gen5,
as the DGX H100 does (DGX B200 datasheet: 8 single-port ConnectX-7 VPI, 400 Gb/s
InfiniBand/Ethernet, recalled, not re-read here).

--gb200-nvl72: one GB200 NVL72 rack: 72 B200-class GPUs (configs/nvidia-gb200.yaml)
on one NVLink domain of 18 NVLink Switch trays (one non-blocking switch node,
900 GB/s a GPU per direction), and 36 Grace CPUs, each on NVLink-C2C to its
superchip's two GPUs.  Scale-out NICs are left out (rack-local traffic).

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
    w(f"  - repeat: {{k: {n}, i: 8}}")
    w("    links:")
    w(f"      - {{level: pcie, name: ib, from: \"nic{{k}}_{{i}}\", to: \"leaf{{i}}\", bandwidth_GBps: {gbps}, "
      "latency_ns: 600, transport: network}")


def node_gpus(first=0, count=8):
    """A node's GPUs as names in a repeat group over its nodes k."""
    return ", ".join(f"\"gpu{{8*k+{first + i}}}\"" for i in range(count))


HGX = {
    "h100": ("HGX H100", "nvidia-hgx-h100.yaml", "../nvidia-h100-sxm.yaml", 450, 0.818, "hgx-h100"),
    "h200": ("HGX H200", "nvidia-hgx-h200.yaml", "../nvidia-h200-sxm.yaml", 450, 0.818, "hgx-h200"),
    "b200": ("HGX B200", "nvidia-hgx-b200.yaml", "../nvidia-b200.yaml", 900, 0.818, "hgx-b200"),
}


def h100(n, w, kind="h100"):
    label, single, chip, nvbw, nveff, stem = HGX[kind]
    w(f"# {n} {label} nodes ({8 * n} GPUs) on a rail-optimised NDR InfiniBand fabric,")
    w("# written by scripts/gen_cluster.py (edit the script, not this file).")
    w("#")
    w(f"# Each node is configs/systems/{single}'s NVSwitch domain (its")
    w("# NVLink figures and their sources).  Every GPU has its own ConnectX-7")
    w("# 400 Gb/s NIC (NVIDIA DGX H100 datasheet: 8x single-port ConnectX-7 VPI,")
    w("# 400 Gb/s InfiniBand) behind PCIe Gen5 x16 (63 GB/s per direction,")
    w("# specs.csv pcie); NIC i of every node is on leaf switch i (a rail), each")
    w("# leaf non-blocking.  NDR: 400 Gb/s = 50 GB/s per direction; per-hop")
    w("# latency 0.6 us is the HDR figure of two-dgx-a100-hdr.yaml (UNSOURCED for")
    w("# NDR).  Host copies go over one PCIe Gen5 x16 link per GPU to its node's")
    w("# host (the PCIe switches of the single-node file are left out).")
    if kind == "b200":
        w("# B200 nodes: DGX B200 datasheet, 8 single-port ConnectX-7 VPI at 400 Gb/s")
        w("# (recalled, not re-read here); NVLink efficiency 0.818 is the H100 fit,")
        w("# an ESTIMATE for NVLink 5.")
    w(f"name: {stem}-x{n}-ndr")
    w(f"chip: {chip}")
    w(f"devices: {8 * n}                 # gpu0 .. gpu{8 * n - 1}; node k holds gpu{{8k}} .. gpu{{8k+7}}")
    w("")
    w("nodes:   # node k: nvswitch{k}, cpu{k}, nic{k}_0 .. nic{k}_7 (docs/systems.md, repeat groups)")
    w(f"  - repeat: {{k: {n}}}")
    w("    nodes:")
    w("      - {name: \"nvswitch{k}\", kind: switch, nvls: true}")
    w(f"      - {{name: \"cpu{{k}}\", kind: host, bandwidth_GBps: 160}}   # as {single}'s cpu0")
    w("      - repeat: {i: 8}")
    w("        nodes:")
    w("          - {name: \"nic{k}_{i}\", kind: switch}   # ConnectX-7")
    leaves(w)
    w(f"  - repeat: {{k: {n}}}")
    w("    links:")
    w(f"      - {{level: nvlink, from: [{node_gpus()}], to: \"nvswitch{{k}}\", bandwidth_GBps: {nvbw}, "
      f"latency_ns: 400, efficiency: {{bandwidth_fraction: {nveff}}}}}   # as {single}")
    w(f"  - repeat: {{k: {n}, i: 8}}")
    w("    links:")
    w("      - {level: pcie, name: pcie_nic, from: \"gpu{8*k+i}\", to: \"nic{k}_{i}\", bandwidth_GBps: 63, "
      "latency_ns: 500}")
    w(f"  - repeat: {{k: {n}}}")
    w("    links:")
    w(f"      - {{level: pcie, from: [{node_gpus()}], to: \"cpu{{k}}\", bandwidth_GBps: 63, latency_ns: 500, "
      f"efficiency: {{bandwidth_fraction: 0.88}}}}   # as {single}")
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
    w("nodes:   # node k: nvswitch{k}, plx{k}_0..3, nic{k}_0..7, cpu{k}_0..1 (docs/systems.md, repeat groups)")
    w(f"  - repeat: {{k: {n}}}")
    w("    nodes:")
    w("      - {name: \"nvswitch{k}\", kind: switch}")
    w("      - repeat: {j: 4}")
    w("        nodes:")
    w("          - {name: \"plx{k}_{j}\", kind: switch}")
    w("      - repeat: {i: 8}")
    w("        nodes:")
    w("          - {name: \"nic{k}_{i}\", kind: switch}   # ConnectX-6 HDR")
    w("      - repeat: {j: 2}")
    w("        nodes:")
    w("          - {name: \"cpu{k}_{j}\", kind: host, bandwidth_GBps: 204.8}   # EPYC 7742, 8 x DDR4-3200")
    leaves(w)
    w(f"  - repeat: {{k: {n}}}")
    w("    links:")
    w(f"      - {{level: nvlink, from: [{node_gpus()}], to: \"nvswitch{{k}}\", bandwidth_GBps: 300, "
      "latency_ns: 400, efficiency: {bandwidth_fraction: 0.913}}")
    w("      - repeat: {j: 4}")
    w("        links:")
    w("          - {level: pcie, from: [\"gpu{8*k+2*j}\", \"gpu{8*k+2*j+1}\"], to: \"plx{k}_{j}\", "
      "bandwidth_GBps: 31.5, latency_ns: 500}")
    w("      - repeat: {i: 8}")
    w("        links:")
    w("          - {level: pcie, name: pcie_nic, from: \"gpu{8*k+i}\", to: \"nic{k}_{i}\", bandwidth_GBps: 31.5, "
      "latency_ns: 500}")
    w("      - repeat: {j: 2}")
    w("        links:")
    w("          - {level: pcie, name: pcie_uplink, from: [\"plx{k}_{2*j}\", \"plx{k}_{2*j+1}\"], "
      "to: \"cpu{k}_{j}\", bandwidth_GBps: 31.5, latency_ns: 500}")
    w("      - {level: pcie, name: xgmi, from: \"cpu{k}_0\", to: \"cpu{k}_1\", bandwidth_GBps: 144, latency_ns: 500}"
      "   # UNSOURCED estimate, as the DGX A100 file")
    rails(n, w, 25)


def gb200_nvl72(w):
    w("# One NVIDIA GB200 NVL72 rack: 36 GB200 superchips (72 B200-class GPUs, 36")
    w("# Grace CPUs) on one NVLink domain, written by scripts/gen_cluster.py")
    w("# --gb200-nvl72 (edit the script, not this file).")
    w("#")
    w("# NVLink: every GPU's 18 NVLink5 links go to the rack's 18 NVLink Switch trays")
    w("# (NVIDIA GB200 NVL72 table: '5th Generation NVLink: 1.8TB/s' per GPU, 'Total")
    w("# NVLink Bandwidth 130TB/s' = 72 x 1.8; configs/nvidia-gb200.yaml's nvlink")
    w("# level), taken as one non-blocking switch with NVLink SHARP; 900 GB/s per")
    w("# direction, efficiency 0.818 the HGX H100 fit (ESTIMATE for NVLink 5),")
    w("# latency 400 ns as nvidia-hgx-h100.yaml (UNSOURCED for NVLink 5 trays).")
    w("# Hosts: Grace k holds gpu{2k}, gpu{2k+1} on NVLink-C2C (the chip config's")
    w("# host level, 450 GB/s per direction; whether both GPUs share it NVIDIA does not")
    w("# say, so each gets its own link here), with 480 GB LPDDR5X at up to 512 GB/s")
    w("# (NVIDIA Grace CPU datasheet figure, recalled, not re-read here).  The")
    w("# ConnectX scale-out NICs and the Grace-Grace links are left out.")
    w("name: nvidia-gb200-nvl72")
    w("chip: ../nvidia-gb200.yaml")
    w("devices: 72                 # gpu0 .. gpu71; superchip k holds gpu{2k}, gpu{2k+1}")
    w("")
    w("nodes:")
    w("  - {name: nvswitch, kind: switch, nvls: true}   # 18 NVLink Switch trays (2 NVSwitch chips each), non-blocking")
    for k in range(36):
        w(f"  - {{name: grace{k}, kind: host, bandwidth_GBps: 512}}   # LPDDR5X, up to 512 GB/s")
    w("")
    w("links:")
    w("  - {level: nvlink, from: \"*\", to: nvswitch, bandwidth_GBps: 900, latency_ns: 400, "
      "efficiency: {bandwidth_fraction: 0.818}}")
    for k in range(36):
        w(f"  - {{level: host, name: c2c, from: [gpu{2 * k}, gpu{2 * k + 1}], to: grace{k}, bandwidth_GBps: 450, "
          "latency_ns: 1000}")


def main():
    args = sys.argv[1:]
    usage = "usage: gen_cluster.py [--dgx-a100 | --hgx-h200 | --hgx-b200] NODES OUT.yaml | --gb200-nvl72 OUT.yaml"
    if len(args) == 2 and args[0] == "--gb200-nvl72":
        out = []
        gb200_nvl72(out.append)
        with open(args[1], "w") as f:
            f.write("\n".join(out) + "\n")
        return
    flag = args[0] if args and args[0].startswith("--") else None
    if flag is not None:
        args = args[1:]
    if flag not in (None, "--dgx-a100", "--hgx-h200", "--hgx-b200") or len(args) != 2 or \
            not args[0].isdigit() or int(args[0]) < 1:
        sys.exit(usage)
    out = []
    if flag == "--dgx-a100":
        dgx_a100(int(args[0]), out.append)
    else:
        h100(int(args[0]), out.append, {None: "h100", "--hgx-h200": "h200", "--hgx-b200": "b200"}[flag])
    with open(args[1], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
