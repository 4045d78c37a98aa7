// What the workload caches keep of a Deployment, StatefulSet or DaemonSet: only the fields the workload reconcile reads.
import { LAST_ROLLOUT_ANNOTATION, RELOAD_ANNOTATION, RUNNING_HASHES_ANNOTATION } from '../../api/workload.js';
import type { Container, PodTemplate } from '../kube/objects.js';
import { lastWorkloadRollout } from './last-rollout.js';
import { hasOptIn, READ_ANNOTATIONS } from './reload-annotations.js';
import type { Workload } from './workload.js';

const KEPT_ANNOTATIONS = new Set([...READ_ANNOTATIONS, RUNNING_HASHES_ANNOTATION, LAST_ROLLOUT_ANNOTATION]);

function keptAnnotations(annotations: Readonly<Record<string, string>> | undefined): Record<string, string> | undefined {
  if (!annotations) return undefined;
  // Unknown `app.example.com/reload-…` keys too: the reconcile reports them (a kind misspelled or not served).
  const kept = Object.entries(annotations).filter(([key]) => KEPT_ANNOTATIONS.has(key) || key.startsWith(RELOAD_ANNOTATION));
  return kept.length > 0 ? Object.fromEntries(kept) : undefined;
}

/** A container's references only: envFrom, and the env variables whose value comes from a ConfigMap or Secret key. */
function references(container: Container): Container {
  const env = container.env?.filter((variable) => variable.valueFrom?.configMapKeyRef || variable.valueFrom?.secretKeyRef);
  return {
    name: container.name,
    ...(container.envFrom?.length ? { envFrom: container.envFrom } : {}),
    ...(env?.length ? { env } : {}),
  };
}

/** The template's references (`podtemplate/references.ts` reads them) and its opt-in annotations. */
function trimTemplate(template: PodTemplate): PodTemplate {
  const spec = template.spec ?? { containers: [] };
  const volumes = spec.volumes?.filter((volume) => volume.configMap || volume.secret || volume.projected);
  const annotations = keptAnnotations(template.metadata?.annotations);
  return {
    ...(annotations ? { metadata: { annotations } } : {}),
    spec: {
      containers: (spec.containers ?? []).map(references),
      ...(spec.initContainers?.length ? { initContainers: spec.initContainers.map(references) } : {}),
      ...(volumes?.length ? { volumes } : {}),
    },
  };
}

/**
 * Keeps of a workload what the reconcile reads: its identity and resourceVersion (the guard of its writes), its
 * generation, its controller ownerReference (a CustomApp's Deployment is the CustomApp's), the annotations of ours and
 * Reloader's, the pod template's ConfigMap and Secret references, the replicas, the update strategy, the pause
 * (`kubectl rollout pause`, `kubectl argo rollouts pause`), an Argo Rollout's `workloadRef`, and the status only while
 * a rollout of ours is in progress (to see it end); of a workload that did not opt in, no references at all. Everything
 * else (images, probes, resources, labels, managedFields) is dropped: the operator watches every workload of the kinds
 * `--workloads` names, opted in or not, and writes them with a merge patch, never from a cached copy.
 */
export function trimWorkload<T extends Workload>(workload: T): T {
  const { name, namespace, uid, resourceVersion, generation, annotations, deletionTimestamp, ownerReferences } = workload.metadata;
  const controller = ownerReferences?.filter((reference) => reference.controller === true);
  const kept = keptAnnotations(annotations);
  // The API server never serves a workload without them; a transform that threw would end the informer's stream.
  const spec = (workload.spec ?? {}) as Partial<Workload['spec']> & {
    replicas?: number;
    updateStrategy?: unknown;
    paused?: boolean;
    workloadRef?: { kind?: string; name?: string };
  };
  const template: PodTemplate = spec.template ?? { spec: { containers: [] } };
  const rolling = lastWorkloadRollout(workload)?.result === 'InProgress';
  // A workload that did not opt in needs no references: annotating it is an update, which brings them.
  const optedIn = hasOptIn(annotations) || hasOptIn(template.metadata?.annotations);
  return {
    ...(workload.apiVersion ? { apiVersion: workload.apiVersion } : {}),
    ...(workload.kind ? { kind: workload.kind } : {}),
    metadata: {
      name,
      namespace,
      uid,
      resourceVersion,
      ...(generation !== undefined ? { generation } : {}),
      ...(deletionTimestamp ? { deletionTimestamp } : {}),
      ...(kept ? { annotations: kept } : {}),
      ...(controller?.length ? { ownerReferences: controller } : {}),
    },
    spec: {
      ...(spec.replicas !== undefined ? { replicas: spec.replicas } : {}),
      ...(spec.updateStrategy !== undefined ? { updateStrategy: spec.updateStrategy } : {}),
      // A paused rollout occupies no slot of the budget: without it, a paused Deployment would look rolling for ever.
      ...(spec.paused ? { paused: true } : {}),
      // An Argo Rollout that runs another workload's pod template: the reconcile says which to annotate instead.
      ...(spec.workloadRef ? { workloadRef: { kind: spec.workloadRef.kind, name: spec.workloadRef.name } } : {}),
      template: optedIn ? trimTemplate(template) : { spec: { containers: [] } },
    },
    ...(rolling && workload.status ? { status: workload.status } : {}),
  } as unknown as T;
}
