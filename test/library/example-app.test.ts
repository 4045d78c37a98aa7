// The library as a user gets it: `npm pack`, a fresh copy of examples/ that installs the tarball, `cdk8s synth`, `kubectl apply` to each API target, and a CustomApp from the construct rolling on a ConfigMap edit.
import test from 'ava';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CUSTOM_APPS, type CustomApp } from '../../operator/customapp/custom-app.js';
import type { Deployment } from '../../operator/kube/objects.js';
import { DEPLOYMENTS } from '../../operator/kube/resources.js';
import { RELOAD_ANNOTATION, RUNNING_HASHES_ANNOTATION, TEMPLATE_HASHES_ANNOTATION } from '../../api/workload.js';
import { nodeSelected, selectedTargets, startCluster } from '../support/targets.js';
import { envInPod, get, kubectlOk, podReady, podsOf, rolloutComplete, startNodeCluster, waitFor } from '../node/node-helpers.js';
import { adminClient, eventually, getIfExists, startTestOperator } from '../support/operator-harness.js';

const ROOT = resolve(import.meta.dirname, '../..');
/** The repository's own tools (the cdk8s CLI, tsx, tsc): dev tooling of the user's app, linked rather than installed. */
const TOOLS = join(ROOT, 'node_modules/.bin');

