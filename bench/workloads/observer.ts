// The harness's raw watcher of the annotated Deployments: when each one's pod template changed, whoever changed it.
import { DEPLOYMENTS } from '../../operator/kube/resources.js';
import type { Deployment } from '../../operator/kube/objects.js';
import type { KubeClient } from '../../operator/kube/client.js';
import { type Clock, WatchObserver } from '../observers.js';

/**
 * Every Deployment's pod template as a raw watcher sees it. A participant rolls a workload by writing its template
 * (Reloader's `reloader.stakater.com/last-reloaded-from` annotation, our keyed content hashes), so a rollout is a change
 * of the template, whatever the participant wrote there; status and metadata writes are not.
 */
export class TemplateObserver extends WatchObserver<Deployment> {
  private readonly latest = new Map<string, string>();
  private readonly changes = new Map<string, number[]>();
  /** Template changes of all Deployments together, since {@link start} (the initial list is not a change). */
  changeCount = 0;

  constructor(client: KubeClient, now: Clock) {
    super(client, DEPLOYMENTS, now, true);
  }

  /** When the template of `namespace/name` changed after `since`, oldest first. */
  changesSince(key: string, since: number): number[] {
    return (this.changes.get(key) ?? []).filter((at) => at > since);
  }

  protected record(deployment: Deployment, type: 'listed' | 'ADDED' | 'MODIFIED' | 'DELETED', at: number): void {
    const key = `${deployment.metadata.namespace}/${deployment.metadata.name}`;
    const template = type === 'DELETED' ? '' : JSON.stringify(deployment.spec?.template ?? {});
    const previous = this.latest.get(key);
    this.latest.set(key, template);
    if (type === 'listed' || previous === undefined || previous === template) return;
    let history = this.changes.get(key);
    if (!history) this.changes.set(key, (history = []));
    history.push(at);
    this.changeCount += 1;
  }
}
