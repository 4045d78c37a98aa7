// The workload participants' load: one Deployment per planned app, opted in by annotation, using its ConfigMap by envFrom.
import type { KubeObject } from '../../operator/kube/objects.js';
import { FIRST_IMAGE, type PlannedApp } from '../load.js';

/** Reloader's own opt-in, which our workload mode honours too: roll on every ConfigMap and Secret the template uses. */
export const RELOADER_AUTO_ANNOTATION = 'reloader.stakater.com/auto';

/**
 * An apps/v1 Deployment for `app`, annotated `reloader.stakater.com/auto: "true"`, whose one container takes its
 * ConfigMap (the app's own, or the namespace's shared one) as environment variables through envFrom. Nothing runs
 * its pods (envtest and the emulator have no controllers): a participant's work shows only in the pod template.
 */
export function workloadObject(app: PlannedApp): KubeObject & { spec: Record<string, unknown> } {
  const labels = { 'app.kubernetes.io/name': app.name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: app.name, namespace: app.namespace, labels, annotations: { [RELOADER_AUTO_ANNOTATION]: 'true' } },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: 'app', image: FIRST_IMAGE, envFrom: [{ configMapRef: { name: app.configMapName } }] }] },
      },
    },
  };
}
