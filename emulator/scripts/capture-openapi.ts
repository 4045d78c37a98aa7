// Captures the OpenAPI v3 schemas of the built-in kinds the emulator serves from a real kube-apiserver (envtest).
//
// Usage: tsx emulator/scripts/capture-openapi.ts                      (starts an envtest for the capture)
//        tsx emulator/scripts/capture-openapi.ts --server https://127.0.0.1:6443 --token <admin token>
// Writes emulator/openapi/builtin-schemas.json: every schema reachable from the served kinds, without
// descriptions (they are bulky), keeping the x-kubernetes-* extensions that strategic merge patch, server-side
// apply and field validation read. Regenerate it when the envtest version changes; never edit it by hand.
import { request } from 'node:https';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startEnvtest } from '../../envtest/harness.js';

const groupVersions = [
  'api/v1',
  'apis/apps/v1',
  'apis/rbac.authorization.k8s.io/v1',
  'apis/coordination.k8s.io/v1',
  'apis/events.k8s.io/v1',
  'apis/apiextensions.k8s.io/v1',
  'apis/authorization.k8s.io/v1',
  'apis/authentication.k8s.io/v1',
  'apis/autoscaling/v1',
  'apis/networking.k8s.io/v1',
];

const rootSchemas = [
  'io.k8s.api.core.v1.Namespace',
  'io.k8s.api.core.v1.ConfigMap',
  'io.k8s.api.core.v1.Secret',
  'io.k8s.api.core.v1.Service',
  'io.k8s.api.core.v1.Event',
  'io.k8s.api.core.v1.ServiceAccount',
  'io.k8s.api.events.v1.Event',
  'io.k8s.api.apps.v1.Deployment',
  'io.k8s.api.apps.v1.StatefulSet',
  'io.k8s.api.apps.v1.DaemonSet',
  'io.k8s.api.rbac.v1.Role',
  'io.k8s.api.rbac.v1.ClusterRole',
  'io.k8s.api.rbac.v1.RoleBinding',
  'io.k8s.api.rbac.v1.ClusterRoleBinding',
  'io.k8s.api.coordination.v1.Lease',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition',
  'io.k8s.api.authentication.v1.TokenRequest',
  'io.k8s.api.authorization.v1.SelfSubjectAccessReview',
  'io.k8s.api.authorization.v1.SubjectAccessReview',
  'io.k8s.api.autoscaling.v1.Scale',
  'io.k8s.api.networking.v1.NetworkPolicy',
  'io.k8s.api.authentication.v1.TokenReview',
  'io.k8s.api.authentication.v1.SelfSubjectReview',
  'io.k8s.api.authorization.v1.LocalSubjectAccessReview',
  'io.k8s.api.authorization.v1.SelfSubjectRulesReview',
  'io.k8s.apimachinery.pkg.apis.meta.v1.Status',
  'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions',
  'io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList',
];

function fetchJson(server: string, token: string, path: string): Promise<any> {
  return new Promise((resolve, reject) => {
    const req = request(`${server}/${path}`, { headers: { Authorization: `Bearer ${token}` }, rejectUnauthorized: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`GET /${path}: ${res.statusCode}`));
        else resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Drops `description` annotations (not properties named "description") and reports every `$ref`. */
function withoutDescriptions(value: unknown, found: (ref: string) => void, propertyMap = false): unknown {
  if (Array.isArray(value)) return value.map((v) => withoutDescriptions(v, found));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === 'description' && !propertyMap) continue;
    if (key === '$ref' && typeof child === 'string' && !propertyMap) found(child.replace('#/components/schemas/', ''));
    out[key] = withoutDescriptions(child, found, !propertyMap && key === 'properties');
  }
  return out;
}

const { values } = parseArgs({ options: { server: { type: 'string' }, token: { type: 'string' } } });
const envtest = values.server === undefined ? await startEnvtest() : undefined;
const server = values.server ?? envtest!.server;
const token = values.token ?? envtest!.adminToken;
const all: Record<string, unknown> = {};
let version: { gitVersion: string };
try {
  for (const gv of groupVersions) Object.assign(all, (await fetchJson(server, token, `openapi/v3/${gv}`)).components.schemas);
  version = await fetchJson(server, token, 'version');
} finally {
  await envtest?.stop();
}

const schemas: Record<string, unknown> = {};
const queue = [...rootSchemas];
const seen = new Set(queue);
while (queue.length > 0) {
  const name = queue.shift()!;
  if (!(name in all)) throw new Error(`schema ${name} not served by ${server}`);
  schemas[name] = withoutDescriptions(all[name], (ref) => {
    if (!seen.has(ref)) {
      seen.add(ref);
      queue.push(ref);
    }
  });
}
const sorted = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
const out = fileURLToPath(new URL('../openapi/builtin-schemas.json', import.meta.url));
writeFileSync(out, `${JSON.stringify({ capturedFrom: version.gitVersion, schemas: sorted })}\n`);
console.log(JSON.stringify({ out, schemas: Object.keys(sorted).length, from: version.gitVersion }));
