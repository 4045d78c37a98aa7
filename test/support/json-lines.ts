// The one reader of newline-delimited JSON in the tests (watch streams, log lines, kubectl -w, audit logs).
// A leaf (it imports nothing of ours), so the emulator's tests may use it as well as test/.

/**
 * Splits chunks of newline-delimited JSON as they arrive and hands on each complete line, parsed. A line that is not
 * JSON goes to `onText` when given (a process that prints instructions beside its JSON log), and throws otherwise:
 * a stream that should be JSON and is not is a failure to report, not a line to skip.
 */
export class JsonLineReader<T = unknown> {
  private pending = '';
  private readonly decoder = new TextDecoder();

  constructor(
    private readonly onValue: (value: T) => void,
    private readonly onText?: (line: string) => void,
  ) {}

  /** Feeds one chunk; the lines it completes are handed on at once, in order. */
  push(chunk: Uint8Array | string): void {
    this.pending += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = this.pending.indexOf('\n')) >= 0) {
      const line = this.pending.slice(0, newline);
      this.pending = this.pending.slice(newline + 1);
      this.line(line);
    }
  }

  /** Ends the stream: a last line without its newline is handed on too. */
  end(): void {
    const rest = this.pending + this.decoder.decode();
    this.pending = '';
    if (rest !== '') this.line(rest);
  }

  private line(raw: string): void {
    const line = raw.trim();
    let value: T;
    try {
      if (line === '') throw new SyntaxError('an empty line');
      value = JSON.parse(line) as T;
    } catch (error) {
      // Text lines keep their indentation and blank lines (a printed table); a JSON-only stream skips a blank line.
      if (this.onText) this.onText(raw);
      else if (line !== '') throw new Error(`not a JSON line: ${line.slice(0, 200)}`, { cause: error });
      return;
    }
    this.onValue(value);
  }
}

/** The values of a whole newline-delimited JSON text (a log read at once, `kubectl logs` output). */
export function parseJsonLines<T = unknown>(text: string, onText?: (line: string) => void): T[] {
  const values: T[] = [];
  const reader = new JsonLineReader<T>((value) => values.push(value), onText);
  reader.push(text);
  reader.end();
  return values;
}
