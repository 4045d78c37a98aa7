// The faults the real-node soak injects: the leader's container killed, an operator pod deleted, kube-apiserver, etcd
// or containerd stopped and started again, and an operator pod's traffic to the API server dropped.
import type { NodeCluster } from '../../envtest/node/harness.js';
import type { SeededRandom } from '../reliability/support/random.js';
import { get, podsOf } from './node-helpers.js';

/** Every kind of fault, in the order a schedule with one of each starts from. */
export const NODE_FAULT_KINDS = [
  'kill-leader',
  'delete-pod',
  'apiserver-restart',
  'etcd-restart',
  'drop-traffic',
  'containerd-restart',
] as const;
export type NodeFaultKind = (typeof NODE_FAULT_KINDS)[number];

/** Whether the API server cannot be written during the fault (the soak's own writes wait for its end). */
export const BLOCKS_THE_API: ReadonlySet<NodeFaultKind> = new Set(['apiserver-restart', 'etcd-restart']);

/** The operator's install the faults aim at. */
export interface OperatorInstall {
  readonly namespace: string;
  /** The label selector of its pods. */
  readonly selector: string;
  /** Its leader-election Lease; none when sharded (each replica holds a Lease of its own, and no one leads). */
  readonly lease?: string;
}

/** One injected fault: its kind, when it began and ended (ms since the epoch), and what it hit. */
export interface InjectedFault {
  readonly kind: NodeFaultKind;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly detail: string;
}

/**
 * A schedule of `count` faults from a seed: every kind of `among` once (in a shuffled order) while count allows, then
 * kinds drawn at random from `among`; the same seed gives the same schedule, durations included. A narrower `among`
 * repeats one fault (kube-apiserver restarts only, to measure their recovery many times).
 */
export function faultSchedule(
  random: SeededRandom,
  count: number,
  among: readonly NodeFaultKind[] = NODE_FAULT_KINDS,
): { kind: NodeFaultKind; downMs: number }[] {
  const kinds = [...among];
  for (let index = kinds.length - 1; index > 0; index -= 1) {
    const other = random.int(index + 1);
    [kinds[index], kinds[other]] = [kinds[other]!, kinds[index]!];
  }
  return Array.from({ length: count }, (_, index) => {
    const kind = index < kinds.length ? kinds[index]! : random.pick(among);
    // The traffic is dropped for 5 to 30 s; a control-plane component stays down 2 to 10 s, containerd 1 to 5 s.
    const downMs =
      kind === 'drop-traffic'
        ? 5_000 + random.int(25_001)
        : kind === 'containerd-restart'
          ? 1_000 + random.int(4_001)
          : 2_000 + random.int(8_001);
    return { kind, downMs };
  });
}

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/** The live operator pods and the one whose name prefixes the Lease's holder (undefined while no one leads, and when sharded). */
export async function operatorPods(node: NodeCluster, install: OperatorInstall): Promise<{ pods: any[]; leader?: any }> {
  const pods = (await podsOf(node, install.namespace, install.selector)).filter((pod) => !pod.metadata.deletionTimestamp);
  if (install.lease === undefined) return { pods };
  const lease = await get(node, `/apis/coordination.k8s.io/v1/namespaces/${install.namespace}/leases/${install.lease}`).catch(
    () => undefined,
  );
  const holder: string = lease?.spec?.holderIdentity ?? '';
  return { pods, leader: pods.find((pod) => holder.startsWith(`${pod.metadata.name}_`)) };
}

