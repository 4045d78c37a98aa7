// CPU profiles of an operator process cut at the harness's phase boundaries (V8's profiler through node:inspector).
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

/** The V8 sampling interval, in microseconds: `node --cpu-prof`'s default, so both kinds of profile compare. */
const SAMPLING_INTERVAL_US = 1000;

/** A profile's file name: a phase label of letters, digits, `-` and `_` only, so that it cannot leave the directory. */
const PHASE_LABEL = /^[\w-]{1,100}$/;

/**
 * Profiles this process from {@link start} on and cuts the profile where the harness says a phase ended: `cut(label)`
 * writes what was sampled since the last cut to `<dir>/<label>.cpuprofile` and starts the next profile; `cut()`
 * drops it (the time between two measured phases). `node --cpu-prof` profiles a process whole and writes at its exit,
 * so it can profile the cold start alone (the session ends there); the update phases and the restart's settle need
 * cuts in a running process. The profile starts after the modules loaded, which `--cpu-prof` would include.
 */
export class PhaseProfiler {
  private readonly session = new Session();
  private cutting: Promise<string | undefined> = Promise.resolve(undefined);

  constructor(private readonly dir: string) {}

  async start(): Promise<void> {
    this.session.connect();
    await this.session.post('Profiler.enable');
    await this.session.post('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US });
    await this.session.post('Profiler.start');
  }

  /**
   * Ends the current profile, writes it as `<dir>/<label>.cpuprofile` when a label is given, and starts the next one.
   * Answers the file written. Cuts run one after another: a second request waits for the first.
   */
  cut(label?: string): Promise<string | undefined> {
    if (label !== undefined && !PHASE_LABEL.test(label))
      return Promise.reject(new Error(`phase profile: label "${label}" is not 1 to 100 letters, digits, "-" or "_"`));
    const next = this.cutting.catch(() => undefined).then(() => this.cutNow(label));
    this.cutting = next;
    return next;
  }

  /** Stops profiling; the samples since the last cut are dropped. */
  async stop(): Promise<void> {
    await this.cutting.catch(() => undefined);
    await this.session.post('Profiler.stop').catch(() => undefined);
    this.session.disconnect();
  }

  private async cutNow(label: string | undefined): Promise<string | undefined> {
    const { profile } = await this.session.post('Profiler.stop');
    await this.session.post('Profiler.start');
    if (label === undefined) return undefined;
    const path = join(this.dir, `${label}.cpuprofile`);
    await writeFile(path, JSON.stringify(profile));
    return path;
  }
}
