#!/usr/bin/env python3
"""Write a system file for a TPU slice: X x Y x Z chips on a 3-D ICI torus.

Usage: scripts/gen_torus.py X Y Z CHIP.yaml NAME OUT.yaml

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
"""
import sys


def main():
    if len(sys.argv) != 7 or not all(a.isdigit() and int(a) >= 1 for a in sys.argv[1:4]):
        sys.exit("usage: gen_torus.py X Y Z CHIP.yaml NAME OUT.yaml")
    X, Y, Z = (int(a) for a in sys.argv[1:4])
    chip, name, path = sys.argv[4], sys.argv[5], sys.argv[6]
    n = X * Y * Z
    hosts = (n + 3) // 4
    out = []
    w = out.append
    w(f"# A TPU slice of {X} x {Y} x {Z} = {n} chips on a 3-D ICI torus, written by")
    w("# scripts/gen_torus.py (edit the script, not this file; its docstring gives")
    w("# the sources: 45 GB/s per link and direction, wraparound in every")
    w("# dimension of 4 or more chips, 4 chips per host).")
    w(f"name: {name}")
    w(f"chip: {chip}")
    w("devices: [" + ", ".join(f"chip{i}" for i in range(n)) + "]")
    w("")
    w("nodes:")
    for h in range(hosts):
        w(f"  - {{name: host{h}, kind: host, bandwidth_GBps: 204.8}}   # UNSOURCED: host DRAM bandwidth")
    w("")
    w("links:")
    dims = (X, Y, Z)

    def idx(c):
        return c[0] + X * (c[1] + Y * c[2])
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
            w(f"  - {{level: ici, from: chip{i}, to: chip{j}, bandwidth_GBps: 45, latency_ns: 1000, forward: true}}")
    for i in range(n):
        w(f"  - {{level: pcie, from: chip{i}, to: host{i // 4}, bandwidth_GBps: 32, latency_ns: 1000}}")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
