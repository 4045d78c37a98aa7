// The Service a CustomApp with a port should have: a pure function of the CustomApp.
import type { CustomApp } from '../customapp/custom-app.js';
import type { Service } from '../kube/objects.js';
import { ownedMetadata, selectorLabels } from '../customapp/labels.js';

/** A Service name is a DNS-1035 label: at most 63 characters, a letter first, no dots. */
const DNS1035_LABEL = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Why a CustomApp's name cannot name a Service, or undefined when it can. */
export function serviceNameProblem(name: string): string | undefined {
  return DNS1035_LABEL.test(name)
    ? undefined
    : `"${name}" is not a DNS-1035 label (at most 63 characters, a letter first, no dots), so no Service can carry it`;
}

/**
 * The desired ClusterIP Service, or undefined when `spec.port` is not set: named after the CustomApp, owned by it,
 * port `http` → the container's port.
 */
export function desiredService(app: CustomApp): Service | undefined {
  const port = app.spec.port;
  if (!port) return undefined;
  const name = app.metadata.name!;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: ownedMetadata(app),
    spec: {
      type: 'ClusterIP',
      selector: selectorLabels(name),
      ports: [{ name: 'http', port, targetPort: port, protocol: 'TCP' }],
    },
  };
}
