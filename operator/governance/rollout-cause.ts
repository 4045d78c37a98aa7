// Why a Deployment's pod template last changed, kept in the Deployment's `app.example.com/rollout` annotation.
import { ROLLOUT_ANNOTATION, type RolloutTrigger } from '../../infra/customapp-api.js';
import type { DependencyKind } from '../deps/source.js';
import type { Deployment } from '../kube/objects.js';

/** New content of a referenced object, rolled out (or waiting to be). */
export interface ContentChange {
  readonly kind: DependencyKind;
  readonly name: string;
  /** The hash the pods ran with; absent when they ran with none (the object was missing). */
  readonly from?: string;
  readonly to: string;
}

/**
 * The cause of a Deployment's last pod-template change. A `Spec` rollout may carry content changes too (a spec change
 * rolls the latest content along); a ConfigMap or Secret rollout carries at least one.
 */
export interface RolloutCause {
  readonly trigger: RolloutTrigger;
  readonly changes: readonly ContentChange[];
  /** The CustomApp's generation the template was built from. */
  readonly generation?: number;
  /** RFC 3339: when the operator wrote the template. */
  readonly start: string;
}

/** True for a rollout the budget governs: one caused by ConfigMap or Secret content, not by the spec. */
export function isGoverned(cause: RolloutCause | undefined): boolean {
  return cause !== undefined && cause.trigger !== 'Spec';
}

/** The annotation's value for `cause` (compact JSON; the hashes are the annotations' own, never content). */
export function encodeRolloutCause(cause: RolloutCause): string {
  return JSON.stringify({
    trigger: cause.trigger,
    ...(cause.changes.length > 0 ? { changes: cause.changes } : {}),
    ...(cause.generation !== undefined ? { generation: cause.generation } : {}),
    start: cause.start,
  });
}

const TRIGGERS: readonly string[] = ['ConfigMap', 'Secret', 'Spec'];

function isChange(value: unknown): value is ContentChange {
  const change = value as Partial<ContentChange> | null;
  return (
    typeof change === 'object' &&
    change !== null &&
    (change.kind === 'ConfigMap' || change.kind === 'Secret') &&
    typeof change.name === 'string' &&
    typeof change.to === 'string' &&
    (change.from === undefined || typeof change.from === 'string')
  );
}

/**
 * The cause recorded on `deployment`, or undefined when there is none or it does not parse (a Deployment made by an
 * earlier version, or an annotation someone edited): such a rollout is simply not known to be governed.
 */
export function rolloutCause(deployment: Deployment | undefined): RolloutCause | undefined {
  const raw = deployment?.metadata.annotations?.[ROLLOUT_ANNOTATION];
  if (!raw) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return undefined;
  }
  const value = parsed as { trigger?: unknown; changes?: unknown; generation?: unknown; start?: unknown } | null;
  if (typeof value !== 'object' || value === null) return undefined;
  if (typeof value.trigger !== 'string' || !TRIGGERS.includes(value.trigger) || typeof value.start !== 'string') return undefined;
  const changes = value.changes ?? [];
  if (!Array.isArray(changes) || !changes.every(isChange)) return undefined;
  if (value.generation !== undefined && typeof value.generation !== 'number') return undefined;
  return { trigger: value.trigger as RolloutTrigger, changes, generation: value.generation, start: value.start };
}

/** `ConfigMap "app-config" 3f2a9c0d1e2b→e4e8a1b2c3d4`, each change, joined with `, `. */
export function describeChanges(changes: readonly ContentChange[]): string {
  return changes.map((change) => `${change.kind} "${change.name}" ${short(change.from)}→${short(change.to)}`).join(', ');
}

/** What a cause says, for messages: the content changes, or the spec generation. */
export function describeCause(cause: RolloutCause): string {
  if (cause.trigger !== 'Spec') return describeChanges(cause.changes);
  const spec = cause.generation !== undefined ? `spec generation ${cause.generation}` : 'spec';
  return cause.changes.length > 0 ? `${spec} (with ${describeChanges(cause.changes)})` : spec;
}

function short(hash: string | undefined): string {
  return hash ? hash.slice(0, 12) : 'none';
}
