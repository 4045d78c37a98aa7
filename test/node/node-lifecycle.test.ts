// `npm run cluster` as a user runs it: what it prints and records, a network that leads nowhere off the machine, a clean
// start after a SIGKILL, and nothing left behind after SIGTERM.
import test, { type ExecutionContext } from 'ava';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { DEMO_IMAGE_CONFIGMAP } from '../../envtest/node/harness.js';
import { SLOTS_DIR } from '../../envtest/node/slot.js';
import { runKubectl } from '../support/targets.js';
import { nodeTest, type NodeTestBody } from './node-helpers.js';

const execFileAsync = promisify(execFile);
const MAIN = resolve(import.meta.dirname, '../../envtest/node/main.ts');
const REPO = resolve(import.meta.dirname, '../..');
const RUN = SLOTS_DIR;

/** Asserts that the node of `kubeconfig` is Ready and runs a pod `name` of `image` until it is Ready. */
async function assertNodeRunsPod(t: ExecutionContext, kubeconfig: string, name: string, image: string): Promise<void> {
  const nodes = await runKubectl(kubeconfig, ['get', 'nodes', '-o', 'jsonpath={.items[*].status.conditions[?(@.type=="Ready")].status}']);
  t.is(nodes.stdout, 'True');
  const run = await runKubectl(kubeconfig, ['run', name, `--image=${image}`, '--restart=Never']);
  t.is(run.code, 0, run.stderr);
  const ready = await runKubectl(kubeconfig, ['wait', '--for=condition=Ready', `pod/${name}`, '--timeout=120s'], { timeoutMs: 130_000 });
  t.is(ready.code, 0, ready.stderr);
}

/**
 * Runs `kill` with a waiter already blocked on `slot`'s lock (util-linux flock, as reaper.sh takes it), so that the lock
 * passes to the waiter as soon as the killed reaper's processes let go of it; resolves once the waiter holds it.
 */
async function holdSlotLockAfter(slot: number, kill: () => Promise<void>): Promise<{ release: () => Promise<void> }> {
  const waiter = spawn('flock', ['--no-fork', join(RUN, `slot-${slot}.lock`), 'sh', '-c', 'echo locked; exec sleep 600'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((done) => waiter.once('exit', () => done()));
  const locked = new Promise<void>((done, fail) => {
    waiter.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('locked')) done();
    });
    waiter.once('exit', (code) => fail(new Error(`flock on slot ${slot} exited (${code}) before holding the lock`)));
  });
  const release = async (): Promise<void> => {
    waiter.kill('SIGKILL');
    await exited;
  };
  try {
    await kill();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      locked,
      new Promise<never>((_, fail) => {
        timer = setTimeout(() => fail(new Error(`slot ${slot}'s lock was not free within 30 s of the kill`)), 30_000);
      }),
    ]).finally(() => clearTimeout(timer));
    return { release };
  } catch (error) {
    await release();
    throw error;
  }
}
const TUNABLES = ['vm/overcommit_memory', 'vm/panic_on_oom', 'kernel/panic', 'kernel/panic_on_oops', 'kernel/keys/root_maxkeys'];

/** A running `npm run cluster` (envtest/node/main.ts) and what it printed. */
interface Run {
  readonly child: ChildProcess;
  readonly kubeconfig: string;
  readonly demoImage: string;
  readonly slot: number;
  readonly hostInterface: string;
  readonly podCidr: string;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function startRun(args: readonly string[], timeoutMs: number): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  const output = () => `${stdout}\n--- stderr (last lines) ---\n${stderr.trim().split('\n').slice(-25).join('\n')}`;
  // Ready when it prints the demo image; failed when it exits first or takes longer than timeoutMs.
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((ready, fail) => {
      child.stdout!.on('data', () => {
        if (/^demo image: /m.test(stdout)) ready();
      });
      child.once('exit', (code, signal) => fail(new Error(`npm run cluster exited (code ${code}, signal ${signal}):\n${output()}`)));
      timer = setTimeout(() => fail(new Error(`npm run cluster printed no "demo image:" in ${timeoutMs} ms:\n${output()}`)), timeoutMs);
    });
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    throw error;
  } finally {
    clearTimeout(timer);
  }
  const field = (pattern: RegExp): string => {
    const match = pattern.exec(stdout);
    if (!match) throw new Error(`npm run cluster printed no ${pattern}:\n${output()}`);
    return match[1]!;
  };
  return {
    child,
    kubeconfig: field(/^kubeconfig: (\S+)$/m),
    demoImage: field(/^demo image: (\S+)$/m),
    slot: Number(field(/\(slot (\d+),/)),
    hostInterface: field(/host interface (\S+)\)/),
    podCidr: field(/; pods (\S+);/),
    output,
    exited,
  };
}

async function sh(command: string): Promise<string> {
  const { stdout } = await execFileAsync('bash', ['-c', command], { maxBuffer: 64 << 20 });
  return stdout;
}

