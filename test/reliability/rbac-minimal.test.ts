// RBAC proven sufficient and minimal, for dist/ and for the install told which namespaces to watch: its ClusterRole and
// Roles deny nothing, removing any one grant shows a denial, the operator's identity can write no Lease but its own,
// and the namespaced install's identity can read nothing outside its namespaces.
import test from 'ava';
import {
  CONFIG_HASH_ANNOTATION,
  FINALIZER,
  LEADER_ELECTION_LEASE,
  OPERATOR_NAME,
  OPERATOR_NAMESPACE,
  SECRET_HASH_ANNOTATION,
} from '../../api/customapp.js';
import { OPERATOR_PERMISSIONS } from '../../infra/permissions.js';
import { contentHash } from '../../operator/dependencies/content-hash.js';
import { KubeClient } from '../../operator/kube/client.js';
import { isAlreadyExists, isNotFound } from '../../operator/kube/errors.js';
import { CONFIGMAPS, DEPLOYMENTS, LEASES, SERVICES } from '../../operator/kube/resources.js';
import { CUSTOM_APPS } from '../../operator/customapp/custom-app.js';
import { MANAGED_BY_LABEL } from '../../operator/customapp/labels.js';
import type { Lease } from '../../operator/kube/objects.js';
import { type ApiTarget, selectedTargets, type TestCluster } from '../support/targets.js';
import {
  clusterScenario,
  createAll,
  createNamespace,
  installOperatorResources,
  objects,
  startTestOperator,
  statusOf,
  type TestOperator,
} from '../support/operator-harness.js';
import { allowed, distOperatorRules, grantLabel, grantsOf, rulesWithout, setOperatorRules } from './support/cluster-role.js';
import { applyInstall, synthInstall } from '../support/synthesized-install.js';
import { NamespaceReads, podAnnotation } from '../support/cluster-reads.js';
import { metricsReaderToken, scrapeHttps } from '../support/metrics-scrape.js';

/** How long one scenario may take before it counts as failed (a passing run takes about a second). */
const SCENARIO_TIMEOUT_MS = 20_000;

/** What one run of the scenario showed. */
interface ScenarioOutcome {
  /** `verb resource[/subresource]` of every request the API server answered 403. */
  readonly denied: readonly string[];
  /** Why the scenario did not complete, if it did not. */
  readonly failure?: string;
  /** 403s as the operator's own metric counts them. */
  readonly deniedMetric: number;
}

/** Thrown inside the scenario to stop it as soon as the outcome is known. */
class ScenarioStopped extends Error {}

/** The installs proven: dist/, which watches every namespace, and one synthesized with the chart's `namespaces`. */
type Install = 'dist' | 'namespaced';

/**
 * The grants the product contract mandates although no code path uses them (marked in infra/permissions.ts), as the
 * install grants them: a `watched-namespaces` row is in the ClusterRole of dist/, in each watched Role when namespaced.
 */
function mandated(install: Install): Set<string> {
  return new Set(
    OPERATOR_PERMISSIONS.flatMap((permission) =>
      (permission.contractOnly ?? []).map((verb) =>
        grantLabel({
          apiGroup: permission.apiGroup,
          resource: permission.resource,
          verb,
          resourceNames: permission.resourceNames,
          inOperatorNamespace: permission.scope === 'operator-namespace',
          inWatchedNamespace: install === 'namespaced' && permission.scope === 'watched-namespaces',
        }),
      ),
    ),
  );
}

/**
 * The namespaces the namespaced install watches: one per run (the baseline and one per grant removed), each run's
 * operator watching its own, so that no run sees what an earlier one left.
 */
const NAMESPACED_RUNS = Array.from(
  { length: grantsOf(distOperatorRules(synthInstall({ namespaces: ['rbac-ns-0'] }))).length + 1 },
  (_, index) => `rbac-ns-${index}`,
);

/**
 * Every verb the operator has: leader election (the Lease is deleted first, so it is created), the informers, the
 * finalizer, the Deployment created and updated, the Service created, updated and deleted, status, Events created and
 * then aggregated (a repeated rollout message patches its Event), and the finalizer removed on deletion.
 */
