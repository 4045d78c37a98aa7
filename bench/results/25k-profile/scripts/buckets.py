#!/usr/bin/env python3
"""Bucket kube-apiserver CPU samples by activity (the first rule matching from the root), from `go tool pprof -traces`."""
import re, subprocess, sys, glob, collections

GO = '/usr/local/go/bin/go'
# (bucket, regex) in order: the first rule that matches any frame of a sample names its bucket.
RULES = [
    ('GC (background)', r'^runtime\.(gcBgMarkWorker|bgsweep|bgscavenge)'),
    ('watch: serving events to clients', r'handlers\.(serveWatch|\(\*WatchServer\))|handlers\.serveWatchHandler'),
    ('create (handler)', r'handlers\.(createHandler|CreateResource|CreateNamedResource)'),
    ('patch (handler)', r'handlers\.(PatchResource|\(\*patcher\))'),
    ('update (handler)', r'handlers\.UpdateResource'),
    ('list (handler)', r'handlers\.ListResource'),
    ('get (handler)', r'handlers\.GetResource'),
    ('watch cache: dispatch to watchers', r'cacher\.\(\*Cacher\)\.(dispatchEvents|dispatchEvent|startDispatching)|cacher\.\(\*cacheWatcher\)'),
    ('watch cache: ingesting etcd events', r'cacher\.\(\*watchCache\)|cache\.\(\*Reflector\)|cacher\.\(\*Cacher\)\.startCaching|cacher\.\(\*cacherListerWatcher\)|etcd3\.\(\*watchChan\)|etcd3\.\(\*watcher\)'),
    ('audit log', r'audit/log|audit\.\(\*|pkg/audit\.|buffered\.\(\*bufferedBackend\)'),
    ('etcd client (grpc)', r'go\.etcd\.io/etcd/client|google\.golang\.org/grpc'),
    ('http/tls serving (filters, auth, framing)', r'^net/http\.|crypto/tls|golang\.org/x/net/http2'),
]
COMPILED = [(name, re.compile(rx)) for name, rx in RULES]

def traces(files):
    out = subprocess.run([GO, 'tool', 'pprof', '-traces', *files], capture_output=True, text=True, check=True).stdout
    for block in out.split('-----------+-------------------------------------------------------')[1:]:
        lines = [l for l in block.strip('\n').split('\n') if l.strip()]
        if not lines: continue
        m = re.match(r'\s*([\d.]+)(ms|s|us|µs)\s+(.*)', lines[0])
        if not m: continue
        value = float(m.group(1)) * {'ms': 1e-3, 's': 1, 'us': 1e-6, 'µs': 1e-6}[m.group(2)]
        frames = [m.group(3).strip()] + [l.strip() for l in lines[1:]]
        yield value, frames  # leaf first

def bucket(frames):
    for name, rx in COMPILED:  # the first rule matching any frame
        if any(rx.search(frame) for frame in frames): return name
    return 'other'

if __name__ == '__main__':
    files = sys.argv[1:]
    totals = collections.Counter()
    for value, frames in traces(files):
        totals[bucket(frames)] += value
    total = sum(totals.values())
    for name, value in totals.most_common():
        print(f'{value:9.2f} s  {100*value/total:5.1f}%  {name}')
    print(f'{total:9.2f} s  total')
