// Secrets never leak: canary Secret values appear in no log, status, Event, Deployment or heap snapshot of the operator.
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import test from 'ava';
import { OPERATOR_NAME, OPERATOR_NAMESPACE, SECRET_HASH_ANNOTATION } from '../../infra/customapp-api.js';
import type { CustomApp } from '../../operator/customapp/custom-app.js';
import { contentHash } from '../../operator/deps/content-hash.js';
import { DEPLOYMENTS, EVENTS, SECRETS } from '../../operator/kube/resources.js';
import { CUSTOM_APPS } from '../../operator/customapp/custom-app.js';
import type { CoreEvent, Deployment } from '../../operator/kube/objects.js';
import { selectedTargets, startCluster } from '../support/cluster.js';
import { adminClient, createAll, createNamespace, eventually, installOperatorResources, objects } from '../support/operator-harness.js';
import { restrictedViolations } from '../support/pod-security.js';
import { conditionOf, NamespaceReads, podAnnotation } from './support/cluster-reads.js';
import { startProbedOperator } from './support/probed-operator.js';

/** More Secrets than the collapse threshold (10), so that a namespace-wide watch also delivers unreferenced ones. */
const APPS = 12;

/**
 * The ways a value can show up in text: as itself, and base64-encoded at each of the three byte alignments (the
 * middle of a larger base64 blob), without the edge characters that depend on the neighbouring bytes.
 */
function leakForms(value: string): string[] {
  const forms = [value, Buffer.from(value).toString('base64')];
  for (let offset = 1; offset <= 2; offset += 1) {
    const encoded = Buffer.concat([Buffer.alloc(offset), Buffer.from(value)]).toString('base64');
    forms.push(encoded.slice(4, -4));
  }
  return forms;
}

const secretHash = (values: Record<string, string>): string =>
  contentHash({ data: Object.fromEntries(Object.entries(values).map(([key, value]) => [key, Buffer.from(value).toString('base64')])) });

