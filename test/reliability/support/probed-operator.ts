// Starts operator/main.ts as a child process with the diagnostics probe preloaded, and reads its probe and metrics.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { OperatorProcess } from '../../support/operator-process.js';
import { PROBE_DIR_ENV, type ProbeReport, type ProbeRequest } from './process-probe.js';
import { scrape, type MetricSample } from './prometheus.js';

const PROBE_MODULE = resolve(import.meta.dirname, 'process-probe.ts');

/** Options of {@link startProbedOperator}. */
export interface ProbedOperatorOptions {
  /** The operator's kubeconfig file. */
  readonly kubeconfig: string;
  /** More flags for main.ts. @default none */
  readonly flags?: readonly string[];
  /** `--log-level`. @default 'info' */
  readonly logLevel?: string;
}

/** An operator process whose heap and handles can be inspected, and whose /metrics is served on a free port. */
export class ProbedOperator {
  private nextId = 1;

  constructor(readonly process: OperatorProcess, private readonly dir: string) {}

  /** The `http://host:port` of /metrics (known once the process logged `started`). */
  get metricsUrl(): string {
    const started = this.process.find('started')[0];
    if (!started?.metrics) throw new Error('the operator has not logged "started" with a metrics address yet');
    return started.metrics as string;
  }

  /** Scrapes /metrics. */
  metrics(): Promise<MetricSample[]> {
    return scrape(this.metricsUrl);
  }

  /** Forces full GCs in the process and answers its memory and live handles (and a heap snapshot, if asked). */
  async probe(options: { heapSnapshot?: boolean; timeoutMs?: number } = {}): Promise<ProbeReport> {
    const id = this.nextId++;
    const request: ProbeRequest = { id, heapSnapshotPath: options.heapSnapshot ? join(this.dir, `heap-${id}.heapsnapshot`) : undefined };
    writeFileSync(join(this.dir, 'request.json'), JSON.stringify(request));
    const reportPath = join(this.dir, `report-${id}.json`);
    this.process.kill('SIGUSR2');
    await this.process.waitFor(`probe report ${id}`, () => existsSync(reportPath), options.timeoutMs ?? 60_000);
    return JSON.parse(readFileSync(reportPath, 'utf8')) as ProbeReport;
  }

  /** Kills the process if it still runs and removes the probe directory. */
  async dispose(): Promise<void> {
    await this.process.dispose();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Starts `operator/main.ts` with `--expose-gc` and the probe, metrics on a free loopback port, probes off, and
 * waits until its workers run.
 */
export async function startProbedOperator(options: ProbedOperatorOptions): Promise<ProbedOperator> {
  const dir = mkdtempSync(join(tmpdir(), 'operator-probe-'));
  const child = new OperatorProcess([
    `--kubeconfig=${options.kubeconfig}`,
    '--metrics-bind-address=127.0.0.1:0',
    '--health-probe-bind-address=0',
    `--log-level=${options.logLevel ?? 'info'}`,
    ...(options.flags ?? []),
  ], { [PROBE_DIR_ENV]: dir }, ['--expose-gc', '--import', PROBE_MODULE]);
  const probed = new ProbedOperator(child, dir);
  try {
    await child.waitFor('the operator starts its workers', () => child.find('controller.start').length > 0, 60_000);
  } catch (error) {
    await probed.dispose();
    throw error;
  }
  return probed;
}
