// `npm start` with no cluster configured: the embedded emulator, dist/ and the samples, and a kubeconfig for kubectl.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONFIG_HASH_ANNOTATION } from '../../api/customapp.js';
import { contentHash } from '../../operator/dependencies/content-hash.js';
import { runKubectl } from '../support/targets.js';
import { eventually } from '../support/operator-harness.js';
import { OperatorProcess } from '../support/operator-process.js';

test('with no kubeconfig anywhere, npm start runs the embedded emulator, a kubectl edit of the sample ConfigMap rolls the sample Deployment, and the simulated rollout completes with the CustomApp Ready', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'embedded-home-'));
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  const operator = new OperatorProcess(['--metrics-bind-address=127.0.0.1:0', '--health-probe-bind-address=127.0.0.1:0'], {
    HOME: home,
    KUBECONFIG: '',
    KUBERNETES_SERVICE_HOST: '',
  });
  t.teardown(() => operator.dispose());

  await operator.waitFor('the kubeconfig is printed', () => /export KUBECONFIG=(\S+)/.test(operator.text), 60_000);
  const kubeconfig = /export KUBECONFIG=(\S+)/.exec(operator.text)![1]!;
  t.regex(operator.text, /kubectl --kubeconfig \S+ get ca/);
  t.regex(operator.text, /kubectl --kubeconfig \S+ edit cm hello-config/);

  const kubectl = (args: readonly string[]) => runKubectl(kubeconfig, args);
  const hash = async (): Promise<string | undefined> => {
    const got = await kubectl([
      'get',
      'deployment',
      'hello',
      '-n',
      'default',
      '-o',
      `jsonpath={.spec.template.metadata.annotations.${CONFIG_HASH_ANNOTATION.replace(/\./g, '\\.')}}`,
    ]);
    return got.code === 0 && got.stdout ? got.stdout : undefined;
  };
  const initial = await eventually('the sample Deployment is rolled out', hash, 60_000, 250);
  t.is(initial, contentHash({ data: { GREETING: 'hello, world', LOG_LEVEL: 'info' } }));
  const listed = await kubectl(['get', 'ca', '-n', 'default']);
  t.is(listed.code, 0, listed.stderr);
  t.regex(listed.stdout, /^hello\s+nginxinc\/nginx-unprivileged:1\.27-alpine\s+hello-config\s+/m);

  const patched = await kubectl(['patch', 'cm', 'hello-config', '-n', 'default', '-p', '{"data":{"GREETING":"hi"}}']);
  t.is(patched.code, 0, patched.stderr);
  const rolled = await eventually(
    'the Deployment carries the new hash',
    async () => {
      const current = await hash();
      return current !== initial ? current : undefined;
    },
    30_000,
    100,
  );
  t.is(rolled, contentHash({ data: { GREETING: 'hi', LOG_LEVEL: 'info' } }));
  t.true(operator.find('event.recorded', { reason: 'RolloutTriggered' }).length > 0, 'the rollout is in the trace');
  t.is(operator.find('write', { verb: 'get' }).length, 0);

  // The emulator simulates Deployment status (kwok-like): the rollout completes and the CustomApp turns Ready.
  const rollout = await runKubectl(kubeconfig, ['rollout', 'status', 'deployment/hello', '-n', 'default', '--timeout=30s'], {
    timeoutMs: 40_000,
  });
  t.is(rollout.code, 0, rollout.stderr);
  t.regex(rollout.stdout, /successfully rolled out/);
  const ready = await eventually(
    'the sample CustomApp is Ready',
    async () => {
      const got = await kubectl(['get', 'ca', 'hello', '-n', 'default', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']);
      return got.stdout === 'True' ? got.stdout : undefined;
    },
    30_000,
    250,
  );
  t.is(ready, 'True');
  t.regex((await kubectl(['get', 'ca', 'hello', '-n', 'default'])).stdout, /^hello\s+\S+\s+hello-config\s+True\s+/m);

  operator.kill('SIGTERM');
  t.deepEqual(await operator.exited, { code: 0, signal: null }, operator.stderr);
});
