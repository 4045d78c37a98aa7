// Scrapes an operator's HTTPS /metrics as a Prometheus would: a bearer token, and the server certificate either
// verified against a CA (a mounted certificate) or not (the self-signed one); one fresh connection per request.
import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { METRICS_READER_ROLE } from '../../api/customapp.js';
import { SUBJECT_ACCESS_REVIEWS } from '../../operator/http/metrics-auth.js';
import type { KubeClient } from '../../operator/kube/client.js';
import type { KubeObject } from '../../operator/kube/objects.js';
import type { Resource } from '../../operator/kube/resources.js';
import type { TestCluster } from './targets.js';
import { createNamespace, eventually } from './operator-harness.js';

const CLUSTER_ROLE_BINDINGS: Resource = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  plural: 'clusterrolebindings',
  kind: 'ClusterRoleBinding',
  namespaced: false,
};

/** What one scrape answered. */
export interface ScrapeAnswer {
  readonly status: number;
  readonly body: string;
  /** The DER of the certificate the server presented. */
  readonly certificate: Buffer;
}

/** GETs `url` with `token` (none: no Authorization header), trusting `ca` only, or anything when no `ca` is given. */
export function scrapeHttps(url: string, options: { readonly token?: string; readonly ca?: string } = {}): Promise<ScrapeAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        agent: false,
        ...(options.ca ? { ca: options.ca } : { rejectUnauthorized: false }),
        headers: options.token === undefined ? {} : { authorization: `Bearer ${options.token}` },
      },
      (res) => {
        const certificate = (res.socket as TLSSocket).getPeerCertificate().raw;
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), certificate }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** A bearer token of the ServiceAccount `namespace/name` (created when missing), as its kubeconfig carries it. */
export async function serviceAccountToken(cluster: TestCluster, namespace: string, name: string): Promise<string> {
  const { kubeConfig } = await cluster.serviceAccount(namespace, name);
  const token = kubeConfig.getCurrentUser()?.token;
  if (!token) throw new Error(`no token in the kubeconfig of ServiceAccount ${namespace}/${name}`);
  return token;
}

/** Whether the API server's authorizer lets ServiceAccount `namespace/name` get /metrics now. */
export async function mayScrape(admin: KubeClient, namespace: string, name: string): Promise<boolean> {
  const review = await admin.create<KubeObject & { status?: { allowed?: boolean } }>(SUBJECT_ACCESS_REVIEWS, undefined, {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    metadata: {},
    spec: {
      user: `system:serviceaccount:${namespace}:${name}`,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
      nonResourceAttributes: { path: '/metrics', verb: 'get' },
    },
  } as KubeObject);
  return review.status?.allowed === true;
}

/**
 * Creates the ServiceAccount `namespace/name` (and its namespace), binds it to dist/'s `customapp-metrics-reader`
 * as a scraper's operator would, waits until the authorizer says so (a scrape before that would be denied, and the
 * denial cached by the operator for 30 s), and answers its token.
 */
export async function metricsReaderToken(cluster: TestCluster, admin: KubeClient, namespace: string, name: string): Promise<string> {
  await createNamespace(admin, namespace);
  const token = await serviceAccountToken(cluster, namespace, name);
  await admin.create(CLUSTER_ROLE_BINDINGS, undefined, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: `${namespace}-${name}-customapp-metrics` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: METRICS_READER_ROLE },
    subjects: [{ kind: 'ServiceAccount', name, namespace }],
  } as KubeObject);
  await eventually(`${namespace}/${name} may get /metrics`, () => mayScrape(admin, namespace, name), 10_000);
  return token;
}
