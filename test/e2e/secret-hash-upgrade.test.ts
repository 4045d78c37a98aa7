// An upgrade from an operator that wrote plain Secret hashes rolls nothing: its annotations stay until a Secret changes.
import test from 'ava';
import { map } from 'rxjs';
import { SECRET_HASH_ANNOTATION } from '../../api/customapp.js';
import { contentHash } from '../../operator/dependencies/content-hash.js';
import { DependencyRegistry } from '../../operator/dependencies/registry.js';
import { RegistryDependencySource } from '../../operator/dependencies/registry-source.js';
import type { DependencySource, DependencyState } from '../../operator/dependencies/source.js';
import { EVENTS, SECRETS } from '../../operator/kube/resources.js';
import type { DependencyContext } from '../../operator/operator.js';
import type { CoreEvent } from '../../operator/kube/objects.js';
import { selectedTargets } from '../support/targets.js';
import { createAll, eventually, objects, startTestOperator, clusterScenario } from '../support/operator-harness.js';
import { podAnnotation } from '../support/cluster-reads.js';
import { secretHashIn } from '../support/secret-hash.js';

const APPS = 3;

/**
 * A Secret state as an operator before keyed hashes saw it: its hash is the plain SHA-256 of the content (kept as
 * `unkeyedHash` too, so that today's status code, which drops an unkeyed hash it cannot match, writes it as the
 * previous release did).
 */
function asBeforeKeyedHashes(state: DependencyState): DependencyState {
  return state.exists && state.unkeyedHash !== undefined ? { ...state, hash: state.unkeyedHash } : state;
}

/**
 * The previous release, reproduced: the same operator whose dependency source reports a Secret's plain SHA-256 as
 * its hash, which is exactly what `contentHash` (unchanged since) gave that release.
 */
function previousRelease(context: DependencyContext): DependencySource {
  const registry = new DependencyRegistry({ client: context.client, logger: context.logger, scheduler: context.scheduler });
  const source = new RegistryDependencySource(registry, { logger: context.logger });
  return {
    use: (owner, refs) => source.use(owner, refs),
    release: (owner) => source.release(owner),
    state: async (ref) => {
      const state = await source.state(ref);
      return state && asBeforeKeyedHashes(state);
    },
    changes: source.changes.pipe(map(asBeforeKeyedHashes)),
    watched: () => source.watched(),
    owners: () => source.owners(),
    close: () => {
      source.close();
      registry.close();
    },
  };
}

const plainHashOf = (values: Record<string, string>): string =>
  contentHash({ data: Object.fromEntries(Object.entries(values).map(([key, value]) => [key, Buffer.from(value).toString('base64')])) });

for (const target of selectedTargets()) {
  const scenario = clusterScenario(test, target);

  test.serial(
    `[${target}] after an upgrade from plain Secret hashes no Deployment is written; statuses turn keyed; a Secret edit then rolls its app to the keyed hash`,
    async (t) => {
      const ns = 'upgrade';
      const names = Array.from({ length: APPS }, (_, index) => `app-${index}`);
      const reads = await scenario.createNamespace(ns);
      const annotation = async (name: string): Promise<string | undefined> =>
        podAnnotation(await reads.deployment(name), SECRET_HASH_ANNOTATION);
      for (const [index, name] of names.entries())
        await createAll(
          scenario.admin,
          objects.secret(ns, `creds-${index}`, { TOKEN: `token-${index}` }),
          objects.customApp(ns, name, { image: 'example/app:1', secretName: `creds-${index}` }),
        );

      const before = await startTestOperator(scenario.cluster!, { dependencies: previousRelease });
      t.teardown(() => before.operator.stop());
      for (const [index, name] of names.entries()) {
        await eventually(`${name}: the previous release wrote the plain hash`, async () => {
          const status = (await reads.app(name))?.status;
          return (
            (await annotation(name)) === plainHashOf({ TOKEN: `token-${index}` }) &&
            status?.secretHash === plainHashOf({ TOKEN: `token-${index}` })
          );
        });
      }
      await before.operator.stop();
      const versions = new Map<string, string | undefined>();
      for (const name of names) versions.set(name, (await reads.deployment(name))?.metadata.resourceVersion);
      const rolloutsBefore = (await scenario.admin.list<CoreEvent>(EVENTS, { namespace: ns })).items.filter(
        (e) => e.reason === 'RolloutTriggered',
      ).length;

      const after = await startTestOperator(scenario.cluster!);
      t.teardown(() => after.operator.stop());
      for (const [index, name] of names.entries()) {
        const keyed = await secretHashIn(scenario.admin, ns, `creds-${index}`);
        await eventually(`${name}: the status turns keyed`, async () => (await reads.app(name))?.status?.secretHash === keyed);
      }
      await eventually('every key reconciled by the upgraded operator', () =>
        names.every((name) => after.logs.find('reconcile.end', { key: `${ns}/${name}` }).length > 0),
      );
      for (const [index, name] of names.entries()) {
        const live = await reads.deployment(name);
        t.is(live?.metadata.resourceVersion, versions.get(name), `${name}: its Deployment was not written`);
        t.is(await annotation(name), plainHashOf({ TOKEN: `token-${index}` }), `${name}: its pod template is unchanged: nothing rolls`);
      }
      t.deepEqual(
        after.requests.filter((request) => request.resource === 'deployments.apps' && request.verb !== 'list' && request.verb !== 'watch'),
        [],
        'no Deployment request at all',
      );

      await scenario.admin.patch(SECRETS, ns, 'creds-0', 'merge', { stringData: { TOKEN: 'rotated' } });
      const keyed = await secretHashIn(scenario.admin, ns, 'creds-0');
      await eventually('the edited Secret rolls app-0 to its keyed hash', async () => (await annotation('app-0')) === keyed);
      const rollouts = await eventually('one rollout Event', async () => {
        const found = (await scenario.admin.list<CoreEvent>(EVENTS, { namespace: ns })).items.filter(
          (e) => e.reason === 'RolloutTriggered',
        );
        return found.length > rolloutsBefore ? found : undefined;
      });
      t.is(rollouts.length, rolloutsBefore + 1, 'only app-0 rolled');
      t.true(
        rollouts.some((event) => event.message === `Rolling out Deployment "app-0": secret-hash unkeyed→${keyed.slice(0, 12)}`),
        'the Event names the keyed hash and hides the plain one',
      );
      for (const name of names.slice(1))
        t.is((await reads.deployment(name))?.metadata.resourceVersion, versions.get(name), `${name} still untouched`);
    },
  );
}
