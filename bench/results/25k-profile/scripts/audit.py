#!/usr/bin/env python3
"""Counts an audit log's requests by verb and resource, with server-side latency, and details lists and watches."""
import json, sys, collections
from urllib.parse import urlparse, parse_qs
from datetime import datetime

def ts(s):
    s = s.rstrip('Z'); base, _, frac = s.partition('.')
    return datetime.fromisoformat(base).timestamp() + (float('0.' + frac) if frac else 0)

def resource(ref):
    r = ref.get('resource', 'nonresource') + ('.' + ref['apiGroup'] if ref.get('apiGroup') else '') + ('/' + ref['subresource'] if ref.get('subresource') else '')
    return r

for path in sys.argv[1:]:
    counts = collections.Counter(); latency = collections.Counter()
    lists = collections.Counter(); watches = collections.Counter(); list_items_ms = []
    first = last = None
    with open(path) as f:
        for line in f:
            e = json.loads(line)
            if e.get('stage') != 'ResponseComplete': continue
            key = (e['verb'], resource(e.get('objectRef', {})))
            counts[key] += 1
            rec, done = ts(e['requestReceivedTimestamp']), ts(e['stageTimestamp'])
            first = rec if first is None else min(first, rec); last = rec if last is None else max(last, rec)
            if e['verb'] != 'watch': latency[key] += done - rec
            q = parse_qs(urlparse(e['requestURI']).query)
            ns = e.get('objectRef', {}).get('namespace', '*')
            if e['verb'] == 'list':
                lists[(key[1], 'limit=' + q.get('limit', ['-'])[0], 'continue' if 'continue' in q else 'first page', 'rv=' + q.get('resourceVersion', ['-'])[0])] += 1
            if e['verb'] == 'watch':
                watches[(key[1], ns, q.get('fieldSelector', [''])[0], q.get('labelSelector', [''])[0])] += 1
    print(f'## {path}  ({last - first:.0f} s of requests)')
    print('| verb | resource | requests | server time total (s) | mean (ms) |')
    print('| --- | --- | --- | --- | --- |')
    for key, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f'| {key[0]} | {key[1]} | {n} | {latency[key]:.1f} | {1000*latency[key]/n:.2f} |')
    print('\nlists by resource, page size, page, resourceVersion:')
    for key, n in sorted(lists.items(), key=lambda kv: -kv[1]): print(f'  {n:6d}  {" ".join(key)}')
    print('watches by resource, namespace, selectors:')
    for key, n in sorted(watches.items(), key=lambda kv: -kv[1]): print(f'  {n:6d}  {" | ".join(key)}')
    print()
