// The Helm users' path on a real node: `helm install` of dist-helm/ with 2 replicas runs the operator's image, its pods
// become Ready through their probes, one takes the Lease, and the PodDisruptionBudget covers them.
import test from 'ava';
import { resolve } from 'node:path';
import { LEADER_ELECTION_LEASE, OPERATOR_NAME, OPERATOR_NAMESPACE } from '../../api/customapp.js';
import { runHelm } from '../support/helm.js';
import { nodeSuite, podReady, waitFor } from './node-helpers.js';

const CHART = resolve(import.meta.dirname, '../../dist-helm');
const { onNode, node } = nodeSuite(test);

onNode(
  'helm install dist-helm/ --set replicas=2: both operator pods become Ready, one holds the Lease, and the PodDisruptionBudget allows one disruption',
  async (t) => {
    const installed = await runHelm(['install', OPERATOR_NAME, CHART, '--set', 'replicas=2'], node.cluster.kubeconfigPath);
    t.is(installed.code, 0, installed.stderr);
    await node.kubectlOk(['-n', OPERATOR_NAMESPACE, 'rollout', 'status', `deployment/${OPERATOR_NAME}`, '--timeout=180s'], {
      timeoutMs: 200_000,
    });
    const pods = (await node.podsOf(OPERATOR_NAMESPACE, `app.kubernetes.io/name=${OPERATOR_NAME}`)).filter(
      (pod) => !pod.metadata.deletionTimestamp,
    );
    t.is(pods.length, 2);
    t.true(pods.every(podReady), 'Ready: the kubelet polled /readyz and got 200');
    t.true(
      pods.every((pod) => pod.spec.containers[0].image === node.images.operator),
      'the image the chart names, loaded into the node',
    );
    const holder = await waitFor('the Lease', 60_000, async () => {
      const lease = await node.get(`/apis/coordination.k8s.io/v1/namespaces/${OPERATOR_NAMESPACE}/leases/${LEADER_ELECTION_LEASE}`);
      const name = String(lease.spec.holderIdentity ?? '');
      return pods.some((pod) => name.startsWith(`${pod.metadata.name}_`)) ? name : undefined;
    });
    t.log(`Lease held by ${holder}`);
    const budget = await waitFor('the budget observes the pods', 60_000, async () => {
      const current = await node.get(`/apis/policy/v1/namespaces/${OPERATOR_NAMESPACE}/poddisruptionbudgets/${OPERATOR_NAME}`);
      return current.status?.currentHealthy === 2 ? current : undefined;
    });
    t.like(budget.status, { currentHealthy: 2, desiredHealthy: 1, disruptionsAllowed: 1, expectedPods: 2 });
  },
);