for (const target of selectedTargets()) {
  test(`[${target}] after a full scenario, canary Secret values appear nowhere: logs at debug, status, Events, Deployments, the operator's heap`, async (t) => {
    const cluster = await startCluster(target, { envtest: { controllerManager: true } });
    t.teardown(() => cluster.stop());
    await installOperatorResources(cluster);
    const admin = await adminClient(cluster);
    t.teardown(() => admin.close());
    const { path: kubeconfig } = await cluster.serviceAccount(OPERATOR_NAMESPACE, OPERATOR_NAME);
    const operator = await startProbedOperator({ kubeconfig, logLevel: 'debug' });
    t.teardown(() => operator.dispose());

    const canary = (what: string): string => `canary-${what}-${randomBytes(12).toString('hex')}`;
    const planted: string[] = [];
    const plant = (what: string): string => {
      const value = canary(what);
      planted.push(value);
      return value;
    };
    const ns = 'canary';
    const reads = new NamespaceReads(admin, ns);
    await createNamespace(admin, ns);

    // Twelve CustomApps, each with its own Secret: past the threshold, the Secrets of the namespace are watched as one.
    const first: Record<string, Record<string, string>> = {};
    for (let index = 0; index < APPS; index += 1) {
      first[`creds-${index}`] = { PASSWORD: plant(`password-${index}`), API_KEY: plant(`key-${index}`) };
      await createAll(
        admin,
        objects.secret(ns, `creds-${index}`, first[`creds-${index}`]!),
        objects.customApp(ns, `app-${index}`, { image: 'example/app:1', secretName: `creds-${index}`, port: 8080 }),
      );
    }
    await createAll(admin, objects.secret(ns, 'unreferenced', { TOKEN: plant('unreferenced') }));
    for (let index = 0; index < APPS; index += 1) {
      await eventually(
        `app-${index} rolls out with its Secret's hash`,
        async () => podAnnotation(await reads.deployment(`app-${index}`), SECRET_HASH_ANNOTATION) === secretHash(first[`creds-${index}`]!),
      );
    }
    // An edit through stringData, a deletion (held), and a recreation.
    const edited = { PASSWORD: plant('edited') };
    await admin.patch(SECRETS, ns, 'creds-0', 'merge', { stringData: edited });
    await eventually(
      'the edit rolls app-0',
      async () =>
        podAnnotation(await reads.deployment('app-0'), SECRET_HASH_ANNOTATION) === secretHash({ ...first['creds-0']!, ...edited }),
    );
    await admin.delete(SECRETS, ns, 'creds-1');
    await eventually('app-1 is held', async () => conditionOf(await reads.app('app-1'), 'SecretAvailable')?.reason === 'SecretNotFound');
    const recreated = { PASSWORD: plant('recreated') };
    await createAll(admin, objects.secret(ns, 'creds-1', recreated));
    await eventually(
      'the recreation rolls app-1',
      async () => podAnnotation(await reads.deployment('app-1'), SECRET_HASH_ANNOTATION) === secretHash(recreated),
    );
    await admin.patch(SECRETS, ns, 'unreferenced', 'merge', { stringData: { TOKEN: plant('unreferenced-edited') } });
    await operator.process.waitFor(
      "the namespace-wide Secret watch delivers the unreferenced Secret's edit (and drops it)",
      () => operator.process.find('event', { key: `${ns}/unreferenced`, type: 'MODIFIED' }).length > 0,
    );

    const report = await operator.probe({ heapSnapshot: true });
    t.teardown(() => rmSync(report.heapSnapshotPath!, { force: true }));
    const places: Record<string, string> = {
      'the logs (debug)': `${operator.process.lines.map((line) => JSON.stringify(line)).join('\n')}\n${operator.process.text}\n${operator.process.stderr}`,
      'the CustomApps (status)': JSON.stringify((await admin.list<CustomApp>(CUSTOM_APPS, { namespace: ns })).items),
      'the Events': JSON.stringify((await admin.list<CoreEvent>(EVENTS, { namespace: ns })).items),
      'the Deployments': JSON.stringify((await admin.list<Deployment>(DEPLOYMENTS, { namespace: ns })).items),
      "the operator's heap snapshot": readFileSync(report.heapSnapshotPath!, 'utf8'),
    };
    // Debug logging was on where a value could leak: every Secret shows up in debug or info lines (its use at debug,
    // its watch events at info, the first line of a trace).
    const debugText = operator.process.lines
      .filter((line) => line.level === 20 || line.level === 30)
      .map((line) => JSON.stringify(line))
      .join('\n');
    const untraced = [...Array.from({ length: APPS }, (_, index) => `creds-${index}"`), 'unreferenced"'].filter(
      (name) => !debugText.includes(`${ns}/${name}`),
    );
    t.deepEqual(untraced, [], 'every Secret is named in debug or info lines');
    t.true(
      operator.process.lines.some((line) => line.level === 30 && line.msg === 'event' && line.key === `${ns}/creds-0`),
      'the watch events of referenced Secrets are traced at info',
    );
    t.true(
      operator.process.lines.some((line) => line.level === 20 && line.msg === 'event' && line.key === `${ns}/unreferenced`),
      'the namespace watch traces the events it drops at debug',
    );
    t.true(places["the operator's heap snapshot"]!.includes('app.example.com/secret-hash'), 'the snapshot holds the strings of the heap');
    for (const [place, text] of Object.entries(places)) {
      const found = planted.filter((value) => leakForms(value).some((form) => text.includes(form)));
      t.deepEqual(found, [], `no canary in ${place}`);
    }

    const deployments = (await admin.list<Deployment>(DEPLOYMENTS, { namespace: ns })).items;
    t.is(deployments.length, APPS);
    for (const deployment of deployments)
      t.deepEqual(restrictedViolations(deployment.spec.template.spec), [], `${deployment.metadata.name} passes restricted Pod Security`);
  });
}
