// The workload API: the kinds `--workloads` names and the annotations by which a Deployment, StatefulSet, DaemonSet or Argo Rollout opts in, shared by infra/ and operator/.
import { GROUP } from './customapp.js';

/** The workload kinds the operator can serve, by the name `--workloads` takes (the resource's plural). */
export const WORKLOAD_KINDS = {
  deployments: { group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment' },
  statefulsets: { group: 'apps', version: 'v1', plural: 'statefulsets', kind: 'StatefulSet' },
  daemonsets: { group: 'apps', version: 'v1', plural: 'daemonsets', kind: 'DaemonSet' },
  /** Argo Rollouts' Rollout: served once discovery serves its CRD (installed before or after the operator starts). */
  rollouts: { group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts', kind: 'Rollout' },
} as const;
/** A name `--workloads` takes: `deployments`, `statefulsets`, `daemonsets` or `rollouts`. */
export type WorkloadResource = keyof typeof WORKLOAD_KINDS;
/** `Deployment`, `StatefulSet`, `DaemonSet` or `Rollout`. */
export type WorkloadKind = (typeof WORKLOAD_KINDS)[WorkloadResource]['kind'];

/** `"true"`: every ConfigMap and Secret the pod template uses rolls the workload. */
export const RELOAD_ANNOTATION = `${GROUP}/reload`;
/** A comma-separated list of ConfigMap names (in the workload's namespace): only these roll it. */
export const RELOAD_CONFIGMAPS_ANNOTATION = `${GROUP}/reload-configmaps`;
/** A comma-separated list of Secret names (in the workload's namespace): only these roll it. */
export const RELOAD_SECRETS_ANNOTATION = `${GROUP}/reload-secrets`;

/** stakater/Reloader's annotations, honoured with Reloader's meaning so that its users switch with no manifest change. */
export const RELOADER_AUTO_ANNOTATION = 'reloader.stakater.com/auto';
export const RELOADER_CONFIGMAPS_ANNOTATION = 'configmap.reloader.stakater.com/reload';
export const RELOADER_SECRETS_ANNOTATION = 'secret.reloader.stakater.com/reload';
/** Reloader's per-kind `auto`: only the ConfigMaps (or only the Secrets) the pod template uses. */
export const RELOADER_CONFIGMAPS_AUTO_ANNOTATION = 'configmap.reloader.stakater.com/auto';
export const RELOADER_SECRETS_AUTO_ANNOTATION = 'secret.reloader.stakater.com/auto';

/**
 * Workload annotation (on the workload's metadata, never its pod template: writing it rolls nothing): the content
 * hashes the workload's pods run with, per referenced object (`{"ConfigMap/app-config":"…","Secret/db":"…"}`, a
 * Secret's keyed, `null` for an object that was missing). Written once when the workload opts in (the content at first
 * sight is the baseline) and in the same write as every rollout of ours, so that a restart compares the content with
 * what the pods run with and rolls only what changed, even while the operator was down.
 */
export const RUNNING_HASHES_ANNOTATION = `${GROUP}/running-hashes`;
/**
 * Pod-template annotation written by a rollout of ours, with the same hashes: the template change that rolls the pods,
 * and on every ReplicaSet and Pod the content it was started for.
 */
export const TEMPLATE_HASHES_ANNOTATION = `${GROUP}/dependency-hashes`;
/**
 * Workload annotation: the last rollout of ours and its outcome (JSON: trigger, object, from and to hashes, the
 * generation the template write made, start, result InProgress, Succeeded or Failed, completion), since a workload has
 * no status of ours.
 */
export const LAST_ROLLOUT_ANNOTATION = `${GROUP}/last-rollout`;
/** `"true"`: content rollouts wait (as a CustomApp's `spec.rollout.paused`); the latest content rolls once unpaused. */
export const ROLLOUT_PAUSED_ANNOTATION = `${GROUP}/rollout-paused`;
/** Seconds the referenced objects must have been quiet before a content rollout (as `spec.rollout.debounceSeconds`). */
export const ROLLOUT_DEBOUNCE_ANNOTATION = `${GROUP}/rollout-debounce-seconds`;

/** At most this many objects one workload references: a longer list is refused with an Event (a 10k-name annotation). */
export const MAX_WORKLOAD_REFERENCES = 256;

/** Reloader's exclusions: ConfigMaps (Secrets) that never roll the workload, whatever else its annotations say. */
export const RELOADER_CONFIGMAPS_EXCLUDE_ANNOTATION = 'configmaps.exclude.reloader.stakater.com/reload';
export const RELOADER_SECRETS_EXCLUDE_ANNOTATION = 'secrets.exclude.reloader.stakater.com/reload';
