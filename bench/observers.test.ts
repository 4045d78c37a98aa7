// The harness's raw Deployment observers on a scripted list and watch: which sightings each records as a change, and which it counts.
import test from 'ava';
import { CONFIG_HASH_ANNOTATION } from '../api/customapp.js';
import type { KubeClient } from '../operator/kube/client.js';
import type { Deployment, RawWatchEvent } from '../operator/kube/objects.js';
import { DeploymentObserver } from './observers.js';
import { TemplateObserver } from './workloads/observer.js';

type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** Deployment `ns/name` with this config hash, image and template label. */
function deployment(name: string, hash: string, image: string, label = 'a'): Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'ns', resourceVersion: '1' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name, label }, annotations: { [CONFIG_HASH_ANNOTATION]: hash } },
        spec: { containers: [{ name: 'app', image }] },
      },
    },
  } as Deployment;
}

/**
 * A client whose list answers `listed` and whose one watch sends `events`, then stays open until the observer stops;
 * `sent` resolves once every event was taken from it.
 */
function scriptedClient(listed: Deployment[], events: [EventType, Deployment][]): { client: KubeClient; sent: Promise<void> } {
  let allSent!: () => void;
  const sent = new Promise<void>((done) => {
    allSent = done;
  });
  const client = {
    list: async () => ({ items: listed, metadata: { resourceVersion: '1' } }),
    async *watch(_resource: unknown, _options: unknown, signal: AbortSignal): AsyncGenerator<RawWatchEvent<Deployment>> {
      for (const [type, object] of events) yield { type, object } as RawWatchEvent<Deployment>;
      allSent();
      await new Promise((done) => signal.addEventListener('abort', done, { once: true }));
    },
  } as unknown as KubeClient;
  return { client, sent };
}

/** A clock that answers 1, 2, 3, … on each read: each sighting's arrival time is its order. */
function ticks(): () => number {
  let now = 0;
  return () => ++now;
}

test('DeploymentObserver: a sighting that changes the hash, the image or existence is recorded; the initial list is recorded but not counted', async (t) => {
  const { client, sent } = scriptedClient(
    [deployment('web', 'h1', 'img:1')],
    [
      ['MODIFIED', deployment('web', 'h1', 'img:1', 'b')],
      ['MODIFIED', deployment('web', 'h2', 'img:1')],
      ['MODIFIED', deployment('web', 'h2', 'img:2')],
      ['DELETED', deployment('web', 'h2', 'img:2')],
    ],
  );
  const observer = new DeploymentObserver(client, ticks());
  await observer.start();
  await sent;
  await observer.stop();
  t.deepEqual(
    observer.changesSince('ns/web', 0).map(({ hash, image, deleted }) => [hash, image, deleted]),
    [
      ['h1', 'img:1', false],
      ['h2', 'img:1', false],
      ['h2', 'img:2', false],
      ['h2', 'img:2', true],
    ],
  );
  t.is(observer.changeCount, 3, 'the listed sighting is not a change');
  t.deepEqual(observer.current('ns/web'), { at: 5, hash: 'h2', image: 'img:2', deleted: true });
  t.deepEqual(
    observer.changesSince('ns/web', 3).map((sighting) => sighting.at),
    [4, 5],
    'only those that arrived after `since`',
  );
});

test('TemplateObserver: a template change is recorded at its arrival; the initial list, a first sighting and a repeat of the template are not', async (t) => {
  const { client, sent } = scriptedClient(
    [deployment('web', 'h1', 'img:1')],
    [
      ['ADDED', deployment('new', 'h1', 'img:1')],
      ['MODIFIED', deployment('web', 'h1', 'img:1')],
      ['MODIFIED', deployment('web', 'h2', 'img:1')],
      ['MODIFIED', deployment('new', 'h1', 'img:1', 'b')],
      ['DELETED', deployment('web', 'h2', 'img:1')],
    ],
  );
  const observer = new TemplateObserver(client, ticks());
  await observer.start();
  await sent;
  await observer.stop();
  t.deepEqual(observer.changesSince('ns/web', 0), [4, 6]);
  t.deepEqual(observer.changesSince('ns/new', 0), [5]);
  t.deepEqual(observer.changesSince('ns/web', 4), [6]);
  t.is(observer.changeCount, 3);
});
