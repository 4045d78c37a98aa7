// pollReady on scripted probes and a scripted clock: ready, a stopped process, a deadline that names the last error.
import test from 'ava';
import { pollReady } from './poll.js';

/** A clock that moves `stepMs` on each read. */
function steps(stepMs: number): () => number {
  let now = 0;
  return () => (now += stepMs);
}

test('resolves once the probe answers true; a probe that throws meanwhile counts as not yet', async (t) => {
  const answers = [new Error('connection refused'), false, true];
  let asked = 0;
  await pollReady(
    'the server',
    1_000,
    async () => {
      const answer = answers[asked++]!;
      if (answer instanceof Error) throw answer;
      return answer;
    },
    () => undefined,
    { intervalMs: 0, now: steps(1) },
  );
  t.is(asked, 3);
});

test('a stopped process ends the wait at once, with its reason', async (t) => {
  let asked = 0;
  const error = await t.throwsAsync(
    pollReady(
      'kube-apiserver',
      60_000,
      async () => {
        asked += 1;
        return false;
      },
      () => (asked >= 2 ? 'etcd exited with code 1' : undefined),
      { intervalMs: 0, now: steps(1) },
    ),
  );
  t.is(error?.message, 'kube-apiserver: etcd exited with code 1');
  t.is(asked, 2, 'no probe after the process stopped');
});

test('after the deadline it rejects, naming the last error the probe threw', async (t) => {
  const error = await t.throwsAsync(
    pollReady(
      'containerd',
      100,
      async () => {
        throw new Error('dial unix containerd.sock: no such file');
      },
      () => undefined,
      { intervalMs: 0, now: steps(30) },
    ),
  );
  t.is(error?.message, 'containerd: not ready after 100 ms (last error: dial unix containerd.sock: no such file)');
});
