// Tests of the workload participants' pieces: their load, their process's figures and how an early exit is reported.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { planLoad, SHARED_CONFIGMAP } from '../load.js';
import { RELOADER_AUTO_ANNOTATION, workloadObject } from './load.js';
import { earlyExitMessage, heapFromMetrics, startWorkloadProcess, workloadCommand } from './process.js';

test('each planned app becomes a Deployment opted in with reloader.stakater.com/auto that uses its ConfigMap by envFrom', (t) => {
  const plan = planLoad({ size: 20, namespaces: 2, unrelatedConfigMaps: 0, handoffShare: 0.5 });
  const sharer = plan.apps.find((app) => app.sharer)!;
  const own = plan.apps.find((app) => !app.sharer)!;
  for (const app of [sharer, own]) {
    const deployment = workloadObject(app) as { metadata: { annotations: Record<string, string> }; spec: any };
    t.is(deployment.metadata.annotations[RELOADER_AUTO_ANNOTATION], 'true');
    t.deepEqual(deployment.spec.template.spec.containers[0].envFrom, [{ configMapRef: { name: app.configMapName } }]);
    t.deepEqual(deployment.spec.selector.matchLabels, deployment.spec.template.metadata.labels);
  }
  t.is(sharer.configMapName, SHARED_CONFIGMAP);
});

test('Reloader runs with the annotations strategy and its kubeconfig; ours-workloads with --workloads=deployments and no governance', async (t) => {
  const reloader = await workloadCommand({ participant: 'reloader', kubeconfigPath: '/k', reloaderBinary: '/bin/reloader', logPath: '/l' });
  t.is(reloader.command, '/bin/reloader');
  t.true(reloader.args.includes('--reload-strategy=annotations'));
  t.is(reloader.env.KUBECONFIG, '/k');
  t.false(reloader.args.some((arg) => arg.startsWith('--reload-on-create')));
  const onCreate = await workloadCommand({
    participant: 'reloader-on-create',
    kubeconfigPath: '/k',
    reloaderBinary: '/bin/reloader',
    logPath: '/l',
  });
  for (const flag of ['--reload-strategy=annotations', '--reload-on-create=true', '--sync-after-restart=true'])
    t.true(onCreate.args.includes(flag), flag);
  await t.throwsAsync(workloadCommand({ participant: 'reloader', kubeconfigPath: '/k', logPath: '/l' }), {
    message: /needs reloaderBinary/,
  });
  const ours = await workloadCommand({ participant: 'ours-workloads', kubeconfigPath: '/k', logPath: '/l', memoryLimitMiB: 512 });
  for (const flag of [
    '--kubeconfig=/k',
    '--workloads=deployments',
    '--max-concurrent-rollouts=0',
    '--flap-threshold=0',
    '--max-old-space-size=512',
    // Plain HTTP, so that the harness reads the heap from /metrics as it does Reloader's (HTTPS would refuse it).
    '--metrics-secure=false',
  ])
    t.true(ours.args.includes(flag), flag);
  t.true(ours.args.includes(`--metrics-bind-address=127.0.0.1:${ours.metricsPort}`));
});

test("the heap is read from Go's or Node's metric, and is unknown without either", (t) => {
  t.is(heapFromMetrics('# HELP x\ngo_memstats_heap_alloc_bytes 1.2345e+07\ngo_goroutines 12\n'), 12_345_000);
  t.is(heapFromMetrics('nodejs_heap_size_used_bytes 2048\n'), 2048);
  t.is(heapFromMetrics('go_memstats_heap_alloc_bytes_total 5\nprocess_resident_memory_bytes 9\n'), undefined);
});

test('an operator without the workload mode is reported as such, from the line it prints when it refuses the flag', (t) => {
  const refused = 'error: unknown flag "--workloads" (see --help)';
  t.is(
    earlyExitMessage('ours-workloads', 2, null, refused),
    'ours-workloads: this operator has no workload mode (it refused --workloads=deployments: error: unknown flag "--workloads" (see --help))',
  );
  t.regex(
    earlyExitMessage('reloader', 1, null, 'level=fatal msg="listen tcp :9090: bind: address already in use"'),
    /reloader exited on its own \(code 1.*\n.*address already in use/,
  );
});

test('ours-workloads that exits at start fails the session at once with the end of its log, rather than hang', async (t) => {
  t.timeout(60_000);
  const dir = mkdtempSync(join(tmpdir(), 'bench-workloads-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // No kubeconfig there: the operator exits on it at once.
  const process = await startWorkloadProcess({
    participant: 'ours-workloads',
    kubeconfigPath: join(dir, 'missing'),
    logPath: join(dir, 'log'),
  });
  const error = await t.throwsAsync(process.exited);
  t.regex(error!.message, /^ours-workloads exited on its own \(code 1.*no usable kubeconfig/s);
  t.false(process.alive);
});
