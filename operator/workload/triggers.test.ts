// Tests of the workload controller's triggers: a workload's own changes queue it, the echo of its own patch does not.
import test from 'ava';
import { Subject } from 'rxjs';
import { RELOAD_ANNOTATION, TEMPLATE_HASHES_ANNOTATION } from '../../api/workload.js';
import { FreshCache } from '../cache/fresh-cache.js';
import { FakeInformer } from '../cache/testing/fake-informer.js';
import type { DependencySource, DependencyState } from '../dependencies/source.js';
import { subscribeWorkloadTriggers, WORKLOAD_INDEXERS } from './triggers.js';
import type { Workload } from './workload.js';

const workload = (resourceVersion: string, hashes?: string): Workload =>
  ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      namespace: 'ns',
      name: 'web',
      uid: 'uid-web',
      resourceVersion,
      generation: 1,
      annotations: { [RELOAD_ANNOTATION]: 'true' },
    },
    spec: {
      template: {
        metadata: { annotations: hashes ? { [TEMPLATE_HASHES_ANNOTATION]: hashes } : {} },
        spec: { containers: [{ name: 'app', image: 'nginx', envFrom: [{ configMapRef: { name: 'config' } }] }] },
      },
    },
  }) as unknown as Workload;

test("the echo of this process's pod-template patch queues nothing; another writer's edit queues the workload", (t) => {
  const deployments = new FakeInformer<Workload>(WORKLOAD_INDEXERS);
  const cache = new FreshCache(deployments.store);
  const dependencies = { changes: new Subject<DependencyState>() } as unknown as DependencySource;
  const queued: string[] = [];
  const subscription = subscribeWorkloadTriggers(
    { Deployment: deployments },
    dependencies,
    (key, trigger) => queued.push(`${key} ${trigger.reason}`),
    undefined,
    { Deployment: cache },
  );
  deployments.apply(workload('10'));
  cache.wrote(workload('11', 'ConfigMap/config=aaa'));
  deployments.apply(workload('11', 'ConfigMap/config=aaa'));
  t.deepEqual(queued, ['Deployment/ns/web applied'], 'the rollout patch came back as an echo');
  deployments.apply(workload('12', 'ConfigMap/config=bbb'));
  t.deepEqual(queued, ['Deployment/ns/web applied', 'Deployment/ns/web applied'], 'an edit by someone else');
  subscription.unsubscribe();
  cache.close();
});
