// The operator chart's `workloads` prop: exactly list, watch and patch on each kind named, and the operator's --workloads.
import test from 'ava';
import { Testing } from 'cdk8s';
import { OperatorChart } from './operator-chart.js';
import { OPERATOR_PERMISSIONS } from './permissions.js';
import { testApp } from './testing/test-app.js';

type Manifest = Record<string, any>;

function synth(props: ConstructorParameters<typeof OperatorChart>[2]): { rules: Manifest[]; args: string[] } {
  const manifests: Manifest[] = Testing.synth(new OperatorChart(testApp(), 'operator', props));
  const role = manifests.find((m) => m.kind === 'ClusterRole' && m.metadata.name === 'customapp-operator')!;
  const deployment = manifests.find((m) => m.kind === 'Deployment')!;
  return { rules: role.rules, args: deployment.spec.template.spec.containers[0].args };
}

test('without workloads: the permission table alone, and no --workloads (a CustomApp-only install)', (t) => {
  const { rules, args } = synth({});
  t.is(rules.length, OPERATOR_PERMISSIONS.filter((permission) => permission.scope !== 'operator-namespace').length);
  t.false(args.some((arg) => arg.startsWith('--workloads')));
});

test('workloads: one rule per kind named, list, watch and patch, and the same kinds on the command line', (t) => {
  const without = synth({}).rules;
  const { rules, args } = synth({ workloads: ['statefulsets', 'daemonsets', 'statefulsets'] });
  t.deepEqual(rules.slice(0, without.length), without, 'the table is untouched');
  t.deepEqual(rules.slice(without.length), [
    { apiGroups: ['apps'], resources: ['statefulsets'], verbs: ['list', 'watch', 'patch'] },
    { apiGroups: ['apps'], resources: ['daemonsets'], verbs: ['list', 'watch', 'patch'] },
  ]);
  t.true(args.includes('--workloads=statefulsets,daemonsets'));
});

test('workloads: deployments add only patch, since the table already lists and watches them for CustomApps', (t) => {
  const without = synth({}).rules;
  const { rules, args } = synth({ workloads: ['deployments'] });
  t.deepEqual(rules.slice(without.length), [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['patch'] }]);
  t.true(args.includes('--workloads=deployments'));
});

test('workloads: rollouts add list, watch and patch on rollouts.argoproj.io, and nothing else of Argo', (t) => {
  const without = synth({}).rules;
  const { rules, args } = synth({ workloads: ['rollouts'] });
  t.deepEqual(rules.slice(without.length), [{ apiGroups: ['argoproj.io'], resources: ['rollouts'], verbs: ['list', 'watch', 'patch'] }]);
  t.true(args.includes('--workloads=rollouts'));
});
