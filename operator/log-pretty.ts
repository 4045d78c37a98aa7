// The pretty log format for people: one aligned line per entry, so that a trace reads as the data flows.

/** Options of {@link PrettyFormatter}. */
export interface PrettyOptions {
  /** ANSI colours (for a terminal). @default false */
  readonly colors?: boolean;
}

/** The fields that name what a line is about, in order of preference: the first one present is the subject column. */
export const SUBJECT_FIELDS = ['stream', 'key', 'ref', 'object', 'resource', 'endpoint'] as const;
/** Fields shown in columns, or not at all (`logger` is the same on every line; `controller` and `component` add nothing to a subject). */
const HIDDEN = new Set(['time', 'level', 'msg', 'traceId', 'logger', 'controller', 'component', 'pid', 'hostname']);
/** Characters of a trace id shown: enough to follow one trace among the lines of a terminal. */
export const SHORT_TRACE = 8;
const LEVELS: Readonly<Record<number, string>> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const LEVEL_COLORS: Readonly<Record<number, string>> = { 10: '90', 20: '90', 30: '32', 40: '33', 50: '31', 60: '41;97' };
/** Columns grow to fit what they have shown (so that later lines align with earlier ones), up to these widths. */
const MAX_STEP = 22;
const MAX_SUBJECT = 40;

/**
 * Control characters (C0, DEL, C1): a terminal acts on them. ESC or the one-byte CSI (U+009B) starts a sequence that
 * clears the screen, moves the cursor, sets the title or forges a line; and an Event message, an API error, a label
 * or an annotation value can carry them.
 */
const CONTROL = /\p{Cc}/gu;

/** `text` with every control character shown as its `\uXXXX` escape, so that it reaches the terminal as text. */
function visible(text: string): string {
  return text.replace(CONTROL, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function pad(text: string, width: number): string {
  return text.length >= width ? text : text + ' '.repeat(width - text.length);
}

function two(n: number): string {
  return String(n).padStart(2, '0');
}

/** `HH:MM:ss.mmm` in local time, as a terminal user reads a clock. */
function clock(time: unknown): string {
  const date = new Date(typeof time === 'string' || typeof time === 'number' ? time : Number.NaN);
  if (Number.isNaN(date.getTime())) return '--:--:--.---';
  return `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}.${String(date.getMilliseconds()).padStart(3, '0')}`;
}

/**
 * A value as `key=value` shows it: bare when it cannot be misread, else JSON (quoted, escaped); control characters
 * escaped either way (JSON leaves DEL and C1 as they are).
 */
function shown(value: unknown): string {
  return visible(json(value));
}

function json(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=\p{Cc}]+$/u.test(value) ? value : JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  if (value !== null && typeof value === 'object' && 'message' in value && typeof value.message === 'string') {
    return JSON.stringify(value.message);
  }
  return JSON.stringify(value) ?? String(value);
}

/**
 * Formats pino's JSON entries as lines like:
 * ```
 * 15:33:16.120 INFO  event            configmap default/hello-config            type=MODIFIED key=default/hello-config
 * 15:33:16.120 INFO  trigger          configmap default/hello-config            change="content f40f42d4bbc3" keys=["default/hello"]
 * 15:33:16.121 INFO  enqueue          default/hello                   536b049c  reason="configmap …" outcome=queued
 * 15:33:16.121 INFO  reconcile.start  default/hello                   536b049c  reason="configmap …" retries=0
 * 15:33:16.124 INFO  write            default/hello                   536b049c  verb=update resource=deployments.apps …
 * ```
 * Columns: local time, level, the step (`msg`), the subject (the first of {@link SUBJECT_FIELDS} present: a watch
 * stream, a CustomApp key…), the first {@link SHORT_TRACE} characters of the trace id, then every other field as
 * `key=value` in the order logged (an error shows its message). Widths grow with what was shown, so the columns of
 * a trace stay aligned. The formatter keeps those widths: use one per output.
 */
export class PrettyFormatter {
  private stepWidth = 16;
  private subjectWidth = 32;
  private readonly colors: boolean;

  constructor(options: PrettyOptions = {}) {
    this.colors = options.colors ?? false;
  }

  /** One entry (a parsed pino line) as one line of text, newline included. */
  format(entry: Readonly<Record<string, unknown>>): string {
    const level = typeof entry.level === 'number' ? entry.level : 30;
    const step = typeof entry.msg === 'string' ? visible(entry.msg) : '';
    const subjectField = SUBJECT_FIELDS.find((field) => entry[field] !== undefined);
    const subject = subjectField ? visible(String(entry[subjectField])) : '';
    const trace = typeof entry.traceId === 'string' ? visible(entry.traceId.slice(0, SHORT_TRACE)) : '';
    this.stepWidth = Math.max(this.stepWidth, Math.min(step.length + 1, MAX_STEP));
    this.subjectWidth = Math.max(this.subjectWidth, Math.min(subject.length + 1, MAX_SUBJECT));
    const rest = Object.entries(entry)
      .filter(([name, value]) => !HIDDEN.has(name) && name !== subjectField && value !== undefined)
      .map(([name, value]) => `${this.paint('2', `${visible(name)}=`)}${shown(value)}`)
      .join(' ');
    const levelName = LEVELS[level] ?? String(level);
    const columns = [
      this.paint('2', clock(entry.time)),
      this.paint(LEVEL_COLORS[level] ?? '0', pad(levelName, 5)),
      this.paint('1', pad(step, this.stepWidth)),
      pad(subject, this.subjectWidth),
      this.paint('36', pad(trace, SHORT_TRACE)),
      rest,
    ];
    return `${columns.join(' ').trimEnd()}\n`;
  }

  private paint(code: string, text: string): string {
    return this.colors && text.trim() !== '' ? `\x1b[${code}m${text}\x1b[0m` : text;
  }
}

/**
 * A pino destination that writes each entry through a {@link PrettyFormatter} to `out`. A line that is not JSON
 * (nothing pino writes) goes out as it came, its control characters escaped but the newline that ends it.
 */
export function prettyDestination(out: { write(text: string): unknown }, options: PrettyOptions = {}): { write(line: string): void } {
  const formatter = new PrettyFormatter(options);
  return {
    write: (line: string) => {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        const newline = line.endsWith('\n') ? '\n' : '';
        out.write(`${visible(line.slice(0, line.length - newline.length))}${newline}`);
        return;
      }
      out.write(formatter.format(entry));
    },
  };
}
