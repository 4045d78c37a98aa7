// N operator processes with --sharding against one API server, each its own ServiceAccount so every write names its shard.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { OPERATOR_NAME, OPERATOR_NAMESPACE } from '../../../api/customapp.js';
import { SUBJECT_ACCESS_REVIEWS } from '../../../operator/http/metrics-auth.js';
import type { KubeClient } from '../../../operator/kube/client.js';
import type { KubeObject } from '../../../operator/kube/objects.js';
import type { Resource } from '../../../operator/kube/resources.js';
import type { TestCluster } from '../../support/targets.js';
import { eventually } from '../../support/operator-harness.js';
import { OperatorProcess, PLAIN_METRICS_FLAGS } from '../../support/operator-process.js';
import { type MetricSample, scrape } from './prometheus.js';

/** The ServiceAccount of shard `name`: `customapp-shard-<name>` in the operator's namespace. */
export const shardAccount = (name: string): string => `customapp-shard-${name}`;
/** The user a shard's token authenticates as: what the API server records for each of its writes. */
export const shardUser = (name: string): string => `system:serviceaccount:${OPERATOR_NAMESPACE}:${shardAccount(name)}`;
/** The group every shard (and the operator's own ServiceAccount) is in: what the write record keeps. */
export const SHARD_GROUP = `system:serviceaccounts:${OPERATOR_NAMESPACE}`;

const RBAC_GROUP = 'rbac.authorization.k8s.io';
const BINDINGS: readonly Resource[] = [
  { group: RBAC_GROUP, version: 'v1', plural: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false },
  { group: RBAC_GROUP, version: 'v1', plural: 'rolebindings', kind: 'RoleBinding', namespaced: true },
];
interface Subject {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}
interface Binding extends KubeObject {
  subjects?: Subject[];
}

/**
 * Adds ServiceAccount `account` of the operator's namespace to every binding that names the operator's own
 * ServiceAccount (the ClusterRoleBindings and the RoleBindings the install made): it gets exactly the operator's grants.
 * Returns once the authorizer lets it list CustomApps (RBAC reaches the authorizer through an informer, a moment later).
 */
export async function grantAsOperator(admin: KubeClient, account: string): Promise<void> {
  const isOperator = (subject: Subject): boolean =>
    subject.kind === 'ServiceAccount' && subject.name === OPERATOR_NAME && subject.namespace === OPERATOR_NAMESPACE;
  for (const resource of BINDINGS) {
    for (const binding of (await admin.list<Binding>(resource)).items) {
      const subjects = binding.subjects ?? [];
      if (!subjects.some(isOperator) || subjects.some((subject) => subject.name === account && subject.namespace === OPERATOR_NAMESPACE))
        continue;
      await admin.patch(resource, binding.metadata.namespace, binding.metadata.name!, 'merge', {
        subjects: [...subjects, { kind: 'ServiceAccount', name: account, namespace: OPERATOR_NAMESPACE }],
      });
    }
  }
  const user = `system:serviceaccount:${OPERATOR_NAMESPACE}:${account}`;
  await eventually(
    `${user} may list CustomApps`,
    async () => {
      const review = await admin.create<KubeObject & { status?: { allowed?: boolean } }>(SUBJECT_ACCESS_REVIEWS, undefined, {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        metadata: {},
        spec: {
          user,
          groups: ['system:serviceaccounts', `system:serviceaccounts:${OPERATOR_NAMESPACE}`, 'system:authenticated'],
          resourceAttributes: { group: 'app.example.com', resource: 'customapps', verb: 'list' },
        },
      } as KubeObject);
      return review.status?.allowed === true;
    },
    10_000,
  );
}

/** One shard: its name (its `--shard-identity`), the user its writes are recorded under, and its process. */
export interface Shard {
  readonly name: string;
  readonly user: string;
  readonly process: OperatorProcess;
  /** When it was started and, once it stopped, how (epoch milliseconds, the clock of the write record). */
  readonly startedMs: number;
  stoppedMs?: number;
  stoppedBy?: NodeJS.Signals;
}

/**
 * Lease timings short enough that a killed shard's objects move within seconds, and long enough that a shard on a
 * loaded two-core machine (load averages of 15 and more while seven suites run) still renews in time: a renewal that
 * misses the renew deadline ends the process, as it ends a leader.
 */
export const FAST_LEASE_FLAGS: readonly string[] = [
  '--leader-elect-lease-duration=8s',
  '--leader-elect-renew-deadline=6s',
  '--leader-elect-retry-period=1s',
];
/** The Lease duration of {@link FAST_LEASE_FLAGS}. */
export const FAST_LEASE_DURATION_MS = 8_000;

/**
 * Operator processes with `--sharding`, started and stopped one by one. Each runs as its own ServiceAccount (with the
 * operator's grants: {@link grantAsOperator}) and names itself with `--shard-identity`, so the API server's write record
 * says which shard sent each write, and its log and metrics which objects it owns.
 */
