// The app.kubernetes.io/* labels and the controller ownerReference that mark the objects a CustomApp owns.
import { createHash } from 'node:crypto';
import { API_VERSION, GROUP, KIND, OPERATOR_NAME } from '../../api/customapp.js';
import type { KubeObject, ObjectMeta, OwnerReference } from '../kube/objects.js';

/** `app.kubernetes.io/managed-by` on every object the operator creates; the owned-object informers select on it. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
/** The label selector of the owned Deployments and Services. */
export const OWNED_SELECTOR = `${MANAGED_BY_LABEL}=${OPERATOR_NAME}`;

/** A label value is at most 63 characters. */
const LABEL_VALUE_MAX = 63;

/**
 * `name` as a label value: itself when it fits in 63 characters, else its first 50 characters and 12 hex digits of
 * its SHA-256 (a CustomApp name may be a 253-character DNS subdomain).
 */
export function labelValue(name: string): string {
  if (name.length <= LABEL_VALUE_MAX) return name;
  const digest = createHash('sha256').update(name).digest('hex').slice(0, 12);
  return `${name.slice(0, 50).replace(/[^a-z0-9]+$/, '')}-${digest}`;
}

/** The labels that select a CustomApp's pods (immutable in a Deployment once created). */
export function selectorLabels(appName: string): Record<string, string> {
  return {
    'app.kubernetes.io/name': labelValue(appName),
    'app.kubernetes.io/instance': labelValue(appName),
  };
}

/** The labels of every object a CustomApp owns. */
export function ownedLabels(appName: string): Record<string, string> {
  return {
    ...selectorLabels(appName),
    'app.kubernetes.io/component': 'app',
    'app.kubernetes.io/part-of': labelValue(appName),
    [MANAGED_BY_LABEL]: OPERATOR_NAME,
  };
}

/** The controller ownerReference to a CustomApp: garbage collection deletes the child with it. */
export function controllerReference(owner: KubeObject): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    name: owner.metadata.name!,
    uid: owner.metadata.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The controlling CustomApp's name, when `object` has a controller ownerReference to a CustomApp. */
export function controllingAppName(object: KubeObject): string | undefined {
  const reference = object.metadata.ownerReferences?.find((ref) => ref.controller === true);
  return reference && reference.kind === KIND && reference.apiVersion.split('/')[0] === GROUP ? reference.name : undefined;
}

/** True when `object` is controlled by exactly this CustomApp (same uid: a recreated app does not own the old child). */
export function isControlledBy(object: KubeObject, owner: KubeObject): boolean {
  return object.metadata.ownerReferences?.some((ref) => ref.controller === true && ref.uid === owner.metadata.uid) ?? false;
}

/** The metadata of an object a CustomApp owns: its name and namespace, the owned labels, the controller reference. */
export function ownedMetadata(app: KubeObject): ObjectMeta {
  const name = app.metadata.name!;
  return { name, namespace: app.metadata.namespace, labels: ownedLabels(name), ownerReferences: [controllerReference(app)] };
}
