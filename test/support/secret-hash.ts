// The hash the operator writes for a Secret (keyed with the Secret's uid), computed from the Secret as the cluster holds it.
import type { HashableContent } from '../../operator/dependencies/content-hash.js';
import { keyedContentHash } from '../../operator/dependencies/keyed-hash.js';
import type { KubeClient } from '../../operator/kube/client.js';
import type { KubeObject } from '../../operator/kube/objects.js';
import { SECRETS } from '../../operator/kube/resources.js';

/** The keyed hash of a Secret object (its uid keys it). */
export function keyedSecretHash(secret: KubeObject & HashableContent): string {
  return keyedContentHash(secret.metadata.uid, secret);
}

/** The keyed hash of the Secret `namespace/name` as it is now in the cluster (one GET with the test's client). */
export async function secretHashIn(client: KubeClient, namespace: string, name: string): Promise<string> {
  return keyedSecretHash(await client.get<KubeObject & HashableContent>(SECRETS, namespace, name));
}
