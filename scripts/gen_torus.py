#!/usr/bin/env python3
"""Write a system file for a TPU slice: X x Y x Z chips on a 3-D ICI torus.

Usage: scripts/gen_torus.py X Y Z CHIP.yaml NAME OUT.yaml [SLICES]

Chip (x, y, z) is device chip<i>, i = x + X * (y + Y * z).  Each chip links
to its neighbour in every dimension; a dimension of 4 or more chips also
wraps around (TPU v4 slices that are whole 4x4x4 cubes are tori: their
optical circuit switches close each dimension, Jouppi et al., ISCA 2023;
jax-ml/scaling-book tpus.md: "TPU v4 ... full cubes have wraparounds").
ICI links carry 45 GB/s per direction (specs.csv ici_bw_per_link_oneway
4.5e10 B/s, scaling-book); the 1 us latency is the chip config's
placeholder (UNSOURCED).  Every 4 chips share a host (a TPU v4 VM host has 4
chips, cloud.google.com/tpu/docs/v4), on PCIe.  Routing is dimension order
through each chip's ICI router (forward: true).

With SLICES > 1 the file holds that many such slices (chip<i> of slice s is
device chip<s * X*Y*Z + i>), joined by the data-center network (DCN), as a
MaxText multi-slice run uses them: each host's NIC (a switch node its four
chips reach over PCIe) links to one DCN switch at 25 GB/s, 6.25 GB/s of DCN
egress per chip (jax-ml/scaling-book tpus.md tabulates 6.25e9 bytes/s per
chip for v4p and v5p; not checked against a Google page for v4), with a
10 us latency (UNSOURCED).  The switch is taken as non-blocking.
"""
import sys


def main():
    if len(sys.argv) not in (7, 8) or not all(a.isdigit() and int(a) >= 1 for a in sys.argv[1:4]) or \
            (len(sys.argv) == 8 and not (sys.argv[7].isdigit() and int(sys.argv[7]) >= 1)):
        sys.exit("usage: gen_torus.py X Y Z CHIP.yaml NAME OUT.yaml [SLICES]")
    X, Y, Z = (int(a) for a in sys.argv[1:4])
    chip, name, path = sys.argv[4], sys.argv[5], sys.argv[6]
    S = int(sys.argv[7]) if len(sys.argv) == 8 else 1
    n = X * Y * Z
    hosts = (n + 3) // 4
    out = []
    w = out.append
    if S == 1:
        w(f"# A TPU slice of {X} x {Y} x {Z} = {n} chips on a 3-D ICI torus, written by")
    else:
        w(f"# {S} TPU slices of {X} x {Y} x {Z} = {n} chips, each on a 3-D ICI torus, joined by")
        w(f"# the data-center network (25 GB/s per host of 4 chips), written by")
    w("# scripts/gen_torus.py (edit the script, not this file; its docstring gives")
    w("# the sources: 45 GB/s per link and direction, wraparound in every")
    w("# dimension of 4 or more chips, 4 chips per host).")
    w(f"name: {name}")
    w(f"chip: {chip}")
    w("devices: [" + ", ".join(f"chip{i}" for i in range(n * S)) + "]")
    w("")
    w("nodes:")
    for h in range(hosts * S):
        w(f"  - {{name: host{h}, kind: host, bandwidth_GBps: 204.8}}   # UNSOURCED: host DRAM bandwidth")
    if S > 1:
        for h in range(hosts * S):
            w(f"  - {{name: nic{h}, kind: switch}}")
        w("  - {name: dcn, kind: switch}   # the data-center network, taken as non-blocking")
    w("")
    w("links:")
    dims = (X, Y, Z)

    for sl in range(S):
        torus_links(w, X, Y, Z, sl * n)
    for i in range(n * S):
        w(f"  - {{level: pcie, from: chip{i}, to: host{i // 4}, bandwidth_GBps: 32, latency_ns: 1000}}")
    if S > 1:
        for i in range(n * S):
            w(f"  - {{level: pcie, name: pcie_nic, from: chip{i}, to: nic{i // 4}, bandwidth_GBps: 32, latency_ns: 1000}}")
        for h in range(hosts * S):
            w(f"  - {{level: pcie, name: dcn, from: nic{h}, to: dcn, bandwidth_GBps: 25, latency_ns: 10000, transport: network}}")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def torus_links(w, X, Y, Z, base):
    """The ICI links of one X x Y x Z slice whose chips start at chip<base>."""
    n = X * Y * Z
    dims = (X, Y, Z)

    def idx(c):
        return base + c[0] + X * (c[1] + Y * c[2])
    for i in range(n):
        c = (i % X, (i // X) % Y, i // (X * Y))
        for d in range(3):
            size = dims[d]
            if size < 2:
                continue
            nxt = list(c)
            nxt[d] = c[d] + 1
            if nxt[d] == size:
                if size < 4 or size == 2:
                    continue
                nxt[d] = 0          # the wraparound
            j = idx(nxt)
            w(f"  - {{level: ici, from: chip{base + i}, to: chip{j}, bandwidth_GBps: 45, latency_ns: 1000, forward: true}}")


if __name__ == "__main__":
    main()
