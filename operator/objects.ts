// The shapes of the built-in objects the operator writes (only the fields it reads or sets).
import type { KubeObject, ObjectMeta } from './kube/client.js';

export interface EnvFromSource {
  readonly configMapRef?: { readonly name: string; readonly optional?: boolean };
  readonly secretRef?: { readonly name: string; readonly optional?: boolean };
}

export interface Container {
  readonly name: string;
  readonly image: string;
  readonly envFrom?: readonly EnvFromSource[];
  readonly ports?: readonly {
    readonly name?: string;
    readonly containerPort: number;
    readonly hostPort?: number;
    readonly protocol?: string;
  }[];
  readonly resources?: {
    readonly requests?: Readonly<Record<string, string>>;
    readonly limits?: Readonly<Record<string, string>>;
  };
  readonly securityContext?: {
    readonly allowPrivilegeEscalation?: boolean;
    readonly capabilities?: { readonly drop?: readonly string[]; readonly add?: readonly string[] };
    readonly runAsNonRoot?: boolean;
    readonly seccompProfile?: { readonly type: string };
    readonly readOnlyRootFilesystem?: boolean;
  };
}

export interface PodTemplate {
  readonly metadata?: { readonly labels?: Readonly<Record<string, string>>; readonly annotations?: Readonly<Record<string, string>> };
  readonly spec: {
    readonly automountServiceAccountToken?: boolean;
    readonly enableServiceLinks?: boolean;
    readonly securityContext?: { readonly runAsNonRoot?: boolean; readonly seccompProfile?: { readonly type: string } };
    readonly containers: readonly Container[];
  };
}

export interface DeploymentCondition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason?: string;
  readonly message?: string;
}

/** apps/v1 Deployment. */
export interface Deployment extends KubeObject {
  readonly spec: {
    readonly replicas?: number;
    readonly selector: { readonly matchLabels: Readonly<Record<string, string>> };
    readonly template: PodTemplate;
  };
  readonly status?: {
    readonly observedGeneration?: number;
    readonly replicas?: number;
    readonly readyReplicas?: number;
    readonly availableReplicas?: number;
    readonly updatedReplicas?: number;
    readonly conditions?: readonly DeploymentCondition[];
  };
}

/** core/v1 Service. */
export interface Service extends KubeObject {
  readonly spec: {
    readonly type?: string;
    readonly selector?: Readonly<Record<string, string>>;
    readonly ports?: readonly {
      readonly name?: string;
      readonly port: number;
      readonly targetPort?: number | string;
      readonly protocol?: string;
    }[];
    readonly clusterIP?: string;
  };
}

/** core/v1 Event. */
export interface CoreEvent extends KubeObject {
  readonly involvedObject: {
    readonly apiVersion?: string;
    readonly kind?: string;
    readonly name?: string;
    readonly namespace?: string;
    readonly uid?: string;
    readonly resourceVersion?: string;
  };
  readonly reason: string;
  readonly message: string;
  readonly type: 'Normal' | 'Warning';
  readonly count?: number;
  readonly firstTimestamp?: string;
  readonly lastTimestamp?: string;
  readonly source?: { readonly component?: string; readonly host?: string };
  readonly reportingComponent?: string;
  readonly reportingInstance?: string;
}

/** coordination.k8s.io/v1 Lease. */
export interface Lease extends KubeObject {
  readonly spec?: {
    readonly holderIdentity?: string | null;
    readonly leaseDurationSeconds?: number;
    readonly acquireTime?: string | null;
    readonly renewTime?: string | null;
    readonly leaseTransitions?: number;
  };
}

/** A writable copy of object metadata. */
export type MutableMeta = { -readonly [K in keyof ObjectMeta]: ObjectMeta[K] };
