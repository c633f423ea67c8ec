#!/usr/bin/env python3
"""One-off migration of chip configs from the flat schema (registers,
shared_memory, l2, dram, pcie, nvlink sections) to the level list (issue:
memory levels as data).  Keeps every value and its source comment; run once
over configs/*.yaml:

    python3 scripts/migrate_levels.py configs/*.yaml

Names: TPUs call their levels what they are (staging, vmem, hbm, ici),
Apple SoCs their system level cache slc, the Ethos-U its sram; NVIDIA
configs keep smem, l2, dram, pcie, nvlink.  dram.channels (never read) is
dropped, and so is an nvlink section that a config kept only "for the
schema".  A file already migrated (it has `levels:`) is left alone."""
import re, sys

def parse(lines):
    """Top-level sections -> (section line comment, [(key, rest, pre-comments, nested lines)])."""
    head, secs, order = [], {}, []
    cur, pre = None, []
    for ln in lines:
        if ln.strip() == '':
            pre = []
            if cur is None:
                head.append(ln)
            continue
        if not ln.startswith(' '):
            if ln.startswith('#'):
                (head if cur is None else pre).append(ln)
                continue
            m = re.match(r'([A-Za-z_0-9]+):(.*)$', ln)
            key, rest = m.group(1), m.group(2)
            if rest.strip() == '' or rest.strip().startswith('#'):
                cur = key
                secs[key] = {'comment': rest.strip(), 'keys': [], 'pre': pre}
                order.append(key)
            else:
                cur = None
                head.extend(pre)
                head.append(ln)
            pre = []
            continue
        ind = len(ln) - len(ln.lstrip())
        body = ln.strip()
        if body.startswith('#'):
            pre.append(ln)
            continue
        if ind == 2:
            m = re.match(r'([A-Za-z_0-9]+):(.*)$', body)
            secs[cur]['keys'].append([m.group(1), m.group(2), pre, []])
        else:
            secs[cur]['keys'][-1][3].append(ln)
        pre = []
    return head, secs, order

def key(sec, k):
    for e in sec['keys']:
        if e[0] == k:
            return e
    return None

def out_key(o, ind, newname, e, extra=''):
    if e is None:
        return
    for p in e[2]:
        o.append(' ' * ind + p.strip())
    o.append(' ' * ind + newname + ':' + e[1] + extra)
    for n in e[3]:
        o.append(' ' * (ind - 2) + n)