const containerIdOf = (pod: any): string => {
  const id = pod.status?.containerStatuses?.[0]?.containerID as string | undefined;
  if (!id) throw new Error(`pod ${pod.metadata.name} has no running container`);
  return id.replace(/^containerd:\/\//, '');
};

/** The network namespace of a pod's container, as containerd recorded it (a path inside the node's mount namespace). */
async function podNetworkNamespace(node: NodeCluster, pod: any): Promise<string> {
  const info = JSON.parse(await node.ctr(['containers', 'info', containerIdOf(pod)]));
  const path = (info.Spec?.linux?.namespaces as { type: string; path?: string }[] | undefined)?.find(
    (namespace) => namespace.type === 'network',
  )?.path;
  if (!path) throw new Error(`no network namespace for pod ${pod.metadata.name} in containerd's record`);
  return path;
}

/**
 * Drops the pod's TCP packets to the API server (the `kubernetes` Service's address, which the pod dials, and the
 * host's, where kube-proxy sends them) for `ms`, by an iptables rule in the pod's own network namespace: the
 * connections stay open and silent, as across a partition, until the rule goes.
 */
async function dropApiTraffic(node: NodeCluster, pod: any, ms: number, whileDropped: () => Promise<void>): Promise<void> {
  const netns = await podNetworkNamespace(node, pod);
  const rules = [node.addresses.kubernetesServiceIp, node.addresses.hostIp].map((address) => [
    'OUTPUT',
    '-p',
    'tcp',
    '-d',
    address,
    '-j',
    'DROP',
  ]);
  const iptables = (args: readonly string[]): Promise<string> => node.nodeRun('nsenter', [`--net=${netns}`, '--', 'iptables', ...args]);
  for (const rule of rules) await iptables(['-I', ...rule]);
  try {
    await Promise.all([sleep(ms), whileDropped()]);
  } finally {
    for (const rule of rules) await iptables(['-D', ...rule]);
  }
}

/**
 * Injects one fault and answers when it is over (the component back, the rule removed), with what it hit;
 * `whileFaulty` runs once the fault has begun (a write made during it). A fault aimed at the leader while no one
 * leads hits any operator pod; when sharded (no leader), a random shard, named in the detail.
 */
export async function injectFault(
  node: NodeCluster,
  install: OperatorInstall,
  fault: { kind: NodeFaultKind; downMs: number },
  random: SeededRandom,
  whileFaulty: () => Promise<void> = async () => {},
): Promise<InjectedFault> {
  const { pods, leader } = await operatorPods(node, install);
  const target = leader ?? (pods.length > 0 ? random.pick(pods) : undefined);
  const aimed = leader ? ' (the leader)' : install.lease === undefined ? ' (a random shard)' : ' (no one led)';
  const startedAt = Date.now();
  const done = (detail: string): InjectedFault => ({ kind: fault.kind, startedAt, endedAt: Date.now(), detail });
  switch (fault.kind) {
    case 'kill-leader': {
      if (!target) throw new Error('no operator pod to kill');
      await node.ctr(['tasks', 'kill', '--signal', 'SIGKILL', containerIdOf(target)]);
      await whileFaulty();
      return done(`SIGKILL to ${target.metadata.name}'s container${aimed}`);
    }
    case 'delete-pod': {
      const victim = random.pick(pods);
      const deleted = await node.envtest.request('DELETE', `/api/v1/namespaces/${install.namespace}/pods/${victim.metadata.name}`);
      if (deleted.status !== 200)
        throw new Error(`deleting pod ${victim.metadata.name}: ${deleted.status} ${JSON.stringify(deleted.body)}`);
      await whileFaulty();
      return done(
        `deleted ${victim.metadata.name}${victim === leader ? ' (the leader)' : install.lease === undefined ? ' (a shard)' : ' (a standby)'}`,
      );
    }
    case 'apiserver-restart':
    case 'etcd-restart':
    case 'containerd-restart': {
      const component = fault.kind === 'apiserver-restart' ? 'kube-apiserver' : fault.kind === 'etcd-restart' ? 'etcd' : 'containerd';
      await node.stopComponent(component);
      await Promise.all([sleep(fault.downMs), whileFaulty()]);
      await node.startComponent(component);
      return done(`${component} down ${fault.downMs} ms`);
    }
    case 'drop-traffic': {
      if (!target) throw new Error('no operator pod to cut off');
      await dropApiTraffic(node, target, fault.downMs, whileFaulty);
      return done(
        `${target.metadata.name}${leader ? ' (the leader)' : install.lease === undefined ? ' (a random shard)' : ''} cut off from the API server for ${fault.downMs} ms`,
      );
    }
  }
}