/** Runs a command to completion; rejects with its output when it fails. */
function run(command: string, args: readonly string[], cwd: string, timeout = 180_000, env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((done, fail) => {
    execFile(
      command,
      args,
      {
        cwd,
        timeout,
        maxBuffer: 64 << 20,
        env: { ...process.env, ...env, PATH: `${TOOLS}:${process.env.PATH}`, CDK8S_CHECK_UPGRADE: 'false' },
      },
      (error, stdout, stderr) => {
        if (error) fail(new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${stdout}\n${stderr}`, { cause: error }));
        else done(stdout);
      },
    );
  });
}

const work = mkdtempSync(join(tmpdir(), 'customapp-library-'));
const appDir = join(work, 'app');
test.after.always(() => rmSync(work, { recursive: true, force: true }));

// Serial: each step builds on the one before, as a user's would.
test.serial(
  'npm pack gives a tarball of the constructs, the generated imports and the CRD; no tests, operator code or tooling',
  async (t) => {
    t.timeout(180_000);
    const [packed] = JSON.parse(await run('npm', ['pack', '--json', '--pack-destination', work], ROOT)) as Array<{
      filename: string;
      files: Array<{ path: string }>;
    }>;
    const files = packed!.files.map((file) => file.path).sort();
    for (const file of files)
      t.regex(file, /^(lib\/(api|infra|imports)\/[a-z.-]+\.(js|d\.ts)|dist\/customapp-crd\.k8s\.yaml|package\.json|README\.md)$/);
    for (const file of [
      'lib/api/customapp.js',
      'lib/infra/index.js',
      'lib/infra/index.d.ts',
      'lib/infra/custom-app.js',
      'lib/imports/app.example.com.js',
    ]) {
      t.true(files.includes(file), file);
    }
    t.false(
      files.some((file) => /\.test\.|(^|\/)(operator|emulator|envtest|bench|test|scripts)\//.test(file)),
      files.join('\n'),
    );
    cpSync(join(ROOT, 'examples'), appDir, { recursive: true, filter: (source) => !/\/(node_modules|dist)$/.test(source) });
    cpSync(join(work, packed!.filename), join(appDir, packed!.filename));
  },
);

test.serial('a fresh copy of examples/ installs the tarball, with one cdk8s-plus shared by the app and the library', async (t) => {
  t.timeout(240_000);
  // --prefer-offline: the packages npm ci put in npm's cache come from there; npm ci caches no package's metadata,
  // which resolving the app's version ranges needs, so on a fresh machine that is fetched. --omit=dev: the app's dev
  // tooling (cdk8s-cli, tsx, typescript) is the repository's, on PATH.
  await run('npm', ['install', '--prefer-offline', '--omit=dev', '--no-audit', '--no-fund'], appDir, 240_000);
  const installed = JSON.parse(readFileSync(join(appDir, 'node_modules/customapp-operator/package.json'), 'utf8'));
  t.is(installed.version, JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
  t.true(existsSync(join(appDir, 'node_modules/cdk8s-plus-27')));
  t.false(existsSync(join(appDir, 'node_modules/customapp-operator/node_modules/cdk8s-plus-27')), 'a peer, not a second copy');
  // The example type-checks against the packed declarations (package.json `exports` and `types`).
  // Its @types/node is dev tooling too: the repository's.
  await run('tsc', ['--noEmit', '-p', '.', '--typeRoots', join(ROOT, 'node_modules/@types')], appDir);
  t.pass();
});

test.serial(
  'cdk8s synth writes the namespace, the operator with its CRD, and the shop with two CustomApps and an opted-in Deployment',
  async (t) => {
    t.timeout(120_000);
    await run('cdk8s', ['synth'], appDir);
    t.deepEqual(readdirSync(join(appDir, 'dist')).sort(), ['operator.k8s.yaml', 'shop-namespace.k8s.yaml', 'shop.k8s.yaml']);
    const kinds = (file: string): string[] =>
      parseAllDocuments(readFileSync(join(appDir, 'dist', file), 'utf8')).map((document) => {
        const object = document.toJS() as { kind: string; metadata: { name: string } };
        return `${object.kind}/${object.metadata.name}`;
      });
    t.deepEqual(kinds('shop.k8s.yaml'), [
      'ConfigMap/shop-config',
      'Secret/shop-secret',
      'CustomApp/web',
      'CustomApp/worker',
      'Deployment/assets',
    ]);
    t.is(kinds('operator.k8s.yaml')[0], 'CustomResourceDefinition/customapps.app.example.com');
    t.true(kinds('operator.k8s.yaml').includes('Deployment/customapp-operator'));
  },
);

/** A Deployment's annotations, its pod template's and its generation, or undefined while it does not exist. */
async function template(admin: Awaited<ReturnType<typeof adminClient>>, name: string) {
  const deployment = await getIfExists<Deployment>(admin, DEPLOYMENTS, 'shop', name);
  return (
    deployment && {
      own: deployment.metadata.annotations ?? {},
      annotations: deployment.spec.template.metadata?.annotations ?? {},
      generation: deployment.metadata.generation!,
    }
  );
}

for (const target of selectedTargets()) {
  test.serial(
    `[${target}] the synthesized app applies, and its CustomApps become Deployments that roll on the ConfigMap keys they read, and its opted-in Deployment rolls`,
    async (t) => {
      t.timeout(120_000);
      const dist = join(appDir, 'dist');
      const cluster = await startCluster(target);
      t.teardown(() => cluster.stop());
      for (const files of [['shop-namespace.k8s.yaml', 'operator.k8s.yaml'], ['shop.k8s.yaml']]) {
        const applied = await cluster.kubectl(['apply', ...files.flatMap((file) => ['-f', join(dist, file)])]);
        t.is(applied.code, 0, applied.stderr);
        const established = await cluster.kubectl([
          'wait',
          '--for=condition=Established',
          '--timeout=30s',
          'crd/customapps.app.example.com',
        ]);
        t.is(established.code, 0, established.stderr);
      }
      // The operator runs as the ServiceAccount the construct's RBAC binds, serving Deployments as its `workloads` says.
      const running = await startTestOperator(cluster, { workloads: ['deployments'] });
      t.teardown(() => running.operator.stop());
      const admin = await adminClient(cluster);
      t.teardown(() => admin.close());
      const [web, worker] = await Promise.all(
        ['web', 'worker'].map((name) => eventually(`Deployment shop/${name}`, () => template(admin, name), 30_000)),
      );
      t.truthy(web!.annotations['app.example.com/config-hash'], 'web reads the whole ConfigMap');
      // reloadOnChange's annotation opts assets in: the operator records what it runs with, and rolls nothing yet.
      const assets = await eventually('assets opted in', async () => {
        const now = await template(admin, 'assets');
        return now?.own[RUNNING_HASHES_ANNOTATION] ? now : undefined;
      });
      t.is(assets.own[RELOAD_ANNOTATION], 'true');
      t.false(TEMPLATE_HASHES_ANNOTATION in assets.annotations, 'opting in rolls nothing');

      /** Edits keys of the shop's ConfigMap, as a user would. */
      const editConfig = async (data: Record<string, string>): Promise<void> => {
        const patch = JSON.stringify({ data });
        const edited = await cluster.kubectl(['-n', 'shop', 'patch', 'configmap', 'shop-config', '--type=merge', '-p', patch]);
        t.is(edited.code, 0, edited.stderr);
      };
      // A key only web reads: web rolls, worker (reading feature-flags.yaml alone) does not.
      await editConfig({ GREETING: 'hi' });
      const webRolled = await eventually('web rolls on GREETING', async () => {
        const now = await template(admin, 'web');
        return now && now.annotations['app.example.com/config-hash'] !== web!.annotations['app.example.com/config-hash'] && now;
      });
      await eventually('assets rolls on GREETING', async () => (await template(admin, 'assets'))?.annotations[TEMPLATE_HASHES_ANNOTATION]);
      // A key both read: each rolls once more, and worker's template changed this once only.
      await editConfig({ 'feature-flags.yaml': 'checkout: false\n' });
      await eventually('worker rolls on feature-flags.yaml', async () => {
        const now = await template(admin, 'worker');
        return now && now.generation > worker!.generation && now;
      });
      const webAgain = await eventually('web rolls on feature-flags.yaml', async () => {
        const now = await template(admin, 'web');
        return now && now.generation > webRolled.generation && now;
      });
      t.is(webRolled.generation, web!.generation + 1);
      t.is(webAgain.generation, web!.generation + 2);
      const workerNow = (await template(admin, 'worker'))!;
      t.is(workerNow.generation, worker!.generation + 1, 'the GREETING edit rolled nothing of worker');
      t.notDeepEqual(workerNow.annotations, worker!.annotations);
      const app = await admin.get<CustomApp>(CUSTOM_APPS, 'shop', 'worker');
      t.deepEqual(
        app.status?.observedConfigMaps?.map((each) => each.name),
        ['shop-config'],
      );
    },
  );
}

if (nodeSelected()) {
  test.serial(
    "[cluster] on the real node, the example app synthesized with the demo image runs the operator from its image, and a GREETING edit reaches web's pods",
    async (t) => {
      const cluster = await startNodeCluster(t);
      t.teardown(() => cluster.stop());
      t.timeout(15 * 60_000);
      const node = cluster.node!;
      const out = join(appDir, 'dist-node');
      await run('cdk8s', ['synth', '--output', out], appDir, 180_000, { SHOP_IMAGE: node.images.demo });
      await kubectlOk(cluster, ['apply', '-f', join(out, 'shop-namespace.k8s.yaml'), '-f', join(out, 'operator.k8s.yaml')]);
      await kubectlOk(cluster, ['wait', '--for=condition=Established', '--timeout=60s', 'crd/customapps.app.example.com']);
      await kubectlOk(cluster, ['apply', '-f', join(out, 'shop.k8s.yaml')]);
      const describe = async (): Promise<string> => kubectlOk(cluster, ['get', 'customapp,deploy,pods', '-o', 'wide', '-A']).catch(String);
      await waitFor(
        'the operator pod Ready, from the image the construct names',
        240_000,
        async () =>
          (await podsOf(node, 'customapp-system', 'app.kubernetes.io/name=customapp-operator')).some(podReady) ? true : undefined,
        { describe, intervalMs: 500 },
      );
      const web = async (): Promise<any> => get(node, '/apis/apps/v1/namespaces/shop/deployments/web');
      const first = await waitFor(
        'web rolled out',
        300_000,
        async () => {
          const now = await web();
          return rolloutComplete(now) ? now : undefined;
        },
        {
          describe,
          intervalMs: 500,
        },
      );
      /** GREETING in each of web's running pods. */
      const greetings = async (): Promise<string[]> => {
        const pods = (await podsOf(node, 'shop', 'app.kubernetes.io/name=web')).filter(
          (pod) => !pod.metadata.deletionTimestamp && podReady(pod),
        );
        return Promise.all(pods.map((pod) => envInPod(cluster, 'shop', pod.metadata.name, 'GREETING')));
      };
      t.deepEqual(await greetings(), ['hello', 'hello']);
      await kubectlOk(cluster, ['-n', 'shop', 'patch', 'configmap', 'shop-config', '--type=merge', '-p', '{"data":{"GREETING":"hi"}}']);
      await waitFor(
        'web rolled again, its pods reading the new GREETING',
        300_000,
        async () => {
          const now = await web();
          if (now.metadata.generation <= first.metadata.generation || !rolloutComplete(now)) return undefined;
          const values = await greetings();
          return values.length === 2 && values.every((value) => value === 'hi') ? values : undefined;
        },
        { describe, intervalMs: 500 },
      );
      t.pass();
    },
  );
}
