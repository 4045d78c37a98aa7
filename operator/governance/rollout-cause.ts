// Why a Deployment's pod template last changed, kept in the Deployment's `app.example.com/rollout` annotation.
import {
  DNS1123_SUBDOMAIN,
  DNS1123_SUBDOMAIN_MAX,
  DATA_KEY,
  MAX_PROJECTED,
  MAX_PROJECTED_KEYS,
  ROLLOUT_ANNOTATION,
  ROLLOUT_TRIGGERS,
  type RolloutTrigger,
} from '../../api/customapp.js';
import type { DependencyKind } from '../dependencies/source.js';
import type { Deployment } from '../kube/objects.js';

/** New content of a referenced object, rolled out (or waiting to be). */
export interface ContentChange {
  readonly kind: DependencyKind;
  readonly name: string;
  /** The hash the pods ran with; absent when they ran with none (the object was missing). */
  readonly from?: string;
  readonly to: string;
  /** The keys whose content changed, for an object read by its listed keys (`spec.configMaps[].keys`). */
  readonly keys?: readonly string[];
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
  /**
   * The Deployment's `metadata.generation` that the write of this template made: the generation it read plus one (the
   * write is conditional on the resourceVersion it read, so no other write came between), 1 for a creation. A status
   * that observed it tells this rollout's end apart from a later scale's (`rollout-progress.ts`). Absent from causes an
   * earlier version wrote: those are judged by kubectl's rules alone.
   */
  readonly templateGeneration?: number;
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
    ...(cause.templateGeneration !== undefined ? { templateGeneration: cause.templateGeneration } : {}),
    start: cause.start,
  });
}

/** RFC 3339, as the status schema's `format: date-time` takes it (`status.lastRollout.startTime`). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
/** A content hash as the operator writes them (hex), within the status schema's 256 characters. */
const HASH = /^[0-9a-f]{1,256}$/;
const NAME = new RegExp(DNS1123_SUBDOMAIN);
const KEY = new RegExp(DATA_KEY);
/**
 * Changes one cause may carry: the seed's ConfigMap and Secret, and each listed one (`spec.configMaps`,
 * `spec.secrets`). An object both named by the seed field and listed with keys changes through each view.
 */
export const MAX_CAUSE_CHANGES = 2 + 2 * MAX_PROJECTED;
/** How much of a refused value a problem quotes: a forged annotation can be as long as the API server allows. */
const QUOTED = 64;

function quote(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > QUOTED ? `${text.slice(0, QUOTED)}…` : text;
}

/** What is wrong with one content change (undefined when it fits the status schema). */
function changeProblem(value: unknown, at: number): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `changes[${at}] is not an object`;
  const change = value as Record<string, unknown>;
  if (change.kind !== 'ConfigMap' && change.kind !== 'Secret')
    return `changes[${at}].kind ${quote(change.kind)} is not ConfigMap or Secret`;
  if (typeof change.name !== 'string' || change.name.length > DNS1123_SUBDOMAIN_MAX || !NAME.test(change.name))
    return `changes[${at}].name ${quote(change.name)} is not a DNS-1123 subdomain`;
  for (const field of ['from', 'to'] as const) {
    const hash = change[field];
    if (hash === undefined && field === 'from') continue;
    if (typeof hash !== 'string' || !HASH.test(hash)) return `changes[${at}].${field} ${quote(hash)} is not a content hash`;
  }
  const keys = change.keys;
  if (keys === undefined) return undefined;
  if (
    !Array.isArray(keys) ||
    keys.length > MAX_PROJECTED_KEYS ||
    !keys.every((key) => typeof key === 'string' && key.length <= DNS1123_SUBDOMAIN_MAX && KEY.test(key))
  )
    return `changes[${at}].keys ${quote(keys)} is not a list of at most ${MAX_PROJECTED_KEYS} keys`;
  return undefined;
}

/** The annotation's value parsed, or what in it does not fit `status.lastRollout`'s schema. */
export type ParsedRolloutCause = { readonly cause: RolloutCause } | { readonly problem: string };

/**
 * Parses the `app.example.com/rollout` annotation. Anyone who may edit the Deployment can write it, and its fields go
 * into `status.lastRollout`, so each is checked against what the status schema accepts (the API server refuses the
 * whole status patch otherwise, at every reconcile): the trigger one of its enum; `start` an RFC 3339 time; the
 * generation a non-negative integer, the template generation a positive one; at most {@link MAX_CAUSE_CHANGES} changes, none twice, each naming a DNS-1123 subdomain with hex hashes (no
 * control character reaches a message or a log); a ConfigMap or Secret trigger with its change. Unknown fields are
 * left out. Anything else answers the problem, quoting at most 64 characters of the value.
 */
