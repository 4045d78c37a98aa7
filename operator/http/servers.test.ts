// Tests of the endpoints: /healthz and /readyz report their checks, /metrics serves the operator's registry.
import test from 'ava';
import { OperatorMetrics } from '../controller/metrics.js';
import { serveMetrics, serveProbes } from './servers.js';

test('/readyz fails with the reason until its check passes, while /healthz passes throughout', async (t) => {
  let synced = false;
  const server = await serveProbes(
    { host: '127.0.0.1', port: 0 },
    {
      healthz: { ping: () => undefined },
      readyz: { caches: () => (synced ? undefined : 'not synced: customapps') },
    },
  );
  t.teardown(() => server.close());
  const notReady = await fetch(`${server.url}/readyz`);
  t.is(notReady.status, 503);
  t.is(await notReady.text(), '[-]caches failed: not synced: customapps\ncheck failed\n');
  t.is((await fetch(`${server.url}/healthz`)).status, 200);
  synced = true;
  const ready = await fetch(`${server.url}/readyz`);
  t.is(ready.status, 200);
  t.is(await ready.text(), '[+]caches ok\nok\n');
  t.is((await fetch(`${server.url}/other`)).status, 404);
});

test("/metrics serves controller-runtime and client-go names from the operator's own registry", async (t) => {
  const metrics = new OperatorMetrics();
  metrics.observeReconcile('customapp', 'success', 12);
  metrics.observeReconcile('customapp', 'error', 3);
  metrics.onRequest({ verb: 'list', resource: 'configmaps', code: 200, durationMs: 4 });
  const hooks = metrics.queueHooks('customapp');
  hooks.onAdd?.('a/b');
  hooks.onDepth?.(1);
  const server = await serveMetrics({ host: '127.0.0.1', port: 0 }, metrics.registry);
  t.teardown(() => server.close());
  const response = await fetch(`${server.url}/metrics`);
  t.is(response.status, 200);
  const text = await response.text();
  t.regex(text, /^controller_runtime_reconcile_total\{controller="customapp",result="success"\} 1$/m);
  t.regex(text, /^controller_runtime_reconcile_errors_total\{controller="customapp"\} 1$/m);
  t.regex(text, /^controller_runtime_reconcile_time_seconds_count\{controller="customapp"\} 2$/m);
  t.regex(text, /^rest_client_requests_total\{verb="list",resource="configmaps",code="200"\} 1$/m);
  t.regex(text, /^workqueue_adds_total\{name="customapp"\} 1$/m);
  t.regex(text, /^workqueue_depth\{name="customapp"\} 1$/m);
  t.is(await metrics.total('controller_runtime_reconcile_total', { controller: 'customapp' }), 2);
});
