// Takes a free node slot (its lock, its addresses) through a reaper process that tears the slot down when we leave.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { collisions, MAX_SLOTS, nodeAddresses, type NodeAddresses } from './addresses.js';

const execFileAsync = promisify(execFile);
const REAPER = resolve(import.meta.dirname, 'reaper.sh');
/** The slots' host directories and locks (reaper.sh and teardown.sh use the same): fixed, one set per machine. */
export const SLOTS_DIR = '/var/lib/customapp-cluster';
const TEARDOWN = resolve(import.meta.dirname, 'teardown.sh');
/** reaper.sh's exit status when a live cluster holds the slot. */
const SLOT_BUSY = 75;

/** A node slot held by this process. */
export interface SlotLease {
  readonly addresses: NodeAddresses;
  /** Milliseconds the reaper took to take the lock and clear what a killed predecessor left. */
  readonly acquireMs: number;
  /** Whether the reaper is still running (it ends only after a teardown). */
  alive(): boolean;
  /**
   * Kills the node's daemons and containers but keeps its namespaces (and so its interfaces), so that their
   * connections to the API server close properly before it stops.
   */
  stopWorkloads(): Promise<void>;
  /**
   * Tears the slot down (every process, namespace, mount, interface and cgroup of the node, and the slot's host
   * directory) and releases it. Rejects, with the reaper's output, when something could not be removed.
   */
  release(): Promise<void>;
}

/** The host's IPv4 routes in every table, each as a CIDR and where it comes from. */
export async function hostRoutes(): Promise<{ cidr: string; where: string }[]> {
  const { stdout } = await execFileAsync('ip', ['-4', '-j', 'route', 'show', 'table', 'all']);
  const routes = JSON.parse(stdout) as { dst: string; dev?: string; table?: string }[];
  return routes
    .filter((route) => route.dst !== 'default')
    .map((route) => ({
      cidr: route.dst.includes('/') ? route.dst : `${route.dst}/32`,
      where: `route ${route.dst}${route.dev ? ` dev ${route.dev}` : ''}${route.table ? ` table ${route.table}` : ''}`,
    }));
}

function startReaper(slot: number): Promise<{ reaper: ChildProcess; output: () => string } | { busy: true } | { failed: string }> {
  const reaper = spawn('bash', [REAPER, String(slot), String(process.pid)], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  reaper.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((done) => {
    reaper.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (/^ready$/m.test(output)) done({ reaper, output: () => output });
    });
    reaper.once('error', (error) => done({ failed: `cannot run ${REAPER}: ${error.message}` }));
    reaper.once('exit', (code) => {
      if (code === SLOT_BUSY) done({ busy: true });
      else done({ failed: `${REAPER} ${slot} exited with ${code} before it was ready:\n${output.trim()}` });
    });
  });
}

/** Whether a slot shows traces of a node (its freezer cgroup or its host interface). */
function slotHasLeftovers(slot: number): boolean {
  return existsSync(`/sys/fs/cgroup/freezer/customapp-node-${slot}`) || existsSync(`/sys/class/net/${nodeAddresses(slot).hostInterface}`);
}

/**
 * Takes the first free slot whose addresses collide with no route of this machine. Its reaper first removes whatever a
 * SIGKILLed predecessor left in the slot, and tears the slot down when {@link SlotLease.release} is called or when this
 * process exits in any way, SIGKILL included. Free slots further on that still hold a killed node's leftovers are
 * cleared too (taken and released at once), so that nothing stays behind whichever slot the next run gets.
 */
export async function acquireSlot(now: () => number = Date.now): Promise<SlotLease> {
  const started = now();
  const refused: string[] = [];
  let lease: SlotLease | undefined;
  for (let slot = 0; slot < MAX_SLOTS; slot++) {
    if (lease && !slotHasLeftovers(slot)) continue;
    const attempt = await startReaper(slot);
    if ('busy' in attempt) {
      refused.push(`slot ${slot}: held by a running cluster`);
      continue;
    }
    if ('failed' in attempt) {
      if (lease) await lease.release();
      throw new Error(attempt.failed);
    }
    const { reaper, output } = attempt;
    const exited = new Promise<number | null>((done) => {
      if (reaper.exitCode !== null) done(reaper.exitCode);
      else reaper.once('exit', (code) => done(code));
    });
    const release = async (): Promise<void> => {
      if (reaper.exitCode === null && reaper.signalCode === null) reaper.kill('SIGUSR1');
      const code = await exited;
      if (code !== 0) throw new Error(`tearing down node slot ${slot} failed (reaper exit ${code}):\n${output().trim()}`);
    };
    if (lease) {
      await release(); // a killed node's leftovers, now removed
      continue;
    }
    const addresses = nodeAddresses(slot);
    const clash = collisions(addresses, await hostRoutes());
    if (clash.length > 0) {
      await release();
      refused.push(`slot ${slot}: ${clash.join('; ')}`);
      continue;
    }
    lease = {
      addresses,
      acquireMs: 0,
      alive: () => reaper.exitCode === null && reaper.signalCode === null,
      stopWorkloads: async () => {
        try {
          await execFileAsync('bash', [TEARDOWN, String(slot), 'workloads'], { timeout: 60_000 });
        } catch (error) {
          throw new Error(`stopping the workloads of node slot ${slot}: ${(error as { stderr?: string }).stderr ?? String(error)}`, {
            cause: error,
          });
        }
      },
      release,
    };
  }
  if (!lease) throw new Error(`no free node slot on this machine:\n${refused.join('\n')}`);
  return { ...lease, acquireMs: now() - started };
}
