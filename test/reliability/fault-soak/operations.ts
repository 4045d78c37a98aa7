// The random stream of user changes: creates, deletes, spec changes, ConfigMap and Secret handoffs, edits and re-creations.
import type { KubeClient } from '../../../operator/kube/client.js';
import { isAlreadyExists } from '../../../operator/kube/errors.js';
import { CONFIGMAPS, SECRETS } from '../../../operator/kube/resources.js';
import { CUSTOM_APPS } from '../../../operator/customapp/custom-app.js';
import { createAll, objects } from '../../support/operator-harness.js';
import type { SeededRandom } from '../support/random.js';
import { type AppSpec, customApp, type RefKind, tolerated, type World } from './world.js';

/** The random stream of user changes. */
export class OperationStream {
  private nextApp = 0;
  private readonly deleted: string[] = [];

  constructor(
    private readonly admin: KubeClient,
    private readonly world: World,
    private readonly random: SeededRandom,
    private readonly counts: Record<string, number>,
  ) {}

  /** One random operation; races with the soak's own earlier operations (404, 409) are counted, not failures. */
  async step(): Promise<void> {
    const { random, world } = this;
    const op = random.weighted({
      createApp: 10,
      deleteApp: 8,
      image: 15,
      replicas: 5,
      port: 5,
      switchConfigMap: 7,
      switchSecret: 4,
      editConfigMap: 20,
      labelConfigMap: 3,
      editSecret: 12,
      deleteConfigMap: 3,
      recreateConfigMap: 3,
      deleteSecret: 2,
      recreateSecret: 2,
    });
    const namespace = random.pick(world.namespaces());
    const liveHere = [...world.live.keys()].filter((key) => key.startsWith(`${namespace}/`));
    const outcome = await this.apply(op, namespace, liveHere).then(
      () => op,
      (error: unknown) => {
        if (!tolerated(error)) throw error;
        return `${op} (raced)`;
      },
    );
    this.counts[outcome] = (this.counts[outcome] ?? 0) + 1;
  }

  /** A random live CustomApp of the namespace (`liveHere`), with the spec the world expects of it. */
  private someApp(liveHere: readonly string[]): [string, AppSpec] | undefined {
    if (liveHere.length === 0) return undefined;
    const key = this.random.pick(liveHere);
    return [key, this.world.live.get(key)!];
  }

  /** Merge-patches a random live CustomApp's spec, and records the change as the spec the world expects. */
  private async patchSpec(
    namespace: string,
    liveHere: readonly string[],
    change: (spec: AppSpec) => Partial<Record<keyof AppSpec, unknown>>,
  ): Promise<void> {
    const picked = this.someApp(liveHere);
    if (!picked) return;
    const [key, spec] = picked;
    const patch = change(spec);
    Object.assign(spec, Object.fromEntries(Object.entries(patch).map(([field, value]) => [field, value ?? undefined])));
    await this.admin.patch(CUSTOM_APPS, namespace, key.split('/')[1]!, 'merge', { spec: patch });
    this.world.touched(key);
  }

  /** Creates a CustomApp: sometimes again under a name the stream deleted, to race the old one's finalizer. */
  private async createApp(namespace: string): Promise<void> {
    const { random, world } = this;
    const reuse = this.deleted.findIndex((key) => key.startsWith(`${namespace}/`));
    const key = reuse >= 0 && random.chance(0.4) ? this.deleted.splice(reuse, 1)[0]! : `${namespace}/new-${(this.nextApp += 1)}`;
    const spec = world.randomSpec(namespace);
    world.live.set(key, spec);
    world.everCreated.add(key);
    await createAll(this.admin, customApp(namespace, key.split('/')[1]!, spec));
  }

  /** Deletes a random live CustomApp of the namespace. */
  private async deleteApp(namespace: string, liveHere: readonly string[]): Promise<void> {
    const picked = this.someApp(liveHere);
    if (!picked) return;
    this.world.live.delete(picked[0]);
    this.deleted.push(picked[0]);
    await this.admin.delete(CUSTOM_APPS, namespace, picked[0].split('/')[1]!);
  }

  private async apply(op: string, namespace: string, liveHere: string[]): Promise<void> {
    const { random, world, admin } = this;
    const patchSpec = (change: (spec: AppSpec) => Partial<Record<keyof AppSpec, unknown>>): Promise<void> =>
      this.patchSpec(namespace, liveHere, change);
    const kind: RefKind = op.includes('Secret') ? 'Secret' : 'ConfigMap';
    const resource = kind === 'ConfigMap' ? CONFIGMAPS : SECRETS;
    switch (op) {
      case 'createApp':
        return this.createApp(namespace);
      case 'deleteApp':
        return this.deleteApp(namespace, liveHere);
      case 'image':
        return patchSpec(() => ({ image: `example/soak:${random.int(1000)}` }));
      case 'replicas':
        return patchSpec(() => ({ replicas: 1 + random.int(4) }));
      case 'port':
        return patchSpec((spec) => ({ port: spec.port ? null : (world.randomPort() ?? null) }));
      case 'switchConfigMap':
        return patchSpec(() => ({ configMapName: random.chance(0.9) ? random.pick(world.refNames(namespace, 'ConfigMap')) : null }));
      case 'switchSecret':
        return patchSpec(() => ({ secretName: random.chance(0.9) ? random.pick(world.refNames(namespace, 'Secret')) : null }));
      case 'editConfigMap':
      case 'editSecret': {
        const names = world.refNames(namespace, kind, true);
        if (names.length === 0) return;
        const data = kind === 'ConfigMap' ? { data: { VALUE: world.nextValue() } } : { stringData: { TOKEN: world.nextValue() } };
        const name = random.pick(names);
        await admin.patch(resource, namespace, name, 'merge', data);
        world.touched(...world.referencing(namespace, kind, name));
        return;
      }
      case 'labelConfigMap': {
        const names = world.refNames(namespace, 'ConfigMap', true);
        if (names.length === 0) return;
        await admin.patch(CONFIGMAPS, namespace, random.pick(names), 'merge', {
          metadata: { labels: { 'soak.example.com/touched': world.nextValue() } },
        });
        return;
      }
      case 'deleteConfigMap':
      case 'deleteSecret': {
        const names = world.refNames(namespace, kind, true);
        if (names.length <= 1) return;
        const name = random.pick(names);
        world.refs.get(namespace)![kind].set(name, false);
        await admin.delete(resource, namespace, name);
        return;
      }
      case 'recreateConfigMap':
      case 'recreateSecret': {
        const names = world.refNames(namespace, kind, false);
        if (names.length === 0) return;
        await this.recreate(namespace, kind, random.pick(names));
        return;
      }
    }
  }

  private async recreate(namespace: string, kind: RefKind, name: string): Promise<void> {
    this.world.refs.get(namespace)![kind].set(name, true);
    await createAll(
      this.admin,
      kind === 'ConfigMap'
        ? objects.configMap(namespace, name, { VALUE: this.world.nextValue() })
        : objects.secret(namespace, name, { TOKEN: this.world.nextValue() }),
    );
  }

  /** Recreates every ConfigMap and Secret the stream deleted, so that every live CustomApp can converge. */
  async recreateMissingReferences(): Promise<void> {
    for (const namespace of this.world.namespaces()) {
      for (const kind of ['ConfigMap', 'Secret'] as const) {
        for (const name of this.world.refNames(namespace, kind, false)) {
          await this.recreate(namespace, kind, name).catch((error: unknown) => {
            if (!isAlreadyExists(error)) throw error;
          });
        }
      }
    }
  }
}
