// Tests of the benchmark's command line.
import test from 'ava';
import {
  DEFAULT_PARTICIPANTS,
  FULL,
  namespacesFor,
  parseOptions,
  parseParticipants,
  PARTICIPANTS,
  QUICK,
  sessionPlan,
  USAGE,
} from './options.js';

const defaults = { outDir: '/out', isTty: true };

test('no arguments run every participant but the Reloader variant at 1k and 10k on envtest', (t) => {
  const options = parseOptions([], defaults);
  t.is(options.profile, FULL);
  t.is(options.target, 'envtest');
  t.deepEqual(options.participants, [...DEFAULT_PARTICIPANTS]);
  t.deepEqual(
    PARTICIPANTS.filter((participant) => !options.participants.includes(participant)),
    ['reloader-on-create'],
  );
  t.deepEqual(options.sizes, [1000, 10_000]);
  t.is(options.outDir, '/out');
  t.true(options.progress);
});

test('the usage names the participants a run without --strategies leaves out, as parseOptions leaves them out', (t) => {
  const left = PARTICIPANTS.filter((participant) => !DEFAULT_PARTICIPANTS.includes(participant));
  const line = USAGE.split('\n').find((text) => text.trimStart().startsWith('--strategies'));
  t.regex(line ?? '', new RegExp(`\\(default: all but ${left.join(' and ')}\\)$`));
});

test('--quick runs 1k only with the quick profile', (t) => {
  const options = parseOptions(['--quick'], defaults);
  t.is(options.profile, QUICK);
  t.deepEqual(options.sizes, [1000]);
});

test('--target, --strategies, --sizes, --out and --no-progress are read, with or without =', (t) => {
  const options = parseOptions(
    ['--target=emulator', '--strategies', 'ours,peer', '--sizes', '500,2k', '--out', '/elsewhere', '--no-progress'],
    defaults,
  );
  t.is(options.target, 'emulator');
  t.deepEqual(options.participants, ['ours', 'peer']);
  t.deepEqual(options.sizes, [500, 2000]);
  t.is(options.outDir, '/elsewhere');
  t.false(options.progress);
});

test('a wrong value is refused with the offending input quoted', (t) => {
  t.throws(() => parseOptions(['--target', 'kind'], defaults), { message: /--target "kind"/ });
  t.throws(() => parseOptions(['--strategies', 'ours,flux'], defaults), { message: /"flux" is not one of/ });
  t.throws(() => parseOptions(['--sizes', '1000,lots'], defaults), { message: /"lots" is not a positive whole number/ });
  t.throws(() => parseOptions(['--bogus'], defaults), { message: /unknown argument "--bogus"/ });
  t.throws(() => parseOptions(['--out'], defaults), { message: /--out needs a value/ });
});

test('participants keep the order given and appear once', (t) => {
  t.deepEqual(parseParticipants('peer, ours ,peer'), ['peer', 'ours']);
  t.throws(() => parseParticipants(' , '), { message: /name at least one/ });
});

test('1k CustomApps live in one namespace, and larger runs in 2k-CustomApp namespaces', (t) => {
  t.is(namespacesFor(20), 1);
  t.is(namespacesFor(1000), 1);
  t.is(namespacesFor(10_000), 5);
});

test('--cpu-prof names the profile directory; without it there is none', (t) => {
  t.is(parseOptions(['--cpu-prof', '/tmp/prof'], defaults).cpuProfileDir, '/tmp/prof');
  t.is(parseOptions([], defaults).cpuProfileDir, undefined);
});

test('the full profile runs the seed and static-list-all at 1k only, unless --sizes asks for more', (t) => {
  const plan = sessionPlan(parseOptions(['--strategies', 'per-object,static-list-all,ours'], defaults));
  t.deepEqual(
    plan.map(({ size, participant }) => `${participant}@${size}`),
    ['per-object@1000', 'static-list-all@1000', 'ours@1000', 'ours@10000'],
  );
  t.is(sessionPlan(parseOptions(['--strategies', 'per-object', '--sizes', '1000,10000'], defaults)).length, 2);
});

test('--memory-limit gives every participant the same budget in MiB, and refuses a non-number', (t) => {
  t.is(parseOptions(['--memory-limit', '256'], defaults).memoryLimitMiB, 256);
  t.is(parseOptions([], defaults).memoryLimitMiB, undefined);
  t.throws(() => parseOptions(['--memory-limit', 'lots'], defaults), { message: /--memory-limit/ });
});

test("--profile-phases names the phase profiles' directory and, unlike --cpu-prof, runs every phase", (t) => {
  const options = parseOptions(['--profile-phases', '/tmp/phases'], defaults);
  t.is(options.phaseProfileDir, '/tmp/phases');
  t.is(options.coldStartOnly, undefined);
  t.is(parseOptions([], defaults).phaseProfileDir, undefined);
  t.throws(() => parseOptions(['--profile-phases'], defaults), { message: /--profile-phases needs a value/ });
});

test('--cold-start-only ends the sessions after the cold start, as --cpu-prof does', (t) => {
  t.true(parseOptions(['--cold-start-only'], defaults).coldStartOnly);
  t.true(parseOptions(['--cpu-prof', '/tmp/p'], defaults).coldStartOnly);
  t.is(parseOptions([], defaults).coldStartOnly, undefined);
});

test('--shards runs the shard benchmark: the counts sorted once each, at 1k with --quick, else 10k and 25k, unless --sizes', (t) => {
  t.deepEqual(parseOptions(['--shards', '4,1,2,2', '--quick'], defaults).shards, [1, 2, 4]);
  t.deepEqual(parseOptions(['--shards', '1,2,4', '--quick'], defaults).sizes, [1000]);
  t.deepEqual(parseOptions(['--shards=1,2,4'], defaults).sizes, [10_000, 25_000]);
  t.deepEqual(parseOptions(['--shards=1,2', '--sizes', '2k'], defaults).sizes, [2000]);
  t.is(parseOptions([], defaults).shards, undefined);
  t.throws(() => parseOptions(['--shards', '1,0'], defaults), { message: /--shards: "0" is not a positive whole number/ });
});

test("--apiserver-prof names the directory of kube-apiserver's profiles, and needs envtest's participant sessions", (t) => {
  t.is(parseOptions(['--apiserver-prof', '/tmp/p25'], defaults).apiserverProfileDir, '/tmp/p25');
  t.is(parseOptions(['--apiserver-prof=/tmp/p25', '--cold-start-only'], defaults).apiserverProfileDir, '/tmp/p25');
  t.is(parseOptions([], defaults).apiserverProfileDir, undefined);
  t.throws(() => parseOptions(['--apiserver-prof'], defaults), { message: /--apiserver-prof needs a value/ });
  t.throws(() => parseOptions(['--apiserver-prof', '/tmp/p', '--target', 'emulator'], defaults), {
    message: /--apiserver-prof profiles kube-apiserver: it needs --target envtest, not "emulator"/,
  });
  t.throws(() => parseOptions(['--apiserver-prof', '/tmp/p', '--shards', '1,2'], defaults), { message: /does not apply to --shards/ });
});
