// kube-apiserver's profile windows: back to back until stopped, the last one awaited, a failure ends and is kept; the fetch saves 200s only.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { selfSignedCertificate } from '../x509/self-signed.js';
import { type CpuProfileRecorder, kubeApiserverCpuProfile, recordCpuProfiles, recordingLine } from './apiserver-profile.js';

/** A fresh directory, removed when the test ends. */
function scratch(t: ExecutionContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'apiserver-profile-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A recorder whose windows end when the test says: each call is kept with the means to end it. */
function controlledRecorder(): {
  record: CpuProfileRecorder;
  calls: { seconds: number; file: string; end: () => void; fail: (error: Error) => void }[];
  nextCall: () => Promise<void>;
} {
  const calls: { seconds: number; file: string; end: () => void; fail: (error: Error) => void }[] = [];
  let called: (() => void) | undefined;
  return {
    calls,
    record: (seconds, file) =>
      new Promise<void>((end, fail) => {
        calls.push({ seconds, file, end, fail });
        called?.();
      }),
    nextCall: () => new Promise<void>((done) => (called = done)),
  };
}

test('windows follow each other until stop, which waits for the one in flight and writes the windows file', async (t) => {
  const dir = scratch(t);
  const { record, calls, nextCall } = controlledRecorder();
  let clock = 1000;
  const recording = recordCpuProfiles(record, { dir, name: 'ours-25000-cold-start', windowSeconds: 7, now: () => clock });

  await nextCall();
  clock = 8000;
  const second = nextCall();
  calls[0]!.end();
  await second;
  const stopped = recording.stop();
  clock = 15_000;
  calls[1]!.end();
  const windows = await stopped;

  t.deepEqual(
    calls.map(({ seconds, file }) => [seconds, file]),
    [
      [7, join(dir, 'ours-25000-cold-start-001.pb.gz')],
      [7, join(dir, 'ours-25000-cold-start-002.pb.gz')],
    ],
  );
  t.deepEqual(windows, [
    { file: join(dir, 'ours-25000-cold-start-001.pb.gz'), startMs: 1000, endMs: 8000 },
    { file: join(dir, 'ours-25000-cold-start-002.pb.gz'), startMs: 8000, endMs: 15_000 },
  ]);
  t.deepEqual(JSON.parse(readFileSync(join(dir, 'ours-25000-cold-start.windows.json'), 'utf8')), { windowSeconds: 7, windows });
});

test('a failed window ends the recording, is kept with its message, and stop still answers', async (t) => {
  const dir = scratch(t);
  const { record, calls, nextCall } = controlledRecorder();
  const recording = recordCpuProfiles(record, { dir, name: 'peer-10000-cold-start', now: () => 5 });

  await nextCall();
  calls[0]!.fail(new Error('kube-apiserver /debug/pprof/profile: 404 page not found'));
  const windows = await recording.stop();

  t.is(calls.length, 1);
  t.is(calls[0]!.seconds, 10);
  t.deepEqual(windows, [
    {
      file: join(dir, 'peer-10000-cold-start-001.pb.gz'),
      startMs: 5,
      endMs: 5,
      error: 'kube-apiserver /debug/pprof/profile: 404 page not found',
    },
  ]);
  t.deepEqual(JSON.parse(readFileSync(join(dir, 'peer-10000-cold-start.windows.json'), 'utf8')).windows, windows);
});

/** An https server answering /debug/pprof/profile as `answer` says, its access for the fetch, and the requests it saw. */
async function pprofServer(
  t: ExecutionContext,
  answer: { status: number; body: Buffer },
): Promise<{ access: { server: string; caPem: string; token: string }; seen: { url: string; authorization?: string }[] }> {
  const { cert, key } = selfSignedCertificate({ commonName: 'pprof-test' });
  const seen: { url: string; authorization?: string }[] = [];
  const server = createServer({ cert, key }, (req, res) => {
    seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
    res.writeHead(answer.status, { 'content-type': 'application/octet-stream' });
    res.end(answer.body);
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  t.teardown(() => new Promise<void>((closed) => server.close(() => closed())));
  const { port } = server.address() as AddressInfo;
  return { access: { server: `https://127.0.0.1:${port}`, caPem: cert, token: 'admin-token' }, seen };
}

test('the fetch asks for the window with the admin token over the server CA and saves the answer as it came', async (t) => {
  const profile = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff, 0x00, 0x10]);
  const { access, seen } = await pprofServer(t, { status: 200, body: profile });
  const file = join(scratch(t), 'window.pb.gz');

  await kubeApiserverCpuProfile(access)(3, file);

  t.deepEqual(seen, [{ url: '/debug/pprof/profile?seconds=3', authorization: 'Bearer admin-token' }]);
  t.deepEqual(readFileSync(file), profile);
});

test('an answer other than 200 rejects with the status and the server words, and saves nothing', async (t) => {
  const { access } = await pprofServer(t, {
    status: 403,
    body: Buffer.from('forbidden: User "operator" cannot get path "/debug/pprof/profile"'),
  });
  const file = join(scratch(t), 'window.pb.gz');

  await t.throwsAsync(kubeApiserverCpuProfile(access)(3, file), {
    message: 'kube-apiserver /debug/pprof/profile: 403 forbidden: User "operator" cannot get path "/debug/pprof/profile"',
  });
  t.false(existsSync(file));
});

test('the log line counts the saved windows and their seconds, and names the failure that ended them', (t) => {
  const saved = { file: 'a', startMs: 0, endMs: 10_000 };
  t.is(recordingLine([saved, { file: 'b', startMs: 10_000, endMs: 14_600 }]), 'kube-apiserver CPU profile: 2 windows, 15 s');
  t.is(
    recordingLine([saved, { file: 'b', startMs: 10_000, endMs: 10_001, error: 'socket hang up' }]),
    'kube-apiserver CPU profile: 1 windows, 10 s; ended by socket hang up',
  );
});
