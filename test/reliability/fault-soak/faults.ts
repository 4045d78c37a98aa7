// The fault schedule of the stream: 500s and 429s, dropped watches, forced 410s, compactions and a competing writer.
import type { Emulator } from '../../../emulator/index.js';
import type { KubeClient } from '../../../operator/kube/client.js';
import { DEPLOYMENTS } from '../../../operator/kube/resources.js';
import { CUSTOM_APPS } from '../../../operator/customapp/custom-app.js';
import { OPERATOR_USER } from '../support/cluster-role.js';
import type { SeededRandom } from '../support/random.js';
import type { Ticker } from './ticker.js';
import { tolerated, type World } from './world.js';

/** What the schedule injected so far; the runner adds the kills. The 500s and 429s are counted by the emulator. */
export interface Injected {
  watchesEnded: number;
  watchesReset: number;
  forced410Requested: number;
  compactions: number;
  competingWrites: number;
  kills: number;
}

export interface FaultSchedule {
  /** The emulator's ids of the 500 and 429 failure rules (their counts are read from `faults.list()`). */
  readonly failure500: number;
  readonly failure429: number;
  readonly injected: Injected;
}

/**
 * Starts the faults on `ticker` against the operator's ServiceAccount: 2.5 % of its requests fail with 500 and 2.5 %
 * with 429 + Retry-After; every 0.5–2.5 s a resource's watches are dropped (and sometimes the next one gets a 410);
 * every 8–16 s the history is compacted; every 20–120 ms the competing writer writes. `random` is forked twice, in
 * that order.
 */
export function scheduleFaults(emulator: Emulator, ticker: Ticker, admin: KubeClient, world: World, random: SeededRandom): FaultSchedule {
  const failure500 = emulator.faults.failRequests({ match: { user: OPERATOR_USER }, rate: 0.025, code: 500 });
  const failure429 = emulator.faults.failRequests({ match: { user: OPERATOR_USER }, rate: 0.025, code: 429, retryAfterSeconds: 1 });
  const injected: Injected = { watchesEnded: 0, watchesReset: 0, forced410Requested: 0, compactions: 0, competingWrites: 0, kills: 0 };
  const faultRandom = random.fork();
  const watchResources = ['configmaps', 'secrets', 'customapps', 'deployments', 'services'];
  ticker.every(faultRandom, 500, 2500, () => {
    const resource = faultRandom.pick(watchResources);
    const mode = faultRandom.chance(0.5) ? 'end' : 'reset';
    const dropped = emulator.faults.dropWatches({ user: OPERATOR_USER, resource }, mode);
    if (mode === 'end') injected.watchesEnded += dropped;
    else injected.watchesReset += dropped;
    // Only where a watch was just dropped, so that the operator's next watch of that resource, which this tick runs
    // before (the emulator shares the soak's event loop), comes soon and is answered with the 410; always after the
    // first drop, so that every run forces one.
    if (dropped > 0 && (injected.forced410Requested === 0 || faultRandom.chance(0.4))) {
      emulator.faults.expireNextWatch({ user: OPERATOR_USER, resource });
      injected.forced410Requested += 1;
    }
  });
  ticker.every(faultRandom, 8000, 16000, () => {
    emulator.faults.compact();
    injected.compactions += 1;
  });
  const competitor = random.fork();
  // The competing writer: a burst of writes on a Deployment the operator is about to update (or any), so that the
  // operator's cached resourceVersion is stale when it writes; sometimes a drift (replicas) it must revert, or a
  // label on the CustomApp (which races the finalizer patch).
  ticker.every(competitor, 20, 120, async () => {
    const key = world.takeTouched() ?? competitor.pick([...world.live.keys()]);
    const [namespace, name] = key.split('/') as [string, string];
    for (let write = 0; write < 3; write += 1) {
      const roll = competitor.next();
      await (roll < 0.6
        ? admin.patch(DEPLOYMENTS, namespace, name, 'merge', {
            metadata: { annotations: { 'soak.example.com/touched': competitor.next().toString(36) } },
          })
        : roll < 0.85
          ? admin.patch(DEPLOYMENTS, namespace, name, 'merge', { spec: { replicas: 7 } })
          : admin.patch(CUSTOM_APPS, namespace, name, 'merge', {
              metadata: { labels: { 'soak.example.com/touched': competitor.next().toString(36).slice(2, 10) } },
            })
      ).then(
        () => {
          injected.competingWrites += 1;
        },
        (error: unknown) => {
          if (!tolerated(error)) throw error;
        },
      );
    }
  });
  return { failure500, failure429, injected };
}
