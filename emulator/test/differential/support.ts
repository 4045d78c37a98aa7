// Differential testing: the same request sequence against the emulator and envtest (the real kube-apiserver),
// answers normalised (uids, resourceVersions, timestamps, allocated IPs) so they can be compared for equality.
import { request as httpsRequest } from 'node:https';
import type { ExecutionContext, TestFn } from 'ava';
import { type Envtest, httpsJson, startEnvtest } from '../../../envtest/harness.js';
import { eventually } from '../../../test/support/eventually.js';
import { JsonLineReader } from '../../../test/support/json-lines.js';
import { type Emulator, startEmulator } from '../../index.js';

export interface Answer {
  readonly status: number;
  readonly body: any;
  readonly headers: Record<string, string | string[] | undefined>;
}

export interface RequestOptions {
  readonly token?: string;
  readonly accept?: string;
  readonly contentType?: string;
}

export interface DiffWatch {
  /** The next `n` events (throws after the timeout). */
  take(n: number, timeoutMs?: number): Promise<any[]>;
  /** Whether the server ended the stream within `timeoutMs`. */
  ended(timeoutMs: number): Promise<boolean>;
  close(): void;
}

/** One server under test, spoken to over https. */
export interface Target {
  readonly name: 'emulator' | 'envtest';
  readonly adminToken: string;
  request(method: string, path: string, body?: unknown, options?: RequestOptions): Promise<Answer>;
  watch(path: string, token?: string): Promise<DiffWatch>;
  /** A token of a ServiceAccount (created when missing), from TokenRequest. */
  serviceAccountToken(namespace: string, name: string): Promise<string>;
}

