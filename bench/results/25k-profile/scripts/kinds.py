#!/usr/bin/env python3
"""kube-apiserver CPU by request kind and, within each, by work: kinds.py LABEL writes... -- files
Kinds: Deployment create, CustomApp status patch, CustomApp patch (the finalizer), other requests and background."""
import sys, os, re, collections
sys.path.insert(0, os.path.dirname(__file__))
from buckets import traces, bucket
KINDS = [
    ('Deployment create', r'handlers\.CreateResource'),
    ('CustomApp status patch', r'StatusREST|crdHandler\)\.serveStatus'),
    ('CustomApp patch (finalizer)', r'handlers\.PatchResource|handlers\.\(\*patcher\)'),
]
WORK = [
    ('GC assist', r'^runtime\.gcAssistAlloc'),
    ('managedFields (field manager)', r'managedfields|handlers/fieldmanager|structured-merge-diff'),
    ('CR schema validation', r'apiextensions-apiserver/pkg/apiserver/validation|kube-openapi/pkg/validation|apiextensions-apiserver/pkg/registry/customresource\.customResourceValidator'),
    ('CR schema coercion, pruning, defaulting', r'unstructuredSchemaCoercer|structural/pruning|structural/defaulting|schemaobjectmeta'),
    ('built-in validation, defaulting', r'pkg/apis/apps/validation|pkg/apis/core/validation|pkg/apis/apps/v1\.SetObjectDefaults|SetDefaults'),
    ('admission', r'admission'),
    ('json merge patch', r'json-patch'),
    ('conversion (typed/unstructured)', r'unstructuredConverter|conversion\.\(\*Converter\)|Convert_|fromUnstructured|toUnstructured'),
    ('json decode', r'decodeState|sigs\.k8s\.io/json|json\.Unmarshal|jsoniter.*Read|serializer/json\.\(\*Serializer\)\.(Decode|unmarshal)'),
    ('json encode', r'encodeState|json\.Marshal|jsoniter.*Write|serializer/json\.\(\*Serializer\)\.(Encode|doEncode)'),
    ('protobuf (etcd storage of built-ins)', r'\.Marshal$|\.Unmarshal$|protobuf'),
    ('etcd client (grpc)', r'go\.etcd\.io/etcd/client|google\.golang\.org/grpc'),
    ('deep copy', r'DeepCopy'),
    ('allocation', r'^runtime\.(mallocgc|newobject|makeslice|makemap|growslice)'),
]
def first(rules, frames, default):
    for name, rx in rules:
        if any(re.search(rx, f) for f in frames): return name
    return default
if __name__ == '__main__':
    args = sys.argv[1:]; sep = args.index('--'); label = args[0]; files = args[sep+1:]
    by = collections.defaultdict(collections.Counter); total = 0.0
    for value, frames in traces(files):
        total += value
        kind = first(KINDS, frames, None)
        if kind is None:
            kind = 'other: ' + bucket(frames)
            by[kind]['(all)'] += value
        else:
            by[kind][first(WORK, frames, 'other')] += value
    for kind in sorted(by, key=lambda k: -sum(by[k].values())):
        s = sum(by[kind].values())
        detail = ' · '.join(f'{w} {v:.1f}' for w, v in by[kind].most_common() if w != '(all)' and v >= 0.05)
        print(f'| {label} | {kind} | {s:.1f} | {detail} |')
    print(f'| {label} | total | {total:.1f} | |')
