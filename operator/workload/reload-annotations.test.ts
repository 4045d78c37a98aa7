// Reading a workload's annotations: ours, Reloader's with Reloader's meaning, the template fallback, and bad input.
import test from 'ava';
import type { PodTemplate } from '../kube/objects.js';
import { reloadSpec } from './reload-annotations.js';

/** A template using ConfigMaps app-config and app-extra, Secrets db and tls. */
const TEMPLATE = {
  metadata: {},
  spec: {
    containers: [
      {
        name: 'app',
        envFrom: [{ configMapRef: { name: 'app-config' } }, { secretRef: { name: 'db' } }],
        env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'app-extra', key: 'x', optional: true } } }],
      },
    ],
    volumes: [{ name: 'tls', secret: { secretName: 'tls' } }],
  },
} as PodTemplate;

const names = (annotations: Record<string, string>, template: PodTemplate = TEMPLATE): string[] =>
  reloadSpec(annotations, template).refs.map((ref) => `${ref.kind}/${ref.name}${ref.optional ? '?' : ''}`);

test('no opt-in annotation: not opted in, nothing selected', (t) => {
  const spec = reloadSpec({ 'example.com/other': 'x' }, TEMPLATE);
  t.false(spec.optedIn);
  t.deepEqual(spec.refs, []);
  t.deepEqual(spec.problems, []);
  t.false(reloadSpec(undefined, TEMPLATE).optedIn);
});

test('app.example.com/reload and reloader.stakater.com/auto "true": everything the template uses, optional as used', (t) => {
  const all = ['ConfigMap/app-config', 'ConfigMap/app-extra?', 'Secret/db', 'Secret/tls'];
  t.deepEqual(names({ 'app.example.com/reload': 'true' }), all);
  t.deepEqual(names({ 'reloader.stakater.com/auto': 'true' }), all);
  t.deepEqual(names({ 'reloader.stakater.com/auto': 'True' }), all, "Go's ParseBool spellings");
  const off = reloadSpec({ 'reloader.stakater.com/auto': 'false' }, TEMPLATE);
  t.true(off.optedIn, 'the annotation is there');
  t.deepEqual(off.refs, [], 'but selects nothing');
});

test("Reloader's typed auto: only the ConfigMaps, or only the Secrets", (t) => {
  t.deepEqual(names({ 'configmap.reloader.stakater.com/auto': 'true' }), ['ConfigMap/app-config', 'ConfigMap/app-extra?']);
  t.deepEqual(names({ 'secret.reloader.stakater.com/auto': 'true' }), ['Secret/db', 'Secret/tls']);
});

test('named lists (ours and Reloader’s): only these, trimmed; a name the template does not use still counts (may be missing)', (t) => {
  t.deepEqual(names({ 'app.example.com/reload-configmaps': ' app-config , other ' }), ['ConfigMap/app-config', 'ConfigMap/other?']);
  t.deepEqual(names({ 'app.example.com/reload-secrets': 'tls' }), ['Secret/tls']);
  t.deepEqual(names({ 'configmap.reloader.stakater.com/reload': 'app-config', 'secret.reloader.stakater.com/reload': 'db,tls' }), [
    'ConfigMap/app-config',
    'Secret/db',
    'Secret/tls',
  ]);
});

test("Reloader's patterns match the names the template uses (.* wildcards); other regexes are refused with a problem", (t) => {
  t.deepEqual(names({ 'configmap.reloader.stakater.com/reload': 'app-.*' }), ['ConfigMap/app-config', 'ConfigMap/app-extra?']);
  const refused = reloadSpec({ 'configmap.reloader.stakater.com/reload': '(a+)+$,app-config' }, TEMPLATE);
  t.deepEqual(
    refused.refs.map((ref) => ref.name),
    ['app-config'],
  );
  t.deepEqual(refused.problems, [
    'annotation configmap.reloader.stakater.com/reload: "(a+)+$" is not a name, or a pattern of name characters and .*; it is ignored',
  ]);
});

