// The least-privilege install: an operator told to watch team-a and team-b, under the RBAC the chart synthesizes for
// them, serves their CustomApps, ignores the others, and its identity can read no Secret or ConfigMap elsewhere.
import test from 'ava';
import { CONFIG_HASH_ANNOTATION, FINALIZER, LEADER_ELECTION_LEASE, OPERATOR_NAME, OPERATOR_NAMESPACE } from '../../api/customapp.js';
import { contentHash } from '../../operator/dependencies/content-hash.js';
import { KubeClient } from '../../operator/kube/client.js';
import { CONFIGMAPS, LEASES, SECRETS } from '../../operator/kube/resources.js';
import { selectedTargets } from '../support/targets.js';
import { applyInstall } from '../support/synthesized-install.js';
import {
  clusterScenario,
  createAll,
  createNamespace,
  eventually,
  objects,
  startTestOperator,
  statusOf,
  type TestOperator,
} from '../support/operator-harness.js';
import { NamespaceReads, podAnnotation } from '../support/cluster-reads.js';

const WATCHED = ['team-a', 'team-b'] as const;
const ELSEWHERE = 'team-c';
const OPERATOR_USER = `system:serviceaccount:${OPERATOR_NAMESPACE}:${OPERATOR_NAME}`;

/** A ConfigMap, a Secret and a CustomApp that references both, in `namespace`. */
async function createApp(admin: KubeClient, namespace: string): Promise<void> {
  await createAll(
    admin,
    objects.configMap(namespace, 'config', { V: '1' }),
    objects.secret(namespace, 'creds', { TOKEN: `token-of-${namespace}` }),
    objects.customApp(namespace, 'app', { image: 'example/app:1', configMapName: 'config', secretName: 'creds', port: 8080 }),
  );
}

const hash = (value: string): string => contentHash({ data: { V: value } });

