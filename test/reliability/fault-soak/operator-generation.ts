// One operator process of the soak (a generation: each SIGKILL or crash starts the next), its log tally and metrics.
import type { OperatorProcess } from '../../support/operator-process.js';
import { type MetricSample, scrape } from '../support/prometheus.js';

/** One operator process and what it reported before it ended. */
export class Generation {
  readonly tally = new Map<string, number>();
  metricsUrl?: string;
  leading = false;
  lastMetrics: MetricSample[] = [];
  /** Set when the soak killed it on purpose. */
  killed = false;
  exited = false;

  constructor(readonly process: OperatorProcess) {}

  /** Resolves when the process has exited (it never rejects). */
  async watchExit(): Promise<void> {
    await this.process.exited;
    this.exited = true;
  }

  /** The leader-election lines, kept to say why a generation lost the Lease. */
  readonly leaderLines: string[] = [];

  /** Counts the log lines received so far and forgets them (the soak logs a lot), but the leader-election ones. */
  drain(): void {
    for (const line of this.process.lines.splice(0)) {
      const msg = String(line.msg);
      if (msg.startsWith('leader.')) {
        const { time, msg: _msg, level: _level, pid: _pid, hostname: _host, component: _c, lease: _l, identity: _i, ...fields } = line;
        const at = typeof time === 'number' ? new Date(time).toISOString().slice(11, 23) : String(time ?? '');
        this.leaderLines.push(`${at} ${msg} ${JSON.stringify(fields)}`);
      }
      this.tally.set(msg, (this.tally.get(msg) ?? 0) + 1);
      if (msg === 'started' && line.metrics) this.metricsUrl = String(line.metrics);
      if (msg === 'controller.start') this.leading = true;
    }
  }

  async scrape(): Promise<void> {
    this.drain();
    if (!this.metricsUrl) return;
    this.lastMetrics = await scrape(this.metricsUrl).catch(() => this.lastMetrics);
  }

  count(msg: string): number {
    return this.tally.get(msg) ?? 0;
  }
}
