// A work queue for the emulated controllers (CRD establishment, garbage collection, namespace deletion): work runs
// after the current request, like a controller reacting to a watch event, and stops when the emulator closes.

export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

export class ControllerQueue {
  private readonly pending: { name: string; work: () => void }[] = [];
  private immediate: NodeJS.Immediate | undefined;
  private closed = false;

  constructor(private readonly logger: Logger) {}

  /** Runs `work` soon (setImmediate), after the write that caused it has been answered. */
  enqueue(name: string, work: () => void): void {
    if (this.closed) return;
    this.pending.push({ name, work });
    this.immediate ??= setImmediate(() => this.drain());
  }

  private drain(): void {
    this.immediate = undefined;
    const batch = this.pending.splice(0);
    for (const { name, work } of batch) {
      try {
        work();
      } catch (e) {
        this.logger.warn({ controller: name, err: e instanceof Error ? e.message : String(e) }, 'controller work failed');
      }
    }
  }

  close(): void {
    this.closed = true;
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.immediate = undefined;
    this.pending.length = 0;
  }
}
