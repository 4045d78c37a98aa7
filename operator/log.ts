// Structured logs (pino): JSON by default, pretty for humans, and the trace ids that link a trigger to its writes.
import { randomBytes } from 'node:crypto';
import { pino, type DestinationStream, type Logger } from 'pino';
import pinoPretty from 'pino-pretty';

export type { Logger };

/** How log lines are written. */
export type LogFormat = 'json' | 'pretty';
export const LOG_FORMATS: readonly LogFormat[] = ['json', 'pretty'];
/** pino's levels, as `--log-level` accepts them. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** @default 'info' */
  readonly level?: LogLevel;
  /** @default 'json' */
  readonly format?: LogFormat;
  /** Where lines go (tests pass a collecting stream). @default stdout, written synchronously */
  readonly destination?: DestinationStream;
}

/**
 * The operator's root logger. Every line is one JSON object with `time`, `level`, `msg` (the event name, for
 * example `reconcile.end`) and the event's fields (`key`, `reason`, `traceId`, `stream`…). Object contents never
 * go into logs: the reconcile only handles names, hashes and conditions, never ConfigMap or Secret values.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const settings = { level: options.level ?? 'info', base: { logger: 'customapp-operator' }, timestamp: pino.stdTimeFunctions.isoTime };
  if (options.format === 'pretty') {
    const pretty = pinoPretty({
      sync: true,
      colorize: process.stdout.isTTY ?? false,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'logger',
      singleLine: true,
      destination: options.destination ? (options.destination as unknown as NodeJS.WritableStream) : 1,
    });
    return pino(settings, pretty);
  }
  // Synchronous writes: lines keep their order and none is lost when the process exits right after a stop.
  return pino(settings, options.destination ?? pino.destination({ dest: 1, sync: true }));
}

/** A new trace id: 16 hex digits, carried from a trigger through the queue and the reconcile to each API write. */
export function newTraceId(): string {
  return randomBytes(8).toString('hex');
}

/** A logger that drops everything: the default of every component that takes a logger. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
