// The progress display: one redrawn status line on a terminal, plain log lines otherwise.

/** Where progress goes. */
export interface Progress {
  /** A lasting line (a phase finished, a figure measured). */
  log(line: string): void;
  /** The transient status of the step in progress (redrawn in place on a terminal, dropped otherwise). */
  status(text: string): void;
  /** Clears the status line. */
  done(): void;
}

/** A progress display on `stream`: redraws the status line when `live`, else prints only the log lines. */
export function createProgress(stream: NodeJS.WriteStream, live: boolean, now: () => number = Date.now): Progress {
  const started = now();
  let drawn = false;
  const clock = (): string => {
    const seconds = Math.floor((now() - started) / 1000);
    return `${String(Math.floor(seconds / 60)).padStart(2, '0')}:${String(seconds % 60).padStart(2, '0')}`;
  };
  const clear = (): void => {
    if (drawn) stream.write('\r\x1b[2K');
    drawn = false;
  };
  return {
    log(line) {
      clear();
      stream.write(`[${clock()}] ${line}\n`);
    },
    status(text) {
      if (!live) return;
      const width = Math.max(20, (stream.columns ?? 120) - 1);
      const line = `[${clock()}] ${text}`;
      stream.write(`\r\x1b[2K${line.length > width ? `${line.slice(0, width - 1)}…` : line}`);
      drawn = true;
    },
    done() {
      clear();
    },
  };
}

/** A progress display that shows nothing (tests). */
export const silentProgress: Progress = { log: () => undefined, status: () => undefined, done: () => undefined };
