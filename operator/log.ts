// Structured logs (pino): JSON for machines, pretty for people on a terminal, and the trace ids that link a trigger to its writes.
import { randomBytes } from 'node:crypto';
import { pino, type DestinationStream, type Logger } from 'pino';
import { prettyDestination } from './log-pretty.js';

export type { Logger };

/** How log lines are written: `auto` is pretty when stdout is a terminal, JSON otherwise (a container, CI, a pipe). */
export type LogFormat = 'auto' | 'json' | 'pretty';
export const LOG_FORMATS: readonly LogFormat[] = ['auto', 'json', 'pretty'];

/** The format `format` means when stdout is (`isTTY`) or is not a terminal. */
export function resolveLogFormat(format: LogFormat, isTTY: boolean): 'json' | 'pretty' {
  return format === 'auto' ? (isTTY ? 'pretty' : 'json') : format;
}
/** pino's levels, as `--log-level` accepts them. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** @default 'info' */
  readonly level?: LogLevel;
  /** @default 'auto' */
  readonly format?: LogFormat;
  /** Where lines go (tests pass a collecting stream). @default stdout, written synchronously */
  readonly destination?: DestinationStream;
  /**
   * Whether the output is a terminal: `auto` picks pretty, and pretty is coloured, when it is.
   * @default `process.stdout.isTTY` when writing to stdout (read when the logger is created), false with a `destination`
   */
  readonly isTTY?: boolean;
}

/**
 * The operator's root logger. Every entry is one JSON object with `time`, `level`, `msg` (the event name, for
 * example `reconcile.end`) and the event's fields (`key`, `reason`, `traceId`, `stream`…); the pretty format writes
 * the same entry as one aligned line (`log-pretty.ts`). Object contents never go into logs: the reconcile only
 * handles names, hashes and conditions, never ConfigMap or Secret values.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const settings = { level: options.level ?? 'info', base: { logger: 'customapp-operator' }, timestamp: pino.stdTimeFunctions.isoTime };
  const isTTY = options.isTTY ?? (options.destination ? false : process.stdout.isTTY === true);
  // Asynchronous writes, in order: a slow reader of stdout (a pipe whose buffer is full) must never stall the event
  // loop, or the renewals of the Lease starve. main.ts drains them before it exits (drainLogs, then flushLogs).
  const stdout = options.destination ? undefined : pino.destination({ dest: 1, sync: false });
  const destination = options.destination ?? stdout!;
  const logger =
    resolveLogFormat(options.format ?? 'auto', isTTY) === 'pretty'
      ? pino(settings, prettyDestination(destination, { colors: isTTY }))
      : pino(settings, destination);
  if (stdout) outputs.set(logger, stdout as unknown as AsyncOutput);
  return logger;
}

/** What drainLogs and flushLogs need of sonic-boom's asynchronous stdout. */
interface AsyncOutput {
  /** True while an asynchronous write is in flight (sonic-boom's own flag: it has no public one). */
  readonly _writing?: boolean;
  flushSync(): void;
  once(event: 'drain', listener: () => void): unknown;
  off(event: 'drain', listener: () => void): unknown;
}

/** The asynchronous stdout of each root logger {@link createLogger} made. */
const outputs = new WeakMap<Logger, AsyncOutput>();

/**
 * Waits until the write in flight, and every line buffered behind it, is out (at most `timeoutMs`: a reader of stdout
 * that stopped reading must not hold the exit). Call it before exiting: a synchronous flush alone, with a write in
 * flight, would put the buffered lines before the ones of that write.
 */
export function drainLogs(logger: Logger, timeoutMs = 2_000): Promise<void> {
  const output = outputs.get(logger);
  if (!output?._writing) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      output.off('drain', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    output.once('drain', done);
  });
}

/**
 * Writes out, synchronously, what a logger still holds in its buffer: at the process's exit, whichever way it exits.
 * After {@link drainLogs} nothing is in flight and the order holds; on an abrupt exit (a second signal, the shutdown
 * deadline) a write still in flight may land after the lines flushed here.
 */
export function flushLogs(logger: Logger): void {
  const output = outputs.get(logger);
  try {
    output?.flushSync();
  } catch {
    // Nothing was written yet (sonic-boom not ready) or the reader is gone: nothing more can be done at exit.
  }
}

/** A new trace id: 16 hex digits, carried from a trigger through the queue and the reconcile to each API write. */
export function newTraceId(): string {
  return randomBytes(8).toString('hex');
}

/** A logger that drops everything: the default of every component that takes a logger. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
