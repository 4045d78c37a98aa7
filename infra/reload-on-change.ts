// reloadOnChange: opts a cdk8s-plus Deployment, StatefulSet or DaemonSet into rollouts on ConfigMap and Secret changes, by the workload annotations.
import type { Duration } from 'cdk8s';
import type * as kplus from 'cdk8s-plus-27';
import { isObjectName, MAX_DEBOUNCE_SECONDS } from '../api/customapp.js';
import {
  MAX_WORKLOAD_REFERENCES,
  RELOAD_ANNOTATION,
  RELOAD_CONFIGMAPS_ANNOTATION,
  RELOAD_SECRETS_ANNOTATION,
  ROLLOUT_DEBOUNCE_ANNOTATION,
  ROLLOUT_PAUSED_ANNOTATION,
} from '../api/workload.js';

/** The objects whose content rolls the workload, each a cdk8s-plus object, a reference or a name. */
export interface ReloadObjects {
  /**
   * ConfigMaps (in the workload's namespace) that roll it.
   * @default none
   */
  readonly configMaps?: ReadonlyArray<kplus.IConfigMap | string>;
  /**
   * Secrets (in the workload's namespace) that roll it.
   * @default none
   */
  readonly secrets?: ReadonlyArray<kplus.ISecret | string>;
}

/** How the rollouts of a workload opted in with {@link reloadOnChange} are governed. */
export interface ReloadOptions {
  /**
   * Hold content rollouts; the latest content rolls once when unpaused.
   * @default false
   */
  readonly paused?: boolean;
  /**
   * Roll only once the objects have been quiet this long (whole seconds, at most an hour).
   * @default no debounce
   */
  readonly debounce?: Duration;
}

/** A cdk8s-plus workload the operator can roll. */
export type ReloadableWorkload = kplus.Deployment | kplus.StatefulSet | kplus.DaemonSet;

/**
 * Opts `workload` into rollouts when ConfigMaps or Secrets change: `'auto'` for every ConfigMap and Secret its pod
 * template uses (env, envFrom, volumes, projected sources, init containers), or the objects named. It writes the
 * annotations on the workload's own metadata (never the pod template, so opting in rolls nothing). The operator must
 * serve the kind: `workloads` of {@link CustomAppOperator} (its `--workloads`) names it.
 *
 * @throws when a name is not a DNS-1123 subdomain, when the lists name nothing, or when the options are out of range.
 */
export function reloadOnChange(workload: ReloadableWorkload, objects: ReloadObjects | 'auto' = 'auto', options: ReloadOptions = {}): void {
  const where = `reloadOnChange(${workload.node.path})`;
  if (objects === 'auto') {
    workload.metadata.addAnnotation(RELOAD_ANNOTATION, 'true');
  } else {
    const configMaps = names(where, 'configMaps', objects.configMaps);
    const secrets = names(where, 'secrets', objects.secrets);
    if (configMaps.length + secrets.length === 0) {
      throw new Error(`${where}: no ConfigMap and no Secret named; pass 'auto' for every one the pod template uses`);
    }
    if (configMaps.length + secrets.length > MAX_WORKLOAD_REFERENCES) {
      throw new Error(`${where}: ${configMaps.length + secrets.length} objects named, more than ${MAX_WORKLOAD_REFERENCES}`);
    }
    if (configMaps.length) workload.metadata.addAnnotation(RELOAD_CONFIGMAPS_ANNOTATION, configMaps.join(','));
    if (secrets.length) workload.metadata.addAnnotation(RELOAD_SECRETS_ANNOTATION, secrets.join(','));
  }
  if (options.paused !== undefined) workload.metadata.addAnnotation(ROLLOUT_PAUSED_ANNOTATION, String(options.paused));
  if (options.debounce !== undefined) {
    const seconds = options.debounce.toSeconds({ integral: false });
    if (!(Number.isInteger(seconds) && seconds >= 0 && seconds <= MAX_DEBOUNCE_SECONDS)) {
      throw new Error(`${where}: debounce ${seconds}s is not a whole number of seconds from 0 to ${MAX_DEBOUNCE_SECONDS}`);
    }
    workload.metadata.addAnnotation(ROLLOUT_DEBOUNCE_ANNOTATION, String(seconds));
  }
}

/** The names of the objects, each once, checked. */
function names(where: string, field: string, objects: ReadonlyArray<kplus.IResource | string> = []): string[] {
  const unique = [...new Set(objects.map((object) => (typeof object === 'string' ? object : object.name)))];
  for (const name of unique) {
    if (!isObjectName(name)) {
      throw new Error(`${where}: ${field} "${name}" is not a DNS-1123 subdomain (lower-case letters, digits, '-' and '.')`);
    }
  }
  return unique;
}
