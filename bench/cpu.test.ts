import test from 'ava';
import { diffCpu, findServerProcesses, processCpuSeconds, sessionCpu } from './cpu.js';

test('processCpuSeconds adds utime and stime, past a command name with spaces and parentheses', (t) => {
  const stat = '4242 (node (main) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 125 0 0 20 0 11 0 1000 1000000 5000';
  t.is(
    processCpuSeconds(4242, () => stat),
    3.75,
  );
  t.is(
    processCpuSeconds(1, () => {
      throw new Error('gone');
    }),
    undefined,
  );
});

test('processCpuSeconds reads this process from /proc', (t) => {
  const seconds = processCpuSeconds(process.pid);
  if (seconds === undefined) return t.pass('no /proc here');
  t.true(seconds >= 0);
});

test('findServerProcesses finds nothing for a needle no process holds', (t) => {
  t.deepEqual(findServerProcesses(`no-such-dir-${process.pid}-${Date.now()}`), {});
});

test('diffCpu subtracts role by role, leaving out roles either side lacks', (t) => {
  t.deepEqual(diffCpu({ operator: 3.5, apiserver: 10, etcd: 2 }, { operator: 0, apiserver: 4.25 }), { operator: 3.5, apiserver: 5.75 });
});

test('sessionCpu counts a participant not running as 0 and leaves out the server binaries it has no pid for', (t) => {
  const stats: Record<string, string> = {
    '/proc/10/stat': '10 (node) S 1 10 10 0 -1 0 0 0 0 0 100 50 0 0 20 0 1 0 1 1 1',
    '/proc/20/stat': '20 (kube-apiserver) S 1 20 20 0 -1 0 0 0 0 0 400 100 0 0 20 0 1 0 1 1 1',
  };
  const read = (path: string): string => stats[path] ?? '';
  t.deepEqual(sessionCpu({ participant: { alive: true, pid: 10 }, server: { apiserver: 20 } }, read), { operator: 1.5, apiserver: 5 });
  t.deepEqual(sessionCpu({ participant: { alive: false, pid: 10 }, server: {} }, read), { operator: 0 });
  t.deepEqual(sessionCpu({ participant: undefined, server: { apiserver: 20 } }, read), { operator: 0, apiserver: 5 });
});
