// A pino logger that keeps its JSON lines in memory, for tests that assert on logs.
import pino, { type Level, type Logger } from 'pino';
import { parseJsonLines } from '../../../test/support/json-lines.js';

/** One parsed log line. */
export type LogLine = Record<string, unknown> & { msg?: string; level: number };

/**
 * A real pino logger (same serializers, same child bindings) whose output goes to an array instead of stdout.
 * `text()` is the raw output, to search for strings that must never appear (a Secret's value).
 */
export function capturedLogger(level: Level = 'debug'): { logger: Logger; lines: () => LogLine[]; text: () => string } {
  const raw: string[] = [];
  const logger = pino(
    { level },
    {
      write: (line: string) => {
        raw.push(line);
      },
    },
  );
  return {
    logger,
    lines: () => parseJsonLines<LogLine>(raw.join('')),
    text: () => raw.join(''),
  };
}
