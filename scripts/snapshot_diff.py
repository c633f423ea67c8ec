#!/usr/bin/env python3
"""Compares two folders written by scripts/snapshot.sh: every run's total
time and every op's start and end (and every validate row's prediction)
must agree to 1e-12 relative.  Prints the differences; exit 1 if any."""
import json, os, sys

def rel(a, b):
    return abs(a - b) / max(abs(a), abs(b), 1e-300)

def main(a, b, tol=1e-12):
    bad = 0
    names = sorted(n for n in os.listdir(a) if n.endswith('.json'))
    for n in names:
        pa, pb = os.path.join(a, n), os.path.join(b, n)
        if not os.path.exists(pb):
            print(f'{n}: missing in {b}'); bad += 1; continue
        ja, jb = json.load(open(pa)), json.load(open(pb))
        if n == 'validate.json':
            ra = {x.get('id'): x for x in ja.get('rows', [])}
            rb = {x.get('id'): x for x in jb.get('rows', [])}
            for k, x in ra.items():
                y = rb.get(k)
                if y is None:
                    print(f'{n}: {k}: missing in {b}'); bad += 1
                elif rel(x.get('predicted', 0), y.get('predicted', 0)) > tol:
                    print(f'{n}: {k}: {x.get("predicted")} != {y.get("predicted")}'); bad += 1
            if len(rb) > len(ra):
                print(f'{n}: {len(rb) - len(ra)} new rows in {b} (not compared)')
            continue
        if rel(ja['total_time_s'], jb['total_time_s']) > tol:
            print(f'{n}: total {ja["total_time_s"]} != {jb["total_time_s"]}'); bad += 1
        for x, y in zip(ja['ops'], jb['ops']):
            for k in ('start_s', 'end_s', 'time_s'):
                if k in x and rel(x[k], y.get(k, float('nan'))) > tol:
                    print(f'{n}: op {x.get("id")}: {k} {x[k]} != {y.get(k)}'); bad += 1; break
    print(f'{len(names)} reports compared, {bad} differences')
    return 1 if bad else 0

if __name__ == '__main__':
    sys.exit(main(sys.argv[1], sys.argv[2]))