export function parseRolloutCause(raw: string): ParsedRolloutCause {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { problem: `not JSON: ${quote(raw)}` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { problem: `not a JSON object: ${quote(parsed)}` };
  const value = parsed as Record<string, unknown>;
  const trigger = value.trigger;
  if (typeof trigger !== 'string' || !(ROLLOUT_TRIGGERS as readonly string[]).includes(trigger))
    return { problem: `trigger ${quote(trigger)} is not one of ${ROLLOUT_TRIGGERS.join(', ')}` };
  if (typeof value.start !== 'string' || !RFC3339.test(value.start) || Number.isNaN(Date.parse(value.start)))
    return { problem: `start ${quote(value.start)} is not an RFC 3339 time` };
  const generation = value.generation;
  if (generation !== undefined && !(Number.isSafeInteger(generation) && (generation as number) >= 0))
    return { problem: `generation ${quote(generation)} is not an integer ≥ 0` };
  const templateGeneration = value.templateGeneration;
  if (templateGeneration !== undefined && !(Number.isSafeInteger(templateGeneration) && (templateGeneration as number) >= 1))
    return { problem: `templateGeneration ${quote(templateGeneration)} is not an integer ≥ 1` };
  const changes = value.changes ?? [];
  if (!Array.isArray(changes)) return { problem: `changes ${quote(changes)} is not an array` };
  if (changes.length > MAX_CAUSE_CHANGES) return { problem: `changes has ${changes.length} entries, more than ${MAX_CAUSE_CHANGES}` };
  for (const [at, change] of changes.entries()) {
    const problem = changeProblem(change, at);
    if (problem) return { problem };
  }
  const kinds = changes.map((change: ContentChange) => change.kind);
  const distinct = new Set(changes.map((change: ContentChange) => `${change.kind}/${change.name}/${change.to}`));
  if (distinct.size < changes.length) return { problem: 'changes names one change twice' };
  if (trigger !== 'Spec' && !kinds.includes(trigger as DependencyKind)) return { problem: `trigger ${trigger} has no ${trigger} change` };
  return {
    cause: {
      trigger: trigger as RolloutTrigger,
      changes: changes.map(({ kind, name, from, to, keys }: ContentChange) => ({
        kind,
        name,
        ...(from !== undefined ? { from } : {}),
        to,
        ...(keys !== undefined ? { keys } : {}),
      })),
      generation: generation as number | undefined,
      ...(templateGeneration !== undefined ? { templateGeneration: templateGeneration as number } : {}),
      start: value.start,
    },
  };
}

/**
 * Annotation values parsed lately, by value: a reconcile reads its Deployment's cause two or three times (the rollout's
 * progress, the budget, the status), and the parsed causes are read-only. Emptied when full, so it never holds more.
 */
const parsedCauses = new Map<string, ParsedRolloutCause>();
const PARSED_CAUSES_KEPT = 256;

/** {@link parseRolloutCause}, once per value while it stays in {@link parsedCauses}. */
function parsedCause(raw: string): ParsedRolloutCause {
  let parsed = parsedCauses.get(raw);
  if (parsed === undefined) {
    parsed = parseRolloutCause(raw);
    if (parsedCauses.size >= PARSED_CAUSES_KEPT) parsedCauses.clear();
    parsedCauses.set(raw, parsed);
  }
  return parsed;
}

/**
 * The cause recorded on `deployment`, or undefined when there is none or it does not fit (a Deployment made by an
 * earlier version, or an annotation someone edited): such a rollout is simply not known to be governed.
 */
export function rolloutCause(deployment: Deployment | undefined): RolloutCause | undefined {
  const raw = deployment?.metadata.annotations?.[ROLLOUT_ANNOTATION];
  if (!raw) return undefined;
  const parsed = parsedCause(raw);
  return 'cause' in parsed ? parsed.cause : undefined;
}

/** Why the cause annotation on `deployment` is ignored, when it is there and does not fit (see {@link parseRolloutCause}). */
export function rolloutCauseProblem(deployment: Deployment | undefined): string | undefined {
  const raw = deployment?.metadata.annotations?.[ROLLOUT_ANNOTATION];
  if (!raw) return undefined;
  const parsed = parsedCause(raw);
  return 'problem' in parsed ? parsed.problem : undefined;
}

/** `ConfigMap "app-config" 3f2a9c0d1e2b→e4e8a1b2c3d4`, each change, joined with `, `. */
export function describeChanges(changes: readonly ContentChange[]): string {
  return changes
    .map((change) => {
      const keys = change.keys && change.keys.length > 0 ? ` (key${change.keys.length > 1 ? 's' : ''} ${change.keys.join(', ')})` : '';
      return `${change.kind} "${change.name}"${keys} ${short(change.from)}→${short(change.to)}`;
    })
    .join(', ');
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
