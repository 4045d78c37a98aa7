// ClusterIP allocation for Services: the next free address of 10.0.0.0/16, like the apiserver's bitmap allocator.
import { ApiError } from '../errors.js';
import type { Store } from '../store.js';

/** Host addresses of the service range 10.0.0.0/16 (without the network and broadcast addresses). */
const SERVICE_RANGE_SIZE = 65_534;

export class ClusterIpAllocator {
  private nextIp = 2;

  constructor(private readonly store: Store) {}

  /**
   * The next free address of the service range 10.0.0.0/16 (10.0.0.1 is the kubernetes Service), like the
   * apiserver's bitmap allocator; the envtest harness serves the same range.
   */
  allocate(): string {
    const used = new Set<string>();
    for (const stored of this.store.collection('/services').objects.values()) {
      const ip = (stored.object.spec as Record<string, unknown> | undefined)?.clusterIP;
      if (typeof ip === 'string') used.add(ip);
    }
    const size = SERVICE_RANGE_SIZE;
    for (let i = 0; i < size; i++) {
      const host = ((this.nextIp + i - 1) % size) + 1;
      const candidate = `10.0.${host >> 8}.${host & 0xff}`;
      if (!used.has(candidate)) {
        this.nextIp = (host % size) + 1;
        return candidate;
      }
    }
    throw new ApiError(500, 'InternalError', 'Internal error occurred: failed to allocate a serviceIP: range is full');
  }
}
