// Tests of the benchmark's load plan.
import test from 'ava';
import { contentHash } from '../operator/dependencies/content-hash.js';
import { configMapData, configMapObject, forEachConcurrent, planLoad, SHARED_CONFIGMAP } from './load.js';

test('a plan spreads the CustomApps evenly, one in ten sharing its namespace ConfigMap', (t) => {
  const plan = planLoad({ size: 1000, namespaces: 2, unrelatedConfigMaps: 50, handoffShare: 0.2 });
  t.deepEqual(plan.namespaces, ['bench-0', 'bench-1']);
  t.is(plan.apps.length, 1000);
  t.is(plan.apps.filter((app) => app.namespace === 'bench-1').length, 500);
  const sharers = plan.apps.filter((app) => app.sharer);
  t.is(sharers.length, 100);
  t.true(sharers.every((app) => app.configMapName === SHARED_CONFIGMAP));
  t.is(sharers.filter((app) => app.handoffTo).length, 20);
  t.true(plan.apps.filter((app) => !app.sharer).every((app) => app.configMapName === `${app.name}-config`));
});

test('every ConfigMap a CustomApp names or switches to is planned, plus the unrelated ones', (t) => {
  const plan = planLoad({ size: 100, namespaces: 1, unrelatedConfigMaps: 30, handoffShare: 0.5 });
  const planned = new Set(plan.configMaps.map((configMap) => `${configMap.namespace}/${configMap.name}`));
  for (const app of plan.apps) {
    t.true(planned.has(`${app.namespace}/${app.configMapName}`));
    if (app.handoffTo) t.true(planned.has(`${app.namespace}/${app.handoffTo}`));
  }
  t.is(plan.configMaps.filter((configMap) => configMap.role === 'unrelated').length, 30);
  t.is(plan.configMaps.filter((configMap) => configMap.role === 'shared').length, 1);
  t.is(new Set(plan.configMaps.map((configMap) => configMap.name)).size, plan.configMaps.length);
});

test('each version of a ConfigMap has about 1 KiB of different content', (t) => {
  const first = configMapData('app-00001-config', 0);
  const second = configMapData('app-00001-config', 1);
  t.true(first['app.properties']!.length > 900 && first['app.properties']!.length < 1400);
  t.not(contentHash({ data: first }), contentHash({ data: second }));
  t.deepEqual(configMapObject({ namespace: 'bench-0', name: 'x', role: 'own' }, 1).data, configMapData('x', 1));
});

test('forEachConcurrent keeps at most the given number of tasks in flight and rejects with the first failure', async (t) => {
  let inFlight = 0;
  let most = 0;
  await forEachConcurrent(
    Array.from({ length: 20 }, (_, index) => index),
    3,
    async () => {
      most = Math.max(most, ++inFlight);
      await new Promise((done) => setImmediate(done));
      inFlight -= 1;
    },
  );
  t.is(most, 3);
  await t.throwsAsync(
    forEachConcurrent([1, 2, 3], 2, async (item) => {
      if (item === 2) throw new Error('item 2 failed');
    }),
    { message: 'item 2 failed' },
  );
});
