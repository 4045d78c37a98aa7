// The operator's Deployment: hardened, probed, leader-elected, with real resource requests.
import { Construct } from 'constructs';
import { ApiObject, Duration, JsonPatch, Size } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { OPERATOR_NAME } from '../api/customapp.js';

/** The image the operator Deployment runs unless told otherwise (built by the repository's Dockerfile). */
export const DEFAULT_OPERATOR_IMAGE = 'ghcr.io/customapp/customapp-operator:v0.1.0';
/** Port of /metrics (HTTPS, authenticated and authorized; controller-runtime's and kubebuilder's 8443). */
export const METRICS_PORT = 8443;
/** Port of /healthz and /readyz. */
export const HEALTH_PORT = 8081;
/** How long the kubelet waits for each health probe's answer. */
export const PROBE_TIMEOUT_SECONDS = 5;
/** The non-root user and group of the image (the same as the Dockerfile's). */
export const OPERATOR_UID = 65532;

/** Properties of {@link OperatorDeployment}. */
export interface OperatorDeploymentProps {
  /** The namespace to run in, and where its leader-election Lease lives (the only namespace its Role lets it write one). */
  readonly namespace: string;
  /** The ServiceAccount to run as (its token is mounted: the operator talks to the API). */
  readonly serviceAccountName: string;
  /**
   * The operator image.
   * @default DEFAULT_OPERATOR_IMAGE
   */
  readonly image?: string;
  /**
   * Number of replicas; more than one is safe because of leader election.
   * @default 1
   */
  readonly replicas?: number;
  /**
   * Extra arguments after the defaults (for example `--log-level=debug`).
   * @default []
   */
  readonly extraArgs?: readonly string[];
  /** Labels on the Deployment and its pods. @default {} */
  readonly labels?: Readonly<Record<string, string>>;
  /**
   * Serve /metrics on :8443; `false` turns the endpoint off (`--metrics-bind-address=0`) and leaves out its port.
   * @default true
   */
  readonly metrics?: boolean;
  /**
   * The container's requests and limits. The default memory limit leaves room for 10k CustomApps: the operator's
   * RSS grows with the CustomApps and Deployments it caches, and bench/README.md gives it as measured by
   * `npm run bench` at 1k and 10k (a little over 350 MiB at 10k). Raise it for more.
   * @default {@link DEFAULT_OPERATOR_RESOURCES}
   */
  readonly resources?: kplus.ContainerResources;
}

/** CPU 50m request / 500m limit, memory 128Mi request / 512Mi limit. */
export const DEFAULT_OPERATOR_RESOURCES: kplus.ContainerResources = {
  cpu: { request: kplus.Cpu.millis(50), limit: kplus.Cpu.millis(500) },
  memory: { request: Size.mebibytes(128), limit: Size.mebibytes(512) },
};

/**
 * The operator's Deployment. It runs with `--leader-elect` on a Lease in its own namespace, serves /metrics over HTTPS on :8443 (a self-signed
 * certificate unless `extraArgs` passes `--metrics-cert-dir` with a mounted one) and the probes over HTTP on :8081,
 * requests 50m CPU / 128Mi (limits 500m / 512Mi), and satisfies the restricted Pod Security Standard.
 */
export class OperatorDeployment extends Construct {
  public readonly deployment: kplus.Deployment;

  constructor(scope: Construct, id: string, props: OperatorDeploymentProps) {
    super(scope, id);
    const labels = { ...props.labels };
    const metrics = props.metrics ?? true;
    this.deployment = new kplus.Deployment(this, 'Resource', {
      metadata: { name: OPERATOR_NAME, namespace: props.namespace, labels },
      podMetadata: { labels },
      select: false,
      replicas: props.replicas ?? 1,
      serviceAccount: kplus.ServiceAccount.fromServiceAccountName(this, 'ServiceAccount', props.serviceAccountName),
      automountServiceAccountToken: true,
      terminationGracePeriod: Duration.seconds(30),
      securityContext: { ensureNonRoot: true, user: OPERATOR_UID, group: OPERATOR_UID },
      containers: [
        {
          name: 'operator',
          image: props.image ?? DEFAULT_OPERATOR_IMAGE,
          imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT,
          args: [
            '--leader-elect',
            `--leader-election-namespace=${props.namespace}`,
            `--metrics-bind-address=${metrics ? `:${METRICS_PORT}` : '0'}`,
            `--health-probe-bind-address=:${HEALTH_PORT}`,
            ...(props.extraArgs ?? []),
          ],
          ports: [...(metrics ? [{ name: 'metrics', number: METRICS_PORT }] : []), { name: 'health', number: HEALTH_PORT }],
          envVariables: {
            POD_NAMESPACE: kplus.EnvValue.fromFieldRef(kplus.EnvFieldPaths.POD_NAMESPACE),
            POD_NAME: kplus.EnvValue.fromFieldRef(kplus.EnvFieldPaths.POD_NAME),
          },
          // The probes are answered on the event loop that also parses the lists: under the CPU limit a cold start's
          // busy second takes longer, so the kubelet's default of 1 s per probe could restart a replica that is working.
          // Three failed probes of 5 s still find a stuck process within 35 s.
          liveness: kplus.Probe.fromHttpGet('/healthz', {
            port: HEALTH_PORT,
            initialDelaySeconds: Duration.seconds(5),
            periodSeconds: Duration.seconds(10),
            timeoutSeconds: Duration.seconds(PROBE_TIMEOUT_SECONDS),
          }),
          readiness: kplus.Probe.fromHttpGet('/readyz', {
            port: HEALTH_PORT,
            initialDelaySeconds: Duration.seconds(2),
            periodSeconds: Duration.seconds(5),
            timeoutSeconds: Duration.seconds(PROBE_TIMEOUT_SECONDS),
          }),
          resources: props.resources ?? DEFAULT_OPERATOR_RESOURCES,
          securityContext: {
            ensureNonRoot: true,
            user: OPERATOR_UID,
            group: OPERATOR_UID,
            privileged: false,
            readOnlyRootFilesystem: true,
            allowPrivilegeEscalation: false,
          },
        },
      ],
    });
    this.deployment.select(kplus.LabelSelector.of({ labels: { 'app.kubernetes.io/name': OPERATOR_NAME } }));
    // cdk8s-plus-27 has no seccompProfile, and its Capability enum has no 'ALL' (restricted Pod Security needs
    // both), so they are patched in.
    ApiObject.of(this.deployment).addJsonPatch(
      JsonPatch.add('/spec/template/spec/securityContext/seccompProfile', { type: 'RuntimeDefault' }),
      JsonPatch.add('/spec/template/spec/containers/0/securityContext/capabilities', { drop: ['ALL'] }),
    );
  }
}
