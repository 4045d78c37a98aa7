// Before a new leader rebuilds the rollout governance: its owned Deployments as the API server holds them now, over a watch that may lag.
import { OWNED_SELECTOR } from '../customapp/labels.js';
import type { WritableCache } from '../cache/fresh-cache.js';
import type { KubeClient } from '../kube/client.js';
import type { Deployment } from '../kube/objects.js';
import { DEPLOYMENTS } from '../kube/resources.js';

/** The page size of the read: the informers' own (`watch/watcher.ts`). */
const PAGE_SIZE = 500;

/**
 * Reads every Deployment the operator owns (in each of `namespaces`, or all) with a LIST that names no
 * resourceVersion, which the API server answers from etcd, and serves each from `cache` as a written object is served
 * (`learned`: no reconcile of this process made it, so its watch event still queues its CustomApp). A standby's informer listed long ago and its watch may be behind (dropped traffic, an API server restarting): its
 * cache can still show a Deployment as the old leader found it before granting it a content rollout in its last moments.
 * The rebuild would then count no slot for that rollout, and the new leader would grant one more than the limit. The
 * cache serves the listed copy until its watch delivers that version or a newer one. `signal` aborts the read.
 * Answers how many were read.
 */
export async function readOwnedDeployments(
  client: Pick<KubeClient, 'list'>,
  cache: WritableCache<Deployment>,
  namespaces: readonly string[] | undefined,
  signal?: AbortSignal,
): Promise<number> {
  let read = 0;
  for (const namespace of namespaces ?? [undefined]) {
    let next: string | undefined;
    do {
      const page = await client.list<Deployment>(
        DEPLOYMENTS,
        {
          ...(namespace ? { namespace } : {}),
          labelSelector: OWNED_SELECTOR,
          limit: PAGE_SIZE,
          ...(next ? { continue: next } : {}),
        },
        signal,
      );
      for (const deployment of page.items) cache.learned(deployment);
      read += page.items.length;
      next = page.metadata.continue || undefined;
    } while (next);
  }
  return read;
}
