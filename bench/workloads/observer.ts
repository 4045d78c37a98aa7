// The harness's raw watcher of the annotated Deployments: when each one's pod template changed, whoever changed it.
import type { Deployment } from '../../operator/kube/objects.js';
import { DeploymentHistory } from '../observers.js';

/**
 * Every Deployment's pod template as a raw watcher sees it. A participant rolls a workload by writing its template
 * (Reloader's `reloader.stakater.com/last-reloaded-from` annotation, our keyed content hashes), so a rollout is a change
 * of the template, whatever the participant wrote there; status and metadata writes are not.
 */
export class TemplateObserver extends DeploymentHistory<string, { readonly at: number }> {
  /** When the template of `namespace/name` changed after `since`, oldest first. */
  changesSince(key: string, since: number): number[] {
    return this.recordedSince(key, since).map((change) => change.at);
  }

  /** Records a change of the template since the one seen before (the initial list and a first sighting are not changes). */
  protected record(deployment: Deployment, type: 'listed' | 'ADDED' | 'MODIFIED' | 'DELETED', at: number): void {
    const key = `${deployment.metadata.namespace}/${deployment.metadata.name}`;
    const template = type === 'DELETED' ? '' : JSON.stringify(deployment.spec?.template ?? {});
    const previous = this.latest.get(key);
    this.latest.set(key, template);
    if (type === 'listed' || previous === undefined || previous === template) return;
    this.recordChange(key, { at }, true);
  }
}
