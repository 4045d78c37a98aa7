// The status a CustomApp should have after a reconcile: a pure function of what the reconcile saw and did.
import type { CustomApp } from '../customapp/custom-app.js';
import type { Condition, CustomAppStatus, ObservedObject } from '../../api/customapp-status.js';
import type { DependencyKind } from '../dependencies/source.js';
import { parseHashKey, type RunningHashes } from '../podtemplate/hash-annotation.js';
import type { Deployment } from '../kube/objects.js';
import type { CurrentRollout } from '../governance/rollout-progress.js';
import { nextCondition, type ConditionDecision } from './conditions.js';
import { sameJson } from './drift.js';
import { notControlledMessage, REASONS } from './reasons.js';
import { type ProjectedDependency, type RolloutDependency, runningWith } from './desired-deployment.js';
import { blocking, type ProjectedView, projectionKey } from './projections.js';
import { lastRolloutStatus, pendingRolloutStatus, progressCondition, type WaitingRollout, waitingCondition } from './rollout-status.js';
import { keyedForStatus } from './secret-hash-migration.js';

/** What the reconcile knows of one referenced object. */
export type DependencyView =
  /** The spec does not reference one. */
  | { readonly phase: 'unreferenced' }
  | { readonly phase: 'missing'; readonly name: string }
  /** `unkeyedHash`: a Secret's plain SHA-256, only to recognise an older operator's annotation (never written). */
  | { readonly phase: 'present'; readonly name: string; readonly hash: string; readonly unkeyedHash?: string };

/** What the reconcile saw of the Deployment, after its writes. */
export type DeploymentView =
  | { readonly phase: 'owned'; readonly deployment: Deployment }
  /** Not created, because the rollout waits for a missing reference. */
  | { readonly phase: 'absent' }
  /** A Deployment of that name exists and is not controlled by this CustomApp. */
  | { readonly phase: 'notOwned' }
  /** The API server refused the desired Deployment (422), with its message. */
  | { readonly phase: 'invalid'; readonly message: string };

/** What the reconcile saw of the Service, after its writes. */
export type ServiceView =
  /** `spec.port` is not set: no Service is wanted (and none of ours is left). */
  | { readonly phase: 'unrequested' }
  /** The CustomApp's name cannot name a Service. */
  | { readonly phase: 'invalidName'; readonly message: string }
  /** A Service of that name exists and is not controlled by this CustomApp. */
  | { readonly phase: 'notOwned' }
  | { readonly phase: 'owned' };

/** Everything {@link desiredStatus} needs. */
export interface StatusInput {
  readonly app: CustomApp;
  readonly configMap: DependencyView;
  readonly secret: DependencyView;
  /** What is known of each object of `spec.configMaps` and `spec.secrets`. @default none listed */
  readonly projected?: readonly ProjectedView[];
  readonly deployment: DeploymentView;
  /**
   * What the Deployment now runs with, when this reconcile rolled it out (or found it up to date); undefined when
   * the rollout waits for a missing reference (the previous `observed*` and hashes stay).
   */
  readonly rolledOut?: {
    readonly configMap?: RolloutDependency;
    readonly secret?: RolloutDependency;
    readonly projected?: readonly ProjectedDependency[];
  };
  /** What became of the Service. @default unrequested */
  readonly service?: ServiceView;
  /** A rollout caused by ConfigMap or Secret content that waits (queued, flapping, paused, debouncing). @default none */
  readonly waiting?: WaitingRollout;
  /** The owned Deployment's latest rollout (`currentRollout`), when it records one. @default none */
  readonly rollout?: CurrentRollout;
  /** RFC 3339 time of this reconcile. */
  readonly now: string;
}

/**
 * `ConfigMapAvailable` or `SecretAvailable`, over the seed field's object and every listed one of that kind: False
 * while one keeps the pods from starting (missing, or lacking a listed key, and not optional), naming each; an
 * optional one missing is fine, and said.
 */
