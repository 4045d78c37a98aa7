// The node's sandbox on this machine: its cgroups, its network and mount namespaces, the veth to the host, and the
// daemons started inside it. Everything it makes dies with the processes in its cgroups (teardown.sh kills them).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { NodeAddresses } from './addresses.js';

const execFileAsync = promisify(execFile);
const NAMESPACES_SCRIPT = resolve(import.meta.dirname, 'node-namespaces.sh');
const CGROUPS = '/sys/fs/cgroup';

/** A process started in the node's sandbox. */
export interface Daemon {
  readonly name: string;
  readonly process: ChildProcess;
  /** The daemon's log file on the host. */
  readonly logPath: string;
  /** Why it exited, when it did (with the last lines of its log); undefined while it runs. */
  exitReason(): string | undefined;
}

/** The node's namespaces and cgroups. */
export interface NodeSandbox {
  readonly addresses: NodeAddresses;
  /** The kubelet's cgroupRoot: `/customapp-node-<slot>` in every hierarchy. */
  readonly cgroupRoot: string;
  /** The process that holds the node's namespaces. */
  readonly holderPid: number;
  /** Starts a daemon inside the node's network and mount namespaces, in the slot's cgroup; its output goes to its log. */
  spawnDaemon(name: string, binary: string, args: readonly string[]): Daemon;
  /** Runs a command inside the node's namespaces and returns its output; rejects with its stderr on failure. */
  run(command: string, args: readonly string[], timeoutMs?: number): Promise<string>;
}

/** Options of {@link createNodeSandbox}. */
export interface NodeSandboxOptions {
  readonly addresses: NodeAddresses;
  /** The host directory for logs. */
  readonly logDir: string;
  /**
   * The size limit of the node's private /run, which holds all its state (images, containers, logs).
   * @default '4g'
   */
  readonly tmpfsSize?: string;
}

export function tail(path: string, lines = 20): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

async function run(command: string, args: readonly string[], timeoutMs = 60_000): Promise<string> {
  try {
    const { stdout } = await execFileAsync(command, args, { timeout: timeoutMs, maxBuffer: 64 << 20 });
    return stdout;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`${command} ${args.join(' ')}: ${stderr || (error as Error).message}`, { cause: error });
  }
}

/** Creates `/<name>` in every mounted cgroup hierarchy (cpuset with its parent's CPUs and memory nodes). */
function createCgroups(name: string): void {
  for (const hierarchy of readdirSync(CGROUPS)) {
    const root = join(CGROUPS, hierarchy);
    if (!existsSync(join(root, 'cgroup.procs'))) continue;
    const dir = join(root, name);
    mkdirSync(dir, { recursive: true });
    if (hierarchy === 'cpuset') {
      for (const file of ['cpuset.cpus', 'cpuset.mems']) writeFileSync(join(dir, file), readFileSync(join(root, file)));
    }
  }
  // The holder of the namespaces apart from the daemons, so that the daemons can be stopped before the namespaces.
  for (const group of ['daemons', 'namespaces']) mkdirSync(join(CGROUPS, 'freezer', name, group), { recursive: true });
}

function waitForLine(child: ChildProcess, line: string, what: string, logPath: string, timeoutMs: number): Promise<void> {
  return new Promise((done, fail) => {
    let output = '';
    const timer = setTimeout(() => fail(new Error(`${what}: no "${line}" after ${timeoutMs} ms; log:\n${tail(logPath)}`)), timeoutMs);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.split('\n').includes(line)) {
        clearTimeout(timer);
        done();
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      fail(new Error(`${what} exited (code ${code}, signal ${signal}); log:\n${tail(logPath)}`));
    });
  });
}

/**
 * Creates the node's cgroups, starts the process holding its network and mount namespaces (node-namespaces.sh under
 * unshare), and links the namespace to the host with a veth pair: `<hostInterface>` (hostIp/30) on the host, `eth0`
 * (nodeIp/30) in the node, plus a host route for the pod CIDR through the node. The node's namespace has no default
 * route: nothing from a pod can leave this machine.
 */
export async function createNodeSandbox(options: NodeSandboxOptions): Promise<NodeSandbox> {
  const { addresses, logDir } = options;
  const name = `customapp-node-${addresses.slot}`;
  createCgroups(name);
  const daemonProcs = join(CGROUPS, 'freezer', name, 'daemons', 'cgroup.procs');
  const holderProcs = join(CGROUPS, 'freezer', name, 'namespaces', 'cgroup.procs');

  const holderLog = join(logDir, 'namespaces.log');
  const holderFd = openSync(holderLog, 'a');
  const holder = spawn(
    'bash',
    [
      '-c',
      'echo $$ > "$0" && exec unshare --mount --net --propagation private -- bash "$1" "$2"',
      holderProcs,
      NAMESPACES_SCRIPT,
      options.tmpfsSize ?? '4g',
    ],
    { detached: true, stdio: ['ignore', 'pipe', holderFd] },
  );
  closeSync(holderFd);
  await waitForLine(holder, 'ready', 'the node namespaces (node-namespaces.sh)', holderLog, 15_000);
  holder.stdout!.resume();
  const holderPid = holder.pid!;

  const inNode = (command: string, args: readonly string[], timeoutMs?: number): Promise<string> =>
    run('nsenter', ['-t', String(holderPid), '-m', '-n', '--', command, ...args], timeoutMs);

  const { hostInterface, hostIp, nodeIp, podCidr } = addresses;
  await run('ip', ['link', 'add', hostInterface, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', String(holderPid)]);
  await run('ip', ['addr', 'add', `${hostIp}/30`, 'dev', hostInterface]);
  await run('ip', ['link', 'set', hostInterface, 'up']);
  await inNode('ip', ['addr', 'add', `${nodeIp}/30`, 'dev', 'eth0']);
  await inNode('ip', ['link', 'set', 'eth0', 'up']);
  await run('ip', ['route', 'add', podCidr, 'via', nodeIp, 'dev', hostInterface]);

  const spawnDaemon = (daemonName: string, binary: string, args: readonly string[]): Daemon => {
    const logPath = join(logDir, `${daemonName}.log`);
    const fd = openSync(logPath, 'a');
    const child = spawn(
      'bash',
      [
        '-c',
        'echo $$ > "$0" && holder="$1" && shift && exec nsenter -t "$holder" -m -n -- "$@"',
        daemonProcs,
        String(holderPid),
        binary,
        ...args,
      ],
      { detached: true, stdio: ['ignore', fd, fd] },
    );
    closeSync(fd);
    let reason: string | undefined;
    child.once('exit', (code, signal) => {
      reason = `${daemonName} exited (code ${code}, signal ${signal}); last log lines:\n${tail(logPath)}`;
    });
    return { name: daemonName, process: child, logPath, exitReason: () => reason };
  };

  return { addresses, cgroupRoot: `/${name}`, holderPid, spawnDaemon, run: inNode };
}