async function scenario(admin: KubeClient, running: TestOperator, namespace: string, check: () => void, scraper: string): Promise<void> {
  const reads = new NamespaceReads(admin, namespace);
  const deadline = Date.now() + SCENARIO_TIMEOUT_MS;
  const until = async <T>(what: string, probe: () => Promise<T | undefined | false>): Promise<T> => {
    for (;;) {
      check();
      const answer = await probe().catch(() => undefined);
      if (answer !== undefined && answer !== false) return answer;
      if (Date.now() > deadline) throw new Error(`${what}: not within ${SCENARIO_TIMEOUT_MS} ms`);
      await new Promise((done) => setTimeout(done, 20));
    }
  };
  await until('the operator leads and reconciles', async () => running.operator.reconciling);
  // Secure metrics: the operator authenticates the scraper's token (TokenReview) and authorizes it (SubjectAccessReview).
  await until(
    'a scrape with a metrics-reader token is answered',
    async () => (await scrapeHttps(`${running.operator.metricsUrl}/metrics`, { token: scraper })).status === 200,
  );
  const hash = (value: string): string => contentHash({ data: { V: value } });
  await createNamespace(admin, namespace);
  await createAll(
    admin,
    objects.configMap(namespace, 'config', { V: '1' }),
    objects.secret(namespace, 'creds', { TOKEN: 't' }),
    objects.customApp(namespace, 'app', { image: 'example/app:1', configMapName: 'config', secretName: 'creds', port: 8080 }),
  );
  await until('the Deployment rolls out with both hashes', async () => {
    const deployment = await reads.deployment('app');
    return (
      podAnnotation(deployment, CONFIG_HASH_ANNOTATION) === hash('1') && podAnnotation(deployment, SECRET_HASH_ANNOTATION) !== undefined
    );
  });
  await until('the status and finalizer are written', async () => {
    const app = await reads.app('app');
    return app?.status?.observedGeneration === 1 && app.metadata.finalizers?.includes(FINALIZER);
  });
  await until('the Service exists', () => reads.service('app'));
  for (const value of ['2', '1', '2']) {
    await admin.patch(CONFIGMAPS, namespace, 'config', 'merge', { data: { V: value } });
    await until(
      `the Deployment rolls to V=${value}`,
      async () => podAnnotation(await reads.deployment('app'), CONFIG_HASH_ANNOTATION) === hash(value),
    );
  }
  await until('the repeated rollout Event is aggregated', async () =>
    (await reads.events('app')).some((event) => event.reason === 'RolloutTriggered' && (event.count ?? 1) >= 2),
  );
  await admin.patch(CUSTOM_APPS, namespace, 'app', 'merge', { spec: { port: 9090 } });
  await until('the Service is updated', async () => (await reads.service('app'))?.spec.ports?.[0]?.port === 9090);
  // Owned objects whose managed-by label is edited away leave the informers' sight: found again by a GET.
  for (const resource of [DEPLOYMENTS, SERVICES]) {
    await admin.patch(resource, namespace, 'app', 'merge', { metadata: { labels: { [MANAGED_BY_LABEL]: null } } });
  }
  await admin.patch(CUSTOM_APPS, namespace, 'app', 'merge', { spec: { replicas: 2 } });
  await until('the Deployment and the Service are labelled again', async () => {
    const [deployment, service] = [await reads.deployment('app'), await reads.service('app')];
    return deployment?.metadata.labels?.[MANAGED_BY_LABEL] !== undefined && service?.metadata.labels?.[MANAGED_BY_LABEL] !== undefined;
  });
  await admin.patch(CUSTOM_APPS, namespace, 'app', 'merge', { spec: { port: null } });
  await until('the Service is deleted', async () => (await reads.service('app')) === undefined);
  const renewed = await until('the Lease is held', async () => {
    const lease = await admin.get<Lease>(LEASES, OPERATOR_NAMESPACE, LEADER_ELECTION_LEASE);
    return lease.spec?.holderIdentity === running.operator.identity ? lease.spec.renewTime : undefined;
  });
  await until(
    'the Lease is renewed',
    async () => (await admin.get<Lease>(LEASES, OPERATOR_NAMESPACE, LEADER_ELECTION_LEASE)).spec?.renewTime !== renewed,
  );
  await admin.delete(CUSTOM_APPS, namespace, 'app');
  await until('the CustomApp is finalized', async () => (await reads.app('app')) === undefined);
}

/** A Lease held by someone other than the operator (as kube-controller-manager and each kubelet hold theirs). */
function foreignLease(name: string): Lease {
  return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: 'someone-else' } };
}

/**
 * Runs the scenario in `namespace` with a fresh operator (and no Lease), stopping at the first 403; the operator
 * watches that namespace alone when the install is namespaced, every namespace otherwise.
 */