function httpsTarget(name: Target['name'], server: string, ca: string | undefined, adminToken: string): Target {
  const tls = ca === undefined ? { rejectUnauthorized: false } : { ca };
  const send = (method: string, path: string, body: unknown, options: RequestOptions = {}): Promise<Answer> =>
    httpsJson(server, method, path, body, { ...options, ca, token: options.token ?? adminToken });
  const watch = (path: string, token?: string): Promise<DiffWatch> =>
    new Promise((resolve, reject) => {
      const req = httpsRequest(new URL(path, server), { ...tls, headers: { Authorization: `Bearer ${token ?? adminToken}` } }, (res) => {
        const events: any[] = [];
        const lines = new JsonLineReader((event) => events.push(event));
        res.on('data', (c: Buffer) => lines.push(c));
        // Waits for the stream's state without failing itself: the caller words the failure.
        const until = (what: string, condition: () => boolean, timeoutMs: number): Promise<unknown> =>
          eventually(what, condition, timeoutMs, 10).catch(() => undefined);
        resolve({
          async take(n, timeoutMs = 5000) {
            await until(`${n} watch events`, () => events.length >= n || res.readableEnded, timeoutMs);
            if (events.length < n)
              throw new Error(`${name}: ${events.length} of ${n} watch events on ${path}: ${JSON.stringify(events.map((e) => e.type))}`);
            return events.splice(0, n);
          },
          async ended(timeoutMs) {
            await until('the end of the stream', () => res.readableEnded, timeoutMs);
            return res.readableEnded;
          },
          close: () => req.destroy(),
        });
      });
      req.on('error', (e) => ((e as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(e)));
      req.end();
    });
  return {
    name,
    adminToken,
    request: (method, path, body, options) => send(method, path, body, options),
    watch,
    async serviceAccountToken(namespace, sa) {
      await send('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, { metadata: { name: sa } });
      const answer = await send('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${sa}/token`, {
        spec: { expirationSeconds: 3600 },
      });
      if (answer.status !== 201) throw new Error(`${name}: TokenRequest ${answer.status} ${JSON.stringify(answer.body)}`);
      return answer.body.status.token as string;
    },
  };
}

export interface Pair {
  readonly emulator: Target;
  readonly envtest: Target;
  close(): Promise<void>;
}

/**
 * Starts an emulator and an envtest (one per test file). When one fails to start, the other is stopped before the
 * failure propagates: a running emulator left behind kept a CI worker alive (its bookmark ticker and listener) and
 * ava waited for it without end.
 */
export async function startPair(): Promise<Pair> {
  const [started, built] = await Promise.allSettled([startEmulator({ port: 0 }), startEnvtest()]);
  if (started.status === 'rejected' || built.status === 'rejected') {
    await Promise.all([
      started.status === 'fulfilled' ? started.value.close() : undefined,
      built.status === 'fulfilled' ? built.value.stop() : undefined,
    ]);
    throw started.status === 'rejected' ? started.reason : (built as PromiseRejectedResult).reason;
  }
  const [emulator, envtest]: [Emulator, Envtest] = [started.value, built.value];
  return {
    emulator: httpsTarget('emulator', emulator.httpsUrl, undefined, emulator.adminToken),
    envtest: httpsTarget('envtest', envtest.server, envtest.caPem, envtest.adminToken),
    close: async () => {
      await Promise.all([emulator.close(), envtest.stop()]);
    },
  };
}

/** What a differential file shares: its pair of servers, and {@link sameOnBoth} on that pair. */
export interface PairSuite {
  /** The pair started by the file's `before` hook. */
  readonly pair: Pair;
  /** {@link sameOnBoth} on the file's pair. */
  same(t: ExecutionContext, ns: string, sequence: (target: Target, ns: string) => Promise<unknown[]>): Promise<void>;
}

/**
 * Registers a differential file's hooks: `before` starts the pair and runs `setup` on it (what every test of the file
 * needs on both servers), `after.always` stops it.
 */
export function pairSuite(test: TestFn, setup?: (pair: Pair) => Promise<unknown>): PairSuite {
  let started: Pair | undefined;
  test.before(async () => {
    started = await startPair();
    await setup?.(started);
  });
  test.after.always(async () => {
    await started?.close();
  });
  const pair = (): Pair => {
    if (started === undefined) throw new Error('the differential pair is not started: use it inside a test');
    return started;
  };
  return {
    get pair() {
      return pair();
    },
    same: (t, ns, sequence) => sameOnBoth(t, pair(), ns, sequence),
  };
}

/** Runs the same sequence against both servers (concurrently) and returns [emulator, envtest] results. */
export async function onBoth<T>(pair: Pair, sequence: (target: Target) => Promise<T>): Promise<[T, T]> {
  return Promise.all([sequence(pair.emulator), sequence(pair.envtest)]);
}

/**
 * Runs `sequence` on both servers in a fresh namespace `ns` and compares the normalised results step by step (one
 * assertion per step, so that a failure names the step).
 */
export async function sameOnBoth(
  t: ExecutionContext,
  pair: Pair,
  ns: string,
  sequence: (target: Target, ns: string) => Promise<unknown[]>,
): Promise<void> {
  const [emulator, envtest] = await onBoth(pair, async (target) => {
    await target.request('POST', '/api/v1/namespaces', { metadata: { name: ns } });
    return sequence(target, ns);
  });
  const a = normalize(emulator) as unknown[];
  const b = normalize(envtest) as unknown[];
  t.is(a.length, b.length);
  for (let i = 0; i < Math.max(a.length, b.length); i++) t.deepEqual(a[i], b[i], `step ${i}`);
}

const timestampPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const uidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const uidsInText = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

/** operation, manager, apiVersion, subresource: the apiserver's managedFields order when the times are equal. */
function managedFieldsKey(entry: unknown): string {
  const e = entry as { operation?: string; manager?: string; apiVersion?: string; subresource?: string };
  return [e.operation ?? '', e.manager ?? '', e.apiVersion ?? '', e.subresource ?? ''].join('\u0000');
}

/**
 * Replaces what legitimately differs between two servers: uids (numbered by first appearance), object
 * resourceVersions (by rank), list and bookmark resourceVersions, timestamps, continue tokens, allocated IPs and
 * ports, the order of Invalid causes (the apiserver's validator iterates Go maps), and the order of managedFields
 * entries, which depends on their times.
 */
export function normalize(value: unknown): unknown {
  const uids = new Map<string, string>();
  const rvs = new Set<number>();
  const isObjectMeta = (v: unknown): v is { name: string; resourceVersion?: string } =>
    v !== null && typeof v === 'object' && !Array.isArray(v) && typeof (v as { name?: unknown }).name === 'string';
  const collect = (v: unknown, key: string) => {
    if (Array.isArray(v))
      v.forEach((x) => {
        collect(x, key);
      });
    else if (v !== null && typeof v === 'object') {
      if (key === 'metadata' && isObjectMeta(v) && typeof v.resourceVersion === 'string' && /^\d+$/.test(v.resourceVersion))
        rvs.add(Number(v.resourceVersion));
      for (const [k, x] of Object.entries(v)) collect(x, k);
    }
  };
  collect(value, '');
  const rank = new Map([...rvs].sort((a, b) => a - b).map((rv, i) => [String(rv), `rv#${i + 1}`]));
  const walk = (v: unknown, key: string, inObjectMeta: boolean): unknown => {
    if (Array.isArray(v)) {
      const items = v.map((x) => walk(x, key, false));
      if (key === 'causes') return [...items].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
      // The apiserver orders managedFields by operation, then by each entry's time in whole seconds: two servers
      // whose writes fall on either side of a second boundary legitimately differ. With times normalised away,
      // compare in the order equal times give (emulator/managedfields.test.ts checks the time ordering itself).
      if (key === 'managedFields') return [...items].sort((a, b) => managedFieldsKey(a).localeCompare(managedFieldsKey(b)));
      return items;
    }
    if (v !== null && typeof v === 'object') {
      const objectMeta = key === 'metadata' && isObjectMeta(v);
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) out[k] = walk((v as Record<string, unknown>)[k], k, objectMeta);
      return out;
    }
    if (typeof v !== 'string') return key === 'nodePort' && typeof v === 'number' ? '<nodePort>' : v;
    if (uidPattern.test(v)) {
      if (!uids.has(v)) uids.set(v, `uid#${uids.size + 1}`);
      return uids.get(v);
    }
    if (uidsInText.test(v)) {
      return v.replace(new RegExp(uidsInText.source, 'g'), (uid) => {
        if (!uids.has(uid)) uids.set(uid, `uid#${uids.size + 1}`);
        return uids.get(uid)!;
      });
    }
    if (timestampPattern.test(v)) return '<time>';
    if (key === 'resourceVersion') return inObjectMeta ? (rank.get(v) ?? '<rv>') : '<rv>';
    if (key === 'continue') return '<continue>';
    if (key === 'clusterIP' || key === 'clusterIPs' || /^10\.0\.0\.\d+$/.test(v)) return '<ip>';
    if (key === 'message' && /in record \(\d+\)/.test(v))
      return v.replace(/in record \((\d+)\)/, (_, rv) => `in record (${rank.get(rv) ?? '<rv>'})`);
    if (key === 'message' && v.includes('is invalid: [')) {
      const m = /^(.*is invalid: \[)(.*)(\])$/s.exec(v);
      if (m !== null)
        return `${m[1]}${m[2]
          .split(/, (?=[a-zA-Z.[\]0-9]+: )/)
          .sort()
          .join(', ')}${m[3]}`;
    }
    return v;
  };
  return walk(value, '', false);
}

/** An answer reduced to what the comparison looks at: status code and normalised body. */
export function outcome(answer: Answer): unknown {
  return normalize({ status: answer.status, body: answer.body });
}
