// Tests of the generated Helm chart's text (the helm binary's own tests are in test/helm.test.ts).
import test from 'ava';
import { parse } from 'yaml';
import { DEFAULT_HELM_VALUES, helmChartFiles, templateRules } from './helm-chart.js';

const files = helmChartFiles('1.2.3');
const template = files.get('templates/customapp-operator.yaml')!;

test('the chart has its Chart.yaml, values, schema, the CRD in crds/ and one template', (t) => {
  t.deepEqual([...files.keys()].sort(), [
    'Chart.yaml',
    'README.md',
    'crds/customapp-crd.yaml',
    'templates/customapp-operator.yaml',
    'values.schema.json',
    'values.yaml',
  ]);
  t.like(parse(files.get('Chart.yaml')!), { apiVersion: 'v2', name: 'customapp-operator', version: '1.2.3', appVersion: 'v0.1.0' });
  t.deepEqual(parse(files.get('values.yaml')!), DEFAULT_HELM_VALUES);
  t.is(parse(files.get('crds/customapp-crd.yaml')!).kind, 'CustomResourceDefinition');
  t.false(template.includes('CustomResourceDefinition'), 'the CRD is not a template too');
});

test('every sentinel and placeholder was replaced, and every value is used', (t) => {
  for (const leftover of ['helm-value-', 'helm-item-', '31415926']) t.false(template.includes(leftover), leftover);
  const schema = JSON.parse(files.get('values.schema.json')!) as { required: string[] };
  t.deepEqual(schema.required.sort(), Object.keys(DEFAULT_HELM_VALUES).sort());
  for (const value of [
    '.Values.image',
    '.Values.replicas',
    '.Values.namespace',
    '.Values.workloads',
    '.Values.sharding',
    '.Values.namespaces',
    '.Values.serviceMonitor.enabled',
  ]) {
    t.true(template.includes(value), value);
  }
});

test('a role whose synthesized rules are not what its template gives fails the chart, naming the role and both lists', (t) => {
  const rule = { apiGroups: [''], resources: ['pods'], verbs: ['delete'] };
  const error = t.throws(() => templateRules('operator', [rule]));
  t.regex(error.message, /^helm chart: the operator role's synthesized rules are not those the template gives/);
  t.regex(error.message, /synthesized \[\{"apiGroups":\[""\],"resources":\["pods"\],"verbs":\["delete"\]\}\]/);
});
