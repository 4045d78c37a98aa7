// The rollout governance's Prometheus metrics: rollouts in progress and queued, their outcomes, open flap breakers.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { RolloutTrigger } from '../../api/customapp.js';

/** What the gauges read at each scrape. */
export interface GovernanceView {
  /** Dependency-triggered rollouts occupying a slot of the budget. */
  inProgress(): number;
  /** CustomApps waiting in the budget's queue. */
  queued(): number;
  /** Flap breakers open now. */
  breakersOpen(): number;
}

/** The outcomes `customapp_rollouts_total` counts. */
export type RolloutOutcome = 'Succeeded' | 'Failed';

/**
 * Registers into `registry` (the operator's own, never the global one):
 * - `customapp_rollouts_in_progress`: dependency-triggered rollouts in progress (what `--max-concurrent-rollouts` bounds);
 * - `customapp_rollouts_queued`: CustomApps waiting for a slot;
 * - `customapp_rollouts_total{trigger,result}`: rollouts seen to end, by cause (ConfigMap, Secret, Spec) and result
 *   (Succeeded, Failed);
 * - `customapp_flap_breakers_open`: referenced objects whose flap breaker is open.
 * The gauges are computed when scraped; the counter is fed through the returned function.
 */
export function registerGovernanceMetrics(
  registry: Registry,
  view: GovernanceView,
): (trigger: RolloutTrigger, result: RolloutOutcome) => void {
  const registers = [registry];
  new Gauge({
    name: 'customapp_rollouts_in_progress',
    help: 'Rollouts caused by ConfigMap or Secret content that are in progress (bounded by --max-concurrent-rollouts)',
    registers,
    collect() {
      this.set(view.inProgress());
    },
  });
  new Gauge({
    name: 'customapp_rollouts_queued',
    help: 'CustomApps whose rollout waits for a slot of the rollout budget',
    registers,
    collect() {
      this.set(view.queued());
    },
  });
  new Gauge({
    name: 'customapp_flap_breakers_open',
    help: 'Referenced ConfigMaps and Secrets whose flap breaker is open (their rollouts are held)',
    registers,
    collect() {
      this.set(view.breakersOpen());
    },
  });
  const total = new Counter({
    name: 'customapp_rollouts_total',
    help: 'Rollouts seen to end, by trigger (ConfigMap, Secret, Spec) and result (Succeeded, Failed)',
    labelNames: ['trigger', 'result'],
    registers,
  });
  for (const trigger of ['ConfigMap', 'Secret', 'Spec'] as const) {
    for (const result of ['Succeeded', 'Failed'] as const) total.inc({ trigger, result }, 0);
  }
  return (trigger, result) => total.inc({ trigger, result });
}
