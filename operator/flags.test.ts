// Tests of the command line: defaults, every flag, and errors that quote the offending input.
import test from 'ava';
import { parseBindAddress } from './http/bind-address.js';
import { parseFlags, usage } from './flags.js';

test("with no flags, the defaults are controller-runtime's", (t) => {
  t.like(parseFlags([]), {
    kubeconfig: undefined,
    namespaces: undefined,
    metricsBindAddress: { host: undefined, port: 8080 },
    healthProbeBindAddress: { host: undefined, port: 8081 },
    metricsSecure: true,
    metricsCertDir: undefined,
    leaderElect: false,
    leaderElectionNamespace: 'customapp-system',
    leaderElectionId: 'customapp-operator-leader',
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
    logLevel: 'info',
    logFormat: 'auto',
    maxConcurrentReconciles: 4,
    maxConcurrentRollouts: 10,
    flapThreshold: 5,
    flapWindowMs: 60_000,
    sharding: false,
    shardIdentity: undefined,
    kubeApiContentType: 'application/vnd.kubernetes.protobuf',
    help: false,
  });
  t.deepEqual([...parseFlags([]).explicit], []);
});

test('explicit lists the flags given, so that a chosen address can be told from a default', (t) => {
  const flags = parseFlags(['--metrics-bind-address=:8080', '--log-format', 'json']);
  t.deepEqual([...flags.explicit].sort(), ['log-format', 'metrics-bind-address']);
  t.like(flags, { metricsBindAddress: { port: 8080 }, logFormat: 'json' });
});

test('every flag is read, in --name=value and --name value forms', (t) => {
  const flags = parseFlags([
    '--kubeconfig=/tmp/kc',
    '--namespace',
    'team-a',
    '--metrics-bind-address=127.0.0.1:9090',
    '--health-probe-bind-address',
    '0',
    '--leader-elect',
    '--leader-election-namespace=ops',
    '--leader-election-id=my-lease',
    '--leader-elect-lease-duration=4s',
    '--leader-elect-renew-deadline=3s',
    '--leader-elect-retry-period=500ms',
    '--log-level=debug',
    '--log-format=pretty',
    '--max-concurrent-reconciles=8',
    '--max-concurrent-rollouts=3',
    '--flap-threshold',
    '0',
    '--flap-window=90s',
    '--kube-api-content-type=application/json',
  ]);
  t.like(flags, {
    kubeconfig: '/tmp/kc',
    namespaces: ['team-a'],
    metricsBindAddress: { host: '127.0.0.1', port: 9090 },
    healthProbeBindAddress: undefined,
    leaderElect: true,
    leaderElectionNamespace: 'ops',
    leaderElectionId: 'my-lease',
    leaseDurationMs: 4_000,
    renewDeadlineMs: 3_000,
    retryPeriodMs: 500,
    logLevel: 'debug',
    logFormat: 'pretty',
    maxConcurrentReconciles: 8,
    maxConcurrentRollouts: 3,
    flapThreshold: 0,
    flapWindowMs: 90_000,
    kubeApiContentType: 'application/json',
  });
  t.is(parseFlags(['--max-concurrent-rollouts=0']).maxConcurrentRollouts, 0, '0 turns the budget off');
  t.false(parseFlags(['--leader-elect=false']).leaderElect);
  t.like(parseFlags(['--metrics-cert-dir=/certs']), { metricsSecure: true, metricsCertDir: '/certs' });
  t.like(parseFlags(['--metrics-secure=false']), { metricsSecure: false, metricsCertDir: undefined });
  t.true(parseFlags(['--metrics-secure']).metricsSecure);
  t.true(parseFlags(['--help']).help);
});

const bad: Array<[readonly string[], RegExp]> = [
  [['--nope'], /unknown flag "--nope"/],
  [['--leader-elec'], /unknown flag "--leader-elec"; did you mean "--leader-elect"\?/],
  [['--log-format=xml'], /--log-format: "xml" is not one of auto, json, pretty/],
  [
    ['--kube-api-content-type=application/yaml'],
    /--kube-api-content-type: "application\/yaml" is not one of application\/vnd.kubernetes.protobuf, application\/json/,
  ],
  [['--log-level=loud'], /--log-level: "loud" is not one of trace, debug/],
  [['--max-concurrent-reconciles=0'], /"0" is not a positive integer/],
  [['--max-concurrent-reconciles=two'], /"two" is not a positive integer/],
  [['--max-concurrent-rollouts=-1'], /--max-concurrent-rollouts: "-1" is not an integer ≥ 0/],
  [['--max-concurrent-rollouts=ten'], /--max-concurrent-rollouts: "ten" is not an integer ≥ 0/],
  [['--flap-threshold=2.5'], /--flap-threshold: "2.5" is not an integer ≥ 0/],
  [['--flap-window=60'], /--flap-window: "60" is not a duration/],
  [['--flap-window=0s'], /--flap-window: "0s" must be longer than 0/],
  [['--metrics-bind-address=8080'], /--metrics-bind-address: "8080" is not a bind address/],
  [['--namespace=Team_A'], /--namespace: "Team_A" is not a namespace name/],
  [['--namespaces=team-a,Team_B'], /^--namespaces: "Team_B" is not a namespace name \(a DNS-1123 label\) in "team-a,Team_B"$/],
  [['--namespaces=team-a,team-b.x'], /--namespaces: "team-b.x" is not a namespace name/],
  [[`--namespaces=${'a'.repeat(64)}`], /is not a namespace name \(a DNS-1123 label\)/],
  [['--namespaces=-a'], /--namespaces: "-a" is not a namespace name/],
  [['--namespaces=team-a,,team-b'], /^--namespaces: "" is not a namespace name \(a DNS-1123 label\) in "team-a,,team-b"$/],
  [['--namespaces=team-a,'], /--namespaces: "" is not a namespace name/],
  [['--namespaces='], /^--namespaces: "" names no namespace \(leave it out to watch all namespaces\)$/],
  [['--namespace='], /^--namespace: "" names no namespace/],
  [['--namespaces=team-a,team-b,team-a'], /^--namespaces: "team-a,team-b,team-a" names the namespace "team-a" twice$/],
  [['--namespaces'], /--namespaces needs a value \(--namespaces=<names>\)/],
  [
    ['--namespace=team-a', '--namespaces=team-b'],
    /^--namespace "team-a" and --namespaces "team-b" both given: use --namespaces=team-a,team-b$/,
  ],
  [['--kubeconfig'], /--kubeconfig needs a value/],
  [['--leader-elect=yes'], /--leader-elect: "yes" is not true or false/],
  [['--leader-elect-lease-duration=15'], /"15" is not a duration/],
  [['--leader-elect-renew-deadline=20s'], /lease duration > renew deadline > retry period/],
  [['stray'], /unexpected argument "stray"/],
  [['--metrics-secure=no'], /--metrics-secure: "no" is not true or false/],
  [
    ['--metrics-secure=false', '--metrics-cert-dir=/certs'],
    /--metrics-cert-dir "\/certs" needs HTTPS metrics: drop --metrics-secure=false/,
  ],
];
for (const [argv, message] of bad) {
  test(`${argv.join(' ')} fails with a message quoting it`, (t) => {
    t.throws(() => parseFlags(argv), { message });
  });
}

