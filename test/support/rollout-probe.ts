// Watches a Deployment's pod-template annotation from the test side, to time how fast a change reaches it.
import type { KubeClient } from '../../operator/kube/client.js';
import { DEPLOYMENTS } from '../../operator/kube/resources.js';
import type { Deployment } from '../../operator/kube/objects.js';

/**
 * Opens a watch on one Deployment (from its current resourceVersion) and resolves with `performance.now()` of the
 * first event whose pod-template annotation `key` equals `value`. Call `ready` before making the change.
 */
export async function annotationProbe(
  admin: KubeClient,
  namespace: string,
  name: string,
  key: string,
  value: string,
  timeoutMs = 20_000,
): Promise<{ seen: Promise<number> }> {
  const current = await admin.get<Deployment>(DEPLOYMENTS, namespace, name);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const events = admin.watch<Deployment>(
    DEPLOYMENTS,
    { namespace, fieldSelector: `metadata.name=${name}`, resourceVersion: current.metadata.resourceVersion },
    controller.signal,
  );
  const seen = (async () => {
    try {
      for await (const event of events) {
        if (event.type !== 'ADDED' && event.type !== 'MODIFIED') continue;
        if (event.object.spec.template.metadata?.annotations?.[key] === value) return performance.now();
      }
      throw new Error(`deployment ${namespace}/${name}: ${key}=${value} not seen within ${timeoutMs} ms`);
    } finally {
      clearTimeout(timer);
      controller.abort();
    }
  })();
  return { seen };
}
