// The command line of the operator, with controller-runtime's flag names; bad flags fail with the offending input.
import { parseArgs } from 'node:util';
import { LEADER_ELECTION_LEASE, OPERATOR_NAMESPACE } from '../api/customapp.js';
import { watchedNamespacesProblem } from '../infra/permissions.js';
import { WORKLOAD_KINDS, type WorkloadResource } from '../api/workload.js';
import { parseBindAddress, type BindAddress } from './http/bind-address.js';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from './log.js';

/** The media types `--kube-api-content-type` takes, as kube-controller-manager's flag of that name does. */
export const KUBE_API_CONTENT_TYPES = ['application/vnd.kubernetes.protobuf', 'application/json'] as const;
export type KubeApiContentType = (typeof KUBE_API_CONTENT_TYPES)[number];

/** The parsed command line. */
export interface Flags {
  /** `--kubeconfig`: a kubeconfig file. @default resolution order (KUBECONFIG, in-cluster, ~/.kube/config, embedded) */
  readonly kubeconfig?: string;
  /**
   * `--namespaces` (or `--namespace` for one): watch only these namespaces, each a DNS-1123 label, each once.
   * @default all namespaces
   */
  readonly namespaces?: readonly string[];
  /** `--metrics-bind-address`: where /metrics listens; `0` disables it. @default ":8080" */
  readonly metricsBindAddress?: BindAddress;
  /** `--health-probe-bind-address`: where /healthz and /readyz listen; `0` disables them. @default ":8081" */
  readonly healthProbeBindAddress?: BindAddress;
  /** `--metrics-secure`: /metrics over HTTPS with authentication and authorization; false for plain HTTP. @default true */
  readonly metricsSecure: boolean;
  /** `--metrics-cert-dir`: `tls.crt` and `tls.key` for /metrics, reloaded on change. @default a self-signed certificate */
  readonly metricsCertDir?: string;
  /** `--leader-elect`: reconcile only while holding the Lease. @default false */
  readonly leaderElect: boolean;
  /** `--leader-election-namespace`: where the Lease lives. @default "customapp-system" */
  readonly leaderElectionNamespace: string;
  /** `--leader-election-id`: the Lease's name. @default "customapp-operator-leader" */
  readonly leaderElectionId: string;
  /** `--leader-elect-lease-duration`: how long others wait before taking over a Lease not renewed. @default 15 s */
  readonly leaseDurationMs: number;
  /** `--leader-elect-renew-deadline`: how long the leader retries renewing before it gives up. @default 10 s */
  readonly renewDeadlineMs: number;
  /** `--leader-elect-retry-period`: the interval between attempts to acquire or renew. @default 2 s */
  readonly retryPeriodMs: number;
  /** `--log-level`. @default "info" */
  readonly logLevel: LogLevel;
  /** `--log-format`: auto (pretty on a terminal, JSON otherwise), json or pretty. @default "auto" */
  readonly logFormat: LogFormat;
  /** `--max-concurrent-reconciles`: workers (different keys only: one key never runs twice at once). @default 4 */
  readonly maxConcurrentReconciles: number;
  /** `--max-concurrent-rollouts`: rollouts caused by ConfigMap or Secret content in progress at once; 0 = unlimited. @default 10 */
  readonly maxConcurrentRollouts: number;
  /** `--flap-threshold`: more content changes than this of one object within the window open its breaker (its apps wait); 0 = off. @default 5 */
  readonly flapThreshold: number;
  /** `--flap-window`: the flap breaker's window, and how long a flapping object must stay unchanged. @default 60 s */
  readonly flapWindowMs: number;
  /**
   * `--workloads`: the workload kinds served by annotation (`deployments,statefulsets,daemonsets,rollouts`). @default none: a
   * CustomApp-only operator watches nothing more, and needs no more permissions
   */
  readonly workloads: readonly WorkloadResource[];
  /**
   * `--sharding`: every replica holds its own Lease in `--leader-election-namespace` and reconciles its share of the
   * objects (rendezvous hashing over the live replicas). Takes the place of `--leader-elect` (ignored with it). @default false
   */
  readonly sharding: boolean;
  /** `--shard-identity`: this replica's name in the ring (its Lease is named after it). @default POD_NAME, else the hostname */
  readonly shardIdentity?: string;
  /**
   * `--kube-api-content-type`: what the client asks kube-apiserver for where it can read protobuf (ConfigMaps and
   * Secrets; custom resources and the rest are JSON either way). @default "application/vnd.kubernetes.protobuf"
   */
  readonly kubeApiContentType: KubeApiContentType;
  /** `--help`. */
  readonly help: boolean;
  /** The names of the flags given on the command line (without `--`), to tell a chosen value from a default. */
  readonly explicit: ReadonlySet<string>;
}