def migrate(path):
    text = open(path).read()
    if re.search(r'^levels:', text, re.M):
        return False
    lines = text.rstrip('\n').split('\n')
    head, s, order = parse(lines)
    fam = re.search(r'^family:\s*(\w+)', text, re.M).group(1)
    base = path.rsplit('/', 1)[-1]
    names = {'smem': 'smem', 'l2': 'l2', 'dram': 'dram', 'pcie': 'pcie', 'nvlink': 'nvlink'}
    if base.startswith('google-tpu'):
        names.update(smem='staging', l2='vmem', dram='hbm', nvlink='ici')
    elif base.startswith('apple-'):
        names.update(l2='slc')
    elif base.startswith('arm-ethos'):
        names.update(smem='staging', l2='sram')
    o = list(head)
    while o and o[-1].strip() == '':
        o.pop()
    comp = s['compute']
    o += [''] + [p for p in comp['pre']] + ['compute:' + (' ' + comp['comment'] if comp['comment'] else '')]
    sysl = key(comp, 'systolic')
    for e in comp['keys']:
        if e[0] in ('units', 'matrix_flops_per_cycle_per_unit', 'vector_flops_per_cycle_per_unit'):
            out_key(o, 2, e[0], e)
    if fam == 'gpu':
        o += ['', 'threads:                       # a GPU\'s resident threads and thread blocks per SM']
        out_key(o, 2, 'max_threads_per_unit', key(comp, 'max_threads_per_unit'))
        out_key(o, 2, 'max_ctas_per_unit', key(comp, 'max_ctas_per_unit'))
    if sysl is not None:
        o += ['', 'systolic:' + sysl[1]]
        for n in sysl[3]:
            o.append('  ' + n.strip())
        if fam != 'gpu':
            out_key(o, 2, 'max_tiles_per_unit', key(comp, 'max_ctas_per_unit'))
    o += ['', 'levels:                        # innermost first (configs/README.md)']
    def level(sec_name, name, kind, scope=None):
        sec = s[sec_name]
        for p in sec['pre']:
            o.append('  ' + p.strip())
        o.append('  - name: ' + name + ('  ' + sec['comment'] if sec['comment'] else ''))
        o.append('    kind: ' + kind)
        if scope:
            o.append('    scope: ' + scope)
        return sec
    r = level('registers', 'registers', 'registers')
    out_key(o, 4, 'capacity_KiB', key(r, 'capacity_KiB_per_unit'))
    r = level('shared_memory', names['smem'], 'scratchpad')
    out_key(o, 4, 'capacity_KiB', key(r, 'capacity_KiB_per_unit'))
    out_key(o, 4, 'bandwidth_bytes_per_cycle', key(r, 'bandwidth_bytes_per_cycle_per_unit'))
    r = level('l2', names['l2'], 'cache')
    for k in ('capacity_MiB', 'bandwidth_GBps', 'latency_ns', 'port_bytes_per_cycle_per_unit'):
        out_key(o, 4, k, key(r, k))
    r = level('dram', names['dram'], 'dram')
    for k in ('type', 'capacity_GB', 'capacity_GiB', 'bandwidth_GBps', 'latency_ns', 'unified'):
        out_key(o, 4, k, key(r, k))
    eff = s['efficiency']
    o.append('    efficiency:')
    out_key(o, 6, 'bandwidth_fraction', key(eff, 'dram_bandwidth_fraction'))
    out_key(o, 6, 'rw_turnaround_penalty', key(eff, 'dram_rw_turnaround_penalty'))
    out_key(o, 6, 'loaded_latency_ns', key(eff, 'dram_loaded_latency_ns'))
    r = level('pcie', names['pcie'], 'link', 'host')
    out_key(o, 4, 'bandwidth_GBps', key(r, 'bandwidth_GBps_per_direction'))
    if 'nvlink' in s and 'kept for the schema' not in s['nvlink']['comment']:
        r = level('nvlink', names['nvlink'], 'link', 'system')
        out_key(o, 4, 'ports', key(r, 'links'))
        out_key(o, 4, 'bandwidth_GBps', key(r, 'bandwidth_GBps_per_link_per_direction'))
        out_key(o, 4, 'latency_ns', key(r, 'latency_ns'))
    r = s['pcie']
    # pcie latency goes with the host link above: insert after its bandwidth
    idx = max(i for i, l in enumerate(o) if l.startswith('  - name: ' + names['pcie']))
    j = idx + 1
    while j < len(o) and not o[j].startswith('  - name:'):
        j += 1
    tmp = []
    out_key(tmp, 4, 'latency_ns', key(r, 'latency_ns'))
    o[j:j] = tmp
    for sec in ('launch',):
        x = s[sec]
        o += [''] + [p for p in x['pre']] + [sec + ':' + ((' ' + x['comment']) if x['comment'] else '')]
        for e in x['keys']:
            out_key(o, 2, e[0], e)
    o += [''] + [p for p in eff['pre']] + ['efficiency:' + ((' ' + eff['comment']) if eff['comment'] else '')]
    for k in ('matrix_pipe_fraction', 'vector_pipe_fraction', 'inflight_bytes_per_unit'):
        out_key(o, 2, k, key(eff, k))
    known = {'compute', 'registers', 'shared_memory', 'l2', 'dram', 'pcie', 'nvlink', 'launch', 'efficiency'}
    left = [k for k in order if k not in known]
    if left:
        raise SystemExit(f'{path}: sections the migration does not know: {left}')
    open(path, 'w').write('\n'.join(o) + '\n')
    return True

if __name__ == '__main__':
    for p in sys.argv[1:]:
        print(('migrated ' if migrate(p) else 'already migrated ') + p)