async function runScenario(
  cluster: TestCluster,
  admin: KubeClient,
  namespace: string,
  scraper: string,
  install: Install,
): Promise<ScenarioOutcome> {
  await admin.delete(LEASES, OPERATOR_NAMESPACE, LEADER_ELECTION_LEASE).catch((error: unknown) => {
    if (!isNotFound(error)) throw error;
  });
  const running = await startTestOperator(
    cluster,
    {
      leaderElection: {
        namespace: OPERATOR_NAMESPACE,
        name: LEADER_ELECTION_LEASE,
        leaseDurationMs: 2_000,
        renewDeadlineMs: 1_500,
        retryPeriodMs: 200,
      },
      metricsBindAddress: { host: '127.0.0.1', port: 0 },
      ...(install === 'namespaced' ? { namespaces: [namespace] } : {}),
    },
    { waitForStart: false },
  );
  const deniedNow = (): string[] =>
    running.requests
      .filter((sample) => sample.code === 403)
      .map((sample) => `${sample.verb} ${sample.resource}${sample.subresource ? `/${sample.subresource}` : ''}`);
  let failure: string | undefined;
  try {
    await scenario(
      admin,
      running,
      namespace,
      () => {
        if (deniedNow().length > 0) throw new ScenarioStopped('a request was denied');
      },
      scraper,
    );
  } catch (error) {
    if (!(error instanceof ScenarioStopped)) failure = (error as Error).message;
  } finally {
    await running.operator.stop();
  }
  return {
    denied: [...new Set(deniedNow())],
    failure,
    deniedMetric: await running.operator.metrics.total('rest_client_requests_total', { code: '403' }),
  };
}

for (const target of selectedTargets()) {
  for (const install of ['dist', 'namespaced'] as const) {
    provenInstall(target, install);
  }
}