for (const target of selectedTargets()) {
  const scenario = clusterScenario(
    test,
    target,
    {
      envtest: { controllerManager: true },
      install: async ({ cluster, admin }) => {
        await applyInstall(cluster, admin, { namespaces: [...WATCHED] });
      },
    },
    ({ admin }) => createNamespace(admin, ELSEWHERE),
  );

  test.serial(
    `[${target}] under the namespaced RBAC, apps in team-a and team-b roll and apps in team-c are never seen: no Deployment, no finalizer, no watch`,
    async (t) => {
      const { cluster, admin } = scenario;
      const running: TestOperator = await startTestOperator(cluster, {
        namespaces: [...WATCHED],
        leaderElection: { namespace: OPERATOR_NAMESPACE, name: LEADER_ELECTION_LEASE },
      });
      t.teardown(() => running.operator.stop());
      for (const namespace of [...WATCHED, ELSEWHERE]) await createApp(admin, namespace);
      for (const namespace of WATCHED) {
        const reads = new NamespaceReads(admin, namespace);
        await eventually(`the Deployment in ${namespace} runs V=1`, async () => {
          return podAnnotation(await reads.deployment('app'), CONFIG_HASH_ANNOTATION) === hash('1');
        });
        await eventually(`the status and finalizer of ${namespace}/app`, async () => {
          const app = await reads.app('app');
          return app?.status?.observedGeneration === 1 && app.metadata.finalizers?.includes(FINALIZER);
        });
      }
      await admin.patch(CONFIGMAPS, 'team-b', 'config', 'merge', { data: { V: '2' } });
      const teamB = new NamespaceReads(admin, 'team-b');
      await eventually(
        'team-b/app rolls to V=2',
        async () => podAnnotation(await teamB.deployment('app'), CONFIG_HASH_ANNOTATION) === hash('2'),
      );
      await admin.patch(CONFIGMAPS, ELSEWHERE, 'config', 'merge', { data: { V: '2' } });
      // Whatever team-c's app could have caused has had the time team-b's rollout took: its edit came after the rest.
      await admin.patch(CONFIGMAPS, 'team-a', 'config', 'merge', { data: { V: '3' } });
      const teamA = new NamespaceReads(admin, 'team-a');
      await eventually(
        'team-a/app rolls to V=3',
        async () => podAnnotation(await teamA.deployment('app'), CONFIG_HASH_ANNOTATION) === hash('3'),
      );

      const elsewhere = new NamespaceReads(admin, ELSEWHERE);
      t.is(await elsewhere.deployment('app'), undefined, 'no Deployment in team-c');
      t.is(await elsewhere.service('app'), undefined, 'no Service in team-c');
      const ignored = await elsewhere.app('app');
      t.deepEqual(ignored?.metadata.finalizers ?? [], [], 'no finalizer on team-c/app');
      t.is(ignored?.status, undefined, 'no status on team-c/app');
      t.deepEqual(await elsewhere.events('app'), [], 'no Event about team-c/app');
      t.is(running.operator.apps.store.get(`${ELSEWHERE}/app`), undefined, 'team-c/app is not even cached');

      // Every request the operator made names a watched namespace (or the operator's own, for its Lease): nothing at
      // cluster scope but discovery (open to every identity: system:discovery), nothing in team-c, and nothing refused.
      const api = running.requests.filter((request) => request.resource !== 'discovery');
      const scoped = api.filter((request) => request.namespace === undefined || request.namespace === ELSEWHERE);
      t.deepEqual(
        scoped.map((request) => `${request.verb} ${request.resource}${request.subresource ? `/${request.subresource}` : ''}`),
        [],
      );
      t.deepEqual([...new Set(api.map((request) => request.namespace))].sort(), [OPERATOR_NAMESPACE, ...WATCHED].sort());
      t.deepEqual(
        running.requests.filter((request) => request.code === 403),
        [],
      );

      // The streams: one watcher per informer and namespace, named after it, and the dependency watches of the refs.
      const informerStreams = running.logs
        .find('subscribed')
        .map((line) => String(line.stream))
        .filter((stream) => !/^(configmap|secret) /.test(stream))
        .sort();
      t.deepEqual(informerStreams, [
        'customapp team-a',
        'customapp team-b',
        'deployment team-a (owned)',
        'deployment team-b (owned)',
        'service team-a (owned)',
        'service team-b (owned)',
      ]);
      const dependencyStreams = running.operator.registry!.streams().map((stream) => `${stream.kind}/${stream.namespace}`);
      t.deepEqual(dependencyStreams.sort(), ['ConfigMap/team-a', 'ConfigMap/team-b', 'Secret/team-a', 'Secret/team-b']);
      t.log(
        `streams: ${informerStreams.length} informer watches (3 resources × ${WATCHED.length} namespaces), ${dependencyStreams.length} dependency watches`,
      );
    },
  );

  test.serial(
    `[${target}] the operator's identity is refused a Secret or a ConfigMap outside team-a and team-b: kubectl auth can-i and a real GET`,
    async (t) => {
      const { cluster, admin } = scenario;
      await createAll(admin, objects.secret(ELSEWHERE, 'other', { TOKEN: 'not-yours' }), objects.secret('team-a', 'mine', { TOKEN: 'ok' }));
      const canI = async (...args: string[]): Promise<string> => {
        const answer = await cluster.kubectl(['auth', 'can-i', ...args, '--as', OPERATOR_USER]);
        return answer.stdout.trim();
      };
      const answers = {
        'list secrets -n team-a': await canI('list', 'secrets', '-n', 'team-a'),
        'watch configmaps -n team-b': await canI('watch', 'configmaps', '-n', 'team-b'),
        'get secrets -n team-c': await canI('get', 'secrets', '-n', ELSEWHERE),
        'list secrets -n team-c': await canI('list', 'secrets', '-n', ELSEWHERE),
        'list secrets --all-namespaces': await canI('list', 'secrets', '--all-namespaces'),
        'list configmaps -n kube-system': await canI('list', 'configmaps', '-n', 'kube-system'),
        'list customapps.app.example.com --all-namespaces': await canI('list', 'customapps.app.example.com', '--all-namespaces'),
      };
      t.log(answers);
      t.deepEqual(answers, {
        'list secrets -n team-a': 'yes',
        'watch configmaps -n team-b': 'yes',
        'get secrets -n team-c': 'no',
        'list secrets -n team-c': 'no',
        'list secrets --all-namespaces': 'no',
        'list configmaps -n kube-system': 'no',
        'list customapps.app.example.com --all-namespaces': 'no',
      });

      const { kubeConfig } = await cluster.serviceAccount(OPERATOR_NAMESPACE, OPERATOR_NAME);
      const operatorClient = await KubeClient.fromKubeConfig(kubeConfig);
      t.teardown(() => operatorClient.close());
      const statuses = {
        'GET secret team-c/other': await statusOf(operatorClient.get(SECRETS, ELSEWHERE, 'other')),
        'LIST secrets in team-c': await statusOf(operatorClient.list(SECRETS, { namespace: ELSEWHERE })),
        'LIST secrets in every namespace': await statusOf(operatorClient.list(SECRETS, {})),
        'LIST configmaps in team-c': await statusOf(operatorClient.list(CONFIGMAPS, { namespace: ELSEWHERE })),
        'LIST secrets in team-a': await statusOf(operatorClient.list(SECRETS, { namespace: 'team-a' })),
        'GET its Lease (may be absent)': await statusOf(operatorClient.get(LEASES, OPERATOR_NAMESPACE, LEADER_ELECTION_LEASE)),
      };
      t.log(statuses);
      t.like(statuses, {
        'GET secret team-c/other': 403,
        'LIST secrets in team-c': 403,
        'LIST secrets in every namespace': 403,
        'LIST configmaps in team-c': 403,
        'LIST secrets in team-a': 200,
      });
      t.true([200, 404].includes(statuses['GET its Lease (may be absent)']));
    },
  );
}