function dependencyCondition(
  type: 'ConfigMapAvailable' | 'SecretAvailable',
  kind: 'ConfigMap' | 'Secret',
  view: DependencyView,
  projected: readonly ProjectedView[],
): ConditionDecision {
  const found = kind === 'ConfigMap' ? REASONS.configMapFound : REASONS.secretFound;
  const notFound = kind === 'ConfigMap' ? REASONS.configMapNotFound : REASONS.secretNotFound;
  const listed = projected.filter((each) => each.kind === kind);
  if (listed.length > 0) {
    const problems = [
      ...(view.phase === 'missing' ? [`${kind} "${view.name}" not found`] : []),
      ...listed.flatMap((each) => blocking(each) ?? []),
    ];
    if (problems.length > 0) {
      const objectMissing = view.phase === 'missing' || listed.some((each) => !each.optional && each.phase === 'missing');
      const keyNotFound = kind === 'ConfigMap' ? REASONS.configMapKeyNotFound : REASONS.secretKeyNotFound;
      return {
        type,
        status: 'False',
        reason: objectMissing ? notFound : keyNotFound,
        message: `${problems.join('; ')}; the rollout is held until the pods can start`,
      };
    }
    const names = [
      ...(view.phase === 'present' ? [view.name] : []),
      ...listed.filter((each) => each.phase === 'present').map((each) => each.name),
    ];
    const absent = listed.filter((each) => each.phase === 'missing').map((each) => `"${each.name}"`);
    return {
      type,
      status: 'True',
      reason: found,
      message: [
        ...(names.length > 0 ? [`${kind} ${names.map((name) => `"${name}"`).join(', ')} found`] : []),
        ...(absent.length > 0 ? [`optional ${kind} ${absent.join(', ')} not found: the pods start without it`] : []),
      ].join('; '),
    };
  }
  switch (view.phase) {
    case 'unreferenced':
      return { type, status: 'True', reason: REASONS.notReferenced, message: `no ${kind} is referenced` };
    case 'missing':
      return { type, status: 'False', reason: notFound, message: `${kind} "${view.name}" not found; the rollout is held until it exists` };
    case 'present':
      return { type, status: 'True', reason: found, message: `${kind} "${view.name}" found (content ${view.hash.slice(0, 12)})` };
  }
}

function deploymentCondition(app: CustomApp, view: DeploymentView): ConditionDecision {
  const type = 'DeploymentAvailable';
  const name = app.metadata.name!;
  if (view.phase === 'notOwned') {
    return {
      type,
      status: 'False',
      reason: REASONS.deploymentNotOwned,
      message: notControlledMessage('Deployment', name),
    };
  }
  if (view.phase === 'invalid') {
    return { type, status: 'False', reason: REASONS.deploymentInvalid, message: view.message };
  }
  if (view.phase === 'absent') {
    return { type, status: 'False', reason: REASONS.rolloutHeld, message: `Deployment "${name}" is not created while the rollout is held` };
  }
  // Unset in the spec, the count is the Deployment's own (an HPA's or kubectl's), which the operator leaves alone.
  const wanted = app.spec.replicas ?? view.deployment.spec.replicas ?? 1;
  const ready = view.deployment.status?.readyReplicas ?? 0;
  const available = view.deployment.status?.conditions?.find((condition) => condition.type === 'Available');
  if (ready >= wanted) {
    return { type, status: 'True', reason: REASONS.replicasReady, message: `${ready}/${wanted} replicas ready` };
  }
  return {
    type,
    status: 'False',
    reason: REASONS.replicasNotReady,
    message: `${ready}/${wanted} replicas ready${available?.message ? ` (${available.message})` : ''}`,
  };
}

/** `ServiceAvailable`, only while `spec.port` asks for a Service. */
function serviceCondition(app: CustomApp, view: ServiceView): ConditionDecision | undefined {
  const type = 'ServiceAvailable';
  const name = app.metadata.name!;
  switch (view.phase) {
    case 'unrequested':
      return undefined;
    case 'invalidName':
      return { type, status: 'False', reason: REASONS.serviceNameInvalid, message: view.message };
    case 'notOwned':
      return {
        type,
        status: 'False',
        reason: REASONS.serviceNotOwned,
        message: notControlledMessage('Service', name),
      };
    case 'owned':
      return { type, status: 'True', reason: REASONS.serviceReady, message: `Service "${name}" serves port ${app.spec.port}` };
  }
}

function readyCondition(input: StatusInput, deployment: ConditionDecision, others: readonly ConditionDecision[]): ConditionDecision {
  const type = 'Ready';
  if (input.deployment.phase === 'notOwned' || input.deployment.phase === 'invalid') return { ...deployment, type };
  const missing = [input.configMap, input.secret].filter((view) => view.phase === 'missing');
  const blocked = (input.projected ?? []).flatMap((each) => blocking(each) ?? []);
  if (missing.length > 0 || blocked.length > 0) {
    const names = missing.map((view) => `"${(view as { name: string }).name}"`).join(' and ');
    const problems = [...(names ? [`${names} not found`] : []), ...blocked];
    return { type, status: 'False', reason: REASONS.rolloutHeld, message: `rollout held: ${problems.join('; ')}` };
  }
  // A Service that cannot exist is a spec problem for the user to fix: it says more than replicas not ready yet.
  const service = others.find((condition) => condition.type === 'ServiceAvailable' && condition.status !== 'True');
  if (service) return { type, status: 'False', reason: service.reason, message: service.message };
  // Then the rollouts: a failed one, one that waits, one in progress (old Ready pods do not make the app Ready).
  const progress = progressCondition(input.rollout);
  if (progress?.reason === REASONS.rolloutFailed) return progress;
  if (input.waiting) return waitingCondition(input.waiting);
  if (progress) return progress;
  const failing = others.find((condition) => condition.status !== 'True');
  if (failing) return { type, status: 'False', reason: failing.reason, message: failing.message };
  return { type, status: 'True', reason: REASONS.ready, message: 'the Deployment runs the current spec, ConfigMap and Secret' };
}