/** The tests of one install on one target, on a cluster of their own. */
function provenInstall(target: ApiTarget, install: Install): void {
  let runs = 0;
  const dir = install === 'namespaced' ? synthInstall({ namespaces: NAMESPACED_RUNS }) : undefined;
  const rules = distOperatorRules(dir);
  const MANDATED = mandated(install);
  /** The next run's namespace: the one the install watches for it, when namespaced. */
  const nextNamespace = (): string => (install === 'namespaced' ? NAMESPACED_RUNS[runs++]! : `rbac-${(runs += 1)}`);
  const name = `${target}${install === 'namespaced' ? ', namespaced install' : ''}`;

  let scraper: string;
  const scenario = clusterScenario(
    test,
    target,
    {
      install: async ({ cluster, admin }) => {
        if (dir) await applyInstall(cluster, admin, { namespaces: NAMESPACED_RUNS });
        else await installOperatorResources(cluster);
      },
    },
    async ({ cluster, admin }) => {
      scraper = await metricsReaderToken(cluster, admin, 'monitoring', 'prometheus');
    },
  );

  test.serial(`[${name}] with exactly dist/'s ClusterRole and Role the whole scenario passes and no request is denied`, async (t) => {
    const { cluster, admin } = scenario;
    const outcome = await runScenario(cluster, admin, nextNamespace(), scraper, install);
    t.is(outcome.failure, undefined);
    t.deepEqual(outcome.denied, []);
    t.is(outcome.deniedMetric, 0, 'rest_client_requests_total has no 403');
  });

  test.serial(
    `[${name}] the operator's identity writes its own Lease and no other: 403 in kube-system, kube-node-lease and on other names`,
    async (t) => {
      const { cluster, admin } = scenario;
      const { kubeConfig } = await cluster.serviceAccount(OPERATOR_NAMESPACE, OPERATOR_NAME);
      const operatorClient = await KubeClient.fromKubeConfig(kubeConfig);
      t.teardown(() => operatorClient.close());
      // The Leases an identity with leases cluster-wide could take over: a control-plane leader's and a node heartbeat.
      const foreign: readonly [namespace: string, name: string][] = [
        ['kube-system', 'kube-controller-manager'],
        ['kube-node-lease', 'node-1'],
        [OPERATOR_NAMESPACE, 'another-component'],
      ];
      for (const [namespace, name] of foreign) {
        await admin.create(LEASES, namespace, foreignLease(name)).catch((error: unknown) => {
          if (!isAlreadyExists(error)) throw error;
        });
      }
      await admin.delete(LEASES, OPERATOR_NAMESPACE, LEADER_ELECTION_LEASE).catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });

      t.is(
        await statusOf(operatorClient.create(LEASES, OPERATOR_NAMESPACE, foreignLease(LEADER_ELECTION_LEASE))),
        200,
        'create its own Lease',
      );
      const own = await operatorClient.get<Lease>(LEASES, OPERATOR_NAMESPACE, LEADER_ELECTION_LEASE);
      const renewed = { ...own, spec: { ...own.spec, holderIdentity: 'operator' } };
      t.is(await statusOf(operatorClient.replace(LEASES, OPERATOR_NAMESPACE, LEADER_ELECTION_LEASE, renewed)), 200, 'update its own Lease');

      for (const [namespace, name] of foreign) {
        const lease = await admin.get<Lease>(LEASES, namespace, name);
        const taken = { ...lease, spec: { ...lease.spec, holderIdentity: 'operator' } };
        t.is(await statusOf(operatorClient.replace(LEASES, namespace, name, taken)), 403, `update ${namespace}/${name}`);
        t.is(await statusOf(operatorClient.get(LEASES, namespace, name)), 403, `get ${namespace}/${name}`);
        t.is((await admin.get<Lease>(LEASES, namespace, name)).spec?.holderIdentity, 'someone-else', `${namespace}/${name} unchanged`);
      }
      for (const namespace of ['kube-system', 'kube-node-lease']) {
        t.is(await statusOf(operatorClient.create(LEASES, namespace, foreignLease('planted'))), 403, `create in ${namespace}`);
      }
    },
  );

  test.serial(`[${name}] the mandated grants are exactly those infra/permissions.ts marks as required by the product contract`, (t) => {
    const where = install === 'namespaced' ? ' in the watched namespace' : '';
    t.deepEqual(
      [...MANDATED],
      [`get configmaps${where}`, `patch customapps.app.example.com${where}`, `patch customapps/status.app.example.com${where}`],
      'the mission statement mandates get, list and watch on configmaps; an earlier release, running beside this one through an upgrade, patches the finalizer and the status',
    );
    const granted = new Set(grantsOf(rules).map(grantLabel));
    t.true([...MANDATED].every((label) => granted.has(label)));
  });

  if (install === 'namespaced') {
    test.serial(
      `[${name}] nothing outside the watched namespaces is granted: each grant of their Role is refused in another namespace and cluster-wide`,
      async (t) => {
        const { admin } = scenario;
        t.deepEqual(
          rules.clusterRole.flatMap((rule) => rule.resources),
          ['tokenreviews', 'subjectaccessreviews'],
          'the ClusterRole: the secure metrics reviews alone',
        );
        const watched = grantsOf(rules).filter((grant) => grant.inWatchedNamespace);
        t.true(watched.some((grant) => grant.resource === 'secrets' && grant.verb === 'list'));
        const allowedElsewhere: string[] = [];
        for (const grant of watched) {
          for (const namespace of ['kube-system', 'default']) {
            if (await allowed(admin, grant, namespace)) allowedElsewhere.push(`${grantLabel(grant)}: ${namespace}`);
          }
          if (await allowed(admin, { ...grant, inWatchedNamespace: false }, undefined, undefined)) {
            allowedElsewhere.push(`${grantLabel(grant)}: all namespaces`);
          }
          t.true(await allowed(admin, grant, NAMESPACED_RUNS[0]), `${grantLabel(grant)}: granted in a watched namespace`);
        }
        t.deepEqual(allowedElsewhere, []);
      },
    );
  }

  for (const grant of grantsOf(rules)) {
    const label = grantLabel(grant);
    const mandated = MANDATED.has(label);
    const title = mandated
      ? `[${name}] without "${label}" the scenario still passes: it is kept only because the product contract mandates it`
      : `[${name}] without "${label}" the scenario fails or a denied request is reported`;
    test.serial(title, async (t) => {
      const { cluster, admin } = scenario;
      const namespace = nextNamespace();
      await setOperatorRules(admin, rulesWithout(rules, grant), grant, namespace);
      let outcome: ScenarioOutcome;
      try {
        outcome = await runScenario(cluster, admin, namespace, scraper, install);
      } finally {
        await setOperatorRules(admin, rules, grant, namespace);
      }
      t.log(
        outcome.failure
          ? `failed: ${outcome.failure}`
          : `denied: ${outcome.denied.join(', ') || 'nothing'} (metric: ${outcome.deniedMetric})`,
      );
      if (mandated) {
        t.is(outcome.failure, undefined);
        t.deepEqual(outcome.denied, []);
      } else {
        t.true(outcome.denied.length > 0 || outcome.failure !== undefined, `nothing needs "${label}": remove it from infra/permissions.ts`);
        if (outcome.denied.length > 0) t.true(outcome.deniedMetric > 0, 'the denial shows in rest_client_requests_total{code="403"}');
      }
    });
  }
}
