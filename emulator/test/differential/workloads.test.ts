// Differential: StatefulSets and DaemonSets as the operator's workload mode uses them (defaults, generation, the
// status subresource, metadata and pod-template annotation patches guarded by resourceVersion, lists and watches).
import test from 'ava';
import { outcome, pairSuite, type Target } from './support.js';

const suite = pairSuite(test);

const template = {
  metadata: { labels: { app: 'web' } },
  spec: {
    containers: [{ name: 'app', image: 'nginx:1.27', envFrom: [{ configMapRef: { name: 'cfg' } }] }],
    volumes: [{ name: 's', secret: { secretName: 'sec', optional: true } }],
  },
};
const KINDS = [
  { plural: 'statefulsets', spec: { serviceName: 'web', selector: { matchLabels: { app: 'web' } }, template } },
  { plural: 'daemonsets', spec: { selector: { matchLabels: { app: 'web' } }, template } },
];

for (const { plural, spec } of KINDS) {
  test(`${plural}: created with the apiserver's defaults and status; generation moves on spec changes only`, (t) =>
    suite.same(t, `diff-${plural}`, async (target: Target, ns: string) => {
      const out: unknown[] = [];
      const path = `/apis/apps/v1/namespaces/${ns}/${plural}`;
      const merge = async (suffix: string, body: unknown) =>
        out.push(outcome(await target.request('PATCH', `${path}/web${suffix}`, body, { contentType: 'application/merge-patch+json' })));
      out.push(outcome(await target.request('POST', path, { metadata: { name: 'web' }, spec })));
      await merge('', { metadata: { annotations: { 'app.example.com/running-hashes': '{}' } } });
      await merge('', {
        spec: { template: { metadata: { annotations: { 'app.example.com/dependency-hashes': '{"ConfigMap/cfg":"a"}' } } } },
      });
      await merge('/status', { status: { observedGeneration: 2 } });
      const stale = await target.request('GET', `${path}/web`);
      await merge('', { metadata: { annotations: { x: 'y' } } });
      // A merge patch that names an older resourceVersion is refused (the operator's guard).
      await merge('', {
        metadata: {
          resourceVersion: (stale.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion,
          annotations: { z: 'w' },
        },
      });
      out.push(outcome(await target.request('GET', `${path}?labelSelector=app%3Dweb`)));
      out.push(
        outcome(
          await target.request('POST', path, { metadata: { name: 'bad' }, spec: { ...spec, selector: { matchLabels: { app: 'other' } } } }),
        ),
      );
      out.push(outcome(await target.request('DELETE', `${path}/web`)));
      return out;
    }));
}

test('discovery lists statefulsets and daemonsets in apps/v1 alike', (t) =>
  suite.same(t, 'diff-discovery', async (target: Target) => {
    const answer = await target.request('GET', '/apis/apps/v1');
    const resources = (answer.body as { resources: { name: string }[] }).resources.filter((resource) =>
      /^(statefulsets|daemonsets)(\/|$)/.test(resource.name),
    );
    return [resources];
  }));
