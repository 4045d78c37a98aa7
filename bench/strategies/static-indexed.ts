// static-indexed: kubebuilder's pattern; every ConfigMap cached, each event mapped through the configMapName index.
import { refKey, type DependencyRef } from '../../operator/dependencies/source.js';
import { StaticSource } from './static-source.js';

/**
 * One watch on all ConfigMaps, and an in-memory index from ConfigMap to the CustomApps that name it (here, the
 * owners that `use` records: the same map a field index on `spec.configMapName` gives controller-runtime). An
 * unrelated ConfigMap costs a cache update and an index lookup, and no request.
 */
export class StaticIndexedSource extends StaticSource {
  protected async concerned(ref: DependencyRef): Promise<boolean> {
    return this.acquisitions.isAcquired(refKey(ref));
  }
}
