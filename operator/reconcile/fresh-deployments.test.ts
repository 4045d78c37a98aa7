// Tests of the new leader's fresh read of its owned Deployments: every page of every watched namespace, into the cache.
import test from 'ava';
import type { WritableCache } from '../cache/fresh-cache.js';
import { OWNED_SELECTOR } from '../customapp/labels.js';
import type { Deployment, ObjectList } from '../kube/objects.js';
import type { ListOptions } from '../kube/options.js';
import { readOwnedDeployments } from './fresh-deployments.js';

const deployment = (namespace: string, name: string, resourceVersion: string): Deployment =>
  ({ metadata: { namespace, name, resourceVersion }, spec: { selector: {}, template: {} } }) as Deployment;

/** A list client answering `pages` in order, recording what each request asked. */
function pagedClient(pages: ObjectList<Deployment>[]): {
  list: <T>(resource: unknown, options?: ListOptions) => Promise<ObjectList<T>>;
  asked: ListOptions[];
} {
  const asked: ListOptions[] = [];
  return {
    asked,
    list: async <T>(_resource: unknown, options: ListOptions = {}) => {
      asked.push(options);
      return pages.shift() as unknown as ObjectList<T>;
    },
  };
}

/** A cache recording what it was told it learned (a read, not a write of this process: no echo awaited). */
function recordingCache(): WritableCache<Deployment> & { written: string[] } {
  const written: string[] = [];
  return {
    written,
    get: () => undefined,
    wrote: () => {
      throw new Error('a listed Deployment is no write of this process');
    },
    learned: (object) => {
      written.push(`${object.metadata.namespace}/${object.metadata.name}@${object.metadata.resourceVersion}`);
    },
    forget: () => undefined,
  };
}

test('reads every page of the owned Deployments, each into the cache, following the continue token', async (t) => {
  const client = pagedClient([
    { metadata: { continue: 'next' }, items: [deployment('a', 'one', '7')] },
    { metadata: {}, items: [deployment('b', 'two', '9')] },
  ]);
  const cache = recordingCache();
  t.is(await readOwnedDeployments(client, cache, undefined), 2);
  t.deepEqual(cache.written, ['a/one@7', 'b/two@9']);
  t.deepEqual(client.asked, [
    { labelSelector: OWNED_SELECTOR, limit: 500 },
    { labelSelector: OWNED_SELECTOR, limit: 500, continue: 'next' },
  ]);
  t.true(
    client.asked.every((options) => options.resourceVersion === undefined),
    'no resourceVersion: the API server reads etcd',
  );
});

test('with --namespaces, reads each watched namespace and nothing at cluster scope', async (t) => {
  const client = pagedClient([
    { metadata: {}, items: [deployment('a', 'one', '3')] },
    { metadata: {}, items: [] },
  ]);
  const cache = recordingCache();
  t.is(await readOwnedDeployments(client, cache, ['a', 'b']), 1);
  t.deepEqual(
    client.asked.map((options) => options.namespace),
    ['a', 'b'],
  );
});
