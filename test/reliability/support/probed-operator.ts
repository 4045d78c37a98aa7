// Starts operator/main.ts as a child process with the diagnostics probe preloaded, and reads its probe and metrics.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort, startOnFreePorts } from '../../../envtest/ports.js';
import { OperatorProcess } from '../../support/operator-process.js';
import { PROBE_DIR_ENV, type ProbeReport, type ProbeRequest } from './probe-protocol.js';
import { scrape, sumOf, type MetricSample } from './prometheus.js';

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

  /** `metricsUrl`: `http://host:port` of the process's /metrics. */
  constructor(
    readonly process: OperatorProcess,
    private readonly dir: string,
    readonly metricsUrl: string,
  ) {}

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
 * waits until its workers run (`controller_runtime_max_concurrent_reconciles` is set when they start). The port is
 * chosen outside the ephemeral range ({@link freePort}), yet another test may choose it before the operator binds it
 * (its error says so): then once more on another port, at most three times.
 */
export async function startProbedOperator(options: ProbedOperatorOptions): Promise<ProbedOperator> {
  return startOnFreePorts(
    () => startProbedOnce(options),
    (error) => error instanceof PortTaken,
  );
}

/** The operator exited because its metrics port was taken between choosing it and binding it. */
class PortTaken extends Error {}

async function startProbedOnce(options: ProbedOperatorOptions): Promise<ProbedOperator> {
  const dir = mkdtempSync(join(tmpdir(), 'operator-probe-'));
  const port = await freePort();
  const child = new OperatorProcess(
    [
      `--kubeconfig=${options.kubeconfig}`,
      `--metrics-bind-address=127.0.0.1:${port}`,
      // Scraped over plain HTTP by the probe: authenticated metrics are tested in test/e2e/metrics-auth.test.ts.
      '--metrics-secure=false',
      '--health-probe-bind-address=0',
      `--log-level=${options.logLevel ?? 'info'}`,
      ...(options.flags ?? []),
    ],
    { [PROBE_DIR_ENV]: dir },
    ['--expose-gc', '--import', PROBE_MODULE],
  );
  const probed = new ProbedOperator(child, dir, `http://127.0.0.1:${port}`);
  try {
    const deadline = Date.now() + 60_000;
    const exited = child.exited.then((exit) => {
      const message = `the operator exited (${JSON.stringify(exit)}); stderr: ${child.stderr.slice(-2000)}`;
      throw child.stderr.includes(`127.0.0.1:${port}" is already in use`) ? new PortTaken(message) : new Error(message);
    });
    exited.catch(() => undefined);
    const workersStarted = async (): Promise<boolean> =>
      sumOf(await probed.metrics().catch(() => []), 'controller_runtime_max_concurrent_reconciles') > 0;
    // A scrape of a port someone else holds may never be answered: the exit must end the wait all the same.
    while (!(await Promise.race([workersStarted(), exited]))) {
      if (Date.now() > deadline)
        throw new Error(`the operator did not start its workers within 60 s; stderr: ${child.stderr.slice(-2000)}`);
      await Promise.race([new Promise((done) => setTimeout(done, 100)), exited]);
    }
  } catch (error) {
    await probed.dispose();
    throw error;
  }
  return probed;
}