/**
 * The status after a reconcile: `observedGeneration`, the conditions (Ready, ConfigMapAvailable, SecretAvailable,
 * DeploymentAvailable), `readyReplicas`, `replicas` and `selector` (the scale subresource's), and, when the Deployment was rolled out, the references and content hashes
 * it runs with (while a rollout waits they keep describing the running Deployment); `lastRollout` from the
 * Deployment's rollout annotation and status, and `pendingRollout` while a dependency-triggered rollout waits. Ready is
 * True only once the Deployment's latest rollout succeeded and nothing waits.
 */
export function desiredStatus(input: StatusInput): CustomAppStatus {
  const { app, now } = input;
  const previous = app.status ?? {};
  const generation = app.metadata.generation;
  const deployment = deploymentCondition(app, input.deployment);
  const service = serviceCondition(app, input.service ?? { phase: 'unrequested' });
  const decisions = [
    dependencyCondition('ConfigMapAvailable', 'ConfigMap', input.configMap, input.projected ?? []),
    dependencyCondition('SecretAvailable', 'Secret', input.secret, input.projected ?? []),
    deployment,
    ...(service ? [service] : []),
  ];
  const ready = readyCondition(input, deployment, decisions);
  const conditions: Condition[] = [ready, ...decisions].map((decision) => nextCondition(previous.conditions, decision, generation, now));
  // What the pods run with: what was just rolled out, else what our Deployment says, else what the status said.
  const owned = input.deployment.phase === 'owned' ? input.deployment.deployment : undefined;
  const running = input.rolledOut ?? (owned ? runningWith(owned) : undefined);
  const status: CustomAppStatus = {
    observedGeneration: generation,
    observedConfigMapName: running ? running.configMap?.name : previous.observedConfigMapName,
    observedSecretName: running ? running.secret?.name : previous.observedSecretName,
    observedConfigMaps: running ? observedObjects(running, 'ConfigMap') : previous.observedConfigMaps,
    observedSecrets: running ? observedObjects(running, 'Secret') : previous.observedSecrets,
    configHash: running ? running.configMap?.hash : previous.configHash,
    secretHash: keyedForStatus(running ? running.secret?.hash : previous.secretHash, input.secret),
    readyReplicas: owned ? (owned.status?.readyReplicas ?? 0) : 0,
    replicas: owned ? (owned.status?.replicas ?? 0) : 0,
    selector: owned ? selectorString(owned.spec.selector) : undefined,
    lastRollout: lastRolloutStatus(previous.lastRollout, input.rollout, now),
    pendingRollout: pendingRolloutStatus(previous.pendingRollout, input.waiting, new Date(now)),
    conditions,
  };
  return withoutUndefined(status);
}

/**
 * A label selector as the API server writes one in a scale subresource (`labels.Set.String()`: `k=v` by sorted key,
 * comma-separated); the Deployments of CustomApps select by labels alone. Undefined for an empty selector.
 */
function selectorString(selector: Deployment['spec']['selector'] | undefined): string | undefined {
  const labels = Object.entries(selector?.matchLabels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return labels.length > 0 ? labels.map(([key, value]) => `${key}=${value}`).join(',') : undefined;
}

/**
 * The listed objects of `kind` the pods run with, sorted by name (the same list whether read from what was just rolled
 * out or from the Deployment), or undefined when none is listed.
 */
function observedObjects(
  running: { readonly projected?: readonly ProjectedDependency[] | RunningHashes },
  kind: DependencyKind,
): ObservedObject[] | undefined {
  const hashes: RunningHashes = Array.isArray(running.projected)
    ? new Map(running.projected.map((each: ProjectedDependency) => [projectionKey(each), each.hash]))
    : ((running.projected as RunningHashes | undefined) ?? new Map());
  const observed = [...hashes]
    .flatMap(([key, hash]) => {
      const parsed = parseHashKey(key);
      return parsed?.kind === kind ? [{ name: parsed.name, ...(hash === null ? {} : { hash }) }] : [];
    })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return observed.length > 0 ? observed : undefined;
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as T;
}

/**
 * The status after a reconcile failed for a reason the queue will retry (a 500, a 429, a timeout): `Ready` turns
 * False with reason ReconcileError and the error, so a stuck CustomApp says why; everything else, including
 * observedGeneration, stays as the last successful reconcile left it.
 */
export function failedStatus(app: CustomApp, message: string, now: string): CustomAppStatus {
  const status = app.status ?? {};
  const ready = nextCondition(
    status.conditions,
    { type: 'Ready', status: 'False', reason: REASONS.reconcileError, message },
    app.metadata.generation,
    now,
  );
  const conditions = status.conditions ?? [];
  return {
    ...status,
    conditions: conditions.some((condition) => condition.type === 'Ready')
      ? conditions.map((condition) => (condition.type === 'Ready' ? ready : condition))
      : [...conditions, ready],
  };
}

/** True when two statuses say the same (field order aside): what JSON.stringify writes of them, keys sorted, is equal. */
export function sameStatus(a: CustomAppStatus | undefined, b: CustomAppStatus | undefined): boolean {
  return sameJson(a ?? {}, b ?? {});
}
