// CPU time of the processes in a session (the operator, kube-apiserver, etcd), from /proc/<pid>/stat.
import { readdirSync, readFileSync } from 'node:fs';

/** CPU seconds (user + system) by process role. */
export type CpuSeconds = Partial<Record<CpuRole, number>>;
export type CpuRole = 'operator' | 'apiserver' | 'etcd';

/** Clock ticks per second of /proc/<pid>/stat's times (`getconf CLK_TCK`: 100 on every Linux this runs on). */
const CLOCK_TICKS = 100;

/**
 * utime + stime of `pid` in seconds, or undefined when it cannot be read (no /proc, the process is gone). Only the
 * process itself, not its waited-for children: the operator, the Go peer and the envtest binaries do their work in
 * their own process.
 */
export function processCpuSeconds(pid: number, read: (path: string) => string = (path) => readFileSync(path, 'utf8')): number | undefined {
  let stat: string;
  try {
    stat = read(`/proc/${pid}/stat`);
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces: count the fields after its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 (utime) and 15 (stime), numbered from 1 with the pid and the name as 1 and 2.
  const utime = Number(fields[14 - 3]);
  const stime = Number(fields[15 - 3]);
  return Number.isFinite(utime) && Number.isFinite(stime) ? (utime + stime) / CLOCK_TICKS : undefined;
}

/** The processes of a session whose CPU is counted: the participant (once spawned) and the API server's binaries. */
export interface SessionProcesses {
  readonly participant: { readonly alive: boolean; readonly pid: number } | undefined;
  readonly server: { readonly apiserver?: number; readonly etcd?: number };
}

/**
 * CPU seconds used so far by a session's processes, by role. The participant counts 0 while it is not running (a
 * phase that spawns it counts from there); a server binary the session does not know (the emulator has no etcd) is
 * left out.
 */
export function sessionCpu({ participant, server }: SessionProcesses, read?: (path: string) => string): CpuSeconds {
  const cpu: CpuSeconds = { operator: participant?.alive ? processCpuSeconds(participant.pid, read) : 0 };
  if (server.apiserver !== undefined) cpu.apiserver = processCpuSeconds(server.apiserver, read);
  if (server.etcd !== undefined) cpu.etcd = processCpuSeconds(server.etcd, read);
  return cpu;
}

/** The pids of the binaries whose command line holds `needle` (envtest's temporary directory), by role. */
export function findServerProcesses(needle: string): { apiserver?: number; etcd?: number } {
  const found: { apiserver?: number; etcd?: number } = {};
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (!argv.some((arg) => arg.includes(needle))) continue;
    const binary = argv[0]?.split('/').pop() ?? '';
    if (binary === 'kube-apiserver') found.apiserver = Number(entry);
    else if (binary === 'etcd') found.etcd = Number(entry);
  }
  return found;
}

/** `after - before` for each role both have. */
export function diffCpu(after: CpuSeconds, before: CpuSeconds): CpuSeconds {
  const diff: CpuSeconds = {};
  for (const role of Object.keys(after) as CpuRole[]) {
    const a = after[role];
    const b = before[role];
    if (a !== undefined && b !== undefined) diff[role] = Math.round((a - b) * 100) / 100;
  }
  return diff;
}
