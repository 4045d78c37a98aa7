// static-list-all: every ConfigMap cached, and each event LISTs every CustomApp through the API to find who uses it.
import type { DependencyRef } from '../../operator/dependencies/source.js';
import type { CustomApp } from '../../operator/customapp/custom-app.js';
import { CUSTOM_APPS } from '../../operator/customapp/custom-app.js';
import { StaticSource } from './static-source.js';

/**
 * One watch on all ConfigMaps, with no index: each ConfigMap event (after the first list) LISTs every CustomApp
 * in the cluster through the API and scans their `spec.configMapName`. Events are mapped one at a time, in order,
 * as a single event handler would.
 */
export class StaticListAllSource extends StaticSource {
  protected async concerned(ref: DependencyRef): Promise<boolean> {
    const apps = await this.context.client.list<CustomApp>(CUSTOM_APPS);
    return apps.items.some((app) => app.metadata.namespace === ref.namespace && app.spec?.configMapName === ref.name);
  }
}
