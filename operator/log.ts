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
  // loop, or the renewals of the Lease starve. main.ts flushes what is still buffered when the process exits.
  const destination = options.destination ?? pino.destination({ dest: 1, sync: false });
  if (resolveLogFormat(options.format ?? 'auto', isTTY) === 'pretty') {
    return pino(settings, prettyDestination(destination, { colors: isTTY }));
  }
  return pino(settings, destination);
}

/** Writes out, synchronously, what a logger still holds in its buffer (call it when the process exits). */
export function flushLogs(logger: Logger): void {
  const stream = (logger as unknown as Record<symbol, { flushSync?: () => void } | undefined>)[pino.symbols.streamSym];
  try {
    stream?.flushSync?.();
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
