// Secrets never leak: canary Secret values appear in no log, status, Event, Deployment or heap snapshot of the operator.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import test from 'ava';
import { OPERATOR_NAME, OPERATOR_NAMESPACE, SECRET_HASH_ANNOTATION } from '../../api/customapp.js';
import type { CustomApp } from '../../operator/customapp/custom-app.js';
import { canonicalContent } from '../../operator/dependencies/content-hash.js';
import { DEPLOYMENTS, EVENTS, SECRETS } from '../../operator/kube/resources.js';
import { CUSTOM_APPS } from '../../operator/customapp/custom-app.js';
import type { CoreEvent, Deployment } from '../../operator/kube/objects.js';
import { selectedTargets } from '../support/targets.js';
import { clusterForTest, createAll, eventually, objects } from '../support/operator-harness.js';
import { restrictedViolations } from '../support/pod-security.js';
import { secretHashIn } from '../support/secret-hash.js';
import { conditionOf, podAnnotation } from '../support/cluster-reads.js';
import { startProbedOperator } from './support/probed-operator.js';
import { UNGOVERNED_FLAGS } from '../support/operator-process.js';

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

/**
 * The plain SHA-256 digests a reader of pods could compute from a guess of a Secret's values, in every obvious
 * canonical form: the operator's former one (`contentHash`, values base64 or decoded), JSON of the data map (as
 * given and sorted, bare or under `data`), sorted `[key, value]` pairs, an env file (`KEY=value` lines, with and
 * without a final newline), key-value concatenations, each value alone and all values concatenated; each digest as
 * hex and base64.
 */
function plainDigests(values: Record<string, string>): string[] {
  const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
  const encoded = Object.fromEntries(Object.entries(values).map(([key, value]) => [key, Buffer.from(value).toString('base64')]));
  const texts: string[] = [];
  for (const map of [values, encoded]) {
    const entries = Object.entries(map);
    const sorted = [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    texts.push(
      canonicalContent({ data: map }),
      JSON.stringify(map),
      JSON.stringify(Object.fromEntries(sorted)),
      JSON.stringify({ data: map }),
      JSON.stringify({ data: Object.fromEntries(sorted) }),
      JSON.stringify(sorted),
      sorted.map(([key, value]) => `${key}=${value}`).join('\n'),
      `${sorted.map(([key, value]) => `${key}=${value}`).join('\n')}\n`,
      sorted.map(([key, value]) => `${key}${value}`).join(''),
      sorted.map(([, value]) => value).join(''),
      ...sorted.map(([, value]) => value),
    );
  }
  return texts.flatMap((text) => {
    const digest = sha256(text);
    return [digest.toString('hex'), digest.toString('base64')];
  });
}

/**
 * The forms a digest can show up in: whole, and its first 12 hex digits (as Events show hashes). Not shorter: an
 * 8-digit needle among hundreds would match some random hex of the logs (trace ids) too often.
 */
function digestForms(digest: string): string[] {
  return /^[0-9a-f]{64}$/.test(digest) ? [digest, digest.slice(0, 12)] : [digest];
}

for (const target of selectedTargets()) {
  test(`[${target}] after a full scenario, canary Secret values appear nowhere (logs at debug, status, Events, Deployments, the operator's heap), nor a plain hash of them or a Secret's uid`, async (t) => {
    const scenario = await clusterForTest(t, target, { envtest: { controllerManager: true } });
    const { cluster, admin } = scenario;
    const { path: kubeconfig } = await cluster.serviceAccount(OPERATOR_NAMESPACE, OPERATOR_NAME);
    const operator = await startProbedOperator({ kubeconfig, logLevel: 'debug', flags: UNGOVERNED_FLAGS });
    t.teardown(() => operator.dispose());

    const canary = (what: string): string => `canary-${what}-${randomBytes(12).toString('hex')}`;
    const planted: string[] = [];
    const plant = (what: string): string => {
      const value = canary(what);
      planted.push(value);
      return value;
    };
    const ns = 'canary';
    const reads = await scenario.createNamespace(ns);

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
    // Every content each Secret had, and every uid: none may show up as a plain hash, or as the key.
    const contents: Record<string, string>[] = [...Object.values(first)];
    const uids = new Set<string>();
    const secretHash = async (name: string): Promise<string> => {
      uids.add((await admin.get(SECRETS, ns, name)).metadata.uid!);
      return secretHashIn(admin, ns, name);
    };
    for (let index = 0; index < APPS; index += 1) {
      const expected = await secretHash(`creds-${index}`);
      await eventually(
        `app-${index} rolls out with its Secret's keyed hash`,
        async () => podAnnotation(await reads.deployment(`app-${index}`), SECRET_HASH_ANNOTATION) === expected,
      );
    }
    // An edit through stringData, a deletion (held), and a recreation.
    const edited = { PASSWORD: plant('edited') };
    contents.push({ ...first['creds-0']!, ...edited });
    await admin.patch(SECRETS, ns, 'creds-0', 'merge', { stringData: edited });
    const afterEdit = await secretHash('creds-0');
    await eventually(
      'the edit rolls app-0',
      async () => podAnnotation(await reads.deployment('app-0'), SECRET_HASH_ANNOTATION) === afterEdit,
    );
    await admin.delete(SECRETS, ns, 'creds-1');
    await eventually('app-1 is held', async () => conditionOf(await reads.app('app-1'), 'SecretAvailable')?.reason === 'SecretNotFound');
    const recreated = { PASSWORD: plant('recreated') };
    contents.push(recreated);
    await createAll(admin, objects.secret(ns, 'creds-1', recreated));
    const afterRecreation = await secretHash('creds-1');
    await eventually(
      'the recreation rolls app-1',
      async () => podAnnotation(await reads.deployment('app-1'), SECRET_HASH_ANNOTATION) === afterRecreation,
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

    // What a reader of pods, CustomApps or Events sees: no plain digest of any content a Secret had, and no Secret's
    // uid (the key of its hash). The heap is left out: the operator keeps the plain hash in memory, to recognise an
    // older operator's annotation (operator/README.md, keyed hashes).
    const digests = contents.flatMap(plainDigests).flatMap(digestForms);
    t.true(digests.length > 300, `${digests.length} plain digest forms`);
    t.is(uids.size, APPS + 1, 'every Secret uid, the deleted creds-1 included');
    for (const place of ['the logs (debug)', 'the CustomApps (status)', 'the Events', 'the Deployments']) {
      const text = places[place]!;
      t.deepEqual(
        digests.filter((digest) => text.includes(digest)),
        [],
        `no plain hash of a Secret in ${place}`,
      );
      t.deepEqual(
        [...uids].filter((uid) => text.includes(uid)),
        [],
        `no Secret uid in ${place}`,
      );
    }

    const deployments = (await admin.list<Deployment>(DEPLOYMENTS, { namespace: ns })).items;
    t.is(deployments.length, APPS);
    for (const deployment of deployments)
      t.deepEqual(restrictedViolations(deployment.spec.template.spec), [], `${deployment.metadata.name} passes restricted Pod Security`);
  });
}