/** The flag that sets each endpoint's address (`listenOn`'s endpoint names), to name it when the address is busy. */
export const ENDPOINT_FLAGS = { metrics: 'metrics-bind-address', probes: 'health-probe-bind-address' } as const;

interface FlagSpec {
  readonly name: string;
  readonly kind: 'string' | 'boolean';
  readonly help: string;
  readonly placeholder?: string;
}

const SPECS: readonly FlagSpec[] = [
  {
    name: 'kubeconfig',
    kind: 'string',
    placeholder: 'path',
    help: 'kubeconfig file; else KUBECONFIG, in-cluster config, ~/.kube/config, and with none of those the embedded emulator',
  },
  {
    name: 'namespaces',
    kind: 'string',
    placeholder: 'names',
    help: 'watch only these namespaces, comma-separated: CustomApps, their Deployments, Services, Events, ConfigMaps and Secrets, and workloads (default: all namespaces; RBAC: a Role in each)',
  },
  { name: 'namespace', kind: 'string', placeholder: 'name', help: 'watch this one namespace only: the same as --namespaces=<name>' },
  {
    name: 'metrics-bind-address',
    kind: 'string',
    placeholder: 'addr',
    help: 'where /metrics listens, [host]:port; "0" disables it (default ":8080", or a free port when that one is busy in the embedded default)',
  },
  {
    name: 'health-probe-bind-address',
    kind: 'string',
    placeholder: 'addr',
    help: 'where /healthz and /readyz listen, [host]:port; "0" disables them (default ":8081", or a free port when busy in the embedded default)',
  },
  {
    name: 'metrics-secure',
    kind: 'boolean',
    help: 'serve /metrics over HTTPS, each request authenticated (TokenReview) and authorized (SubjectAccessReview: get on /metrics); =false for plain HTTP (default true)',
  },
  {
    name: 'metrics-cert-dir',
    kind: 'string',
    placeholder: 'dir',
    help: 'directory holding tls.crt and tls.key for /metrics, reloaded when they change (default: self-signed at start)',
  },
  {
    name: 'leader-elect',
    kind: 'boolean',
    help: 'reconcile only while holding the leader-election Lease (15 s lease, 10 s renew deadline, 2 s retry)',
  },
  {
    name: 'leader-election-namespace',
    kind: 'string',
    placeholder: 'name',
    help: `namespace of the Lease (default "${OPERATOR_NAMESPACE}")`,
  },
  { name: 'leader-election-id', kind: 'string', placeholder: 'name', help: `name of the Lease (default "${LEADER_ELECTION_LEASE}")` },
  {
    name: 'leader-elect-lease-duration',
    kind: 'string',
    placeholder: 'duration',
    help: 'how long a Lease not renewed stays held, e.g. 15s (default 15s)',
  },
  {
    name: 'leader-elect-renew-deadline',
    kind: 'string',
    placeholder: 'duration',
    help: 'how long the leader retries renewing before it steps down (default 10s)',
  },
  {
    name: 'leader-elect-retry-period',
    kind: 'string',
    placeholder: 'duration',
    help: 'interval between attempts to acquire or renew (default 2s)',
  },
  { name: 'log-level', kind: 'string', placeholder: 'level', help: `${LOG_LEVELS.join('|')} (default "info")` },
  {
    name: 'log-format',
    kind: 'string',
    placeholder: 'format',
    help: `${LOG_FORMATS.join('|')}; auto is pretty on a terminal, JSON otherwise (default "auto")`,
  },
  { name: 'max-concurrent-reconciles', kind: 'string', placeholder: 'n', help: 'CustomApps reconciled at once (default 4)' },
  {
    name: 'max-concurrent-rollouts',
    kind: 'string',
    placeholder: 'n',
    help: 'rollouts caused by ConfigMap or Secret content in progress at once, cluster-wide; the rest queue (default 10; 0 = unlimited)',
  },
  {
    name: 'flap-threshold',
    kind: 'string',
    placeholder: 'n',
    help: "more content changes than this of one ConfigMap or Secret within --flap-window open its flap breaker: its apps' rollouts wait (default 5; 0 = off)",
  },
  {
    name: 'flap-window',
    kind: 'string',
    placeholder: 'duration',
    help: 'the flap breaker window; an object whose breaker is open rolls once it has not changed for this long (default 60s)',
  },
  {
    name: 'workloads',
    kind: 'string',
    placeholder: 'kinds',
    help: `existing workloads that roll, by annotation, on the ConfigMaps and Secrets they use: a comma-separated list of ${Object.keys(WORKLOAD_KINDS).join(', ')} (default none)`,
  },
  {
    name: 'sharding',
    kind: 'boolean',
    help: "share the work among replicas: each holds its own Lease in --leader-election-namespace and reconciles its share of the objects (takes the place of --leader-elect's one leader)",
  },
  {
    name: 'shard-identity',
    kind: 'string',
    placeholder: 'name',
    help: "this replica's name in the ring, a DNS-1123 label (default: POD_NAME, else the hostname)",
  },
  {
    name: 'kube-api-content-type',
    kind: 'string',
    placeholder: 'type',
    help: `${KUBE_API_CONTENT_TYPES.join('|')}: how ConfigMaps and Secrets are read from kube-apiserver (default protobuf; JSON when the server does not serve it)`,
  },
  { name: 'help', kind: 'boolean', help: 'print this help and exit' },
];

