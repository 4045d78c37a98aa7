// kube-apiserver's CPU profile over a stretch of a session: back-to-back pprof windows, each saved to a file.
import { createWriteStream } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

/**
 * The length of one profile window. Go's CPU profiler serves one profile at a time and cannot be cut short (a client
 * that hangs up loses the window), so a recording is a row of windows and its last one ends up to this long after
 * the stretch it covers: 10 s keeps that tail small beside a cold start of 30 to 200 s.
 */
export const APISERVER_PROFILE_WINDOW_SECONDS = 10;

/** Saves the server's CPU profile over the next `seconds` into `file` (pprof's gzipped protobuf); rejects on any failure. */
export type CpuProfileRecorder = (seconds: number, file: string) => Promise<void>;

/** One window of a recording: its file and when it ran (epoch ms), or why it failed. */
export interface ProfileWindow {
  readonly file: string;
  readonly startMs: number;
  readonly endMs: number;
  /** Set when the window failed; the recording ends with it. */
  readonly error?: string;
}

/** A recording in progress. */
export interface ProfileRecording {
  /**
   * Ends the recording: waits for the window in flight (up to its length), writes `<name>.windows.json` beside the
   * profiles and answers every window.
   */
  stop(): Promise<ProfileWindow[]>;
}

/** What {@link recordCpuProfiles} needs besides the recorder. */
export interface RecordingOptions {
  /** Where the windows go (made when missing). */
  readonly dir: string;
  /** The files' prefix: `<name>-001.pb.gz`, … and `<name>.windows.json`. */
  readonly name: string;
  /** @default {@link APISERVER_PROFILE_WINDOW_SECONDS} */
  readonly windowSeconds?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

/**
 * Records `record`'s profiles back to back, from now until {@link ProfileRecording.stop}, into numbered files that
 * `go tool pprof -top <name>-*.pb.gz` reads as one profile. A failed window ends the recording (a server without
 * `--profiling` would fail every one at once) and is kept in the windows file with its message, so that a run never
 * fails for its profile and a missing one says why.
 */
export function recordCpuProfiles(record: CpuProfileRecorder, options: RecordingOptions): ProfileRecording {
  const { dir, name } = options;
  const windowSeconds = options.windowSeconds ?? APISERVER_PROFILE_WINDOW_SECONDS;
  const now = options.now ?? Date.now;
  const windows: ProfileWindow[] = [];
  let stopping = false;
  const failed = (file: string, startMs: number, error: unknown): void => {
    windows.push({ file, startMs, endMs: now(), error: error instanceof Error ? error.message : String(error) });
  };
  const recording = (async () => {
    try {
      await mkdir(dir, { recursive: true });
    } catch (error) {
      failed(dir, now(), error);
      return;
    }
    for (let index = 1; !stopping; index += 1) {
      const file = join(dir, `${name}-${String(index).padStart(3, '0')}.pb.gz`);
      const startMs = now();
      try {
        await record(windowSeconds, file);
        windows.push({ file, startMs, endMs: now() });
      } catch (error) {
        failed(file, startMs, error);
        await rm(file, { force: true }).catch(() => undefined);
        return;
      }
    }
  })();
  return {
    async stop() {
      stopping = true;
      await recording;
      await writeFile(join(dir, `${name}.windows.json`), `${JSON.stringify({ windowSeconds, windows }, null, 2)}\n`).catch(() => undefined);
      return windows;
    },
  };
}

/** How to reach kube-apiserver's pprof endpoint: its URL, the CA of its serving certificate and a token of system:masters. */
export interface PprofAccess {
  readonly server: string;
  readonly caPem: string;
  readonly token: string;
}

/**
 * A {@link CpuProfileRecorder} of kube-apiserver's `/debug/pprof/profile?seconds=N` (served with `--profiling=true`
 * to a user allowed the non-resource URL: an admin). The answer is streamed to the file; a status other than 200
 * rejects with the server's words.
 */
export function kubeApiserverCpuProfile(access: PprofAccess): CpuProfileRecorder {
  return (seconds, file) =>
    new Promise<void>((done, reject) => {
      const req = httpsRequest(
        new URL(`/debug/pprof/profile?seconds=${seconds}`, access.server),
        { method: 'GET', ca: access.caPem, headers: { authorization: `Bearer ${access.token}` } },
        (res) => {
          if (res.statusCode === 200) {
            pipeline(res, createWriteStream(file)).then(done, (error: unknown) =>
              reject(new Error(`saving kube-apiserver's CPU profile to ${file}`, { cause: error })),
            );
            return;
          }
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () =>
            reject(
              new Error(`kube-apiserver /debug/pprof/profile: ${res.statusCode} ${Buffer.concat(chunks).toString('utf8').slice(0, 300)}`),
            ),
          );
          res.on('error', reject);
        },
      );
      req.on('error', (error) => reject(new Error('kube-apiserver /debug/pprof/profile: the request failed', { cause: error })));
      // The server answers after the window: allow it that long, and then some for a busy server.
      req.setTimeout((seconds + 60) * 1000, () =>
        req.destroy(new Error(`kube-apiserver /debug/pprof/profile: no answer within ${seconds + 60} s`)),
      );
      req.end();
    });
}

/** The log line of a recording: how many windows over how long, and the failure that ended it, if any. */
export function recordingLine(windows: readonly ProfileWindow[]): string {
  const saved = windows.filter((window) => window.error === undefined);
  const seconds = saved.reduce((sum, window) => sum + (window.endMs - window.startMs), 0) / 1000;
  const failure = windows.find((window) => window.error !== undefined);
  return `kube-apiserver CPU profile: ${saved.length} windows, ${seconds.toFixed(0)} s${failure ? `; ended by ${failure.error}` : ''}`;
}