test('--namespaces reads a comma-separated list in its order, and --namespace is one namespace', (t) => {
  t.deepEqual(parseFlags(['--namespaces=team-a,team-b']).namespaces, ['team-a', 'team-b']);
  t.deepEqual(parseFlags(['--namespaces', 'b, a ,c']).namespaces, ['b', 'a', 'c'], 'spaces around a name are not part of it');
  t.deepEqual(parseFlags(['--namespaces=team-a']).namespaces, ['team-a']);
  t.deepEqual(parseFlags(['--namespace=team-a']).namespaces, ['team-a']);
  t.deepEqual(parseFlags([`--namespaces=${'a'.repeat(63)},0-9`]).namespaces, ['a'.repeat(63), '0-9'], '63 characters and digits are names');
  t.is(parseFlags([]).namespaces, undefined, 'no flag: every namespace');
});

test('bind addresses accept host:port, :port, [v6]:port and 0', (t) => {
  t.deepEqual(parseBindAddress('--x', ':8080'), { host: undefined, port: 8080 });
  t.deepEqual(parseBindAddress('--x', '0.0.0.0:1'), { host: '0.0.0.0', port: 1 });
  t.deepEqual(parseBindAddress('--x', '[::1]:0'), { host: '::1', port: 0 });
  t.is(parseBindAddress('--x', '0'), undefined);
  t.throws(() => parseBindAddress('--x', ':70000'), { message: /":70000" is not a bind address/ });
});

test('--help lists every flag', (t) => {
  const text = usage();
  for (const flag of [
    '--kubeconfig',
    '--namespaces',
    '--namespace',
    '--metrics-bind-address',
    '--metrics-secure',
    '--metrics-cert-dir',
    '--health-probe-bind-address',
    '--leader-elect',
    '--leader-election-namespace',
    '--log-level',
    '--log-format',
    '--max-concurrent-reconciles',
    '--max-concurrent-rollouts',
    '--flap-threshold',
    '--flap-window',
    '--sharding',
    '--shard-identity',
    '--kube-api-content-type',
    '--help',
  ]) {
    t.true(text.includes(flag), flag);
  }
});

test('--workloads: none by default; a comma-separated list of kinds; an unknown or repeated kind fails, quoted', (t) => {
  t.deepEqual(parseFlags([]).workloads, []);
  t.deepEqual(parseFlags(['--workloads=deployments,statefulsets,daemonsets']).workloads, ['deployments', 'statefulsets', 'daemonsets']);
  t.deepEqual(parseFlags(['--workloads', 'daemonsets']).workloads, ['daemonsets']);
  t.deepEqual(parseFlags(['--workloads=rollouts']).workloads, ['rollouts'], "Argo Rollouts' Rollout");
  t.throws(() => parseFlags(['--workloads=deployments,jobs']), {
    message: '--workloads: "jobs" is not one of deployments, statefulsets, daemonsets, rollouts (a comma-separated list)',
  });
  t.throws(() => parseFlags(['--workloads=deployments,deployments']), {
    message: '--workloads: "deployments,deployments" names a kind twice',
  });
});

test('--sharding: off by default; --shard-identity names the replica, a DNS-1123 label, only with --sharding', (t) => {
  t.like(parseFlags(['--sharding']), { sharding: true, shardIdentity: undefined });
  t.like(parseFlags(['--sharding', '--shard-identity=shard-a']), { sharding: true, shardIdentity: 'shard-a' });
  t.like(parseFlags(['--sharding', '--leader-elect']), { sharding: true, leaderElect: true }, 'the chart adds --sharding to fixed args');
  t.throws(() => parseFlags(['--sharding', '--shard-identity=Shard_A']), {
    message: `--shard-identity: "Shard_A" is not a DNS-1123 label (lower case letters, digits and '-', at most 63)`,
  });
  t.throws(() => parseFlags(['--shard-identity=a']), { message: '--shard-identity "a" needs --sharding' });
});