/** The `--help` text. */
export function usage(): string {
  const rows = SPECS.map((spec) => {
    const left = `  --${spec.name}${spec.placeholder ? ` <${spec.placeholder}>` : ''}`;
    return `${left.padEnd(44)} ${spec.help}`;
  });
  return [
    'Usage: npm start -- [flags]   (or: tsx operator/main.ts [flags])',
    '',
    'Runs the CustomApp operator.',
    '',
    'Flags:',
    ...rows,
    '',
  ].join('\n');
}

/** `250ms`, `2s`, `1m` → milliseconds. */
function duration(flag: string, value: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(value);
  if (!match) throw new Error(`--${flag}: "${value}" is not a duration (for example 15s, 500ms, 1m)`);
  const ms = Number(match[1]) * { ms: 1, s: 1000, m: 60_000 }[match[2] as 'ms' | 's' | 'm'];
  if (ms <= 0) throw new Error(`--${flag}: "${value}" must be longer than 0`);
  return ms;
}

/** `deployments,statefulsets` → the kinds; an unknown or repeated name fails, quoted. */
function parseWorkloads(value: string | undefined): WorkloadResource[] {
  if (value === undefined || value === '') return [];
  const names = value.split(',').map((name) => name.trim());
  for (const name of names) {
    if (!(name in WORKLOAD_KINDS)) {
      throw new Error(`--workloads: "${name}" is not one of ${Object.keys(WORKLOAD_KINDS).join(', ')} (a comma-separated list)`);
    }
  }
  if (new Set(names).size !== names.length) throw new Error(`--workloads: "${value}" names a kind twice`);
  return names as WorkloadResource[];
}

/**
 * `--namespaces=a,b` or its one-namespace alias `--namespace=a` → the namespaces; neither → undefined (all of them).
 * An empty list or name, a name that is not a DNS-1123 label, a name given twice or both flags at once fails, quoted.
 */
function parseNamespaces(list: string | undefined, one: string | undefined): string[] | undefined {
  if (list !== undefined && one !== undefined) {
    throw new Error(`--namespace "${one}" and --namespaces "${list}" both given: use --namespaces=${[one, list].join(',')}`);
  }
  const value = list ?? one;
  if (value === undefined) return undefined;
  const names = value.trim() === '' ? [] : value.split(',').map((name) => name.trim());
  const problem = watchedNamespacesProblem(names);
  if (problem) throw new Error(`--${one === undefined ? 'namespaces' : 'namespace'}: ${problem}`);
  return names;
}

function closest(name: string): string | undefined {
  const candidates = SPECS.map((spec) => spec.name);
  return candidates.find(
    (candidate) => candidate.startsWith(name) || name.startsWith(candidate) || candidate.replace(/-/g, '') === name.replace(/[-_]/g, ''),
  );
}

/**
 * Each flag given in `argv` and its value, as written (a boolean flag's as true or false); throws, quoting it, on an
 * argument that is not a flag, an unknown flag (with the closest known one), or a flag without its value.
 */
function flagValues(argv: readonly string[]): Map<string, string | boolean> {
  const options = Object.fromEntries(SPECS.map((spec) => [spec.name, { type: spec.kind }]));
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const values = new Map<string, string | boolean>();
  for (const token of tokens) {
    if (token.kind === 'positional') throw new Error(`unexpected argument "${token.value}": flags look like --name=value (see --help)`);
    if (token.kind === 'option-terminator') throw new Error('unexpected argument "--": flags look like --name=value (see --help)');
    const { name, value } = token;
    const spec = SPECS.find((candidate) => candidate.name === name);
    if (!spec) {
      const hint = closest(name);
      throw new Error(`unknown flag "${token.rawName}"${hint ? `; did you mean "--${hint}"?` : ''} (see --help)`);
    }
    if (spec.kind === 'boolean') {
      if (value === undefined) values.set(name, true);
      else if (value === 'true' || value === 'false') values.set(name, value === 'true');
      else throw new Error(`--${name}: "${value}" is not true or false`);
    } else if (value === undefined) {
      throw new Error(`--${name} needs a value (--${name}=<${spec.placeholder ?? 'value'}>)`);
    } else values.set(name, value);
  }
  return values;
}