test('auto and named lists add up; the exclude annotations remove, whatever selected them', (t) => {
  t.deepEqual(names({ 'secret.reloader.stakater.com/auto': 'true', 'configmap.reloader.stakater.com/reload': 'app-config' }), [
    'ConfigMap/app-config',
    'Secret/db',
    'Secret/tls',
  ]);
  t.deepEqual(
    names({
      'reloader.stakater.com/auto': 'true',
      'configmaps.exclude.reloader.stakater.com/reload': 'app-extra',
      'secrets.exclude.reloader.stakater.com/reload': 'tls,db',
    }),
    ['ConfigMap/app-config'],
  );
});

test("the pod template's annotations count when none that opts in is on the workload (as Reloader reads them)", (t) => {
  const annotated = { ...TEMPLATE, metadata: { annotations: { 'reloader.stakater.com/auto': 'true' } } } as PodTemplate;
  t.deepEqual(names({}, annotated), ['ConfigMap/app-config', 'ConfigMap/app-extra?', 'Secret/db', 'Secret/tls']);
  t.deepEqual(names({ 'app.example.com/reload-secrets': 'db' }, annotated), ['Secret/db'], "the workload's own win");
});

test('pause and debounce by annotation', (t) => {
  const spec = reloadSpec(
    { 'app.example.com/reload': 'true', 'app.example.com/rollout-paused': 'true', 'app.example.com/rollout-debounce-seconds': '30' },
    TEMPLATE,
  );
  t.true(spec.paused);
  t.is(spec.debounceMs, 30_000);
  t.deepEqual(spec.problems, []);
});

test('bad input: each problem quoted, the rest served as if the bad part were absent; never a throw', (t) => {
  const spec = reloadSpec(
    {
      'app.example.com/reload': 'yes',
      'app.example.com/reload-configmaps': 'app-config,,Bad_Name',
      'app.example.com/reload-deployments': 'x',
      'app.example.com/rollout-debounce-seconds': '-1',
      'app.example.com/rollout-paused': 'maybe',
    },
    TEMPLATE,
  );
  t.true(spec.optedIn);
  t.deepEqual(
    spec.refs.map((ref) => ref.name),
    ['app-config'],
  );
  t.false(spec.paused);
  t.is(spec.debounceMs, 0);
  t.deepEqual(spec.problems, [
    'annotation app.example.com/reload-deployments is unknown: the kinds are app.example.com/reload-configmaps and app.example.com/reload-secrets',
    'annotation app.example.com/rollout-paused: "maybe" is not "true" or "false"',
    'annotation app.example.com/rollout-debounce-seconds: "-1" is not a number of seconds from 0 to 3600',
    'annotation app.example.com/reload: "yes" is not "true" or "false"',
    'annotation app.example.com/reload-configmaps: an empty name in "app-config,,Bad_Name"',
    'annotation app.example.com/reload-configmaps: "Bad_Name" is not a DNS-1123 name; it is ignored',
  ]);
  const empty = reloadSpec({ 'app.example.com/reload-secrets': '' }, TEMPLATE);
  t.deepEqual(empty.refs, []);
  t.deepEqual(empty.problems, ['annotation app.example.com/reload-secrets: an empty name in ""']);
});

test('10k names: the list is refused with one problem, nothing watched; 256 in all at most', (t) => {
  const many = Array.from({ length: 10_000 }, (_, index) => `cm-${index}`).join(',');
  const spec = reloadSpec({ 'app.example.com/reload-configmaps': many }, TEMPLATE);
  t.deepEqual(spec.refs, []);
  t.deepEqual(spec.problems, ['annotation app.example.com/reload-configmaps: 10000 names, more than 256; the list is ignored']);
  const half = (prefix: string): string => Array.from({ length: 200 }, (_, index) => `${prefix}-${index}`).join(',');
  const both = reloadSpec({ 'app.example.com/reload-configmaps': half('cm'), 'app.example.com/reload-secrets': half('s') }, TEMPLATE);
  t.deepEqual(both.refs, []);
  t.deepEqual(both.problems, ['400 ConfigMaps and Secrets selected, more than 256: the workload is not served']);
});
