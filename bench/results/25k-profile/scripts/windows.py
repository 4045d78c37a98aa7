#!/usr/bin/env python3
"""Per profile window: kube-apiserver CPU seconds (samples), the operator's writes and lists received in it, ms per write, and buckets."""
import json, sys, os, collections, re
from datetime import datetime
sys.path.insert(0, os.path.dirname(__file__))
from buckets import traces, bucket

def ts(s):
    s = s.rstrip('Z'); base, _, frac = s.partition('.')
    return datetime.fromisoformat(base).timestamp() + (float('0.' + frac) if frac else 0)

dir_, name = sys.argv[1], sys.argv[2]  # e.g. /tmp/p25/prof ours-25000
windows = json.load(open(f'{dir_}/{name}-cold-start.windows.json'))['windows']
reqs = []
with open(f'{dir_}/{name}-audit.log') as f:
    for line in f:
        e = json.loads(line)
        if e.get('stage') != 'ResponseComplete': continue
        reqs.append((ts(e['requestReceivedTimestamp']), e['verb']))
cols = ['GC (background)', 'create (handler)', 'patch (handler)', 'list (handler)', 'watch: serving events to clients', 'watch cache: dispatch to watchers', 'watch cache: ingesting etcd events', 'http/tls serving (filters, auth, framing)', 'etcd client (grpc)', 'audit log', 'other']
print('| window | s from first | CPU s | writes | lists | ms per write | ' + ' | '.join(cols) + ' |')
t0 = windows[0]['startMs'] / 1000
for i, w in enumerate(windows):
    if w.get('error'): continue
    a, b = w['startMs'] / 1000, w['endMs'] / 1000
    writes = sum(1 for t, v in reqs if a <= t < b and v in ('create', 'patch', 'update'))
    lists = sum(1 for t, v in reqs if a <= t < b and v == 'list')
    got = collections.Counter()
    for value, frames in traces([w['file']]):
        got[bucket(frames)] += value
    cpu = sum(got.values())
    per = f'{1000 * cpu / writes:.2f}' if writes else '–'
    print(f'| {i+1} | {a - t0:.0f} | {cpu:.1f} | {writes} | {lists} | {per} | ' + ' | '.join(f'{got[c]:.1f}' for c in cols) + ' |')
