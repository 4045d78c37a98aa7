// What a test and the diagnostics probe preloaded into an operator process exchange (files in a directory).

/** What the test asks for, in `<dir>/request.json`, before it sends SIGUSR2. */
export interface ProbeRequest {
  readonly id: number;
  /** Also write a heap snapshot to this path. */
  readonly heapSnapshotPath?: string;
}

/** What the probe answers, in `<dir>/report-<id>.json`. */
export interface ProbeReport {
  readonly id: number;
  /** `process.memoryUsage()` after forced full GCs. */
  readonly memory: NodeJS.MemoryUsage;
  /** Whether `gc()` was available (node ran with `--expose-gc`), so the memory figures follow full collections. */
  readonly gcForced: boolean;
  /** `process.getActiveResourcesInfo()`: the handles and requests that keep the event loop alive. */
  readonly resources: readonly string[];
  readonly heapSnapshotPath?: string;
}

/** The environment variable naming the directory the probe reads requests from and writes reports to. */
export const PROBE_DIR_ENV = 'CUSTOMAPP_PROBE_DIR';
