#!/usr/bin/env python3
"""Write a system file for a TPU slice: X x Y x Z chips on a 3-D ICI torus.

Usage: scripts/gen_torus.py [--gen v4|v5e|v5p|v6e] X Y Z CHIP.yaml NAME OUT.yaml [SLICES]

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

--gen picks the generation's figures (default v4, the figures above):
  v5e: 45 GB/s per ICI link and direction (specs.csv "TPU v5e,ici_bw_per_link_oneway"
       4.5e10, scaling-book; Google's v5e page: 'Bidirectional inter-chip interconnect
       (ICI) bandwidth (per chip) 400 GBps' over 'ICI ports per chip 4' = 50 raw),
       8 chips per host ('Chips per host 8'), DCN 25 GB/s per host ('Per-host NIC
       configuration 2 x 100 Gbps NIC'; docs.cloud.google.com/tpu/docs/v5e).
  v5p: 90 GB/s per link and direction (specs.csv "TPU v5p,ici_bw_per_link_oneway"
       9e10, scaling-book; Google's v5p page: '1200' GBps bidirectional per chip over
       6 ports = 100 raw), 4 chips per host ('4-chip VM'), DCN 25 GB/s per host
       ('Data center network (DCN) bandwidth per chip (Gbps) 50' x 4 chips;
       docs.cloud.google.com/tpu/docs/v5p).
  v6e: 90 GB/s per link and direction (specs.csv "TPU v6e,ici_bw_per_link_oneway"
       9e10; Google: 800 GB/s bidirectional per chip over 4 ports = 100 raw), 8 chips
       per host (specs.csv chips_per_host), DCN 100 GB/s per host (ESTIMATE: Google's
       v6e page 'Data center network bandwidth per Pod 25.6 Tbps' / 256 chips = 100
       Gbps a chip, recalled, not re-read here).
Host i holds chips i*H .. i*H+H-1 in index order (H chips per host).
"""
import sys

# generation -> (ICI GB/s per link per direction, chips per host, DCN GB/s per host)
GENS = {"v4": (45, 4, 25), "v5e": (45, 8, 25), "v5p": (90, 4, 25), "v6e": (90, 8, 100)}


def main():
    argv = sys.argv[1:]
    gen = "v4"
    if len(argv) >= 2 and argv[0] == "--gen":
        gen = argv[1]
        argv = argv[2:]
    if gen not in GENS or len(argv) not in (6, 7) or not all(a.isdigit() and int(a) >= 1 for a in argv[0:3]) or \
            (len(argv) == 7 and not (argv[6].isdigit() and int(argv[6]) >= 1)):
        sys.exit("usage: gen_torus.py [--gen v4|v5e|v5p|v6e] X Y Z CHIP.yaml NAME OUT.yaml [SLICES]")
    ici, per_host, dcn = GENS[gen]
    X, Y, Z = (int(a) for a in argv[0:3])
    chip, name, path = argv[3], argv[4], argv[5]
    S = int(argv[6]) if len(argv) == 7 else 1
    n = X * Y * Z
    hosts = (n + per_host - 1) // per_host
    out = []
    w = out.append
    if S == 1:
        w(f"# A TPU slice of {X} x {Y} x {Z} = {n} chips on a 3-D ICI torus, written by")
    else:
        w(f"# {S} TPU slices of {X} x {Y} x {Z} = {n} chips, each on a 3-D ICI torus, joined by")
        w(f"# the data-center network ({dcn} GB/s per host of {per_host} chips), written by")
    if gen == "v4":
        w("# scripts/gen_torus.py (edit the script, not this file; its docstring gives")
    else:
        w(f"# scripts/gen_torus.py --gen {gen} (edit the script, not this file; its docstring gives")
    w(f"# the sources: {ici} GB/s per link and direction, wraparound in every")
    w(f"# dimension of 4 or more chips, {per_host} chips per host).")
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
        torus_links(w, X, Y, Z, sl * n, ici)
    for i in range(n * S):
        w(f"  - {{level: pcie, from: chip{i}, to: host{i // per_host}, bandwidth_GBps: 32, latency_ns: 1000}}")
    if S > 1:
        for i in range(n * S):
            w(f"  - {{level: pcie, name: pcie_nic, from: chip{i}, to: nic{i // per_host}, bandwidth_GBps: 32, latency_ns: 1000}}")
        for h in range(hosts * S):
            w(f"  - {{level: pcie, name: dcn, from: nic{h}, to: dcn, bandwidth_GBps: {dcn}, latency_ns: 10000, transport: network}}")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def torus_links(w, X, Y, Z, base, ici):
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
            w(f"  - {{level: ici, from: chip{base + i}, to: chip{j}, bandwidth_GBps: {ici}, latency_ns: 1000, forward: true}}")


if __name__ == "__main__":
    main()
