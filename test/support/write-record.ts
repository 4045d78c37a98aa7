// Who wrote what, and when, from the API server's side: the emulator's write record, or kube-apiserver's audit log.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auditFlags, auditTimeMs, writesAuditPolicy } from '../../envtest/audit.js';
import { type ApiTarget, startCluster, type ClusterOptions, type TestCluster } from './targets.js';
import { parseJsonLines } from './json-lines.js';

/** One write as the API server saw it. */
export interface RecordedWrite {
  /** The authenticated user that sent it. */
  readonly user: string;
  readonly verb: string;
  /** The API group ('' for the core group). */
  readonly group: string;
  /** The resource without its subresource (`deployments`, `customapps`). */
  readonly resource: string;
  /** `status`, `scale`, or '' for the object itself. */
  readonly subresource: string;
  readonly namespace: string;
  /** The object's name ('' when the server did not tell it, as for a create that failed before naming one). */
  readonly name: string;
  /** Epoch milliseconds (sub-millisecond precision) when the server received it. */
  readonly receivedMs: number;
  /** When the server completed it (epoch milliseconds). */
  readonly completedMs: number;
  /** The response status code (0: the connection closed before an answer). */
  readonly code: number;
}

/** A test cluster whose API server records the writes of every member of `userGroups`. */
export interface RecordingCluster {
  readonly cluster: TestCluster;
  /** The writes completed so far, in the order the server received them. */
  writes(): Promise<RecordedWrite[]>;
  /** Stops the cluster and removes its record. */
  stop(): Promise<void>;
}

interface AuditEvent {
  stage?: string;
  verb?: string;
  user?: { username?: string };
  objectRef?: { resource?: string; namespace?: string; name?: string; apiGroup?: string; subresource?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp?: string;
  stageTimestamp?: string;
}

/** The writes in an audit log of {@link writesAuditPolicy} (one ResponseComplete line per write). */
export function auditedWrites(log: string): RecordedWrite[] {
  const writes: RecordedWrite[] = [];
  for (const event of parseJsonLines<AuditEvent>(log)) {
    if (event.stage !== 'ResponseComplete' && event.stage !== 'Panic') continue;
    const ref = event.objectRef ?? {};
    writes.push({
      user: event.user?.username ?? '',
      verb: event.verb ?? '',
      group: ref.apiGroup ?? '',
      resource: ref.resource ?? '',
      subresource: ref.subresource ?? '',
      namespace: ref.namespace ?? '',
      name: ref.name ?? '',
      receivedMs: auditTimeMs(event.requestReceivedTimestamp ?? ''),
      completedMs: auditTimeMs(event.stageTimestamp ?? ''),
      code: event.responseStatus?.code ?? 0,
    });
  }
  return writes.sort((a, b) => a.receivedMs - b.receivedMs);
}

/**
 * Starts a cluster of `target` that records the writes of the members of `userGroups`: on the emulator its write
 * record (`recordWrites`), on envtest kube-apiserver's audit log with {@link writesAuditPolicy}.
 */
export async function startRecordingCluster(
  target: ApiTarget,
  userGroups: readonly string[],
  options: ClusterOptions = {},
): Promise<RecordingCluster> {
  if (target === 'emulator') {
    const cluster = await startCluster(target, { ...options, emulator: { ...options.emulator, recordWrites: true } });
    const emulator = cluster.emulator!;
    return {
      cluster,
      writes: async () =>
        emulator.writes
          .writes()
          .filter((write) => write.completedMs !== undefined && userGroups.some((group) => inGroup(write.user, group)))
          .map(({ resource, userAgent: _agent, completedMs, code, ...write }) => {
            const [plain = '', subresource = ''] = resource.split('/');
            return { ...write, resource: plain, subresource, completedMs: completedMs!, code: code ?? 0 };
          }),
      stop: () => cluster.stop(),
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'customapp-audit-'));
  const policyPath = join(dir, 'audit-policy.yaml');
  const logPath = join(dir, 'audit.log');
  writeFileSync(policyPath, writesAuditPolicy(userGroups));
  const envtest = { ...options.envtest, apiserverArgs: [...(options.envtest?.apiserverArgs ?? []), ...auditFlags(policyPath, logPath)] };
  const cluster = await startCluster(target, { ...options, envtest }).catch((error: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  });
  return {
    cluster,
    writes: async () => auditedWrites(await readFile(logPath, 'utf8').catch(() => '')),
    stop: async () => {
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Whether `user` is in `group`, for the groups a ServiceAccount's token carries (the emulator records the user, not
 * its groups): `system:serviceaccounts` and `system:serviceaccounts:<namespace>`.
 */
function inGroup(user: string, group: string): boolean {
  const account = /^system:serviceaccount:([^:]+):[^:]+$/.exec(user);
  if (!account) return false;
  return group === 'system:serviceaccounts' || group === `system:serviceaccounts:${account[1]}`;
}