export class ShardFleet {
  /** Every shard started, running or not, by name. */
  readonly shards = new Map<string, Shard>();

  /** `flags` go to every process after the fleet's own (the kubeconfig, `--sharding`, the identity, the endpoints). */
  constructor(
    private readonly cluster: TestCluster,
    private readonly admin: KubeClient,
    private readonly flags: readonly string[],
  ) {}

  /** Starts shard `name` (a fresh name each time: its record must not mix with an earlier process's). */
  async start(name: string): Promise<Shard> {
    if (this.shards.has(name)) throw new Error(`shard "${name}" was started before: give each process its own name`);
    const account = shardAccount(name);
    const { path } = await this.cluster.serviceAccount(OPERATOR_NAMESPACE, account);
    await grantAsOperator(this.admin, account);
    const process = new OperatorProcess([
      `--kubeconfig=${path}`,
      '--sharding',
      `--shard-identity=${name}`,
      '--log-format=json',
      // Scraped with a plain fetch: the shards' own numbers are under test here.
      ...PLAIN_METRICS_FLAGS,
      '--health-probe-bind-address=127.0.0.1:0',
      ...this.flags,
    ]);
    const shard: Shard = { name, user: shardUser(name), process, startedMs: Date.now() };
    this.shards.set(name, shard);
    return shard;
  }

  /** The shards whose process has not been stopped. */
  running(): Shard[] {
    return [...this.shards.values()].filter((shard) => shard.stoppedBy === undefined);
  }

  /** Sends `signal` to shard `name` and waits for its exit: SIGKILL is a crash, SIGTERM a graceful stop. */
  async stop(name: string, signal: 'SIGKILL' | 'SIGTERM'): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    const shard = this.shards.get(name);
    if (!shard) throw new Error(`no shard "${name}"`);
    shard.stoppedBy = signal;
    shard.stoppedMs = Date.now();
    shard.process.kill(signal);
    return shard.process.exited;
  }

  /** The samples of a running shard's /metrics. */
  async metrics(name: string): Promise<MetricSample[]> {
    const shard = this.shards.get(name);
    const url = shard?.process.find('started')[0]?.metrics;
    if (typeof url !== 'string') throw new Error(`shard "${name}" has not logged its metrics address`);
    return scrape(url);
  }

  /**
   * Waits until every running shard has acknowledged a view of as many members as there are running shards (its last
   * `shard.ownership` line names them, and its last `shard.drained` line is of the same view).
   */
  async settled(timeoutMs = 30_000): Promise<void> {
    const running = this.running();
    const agreed = (shard: Shard): boolean => {
      const ownership = shard.process.find('shard.ownership').at(-1);
      const drained = shard.process.find('shard.drained').at(-1);
      const members = ownership?.members;
      return Array.isArray(members) && members.length === running.length && drained !== undefined && drained.view === ownership!.view;
    };
    await eventually(
      `every shard of ${running.map((shard) => shard.name).join(', ')} sees ${running.length} members and drained to that view`,
      () => {
        // A shard that exited on its own (its Lease lost) will never agree: say so at once, below.
        if (running.some((shard) => shard.process.hasExited)) throw new Error('a shard exited on its own');
        return running.every(agreed);
      },
      timeoutMs,
      100,
    ).catch((error: Error) => {
      const states = running.map((shard) => {
        const { members, view } = shard.process.find('shard.ownership').at(-1) ?? {};
        const drained = shard.process.find('shard.drained').at(-1)?.view;
        const changes = shard.process.lines
          .filter((line) => line.msg === 'shard.member.joined' || line.msg === 'shard.member.left')
          .map((line) => `${line.msg === 'shard.member.joined' ? '+' : '-'}${String(line.joined ?? line.left)}`);
        const exit = shard.process.find('exit').at(-1);
        const failure = shard.process.lines.filter((line) => Number(line.level) >= 40).at(-1);
        const end = exit
          ? ` EXITED (${JSON.stringify(exit.code)}) after ${String(failure?.msg)}: ${JSON.stringify(failure?.err ?? '').slice(0, 300)};`
          : '';
        return `${shard.name}:${end} last ownership ${JSON.stringify(members)} view ${String(view)}, last drained view ${String(drained)}; members seen: ${changes.join(' ')}`;
      });
      throw new Error(`${error.message}\n${states.join('\n')}`, { cause: error });
    });
  }

  /**
   * Writes each shard's log lines (JSON, one per line) to `<dir>/<name>.log`, for reading a failed run after the fact;
   * answers `dir`.
   */
  async writeLogs(dir: string): Promise<string> {
    await mkdir(dir, { recursive: true });
    for (const shard of this.shards.values()) {
      await writeFile(join(dir, `${shard.name}.log`), shard.process.lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
    }
    return dir;
  }

  /** Kills every process still running (SIGKILL) and waits for the exits. */
  async dispose(): Promise<void> {
    await Promise.all([...this.shards.values()].map((shard) => shard.process.dispose()));
  }
}
