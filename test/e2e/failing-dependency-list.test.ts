// A dependency list that keeps failing (one tenant's namespace): /readyz says which and why, and clears once it lists.
import test from 'ava';
import { eventually, objects, readyz, startTestOperator, clusterScenario } from '../support/operator-harness.js';

const scenario = clusterScenario(test, 'emulator');

test('[emulator faults] a Secret list that keeps failing fails /readyz naming the namespace and the error, until it lists', async (t) => {
  const namespace = 'tenant-broken';
  await scenario.createNamespace(
    namespace,
    objects.secret(namespace, 'creds', { password: 'p' }),
    objects.customApp(namespace, 'app', { image: 'example/app:1', secretName: 'creds' }),
  );
  const faults = scenario.cluster.emulator!.faults;
  const fault = faults.failRequests({ match: { verb: 'list', resource: 'secrets', namespace }, code: 503 });
  const running = await startTestOperator(scenario.cluster, { healthProbeBindAddress: { host: '127.0.0.1', port: 0 } });
  t.teardown(() => running.operator.stop());
  const notReady = await eventually('not ready', async () => {
    const answer = await readyz(running);
    return answer.status === 503 && answer.text.includes('dependencies') ? answer : undefined;
  });
  t.regex(notReady.text, /Secret list in namespace tenant-broken \(creds\) failing \(\d+ attempts\): .*503/);
  t.is(running.logs.find('list.failing', { namespace }).length, 1, 'one error line, not one per retry');
  faults.remove(fault);
  await eventually('ready again', async () => (await readyz(running)).status === 200, 20_000);
  t.pass();
});