function pidsIn(cgroupProcs: string): number[] {
  try {
    return readFileSync(cgroupProcs, 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The host's iptables rules without counters (chain policies' packet counts change on their own). */
async function hostIptables(): Promise<string> {
  return (await sh('iptables-save; ip6tables-save'))
    .split('\n')
    .filter((line) => !line.startsWith('#'))
    .map((line) => line.replace(/\[\d+:\d+\]/g, ''))
    .join('\n');
}

function tunables(): Record<string, string> {
  return Object.fromEntries(TUNABLES.map((path) => [path, readFileSync(`/proc/sys/${path}`, 'utf8').trim()]));
}

function cgroupDirs(slot: number): string[] {
  return readdirSync('/sys/fs/cgroup')
    .map((hierarchy) => join('/sys/fs/cgroup', hierarchy, `customapp-node-${slot}`))
    .filter((dir) => existsSync(dir));
}

/**
 * What a node made in `slot`, by identity: its host interface's ifindex and its cgroup directories' inodes. A later run
 * in the same slot (another node test may take it as soon as it is free) makes new ones.
 */
function slotTraces(slot: number, hostInterface: string): Set<string> {
  const traces = new Set(cgroupDirs(slot).map((dir) => `${dir} inode ${statSync(dir).ino}`));
  const ifindex = `/sys/class/net/${hostInterface}/ifindex`;
  if (existsSync(ifindex)) traces.add(`${hostInterface} ifindex ${readFileSync(ifindex, 'utf8').trim()}`);
  return traces;
}

/** Its tests start and stop the node themselves (`npm run cluster`), so the file has no node of its own. */
const onNode = (title: string, body: NodeTestBody): void => nodeTest(test, title, body);
const dir = mkdtempSync(join(tmpdir(), 'customapp-cluster-lifecycle-'));
const runs: Run[] = [];
let first: Run;
let second: Run;
let iptablesBefore = '';
let tunablesBefore: Record<string, string> = {};

test.after.always(async () => {
  for (const run of runs) {
    if (run.child.exitCode === null && run.child.signalCode === null) {
      run.child.kill('SIGTERM');
      await run.exited;
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

onNode(
  'npm run cluster prints the kubeconfig and the demo image, records the image in kube-public, and routes nothing off the machine',
  async (t) => {
    t.timeout(45 * 60_000); // the first run builds the binaries and images
    iptablesBefore = await hostIptables();
    tunablesBefore = tunables();
    first = await startRun(['--kubeconfig-out', join(dir, 'first.kubeconfig')], 45 * 60_000);
    runs.push(first);
    t.is(first.kubeconfig, join(dir, 'first.kubeconfig'));
    const recorded = await runKubectl(first.kubeconfig, [
      '-n',
      DEMO_IMAGE_CONFIGMAP.namespace,
      'get',
      'configmap',
      DEMO_IMAGE_CONFIGMAP.name,
      '-o',
      `jsonpath={.data.${DEMO_IMAGE_CONFIGMAP.key}}`,
    ]);
    t.is(recorded.code, 0, recorded.stderr);
    t.is(recorded.stdout, first.demoImage);
    // A pod, to see the network from inside it.
    await assertNodeRunsPod(t, first.kubeconfig, 'probe', first.demoImage);
    const outside = await runKubectl(first.kubeconfig, ['exec', 'probe', '--', 'nc', '-w', '3', '1.1.1.1', '80'], { timeoutMs: 30_000 });
    t.not(outside.code, 0, 'a pod cannot open a connection off the machine');
    t.regex(outside.stderr, /unreachable|No route to host|timed out/i);

    const holder = pidsIn(`/sys/fs/cgroup/freezer/customapp-node-${first.slot}/namespaces/cgroup.procs`);
    t.is(holder.length, 1, 'one process holds the node namespaces');
    const routes = JSON.parse(await sh(`nsenter -t ${holder[0]} -n ip -4 -j route show table all`)) as { dst: string; dev?: string }[];
    t.false(
      routes.some((route) => route.dst === 'default'),
      `the node has no default route: ${JSON.stringify(routes)}`,
    );
    const links = JSON.parse(await sh(`nsenter -t ${holder[0]} -n ip -j link`)) as { ifname: string }[];
    for (const link of links) t.regex(link.ifname, /^(lo|eth0|cni0|veth[0-9a-f]+)$/, 'only the node link, the pod bridge and pod veths');
    const hostRoutes = JSON.parse(await sh('ip -4 -j route show table all')) as { dst: string; dev?: string; type?: string }[];
    const ours = hostRoutes.filter((route) => route.dev === first.hostInterface);
    t.deepEqual(
      ours.map((route) => `${route.type ?? 'unicast'} ${route.dst}`).sort(),
      [
        `unicast ${first.podCidr}`,
        `unicast 10.213.${first.slot}.0/30`,
        `local 10.213.${first.slot}.1`,
        `broadcast 10.213.${first.slot}.3`,
      ].sort(),
      `the host routes only the link and the pod CIDR to the node: ${JSON.stringify(ours)}`,
    );
    const nodeNat = await sh(`nsenter -t ${holder[0]} -n iptables-save -t nat`);
    for (const line of nodeNat.split('\n').filter((rule) => rule.includes('MASQUERADE'))) {
      t.regex(line, /^-A KUBE-POSTROUTING /, `kube-proxy's only, inside the node (which has no outside interface): ${line}`);
    }
  },
);

onNode('after a SIGKILL of the cluster and of its reaper, the next run clears the leftovers and starts cleanly', async (t) => {
  t.timeout(10 * 60_000);
  const holder = pidsIn(`/sys/fs/cgroup/freezer/customapp-node-${first.slot}/namespaces/cgroup.procs`);
  const daemons = pidsIn(`/sys/fs/cgroup/freezer/customapp-node-${first.slot}/daemons/cgroup.procs`);
  const podProcesses = (await sh(`find /sys/fs/cgroup/freezer/customapp-node-${first.slot}/kubepods -name cgroup.procs -exec cat {} +`))
    .split('\n')
    .filter(Boolean)
    .map(Number);
  t.true(daemons.length >= 4 && podProcesses.length >= 2, `daemons ${daemons.length}, pod processes ${podProcesses.length}`);
  const slotDir = join(RUN, String(first.slot));
  const controlPlaneDirs = readdirSync(slotDir)
    .filter((name) => name.startsWith('customapp-envtest-'))
    .map((name) => join(slotDir, name));
  t.is(controlPlaneDirs.length, 1, 'the control plane keeps its files in the slot directory');
  const reaper = (await sh(`pgrep -f 'reaper.sh ${first.slot} ${first.child.pid}$' || true`))
    .trim()
    .split('\n')
    .filter(Boolean)
    .map(Number);
  t.is(reaper.length, 1, 'the run has one reaper');
  // The other node tests may start a cluster meanwhile, and their reapers clear any unlocked slot with leftovers:
  // this test takes the killed run's slot lock the moment the reaper lets go of it, so that what the kill left stays
  // there to be seen, and lets go of it before the next run.
  const keeper = await holdSlotLockAfter(first.slot, async () => {
    process.kill(reaper[0]!, 'SIGKILL');
    first.child.kill('SIGKILL');
    await first.exited;
  });
  let left: Set<string>;
  try {
    t.true(existsSync(`/sys/class/net/${first.hostInterface}`), 'the killed node left its interface');
    t.true(alive(holder[0]!) && podProcesses.some(alive), 'the killed node left its namespaces and pods running');
    left = slotTraces(first.slot, first.hostInterface);
  } finally {
    await keeper.release();
  }

  second = await startRun([], 10 * 60_000);
  runs.push(second);
  for (const pid of [...holder, ...daemons, ...podProcesses]) t.false(alive(pid), `process ${pid} of the killed run is gone`);
  t.false(existsSync(controlPlaneDirs[0]!), `the killed run's control plane files are gone (${controlPlaneDirs[0]})`);
  const stillThere = [...slotTraces(first.slot, first.hostInterface)].filter((trace) => left.has(trace));
  t.deepEqual(stillThere, [], `the killed run's interface and cgroups are gone (a later run in slot ${first.slot} makes its own)`);
  await assertNodeRunsPod(t, second.kubeconfig, 'again', second.demoImage);
  t.log(`restarted in slot ${second.slot} (the killed run had slot ${first.slot})`);
});

onNode(
  'SIGTERM removes every process, interface, route, cgroup, mount and file the cluster made, and the host keeps its iptables and kernel tunables',
  async (t) => {
    const envtestDir = resolve(second.kubeconfig, '..');
    t.regex(envtestDir, /customapp-envtest-/);
    second.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const exit = await Promise.race([second.exited, new Promise<'timeout'>((done) => (timer = setTimeout(() => done('timeout'), 60_000)))]);
    clearTimeout(timer);
    t.deepEqual(exit, { code: 0, signal: null }, second.output());
    t.regex(second.output(), /"event":"stopped"/);

    t.deepEqual(cgroupDirs(second.slot), [], 'no cgroup of the node is left');
    t.false(existsSync(`/sys/class/net/${second.hostInterface}`), `interface ${second.hostInterface} is gone`);
    t.false((await sh('ip -4 route show table all')).includes(second.podCidr), 'the pod route is gone');
    t.false(existsSync(join(RUN, String(second.slot))), 'the slot directory is gone');
    t.false(existsSync(envtestDir), 'the control plane directory is gone');
    const processes = await sh(
      `ps -eo pid=,args= | grep -F -e '${envtestDir}' -e 'reaper.sh ${second.slot} ${second.child.pid}' | grep -v grep || true`,
    );
    t.is(processes.trim(), '', 'no process of the cluster is left');
    const mounts = readFileSync('/proc/self/mountinfo', 'utf8');
    t.false(/customapp/.test(mounts), 'the host mount table never held a mount of the node');
    t.is(await hostIptables(), iptablesBefore, "the host's iptables rules are unchanged");
    t.deepEqual(
      tunables(),
      tunablesBefore,
      "the host's kernel tunables are unchanged (the kubelet saw its values in the node's mount namespace)",
    );
  },
);