/**
 * Parses `argv` (without node and the script). node:util's `parseArgs` reads the tokens (`--name=value`,
 * `--name value`, `--flag`); the checks here make each error quote the offending flag or value, suggest the flag
 * meant, and accept `--flag=true|false` as Go's flag package (and so controller-runtime) does.
 */
export function parseFlags(argv: readonly string[]): Flags {
  const values = flagValues(argv);
  const text = (name: string): string | undefined => values.get(name) as string | undefined;
  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const value = text(name) ?? fallback;
    if (!allowed.includes(value as T)) throw new Error(`--${name}: "${value}" is not one of ${allowed.join(', ')}`);
    return value as T;
  };
  const workersText = text('max-concurrent-reconciles') ?? '4';
  const workers = Number(workersText);
  if (!/^\d+$/.test(workersText) || workers < 1) throw new Error(`--max-concurrent-reconciles: "${workersText}" is not a positive integer`);
  const count = (name: string, fallback: string): number => {
    const value = text(name) ?? fallback;
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new Error(`--${name}: "${value}" is not an integer ≥ 0`);
    return Number(value);
  };
  const maxConcurrentRollouts = count('max-concurrent-rollouts', '10');
  const flapThreshold = count('flap-threshold', '5');
  const flapWindowMs = duration('flap-window', text('flap-window') ?? '60s');
  const namespaces = parseNamespaces(text('namespaces'), text('namespace'));
  const leaseDurationMs = duration('leader-elect-lease-duration', text('leader-elect-lease-duration') ?? '15s');
  const renewDeadlineMs = duration('leader-elect-renew-deadline', text('leader-elect-renew-deadline') ?? '10s');
  const retryPeriodMs = duration('leader-elect-retry-period', text('leader-elect-retry-period') ?? '2s');
  if (!(leaseDurationMs > renewDeadlineMs && renewDeadlineMs > retryPeriodMs)) {
    throw new Error(
      `leader election needs lease duration > renew deadline > retry period, got ${leaseDurationMs} ms, ${renewDeadlineMs} ms, ${retryPeriodMs} ms`,
    );
  }
  const workloads = parseWorkloads(text('workloads'));
  const sharding = values.get('sharding') === true;
  const shardIdentity = text('shard-identity');
  if (shardIdentity !== undefined && !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(shardIdentity)) {
    throw new Error(`--shard-identity: "${shardIdentity}" is not a DNS-1123 label (lower case letters, digits and '-', at most 63)`);
  }
  if (shardIdentity !== undefined && !sharding) throw new Error(`--shard-identity "${shardIdentity}" needs --sharding`);
  const metricsSecure = values.get('metrics-secure') !== false;
  const metricsCertDir = text('metrics-cert-dir');
  if (metricsCertDir !== undefined && !metricsSecure) {
    throw new Error(`--metrics-cert-dir "${metricsCertDir}" needs HTTPS metrics: drop --metrics-secure=false`);
  }
  return {
    kubeconfig: text('kubeconfig'),
    namespaces,
    metricsBindAddress: parseBindAddress('--metrics-bind-address', text('metrics-bind-address') ?? ':8080'),
    healthProbeBindAddress: parseBindAddress('--health-probe-bind-address', text('health-probe-bind-address') ?? ':8081'),
    metricsSecure,
    metricsCertDir,
    leaderElect: values.get('leader-elect') === true,
    leaderElectionNamespace: text('leader-election-namespace') ?? OPERATOR_NAMESPACE,
    leaderElectionId: text('leader-election-id') ?? LEADER_ELECTION_LEASE,
    leaseDurationMs,
    renewDeadlineMs,
    retryPeriodMs,
    logLevel: oneOf('log-level', LOG_LEVELS, 'info'),
    logFormat: oneOf('log-format', LOG_FORMATS, 'auto'),
    kubeApiContentType: oneOf('kube-api-content-type', KUBE_API_CONTENT_TYPES, 'application/vnd.kubernetes.protobuf'),
    maxConcurrentReconciles: workers,
    maxConcurrentRollouts,
    flapThreshold,
    flapWindowMs,
    workloads,
    sharding,
    shardIdentity,
    help: values.get('help') === true,
    explicit: new Set(values.keys()),
  };
}
