// A shard's per-key state across a view change: a key given up lets go of its refs and its place; a key kept keeps its place through the rebuild.
import test from 'ava';
import pino from 'pino';
import { RolloutGovernance, type RolloutStanding } from '../governance/governance.js';
import { keyLeftCaches, queuePlacesKept } from './shard-keys.js';

const silent = pino({ level: 'silent' });
const WORKLOAD = 'Deployment/ns/wl-1';

/** A governance of budget 1 with `app` rolling and, queued behind it, the keys of `queued` in that order. */
function governanceWith(queued: readonly string[]): RolloutGovernance {
  let now = 1_000;
  const governance = new RolloutGovernance({ settings: { maxConcurrentRollouts: 1 }, now: () => now, logger: silent });
  governance.rebuild([{ key: 'ns/app', namespace: 'ns', rolling: true }]);
  for (const key of queued) {
    now += 10;
    governance.gate({
      key,
      namespace: 'ns',
      changes: [{ kind: 'ConfigMap', name: 'cm', from: 'a', to: 'b' }],
      paused: false,
      debounceMs: 0,
      rolling: false,
    });
  }
  return governance;
}

test('a key that left the caches out of scope forgets its place, releases its refs and forgets its reports; one back in scope keeps them all', (t) => {
  const calls: string[] = [];
  const holdings = {
    forget: (key: string) => calls.push(`forget ${key}`),
    release: (key: string) => calls.push(`release ${key}`),
    forgetReports: (key: string) => calls.push(`forget reports ${key}`),
  };
  t.true(keyLeftCaches('ns/gone', () => false, holdings, silent));
  t.false(keyLeftCaches('ns/back', () => true, holdings, silent));
  t.deepEqual(calls, ['forget ns/gone', 'release ns/gone', 'forget reports ns/gone']);
});

test('a view change rebuild keeps the queue places the cluster does not record, for the keys still in scope, in their order', (t) => {
  const governance = governanceWith([WORKLOAD, 'ns/queued', 'ns/given-up']);
  const before = governance.budget.snapshot().queue;
  t.deepEqual(
    before.map(({ key }) => key),
    [WORKLOAD, 'ns/queued', 'ns/given-up'],
  );
  // The cluster records the CustomApp's place (its status), at the same time the budget gave it; the workload's it cannot.
  const since = new Date(before[1]!.since).toISOString();
  const standings: RolloutStanding[] = [
    { key: 'ns/app', namespace: 'ns', rolling: true },
    { key: 'ns/queued', namespace: 'ns', rolling: false, pending: { reason: 'Queued', trigger: 'ConfigMap', name: 'cm', since } },
  ];
  governance.rebuild(
    standings,
    queuePlacesKept(before, (key) => key !== 'ns/given-up'),
  );
  t.deepEqual(
    governance.budget.snapshot().queue,
    before.slice(0, 2),
    'the workload keeps its place ahead of the CustomApp; the key given up is left to its new owner',
  );

  // Without the places kept (a restart), the rebuild reads what the cluster records alone.
  governance.rebuild(standings);
  t.deepEqual(
    governance.budget.snapshot().queue.map(({ key }) => key),
    ['ns/queued'],
  );
});

test('a place the cluster records wins over the one kept', (t) => {
  const governance = governanceWith(['ns/queued']);
  governance.rebuild(
    [
      {
        key: 'ns/queued',
        namespace: 'ns',
        rolling: false,
        pending: { reason: 'Queued', trigger: 'ConfigMap', name: 'cm', since: new Date(5_000).toISOString() },
      },
    ],
    [{ key: 'ns/queued', since: 7_000 }],
  );
  t.deepEqual(governance.budget.snapshot().queue, [{ key: 'ns/queued', since: 5_000 }]);
});
