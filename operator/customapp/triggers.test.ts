// Tests of the CustomApp controller's triggers: which changes queue which keys, and that echoes of its own writes queue none.
import test from 'ava';
import { Subject } from 'rxjs';
import { FreshCache } from '../cache/fresh-cache.js';
import { FakeInformer } from '../cache/testing/fake-informer.js';
import type { Trigger } from '../controller/controller.js';
import type { DependencySource, DependencyState } from '../dependencies/source.js';
import type { Deployment, Service } from '../kube/objects.js';
import type { CustomApp } from './custom-app.js';
import { ownedMetadata } from './labels.js';
import { CUSTOM_APP_INDEXERS, subscribeTriggers } from './triggers.js';

const app = (resourceVersion: string, finalizers: string[] = [], generation = 1): CustomApp =>
  ({
    apiVersion: 'app.example.com/v1',
    kind: 'CustomApp',
    metadata: { namespace: 'ns', name: 'web', uid: 'uid-web', resourceVersion, generation, finalizers },
    spec: { image: 'nginx' },
  }) as CustomApp;

const deployment = (resourceVersion: string): Deployment =>
  ({ metadata: { ...ownedMetadata(app('1')), resourceVersion }, spec: {} }) as unknown as Deployment;

function setup() {
  const apps = new FakeInformer<CustomApp>(CUSTOM_APP_INDEXERS);
  const deployments = new FakeInformer<Deployment>();
  const services = new FakeInformer<Service>();
  const echoes = { apps: new FreshCache(apps.store), deployments: new FreshCache(deployments.store) };
  const dependencies = { changes: new Subject<DependencyState>() } as unknown as DependencySource;
  const queued: string[] = [];
  const subscription = subscribeTriggers({ apps, deployments, services, dependencies, echoes }, (key, trigger: Trigger) =>
    queued.push(`${key} ${trigger.source} ${trigger.reason}`),
  );
  const close = () => {
    subscription.unsubscribe();
    echoes.apps.close();
    echoes.deployments.close();
  };
  return { apps, deployments, echoes, queued, close };
}

test("the echo of this process's finalizer update and of the Deployment it created queue nothing", (t) => {
  const { apps, deployments, echoes, queued, close } = setup();
  apps.apply(app('10'));
  t.deepEqual(queued, ['ns/web customapp applied'], 'a new CustomApp');
  // The reconcile adds the finalizer, creates the Deployment and writes the status; the watch delivers each.
  echoes.apps.wrote(app('11', ['app.example.com/finalizer']));
  echoes.deployments.wrote(deployment('12'), true);
  echoes.apps.wrote(app('13', ['app.example.com/finalizer']));
  apps.apply(app('11', ['app.example.com/finalizer']));
  deployments.apply(deployment('12'));
  apps.apply(app('13', ['app.example.com/finalizer']));
  t.deepEqual(queued, ['ns/web customapp applied'], 'one reconcile in all');
  t.is(echoes.apps.awaitingEchoes + echoes.deployments.awaitingEchoes, 0, 'every echo came');
  close();
});

test("another writer's changes queue the key as before: a finalizer removed, a new generation, a Deployment edited", (t) => {
  const { apps, deployments, echoes, queued, close } = setup();
  apps.apply(app('10', ['app.example.com/finalizer']));
  echoes.deployments.wrote(deployment('12'), true);
  apps.apply(app('14'));
  apps.apply(app('15', [], 2));
  deployments.apply(deployment('16'));
  t.deepEqual(queued, ['ns/web customapp applied', 'ns/web customapp applied', 'ns/web customapp applied', 'ns/web deployment applied']);
  close();
});

test('an echo the watch delivers before the write was answered queues the key: the reconcile then sees its own write', (t) => {
  const { deployments, echoes, queued, close } = setup();
  deployments.apply(deployment('12'));
  echoes.deployments.wrote(deployment('12'), true);
  t.deepEqual(queued, ['ns/web deployment applied']);
  t.is(echoes.deployments.awaitingEchoes, 0, 'nothing is left awaited');
  close();
});

test('without echo filters every change counts', (t) => {
  const apps = new FakeInformer<CustomApp>(CUSTOM_APP_INDEXERS);
  const deployments = new FakeInformer<Deployment>();
  const queued: string[] = [];
  const dependencies = { changes: new Subject<DependencyState>() } as unknown as DependencySource;
  const subscription = subscribeTriggers({ apps, deployments, services: new FakeInformer<Service>(), dependencies }, (key) =>
    queued.push(key),
  );
  apps.apply(app('10'));
  apps.apply(app('11', ['app.example.com/finalizer']));
  deployments.apply(deployment('12'));
  t.deepEqual(queued, ['ns/web', 'ns/web', 'ns/web']);
  subscription.unsubscribe();
});
